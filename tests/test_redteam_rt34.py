"""Red-team round rt34: backup lifecycle, the data mover, VM storage (volume) migration and
restore-side configuration.

Each test changes one project fixture the way a real cluster drifts, and asserts the verdict
beside the healthy shape, which keeps its own.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from tests.test_evidence_gaps import _complete, _docs, _finding, _of

Docs = list[dict[str, Any]]

#: app/vm1 running on the dataVolume volumes vm1-root and vm1-data, namespace Backups
#: daily-20261128 and daily-20261130 (01:00) by CSI snapshot, audited 2026-11-30T06:00Z
HEALTHY = "RR-BKP-001/pass.yaml"


def _readiness(report: dict[str, Any], vm: str = "vm1") -> str:
    return str(next(v for v in report["vms"] if v["name"] == vm)["readiness"])


def _named(docs: Docs, kind: str, name: str) -> dict[str, Any]:
    return next(d for d in _of(docs, kind) if d["metadata"]["name"] == name)


def _migrate_root(docs: Docs, state: str, started: str = "2026-11-29T20:05:00Z") -> None:
    """Move vm1's root volume onto PVC vm1-root-mig (created 2026-11-29T20:00Z, before both
    Backups' last) by a volume migration (``updateVolumesStrategy: Migration``) that is
    ``progress``, ``failed`` (ManualRecoveryRequired, the VMI gone) or ``done`` (KubeVirt
    removed VolumesChange; ``volumeMigrationState`` stays: vm.go syncVolumeMigration). Each
    Backup's CSI counters and contents account for the fourth PVC."""
    vm, vmi = _of(docs, "VirtualMachine")[0], _of(docs, "VirtualMachineInstance")[0]
    root = {"name": "root", "persistentVolumeClaim": {"claimName": "vm1-root-mig"}}
    vm["spec"]["updateVolumesStrategy"] = "Migration"
    volumes = vm["spec"]["template"]["spec"]["volumes"]
    volumes[:] = [root if v["name"] == "root" else v for v in volumes]
    info = {
        "volumeName": "root",
        "sourcePVCInfo": {"claimName": "vm1-root", "volumeMode": "Block"},
        "destinationPVCInfo": {"claimName": "vm1-root-mig", "volumeMode": "Block"},
    }
    status = vm.setdefault("status", {})
    status["volumeUpdateState"] = {"volumeMigrationState": {"migratedVolumes": [info]}}
    change = {"type": "VolumesChange", "status": "True", "lastTransitionTime": started}
    if state == "progress":
        status["conditions"] = [change]
        vmi["status"]["migratedVolumes"] = [info]
        vmi["status"]["conditions"] = [change]
    elif state == "failed":
        recovery = {
            "type": "ManualRecoveryRequired",
            "status": "True",
            "reason": "VMI was removed or was final during the volume migration",
            "lastTransitionTime": "2026-11-29T21:00:00Z",
        }
        status["conditions"] = [change, recovery]
        docs.remove(vmi)
        vm["spec"]["runStrategy"] = "Halted"
    if state != "failed":
        vmi["spec"]["volumes"] = [
            root if v["name"] == "root" else v for v in vmi["spec"]["volumes"]
        ]
    pvc = copy.deepcopy(_named(docs, "PersistentVolumeClaim", "vm1-root"))
    pvc["metadata"].update(
        name="vm1-root-mig", uid="uid-pvc-mig", creationTimestamp="2026-11-29T20:00:00Z"
    )
    pvc["spec"]["volumeName"] = "pv-mig"
    pv = copy.deepcopy(_named(docs, "PersistentVolume", "pv-app-vm1-root"))
    pv["metadata"]["name"] = "pv-mig"
    pv["spec"]["claimRef"].update(name="vm1-root-mig", uid="uid-pvc-mig")
    pv["spec"]["csi"]["volumeHandle"] = "h-mig"
    docs += [pvc, pv]
    for b in _of(docs, "Backup"):
        for key in (
            "backupItemOperationsAttempted",
            "backupItemOperationsCompleted",
            "csiVolumeSnapshotsAttempted",
            "csiVolumeSnapshotsCompleted",
        ):
            b["status"][key] = 4
        name = b["metadata"]["name"]
        content = copy.deepcopy(_named(docs, "VolumeSnapshotContent", f"snapcontent-{name}-0"))
        content["metadata"]["name"] = f"snapcontent-{name}-3"
        docs.append(content)


