"""Why a disk's snapshot copy was not counted: it is kept inside the volume it is of.

The copies :func:`auditor.inventory.facts.copies_of` leaves out as dying with their volume
(:mod:`auditor.inventory.volbound`: a Longhorn ``type: snap`` snapshot, longhorn#4083),
named in the fields that say so, for a message that would otherwise only say "no copy"
(b40: RR-STG-001 said "no evidenced backup or ready snapshot" beside a ready VolumeSnapshot).
"""

from __future__ import annotations

from typing import Any

from auditor.inventory import ClusterIndex, VMRecord
from auditor.inventory.capture import pvc_facts
from auditor.inventory.protection import PvcRef
from auditor.inventory.volbound import IN_VOLUME_SRC, in_volume_content, lost_with_volume
from auditor.kubevalues import dig

__all__ = ["inside_volume_notes", "reclaim_proof"]


def inside_volume_notes(vm: VMRecord, p: PvcRef, ix: ClusterIndex) -> list[str]:
    """``"<copy>: <object> <field>=<value>"`` for each copy of ``p``'s data left out as kept
    inside its volume: a usable Backup's CSI snapshot, a ready VolumeSnapshot of the claim,
    a VirtualMachineSnapshot's VolumeSnapshot of the disk; [] when none was."""
    notes: list[str] = []
    for e in vm.backups:
        for c in e.pvcs if e.usable else ():
            if c.pvc == p.name and not c.captured and IN_VOLUME_SRC in c.reason and c.proof:
                notes.append(f"Backup {e.backup.name}'s CSI snapshot: {c.proof[-1]}")
    for s in vm.volume_snapshots.get(p.name, []):
        proof = _inside(ix, _content_of(ix, s), p.obj)
        if proof is not None and dig(s, "status", "readyToUse") is True:
            notes.append(f"VolumeSnapshot {dig(s, 'metadata', 'name')}: {proof}")
    for s in vm.vm_snapshots:
        proof = _inside(ix, _vm_snapshot_content(vm, s, p.disk, ix), p.obj)
        if proof is not None:
            notes.append(f"VirtualMachineSnapshot {dig(s, 'metadata', 'name')}: {proof}")
    return list(dict.fromkeys(notes))


def reclaim_proof(ix: ClusterIndex, pvc: dict[str, Any] | None) -> str:
    """The field that says whether ``pvc``'s volume outlives its claim, with its value."""
    pv = pvc_facts(ix, pvc).pv if pvc is not None else None
    if pv is not None:
        policy = dig(pv, "spec", "persistentVolumeReclaimPolicy")
        return (
            f"PersistentVolume {dig(pv, 'metadata', 'name')} "
            f"spec.persistentVolumeReclaimPolicy={policy}"
        )
    cls = dig(pvc, "spec", "storageClassName")
    sc = ix.storage_classes.get(str(cls or ""))
    if sc is not None:
        return f"StorageClass {cls} reclaimPolicy={sc.get('reclaimPolicy') or 'Delete'}"
    return "its reclaim policy unread"


def _inside(ix: ClusterIndex, vsc: dict[str, Any] | None, pvc: dict[str, Any] | None) -> str | None:
    if vsc is None or not lost_with_volume(ix, vsc, pvc):
        return None
    found = in_volume_content(ix, vsc)
    return found.proof if found is not None else None


def _content_of(ix: ClusterIndex, snapshot: dict[str, Any] | None) -> dict[str, Any] | None:
    bound = dig(snapshot, "status", "boundVolumeSnapshotContentName")
    return ix.snapshot_contents.get(bound) if isinstance(bound, str) else None


def _vm_snapshot_content(
    vm: VMRecord, s: dict[str, Any], disk: str | None, ix: ClusterIndex
) -> dict[str, Any] | None:
    """The VolumeSnapshotContent of ``disk`` in VirtualMachineSnapshot ``s`` (through its
    content's ``spec.volumeBackups[].volumeSnapshotName``), or None."""
    if dig(s, "status", "readyToUse") is not True:
        return None
    name = str(dig(s, "status", "virtualMachineSnapshotContentName") or "")
    content = ix.vm_snapshot_contents.get((vm.namespace, name))
    volumes = dig(content, "spec", "volumeBackups")
    for v in volumes if isinstance(volumes, list) else []:
        if isinstance(v, dict) and v.get("volumeName") == disk:
            snap = v.get("volumeSnapshotName")
            found = (
                ix.by_name("VolumeSnapshot").get((vm.namespace, snap))
                if isinstance(snap, str)
                else None
            )
            if found is not None:
                return _content_of(ix, found)
    return None
