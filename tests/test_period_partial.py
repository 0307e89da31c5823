"""A period report built before its month ended (UTC) says so: partial, as_of, HTML and CSV."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from auditor.cli import main
from auditor.config import parse_settings
from auditor.service.jobs import ServiceRuntime
from auditor.service.journal import RunJournal
from auditor.service.metrics import ServiceMetrics
from tests.conftest import REPO, invoke_run

EXAMPLE = REPO / "examples" / "small-cluster"
CLUSTER = "small-east"


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("partial")
    for i, at in enumerate(["2026-11-29T06:00:00Z", "2026-11-30T06:00:00Z"]):
        result = invoke_run(
            EXAMPLE, base / f"r{i}", "--cluster-name", CLUSTER, "--publish", str(base / "a"), at=at
        )
        assert result.exit_code == 0, result.output
    return base / "a"


def _report(archive: Path, out: Path, at: str) -> tuple[dict[str, object], str]:
    args = ["report", "--period", "2026-11", "--from", str(archive), "--cluster", CLUSTER]
    result = CliRunner().invoke(main, [*args, "--out", str(out), "--at", at,
                                       "--format", "json,csv,html"])  # fmt: skip
    assert result.exit_code == 0, result.output
    return json.loads((out / "period.json").read_text()), result.output


def test_report_before_the_month_ended_is_partial(archive: Path, tmp_path: Path) -> None:
    doc, output = _report(archive, tmp_path / "early", "2026-11-30T22:00:00Z")
    assert (doc["partial"], doc["as_of"], doc["end"]) == (
        True,
        "2026-11-30T22:00:00Z",
        "2026-12-01T00:00:00Z",
    )
    assert "Warning: 2026-11 has not ended (ends 2026-12-01T00:00:00Z)" in output
    html = (tmp_path / "early" / "period.html").read_text()
    assert "Recovery readiness, 2026-11 (partial)" in html
    assert "<strong>Partial period:</strong> built at 2026-11-30T22:00:00Z" in html
    rows = list(csv.DictReader(io.StringIO((tmp_path / "early" / "period.csv").read_text())))
    assert rows and {(r["period_partial"], r["period_as_of"]) for r in rows} == {
        ("true", "2026-11-30T22:00:00Z")
    }

    done, output = _report(archive, tmp_path / "done", "2026-12-01T00:00:00Z")
    assert (done["partial"], done["as_of"]) == (False, "2026-12-01T00:00:00Z")
    assert "has not ended" not in output
    assert "Partial period" not in (tmp_path / "done" / "period.html").read_text()
    assert done["fleet"] == doc["fleet"]  # same runs; only the marking differs


def test_monthly_schedule_east_of_utc_marks_its_month_partial(
    archive: Path, tmp_path: Path
) -> None:
    """``0 7 1 * *`` in Asia/Tokyo fires at 22:00 UTC on the last day of the month."""
    settings = parse_settings(
        {
            "cluster_name": CLUSTER,
            "source": {"type": "directory", "path": str(EXAMPLE)},
            "report": {"out_dir": str(tmp_path / "reports"), "formats": ["json"]},
            "publish": {"url": str(archive), "spool_dir": str(tmp_path / "spool")},
            "schedules": [
                {
                    "id": "monthly",
                    "cron": "0 7 1 * *",
                    "timezone": "Asia/Tokyo",
                    "formats": ["json", "html"],
                    "period_report": True,
                }
            ],
            "service": {"state_dir": str(tmp_path / "state")},
        },  # fmt: skip
        path=tmp_path / "c.yaml",
    )
    slot = datetime(2026, 11, 30, 22, tzinfo=UTC)
    runtime = ServiceRuntime(
        settings,
        RunJournal(tmp_path / "state" / "runs.sqlite"),
        ServiceMetrics(),
        clock=lambda: slot.replace(second=30),
    )
    assert runtime.run("monthly") == "success"
    folder = tmp_path / "reports" / "monthly" / "20261130T220000Z" / "period-2026-11"
    doc = json.loads((folder / "period.json").read_text())
    assert (doc["period"], doc["partial"], doc["as_of"], doc["end"]) == (
        "2026-11",
        True,
        "2026-11-30T22:00:30Z",
        "2026-12-01T00:00:00Z",
    )
    assert "Partial period" in (folder / "period.html").read_text()
