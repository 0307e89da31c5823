"""Typed records and VM spec validation: a malformed field is a named problem and the
checks that read it give ERROR (issue 17)."""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path
from typing import Any

import pytest
import yaml

from auditor.checks.registry import CATALOG
from auditor.inventory.records import parse_record
from auditor.inventory.vmvalidate import validate_vm
from tests.scale_support import audit, good_objects, of_kind, statuses
from tests.test_check_fixtures import audit_fixture

STG_PASS = Path(__file__).parent / "fixtures" / "checks" / "RR-STG-001" / "pass.yaml"
PV = {
    "kind": "PersistentVolume",
    "metadata": {"name": "pv1"},
    "spec": {"persistentVolumeReclaimPolicy": "retain", "csi": {"driver": "csi.example.com"}},
}


def _problems(report: dict[str, Any]) -> list[str]:
    return [p["reason"] for p in report["collection_problems"]]


def _finding(report: dict[str, Any], check: str) -> dict[str, Any]:
    vm = next(v for v in report["vms"] if (v["namespace"], v["name"]) == ("app", "vm1"))
    return next(f for f in vm["findings"] if f["check_id"] == check)


def test_invalid_reclaim_policy_is_none_with_a_named_rejected_issue() -> None:
    record, problems = parse_record("PersistentVolume", PV, "persistentvolumes.yaml items[0]")
    assert record.reclaim_policy is None  # type: ignore[union-attr]
    assert record.csi_driver == "csi.example.com"  # type: ignore[union-attr]
    [p] = problems
    assert (p.file, p.kind, p.name, p.field) == (
        "persistentvolumes.yaml items[0]",
        "PersistentVolume",
        "pv1",
        "spec.persistentVolumeReclaimPolicy",
    )
    assert "'retain', not one of Retain, Delete, Recycle" in p.reason
    assert "API server would reject" in p.reason


def test_pvc_fields_are_typed_and_checked() -> None:
    pvc = {
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "c", "namespace": "app", "creationTimestamp": None, "labels": []},
        "spec": {"accessModes": ["ReadWriteOnce", "RWX"], "volumeMode": "block"},
        "status": {"phase": "Bound"},
    }
    record, problems = parse_record("PersistentVolumeClaim", pvc, None)
    assert record.created is None  # type: ignore[union-attr]
    assert record.access_modes == ("ReadWriteOnce",)  # type: ignore[union-attr]
    assert record.volume_mode is None  # type: ignore[union-attr]
    assert sorted(p.field for p in problems) == [
        "metadata.creationTimestamp",
        "metadata.labels",
        "spec.accessModes",
        "spec.volumeMode",
        "spec.volumeName",
    ]


def test_storage_class_reclaim_policy_defaults_to_delete_only_when_absent() -> None:
    sc = {"kind": "StorageClass", "metadata": {"name": "s"}, "provisioner": "p"}
    assert parse_record("StorageClass", sc, None)[0].reclaim_policy == "Delete"  # type: ignore[union-attr]
    sc["reclaimPolicy"] = 7
    record, problems = parse_record("StorageClass", sc, None)
    assert record.reclaim_policy is None  # type: ignore[union-attr]
    assert [p.field for p in problems] == ["reclaimPolicy"]


def _vm() -> dict[str, Any]:
    return next(o for o in good_objects() if o["kind"] == "VirtualMachine")


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (
            lambda t: t["volumes"][0]["dataVolume"].update(name=42),
            "spec.template.spec.volumes[root].dataVolume.name",
        ),
        (lambda t: t.pop("volumes"), "spec.template.spec.volumes"),
        (
            lambda t: t["domain"]["devices"]["disks"][0].update(name="rootX"),
            "spec.template.spec.domain.devices.disks[rootX]",
        ),
        (
            lambda t: t["domain"]["devices"].update(interfaces=None),
            "spec.template.spec.domain.devices.interfaces",
        ),
        (lambda t: t.update(domain=None), "spec.template.spec.domain"),
        (
            lambda t: t["domain"]["firmware"].update(uuid="not-a-uuid"),
            "spec.template.spec.domain.firmware.uuid",
        ),
        (
            lambda t: t["domain"]["devices"]["interfaces"][0].update(macAddress="02:00:00"),
            "spec.template.spec.domain.devices.interfaces[default].macAddress",
        ),
        (lambda t: t["volumes"][0].update(dataVolume=None), "spec.template.spec.volumes[root]"),
    ],
)
def test_vm_validation_names_the_field(mutate: Any, field: str) -> None:
    vm = _vm()
    assert validate_vm(vm) == []
    mutate(vm["spec"]["template"]["spec"])
    assert field in [path for path, _ in validate_vm(vm)]


