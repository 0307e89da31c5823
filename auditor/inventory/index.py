"""Lookup tables over the collected objects, built once per audit in linear time.

Pairing VMs with their evidence goes through these dicts so the audit stays
O(VMs + objects): never a VM x Backup loop over every Backup in the cluster
(Backups are indexed by the namespaces they name; only wildcard Backups are
considered for every VM).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from auditor.kubevalues import dig, parse_duration, parse_time
from auditor.models import CollectionProblem
from auditor.scope import Scope, SelectorError
from auditor.sources.base import ClusterData

__all__ = ["BackupView", "RestoreView", "ScheduleView", "ClusterIndex", "meta_labels"]

_V = TypeVar("_V")
VELERO_BACKUP_LABEL = "velero.io/backup-name"
VELERO_SCHEDULE_LABEL = "velero.io/schedule-name"
VELERO_RESTORE_LABEL = "velero.io/restore-name"


def meta_labels(obj: dict[str, Any], key: str = "labels") -> dict[str, str]:
    """Return ``metadata.labels`` (or annotations) as ``str -> str``, ignoring junk."""
    raw = dig(obj, "metadata", key)
    if not isinstance(raw, dict):
        return {}
    return {str(k): str(v) for k, v in raw.items() if isinstance(v, str | int | float | bool)}


def _name(obj: dict[str, Any]) -> str:
    return str(obj["metadata"]["name"])


def _ns(obj: dict[str, Any]) -> str:
    return str(obj["metadata"].get("namespace") or "")


@dataclass(frozen=True)
class BackupView:
    """One Velero Backup, parsed. Times are UTC; ``when`` is completion, else start, else creation."""

    name: str
    namespace: str
    phase: str
    scope: Scope
    created: datetime | None
    started: datetime | None
    completed: datetime | None
    expiration: datetime | None
    snapshot_volumes: bool | None
    fs_backup_default: bool
    snapshot_move_data: bool
    storage_location: str | None
    schedule: str | None
    errors: int | None
    warnings: int | None
    csi_attempted: int | None
    csi_completed: int | None

    @property
    def when(self) -> datetime | None:
        """Best time for ordering backups (completion, else start, else creation)."""
        return self.completed or self.started or self.created

    @property
    def began(self) -> datetime | None:
        """When the backup started reading the cluster (start, else creation)."""
        return self.started or self.created

    @classmethod
    def parse(cls, obj: dict[str, Any]) -> BackupView:
        """Build from a Backup object; unreadable fields become None."""
        spec = obj.get("spec") or {}
        status = obj.get("status") or {}
        ttl = parse_duration(spec.get("ttl"))
        created = parse_time(dig(obj, "metadata", "creationTimestamp"))
        expiration = parse_time(status.get("expiration"))
        if expiration is None and ttl is not None and created is not None:
            expiration = created + ttl
        phase = status.get("phase")
        return cls(
            name=_name(obj),
            namespace=_ns(obj),
            phase=phase if isinstance(phase, str) else "",
            scope=Scope.from_spec(spec),
            created=created,
            started=parse_time(status.get("startTimestamp")),
            completed=parse_time(status.get("completionTimestamp")),
            expiration=expiration,
            snapshot_volumes=spec.get("snapshotVolumes")
            if isinstance(spec.get("snapshotVolumes"), bool)
            else None,
            fs_backup_default=spec.get("defaultVolumesToFsBackup") is True,
            snapshot_move_data=spec.get("snapshotMoveData") is True,
            storage_location=spec.get("storageLocation")
            if isinstance(spec.get("storageLocation"), str)
            else None,
            schedule=meta_labels(obj).get(VELERO_SCHEDULE_LABEL),
            errors=_int(status.get("errors")),
            warnings=_int(status.get("warnings")),
            csi_attempted=_int(status.get("csiVolumeSnapshotsAttempted")),
            csi_completed=_int(status.get("csiVolumeSnapshotsCompleted")),
        )


@dataclass(frozen=True)
class RestoreView:
    """One Velero Restore, parsed."""

    name: str
    namespace: str
    phase: str
    backup_name: str | None
    schedule_name: str | None
    scope: Scope
    created: datetime | None
    completed: datetime | None
    namespace_mapping: dict[str, str]
    labels: dict[str, str] = field(default_factory=dict)
    restore_pvs: bool | None = None

    @classmethod
    def parse(cls, obj: dict[str, Any]) -> RestoreView:
        """Build from a Restore object; unreadable fields become None."""
        spec = obj.get("spec") or {}
        status = obj.get("status") or {}
        mapping = spec.get("namespaceMapping")
        return cls(
            name=_name(obj),
            namespace=_ns(obj),
            phase=str(status["phase"]) if isinstance(status.get("phase"), str) else "",
            backup_name=spec.get("backupName") if isinstance(spec.get("backupName"), str) else None,
            schedule_name=spec.get("scheduleName")
            if isinstance(spec.get("scheduleName"), str)
            else None,
            scope=Scope.from_spec(spec),
            created=parse_time(dig(obj, "metadata", "creationTimestamp")),
            completed=parse_time(status.get("completionTimestamp")),
            namespace_mapping={str(k): str(v) for k, v in mapping.items()}
            if isinstance(mapping, dict)
            else {},
            labels=meta_labels(obj),
            restore_pvs=spec["restorePVs"] if isinstance(spec.get("restorePVs"), bool) else None,
        )


@dataclass(frozen=True)
class ScheduleView:
    """One Velero Schedule: its template scope, pause flag and last backup time."""

    name: str
    namespace: str
    paused: bool
    cron: str | None
    scope: Scope
    last_backup: datetime | None

    @classmethod
    def parse(cls, obj: dict[str, Any]) -> ScheduleView:
        """Build from a Schedule object."""
        spec = obj.get("spec") or {}
        return cls(
            name=_name(obj),
            namespace=_ns(obj),
            paused=spec.get("paused") is True,
            cron=spec.get("schedule") if isinstance(spec.get("schedule"), str) else None,
            scope=Scope.from_spec(spec.get("template")),
            last_backup=parse_time(dig(obj, "status", "lastBackup")),
        )


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass
class ClusterIndex:
    """Dictionaries over :class:`ClusterData` for O(1) pairing lookups."""

    data: ClusterData
    pvcs: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    pvs: dict[str, dict[str, Any]] = field(default_factory=dict)
    storage_classes: dict[str, dict[str, Any]] = field(default_factory=dict)
    snapshot_class_drivers: dict[str, list[str]] = field(default_factory=dict)
    datavolumes: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    nads: set[tuple[str, str]] = field(default_factory=set)
    vmis: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    namespaces: dict[str, dict[str, Any]] = field(default_factory=dict)
    cluster_preferences: dict[str, dict[str, Any]] = field(default_factory=dict)
    preferences: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    state_pvcs: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)
    volume_snapshots: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)
    vm_snapshots: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)
    backups_by_ns: dict[str, list[BackupView]] = field(default_factory=dict)
    backups_any_ns: list[BackupView] = field(default_factory=list)
    backups: dict[str, BackupView] = field(default_factory=dict)
    backup_snapshot_contents: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    data_uploads: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    pod_volume_backups: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    #: PodVolumeRestores and DataDownloads by their ``velero.io/restore-name`` label
    pod_volume_restores: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    data_downloads: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    restores: list[RestoreView] = field(default_factory=list)
    schedules: list[ScheduleView] = field(default_factory=list)
    kubevirt_plugin: bool | None = None
    #: objects whose scope could not be read, and the kinds that makes incomplete
    problems: list[CollectionProblem] = field(default_factory=list)
    partial: set[str] = field(default_factory=set)

    @classmethod
    def build(cls, data: ClusterData) -> ClusterIndex:
        """Index every kind once."""
        ix = cls(data=data)
        for o in data.of("PersistentVolumeClaim"):
            ix.pvcs[(_ns(o), _name(o))] = o
            owner_vms = [
                r.get("name")
                for r in (dig(o, "metadata", "ownerReferences") or [])
                if isinstance(r, dict) and r.get("kind") == "VirtualMachine"
            ]
            if _name(o).startswith("persistent-state-for-"):
                for vm in owner_vms or [_state_pvc_vm_guess(_name(o))]:
                    if isinstance(vm, str):
                        ix.state_pvcs.setdefault((_ns(o), vm), []).append(o)
        ix.pvs = {_name(o): o for o in data.of("PersistentVolume")}
        ix.storage_classes = {_name(o): o for o in data.of("StorageClass")}
        drivers: dict[str, list[str]] = defaultdict(list)
        for o in data.of("VolumeSnapshotClass"):
            if isinstance(o.get("driver"), str):
                drivers[o["driver"]].append(_name(o))
        ix.snapshot_class_drivers = dict(drivers)
        ix.datavolumes = {(_ns(o), _name(o)): o for o in data.of("DataVolume")}
        ix.nads = {(_ns(o), _name(o)) for o in data.of("NetworkAttachmentDefinition")}
        ix.vmis = {(_ns(o), _name(o)): o for o in data.of("VirtualMachineInstance")}
        ix.namespaces = {_name(o): o for o in data.of("Namespace")}
        ix.cluster_preferences = {_name(o): o for o in data.of("VirtualMachineClusterPreference")}
        ix.preferences = {(_ns(o), _name(o)): o for o in data.of("VirtualMachinePreference")}
        for o in data.of("VolumeSnapshot"):
            pvc = dig(o, "spec", "source", "persistentVolumeClaimName")
            if isinstance(pvc, str):
                ix.volume_snapshots.setdefault((_ns(o), pvc), []).append(o)
        for o in data.of("VirtualMachineSnapshot"):
            src = dig(o, "spec", "source", "name")
            if isinstance(src, str):
                ix.vm_snapshots.setdefault((_ns(o), src), []).append(o)
        ix._index_velero(data)
        return ix

    def _index_velero(self, data: ClusterData) -> None:
        for o in data.of("Backup"):
            view = self._parse(BackupView.parse, "Backup", o)
            if view is None:
                continue
            self.backups[view.name] = view
            explicit = view.scope.included_namespaces
            if explicit and not any(any(c in p for c in "*?[") for p in explicit):
                for ns in explicit:
                    self.backups_by_ns.setdefault(ns, []).append(view)
            else:
                self.backups_any_ns.append(view)
        for o in data.of("VolumeSnapshotContent"):
            backup = meta_labels(o).get(VELERO_BACKUP_LABEL)
            if backup:
                self.backup_snapshot_contents.setdefault(backup, []).append(o)
        for kind, target in (
            ("DataUpload", self.data_uploads),
            ("PodVolumeBackup", self.pod_volume_backups),
        ):
            for o in data.of(kind):
                backup = meta_labels(o).get(VELERO_BACKUP_LABEL)
                if backup:
                    target.setdefault(backup, []).append(o)
        for kind, target in (
            ("PodVolumeRestore", self.pod_volume_restores),
            ("DataDownload", self.data_downloads),
        ):
            for o in data.of(kind):
                restore = meta_labels(o).get(VELERO_RESTORE_LABEL)
                if restore:
                    target.setdefault(restore, []).append(o)
        self.restores = [
            r for o in data.of("Restore") if (r := self._parse(RestoreView.parse, "Restore", o))
        ]
        self.schedules = [
            s for o in data.of("Schedule") if (s := self._parse(ScheduleView.parse, "Schedule", o))
        ]
        for dpa in data.of("DataProtectionApplication"):
            plugins = dig(dpa, "spec", "configuration", "velero", "defaultPlugins")
            if isinstance(plugins, list):
                enabled = "kubevirt" in plugins
                self.kubevirt_plugin = bool(self.kubevirt_plugin) or enabled

    def _parse(
        self, parse: Callable[[dict[str, Any]], _V], kind: str, obj: dict[str, Any]
    ) -> _V | None:
        """Parse a Velero object; a malformed scope is a collection problem, never "everything"."""
        try:
            return parse(obj)
        except SelectorError as exc:
            ns, name = _ns(obj), _name(obj)
            self.partial.add(kind)
            self.problems.append(
                CollectionProblem(
                    reason=f"{kind} {ns}/{name} has a malformed scope ({exc}); ignored, so "
                    f"checks that rely on the absence of a {kind} cannot conclude",
                    file=self.data.origins.get((kind, ns, name)),
                    kind=kind,
                    namespace=ns,
                    name=name,
                    field="spec",
                    kinds=(kind,),
                )
            )
            return None

    def backups_for_namespace(self, namespace: str) -> list[BackupView]:
        """Backups that could include objects of ``namespace`` (explicit + wildcard ones)."""
        return self.backups_by_ns.get(namespace, []) + self.backups_any_ns


def _state_pvc_vm_guess(pvc_name: str) -> str:
    """``persistent-state-for-<vm>-<5 chars>`` -> ``<vm>`` (when no ownerReference says)."""
    rest = pvc_name[len("persistent-state-for-") :]
    head, _, tail = rest.rpartition("-")
    return head if head and len(tail) == 5 else rest
