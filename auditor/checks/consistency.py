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

Nor is a connected agent a freeze when KubeVirt injects no hook: the annotation
``kubevirt.io/skip-backup-hooks`` on the VMI (synced from the VM's ``metadata.annotations``
by virt-controller), else on the KubeVirt CR, read with Go's ``strconv.ParseBool``, leaves
the virt-launcher pod without the ``pre/post.hook.backup.velero.io`` annotations that run
``virt-freezer`` (kubevirt pkg/storage/pod/annotations/generator.go ``Generate``,
pkg/storage/velero/annotations.go ``SkipHooksAnnotation``, pkg/virt-controller/watch/vm/vm.go
``syncMap``). Velero then runs only the hooks a Backup's own ``spec.hooks`` declares. A
value ParseBool refuses is read as false, its error discarded (hooks injected, certain);
the VM's value, which virt-controller copies onto the VMI, counts beside the VMI's
(:func:`hooks_reading`, round h43b).

Nor is it a freeze when the Backup does not take the virt-launcher pod: Velero runs hooks only
on the pods it backs up (:mod:`auditor.inventory.hookpods`, round h45a).

A VirtualMachineSnapshot says itself whether it froze the guest (``status.indications``:
``Online`` with ``NoGuestAgent``, ``Paused`` or ``QuiesceTimeout`` is crash-consistent,
kubevirt pkg/storage/snapshot/snapshot.go ``updateSnapshotSourceIndications``). When the
newest restore point is such a snapshot (newer than the newest usable backup), the check
FAILs as for a backup that did not freeze, whatever the agent says now, and a stopped VM
is no longer N/A for it (:mod:`auditor.inventory.snapfreeze`, round h47b).

Nor is a connected agent a freeze while the VM is paused: virt-freezer freezes only a
running domain and, since KubeVirt v1.6, skips a paused one with exit 0, so the hook
succeeds and nothing is frozen (cmd/virt-freezer/virt-freezer.go
``shouldFreezeVirtualMachine``); a Backup that began after the VMI's ``Paused`` condition
turned True is crash-consistent (round h47b).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

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
from auditor.inventory.facts import usable
from auditor.inventory.hookpods import (
    FREEZE_LIMIT_S,
    FREEZER_SRC,
    HOOK_PODS_SRC,
    LEFT_OUT,
    VSC_TIME_SRC,
    late_cuts,
    launcher_pod_left_out,
    thawed_copies,
)
from auditor.inventory.protection import BackupEval
from auditor.inventory.snapfreeze import (
    CRASH,
    SNAPSHOT_INDICATIONS_SRC,
    UNKNOWN,
    SnapshotPoint,
    newest_snapshot_point,
    when,
)
from auditor.kubevalues import dig, format_time, parse_time
from auditor.models import Basis, Severity

KV_FREEZE = "https://github.com/kubevirt/kubevirt/blob/main/docs/freeze.md"
KV_SNAPSHOT = "https://kubevirt.io/user-guide/storage/snapshot_restore_api/"
VELERO_HOOKS = "https://velero.io/docs/main/backup-hooks/"
KVP_PAUSED_FREEZE = "https://github.com/kubevirt/kubevirt-velero-plugin/issues/68"
#: virt-freezer skips the freeze of a domain that is not running (paused), exit 0, since
#: kubevirt v1.6 (commit 8029a8d682, "skip freeze if domain not running instead of fail")
FREEZER_PAUSED_SRC = (
    "https://github.com/kubevirt/kubevirt/blob/main/cmd/virt-freezer/virt-freezer.go"
)
KV_SKIP_HOOKS = (
    "https://github.com/kubevirt/kubevirt/blob/main/pkg/storage/pod/annotations/generator.go"
)
SKIP_HOOKS = "kubevirt.io/skip-backup-hooks"
#: the strings Go's ``strconv.ParseBool`` reads as true, and as false; any other string is a
#: parse error, which KubeVirt's ``Generate`` discards (read as false)
_GO_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_GO_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


