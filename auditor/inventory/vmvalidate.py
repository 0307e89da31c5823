"""Validate the VirtualMachine fields the checks read: references, types, enums and formats.

:func:`validate_vm` returns ``(field path, reason)`` pairs, the shape of
``VMSpec.problems``; the engine makes every check that reads a listed field
(see ``CheckSpec.reads``) give ERROR naming it. Rules follow KubeVirt's API
and admission webhook (https://kubevirt.io/api-reference/main/definitions.html,
https://kubevirt.io/user-guide/storage/disks_and_volumes/,
https://kubevirt.io/user-guide/network/interfaces_and_networks/,
https://kubevirt.io/user-guide/compute/run_strategies/):

- every disk names a volume of the same name, and every volume names exactly
  one known source, whose PVC/DataVolume name is a non-empty string;
- every Secret or ConfigMap a volume or access credential refers to is named by a
  non-empty string (the objects a backup must hold to restore the VM's configuration);
- every interface names a network and every network is used by an interface;
- no field of ``spec`` holds a null the API server prunes (:mod:`auditor.inventory.prunednulls`)
  or has a key no KubeVirt field is spelled as (:mod:`auditor.inventory.fieldcase`);
- ``firmware.uuid`` is a UUID, ``macAddress`` a MAC, ``runStrategy`` one of
  KubeVirt's run strategies, ``metadata.creationTimestamp`` RFC 3339.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from auditor.inventory.fieldcase import miscased_keys
from auditor.inventory.fields import (
    MAC_RE,
    UUID_RE,
    condition_key_faults,
    condition_type_fault,
    name_fault_of,
    uid_fault,
)
from auditor.inventory.prunednulls import pruned_nulls
from auditor.inventory.volmig import migration_issues
from auditor.kubevalues import dig, parse_rfc3339
from auditor.netdata import FACTS_KEY

__all__ = [
    "validate_vm",
    "device_issues",
    "DISK_BUSES",
    "NIC_MODELS",
    "EVICTION_STRATEGIES",
    "RUN_STRATEGIES",
    "VOLUME_SOURCES",
    "volume_problems",
]

#: kubevirt.io/api core/v1 EvictionStrategy
EVICTION_STRATEGIES = ("None", "LiveMigrate", "LiveMigrateIfPossible", "External")
RUN_STRATEGIES = ("Always", "RerunOnFailure", "Manual", "Halted", "Once", "WaitAsReceiver")
#: Every volume source KubeVirt knows (``spec.template.spec.volumes[].<source>``).
VOLUME_SOURCES = (
    "cloudInitConfigDrive",
    "cloudInitNoCloud",
    "configMap",
    "containerDisk",
    # a launcher container path shared by virtiofs (credentials or tokens injected into the
    # pod), KubeVirt v1.8+ with ContainerPathVolumes (api core/v1 ContainerPathVolumeSource)
    "containerPath",
    "dataVolume",
    "downwardAPI",
    "downwardMetrics",
    "emptyDisk",
    "ephemeral",
    "hostDisk",
    "memoryDump",
    "persistentVolumeClaim",
    "secret",
    "serviceAccount",
    "sysprep",
)
_REJECTED = " (KubeVirt's admission webhook rejects such a VM)"
_BASE = "spec.template.spec"
_DEVICES = f"{_BASE}.domain.devices"
_DOMAIN = f"{_BASE}.domain"


def _named(value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        return []
    return [
        v for v in value if isinstance(v, dict) and isinstance(v.get("name"), str) and v["name"]
    ]


def validate_vm(vm: dict[str, Any]) -> list[tuple[str, str]]:
    """Return the malformed fields of ``vm`` (a VirtualMachine dict) as (path, reason)."""
    problems: list[tuple[str, str]] = []
    tspec = dig(vm, "spec", "template", "spec")
    if not isinstance(tspec, dict):
        return problems  # read_vm_spec reports the missing template spec itself
    _check_metadata(vm, problems)
    _check_matchers(vm, problems)
    _check_storage(tspec, problems)
    _check_object_refs(tspec, problems)
    _check_network(tspec, problems)
    _check_device_switches(tspec, problems)
    devices = dig(tspec, "domain", "devices")
    problems += [(f"{_DEVICES}.{path}", why + _REJECTED) for path, why in device_issues(devices)]
    _check_formats(vm, tspec, problems)
    _check_restart_inputs(vm, tspec, problems)
    problems += migration_issues(vm)
    named = [path for path, _ in problems]
    problems += [
        (path, why)
        for path, why in [*pruned_nulls(vm), *miscased_keys(vm)]
        if not any(_overlaps(path, other) for other in named)
    ]
    return problems


def _overlaps(path: str, other: str) -> bool:
    """True when one path lies under the other (a null already named by a specific rule)."""
    short, long = sorted((path, other), key=len)
    return long == short or long.startswith((short + ".", short + "["))


#: Kubernetes condition statuses (https://kubernetes.io/docs/reference/kubernetes-api/
#: common-definitions/ Condition): anything else is no status the API server writes.
_CONDITION_STATUSES = ("True", "False", "Unknown")


def _check_restart_inputs(
    vm: dict[str, Any], tspec: dict[str, Any], problems: list[tuple[str, str]]
) -> None:
    """What RR-DSK-003 reads besides the devices: the VM's conditions (``RestartRequired``)
    and the machine type it states. Of another type they are unknown, never "no pending
    change" (red team: a condition status of ``true`` or a machine type of 42 passed)."""
    conditions = dig(vm, "status", "conditions")
    status = vm.get("status")
    if isinstance(status, dict) and "conditions" in status and conditions is None:
        # the API server prunes a null field, so no export of a stored VM holds one; read as
        # "no conditions", a pending RestartRequired vanished (bench.mutations null_list:
        # RR-DSK-003 FAIL -> PASS, AT_RISK -> READY)
        problems.append(("status.conditions", "is null, which the API server never stores"))
    if conditions is not None and not isinstance(conditions, list):
        problems.append(("status.conditions", f"is a {type(conditions).__name__}, not a list"))
    for i, cond in enumerate(conditions if isinstance(conditions, list) else []):
        if not isinstance(cond, dict):
            problems.append((f"status.conditions[{i}]", "is not an object"))
            continue
        keys = [
            (f"status.conditions[{i}]{'' if f.startswith('[') else '.'}{f}", why)
            for f, why, _ in condition_key_faults(cond)
        ]
        problems += keys
        named = {f for f, _ in keys}
        kind, status = cond.get("type"), cond.get("status")
        if f"status.conditions[{i}].type" in named or f"status.conditions[{i}].status" in named:
            pass  # the condition's type or status is missing from this copy: named above
        elif not isinstance(kind, str):
            problems.append((f"status.conditions[{i}].type", f"is {kind!r}, not a string"))
        elif (fault := condition_type_fault(kind)) is not None:
            problems.append((f"status.conditions[{i}].type", fault))
        elif status not in _CONDITION_STATUSES:
            problems.append(
                (f"status.conditions[{i}].status", f"is {status!r}, not True, False or Unknown")
            )
        changed = cond.get("lastTransitionTime")
        if changed is not None and parse_rfc3339(changed) is None:
            # since when a stopped VM has been stopped (its Ready condition): the plugin's
            # refusals of a running VM hang on it (red team rt10: a time written 30/11/2026
            # read as "stopped before every Backup", NOT_READY -> AT_RISK). A metav1.Time:
            # the API server writes RFC 3339 only
            problems.append(
                (
                    f"status.conditions[{i}].lastTransitionTime",
                    f"is {changed!r:.40}, not an RFC 3339 time",
                )
            )
    machine = dig(tspec, "domain", "machine")
    if machine is not None and not isinstance(machine, dict):
        problems.append((f"{_DOMAIN}.machine", f"is a {type(machine).__name__}, not a mapping"))
    elif isinstance(machine, dict) and not isinstance(machine.get("type", ""), str):
        problems.append(
            (f"{_DOMAIN}.machine.type", f"is a {type(machine['type']).__name__}, not a string")
        )


