"""CSI snapshots stored inside the volume they are of, which die with it.

Longhorn's CSI driver cuts a VolumeSnapshot of a class with ``parameters.type: snap`` as a
Longhorn snapshot, "stored inside the cluster" in the volume itself, and returns a handle
``snap://<volume>/<snapshot>``; without ``type`` (or ``bak``) it takes a Longhorn backup in
its off-cluster backupstore (``bak://``, formerly ``bs://``)
(https://longhorn.io/docs/latest/snapshots-and-backups/csi-snapshot-support/csi-volume-snapshot-associated-with-longhorn-snapshot/,
longhorn-manager csi/controller_server.go ``csiSnapshotTypeLonghornSnapshot``). The lifecycle
of such a snapshot "is bound to its owner volume": once the PV is gone, a PVC restored from
it fails ([longhorn#4083](https://github.com/longhorn/longhorn/issues/4083), closed as by
design; Velero users hit it restoring a CSI-snapshot backup). A Delete-reclaim volume is
deleted with its claim, so a Velero CSI snapshot (or a VirtualMachineSnapshot) of it cannot
bring the disk back once the disk is lost: the case a restore is for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from auditor.inventory.capture import pvc_facts, velero_snapshot_prefix
from auditor.inventory.index import ClusterIndex
from auditor.kubevalues import dig

__all__ = [
    "IN_VOLUME_SRC",
    "InVolume",
    "in_volume_backup_copy",
    "in_volume_class",
    "in_volume_content",
    "keeps_snapshots_inside",
    "lost_with_volume",
    "reclaim_of",
]

IN_VOLUME_SRC = "https://github.com/longhorn/longhorn/issues/4083"

#: driver -> (class parameter, its value for an in-volume snapshot, handle prefix of one)
_IN_VOLUME: dict[str, tuple[str, str, str]] = {
    "driver.longhorn.io": ("type", "snap", "snap://"),
}


def keeps_snapshots_inside(driver: str) -> bool:
    """Whether CSI driver ``driver`` can cut snapshots kept inside their volume."""
    return driver in _IN_VOLUME


@dataclass(frozen=True, slots=True)
class InVolume:
    """Why a CSI snapshot lives inside its volume: ``why`` (a clause) and ``proof`` (the
    object and field read)."""

    why: str
    proof: str


def in_volume_content(ix: ClusterIndex, content: dict[str, Any]) -> InVolume | None:
    """The VolumeSnapshotContent ``content`` is a snapshot stored inside its volume (its
    handle, else its class, says so), or None."""
    driver = dig(content, "spec", "driver")
    rule = _IN_VOLUME.get(driver) if isinstance(driver, str) else None
    if rule is None:
        return None
    name = dig(content, "metadata", "name")
    handle = dig(content, "status", "snapshotHandle")
    if isinstance(handle, str) and handle:
        if handle.startswith(rule[2]):
            return InVolume(
                f"its snapshot {handle} is a {driver} snapshot kept inside the volume",
                f"VolumeSnapshotContent {name} status.snapshotHandle={handle}",
            )
        return None
    cls = dig(content, "spec", "volumeSnapshotClassName")
    return in_volume_class(ix, driver, cls) if isinstance(cls, str) else None


def in_volume_class(ix: ClusterIndex, driver: str, cls: str | None) -> InVolume | None:
    """VolumeSnapshotClass ``cls`` of ``driver`` cuts snapshots stored inside the volume, or
    None (no such rule for the driver, no class, or a class not read)."""
    rule = _IN_VOLUME.get(driver)
    if rule is None or not cls:
        return None
    for c in ix.snapshot_classes_by_driver.get(driver, []):
        if dig(c, "metadata", "name") != cls:
            continue
        params = c.get("parameters")
        value = params.get(rule[0]) if isinstance(params, dict) else None
        if value == rule[1]:
            return InVolume(
                f"VolumeSnapshotClass {cls} (parameters.{rule[0]}: {rule[1]}) makes each "
                f"{driver} snapshot one kept inside the volume",
                f"VolumeSnapshotClass {cls} parameters.{rule[0]}={rule[1]}",
            )
        return None
    return None


def in_volume_backup_copy(
    ix: ClusterIndex, backup: str, velero_class: str | None, pvc: dict[str, Any]
) -> tuple[bool | None, str, str, bool] | None:
    """Whether Backup ``backup``'s CSI snapshot of ``pvc`` lives inside its volume, and what
    that leaves of the copy: ``(lost, reason, proof, observed)`` or None when it does not.

    ``lost`` is True when the volume is deleted with its claim (reclaim policy Delete: the
    snapshot goes with it, and no restore after the disk is lost can use it), None when the
    policy cannot be read, False when the volume is retained (the copy lasts as long as the
    retained volume). The snapshot is read from the Backup's labelled VolumeSnapshotContent
    of the claim's volume (observed); without one, from the class Velero selects now,
    ``velero_class`` (inferred: the class may have changed since).
    """
    facts = pvc_facts(ix, pvc)
    driver = facts.driver
    if driver not in _IN_VOLUME:
        return None
    ns = dig(pvc, "metadata", "namespace")
    prefix = velero_snapshot_prefix(facts.name)
    found: InVolume | None = None
    observed = False
    for c in ix.backup_snapshot_contents.get(backup, []):
        if dig(c, "spec", "driver") != driver:
            continue
        ref = dig(c, "spec", "volumeSnapshotRef") or {}
        source = dig(c, "spec", "source", "volumeHandle")
        ours = (facts.handle is not None and source == facts.handle) or (
            isinstance(ref, dict)
            and ref.get("namespace") == ns
            and str(ref.get("name") or "").startswith(prefix)
        )
        if ours:
            observed = True
            found = in_volume_content(ix, c)
            break
    if not observed:
        found = in_volume_class(ix, driver, velero_class)
    if found is None:
        return None
    policy = reclaim_of(ix, pvc)
    name = facts.name
    if policy == "Delete":
        reason = (
            f"backup {backup} took a CSI snapshot of PVC {name}, but {found.why}: the volume "
            "is deleted with its claim (reclaim policy Delete) and takes the snapshot with "
            f"it, so once the disk is lost no restore can use it ({IN_VOLUME_SRC})"
        )
        return True, reason, found.proof, observed
    if policy is None:
        reason = (
            f"backup {backup} took a CSI snapshot of PVC {name}, but {found.why}, and whether "
            "the volume outlives its claim (its reclaim policy) cannot be read: the snapshot "
            f"dies with the volume ({IN_VOLUME_SRC})"
        )
        return None, reason, found.proof, observed
    return False, f"{found.why}; the volume is retained", found.proof, observed


def lost_with_volume(ix: ClusterIndex, content: dict[str, Any], pvc: dict[str, Any] | None) -> bool:
    """VolumeSnapshotContent ``content`` is kept inside its volume, and that volume (the one
    of ``pvc``) is not known to be retained when its claim goes: no copy that outlives the
    disk (a VolumeSnapshot or VirtualMachineSnapshot restored from it once the disk is lost
    fails, longhorn#4083)."""
    if in_volume_content(ix, content) is None:
        return False
    return pvc is None or reclaim_of(ix, pvc) != "Retain"


def reclaim_of(ix: ClusterIndex, pvc: dict[str, Any]) -> str | None:
    """The reclaim policy of ``pvc``'s volume: its PV's, else, for a claim bound to no volume,
    its class's (Delete when the class sets none); None when not read (a bound PV unread is
    never stood in for by its class)."""
    pv = pvc_facts(ix, pvc).pv
    if pv is None and dig(pvc, "spec", "volumeName"):
        return None
    if pv is not None:
        policy = dig(pv, "spec", "persistentVolumeReclaimPolicy")
        return policy if isinstance(policy, str) else None
    sc = ix.storage_classes.get(str(dig(pvc, "spec", "storageClassName") or ""))
    if sc is None:
        return None
    policy = sc.get("reclaimPolicy") or "Delete"
    return policy if isinstance(policy, str) else None
