"""Facts that both checks and reports read: usable backups, copies, reclaim policy, NADs.

They live here, below the checks, so that the report layer and the recovery
card never import a check module. Each helper only reads a :class:`VMRecord`
or the :class:`ClusterIndex`; none judges PASS or FAIL.
"""

from __future__ import annotations

from typing import Any

from auditor.inventory import ClusterIndex, VMRecord
from auditor.inventory.protection import BackupEval, PvcRef
from auditor.kubevalues import dig, format_time, parse_time

__all__ = ["usable", "copies_of", "reclaim_policy", "nad_key"]


def usable(vm: VMRecord) -> list[BackupEval]:
    """Backups of ``vm`` whose :attr:`BackupEval.usable` is true, newest first.

    What "usable" means is decided in one place, ``BackupEval.usable``
    (:mod:`auditor.inventory.protection`).
    """
    return [e for e in vm.backups if e.usable]


def reclaim_policy(index: ClusterIndex, pvc: dict[str, Any]) -> str | None:
    """The PV's reclaim policy, else the StorageClass's (default Delete); None if unknown.

    Source: https://kubernetes.io/docs/concepts/storage/persistent-volumes/#reclaiming
    (a dynamically provisioned PV inherits its StorageClass's ``reclaimPolicy``,
    ``Delete`` when unset).
    """
    pv = index.pvs.get(str(dig(pvc, "spec", "volumeName") or ""))
    if pv is not None and isinstance(dig(pv, "spec", "persistentVolumeReclaimPolicy"), str):
        return str(pv["spec"]["persistentVolumeReclaimPolicy"])
    sc = index.storage_classes.get(str(dig(pvc, "spec", "storageClassName") or ""))
    if sc is not None:
        policy = sc.get("reclaimPolicy")
        return policy if isinstance(policy, str) else "Delete"
    return None


def copies_of(vm: VMRecord, p: PvcRef, disk: str | None) -> list[dict[str, Any]]:
    """Every restorable copy of one PVC's data: backups, VolumeSnapshots, VM snapshots.

    Each copy is ``{"kind", "name", "time" (RFC 3339 UTC or None), "off_cluster"}``.
    """
    out: list[dict[str, Any]] = []
    for e in vm.backups:
        for c in e.pvcs:
            if c.pvc == p.name and c.captured:
                out.append(
                    {
                        "kind": "Backup",
                        "name": e.backup.name,
                        "time": format_time(e.backup.when),
                        "off_cluster": c.method != "CSI snapshot",
                    }
                )
    for s in vm.volume_snapshots.get(p.name, []):
        if dig(s, "status", "readyToUse") is True:
            out.append(
                {
                    "kind": "VolumeSnapshot",
                    "name": s["metadata"]["name"],
                    "time": format_time(parse_time(dig(s, "status", "creationTime"))),
                    "off_cluster": False,
                }
            )
    for s in vm.vm_snapshots:
        included = dig(s, "status", "snapshotVolumes", "includedVolumes") or []
        if dig(s, "status", "readyToUse") is True and disk in included:
            out.append(
                {
                    "kind": "VirtualMachineSnapshot",
                    "name": s["metadata"]["name"],
                    "time": format_time(parse_time(dig(s, "status", "creationTime"))),
                    "off_cluster": False,
                }
            )
    return out


def nad_key(vm_namespace: str, network_name: str) -> tuple[str, str]:
    """Resolve a multus ``networkName``: ``ns/name``, or a bare name in the VM's namespace.

    Source: https://kubevirt.io/user-guide/network/interfaces_and_networks/#multus
    """
    ns, sep, name = network_name.partition("/")
    return (ns, name) if sep else (vm_namespace, network_name)
