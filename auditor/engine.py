"""Run the check catalog over the inventory.

An exception inside a check, a kind the check needs that could not be read,
or a malformed field the check reads, all give ERROR: never PASS. Waivers are
applied last and keep the finding's facts.
"""

from __future__ import annotations

import logging
import re
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from auditor.checks import CATALOG, CheckContext, CheckSpec, Result
from auditor.checks.fleetview import PlatformFacts, platform_facts
from auditor.config import AuditSettings
from auditor.inventory import ClusterIndex, Inventory, StagingError, VMRecord
from auditor.inventory.capture import ContentSummary, warm_content_summaries
from auditor.kubevalues import dig
from auditor.models import CollectionProblem, Finding, Severity, Status
from auditor.policy import resolve_policy
from auditor.sources.base import ClusterData, KindState
from auditor.waivers import apply_waivers

__all__ = ["AuditResult", "Evaluation", "Unpaired", "VMResult", "evaluate", "shown_error"]

log = logging.getLogger(__name__)


@dataclass
class VMResult:
    """One VM with its findings (one per VM-scope check, sorted by check id)."""

    record: VMRecord
    context: CheckContext
    findings: list[Finding]

    @property
    def policy(self) -> str:
        """Name of the recovery policy whose thresholds applied."""
        return self.context.policy


@dataclass
class AuditResult:
    """Everything the envelope is built from."""

    index: ClusterIndex
    vms: list[VMResult]
    platform: list[Finding]
    problems: list[CollectionProblem]
    incomplete_checks: list[str] = field(default_factory=list)
    #: the VMs whose record could not be built or checked (:meth:`Evaluation.unpaired`)
    unpaired: list[Unpaired] = field(default_factory=list)


def evaluate(data: ClusterData, settings: AuditSettings, *, at: datetime) -> AuditResult:
    """Pair, check and waive every VM, then run the platform checks. ``at``: audit instant (UTC).

    With the pipeline's guard (:func:`auditor.pipeline.audit_data`): an exception while
    pairing or checking one VM makes that VM :class:`Unpaired` (every check ERROR, a
    collection problem naming it), never a crash of the audit nor a verdict, and the platform
    checks are told of it (red team rt36: this path raised instead)."""
    ev = Evaluation(data, settings, at=at)
    problems = list(ev.problems)
    results = []
    lost: list[Unpaired] = []
    for i in range(len(ev)):
        stage = "pairing"
        try:
            rec = ev.record(i)
            stage = "checking"
            result, found = ev.check(i, rec)
            stage = "platform facts"
            facts = platform_facts(rec, ev.index)
        except Exception as exc:  # noqa: BLE001 - named in the report, never a verdict
            gone = ev.unpaired(i, stage, exc)
            lost.append(gone)
            problems.append(gone.problem)
            continue
        results.append((result, facts))
        problems += found
    lost += ev.unread_vms()  # named by the source's problems already
    platform = ev.platform([f for _, f in results], problems, unpaired=[u.ref for u in lost])
    return AuditResult(
        ev.index, [r for r, _ in results], platform, problems, sorted(ev.incomplete), lost
    )


