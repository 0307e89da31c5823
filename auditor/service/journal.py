"""The service's run journal: one row per scheduled slot, in a SQLite file.

A slot is a schedule's fire time (UTC). The journal records when its run
started and how it ended, so a slot is produced at most once, and a run that
was killed mid-way is found (``started`` without ``finished``) at the next boot.

Table ``runs``: ``schedule_id`` TEXT, ``slot`` TEXT (RFC 3339 UTC), ``started``
and ``finished`` TEXT (RFC 3339 UTC), ``outcome`` TEXT (running, success,
failure, abandoned), ``detail`` TEXT; primary key ``(schedule_id, slot)``;
``run_id`` TEXT (report.json's run id) and ``publish`` TEXT: NULL (not
published), ``pending`` (in the spool, being delivered), ``published`` (set
only after the manifest verified in the store), ``spooled: <error>``,
``quarantined: <error>`` or ``refused: <error>`` (the target is misconfigured: not spooled); ``catch_up`` TEXT: NULL for a run at its fire time, else why it
was run late at start (``abandoned``: the previous process abandoned that slot's run;
``missed``: the service was down at the fire time). Columns added later are added to an old
file at start.
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
  run_id TEXT,
  publish TEXT,
  catch_up TEXT,
  PRIMARY KEY (schedule_id, slot)
)
"""
_COLUMNS = "schedule_id, slot, started, finished, outcome, detail, run_id, publish, catch_up"


#: How a slot is written in the journal (RFC 3339 UTC, seconds) and as a run folder's name.
SLOT_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
SLOT_NAME_FORMAT = "%Y%m%dT%H%M%SZ"


def rfc3339(value: datetime) -> str:
    """Format an aware datetime as RFC 3339 UTC with second precision (``...Z``)."""
    return value.astimezone(UTC).strftime(SLOT_FORMAT)


def slot_name(slot: datetime) -> str:
    """Return the directory name of a slot: ``YYYYMMDDTHHMMSSZ`` in UTC."""
    return slot.astimezone(UTC).strftime(SLOT_NAME_FORMAT)


@dataclass(frozen=True)
class RunRecord:
    """One journal row."""

    schedule_id: str
    slot: str
    started: str
    finished: str | None
    outcome: str
    detail: str | None
    run_id: str | None = None
    publish: str | None = None
    catch_up: str | None = None


class RunJournal:
    """Thread-safe access to the journal file (one connection per call)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as db:
            db.execute(_SCHEMA)
            have = {row[1] for row in db.execute("PRAGMA table_info(runs)")}
            for column in ("run_id", "publish", "catch_up"):
                if column not in have:
                    db.execute(f"ALTER TABLE runs ADD COLUMN {column} TEXT")

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=10)

    def begin(
        self, schedule_id: str, slot: datetime, now: datetime, catch_up: str | None = None
    ) -> bool:
        """Record the start of a slot's run; False when the slot already succeeded.

        ``catch_up``: why the run starts late (``abandoned`` or ``missed``), None when on time.
        """
        with self._lock, self._connect() as db:
            row = db.execute(
                "SELECT outcome FROM runs WHERE schedule_id = ? AND slot = ?",
                (schedule_id, rfc3339(slot)),
            ).fetchone()
            if row is not None and row[0] == "success":
                return False
            db.execute(
                f"INSERT OR REPLACE INTO runs ({_COLUMNS}) "
                "VALUES (?, ?, ?, NULL, 'running', NULL, NULL, NULL, ?)",
                (schedule_id, rfc3339(slot), rfc3339(now), catch_up),
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

    def set_publish(
        self, schedule_id: str, slot: datetime, state: str, run_id: str | None = None
    ) -> None:
        """Record the publish state of a slot's run (see the module docstring)."""
        with self._lock, self._connect() as db:
            db.execute(
                "UPDATE runs SET publish = ?, run_id = COALESCE(?, run_id) "
                "WHERE schedule_id = ? AND slot = ?",
                (state, run_id, schedule_id, rfc3339(slot)),
            )

    def mark_published(self, run_id: str, state: str = "published") -> int:
        """Set the publish state of the run with ``run_id`` (delivered from the spool)."""
        with self._lock, self._connect() as db:
            cur = db.execute("UPDATE runs SET publish = ? WHERE run_id = ?", (state, run_id))
            return int(cur.rowcount)

    def abandon_unfinished(self, now: datetime, detail: str) -> list[RunRecord]:
        """Mark every ``running`` row as ``abandoned`` and return them (as they were)."""
        with self._lock, self._connect() as db:
            rows = [
                RunRecord(*r)
                for r in db.execute(
                    f"SELECT {_COLUMNS} FROM runs WHERE outcome = 'running' ORDER BY slot"
                )
            ]
            db.execute(
                "UPDATE runs SET finished = ?, outcome = 'abandoned', detail = ? "
                "WHERE outcome = 'running'",
                (rfc3339(now), detail),
            )
        return rows

    def outcome(self, schedule_id: str, slot: datetime) -> str | None:
        """Return the outcome recorded for a slot, None when the journal has no row for it."""
        with self._lock, self._connect() as db:
            row = db.execute(
                "SELECT outcome FROM runs WHERE schedule_id = ? AND slot = ?",
                (schedule_id, rfc3339(slot)),
            ).fetchone()
        return None if row is None else str(row[0])

    def records(self, schedule_id: str | None = None) -> list[RunRecord]:
        """Return rows (of one schedule, or all), oldest slot first."""
        query = f"SELECT {_COLUMNS} FROM runs"
        args: tuple[str, ...] = ()
        if schedule_id is not None:
            query += " WHERE schedule_id = ?"
            args = (schedule_id,)
        with self._lock, self._connect() as db:
            return [RunRecord(*r) for r in db.execute(query + " ORDER BY slot, started", args)]
