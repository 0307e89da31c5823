"""RR-STG-003 against the driver a restore needs (red team helper-17): a StorageClass
recreated with another provisioner still exists, but a CSI snapshot restores only through the
driver that cut it (https://kubernetes.io/docs/concepts/storage/volume-snapshots/).
"""

from __future__ import annotations

from pathlib import Path

from tests.test_evidence_gaps import _complete, _docs, _finding, _of, _without_vm_snapshot_volumes


def test_a_class_whose_provisioner_is_another_driver_cannot_restore_csi_snapshots(
    tmp_path: Path,
) -> None:
    """The StorageClass was recreated with another provisioner: the disk's CSI snapshots
    restore only through the driver that cut them, so the restored PVC stays Pending
    (RR-STG-003 was PASS because the class exists). A data-mover copy restores anywhere."""
    fixture = "RR-STG-003/pass.yaml"
    docs = _docs(fixture)
    classes = {c["metadata"]["name"]: c for c in _of(docs, "StorageClass")}
    pvc = next(p for p in _of(docs, "PersistentVolumeClaim") if p["metadata"]["name"] == "vm1-root")
    cls = classes[pvc["spec"]["storageClassName"]]
    cls["provisioner"] = "csi.trident.netapp.io"
    finding = _finding(_complete(tmp_path / "snap", fixture, docs), "RR-STG-003")
    assert finding["status"] == "FAIL"
    assert "CSI snapshots are of driver csi.example.com" in finding["message"]
    for b in _of(docs, "Backup"):
        b["spec"]["snapshotMoveData"] = True
    moved = _finding(_complete(tmp_path / "moved", fixture, docs), "RR-STG-003")
    assert moved["status"] != "FAIL"
    assert "CSI snapshots are of driver" not in moved["message"]


def test_a_restore_in_place_over_existing_pvcs_proves_no_data(tmp_path: Path) -> None:
    """Without a namespace mapping the drill restored into the VM's own namespace, where its
    PVCs already existed: Velero skips existing objects, so no disk data came back and the
    drill proves nothing (RR-RST-001 was PASS). Without the Restore's creation time, whether
    the PVCs were there before it cannot be told."""
    fixture = "RR-RST-001/pass.yaml"
    docs = _docs(fixture)
    restore = _of(docs, "Restore")[0]
    del restore["spec"]["namespaceMapping"]
    finding = _finding(_complete(tmp_path / "over", fixture, docs), "RR-RST-001")
    assert finding["status"] == "FAIL"
    assert "Velero skips existing objects" in str(finding["evidence"])
    del restore["metadata"]["creationTimestamp"]
    unknown = _finding(_complete(tmp_path / "unknown", fixture, docs), "RR-RST-001")
    assert unknown["status"] != "PASS"
    assert "cannot be told" in str(unknown["evidence"])


def test_a_snapshot_of_an_earlier_pvc_of_the_same_name_is_no_copy(tmp_path: Path) -> None:
    """A ready VolumeSnapshot names the PVC by name only: one cut before the PVC existed, or
    whose content is of another volume, is of a PVC deleted and recreated since (red team
    helper-18: it made RR-STG-001 PASS as the disk's copy)."""
    fixture = "RR-STG-001/pass-retained-volume-snapshots.yaml"
    docs = _docs(fixture)
    assert _finding(_complete(tmp_path / "base", fixture, docs), "RR-STG-001")["status"] == "PASS"
    snaps = _of(docs, "VolumeSnapshot")
    for s in snaps:
        s["status"]["creationTime"] = "2025-12-01T10:00:00Z"  # before the PVCs (2026-01-10)
    older = _finding(_complete(tmp_path / "older", fixture, docs), "RR-STG-001")
    assert older["status"] == "FAIL"
    for s in snaps:
        s["status"]["creationTime"] = "2026-11-29T10:00:00Z"
    for c in _of(docs, "VolumeSnapshotContent"):
        if c["spec"].get("volumeSnapshotRef", {}).get("namespace") == "app":
            c["spec"]["source"] = {"volumeHandle": "h-an-earlier-volume"}
    other = _finding(_complete(tmp_path / "other", fixture, docs), "RR-STG-001")
    assert other["status"] == "FAIL"


def test_a_vm_snapshot_whose_volume_snapshot_is_gone_is_no_copy(tmp_path: Path) -> None:
    """A VirtualMachineSnapshot restores each disk from the VolumeSnapshot its content names
    (``spec.volumeBackups[].volumeSnapshotName``); with those deleted it restores nothing,
    though it says readyToUse until KubeVirt reconciles it (red team helper-18: RR-STG-001
    still counted it as the disks' in-namespace copy)."""
    fixture = "RR-STG-001/fail-only-namespace-bound-vm-snapshot.yaml"
    docs = _without_vm_snapshot_volumes(_docs(fixture))
    content = _of(docs, "VirtualMachineSnapshotContent")[0]
    content["spec"]["volumeBackups"] = [
        {
            "volumeName": disk,
            "persistentVolumeClaim": {"metadata": {"name": f"vm1-{disk}"}},
            "volumeSnapshotName": f"vmsnapshot-vm1-volume-{disk}",
        }
        for disk in ("root", "data")
    ]
    snapshots = [
        {
            "apiVersion": "snapshot.storage.k8s.io/v1",
            "kind": "VolumeSnapshot",
            "metadata": {"name": f"vmsnapshot-vm1-volume-{disk}", "namespace": "app"},
            "spec": {"source": {"persistentVolumeClaimName": f"vm1-{disk}"}},
            "status": {
                "readyToUse": True,
                "creationTime": "2026-11-29T10:00:00Z",
                # a ready snapshot is bound to its content (external-snapshotter)
                "boundVolumeSnapshotContentName": f"snapcontent-vm1-{disk}",
            },
        }
        for disk in ("root", "data")
    ] + [
        {
            "apiVersion": "snapshot.storage.k8s.io/v1",
            "kind": "VolumeSnapshotContent",
            "metadata": {"name": f"snapcontent-vm1-{disk}"},
            "spec": {
                "deletionPolicy": "Delete",
                "driver": "csi.example.com",
                "source": {"volumeHandle": f"h-vm1-{disk}"},
                "volumeSnapshotRef": {"name": f"vmsnapshot-vm1-volume-{disk}", "namespace": "app"},
            },
            "status": {"readyToUse": True, "snapshotHandle": f"snap-vm1-{disk}"},
        }
        for disk in ("root", "data")
    ]
    kept = _finding(_complete(tmp_path / "kept", fixture, docs + snapshots), "RR-STG-001")
    assert (kept["status"], kept["severity"]) == ("FAIL", "medium")  # a copy, in-namespace
    gone = _finding(_complete(tmp_path / "gone", fixture, docs), "RR-STG-001")
    assert (gone["status"], gone["severity"]) == ("FAIL", "high")  # no copy at all
