"""Write the fleet roll-up: fleet.json, fleet-*.csv, fleet.html, fleet.pdf.

JSON: sorted keys, two-space indent, UTF-8, trailing newline (like report.json). CSV:
UTF-8, CRLF, a header row, a leading apostrophe on cells a spreadsheet would run as a
formula (cluster and owner names are cluster-controlled), as ``findings.csv``. The HTML
is one self-contained page (inline CSS, no script) from ``report_templates/fleet.html.j2``;
the PDF is that HTML through :func:`auditor.report.pdf.render_pdf`.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from auditor.fleet.model import FleetCluster, FleetReport, fleet_schema
from auditor.models import Readiness
from auditor.report.csvsafe import csv_cell
from auditor.report.files import write_document_set

__all__ = [
    "FORMATS",
    "dump_fleet_json",
    "dump_fleet_schema",
    "fleet_csvs",
    "fleet_html",
    "write_fleet",
]

FORMATS = ("json", "csv", "html", "pdf")
_STATES = tuple(Readiness)


def _dump(doc: Any) -> bytes:
    return (json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode()


def dump_fleet_json(report: FleetReport) -> bytes:
    """Deterministic fleet.json bytes."""
    return _dump(report.model_dump(mode="json"))


def dump_fleet_schema() -> bytes:
    """The JSON Schema of fleet.json, serialised like it (``docs/fleet-schema.json``)."""
    return _dump(fleet_schema())


def _cell(value: Any) -> str:
    return str(csv_cell("" if value is None else str(value)))


def _csv(columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> bytes:
    buf = io.StringIO(newline="")
    writer = csv.writer(buf, lineterminator="\r\n")
    writer.writerow(columns)
    writer.writerows([_cell(v) for v in row] for row in rows)
    return buf.getvalue().encode("utf-8")


def _bool(value: bool | None) -> str | None:
    """``true``/``false`` as in every other CSV (Python's ``True`` was written here)."""
    return None if value is None else ("true" if value else "false")


def _period_cells(c: FleetCluster) -> list[Any]:
    p = c.period
    if p is None:
        return [None, None, None, None]
    return [p.runs, p.rpo_attainment, _bool(p.complete), " | ".join(p.incomplete_reasons)]


def fleet_csvs(report: FleetReport) -> dict[str, bytes]:
    """``fleet-clusters.csv`` (one row per cluster, readiness as counted and as reported),
    ``fleet-root-causes.csv`` and ``fleet-owners.csv`` (worst first).

    Every row ends in ``fleet_as_of`` (the roll-up's reference time, ``generated_at``), so a
    row taken out of its file says when it was true (trial nu34: an owner row said nothing
    of when it was counted); ``complete`` is ``true``/``false`` as in vms.csv;
    ``cluster_uid`` is blank when unknown. With ``--period`` the cluster rows carry the
    month's figures as fleet.html shows them (``period_runs``, ``period_rpo_attainment``
    0..1, ``period_complete``, ``period_incomplete_reasons`` joined by `` | ``); blank
    without a period or a readable run of it (the CSV had none of them, so a spreadsheet
    of a month's roll-up could not tell a month counted whole from one with runs left out).
    """
    as_of = report.generated_at
    clusters = _csv(
        ["cluster", "cluster_uid", "status", "run_id", "audit_time", "age_hours", "complete",
         "manifest", "signature", "vms", *(f"counted_{s.lower()}" for s in _STATES),
         *(f"reported_{s.lower()}" for s in _STATES), "period_runs", "period_rpo_attainment",
         "period_complete", "period_incomplete_reasons", "problems", "fleet_as_of"],
        (
            [c.name, c.cluster_uid, c.status, c.run.id if c.run else None,
             c.run.audit_time if c.run else None, c.run.age_hours if c.run else None,
             _bool(c.run.complete) if c.run else None,
             c.verification.manifest if c.verification else None,
             c.verification.signature if c.verification else None, c.vms,
             *(c.readiness_counted[s] for s in _STATES), *(c.readiness[s] for s in _STATES),
             *_period_cells(c), " | ".join(c.problems), as_of]
            for c in report.clusters
        ),
    )  # fmt: skip
    causes = _csv(
        ["root_cause", "title", "severity", "vms", "clusters", "check_ids", "first_action",
         "example_vm", "example_action", "fleet_as_of"],
        (
            [r.id, r.title, r.severity.value, r.vms,
             " ".join(f"{k}:{v}" for k, v in r.clusters.items()), " ".join(r.check_ids),
             r.first_action, r.example_vm, r.example_action, as_of]
            for r in report.root_causes
        ),
    )  # fmt: skip
    owners = _csv(
        ["owner", "vms", *(s.lower() for s in _STATES), "not_ready_share", "top_root_cause",
         "clusters", "fleet_as_of"],
        (
            [o.owner, o.vms, *(o.readiness[s] for s in _STATES), o.not_ready_share,
             o.top_root_cause, " ".join(o.clusters), as_of]
            for o in report.owners
        ),
    )  # fmt: skip
    return {
        "fleet-clusters.csv": clusters,
        "fleet-root-causes.csv": causes,
        "fleet-owners.csv": owners,
    }


def fleet_html(report: FleetReport, *, top: int = 10) -> str:
    """The fleet page (Jinja2, autoescape): clusters, top ``top`` root causes and owners."""
    from auditor.report.html import environment

    template = environment().get_template("fleet.html.j2")
    return template.render(
        fleet=report,
        states=[s.value for s in _STATES],
        causes=report.root_causes[:top],
        owners=report.owners[:top],
        top=top,
    )


def write_fleet(report: FleetReport, out_dir: Path, formats: Sequence[str] = FORMATS) -> list[Path]:
    """Write the requested formats into ``out_dir``; return the paths written.

    Raises:
        OSError: ``out_dir`` cannot be written.
        auditor.report.pdf.PdfRenderError: the PDF could not be rendered.
    """
    return write_document_set(
        out_dir,
        "fleet",
        formats,
        json_bytes=lambda: dump_fleet_json(report),
        csvs=lambda: fleet_csvs(report),
        html=lambda: fleet_html(report),
    )