class Evaluation:
    """One audit's check run, a VM at a time: what :func:`evaluate` does, in steps that
    :mod:`auditor.split` can share between two processes.

    Attributes:
        index: the cluster index.
        problems: the collection problems found before any VM is checked (the source's,
            then the index's).
        incomplete: ids of the checks some of whose required kinds were not (all) read,
            filled in as VMs are checked.

    ``validated``: each VM's malformed fields made by another process meanwhile (see
    :class:`~auditor.inventory.Inventory`).
    """

    def __init__(
        self,
        data: ClusterData,
        settings: AuditSettings,
        *,
        at: datetime,
        validated: Callable[[], list[list[tuple[str, str]]] | None] | None = None,
    ) -> None:
        self._data, self._settings, self._at = data, settings, at
        self._inventory = Inventory(data, at, validated)
        self.index = self._inventory.index
        self.problems: list[CollectionProblem] = list(data.problems) + self.index.problems
        self.incomplete: set[str] = set()
        self._vm_checks = [c for c in CATALOG.values() if c.scope == "vm"]
        self._known = _KindStates(data, self.index)
        # VMs with malformed fields, once (not a VM x VM scan): cross-VM checks name them.
        self._flawed = [
            (i, f"{facts.namespace}/{facts.name}", problems)
            for i, (facts, _, _) in enumerate(self._inventory.vms)
            if (problems := self._inventory.problems(i))
        ]

    def __len__(self) -> int:
        """The number of VMs."""
        return len(self._inventory)

    def before_fork(self, summaries: dict[str, tuple[int, ContentSummary]] | None = None) -> None:
        """Fill the cluster-wide caches that VMs in any namespace read, before
        :func:`auditor.split.share_out` forks its worker: both processes then read them
        instead of each building its own (today: each Backup's VolumeSnapshotContent
        summary, :func:`~auditor.inventory.capture.warm_content_summaries`, a walk over
        every labelled content, or ``summaries`` where another process made them: see
        there). What the checks find is the same either way."""
        warm_content_summaries(self.index, summaries)

    def vm(self, i: int) -> tuple[VMResult, list[CollectionProblem]]:
        """Pair, check and waive the ``i``-th VM (sorted by namespace and name): :meth:`check`
        of :meth:`record`.

        Returns its result and the collection problems it adds: its malformed fields, then
        the checks that raised on it, in that order.

        Raises:
            IndexError: no such VM.
            Exception: whatever pairing it raised (see :meth:`unpaired`).
        """
        return self.check(i, self.record(i))

    def record(self, i: int) -> VMRecord:
        """The ``i``-th VM paired with its PVCs, DataVolumes, backups, snapshots and identity.

        Raises:
            IndexError: no such VM.
            Exception: whatever staging or pairing it raised (a bug, or input no reader
                expected): the caller's per-VM guard turns it into :meth:`unpaired`.
        """
        return self._inventory.record(i)

    def check(self, i: int, vm: VMRecord) -> tuple[VMResult, list[CollectionProblem]]:
        """Check and waive ``vm``, the ``i``-th VM's :meth:`record` (see :meth:`vm`)."""
        settings, at, data = self._settings, self._at, self._data
        problems = [
            CollectionProblem(
                reason=f"VirtualMachine {vm.ref} field {path} {reason}",
                file=vm.origin,
                kind="VirtualMachine",
                namespace=vm.namespace,
                name=vm.name,
                field=path,
                kinds=("VirtualMachine",),
            )
            for path, reason in vm.problems
        ]
        policy, thresholds = resolve_policy(settings, vm.namespace, vm.labels)
        ctx = CheckContext(at=at, thresholds=thresholds, index=self.index, policy=policy)
        related = related_problems(vm, self.index)
        others = [(ref, found) for j, ref, found in self._flawed if j != i]
        findings = [
            _run(
                spec,
                ctx,
                data,
                self.incomplete,
                vm,
                related=related,
                crashes=problems,
                others=others,
                known=self._known,
            )
            for spec in self._vm_checks
        ]
        findings = apply_waivers(
            findings,
            namespace=vm.namespace,
            name=vm.name,
            labels=vm.labels,
            settings=settings,
            at=at,
        )
        return VMResult(vm, ctx, sorted(findings, key=lambda f: f.check_id)), problems

    def unpaired(self, i: int, stage: str, exc: Exception) -> Unpaired:
        """The ``i``-th VM whose record could not be built (or checked, or entered) because
        ``exc`` was raised at ``stage`` (a few words: "pairing", "report entry"): every VM
        check ERROR at its own severity (so the VM is UNKNOWN, never better; no waiver
        applies: an unknown verdict accepts no risk), and one collection problem naming the
        VM, its file, the stage and the exception's type and message (quoted values left
        out: :func:`shown_error`). The audit is then incomplete (``run.complete`` false).

        The traceback (its frames only) goes to the debug log."""
        if isinstance(exc, StagingError) and isinstance(exc.__cause__, Exception):
            stage, exc = "staging", exc.__cause__  # read before any VM was paired
        facts = self._inventory.vms[i][0]
        ref = f"{facts.namespace}/{facts.name}"
        shown = shown_error(exc)
        log.debug(
            "building the record of VM %s raised at %s: %s\n%s",
            ref,
            stage,
            shown,
            "".join(traceback.format_tb(exc.__traceback__)),
        )
        origin = self._data.origins.get(("VirtualMachine", facts.namespace, facts.name))
        reason = (
            f"VirtualMachine {ref}: its record could not be built ({stage}): {shown}; "
            "every check of it is ERROR"
        )
        problem = CollectionProblem(
            reason=reason,
            file=origin,
            kind="VirtualMachine",
            namespace=facts.namespace,
            name=facts.name,
        )
        return self._all_errors(
            facts.obj,
            facts.labels,
            facts.created,
            problem,
            f"its record could not be built ({stage}): {shown}.",
            {"stage": stage, "exception": type(exc).__name__},
        )

    def _all_errors(
        self,
        obj: dict[str, Any],
        labels: dict[str, str],
        created: datetime | None,
        problem: CollectionProblem,
        why: str,
        evidence: dict[str, Any],
    ) -> Unpaired:
        """The :class:`Unpaired` VM of ``problem`` (its namespace and name): every VM check
        ERROR, "Cannot evaluate <check> for VM <ref>: ``why``" with ``evidence``; its policy
        and RPO from its namespace and ``labels``."""
        namespace, name = problem.namespace or "", problem.name or ""
        ref = f"{namespace}/{name}"
        findings = [
            Finding(
                check_id=spec.id,
                status=Status.ERROR,
                # the guest is not read: its checks' defaults, raised to the worst FAIL a
                # check gives any guest (worst_severity, h46; windows_severity is not read)
                severity=spec.error_severity_for("unknown"),
                message=f"Cannot evaluate {spec.id} for VM {ref}: {why}",
                evidence=evidence,
            )
            for spec in sorted(self._vm_checks, key=lambda c: c.id)
        ]
        policy, thresholds = resolve_policy(self._settings, namespace, labels)
        return Unpaired(
            obj=obj,
            namespace=namespace,
            name=name,
            labels=labels,
            created=created,
            policy=policy,
            rpo_hours=thresholds.rpo_hours,
            findings=findings,
            problem=problem,
        )

    def unread_vms(self) -> list[Unpaired]:
        """The VirtualMachines the source named and did not read (``ClusterData.refused``:
        a label value the API server refuses, a spec that is no mapping, a null map, an
        apiVersion it does not read), none of that namespace and name being read. Each is
        listed as an
        :class:`Unpaired` VM (readiness UNKNOWN, every check ERROR naming the problem), so a
        VM never drops out of the report for being malformed: it was named among the
        collection problems but missing from ``vms``, where a reader looking it up found
        nothing (fz36). Sorted by namespace and name; ``problem`` is the source's first one
        for the VM (already among the audit's problems: not added again). Its labels and
        annotations were not read, so its policy and owner come from its namespace alone.
        """
        refused = {(ns, n) for k, ns, n in self._data.refused if k == "VirtualMachine" and ns}
        refused -= {(facts.namespace, facts.name) for facts, _, _ in self._inventory.vms}
        if not refused:
            return []
        first: dict[tuple[str, str], CollectionProblem] = {}
        for p in self._data.problems:
            if p.kind == "VirtualMachine" and (p.namespace, p.name) in refused:
                first.setdefault((p.namespace or "", p.name or ""), p)
        out: list[Unpaired] = []
        for namespace, name in sorted(refused):
            problem = first.get((namespace, name)) or CollectionProblem(
                reason=f"VirtualMachine {namespace}/{name} was not read",
                kind="VirtualMachine",
                namespace=namespace,
                name=name,
                kinds=("VirtualMachine",),
            )
            where = f" ({problem.file})" if problem.file else ""
            out.append(
                self._all_errors(
                    {"metadata": {"namespace": namespace, "name": name}},
                    {},
                    None,
                    problem,
                    f"its VirtualMachine object was not read{where}; see the collection problems.",
                    {"stage": "reading", "field": problem.field},
                )
            )
        return out

    def platform(
        self,
        vms: list[PlatformFacts],
        problems: list[CollectionProblem],
        *,
        unpaired: Sequence[str] = (),
    ) -> list[Finding]:
        """Run the platform checks over every VM's facts; a check that raises appends its
        collection problem to ``problems``. ``unpaired``: ``namespace/name`` of the VMs whose
        facts could not be made (:meth:`unpaired`): a PASS or "nothing to judge" cannot
        speak for them, so it is ERROR naming them."""
        ctx = CheckContext(at=self._at, thresholds=self._settings.thresholds, index=self.index)
        return [
            _run(
                spec,
                ctx,
                self._data,
                self.incomplete,
                None,
                vms,
                crashes=problems,
                unpaired=unpaired,
            )
            for spec in CATALOG.values()
            if spec.scope == "platform"
        ]


