"""Pair a VM with the Velero Backups, Restores, Schedules and snapshots that protect it.

Rules (see ``../shared/corpus/cluster-export/README.md`` for the traps they handle):

- A Backup can only hold a VM or PVC that existed when the Backup began.
- Only ``Completed`` and ``PartiallyFailed`` Backups hold anything; an expired
  Backup (``status.expiration`` before the audit time) has been garbage
  collected by Velero and holds nothing.
- A PVC's *data* is captured when the PVC is in scope (namespace, resource and
  label filters applied to the PVC itself: a label selector silently skips an
  unlabelled PVC unless the kubevirt Velero plugin pulls the VM's volumes in)
  and a capture method exists: a DataUpload or PodVolumeBackup naming it,
  file-system backup by default, or a CSI snapshot, which needs a
  VolumeSnapshotClass for the PVC's CSI driver (``snapshotVolumes`` not false).
- In a ``PartiallyFailed`` Backup, a PVC without a working capture method is
  taken to be among the errors; the others count as captured.

Velero 1.14 deletes the VolumeSnapshots after a CSI backup and leaves static
VolumeSnapshotContents labelled ``velero.io/backup-name`` that do not name the
PVC, so per-PVC evidence comes from scope + method + the Backup's counters.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from auditor.inventory.index import BackupView, ClusterIndex, RestoreView, ScheduleView, meta_labels
from auditor.kubevalues import dig, parse_time
from auditor.scope import SelectorError

__all__ = [
    "PvcRef",
    "PvcCapture",
    "BackupEval",
    "evaluate_backups",
    "USABLE_PHASES",
    "covering_restores",
    "covering_schedules",
]

USABLE_PHASES = frozenset({"Completed", "PartiallyFailed"})
IN_FLIGHT_PHASES = frozenset(
    {
        "New",
        "InProgress",
        "WaitingForPluginOperations",
        "WaitingForPluginOperationsPartiallyFailed",
        "Finalizing",
        "FinalizingPartiallyFailed",
        "Deleting",
        "Queued",
        "ReadyToStart",
    }
)


@dataclass(frozen=True)
class PvcRef:
    """A PVC the VM needs: ``role`` is ``disk`` or ``state`` (persistent EFI/TPM state)."""

    name: str
    role: str
    disk: str | None
    obj: dict[str, Any] | None

    @property
    def labels(self) -> dict[str, str]:
        """The PVC's labels ({} when the PVC object is missing)."""
        return meta_labels(self.obj) if self.obj else {}


@dataclass(frozen=True)
class PvcCapture:
    """Whether one Backup holds one PVC's data, and why (a factual reason)."""

    pvc: str
    role: str
    in_scope: bool
    captured: bool
    method: str | None
    reason: str


@dataclass
class BackupEval:
    """One Backup judged against one VM."""

    backup: BackupView
    holds_object: bool
    pvcs: list[PvcCapture] = field(default_factory=list)
    snapshot_contents: int = 0

    @property
    def usable(self) -> bool:
        """The Backup holds the VM object and is in a phase that restores."""
        return self.holds_object and self.backup.phase in USABLE_PHASES

    @property
    def disks_captured(self) -> bool:
        """Every disk PVC's data is in this Backup (True for a VM without PVC disks)."""
        return all(p.captured for p in self.pvcs if p.role == "disk")

    @property
    def all_captured(self) -> bool:
        """Every needed PVC (disks and persistent state) is in this Backup."""
        return all(p.captured for p in self.pvcs)


def _existed(created: datetime | None, began: datetime | None) -> bool:
    return created is None or began is None or created <= began


def evaluate_backups(
    ix: ClusterIndex,
    *,
    namespace: str,
    vm_labels: dict[str, str],
    vm_created: datetime | None,
    pvcs: list[PvcRef],
    at: datetime,
    problems: list[str],
) -> list[BackupEval]:
    """Judge every Backup that could include the VM, newest first.

    Backups that began before the VM existed or have expired are left out.
    Malformed selectors are appended to ``problems`` and that Backup is
    treated as holding nothing.
    """
    evals: list[BackupEval] = []
    for b in ix.backups_for_namespace(namespace):
        if not b.scope.namespace_included(namespace):
            continue
        if b.expiration is not None and b.expiration <= at:
            continue
        if b.began is not None and b.began > at:
            continue
        try:
            holds = _existed(vm_created, b.began) and b.scope.includes(
                namespace=namespace,
                labels=vm_labels,
                plural="virtualmachines",
                kind="VirtualMachine",
                group="kubevirt.io",
            )
            captures = [_capture(ix, b, namespace, p, holds) for p in pvcs]
        except SelectorError as exc:
            problems.append(f"Backup {b.namespace}/{b.name} has a malformed label selector: {exc}")
            continue
        if not holds and not any(c.in_scope for c in captures):
            continue
        evals.append(
            BackupEval(b, holds, captures, len(ix.backup_snapshot_contents.get(b.name, [])))
        )
    evals.sort(key=lambda e: (_stamp(e.backup.when), e.backup.name), reverse=True)
    return evals


