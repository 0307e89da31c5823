"""Facts that both checks and reports read: usable backups, copies, reclaim policy, NADs.

They live here, below the checks, so that the report layer and the recovery
card never import a check module. Each helper only reads a :class:`VMRecord`
or the :class:`ClusterIndex`; none judges PASS or FAIL.
"""

from __future__ import annotations

from typing import Any

from auditor.inventory import ClusterIndex, VMRecord
from auditor.inventory.fields import owner_ref_fault
from auditor.inventory.protection import BackupEval, PvcRef
from auditor.inventory.snapcopy import (
    IN_VOLUME,
    snapshot_fault,
    snapshot_indications,
    vm_snapshot_fault,
    vm_snapshot_terminating,
)
from auditor.kubevalues import dig, format_time, kubevirt_version, parse_time
from auditor.sources.base import KindState

__all__ = [
    "usable",
    "restore_points",
    "unproven_points",
    "copies_of",
    "uncounted_snapshots",
    "counted_vm_snapshots",
    "reclaim_policy",
    "nad_key",
]


def usable(vm: VMRecord) -> list[BackupEval]:
    """Backups of ``vm`` whose :attr:`BackupEval.usable` is true, newest first.

    What "usable" means is decided in one place, ``BackupEval.usable``
    (:mod:`auditor.inventory.protection`).
    """
    return [e for e in vm.backups if e.usable]


def restore_points(vm: VMRecord) -> list[BackupEval]:
    """Usable backups of ``vm`` that hold every disk's data on evidence, newest first.

    A backup holding the VM object but not its disks restores a VM without data: it is no
    restore point for the RPO, retention or restore-point count (a VM without PVC disks counts
    every usable backup).
    """
    return [e for e in vm.backups if e.usable and e.disks_captured]


def unproven_points(vm: VMRecord) -> list[BackupEval]:
    """Usable backups none of whose disks is known lost but some of whose disks' capture is
    not evidenced (``unknown``), newest first: they may be restore points."""
    return [
        e
        for e in vm.backups
        if e.usable
        and not e.disks_captured
        and all(p.captured or p.unresolved for p in e.pvcs if p.role == "disk")
    ]


def reclaim_policy(index: ClusterIndex, pvc: dict[str, Any]) -> str | None:
    """The PV's reclaim policy, else the StorageClass's (default Delete); None if unknown.

    Source: https://kubernetes.io/docs/concepts/storage/persistent-volumes/#reclaiming
    (a dynamically provisioned PV inherits its StorageClass's ``reclaimPolicy``,
    ``Delete`` when unset).
    """
    bound = str(dig(pvc, "spec", "volumeName") or "")
    pv = index.pvs.get(bound)
    if pv is not None and isinstance(dig(pv, "spec", "persistentVolumeReclaimPolicy"), str):
        return str(pv["spec"]["persistentVolumeReclaimPolicy"])
    if pv is None and bound and index.partial_for("PersistentVolume", ""):
        # the bound PV may be among the unread ones, and its own policy wins over its
        # class's (patched to Delete after provisioning): unknown, never the class's Retain
        # (red team fz18: a 0-byte persistentvolumes.yaml let RR-STG-001 pass on the
        # StorageClass's policy)
        return None
    sc = index.storage_classes.get(str(dig(pvc, "spec", "storageClassName") or ""))
    if sc is not None:
        policy = sc.get("reclaimPolicy")
        return policy if isinstance(policy, str) else "Delete"
    return None