@dataclass
class Unpaired:
    """A VM whose record could not be built: what the report can still say of it.

    Attributes:
        obj: the VirtualMachine as read (redacted by its source).
        namespace, name, labels, created: read from its metadata.
        policy, rpo_hours: the recovery policy that applies and its RPO (hours).
        findings: one ERROR per VM check, sorted by check id.
        problem: the collection problem naming the VM, stage and exception.
    """

    obj: dict[str, Any]
    namespace: str
    name: str
    labels: dict[str, str]
    created: datetime | None
    policy: str
    rpo_hours: float
    findings: list[Finding]
    problem: CollectionProblem

    @property
    def ref(self) -> str:
        """``namespace/name``."""
        return f"{self.namespace}/{self.name}"


#: A quoted value in an exception's text ('x', "x"): a field value, which may be secret.
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")


def shown_error(exc: BaseException, limit: int = 160) -> str:
    """``Type (message)`` of ``exc`` as a report or log may show it: quoted values (a
    ``KeyError``'s key, a ``ValueError``'s ``'value'``) become ``'…'``, as they may be a
    field's value (a label, an annotation: sources redact secret fields by name only,
    ``auditor.redact``), and the message is cut to ``limit`` characters."""
    text = _QUOTED.sub("'…'", str(exc))
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return f"{type(exc).__name__} ({text})" if text else type(exc).__name__


