"""FW, DSK and NIC checks: will the restored guest see the same machine?"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from auditor.checks.kvconfig import (
    KV_MACHINE_CONFIG_SRC,
    KV_MACHINE_DEFAULT_SRC,
    default_machine_type,
    gate_blocks_start,
    gate_unknown,
)
from auditor.checks.registry import (
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
from auditor.inventory.fields import boot_order_ok, firmware_uuid
from auditor.inventory.identities import legacy_firmware_uuid
from auditor.inventory.index import meta_labels
from auditor.inventory.macs import mac_fault
from auditor.inventory.records import VirtualMachineInstanceRecord
from auditor.kubevalues import dig
from auditor.models import Basis, Severity, Status

KV_FIRMWARE = "https://kubevirt.io/user-guide/compute/virtual_hardware/#biosuefi"
KV_PERSISTENT = "https://kubevirt.io/user-guide/storage/persistent_tpm_and_uefi_state/"
KV_DISKS = "https://kubevirt.io/user-guide/storage/disks_and_volumes/"
KV_HOTPLUG = "https://kubevirt.io/user-guide/storage/hotplug_volumes/"
KV_ARM64_BOOT = "https://github.com/kubevirt/kubevirt/blob/main/pkg/virt-api/webhooks/arm64.go"
KV_ARM64_DEFAULTS = "https://github.com/kubevirt/kubevirt/blob/main/pkg/defaults/arm64.go"
VIRTIO_WIN_BOOT = "https://github.com/virtio-win/virtio-win-guest-tools-installer/issues/61"
KV_IFACES = "https://kubevirt.io/user-guide/network/interfaces_and_networks/"
KUBEMACPOOL = "https://github.com/k8snetworkplumbingwg/kubemacpool"


def _preference_gap(vm: VMRecord) -> Result | None:
    """ERROR when the VM names a preference that could not be found (values unknown)."""
    if vm.spec.preference_found is False:
        pref = vm.spec.preference or {}
        return errored(
            f"VM {vm.ref} uses {pref.get('kind')} {pref.get('name')}, which was not found; "
            "firmware and device defaults it sets are unknown.",
            preference=pref,
        )
    return None


#: RR-FW-001's FAIL for a Windows guest: activation and licensing follow the SMBIOS UUID,
#: so a UUID that a restore may change (or one the guest has not run with) is high there
_UUID_ON_WINDOWS = Severity.HIGH


@check(
    "RR-FW-001",
    title="The firmware UUID is pinned in the VM spec, so every restore keeps it",
    severity=Severity.MEDIUM,
    windows_severity=_UUID_ON_WINDOWS,
    rationale="Without spec.template.spec.domain.firmware.uuid KubeVirt derives the SMBIOS UUID "
    "from the VM name alone (uuid5; up to KubeVirt 1.5 at every start, from 1.6 written once "
    "into the spec): a restore under the same name gets the same UUID, a restore, clone or "
    "migration under another name a new one, and a VMI whose UUID is not the name-derived one "
    "loses it on any restore. Windows activation and licensing follow the SMBIOS UUID, so on "
    "Windows a missing UUID is high. KubeVirt never generates a serial: an unset serial stays "
    "unset after a restore, which keeps it stable, but a serial (or uuid) changed in the spec "
    "while the VM runs is one the guest has not been running with.",
    remediation="Copy the running VMI's firmware.uuid into the VM spec "
    "(spec.template.spec.domain.firmware.uuid), e.g. oc patch vm NAME -n NAMESPACE --type merge "
    "-p '{spec: {template: {spec: {domain: {firmware: {uuid: UUID}}}}}}'.",
    references=(
        KV_FIRMWARE,
        "https://github.com/kubevirt/kubevirt/blob/main/pkg/virt-controller/watch/vm/firmware.go",
        "https://github.com/kubevirt/kubevirt/pull/14130",
        "https://github.com/kubevirt/kubevirt/issues/2398",
    ),
    # the firmware uuid and serial, and what tells a Windows guest: Hyper-V features, the
    # template annotations and the preference, resolved through the ControllerRevision the
    # VM is pinned to (status.preferenceRef), whose os-type label or name decides the
    # severity
    reads=(
        "spec.template.spec.domain.firmware",
        "spec.template.spec.domain.features",
        "spec.template.metadata",
        "spec.preference",
        "status.preferenceRef",
    ),
)
def firmware_pinned(vm: VMRecord, ctx: CheckContext) -> Result:
    """FAIL medium for a missing uuid (high on Windows), or for a pinned uuid or a serial
    other than the one the running VMI uses; an unset serial alone passes.

    A preference sets no firmware uuid or serial: its firmware preferences are
    preferredUseBios, preferredUseBiosSerial, preferredEfi and the deprecated preferredUseEfi
    and preferredUseSecureBoot (kubevirt staging/src/kubevirt.io/api/instancetype/v1beta1
    FirmwarePreferences; pkg/instancetype/preference/apply/firmware.go
    applyFirmwarePreferences touches the bootloader only), so only the spec pins the
    uuid; the preference (the pinned revision of status.preferenceRef) tells Windows.
    """
    fw = vm.spec.firmware
    vmi = ctx.index.vmi_records.get((vm.namespace, vm.name))
    runtime = vmi.firmware_uuid if vmi else None
    derived = legacy_firmware_uuid(vm.name)
    ev = {
        "uuid": fw.uuid,
        "serial": fw.serial,
        "os": vm.spec.os,
        "vmi_runtime_uuid": runtime,
        "name_derived_uuid": derived,
    }
    serial = (
        f"serial {fw.serial}"
        if fw.serial
        else "no serial (KubeVirt never generates one, so it stays unset)"
    )
    severity = _UUID_ON_WINDOWS if vm.spec.os == "windows" else Severity.MEDIUM
    unread = [
        i
        for i in (vmi.issues if vmi else ())
        if i.field == "spec.domain" or i.field.startswith("spec.domain.firmware")
    ]
    if fw.uuid is not None and unread:
        # A VMI runs, but which uuid it runs with cannot be read: the pin may be of an
        # identity the guest does not have (the FAIL below, high on Windows), so this is no
        # PASS, and no lighter than that FAIL (fz39: a Windows VM's NOT_READY became an
        # UNKNOWN of a medium ERROR, ranked AT_RISK at worst)
        return Result(
            Status.ERROR,
            f"VM {vm.ref} pins firmware uuid {fw.uuid}, but its running VMI's field "
            f"{unread[0].field} {unread[0].reason}: whether the guest runs with that uuid is "
            "unknown.",
            ev,
            severity,
        )
    drift = _serial_drift(fw.serial, vmi)
    if vmi is not None:
        ev["vmi_runtime_serial"] = vmi.firmware_serial
    if fw.uuid is not None and runtime and firmware_uuid(runtime) != firmware_uuid(fw.uuid):
        # The spec was changed while the VM ran (the VMI keeps what it started with): the
        # guest knows itself by the running uuid, and a restore (or the next restart) boots
        # it with the spec's. The pin is of an identity the guest does not have.
        return failed(
            f"VM {vm.ref} pins firmware uuid {fw.uuid}, but its running VMI uses {runtime}"
            f"{'; ' + drift if drift else ''}: a restore boots the guest with a uuid it has "
            "not been running with.",
            severity,
            mismatched=["uuid", "serial"] if drift else ["uuid"],
            **ev,
        )
    if fw.uuid is not None and drift:
        return failed(
            f"VM {vm.ref} pins firmware uuid {fw.uuid}, but {drift}: a restore boots the "
            "guest with a serial it has not been running with.",
            severity,
            mismatched=["serial"],
            **ev,
        )
    if fw.uuid is not None:
        return passed(f"VM {vm.ref} pins firmware uuid {fw.uuid}; {serial}.", **ev)
    if runtime and firmware_uuid(runtime) != derived:
        hint = (
            f" and its running VMI uses {runtime}, not the name-derived {derived}: any restore "
            "changes it"
        )
    else:
        hint = (
            f"; KubeVirt derives {derived} from the name, so only a restore under the same "
            "name keeps it"
        )
    return failed(
        f"VM {vm.ref} does not pin its firmware uuid in its spec{hint}"
        f"{'; ' + drift if drift else ''}.",
        severity,
        missing=["uuid"],
        **({"mismatched": ["serial"]} if drift else {}),
        **ev,
    )


def _serial_drift(spec: str | None, vmi: VirtualMachineInstanceRecord | None) -> str | None:
    """Say how the running VMI's SMBIOS serial differs from the VM spec's, or None.

    KubeVirt writes ``firmware.serial`` into the domain's SMBIOS system entries only when it
    is set and never generates one (kubevirt pkg/virt-launcher/virtwrap/converter/compute/
    sysinfo.go), and preferences do not set it: a VMI serial other than the spec's means the
    spec changed while the VM ran, and a restore (or restart) gives the guest the spec's
    serial, which licence and asset software key on (red team rt22: a serial dropped from the
    spec passed RR-FW-001 while the guest ran with one). A VMI whose serial cannot be read is
    not compared here (its issue is named and the uuid branch above turns ERROR).
    """
    if vmi is None or vmi.phase in ("Succeeded", "Failed"):
        return None
    if any(i.field == "spec.domain.firmware.serial" for i in vmi.issues):
        return None
    running = vmi.firmware_serial
    if running == spec:
        return None
    return f"its running VMI uses serial {running or '(none)'} where the spec has {spec or 'none'}"


#: RR-FW-002's FAIL for a volatile (or unkept) TPM on a Windows guest: BitLocker seals its
#: keys to the vTPM, so a restore with a fresh TPM asks for the recovery key
_TPM_ON_WINDOWS = Severity.HIGH
#: RR-FW-002's FAIL, for any guest, when KubeVirt refuses to start a restored copy: persistent
#: EFI/TPM state with the VMPersistentState gate off (KubeVirt before 1.5: kvconfig
#: ``gate_blocks_start``, pkg/virt-config/featuregate/inactive.go, GA since) or BIOS on arm64
#: (https://github.com/kubevirt/kubevirt/blob/main/pkg/virt-api/webhooks/arm64.go,
#: ``validateBootOptions``: "Arm64 does not support bios boot"). Its ``worst_severity``, which
#: its ERRORs that name no severity take (round h46)
_FW_REFUSED = Severity.HIGH


@check(
    "RR-FW-002",
    title="EFI NVRAM and TPM state are persistent",
    severity=Severity.MEDIUM,
    windows_severity=_TPM_ON_WINDOWS,
    worst_severity=_FW_REFUSED,
    rationale="Without persistent: true, EFI variables (boot entries, enrolled secure-boot keys) "
    "and vTPM contents (BitLocker/LUKS keys sealed to it) are lost on every restart and restore.",
    remediation="Set firmware.bootloader.efi.persistent: true and devices.tpm.persistent: true "
    "(needs the VMPersistentState feature and a RWX/filesystem backend storage class), then "
    "include the persistent-state-for-<vm> PVC in backups.",
    references=(KV_PERSISTENT, KV_ARM64_DEFAULTS, KV_ARM64_BOOT),
    # the firmware and TPM as the VM or its preference sets them, on its architecture; the
    # OS (hyperv, the vm.kubevirt.io/os annotation) for the severity; not its NICs or disks
    reads=(
        "spec.template.spec.domain.firmware",
        "spec.template.spec.domain.devices.tpm",
        "spec.template.spec.domain.features",
        "spec.template.spec.architecture",
        "spec.template.metadata",
        "spec.preference",
        "status.preferenceRef",
    ),
)
def nvram_persistent(vm: VMRecord, ctx: CheckContext) -> Result:
    """N/A for BIOS without TPM (inferred when no architecture is named anywhere: amd64's
    default); FAIL medium for volatile NVRAM, high for a volatile TPM on Windows; on arm64,
    FAIL high for BIOS (KubeVirt refuses to start it: pkg/virt-api/webhooks/arm64.go
    ``validateBootOptions``) and ERROR for a bootloader naming neither (no EFI is filled in:
    pkg/defaults/arm64.go ``setDefaultArm64Bootloader``)."""
    gap = _preference_gap(vm)
    if gap:
        return gap
    fw = vm.spec.firmware
    ev: dict[str, Any] = {
        "bootloader": fw.bootloader,
        "efi_persistent": fw.efi_persistent,
        "tpm": fw.tpm,
        "tpm_persistent": fw.tpm_persistent,
        "resolved_from": fw.resolved_from,
        "persistent_state_pvc": vm.state_pvc.name if vm.state_pvc else None,
    }
    arm = _arm64_boot(vm, ev)
    if arm is not None:
        return arm
    if fw.bootloader != "efi" and not fw.tpm:
        if fw.architecture is None and fw.resolved_from.get("bootloader") == "default":
            # KubeVirt's VM webhook writes spec.template.spec.architecture on every VM it
            # admits (pkg/defaults/defaults.go SetVirtualMachineDefaults): none anywhere
            # leaves BIOS a guess (arm64 boots EFI)
            return not_applicable(
                f"VM {vm.ref} boots with BIOS and has no TPM (inferred: no architecture is "
                "named by the VM, its VMI or the KubeVirt CR; amd64's default assumed).",
                architecture=None,
                **ev,
            ).on(Basis.INFERRED)
        return not_applicable(f"VM {vm.ref} boots with BIOS and has no TPM.", **ev)
    sealed = bool(fw.tpm) and vm.spec.os == "windows"
    if fw.tpm and not fw.tpm_persistent:
        sev = _TPM_ON_WINDOWS if sealed else Severity.MEDIUM
        return failed(f"VM {vm.ref} has a TPM whose state is not persistent.", sev, **ev)
    if fw.bootloader == "efi" and not fw.efi_persistent:
        return failed(f"VM {vm.ref} boots with EFI but its NVRAM is not persistent.", **ev)
    blocked = gate_blocks_start(ctx)
    if blocked:
        # RR-PLT-006's finding, for this VM: a restored copy of it does not start at all
        return failed(
            f"VM {vm.ref} keeps persistent EFI/TPM state, but KubeVirt refuses to start such a "
            f"VM: {blocked}. It runs because it started earlier; a restored copy will not start.",
            _FW_REFUSED,
            kubevirt_blocker=blocked,
            **ev,
        ).on(Basis.OBSERVED)
    unknown = gate_unknown(ctx)
    if unknown:
        # high: what could not be read may be the gate that refuses the restored copy (the
        # high FAIL above), so the VM ranks with NOT_READY, never AT_RISK (bench.mutations
        # --kind KubeVirt, fz39 seed 11101: a KubeVirt CR unread, NOT_READY -> UNKNOWN of
        # a medium ERROR, ranked AT_RISK at worst)
        return Result(
            Status.ERROR,
            f"VM {vm.ref} keeps persistent EFI/TPM state, but {unknown}: whether KubeVirt "
            "starts a restored copy of it is unknown.",
            ev,
            Severity.HIGH,
        )
    if vm.state_pvc is None:
        # KubeVirt keeps persistent EFI/TPM state in a backend-storage PVC it creates when the
        # VMI starts (persistent_tpm_and_uefi_state); a running VM without one keeps its state
        # nowhere a backup can copy.
        data = ctx.index.data
        sev = _TPM_ON_WINDOWS if sealed else Severity.MEDIUM
        if not (data.known("PersistentVolumeClaim") and data.known("VirtualMachineInstance")):
            # as high as the FAIL below could be (a Windows TPM: fz39), and no higher (a
            # Windows guest's EFI NVRAM alone is a medium FAIL)
            return Result(
                Status.ERROR,
                f"VM {vm.ref} sets persistent EFI/TPM state, but the PVC or VMI list was not "
                "read, so whether its persistent-state-for PVC exists is unknown.",
                ev,
                sev,
            )
        alike = _state_lookalikes(vm, ctx)
        if alike:
            ev["state_pvc_lookalikes"] = [
                p["metadata"]["name"] for p in ctx.index.state_lookalikes[(vm.namespace, vm.name)]
            ]
            return failed(
                f"VM {vm.ref} sets persistent EFI/TPM state, but {alike}: KubeVirt starts the "
                "VM (and a restored copy) with a new, empty state PVC instead, so the state in "
                f"it is not the VM's (label it persistent-state-for={vm.name} if it is).",
                sev,
                **ev,
            ).on(Basis.OBSERVED)
        if vm.vmi is not None:
            return failed(
                f"VM {vm.ref} runs with persistent EFI/TPM state set, but no "
                f"persistent-state-for-{vm.name} PVC exists: the state lives nowhere a backup "
                "can copy (check the VMPersistentState feature gate and vmStateStorageClass).",
                sev,
                **ev,
            ).on(Basis.OBSERVED)
    via = " (via its preference)" if "preference" in fw.resolved_from.values() else ""
    if vm.state_pvc is None:
        return passed(
            f"VM {vm.ref} sets persistent EFI/TPM state{via}; it is not running, so KubeVirt has "
            "not created its persistent-state PVC yet and there is no state to lose.",
            **ev,
        )
    return passed(f"VM {vm.ref} keeps its EFI NVRAM/TPM state persistent{via}.", **ev)


def _state_lookalikes(vm: VMRecord, ctx: CheckContext) -> str:
    """Why the ``persistent-state-for-<vm>...`` PVCs KubeVirt would not start ``vm`` with are
    not its state ('' when there are none): neither labelled ``persistent-state-for=<vm>``
    nor named exactly ``persistent-state-for-<vm>``, or being deleted
    (kubevirt pkg/storage/backend-storage/backend-storage.go ``PVCForVMI``)."""
    out = []
    for pvc in ctx.index.state_lookalikes.get((vm.namespace, vm.name), []):
        meta = pvc.get("metadata") or {}
        if meta.get("deletionTimestamp") is not None:
            why = f"is being deleted (since {meta['deletionTimestamp']})"
        else:
            label = meta_labels(pvc).get("persistent-state-for")
            why = (
                f"is labelled persistent-state-for={label}"
                if isinstance(label, str) and label
                else f"is not labelled persistent-state-for={vm.name}"
            ) + f" and not named exactly persistent-state-for-{vm.name}"
        out.append(f"PVC {vm.namespace}/{meta.get('name')} {why}")
    return "; ".join(out)


def _arm64_boot(vm: VMRecord, ev: dict[str, Any]) -> Result | None:
    """RR-FW-002 for an arm64 VM whose firmware KubeVirt cannot give it: BIOS (its own or
    its preference's ``preferredUseBios``), which the VMI admission refuses ("Arm64 does not
    support bios boot"), or a bootloader set but naming neither, which gets no EFI."""
    fw = vm.spec.firmware
    if fw.architecture != "arm64" or fw.bootloader == "efi":
        return None
    via = (
        "its preference (preferredUseBios)"
        if fw.resolved_from.get("bootloader") == ("preference")
        else "its spec"
    )
    if fw.bootloader == "bios":
        return failed(
            f"VM {vm.ref} is arm64 and {via} gives it BIOS, which KubeVirt refuses on arm64 "
            "('Arm64 does not support bios boot'): it cannot start, nor can a restored copy.",
            _FW_REFUSED,
            architecture="arm64",
            **ev,
        ).on(Basis.OBSERVED)
    return errored(
        f"VM {vm.ref} is arm64 and {via} sets a bootloader naming neither efi nor bios: KubeVirt "
        "fills in EFI only when none is set and arm64 has no BIOS, so what it boots with is "
        "unknown.",
        architecture="arm64",
        **ev,
    )


@check(
    "RR-DSK-001",
    title="The boot disk is pinned with bootOrder when more than one disk could boot",
    severity=Severity.MEDIUM,
    rationale="Without bootOrder the firmware tries disks in device order; a restore that lists "
    "disks differently, or a data disk with a stale boot loader, boots the wrong disk.",
    remediation="Set bootOrder: 1 on the boot disk (and higher numbers on other bootable disks).",
    references=(KV_DISKS,),
    reads=("spec.template.spec.domain.devices.disks", "spec.template.spec.volumes", *NOT_READ),
)
def boot_order(vm: VMRecord, ctx: CheckContext) -> Result:
    """N/A with at most one bootable disk; PASS when any bootable disk has a bootOrder."""
    bootable = [d for d in vm.spec.disks if d.bootable]
    ev = {"bootable_disks": [{"disk": d.name, "boot_order": d.boot_order} for d in bootable]}
    if len(bootable) <= 1:
        return not_applicable(f"VM {vm.ref} has {len(bootable)} bootable disk(s).", **ev)
    pinned = [d for d in bootable if d.boot_order is not None]
    if not pinned:
        return failed(
            f"VM {vm.ref} has {len(bootable)} bootable disks and none has a bootOrder.", **ev
        )
    first = min(pinned, key=lambda d: d.boot_order or 0)
    return passed(f"VM {vm.ref} boots from disk {first.name} (bootOrder {first.boot_order}).", **ev)


@check(
    "RR-DSK-002",
    title="No volume exists only as a runtime hotplug",
    severity=Severity.MEDIUM,
    rationale="A volume hot-plugged without --persist lives only on the running VMI; the VM "
    "spec (and so every backup and restore of it) does not know it exists.",
    remediation="Re-attach the volume with virtctl addvolume --persist, or add it to the VM spec.",
    references=(KV_HOTPLUG,),
    requires=("VirtualMachineInstance",),
    reads=("spec.template.spec.volumes", *NOT_READ),
)
def hotplug(vm: VMRecord, ctx: CheckContext) -> Result:
    """Compare the running VMI's volumes with the VM spec's volumes."""
    vmi = ctx.index.vmi_records.get((vm.namespace, vm.name))
    if vm.vmi is None or vmi is None:
        return not_applicable(f"VM {vm.ref} is not running; no runtime volumes to compare.")
    spec_names = {d.name for d in vm.spec.disks}
    if vmi.volumes is None:
        return errored(
            f"The volume list of running VMI {vm.ref} (spec.volumes) is unreadable.",
            malformed_objects=[{"kind": "VirtualMachineInstance", "field": "spec.volumes"}],
        )
    # The VMI's spec.volumes is what the guest runs with. Its status.volumeStatus also keeps a
    # hotplug entry for a volume being unplugged (removed from spec.volumes, kept "until there
    # is no associated pod") and for each spec.utilityVolumes entry (a memory-dump or backup
    # output PVC mounted in virt-launcher, no guest disk): neither is a runtime-only guest
    # volume (kubevirt pkg/virt-controller/watch/vmi/storage.go updateVolumeStatus; red team
    # rt11, bug case 23 variant: AT_RISK for a volume on its way out).
    extra = sorted(str(n) for n in set(vmi.volumes) - spec_names if n)
    if extra:
        return failed(
            f"VM {vm.ref} runs with volume(s) {', '.join(extra)} that its spec does not list.",
            runtime_only_volumes=extra,
        )
    return passed(
        f"Every volume of running VM {vm.ref} is in its spec.", volumes=sorted(spec_names)
    )


#: RR-DSK-003's FAIL for a Windows guest whose disk (not a cdrom) changed bus, or whose boot
#: disk or firmware changed: Windows boots only from a controller whose driver it loads at
#: boot, so a restore on the new hardware stops with INACCESSIBLE_BOOT_DEVICE (VIRTIO_WIN_BOOT)
_BOOT_CHANGE_ON_WINDOWS = Severity.HIGH


@check(
    "RR-DSK-003",
    title="The boot disk, disk buses, NIC models and machine type of the VM spec are those its "
    "running guest uses",
    severity=Severity.MEDIUM,
    windows_severity=_BOOT_CHANGE_ON_WINDOWS,
    rationale="A bus or NIC model (or the firmware, EFI or BIOS, or a boot order that now "
    "starts from the network) changed in the VM spec while the VM runs waits for a "
    "restart (RestartRequired), but every backup taken since holds the new one: a restore "
    "boots the guest on hardware it may have no driver or configuration for (a Windows boot "
    "disk moved from sata to virtio stops with INACCESSIBLE_BOOT_DEVICE; a new NIC model "
    "renames the interface and drops its static address).",
    remediation="Restart the VM in a window to apply the change and check the guest, or set "
    "the bus or model back to the running one; take a backup once the guest runs on it.",
    references=(
        KV_DISKS,
        KV_IFACES,
        VIRTIO_WIN_BOOT,
        KV_MACHINE_DEFAULT_SRC,
        KV_MACHINE_CONFIG_SRC,
    ),
    requires=("VirtualMachineInstance",),
    reads=(
        "spec.template.spec.domain.devices.disks",
        "spec.template.spec.domain.devices.interfaces",
        "spec.template.spec.domain.machine",
        "spec.template.spec.domain.firmware.bootloader",
        "spec.template.spec.architecture",
        "spec.preference",
        "status.preferenceRef",
        "status.conditions",
    ),
)
def running_hardware(vm: VMRecord, ctx: CheckContext) -> Result:
    """FAIL when a disk's bus or a NIC's model, as the VM spec (or its preference) states it,
    differs from what the running VMI uses (``spec.domain.devices``), when the disk it boots
    from or its stated machine type differs, or when the VM has the condition
    ``RestartRequired`` (KubeVirt's own word that the spec changed in a way the running guest
    has not taken); high when a Windows VM's disk (not a cdrom) changed bus or its boot disk
    changed. A disk is paired with the VMI's by name, else by the
    PVC or DataVolume behind it; a NIC by name, else by its MAC. A value either side leaves to
    KubeVirt's defaults is not compared, but for the machine type: a VM whose spec and
    preference name none is given the cluster's default when a restore creates it, so one
    that differs (KubeVirt CR read) from the type the guest runs on is a low FAIL on its own,
    inferred (the restoring cluster's default then may differ again; unread, not compared).
    A type stated alike on both sides but an alias (``q35``, ``pc``: the VMI's
    ``status.machine.type`` expands it) is named in the message and evidence
    (``machine_type_alias``, :func:`_machine_alias`) but fails nothing: a restore resolves it
    anew, as every start does, so a restore into a cluster with a newer KubeVirt changes the
    chipset version no more than a restart after that upgrade would (KubeVirt's built-in
    default is the alias ``q35``: a FAIL would flag nearly every VM of a vanilla cluster).
    N/A when the VM does not run (no VMI, or one that has finished); ERROR when the VMI's
    disks or interfaces are no list, or when the VMI lists no disk while the spec lists one
    (not a CD-ROM) and no ``RestartRequired`` condition explains it: a VMI is made from the
    template, so that copy is damaged."""
    phase = dig(vm.vmi, "status", "phase") if vm.vmi is not None else None
    if vm.vmi is None or phase in ("Succeeded", "Failed"):
        return not_applicable(f"VM {vm.ref} is not running; no running hardware to compare.")
    devices = dig(vm.vmi, "spec", "domain", "devices")
    if not isinstance(devices, dict):
        return _devices_unread(vm, ["spec.domain.devices"])
    broken = [
        f"spec.domain.devices.{key}"
        for key in ("disks", "interfaces")
        if devices.get(key) is not None and not isinstance(devices.get(key), list)
    ]
    machine = dig(vm.vmi, "spec", "domain", "machine")
    if machine is not None and not (
        isinstance(machine, dict) and isinstance(machine.get("type", ""), str)
    ):
        broken.append("spec.domain.machine")  # the machine type it runs on is unknown
    broken += [
        f"spec.domain.devices.{key}[{i}].bootOrder"
        for key in ("disks", "interfaces")
        for i, e in enumerate(_entries(devices.get(key)))
        if e.get("bootOrder") is not None and not boot_order_ok(e.get("bootOrder"))
    ]  # which device boots cannot be told (an unsigned integer in KubeVirt's API)
    broken += _running_firmware_unread(vm.vmi)
    if broken:
        return _devices_unread(vm, broken)
    needing = [d.name for d in vm.spec.disks if d.device in ("disk", "lun")]
    if needing and not _entries(devices.get("disks")) and _restart_required(vm.obj) is None:
        # A VMI is made from the VM's template and KubeVirt admits a disk only with its volume;
        # a running VMI with no disk while the template lists some, and no RestartRequired
        # condition saying the spec changed since, is a damaged copy, not a diskless machine
        # (fp34: a VMI stripped of its disks and volumes passed, the VM READY)
        return replace(
            errored(
                f"Running VMI {vm.ref} lists no disk (spec.domain.devices.disks) while its VM's "
                f"spec lists {len(needing)} ({', '.join(needing)}) and no RestartRequired "
                "condition says the spec changed since it started: which disks the guest runs "
                "with cannot be told.",
                malformed_objects=[
                    {"kind": "VirtualMachineInstance", "field": "spec.domain.devices.disks"}
                ],
            ),
            severity=_grave_unknown(vm),
        )
    claims = _vmi_claims(vm.vmi)
    by_name: dict[Any, tuple[str, str]] = {}
    by_claim: dict[str, tuple[str, str]] = {}
    for e in _entries(devices.get("disks")):
        for kind in ("disk", "cdrom", "lun"):
            target = e.get(kind)
            if isinstance(target, dict) and isinstance(bus := target.get("bus"), str):
                name = e.get("name")
                if isinstance(name, str):
                    by_name[name] = (kind, bus)
                    if (claim := claims.get(name)) is not None:
                        by_claim[claim] = (kind, bus)
    models: dict[str, str] = {}
    for e in _entries(devices.get("interfaces")):
        # a VMI interface without a model runs virtio (kubevirt pkg/network/setup/netpod/
        # netpod.go and the domain converter read "" as virtio; a preference's
        # preferredInterfaceModel is written into the VMI spec when it starts)
        model = e.get("model") if e.get("model") not in (None, "") else NIC_DEFAULT_MODEL
        if isinstance(model, str):
            for key in (e.get("name"), _mac_key(e.get("macAddress"))):
                if isinstance(key, str) and key:
                    models.setdefault(key, model)
    disks = []
    for d in vm.spec.disks:
        running = by_name.get(d.name) or (by_claim.get(d.claim) if d.claim else None)
        if d.bus_from != "default" and running is not None and running[1] != d.bus:
            disks.append({"disk": d.name, "device": d.device, "spec": d.bus, "running": running[1]})
    nics = []
    for n in vm.spec.nics:
        model = models.get(n.name) or models.get(_mac_key(n.mac) or "")
        # an SR-IOV VF is passed through: the guest sees the VF's own device, not a model
        stated = _stated_model(vm, n.model, n.model_from) if n.binding != "sriov" else None
        if stated is not None and model is not None and model != stated:
            nics.append({"nic": n.name, "spec": stated, "running": model})
    claimed = {d.name: d.claim for d in vm.spec.disks if d.claim}
    spec_nics = dig(vm.obj, "spec", "template", "spec", "domain", "devices", "interfaces")
    spec_boot = _boot_disk(
        [(d.name, d.boot_order) for d in vm.spec.disks], _nic_orders(_entries(spec_nics))
    )
    run_boot = _boot_disk(
        [(e.get("name"), e.get("bootOrder")) for e in _entries(devices.get("disks"))],
        _nic_orders(_entries(devices.get("interfaces"))),
    )
    boot = None
    # the same disk under another name (paired by its PVC) is no change
    renamed = bool(
        spec_boot and claimed.get(spec_boot) and claimed[spec_boot] == claims.get(run_boot or "")
    )
    if spec_boot and run_boot and spec_boot != run_boot and not renamed:
        boot = {"spec": spec_boot, "running": run_boot}
    fw = vm.spec.firmware
    run_machine = dig(vm.vmi, "spec", "domain", "machine", "type")
    machine = None
    if (
        fw.resolved_from.get("machine_type") in ("vm", "preference")
        and isinstance(fw.machine_type, str)
        and isinstance(run_machine, str)
        and fw.machine_type != run_machine
    ):
        machine = {"spec": fw.machine_type, "running": run_machine}
    unknown_default = None
    if fw.resolved_from.get("machine_type") == "default" and isinstance(run_machine, str):
        machine, unknown_default = _default_machine_drift(vm, ctx, run_machine)
    alias = _machine_alias(vm, ctx, run_machine) if machine is None else None
    pending = _restart_required(vm.obj)
    loader = _bootloader_change(vm)
    ev: dict[str, Any] = {
        "disks": disks,
        "nics": nics,
        "boot_disk": boot,
        "machine_type": machine,
        "bootloader": loader,
    }
    if pending is not None:
        ev["restart_required"] = pending
    if alias is not None:
        ev["machine_type_alias"] = alias
    if unknown_default is not None:
        # the spec names no machine type and this cluster's default cannot be read: the
        # type a restore gives it is not compared (a low FAIL at most, never READY-blocking)
        ev["machine_type_default_unknown"] = unknown_default
    others = disks or nics or boot or loader or pending is not None
    if machine is not None and "cluster_default" in machine and not others:
        # only the default the VM would be given anew differs: what a restore into this
        # cluster now gives it, inferred (KubeVirt's webhook fills it in at creation)
        return failed(
            f"VM {vm.ref}'s spec names no machine type, so a restore gets the restoring "
            f"cluster's default: here now {machine['cluster_default']} "
            f"({machine['default_from']}), while the guest runs on {run_machine}.",
            Severity.LOW,
            **ev,
        ).on(Basis.INFERRED)
    if not disks and not nics and not boot and not machine and not loader and pending is None:
        if unknown_default is not None and ctx.index.partial_for("KubeVirt", ""):
            # a KubeVirt CR was exported but could not be read (a named collection problem):
            # its default machine type may differ from the one the guest runs on (a low
            # FAIL), so no PASS rests on it (fz39: a default machineType of 42 read as the
            # built-in q35, AT_RISK -> READY)
            return errored(
                f"VM {vm.ref}'s spec names no machine type, so a restore gets the cluster's "
                "default, but the KubeVirt CR that sets it could not be read (see the "
                f"collection problems): whether it is {run_machine}, the type the guest runs "
                "on, is unknown.",
                **ev,
            )
        return passed(
            f"The boot disk, disk buses, NIC models and machine type VM {vm.ref}'s spec states "
            "are those it runs with."
            + (
                f" Its machine type {alias['spec']} is an alias QEMU resolves at each start "
                f"(the guest runs on {alias['running'] or 'the type it resolved to, unread'}): "
                "a restore, like a restart after a KubeVirt upgrade, may start it on a newer "
                "versioned type; pin the versioned type to keep it."
                if alias is not None
                else ""
            ),
            **ev,
        ).on(Basis.OBSERVED)
    what = [f"disk {d['disk']} bus {d['running']} -> {d['spec']}" for d in disks] + [
        f"interface {n['nic']} model {n['running']} -> {n['spec']}" for n in nics
    ]
    if boot is not None:
        what.append(f"boot disk {boot['running']} -> {boot['spec']}")
    if machine is not None:
        to = machine.get("spec") or f"{machine.get('cluster_default')} (cluster default)"
        what.append(f"machine type {machine['running']} -> {to}")
    if loader is not None:
        what.append(f"firmware {loader['running']} -> {loader['spec']}")
    if pending is not None:
        what.append(f"condition RestartRequired{': ' + pending if pending else ''}")
    grave = vm.spec.os == "windows" and (
        any(d["device"] != "cdrom" for d in disks) or boot is not None or loader is not None
    )
    return failed(
        f"VM {vm.ref} runs with hardware its spec has changed since ({'; '.join(what)}): "
        "backups taken since restore it on the new hardware, which the guest has not booted on.",
        _BOOT_CHANGE_ON_WINDOWS if grave else Severity.MEDIUM,
        **ev,
    ).on(Basis.OBSERVED)


#: the model of an interface that names none (kubevirt ``v1.VirtIO``)
NIC_DEFAULT_MODEL = "virtio"


def _stated_model(vm: VMRecord, model: str | None, model_from: str) -> str | None:
    """The model a restore gives an interface: its own or its preference's, else virtio
    unless the VM names a preference that was not read (its preferredInterfaceModel unknown).

    KubeVirt admits an interface without a model and runs it as virtio
    (https://github.com/kubevirt/kubevirt/blob/main/pkg/network/setup/netpod/netpod.go,
    ``ifaceModel == "" || ifaceModel == v1.VirtIO``); a preference's
    ``preferredInterfaceModel`` fills it in first
    (https://github.com/kubevirt/kubevirt/blob/main/pkg/instancetype/preference/apply/interface.go).
    Round r41d: a spec without a model beside a VMI running e1000 (or the reverse) was not
    compared, and RR-DSK-003 passed while a restore changes the guest's NIC model."""
    if model_from != "default":
        return model
    return None if vm.spec.preference_found is False else NIC_DEFAULT_MODEL


def _default_machine_drift(
    vm: VMRecord, ctx: CheckContext, running: str
) -> tuple[dict[str, Any] | None, str | None]:
    """The machine type a VM whose spec (and preference) names none is given when a restore
    creates it in this cluster now, where it is not the one its guest runs on (None when it
    is), and why the default is unknown (None when it is known: the KubeVirt CR read).

    KubeVirt's VM admission webhook writes the cluster's default into a VM without one on
    every create (pkg/defaults/defaults.go ``setVMDefaultMachineType``, from
    pkg/virt-api/webhooks/mutating-webhook/mutators/vm-mutator.go); a Velero restore creates
    the VM, so it gets the default of then, and the guest boots on that chipset. The VMI's
    ``spec.domain.machine.type`` is what it started with, its ``status.machine.type`` the
    expanded alias; either equal to the default is no change.
    """
    arch = vm.spec.firmware.architecture or dig(vm.vmi, "spec", "architecture")
    default, source = default_machine_type(ctx, arch if isinstance(arch, str) else None)
    expanded = dig(vm.vmi, "status", "machine", "type")
    if default is None:
        return None, source
    if default in (running, expanded):
        return None, None
    drift = {"spec": None, "running": running, "cluster_default": default, "default_from": source}
    return drift, None


#: QEMU's unversioned machine types: each an alias of its newest versioned type (``q35`` of
#: ``pc-q35-rhel9.6.0`` on RHEL 9.6, ``pc`` of an ``pc-i440fx-*``), KubeVirt's built-in
#: defaults among them (pkg/virt-config/virt-config.go)
MACHINE_ALIASES = frozenset({"q35", "pc", "virt", "s390-ccw-virtio"})


def _machine_alias(vm: VMRecord, ctx: CheckContext, running: Any) -> dict[str, Any] | None:
    """``{"spec", "running", "from"}`` when the machine type the VM states (or is given by
    this cluster's default) is the one its VMI started with but an alias: the VMI's
    ``status.machine.type`` (the domain's type, which virt-handler writes back,
    pkg/virt-handler/vm.go ``updateMachineType``) differs from it, or is unread and the
    type is a known alias; else None.

    The alias is resolved by the virt-launcher's QEMU at each start, so KubeVirt itself
    schedules a migration target by the expanded type (pkg/virt-controller/services/
    template.go); a restore into a cluster with a newer KubeVirt starts the guest on a later
    chipset version than the one it runs on (inferred: the restoring cluster is not read).
    """
    fw = vm.spec.firmware
    source = fw.resolved_from.get("machine_type")
    stated: Any = fw.machine_type if source in ("vm", "preference") else None
    if source == "default":
        arch = fw.architecture or dig(vm.vmi, "spec", "architecture")
        stated = default_machine_type(ctx, arch if isinstance(arch, str) else None)[0]
    if not (isinstance(stated, str) and stated and stated == running):
        return None
    expanded = dig(vm.vmi, "status", "machine", "type")
    if isinstance(expanded, str) and expanded:
        if expanded == stated:
            return None
        return {"spec": stated, "running": expanded, "from": source}
    if stated in MACHINE_ALIASES:
        return {"spec": stated, "running": None, "from": source}
    return None


def _running_firmware_unread(vmi: dict[str, Any]) -> list[str]:
    """The VMI fields that say which firmware the guest booted with, when one cannot be read:
    ``spec.domain.firmware`` or its ``bootloader`` that is no mapping, or a ``bios`` or
    ``efi`` in it that is no mapping (null included). KubeVirt's ``Firmware.Bootloader`` is a
    ``*Bootloader`` holding ``BIOS *BIOS`` and ``EFI *EFI``, objects
    (https://github.com/kubevirt/kubevirt/blob/main/staging/src/kubevirt.io/api/core/v1/schema.go),
    and the API server prunes a null one, so a stored VMI holds none of these. Read as
    "not compared" (:func:`_bootloader_change`), a VMI that booted EFI written ``efi: true``
    or ``efi: null`` hid a spec moved to BIOS: RR-DSK-003 FAIL -> PASS (round h48b)."""
    fw = dig(vmi, "spec", "domain", "firmware")
    if fw is None:
        return []
    if not isinstance(fw, dict):
        return ["spec.domain.firmware"]
    if "bootloader" not in fw:
        return []
    loader = fw["bootloader"]
    if not isinstance(loader, dict):
        return ["spec.domain.firmware.bootloader"]
    return [
        f"spec.domain.firmware.bootloader.{key}"
        for key in ("bios", "efi")
        if key in loader and not isinstance(loader[key], dict)
    ]


def _bootloader_change(vm: VMRecord) -> dict[str, str] | None:
    """The firmware (``bios`` or ``efi``) the VM spec, or its preference, boots the guest with
    when it is not the one the running VMI booted with, else None.

    KubeVirt boots OVMF when the VMI's ``firmware.bootloader.efi`` is set and SeaBIOS
    otherwise on amd64 (kubevirt pkg/virt-launcher/virtwrap/converter/compute/os.go); the
    VMI's spec holds what the VM and its preference gave it at start
    (pkg/instancetype/preference/apply/firmware.go). A guest installed under one firmware
    has no boot loader for the other (no EFI system partition, or no BIOS boot code), so a
    restore of a spec changed since the guest started may not boot (red team rt22: a spec
    moved from EFI to BIOS while running was READY). Compared only where both sides are
    known: an unset bootloader is BIOS only on amd64 (arm64 defaults to EFI).
    """
    loader = dig(vm.vmi, "spec", "domain", "firmware", "bootloader")
    arch = dig(vm.vmi, "spec", "architecture") or dig(
        vm.obj, "spec", "template", "spec", "architecture"
    )
    bios = isinstance(loader, dict) and isinstance(loader.get("bios"), dict)
    if isinstance(loader, dict) and isinstance(loader.get("efi"), dict):
        running = "efi"
    elif bios or (loader in (None, {}) and arch == "amd64"):
        running = "bios"  # a preference leaves an empty bootloader behind
    else:
        return None
    fw = vm.spec.firmware
    if vm.spec.preference_found is False:
        return None  # the preference that may set the firmware is unread
    if fw.resolved_from.get("bootloader") == "default" and arch != "amd64":
        return None
    if fw.bootloader not in ("bios", "efi") or fw.bootloader == running:
        return None
    return {"spec": fw.bootloader, "running": running}


def _nic_orders(entries: list[dict[str, Any]]) -> list[tuple[Any, Any]]:
    """``(name, bootOrder)`` of the interfaces, named ``interface <name>`` beside disks."""
    return [
        (f"interface {e['name']}" if isinstance(e.get("name"), str) else None, e.get("bootOrder"))
        for e in entries
    ]


def _boot_disk(
    disks: list[tuple[Any, Any]], nics: list[tuple[Any, Any]] | None = None
) -> str | None:
    """The name of the device a VM boots from first: the lowest ``bootOrder`` among its disks
    and interfaces, else the first disk
    (https://kubevirt.io/user-guide/storage/disks_and_volumes/ "bootOrder"). None when no
    disk has a name.

    An interface with a ``bootOrder`` is a network (PXE) boot device in the same order
    (kubevirt api ``Interface.BootOrder``; pkg/virt-launcher/virtwrap/converter/network/
    configurator.go writes it as the domain interface's ``<boot order>``): a spec that
    moved a NIC ahead of the disk the guest boots from restores a VM that boots from the
    network first (red team rt22: the disks' order alone was compared; the VM was READY).
    """
    ordered = [
        (order, name)
        for name, order in [*disks, *(nics or [])]
        if isinstance(name, str) and type(order) is int and order > 0
    ]
    if ordered:
        return min(ordered)[1]
    return next((name for name, _ in disks if isinstance(name, str)), None)


def _restart_required(vm: dict[str, Any]) -> str | None:
    """The message of a VM's ``RestartRequired`` condition when its status is "True" ("" for
    none), else None. KubeVirt sets it when a field that cannot change live was changed while
    the VM runs (kubevirt pkg/virt-controller/watch/vm/vm.go, api core/v1
    VirtualMachineRestartRequired)."""
    for cond in _entries(dig(vm, "status", "conditions")):
        if cond.get("type") == "RestartRequired" and cond.get("status") == "True":
            message = cond.get("message")
            return message if isinstance(message, str) else ""
    return None


def _devices_unread(vm: VMRecord, fields: list[str]) -> Result:
    """ERROR for a running VMI whose devices cannot be read: high for a Windows guest, whose
    boot disk, disk bus or firmware change is a high FAIL (fz39: a medium ERROR ranked such a
    VM AT_RISK at worst, better than the NOT_READY the change gives)."""
    return Result(
        Status.ERROR,
        f"The devices of running VMI {vm.ref} ({', '.join(fields)}) cannot be read.",
        {"malformed_objects": [{"kind": "VirtualMachineInstance", "field": f} for f in fields]},
        _grave_unknown(vm),
    )


def _grave_unknown(vm: VMRecord) -> Severity | None:
    """RR-DSK-003's Windows severity (:data:`_BOOT_CHANGE_ON_WINDOWS`, high) for a Windows VM
    (its FAIL is high for it), else None (the check's default)."""
    return _BOOT_CHANGE_ON_WINDOWS if vm.spec.os == "windows" else None


def _vmi_claims(vmi: dict[str, Any]) -> dict[str, str]:
    """The VMI's volume name -> the PVC or DataVolume behind it."""
    out: dict[str, str] = {}
    for v in _entries(dig(vmi, "spec", "volumes")):
        for key, field in (("persistentVolumeClaim", "claimName"), ("dataVolume", "name")):
            claim = dig(v, key, field)
            if isinstance(v.get("name"), str) and isinstance(claim, str):
                out[v["name"]] = claim
    return out


def _mac_key(mac: Any) -> str | None:
    return f"mac:{_mac_digits(mac)}" if isinstance(mac, str) and mac else None


def _entries(value: Any) -> list[dict[str, Any]]:
    """The mappings of a list (anything else: none)."""
    return [e for e in value if isinstance(e, dict)] if isinstance(value, list) else []


#: A VMI field holding the MAC an interface runs with (``status.interfaces[<i>].mac``, or
#: ``spec.domain.devices.interfaces[<name>].macAddress``, RR-NIC-001's fallback)
_RUNNING_MAC = re.compile(
    r"(?:status\.interfaces|spec\.domain\.devices\.interfaces)\[[^\]]*\]\.mac(?:Address)?$"
)


def _mac_digits(mac: str) -> str:
    """A MAC's hex digits, lower-cased (``02:AB:..`` and ``02-ab-..`` are one address)."""
    return "".join(c for c in mac.lower() if c in "0123456789abcdef")


#: RR-NIC-001's FAIL for a pinned MAC the VM cannot be created or started with: multicast
#: (libvirt refuses it) or a masquerade interface's reserved 02:00:00:00:00:00
#: (https://github.com/kubevirt/kubevirt/blob/main/pkg/network/admitter/binding.go,
#: ``validateMasqueradeBinding``; pkg/network/link/mac.go ``IsReserved``), as
#: :func:`auditor.inventory.macs.mac_fault` reads them. Its ``worst_severity``, which its
#: ERRORs take (round h46)
_MAC_REFUSED = Severity.HIGH


@check(
    "RR-NIC-001",
    title="Every NIC has a pinned MAC address",
    severity=Severity.MEDIUM,
    worst_severity=_MAC_REFUSED,
    rationale="Guests bind IP configuration, DHCP reservations, licences and firewall rules to "
    "the MAC; an unpinned MAC is generated anew on restore (KubeMacPool pins MACs into the VM "
    "spec only in namespaces where it is enabled).",
    remediation="Set macAddress on every interface (copy from the running VMI), or enable "
    "KubeMacPool for the namespace before creating VMs.",
    references=(KV_IFACES, KUBEMACPOOL),
    reads=(
        "spec.template.spec.domain.devices.interfaces",
        "spec.template.spec.networks",
        "spec.template.spec.domain.devices.autoattachPodInterface",  # the default NIC
    ),
)
def mac_pinned(vm: VMRecord, ctx: CheckContext) -> Result:
    """FAIL when any interface (including an auto-attached default) has no macAddress, pins
    one the guest cannot keep (:func:`auditor.inventory.macs.mac_fault`: multicast or a
    masquerade interface's reserved address, high, the VM cannot be created or started;
    all-zero, replaced at start), or pins one other than the MAC its running VMI reports
    (``status.interfaces[].mac``, else the VMI's ``spec.domain.devices.interfaces``)."""
    nics = vm.spec.nics
    ev: dict[str, Any] = {"nics": [{"name": n.name, "mac": n.mac, "model": n.model} for n in nics]}
    if not nics:
        return not_applicable(f"VM {vm.ref} has no network interfaces.", **ev)
    # the interface KubeVirt adds to a VM listing none: its binding is the KubeVirt CR's
    # defaultNetworkInterface, or inferred when the CR was not read (round h44a). It pins no
    # MAC (the VM's spec lists no interface), so it FAILs below whatever its binding.
    added = [n for n in nics if n.binding_from != "vm"]
    if added:
        ev["default_interface"] = {
            "name": added[0].name,
            "binding": added[0].binding,
            "basis": added[0].binding_from,
        }
    unpinned = [n.name for n in nics if n.mac is None]
    if unpinned:
        # macAddress: "" is valid input that pins nothing (KubeVirt uses a MAC only when it
        # is not empty: kubevirt pkg/network/link/address.go, converter/network/
        # configurator.go): said so, never read as pinned
        blank = [n.name for n in nics if n.mac_blank]
        why = f" (macAddress is an empty string on {', '.join(blank)}, unset)" if blank else ""
        if added:
            bound = added[0].binding or "a binding the KubeVirt CR leaves unknown"
            why += (
                f" ({added[0].name}: the interface KubeVirt adds on the pod network to a VM "
                f"listing none, bound {bound}"
                + (
                    ", inferred: the KubeVirt CR was not read"
                    if added[0].binding_from == "inferred"
                    else ", from the KubeVirt CR"
                )
                + ")"
            )
        return failed(
            f"VM {vm.ref} has interface(s) {', '.join(unpinned)} without a pinned MAC "
            f"address{why}.",
            unpinned=unpinned,
            **({"blank_mac": blank} if blank else {}),
            **ev,
        )
    faults = {n.name: f for n in nics if n.mac and (f := mac_fault(n.mac, n.binding))}
    if faults:
        refused = any(f[1] for f in faults.values())
        return failed(
            f"VM {vm.ref} pins MAC address(es) the restored guest cannot keep: "
            + "; ".join(
                f"interface {nic} macAddress {next(n.mac for n in nics if n.name == nic)} {f[0]}"
                for nic, f in faults.items()
            )
            + ".",
            _MAC_REFUSED if refused else Severity.MEDIUM,
            unusable_macs={nic: f[0] for nic, f in faults.items()},
            **ev,
        )
    vmi = ctx.index.vmi_records.get((vm.namespace, vm.name))
    running = dict(vmi.macs) if vmi else {}
    # status.interfaces lists what the domain runs with; without it (stripped, or not yet
    # reported) the VMI's spec, copied from the template at start, holds the MAC it started
    # with (round r41d: a spec MAC changed while running passed with no status to compare)
    for e in _entries(dig(vm.vmi, "spec", "domain", "devices", "interfaces")):
        name, mac = e.get("name"), e.get("macAddress")
        if isinstance(name, str) and isinstance(mac, str) and mac and name not in running:
            running[name] = mac
    differ = [
        n
        for n in nics
        if n.mac and running.get(n.name) and _mac_digits(running[n.name]) != _mac_digits(n.mac)
    ]
    if differ:
        # The spec was changed while the VM ran: the guest's network is configured for the
        # MAC it runs with, and a restore (or the next restart) gives it the spec's.
        return failed(
            f"VM {vm.ref} pins MAC address(es) other than the ones its running VMI uses on "
            + ", ".join(f"{n.name} (spec {n.mac}, running {running[n.name]})" for n in differ)
            + ": a restore gives the guest a MAC it has not been running with.",
            mismatched=[n.name for n in differ],
            running_macs={n.name: running[n.name] for n in differ},
            **ev,
        )
    unread = [i for i in (vmi.issues if vmi else ()) if _RUNNING_MAC.match(i.field)]
    if unread:
        # A running MAC that cannot be read (of another type, or null) may be one the guest
        # runs with instead of the pinned one (the FAIL above): no PASS (round h43c: a VMI
        # spec macAddress of 42 read as unset passed a mismatch, AT_RISK -> READY)
        return errored(
            f"VM {vm.ref} pins its MAC addresses, but its running VMI's field "
            f"{unread[0].field} {unread[0].reason}: whether the guest runs with them is "
            "unknown.",
            malformed_objects=[
                {
                    "kind": "VirtualMachineInstance",
                    "object": vm.ref,
                    "field": i.field,
                    "reason": i.reason,
                }
                for i in unread
            ],
            **ev,
        )
    return passed(f"All {len(nics)} interface(s) of VM {vm.ref} pin a MAC address.", **ev)
