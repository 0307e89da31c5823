"""Checks from the BackupStorageLocation bucket: what the backups really hold.

They read ``ClusterData.backup_contents`` / ``storage_locations`` filled by
:mod:`auditor.sources.bucket`. Without a ``backup_storage`` config they are
NOT_APPLICABLE ("capture evidence is from the cluster only"), never ERROR; a
location that could not be read makes them ERROR naming it, never PASS.
"""

from __future__ import annotations

from typing import Any

from auditor.checks.fleetview import PlatformFacts
from auditor.checks.registry import (
    DISK_DATA,
    CheckContext,
    Result,
    check,
    errored,
    failed,
    not_applicable,
    passed,
    platform_check,
)
from auditor.inventory import VMRecord
from auditor.inventory.needs import identity_of, restore_needs
from auditor.inventory.protection import USABLE_PHASES, BackupEval
from auditor.inventory.vmspec import read_vm_spec
from auditor.models import Basis, Severity
from auditor.sources.base import BackupContents

VELERO_LAYOUT = (
    "https://github.com/vmware-tanzu/velero/blob/main/pkg/persistence/object_store_layout.go"
)
VELERO_OUTPUT = "https://velero.io/docs/main/output-file-format/"
VELERO_VOLUMEINFO = (
    "https://github.com/vmware-tanzu/velero/blob/main/internal/volume/volumes_information.go"
)
KUBEVIRT_PLUGIN = "https://github.com/kubevirt/kubevirt-velero-plugin"
KV_FIRMWARE = "https://kubevirt.io/user-guide/compute/virtual_hardware/#biosuefi"
S3_LOCK = "https://docs.aws.amazon.com/AmazonS3/latest/userguide/object-lock.html"
MINIO_LOCK = (
    "https://min.io/docs/minio/linux/administration/object-management/object-retention.html"
)
NOT_CONFIGURED = "Bucket reading is not configured: capture evidence is from the cluster only."


def claimed(vm: VMRecord) -> list[BackupEval]:
    """Backups the cluster says hold the VM in a restorable phase, newest first."""
    return [e for e in vm.backups if e.holds_object and e.backup.phase in USABLE_PHASES]


def _bucket_view(vm: VMRecord, ctx: CheckContext) -> tuple[list[BackupContents], Result | None]:
    """The bucket records of the VM's claimed backups (newest first), or an early result."""
    contents = ctx.index.data.backup_contents
    if contents is None:
        return [], not_applicable(NOT_CONFIGURED)
    rows = [contents[e.backup.name] for e in claimed(vm) if e.backup.name in contents]
    if not rows:
        return [], not_applicable(
            f"No backup of VM {vm.ref} is in a BackupStorageLocation the auditor reads."
        )
    return rows, None


def _newest_read(
    vm: VMRecord, rows: list[BackupContents]
) -> tuple[BackupContents | None, Result | None]:
    """The newest backup whose bucket objects were read; ERROR if a newer one is unreadable."""
    for c in rows:
        if c.state == "error":
            return None, errored(
                f"Cannot read backup {c.backup} of VM {vm.ref} from its bucket: {c.detail}",
                backup=c.backup,
                location=c.location,
            )
        if c.state == "read":
            return c, None
    return None, not_applicable(
        f"None of the {len(rows)} backup(s) of VM {vm.ref} exists in its bucket (see RR-BKP-010)."
    )


