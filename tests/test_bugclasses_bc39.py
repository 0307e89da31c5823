"""Bug classes bc39: restore failures a verdict was better than.

1. A DataVolume with no ``status.phase`` read as a finished one: RR-BKP-004 passed on the
   Backup's counters. CDI writes the phase with omitempty, so none is phase "" (not yet
   reconciled) or a status the export stripped; either way it cannot be shown Succeeded, and
   the kubevirt plugin marks the PVC of a DataVolume that is not Succeeded in progress and
   restores it unfilled (kubevirt-velero-plugin pkg/plugin/dv_backup_item_action.go
   ``handlePVC``, pvc_restore_item_action.go). The capture is now unknown (ERROR).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tests.test_check_fixtures import audit_fixture
from tests.test_evidence_gaps import FIXTURES, _docs, _finding

Docs = list[dict[str, Any]]

#: vm1 with DataVolume volumes vm1-root and vm1-data, captured by Completed DataUploads.
DATA_MOVER = "RR-BKP-004/pass-data-mover.yaml"


def _audit(tmp_path: Path, docs: Docs, fixture: str = DATA_MOVER) -> dict[str, Any]:
    """Audit ``docs`` as the catalog fixture ``fixture`` is audited (its header kept: every
    kind read in full but those it marks unavailable)."""
    head = [ln for ln in (FIXTURES / fixture).read_text().splitlines() if ln.startswith("#")]
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "c.yaml"
    path.write_text("\n".join(head) + "\n" + yaml.safe_dump_all(docs))
    return audit_fixture(path)


def _datavolume(name: str, status: dict[str, Any] | None) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "apiVersion": "cdi.kubevirt.io/v1beta1",
        "kind": "DataVolume",
        "metadata": {
            "name": name,
            "namespace": "app",
            "uid": f"uid-dv-{name}",
            "creationTimestamp": "2026-01-10T09:59:30Z",
        },
        "spec": {
            "source": {"blank": {}},
            "storage": {"resources": {"requests": {"storage": "20Gi"}}},
        },
    }
    if status is not None:
        doc["status"] = status
    return doc


def _with_root_dv(status: dict[str, Any] | None) -> Docs:
    docs = _docs(DATA_MOVER)
    docs.append(_datavolume("vm1-root", status))
    docs.append(_datavolume("vm1-data", {"phase": "Succeeded", "progress": "100.0%"}))
    return docs


def test_succeeded_datavolumes_keep_the_pass(tmp_path: Path) -> None:
    report = _audit(tmp_path, _with_root_dv({"phase": "Succeeded", "progress": "100.0%"}))
    assert _finding(report, "RR-BKP-004")["status"] == "PASS"


def test_a_datavolume_without_a_phase_is_not_evidenced(tmp_path: Path) -> None:
    # a status without its phase is named as a lost field (fz39); no status at all is a
    # DataVolume not yet reconciled (bc39): both unknown, never the counters' PASS
    for status, said in (
        ({"claimName": "vm1-root"}, "DataVolume vm1-root's status.phase is missing"),
        (None, "DataVolume vm1-root has no status.phase"),
    ):
        report = _audit(tmp_path / str(bool(status)), _with_root_dv(status))
        f = _finding(report, "RR-BKP-004")
        assert (f["status"], f["severity"]) == ("ERROR", "high")
        assert said in f["message"]
        entry = next(v for v in report["vms"] if v["name"] == "vm1")
        assert entry["readiness"] == "UNKNOWN"


def test_a_datavolume_in_progress_still_fails(tmp_path: Path) -> None:
    report = _audit(tmp_path, _with_root_dv({"phase": "ImportInProgress"}))
    f = _finding(report, "RR-BKP-004")
    assert (f["status"], f["severity"]) == ("FAIL", "high")


# 2. A CSI snapshot kept inside the volume it is of (Longhorn's ``type: snap`` class, handle
#    ``snap://``) read as a copy: the Longhorn snapshot's "lifecycle is bound to its owner
#    volume", so once a Delete-reclaim disk is gone a PVC restored from it fails
#    (https://github.com/longhorn/longhorn/issues/4083; Longhorn docs, "CSI VolumeSnapshot
#    Associated with Longhorn Snapshot"). A Velero CSI-snapshot backup of such a disk, and a
#    VolumeSnapshot or VirtualMachineSnapshot of it, are no copy; ``type: bak`` (the default)
#    is a Longhorn backup in its off-cluster backupstore.

LONGHORN = "driver.longhorn.io"
CSI_BLOCK = "RR-BKP-004/pass-csi-snapshots-block-disks.yaml"
RETAINED_SNAPSHOTS = "RR-STG-001/pass-retained-volume-snapshots.yaml"
VM_SNAPSHOT = "RR-STG-001/fail-only-namespace-bound-vm-snapshot.yaml"


def _on_longhorn(docs: Docs, snap_type: str | None, handle_prefix: str | None) -> Docs:
    """Every csi.example.com object moved to Longhorn's driver; the snapshot class given
    ``parameters.type: snap_type`` (none when None) and every content's handle
    ``handle_prefix`` + its old handle, or its name (unchanged when None)."""
    for d in docs:
        kind = d["kind"]
        if kind == "StorageClass" and d.get("provisioner") == "csi.example.com":
            d["provisioner"] = LONGHORN
        elif kind == "PersistentVolume" and "csi" in d["spec"]:
            d["spec"]["csi"]["driver"] = LONGHORN
        elif kind == "VolumeSnapshotClass":
            d["driver"] = LONGHORN
            if snap_type is not None:
                d["parameters"] = {"type": snap_type}
        elif kind == "VolumeSnapshotContent":
            d["spec"]["driver"] = LONGHORN
            if handle_prefix is not None and "status" in d:
                handle = d["status"].get("snapshotHandle") or d["metadata"]["name"]
                d["status"]["snapshotHandle"] = f"{handle_prefix}{handle}"
    return docs


def _readiness(report: dict[str, Any]) -> str:
    return str(next(v for v in report["vms"] if v["name"] == "vm1")["readiness"])


def test_a_longhorn_backup_class_keeps_the_pass(tmp_path: Path) -> None:
    for snap_type, prefix in ((None, "bak://"), ("bak", "bak://")):
        docs = _on_longhorn(_docs(CSI_BLOCK), snap_type, prefix)
        report = _audit(tmp_path / str(snap_type), docs, CSI_BLOCK)
        assert _finding(report, "RR-BKP-004")["status"] == "PASS"
        assert _readiness(report) == "READY"


def test_a_backup_whose_snapshots_stay_inside_the_volume_does_not_hold_the_disk(
    tmp_path: Path,
) -> None:
    """The class Velero selects says ``type: snap`` (its contents name no volume of vm1)."""
    report = _audit(tmp_path, _on_longhorn(_docs(CSI_BLOCK), "snap", None), CSI_BLOCK)
    f = _finding(report, "RR-BKP-004")
    assert (f["status"], f["severity"]) == ("FAIL", "high")
    assert "parameters.type: snap" in f["message"]
    assert "reclaim policy Delete" in f["message"]
    assert _finding(report, "RR-STG-001")["status"] == "FAIL"
    assert _readiness(report) == "NOT_READY"


def test_the_backups_own_content_handle_decides(tmp_path: Path) -> None:
    """The Backup's content of the disk's volume says ``snap://`` though the class now says
    nothing: observed, it decides."""
    docs = _on_longhorn(_docs(CSI_BLOCK), None, None)
    contents = [d for d in docs if d["kind"] == "VolumeSnapshotContent"]
    for i, (c, pvc) in enumerate(zip(contents, ["vm1-root", "vm1-data"] * 2, strict=True)):
        c["spec"]["source"] = {"volumeHandle": f"h-{pvc}"}
        c["spec"]["volumeSnapshotRef"] = {"name": f"velero-{pvc}-ab{i}cd", "namespace": "app"}
        c["status"]["snapshotHandle"] = f"snap://pvc-{pvc}/snapshot-{i}"
    report = _audit(tmp_path, docs, CSI_BLOCK)
    f = _finding(report, "RR-BKP-004")
    assert (f["status"], f["severity"]) == ("FAIL", "high")
    assert "snap://pvc-vm1-" in f["message"]


def test_a_retained_volume_keeps_its_inside_snapshots(tmp_path: Path) -> None:
    docs = _on_longhorn(_docs(CSI_BLOCK), "snap", None)
    for d in docs:
        if d["kind"] == "PersistentVolume":
            d["spec"]["persistentVolumeReclaimPolicy"] = "Retain"
    report = _audit(tmp_path, docs, CSI_BLOCK)
    assert _finding(report, "RR-BKP-004")["status"] == "PASS"


def test_volume_snapshots_kept_inside_the_volume_are_no_copy(tmp_path: Path) -> None:
    ok = _audit(tmp_path / "bak", _on_longhorn(_docs(RETAINED_SNAPSHOTS), None, "bak://"))
    assert _finding(ok, "RR-STG-001", "vm1")["status"] == "PASS"
    docs = _on_longhorn(_docs(RETAINED_SNAPSHOTS), None, "snap://")
    report = _audit(tmp_path / "snap", docs, RETAINED_SNAPSHOTS)
    f = _finding(report, "RR-STG-001")
    assert (f["status"], f["severity"]) == ("FAIL", "high")


def test_a_vm_snapshot_kept_inside_the_volume_is_no_copy(tmp_path: Path) -> None:
    """Namespace-bound, the VM snapshot was a medium finding; inside the volume it is none."""
    before = _audit(tmp_path / "before", _docs(VM_SNAPSHOT), VM_SNAPSHOT)
    assert (
        _finding(before, "RR-STG-001")["status"],
        _finding(before, "RR-STG-001")["severity"],
    ) == (
        "FAIL",
        "medium",
    )
    docs = _on_longhorn(_docs(VM_SNAPSHOT), None, "snap://")
    report = _audit(tmp_path / "snap", docs, VM_SNAPSHOT)
    f = _finding(report, "RR-STG-001")
    assert (f["status"], f["severity"]) == ("FAIL", "high")
