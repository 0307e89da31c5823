"""RST checks: has anyone proven the VM can be restored, and did restoring keep its identity?"""

from __future__ import annotations

from typing import Any

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
from auditor.inventory.drills import (
    CLEAR_MAC_LABEL,
    NEW_UUID_LABEL,
    DrillEval,
    deleted_drill_failures,
)
from auditor.inventory.index import RESTORE_RULE_SRC, VELERO_RESTORE_LABEL, velero_label
from auditor.kubevalues import age_hours, format_time
from auditor.models import Basis, Severity
from auditor.redact import shown_labels
from auditor.scope import SelectorError

VELERO_RESTORE_DOC = "https://velero.io/docs/main/api-types/restore/"
VELERO_RESTORE_REF = "https://velero.io/docs/main/restore-reference/"
VELERO_BACKUP_DELETION = (
    "https://github.com/vmware-tanzu/velero/blob/main/pkg/controller/backup_deletion_controller.go"
)
PLUGIN_LABELS = "https://github.com/kubevirt/kubevirt-velero-plugin/blob/main/pkg/util/util.go"
PLUGIN_VM_ACTION = (
    "https://github.com/kubevirt/kubevirt-velero-plugin/blob/main/pkg/plugin/"
    "vm_restore_item_action.go"
)
KV_LEGACY_UUID = (
    "https://github.com/kubevirt/kubevirt/blob/main/pkg/virt-controller/watch/vm/firmware.go"
)
_IN_FLIGHT = {"New", "InProgress", "WaitingForPluginOperations", "Finalizing", ""}
#: bindings whose MAC is seen on a shared L2 segment (masquerade, passt and passtBinding stay
#: inside the pod: kubevirt pkg/network/admitter/passt.go allows passtBinding on the pod network only)
L2_BINDINGS = frozenset({"bridge", "sriov", "macvtap"})


def _drill_evidence(vm: VMRecord, d: DrillEval, ctx: CheckContext) -> dict[str, Any]:
    r = d.restore
    ev: dict[str, Any] = {
        "restore": f"{r.namespace}/{r.name}",
        "backup": r.backup_name,
        "backup_present": d.backup_present,
        "phase": r.phase,
        "completed": format_time(r.completed),
        "age_hours": age_hours(r.completed or r.created, ctx.at),
        "max_age_days": ctx.thresholds.restore_test_max_age_days,
        "namespace_mapping": r.namespace_mapping,
        "restore_pvs": r.restore_pvs,
        "disks": [x.to_dict() for x in d.disks],
        "failed_data_operations": list(d.failed_data_ops),
        "restore_run_strategy": d.run_strategy,
        "backup_holds_vm_stopped": d.held_stopped,
        "restored_vm_running": d.running_now,
    }
    state = vm.state_pvc
    if state is not None:
        try:
            ev["persistent_state_restored"] = r.scope.labels_match(state.labels)
        except SelectorError:
            ev["persistent_state_restored"] = None
    return ev