@check(
    "RR-BKP-008",
    title="The newest backup holds every object a restore of the VM needs",
    severity=Severity.HIGH,
    rationale="Restoring a VM recreates it from the Backup's resource list: a DataVolume or PVC "
    "left out restores a VM without its disk, a missing NetworkAttachmentDefinition or "
    "instancetype/preference ControllerRevision keeps it from starting, a missing Secret or "
    "ConfigMap breaks cloud-init or sysprep.",
    remediation="Widen the Backup's namespace/resource/label filters (or enable the kubevirt "
    "Velero plugin) so the VM's DataVolumes, PVCs, ControllerRevisions, NADs and referenced "
    "Secrets/ConfigMaps are included; back up a NAD's namespace when it lives elsewhere.",
    references=(VELERO_OUTPUT, VELERO_LAYOUT, KUBEVIRT_PLUGIN),
    requires=("Backup", "DataVolume"),
    # the objects a restore needs (auditor.inventory.needs.restore_needs): the disks' PVCs and
    # DataVolumes, the NADs its networks name, the Secrets/ConfigMaps its volumes and access
    # credentials name, the pinned instancetype/preference revisions
    reads=(
        *DISK_DATA,
        "spec.template.spec.networks",
        "spec.template.spec.accessCredentials",
        "spec.instancetype",
        "status.instancetypeRef",
    ),
)
def restore_objects(vm: VMRecord, ctx: CheckContext) -> Result:
    """Compare the VM's needs (names only) with the newest read backup's resource list."""
    rows, early = _bucket_view(vm, ctx)
    if early:
        return early
    c, early = _newest_read(vm, rows)
    if early or c is None:
        return early or errored("no backup")
    if c.resources is None:
        return not_applicable(
            f"Backup {c.backup} has no resource list in its bucket (older Velero): less "
            "evidence, the objects it holds are not known."
        )
    pvcs = [p.name for p in vm.pvcs]
    needs = restore_needs(
        vm.obj, vm.namespace, vm.name, pvcs, lambda n: (vm.namespace, n) in ctx.index.datavolumes
    )
    missing = [n for n in needs if (n[0], n[1], n[2]) not in c.resources]
    ev: dict[str, Any] = {
        "backup": c.backup,
        "location": c.location,
        "needed": [f"{g} {ns}/{n}" for g, ns, n, _ in needs],
        "missing": [f"{g} {ns}/{n}" for g, ns, n, _ in missing],
    }
    if missing:
        grave = any(not soft for *_, soft in missing)
        return failed(
            f"Backup {c.backup} lacks {len(missing)} object(s) VM {vm.ref} needs to restore: "
            + ", ".join(ev["missing"][:4])
            + (", ..." if len(missing) > 4 else "")
            + ".",
            None if grave else Severity.MEDIUM,
            **ev,
        ).on(Basis.OBSERVED)
    return passed(
        f"Backup {c.backup} holds all {len(needs)} object(s) VM {vm.ref} needs to restore.", **ev
    ).on(Basis.OBSERVED)


