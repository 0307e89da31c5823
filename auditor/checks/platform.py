"""PLT checks: cluster-wide conditions behind many VM gaps. Signature ``(ctx, vms)``, ``vms``
the :class:`~auditor.checks.fleetview.PlatformFacts` of every audited VM."""

from __future__ import annotations

from auditor.checks.fleetview import PlatformFacts
from auditor.checks.registry import (
    CheckContext,
    Result,
    errored,
    failed,
    not_applicable,
    passed,
    platform_check,
)
from auditor.inventory.index import ScheduleView
from auditor.inventory.locations import location_unverified
from auditor.kubevalues import dig, format_time
from auditor.models import Severity
from auditor.sources.base import KindState

BSL_DOC = "https://velero.io/docs/main/api-types/backupstoragelocation/"
SCHEDULE_DOC = "https://velero.io/docs/main/api-types/schedule/"
CSI_DOC = "https://velero.io/docs/main/csi/"
PLUGIN_DOC = "https://github.com/kubevirt/kubevirt-velero-plugin"
READ_ONLY_DOC = "https://velero.io/docs/main/disaster-case/"


@platform_check(
    "RR-PLT-001",
    title="A backup system is installed with an available BackupStorageLocation",
    severity=Severity.CRITICAL,
    rationale="Without Velero/OADP, or with no reachable BackupStorageLocation, no VM has an "
    "off-cluster copy and new backups fail.",
    remediation="Install OADP/Velero and configure a BackupStorageLocation; fix its "
    "credentials or endpoint until its phase is Available.",
    references=(BSL_DOC,),
    requires=("Backup", "BackupStorageLocation"),
)
def backup_system(ctx: CheckContext, vms: list[PlatformFacts]) -> Result:
    """FAIL (critical) when Velero's API is not installed or no BSL is Available.

    The finding names every VM whose backups sit on a location that is not Available: their
    VM-level backup checks (RR-BKP-001/002) do not count those backups as restore points.
    """
    data = ctx.index.data
    if data.state("Backup") is KindState.NOT_INSTALLED:
        return failed("No backup system is installed: the velero.io API group is not served.")
    locations = data.of("BackupStorageLocation")
    rows = [
        {
            "bsl": f"{dig(b, 'metadata', 'namespace')}/{dig(b, 'metadata', 'name')}",
            "phase": dig(b, "status", "phase"),
            "last_validated": dig(b, "status", "lastValidationTime"),
        }
        for b in locations
    ]
    hurt = sorted({vm.ref for vm in vms if vm.on_unavailable_location})
    stale = {  # Available long ago, or never validated (no phase)
        f"{ns}/{name}": why
        for b in locations
        if isinstance(ns := dig(b, "metadata", "namespace"), str)
        and isinstance(name := dig(b, "metadata", "name"), str)
        and (why := location_unverified(ctx.index, ns, name, ctx.at)) is not None
    }
    available = [r for r in rows if r["phase"] == "Available" and r["bsl"] not in stale]
    if not available and stale:
        # Available as last validated long ago, or never validated: whether any location
        # works now is unknown
        return errored(
            f"No BackupStorageLocation is known to be Available now: {'; '.join(stale.values())}",
            locations=rows,
            stale_locations=sorted(stale),
        )
    if not available:
        return failed(
            f"None of the {len(rows)} BackupStorageLocation(s) is Available: no backup can be "
            f"restored or written; {len(hurt)} VM(s) lose their restore points.",
            locations=rows,
            affected_vms=hurt,
        )
    if hurt:
        return failed(
            f"{len(available)} BackupStorageLocation(s) Available, but the backups of "
            f"{len(hurt)} VM(s) sit on a location that is not.",
            Severity.HIGH,
            locations=rows,
            affected_vms=hurt,
        )
    if stale:
        return passed(
            f"{len(available)} BackupStorageLocation(s) Available; "
            f"{', '.join(sorted(stale))} not known to be Available now (validated long ago, "
            "or never): the backups there are no evidenced restore points.",
            locations=rows,
            stale_locations=sorted(stale),
        )
    return passed(f"{len(available)} BackupStorageLocation(s) Available.", locations=rows)


