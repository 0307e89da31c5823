"""Trial ux32: a new user's run of the service side (serve, publish, verify, period, fleet),
and what broke it.

Each test names the input, the behaviour before the fix and after.
"""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.cron import CronTrigger
from click.testing import CliRunner

from auditor.cli import main
from auditor.config import parse_settings
from auditor.config.service import WallClockCronTrigger, after, build_trigger
from auditor.service.scheduler import NoRunAfterShutdown, build_scheduler, sync_jobs
from tests.conftest import invoke_run
from tests.service_support import write_yaml

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "small-cluster"

#: The day clocks go back in Europe/Berlin: 02:00-02:59 happens at 00:xx and at 01:xx UTC.
FALL_BACK = datetime(2027, 10, 31, tzinfo=UTC)


def _fires(cron: str, tz: str, start: datetime, end: datetime) -> list[str]:
    """Fire times of ``cron`` in ``tz`` from ``start`` to ``end``, as UTC ``HH:MM`` on dates."""
    trigger = build_trigger(cron, tz)
    out: list[str] = []
    fire = trigger.get_next_fire_time(None, start)
    while fire is not None and fire <= end:
        out.append(fire.astimezone(UTC).strftime("%m-%dT%H:%MZ"))
        fire = trigger.get_next_fire_time(fire, after(fire))
    return out


def test_current_slot_after_clocks_go_back_returns() -> None:
    """``30 2 * * *`` in Europe/Berlin, asked at 01:40 UTC on 31 October 2027 (after the second
    02:30). ``current_slot`` stepped with ``fire + timedelta(microseconds=1)``, wall-clock
    arithmetic that drops ``fold``: from the second 02:30 it stepped back to the first and
    looped for ever, so the job hung in the service's only worker thread and no schedule ran
    again (a restart hung too, in the catch-up check, for two days). Now it returns the
    slot at once: 00:30 UTC (the run once that day, see the next test)."""
    code = (
        "from datetime import UTC, datetime\n"
        "from auditor.config.service import build_trigger\n"
        "from auditor.service.jobs import current_slot\n"
        "t = build_trigger('30 2 * * *', 'Europe/Berlin')\n"
        "print(current_slot(t, datetime(2027, 10, 31, 1, 40, tzinfo=UTC)).isoformat())\n"
        "t = build_trigger('0 * * * *', 'Europe/Berlin')\n"
        "print(current_slot(t, datetime(2027, 10, 31, 1, 40, tzinfo=UTC)).isoformat())\n"
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            timeout=30,
            cwd=REPO,
            env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
        )
    except subprocess.TimeoutExpired:
        pytest.fail("current_slot did not return within 30 s (an endless walk over fire times)")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["2027-10-31T00:30:00+00:00", "2027-10-31T01:00:00+00:00"]


def test_a_fixed_time_fires_once_on_the_day_clocks_go_back() -> None:
    """``30 2 * * *`` in Europe/Berlin fired at 02:30 CEST and again at 02:30 CET (00:30 and
    01:30 UTC): two daily audits an hour apart. As Vixie cron, a fixed time now fires once;
    a schedule with ``*`` in the hour or minute field still fires in both repeated hours
    (they are two real hours), and 02:30 on the day clocks go forward fires at 03:30 CEST."""
    start, end = FALL_BACK - timedelta(days=1), FALL_BACK + timedelta(days=1, hours=23)
    assert _fires("30 2 * * *", "Europe/Berlin", start, end) == [
        "10-30T00:30Z",
        "10-31T00:30Z",
        "11-01T01:30Z",
    ]
    hourly = _fires("0 * * * *", "Europe/Berlin", FALL_BACK, FALL_BACK + timedelta(hours=3))
    assert hourly == ["10-31T00:00Z", "10-31T01:00Z", "10-31T02:00Z", "10-31T03:00Z"]
    spring = datetime(2027, 3, 28, tzinfo=UTC)
    assert _fires("30 2 * * *", "Europe/Berlin", spring, spring + timedelta(hours=23)) == [
        "03-28T01:30Z"
    ]


