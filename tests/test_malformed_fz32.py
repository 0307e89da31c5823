"""Red-team round fz32: malformed input never improves a verdict (new kinds).

Mutations of the shared cluster export and of our fixtures (``python -m bench.mutations``,
seeds 1000 and later, and the families added in this round), each shrunk to a small export
built here from ``tests/fixtures/checks``. A broken field is a collection problem naming kind,
object and field; the run is incomplete; the checks that read it give ERROR (or a verdict no
better than before), never PASS or NOT_APPLICABLE in place of a FAIL.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.test_evidence_gaps import _complete, _docs, _finding, _of
from tests.test_malformed_fz14 import _no_better, _vm1

Docs = list[dict[str, Any]]


def _named(report: dict[str, Any], kind: str, name: str, field: str) -> None:
    found = [
        p
        for p in report["collection_problems"]
        if p["kind"] == kind and p["name"] == name and field in (p["field"] or "")
    ]
    assert found, report["collection_problems"]
    assert report["run"]["complete"] is False


def _rename(obj: dict[str, Any], key: str, new: str) -> None:
    obj[new] = obj.pop(key)


# -- a field's key written all in lower case ---------------------------------------------------

STG_FAIL = "RR-STG-001/fail-delete-no-copy.yaml"


@pytest.mark.parametrize(
    ("path", "key", "new"),
    [
        (("volumes", 1), "dataVolume", "datavolume"),
        (("domain", "devices", "disks", 0), "bootOrder", "bootorder"),
        (("domain", "devices", "interfaces", 0), "macAddress", "macaddress"),
    ],
)
def test_a_vm_key_in_lower_case_is_named_and_errs(
    tmp_path: Path, path: tuple[str | int, ...], key: str, new: str
) -> None:
    """``dataVolume`` written ``datavolume`` (as ``claimName`` written ``claimname``) is no
    KubeVirt field (the API server prunes it): read as absent, the disk's volume had no
    source; now the VM field is named at ``...dataVolume`` and the checks reading volumes
    give ERROR, never PASS (leftover of bench.mutations key_case, which found capitalised
    keys only)."""
    docs = _docs(STG_FAIL)
    baseline = _complete(tmp_path / "ok", STG_FAIL, docs)
    assert _finding(baseline, "RR-STG-001")["status"] == "FAIL"
    vm = _of(docs, "VirtualMachine")[0]
    parent = vm["spec"]["template"]["spec"]
    for step in path:
        parent = parent[step]
    _rename(parent, key, new)
    report = _complete(tmp_path / "mutated", STG_FAIL, docs)
    _named(report, "VirtualMachine", "vm1", "volumes[data]" if key == "dataVolume" else key)
    if key == "dataVolume":
        assert _finding(report, "RR-STG-001")["status"] == "ERROR"
    _no_better(baseline, report)


@pytest.mark.parametrize(
    ("kind", "key", "new"),
    [
        ("PersistentVolume", "persistentVolumeReclaimPolicy", "persistentvolumereclaimpolicy"),
        ("PersistentVolumeClaim", "storageClassName", "storageclassname"),
    ],
)
def test_a_related_object_s_field_in_lower_case_is_named_and_unread(
    tmp_path: Path, kind: str, key: str, new: str
) -> None:
    """A PV's reclaim policy or a PVC's class written all in lower case: no field of the
    API, so the object is named (kind, name, field) and unread, and its kind's list no longer
    proves anything; RR-STG-001 gives ERROR, never PASS on the StorageClass's default."""
    docs = _docs(STG_FAIL)
    baseline = _complete(tmp_path / "ok", STG_FAIL, docs)
    obj = _of(docs, kind)[0]
    _rename(obj["spec"], key, new)
    report = _complete(tmp_path / "mutated", STG_FAIL, docs)
    _named(report, kind, obj["metadata"]["name"], f"spec.{key}")
    assert _finding(report, "RR-STG-001")["status"] in ("FAIL", "ERROR")
    _no_better(baseline, report)


@pytest.mark.parametrize(
    ("section", "key", "new"),
    [
        ("spec", "deletionPolicy", "deletionpolicy"),
        ("spec", "driver", "Driver"),
        ("status", "readyToUse", "readytouse"),
    ],
)
def test_a_kept_snapshot_content_field_in_another_case_is_named(
    tmp_path: Path, section: str, key: str, new: str
) -> None:
    """A field a VolumeSnapshotContent's slim record keeps (``deletionPolicy``, ``driver``,
    ``readyToUse``), written in another case: named at the field, never read as absent."""
    fixture = "RR-STG-001/pass-retained-volume-snapshots.yaml"
    docs = _docs(fixture)
    baseline = _complete(tmp_path / "ok", fixture, docs)
    content = next(c for c in _of(docs, "VolumeSnapshotContent") if key in c.get(section, {}))
    _rename(content[section], key, new)
    report = _complete(tmp_path / "mutated", fixture, docs)
    _named(report, "VolumeSnapshotContent", content["metadata"]["name"], f"{section}.{key}")
    _no_better(baseline, report)


