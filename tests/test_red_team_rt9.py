"""Red-team round rt9: variants of the shared bug cases (kinds 13-24) that a real cluster can
produce, each held to the verdict its evidence allows.

Each test takes a fixture of the check catalog, changes one thing, and asserts the finding
that must follow (never a verdict better than the evidence).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.test_evidence_gaps import (
    _backup_snapshot,
    _complete,
    _docs,
    _finding,
    _of,
    _without_vm_snapshot_volumes,
)

Docs = list[dict[str, Any]]


def _vm1(report: dict[str, object]) -> dict[str, object]:
    vms = report["vms"]
    assert isinstance(vms, list)
    vm: dict[str, object] = next(v for v in vms if v["name"] == "vm1")
    return vm


def test_a_backup_content_without_a_snapshot_handle_is_no_copy(tmp_path: Path) -> None:
    """Velero restores a CSI snapshot by building a static VolumeSnapshotContent from the
    backed-up content's ``status.snapshotHandle`` and fails without one (velero
    pkg/restore/actions/csi/volumesnapshotcontent_action.go). Ready contents labelled with
    the Backup but naming no snapshot, with the Backup's counters at 0 (bug case 13's
    zero-volume Backups), counted as the snapshots of every PVC: READY."""
    fixture = "RR-BKP-004/pass.yaml"
    docs = _docs(fixture)
    for backup in _of(docs, "Backup"):
        for key in list(backup["status"]):
            if key.startswith(("csiVolumeSnapshots", "backupItemOperations")):
                del backup["status"][key]
    for content in _of(docs, "VolumeSnapshotContent"):
        content["status"].pop("snapshotHandle", None)
    report = _complete(tmp_path, fixture, docs)
    finding = _finding(report, "RR-BKP-004")
    assert finding["status"] == "FAIL", finding["message"]
    assert "snapshotHandle" in finding["message"]
    assert _vm1(report)["readiness"] == "NOT_READY"


def test_a_backup_snapshot_whose_content_names_no_snapshot_is_no_copy(tmp_path: Path) -> None:
    """The same through the Backup's own VolumeSnapshot (per-item evidence): Velero copies
    the content's ``status.snapshotHandle`` onto the snapshot it backs up (velero
    pkg/backup/actions/csi/volumesnapshot_action.go); without it the restore fails."""
    fixture = "RR-BKP-004/pass.yaml"
    docs = _docs(fixture)
    newest = max(_of(docs, "Backup"), key=lambda b: b["metadata"]["name"])
    name = newest["metadata"]["name"]
    contents = [
        c
        for c in _of(docs, "VolumeSnapshotContent")
        if c["metadata"]["labels"]["velero.io/backup-name"] == name
    ]
    for i, pvc in enumerate(("vm1-root", "vm1-data")):
        content = contents[i]
        content["status"].pop("snapshotHandle", None)
        docs.append(
            _backup_snapshot(pvc, name, boundVolumeSnapshotContentName=content["metadata"]["name"])
        )
    finding = _finding(_complete(tmp_path, fixture, docs), "RR-BKP-004")
    assert finding["status"] == "FAIL", finding["message"]
    assert "snapshotHandle" in finding["message"]


def _vm_snapshot_with_volume_snapshots(content_status: dict[str, object] | None) -> Docs:
    """The namespace-bound VM snapshot fixture, its content naming a VolumeSnapshot per disk,
    each bound to a VolumeSnapshotContent of ``content_status`` (None: no content exported)."""
    docs = _without_vm_snapshot_volumes(_docs(VM_SNAPSHOT))
    vm_content = _of(docs, "VirtualMachineSnapshotContent")[0]
    vm_content["spec"]["volumeBackups"] = []
    for disk, pvc in (("root", "vm1-root"), ("data", "vm1-data")):
        name = f"vmsnapshot-x-volume-{disk}"
        vm_content["spec"]["volumeBackups"].append(
            {
                "volumeName": disk,
                "persistentVolumeClaim": {"metadata": {"name": pvc}},
                "volumeSnapshotName": name,
            }
        )
        docs.append(
            {
                "apiVersion": "snapshot.storage.k8s.io/v1",
                "kind": "VolumeSnapshot",
                "metadata": {
                    "name": name,
                    "namespace": "app",
                    "creationTimestamp": "2026-11-29T10:00:01Z",
                },
                "spec": {"source": {"persistentVolumeClaimName": pvc}},
                "status": {
                    "readyToUse": True,
                    "boundVolumeSnapshotContentName": f"vsc-{disk}",
                    "creationTime": "2026-11-29T10:00:01Z",
                },
            }
        )
        if content_status is not None:
            docs.append(
                {
                    "apiVersion": "snapshot.storage.k8s.io/v1",
                    "kind": "VolumeSnapshotContent",
                    "metadata": {"name": f"vsc-{disk}"},
                    "spec": {
                        "deletionPolicy": "Delete",
                        "driver": "csi.example.com",
                        # the claim's own volume (its PV's csi.volumeHandle): a content of
                        # another volume is no copy of the disk (round s42)
                        "source": {"volumeHandle": f"h-{pvc}"},
                        "volumeSnapshotRef": {"name": name, "namespace": "app"},
                    },
                    "status": dict(content_status),
                }
            )
    return docs


VM_SNAPSHOT = "RR-STG-001/fail-only-namespace-bound-vm-snapshot.yaml"


@pytest.mark.parametrize(
    ("content_status", "severity"),
    [
        ({"readyToUse": True, "snapshotHandle": "snap-1"}, "medium"),
        # ready without a snapshotHandle: the provisioner has no snapshot to restore from
        # ("snapshot handle ... is not available", external-provisioner; round a40)
        ({"readyToUse": True}, "high"),
        # the driver failed the snapshot: no copy (red team: counted, medium)
        ({"readyToUse": False}, "high"),
        ({"readyToUse": True, "error": {"message": "failed to take snapshot"}}, "high"),
        # bound to a content that is not there, all contents read
        (None, "high"),
    ],
)
def test_a_vm_snapshot_whose_volume_snapshot_content_failed_is_no_copy(
    tmp_path: Path, content_status: dict[str, object] | None, severity: str
) -> None:
    """A VirtualMachineSnapshot restores each disk from its VolumeSnapshot, and the PVC is
    provisioned through that snapshot's content: a content that failed, is not ready or is
    gone holds nothing to restore (bug case 18's kind: a failed VM snapshot is no copy). It
    counted as the disk's copy, so RR-STG-001 said medium (namespace-bound copy) instead of
    high (no copy)."""
    docs = _vm_snapshot_with_volume_snapshots(content_status)
    finding = _finding(_complete(tmp_path, VM_SNAPSHOT, docs), "RR-STG-001")
    assert (finding["status"], finding["severity"]) == ("FAIL", severity), finding["message"]


def test_a_content_snapshot_handle_of_another_type_is_named(tmp_path: Path) -> None:
    """A ``status.snapshotHandle`` that is no string names no snapshot (no copy, as a missing
    one) and is named (mutation bench, seed 9911: the change went unnamed)."""
    fixture = "RR-BKP-004/pass.yaml"
    docs = _docs(fixture)
    for content in _of(docs, "VolumeSnapshotContent"):
        content["status"]["snapshotHandle"] = 42
    report = _complete(tmp_path, fixture, docs)
    assert _finding(report, "RR-BKP-004")["status"] != "PASS"
    assert any(
        p["kind"] == "VolumeSnapshotContent"
        and p["field"] == "status.snapshotHandle"
        and "not a string" in p["reason"]
        for p in report["collection_problems"]
    )
