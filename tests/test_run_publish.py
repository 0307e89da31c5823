"""`auditor run --publish DIR` writes, publishes and verifies a run in one step."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

from auditor.config import parse_settings
from auditor.service.jobs import ServiceRuntime
from auditor.service.journal import RunJournal
from auditor.service.metrics import ServiceMetrics
from tests.conftest import REPO, invoke_run

EXAMPLE = REPO / "examples" / "small-cluster"


def _publish_day(tmp_path: Path, archive: Path, day: str, formats: str = "json") -> Path:
    out = tmp_path / f"run-{day}"
    result = invoke_run(
        EXAMPLE, out, "--format", formats, "--cluster-name", "example-cluster",
        "--publish", str(archive), at=f"{day}T06:00:00Z",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "published run" in result.output
    return out


def test_run_publishes_to_local_archive_with_trend(tmp_path: Path) -> None:
    archive = tmp_path / "archive"
    for day in ("2026-11-29", "2026-11-30"):
        _publish_day(tmp_path, archive, day)
    manifests = sorted(archive.rglob("manifest.json"))
    assert len(manifests) == 2
    latest = json.loads((archive / "example-cluster" / "latest.json").read_text())
    assert "20261130T060000Z" in json.dumps(latest)
    trend = json.loads((tmp_path / "run-2026-11-30" / "trend.json").read_text())
    assert trend["previous"]["audit_time"] == "2026-11-29T06:00:00Z"
    assert [r["audit_time"][:10] for r in trend["series"]] == ["2026-11-29", "2026-11-30"]


def test_run_rejects_bad_publish_url(tmp_path: Path) -> None:
    result = invoke_run(EXAMPLE, tmp_path, "--publish", "s3://")
    assert result.exit_code == 2
    assert "--publish" in result.output


def test_published_trend_reaches_the_html(tmp_path: Path) -> None:
    archive = tmp_path / "archive"
    _publish_day(tmp_path, archive, "2026-11-28", "json,html")
    out = _publish_day(tmp_path, archive, "2026-11-30", "json,html")
    html = (out / "report.html").read_text()
    assert 'id="trend-table"' in html
    assert html.count("2026-11-28T06:00:00Z") >= 1
    # the same estate two days apart: nobody became not ready, no gap was fixed
    assert "None since the previous run." in html


def test_scheduled_run_gets_the_same_trend_section_as_run(tmp_path: Path) -> None:
    """Issue 13 item 9: the service's jobs go through pipeline.run_audit like `auditor run`,
    so a scheduled report carries the trend (trend.json and the HTML section)."""
    archive = tmp_path / "archive"
    _publish_day(tmp_path, archive, "2026-11-28", "json,html")
    shutil.copytree(archive, tmp_path / "archive-copy")
    raw = {
        "cluster_name": "example-cluster",
        "source": {"type": "directory", "path": str(EXAMPLE)},
        "report": {"out_dir": str(tmp_path / "reports"), "formats": ["json", "html"]},
        "publish": {"local_dir": str(archive), "spool_dir": str(tmp_path / "spool")},
        "schedules": [{"id": "daily", "cron": "0 6 * * *", "publish": True}],
        "service": {"state_dir": str(tmp_path / "state")},
    }
    settings = parse_settings(raw, path=tmp_path / "config.yaml")
    runtime = ServiceRuntime(
        settings,
        RunJournal(tmp_path / "state" / "runs.sqlite"),
        ServiceMetrics(),
        clock=lambda: datetime(2026, 11, 30, 6, 0, 7, 250000, tzinfo=UTC),
    )
    assert runtime.run("daily") == "success"
    slot = tmp_path / "reports" / "daily" / "20261130T060000Z"
    trend = json.loads((slot / "trend.json").read_text())
    assert trend["previous"]["audit_time"] == "2026-11-28T06:00:00Z"
    assert trend["current"]["audit_time"] == "2026-11-30T06:00:07Z"
    html = (slot / "report.html").read_text()
    assert 'id="trend-table"' in html and "2026-11-28T06:00:00Z" in html
    # `auditor run` against the archive as it was before gives the very same trend
    by_cli = invoke_run(
        EXAMPLE, tmp_path / "cli", "--format", "json,html", "--cluster-name", "example-cluster",
        "--publish", str(tmp_path / "archive-copy"), at="2026-11-30T06:00:07Z",
    )  # fmt: skip
    assert by_cli.exit_code == 0, by_cli.output
    assert (tmp_path / "cli" / "trend.json").read_bytes() == (slot / "trend.json").read_bytes()
    [rec] = runtime.journal.records("daily")
    assert rec.publish == "published"
