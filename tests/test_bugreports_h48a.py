"""Round h48a: a CSI snapshot cut after virt-freezer's own thaw.

KubeVirt's pre backup hook runs ``virt-freezer --freeze`` with its default 300 s unfreeze
timeout (kubevirt cmd/virt-freezer/virt-freezer.go ``unfreezeTimeoutSeconds``;
pkg/virt-launcher/virtwrap/storage/fsfreeze.go ``scheduleSafetyVMIUnfreeze``). Velero's CSI
action creates the VolumeSnapshot after the pre hook and waits for its content's snapshot
handle, up to ``csiSnapshotTimeout`` (10 min by default), before the post hook (velero
pkg/backup/actions/csi/pvc_action.go, pkg/util/csi/volume_snapshot.go
``WaitUntilVSCHandleIsReady``). The content's ``status.creationTime`` is when the storage cut
the snapshot (external-snapshotter client/apis/volumesnapshot/v1/types.go, Unix nanoseconds);
its ``metadata.creationTimestamp`` comes after the freeze. A cut more than 300 s after the
content was created came after the guest was thawed: crash-consistent only (the window
harvester/harvester#3976 and kubevirt/kubevirt PR #16653 describe; KubeVirt's own snapshots thaw
on ``creationTime``, kubevirt/kubevirt PR #8640). Round h45a judged only file-system copies
(PodVolumeBackups) against that window: READY with ``require_application_consistent``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.test_evidence_gaps import _docs, _finding
from tests.test_vm_side_r41b import _audit, _readiness

Docs = list[dict[str, Any]]

AGENT = "RR-BKP-011/pass-agent-connected.yaml"
CLAIMS = ("vm1-root", "vm1-data", "persistent-state-for-vm1-abcde")
CREATED = "2026-11-30T01:01:00Z"


def _ns(when: str, after_s: float) -> int:
    """``when`` (RFC 3339) plus ``after_s`` seconds, in Unix nanoseconds."""
    t = datetime.strptime(when, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    return int((t.timestamp() + after_s) * 1e9)


def _with_cuts(cut: dict[str, Any]) -> Docs:
    """RR-BKP-011's pass fixture (agent connected; newest backup daily-20261130) with that
    Backup's three VolumeSnapshotContents named for the VM's claims as Velero names their
    VolumeSnapshots, created at :data:`CREATED`, and ``status.creationTime`` set per claim
    from ``cut`` (claim -> value; an absent claim has none)."""
    docs = _docs(AGENT)
    contents = [
        d
        for d in docs
        if d["kind"] == "VolumeSnapshotContent"
        and d["metadata"]["labels"]["velero.io/backup-name"] == "daily-20261130"
    ]
    assert len(contents) == len(CLAIMS)
    for d, claim in zip(contents, CLAIMS, strict=True):
        d["metadata"]["creationTimestamp"] = CREATED
        d["spec"]["volumeSnapshotRef"] = {"name": f"velero-{claim}-x7k2p", "namespace": "app"}
        if claim in cut:
            d["status"]["creationTime"] = cut[claim]
    return docs


def test_a_snapshot_cut_after_the_thaw_is_crash_consistent(tmp_path: Path) -> None:
    report = _audit(
        tmp_path, _with_cuts({"vm1-root": _ns(CREATED, 2), "vm1-data": _ns(CREATED, 410)})
    )
    f = _finding(report, "RR-BKP-011")
    # before h48a: PASS, READY with require_application_consistent
    assert (f["status"], f["severity"], f["basis"]) == ("FAIL", "medium", "observed")
    assert f["evidence"]["backup"] == "daily-20261130"
    assert f["evidence"]["late_cuts"] == [
        "VolumeSnapshotContent snapcontent-daily-20261130-1 of PVC vm1-data was cut 410 s "
        "after it was created (status.creationTime against metadata.creationTimestamp)"
    ]
    assert "crash-consistent only" in f["message"]
    assert _readiness(report) == "AT_RISK"
    # the disks are still captured: only the freeze is missing
    assert _finding(report, "RR-BKP-004")["status"] == "PASS"


@pytest.mark.parametrize("after", [0, 5, 300])
def test_a_cut_within_the_freeze_keeps_the_pass(tmp_path: Path, after: int) -> None:
    report = _audit(tmp_path, _with_cuts({c: _ns(CREATED, after) for c in CLAIMS}))
    assert _finding(report, "RR-BKP-011")["status"] == "PASS"
    assert _readiness(report) == "READY"


def test_contents_without_a_cut_time_are_not_judged(tmp_path: Path) -> None:
    report = _audit(tmp_path, _with_cuts({}))
    assert _finding(report, "RR-BKP-011")["status"] == "PASS"
    assert _readiness(report) == "READY"


def test_a_cut_before_the_content_was_created_is_not_judged(tmp_path: Path) -> None:
    # a content re-created by a backup sync or a restore keeps the old cut time
    report = _audit(tmp_path, _with_cuts({"vm1-root": _ns(CREATED, -86400)}))
    assert _finding(report, "RR-BKP-011")["status"] == "PASS"


def test_a_late_cut_of_an_older_backup_is_not_the_newest(tmp_path: Path) -> None:
    docs = _docs(AGENT)
    older = [
        d
        for d in docs
        if d["kind"] == "VolumeSnapshotContent"
        and d["metadata"]["labels"]["velero.io/backup-name"] == "daily-20261128"
    ]
    for d, claim in zip(older, CLAIMS, strict=True):
        d["metadata"]["creationTimestamp"] = "2026-11-28T01:01:00Z"
        d["spec"]["volumeSnapshotRef"] = {"name": f"velero-{claim}-a1b2c", "namespace": "app"}
        d["status"]["creationTime"] = _ns("2026-11-28T01:01:00Z", 900)
    report = _audit(tmp_path, docs)
    assert _finding(report, "RR-BKP-011")["status"] == "PASS"
    assert _readiness(report) == "READY"


@pytest.mark.parametrize("bad", ["2026-11-30T01:08:00Z", True, -5, 1.7e18])
def test_an_unreadable_cut_time_leaves_the_freeze_unknown(tmp_path: Path, bad: Any) -> None:
    report = _audit(tmp_path, _with_cuts({"vm1-data": bad}))
    f = _finding(report, "RR-BKP-011")
    # malformed never improves: with the option ERROR medium (UNKNOWN), never a PASS
    assert (f["status"], f["severity"]) == ("ERROR", "medium")
    assert (
        "VolumeSnapshotContent snapcontent-daily-20261130-1 of PVC vm1-data"
        in (f["evidence"]["cut_time_unknown"][0])
    )
    assert _readiness(report) == "UNKNOWN"


def test_without_the_option_a_late_cut_is_an_info_fail(tmp_path: Path) -> None:
    from tests.test_bugreports_h47b import _audit as audit_with

    report = audit_with(
        tmp_path, AGENT, _with_cuts({"vm1-root": _ns(CREATED, 600)}), required=False
    )
    f = _finding(report, "RR-BKP-011")
    assert (f["status"], f["severity"]) == ("FAIL", "info")
    assert f["evidence"]["late_cuts"][0].startswith(
        "VolumeSnapshotContent snapcontent-daily-20261130-0 of PVC vm1-root was cut 600 s"
    )
    assert _readiness(report) == "READY"