#: Boolean switches of the VM's devices the checks read (kubevirt.io/api/core/v1 Devices): of
#: another type, whether KubeVirt adds a pod interface is unknown (mutations seed 4001).
_DEVICE_SWITCHES = ("autoattachPodInterface",)


#: KubeVirt's disk buses and NIC models (kubevirt.io/api core/v1 DiskBus; the VMI admitter's
#: valid interface models): the API is case-sensitive, so ``VIRTIO`` is none of them.
DISK_BUSES = ("virtio", "sata", "scsi", "usb")
NIC_MODELS = ("e1000", "e1000e", "igb", "ne2k_pci", "pcnet", "rtl8139", "virtio")
#: Per device list, the string fields the checks compare between the VM and its VMI (a disk's
#: bus, a NIC's model: RR-DSK-003) with the values KubeVirt accepts.
_DEVICE_ENUMS = {
    "disks": (("disk", "bus"), ("cdrom", "bus"), ("lun", "bus")),
    "interfaces": ((None, "model"),),
}
_DEVICE_VALUES = {"bus": DISK_BUSES, "model": NIC_MODELS}


#: An interface's binding keys KubeVirt counts: the binding methods (``InterfaceBindingMethod``)
#: and a binding plugin (``binding``)
#: (https://github.com/kubevirt/kubevirt/blob/main/pkg/network/admitter/binding.go
#: ``countInterfaceBindings``)
_BINDING_KEYS = (
    "bridge",
    "masquerade",
    "sriov",
    "passtBinding",
    "binding",
)

#: The core bindings KubeVirt discontinued in v1.3, and its webhook's words refusing each
#: (https://github.com/kubevirt/kubevirt/blob/main/pkg/network/admitter/discontinued.go
#: ``validateDiscontinuedBindings``)
_DISCONTINUED_BINDINGS = {
    "slirp": "Slirp interface support has been discontinued since v1.3",
    "macvtap": "Macvtap network binding has been discontinued since v1.3",
    "passt": "Passt network binding has been discontinued since v1.3",
}


def device_issues(devices: Any) -> list[tuple[str, str]]:
    """``(path below devices, reason)`` for each disk bus or NIC model of ``devices`` (a VM
    template's or a VMI's ``domain.devices``) that is set but is no string, or a string
    KubeVirt does not know, and each interface that declares no binding or more than one
    (:func:`_binding_issues`).

    Of another type, the bus or model read as "left to KubeVirt's default" and was not
    compared: a disk whose bus changed while the VM ran passed RR-DSK-003 (AT_RISK -> READY,
    bench.mutations wrong_type); a case variant changed the check with nothing named
    (enum_case). Disks and interfaces are named as the VM's other device problems are
    (``disks[<name>]``; ``disks[<index>]`` for an entry without a name).
    """
    out: list[tuple[str, str]] = []
    if not isinstance(devices, dict):
        return out
    for listed, fields in _DEVICE_ENUMS.items():
        entries = devices.get(listed)
        for i, entry in enumerate(entries if isinstance(entries, list) else []):
            if not isinstance(entry, dict):
                continue  # named by the list readers
            label = entry.get("name") if isinstance(entry.get("name"), str) else i
            for section, key in fields:
                body = entry if section is None else entry.get(section)
                if not isinstance(body, dict) or key not in body:
                    continue
                value, path = (
                    body[key],
                    f"{listed}[{label}].{section + '.' if section else ''}{key}",
                )
                if not isinstance(value, str):
                    out.append((path, f"is {_type_name(value)}, not a string"))
                elif value not in _DEVICE_VALUES[key]:
                    allowed = ", ".join(_DEVICE_VALUES[key])
                    out.append((path, f"is {value!r:.40}, not one of {allowed}"))
    return out + _binding_issues(devices.get("interfaces"))


