"""A VM's network identity: what a restorer must recreate for the guest to be reachable as before.

Per NIC: binding, network (pod or a Multus NetworkAttachmentDefinition with its CNI type and
bridge/VLAN from the NAD's config JSON), pinned MAC, and whether cloud-init networkData sets
static addresses (the ``networkDataFacts`` the redactor leaves, see :mod:`auditor.netdata`;
sysprep answers are not read, so Windows addressing is unknown). Per VM: hostname,
subdomain and the Services whose selectors match the VM's pod labels (the names clients
use). Sources: https://kubevirt.io/user-guide/network/interfaces_and_networks/,
https://kubevirt.io/user-guide/network/dns/, https://kubevirt.io/user-guide/network/service_objects/
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from auditor.inventory.fields import mac_address
from auditor.kubevalues import dig
from auditor.netdata import FACTS_KEY

__all__ = ["NicIdentity", "NetworkIdentity", "network_identity", "nad_facts"]


def nad_facts(nad: dict[str, Any] | None) -> dict[str, Any] | None:
    """CNI type, bridge and VLAN from a NAD's ``spec.config`` JSON (first plugin of a list)."""
    if nad is None:
        return None
    raw = dig(nad, "spec", "config")
    try:
        conf = json.loads(raw) if isinstance(raw, str) and raw else {}
    except ValueError:
        conf = {}
    if isinstance(conf, dict) and isinstance(conf.get("plugins"), list) and conf["plugins"]:
        first = conf["plugins"][0]
        conf = first if isinstance(first, dict) else {}
    if not isinstance(conf, dict):
        conf = {}
    vlan = conf.get("vlan", conf.get("vlanID", conf.get("vlanId")))
    return {
        "cni_type": conf.get("type") if isinstance(conf.get("type"), str) else None,
        "bridge": conf.get("bridge") if isinstance(conf.get("bridge"), str) else None,
        "vlan": vlan if isinstance(vlan, int) and not isinstance(vlan, bool) else None,
        "topology": conf.get("topology") if isinstance(conf.get("topology"), str) else None,
        "resource": dig(nad, "metadata", "annotations", "k8s.v1.cni.cncf.io/resourceName"),
    }


@dataclass(frozen=True)
class NicIdentity:
    """One NIC; ``static_addresses`` True/False from cloud-init, None when unknown."""

    name: str
    binding: str | None
    mac: str | None
    network_type: str | None
    nad: tuple[str, str] | None
    nad_found: bool
    nad_config: dict[str, Any] | None
    static_addresses: bool | None
    #: ``vm``, ``kubevirt-cr`` or ``inferred``: :attr:`auditor.inventory.vmspec.Nic.binding_from`
    binding_from: str = "vm"

    def to_dict(self) -> dict[str, Any]:
        """Card / evidence form."""
        return {
            "name": self.name,
            "binding": self.binding,
            "binding_from": self.binding_from,
            "mac": self.mac,
            "network": self.network_type,
            "nad": "/".join(self.nad) if self.nad else None,
            "nad_found": self.nad_found if self.nad else None,
            "nad_config": self.nad_config,
            "static_addresses": self.static_addresses,
        }


