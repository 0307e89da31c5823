"""Retention of the service's local run folders (``report.keep_runs``, ``report.keep_days``).

Applied by ``auditor serve`` after each run of a schedule, to that schedule's folder
``<report.out_dir>/<schedule_id>/``: a run folder (``YYYYMMDDTHHMMSSZ``) is removed when it
is not among the newest ``keep_runs`` or its slot is more than ``keep_days`` old (each limit
when set). Never removed: the newest run folder, and a run not yet delivered (its journal
publish state is ``pending``, ``spooled: ...`` or ``quarantined: ...``, or its run id waits in
the publish spool).
"""

from __future__ import annotations

import logging
import re
import shutil
from collections.abc import Collection
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from auditor.service.journal import SLOT_FORMAT, SLOT_NAME_FORMAT, RunJournal, slot_name

__all__ = ["Removal", "expired_runs", "apply_retention"]

log = logging.getLogger(__name__)

_SLOT = re.compile(r"^\d{8}T\d{6}Z$")


@dataclass(frozen=True)
class Removal:
    """A run folder retention removes, and why (``beyond keep_runs=N``, ``older than N days``)."""

    path: Path
    reason: str


def _slot_time(name: str) -> datetime:
    return datetime.strptime(name, SLOT_NAME_FORMAT).replace(tzinfo=UTC)


def expired_runs(
    base: Path,
    *,
    keep_runs: int | None,
    keep_days: float | None,
    now: datetime,
    undelivered: Collection[str] = (),
) -> list[Removal]:
    """Return the run folders under ``base`` that retention removes, oldest first.

    ``undelivered``: folder names (slots) that wait to be published; they are kept.
    """
    if keep_runs is None and keep_days is None or not base.is_dir():
        return []
    slots = sorted(p.name for p in base.iterdir() if p.is_dir() and _SLOT.match(p.name))
    removals: list[Removal] = []
    for index, name in enumerate(slots[:-1]):  # the newest run is always kept
        if name in undelivered:
            continue
        newer = len(slots) - 1 - index
        if keep_runs is not None and newer >= keep_runs:
            removals.append(Removal(base / name, f"beyond keep_runs={keep_runs}"))
        elif keep_days is not None and now - _slot_time(name) > timedelta(days=keep_days):
            removals.append(Removal(base / name, f"older than keep_days={keep_days:g}"))
    return removals


def _undelivered(journal: RunJournal, schedule_id: str, spooled_ids: Collection[str]) -> set[str]:
    names: set[str] = set()
    for rec in journal.records(schedule_id):
        waiting = rec.publish not in (None, "published")
        if waiting or (rec.run_id is not None and rec.run_id in spooled_ids):
            names.add(slot_name(datetime.strptime(rec.slot, SLOT_FORMAT).replace(tzinfo=UTC)))
    return names


def apply_retention(
    base: Path,
    journal: RunJournal,
    schedule_id: str,
    *,
    keep_runs: int | None,
    keep_days: float | None,
    now: datetime,
    spooled_ids: Collection[str] = (),
) -> list[Removal]:
    """Remove the expired run folders of one schedule; log and return what was removed.

    ``spooled_ids``: run ids waiting in the publish spool. A folder that cannot be removed
    is logged and left (retried after the next run).
    """
    undelivered = _undelivered(journal, schedule_id, spooled_ids)
    removed: list[Removal] = []
    for removal in expired_runs(
        base, keep_runs=keep_runs, keep_days=keep_days, now=now, undelivered=undelivered
    ):
        try:
            shutil.rmtree(removal.path)
        except OSError as exc:
            log.warning("retention: cannot remove run folder %s: %s", removal.path, exc)
            continue
        log.info("retention: removed run folder %s (%s)", removal.path, removal.reason)
        removed.append(removal)
    if undelivered:
        log.debug("retention: kept undelivered runs %s", sorted(undelivered))
    return removed
