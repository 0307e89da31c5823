"""PLT-006: does KubeVirt's configuration let persistent EFI/TPM VMs start after a restore?

VMs with ``efi.persistent``/``tpm.persistent`` keep that state in a ``persistent-state-for-<vm>``
PVC. KubeVirt rejects them unless the ``VMPersistentState`` feature gate is on (GA, always on,
from KubeVirt 1.5), and creates the PVC on ``spec.configuration.vmStateStorageClass`` (else the
default virt class, else the cluster default) when a restore did not bring it back.
Sources: https://kubevirt.io/user-guide/storage/persistent_tpm_and_uefi_state/,
https://github.com/kubevirt/kubevirt/blob/main/pkg/storage/backend-storage/backend-storage.go,
https://github.com/kubevirt/kubevirt/blob/main/pkg/virt-config/featuregate/inactive.go
"""

from __future__ import annotations

from typing import Any

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
from auditor.kubevalues import dig, kubevirt_version
from auditor.models import Basis, Severity
from auditor.sources.base import KindState

KV_PERSISTENT = "https://kubevirt.io/user-guide/storage/persistent_tpm_and_uefi_state/"
KV_BACKEND_SRC = (
    "https://github.com/kubevirt/kubevirt/blob/main/pkg/storage/backend-storage/backend-storage.go"
)
KV_GATES_SRC = (
    "https://github.com/kubevirt/kubevirt/blob/main/pkg/virt-config/featuregate/inactive.go"
)
GATE = "VMPersistentState"


def kubevirt_settings(obj: dict[str, Any]) -> dict[str, Any]:
    """The facts PLT-006 reads from one KubeVirt CR (version as (major, minor) or None)."""
    conf = dig(obj, "spec", "configuration") or {}
    gates = dig(conf, "developerConfiguration", "featureGates")
    raw = dig(obj, "status", "observedKubeVirtVersion")
    # a tag such as "latest", a digest or a build string is no release (kubevalues)
    release, read_from = kubevirt_version(obj)
    return {
        "kubevirt": f"{dig(obj, 'metadata', 'namespace')}/{dig(obj, 'metadata', 'name')}",
        "version": raw if isinstance(raw, str) else None,
        "version_tuple": release,
        "version_read": read_from,
        "feature_gates": [g for g in gates if isinstance(g, str)]
        if isinstance(gates, list)
        else [],
        "vm_state_storage_class": conf.get("vmStateStorageClass")
        if isinstance(conf, dict) and isinstance(conf.get("vmStateStorageClass"), str)
        else None,
    }


def _read_whole(ctx: CheckContext) -> bool:
    """Whether the KubeVirt CRs were listed in full and each read (the index names a CR whose
    configuration it cannot read, and leaves it unread)."""
    return ctx.index.data.state("KubeVirt") is KindState.COMPLETE and not ctx.index.partial_for(
        "KubeVirt", ""
    )


def gate_blocks_start(ctx: CheckContext) -> str | None:
    """Why the KubeVirt read refuses to start any VM with persistent EFI/TPM state: the
    ``VMPersistentState`` gate off on KubeVirt before 1.5 (a VM started while it was on keeps
    running, a restored copy does not start). None when nothing read says so (the CR unread,
    or its version unknown: RR-PLT-006's ERROR).
    """
    data = ctx.index.data
    crs = data.of("KubeVirt")
    if not _read_whole(ctx) or not crs:
        return None
    kv = kubevirt_settings(crs[0])
    version = kv["version_tuple"]
    if GATE not in kv["feature_gates"] and version is not None and version < (1, 5):
        return (
            f"feature gate {GATE} is off and KubeVirt is {version[0]}.{version[1]} "
            f"({kv['version_read']}; GA from 1.5)"
        )
    return None


