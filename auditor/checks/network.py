"""NET checks: will the restored VM find its networks?"""

from __future__ import annotations

from auditor.checks.registry import CheckContext, Result, check, failed, not_applicable, passed
from auditor.inventory import VMRecord
from auditor.inventory.facts import nad_key
from auditor.models import Severity

MULTUS_DOC = "https://kubevirt.io/user-guide/network/interfaces_and_networks/#multus"
NAD_SPEC = "https://github.com/k8snetworkplumbingwg/multi-net-spec"


@check(
    "RR-NET-001",
    title="Every multus network resolves to an existing NetworkAttachmentDefinition",
    severity=Severity.HIGH,
    rationale="A VM whose NetworkAttachmentDefinition is gone keeps running on its old "
    "attachment, but the next restart, migration or restore fails to start it.",
    remediation="Recreate the NetworkAttachmentDefinition (and back NADs up with the VM's "
    "namespace), or change the VM's network to an existing one.",
    references=(MULTUS_DOC, NAD_SPEC),
    requires=("NetworkAttachmentDefinition",),
    reads=("spec.template.spec.networks",),
)
def nads_exist(vm: VMRecord, ctx: CheckContext) -> Result:
    """N/A without multus networks; FAIL naming every missing ``ns/name``.

    Reads ``spec.template.spec.networks`` itself, so broken interfaces never hide a network.
    """
    multus = [n for n in vm.spec.networks if n.type == "multus"]
    if not multus:
        return not_applicable(f"VM {vm.ref} uses no multus networks.")
    resolved = {n.name: "/".join(nad_key(vm.namespace, n.multus_name or "")) for n in multus}
    missing = sorted(
        nad for nad in resolved.values() if tuple(nad.split("/", 1)) not in ctx.index.nads
    )
    ev = {"networks": resolved}
    if missing:
        return failed(
            f"VM {vm.ref} uses NetworkAttachmentDefinition(s) {', '.join(missing)}, which do "
            "not exist.",
            missing_nads=missing,
            **ev,
        )
    return passed(f"All {len(multus)} multus network(s) of VM {vm.ref} exist.", **ev)