@pytest.mark.parametrize("state", ["progress", "failed"])
def test_a_backup_taken_during_a_volume_migration_holds_a_partial_disk(
    tmp_path: Path, state: str
) -> None:
    """The newest Backup began after vm1's root volume started migrating onto vm1-root-mig
    and before KubeVirt finalised the copy (or after it failed, ManualRecoveryRequired): it
    holds the VM spec naming vm1-root-mig and a snapshot of its blank or partial content, and a
    restore (which drops status and the condition) boots the guest on it. The destination PVC
    existed before the Backup, so it counted as captured: READY."""
    base = _complete(tmp_path / "base", HEALTHY, _docs(HEALTHY))
    assert _readiness(base) == "READY"
    docs = _docs(HEALTHY)
    _migrate_root(docs, state)
    report = _complete(tmp_path / state, HEALTHY, docs)
    finding = _finding(report, "RR-BKP-004")
    assert finding["status"] == "FAIL"
    assert finding["severity"] == "high"
    assert "vm1-root-mig" in finding["message"]
    assert "volume migration from PVC vm1-root" in finding["message"]
    assert "began after the migration started at 2026-11-29T20:05:00Z" in finding["message"]
    assert _readiness(report) == "NOT_READY"


def test_a_backup_from_before_the_volume_migration_is_not_evidence_of_its_target(
    tmp_path: Path,
) -> None:
    """A migration that started after every Backup: they hold the VM with its former volume
    (vm1-root), not the blank destination the VM names now; neither READY nor NOT_READY."""
    docs = _docs(HEALTHY)
    _migrate_root(docs, "progress", started="2026-11-30T03:00:00Z")
    report = _complete(tmp_path / "later", HEALTHY, docs)
    finding = _finding(report, "RR-BKP-004")
    assert finding["status"] == "ERROR"
    assert "began before the migration started" in finding["message"]
    assert _readiness(report) == "UNKNOWN"


def test_a_finished_volume_migration_keeps_its_verdict(tmp_path: Path) -> None:
    """KubeVirt keeps volumeMigrationState after a migration is finalised (no VolumesChange
    condition left): the destination is the disk, captured by both Backups."""
    docs = _docs(HEALTHY)
    _migrate_root(docs, "done")
    report = _complete(tmp_path / "done", HEALTHY, docs)
    assert _finding(report, "RR-BKP-004")["status"] == "PASS"
    assert _readiness(report) == "READY"


@pytest.mark.parametrize(
    ("start", "end", "verdict"),
    [
        ("2026-11-30T00:30:00Z", "2026-11-30T03:00:00Z", "NOT_READY"),
        ("2026-11-30T04:00:00Z", "2026-11-30T04:20:00Z", "READY"),
    ],
)
def test_a_backup_inside_the_finished_migrations_window_holds_a_partial_disk(
    tmp_path: Path, start: str, end: str, verdict: str
) -> None:
    """The migration finished before the audit (no VolumesChange left), but the VMI's last
    completed migration ran from ``start`` to ``end``: daily-20261130 (01:00) began while the
    copy onto vm1-root-mig was running and holds it partial (READY before); a window after
    both Backups leaves them as they were."""
    docs = _docs(HEALTHY)
    _migrate_root(docs, "done")
    _of(docs, "VirtualMachineInstance")[0]["status"]["migrationState"] = {
        "startTimestamp": start,
        "endTimestamp": end,
        "completed": True,
        "sourceNode": "node-a",
        "targetNode": "node-b",
    }
    report = _complete(tmp_path / "window", HEALTHY, docs)
    assert _readiness(report) == verdict
    finding = _finding(report, "RR-BKP-004")
    if verdict == "READY":
        assert finding["status"] == "PASS"
        return
    assert finding["status"] == "FAIL"
    assert "daily-20261130 began at 2026-11-30T01:00:00Z" in finding["message"]
    assert "was copying onto it" in finding["message"]


