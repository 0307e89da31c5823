"""Is there anything to audit? Refuse data that would give a clean-looking empty report.

An empty folder, a single file of junk, a VirtualMachine list that could not be
read: each gives a report with no VM and no failed check, which reads as
"all good". :func:`require_vms` turns these into :class:`NothingToAudit` with a
one-line reason; :func:`vm_list_gap` names a VM list that was read only in part.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from auditor.kinds import spec_for_file_stem
from auditor.models import CollectionProblem
from auditor.sources.base import ClusterData, KindState

__all__ = ["NothingToAudit", "problems_for", "require_vms", "vm_list_gap"]

_VM = "VirtualMachine"


class NothingToAudit(Exception):
    """The source holds no VirtualMachine to audit, or its VM list could not be read.

    The message is one line: what was read and why nothing can be audited.
    """


def problems_for(data: ClusterData, kind: str) -> list[CollectionProblem]:
    """The collection problems of ``data`` that leave ``kind``'s list incomplete, the most
    telling first: those about an object of ``kind``, then those about a file named for it
    (``virtualmachines.yaml``), then the rest by how few kinds they may hold (a refused
    ``persistentvolumeclaims.yaml`` holds VirtualMachines only if its ``kind:`` lines say
    so, as an ownerReference does), each group in the order found.

    (``--max-file-bytes 10`` named persistentvolumeclaims.yaml as why the VirtualMachine
    list could not be read, while virtualmachines.yaml was refused too: review lo31.)
    """

    def rank(p: CollectionProblem) -> tuple[int, int]:
        if p.kind == kind:
            return (0, 0)
        named = spec_for_file_stem(PurePosixPath(p.file).stem) if p.file else None
        if named is not None and named.kind == kind:
            return (1, 0)
        return (2, len(p.kinds))

    found = [p for p in data.problems if kind in p.kinds or p.kind == kind]
    return sorted(found, key=rank)  # stable: the order found within a rank


def _problems(data: ClusterData) -> str:
    reasons = [p.reason for p in problems_for(data, _VM)]
    if not reasons:
        return ""
    more = f" (+{len(reasons) - 1} more)" if len(reasons) > 1 else ""
    return f": {reasons[0]}{more}"


def require_vms(data: ClusterData) -> None:
    """Raise unless ``data`` holds at least one VirtualMachine.

    Raises:
        NothingToAudit: no VirtualMachine object was found ("no VirtualMachine
            objects found in <location>") or the VM list could not be read.
    """
    if data.of(_VM):
        return
    where = data.info.location
    unread = _problems(data)
    if unread:
        raise NothingToAudit(
            f"no VirtualMachine objects found in {where}: the VirtualMachine list could not "
            f"be read{unread}"
        )
    read = sum(len(v) for v in data.objects.values())
    detail = f"{read} other object(s) read" if read else "nothing readable"
    if data.skipped:
        # files were read, but held only objects of kinds not audited (an export of the
        # CRDs alone said "nothing readable", as an empty folder does: trial nu34)
        skipped = sorted(data.skipped.items(), key=lambda kv: (-kv[1], kv[0]))
        named = ", ".join(f"{key} ({n})" for key, n in skipped[:3])
        more = f" and {len(skipped) - 3} more kind(s)" if len(skipped) > 3 else ""
        detail = (
            f"{read} other object(s) read" if read else "no object of a kind the auditor reads"
        ) + f"; {sum(data.skipped.values())} object(s) of kinds it does not read: {named}{more}"
    if data.state(_VM) is KindState.COMPLETE:  # an empty `oc get virtualmachines` List, read
        detail = f"its VirtualMachine list was read and is empty; {read} other object(s) read"
    if data.problems:
        detail += f", {len(data.problems)} collection problem(s)"
    raise NothingToAudit(f"no VirtualMachine objects found in {where} ({detail})")


def vm_list_gap(data: ClusterData) -> str | None:
    """Say why the VirtualMachine list is incomplete (some VMs may be missing), or None."""
    if data.state(_VM) in (KindState.COMPLETE, KindState.NOT_INSTALLED):
        return None
    return f"the VirtualMachine list from {data.info.location} is incomplete{_problems(data)}"