def _kind_states(
    spec: CheckSpec, data: ClusterData, index: ClusterIndex, namespace: str | None
) -> tuple[list[str], list[str]]:
    """``(unavailable, partial)``: the kinds ``spec`` requires whose list could not be read,
    and those some of whose objects could not (that could concern a VM in ``namespace``; with
    None, anywhere)."""
    unavailable = [k for k in spec.requires if data.state(k) is KindState.UNAVAILABLE]
    partial = [
        k
        for k in spec.requires
        if data.state(k) is KindState.PARTIAL
        or (index.partial_for(k, namespace) if namespace is not None else k in index.partial)
    ]
    return unavailable, partial


class _KindStates:
    """:func:`_kind_states` per (check, namespace), worked out once per audit (it depends on
    nothing else, and is asked for every VM x check)."""

    def __init__(self, data: ClusterData, index: ClusterIndex) -> None:
        self._data, self._index = data, index
        self._seen: dict[tuple[str, str], tuple[list[str], list[str]]] = {}

    def of(self, spec: CheckSpec, namespace: str) -> tuple[list[str], list[str]]:
        """Fresh lists (findings keep them in their evidence)."""
        key = (spec.id, namespace)
        hit = self._seen.get(key)
        if hit is None:
            hit = self._seen[key] = _kind_states(spec, self._data, self._index, namespace)
        return list(hit[0]), list(hit[1])