@check(
    "RR-BKP-009",
    title="The newest backup holds the VM's current identity",
    severity=Severity.MEDIUM,
    rationale="A restore brings back the VM as it was backed up: a firmware UUID or serial, "
    "bootloader (BIOS or EFI, secure boot, persistent NVRAM), TPM, MAC, NIC model, disk bus, "
    "boot order, NetworkAttachmentDefinition or instancetype/preference revision changed since "
    "then returns as the older identity (licences, DHCP reservations, boot device, network; "
    "a Windows boot disk moved back from virtio to sata, or an EFI guest booted with BIOS, "
    "does not boot).",
    remediation="Take a new backup after identity changes (or pin the identity before the "
    "next scheduled backup) and verify the restored VM against the live one.",
    references=(VELERO_OUTPUT, KV_FIRMWARE, KUBEVIRT_PLUGIN),
    requires=("Backup",),
    # the identity compared (auditor.inventory.needs.identity_of): firmware UUID/serial,
    # bootloader, TPM, NIC MACs, models and networks, disk buses and boot order, pinned
    # revisions; not the machine type (KubeVirt writes its default into the spec), CPU, memory
    reads=(
        *DISK_DATA,
        "spec.template.spec.domain.firmware",
        "spec.template.spec.domain.devices.interfaces",
        "spec.template.spec.domain.devices.autoattachPodInterface",
        "spec.template.spec.networks",
        "spec.instancetype",
        "status.instancetypeRef",
    ),
)
def identity_drift(vm: VMRecord, ctx: CheckContext) -> Result:
    """Compare firmware, TPM, NICs, disk buses, boot order and revisions of the backed-up
    and live VM (:func:`~auditor.inventory.needs.identity_of`); FAIL medium on any drift."""
    rows, early = _bucket_view(vm, ctx)
    if early:
        return early
    c, early = _newest_read(vm, rows)
    if early or c is None:
        return early or errored("no backup")
    saved = c.vm_manifests.get((vm.namespace, vm.name))
    if saved is None:
        if not c.vm_manifests:
            return not_applicable(f"VM manifests of backup {c.backup} were not read.")
        return errored(
            f"Backup {c.backup} has no readable manifest of VM {vm.ref}: {c.detail or 'absent'}",
            backup=c.backup,
            location=c.location,
        )
    # both without preference defaults; the architecture KubeVirt gives the live VM stands
    # for a backed-up manifest that names none (written into the spec since), so that
    # arm64's defaults (EFI, virtio) are not read as amd64's there
    arch = vm.spec.firmware.architecture
    saved_spec = read_vm_spec(saved, None, architecture=arch)
    then = identity_of(saved, saved_spec, architecture=arch)
    now = identity_of(vm.obj, read_vm_spec(vm.obj, None, architecture=arch), architecture=arch)
    unread = [f"{f} {why}" for f, why in saved_spec.problems if _identity_field(f)]
    drift = [
        {"field": k, "backup": then.get(k), "live": now.get(k)}
        for k in sorted(set(then) | set(now))
        if then.get(k) != now.get(k)
    ]
    ev: dict[str, Any] = {"backup": c.backup, "location": c.location, "drift": drift}
    if unread:
        ev["unreadable_backup_fields"] = unread
    if unread and not drift:
        # a malformed field of the backed-up manifest reads as unset (a bus as KubeVirt's
        # default): "no drift" would rest on what could not be read
        return errored(
            f"Backup {c.backup} (location {c.location}) holds VirtualMachine {vm.ref} with "
            f"field(s) it cannot read: {'; '.join(unread)}; whether a restore brings back the "
            "live identity is unknown.",
            **ev,
        )
    if drift:
        fields = ", ".join(str(d["field"]) for d in drift[:4]) + (", ..." if len(drift) > 4 else "")
        return failed(
            f"Restoring VM {vm.ref} from backup {c.backup} brings back an older identity: "
            f"{fields} differ from the live VM.",
            **ev,
        ).on(Basis.OBSERVED)
    return passed(
        f"Backup {c.backup} holds VM {vm.ref} with its live identity ({len(now)} field(s)).", **ev
    ).on(Basis.OBSERVED)


#: the VM fields :func:`~auditor.inventory.needs.identity_of` reads (RR-BKP-009's ``reads``
#: of the live VM, minus the disk data)
_IDENTITY_FIELDS = (
    "spec.template.spec.domain.firmware",
    "spec.template.spec.domain.devices.disks",
    "spec.template.spec.domain.devices.interfaces",
    "spec.template.spec.domain.devices.autoattachPodInterface",
    "spec.template.spec.domain.devices.tpm",
    "spec.template.spec.networks",
    "spec.template.spec.architecture",
    "spec.instancetype",
    "spec.preference",
)


def _identity_field(path: str) -> bool:
    """Whether a problem at ``path`` of a backed-up VM touches what RR-BKP-009 compares
    (a missing or malformed ``spec.template.spec`` touches all of it)."""
    whole = (
        "spec",
        "spec.template",
        "spec.template.spec",
        "spec.template.spec.domain",
        "spec.template.spec.domain.devices",
    )
    if path in whole:
        return True
    return any(path == p or path.startswith((p + ".", p + "[")) for p in _IDENTITY_FIELDS)


