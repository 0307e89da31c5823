"""Leave out of an audit at instant T the objects created after T.

An export (or a live read) shows the cluster as it was when it was read. Audited at an
earlier ``--at``, an object whose ``metadata.creationTimestamp`` is after that instant did
not exist then: a NetworkAttachmentDefinition, BackupStorageLocation or Schedule created
later would pass a check for a VM that lacked it at T, and a VM created later would be
judged at an instant it did not exist (trial ux27: ``--at 2000-01-01`` judged five VMs
created in 2026 with no word of it). Kubernetes sets ``creationTimestamp`` when the object
is created and never changes it (k8s.io/apimachinery pkg/apis/meta/v1/types.go,
ObjectMeta.CreationTimestamp: "It represents the server time when this object was created
... Populated by the system. Read-only"). Each kind left out is named as a collection
problem (file, first object, field), so the report says it is not the cluster as read.
An unreadable timestamp is left to the field validators: the object stays.

Velero's and the snapshot controllers' records (Backup, Restore, DataUpload, snapshots...)
are created once, under a name of their own: one created after T did not exist at T, and
leaving it out is all there is to it. Any other object (a VirtualMachineInstance started
again, a PVC or VM re-created by a restore, a re-created NetworkAttachmentDefinition) may
have had a predecessor of the same name at T that the input no longer shows: its kind is
marked partial, so the checks needing it give ERROR rather than guess (a VM whose VMI
started after T was not known to be stopped at T).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from auditor.kubevalues import dig, format_time, parse_rfc3339
from auditor.models import CollectionProblem
from auditor.sources.base import ClusterData, KindState

__all__ = ["leave_out_after", "CREATED_AFTER", "RECORD_KINDS"]

#: Kinds whose objects are records made once under their own name (a Velero Backup,
#: Restore, data mover or file-system copy, a CSI or KubeVirt snapshot): created after the
#: audit instant means absent at it, with no predecessor of the same name to account for.
RECORD_KINDS = frozenset(
    {
        "Backup",
        "Restore",
        "DataUpload",
        "DataDownload",
        "PodVolumeBackup",
        "PodVolumeRestore",
        "VolumeSnapshot",
        "VolumeSnapshotContent",
        "VirtualMachineSnapshot",
        "VirtualMachineSnapshotContent",
    }
)

#: The words every problem of :func:`leave_out_after` carries (its counts are
#: ``ClusterData.left_out``).
CREATED_AFTER = "created after the audit instant"


def leave_out_after(
    data: ClusterData, read_until: datetime, *, at: datetime | None = None
) -> ClusterData:
    """``data`` without the objects created after ``read_until`` (UTC), with one collection
    problem per kind naming how many, the first and its ``metadata.creationTimestamp``.
    ``at``: the audit instant the problems name (default ``read_until``; later for a live
    read, whose objects made while it ran count as read at ``at``).

    The result records ``read_until`` (``ClusterData.read_as_of``) and how many objects of
    each kind were left out (``ClusterData.left_out``, added to any earlier count), so a
    caller reads the count as data, never out of a problem's text, and a second call at the
    same instant (``run_audit`` then ``audit_data``) returns its argument without reading
    one object again.

    ``data`` itself is never changed (a caller may audit it again at another instant): the
    result is a shallow copy.
    """
    if data.read_as_of == read_until:
        return data  # already done at this instant
    objects = dict(data.objects)
    left_out = dict(data.left_out)
    problems = list(data.problems)
    states = dict(data.states)
    # What the API server writes (second precision, "Z": k8s.io/apimachinery metav1.Time
    # MarshalJSON) compares as text, in the order of the instants; any other form is parsed.
    until = format_time(read_until) or ""
    for kind in sorted(data.objects):
        kept: list[dict[str, Any]] = []
        later: list[tuple[datetime, dict[str, Any]]] = []
        for obj in data.objects[kind]:
            meta = obj.get("metadata")
            stamp = meta.get("creationTimestamp") if isinstance(meta, dict) else None
            if (
                type(stamp) is str
                and len(stamp) == 20
                and stamp[10] == "T"
                and stamp[19] == "Z"
                and stamp <= until
            ):
                kept.append(obj)  # at or before the instant, or no time at all (parsed: None)
                continue
            created = parse_rfc3339(stamp)
            if created is not None and created > read_until:
                later.append((created, obj))
            else:
                kept.append(obj)
        if not later:
            continue
        objects[kind] = kept
        left_out[kind] = left_out.get(kind, 0) + len(later)
        record = kind in RECORD_KINDS
        if not record and data.state(kind) is KindState.COMPLETE:
            states[kind] = KindState.PARTIAL  # never raises an unavailable kind to partial
        created, first = min(later, key=lambda p: (p[0], _ref(p[1])))
        ns, name = (
            str(dig(first, "metadata", "namespace") or ""),
            str(dig(first, "metadata", "name") or ""),
        )
        problems.append(
            CollectionProblem(
                reason=(
                    f"{len(later)} {kind} object(s) {CREATED_AFTER} "
                    f"{format_time(at or read_until)} left out (the first, {_ref(first)}, created {format_time(created)}): they "
                    "did not exist then, so they are no evidence at that instant; the input "
                    "shows the cluster as it was read, later than the audit instant"
                    + ("" if record else f"; which {kind} of that name existed then is unknown")
                ),
                file=data.origins.get((kind, ns, name)),
                kind=kind,
                namespace=ns or None,
                name=name or None,
                field="metadata.creationTimestamp",
                kinds=() if record else (kind,),
            )
        )
    if len(problems) == len(data.problems):
        return replace(data, read_as_of=read_until)
    return replace(
        data,
        objects=objects,
        problems=problems,
        states=states,
        read_as_of=read_until,
        left_out=left_out,
    )


def _ref(obj: dict[str, Any]) -> str:
    ns, name = dig(obj, "metadata", "namespace"), dig(obj, "metadata", "name")
    return f"{ns}/{name}" if ns else str(name)
