"""RR-BKP-013: the Backups Velero makes from now on still take a VM its past Backups hold.

Today's Backups may hold a VM (READY by evidence) while the next ones will not: its namespace
was labelled ``velero.io/exclude-from-backup=true`` after they were taken, or the Schedule
covering it was paused, edited (filters, selector, ``snapshotVolumes``), pointed at a location
that is down, or deleted, or the VM's labels changed. The gap shows only once the RPO passes;
this check says it the day it opens (red team rt27).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import partial
from typing import Any

from auditor.checks.backup import VELERO_BACKUP_DOC
from auditor.checks.registry import (
    DISK_DATA,
    CheckContext,
    Result,
    check,
    errored,
    failed,
    not_applicable,
    passed,
)
from auditor.inventory import VMRecord
from auditor.inventory.cronnext import parse_cron
from auditor.inventory.facts import usable
from auditor.inventory.index import SERVER_FLAGS, ScheduleView, excluded_from_backup
from auditor.kubevalues import format_time
from auditor.models import Basis, Severity
from auditor.scope import SelectorError

NS_LABEL_SRC = (
    "https://github.com/vmware-tanzu/velero/blob/main/pkg/controller/backup_controller.go"
)
SCHEDULE_SRC = "https://github.com/vmware-tanzu/velero/blob/main/pkg/builder/backup_builder.go"
SCHEDULE_CTRL_SRC = (
    "https://github.com/vmware-tanzu/velero/blob/main/pkg/controller/schedule_controller.go"
)
NS_LABEL_DOC = "https://velero.io/docs/main/resource-filtering/#veleroioexclude-from-backuptrue"


@check(
    "RR-BKP-013",
    title="The VM stays in the Backups Velero makes from now on",
    severity=Severity.MEDIUM,
    rationale="Backups taken before a namespace was labelled velero.io/exclude-from-backup=true, "
    "or before the Schedule covering the VM was paused or changed, still hold the VM and its "
    "disks; the next ones will not, and the gap shows only once the RPO has passed. A "
    "Schedule whose cron next fires only after the newest backup has aged past the RPO, or "
    "leaves more than the RPO between two runs, leaves the same gap until it runs.",
    remediation="Remove the exclude label from the VM's namespace, unpause the Schedule, or make "
    "its template take the VM and its disk data again (namespaces, resources, label selector, "
    "snapshotVolumes, an Available storageLocation); run its cron at least once per RPO.",
    references=(NS_LABEL_DOC, NS_LABEL_SRC, SCHEDULE_SRC, SCHEDULE_CTRL_SRC, VELERO_BACKUP_DOC),
    # Schedule: the next Backups are those of the Schedules covering the VM; an unread or
    # partly read list leaves whether one still takes it unknown (the engine ERRORs, and a
    # FAIL while some Schedules are unread is unsure)
    requires=("Backup", "Namespace", "Schedule"),
    # what pairing and the next Backups' plan read of the VM beyond its metadata: its
    # volumes and disks (the PVCs), whether it runs (file-system backup needs the pod), its
    # pod annotations (backup-volumes opt-in/out) and its persistent EFI/TPM (the
    # persistent-state PVC the kubevirt plugin adds); a malformed NIC or firmware UUID
    # says nothing of them (fp28: it made this check ERROR)
    reads=DISK_DATA,
)
def continues(vm: VMRecord, ctx: CheckContext) -> Result:
    """FAIL when the VM's namespace now carries ``velero.io/exclude-from-backup=true``
    (Velero appends every such namespace to the ``excludedNamespaces`` of each Backup it
    prepares: pkg/controller/backup_controller.go ``prepareBackupRequest``); when no
    Schedule covering the VM makes a next Backup holding what its newest usable one holds
    (the VM object and the data of each disk it captured, judged as a Backup of the
    Schedule's template: pkg/builder/backup_builder.go ``FromSchedule``); or, with no
    Schedule covering it, when Schedules took its usable Backups (their
    ``velero.io/schedule-name`` label) and are gone or no longer take it; or when every
    Schedule that takes it starts its next Backup (its cron after ``status.lastBackup``:
    schedule_controller.go ``getNextRunTime``) only after the newest usable one has aged
    past the RPO, a weekly cron against a daily RPO (rt36), or whose cron leaves more than
    the RPO between two runs though the next comes in time (r41c, :func:`_sparse`). N/A
    without a usable backup (RR-BKP-001), when none came from a Schedule, or (but for the
    label) when
    the newest usable one is older than the RPO already (RR-BKP-002 reports that gap); ERROR
    when the Schedules were not all read or a template's filters cannot be.
    """
    good = usable(vm)
    if not good:
        return not_applicable(f"VM {vm.ref} is in no usable backup (see RR-BKP-001).")
    newest = good[0].backup
    due = newest.data_time + timedelta(hours=ctx.thresholds.rpo_hours) if newest.data_time else None
    ev: dict[str, Any] = {
        "newest_usable_backup": f"{newest.namespace}/{newest.name}",
        "rpo_breach_at": format_time(due),
    }
    when = f" its newest usable backup {newest.name} leaves the RPO at {format_time(due)}"
    ix = ctx.index
    if excluded_from_backup(ix.namespaces.get(vm.namespace)):
        return failed(
            f"Namespace {vm.namespace} carries velero.io/exclude-from-backup=true: Velero adds "
            f"it to the excludedNamespaces of every Backup it prepares from now on, so no "
            f"later backup holds VM {vm.ref};{when}.",
            excluded_by={
                "kind": "Namespace",
                "name": vm.namespace,
                "label": "velero.io/exclude-from-backup=true",
            },
            **ev,
        ).on(Basis.OBSERVED)
    if due is None or due <= ctx.at:
        # the gap is open already: RR-BKP-002 reports it, with the Schedule's state
        return not_applicable(
            f"VM {vm.ref}'s newest usable backup {newest.name} is older than the RPO "
            "(see RR-BKP-002).",
            **ev,
        )
    if vm.next_backups:
        return _next(vm, ev, when, ctx, due)
    took = sorted({(e.backup.namespace, e.backup.schedule) for e in good if e.backup.schedule})
    if not took:
        return not_applicable(f"No Schedule made the usable backups of VM {vm.ref}.", **ev)
    unread = [
        ns for ns, _ in took if not ix.data.known("Schedule") or ix.partial_for("Schedule", ns)
    ]
    if unread:
        return errored(
            f"The Schedules in namespace {unread[0]} were not all read: whether one still takes "
            f"VM {vm.ref} is unknown.",
            **ev,
        )
    by_key = {(s.namespace, s.name): s for s in ix.schedules}
    rows = [_why(by_key.get((ns, str(name))), ns, str(name), vm) for ns, name in took]
    if any(r["why"] is None for r in rows):
        return errored(
            f"A label selector of Schedule {next(r['schedule'] for r in rows if r['why'] is None)} "
            f"cannot be read: whether it still takes VM {vm.ref} is unknown.",
            schedules=rows,
            **ev,
        )
    first = rows[0]
    return failed(
        f"Schedule {first['schedule']} made the usable backups of VM {vm.ref}, but "
        f"{first['why']}, and no other Schedule takes it: no later backup holds it;{when}.",
        schedules=rows,
        **ev,
    ).on(Basis.OBSERVED)


def next_start(s: ScheduleView, at: datetime) -> datetime | None:
    """When Velero next starts a Backup of Schedule ``s`` (UTC): the cron's next firing after
    ``status.lastBackup`` (velero pkg/controller/schedule_controller.go ``getNextRunTime``:
    ``cronSchedule.Next(lastBackup)``), or ``at`` when that is past (a due Schedule runs at
    its next reconcile). None when the cron cannot be read here
    (:func:`~auditor.inventory.cronnext.parse_cron`), or no lastBackup is read, or it is
    after ``at`` (a status written after the audit instant, an export read with an earlier
    ``--at``, says nothing of the Schedule then): nothing is judged from it."""
    spec = parse_cron(s.cron)
    if spec is None or s.last_backup is None or s.last_backup > at:
        return None
    fires = spec.next_after(s.last_backup)
    return None if fires is None else max(fires, at)


def _next(vm: VMRecord, ev: dict[str, Any], when: str, ctx: CheckContext, due: datetime) -> Result:
    """Judge the next Backup of each Schedule covering the VM (``vm.next_backups``); a row
    names the server defaults (``server_defaults``) its template relies on, where one is on.
    ``due``: when the newest usable Backup's data ages past the RPO (UTC); every Schedule
    that takes the VM starting its next Backup later (:func:`next_start`) is a FAIL naming
    each start (``late_schedules``)."""
    rows: list[dict[str, Any]] = []
    #: when the Schedules that take all of it start their next Backup (None: unread)
    starts: list[tuple[ScheduleView, datetime | None]] = []
    for s, gaps in vm.next_backups:
        row: dict[str, Any] = {"schedule": f"{s.namespace}/{s.name}", "gaps": gaps}
        if gaps == []:
            # the same for every VM the Schedule covers: once per audit
            key = f"next-start:{s.namespace}/{s.name}"
            starts.append((s, ctx.index.memo(key, partial(next_start, s, ctx.at))))
        defaults = ctx.index.backup_defaults(s).items()
        on = {k: src for k, (v, src) in defaults if v}
        if on:
            row["server_defaults"] = on
        unseen = dict(defaults)
        deciding = vm.next_unknown.get(row["schedule"], [])
        if deciding:
            row["server_defaults_unknown"] = {k: unseen[k][1] for k in deciding}
        rows.append(row)
    full = [r["schedule"] for r in rows if r["gaps"] == []]
    # Every Schedule that takes the VM starts its next Backup only after the newest usable
    # one has aged past the RPO (a weekly cron against a daily RPO): the VM is outside the
    # RPO from then until that start, as sure as if the Schedules were paused (rt36). One
    # whose start cannot be read (cron, lastBackup) may be in time: no finding.
    if full and all(t is not None and t > due for _, t in starts):
        late = [
            {"schedule": f"{s.namespace}/{s.name}", "cron": s.cron, "next_start": format_time(t)}
            for s, t in starts
        ]
        lead = late[0]
        unread = [r["schedule"] for r in rows if r["gaps"] is None]
        if unread:
            # another Schedule may take the VM in time: whether it does cannot be read
            return errored(
                f"The next backup of Schedule {lead['schedule']}, which takes VM {vm.ref}, "
                f"starts at {lead['next_start']}, after{when}; whether Schedule {unread[0]} "
                "takes the VM sooner is unknown (its next backup cannot be judged).",
                schedules=rows,
                late_schedules=late,
                **ev,
            )
        return failed(
            f"The next backup of Schedule {lead['schedule']}, which takes VM {vm.ref}, starts "
            f"at {lead['next_start']} (cron {lead['cron']!r} after its lastBackup), after"
            f"{when}: the VM has no backup within the RPO from then until that backup runs "
            f"({SCHEDULE_CTRL_SRC} getNextRunTime).",
            schedules=rows,
            late_schedules=late,
            **ev,
        ).on(Basis.OBSERVED)
    sparse = _sparse(starts, ctx) if full and all(r["gaps"] is not None for r in rows) else []
    if sparse:
        lead = sparse[0]
        return failed(
            f"Every Schedule that takes VM {vm.ref} runs less often than its {rpo_text(ctx)} "
            f"RPO: Schedule {lead['schedule']}'s cron {lead['cron']!r} leaves up to "
            f"{lead['longest_gap_hours']:g} h between two backups, so the VM's newest backup "
            f"ages past the RPO before the next one starts ({SCHEDULE_CTRL_SRC} "
            "getNextRunTime).",
            schedules=rows,
            sparse_schedules=sparse,
            **ev,
        ).on(Basis.OBSERVED)
    if full:
        return passed(
            f"The next backup of Schedule(s) {', '.join(full)} takes VM {vm.ref} and the data "
            "of every disk its newest usable backup holds.",
            schedules=rows,
            **ev,
        )
    unread = [r for r in rows if r["gaps"] is None]
    if unread:
        pending: dict[str, str] | None = unread[0].get("server_defaults_unknown")
        why = (
            f"Schedule {unread[0]['schedule']}'s next backup copies the disks differently "
            "with Velero's server flag "
            + "; flag ".join(f"{SERVER_FLAGS[k]} on or off: {w}" for k, w in pending.items())
            if pending
            else f"the filters of Schedule {unread[0]['schedule']} cannot be read"
        )
        return errored(
            f"Whether the next backup takes VM {vm.ref} and its disk data is unknown: {why}.",
            schedules=rows,
            **ev,
        )
    first = rows[0]
    return failed(
        f"The next backup of Schedule {first['schedule']}, which covers VM {vm.ref}, will not "
        f"hold what its newest usable backup holds: {first['gaps'][0]};{when}.",
        schedules=[{**r, "why": r["gaps"][0]} for r in rows],
        **ev,
    ).on(Basis.OBSERVED)


def rpo_text(ctx: CheckContext) -> str:
    return f"{ctx.thresholds.rpo_hours:g} h"


def _sparse(
    starts: list[tuple[ScheduleView, datetime | None]], ctx: CheckContext
) -> list[dict[str, Any]]:
    """The Schedules of ``starts`` (each takes all the VM holds) as rows naming their cron
    and longest gap, when every one of them fires with a gap longer than the RPO between two
    runs (a monthly cron against a daily RPO, red team r41c: the next run may still come in
    time, the one after cannot); [] when one keeps the RPO or its cron cannot be read here.
    The gap is the cron's own (:meth:`~auditor.inventory.cronnext.CronSpec.longest_gap`),
    from ``status.lastBackup`` on, as Velero fires it (schedule_controller.go
    ``getNextRunTime``). A ``lastBackup`` after the audit instant says nothing of the
    Schedule then (:func:`next_start`): the gaps are counted from the audit instant (round
    m42, mutation seed 4203: ``lastBackup: 9999-12-31T23:59:59Z`` ran the five years past
    the last date Python holds, and the check raised OverflowError)."""
    rpo = timedelta(hours=ctx.thresholds.rpo_hours)
    rows = []
    for s, _ in starts:
        spec = parse_cron(s.cron)
        since = s.last_backup if s.last_backup is not None and s.last_backup <= ctx.at else ctx.at
        gap = (
            ctx.index.memo(
                f"cron-gap:{s.namespace}/{s.name}",
                partial(spec.longest_gap, since),
            )
            if spec is not None
            else None
        )
        if gap is None or gap <= rpo:
            return []
        rows.append(
            {
                "schedule": f"{s.namespace}/{s.name}",
                "cron": s.cron,
                "longest_gap_hours": round(gap.total_seconds() / 3600, 2),
            }
        )
    return rows


def _why(s: ScheduleView | None, ns: str, name: str, vm: VMRecord) -> dict[str, Any]:
    """Why Schedule ``ns/name`` no longer takes ``vm`` (``why`` None: cannot be told)."""
    row: dict[str, Any] = {"schedule": f"{ns}/{name}"}
    if s is None:
        row["why"] = "it no longer exists"
        row["filter"] = "gone"
        return row
    sc = s.scope
    if not sc.namespace_included(vm.namespace):
        row["why"] = (
            f"its template's includedNamespaces/excludedNamespaces now leave out namespace "
            f"{vm.namespace}"
        )
        row["filter"] = "namespaces"
    elif not sc.resource_included("virtualmachines", "VirtualMachine", "kubevirt.io"):
        row["why"] = "its template's resource filters now leave out virtualmachines"
        row["filter"] = "resources"
    else:
        try:
            matched = sc.labels_match(vm.labels)
        except SelectorError:
            row["why"] = None
            return row
        row["why"] = (
            "its template's labelSelector/orLabelSelectors no longer match the VM's labels"
            if not matched
            else "it no longer takes the VM"
        )
        row["filter"] = "labels"
    return row