@check(
    "RR-RST-001",
    title="A restore of the VM and its disk data completed within the restore-test window",
    severity=Severity.MEDIUM,
    rationale="An untested backup is a hope, not a recovery plan: restore drills find missing "
    "volumes, NADs, MAC conflicts and firmware state before an outage does. A Restore that "
    "brought back only the VM object (label or resource filters that skip the PVCs, "
    "restorePVs: false, a failed PodVolumeRestore or DataDownload) proves nothing about the data.",
    remediation="Run a Velero Restore of the VM and its PVCs (restorePVs: true, filters that "
    "include the disks) from a recent Backup into a drill namespace (namespaceMapping), boot "
    "it, and record the result.",
    references=(VELERO_RESTORE_DOC, VELERO_RESTORE_REF, PLUGIN_VM_ACTION, VELERO_BACKUP_DELETION),
    requires=("Restore", "Backup"),
    reads=DISK_DATA,
)
def restore_tested(vm: VMRecord, ctx: CheckContext) -> Result:
    """PASS for a Completed Restore of this VM and every disk's data within the window,
    which started the VM.

    A Restore labelled ``velero.kubevirt.io/restore-run-strategy`` with a strategy that
    starts no VM (Halted, Manual...: the kubevirt plugin writes it into the restored VM's
    spec.runStrategy, pkg/plugin/vm_restore_item_action.go) proves the data, not a boot,
    unless a VirtualMachineInstance of the VM runs in its target namespace now: info FAIL
    when no other drill proves both.

    None at all, or none that brought the disk data back, is an info FAIL; a newest test
    that did not complete or whose data movement failed is medium; a stale one is info too:
    it is never worse than none (a low FAIL made a VM AT_RISK that was READY with its drill
    deleted: hiding evidence must not improve a verdict, ``docs/readiness.md``). A drill
    whose Backup has expired still counts, on an inferred basis.

    A PodVolumeRestore or DataDownload of the VM's disks left unfinished by a Restore that no
    longer exists (:func:`~auditor.inventory.drills.deleted_drill_failures`: ``velero backup
    delete`` deletes the Backup's Restores, VELERO_BACKUP_DELETION) is a drill deleted after
    failing: medium FAIL, as if it were still there, unless a finished drill began after it.
    """
    max_days = ctx.thresholds.restore_test_max_age_days
    done = [d for d in vm.drills if d.restore.phase not in _IN_FLIGHT]
    doubts: list[tuple[str, Any]] = []
    gone = deleted_drill_failures(ctx.index, vm.namespace, vm.name, vm.pvcs, doubts)
    began = done[0].restore.created if done else None
    hidden = [w for w, made in gone if began is None or made is None or made >= began]
    unsure = [w for w, made in doubts if began is None or made is None or made >= began]
    if unsure and not hidden:
        # a data restore of a deleted Restore, of this VM's disk, whose sourceNamespace cannot
        # be read (named): it may be the trace of this VM's failed drill, never "no trace"
        return errored(
            f"Whether a restore test of VM {vm.ref} was deleted after its disk data did not "
            f"come back is unknown: {', '.join(unsure)} remains, naming a Restore that no "
            "longer exists, and which namespace it restored cannot be read (spec."
            "sourceNamespace; see the collection problems).",
            max_age_days=max_days,
            deleted_drill_data_operations=unsure,
        )
    if hidden:
        # the Restore was deleted (with its Backup, or by hand) before its owned data
        # restores were collected: the failed drill it was is the newest one seen, and
        # deleting it must not turn a medium FAIL into "no drill" or an older PASS
        return failed(
            f"A restore test of VM {vm.ref} was deleted after its disk data did not come back: "
            f"{', '.join(hidden)} remains, naming a Restore that no longer exists.",
            Severity.MEDIUM,
            max_age_days=max_days,
            deleted_drill_data_operations=hidden,
            newest_restore=f"{done[0].restore.namespace}/{done[0].restore.name}" if done else None,
        ).on(Basis.OBSERVED)
    if not done:
        return failed(
            f"No restore test of VM {vm.ref} exists.", Severity.INFO, max_age_days=max_days
        )
    newest = done[0]
    ev = _drill_evidence(vm, newest, ctx)
    name = newest.restore.name
    if newest.restore.phase != "Completed":
        msg = f"Newest restore test of VM {vm.ref}, {name}, is {newest.restore.phase}."
        return failed(msg, Severity.MEDIUM, **ev)
    unsure = [f"{x.pvc}: {x.reason}" for x in newest.disks if x.restored is None]
    if newest.failed_data_ops:
        msg = f"Restore {name} of VM {vm.ref} did not finish restoring disk data: " + ", ".join(
            newest.failed_data_ops
        )
        if unsure:
            # the FAIL is medium, as the ERROR of a disk whose data restore is unknown: the
            # FAIL must not hide it (readiness ranks a medium ERROR below a medium FAIL; red
            # team fz18: a DataDownload written with a null status turned UNKNOWN into
            # AT_RISK)
            return errored(
                f"Whether restore {name} of VM {vm.ref} brought back its disk data is unknown "
                f"({'; '.join(unsure)}). Without them: FAIL: {msg}.",
                **ev,
            )
        return failed(f"{msg}.", Severity.MEDIUM, **ev)
    odd = newest.restore.completed_contradiction
    if odd is not None:
        # Velero writes Completed only for a Restore that counted no error: one whose status
        # counts some is the PartiallyFailed drill Velero would have made (red team r41a);
        # like a failed data restore, the FAIL never hides a disk whose data is unknown
        msg = (
            f"Newest restore test of VM {vm.ref}, {name}, is Completed, yet its status has "
            f"{odd}: Velero makes a Restore with errors PartiallyFailed"
        )
        ev = {**ev, "completed_contradiction": odd, "completed_rule_source": RESTORE_RULE_SRC}
        if unsure:
            return errored(
                f"Whether restore {name} of VM {vm.ref} brought back its disk data is unknown "
                f"({'; '.join(unsure)}). Without them: FAIL: {msg}.",
                **ev,
            )
        return failed(f"{msg}.", Severity.MEDIUM, **ev).on(Basis.OBSERVED)
    proving = [
        d
        for d in done
        if d.restore.phase == "Completed"
        and d.restore.completed_contradiction is None
        and d.data_restored
    ]
    if not proving and unsure:
        # an unread PodVolumeRestore/DataDownload may be the failed one: unknown, not "no test"
        return errored(
            f"Whether restore {name} of VM {vm.ref} brought back its disk data is unknown "
            f"({'; '.join(unsure)}).",
            **ev,
        )
    if not proving:
        gaps = [f"{x.pvc}: {x.reason}" for x in newest.disks if x.restored is not True]
        msg = f"Restore {name} of VM {vm.ref} did not bring back all disk data ({'; '.join(gaps)})"
        return failed(f"{msg}, so no drill proves the data restores.", Severity.INFO, **ev)
    booted = [d for d in proving if not d.restored_stopped]
    if not booted:
        d = proving[0]
        ev = _drill_evidence(vm, d, ctx)
        return failed(
            f"Restore {d.restore.name} of VM {vm.ref} brought its disk data back, but "
            f"{d.stopped_by} restored the VM with a runStrategy that starts none, and no "
            f"VirtualMachineInstance of it runs in namespace {d.target_namespace}: no drill "
            "proves the VM boots.",
            Severity.INFO,
            **ev,
        ).on(Basis.OBSERVED if d.run_strategy is not None else Basis.INFERRED)
    d = booted[0]
    ev = _drill_evidence(vm, d, ctx)
    hours = ev["age_hours"]
    basis = Basis.OBSERVED if d.backup_present else Basis.INFERRED
    if hours is None or hours > max_days * 24:
        msg = f"Newest restore test of VM {vm.ref}, {d.restore.name}, is older than {max_days} d."
        return failed(msg, Severity.INFO, **ev).on(basis)
    note = ""
    if not d.backup_present:
        note += f" Its Backup {d.restore.backup_name} is gone; judged on the Restore's filters."
    if ev.get("persistent_state_restored") is False and vm.state_pvc is not None:
        note += (
            f" It did not include PVC {vm.state_pvc.name}, so the drill VM booted with fresh "
            "NVRAM/TPM."
        )
    msg = f"Restore {d.restore.name} of VM {vm.ref} and its disks completed {hours / 24:.1f} d ago."
    unread = [
        k
        for k in ("PodVolumeRestore", "DataDownload")
        if ctx.index.partial_for(k, d.restore.namespace)
    ]
    if unread:
        # a failed data restore among the unread objects would undo this drill's proof
        return errored(
            f"Restore {d.restore.name} of VM {vm.ref} completed, but some {', '.join(unread)} "
            "objects could not be read, so whether its disk data was restored is unknown. "
            f"Without them: PASS: {msg}",
            incomplete_kinds=unread,
            **ev,
        )
    return passed(msg + note, **ev).on(basis)


