"""RST checks: has anyone proven the VM can be restored?"""

from __future__ import annotations

from auditor.checks.registry import CheckContext, Result, check, failed, passed
from auditor.inventory import VMRecord
from auditor.kubevalues import age_hours, format_time
from auditor.models import Severity
from auditor.scope import SelectorError

VELERO_RESTORE_DOC = "https://velero.io/docs/main/api-types/restore/"
_IN_FLIGHT = {"New", "InProgress", "WaitingForPluginOperations", "Finalizing", ""}


@check(
    "RR-RST-001",
    title="A restore of the VM completed within the restore-test window",
    severity=Severity.MEDIUM,
    rationale="An untested backup is a hope, not a recovery plan: restore drills find missing "
    "volumes, NADs, MAC conflicts and firmware state before an outage does.",
    remediation="Run a Velero Restore of the VM from a recent Backup into a drill namespace "
    "(namespaceMapping), boot it, and record the result.",
    references=(VELERO_RESTORE_DOC, "https://velero.io/docs/main/restore-reference/"),
    requires=("Restore", "Backup"),
)
def restore_tested(vm: VMRecord, ctx: CheckContext) -> Result:
    """PASS for a Completed Restore of this VM within ``restore_test_max_age_days``.

    None at all is an info FAIL; a newest test that did not complete is medium;
    a completed but stale test is low.
    """
    max_days = ctx.thresholds.restore_test_max_age_days
    done = [r for r in vm.restores if r.phase not in _IN_FLIGHT]
    if not done:
        return failed(
            f"No restore test of VM {vm.ref} exists.", Severity.INFO, max_age_days=max_days
        )
    r = done[0]
    hours = age_hours(r.completed or r.created, ctx.at)
    ev = {
        "restore": f"{r.namespace}/{r.name}",
        "backup": r.backup_name,
        "phase": r.phase,
        "completed": format_time(r.completed),
        "age_hours": hours,
        "max_age_days": max_days,
        "namespace_mapping": r.namespace_mapping,
    }
    state = vm.state_pvc
    if state is not None:
        try:
            ev["persistent_state_restored"] = r.scope.labels_match(state.labels)
        except SelectorError:
            ev["persistent_state_restored"] = None
    if r.phase != "Completed":
        return failed(
            f"Newest restore test of VM {vm.ref}, {r.name}, is {r.phase}.", Severity.MEDIUM, **ev
        )
    if hours is None or hours > max_days * 24:
        return failed(
            f"Newest restore test of VM {vm.ref}, {r.name}, is older than {max_days} d.",
            Severity.LOW,
            **ev,
        )
    note = ""
    if ev.get("persistent_state_restored") is False:
        note = f" It did not include PVC {state.name if state else ''}, so the drill VM booted with fresh NVRAM/TPM."
    return passed(f"Restore {r.name} of VM {vm.ref} completed {hours / 24:.1f} d ago.{note}", **ev)