def _annotation(obj: object, key: str) -> object:
    """``metadata.annotations[key]`` of ``obj`` (None when absent or unreadable)."""
    notes = dig(obj, "metadata", "annotations")
    return notes.get(key) if isinstance(notes, dict) else None


def _quoted(value: object) -> str:
    """``value`` quoted for a message: ``ascii()`` (so a blank or an invisible character
    shows), at most 40 characters of it, ``...`` after a longer one."""
    text = value if isinstance(value, str) else str(value)
    return ascii(text[:40]) + ("..." if len(text) > 40 else "")


def _reads_true(value: object) -> bool:
    """Whether Go's ``strconv.ParseBool`` reads ``value`` (an annotation value) as true; a
    value of another type is named by the object's reader and reads as no string here."""
    return isinstance(value, str) and value in _GO_TRUE


@dataclass(frozen=True)
class HooksReading:
    """How KubeVirt reads ``kubevirt.io/skip-backup-hooks`` for one VM.

    ``skipped``: where a value Go's ``strconv.ParseBool`` reads as true turns the virt-freezer
    hooks off, now or at virt-controller's next sync (``"VM vm1 metadata.annotations[...]=true"``),
    else None. ``unparsed``: each deciding value ParseBool refuses (``yes``, ``" true"``,
    ``tRue``, ``""``), quoted: KubeVirt discards the parse error and reads false, so the hooks
    stay injected (a certain outcome, noted, never an ERROR).
    """

    skipped: str | None
    unparsed: tuple[str, ...]


def hooks_reading(vm: VMRecord, ctx: CheckContext) -> HooksReading:
    """Read ``kubevirt.io/skip-backup-hooks`` for ``vm`` as KubeVirt does.

    ``Generate`` reads the VMI's annotation when the key is set (any value, ``""`` too), else
    the KubeVirt CR's, with ``skip, _ := strconv.ParseBool(value)``: a value it refuses is
    false and the hooks are injected, with no error anywhere
    (https://github.com/kubevirt/kubevirt/blob/main/pkg/storage/pod/annotations/generator.go
    ``Generate``, since v1.9.0). virt-controller keeps the VMI's key equal to the VM's
    ``metadata.annotations`` one, removing it when the VM has none
    (https://github.com/kubevirt/kubevirt/blob/main/pkg/virt-controller/watch/vm/vm.go
    ``syncDynamicAnnotationsAndLabelsToVMI``), and the launcher pod's hook annotations
    follow the VMI's (pkg/virt-controller/watch/vmi/lifecycle.go). So the value read now is
    the VMI's (else the CR's) and the one read after the next sync the VM's (else the CR's):
    the hooks count as skipped when either reads true (an export caught between the two
    never passes on the one that says injected). The kubevirt-velero-plugin does not read
    the annotation at all (https://github.com/kubevirt/kubevirt-velero-plugin, pkg/plugin:
    no reference). Shapes: :class:`HooksReading`."""
    crs = (
        (f"KubeVirt {dig(cr, 'metadata', 'name')}", _annotation(cr, SKIP_HOOKS))
        for cr in ctx.index.data.of("KubeVirt")
    )
    cr = next(((what, value) for what, value in crs if value is not None), None)
    vmi_value, vm_value = _annotation(vm.vmi, SKIP_HOOKS), _annotation(vm.obj, SKIP_HOOKS)
    now = (f"VMI {vm.name}", vmi_value) if vmi_value is not None else cr
    after_sync = (f"VM {vm.name}", vm_value) if vm_value is not None else cr
    skipped: str | None = None
    unparsed: list[str] = []
    for decides in (now, after_sync):
        if decides is None:
            continue
        what, value = decides
        field = f"{what} metadata.annotations[{SKIP_HOOKS}]"
        if _reads_true(value):
            skipped = skipped or f"{field}={value}"
        elif isinstance(value, str) and value not in _GO_FALSE:
            note = f"{field}={_quoted(value)}"
            unparsed += [note] if note not in unparsed else []
    apart = [d for d in (now, after_sync) if d is not None and not _reads_true(d[1])]
    if skipped is not None and apart:
        # the two disagree: say which value the launcher pod follows until the sync
        what, value = apart[0]
        skipped += (
            f" (virt-controller syncs the VM's value onto the VMI; {what} holds {_quoted(value)})"
        )
    return HooksReading(skipped, tuple(unparsed))