def _binding_issues(entries: Any) -> list[tuple[str, str]]:
    """An issue for each interface that declares two bindings or more (``masquerade`` and
    ``bridge``, ``bridge`` and a ``binding`` plugin), or none (``{name: nic0}``; a binding
    written ``null``, which Go decodes as none, is named at its key as every stored null
    is), and for each discontinued core binding (``slirp``, ``macvtap``, ``passt``) an
    interface holds. KubeVirt's webhook refuses them all:
    "logical <name> interface must have exactly one binding method or binding plugin"
    (https://github.com/kubevirt/kubevirt/blob/main/pkg/network/admitter/binding.go
    ``validateInterfaceBindingExists``, ``countInterfaceBindings``; for no binding since
    kubevirt commit a90ada8, July 2026: before it the webhook let the VM in and virt-handler
    failed its VMI on every sync, "undefined binding method",
    https://github.com/kubevirt/kubevirt/blob/main/pkg/network/setup/netpod/discover.go
    ``discover``). KubeVirt fills in no binding: ``spec.configuration.network.
    defaultNetworkInterface`` only shapes the pod interface it adds to a VM that lists no
    interface and no network (https://github.com/kubevirt/kubevirt/blob/main/pkg/network/
    vmispec/defaults.go ``SetDefaultNetworkInterface``). So which binding the guest's NIC
    has is unknown: read as the first found (or none), the NIC identity checks judged a
    binding the VM may not have (b40: masquerade beside bridge passed RR-NIC-001, unnamed).

    The discontinued bindings (round h44a): ``countInterfaceBindings`` does not count them,
    and ``validateDiscontinuedBindings``
    (https://github.com/kubevirt/kubevirt/blob/main/pkg/network/admitter/discontinued.go),
    run by ``ValidateCreation`` and ``Validate`` (pkg/network/admitter/validator.go) for a
    VM, a VMI and the VMI virt-controller creates from a VM, refuses each at
    ``interfaces[<i>].<key>`` ("Slirp interface support has been discontinued since v1.3").
    Since v1.3.0 KubeVirt refuses a new VM or VMI with any of them: slirp in
    pkg/network/admitter (kubevirt commit 328754d, "Validate that new VM/VMI is not using
    the SLIRP binding"); macvtap and passt through their feature gates, Discontinued in
    v1.3.0 (pkg/virt-config/deprecation/feature-gates.go: gate off, "Macvtap feature gate
    is not enabled"; gate on, the discontinued message), and unconditionally since v1.8.0
    (commits dc44ee2, 3a2ab61). Older KubeVirt ran them; the release is not consulted: the
    version-independent reading names the key (ERROR, a false alarm on KubeVirt before 1.3,
    never a PASS on a binding KubeVirt refuses). The interface is not named a second time
    for holding no counted binding; beside a counted one it is named at the key alone.

    Shapes: ``entries`` is the ``interfaces`` list (anything else: no issue); each issue is
    ``("interfaces[<name>]", reason)``, or ``("interfaces[<name>].<key>", reason)`` for a
    discontinued binding; ``interfaces[<index>]`` for an entry without a name.
    """
    out: list[tuple[str, str]] = []
    for i, entry in enumerate(entries if isinstance(entries, list) else []):
        if not isinstance(entry, dict):
            continue  # named by the list readers
        label = entry.get("name") if isinstance(entry.get("name"), str) else i
        gone = [k for k in _DISCONTINUED_BINDINGS if entry.get(k) is not None]
        out += [
            (
                f"interfaces[{label}].{key}",
                f"is the core {key} binding, which KubeVirt refuses since v1.3: "
                f'"{_DISCONTINUED_BINDINGS[key]}"',
            )
            for key in gone
        ]
        found = [k for k in _BINDING_KEYS if entry.get(k) is not None]
        if len(found) == 1 or (gone and not found):
            continue
        if found:
            what = f"declares {len(found)} bindings ({', '.join(found)})"
        elif any(k in entry for k in (*_BINDING_KEYS, *_DISCONTINUED_BINDINGS)):
            continue  # ``bridge: null``: named at its key (prunednulls.pruned_nulls)
        else:
            what = (
                "declares no binding (KubeVirt fills in none: defaultNetworkInterface applies "
                "only to a VM listing no interface and no network)"
            )
        out.append(
            (
                f"interfaces[{label}]",
                f"{what}; KubeVirt requires exactly one binding method or binding plugin",
            )
        )
    return out


def _type_name(value: Any) -> str:
    return "null" if value is None else f"a {type(value).__name__}"


def _check_device_switches(tspec: dict[str, Any], problems: list[tuple[str, str]]) -> None:
    devices = dig(tspec, "domain", "devices")
    if not isinstance(devices, dict):
        return
    for key in _DEVICE_SWITCHES:
        value = devices.get(key)
        if value is not None and not isinstance(value, bool):
            problems.append(
                (f"{_DEVICES}.{key}", f"is a {type(value).__name__}, not true or false{_REJECTED}")
            )


