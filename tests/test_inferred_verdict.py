"""A READY says how much of it rests on inference (schema 1.2 ``inferred``).

"Evidence beats inference": each finding carries its ``basis``, and a VM's verdict lists the
checks whose PASS is inferred (configuration alone, no record that it happened), in report.json,
``vms.csv``, beside the verdict in the HTML and in the PDF's table of ready VMs.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from auditor.config import AuditSettings
from auditor.envelope import report_document
from auditor.pipeline import audit_data
from auditor.report.csvout import vms_csv
from auditor.report.html import render_pdf_html
from auditor.report.writers import write_formats
from auditor.sources.directory import DirectorySource
from tests.conftest import AUDIT_AT

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "small-cluster"


def _text(html: str) -> str:
    """``html`` without its tags."""
    return re.sub(r"<[^>]+>", "", html)


def test_a_vms_inferred_passes_are_listed_with_its_verdict(tmp_path: Path) -> None:
    report = audit_data(DirectorySource(EXAMPLE).collect(), AuditSettings(), at=AUDIT_AT)
    doc = report_document(report)
    by_name = {v["name"]: v for v in doc["vms"]}
    for vm in doc["vms"]:
        expected = sorted(
            f["check_id"]
            for f in vm["findings"]
            if f["status"] == "PASS" and f["basis"] == "inferred"
        )
        assert vm["inferred"] == expected
    # billing-db is READY; its NAD check passes on the NADs' presence alone
    db = by_name["billing-db"]
    assert db["readiness"] == "READY" and db["inferred"] == ["RR-NET-002"]
    rows = {r["vm"]: r for r in csv.DictReader(io.StringIO(vms_csv(report).decode(), newline=""))}
    assert rows["billing-db"]["inferred_checks"] == "RR-NET-002"
    assert rows["billing-win"]["inferred_checks"] == ""
    write_formats(report, tmp_path, ["html"])
    html = (tmp_path / "report.html").read_text()
    # check ids are unbreakable spans: count in the text without its tags
    assert _text(html).count("partly inferred: RR-NET-002 passed on configuration alone") == 1
    # and in the PDF's table of ready VMs (new-user trial: a PDF reader saw a bare READY)
    pdf_html = render_pdf_html(report)
    ready = pdf_html[pdf_html.index('id="ready-table"') :]
    assert "billing/billing-db · <span" in ready
    assert _text(ready).count("partly inferred: RR-NET-002 passed on configuration alone") == 1