@dataclass(frozen=True)
class NetworkIdentity:
    """The VM's NICs, hostname/subdomain, the Services selecting its pods and their Routes."""

    nics: tuple[NicIdentity, ...]
    hostname: str | None
    subdomain: str | None
    services: tuple[dict[str, Any], ...] = field(default_factory=tuple)
    routes: tuple[dict[str, Any], ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        """Card form."""
        return {
            "hostname": self.hostname,
            "subdomain": self.subdomain,
            "nics": [n.to_dict() for n in self.nics],
            "services": list(self.services),
            "routes": list(self.routes),
        }


def _static_by_mac(vm: dict[str, Any]) -> tuple[bool | None, set[str], set[str], bool]:
    """(any static, static MACs, DHCP MACs, sysprep present) from the VM's volumes."""
    vols = dig(vm, "spec", "template", "spec", "volumes")
    static: bool | None = False
    smacs: set[str] = set()
    dmacs: set[str] = set()
    sysprep = False
    for v in vols if isinstance(vols, list) else []:
        if not isinstance(v, dict):
            continue
        sysprep = sysprep or "sysprep" in v
        for src in ("cloudInitNoCloud", "cloudInitConfigDrive"):
            ci = v.get(src)
            if not isinstance(ci, dict):
                continue
            if "networkDataSecretRef" in ci:
                static = None
            facts = ci.get(FACTS_KEY)
            if isinstance(facts, dict):
                if facts.get("static") is None:
                    static = None
                elif facts.get("static") and static is not None:
                    static = True
                smacs |= {
                    mac_address(m) for m in facts.get("static_macs") or [] if isinstance(m, str)
                }
                dmacs |= {
                    mac_address(m) for m in facts.get("dhcp_macs") or [] if isinstance(m, str)
                }
    return static, smacs, dmacs, sysprep


#: Labels KubeVirt puts on every virt-launcher pod whatever the VM's template says.
_LAUNCHER_LABELS = {"kubevirt.io": "virt-launcher"}


def _launcher_name(vm: dict[str, Any]) -> str | None:
    """The ``vm.kubevirt.io/name`` label KubeVirt gives the VM's launcher pod: the VMI's
    ``spec.hostname`` when set, else its name up to the first dot, at most 63 characters
    (pkg/util/net/dns SanitizeHostname)."""
    host = dig(vm, "spec", "template", "spec", "hostname")
    if isinstance(host, str) and host:
        return host
    name = dig(vm, "metadata", "name")
    return name.split(".", 1)[0][:63] if isinstance(name, str) and name else None


def network_identity(
    vm: dict[str, Any],
    namespace: str,
    nics: list[Any],
    nads: dict[tuple[str, str], dict[str, Any]],
    services: list[dict[str, Any]],
    routes: list[dict[str, Any]] | None = None,
) -> NetworkIdentity:
    """Build the identity; ``nics`` are :class:`auditor.inventory.vmspec.Nic`,
    ``nads`` all NADs by (namespace, name), ``services`` and ``routes`` those of the VM's
    namespace (an OpenShift Route names the VM when it targets a Service selecting it)."""
    static, smacs, dmacs, sysprep = _static_by_mac(vm)
    out = []
    for n in nics:
        key = None
        if n.network_type == "multus" and n.network_name:
            ns_, _, nm = str(n.network_name).rpartition("/")
            key = (ns_ or namespace, nm)
        # one spelling on both sides: KubeVirt admits 0200.00aa.bbcc for 02:00:00:aa:bb:cc
        mac = mac_address(n.mac) if isinstance(n.mac, str) else None
        if mac and mac in smacs:
            nic_static: bool | None = True
        elif mac and mac in dmacs:
            nic_static = False
        elif sysprep or static is None:
            nic_static = None
        else:
            nic_static = static
        nad = nads.get(key) if key else None
        out.append(
            NicIdentity(
                name=n.name,
                binding=n.binding,
                mac=n.mac,
                network_type=n.network_type,
                nad=key,
                nad_found=nad is not None,
                nad_config=nad_facts(nad),
                static_addresses=nic_static,
                binding_from=n.binding_from,
            )
        )
    tspec = dig(vm, "spec", "template", "spec") or {}
    labels = dig(vm, "spec", "template", "metadata", "labels")
    pod_labels = {str(k): str(v) for k, v in labels.items()} if isinstance(labels, dict) else {}
    # KubeVirt labels every virt-launcher pod with these over the template's own
    # (pkg/virt-controller/services/template.go): a Service may select the VM by them
    # (red team: one selecting vm.kubevirt.io/name went unseen, and RR-NET-003 was N/A)
    launcher = _launcher_name(vm)
    pod_labels = {
        **pod_labels,
        **_LAUNCHER_LABELS,
        **({"vm.kubevirt.io/name": launcher} if launcher else {}),
    }
    matched = []
    for svc in services:
        sel = dig(svc, "spec", "selector")
        if isinstance(sel, dict) and sel and all(pod_labels.get(k) == v for k, v in sel.items()):
            matched.append(
                {
                    "name": dig(svc, "metadata", "name"),
                    "type": dig(svc, "spec", "type") or "ClusterIP",
                    "headless": dig(svc, "spec", "clusterIP") == "None",
                    "labels": dig(svc, "metadata", "labels") or {},
                }
            )
    names = {m["name"] for m in matched}
    matched_routes = []
    for route in routes or []:
        targets = [dig(route, "spec", "to")] + list(dig(route, "spec", "alternateBackends") or [])
        hit = [
            t.get("name")
            for t in targets
            if isinstance(t, dict)
            and (t.get("kind") or "Service") == "Service"  # OpenShift defaults "" too
            and t.get("name") in names
        ]
        if hit:
            matched_routes.append(
                {
                    "name": dig(route, "metadata", "name"),
                    "host": dig(route, "spec", "host"),
                    "service": hit[0],
                    "labels": dig(route, "metadata", "labels") or {},
                }
            )
    hostname = tspec.get("hostname") if isinstance(tspec, dict) else None
    subdomain = tspec.get("subdomain") if isinstance(tspec, dict) else None
    return NetworkIdentity(
        nics=tuple(out),
        hostname=hostname if isinstance(hostname, str) else None,
        subdomain=subdomain if isinstance(subdomain, str) else None,
        services=tuple(matched),
        routes=tuple(matched_routes),
    )