def _check_matchers(vm: dict[str, Any], problems: list[tuple[str, str]]) -> None:
    """``spec.instancetype`` and ``spec.preference`` name their object (``name``) or ask
    KubeVirt to infer it from a volume (``inferFromVolume``); with neither, which instancetype
    or preference the VM runs with is unknown, never "none" (mutations seed 1103: a null
    name read as no instancetype, and the verdict changed unnamed). Matchers:
    https://kubevirt.io/user-guide/user_workloads/instancetypes/"""
    for key in ("instancetype", "preference"):
        # the revision KubeVirt pinned it to (status.<key>Ref.controllerRevisionRef.name): a
        # reference whose name is no string is a pinned revision of unknown name, never none
        # (mutation seed 5417: a null name made a left-out revision vanish, READY)
        ref = dig(vm, "status", f"{key}Ref")
        revision = dig(ref, "controllerRevisionRef") if isinstance(ref, dict) else None
        if ref is not None and not isinstance(ref, dict):
            problems.append((f"status.{key}Ref", f"is a {type(ref).__name__}, not a mapping"))
        elif revision is not None and not (
            isinstance(revision, dict)
            and isinstance(revision.get("name"), str)
            and revision["name"]
        ):
            problems.append(
                (f"status.{key}Ref.controllerRevisionRef.name", "is missing or no name")
            )
        matcher = dig(vm, "spec", key)
        if not isinstance(matcher, dict):
            continue  # absent; or no mapping, which read_vm_spec names
        name, infer = matcher.get("name"), matcher.get("inferFromVolume")
        if not (isinstance(name, str) and name) and not (isinstance(infer, str) and infer):
            problems.append(
                (
                    f"spec.{key}.name",
                    f"is {'missing' if name is None else repr(name)} and no inferFromVolume is "
                    f"set: which {key} the VM runs with is unknown",
                )
            )
        # the matcher's other strings: a kind that is no string was read as the default kind,
        # a revisionName that is no string as no pinned revision (mutations seed 3617)
        for field in _MATCHER_STRINGS:
            value = matcher.get(field)
            if value is not None and not isinstance(value, str):
                problems.append(
                    (
                        f"spec.{key}.{field}",
                        f"is a {type(value).__name__}, not a string{_REJECTED}",
                    )
                )


#: The string fields of an instancetype or preference matcher besides ``name``
#: (kubevirt.io/api/core/v1 InstancetypeMatcher and PreferenceMatcher).
_MATCHER_STRINGS = ("kind", "revisionName", "inferFromVolume", "inferFromVolumeFailurePolicy")


def _check_metadata(vm: dict[str, Any], problems: list[tuple[str, str]]) -> None:
    created = dig(vm, "metadata", "creationTimestamp")
    if created is None:
        problems.append(("metadata.creationTimestamp", "is missing; the API server always sets it"))
    elif parse_rfc3339(created) is None:
        problems.append(("metadata.creationTimestamp", f"is {created!r}, not RFC 3339"))
    uid = uid_fault(vm)
    if uid is not None:
        # which VM a VirtualMachineSnapshot, a VMI or a claim's owner reference names is
        # told by its UID (b40)
        problems.append(("metadata.uid", uid))
    deleting = dig(vm, "metadata", "deletionTimestamp")
    if deleting is not None and parse_rfc3339(deleting) is None:
        # since when the VM is being deleted decides which Backups skipped it
        problems.append(("metadata.deletionTimestamp", f"is {deleting!r}, not RFC 3339"))
    templates = dig(vm, "spec", "dataVolumeTemplates")
    if templates is not None and (
        not isinstance(templates, list)
        or not all(isinstance(dig(t, "metadata", "name"), str) for t in templates)
    ):
        problems.append(
            ("spec.dataVolumeTemplates", f"is not a list of named DataVolume templates{_REJECTED}")
        )
    elif isinstance(templates, list):
        # a template's name is the DataVolume (and PVC) it makes: "" or one with a blank
        # names none (KubeVirt's webhook requires a DNS-1123 name; fz39 seed 11401, unnamed)
        for i, t in enumerate(templates):
            name = dig(t, "metadata", "name")
            fault = "an empty string" if name == "" else name_fault_of(str(name))
            if fault is not None:
                problems.append(
                    (f"spec.dataVolumeTemplates[{i}].metadata.name", f"is {fault}{_REJECTED}")
                )
    template_meta = dig(vm, "spec", "template", "metadata")
    if template_meta is not None and not isinstance(template_meta, dict):
        # the pod's labels and annotations (Services and Routes select the VM by them) are
        # then unknown, not absent
        problems.append(
            (
                "spec.template.metadata",
                f"is a {type(template_meta).__name__}, not a mapping{_REJECTED}",
            )
        )
    # The VM's labels, and its template's (the pod's: Services select the VM by them);
    # the API server refuses any value that is no string.
    for path in (
        "metadata.labels",
        "metadata.annotations",
        "spec.template.metadata.labels",
        "spec.template.metadata.annotations",
    ):
        value = dig(vm, *path.split("."))
        if value is not None and (
            not isinstance(value, dict)
            or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())
        ):
            problems.append((path, f"is not a mapping of strings to strings{_REJECTED}"))