def _capture(
    ix: ClusterIndex, b: BackupView, namespace: str, p: PvcRef, vm_held: bool
) -> PvcCapture:
    def result(in_scope: bool, captured: bool, method: str | None, reason: str) -> PvcCapture:
        return PvcCapture(p.name, p.role, in_scope, captured, method, reason)

    if p.obj is None:
        return result(False, False, None, f"PVC {p.name} does not exist")
    created = parse_time(dig(p.obj, "metadata", "creationTimestamp"))
    if not _existed(created, b.began):
        return result(False, False, None, f"PVC {p.name} was created after Backup {b.name} began")
    selected = b.scope.includes(
        namespace=namespace,
        labels=p.labels,
        plural="persistentvolumeclaims",
        kind="PersistentVolumeClaim",
        group="",
    )
    pulled = (
        vm_held
        and bool(ix.kubevirt_plugin)
        and b.scope.resource_included("persistentvolumeclaims", "PersistentVolumeClaim", "")
    )
    if not selected and not pulled:
        return result(
            False,
            False,
            None,
            f"PVC {p.name} is outside Backup {b.name}'s scope (labels or resource filters)",
        )
    if b.phase not in USABLE_PHASES:
        return result(True, False, None, f"Backup {b.name} is {b.phase or 'without a phase'}")
    method, why_not = _method(ix, b, namespace, p)
    if method is None:
        return result(True, False, None, why_not)
    return result(True, True, method, f"PVC {p.name} captured by {method}")


def _method(ix: ClusterIndex, b: BackupView, namespace: str, p: PvcRef) -> tuple[str | None, str]:
    uid = dig(p.obj, "metadata", "uid")
    for du in ix.data_uploads.get(b.name, []):
        if (
            dig(du, "spec", "sourcePVC") == p.name
            and dig(du, "spec", "sourceNamespace") == namespace
        ):
            if dig(du, "status", "phase") == "Completed":
                return "data mover (DataUpload)", ""
            return (
                None,
                f"DataUpload for PVC {p.name} is {dig(du, 'status', 'phase') or 'unfinished'}",
            )
    for pvb in ix.pod_volume_backups.get(b.name, []):
        tags = dig(pvb, "spec", "tags") or {}
        if isinstance(tags, dict) and (tags.get("pvc-uid") == uid or tags.get("pvc") == p.name):
            if dig(pvb, "status", "phase") == "Completed":
                return "file-system backup (PodVolumeBackup)", ""
            return (
                None,
                f"PodVolumeBackup for PVC {p.name} is {dig(pvb, 'status', 'phase') or 'unfinished'}",
            )
    if b.fs_backup_default:
        return "file-system backup (defaultVolumesToFsBackup)", ""
    if b.snapshot_volumes is False:
        return None, f"Backup {b.name} has snapshotVolumes: false and no file-system backup"
    driver = pvc_driver(ix, p)
    if driver is None:
        return None, f"CSI driver of PVC {p.name} is unknown (no StorageClass/PV found)"
    if driver not in ix.snapshot_class_drivers:
        return (
            None,
            f"no VolumeSnapshotClass exists for driver {driver}, so PVC {p.name} cannot be snapshotted",
        )
    return "CSI snapshot", ""


def pvc_driver(ix: ClusterIndex, p: PvcRef) -> str | None:
    """The CSI driver of a PVC: its PV's csi.driver, else its StorageClass's provisioner."""
    pv = ix.pvs.get(str(dig(p.obj, "spec", "volumeName") or ""))
    driver = dig(pv, "spec", "csi", "driver") if pv else None
    if isinstance(driver, str):
        return driver
    sc = ix.storage_classes.get(str(dig(p.obj, "spec", "storageClassName") or ""))
    prov = sc.get("provisioner") if sc else None
    return prov if isinstance(prov, str) else None


def covering_restores(
    ix: ClusterIndex, *, namespace: str, vm_labels: dict[str, str], held_by: set[str]
) -> list[RestoreView]:
    """Restores whose Backup held this VM and whose own filters include it, newest first.

    ``held_by`` is the set of Backup names known to hold the VM object. A
    Restore of a Backup that no longer exists is matched on its own filters only.
    """
    out = []
    for r in ix.restores:
        if r.backup_name in ix.backups and r.backup_name not in held_by:
            continue
        try:
            if not r.scope.includes(
                namespace=namespace,
                labels=vm_labels,
                plural="virtualmachines",
                kind="VirtualMachine",
                group="kubevirt.io",
            ):
                continue
        except SelectorError:
            continue
        if r.backup_name not in ix.backups:
            continue  # nothing tells us the Backup held this VM
        out.append(r)
    out.sort(key=lambda r: (_stamp(r.completed or r.created), r.name), reverse=True)
    return out


def _stamp(value: datetime | None) -> float:
    return value.timestamp() if value is not None else float("-inf")


def covering_schedules(
    ix: ClusterIndex, *, namespace: str, vm_labels: dict[str, str]
) -> list[ScheduleView]:
    """Schedules whose Backup template includes the VM object."""
    out = []
    for s in ix.schedules:
        try:
            if s.scope.includes(
                namespace=namespace,
                labels=vm_labels,
                plural="virtualmachines",
                kind="VirtualMachine",
                group="kubevirt.io",
            ):
                out.append(s)
        except SelectorError:
            continue
    return out
