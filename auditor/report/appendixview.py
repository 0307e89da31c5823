"""Presentation of the report's appendices: check catalog, collection problems, waivers.

Reads the ``checks``, ``collection_problems`` and ``waivers`` lists of
report.json (``docs/report-schema.md``); tolerant of missing keys.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from auditor.report.formatting import evidence_pairs, fmt_value
from auditor.report.vmview import VmDetail

__all__ = [
    "CheckRow",
    "WaiverRow",
    "WaivedRow",
    "catalog",
    "problems",
    "read_counts",
    "waivers",
    "waived_findings",
]

Pairs = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class CheckRow:
    """One entry of the check catalog appendix."""

    check_id: str
    title: str
    family: str
    severity: str
    rationale: str
    remediation: str
    references: tuple[str, ...]
    requires: str


@dataclass(frozen=True)
class WaiverRow:
    """One configured waiver; ``state`` is active, expired or pending."""

    waiver_id: str
    check_id: str
    selector: str
    reason: str
    approver: str
    created: str
    expires: str
    state: str
    days_left: str


@dataclass(frozen=True)
class WaivedRow:
    """A WAIVED finding on a VM."""

    vm: str
    anchor: str
    check_id: str
    waiver: Pairs


def catalog(checks: Iterable[Mapping[str, Any]]) -> tuple[CheckRow, ...]:
    """Return the check catalog sorted by check id."""
    rows = [
        CheckRow(
            check_id=str(c.get("id", "")),
            title=str(c.get("title", "")),
            family=str(c.get("family", "")),
            severity=str(c.get("severity", "")),
            rationale=str(c.get("rationale", "")),
            remediation=str(c.get("remediation", "")),
            references=tuple(str(r) for r in c.get("references") or []),
            requires=fmt_value(list(c.get("requires") or [])),
        )
        for c in checks
    ]
    return tuple(sorted(rows, key=lambda r: r.check_id))


def problems(report: Mapping[str, Any]) -> tuple[Pairs, ...]:
    """Return each collection problem as its known (non-empty) fields."""
    return tuple(
        evidence_pairs({k: v for k, v in p.items() if v not in (None, [])})
        for p in report.get("collection_problems") or []
        if isinstance(p, Mapping)
    )


def read_counts(cluster: Mapping[str, Any]) -> Pairs:
    """Return ``(kind, "count (state)")`` for every kind read or expected, sorted by kind."""
    counts = cluster.get("counts") or {}
    states = cluster.get("kind_states") or {}
    return tuple(
        (str(kind), f"{fmt_value(counts.get(kind, 0))} ({fmt_value(states.get(kind, 'n/a'))})")
        for kind in sorted({*counts, *states})
    )


def _selector(selector: Any) -> str:
    if not isinstance(selector, Mapping):
        return fmt_value(selector)
    parts = []
    for key in sorted(selector):
        value = selector[key]
        if value in (None, "", {}, []):
            continue
        if isinstance(value, Mapping):
            value = ",".join(f"{k}={fmt_value(value[k])}" for k in sorted(value))
        parts.append(f"{key} {fmt_value(value)}")
    return "; ".join(parts) or "all VMs"


def waivers(report: Mapping[str, Any]) -> tuple[WaiverRow, ...]:
    """Return the configured waivers (``report["waivers"]``) in configuration order."""
    return tuple(
        WaiverRow(
            waiver_id=fmt_value(w.get("id")),
            check_id=fmt_value(w.get("check_id")),
            selector=_selector(w.get("selector")),
            reason=fmt_value(w.get("reason")),
            approver=fmt_value(w.get("approver")),
            created=fmt_value(w.get("created")),
            expires=fmt_value(w.get("expires")),
            state=fmt_value(w.get("state")),
            days_left=fmt_value(w.get("days_left")),
        )
        for w in report.get("waivers") or []
        if isinstance(w, Mapping)
    )


def waived_findings(details: Sequence[VmDetail]) -> tuple[WaivedRow, ...]:
    """Return every WAIVED finding of the VMs, in VM order."""
    return tuple(
        WaivedRow(
            vm=f"{d.row.namespace}/{d.row.name}",
            anchor=d.row.anchor,
            check_id=f.check_id,
            waiver=f.waiver,
        )
        for d in details
        for f in d.findings
        if f.status == "WAIVED"
    )
