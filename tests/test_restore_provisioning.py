"""RR-STG-003 against the driver a restore needs (red team helper-17): a StorageClass
recreated with another provisioner still exists, but a CSI snapshot restores only through the
driver that cut it (https://kubernetes.io/docs/concepts/storage/volume-snapshots/).
"""

from __future__ import annotations

from pathlib import Path

from tests.test_evidence_gaps import _complete, _docs, _finding, _of


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
