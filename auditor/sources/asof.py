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

An object created before T may record in its ``status`` an event after T (a Backup's
``startTimestamp`` or ``completionTimestamp``, a snapshot's ``creationTime``, a condition's
``lastTransitionTime``): the status read is later than the instant, so what held at T is
not what it says. Such an object stays (it existed at T; the checks read the event as not
yet happened), and each kind holding one is named as a collection problem (file, first
object, field), so the report never presents the status read as the status at T. A kind that
is no record (a VirtualMachine whose Ready condition changed after T) is marked partial, as
for a later creation: its state at T is unknown (bench.mutations ``future_time``, task fz32:
a status time after the audit changed findings with nothing named). A BackupStorageLocation
validated, or a Schedule run, after T is named only: Velero revalidates a location every
minute and records each run, so that is routine at an earlier T, and their readers already
take it as at T (``auditor.inventory.locations``: a validation after T is not stale; a run
after T is not yet).

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
from datetime import UTC, datetime, timedelta
from typing import Any

from auditor.kubevalues import dig, format_time, parse_rfc3339
from auditor.models import CollectionProblem
from auditor.sources.base import ClusterData, KindState

__all__ = [
    "leave_out_after",
    "CLOCK_SKEW",
    "CREATED_AFTER",
    "RECORD_KINDS",
    "STATUS_AFTER",
    "EVENT_TIMES",
]

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
#: The words of a problem naming status times after the audit instant.
STATUS_AFTER = "record a status time after the audit instant"
#: ``status`` fields that record when something happened (never a time to come, as a
#: Backup's ``expiration`` or a Schedule's next run): Velero's Backup, Restore, Schedule,
#: DataUpload/Download and pod volume records, the CSI and KubeVirt snapshots, the
#: BackupStorageLocation's validation; each condition's ``lastTransitionTime`` and
#: ``lastProbeTime`` (a VirtualMachine's: its ``Ready`` condition tells since when it is
#: stopped).
EVENT_TIMES = (
    "startTimestamp",
    "completionTimestamp",
    "lastBackup",
    "lastSyncedTime",
    "lastValidationTime",
    "creationTime",
    "startTime",
    "completionTime",
    "endTime",
)
#: How far after this machine's clock an input's time may be (clock differences) before it
#: is impossible (:func:`leave_out_after`).
CLOCK_SKEW = timedelta(minutes=5)
_IMPOSSIBLE = (
    " (a time after this machine's clock, which no input read until now can hold: an edited copy)"
)
#: Kinds whose status times after the audit instant are named but leave the kind complete.
_ROUTINE = frozenset({"BackupStorageLocation", "Schedule"})
#: Records Velero never re-creates from backup storage (its backup sync makes Backups anew,
#: their status times before their creation): one that ran before it was created is damaged.
_NEVER_SYNCED = frozenset({"Restore", "DataDownload", "PodVolumeRestore"})
#: Kinds whose condition times are read (:data:`EVENT_TIMES`).
_CONDITION_KINDS = frozenset({"VirtualMachine"})


def leave_out_after(
    data: ClusterData,
    read_until: datetime,
    *,
    at: datetime | None = None,
    now: datetime | None = None,
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

    ``now`` (default: this machine's clock, UTC): no input can record a time after it was
    read, so a creation or status time more than :data:`CLOCK_SKEW` after ``now`` is
    impossible, an edited copy: such an object's kind is partial (what held then is unknown),
    never an object that merely did not exist yet or an event read as not yet (mutations
    future_time, seed 17: a drill whose Restore's completionTimestamp was set to 2031 was
    read as running at the instant, so its unknown data no longer counted: UNKNOWN -> READY).
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
    horizon = (now or datetime.now(UTC)) + CLOCK_SKEW
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
        # a restore-side record that finished before it was created contradicts itself
        # (Velero syncs Backups from storage, never Restores or their items): when it ran is
        # unknown, so its kind is partial, never a drill that simply did not exist then
        # (bench.mutations future_time, seed 1005: a stale drill's creationTimestamp set
        # after the instant dropped it, and "no restore test" ranks above a stale one)
        impossible = any(created > horizon for created, _ in later)
        record = (
            kind in RECORD_KINDS
            and not impossible
            and not (kind in _NEVER_SYNCED and any(_ran_before(o, created) for created, o in later))
        )
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
                    + (_IMPOSSIBLE if impossible else "")
                ),
                file=data.origins.get((kind, ns, name)),
                kind=kind,
                namespace=ns or None,
                name=name or None,
                field="metadata.creationTimestamp",
                kinds=() if record else (kind,),
            )
        )
    for kind in sorted(objects):
        _status_after(kind, objects[kind], data, read_until, at, problems, states, horizon)
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


