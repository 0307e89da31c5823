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
from auditor.publish import service_publisher
from auditor.service.journal import RunJournal
from auditor.service.metrics import ServiceMetrics

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


#: Publish a finished run's artifacts: ``(settings, report, artifact_dir)``; raises on failure.
Publisher = Callable[[AuditSettings, dict[str, Any], Path], None]


def pipeline_runner(
    settings: AuditSettings, *, at: datetime, out_dir: Path, formats: Sequence[str]
) -> dict[str, Any]:
    """The production runner: source -> :func:`auditor.pipeline.run_audit` -> artifacts.

    Raises:
        auditor.sources.usable.NothingToAudit: no VirtualMachine found or the VM
            list unreadable (the run is a failure, never a clean empty report).
        auditor.sources.kubeclient.ClusterAccessError: the cluster is unreachable or lost.
    """
    from auditor import pipeline
    from auditor.sources.from_settings import source_from_settings
    from auditor.sources.usable import require_vms

    data = source_from_settings(settings).collect()
    require_vms(data)
    report = pipeline.run_audit(data, settings, at=at)
    pipeline.write_artifacts(report, out_dir, list(formats))
    return report.model_dump(mode="json")


def slot_name(slot: datetime) -> str:
    """Return the directory name of a slot: ``YYYYMMDDTHHMMSSZ`` in UTC."""
    return slot.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")


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
            fire = trigger.get_next_fire_time(fire, fire + timedelta(microseconds=1))
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
    #: ``(schedule_id, slot, partial_dir)`` of the run in progress
    current: tuple[str, datetime, Path] | None = None
    idle: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self.idle.set()

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
        if final.exists() or not self.journal.begin(schedule_id, slot, now):
            log.info(
                "schedule %s: slot %s already produced; skipping", schedule_id, slot_name(slot)
            )
            self.metrics.runs.labels(schedule_id, "skipped").inc()
            return "skipped"
        partial = base / f".partial-{slot_name(slot)}"
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        formats = sched.formats or self.settings.report.formats
        self.idle.clear()
        self.current = (schedule_id, slot, partial)
        start = time.monotonic()
        log.info("schedule %s: audit for slot %s started", schedule_id, slot_name(slot))
        try:
            report = self.runner(
                self.settings, at=now.replace(microsecond=0), out_dir=partial, formats=formats
            )
            partial.rename(final)
        except BaseException as exc:
            shutil.rmtree(partial, ignore_errors=True)
            self._ended(schedule_id, slot, "failure", start, f"{type(exc).__name__}: {exc}")
            raise
        self._ended(schedule_id, slot, "success", start, str(final))
        self.metrics.record_report(report)
        log.info("schedule %s: slot %s written to %s", schedule_id, slot_name(slot), final)
        if sched.publish and self.settings.publish is not None:
            self._publish(schedule_id, report, final)
        return "success"

    def _ended(
        self, schedule_id: str, slot: datetime, outcome: str, start: float, detail: str
    ) -> None:
        self.journal.finish(schedule_id, slot, self.clock(), outcome, detail)
        self.metrics.record_run(
            schedule_id, outcome, ended=time.time(), duration=time.monotonic() - start
        )
        self.current = None
        self.idle.set()

    def _publish(self, schedule_id: str, report: dict[str, Any], artifacts: Path) -> None:
        try:
            self.publisher(self.settings, report, artifacts)
        except Exception:
            log.exception("schedule %s: publishing %s failed", schedule_id, artifacts)
            self.metrics.publish_failures.labels(schedule_id).inc()


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
