"""Red-team round rt11: KubeVirt/CDI-side variants of the shared bug cases (kinds 18, 21, 23
and 24) that a real cluster can produce, each held to the verdict its evidence allows.

Each test takes a fixture of the check catalog, changes one thing, and asserts the finding
that must follow: never a verdict better than the evidence, never a false alarm on a
healthy VM.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.test_evidence_gaps import _backup_snapshot, _complete, _docs, _finding, _of
from tests.test_red_team_rt9 import _vm1

Docs = list[dict[str, Any]]


def _node_local_root(docs: Docs, volume_type: str) -> None:
    """The root disk's PV becomes a node-local ``hostPath`` or ``local`` volume (no CSI)."""
    pv = next(
        p for p in _of(docs, "PersistentVolume") if p["metadata"]["name"] == "pv-app-vm1-root"
    )
    del pv["spec"]["csi"]
    pv["spec"][volume_type] = {"path": "/var/lib/vmdisks/vm1-root"}


def test_a_pvc_on_a_hostpath_pv_is_never_natively_snapshotted(tmp_path: Path) -> None:
    """A PVC bound to a hostPath PersistentVolume has no CSI driver, and no Velero volume
    snapshotter returns a volume ID for it: Velero skips it ("no applicable volumesnapshotter
    found", velero pkg/backup/item_backupper.go) and the Backup completes. The auditor took
    every non-CSI PV for a native snapshot Velero attempted, so the disk was only "not
    evidenced" (UNKNOWN) instead of lost (bug case 24 variant: a PVC backed by node-local
    storage)."""
    fixture = "RR-BKP-004/pass.yaml"
    docs = _docs(fixture)
    _node_local_root(docs, "hostPath")
    report = _complete(tmp_path, fixture, docs)
    finding = _finding(report, "RR-BKP-004")
    assert finding["status"] == "FAIL", finding["message"]
    assert "hostPath PersistentVolume" in finding["message"]
    assert _vm1(report)["readiness"] == "NOT_READY"


def test_a_pvc_on_a_local_pv_is_never_natively_snapshotted(tmp_path: Path) -> None:
    """The same for a ``local`` PersistentVolume (a disk of one node)."""
    fixture = "RR-BKP-004/pass.yaml"
    docs = _docs(fixture)
    _node_local_root(docs, "local")
    finding = _finding(_complete(tmp_path, fixture, docs), "RR-BKP-004")
    assert finding["status"] == "FAIL", finding["message"]
    assert "local PersistentVolume" in finding["message"]


def test_file_system_backup_skips_a_pvc_on_a_hostpath_pv(tmp_path: Path) -> None:
    """Velero's file-system backup skips "a persistent volume claim on a hostPath persistent
    volume" (velero pkg/podvolume/backupper.go isHostPathVolume): under
    defaultVolumesToFsBackup, with no PodVolumeBackup naming it, the disk is lost, not merely
    unevidenced."""
    fixture = "RR-BKP-004/pass-fs-backup-podvolumebackups.yaml"
    docs = [
        d
        for d in _docs(fixture)
        if not (d["kind"] == "PodVolumeBackup" and d["spec"]["volume"] == "vm1-root")
    ]
    _node_local_root(docs, "hostPath")
    finding = _finding(_complete(tmp_path, fixture, docs), "RR-BKP-004")
    assert finding["status"] == "FAIL", finding["message"]
    assert "isHostPathVolume" in finding["message"]


def _vmi_status_hotplug(docs: Docs, name: str, claim: str, phase: str) -> dict[str, Any]:
    vmi = _of(docs, "VirtualMachineInstance")[0]
    vmi.setdefault("status", {}).setdefault("volumeStatus", []).append(
        {
            "name": name,
            "hotplugVolume": {"attachPodName": "hp-volume-x1", "attachPodUID": "uid-hp-x1"},
            "persistentVolumeClaimInfo": {"claimName": claim, "volumeMode": "Block"},
            "phase": phase,
            "reason": "VolumeDetaching" if phase == "Detaching" else "VolumeReady",
        }
    )
    return vmi