def _unparsed_note(reading: HooksReading) -> str:
    """A sentence naming the ``kubevirt.io/skip-backup-hooks`` values KubeVirt reads as
    false for want of a Go bool, or ``""``."""
    if not reading.unparsed:
        return ""
    return (
        f" {'; '.join(reading.unparsed)}: no value Go's strconv.ParseBool reads, so KubeVirt "
        "discards the parse error, reads false and injects the virt-freezer hooks."
    )


def _skip_unread(vm: VMRecord, ctx: CheckContext) -> bool:
    """Whether the KubeVirt CR, not read in full, may hold the ``kubevirt.io/skip-backup-hooks``
    that decides for the VM: its VMI or the VM does not set the annotation (the VMI's
    silence leaves it to the CR now, the VM's after virt-controller's next sync)."""
    return (
        _annotation(vm.vmi, SKIP_HOOKS) is None or _annotation(vm.obj, SKIP_HOOKS) is None
    ) and not ctx.index.data.known("KubeVirt")


def _spec_pre_hooks(ctx: CheckContext, name: str, namespace: str) -> bool:
    """Whether Backup ``namespace/name`` may declare a pre hook of its own (``spec.hooks``),
    which Velero runs on the pods it selects when their annotations declare none: False only
    for no hooks, ``{}`` or resources without ``pre``; True for hooks withheld from the export
    (``auditor.redact`` strips hook commands) or unreadable."""
    b = ctx.index.by_name("Backup").get((namespace, name))
    if b is None:
        return False
    hooks = dig(b, "spec", "hooks")
    if hooks is None or hooks == {}:
        return False
    res = hooks.get("resources") if isinstance(hooks, dict) else None
    if isinstance(hooks, dict) and (res is None or isinstance(res, list)):
        return any(isinstance(r, dict) and r.get("pre") for r in res or [])
    return True


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


def paused_since(vmi: dict[str, object] | None) -> tuple[bool, datetime | None]:
    """``(paused, since)``: whether the VMI's ``Paused`` condition is ``True``, and its
    ``lastTransitionTime`` (UTC; None when absent or unreadable: a malformed one is named by
    the VMI's record, :mod:`auditor.inventory.records`)."""
    conds = dig(vmi, "status", "conditions")
    for c in conds if isinstance(conds, list) else []:
        if isinstance(c, dict) and c.get("type") == "Paused":
            return c.get("status") == "True", parse_time(c.get("lastTransitionTime"))
    return False, None


def _paused_backup(vm: VMRecord, newest: BackupEval | None) -> tuple[str, bool] | None:
    """``(why, observed)`` when the VM is paused and its newest usable backup may have run
    while it was: the ``Paused`` condition turned True before the Backup began (observed), or
    when is unknown (not observed); None otherwise.

    virt-freezer freezes only a domain that is running: a paused one it skips and exits 0,
    so the hook succeeds with nothing frozen (kubevirt cmd/virt-freezer/virt-freezer.go
    ``shouldFreezeVirtualMachine``, since v1.6; before, the freeze failed:
    kubevirt-velero-plugin#68), and KubeVirt marks its own snapshot of a paused VM
    crash-consistent (``Paused`` indication, pkg/storage/snapshot/snapshot.go)."""
    if newest is None:
        return None
    paused, since = paused_since(vm.vmi)
    began = newest.backup.data_time
    if not paused:
        return None
    if since is None or began is None:
        return (
            f"its VMI's Paused condition is True since an unknown time, so whether backup "
            f"{newest.backup.name} ran while it was paused is unknown",
            False,
        )
    if since > began:
        return None  # paused after the backup began: that backup is judged as before
    return (
        f"its VMI has been paused since {format_time(since)} (status.conditions[Paused]."
        f"lastTransitionTime), before backup {newest.backup.name} began "
        f"({format_time(began)})",
        True,
    )


