"""Everything the report templates show, prepared from the :class:`AuditReport`.

:func:`build_view` groups, sorts and formats; templates only loop and print.
Input is the typed envelope (``--owner`` filtering was done by the engine:
``run.owner_filter``). Output is a frozen :class:`ReportView`; building it
twice from the same report gives equal views.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from auditor.envelope.model import AuditReport
from auditor.models import SEVERITY_ORDER, Readiness
from auditor.report.actionview import CauseGap, OwnerWork, cause_gaps, owner_work
from auditor.report.appendixview import (
    CheckRow,
    WaivedRow,
    WaiverRow,
    catalog,
    problems,
    read_counts,
    waived_findings,
    waivers,
)
from auditor.report.formatting import (
    READINESS_COLOR,
    READINESS_LABEL,
    READINESS_ORDER,
    evidence_pairs,
    fmt_value,
)
from auditor.report.trendview import TrendView, trend_view
from auditor.report.vmview import Catalog, FindingView, VmDetail, VmRow, finding_view, vm_detail

__all__ = ["HTML_DETAIL_LIMIT", "PDF_DETAIL_LIMIT", "PDF_ROW_CAP", "ReportView", "build_view"]

#: Above this many VMs the PDF lists VMs compactly and leaves per-VM detail to HTML/CSV.
PDF_DETAIL_LIMIT = 300
#: At most this many VM rows in a compact PDF (worst readiness first).
PDF_ROW_CAP = 3000
#: Above this many VMs the HTML is compact: a root cause's member findings are listed in its
#: head's row (each with its own check, severity, status, basis and message) and show no
#: evidence or fix of their own (report.json and findings.csv keep it all), the basis is a
#: word under the status, and info causes said on the Info line are not repeated: the HTML
#: of 10,000 VMs (generator v4, seed 0) went from 56.7 MB to 47.5 MB (issue 15: <= 50 MB).
HTML_DETAIL_LIMIT = 2000
#: Width in CSS px of the readiness chart's longest bar.
CHART_WIDTH = 360

Pairs = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Cover:
    """Facts on the first page."""

    cluster: str
    audit_time: str
    source: str
    tool_version: str
    run_id: str
    input_digest: str
    schema_version: str
    complete: bool
    incomplete_checks: tuple[str, ...]
    problem_count: int
    owner_filter: str | None
    #: kinds never read (no file in the export, forbidden, failed) and kinds read only in part,
    #: sorted: an audit incomplete for these alone has no collection problem to name (trial
    #: nu34: the cover said "0 collection problem(s)" and Appendix B "every kind the checks
    #: need was read completely" when volumesnapshots.yaml was missing)
    kinds_not_read: tuple[str, ...] = ()
    kinds_partial: tuple[str, ...] = ()


@dataclass(frozen=True)
class Bar:
    """One readiness state in the chart: ``width`` in px, ``y`` its row offset in px."""

    state: str
    label: str
    color: str
    count: int
    percent: str
    width: float
    y: int


@dataclass(frozen=True)
class GroupRow:
    """VM counts of one namespace or owner, in ``READINESS_ORDER``."""

    name: str
    counts: tuple[int, ...]
    total: int


@dataclass(frozen=True)
class GapRow:
    """One check's FAIL count across the VMs."""

    check_id: str
    title: str
    severity: str
    count: int


@dataclass(frozen=True)
class BrowseGroup:
    """One group of a pre-rendered view (e.g. readiness "Not ready"): links to its VMs."""

    key: str
    label: str
    links: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Browse:
    """A pre-rendered view of the VM list grouped by one attribute (works without scripts)."""

    by: str
    title: str
    groups: tuple[BrowseGroup, ...]


@dataclass(frozen=True)
class OwnerGroup:
    """The VMs (detailed) or rows (compact) of one owner in the PDF."""

    owner: str
    details: tuple[VmDetail, ...]
    rows: tuple[VmRow, ...]


@dataclass(frozen=True)
class PdfPlan:
    """What the PDF holds: full detail for small estates, compact rows for large ones."""

    detailed: bool
    groups: tuple[OwnerGroup, ...]
    ready_rows: tuple[VmRow, ...]
    ready_count: int
    omitted: int
    detail_limit: int
    #: work-list rows per owner in a compact (large-estate) PDF
    work_cap: int = 25


@dataclass(frozen=True)
class ReportView:
    """The whole report, ready to print. ``trend`` is None when no trend was given."""

    title: str
    cover: Cover
    total_vms: int
    bars: tuple[Bar, ...]
    chart_height: int
    readiness_states: tuple[tuple[str, str], ...]
    state_colors: tuple[str, ...]
    gaps: tuple[GapRow, ...]
    causes: tuple[CauseGap, ...]
    work: tuple[OwnerWork, ...]
    browse: tuple[Browse, ...]
    namespaces: tuple[GroupRow, ...]
    owners: tuple[GroupRow, ...]
    rows: tuple[VmRow, ...]
    details: tuple[VmDetail, ...]
    platform_findings: tuple[FindingView, ...]
    checks: tuple[CheckRow, ...]
    problems: tuple[Pairs, ...]
    method: Pairs
    read_counts: Pairs
    thresholds: Pairs
    waivers: tuple[WaiverRow, ...]
    waived: tuple[WaivedRow, ...]
    pdf: PdfPlan
    trend: TrendView | None
    #: True above ``HTML_DETAIL_LIMIT`` VMs (see :func:`vm_detail`)
    compact: bool = False