def _check_storage(tspec: dict[str, Any], problems: list[tuple[str, str]]) -> None:
    raw_volumes = tspec.get("volumes")
    volumes = _named(raw_volumes)
    disks = _named(dig(tspec, "domain", "devices", "disks"))
    filesystems = _named(dig(tspec, "domain", "devices", "filesystems"))
    # a CD-ROM that names no volume is an empty tray, which KubeVirt admits (with its
    # DeclarativeHotplugVolumes feature gate, beta since v1.9: an ISO is inserted and ejected
    # by adding and removing the volume; pkg/virt-api/webhooks/validating-webhook/admitters/
    # vmi-create-admitter.go validateBootOrder); any other disk needs its volume
    needing = [d for d in disks if needs_volume(d)]
    if raw_volumes is None and needing:
        problems.append(
            (f"{_BASE}.volumes", f"is missing while {len(needing)} disk(s) are listed{_REJECTED}")
        )
    volume_names = {v["name"] for v in volumes}
    for what, named in (("volumes", volumes), ("domain.devices.disks", disks)):
        dupes = sorted(k for k, n in Counter(v["name"] for v in named).items() if n > 1)
        if dupes:
            # KubeVirt's admission webhook refuses two volumes (or disks) of one name; which
            # one a reader keeps is a guess
            problems.append((f"{_BASE}.{what}", f"names {', '.join(dupes)} twice{_REJECTED}"))
    for d in needing:
        if d["name"] not in volume_names and raw_volumes is not None:
            problems.append(
                (f"{_DEVICES}.disks[{d['name']}]", f"names no volume of that name{_REJECTED}")
            )
    used = {d["name"] for d in disks} | {f["name"] for f in filesystems}
    for v in volumes:
        _check_volume(v, problems)
        if disks and v["name"] not in used and not _needs_no_disk(v):
            problems.append(
                (
                    f"{_BASE}.volumes[{v['name']}]",
                    "is attached to no disk or filesystem (a renamed disk?)",
                )
            )


def _is_cdrom(disk: dict[str, Any]) -> bool:
    """True for a disk whose device is a CD-ROM (``cdrom`` set, as a mapping)."""
    return isinstance(disk.get("cdrom"), dict)


def needs_volume(disk: Any) -> bool:
    """Whether KubeVirt admits ``disk`` (an entry of ``domain.devices.disks``) only with a
    volume of its name: every disk but a CD-ROM, which may be an empty tray (see
    :func:`_check_storage`). An entry that is no mapping counts as needing one."""
    return not (isinstance(disk, dict) and _is_cdrom(disk))


def _needs_no_disk(volume: dict[str, Any]) -> bool:
    """True for a volume that is in the spec without a disk or filesystem: a hotplugged
    dataVolume/PVC, or a ``memoryDump`` volume, which ``virtctl memory-dump get`` adds to
    the VM spec with no disk (kubevirt pkg/storage/memorydump/memorydump.go,
    https://github.com/kubevirt/kubevirt/blob/main/pkg/storage/memorydump/memorydump.go):
    the target of a memory dump, never a guest disk."""
    if volume.get("memoryDump") is not None:
        return True
    return any(
        dig(volume, s, "hotpluggable") is True for s in ("dataVolume", "persistentVolumeClaim")
    )


def volume_problems(v: dict[str, Any], base: str) -> list[tuple[str, str]]:
    """``(field, reason)`` for one named volume of a VMI (``base``: ``spec``) as for a VM's:
    no or several sources, a source that is no mapping, a claim or DataVolume reference that
    names nothing (bench.mutations delete, seed 252: a VMI's ``dataVolume: {}`` read as a
    volume of no data, unnamed)."""
    problems: list[tuple[str, str]] = []
    _check_volume(v, problems, base)
    return problems


def _check_volume(v: dict[str, Any], problems: list[tuple[str, str]], base: str = _BASE) -> None:
    path = f"{base}.volumes[{v['name']}]"
    sources = [s for s in VOLUME_SOURCES if v.get(s) is not None]
    if not sources:
        other = sorted(k for k in v if k != "name")
        what = f"only unknown keys ({', '.join(other[:3])})" if other else "no source"
        problems.append((path, f"has {what}, not one of KubeVirt's volume sources{_REJECTED}"))
        return
    if len(sources) > 1:
        problems.append((path, f"names {len(sources)} sources ({', '.join(sources)}){_REJECTED}"))
    source = v[sources[0]]
    if not isinstance(source, dict):
        problems.append((f"{path}.{sources[0]}", f"is a {type(source).__name__}, not a mapping"))
        return
    hotplug = source.get("hotpluggable")
    if hotplug is not None and not isinstance(hotplug, bool):
        # a Go bool in KubeVirt's PersistentVolumeClaimVolumeSource/DataVolumeSource: "false"
        # read as true made the disk a hotplugged one (no disk needed, not in the launcher pod)
        problems.append(
            (
                f"{path}.{sources[0]}.hotpluggable",
                f"is a {type(hotplug).__name__}, not true or false{_REJECTED}",
            )
        )
    facts = source.get(FACTS_KEY)
    if isinstance(facts, dict) and isinstance(facts.get("malformed"), str):
        # the redactor stripped the value and kept why it was unusable (auditor.netdata)
        what = str(facts["malformed"])
        field_name = what.split(" ", 1)[0]
        problems.append((f"{path}.{sources[0]}.{field_name}", what.split(" ", 1)[1]))
    key = {"persistentVolumeClaim": "claimName", "dataVolume": "name"}.get(sources[0])
    if key is None and sources[0] == "ephemeral":
        claim = source.get("persistentVolumeClaim")
        if not isinstance(claim, dict):
            problems.append((f"{path}.ephemeral.persistentVolumeClaim", "is not a mapping"))
            return
        source, key, path = claim, "claimName", f"{path}.ephemeral"
    if key is None:
        return
    ref = source.get(key)
    field = f"{path}.{'persistentVolumeClaim' if key == 'claimName' else sources[0]}.{key}"
    if not isinstance(ref, str):
        kind = "missing" if ref is None else f"a {type(ref).__name__}, not a string"
        problems.append((field, f"is {kind}{_REJECTED}"))
    elif not ref:
        problems.append((field, f"is an empty string{_REJECTED}"))
    elif (fault := name_fault_of(ref)) is not None:
        # no claim or DataVolume is named so: the disk would read as one whose claim is gone
        problems.append((field, f"is {fault}: it names no object"))