def copies_of(
    vm: VMRecord,
    p: PvcRef,
    disk: str | None,
    ix: ClusterIndex,
    *,
    newest_backup_only: bool = False,
) -> list[dict[str, Any]]:
    """Every restorable copy of one PVC's data, newest backups first.

    Each copy says whether it ``survives_namespace_loss``: a Velero backup does (object
    storage, Retain snapshot contents); a VolumeSnapshot in the VM's namespace whose content
    has ``deletionPolicy: Delete`` dies with the namespace, and so does a
    VirtualMachineSnapshot (a namespaced object). Only evidenced backup captures, ready
    VolumeSnapshots and ready, restorable VirtualMachineSnapshots count.

    ``newest_backup_only`` keeps only the first Backup copy: ``vm.backups`` is newest first,
    so it is the newest of them (what the recovery card's newest copy needs, without a row
    for each of a month of backups).
    """
    out: list[dict[str, Any]] = []
    for e in vm.backups:
        if not e.usable:
            continue
        if newest_backup_only and out:
            break
        for c in e.pvcs:
            if c.pvc == p.name and c.captured:
                out.append(
                    {
                        "kind": "Backup",
                        "name": e.backup.name,
                        # when its data was read: its start (BackupView.data_time), the
                        # instant its age counts from, as for the report's newest backup
                        "time": format_time(e.backup.data_time),
                        "off_cluster": bool(c.method and c.method.off_cluster),
                        "survives_namespace_loss": True,
                        "basis": c.basis,
                    }
                )
    for s in vm.volume_snapshots.get(p.name, []):
        # one rule for a snapshot read on its own and one a VM snapshot names (round s42)
        if snapshot_fault(ix, s, p.obj, p.name) is not None:
            continue
        if _owner_being_deleted(ix, vm.namespace, s):
            continue
        bound = dig(s, "status", "boundVolumeSnapshotContentName")
        content = ix.snapshot_contents.get(bound) if isinstance(bound, str) else None
        policy = dig(content, "spec", "deletionPolicy") if content else None
        out.append(
            {
                "kind": "VolumeSnapshot",
                "name": s["metadata"]["name"],
                "time": format_time(parse_time(dig(s, "status", "creationTime"))),
                "off_cluster": False,
                "deletion_policy": policy if isinstance(policy, str) else None,
                # a content being deleted goes too, whatever its policy: nothing would
                # point at the storage snapshot once the namespace is gone
                "survives_namespace_loss": policy == "Retain"
                and dig(content, "metadata", "deletionTimestamp") is None,
            }
        )
    for s in vm.vm_snapshots:
        row = _vm_snapshot_copy(vm, s, disk, ix, p)
        if row is not None:
            out.append(row)
    return out


def counted_vm_snapshots(vm: VMRecord, ix: ClusterIndex) -> list[dict[str, Any]]:
    """The VirtualMachineSnapshots of ``vm`` that :func:`copies_of` counts as a restorable
    copy of at least one of its disks (raw objects, in ``vm.vm_snapshots`` order)."""
    disks = [p for p in vm.pvcs if p.role == "disk"]
    out = []
    for s in vm.vm_snapshots:
        rows = (_vm_snapshot_copy(vm, s, p.disk, ix, p) for p in disks)
        if any(r is not None and r["restorable"] for r in rows):
            out.append(s)
    return out


def uncounted_snapshots(vm: VMRecord, p: PvcRef, ix: ClusterIndex) -> list[str]:
    """``"<kind> <name> <field>=<value>"`` for each VolumeSnapshot of claim ``p`` and each
    VirtualMachineSnapshot of its disk that :func:`copies_of` left out, saying why (round
    s42: RR-STG-001 said only "no evidenced backup or ready snapshot" beside them). A copy
    left out as kept inside its volume is named by :mod:`auditor.inventory.insidenotes`."""
    notes: list[str] = []
    for s in vm.volume_snapshots.get(p.name, []):
        why = snapshot_fault(ix, s, p.obj, p.name)
        if why is None and _owner_being_deleted(ix, vm.namespace, s):
            why = (
                f"VolumeSnapshot {dig(s, 'metadata', 'name')} goes with its "
                "VirtualMachineSnapshotContent (deleted, or its VM snapshot is ending)"
            )
        if why is not None and why != IN_VOLUME:
            notes.append(why)
    for s in vm.vm_snapshots:
        if _vm_snapshot_copy(vm, s, p.disk, ix, p) is None:
            why = _vm_snapshot_reason(vm, s, p, ix)
            if why is not None:
                notes.append(why)
    return list(dict.fromkeys(notes))