@pytest.mark.parametrize(
    ("cron", "words"),
    [
        ("0 6 * * mon-", "day-of-week 'mon-': 'mon-' is not a name"),
        ("0 6 * * mon-fri-sat", "'mon-fri-sat' is not a name"),
        ("0 6 * jan- *", "month 'jan-': 'jan-' is not a name, a range 'jan-mar'"),
        ("0 6 1 * mon", "restricts both day-of-month '1' and day-of-week 'mon'"),
        ("0 6 1,15 * sat,sun", "crontab runs on days matching either"),
        ("0 6 30 2 *", "never fires: no month in '2' has a day '30'"),
        ("0 0 6 31 apr,jun *", "never fires: no month in 'apr,jun' has a day '31'"),
    ],
)
def test_validate_config_refuses_a_cron_the_scheduler_would_misread(
    tmp_path: Path, cron: str, words: str
) -> None:
    """Each of these passed validate-config and ``serve`` ran another schedule than written:
    ``mon-`` ran on Mondays only, ``mon-fri-sat`` Monday to Friday, ``jan-`` in January only
    (APScheduler 3 matches a name range at the start of the part); ``0 6 1 * mon`` ran only
    on a 1st that is a Monday (crontab: the 1st and every Monday); ``0 6 30 2 *`` never ran.
    Now exit 2 naming ``schedules.0.cron``."""
    path = write_yaml(
        tmp_path / "c.yaml",
        {
            "source": {"type": "directory", "path": str(EXAMPLE)},
            "schedules": [{"id": "a", "cron": cron, "timezone": "Europe/Berlin"}],
        },
    )
    res = CliRunner().invoke(main, ["validate-config", str(path)])
    assert res.exit_code == 2, res.output
    assert "schedules.0.cron: " in res.output
    assert words in res.output
    assert "Traceback" not in res.output


@pytest.mark.parametrize(
    "cron",
    ["0 6 29 2 *", "0 6 31 * *", "0 6 */2 * mon", "0 6 1 * *", "0 6 * jan-mar,dec mon-fri"],
)
def test_validate_config_keeps_crons_read_as_written(tmp_path: Path, cron: str) -> None:
    """29 February (leap years), the 31st (seven months), ``*/2`` with a weekday (crontab
    too ANDs a field starting with ``*``), name ranges: valid."""
    path = write_yaml(
        tmp_path / "c.yaml",
        {
            "source": {"type": "directory", "path": str(EXAMPLE)},
            "schedules": [{"id": "a", "cron": cron}],
        },
    )
    res = CliRunner().invoke(main, ["validate-config", str(path)])
    assert res.exit_code == 0, res.output


class _Background(NoRunAfterShutdown, BackgroundScheduler):
    pass


def test_a_job_stored_with_a_plain_cron_trigger_gets_the_new_one_and_keeps_its_missed_run(
    tmp_path: Path,
) -> None:
    """A job store written by an earlier version holds a plain CronTrigger (same fields, same
    string). It is swapped for the trigger that fires once on the day clocks go back, and
    the stored next run time (a run missed while the service was down) is kept."""
    settings = parse_settings(
        {
            "source": {"type": "directory", "path": str(EXAMPLE)},
            "report": {"out_dir": str(tmp_path / "reports"), "formats": ["json"]},
            "schedules": [{"id": "a", "cron": "30 2 * * *", "timezone": "Europe/Berlin"}],
            "service": {"state_dir": str(tmp_path / "state")},
        },
        path=tmp_path / "c.yaml",
    )
    (tmp_path / "state").mkdir()
    sched = _Background(
        jobstores={"default": build_scheduler(settings)._jobstores["default"]}, timezone=UTC
    )
    sched.start(paused=True)
    old = CronTrigger(  # as build_trigger made it before
        minute="30",
        hour="2",
        day="*",
        month="*",
        day_of_week="*",
        second="0",
        timezone=ZoneInfo("Europe/Berlin"),
    )
    past = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=30)
    sched.add_job(
        "auditor.service.jobs:scheduled_audit",
        old,
        id="a",
        args=["a"],
        coalesce=True,
        max_instances=1,
        misfire_grace_time=21600,
        next_run_time=past,
    )
    assert sync_jobs(sched, settings) == {"a": "updated"}
    job = sched.get_job("a")
    assert type(job.trigger) is WallClockCronTrigger
    assert job.next_run_time == past
    sched.shutdown()


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("notaurl", "service.job_store_url: not a SQLAlchemy URL"),
        (
            "postgresql://auditor:s3cret-pw@db/jobs",
            "'postgresql://auditor:***@db/jobs': the database driver psycopg for 'postgresql' "
            "is not installed",
        ),
        ("foo://x", "service.job_store_url: 'foo://x': unknown database 'foo'"),
    ],
)
def test_validate_config_refuses_a_job_store_url_serve_cannot_open(
    tmp_path: Path, url: str, words: str
) -> None:
    """``service.job_store_url`` was a free string: validate-config passed these and
    ``serve`` ended in a SQLAlchemy traceback (exit 1). Now exit 2 naming the field; the
    password is not shown."""
    path = write_yaml(
        tmp_path / "c.yaml",
        {
            "source": {"type": "directory", "path": str(EXAMPLE)},
            "schedules": [{"id": "a", "cron": "0 6 * * *"}],
            "service": {"job_store_url": url},
        },
    )
    res = CliRunner().invoke(main, ["validate-config", str(path)])
    assert res.exit_code == 2, res.output
    assert words in res.output
    assert "s3cret-pw" not in res.output


