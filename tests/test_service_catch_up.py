"""A run abandoned at SIGTERM (or missed while down) runs once, promptly, at the next start."""

from __future__ import annotations

import signal
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from auditor.service.jobs import slot_name
from auditor.service.journal import RunJournal
from auditor.service.scheduler import arm_catch_up, sync_jobs
from tests.service_support import corpus_dir, free_port, write_yaml
from tests.test_service_e2e import ENTRY, http, metric, process, wait_for
from tests.test_service_units import T0, _fake_runner, _runtime, _scheduler, _value, make_settings

SLOT = datetime(2026, 11, 30, 6, tzinfo=UTC)  # the daily slot before T0 (06:00:07 UTC)


def test_abandoned_slot_is_set_back_on_the_job_and_its_run_is_a_catch_up(tmp_path: Path) -> None:
    s = make_settings(
        tmp_path, [{"id": "daily", "cron": "0 6 * * *"}, {"id": "early", "cron": "0 5 * * *"}]
    )
    (tmp_path / "state").mkdir()
    sched = _scheduler(s)
    sync_jobs(sched, s)
    rt = _runtime(tmp_path, s, runner=_fake_runner)
    rt.journal.begin("daily", SLOT, SLOT)
    rt.journal.finish("daily", SLOT, SLOT, "abandoned", "shutdown grace time exceeded")
    rt.journal.begin("early", SLOT - timedelta(hours=1), SLOT)
    rt.journal.finish("early", SLOT - timedelta(hours=1), SLOT, "success")
    # both jobs fired before the SIGTERM: the store holds their next fire times
    sched.modify_job("daily", next_run_time=SLOT + timedelta(days=1))
    sched.modify_job("early", next_run_time=SLOT + timedelta(days=1, hours=-1))
    try:
        assert arm_catch_up(sched, rt, T0) == {"daily": (SLOT, "abandoned")}
        assert sched.get_job("daily").next_run_time == SLOT  # due now: APScheduler runs it
        assert sched.get_job("early").next_run_time == datetime(2026, 12, 1, 5, tzinfo=UTC)
    finally:
        sched.shutdown()
    assert _value(rt.metrics, "auditor_last_run_success", schedule="daily") == 0
    assert rt.run("daily") == "success"
    [rec] = rt.journal.records("daily")
    assert (rec.slot, rec.outcome, rec.catch_up) == ("2026-11-30T06:00:00Z", "success", "abandoned")
    assert _value(rt.metrics, "auditor_catch_up_runs_total", schedule="daily", reason="abandoned")
    assert _value(rt.metrics, "auditor_last_run_success", schedule="daily") == 1
    assert rt.catch_up == {}
    assert rt.run("daily") == "skipped"  # once


def test_missed_slot_is_marked_as_a_catch_up(tmp_path: Path) -> None:
    s = make_settings(tmp_path, [{"id": "daily", "cron": "0 6 * * *"}])
    (tmp_path / "state").mkdir()
    sched = _scheduler(s)
    sync_jobs(sched, s)
    sched.modify_job("daily", next_run_time=SLOT)  # the service was down at 06:00
    rt = _runtime(tmp_path, s, runner=_fake_runner)
    try:
        assert arm_catch_up(sched, rt, T0) == {"daily": (SLOT, "missed")}
        assert sched.get_job("daily").next_run_time == SLOT
    finally:
        sched.shutdown()
    assert rt.run("daily") == "success"
    assert rt.journal.records("daily")[0].catch_up == "missed"


def test_run_abandoned_at_sigterm_runs_again_right_after_restart(tmp_path: Path) -> None:
    """The repro: SIGTERM during the audit with a short grace, then restart ``serve``."""
    port = free_port()
    second = (datetime.now(UTC) + timedelta(seconds=5)).second
    cfg = write_yaml(
        tmp_path / "auditor.yaml",
        {
            "source": {"type": "directory", "path": str(corpus_dir() / "cluster-export")},
            "report": {"out_dir": str(tmp_path / "reports"), "formats": ["json"]},
            # fires twice a minute: without the fix the restarted service waits for the next one
            "schedules": [{"id": "fast", "cron": f"{second},{(second + 30) % 60} * * * * *"}],
            "service": {
                "state_dir": str(tmp_path / "state"),
                "misfire_grace_time_seconds": 600,
                "shutdown_grace_seconds": 0.5,
                "metrics": {"host": "127.0.0.1", "port": port},
            },
        },
    )
    journal = RunJournal(tmp_path / "state" / "runs.sqlite")
    log = tmp_path / "serve.log"
    with process([sys.executable, str(ENTRY), str(cfg), "60"], log) as proc:
        [running] = wait_for(
            "a run in progress",
            lambda: [r for r in journal.records("fast") if r.outcome == "running"],
            timeout=40,
        )
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(15) == 0
    assert [(r.slot, r.outcome) for r in journal.records("fast")] == [(running.slot, "abandoned")]
    restarted = datetime.now(UTC)
    with process([sys.executable, str(ENTRY), str(cfg), "0"], log) as proc:
        [done] = wait_for(
            "the catch-up run",
            lambda: [r for r in journal.records("fast") if r.outcome == "success"],
            timeout=20,
        )
        text = wait_for(
            "metrics",
            lambda: (lambda r: r[1] if r and "auditor_catch_up_runs_total{" in r[1] else None)(
                http(f"http://127.0.0.1:{port}/metrics")
            ),
        )
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(15) == 0
    assert done.slot == running.slot and done.catch_up == "abandoned"
    started = datetime.strptime(done.started, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    assert started - restarted < timedelta(seconds=15)  # not at the next fire time
    assert metric(text, 'auditor_catch_up_runs_total{reason="abandoned",schedule="fast"}') == 1
    slot = datetime.strptime(done.slot, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    assert (tmp_path / "reports" / "fast" / slot_name(slot) / "report.json").is_file()
    assert "catch-up run for slot" in log.read_text()
