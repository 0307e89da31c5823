"""Fuzz: mutated objects through the source rules and the full engine.

Every input gives a named collection problem or a normal finding: never an
exception, never a hang, never non-JSON output, and never a PASS that the
input did not earn.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from auditor.models import Status
from tests.fuzz_strategies import FUZZ, bad_time, junk, mutate, paths_of
from tests.scale_support import (
    BACKUP_CHECKS,
    audit,
    collect_objects,
    good_objects,
    of_kind,
    statuses,
    strict_json,
    time_limit,
)

STATUSES = {s.value for s in Status}
OPS = st.sampled_from(["replace", "delete", "add"])


def test_baseline_passes_every_backup_check() -> None:
    got = statuses(audit(good_objects()))
    assert {c: got[c] for c in BACKUP_CHECKS} == dict.fromkeys(BACKUP_CHECKS, "PASS")
    assert got["RR-RST-001"] == "PASS"


@FUZZ
@given(st.data())
def test_any_single_mutation_audits_without_crash(data: st.DataObject) -> None:
    objects = good_objects()
    index = data.draw(st.integers(0, len(objects) - 1), label="object")
    paths = paths_of(objects[index])
    path = data.draw(st.sampled_from(paths), label="path")
    mutate(objects[index], path, data.draw(OPS, label="op"), data.draw(junk, label="value"))
    with time_limit(20):
        report = audit(objects)
        strict_json(report)
    assert len(report["vms"]) <= 1
    for vm in report["vms"]:
        assert {f["status"] for f in vm["findings"]} <= STATUSES
    if report["run"]["complete"] is False:
        assert all(p["reason"] for p in report["collection_problems"])


@FUZZ
@given(st.data())
def test_whole_object_replaced_by_junk_is_a_named_problem(data: st.DataObject) -> None:
    objects: list[Any] = good_objects()
    index = data.draw(st.integers(0, len(objects) - 1))
    objects[index] = data.draw(junk)
    with time_limit(20):
        data_ = collect_objects(objects)
        report = audit(objects)
    strict_json(report)
    if objects[index] is not None and not isinstance(objects[index], dict):  # None: empty doc
        assert any("fuzz.yaml" in p.reason for p in data_.problems)


PHASE_JUNK = st.one_of(
    junk, st.sampled_from(["completed", "COMPLETED", "Completed ", "Done", "Failed"])
)


@FUZZ
@given(PHASE_JUNK)
def test_backup_with_garbage_phase_never_makes_backup_checks_pass(phase: Any) -> None:
    objects = good_objects()
    for b in of_kind(objects, "Backup"):
        b["status"]["phase"] = phase
    got = statuses(audit(objects))
    assert got, "the VM must still be audited"
    assert all(got[c] != "PASS" for c in BACKUP_CHECKS), got


@FUZZ
# "2026-11-30" (date only) is read leniently as midnight, the oldest instant of that day.
@given(st.one_of(bad_time, junk).filter(lambda v: v != "2026-11-30"))
def test_backup_with_garbage_times_is_not_within_rpo(when: Any) -> None:
    # A garbage completionTimestamp alone may fall back to the start time (a conservative
    # age for the data); with every time garbage the age is unknown and cannot PASS.
    objects = good_objects()
    for b in of_kind(objects, "Backup"):
        b["status"]["completionTimestamp"] = when
        b["status"]["startTimestamp"] = when
        b["metadata"]["creationTimestamp"] = when
    got = statuses(audit(objects))
    assert got["RR-BKP-002"] != "PASS", (when, got)


@FUZZ
@given(
    st.one_of(
        st.integers(),
        st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
        st.lists(st.integers(), min_size=1, max_size=3),
        st.just("app"),
    )
)
def test_backup_scope_of_the_wrong_type_never_counts_as_covering(scope: Any) -> None:
    objects = good_objects()
    for b in of_kind(objects, "Backup"):
        b["spec"]["includedNamespaces"] = scope
    got = statuses(audit(objects))
    assert got["RR-BKP-001"] != "PASS", (scope, got)


@FUZZ
@given(junk)
def test_restore_with_garbage_phase_is_no_restore_test(phase: Any) -> None:
    objects = good_objects()
    for r in of_kind(objects, "Restore"):
        r["status"]["phase"] = phase
    got = statuses(audit(objects))
    if phase == "Completed":
        return
    assert got["RR-RST-001"] != "PASS", (phase, got)


@FUZZ
@given(
    st.one_of(
        st.integers(),
        st.floats(),
        st.lists(st.text(max_size=3)),
        st.just(""),
        st.just({}),
        st.booleans(),
    )
)
def test_unpinned_or_garbage_identity_never_passes(value: Any) -> None:
    objects = good_objects()
    vm = of_kind(objects, "VirtualMachine")[0]
    vm["spec"]["template"]["spec"]["domain"]["firmware"]["uuid"] = value
    for iface in vm["spec"]["template"]["spec"]["domain"]["devices"]["interfaces"]:
        iface["macAddress"] = value
    got = statuses(audit(objects))
    assert got["RR-FW-001"] != "PASS", (value, got)
    assert got["RR-NIC-001"] != "PASS", (value, got)


@pytest.mark.parametrize("size", ["-5Gi", "0", "1e309", "NaN", "", "-1"])
def test_negative_or_absurd_pvc_sizes_do_not_crash(size: str) -> None:
    objects = good_objects()
    for pvc in of_kind(objects, "PersistentVolumeClaim"):
        pvc["spec"]["resources"]["requests"]["storage"] = size
        pvc.setdefault("status", {})["capacity"] = {"storage": size}
    report = audit(objects)
    strict_json(report)
    assert statuses(report)