def test_a_hotplug_volume_being_unplugged_is_no_runtime_only_volume(tmp_path: Path) -> None:
    """``virtctl removevolume`` takes the volume out of the VMI's spec.volumes at once; KubeVirt
    keeps its volumeStatus entry (phase Detaching) "until there is no associated pod"
    (kubevirt pkg/virt-controller/watch/vmi/storage.go). The VM spec rightly no longer lists
    it: RR-DSK-002 failed (AT_RISK) on a healthy VM (bug case 23 variant)."""
    fixture = "RR-DSK-002/pass.yaml"
    docs = _docs(fixture)
    _vmi_status_hotplug(docs, "scratch-old", "scratch-old", "Detaching")
    finding = _finding(_complete(tmp_path, fixture, docs), "RR-DSK-002")
    assert finding["status"] == "PASS", finding["message"]


def test_a_utility_volume_is_no_runtime_only_guest_volume(tmp_path: Path) -> None:
    """A VMI ``spec.utilityVolumes`` entry (KubeVirt 1.8: a memory-dump or backup output PVC
    hot-plugged into virt-launcher "without having a matching disk in the domain",
    kubevirt staging/src/kubevirt.io/api/core/v1/types.go) gets a hotplug volumeStatus entry
    but holds no guest data: no RR-DSK-002 FAIL."""
    fixture = "RR-DSK-002/pass.yaml"
    docs = _docs(fixture)
    vmi = _vmi_status_hotplug(docs, "backup-output", "vm1-backup-scratch", "Ready")
    vmi["spec"]["utilityVolumes"] = [
        {"name": "backup-output", "claimName": "vm1-backup-scratch", "type": "Backup"}
    ]
    finding = _finding(_complete(tmp_path, fixture, docs), "RR-DSK-002")
    assert finding["status"] == "PASS", finding["message"]


def test_a_hotplug_volume_only_in_the_vmi_spec_still_fails(tmp_path: Path) -> None:
    """The fault of bug case 23 itself, without a volumeStatus entry yet (attach pending):
    the VMI runs with a volume its VM spec does not list."""
    fixture = "RR-DSK-002/pass.yaml"
    docs = _docs(fixture)
    vmi = _of(docs, "VirtualMachineInstance")[0]
    vmi["spec"]["volumes"].append(
        {"name": "scratch", "persistentVolumeClaim": {"claimName": "scratch", "hotpluggable": True}}
    )
    finding = _finding(_complete(tmp_path, fixture, docs), "RR-DSK-002")
    assert finding["status"] == "FAIL", finding["message"]
    assert "scratch" in finding["message"]


def _owned_by_vm_snapshot_content(docs: Docs, content: str) -> None:
    for snapshot in _of(docs, "VolumeSnapshot"):
        snapshot["metadata"]["ownerReferences"] = [
            {
                "apiVersion": "snapshot.kubevirt.io/v1beta1",
                "kind": "VirtualMachineSnapshotContent",
                "name": content,
                "uid": "uid-vmsc-1",
                "controller": True,
            }
        ]


def test_a_volume_snapshot_whose_vm_snapshot_content_is_gone_is_no_copy(
    tmp_path: Path,
) -> None:
    """KubeVirt makes each VolumeSnapshot of a VM snapshot a dependent of its
    VirtualMachineSnapshotContent (kubevirt pkg/storage/snapshot/snapshot.go
    createVolumeSnapshot) and deletes the content of a failed snapshot: with the owner gone
    from a complete list, the garbage collector deletes the VolumeSnapshot. A failed VM
    snapshot's leftover VolumeSnapshots counted as the disks' copies (bug case 18 variant):
    FAIL medium instead of "no copy" (high)."""
    fixture = "RR-STG-001/fail-delete-policy-volume-snapshots-die-with-namespace.yaml"
    docs = _docs(fixture)
    _owned_by_vm_snapshot_content(docs, "vmsnapshot-content-gone")
    finding = _finding(_complete(tmp_path, fixture, docs), "RR-STG-001")
    assert finding["status"] == "FAIL", finding["message"]
    assert finding["severity"] == "high", finding["message"]


