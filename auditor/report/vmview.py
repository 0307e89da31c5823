"""Presentation of one VM: its table row, its findings and its recovery card.

Reads one :class:`~auditor.envelope.model.VmEntry` and the check catalog;
returns frozen view objects that templates only loop over and print. Unknown
values show as ``"-"``; nothing here judges readiness (the engine did that).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from auditor.envelope.model import (
    CheckEntry,
    CopyCard,
    FindingEntry,
    NetworkRef,
    NewestBackup,
    ObjectRef,
    PvcCard,
    RecoveryCard,
    VmEntry,
    VolumeRef,
)
from auditor.report.actionview import causes_of, why_of
from auditor.report.evidence import EvidenceItem, evidence_items
from auditor.report.formatting import (
    READINESS_LABEL,
    SEVERITY_ORDER,
    STATUS_ORDER,
    evidence_pairs,
    fmt_hours,
    fmt_value,
)

__all__ = [
    "IDENTITY_FAMILIES",
    "Catalog",
    "VmRow",
    "FindingView",
    "CardView",
    "VmDetail",
    "vm_detail",
]

#: Check families whose FAIL/ERROR findings count as identity gaps in the VM table.
IDENTITY_FAMILIES = frozenset({"FW", "DSK", "NIC"})

Pairs = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class VmRow:
    """One line of the "protected VMs" table; ``anchor`` links to the VM's section."""

    anchor: str
    namespace: str
    name: str
    owner: str
    os: str
    readiness: str
    readiness_label: str
    newest_backup: str
    backup_time: str  # the instant backup_age counts from, labelled ("as of <time>")
    backup_age: str
    rpo: str
    rpo_state: str  # "within" | "exceeds" | "unknown"
    rpo_label: str
    restore_points: str
    identity_gaps: tuple[str, ...]
    failing_checks: tuple[str, ...]
    #: the VM's root causes, worst first, in a few words ("" when none)
    why: str = ""
    #: when Velero may delete the newest usable backup, labelled ("kept until <time>", with
    #: "computed from its TTL" when Velero recorded none); "" without one
    expires: str = ""
    #: worst severity among its FAIL/ERROR findings ("" when none), for sorting and filtering
    severity: str = ""
    #: "never" (no usable backup ever), "no-data" (definition only), "partial" (no backup holds
    #: every disk's data) or "" (has a restore point, or unknown)
    backup_gap: str = ""
    #: the checks whose PASS rests on inference alone (``VmEntry.inferred``)
    inferred: tuple[str, ...] = ()
    #: the checks whose FAIL is waived (accepted risk): a READY with any is READY only
    #: because a risk was accepted, and says so beside the verdict
    waived: tuple[str, ...] = ()


@dataclass(frozen=True)
class FindingView:
    """One finding with its check's title and remediation; ``waiver`` pairs when WAIVED."""

    check_id: str
    title: str
    status: str
    severity: str
    message: str
    evidence: Pairs
    remediation: str
    waiver: Pairs
    #: "observed", "inferred" or "" (the check did not say)
    basis: str = ""
    #: the objects and fields the verdict rests on (at most 4), e.g. a DataUpload's phase
    proof: tuple[str, ...] = ()
    #: evidence as labelled texts and small tables (never JSON)
    items: tuple[EvidenceItem, ...] = ()
    #: in a compact (large-estate) HTML, a root cause's member finding points at its head's
    #: fix instead of repeating its own (which stays in report.json and findings.csv)
    fix_ref: str = ""


def _proof(evidence: Any) -> tuple[str, ...]:
    """The first proving objects named in a finding's per-PVC capture records."""
    rows = evidence.get("pvcs") if isinstance(evidence, dict) else None
    out: list[str] = []
    for row in rows if isinstance(rows, list) else []:
        for item in row.get("proof", []) if isinstance(row, dict) else []:
            if isinstance(item, str) and item not in out:
                out.append(item)
    return tuple(out[:4])


@dataclass(frozen=True)
class DiskRow:
    """One disk of a recovery card, in boot order."""

    boot_order: str
    name: str
    device: str
    bus: str
    serial: str
    volume: str
    pvc: str
    newest_copy: str


@dataclass(frozen=True)
class NicRow:
    """One NIC of a recovery card."""

    name: str
    mac: str
    model: str
    binding: str
    network: str


@dataclass(frozen=True)
class CardView:
    """A recovery card as label/value pairs and disk/NIC rows."""

    facts: Pairs
    firmware: Pairs
    disks: tuple[DiskRow, ...]
    nics: tuple[NicRow, ...]


