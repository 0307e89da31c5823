"""Write the period report: period.json (sorted keys), period.csv, period.html, period.pdf.

The HTML is self-contained (inline CSS and SVG, no JavaScript); the charts are drawn
here as rectangle geometry (SVG user units) that the template only prints:
readiness per day as stacked bars, RPO attainment per owner as horizontal bars.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from auditor.period.compute import READINESS
from auditor.report.csvsafe import csv_cell
from auditor.report.files import write_document_set

__all__ = ["write_period", "dump_period_json", "period_csv", "period_html", "FORMATS"]

FORMATS = ("json", "csv", "html", "pdf")
COLORS = {"READY": "#2e7d32", "AT_RISK": "#f9a825", "NOT_READY": "#c62828", "UNKNOWN": "#757575"}
_CSV_FIELDS = (
    "namespace", "name", "owner", "audits", "rpo_attained", "rpo_breached", "rpo_unknown",
    "rpo_attainment", "rpo_hours", "longest_breach_audits", "longest_breach_hours",
    "longest_breach_ended_within_hours", "restore_drills",
    "waived_checks", "readiness_last", "period_partial", "period_as_of", "period_complete",
)  # fmt: skip


def dump_period_json(doc: dict[str, Any]) -> bytes:
    """Deterministic JSON: sorted keys, 2-space indent, UTF-8, trailing newline."""
    return (json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode()


def _cell(value: Any) -> Any:
    """Every cell through :func:`auditor.report.csvsafe.csv_cell` (as findings.csv and the
    fleet CSVs: owners come from cluster-controlled labels and annotations)."""
    return csv_cell(value)


def period_csv(doc: dict[str, Any]) -> str:
    """One row per VM (columns :data:`_CSV_FIELDS`; attainment 0..1, ``unknown`` when null;
    ``rpo_hours`` the RPOs applied, hours, space-separated, ``unknown`` when none recorded;
    hours, ``unknown`` when not measured, blank without a breach: see :func:`_hours`).

    ``period_partial`` (``true`` when built before the month ended) and ``period_as_of``
    repeat the document's ``partial`` and ``as_of`` on every row, so a partial month shows
    in the header and in any row taken out of the file. ``period_complete`` repeats
    ``complete`` likewise (``false`` when a run of the period was left out or read only part
    of the cluster: ``incomplete_reasons``); a document without it says ``unknown``.
    """
    partial = "true" if doc.get("partial") else "false"
    flag = doc.get("complete")
    complete = "unknown" if not isinstance(flag, bool) else ("true" if flag else "false")
    as_of = doc.get("as_of", "")
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(_CSV_FIELDS)
    for v in doc["vms"]:
        rpo, breach = v["rpo"], v["longest_breach"]
        writer.writerow(
            [_cell(c) for c in (
                v["namespace"], v["name"], v["owner"], v["audits"], rpo["attained"],
                rpo["breached"], rpo["unknown"],
                "unknown" if rpo["attainment"] is None else rpo["attainment"],
                " ".join(f"{h:g}" for h in rpo.get("hours") or []) or "unknown", breach["audits"],
                _hours(breach, "hours"), _hours(breach, "ended_within_hours"),
                len(v["restore_drills"]), " ".join(v["waived_checks"]),
                v["readiness_last"], partial, as_of, complete)]
        )  # fmt: skip
    return buf.getvalue()


def _hours(breach: dict[str, Any], key: str) -> Any:
    """A breach's hours for period.csv: ``unknown`` when not measured (``hours`` of a breach
    seen in one audit; ``ended_within_hours`` of one still open at the period's last audit);
    without a breach, ``hours`` is 0.0 and ``ended_within_hours`` blank."""
    value = breach.get(key)
    if not breach.get("audits"):
        return "" if value is None else value
    return "unknown" if value is None else value


def _day_bars(by_day: dict[str, dict[str, int]]) -> dict[str, Any]:
    """Stacked bars: x per day, one segment per readiness; height 160 units = the most VMs."""
    top = max((sum(c.values()) for c in by_day.values()), default=0) or 1
    width = 18
    bars = []
    for i, (day, counts) in enumerate(sorted(by_day.items())):
        y = 170.0
        segments = []
        for state in READINESS:
            h = round(counts.get(state, 0) * 160 / top, 2)
            y = round(y - h, 2)
            if h:
                segments.append({"y": y, "h": h, "color": COLORS[state], "n": counts[state],
                                 "state": state})  # fmt: skip
        bars.append({"x": 40 + i * (width + 4), "w": width, "day": day[-2:], "date": day,
                     "segments": segments})  # fmt: skip
    return {"bars": bars, "width": 60 + len(bars) * (width + 4), "top": top}


def _owner_bars(by_owner: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Horizontal bars: width 300 units = 100 % attainment; None draws no bar."""
    rows = []
    for i, (owner, o) in enumerate(sorted(by_owner.items())):
        share = o["attainment"]
        rows.append({"y": 10 + i * 24, "owner": owner,
                     "w": 0 if share is None else round(share * 300, 2),
                     "label": "unknown" if share is None else f"{share * 100:.1f} %"})  # fmt: skip
    return {"rows": rows, "height": 20 + len(rows) * 24}


def _percent(value: float | None) -> str:
    return "unknown" if value is None else f"{value * 100:.1f} %"


def period_html(doc: dict[str, Any]) -> str:
    """The period report as one HTML page (Jinja2, autoescape)."""
    from auditor.report.html import environment

    template = environment().get_template("period.html.j2")
    return template.render(
        doc=doc,
        days=_day_bars(doc["fleet"]["readiness_by_day"]),
        owners=_owner_bars(doc["by_owner"]),
        colors=COLORS,
        pct=_percent,
    )


def write_period(
    doc: dict[str, Any], out_dir: Path, formats: tuple[str, ...] = FORMATS
) -> list[Path]:
    """Write the requested formats into ``out_dir``; return the paths written.

    Raises:
        OSError: ``out_dir`` cannot be written.
        auditor.report.pdf.PdfRenderError: the PDF could not be rendered.
    """
    return write_document_set(
        out_dir,
        "period",
        formats,
        json_bytes=lambda: dump_period_json(doc),
        csvs=lambda: {"period.csv": period_csv(doc).encode("utf-8")},
        html=lambda: period_html(doc),
    )
