"""DEF checks: the VM definition a restore brings back can be started."""

from __future__ import annotations

from auditor.checks.registry import (
    CheckContext,
    Result,
    check,
    errored,
    failed,
    not_applicable,
    passed,
)
from auditor.inventory import VMRecord
from auditor.inventory.revisions import PinnedRef
from auditor.models import Severity
from auditor.sources.base import KindState

KV_INSTANCETYPES = "https://kubevirt.io/user-guide/user_workloads/instancetypes/"
KV_MISSING_INSTANCETYPE = "https://github.com/kubevirt/kubevirt/issues/8142"
KV_CREATE_WITHOUT_INSTANCETYPE = "https://github.com/kubevirt/kubevirt/pull/14219"
#: States in which the absence of an object is a fact (the whole list was read, or the API
#: group is not served at all).
_KNOWN = (KindState.COMPLETE, KindState.NOT_INSTALLED)


@check(
    "RR-DEF-001",
    title="The instancetype and preference the VM names exist, live or as its pinned revision",
    severity=Severity.HIGH,
    rationale="An instancetype gives the VM its CPU and memory, a preference its device and "
    "firmware defaults. KubeVirt copies the one in use into a ControllerRevision the VM is "
    "pinned to; when neither that revision nor the named object exists, the VM cannot start "
    "(FailedFindInstancetype) and a restore of its definition brings back a VM that cannot "
    "start either (older KubeVirt refuses to create it at all).",
    remediation="Recreate the instancetype or preference (from GitOps, or the "
    "common-instancetypes bundle), or restore the ControllerRevision the VM is pinned to, "
    "and include both in the VM's backups.",
    references=(KV_INSTANCETYPES, KV_MISSING_INSTANCETYPE, KV_CREATE_WITHOUT_INSTANCETYPE),
    # the matchers and the revisions KubeVirt pinned them to (status.<key>Ref)
    reads=(
        "spec.instancetype",
        "spec.preference",
        "status.instancetypeRef",
        "status.preferenceRef",
    ),
)
def definition_resolves(vm: VMRecord, ctx: CheckContext) -> Result:
    """N/A when the VM names neither; FAIL high naming each reference found neither live nor
    as its pinned ControllerRevision, on complete lists; ERROR when a list it would be in
    could not be read (absence is then no evidence); PASS naming how each resolved."""
    refs = [vm.revisions[w] for w in ("instancetype", "preference") if w in vm.revisions]
    if not refs:
        return not_applicable(f"VM {vm.ref} names no instancetype or preference.")
    data = ctx.index.data
    ev = {"references": [r.to_dict() for r in refs]}
    missing: list[tuple[PinnedRef, list[str]]] = []
    unread: list[tuple[PinnedRef, list[str]]] = []
    for r in refs:
        if r.source != "missing":
            continue
        kinds = [r.kind] + (["ControllerRevision"] if r.revision else [])
        unknown = [
            k
            for k in kinds
            if data.state(k) not in _KNOWN or ctx.index.partial_for(k, vm.namespace)
        ]
        (unread if unknown else missing).append((r, unknown))
    if unread:
        r, kinds = unread[0]
        return errored(
            f"VM {vm.ref} uses {r.kind} {r.name}, which was not found ({r.note}), but the "
            f"{', '.join(kinds)} list could not be read in full: whether it exists is unknown.",
            unread_kinds=sorted({k for _, ks in unread for k in ks}),
            **ev,
        )
    if missing:
        names = [
            f"{r.kind} {r.name}" + ("" if r.note.endswith("not found") else f" ({r.note})")
            for r, _ in missing
        ]
        return failed(
            f"VM {vm.ref} uses {', '.join(names)}: neither the object nor the revision it is "
            "pinned to exists, so it cannot start, here or restored.",
            missing=[f"{r.kind}/{r.name}" for r, _ in missing],
            **ev,
        )
    how = ", ".join(f"{r.kind} {r.name} ({r.source})" for r in refs)
    return passed(f"VM {vm.ref} resolves {how}.", **ev)
