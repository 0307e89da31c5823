"""STG checks: what happens to the disk data if the PVC is deleted?"""

from __future__ import annotations

from typing import Any

from auditor.checks.registry import (
    DISK_DATA,
    NOT_READ,
    CheckContext,
    Result,
    check,
    errored,
    failed,
    not_applicable,
    passed,
)
from auditor.inventory import VMRecord
from auditor.inventory.facts import copies_of, reclaim_policy, uncounted_snapshots
from auditor.inventory.insidenotes import inside_volume_notes, reclaim_proof
from auditor.inventory.volbound import IN_VOLUME_SRC
from auditor.models import Basis, Severity

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
    references=(
        K8S_RECLAIM,
        K8S_SNAPSHOT,
        KV_SNAPSHOT,
        "https://github.com/kubevirt/kubevirt/issues/10481",
        "https://kubernetes.io/docs/concepts/storage/volume-snapshots/#delete",
    ),
    requires=(
        "PersistentVolumeClaim",
        "PersistentVolume",
        "StorageClass",
        "Backup",
        "BackupStorageLocation",
        "VolumeSnapshot",
        "VirtualMachineSnapshot",
    ),
    reads=DISK_DATA,
)
def delete_reclaim_copied(vm: VMRecord, ctx: CheckContext) -> Result:
    """FAIL naming each Delete-reclaim disk PVC with no copy; ERROR if a policy is unknown."""
    disks = [p for p in vm.pvcs if p.role == "disk"]
    if not disks:
        return not_applicable(f"VM {vm.ref} has no PVC disks.")
    rows: list[dict[str, Any]] = []
    bare, weak, unknown = [], [], []
    unread: list[str] = []  # the unknown ones whose reclaim policy could not be read
    for p in disks:
        if p.obj is None:
            bare.append(p.name)
            rows.append({"pvc": p.name, "exists": False})
            continue
        policy = reclaim_policy(ctx.index, p.obj)
        copies = [c for c in copies_of(vm, p, p.disk, ctx.index) if c.get("restorable", True)]
        durable = [c for c in copies if c["survives_namespace_loss"]]
        rows.append(
            {
                "pvc": p.name,
                "reclaim_policy": policy,
                "copies": len(copies),
                "copies_surviving_namespace_loss": len(durable),
                "newest_copy": copies[0] if copies else None,
            }
        )
        maybe = any(
            c.pvc == p.name and c.unresolved for e in vm.backups if e.usable for c in e.pvcs
        )
        # Recycle (deprecated) scrubs the volume on release as Delete removes it: only Retain
        # keeps the data (https://kubernetes.io/docs/concepts/storage/persistent-volumes/#recycle;
        # red team: a Recycle disk without a copy passed)
        losing = policy is not None and policy != "Retain"
        if policy is None:
            unknown.append(p.name)
            unread.append(p.name)
        elif losing and not copies and maybe:
            unknown.append(p.name)
        elif losing and not copies:
            bare.append(p.name)
        elif losing and not durable:
            weak.append(p.name)
    lost = [d.name for d in vm.uncapturable]
    inside = _inside_volume(vm, ctx, bare + unknown)
    left_out = {
        p.name: notes
        for p in disks
        if p.name in bare + unknown and p.obj is not None
        if (notes := uncounted_snapshots(vm, p, ctx.index))
    }
    if bare or lost:
        names = bare + [f"{d} (hostDisk)" for d in lost]
        return failed(
            f"VM {vm.ref} disk(s) {', '.join(names)} have no copy of their data: Delete-reclaim "
            "(or missing) PVCs with no evidenced backup or ready snapshot"
            + (", and hostDisk files no Velero method copies" if lost else "")
            + _inside_clause(inside, bare)
            + _left_out_clause(left_out, bare)
            + ".",
            unprotected=bare,
            uncapturable_disks=lost,
            disks=rows,
            **({"inside_volume": inside} if inside else {}),
            **({"snapshots_not_counted": left_out} if left_out else {}),
        ).on(Basis.OBSERVED)
    if unknown:
        # each PVC named with its own reason: a message blaming a PV and StorageClass that
        # were read sent a reader after the wrong gap (fp34)
        maybe_held = [n for n in unknown if n not in unread]
        why = []
        if unread:
            why.append(
                f"the reclaim policy of {', '.join(unread)} could not be read (PV and "
                "StorageClass not found)"
            )
        if maybe_held:
            why.append(
                f"a backup may hold the data of {', '.join(maybe_held)} (storage whose reclaim "
                "policy does not keep the volume), but nothing evidences it"
            )
        return errored(
            f"Whether PVC(s) {', '.join(unknown)} of VM {vm.ref} have a copy is unknown: "
            f"{'; '.join(why)}{_inside_clause(inside, unknown)}"
            f"{_left_out_clause(left_out, unknown)}.",
            disks=rows,
            **({"inside_volume": inside} if inside else {}),
            **({"snapshots_not_counted": left_out} if left_out else {}),
        ).on(Basis.INFERRED)
    if weak:
        return failed(
            f"VM {vm.ref} disk PVC(s) {', '.join(weak)} on Delete-reclaim storage are copied only "
            "by snapshots inside the namespace (VirtualMachineSnapshot, or VolumeSnapshot whose "
            "content has deletionPolicy Delete): deleting the namespace loses disk and copies.",
            Severity.MEDIUM,
            namespace_bound=weak,
            disks=rows,
        ).on(Basis.OBSERVED)
    return passed(
        f"Every disk of VM {vm.ref} is on Retain storage or has a copy that outlives its "
        "namespace.",
        disks=rows,
    ).on(Basis.OBSERVED)


