"""Root causes: a VM's FAIL/ERROR findings grouped by the one gap that produces them.

The mapping is :data:`CAUSES`, in order: a cause applies to a VM when its
``head`` check FAILs there, and then claims every FAIL/ERROR finding of its
``members`` not claimed by an earlier cause. ERROR findings no cause claimed
form one ``unknown-input`` cause (the auditor could not see; one export or grant
fixes them). Every other FAIL/ERROR finding is its own cause, whose id is the
check id lower-cased and whose title is the check's desired state prefixed "Not met: "
("Not evaluated: " for an ERROR), so a title always reads as a gap. So every FAIL/ERROR finding belongs to exactly one cause.

Why these groups (each member fails *because* the head fails, and fixing the
head's first action clears them):

* ``no-usable-backup`` (head RR-BKP-001): with no usable backup of the VM's
  definition and disks, the RPO (BKP-002), newest-backup phase (BKP-003), disk
  coverage (BKP-004), restore points, retention, off-cluster copy, contents and
  identity of the newest backup (BKP-005..009) and the Delete-reclaim disks'
  copies (STG-001) all fail as consequences (issue 13: "no usable backup drives
  BKP-001/002/004 and STG-001").
* ``disks-outside-backup`` (head RR-BKP-004): a usable backup that misses disk
  PVCs leaves those disks without a copy (STG-001) and no complete restore point
  (BKP-005: a longer TTL adds none), and, when the backup partly failed on them,
  BKP-003 reports the same gap.
* ``missing-network`` (head RR-NET-001): a NetworkAttachmentDefinition that does
  not exist cannot be in any backup (NET-002).
* ``stale-backups`` (head RR-BKP-002): backups older than the RPO usually also
  leave too few restore points inside the window (BKP-005).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from auditor.dictinit import direct_init
from auditor.models import SEVERITY_ORDER, Severity, Status

__all__ = ["CAUSES", "Cause", "CauseGroup", "group_causes", "UNKNOWN_INPUT"]


@dataclass(frozen=True)
class Cause:
    """One row of the mapping: ``head`` check, the checks it explains, a title."""

    id: str
    title: str
    head: str
    members: tuple[str, ...]


#: The mapping table, in the order causes are tried.
CAUSES: tuple[Cause, ...] = (
    Cause(
        "no-usable-backup",
        "No usable backup holds the VM and its disks",
        "RR-BKP-001",
        (
            "RR-BKP-002",
            "RR-BKP-003",
            "RR-BKP-004",
            "RR-BKP-005",
            "RR-BKP-006",
            "RR-BKP-007",
            "RR-BKP-008",
            "RR-BKP-009",
            "RR-STG-001",
        ),
    ),
    Cause(
        "disks-outside-backup",
        "Disk data is missing from the newest usable backup",
        "RR-BKP-004",
        ("RR-STG-001", "RR-BKP-003", "RR-BKP-005", "RR-BKP-007"),
    ),
    Cause(
        "missing-network",
        "A network the VM plugs into does not exist",
        "RR-NET-001",
        ("RR-NET-002",),
    ),
    Cause(
        "stale-backups",
        "Backups are older than the RPO",
        "RR-BKP-002",
        ("RR-BKP-005",),
    ),
)

#: The id of the cause grouping ERROR findings no other cause claimed.
UNKNOWN_INPUT = "unknown-input"


@direct_init
@dataclass(frozen=True, slots=True)
class FindingRef:
    """What grouping needs of one finding."""

    check_id: str
    status: Status
    severity: Severity
    remediation: str | None


@dataclass(frozen=True)
class CauseGroup:
    """One root cause on one VM: its findings (head first), worst severity, first action."""

    id: str
    title: str
    severity: Severity
    check_ids: tuple[str, ...]
    first_action: str


def _worst(refs: Sequence[FindingRef]) -> Severity:
    return min((r.severity for r in refs), key=SEVERITY_ORDER.index)


def _group(cid: str, title: str, refs: list[FindingRef]) -> CauseGroup:
    action = next((r.remediation for r in refs if r.remediation), "")
    return CauseGroup(cid, title, _worst(refs), tuple(r.check_id for r in refs), action or "")


def group_causes(findings: Sequence[FindingRef], titles: dict[str, str]) -> list[CauseGroup]:
    """Group a VM's FAIL/ERROR findings into root causes, worst severity first.

    ``titles`` maps check id -> catalog title (for causes that are a single check).
    """
    open_refs = [f for f in findings if f.status in (Status.FAIL, Status.ERROR)]
    by_id = {f.check_id: f for f in open_refs}
    claimed: set[str] = set()
    groups: list[CauseGroup] = []
    for cause in CAUSES:
        head = by_id.get(cause.head)
        if head is None or head.status is not Status.FAIL or cause.head in claimed:
            continue
        refs = [head] + [by_id[m] for m in cause.members if m in by_id and m not in claimed]
        claimed.update(r.check_id for r in refs)
        groups.append(_group(cause.id, cause.title, refs))
    unknown = [f for f in open_refs if f.status is Status.ERROR and f.check_id not in claimed]
    if len(unknown) > 1:
        claimed.update(f.check_id for f in unknown)
        groups.append(
            _group(
                UNKNOWN_INPUT,
                f"The auditor could not evaluate {len(unknown)} checks (input missing or unreadable)",
                unknown,
            )
        )
    for f in open_refs:
        if f.check_id not in claimed:
            title = titles.get(f.check_id, f.check_id)
            title = f"Not evaluated: {title}" if f.status is Status.ERROR else f"Not met: {title}"
            groups.append(_group(f.check_id.lower(), title, [f]))
    groups.sort(key=lambda g: (SEVERITY_ORDER.index(g.severity), g.id))
    return groups
