"""VirtualMachineSnapshots and the VolumeSnapshots below them (round s42).

Each test takes the namespace-bound VM snapshot fixture (no Backup: RR-STG-001 FAIL medium
while a snapshot copies each disk, high once none does), changes one fact, and asserts the
copy is no longer counted, with the finding naming the object and field. ``_alone`` makes the
claims newer than the snapshot so that its VolumeSnapshots count as no standalone copy and
the VM snapshot is judged alone (as in ``tests/test_false_alarms_fp15.py``).

Sources: kubevirt pkg/storage/snapshot/snapshot.go (``updateVMSnapshotContent``,
``updateSnapshotStatus``, ``updateSnapshotSnapshotableVolumes``, ``shouldDeleteContent``,
``getVMSnapshot``), pkg/storage/admitters/vmsnapshot.go, pkg/storage/snapshot/util.go
``timeUntilDeadline``; external-provisioner pkg/controller/controller.go ``getSnapshotSource``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.test_evidence_gaps import _complete, _docs, _finding, _of
from tests.test_false_alarms_fp15 import VM_SNAPSHOT, _alone

Docs = list[dict[str, Any]]
DATA_VS = "vmsnapshot-uid-vms-volume-data"
DATA_VSC = "snapcontent-vmsnapshot-uid-vms-volume-data"


def _named(docs: Docs, kind: str, name: str) -> dict[str, Any]:
    return next(d for d in _of(docs, kind) if d["metadata"]["name"] == name)


def _vmsnap(docs: Docs) -> dict[str, Any]:
    return _of(docs, "VirtualMachineSnapshot")[0]


def _content(docs: Docs) -> dict[str, Any]:
    return _of(docs, "VirtualMachineSnapshotContent")[0]


def _stg(tmp_path: Path, docs: Docs) -> tuple[str, str, str, dict[str, int], dict[str, Any]]:
    report = _complete(tmp_path, VM_SNAPSHOT, docs)
    f = _finding(report, "RR-STG-001")
    copies = {r["pvc"]: r["copies"] for r in f["evidence"]["disks"]}
    return f["status"], f["severity"], f["message"], copies, f["evidence"]


def test_the_vm_snapshot_alone_copies_each_disk(tmp_path: Path) -> None:
    """The baseline: one copy per disk, the VM snapshot's (FAIL medium)."""
    status, severity, message, copies, _ = _stg(tmp_path, _alone(_docs(VM_SNAPSHOT)))
    assert (status, severity) == ("FAIL", "medium"), message
    assert copies == {"vm1-root": 1, "vm1-data": 1}


def _error(docs: Docs) -> None:
    # KubeVirt copies the content's error into the snapshot; it sets one only while the
    # content is not ready or a VolumeSnapshot reports an error, and clears it otherwise
    _vmsnap(docs)["status"]["error"] = {"message": "VolumeSnapshot x error: quota"}


def _excluded(docs: Docs) -> None:
    _vmsnap(docs)["status"]["snapshotVolumes"]["excludedVolumes"] = ["data"]


def _of_instance(docs: Docs) -> None:
    _vmsnap(docs)["spec"]["source"]["kind"] = "VirtualMachineInstance"


def _of_pool(docs: Docs) -> None:
    _vmsnap(docs)["spec"]["source"].update(apiGroup="pool.kubevirt.io", kind="VirtualMachinePool")


def _content_error(docs: Docs) -> None:
    _content(docs)["status"]["error"] = {"message": "VolumeSnapshots (x) missing"}


def _volume_status_not_ready(docs: Docs) -> None:
    _content(docs)["status"]["volumeSnapshotStatus"] = [
        {"volumeSnapshotName": "vmsnapshot-uid-vms-volume-root", "readyToUse": True},
        {"volumeSnapshotName": DATA_VS, "readyToUse": False},
    ]


def _cut_from_another_claim(docs: Docs) -> None:
    _named(docs, "VolumeSnapshot", DATA_VS)["spec"]["source"]["persistentVolumeClaimName"] = (
        "scratch"
    )


def _other_driver(docs: Docs) -> None:
    _named(docs, "VolumeSnapshotContent", DATA_VSC)["spec"]["driver"] = "other.csi.example.com"