def gate_unknown(ctx: CheckContext) -> str | None:
    """Why whether KubeVirt starts a VM with persistent EFI/TPM state cannot be told, or None
    when it can: a KubeVirt CR that was listed but could not be read (a damaged object, so the
    kind's list is partial), or a CR whose version is unknown and whose feature gates do not
    list the gate. A VM check must not pass on that (mutations seed 1361: a KubeVirt CR with a
    metadata.namespace of 42 went unread and a VM's NOT_READY became READY)."""
    data = ctx.index.data
    if ctx.index.partial_for("KubeVirt", ""):
        return "the KubeVirt CR could not be read (see the collection problems)"
    crs = data.of("KubeVirt")
    if data.state("KubeVirt") is not KindState.COMPLETE or not crs:
        return None
    kv = kubevirt_settings(crs[0])
    if GATE not in kv["feature_gates"] and kv["version_tuple"] is None:
        return f"{kv['version_read']} and {GATE} is not among its feature gates"
    return None


#: KubeVirt's built-in default machine type per architecture (kubevirt
#: pkg/virt-config/virt-config.go ``DefaultAMD64MachineType`` and the others)
BUILTIN_MACHINE_TYPES = {"amd64": "q35", "arm64": "virt", "s390x": "s390-ccw-virtio"}
KV_MACHINE_DEFAULT_SRC = "https://github.com/kubevirt/kubevirt/blob/main/pkg/defaults/defaults.go"
KV_MACHINE_CONFIG_SRC = (
    "https://github.com/kubevirt/kubevirt/blob/main/pkg/virt-config/virt-config.go"
)


def default_machine_type(ctx: CheckContext, arch: str | None) -> tuple[str | None, str]:
    """The machine type KubeVirt's VM admission webhook writes into a VM of ``arch`` (None:
    amd64) that names none, in this cluster now, and where it comes from; ``(None, why)``
    when the KubeVirt CR was not read whole or there is none.

    ``spec.configuration.machineType`` when set, else
    ``spec.configuration.architectureConfiguration.<arch>.machineType``, else the built-in
    default (pkg/virt-config/virt-config.go ``GetMachineType``; written by
    pkg/defaults/defaults.go ``setVMDefaultMachineType`` on every create and update).
    """
    if not _read_whole(ctx):
        return None, "the KubeVirt CR was not read"
    crs = ctx.index.data.of("KubeVirt")
    if not crs:
        return None, "no KubeVirt CR was exported"
    conf = dig(crs[0], "spec", "configuration")
    conf = conf if isinstance(conf, dict) else {}
    legacy = conf.get("machineType")
    if isinstance(legacy, str) and legacy:
        return legacy, "KubeVirt spec.configuration.machineType"
    key = arch if arch in ("arm64", "s390x") else "amd64"
    per_arch = dig(conf, "architectureConfiguration", key, "machineType")
    if isinstance(per_arch, str) and per_arch:
        return per_arch, f"KubeVirt spec.configuration.architectureConfiguration.{key}.machineType"
    return BUILTIN_MACHINE_TYPES[key], f"KubeVirt's built-in default for {key}"


KV_DEFAULT_VIRT_CLASS = "storageclass.kubevirt.io/is-default-virt-class"
K8S_DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"


def state_class_fallback(ctx: CheckContext) -> tuple[str, str] | None:
    """The StorageClass KubeVirt creates a state PVC on when vmStateStorageClass is unset,
    with the annotation that chose it: ``(name, annotation)``; None when no class is marked.

    KubeVirt takes a class annotated ``storageclass.kubevirt.io/is-default-virt-class: "true"``
    before one annotated ``storageclass.kubernetes.io/is-default-class: "true"`` and fails
    with "no default storage class found" when there is neither (the value must be the
    string ``true``): ``BackendStorage.getStorageClass`` in
    https://github.com/kubevirt/kubevirt/blob/main/pkg/storage/backend-storage/backend-storage.go.
    With several marked, KubeVirt keeps whichever its informer lists last; the first by name
    is named here (which one does not change whether a class exists).
    """
    for annotation in (KV_DEFAULT_VIRT_CLASS, K8S_DEFAULT_CLASS):
        marked = sorted(
            name
            for name, obj in ctx.index.storage_classes.items()
            if dig(obj, "metadata", "annotations", annotation) == "true"
        )
        if marked:
            return marked[0], annotation
    return None


