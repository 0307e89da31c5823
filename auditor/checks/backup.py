"""BKP checks: is the VM in a usable, fresh, complete off-line copy?"""

from __future__ import annotations

from typing import Any

from auditor.checks.registry import CheckContext, Result, check, failed, not_applicable, passed
from auditor.inventory import VMRecord
from auditor.inventory.facts import usable
from auditor.inventory.protection import IN_FLIGHT_PHASES, BackupEval
from auditor.kubevalues import age_hours, format_time
from auditor.models import Severity

VELERO_BACKUP_DOC = "https://velero.io/docs/main/api-types/backup/"
VELERO_FILTER_DOC = "https://velero.io/docs/main/resource-filtering/"
KUBEVIRT_VELERO = "https://github.com/kubevirt/kubevirt-velero-plugin"
OADP_VIRT_DOC = (
    "https://docs.openshift.com/container-platform/latest/backup_and_restore/"
    "application_backup_and_restore/installing/installing-oadp-kubevirt.html"
)
_BACKUP_KINDS = ("Backup", "PersistentVolumeClaim", "StorageClass", "VolumeSnapshotClass")


def backup_evidence(e: BackupEval, ctx: CheckContext) -> dict[str, Any]:
    """Names, phase, times and age (hours) of one Backup, for evidence."""
    b = e.backup
    return {
        "backup": f"{b.namespace}/{b.name}",
        "phase": b.phase or None,
        "completed": format_time(b.completed),
        "age_hours": age_hours(b.when, ctx.at),
        "expires": format_time(b.expiration),
        "schedule": b.schedule,
        "storage_location": b.storage_location,
    }


def _age_text(hours: float | None) -> str:
    if hours is None:
        return "of unknown age"
    return f"{hours / 24:.1f} d old" if hours >= 48 else f"{hours:.1f} h old"


@check(
    "RR-BKP-001",
    title="The VM and its disks are in a usable Velero backup",
    severity=Severity.HIGH,
    rationale="Restoring a VM needs both its definition and its disk data; a Backup that holds "
    "only the VirtualMachine object restores a VM with no disks.",
    remediation="Include the VM's namespace (and a label selector matching the VM, its "
    "DataVolumes and PVCs) in a Velero Schedule, or enable the kubevirt Velero plugin.",
    references=(VELERO_BACKUP_DOC, KUBEVIRT_VELERO, OADP_VIRT_DOC),
    requires=_BACKUP_KINDS,
)
def covered(vm: VMRecord, ctx: CheckContext) -> Result:
    """PASS when a usable Backup holds the VM object and disk data (RR-BKP-004 judges
    whether *every* PVC is there); FAIL medium when backups hold the object only."""
    good = usable(vm)
    if not good:
        attempted = [e.backup.name for e in vm.backups if e.holds_object]
        return failed(
            f"VM {vm.ref} is in no usable backup (Completed or PartiallyFailed with its data).",
            backups_seen=attempted,
        )
    full = [e for e in good if any(c.captured for c in e.pvcs if c.role == "disk")]
    if vm.spec.ephemeral:
        return passed(
            f"VM {vm.ref} has no persistent disks; its definition is in backup "
            f"{good[0].backup.name}.",
            restore_points=len(good),
            **backup_evidence(good[0], ctx),
        )
    if not full:
        missing = sorted({c.pvc for c in good[0].pvcs if c.role == "disk" and not c.captured})
        return failed(
            f"VM {vm.ref} object is in backup {good[0].backup.name}, but no backup holds the "
            f"data of its disks ({', '.join(missing)}).",
            Severity.MEDIUM,
            object_only=True,
            missing_pvcs=missing,
            **backup_evidence(good[0], ctx),
        )
    return passed(
        f"VM {vm.ref} and disk data are in {len(full)} usable backup(s); newest "
        f"{full[0].backup.name}.",
        restore_points=len(full),
        **backup_evidence(full[0], ctx),
    )


@check(
    "RR-BKP-002",
    title="The newest usable backup is within the RPO",
    severity=Severity.HIGH,
    rationale="The recovery point objective bounds how much data a restore loses; a copy older "
    "than the RPO loses more than the business accepted.",
    remediation="Check the Schedule covering the VM (paused, failing or missing) and run a "
    "backup now; align the Schedule's cron with the RPO.",
    references=(VELERO_BACKUP_DOC, "https://velero.io/docs/main/api-types/schedule/"),
    requires=("Backup",),
)
def fresh(vm: VMRecord, ctx: CheckContext) -> Result:
    """PASS when the newest usable Backup holding the VM completed within ``rpo_hours``."""
    rpo = ctx.thresholds.rpo_hours
    schedules = [
        {
            "schedule": f"{s.namespace}/{s.name}",
            "paused": s.paused,
            "last_backup": format_time(s.last_backup),
        }
        for s in vm.schedules
    ]
    good = usable(vm)
    if not good:
        return failed(
            f"VM {vm.ref} has never been captured by a usable backup; RPO is {rpo:g} h.",
            rpo_hours=rpo,
            schedules=schedules,
        )
    newest = good[0]
    hours = age_hours(newest.backup.when, ctx.at)
    ev = {"rpo_hours": rpo, "schedules": schedules, **backup_evidence(newest, ctx)}
    if hours is None or hours > rpo:
        paused = [str(s["schedule"]) for s in schedules if s["paused"]]
        extra = f" Schedule {', '.join(paused)} is paused." if paused else ""
        return failed(
            f"VM {vm.ref} has no backup newer than {rpo:g} h; newest is {newest.backup.name}, "
            f"{_age_text(hours)}.{extra}",
            **ev,
        )
    return passed(
        f"VM {vm.ref}'s newest usable backup {newest.backup.name} is {_age_text(hours)}, within "
        f"the {rpo:g} h RPO.",
        **ev,
    )


