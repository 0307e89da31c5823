"""Round h47b: two more kinds of fault from public reports where a restore point looks fine.

1. A VirtualMachineSnapshot taken while the VM ran without a freeze. KubeVirt records it in
   ``status.indications`` and ``status.sourceIndications``: ``Online`` with ``NoGuestAgent``
   ("Snapshot is crash-consistent and may not be application-consistent"), ``Paused`` or
   ``QuiesceTimeout`` (kubevirt pkg/storage/snapshot/snapshot.go
   ``updateSnapshotSourceIndications``; openshift-docs#95466). RR-BKP-011 judged only the
   guest agent now and the newest Velero backup: with ``require_application_consistent`` a VM
   whose newest restore point was such a snapshot read READY (a stopped VM: N/A).
2. A DataVolume that finished filling its PVC after a Backup began. The kubevirt plugin
   marks the PVC of a DataVolume not yet Succeeded ``kvp.kubevirt.io/storage.inprogress``
   and the restore skips it (kubevirt-velero-plugin PR #66; pkg/plugin/
   dv_backup_item_action.go ``handlePVC``, pvc_restore_item_action.go ``Execute``); without
   the plugin the half-filled copy is restored. The auditor read today's phase only: READY.
   The time is the ``Ready`` condition's ``lastTransitionTime`` (CDI
   pkg/controller/datavolume/controller-base.go ``updateConditions``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.test_check_fixtures import audit_fixture
from tests.test_evidence_gaps import FIXTURES, _docs, _finding

Docs = list[dict[str, Any]]

AGENT = "RR-BKP-011/pass-agent-connected.yaml"
SNAP = "RR-STG-001/fail-only-namespace-bound-vm-snapshot.yaml"
DV = "RR-BKP-001/pass-datavolume-templates-with-datavolumes-excluded.yaml"
REQUIRED = '# settings: {"thresholds": {"require_application_consistent": true}}'
_SNAP_KINDS = {
    "VirtualMachineSnapshot",
    "VirtualMachineSnapshotContent",
    "VolumeSnapshot",
    "VolumeSnapshotContent",
}


def _audit(tmp_path: Path, fixture: str, docs: Docs, *, required: bool) -> dict[str, Any]:
    """Audit ``docs`` with ``fixture``'s header (its unavailable kinds), with or without
    ``require_application_consistent``."""
    head = [ln for ln in (FIXTURES / fixture).read_text().splitlines() if ln.startswith("#")]
    head += [REQUIRED] if required else []
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "c.yaml"
    path.write_text("\n".join(head) + "\n" + yaml.safe_dump_all(docs))
    return audit_fixture(path)


def _readiness(report: dict[str, Any]) -> str:
    return str(next(v for v in report["vms"] if v["name"] == "vm1")["readiness"])


def _with_vm_snapshot(
    status: dict[str, Any], *, taken: str = "2026-11-30T03:00:00Z", stopped: bool = False
) -> Docs:
    """RR-BKP-011's pass fixture (agent connected; newest backup daily-20261130 began at
    01:00) plus the VM snapshot of RR-STG-001's fixture (content and VolumeSnapshots of both
    disks), taken at ``taken``, its status updated with ``status``; ``stopped``: the VM
    halted and its VMI gone."""
    docs = _docs(AGENT)
    have = {(d["kind"], d["metadata"]["name"]) for d in docs}
    for d in _docs(SNAP):
        if d["kind"] in _SNAP_KINDS and (d["kind"], d["metadata"]["name"]) not in have:
            if d["kind"] == "VirtualMachineSnapshot":
                d["status"].pop("indications", None)
                d["status"].update(status, creationTime=taken)
            docs.append(d)
    if stopped:
        docs = [d for d in docs if d["kind"] != "VirtualMachineInstance"]
        for d in docs:
            if d["kind"] == "VirtualMachine":
                d["spec"].pop("running", None)
                d["spec"]["runStrategy"] = "Halted"
    return docs


NO_AGENT = {"indications": ["Online", "NoGuestAgent"]}


def test_the_fixture_without_a_vm_snapshot_is_ready(tmp_path: Path) -> None:
    report = _audit(tmp_path, AGENT, _docs(AGENT), required=True)
    assert _finding(report, "RR-BKP-011")["status"] == "PASS"
    assert _readiness(report) == "READY"


@pytest.mark.parametrize(
    ("status", "named"),
    [
        (NO_AGENT, "status.indications=['NoGuestAgent', 'Online']: no guest agent answered"),
        (
            {"indications": ["Online", "Paused"]},
            "status.indications=['Online', 'Paused']: the VM was paused",
        ),
        (
            {"indications": ["GuestAgent", "Online", "QuiesceTimeout"]},
            "the guest agent's freeze window ran out",
        ),
        # KubeVirt v1.8+ writes sourceIndications too; one without the old field is read
        (
            {
                "sourceIndications": [
                    {"indication": "Online", "message": "m"},
                    {"indication": "NoGuestAgent", "message": "m"},
                ]
            },
            "status.sourceIndications=['NoGuestAgent', 'Online']",
        ),
        # Online with no agent indication records no freeze
        ({"indications": ["Online"]}, "no GuestAgent indication records a freeze"),
    ],
)
def test_a_newer_crash_consistent_vm_snapshot_fails(
    tmp_path: Path, status: dict[str, Any], named: str
) -> None:
    report = _audit(tmp_path, AGENT, _with_vm_snapshot(status), required=True)
    f = _finding(report, "RR-BKP-011")
    assert (f["status"], f["severity"], f["basis"]) == ("FAIL", "medium", "observed")
    assert "newest restore point is VirtualMachineSnapshot vm1-snap" in f["message"]
    assert "newer than its newest usable backup daily-20261130" in f["message"]
    assert named in f["evidence"]["crash_consistent_snapshot"]
    assert f["evidence"]["vm_snapshot"] == "vm1-snap"
    # before h47b: PASS ("has a connected guest agent"), READY
    assert _readiness(report) == "AT_RISK"


def test_without_the_option_it_is_an_info_notice(tmp_path: Path) -> None:
    report = _audit(tmp_path, AGENT, _with_vm_snapshot(NO_AGENT), required=False)
    f = _finding(report, "RR-BKP-011")
    assert (f["status"], f["severity"]) == ("FAIL", "info")
    assert "crash-consistent only" in f["message"]
    assert _readiness(report) == "READY"


def test_a_stopped_vm_whose_newest_point_ran_unfrozen_is_no_longer_na(tmp_path: Path) -> None:
    report = _audit(tmp_path, AGENT, _with_vm_snapshot(NO_AGENT, stopped=True), required=True)
    f = _finding(report, "RR-BKP-011")
    # before h47b: NOT_APPLICABLE ("its disks are at rest"), READY
    assert (f["status"], f["severity"]) == ("FAIL", "medium")
    assert f["evidence"]["agent_connected"] is None
    assert "NoGuestAgent" in f["evidence"]["crash_consistent_snapshot"]
    assert _readiness(report) == "AT_RISK"


@pytest.mark.parametrize(
    ("status", "taken", "stopped", "expected"),
    [
        # frozen by the agent
        ({"indications": ["GuestAgent", "Online"]}, "2026-11-30T03:00:00Z", False, "PASS"),
        # offline: KubeVirt writes no indications for a stopped VM
        ({}, "2026-11-30T03:00:00Z", True, "NOT_APPLICABLE"),
        # older than the newest backup (began 01:00), which is judged on its own
        (NO_AGENT, "2026-11-29T10:00:00Z", False, "PASS"),
    ],
)
def test_a_frozen_offline_or_older_vm_snapshot_keeps_the_result(
    tmp_path: Path, status: dict[str, Any], taken: str, stopped: bool, expected: str
) -> None:
    docs = _with_vm_snapshot(status, taken=taken, stopped=stopped)
    report = _audit(tmp_path, AGENT, docs, required=True)
    assert _finding(report, "RR-BKP-011")["status"] == expected
    assert _readiness(report) == "READY"


def test_a_vm_snapshot_that_is_not_a_copy_is_not_judged(tmp_path: Path) -> None:
    docs = _with_vm_snapshot({**NO_AGENT, "readyToUse": False})
    report = _audit(tmp_path, AGENT, docs, required=True)
    assert _finding(report, "RR-BKP-011")["status"] == "PASS"


def test_unreadable_indications_are_named_never_passed(tmp_path: Path) -> None:
    docs = _with_vm_snapshot({"indications": "Online,NoGuestAgent"})
    report = _audit(tmp_path, AGENT, docs, required=True)
    f = _finding(report, "RR-BKP-011")
    assert (f["status"], f["severity"]) == ("ERROR", "medium")
    assert (
        "status.indications is 'Online,NoGuestAgent', not a list of strings"
        in (f["evidence"]["snapshot_freeze_unknown"])
    )
    assert _readiness(report) == "UNKNOWN"


def test_no_agent_now_names_the_crash_consistent_snapshot(tmp_path: Path) -> None:
    docs = _with_vm_snapshot(NO_AGENT)
    for d in docs:
        if d["kind"] == "VirtualMachineInstance":
            d["status"]["conditions"] = [
                c for c in d["status"]["conditions"] if c["type"] != "AgentConnected"
            ]
    report = _audit(tmp_path, AGENT, docs, required=True)
    f = _finding(report, "RR-BKP-011")
    assert (f["status"], f["severity"]) == ("FAIL", "medium")
    assert "runs without a connected guest agent" in f["message"]
    assert "NoGuestAgent" in f["evidence"]["crash_consistent_snapshot"]


# -- 2. a DataVolume filled after the Backup began -------------------------------------------


def _dv_ready_at(
    when: object, *, created: str = "2026-11-20T00:00:00Z", drop_time: bool = False
) -> Docs:
    """RR-BKP-001's DataVolume fixture (backups daily-20261130, 01:00 to 01:15, and
    daily-20261128) with DataVolume vm1-root Ready since ``when``."""
    docs = _docs(DV)
    for d in docs:
        if d["kind"] == "DataVolume" and d["metadata"]["name"] == "vm1-root":
            d["metadata"]["creationTimestamp"] = created
            cond = {"type": "Ready", "status": "True", "reason": "", "message": ""}
            if not drop_time:
                cond["lastTransitionTime"] = when
            d["status"]["conditions"] = [
                {"type": "Bound", "status": "True", "lastTransitionTime": created},
                cond,
            ]
    return docs


def test_the_datavolume_fixture_is_ready(tmp_path: Path) -> None:
    report = _audit(tmp_path, DV, _dv_ready_at("2026-11-20T00:10:00Z"), required=False)
    assert _finding(report, "RR-BKP-004")["status"] == "PASS"
    assert _readiness(report) == "READY"


def test_filled_after_the_newest_backup_completed_is_no_copy(tmp_path: Path) -> None:
    report = _audit(tmp_path, DV, _dv_ready_at("2026-11-30T01:30:00Z"), required=False)
    f = _finding(report, "RR-BKP-004")
    assert (f["status"], f["severity"]) == ("FAIL", "high")
    assert "DataVolume vm1-root turned Ready (Succeeded) at 2026-11-30T01:30:00Z" in f["message"]
    assert "after backup daily-20261130 completed (2026-11-30T01:15:00Z)" in f["message"]
    assert "kvp.kubevirt.io/storage.inprogress" in f["message"]
    row = next(r for r in f["evidence"]["pvcs"] if r["pvc"] == "vm1-root")
    assert row["status"] == "failed"
    # before h47b: PASS on today's phase, READY
    assert _readiness(report) == "NOT_READY"


def test_filled_while_the_backup_ran_is_unknown(tmp_path: Path) -> None:
    report = _audit(tmp_path, DV, _dv_ready_at("2026-11-30T01:10:00Z"), required=False)
    f = _finding(report, "RR-BKP-004")
    assert (f["status"], f["severity"]) == ("ERROR", "high")
    assert "after backup daily-20261130 began (2026-11-30T01:00:00Z)" in f["message"]
    assert "before it completed" in f["message"]
    assert _readiness(report) == "UNKNOWN"


def test_filled_between_two_backups_fails_only_the_older(tmp_path: Path) -> None:
    report = _audit(tmp_path, DV, _dv_ready_at("2026-11-29T00:00:00Z"), required=False)
    assert _finding(report, "RR-BKP-004")["status"] == "PASS"
    # the drill restored the older backup, taken before the disk was filled
    rst = _finding(report, "RR-RST-001")
    assert "Backup daily-20261128 did not capture PVC vm1-root" in rst["message"]
    assert _readiness(report) == "READY"


def test_a_datavolume_created_after_the_backup_began_is_another_object(tmp_path: Path) -> None:
    # re-created (by a restore, say) after both backups: they hold the earlier DataVolume
    docs = _dv_ready_at("2026-11-30T03:00:00Z", created="2026-11-30T02:50:00Z")
    report = _audit(tmp_path, DV, docs, required=False)
    assert _finding(report, "RR-BKP-004")["status"] == "PASS"


@pytest.mark.parametrize(
    ("when", "drop", "named"),
    [
        ("30/11/2026 01:30", False, "is '30/11/2026 01:30', not an RFC 3339 time"),
        (None, True, "is missing"),
    ],
)
def test_a_broken_ready_time_is_named_never_a_capture(
    tmp_path: Path, when: object, drop: bool, named: str
) -> None:
    report = _audit(tmp_path, DV, _dv_ready_at(when, drop_time=drop), required=False)
    problems = [
        p
        for p in report["collection_problems"]
        if "status.conditions[1].lastTransitionTime" in str(p)
    ]
    assert problems and named in str(problems[0])
    f = _finding(report, "RR-BKP-004")
    assert (f["status"], f["severity"]) == ("ERROR", "high")
    assert "status.conditions[1].lastTransitionTime" in f["message"]
    assert _readiness(report) == "UNKNOWN"


def test_no_ready_condition_claims_nothing(tmp_path: Path) -> None:
    docs = _docs(DV)  # the fixture's DataVolumes carry no conditions: as before
    report = _audit(tmp_path, DV, docs, required=False)
    assert _finding(report, "RR-BKP-004")["status"] == "PASS"
    assert _readiness(report) == "READY"


# -- 3. a backup of a paused VM ---------------------------------------------------------------


def _paused(since: str | None) -> Docs:
    """RR-BKP-011's pass fixture with its VMI paused (condition ``Paused`` True) since
    ``since`` (None: no lastTransitionTime)."""
    docs = _docs(AGENT)
    for d in docs:
        if d["kind"] == "VirtualMachineInstance":
            cond: dict[str, Any] = {"type": "Paused", "status": "True", "reason": "PausedByUser"}
            if since is not None:
                cond["lastTransitionTime"] = since
            d["status"]["conditions"].append(cond)
    return docs


def test_a_backup_of_a_paused_vm_froze_nothing(tmp_path: Path) -> None:
    report = _audit(tmp_path, AGENT, _paused("2026-11-29T00:00:00Z"), required=True)
    f = _finding(report, "RR-BKP-011")
    assert (f["status"], f["severity"], f["basis"]) == ("FAIL", "medium", "observed")
    assert "skips a paused one" in f["message"]
    assert f["evidence"]["backup"] == "daily-20261130"
    assert "paused since 2026-11-29T00:00:00Z" in f["evidence"]["paused_during_backup"]
    # before h47b: PASS ("has a connected guest agent"), READY
    assert _readiness(report) == "AT_RISK"


def test_paused_after_the_backup_began_keeps_the_pass(tmp_path: Path) -> None:
    report = _audit(tmp_path, AGENT, _paused("2026-11-30T02:00:00Z"), required=True)
    assert _finding(report, "RR-BKP-011")["status"] == "PASS"
    assert _readiness(report) == "READY"


def test_paused_since_an_unknown_time_is_no_pass(tmp_path: Path) -> None:
    report = _audit(tmp_path, AGENT, _paused(None), required=True)
    f = _finding(report, "RR-BKP-011")
    assert (f["status"], f["severity"]) == ("ERROR", "medium")
    assert "since an unknown time" in f["evidence"]["paused_unknown"]
    assert _readiness(report) == "UNKNOWN"
    report = _audit(tmp_path / "info", AGENT, _paused(None), required=False)
    f = _finding(report, "RR-BKP-011")
    assert (f["status"], f["severity"], f["basis"]) == ("FAIL", "info", "inferred")
