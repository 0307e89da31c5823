"""Presentation of the optional history trend (readiness over past runs).

The trend dict is produced by the publishing/history side (``docs/publishing.md``).
Only these keys are read, each optional; anything missing or malformed is
skipped, never an error:

- ``runs``: list of ``{"run_id"|"id", "audit_time", "readiness": {state: count}}``
  (oldest first as given; shown in that order)
- ``newly_not_ready``: list of ``{"namespace", "name", "owner"?}`` or strings
- ``fixed`` (or ``gaps_fixed``): list of ``{"namespace", "name", "check_id"}`` or strings
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from auditor.report.formatting import READINESS_COLOR, READINESS_ORDER, fmt_value

__all__ = ["TrendView", "TrendRun", "trend_view"]

#: Height in CSS px of the tallest column in the trend chart.
TREND_HEIGHT = 80


@dataclass(frozen=True)
class TrendRun:
    """One run: counts in ``READINESS_ORDER``; ``bars``: stacked ``(y, height, colour)`` in px."""

    label: str
    counts: tuple[int, ...]
    total: int
    bars: tuple[tuple[float, float, str], ...]
    x: int


@dataclass(frozen=True)
class TrendView:
    """Trend table/chart rows plus the VMs that got worse and the gaps fixed."""

    runs: tuple[TrendRun, ...]
    chart_width: int
    chart_height: int
    newly_not_ready: tuple[str, ...]
    fixed: tuple[str, ...]
    new_gaps: tuple[str, ...] = ()
    month_ago: str | None = None
    month_newly_not_ready: tuple[str, ...] = ()
    month_fixed: int = 0


def _describe(item: Any, *keys: str) -> str:
    if isinstance(item, Mapping):
        ns, name = item.get("namespace"), item.get("name")
        vm = f"{ns}/{name}" if ns and name else fmt_value(name or item.get("vm"))
        extra = [fmt_value(item[k]) for k in keys if item.get(k) is not None]
        return " ".join([vm, *extra]) if extra else vm
    return fmt_value(item)


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _stack(counts: tuple[int, ...], top: int) -> tuple[tuple[float, float, str], ...]:
    bars = []
    y = float(TREND_HEIGHT)
    for state, count in zip(READINESS_ORDER, counts, strict=True):
        height = round(TREND_HEIGHT * count / top, 1)
        y = round(y - height, 1)
        bars.append((y, height, READINESS_COLOR[state]))
    return tuple(bars)


def trend_view(trend: Mapping[str, Any]) -> TrendView:
    """Return the presentation of ``trend`` (the ``trend.json`` of ``docs/publishing.md``:
    ``series`` of run briefs, ``vs_previous`` / ``vs_month_ago`` comparisons), tolerant of
    missing or odd keys."""
    raw_runs = [r for r in trend.get("series") or [] if isinstance(r, Mapping)]
    counted = []
    for r in raw_runs:
        raw = r.get("readiness")
        readiness: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
        counts = tuple(_count(readiness.get(s)) for s in READINESS_ORDER)
        label = fmt_value(r.get("audit_time") or r.get("run_id") or r.get("id"))
        counted.append((label, counts))
    top = max([sum(c) for _, c in counted] + [1])
    runs = tuple(
        TrendRun(
            label=label,
            counts=counts,
            total=sum(counts),
            bars=_stack(counts, top),
            x=24 * i,
        )
        for i, (label, counts) in enumerate(counted)
    )
    prev = _mapping(trend.get("vs_previous"))
    month = _mapping(trend.get("vs_month_ago"))
    month_brief = _mapping(trend.get("month_ago"))
    return TrendView(
        runs=runs,
        chart_width=max(24 * len(runs), 24),
        chart_height=TREND_HEIGHT,
        newly_not_ready=tuple(_describe(v, "was") for v in _items(prev, "became_not_ready")),
        fixed=tuple(_describe(v, "check_id") for v in _items(prev, "gaps_fixed")),
        new_gaps=tuple(_describe(v, "check_id") for v in _items(prev, "new_gaps")),
        month_ago=fmt_value(month_brief.get("audit_time")) if month_brief else None,
        month_newly_not_ready=tuple(_describe(v, "was") for v in _items(month, "became_not_ready")),
        month_fixed=len(_items(month, "gaps_fixed")),
    )


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _items(section: Mapping[str, Any], key: str) -> list[Any]:
    value = section.get(key)
    return [v for v in value if v is not None] if isinstance(value, list) else []
