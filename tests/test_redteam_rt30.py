"""Red-team round rt30: restores that really fail, held to the verdict their evidence allows.

Each test changes one project fixture the way a variant of a bug case would, and asserts the
finding beside the healthy (or still undecidable) shape, which keeps its verdict.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.test_check_fixtures import audit_fixture
from tests.test_evidence_gaps import _complete, _docs, _finding, _of

Docs = list[dict[str, Any]]

#: app/vm1 running, its Block disks root and data listed in backup.velero.io/backup-volumes
#: on the VMI; two daily Backups with CSI counters and ready contents
OPT_IN = "RR-BKP-004/fail-fs-backup-opt-in-skips-block-disks.yaml"


def _opt_in_not_proven(docs: Docs, where: str) -> None:
    """Leave the opt-in where the pod that ran at backup time may or may not have had it."""
    vm = _of(docs, "VirtualMachine")[0]
    vmi = _of(docs, "VirtualMachineInstance")[0]
    if where == "vmi-restarted":
        vmi["metadata"]["creationTimestamp"] = "2026-11-30T04:00:00Z"
        return
    annotations = vmi["metadata"].pop("annotations")
    vm["spec"]["template"]["metadata"]["annotations"] = annotations
    if where == "stopped-template":
        vm["spec"]["runStrategy"] = "Halted"
        vm.pop("status", None)
        docs.remove(vmi)


def _no_snapshots(docs: Docs) -> None:
    """Backups that record no CSI snapshot and no item operation, with no content labelled
    for them (what Velero writes when it snapshotted nothing: the counters are omitempty)."""
    for b in _of(docs, "Backup"):
        for key in (
            "csiVolumeSnapshotsAttempted",
            "csiVolumeSnapshotsCompleted",
            "backupItemOperationsAttempted",
            "backupItemOperationsCompleted",
        ):
            b["status"].pop(key, None)
    for c in _of(docs, "VolumeSnapshotContent"):
        docs.remove(c)


@pytest.mark.parametrize("where", ["vmi-restarted", "template-only", "stopped-template"])
def test_an_unsure_opt_in_with_no_snapshot_either_is_no_copy(tmp_path: Path, where: str) -> None:
    """Whether the pod that ran listed the Block disks in backup.velero.io/backup-volumes is
    unknown (the VM template, a VMI started since, or a stopped VM's template lists them).
    Either way nothing copied them: file-system backup skips Block volumes (velero
    pkg/podvolume/backupper.go), and without it Velero would have snapshotted them
    (internal/volumehelper/volume_policy_helper.go ShouldPerformSnapshot), which the Backups'
    counters and contents show it did not. Was ERROR (UNKNOWN) for a restore that brings back
    empty disks; bug case 16 expects NOT_READY."""
    docs = _docs(OPT_IN)
    _opt_in_not_proven(docs, where)
    _no_snapshots(docs)
    report = _complete(tmp_path, OPT_IN, docs)
    finding = _finding(report, "RR-BKP-004")
    assert (finding["status"], finding["severity"]) == ("FAIL", "high"), finding["message"]
    assert "whether or not the pod listed PVC" in finding["message"]
    assert "csiVolumeSnapshotsAttempted is 0" in finding["message"]
    vm = next(v for v in report["vms"] if v["name"] == "vm1")
    assert vm["readiness"] == "NOT_READY"


@pytest.mark.parametrize("where", ["vmi-restarted", "template-only"])
def test_an_unsure_opt_in_with_snapshots_counted_stays_unknown(tmp_path: Path, where: str) -> None:
    """Out of the rule: the counters account for the snapshots the pod without the opt-in
    would have had taken, so one answer holds a copy and the other none: still unknown."""
    docs = _docs(OPT_IN)
    _opt_in_not_proven(docs, where)
    finding = _finding(_complete(tmp_path, OPT_IN, docs), "RR-BKP-004")
    assert finding["status"] == "ERROR", finding["message"]


def test_an_unsure_opt_in_of_a_filesystem_disk_with_no_copy_either_way(tmp_path: Path) -> None:
    """A Filesystem-mode disk the template lists for file-system backup: no PodVolumeBackup
    names it (the list was read) and no snapshot was taken, so neither answer copied it."""
    docs = _docs(OPT_IN)
    _opt_in_not_proven(docs, "template-only")
    _no_snapshots(docs)
    for pvc in _of(docs, "PersistentVolumeClaim"):
        pvc["spec"]["volumeMode"] = "Filesystem"
    for pv in _of(docs, "PersistentVolume"):
        pv["spec"]["volumeMode"] = "Filesystem"
    finding = _finding(_complete(tmp_path, OPT_IN, docs), "RR-BKP-004")
    assert finding["status"] == "FAIL", finding["message"]
    assert "has no PodVolumeBackup of PVC" in finding["message"]


#: app/vm1 backed up by Completed Backups that copied no volume (no counter, no content)
ZERO_ITEMS = "RR-BKP-004/fail-completed-zero-volume-items.yaml"


def _with_policy(docs: Docs) -> None:
    for b in _of(docs, "Backup"):
        b["spec"]["resourcePolicy"] = {"kind": "configmap", "name": "volume-policy"}
    for s in [d for d in docs if d["kind"] == "Schedule"]:
        s["spec"]["template"]["resourcePolicy"] = {"kind": "configmap", "name": "volume-policy"}


def test_a_resource_policy_does_not_hide_a_backup_that_copied_no_volume(tmp_path: Path) -> None:
    """The auditor does not read a resource policy's ConfigMap, but whatever its volume
    policies chose (snapshot, fs-backup, skip), each way Velero copies a volume leaves a
    counter or an object labelled with the Backup (velero pkg/apis/velero/v1/backup_types.go,
    pkg/podvolume/backupper.go). None at all: no copy. Was ERROR (UNKNOWN) for a restore that
    re-provisions an empty disk (bug cases 13/17 arriving through a volume policy)."""
    docs = _docs(ZERO_ITEMS)
    _with_policy(docs)
    report = _complete(tmp_path, ZERO_ITEMS, docs)
    finding = _finding(report, "RR-BKP-004")
    assert (finding["status"], finding["severity"]) == ("FAIL", "high"), finding["message"]
    assert "resource policy configmap/volume-policy" in finding["message"]
    assert "copied no volume at all" in finding["message"]
    assert next(v for v in report["vms"] if v["name"] == "vm1")["readiness"] == "NOT_READY"


@pytest.mark.parametrize("record", ["counter", "pod-volume-backup", "unread-uploads"])
def test_a_resource_policy_over_a_backup_with_any_volume_record_stays_unknown(
    tmp_path: Path, record: str
) -> None:
    """Out of the rule: a counter, a PodVolumeBackup of another volume, or an unread
    DataUpload list may be this disk's copy under the policy: still unknown."""
    docs = _docs(ZERO_ITEMS)
    _with_policy(docs)
    header = ""
    if record == "counter":
        for b in _of(docs, "Backup"):
            b["status"]["backupItemOperationsAttempted"] = 1
            b["status"]["backupItemOperationsCompleted"] = 1
    elif record == "pod-volume-backup":
        for b in _of(docs, "Backup"):
            docs.append(
                {
                    "apiVersion": "velero.io/v1",
                    "kind": "PodVolumeBackup",
                    "metadata": {
                        "name": f"{b['metadata']['name']}-pvb",
                        "namespace": b["metadata"]["namespace"],
                        "labels": {"velero.io/backup-name": b["metadata"]["name"]},
                    },
                    "spec": {"volume": "other", "pod": {"kind": "Pod", "name": "p"}},
                    "status": {"phase": "Completed", "snapshotID": "abc"},
                }
            )
    else:
        header = "# unavailable: DataUpload\n"
    finding = _finding(_complete_with(tmp_path, docs, header), "RR-BKP-004")
    assert finding["status"] == "ERROR", finding["message"]


def _complete_with(tmp_path: Path, docs: Docs, header: str) -> dict[str, Any]:
    """Audit ``docs`` as :func:`_complete` does, with ``header`` lines (``# unavailable:
    <Kind>``) marking kinds unread."""
    if not header:
        return _complete(tmp_path, ZERO_ITEMS, docs)
    path = tmp_path / "c.yaml"
    path.write_text("# expect: RR-BKP-004 app/vm1 ERROR\n" + header + yaml.safe_dump_all(docs))
    return audit_fixture(path)


def test_an_unknown_method_does_not_hide_a_backup_that_copied_no_volume(tmp_path: Path) -> None:
    """The disk's PersistentVolume and StorageClass are gone, so which method Velero would
    use for it (CSI driver, native snapshot) is unknown; but the Backups copied no volume by
    any method. Was ERROR (UNKNOWN) for disks no backup holds."""
    docs = _docs(ZERO_ITEMS)
    for kind in ("PersistentVolume", "StorageClass"):
        for d in _of(docs, kind):
            docs.remove(d)
    finding = _finding(_complete(tmp_path, ZERO_ITEMS, docs), "RR-BKP-004")
    assert (finding["status"], finding["severity"]) == ("FAIL", "high"), finding["message"]
    assert "CSI driver of PVC" in finding["message"]
    assert "copied no volume at all" in finding["message"]


def test_native_snapshots_a_snapshotter_cannot_take_of_the_disk_are_no_copy(
    tmp_path: Path,
) -> None:
    """Velero's CSI support is off and the Backups completed native snapshots, but the only
    volume snapshotter (the aws plugin's) reads a volume ID from in-tree EBS and
    ebs.csi.aws.com PVs only; for the disks' csi.example.com PVs it returns none and Velero
    skips them ("no applicable volumesnapshotter found", velero pkg/backup/
    item_backupper.go takePVSnapshot). The snapshots are other volumes': the disks have no
    copy. Was ERROR (UNKNOWN) (bug case 13 with native counters of other volumes)."""
    from tests.test_false_alarms_fp24 import CSI_OFF, _native

    report = _complete(tmp_path, CSI_OFF, _native(3, driver="csi.example.com"))
    finding = _finding(report, "RR-BKP-004")
    assert (finding["status"], finding["severity"]) == ("FAIL", "high"), finding["message"]
    assert next(v for v in report["vms"] if v["name"] == "vm1")["readiness"] == "NOT_READY"


@pytest.mark.parametrize("plugins", [["openshift", "aws", "my-snapshotter"], None])
def test_native_snapshots_under_unknown_plugins_stay_unknown(
    tmp_path: Path, plugins: list[str] | None
) -> None:
    """Out of the rule: a plugin the auditor does not know (or customPlugins) may snapshot
    any driver's PVs: still unknown."""
    from tests.test_false_alarms_fp24 import CSI_OFF, _native

    docs = _native(3, driver="csi.example.com")
    velero = _of(docs, "DataProtectionApplication")[0]["spec"]["configuration"]["velero"]
    if plugins is None:
        velero["customPlugins"] = [{"name": "vendor", "image": "registry.example/vendor:1"}]
    else:
        velero["defaultPlugins"] = plugins
    finding = _finding(_complete(tmp_path, CSI_OFF, docs), "RR-BKP-004")
    assert finding["status"] == "ERROR", finding["message"]


def test_an_unsure_opt_in_beside_a_pod_volume_backup_naming_no_pvc_stays_unknown(
    tmp_path: Path,
) -> None:
    """Out of the rule: a PodVolumeBackup of the Backup that names no PVC (no pvc-uid label
    or tag) may be this disk's file-system copy."""
    docs = _docs(OPT_IN)
    _opt_in_not_proven(docs, "template-only")
    _no_snapshots(docs)
    for pvc in _of(docs, "PersistentVolumeClaim"):
        pvc["spec"]["volumeMode"] = "Filesystem"
    for pv in _of(docs, "PersistentVolume"):
        pv["spec"]["volumeMode"] = "Filesystem"
    for b in _of(docs, "Backup"):
        docs.append(
            {
                "apiVersion": "velero.io/v1",
                "kind": "PodVolumeBackup",
                "metadata": {
                    "name": f"{b['metadata']['name']}-pvb",
                    "namespace": b["metadata"]["namespace"],
                    "labels": {"velero.io/backup-name": b["metadata"]["name"]},
                },
                "spec": {"volume": "root", "pod": {"kind": "Pod", "namespace": "app", "name": "p"}},
                "status": {"phase": "Completed", "snapshotID": "abc"},
            }
        )
    finding = _finding(_complete(tmp_path, OPT_IN, docs), "RR-BKP-004")
    assert finding["status"] == "ERROR", finding["message"]
