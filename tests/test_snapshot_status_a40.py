"""VolumeSnapshotContents that do not show their snapshot cut (round a40).

A content shows a snapshot only with ``status.readyToUse: true`` and a
``status.snapshotHandle``. Without ``readyToUse`` "the readiness of a snapshot is unknown"
(external-snapshotter ``VolumeSnapshotContentStatus``,
https://github.com/kubernetes-csi/external-snapshotter/blob/master/client/apis/volumesnapshot/v1/types.go),
and without the handle Velero's restore fails ("fail to get snapshot handle from VSC status",
https://github.com/vmware-tanzu/velero/blob/main/pkg/restore/actions/csi/volumesnapshotcontent_action.go).
Velero 1.4-1.15's backup sync created a synced Backup's contents without status
(https://github.com/vmware-tanzu/velero/blob/v1.15.0/pkg/controller/backup_sync_controller.go),
and an export may strip it. Such a content was counted as neither ready nor failed, so the
Backup's counters alone proved every disk: READY.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.test_evidence_gaps import Docs, _complete, _docs, _finding, _labelled_snapshots, _of

BKP = "RR-BKP-004/pass.yaml"
RETAINED = "RR-STG-001/pass-retained-volume-snapshots.yaml"


def _verdict(report: dict[str, Any], vm: str = "vm1") -> str:
    return str(next(v for v in report["vms"] if v["name"] == vm)["readiness"])


def _no_status(c: dict[str, Any]) -> None:
    c.pop("status", None)


def _empty_status(c: dict[str, Any]) -> None:
    c["status"] = {}


def _no_ready(c: dict[str, Any]) -> None:
    del c["status"]["readyToUse"]


def _null_ready(c: dict[str, Any]) -> None:
    c["status"]["readyToUse"] = None


def _no_handle(c: dict[str, Any]) -> None:
    del c["status"]["snapshotHandle"]


@pytest.mark.parametrize(
    ("strip", "says"),
    [
        (_no_status, "no status (no readyToUse, no snapshotHandle)"),
        (_empty_status, "no status (no readyToUse, no snapshotHandle)"),
        (_no_ready, "no status.readyToUse"),
        (_null_ready, "no status.readyToUse"),
        (_no_handle, "readyToUse=true but no status.snapshotHandle"),
    ],
)
def test_backup_contents_that_do_not_show_a_snapshot_prove_no_disk(
    tmp_path: Path, strip: Callable[[dict[str, Any]], None], says: str
) -> None:
    """The Backup's counters (3 of 3 CSI snapshots) never prove a disk while a content
    labelled with it does not show its snapshot: RR-BKP-004 ERROR, the VM UNKNOWN, and the
    finding names the content and the missing field."""
    base = _complete(tmp_path / "base", BKP, _docs(BKP))
    assert _finding(base, "RR-BKP-004")["status"] == "PASS"
    assert _verdict(base) == "READY"
    docs = _docs(BKP)
    contents = [
        c
        for c in _of(docs, "VolumeSnapshotContent")
        if c["metadata"]["labels"]["velero.io/backup-name"] == "daily-20261130"
    ]
    strip(contents[0])  # one of the three is enough: the counters do not say whose it is
    report = _complete(tmp_path / "stripped", BKP, docs)
    finding = _finding(report, "RR-BKP-004")
    assert finding["status"] == "ERROR"
    assert _verdict(report) == "UNKNOWN"
    assert "snapcontent-daily-20261130-0: " + says in finding["message"]
    assert "its counters prove no single PVC" in finding["message"]
    root = next(r for r in finding["evidence"]["pvcs"] if r["pvc"] == "vm1-root")
    assert root["status"] == "unknown"


def test_a_ready_volume_snapshot_whose_content_has_no_status_is_no_capture(
    tmp_path: Path,
) -> None:
    """Velero's VolumeSnapshot of each disk says readyToUse, but the content it is bound to
    has no status: the snapshot a restore reads is not shown cut, so the item evidence is
    ``unknown`` and names the content (it said only "is not ready")."""
    docs = _docs(BKP)
    _labelled_snapshots(docs, {"vm1-root": True, "vm1-data": True})
    assert _finding(_complete(tmp_path / "base", BKP, docs), "RR-BKP-004")["status"] == "PASS"
    for c in _of(docs, "VolumeSnapshotContent"):
        _no_status(c)
    report = _complete(tmp_path / "stripped", BKP, docs)
    finding = _finding(report, "RR-BKP-004")
    assert finding["status"] == "ERROR"
    assert _verdict(report) == "UNKNOWN"
    root = next(r for r in finding["evidence"]["pvcs"] if r["pvc"] == "vm1-root")
    assert root["status"] == "unknown"
    assert root["basis"] == "item"
    assert (
        "readyToUse=True but its VolumeSnapshotContent snapcontent-daily-20261130-0 shows no "
        "status (no readyToUse, no snapshotHandle)" in root["reason"]
    )


@pytest.mark.parametrize("strip", [_no_status, _no_handle], ids=["no-status", "no-handle"])
def test_a_standalone_snapshot_whose_content_shows_no_snapshot_is_no_copy(
    tmp_path: Path, strip: Callable[[dict[str, Any]], None]
) -> None:
    """RR-STG-001 counted a ready VolumeSnapshot whose Retain content was ready without a
    ``snapshotHandle`` as a copy that outlives the namespace (a content without status was
    already none): neither can be restored from."""
    docs: Docs = _docs(RETAINED)
    before = _finding(_complete(tmp_path / "base", RETAINED, docs), "RR-STG-001")
    assert before["status"] == "PASS"
    for c in _of(docs, "VolumeSnapshotContent"):
        strip(c)
    finding = _finding(_complete(tmp_path / "stripped", RETAINED, docs), "RR-STG-001")
    assert finding["status"] != "PASS"
    assert "vm1-root" in finding["message"]
