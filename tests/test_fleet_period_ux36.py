"""``auditor fleet --period`` says when the month's figures are incomplete (trial ux36).

The roll-up of a month took the month's last run and its run count, but not the period's
completeness: a cluster whose month held a run that read only part of the cluster (or a
run left out as unreadable) was ``current`` in fleet.json, while ``auditor report
--period`` over the same archive wrote ``complete: false`` in period.json. Now the
cluster is ``incomplete`` (its READY VMs count as UNKNOWN), its ``period`` carries
``complete`` and ``incomplete_reasons`` equal to period.json's, and fleet-clusters.csv
and fleet.html say so too.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from auditor.cli import main
from auditor.publish import PublishSettings, publish_run
from tests.conftest import REPO, invoke_run

EXAMPLE = REPO / "examples" / "small-cluster"
AT = "2026-11-30T12:00:00Z"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two runs of the example: on the 29th (objects created later are left out, so the
    run is incomplete) and on the 30th (complete)."""
    base = tmp_path_factory.mktemp("ux36-runs")
    out = {}
    for day in ("29", "30"):
        run_dir = base / day
        result = invoke_run(
            EXAMPLE, run_dir, "--cluster-name", "east", at=f"2026-11-{day}T06:00:00Z"
        )
        assert result.exit_code == 0, result.output
        out[day] = run_dir
    assert json.loads((out["29"] / "report.json").read_text())["run"]["complete"] is False
    assert json.loads((out["30"] / "report.json").read_text())["run"]["complete"] is True
    return out


def _archive(tmp: Path, run_dirs: list[Path]) -> Path:
    archive = tmp / "archive"
    target = PublishSettings(local_dir=archive, spool_dir=tmp / "spool")
    for run_dir in run_dirs:
        assert publish_run(run_dir, target).published
    return archive


def _fleet(archive: Path, out: Path) -> tuple[dict[str, Any], list[dict[str, str]], str]:
    result = CliRunner().invoke(
        main, ["fleet", "--from", str(archive), "--period", "2026-11", "--at", AT,
               "--out", str(out), "--format", "json,csv,html"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "fleet.json").read_text())
    rows = list(csv.DictReader(io.StringIO((out / "fleet-clusters.csv").read_text())))
    return doc, rows, (out / "fleet.html").read_text()


def _period_json(archive: Path, out: Path) -> dict[str, Any]:
    result = CliRunner().invoke(
        main, ["report", "--from", str(archive), "--cluster", "east", "--period", "2026-11",
               "--at", AT, "--out", str(out), "--format", "json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    doc: dict[str, Any] = json.loads((out / "period.json").read_text())
    return doc


def test_a_month_with_a_partial_run_is_incomplete_in_the_roll_up(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    archive = _archive(tmp_path, [runs["29"], runs["30"]])
    doc, [row], html = _fleet(archive, tmp_path / "fleet")
    period = _period_json(archive, tmp_path / "period")
    [east] = doc["clusters"]
    partial_id = json.loads((runs["29"] / "report.json").read_text())["run"]["id"]
    # the standing run (the 30th) is complete and verified: only the month makes it incomplete
    assert east["run"]["complete"] is True and east["verification"]["manifest"] == "verified"
    assert east["status"] == "incomplete"
    assert east["period"]["runs"] == 2 and east["period"]["complete"] is False
    assert period["complete"] is False
    assert east["period"]["incomplete_reasons"] == period["incomplete_reasons"]
    assert partial_id in east["period"]["incomplete_reasons"][0]
    assert any(p.startswith("the period's figures are incomplete: ") for p in east["problems"])
    # no READY counted for an incomplete cluster
    assert east["readiness"]["READY"] == 1 and east["readiness_counted"]["READY"] == 0
    assert doc["summary"]["clusters_by_status"]["incomplete"] == 1
    assert (row["period_runs"], row["period_complete"]) == ("2", "false")
    assert partial_id in row["period_incomplete_reasons"]
    assert row["period_rpo_attainment"] == str(east["period"]["rpo_attainment"])
    assert '<br><span class="note">incomplete</span>' in html
    assert "<title>Fleet recovery readiness 2026-11: 1 cluster</title>" in html  # not "1 clusters"
    # --at before the month's end: partial, as period.json says
    assert (east["period"]["partial"], east["period"]["as_of"]) == (True, AT)
    assert (period["partial"], period["as_of"]) == (True, AT)


def test_a_month_counted_whole_stays_current(runs: dict[str, Path], tmp_path: Path) -> None:
    archive = _archive(tmp_path, [runs["30"]])
    doc, [row], _ = _fleet(archive, tmp_path / "fleet")
    [east] = doc["clusters"]
    assert east["status"] == "current" and east["problems"] == []
    assert east["period"]["complete"] is True and east["period"]["incomplete_reasons"] == []
    assert east["readiness_counted"]["READY"] == 1
    assert (row["period_runs"], row["period_complete"], row["period_incomplete_reasons"]) == (
        "1",
        "true",
        "",
    )


def test_a_run_left_out_of_the_month_makes_it_incomplete(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    """A run of the month that cannot be read (a naive audit time) is left out: named, and
    the month is incomplete though every run counted is whole."""
    bad = shutil.copytree(runs["30"], tmp_path / "bad")
    report = json.loads((bad / "report.json").read_text())
    report["run"]["audit_time"] = "2026-11-30T07:00:00"  # no time zone
    report["run"]["id"] = report["run"]["id"][:-4] + "beef"
    (bad / "report.json").write_text(json.dumps(report))
    (bad / "manifest.json").unlink()  # a sealed run changed in place is refused
    archive = _archive(tmp_path, [runs["30"], bad])
    doc, [row], _ = _fleet(archive, tmp_path / "fleet")
    [east] = doc["clusters"]
    assert east["status"] == "incomplete" and east["period"]["runs"] == 1
    assert east["period"]["complete"] is False
    [reason] = east["period"]["incomplete_reasons"]
    assert reason.startswith("1 run(s) of the period left out: could not be read")
    assert row["period_complete"] == "false"


def test_latest_mode_rows_leave_the_period_columns_blank(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    archive = _archive(tmp_path, [runs["30"]])
    result = CliRunner().invoke(
        main, ["fleet", "--from", str(archive), "--at", AT, "--out", str(tmp_path / "o"),
               "--format", "json,csv"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    [row] = csv.DictReader(io.StringIO((tmp_path / "o" / "fleet-clusters.csv").read_text()))
    assert [row[k] for k in ("period_runs", "period_complete", "period_incomplete_reasons")] == [
        "",
        "",
        "",
    ]
    assert json.loads((tmp_path / "o" / "fleet.json").read_text())["clusters"][0]["period"] is None