def test_invalid_run_strategy_is_named() -> None:
    vm = _vm()
    vm["spec"]["runStrategy"] = "always"
    assert [p for p, _ in validate_vm(vm)] == ["spec.runStrategy"]


def test_pv_with_invalid_reclaim_policy_makes_stg_001_error_naming_it(tmp_path: Path) -> None:
    assert statuses(audit_fixture(STG_PASS))["RR-STG-001"] == "PASS"
    text = STG_PASS.read_text()
    assert text.count("persistentVolumeReclaimPolicy: Delete") >= 1
    broken = tmp_path / "pass.yaml"
    broken.write_text(
        text.replace(
            "persistentVolumeReclaimPolicy: Delete", "persistentVolumeReclaimPolicy: retain", 1
        )
    )
    pv = next(
        d
        for d in yaml.safe_load_all(broken.read_text())
        if d
        and d["kind"] == "PersistentVolume"
        and d["spec"]["persistentVolumeReclaimPolicy"] == "retain"
    )
    report = audit_fixture(broken)
    stg = _finding(report, "RR-STG-001")
    assert stg["status"] == "ERROR"
    assert pv["metadata"]["name"] in stg["message"]
    assert "spec.persistentVolumeReclaimPolicy" in stg["message"]
    assert stg["evidence"]["would_be"]["status"] == "PASS"
    assert report["run"]["complete"] is False
    assert any(pv["metadata"]["name"] in r for r in _problems(report))


def test_non_string_claim_name_errors_the_backup_and_storage_checks() -> None:
    objects = good_objects()
    vm = of_kind(objects, "VirtualMachine")[0]
    vm["spec"]["template"]["spec"]["volumes"][0]["dataVolume"]["name"] = 42
    got = statuses(audit(objects))
    assert got["RR-BKP-004"] == got["RR-STG-001"] == "ERROR"


def test_interfaces_null_keeps_net_001_reading_the_networks() -> None:
    objects = good_objects()
    vm = of_kind(objects, "VirtualMachine")[0]
    for net in vm["spec"]["template"]["spec"]["networks"]:
        if "multus" in net:
            net["multus"]["networkName"] = "gone"
    vm["spec"]["template"]["spec"]["domain"]["devices"]["interfaces"] = None
    report = audit(objects)
    got = statuses(report)
    # RR-NET-001 reads the interfaces too (their network binding plugins, rt31): with them
    # malformed it cannot conclude, but it still read the networks, and its would-be FAIL
    # names the gone NAD; never N/A or PASS, and the VM is no better than NOT_READY
    net = next(f for f in report["vms"][0]["findings"] if f["check_id"] == "RR-NET-001")
    assert net["status"] == "ERROR" and net["severity"] == "high", net["message"]
    assert net["evidence"]["would_be"]["status"] == "FAIL"
    assert "app/gone, which do not exist" in net["evidence"]["would_be"]["message"]
    assert report["vms"][0]["readiness"] in ("NOT_READY", "UNKNOWN")
    assert got["RR-NIC-001"] == "ERROR"


def test_vmi_volumes_float_is_a_named_problem_not_a_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    objects = good_objects()
    vmis = of_kind(objects, "VirtualMachineInstance")
    assert vmis, "the good fixture runs its VM"
    vmis[0]["spec"]["volumes"] = 1.5
    with caplog.at_level(logging.WARNING):
        report = audit(objects)
    assert caplog.records == []
    dsk = _finding(report, "RR-DSK-002")
    assert dsk["status"] == "ERROR"
    assert "VirtualMachineInstance app/vm1 spec.volumes" in dsk["message"]
    assert any("spec.volumes is a float" in r for r in _problems(report))


