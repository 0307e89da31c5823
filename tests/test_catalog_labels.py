"""The catalog appendix labels each check's severity as its default.

New-user trial (helper-47): Appendix A showed "RR-BKP-011 medium, open 5" while all five
findings were INFO (a finding may rank above or below its check's default), so a reader took
the catalog's column for the findings' severity.
"""

from __future__ import annotations

from pathlib import Path

from auditor.config import AuditSettings
from auditor.pipeline import audit_data
from auditor.report.html import render_html, render_pdf_html
from auditor.sources.directory import DirectorySource
from tests.conftest import AUDIT_AT

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "small-cluster"


def test_the_catalog_severity_is_labelled_the_default() -> None:
    report = audit_data(DirectorySource(EXAMPLE).collect(), AuditSettings(), at=AUDIT_AT)
    info = [f for v in report.vms for f in v.findings if f.check_id == "RR-BKP-011"]
    assert info and {f.severity.value for f in info if f.status.value == "FAIL"} == {"info"}
    for page in (render_pdf_html(report), render_html(report)):
        catalog = page[page.index('id="appendix-checks"') :]
        assert ">Default severity</th>" in catalog
        assert ">Severity</th>" not in catalog
    pdf = render_pdf_html(report)
    assert "(medium by default; open on" in pdf[pdf.index('id="appendix-checks"') :]
