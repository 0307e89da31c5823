"""FW-003 and NIC-002: no two VMs claim one machine identity (clones, restores beside originals)."""

from __future__ import annotations

from auditor.checks.registry import (
    CheckContext,
    Result,
    check,
    errored,
    failed,
    not_applicable,
    passed,
)
from auditor.inventory import VMRecord
from auditor.models import Basis, Severity
from auditor.sources.base import KindState

KV_FIRMWARE_SRC = (
    "https://github.com/kubevirt/kubevirt/blob/main/pkg/virt-controller/watch/vm/firmware.go"
)
KV_FIRMWARE = "https://kubevirt.io/user-guide/compute/virtual_hardware/#biosuefi"
KV_IFACES = "https://kubevirt.io/user-guide/network/interfaces_and_networks/"
KUBEMACPOOL = "https://github.com/k8snetworkplumbingwg/kubemacpool"
PLUGIN_LABELS = "https://github.com/kubevirt/kubevirt-velero-plugin/blob/main/pkg/util/util.go"
L2_BINDINGS = frozenset({"bridge", "sriov", "macvtap"})


def _incomplete(ctx: CheckContext, vm: VMRecord, what: str) -> Result | None:
    if ctx.index.data.state("VirtualMachine") is KindState.COMPLETE:
        return None
    return errored(
        f"No VM read shares VM {vm.ref}'s {what}, but the VM list is incomplete, so one that "
        "could not be read might."
    )


def _names(dups: list[dict[str, object]]) -> str:
    parts = []
    for d in dups:
        others = ", ".join(str(o["vm"]) for o in d["others"])  # type: ignore[attr-defined]
        parts.append(f"{d['what']} {d['value']} with {others}")
    return "; ".join(parts)


#: RR-FW-003's FAIL for a Windows guest: activation, KMS and SCCM tell machines apart by the
#: SMBIOS UUID and serial, so two Windows guests sharing one is high
_SHARED_ON_WINDOWS = Severity.HIGH


@check(
    "RR-FW-003",
    title="No other VM has this VM's firmware UUID or serial",
    severity=Severity.MEDIUM,
    windows_severity=_SHARED_ON_WINDOWS,
    rationale="Guests, management agents and licensing (Windows activation, KMS, SCCM, backup "
    "agents) tell machines apart by the SMBIOS UUID and serial. Clones and restores beside the "
    "original copy them; VMs without a pinned UUID get one derived from the VM name alone, so "
    "two unpinned VMs with one name in two namespaces share it.",
    remediation="Give each copy its own firmware.uuid and serial (restore drills with "
    "velero.kubevirt.io/generate-new-firmware-uuid), or delete the stale copy.",
    references=(KV_FIRMWARE_SRC, KV_FIRMWARE, PLUGIN_LABELS),
    requires=("VirtualMachine",),
    # what IdentityIndex reads of each VM (the name it derives an unpinned UUID from is
    # metadata): another VM's malformed cloud-init or disk field cannot hide a clash
    reads=("spec.template.spec.domain.firmware",),
)
def firmware_unique(vm: VMRecord, ctx: CheckContext) -> Result:
    """FAIL naming the other VMs when the UUID (spec, runtime or name-derived) or serial repeats.

    Medium; high when the VM runs Windows. ERROR when no duplicate is found but the VM list
    is incomplete.
    """
    ids = ctx.index.identities
    dups = ids.shared(vm.namespace, vm.name, "uuid", "serial")
    own = {w: [c.source for c in ids.own(vm.namespace, vm.name, w)] for w in ("uuid", "serial")}
    if dups:
        sev = _SHARED_ON_WINDOWS if vm.spec.os == "windows" else Severity.MEDIUM
        derived = any(d["mine"]["source"] == "derived" for d in dups)
        msg = f"VM {vm.ref} shares firmware {_names(dups)}."
        basis = Basis.INFERRED if derived else Basis.OBSERVED
        return failed(msg, sev, duplicates=dups, sources=own).on(basis)
    gap = _incomplete(ctx, vm, "firmware UUID or serial")
    if gap:
        return gap
    return passed(f"No other VM read shares VM {vm.ref}'s firmware UUID or serial.", sources=own)


@check(
    "RR-NIC-002",
    title="No other VM has one of this VM's MAC addresses",
    severity=Severity.MEDIUM,
    rationale="Two NICs with one MAC on a shared layer-2 network (bridge, SR-IOV) steal each "
    "other's traffic; guests and licences keyed on the MAC see two machines as one. Clones and "
    "restores beside the original copy the MACs unless the restore clears them.",
    remediation="Give each copy its own MAC (restore drills with "
    "velero.kubevirt.io/clear-mac-address, or let KubeMacPool allocate), or delete the copy.",
    references=(KV_IFACES, KUBEMACPOOL, PLUGIN_LABELS),
    requires=("VirtualMachine",),
    reads=(
        "spec.template.spec.domain.devices.interfaces",
        "spec.template.spec.domain.devices.autoattachPodInterface",  # the default NIC
    ),
)
def mac_unique(vm: VMRecord, ctx: CheckContext) -> Result:
    """FAIL naming the other VMs; medium when both NICs are bridge/SR-IOV bound, else low."""
    ids = ctx.index.identities
    macs = ids.own(vm.namespace, vm.name, "mac")
    if not macs:
        return not_applicable(f"VM {vm.ref} has no MAC address set in its spec or VMI.")
    dups = ids.shared(vm.namespace, vm.name, "mac")
    if dups:
        l2 = any(
            d["mine"].get("binding") in L2_BINDINGS
            and any(o.get("binding") in L2_BINDINGS for o in d["others"])
            for d in dups
        )
        msg = f"VM {vm.ref} shares {_names(dups)}."
        sev = Severity.MEDIUM if l2 else Severity.LOW
        return failed(msg, sev, duplicates=dups, layer2_collision=l2).on(Basis.OBSERVED)
    gap = _incomplete(ctx, vm, "MAC addresses")
    if gap:
        return gap
    return passed(
        f"No other VM read uses VM {vm.ref}'s {len(macs)} MAC address(es).",
        macs=[c.to_dict() for c in macs],
    )
