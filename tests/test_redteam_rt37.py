"""Red-team round rt37: restores that fail after a green audit.

Velero skips every item whose ``metadata.deletionTimestamp`` is set, even one a plugin adds
as an additional item ("Skipping item because it's being deleted.", velero
pkg/backup/item_backupper.go ``itemInclusionChecks``); a finalizer keeps such an object
readable until it is gone (https://kubernetes.io/docs/concepts/overview/working-with-objects/
finalizers/). A pinned instancetype revision being deleted read as taken (RR-BKP-012 PASS), and
a NAD being deleted as one the VM's next start finds (RR-NET-001 PASS).

Each test changes one project fixture and asserts the verdict beside the healthy shape.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.test_evidence_gaps import _being_deleted, _complete, _docs, _finding, _named, _of

Docs = list[dict[str, Any]]

#: app/vm1 pinned to ControllerRevision vm1-u1.medium-v1beta1-uid-1, Backups daily-20261128
#: and daily-20261130 (began 01:00) with no label selector, audited 2026-11-30T06:00Z
PINNED = "RR-BKP-012/pass-pinned-revision-in-backup.yaml"
#: app/vm1 with a bridge NIC on the Multus network vlan10 (NAD app/vlan10)
NAD_PASS = "RR-NET-001/pass.yaml"


def _readiness(report: dict[str, Any], vm: str = "vm1") -> str:
    return str(next(v for v in report["vms"] if v["name"] == vm)["readiness"])


def _revision_deleting(tmp_path: Path, deleting: str | None) -> dict[str, Any]:
    rev = "vm1-u1.medium-v1beta1-uid-1"
    return _being_deleted(tmp_path, PINNED, "ControllerRevision", rev, deleting, "example.com/keep")


def test_a_pinned_revision_being_deleted_before_the_newest_backup_is_not_in_it(
    tmp_path: Path,
) -> None:
    """Deleted on 2026-11-29, before daily-20261130 began: Velero skipped it, and the
    restored VM cannot find its pinned revision. RR-BKP-012 said PASS."""
    report = _revision_deleting(tmp_path, "2026-11-29T00:00:00Z")
    finding = _finding(report, "RR-BKP-012")
    assert (finding["status"], finding["severity"]) == ("FAIL", "high"), finding["message"]
    assert "daily-20261130" in finding["message"]
    assert "in deletion since 2026-11-29T00:00:00Z" in finding["message"]
    rev = next(r for r in finding["evidence"]["references"] if r["kind"] == "ControllerRevision")
    assert rev["state"] == "dropped"
    # no filter change brings back an object being deleted: the fix says so
    assert "is being deleted and Velero skips it" in finding["remediation"]
    assert "excludedResources" not in finding["remediation"]
    assert _readiness(report) == "NOT_READY"


@pytest.mark.parametrize(
    ("deleting", "status"),
    [
        (None, "PASS"),  # the healthy shape
        ("2026-11-30T03:00:00Z", "PASS"),  # deleted after the newest Backup began: it holds it
        ("30/11/2026", "ERROR"),  # no RFC 3339 time: whether Velero skipped it is unknown
    ],
)
def test_a_pinned_revision_deleted_after_the_backup_or_unreadable(
    tmp_path: Path, deleting: str | None, status: str
) -> None:
    report = _revision_deleting(tmp_path, deleting)
    finding = _finding(report, "RR-BKP-012")
    assert finding["status"] == status, finding["message"]
    if status == "ERROR":
        assert finding["severity"] == "high"
        assert _readiness(report) != "READY"
        assert any(
            p.get("field") == "metadata.deletionTimestamp" for p in report["collection_problems"]
        ), report["collection_problems"]


def _nad_deleting(tmp_path: Path, deleting: str | None) -> dict[str, Any]:
    keep = "k8s.ovn.org/user-defined-network-protection"
    return _being_deleted(
        tmp_path, NAD_PASS, "NetworkAttachmentDefinition", "vlan10", deleting, keep
    )


def test_a_nad_being_deleted_is_no_network_the_next_start_finds(tmp_path: Path) -> None:
    """The NAD exists but is being deleted (a finalizer keeps it): once it is gone the VM's
    next start, migration or restore fails. RR-NET-001 said PASS and the VM READY."""
    report = _nad_deleting(tmp_path, "2026-11-30T05:00:00Z")
    finding = _finding(report, "RR-NET-001")
    assert (finding["status"], finding["severity"]) == ("FAIL", "high"), finding["message"]
    assert "app/vlan10 (being deleted since 2026-11-30T05:00:00Z)" in finding["message"]
    assert finding["evidence"]["deleting_nads"] == {"app/vlan10": "2026-11-30T05:00:00Z"}
    assert finding["remediation"].startswith(
        "NetworkAttachmentDefinition app/vlan10 used by VM app/vm1 is being deleted"
    )
    assert _readiness(report) == "NOT_READY"


@pytest.mark.parametrize(("deleting", "status"), [(None, "PASS"), ("30/11/2026", "ERROR")])
def test_a_nad_not_being_deleted_or_with_an_unreadable_deletion_time(
    tmp_path: Path, deleting: str | None, status: str
) -> None:
    report = _nad_deleting(tmp_path, deleting)
    finding = _finding(report, "RR-NET-001")
    assert finding["status"] == status, finding["message"]
    if status == "ERROR":
        assert _readiness(report) != "READY"
        # named, naming the object and the field: the audit is incomplete
        assert any(
            p.get("field") == "metadata.deletionTimestamp" and p.get("name") == "vlan10"
            for p in report["collection_problems"]
        ), report["collection_problems"]


# -- a file-system backup's claim comes back with its data source ------------------------

#: app/vm1 READY: its three claims (vm1-root, vm1-data on delete-sc, a persistent state
#: claim) copied by PodVolumeBackups of daily-20261130
FS = "RR-BKP-004/pass-fs-backup-podvolumebackups.yaml"

_IMPORT = {
    "apiGroup": "cdi.kubevirt.io",
    "kind": "VolumeImportSource",
    "name": "volume-import-source-0b6c9f1e-7d3e-4a55-9b1e-2f0d5c1a9e11",
}


def _fs_source(
    tmp_path: Path, ref: dict[str, Any] | str | None, *, phase: str = "Bound"
) -> dict[str, Any]:
    docs = _docs(FS)
    pvc = _named(docs, "PersistentVolumeClaim", "vm1-data")
    if ref is not None:
        pvc["spec"]["dataSourceRef"] = dict(ref) if isinstance(ref, dict) else ref
    pvc.setdefault("status", {})["phase"] = phase
    return _complete(tmp_path, FS, docs)


def test_a_populated_claim_restored_from_a_file_system_backup_waits_for_its_gone_source(
    tmp_path: Path,
) -> None:
    """vm1-data was populated by CDI from a VolumeImportSource, which CDI deletes once the
    DataVolume succeeded; Velero recreates the claim from the file-system backup with that
    dataSourceRef, and CDI's populator waits for the source forever: the claim stays Pending
    and the pod volume restore never runs. RR-STG-003 said PASS and the VM READY."""
    report = _fs_source(tmp_path, _IMPORT)
    finding = _finding(report, "RR-STG-003")
    assert (finding["status"], finding["severity"]) == ("FAIL", "high"), finding["message"]
    assert finding["basis"] == "inferred"
    row = next(r for r in finding["evidence"]["pvcs"] if r["pvc"] == "vm1-data")
    assert row["verdict"] == "missing"
    assert "spec.dataSourceRef names VolumeImportSource app/volume-import-source-" in row["reason"]
    assert _readiness(report) == "NOT_READY"


@pytest.mark.parametrize(
    ("ref", "phase", "status"),
    [
        (None, "Bound", "PASS"),  # the healthy shape: no data source
        # a clone source PVC that is gone: the provisioner cannot clone it (observed)
        ({"kind": "PersistentVolumeClaim", "name": "golden-rhel9"}, "Bound", "FAIL"),
        # one that exists (vm1-root): the restore finds it
        ({"kind": "PersistentVolumeClaim", "name": "vm1-root"}, "Bound", "PASS"),
        # a VolumeSnapshot that is gone
        (
            {"apiGroup": "snapshot.storage.k8s.io", "kind": "VolumeSnapshot", "name": "snap-x"},
            "Bound",
            "FAIL",
        ),
        # still populating: whether CDI's source is still there is unknown
        (_IMPORT, "Pending", "ERROR"),
        # a malformed reference proves nothing either way
        ("volume-import-source-x", "Bound", "ERROR"),
        # another populator's source the auditor does not read
        (
            {"apiGroup": "forklift.konveyor.io", "kind": "OvirtVolumePopulator", "name": "p"},
            "Bound",
            "ERROR",
        ),
    ],
)
def test_a_file_system_backup_claims_data_source(
    tmp_path: Path, ref: dict[str, Any] | str | None, phase: str, status: str
) -> None:
    report = _fs_source(tmp_path, ref, phase=phase)
    finding = _finding(report, "RR-STG-003")
    assert finding["status"] == status, finding["message"]
    if status != "PASS":
        assert _readiness(report) != "READY"
    named = [
        p
        for p in report["collection_problems"]
        if p.get("field") == "spec.dataSourceRef" and p.get("name") == "vm1-data"
    ]
    # a malformed reference is named (file, object, field): the audit is incomplete
    assert bool(named) == isinstance(ref, str), named
    if isinstance(ref, str):
        # ... and no other check, which does not read it, is made unknown by it
        assert _finding(report, "RR-BKP-004")["status"] == "PASS"


def test_a_csi_snapshot_claim_with_a_gone_populator_source_is_not_flagged(
    tmp_path: Path,
) -> None:
    """Velero's CSI restore action points the claim at the restored VolumeSnapshot and
    clears its dataSourceRef (pkg/restore/actions/csi/pvc_action.go): the gone source does
    not matter there."""
    fixture = "RR-STG-003/pass.yaml"
    docs = _docs(fixture)
    for pvc in _of(docs, "PersistentVolumeClaim"):
        pvc["spec"]["dataSourceRef"] = dict(_IMPORT)
    report = _complete(tmp_path, fixture, docs)
    finding = _finding(report, "RR-STG-003")
    assert finding["status"] == "PASS", finding["message"]


def test_a_pinned_revision_deleted_after_the_newest_backup_is_missing_from_the_next(
    tmp_path: Path,
) -> None:
    """Deleted at 03:00, after daily-20261130 began (01:00): that Backup holds it (RR-BKP-012
    PASS), but Schedule daily's next Backup skips it (RR-BKP-013 FAIL): never READY."""
    report = _revision_deleting(tmp_path, "2026-11-30T03:00:00Z")
    assert _finding(report, "RR-BKP-012")["status"] == "PASS"
    nxt = _finding(report, "RR-BKP-013")
    assert nxt["status"] == "FAIL", nxt["message"]
    gaps = [g for row in nxt["evidence"]["schedules"] for g in row["gaps"]]
    assert any(
        "ControllerRevision vm1-u1.medium-v1beta1-uid-1" in g
        and "in deletion since 2026-11-30T03:00:00Z" in g
        for g in gaps
    ), gaps
    assert "Keep the Backups taken before its deletion began" in nxt["remediation"]
    assert _readiness(report) != "READY"


def test_a_pinned_revision_not_being_deleted_leaves_the_next_backup_whole(
    tmp_path: Path,
) -> None:
    report = _revision_deleting(tmp_path, None)
    assert _finding(report, "RR-BKP-013")["status"] == "PASS"
    assert _readiness(report) == "READY"
