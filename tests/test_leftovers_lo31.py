"""Leftovers of the morning's reviews (helper lo31): each a verdict that was wrong or unnamed.

1. A BackupStorageLocation with ``metadata.deletionTimestamp`` set still counted as Available:
   Velero sets no finalizer on it, so it goes once any other finalizer is released, and then
   restores of its Backups fail validation (velero ``pkg/controller/restore_controller.go``
   ``fetchBackupInfoInternal``). Rule: ``auditor/inventory/locations.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.test_evidence_gaps import _complete, _docs, _finding, _of

BSL_FIXTURE = "RR-BKP-004/pass.yaml"


def _bsl_audit(tmp_path: Path, deleted: str | None) -> dict[str, Any]:
    docs = _docs(BSL_FIXTURE)
    (bsl,) = _of(docs, "BackupStorageLocation")
    if deleted is not None:
        bsl["metadata"]["deletionTimestamp"] = deleted
        bsl["metadata"]["finalizers"] = ["example.com/keep"]
    return _complete(tmp_path, BSL_FIXTURE, docs)


def test_a_location_being_deleted_is_no_evidence(tmp_path: Path) -> None:
    kept = _bsl_audit(tmp_path / "kept", None)
    vm = next(v for v in kept["vms"] if v["name"] == "vm1")
    assert vm["readiness"] == "READY"
    report = _bsl_audit(tmp_path / "deleted", "2026-11-30T05:00:00Z")
    vm = next(v for v in report["vms"] if v["name"] == "vm1")
    assert vm["readiness"] == "UNKNOWN"
    bkp004 = _finding(report, "RR-BKP-004")
    assert bkp004["status"] == "ERROR"
    assert "velero/default is being deleted" in bkp004["message"]
    assert "2026-11-30T05:00:00Z" in bkp004["message"]
    plt = next(f for f in report["platform_findings"] if f["check_id"] == "RR-PLT-001")
    assert plt["status"] == "ERROR" and "being deleted" in plt["message"]
    assert plt["evidence"]["stale_locations"] == ["velero/default"]
