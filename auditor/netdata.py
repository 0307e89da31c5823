"""Non-secret facts about cloud-init ``networkData``, taken while reading, before redaction.

The redactor strips ``networkData`` (it can carry addresses, routes and credentials). What a
restorer needs to know survives as ``networkDataFacts`` beside it: whether the guest's
addresses are set statically, and for which MACs. Formats: cloud-init network config v1
(``config: [{type: physical, mac_address, subnets: [{type: static}]}]``) and v2
(``ethernets: {id: {match: {macaddress}, addresses: [...], dhcp4}}``), optionally under a
top-level ``network:`` key. Source: https://cloudinit.readthedocs.io/en/latest/reference/network-config.html
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

import yaml

__all__ = ["FACTS_KEY", "network_data_facts"]

FACTS_KEY = "networkDataFacts"


def network_data_facts(key: str, value: Any) -> dict[str, Any] | None:
    """``{"static": bool | None, "static_macs": [...], "dhcp_macs": [...]}`` or None.

    ``key`` is ``networkData`` or ``networkDataBase64``; ``static`` is None when the text
    is not a network config the parser understands (unknown, never "no"); ``malformed``
    (a reason) is added when the value is not a string at all.
    """
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        # cloud-init would not run with it; whether it set static addresses is unknown
        kind = "a list" if isinstance(value, list) else f"a {type(value).__name__}"
        return {
            "static": None,
            "static_macs": [],
            "dhcp_macs": [],
            "malformed": f"{key} is {kind}, not a string",
        }
    unreadable: dict[str, Any] = {
        "static": None,
        "static_macs": [],
        "dhcp_macs": [],
        # cloud-init applies no network config it cannot read: as unknown as a non-string
        "malformed": f"{key} is no cloud-init network config (a YAML mapping)",
    }
    text = value
    if key == "networkDataBase64":
        try:
            text = base64.b64decode(value, validate=False).decode("utf-8", "replace")
        except (binascii.Error, ValueError):
            return unreadable
    try:
        doc = yaml.safe_load(text)
    except Exception:  # noqa: BLE001 - any text PyYAML cannot make a value of is unreadable
        # Not only YAMLError: a bad date (2024-13-01) raises ValueError, "!!int x"
        # ValueError, "!!timestamp x" AttributeError, deep nesting RecursionError. One VM's
        # networkData must never stop the read of the export (red team, helper-21).
        return unreadable
    net = doc.get("network", doc) if isinstance(doc, dict) else None
    if not isinstance(net, dict):
        return unreadable
    static_macs: list[str] = []
    dhcp_macs: list[str] = []
    static: bool | None = None
    eths = net.get("ethernets")
    if isinstance(eths, dict):
        static = False
        for eth in eths.values():
            if not isinstance(eth, dict):
                continue
            mac = (
                eth.get("match", {}).get("macaddress")
                if isinstance(eth.get("match"), dict)
                else None
            )
            has = bool(eth.get("addresses"))
            static = static or has
            if isinstance(mac, str):
                (static_macs if has else dhcp_macs).append(mac.lower())
    config = net.get("config")
    if isinstance(config, list):
        static = bool(static)
        for item in config:
            if not isinstance(item, dict) or item.get("type") != "physical":
                continue
            raw = item.get("subnets")
            subnets: list[Any] = raw if isinstance(raw, list) else []
            has = any(
                isinstance(s, dict) and str(s.get("type", "")).startswith("static") for s in subnets
            )
            static = static or has
            mac = item.get("mac_address")
            if isinstance(mac, str):
                (static_macs if has else dhcp_macs).append(mac.lower())
    return {"static": static, "static_macs": sorted(static_macs), "dhcp_macs": sorted(dhcp_macs)}