def test_a_snapshot_content_field_the_record_drops_is_not_read(tmp_path: Path) -> None:
    """``volumeSnapshotRef`` written ``volumesnapshotref``: a VolumeSnapshotContent's slim
    record keeps only the fields the audit reads (:attr:`auditor.kinds.KindSpec.keep`), so a
    field it drops is not read in any case and nothing depends on it: the verdicts stay."""
    fixture = "RR-STG-001/pass-retained-volume-snapshots.yaml"
    docs = _docs(fixture)
    baseline = _complete(tmp_path / "ok", fixture, docs)
    content = next(
        c for c in _of(docs, "VolumeSnapshotContent") if "volumeSnapshotRef" in c["spec"]
    )
    _rename(content["spec"], "volumeSnapshotRef", "volumesnapshotref")
    report = _complete(tmp_path / "mutated", fixture, docs)
    assert [v["readiness"] for v in report["vms"]] == [v["readiness"] for v in baseline["vms"]]


def test_known_keys_in_their_own_case_are_not_named(tmp_path: Path) -> None:
    """Every fixture key as written: nothing named (``readonly`` and ``readOnly`` are both
    fields of the APIs)."""
    from auditor.fieldnames import spelled_as

    assert spelled_as("readonly") is None and spelled_as("readOnly") is None
    assert spelled_as("claimname") == "claimName"
    assert spelled_as("Phase") == "phase"
    report = _complete(tmp_path, STG_FAIL, _docs(STG_FAIL))
    assert report["run"]["complete"] is True, report["collection_problems"]


# -- a status time after the audit instant ----------------------------------------------------

FUTURE = "2031-06-01T00:00:00Z"


def test_a_backup_completed_after_the_audit_instant_is_named_and_not_yet_done(
    tmp_path: Path,
) -> None:
    """A Backup created before the audit instant whose ``completionTimestamp`` is after it
    had not completed then: read as not yet, and named (kind, object, field), so the report
    never presents the status read as the status at the instant (bench.mutations
    future_time: changed findings, nothing named)."""
    fixture = "RR-BKP-002/pass.yaml"
    docs = _docs(fixture)
    baseline = _complete(tmp_path / "ok", fixture, docs)
    newest = max(_of(docs, "Backup"), key=lambda b: b["status"]["completionTimestamp"])
    newest["status"]["completionTimestamp"] = FUTURE
    report = _complete(tmp_path / "mutated", fixture, docs)
    _named(report, "Backup", newest["metadata"]["name"], "status.completionTimestamp")
    _no_better(baseline, report)


def test_a_vm_condition_after_the_audit_instant_leaves_its_state_then_unknown(
    tmp_path: Path,
) -> None:
    """A VM whose condition changed after the audit instant: what held then is unknown; the
    VirtualMachine kind is named and partial, never read as the state at the instant."""
    fixture = "RR-BKP-002/pass.yaml"
    docs = _docs(fixture)
    baseline = _complete(tmp_path / "ok", fixture, docs)
    vm = _of(docs, "VirtualMachine")[0]
    vm.setdefault("status", {})["conditions"] = [
        {"type": "Ready", "status": "True", "lastTransitionTime": FUTURE}
    ]
    report = _complete(tmp_path / "mutated", fixture, docs)
    _named(report, "VirtualMachine", "vm1", "status.conditions[0].lastTransitionTime")
    _no_better(baseline, report)


# -- a quantity the API server's grammar refuses ---------------------------------------------


@pytest.mark.parametrize("size", ["1E3Gi", "\uff11\uff10Gi", "1e3Zi", "0x10Gi"])
def test_a_pvc_size_the_api_server_refuses_is_named(tmp_path: Path, size: str) -> None:
    """``resource.ParseQuantity`` takes a sign, ASCII digits and one suffix: the Python client
    read ``1E3Gi`` (exponent and suffix) as 1000 GiB and full-width digits as 10 GiB; both are
    now malformed, named at the PVC's ``spec.resources.requests.storage``."""
    from auditor.kubevalues import parse_quantity

    assert parse_quantity(size) is None
    assert parse_quantity(" 10Gi\n") == 10 << 30  # UnmarshalJSON trims blanks
    docs = _docs(STG_FAIL)
    baseline = _complete(tmp_path / "ok", STG_FAIL, docs)
    pvc = _of(docs, "PersistentVolumeClaim")[0]
    pvc["spec"]["resources"]["requests"]["storage"] = size
    report = _complete(tmp_path / "mutated", STG_FAIL, docs)
    _named(report, "PersistentVolumeClaim", pvc["metadata"]["name"], "requests.storage")
    _no_better(baseline, report)


# -- a Restore's status counter that is no count ----------------------------------------------


