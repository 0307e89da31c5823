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


def _run_id(out: Path) -> str:
    run = json.loads((out / "report.json").read_text())["run"]
    return f"{run['id']} {run['complete']}"


def test_a_run_that_could_not_read_a_file_gets_its_own_run_id(tmp_path: Path) -> None:
    """ux19: a complete audit and one of the same export and instant with a malformed file
    beside it held the same objects, so they got the same run id, and publishing the
    second was quarantined as a conflicting duplicate. The id covers what could not be
    read too; identical runs keep one id and re-publish idempotently."""
    export, archive, spool = tmp_path / "export", tmp_path / "archive", tmp_path / "spool"
    shutil.copytree(EXAMPLE, export)
    opts = ("--cluster-name", "example-cluster", "--publish", str(archive))
    opts += ("--spool-dir", str(spool))

    def run(name: str) -> tuple[int, str, str]:
        result = invoke_run(export, tmp_path / name, *opts)
        return result.exit_code, _run_id(tmp_path / name), result.output

    code, whole, output = run("whole")
    assert code == 0 and whole.endswith(" True") and "published run" in output
    assert run("whole-again")[:2] == (0, whole)  # the same id, published again idempotently
    (export / "extra.yaml").write_text("apiVersion: v1\nkind: List\nitems: [\n  - {bad\n")
    code, partial, output = run("partial")
    assert code == 4 and partial.endswith(" False")  # 4: the VM list is incomplete
    assert partial.split()[0] != whole.split()[0]
    assert partial[:17] == whole[:17] == "20261130T060000Z-"
    assert "published run " + partial.split()[0] in output and "quarantine" not in output
    assert run("partial-again")[:2] == (4, partial)
    assert sorted(p.parent.name for p in archive.rglob("manifest.json")) == sorted(
        [whole.split()[0], partial.split()[0]]
    )
    assert not (spool / "quarantine").exists()


def test_an_owner_run_or_another_rpo_gets_its_own_run_id(tmp_path: Path) -> None:
    """ux19: an `--owner` run of the same export and instant held the same objects, so it got
    the full run's id and its publish was quarantined; so did a run with another RPO. The id
    covers the settings that shape the verdicts and the owner filter too."""
    archive, spool = tmp_path / "archive", tmp_path / "spool"
    opts = ("--cluster-name", "example-cluster", "--publish", str(archive))
    opts += ("--spool-dir", str(spool))
    config = tmp_path / "rpo.yaml"
    config.write_text("thresholds:\n  rpo_hours: 4.5\n")
    ids = []
    for name, extra in (
        ("full", ()),
        ("owner", ("--owner", "team-billing")),
        ("rpo", ("--config", str(config))),
        ("full-again", ()),
    ):
        result = invoke_run(EXAMPLE, tmp_path / name, *opts, *extra)
        assert result.exit_code == 0, result.output
        ids.append(_run_id(tmp_path / name).split()[0])
        assert f"published run {ids[-1]}" in result.output
    assert len(set(ids)) == 3 and ids[0] == ids[3]
    owner = json.loads((tmp_path / "owner" / "report.json").read_text())
    assert owner["run"]["owner_filter"] == "team-billing" and owner["summary"]["vms"] == 2
    rpo = json.loads((tmp_path / "rpo" / "report.json").read_text())
    assert (
        rpo["summary"]["readiness"]
        != json.loads((tmp_path / "full" / "report.json").read_text())["summary"]["readiness"]
    )
    assert not (spool / "quarantine").exists()


def test_runs_of_one_instant_with_other_formats_are_archived_side_by_side(
    tmp_path: Path,
) -> None:
    """ux27: `run --at T --publish` with `--format json`, then with `--format json,csv`, gave
    one run id; the second run's manifest (two more artifacts) conflicted and it was
    quarantined. A run folder is sealed whole, so the id covers the formats written: each
    set is its own run in the archive, and the same set (any order or case) keeps its id."""
    archive, spool = tmp_path / "archive", tmp_path / "spool"
    opts = ("--cluster-name", "example-cluster", "--publish", str(archive))
    opts += ("--spool-dir", str(spool))
    ids = []
    for name, formats in (("json", "json"), ("csv", "json,csv"), ("csv-again", "CSV,Json")):
        result = invoke_run(EXAMPLE, tmp_path / name, *opts, "--format", formats)
        assert result.exit_code == 0, result.output
        ids.append(_run_id(tmp_path / name).split()[0])
        assert f"published run {ids[-1]}" in result.output
    assert ids[0] != ids[1] == ids[2]
    assert ids[0][:17] == ids[1][:17] == "20261130T060000Z-"
    folders = {p.parent.name: p.parent for p in archive.rglob("manifest.json")}
    assert sorted(folders) == sorted(ids[:2])
    assert not (folders[ids[0]] / "findings.csv").exists()
    assert (folders[ids[1]] / "findings.csv").is_file()
    assert not (spool / "quarantine").exists()


def test_a_quarantined_run_is_not_said_to_be_kept_in_the_spool(tmp_path: Path) -> None:
    """ux27: a `run --publish` whose run id the archive already holds with other bytes was
    moved to quarantine (never retried), but `run` said "run kept in the spool", sending the
    operator to `publish --retry`, which then had nothing to deliver."""
    archive, spool = tmp_path / "archive", tmp_path / "spool"
    opts = ("--cluster-name", "example-cluster", "--publish", str(archive))
    opts += ("--spool-dir", str(spool))
    first = invoke_run(EXAMPLE, tmp_path / "one", *opts)
    assert first.exit_code == 0, first.output
    (stored,) = archive.rglob("manifest.json")
    stored.write_bytes(stored.read_bytes().replace(b'"cluster"', b'"cluster" ', 1))
    again = invoke_run(EXAMPLE, tmp_path / "two", *opts)
    assert again.exit_code == 3
    (moved,) = (spool / "quarantine").iterdir()
    assert f"publish: not delivered, run QUARANTINED in {moved} (not retried;" in again.output
    assert "kept in the spool" not in again.output