def _cover(report: AuditReport) -> Cover:
    run = report.run
    return Cover(
        cluster=report.cluster.name or "unnamed cluster",
        audit_time=run.audit_time,
        source=f"{run.source.type}: {run.source.location}",
        tool_version=run.tool_version,
        run_id=run.id,
        input_digest=run.input_digest,
        schema_version=report.schema_version,
        complete=run.complete,
        incomplete_checks=tuple(run.incomplete_checks),
        problem_count=len(report.collection_problems),
        owner_filter=run.owner_filter,
        kinds_not_read=tuple(
            sorted(k for k, v in report.cluster.kind_states.items() if v == "unavailable")
        ),
        kinds_partial=tuple(
            sorted(k for k, v in report.cluster.kind_states.items() if v == "partial")
        ),
    )


def _bars(counts: Mapping[Readiness, int], total: int) -> tuple[Bar, ...]:
    readiness = {k.value: v for k, v in counts.items()}
    top = max([int(readiness.get(s, 0)) for s in READINESS_ORDER] + [1])
    return tuple(
        Bar(
            state=s,
            label=READINESS_LABEL[s],
            color=READINESS_COLOR[s],
            count=int(readiness.get(s, 0)),
            percent=f"{100 * int(readiness.get(s, 0)) / total:.1f}" if total else "0.0",
            width=round(CHART_WIDTH * int(readiness.get(s, 0)) / top, 1),
            y=28 * i,
        )
        for i, s in enumerate(READINESS_ORDER)
    )


def _groups(by: Mapping[str, Mapping[Readiness, int]]) -> tuple[GroupRow, ...]:
    rows = [
        GroupRow(
            name=name,
            counts=tuple(c.get(Readiness(s), 0) for s in READINESS_ORDER),
            total=sum(c.get(Readiness(s), 0) for s in READINESS_ORDER),
        )
        for name, c in by.items()
    ]
    # worst first: most NOT_READY, then AT_RISK, then UNKNOWN; ties by name
    return tuple(sorted(rows, key=lambda r: (*(-n for n in r.counts[:3]), r.name)))


_SEVERITY_RANK = {s.value: s.rank for s in SEVERITY_ORDER}


def _gaps(report: AuditReport, checks: Catalog) -> tuple[GapRow, ...]:
    """Top 10 failing checks, worst severity actually failed first, then most VMs.

    The severity shown is the worst among that check's FAIL findings (a check can
    fail at a severity other than its default, e.g. RR-RST-001 "none yet" is info).
    """
    worst: dict[str, str] = {}
    for vm in report.vms:
        for f in vm.findings:
            if f.status.value == "FAIL":
                cid, sev = f.check_id, f.severity.value
                if _SEVERITY_RANK.get(sev, 9) < _SEVERITY_RANK.get(worst.get(cid, ""), 9):
                    worst[cid] = sev
    rows = [
        GapRow(
            check_id=cid,
            title=checks[cid].title if cid in checks else "",
            severity=worst.get(cid, checks[cid].severity.value if cid in checks else ""),
            count=n,
        )
        for cid, n in report.summary.fails_by_check.items()
        if n > 0
    ]
    rows.sort(key=lambda g: (_SEVERITY_RANK.get(g.severity, 9), -g.count, g.check_id))
    return tuple(rows[:10])


def _sorted_rows(rows: Sequence[VmRow]) -> tuple[VmRow, ...]:
    """Worst first: readiness (not ready first), worst severity, then namespace and name."""
    return tuple(
        sorted(
            rows,
            key=lambda r: (
                READINESS_ORDER.index(r.readiness) if r.readiness in READINESS_ORDER else 9,
                _SEVERITY_RANK.get(r.severity, 9),
                r.namespace,
                r.name,
            ),
        )
    )


def _browse(rows: Sequence[VmRow]) -> tuple[Browse, ...]:
    """The VM list grouped by readiness and by worst severity, as links (no script needed)."""
    by_state = [
        BrowseGroup(
            s,
            READINESS_LABEL[s],
            tuple((r.anchor, f"{r.namespace}/{r.name}") for r in rows if r.readiness == s),
        )
        for s in READINESS_ORDER
    ]
    by_severity = [
        BrowseGroup(
            sev.value,
            sev.value,
            tuple((r.anchor, f"{r.namespace}/{r.name}") for r in rows if r.severity == sev.value),
        )
        for sev in SEVERITY_ORDER
    ]
    clean = tuple((r.anchor, f"{r.namespace}/{r.name}") for r in rows if not r.severity)
    by_severity.append(BrowseGroup("none", "no open finding", clean))
    return (
        Browse("readiness", "By readiness", tuple(g for g in by_state if g.links)),
        Browse("severity", "By worst open severity", tuple(g for g in by_severity if g.links)),
    )


