"""Retention of serve's run folders: report.keep_runs / keep_days, never the newest or unpublished."""

from __future__ import annotations

import logging
from datetime import timedelta
from pathlib import Path

import pytest

from auditor.config import parse_settings
from auditor.config.settings import ConfigError
from auditor.service.jobs import slot_name
from auditor.service.journal import RunJournal
from auditor.service.retention import apply_retention, expired_runs
from tests.test_service_units import T0, _fake_runner, _runtime, make_settings

DAY = timedelta(days=1)


def _runs(base: Path, journal: RunJournal, days: int, publish: dict[int, str]) -> list[str]:
    """Daily run folders for the ``days`` days before T0 (oldest first), journaled."""
    names = []
    for ago in range(days, 0, -1):
        slot = T0.replace(hour=6, minute=0, second=0, microsecond=0) - (ago - 1) * DAY
        (base / slot_name(slot)).mkdir(parents=True)
        (base / slot_name(slot) / "report.json").write_text("{}", encoding="utf-8")
        journal.begin("daily", slot, slot)
        journal.finish("daily", slot, slot, "success")
        if ago in publish:
            journal.set_publish("daily", slot, publish[ago], f"run-{ago}")
        names.append(slot_name(slot))
    return names


def test_keep_runs_removes_the_oldest_but_never_an_unpublished_run(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    base = tmp_path / "reports" / "daily"
    journal = RunJournal(tmp_path / "runs.sqlite")
    names = _runs(base, journal, 6, {6: "published", 5: "spooled: endpoint down", 4: "published"})
    (base / ".partial-20261130T070000Z").mkdir()  # never a run folder of retention's
    with caplog.at_level(logging.INFO, logger="auditor.service.retention"):
        removed = apply_retention(
            base, journal, "daily", keep_runs=2, keep_days=None, now=T0, spooled_ids={"run-4"}
        )
    assert [(r.path.name, r.reason) for r in removed] == [
        (names[0], "beyond keep_runs=2"),
        (names[3], "beyond keep_runs=2"),
    ]
    # names[1] is spooled, names[2] (run-4) still waits in the spool: both kept with the newest two
    assert sorted(p.name for p in base.iterdir()) == [
        ".partial-20261130T070000Z",
        names[1],
        names[2],
        names[4],
        names[5],
    ]
    assert f"retention: removed run folder {base / names[0]} (beyond keep_runs=2)" in caplog.text


def test_keep_days_and_the_newest_run_is_always_kept(tmp_path: Path) -> None:
    base = tmp_path / "d"
    journal = RunJournal(tmp_path / "runs.sqlite")
    names = _runs(base, journal, 5, {})
    # slots 4..0 days before T0's 06:00 slot; keep_days=2.5 removes the ones 3 and 4 days old
    removals = expired_runs(base, keep_runs=None, keep_days=2.5, now=T0)
    assert [(r.path.name, r.reason) for r in removals] == [
        (names[0], "older than keep_days=2.5"),
        (names[1], "older than keep_days=2.5"),
    ]
    far = T0 + 400 * DAY  # every run is old, the newest stays
    assert [r.path.name for r in expired_runs(base, keep_runs=1, keep_days=1, now=far)] == names[
        :-1
    ]
    assert expired_runs(base, keep_runs=None, keep_days=None, now=far) == []


def test_serve_applies_retention_after_each_run(tmp_path: Path) -> None:
    s = make_settings(tmp_path, [{"id": "daily", "cron": "0 6 * * *"}])
    s = s.model_copy(update={"report": s.report.model_copy(update={"keep_runs": 2})})
    now = [T0 - 3 * DAY]
    rt = _runtime(tmp_path, s, runner=_fake_runner)
    rt.clock = lambda: now[0]
    for _ in range(4):
        assert rt.run("daily") == "success"
        now[0] += DAY
    base = tmp_path / "reports" / "daily"
    assert sorted(p.name for p in base.iterdir()) == ["20261129T060000Z", "20261130T060000Z"]
    assert [r.outcome for r in rt.journal.records("daily")] == ["success"] * 4


def test_retention_settings_are_validated_by_path(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        parse_settings({"report": {"keep_runs": 0, "keep_days": -1}}, path=tmp_path / "c.yaml")
    text = str(err.value)
    assert "report.keep_runs" in text and "report.keep_days" in text
    ok = parse_settings({"report": {"keep_runs": 3, "keep_days": 1.5}}, path=tmp_path / "c.yaml")
    assert (ok.report.keep_runs, ok.report.keep_days) == (3, 1.5)
