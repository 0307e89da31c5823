"""CSV exports, recovery cards and the write_formats entry point."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from auditor.envelope import AuditReport
from auditor.report.cards import safe_segment
from auditor.report.csvout import FINDINGS_COLUMNS, VMS_COLUMNS, findings_csv, vms_csv
from auditor.report.writers import write_formats
from tests.reports_support import HOSTILE_SCRIPT, sample_doc, sample_report


def _rows(data: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(data.decode("utf-8"), newline="")))


def test_findings_csv_has_one_row_per_fail_or_error() -> None:
    report = sample_report()
    rows = _rows(findings_csv(report))
    expected = sum(
        1 for vm in report.vms for f in vm.findings if f.status.value in ("FAIL", "ERROR")
    )
    assert len(rows) == expected + 1  # + the platform finding
    assert list(rows[0]) == list(FINDINGS_COLUMNS)
    db = [r for r in rows if r["vm"] == "fin-db-01"]
    assert [(r["check_id"], r["severity"]) for r in db] == [
        ("RR-BKP-001", "high"),
        ("RR-FW-001", "high"),
        ("RR-BKP-003", "medium"),
    ]
    assert db[0]["owner"] == "team-finance" and db[0]["readiness"] == "NOT_READY"
    assert db[0]["remediation"].startswith("Add the VM's namespace to a Velero Schedule")
    assert db[0]["evidence"] == "age_hours=30.5; backup=nightly-1; disks=rootdisk, cloudinit"
    assert {r["status"] for r in rows if r["vm"] == "hr-db-01"} == {"ERROR"}
    assert rows[0]["vm"] == "(platform)"  # empty owner sorts first


def test_vms_csv_one_row_per_vm_with_raw_numbers() -> None:
    rows = _rows(vms_csv(sample_report()))
    assert list(rows[0]) == list(VMS_COLUMNS)
    assert [r["vm"] for r in rows] == [
        "fin-app-01", "fin-db-01", "fin-web-01", "hr-app-01", "hr-db-01", "lab-01",
    ]  # fmt: skip
    app = rows[0]
    assert (app["backup_age_hours"], app["rpo_hours"], app["within_rpo"]) == ("4.75", "24.0", "yes")
    assert rows[1]["identity_gaps"] == "RR-FW-001" and rows[1]["within_rpo"] == "no"


def test_csv_neutralises_spreadsheet_formulas() -> None:
    doc = sample_doc()
    doc["vms"][0]["owner"] = '=HYPERLINK("http://x","y")'
    doc["vms"][0]["findings"][-1]["message"] = "+cmd|' /C calc'!A0"
    report = AuditReport.model_validate(doc)
    vms = _rows(vms_csv(report))
    assert vms[0]["owner"] == '\'=HYPERLINK("http://x","y")'
    findings = _rows(findings_csv(report))
    assert "'+cmd|' /C calc'!A0" in {r["message"] for r in findings}
    assert all(not r["evidence"].startswith(("=", "+", "@")) for r in findings)


def test_cards_are_deterministic_json_per_vm(tmp_path: Path) -> None:
    report = sample_report()
    paths = write_formats(report, tmp_path, ["cards"])
    rel = [p.relative_to(tmp_path).as_posix() for p in paths]
    assert rel[0] == "recovery-cards/finance-prod/fin-app-01.json" and len(rel) == 6
    text = (tmp_path / "recovery-cards/finance-prod/fin-db-01.json").read_text(encoding="utf-8")
    doc = json.loads(text)
    assert doc.pop("audit")["run_id"] == report.run.id
    assert doc == report.vms[1].recovery_card.model_dump(mode="json")
    assert text.endswith("}\n") and text.index('"disks"') < text.index('"firmware"')


def test_card_paths_cannot_escape_the_cards_dir(tmp_path: Path) -> None:
    doc = sample_doc()
    doc["vms"][0]["namespace"] = ".."
    doc["vms"][0]["name"] = "../../etc/passwd"
    doc["vms"][1]["name"] = HOSTILE_SCRIPT
    report = AuditReport.model_validate(doc)
    paths = write_formats(report, tmp_path / "out", ["cards"])
    root = (tmp_path / "out" / "recovery-cards").resolve()
    assert all(p.resolve().is_relative_to(root) for p in paths)
    assert paths[0].relative_to(root).as_posix() == "_%2E%2E/_%2E%2E%2F%2E%2E%2Fetc%2Fpasswd.json"
    assert safe_segment("fin-db-01") == "fin-db-01" and safe_segment("a..b").startswith("_")


def test_write_formats_all_and_deterministic(tmp_path: Path) -> None:
    fmts = ["html", "csv", "cards"]
    a = write_formats(sample_report(hostile=True), tmp_path / "a", fmts)
    b = write_formats(sample_report(hostile=True), tmp_path / "b", fmts)
    names = [p.relative_to(tmp_path / "a").as_posix() for p in a]
    assert names[:3] == ["report.html", "findings.csv", "vms.csv"] and len(names) == 10
    assert [p.read_bytes() for p in a] == [p.read_bytes() for p in b]


def test_write_formats_rejects_unknown_format(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown report format.*json, xlsx"):
        write_formats(sample_report(), tmp_path, ["html", "xlsx", "json"])
    assert not (tmp_path / "report.html").exists()