def _pdf_plan(details: Sequence[VmDetail], limit: int, cap: int) -> PdfPlan:
    ready = [d for d in details if d.row.readiness == "READY"]
    others = [d for d in details if d.row.readiness != "READY"]
    detailed = len(details) <= limit
    if not detailed:
        others.sort(
            key=lambda d: (
                READINESS_ORDER.index(d.row.readiness) if d.row.readiness in READINESS_ORDER else 0
            )
        )
    kept, omitted = (others, 0) if detailed else (others[:cap], max(0, len(others) - cap))
    by_owner: dict[str, list[VmDetail]] = {}
    for d in kept:
        by_owner.setdefault(d.row.owner, []).append(d)
    groups = tuple(
        OwnerGroup(
            owner=owner,
            details=tuple(ds) if detailed else (),
            rows=tuple(sorted((d.row for d in ds), key=lambda r: (r.namespace, r.name))),
        )
        for owner, ds in sorted(by_owner.items())
    )
    return PdfPlan(
        detailed=detailed,
        groups=groups,
        ready_rows=tuple(d.row for d in ready) if detailed else (),
        ready_count=len(ready),
        omitted=omitted,
        detail_limit=limit,
    )


def _failing_counts(report: AuditReport) -> dict[str, int]:
    """Check id -> VMs (or 1 for the platform) where it FAILs or ERRORs."""
    counts: dict[str, int] = {}
    for vm in report.vms:
        for f in vm.findings:
            if f.status.value in ("FAIL", "ERROR"):
                counts[f.check_id] = counts.get(f.check_id, 0) + 1
    for f in report.platform_findings:
        if f.status.value in ("FAIL", "ERROR"):
            counts[f.check_id] = counts.get(f.check_id, 0) + 1
    return counts


def build_view(
    report: AuditReport,
    *,
    trend: Mapping[str, Any] | None = None,
    pdf_detail_limit: int = PDF_DETAIL_LIMIT,
    pdf_row_cap: int = PDF_ROW_CAP,
    html_detail_limit: int = HTML_DETAIL_LIMIT,
) -> ReportView:
    """Return the presentation of ``report``.

    ``trend`` is the optional history summary (``docs/publishing.md``); missing
    keys are tolerated. A report without VMs renders as an empty estate.
    """
    checks = {c.id: c for c in report.checks}
    summary, run, cluster = report.summary, report.run, report.cluster
    compact = len(report.vms) > html_detail_limit
    details = tuple(vm_detail(i, vm, checks, compact=compact) for i, vm in enumerate(report.vms))
    rows = _sorted_rows([d.row for d in details])
    cover = _cover(report)
    return ReportView(
        title=f"Recovery readiness: {cover.cluster}, {cover.audit_time}",
        cover=cover,
        total_vms=len(report.vms),
        bars=_bars(summary.readiness, len(report.vms)),
        chart_height=28 * len(READINESS_ORDER),
        readiness_states=tuple((s, READINESS_LABEL[s]) for s in READINESS_ORDER),
        state_colors=tuple(READINESS_COLOR[s] for s in READINESS_ORDER),
        gaps=_gaps(report, checks),
        causes=cause_gaps(report.vms, checks),
        work=owner_work(report.vms, [d.row.anchor for d in details], checks),
        browse=_browse(rows),
        namespaces=_groups(summary.by_namespace),
        owners=_groups(summary.by_owner),
        rows=rows,
        details=details,
        platform_findings=tuple(
            finding_view(f, checks, detailed=f.status.value in ("FAIL", "ERROR", "WAIVED"))
            for f in report.platform_findings
        ),
        checks=catalog(report.checks, _failing_counts(report)),
        problems=problems(report),
        method=(
            ("Source", cover.source),
            ("Audit time (UTC)", cover.audit_time),
            # --at clearly after the input was taken (auditor.sources.freshness)
            *((("Audit time after the input", run.at_after_input),) if run.at_after_input else ()),
            ("Run id", cover.run_id),
            ("Input digest", cover.input_digest),
            ("Tool version", cover.tool_version),
            ("Report schema", cover.schema_version),
            ("Owner filter", fmt_value(run.owner_filter)),
            ("Kinds not audited", fmt_value(cluster.skipped)),
        ),
        read_counts=read_counts(cluster),
        thresholds=evidence_pairs(run.thresholds.model_dump(mode="json")),
        waivers=waivers(report),
        waived=waived_findings(details),
        pdf=_pdf_plan(details, pdf_detail_limit, pdf_row_cap),
        trend=trend_view(trend) if trend is not None else None,
        compact=compact,
    )
