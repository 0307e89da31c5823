"""Build the :class:`AuditReport` envelope from an :class:`AuditResult` (engine layer).

Shape: :mod:`auditor.envelope.model` (``docs/report-schema.md``). The builder
reads the engine's results and the inventory's facts; it never re-runs a check.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal

from auditor import __version__
from auditor.checks import CATALOG
from auditor.config import AuditSettings
from auditor.engine import AuditResult, Unpaired, VMResult
from auditor.envelope.card import recovery_card
from auditor.envelope.digest import input_digest, run_key
from auditor.envelope.fixfacts import FixFacts, platform_fix_facts, vm_fix_facts
from auditor.envelope.model import (
    SCHEMA_VERSION,
    AuditReport,
    BackupStorageRun,
    BackupSummary,
    CardVm,
    CheckEntry,
    Cluster,
    CollectionProblemEntry,
    FindingEntry,
    FirmwareCard,
    NetworkIdentityCard,
    NewestBackup,
    RecoveryCard,
    RootCauseEntry,
    Run,
    Source,
    Summary,
    VmEntry,
    WaiverEntry,
)
from auditor.envelope.remediation import remediation_for
from auditor.envelope.rootcause import FindingRef, group_causes
from auditor.inventory import ClusterIndex
from auditor.inventory.facts import restore_points, unproven_points, usable
from auditor.inventory.index import BackupView, meta_labels
from auditor.inventory.protection import USABLE_PHASES
from auditor.jsonfast import nests_within
from auditor.kinds import KINDS
from auditor.kubevalues import age_hours, dig, format_time
from auditor.models import Basis, Finding, Readiness, Severity, Status, readiness_of
from auditor.redact import shown_annotations, shown_labels
from auditor.sources.base import ClusterData
from auditor.sources.bucket import run_summary as bucket_run_summary
from auditor.sources.identity import cluster_uid
from auditor.waivers import waiver_appendix

__all__ = [
    "assemble_envelope",
    "build_envelope",
    "input_digest",
    "owner_of",
    "resolve_owner",
    "unpaired_entry",
    "finding_entry",
    "vm_entry",
]


def resolve_owner(settings: AuditSettings, index: ClusterIndex, vm: VMResult) -> str:
    """Owner from the VM's labels/annotations, its Namespace's, the namespace map, or default."""
    rec = vm.record
    return owner_of(settings, index, rec.namespace, rec.labels, rec.annotations)


def owner_of(
    settings: AuditSettings,
    index: ClusterIndex,
    namespace: str,
    labels: dict[str, str],
    annotations: dict[str, str],
) -> str:
    """:func:`resolve_owner` of a VM in ``namespace`` with these labels and annotations."""
    keys = settings.ownership.keys
    ns_obj = index.namespaces.get(namespace) or {}
    for source in (
        labels,
        annotations,
        meta_labels(ns_obj),
        meta_labels(ns_obj, "annotations"),
    ):
        for key in keys:
            if source.get(key):
                return source[key]
    return settings.ownership.namespaces.get(namespace, settings.ownership.default)


#: Evidence nested deeper than this is cut (hostile input can nest hundreds of levels, which no
#: reader needs and pydantic's serialiser refuses).
EVIDENCE_DEPTH = 32


def _bounded(value: Any, depth: int = 0) -> Any:
    """``value`` with containers below :data:`EVIDENCE_DEPTH` levels replaced by a note."""
    if isinstance(value, dict | list | tuple) and depth >= EVIDENCE_DEPTH:
        return f"(nested deeper than {EVIDENCE_DEPTH} levels; cut)"
    # Leaves are taken as they are, without a call each (most evidence values are leaves).
    if isinstance(value, dict):
        return {
            k: _bounded(v, depth + 1) if isinstance(v, _NESTED) else v for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [_bounded(v, depth + 1) if isinstance(v, _NESTED) else v for v in value]
    return value


_NESTED = (dict, list, tuple)


def finding_entry(
    f: Finding, facts: FixFacts | None = None, *, within_depth: bool = False
) -> FindingEntry:
    """The envelope form of one engine finding (evidence depth bounded, see :data:`EVIDENCE_DEPTH`).

    With ``facts``, FAIL and ERROR findings get their filled-in ``remediation``.
    ``within_depth``: the caller has proven the evidence nests within the bound
    (:func:`_findings_within_depth`), so it is not looked at again here.
    """
    evidence = f.evidence
    # Most evidence is two levels deep at most (seen in Python); deeper evidence is proven
    # within bounds by orjson, and only what is not gets the bounding walk.
    if not (within_depth or _two_levels(evidence) or nests_within(evidence, EVIDENCE_DEPTH)):
        evidence = _bounded(evidence)
    # Finding.to_dict's fields, with the enum members themselves (the validator takes them
    # as they are, without a ``.value`` lookup each: a quarter-million findings per audit)
    row: dict[str, Any] = {
        "check_id": f.check_id,
        "status": f.status,
        "severity": f.severity,
        "message": f.message,
        "evidence": evidence,
        "basis": f.basis,
    }
    if f.waiver is not None:
        row["waiver"] = f.waiver
    if facts is not None and f.status in _FIXED:  # remediation_for gives None to the others
        row["remediation"] = remediation_for(f, facts)
    entry: FindingEntry = _validate_finding(row)
    return entry


#: The statuses a finding's remediation is filled in for (:func:`remediation_for`).
_FIXED = frozenset({Status.FAIL, Status.ERROR})

# FindingEntry.model_validate without its Python frame (a quarter-million findings per audit).
_validate_finding = FindingEntry.__pydantic_validator__.validate_python


def _findings_within_depth(findings: list[Finding]) -> bool:
    """Whether orjson proves every finding's evidence nests within :data:`EVIDENCE_DEPTH`
    levels with string keys (the list of them within one more level), in one call per VM
    instead of a test per finding (about 25 per VM); False means "not proven": each finding
    is then tested alone, as :func:`finding_entry` does."""
    return nests_within([f.evidence for f in findings], EVIDENCE_DEPTH + 1)


def _two_levels(evidence: dict[str, Any]) -> bool:
    """Whether every value of ``evidence`` is a leaf or a list or mapping of leaves."""
    for value in evidence.values():
        if isinstance(value, _NESTED):
            children = value.values() if isinstance(value, dict) else value
            for child in children:
                if isinstance(child, _NESTED):
                    return False
    return True


#: Root causes whose age is the time since the VM's newest usable backup (or its creation).
_BACKUP_AGED = frozenset({"no-usable-backup", "stale-backups", "rr-bkp-002"})


def _root_causes(findings: list[FindingEntry], gap_hours: float | None) -> list[RootCauseEntry]:
    titles = {cid: spec.title for cid, spec in CATALOG.items()}
    refs = [FindingRef(f.check_id, f.status, f.severity, f.remediation) for f in findings]
    return [
        RootCauseEntry(
            id=g.id,
            title=g.title,
            severity=g.severity,
            check_ids=list(g.check_ids),
            first_action=g.first_action,
            age_hours=gap_hours if g.id in _BACKUP_AGED else None,
        )
        for g in group_causes(refs, titles)
    ]


def _selected_keys(index: ClusterIndex) -> frozenset[str]:
    """The label keys a Schedule's label selector names (``matchLabels``, and
    ``matchExpressions`` keys), whose values a report shows beside it; read once per index
    (every VM entry asks)."""
    return index.memo("selector-label-keys", lambda: _selector_keys(index))


def _selector_keys(index: ClusterIndex) -> frozenset[str]:
    keys: set[str] = set()
    for s in index.schedules:
        for sel in (s.scope.label_selector, *s.scope.or_label_selectors):
            if not isinstance(sel, dict):
                continue
            match = sel.get("matchLabels")
            exprs = sel.get("matchExpressions")
            keys.update(k for k in (match if isinstance(match, dict) else ()) if isinstance(k, str))
            keys.update(
                e["key"]
                for e in (exprs if isinstance(exprs, list) else ())
                if isinstance(e, dict) and isinstance(e.get("key"), str)
            )
    return frozenset(keys)


def unpaired_entry(vm: Unpaired, owner: str) -> VmEntry:
    """The report entry of a VM whose record could not be built (``Evaluation.unpaired``):
    its identity as read from its metadata, every check ERROR (readiness UNKNOWN), every
    backup fact unknown (null), and a recovery card that knows only the VM's name, UID and
    creation time (its firmware, disks and NICs were not read: ``bootloader`` unknown)."""
    uid = dig(vm.obj, "metadata", "uid")
    findings = [finding_entry(f) for f in vm.findings]
    card = RecoveryCard(
        vm=CardVm(
            namespace=vm.namespace,
            name=vm.name,
            uid=uid if isinstance(uid, str) else None,
            created=format_time(vm.created),
            run_strategy=None,
        ),
        owner=owner,
        instancetype=None,
        preference=None,
        revisions=[],
        network_identity=NetworkIdentityCard(hostname=None, subdomain=None, nics=[], services=[]),
        firmware=FirmwareCard(
            uuid=None,
            serial=None,
            bootloader="unknown",
            secure_boot=None,
            efi_persistent=None,
            tpm=None,
            tpm_persistent=None,
            machine_type=None,
            resolved_from={},
        ),
        disks=[],
        persistent_state_pvc=None,
        nics=[],
    )
    return VmEntry(
        namespace=vm.namespace,
        name=vm.name,
        uid=uid if isinstance(uid, str) else None,
        owner=owner,
        os="unknown",
        policy=vm.policy,
        readiness=readiness_of(vm.findings),
        labels=shown_labels(vm.labels) if vm.labels else {},
        annotations=shown_annotations(meta_labels(vm.obj, "annotations")),
        backup=BackupSummary(
            newest_usable=None,
            rpo_hours=vm.rpo_hours,
            within_rpo=None,
            restore_points=0,
            data_captured=None,
        ),
        findings=findings,
        root_causes=_root_causes(findings, None),
        recovery_card=card,
    )


def vm_entry(vm: VMResult, owner: str) -> VmEntry:
    """The report entry of one checked VM, owned by ``owner``."""
    rec, ctx = vm.record, vm.context
    rpo = ctx.thresholds.rpo_hours
    good = restore_points(rec)
    newest = good[0] if good else None
    hours = age_hours(newest.backup.data_time, ctx.at) if newest else None
    within: bool | None = None if newest is None or hours is None else hours <= rpo
    unproven_fresh = any(
        (h := age_hours(e.backup.data_time, ctx.at)) is not None and h <= rpo
        for e in unproven_points(rec)
    )
    if not within and unproven_fresh:
        within = None  # a fresh backup may hold the disks, but nothing evidences it
    bkp001 = next((f.status for f in vm.findings if f.check_id == "RR-BKP-001"), None)
    if (
        within is None
        and newest is None
        and not unproven_fresh
        and (usable(rec) or bkp001 is Status.FAIL)
    ):
        # backups hold the VM object and none its disk data, or (RR-BKP-001 FAIL, on a
        # complete Backup list) no backup holds it at all: the RPO is breached, not unknown
        within = False
    facts = vm_fix_facts(rec, ctx.index, rpo, ctx.thresholds.restore_test_max_age_days)
    shallow = _findings_within_depth(vm.findings)
    findings = [finding_entry(f, facts, within_depth=shallow) for f in vm.findings]
    # Whether a usable backup holds the disk data: a restore point says yes; RR-BKP-001
    # FAIL (no backup, or the definition only) says no; otherwise unknown.
    data_captured = True if newest is not None else (False if bkp001 is Status.FAIL else None)
    # How long the backup gap has been open: since the newest restore point, or since the VM
    # was created when no backup ever held it; unknown when a backup holds its definition but
    # not its disks (when the data was last captured is not known), or when backups that held
    # it are unusable now (a location down since an unknown time: counting from the VM's
    # creation told a compliance reader it was unprotected for years; trial nu25).
    held_once = any(e.holds_object and e.backup.phase in USABLE_PHASES for e in rec.backups)
    if newest is not None:
        gap = hours
    elif not usable(rec) and bkp001 is Status.FAIL and not held_once:
        gap = age_hours(rec.created, ctx.at) if rec.created else None
    else:
        gap = None
    return VmEntry(
        namespace=rec.namespace,
        name=rec.name,
        uid=rec.uid,
        owner=owner,
        os=rec.spec.os,
        policy=vm.policy,
        readiness=readiness_of(vm.findings),
        inferred=sorted(
            f.check_id for f in vm.findings if f.status is Status.PASS and f.basis is Basis.INFERRED
        ),
        labels=shown_labels(rec.labels, _selected_keys(ctx.index)) if rec.labels else {},
        annotations=shown_annotations(rec.annotations),
        backup=BackupSummary(
            newest_usable=NewestBackup(
                name=newest.backup.name,
                phase=newest.backup.phase,
                completed=format_time(newest.backup.completed),
                data_time=format_time(newest.backup.data_time),
                age_hours=hours,
                **_expiry(newest.backup),
            )
            if newest
            else None,
            rpo_hours=rpo,
            within_rpo=within,
            restore_points=len(good),
            data_captured=data_captured,
        ),
        findings=findings,
        root_causes=_root_causes(findings, gap),
        recovery_card=recovery_card(rec, ctx.index, ctx.at, owner),
    )


def _expiry(backup: BackupView) -> dict[str, Any]:
    """``expires``/``expires_from`` of a restore point: Velero's ``status.expiration`` ("when
    this Backup is eligible for garbage-collection"), else creation + ``spec.ttl`` ("how long
    the Backup should be retained"), labelled as computed
    (https://github.com/vmware-tanzu/velero/blob/main/pkg/apis/velero/v1/backup_types.go)."""
    if backup.expiration is None:
        return {"expires": None, "expires_from": None}
    return {
        "expires": format_time(backup.expiration),
        "expires_from": "spec.ttl" if backup.expiration_from_ttl else "status.expiration",
    }


def build_envelope(
    data: ClusterData,
    result: AuditResult,
    settings: AuditSettings,
    *,
    at: datetime,
    owner: str | None = None,
) -> AuditReport:
    """Assemble the envelope; ``owner`` keeps only that owner's VMs (summary follows)."""
    vms = []
    for vm in result.vms:
        who = resolve_owner(settings, result.index, vm)
        if owner is not None and who != owner:
            continue
        vms.append(vm_entry(vm, who))
    for lost in result.unpaired:
        who = owner_of(
            settings,
            result.index,
            lost.namespace,
            lost.labels,
            meta_labels(lost.obj, "annotations"),
        )
        if owner is None or who == owner:
            vms.append(unpaired_entry(lost, who))
    vms.sort(key=lambda e: (e.namespace, e.name))
    return assemble_envelope(data, result, vms, settings, at=at, owner=owner)


def assemble_envelope(
    data: ClusterData,
    result: AuditResult,
    vms: list[VmEntry],
    settings: AuditSettings,
    *,
    at: datetime,
    owner: str | None = None,
    digest: str | None = None,
    formats: Sequence[str] | None = None,
    at_note: str | None = None,
) -> AuditReport:
    """The envelope of ``result`` with the VM entries ``vms`` (already built, sorted by
    namespace and name, only ``owner``'s when given); ``result.vms`` is not read.
    ``digest``: :func:`input_digest` of ``data`` when already taken; ``formats``: the
    artifact formats the run writes, part of its id (:func:`run_key`); ``at_note``: why ``at``
    is after the input was taken (``run.at_after_input``)."""
    digest = digest or input_digest(data)
    problems = [CollectionProblemEntry.model_validate(p.to_dict()) for p in result.problems]
    return AuditReport(
        schema_version=SCHEMA_VERSION,
        run=Run(
            id=f"{at.strftime('%Y%m%dT%H%M%SZ')}-{run_key(data, digest, settings, owner, formats)[:8]}",
            audit_time=format_time(at) or "",
            tool_version=__version__,
            source=Source(type=data.info.type, location=data.info.location),
            input_digest=digest,
            complete=not problems and not result.incomplete_checks,
            incomplete_checks=result.incomplete_checks,
            thresholds=settings.thresholds,
            owner_filter=owner,
            backup_storage=BackupStorageRun.model_validate(bucket_run_summary(data)),
            at_after_input=at_note,
        ),
        cluster=Cluster(
            name=settings.cluster_name or data.info.cluster_name,
            name_source=_name_source(settings, data),
            uid=(uid := cluster_uid(data)),
            uid_source="kube-system-namespace" if uid is not None else "unknown",
            counts={k: len(v) for k, v in sorted(data.objects.items())},
            # Every kind the auditor reads, so a reader sees what was *not* read too.
            kind_states={k.kind: data.state(k.kind) for k in sorted(KINDS, key=lambda k: k.kind)},
            skipped=dict(sorted(_not_audited(data).items())),
        ),
        collection_problems=problems,
        checks=[
            CheckEntry.model_validate(spec.to_dict())
            for spec in sorted(CATALOG.values(), key=lambda s: s.id)
        ],
        platform_findings=[
            finding_entry(
                f,
                platform_fix_facts(
                    result.index,
                    settings.thresholds.rpo_hours,
                    settings.thresholds.restore_test_max_age_days,
                ),
            )
            for f in result.platform
        ],
        waivers=[WaiverEntry.model_validate(w) for w in waiver_appendix(settings, at)],
        summary=_summary(vms),
        vms=vms,
    )


def _readiness_counts(entries: list[VmEntry]) -> dict[Readiness, int]:
    c = Counter(v.readiness for v in entries)
    return {r: c.get(r, 0) for r in Readiness}


def _name_source(
    settings: AuditSettings, data: ClusterData
) -> Literal["config", "infrastructure", "kubeconfig-context", "unknown"]:
    """Where ``cluster.name`` came from (``auditor.sources.identity.NAME_SOURCES``)."""
    if settings.cluster_name:
        return "config"
    if not data.info.cluster_name:
        return "unknown"
    if data.info.name_source == "infrastructure":
        return "infrastructure"
    if data.info.name_source == "kubeconfig-context":
        return "kubeconfig-context"
    return "config"


def _summary(vms: list[VmEntry]) -> Summary:
    status = Counter(f.status for v in vms for f in v.findings)
    fails = [f for v in vms for f in v.findings if f.status is Status.FAIL]
    severity = Counter(f.severity for f in fails)
    by_check = Counter(f.check_id for f in fails)
    by_cause = Counter(cid for v in vms for cid in {c.id for c in v.root_causes})
    groups: dict[str, dict[str, list[VmEntry]]] = {"namespace": {}, "owner": {}}
    for v in vms:
        groups["namespace"].setdefault(v.namespace, []).append(v)
        groups["owner"].setdefault(v.owner, []).append(v)
    return Summary(
        vms=len(vms),
        readiness=_readiness_counts(vms),
        findings_by_status={s: status.get(s, 0) for s in Status},
        fails_by_severity={s: severity.get(s, 0) for s in Severity},
        fails_by_check=dict(sorted(by_check.items())),
        vms_by_root_cause=dict(sorted(by_cause.items())),
        by_namespace={k: _readiness_counts(v) for k, v in sorted(groups["namespace"].items())},
        by_owner={k: _readiness_counts(v) for k, v in sorted(groups["owner"].items())},
    )


#: How a VirtualMachineInstance that no VirtualMachine owns is listed among the kinds not
#: audited: KubeVirt runs it, the kubevirt Velero plugin backs it up
#: (pkg/plugin/vmi_backup_item_action.go), but the auditor rates VirtualMachines only.
STANDALONE_VMI = "kubevirt.io/v1 VirtualMachineInstance (no VirtualMachine)"


def _not_audited(data: ClusterData) -> dict[str, int]:
    """``data.skipped`` (``'<apiVersion> <kind>'`` -> count of objects read but not audited),
    plus the VirtualMachineInstances with no VirtualMachine of their namespace and name (a
    standalone VMI would otherwise be in no list of the report: red team)."""
    out = dict(data.skipped)
    vms = {
        (str(o["metadata"].get("namespace") or ""), o["metadata"]["name"])
        for o in data.of("VirtualMachine")
    }
    alone = sum(
        1
        for o in data.of("VirtualMachineInstance")
        if (str(o["metadata"].get("namespace") or ""), o["metadata"]["name"]) not in vms
    )
    if alone:
        out[STANDALONE_VMI] = alone
    return out