@platform_check(
    "RR-PLT-002",
    title="No Velero Schedule that covers VMs is paused or writes to a read-only location",
    severity=Severity.MEDIUM,
    rationale="A paused Schedule, or one whose BackupStorageLocation is in ReadOnly mode (left "
    "so after a restore), silently stops producing restore points while older backups "
    "expire one by one.",
    remediation="Unpause the Schedule (velero schedule unpause NAME) or delete it and cover the "
    "VMs elsewhere; set the location's spec.accessMode back to ReadWrite once a restore is done.",
    references=(SCHEDULE_DOC, READ_ONLY_DOC),
    requires=("Schedule",),
)
def schedules_active(ctx: CheckContext, vms: list[PlatformFacts]) -> Result:
    """FAIL listing the Schedules covering at least one VM that are paused or failed
    validation (``status.phase`` FailedValidation: Velero's schedule controller skips any
    Schedule that is not Enabled, pkg/controller/schedule_controller.go), or whose
    template's storage location (the namespace's default one when unset) has
    ``spec.accessMode: ReadOnly``: Velero creates no backup there
    (https://velero.io/docs/main/disaster-case/)."""
    ix = ctx.index
    schedules = ix.schedules
    # by namespace and name: two Velero installs may each have a Schedule of one name
    covering = {
        (schedules[i].namespace, schedules[i].name): schedules[i]
        for vm in vms
        for i in vm.schedules
    }
    if not covering:
        return not_applicable("No Velero Schedule covers any VM.")
    paused = sorted(
        s.name + ("" if s.paused else " (status.phase FailedValidation)")
        for s in covering.values()
        if s.stopped
    )

    def read_only(s: ScheduleView) -> str | None:
        where = s.storage_location or ix.default_locations.get(s.namespace)
        return where if where and (s.namespace, where) in ix.read_only_locations else None

    frozen = sorted(
        f"{s.name} (BackupStorageLocation {where})"
        for s in covering.values()
        if not s.stopped and (where := read_only(s))
    )
    rows = [
        {
            "schedule": f"{s.namespace}/{s.name}",
            "paused": s.paused,
            "phase": s.phase or None,
            "cron": s.cron,
            "last_backup": format_time(s.last_backup),
            **({"read_only_location": where} if (where := read_only(s)) else {}),
        }
        for _, s in sorted(covering.items())
    ]
    unknown = sorted(
        f"{s.name} (BackupStorageLocation {where or 'default'})"
        for s in covering.values()
        if not s.stopped
        and not read_only(s)
        and (
            (where := s.storage_location or ix.default_locations.get(s.namespace))
            and (s.namespace, where) in ix.unknown_mode_locations
            or (s.storage_location is None and s.namespace in ix.unknown_defaults)
        )
    )
    if unknown and not paused and not frozen:
        return errored(
            f"Schedule(s) {', '.join(unknown)} covering VMs write to a location whose "
            "spec.accessMode (or, for the default one, which location is the default) cannot "
            "be read: whether Velero creates backups there is unknown.",
            schedules=rows,
        )
    if paused or frozen:
        parts = (
            [f"Schedule(s) {', '.join(paused)} covering VMs are paused or failed validation."]
            if paused
            else []
        )
        if frozen:
            parts.append(
                f"Schedule(s) {', '.join(frozen)} covering VMs write to a location in ReadOnly "
                "mode: Velero creates no backup there."
            )
        return failed(" ".join(parts), schedules=rows)
    return passed(f"All {len(rows)} Schedule(s) covering VMs are active.", schedules=rows)


@platform_check(
    "RR-PLT-003",
    title="Every CSI driver holding VM disks has a VolumeSnapshotClass",
    severity=Severity.HIGH,
    rationale="Velero's CSI backups and VirtualMachineSnapshots need a VolumeSnapshotClass for "
    "the volume's driver; without one those disks are silently left out (PartiallyFailed).",
    remediation="Create a VolumeSnapshotClass for the driver (label it "
    "velero.io/csi-volumesnapshot-class=true), or move the disks to storage whose driver can "
    "snapshot: a file-system backup of a VM disk is not restored while the kubevirt plugin runs.",
    references=(CSI_DOC, "https://kubernetes.io/docs/concepts/storage/volume-snapshot-classes/"),
    requires=("VolumeSnapshotClass", "PersistentVolumeClaim", "StorageClass", "VirtualMachine"),
)
def snapshot_classes(ctx: CheckContext, vms: list[PlatformFacts]) -> Result:
    """FAIL naming each driver used by VM PVCs with no VolumeSnapshotClass.

    A driver none of whose VM PVCs needs a snapshot is not missing one: every such PVC was
    copied by file-system backup in its VM's newest usable Backup, on evidence, and the VM has
    no VirtualMachineSnapshot (the check's own remedy; fs-backup needs no class:
    https://velero.io/docs/main/file-system-backup/). Those drivers are listed as
    ``covered_by_fs_backup``.
    """
    used: dict[str, set[str]] = {}
    needing: set[str] = set()
    for vm in vms:
        fs_left = list(vm.fs_backed_drivers)
        for driver in vm.csi_drivers:
            used.setdefault(driver, set()).add(vm.ref)
            if driver in fs_left:
                fs_left.remove(driver)  # that PVC was copied by file-system backup
            else:
                needing.add(driver)
    if not used:
        return not_applicable("No VM disk has a known CSI driver.")
    classless = sorted(d for d in used if d not in ctx.index.snapshot_class_drivers)
    missing = [d for d in classless if d in needing]
    ev: dict[str, object] = {
        "drivers": {d: sorted(v) for d, v in sorted(used.items())},
        "missing": missing,
    }
    if covered := [d for d in classless if d not in needing]:
        ev["covered_by_fs_backup"] = covered
    if missing:
        return failed(f"No VolumeSnapshotClass exists for driver(s) {', '.join(missing)}.", **ev)
    if covered:
        return passed(
            f"Every CSI driver used by VM disks has a VolumeSnapshotClass, except "
            f"{', '.join(covered)}, whose VM disks are copied by file-system backup (on "
            "evidence, no VirtualMachineSnapshot).",
            **ev,
        )
    return passed(
        f"All {len(used)} CSI driver(s) used by VM disks have a VolumeSnapshotClass.", **ev
    )