@dataclass(frozen=True)
class VmDetail:
    """Everything a VM's section shows; ``problems`` are its FAIL/ERROR/WAIVED findings.

    ``labels``/``annotations`` are the VM's own metadata as report.json carries it
    (secret-looking values already redacted by the source); ``policy`` names the
    recovery policy applied.
    """

    row: VmRow
    findings: tuple[FindingView, ...]
    problems: tuple[FindingView, ...]
    card: CardView
    policy: str
    labels: Pairs
    annotations: Pairs
    #: root causes, worst first
    causes: tuple[CauseView, ...] = ()
    #: check ids that passed / did not apply (their messages and evidence are in report.json)
    passed: tuple[str, ...] = ()
    not_applicable: tuple[str, ...] = ()
    #: large-estate HTML: info findings on one line, card and metadata shortened
    compact: bool = False

    def same_cause_groups(self) -> tuple[tuple[FindingView, tuple[FindingView, ...]], ...]:
        """The problems above info severity as ``(finding, its members)``, in ``problems``
        order: a finding whose ``fix_ref`` names another listed here (same root cause) is
        a member of that one and shown under it; every other finding heads its own group.
        Each problem is in exactly one group (a member whose head is not listed heads its
        own), so a compact section loses none."""
        major = [f for f in self.problems if f.severity != "info"]
        heads = {f.check_id for f in major if not f.fix_ref or f.fix_ref == "work-list"}
        members: dict[str, list[FindingView]] = {}
        for f in major:
            if f.fix_ref in heads and f.fix_ref != f.check_id:
                members.setdefault(f.fix_ref, []).append(f)
        return tuple(
            (f, tuple(members.get(f.check_id, ())))
            for f in major
            if not (f.fix_ref in heads and f.fix_ref != f.check_id)
        )


@dataclass(frozen=True)
class CauseView:
    """One root cause of a VM: title, worst severity, its checks, first action, gap age."""

    cause_id: str
    title: str
    severity: str
    check_ids: tuple[str, ...]
    first_action: str
    age: str


def _rank(order: tuple[str, ...], value: str) -> int:
    return order.index(value) if value in order else len(order)


#: The check catalog by id, as renderers look titles and remediations up.
Catalog = Mapping[str, CheckEntry]


def finding_view(finding: FindingEntry, checks: Catalog, *, detailed: bool = True) -> FindingView:
    """Return the view of one finding, titled from the check catalog.

    ``detailed`` False leaves the evidence items out (PASS/N-A findings in a VM's section:
    their evidence stays in report.json, which keeps the HTML of 10,000 VMs small).
    """
    check = checks.get(finding.check_id)
    waiver = finding.waiver
    return FindingView(
        check_id=finding.check_id,
        title=check.title if check else "",
        status=finding.status.value,
        severity=finding.severity.value,
        message=finding.message,
        evidence=evidence_pairs(finding.evidence),
        remediation=finding.remediation or (check.remediation if check else ""),
        waiver=evidence_pairs(waiver.model_dump(mode="json")) if waiver is not None else (),
        basis=finding.basis.value if finding.basis is not None else "",
        proof=_proof(finding.evidence),
        items=_beyond_message(evidence_items(finding.evidence), finding.message)
        if detailed
        else (),
    )


def _beyond_message(items: tuple[EvidenceItem, ...], message: str) -> tuple[EvidenceItem, ...]:
    """Evidence items whose value the message does not already state word for word."""
    return tuple(
        i for i in items if i.table is not None or len(i.text) < 4 or i.text not in message
    )


def sorted_findings(findings: list[FindingView]) -> tuple[FindingView, ...]:
    """Order findings: FAIL, ERROR, WAIVED, PASS, N/A; then severity, then check id."""
    return tuple(
        sorted(
            findings,
            key=lambda f: (
                _rank(STATUS_ORDER, f.status),
                _rank(SEVERITY_ORDER, f.severity),
                f.check_id,
            ),
        )
    )


