"""NET checks: will the restored VM find its networks?"""

from __future__ import annotations

from typing import Any

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
from auditor.inventory.facts import nad_key
from auditor.kubevalues import dig, format_time, parse_time
from auditor.models import Severity
from auditor.sources.base import KindState

MULTUS_DOC = "https://kubevirt.io/user-guide/network/interfaces_and_networks/#multus"
NAD_SPEC = "https://github.com/k8snetworkplumbingwg/multi-net-spec"
BINDING_DOC = "https://kubevirt.io/user-guide/network/network_binding_plugins/"
BINDING_SRC = "https://github.com/kubevirt/kubevirt/blob/main/pkg/network/multus/annotation.go"
#: an object with a deletionTimestamp is removed once its finalizers are done
FINALIZERS_DOC = "https://kubernetes.io/docs/concepts/overview/working-with-objects/finalizers/"


@check(
    "RR-NET-001",
    title="Every multus network resolves to an existing NetworkAttachmentDefinition",
    severity=Severity.HIGH,
    rationale="A VM whose NetworkAttachmentDefinition is gone keeps running on its old "
    "attachment, but the next restart, migration or restore fails to start it. The same holds "
    "for the NAD a network binding plugin is registered with in the KubeVirt CR "
    "(spec.configuration.network.binding.<plugin>.networkAttachmentDefinition), and for a "
    "binding plugin the CR does not register at all: KubeVirt cannot make the launcher pod.",
    remediation="Recreate the NetworkAttachmentDefinition (and back NADs up with the VM's "
    "namespace), or change the VM's network to an existing one; register each binding plugin "
    "a NIC names in the KubeVirt CR.",
    references=(MULTUS_DOC, NAD_SPEC, BINDING_DOC, BINDING_SRC, FINALIZERS_DOC),
    requires=("NetworkAttachmentDefinition",),
    reads=("spec.template.spec.networks", "spec.template.spec.domain.devices.interfaces"),
)
def nads_exist(vm: VMRecord, ctx: CheckContext) -> Result:
    """N/A without multus networks or binding plugins; FAIL naming every missing ``ns/name``
    and every binding plugin the KubeVirt CR does not register; ERROR when a NIC names a
    binding plugin and the KubeVirt CR could not be read (whether it needs a NAD is unknown).

    Reads ``spec.template.spec.networks`` itself, and the interfaces for their binding plugins.
    KubeVirt adds to the launcher pod's Multus networks annotation, beside each secondary
    network, the NAD each binding plugin a NIC names is registered with (a bare name in the
    VM's namespace), and fails for a plugin it does not register ("unable to find the network
    binding plugin", kubevirt pkg/network/multus/annotation.go newBindingPluginAnnotationData;
    red team rt31: a passt plugin NAD that no longer existed passed as N/A).
    """
    multus = [n for n in vm.spec.networks if n.type == "multus"]
    # "" names a plugin too: one the CR cannot register (bench.mutations empty_string, seed
    # 902: a blank binding name read as no plugin turned NOT_READY into READY)
    plugins = {n.name: n.plugin or '""' for n in vm.spec.nics if n.plugin is not None}
    if not multus and not plugins:
        return not_applicable(f"VM {vm.ref} uses no multus networks or binding plugins.")
    resolved = {n.name: "/".join(nad_key(vm.namespace, n.multus_name or "")) for n in multus}
    registry = binding_plugins(ctx) if plugins else {}
    unregistered: list[str] = []
    for nic, plugin in plugins.items():
        conf = registry.get(plugin) if registry is not None else None
        if registry is not None and conf is None:
            unregistered.append(plugin)
        nad = dig(conf, "networkAttachmentDefinition")
        if isinstance(nad, str) and nad:
            resolved[f"{nic} (binding {plugin})"] = "/".join(nad_key(vm.namespace, nad))
    missing = sorted(
        {nad for nad in resolved.values() if tuple(nad.split("/", 1)) not in ctx.index.nads}
    )
    deleting, unreadable = _being_deleted(ctx, set(resolved.values()) - set(missing))
    ev: dict[str, Any] = {"networks": resolved, "binding_plugins": plugins}
    if deleting:
        ev["deleting_nads"] = deleting
    if missing or unregistered or deleting:
        parts = []
        if missing:
            parts.append(f"NetworkAttachmentDefinition(s) {', '.join(missing)}, which do not exist")
        if deleting:
            parts.append(
                "NetworkAttachmentDefinition(s) "
                + ", ".join(f"{k} (being deleted since {t})" for k, t in deleting.items())
                + ", which are gone once their finalizers are done (metadata.deletionTimestamp)"
            )
        if unregistered:
            parts.append(
                f"binding plugin(s) {', '.join(sorted(set(unregistered)))}, which the KubeVirt "
                "CR does not register"
            )
        return failed(
            f"VM {vm.ref} uses {'; and '.join(parts)}.",
            missing_nads=missing,
            unregistered_plugins=sorted(set(unregistered)),
            **ev,
        )
    if unreadable:
        return errored(
            f"VM {vm.ref} uses NetworkAttachmentDefinition(s) {', '.join(unreadable)} whose "
            "metadata.deletionTimestamp is no RFC 3339 time: whether they are being deleted "
            "is unknown.",
            unreadable_nads=unreadable,
            **ev,
        )
    if registry is None:
        return errored(
            f"VM {vm.ref} names binding plugin(s) {', '.join(sorted(set(plugins.values())))}, "
            "but the KubeVirt CR was not read: whether KubeVirt registers them, and with which "
            "NetworkAttachmentDefinition, is unknown.",
            **ev,
        )
    return passed(
        f"All {len(resolved)} network attachment(s) of VM {vm.ref} resolve to existing "
        "NetworkAttachmentDefinitions.",
        **ev,
    )


def _being_deleted(ctx: CheckContext, nads: set[str]) -> tuple[dict[str, str], list[str]]:
    """Of the existing NADs ``nads`` (``ns/name``), those being deleted (-> their RFC 3339
    ``metadata.deletionTimestamp``) and those whose deletionTimestamp is no time.

    A NAD a finalizer keeps (OVN-Kubernetes' on a UserDefinedNetwork's NADs) is still read
    while it is being deleted, and gone once the finalizers are done
    (https://kubernetes.io/docs/concepts/overview/working-with-objects/finalizers/): the VM's
    next start, migration or restore does not find it (red team rt37: RR-NET-001 PASS)."""
    deleting: dict[str, str] = {}
    unreadable: list[str] = []
    for nad in sorted(nads):
        ns, _, name = nad.partition("/")
        raw = dig(ctx.index.nad_objects.get((ns, name)), "metadata", "deletionTimestamp")
        if raw is None:
            continue
        when = parse_time(raw)
        if when is None:
            unreadable.append(nad)
        else:
            deleting[nad] = format_time(when) or ""
    return deleting, unreadable


def binding_plugins(ctx: CheckContext) -> dict[str, Any] | None:
    """The network binding plugins the KubeVirt CR registers (name -> its
    ``spec.configuration.network.binding`` entry), or None when no CR was read whole
    (RR-NET-001, RR-NET-002)."""
    data = ctx.index.data
    crs = data.of("KubeVirt")
    if data.state("KubeVirt") is not KindState.COMPLETE or not crs:
        return None
    if ctx.index.partial_for("KubeVirt", ""):
        return None
    out: dict[str, Any] = {}
    for cr in crs:
        binding = dig(cr, "spec", "configuration", "network", "binding")
        if binding is not None and not isinstance(binding, dict):
            return None
        out.update(binding or {})
    return out
