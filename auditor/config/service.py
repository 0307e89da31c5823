"""Settings models for where data comes from and how the service runs (sections
``source``, ``report``, ``schedules`` and ``service`` of the config file).

Re-exported from :mod:`auditor.config`.
"""

from __future__ import annotations

import re
import zoneinfo
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path
from typing import Annotated, Literal, get_args

from apscheduler.triggers.cron import CronTrigger
from pydantic import AfterValidator, Field, ValidationInfo, field_validator

from auditor.config.keys import read_public_key
from auditor.config.rules import MAX_DAYS, Strict
from auditor.yamlstrict import DEFAULT_MAX_FILE_BYTES

__all__ = [
    "DirectorySourceSettings",
    "ClusterSourceSettings",
    "SourceSettings",
    "ReportSettings",
    "Schedule",
    "MetricsSettings",
    "ServiceSettings",
    "REPORT_FORMATS",
    "build_trigger",
    "check_job_store_url",
    "WallClockCronTrigger",
    "after",
]

ReportFormat = Literal["json", "html", "pdf", "csv", "cards"]
#: Artifact formats ``report.formats`` may name, in the order a run writes them.
REPORT_FORMATS: tuple[str, ...] = get_args(ReportFormat)

_CRON_FIELDS = ("minute", "hour", "day", "month", "day_of_week")


def _lower_formats(value: object) -> object:
    """Format names in any case, as ``--format`` takes them (``JSON`` is ``json``)."""
    if isinstance(value, (list, tuple)):
        return tuple(v.strip().lower() if isinstance(v, str) else v for v in value)
    return value


def _check_public_key(path: Path) -> Path:
    """Refuse at load a public key file a period report could not use: unreadable, not PEM,
    or not Ed25519 (the message names the file; the field path names the entry)."""
    read_public_key(path)
    return path


class DirectorySourceSettings(Strict):
    """Audit an exported directory of YAML/JSON (``oc get ... -o yaml`` files).

    ``max_file_bytes``: a file larger than this is refused (a collection problem).
    """

    type: Literal["directory"]
    path: Path
    max_file_bytes: int = Field(default=DEFAULT_MAX_FILE_BYTES, gt=0)


class ClusterSourceSettings(Strict):
    """Audit a live cluster: in-cluster service account, ``$KUBECONFIG`` or ``~/.kube/config``
    when ``kubeconfig`` is unset (also what a config without ``source`` audits).

    ``namespaces``: limit namespaced reads to these (empty: all namespaces).
    ``velero_namespaces``: with ``namespaces``, where Velero/OADP objects live
    (empty: found from DataProtectionApplications/BackupStorageLocations).
    """

    type: Literal["cluster"]
    kubeconfig: Path | None = None
    context: str | None = None
    namespaces: tuple[str, ...] = ()
    velero_namespaces: tuple[str, ...] = ()


SourceSettings = Annotated[
    DirectorySourceSettings | ClusterSourceSettings, Field(discriminator="type")
]


class ReportSettings(Strict):
    """Which artifacts a run writes and where (relative paths: from the working directory).

    ``keep_runs``, ``keep_days``: retention of ``auditor serve``'s run folders, per schedule,
    applied after each run (``auditor.service.retention``); None: keep every run. The newest
    run and runs not yet published are never removed.
    """

    formats: tuple[ReportFormat, ...] = ("json", "html")
    out_dir: Path = Path("reports")
    keep_runs: int | None = Field(default=None, ge=1)
    keep_days: float | None = Field(default=None, gt=0, le=MAX_DAYS)

    _any_case = field_validator("formats", mode="before")(_lower_formats)

    @field_validator("formats")
    @classmethod
    def _no_repeats(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if len(set(value)) != len(value):
            raise ValueError("formats must not repeat")
        return value


#: One comma-separated part of a month or day-of-week field, matched whole. APScheduler 3
#: matches a name range only at the start of the part, so ``mon-`` read as ``mon`` and
#: ``mon-fri-sat`` as ``mon-fri``: a schedule other than the one written.
_NAME_PART = re.compile(r"\*(?:/\d+)?|\d+(?:-\d+)?(?:/\d+)?|[a-z]+(?:-[a-z]+)?", re.IGNORECASE)

#: Any fire time from here on is found: 2000 is a leap year, so 29 February counts.
_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)


def after(fire: datetime) -> datetime:
    """Return the instant one microsecond after ``fire``, counted in UTC.

    ``fire + timedelta(...)`` adds wall-clock time and drops ``fold``: after the second
    02:30 of the day clocks go back (``fold=1``, 01:30 UTC in Europe/Berlin) it gives
    02:30:00.000001 of the first (00:30 UTC), an hour *before* ``fire``, and a walk over
    fire times that steps with it never ends.
    """
    return (fire.astimezone(UTC) + timedelta(microseconds=1)).astimezone(fire.tzinfo)