def _serve(tmp_path: Path, service: dict[str, object]) -> subprocess.CompletedProcess[str]:
    config = write_yaml(
        tmp_path / "c.yaml",
        {
            "source": {"type": "directory", "path": str(EXAMPLE)},
            "report": {"out_dir": str(tmp_path / "reports")},
            "schedules": [{"id": "a", "cron": "0 6 * * *"}],
            "service": {
                "state_dir": str(tmp_path / "state"),
                "metrics": {"host": "127.0.0.1", "port": 0},
                **service,
            },
        },
    )
    return subprocess.run(
        [sys.executable, "-m", "auditor", "serve", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )


def test_serve_names_a_job_store_it_cannot_open_and_exits_2(tmp_path: Path) -> None:
    """A SQLite job store in a folder that does not exist, and a ``jobs.sqlite`` that is not
    a database: ``serve`` raised from ``scheduler.start()`` (a traceback, exit 1). Now one
    line naming the setting and the URL, exit 2 (could not start)."""
    done = _serve(tmp_path, {"job_store_url": "sqlite:////nonexistent-ux32/dir/jobs.sqlite"})
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert (
        "Error: service.job_store_url: cannot open the job store "
        "sqlite:////nonexistent-ux32/dir/jobs.sqlite: unable to open database file"
    ) in done.stderr
    (tmp_path / "state").mkdir(exist_ok=True)
    (tmp_path / "state" / "jobs.sqlite").write_bytes(b"not a database, " * 400)
    done = _serve(tmp_path, {})
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "Error: service.state_dir: cannot open the job store sqlite:///" in done.stderr
    assert "jobs.sqlite: file is not a database" in done.stderr


def test_serve_names_a_run_journal_it_cannot_open_and_exits_2(tmp_path: Path) -> None:
    """``<state_dir>/runs.sqlite`` that is not a database (a restore from a wrong backup, a
    disk error): a sqlite3 traceback, exit 1. Now one line naming the file, exit 2."""
    (tmp_path / "state").mkdir()
    journal = tmp_path / "state" / "runs.sqlite"
    journal.write_bytes(b"not a database, " * 400)
    done = _serve(tmp_path, {})
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert (
        f"Error: service.state_dir: cannot open the run journal {journal}: file is not a database"
    ) in done.stderr


def _archive(tmp_path: Path) -> tuple[Path, Path]:
    """A local archive holding one published run of the example: (archive, run folder)."""
    archive = tmp_path / "archive"
    res = invoke_run(
        EXAMPLE,
        tmp_path / "out",
        "--publish",
        str(archive),
        "--spool-dir",
        str(tmp_path / "spool"),
    )
    assert res.exit_code == 0, res.output
    (manifest,) = archive.rglob("manifest.json")
    return archive, manifest.parent


@pytest.mark.parametrize(
    ("pointer", "reason"),
    [
        (b"[]", "not a JSON object but a list"),
        (b'{"run_id": "x"}', "field 'prefix' is missing"),
        (b'{"prefix": 7}', "field 'prefix' is an integer, not a non-empty string"),
        (b"{", "not JSON (Expecting property name enclosed in double quotes at line 1 column 2)"),
    ],
)
def test_a_broken_latest_pointer_is_named_by_field(
    tmp_path: Path, pointer: bytes, reason: str
) -> None:
    """``latest.json`` edited or truncated: ``verify --latest`` said ``is not a latest pointer:
    'prefix'`` (a KeyError's text) or ``list indices must be integers or slices, not str``.
    Now the reason names the field; exit 2 as documented."""
    archive, _run = _archive(tmp_path)
    (archive / "unknown-cluster" / "latest.json").write_bytes(pointer)
    res = CliRunner().invoke(
        main, ["verify", str(archive), "--latest", "--cluster", "unknown-cluster"]
    )
    assert res.exit_code == 2, res.output
    assert f"latest.json is not a latest pointer: {reason}" in res.output


@pytest.mark.parametrize(
    ("manifest", "verify_reason", "history_reason"),
    [
        (
            b'{"artifacts": [{"path": 5}]}',
            "field 'artifacts[0].path' is an integer, not a string",
            "field 'run' is missing",
        ),
        (b"null", "not a JSON object but null", "not a JSON object but null"),
        (
            b'{"run": {"id": "RUN"}, "cluster": "unknown-cluster", "artifacts": "x"}',
            "field 'artifacts' is a string, not a list",
            "field 'run.audit_time' is missing",
        ),
    ],
)
def test_a_broken_manifest_is_named_by_field(
    tmp_path: Path, manifest: bytes, verify_reason: str, history_reason: str
) -> None:
    """A published ``manifest.json`` edited: verify said ``artifacts must be a list of
    {path, size, sha256}`` or ``'NoneType' object is not subscriptable``; history said
    ``unreadable manifest (KeyError('run'))``. Now each names the field; verify exits 2
    (manifest unreadable), history 2 (archive unreadable)."""
    archive, run = _archive(tmp_path)
    (run / "manifest.json").write_bytes(manifest.replace(b"RUN", run.name.encode()))
    res = CliRunner().invoke(main, ["verify", str(run)])
    assert res.exit_code == 2, res.output
    assert f"manifest.json is not a manifest: {verify_reason}" in res.output
    res = CliRunner().invoke(
        main, ["history", "--cluster", "unknown-cluster", "--to", str(archive)]
    )
    assert res.exit_code == 2, res.output
    assert f"manifest.json: unreadable manifest ({history_reason})" in res.output
    assert "Error" in res.output and "Traceback" not in res.output


@pytest.mark.parametrize(
    ("meta", "reason"),
    [
        (b"{", "spool.json: not JSON (Expecting property name enclosed in double quotes"),
        (b'{"run_id": "r", "audit_time": "t", "cluster": "c"}', "spool.json: field 'target'"),
        (None, "spool.json is missing"),
    ],
)
def test_a_spool_entry_with_a_broken_spool_json_is_named_not_skipped(
    tmp_path: Path, meta: bytes | None, reason: str
) -> None:
    """A run spooled because the store was unreachable, whose ``spool.json`` was then
    truncated (a full disk, a kill during a copy by hand) or lost: ``publish --retry`` said
    "spool is empty" and exited 0, the service's backlog gauge said 0, and the run was never
    delivered. Now the entry is named with the file and field, and the exit is 3 (a run not
    published)."""
    spool_dir = tmp_path / "spool"
    res = invoke_run(
        EXAMPLE,
        tmp_path / "out",
        "--publish",
        "s3://evidence/x",
        "--endpoint-url",
        "http://127.0.0.1:9",
        "--max-attempts",
        "1",
        "--spool-dir",
        str(spool_dir),
    )
    assert res.exit_code == 3, res.output
    (entry,) = [p for p in spool_dir.iterdir() if p.is_dir()]
    if meta is None:
        (entry / "spool.json").unlink()
    else:
        (entry / "spool.json").write_bytes(meta)
    res = CliRunner().invoke(main, ["publish", "--retry", "--spool-dir", str(spool_dir)])
    assert res.exit_code == 3, res.output
    assert "spool is empty" not in res.output
    assert f"run {entry.name.split('__')[0]} NOT published: {entry}/{reason}" in res.output
    assert "1 spooled run(s): 0 published, 1 still spooled, 0 quarantined" in res.output
    assert (entry / "run" / "report.json").is_file()  # left where it was


@pytest.mark.parametrize(
    ("sig", "reason"),
    [
        (b"{}", "field 'algorithm' is None, not 'Ed25519'"),
        (b'{"algorithm": "Ed25519", "signature": "AAAA"}', "field 'key_id' is missing"),
        (
            b'{"algorithm": "Ed25519", "key_id": "k", "signature": "AAAA"}',
            "field 'signature' holds 3 bytes, not an Ed25519 signature's 64",
        ),
    ],
)
def test_verify_does_not_call_a_broken_signature_file_signed(
    tmp_path: Path, sig: bytes, reason: str
) -> None:
    """An unsigned published run with a ``manifest.json.sig`` added by hand (``{}``):
    ``verify`` without ``--public-key`` printed "signed; signature not checked". A file that
    is no signature proves nothing: it now says it is malformed and why (field named); with
    ``--public-key`` the reason names the field too (it said ``'key_id'``)."""
    _archive_dir, run = _archive(tmp_path)
    (run / "manifest.json.sig").write_bytes(sig)
    res = CliRunner().invoke(main, ["verify", str(run)])
    assert "signed; signature not checked" not in res.output
    assert f"manifest.json.sig is malformed ({reason}); signature not checked" in res.output