def _run(
    spec: CheckSpec,
    ctx: CheckContext,
    data: ClusterData,
    incomplete: set[str],
    vm: VMRecord | None,
    vms: list[PlatformFacts] | None = None,
    *,
    related: list[CollectionProblem] | None = None,
    crashes: list[CollectionProblem],
    others: list[tuple[str, list[tuple[str, str]]]] | None = None,
    known: _KindStates | None = None,
    unpaired: Sequence[str] = (),
) -> Finding:
    if known is not None and vm is not None:
        unavailable, partial = known.of(spec, vm.namespace)
    else:
        unavailable, partial = _kind_states(spec, data, ctx.index, vm.namespace if vm else None)
    if (
        vm is not None
        and "PersistentVolumeClaim" not in partial
        and not _NEEDS_CLAIMS.isdisjoint(spec.requires)
        and data.state("PersistentVolumeClaim") is KindState.PARTIAL
        and any(p.obj is None for p in vm.pvcs)
    ):
        # a claim the VM needs was not read while some claims were not: the unread one may
        # carry what pairs the VM with its backups (velero.io/exclude-from-backup, which makes
        # the kubevirt plugin refuse the VM): fz34, a claim's null labels
        partial = [*partial, "PersistentVolumeClaim"]
    if unavailable or partial:
        incomplete.add(spec.id)
    if unavailable:
        what = f"VM {vm.ref}" if vm else "the cluster"
        return _finding(
            spec,
            Result(
                Status.ERROR,
                f"Cannot evaluate {spec.id} for {what}: the list of {', '.join(unavailable)} "
                "could not be read.",
                {"unavailable_kinds": unavailable},
            ),
            vm,
        )
    conflicted = _conflicting_objects(vm, data) if vm is not None and data.conflicts else []
    if vm is not None and conflicted:
        incomplete.add(spec.id)
        return _finding(
            spec,
            Result(
                Status.ERROR,
                f"Cannot evaluate {spec.id} for VM {vm.ref}: the export defines "
                f"{', '.join(conflicted)} twice with different content, and which copy the "
                "cluster holds cannot be told (see the collection problems).",
                {"conflicting_copies": conflicted},
            ),
            vm,
        )
    malformed: list[dict[str, str]] = []
    if vm is not None:
        malformed = _malformed_inputs(spec, vm, related or [])
    try:
        result = spec.run(ctx, vm, vms or [])
    except Exception as exc:  # a check bug must not crash the audit or become a PASS
        result = _crashed(spec, vm, exc, crashes)
    if malformed:
        return _finding(spec, _malformed_error(spec, vm, malformed, result))
    if vm is not None and result.status is Status.PASS and "VirtualMachine" in spec.requires:
        # A cross-VM check (duplicate identity) passes on the absence of a clash; another
        # VM's malformed field it reads might hide one.
        hidden = [
            {"kind": "VirtualMachine", "object": ref, "field": path, "reason": reason}
            for ref, found in others or []
            for path, reason in found
            if spec.reads_field(path)
        ]
        if hidden:
            return _finding(spec, _malformed_error(spec, vm, hidden, result))
    # the partly unread kinds that could change this result: all of them, unless the check
    # says it rests on none of some (Result.holds_without: a NOT_APPLICABLE read from the VM
    # alone, a FAIL a read object proves at the check's worst severity; round h47a)
    doubt = [k for k in partial if k not in result.holds_without] if partial else partial
    unsure = (
        result.status is Status.FAIL
        or (
            vm is not None
            and result.status in (Status.PASS, Status.NOT_APPLICABLE)
            and spec.id in JUDGES_NEWEST
        )
        or (
            vm is not None
            and result.status in (Status.PASS, Status.NOT_APPLICABLE)
            and spec.id in PASS_ON_ABSENCE
        )
        or (
            vm is not None
            and result.status is Status.PASS
            and spec.id in JUDGES_EVERY_BACKUP
            and "Backup" in doubt
        )
        # "no (usable) backup to judge" while some Backups could not be read: the unread
        # ones may be the backups it would judge
        or (vm is not None and result.status is Status.NOT_APPLICABLE and "Backup" in doubt)
        # no VMI was read for this VM while some VMIs were not: "not running" is a guess
        or (vm is not None and vm.vmi is None and "VirtualMachineInstance" in doubt)
        # a cluster-wide PASS or "nothing to judge" speaks for every object of the kinds it
        # reads: an unread one may be the paused Schedule or the missing class (red team:
        # a Schedule item written 'kind: schedule' turned RR-PLT-002's FAIL into a PASS)
        or (vm is None and result.status in (Status.PASS, Status.NOT_APPLICABLE))
        # a claim the VM needs was not read while some claims were not: the unread one may
        # be it, with the label or state that decides the check (fz34: a claim's null labels
        # hid velero.io/exclude-from-backup, and RR-BKP-001 passed on the plugin's backing
        # up a VM it refuses)
        or (
            vm is not None
            and result.status in (Status.PASS, Status.NOT_APPLICABLE)
            and "PersistentVolumeClaim" in doubt
            and any(p.obj is None for p in vm.pvcs)
        )
    )
    if vm is None and unpaired and result.status in (Status.PASS, Status.NOT_APPLICABLE):
        # the VMs whose facts could not be made may be the ones it would name
        return _finding(
            spec,
            Result(
                Status.ERROR,
                f"Cannot conclude {spec.id} for the cluster: the record of VM(s) "
                f"{', '.join(unpaired)} could not be built (see the collection problems). "
                f"Without them: {result.status.value}: {result.message}",
                {
                    **result.evidence,
                    "unpaired_vms": list(unpaired),
                    "would_be": {"status": result.status.value, "message": result.message},
                },
                _unsure_severity(spec, result),
            ),
        )
    if doubt and unsure:
        # A FAIL may rest on an object being absent, and the unread objects may be the very
        # ones that would satisfy it. A PASS that judges the newest object may be contradicted
        # by an unread newer one. A PASS that found a good object (existence) is earned.
        what = f"VM {vm.ref}" if vm else "the cluster"
        would = {"would_fail": result.message} if result.status is Status.FAIL else {}
        unread = _unread_named(doubt, ctx.index, vm.namespace if vm else None)
        named = f" ({', '.join(unread)})" if unread else ""
        return _finding(
            spec,
            Result(
                Status.ERROR,
                f"Cannot conclude {spec.id} for {what}: some {', '.join(doubt)} objects could "
                f"not be read{named}. Without them: {result.status.value}: {result.message}",
                {
                    **result.evidence,
                    "incomplete_kinds": partial,
                    **({"unread_objects": unread} if unread else {}),
                    **would,
                    "would_be": {"status": result.status.value, "message": result.message},
                },
                _unsure_severity(spec, result, vm),
            ),
        )
    if partial:
        result = Result(
            result.status,
            result.message,
            {**result.evidence, "incomplete_kinds": partial},
            result.severity,
            result.basis,
        )
    return _finding(spec, result, vm)


