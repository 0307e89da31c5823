"""``auditor serve`` as a real process: reports, metrics, SIGTERM, kill and restart."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import pytest

from auditor.config.service import build_trigger
from auditor.service.journal import RunJournal, RunRecord
from tests.service_support import REPO, corpus_dir, free_port, write_yaml

T = TypeVar("T")
CRON = "*/3 * * * * *"  # every 3 seconds
ENTRY = Path(__file__).with_name("service_entry.py")


def config(tmp: Path, port: int, **service: Any) -> Path:
    return write_yaml(
        tmp / "auditor.yaml",
        {
            "cluster_name": "ocp-prod-east",
            "source": {"type": "directory", "path": str(corpus_dir() / "cluster-export")},
            "report": {"out_dir": str(tmp / "reports"), "formats": ["json"]},
            "schedules": [{"id": "fast", "cron": CRON}],
            "service": {
                "state_dir": str(tmp / "state"),
                "misfire_grace_time_seconds": 600,
                "metrics": {"host": "127.0.0.1", "port": port},
                **service,
            },
        },
    )


@contextmanager
def process(args: list[str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with open(log, "ab") as out:
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=REPO)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def wait_for(what: str, probe: Callable[[], T | None], timeout: float = 20.0) -> T:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def http(url: str) -> tuple[int, str] | None:
    try:
        with urllib.request.urlopen(url, timeout=2) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()
    except OSError:
        return None


def journal(tmp: Path) -> list[RunRecord]:
    path = tmp / "state" / "runs.sqlite"
    return RunJournal(path).records("fast") if path.exists() else []


def slot_dirs(tmp: Path) -> list[str]:
    base = tmp / "reports" / "fast"
    return sorted(p.name for p in base.iterdir()) if base.is_dir() else []


def metric(text: str, line_start: str) -> float:
    for line in text.splitlines():
        if line.startswith(line_start + " "):
            return float(line.split()[-1])
    raise AssertionError(f"no {line_start} in metrics")


def parse(ts: str) -> datetime:
    return datetime.strptime(ts, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def test_serve_writes_reports_updates_metrics_and_stops_on_sigterm(tmp_path: Path) -> None:
    port = free_port()
    cfg = config(tmp_path, port)
    log = tmp_path / "serve.log"
    auditor = str(Path(sys.executable).with_name("auditor"))  # the installed console script
    with process([auditor, "serve", "--config", str(cfg)], log) as proc:
        base = f"http://127.0.0.1:{port}"
        wait_for("readyz", lambda: (http(base + "/readyz") or (0,))[0] == 200)
        assert http(base + "/healthz") == (200, "ok\n")
        wait_for("a report", lambda: slot_dirs(tmp_path))
        text = wait_for(
            "metrics",
            lambda: (lambda r: r and r[1] if r and 'outcome="success"' in r[1] else None)(
                http(base + "/metrics")
            ),
        )
        assert metric(text, 'auditor_runs_total{outcome="success",schedule="fast"}') >= 1
        assert metric(text, 'auditor_last_run_success{schedule="fast"}') == 1
        # The export ages with the wall clock (the service audits "now"), so the gauges are
        # compared with the report the service wrote, not with fixed counts.
        [first, *_] = slot_dirs(tmp_path)
        written = json.loads((tmp_path / "reports" / "fast" / first / "report.json").read_text())
        counts = Counter(vm["readiness"] for vm in written["vms"])
        assert sum(counts.values()) == 12 and counts["NOT_READY"] >= 8
        for readiness in ("READY", "NOT_READY", "AT_RISK", "UNKNOWN"):
            assert metric(text, f'auditor_vms{{readiness="{readiness}"}}') == counts[readiness]
        assert metric(text, 'auditor_failed_findings{severity="high"}') > 0
        assert (
            metric(text, 'auditor_last_run_timestamp_seconds{schedule="fast"}') > time.time() - 30
        )
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(15) == 0
    [first, *_] = slot_dirs(tmp_path)
    report = (tmp_path / "reports" / "fast" / first / "report.json").read_text()
    assert '"name": "ocp-prod-east"' in report
    logged = log.read_text()
    assert "job fast added" in logged and "received SIGTERM" in logged and "stopped" in logged


def test_killed_run_is_abandoned_and_missed_slots_run_once_after_restart(tmp_path: Path) -> None:
    port = free_port()
    cfg = config(tmp_path, port)
    log = tmp_path / "serve.log"
    trigger = build_trigger(CRON, "UTC")
    with process([sys.executable, str(ENTRY), str(cfg), "2.0"], log) as proc:
        wait_for("first report", lambda: slot_dirs(tmp_path))
        running = wait_for(
            "a run in progress", lambda: [r for r in journal(tmp_path) if r.outcome == "running"]
        )
        proc.kill()  # SIGKILL in the middle of a 2 s run
        proc.wait(10)
    killed = running[0].slot
    killed_at = datetime.now(UTC)
    assert (
        tmp_path / "reports" / "fast" / f".partial-{killed.replace('-', '').replace(':', '')}"
    ).exists()
    time.sleep(7)  # at least two fire times pass while the service is down
    with process([sys.executable, str(ENTRY), str(cfg), "0.2"], log) as proc:
        ready_at = wait_for(
            "readyz",
            lambda: (
                (http(f"http://127.0.0.1:{port}/readyz") or (0,))[0] == 200 and datetime.now(UTC)
            ),
        )
        after = wait_for(
            "two runs after the restart",
            lambda: (
                lambda rows: rows if len([r for r in rows if r.outcome == "success"]) >= 2 else None
            )([r for r in journal(tmp_path) if r.slot > killed]),
        )
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(15) == 0
    rows = {r.slot: r for r in journal(tmp_path)}
    assert rows[killed].outcome == "abandoned"
    assert rows[killed].detail == "process ended during the run"
    catch_up = after[0]
    missed = []
    fire = trigger.get_next_fire_time(None, parse(killed) + timedelta(seconds=1))
    while fire < parse(catch_up.slot):
        missed.append(fire)
        fire = trigger.get_next_fire_time(fire, fire + timedelta(microseconds=1))
    assert len(missed) >= 1, "the downtime should span several fire times"
    assert all(m.strftime("%Y-%m-%dT%H:%M:%SZ") not in rows for m in missed)  # coalesced
    assert parse(catch_up.slot) <= ready_at  # ran for a slot missed before the restart
    # the newest missed slot, not the first one (which is at most 3 s after the kill)
    assert parse(catch_up.slot) > killed_at + timedelta(seconds=4)
    successes = [slot for slot, r in rows.items() if r.outcome == "success"]
    assert sorted(s.replace("-", "").replace(":", "") for s in successes) == slot_dirs(tmp_path)
    assert not list((tmp_path / "reports" / "fast").glob(".partial-*"))
    logged = log.read_text()
    assert "job fast kept" in logged and "was abandoned by a previous process" in logged


@pytest.mark.parametrize(
    ("delay", "grace", "outcome"), [("1.5", 10.0, "success"), ("30", 0.3, "abandoned")]
)
def test_sigterm_finishes_or_abandons_the_current_run(
    tmp_path: Path, delay: str, grace: float, outcome: str
) -> None:
    cfg = config(tmp_path, free_port(), shutdown_grace_seconds=grace)
    with process([sys.executable, str(ENTRY), str(cfg), delay], tmp_path / "serve.log") as proc:
        wait_for(
            "a run in progress",
            lambda: [r for r in journal(tmp_path) if r.outcome == "running"],
            timeout=10,
        )
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(15) == 0
        assert time.monotonic() - started < 5
    [row] = journal(tmp_path)
    assert row.outcome == outcome
    assert len(slot_dirs(tmp_path)) == (1 if outcome == "success" else 0)
    assert not list((tmp_path / "reports" / "fast").glob(".partial-*"))
