"""Red-team round rt36: objects a VM's restore needs that Velero skipped because they were
being deleted when a Backup reached them.

Velero skips every item whose ``metadata.deletionTimestamp`` is set, whatever the Backup's
filters say ("Skipping item because it's being deleted.", velero pkg/backup/item_backupper.go
``itemInclusionChecks``), and a finalizer keeps such an object readable meanwhile: a bound
PersistentVolume (``kubernetes.io/pv-protection``), a NAD OVN-Kubernetes manages. The VM and
its PVCs already had the rule; the PV a native snapshot is taken with and the NAD a Multus NIC
attaches to did not, and the VM read READY.

Each test changes one project fixture and asserts the verdict beside the healthy shape.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.test_evidence_gaps import _being_deleted, _complete, _finding, _named

Docs = list[dict[str, Any]]

#: app/vm1 with Backups daily-20261128 and daily-20261130 (began 01:00), audited
#: 2026-11-30T06:00Z; vm1-data on an in-tree NFS PV copied by the Backup's one native snapshot
NATIVE = "RR-BKP-004/pass.yaml"
#: the same VM with a bridge NIC on the Multus network vlan10 (NAD app/vlan10)
NAD_PASS = "RR-NET-002/pass.yaml"


def _readiness(report: dict[str, Any], vm: str = "vm1") -> str:
    return str(next(v for v in report["vms"] if v["name"] == vm)["readiness"])


def _native_disk(deleting: str | None, *, scratch: bool = False) -> Docs:
    """vm1-data natively snapshotted (counters 1/1), its PV deleted at ``deleting`` while
    still bound; ``scratch``: beside another PV of no VM whose native snapshot the one counted
    may be."""
    from tests.test_red_team_rt22 import _data_disk_on_nfs
    from tests.test_red_team_rt27 import _with_scratch_on_nfs

    docs = _data_disk_on_nfs((1, 1))
    if scratch:
        docs = _with_scratch_on_nfs(docs)
    if deleting is not None:
        pv = _named(docs, "PersistentVolume", "pv-app-vm1-data")
        pv["metadata"]["deletionTimestamp"] = deleting
        pv["metadata"]["finalizers"] = ["kubernetes.io/pv-protection"]
    return docs


@pytest.mark.parametrize("scratch", [False, True])
def test_a_native_snapshot_disk_whose_pv_was_being_deleted_is_not_captured(
    tmp_path: Path, scratch: bool
) -> None:
    """A PV deleted while its claim is bound stays Terminating (pv-protection); Velero skips
    the PV item and takes its volume snapshotter's snapshot only while backing that item up
    (takePVSnapshot), so no Backup since holds vm1-data. The one native snapshot counted is
    another PV's: one gone since (a scratch claim deleted after the Backup), read as
    vm1-data's, made the VM READY; the scratch PV still there left it UNKNOWN."""
    report = _complete(tmp_path, NATIVE, _native_disk("2026-11-20T00:00:00Z", scratch=scratch))
    finding = _finding(report, "RR-BKP-004")
    assert (finding["status"], finding["severity"]) == ("FAIL", "high"), finding["message"]
    pvcs = {p["pvc"]: p for p in finding["evidence"]["pvcs"]}
    assert pvcs["vm1-data"]["status"] == "not_attempted"
    assert (
        "pv-app-vm1-data has been in deletion since 2026-11-20T00:00:00Z"
        in (pvcs["vm1-data"]["reason"])
    )
    assert pvcs["vm1-root"]["status"] == "captured"
    assert _readiness(report) == "NOT_READY"


def test_a_pv_deleted_after_the_newest_backup_began_is_in_it_but_not_in_the_next(
    tmp_path: Path,
) -> None:
    """Deleted at 03:00, after daily-20261130 began (01:00): that Backup took the PV and its
    snapshot (RR-BKP-004 PASS), but the next one will skip it (RR-BKP-013 FAIL): AT_RISK,
    never READY."""
    report = _complete(tmp_path, NATIVE, _native_disk("2026-11-30T03:00:00Z"))
    assert _finding(report, "RR-BKP-004")["status"] == "PASS"
    nxt = _finding(report, "RR-BKP-013")
    assert nxt["status"] == "FAIL", nxt["message"]
    assert "pv-app-vm1-data has been in deletion since" in nxt["message"]
    assert _readiness(report) == "AT_RISK"