def _unread_named(kinds: list[str], index: ClusterIndex, namespace: str | None) -> list[str]:
    """``Kind namespace/name`` of the unread objects of ``kinds`` that could concern a VM in
    ``namespace`` (any namespace with None), as :meth:`ClusterIndex.unread_names` knows them:
    an object the source could not parse at all has no name and is not listed (the
    collection problems name its file)."""
    out: list[str] = []
    for kind in kinds:
        if namespace is None:
            out += [f"{kind} {ref}" for ref in sorted(index.unread_scopes.get(kind, {}))]
        else:
            out += [f"{kind} {ref}" for ref in index.unread_names(kind, namespace)]
    return out


def _conflicting_objects(vm: VMRecord, data: ClusterData) -> list[str]:
    """The VM's own objects (itself, its VMI, PVCs, their PVs and DataVolumes) the export
    defines twice with different content (``ClusterData.conflicts``), as ``Kind ns/name``."""
    ns = vm.namespace
    mine = [("VirtualMachine", ns, vm.name), ("VirtualMachineInstance", ns, vm.name)]
    for p in vm.pvcs:
        mine += [("PersistentVolumeClaim", ns, p.name), ("DataVolume", ns, p.name)]
        volume = dig(p.obj, "spec", "volumeName")
        if isinstance(volume, str):
            mine.append(("PersistentVolume", "", volume))
    return [
        f"{k} {n}/{name}" if n else f"{k} {name}"
        for k, n, name in mine
        if (k, n, name) in data.conflicts
    ]