def _bound_to_another_snapshot(docs: Docs) -> None:
    _named(docs, "VolumeSnapshotContent", DATA_VSC)["spec"]["volumeSnapshotRef"]["name"] = "x"


def _no_phase(docs: Docs) -> None:
    del _vmsnap(docs)["status"]["phase"]


@pytest.mark.parametrize(
    ("change", "lost", "says"),
    [
        (_no_phase, ["vm1-root", "vm1-data"], "VirtualMachineSnapshot vm1-snap status.phase=None"),
        (_error, ["vm1-root", "vm1-data"], "VirtualMachineSnapshot vm1-snap status.error is set"),
        (
            _excluded,
            ["vm1-data"],
            "VirtualMachineSnapshot vm1-snap status.snapshotVolumes.excludedVolumes lists data",
        ),
        (
            _of_instance,
            ["vm1-root", "vm1-data"],
            "VirtualMachineSnapshot vm1-snap spec.source is kubevirt.io/VirtualMachineInstance, "
            "not kubevirt.io/VirtualMachine",
        ),
        (
            _of_pool,
            ["vm1-root", "vm1-data"],
            "spec.source is pool.kubevirt.io/VirtualMachinePool",
        ),
        (
            _content_error,
            ["vm1-root", "vm1-data"],
            "VirtualMachineSnapshotContent vmsnapshot-content-vm1 status.error is set",
        ),
        (
            _volume_status_not_ready,
            ["vm1-data"],
            "VirtualMachineSnapshotContent vmsnapshot-content-vm1 status.volumeSnapshotStatus"
            f"[{DATA_VS}] readyToUse=False",
        ),
        (
            _cut_from_another_claim,
            ["vm1-data"],
            f"VolumeSnapshot {DATA_VS} spec.source.persistentVolumeClaimName=scratch, not vm1-data",
        ),
        (
            _other_driver,
            ["vm1-data"],
            f"VolumeSnapshotContent {DATA_VSC} spec.driver=other.csi.example.com, not the "
            "disk's CSI driver csi.example.com",
        ),
        (
            _bound_to_another_snapshot,
            ["vm1-data"],
            f"VolumeSnapshotContent {DATA_VSC} spec.volumeSnapshotRef.name=x, not {DATA_VS}",
        ),
    ],
)
def test_a_vm_snapshot_that_does_not_show_the_copy_is_none(
    tmp_path: Path, change: Callable[[Docs], None], lost: list[str], says: str
) -> None:
    """Each fault kept the VM snapshot counted as the disk's copy (FAIL medium); now the disk
    has none (FAIL high) and the message names the snapshot and field."""
    docs = _alone(_docs(VM_SNAPSHOT))
    change(docs)
    status, severity, message, copies, evidence = _stg(tmp_path, docs)
    assert (status, severity) == ("FAIL", "high"), message
    assert evidence["unprotected"] == lost
    assert all(copies[p] == 0 for p in lost)
    assert says in message
    assert any(says in n for p in lost for n in evidence["snapshots_not_counted"][p])


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (_cut_from_another_claim, None),  # indexed under the other claim: not vm1-data's
        (
            _other_driver,
            f"VolumeSnapshotContent {DATA_VSC} spec.driver=other.csi.example.com",
        ),
        (
            _bound_to_another_snapshot,
            f"VolumeSnapshotContent {DATA_VSC} spec.volumeSnapshotRef.name=x, not {DATA_VS}",
        ),
        (
            lambda d: _named(d, "VolumeSnapshotContent", DATA_VSC)["spec"]["source"].update(
                volumeHandle="h-scratch"
            ),
            f"VolumeSnapshotContent {DATA_VSC} spec.source.volumeHandle=h-scratch, not the "
            "disk's volume h-vm1-data",
        ),
    ],
)
def test_a_volume_snapshot_the_provisioner_would_refuse_is_no_copy(
    tmp_path: Path, change: Callable[[Docs], None], says: str | None
) -> None:
    """With the claims as old as the fixture's, the VolumeSnapshots count on their own too:
    the VM snapshot's VolumeSnapshot of another claim, volume, driver or snapshot counted
    through the VM snapshot (FAIL medium); now vm1-data has no copy (FAIL high)."""
    docs = _docs(VM_SNAPSHOT)
    change(docs)
    status, severity, message, copies, evidence = _stg(tmp_path, docs)
    assert (status, severity) == ("FAIL", "high"), message
    assert copies == {"vm1-root": 2, "vm1-data": 0}
    assert evidence["unprotected"] == ["vm1-data"]
    if says is not None:
        assert says in message


