"""A Backup judged by its counters: each current disk's capture rests on a snapshot naming it.

Velero names each VolumeSnapshot it takes ``velero-<pvc>-`` + 5 random characters in the PVC's
namespace (velero pkg/backup/actions/csi/pvc_action.go), and the VolumeSnapshotContent's
``spec.volumeSnapshotRef`` keeps that name. When every ready content names its PVC so and none
names a current disk, the counters counted other PVCs (one deleted since the Backup): the disk is
not evidenced, never captured (red team: a deleted PVC stood in for a current disk).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from auditor.inventory.capture import snapshot_claim, velero_snapshot_prefix
from tests.test_evidence_gaps import _audit, _docs, _finding

FIXTURE = "RR-RST-001/pass-data-downloads-completed.yaml"


def _csi_backup(snapshots: list[str | None]) -> list[dict[str, object]]:
    """The fixture with its newest Backup a CSI-snapshot one (no data mover): counted by
    ``csiVolumeSnapshotsCompleted=3`` and its three ready contents, each taken for the
    VolumeSnapshot named in ``snapshots`` (None: the content names none)."""
    docs = _docs(FIXTURE)
    for d in docs:
        if d["kind"] == "Backup" and d["metadata"]["name"] == "daily-20261130":
            d["spec"]["snapshotMoveData"] = False
        if d["kind"] == "VolumeSnapshotContent" and "20261130" in d["metadata"]["name"]:
            name = snapshots[int(d["metadata"]["name"][-1])]
            if name is None:
                d["spec"].pop("volumeSnapshotRef")
            else:
                d["spec"]["volumeSnapshotRef"] = {"name": name, "namespace": "app"}
    return docs


NAMED = [
    "velero-vm1-root-ab1c0",
    "velero-vm1-data-x9z2q",
    "velero-persistent-state-for-vm1-abcde-k2m4n",
]


@pytest.mark.parametrize(
    ("snapshots", "status"),
    [
        # each disk's snapshot named: the counters stand
        (NAMED, "PASS"),
        # vm1-data's count is a snapshot of vm1-old, a PVC deleted since
        ([NAMED[0], "velero-vm1-old-x9z2q", NAMED[2]], "ERROR"),
        # a PVC whose name merely begins like the disk's is another PVC
        ([NAMED[0], "velero-vm1-datax-x9z2q", NAMED[2]], "ERROR"),
        # a content whose VolumeSnapshot Velero did not name (or none): nothing is told
        ([NAMED[0], "snap-of-something", NAMED[2]], "PASS"),
        ([NAMED[0], None, NAMED[2]], "PASS"),
    ],
)
def test_counters_prove_a_disk_only_when_its_snapshot_is_among_them(
    tmp_path: Path, snapshots: list[str | None], status: str
) -> None:
    finding = _finding(_audit(tmp_path, _csi_backup(snapshots)), "RR-BKP-004")
    assert finding["status"] == status, finding["message"]
    if status == "ERROR":
        assert "is of a VolumeSnapshot of PVC app/vm1-data" in finding["message"]


def test_snapshot_claim_reads_velero_s_generated_name() -> None:
    ref = {"volumeSnapshotRef": {"name": "velero-vm1-root-ab1c0", "namespace": "app"}}
    assert snapshot_claim(ref) == ("app", "velero-vm1-root-")
    assert velero_snapshot_prefix("vm1-root") == "velero-vm1-root-"
    # generateName is cut at 58 characters: a long PVC's prefix is a cut one
    long = "d" * 60
    cut = velero_snapshot_prefix(long)
    assert len(cut) == 58
    ref = {"volumeSnapshotRef": {"name": cut + "ab1c0", "namespace": "app"}}
    assert snapshot_claim(ref) == ("app", cut)
    for bad in (
        {"volumeSnapshotRef": {"name": "snap-1", "namespace": "app"}},
        {"volumeSnapshotRef": {"name": "velero-vm1-root-ab1c0"}},
        {"volumeSnapshotRef": {"name": 7, "namespace": "app"}},
        {"volumeSnapshotRef": "velero-vm1-root-ab1c0"},
        None,
    ):
        assert snapshot_claim(bad) is None, bad