def _vm_snapshot_reason(vm: VMRecord, s: dict[str, Any], p: PvcRef, ix: ClusterIndex) -> str | None:
    """The first fact that keeps VirtualMachineSnapshot ``s`` from copying ``p``'s disk."""
    name = f"VirtualMachineSnapshot {dig(s, 'metadata', 'name')}"
    ready, phase = dig(s, "status", "readyToUse"), dig(s, "status", "phase")
    if ready is not True:
        return f"{name} status.readyToUse={ready}"
    if phase != "Succeeded":
        return f"{name} status.phase={phase}"
    if dig(s, "metadata", "deletionTimestamp") is not None:
        return f"{name} metadata.deletionTimestamp is set (being deleted)"
    content_name = dig(s, "status", "virtualMachineSnapshotContentName")
    content = ix.vm_snapshot_contents.get((vm.namespace, str(content_name or "")))
    entry = _volume_backup(content, p.disk) if content is not None else None
    vs = entry.get("volumeSnapshotName") if entry is not None else None
    fault = vm_snapshot_fault(s, content, p.disk, vs if isinstance(vs, str) else None)
    if fault is not None:
        return fault
    if content is None:
        return f"{name} status.virtualMachineSnapshotContentName={content_name}: no such content"
    if entry is None:
        return f"{name}: its content holds no spec.volumeBackups entry for {p.disk}"
    snapshot = ix.by_name("VolumeSnapshot").get((vm.namespace, str(vs)))
    if snapshot is None:
        return f"{name}: VolumeSnapshot {vs} of {p.disk} is gone"
    claim = dig(entry, "persistentVolumeClaim", "metadata", "name")
    claim = claim if isinstance(claim, str) and claim else p.name
    why = snapshot_fault(ix, snapshot, ix.pvcs.get((vm.namespace, claim)), claim, own=False)
    if why is not None and why != IN_VOLUME:
        return f"{name}: {why}"
    return None


def _vm_snapshot_copy(
    vm: VMRecord, s: dict[str, Any], disk: str | None, ix: ClusterIndex, p: PvcRef
) -> dict[str, Any] | None:
    """A ready VirtualMachineSnapshot holding ``disk`` as a copy row, or None.

    Its ``status.snapshotVolumes.includedVolumes``, when written, must list ``disk``; KubeVirt
    before v0.59 wrote no ``snapshotVolumes`` (kubevirt commit d390a8a, "Add to snapshot
    status lists of excluded/included volumes"), so without it the content's
    ``volumeBackups`` alone, which that list is derived from, say which disks it holds
    (pkg/storage/snapshot/snapshot.go ``updateSnapshotSnapshotableVolumes``; helper fp15).
    """
    included = dig(s, "status", "snapshotVolumes", "includedVolumes")
    if included is not None and not isinstance(included, list):
        return None  # unreadable (named by the index): no copy it could be shown to hold
    if dig(s, "status", "readyToUse") is not True:
        return None
    if included is not None and disk not in included:
        return None
    # KubeVirt writes the phase with every status it writes (updateSnapshotStatus): a ready
    # status without it was stripped or edited, and shows no finished snapshot (round s42)
    if dig(s, "status", "phase") != "Succeeded":
        return None
    if dig(s, "metadata", "deletionTimestamp") is not None:
        return None  # being deleted, its content and VolumeSnapshots with it
    name = str(dig(s, "status", "virtualMachineSnapshotContentName") or "")
    content = ix.vm_snapshot_contents.get((vm.namespace, name))
    if ix.data.known("VirtualMachineSnapshotContent") and (
        content is None
        or dig(content, "status", "readyToUse") is not True
        or dig(content, "metadata", "deletionTimestamp") is not None
    ):
        return None
    if content is None and included is None:
        return None  # neither its status nor a content read says which disks it holds
    if content is not None and _volume_backup(content, disk) is None:
        return None
    if content is not None and not isinstance(
        dig(content, "spec", "source", "virtualMachine"), dict
    ):
        # a restore rebuilds the VM from the definition its content holds and fails without
        # one ("unexpected snapshot source", kubevirt pkg/storage/snapshot/restore.go
        # getSnapshotVM; red team rt13); one of another type is named by the index
        return None
    entry = _volume_backup(content, disk) if content is not None else None
    vs = entry.get("volumeSnapshotName") if entry is not None else None
    if vm_snapshot_fault(s, content, disk, vs if isinstance(vs, str) else None):
        return None  # another source, an error, the disk excluded, its snapshot not ready (s42)
    if _volume_snapshot_gone(vm, content, disk, ix, p):
        return None
    domain = dig(content, "spec", "source", "virtualMachine", "spec", "template", "spec", "domain")
    cpu = dig(domain, "cpu")
    hotplug = (
        isinstance(cpu, dict) and cpu.get("maxSockets") is not None and _refuses_max_sockets(ix)
    )
    # both fields (the deprecated indications and sourceIndications), sorted (round h47b)
    indications, _ = snapshot_indications(s)
    reason = (
        "an online snapshot of a CPU-hotplug VM (maxSockets in its content) is refused on "
        "restore (kubevirt#10481)"
        if hotplug
        else _other_vm_with_backend_storage(vm, s, domain)
    )
    return {
        "kind": "VirtualMachineSnapshot",
        "name": s["metadata"]["name"],
        "time": format_time(parse_time(dig(s, "status", "creationTime"))),
        "off_cluster": False,
        "survives_namespace_loss": False,
        "indications": sorted(indications),
        "restorable": reason is None,
        "not_restorable_reason": reason,
    }


