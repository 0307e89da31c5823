"""The recovery card: identity a restorer needs even when the cluster is gone.

Shape documented in ``docs/report-schema.md`` (``recovery_card``). Secrets
never appear: sources have already redacted them, and the card only names
the volumes' types and referenced objects.
"""

from __future__ import annotations

from typing import Any

from auditor.checks.network import nad_key
from auditor.checks.registry import CheckContext
from auditor.checks.storage import copies_of, reclaim_policy
from auditor.inventory import VMRecord
from auditor.inventory.protection import PvcRef
from auditor.kubevalues import age_hours, dig, format_time, parse_quantity, parse_time

__all__ = ["recovery_card"]


def _pvc(ctx: CheckContext, p: PvcRef | None) -> dict[str, Any] | None:
    if p is None or p.obj is None:
        return None
    o = p.obj
    size = dig(o, "status", "capacity", "storage") or dig(
        o, "spec", "resources", "requests", "storage"
    )
    modes = dig(o, "spec", "accessModes")
    return {
        "name": p.name,
        "size": size if isinstance(size, str) else None,
        "size_bytes": parse_quantity(size),
        "storage_class": dig(o, "spec", "storageClassName"),
        "volume_mode": dig(o, "spec", "volumeMode") or "Filesystem",
        "access_modes": [m for m in modes if isinstance(m, str)] if isinstance(modes, list) else [],
        "reclaim_policy": reclaim_policy(ctx, o),
        "volume_name": dig(o, "spec", "volumeName"),
    }


def _newest_copy(
    vm: VMRecord, p: PvcRef | None, disk: str, ctx: CheckContext
) -> dict[str, Any] | None:
    if p is None:
        return None
    at = ctx.at
    copies = copies_of(vm, p, disk, ctx.index)
    if not copies:
        return None
    best = max(copies, key=lambda c: c["time"] or "")
    return {**best, "age_hours": age_hours(parse_time(best["time"]), at)}


def recovery_card(vm: VMRecord, ctx: CheckContext, owner: str) -> dict[str, Any]:
    """Build the card for one VM (JSON-ready dict)."""
    fw = vm.spec.firmware
    by_claim = {p.name: p for p in vm.pvcs}
    disks = sorted(vm.spec.disks, key=lambda d: (d.boot_order is None, d.boot_order or 0))
    return {
        "vm": {
            "namespace": vm.namespace,
            "name": vm.name,
            "uid": vm.uid,
            "created": format_time(vm.created),
            "run_strategy": vm.spec.run_strategy,
        },
        "owner": owner,
        "instancetype": vm.spec.instancetype,
        "preference": vm.spec.preference,
        "revisions": [r.to_dict() for _, r in sorted(vm.revisions.items())],
        "network_identity": vm.network.to_dict(),
        "firmware": {
            "uuid": fw.uuid,
            "serial": fw.serial,
            "bootloader": fw.bootloader,
            "secure_boot": fw.secure_boot,
            "efi_persistent": fw.efi_persistent,
            "tpm": fw.tpm,
            "tpm_persistent": fw.tpm_persistent,
            "machine_type": fw.machine_type,
            "resolved_from": dict(sorted(fw.resolved_from.items())),
        },
        "disks": [
            {
                "name": d.name,
                "boot_order": d.boot_order,
                "device": d.device,
                "bus": d.bus,
                "bus_from": d.bus_from,
                "serial": d.serial,
                "volume": {"type": d.volume_type, "name": d.volume_name},
                "pvc": _pvc(ctx, by_claim.get(d.claim or "")),
                "newest_copy": _newest_copy(vm, by_claim.get(d.claim or ""), d.name, ctx),
            }
            for d in disks
        ],
        "persistent_state_pvc": _pvc(ctx, vm.state_pvc),
        "nics": [
            {
                "name": n.name,
                "mac": n.mac,
                "model": n.model,
                "model_from": n.model_from,
                "binding": n.binding,
                "network": {
                    "type": n.network_type,
                    "name": "/".join(nad_key(vm.namespace, n.network_name))
                    if n.network_name
                    else None,
                },
            }
            for n in vm.spec.nics
        ],
    }