def test_a_volume_snapshot_whose_vm_snapshot_content_exists_is_still_a_copy(
    tmp_path: Path,
) -> None:
    """The healthy counterpart: its content is there, so the VolumeSnapshots stay copies
    (inside the namespace: FAIL medium, as before)."""
    fixture = "RR-STG-001/fail-delete-policy-volume-snapshots-die-with-namespace.yaml"
    docs = _docs(fixture)
    _owned_by_vm_snapshot_content(docs, "vmsnapshot-content-1")
    docs.append(
        {
            "apiVersion": "snapshot.kubevirt.io/v1beta1",
            "kind": "VirtualMachineSnapshotContent",
            "metadata": {"name": "vmsnapshot-content-1", "namespace": "app", "uid": "uid-vmsc-1"},
            "spec": {"virtualMachineSnapshotName": "snap-1", "volumeBackups": []},
            "status": {"readyToUse": True},
        }
    )
    finding = _finding(_complete(tmp_path, fixture, docs), "RR-STG-001")
    assert finding["status"] == "FAIL", finding["message"]
    assert finding["severity"] == "medium", finding["message"]


def test_file_system_backup_still_copies_a_pvc_on_a_local_pv(tmp_path: Path) -> None:
    """The healthy counterpart: Velero's file-system backup reads a ``local`` PV through the
    pod's mount (only hostPath is skipped, velero pkg/podvolume/backupper.go), so a Completed
    PodVolumeBackup of it is a copy and the VM stays READY."""
    fixture = "RR-BKP-004/pass-fs-backup-podvolumebackups.yaml"
    docs = _docs(fixture)
    _node_local_root(docs, "local")
    report = _complete(tmp_path, fixture, docs)
    finding = _finding(report, "RR-BKP-004")
    assert finding["status"] == "PASS", finding["message"]


def test_a_ready_volume_snapshot_bound_to_no_content_is_no_copy(tmp_path: Path) -> None:
    """A VolumeSnapshot without ``status.boundVolumeSnapshotContentName`` "has not been
    successfully bound to a VolumeSnapshotContent object yet" (external-snapshotter
    client/apis/volumesnapshot/v1/types.go), and a PVC is restored from it through that
    content: there is nothing to restore from, whatever ``readyToUse`` says. A failed VM
    snapshot's VolumeSnapshot marked ready but bound to nothing counted as the disks' copy
    (bug case 18 variant): FAIL medium instead of "no copy" (high)."""
    fixture = "RR-STG-001/fail-delete-policy-volume-snapshots-die-with-namespace.yaml"
    docs = _docs(fixture)
    for snapshot in _of(docs, "VolumeSnapshot"):
        del snapshot["status"]["boundVolumeSnapshotContentName"]
    finding = _finding(_complete(tmp_path, fixture, docs), "RR-STG-001")
    assert finding["status"] == "FAIL", finding["message"]
    assert finding["severity"] == "high", finding["message"]


def test_a_backup_snapshot_bound_to_no_content_evidences_no_capture(tmp_path: Path) -> None:
    """Per-item evidence: a VolumeSnapshot labelled with the Backup, ready but bound to no
    content, is one Velero's backup cannot read ("invalid snapshot info in volume
    snapshot", velero pkg/util/csi/volume_snapshot.go
    GetVolumeSnapshotContentForVolumeSnapshot): it evidences no copy, so with counters that
    prove nothing the PVC is not evidenced (ERROR), never captured."""
    fixture = "RR-BKP-004/pass.yaml"
    docs = _docs(fixture)
    newest = max(_of(docs, "Backup"), key=lambda b: b["metadata"]["name"])
    name = newest["metadata"]["name"]
    for backup in _of(docs, "Backup"):
        for key in list(backup["status"]):
            if key.startswith(("csiVolumeSnapshots", "backupItemOperations")):
                del backup["status"][key]
    docs = [d for d in docs if d["kind"] != "VolumeSnapshotContent"]
    for pvc in [p["metadata"]["name"] for p in _of(docs, "PersistentVolumeClaim")]:
        docs.append(_backup_snapshot(pvc, name))
    finding = _finding(_complete(tmp_path, fixture, docs), "RR-BKP-004")
    assert finding["status"] != "PASS", finding["message"]
    assert "bound to no VolumeSnapshotContent" in finding["message"]