def _refuses_max_sockets(ix: ClusterIndex) -> bool:
    """Whether the KubeVirt that would restore may refuse a VM definition with
    ``cpu.maxSockets`` (kubevirt#10481): True unless every KubeVirt CR, all read, says in
    ``status.observedKubeVirtVersion`` that it is not v1.0 or v1.1.

    Only those versions refused it ("CPU topology maxSockets cannot be set directy in VM
    template": added in v1.0.0 by kubevirt commit 01fb3890b9, "cpu hotplug: API validation";
    removed in v1.2.0 by d0353454c7, "Remove LiveUpdateFeatures"); from v1.2 ``maxSockets``
    is an ordinary VM template field (pkg/virt-api/webhooks/validating-webhook/admitters/
    vms-admitter.go checks only that sockets do not exceed it), so a snapshot holding it is
    restored like any other (helper fp15). Where the version is not read the refusal stays.
    """

    def refuses() -> bool:
        crs = ix.data.of("KubeVirt")
        if (
            not crs
            or ix.data.state("KubeVirt") is not KindState.COMPLETE
            or ix.partial_for("KubeVirt", "")
        ):
            return True
        for cr in crs:
            release, _ = kubevirt_version(cr)
            if release is None or (1, 0) <= release < (1, 2):
                return True
        return False

    return ix.memo("refuses_max_sockets", refuses)


def _other_vm_with_backend_storage(vm: VMRecord, s: dict[str, Any], domain: Any) -> str | None:
    """Why the VM snapshot ``s`` cannot be restored when it was taken of an earlier VM of this
    name (``status.sourceUID`` is not the VM's uid) that kept EFI or TPM state on backend
    storage, else None.

    KubeVirt refuses to restore onto an existing VM other than the snapshot's source
    ("restore source and restore target are different but restore target already exists",
    pkg/storage/snapshot/restore.go ``sourceAndTargetAreDifferent``), and its admission
    webhook refuses a restore to any other or new VM when the snapshotted VM has backend
    storage (persistent TPM or EFI: "Restore to a different VM is not supported",
    pkg/storage/admitters/vmrestore.go ``validateTargetVM``,
    pkg/storage/backend-storage/backend-storage.go ``IsBackendStorageNeeded``). Without
    backend storage it can still be restored to a new VM, so it stays a copy.
    """
    source = dig(s, "status", "sourceUID")
    if not isinstance(source, str) or not source or vm.uid is None or source == vm.uid:
        return None
    tpm = dig(domain, "devices", "tpm", "persistent") is True
    efi = dig(domain, "firmware", "bootloader", "efi", "persistent") is True
    if not (tpm or efi):
        return None
    return (
        f"it was taken of an earlier VM of this name (sourceUID {source}, not {vm.uid}) with "
        f"persistent {'TPM' if tpm else 'EFI'} state: KubeVirt restores it neither onto this "
        "VM nor to another one"
    )


