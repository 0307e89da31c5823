"""Is there anything to audit? Refuse data that would give a clean-looking empty report.

An empty folder, a single file of junk, a VirtualMachine list that could not be
read: each gives a report with no VM and no failed check, which reads as
"all good". :func:`require_vms` turns these into :class:`NothingToAudit` with a
one-line reason; :func:`vm_list_gap` names a VM list that was read only in part.
"""

from __future__ import annotations

from auditor.sources.base import ClusterData, KindState

__all__ = ["NothingToAudit", "require_vms", "vm_list_gap"]

_VM = "VirtualMachine"


class NothingToAudit(Exception):
    """The source holds no VirtualMachine to audit, or its VM list could not be read.

    The message is one line: what was read and why nothing can be audited.
    """


def _problems(data: ClusterData) -> str:
    reasons = [p.reason for p in data.problems if _VM in p.kinds or p.kind == _VM]
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