def _inside_volume(vm: VMRecord, ctx: CheckContext, names: list[str]) -> dict[str, list[str]]:
    """PVC -> the copies of its data not counted as kept inside its volume, each with the
    field that says so, then the field that says the volume goes with its claim."""
    out: dict[str, list[str]] = {}
    for p in vm.pvcs:
        if p.name in names and p.obj is not None:
            notes = inside_volume_notes(vm, p, ctx.index)
            if notes:
                out[p.name] = [*notes, reclaim_proof(ctx.index, p.obj)]
    return out


def _inside_clause(inside: dict[str, list[str]], names: list[str]) -> str:
    """``; not counted, ...`` naming why each of ``names``' snapshot copies was not counted
    (at most three per PVC), or ""."""
    parts = []
    for name in names:
        notes = inside.get(name)
        if notes:
            *copies, reclaim = notes
            parts.append(f"{name}: {_first_three(copies)}; {reclaim}")
    if not parts:
        return ""
    return (
        "; not counted, as kept inside the volume, which goes with its claim "
        f"({IN_VOLUME_SRC}): " + " | ".join(parts)
    )


def _left_out_clause(left_out: dict[str, list[str]], names: list[str]) -> str:
    """``; snapshots not counted: ...`` naming, for each of ``names``, the snapshots
    :func:`auditor.inventory.facts.uncounted_snapshots` left out and why (at most three per
    PVC), or ""."""
    parts = [f"{name}: {_first_three(left_out[name])}" for name in names if left_out.get(name)]
    return "; snapshots not counted: " + " | ".join(parts) if parts else ""


def _first_three(notes: list[str]) -> str:
    """The first three of ``notes`` joined by "; ", then "and N more" for the rest."""
    more = f" and {len(notes) - 3} more" if len(notes) > 3 else ""
    return "; ".join(notes[:3]) + more


@check(
    "RR-STG-002",
    title="Ephemeral VMs are identified as such",
    severity=Severity.INFO,
    rationale="A VM whose disks are all containerDisk/ephemeral keeps nothing across restarts; "
    "only its definition can be restored. That is a design choice, not a backup gap, but "
    "owners should know it.",
    remediation="None if intended; otherwise move state to a DataVolume-backed disk.",
    references=(KV_CONTAINERDISK,),
    reads=("spec.template.spec.volumes", *NOT_READ),
)
def ephemeral(vm: VMRecord, ctx: CheckContext) -> Result:
    """Info FAIL for a VM with no persistent disk; N/A otherwise."""
    if not vm.spec.ephemeral:
        return not_applicable(f"VM {vm.ref} has persistent disks.")
    kinds = sorted(
        {"empty cdrom" if d.empty_tray else d.volume_type or "unknown" for d in vm.spec.disks}
    )
    # a diskless VM (network or kernelBoot boot) lists no volume kind at all
    return failed(
        f"VM {vm.ref} is ephemeral by design ({', '.join(kinds) or 'no disks'}): only its "
        "definition can be restored.",
        Severity.INFO,
        volume_types=kinds,
    )
