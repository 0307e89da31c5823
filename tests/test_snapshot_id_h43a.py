"""Round h43a: a Completed DataUpload or PodVolumeBackup whose status holds no
``status.snapshotID`` key counted as the disk's copy.

Velero's node-agent completes both with the uploader's snapshot ID
(``DataUploadReconciler.OnDataUploadCompleted``, ``PodVolumeBackupReconciler.OnDataPathCompleted``:
https://github.com/vmware-tanzu/velero/blob/main/pkg/controller/data_upload_controller.go,
https://github.com/vmware-tanzu/velero/blob/main/pkg/controller/pod_volume_backup_controller.go);
kopia returns one on every successful backup (pkg/uploader/provider/kopia.go ``RunBackup``), and
the ID is empty (so absent: ``omitempty``) only for an empty volume, which the same code marks
with the message "volume was empty so no ... was taken/upload". A Completed status with neither
was stripped or edited: it now proves no copy (``unknown``, RR-BKP-004 ERROR naming the record
and the field), where it was a PASS (READY). The fixtures were given IDs first.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.test_evidence_gaps import _complete, _docs, _finding, _of

Docs = list[dict[str, Any]]

DATA_MOVER = "RR-BKP-004/pass-data-mover.yaml"
FS = "RR-BKP-004/pass-fs-backup-podvolumebackups.yaml"
#: the newest Backup of both fixtures, whose records RR-BKP-004 reads
NEWEST = "daily-20261130"
CASES = [(DATA_MOVER, "DataUpload"), (FS, "PodVolumeBackup")]


def _root(docs: Docs, kind: str) -> dict[str, Any]:
    return next(d for d in _of(docs, kind) if d["metadata"]["name"] == f"{NEWEST}-vm1-root")


def _row(finding: dict[str, Any], pvc: str) -> dict[str, Any]:
    return next(p for p in finding["evidence"]["pvcs"] if p["pvc"] == pvc)


def _readiness(report: dict[str, Any]) -> str:
    return str(next(v for v in report["vms"] if v["name"] == "vm1")["readiness"])


@pytest.mark.parametrize(("fixture", "kind"), CASES)
def test_a_completed_record_with_its_snapshot_id_counts(
    tmp_path: Path, fixture: str, kind: str
) -> None:
    docs = _docs(fixture)
    snapshot = _root(docs, kind)["status"]["snapshotID"]
    assert len(snapshot) == 32  # a kopia manifest ID, as the fixtures now write it
    report = _complete(tmp_path, fixture, docs)
    f = _finding(report, "RR-BKP-004")
    assert f["status"] == "PASS", f["message"]
    row = _row(f, "vm1-root")
    assert (row["status"], row["captured"]) == ("captured", True)
    # the proof names the ID the copy rests on
    assert row["proof"] == [
        f"{kind} velero/{NEWEST}-vm1-root status.phase=Completed, snapshotID={snapshot}"
    ]
    # the data-mover fixture's next Backup gap keeps it AT_RISK (RR-BKP-013), as before
    assert _readiness(report) == ("AT_RISK" if kind == "DataUpload" else "READY")


@pytest.mark.parametrize(("fixture", "kind"), CASES)
@pytest.mark.parametrize("message", [None, "upload finished"])
def test_a_completed_record_without_a_snapshot_id_is_no_copy(
    tmp_path: Path, fixture: str, kind: str, message: str | None
) -> None:
    docs = _docs(fixture)
    status = _root(docs, kind)["status"]
    del status["snapshotID"]
    if message is not None:  # a message that does not say the volume was empty
        status["message"] = message
    report = _complete(tmp_path, fixture, docs)
    f = _finding(report, "RR-BKP-004")
    assert (f["status"], f["severity"]) == ("ERROR", "high"), f["message"]
    ref = f"{kind} velero/{NEWEST}-vm1-root"
    assert f"{ref} has no status.snapshotID (absent)" in f["message"]
    assert "stripped or edited" in f["message"]
    row = _row(f, "vm1-root")
    assert (row["status"], row["captured"]) == ("unknown", False)
    seen = f"{ref} status.phase=Completed, snapshotID absent"
    assert row["proof"] == [seen + (f", message={message!r}" if message else "")]
    # the other disks keep their copies
    assert _row(f, "vm1-data")["status"] == "captured"
    assert _readiness(report) == "UNKNOWN"


@pytest.mark.parametrize(("fixture", "kind"), CASES)
def test_an_empty_volume_keeps_its_own_reason(tmp_path: Path, fixture: str, kind: str) -> None:
    """The upload of an empty volume (no ID, Velero's message) is named as before (rt34)."""
    docs = _docs(fixture)
    status = _root(docs, kind)["status"]
    del status["snapshotID"]
    status["message"] = "volume was empty so no snapshot was taken"
    f = _finding(_complete(tmp_path, fixture, docs), "RR-BKP-004")
    assert f["status"] == "ERROR"
    assert "its message says the volume was empty" in f["message"]
    assert "(absent)" not in f["message"]


def test_a_record_without_an_id_beside_one_with_an_id_leaves_the_pvc_unknown(
    tmp_path: Path,
) -> None:
    """Two PodVolumeBackups of one claim (the launcher pods of a migration, r41a): one
    without a snapshot ID is no copy, so the pair disagrees, whichever is read first."""
    docs = _docs(FS)
    done = _root(docs, "PodVolumeBackup")
    stripped = {k: v for k, v in done["status"].items() if k != "snapshotID"}
    docs.append(
        {
            **done,
            "metadata": {**done["metadata"], "name": f"{NEWEST}-vm1-root-target"},
            "status": stripped,
        }
    )
    f = _finding(_complete(tmp_path, FS, docs), "RR-BKP-004")
    assert (f["status"], f["severity"]) == ("ERROR", "high"), f["message"]
    assert (
        f"PodVolumeBackup velero/{NEWEST}-vm1-root-target status.phase=Completed names it too"
        in f["message"]
    )
    assert _row(f, "vm1-root")["status"] == "unknown"
