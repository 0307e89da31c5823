"""Run the check catalog over the inventory.

An exception inside a check, a kind the check needs that could not be read,
or a malformed field the check reads, all give ERROR: never PASS. Waivers are
applied last and keep the finding's facts.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime

from auditor.checks import CATALOG, CheckContext, CheckSpec, Result
from auditor.config import AuditSettings
from auditor.inventory import ClusterIndex, VMRecord, build_inventory
from auditor.models import CollectionProblem, Finding, Status
from auditor.policy import resolve_policy
from auditor.sources.base import ClusterData, KindState
from auditor.waivers import apply_waivers

__all__ = ["AuditResult", "VMResult", "evaluate"]

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


def evaluate(data: ClusterData, settings: AuditSettings, *, at: datetime) -> AuditResult:
    """Pair, check and waive. ``at`` is the audit instant (UTC)."""
    index, records = build_inventory(data, at)
    problems = list(data.problems) + index.problems
    incomplete: set[str] = set()
    vm_checks = [c for c in CATALOG.values() if c.scope == "vm"]
    results = []
    for vm in records:
        for path, reason in vm.problems:
            problems.append(
                CollectionProblem(
                    reason=f"VirtualMachine {vm.ref} field {path} {reason}",
                    file=vm.origin,
                    kind="VirtualMachine",
                    namespace=vm.namespace,
                    name=vm.name,
                    field=path,
                    kinds=("VirtualMachine",),
                )
            )
        policy, thresholds = resolve_policy(settings, vm.namespace, vm.labels)
        ctx = CheckContext(at=at, thresholds=thresholds, index=index, policy=policy)
        findings = [_run(spec, ctx, data, incomplete, vm) for spec in vm_checks]
        findings = apply_waivers(
            findings,
            namespace=vm.namespace,
            name=vm.name,
            labels=vm.labels,
            settings=settings,
            at=at,
        )
        results.append(VMResult(vm, ctx, sorted(findings, key=lambda f: f.check_id)))
    ctx = CheckContext(at=at, thresholds=settings.thresholds, index=index)
    platform = [
        _run(spec, ctx, data, incomplete, None, records)
        for spec in CATALOG.values()
        if spec.scope == "platform"
    ]
    return AuditResult(index, results, platform, problems, sorted(incomplete))


def _run(
    spec: CheckSpec,
    ctx: CheckContext,
    data: ClusterData,
    incomplete: set[str],
    vm: VMRecord | None,
    vms: list[VMRecord] | None = None,
) -> Finding:
    unavailable = [k for k in spec.requires if data.state(k) is KindState.UNAVAILABLE]
    partial = [
        k for k in spec.requires if data.state(k) is KindState.PARTIAL or k in ctx.index.partial
    ]
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
        )
    if vm is not None:
        broken = [p for p, _ in vm.problems if any(p.startswith(r) for r in spec.reads)]
        if broken:
            return _finding(
                spec,
                Result(
                    Status.ERROR,
                    f"Cannot evaluate {spec.id} for VM {vm.ref}: field(s) {', '.join(broken)} are "
                    "malformed.",
                    {"malformed_fields": broken},
                ),
            )
    try:
        result = spec.func(vm, ctx) if vm is not None else spec.func(ctx, vms or [])
    except Exception as exc:  # a check bug must not crash the audit or become a PASS
        log.exception("check %s failed on %s", spec.id, vm.ref if vm else "platform")
        result = Result(
            Status.ERROR,
            f"Check {spec.id} could not evaluate {'VM ' + vm.ref if vm else 'the cluster'}: "
            f"{type(exc).__name__}.",
            {"exception": type(exc).__name__},
        )
    if partial and result.status is Status.FAIL:
        # A FAIL may rest on an object being absent, and the unread objects may be the very
        # ones that would satisfy it: the check cannot conclude. A PASS found its evidence.
        what = f"VM {vm.ref}" if vm else "the cluster"
        return _finding(
            spec,
            Result(
                Status.ERROR,
                f"Cannot conclude {spec.id} for {what}: some {', '.join(partial)} objects could "
                f"not be read. Without them: {result.message}",
                {**result.evidence, "incomplete_kinds": partial, "would_fail": result.message},
                result.severity,
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
    return _finding(spec, result)


def _finding(spec: CheckSpec, result: Result) -> Finding:
    return Finding(
        check_id=spec.id,
        status=result.status,
        severity=result.severity or spec.severity,
        message=result.message,
        evidence=result.evidence,
        basis=result.basis,
    )
