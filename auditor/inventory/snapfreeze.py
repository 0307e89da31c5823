"""Whether a VirtualMachineSnapshot froze the guest, from its ``status.indications`` (h47b).

KubeVirt records how an online snapshot was taken
(https://github.com/kubevirt/kubevirt/blob/main/pkg/storage/snapshot/snapshot.go
``updateSnapshotSourceIndications``; the values in
staging/src/kubevirt.io/api/snapshot/v1beta1/types.go ``Indication``):

- no ``Online``: the VM was not running, its disks were at rest (KubeVirt writes no
  indications for an offline snapshot);
- ``Online`` with ``GuestAgent``: the guest agent was asked to freeze the filesystems;
- ``Online`` with ``NoGuestAgent`` ("Snapshot is crash-consistent and may not be
  application-consistent"), ``Paused`` (taken while paused: no freeze) or ``QuiesceTimeout``
  (the freeze window ran out before the snapshot completed): crash-consistent only.

The same values are written to the deprecated ``status.indications`` and to
``status.sourceIndications[].indication`` (KubeVirt v1.8 and later, commit 1b070a09c1);
older releases write only the first. Both are read, and either one saying crash-consistent decides. ``Online``
with neither ``GuestAgent`` nor a crash indication records no freeze: read as
crash-consistent too (never as frozen). A field of the wrong shape is named and the
snapshot's consistency is unknown.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from auditor.inventory import ClusterIndex, VMRecord
from auditor.inventory.facts import counted_vm_snapshots
from auditor.inventory.snapcopy import snapshot_indications
from auditor.kubevalues import dig, format_time, parse_time

__all__ = [
    "CRASH",
    "UNKNOWN",
    "SNAPSHOT_INDICATIONS_SRC",
    "SnapshotPoint",
    "newest_snapshot_point",
    "snapshot_freeze",
    "when",
]

SNAPSHOT_INDICATIONS_SRC = (
    "https://github.com/kubevirt/kubevirt/blob/main/pkg/storage/snapshot/snapshot.go"
)
CRASH = "crash-consistent"
FROZEN = "frozen"
OFFLINE = "offline"
UNKNOWN = "unknown"
#: what each crash indication means, for the message
_CRASH_MEANING = {
    "NoGuestAgent": "no guest agent answered, so nothing froze its filesystems",
    "Paused": "the VM was paused, so no freeze ran",
    "QuiesceTimeout": "the guest agent's freeze window ran out before the snapshot completed",
}


@dataclass(frozen=True)
class SnapshotPoint:
    """One VirtualMachineSnapshot as a restore point: ``name``; ``time`` (its
    ``status.creationTime``, else ``metadata.creationTimestamp``; UTC, None when neither
    parses); ``state`` (:data:`CRASH`, ``"frozen"``, ``"offline"`` or :data:`UNKNOWN`);
    ``why``: the fields read and what they say, for a message and the evidence."""

    name: str
    time: datetime | None
    state: str
    why: str


def _fields(s: dict[str, Any]) -> str:
    """The indication fields ``s`` holds, for a message."""
    held = [f for f in ("indications", "sourceIndications") if dig(s, "status", f) is not None]
    return "status." + ("/".join(held) if held else "indications")


def snapshot_freeze(s: dict[str, Any]) -> tuple[str, str]:
    """``(state, why)`` of VirtualMachineSnapshot ``s`` (a raw object): ``state`` as in
    :class:`SnapshotPoint`; ``why`` names the field and values ("VirtualMachineSnapshot
    vm1-snap status.indications=['NoGuestAgent', 'Online']: no guest agent answered, ...").
    Raises nothing."""
    name = f"VirtualMachineSnapshot {dig(s, 'metadata', 'name')}"
    found, fault = snapshot_indications(s)
    if fault is not None:
        return UNKNOWN, f"{name} {fault}: whether it froze the guest is unknown"
    shown = f"{name} {_fields(s)}={sorted(found)}"
    if "Online" not in found:
        return OFFLINE, f"{shown}: taken while the VM was not running"
    crash = [i for i in ("NoGuestAgent", "Paused", "QuiesceTimeout") if i in found]
    if crash:
        return CRASH, f"{shown}: {'; '.join(_CRASH_MEANING[i] for i in crash)}"
    if "GuestAgent" in found:
        return FROZEN, f"{shown}: the guest agent froze its filesystems"
    return CRASH, f"{shown}: taken while the VM ran, and no GuestAgent indication records a freeze"


def _time(s: dict[str, Any]) -> datetime | None:
    return parse_time(dig(s, "status", "creationTime")) or parse_time(
        dig(s, "metadata", "creationTimestamp")
    )


def newest_snapshot_point(vm: VMRecord, ix: ClusterIndex) -> SnapshotPoint | None:
    """The newest VirtualMachineSnapshot of ``vm`` that copies one of its disks restorably
    (:func:`auditor.inventory.facts.counted_vm_snapshots`), or None. One without a time
    ranks newest (what cannot be placed is judged, never passed over). Cost: the VM's own
    snapshots times its disks, as RR-STG-001."""
    snaps = counted_vm_snapshots(vm, ix)
    if not snaps:
        return None

    def rank(s: dict[str, Any]) -> float:
        t = _time(s)
        return float("inf") if t is None else t.timestamp()

    s = max(snaps, key=rank)
    state, why = snapshot_freeze(s)
    return SnapshotPoint(str(dig(s, "metadata", "name")), _time(s), state, why)


def when(point: SnapshotPoint) -> str:
    """The snapshot's time for a message (``an unknown time`` without one)."""
    return format_time(point.time) or "an unknown time"
