"""What a scheduled job does: audit once for one slot, write artifacts, publish.

APScheduler stores jobs in SQLite, so the job is the module-level function
:func:`scheduled_audit` with one picklable argument (the schedule id). It reads
everything else from the process's :class:`ServiceRuntime`, which ``serve``
installs with :func:`install_runtime`.

Artifacts of a slot land in ``<report.out_dir>/<schedule_id>/<slot>/`` (slot as
``YYYYMMDDTHHMMSSZ``, the schedule's fire time in UTC). They are written to a
``.partial-*`` sibling first and renamed when complete, so a killed run never
leaves a half report, and a slot that already has its directory is not redone.
"""

from __future__ import annotations

import logging
import shutil
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

from apscheduler.triggers.cron import CronTrigger

from auditor.config import AuditSettings, Schedule
from auditor.config.service import after
from auditor.envelope import report_document
from auditor.period.job import period_for_run
from auditor.publish import publish_settings, retry_spool, service_publisher
from auditor.publish.errors import ConflictError, StoreConfigError
from auditor.publish.spool import entry_run_id, pending, quarantined, unreadable
from auditor.service.journal import RunJournal, slot_name
from auditor.service.metrics import ServiceMetrics
from auditor.service.retention import Removal, apply_retention
from auditor.yamlstrict import thaw_gc

__all__ = [
    "Runner",
    "Publisher",
    "ServiceRuntime",
    "install_runtime",
    "scheduled_audit",
    "current_slot",
    "slot_name",
    "pipeline_runner",
]

log = logging.getLogger(__name__)


class Runner(Protocol):
    """Audit once at ``at`` and write ``formats`` into ``out_dir``; return report.json's dict."""

    def __call__(
        self, settings: AuditSettings, *, at: datetime, out_dir: Path, formats: Sequence[str]
    ) -> dict[str, Any]: ...


class Publisher(Protocol):
    """Publish a finished run's artifacts; raise on failure (the run then waits in the spool).

    ``should_stop`` is checked between objects: True once the shutdown grace is over.
    """

    def __call__(
        self,
        settings: AuditSettings,
        report: dict[str, Any],
        artifacts: Path,
        *,
        should_stop: Callable[[], bool] | None = None,
    ) -> None: ...


def pipeline_runner(
    settings: AuditSettings, *, at: datetime, out_dir: Path, formats: Sequence[str]
) -> dict[str, Any]:
    """The production runner: :func:`auditor.pipeline.run_audit` -> :func:`~auditor.pipeline.write_run`,
    the same path as ``auditor run --config FILE`` (so the trend section is in the report
    whenever the config has a ``publish:`` target).

    Raises:
        auditor.sources.usable.NothingToAudit: no VirtualMachine found or the VM
            list unreadable (the run is a failure, never a clean empty report).
        auditor.sources.kubeclient.ClusterAccessError: the cluster is unreachable or lost.
    """
    from auditor import pipeline

    run = pipeline.run_audit(settings, lambda: at, formats=formats)
    pipeline.write_run(run, out_dir, formats, signing_key=settings.signing_key)
    return report_document(run.report)  # the document report.json was written from


def current_slot(trigger: CronTrigger, now: datetime) -> datetime:
    """Return the trigger's latest fire time at or before ``now`` (the slot being run).

    With ``coalesce=True`` a late run stands for the newest missed fire time,
    which is what this returns. Falls back to ``now`` (second precision) when
    the trigger never fired in the last ~2 years.
    """
    for window in (
        timedelta(minutes=2),
        timedelta(days=2),
        timedelta(days=64),
        timedelta(days=800),
    ):
        fire: datetime | None = trigger.get_next_fire_time(None, now - window)
        last = None
        while fire is not None and fire <= now:
            last = fire
            fire = trigger.get_next_fire_time(fire, after(fire))
        if last is not None:
            return last.astimezone(UTC)
    return now.replace(microsecond=0).astimezone(UTC)


