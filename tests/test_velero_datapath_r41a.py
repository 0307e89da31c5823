"""Red team r41a: Velero data-path states a verdict was better than.

1. A Backup ``Completed`` whose status counts a failure (``status.errors`` above 0,
   ``backupItemOperationsFailed`` above 0, item operations or native snapshots attempted and
   not completed). Velero writes ``Completed`` only from ``Finalizing``, which it reaches with
   no error logged and every item operation Completed or Failed (velero
   pkg/controller/backup_controller.go, backup_operations_controller.go): such a status is
   edited or damaged, and RR-BKP-003 passed on the phase alone while the errors may have hit
   the VM's own objects. It is now judged as the PartiallyFailed Backup Velero would have made.
2. A PartiallyFailed Backup whose disks' VolumeSnapshotClass was deleted since: the VM's own
   captured disks were counted as failed items "no class could snapshot", which "accounted"
   for the Backup's errors, so RR-BKP-003 said they hit other items (medium FAIL, AT_RISK)
   instead of ERROR (UNKNOWN).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.test_bugclasses_bc39 import DATA_MOVER, _audit
from tests.test_evidence_gaps import _docs, _finding

Docs = list[dict[str, Any]]

#: the newest Backup of the data-mover fixture (its three DataUploads Completed)
NEWEST = "daily-20261130"


def _newest(docs: Docs) -> dict[str, Any]:
    return next(d for d in docs if d["kind"] == "Backup" and d["metadata"]["name"] == NEWEST)


def _vm(report: dict[str, Any]) -> dict[str, Any]:
    return next(v for v in report["vms"] if v["name"] == "vm1")


def test_a_clean_completed_backup_keeps_its_pass(tmp_path: Path) -> None:
    report = _audit(tmp_path, _docs(DATA_MOVER))
    f = _finding(report, "RR-BKP-003")
    assert f["status"] == "PASS"
    assert "completed_contradiction" not in f["evidence"]


@pytest.mark.parametrize(
    ("status", "named"),
    [
        ({"errors": 2}, "status.errors=2"),
        ({"backupItemOperationsFailed": 1}, "status.backupItemOperationsFailed=1"),
        (
            {"backupItemOperationsAttempted": 4},
            "status.backupItemOperationsAttempted=4 but Completed=3 and Failed=0",
        ),
        ({"volumeSnapshotsAttempted": 1}, "status.volumeSnapshotsAttempted=1 but Completed=0"),
    ],
)
def test_a_completed_backup_whose_status_counts_a_failure_is_no_pass(
    tmp_path: Path, status: dict[str, int], named: str
) -> None:
    docs = _docs(DATA_MOVER)
    _newest(docs)["status"].update(status)
    report = _audit(tmp_path, docs)
    f = _finding(report, "RR-BKP-003")
    assert (f["status"], f["severity"]) == ("ERROR", "high")
    assert f"{NEWEST}, is Completed (yet its status has {named})" in f["message"]
    assert "the VM's own objects may be among them" in f["message"]
    assert f["evidence"]["completed_contradiction"] == named
    assert f["evidence"]["phase"] == "Completed"
    # the disks stay captured (their DataUploads Completed): only the phase's claim is doubted
    assert _finding(report, "RR-BKP-004")["status"] == "PASS"
    assert _vm(report)["readiness"] == "UNKNOWN"


def test_a_completed_backup_whose_errors_hit_another_pvc_is_a_medium_fail(
    tmp_path: Path,
) -> None:
    # a Failed DataUpload of a PVC outside the VM accounts for the one error: the PartiallyFailed
    # reasoning applies, so the disks captured and the error shown elsewhere give medium
    docs = _docs(DATA_MOVER)
    _newest(docs)["status"].update(errors=1)
    other = next(d for d in docs if d["kind"] == "DataUpload")
    failed = {
        **other,
        "metadata": {**other["metadata"], "name": f"{NEWEST}-scratch"},
        "spec": {**other["spec"], "sourcePVC": "scratch"},
        "status": {"phase": "Failed", "message": "data path error"},
    }
    docs.append(failed)
    report = _audit(tmp_path, docs)
    f = _finding(report, "RR-BKP-003")
    assert (f["status"], f["severity"]) == ("FAIL", "medium")
    assert "is Completed (yet its status has status.errors=1)" in f["message"]
    assert "1 failed volume item(s) of other PVCs that account for its 1 error(s)" in f["message"]


def test_captured_disks_of_a_deleted_class_do_not_account_for_errors(tmp_path: Path) -> None:
    # the fixture has no VolumeSnapshotClass now; the DataUploads show one was found then
    docs = _docs(DATA_MOVER)
    _newest(docs)["status"].update(phase="PartiallyFailed", errors=2)
    report = _audit(tmp_path, docs)
    f = _finding(report, "RR-BKP-003")
    assert (f["status"], f["severity"]) == ("ERROR", "high")
    assert f"{NEWEST}, is PartiallyFailed with 2 error(s)" in f["message"]
    assert "0 failed volume item(s)" in f["message"]
    assert f["evidence"]["failed_items_seen"] == 0
    assert _vm(report)["readiness"] == "UNKNOWN"


#: vm1 whose disks are copied by file-system backup: one Completed PodVolumeBackup each
FS = "RR-BKP-004/pass-fs-backup-podvolumebackups.yaml"


def _pvb(docs: Docs, pvc: str) -> dict[str, Any]:
    return next(d for d in docs if d["kind"] == "PodVolumeBackup" and d["spec"]["volume"] == pvc)


@pytest.mark.parametrize("failed_first", [False, True])
def test_two_podvolumebackups_of_one_pvc_that_disagree_leave_it_unknown(
    tmp_path: Path, failed_first: bool
) -> None:
    # Velero makes one PodVolumeBackup per pod volume: a PVC the source and target launcher
    # pods of a migration both mount gets two. The one read first decided: a Failed one
    # listed second was never seen (READY), one listed first hid the Completed copy
    docs = _docs(FS)
    assert _finding(_audit(tmp_path / "base", docs, FS), "RR-BKP-004")["status"] == "PASS"
    done = _pvb(docs, "vm1-root")
    other = {
        **done,
        "metadata": {**done["metadata"], "name": f"{NEWEST}-vm1-root-target"},
        "spec": {**done["spec"], "pod": {"name": "virt-launcher-vm1-target", "namespace": "app"}},
        "status": {"phase": "Failed", "message": "pod volume backup failed: data path error"},
    }
    if failed_first:
        done["status"], other["status"] = other["status"], done["status"]
    docs.append(other)
    report = _audit(tmp_path / "dup", docs, FS)
    f = _finding(report, "RR-BKP-004")
    assert (f["status"], f["severity"]) == ("ERROR", "high")
    rival = f"PodVolumeBackup velero/{NEWEST}-vm1-root-target"  # listed second
    phase = "Completed" if failed_first else "Failed"
    assert f"{rival} status.phase={phase} names it too" in f["message"]
    assert "whether a restore takes a copy is unknown" in f["message"]
    row = next(p for p in f["evidence"]["pvcs"] if p["pvc"] == "vm1-root")
    assert row["status"] == "unknown"
    assert _vm(report)["readiness"] == "UNKNOWN"


def test_two_completed_podvolumebackups_of_one_pvc_keep_the_pass(tmp_path: Path) -> None:
    docs = _docs(FS)
    done = _pvb(docs, "vm1-root")
    docs.append({**done, "metadata": {**done["metadata"], "name": f"{NEWEST}-vm1-root-target"}})
    assert _finding(_audit(tmp_path, docs, FS), "RR-BKP-004")["status"] == "PASS"


def test_two_dataupload_records_of_one_pvc_that_disagree_leave_it_unknown(
    tmp_path: Path,
) -> None:
    docs = _docs(DATA_MOVER)
    done = next(
        d for d in docs if d["kind"] == "DataUpload" and d["spec"]["sourcePVC"] == "vm1-root"
    )
    docs.append(
        {
            **done,
            "metadata": {**done["metadata"], "name": f"{NEWEST}-vm1-root-again"},
            "status": {"phase": "Canceled"},
        }
    )
    f = _finding(_audit(tmp_path, docs), "RR-BKP-004")
    assert (f["status"], f["severity"]) == ("ERROR", "high")
    assert f"DataUpload velero/{NEWEST}-vm1-root-again status.phase=Canceled" in f["message"]


def _moving(docs: Docs) -> Docs:
    """The data-mover fixture with its newest Backup moving snapshot data (DataUploads the
    only per-disk evidence)."""
    _newest(docs)["spec"]["snapshotMoveData"] = True
    return docs


def _upload(docs: Docs, pvc: str) -> dict[str, Any]:
    return next(d for d in docs if d["kind"] == "DataUpload" and d["spec"]["sourcePVC"] == pvc)


def test_dataupload_records_of_this_backup_keep_the_pass(tmp_path: Path) -> None:
    docs = _moving(_docs(DATA_MOVER))
    for d in docs:
        if d["kind"] == "DataUpload":
            d["metadata"]["labels"]["velero.io/backup-uid"] = f"uid-b-{NEWEST}"
    assert _finding(_audit(tmp_path, docs), "RR-BKP-004")["status"] == "PASS"


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        (
            lambda o: o["metadata"]["labels"].update({"velero.io/backup-uid": "uid-earlier"}),
            f"is labelled velero.io/backup-uid=uid-earlier, not the Backup's uid uid-b-{NEWEST}",
        ),
        (
            lambda o: o["metadata"].update(namespace="velero-2"),
            "is in namespace velero-2, not the Backup's namespace velero",
        ),
    ],
)
def test_another_backups_dataupload_of_that_name_is_no_capture(
    tmp_path: Path, edit: Any, why: str
) -> None:
    # Velero labels each DataUpload with its Backup's UID and creates it in the Backup's
    # namespace: one of an earlier Backup of the name (deleted, created again) or of another
    # Velero install was filed by name alone and stood for the disk (READY)
    docs = _moving(_docs(DATA_MOVER))
    record = _upload(docs, "vm1-root")
    edit(record)
    report = _audit(tmp_path, docs)
    f = _finding(report, "RR-BKP-004")
    assert (f["status"], f["severity"]) == ("ERROR", "high")
    ns = record["metadata"]["namespace"]
    assert f"DataUpload {ns}/{NEWEST}-vm1-root {why}" in f["message"]
    row = next(p for p in f["evidence"]["pvcs"] if p["pvc"] == "vm1-root")
    assert row["status"] == "unknown"
    assert _vm(report)["readiness"] == "UNKNOWN"


def test_a_completed_podvolumebackup_of_a_block_claim_is_no_copy(tmp_path: Path) -> None:
    # Velero's backupper skips a Block-mode pod volume ("Block volumes are not supported for
    # fs backup") and a claim's volumeMode is immutable: such a record was edited (bugcase 16
    # with a PodVolumeBackup written in was READY)
    docs = _docs(FS)
    claim = next(
        d
        for d in docs
        if d["kind"] == "PersistentVolumeClaim" and d["metadata"]["name"] == "vm1-root"
    )
    claim["spec"]["volumeMode"] = "Block"
    report = _audit(tmp_path, docs, FS)
    f = _finding(report, "RR-BKP-004")
    assert (f["status"], f["severity"]) == ("ERROR", "high")
    assert (
        "PodVolumeBackup for PVC vm1-root: phase=Completed, but PVC vm1-root has "
        "spec.volumeMode=Block, which file-system backup never copies"
    ) in f["message"]
    row = next(p for p in f["evidence"]["pvcs"] if p["pvc"] == "vm1-root")
    assert row["status"] == "unknown"
    assert "PersistentVolumeClaim app/vm1-root spec.volumeMode=Block" in " ".join(row["proof"])
    assert _vm(report)["readiness"] == "UNKNOWN"


def _drill(docs: Docs) -> dict[str, Any]:
    return next(d for d in docs if d["kind"] == "Restore")


def test_a_clean_completed_drill_keeps_its_pass(tmp_path: Path) -> None:
    f = _finding(_audit(tmp_path, _docs(DATA_MOVER)), "RR-RST-001")
    assert f["status"] == "PASS"
    assert "completed_contradiction" not in f["evidence"]


def test_a_completed_drill_whose_status_counts_errors_is_a_medium_fail(tmp_path: Path) -> None:
    # Velero moves a Restore with any error to ...PartiallyFailed (restore_controller.go,
    # restore_finalizer_controller.go): a Completed one with errors is the PartiallyFailed
    # drill it would have made, whose medium FAIL the edit turned into a PASS
    docs = _docs(DATA_MOVER)
    _drill(docs)["status"]["errors"] = 3
    f = _finding(_audit(tmp_path, docs), "RR-RST-001")
    assert (f["status"], f["severity"]) == ("FAIL", "medium")
    assert (
        "Newest restore test of VM app/vm1, drill-20261128, is Completed, yet its status has "
        "status.errors=3"
    ) in f["message"]
    assert f["evidence"]["completed_contradiction"] == "status.errors=3"
    _drill(docs)["status"].update(errors=3, phase="PartiallyFailed")
    same = _finding(_audit(tmp_path / "pf", docs), "RR-RST-001")
    assert (same["status"], same["severity"]) == ("FAIL", "medium")


def test_disagreeing_podvolumebackups_found_by_different_keys_leave_it_unknown(
    tmp_path: Path,
) -> None:
    # one names the claim by its velero.io/pvc-uid label only, the other by spec.tags.pvc
    # only: each is the first record of its own key, and the tag one was read alone
    docs = _docs(FS)
    by_uid = _pvb(docs, "vm1-root")
    by_tag = {
        **by_uid,
        "metadata": {
            **by_uid["metadata"],
            "name": f"{NEWEST}-vm1-root-tag",
            "labels": {"velero.io/backup-name": NEWEST},
        },
    }
    by_uid["spec"] = {**by_uid["spec"], "tags": {}}
    by_uid["status"] = {"phase": "Failed", "message": "data path error"}
    docs.append(by_tag)
    f = _finding(_audit(tmp_path, docs, FS), "RR-BKP-004")
    assert (f["status"], f["severity"]) == ("ERROR", "high")
    assert (
        f"PodVolumeBackup velero/{NEWEST}-vm1-root status.phase=Failed names it too"
        in (f["message"])
    )