#: Kinds whose checks judge a VM's claims or its pairing with backups: with a claim the VM
#: needs unread, their PASS cannot conclude (:func:`_run`).
_NEEDS_CLAIMS = frozenset({"PersistentVolumeClaim", "Backup"})
#: Checks whose PASS judges the *newest* Backup/Restore of a VM (phase, PVCs, retention,
#: off-cluster copy, restore drill): with some objects of a required kind unread, an unread
#: one may be newer, so their PASS cannot conclude either (issue 17).
#: RR-BKP-012 judges the objects the VM references against the newest usable Backup alone
#: (``good[0]``): an unread Backup may be a newer usable one that leaves a Secret or pinned
#: ControllerRevision out (round h47a).
JUDGES_NEWEST = frozenset(
    {
        "RR-BKP-003",
        "RR-BKP-004",
        "RR-BKP-006",
        "RR-BKP-007",
        "RR-BKP-012",
        "RR-RST-001",
        "RR-RST-002",
    }
)
#: Checks whose PASS judges *every* usable Backup of a VM (RR-NET-002: each one holds the
#: NADs of the VM's Multus NICs): an unread Backup may be one more usable backup that leaves
#: a NAD out, so with Backups partly unread their PASS cannot conclude (round h47a). Only
#: the Backup kind: their PASS rests on the other kinds' objects that were read (the NAD
#: itself, absent when unread, fails them), not on an object being absent.
JUDGES_EVERY_BACKUP = frozenset({"RR-NET-002"})
#: Checks whose PASS or NOT_APPLICABLE may rest on no object of a required kind matching (no
#: Service selects the VM): an unread object may be the one that would (issue 17).
PASS_ON_ABSENCE = frozenset({"RR-NET-003"})
#: Reading one kind means reading these too (a PVC's reclaim policy and CSI driver come
#: from its PersistentVolume, else its StorageClass).
_IMPLIED_KINDS = {"PersistentVolumeClaim": ("PersistentVolume", "StorageClass")}


#: Kinds paired with a VM through its metadata (namespace, labels, creation time).
_PAIRING_KINDS = frozenset({"Backup", "Restore", "Schedule", "VolumeSnapshot"})
#: VM fields outside the template that pairing reads (labels, creation, DataVolume templates,
#: and the conditions that say whether it ran while a Backup began: ``VMFacts.ran_during``).
_PAIRING_PATHS = ("metadata.", "spec.dataVolumeTemplates", "status.conditions")


def related_problems(vm: VMRecord, index: ClusterIndex) -> list[CollectionProblem]:
    """Malformed-field problems of the objects this VM's checks read about it.

    Those are its VirtualMachineInstance, its PVCs (disks and persistent state) with
    their PersistentVolumes and StorageClasses, and its DataVolumes.
    """
    out = list(index.record_problems("VirtualMachineInstance", vm.namespace, vm.name))
    for p in vm.pvcs:
        out += index.record_problems("PersistentVolumeClaim", vm.namespace, p.name)
        pvc = index.pvc_records.get((vm.namespace, p.name))
        if pvc is not None and pvc.volume_name:
            out += index.record_problems("PersistentVolume", "", pvc.volume_name)
        if pvc is not None and pvc.storage_class:
            out += index.record_problems("StorageClass", "", pvc.storage_class)
    for d in vm.spec.disks:
        if d.volume_type == "dataVolume" and d.volume_name:
            out += index.record_problems("DataVolume", vm.namespace, d.volume_name)
    return out


def _malformed_inputs(
    spec: CheckSpec, vm: VMRecord, related: list[CollectionProblem]
) -> list[dict[str, str]]:
    """The malformed fields ``spec`` reads for ``vm``: VM fields under its ``reads`` (and
    ``metadata``, which pairing reads for every check) and fields of related objects of the
    kinds it requires."""
    if not vm.problems and not related:
        return []  # the usual case, asked for every VM x check
    pairs = bool(_PAIRING_KINDS.intersection(spec.requires))
    out = [
        {"kind": "VirtualMachine", "object": vm.ref, "field": path, "reason": reason}
        for path, reason in vm.problems
        if (path.startswith(_PAIRING_PATHS) and pairs) or spec.reads_field(path)
    ]
    kinds = set(spec.requires)
    for kind in spec.requires:
        kinds.update(_IMPLIED_KINDS.get(kind, ()))
    seen: set[tuple[str, str, str]] = set()
    for p in related:
        ref = f"{p.namespace}/{p.name}" if p.namespace else str(p.name)
        key = (str(p.kind), ref, str(p.field))
        if p.kind in kinds and key not in seen:
            seen.add(key)
            out.append({"kind": key[0], "object": ref, "field": key[2], "reason": p.reason})
    return out


