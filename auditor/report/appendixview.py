"""Presentation of the report's appendices: check catalog, collection problems, waivers.

Reads the ``checks``, ``collection_problems`` and ``waivers`` parts of the
:class:`~auditor.envelope.model.AuditReport`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from auditor.envelope.model import AuditReport, CheckEntry, Cluster, WaiverSelector
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
    #: VMs (or the platform) where the check FAILs or ERRORs in this report
    failing: int = 0


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
    state_text: str  # "active (12 days left)", "expired 29 days ago"


@dataclass(frozen=True)
class WaivedRow:
    """A WAIVED finding on a VM."""

    vm: str
    anchor: str
    check_id: str
    waiver: Pairs


def catalog(
    checks: Iterable[CheckEntry], failing: Mapping[str, int] | None = None
) -> tuple[CheckRow, ...]:
    """Return the check catalog sorted by check id; ``failing`` counts FAIL/ERROR per check."""
    rows = [
        CheckRow(
            check_id=c.id,
            title=c.title,
            family=c.family,
            severity=c.severity.value,
            rationale=c.rationale,
            remediation=c.remediation,
            references=tuple(c.references),
            requires=fmt_value(c.requires),
            failing=(failing or {}).get(c.id, 0),
        )
        for c in checks
    ]
    return tuple(sorted(rows, key=lambda r: r.check_id))


def problems(report: AuditReport) -> tuple[Pairs, ...]:
    """Return each collection problem as its known (non-empty) fields."""
    return tuple(
        evidence_pairs({k: v for k, v in p.model_dump().items() if v not in (None, [])})
        for p in report.collection_problems
    )


def read_counts(cluster: Cluster) -> Pairs:
    """Return ``(kind, "count (state)")`` for every kind read or expected, sorted by kind."""
    counts, states = cluster.counts, cluster.kind_states
    return tuple(
        (
            kind,
            f"{counts.get(kind, 0)} ({states[kind].value if kind in states else 'n/a'})",
        )
        for kind in sorted({*counts, *states})
    )


def _selector(selector: WaiverSelector) -> str:
    parts = [
        f"{key} {value}"
        for key, value in (
            ("labels", ",".join(f"{k}={v}" for k, v in sorted(selector.labels.items()))),
            ("name", selector.name),
            ("namespace", selector.namespace),
        )
        if value
    ]
    return "; ".join(parts) or "all VMs"


def waivers(report: AuditReport) -> tuple[WaiverRow, ...]:
    """Return the configured waivers (``report.waivers``) in configuration order."""
    return tuple(
        WaiverRow(
            waiver_id=w.id,
            check_id=w.check_id,
            selector=_selector(w.selector),
            reason=w.reason,
            approver=w.approver,
            created=w.created,
            expires=w.expires,
            state=w.state,
            days_left=str(w.days_left),
            state_text=_state_text(w.state, w.days_left),
        )
        for w in report.waivers
    )


def _state_text(state: str, days_left: int) -> str:
    """A waiver's state with its whole days left, or since it expired (never "-29 days left")."""
    if state == "expired":
        return f"expired {_days(-days_left)} ago" if days_left < 0 else "expired within a day"
    return (
        f"{state} ({_days(days_left)} left)" if days_left > 0 else f"{state} (expires within a day)"
    )


def _days(n: int) -> str:
    return "1 day" if n == 1 else f"{n} days"


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
