"""BKP checks driven by the recovery policy: restore points, retention, off-cluster copy.

Thresholds come from the policy that applies to the VM (``auditor.policy``).
"""

from __future__ import annotations

import ipaddress

from auditor.checks.backup import VELERO_BACKUP_DOC, backup_evidence
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
from auditor.inventory.defaultttl import server_default_ttl
from auditor.inventory.endpoints import endpoint_host, in_cluster_endpoint
from auditor.inventory.facts import restore_points as complete_points
from auditor.inventory.facts import unproven_points, usable
from auditor.models import Basis, Severity

DATA_MOVER_DOC = "https://velero.io/docs/main/csi-snapshot-data-movement/"
FS_BACKUP_DOC = "https://velero.io/docs/main/file-system-backup/"


@check(
    "RR-BKP-005",
    title="The VM has at least the policy's number of restore points",
    severity=Severity.LOW,
    rationale="One restore point is one bad night away from none: corruption or ransomware "
    "found late needs an older, clean copy.",
    remediation="Keep more backups (longer Schedule ttl or more frequent runs) until the VM "
    "has the policy's minimum number of usable backups.",
    references=(VELERO_BACKUP_DOC,),
    requires=("Backup", "PersistentVolumeClaim"),
    reads=DISK_DATA,
)
def restore_points(vm: VMRecord, ctx: CheckContext) -> Result:
    """Count restore points: usable Backups holding the VM and every disk's data on evidence.

    N/A without any usable backup (RR-BKP-001 reports that); FAIL below the minimum; ERROR
    when backups whose disk capture is not evidenced could make up the difference.
    """
    points = complete_points(vm)
    unproven = unproven_points(vm)
    minimum = ctx.thresholds.min_restore_points
    ev = {
        "restore_points": len(points),
        "min_restore_points": minimum,
        "policy": ctx.policy,
        "backups": [e.backup.name for e in points],
        "not_evidenced": [e.backup.name for e in unproven],
    }
    good = usable(vm)
    if not good:
        return not_applicable(f"VM {vm.ref} has no usable backup at all (see RR-BKP-001).", **ev)
    if len(points) < minimum:
        msg = (
            f"VM {vm.ref} has {len(points)} restore point(s) holding its disk data on evidence; "
            f"policy {ctx.policy} requires {minimum}"
        )
        # by identity: each of them is one of vm.backups, and unproven_points is a filter of
        # that list by the evals' own values (an equal eval would be in it too), so this is
        # `e not in unproven` without comparing every field of two evals (their captures)
        maybe = {id(e) for e in unproven}
        lacking = [e for e in good if not e.disks_captured and id(e) not in maybe]
        if lacking:
            # backups exist but miss disks: the gap is what they capture, not how long
            # they are kept (RR-BKP-004 names the disks)
            ev["usable_backups"] = len(good)
            ev["missing_pvcs"] = sorted(
                {c.pvc for c in lacking[0].pvcs if c.role == "disk" and not c.captured}
                | {d.name for d in vm.uncapturable}
            )
        if len(points) + len(unproven) >= minimum:
            return errored(
                f"{msg}. {len(unproven)} more backup(s) may hold the disks, but nothing "
                "evidences it (see RR-BKP-004).",
                **ev,
            ).on(Basis.INFERRED)
        return failed(f"{msg}.", **ev).on(Basis.OBSERVED)
    return passed(
        f"VM {vm.ref} has {len(points)} restore point(s) (policy minimum {minimum}).", **ev
    ).on(Basis.OBSERVED)


