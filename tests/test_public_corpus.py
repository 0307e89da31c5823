"""The pile of public manifests audits to completion with every VM accounted for."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from auditor.config import AuditSettings
from auditor.pipeline import audit_data
from auditor.sources.directory import DirectorySource
from tests.conftest import AUDIT_AT, report_doc


def _public(corpus: Path) -> dict[str, Any]:
    data = DirectorySource(corpus / "public").collect()
    return report_doc(audit_data(data, AuditSettings(), at=AUDIT_AT))


def test_every_vm_audited_or_named_in_a_problem(corpus: Path) -> None:
    report = _public(corpus)
    audited = {(v["namespace"], v["name"]) for v in report["vms"]}
    assert all(
        v["readiness"] in ("READY", "AT_RISK", "NOT_READY", "UNKNOWN") for v in report["vms"]
    )
    duplicates = [p for p in report["collection_problems"] if "defined twice" in p["reason"]]
    dup_vms = [p for p in duplicates if p["kind"] == "VirtualMachine"]
    unparsed = [p for p in report["collection_problems"] if "could not be read" in p["reason"]]
    named_in_unparsed = [p for p in unparsed if "VirtualMachine" in p["reason"]]
    # 20 VirtualMachines: the audited ones, the duplicate identities, and the one a
    # duplicate-key file would silently have become.
    assert len(audited) + len(dup_vms) + len(named_in_unparsed) == 20
    for p in dup_vms:
        assert p["reason"].count(".y") >= 2, "a duplicate names both files"
    assert report["run"]["complete"] is False


def test_templates_are_never_audited(corpus: Path) -> None:
    report = _public(corpus)
    assert report["cluster"]["skipped"]["template.openshift.io/v1 Template"] == 200
    names = {v["name"] for v in report["vms"]}
    assert not any("${" in n for n in names)
    assert report["cluster"]["skipped"]["pool.kubevirt.io/v1beta1 VirtualMachinePool"] == 1


def test_unparseable_file_is_named_with_its_error(corpus: Path) -> None:
    report = _public(corpus)
    by_file = {p["file"]: p for p in report["collection_problems"] if p["file"]}
    bad = by_file["kubevirt-velero-plugin/vm_with_instancetype_and_preference.yaml"]
    assert "line 25, column 28" in bad["reason"]
    dup = by_file["kubevirt.github.io/win2k12.yml"]
    assert "duplicate key 'apiVersion'" in dup["reason"] and "win2k12-iso" in dup["reason"]


def test_unknown_kinds_give_unknown_not_ready(corpus: Path) -> None:
    report = _public(corpus)
    # No VirtualMachineSnapshots were exported: storage checks cannot be trusted -> ERROR.
    for vm in report["vms"]:
        stg = next(f for f in vm["findings"] if f["check_id"] == "RR-STG-001")
        assert stg["status"] in ("ERROR", "NOT_APPLICABLE"), (vm["name"], stg)
        assert vm["readiness"] != "READY"
    assert "RR-STG-001" in report["run"]["incomplete_checks"]


def test_unquoted_timestamps_are_strings(corpus: Path) -> None:
    report = _public(corpus)
    testvm = next(v for v in report["vms"] if v["name"] == "testvm")
    assert testvm["recovery_card"]["vm"]["created"] in (None, "2018-07-04T15:03:08Z")
    assert json.loads(json.dumps(report, allow_nan=False)) == report