def test_a_pv_deletion_time_that_is_no_time_leaves_the_disk_unknown(tmp_path: Path) -> None:
    """A deletionTimestamp the API server could not have written neither proves the PV taken
    nor skipped: RR-BKP-004 is no PASS and the VM is not READY."""
    report = _complete(tmp_path, NATIVE, _native_disk("yesterday"))
    finding = _finding(report, "RR-BKP-004")
    assert finding["status"] in ("ERROR", "FAIL"), finding["message"]
    assert _readiness(report) in ("UNKNOWN", "NOT_READY")


def test_a_native_snapshot_disk_whose_pv_is_not_being_deleted_stays_captured(
    tmp_path: Path,
) -> None:
    """The healthy shape of the same export."""
    report = _complete(tmp_path, NATIVE, _native_disk(None))
    assert _finding(report, "RR-BKP-004")["status"] == "PASS"


# -- the NAD a Multus NIC attaches to ------------------------------------------------------


def _nad_deleting(tmp_path: Path, deleting: str | None) -> dict[str, Any]:
    keep = "k8s.ovn.org/user-defined-network-protection"
    return _being_deleted(
        tmp_path, NAD_PASS, "NetworkAttachmentDefinition", "vlan10", deleting, keep
    )


def test_a_nad_being_deleted_before_the_backups_began_is_in_none_of_them(
    tmp_path: Path,
) -> None:
    """The NAD was deleted on 2026-11-27, before both Backups began, and a finalizer keeps
    it: Velero skipped it, so a restore on a new cluster brings back a VM whose NIC has no
    NAD. RR-NET-002 said PASS and the VM READY."""
    report = _nad_deleting(tmp_path, "2026-11-27T00:00:00Z")
    finding = _finding(report, "RR-NET-002")
    assert (finding["status"], finding["severity"]) == ("FAIL", "medium"), finding["message"]
    assert "app/vlan10 being deleted since 2026-11-27T00:00:00Z" in finding["message"]
    assert {g["backup"] for g in finding["evidence"]["gaps"]} == {
        "daily-20261128",
        "daily-20261130",
    }
    assert _readiness(report) != "READY"


def test_a_nad_deleted_between_the_backups_is_missing_from_the_newer_one(
    tmp_path: Path,
) -> None:
    """Deleted on 2026-11-29: daily-20261128 holds it, daily-20261130 does not."""
    report = _nad_deleting(tmp_path, "2026-11-29T00:00:00Z")
    finding = _finding(report, "RR-NET-002")
    assert finding["status"] == "FAIL", finding["message"]
    assert {g["backup"] for g in finding["evidence"]["gaps"]} == {"daily-20261130"}


@pytest.mark.parametrize(
    ("deleting", "status"),
    [
        (None, "PASS"),  # the healthy shape
        ("2026-11-30T05:00:00Z", "PASS"),  # deleted after both Backups began: both hold it
        ("30/11/2026", "ERROR"),  # no RFC 3339 time: whether Velero skipped it is unknown
    ],
)
def test_a_nad_deletion_after_the_backups_or_unreadable(
    tmp_path: Path, deleting: str | None, status: str
) -> None:
    report = _nad_deleting(tmp_path, deleting)
    finding = _finding(report, "RR-NET-002")
    assert finding["status"] == status, finding["message"]


# -- a Schedule whose cron next fires after the RPO has passed -----------------------------

#: app/vm1, Schedule velero/daily ('0 1 * * *', lastBackup 2026-11-30T01:00Z) whose Backup
#: daily-20261130 began 01:00; the default RPO is 24 h, so it is kept until 2026-12-01T01:00Z
NEXT_PASS = "RR-BKP-013/pass.yaml"


def _with_cron(tmp_path: Path, cron: str, *, last_backup: str | None = "keep") -> dict[str, Any]:
    from tests.test_evidence_gaps import _docs

    docs = _docs(NEXT_PASS)
    schedule = _named(docs, "Schedule", "daily")
    schedule["spec"]["schedule"] = cron
    if last_backup is None:
        del schedule["status"]["lastBackup"]
    return _complete(tmp_path, NEXT_PASS, docs)


