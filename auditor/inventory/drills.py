"""Pair a VM with its Velero Restores and judge what each one proves.

A Restore is a drill of a VM when its own filters include the VM and its Backup held the VM.
It *proves* the VM can come back only when it also brought back every disk's data:

- the Restore includes the disk's PVC (its namespace, resource and label filters applied to the
  PVC; or the kubevirt Velero plugin, which returns the VM's volumes as additional items);
- ``restorePVs`` is not false, or a PodVolumeRestore / DataDownload restored the volume;
- the Backup captured the PVC (when the Backup still exists to say so);
- a Restore into the VM's own namespace replaced the PVC: one that existed before the Restore
  was skipped, and its data is not the backup's;
- every PodVolumeRestore / DataDownload of the Restore for this VM's volumes completed.

Velero keeps Restore objects after their Backup expires, and ``spec.backupName`` still names
it. Velero refuses (``FailedValidation``) a Restore whose Backup does not exist, so a finished
Restore proves the Backup existed then; what it held can no longer be read, so such a drill is
judged on the Restore's own filters and counts with an *inferred* basis.
Sources: https://velero.io/docs/main/api-types/restore/,
https://velero.io/docs/main/restore-reference/,
https://github.com/kubevirt/kubevirt-velero-plugin/blob/main/pkg/plugin/vm_restore_item_action.go
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from auditor.inventory.capture import Method
from auditor.inventory.index import (
    DATA_MOVER_PHASES,
    VELERO_RESTORE_LABEL,
    ClusterIndex,
    RestoreView,
    meta_label,
    velero_label,
)
from auditor.inventory.protection import (
    BackupEval,
    PvcRef,
    VMFacts,
    restored_stopped_strategy,
)
from auditor.kubevalues import dig, format_time, parse_time
from auditor.scope import SelectorError
from auditor.sources.base import KindState

__all__ = [
    "DiskRestore",
    "DrillEval",
    "evaluate_drills",
    "deleted_drill_failures",
    "CLEAR_MAC_LABEL",
    "NEW_UUID_LABEL",
    "RUN_STRATEGY_LABEL",
    "STARTING_RUN_STRATEGIES",
]

#: kubevirt-velero-plugin Restore labels (pkg/util/util.go); presence, any value, turns them on
CLEAR_MAC_LABEL = "velero.kubevirt.io/clear-mac-address"
NEW_UUID_LABEL = "velero.kubevirt.io/generate-new-firmware-uuid"
#: kubevirt-velero-plugin Restore label: when present, the plugin sets each restored VM's
#: ``spec.runStrategy`` to its value and drops ``spec.running`` (pkg/util/util.go
#: ``GetRestoreRunStrategy``, pkg/plugin/vm_restore_item_action.go ``Execute``)
RUN_STRATEGY_LABEL = "velero.kubevirt.io/restore-run-strategy"
#: run strategies under which KubeVirt starts a VM once it exists (kubevirt
#: staging/src/kubevirt.io/api/core/v1/types.go ``VirtualMachineRunStrategy``); Halted,
#: Manual and WaitAsReceiver start none, and an unknown value is refused
STARTING_RUN_STRATEGIES = frozenset({"Always", "RerunOnFailure", "Once"})
_DATA_KINDS = ("PodVolumeRestore", "DataDownload")


@dataclass(frozen=True)
class DiskRestore:
    """Whether one disk PVC's data came back in one Restore (``restored`` None = unknown)."""

    pvc: str
    restored: bool | None
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """Evidence form."""
        return {"pvc": self.pvc, "restored": self.restored, "reason": self.reason}


