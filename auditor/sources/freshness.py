"""Whether an audit instant is clearly after the input was read.

An export shows the cluster as it was when it was written, a live read as it was while read.
``auditor run --at`` later than that (year 9999, or days after the export was taken) made a
report that claims the cluster's state at an instant the input cannot show, with no word of
it (review of trial lo31). The verdicts stay as they are (ages are counted to ``--at`` as
asked); the run only says so: a warning on stderr and ``run.at_after_input`` in report.json.

Two signals, each sound on its own:

- the input cannot show anything after it was read: for a live cluster, the read (now); for
  an export, the newest modification time of its files (a copy without ``-p`` makes it later,
  never earlier, than the export) and never after now. ``--at`` more than :data:`READ_MARGIN`
  after that is after the input.
- a cluster writes timestamps as it runs (a BackupStorageLocation's ``lastValidationTime``
  every minute, each Backup's ``completionTimestamp``, conditions' ``lastTransitionTime``,
  every object's ``creationTimestamp``): ``--at`` more than :data:`QUIET_MARGIN` after the
  newest of them is taken as clearly after the export, even when its files are newer.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from auditor.kubevalues import format_time, parse_rfc3339
from auditor.sources.base import ClusterData

__all__ = [
    "QUIET_MARGIN",
    "READ_MARGIN",
    "at_after_archive",
    "at_after_input",
    "newest_run",
    "newest_timestamp",
    "stamped_after",
]

#: How far ``--at`` may be after the read (or the export's files) before it is named: clock
#: differences and a read that took a while.
READ_MARGIN = timedelta(hours=1)
#: How far ``--at`` may be after the newest timestamp in the input before it is named.
QUIET_MARGIN = timedelta(days=7)

#: Timestamps a cluster writes as it runs, as (path) under an object.
_STAMPS: tuple[tuple[str, str], ...] = (
    ("metadata", "creationTimestamp"),
    ("metadata", "deletionTimestamp"),
    ("status", "lastValidationTime"),
    ("status", "completionTimestamp"),
    ("status", "startTimestamp"),
    ("status", "lastSyncedTime"),
    ("status", "creationTime"),
)
_META_STAMPS = tuple(key for part, key in _STAMPS if part == "metadata")
_STATUS_STAMPS = tuple(key for part, key in _STAMPS if part == "status")


def newest_timestamp(data: ClusterData) -> datetime | None:
    """The newest readable timestamp (UTC) of :data:`_STAMPS` and of ``status.conditions[*]
    .lastTransitionTime`` over every object of ``data``; None when there is none.

    Every object of the input is visited: each mapping is looked up once, not once per
    path (``dig`` per path took three times as long, about 1 s per 100,000 objects)."""
    newest: datetime | None = None
    for when in _timestamps(data):
        if newest is None or when > newest:
            newest = when
    return newest


def stamped_after(data: ClusterData, when: datetime) -> bool:
    """Whether any timestamp :func:`newest_timestamp` reads is after ``when`` (UTC).

    Stops at the first one: the kinds a cluster stamps most often are read first (a
    BackupStorageLocation's ``lastValidationTime`` every minute, then Backups and Schedules),
    so an export taken from a running cluster is decided on its first objects instead of a
    walk over every object (about 1 s of the serial read at 10,000 VMs)."""
    return any(stamp > when for stamp in _timestamps(data))


#: Kinds whose timestamps a running cluster renews most often, read first by
#: :func:`stamped_after`.
_OFTEN_STAMPED = ("BackupStorageLocation", "Backup", "Schedule", "VirtualMachineInstance")


def _timestamps(data: ClusterData) -> Iterator[datetime]:
    """Every readable timestamp :func:`newest_timestamp` reads, the kinds of
    :data:`_OFTEN_STAMPED` first."""
    kinds = [k for k in _OFTEN_STAMPED if k in data.objects]
    kinds += [k for k in data.objects if k not in _OFTEN_STAMPED]
    for kind in kinds:
        for o in data.objects[kind]:
            meta, status = o.get("metadata"), o.get("status")
            if isinstance(meta, dict):
                for key in _META_STAMPS:
                    yield from _parsed(meta.get(key))
            if isinstance(status, dict):
                for key in _STATUS_STAMPS:
                    yield from _parsed(status.get(key))
                conditions = status.get("conditions")
                if isinstance(conditions, list):
                    for c in conditions:
                        if isinstance(c, dict):
                            yield from _parsed(c.get("lastTransitionTime"))


def _parsed(value: Any) -> tuple[datetime, ...]:
    """``value`` read as an RFC 3339 timestamp: one value, or none when it is not one."""
    when = parse_rfc3339(value) if isinstance(value, str) else None
    return () if when is None else (when,)


def _files_written(location: Path) -> datetime | None:
    """The newest modification time (UTC) of ``location`` (a file) or of the files under it
    (a folder); None when none can be read."""
    newest = 0.0
    try:
        if location.is_file():
            return datetime.fromtimestamp(location.stat().st_mtime, UTC)
        for root, _dirs, files in os.walk(location):
            for name in files:
                try:
                    newest = max(newest, os.stat(os.path.join(root, name)).st_mtime)
                except OSError:
                    continue
    except OSError:
        return None
    return datetime.fromtimestamp(newest, UTC) if newest else None


def at_after_input(data: ClusterData, at: datetime, now: datetime) -> str | None:
    """Why audit instant ``at`` (UTC) is clearly after ``data`` was read (the input read
    ``now``, UTC), naming the instant the input shows and the margin; None when it is not.
    ``data``: as collected, before objects created after ``at`` are left out."""
    if data.info.type == "cluster":
        read, what = now, f"the cluster was read at {format_time(now)}"
    else:
        written = _files_written(Path(data.info.location))
        read = min(written, now) if written is not None else now
        what = (
            f"the export's files were last written at {format_time(written)}"
            if written is not None and written <= now
            else f"the export was read at {format_time(now)}"
        )
    if at > read + READ_MARGIN:
        return (
            f"--at {format_time(at)} is after the input was taken ({what}, more than "
            f"{_hours(READ_MARGIN)} before it): the report shows the cluster as read, not at "
            "--at; ages are counted to --at"
        )
    if stamped_after(data, at - QUIET_MARGIN):
        return None
    newest = newest_timestamp(data)
    if newest is not None and at > newest + QUIET_MARGIN:
        days = (at - newest).total_seconds() / 86400
        return (
            f"--at {format_time(at)} is {days:.1f} days after the newest timestamp in the "
            f"input ({format_time(newest)}; more than {QUIET_MARGIN.days} days): the input "
            "most likely shows the cluster as it was long before --at, not at it; ages are "
            "counted to --at"
        )
    return None


def at_after_archive(
    at: datetime,
    now: datetime,
    newest: tuple[str, datetime] | None,
    *,
    period_end: datetime | None = None,
) -> str | None:
    """Why ``--at`` (UTC) of ``auditor fleet`` or ``auditor report`` is clearly after what the
    archive read ``now`` (UTC) can show, or None; ``newest``: ``(run id, audit time)`` of the
    newest archived run read (None: none).

    The same two signals as :func:`at_after_input` (review of trial lo32: ``run --at`` was
    named, ``fleet --at``/``report --at`` not): the archive cannot hold a run made after it
    was read (more than :data:`READ_MARGIN`), and ``--at`` more than :data:`QUIET_MARGIN`
    after the newest run shows the cluster as last audited, long before ``--at``. With
    ``period_end`` (a month's report, which covers no later) both are measured to the earlier
    of ``--at`` and it. Only a warning: the figures stay as computed at ``--at``.
    """
    ref, what = at, f"--at {format_time(at)}"
    if period_end is not None and period_end < at:
        ref, what = period_end, f"the period's end {format_time(period_end)}"
    if ref > now + READ_MARGIN:
        return (
            f"{what} is after the archive was read ({format_time(now)}, more than "
            f"{_hours(READ_MARGIN)} before it): runs made after the read cannot be in the "
            "report; ages are counted to --at"
        )
    if newest is not None and ref > newest[1] + QUIET_MARGIN:
        days = (ref - newest[1]).total_seconds() / 86400
        return (
            f"{what} is {days:.1f} days after the newest archived run ({newest[0]}, "
            f"{format_time(newest[1])}; more than {QUIET_MARGIN.days} days): the report shows "
            "the cluster as last audited, long before it, not at it"
        )
    return None


def newest_run(reports: Iterable[dict[str, Any] | None]) -> tuple[str, datetime] | None:
    """``(run.id, run.audit_time)`` of the newest of ``reports`` (report.json documents; None
    and unreadable times skipped), or None."""
    best: tuple[str, datetime] | None = None
    for report in reports:
        run = report.get("run") if isinstance(report, dict) else None
        when = parse_rfc3339(run.get("audit_time")) if isinstance(run, dict) else None
        if when is not None and (best is None or when > best[1]):
            best = (str(run.get("id")) if isinstance(run, dict) else "?", when)
    return best


def _hours(value: timedelta) -> str:
    return f"{value.total_seconds() / 3600:g} h"
