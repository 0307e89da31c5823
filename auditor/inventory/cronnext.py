"""When a Velero Schedule's cron next fires, as Velero reads it.

Velero parses ``spec.schedule`` with robfig/cron v3 ``cron.ParseStandard`` (velero
pkg/controller/schedule_controller.go ``parseCronSchedule``): five fields (minute, hour,
day of month, month, day of week), an optional ``CRON_TZ=<zone> `` or ``TZ=<zone> `` prefix,
and the descriptors ``@yearly``/``@annually``, ``@monthly``, ``@weekly``, ``@daily``/
``@midnight``, ``@hourly`` and ``@every <duration>``
(https://github.com/robfig/cron/blob/v3.0.1/parser.go). Fields take ``*``, ``?``, numbers,
ranges ``a-b``, steps ``/n`` (``a/n`` is ``a-max/n``), lists, and month and weekday names;
weekdays run 0 (Sunday) to 6; ``?`` stands for ``*`` in the two day fields. When both day fields are restricted a day matches either
(``dayMatches``: a field written ``*`` or ``?`` with no step > 1 makes it both). Without a
zone prefix the times are the Velero server's local time, which this module takes as UTC
(Velero's image sets no TZ).

Why our own reader rather than APScheduler's ``CronTrigger.from_crontab`` (which the service
uses for its own jobs): APScheduler 3.x numbers weekdays from Monday and requires both day
fields to match, where robfig/cron numbers them from Sunday and takes either day when both
are restricted; it also knows neither ``CRON_TZ=`` nor ``@every``. A Schedule read with it
would fire on other days than Velero's.

Anything else yields None: the caller then judges nothing from the cron (never a verdict on
a guess).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

__all__ = ["CronSpec", "parse_cron"]

ROBFIG_PARSER_SRC = "https://github.com/robfig/cron/blob/v3.0.1/parser.go"

_DESCRIPTORS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
_MONTHS = {
    m: i + 1
    for i, m in enumerate(
        ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    )
}
_DAYS = {d: i for i, d in enumerate(["sun", "mon", "tue", "wed", "thu", "fri", "sat"])}
#: (min, max, names, whether ``?`` stands for ``*``) of minute, hour, day of month, month,
#: day of week
_BOUNDS: tuple[tuple[int, int, dict[str, int], bool], ...] = (
    (0, 59, {}, False),
    (0, 23, {}, False),
    (1, 31, {}, True),
    (1, 12, _MONTHS, False),
    (0, 6, _DAYS, True),
)
_GO_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
_GO_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(h|ms|m|s|us|µs|ns)")
#: robfig gives up after five years with no match (a zero time)
_HORIZON_DAYS = 5 * 366


@dataclass(frozen=True)
class CronSpec:
    """A parsed Schedule cron: the allowed values of each field (``fields``: minute, hour,
    day of month, month, day of week), whether a day field was written as ``*``/``?``
    without a step (``dom_star``, ``dow_star``), the zone it reads, or a fixed ``every``
    delay (``@every``)."""

    fields: tuple[frozenset[int], ...] = ()
    dom_star: bool = False
    dow_star: bool = False
    zone: ZoneInfo | None = None
    every: timedelta | None = None

    def next_after(self, t: datetime) -> datetime | None:
        """The first instant (UTC) strictly after ``t`` (aware) the cron fires at, None when
        none comes within five years (robfig's own limit). ``@every d``: ``t`` + ``d``, the
        fraction of a second of ``t`` dropped (robfig ``ConstantDelaySchedule.Next``)."""
        if self.every is not None:
            return t.replace(microsecond=0) + self.every
        zone = self.zone or UTC
        local = t.astimezone(zone).replace(second=0, microsecond=0, tzinfo=None)
        minutes, hours, doms, months, dows = self.fields
        day = local.date()
        for _ in range(_HORIZON_DAYS):
            if day.month in months and self._day_matches(day.day, (day.isoweekday() % 7)):
                for h in sorted(hours):
                    for m in sorted(minutes):
                        at = datetime(day.year, day.month, day.day, h, m)
                        if at > local:
                            return at.replace(tzinfo=zone).astimezone(UTC)
            if day == date.max:
                break  # the last date Python holds (an edited time near 9999, round m42)
            day += timedelta(days=1)
        return None

    def longest_gap(self, start: datetime) -> timedelta | None:
        """The longest time between two consecutive firings (UTC) in the five years from
        ``start`` (aware), None when it fires on fewer than two days (``@every d``: ``d``). Each gap is
        measured between real instants, so a daily ``CRON_TZ=`` cron is 25 h apart across a
        fall-back night. It depends on ``start``'s date in the cron's zone only, and is
        computed once per cron and date (a 10,000-VM estate's 411 Schedules share one cron and
        ten dates: walking five years of days for each took 2.7 s of CPU)."""
        if self.every is not None:
            return self.every
        return _longest_gap(self, start.astimezone(self.zone or UTC).date())

    def _day_matches(self, dom: int, dow: int) -> bool:
        _, _, doms, _, dows = self.fields
        hit_dom, hit_dow = dom in doms, dow in dows
        if self.dom_star or self.dow_star:
            return hit_dom and hit_dow
        return hit_dom or hit_dow


@lru_cache(maxsize=256)
def _longest_gap(spec: CronSpec, first_day: date) -> timedelta | None:
    """:meth:`CronSpec.longest_gap` of a cron without ``every``, from local date
    ``first_day`` on."""
    zone = spec.zone or UTC
    minutes, hours, _, months, _ = spec.fields
    times = [(h, m) for h in sorted(hours) for m in sorted(minutes)]
    if not times:
        return None
    day, longest, last, days = first_day, timedelta(0), None, 0
    for _ in range(_HORIZON_DAYS):
        if day.month in months and spec._day_matches(day.day, day.isoweekday() % 7):
            days += 1
            first = datetime(day.year, day.month, day.day, *times[0], tzinfo=zone)
            if last is not None:
                longest = max(longest, first.astimezone(UTC) - last.astimezone(UTC))
            stamps = [datetime(day.year, day.month, day.day, h, m) for h, m in times]
            for a, b in zip(stamps, stamps[1:], strict=False):
                longest = max(longest, b - a)
            last = stamps[-1].replace(tzinfo=zone)
        if day == date.max:
            break  # the last date Python holds (an edited time near 9999, round m42)
        day += timedelta(days=1)
    return longest if days >= 2 else None


def _go_duration(text: str) -> timedelta | None:
    """A Go ``time.ParseDuration`` string without sign (``1h30m``), None otherwise."""
    pos, total = 0, 0.0
    if not text:
        return None
    for m in _GO_PART.finditer(text):
        if m.start() != pos:
            return None
        total += float(m.group(1)) * _GO_UNITS[m.group(2)]
        pos = m.end()
    return timedelta(seconds=total) if pos == len(text) else None


def _field(
    text: str, low: int, high: int, names: dict[str, int], question: bool
) -> tuple[frozenset[int], bool]:
    """The values of one field and whether it is a plain star (``?`` too where ``question``:
    the day fields); ValueError when unreadable."""
    values: set[int] = set()
    star = False
    for part in text.split(","):
        span, _, step_text = part.partition("/")
        step = int(step_text) if step_text else 1
        if step < 1:
            raise ValueError(part)
        if span == "*" or (span == "?" and question):
            start, end = low, high
            star = star or step == 1
        else:
            a, dash, b = span.partition("-")
            start = names[a.lower()] if a.lower() in names else int(a)
            end = (names[b.lower()] if b.lower() in names else int(b)) if dash else start
            if step_text and not dash:
                end = high  # "N/step" is "N-max/step"
        if not low <= start <= end <= high:
            raise ValueError(part)
        values.update(range(start, end + 1, step))
    return frozenset(values), star


def parse_cron(spec: str | None) -> CronSpec | None:
    """Parse a Schedule's ``spec.schedule`` as robfig/cron v3 ``ParseStandard`` does (see
    the module docstring; source :data:`ROBFIG_PARSER_SRC`); None when it cannot be read
    here (then nothing is judged from it). Each text is parsed once (a CronSpec is frozen:
    the checks ask it of every VM a Schedule takes)."""
    if not isinstance(spec, str):
        return None
    return _parse_cron(spec)


@lru_cache(maxsize=1024)
def _parse_cron(spec: str) -> CronSpec | None:
    """:func:`parse_cron` of a string."""
    text = spec.strip()
    zone = None
    if text.startswith(("TZ=", "CRON_TZ=")):
        head, _, text = text.partition(" ")
        try:
            zone = ZoneInfo(head.partition("=")[2])
        except (ZoneInfoNotFoundError, ValueError):
            return None
        text = text.strip()
    if text.startswith("@every "):
        delay = _go_duration(text[len("@every ") :].strip())
        if delay is None:
            return None
        return CronSpec(every=max(delay, timedelta(seconds=1)))
    text = _DESCRIPTORS.get(text, text)
    parts = text.split()
    if len(parts) != 5:
        return None
    try:
        read = [_field(p, *bounds) for p, bounds in zip(parts, _BOUNDS, strict=True)]
    except (ValueError, KeyError):
        return None
    return CronSpec(
        fields=tuple(v for v, _ in read),
        dom_star=read[2][1],
        dow_star=read[4][1],
        zone=zone,
    )
