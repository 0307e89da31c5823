"""Which VMs claim each firmware UUID, serial and MAC address: one pass over all VMs.

A VM's SMBIOS UUID is ``spec.template.spec.domain.firmware.uuid`` when set; otherwise the
running VMI's (KubeVirt fills it at start-up); otherwise KubeVirt's name-derived legacy UUID,
``uuid5(6a1a24a1-4061-4607-8bf4-a3963d0c5895, <VM name>)``, which is what the VM will get
(up to KubeVirt 1.5 at every start, from 1.6 written once into the spec). The namespace is not
part of it, so two unpinned VMs with one name in two namespaces share a UUID. The serial is
never generated. MACs come from the VM spec and the running VMI (KubeMacPool or a restore may
have set them there).
Source: https://github.com/kubevirt/kubevirt/blob/main/pkg/virt-controller/watch/vm/firmware.go
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from auditor.inventory.fields import firmware_uuid, mac_address
from auditor.kubevalues import dig

__all__ = ["Claim", "IdentityIndex", "legacy_firmware_uuid", "nic_binding"]

_LEGACY_NS = uuid.UUID("6a1a24a1-4061-4607-8bf4-a3963d0c5895")
#: core interface bindings; ``passtBinding`` is KubeVirt's core passt binding (v1.8+, gate
#: PasstBinding, pod network only: kubevirt pkg/network/admitter/passt.go), not the ``passt``
#: network binding plugin (``binding: {name: passt}``) nor the removed core ``passt``
_BINDINGS = ("bridge", "masquerade", "sriov", "slirp", "macvtap", "passt", "passtBinding")


def legacy_firmware_uuid(vm_name: str) -> str:
    """KubeVirt's ``CalculateLegacyUUID``: uuid5 of the VM name in KubeVirt's namespace."""
    return str(uuid.uuid5(_LEGACY_NS, vm_name))


def nic_binding(iface: dict[str, Any]) -> str | None:
    """The binding of one ``domain.devices.interfaces`` entry (``binding.name`` for plugins)."""
    for key in _BINDINGS:
        if key in iface:
            return key
    plugin = dig(iface, "binding", "name")
    return plugin if isinstance(plugin, str) else None


@dataclass(frozen=True)
class Claim:
    """One VM claiming one identity value; ``source`` is spec, runtime or derived."""

    namespace: str
    name: str
    source: str
    nic: str | None = None
    binding: str | None = None

    @property
    def ref(self) -> str:
        """``namespace/name``."""
        return f"{self.namespace}/{self.name}"

    def to_dict(self) -> dict[str, Any]:
        """Evidence form."""
        out: dict[str, Any] = {"vm": self.ref, "source": self.source}
        if self.nic is not None:
            out.update(nic=self.nic, binding=self.binding)
        return out


@dataclass
class IdentityIndex:
    """``(what, value) -> claims``, ``what`` being ``uuid``, ``serial`` or ``mac``."""

    claims: dict[tuple[str, str], list[Claim]] = field(default_factory=dict)
    by_vm: dict[tuple[str, str], list[tuple[str, str, Claim]]] = field(default_factory=dict)

    @classmethod
    def build(
        cls, vms: list[dict[str, Any]], vmis: dict[tuple[str, str], dict[str, Any]]
    ) -> IdentityIndex:
        """Index every VM's UUID, serial and MACs (malformed values are skipped)."""
        ix = cls()
        for vm in vms:
            meta = vm.get("metadata") or {}
            ns, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
            vmi = vmis.get((ns, name))
            raw = dig(vm, "spec", "template", "spec", "domain")
            domain: dict[str, Any] = raw if isinstance(raw, dict) else {}
            raw_fw = domain.get("firmware")
            fw: dict[str, Any] = raw_fw if isinstance(raw_fw, dict) else {}
            runtime = dig(vmi, "spec", "domain", "firmware", "uuid") if vmi else None
            if isinstance(fw.get("uuid"), str) and fw["uuid"]:
                ix._add(ns, name, "uuid", firmware_uuid(fw["uuid"]), "spec")
            elif isinstance(runtime, str) and runtime:
                ix._add(ns, name, "uuid", firmware_uuid(runtime), "runtime")
            elif name:
                ix._add(ns, name, "uuid", legacy_firmware_uuid(name), "derived")
            if isinstance(fw.get("serial"), str) and fw["serial"]:
                ix._add(ns, name, "serial", fw["serial"], "spec")
            seen: set[str] = set()
            for source, obj in (("spec", domain), ("runtime", dig(vmi, "spec", "domain"))):
                ifaces = dig(obj, "devices", "interfaces") if isinstance(obj, dict) else None
                for iface in ifaces if isinstance(ifaces, list) else []:
                    mac = iface.get("macAddress") if isinstance(iface, dict) else None
                    if not isinstance(mac, str) or not mac:
                        continue
                    mac = mac_address(mac)
                    if mac in seen:
                        continue
                    seen.add(mac)
                    nic = str(iface.get("name"))
                    ix._add(ns, name, "mac", mac, source, nic, nic_binding(iface))
        return ix

    def _add(
        self,
        ns: str,
        name: str,
        what: str,
        value: str,
        source: str,
        nic: str | None = None,
        binding: str | None = None,
    ) -> None:
        claim = Claim(ns, name, source, nic, binding)
        self.claims.setdefault((what, value), []).append(claim)
        self.by_vm.setdefault((ns, name), []).append((what, value, claim))

    def shared(self, namespace: str, name: str, *whats: str) -> list[dict[str, Any]]:
        """This VM's values of kinds ``whats`` that another VM also claims, with the others."""
        out = []
        for what, value, mine in self.by_vm.get((namespace, name), []):
            if what not in whats:
                continue
            others = [
                c for c in self.claims[(what, value)] if (c.namespace, c.name) != (namespace, name)
            ]
            if others:
                out.append(
                    {
                        "what": what,
                        "value": value,
                        "mine": mine.to_dict(),
                        "others": [c.to_dict() for c in others],
                    }
                )
        return out

    def own(self, namespace: str, name: str, what: str) -> list[Claim]:
        """This VM's claims of one kind."""
        return [c for w, _, c in self.by_vm.get((namespace, name), []) if w == what]