def vm_row(index: int, vm: VmEntry, checks: Catalog) -> VmRow:
    """Return the table row of ``report.vms[index]``."""
    backup = vm.backup
    newest = backup.newest_usable
    within = backup.within_rpo
    rpo_state = "unknown" if within is None else ("within" if within else "exceeds")
    open_findings = [f for f in vm.findings if f.status.value in ("FAIL", "ERROR")]
    failing = sorted({f.check_id for f in open_findings})
    identity = [c for c in failing if c in checks and checks[c].family in IDENTITY_FAMILIES]
    readiness = vm.readiness.value
    worst = min((_rank(SEVERITY_ORDER, f.severity.value) for f in open_findings), default=None)
    gap, held_by = _backup_gap(vm)
    if not gap and newest is None and within is False:
        gap = "partial"  # backups hold the VM, but none holds every disk's data on evidence
    rpo_label = {"within": "within RPO", "exceeds": "exceeds RPO"}.get(rpo_state, "unknown")
    if gap == "never":
        rpo_state, rpo_label = "never", "never backed up"
    elif gap == "no-data":
        rpo_state, rpo_label = "never", "no disk data in any backup"
    elif gap == "partial":
        rpo_state, rpo_label = "never", "no complete restore point"
    return VmRow(
        anchor=f"vm-{index}",
        namespace=vm.namespace,
        name=vm.name,
        owner=vm.owner,
        os=vm.os,
        readiness=readiness,
        readiness_label=READINESS_LABEL.get(readiness, readiness),
        newest_backup=newest.name
        if newest
        else {
            "never": "never backed up",
            "no-data": f"definition only, in {held_by}",
            "partial": "no backup holds every disk",
        }.get(gap, "none"),
        backup_time=_age_from(newest) if newest else "-",
        backup_age=fmt_hours(newest.age_hours) if newest else "-",
        rpo=fmt_hours(backup.rpo_hours),
        rpo_state=rpo_state,
        rpo_label=rpo_label,
        restore_points=str(backup.restore_points),
        expires=_expires(newest) if newest else "",
        identity_gaps=tuple(identity),
        failing_checks=tuple(failing),
        why=why_of(vm, checks),
        severity=SEVERITY_ORDER[worst] if worst is not None else "",
        backup_gap=gap,
        inferred=tuple(vm.inferred),
        waived=tuple(sorted({f.check_id for f in vm.findings if f.status.value == "WAIVED"})),
    )


def _expires(newest: NewestBackup) -> str:
    """When the newest restore point may go: Velero's ``status.expiration`` as recorded, or
    creation + ``spec.ttl`` labelled as computed (report.json ``expires_from``)."""
    if not newest.expires:
        return ""
    if newest.expires_from == "spec.ttl":
        return f"kept until {newest.expires} (computed from its TTL)"
    return f"kept until {newest.expires}"


def _age_from(newest: NewestBackup) -> str:
    """The instant the newest backup's age counts from, labelled: its data time (the start,
    ``as of``); a report before schema 1.3 holds its completion only."""
    if newest.data_time:
        return f"as of {newest.data_time}"
    return f"completed {newest.completed}" if newest.completed else "-"


def _backup_gap(vm: VmEntry) -> tuple[str, str]:
    """``("never", "")`` when no usable backup ever held the VM, ``("no-data", backup)`` when
    one holds its definition but none its disk data, else ``("", "")``.

    Read from RR-BKP-001 (a FAIL with ``object_only`` evidence is the definition-only case)
    and ``backup.data_captured``; an RR-BKP-001 ERROR says neither.
    """
    bkp = next((f for f in vm.findings if f.check_id == "RR-BKP-001"), None)
    failed = bkp is not None and bkp.status.value == "FAIL"
    if not failed and vm.backup.data_captured is not False:
        return "", ""
    evidence = bkp.evidence if bkp is not None else {}
    if evidence.get("object_only") is True:
        return "no-data", str(evidence.get("backup") or "a backup").rsplit("/", 1)[-1]
    if vm.backup.newest_usable is None:
        return "never", ""
    return "no-data", vm.backup.newest_usable.name


def _from(value: Any, source: Any) -> str:
    text = fmt_value(value)
    return f"{text} (from {source})" if source not in (None, "vm") and value is not None else text


def _pvc(pvc: PvcCard | None) -> str:
    if pvc is None:
        return "-"
    return (
        f"{pvc.name}: {fmt_value(pvc.size)}, "
        f"class {fmt_value(pvc.storage_class)}, {pvc.volume_mode}, "
        f"{fmt_value(pvc.access_modes)}, reclaim {fmt_value(pvc.reclaim_policy)}"
    )


def _copy(copy: CopyCard | None) -> str:
    if copy is None:
        return "none"
    where = "off-cluster" if copy.off_cluster else "in-cluster"
    return (
        f"{copy.kind} {copy.name} as of "
        f"{fmt_value(copy.time)} ({fmt_hours(copy.age_hours)} old, {where})"
    )


def _ref(ref: ObjectRef | None) -> str:
    if ref is None:
        return "none"
    return f"{fmt_value(ref.name)} ({fmt_value(ref.kind)})"