def _volume_backup(content: dict[str, Any], disk: str | None) -> dict[str, Any] | None:
    """The entry of the snapshot content's ``spec.volumeBackups`` for volume ``disk`` that
    names its VolumeSnapshot, or None.

    A VirtualMachineRestore creates a PVC only for each volume with a volumeBackup, from the
    VolumeSnapshot it names, and fails on one without a name ("VolumeSnapshotName missing");
    a volume without an entry keeps its old claim in the restored VM, so the snapshot holds
    no copy of it (kubevirt pkg/storage/snapshot/restore.go ``reconcileVolumeRestores``,
    ``generateRestoredVMSpec``). KubeVirt derives ``status.snapshotVolumes.includedVolumes``
    from these entries (pkg/storage/snapshot/snapshot.go
    ``updateSnapshotSnapshotableVolumes``), so a VirtualMachineSnapshot listing a volume its
    content does not back up says more than its content holds. ``volumeBackups`` is omitted
    when empty: absent, it holds no volume (red team rt13). A list of another type is named
    by the index and holds nothing either.
    """
    volumes = dig(content, "spec", "volumeBackups")
    for entry in volumes if isinstance(volumes, list) else []:
        if not isinstance(entry, dict) or entry.get("volumeName") != disk:
            continue
        name = entry.get("volumeSnapshotName")
        return entry if isinstance(name, str) and name else None
    return None


def _volume_snapshot_gone(
    vm: VMRecord, content: dict[str, Any] | None, disk: str | None, ix: ClusterIndex, p: PvcRef
) -> bool:
    """True when the VolumeSnapshot the snapshot content names for ``disk``
    (``spec.volumeBackups[].volumeSnapshotName``) is not among the VolumeSnapshots read in
    full, or shows no copy of the disk's claim ``p`` by the rule a VolumeSnapshot read on its
    own must meet (:func:`auditor.inventory.snapcopy.snapshot_fault`: not ready, being
    deleted, cut from another claim or before this one, its content failed, of another
    volume or driver, bound to another snapshot; round s42 — before it, one cut from another
    claim counted). A VirtualMachineSnapshot restores each disk from that VolumeSnapshot, and
    its own ``readyToUse`` is only updated when KubeVirt next reconciles it
    (https://kubevirt.io/user-guide/storage/snapshot_restore_api/)."""
    if (
        content is None
        or not ix.data.known("VolumeSnapshot")
        or ix.partial_for("VolumeSnapshot", vm.namespace)
    ):
        return False
    entry = _volume_backup(content, disk)
    name = entry.get("volumeSnapshotName") if entry is not None else None
    if not isinstance(name, str) or not name:
        return False
    snapshot = ix.by_name("VolumeSnapshot").get((vm.namespace, name))
    if snapshot is None:
        return True
    # the claim the content says it was cut from (the VM's may be re-created by a restore)
    claim = dig(entry, "persistentVolumeClaim", "metadata", "name")
    claim = claim if isinstance(claim, str) and claim else p.name
    pvc = ix.pvcs.get((vm.namespace, claim))
    return snapshot_fault(ix, snapshot, pvc, claim, own=False) is not None


