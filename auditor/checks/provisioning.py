"""STG-003: can each of the VM's PVCs be provisioned again when it is restored?

Velero recreates a PVC with its ``spec.storageClassName`` unless the ConfigMap in Velero's
namespace labelled ``velero.io/plugin-config`` and ``velero.io/change-storage-class:
RestoreItemAction`` maps the class to another (``data: {old: new}``); two such ConfigMaps make
Velero fail the restore of every PVC. A class that exists neither way leaves the PVC Pending and the
VM without its disk. A mapped class must also offer the PVC's volumeMode and access modes: a
Block disk restored from a snapshot onto a Filesystem-only class fails, and a live-migratable
VM needs ReadWriteMany. That a class offers a mode is taken from evidence: a Bound PVC of that
class with that mode (the class provisioned it). A disk restored from a CSI snapshot is
provisioned by the driver that cut the snapshot: a class whose provisioner is now another
driver cannot restore it (the PVC's ``dataSource`` names a VolumeSnapshot of the old driver,
https://kubernetes.io/docs/concepts/storage/volume-snapshots/#provisioning-volumes-from-snapshots);
the data mover and file-system backup copy the data into whatever the class provisions.
A file-system backup's claim comes back with its ``spec.dataSourceRef``: a source that is gone
(a CDI populator's VolumeImportSource, deleted once its DataVolume succeeded) leaves it Pending
(:mod:`auditor.inventory.datasource`).
"""

from __future__ import annotations

from typing import Any

from auditor.checks.registry import (
    DISK_DATA,
    CheckContext,
    Result,
    check,
    errored,
    failed,
    not_applicable,
    passed,
)
from auditor.inventory import VMRecord
from auditor.inventory.capture import Method, pvc_facts
from auditor.inventory.datasource import fs_restore_source_gap
from auditor.inventory.facts import restore_points
from auditor.inventory.protection import PvcRef
from auditor.inventory.scmap import ClassMappings, class_mappings, default_storage_class
from auditor.kubevalues import dig
from auditor.models import Basis, Severity
from auditor.sources.base import KindState

VELERO_CHANGE_SC = "https://velero.io/docs/main/restore-reference/#changing-pvpvc-storage-classes"
VELERO_CHANGE_SC_SRC = "https://github.com/vmware-tanzu/velero/blob/main/pkg/restore/actions/change_storageclass_action.go"
KV_LIVE_MIGRATION = "https://kubevirt.io/user-guide/compute/live_migration/#limitations"
VELERO_PVC_RESTORE_SRC = (
    "https://github.com/vmware-tanzu/velero/blob/main/pkg/restore/actions/csi/pvc_action.go"
)
CDI_POPULATOR_SRC = "https://github.com/kubevirt/containerized-data-importer/blob/main/pkg/controller/populators/populator-base.go"
CDI_IMPORT_CLEANUP_SRC = "https://github.com/kubevirt/containerized-data-importer/blob/main/pkg/controller/datavolume/import-controller.go"


def storage_class_mapping(ctx: CheckContext) -> dict[str, str]:
    """Velero's class mapping: old -> new from the plugin ConfigMap in Velero's namespace(s).

    Velero's namespace is where its BackupStorageLocations and Backups live. Computed
    once per audit (it reads every Backup), then shared by every VM's check.
    """
    return _mappings(ctx).merged()


def storage_class_mapping_clashes(ctx: CheckContext) -> dict[str, list[str]]:
    """Velero namespace -> its change-storage-class ConfigMaps, where more than one matches
    Velero's selector: Velero then fails the restore of every PVC and PV ("found more than
    one ConfigMap matching label selector", pkg/plugin/framework GetPluginConfig)."""
    return _mappings(ctx).clashes


def _mappings(ctx: CheckContext) -> ClassMappings:
    return ctx.index.memo("storage_class_mappings", lambda: class_mappings(ctx.index.data))


def _offers(ctx: CheckContext, cls: str, mode: str, access: set[str]) -> bool:
    """A Bound PVC of class ``cls`` with ``mode`` and every access mode in ``access`` exists.

    Answered once per class, mode and access modes and index (a storage-class mapping that
    changes the class of every VM's disks would otherwise scan every PVC per mapped PVC).
    """

    def scan() -> bool:
        for pvc in ctx.index.pvcs.values():
            spec = pvc.get("spec") or {}
            if spec.get("storageClassName") != cls or dig(pvc, "status", "phase") != "Bound":
                continue
            if (spec.get("volumeMode") or "Filesystem") != mode:
                continue
            have = spec.get("accessModes")
            if isinstance(have, list) and access <= {str(a) for a in have}:
                return True
        return False

    return ctx.index.memo(f"offers:{cls!r}:{mode!r}:{sorted(access)!r}", scan)


