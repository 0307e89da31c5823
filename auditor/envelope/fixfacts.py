"""The values a filled-in fix needs, read once per VM from the inventory.

:class:`FixFacts` holds names only (namespaces, object names, the running
firmware UUID/serial, Schedules and BackupStorageLocations): never a spec's
secret-bearing fields (cloud-init, sysprep), so nothing secret can reach a
remediation text.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from auditor.inventory import ClusterIndex, VMRecord
from auditor.kubevalues import dig

__all__ = ["FixFacts", "vm_fix_facts", "platform_fix_facts"]

#: Velero's namespace on OpenShift (OADP) when no Velero object names one.
DEFAULT_VELERO_NAMESPACE = "openshift-adp"


@dataclass(frozen=True)
class FixFacts:
    """What fix templates fill in.

    ``namespace``/``name`` are the VM's ("" for platform findings);
    ``running_uuid``/``running_serial`` come from the VMI (None when not running
    or not set); ``schedules`` are ``(namespace, name, matchLabels)`` of the
    Schedules whose template covers the VM; ``velero_ns`` is the namespace the
    Velero objects live in; ``rpo_hours``/``restore_test_days`` the policy's.
    """

    namespace: str
    name: str
    running_uuid: str | None
    running_serial: str | None
    spec_serial: str | None
    schedules: tuple[tuple[str, str, tuple[tuple[str, str], ...]], ...]
    velero_ns: str
    storage_location: str | None
    pvcs: tuple[str, ...]
    rpo_hours: float
    restore_test_days: float
    kubevirt_plugin: bool | None
    #: which of the kinds proving a disk's capture (DataUpload, PodVolumeBackup,
    #: VolumeSnapshotContent) were not read completely: only those are worth exporting
    unread_capture_kinds: tuple[str, ...] = ()

    @property
    def schedule(self) -> str | None:
        """The first covering Schedule's name (None when none covers the VM)."""
        return self.schedules[0][1] if self.schedules else None

    @property
    def selector(self) -> tuple[tuple[str, str], ...]:
        """The first covering Schedule's ``matchLabels`` as ``(key, value)`` pairs."""
        return self.schedules[0][2] if self.schedules else ()


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _labels(selector: Mapping[str, Any] | None) -> tuple[tuple[str, str], ...]:
    match = (selector or {}).get("matchLabels")
    if not isinstance(match, dict):
        return ()
    return tuple(sorted((str(k), str(v)) for k, v in match.items()))


#: The kinds whose objects prove a disk's data is in a Backup (one per capture method).
CAPTURE_KINDS = ("DataUpload", "PodVolumeBackup", "VolumeSnapshotContent")


def _unread_capture_kinds(index: ClusterIndex, velero_ns: str) -> tuple[str, ...]:
    return tuple(
        k
        for k in CAPTURE_KINDS
        if not index.data.known(k)
        or (k != "VolumeSnapshotContent" and index.partial_for(k, velero_ns))
    )


def _velero_ns(index: ClusterIndex, rec: VMRecord | None) -> str:
    if rec is not None:
        for s in rec.schedules:
            return s.namespace
        for b in rec.backups:
            return b.backup.namespace
    for s in index.schedules:
        return s.namespace
    for ns, _ in sorted(index.storage_locations):
        return ns
    return DEFAULT_VELERO_NAMESPACE


def vm_fix_facts(
    rec: VMRecord, index: ClusterIndex, rpo_hours: float, test_days: float
) -> FixFacts:
    """Collect the fix values of one VM (schedules sorted by name, unpaused first)."""
    firmware = dig(rec.vmi, "spec", "domain", "firmware") if rec.vmi is not None else None
    record = index.vmi_records.get((rec.namespace, rec.name))
    running_uuid = record.firmware_uuid if record is not None else None
    if running_uuid is None and isinstance(firmware, dict):
        running_uuid = _str(firmware.get("uuid"))
    schedules = sorted(rec.schedules, key=lambda s: (s.paused, s.name))
    newest = rec.backups[0].backup if rec.backups else None
    velero_ns = _velero_ns(index, rec)
    return FixFacts(
        namespace=rec.namespace,
        name=rec.name,
        running_uuid=running_uuid if rec.vmi is not None else None,
        running_serial=_str(firmware.get("serial")) if isinstance(firmware, dict) else None,
        spec_serial=_str(dig(rec.obj, "spec", "template", "spec", "domain", "firmware", "serial")),
        schedules=tuple((s.namespace, s.name, _labels(s.scope.label_selector)) for s in schedules),
        velero_ns=velero_ns,
        storage_location=newest.storage_location if newest else None,
        pvcs=tuple(p.name for p in rec.pvcs),
        rpo_hours=rpo_hours,
        restore_test_days=test_days,
        kubevirt_plugin=index.kubevirt_plugin,
        unread_capture_kinds=_unread_capture_kinds(index, velero_ns),
    )


def platform_fix_facts(index: ClusterIndex, rpo_hours: float, test_days: float) -> FixFacts:
    """Fix values for platform findings: Velero's namespace and the policy thresholds."""
    return FixFacts(
        namespace="",
        name="",
        running_uuid=None,
        running_serial=None,
        spec_serial=None,
        schedules=(),
        velero_ns=_velero_ns(index, None),
        storage_location=None,
        pvcs=(),
        rpo_hours=rpo_hours,
        restore_test_days=test_days,
        kubevirt_plugin=index.kubevirt_plugin,
    )
