"""What restoring a VM needs from a backup, and the identity a restore brings back.

Both read only a VirtualMachine manifest (live or backed up), so a backed-up
copy and the live VM are compared with the same code. Names only: Secrets and
ConfigMaps are named, never read.

Sources: KubeVirt volumes and cloud-init/sysprep references
(https://kubevirt.io/user-guide/storage/disks_and_volumes/), access credentials
(https://kubevirt.io/user-guide/user_workloads/accessing_virtual_machines/),
instancetype/preference ControllerRevisions
(https://kubevirt.io/user-guide/user_workloads/instancetypes/#versioning) and
the objects the kubevirt Velero plugin adds to a backup
(https://github.com/kubevirt/kubevirt-velero-plugin).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from auditor.inventory.fields import firmware_uuid, mac_address
from auditor.inventory.identities import legacy_firmware_uuid
from auditor.inventory.vmspec import VMSpec
from auditor.kubevalues import dig

__all__ = [
    "restore_needs",
    "identity_of",
    "references",
    "Reference",
    "REFERENCE_TYPES",
    "NAD_GR",
    "REV_GR",
]

VM_GR = "virtualmachines.kubevirt.io"
DV_GR = "datavolumes.cdi.kubevirt.io"
PVC_GR = "persistentvolumeclaims"
NAD_GR = "network-attachment-definitions.k8s.cni.cncf.io"
REV_GR = "controllerrevisions.apps"


def _list(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


#: ``resource`` of a :class:`Reference` -> Velero's (plural, kind, group) for its filters.
REFERENCE_TYPES = {
    "secrets": ("secrets", "Secret", ""),
    "configmaps": ("configmaps", "ConfigMap", ""),
    "serviceaccounts": ("serviceaccounts", "ServiceAccount", ""),
    REV_GR: ("controllerrevisions", "ControllerRevision", "apps"),
}


@dataclass(frozen=True)
class Reference:
    """An object the VM names that a restore needs beside its disks (names only, never read).

    ``resource``: a key of :data:`REFERENCE_TYPES`; ``field``: the VM field naming it;
    ``plugin_adds``: the kubevirt Velero plugin returns it as an additional item of the VM, so
    a Backup's label selector does not decide whether it is taken (Velero applies only the
    resource and namespace filters and the exclude label to additional items); ``hard``:
    without it the restored VM cannot start, otherwise it comes up unconfigured. Hard are a
    pinned ControllerRevision (KubeVirt looks it up, kubevirt pkg/instancetype/find/revision.go)
    and every Secret, ConfigMap or ServiceAccount the virt-launcher pod needs: KubeVirt mounts
    a ``secret``/``configMap`` volume (unless ``optional: true``), a cloud-init ``secretRef``/
    ``networkDataSecretRef``, a ``sysprep`` Secret/ConfigMap and an access-credential Secret
    as pod volumes (kubevirt pkg/virt-controller/services/rendervolumes.go), which the kubelet
    does not start a pod without, and runs the pod as a ``serviceAccount`` volume's account
    (pkg/virt-controller/services/template.go), which the ServiceAccount admission plugin
    refuses when it does not exist. Hard too: a containerDisk's or kernel boot container's
    ``imagePullSecret``, which KubeVirt puts in the pod's ``imagePullSecrets``
    (pkg/virt-controller/services/rendervolumes.go, template.go): the kubelet, missing it,
    pulls without credentials ("Unable to retrieve pull secret, the image pull may not
    succeed": kubernetes pkg/kubelet/kubelet_pods.go ``getPullSecretsForPod``), which the
    registry the VM names credentials for refuses, and the pod never starts. Soft: an
    ``optional`` volume. Source of ``plugin_adds``:
    addVolumeGraph, addAccessCredentials and addInstanceTypeMatcherResource in
    https://github.com/kubevirt/kubevirt-velero-plugin/blob/main/pkg/util/kvgraph/util.go
    """

    resource: str
    name: str
    field: str
    plugin_adds: bool
    hard: bool = False

    @property
    def kind(self) -> str:
        """The object's kind, for messages."""
        return REFERENCE_TYPES[self.resource][1]

    @property
    def label(self) -> str:
        """``Kind name (field)`` for messages."""
        return f"{self.kind} {self.name} ({self.field})"


def _volume_refs(vol: dict[str, Any]) -> list[Reference]:
    """The references of one volume. The plugin's addVolumeGraph pulls in configMap, secret
    and serviceAccount volumes and cloud-init secretRef/networkDataSecretRef (besides the
    dataVolume, persistentVolumeClaim and memoryDump PVCs); it has no case for sysprep or a
    containerDisk's ``imagePullSecret``: those are in the backup only when the Backup's own
    filters, its label selector included, take them (kubevirt-velero-plugin
    pkg/util/kvgraph/util.go, checked at 734e6cd)."""
    at = f"spec.template.spec.volumes[{vol.get('name')}]"
    out: list[Reference] = []

    def add(resource: str, value: Any, path: str, plugin: bool, hard: bool = True) -> None:
        if isinstance(value, str) and value:
            out.append(Reference(resource, value, f"{at}.{path}", plugin, hard))

    secret = dig(vol, "secret", "secretName")
    add("secrets", secret, "secret.secretName", True, _required(vol, "secret"))
    add(
        "secrets",
        dig(vol, "containerDisk", "imagePullSecret"),
        "containerDisk.imagePullSecret",
        False,
        True,  # the kubelet pulls without credentials, which the private registry refuses
    )
    account = dig(vol, "serviceAccount", "serviceAccountName")
    if account != "default":  # every namespace gets its default ServiceAccount anew
        add("serviceaccounts", account, "serviceAccount.serviceAccountName", True)
    config = dig(vol, "configMap", "name")
    add("configmaps", config, "configMap.name", True, _required(vol, "configMap"))
    for src in ("cloudInitNoCloud", "cloudInitConfigDrive"):
        # KubeVirt serialises UserDataSecretRef as "secretRef" (core/v1 schema.go)
        for ref in ("secretRef", "networkDataSecretRef"):
            add("secrets", dig(vol, src, ref, "name"), f"{src}.{ref}.name", True)
    add("secrets", dig(vol, "sysprep", "secret", "name"), "sysprep.secret.name", False)
    add("configmaps", dig(vol, "sysprep", "configMap", "name"), "sysprep.configMap.name", False)
    return out


def _required(vol: dict[str, Any], source: str) -> bool:
    """Whether the launcher pod needs the object of ``vol``'s ``secret``/``configMap`` source:
    KubeVirt copies its ``optional`` into the pod volume, and the kubelet starts a pod without
    an optional one only (kubevirt pkg/virt-controller/services/rendervolumes.go). Anything but
    a literal ``true`` (a malformed value too) is required, the worse reading."""
    return dig(vol, source, "optional") is not True


def _revision_refs(vm: dict[str, Any]) -> list[Reference]:
    """The ControllerRevisions the VM is pinned to. The plugin adds the one in
    ``status.<what>Ref.controllerRevisionRef`` (with no status ref, ``spec.<what>.revisionName``)
    and writes its name into the backed-up ``spec.<what>.revisionName``; on restore KubeVirt
    looks that revision up and the VM fails to start without it
    (kubevirt-velero-plugin pkg/plugin/vm_backup_item_action.go, kubevirt
    pkg/instancetype/find/revision.go)."""
    out: list[Reference] = []
    for what in ("instancetype", "preference"):
        matcher = dig(vm, "spec", what)
        status_ref = dig(vm, "status", f"{what}Ref")
        named = isinstance(matcher, dict)
        spec_rev = dig(matcher, "revisionName") if named else None
        status_rev = dig(status_ref, "controllerRevisionRef", "name")
        if isinstance(status_rev, str) and status_rev:
            field = f"status.{what}Ref.controllerRevisionRef.name"
            out.append(Reference(REV_GR, status_rev, field, named, hard=True))
        if isinstance(spec_rev, str) and spec_rev and spec_rev != status_rev:
            plugin = named and status_ref is None
            out.append(Reference(REV_GR, spec_rev, f"spec.{what}.revisionName", plugin, True))
    return out


def references(vm: dict[str, Any]) -> list[Reference]:
    """Secrets, ConfigMaps, ServiceAccounts (other than ``default``) and pinned
    ControllerRevisions ``vm`` names: volumes (a containerDisk's ``imagePullSecret`` too),
    a kernel boot container's ``imagePullSecret``, access credentials and
    instancetype/preference revisions. One per object (the first
    field naming it; pulled in by the plugin when any field is), sorted by kind and name."""
    tspec = dig(vm, "spec", "template", "spec") or {}
    found: list[Reference] = []
    for vol in _list(dig(tspec, "volumes")):
        found += _volume_refs(vol)
    for i, cred in enumerate(_list(dig(tspec, "accessCredentials"))):
        for kind in ("sshPublicKey", "userPassword"):
            name = dig(cred, kind, "source", "secret", "secretName")
            if isinstance(name, str):
                path = f"spec.template.spec.accessCredentials[{i}].{kind}.source.secret.secretName"
                # mounted into the launcher pod, never optional (rendervolumes.go)
                found.append(Reference("secrets", name, path, True, True))
    kernel = dig(tspec, "domain", "firmware", "kernelBoot", "container", "imagePullSecret")
    if isinstance(kernel, str) and kernel:
        # KubeVirt adds it to the launcher pod's imagePullSecrets (template.go); the plugin's
        # graph has no case for it (kvgraph/util.go)
        path = "spec.template.spec.domain.firmware.kernelBoot.container.imagePullSecret"
        found.append(Reference("secrets", kernel, path, False, True))
    found += _revision_refs(vm)
    merged: dict[tuple[str, str], Reference] = {}
    for r in found:
        first = merged.setdefault((r.resource, r.name), r)
        if r.plugin_adds and not first.plugin_adds:
            first = merged[(r.resource, r.name)] = replace(first, plugin_adds=True)
        if r.hard and not first.hard:  # one field that needs it (beside an optional one)
            merged[(r.resource, r.name)] = replace(first, hard=True)
    return sorted(merged.values(), key=lambda r: (r.resource, r.name))


def _refs(vm: dict[str, Any]) -> set[tuple[str, str, bool]]:
    """``("secrets"|"configmaps"|"serviceaccounts", name, hard)`` the VM references by name
    (red team: a containerDisk's ``imagePullSecret`` and a ``serviceAccount`` volume's account
    were unseen while the Backup's filters left them out; rt32: the ones the launcher pod
    cannot start without are hard, see :class:`Reference`)."""
    return {(r.resource, r.name, r.hard) for r in references(vm) if r.resource != REV_GR}


def _revisions(vm: dict[str, Any]) -> set[str]:
    """ControllerRevision names the VM is pinned to (spec revisionName, status refs)."""
    out = set()
    for key in ("instancetype", "preference"):
        if isinstance(n := dig(vm, "spec", key, "revisionName"), str) and n:
            out.add(n)
        ref = f"{key}Ref"
        if isinstance(n := dig(vm, "status", ref, "controllerRevisionRef", "name"), str) and n:
            out.add(n)
    return out


def _nads(vm: dict[str, Any], namespace: str) -> set[tuple[str, str]]:
    out = set()
    for net in _list(dig(vm, "spec", "template", "spec", "networks")):
        name = dig(net, "multus", "networkName")
        if isinstance(name, str) and name:
            ns, _, nad = name.rpartition("/")
            out.add((ns or namespace, nad))
    return out


def restore_needs(
    vm: dict[str, Any],
    namespace: str,
    name: str,
    pvcs: list[str],
    dv_exists: Callable[[str], bool] | None = None,
) -> list[tuple[str, str, str, bool]]:
    """``(group-resource, namespace, name, soft)`` a backup must hold to restore ``vm``.

    ``pvcs``: the PVC names the inventory paired (disks and persistent state).
    ``dv_exists``: whether a DataVolume of that name exists in the namespace; a
    DataVolume CDI has garbage-collected after import is not needed (its PVC
    is). None: every DataVolume the VM names is needed.
    ``soft`` is True for the Secrets/ConfigMaps the VM starts without (an ``optional`` volume's:
    its absence breaks configuration, not the disks or the VM object); one the launcher pod
    needs (a pull Secret too) is not soft (:class:`Reference` ``hard``). Sorted,
    without repeats.
    """
    tspec = dig(vm, "spec", "template", "spec") or {}
    needs: set[tuple[str, str, str, bool]] = {(VM_GR, namespace, name, False)}
    dvs = {
        n
        for t in _list(dig(vm, "spec", "dataVolumeTemplates"))
        if isinstance(n := dig(t, "metadata", "name"), str) and n
    }
    dvs |= {
        n
        for v in _list(dig(tspec, "volumes"))
        if isinstance(n := dig(v, "dataVolume", "name"), str)
    }
    if dv_exists is not None:
        dvs = {n for n in dvs if dv_exists(n)}
    needs |= {(DV_GR, namespace, n, False) for n in dvs}
    needs |= {(PVC_GR, namespace, p, False) for p in pvcs}
    needs |= {(NAD_GR, ns, n, False) for ns, n in _nads(vm, namespace)}
    needs |= {(REV_GR, namespace, r, False) for r in _revisions(vm)}
    needs |= {(gr, namespace, n, not hard) for gr, n, hard in _refs(vm)}
    return sorted(needs)


def identity_of(
    vm: dict[str, Any], spec: VMSpec, *, architecture: str | None = None
) -> dict[str, Any]:
    """What a guest or its network notices, flattened: ``field -> value`` (None when unset).

    Keys: ``firmware.uuid`` (unset: the name-derived one KubeVirt gives the VM),
    ``firmware.serial``, ``firmware.bootloader`` (efi, bios or unknown),
    ``firmware.secureBoot``, ``firmware.efi.persistent``, ``tpm``, ``tpm.persistent``,
    ``nic/<name>.mac``, ``nic/<name>.model``, ``nic/<name>.network``, ``disk/<name>.bus``,
    ``disk/<name>.bootOrder``, ``instancetype.revision``, ``preference.revision`` (the
    spec's ``revisionName``, else the status's pin: :func:`_pinned_revision`).

    A bus or NIC model the VM leaves unset is the one KubeVirt gives every start: a disk,
    CD-ROM or LUN gets ``sata`` on amd64 and ``virtio`` on arm64 and s390x (kubevirt
    pkg/defaults/amd64.go ``setDefaultAmd64DisksBus``, arm64.go, s390x.go), a NIC
    ``virtio`` (pkg/network/vmispec/interface.go reads "" as virtio), so an unset bus and
    its default written out are one identity. ``architecture`` is the VM's when its own
    spec names none (KubeVirt writes it into the spec since the architecture defaulting of
    pkg/defaults/defaults.go; a backup from before has none); None reads as amd64. A VM
    naming a preference keeps None for what it leaves unset: ``preferredDiskBus``,
    ``preferredCdromBus``, ``preferredLunBus``, ``preferredInterfaceModel`` fill it in
    (pkg/instancetype/preference/apply), and the pinned preference revision is compared.

    Values are in one notation, so two spellings of one identity compare equal: a UUID
    lower-case 8-4-4-4-12 (:func:`firmware_uuid`; libvirt reads it without dashes too), a MAC
    lower-case and colon separated (:func:`mac_address`; Go's ``net.ParseMAC`` reads dashes
    and dotted groups), a Multus ``networkName`` as ``namespace/name`` (a bare name is the
    VM's namespace: kubevirt pkg/network/multus/nad.go NetAttachDefNamespacedName).
    """
    uuid = spec.firmware.uuid
    name = dig(vm, "metadata", "name")
    if uuid is None and isinstance(name, str) and name and not _uuid_unreadable(vm):
        # unset, KubeVirt gives the VM the uuid5 of its name (up to 1.5 at each start; from
        # 1.6 its VM controller writes that into the spec once: kubevirt pkg/virt-controller/
        # watch/vm/firmware.go FirmwareController.Sync). A backup from before the upgrade
        # (unset) and the live VM (the name's UUID written in) hold one identity (fp30).
        uuid = legacy_firmware_uuid(name)
    fw = spec.firmware
    out: dict[str, Any] = {
        "firmware.uuid": firmware_uuid(uuid) if uuid is not None else None,
        "firmware.serial": fw.serial,
        "firmware.bootloader": fw.bootloader,
        "firmware.secureBoot": fw.secure_boot,
        "firmware.efi.persistent": fw.efi_persistent,
        "tpm": fw.tpm,
        "tpm.persistent": fw.tpm_persistent,
        "instancetype.revision": _pinned_revision(vm, "instancetype", "instancetypeRef"),
        "preference.revision": _pinned_revision(vm, "preference", "preferenceRef"),
    }
    namespace = dig(vm, "metadata", "namespace")
    by_preference = isinstance(dig(vm, "spec", "preference"), dict)
    arch = dig(vm, "spec", "template", "spec", "architecture")
    arch = arch if isinstance(arch, str) and arch else architecture
    default_bus = "virtio" if arch in ("arm64", "s390x") else "sata"
    for nic in spec.nics:
        out[f"nic/{nic.name}.mac"] = mac_address(nic.mac) if nic.mac is not None else None
        out[f"nic/{nic.name}.model"] = nic.model or (None if by_preference else "virtio")
        net = nic.network_name
        if net and "/" not in net and isinstance(namespace, str) and namespace:
            net = f"{namespace}/{net}"
        out[f"nic/{nic.name}.network"] = net or nic.network_type
    for disk in spec.disks:
        if disk.device in ("disk", "cdrom", "lun"):
            out[f"disk/{disk.name}.bus"] = disk.bus or (None if by_preference else default_bus)
        if disk.boot_order is not None:
            out[f"disk/{disk.name}.bootOrder"] = disk.boot_order
    return out


def _pinned_revision(vm: dict[str, Any], spec_key: str, status_key: str) -> Any:
    """The ControllerRevision ``vm`` is pinned to: ``spec.<spec_key>.revisionName``, else
    ``status.<status_key>.controllerRevisionRef.name`` (None: neither).

    KubeVirt keeps the pin in the status (kubevirt pkg/instancetype/revision/store.go) and
    the kubevirt Velero plugin copies it into the backed-up spec's ``revisionName``
    (https://github.com/kubevirt/kubevirt-velero-plugin/blob/main/pkg/plugin/vm_backup_item_action.go):
    one pin in either place. Read from the spec alone, every live VM pinned only in its
    status differed from its backup (bc37).
    """
    named = dig(vm, "spec", spec_key, "revisionName")
    if named is not None and named != "":
        return named
    return dig(vm, "status", status_key, "controllerRevisionRef", "name")


def _uuid_unreadable(vm: dict[str, Any]) -> bool:
    """Whether ``firmware.uuid`` is set to something that is no UUID (never the name's)."""
    raw = dig(vm, "spec", "template", "spec", "domain", "firmware", "uuid")
    return raw is not None and raw != ""