def _status_after(
    kind: str,
    objects: list[dict[str, Any]],
    data: ClusterData,
    read_until: datetime,
    at: datetime | None,
    problems: list[CollectionProblem],
    states: dict[str, KindState],
    horizon: datetime,
) -> None:
    """Name (one problem for ``kind``) the objects whose status records an event after
    ``read_until`` (:data:`EVENT_TIMES`, condition times); mark a kind that is no record
    partial. ``problems`` and ``states`` are updated in place."""
    until = format_time(read_until) or ""
    later: list[tuple[datetime, str, dict[str, Any]]] = []
    conditions = kind in _CONDITION_KINDS
    for obj in objects:
        meta = obj.get("metadata")
        if type(meta) is dict and "deletionTimestamp" in meta:
            # a deletion requested after the instant: at the instant the object was not being
            # deleted, which the checks read it as only when the deletion is named (fz39: a
            # pinned ControllerRevision's deletionTimestamp of 2031 read as taken by a Backup
            # that began before it, NOT_READY -> AT_RISK, nothing named). The API server sets
            # it to the time of the request (a pod's grace period aside: pods are not read),
            # https://kubernetes.io/docs/concepts/overview/working-with-objects/finalizers/
            when = _after(meta["deletionTimestamp"], until, read_until)
            if when is not None:
                later.append((when, "metadata.deletionTimestamp", obj))
                continue
        status = obj.get("status")
        if type(status) is not dict or (
            _EVENT_KEYS.isdisjoint(status) and not (conditions and "conditions" in status)
        ):
            continue  # no event time (most objects: decided here, per object, in C)
        found = _later_time(status, until, read_until, conditions=conditions)
        if found is not None:
            later.append((found[0], found[1], obj))
    if not later:
        return
    impossible = any(when > horizon for when, _, _ in later)
    unknown = impossible or (kind not in RECORD_KINDS and kind not in _ROUTINE)
    if unknown and data.state(kind) is KindState.COMPLETE:
        states[kind] = KindState.PARTIAL
    when, fld, first = min(later, key=lambda p: (p[0], _ref(p[2])))
    ns = str(dig(first, "metadata", "namespace") or "")
    name = str(dig(first, "metadata", "name") or "")
    problems.append(
        CollectionProblem(
            reason=(
                f"{len(later)} {kind} object(s) {STATUS_AFTER} "
                f"{format_time(at or read_until)} (the first, {_ref(first)}: {fld} "
                f"{format_time(when)}): the status read is later than the audit instant, so "
                "what it records had not happened then and is read as not yet"
                + (f"; the state of the {kind} then is unknown" if unknown else "")
                + (_IMPOSSIBLE if impossible else "")
            ),
            file=data.origins.get((kind, ns, name)),
            kind=kind,
            namespace=ns or None,
            name=name or None,
            field=fld,
            kinds=(kind,) if unknown else (),
        )
    )


def _later_time(
    status: dict[str, Any], until: str, read_until: datetime, *, conditions: bool
) -> tuple[datetime, str] | None:
    """The first event time of ``status`` after ``read_until`` (``until``: it as the API
    server writes it) and its field path, or None; ``conditions``: the conditions' times
    too. Most statuses hold none of :data:`EVENT_TIMES` (a VolumeSnapshotContent's
    ``creationTime`` is a number), so the fields present are found by one set intersection
    (every object of the input is read here, before the audit)."""
    if not _EVENT_KEYS.isdisjoint(status):
        for key in EVENT_TIMES:
            when = _after(status.get(key), until, read_until)
            if when is not None:
                return when, f"status.{key}"
    listed = status.get("conditions") if conditions else None
    for i, cond in enumerate(listed if isinstance(listed, list) else ()):
        for key in ("lastTransitionTime", "lastProbeTime"):
            when = _after(cond.get(key), until, read_until) if isinstance(cond, dict) else None
            if when is not None:
                return when, f"status.conditions[{i}].{key}"
    return None


_EVENT_KEYS = frozenset(EVENT_TIMES)


def _after(value: Any, until: str, read_until: datetime) -> datetime | None:
    """``value`` read as a time after ``read_until`` (``until``: it as the API server writes
    it), else None (no time, or not after)."""
    if type(value) is not str:
        return None
    if len(value) == 20 and value[10] == "T" and value[19] == "Z" and value <= until:
        return None  # the common form, compared as text
    when = parse_rfc3339(value)
    return when if when is not None and when > read_until else None


def _ran_before(obj: dict[str, Any], created: datetime) -> bool:
    """Whether ``obj``'s status records an event (:data:`EVENT_TIMES`) before ``created``."""
    status = obj.get("status")
    if not isinstance(status, dict):
        return False
    times = (parse_rfc3339(status.get(key)) for key in EVENT_TIMES)
    return any(t is not None and t < created for t in times)


def _ref(obj: dict[str, Any]) -> str:
    ns, name = dig(obj, "metadata", "namespace"), dig(obj, "metadata", "name")
    return f"{ns}/{name}" if ns else str(name)
