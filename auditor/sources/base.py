"""What every source returns: plain object dicts per kind plus what could not be read."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, Protocol

from auditor.models import CollectionProblem

__all__ = [
    "BackupContents",
    "ClusterData",
    "KindState",
    "Source",
    "SourceInfo",
    "StorageLocationStatus",
    "StoredVolume",
]


class KindState(StrEnum):
    """How much the source knows about one kind.

    ``COMPLETE``: the full list was read (it may be empty).
    ``NOT_INSTALLED``: the API group is not served, so no such object exists
    (a known empty list: "no Velero installed" is a fact, not a gap).
    ``UNAVAILABLE``: forbidden, failed or never exported; nothing can be
    concluded from its absence and the checks that need it give ERROR.
    ``PARTIAL``: some objects were read but others were broken or lost.
    """

    COMPLETE = "complete"
    NOT_INSTALLED = "not_installed"
    UNAVAILABLE = "unavailable"
    PARTIAL = "partial"


@dataclass(frozen=True)
class SourceInfo:
    """Where the data came from: ``type`` is ``directory`` or ``cluster``.

    ``name_source`` says where ``cluster_name`` came from: ``config`` (given by the
    caller), ``infrastructure`` or ``kubeconfig-context`` (see
    :mod:`auditor.sources.identity`); it is ``unknown`` when ``cluster_name`` is None.
    """

    type: str
    location: str
    cluster_name: str | None = None
    name_source: str = "config"
    #: the kube-system Namespace's uid read apart from the audited objects (a live run with
    #: ``-n``, which does not list Namespaces); None when not read
    #: (:func:`auditor.sources.identity.cluster_uid`)
    kube_system_uid: str | None = None


@dataclass(frozen=True)
class StoredVolume:
    """One PVC's data as a backup's own records in object storage describe it.

    Read from ``<name>-volumeinfo.json.gz`` (Velero >= 1.13), else from the
    per-method files (``-podvolumebackups``, ``-csi-volumesnapshotcontents``,
    ``-volumesnapshots``) and ``-itemoperations``. ``method`` is one of
    ``csi-snapshot``, ``csi-data-mover``, ``fs-backup``, ``native-snapshot``;
    ``outcome`` is ``captured``, ``failed`` or ``unknown`` (a record that proves no copy
    and no failure: a stored PodVolumeBackup stripped of its snapshot ID, round h44b);
    ``detail`` is a short reason
    (an error text, a phase); ``size_bytes`` is the snapshot/upload size in bytes.
    ``pv`` is the record's PersistentVolume name (volume info ``pvName``), "" when it names
    none; ``tie`` the field that matched the record to a PVC of the cluster read
    (``velero.io/pvc-uid``, ``spec.source.volumeHandle``, ``spec.persistentVolumeName``),
    "" when it names the PVC by namespace and name only: a Backup synced from a bucket other
    clusters share is this cluster's only by such a tie.
    """

    namespace: str
    pvc: str
    method: str
    outcome: str
    detail: str = ""
    size_bytes: int | None = None
    pv: str = ""
    tie: str = ""


@dataclass(frozen=True)
class BackupContents:
    """What one Backup's objects in its BackupStorageLocation bucket say.

    ``state``: ``read`` (the metadata was read), ``missing`` (the Backup's objects
    are gone from the bucket: deleted or lifecycle-expired; not a restore point)
    or ``error`` (could not be read; ``detail`` names location and reason).
    ``resources`` holds ``(group-resource, namespace, name)`` from
    ``<name>-resource-list.json.gz``, e.g. ``("virtualmachines.kubevirt.io",
    "apps", "db01")``; None when the file is absent (older Velero: less
    evidence, not an error). ``volumes`` is None when no volume record exists.
    ``vm_manifests`` maps ``(namespace, name)`` to the backed-up VirtualMachine
    (secret-stripped) from ``<name>.tar.gz``, for identity drift.
    """

    backup: str
    location: str
    state: str
    detail: str = ""
    resources: frozenset[tuple[str, str, str]] | None = None
    volumes: tuple[StoredVolume, ...] | None = None
    vm_manifests: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    errors: int | None = None
    warnings: int | None = None


@dataclass(frozen=True)
class StorageLocationStatus:
    """What the auditor learnt about one BackupStorageLocation's bucket.

    ``state``: ``read`` (listed) or ``error`` (``detail`` names the location and
    the reason: denied, no such bucket, unreachable). ``versioning``: the bucket's
    versioning status (``Enabled``, ``Suspended``, ``""`` never enabled; None
    unknown). ``object_lock``: Object Lock enabled (None unknown);
    ``lock_mode``/``lock_days``: its default retention (None: no default rule, so
    Velero's objects are not locked). ``requests`` and ``bytes_read`` count this
    run's S3 calls and response bytes for the location; ``cached`` counts backups
    answered from the ETag cache; ``bucket_only`` names backups found in the bucket
    that the cluster does not list.
    """

    location: str
    bucket: str
    prefix: str
    endpoint: str | None
    state: str
    detail: str = ""
    versioning: str | None = None
    object_lock: bool | None = None
    lock_mode: str | None = None
    lock_days: int | None = None
    requests: int = 0
    bytes_read: int = 0
    backups_read: int = 0
    cached: int = 0
    bucket_only: tuple[str, ...] = ()


@dataclass
class ClusterData:
    """A snapshot of the cluster objects the audit reads.

    ``objects`` maps a kind name from :data:`auditor.kinds.KINDS` to plain
    dicts as the API returns them. ``states`` says for each kind whether its
    list is complete; a kind missing from ``states`` counts as UNAVAILABLE.
    ``skipped`` counts objects of kinds the auditor does not read, keyed by
    ``apiVersion/kind``. Both sources return exactly this shape.
    """

    info: SourceInfo
    objects: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    states: dict[str, KindState] = field(default_factory=dict)
    problems: list[CollectionProblem] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)
    #: (kind, namespace or "", name) -> where the object was read (file and item, or API path)
    origins: dict[tuple[str, str, str], str] = field(default_factory=dict)
    #: kind -> the only namespaces its list was read in (the live source's ``-n``); a kind
    #: absent here was read in every namespace. An object of it elsewhere is unknown, never
    #: absent (a drill's target namespace, a NetworkAttachmentDefinition of another one).
    read_in: dict[str, frozenset[str]] = field(default_factory=dict)
    #: (kind, namespace or "", name) of objects defined twice with different content: which
    #: copy the cluster holds is unknown (named; the kind is partial)
    conflicts: set[tuple[str, str, str]] = field(default_factory=set)
    #: (kind, namespace or "", name) of objects the source named and did not read (a shape
    #: fault, an apiVersion it does not read): a VirtualMachine among them is still listed,
    #: UNKNOWN (:meth:`auditor.engine.Evaluation.unread_vms`)
    refused: set[tuple[str, str, str]] = field(default_factory=set)
    #: Backup name -> its contents read from object storage; None when bucket reading is not
    #: configured (capture evidence then comes from the cluster only).
    backup_contents: dict[str, BackupContents] | None = None
    #: BackupStorageLocation name -> its bucket's status (immutability, requests); None when
    #: bucket reading is not configured.
    storage_locations: dict[str, StorageLocationStatus] | None = None
    #: The instant (UTC) the objects created after which were left out
    #: (:func:`auditor.sources.asof.leave_out_after`); None when that was never done.
    read_as_of: datetime | None = None
    #: kind -> how many of its objects were left out as created after ``read_as_of``
    left_out: dict[str, int] = field(default_factory=dict)

    def of(self, kind: str) -> list[dict[str, Any]]:
        """Return the objects of ``kind`` (empty list when none were read)."""
        return self.objects.get(kind, [])

    def state(self, kind: str) -> KindState:
        """Return how complete the list of ``kind`` is."""
        return self.states.get(kind, KindState.UNAVAILABLE)

    def known(self, kind: str) -> bool:
        """True when the absence of an object of ``kind`` can be trusted."""
        return self.state(kind) in (KindState.COMPLETE, KindState.NOT_INSTALLED)

    def unknown_kinds(self, kinds: Iterable[str]) -> list[str]:
        """Return those of ``kinds`` whose list cannot be trusted, sorted."""
        return sorted(k for k in kinds if not self.known(k))


class Source(Protocol):
    """Anything that can produce :class:`ClusterData` (directory export, live cluster)."""

    def collect(self) -> ClusterData:
        """Read the cluster; never raises for bad objects, records them as problems."""
        ...
