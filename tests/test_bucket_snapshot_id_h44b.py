"""Round h44b: a Backup's own stored PodVolumeBackup without a snapshot ID (docs/readiness.md).

The bucket reader (``auditor.sources.bucket.decode._from_pvbs``) read a Completed
PodVolumeBackup of the stored ``<backup>-podvolumebackups.json.gz`` without
``status.snapshotID`` as ``failed`` ("nothing to restore"), whatever its message, and one
whose ID is blank (``"  "``) as captured. Round h43a made the same record in the cluster
``unknown``. One rule now (``auditor.sources.snapshotid``): an empty-volume message means an
empty volume (``failed``, as before); no ID and no such message, or an ID that names no
snapshot, means the record was stripped or edited (``unknown``, the reason naming the record
and the field). Velero writes the ID of every Completed upload but an empty volume's
(pod_volume_backup_controller.go ``OnDataPathCompleted``), and a restore reads the cluster's
PodVolumeBackups (restore_controller.go), synced from the stored list only where absent
(backup_sync_controller.go).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from auditor.sources.base import StoredVolume
from auditor.sources.bucket.cache import contents_from_dict, contents_to_dict
from auditor.sources.bucket.decode import VolumeLookup, volumes_from_method_files
from auditor.sources.snapshotid import says_empty
from tests.test_check_fixtures import FIXTURES, audit_fixture
from tests.test_malformed_m42 import _vm

PFX = "# backup-contents: "
#: the file-system fixture (READY on its cluster records) and the stored contents of its
#: newest Backup (resources and VM manifest from RR-BKP-008's, the same VM and PVCs)
FS = (FIXTURES / "RR-BKP-004" / "pass-fs-backup-podvolumebackups.yaml").read_text()
ENTRY = json.loads((FIXTURES / "RR-BKP-008" / "pass.yaml").read_text().split("\n")[1][len(PFX) :])[
    0
]
DOCS = [d for d in yaml.safe_load_all(FS) if d]
PVBS = [d for d in DOCS if d["kind"] == "PodVolumeBackup"]
LOOKUP = VolumeLookup(
    pvc_uids={
        d["metadata"]["uid"]: (d["metadata"]["namespace"], d["metadata"]["name"])
        for d in DOCS
        if d["kind"] == "PersistentVolumeClaim"
    }
)
ROOT = "daily-20261130-vm1-root"
EMPTY = "volume was empty so no snapshot was taken"


def _stored(edit: Callable[[dict[str, Any], list[dict[str, Any]]], None]) -> list[StoredVolume]:
    """The newest Backup's stored PodVolumeBackups, vm1-root's status edited, decoded."""
    stored = json.loads(json.dumps(PVBS))
    edit(next(p for p in stored if p["metadata"]["name"] == ROOT), stored)
    return list(volumes_from_method_files([], stored, [], LOOKUP, []) or ())


def _audit(tmp_path: Path, vols: list[StoredVolume]) -> dict[str, Any]:
    contents = replace(contents_from_dict(ENTRY), volumes=tuple(vols))
    path = tmp_path / "export.yaml"
    path.write_text(PFX + json.dumps([contents_to_dict(contents)]) + "\n" + FS)
    return audit_fixture(path)


def _bkp004(doc: dict[str, Any]) -> dict[str, Any]:
    return next(f for f in _vm(doc)["findings"] if f["check_id"] == "RR-BKP-004")


def _root(vols: list[StoredVolume]) -> list[StoredVolume]:
    return [v for v in vols if v.pvc == "vm1-root"]


def _drop_id(status: dict[str, Any]) -> None:
    del status["snapshotID"]


def test_the_stored_records_with_their_ids_are_ready(tmp_path: Path) -> None:
    """The baseline: each stored PodVolumeBackup holds its ID; read from the bucket, READY."""
    vols = _stored(lambda r, s: None)
    assert {v.outcome for v in vols} == {"captured"} and len(vols) == 3
    doc = _audit(tmp_path, vols)
    f = _bkp004(doc)
    assert (f["status"], f["severity"]) == ("PASS", "high")
    assert "bucket default: backups/daily-20261130 volume records" in f["message"]
    assert _vm(doc)["readiness"] == "READY"


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        (lambda st: _drop_id(st), "its status.message is absent"),
        (
            lambda st: (_drop_id(st), st.update(message="upload done")),
            "its status.message does not say the volume was empty",
        ),
        (
            lambda st: (_drop_id(st), st.update(message=5)),
            "its status.message cannot be read (it may say the volume was empty)",
        ),
    ],
)
def test_a_stored_record_without_an_id_or_empty_message_is_unknown(
    tmp_path: Path, edit: Callable[[dict[str, Any]], Any], says: str
) -> None:
    """Before: ``failed`` "nothing to restore", RR-BKP-004 FAIL high, NOT_READY. Now
    ``unknown`` (as the cluster reads it, h43a): ERROR high, UNKNOWN, naming the record and
    the field."""
    (root,) = _root(_stored(lambda r, s: edit(r["status"])))
    assert root.outcome == "unknown"
    assert f"PodVolumeBackup velero/{ROOT} Completed, but it has no status.snapshotID (absent)" in (
        root.detail
    )
    assert says in root.detail
    doc = _audit(tmp_path, _stored(lambda r, s: edit(r["status"])))
    f = _bkp004(doc)
    assert (f["status"], f["severity"]) == ("ERROR", "high")
    assert f"PodVolumeBackup velero/{ROOT}" in f["message"]
    assert "status.snapshotID (absent)" in f["message"]
    assert {r["pvc"]: r["status"] for r in f["evidence"]["pvcs"]}["vm1-root"] == "unknown"
    assert _vm(doc)["readiness"] == "UNKNOWN"


def test_an_empty_volume_in_the_stored_list_stays_failed(tmp_path: Path) -> None:
    """Velero's upload of an empty volume (no ID, its message): nothing to restore, as before
    (rt34): FAIL high, NOT_READY, now naming the record and the message."""
    edit = lambda r, s: (_drop_id(r["status"]), r["status"].update(message=EMPTY))  # noqa: E731
    (root,) = _root(_stored(edit))
    assert root.outcome == "failed"
    assert f"PodVolumeBackup velero/{ROOT} Completed with no status.snapshotID" in root.detail
    doc = _audit(tmp_path, _stored(edit))
    f = _bkp004(doc)
    assert (f["status"], f["severity"]) == ("FAIL", "high")
    assert "the volume was empty, nothing to restore" in f["message"]
    assert _vm(doc)["readiness"] == "NOT_READY"


@pytest.mark.parametrize("snapshot", ["  ", "", "k1\u200b"])
def test_a_stored_id_that_names_no_snapshot_is_unknown(tmp_path: Path, snapshot: str) -> None:
    """A blank or unprintable ID counted as a copy in the bucket (``"  "``, READY) where the
    cluster reads it as none (fz35); an empty one was ``failed``. Velero omits an empty ID, so
    the stored record was edited: ``unknown``, ERROR high, UNKNOWN."""
    edit = lambda r, s: r["status"].update(snapshotID=snapshot)  # noqa: E731
    (root,) = _root(_stored(edit))
    assert root.outcome == "unknown"
    assert "status.snapshotID" in root.detail and f"PodVolumeBackup velero/{ROOT}" in root.detail
    doc = _audit(tmp_path, _stored(edit))
    assert (_bkp004(doc)["status"], _bkp004(doc)["severity"]) == ("ERROR", "high")
    assert _vm(doc)["readiness"] == "UNKNOWN"


def test_a_stored_record_without_an_id_beside_one_with_an_id_leaves_the_pvc_unknown(
    tmp_path: Path,
) -> None:
    """Two stored PodVolumeBackups of one claim (two launcher pods, r41a): one shows a copy,
    the other proves none. The captured one was read first (READY); the pair disagrees, as in
    the cluster reading: UNKNOWN."""

    def edit(root: dict[str, Any], stored: list[dict[str, Any]]) -> None:
        twin = json.loads(json.dumps(root))
        twin["metadata"]["name"] = ROOT + "-2"
        _drop_id(twin["status"])
        stored.append(twin)

    assert sorted(v.outcome for v in _root(_stored(edit))) == ["captured", "unknown"]
    doc = _audit(tmp_path, _stored(edit))
    f = _bkp004(doc)
    assert (f["status"], f["severity"]) == ("ERROR", "high")
    assert f"PodVolumeBackup velero/{ROOT}-2" in f["message"]
    assert _vm(doc)["readiness"] == "UNKNOWN"


def test_a_failed_record_beside_one_without_an_id_keeps_its_fail(tmp_path: Path) -> None:
    def edit(root: dict[str, Any], stored: list[dict[str, Any]]) -> None:
        twin = json.loads(json.dumps(root))
        twin["metadata"]["name"] = ROOT + "-2"
        _drop_id(twin["status"])
        stored.append(twin)
        root["status"]["phase"] = "Failed"

    doc = _audit(tmp_path, _stored(edit))
    assert (_bkp004(doc)["status"], _bkp004(doc)["severity"]) == ("FAIL", "high")
    assert _vm(doc)["readiness"] == "NOT_READY"


@pytest.mark.parametrize(
    ("message", "said"),
    [(EMPTY, True), ("Volume Was Empty so no data was upload", True), ("done", False),
     (None, False), (5, None), (["volume was empty"], None)],
)  # fmt: skip
def test_one_rule_reads_the_message(message: Any, said: bool | None) -> None:
    assert says_empty(message) is said
