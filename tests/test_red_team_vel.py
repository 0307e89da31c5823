"""The Velero-side rules of red team "vel", each held to the case that broke it: a verdict
better than the evidence, or a false alarm.

Each test takes a fixture of the check catalog, changes one thing a real cluster can hold, and
asserts the finding that must follow.
"""

from __future__ import annotations

from pathlib import Path

from tests.test_evidence_gaps import _complete, _docs, _finding, _of


def test_a_content_being_deleted_now_is_no_error_of_the_backup(tmp_path: Path) -> None:
    """A labelled VolumeSnapshotContent being deleted with its snapshot proves no copy, but
    it may have been ready when the Backup ran: it does not account for one of the Backup's
    ``status.errors`` (velero pkg/backup/snapshots.go counts the Backup's VolumeSnapshots;
    only a snapshot not completed is a failure). It was counted as one, so an error that may
    be the VM's own object was cleared (red team vel)."""
    fixture = "RR-BKP-003/fail-one-failed-snapshot-accounts-for-one-error.yaml"
    docs = _docs(fixture)
    backup = next(b for b in _of(docs, "Backup") if b["metadata"]["name"] == "daily-20261130")
    backup["status"].update(
        csiVolumeSnapshotsCompleted=4, backupItemOperationsCompleted=4, backupItemOperationsFailed=0
    )
    for snap in _of(docs, "VolumeSnapshot"):
        snap["status"] = {"readyToUse": True}
    content = next(
        c
        for c in _of(docs, "VolumeSnapshotContent")
        if c["metadata"]["name"].startswith("snapcontent-bad")
    )
    content["status"] = {"readyToUse": True}
    content["spec"]["deletionPolicy"] = "Delete"
    content["metadata"]["deletionTimestamp"] = "2026-11-30T05:30:00Z"
    found = _finding(_complete(tmp_path, fixture, docs), "RR-BKP-003")
    assert found["status"] == "ERROR", found["message"]
