"""BKP-011: are backups of a running VM application-consistent (a guest agent to freeze it)?

A snapshot of a running VM is taken while the guest writes. Only the QEMU guest agent can
freeze the guest's filesystems first (``virt-freezer`` in a Velero pre-hook, or KubeVirt's own
online snapshot); the VMI condition ``AgentConnected`` says whether one answers. Without it
every backup is crash-consistent: like pulling the power cord, databases replay or lose their
last transactions. A stopped VM's disks are at rest, so its backups are consistent anyway.

A connected agent is not a frozen backup: when a backup hook fails (virt-freezer could not
freeze a paused VM, kubevirt-velero-plugin#68; or the agent stopped answering, kubevirt#9423)
and the hook's ``onError`` is Continue, Velero snapshots the unfrozen disks and still ends
``Completed``, counting the failure in ``status.hookStatus.hooksFailed`` (velero
pkg/apis/velero/v1/backup_types.go ``HookStatus``).
"""

from __future__ import annotations

from auditor.checks.registry import (
    DISK_DATA,
    CheckContext,
    Result,
    check,
    failed,
    not_applicable,
    passed,
)
from auditor.inventory import VMRecord
from auditor.inventory.facts import usable
from auditor.kubevalues import dig
from auditor.models import Basis, Severity

KV_FREEZE = "https://github.com/kubevirt/kubevirt/blob/main/docs/freeze.md"
KV_SNAPSHOT = "https://kubevirt.io/user-guide/storage/snapshot_restore_api/"
VELERO_HOOKS = "https://velero.io/docs/main/backup-hooks/"
KVP_PAUSED_FREEZE = "https://github.com/kubevirt/kubevirt-velero-plugin/issues/68"


def agent_connected(vmi: dict[str, object] | None) -> bool | None:
    """The VMI's ``AgentConnected`` condition: True, False (absent or not True), None (no VMI,
    or one that has Succeeded or Failed: the guest no longer runs, red team)."""
    if vmi is None or dig(vmi, "status", "phase") in ("Succeeded", "Failed"):
        return None
    conds = dig(vmi, "status", "conditions")
    for c in conds if isinstance(conds, list) else []:
        if isinstance(c, dict) and c.get("type") == "AgentConnected":
            return c.get("status") == "True"
    return False


@check(
    "RR-BKP-011",
    title="Backups of the running VM can freeze its filesystems (guest agent connected)",
    severity=Severity.MEDIUM,
    rationale="Without a connected QEMU guest agent nothing can freeze the guest's filesystems "
    "before a snapshot, so every backup of the running VM is crash-consistent: databases and "
    "journals must recover as after a power cut, and may lose their last writes.",
    remediation="Install and start qemu-guest-agent in the guest (the VMI then shows condition "
    "AgentConnected) and freeze with a virt-freezer pre/post backup hook; or set "
    "require_application_consistent: false for VMs where crash consistency is accepted.",
    references=(KV_FREEZE, KV_SNAPSHOT, VELERO_HOOKS, KVP_PAUSED_FREEZE),
    requires=("VirtualMachineInstance",),
    reads=DISK_DATA,
)
def application_consistent(vm: VMRecord, ctx: CheckContext) -> Result:
    """N/A for a stopped VM; FAIL info without an agent, or when the newest usable backup
    counts a failed hook (its freeze may not have run); medium with the policy option."""
    connected = agent_connected(vm.vmi)
    required = ctx.thresholds.require_application_consistent
    ev = {"agent_connected": connected, "require_application_consistent": required}
    if connected is None:
        return not_applicable(f"VM {vm.ref} is not running; its disks are at rest.", **ev)
    sev = Severity.MEDIUM if required else Severity.INFO
    if connected:
        newest = next(iter(usable(vm)), None)
        hooks = newest.backup.hooks_failed if newest else 0
        if newest is not None and hooks != 0:
            count = "an unreadable number of" if hooks is None else str(hooks)
            return failed(
                f"VM {vm.ref} has a connected guest agent, but its newest usable backup "
                f"{newest.backup.name} counts {count} failed hook(s) (status.hookStatus."
                "hooksFailed; Velero does not say which pod's): its virt-freezer freeze may "
                "not have run, so that backup may be crash-consistent only.",
                sev,
                backup=newest.backup.name,
                hooks_failed=hooks,
                **ev,
            ).on(Basis.INFERRED)
        return passed(
            f"VM {vm.ref} has a connected guest agent, so backups can freeze its filesystems.",
            **ev,
        ).on(Basis.OBSERVED)
    msg = (
        f"VM {vm.ref} runs without a connected guest agent (no AgentConnected condition): its "
        "backups are crash-consistent only."
    )
    return failed(msg, sev, **ev).on(Basis.OBSERVED)
