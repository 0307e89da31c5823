"""Red-team round rt9: variants of the shared bug cases (kinds 13-24) that a real cluster can
produce, each held to the verdict its evidence allows.

Each test takes a fixture of the check catalog, changes one thing, and asserts the finding
that must follow (never a verdict better than the evidence).
"""

from __future__ import annotations

from pathlib import Path

from tests.test_evidence_gaps import _complete, _docs, _finding, _of


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
            {
                "apiVersion": "snapshot.storage.k8s.io/v1",
                "kind": "VolumeSnapshot",
                "metadata": {
                    "name": f"velero-{pvc}-x",
                    "namespace": "app",
                    "labels": {"velero.io/backup-name": name},
                },
                "spec": {"source": {"persistentVolumeClaimName": pvc}},
                "status": {
                    "readyToUse": True,
                    "boundVolumeSnapshotContentName": content["metadata"]["name"],
                },
            }
        )
    finding = _finding(_complete(tmp_path, fixture, docs), "RR-BKP-004")
    assert finding["status"] == "FAIL", finding["message"]
    assert "snapshotHandle" in finding["message"]
