"""Regression tests: a run id published twice, the period report's local archive, drills."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from auditor.config import AuditSettings
from auditor.publish import PublishSettings, publish_run, service_publisher
from auditor.publish.errors import ConflictError
from auditor.publish.local import LocalStore
from auditor.publish.verify import verify_run
from tests.publish_support import CLUSTER, audit_report, make_run


def local(tmp_path: Path) -> PublishSettings:
    return PublishSettings(local_dir=tmp_path / "archive", spool_dir=tmp_path / "spool")


def _run_folder(tmp_path: Path, run_id: str) -> Path:
    (folder,) = (tmp_path / "archive" / CLUSTER).glob(f"*/*/*/{run_id}")
    return folder


def test_second_run_with_the_same_id_leaves_the_published_run_intact(tmp_path: Path) -> None:
    """Two schedules firing in one second give one run id; the second must not add objects."""
    settings = local(tmp_path)
    report = audit_report("2026-11-30T06:00:00Z")
    first = make_run(tmp_path / "daily", report)
    assert publish_run(first, settings).published
    second = make_run(tmp_path / "monthly", report)
    (second / "report.html").write_text("<html>monthly</html>\n")

    result = publish_run(second, settings)

    assert not result.published and result.quarantined is not None
    folder = _run_folder(tmp_path, result.run_id)
    assert not (folder / "report.html").exists()
    check = verify_run(LocalStore(settings.model_copy(update={"local_dir": folder})))
    assert not (check.missing or check.extra or check.changed), check.lines()


def test_service_publisher_says_quarantined(tmp_path: Path) -> None:
    report = audit_report("2026-11-30T06:00:00Z")
    publish = {"url": str(tmp_path / "archive"), "spool_dir": str(tmp_path / "spool")}
    settings = AuditSettings.model_validate({"cluster_name": CLUSTER, "publish": publish})
    service_publisher(settings, report, make_run(tmp_path / "a", report, trend={"t": 1}))
    other = make_run(tmp_path / "b", report, trend={"t": 1})
    (other / "extra.csv").write_text("x\n")
    with pytest.raises(ConflictError, match="quarantined at"):
        service_publisher(settings, report, other)


def _archive(tmp_path: Path, *ats: str) -> tuple[Path, list[str]]:
    settings = local(tmp_path)
    ids = []
    for at in ats:
        result = publish_run(make_run(tmp_path / at.replace(":", ""), audit_report(at)), settings)
        assert result.published
        ids.append(result.run_id)
    return tmp_path / "archive", ids


def test_period_from_a_local_archive_skips_changed_and_unsealed_runs(tmp_path: Path) -> None:
    from auditor.period import Period, read_period

    root, (good, tampered, _) = _archive(
        tmp_path, "2026-11-01T06:00:00Z", "2026-11-15T06:00:00Z", "2026-11-20T06:00:00Z"
    )
    path = _run_folder(tmp_path, tampered) / "report.json"
    doc: dict[str, Any] = json.loads(path.read_text())
    for vm in doc["vms"]:
        vm["readiness"], vm["backup"]["within_rpo"] = "READY", True
    path.write_text(json.dumps(doc))
    half = _run_folder(tmp_path, _) / "manifest.json"  # a publish killed before its manifest
    half.unlink()

    archive = read_period(str(root), CLUSTER, Period(2026, 11))

    assert [r["run"]["id"] for r in archive.reports] == [good]
    assert any(tampered in p and "differs from manifest" in p for p in archive.problems)


def test_restore_drills_count_only_restores_completed_in_the_period(tmp_path: Path) -> None:
    """The corpus's drill completed on 2026-11-28: November counts it, December does not."""
    from auditor.period import Period, compute_period, read_period

    root, _ = _archive(tmp_path, "2026-11-30T06:00:00Z", "2026-12-01T06:00:00Z")
    nov = compute_period(read_period(str(root), CLUSTER, Period(2026, 11)), Period(2026, 11), "c")
    dec = compute_period(read_period(str(root), CLUSTER, Period(2026, 12)), Period(2026, 12), "c")

    assert nov["fleet"]["restore_drills"] == 1
    assert dec["fleet"]["restore_drills"] == 0
    assert datetime(2026, 11, 28, tzinfo=UTC) < Period(2026, 12).start


def test_fleet_refuses_a_pointer_or_run_from_another_cluster(tmp_path: Path) -> None:
    """A cluster folder with only a latest.json into another folder, or a copied run, is no
    evidence of that cluster: never counted as current and verified."""
    import shutil

    from auditor.fleet import read_fleet
    from auditor.period import Period, read_period

    root, (run_id,) = _archive(tmp_path, "2026-11-30T06:00:00Z")
    (root / "west").mkdir()
    shutil.copy(root / CLUSTER / "latest.json", root / "west" / "latest.json")
    shutil.copytree(_run_folder(tmp_path, run_id), root / "north" / "2026/11/30" / run_id)
    clock = lambda: datetime(2026, 11, 30, 12, tzinfo=UTC)  # noqa: E731

    fleet = {c.cluster: c for c in read_fleet(str(root), clock=clock).clusters}

    assert fleet[CLUSTER].report is not None
    assert fleet["west"].report is None and "outside west/" in " ".join(fleet["west"].problems)
    assert fleet["north"].report is None
    assert "names cluster" in " ".join(fleet["north"].problems)
    north = read_period(str(root), "north", Period(2026, 11))
    assert north.reports == [] and "names cluster" in " ".join(north.problems)


