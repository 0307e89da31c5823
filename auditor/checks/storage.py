"""STG checks: what happens to the disk data if the PVC is deleted?"""

from __future__ import annotations

from auditor.checks.registry import (
    CheckContext,
    Result,
    check,
    errored,
    failed,
    not_applicable,
    passed,
)
from auditor.inventory import VMRecord
from auditor.inventory.facts import copies_of, reclaim_policy
from auditor.models import Severity

K8S_RECLAIM = "https://kubernetes.io/docs/concepts/storage/persistent-volumes/#reclaiming"
K8S_SNAPSHOT = "https://kubernetes.io/docs/concepts/storage/volume-snapshots/"
KV_SNAPSHOT = "https://kubevirt.io/user-guide/storage/snapshot_restore_api/"
KV_CONTAINERDISK = "https://kubevirt.io/user-guide/storage/disks_and_volumes/#containerdisk"


@check(
    "RR-STG-001",
    title="Disks on Delete-reclaim storage have a copy of their data",
    severity=Severity.HIGH,
    rationale="With reclaimPolicy Delete, deleting the PVC (or the VM with its DataVolumes) "
    "destroys the volume; without a backup or snapshot the data is gone for good.",
    remediation="Back the disk up (Velero with CSI snapshots or the data mover), or take a "
    "VirtualMachineSnapshot, or move it to a Retain storage class.",
    references=(K8S_RECLAIM, K8S_SNAPSHOT, KV_SNAPSHOT),
    requires=(
        "PersistentVolumeClaim",
        "PersistentVolume",
        "StorageClass",
        "Backup",
        "VolumeSnapshot",
        "VirtualMachineSnapshot",
    ),
)
def delete_reclaim_copied(vm: VMRecord, ctx: CheckContext) -> Result:
    """FAIL naming each Delete-reclaim disk PVC with no copy; ERROR if a policy is unknown."""
    disks = [p for p in vm.pvcs if p.role == "disk"]
    if not disks:
        return not_applicable(f"VM {vm.ref} has no PVC disks.")
    rows, bare, unknown = [], [], []
    for p in disks:
        if p.obj is None:
            bare.append(p.name)
            rows.append({"pvc": p.name, "exists": False})
            continue
        policy = reclaim_policy(ctx.index, p.obj)
        copies = copies_of(vm, p, p.disk)
        rows.append(
            {
                "pvc": p.name,
                "reclaim_policy": policy,
                "copies": len(copies),
                "newest_copy": copies[0] if copies else None,
            }
        )
        if policy is None:
            unknown.append(p.name)
        elif policy == "Delete" and not copies:
            bare.append(p.name)
    if bare:
        return failed(
            f"VM {vm.ref} disk PVC(s) {', '.join(bare)} sit on Delete-reclaim storage (or are "
            "missing) with no backup or snapshot of their data.",
            unprotected=bare,
            disks=rows,
        )
    if unknown:
        return errored(
            f"Reclaim policy of PVC(s) {', '.join(unknown)} of VM {vm.ref} is unknown "
            "(PV and StorageClass not found).",
            disks=rows,
        )
    return passed(f"Every disk of VM {vm.ref} is on Retain storage or has a copy.", disks=rows)


@check(
    "RR-STG-002",
    title="Ephemeral VMs are identified as such",
    severity=Severity.INFO,
    rationale="A VM whose disks are all containerDisk/ephemeral keeps nothing across restarts; "
    "only its definition can be restored. That is a design choice, not a backup gap, but "
    "owners should know it.",
    remediation="None if intended; otherwise move state to a DataVolume-backed disk.",
    references=(KV_CONTAINERDISK,),
    reads=("spec.template.spec.volumes",),
)
def ephemeral(vm: VMRecord, ctx: CheckContext) -> Result:
    """Info FAIL for a VM with no persistent disk; N/A otherwise."""
    if not vm.spec.ephemeral:
        return not_applicable(f"VM {vm.ref} has persistent disks.")
    kinds = sorted({d.volume_type or "unknown" for d in vm.spec.disks})
    return failed(
        f"VM {vm.ref} is ephemeral by design ({', '.join(kinds)}): only its definition can be "
        "restored.",
        Severity.INFO,
        volume_types=kinds,
    )
