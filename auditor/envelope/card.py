"""The recovery card: identity a restorer needs even when the cluster is gone.

Shape: :class:`auditor.envelope.model.RecoveryCard` (``docs/report-schema.md``,
``recovery_card``). Secrets never appear: sources have already redacted them,
and the card only names the volumes' types and referenced objects. Reads the
inventory's facts only, never a check.
"""

from __future__ import annotations

from datetime import datetime
from typing import cast

from pydantic import TypeAdapter

from auditor.envelope.model import (
    BindingFrom,
    CardVm,
    CopyCard,
    DiskCard,
    FirmwareCard,
    NetworkIdentityCard,
    NetworkRef,
    NicCard,
    ObjectRef,
    PvcCard,
    RecoveryCard,
    RevisionRef,
    VolumeRef,
)
from auditor.inventory import ClusterIndex, VMRecord
from auditor.inventory.facts import copies_of, nad_key, reclaim_policy
from auditor.inventory.protection import PvcRef
from auditor.kubevalues import age_hours, dig, format_time, parse_quantity, parse_time

__all__ = ["recovery_card"]


def _text(value: object) -> str | None:
    """A string field as read; a wrong-typed value (the object is malformed) shows as unknown."""
    return value if isinstance(value, str) else None


def _pvc(index: ClusterIndex, p: PvcRef | None) -> PvcCard | None:
    if p is None or p.obj is None:
        return None
    o = p.obj
    size = dig(o, "status", "capacity", "storage") or dig(
        o, "spec", "resources", "requests", "storage"
    )
    modes = dig(o, "spec", "accessModes")
    return PvcCard(
        name=p.name,
        size=size if isinstance(size, str) else None,
        size_bytes=parse_quantity(size),
        storage_class=_text(dig(o, "spec", "storageClassName")),
        volume_mode=_text(dig(o, "spec", "volumeMode")) or "Filesystem",
        access_modes=[m for m in modes if isinstance(m, str)] if isinstance(modes, list) else [],
        reclaim_policy=reclaim_policy(index, o),
        volume_name=_text(dig(o, "spec", "volumeName")),
    )


_COPY: TypeAdapter[CopyCard] = TypeAdapter(CopyCard)


def _newest_copy(
    vm: VMRecord, p: PvcRef | None, disk: str, index: ClusterIndex, at: datetime
) -> CopyCard | None:
    if p is None:
        return None
    copies = copies_of(vm, p, disk, index, newest_backup_only=True)
    if not copies:
        return None
    best = max(copies, key=lambda c: c["time"] or "")
    row = {**best, "age_hours": age_hours(parse_time(best["time"]), at)}
    return _COPY.validate_python(row)


def _ref(value: dict[str, str] | None) -> ObjectRef | None:
    return None if value is None else ObjectRef.model_validate(value)


def recovery_card(vm: VMRecord, index: ClusterIndex, at: datetime, owner: str) -> RecoveryCard:
    """Build the card of ``vm`` as seen at ``at`` (UTC); ``owner`` as resolved for the report."""
    fw = vm.spec.firmware
    uuid, resolved = fw.uuid, dict(sorted(fw.resolved_from.items()))
    running = dig(vm.vmi, "spec", "domain", "firmware", "uuid") if vm.vmi else None
    if uuid is None and (vm.pvcs or vm.state_pvc) and isinstance(running, str) and running:
        # Not pinned in the VM: the UUID the guest runs with, which a restore keeps only when
        # it is pinned (a Windows guest may need reactivation otherwise; new-user trial: the
        # card said "-" though the VMI showed it). A VM without a persistent disk keeps
        # nothing of its guest across a restart, so nothing there remembers it.
        uuid, resolved = running, {**resolved, "uuid": "vmi"}
    # as for the UUID: a VM without a persistent disk keeps nothing of its guest's network
    # configuration across a restart
    record = index.vmi_records.get((vm.namespace, vm.name)) if vm.vmi else None
    running_macs = dict(record.macs) if record is not None and (vm.pvcs or vm.state_pvc) else {}
    by_claim = {p.name: p for p in vm.pvcs}
    disks = sorted(vm.spec.disks, key=lambda d: (d.boot_order is None, d.boot_order or 0))
    return RecoveryCard(
        vm=CardVm(
            namespace=vm.namespace,
            name=vm.name,
            uid=vm.uid,
            created=format_time(vm.created),
            run_strategy=vm.spec.run_strategy,
        ),
        owner=owner,
        instancetype=_ref(vm.spec.instancetype),
        preference=_ref(vm.spec.preference),
        network_identity=NetworkIdentityCard.model_validate(vm.network.to_dict()),
        revisions=[
            RevisionRef.model_validate(r.to_dict()) for _, r in sorted(vm.revisions.items())
        ],
        firmware=FirmwareCard(
            uuid=uuid,
            serial=fw.serial,
            bootloader=fw.bootloader,
            secure_boot=fw.secure_boot,
            efi_persistent=fw.efi_persistent,
            tpm=fw.tpm,
            tpm_persistent=fw.tpm_persistent,
            machine_type=fw.machine_type,
            resolved_from=resolved,
        ),
        disks=[
            DiskCard(
                name=d.name,
                boot_order=d.boot_order,
                device=d.device,
                bus=d.bus,
                bus_from=d.bus_from,
                serial=d.serial,
                volume=VolumeRef(type=d.volume_type, name=d.volume_name),
                pvc=_pvc(index, by_claim.get(d.claim or "")),
                newest_copy=_newest_copy(vm, by_claim.get(d.claim or ""), d.name, index, at),
            )
            for d in disks
        ],
        persistent_state_pvc=_pvc(index, vm.state_pvc),
        nics=[
            NicCard(
                name=n.name,
                # not pinned: the MAC the guest runs with (a restore gives it a new one unless
                # pinned: DHCP reservations, licences and udev rules see the change; trial nu25)
                mac=n.mac or running_macs.get(n.name),
                mac_from="vmi" if n.mac is None and n.name in running_macs else None,
                model=n.model,
                model_from=n.model_from,
                binding=n.binding,
                # the interface KubeVirt adds to a VM listing none is bound as its CR says,
                # or inferred (CR unread): never shown as if the VM spec named it (h43b left)
                binding_from=cast(BindingFrom, n.binding_from),
                network=NetworkRef(
                    type=n.network_type,
                    name="/".join(nad_key(vm.namespace, n.network_name))
                    if n.network_name
                    else None,
                ),
            )
            for n in vm.spec.nics
        ],
    )