@platform_check(
    "RR-PLT-006",
    title="KubeVirt can start VMs with persistent EFI/TPM state",
    severity=Severity.HIGH,
    rationale="A VM with persistent EFI NVRAM or TPM only starts when KubeVirt has the "
    "VMPersistentState feature (a gate before 1.5), and a restore that did not bring back its "
    "persistent-state PVC needs vmStateStorageClass (or a default class) to create a new one.",
    remediation="Enable the VMPersistentState feature gate (KubeVirt < 1.5) and set "
    "spec.configuration.vmStateStorageClass to an existing RWX Filesystem class.",
    references=(KV_PERSISTENT, KV_BACKEND_SRC, KV_GATES_SRC),
    # whether vmStateStorageClass exists: unread classes are unknown, never "missing"
    requires=("StorageClass",),
)
def persistent_state_config(ctx: CheckContext, vms: list[PlatformFacts]) -> Result:
    """N/A without persistent-state VMs; ERROR when the KubeVirt CR is not read.

    FAIL when the gate is needed and off, vmStateStorageClass names a missing class, or it
    is unset and no StorageClass is marked default (:func:`state_class_fallback`).
    """
    users = [vm.ref for vm in vms if vm.persistent_state]
    if not users:
        unknown = [vm.ref for vm in vms if vm.persistent_state is None]
        if unknown:
            # their preference, unread, may give them persistent EFI or TPM state (preferredEfi,
            # preferredTPM): "no VM keeps it" would rest on what was not seen
            return errored(
                f"Whether VM(s) {', '.join(unknown[:5])}{' ...' if len(unknown) > 5 else ''} "
                "keep persistent EFI/TPM state is unknown: each names a preference that was "
                "not found, which may set it.",
                vms_unknown=unknown,
            )
        return not_applicable("No VM keeps persistent EFI/TPM state.")
    data = ctx.index.data
    crs = data.of("KubeVirt")
    if not _read_whole(ctx) or not crs:
        return errored(
            f"{len(users)} VM(s) keep persistent EFI/TPM state, but the KubeVirt CR was not read: "
            "whether KubeVirt can start them after a restore is unknown.",
            vms=users,
        )
    kv = kubevirt_settings(crs[0])
    state_classes = sorted({vm.state_pvc_class for vm in vms if vm.state_pvc_class is not None})
    ev = {**kv, "vms": users, "state_pvc_classes": state_classes}
    ev.pop("version_tuple")
    problems = []
    version = kv["version_tuple"]
    if GATE not in kv["feature_gates"] and version is None:
        return errored(
            f"{kv['version_read']} and {GATE} is not among its feature gates: whether it "
            "starts persistent-state VMs is unknown.",
            **ev,
        )
    gate = gate_blocks_start(ctx)
    if gate:
        problems.append(gate)
    cls = kv["vm_state_storage_class"]
    if cls and cls not in ctx.index.storage_classes:
        problems.append(f"vmStateStorageClass {cls} does not exist")
    fallback = None if cls else state_class_fallback(ctx)
    if not cls and fallback is None:
        problems.append(
            "vmStateStorageClass is unset and no StorageClass is annotated "
            f"{KV_DEFAULT_VIRT_CLASS}=true or {K8S_DEFAULT_CLASS}=true, so KubeVirt has no class "
            "to create a state PVC on ('no default storage class found'): a VM whose state PVC "
            "is not there (a restore that did not bring it back, a clone, a first start) "
            "does not start"
        )
    if fallback is not None:
        ev["state_class_fallback"] = fallback
    if problems:
        msg = f"KubeVirt cannot start {len(users)} persistent-state VM(s): {'; '.join(problems)}."
        return failed(msg, **ev).on(Basis.OBSERVED)
    read = kv["version_read"]
    if cls:
        note = f"on {cls}"
    else:
        picked, why = fallback or ("?", "?")  # none left a problem above
        note = f"on {picked} ({why}; vmStateStorageClass unset)"
    return passed(
        f"KubeVirt{f' ({read})' if version is not None else ''} starts persistent-state VMs "
        f"and creates their state {note}.",
        **ev,
    ).on(Basis.OBSERVED)
