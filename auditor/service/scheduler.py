"""``auditor serve``: APScheduler wiring, signals, health and metrics. No audit logic.

One process, one scheduler, one job store. A BlockingScheduler runs the
schedules from the config with a persistent SQLAlchemy job store (SQLite in
``service.state_dir`` by default), ``coalesce=True``, ``max_instances=1`` and a
generous ``misfire_grace_time``, so a run missed while the service was down
happens once after it comes back.

A job is added only when the store has none with its id, and rescheduled only
when its trigger changed: re-adding every job at boot would move its next run
time past the missed run and lose it.

Two schedulers must never share a job store: ``serve`` takes an exclusive lock
on ``<state_dir>/serve.lock`` and refuses to start when another process holds it
(deploy one replica with the Recreate strategy).

SIGTERM or SIGINT stop the scheduler; a running audit gets
``service.shutdown_grace_seconds`` to finish, else it is abandoned (its partial
artifacts are never renamed into place) and recorded as such in the journal.
Publishing stops between objects two seconds before the grace ends; the run
stays in the spool, which is delivered when the scheduler starts again.
"""

from __future__ import annotations

import fcntl
import logging
import os
import shutil
import signal
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Any

from apscheduler.events import (
    EVENT_JOB_ERROR,
    EVENT_JOB_MAX_INSTANCES,
    EVENT_JOB_MISSED,
    EVENT_SCHEDULER_STARTED,
    JobExecutionEvent,
    JobSubmissionEvent,
    SchedulerEvent,
)
from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
from apscheduler.schedulers.base import STATE_STOPPED, BaseScheduler
from apscheduler.schedulers.blocking import BlockingScheduler

from auditor.config import AuditSettings
from auditor.publish import service_publisher
from auditor.service.jobs import (
    Publisher,
    Runner,
    ServiceRuntime,
    current_slot,
    install_runtime,
    pipeline_runner,
    scheduled_audit,
)
from auditor.service.journal import RunJournal
from auditor.service.metrics import HealthServer, ServiceMetrics

__all__ = [
    "serve",
    "build_scheduler",
    "ServiceScheduler",
    "NoRunAfterShutdown",
    "sync_jobs",
    "arm_catch_up",
    "ServiceLockedError",
    "JobStoreError",
    "open_job_store",
    "JOB_FUNC",
]

log = logging.getLogger(__name__)

#: The job function's reference as stored in the job store.
JOB_FUNC = f"{scheduled_audit.__module__}:{scheduled_audit.__name__}"


class ServiceLockedError(Exception):
    """Another ``auditor serve`` holds the state directory's lock."""


