"""`auditor run --publish DIR` writes, publishes and verifies a run in one step."""

from __future__ import annotations

import json
from pathlib import Path

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
    assert trend["previous"] is not None


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