def test_a_volume_update_state_that_is_no_mapping_is_named(tmp_path: Path) -> None:
    docs = _docs(HEALTHY)
    _migrate_root(docs, "done")
    _of(docs, "VirtualMachine")[0]["status"]["volumeUpdateState"] = "Migration"
    report = _complete(tmp_path / "bad", HEALTHY, docs)
    finding = _finding(report, "RR-BKP-004")
    assert finding["status"] == "ERROR"
    assert "status.volumeUpdateState" in finding["message"]
    assert any(
        p["field"] == "status.volumeUpdateState" and p["name"] == "vm1"
        for p in report["collection_problems"]
    )
    assert _readiness(report) != "READY"


@pytest.mark.parametrize(
    ("fixture", "kind", "message"),
    [
        ("RR-BKP-004/pass-data-mover.yaml", "DataUpload", "volume was empty so no data was upload"),
        (
            "RR-BKP-004/pass-fs-backup-podvolumebackups.yaml",
            "PodVolumeBackup",
            "volume was empty so no snapshot was taken",
        ),
    ],
)
def test_an_upload_of_an_empty_volume_is_no_copy_of_the_disk(
    tmp_path: Path, fixture: str, kind: str, message: str
) -> None:
    """Velero's node-agent completes the upload of an empty volume with that message and no
    snapshot ID, which the API server does not store (``snapshotID,omitempty``): the restore
    skips it. Only an empty ID written out was caught; the omitted one counted (READY, or
    AT_RISK for the data-mover fixture's next-backup gap)."""
    base = _complete(tmp_path / "base", fixture, _docs(fixture))
    assert _finding(base, "RR-BKP-004")["status"] == "PASS"
    assert _readiness(base) in ("READY", "AT_RISK")
    docs = _docs(fixture)
    newest = max(_of(docs, "Backup"), key=lambda b: b["metadata"]["name"])["metadata"]["name"]
    for item in _of(docs, kind):
        name = item["metadata"]["name"]
        if item["metadata"]["labels"]["velero.io/backup-name"] == newest and "root" in name:
            item["status"]["message"] = message
            item["status"].pop("snapshotID", None)
    report = _complete(tmp_path / "empty", fixture, docs)
    finding = _finding(report, "RR-BKP-004")
    assert finding["status"] == "ERROR"
    assert "vm1-root" in finding["message"]
    assert "the volume was empty" in finding["message"]
    assert _readiness(report) == "UNKNOWN"


def test_an_empty_upload_in_the_backups_own_records_is_no_copy() -> None:
    """The same upload as Velero's volume info and PodVolumeBackup list in the bucket record
    it: ``pvbInfo.snapshotHandle`` omitted, the data mover's written empty, the
    PodVolumeBackup without ``status.snapshotID``. Each counted as captured."""
    from auditor.sources.base import StoredVolume
    from auditor.sources.bucket.decode import (
        VolumeLookup,
        volumes_from_method_files,
        volumes_from_volumeinfo,
    )

    fs = {"Phase": "Completed", "size": 0, "uploaderType": "kopia"}
    moved = {"Phase": "Completed", "dataMover": "velero", "snapshotHandle": ""}
    raw = [
        {"pvcName": "fs", "pvcNamespace": "ns", "backupMethod": "PodVolumeBackup",
         "result": "succeeded", "pvbInfo": fs},
        {"pvcName": "dm", "pvcNamespace": "ns", "backupMethod": "CSISnapshot",
         "snapshotDataMoved": True, "result": "succeeded", "snapshotDataMovementInfo": moved},
        {"pvcName": "ok", "pvcNamespace": "ns", "backupMethod": "PodVolumeBackup",
         "result": "succeeded", "pvbInfo": {**fs, "snapshotHandle": "k1"}},
    ]  # fmt: skip
    got = {v.pvc: v for v in volumes_from_volumeinfo(raw) or ()}
    assert got["fs"].outcome == "failed"
    assert "pvbInfo has no snapshotHandle" in got["fs"].detail
    assert got["dm"].outcome == "failed"
    assert "snapshotHandle is empty" in got["dm"].detail
    assert got["ok"] == StoredVolume("ns", "ok", "fs-backup", "captured", "result succeeded", 0)
    pvbs = [
        {
            "metadata": {"labels": {"velero.io/pvc-uid": "uid-fs"}},
            "status": {
                "phase": "Completed",
                "message": "volume was empty so no snapshot was taken",
            },
        }
    ]
    lookup = VolumeLookup(pv_claims={}, pvc_uids={"uid-fs": ("ns", "fs")}, handle_claims={})
    (vol,) = volumes_from_method_files([], pvbs, [], lookup, [])
    assert vol.outcome == "failed"
    assert "no status.snapshotID" in vol.detail