@pytest.mark.parametrize(
    ("cron", "starts"),
    [
        ("0 1 * * 0", "2026-12-06T01:00:00Z"),  # Sundays only
        ("@weekly", "2026-12-06T00:00:00Z"),
        ("0 1 15 * *", "2026-12-15T01:00:00Z"),  # monthly
        # Mondays 21:00 EST, 02:00Z the next day (read as UTC it would fire in time)
        ("CRON_TZ=America/New_York 0 21 * * 1", "2026-12-01T02:00:00Z"),
        ("@every 36h", "2026-12-01T13:00:00Z"),
    ],
)
def test_a_schedule_whose_cron_next_fires_after_the_rpo_is_at_risk(
    tmp_path: Path, cron: str, starts: str
) -> None:
    """velero pkg/controller/schedule_controller.go getNextRunTime: the next Backup starts at
    the cron's next firing after status.lastBackup. After 2026-12-01T01:00Z the newest
    Backup is older than the RPO and stays so until then, as sure as a paused Schedule
    (which RR-BKP-013 already failed); the VM read READY."""
    report = _with_cron(tmp_path, cron)
    finding = _finding(report, "RR-BKP-013")
    assert (finding["status"], finding["severity"]) == ("FAIL", "medium"), finding["message"]
    assert finding["evidence"]["late_schedules"] == [
        {"schedule": "velero/daily", "cron": cron, "next_start": starts}
    ]
    assert finding["evidence"]["rpo_breach_at"] == "2026-12-01T01:00:00Z"
    assert _readiness(report) == "AT_RISK"


@pytest.mark.parametrize(
    ("cron", "last_backup"),
    [
        ("0 1 * * *", "keep"),  # daily: next at the RPO instant itself, not after it
        ("0 */6 * * *", "keep"),
        ("0 1 * * *", None),  # no lastBackup read: when it next runs is not known
        ("0 0 30 2 *", "keep"),  # never fires: robfig gives no next time, nothing judged
        # round r41c: crons whose next run comes in time but which leave more than the RPO
        # between two runs ("0 1 * * 1-5", "0 21 * * 1", "0 1 1 * tue", a weekly one
        # without lastBackup) FAIL (tests/test_restore_points_r41c.py)
    ],
)
def test_a_schedule_that_fires_within_the_rpo_or_cannot_be_timed_passes(
    tmp_path: Path, cron: str, last_backup: str | None
) -> None:
    report = _with_cron(tmp_path, cron, last_backup=last_backup)
    finding = _finding(report, "RR-BKP-013")
    assert finding["status"] == "PASS", finding["message"]
    assert "late_schedules" not in finding["evidence"]


def test_a_late_schedule_beside_one_that_cannot_be_judged_is_unknown(tmp_path: Path) -> None:
    """The weekly Schedule takes the VM too late, but a second, daily one whose next Backup
    depends on a server default no object shows (no DataProtectionApplication, no Backup of
    it prepared) may take it in time: ERROR, never FAIL nor PASS."""
    import copy

    from tests.test_evidence_gaps import _docs

    docs = [d for d in _docs(NEXT_PASS) if d["kind"] != "DataProtectionApplication"]
    weekly = _named(docs, "Schedule", "daily")
    weekly["spec"]["schedule"] = "0 1 * * 0"
    other = copy.deepcopy(weekly)
    other["metadata"]["name"] = "other"
    other["spec"]["schedule"] = "0 2 * * *"
    docs.append(other)
    report = _complete(tmp_path, NEXT_PASS, docs)
    finding = _finding(report, "RR-BKP-013")
    assert finding["status"] == "ERROR", finding["message"]
    assert "whether Schedule velero/other takes the VM sooner is unknown" in finding["message"]
    assert [s["schedule"] for s in finding["evidence"]["late_schedules"]] == ["velero/daily"]


def test_a_last_backup_after_the_audit_instant_times_nothing(tmp_path: Path) -> None:
    """A Schedule status written after the audit instant (an export audited with an earlier
    ``--at``, or a skewed clock) says nothing of when the Schedule ran before it: its
    lastBackup a day ahead made the next start look two days away, a false FAIL."""
    from tests.test_evidence_gaps import _docs

    docs = _docs(NEXT_PASS)
    _named(docs, "Schedule", "daily")["status"]["lastBackup"] = "2026-12-01T01:00:00Z"
    report = _complete(tmp_path, NEXT_PASS, docs)
    finding = _finding(report, "RR-BKP-013")
    assert finding["status"] == "PASS", finding["message"]