@dataclass(frozen=True)
class DrillEval:
    """One Restore judged against one VM.

    ``backup_present``: the named Backup is still there to read (else its contents are
    inferred from the Restore's filters); ``source_namespace`` is the VM's, ``target_namespace``
    where the Restore put it (namespace mapping applied); ``failed_data_ops``: PodVolumeRestores/DataDownloads for this VM
    that did not complete, as ``Kind name (phase)``. ``run_strategy``: the value of the
    Restore's :data:`RUN_STRATEGY_LABEL` when the kubevirt plugin may act on it (enabled, or
    not known to be off), else None (the VM keeps the runStrategy its Backup holds);
    ``running_now``: a VirtualMachineInstance of the VM is Running in the target namespace.
    """

    restore: RestoreView
    backup_present: bool
    disks: tuple[DiskRestore, ...]
    failed_data_ops: tuple[str, ...]
    source_namespace: str
    target_namespace: str
    run_strategy: str | None = None
    running_now: bool = False
    #: the runStrategy the Backup holds the VM with when that starts no VM (the Restore sets
    #: none): it did not run when the Backup began and its spec is stopped (inferred from the
    #: VM now, :func:`~auditor.inventory.protection.restored_stopped_strategy`), else None
    held_stopped: str | None = None

    @property
    def restored_stopped(self) -> bool:
        """The Restore set a runStrategy that starts no VM, and no VMI of it runs now: the
        drill proves its data came back, not that it boots."""
        if self.running_now:
            return False
        if self.run_strategy is not None:
            return self.run_strategy not in STARTING_RUN_STRATEGIES
        return self.held_stopped is not None

    @property
    def stopped_by(self) -> str:
        """What restored the VM stopped, in words ("" when nothing did)."""
        if not self.restored_stopped:
            return ""
        if self.run_strategy is not None:
            return f"its label {RUN_STRATEGY_LABEL}={self.run_strategy!r}"
        return (
            f"its Backup {self.restore.backup_name}, which holds the VM stopped (runStrategy "
            f"{self.held_stopped}: it did not run when the Backup began),"
        )

    @property
    def data_restored(self) -> bool:
        """Every disk's data came back and no data movement failed."""
        return all(d.restored is True for d in self.disks) and not self.failed_data_ops

    @property
    def beside_original(self) -> bool:
        """The Restore put the VM into another namespace of this cluster (a drill copy)."""
        return self.target_namespace != self.source_namespace

    def label(self, key: str) -> bool:
        """True when the Restore carries ``key`` (the plugin tests presence, not the value)."""
        return key in self.restore.labels


def evaluate_drills(
    ix: ClusterIndex,
    *,
    namespace: str,
    name: str,
    vm_labels: dict[str, str],
    pvcs: list[PvcRef],
    backups: list[BackupEval],
    at: datetime,
    created: datetime | None = None,
    facts: VMFacts | None = None,
) -> list[DrillEval]:
    """Restores whose filters include the VM and whose Backup held it (or is gone), newest first.

    ``backups`` are the VM's evaluated Backups (:func:`evaluate_backups`); a Backup that
    still exists, has not expired and did not hold the VM object rules its Restores out. A
    Restore that failed validation never ran (its Backup may never have existed), one from
    after the audit instant ``at`` did not happen yet, and one that began before the VM
    (``created``, UTC) existed cannot have restored it unless it recreated it (red team:
    each passed RR-RST-001, or hid a good drill). ``facts``: the VM's pairing facts, which
    tell the runStrategy a Backup still present holds it with.
    """
    by_name = {e.backup.name: e for e in backups}
    out: list[DrillEval] = []
    for r in _restores_into(ix, namespace):
        if r.phase == "FailedValidation" or any(
            t is not None and t > at for t in (r.created, r.completed)
        ):
            continue
        if _later(created, r.created) and vm_labels.get(VELERO_RESTORE_LABEL) != velero_label(
            r.name
        ):
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
        backup = ix.backups.get(r.backup_name or "")
        ev = by_name.get(r.backup_name or "")
        expired = backup is not None and backup.expiration is not None and backup.expiration <= at
        # a Backup that, as read, began or finished after the audit instant or after the
        # Restore finished cannot be what the Restore restored from then: its status is later
        # than the instant (auditor.sources.asof names it), so it proves nothing either way
        # and the drill is judged as one whose Backup is gone, never ruled out (mutations
        # future_time, fz32: a drill of unknown data vanished, UNKNOWN -> READY)
        later = backup is not None and any(
            t is not None and (t > at or (r.completed is not None and t > r.completed))
            for t in (backup.started, backup.completed)
        )
        if backup is not None and not expired and not later and (ev is None or not ev.holds_object):
            continue
        if later:
            ev = None
        present = ev is not None
        disks, failed = _disks(ix, r, namespace, name, pvcs, ev)
        target = r.namespace_mapping.get(namespace, namespace)
        strategy = (
            r.labels.get(RUN_STRATEGY_LABEL)
            if ix.kubevirt_plugin_in(r.namespace) is not False
            else None
        )
        vmi = ix.vmis.get((target, name))
        running = dig(vmi, "status", "phase") == "Running"
        held = (
            restored_stopped_strategy(facts, backup)
            if strategy is None and facts is not None and backup is not None
            else None
        )
        out.append(
            DrillEval(
                r, present, tuple(disks), tuple(failed), namespace, target, strategy, running, held
            )
        )
    out.sort(key=lambda d: (_stamp(d.restore.completed or d.restore.created), d.restore.name))
    out.reverse()
    return out


