"""Decoding Velero's per-backup files (shapes from Velero's Go types, see decode.py)."""

from __future__ import annotations

from auditor.sources.base import StoredVolume
from auditor.sources.bucket.decode import (
    VolumeLookup,
    group_resource,
    resources_from_list,
    result_counts,
    volumes_from_method_files,
    volumes_from_volumeinfo,
)
from auditor.sources.bucket.layout import VM_MEMBER, BackupKeys


def test_resource_list_keys_become_group_resources() -> None:
    raw = {
        "kubevirt.io/v1/VirtualMachine": ["apps/db01"],
        "v1/PersistentVolumeClaim": ["apps/db01-root"],
        "k8s.cni.cncf.io/v1/NetworkAttachmentDefinition": ["apps/vlan10"],
        "apps/v1/ControllerRevision": ["apps/db01-u1-1"],
        "v1/Namespace": ["apps"],
        "example.com/v1/Widget": ["apps/w"],
    }
    assert resources_from_list(raw) == {
        ("virtualmachines.kubevirt.io", "apps", "db01"),
        ("persistentvolumeclaims", "apps", "db01-root"),
        ("network-attachment-definitions.k8s.cni.cncf.io", "apps", "vlan10"),
        ("controllerrevisions.apps", "apps", "db01-u1-1"),
        ("namespaces", "", "apps"),
        ("widgets.example.com", "apps", "w"),
    }
    assert resources_from_list(["not", "a", "map"]) is None
    assert group_resource("cdi.kubevirt.io/v1beta1/DataVolume") == "datavolumes.cdi.kubevirt.io"


def test_volume_info_methods_outcomes_and_sizes() -> None:
    raw = [
        {"pvcName": "a", "pvcNamespace": "ns", "backupMethod": "CSISnapshot",
         "snapshotDataMoved": True, "result": "succeeded",
         "snapshotDataMovementInfo": {"size": 5368709120, "Phase": "Completed"}},
        {"pvcName": "b", "pvcNamespace": "ns", "backupMethod": "PodVolumeBackup",
         "result": "failed", "pvbInfo": {"size": 10}},
        {"pvcName": "c", "pvcNamespace": "ns", "skipped": True,
         "skippedReason": "no applicable method"},
        {"pvcName": "d", "pvcNamespace": "ns", "backupMethod": "CSISnapshot",
         "csiSnapshotInfo": {"size": 7, "ReadyToUse": True}},
        {"pvcName": "e", "pvcNamespace": "ns", "backupMethod": "NativeSnapshot",
         "nativeSnapshotInfo": {"Phase": "InProgress"}},
        {"pvName": "pv-without-claim", "backupMethod": "NativeSnapshot", "result": "succeeded"},
    ]  # fmt: skip
    assert volumes_from_volumeinfo(raw) == (
        StoredVolume("ns", "a", "csi-data-mover", "captured", "result succeeded", 5368709120),
        StoredVolume("ns", "b", "fs-backup", "failed", "result failed", 10),
        StoredVolume("ns", "c", "", "failed", "skipped: no applicable method"),
        StoredVolume("ns", "d", "csi-snapshot", "captured", "phase ReadyToUse", 7),
        StoredVolume(
            "ns", "e", "native-snapshot", "failed", "no result recorded (phase 'InProgress')"
        ),
    )
    assert volumes_from_volumeinfo({"not": "a list"}) is None


