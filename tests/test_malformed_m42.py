"""Faults the m42 mutation sweeps found (docs/readiness.md, "Round m42").

Each case edits one field of a check fixture (tests/fixtures/checks), as the sweep did, and
asserts the problem named (file, kind, object, field), the findings that rest on it and the
VM's readiness, never better than before.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.mutations import RANK, worst_rank
from tests.test_check_fixtures import FIXTURES, audit_fixture

#: vm1's VMI opts its Block disks in to file-system backup (backup.velero.io/backup-volumes),
#: which never copies a Block volume: RR-BKP-004 and RR-STG-001 FAIL high, NOT_READY
FS_OPT_IN = "RR-BKP-004/fail-fs-backup-opt-in-skips-block-disks.yaml"
#: a daily Schedule that takes vm1
SCHEDULED = "RR-BKP-004/fail-fs-backup-block-volume.yaml"


def _edit(tmp_path: Path, fixture: str, old: str, new: str, after: str = "") -> Path:
    """The fixture with the first ``old`` after the first ``after`` replaced by ``new``."""
    text = (FIXTURES / fixture).read_text()
    start = text.index(after) if after else 0
    at = text.index(old, start)
    path = tmp_path / "export.yaml"
    path.write_text(text[:at] + new + text[at + len(old) :])
    return path


def _vm(doc: dict[str, Any]) -> dict[str, Any]:
    return next(v for v in doc["vms"] if (v["namespace"], v["name"]) == ("app", "vm1"))


def _status(doc: dict[str, Any], check: str) -> tuple[str, str]:
    f = next(f for f in _vm(doc)["findings"] if f["check_id"] == check)
    return f["status"], f["severity"]


def _named(doc: dict[str, Any], kind: str) -> list[tuple[str, str | None, str | None, str | None]]:
    return [
        (p["file"].split("#", 1)[0], p["namespace"], p["name"], p["field"])
        for p in doc["collection_problems"]
        if p["kind"] == kind
    ]


# -- 1. a VMI that is not read leaves its pod's file-system backup opt-in unknown -----------


def test_unread_vmi_leaves_the_fs_opt_in_unknown(tmp_path: Path) -> None:
    """Seed 4201: the VMI's ``metadata.namespace`` set to ``""`` is named and the VMI read in
    namespace ``default`` (as kubectl would apply it), so VM app/vm1 had no VMI: its Block
    disks, opted in to file-system backup only by the VMI's annotation, counted as
    snapshotted (RR-BKP-004, RR-STG-001 FAIL -> PASS; NOT_READY -> UNKNOWN of medium ERRORs
    alone). The unread VMI may carry the opt-in: the capture is unknown, ERROR high."""
    before = audit_fixture(FIXTURES / FS_OPT_IN)
    assert _vm(before)["readiness"] == "NOT_READY"
    assert _status(before, "RR-BKP-004") == ("FAIL", "high")
    path = _edit(
        tmp_path,
        FS_OPT_IN,
        "  namespace: app\n",
        "  namespace: ''\n",
        after="kind: VirtualMachineInstance",
    )
    doc = audit_fixture(path)
    assert ("export.yaml", None, "vm1", "metadata.namespace") in _named(
        doc, "VirtualMachineInstance"
    )
    for check in ("RR-BKP-001", "RR-BKP-004", "RR-STG-001"):
        assert _status(doc, check) == ("ERROR", "high"), check
    finding = next(f for f in _vm(doc)["findings"] if f["check_id"] == "RR-BKP-004")
    assert "its VMI was not read" in finding["message"]
    assert _vm(doc)["readiness"] == "UNKNOWN"
    assert doc["run"]["complete"] is False
    verdicts = {f["check_id"]: f"{f['status']} {f['severity']}" for f in _vm(doc)["findings"]}
    assert worst_rank("UNKNOWN", verdicts) == RANK["NOT_READY"]  # no better than before


# -- 2. a Schedule's lastBackup near the end of time --------------------------------------


def test_schedule_last_backup_at_the_last_second_of_9999_does_not_crash(tmp_path: Path) -> None:
    """Seed 4203: ``status.lastBackup: 9999-12-31T23:59:59Z`` (after the audit instant, named
    and read as not yet) made RR-BKP-013's sparse-cron rule (r41c) count the cron's gaps for
    five years from that instant: OverflowError, an ERROR naming the VM's fields instead of
    the Schedule's. The gaps are now counted from the audit instant; the check judges as on
    the fixture itself, the VM stays NOT_READY."""
    before = audit_fixture(FIXTURES / SCHEDULED)
    path = _edit(
        tmp_path,
        SCHEDULED,
        "lastBackup: '2026-11-30T01:00:00Z'",
        "lastBackup: '9999-12-31T23:59:59Z'",
    )
    doc = audit_fixture(path)
    assert ("export.yaml", "velero", "daily", "status.lastBackup") in _named(doc, "Schedule")
    assert not any("could not evaluate" in p["reason"] for p in doc["collection_problems"])
    assert _status(doc, "RR-BKP-013") == _status(before, "RR-BKP-013")
    assert _vm(doc)["readiness"] == _vm(before)["readiness"] == "NOT_READY"


def test_cron_gaps_stop_at_the_last_date() -> None:
    """:meth:`CronSpec.longest_gap` and :meth:`CronSpec.next_after` from a start in 9999
    end at the last date Python holds instead of raising."""
    from datetime import UTC, datetime

    from auditor.inventory.cronnext import parse_cron

    spec = parse_cron("0 1 * * *")
    assert spec is not None
    end = datetime(9999, 12, 31, 0, 0, tzinfo=UTC)
    assert spec.longest_gap(end) is None  # one day left: fewer than two firings
    assert spec.next_after(datetime(9999, 12, 31, 2, 0, tzinfo=UTC)) is None


# -- 3. a DataProtectionApplication's default-backup-ttl that is no integer ---------------


def _dpa_ttl(tmp_path: Path, value: Any) -> dict[str, Any]:
    """RR-BKP-006's r41c fixture with the DPA's default-backup-ttl set to ``value`` (24 h
    of nanoseconds gives a FAIL: the Schedule without template ttl keeps Backups a day)."""
    from tests import test_restore_points_r41c as r41c

    docs = r41c._docs(r41c.BASE)
    dpa = r41c._one(docs, "DataProtectionApplication")
    dpa["spec"]["configuration"]["velero"]["args"] = {"default-backup-ttl": value}
    return r41c._audit(tmp_path, docs)


def test_dpa_default_backup_ttl_that_is_no_integer_is_named(tmp_path: Path) -> None:
    """OADP's ``DefaultBackupTTL`` is a ``*time.Duration``: an integer of nanoseconds in JSON
    (oadp-operator api/v1alpha1/dataprotectionapplication_types.go), passed as Velero's
    ``--default-backup-ttl`` (pkg/velero/server/args.go). A null (which the API server
    prunes) was read as none set, Velero's 720 h: RR-BKP-006 FAIL -> PASS, AT_RISK -> READY,
    nothing named. A string (``"24h"``), a float, a boolean or a negative value left the ttl
    unknown (ERROR) with nothing named. Each is now named at the field; the DPA is unread
    and the ttl unknown: ERROR, never PASS."""
    base = _dpa_ttl(tmp_path / "base", 24 * 3600 * 10**9)
    assert _status(base, "RR-BKP-006") == ("FAIL", "medium")
    assert _vm(base)["readiness"] == "AT_RISK"
    field = "spec.configuration.velero.args.default-backup-ttl"
    for i, value in enumerate((None, "24h", str(24 * 3600 * 10**9), 86400.0e9, True, -1)):
        doc = _dpa_ttl(tmp_path / str(i), value)
        assert (
            "c.yaml",
            "velero",
            "dpa",
            field,
        ) in _named(doc, "DataProtectionApplication"), value
        assert _status(doc, "RR-BKP-006") == ("ERROR", "medium"), value
        assert _vm(doc)["readiness"] == "UNKNOWN", value
        assert doc["run"]["complete"] is False


def test_dpa_default_backup_ttl_of_zero_is_read_as_set(tmp_path: Path) -> None:
    """0 is an integer OADP passes: no fault named, and no better than 24 h."""
    doc = _dpa_ttl(tmp_path, 0)
    assert _named(doc, "DataProtectionApplication") == []
    assert _status(doc, "RR-BKP-006") == ("FAIL", "medium")


# -- 4. a Backup without the times every stored Backup holds ------------------------------


def _synced_audit(tmp_path: Path, edit: Any) -> dict[str, Any]:
    """a40's synced Backup (created 03:00 after it completed at 01:15) with ``edit`` made
    to the newest Backup."""
    from tests import test_synced_backups_a40 as a40
    from tests.test_evidence_gaps import _complete, _docs, _of

    docs = a40._synced(_docs(a40.CSI))
    edit(next(b for b in _of(docs, "Backup") if b["metadata"]["name"] == "daily-20261130"))
    return _complete(tmp_path, a40.CSI, docs)


def test_a_backup_without_its_creation_or_run_times_is_named(tmp_path: Path) -> None:
    """a40's synced-Backup rule compares ``metadata.creationTimestamp`` with
    ``status.completionTimestamp`` (else ``startTimestamp``). Without the creation time, or
    without both status times, the Backup was read as taken here (RR-BKP-004 ERROR -> PASS;
    both status times gone: UNKNOWN -> AT_RISK), nothing named; a Completed Backup without
    its completion time was unnamed too (r41c's "left"). The API server sets the creation
    time of every object and Velero writes both status times before Completed (velero
    pkg/controller/backup_controller.go): each is now named and the Backup unread."""
    base = _synced_audit(tmp_path / "base", lambda b: None)
    assert _status(base, "RR-BKP-004") == ("ERROR", "high")
    cases = {
        "created": (
            lambda b: b["metadata"].pop("creationTimestamp"),
            ["metadata.creationTimestamp"],
        ),
        "completion": (
            lambda b: b["status"].pop("completionTimestamp"),
            ["status.completionTimestamp"],
        ),
        "completion-null": (
            lambda b: b["status"].update(completionTimestamp=None),
            ["status.completionTimestamp"],
        ),
        "both": (
            lambda b: (b["status"].pop("completionTimestamp"), b["status"].pop("startTimestamp")),
            ["status.startTimestamp", "status.completionTimestamp"],
        ),
    }
    for label, (edit, fields) in cases.items():
        doc = _synced_audit(tmp_path / label, edit)
        named = _named(doc, "Backup")
        for field in fields:
            assert ("c.yaml", "velero", "daily-20261130", field) in named, (label, named)
        assert _status(doc, "RR-BKP-004") == ("ERROR", "high"), label
        assert _vm(doc)["readiness"] == "UNKNOWN", label
        assert doc["run"]["complete"] is False


# -- 5. a DataUpload's velero.io/backup-uid label: empty, or its key in another case -------


def _upload_audit(tmp_path: Path, edit: Any) -> dict[str, Any]:
    """r41a's data-mover fixture, vm1-root's DataUpload labelled with an earlier Backup's
    UID (RR-BKP-004 ERROR: another Backup's record), then ``edit`` made to its labels."""
    from tests import test_velero_datapath_r41a as r41a
    from tests.test_bugclasses_bc39 import DATA_MOVER, _audit
    from tests.test_evidence_gaps import _docs

    docs = r41a._moving(_docs(DATA_MOVER))
    labels = r41a._upload(docs, "vm1-root")["metadata"]["labels"]
    labels["velero.io/backup-uid"] = "uid-earlier"
    edit(labels)
    return _audit(tmp_path, docs)


def test_backup_uid_label_empty_or_in_another_case_is_no_capture(tmp_path: Path) -> None:
    """Velero labels each DataUpload with its Backup's UID (r41a): a record of another UID is
    no copy of this Backup. An empty value (``""``) was read as no label, and the key written
    ``velero.io/Backup-uid`` (a valid key, none Velero writes) as no label either: the record
    counted as the Backup's own (RR-BKP-004 ERROR -> PASS, UNKNOWN -> AT_RISK). The empty
    value is now another UID; the key of another case is named and leaves the Backup the
    record was made for unknown."""
    base = _upload_audit(tmp_path / "base", lambda labels: None)
    assert _status(base, "RR-BKP-004") == ("ERROR", "high")
    assert _vm(base)["readiness"] == "UNKNOWN"

    empty = _upload_audit(
        tmp_path / "empty", lambda labels: labels.update({"velero.io/backup-uid": ""})
    )
    assert _status(empty, "RR-BKP-004") == ("ERROR", "high")
    f = next(f for f in _vm(empty)["findings"] if f["check_id"] == "RR-BKP-004")
    assert 'is labelled velero.io/backup-uid="", not the Backup\'s uid' in f["message"]
    assert _vm(empty)["readiness"] == "UNKNOWN"

    def recase(labels: dict[str, Any]) -> None:
        labels["velero.io/Backup-uid"] = labels.pop("velero.io/backup-uid")

    doc = _upload_audit(tmp_path / "case", recase)
    assert (
        "c.yaml",
        "velero",
        "daily-20261130-vm1-root",
        "metadata.labels[velero.io/Backup-uid]",
    ) in _named(doc, "DataUpload")
    assert _status(doc, "RR-BKP-004") == ("ERROR", "high")
    f = next(f for f in _vm(doc)["findings"] if f["check_id"] == "RR-BKP-004")
    assert "carries the label key velero.io/Backup-uid, not velero.io/backup-uid" in f["message"]
    assert _vm(doc)["readiness"] == "UNKNOWN"
    assert doc["run"]["complete"] is False


# -- 6. a VM whose status is null; an unread Restore of a Windows VM -----------------------


def _set(tmp_path: Path, fixture: str, kind: str, name: str, path: str, value: Any) -> Path:
    """``fixture`` with field ``path`` (dotted) of ``kind`` ``name`` set to ``value``."""
    import yaml

    text = (FIXTURES / fixture).read_text()
    docs = [d for d in yaml.safe_load_all(text) if d]
    for d in docs:
        if d.get("kind") == kind and d["metadata"].get("name") == name:
            *parents, leaf = path.split(".")
            holder = d
            for key in parents:
                holder = holder[key]
            holder[leaf] = value
    head = [line for line in text.splitlines() if line.startswith("#")]
    out = tmp_path / "export.yaml"
    out.write_text("\n".join(head) + "\n" + yaml.safe_dump_all(docs))
    return out


def test_a_vm_status_of_null_is_named(tmp_path: Path) -> None:
    """Seed 4204: ``status: null`` on a VM pinned to a ControllerRevision the Backup's
    filters leave out (RR-BKP-012 FAIL high) was read as no status: the pinned revision
    vanished, NOT_READY -> READY, nothing named. KubeVirt writes the status subresource as an
    object and the API server prunes a null: named at ``status``, the checks reading it
    ERROR."""
    fixture = "RR-BKP-012/fail-pinned-revision-scoped-filter.yaml"
    assert _vm(audit_fixture(FIXTURES / fixture))["readiness"] == "NOT_READY"
    doc = audit_fixture(_set(tmp_path, fixture, "VirtualMachine", "vm1", "status", None))
    assert ("export.yaml", "app", "vm1", "status") in _named(doc, "VirtualMachine")
    assert _status(doc, "RR-BKP-012")[0] == "ERROR"
    verdicts = {f["check_id"]: f"{f['status']} {f['severity']}" for f in _vm(doc)["findings"]}
    assert worst_rank(_vm(doc)["readiness"], verdicts) == RANK["NOT_READY"]


def test_an_unread_restore_of_a_windows_vm_may_hide_a_high_fail(tmp_path: Path) -> None:
    """Seed 4204: the in-place drill that gave a Windows VM a new firmware UUID (RR-RST-002
    FAIL high, NOT_READY), its creationTimestamp set after the audit instant, is named and
    left out; RR-RST-002's ERROR was medium (the check's default), so the VM was UNKNOWN of
    medium ERRORs alone (AT_RISK at worst). For a Windows guest the ERROR is high, as the
    FAIL it may hide."""
    fixture = "RR-RST-002/fail-in-place-new-uuid-windows.yaml"
    assert _status(audit_fixture(FIXTURES / fixture), "RR-RST-002") == ("FAIL", "high")
    path = _set(
        tmp_path,
        fixture,
        "Restore",
        "drill-20261128",
        "metadata.creationTimestamp",
        "2031-06-01T00:00:00Z",
    )
    doc = audit_fixture(path)
    assert ("export.yaml", "velero", "drill-20261128", "metadata.creationTimestamp") in _named(
        doc, "Restore"
    )
    assert _status(doc, "RR-RST-002") == ("ERROR", "high")
    verdicts = {f["check_id"]: f"{f['status']} {f['severity']}" for f in _vm(doc)["findings"]}
    assert worst_rank(_vm(doc)["readiness"], verdicts) == RANK["NOT_READY"]