def _later(made: datetime | None, began: datetime | None) -> bool:
    """Whether an object made at ``made`` came after a Restore that began at ``began``."""
    return made is not None and began is not None and made > began


def _disks(
    ix: ClusterIndex,
    r: RestoreView,
    namespace: str,
    vm_name: str,
    pvcs: list[PvcRef],
    ev: BackupEval | None,
) -> tuple[list[DiskRestore], list[str]]:
    ops = _data_ops(ix, r, vm_name, pvcs)
    failed = [
        f"{kind} {dig(o, 'metadata', 'name')} ({dig(o, 'status', 'phase') or 'no phase'})"
        for kind, _, o in ops
        if dig(o, "status", "phase") != "Completed"
        and (dig(o, "status", "phase") is None or dig(o, "status", "phase") in DATA_MOVER_PHASES)
    ]
    unreadable = [
        k for k in _DATA_KINDS if ix.data.state(k) is not KindState.COMPLETE or k in ix.partial
    ]
    out = []
    for p in pvcs:
        if p.role != "disk":
            continue
        mine = [(kind, o) for kind, pvc, o in ops if pvc == p.name]
        out.append(_disk(ix, r, namespace, p, ev, mine, unreadable))
    return out, failed


def _disk(
    ix: ClusterIndex,
    r: RestoreView,
    namespace: str,
    p: PvcRef,
    ev: BackupEval | None,
    ops: list[tuple[str, dict[str, Any]]],
    unreadable: list[str],
) -> DiskRestore:
    def res(restored: bool | None, reason: str) -> DiskRestore:
        return DiskRestore(p.name, restored, reason)

    if p.obj is None:
        return res(None, f"PVC {p.name} does not exist, so its labels are unknown")
    try:
        selected = r.scope.includes(
            namespace=namespace,
            labels=p.labels,
            plural="persistentvolumeclaims",
            kind="PersistentVolumeClaim",
            group="",
        )
    except SelectorError as exc:
        return res(None, f"Restore {r.name} has a malformed selector: {exc}")
    pulled = ix.kubevirt_plugin_in(r.namespace) is True and r.scope.resource_included(
        "persistentvolumeclaims", "PersistentVolumeClaim", ""
    )
    if not selected and not pulled:
        return res(False, f"PVC {p.name} is outside Restore {r.name}'s filters")
    if r.items_restored == 0:
        # Velero's own count: nothing came back, whatever the filters would have taken
        # (red team: a Completed drill of 0 of 0 items passed, inferred)
        return res(False, f"Restore {r.name} restored no item (status.progress.itemsRestored=0)")
    for kind, o in ops:
        phase = dig(o, "status", "phase")
        if phase is not None and phase not in DATA_MOVER_PHASES:
            return res(None, f"{kind} {dig(o, 'metadata', 'name')} has an unreadable phase")
        if phase != "Completed":
            return res(False, f"{kind} {dig(o, 'metadata', 'name')} is {phase or 'unfinished'}")
    if ops:
        return res(True, f"restored by {ops[0][0]} {dig(ops[0][1], 'metadata', 'name')}")
    target = r.namespace_mapping.get(namespace, namespace)
    if target != namespace and (
        not ix.data.known("PersistentVolumeClaim")
        or ix.partial_for("PersistentVolumeClaim", target)
    ):
        # an unread PVC there may be one an earlier drill left, which Velero skipped
        return res(
            None,
            f"Restore {r.name} restored into namespace {target}, whose PVCs were not read: "
            f"whether PVC {p.name} existed there before it (and was skipped) cannot be told",
        )
    there = ix.pvcs.get((target, p.name)) if target != namespace else None
    made_there = parse_time(dig(there, "metadata", "creationTimestamp")) if there else None
    if made_there is not None and r.created is not None and made_there < r.created:
        # the same rule in the namespace it restored into: a PVC left there by an earlier drill
        # was skipped, and the drill brought no data back (red team)
        return res(
            False,
            f"Restore {r.name} restored into namespace {target}, where PVC {p.name} existed "
            f"before it (created {format_time(made_there)}): Velero skips existing objects, so "
            "no data came back",
        )
    if target == namespace:
        # In place: Velero skips an object that already exists (existingResourcePolicy only
        # updates metadata, never a volume's data), so a PVC older than the Restore kept its
        # own data and got none back (https://velero.io/docs/main/restore-reference/
        # #restore-existing-resource-policy).
        made = parse_time(dig(p.obj, "metadata", "creationTimestamp"))
        if made is None or r.created is None:
            return res(
                None,
                f"Restore {r.name} restored in place and whether PVC {p.name} existed before it "
                "(and was skipped) cannot be told",
            )
        if made < r.created:
            return res(
                False,
                f"Restore {r.name} restored in place over PVC {p.name}, which existed before it "
                f"(created {format_time(made)}): Velero skips existing objects, so no data came "
                "back",
            )
    capture = next((c for c in ev.pvcs if c.pvc == p.name), None) if ev else None
    if ev is not None and capture is not None and capture.unresolved:
        return res(
            None,
            f"whether Backup {ev.backup.name} captured PVC {p.name} is not evidenced: "
            f"{capture.reason}",
        )
    if ev is not None and (capture is None or not capture.captured):
        why = capture.reason if capture else "not in scope"
        return res(False, f"Backup {ev.backup.name} did not capture PVC {p.name}: {why}")
    method = capture.method if capture else None
    if method in (Method.CSI_DATA_MOVER, Method.FS_BACKUP):
        # the kind that restores this method's data: a data-mover copy comes back through a
        # DataDownload, a file-system backup through a PodVolumeRestore; the other kind's
        # state says nothing of this disk
        kind = "DataDownload" if method is Method.CSI_DATA_MOVER else "PodVolumeRestore"
        if kind in unreadable:
            counted = _ops_counted(r) if kind == "DataDownload" else None
            if counted is not None:
                return res(True, f"restored by a DataDownload of Restore {r.name}: {counted}")
            return res(None, f"{kind} not readable; data restore unknown")
        return res(False, f"no {kind} of Restore {r.name} names PVC {p.name}")
    if r.restore_pvs is False:
        return res(False, f"Restore {r.name} has restorePVs: false")
    if ev is None:
        made = parse_time(dig(p.obj, "metadata", "creationTimestamp"))
        if _later(made, r.created) and meta_label(p.obj, VELERO_RESTORE_LABEL) != velero_label(
            r.name
        ):
            # the PVC did not exist when the Restore began, nor did the Restore create it
            return res(
                False,
                f"PVC {p.name} was created after Restore {r.name} began, so it was in no "
                "Backup that Restore read",
            )
        return res(True, f"PVC {p.name} in Restore {r.name}'s filters (Backup gone: inferred)")
    return res(True, f"PVC {p.name} restored from {method.value if method else 'the backup'}")


