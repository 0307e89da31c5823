"""Red-team round rt36: objects a VM's restore needs that Velero skipped because they were
being deleted when a Backup reached them.

Velero skips every item whose ``metadata.deletionTimestamp`` is set, whatever the Backup's
filters say ("Skipping item because it's being deleted.", velero pkg/backup/item_backupper.go
``itemInclusionChecks``), and a finalizer keeps such an object readable meanwhile: a bound
PersistentVolume (``kubernetes.io/pv-protection``), a NAD OVN-Kubernetes manages. The VM and
its PVCs already had the rule; the PV a native snapshot is taken with and the NAD a Multus NIC
attaches to did not, and the VM read READY.

Each test changes one project fixture and asserts the verdict beside the healthy shape.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.test_evidence_gaps import _complete, _finding, _of

Docs = list[dict[str, Any]]

#: app/vm1 with Backups daily-20261128 and daily-20261130 (began 01:00), audited
#: 2026-11-30T06:00Z; vm1-data on an in-tree NFS PV copied by the Backup's one native snapshot
NATIVE = "RR-BKP-004/pass.yaml"
#: the same VM with a bridge NIC on the Multus network vlan10 (NAD app/vlan10)
NAD_PASS = "RR-NET-002/pass.yaml"


def _readiness(report: dict[str, Any], vm: str = "vm1") -> str:
    return str(next(v for v in report["vms"] if v["name"] == vm)["readiness"])


def _named(docs: Docs, kind: str, name: str) -> dict[str, Any]:
    return next(d for d in _of(docs, kind) if d["metadata"]["name"] == name)


def _native_disk(deleting: str | None, *, scratch: bool = False) -> Docs:
    """vm1-data natively snapshotted (counters 1/1), its PV deleted at ``deleting`` while
    still bound; ``scratch``: beside another PV of no VM whose native snapshot the one counted
    may be."""
    from tests.test_red_team_rt22 import _data_disk_on_nfs
    from tests.test_red_team_rt27 import _with_scratch_on_nfs

    docs = _data_disk_on_nfs((1, 1))
    if scratch:
        docs = _with_scratch_on_nfs(docs)
    if deleting is not None:
        pv = _named(docs, "PersistentVolume", "pv-app-vm1-data")
        pv["metadata"]["deletionTimestamp"] = deleting
        pv["metadata"]["finalizers"] = ["kubernetes.io/pv-protection"]
    return docs


@pytest.mark.parametrize("scratch", [False, True])
def test_a_native_snapshot_disk_whose_pv_was_being_deleted_is_not_captured(
    tmp_path: Path, scratch: bool
) -> None:
    """A PV deleted while its claim is bound stays Terminating (pv-protection); Velero skips
    the PV item and takes its volume snapshotter's snapshot only while backing that item up
    (takePVSnapshot), so no Backup since holds vm1-data. The one native snapshot counted is
    another PV's: one gone since (a scratch claim deleted after the Backup), read as
    vm1-data's, made the VM READY; the scratch PV still there left it UNKNOWN."""
    report = _complete(tmp_path, NATIVE, _native_disk("2026-11-20T00:00:00Z", scratch=scratch))
    finding = _finding(report, "RR-BKP-004")
    assert (finding["status"], finding["severity"]) == ("FAIL", "high"), finding["message"]
    pvcs = {p["pvc"]: p for p in finding["evidence"]["pvcs"]}
    assert pvcs["vm1-data"]["status"] == "not_attempted"
    assert (
        "pv-app-vm1-data has been in deletion since 2026-11-20T00:00:00Z"
        in (pvcs["vm1-data"]["reason"])
    )
    assert pvcs["vm1-root"]["status"] == "captured"
    assert _readiness(report) == "NOT_READY"


