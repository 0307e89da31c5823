"""Malformed-input round h47c: an invalid enum value or an unreadable value of a
VirtualMachineSnapshot field that decides whether KubeVirt deletes the snapshot's content
(and the VolumeSnapshots the content owns) never keeps those VolumeSnapshots as copies.

The fixture is round s42's namespace-bound VM snapshot (no Backup; RR-STG-001 FAIL medium
while the snapshot copies each disk, FAIL high once none does). KubeVirt deletes the content of
a snapshot that is Failed, or still in progress past its ``spec.failureDeadline``, unless its
``deletionPolicy`` is ``Retain`` and the content is ready (kubevirt
pkg/storage/snapshot/snapshot.go ``vmSnapshotDeadlineExceeded``, ``shouldDeleteContent``;
pkg/storage/snapshot/util.go ``timeUntilDeadline``). The fields' types:
``VirtualMachineSnapshotPhase`` (InProgress, Succeeded, Failed, Deleting, Unknown),
``DeletionPolicy`` (Delete, Retain), ``FailureDeadline *metav1.Duration`` in
https://github.com/kubevirt/kubevirt/blob/main/staging/src/kubevirt.io/api/snapshot/v1beta1/types.go.

Before the round, ``phase: failed`` (a snapshot made under 5 minutes before, or without a
creation time) or a ``failureDeadline`` of ``60`` / ``"1 minute"`` / ``[1m]`` read as a
snapshot still good: its ready VolumeSnapshots counted, RR-STG-001 FAIL high -> FAIL medium,
nothing named.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from auditor.inventory.snapcopy import vm_snapshot_terminating
from auditor.kubevalues import parse_go_duration
from tests.test_evidence_gaps import _complete, _docs, _finding
from tests.test_false_alarms_fp15 import VM_SNAPSHOT, _alone
from tests.test_vm_snapshots_s42 import DATA_VS, _content, _vmsnap

Docs = list[dict[str, Any]]
AT = datetime(2026, 11, 30, 6, 0, 0, tzinfo=UTC)


def _audit(tmp_path: Path, change: Callable[[Docs], None]) -> tuple[dict[str, Any], list[Any], str]:
    docs = _docs(VM_SNAPSHOT)
    change(docs)
    report = _complete(tmp_path, VM_SNAPSHOT, docs)
    vm = next(v for v in report["vms"] if v["name"] == "vm1")
    return _finding(report, "RR-STG-001"), report["collection_problems"], vm["readiness"]


def _failed(phase: Any) -> Callable[[Docs], None]:
    """A snapshot whose content is not ready, with ``phase`` and no creation time (the
    fixture's): only the phase says whether it failed."""

    def change(docs: Docs) -> None:
        _vmsnap(docs)["status"].update(phase=phase, readyToUse=False)
        _content(docs)["status"]["readyToUse"] = False

    return change


def _in_progress_a_day(deadline: Any) -> Callable[[Docs], None]:
    """In progress since a day before the audit, with ``spec.failureDeadline`` ``deadline``."""

    def change(docs: Docs) -> None:
        _vmsnap(docs)["spec"]["failureDeadline"] = deadline
        _vmsnap(docs)["metadata"]["creationTimestamp"] = "2026-11-29T09:59:00Z"
        _vmsnap(docs)["status"].update(phase="InProgress", readyToUse=False)
        _content(docs)["status"]["readyToUse"] = False

    return change


def _retained(policy: Any) -> Callable[[Docs], None]:
    def change(docs: Docs) -> None:
        _vmsnap(docs)["spec"]["deletionPolicy"] = policy
        _vmsnap(docs)["status"]["phase"] = "Failed"

    return change


def _named(problems: list[Any], field: str) -> list[Any]:
    return [
        p
        for p in problems
        if p["kind"] == "VirtualMachineSnapshot" and p["name"] == "vm1-snap" and p["field"] == field
    ]


def test_the_baselines(tmp_path: Path) -> None:
    """Valid input: Failed takes the copies (FAIL high), as does a 1m deadline passed a day
    ago; a failed Retain snapshot with a ready content keeps them (FAIL medium)."""
    for i, change in enumerate([_failed("Failed"), _in_progress_a_day("1m")]):
        f, problems, readiness = _audit(tmp_path / str(i), change)
        assert (f["status"], f["severity"], readiness) == ("FAIL", "high", "NOT_READY")
        assert problems == []
    f, problems, _ = _audit(tmp_path / "r", _retained("Retain"))
    assert (f["status"], f["severity"]) == ("FAIL", "medium")
    assert problems == []


@pytest.mark.parametrize("phase", ["failed", "Failure", "Error", "", None])
def test_a_phase_kubevirt_never_writes_is_named_and_no_better_than_failed(
    tmp_path: Path, phase: Any
) -> None:
    """Before: FAIL medium (the copies kept), nothing named. Now the phase is named and the
    snapshot unread: RR-STG-001 ERROR high, the VM NOT_READY as with ``Failed`` (RR-BKP-001 FAILs high: no
    Backup)."""
    f, problems, readiness = _audit(tmp_path, _failed(phase))
    assert (f["status"], f["severity"], readiness) == ("ERROR", "high", "NOT_READY")
    (problem,) = _named(problems, "status.phase")
    assert "not one of InProgress, Succeeded, Failed" in problem["reason"] or phase is None


@pytest.mark.parametrize("deadline", [60, "1 minute", ["1m"], "1x", None])
def test_an_unreadable_failure_deadline_is_named_and_no_better(
    tmp_path: Path, deadline: Any
) -> None:
    """Before: the deadline unread meant no deadline, the ready VolumeSnapshots kept (FAIL
    medium), nothing named. Now ERROR high naming ``spec.failureDeadline``."""
    f, problems, readiness = _audit(tmp_path, _in_progress_a_day(deadline))
    assert (f["status"], f["severity"], readiness) == ("ERROR", "high", "NOT_READY")
    (problem,) = _named(problems, "spec.failureDeadline")
    assert "metav1.Duration" in problem["reason"]


@pytest.mark.parametrize(("deadline", "severity"), [("-1m", "high"), ("0", "medium")])
def test_a_signed_or_zero_deadline_is_a_go_duration(
    tmp_path: Path, deadline: str, severity: str
) -> None:
    """Go's ParseDuration takes a sign (a deadline already passed) and ``0`` (none): valid,
    not named; ``-1m`` ends the snapshot (its copies go), ``0`` sets no deadline."""
    f, problems, _ = _audit(tmp_path, _in_progress_a_day(deadline))
    assert (f["status"], f["severity"]) == ("FAIL", severity)
    assert _named(problems, "spec.failureDeadline") == []


@pytest.mark.parametrize("policy", ["retain", ["Retain"], None])
def test_a_deletion_policy_outside_the_enum_is_named(tmp_path: Path, policy: Any) -> None:
    """``retain`` was read as Delete (FAIL high, worse) but unnamed; now ERROR high naming
    ``spec.deletionPolicy`` (KubeVirt itself reads any non-nil value but ``Delete`` as
    keeping the content: ``deleteContentPolicy``)."""
    f, problems, readiness = _audit(tmp_path, _retained(policy))
    assert (f["status"], f["severity"], readiness) == ("ERROR", "high", "NOT_READY")
    assert len(_named(problems, "spec.deletionPolicy")) == 1


def test_the_reader_takes_an_unknown_phase_or_deadline_as_ending() -> None:
    """``vm_snapshot_terminating`` on its own: an unknown phase or an unreadable deadline
    may be a failed snapshot (True); Succeeded never ends by its deadline."""
    made = {"creationTimestamp": "2026-11-30T05:59:00Z"}  # a minute before AT
    assert vm_snapshot_terminating({"metadata": made, "status": {"phase": "failed"}}, AT)
    assert vm_snapshot_terminating({"metadata": made, "status": {"phase": "failed"}}, None)
    assert not vm_snapshot_terminating({"metadata": made, "status": {"phase": "InProgress"}}, AT)
    bad = {"metadata": made, "spec": {"failureDeadline": 30}, "status": {"phase": "InProgress"}}
    assert vm_snapshot_terminating(bad, AT)
    done = {"metadata": made, "spec": {"failureDeadline": 30}, "status": {"phase": "Succeeded"}}
    assert not vm_snapshot_terminating(done, AT)


def test_parse_go_duration() -> None:
    assert parse_go_duration("5m0s") == timedelta(minutes=5)
    assert parse_go_duration("-1m") == timedelta(minutes=-1)
    assert parse_go_duration("+1.5h") == timedelta(minutes=90)
    assert parse_go_duration("0") == timedelta(0)
    for bad in (60, "60", "1 minute", "", "-", ["1m"], None, "1x"):
        assert parse_go_duration(bad) is None, bad


# -- a scalar, a mapping or a null where a snapshot's list or error object is read ----------
#
# ``SnapshotVolumesLists.ExcludedVolumes []string``, ``VirtualMachineSnapshotContentStatus.
# VolumeSnapshotStatus []VolumeSnapshotStatus`` and ``Error *Error`` ({time, message}) in
# https://github.com/kubevirt/kubevirt/blob/main/staging/src/kubevirt.io/api/snapshot/v1beta1/types.go.
# Before the round, ``excludedVolumes: data`` read as "nothing excluded", a per-volume status
# written as a mapping or null as "not written", and ``error: []`` / ``0`` as "no error": the
# VM snapshot counted as the data disk's copy (RR-STG-001 FAIL high -> FAIL medium), unnamed.

NOT_READY = [
    {"volumeSnapshotName": "vmsnapshot-uid-vms-volume-root", "readyToUse": True},
    {"volumeSnapshotName": DATA_VS, "readyToUse": False},
]


def _stg_alone(
    tmp_path: Path, change: Callable[[Docs], None]
) -> tuple[str, str, dict[str, int], list[Any]]:
    docs = _alone(_docs(VM_SNAPSHOT))
    change(docs)
    report = _complete(tmp_path, VM_SNAPSHOT, docs)
    f = _finding(report, "RR-STG-001")
    copies = {r["pvc"]: r["copies"] for r in f["evidence"]["disks"]}
    return f["status"], f["severity"], copies, report["collection_problems"]


def _field_named(problems: list[Any], kind: str, field: str) -> bool:
    return any(p["kind"] == kind and p["field"] == field for p in problems)


def _set(where: Callable[[Docs], dict[str, Any]], key: str, value: Any) -> Callable[[Docs], None]:
    def change(docs: Docs) -> None:
        where(docs)[key] = value

    return change


def _lists(docs: Docs) -> dict[str, Any]:
    return _vmsnap(docs)["status"]["snapshotVolumes"]


def _vmsnap_status(docs: Docs) -> dict[str, Any]:
    return _vmsnap(docs)["status"]


def _content_status(docs: Docs) -> dict[str, Any]:
    return _content(docs)["status"]


def test_the_list_and_error_baselines(tmp_path: Path) -> None:
    """Valid input: the data disk excluded, its per-volume status not ready, or an error
    set: no copy of the data disk (FAIL high), nothing named."""
    for i, change in enumerate(
        [
            _set(_lists, "excludedVolumes", ["data"]),
            _set(_content_status, "volumeSnapshotStatus", NOT_READY),
            _set(_vmsnap_status, "error", {"message": "VolumeSnapshot x error: quota"}),
            _set(_content_status, "error", {"message": "VolumeSnapshots (x) missing"}),
        ]
    ):
        status, severity, copies, problems = _stg_alone(tmp_path / str(i), change)
        assert (status, severity, copies["vm1-data"]) == ("FAIL", "high", 0)
        assert problems == []


@pytest.mark.parametrize("value", ["data", {"data": 1}, 42, [["data"]]])
def test_excluded_volumes_of_another_type_exclude_the_disk(tmp_path: Path, value: Any) -> None:
    status, severity, copies, problems = _stg_alone(
        tmp_path, _set(_lists, "excludedVolumes", value)
    )
    assert (status, severity, copies["vm1-data"]) == ("FAIL", "high", 0)
    assert _field_named(
        problems, "VirtualMachineSnapshot", "status.snapshotVolumes.excludedVolumes"
    )


@pytest.mark.parametrize("key", ["includedVolumes", "excludedVolumes"])
def test_a_null_volume_list_is_named_and_leaves_the_snapshot_unread(
    tmp_path: Path, key: str
) -> None:
    """Null where the list is read (the API server never stores one): ERROR high."""
    status, severity, _, problems = _stg_alone(tmp_path, _set(_lists, key, None))
    assert (status, severity) == ("ERROR", "high")
    assert _field_named(problems, "VirtualMachineSnapshot", f"status.snapshotVolumes.{key}")


@pytest.mark.parametrize("value", [NOT_READY[1], "x", 42, True, None])
def test_a_per_volume_status_that_is_no_list_shows_no_copy(tmp_path: Path, value: Any) -> None:
    status, severity, copies, problems = _stg_alone(
        tmp_path, _set(_content_status, "volumeSnapshotStatus", value)
    )
    assert (status, severity, copies["vm1-data"]) == ("FAIL", "high", 0)
    assert _field_named(problems, "VirtualMachineSnapshotContent", "status.volumeSnapshotStatus")


def test_an_empty_per_volume_status_holds_no_entry(tmp_path: Path) -> None:
    """``[]`` (which KubeVirt's omitempty never writes) holds no entry for the data disk's
    VolumeSnapshot: no copy shown, as with an entry not ready (before: read as "not
    written", FAIL medium)."""
    status, severity, copies, _ = _stg_alone(
        tmp_path, _set(_content_status, "volumeSnapshotStatus", [])
    )
    assert (status, severity, copies["vm1-data"]) == ("FAIL", "high", 0)


@pytest.mark.parametrize("value", [[], 0, False, "", None])
def test_a_vm_snapshot_error_of_another_type_is_named_and_no_better(
    tmp_path: Path, value: Any
) -> None:
    status, severity, copies, problems = _stg_alone(tmp_path, _set(_vmsnap_status, "error", value))
    assert (status, severity) == ("ERROR", "high")
    assert _field_named(problems, "VirtualMachineSnapshot", "status.error")


@pytest.mark.parametrize("value", [[], 0, False, "", None])
def test_a_content_error_of_another_type_shows_no_copy(tmp_path: Path, value: Any) -> None:
    status, severity, copies, problems = _stg_alone(tmp_path, _set(_content_status, "error", value))
    assert (status, severity, copies["vm1-data"]) == ("FAIL", "high", 0)
    assert _field_named(problems, "VirtualMachineSnapshotContent", "status.error")


# -- a Restore's switch of another type, or null --------------------------------------------
#
# ``RestoreSpec.RestorePVs *bool`` (also ``PreserveNodePorts``, ``IncludeClusterResources``)
# in https://github.com/vmware-tanzu/velero/blob/main/pkg/apis/velero/v1/restore_types.go.
# Before the round ``restorePVs: "false"`` (or 0, a list, null, "") read as unset: the drill
# that restored no volume data passed RR-RST-001 (FAIL info -> PASS medium), nothing named.

RESTORE_PVS_FALSE = "RR-RST-001/fail-restorepvs-false.yaml"


def _restore_pvs(tmp_path: Path, value: Any) -> tuple[dict[str, Any], str, list[Any]]:
    docs = _docs(RESTORE_PVS_FALSE)
    restore = next(d for d in docs if d.get("kind") == "Restore")
    restore["spec"]["restorePVs"] = value
    report = _complete(tmp_path, RESTORE_PVS_FALSE, docs)
    return (
        _finding(report, "RR-RST-001"),
        report["vms"][0]["readiness"],
        report["collection_problems"],
    )


def test_restore_pvs_false_is_the_baseline(tmp_path: Path) -> None:
    f, readiness, problems = _restore_pvs(tmp_path, False)
    assert (f["status"], f["severity"], readiness) == ("FAIL", "info", "READY")
    assert problems == []


@pytest.mark.parametrize("value", ["false", "False", 0, ["false"], {"x": 1}, None, ""])
def test_restore_pvs_of_another_type_is_named_and_never_a_pass(tmp_path: Path, value: Any) -> None:
    f, readiness, problems = _restore_pvs(tmp_path, value)
    assert f["status"] == "ERROR"
    assert readiness == "UNKNOWN"  # a medium ERROR: AT_RISK at worst, never READY
    assert any(p["kind"] == "Restore" and p["field"] == "spec.restorePVs" for p in problems)


# -- a snapshot's deletionTimestamp that is no time -----------------------------------------
#
# ``ObjectMeta.DeletionTimestamp *metav1.Time`` (RFC 3339,
# https://github.com/kubernetes/apimachinery/blob/master/pkg/apis/meta/v1/types.go): any
# value set reads as "being deleted" (the copy goes with it, never better); one that is no
# time (42, "", a list) was so read with nothing named (bench.mutations absent_typed probe,
# seed 4722). Now named at the field, the verdict as with a real deletion.


@pytest.mark.parametrize(
    "kind",
    [
        "VolumeSnapshot",
        "VolumeSnapshotContent",
        "VirtualMachineSnapshot",
        "VirtualMachineSnapshotContent",
    ],
)
@pytest.mark.parametrize("value", [42, "", ["x"], "yesterday"])
def test_a_deletion_timestamp_that_is_no_time_is_named(
    tmp_path: Path, kind: str, value: Any
) -> None:
    def change(docs: Docs) -> None:
        [d for d in docs if d.get("kind") == kind][-1]["metadata"]["deletionTimestamp"] = value

    status, severity, _, problems = _stg_alone(tmp_path, change)
    assert (status, severity) == ("FAIL", "high")  # as being deleted: no copy, never better
    assert _field_named(problems, kind, "metadata.deletionTimestamp")


@pytest.mark.parametrize("field", ["readyToUse", "boundVolumeSnapshotContentName", "error"])
def test_a_volume_snapshot_status_field_written_null_is_named(tmp_path: Path, field: str) -> None:
    """A VolumeSnapshot's ``status.readyToUse: null`` (``*bool``, omitempty: the API server
    prunes a null) read as "not ready" (worse) with nothing named; now named and the snapshot
    unread: RR-STG-001 ERROR high (the baseline, the data disk's snapshot ready, FAIL medium)."""

    def change(docs: Docs) -> None:
        snap = next(
            d
            for d in docs
            if d.get("kind") == "VolumeSnapshot" and d["metadata"]["name"] == DATA_VS
        )
        snap["status"][field] = None

    status, severity, _, problems = _stg_alone(tmp_path, change)
    assert (status, severity) == ("ERROR", "high")
    assert _field_named(problems, "VolumeSnapshot", f"status.{field}")