def test_a_failed_vm_snapshot_takes_its_volume_snapshots_with_it(tmp_path: Path) -> None:
    """KubeVirt deletes the content of a Failed snapshot (default deletionPolicy Delete), and
    the garbage collector its VolumeSnapshots: bug case 18's kind with the leftovers still
    ready counted them (FAIL medium)."""
    docs = _docs(VM_SNAPSHOT)
    _vmsnap(docs)["status"].update(phase="Failed", readyToUse=False)
    _content(docs)["status"]["readyToUse"] = False
    status, severity, message, copies, _ = _stg(tmp_path, docs)
    assert (status, severity) == ("FAIL", "high"), message
    assert copies == {"vm1-root": 0, "vm1-data": 0}
    assert "VirtualMachineSnapshot vm1-snap status.readyToUse=False" in message
    assert f"VolumeSnapshot {DATA_VS} goes with its VirtualMachineSnapshotContent" in message


def test_a_failed_retained_snapshot_with_a_ready_content_keeps_its_volume_snapshots(
    tmp_path: Path,
) -> None:
    """The counterpart: with ``deletionPolicy: Retain`` and a ready content KubeVirt keeps
    the content (``shouldDeleteContent``), so the ready VolumeSnapshots stay copies."""
    docs = _docs(VM_SNAPSHOT)
    _vmsnap(docs)["spec"]["deletionPolicy"] = "Retain"
    _vmsnap(docs)["status"]["phase"] = "Failed"
    status, severity, message, copies, _ = _stg(tmp_path, docs)
    assert (status, severity) == ("FAIL", "medium"), message
    assert copies == {"vm1-root": 1, "vm1-data": 1}


@pytest.mark.parametrize(("deadline", "severity"), [("1m", "high"), ("0s", "medium")])
def test_a_snapshot_in_progress_past_its_failure_deadline_is_ending(
    tmp_path: Path, deadline: str, severity: str
) -> None:
    """In progress a day after creation with a 1m ``failureDeadline``, KubeVirt fails it
    and deletes its unready content; ``0s`` sets no deadline (its ready VolumeSnapshots
    stay)."""
    docs = _docs(VM_SNAPSHOT)
    _vmsnap(docs)["spec"]["failureDeadline"] = deadline
    _vmsnap(docs)["metadata"]["creationTimestamp"] = "2026-11-29T09:59:00Z"
    _vmsnap(docs)["status"].update(phase="InProgress", readyToUse=False)
    _content(docs)["status"]["readyToUse"] = False
    status, sev, message, _, _ = _stg(tmp_path, docs)
    assert (status, sev) == ("FAIL", severity), message


RETAINED = "RR-STG-001/pass-retained-volume-snapshots.yaml"


@pytest.mark.parametrize(
    ("class_policy", "content_policy", "status", "severity"),
    [("Delete", "Retain", "PASS", "high"), ("Retain", "Delete", "FAIL", "medium")],
)
def test_the_content_policy_decides_whether_a_snapshot_outlives_the_namespace(
    tmp_path: Path, class_policy: str, content_policy: str, status: str, severity: str
) -> None:
    """Already handled, kept: the VolumeSnapshotClass's ``deletionPolicy`` is copied into
    each content when it is cut, and the snapshot controller deletes the storage snapshot by
    the content's own ``spec.deletionPolicy``
    (https://kubernetes.io/docs/concepts/storage/volume-snapshots/#delete). A class changed
    to Delete since leaves Retain contents lasting; a Delete content under a Retain class
    does not last (FAIL medium)."""
    docs = _docs(RETAINED)
    for c in _of(docs, "VolumeSnapshotClass"):
        c["deletionPolicy"] = class_policy
        c["driver"] = "other.csi.example.com"  # the class's driver is no content's
    for c in _of(docs, "VolumeSnapshotContent"):
        if "velero.io/backup-name" not in c["metadata"].get("labels", {}):
            c["spec"]["deletionPolicy"] = content_policy
    f = _finding(_complete(tmp_path, RETAINED, docs), "RR-STG-001")
    assert (f["status"], f["severity"]) == (status, severity), f["message"]
