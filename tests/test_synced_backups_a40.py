"""Backups synced from a BackupStorageLocation that other clusters share (round a40).

Velero's backup sync controller creates a Backup object for every backup in the bucket the
cluster lacks, with the spec, status and labels the cluster that took it wrote (only the
location and its ``velero.io/storage-location`` label rewritten):
https://github.com/vmware-tanzu/velero/blob/main/pkg/controller/backup_sync_controller.go.
Such a Backup was created after it ran (``metadata.creationTimestamp`` later than
``status.completionTimestamp``), and nothing in it names the cluster it was taken of. It was
paired with this cluster's VM by namespace and name, and its counters proved the disks:
READY on another cluster's backup. Now only a record tied to this cluster's PVC by UID or
storage volume (a PodVolumeBackup's ``velero.io/pvc-uid``, a bucket record's PV name or volume
handle) or a stored VM manifest carrying the live VM's UID makes it this VM's restore point.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from auditor.sources.base import BackupContents, StoredVolume
from auditor.sources.bucket.cache import contents_to_dict
from tests.test_check_fixtures import audit_fixture
from tests.test_evidence_gaps import FIXTURES, Docs, _complete, _docs, _finding, _of

CSI = "RR-BKP-004/pass.yaml"
FS = "RR-BKP-004/pass-fs-backup-podvolumebackups.yaml"
EPHEMERAL = "RR-BKP-004/na-ephemeral.yaml"
SYNCED_AT = "2026-11-30T03:00:00Z"
#: the clause every finding of a synced Backup carries, naming both fields
SAYS = (
    "backup daily-20261130 was created in this cluster (metadata.creationTimestamp "
    "2026-11-30T03:00:00Z) after it ran (status.completionTimestamp 2026-11-30T01:15:00Z): "
    "Velero's backup sync made it from BackupStorageLocation default"
)


def _synced(docs: Docs) -> Docs:
    """Every Backup as the sync controller creates it: created now, after it completed, with
    the ``velero.io/storage-location`` label of this cluster's location."""
    for b in _of(docs, "Backup"):
        b["metadata"]["creationTimestamp"] = SYNCED_AT
        b["metadata"].setdefault("labels", {})["velero.io/storage-location"] = "default"
    return docs


def _verdict(report: dict[str, Any]) -> str:
    return str(next(v for v in report["vms"] if v["name"] == "vm1")["readiness"])


def test_a_synced_backup_s_counters_prove_no_disk_of_this_cluster(tmp_path: Path) -> None:
    """A synced Backup whose CSI counters cover every disk is not this VM's restore point:
    RR-BKP-004 ERROR naming the Backup and both timestamps, the VM UNKNOWN (was READY)."""
    base = _complete(tmp_path / "base", CSI, _docs(CSI))
    assert _verdict(base) == "READY"
    report = _complete(tmp_path / "synced", CSI, _synced(_docs(CSI)))
    assert _verdict(report) == "UNKNOWN"
    finding = _finding(report, "RR-BKP-004")
    assert finding["status"] == "ERROR"
    assert SAYS in finding["message"]
    root = next(r for r in finding["evidence"]["pvcs"] if r["pvc"] == "vm1-root")
    assert (root["status"], root["basis"]) == ("unknown", "counters")
    assert "no record ties PVC app/vm1-root to it by its UID or volume" in root["reason"]
    assert (
        "Backup velero/daily-20261130 metadata.creationTimestamp=2026-11-30T03:00:00Z after "
        "status.completionTimestamp=2026-11-30T01:15:00Z" in root["proof"]
    )
    assert _finding(report, "RR-BKP-001")["status"] == "ERROR"


def test_a_backup_created_before_it_ran_is_taken_here(tmp_path: Path) -> None:
    """The rule reads only the order of the times: a Backup created as it starts (Velero's
    own) keeps its PASS on the same counters."""
    docs = _docs(CSI)
    for b in _of(docs, "Backup"):
        b["metadata"]["creationTimestamp"] = b["status"]["startTimestamp"]
    report = _complete(tmp_path, CSI, docs)
    assert _finding(report, "RR-BKP-004")["status"] == "PASS"
    assert _verdict(report) == "READY"


def test_a_synced_backup_whose_pod_volume_backups_carry_this_pvcs_uids_is_this_vm_s(
    tmp_path: Path,
) -> None:
    """Velero labels each PodVolumeBackup with the uid of the PVC it copied
    (``velero.io/pvc-uid``): the auditor already pairs on it, so a synced Backup whose
    PodVolumeBackups carry this cluster's PVC uids stays a restore point."""
    report = _complete(tmp_path, FS, _synced(_docs(FS)))
    finding = _finding(report, "RR-BKP-004")
    assert finding["status"] == "PASS", finding["message"]
    assert _verdict(report) == "READY"
    root = next(r for r in finding["evidence"]["pvcs"] if r["pvc"] == "vm1-root")
    assert (root["status"], root["basis"], root["method"]) == ("captured", "item", "fs-backup")