def _ops_counted(r: RestoreView) -> str | None:
    """What a Completed Restore's own counters prove of a data-mover disk it restored when its
    DataDownloads were not read, or None when they prove nothing.

    A data-mover disk comes back through a DataDownload that the CSI PVC restore action starts
    as an async item operation (velero pkg/restore/actions/csi/pvc_action.go); the Restore
    counts them (``restoreItemOperationsAttempted``, pkg/controller/restore_controller.go) and
    a failed one makes it PartiallyFailed, never Completed
    (pkg/controller/restore_operations_controller.go). So a Completed Restore that attempted
    at least one operation and completed every one, failing none, restored its data-mover
    disks; a Restore with no counters (an older Velero) or any operation short proves nothing.
    """
    if r.phase != "Completed" or r.item_ops is None:
        return None
    attempted, completed, failed = r.item_ops
    if attempted < 1 or completed != attempted or failed:
        return None
    return (
        f"the DataDownloads were not read, but the Restore is Completed with "
        f"status.restoreItemOperationsAttempted={attempted}, Completed={completed}, Failed=0 "
        "(a failed DataDownload makes a Restore PartiallyFailed)"
    )


def _data_ops(
    ix: ClusterIndex, r: RestoreView, vm_name: str, pvcs: list[PvcRef]
) -> list[tuple[str, str, dict[str, Any]]]:
    """(kind, PVC name, object) for this Restore's PodVolumeRestores/DataDownloads of the VM."""
    by_disk = {p.disk: p.name for p in pvcs if p.disk}
    names = {p.name for p in pvcs}
    out: list[tuple[str, str, dict[str, Any]]] = []
    for o in ix.data_downloads.get(r.name, []):
        pvc = dig(o, "spec", "targetVolume", "pvc")
        if isinstance(pvc, str) and pvc in names:
            out.append(("DataDownload", pvc, o))
    launcher = f"virt-launcher-{vm_name}-"
    for o in ix.pod_volume_restores.get(r.name, []):
        pod = dig(o, "spec", "pod", "name")
        volume = dig(o, "spec", "volume")
        if isinstance(pod, str) and pod.startswith(launcher) and volume in by_disk:
            out.append(("PodVolumeRestore", by_disk[str(volume)], o))
    return out