@check(
    "RR-BKP-006",
    title="The newest restore point is kept at least the policy's retention",
    severity=Severity.MEDIUM,
    rationale="Velero deletes a backup when its ttl expires; a ttl shorter than the retention "
    "the business requires silently shortens how far back a restore can go.",
    remediation="Raise the Schedule's template ttl (e.g. 720h0m0s) to at least the policy's "
    "minimum retention.",
    references=(
        VELERO_BACKUP_DOC,
        "https://velero.io/docs/main/how-velero-works/#set-a-backup-to-expire",
    ),
    requires=("Backup",),
    reads=DISK_DATA,
)
def retention(vm: VMRecord, ctx: CheckContext) -> Result:
    """Compare how long the VM's restore points are kept with min_retention_hours.

    Judged on the newest restore point a Schedule made (its lifetime: expiration - start),
    else the newest one: an ad-hoc Backup taken with a short ttl beside a Schedule's does not
    shorten how far back a restore can go. And on the ttl of the Schedules covering the VM
    (``spec.template.ttl``; unset or zero is Velero's default, 720 h): when none keeps its
    Backups long enough, retention is shrinking even while an older, longer-kept Backup is
    still the newest (velero pkg/controller/backup_controller.go prepareBackupRequest sets
    each Backup's ttl from its template). FAIL on either; ERROR when a covering Schedule's ttl
    cannot be read and none other is long enough.

    A template without ttl keeps its Backups the server's ``--default-backup-ttl``, which OADP
    sets from the DPA's ``velero.args.default-backup-ttl``
    (:func:`~auditor.inventory.defaultttl.server_default_ttl`), never a fixed 720 h (red team
    r41c). A restore point showing neither ``status.expiration`` nor ``spec.ttl`` (Velero writes
    both when it prepares a Backup: pkg/controller/backup_controller.go
    ``prepareBackupRequest``) is kept for an unknown time: ERROR, never Velero's default.
    """
    good = complete_points(vm)
    if not good:
        return not_applicable(
            f"VM {vm.ref} has no restore point holding its disk data (see RR-BKP-001/004)."
        )
    e = next((p for p in good if p.backup.schedule), good[0])
    began = e.backup.began
    minimum = ctx.thresholds.min_retention_hours
    if e.backup.expiration is None or began is None:
        return errored(
            f"Backup {e.backup.namespace}/{e.backup.name} of VM {vm.ref} shows neither "
            "status.expiration nor spec.ttl (Velero writes both when it prepares a Backup): "
            f"whether it is kept the {minimum:g} h policy {ctx.policy} requires is unknown.",
            **backup_evidence(e, ctx),
            min_retention_hours=minimum,
            policy=ctx.policy,
        )
    hours = round((e.backup.expiration - began).total_seconds() / 3600, 2)
    active = [s for s in vm.schedules if not s.stopped]
    dpas = list(ctx.index.data.of("DataProtectionApplication"))
    kept: dict[str, float | None] = {}
    defaults: dict[str, str] = {}
    for s in active:
        ttl = None if s.ttl_unread else s.ttl
        if ttl is None and not s.ttl_unread:
            ttl, defaults[f"{s.namespace}/{s.name}"] = (
                (None, f"some DataProtectionApplications in {s.namespace} were not read")
                if ctx.index.partial_for("DataProtectionApplication", s.namespace)
                # not read at all: OADP's default may be any (no DPA means plain Velero
                # only when the list shows none, or the kind is not installed)
                else (None, "the DataProtectionApplications were not read")
                if not ctx.index.data.known("DataProtectionApplication")
                else server_default_ttl(dpas, s.namespace)
            )
        kept[f"{s.namespace}/{s.name}"] = (
            None if ttl is None else round(ttl.total_seconds() / 3600, 2)
        )
    ev = {
        **backup_evidence(e, ctx),
        "retention_hours": hours,
        "min_retention_hours": minimum,
        "policy": ctx.policy,
        "newest_restore_point": good[0].backup.name,
        "schedule_ttl_hours": kept,
        **({"schedule_ttl_default": defaults} if defaults else {}),
    }
    if hours < minimum:
        return failed(
            f"Backup {e.backup.name} of VM {vm.ref} is kept {hours:g} h; policy "
            f"{ctx.policy} requires {minimum:g} h.",
            **ev,
        )
    long_enough = any(h is not None and h >= minimum for h in kept.values())
    ix = ctx.index
    if not long_enough and (
        not ix.data.known("Schedule") or ix.partial_for("Schedule", vm.namespace)
    ):
        # an unread Schedule may cover the VM with a short ttl (red team: a Schedule whose
        # name or template was broken, or no Schedule list, left only the older Backups)
        return errored(
            f"Backup {e.backup.name} of VM {vm.ref} is kept {hours:g} h, but some Schedules "
            "were not read: whether the ones covering it now keep their Backups the "
            f"{minimum:g} h policy {ctx.policy} requires is unknown.",
            **ev,
        )
    if kept and not long_enough:
        listed = ", ".join(
            f"{name} ({_ttl_text(h, defaults.get(name))})" for name, h in kept.items()
        )
        if None in kept.values():
            return errored(
                f"VM {vm.ref}'s covering Schedules keep their Backups too briefly or for an "
                f"unreadable time: {listed}; policy {ctx.policy} requires {minimum:g} h.",
                **ev,
            )
        return failed(
            f"Backup {e.backup.name} of VM {vm.ref} is kept {hours:g} h, but the Schedules "
            f"covering it now keep their Backups less than the {minimum:g} h policy "
            f"{ctx.policy} requires: {listed}.",
            **ev,
        )
    return passed(
        f"Backup {e.backup.name} of VM {vm.ref} is kept {hours:g} h (minimum {minimum:g} h).", **ev
    )


