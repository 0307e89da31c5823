"""Write the human-facing artifacts of one report: HTML, PDF, CSV and recovery cards.

The pipeline calls :func:`write_formats` for every format except ``json``.
Everything is rendered from the report.json dict alone.

Files, under ``out_dir``::

    html   report.html
    pdf    report.pdf
    csv    findings.csv, vms.csv
    cards  recovery-cards/<namespace>/<vm>.json
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from auditor.config.service import REPORT_FORMATS
from auditor.envelope.model import AuditReport
from auditor.report.cards import write_cards
from auditor.report.csvout import findings_csv, vms_csv
from auditor.report.html import render_pdf_html, write_html
from auditor.report.pdf import DEFAULT_MEMORY_BYTES, DEFAULT_TIMEOUT_S, render_pdf
from auditor.report.view import build_view

__all__ = ["FORMATS", "write_formats"]

#: The formats rendered here: every report format but ``json`` (the pipeline writes that).
FORMATS = tuple(f for f in REPORT_FORMATS if f != "json")


def write_formats(
    report: AuditReport,
    out_dir: Path,
    formats: Sequence[str],
    *,
    trend: Mapping[str, Any] | None = None,
    pdf_timeout_s: float = DEFAULT_TIMEOUT_S,
    pdf_memory_bytes: int = DEFAULT_MEMORY_BYTES,
) -> list[Path]:
    """Render ``report``  in each of ``formats`` into ``out_dir``.

    ``trend`` (optional, see ``docs/publishing.md``) adds a trend section to HTML
    and PDF. Returns the written paths in ``FORMATS`` order.

    Raises:
        ValueError: a format is not one of ``FORMATS`` (``json`` is the pipeline's).
        auditor.report.pdf.PdfRenderError: the PDF failed or hit its limits.
        OSError: a file cannot be written.
    """
    unknown = sorted(set(formats) - set(FORMATS))
    if unknown:
        raise ValueError(f"unknown report format(s) {', '.join(unknown)}; expected {FORMATS}")
    out_dir.mkdir(parents=True, exist_ok=True)
    wanted = set(formats)
    view = build_view(report, trend=trend) if wanted & {"html", "pdf"} else None
    paths: list[Path] = []
    if "html" in wanted:
        paths.append(write_html(report, out_dir / "report.html", view=view))
    if "pdf" in wanted:
        html = render_pdf_html(report, view=view)
        paths.append(
            render_pdf(
                html, out_dir / "report.pdf", timeout_s=pdf_timeout_s, memory_bytes=pdf_memory_bytes
            )
        )
    if "csv" in wanted:
        for name, data in (("findings.csv", findings_csv(report)), ("vms.csv", vms_csv(report))):
            path = out_dir / name
            path.write_bytes(data)
            paths.append(path)
    if "cards" in wanted:
        paths.extend(write_cards(report, out_dir))
    return paths
