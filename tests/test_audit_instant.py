"""An audit instant (``--at``) before objects in the input were created (trial ux27).

``run --at 2000-01-01`` on an export of 2026 judged five VMs that did not exist yet, with no
word of it; and an object created after the audit instant (a NetworkAttachmentDefinition,
a Schedule, a BackupStorageLocation) counted as evidence at that instant. Objects created
after ``--at`` are now left out and named (file, first object, ``metadata.creationTimestamp``);
when no VM existed then, nothing is audited (exit 4).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import yaml

from auditor.config import AuditSettings
from auditor.pipeline import audit_data
from auditor.sources.directory import DirectorySource
from tests.conftest import AUDIT_AT, invoke_run, report_doc

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "small-cluster"


def _vm(report: dict[str, object], name: str) -> dict[str, object]:
    return next(v for v in report["vms"] if v["name"] == name)  # type: ignore[attr-defined,index]


def _nad_created(tmp_path: Path, when: str) -> Path:
    export = tmp_path / "export"
    shutil.copytree(EXAMPLE, export)
    path = export / "network-attachment-definitions.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["items"][0]["metadata"]["creationTimestamp"] = when
    path.write_text(yaml.safe_dump(doc))
    return export


def test_a_network_created_after_the_audit_instant_is_no_evidence_then(tmp_path: Path) -> None:
    """billing-db plugs into NAD billing/billing-vlan. Created the day after the audit
    instant, the NAD did not exist then (or an earlier one of that name did, which the
    export cannot show): RR-NET-001 passed and the VM was READY at an instant its network
    may have been missing."""
    before = report_doc(
        audit_data(DirectorySource(_nad_created(tmp_path / "a", "2026-01-01T00:00:00Z")).collect(),
                   AuditSettings(), at=AUDIT_AT)
    )  # fmt: skip
    assert _vm(before, "billing-db")["readiness"] == "READY"
    export = _nad_created(tmp_path / "b", "2026-12-01T00:00:00Z")
    report = report_doc(audit_data(DirectorySource(export).collect(), AuditSettings(), at=AUDIT_AT))
    vm = _vm(report, "billing-db")
    net = next(f for f in vm["findings"] if f["check_id"] == "RR-NET-001")  # type: ignore[index]
    # at that instant the NAD was absent, or an earlier one of that name was there: unknown
    assert net["status"] == "ERROR"
    assert vm["readiness"] == "UNKNOWN"
    assert report["run"]["complete"] is False
    (problem,) = report["collection_problems"]
    assert problem["kind"] == "NetworkAttachmentDefinition"
    assert (problem["namespace"], problem["name"]) == ("billing", "billing-vlan")
    assert problem["field"] == "metadata.creationTimestamp"
    assert problem["file"].startswith("network-attachment-definitions.yaml")
    assert problem["kinds"] == ["NetworkAttachmentDefinition"]
    assert problem["reason"].startswith(
        "1 NetworkAttachmentDefinition object(s) created after the audit instant "
        "2026-11-30T06:00:00Z left out (the first, billing/billing-vlan, created "
        "2026-12-01T00:00:00Z)"
    )


def test_run_warns_when_at_precedes_objects_of_the_input(tmp_path: Path) -> None:
    result = invoke_run(EXAMPLE, tmp_path / "out", at="2026-11-25T00:00:00Z")
    assert result.exit_code == 0, result.output
    assert (
        "Warning: --at 2026-11-25T00:00:00Z precedes the creation of 7 object(s) read "
        "(Backup, Restore)" in result.output
    )
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    # Backups and Restores are records made once: left out, nothing else is unknown
    assert {p["kind"]: p["kinds"] for p in report["collection_problems"]} == {
        "Backup": [],
        "Restore": [],
    }
    assert report["run"]["complete"] is False
    # at the export's own instant nothing is left out and nothing is said
    same = invoke_run(EXAMPLE, tmp_path / "same")
    assert same.exit_code == 0 and "precedes the creation" not in same.output


def test_an_instant_before_every_vm_existed_audits_nothing(tmp_path: Path) -> None:
    result = invoke_run(EXAMPLE, tmp_path / "out", at="2000-01-01T00:00:00Z")
    assert result.exit_code == 4
    assert (
        "no VirtualMachine in " in result.output
        and "existed at the audit instant 2000-01-01T00:00:00Z: all 5 were created after it"
        in result.output
    )
    assert not (tmp_path / "out" / "report.json").exists()