def test_a_past_due_schedule_runs_at_once(tmp_path: Path) -> None:
    """Velero runs a Schedule whose next firing after lastBackup has passed at its next
    reconcile: a daily cron last run eight days ago is due now, within the RPO. (A weekly
    cron is sparser than the 24 h RPO: RR-BKP-013 FAILs it since round r41c.)"""
    from tests.test_evidence_gaps import _docs

    docs = _docs(NEXT_PASS)
    schedule = _named(docs, "Schedule", "daily")
    schedule["spec"]["schedule"] = "0 1 * * *"
    schedule["status"]["lastBackup"] = "2026-11-22T01:00:00Z"
    report = _complete(tmp_path, NEXT_PASS, docs)
    assert _finding(report, "RR-BKP-013")["status"] == "PASS"


@pytest.mark.parametrize(
    ("cron", "after", "expected"),
    [
        ("0 2 1 * mon", "2026-11-30T01:00:00+00:00", "2026-11-30T02:00:00+00:00"),
        ("*/15 * * * *", "2026-11-30T01:00:00+00:00", "2026-11-30T01:15:00+00:00"),
        ("30 1/4 * * *", "2026-11-30T02:00:00+00:00", "2026-11-30T05:30:00+00:00"),
        ("5 4 * * SUN", "2026-11-30T01:00:00+00:00", "2026-12-06T04:05:00+00:00"),
        ("0 1 ? * MON-FRI", "2026-12-04T02:00:00+00:00", "2026-12-07T01:00:00+00:00"),
        ("@every 90m", "2026-11-30T01:00:00.5+00:00", "2026-11-30T02:30:00+00:00"),
        ("TZ=Europe/Berlin 0 2 * * *", "2026-07-01T00:00:00+00:00", "2026-07-02T00:00:00+00:00"),
    ],
)
def test_cron_next_firing_as_robfig_reads_it(cron: str, after: str, expected: str) -> None:
    from datetime import datetime

    from auditor.inventory.cronnext import parse_cron

    spec = parse_cron(cron)
    assert spec is not None
    got = spec.next_after(datetime.fromisoformat(after))
    assert got == datetime.fromisoformat(expected)


@pytest.mark.parametrize(
    "cron",
    ["", "bad", "0 1 * *", "0 1 * * 7", "61 * * * *", "TZ=Nowhere/Else 0 1 * * *", "? 1 * * *"],
)
def test_a_cron_robfig_would_refuse_reads_as_nothing(cron: str) -> None:
    from auditor.inventory.cronnext import parse_cron

    assert parse_cron(cron) is None


# -- engine.evaluate keeps the pipeline's per-VM guard -------------------------------------


def test_the_in_process_engine_path_makes_a_vm_it_cannot_pair_unknown(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """engine.evaluate (the one-process path tests and tools use) raised when pairing one VM
    raised, where the pipeline makes that VM UNKNOWN and names it; now both give the same
    report, and a platform PASS does not speak for the VM."""
    import auditor.inventory
    from auditor.config import AuditSettings
    from auditor.engine import evaluate
    from auditor.envelope.build import build_envelope
    from auditor.pipeline import audit_data, dump_report_json
    from auditor.sources.directory import DirectorySource
    from tests.conftest import AUDIT_AT, REPO
    from tests.test_leftovers_lo34 import BROKEN, FAULTS, _raise_for_broken

    example = REPO / "examples" / "small-cluster"
    module, attr, pick, _ = FAULTS["pairing"]
    assert module is auditor.inventory
    monkeypatch.setattr(module, attr, _raise_for_broken(getattr(module, attr), pick))
    settings = AuditSettings()
    data = DirectorySource(example).collect()
    whole = build_envelope(data, evaluate(data, settings, at=AUDIT_AT), settings, at=AUDIT_AT)
    piped = audit_data(DirectorySource(example).collect(), settings, at=AUDIT_AT)
    assert dump_report_json(whole) == dump_report_json(piped)
    entry = next(v for v in whole.vms if (v.namespace, v.name) == BROKEN)
    assert entry.readiness == "UNKNOWN"
    assert {f.status for f in entry.findings} == {"ERROR"}
    assert whole.run.complete is False
    assert len(whole.vms) == 5
