"""All formats from the real engine: the shared cluster export and the bundled example."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from pypdf import PdfReader

from auditor.config import AuditSettings
from auditor.envelope import AuditReport
from auditor.pipeline import audit_data, write_artifacts
from auditor.sources.directory import DirectorySource
from tests.conftest import AUDIT_AT, REPO, report_doc

ALL = ["json", "html", "pdf", "csv", "cards"]


@pytest.fixture(scope="module")
def example_report() -> AuditReport:
    data = DirectorySource(REPO / "examples" / "small-cluster", cluster_name="example").collect()
    return audit_data(data, AuditSettings(), at=AUDIT_AT)


def _check_all_formats(model: AuditReport, out: Path) -> None:
    paths = write_artifacts(model, out, ALL)
    report = report_doc(model)
    names = {p.relative_to(out).as_posix() for p in paths}
    assert {"report.json", "report.html", "report.pdf", "findings.csv", "vms.csv"} <= names
    vms = report["vms"]
    assert len([n for n in names if n.startswith("recovery-cards/")]) == len(vms)

    html = (out / "report.html").read_text(encoding="utf-8")
    for vm in vms:
        assert f'id="vm-{vms.index(vm)}"' in html and vm["name"] in html

    text = " ".join(
        " ".join(page.extract_text() or "" for page in PdfReader(out / "report.pdf").pages).split()
    )
    not_ready = [f"{v['namespace']}/{v['name']}" for v in vms if v["readiness"] == "NOT_READY"]
    assert not_ready and all(vm in text for vm in not_ready), not_ready

    rows = list(csv.DictReader(io.StringIO((out / "vms.csv").read_text(encoding="utf-8"))))
    assert [(r["namespace"], r["vm"], r["readiness"]) for r in rows] == [
        (v["namespace"], v["name"], v["readiness"]) for v in vms
    ]
    fails = sum(1 for v in vms for f in v["findings"] if f["status"] in ("FAIL", "ERROR"))
    fails += sum(1 for f in report["platform_findings"] if f["status"] in ("FAIL", "ERROR"))
    findings = (out / "findings.csv").read_text(encoding="utf-8")
    assert len(list(csv.DictReader(io.StringIO(findings)))) == fails

    card = vms[0]["recovery_card"]
    ns, name = card["vm"]["namespace"], card["vm"]["name"]
    written = json.loads((out / "recovery-cards" / ns / f"{name}.json").read_text())
    assert written.pop("audit")["run_id"] == report["run"]["id"] and written == card


def test_shared_cluster_export_all_formats(export_report: AuditReport, tmp_path: Path) -> None:
    _check_all_formats(export_report, tmp_path)
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "ocp-prod-east" in html and "Appendix A: Check catalog" in html
    for check in export_report.checks:
        assert check.id in html


def test_bundled_example_all_formats(example_report: AuditReport, tmp_path: Path) -> None:
    _check_all_formats(example_report, tmp_path)


def test_no_secret_value_reaches_any_format(export_report: AuditReport, tmp_path: Path) -> None:
    write_artifacts(export_report, tmp_path, ALL)
    blob = b"".join(p.read_bytes() for p in sorted(tmp_path.rglob("*")) if p.is_file()
                    and p.suffix != ".pdf")  # fmt: skip
    blob += " ".join(
        page.extract_text() or "" for page in PdfReader(tmp_path / "report.pdf").pages
    ).encode()
    for secret_marker in (b"#cloud-config", b"ssh-rsa ", b"chpasswd", b"password:"):
        assert secret_marker not in blob, secret_marker