#: Where a volume source names a Secret or ConfigMap: source -> (reference path below the
#: source, or () for the source itself, and the name's key). KubeVirt's types: Secret- and
#: ConfigMapVolumeSource, CloudInitNoCloud/ConfigDriveSource (``secretRef`` is
#: UserDataSecretRef's JSON name), Sysprep.
_VOLUME_REFS: dict[str, tuple[tuple[tuple[str, ...], str], ...]] = {
    "secret": (((), "secretName"),),
    "configMap": (((), "name"),),
    "cloudInitNoCloud": ((("secretRef",), "name"), (("networkDataSecretRef",), "name")),
    "cloudInitConfigDrive": ((("secretRef",), "name"), (("networkDataSecretRef",), "name")),
    "sysprep": ((("secret",), "name"), (("configMap",), "name")),
}
#: An access credential's Secret: kind -> path to the name (AccessCredentialSecretSource).
_CREDENTIAL_REFS = {
    "sshPublicKey": ("source", "secret", "secretName"),
    "userPassword": ("source", "secret", "secretName"),
}


def _check_object_refs(tspec: dict[str, Any], problems: list[tuple[str, str]]) -> None:
    """A reference to a Secret or ConfigMap that is present but names none: which object a
    restore needs cannot be told (a check that pairs the VM with them must not pass)."""
    for v in _named(tspec.get("volumes")):
        for source, refs in _VOLUME_REFS.items():
            body = v.get(source)
            if not isinstance(body, dict):
                continue  # absent, or named by _check_volume
            for below, key in refs:
                _check_ref(body, below, key, f"{_BASE}.volumes[{v['name']}].{source}", problems)
        body = v.get("containerDisk")
        if isinstance(body, dict):  # else named by _check_volume
            _check_pull_secret(body, f"{_BASE}.volumes[{v['name']}].containerDisk", problems)
    _check_kernel_boot(tspec, problems)
    credentials = tspec.get("accessCredentials")
    if credentials is None:
        return
    if not isinstance(credentials, list):
        problems.append((f"{_BASE}.accessCredentials", "is not a list"))
        return
    for i, cred in enumerate(credentials):
        path = f"{_BASE}.accessCredentials[{i}]"
        if not isinstance(cred, dict):
            problems.append((path, "is not a mapping"))
            continue
        if not any(cred.get(kind) is not None for kind in _CREDENTIAL_REFS):
            # KubeVirt's admitter refuses a credential of no type (exactly one is set): read
            # as none, its Secret vanished from RR-BKP-012 (bench.mutations null_list)
            problems.append((path, f"sets neither {' nor '.join(_CREDENTIAL_REFS)}{_REJECTED}"))
        for kind, (*steps, key) in _CREDENTIAL_REFS.items():
            if cred.get(kind) is not None:
                # the Secret is the credential's only source: KubeVirt's admitter refuses a
                # credential without exactly one source set (red team fz14: a null
                # ``source.secret`` read as "references no Secret", RR-BKP-012 ERROR ->
                # NOT_APPLICABLE)
                _check_ref(cred, (kind, *steps), key, path, problems, required=True)


def _check_kernel_boot(tspec: dict[str, Any], problems: list[tuple[str, str]]) -> None:
    """``domain.firmware.kernelBoot.container``: each a mapping where present, its
    ``imagePullSecret`` as :func:`_check_pull_secret` (round h46: ``imagePullSecret: 5`` was
    read as no reference, RR-BKP-012's high FAIL for the pull Secret a backup leaves out
    became NOT_APPLICABLE, NOT_READY -> AT_RISK, nothing named)."""
    path = f"{_BASE}.domain.firmware"
    body: Any = dig(tspec, "domain", "firmware")
    for part in ("kernelBoot", "container"):
        if not isinstance(body, dict):
            return  # absent, or the firmware named elsewhere
        body, path = body.get(part), f"{path}.{part}"
        if body is not None and not isinstance(body, dict):
            problems.append((path, f"is {_type_name(body)}, not a mapping"))
            return
    if isinstance(body, dict):
        _check_pull_secret(body, path, problems)


def _check_pull_secret(body: dict[str, Any], path: str, problems: list[tuple[str, str]]) -> None:
    """A containerDisk's or kernel boot container's ``imagePullSecret``: a string naming the
    Secret KubeVirt adds to the launcher pod's ``imagePullSecrets`` (empty: none, it is
    ``omitempty``). Source: kubevirt ``ContainerDiskSource`` and ``KernelBootContainer`` in
    https://github.com/kubevirt/kubevirt/blob/main/staging/src/kubevirt.io/api/core/v1/schema.go,
    read by ``renderLaunchManifest`` in
    https://github.com/kubevirt/kubevirt/blob/main/pkg/virt-controller/services/template.go.
    Of another type it names an object nobody can tell: named, never read as no reference."""
    name = body.get("imagePullSecret")
    if name is None or name == "":
        return
    field = f"{path}.imagePullSecret"
    if not isinstance(name, str):
        problems.append(
            (field, f"is {_type_name(name)}, not a string: which Secret it names is unknown")
        )
    elif (fault := name_fault_of(name)) is not None:
        problems.append((field, f"is {fault}: it names no object"))


def _check_ref(
    body: dict[str, Any],
    below: tuple[str, ...],
    key: str,
    path: str,
    problems: list[tuple[str, str]],
    *,
    required: bool = False,
) -> None:
    """``body`` below ``below`` must be absent (null) or a mapping whose ``key`` is a
    non-empty string; with ``required``, absent (or null) is a problem too."""
    ref: Any = body
    for part in below:
        ref = ref.get(part)
        path = f"{path}.{part}"
        if ref is None and required:
            problems.append((path, f"is missing: which object it names is unknown{_REJECTED}"))
            return
        if ref is None:
            return  # no such reference
        if not isinstance(ref, dict):
            problems.append((path, f"is a {type(ref).__name__}, not a mapping"))
            return
    name = ref.get(key)
    if not isinstance(name, str):
        what = "missing" if name is None else f"a {type(name).__name__}, not a string"
        problems.append((f"{path}.{key}", f"is {what}: which object it names is unknown"))
    elif not name:
        problems.append((f"{path}.{key}", "is an empty string: it names no object"))
    elif (fault := name_fault_of(name)) is not None:
        problems.append((f"{path}.{key}", f"is {fault}: it names no object"))