def _owner_being_deleted(ix: ClusterIndex, namespace: str, snapshot: dict[str, Any]) -> bool:
    """Whether a VolumeSnapshot belongs to a VirtualMachineSnapshotContent that is being
    deleted, or is gone from a complete list, or whose VirtualMachineSnapshot is ending (being
    deleted, Failed, or in progress past its failureDeadline:
    :func:`auditor.inventory.snapcopy.vm_snapshot_terminating`) with ``deletionPolicy`` other
    than ``Retain`` or a content not ready: the content then goes, and the VolumeSnapshots it
    owns with it (https://kubevirt.io/user-guide/storage/snapshot_restore_api/;
    kubevirt pkg/storage/snapshot/snapshot.go ``shouldDeleteContent``)."""
    snaps = ix.by_name("VirtualMachineSnapshot")
    refs = dig(snapshot, "metadata", "ownerReferences")
    if (refs is not None and not isinstance(refs, list)) or _unreadable_owner(refs):
        return _snapshot_going_in(ix, namespace, snaps)  # whose it is cannot be read (named)
    if not isinstance(refs, list):
        return False
    for ref in refs:
        if not isinstance(ref, dict) or ref.get("kind") != "VirtualMachineSnapshotContent":
            continue
        content = ix.vm_snapshot_contents.get((namespace, str(ref.get("name"))))
        if content is None:
            if ix.data.known("VirtualMachineSnapshotContent") and not ix.partial_for(
                "VirtualMachineSnapshotContent", namespace
            ):
                # KubeVirt makes each VolumeSnapshot of a VM snapshot a dependent of its
                # content (pkg/storage/snapshot/snapshot.go createVolumeSnapshot) and deletes
                # the content of a failed snapshot; with that owner gone from a complete list,
                # Kubernetes' garbage collector deletes the VolumeSnapshot
                # (https://kubernetes.io/docs/concepts/architecture/garbage-collection/; red
                # team rt11, bug case 18 variant: a failed VM snapshot's leftover counted)
                return True
            continue
        if dig(content, "metadata", "deletionTimestamp") is not None:
            return True
        owners = dig(content, "metadata", "ownerReferences")
        if (owners is not None and not isinstance(owners, list)) or _unreadable_owner(owners):
            return _snapshot_going_in(ix, namespace, snaps)
        # its VM snapshot: an owner, or the one its spec names, by which KubeVirt finds it
        # (pkg/storage/snapshot/snapshot.go getVMSnapshot reads spec.virtualMachineSnapshotName)
        names = [
            str(o.get("name"))
            for o in (owners if isinstance(owners, list) else [])
            if isinstance(o, dict) and o.get("kind") == "VirtualMachineSnapshot"
        ]
        named = dig(content, "spec", "virtualMachineSnapshotName")
        for name in [*names, *([named] if isinstance(named, str) and named else [])]:
            vmsnap = snaps.get((namespace, name))
            # KubeVirt deletes the content of a snapshot being deleted, Failed or past its
            # failureDeadline, unless it is Retain and ready (round s42: a Failed snapshot's
            # ready VolumeSnapshot counted as the disk's copy)
            if (
                vmsnap is not None
                and vm_snapshot_terminating(vmsnap, ix.data.read_as_of)
                and (
                    dig(vmsnap, "spec", "deletionPolicy") != "Retain"
                    or dig(content, "status", "readyToUse") is not True
                )
            ):
                return True
    return False


def _unreadable_owner(refs: Any) -> bool:
    """Whether a list of ownerReferences holds one the API server would refuse (named by the
    index): the owner it stands for, maybe one being deleted, cannot be told (fz39)."""
    return isinstance(refs, list) and any(owner_ref_fault(r) is not None for r in refs)


def _snapshot_going_in(
    ix: ClusterIndex, namespace: str, snaps: dict[tuple[str, str], dict[str, Any]]
) -> bool:
    """Whether some VirtualMachineSnapshot of ``namespace`` is being deleted without
    ``deletionPolicy: Retain``: an object whose owner cannot be read may be one it takes."""
    return any(
        ns == namespace
        and dig(o, "metadata", "deletionTimestamp") is not None
        and dig(o, "spec", "deletionPolicy") != "Retain"
        for (ns, _), o in snaps.items()
    )


def nad_key(vm_namespace: str, network_name: str) -> tuple[str, str]:
    """Resolve a multus ``networkName``: ``ns/name``, or a bare name in the VM's namespace.

    Source: https://kubevirt.io/user-guide/network/interfaces_and_networks/#multus
    """
    ns, sep, name = network_name.partition("/")
    return (ns, name) if sep else (vm_namespace, network_name)
