"""Who must fix what: root-cause gaps, per-owner work lists and each VM's "why".

Reads ``vms[].root_causes`` (schema 1.1); a report without them (1.0) falls back
to one cause per FAIL/ERROR check, titled from the catalog, with the catalog's
remediation as the first action.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from auditor.envelope.model import CheckEntry, RootCauseEntry, VmEntry
from auditor.models import SEVERITY_ORDER, Severity, Status
from auditor.report.formatting import READINESS_LABEL, fmt_hours

__all__ = [
    "CauseGap",
    "WorkItem",
    "OwnerWork",
    "causes_of",
    "cause_gaps",
    "owner_work",
    "why_of",
]

Catalog = Mapping[str, CheckEntry]


@dataclass(frozen=True)
class CauseGap:
    """One root cause across the VMs: how many VMs have it and which checks it explains."""

    cause_id: str
    title: str
    severity: str
    vms: int
    check_ids: tuple[str, ...]


@dataclass(frozen=True)
class WorkItem:
    """One VM on an owner's list: its worst gap, the first action and how old the gap is."""

    anchor: str
    vm: str
    readiness: str
    readiness_label: str
    severity: str
    cause: str
    more: int
    first_action: str
    age: str


@dataclass(frozen=True)
class OwnerWork:
    """An owner's work list, worst first; ``open_vms`` VMs with at least one gap."""

    owner: str
    anchor: str
    items: tuple[WorkItem, ...]


def causes_of(vm: VmEntry, checks: Catalog) -> list[RootCauseEntry]:
    """The VM's root causes, or one per FAIL/ERROR check for reports without them."""
    if vm.root_causes:
        return list(vm.root_causes)
    out = []
    for f in vm.findings:
        if f.status not in (Status.FAIL, Status.ERROR):
            continue
        check = checks.get(f.check_id)
        out.append(
            RootCauseEntry(
                id=f.check_id.lower(),
                title=("Not evaluated: " if f.status is Status.ERROR else "Not met: ")
                + (check.title if check else f.check_id),
                severity=f.severity,
                check_ids=[f.check_id],
                first_action=f.remediation or (check.remediation if check else ""),
            )
        )
    out.sort(key=lambda c: (SEVERITY_ORDER.index(c.severity), c.id))
    return out


def _rank(severity: Severity) -> int:
    return SEVERITY_ORDER.index(severity)


def cause_gaps(vms: Sequence[VmEntry], checks: Catalog, top: int = 10) -> tuple[CauseGap, ...]:
    """Top ``top`` root causes: worst severity first, then most VMs, then id."""
    count: dict[str, int] = {}
    worst: dict[str, Severity] = {}
    title: dict[str, str] = {}
    ids: dict[str, list[str]] = {}
    for vm in vms:
        for c in causes_of(vm, checks):
            count[c.id] = count.get(c.id, 0) + 1
            if c.id not in worst or _rank(c.severity) < _rank(worst[c.id]):
                worst[c.id] = c.severity
            title.setdefault(c.id, c.title)
            seen = ids.setdefault(c.id, [])
            seen.extend(x for x in c.check_ids if x not in seen)
    rows = [
        CauseGap(cid, title[cid], worst[cid].value, n, tuple(ids[cid])) for cid, n in count.items()
    ]
    rows.sort(key=lambda g: (SEVERITY_ORDER.index(Severity(g.severity)), -g.vms, g.cause_id))
    return tuple(rows[:top])


def why_of(vm: VmEntry, checks: Catalog, limit: int = 2) -> str:
    """Short text for the VM table's "why" column: worst causes first, "+N more"."""
    causes = causes_of(vm, checks)
    if not causes:
        return ""
    shown = "; ".join(c.title for c in causes[:limit])
    return shown + (f" (+{len(causes) - limit} more)" if len(causes) > limit else "")


def owner_work(
    vms: Sequence[VmEntry], anchors: Sequence[str], checks: Catalog
) -> tuple[OwnerWork, ...]:
    """Per owner, each VM with a gap: worst cause and its first action.

    Sorted by severity (critical first), then age of the gap (oldest first; unknown
    age last), then VM. Owners sorted by their worst item, then name. Info-only gaps
    (an ephemeral VM, no restore drill yet) are listed after real ones.
    """
    by_owner: dict[str, list[tuple[tuple[int, float, str], WorkItem]]] = {}
    for vm, anchor in zip(vms, anchors, strict=True):
        causes = causes_of(vm, checks)
        if not causes:
            continue
        head = causes[0]
        age = head.age_hours
        item = WorkItem(
            anchor=anchor,
            vm=f"{vm.namespace}/{vm.name}",
            readiness=vm.readiness.value,
            readiness_label=READINESS_LABEL.get(vm.readiness.value, vm.readiness.value),
            severity=head.severity.value,
            cause=head.title,
            more=len(causes) - 1,
            first_action=head.first_action,
            age=fmt_hours(age) if age is not None else "-",
        )
        key = (_rank(head.severity), -(age if age is not None else -1.0), item.vm)
        by_owner.setdefault(vm.owner, []).append((key, item))
    lists = []
    for owner, rows in by_owner.items():
        rows.sort(key=lambda r: r[0])
        lists.append((rows[0][0][0], owner, tuple(item for _, item in rows)))
    lists.sort(key=lambda t: (t[0], t[1]))
    return tuple(
        OwnerWork(owner=o, anchor=f"owner-{i}", items=items)
        for i, (_, o, items) in enumerate(lists)
    )