def _delete_request(backup: str, phase: str | None) -> dict[str, Any]:
    request: dict[str, Any] = {
        "apiVersion": "velero.io/v1",
        "kind": "DeleteBackupRequest",
        "metadata": {"name": f"{backup}-del", "namespace": "velero"},
        "spec": {"backupName": backup},
    }
    if phase is not None:
        request["status"] = {"phase": phase}
    return request


@pytest.mark.parametrize("phase", [None, "New", "InProgress"])
def test_a_backup_with_a_pending_delete_request_is_no_restore_point(
    tmp_path: Path, phase: str | None
) -> None:
    """``velero backup delete`` leaves a DeleteBackupRequest; until Velero's deletion
    controller has processed it the Backup still says Completed, and then its snapshots and
    bucket objects go. Both Backups so marked were still counted: READY."""
    docs = _docs(HEALTHY)
    docs += [_delete_request("daily-20261130", phase), _delete_request("daily-20261128", phase)]
    report = _complete(tmp_path / "dbr", HEALTHY, docs)
    finding = _finding(report, "RR-BKP-001")
    assert finding["status"] == "FAIL"
    assert "DeleteBackupRequest velero/daily-20261130-del" in finding["message"]
    assert _readiness(report) == "NOT_READY"


def test_a_processed_delete_request_leaves_the_backup(tmp_path: Path) -> None:
    """A request Velero processed and refused (a read-only location) left the Backup whole."""
    docs = _docs(HEALTHY)
    docs.append(_delete_request("daily-20261130", "Processed"))
    report = _complete(tmp_path / "done", HEALTHY, docs)
    assert _readiness(report) == "READY"


def _repository(phase: str, namespace: str = "app") -> dict[str, Any]:
    return {
        "apiVersion": "velero.io/v1",
        "kind": "BackupRepository",
        "metadata": {"name": f"{namespace}-default-kopia-x", "namespace": "velero"},
        "spec": {
            "volumeNamespace": namespace,
            "backupStorageLocation": "default",
            "repositoryType": "kopia",
            "maintenanceFrequency": "1h",
        },
        "status": {
            "phase": phase,
            "message": "error to connect to backup repo: invalid repository password",
        },
    }


@pytest.mark.parametrize(
    "fixture",
    ["RR-BKP-004/pass-data-mover.yaml", "RR-BKP-004/pass-fs-backup-podvolumebackups.yaml"],
)
def test_a_copy_in_a_repository_that_is_not_ready_is_not_evidenced(
    tmp_path: Path, fixture: str
) -> None:
    """Velero reads a data-mover or file-system copy back only through a Ready
    BackupRepository (pkg/repository/backup_repo_op.go: "backup repository is not ready");
    the repository of the VM's namespace was NotReady (a changed repository password) and the
    Completed uploads still counted (READY; AT_RISK for the data-mover fixture)."""
    docs = _docs(fixture)
    docs.append(_repository("NotReady"))
    report = _complete(tmp_path / "notready", fixture, docs)
    finding = _finding(report, "RR-BKP-004")
    assert finding["status"] == "ERROR"
    assert "BackupRepository velero/app-default-kopia-x (kopia)" in finding["message"]
    assert "is NotReady" in finding["message"]
    assert _readiness(report) == "UNKNOWN"


@pytest.mark.parametrize(
    ("fixture", "repo"),
    [
        ("RR-BKP-004/pass-fs-backup-podvolumebackups.yaml", _repository("Ready")),
        ("RR-BKP-004/pass-fs-backup-podvolumebackups.yaml", _repository("NotReady", "other")),
        (HEALTHY, _repository("NotReady")),  # CSI snapshots are not read through it
    ],
)
def test_a_ready_or_unrelated_repository_changes_nothing(
    tmp_path: Path, fixture: str, repo: dict[str, Any]
) -> None:
    docs = _docs(fixture)
    docs.append(repo)
    report = _complete(tmp_path / "other", fixture, docs)
    assert _finding(report, "RR-BKP-004")["status"] == "PASS"
    assert _readiness(report) == "READY"