@pytest.mark.parametrize("count", ["0", 0.0, "+0", -1])
def test_a_restore_counter_that_is_no_count_is_named_and_unread(
    tmp_path: Path, count: object
) -> None:
    """Velero's RestoreProgress ``itemsRestored`` is a Go int: 0 means the drill restored
    nothing (RR-RST-001 FAIL). Written ``"0"`` or ``0.0`` it read as "no count" and the drill
    passed; now the Restore is named at the counter and unread (RR-RST-001 ERROR), as a
    Backup's counters are (bench.mutations counter_text, fz32)."""
    fixture = "RR-RST-001/pass.yaml"
    docs = _docs(fixture)
    restore = _of(docs, "Restore")[0]
    restore["status"]["progress"] = {"totalItems": 12, "itemsRestored": 0}
    baseline = _complete(tmp_path / "ok", fixture, docs)
    assert _finding(baseline, "RR-RST-001")["status"] == "FAIL"
    restore["status"]["progress"]["itemsRestored"] = count
    report = _complete(tmp_path / "mutated", fixture, docs)
    _named(report, "Restore", restore["metadata"]["name"], "status.progress.itemsRestored")
    assert _finding(report, "RR-RST-001")["status"] in ("FAIL", "ERROR")
    _no_better(baseline, report)


@pytest.mark.parametrize("key", ["startTimestamp", "completionTimestamp"])
def test_a_drill_whose_backup_reads_as_later_is_not_ruled_out(tmp_path: Path, key: str) -> None:
    """A Restore completed before the audit instant from a Backup whose status, as read, began
    or finished after it: the Backup proves nothing either way, so the drill is judged as one
    whose Backup is gone, never ruled out. Ruled out, a drill whose disk data was unknown
    (RR-RST-001 ERROR, UNKNOWN) vanished and the VM read READY (bench.mutations future_time,
    seed 1003: Backup daily-20261128 status.startTimestamp -> 2031)."""
    fixture = "RR-RST-001/error-data-download-unreadable.yaml"
    docs = _docs(fixture)
    baseline = _complete(tmp_path / "ok", fixture, docs)
    assert _finding(baseline, "RR-RST-001")["status"] == "ERROR"
    backup = next(b for b in _of(docs, "Backup") if b["metadata"]["name"] == "daily-20261128")
    backup["status"][key] = FUTURE
    report = _complete(tmp_path / "mutated", fixture, docs)
    _named(report, "Backup", "daily-20261128", f"status.{key}")
    assert _finding(report, "RR-RST-001")["status"] == "ERROR"
    _no_better(baseline, report)


def test_a_drill_created_after_it_ran_leaves_restores_unknown(tmp_path: Path) -> None:
    """A Restore whose creationTimestamp is after the audit instant but whose status says it
    ran before (Velero never re-creates a Restore from storage): left out as "did not exist
    then", the only drill, a stale one (RR-RST-001 low FAIL, AT_RISK), vanished and "no
    restore test" (info) read READY (bench.mutations future_time, seed 1005). Its kind is
    now partial: RR-RST-001 ERROR, no better than before. (A stale drill is info since lo34,
    as "no restore test" is: the baseline is READY, and ERROR is still no better.)"""
    fixture = "RR-RST-001/fail-stale.yaml"
    docs = _docs(fixture)
    baseline = _complete(tmp_path / "ok", fixture, docs)
    assert _vm1(baseline)["readiness"] == "READY"
    assert _finding(baseline, "RR-RST-001")["severity"] == "info"
    restore = _of(docs, "Restore")[0]
    restore["metadata"]["creationTimestamp"] = FUTURE
    report = _complete(tmp_path / "mutated", fixture, docs)
    named = [p for p in report["collection_problems"] if p["kind"] == "Restore"]
    assert named and named[0]["kinds"] == ["Restore"], named
    assert _finding(report, "RR-RST-001")["status"] == "ERROR"
    _no_better(baseline, report)


@pytest.mark.parametrize(
    ("fixture", "kind", "field", "where"),
    [
        # a drill whose data is unknown (its DataDownloads unread): UNKNOWN; its Restore's
        # completion moved past the clock read it as running then, and the VM READY
        (
            "RR-RST-001/error-data-download-unreadable.yaml",
            "Restore",
            "completionTimestamp",
            "status",
        ),
        # the same drill's Restore created past the clock: left out as "did not exist then"
        (
            "RR-RST-001/error-data-download-unreadable.yaml",
            "Restore",
            "creationTimestamp",
            "metadata",
        ),
        ("RR-BKP-001/pass.yaml", "Backup", "completionTimestamp", "status"),
    ],
)
def test_a_time_after_this_machines_clock_is_impossible_and_unknown(
    tmp_path: Path, fixture: str, kind: str, field: str, where: str
) -> None:
    """No input read until now holds a time after now: a creation or status time past this
    machine's clock is an edited copy, so the object's kind is partial and the problem says
    so; never an object that did not exist yet, nor an event read as not yet (mutations
    future_time, seed 17: UNKNOWN -> READY)."""
    docs = _docs(fixture)
    baseline = _complete(tmp_path / "ok", fixture, docs)
    obj = _of(docs, kind)[0]
    obj.setdefault(where, {})[field] = "2031-06-01T00:00:00Z"
    report = _complete(tmp_path / "mutated", fixture, docs)
    _no_better(baseline, report)
    named = [p for p in report["collection_problems"] if p["kind"] == kind]
    assert named and "after this machine's clock" in named[0]["reason"], named
    assert kind in named[0]["kinds"]
    assert report["run"]["complete"] is False
