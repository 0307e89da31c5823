"""Red-team round rt13: VirtualMachineSnapshots cross-checked against what a restore reads
(their content's volume backups, the VM and PVCs they were taken of), held to the verdict
their evidence allows, and the healthy counterparts held to theirs.

Each test takes a fixture of the check catalog, changes one thing, and asserts the finding
that must follow: never a verdict better than the evidence, never a false alarm on a
healthy VM.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.test_evidence_gaps import _complete, _docs, _finding, _of, _without_vm_snapshot_volumes

Docs = list[dict[str, Any]]

#: A ready VirtualMachineSnapshot of vm1 (no Backup), its content backing both disks up with
#: a VolumeSnapshot each (deletionPolicy Delete): RR-STG-001 FAIL medium (namespace-bound).
VM_SNAPSHOT = "RR-STG-001/fail-only-namespace-bound-vm-snapshot.yaml"


def _stg(tmp_path: Path, docs: Docs) -> tuple[str, str, str]:
    finding = _finding(_complete(tmp_path, VM_SNAPSHOT, docs), "RR-STG-001")
    return finding["status"], finding["severity"], finding["message"]


# -- a disk its snapshot content does not back up ------------------------------------------


@pytest.mark.parametrize("volume_backups", ["absent", [], "root-only"])
def test_a_vm_snapshot_whose_content_backs_up_no_disk_is_no_copy(
    tmp_path: Path, volume_backups: object
) -> None:
    """A VirtualMachineRestore recreates a PVC only for each volume its content lists in
    ``spec.volumeBackups`` (kubevirt pkg/storage/snapshot/restore.go
    ``reconcileVolumeRestores``); a volume without an entry keeps its old claim, so with the
    PVC gone the restored VM has no disk. A ready VM snapshot whose status listed the disks in
    ``includedVolumes`` while its content backed none up (or only the root) counted as their
    copy: RR-STG-001 FAIL medium ("copied inside the namespace") instead of high (no copy)."""
    docs = _without_vm_snapshot_volumes(_docs(VM_SNAPSHOT))
    content = _of(docs, "VirtualMachineSnapshotContent")[0]
    if volume_backups == "absent":
        content["spec"].pop("volumeBackups", None)  # omitempty: KubeVirt omits an empty list
    elif volume_backups == "root-only":
        # the root disk is backed up by a VolumeSnapshot that is there; the data disk is not
        keep = _docs(VM_SNAPSHOT)
        docs += [
            d
            for d in keep
            if d["kind"] in ("VolumeSnapshot", "VolumeSnapshotContent")
            and d["metadata"]["name"].endswith("vmsnapshot-uid-vms-volume-root")
        ]
        content["spec"]["volumeBackups"] = [
            b for b in content["spec"]["volumeBackups"] if b["volumeName"] == "root"
        ]
    else:
        content["spec"]["volumeBackups"] = volume_backups
    status, severity, message = _stg(tmp_path, docs)
    assert (status, severity) == ("FAIL", "high"), message
    assert "vm1-data" in message
    if volume_backups == "root-only":
        assert "vm1-root," not in message  # the root disk keeps its copy


def test_a_volume_backup_without_its_volume_snapshot_name_is_no_copy(tmp_path: Path) -> None:
    """A volumeBackup that names no VolumeSnapshot fails the restore ("VolumeSnapshotName
    missing", restore.go): no copy of its disk."""
    docs = _without_vm_snapshot_volumes(_docs(VM_SNAPSHOT))
    for entry in _of(docs, "VirtualMachineSnapshotContent")[0]["spec"]["volumeBackups"]:
        del entry["volumeSnapshotName"]
    status, severity, message = _stg(tmp_path, docs)
    assert (status, severity) == ("FAIL", "high"), message


def test_a_volume_backups_list_of_another_type_is_named_and_no_copy(tmp_path: Path) -> None:
    """``volumeBackups: junk`` backs up nothing and is named (never read as a copy)."""
    docs = _without_vm_snapshot_volumes(_docs(VM_SNAPSHOT))
    _of(docs, "VirtualMachineSnapshotContent")[0]["spec"]["volumeBackups"] = "junk"
    report = _complete(tmp_path, VM_SNAPSHOT, docs)
    finding = _finding(report, "RR-STG-001")
    assert (finding["status"], finding["severity"]) == ("FAIL", "high"), finding["message"]
    assert any(
        p["kind"] == "VirtualMachineSnapshotContent" and p["field"] == "spec.volumeBackups"
        for p in report["collection_problems"]
    )


def test_a_vm_snapshot_whose_content_backs_up_every_disk_stays_a_copy(tmp_path: Path) -> None:
    """The healthy counterpart: each disk has its volumeBackup and ready VolumeSnapshot, so the
    VM snapshot is their copy (inside the namespace: FAIL medium, as before)."""
    status, severity, message = _stg(tmp_path / "fixture", _docs(VM_SNAPSHOT))
    assert (status, severity) == ("FAIL", "medium"), message
    report = _complete(tmp_path / "card", VM_SNAPSHOT, _docs(VM_SNAPSHOT))
    rows = _finding(report, "RR-STG-001")["evidence"]["disks"]
    # its own VolumeSnapshot and the VM snapshot: two copies of each disk
    assert [r["copies"] for r in rows] == [2, 2], rows


# -- a snapshot of an earlier VM of the same name ------------------------------------


def _of_earlier_vm(docs: Docs, *, tpm: bool = False, efi: bool = True) -> None:
    """The VM was deleted and re-created (GitOps) after its snapshot: the snapshot's
    ``sourceUID`` is the earlier VM's, and the VM and its DataVolumes' PVCs are newer than the
    snapshot (so the VolumeSnapshots it left are no copies of them); the snapshotted VM kept
    its EFI (or TPM) state persistent or not."""
    _of(docs, "VirtualMachineSnapshot")[0]["status"]["sourceUID"] = "uid-of-an-earlier-vm1"
    for obj in _of(docs, "VirtualMachine") + _of(docs, "PersistentVolumeClaim"):
        obj["metadata"]["creationTimestamp"] = "2026-11-29T12:00:00Z"
    content = _of(docs, "VirtualMachineSnapshotContent")[0]
    domain = content["spec"]["source"]["virtualMachine"]["spec"]["template"]["spec"]["domain"]
    domain["firmware"]["bootloader"]["efi"]["persistent"] = efi
    if tpm:
        domain["devices"]["tpm"] = {"persistent": True}


@pytest.mark.parametrize(("tpm", "efi"), [(False, True), (True, False)])
def test_a_snapshot_of_an_earlier_vm_with_backend_storage_is_not_restorable(
    tmp_path: Path, tpm: bool, efi: bool
) -> None:
    """KubeVirt refuses to restore a VM snapshot onto an existing VM other than its source
    (``status.sourceUID``; restore.go ``sourceAndTargetAreDifferent``), and its admission
    webhook refuses a restore to another or a new VM when the snapshotted VM had persistent
    EFI or TPM state (admitters/vmrestore.go ``validateTargetVM``). The snapshot of an
    earlier VM of this name with such state can be restored nowhere: it counted as the
    disks' only copy (FAIL medium) instead of none (high)."""
    docs = _docs(VM_SNAPSHOT)
    _of_earlier_vm(docs, tpm=tpm, efi=efi)
    status, severity, message = _stg(tmp_path, docs)
    assert (status, severity) == ("FAIL", "high"), message
    assert "vm1-root" in message and "vm1-data" in message


def test_a_snapshot_of_an_earlier_vm_without_backend_storage_stays_a_copy(
    tmp_path: Path,
) -> None:
    """The healthy counterparts: without EFI or TPM state it can be restored to a new VM, so
    it stays the disks' copy (FAIL medium); and a snapshot whose ``sourceUID`` is this VM's,
    with persistent EFI, is one too."""
    docs = _docs(VM_SNAPSHOT)
    _of_earlier_vm(docs, efi=False)
    status, severity, message = _stg(tmp_path / "other", docs)
    assert (status, severity) == ("FAIL", "medium"), message
    docs = _docs(VM_SNAPSHOT)
    _of(docs, "VirtualMachineSnapshot")[0]["status"]["sourceUID"] = "uid-vm-app-vm1"
    status, severity, message = _stg(tmp_path / "same", docs)
    assert (status, severity) == ("FAIL", "medium"), message


def test_a_source_uid_of_another_type_is_named(tmp_path: Path) -> None:
    """``status.sourceUID: 42`` says of no VM that it was snapshotted: named, the snapshot
    unread (never read as this VM's)."""
    docs = _docs(VM_SNAPSHOT)
    _of(docs, "VirtualMachineSnapshot")[0]["status"]["sourceUID"] = 42
    report = _complete(tmp_path, VM_SNAPSHOT, docs)
    assert any(
        p["kind"] == "VirtualMachineSnapshot" and p["field"] == "status.sourceUID"
        for p in report["collection_problems"]
    )
    assert _finding(report, "RR-STG-001")["status"] != "PASS"


# -- a snapshot content without the VM definition ------------------------------------------


@pytest.mark.parametrize("source", ["absent", {}, {"virtualMachine": None}])
def test_a_vm_snapshot_whose_content_holds_no_vm_is_no_copy(tmp_path: Path, source: object) -> None:
    """A VirtualMachineRestore rebuilds the VM from the definition in its content's
    ``spec.source.virtualMachine`` and fails without one ("unexpected snapshot source",
    kubevirt restore.go). The disks' PVCs were recreated after the snapshot, so its own
    VolumeSnapshots are no copies of them and the VM snapshot is judged alone: it counted
    (FAIL medium) instead of no copy (high)."""
    docs = _docs(VM_SNAPSHOT)
    for pvc in _of(docs, "PersistentVolumeClaim"):
        pvc["metadata"]["creationTimestamp"] = "2026-11-29T12:00:00Z"
    content = _of(docs, "VirtualMachineSnapshotContent")[0]
    if source == "absent":
        del content["spec"]["source"]
    else:
        content["spec"]["source"] = source
    status, severity, message = _stg(tmp_path, docs)
    assert (status, severity) == ("FAIL", "high"), message


def test_a_vm_snapshot_of_pvcs_recreated_since_still_holds_its_vm(tmp_path: Path) -> None:
    """The healthy counterpart: with the VM definition in its content, the snapshot of the
    VM (its uid) restores its disks by volume name, however new the PVCs: a copy (medium)."""
    docs = _docs(VM_SNAPSHOT)
    for pvc in _of(docs, "PersistentVolumeClaim"):
        pvc["metadata"]["creationTimestamp"] = "2026-11-29T12:00:00Z"
    status, severity, message = _stg(tmp_path, docs)
    assert (status, severity) == ("FAIL", "medium"), message
