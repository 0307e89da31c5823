"""Service parts in process: slots, job sync against a real SQLite job store, runs, metrics."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from apscheduler.schedulers.background import BackgroundScheduler

from auditor.config import AuditSettings, parse_settings
from auditor.config.service import build_trigger
from auditor.service.jobs import ServiceRuntime, current_slot, pipeline_runner, slot_name
from auditor.service.journal import RunJournal
from auditor.service.metrics import HealthServer, ServiceMetrics
from auditor.service.scheduler import (
    NoRunAfterShutdown,
    ServiceLockedError,
    build_scheduler,
    state_lock,
    sync_jobs,
)
from tests.answer_support import answers
from tests.service_support import corpus_dir

T0 = datetime(2026, 11, 30, 6, 0, 7, 500000, tzinfo=UTC)


def make_settings(tmp: Path, schedules: list[dict[str, Any]], **extra: Any) -> AuditSettings:
    raw = {
        "source": {"type": "directory", "path": str(corpus_dir() / "cluster-export")},
        "report": {"out_dir": str(tmp / "reports"), "formats": ["json"]},
        "schedules": schedules,
        "service": {"state_dir": str(tmp / "state"), "misfire_grace_time_seconds": 3600},
        **extra,
    }
    return parse_settings(raw, path=tmp / "c.yaml")


def test_current_slot_is_latest_fire_at_or_before_now() -> None:
    assert current_slot(build_trigger("*/5 * * * * *", "UTC"), T0) == T0.replace(
        second=5, microsecond=0
    )
    daily = build_trigger("0 6 * * *", "Europe/Berlin")  # 05:00 UTC in winter
    assert current_slot(daily, T0).isoformat() == "2026-11-30T05:00:00+00:00"
    monthly = build_trigger("0 7 1 * *", "UTC")
    assert current_slot(monthly, T0).isoformat() == "2026-11-01T07:00:00+00:00"
    assert slot_name(current_slot(monthly, T0)) == "20261101T070000Z"


class _Background(NoRunAfterShutdown, BackgroundScheduler):
    pass


def _scheduler(settings: AuditSettings) -> BackgroundScheduler:
    sched = _Background(
        jobstores={"default": build_scheduler(settings)._jobstores["default"]}, timezone=UTC
    )
    sched.start(paused=True)
    return sched


def test_sync_jobs_keeps_missed_run_and_reschedules_changed_trigger(tmp_path: Path) -> None:
    (tmp_path / "state").mkdir()
    s1 = make_settings(
        tmp_path, [{"id": "a", "cron": "0 6 * * *"}, {"id": "b", "cron": "0 7 * * *"}]
    )
    sched = _scheduler(s1)
    assert sync_jobs(sched, s1) == {"a": "added", "b": "added"}
    job = sched.get_job("a")
    assert job.coalesce is True and job.max_instances == 1 and job.misfire_grace_time == 3600
    past = datetime.now(UTC) - timedelta(minutes=30)
    sched.modify_job("a", next_run_time=past)  # as if the service was down at 06:00
    sched.shutdown()

    s2 = make_settings(
        tmp_path, [{"id": "a", "cron": "0 6 * * *"}, {"id": "c", "cron": "0 8 * * *"}]
    )
    sched = _scheduler(s2)
    assert sync_jobs(sched, s2) == {"a": "kept", "b": "removed", "c": "added"}
    assert sched.get_job("a").next_run_time == past
    sched.shutdown()

    s3 = make_settings(
        tmp_path,
        [
            {"id": "a", "cron": "0 6 * * *", "timezone": "Asia/Tokyo"},
            {"id": "c", "cron": "0 8 * * *"},
        ],
    )
    s3 = s3.model_copy(
        update={"service": s3.service.model_copy(update={"misfire_grace_time_seconds": 60})}
    )
    sched = _scheduler(s3)
    assert sync_jobs(sched, s3) == {"a": "rescheduled", "c": "updated"}
    assert sched.get_job("a").next_run_time > datetime.now(UTC)
    assert sched.get_job("c").misfire_grace_time == 60
    sched.shutdown()


def _fake_runner(
    settings: AuditSettings, *, at: datetime, out_dir: Path, formats: Sequence[str]
) -> dict[str, Any]:
    report = {
        "run": {"audit_time": at.isoformat()},
        "summary": {
            "readiness": {"READY": 1, "NOT_READY": 2},
            "fails_by_severity": {"high": 3},
            "findings_by_status": {"FAIL": 3, "PASS": 4},
        },
    }
    (out_dir / "report.json").write_text(json.dumps(report), encoding="utf-8")
    return report


def _runtime(tmp: Path, settings: AuditSettings, **kw: Any) -> ServiceRuntime:
    return ServiceRuntime(
        settings,
        RunJournal(tmp / "state" / "runs.sqlite"),
        ServiceMetrics(),
        clock=lambda: T0,
        **kw,
    )


def _value(metrics: ServiceMetrics, name: str, **labels: str) -> float | None:
    value = metrics.registry.get_sample_value(name, labels)
    return value


def test_run_writes_slot_once_and_updates_metrics(tmp_path: Path) -> None:
    s = make_settings(tmp_path, [{"id": "daily", "cron": "0 6 * * *"}])
    rt = _runtime(tmp_path, s, runner=_fake_runner)
    assert rt.run("daily") == "success"
    slot_dir = tmp_path / "reports" / "daily" / "20261130T060000Z"
    assert (
        json.loads((slot_dir / "report.json").read_text())["run"]["audit_time"]
        == "2026-11-30T06:00:07+00:00"
    )
    assert rt.run("daily") == "skipped"
    m = rt.metrics
    assert _value(m, "auditor_runs_total", schedule="daily", outcome="success") == 1
    assert _value(m, "auditor_runs_total", schedule="daily", outcome="skipped") == 1
    assert _value(m, "auditor_last_run_success", schedule="daily") == 1
    assert _value(m, "auditor_vms", readiness="NOT_READY") == 2
    assert _value(m, "auditor_vms", readiness="UNKNOWN") == 0
    assert _value(m, "auditor_failed_findings", severity="high") == 3
    assert _value(m, "auditor_findings", status="PASS") == 4
    [rec] = rt.journal.records("daily")
    assert (rec.slot, rec.outcome, rec.detail) == ("2026-11-30T06:00:00Z", "success", str(slot_dir))
    assert rt.idle.is_set() and rt.current is None


def test_failed_run_leaves_no_artifacts_and_is_counted(tmp_path: Path) -> None:
    s = make_settings(tmp_path, [{"id": "daily", "cron": "0 6 * * *"}])

    def boom(
        settings: AuditSettings, *, at: datetime, out_dir: Path, formats: Sequence[str]
    ) -> dict[str, Any]:
        (out_dir / "half.json").write_text("{", encoding="utf-8")
        raise OSError("disk full")

    rt = _runtime(tmp_path, s, runner=boom)
    with pytest.raises(OSError, match="disk full"):
        rt.run("daily")
    assert list((tmp_path / "reports" / "daily").iterdir()) == []
    assert rt.journal.records()[0].outcome == "failure"
    assert rt.journal.records()[0].detail == "OSError: disk full"
    assert _value(rt.metrics, "auditor_last_run_success", schedule="daily") == 0
    rt.runner = _fake_runner  # the same slot may be retried after a failure
    assert rt.run("daily") == "success"


def test_publish_failure_is_counted_not_fatal(tmp_path: Path) -> None:
    s = make_settings(
        tmp_path,
        [{"id": "m", "cron": "0 7 1 * *", "publish": True}],
        publish={"url": str(tmp_path / "archive"), "spool_dir": str(tmp_path / "spool")},
    )
    calls: list[Path] = []

    def publisher(
        settings: AuditSettings, report: dict[str, Any], artifacts: Path, **_: Any
    ) -> None:
        calls.append(artifacts)
        raise ConnectionError("endpoint down")

    rt = _runtime(tmp_path, s, runner=_fake_runner, publisher=publisher)
    assert rt.run("m") == "success"
    assert calls == [tmp_path / "reports" / "m" / "20261101T070000Z"]
    assert _value(rt.metrics, "auditor_publish_failures_total", schedule="m") == 1
    # issue 14: a run whose publication failed is not a successful run, and the journal says so
    assert _value(rt.metrics, "auditor_last_run_success", schedule="m") == 0
    [rec] = rt.journal.records("m")
    assert rec.outcome == "success" and rec.publish == "spooled: endpoint down"


def test_pipeline_runner_audits_the_corpus(tmp_path: Path) -> None:
    s = make_settings(tmp_path, [{"id": "d", "cron": "0 6 * * *"}], cluster_name="ocp-prod-east")
    report = pipeline_runner(
        s, at=datetime(2026, 11, 30, 6, tzinfo=UTC), out_dir=tmp_path, formats=["json"]
    )
    assert report["summary"]["vms"] == answers("cluster-export").vm_count
    assert json.loads((tmp_path / "report.json").read_text())["cluster"]["name"] == "ocp-prod-east"


def test_state_lock_refuses_second_holder(tmp_path: Path) -> None:
    with (
        state_lock(tmp_path),
        pytest.raises(ServiceLockedError, match="serve.lock is locked"),
        state_lock(tmp_path),
    ):
        pass
    with state_lock(tmp_path):  # released
        pass


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def test_health_server_routes() -> None:
    metrics = ServiceMetrics()
    metrics.record_run("daily", "success", ended=1_800_000_000.0, duration=2.5)
    ready = [False]
    server = HealthServer(metrics, lambda: ready[0], host="127.0.0.1", port=0)
    server.start()
    try:
        base = f"http://127.0.0.1:{server.port}"
        assert _get(base + "/healthz") == (200, "ok\n")
        assert _get(base + "/readyz")[0] == 503
        ready[0] = True
        assert _get(base + "/readyz") == (200, "ready\n")
        code, text = _get(base + "/metrics")
        assert code == 200
        assert 'auditor_last_run_timestamp_seconds{schedule="daily"} 1.8e+09' in text
        assert 'auditor_run_duration_seconds_count{schedule="daily"} 1.0' in text
        assert _get(base + "/nope")[0] == 404
    finally:
        server.stop()


def test_tick_delivers_the_spool_and_journal_says_published_after_verification(
    tmp_path: Path,
) -> None:
    """A run a killed publisher left in the spool is delivered at the next tick (issue 14)."""
    from auditor.publish import publish_run, publish_settings
    from auditor.publish.spool import pending
    from auditor.service.jobs import pipeline_runner
    from tests.conftest import REPO

    example = REPO / "examples" / "small-cluster"
    publish = {"url": str(tmp_path / "archive"), "spool_dir": str(tmp_path / "spool")}
    s = make_settings(
        tmp_path,
        [{"id": "d", "cron": "0 6 * * *", "publish": True}],
        publish=publish,
        cluster_name="example",
    ).model_copy(update={"source": None})
    s = parse_settings(
        {**s.model_dump(mode="json"), "source": {"type": "directory", "path": str(example)}},
        path=tmp_path / "c.yaml",
    )
    earlier = tmp_path / "earlier"
    earlier.mkdir()
    pipeline_runner(s, at=datetime(2026, 11, 29, 6, tzinfo=UTC), out_dir=earlier, formats=["json"])
    target = publish_settings(publish)
    killed = publish_run(earlier, target, should_stop=lambda: True)  # stopped before any object
    assert not killed.published and len(pending(target.spool_dir)) == 1

    rt = _runtime(tmp_path, s)
    assert rt.run("d") == "success"
    assert pending(target.spool_dir) == []
    [rec] = rt.journal.records("d")
    assert rec.publish == "published" and rec.run_id is not None
    manifests = sorted((tmp_path / "archive").rglob("manifest.json"))
    assert len(manifests) == 2, "the spooled run and the tick's run"
    assert _value(rt.metrics, "auditor_spool_backlog_runs") == 0
    assert (_value(rt.metrics, "auditor_last_publish_success_timestamp_seconds") or 0) > 0
    [slot_report] = (tmp_path / "reports" / "d").glob("*/report.json")
    report = json.loads(slot_report.read_text())
    assert rec.run_id == report["run"]["id"]
    # the per-owner gauge holds every owner's count in every readiness state, zeros included
    counts = Counter((v["owner"], v["readiness"]) for v in report["vms"])
    assert sum(counts.values()) == report["summary"]["vms"] > 0
    for owner in {v["owner"] for v in report["vms"]}:
        for state in ("READY", "AT_RISK", "NOT_READY", "UNKNOWN"):
            labels = {"cluster": "example", "owner": owner, "readiness": state}
            value = rt.metrics.registry.get_sample_value("auditor_owner_vms", labels)
            assert value == counts[(owner, state)], labels