@check(
    "RR-BKP-010",
    title="Every Backup the cluster lists for the VM exists in its bucket",
    severity=Severity.HIGH,
    rationale="A Backup object in the cluster is a claim; what restores is in the bucket. "
    "Objects deleted or expired by a lifecycle rule leave a Backup that cannot be restored.",
    remediation="Find who or what deleted the objects (bucket lifecycle rules shorter than "
    "the Velero TTL, manual cleanup), fix it, and take a new backup; delete the stale Backup.",
    references=(VELERO_LAYOUT, "https://velero.io/docs/main/how-velero-works/"),
    requires=("Backup",),
    reads=DISK_DATA,
)
def backups_in_bucket(vm: VMRecord, ctx: CheckContext) -> Result:
    """FAIL listing backups whose objects are gone (high when no readable one remains)."""
    rows, early = _bucket_view(vm, ctx)
    if early:
        return early
    by_state: dict[str, list[BackupContents]] = {}
    for c in rows:
        by_state.setdefault(c.state, []).append(c)
    ev = {
        "backups": [
            {"backup": c.backup, "location": c.location, "state": c.state, "detail": c.detail}
            for c in rows
        ]
    }
    missing = by_state.get("missing", [])
    if missing:
        names = ", ".join(c.backup for c in missing[:4]) + (", ..." if len(missing) > 4 else "")
        severity = None if not by_state.get("read") else Severity.MEDIUM
        return failed(
            f"{len(missing)} of {len(rows)} backup(s) of VM {vm.ref} are gone from the bucket "
            f"and are not restore points: {names}.",
            severity,
            **ev,
        ).on(Basis.OBSERVED)
    if by_state.get("error"):
        where = sorted({c.location for c in by_state["error"]})
        return errored(
            f"Cannot read {len(by_state['error'])} backup(s) of VM {vm.ref} from "
            f"BackupStorageLocation {', '.join(where)}: {by_state['error'][0].detail}",
            **ev,
        )
    return passed(f"All {len(rows)} backup(s) of VM {vm.ref} exist in their bucket.", **ev).on(
        Basis.OBSERVED
    )


@platform_check(
    "RR-PLT-005",
    title="Backup buckets keep backups immutable (versioning and Object Lock)",
    severity=Severity.HIGH,
    rationale="Without Object Lock and a default retention, anyone holding a location's "
    "credentials (or ransomware using them) can delete every backup; versioning alone lets "
    "the same credentials delete the versions.",
    remediation="Enable versioning and Object Lock with a default retention (COMPLIANCE or "
    "GOVERNANCE, at least the Velero TTL) on the bucket; on ODF/NooBaa and MinIO enable it "
    "when creating the bucket.",
    references=(
        S3_LOCK,
        MINIO_LOCK,
        "https://velero.io/docs/main/api-types/backupstoragelocation/",
    ),
)
def immutable_buckets(ctx: CheckContext, vms: list[PlatformFacts]) -> Result:
    """FAIL (info unless ``require_immutable_backups``) for a bucket without locked retention."""
    locations = ctx.index.data.storage_locations
    if locations is None:
        return not_applicable(NOT_CONFIGURED)
    rows = [
        {
            "location": s.location,
            "bucket": s.bucket,
            "versioning": s.versioning,
            "object_lock": s.object_lock,
            "lock_mode": s.lock_mode,
            "lock_days": s.lock_days,
            "detail": s.detail,
        }  # fmt: skip
        for s in locations.values()
    ]
    unknown = [s for s in locations.values() if s.object_lock is None]
    open_ = [
        s
        for s in locations.values()
        if s.object_lock is False or (s.object_lock and not s.lock_days)
    ]
    if open_:
        names = ", ".join(f"{s.location} (bucket {s.bucket})" for s in open_)
        required = ctx.thresholds.require_immutable_backups
        return failed(
            f"Backups in {names} can be deleted by anyone holding the location's credentials: "
            "no Object Lock default retention.",
            None if required else Severity.INFO,
            locations=rows,
            required=required,
        ).on(Basis.OBSERVED)
    if unknown:
        return errored(
            "Cannot tell whether the bucket of BackupStorageLocation "
            f"{', '.join(s.location for s in unknown)} is immutable: {unknown[0].detail}",
            locations=rows,
        )
    return passed(
        f"All {len(rows)} read BackupStorageLocation bucket(s) lock backups by default.",
        locations=rows,
    ).on(Basis.OBSERVED)