@pytest.mark.parametrize("text", ["0000-01", "9999-12"])
def test_period_outside_the_calendar_is_a_usage_error(text: str, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from auditor.cli import main

    (tmp_path / "a").mkdir()
    for command in (["report", "--cluster", "c"], ["fleet"]):
        result = CliRunner().invoke(
            main, [*command, "--period", text, "--from", str(tmp_path / "a"), "--out", "o"]
        )
        assert result.exit_code == 2, result.output
        assert "is not a month" in result.output


def test_two_schedules_in_one_second_publish_two_runs(tmp_path: Path) -> None:
    """A daily and a monthly schedule firing together: two run ids, both delivered."""
    from auditor.config import parse_settings
    from auditor.service.jobs import ServiceRuntime
    from auditor.service.journal import RunJournal
    from auditor.service.metrics import ServiceMetrics
    from tests.conftest import REPO

    archive = tmp_path / "archive"
    archive.write_text("an outage: a file where the archive directory should be")
    raw = {
        "cluster_name": "example-cluster",
        "source": {"type": "directory", "path": str(REPO / "examples" / "small-cluster")},
        "report": {"out_dir": str(tmp_path / "reports"), "formats": ["json"]},
        "publish": {"local_dir": str(archive), "spool_dir": str(tmp_path / "spool")},
        "schedules": [
            {"id": "daily", "cron": "0 6 * * *", "publish": True},
            {"id": "monthly", "cron": "0 6 1 * *", "publish": True, "formats": ["json", "csv"]},
        ],
        "service": {"state_dir": str(tmp_path / "state")},
    }
    runtime = ServiceRuntime(
        parse_settings(raw, path=tmp_path / "config.yaml"),
        RunJournal(tmp_path / "state" / "runs.sqlite"),
        ServiceMetrics(),
        clock=lambda: datetime(2026, 12, 1, 6, 0, 0, 400000, tzinfo=UTC),
    )
    assert runtime.run("daily") == runtime.run("monthly") == "success"
    archive.unlink()
    runtime.drain_spool()

    published = sorted(p.name for p in archive.glob("example-cluster/2026/12/01/*"))
    assert len(published) == 2, published
    assert [r.publish for r in runtime.journal.records()] == ["published", "published"]


def test_period_csv_neutralises_formula_cells() -> None:
    from auditor.period.render import period_csv

    vm = {
        "namespace": "ns", "name": "vm", "owner": '=HYPERLINK("http://evil","x")', "audits": 1,
        "rpo": {"attained": 0, "breached": 1, "unknown": 0, "attainment": 0.0},
        "longest_breach": {"audits": 1, "hours": 0.0}, "restore_drills": [],
        "waived_checks": [], "readiness_last": "NOT_READY",
    }  # fmt: skip
    row = period_csv({"vms": [vm]}).splitlines()[1]
    assert row.startswith("ns,vm,\"'=HYPERLINK(")


def test_publish_refuses_a_run_changed_after_its_seal(tmp_path: Path) -> None:
    """`publish --from-run` must not re-seal (and sign) a report.json edited after `run`."""
    from auditor.publish import RunDirError
    from auditor.publish.manifest import seal_run

    run_dir = make_run(tmp_path / "run", audit_report("2026-11-30T06:00:00Z"))
    seal_run(run_dir)  # what `auditor run` does
    (run_dir / "trend.json").write_text("{}\n")  # an added file is fine
    doc = json.loads((run_dir / "report.json").read_text())
    doc["vms"][0]["readiness"] = "READY"
    (run_dir / "report.json").write_text(json.dumps(doc))

    with pytest.raises(RunDirError, match="report.json changed or missing"):
        publish_run(run_dir, local(tmp_path))
    assert not (tmp_path / "archive").exists()


def test_serve_with_its_metrics_port_taken_exits_2(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import socket

    from auditor.config import parse_settings
    from auditor.service import serve

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        raw = {
            "source": {"type": "directory", "path": str(tmp_path)},
            "schedules": [{"id": "daily", "cron": "0 6 * * *"}],
            "service": {
                "state_dir": str(tmp_path / "state"),
                "metrics": {"host": "127.0.0.1", "port": taken.getsockname()[1]},
            },
        }
        settings = parse_settings(raw, path=tmp_path / "config.yaml")
        assert serve(settings) == 2
    assert "cannot serve metrics on 127.0.0.1" in caplog.text


def test_publish_without_retention_to_a_lock_bucket_is_refused(tmp_path: Path) -> None:
    """A bucket with Object Lock and no default retention: without object_lock_mode every run
    would be stored unretained and reported unverified by verify/fleet, so publish refuses."""
    from tests.publish_support import WeedServer

    weed = WeedServer(tmp_path / "weed")
    weed.start()
    try:
        weed.client().create_bucket(Bucket="nu20-locked", ObjectLockEnabledForBucket=True)
        weed.client().create_bucket(Bucket="nu20-plain")
        run_dir = make_run(tmp_path / "run", audit_report("2026-11-30T06:00:00Z"))
        errors = {}
        for bucket, ok in (("nu20-locked", False), ("nu20-plain", True)):
            settings = weed.settings(bucket, tmp_path / bucket)
            result = publish_run(run_dir, settings, store=weed.store(settings))
            assert result.published is ok, result.error
            errors[bucket] = result.error or ""
        assert "no default retention" in errors["nu20-locked"]
    finally:
        weed.stop(crash=True)


def test_a_run_dated_in_the_future_never_pins_latest_or_passes_for_current(
    tmp_path: Path,
) -> None:
    """latest.json only moves forward, so a run published with a future ``--at`` (or from a
    node whose clock is ahead) pinned it for months and the fleet called the cluster current
    at an age of -4,344 h (new-user trial nu20). Such a run is archived but never becomes
    latest, a later real run moves latest past an old future pointer, and the fleet marks a
    future-dated run stale, naming why."""
    from auditor.fleet import build_fleet, read_fleet
    from auditor.publish.manifest import build_manifest
    from auditor.publish.publisher import _update_latest

    settings = local(tmp_path)
    now = datetime.now(UTC)
    past, future = now.replace(microsecond=0), now.replace(year=now.year + 1, microsecond=0)
    stamp = "%Y-%m-%dT%H:%M:%SZ"
    runs = {}
    for name, at in (("past", past), ("future", future)):
        runs[name] = make_run(tmp_path / name, audit_report(at.strftime(stamp)))
        assert publish_run(runs[name], settings).published
    latest = json.loads((tmp_path / "archive" / CLUSTER / "latest.json").read_text())
    assert latest["audit_time"] == past.strftime(stamp)

    # an archive whose latest.json already points at a future run: the next real run moves it
    store = LocalStore(settings)
    assert _update_latest(store, build_manifest(runs["future"]), now=future)
    later = make_run(tmp_path / "later", audit_report((past.replace(second=0)).strftime(stamp)))
    assert _update_latest(store, build_manifest(later), now=now)
    latest = json.loads((tmp_path / "archive" / CLUSTER / "latest.json").read_text())
    assert latest["audit_time"] == past.replace(second=0).strftime(stamp)

    # the fleet, as of now, reading an archive whose latest is the future run
    assert _update_latest(store, build_manifest(runs["future"]), now=future)
    fleet = build_fleet(read_fleet(str(tmp_path / "archive")), at=now)
    (cluster,) = fleet.clusters
    assert cluster.status == "stale"
    assert any("after this machine's clock" in p for p in cluster.problems), cluster.problems


def test_the_spool_never_drops_a_run_for_another_of_the_same_id(tmp_path: Path) -> None:
    """Two runs of one id spooled during an outage (same instant and input, other formats):
    the second replaced the first with no trace, and quarantining a run deleted an earlier
    quarantined entry of the same name (new-user trial nu20). Now the earlier run is moved
    to quarantine with its reason, and every quarantined entry is kept."""
    from auditor.publish import spool
    from auditor.publish.manifest import seal_run

    settings = local(tmp_path)
    report = audit_report("2026-11-30T06:00:00Z")
    first = make_run(tmp_path / "daily", report)
    second = make_run(tmp_path / "monthly", report)
    (second / "report.html").write_text("<html>monthly</html>\n")
    spool_dir = tmp_path / "spool"
    one = spool.spool_run(spool_dir, first, seal_run(first), settings)
    two = spool.spool_run(spool_dir, second, seal_run(second), settings)
    assert one == two and (two / "run" / "report.html").is_file()
    (kept,) = spool.quarantined(spool_dir)
    assert not (kept / "run" / "report.html").exists()
    assert (kept / "run" / "report.json").read_bytes() == (first / "report.json").read_bytes()
    assert "replaced in the spool by another run" in (kept / "error.txt").read_text()
    # the same run spooled again is kept as it is (idempotent), nothing quarantined
    assert spool.spool_run(spool_dir, second, seal_run(second), settings) == two
    assert len(spool.quarantined(spool_dir)) == 1
    # quarantining the second one keeps the first quarantined entry beside it
    (entry,) = spool.pending(spool_dir)
    spool.quarantine(entry, "conflict")
    names = [p.name for p in spool.quarantined(spool_dir)]
    assert names == [kept.name, f"{kept.name}.2"], names
