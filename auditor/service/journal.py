"""The service's run journal: one row per scheduled slot, in a SQLite file.

A slot is a schedule's fire time (UTC). The journal records when its run
started and how it ended, so a slot is produced at most once, and a run that
was killed mid-way is found (``started`` without ``finished``) at the next boot.

Table ``runs``: ``schedule_id`` TEXT, ``slot`` TEXT (RFC 3339 UTC), ``started``
and ``finished`` TEXT (RFC 3339 UTC), ``outcome`` TEXT (running, success,
failure, abandoned), ``detail`` TEXT; primary key ``(schedule_id, slot)``.
"""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

__all__ = ["RunJournal", "RunRecord", "rfc3339"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
  schedule_id TEXT NOT NULL,
  slot TEXT NOT NULL,
  started TEXT NOT NULL,
  finished TEXT,
  outcome TEXT NOT NULL,
  detail TEXT,
  PRIMARY KEY (schedule_id, slot)
)
"""


def rfc3339(value: datetime) -> str:
    """Format an aware datetime as RFC 3339 UTC with second precision (``...Z``)."""
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class RunRecord:
    """One journal row."""

    schedule_id: str
    slot: str
    started: str
    finished: str | None
    outcome: str
    detail: str | None


class RunJournal:
    """Thread-safe access to the journal file (one connection per call)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as db:
            db.execute(_SCHEMA)

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=10)

    def begin(self, schedule_id: str, slot: datetime, now: datetime) -> bool:
        """Record the start of a slot's run; False when the slot already succeeded."""
        with self._lock, self._connect() as db:
            row = db.execute(
                "SELECT outcome FROM runs WHERE schedule_id = ? AND slot = ?",
                (schedule_id, rfc3339(slot)),
            ).fetchone()
            if row is not None and row[0] == "success":
                return False
            db.execute(
                "INSERT OR REPLACE INTO runs VALUES (?, ?, ?, NULL, 'running', NULL)",
                (schedule_id, rfc3339(slot), rfc3339(now)),
            )
            return True

    def finish(
        self, schedule_id: str, slot: datetime, now: datetime, outcome: str, detail: str = ""
    ) -> None:
        """Record how a slot's run ended (``success``, ``failure`` or ``abandoned``)."""
        with self._lock, self._connect() as db:
            db.execute(
                "UPDATE runs SET finished = ?, outcome = ?, detail = ? "
                "WHERE schedule_id = ? AND slot = ?",
                (rfc3339(now), outcome, detail or None, schedule_id, rfc3339(slot)),
            )

    def abandon_unfinished(self, now: datetime, detail: str) -> list[RunRecord]:
        """Mark every ``running`` row as ``abandoned`` and return them (as they were)."""
        with self._lock, self._connect() as db:
            rows = [
                RunRecord(*r)
                for r in db.execute(
                    "SELECT schedule_id, slot, started, finished, outcome, detail FROM runs "
                    "WHERE outcome = 'running' ORDER BY slot"
                )
            ]
            db.execute(
                "UPDATE runs SET finished = ?, outcome = 'abandoned', detail = ? "
                "WHERE outcome = 'running'",
                (rfc3339(now), detail),
            )
        return rows

    def records(self, schedule_id: str | None = None) -> list[RunRecord]:
        """Return rows (of one schedule, or all), oldest slot first."""
        query = "SELECT schedule_id, slot, started, finished, outcome, detail FROM runs"
        args: tuple[str, ...] = ()
        if schedule_id is not None:
            query += " WHERE schedule_id = ?"
            args = (schedule_id,)
        with self._lock, self._connect() as db:
            return [RunRecord(*r) for r in db.execute(query + " ORDER BY slot, started", args)]
