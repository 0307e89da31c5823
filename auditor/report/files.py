"""Write one document set (JSON, CSVs, HTML, PDF) of a derived report: period or fleet."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from pathlib import Path

__all__ = ["write_document_set"]


def write_document_set(
    out_dir: Path,
    stem: str,
    formats: Collection[str],
    *,
    json_bytes: Callable[[], bytes],
    csvs: Callable[[], Mapping[str, bytes]],
    html: Callable[[], str],
) -> list[Path]:
    """Write ``<stem>.json``, the CSVs (file name -> bytes), ``<stem>.html`` and
    ``<stem>.pdf`` (rendered from the HTML) for the requested ``formats`` into ``out_dir``;
    return the paths written, in that order. Each part is built only when asked for.

    Raises:
        OSError: ``out_dir`` cannot be written.
        auditor.report.pdf.PdfRenderError: the PDF could not be rendered.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    if "json" in formats:
        written.append(out_dir / f"{stem}.json")
        written[-1].write_bytes(json_bytes())
    if "csv" in formats:
        for name, data in csvs().items():
            written.append(out_dir / name)
            written[-1].write_bytes(data)
    page = html() if {"html", "pdf"} & set(formats) else ""
    if "html" in formats:
        written.append(out_dir / f"{stem}.html")
        written[-1].write_text(page, encoding="utf-8")
    if "pdf" in formats:
        from auditor.report.pdf import render_pdf  # weasyprint only when a PDF is asked for

        written.append(render_pdf(page, out_dir / f"{stem}.pdf"))
    return written