#: kubevirt.io/v1 Bootloader's members, and NetworkSource's
_BOOTLOADERS = frozenset({"bios", "efi"})
_NETWORK_TYPES = ("pod", "multus")


def _check_network(tspec: dict[str, Any], problems: list[tuple[str, str]]) -> None:
    networks = _named(tspec.get("networks"))
    domain = tspec.get("domain")
    if domain is None and (networks or tspec.get("volumes")):
        problems.append((f"{_BASE}.domain", "is missing or null; KubeVirt requires it"))
        return
    raw_ifaces = dig(tspec, "domain", "devices", "interfaces")
    ifaces = _named(raw_ifaces)
    if networks and raw_ifaces is None:
        problems.append(
            (
                f"{_DEVICES}.interfaces",
                f"is missing or null while spec.networks lists {len(networks)} network(s)",
            )
        )
        return
    net_names = {n["name"] for n in networks}
    implicit = not networks and [i["name"] for i in ifaces] == ["default"]
    if not networks and ifaces and not implicit:
        # the mirror of null interfaces: interfaces that name networks the VM does not list.
        # KubeVirt's webhook refuses each (an interface needs its network); read as "no
        # networks", a NIC's multus network (and its missing NAD) vanished from RR-NET-001
        # (red team rt10: FAIL -> NOT_APPLICABLE)
        problems.append(
            (
                f"{_BASE}.networks",
                f"lists no network while {len(ifaces)} interface(s) are listed{_REJECTED}",
            )
        )
    for i in ifaces:
        if i["name"] not in net_names and not implicit:
            problems.append(
                (f"{_DEVICES}.interfaces[{i['name']}]", f"names no network of that name{_REJECTED}")
            )
    iface_names = {i["name"] for i in ifaces}
    for n in networks:
        if n["name"] not in iface_names:
            problems.append((f"{_BASE}.networks[{n['name']}]", "is used by no interface"))
        if not any(isinstance(n.get(t), dict) for t in _NETWORK_TYPES):
            # KubeVirt refuses a network without a source (pod or multus): read as none, the
            # VM's multus checks would not apply at all
            problems.append(
                (
                    f"{_BASE}.networks[{n['name']}]",
                    f"has no network source (pod or multus){_REJECTED}",
                )
            )
        multus = n.get("multus")
        if multus is not None and not (
            isinstance(multus, dict)
            and isinstance(multus.get("networkName"), str)
            and multus["networkName"]
            and name_fault_of(multus["networkName"]) is None
        ):
            problems.append(
                (
                    f"{_BASE}.networks[{n['name']}].multus.networkName",
                    "is not a non-empty string without blanks (a NetworkAttachmentDefinition's "
                    f"name, or namespace/name){_REJECTED}",
                )
            )

    _check_single_pod_network(networks, problems)


def _check_single_pod_network(
    networks: list[dict[str, Any]], problems: list[tuple[str, str]]
) -> None:
    """KubeVirt refuses more than one pod network, more than one Multus default network, and
    a pod network beside a Multus default network ("Pod network cannot be defined when
    Multus default network is defined", ``validateSinglePodNetwork``,
    https://github.com/kubevirt/kubevirt/blob/main/pkg/network/admitter/netsource.go): a
    restore cannot create such a VM. Round r41d: a pod network beside ``multus.default:
    true`` read READY."""
    pods = [n["name"] for n in networks if isinstance(n.get("pod"), dict)]
    defaults = [
        n["name"]
        for n in networks
        if isinstance(n.get("multus"), dict) and n["multus"].get("default") is True
    ]
    if len(pods) > 1:
        problems.append(
            (f"{_BASE}.networks[{pods[1]}]", f"is a second pod network ({pods[0]}){_REJECTED}")
        )
    if len(defaults) > 1:
        problems.append(
            (
                f"{_BASE}.networks[{defaults[1]}].multus.default",
                f"makes a second Multus default network ({defaults[0]}){_REJECTED}",
            )
        )
    if pods and defaults:
        problems.append(
            (
                f"{_BASE}.networks[{defaults[0]}].multus.default",
                f"is true beside the pod network {pods[0]}: KubeVirt defines no pod network "
                f"when a Multus default network is defined{_REJECTED}",
            )
        )