#: The methods whose restore provisions the claim anew instead of restoring its PV.
_REPROVISIONED = (Method.CSI_SNAPSHOT, Method.CSI_DATA_MOVER, Method.FS_BACKUP)


def _default_class(ctx: CheckContext) -> str | None:
    """The StorageClass a claim without ``storageClassName`` gets on restore
    (:func:`auditor.inventory.scmap.default_storage_class`); None when none is marked."""
    return default_storage_class(ctx.index)


def _live_migratable(vm: VMRecord) -> bool:
    conds = dig(vm.vmi, "status", "conditions") if vm.vmi else None
    for c in conds if isinstance(conds, list) else []:
        if isinstance(c, dict) and c.get("type") == "LiveMigratable":
            return c.get("status") == "True"
    strategy = dig(vm.obj, "spec", "template", "spec", "evictionStrategy")
    return strategy in ("LiveMigrate", "LiveMigrateIfPossible")


def _judge(
    ctx: CheckContext,
    p: PvcRef,
    mapping: dict[str, str],
    cms_known: bool,
    rwx: bool,
    method: Method | None,
) -> dict[str, Any]:
    spec = (p.obj or {}).get("spec") or {}
    cls = spec.get("storageClassName")
    row: dict[str, Any] = {"pvc": p.name, "role": p.role, "storage_class": cls}
    if method is Method.FS_BACKUP and p.obj is not None:
        # the claim comes back with its data source, which must exist (rt37)
        gap = fs_restore_source_gap(ctx.index, p.obj)
        if gap is not None:
            row.update(
                verdict=gap.state,
                reason=f"restored from a file-system backup, {gap.reason}",
                restore_method=method.value,
                inferred=gap.inferred,
            )
            return row
    if not isinstance(cls, str) or not cls:
        if method not in _REPROVISIONED:
            row.update(verdict="ok", reason="no class: Velero restores its PV and binds it")
            return row
        # Velero does not restore the PV of a volume it copied by snapshot, data mover or
        # file-system backup: it strips the claim's volumeName and the claim is provisioned
        # anew (velero pkg/restore/restore.go, "Dynamically re-provisioning persistent
        # volume"). A claim with storageClassName "" is never provisioned; one with none
        # gets the default StorageClass when the cluster has one (DefaultStorageClass
        # admission), else it waits for a class-less PV that nothing creates.
        if cls == "":
            row.update(
                verdict="missing",
                reason=f'storageClassName is "" (static binding only), but a disk copied by '
                f"{method.value if method else 'its method'} is provisioned anew on restore",
            )
            return row
        default = _default_class(ctx)
        if default is None:
            if ctx.index.data.known("StorageClass"):
                row.update(
                    verdict="missing",
                    reason="no storageClassName and no default StorageClass: the claim Velero "
                    "provisions anew stays Pending",
                )
            else:
                row.update(verdict="unknown", reason="no storageClassName; StorageClasses unread")
            return row
        cls = default
        row["default_class"] = default
    target = mapping.get(cls, cls)
    row["restore_class"] = target
    if target not in ctx.index.storage_classes:
        if target == cls and not cms_known:
            row.update(verdict="unknown", reason=f"class {cls} is gone; mapping ConfigMaps unread")
        else:
            via = f" (mapped from {cls})" if target != cls else ""
            row.update(verdict="missing", reason=f"StorageClass {target}{via} does not exist")
        return row
    driver = pvc_facts(ctx.index, p.obj).csi_driver  # None: no PV, or not a CSI volume
    provisioner = ctx.index.storage_classes[target].get("provisioner")
    if driver and isinstance(provisioner, str) and provisioner != driver:
        row.update(
            volume_driver=driver,
            provisioner=provisioner,
            restore_method=method.value if method is not None else None,
        )
        if method in (Method.CSI_DATA_MOVER, Method.FS_BACKUP):
            pass  # the data is copied into whatever the class provisions
        elif method is Method.CSI_SNAPSHOT:
            row.update(
                verdict="missing",
                reason=f"StorageClass {target} provisions with {provisioner}, but the disk's "
                f"CSI snapshots are of driver {driver}, which alone can restore them",
            )
            return row
        else:
            row.update(
                verdict="unproven",
                reason=f"StorageClass {target} provisions with {provisioner}, not the volume's "
                f"driver {driver}, and no restore point shows how the disk was copied",
            )
            return row
    if target == cls:
        row.update(verdict="ok", reason=f"StorageClass {cls} exists")
        return row
    mode = str(spec.get("volumeMode") or "Filesystem")
    access = {str(a) for a in spec.get("accessModes") or [] if isinstance(a, str)}
    if rwx:
        access.add("ReadWriteMany")
    if _offers(ctx, target, mode, access):
        row.update(verdict="ok", reason=f"{target} holds a Bound {mode} {sorted(access)} PVC")
    else:
        row.update(
            verdict="unproven",
            reason=f"no Bound {mode} {sorted(access)} PVC shows that {target} offers them",
        )
    return row