def _newer_snapshot(
    vm: VMRecord, ctx: CheckContext, newest: BackupEval | None
) -> SnapshotPoint | None:
    """The VM's newest counted VirtualMachineSnapshot when it is crash-consistent or its
    indications are unreadable and it is the newest restore point: no usable backup, or one
    whose data time (its start) is older than the snapshot, or either time unknown; else
    None (:func:`auditor.inventory.snapfreeze.newest_snapshot_point`)."""
    point = newest_snapshot_point(vm, ctx.index)
    if point is None or point.state not in (CRASH, UNKNOWN):
        return None
    began = newest.backup.data_time if newest is not None else None
    if began is not None and point.time is not None and point.time <= began:
        return None  # a newer backup is the newest restore point, judged on its own
    return point


def _snapshot_result(
    vm: VMRecord,
    point: SnapshotPoint,
    newest: BackupEval | None,
    sev: Severity,
    required: bool,
    ev: dict[str, object],
) -> Result:
    """The FAIL (or, unreadable with the option, ERROR) for a newest restore point that is a
    VirtualMachineSnapshot not shown to be frozen (round h47b)."""
    than = (
        f", newer than its newest usable backup {newest.backup.name}"
        if newest is not None
        else " (it has no usable backup)"
    )
    head = (
        f"VM {vm.ref}'s newest restore point is VirtualMachineSnapshot {point.name} "
        f"(taken {when(point)}{than})"
    )
    if point.state == UNKNOWN:
        msg = f"{head}, and {point.why}."
        return _freeze_unseen(
            msg, required, sev, vm_snapshot=point.name, snapshot_freeze_unknown=point.why, **ev
        )
    return failed(
        f"{head}, and KubeVirt recorded that it did not freeze the guest: {point.why}. A "
        "restore from it is crash-consistent only.",
        sev,
        vm_snapshot=point.name,
        crash_consistent_snapshot=point.why,
        **ev,
    ).on(Basis.OBSERVED)