def test_a_pv_deleted_after_the_newest_backup_began_is_in_it_but_not_in_the_next(
    tmp_path: Path,
) -> None:
    """Deleted at 03:00, after daily-20261130 began (01:00): that Backup took the PV and its
    snapshot (RR-BKP-004 PASS), but the next one will skip it (RR-BKP-013 FAIL): AT_RISK,
    never READY."""
    report = _complete(tmp_path, NATIVE, _native_disk("2026-11-30T03:00:00Z"))
    assert _finding(report, "RR-BKP-004")["status"] == "PASS"
    nxt = _finding(report, "RR-BKP-013")
    assert nxt["status"] == "FAIL", nxt["message"]
    assert "pv-app-vm1-data has been in deletion since" in nxt["message"]
    assert _readiness(report) == "AT_RISK"


def test_a_pv_deletion_time_that_is_no_time_leaves_the_disk_unknown(tmp_path: Path) -> None:
    """A deletionTimestamp the API server could not have written neither proves the PV taken
    nor skipped: RR-BKP-004 is no PASS and the VM is not READY."""
    report = _complete(tmp_path, NATIVE, _native_disk("yesterday"))
    finding = _finding(report, "RR-BKP-004")
    assert finding["status"] in ("ERROR", "FAIL"), finding["message"]
    assert _readiness(report) in ("UNKNOWN", "NOT_READY")


def test_a_native_snapshot_disk_whose_pv_is_not_being_deleted_stays_captured(
    tmp_path: Path,
) -> None:
    """The healthy shape of the same export."""
    report = _complete(tmp_path, NATIVE, _native_disk(None))
    assert _finding(report, "RR-BKP-004")["status"] == "PASS"


# -- the NAD a Multus NIC attaches to ------------------------------------------------------


def _nad_deleting(tmp_path: Path, deleting: str | None) -> dict[str, Any]:
    from tests.test_evidence_gaps import _docs

    docs = _docs(NAD_PASS)
    if deleting is not None:
        nad = _named(docs, "NetworkAttachmentDefinition", "vlan10")
        nad["metadata"]["deletionTimestamp"] = deleting
        nad["metadata"]["finalizers"] = ["k8s.ovn.org/user-defined-network-protection"]
    return _complete(tmp_path, NAD_PASS, docs)


def test_a_nad_being_deleted_before_the_backups_began_is_in_none_of_them(
    tmp_path: Path,
) -> None:
    """The NAD was deleted on 2026-11-27, before both Backups began, and a finalizer keeps
    it: Velero skipped it, so a restore on a new cluster brings back a VM whose NIC has no
    NAD. RR-NET-002 said PASS and the VM READY."""
    report = _nad_deleting(tmp_path, "2026-11-27T00:00:00Z")
    finding = _finding(report, "RR-NET-002")
    assert (finding["status"], finding["severity"]) == ("FAIL", "medium"), finding["message"]
    assert "app/vlan10 being deleted since 2026-11-27T00:00:00Z" in finding["message"]
    assert {g["backup"] for g in finding["evidence"]["gaps"]} == {
        "daily-20261128",
        "daily-20261130",
    }
    assert _readiness(report) != "READY"


def test_a_nad_deleted_between_the_backups_is_missing_from_the_newer_one(
    tmp_path: Path,
) -> None:
    """Deleted on 2026-11-29: daily-20261128 holds it, daily-20261130 does not."""
    report = _nad_deleting(tmp_path, "2026-11-29T00:00:00Z")
    finding = _finding(report, "RR-NET-002")
    assert finding["status"] == "FAIL", finding["message"]
    assert {g["backup"] for g in finding["evidence"]["gaps"]} == {"daily-20261130"}


@pytest.mark.parametrize(
    ("deleting", "status"),
    [
        (None, "PASS"),  # the healthy shape
        ("2026-11-30T05:00:00Z", "PASS"),  # deleted after both Backups began: both hold it
        ("30/11/2026", "ERROR"),  # no RFC 3339 time: whether Velero skipped it is unknown
    ],
)
def test_a_nad_deletion_after_the_backups_or_unreadable(
    tmp_path: Path, deleting: str | None, status: str
) -> None:
    report = _nad_deleting(tmp_path, deleting)
    finding = _finding(report, "RR-NET-002")
    assert finding["status"] == status, finding["message"]