class WallClockCronTrigger(CronTrigger):  # type: ignore[misc]
    """A CronTrigger that fires a fixed wall-clock time once on the day clocks go back.

    Where a time zone repeats an hour (the end of daylight saving time), APScheduler 3 fires
    ``30 2 * * *`` in Europe/Berlin at 02:30 CEST and again at 02:30 CET, an hour later. Like
    Vixie cron (``man 8 cron``: jobs at a particular time are not run again in the repeated
    interval; jobs with ``*`` in the minute or hour field run as the clock moves), the second
    occurrence is skipped unless the minute or hour field starts with ``*``. A wall-clock time
    that does not exist (clocks go forward) fires once, at the first valid time after it
    (APScheduler's rule), e.g. 03:30 CEST for 02:30.
    """

    def get_next_fire_time(
        self, previous_fire_time: datetime | None, now: datetime
    ) -> datetime | None:
        """Return the next fire time after ``previous_fire_time``/``now``, none repeated."""
        fire: datetime | None = super().get_next_fire_time(previous_fire_time, now)
        while fire is not None and self._repeated(fire):
            fire = super().get_next_fire_time(fire, after(fire))
        return fire

    def _repeated(self, fire: datetime) -> bool:
        """True for the second occurrence of a repeated wall-clock time of a fixed-time job."""
        if fire.fold != 1 or fire.replace(fold=0).utcoffset() == fire.utcoffset():
            return False
        fields = {f.name: str(f) for f in self.fields}
        return not (fields["minute"].startswith("*") or fields["hour"].startswith("*"))