@contextmanager
def state_lock(state_dir: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``<state_dir>/serve.lock`` for the block.

    Raises:
        ServiceLockedError: another process holds it.
    """
    state_dir.mkdir(parents=True, exist_ok=True)
    path = state_dir / "serve.lock"
    with open(path, "a+", encoding="utf-8") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            handle.seek(0)
            holder = handle.read().strip() or "unknown"
            raise ServiceLockedError(
                f"{path} is locked by another auditor serve (pid {holder}); "
                "one job store must not be shared by two schedulers"
            ) from exc
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class NoRunAfterShutdown(BaseScheduler):  # type: ignore[misc]
    """Mixin: no job processing once the scheduler is stopped.

    APScheduler 3's main loop processes jobs once more after ``shutdown()``; a job
    due at that moment fails to submit ("cannot schedule new futures after
    shutdown", agronholm/apscheduler#285, #985) yet its next run time is advanced
    in the job store, so that run would be lost for good.
    """

    def _process_jobs(self) -> float | None:
        if self.state == STATE_STOPPED:
            return None
        wait: float | None = super()._process_jobs()
        return wait


class ServiceScheduler(NoRunAfterShutdown, BlockingScheduler):  # type: ignore[misc]
    """The BlockingScheduler ``serve`` runs."""


class JobStoreError(Exception):
    """The job store (``service.job_store_url``) or the run journal cannot be opened; the
    message names the setting and the URL or file."""


def open_job_store(settings: AuditSettings) -> SQLAlchemyJobStore:
    """Return the job store, checked by one connection before the scheduler starts.

    Raises:
        JobStoreError: the URL cannot be used or the database cannot be opened (a SQLite
            file in a folder that does not exist or is read-only, a server down); the
            message names ``service.job_store_url`` and the URL without its password.
            Before, ``serve`` ended in a traceback (exit 1) from ``scheduler.start()``.
    """
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import SQLAlchemyError

    url = settings.service.store_url()
    try:
        shown = make_url(url).render_as_string(hide_password=True)
    except SQLAlchemyError:
        shown = "(not a SQLAlchemy URL)"
    try:
        store = SQLAlchemyJobStore(url=url)
        store.jobs_t.create(store.engine, checkfirst=True)  # what start() does first
    except (SQLAlchemyError, ImportError, OSError) as exc:
        reason = getattr(exc, "orig", None) or exc
        field = "job_store_url" if settings.service.job_store_url else "state_dir"
        raise JobStoreError(
            f"service.{field}: cannot open the job store {shown}: {reason}"
        ) from None
    return store


def open_journal(path: Path) -> RunJournal:
    """Return the run journal at ``path``.

    Raises:
        JobStoreError: it cannot be opened (not a SQLite database, unreadable); the
            message names the file and ``service.state_dir``.
    """
    try:
        return RunJournal(path)
    except (sqlite3.Error, OSError) as exc:
        raise JobStoreError(
            f"service.state_dir: cannot open the run journal {path}: {exc}; move the file "
            "away to start a new journal (the slots it records would run again)"
        ) from None


def build_scheduler(
    settings: AuditSettings, *, store: SQLAlchemyJobStore | None = None
) -> ServiceScheduler:
    """Return the scheduler with the persistent job store (``store``, else one made from
    ``service.job_store_url``) and safe job defaults."""
    svc = settings.service
    return ServiceScheduler(
        jobstores={"default": store or SQLAlchemyJobStore(url=svc.store_url())},
        executors={"default": ThreadPoolExecutor(max_workers=1)},
        job_defaults={
            "coalesce": True,
            "max_instances": 1,
            "misfire_grace_time": svc.misfire_grace_time_seconds,
        },
        timezone=UTC,
    )


def _trigger_key(trigger: Any) -> str:
    return f"{trigger} tz={getattr(trigger, 'timezone', '')}"


def sync_jobs(scheduler: BaseScheduler, settings: AuditSettings) -> dict[str, str]:
    """Make the started scheduler's jobs match ``settings.schedules``.

    Returns ``{job_id: action}`` with action ``added``, ``kept``, ``rescheduled``,
    ``updated`` or ``removed``. A kept job keeps its stored next run time, so a run
    missed during downtime still happens (once, coalesced).
    """
    actions: dict[str, str] = {}
    grace = settings.service.misfire_grace_time_seconds
    wanted = {s.id: s for s in settings.schedules}
    for job in scheduler.get_jobs():
        if job.id not in wanted:
            scheduler.remove_job(job.id)
            actions[job.id] = "removed"
    for sched in settings.schedules:
        trigger = sched.trigger()
        job = scheduler.get_job(sched.id)
        if job is None:
            scheduler.add_job(
                scheduled_audit,
                trigger,
                id=sched.id,
                name=f"audit {sched.id}",
                args=[sched.id],
                coalesce=True,
                max_instances=1,
                misfire_grace_time=grace,
            )
            actions[sched.id] = "added"
            continue
        if _trigger_key(job.trigger) != _trigger_key(trigger):
            scheduler.reschedule_job(sched.id, trigger=trigger)
            actions[sched.id] = "rescheduled"
        elif (
            # same times, another trigger class (a plain CronTrigger stored by an older
            # version): swapped in by modify_job, which keeps the stored next run time
            type(job.trigger) is not type(trigger)
            or job.func_ref != JOB_FUNC
            or list(job.args) != [sched.id]
            or (job.misfire_grace_time != grace or not job.coalesce or job.max_instances != 1)
        ):
            scheduler.modify_job(
                sched.id,
                trigger=trigger,
                func=scheduled_audit,
                args=[sched.id],
                coalesce=True,
                max_instances=1,
                misfire_grace_time=grace,
            )
            actions[sched.id] = "updated"
        else:
            actions[sched.id] = "kept"
    for job_id, action in sorted(actions.items()):
        job = scheduler.get_job(job_id)
        log.info("job %s %s; next run %s", job_id, action, job.next_run_time if job else "-")
    return actions


def arm_catch_up(
    scheduler: BaseScheduler, runtime: ServiceRuntime, now: datetime
) -> dict[str, tuple[datetime, str]]:
    """At start: make each job's last slot that did not run run once more, promptly.

    APScheduler advances a job's stored ``next_run_time`` when it fires, so a run that
    SIGTERM (or a kill) abandoned would otherwise wait for its next fire time. When the
    journal says the schedule's latest slot (at or before ``now``) was ``abandoned``, the
    job's ``next_run_time`` is set back to that slot; APScheduler then runs it at once if it
    is within ``misfire_grace_time``, or reports it missed (``auditor_job_misses_total``).
    A job whose stored ``next_run_time`` is already past (the service was down at its fire
    time) is left as it is: APScheduler runs it the same way (coalesced).

    Both are recorded in ``runtime.catch_up`` (``schedule_id -> (slot, reason)``, reason
    ``abandoned`` or ``missed``), so the run's journal row and ``auditor_catch_up_runs_total``
    say it is a catch-up run. Returns that mapping.
    """
    for sched in runtime.settings.schedules:
        job = scheduler.get_job(sched.id)
        if job is None or job.next_run_time is None:
            continue
        trigger = sched.trigger()
        slot = current_slot(trigger, now)
        if trigger.get_next_fire_time(None, slot) != slot:
            continue  # the trigger has not fired in the window current_slot looks at
        if job.next_run_time <= now:
            runtime.catch_up[sched.id] = (slot, "missed")
            log.warning(
                "schedule %s: slot %s was missed while the service was down; running it now",
                sched.id,
                slot,
            )
        elif job.next_run_time > slot and runtime.journal.outcome(sched.id, slot) == "abandoned":
            runtime.catch_up[sched.id] = (slot, "abandoned")
            runtime.metrics.last_run_success.labels(sched.id).set(0.0)
            log.warning(
                "schedule %s: the run for slot %s was abandoned by the previous process; "
                "running it again now",
                sched.id,
                slot,
            )
            scheduler.modify_job(sched.id, next_run_time=slot)
    return dict(runtime.catch_up)


def _listen(scheduler: BlockingScheduler, metrics: ServiceMetrics) -> None:
    def on_event(event: SchedulerEvent) -> None:
        if isinstance(event, JobExecutionEvent) and event.code == EVENT_JOB_ERROR:
            log.error(
                "job %s failed for %s: %r", event.job_id, event.scheduled_run_time, event.exception
            )
            metrics.job_errors.labels(event.job_id).inc()
        elif isinstance(event, JobExecutionEvent) and event.code == EVENT_JOB_MISSED:
            log.warning(
                "job %s missed its run at %s (later than misfire_grace_time)",
                event.job_id,
                event.scheduled_run_time,
            )
            metrics.job_misses.labels(event.job_id, "misfire").inc()
        elif isinstance(event, JobSubmissionEvent) and event.code == EVENT_JOB_MAX_INSTANCES:
            log.warning("job %s skipped: its previous run is still going", event.job_id)
            metrics.job_misses.labels(event.job_id, "max_instances").inc()

    scheduler.add_listener(on_event, EVENT_JOB_ERROR | EVENT_JOB_MISSED | EVENT_JOB_MAX_INSTANCES)


def serve(
    settings: AuditSettings,
    *,
    runner: Runner = pipeline_runner,
    publisher: Publisher = service_publisher,
) -> int:
    """Run the scheduler until SIGTERM/SIGINT; return the process exit code.

    0 after a shutdown; 2 when the metrics address cannot be bound (nothing was run).

    Raises:
        ServiceLockedError: another ``serve`` uses the same state directory.
        JobStoreError: the job store cannot be opened (nothing was run).
    """
    svc = settings.service
    with state_lock(svc.state_dir):
        metrics = ServiceMetrics()
        journal = open_journal(svc.state_dir / "runs.sqlite")
        _recover(settings, journal, metrics)
        runtime = ServiceRuntime(settings, journal, metrics, runner=runner, publisher=publisher)
        scheduler = build_scheduler(settings, store=open_job_store(settings))
        install_runtime(runtime)
        started = threading.Event()
        scheduler_thread = threading.current_thread()  # BlockingScheduler runs here

        def alive() -> bool:
            """The scheduler's thread lives, and the scheduler runs once it was started."""
            if not scheduler_thread.is_alive():
                return False
            return bool(scheduler.running) or not started.is_set() or stopping.is_set()

        try:
            http = HealthServer(
                metrics,
                lambda: bool(scheduler.running),
                host=svc.metrics.host,
                port=svc.metrics.port,
                alive=alive,
            )
        except OSError as exc:  # the port is taken, or the host is not an address here
            log.error(
                "cannot serve metrics on %s:%d (service.metrics): %s",
                svc.metrics.host,
                svc.metrics.port,
                exc.strerror or exc,
            )
            install_runtime(None)
            return 2
        http.start()
        log.info("metrics and health on http://%s:%d/metrics", svc.metrics.host, http.port)
        _listen(scheduler, metrics)
        stopping = threading.Event()

        def on_start(_event: SchedulerEvent) -> None:
            sync_jobs(scheduler, settings)
            arm_catch_up(scheduler, runtime, datetime.now(UTC))
            started.set()
            # runs a killed publish left in the spool resume now, not at the next tick
            threading.Thread(target=runtime.drain_spool, name="auditor-spool", daemon=True).start()

        scheduler.add_listener(on_start, EVENT_SCHEDULER_STARTED)

        def on_signal(signum: int, _frame: FrameType | None) -> None:
            if stopping.is_set():
                return
            stopping.set()
            # publishing stops between objects just before the grace ends (then resumes
            # from the spool at the next start), so the hard exit never cuts an upload
            runtime.stop_deadline = time.monotonic() + max(svc.shutdown_grace_seconds - 2, 0)
            log.info("received %s; stopping the scheduler", signal.Signals(signum).name)
            threading.Thread(target=scheduler.shutdown, kwargs={"wait": False}).start()

        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
        try:
            scheduler.start()
        finally:
            http.stop()
            _finish_or_abandon(runtime, svc.shutdown_grace_seconds)
            install_runtime(None)
    log.info("stopped")
    return 0


def _recover(settings: AuditSettings, journal: RunJournal, metrics: ServiceMetrics) -> None:
    """At boot: record runs a killed process left unfinished, drop their partial artifacts."""
    now = datetime.now(UTC)
    for rec in journal.abandon_unfinished(now, "process ended during the run"):
        log.warning(
            "run of %s for slot %s (started %s) was abandoned by a previous process",
            rec.schedule_id,
            rec.slot,
            rec.started,
        )
        metrics.runs.labels(rec.schedule_id, "abandoned").inc()
    out = settings.report.out_dir
    for partial in sorted(out.glob("*/.partial-*")) if out.is_dir() else []:
        log.warning("removing partial artifacts %s", partial)
        shutil.rmtree(partial, ignore_errors=True)


def _finish_or_abandon(runtime: ServiceRuntime, grace: float) -> None:
    """Wait up to ``grace`` seconds for a running audit; abandon it and exit hard if it overruns."""
    if runtime.idle.wait(grace):
        return
    current = runtime.current
    if current is not None:
        schedule_id, slot, partial = current
        log.warning("abandoning the run of %s for slot %s after %.0f s", schedule_id, slot, grace)
        runtime.journal.finish(
            schedule_id, slot, datetime.now(UTC), "abandoned", "shutdown grace time exceeded"
        )
        runtime.metrics.runs.labels(schedule_id, "abandoned").inc()
        shutil.rmtree(partial, ignore_errors=True)
    logging.shutdown()
    os._exit(0)  # the executor thread is not a daemon; do not wait for it
