"""``serve``'s monthly schedule adds last month's period report to its run and publishes it."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from auditor.cli import main
from auditor.config import AuditSettings, ConfigError, parse_settings
from auditor.period import Period
from auditor.period.job import previous_period
from auditor.service.jobs import ServiceRuntime
from auditor.service.journal import RunJournal
from auditor.service.metrics import ServiceMetrics
from tests.conftest import REPO, invoke_run

EXAMPLE = REPO / "examples" / "small-cluster"
CLUSTER = "small-east"
NOVEMBER = [f"2026-11-{d:02d}T06:00:00Z" for d in (27, 28, 29, 30)]
OCTOBER = ["2026-10-31T06:00:00Z"]
SLOT = datetime(2026, 12, 1, 6, 0, 0, tzinfo=UTC)  # 07:00 in Europe/Berlin


def _settings(tmp: Path, archive: Path, **publish: object) -> AuditSettings:
    raw = {
        "cluster_name": CLUSTER,
        "source": {"type": "directory", "path": str(EXAMPLE)},
        "report": {"out_dir": str(tmp / "reports"), "formats": ["json"]},
        "publish": {"url": str(archive), "spool_dir": str(tmp / "spool"), **publish},
        "schedules": [
            {
                "id": "monthly-report",
                "cron": "0 7 1 * *",
                "timezone": "Europe/Berlin",
                "formats": ["json", "csv", "html"],
                "publish": True,
                "period_report": True,
            },
        ],  # fmt: skip
        "service": {"state_dir": str(tmp / "state")},
    }
    return parse_settings(raw, path=tmp / "c.yaml")


def test_monthly_schedule_writes_and_publishes_the_period_report(tmp_path: Path) -> None:
    archive = tmp_path / "archive"
    for i, at in enumerate(OCTOBER + NOVEMBER):
        result = invoke_run(
            EXAMPLE, tmp_path / f"r{i}", "--cluster-name", CLUSTER, "--publish", str(archive), at=at
        )
        assert result.exit_code == 0, result.output
    settings = _settings(tmp_path, archive)
    runtime = ServiceRuntime(
        settings,
        RunJournal(tmp_path / "state" / "runs.sqlite"),
        ServiceMetrics(),
        clock=lambda: SLOT.replace(second=30),
    )
    assert runtime.run("monthly-report") == "success"
    final = tmp_path / "reports" / "monthly-report" / "20261201T060000Z"
    folder = final / "period-2026-11"
    assert sorted(p.name for p in folder.iterdir()) == ["period.csv", "period.html", "period.json"]
    doc = json.loads((folder / "period.json").read_text())
    runs = [json.loads((tmp_path / f"r{i}" / "report.json").read_text()) for i in range(5)]
    november, october = runs[1:], runs[:1]
    assert doc["period"] == "2026-11" and doc["cluster"] == CLUSTER
    assert doc["runs"] == [r["run"]["id"] for r in november]
    attained = sum(vm["backup"]["within_rpo"] is True for r in november for vm in r["vms"])
    unknown = sum(vm["backup"]["within_rpo"] is None for r in november for vm in r["vms"])
    assert (doc["fleet"]["rpo_attained"], doc["fleet"]["rpo_unknown"]) == (attained, unknown)
    assert doc["fleet"]["vm_audits"] == 4 * 5 and attained > 0
    assert doc["previous"]["runs"] == 1
    assert doc["previous"]["rpo_attained"] == sum(
        vm["backup"]["within_rpo"] is True for r in october for vm in r["vms"]
    )
    # sealed into the run's manifest and published with the run, next to November's runs
    manifest = json.loads((final / "manifest.json").read_text())
    paths = {a["path"] for a in manifest["artifacts"]}
    assert {"period-2026-11/period.json", "period-2026-11/period.html"} <= paths
    published = archive / CLUSTER / "2026" / "12" / "01" / manifest["run"]["id"]
    assert (published / "period-2026-11" / "period.json").read_bytes() == (
        folder / "period.json"
    ).read_bytes()
    verify = CliRunner().invoke(main, ["verify", str(published)])
    assert verify.exit_code == 0, verify.output


def test_period_report_needs_a_publish_target_and_reports_on_the_local_previous_month(
    tmp_path: Path,
) -> None:
    with pytest.raises(ConfigError, match="schedules.0.period_report"):
        parse_settings(
            {"schedules": [{"id": "m", "cron": "0 7 1 * *", "period_report": True}]},
            path=tmp_path / "c.yaml",
        )
    late = datetime(2026, 11, 30, 23, 30, tzinfo=UTC)  # 00:30 on 1 December in Berlin
    assert previous_period(late, "Europe/Berlin") == Period(2026, 11)
    assert previous_period(late, "UTC") == Period(2026, 10)
    assert previous_period(datetime(2026, 1, 1, 7, tzinfo=UTC)) == Period(2025, 12)