@check(
    "RR-BKP-003",
    title="The newest backup covering the VM completed",
    severity=Severity.HIGH,
    rationale="A PartiallyFailed, Failed or FailedValidation backup may lack this VM's data; "
    "the newest attempt tells whether protection is currently working.",
    remediation="Read the Backup's logs (velero backup logs NAME) and fix the errors; a "
    "FailedValidation backup usually names a missing BackupStorageLocation or snapshot class.",
    references=(VELERO_BACKUP_DOC,),
    requires=("Backup", "PersistentVolumeClaim", "StorageClass", "VolumeSnapshotClass"),
)
def phase(vm: VMRecord, ctx: CheckContext) -> Result:
    """Judge the phase of the newest finished Backup whose scope holds the VM object."""
    finished = [e for e in vm.backups if e.holds_object and e.backup.phase and not _in_flight(e)]
    if not finished:
        return not_applicable(f"No backup has ever covered VM {vm.ref}.")
    e = finished[0]
    ev = backup_evidence(e, ctx)
    ev["errors"], ev["warnings"] = e.backup.errors, e.backup.warnings
    name, ph = e.backup.name, e.backup.phase
    if ph == "Completed":
        return passed(f"Newest backup covering VM {vm.ref}, {name}, is Completed.", **ev)
    if ph == "PartiallyFailed":
        lost = sorted(c.pvc for c in e.pvcs if c.role == "disk" and not c.captured and c.in_scope)
        if lost:
            return failed(
                f"Newest backup covering VM {vm.ref}, {name}, is PartiallyFailed and did not "
                f"capture disk(s) {', '.join(lost)}.",
                failed_pvcs=lost,
                **ev,
            )
        return failed(
            f"Newest backup covering VM {vm.ref}, {name}, is PartiallyFailed; this VM's disks "
            "were captured, the errors belong to other items.",
            Severity.MEDIUM,
            **ev,
        )
    return failed(
        f"Newest backup covering VM {vm.ref}, {name}, is {ph}; it protects nothing.", **ev
    )


def _in_flight(e: BackupEval) -> bool:
    return e.backup.phase in IN_FLIGHT_PHASES


@check(
    "RR-BKP-004",
    title="Every disk PVC and the persistent-state PVC are in the newest usable backup",
    severity=Severity.HIGH,
    rationale="Label-selected backups silently skip unlabelled PVCs, including the "
    "persistent-state-for-<vm> PVC that holds EFI NVRAM and TPM state; a restore then lacks a "
    "disk or boots with fresh NVRAM/TPM (BitLocker keys, boot entries lost).",
    remediation="Label every PVC of the VM (including persistent-state-for-<vm>) with the "
    "backup selector, or back up the whole namespace, or enable the kubevirt Velero plugin which "
    "adds a VM's volumes to the backup.",
    references=(
        VELERO_FILTER_DOC,
        KUBEVIRT_VELERO,
        "https://kubevirt.io/user-guide/storage/persistent_tpm_and_uefi_state/",
    ),
    requires=_BACKUP_KINDS,
)
def volumes(vm: VMRecord, ctx: CheckContext) -> Result:
    """Every needed PVC captured by the newest usable Backup; a missing state PVC is medium."""
    if not vm.pvcs:
        return not_applicable(f"VM {vm.ref} has no PVCs (ephemeral disks only).")
    good = usable(vm)
    if not good:
        return failed(
            f"No usable backup holds VM {vm.ref}, so none of its PVCs "
            f"({', '.join(p.name for p in vm.pvcs)}) is protected.",
            missing_pvcs=[p.name for p in vm.pvcs],
        )
    e = good[0]
    missing = [c for c in e.pvcs if not c.captured]
    ev = {
        **backup_evidence(e, ctx),
        "pvcs": [
            {
                "pvc": c.pvc,
                "role": c.role,
                "captured": c.captured,
                "method": c.method,
                "reason": c.reason,
            }
            for c in e.pvcs
        ],
        "velero_snapshot_contents": e.snapshot_contents,
    }
    if not missing:
        return passed(
            f"Backup {e.backup.name} holds all {len(e.pvcs)} PVC(s) of VM {vm.ref}.", **ev
        )
    names = ", ".join(c.pvc for c in missing)
    severity = Severity.HIGH if any(c.role == "disk" for c in missing) else Severity.MEDIUM
    return failed(
        f"Newest usable backup {e.backup.name} of VM {vm.ref} lacks PVC(s) {names}: "
        f"{missing[0].reason}.",
        severity,
        missing_pvcs=[c.pvc for c in missing],
        **ev,
    )
