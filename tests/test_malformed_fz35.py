"""Malformed input in the kinds and fields read since rt34/lo34 never improves a verdict (fz35).

Each case breaks one object of DeleteBackupRequest, BackupRepository, CDIConfig, CDI,
HyperConverged, or a VMI's ``status.migrationState``, in a way that before this round let the
object be passed over (or the first of two disagreeing ones decide), so the VM read as READY
(or the refused restore as PASS) where the object absent or well formed but bad said
otherwise. Now the malformed object is named (kind, object, field) among the audit's problems
and the verdict is no better than the bad one's: UNKNOWN (ERROR) or FAIL, never READY/PASS.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from tests.test_evidence_gaps import _complete, _docs, _finding, _of
from tests.test_leftovers_lo34 import GATE, _cdi, _cdi_config, _hco
from tests.test_redteam_rt33 import NO_PLUGIN, _add_datavolume
from tests.test_redteam_rt34 import HEALTHY, _delete_request, _migrate_root, _readiness, _repository

FS_BACKUP = "RR-BKP-004/pass-fs-backup-podvolumebackups.yaml"


def _problems(report: dict[str, Any]) -> str:
    return repr(report.get("collection_problems"))


def _deleting(spec: Any = None, status: Any = None) -> dict[str, Any]:
    request = _delete_request("daily-20261130", None)
    if spec is not None:
        request["spec"] = spec
    if status is not None:
        request["status"] = status
    return request


@pytest.mark.parametrize(
    ("request_", "field"),
    [
        (_deleting(spec={"backupName": ["daily-20261130"]}), "spec.backupName"),
        (_deleting(spec={"backupName": "daily-20261130\u200b"}), "spec.backupName"),
        (_deleting(spec={"backupName": "daily-2026113\u0030\u00a0"}), "spec.backupName"),
        (_deleting(spec=["daily-20261130"]), "spec"),
        (_deleting(status={"phase": ["Processed"]}), "status.phase"),
        (_deleting(status="Processed"), "status"),
    ],
)
def test_a_delete_request_that_cannot_be_read_leaves_no_backup_evidenced(
    tmp_path: Path, request_: dict[str, Any], field: str
) -> None:
    """A DeleteBackupRequest whose backupName or phase cannot be read may be deleting any
    Backup of its namespace (velero pkg/controller/backup_deletion_controller.go): main left
    every Backup counted (READY, nothing named); a readable pending one makes it NOT_READY."""
    docs = _docs(HEALTHY)
    docs.append(request_)
    report = _complete(tmp_path / "dbr", HEALTHY, docs)
    assert _readiness(report) in ("UNKNOWN", "NOT_READY")
    assert "DeleteBackupRequest" in _problems(report) and field in _problems(report)


def test_a_delete_request_without_a_backup_name_changes_nothing(tmp_path: Path) -> None:
    """Velero refuses a request with no backupName ("spec.backupName is required"): guard."""
    docs = _docs(HEALTHY)
    docs.append(_deleting(spec={}))
    assert _readiness(_complete(tmp_path / "none", HEALTHY, docs)) == "READY"


def _broken_repository(**changes: Any) -> dict[str, Any]:
    repo = _repository("NotReady")
    for path, value in changes.items():
        where, key = path.split("__")
        repo[where][key] = value
    return repo


@pytest.mark.parametrize(
    "repo",
    [
        _broken_repository(spec__volumeNamespace=["app"]),
        _broken_repository(spec__volumeNamespace="app\u200b"),
        _broken_repository(spec__backupStorageLocation={"name": "default"}),
        _broken_repository(status__phase="notready"),
        _broken_repository(status__phase=["NotReady"]),
        _broken_repository(status__phase="Ready\u200b"),
    ],
)
def test_a_repository_that_cannot_be_read_is_not_taken_as_ready(
    tmp_path: Path, repo: dict[str, Any]
) -> None:
    """A NotReady BackupRepository whose key fields or phase cannot be read was left out, so
    the file-system copies it alone reads back counted (main: PASS, READY); the well-formed
    NotReady one gives ERROR, UNKNOWN (velero pkg/repository/backup_repo_op.go)."""
    docs = _docs(FS_BACKUP)
    docs.append(repo)
    report = _complete(tmp_path / "repo", FS_BACKUP, docs)
    finding = _finding(report, "RR-BKP-004")
    assert finding["status"] == "ERROR", finding["message"]
    assert "BackupRepository velero/app-default-kopia-x" in finding["message"]
    assert _readiness(report) == "UNKNOWN"


def test_a_new_repository_changes_nothing(tmp_path: Path) -> None:
    """A repository Velero is still preparing (phase New) is no NotReady one: guard."""
    docs = _docs(FS_BACKUP)
    docs.append(_repository("New"))
    assert _finding(_complete(tmp_path / "new", FS_BACKUP, docs), "RR-BKP-004")["status"] == "PASS"


def _named_config(name: Any, gates: Any) -> dict[str, Any]:
    cfg = _cdi_config([])
    cfg["metadata"]["name"] = name
    cfg["spec"]["featureGates"] = gates
    return cfg


def _authority_unreadable() -> dict[str, Any]:
    cdi = _cdi(["HonorWaitForFirstConsumer"])
    cdi["metadata"]["annotations"] = ["cdi.kubevirt.io/configAuthority"]
    return cdi


def _hco_annotations(value: Any) -> dict[str, Any]:
    hco = _hco()
    hco["metadata"]["annotations"] = value
    return hco


@pytest.mark.parametrize(
    ("objects", "status"),
    [
        # two CDIConfigs named config disagreeing: the first read decided (main: PASS); which
        # one the cluster holds cannot be told (the source names it): unknown
        ([_cdi_config([GATE]), _cdi_config(["HonorWaitForFirstConsumer"])], "ERROR"),
        # a gate list of another type beside a HyperConverged (main: PASS by the HCO default)
        ([_named_config("config", GATE), _hco()], "ERROR"),
        # a CDI CR whose annotations cannot be read may be the config authority (main: PASS)
        ([_authority_unreadable(), _hco()], "ERROR"),
        # two HyperConverged, the second patching CDI's config (main: PASS, the first decided)
        (
            [
                _hco(),
                _hco('[{"op": "replace", "path": "/spec/config/featureGates", "value": []}]'),
            ],
            "ERROR",
        ),
        # a HyperConverged whose annotations cannot be read (main: PASS)
        ([_hco_annotations(["containerizeddataimporter.kubevirt.io/jsonpatch"])], "ERROR"),
        # a well-formed CDI authority lacking the gate beside one that cannot be read: the
        # unreadable one does not soften the FAIL
        ([_cdi(None), _authority_unreadable()], "FAIL"),
    ],
)
def test_a_claim_adoption_gate_that_cannot_be_read_is_no_better_than_off(
    tmp_path: Path, objects: list[dict[str, Any]], status: str
) -> None:
    """CDI's DataVolumeClaimAdoption gate (containerized-data-importer pkg/controller/common/
    util.go AllowClaimAdoption) read from objects that disagree or cannot be read is off when
    one says off, else unknown; never on by passing the unreadable one over."""
    docs = _docs(NO_PLUGIN)
    _add_datavolume(docs, "vm1-root")
    docs += copy.deepcopy(objects)
    finding = _finding(_complete(tmp_path, NO_PLUGIN, docs), "RR-BKP-004")
    assert finding["status"] == status, finding["message"]


@pytest.mark.parametrize(
    "state",
    [
        ["2026-11-30T00:30:00Z", "2026-11-30T03:00:00Z"],
        {
            "startTimestamp": "2026-11-30T00:30:00Z",
            "endTimestamp": "2026-11-30T03:00:00Z",
            "completed": "true",
        },
        {"startTimestamp": "last night", "endTimestamp": "2026-11-30T03:00:00Z", "completed": True},
        {
            "startTimestamp": "2026-11-30T03:00:00Z",
            "endTimestamp": "2026-11-30T00:30:00Z",
            "completed": True,
        },
    ],
)
def test_a_migration_window_that_cannot_be_read_is_not_a_finished_copy(
    tmp_path: Path, state: Any
) -> None:
    """Of a finished volume migration, the VMI's last completed migration bounds when the copy
    ran (kubevirt.io/api core/v1 VirtualMachineInstanceMigrationState); written so that it
    cannot be read, it was taken as no window at all and both Backups counted (main: READY;
    the well-formed window around daily-20261130 gives NOT_READY)."""
    docs = _docs(HEALTHY)
    _migrate_root(docs, "done")
    _of(docs, "VirtualMachineInstance")[0]["status"]["migrationState"] = state
    report = _complete(tmp_path / "window", HEALTHY, docs)
    assert _readiness(report) in ("UNKNOWN", "NOT_READY")
    finding = _finding(report, "RR-BKP-004")
    assert finding["status"] in ("ERROR", "FAIL")
    assert "vm1-root-mig" in finding["message"]
    assert any(
        p["kind"] == "VirtualMachineInstance"
        and str(p["field"]).startswith("status.migrationState")
        for p in report["collection_problems"]
    ), report["collection_problems"]


DATA_MOVER = "RR-BKP-004/pass-data-mover.yaml"


@pytest.mark.parametrize(
    "status",
    [
        {"snapshotID": "   "},
        {"snapshotID": "\u200b"},
        {"message": ["volume was empty so no data was upload"]},
    ],
)
def test_an_upload_whose_snapshot_cannot_be_read_is_no_copy(
    tmp_path: Path, status: dict[str, Any]
) -> None:
    """A Completed DataUpload whose ``status.snapshotID`` is blank or invisible, or that has
    none and a message of another type, shows no snapshot a restore can take (velero
    pkg/controller/data_upload_controller.go; rt34 read only ``""`` so): main PASS; the
    empty-ID upload gives ERROR."""
    docs = _docs(DATA_MOVER)
    upload = next(d for d in _of(docs, "DataUpload") if d["metadata"]["name"].endswith("root"))
    if "snapshotID" not in status:
        upload["status"].pop("snapshotID")  # the fixture's ID (round h43a): none, as written
    upload["status"].update(status)
    report = _complete(tmp_path / "upload", DATA_MOVER, docs)
    finding = _finding(report, "RR-BKP-004")
    assert finding["status"] == "ERROR", finding["message"]
    assert "daily-20261130-vm1-root" in repr(finding)


@pytest.mark.parametrize("labels", [["team=db"], "team=db", 7])
def test_a_schedule_template_label_map_of_another_type_is_named(
    tmp_path: Path, labels: Any
) -> None:
    """The next Backup of a Schedule carries its template's labels when the map is set
    (velero pkg/builder/backup_builder.go FromSchedule); a map of another type was read as
    unset (the Schedule's own labels instead), unnamed on main. Now named (file, object,
    field) among the collection problems."""
    fixture = "RR-BKP-001/pass-scoped-filter-leaves-out-pods.yaml"
    docs = _docs(fixture)
    _of(docs, "Schedule")[0]["spec"]["template"].setdefault("metadata", {})["labels"] = labels
    report = _complete(tmp_path / "labels", fixture, docs)
    named = [
        p
        for p in report["collection_problems"]
        if p["kind"] == "Schedule" and p["field"] == "spec.template.metadata.labels"
    ]
    assert named and str(named[0]["file"]).startswith("c.yaml")


@pytest.mark.parametrize(
    ("obj", "field"),
    [
        (_delete_request("daily-20261128", "processed"), "status.phase"),
        (_repository("notready"), "status.phase"),
        (_cdi_config([GATE, 42]), "spec.featureGates[1]"),
    ],
)
def test_a_phase_or_gate_entry_no_release_writes_is_named(
    tmp_path: Path, obj: dict[str, Any], field: str
) -> None:
    """bench.mutations seeds 3003-3004 (``--kind``): a DeleteBackupRequest phase
    ``processed``, a BackupRepository phase ``notready`` and a feature gate ``42`` changed
    verdicts (to the worse side) with nothing named; now each is a collection problem."""
    docs = _docs(HEALTHY)
    docs.append(obj)
    report = _complete(tmp_path / "enum", HEALTHY, docs)
    assert any(
        p["kind"] == obj["kind"] and p["field"] == field for p in report["collection_problems"]
    ), report["collection_problems"]


def test_a_pending_delete_request_without_a_namespace_still_deletes(tmp_path: Path) -> None:
    """A pending DeleteBackupRequest whose ``metadata.namespace`` was not written (an export
    that drops it) is read in namespace default (named) and matched no Backup of velero:
    main READY with both Backups marked for deletion; with the namespace, NOT_READY. Now
    the Backups are possible restore points only (the kind read in part): UNKNOWN."""
    docs = _docs(HEALTHY)
    for backup in ("daily-20261130", "daily-20261128"):
        request = _delete_request(backup, None)
        del request["metadata"]["namespace"]
        docs.append(request)
    report = _complete(tmp_path / "nons", HEALTHY, docs)
    assert _readiness(report) in ("NOT_READY", "UNKNOWN")
    assert "a DeleteBackupRequest could not be read" in repr(report["vms"])


@pytest.mark.parametrize(
    "uid",
    [
        "0d7c9c3e-1111-4a4a-9a9a-aaaaaaaaaaa\u0430",  # a Cyrillic look-alike of the last "a"
        "0D7C9C3E-1111-4A4A-9A9A-AAAAAAAAAAAA",
        "null",
        "0d7c9c3e 1111 4a4a 9a9a aaaaaaaaaaaa",
    ],
)
def test_a_kube_system_uid_the_api_server_never_writes_is_no_identity(uid: str) -> None:
    """The cluster identity (auditor.sources.identity.cluster_uid) is the kube-system
    Namespace's uid, RFC 4122 text the API server writes lower-case; main took any non-blank
    string, so a look-alike kept one cluster's runs apart from its own history (or a shared
    bogus value mixed two). Now unknown (None), as a missing uid is."""
    from types import SimpleNamespace

    from auditor.sources.identity import cluster_uid

    namespace = {"kind": "Namespace", "metadata": {"name": "kube-system", "uid": uid}}
    data = SimpleNamespace(
        conflicts=set(),
        of=lambda kind: [namespace] if kind == "Namespace" else [],
        info=SimpleNamespace(kube_system_uid=None),
    )
    assert cluster_uid(data) is None
    namespace["metadata"]["uid"] = " 0d7c9c3e-1111-4a4a-9a9a-aaaaaaaaaaaa "
    assert cluster_uid(data) == "0d7c9c3e-1111-4a4a-9a9a-aaaaaaaaaaaa"