@platform_check(
    "RR-PLT-004",
    title="The kubevirt Velero plugin is enabled",
    severity=Severity.MEDIUM,
    rationale="The kubevirt plugin adds a VM's DataVolumes, PVCs and persistent-state PVC to a "
    "backup that includes the VM, and quiesces running guests; without it label-selected "
    "backups skip unlabelled volumes.",
    remediation="Add kubevirt to DataProtectionApplication spec.configuration.velero."
    "defaultPlugins (or install the plugin with velero plugin add).",
    references=(
        PLUGIN_DOC,
        "https://docs.openshift.com/container-platform/latest/backup_and_restore/application_backup_and_restore/installing/installing-oadp-kubevirt.html",
    ),
    requires=("DataProtectionApplication",),
)
def kubevirt_plugin(ctx: CheckContext, vms: list[PlatformFacts]) -> Result:
    """Read DataProtectionApplications' plugin lists; N/A when none exists. PASS only when
    every one that lists its plugins enables kubevirt (OADP may run a Velero per namespace):
    ``kubevirt`` in ``defaultPlugins``, or a ``customPlugins`` entry whose image is the
    kubevirt-velero-plugin's."""
    dpas = ctx.index.data.of("DataProtectionApplication")
    if not dpas:
        return not_applicable("No DataProtectionApplication found; plugin list unknown.")
    rows = [
        {
            "dpa": f"{dig(d, 'metadata', 'namespace')}/{dig(d, 'metadata', 'name')}",
            "plugins": dig(d, "spec", "configuration", "velero", "defaultPlugins"),
            **(
                {"custom_plugins": custom}
                if (custom := dig(d, "spec", "configuration", "velero", "customPlugins"))
                is not None
                else {}
            ),
        }
        for d in dpas
    ]
    unread = (
        "DataProtectionApplication" in ctx.index.partial
        or ctx.index.data.state("DataProtectionApplication") is KindState.PARTIAL
    )
    if ctx.index.kubevirt_plugin and not unread:
        return passed("The kubevirt Velero plugin is enabled.", dpas=rows)
    without = sorted(ns for ns, on in ctx.index.kubevirt_plugins.items() if on is False)
    unknown = sorted(ns for ns, on in ctx.index.kubevirt_plugins.items() if on is None)
    if unknown and not without:
        return errored(
            "The plugin list of the DataProtectionApplication(s) in namespace(s) "
            f"{', '.join(unknown)} holds entries that are no plugin names: whether they enable "
            "the kubevirt Velero plugin is unknown.",
            dpas=rows,
        )
    if unread and not without:
        return errored(
            "A DataProtectionApplication could not be read whole (named in the collection "
            "problems): whether every Velero install runs the kubevirt plugin is unknown.",
            dpas=rows,
        )
    if without and len(without) < len(ctx.index.kubevirt_plugins):
        # each Velero install loads the plugins of the DPA in its own namespace only
        return failed(
            "The DataProtectionApplication(s) in namespace(s) "
            f"{', '.join(without)} do not enable the kubevirt Velero plugin: the Backups "
            "of those Velero installs run without it.",
            dpas=rows,
        )
    return failed("No DataProtectionApplication enables the kubevirt Velero plugin.", dpas=rows)
