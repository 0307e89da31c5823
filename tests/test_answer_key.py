"""The shared example cluster export audits to its answers.

The expected verdicts live in ``tests/answers/cluster-export.yaml`` (read through
``tests/answer_support.py``). They must agree with the corpus README's answer key
(``../shared/corpus/cluster-export/README.md``), which grades each VM per column:
PASS=READY, WARN=AT_RISK, FAIL=NOT_READY overall, and every WARN/FAIL cell must be
explained by a FAIL finding above info severity in the column's check family.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.answer_support import answers

ANSWERS = answers("cluster-export")

COLUMN_FAMILY = {
    "Coverage": "BKP",
    "Fresh": "BKP",
    "Phase": "BKP",
    "Volumes": "BKP",
    "Restore test": "RST",
    "FW id": "FW",
    "NVRAM": "FW",
    "MAC": "NIC",
    "Net": "NET",
    "Disk order": "DSK",
    "Storage": "STG",
}
OVERALL = {"PASS": "READY", "WARN": "AT_RISK", "FAIL": "NOT_READY"}


def answer_key(corpus: Path) -> list[dict[str, str]]:
    """Rows of the README's answer-key table as {column: cell}."""
    text = (corpus / "cluster-export" / "README.md").read_text()
    lines = [ln for ln in text.splitlines() if re.match(r"^\| [a-z0-9-]+ \([a-z0-9-]+\) \|", ln)]
    header_line = next(ln for ln in text.splitlines() if ln.startswith("| VM (namespace)"))
    header = [c.strip() for c in header_line.strip("|").split("|")]
    rows = []
    for ln in lines:
        cells = [c.strip() for c in ln.strip("|").split("|")]
        if len(cells) == len(header):
            rows.append(dict(zip(header, cells, strict=True)))
    return rows


def _grade(cell: str) -> str:
    m = re.search(r"\b(PASS|WARN|FAIL|INFO|N/A)\b", cell.replace("*", ""))
    return m.group(1) if m else "OTHER"


def test_answer_file_agrees_with_the_readme_key(corpus: Path) -> None:
    rows = answer_key(corpus)
    readme = {}
    for row in rows:
        name, ns = re.match(r"(\S+) \((\S+)\)", row["VM (namespace)"]).groups()  # type: ignore[union-attr]
        readme[f"{ns}/{name}"] = OVERALL[_grade(row["Expected overall"])]
    assert readme == ANSWERS.readiness


def test_every_vm_matches_answer_key(corpus: Path, export_doc: dict[str, Any]) -> None:
    vms = {(v["namespace"], v["name"]): v for v in export_doc["vms"]}
    assert {f"{ns}/{name}": v["readiness"] for (ns, name), v in vms.items()} == ANSWERS.readiness
    assert export_doc["summary"]["readiness"] == ANSWERS.summary
    for row in answer_key(corpus):
        name, ns = re.match(r"(\S+) \((\S+)\)", row["VM (namespace)"]).groups()  # type: ignore[union-attr]
        vm = vms[(ns, name)]
        fails = [f for f in vm["findings"] if f["status"] == "FAIL" and f["severity"] != "info"]
        for column, family in COLUMN_FAMILY.items():
            grade = _grade(row[column])
            if grade in ("WARN", "FAIL") or (column == "Phase" and "**" in row[column]):
                families = {f["check_id"].split("-")[1] for f in fails}
                assert family in families, (name, column, row[column])
            if grade == "FAIL":
                assert any(
                    f["check_id"].split("-")[1] == family and f["severity"] in ("high", "critical")
                    for f in fails
                ), (name, column, "a FAIL cell needs a high/critical finding")


@pytest.mark.parametrize(("vm", "check_id"), sorted(ANSWERS.findings))
def test_specific_findings(export_doc: dict[str, Any], vm: str, check_id: str) -> None:
    entry = next(v for v in export_doc["vms"] if f"{v['namespace']}/{v['name']}" == vm)
    finding = next(f for f in entry["findings"] if f["check_id"] == check_id)
    expected = ANSWERS.findings[(vm, check_id)]
    assert (finding["status"], finding["severity"]) == expected, finding["message"]


def test_evidence_names_objects_and_ages(export_doc: dict[str, Any]) -> None:
    dev = next(v for v in export_doc["vms"] if v["name"] == "dev-build-01")
    fresh = next(f for f in dev["findings"] if f["check_id"] == "RR-BKP-002")
    assert fresh["evidence"]["backup"] == "openshift-adp/eng-sandbox-weekly-20261115030004"
    # the age of a backup's data counts from its start (03:00:05Z), not its completion
    assert fresh["evidence"]["age_hours"] == pytest.approx(363.0, abs=0.01)
    assert fresh["evidence"]["started"] == "2026-11-15T03:00:05Z"
    assert fresh["evidence"]["schedules"][0]["paused"] is True
    assert "Schedule openshift-adp/eng-sandbox-weekly is paused" in fresh["message"]
    win = next(v for v in export_doc["vms"] if v["name"] == "fin-report-win2k22")
    fw = next(f for f in win["findings"] if f["check_id"] == "RR-FW-001")
    assert fw["evidence"]["vmi_runtime_uuid"] == "ec602b1f-2105-52db-9b1b-1c21ba738517"
    db = next(v for v in export_doc["vms"] if v["name"] == "fin-db-01")
    rst = next(f for f in db["findings"] if f["check_id"] == "RR-RST-001")
    assert rst["evidence"]["persistent_state_restored"] is False
    assert db["backup"]["newest_usable"]["name"] == "finance-prod-daily-20261130010019"
    assert db["backup"]["newest_usable"]["age_hours"] == pytest.approx(4.99, abs=0.01)
    assert db["backup"]["restore_points"] == 7


def test_platform_observations(export_doc: dict[str, Any]) -> None:
    plt = {f["check_id"]: f for f in export_doc["platform_findings"]}
    assert {c: plt[c]["status"] for c in ANSWERS.platform} == ANSWERS.platform
    assert "eng-sandbox-weekly" in plt["RR-PLT-002"]["message"]
    assert plt["RR-PLT-003"]["evidence"]["missing"] == ["nfs.csi.k8s.io"]
    assert export_doc["run"]["complete"] is True
