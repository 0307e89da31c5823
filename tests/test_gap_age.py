"""The age of a VM's backup gap (``root_causes[].age_hours``) counts only what is known."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

from auditor.config import AuditSettings
from auditor.envelope import report_document
from auditor.pipeline import audit_data
from auditor.sources.directory import DirectorySource
from tests.conftest import AUDIT_AT

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "small-cluster"


def _gap(doc: dict, name: str) -> dict[str, float | None]:  # type: ignore[type-arg]
    vm = next(v for v in doc["vms"] if v["name"] == name)
    return {c["id"]: c["age_hours"] for c in vm["root_causes"]}


def test_a_location_down_gives_no_gap_age_counted_from_the_vms_creation(tmp_path: Path) -> None:
    """With the BackupStorageLocation Unavailable, no backup is usable (RR-BKP-001 FAIL) but
    backups held every VM until hours ago: the gap's age counted from each VM's creation
    said 627.8 days for a VM backed up that morning (trial nu25). It is now unknown (null),
    while a VM no backup ever held keeps the age since its creation."""
    export = tmp_path / "export"
    shutil.copytree(EXAMPLE, export)
    bsl = export / "backupstoragelocations.yaml"
    bsl.write_text(bsl.read_text().replace("phase: Available", "phase: Unavailable"))
    doc = report_document(
        audit_data(DirectorySource(export).collect(), AuditSettings(), at=AUDIT_AT)
    )
    db = _gap(doc, "billing-db")
    assert "no-usable-backup" in db and db["no-usable-backup"] is None, db
    # the same VM with its location Available: a restore point, and the gap age is its age
    healthy = report_document(
        audit_data(DirectorySource(EXAMPLE).collect(), AuditSettings(), at=AUDIT_AT)
    )
    assert "no-usable-backup" not in _gap(healthy, "billing-db")


def test_a_vm_no_backup_ever_held_counts_its_gap_from_its_creation(tmp_path: Path) -> None:
    """The other side: with an empty Backup list (read, complete), billing-db (created
    2026-01-10T09:59:00Z) has been without a backup since its creation."""
    export = tmp_path / "export"
    shutil.copytree(EXAMPLE, export)
    (export / "backups.yaml").write_text("apiVersion: v1\nitems: []\nkind: List\nmetadata: {}\n")
    doc = report_document(
        audit_data(DirectorySource(export).collect(), AuditSettings(), at=AUDIT_AT)
    )
    created = datetime(2026, 1, 10, 9, 59, tzinfo=UTC)
    expected = round((AUDIT_AT - created).total_seconds() / 3600, 2)
    assert _gap(doc, "billing-db")["no-usable-backup"] == expected