def card_view(card: RecoveryCard) -> CardView:
    """Return the view of a VM's recovery card."""
    vm, fw = card.vm, card.firmware
    src = fw.resolved_from
    facts: Pairs = (
        ("UID", fmt_value(vm.uid)),
        ("Created", fmt_value(vm.created)),
        ("Run strategy", fmt_value(vm.run_strategy)),
        ("Owner", card.owner),
        ("Instance type", _ref(card.instancetype)),
        ("Preference", _ref(card.preference)),
        ("Persistent state PVC", _pvc(card.persistent_state_pvc)),
    )
    firmware: Pairs = (
        (
            "Firmware UUID",
            "unpinned" if src.get("uuid") == "vmi" else fmt_value(fw.uuid),
        ),
        ("Serial", fmt_value(fw.serial)),
        ("Bootloader", _from(fw.bootloader, src.get("bootloader"))),
        ("Secure boot", fmt_value(fw.secure_boot)),
        ("Persistent EFI NVRAM", fmt_value(fw.efi_persistent)),
        ("TPM", "unknown" if fw.tpm is None else _from(fw.tpm, src.get("tpm"))),
        ("Persistent TPM", fmt_value(fw.tpm_persistent)),
        ("Machine type", _from(fw.machine_type, src.get("machine_type"))),
    )
    disks = tuple(
        DiskRow(
            boot_order=fmt_value(d.boot_order),
            name=d.name,
            device=fmt_value(d.device),
            bus=_from(d.bus, d.bus_from),
            serial=fmt_value(d.serial),
            volume=_ref_volume(d.volume),
            pvc=_pvc(d.pvc),
            newest_copy=_copy(d.newest_copy),
        )
        for d in card.disks
    )
    nics = tuple(
        NicRow(
            name=n.name,
            mac="unpinned" if n.mac_from == "vmi" else fmt_value(n.mac),
            model=_from(n.model, n.model_from),
            binding=_binding(n.binding, n.binding_from),
            network=_network(n.network),
        )
        for n in card.nics
    )
    return CardView(facts=facts, firmware=firmware, disks=disks, nics=nics)


#: How the card shows a binding the VM spec does not name (``NicCard.binding_from``): the
#: interface KubeVirt adds to a VM listing none, bound as the KubeVirt CR says or, with the
#: CR unread, as KubeVirt's built-in default (inferred). A binding read from the VM spec
#: (``vm``) or from an older report (None) shows bare.
_BINDING_BASIS = {
    "kubevirt-cr": "added by KubeVirt, from the KubeVirt CR",
    "inferred": "inferred: added by KubeVirt, the KubeVirt CR not read",
}


def _binding(binding: str | None, basis: str | None) -> str:
    """``binding`` as the card shows it, with its basis when the VM spec does not name it."""
    text = fmt_value(binding)
    label = _BINDING_BASIS.get(basis or "")
    return f"{text} ({label})" if label else text


def _ref_volume(volume: VolumeRef) -> str:
    return f"{fmt_value(volume.type)} {fmt_value(volume.name)}"


def _network(net: NetworkRef) -> str:
    return fmt_value(net.type) + (f" {net.name}" if net.name else "")


def vm_detail(index: int, vm: VmEntry, checks: Catalog, *, compact: bool = False) -> VmDetail:
    """Return the section view of ``report.vms[index]``.

    PASS and NOT_APPLICABLE findings are listed by check id only. With ``compact`` (a large
    estate) a root cause's member findings show their message and point at the head's fix;
    their evidence and own fix stay in report.json and findings.csv.
    """
    heads = {c.check_ids[0]: c.check_ids[0] for c in vm.root_causes if c.check_ids}
    member_of = {
        cid: c.check_ids[0] for c in vm.root_causes for cid in c.check_ids[1:] if c.check_ids
    }
    views = []
    for f in vm.findings:
        open_ = f.status.value in ("FAIL", "ERROR", "WAIVED")
        view = finding_view(f, checks, detailed=open_ and not (compact and f.check_id in member_of))
        if compact and view.items:
            short = evidence_items(f.evidence, text=120)
            view = replace(
                view,
                items=_beyond_message(tuple(i for i in short if i.table is None), f.message),
            )
        if compact and f.check_id in member_of and f.check_id not in heads:
            view = replace(view, fix_ref=member_of[f.check_id])
        elif compact and vm.root_causes and f.check_id == vm.root_causes[0].check_ids[0]:
            view = replace(view, fix_ref="work-list")
        if compact:
            view = replace(view, proof=())
        views.append(view)
    findings = sorted_findings(views)
    problems = tuple(f for f in findings if f.status in ("FAIL", "ERROR", "WAIVED"))
    causes = tuple(
        CauseView(
            cause_id=c.id,
            title=c.title,
            severity=c.severity.value,
            check_ids=tuple(c.check_ids),
            first_action=c.first_action,
            age=fmt_hours(c.age_hours) if c.age_hours is not None else "",
        )
        for c in causes_of(vm, checks)
    )
    return VmDetail(
        row=vm_row(index, vm, checks),
        findings=findings,
        problems=problems,
        card=card_view(vm.recovery_card),
        policy=vm.policy,
        labels=evidence_pairs(vm.labels),
        annotations=evidence_pairs(vm.annotations),
        causes=causes,
        passed=tuple(f.check_id for f in findings if f.status == "PASS"),
        not_applicable=tuple(f.check_id for f in findings if f.status == "NOT_APPLICABLE"),
        compact=compact,
    )
