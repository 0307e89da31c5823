"""False-alarm round fp29: every VM check reads exactly the VM fields it judges.

A malformed field gives ERROR in the checks that read it (``CheckSpec.reads``, engine
``_malformed_inputs``). The backup checks declared the whole template, so a malformed NIC MAC,
firmware UUID or cloud-init ``networkData`` made them ERROR and hid the VM's backup verdict;
a field they do read must still make them ERROR, never PASS.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from auditor.checks import CATALOG
from tests.test_evidence_gaps import _complete, _docs, _finding

Docs = list[dict[str, Any]]

#: vm1 in namespace app, two daily Backups of Schedule velero/daily (CSI snapshots), a
#: persistent EFI (its ``persistent-state-for-vm1`` PVC), a cloud-init disk.
HEALTHY = "RR-BKP-001/pass.yaml"

#: The checks that judge the VM's copies of its disk data (pairing, capture, restore drills,
#: provisioning on restore).
DISK_DATA_CHECKS = (
    "RR-BKP-001",
    "RR-BKP-002",
    "RR-BKP-003",
    "RR-BKP-004",
    "RR-BKP-005",
    "RR-BKP-006",
    "RR-BKP-007",
    "RR-BKP-010",
    "RR-BKP-011",
    "RR-BKP-013",
    "RR-RST-001",
    "RR-STG-001",
    "RR-STG-003",
)


def _vm(docs: Docs) -> dict[str, Any]:
    return next(d for d in docs if d["kind"] == "VirtualMachine")


def _tspec(docs: Docs) -> dict[str, Any]:
    spec: dict[str, Any] = _vm(docs)["spec"]["template"]["spec"]
    return spec


def _volume(docs: Docs, name: str) -> dict[str, Any]:
    return next(v for v in _tspec(docs)["volumes"] if v["name"] == name)


def _statuses(report: dict[str, Any]) -> dict[str, str]:
    return {c: _finding(report, c)["status"] for c in DISK_DATA_CHECKS}


def test_a_malformed_mac_uuid_serial_or_network_data_leaves_the_backup_verdicts(
    tmp_path: Path,
) -> None:
    """None of the disk-data checks reads a NIC's MAC, the firmware UUID or serial, or
    cloud-init networkData (KubeVirt's VirtualMachineInstanceSpec: the Velero plugin and
    Velero pick a VM's PVCs from its volumes and DataVolume templates, kubevirt-velero-plugin
    pkg/plugin/vm_backup_item_action.go; the guest's addresses play no part): malformed,
    they leave each of those checks' verdicts as on the healthy VM."""
    healthy = _statuses(_complete(tmp_path / "healthy", HEALTHY, _docs(HEALTHY)))
    assert healthy["RR-BKP-001"] == healthy["RR-BKP-004"] == "PASS"
    docs = _docs(HEALTHY)
    spec = _tspec(docs)
    spec["domain"]["devices"]["interfaces"][0]["macAddress"] = "not-a-mac"
    spec["domain"]["firmware"]["uuid"] = "not-a-uuid"
    spec["domain"]["firmware"]["serial"] = 7
    _volume(docs, "cloudinitdisk")["cloudInitNoCloud"]["networkData"] = ["not", "a", "string"]
    report = _complete(tmp_path / "broken", HEALTHY, docs)
    assert _finding(report, "RR-NIC-001")["status"] == "ERROR"
    assert _finding(report, "RR-FW-001")["status"] == "ERROR"
    net = _finding(report, "RR-NET-002")  # reads networkData: static addresses
    assert net["status"] == "ERROR", net["message"]
    assert "cloudInitNoCloud.networkData" in net["message"]
    assert _statuses(report) == healthy


def test_malformed_network_data_alone_leaves_the_disk_and_reference_checks(
    tmp_path: Path,
) -> None:
    """The checks that read volumes for their disks or referenced Secrets (RR-DSK-001/002,
    RR-STG-002, RR-BKP-012) do not read networkData either: a ``!`` entry in ``reads`` leaves
    it out below ``spec.template.spec.volumes``."""
    others = ("RR-DSK-001", "RR-DSK-002", "RR-STG-002", "RR-BKP-012")
    healthy = _complete(tmp_path / "healthy", HEALTHY, _docs(HEALTHY))
    docs = _docs(HEALTHY)
    _volume(docs, "cloudinitdisk")["cloudInitNoCloud"]["networkDataBase64"] = 12
    report = _complete(tmp_path / "broken", HEALTHY, docs)
    assert _finding(report, "RR-NET-002")["status"] == "ERROR"
    for check_id in (*DISK_DATA_CHECKS, *others):
        before = _finding(healthy, check_id)["status"]
        assert _finding(report, check_id)["status"] == before, check_id


@pytest.mark.parametrize(
    ("where", "field"),
    [
        ("volume", "spec.template.spec.volumes[root].dataVolume.name"),
        ("disks", "spec.template.spec.domain.devices.disks"),
        ("efi", "spec.template.spec.domain.firmware.bootloader.efi"),
        ("pod annotations", "spec.template.metadata.annotations"),
        ("preference", "spec.preference"),
    ],
)
def test_a_malformed_field_the_backup_checks_read_gives_error(
    tmp_path: Path, where: str, field: str
) -> None:
    """What they do read: which PVCs the volumes and disks name, whether the VM keeps EFI
    state in ``persistent-state-for-<vm>`` (a PVC to capture; its preference may say so:
    kubevirt api instancetype v1beta1 FirmwarePreferences.preferredEfi), and the pod annotations that
    opt volumes in or out of file-system backup (velero pkg/util/podvolume
    GetVolumesByPod): malformed, each disk-data check gives ERROR naming it, never PASS."""
    docs = _docs(HEALTHY)
    spec = _tspec(docs)
    if where == "volume":
        _volume(docs, "root")["dataVolume"]["name"] = 7
    elif where == "disks":
        spec["domain"]["devices"]["disks"] = {"root": "virtio"}
    elif where == "preference":
        # a preference's firmware.preferredEfi / preferredTPM can make the state persistent
        _vm(docs)["spec"]["preference"] = "rhel.9"
    elif where == "efi":
        spec["domain"]["firmware"]["bootloader"]["efi"] = "persistent"
    else:
        _vm(docs)["spec"]["template"]["metadata"]["annotations"] = ["backup.velero.io"]
    report = _complete(tmp_path, HEALTHY, docs)
    for check_id in DISK_DATA_CHECKS:
        finding = _finding(report, check_id)
        assert finding["status"] == "ERROR", (check_id, finding["message"])
        assert field in finding["evidence"]["malformed_fields"], (check_id, finding["evidence"])


def test_reads_exclusions_name_only_the_fields_below_them() -> None:
    """A ``!`` entry leaves out the field and what lies below it, in any volume; a broken
    parent (the cloud-init source itself, the volume) is still read."""
    spec = CATALOG["RR-BKP-001"]
    base = "spec.template.spec.volumes[ci]"
    assert not spec.reads_field(f"{base}.cloudInitNoCloud.networkData")
    assert not spec.reads_field(f"{base}.cloudInitConfigDrive.networkDataBase64")
    assert spec.reads_field(f"{base}.cloudInitNoCloud.networkDataSecretRef.name")
    assert spec.reads_field(f"{base}.cloudInitNoCloud")
    assert spec.reads_field(base)
    assert spec.reads_field("spec.template.spec")
    assert not spec.reads_field("spec.template.spec.domain.devices.interfaces[default].macAddress")
    assert not spec.reads_field("spec.template.spec.domain.firmware.uuid")


def test_fw002_reads_the_firmware_and_its_preference_not_the_nics(tmp_path: Path) -> None:
    """RR-FW-002 read all of ``spec.template.spec.domain``: a malformed NIC MAC made it ERROR.
    It did not read ``spec.preference``, though a preference's ``firmware.preferredEfi`` and
    ``devices.preferredTPM`` decide the EFI/TPM persistence it judges (kubevirt
    pkg/instancetype/preference/apply/firmware.go applyFirmwarePreferences): malformed, it
    gave a verdict on the VM's own firmware alone."""
    healthy = _finding(_complete(tmp_path / "healthy", HEALTHY, _docs(HEALTHY)), "RR-FW-002")
    assert healthy["status"] == "PASS", healthy["message"]
    docs = _docs(HEALTHY)
    _tspec(docs)["domain"]["devices"]["interfaces"][0]["macAddress"] = "not-a-mac"
    report = _complete(tmp_path / "mac", HEALTHY, docs)
    assert _finding(report, "RR-NIC-001")["status"] == "ERROR"
    assert _finding(report, "RR-FW-002")["status"] == "PASS"
    docs = _docs(HEALTHY)
    _vm(docs)["spec"]["preference"] = "windows.2k22"
    finding = _finding(_complete(tmp_path / "pref", HEALTHY, docs), "RR-FW-002")
    assert finding["status"] == "ERROR", finding["message"]
    assert "spec.preference" in finding["evidence"]["malformed_fields"]


def test_def001_reads_the_revision_kubevirt_pinned_the_vm_to(tmp_path: Path) -> None:
    """RR-DEF-001 judges the instancetype "live or as its pinned revision", and KubeVirt
    records the pin in ``status.instancetypeRef.controllerRevisionRef.name`` (kubevirt api
    core/v1 VirtualMachineStatus.InstancetypeRef; pkg/instancetype/find/revision.go). A
    reference of no name (a revision of unknown name) was not read: PASS on the live object
    alone."""
    fixture = "RR-DEF-001/pass.yaml"
    healthy = _finding(_complete(tmp_path / "ok", fixture, _docs(fixture)), "RR-DEF-001")
    assert healthy["status"] == "PASS", healthy["message"]
    docs = _docs(fixture)
    _vm(docs).setdefault("status", {})["instancetypeRef"] = {"controllerRevisionRef": {"name": 7}}
    finding = _finding(_complete(tmp_path / "bad", fixture, docs), "RR-DEF-001")
    assert finding["status"] == "ERROR", finding["message"]
    assert finding["evidence"]["malformed_fields"] == [
        "status.instancetypeRef.controllerRevisionRef.name"
    ]


def test_bucket_checks_do_not_read_the_machine_type(tmp_path: Path) -> None:
    """RR-BKP-008 (the objects a restore needs) and RR-BKP-009 (the backed-up identity:
    firmware UUID/serial, MACs, networks, boot order) read the whole template: a malformed
    machine type, which only RR-DSK-003 judges, made both ERROR."""
    healthy = _complete(tmp_path / "healthy", HEALTHY, _docs(HEALTHY))
    docs = _docs(HEALTHY)
    _tspec(docs)["domain"]["machine"] = "pc-q35-rhel9.4.0"
    report = _complete(tmp_path / "broken", HEALTHY, docs)
    assert _finding(report, "RR-DSK-003")["status"] == "ERROR"
    for check_id in ("RR-BKP-008", "RR-BKP-009"):
        before = _finding(healthy, check_id)["status"]
        assert before != "ERROR"
        assert _finding(report, check_id)["status"] == before, check_id
    docs = _docs(HEALTHY)
    _tspec(docs)["domain"]["devices"]["interfaces"][0]["macAddress"] = "not-a-mac"
    _tspec(docs)["networks"][1]["multus"]["networkName"] = 7
    report = _complete(tmp_path / "identity", HEALTHY, docs)
    assert _finding(report, "RR-BKP-009")["status"] == "ERROR"  # a MAC it compares
    assert _finding(report, "RR-BKP-008")["status"] == "ERROR"  # a NAD a restore needs
