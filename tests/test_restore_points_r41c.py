"""Round r41c: restore points in time (RPO, retention, Schedules), probed on the catalog
fixture RR-BKP-006/pass-schedule-ttl-default.yaml (vm1 in namespace app, Backups
daily-20261128 and daily-20261130 of Schedule velero/daily "0 1 * * *" without template
ttl, each kept 168 h; audited at 2026-11-30T06:00:00Z; READY).

Fixed:

1. A Schedule without ``spec.template.ttl`` keeps its Backups the server's
   ``--default-backup-ttl``, which OADP passes from the DPA's
   ``spec.configuration.velero.args.default-backup-ttl`` (nanoseconds): it was read as
   Velero's 720 h (RR-BKP-006 PASS with next Backups kept 24 h).
2. A restore point showing neither ``status.expiration`` nor ``spec.ttl`` (Velero writes both
   in ``prepareBackupRequest``) was read as kept 720 h: now ERROR.
3. A Schedule whose cron leaves more than the RPO between two runs (a monthly cron against a
   24 h RPO) passed RR-BKP-013 while its next run came in time: now FAIL.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from auditor.inventory.cronnext import parse_cron
from auditor.inventory.defaultttl import server_default_ttl
from tests.test_check_fixtures import audit_fixture
from tests.test_evidence_gaps import FIXTURES, _docs, _finding

Docs = list[dict[str, Any]]
BASE = "RR-BKP-006/pass-schedule-ttl-default.yaml"
HOUR_NS = 3600 * 10**9


def _audit(tmp_path: Path, docs: Docs) -> dict[str, Any]:
    head = [ln for ln in (FIXTURES / BASE).read_text().splitlines() if ln.startswith("#")]
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "c.yaml"
    path.write_text("\n".join(head) + "\n" + yaml.safe_dump_all(docs))
    return audit_fixture(path)


def _one(docs: Docs, kind: str, name: str | None = None) -> dict[str, Any]:
    return next(
        d for d in docs if d["kind"] == kind and (name is None or d["metadata"]["name"] == name)
    )


def _readiness(report: dict[str, Any]) -> str:
    return str(next(v for v in report["vms"] if v["name"] == "vm1")["readiness"])


def _only_newest(docs: Docs) -> Docs:
    """The export without Backup daily-20261128 and its snapshot contents."""
    return [
        d
        for d in docs
        if not (
            d["kind"] in ("Backup", "VolumeSnapshotContent") and "20261128" in d["metadata"]["name"]
        )
    ]


def test_the_base_is_ready(tmp_path: Path) -> None:
    report = _audit(tmp_path, _docs(BASE))
    assert _readiness(report) == "READY"
    f = _finding(report, "RR-BKP-006")
    assert f["status"] == "PASS"
    assert f["evidence"]["schedule_ttl_hours"] == {"velero/daily": 720}


def test_a_dpa_default_backup_ttl_shorter_than_the_policy_fails(tmp_path: Path) -> None:
    docs = _docs(BASE)
    dpa = _one(docs, "DataProtectionApplication")
    dpa["spec"]["configuration"]["velero"]["args"] = {"default-backup-ttl": 24 * HOUR_NS}
    report = _audit(tmp_path, docs)
    f = _finding(report, "RR-BKP-006")
    assert (f["status"], f["severity"]) == ("FAIL", "medium")
    assert "velero/daily (24 h: DataProtectionApplication in velero: " in f["message"]
    assert f"velero.args.default-backup-ttl={24 * HOUR_NS}" in f["message"]
    assert f["evidence"]["schedule_ttl_hours"] == {"velero/daily": 24}
    assert _readiness(report) == "AT_RISK"


def test_dpa_args_without_a_ttl_keep_velero_default(tmp_path: Path) -> None:
    docs = _docs(BASE)
    dpa = _one(docs, "DataProtectionApplication")
    dpa["spec"]["configuration"]["velero"]["args"] = {"default-volumes-to-fs-backup": False}
    f = _finding(_audit(tmp_path, docs), "RR-BKP-006")
    assert f["status"] == "PASS"
    assert f["evidence"]["schedule_ttl_hours"] == {"velero/daily": 720}


def test_server_args_from_a_configmap_leave_the_default_unknown(tmp_path: Path) -> None:
    docs = _docs(BASE)
    dpa = _one(docs, "DataProtectionApplication")
    dpa["metadata"]["annotations"] = {"oadp.openshift.io/unsupported-velero-server-args": "cm"}
    f = _finding(_audit(tmp_path, docs), "RR-BKP-006")
    assert (f["status"], f["severity"]) == ("ERROR", "medium")
    assert "velero/daily (no template ttl; server default unknown:" in f["message"]
    assert f["evidence"]["schedule_ttl_hours"] == {"velero/daily": None}


def test_unread_dpas_leave_the_default_unknown(tmp_path: Path) -> None:
    # no DataProtectionApplication read is no evidence of plain Velero: OADP's default may be
    # anything, so the Schedule without a template ttl keeps its Backups an unknown time
    docs = [d for d in _docs(BASE) if d["kind"] != "DataProtectionApplication"]
    head = [ln for ln in (FIXTURES / BASE).read_text().splitlines() if ln.startswith("#")]
    path = tmp_path / "c.yaml"
    lines = [*head, "# unavailable: DataProtectionApplication"]
    path.write_text("\n".join(lines) + "\n" + yaml.safe_dump_all(docs))
    f = _finding(audit_fixture(path), "RR-BKP-006")
    assert (f["status"], f["severity"]) == ("ERROR", "medium")
    assert (
        "velero/daily (no template ttl; server default unknown: the DataProtection"
        in (f["message"])
    )
    assert f["evidence"]["schedule_ttl_default"] == {
        "velero/daily": "the DataProtectionApplications were not read"
    }


def test_server_default_ttl_rules() -> None:
    def dpa(ns: str, args: Any) -> dict[str, Any]:
        velero = {} if args is None else {"args": args}
        return {"metadata": {"namespace": ns}, "spec": {"configuration": {"velero": velero}}}

    assert server_default_ttl([], "velero")[0] == timedelta(hours=720)
    assert server_default_ttl([dpa("other", {"default-backup-ttl": 1})], "velero")[0] == (
        timedelta(hours=720)
    )
    assert server_default_ttl([dpa("velero", {"default-backup-ttl": 36 * HOUR_NS})], "velero")[
        0
    ] == timedelta(hours=36)
    assert server_default_ttl([dpa("velero", {"default-backup-ttl": "24h"})], "velero")[0] is None
    two = [dpa("velero", None), dpa("velero", {"default-backup-ttl": HOUR_NS})]
    ttl, why = server_default_ttl(two, "velero")
    assert ttl is None and "disagree" in why


def test_a_restore_point_without_expiration_or_ttl_is_unknown(tmp_path: Path) -> None:
    docs = _docs(BASE)
    for b in (d for d in docs if d["kind"] == "Backup"):
        del b["status"]["expiration"], b["spec"]["ttl"]
    report = _audit(tmp_path, docs)
    f = _finding(report, "RR-BKP-006")
    assert (f["status"], f["severity"]) == ("ERROR", "medium")
    assert f["message"].startswith(
        "Backup velero/daily-20261130 of VM app/vm1 shows neither status.expiration nor spec.ttl"
    )
    assert _readiness(report) == "UNKNOWN"


@pytest.mark.parametrize(
    ("cron", "gap"),
    [
        ("0 1 1 * *", 744),
        ("CRON_TZ=Asia/Tokyo 0 1 1 * *", 744),
        ("@monthly", 744),
        ("0 1 * * 1-5", 72),
        ("0 1 1,15 * *", 408),
    ],
)
def test_a_cron_sparser_than_the_rpo_fails(tmp_path: Path, cron: str, gap: int) -> None:
    docs = _docs(BASE)
    _one(docs, "Schedule")["spec"]["schedule"] = cron
    report = _audit(tmp_path, docs)
    f = _finding(report, "RR-BKP-013")
    assert (f["status"], f["severity"]) == ("FAIL", "medium")
    assert f"Schedule velero/daily's cron {cron!r} leaves up to {gap} h between" in f["message"]
    assert f["evidence"]["sparse_schedules"] == [
        {"schedule": "velero/daily", "cron": cron, "longest_gap_hours": gap}
    ]
    # the newest backup is 5 h old: RR-BKP-002 still passes, the Schedule cannot keep it
    assert _finding(report, "RR-BKP-002")["status"] == "PASS"
    assert _readiness(report) == "AT_RISK"


@pytest.mark.parametrize(
    ("cron", "last_backup", "gap"),
    [
        ("0 1 * * 1-5", "keep", 72),  # next run 2026-12-01 (a Tuesday), in time
        ("0 21 * * 1", "keep", 168),  # next run 2026-11-30T21:00Z, in time
        ("0 1 1 * tue", "keep", 168),  # day 1 or Tuesday (robfig dayMatches)
        ("0 1 * * 0", None, 168),  # no lastBackup: the gap needs none
    ],
)
def test_rt36_crons_in_time_once_but_sparser_than_the_rpo_fail(
    tmp_path: Path, cron: str, last_backup: str | None, gap: int
) -> None:
    """The crons round rt36 passed on a next run in time (tests/test_redteam_rt36.py)."""
    docs = _docs("RR-BKP-013/pass.yaml")
    schedule = _one(docs, "Schedule", "daily")
    schedule["spec"]["schedule"] = cron
    if last_backup is None:
        del schedule["status"]["lastBackup"]
    report = _audit(tmp_path, docs)
    f = _finding(report, "RR-BKP-013")
    assert (f["status"], f["severity"]) == ("FAIL", "medium")
    assert f["evidence"]["sparse_schedules"][0]["longest_gap_hours"] == gap
    assert "late_schedules" not in f["evidence"]


@pytest.mark.parametrize("cron", ["0 1 * * *", "TZ=UTC 0 1 * * *", "@every 24h", "@daily"])
def test_a_cron_within_the_rpo_passes(tmp_path: Path, cron: str) -> None:
    docs = _docs(BASE)
    _one(docs, "Schedule")["spec"]["schedule"] = cron
    report = _audit(tmp_path, docs)
    assert _finding(report, "RR-BKP-013")["status"] == "PASS"
    assert _readiness(report) == "READY"


def test_longest_gap() -> None:
    at = datetime(2026, 11, 30, 6, tzinfo=UTC)

    def gap(cron: str) -> timedelta | None:
        spec = parse_cron(cron)
        assert spec is not None
        return spec.longest_gap(at)

    assert gap("0 1 * * *") == timedelta(hours=24)
    assert gap("0 1,13 * * *") == timedelta(hours=12)
    # a fall-back night in Berlin: 25 h between two 01:00 local runs
    assert gap("CRON_TZ=Europe/Berlin 0 1 * * *") == timedelta(hours=25)
    assert gap("@every 36h") == timedelta(hours=36)
    assert gap("0 0 29 2 *") is None  # one run (2028) in five years: nothing judged


def test_longest_gap_depends_on_the_local_date_only() -> None:
    """The five-year walk runs once per cron and start date in the cron's zone: starts on
    one local date share it, a start past local midnight is another date."""
    from auditor.inventory.cronnext import _longest_gap

    spec = parse_cron("CRON_TZ=Asia/Tokyo 0 1 1 * *")  # monthly, 01:00 Tokyo
    assert spec is not None
    _longest_gap.cache_clear()
    morning = datetime(2027, 1, 4, 0, 30, tzinfo=UTC)  # 09:30 in Tokyo, 4 January
    assert spec.longest_gap(morning) == timedelta(days=31)
    assert spec.longest_gap(morning + timedelta(hours=14)) == timedelta(days=31)  # 23:30
    assert _longest_gap.cache_info().misses == 1
    assert _longest_gap.cache_info().hits == 1
    spec.longest_gap(morning + timedelta(hours=15, minutes=1))  # 00:31 on 5 January
    assert _longest_gap.cache_info().misses == 2


# Probed and already handled (no change), on the export without daily-20261128: a Backup
# from after the audit instant, one whose completion precedes its start (its older instant
# is its data time), an expired one, a VM created after the Backup began, a pending
# DeleteBackupRequest for the only restore point, times with an offset and nanoseconds.
def _future(docs: Docs) -> None:
    b = _one(docs, "Backup", "daily-20261130")
    b["metadata"]["creationTimestamp"] = "2026-11-30T07:00:00Z"
    b["status"]["startTimestamp"] = "2026-11-30T07:00:00Z"
    b["status"]["completionTimestamp"] = "2026-11-30T07:15:00Z"


def _completed_before_start(docs: Docs) -> None:
    _one(docs, "Backup", "daily-20261130")["status"]["completionTimestamp"] = "2026-11-20T01:15:00Z"


def _expired(docs: Docs) -> None:
    _one(docs, "Backup", "daily-20261130")["status"]["expiration"] = "2026-11-30T05:00:00Z"


def _vm_after_backup(docs: Docs) -> None:
    _one(docs, "VirtualMachine", "vm1")["metadata"]["creationTimestamp"] = "2026-11-30T02:00:00Z"


def _delete_request(docs: Docs) -> None:
    docs.append(
        {
            "apiVersion": "velero.io/v1",
            "kind": "DeleteBackupRequest",
            "metadata": {
                "name": "daily-20261130-x",
                "namespace": "velero",
                "creationTimestamp": "2026-11-30T05:00:00Z",
                "labels": {"velero.io/backup-name": "daily-20261130"},
            },
            "spec": {"backupName": "daily-20261130"},
            "status": {"phase": "InProgress"},
        }
    )


def _offset(docs: Docs) -> None:
    # 22:00-05:00 is 03:00Z: 3 h old; kept to 2026-12-07T01:00Z, 166 h from its start
    st = _one(docs, "Backup", "daily-20261130")["status"]
    st["startTimestamp"], st["completionTimestamp"] = (
        "2026-11-29T22:00:00-05:00",
        "2026-11-29T22:15:00.123456789-05:00",
    )


@pytest.mark.parametrize(
    ("mutate", "check_id", "status", "said"),
    [
        (_future, "RR-BKP-002", "FAIL", "has never been captured by a usable backup"),
        (_completed_before_start, "RR-BKP-002", "FAIL", "newest is daily-20261130, 10.2 d old"),
        (_expired, "RR-BKP-001", "FAIL", "Backup daily-20261130 expired at 2026-11-30T05:00:00Z"),
        (_vm_after_backup, "RR-BKP-002", "FAIL", "is in no usable backup"),
        (_delete_request, "RR-BKP-002", "FAIL", "is in no usable backup"),
        (_offset, "RR-BKP-006", "FAIL", "daily-20261130 of VM app/vm1 is kept 166 h"),
    ],
)
def test_already_handled(
    tmp_path: Path, mutate: Any, check_id: str, status: str, said: str
) -> None:
    docs = _only_newest(_docs(BASE))
    mutate(docs)
    report = _audit(tmp_path, docs)
    f = _finding(report, check_id)
    assert f["status"] == status
    assert said in f["message"]
    if mutate is _offset:
        assert _finding(report, "RR-BKP-002")["evidence"]["age_hours"] == 3.0