def test_method_files_for_older_velero() -> None:
    ops = [
        {"spec": {"operationID": "du-1234.5678",
                  "resourceIdentifier": {"Group": "", "Resource": "persistentvolumeclaims",
                                         "Namespace": "ns", "Name": "moved"}},
         "status": {"phase": "Completed"}},
        {"spec": {"operationID": "ns/velero-snap/2026-11-30T01:00:00Z",
                  "resourceIdentifier": {"Group": "", "Resource": "persistentvolumeclaims",
                                         "Namespace": "ns", "Name": "snap"}},
         "status": {"phase": "Failed", "error": "timed out"}},
    ]  # fmt: skip
    pvbs = [
        {"metadata": {"labels": {"velero.io/pvc-uid": "uid-fs"}},
         "status": {"phase": "Completed", "snapshotID": "k1", "progress": {"totalBytes": 42}}},
    ]  # fmt: skip
    native = [{"spec": {"persistentVolumeName": "pv-n"}, "status": {"phase": "Completed"}}]
    vscs = [
        {"spec": {"source": {"volumeHandle": "h-snap"}}, "status": {"readyToUse": True}},
        {"spec": {"source": {"volumeHandle": "h-old"}}, "status": {"restoreSize": 9}},
    ]
    lookup = VolumeLookup(
        pv_claims={"pv-n": ("ns", "native")},
        pvc_uids={"uid-fs": ("ns", "fs")},
        handle_claims={"h-snap": ("ns", "snap"), "h-old": ("ns", "old")},
    )
    assert volumes_from_method_files(ops, pvbs, native, lookup, vscs) == (
        # matched by the PVC's uid, its PV's name or volume handle: each says so (``tie``)
        StoredVolume(
            "ns",
            "fs",
            "fs-backup",
            "captured",
            "PodVolumeBackup Completed",
            42,
            tie="velero.io/pvc-uid",
        ),
        StoredVolume("ns", "moved", "csi-data-mover", "captured", "operation Completed"),
        StoredVolume(
            "ns",
            "native",
            "native-snapshot",
            "captured",
            "phase Completed",
            tie="spec.persistentVolumeName",
        ),
        StoredVolume(
            "ns",
            "old",
            "csi-snapshot",
            "failed",
            "VolumeSnapshotContent not ready (no status.readyToUse: readiness unknown)",
            9,
            tie="spec.source.volumeHandle",
        ),
        # the failed async operation outranks a snapshot content for the same PVC
        StoredVolume("ns", "snap", "csi-snapshot", "failed", "operation Failed: timed out"),
    )
    # nothing naming a PVC is "no record", never "nothing captured"
    assert volumes_from_method_files([], [], [], lookup) is None


def test_results_counts() -> None:
    raw = {
        "errors": {"velero": ["x"], "namespaces": {"ns": ["a", "b"]}},
        "warnings": {"cluster": ["w"]},
    }
    assert result_counts(raw) == (3, 1)
    assert result_counts({"errors": {}, "warnings": None}) == (0, 0)
    assert result_counts("junk") == (None, None)


def test_layout_keys_and_archive_members() -> None:
    keys = BackupKeys("velero/", "nightly-1")
    assert keys.metadata == "velero/backups/nightly-1/velero-backup.json"
    assert keys.contents == "velero/backups/nightly-1/nightly-1.tar.gz"
    assert (
        keys.file("-volumeinfo.json.gz") == "velero/backups/nightly-1/nightly-1-volumeinfo.json.gz"
    )
    assert BackupKeys("", "b").dir == "backups/b/"
    m = VM_MEMBER.match("resources/virtualmachines.kubevirt.io/namespaces/apps/db01.json")
    assert m and m.groups() == ("apps", "db01")
    m = VM_MEMBER.match(
        "resources/virtualmachines.kubevirt.io/v1-preferredversion/namespaces/apps/db01.json"
    )
    assert m and m.groups() == ("apps", "db01")
    assert not VM_MEMBER.match("resources/virtualmachineinstances.kubevirt.io/namespaces/a/b.json")


def test_a_stored_snapshot_content_without_its_handle_restores_nothing() -> None:
    """Velero's restore makes its static VolumeSnapshotContent from the stored content's
    ``status.snapshotHandle`` ("fail to get snapshot handle from VSC status",
    https://github.com/vmware-tanzu/velero/blob/main/pkg/restore/actions/csi/volumesnapshotcontent_action.go):
    a stored content ready but without the handle, or stored without status, is no copy."""
    vscs = [
        {"spec": {"source": {"volumeHandle": "h-a"}}, "status": {"readyToUse": True}},
        {"spec": {"source": {"volumeHandle": "h-b"}}},
        {"spec": {"source": {"volumeHandle": "h-c"}},
         "status": {"readyToUse": True, "snapshotHandle": "snap-c"}},
    ]  # fmt: skip
    lookup = VolumeLookup(
        handle_claims={"h-a": ("ns", "a"), "h-b": ("ns", "b"), "h-c": ("ns", "c")}
    )
    a, b, c = volumes_from_method_files([], [], [], lookup, vscs) or ()
    assert (a.pvc, a.outcome) == ("a", "failed")
    assert a.detail.startswith("VolumeSnapshotContent has no status.snapshotHandle")
    assert (b.pvc, b.outcome) == ("b", "failed")
    assert b.detail.startswith("VolumeSnapshotContent stored without status")
    assert (c.pvc, c.outcome, c.detail) == ("c", "captured", "VolumeSnapshotContent readyToUse")
