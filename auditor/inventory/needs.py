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
from typing import Any

from auditor.inventory.vmspec import VMSpec
from auditor.kubevalues import dig

__all__ = ["restore_needs", "identity_of", "NAD_GR"]

VM_GR = "virtualmachines.kubevirt.io"
DV_GR = "datavolumes.cdi.kubevirt.io"
PVC_GR = "persistentvolumeclaims"
NAD_GR = "network-attachment-definitions.k8s.cni.cncf.io"
REV_GR = "controllerrevisions.apps"


def _list(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _refs(vm: dict[str, Any]) -> set[tuple[str, str]]:
    """``("secrets"|"configmaps"|"serviceaccounts", name)`` the VM references by name: also
    a containerDisk's ``imagePullSecret`` (the launcher pulls the image with it) and a
    ``serviceAccount`` volume's account (the launcher pod runs as it; the kubevirt plugin adds
    it to the backup) other than ``default``, which every namespace gets anew (red team: both
    were unseen while the Backup's filters left them out)."""
    out: set[tuple[str, str]] = set()
    tspec = dig(vm, "spec", "template", "spec") or {}
    for vol in _list(dig(tspec, "volumes")):
        if isinstance(n := dig(vol, "secret", "secretName"), str):
            out.add(("secrets", n))
        if isinstance(n := dig(vol, "containerDisk", "imagePullSecret"), str) and n:
            out.add(("secrets", n))
        account = dig(vol, "serviceAccount", "serviceAccountName")
        if isinstance(account, str) and account and account != "default":
            out.add(("serviceaccounts", account))
        if isinstance(n := dig(vol, "configMap", "name"), str):
            out.add(("configmaps", n))
        for src in ("cloudInitNoCloud", "cloudInitConfigDrive"):
            # KubeVirt serialises UserDataSecretRef as "secretRef" (core/v1 schema.go)
            for ref in ("secretRef", "networkDataSecretRef"):
                if isinstance(n := dig(vol, src, ref, "name"), str):
                    out.add(("secrets", n))
        if isinstance(n := dig(vol, "sysprep", "secret", "name"), str):
            out.add(("secrets", n))
        if isinstance(n := dig(vol, "sysprep", "configMap", "name"), str):
            out.add(("configmaps", n))
    for cred in _list(dig(tspec, "accessCredentials")):
        for kind in ("sshPublicKey", "userPassword"):
            if isinstance(n := dig(cred, kind, "source", "secret", "secretName"), str):
                out.add(("secrets", n))
    return out


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
    ``soft`` is True for Secrets/ConfigMaps/ServiceAccounts (their absence breaks configuration,
    not the disks or the VM object). Sorted, without repeats.
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
    needs |= {(gr, namespace, n, True) for gr, n in _refs(vm)}
    return sorted(needs)


def identity_of(vm: dict[str, Any], spec: VMSpec) -> dict[str, Any]:
    """What a guest or its network notices, flattened: ``field -> value`` (None when unset).

    Keys: ``firmware.uuid``, ``firmware.serial``, ``nic/<name>.mac``,
    ``nic/<name>.network``, ``disk/<name>.bootOrder``, ``instancetype.revision``,
    ``preference.revision``.
    """
    out: dict[str, Any] = {
        "firmware.uuid": spec.firmware.uuid,
        "firmware.serial": spec.firmware.serial,
        "instancetype.revision": dig(vm, "spec", "instancetype", "revisionName"),
        "preference.revision": dig(vm, "spec", "preference", "revisionName"),
    }
    for nic in spec.nics:
        out[f"nic/{nic.name}.mac"] = nic.mac
        out[f"nic/{nic.name}.network"] = nic.network_name or nic.network_type
    for disk in spec.disks:
        if disk.boot_order is not None:
            out[f"disk/{disk.name}.bootOrder"] = disk.boot_order
    return out