def _freeze_unseen(msg: str, required: bool, sev: Severity, **evidence: object) -> Result:
    """RR-BKP-011's answer when whether a freeze held cannot be seen: what cannot be seen is
    no PASS, so with ``require_application_consistent`` (``required``) an ERROR at ``sev``
    (medium), else a FAIL at ``sev`` (info: it lowers no verdict); inferred either way."""
    if required:
        return replace(errored(msg, **evidence), severity=sev).on(Basis.INFERRED)
    return failed(msg, sev, **evidence).on(Basis.INFERRED)


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
    references=(
        KV_FREEZE,
        KV_SNAPSHOT,
        VELERO_HOOKS,
        KVP_PAUSED_FREEZE,
        KV_SKIP_HOOKS,
        HOOK_PODS_SRC,
        FREEZER_SRC,
        VSC_TIME_SRC,
        SNAPSHOT_INDICATIONS_SRC,
        FREEZER_PAUSED_SRC,
    ),
    requires=("VirtualMachineInstance",),
    reads=DISK_DATA,
)
def application_consistent(vm: VMRecord, ctx: CheckContext) -> Result:
    """N/A for a stopped VM; FAIL info without an agent, or when the newest usable backup
    counts a failed hook (its freeze may not have run), or when ``kubevirt.io/skip-backup-hooks``
    keeps the virt-freezer hooks off its launcher pod and the newest usable backup declares no
    pre hook of its own, or when that backup does not take the launcher pod at all (its
    resource filters leave out ``pods``, or the VMI carries ``velero.io/exclude-from-backup``:
    :func:`auditor.inventory.hookpods.launcher_pod_left_out`, Velero
    pkg/backup/backup.go ``backupItemBlock``), or when one of its file-system copies of the
    VM's disks ran longer than virt-freezer's 300 s freeze
    (:func:`auditor.inventory.hookpods.thawed_copies`), or when one of its CSI snapshots of
    them was cut more than 300 s after its VolumeSnapshotContent was created
    (:func:`auditor.inventory.hookpods.late_cuts`; ERROR with the option when a cut time
    cannot be read; round h48a), or when the VMI was paused before
    that backup began (virt-freezer skips a paused domain: :func:`_paused_backup`; ERROR with
    the option when since when is unknown), or when the newest restore point is a
    VirtualMachineSnapshot whose indications record no freeze (:func:`_newer_snapshot`; also
    for a VM stopped now, else N/A); medium with the policy option. Round h47b."""
    connected = agent_connected(vm.vmi)
    required = ctx.thresholds.require_application_consistent
    ev: dict[str, object] = {
        "agent_connected": connected,
        "require_application_consistent": required,
    }
    sev = Severity.MEDIUM if required else Severity.INFO
    newest = next(iter(usable(vm)), None)
    snap = _newer_snapshot(vm, ctx, newest)
    if connected is None:
        if snap is not None:
            # stopped now, but the newest restore point was taken while it ran (h47b)
            return _snapshot_result(vm, snap, newest, sev, required, ev)
        return not_applicable(f"VM {vm.ref} is not running; its disks are at rest.", **ev)
    if connected:
        reading = hooks_reading(vm, ctx)
        skipped = reading.skipped
        if reading.unparsed:
            # KubeVirt reads such a value as false: the hooks stay injected (certain)
            ev["skip_backup_hooks_unparsed"] = list(reading.unparsed)
        if skipped is not None and not (
            newest is not None and _spec_pre_hooks(ctx, newest.backup.name, newest.backup.namespace)
        ):
            return failed(
                f"VM {vm.ref} has a connected guest agent, but {skipped}: KubeVirt injects "
                "no virt-freezer pre/post backup hook into its virt-launcher pod, and "
                + (
                    f"its newest usable backup {newest.backup.name} declares no pre hook of its own"
                    if newest is not None
                    else "no usable backup declares a pre hook of its own"
                )
                + ", so its backups do not freeze its filesystems: crash-consistent only.",
                sev,
                skip_backup_hooks=skipped,
                backup=newest.backup.name if newest is not None else None,
                **ev,
            ).on(Basis.OBSERVED)
        pod = (
            launcher_pod_left_out(ctx.index, newest.backup, vm.vmi, vm.name)
            if newest is not None
            else None
        )
        if newest is not None and pod is not None:
            # Velero runs hooks, annotated or the Backup's own, only on the pods it backs up
            # (auditor.inventory.hookpods; h45a: READY with the option, the freeze never ran)
            state, why = pod
            if state == LEFT_OUT:
                return failed(
                    f"VM {vm.ref} has a connected guest agent, but its newest usable backup "
                    f"{newest.backup.name} does not take its virt-launcher pod: {why}. Velero "
                    "runs backup hooks (KubeVirt's virt-freezer ones and the Backup's own) only "
                    "on the pods it backs up, so that backup did not freeze its filesystems: "
                    "crash-consistent only.",
                    sev,
                    backup=newest.backup.name,
                    launcher_pod_left_out=why,
                    **ev,
                ).on(Basis.OBSERVED)
            msg = (
                f"VM {vm.ref} has a connected guest agent, but whether its newest usable "
                f"backup {newest.backup.name} takes its virt-launcher pod, the only pod Velero "
                f"runs its freeze hooks on, is unknown: {why}."
            )
            return _freeze_unseen(
                msg, required, sev, backup=newest.backup.name, launcher_pod_unknown=why, **ev
            )
        thawed = (
            thawed_copies(ctx.index, newest.backup, [p.obj for p in vm.pvcs if p.obj])
            if newest is not None and skipped is None
            else []
        )
        if newest is not None and thawed:
            # virt-freezer thaws the guest after 300 s on its own; a file-system copy reads
            # the live image for as long as it runs (auditor.inventory.hookpods; h45a)
            return failed(
                f"VM {vm.ref} has a connected guest agent, but in its newest usable backup "
                f"{newest.backup.name} {'; '.join(thawed)}: longer than the {FREEZE_LIMIT_S} s "
                "virt-freezer keeps the guest frozen (KubeVirt's pre hook sets no other "
                "unfreeze timeout), so the file-system copy read the disk image while the "
                "guest wrote again: no point-in-time image, not even a crash-consistent one.",
                sev,
                backup=newest.backup.name,
                thawed_copies=thawed,
                **ev,
            ).on(Basis.OBSERVED)
        late, unreadable = (
            late_cuts(ctx.index, newest.backup, [p.obj for p in vm.pvcs if p.obj])
            if newest is not None and skipped is None
            else ([], [])
        )
        if newest is not None and late:
            # Velero waits for the snapshot handle before the post hook, but virt-freezer
            # thaws the guest after 300 s on its own (auditor.inventory.hookpods; h48a)
            return failed(
                f"VM {vm.ref} has a connected guest agent, but in its newest usable backup "
                f"{newest.backup.name} {'; '.join(late)}: later than the {FREEZE_LIMIT_S} s "
                "virt-freezer keeps the guest frozen (KubeVirt's pre hook sets no other "
                "unfreeze timeout), so the storage cut the snapshot after the guest was "
                "thawed and wrote again: crash-consistent only.",
                sev,
                backup=newest.backup.name,
                late_cuts=late,
                **ev,
            ).on(Basis.OBSERVED)
        if newest is not None and unreadable:
            msg = (
                f"VM {vm.ref} has a connected guest agent, but when its newest usable backup "
                f"{newest.backup.name}'s snapshots were cut, and so whether within the "
                f"{FREEZE_LIMIT_S} s freeze, is unknown: {'; '.join(unreadable)}."
            )
            return _freeze_unseen(
                msg, required, sev, backup=newest.backup.name, cut_time_unknown=unreadable, **ev
            )
        paused = _paused_backup(vm, newest) if skipped is None else None
        if newest is not None and paused is not None:
            why, seen = paused
            msg = (
                f"VM {vm.ref} has a connected guest agent, but {why}: virt-freezer freezes "
                "only a running domain and skips a paused one (the hook still succeeds), so "
                + (
                    "that backup did not freeze its filesystems: crash-consistent only."
                    if seen
                    else "that backup may not have frozen its filesystems."
                )
            )
            if not seen and required:
                return replace(
                    errored(msg, backup=newest.backup.name, paused_unknown=why, **ev), severity=sev
                ).on(Basis.INFERRED)
            return failed(
                msg,
                sev,
                backup=newest.backup.name,
                **({"paused_during_backup": why} if seen else {"paused_unknown": why}),
                **ev,
            ).on(Basis.OBSERVED if seen else Basis.INFERRED)
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
        if snap is not None:
            # the agent answers now, but the newest restore point records no freeze (h47b)
            return _snapshot_result(vm, snap, newest, sev, required, ev)
        if skipped is None and _skip_unread(vm, ctx):
            # the CR's annotation turns the hooks off cluster-wide: unread, the freeze rests
            # on KubeVirt's default (hooks injected), an inference the report names
            return passed(
                f"VM {vm.ref} has a connected guest agent, so backups can freeze its "
                "filesystems, if KubeVirt injects its virt-freezer hooks as by default: the "
                f"KubeVirt CR, whose metadata.annotations[{SKIP_HOOKS}] would turn them off, "
                f"was not read.{_unparsed_note(reading)}",
                kubevirt_read=False,
                **ev,
            ).on(Basis.INFERRED)
        return passed(
            f"VM {vm.ref} has a connected guest agent, so backups can freeze its filesystems."
            f"{_unparsed_note(reading)}",
            **ev,
        ).on(Basis.OBSERVED)
    msg = (
        f"VM {vm.ref} runs without a connected guest agent (no AgentConnected condition): its "
        "backups are crash-consistent only."
    )
    if snap is not None and snap.state == CRASH:
        msg += f" So is its newest restore point, {snap.why}."
        ev["crash_consistent_snapshot"] = snap.why
    return failed(msg, sev, **ev).on(Basis.OBSERVED)
