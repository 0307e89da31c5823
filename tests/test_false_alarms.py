"""False alarms (helper fp12): healthy configurations a real cluster produces that the
auditor rated worse than READY, each held to the verdict its evidence allows.

Each test takes a fixture of the check catalog, changes one thing, and asserts the finding
that must follow; beside it, a guard that the same change on a broken case stays broken.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.test_evidence_gaps import _complete, _docs, _finding, _of

Docs = list[dict[str, Any]]

FIXTURE = "RR-BKP-001/pass.yaml"
LOCATION_LABEL = "velero.io/storage-location"


def _vm1(report: dict[str, Any]) -> dict[str, Any]:
    vm: dict[str, Any] = next(v for v in report["vms"] if v["name"] == "vm1")
    return vm


def _location_in_label_only(docs: Docs) -> None:
    """Each Backup names its location only in the label Velero writes, not in its spec."""
    for backup in _of(docs, "Backup"):
        where = backup["spec"].pop("storageLocation")
        backup["metadata"].setdefault("labels", {})[LOCATION_LABEL] = where


def test_a_backup_whose_location_is_only_in_its_velero_label_is_on_that_location(
    tmp_path: Path,
) -> None:
    """Velero fills an unset ``spec.storageLocation`` with the default location and labels
    the Backup ``velero.io/storage-location`` with it before the backup runs (velero
    pkg/controller/backup_controller.go ``prepareBackupRequest``). A Completed Backup whose
    spec names no location but whose label names an Available one was read as on a
    location "(none named), which is missing": NOT_READY."""
    docs = _docs(FIXTURE)
    _location_in_label_only(docs)
    report = _complete(tmp_path, FIXTURE, docs)
    finding = _finding(report, "RR-BKP-001")
    assert finding["status"] == "PASS", finding["message"]
    assert _vm1(report)["readiness"] == "READY"


def test_a_location_label_naming_an_unavailable_location_is_no_restore_point(
    tmp_path: Path,
) -> None:
    """The label is read as the location, so a label naming a location that is not
    Available still makes the Backup no restore point (never the default location now)."""
    docs = _docs(FIXTURE)
    _location_in_label_only(docs)
    for location in _of(docs, "BackupStorageLocation"):
        location["status"]["phase"] = "Unavailable"
    finding = _finding(_complete(tmp_path, FIXTURE, docs), "RR-BKP-001")
    assert finding["status"] == "FAIL", finding["message"]


def test_a_backup_naming_no_location_anywhere_is_still_on_none(tmp_path: Path) -> None:
    """Without spec or label the location is not guessed from today's default."""
    docs = _docs(FIXTURE)
    for backup in _of(docs, "Backup"):
        backup["spec"].pop("storageLocation")
    finding = _finding(_complete(tmp_path, FIXTURE, docs), "RR-BKP-001")
    assert finding["status"] == "FAIL", finding["message"]
    assert "(none named)" in finding["message"]


def test_the_bucket_reader_finds_a_backup_on_its_labelled_location() -> None:
    """The bucket reader looks for a Backup whose spec names no location where the index
    does: the location Velero labelled it with, not today's default location."""
    from auditor.sources.bucket.load import backup_location

    labelled = {
        "metadata": {"name": "b", "labels": {"velero.io/storage-location": "second"}},
        "spec": {},
    }
    assert backup_location(labelled, "default") == "second"
    named = {"metadata": {"name": "b"}, "spec": {"storageLocation": "third"}}
    assert backup_location(named, "default") == "third"
    assert backup_location({"metadata": {"name": "b"}, "spec": {}}, "default") == "default"


def test_a_driver_whose_vm_disks_are_all_fs_backed_needs_no_snapshot_class(
    tmp_path: Path,
) -> None:
    """RR-PLT-003's own remedy is file-system backup: once every VM disk on a driver was
    copied that way (Completed PodVolumeBackups in the newest usable Backup) and no VM has a
    VirtualMachineSnapshot, the driver is not missing a VolumeSnapshotClass (helper fp12: the
    platform FAIL stayed). A VirtualMachineSnapshot of the VM would need the class again."""
    fixture = "RR-BKP-004/pass-fs-backup-podvolumebackups.yaml"
    docs = [d for d in _docs(fixture) if d["kind"] != "VolumeSnapshotClass"]
    report = _complete(tmp_path / "fs", fixture, docs)
    plt = next(f for f in report["platform_findings"] if f["check_id"] == "RR-PLT-003")
    assert plt["status"] == "PASS"
    assert plt["evidence"]["missing"] == []
    assert plt["evidence"]["covered_by_fs_backup"] == ["csi.example.com"]
    vm_snapshot = {
        "apiVersion": "snapshot.kubevirt.io/v1beta1",
        "kind": "VirtualMachineSnapshot",
        "metadata": {"name": "snap-1", "namespace": "app"},
        "spec": {"source": {"apiGroup": "kubevirt.io", "kind": "VirtualMachine", "name": "vm1"}},
        "status": {"phase": "Succeeded", "readyToUse": True},
    }
    with_snapshot = _complete(tmp_path / "snap", fixture, [*docs, vm_snapshot])
    plt = next(f for f in with_snapshot["platform_findings"] if f["check_id"] == "RR-PLT-003")
    assert plt["status"] == "FAIL" and plt["evidence"]["missing"] == ["csi.example.com"]