def test_a_synced_backup_whose_pod_volume_backups_are_of_other_pvcs_is_not(
    tmp_path: Path,
) -> None:
    """The same PodVolumeBackups with another cluster's PVC uids copied other PVCs of the same
    names: no disk of this VM is shown in the Backup."""
    docs = _synced(_docs(FS))
    for pvb in _of(docs, "PodVolumeBackup"):
        pvb["metadata"]["labels"]["velero.io/pvc-uid"] = "uid-of-another-cluster"
    report = _complete(tmp_path, FS, docs)
    assert _finding(report, "RR-BKP-004")["status"] != "PASS"
    assert _verdict(report) != "READY"


def test_a_vm_without_disks_in_a_synced_backup_is_unknown(tmp_path: Path) -> None:
    """A VM with only container disks has nothing to tie by UID: its definition in a synced
    Backup may be another cluster's VM of this name. RR-BKP-001 was PASS; it is ERROR naming
    the Backup and both times."""
    assert _finding(_complete(tmp_path / "base", EPHEMERAL, _docs(EPHEMERAL)), "RR-BKP-001")[
        "status"
    ] == ("PASS")
    report = _complete(tmp_path / "synced", EPHEMERAL, _synced(_docs(EPHEMERAL)))
    finding = _finding(report, "RR-BKP-001")
    assert finding["status"] == "ERROR"
    assert finding["message"].startswith(
        "VM app/vm1 has no persistent disks; backup daily-20261130 may hold its definition, but "
        + SAYS
    )
    assert _verdict(report) == "UNKNOWN"


def _with_bucket(
    tmp_path: Path, fixture: str, docs: Docs, pv: str, manifest_uid: str | None = None
) -> Path:
    """``docs`` as a fixture file whose Backup daily-20261130 has bucket records (volume info
    naming each PVC with PV ``pv`` + its name, and optionally the VM's manifest)."""
    claims = {
        str(c["metadata"]["name"]): str(c["spec"]["volumeName"])
        for c in docs
        if c["kind"] == "PersistentVolumeClaim"
    }
    manifests = (
        {("app", "vm1"): {"metadata": {"name": "vm1", "namespace": "app", "uid": manifest_uid}}}
        if manifest_uid
        else {}
    )
    contents = BackupContents(
        backup="daily-20261130",
        location="default",
        state="read",
        volumes=tuple(
            StoredVolume("app", name, "csi-snapshot", "captured", "result succeeded", pv=pv + vol)
            for name, vol in sorted(claims.items())
        ),
        vm_manifests=manifests,
    )
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "c.yaml"
    header = [
        line
        for line in (FIXTURES / fixture).read_text().splitlines()
        if line.startswith(("# unavailable", "# expect"))
    ]
    header.append("# backup-contents: " + json.dumps([contents_to_dict(contents)]))
    path.write_text("\n".join(header) + "\n" + yaml.safe_dump_all(docs))
    return path


def test_bucket_records_of_this_cluster_s_volumes_tie_a_synced_backup(tmp_path: Path) -> None:
    """Velero's volume info names each PVC's PersistentVolume (``pvName``): the PV the live
    PVC is bound to ties the synced Backup to this cluster's disks (PASS); a PV of another
    name is another cluster's volume (``unknown``, not PASS)."""
    docs = _synced(_docs(CSI))
    here = audit_fixture(_with_bucket(tmp_path / "here", CSI, docs, pv=""))
    assert _finding(here, "RR-BKP-004")["status"] == "PASS"
    elsewhere = audit_fixture(_with_bucket(tmp_path / "elsewhere", CSI, docs, pv="other-"))
    finding = _finding(elsewhere, "RR-BKP-004")
    assert finding["status"] == "ERROR"
    root = next(r for r in finding["evidence"]["pvcs"] if r["pvc"] == "vm1-root")
    assert (root["status"], root["basis"]) == ("unknown", "bucket")
    assert SAYS in root["reason"]


def test_a_stored_vm_manifest_with_the_live_uid_ties_a_vm_without_disks(tmp_path: Path) -> None:
    """The VM manifest stored with a synced Backup carrying the live VM's ``metadata.uid``
    shows it was taken of this VM: RR-BKP-001 PASS for a VM without disks; another uid
    leaves it ERROR."""
    docs = _synced(_docs(EPHEMERAL))
    uid = str(_of(docs, "VirtualMachine")[0]["metadata"]["uid"])
    mine = audit_fixture(_with_bucket(tmp_path / "mine", EPHEMERAL, docs, pv="", manifest_uid=uid))
    assert _finding(mine, "RR-BKP-001")["status"] == "PASS"
    other = audit_fixture(
        _with_bucket(tmp_path / "other", EPHEMERAL, docs, pv="", manifest_uid="uid-x")
    )
    assert _finding(other, "RR-BKP-001")["status"] == "ERROR"