def build_trigger(cron: str, timezone: str) -> WallClockCronTrigger:
    """Build the APScheduler trigger for a crontab expression.

    Five fields (``minute hour day month day_of_week``) or six with a leading
    ``second`` field. Day-of-week must use names (``mon-fri``, ``sun``): crontab
    counts Sunday as 0 but APScheduler 3 counts Monday as 0, so digits are refused.
    Refused too, as APScheduler would run another schedule than crontab: a month or
    day-of-week part it reads only in part (``mon-``, ``mon-fri-sat``); day-of-month and
    day-of-week both restricted (crontab runs on days matching either, APScheduler only on
    days matching both, ``man 5 crontab``); a day that no month has (``0 6 30 2 *``: the
    job would never run). On the day clocks go back a fixed time fires once
    (:class:`WallClockCronTrigger`).

    Raises:
        ValueError: wrong field count, numeric day-of-week, an invalid field or time zone,
            or one of the cases above (the message names the field).
    """
    parts = cron.split()
    if len(parts) not in (5, 6):
        raise ValueError(f"cron '{cron}' has {len(parts)} fields; expected 5 (or 6 with seconds)")
    names = (("second",) if len(parts) == 6 else ()) + _CRON_FIELDS
    fields = dict(zip(names, parts, strict=True))
    if any(ch.isdigit() for ch in fields["day_of_week"]):
        raise ValueError(
            f"day-of-week '{fields['day_of_week']}' must use names (mon, tue, ... sun): "
            "crontab numbers Sunday 0, APScheduler numbers Monday 0"
        )
    _check_name_fields(fields)
    if not fields["day"].startswith("*") and not fields["day_of_week"].startswith("*"):
        raise ValueError(
            f"cron '{cron}' restricts both day-of-month '{fields['day']}' and day-of-week "
            f"'{fields['day_of_week']}': crontab runs on days matching either, this scheduler "
            "only on days matching both; write '*' in one of them (use two schedules for both)"
        )
    if len(parts) == 5:
        fields["second"] = "0"
    try:
        tz = zoneinfo.ZoneInfo(timezone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(f"unknown time zone '{timezone}'") from exc
    try:
        trigger = WallClockCronTrigger(timezone=tz, **fields)
    except ValueError as exc:
        raise ValueError(f"invalid cron '{cron}': {exc}") from exc
    _check_fires(cron, fields, trigger, tz)
    return trigger


def _check_name_fields(fields: dict[str, str]) -> None:
    """Refuse a month or day-of-week part APScheduler would read only in part."""
    for name, label, example in (
        ("month", "month", "jan-mar"),
        ("day_of_week", "day-of-week", "mon-fri"),
    ):
        for part in fields[name].split(","):
            if part and not _NAME_PART.fullmatch(part):
                raise ValueError(
                    f"{label} '{fields[name]}': '{part}' is not a name, a range '{example}' or "
                    "'*' (the scheduler would read only its start)"
                )


def _check_fires(cron: str, fields: dict[str, str], trigger: CronTrigger, tz: tzinfo) -> None:
    """Refuse a trigger that never fires (a day no month of the expression has)."""
    if trigger.get_next_fire_time(None, _EPOCH.astimezone(tz)) is None:
        raise ValueError(
            f"cron '{cron}' never fires: no month in '{fields['month']}' has a day "
            f"'{fields['day']}'"
        )


class Schedule(Strict):
    """One scheduled audit: a cron expression in a time zone, and what to produce.

    ``formats``: overrides ``report.formats`` for this schedule (e.g. PDF monthly).
    ``publish``: hand the artifacts to the ``publish`` section's targets.
    ``period_report``: also build the period report of the month before the slot's month
    (in ``timezone``) from the runs archived at the ``publish`` target, into the run's
    ``period-YYYY-MM/`` folder, published with the run (``docs/period-report.md``).
    ``period_public_keys``: Ed25519 public keys (PEM files); with any, an archived run counts
    in the period report only when one of them signed its manifest (else it is left out and
    named in the report's problems), as ``auditor report --period --public-key``.
    """

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$", max_length=63)
    cron: str
    timezone: str = "UTC"
    formats: tuple[ReportFormat, ...] | None = None
    publish: bool = False
    period_report: bool = False
    period_public_keys: tuple[Annotated[Path, AfterValidator(_check_public_key)], ...] = ()

    _any_case = field_validator("formats", mode="before")(_lower_formats)

    @field_validator("period_public_keys")
    @classmethod
    def _keys_need_period_report(
        cls, value: tuple[Path, ...], info: ValidationInfo
    ) -> tuple[Path, ...]:
        if value and info.data.get("period_report") is not True:
            raise ValueError(
                "set, but period_report is not true: the keys check the runs a period report reads"
            )
        return value

    @field_validator("timezone")
    @classmethod
    def _tz(cls, value: str) -> str:
        try:
            zoneinfo.ZoneInfo(value)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(f"unknown time zone '{value}'") from exc
        return value

    @field_validator("cron")
    @classmethod
    def _cron(cls, value: str) -> str:
        build_trigger(value, "UTC")
        return value

    def trigger(self) -> WallClockCronTrigger:
        """Return this schedule's trigger (valid: checked at load)."""
        return build_trigger(self.cron, self.timezone)


class MetricsSettings(Strict):
    """Where ``/metrics``, ``/healthz`` and ``/readyz`` listen (port 0: pick a free one)."""

    host: str = "0.0.0.0"
    port: int = Field(default=9090, ge=0, le=65535)


def check_job_store_url(value: str) -> None:
    """Refuse a job store URL SQLAlchemy cannot use: not a URL, an unknown database, or a
    driver not installed (``postgresql://`` needs ``psycopg``, absent from the image). Before,
    ``validate-config`` passed it and ``serve`` ended in a traceback (exit 1).

    Raises:
        ValueError: naming the URL without its password.
    """
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError

    try:
        url = make_url(value)
    except ArgumentError:
        raise ValueError(
            "not a SQLAlchemy URL (e.g. sqlite:////var/lib/auditor/state/jobs.sqlite)"
        ) from None
    shown = url.render_as_string(hide_password=True)
    try:
        dialect = url.get_dialect()
    except NoSuchModuleError:
        raise ValueError(f"'{shown}': unknown database '{url.drivername}'") from None
    try:
        dialect.import_dbapi()
    except ImportError as exc:
        raise ValueError(
            f"'{shown}': the database driver {exc.name or ''} for '{url.drivername}' is not "
            "installed (the image ships SQLite only)"
        ) from None


class ServiceSettings(Strict):
    """How ``auditor serve`` keeps state.

    ``state_dir``: job store (``jobs.sqlite``), run journal and lock file.
    ``job_store_url``: SQLAlchemy URL; default ``sqlite:///<state_dir>/jobs.sqlite``.
    ``misfire_grace_time_seconds``: a run missed by up to this long (downtime) still runs once.
    ``shutdown_grace_seconds``: on SIGTERM, wait this long for a running audit, then abandon it.
    """

    state_dir: Path = Path("state")
    job_store_url: str | None = None
    misfire_grace_time_seconds: int = Field(default=6 * 3600, ge=1, le=366 * 86400)
    shutdown_grace_seconds: float = Field(default=20.0, ge=0, le=86400)
    metrics: MetricsSettings = Field(default_factory=MetricsSettings)

    @field_validator("job_store_url")
    @classmethod
    def _job_store_url(cls, value: str | None) -> str | None:
        if value is not None:
            check_job_store_url(value)
        return value

    def store_url(self) -> str:
        """Return the job store URL."""
        return self.job_store_url or f"sqlite:///{self.state_dir.absolute() / 'jobs.sqlite'}"
