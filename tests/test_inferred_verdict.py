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


def test_a_ready_that_rests_on_a_waiver_says_so_beside_the_verdict(tmp_path: Path) -> None:
    """web-api is AT_RISK for one medium FAIL (RR-BKP-004); with that FAIL waived it is READY,
    but only because a risk was accepted. vms.csv showed a plain READY (new-user trial nu20):
    it now lists the waived check in ``waived_checks``, and the HTML and PDF say "accepted
    risk" beside the verdict. A VM without waivers shows neither."""
    settings = AuditSettings.model_validate(
        {
            "waivers": [
                {
                    "id": "W-api",
                    "check": "RR-BKP-004",
                    "selector": {"namespace": "web", "name": "web-api"},
                    "reason": "data disk rebuilt from the image",
                    "approver": "jane@corp.example",
                    "created": "2026-11-01",
                    "expires": "2027-01-01",
                }
            ]
        }
    )
    report = audit_data(DirectorySource(EXAMPLE).collect(), settings, at=AUDIT_AT)
    doc = report_document(report)
    api = next(v for v in doc["vms"] if v["name"] == "web-api")
    assert api["readiness"] == "READY"
    rows = {r["vm"]: r for r in csv.DictReader(io.StringIO(vms_csv(report).decode(), newline=""))}
    assert rows["web-api"]["readiness"] == "READY"
    assert rows["web-api"]["waived_checks"] == "RR-BKP-004"
    assert rows["billing-db"]["waived_checks"] == ""
    write_formats(report, tmp_path, ["html"])
    html = _text((tmp_path / "report.html").read_text())
    assert html.count("accepted risk: RR-BKP-004 waived") == 1
    ready = _text(render_pdf_html(report).split('id="ready-table"', 1)[1])
    assert "web/web-api · accepted risk: RR-BKP-004 waived" in ready
    assert "billing/billing-db · accepted risk" not in ready
