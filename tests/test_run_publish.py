"""`auditor run --publish DIR` writes, publishes and verifies a run in one step."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from auditor.cli import main
from tests.conftest import REPO


def test_run_publishes_to_local_archive_with_trend(tmp_path: Path) -> None:
    archive = tmp_path / "archive"
    for day in ("2026-11-29", "2026-11-30"):
        out = tmp_path / f"run-{day}"
        result = CliRunner().invoke(
            main,
            [
                "run",
                "--from-dir",
                str(REPO / "examples" / "small-cluster"),
                "--at",
                f"{day}T06:00:00Z",
                "--out",
                str(out),
                "--format",
                "json",
                "--cluster-name",
                "example-cluster",
                "--publish",
                str(archive),
            ],
        )
        assert result.exit_code == 0, result.output
        assert "published run" in result.output
    manifests = sorted(archive.rglob("manifest.json"))
    assert len(manifests) == 2
    latest = json.loads((archive / "example-cluster" / "latest.json").read_text())
    assert "20261130T060000Z" in json.dumps(latest)
    trend = json.loads((tmp_path / "run-2026-11-30" / "trend.json").read_text())
    assert trend["previous"] is not None


def test_run_rejects_bad_publish_url(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main,
        [
            "run",
            "--from-dir",
            str(REPO / "examples" / "small-cluster"),
            "--out",
            str(tmp_path),
            "--format",
            "json",
            "--publish",
            "s3://",
        ],
    )
    assert result.exit_code == 2
    assert "--publish" in result.output


def test_published_trend_reaches_the_html(tmp_path: Path) -> None:
    archive = tmp_path / "archive"
    for day in ("2026-11-28", "2026-11-30"):
        result = CliRunner().invoke(
            main,
            [
                "run",
                "--from-dir",
                str(REPO / "examples" / "small-cluster"),
                "--at",
                f"{day}T06:00:00Z",
                "--out",
                str(tmp_path / day),
                "--format",
                "json,html",
                "--cluster-name",
                "example-cluster",
                "--publish",
                str(archive),
            ],
        )
        assert result.exit_code == 0, result.output
    html = (tmp_path / "2026-11-30" / "report.html").read_text()
    assert 'id="trend-table"' in html
    assert html.count("2026-11-28T06:00:00Z") >= 1
    # billing-db's backup ages past the RPO in neither run; lab-ephemeral is not ready in both:
    assert "None since the previous run." in html