def test_a_crashing_check_is_a_named_problem_with_traceback_in_debug_log_only(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = CATALOG["RR-DSK-001"]

    def boom(vm: Any, ctx: Any) -> Any:
        raise TypeError("'float' object is not iterable")

    monkeypatch.setitem(CATALOG, "RR-DSK-001", dataclasses.replace(spec, vm_func=boom))
    with caplog.at_level(logging.DEBUG, logger="auditor.engine"):
        report = audit(good_objects())
    dsk = _finding(report, "RR-DSK-001")
    assert dsk["status"] == "ERROR"
    assert "TypeError" in dsk["message"] and "spec.template.spec.volumes" in dsk["message"]
    assert any("RR-DSK-001" in r and "app/vm1" in r for r in _problems(report))
    assert all(r.levelno == logging.DEBUG for r in caplog.records if r.name == "auditor.engine")
    assert any(r.exc_info for r in caplog.records)


def test_data_volume_templates_not_a_list_is_named_and_errors_backup_checks() -> None:
    objects = good_objects()
    of_kind(objects, "VirtualMachine")[0]["spec"]["dataVolumeTemplates"] = 1.5
    report = audit(objects)
    assert statuses(report)["RR-BKP-001"] == "ERROR"
    assert any("spec.dataVolumeTemplates" in r for r in _problems(report))


@pytest.mark.parametrize("how", ["deleted", "null"])
def test_a_pv_without_its_reclaim_policy_is_named(how: str) -> None:
    """mutations seeds 2111 and 2229: a PersistentVolume whose reclaim policy was deleted made
    RR-STG-001 ERROR with nothing named (a null one was named). The API server always sets
    it, so its absence is named either way, and no check passes on the PV."""
    objects = good_objects()
    pv = of_kind(objects, "PersistentVolume")[0]
    if how == "deleted":
        del pv["spec"]["persistentVolumeReclaimPolicy"]
    else:
        pv["spec"]["persistentVolumeReclaimPolicy"] = None
    report = audit(objects)
    assert any(
        "spec.persistentVolumeReclaimPolicy is missing" in r and pv["metadata"]["name"] in r
        for r in _problems(report)
    ), _problems(report)
    assert statuses(report)["RR-STG-001"] == "ERROR"


@pytest.mark.parametrize("how", ["deleted", "null"])
def test_a_pvc_status_without_its_phase_is_named(how: str) -> None:
    """mutations seed 3203: a PersistentVolumeClaim whose ``status.phase`` was deleted changed
    RR-STG-003's verdict with nothing named (a null one was not named either). The API server
    defaults the phase to Pending whenever it writes a claim, so a status without it is
    named; a claim with no status at all (a manifest, not a live object) is not."""
    objects = good_objects()
    pvc = of_kind(objects, "PersistentVolumeClaim")[0]
    assert pvc["status"]["phase"] == "Bound"
    if how == "deleted":
        del pvc["status"]["phase"]
    else:
        pvc["status"]["phase"] = None
    named = [r for r in _problems(audit(objects)) if "status.phase is missing" in r]
    assert len(named) == 1 and pvc["metadata"]["name"] in named[0], named
    del pvc["status"]
    assert not [r for r in _problems(audit(objects)) if "status.phase" in r]


@pytest.mark.parametrize(
    ("kind", "path", "value", "check"),
    [
        # since when the VM is being deleted decides which Backups skipped it
        ("VirtualMachine", ("metadata", "deletionTimestamp"), "yesterday", "RR-BKP-001"),
        # no instant in UTC: crashed the audit before (red team)
        (
            "VirtualMachine",
            ("metadata", "deletionTimestamp"),
            "0001-01-01T00:00:00+01:00",
            "RR-BKP-001",
        ),
        (
            "PersistentVolumeClaim",
            ("metadata", "creationTimestamp"),
            "9999-12-31T23:59:59-01:00",
            "RR-BKP-004",
        ),
        ("PersistentVolumeClaim", ("metadata", "deletionTimestamp"), 17, "RR-BKP-004"),
        # whether the node-agent that restores data-mover copies runs
        (
            "DataProtectionApplication",
            ("spec", "configuration", "nodeAgent", "enable"),
            "false",
            "RR-BKP-008",
        ),
        # whether the kubevirt plugin is installed as an OADP custom plugin
        (
            "DataProtectionApplication",
            ("spec", "configuration", "velero", "customPlugins"),
            [{"name": "kubevirt-velero-plugin"}],
            "RR-BKP-008",
        ),
    ],
)
def test_a_deletion_time_or_dpa_switch_that_cannot_be_read_is_named(
    kind: str, path: tuple[str, ...], value: Any, check: str
) -> None:
    """The fields the being-deleted and node-agent rules read (a VM or PVC being deleted is
    skipped by every Backup that began after; a data-mover copy needs the node-agent to come
    back): unreadable, they are named and the check that reads them does not pass."""
    objects = good_objects()
    obj = of_kind(objects, kind)[0]
    node = obj
    for key in path[:-1]:
        node = node.setdefault(key, {})
    node[path[-1]] = value
    report = audit(objects)
    assert any(".".join(path) in r for r in _problems(report)), _problems(report)
    assert statuses(report)[check] != "PASS"


def test_a_storage_location_access_mode_that_cannot_be_read_is_named() -> None:
    """Whether a BackupStorageLocation takes new backups rests on ``spec.accessMode``
    (ReadWrite or ReadOnly): another value is named, and RR-PLT-002 cannot pass on it."""
    objects = good_objects()
    bsl = of_kind(objects, "BackupStorageLocation")[0]
    bsl["spec"]["accessMode"] = "readonly"
    report = audit(objects)
    assert any("spec.accessMode" in r and "'readonly'" in r for r in _problems(report))
    plt = {f["check_id"]: f["status"] for f in report["platform_findings"]}
    assert plt["RR-PLT-002"] == "ERROR"