def _l2_macs(vm: VMRecord) -> list[str]:
    return [n.name for n in vm.spec.nics if n.mac and n.binding in L2_BINDINGS]


#: RR-RST-002's FAIL for a new firmware UUID on a Windows guest: it re-activates, and its
#: BitLocker and licences keyed on the UUID may not survive
_NEW_UUID_ON_WINDOWS = Severity.HIGH


@check(
    "RR-RST-002",
    title="Restores of the VM keep its identity in place and clone it safely beside it",
    severity=Severity.MEDIUM,
    windows_severity=_NEW_UUID_ON_WINDOWS,
    rationale="The kubevirt-velero-plugin acts on two Restore labels: "
    f"{CLEAR_MAC_LABEL} empties every interface's MAC and {NEW_UUID_LABEL} gives the VM a new "
    "random firmware UUID. A drill restored beside the original in the same cluster needs both "
    "(or KubeMacPool allocating new MACs): otherwise two machines answer on one MAC on the "
    "bridged network and share one SMBIOS UUID. A restore of the VM itself (same namespace) "
    "must use neither: a new UUID re-triggers Windows activation and licences keyed on it, and "
    "new MACs break DHCP reservations and firewall rules.",
    remediation=f"Label drill Restores with {CLEAR_MAC_LABEL}: 'true' and {NEW_UUID_LABEL}: "
    "'true' (needs the kubevirt Velero plugin); never label a disaster-recovery Restore of the "
    "VM itself with them.",
    references=(PLUGIN_LABELS, PLUGIN_VM_ACTION, KV_LEGACY_UUID, VELERO_RESTORE_REF),
    requires=("Restore",),
    # what it reads of the VM beyond its metadata (labels, creation, pairing): the NICs'
    # MACs and bindings (interfaces, with networks and autoattachPodInterface for the
    # default pod NIC) and what tells a Windows guest (template annotations, Hyper-V
    # features, preference); a malformed disk, volume or firmware field says nothing of them
    reads=(
        "spec.template.spec.domain.devices.interfaces",
        "spec.template.spec.domain.devices.autoattachPodInterface",
        "spec.template.spec.networks",
        "spec.template.spec.domain.features.hyperv",
        "spec.template.metadata.annotations",
        "spec.preference",
        "status.preferenceRef",
    ),
)
def restore_identity(vm: VMRecord, ctx: CheckContext) -> Result:
    """Judge the newest finished Restore of the VM by where it restored and its plugin labels.

    In place with a plugin label: FAIL medium (high on Windows for the UUID). Beside the
    original without them: FAIL info (it happened in the past; a copy that still exists is
    RR-FW-003's finding). The labels only act when the kubevirt plugin is enabled.
    """
    done = [d for d in vm.drills if d.restore.phase not in _IN_FLIGHT]
    if not done:
        return not_applicable(f"VM {vm.ref} has no finished Restore.")
    d = done[0]
    plugin = ctx.index.kubevirt_plugin_in(d.restore.namespace)
    clear_mac = d.label(CLEAR_MAC_LABEL) and plugin is not False
    new_uuid = d.label(NEW_UUID_LABEL) and plugin is not False
    l2 = _l2_macs(vm)
    ev = {
        "restore": f"{d.restore.namespace}/{d.restore.name}",
        "target_namespace": d.target_namespace,
        "beside_original": d.beside_original,
        "labels": {k: d.restore.labels.get(k) for k in (CLEAR_MAC_LABEL, NEW_UUID_LABEL)},
        "kubevirt_plugin": plugin,
        "pinned_l2_macs": l2,
        "target_namespace_labels": _ns_labels(ctx, d.target_namespace),
    }
    who = f"Restore {d.restore.name} of VM {vm.ref}"
    if not d.beside_original:
        changed = [w for w, on in (("firmware UUID", new_uuid), ("MAC addresses", clear_mac)) if on]
        made, began = vm.created, d.restore.created
        recreated = vm.labels.get(VELERO_RESTORE_LABEL) == velero_label(d.restore.name)
        if changed and not recreated and made is not None and began is not None and made < began:
            # Velero skips an object that already exists (existingResourcePolicy only updates
            # labels and annotations), so the plugin's MAC and UUID changes never reached
            # this VM, which predates the Restore (VELERO_RESTORE_REF; red team)
            return passed(
                f"{who} restored in place over the VM, which existed before it (created "
                f"{format_time(made)}): Velero skipped it, so its {' and '.join(changed)} "
                "stayed as they were.",
                vm_created=format_time(made),
                **ev,
            ).on(Basis.OBSERVED)
        if changed:
            windows = new_uuid and vm.spec.os == "windows"
            sev = _NEW_UUID_ON_WINDOWS if windows else Severity.MEDIUM
            msg = f"{who} restored it in place but gave it new {' and '.join(changed)}."
            return failed(msg, sev, **ev).on(Basis.OBSERVED)
        return passed(f"{who} restored it in place with its identity kept.", **ev)
    clones = []
    if l2 and not clear_mac:
        clones.append(f"the MACs of {', '.join(l2)}")
    if not new_uuid:
        clones.append("its firmware UUID")
    if clones:
        msg = (
            f"{who} put a copy beside the original (namespace {d.target_namespace}) with "
            f"{' and '.join(clones)}; label drills with {CLEAR_MAC_LABEL} and {NEW_UUID_LABEL}."
        )
        return failed(msg, Severity.INFO, **ev).on(Basis.OBSERVED)
    return passed(f"{who} cloned it beside the original with new MACs and UUID.", **ev)


def _ns_labels(ctx: CheckContext, namespace: str) -> dict[str, str] | None:
    obj = ctx.index.namespaces.get(namespace)
    if obj is None:
        return None
    labels = (obj.get("metadata") or {}).get("labels")
    if not isinstance(labels, dict):
        return {}
    # evidence a report shows: a value under an unknown key is redacted (fz27)
    return shown_labels({str(k): str(v) for k, v in labels.items()})
