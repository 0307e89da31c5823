"""What the platform checks read of each audited VM: one slim, picklable record per VM.

A platform check (``RR-PLT-*``) judges the cluster, and names the VMs a cluster-wide fault
hurts. It reads a handful of facts per VM, not the VM's whole :class:`VMRecord` (its
objects, Backup pairings and capture verdicts). Those facts are taken once per VM by
:func:`platform_facts`, so the VMs can be paired and checked in two processes
(:mod:`auditor.split`) and the platform checks still see every VM: the worker process sends
these records back, never its VMRecords.
"""

from __future__ import annotations

from dataclasses import dataclass

from auditor.inventory import ClusterIndex, VMRecord
from auditor.inventory.capture import Method, pvc_driver
from auditor.inventory.facts import usable
from auditor.inventory.protection import USABLE_PHASES
from auditor.kubevalues import dig

__all__ = ["PlatformFacts", "platform_facts"]


@dataclass(frozen=True, slots=True)
class PlatformFacts:
    """One VM as the platform checks see it.

    Attributes:
        ref: ``namespace/name``.
        on_unavailable_location: a usable Backup (Completed or PartiallyFailed) that holds
            the VM object sits on a BackupStorageLocation that is not Available (RR-PLT-001).
        schedules: positions in ``ClusterIndex.schedules`` of the Schedules whose template
            includes the VM object, in that list's order (RR-PLT-002).
        csi_drivers: the CSI driver of each of the VM's PVCs (disks and persistent state)
            whose driver is known, in disk order (RR-PLT-003).
        fs_backed_drivers: of those, the drivers of the PVCs the newest usable Backup holding
            the VM copied by file-system backup on evidence, when the VM has no
            VirtualMachineSnapshot (which would need a class): a VolumeSnapshotClass is not
            what protects them (RR-PLT-003's own remedy).
        persistent_state: the VM keeps persistent EFI NVRAM, or a persistent TPM; None when
            that is unknown: neither its own spec says so and it names a preference that was
            not read, whose ``preferredEfi``/``preferredTPM`` may (RR-PLT-006).
        state_pvc_class: ``str()`` of the ``spec.storageClassName`` of its persistent-state
            PVC when that PVC was read, else None (RR-PLT-006).
    """

    ref: str
    on_unavailable_location: bool
    schedules: tuple[int, ...]
    csi_drivers: tuple[str, ...]
    persistent_state: bool | None
    state_pvc_class: str | None
    fs_backed_drivers: tuple[str, ...] = ()


def platform_facts(vm: VMRecord, index: ClusterIndex) -> PlatformFacts:
    """The :class:`PlatformFacts` of a paired VM (``vm`` from the same ``index``)."""
    positions = index.memo(
        "schedule_positions", lambda: {id(s): i for i, s in enumerate(index.schedules)}
    )
    state = vm.state_pvc
    good = usable(vm)
    fs_copied = (
        {c.pvc for c in good[0].pvcs if c.captured and c.method is Method.FS_BACKUP}
        if good and not vm.vm_snapshots
        else set()
    )
    drivers, fs_backed = [], []
    for p in vm.pvcs:
        if p.obj is not None:
            driver = pvc_driver(index, p.obj)
            if driver:
                drivers.append(driver)
                if p.name in fs_copied:
                    fs_backed.append(driver)
    return PlatformFacts(
        ref=vm.ref,
        on_unavailable_location=any(
            e.holds_object and e.backup.phase in USABLE_PHASES and e.location_ok is False
            for e in vm.backups
        ),
        schedules=tuple(positions[id(s)] for s in vm.schedules),
        csi_drivers=tuple(drivers),
        persistent_state=_persistent_state(vm),
        state_pvc_class=str(dig(state.obj, "spec", "storageClassName"))
        if state is not None and state.obj is not None
        else None,
        fs_backed_drivers=tuple(fs_backed),
    )


def _persistent_state(vm: VMRecord) -> bool | None:
    """Whether ``vm`` keeps persistent EFI NVRAM or TPM state; None when its preference was
    not read and its own spec leaves the bootloader or the TPM to it
    (auditor.inventory.vmspec: bootloader ``unknown`` without a source, ``tpm`` None)."""
    fw = vm.spec.firmware
    if fw.efi_persistent or (fw.tpm and fw.tpm_persistent):
        return True
    if vm.spec.preference_found is False and (
        fw.tpm is None or "bootloader" not in fw.resolved_from
    ):
        return None
    return False