@check(
    "RR-STG-003",
    title="Every PVC of the VM can be provisioned on restore",
    severity=Severity.HIGH,
    rationale="Velero recreates each PVC on its StorageClass, or on the class a "
    "change-storage-class ConfigMap maps it to. A class that no longer exists leaves the "
    "restored PVC Pending and the VM without its disk; a mapped class that lacks the disk's "
    "volumeMode or ReadWriteMany (needed for live migration) fails or degrades the restore. "
    "A claim restored from a file-system backup keeps its dataSourceRef, and stays Pending "
    "when that source (a CDI VolumeImportSource, deleted once its DataVolume succeeded; a "
    "VolumeSnapshot or PVC) is gone.",
    remediation="Recreate the StorageClass, or map it in one ConfigMap in Velero's namespace "
    "labelled velero.io/plugin-config and velero.io/change-storage-class: RestoreItemAction to a "
    "class offering the same volumeMode and access modes.",
    references=(
        VELERO_CHANGE_SC,
        VELERO_CHANGE_SC_SRC,
        KV_LIVE_MIGRATION,
        VELERO_PVC_RESTORE_SRC,
        CDI_POPULATOR_SRC,
        CDI_IMPORT_CLEANUP_SRC,
    ),
    requires=("StorageClass", "PersistentVolumeClaim"),
    reads=(*DISK_DATA, "spec.template.spec.evictionStrategy"),
)
def restore_provisioning(vm: VMRecord, ctx: CheckContext) -> Result:
    """FAIL high for a missing class, or for a data source a file-system backup's claim
    does not find again (inferred for a CDI populator source); ERROR when a gone class's
    mapping, a mapped class's modes or such a source cannot be shown; N/A without PVCs."""
    pvcs = [p for p in vm.pvcs if p.obj is not None]
    if not pvcs:
        return not_applicable(f"VM {vm.ref} has no PVCs to provision.")
    cms_known = ctx.index.data.state("ConfigMap") is KindState.COMPLETE
    mapping = storage_class_mapping(ctx)
    rwx = _live_migratable(vm)
    good = restore_points(vm)
    # how the newest restore point copied each disk (the copy a restore would read)
    methods = {c.pvc: c.method for c in good[0].pvcs} if good else {}
    rows = [_judge(ctx, p, mapping, cms_known, rwx, methods.get(p.name)) for p in pvcs]
    ev = {"pvcs": rows, "mapping": dict(mapping), "mapping_read": cms_known, "live_migratable": rwx}
    clashes = storage_class_mapping_clashes(ctx)
    if clashes:
        ev["mapping_clashes"] = clashes
        what = "; ".join(f"{', '.join(names)} in {ns}" for ns, names in clashes.items())
        return failed(
            f"Velero cannot restore VM {vm.ref}'s PVCs: more than one change-storage-class "
            f"ConfigMap matches its selector ({what}), and it then fails every PVC and PV of a "
            "restore.",
            **ev,
        ).on(Basis.OBSERVED)
    missing = [r for r in rows if r["verdict"] == "missing"]
    if missing:
        what = "; ".join(f"{r['pvc']}: {r['reason']}" for r in missing)
        basis = Basis.INFERRED if all(r.get("inferred") for r in missing) else Basis.OBSERVED
        return failed(f"VM {vm.ref} cannot be provisioned on restore: {what}.", **ev).on(basis)
    open_ = [r for r in rows if r["verdict"] in ("unknown", "unproven")]
    if open_:
        what = "; ".join(f"{r['pvc']}: {r['reason']}" for r in open_)
        return errored(f"Cannot show that VM {vm.ref}'s PVCs provision on restore: {what}.", **ev)
    return passed(f"Every PVC of VM {vm.ref} has a StorageClass to restore onto.", **ev).on(
        Basis.OBSERVED
    )