def _malformed_error(
    spec: CheckSpec, vm: VMRecord | None, malformed: list[dict[str, str]], would: Result
) -> Result:
    """ERROR naming each malformed field, with what the check gives without them."""
    names = ", ".join(
        f"{m['field']}"
        if vm is not None and (m["kind"], m["object"]) == ("VirtualMachine", vm.ref)
        else f"{m['kind']} {m['object']} {m['field']}"
        for m in malformed
    )
    ref = vm.ref if vm else "the cluster"
    without = (
        f" Without them: {would.status.value}: {would.message}"
        if would.status is not Status.ERROR
        else ""
    )
    return Result(
        Status.ERROR,
        f"Cannot evaluate {spec.id} for VM {ref}: malformed field(s) {names}.{without}",
        {
            "malformed_fields": [
                m["field"]
                for m in malformed
                if vm is not None and (m["kind"], m["object"]) == ("VirtualMachine", vm.ref)
            ],
            "malformed_objects": malformed,
            "would_be": {"status": would.status.value, "message": would.message},
        },
        _unsure_severity(spec, would, vm),
    )


def _unsure_severity(spec: CheckSpec, would: Result, vm: VMRecord | None = None) -> Severity:
    """The severity of an ERROR that stands for ``would`` (the result without the unread or
    malformed input): the worse of its severity and the check's default. An ERROR says the
    truth is unknown, and the truth may be the check's default FAIL: a would-be medium FAIL
    (e.g. RR-BKP-001's "object backed up, disk data not") as a medium ERROR let a remaining
    medium FAIL make the VM AT_RISK where the check could have found it NOT_READY
    (``docs/readiness.md``: an error never ranks above a high FAIL). For a Windows guest
    (``vm``), the check's default is its ``windows_severity`` when it has one (round m42,
    mutation seed 4204: RR-RST-002's drill created after the audit instant left it unread, a
    high FAIL on Windows became a medium ERROR, NOT_READY -> UNKNOWN of medium ERRORs alone).
    For a check whose FAIL can be worse than its default for any guest (``worst_severity``),
    the default is that worst (round h46, shared fuzz case 10's pattern: RR-NIC-001's refused
    MAC is a high FAIL, and a malformed ``macAddress`` hiding it gave a medium ERROR, so a
    remaining medium FAIL read AT_RISK where the VM was NOT_READY):
    :meth:`CheckSpec.error_severity_for`."""
    default = spec.error_severity_for(vm.spec.os if vm is not None else None)
    found = would.severity or default
    return found if found.rank <= default.rank else default


def _crashed(
    spec: CheckSpec, vm: VMRecord | None, exc: Exception, crashes: list[CollectionProblem]
) -> Result:
    """ERROR for a check that raised; the traceback goes to the debug log only."""
    what = f"VM {vm.ref}" if vm else "the cluster"
    log.debug("check %s raised on %s", spec.id, what, exc_info=exc)
    reads = ", ".join([*spec.reads, *spec.requires]) if vm else ", ".join(spec.requires)
    detail = str(exc)[:120]
    reason = (
        f"Check {spec.id} could not evaluate {what}: {type(exc).__name__} ({detail}) while "
        f"reading {reads or 'its inputs'}; some of them are malformed"
    )
    crashes.append(
        CollectionProblem(
            reason=reason,
            kind="VirtualMachine" if vm else None,
            namespace=vm.namespace if vm else None,
            name=vm.name if vm else None,
            field=", ".join(spec.reads) if vm else None,
        )
    )
    return Result(Status.ERROR, reason + ".", {"exception": type(exc).__name__, "reads": reads})


def _finding(spec: CheckSpec, result: Result, vm: VMRecord | None = None) -> Finding:
    """The finding of ``result``; one without a severity takes the check's, and an ERROR of
    ``vm`` without one the check's default for its guest (:meth:`CheckSpec.severity_for`):
    what it could not conclude may be the FAIL the check gives that guest. Round h43c: a
    Windows VM's RR-FW-003 ERROR for an incomplete VM list (a clash with an unread VM is a
    high FAIL on Windows) was medium, UNKNOWN of medium ERRORs alone (AT_RISK at worst).
    Round h46: such an ERROR takes the worst severity the check's FAIL can take
    (:meth:`CheckSpec.error_severity_for`), for any guest, a crash's included (``_crashed``)."""
    severity = result.severity
    if severity is None:
        if result.status is Status.ERROR:
            severity = spec.error_severity_for(vm.spec.os if vm is not None else None)
        else:
            severity = spec.severity
    return Finding(
        check_id=spec.id,
        status=result.status,
        severity=severity,
        message=result.message,
        evidence=result.evidence,
        basis=result.basis,
    )
