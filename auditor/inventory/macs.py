"""Whether a pinned MAC address is one the restored guest can keep.

KubeVirt's admission checks a MAC's format and length only (``link.ValidateMacAddress``,
https://github.com/kubevirt/kubevirt/blob/main/pkg/network/link/mac.go), so a VM may pin an
address the machine below refuses or replaces:

- a multicast address (the low bit of the first octet set, broadcast included): libvirt
  refuses the domain ("XML error: expected unicast mac address, found multicast",
  ``virDomainNetDefParseXML``, https://gitlab.com/libvirt/libvirt/-/blob/master/src/conf/domain_conf.c),
  so the VMI never starts;
- the all-zero address: QEMU reads it as unset and gives the NIC 52:54:00:12:34:xx
  (``qemu_macaddr_default_if_unset``, https://gitlab.com/qemu-project/qemu/-/blob/master/net/net.c);
- ``02:00:00:00:00:00`` on a masquerade interface: KubeVirt reserves it for the in-pod bridge
  and refuses the VM ("The requested MAC address is reserved for the in-pod bridge",
  ``validateMasqueradeBinding``,
  https://github.com/kubevirt/kubevirt/blob/main/pkg/network/admitter/binding.go), so a
  restore cannot create it.
"""

from __future__ import annotations

from auditor.inventory.fields import mac_address

__all__ = ["mac_fault"]

#: KubeVirt's ``link.StaticMasqueradeBridgeMAC``
MASQUERADE_BRIDGE_MAC = "02:00:00:00:00:00"


def mac_fault(mac: str, binding: str | None) -> tuple[str, bool] | None:
    """``(why, refused)`` when ``mac`` (a :data:`auditor.inventory.fields.MAC_RE` address) is
    no address the guest keeps: ``refused`` is True when the VM cannot be created or started
    with it (multicast, reserved), False when it starts with another address (all-zero)."""
    norm = mac_address(mac)
    if norm == "00:00:00:00:00:00":
        return "is all-zero, which QEMU reads as unset and replaces with 52:54:00:12:34:xx", False
    try:
        first = int(norm[:2], 16)
    except ValueError:
        return None
    if first & 1:
        return (
            "is a multicast address (first octet odd), which libvirt refuses: the VM does "
            "not start",
            True,
        )
    if binding == "masquerade" and norm == MASQUERADE_BRIDGE_MAC:
        return (
            "is reserved for the in-pod bridge on a masquerade interface: KubeVirt refuses the VM",
            True,
        )
    return None
