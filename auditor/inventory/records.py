"""Typed slim records of the objects checks read, validated while parsed.

Each record keeps only the fields some check (or the pairing) reads, typed
and checked against what Kubernetes/KubeVirt/CDI accept: enum values, RFC
3339 timestamps, quantities, UUIDs. A malformed field reads as None and is
listed in ``issues`` (:class:`~auditor.inventory.fields.FieldIssue`), which
:func:`parse_record` turns into collection problems naming file, kind,
namespace/name and field. The records are frozen and slotted so they can
stand in for the raw dicts in memory (no ``managedFields``, no status noise).

Sources of the rules:
https://kubernetes.io/docs/reference/kubernetes-api/config-and-storage-resources/persistent-volume-v1/ ,
.../persistent-volume-claim-v1/ , .../storage-class-v1/ ,
https://kubevirt.io/api-reference/main/definitions.html#_v1_virtualmachineinstancespec ,
https://github.com/kubevirt/containerized-data-importer/blob/main/doc/datavolumes.md
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from auditor.inventory.fieldcase import miscased_keys
from auditor.inventory.fields import (
    MAC_RE,
    FieldIssue,
    boot_order_ok,
    condition_key_faults,
    condition_type_fault,
    name_fault_of,
    read_enum,
    read_labels,
    read_list,
    read_quantity,
    read_str,
    read_time,
    read_uuid,
    to_problem,
    uid_fault,
)
from auditor.inventory.prunednulls import VMI_NULLABLE, nulls_below
from auditor.inventory.vmvalidate import device_issues, needs_volume, volume_problems
from auditor.kubevalues import dig, parse_rfc3339
from auditor.models import CollectionProblem

__all__ = [
    "PersistentVolumeRecord",
    "PersistentVolumeClaimRecord",
    "StorageClassRecord",
    "VirtualMachineInstanceRecord",
    "DataVolumeRecord",
    "Record",
    "PARSERS",
    "parse_record",
    "clone_source_issues",
    "uid_issue",
    "RECLAIM_POLICIES",
    "VOLUME_MODES",
    "ACCESS_MODES",
]

RECLAIM_POLICIES = ("Retain", "Delete", "Recycle")
VOLUME_MODES = ("Block", "Filesystem")
ACCESS_MODES = ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod")
PVC_PHASES = ("Pending", "Bound", "Lost")
#: k8s.io/api core/v1 ConditionStatus
CONDITION_STATUSES = ("True", "False", "Unknown")
VMI_PHASES = (
    "Pending",
    "Scheduling",
    "Scheduled",
    "Running",
    "Succeeded",
    "Failed",
    "Unknown",
    "WaitingForSync",
)


@dataclass(frozen=True, slots=True)
class PersistentVolumeRecord:
    """A PersistentVolume: reclaim policy (Retain/Delete/Recycle), CSI driver, volume mode."""

    name: str
    reclaim_policy: str | None
    csi_driver: str | None
    volume_mode: str | None
    storage_class: str | None
    issues: tuple[FieldIssue, ...] = ()


@dataclass(frozen=True, slots=True)
class PersistentVolumeClaimRecord:
    """A PersistentVolumeClaim: binding, class, modes, creation (UTC), labels, size (bytes).

    ``owner_vms`` names the VirtualMachines in its ownerReferences; ``deleting`` is when its
    deletion began (``metadata.deletionTimestamp``, UTC), None when it is not being deleted.
    """

    namespace: str
    name: str
    uid: str | None
    storage_class: str | None
    volume_name: str | None
    volume_mode: str | None
    access_modes: tuple[str, ...]
    created: datetime | None
    labels: dict[str, str]
    requested_bytes: int | None
    phase: str | None
    owner_vms: tuple[str, ...]
    issues: tuple[FieldIssue, ...] = ()
    deleting: datetime | None = None


@dataclass(frozen=True, slots=True)
class StorageClassRecord:
    """A StorageClass: provisioner and reclaim policy (Kubernetes defaults it to Delete)."""

    name: str
    provisioner: str | None
    reclaim_policy: str | None
    issues: tuple[FieldIssue, ...] = ()


@dataclass(frozen=True, slots=True)
class VirtualMachineInstanceRecord:
    """A running VMI: its volume names, hot-plugged volume names, interfaces, firmware UUID.

    ``volumes`` is None when the list could not be read (then nothing can be
    compared with the VM spec).
    """

    namespace: str
    name: str
    phase: str | None
    volumes: tuple[str, ...] | None
    hotplug_volumes: tuple[str, ...]
    interfaces: tuple[str, ...]
    firmware_uuid: str | None
    issues: tuple[FieldIssue, ...] = ()
    #: interface name -> the MAC the guest runs with (``status.interfaces[].mac``)
    macs: tuple[tuple[str, str], ...] = ()
    #: the SMBIOS serial the guest runs with (``spec.domain.firmware.serial``; None: none)
    firmware_serial: str | None = None
    #: fields named but read as they are (their readers give no ERROR for them): they only
    #: weaken evidence, as a MAC that does not parse (:func:`_mac_notes`)
    notes: tuple[FieldIssue, ...] = ()


@dataclass(frozen=True, slots=True)
class DataVolumeRecord:
    """A CDI DataVolume: its phase and storage class.

    ``created``: ``metadata.creationTimestamp`` (UTC; None when absent or unreadable).
    ``ready_since``: the ``lastTransitionTime`` of its ``Ready`` condition while that is
    ``True`` and the phase ``Succeeded`` (UTC): when CDI last saw it finish filling its PVC
    (:func:`ready_since`); None without such a condition."""

    namespace: str
    name: str
    phase: str | None
    storage_class: str | None
    issues: tuple[FieldIssue, ...] = ()
    created: datetime | None = None
    ready_since: datetime | None = None


Record = (
    PersistentVolumeRecord
    | PersistentVolumeClaimRecord
    | StorageClassRecord
    | VirtualMachineInstanceRecord
    | DataVolumeRecord
)


def _names(obj: Any) -> tuple[str, str]:
    """``(namespace or "", name)`` as str (``"None"`` for a missing name, as before)."""
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    if not isinstance(meta, dict):
        return "", "None"
    return str(meta.get("namespace") or ""), str(meta.get("name"))


def parse_pv(obj: dict[str, Any]) -> PersistentVolumeRecord:
    """Build a PV record; a missing or unknown reclaim policy is an issue (the server defaults it)."""
    issues: list[FieldIssue] = []
    policy = read_enum(
        obj,
        "spec.persistentVolumeReclaimPolicy",
        RECLAIM_POLICIES,
        issues,
        required=True,
        server_set=True,
    )
    return PersistentVolumeRecord(
        name=_names(obj)[1],
        reclaim_policy=policy,
        csi_driver=read_str(
            obj, "spec.csi.driver", issues, required="csi" in (obj.get("spec") or {})
        ),
        volume_mode=read_enum(obj, "spec.volumeMode", VOLUME_MODES, issues),
        storage_class=read_str(obj, "spec.storageClassName", issues, empty_ok=True),
        issues=tuple(issues),
    )


def parse_pvc(obj: dict[str, Any]) -> PersistentVolumeClaimRecord:
    """Build a PVC record; a Bound claim must name its volume, creation is server-set, and a
    ``status`` without its ``phase`` is an issue (the API server defaults the phase to
    Pending whenever it writes a claim; a manifest without any status is not an export of a
    live claim, and is left as it is). Mutations seed 3203: a claim whose phase was deleted
    changed a verdict with nothing named."""
    issues: list[FieldIssue] = []
    namespace, name = _names(obj)
    phase = read_enum(
        obj,
        "status.phase",
        PVC_PHASES,
        issues,
        required=isinstance(obj.get("status"), dict),
        server_set=True,
    )
    volume_name = read_str(obj, "spec.volumeName", issues, required=phase == "Bound")
    modes = read_list(obj, "spec.accessModes", issues, named=False) or []
    bad = [m for m in modes if m not in ACCESS_MODES]
    if bad:
        issues.append(
            FieldIssue(
                "spec.accessModes",
                f"has {', '.join(repr(m) for m in bad[:3])}, not among {', '.join(ACCESS_MODES)}",
                True,
            )
        )
    owners = dig(obj, "metadata", "ownerReferences")
    owner_vms: list[str] = []
    if isinstance(owners, list):
        owner_vms = [
            r["name"]
            for r in owners
            if isinstance(r, dict)
            and r.get("kind") == "VirtualMachine"
            and isinstance(r.get("name"), str)
            and r["name"]
        ]
        for i, ref in enumerate(owners):
            # the API server requires each reference's kind and name (ValidateOwnerReferences):
            # one without them may be the VM owning the claim (its disk or persistent state),
            # dropped unnamed (bench.mutations empty_string: an owner named "")
            if not (
                isinstance(ref, dict)
                and all(isinstance(ref.get(k), str) and ref[k] for k in ("kind", "name"))
            ):
                issues.append(
                    FieldIssue(
                        f"metadata.ownerReferences[{i}]",
                        "is no reference with a kind and a name",
                        True,
                    )
                )
            elif (fault := name_fault_of(ref["name"])) is not None:
                # "vm1 " names no VM: the claim read as owned by none (bench.mutations
                # padded, seed 252: a persistent-state PVC lost its VM, unnamed)
                issues.append(
                    FieldIssue(
                        f"metadata.ownerReferences[{i}].name", f"is {fault}: it names no object"
                    )
                )
    elif owners is not None:
        issues.append(FieldIssue("metadata.ownerReferences", "is not a list", True))
    uid = dig(obj, "metadata", "uid")
    return PersistentVolumeClaimRecord(
        namespace=namespace,
        name=name,
        uid=uid if isinstance(uid, str) else None,
        storage_class=read_str(obj, "spec.storageClassName", issues, empty_ok=True),
        volume_name=volume_name,
        volume_mode=read_enum(obj, "spec.volumeMode", VOLUME_MODES, issues),
        access_modes=tuple(m for m in modes if m in ACCESS_MODES),
        created=read_time(obj, "metadata.creationTimestamp", issues, server_set=True),
        deleting=read_time(obj, "metadata.deletionTimestamp", issues),
        labels=read_labels(obj, "metadata.labels", issues),
        requested_bytes=read_quantity(obj, "spec.resources.requests.storage", issues),
        phase=phase,
        owner_vms=tuple(owner_vms),
        issues=tuple(issues),
    )


def parse_storage_class(obj: dict[str, Any]) -> StorageClassRecord:
    """Build a StorageClass record; provisioner is required, reclaimPolicy defaults to Delete."""
    issues: list[FieldIssue] = []
    policy = read_enum(obj, "reclaimPolicy", RECLAIM_POLICIES, issues)
    if policy is None and not any(i.field == "reclaimPolicy" for i in issues):
        policy = "Delete"  # the API server's default
    return StorageClassRecord(
        name=_names(obj)[1],
        provisioner=read_str(obj, "provisioner", issues, required=True),
        reclaim_policy=policy,
        issues=tuple(issues),
    )


def _blank_names(entries: list[Any] | None, path: str) -> list[FieldIssue]:
    """An issue for each entry of a named list whose name holds a blank or an invisible
    character: a VMI's volumes and disks carry the VM's names, and each becomes a volume of
    the launcher pod, whose names are DNS-1123 labels (red team fz18: ``"rootdisk "`` read
    as another volume than the VM's, changing RR-DSK-002 with nothing named)."""
    return [
        FieldIssue(f"{path}[{ascii(e['name'])}].name", f"is {fault}: no volume is named so", True)
        for e in entries or []
        if (fault := name_fault_of(e["name"])) is not None
    ]


def parse_vmi(obj: dict[str, Any]) -> VirtualMachineInstanceRecord:
    """Build a VMI record: volume names (spec and hotplug status), interfaces, firmware UUID."""
    issues: list[FieldIssue] = []
    namespace, name = _names(obj)
    volumes = read_list(obj, "spec.volumes", issues)
    issues += _blank_names(volumes, "spec.volumes")
    for v in volumes or []:
        # KubeVirt refuses a volume without a source, or whose claim or DataVolume names
        # nothing; read by its name alone, which data the running guest mounts was unknown,
        # unnamed (bench.mutations null_list, delete)
        issues += [FieldIssue(f, why) for f, why in volume_problems(v, "spec")]
    spec = obj.get("spec")
    if isinstance(spec, dict) and spec.get("domain") is None:
        # The API server requires spec.domain of every VMI (the running machine itself):
        # without it the running firmware uuid and NICs are unknown, never "none" (mutations
        # seed 971: RR-FW-001 passed a pinned uuid it could not compare).
        issues.append(FieldIssue("spec.domain", "is missing (every VMI has one)", True))
    status_map = obj.get("status")
    if (
        isinstance(status_map, dict)
        and "conditions" in status_map
        and status_map["conditions"] is None
    ):
        # never stored (the API server prunes a null field): the guest agent's condition
        # would vanish unnamed (bench.mutations null_list)
        issues.append(FieldIssue("status.conditions", "is null, which the API server never stores"))
    for i, cond in enumerate(read_list(obj, "status.conditions", issues, named=False) or []):
        # The checks find a condition by its type (AgentConnected, LiveMigratable): one whose
        # type or status is no string may be the one they look for (mutations seed 1499: a
        # type of 42 read as "no AgentConnected condition"). Kubernetes conditions:
        # https://kubernetes.io/docs/reference/kubernetes-api/common-definitions/
        if not isinstance(cond, dict):
            issues.append(FieldIssue(f"status.conditions[{i}]", "is not an object", True))
            continue
        issues += [
            FieldIssue(f"status.conditions[{i}]{'' if f.startswith('[') else '.'}{f}", why, no)
            for f, why, no in condition_key_faults(cond)
        ]
        for key in ("type", "status"):
            value = cond.get(key)
            if value is not None and not isinstance(value, str):
                issues.append(
                    FieldIssue(
                        f"status.conditions[{i}].{key}",
                        f"is a {type(value).__name__}, not a string",
                        True,
                    )
                )
        kind = cond.get("type")
        fault = condition_type_fault(kind) if isinstance(kind, str) else None
        if fault is not None:
            issues.append(FieldIssue(f"status.conditions[{i}].type", fault))
        status = cond.get("status")
        if isinstance(status, str) and status not in CONDITION_STATUSES:
            # a ConditionStatus is True, False or Unknown (k8s.io/api core/v1 types.go): "true"
            # is none of them, and read as "not True" (mutations of the shared export: an
            # AgentConnected condition of status "true" changed RR-BKP-011 unnamed)
            issues.append(
                FieldIssue(
                    f"status.conditions[{i}].status",
                    f"is {status!r:.40}, not True, False or Unknown",
                    True,
                )
            )
    domain = spec.get("domain") if isinstance(spec, dict) else None
    if isinstance(domain, dict) and domain.get("devices") is None:
        # DomainSpec.devices is no pointer in KubeVirt's API: every VMI the API server holds
        # has one (at least {}); a null one hides the running disks and NICs (RR-DSK-003)
        issues.append(FieldIssue("spec.domain.devices", "is missing or null (every VMI has one)"))
    for path in ("spec.domain", "spec.domain.devices"):
        # the running machine's devices (RR-DSK-003 compares them with the VM spec): of
        # another type, they are unknown (mutations seed 4001: changed a verdict unnamed)
        value = dig(obj, *path.split("."))
        if value is not None and not isinstance(value, dict):
            issues.append(FieldIssue(path, f"is a {type(value).__name__}, not a mapping", True))
    disks = read_list(obj, "spec.domain.devices.disks", issues) or []
    issues += _blank_names(disks, "spec.domain.devices.disks")
    filesystems = dig(obj, "spec", "domain", "devices", "filesystems")
    needing = [d for d in disks if needs_volume(d)]
    needing += filesystems if isinstance(filesystems, list) else [filesystems] * bool(filesystems)
    if volumes is None and needing and not _failed(issues, "spec.volumes"):
        # A VMI started from a VirtualMachine carries the template's volumes, and KubeVirt
        # admits a disk (but an empty CD-ROM tray) or filesystem only with its volume. A VMI
        # with neither lists none: ``volumes`` is omitempty (kubevirt staging/src/kubevirt.io/
        # api/core/v1/types.go VirtualMachineInstanceSpec), as for a diskless VM booting from
        # the network or a kernelBoot container (examples/vmi-kernel-boot.yaml; false alarm
        # fp34: such a VM was UNKNOWN and the audit incomplete).
        issues.append(
            FieldIssue(
                "spec.volumes",
                f"is missing while {len(needing)} disk(s) or filesystem(s) are listed (a VMI "
                "started from a VM lists its volumes)",
            )
        )
    # the bus of each running disk and the model of each running NIC (RR-DSK-003 compares
    # them with the VM spec): KubeVirt's mutating webhook sets both on every VMI
    issues += [
        FieldIssue(f"spec.domain.devices.{path}", why, True)
        for path, why in device_issues(dig(obj, "spec", "domain", "devices"))
    ]
    for i, disk in enumerate(disks):
        # which disk the running guest boots from (RR-DSK-003): an unsigned integer in
        # KubeVirt's API (mutation seed 4441: named by the check only, not here)
        order = disk.get("bootOrder") if isinstance(disk, dict) else None
        if order is not None and not boot_order_ok(order):
            # KubeVirt's admitter refuses a bootOrder below 1, as the VM's (vmspec), so a
            # -1 is damage: it read as the disk the guest boots from (fz18, ``negative``)
            issues.append(
                FieldIssue(
                    f"spec.domain.devices.disks[{i}].bootOrder",
                    f"is {order!r}, not a positive integer",
                    True,
                )
            )
    machine = dig(obj, "spec", "domain", "machine")
    if machine is not None and not (
        isinstance(machine, dict) and isinstance(machine.get("type", ""), str)
    ):
        issues.append(FieldIssue("spec.domain.machine", "is no mapping with a string type", True))
    statuses = read_list(obj, "status.volumeStatus", issues) or []
    interfaces = read_list(obj, "spec.domain.devices.interfaces", issues) or []
    macs = []
    notes = _mac_notes(interfaces, issues)
    for i, entry in enumerate(read_list(obj, "status.interfaces", issues, named=False) or []):
        mac = entry.get("mac") if isinstance(entry, dict) else None
        if mac is not None and not isinstance(mac, str):
            issues.append(FieldIssue(f"status.interfaces[{i}].mac", "is not a string"))
        elif isinstance(mac, str) and mac and isinstance(entry.get("name"), str):
            macs.append((entry["name"], mac))
            if not MAC_RE.match(mac):
                # virt-handler reports an interface's MAC as the domain has it (libvirt's
                # own spelling) or, for SR-IOV, as the VMI spec pins it
                # (pkg/network/setup/netstat.go ifacesStatusFromDomainInterfaces)
                notes.append(FieldIssue(f"status.interfaces[{i}].mac", _mac_note(mac, False)))
    # when the VMI started: whether a Backup saw its pod's annotations (protection._listed_in)
    read_time(obj, "metadata.creationTimestamp", issues)
    serial = read_str(obj, "spec.domain.firmware.serial", issues, empty_ok=True)
    issues += _vmi_firmware_issues(obj)
    # any other null its schema prunes (a damaged copy; bench.mutations null_scalar: a
    # condition status of null read as none, unnamed)
    # and any key its schema does not spell so (``Serial``: mutations key_case, seed 440)
    issues += [
        FieldIssue(path, why)
        for path, why in [
            *nulls_below(obj, ("spec", "status"), VMI_NULLABLE),
            *miscased_keys(obj),
        ]
        if not any(_within(path, i.field) for i in issues)
    ]
    return VirtualMachineInstanceRecord(
        namespace=namespace,
        name=name,
        phase=read_enum(obj, "status.phase", VMI_PHASES, issues),
        # absent and needed by no disk: none (omitempty), not unreadable
        volumes=(
            tuple(v["name"] for v in volumes)
            if volumes is not None
            else None
            if _failed(issues, "spec.volumes")
            else ()
        ),
        hotplug_volumes=tuple(s["name"] for s in statuses if "hotplugVolume" in s),
        interfaces=tuple(i["name"] for i in interfaces),
        firmware_uuid=read_uuid(obj, "spec.domain.firmware.uuid", issues),
        issues=tuple(issues),
        macs=tuple(macs),
        firmware_serial=serial or None,
        notes=tuple(notes),
    )


def _mac_note(mac: str, spec: bool) -> str:
    """Why a VMI's MAC ``mac`` that does not parse is no value the cluster holds (``spec``:
    the VMI spec's ``macAddress``, else ``status.interfaces[].mac``)."""
    why = (
        "KubeVirt's VMI admission refuses it (link.ValidateMacAddress)"
        if spec
        else "virt-handler reports the MAC the domain runs with"
    )
    return f"is {mac!r:.40}, not a MAC address: {why}, so the export is damaged or edited"


def _mac_notes(interfaces: list[Any], issues: list[FieldIssue]) -> list[FieldIssue]:
    """A note for each of a VMI's ``spec.domain.devices.interfaces`` (named entries, as
    :func:`~auditor.inventory.fields.read_list` gives them) whose ``macAddress`` is a string
    that does not parse as a MAC address (:data:`~auditor.inventory.fields.MAC_RE`, Go's
    ``net.ParseMAC`` of 6 bytes); an issue in ``issues`` for one of another type.

    KubeVirt's admission refuses either ("malformed MAC address",
    https://github.com/kubevirt/kubevirt/blob/main/pkg/network/link/mac.go
    ``ValidateMacAddress``, called by ``validateMacAddress`` in
    https://github.com/kubevirt/kubevirt/blob/main/pkg/network/admitter/netiface.go), and a
    VMI's spec does not change once created. A string is compared with the VM's MAC as it is
    (RR-NIC-001: a mismatch FAILs, no better than the MAC it stands for), so it is a note
    (round h43c: unnamed before, m42's seeds 4204 and 4206). Of another type it was read as
    unset and a mismatch passed (AT_RISK -> READY): an issue, RR-NIC-001 gives ERROR. An
    empty one pins nothing (valid).
    """
    out = []
    for entry in interfaces:
        mac = entry.get("macAddress")
        if mac is None or mac == "":
            continue
        path = f"spec.domain.devices.interfaces[{entry['name']}].macAddress"
        if not isinstance(mac, str):
            issues.append(FieldIssue(path, f"is a {type(mac).__name__}, not a string", True))
        elif not MAC_RE.match(mac):
            out.append(FieldIssue(path, _mac_note(mac, True)))
    return out


def _vmi_firmware_issues(obj: dict[str, Any]) -> list[FieldIssue]:
    """The VMI's bootloader and its switches of another type: ``bootloader``, ``bios`` or
    ``efi`` that is no mapping (null included: the API server prunes one), an EFI's
    ``secureBoot``/``persistent`` or a TPM's ``enabled``/``persistent`` that is no boolean
    (kubevirt.io/api core/v1 ``Bootloader``, ``EFI``, ``TPMDevice``,
    https://github.com/kubevirt/kubevirt/blob/main/staging/src/kubevirt.io/api/core/v1/schema.go).
    The VM's are named by :func:`auditor.inventory.vmvalidate.validate_vm`; the VMI's, which
    RR-DSK-003 reads for the firmware the guest booted, were named by none (round h48b)."""
    out: list[FieldIssue] = []
    loader = dig(obj, "spec", "domain", "firmware", "bootloader")
    fw = dig(obj, "spec", "domain", "firmware")
    base = "spec.domain.firmware.bootloader"
    if isinstance(fw, dict) and "bootloader" in fw and not isinstance(loader, dict):
        out.append(FieldIssue(base, f"is {_type_name(loader)}, not a mapping", True))
    elif isinstance(loader, dict):
        for key in ("bios", "efi"):
            if key in loader and not isinstance(loader[key], dict):
                out.append(
                    FieldIssue(
                        f"{base}.{key}", f"is {_type_name(loader[key])}, not a mapping", True
                    )
                )
        efi = loader.get("efi")
        efi = efi if isinstance(efi, dict) else {}
        for key in ("secureBoot", "persistent"):
            if key in efi and not isinstance(efi[key], bool):
                out.append(FieldIssue(f"{base}.efi.{key}", "is not true or false", True))
    tpm = dig(obj, "spec", "domain", "devices", "tpm")
    if tpm is not None and not isinstance(tpm, dict):
        out.append(
            FieldIssue("spec.domain.devices.tpm", f"is {_type_name(tpm)}, not a mapping", True)
        )
    switches = tpm if isinstance(tpm, dict) else {}
    for key in ("enabled", "persistent"):
        if key in switches and not isinstance(switches[key], bool):
            out.append(FieldIssue(f"spec.domain.devices.tpm.{key}", "is not true or false", True))
    return out


def _type_name(value: Any) -> str:
    return "null" if value is None else f"a {type(value).__name__}"


def _within(path: str, other: str) -> bool:
    """True when one field path lies under the other (or they are one)."""
    short, long = sorted((path, other), key=len)
    return long == short or long.startswith((short + ".", short + "["))


def _failed(issues: list[FieldIssue], path: str) -> bool:
    return any(i.field == path for i in issues)


#: CDI's DataVolumePhase values (containerized-data-importer, api/pkg/apis/core/v1beta1/types.go).
DATAVOLUME_PHASES = (
    "Pending",
    "PVCBound",
    "ImportScheduled",
    "ImportInProgress",
    "CloneScheduled",
    "CloneInProgress",
    "SnapshotForSmartCloneInProgress",
    "CloneFromSnapshotSourceInProgress",
    "SmartClonePVCInProgress",
    "CSICloneInProgress",
    "ExpansionInProgress",
    "NamespaceTransferInProgress",
    "UploadScheduled",
    "UploadReady",
    "WaitForFirstConsumer",
    "PendingPopulation",
    "PrepClaimInProgress",
    "RebindInProgress",
    "Paused",
    "Succeeded",
    "Failed",
    "Unknown",
)


def parse_datavolume(obj: dict[str, Any]) -> DataVolumeRecord:
    """Build a DataVolume record; a phase outside CDI's enum (``succeeded``) is an issue."""
    issues: list[FieldIssue] = []
    namespace, name = _names(obj)
    # "" is Kubernetes' "no class" (static binding only), not a malformed value
    # (https://kubernetes.io/docs/concepts/storage/persistent-volumes/#class-1)
    storage_class = read_str(obj, "spec.storage.storageClassName", issues, empty_ok=True)
    if storage_class is None:
        storage_class = read_str(obj, "spec.pvc.storageClassName", issues, empty_ok=True)
    issues += clone_source_issues(obj, "spec.source")
    spec = obj.get("spec")
    if isinstance(spec, dict) and "sourceRef" in spec and spec["sourceRef"] is None:
        issues.append(FieldIssue("spec.sourceRef", "is null, which the API server never stores"))
    elif isinstance(spec, dict) and "sourceRef" in spec:
        # DataVolumeSourceRef: kind (DataSource) and name required, namespace optional
        read_str(obj, "spec.sourceRef.kind", issues, required=True)
        read_str(obj, "spec.sourceRef.name", issues, required=True)
        read_str(obj, "spec.sourceRef.namespace", issues)
    status = obj.get("status")
    if isinstance(status, dict) and "phase" in status and status["phase"] is None:
        issues.append(FieldIssue("status.phase", "is null, which the API server never stores"))
    elif isinstance(status, dict) and "phase" not in status and status:
        # CDI writes the phase with the DataVolume's first status (containerized-data-importer
        # pkg/controller/datavolume: Pending, then on): a status holding progress or
        # conditions without it lost it. Read as "no phase", a Succeeded DataVolume's
        # adoption check and a Pending one's unfinished image both went unjudged (fz39,
        # bench.mutations delete, seed 11301: UNKNOWN -> READY, nothing named)
        held = ", ".join(sorted(str(k) for k in status)[:3])
        issues.append(FieldIssue("status.phase", f"is missing although status holds {held}"))
    phase = read_enum(obj, "status.phase", DATAVOLUME_PHASES, issues)
    ready = ready_since(obj, issues) if phase == "Succeeded" else None
    return DataVolumeRecord(
        namespace=namespace,
        name=name,
        phase=phase,
        storage_class=storage_class,
        issues=tuple(issues),
        created=parse_rfc3339(dig(obj, "metadata", "creationTimestamp")),
        ready_since=ready,
    )


def ready_since(obj: dict[str, Any], issues: list[FieldIssue]) -> datetime | None:
    """When a Succeeded DataVolume's ``Ready`` condition turned ``True`` (UTC), or None.

    CDI sets ``Ready`` to ``True`` exactly while the phase is ``Succeeded``, and stamps
    ``lastTransitionTime`` with ``metav1.Now()`` whenever a condition's status changes
    (containerized-data-importer pkg/controller/datavolume/controller-base.go
    ``updateConditions``; conditions.go ``updateCondition``): so the time is when the DataVolume
    last became Succeeded, the fill finished. A ``Ready``/``True`` condition whose
    ``lastTransitionTime`` is missing, null or no RFC 3339 time was edited (CDI writes one
    with every condition it creates): an issue, read as None. No ``Ready`` condition (an old
    CDI, or a status written by hand) gives None, nothing named: no time, no claim
    (round h47b)."""
    conditions = dig(obj, "status", "conditions")
    if not isinstance(conditions, list):
        return None
    for i, cond in enumerate(conditions):
        if not (isinstance(cond, dict) and cond.get("type") == "Ready"):
            continue
        if cond.get("status") != "True":
            return None
        value = cond.get("lastTransitionTime")
        parsed = parse_rfc3339(value) if isinstance(value, str | datetime) else None
        if parsed is None:
            path = f"status.conditions[{i}].lastTransitionTime"
            what = "missing" if value is None else f"{str(value)[:40]!r}, not an RFC 3339 time"
            issues.append(
                FieldIssue(
                    path,
                    f"is {what}: CDI stamps every condition it writes, so when the "
                    "DataVolume finished filling its PVC is unknown",
                )
            )
        return parsed
    return None


#: The source kinds of a DataVolume (and of a DataSource) that name another object a
#: never-filled disk is filled from (containerized-data-importer api/pkg/apis/core/v1beta1
#: types.go: DataVolumeSourcePVC, DataVolumeSourceSnapshot; both with ``name`` and
#: ``namespace``, ``""`` read as the object's own namespace)
CLONE_SOURCES = ("pvc", "snapshot")


def clone_source_issues(obj: Any, path: str) -> list[FieldIssue]:
    """Issues of the clone sources at ``path`` (``spec.source``) of a DataVolume or DataSource:
    ``source`` or its ``pvc``/``snapshot`` null or no mapping, a ``name`` missing, empty or
    of another type, a ``namespace`` of another type. Read as absent, a clone whose source
    was gone counted as "a source the export cannot judge" and the never-filled disk as held
    (fz39: NOT_READY -> READY, nothing named). A CDI object is a custom resource: the API
    server prunes its nulls (https://kubernetes.io/docs/tasks/extend-kubernetes/
    custom-resources/custom-resource-definitions/#defaulting-and-nullable)."""
    issues: list[FieldIssue] = []
    parent, _, leaf = path.rpartition(".")
    holder = dig(obj, *parent.split("."))
    if isinstance(holder, dict) and leaf in holder and holder[leaf] is None:
        return [FieldIssue(path, "is null, which the API server never stores")]
    source = dig(obj, *path.split("."))
    if source is not None and not isinstance(source, dict):
        return [FieldIssue(path, f"is a {type(source).__name__}, not a mapping", True)]
    if not isinstance(source, dict):
        return issues
    for key in CLONE_SOURCES:
        if key not in source:
            continue
        entry = source[key]
        if entry is None:
            issues.append(FieldIssue(f"{path}.{key}", "is null, which the API server never stores"))
            continue
        if not isinstance(entry, dict):
            what = type(entry).__name__
            issues.append(FieldIssue(f"{path}.{key}", f"is a {what}, not a mapping", True))
            continue
        read_str(obj, f"{path}.{key}.name", issues, required=True)
        read_str(obj, f"{path}.{key}.namespace", issues, empty_ok=True)
    return issues


PARSERS: dict[str, Callable[[dict[str, Any]], Record]] = {
    "PersistentVolume": parse_pv,
    "PersistentVolumeClaim": parse_pvc,
    "StorageClass": parse_storage_class,
    "VirtualMachineInstance": parse_vmi,
    "DataVolume": parse_datavolume,
}


def parse_record(
    kind: str, obj: dict[str, Any], origin: str | None
) -> tuple[Record, list[CollectionProblem]]:
    """Parse ``obj`` of ``kind`` (a key of :data:`PARSERS`) into its record and problems.

    ``origin`` is where the object was read (``ClusterData.origins``). Never raises
    for malformed content; raises KeyError for a kind without a parser.
    """
    record = PARSERS[kind](obj)
    namespace, name = _names(obj)
    issues = list(_containers(obj)) + list(record.issues)
    problems = [
        to_problem(i, kind=kind, namespace=namespace, name=name, file=origin) for i in issues
    ]
    return record, problems


def _containers(obj: dict[str, Any]) -> list[FieldIssue]:
    """``metadata``, ``spec`` and ``status`` must be mappings (fields under a broken one
    read as absent, which must not pass for "not set"), and ``metadata.uid`` a string
    (:func:`uid_issue`)."""
    issues = [
        FieldIssue(key, f"is a {type(obj[key]).__name__}, not a mapping", True)
        for key in ("metadata", "spec", "status")
        if key in obj and not isinstance(obj[key], dict)
    ]
    uid = uid_issue(obj)
    return issues if uid is None else [*issues, uid]


def uid_issue(obj: Any) -> FieldIssue | None:
    """The issue of a ``metadata.uid`` that is no string
    (:func:`~auditor.inventory.fields.uid_fault`)."""
    fault = uid_fault(obj)
    return None if fault is None else FieldIssue("metadata.uid", fault, True)