def _ttl_text(hours: float | None, default: str | None) -> str:
    """A covering Schedule's ttl for a message: its hours, and where an unset template ttl's
    server default was read."""
    if default is None:
        return "ttl unreadable" if hours is None else f"{hours:g} h"
    said = "no template ttl; server default unknown" if hours is None else f"{hours:g} h"
    return f"{said}: {default}"


@check(
    "RR-BKP-007",
    title="Disk data has an off-cluster copy when the policy requires one",
    severity=Severity.MEDIUM,
    rationale="A CSI snapshot lives on the same storage system as the disk: losing the cluster "
    "or its storage loses both. Velero's data mover or file-system backup copies the data to "
    "the BackupStorageLocation.",
    remediation="Enable snapshotMoveData (data mover) on the Schedule covering the VM (a "
    "file-system backup of a VM disk is not restored while the kubevirt plugin runs).",
    references=(DATA_MOVER_DOC, FS_BACKUP_DOC),
    requires=("Backup", "DataUpload", "PodVolumeBackup"),
    reads=DISK_DATA,
)
def off_cluster(vm: VMRecord, ctx: CheckContext) -> Result:
    """N/A unless require_off_cluster_copy; FAIL listing disks whose newest copy is in-cluster.

    The data mover and file-system backup copy to the Backup's BackupStorageLocation, which
    is off the cluster only when its object storage is: an ``s3Url`` naming a Service or Route
    of this cluster FAILs (:func:`auditor.inventory.endpoints.in_cluster_endpoint`; Velero
    AWS plugin ``s3Url``,
    https://github.com/vmware-tanzu/velero-plugin-for-aws/blob/main/backupstoragelocation.md),
    and an unread or missing location is ERROR (where the copy lives is unknown).
    """
    if not ctx.thresholds.require_off_cluster_copy:
        return not_applicable(f"Policy {ctx.policy} does not require an off-cluster copy.")
    disks = [p.name for p in vm.pvcs if p.role == "disk"]
    if not disks:
        return not_applicable(f"VM {vm.ref} has no PVC disks.")
    good = usable(vm)
    if not good:
        return failed(
            f"VM {vm.ref} has no usable backup, so no off-cluster copy.", missing_pvcs=disks
        )
    e = good[0]
    methods = {c.pvc: (c.method.value if c.method else None) for c in e.pvcs if c.role == "disk"}
    off = {c.pvc for c in e.pvcs if c.captured and c.method is not None and c.method.off_cluster}
    in_cluster = sorted(p for p in disks if p not in off)
    ev = {**backup_evidence(e, ctx), "methods": methods, "policy": ctx.policy}
    if in_cluster:
        return failed(
            f"Newest backup {e.backup.name} of VM {vm.ref} keeps disk(s) "
            f"{', '.join(in_cluster)} only in the cluster (CSI snapshot or not captured).",
            in_cluster_pvcs=in_cluster,
            **ev,
        )
    b, ix = e.backup, ctx.index
    where = b.storage_location or ix.default_locations.get(b.namespace)
    endpoint = ix.location_endpoints.get((b.namespace, where)) if where else None
    if where is not None and (b.namespace, where) in ix.unknown_endpoints:
        return errored(
            f"BackupStorageLocation {b.namespace}/{where} of Backup {b.name} has a spec.config "
            "or s3Url that cannot be read (see the collection problems): whether VM "
            f"{vm.ref}'s copy is off the cluster is unknown.",
            location=f"{b.namespace}/{where}",
            **ev,
        )
    inside = in_cluster_endpoint(endpoint, b.namespace, ix.cluster_hosts()) if endpoint else None
    if inside is not None:
        return failed(
            f"Newest backup {b.name} of VM {vm.ref} copies its disks to BackupStorageLocation "
            f"{b.namespace}/{where}, whose object storage runs inside this cluster "
            f"({inside.reason}): losing the cluster loses the copy too.",
            location=f"{b.namespace}/{where}",
            endpoint_host=endpoint_host(endpoint or ""),
            **ev,
        ).on(Basis.OBSERVED if inside.observed else Basis.INFERRED)
    unseen = _unread_hosts(ctx, b.namespace, endpoint_host(endpoint)) if endpoint else None
    if unseen:
        return errored(
            f"Backup {b.name} copies VM {vm.ref}'s disks to {endpoint_host(endpoint or '')}, "
            f"but {unseen} were not read: whether that host runs inside this cluster cannot be "
            "told.",
            location=f"{b.namespace}/{where}",
            endpoint_host=endpoint_host(endpoint or ""),
            **ev,
        )
    if where is None or (b.namespace, where) not in ix.storage_locations:
        unread = not ix.data.known("BackupStorageLocation")
        return errored(
            f"Backup {b.name} copies VM {vm.ref}'s disks to object storage, but where that "
            "storage runs cannot be told: "
            + (
                "the BackupStorageLocations were not read."
                if unread
                else f"its BackupStorageLocation {b.namespace}/{where or '(default)'} is not "
                "in the cluster."
            ),
            location=f"{b.namespace}/{where}" if where else None,
            **ev,
        )
    return passed(
        f"Every disk of VM {vm.ref} is copied off the cluster by {e.backup.name}"
        + (f" (BackupStorageLocation {b.namespace}/{where})." if where else "."),
        **ev,
    )


def _unread_hosts(ctx: CheckContext, velero_ns: str, host: str) -> str | None:
    """Which unread kinds could make ``host`` one of this cluster's (None when every kind
    that could was read): a Route's host for a name, a Service's cluster IP for an address,
    a Service of the Velero namespace or a named one for a one- or two-label name."""
    ix = ctx.index

    def unread(kind: str, namespace: str | None = None) -> bool:
        if not ix.data.known(kind) or kind in ix.partial:
            return True
        return namespace is not None and ix.partial_for(kind, namespace)

    try:
        ipaddress.ip_address(host.strip("[]"))
        return "Services" if unread("Service") else None
    except ValueError:
        pass
    labels = host.split(".")
    if len(labels) <= 2 and unread("Service", labels[1] if len(labels) == 2 else velero_ns):
        return "Services"
    return "Routes" if unread("Route") else None