def deleted_drill_failures(
    ix: ClusterIndex,
    namespace: str,
    vm_name: str,
    pvcs: list[PvcRef],
    doubts: list[tuple[str, datetime | None]] | None = None,
) -> list[tuple[str, datetime | None]]:
    """Unfinished data restores of this VM's disks whose Restore is gone, as
    ``("Kind name of Restore R (phase)", creationTimestamp or None)``.

    Velero creates each PodVolumeRestore and DataDownload labelled ``velero.io/restore-name``
    and owned (controller ownerReference) by its Restore (velero pkg/podvolume/restorer.go
    ``newPodVolumeRestore``, pkg/restore/actions/csi/pvc_action.go); ``velero backup delete``
    deletes every Restore of the Backup (pkg/controller/backup_deletion_controller.go,
    "Removing restores"), and garbage collection removes the owned objects only afterwards
    (or never, deleted with ``--cascade=orphan``). One still read that names a Restore not
    read, for a volume of this VM, is the trace of a drill deleted away: when it did not
    complete, that drill failed or never finished. The VM is matched by the object's
    ``spec.sourceNamespace`` (the namespace backed up, before ``namespaceMapping``) and the
    disk PVC (DataDownload ``spec.targetVolume.pvc``) or the virt-launcher pod's volume
    (PodVolumeRestore); one without ``sourceNamespace`` names no VM for sure and is left out.
    Nothing is returned when the Restores were not all read (an unread one is not gone).
    ``doubts`` (when given) receives, in the same form, those of this VM's disks whose
    ``sourceNamespace`` could not be read (named by the index, the object unread): they may be
    this VM's, so whether a failed drill was deleted is unknown (fz39).
    Sources: https://github.com/vmware-tanzu/velero/blob/main/pkg/controller/
    backup_deletion_controller.go, https://github.com/vmware-tanzu/velero/blob/main/pkg/
    podvolume/restorer.go
    """
    if not ix.gone_restores or ix.data.state("Restore") is not KindState.COMPLETE:
        return []
    by_disk = {p.disk: p.name for p in pvcs if p.disk and p.role == "disk"}
    names = {p.name for p in pvcs if p.role == "disk"}
    launcher = f"virt-launcher-{vm_name}-"
    out: list[tuple[str, datetime | None]] = []
    for gone, kind, o in _gone_restore_ops(ix, namespace):
        ns = dig(o, "metadata", "namespace")
        unread = (kind, ns if isinstance(ns, str) else "", str(dig(o, "metadata", "name")))
        source = dig(o, "spec", "sourceNamespace")
        unsure = doubts is not None and source != namespace and unread in ix.unread_objects
        if (source != namespace and not unsure) or ix.partial_for(
            "Restore", ns if isinstance(ns, str) else ""
        ):
            continue
        if kind == "DataDownload":
            mine = dig(o, "spec", "targetVolume", "pvc") in names
        else:
            pod = dig(o, "spec", "pod", "name")
            mine = (
                isinstance(pod, str)
                and pod.startswith(launcher)
                and dig(o, "spec", "volume") in by_disk
            )
        phase = dig(o, "status", "phase")
        if not mine or phase == "Completed":
            continue
        shown = phase if isinstance(phase, str) and phase in DATA_MOVER_PHASES else None
        what = shown or ("no phase" if phase is None else "an unreadable phase")
        made = parse_time(dig(o, "metadata", "creationTimestamp"))
        item = (f"{kind} {dig(o, 'metadata', 'name')} of Restore {gone} ({what})", made)
        if not unsure:
            out.append(item)
        elif doubts is not None:
            doubts.append(item)
    return out