@dataclass
class ServiceRuntime:
    """State shared by jobs and ``serve``: settings, runner, publisher, metrics, journal."""

    settings: AuditSettings
    journal: RunJournal
    metrics: ServiceMetrics
    runner: Runner = pipeline_runner
    publisher: Publisher = service_publisher
    clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    #: ``(schedule_id, slot, partial_dir)`` of the audit in progress
    current: tuple[str, datetime, Path] | None = None
    #: set when no audit or publication is running
    idle: threading.Event = field(default_factory=threading.Event)
    #: ``time.monotonic()`` after which publishing stops between objects (shutdown)
    stop_deadline: float | None = None
    #: audit time (whole seconds) of the last run of this process
    last_at: datetime | None = None
    #: ``schedule_id -> (slot, reason)``: slots armed at start to run late (``abandoned``,
    #: ``missed``); their run is journaled and counted as a catch-up run
    catch_up: dict[str, tuple[datetime, str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.idle.set()

    def should_stop(self) -> bool:
        """True once the shutdown grace is over: publishing stops between objects."""
        return self.stop_deadline is not None and time.monotonic() >= self.stop_deadline

    def drain_spool(self) -> None:
        """Deliver runs left in the spool (a killed publish, an outage); update journal, metrics.

        Called at start and at every tick. Never raises: failures stay in the spool.
        """
        if self.settings.publish is None:
            return
        try:
            target = publish_settings(self.settings.publish)
            # a target that is itself misconfigured moves a spooled run out of the retry loop
            # (refused/), as it refuses a new run: one spooled before lo32 was retried for ever
            results = retry_spool(
                target.spool_dir,
                target=target,
                should_stop=self.should_stop,
                refuse_misconfigured=True,
            )
        except Exception:
            log.exception("delivering the spool failed")
            return
        for result in results:
            if result.published:
                self.journal.mark_published(result.run_id)
                self.metrics.last_publish.set(time.time())
                log.info("delivered spooled run %s", result.run_id)
            elif result.quarantined is not None:
                self.journal.mark_published(result.run_id, f"quarantined: {result.error}")
            elif result.refused:
                where = result.refused_at or result.spooled
                self.journal.mark_published(
                    result.run_id,
                    f"refused: {result.error}; the run is not retried: it is kept at {where} "
                    "(fix publish: and publish its run/ folder with `auditor publish --from-run`)",
                )
            else:
                log.warning("spooled run %s still not delivered: %s", result.run_id, result.error)
        self.record_spool(target.spool_dir, target)

    def record_spool(self, spool_dir: Path, target: Any) -> None:
        """Set the spool backlog gauges (entries that cannot be delivered count as waiting)."""
        waiting = len(pending(spool_dir, target)) + len(unreadable(spool_dir, target))
        self.metrics.spool_backlog.set(waiting)
        self.metrics.spool_quarantined.set(len(quarantined(spool_dir)))

    def retain(self, schedule_id: str) -> list[Removal]:
        """Apply ``report.keep_runs``/``keep_days`` to the schedule's run folders; never raises."""
        report = self.settings.report
        if report.keep_runs is None and report.keep_days is None:
            return []
        spooled: set[str] = set()
        try:
            if self.settings.publish is not None:
                target = publish_settings(self.settings.publish)
                spooled = {entry.run_id for entry in pending(target.spool_dir)} | {
                    entry_run_id(folder) for folder, _ in unreadable(target.spool_dir)
                }
            return apply_retention(
                report.out_dir / schedule_id,
                self.journal,
                schedule_id,
                keep_runs=report.keep_runs,
                keep_days=report.keep_days,
                now=self.clock(),
                spooled_ids=spooled,
            )
        except Exception:  # retention must never fail a run; it is retried after the next one
            log.exception("schedule %s: applying the run folder retention failed", schedule_id)
            return []

    def schedule(self, schedule_id: str) -> Schedule:
        """Return the schedule named ``schedule_id``; KeyError if the config no longer has it."""
        for sched in self.settings.schedules:
            if sched.id == schedule_id:
                return sched
        raise KeyError(f"schedule '{schedule_id}' is not in the configuration")

    def run(self, schedule_id: str) -> str:
        """Run the current slot of ``schedule_id``; return its outcome (success or skipped).

        Raises whatever the runner raises (APScheduler logs it; the error listener counts it).
        """
        sched = self.schedule(schedule_id)
        now = self.clock()
        slot = current_slot(sched.trigger(), now)
        base = self.settings.report.out_dir / schedule_id
        final = base / slot_name(slot)
        armed = self.catch_up.pop(schedule_id, None)
        reason = armed[1] if armed is not None and armed[0] == slot else None
        if final.exists() or not self.journal.begin(schedule_id, slot, now, reason):
            log.info(
                "schedule %s: slot %s already produced; skipping", schedule_id, slot_name(slot)
            )
            self.metrics.runs.labels(schedule_id, "skipped").inc()
            return "skipped"
        if reason is not None:
            log.warning(
                "schedule %s: catch-up run for slot %s (%s)", schedule_id, slot_name(slot), reason
            )
            self.metrics.catch_up_runs.labels(schedule_id, reason).inc()
        partial = base / f".partial-{slot_name(slot)}"
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        formats = sched.formats or self.settings.report.formats
        self.idle.clear()
        try:
            self.drain_spool()
            self.current = (schedule_id, slot, partial)
            return self._audit_and_publish(schedule_id, sched, slot, now, partial, final, formats)
        finally:
            self.current = None
            self.retain(schedule_id)
            self.idle.set()
            thaw_gc()  # the audit's objects are dropped: let the collector see its cycles

    def _audit_and_publish(
        self,
        schedule_id: str,
        sched: Schedule,
        slot: datetime,
        now: datetime,
        partial: Path,
        final: Path,
        formats: Sequence[str],
    ) -> str:
        start = time.monotonic()
        log.info("schedule %s: audit for slot %s started", schedule_id, slot_name(slot))
        try:
            report = self.runner(
                self.settings, at=self._audit_time(now), out_dir=partial, formats=formats
            )
            if sched.period_report:  # the monthly schedule: last month's report joins the run
                period_for_run(
                    self.settings,
                    report,
                    partial,
                    slot,
                    sched.timezone,
                    formats,
                    sched.period_public_keys,
                    now,
                )
            partial.rename(final)
        except BaseException as exc:
            shutil.rmtree(partial, ignore_errors=True)
            self._ended(schedule_id, slot, "failure", start, f"{type(exc).__name__}: {exc}")
            raise
        self.current = None  # the audit is done; what follows is publishing
        self._ended(schedule_id, slot, "success", start, str(final))
        self.metrics.record_report(report)
        log.info("schedule %s: slot %s written to %s", schedule_id, slot_name(slot), final)
        if sched.publish and self.settings.publish is not None:
            self._publish(schedule_id, slot, report, final)
        return "success"

    def _audit_time(self, now: datetime) -> datetime:
        """``now`` in whole seconds, later than the previous run's audit time.

        The run id is the audit second plus the input digest: two schedules firing in the
        same second (a daily and a monthly one, or both missed runs caught up at boot) would
        otherwise share it, and the second run would replace the first in the publish spool
        or conflict with it in the archive. Waits for the next second when needed.
        """
        at = now.replace(microsecond=0)
        if self.last_at is not None and at <= self.last_at:
            wait = (self.last_at + timedelta(seconds=1) - now).total_seconds()
            time.sleep(max(0.0, min(wait, 1.0)))
            at = self.last_at + timedelta(seconds=1)
        self.last_at = at
        return at

    def _ended(
        self, schedule_id: str, slot: datetime, outcome: str, start: float, detail: str
    ) -> None:
        self.journal.finish(schedule_id, slot, self.clock(), outcome, detail)
        self.metrics.record_run(
            schedule_id, outcome, ended=time.time(), duration=time.monotonic() - start
        )

    def _publish(
        self, schedule_id: str, slot: datetime, report: dict[str, Any], artifacts: Path
    ) -> None:
        """Publish; the journal says ``published`` only when the publisher returned (verified)."""
        run_id = str(report.get("run", {}).get("id", "")) or None
        self.journal.set_publish(schedule_id, slot, "pending", run_id)
        try:
            self.publisher(self.settings, report, artifacts, should_stop=self.should_stop)
        except StoreConfigError as exc:
            # the target itself is wrong (no such bucket, no Object Lock for the lock mode
            # asked): no retry delivers the run, so it is not spooled but named, and kept in
            # its run folder (retention keeps an unpublished run)
            log.error(
                "schedule %s: run %s NOT published and NOT spooled, the publish target is "
                "misconfigured (fix publish: and publish the folder with `auditor publish "
                "--from-run %s`): %s",
                schedule_id,
                run_id,
                artifacts,
                exc,
            )
            self.journal.set_publish(schedule_id, slot, f"refused: {exc}")
            self.metrics.publish_failures.labels(schedule_id).inc()
            self.metrics.last_run_success.labels(schedule_id).set(0.0)
        except Exception as exc:
            log.exception("schedule %s: publishing %s failed", schedule_id, artifacts)
            state = "quarantined" if isinstance(exc, ConflictError) else "spooled"
            self.journal.set_publish(schedule_id, slot, f"{state}: {exc}")
            self.metrics.publish_failures.labels(schedule_id).inc()
            self.metrics.last_run_success.labels(schedule_id).set(0.0)
        else:
            self.journal.set_publish(schedule_id, slot, "published")
            self.metrics.last_publish.set(time.time())
        if self.settings.publish is not None:
            try:
                target = publish_settings(self.settings.publish)
                self.record_spool(target.spool_dir, target)
            except Exception:
                log.exception("cannot read the spool")


_RUNTIME: ServiceRuntime | None = None


def install_runtime(runtime: ServiceRuntime | None) -> None:
    """Make ``runtime`` the one :func:`scheduled_audit` uses (None uninstalls)."""
    global _RUNTIME
    _RUNTIME = runtime


def scheduled_audit(schedule_id: str) -> str:
    """The APScheduler job: run the current slot of ``schedule_id`` (:meth:`ServiceRuntime.run`).

    Raises:
        RuntimeError: no runtime installed (the job was started outside ``auditor serve``).
    """
    if _RUNTIME is None:
        raise RuntimeError("scheduled_audit runs only inside `auditor serve`")
    return _RUNTIME.run(schedule_id)