def _check_formats(
    vm: dict[str, Any], tspec: dict[str, Any], problems: list[tuple[str, str]]
) -> None:
    fw = dig(tspec, "domain", "firmware")
    if isinstance(fw, dict):
        uuid = fw.get("uuid")
        if uuid is not None and not (isinstance(uuid, str) and UUID_RE.match(uuid)):
            problems.append(
                (
                    f"{_BASE}.domain.firmware.uuid",
                    f"is {uuid!r:.60}, not a UUID (libvirt needs one for the SMBIOS UUID)",
                )
            )
        loader = fw.get("bootloader")
        efi = dig(loader, "efi")
        if "bootloader" in fw and loader is None:
            # the API server omits an unset bootloader; a null one is a damaged copy, which
            # read as unset would be BIOS (and drop an EFI VM's NVRAM checks)
            problems.append((f"{_BASE}.domain.firmware.bootloader", "is null"))
        elif loader is not None and not isinstance(loader, dict):
            problems.append((f"{_BASE}.domain.firmware.bootloader", "is not a mapping"))
        elif isinstance(loader, dict) and any(
            k in loader and loader[k] is None for k in sorted(_BOOTLOADERS)
        ):
            # the API server prunes a null field: ``efi: null`` is no bootloader KubeVirt
            # stored (read as EFI it dropped the NVRAM's persistence, unnamed: null_list)
            problems.append((f"{_BASE}.domain.firmware.bootloader", "names a null bootloader"))
        elif isinstance(loader, dict) and set(loader) - _BOOTLOADERS:
            # the API server keeps only bios/efi here: another key is no bootloader KubeVirt
            # read (reading it as BIOS would drop an EFI VM's NVRAM checks)
            problems.append(
                (
                    f"{_BASE}.domain.firmware.bootloader",
                    f"has {', '.join(sorted(map(str, set(loader) - _BOOTLOADERS)))}, "
                    "not bios or efi",
                )
            )
        elif efi is not None and not isinstance(efi, dict):
            problems.append((f"{_BASE}.domain.firmware.bootloader.efi", "is not a mapping"))
        elif isinstance(loader, dict) and not isinstance(loader.get("bios", {}), dict):
            # ``BIOS *BIOS``, an object (kubevirt.io/api core/v1 schema.go ``Bootloader``):
            # ``bios: "true"`` is no bootloader a cluster stored (round h48b, unnamed before)
            problems.append((f"{_BASE}.domain.firmware.bootloader.bios", "is not a mapping"))
        elif isinstance(efi, dict):
            for key in ("persistent", "secureBoot"):
                if efi.get(key) is not None and not isinstance(efi[key], bool):
                    problems.append(
                        (f"{_BASE}.domain.firmware.bootloader.efi.{key}", "is not a boolean")
                    )
        serial = fw.get("serial")
        if serial is not None and not isinstance(serial, str):
            problems.append((f"{_BASE}.domain.firmware.serial", "is not a string"))
    # Features and FeatureHyperv are objects (kubevirt staging/src/kubevirt.io/api/core/v1/
    # schema.go ``Features``, ``Hyperv *FeatureHyperv``; the API server refuses another type).
    # Hyper-V features tell a Windows guest: ``hyperv: "yes"`` read as none made a Windows
    # VM's missing UUID a medium FAIL, NOT_READY -> AT_RISK, unnamed (round h43c)
    features = dig(tspec, "domain", "features")
    hyperv = features.get("hyperv") if isinstance(features, dict) else None
    if features is not None and not isinstance(features, dict):
        problems.append(
            (f"{_DOMAIN}.features", f"is a {type(features).__name__}, not a mapping{_REJECTED}")
        )
    elif hyperv is not None and not isinstance(hyperv, dict):
        problems.append(
            (
                f"{_DOMAIN}.features.hyperv",
                f"is a {type(hyperv).__name__}, not a mapping{_REJECTED}",
            )
        )
    tpm = dig(tspec, "domain", "devices", "tpm")
    if tpm is not None and not isinstance(tpm, dict):
        problems.append((f"{_DEVICES}.tpm", "is not a mapping"))
    elif isinstance(tpm, dict):
        for key in ("persistent", "enabled"):
            if tpm.get(key) is not None and not isinstance(tpm[key], bool):
                problems.append((f"{_DEVICES}.tpm.{key}", "is not a boolean"))
    for i in _named(dig(tspec, "domain", "devices", "interfaces")):
        binding = i.get("binding")
        if binding is not None and not (
            isinstance(binding, dict) and isinstance(binding.get("name"), str)
        ):
            # the network binding plugin KubeVirt looks up in its CR (RR-NET-001): of another
            # type it names none, read as "no plugin"
            problems.append(
                (
                    f"{_DEVICES}.interfaces[{i['name']}].binding",
                    f"is {binding!r:.40}, not a mapping with a name string{_REJECTED}",
                )
            )
        elif isinstance(binding, dict) and not binding["name"].strip():
            # "" (or a blank) names no plugin: virt-controller looks it up in the KubeVirt
            # CR's network.binding map and fails the VMI ("couldn't find configuration for
            # network binding", kubevirt pkg/network/netbinding/netbinding.go,
            # https://github.com/kubevirt/kubevirt/blob/main/pkg/network/netbinding/netbinding.go);
            # read as a plugin, RR-NET-001 changed with nothing named (fz36's leftovers)
            problems.append(
                (
                    f"{_DEVICES}.interfaces[{i['name']}].binding.name",
                    "is an empty string: it names no network binding plugin",
                )
            )
        mac = i.get("macAddress")
        if mac is not None and not (isinstance(mac, str) and (mac == "" or MAC_RE.match(mac))):
            problems.append(
                (
                    f"{_DEVICES}.interfaces[{i['name']}].macAddress",
                    f"is {mac!r:.40}, not a MAC address{_REJECTED}",
                )
            )
    eviction = tspec.get("evictionStrategy")
    if eviction is not None and eviction not in EVICTION_STRATEGIES:
        # whether the VM live-migrates (RR-STG-003 then needs ReadWriteMany storage on the
        # restore class): "livemigrate" read as "does not migrate" (red team fz14)
        problems.append(
            (
                f"{_BASE}.evictionStrategy",
                f"is {eviction!r:.40}, not one of {', '.join(EVICTION_STRATEGIES)}{_REJECTED}",
            )
        )
    strategy = dig(vm, "spec", "runStrategy")
    if strategy is not None and strategy not in RUN_STRATEGIES:
        problems.append(
            (
                "spec.runStrategy",
                f"is {strategy!r:.40}, not one of {', '.join(RUN_STRATEGIES)}{_REJECTED}",
            )
        )