def _restores_into(ix: ClusterIndex, namespace: str) -> list[RestoreView]:
    """The Restores whose namespace filters include ``namespace``, in ``ix.restores`` order;
    once per namespace and index (:meth:`~auditor.scope.Scope.namespace_included`, the first
    test of ``Scope.includes``: a Restore they leave out restores no VM of the namespace).
    Each VM then looks at its namespace's Restores, not at every Restore of the estate
    (a cluster keeping a daily drill per namespace holds thousands)."""
    return ix.memo(
        f"restores-into:{namespace}",
        lambda: [r for r in ix.restores if r.scope.namespace_included(namespace)],
    )


def _gone_restore_ops(ix: ClusterIndex, namespace: str) -> list[tuple[str, str, dict[str, Any]]]:
    """``(Restore name, kind, object)`` of each DataDownload and PodVolumeRestore of a gone
    Restore (``ix.gone_restores`` order, DataDownloads first) that may be of a VM of
    ``namespace``: its ``spec.sourceNamespace`` is ``namespace``, or it is unread (its
    source may be any namespace, :func:`deleted_drill_failures`' doubts); once per
    namespace and index."""

    def build() -> list[tuple[str, str, dict[str, Any]]]:
        out = []
        for gone in ix.gone_restores:
            ops = [("DataDownload", o) for o in ix.data_downloads.get(gone, [])] + [
                ("PodVolumeRestore", o) for o in ix.pod_volume_restores.get(gone, [])
            ]
            for kind, o in ops:
                ns = dig(o, "metadata", "namespace")
                unread = (kind, ns if isinstance(ns, str) else "", str(dig(o, "metadata", "name")))
                if dig(o, "spec", "sourceNamespace") == namespace or unread in ix.unread_objects:
                    out.append((gone, kind, o))
        return out

    return ix.memo(f"gone-restore-ops:{namespace}", build)


def _stamp(value: datetime | None) -> float:
    return value.timestamp() if value is not None else float("-inf")
