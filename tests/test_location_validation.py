"""A BackupStorageLocation's ``Available`` phase counts only as recently validated.

Velero validates each location every ``spec.validationFrequency`` (the server's default, 1
minute, when unset; 0 turns it off) and writes ``status.phase`` with
``status.lastValidationTime`` (velero ``internal/storage/storagelocation.go``). An ``Available``
phase validated days before the audit is the location as it was then (red team rt9, bug case
20 variant: it rated the VM READY). Rule: ``auditor/inventory/locations.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.test_evidence_gaps import _complete, _docs, _finding, _of

FIXTURE = "RR-BKP-004/pass.yaml"


def _audit(tmp_path: Path, **status: Any) -> dict[str, Any]:
    docs = _docs(FIXTURE)
    (bsl,) = _of(docs, "BackupStorageLocation")
    for key, value in status.items():
        if key == "validationFrequency":
            bsl["spec"][key] = value
        elif value is None:
            bsl["status"].pop(key, None)
        else:
            bsl["status"][key] = value
    return _complete(tmp_path, FIXTURE, docs)


def _readiness(report: dict[str, Any]) -> str:
    return str(next(v for v in report["vms"] if v["name"] == "vm1")["readiness"])


def test_a_recent_validation_keeps_the_fixture_ready(tmp_path: Path) -> None:
    report = _audit(tmp_path)
    assert _readiness(report) == "READY"
    assert _finding(report, "RR-BKP-004")["status"] == "PASS"
    plt = next(f for f in report["platform_findings"] if f["check_id"] == "RR-PLT-001")
    assert plt["status"] == "PASS" and "stale" not in plt["message"]


@pytest.mark.parametrize(
    ("status", "why"),
    [
        # validated ten days before the audit, every minute by default
        ({"lastValidationTime": "2026-11-20T06:00:00Z"}, "240.0 h before the audit"),
        # validation turned off: the phase is as old as its one validation
        (
            {"lastValidationTime": "2026-11-30T03:00:00Z", "validationFrequency": "0s"},
            "validation is turned off",
        ),
        # Available without the time Velero writes with it
        ({"lastValidationTime": None}, "no readable status.lastValidationTime"),
    ],
)
def test_a_stale_available_phase_proves_no_capture(
    tmp_path: Path, status: dict[str, Any], why: str
) -> None:
    report = _audit(tmp_path, **status)
    bkp004 = _finding(report, "RR-BKP-004")
    assert bkp004["status"] == "ERROR" and why in bkp004["message"]
    assert _readiness(report) == "UNKNOWN"
    plt = next(f for f in report["platform_findings"] if f["check_id"] == "RR-PLT-001")
    assert plt["status"] == "ERROR" and why in plt["message"]
    assert plt["evidence"]["stale_locations"] == ["velero/default"]


def test_a_long_validation_period_allows_an_older_validation(tmp_path: Path) -> None:
    """Validated 5 h ago by a location validated every 6 h: not stale (2 periods allowed)."""
    report = _audit(
        tmp_path, lastValidationTime="2026-11-30T01:00:00Z", validationFrequency="6h0m0s"
    )
    assert _readiness(report) == "READY"
    stale = _audit(
        tmp_path / "b", lastValidationTime="2026-11-29T17:00:00Z", validationFrequency="6h0m0s"
    )
    assert _readiness(stale) == "UNKNOWN"


def test_a_malformed_validation_frequency_is_named(tmp_path: Path) -> None:
    report = _audit(tmp_path, validationFrequency="often")
    assert any(
        p["kind"] == "BackupStorageLocation" and p["field"] == "spec.validationFrequency"
        for p in report["collection_problems"]
    )


def test_a_location_without_a_phase_was_never_validated(tmp_path: Path) -> None:
    """Velero validates every location at least once and writes its phase then: a location
    with no ``status.phase`` is unvalidated (unknown), not a location known to be down."""
    report = _audit(tmp_path, phase=None)
    bkp004 = _finding(report, "RR-BKP-004")
    assert bkp004["status"] == "ERROR" and "has no status.phase" in bkp004["message"]
    assert _readiness(report) == "UNKNOWN"
    plt = next(f for f in report["platform_findings"] if f["check_id"] == "RR-PLT-001")
    assert plt["status"] == "ERROR" and "has no status.phase" in plt["message"]


def test_a_missing_or_wrong_typed_phase_is_named(tmp_path: Path) -> None:
    """Whatever the verdict, why it is unknown is named (the mutation bench's unnamed change)."""
    report = _audit(tmp_path / "none", phase=None)
    assert any(
        p["kind"] == "BackupStorageLocation" and p["field"] == "status.phase"
        for p in report["collection_problems"]
    )
    typed = _audit(tmp_path / "typed", phase=1)
    assert _readiness(typed) == "UNKNOWN"
    assert any(
        p["field"] == "status.phase" and "not a string" in p["reason"]
        for p in typed["collection_problems"]
    )
