"""Inventory: pair every VirtualMachine with its storage, evidence and identity.

``build_inventory(data, at)`` returns one :class:`VMRecord` per VM; checks read
only these records plus the :class:`ClusterIndex`, never raw lists. :class:`Inventory`
does the cluster-wide part alone and pairs each VM on demand, so the VMs can be paired in
two processes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from auditor.inventory.drills import DrillEval, evaluate_drills
from auditor.inventory.index import (
    SERVER_FLAGS,
    BackupView,
    ClusterIndex,
    RestoreView,
    ScheduleView,
    meta_labels,
)
from auditor.inventory.netid import NetworkIdentity, network_identity
from auditor.inventory.protection import (
    BackupEval,
    Pairing,
    PvcRef,
    VMFacts,
    covering_schedules,
    fs_annotated,
)
from auditor.inventory.records import VMI_PHASES
from auditor.inventory.revisions import PinnedRef, resolve_pinned
from auditor.inventory.vmspec import Disk, Firmware, PodDefault, VMSpec, pod_default, read_vm_spec
from auditor.inventory.volpolicy import policy_scope
from auditor.kubevalues import dig, format_time, parse_time
from auditor.scope import SelectorError
from auditor.sources.base import ClusterData, KindState

__all__ = ["VMRecord", "Inventory", "StagingError", "build_inventory", "ClusterIndex"]


@dataclass
class VMRecord:
    """One VM and everything paired with it.

    ``pvcs`` lists the PVCs the VM needs (disks first, then the
    ``persistent-state-for-<vm>`` PVC); ``backups`` is newest first; ``drills`` are the
    Restores of the VM, newest first, with what each proves (``restores`` their views);
    ``problems`` are field-level defects in this VM's objects
    (``(field path, reason)``) that make some checks unable to evaluate.
    """

    obj: dict[str, Any]
    namespace: str
    name: str
    uid: str | None
    created: datetime | None
    labels: dict[str, str]
    annotations: dict[str, str]
    spec: VMSpec
    origin: str | None
    vmi: dict[str, Any] | None
    pvcs: list[PvcRef]
    backups: list[BackupEval]
    restores: list[RestoreView]
    schedules: list[ScheduleView]
    volume_snapshots: dict[str, list[dict[str, Any]]]
    vm_snapshots: list[dict[str, Any]]
    problems: list[tuple[str, str]] = field(default_factory=list)
    #: None when whether it runs cannot be told (VMIs partly unread)
    running: bool | None = False

    @property
    def uncapturable(self) -> list[Disk]:
        """Disks holding data that no Velero method captures (hostDisk: node-local files)."""
        return [d for d in self.spec.disks if d.volume_class == "data" and d.claim is None]

    @property
    def unknown_disks(self) -> list[Disk]:
        """Disks whose volume is missing or of a source the auditor does not know."""
        return [d for d in self.spec.disks if d.volume_class == "unknown"]

    drills: list[DrillEval] = field(default_factory=list)
    #: ``instancetype``/``preference`` -> how it was resolved (pinned revision or live)
    revisions: dict[str, PinnedRef] = field(default_factory=dict)
    #: NICs (binding, NAD config, MAC, static addressing), hostname, Services selecting it
    network: NetworkIdentity = field(default_factory=lambda: NetworkIdentity((), None, None))
    #: ``(Schedule, gaps)`` for each Schedule covering the VM: why its next Backup would not
    #: hold what the newest usable one holds ([]: it would; None: cannot be told, a filter
    #: being unreadable or the gaps hanging on a server default no object states,
    #: :meth:`ClusterIndex.backup_defaults`);
    #: empty without a usable Backup (:meth:`Pairing.next_gaps`)
    next_backups: list[tuple[ScheduleView, list[str] | None]] = field(default_factory=list)
    #: ``namespace/name`` of a Schedule -> the Backup switches (``defaultVolumesToFsBackup``,
    #: ``snapshotMoveData``) whose unseen server default decides its ``next_backups`` gaps
    next_unknown: dict[str, list[str]] = field(default_factory=dict)

    @property
    def ref(self) -> str:
        """``namespace/name`` for messages."""
        return f"{self.namespace}/{self.name}"

    @property
    def state_pvc(self) -> PvcRef | None:
        """The persistent EFI/TPM state PVC, if one exists."""
        return next((p for p in self.pvcs if p.role == "state"), None)


class Inventory:
    """The cluster-wide part of the inventory, and each VM's pairing on demand.

    Every VM's facts are read first (a Backup's plan spans all VMs it holds); pairing one VM
    (:meth:`record`) then reads only the index, the plans and that VM. Attributes: ``index``;
    ``vms``, each VM's staged facts, sorted by namespace and name (the records' order).

    ``validated``, when given, is called once the index is built: the
    :func:`~auditor.inventory.vmvalidate.validate_vm` of each of ``data``'s VirtualMachines,
    in their order, made by another process meanwhile (``auditor.pipeline``), or None; a
    list of another length is ignored, and what is missing is made here.
    """

    def __init__(
        self,
        data: ClusterData,
        at: datetime,
        validated: Callable[[], list[list[tuple[str, str]]] | None] | None = None,
    ) -> None:
        self.index = ix = ClusterIndex.build(data)
        vms = data.of("VirtualMachine")
        # validate_vm of each VM, when another process made them meanwhile (auditor.pipeline)
        given = validated() if validated is not None else None
        checked: list[list[tuple[str, str]] | None] = [None] * len(vms)
        if given is not None and len(given) == len(vms):
            checked[:] = given
        self.vms: list[tuple[VMFacts, VMSpec, list[PvcRef]]] = []
        #: VM (namespace, name) -> what its staging raised (see :meth:`record`)
        self._unstaged: dict[tuple[str, str], Exception] = {}
        for vm, found in zip(vms, checked, strict=True):
            try:
                self.vms.append(_stage(ix, vm, found))
            except Exception as exc:  # one VM's bug must not end the audit: record() raises it
                facts = _unstaged_facts(vm)
                self._unstaged[(facts.namespace, facts.name)] = exc
                self.vms.append((facts, _unread_spec(), []))
        self._pairing = Pairing(ix, (facts for facts, _, _ in self.vms), at)
        self.vms.sort(key=lambda staged: (staged[0].namespace, staged[0].name))

    def __len__(self) -> int:
        return len(self.vms)

    def record(self, i: int) -> VMRecord:
        """The paired record of the ``i``-th VM (0-based, in :attr:`vms` order).

        Raises:
            IndexError: no such VM.
            Exception: what staging the VM raised (:class:`StagingError`, its cause the
                original), or pairing it raises: a bug, or input no reader expected.
        """
        facts, spec, pvcs = self.vms[i]
        failed = self._unstaged.get((facts.namespace, facts.name)) if self._unstaged else None
        if failed is not None:
            raise StagingError(failed) from failed
        return _record(self.index, self._pairing, facts, spec, pvcs)

    def problems(self, i: int) -> list[tuple[str, str]]:
        """The ``i``-th VM's malformed fields read while staging it: ``(field path, reason)``
        (pairing may add Backup selector problems to its record; those are no VM field)."""
        return self.vms[i][1].problems


class StagingError(Exception):
    """Reading a VM's facts before pairing (its spec, PVCs, running state) raised; the
    message is the original exception's ``Type (message)``, and it is the ``__cause__``."""

    def __init__(self, cause: Exception) -> None:
        super().__init__(f"{type(cause).__name__}: {cause}")


def _unstaged_facts(vm: dict[str, Any]) -> VMFacts:
    """What pairing may know of a VM whose staging raised: its name, namespace, labels and
    creation time; no claims (pairing judges no PVC of it) and ``running`` unknown."""
    namespace, name = dig(vm, "metadata", "namespace"), dig(vm, "metadata", "name")
    return VMFacts(
        namespace=str(namespace or ""),
        name=str(name),
        labels=meta_labels(vm),
        created=parse_time(dig(vm, "metadata", "creationTimestamp")),
        running=None,
        claims=(),
        plugin_checked=(),
        state_pvcs=(),
        template_persistence=False,
        obj=vm,
        vmi=None,
    )


def _unread_spec() -> VMSpec:
    """A placeholder spec for a VM whose staging raised: nothing read (never judged)."""
    firmware = Firmware(None, None, "unknown", None, None, False, None, None)
    return VMSpec([], [], firmware, "unknown", None, None, None, None)


def build_inventory(data: ClusterData, at: datetime) -> tuple[ClusterIndex, list[VMRecord]]:
    """Index ``data`` and pair every VirtualMachine, sorted by namespace and name."""
    inv = Inventory(data, at)
    return inv.index, [inv.record(i) for i in range(len(inv))]


def _running(vm: dict[str, Any], vmi: dict[str, Any] | None, vmis_known: bool) -> bool | None:
    """True when a virt-launcher pod runs the VM (the kubevirt plugin reads printableStatus);
    None when that cannot be told: no printableStatus, and no VMI read while the VMIs of its
    namespace were not all read, or a VMI without a phase."""
    status = dig(vm, "status", "printableStatus")
    if isinstance(status, str):
        return status in ("Running", "Starting")
    if vmi is None:
        return False if vmis_known else None
    phase = dig(vmi, "status", "phase")
    if not isinstance(phase, str) or phase not in VMI_PHASES:
        # a VMI exists, in a phase nobody wrote down or KubeVirt never writes ("running",
        # named by parse_vmi): it may be running (mutations seed 971 read "running" as off)
        return None
    return phase in ("Running", "Scheduled")


def _stopped_since(vm: dict[str, Any]) -> datetime | None:
    """Since when (UTC) a VM that does not run now has been stopped: the lastTransitionTime
    of its ``Ready`` condition while that is "False"; None when nothing says."""
    conditions = dig(vm, "status", "conditions")
    for cond in conditions if isinstance(conditions, list) else []:
        if isinstance(cond, dict) and cond.get("type") == "Ready" and cond.get("status") == "False":
            return parse_time(cond.get("lastTransitionTime"))
    return None


def _architecture(ix: ClusterIndex, namespace: str, name: str) -> str | None:
    """The architecture KubeVirt gives a VM whose spec names none: its running VMI's
    ``spec.architecture``, else the cluster default (the KubeVirt CR's
    ``status.defaultArchitecture``, else its
    ``spec.configuration.architectureConfiguration.defaultArchitecture``: kubevirt
    pkg/defaults/defaults.go ``setDefaultArchitecture``, pkg/virt-operator/util/config.go);
    None when nothing says, or two KubeVirt CRs disagree."""
    arch = dig(ix.vmis.get((namespace, name)), "spec", "architecture")
    if isinstance(arch, str) and arch:
        return arch

    def default() -> str | None:
        found = set()
        for kv in ix.data.of("KubeVirt"):
            value = dig(kv, "status", "defaultArchitecture") or dig(
                kv, "spec", "configuration", "architectureConfiguration", "defaultArchitecture"
            )
            found.add(value if isinstance(value, str) and value else None)
        return found.pop() if len(found) == 1 else None

    return ix.memo("default_architecture", default)


def _pod_default(ix: ClusterIndex) -> PodDefault:
    """The interface KubeVirt adds to a VM that lists no interface and no network, from the
    KubeVirt CRs when the kind was read whole (:func:`~auditor.inventory.vmspec.pod_default`;
    kubevirt pkg/network/vmispec/defaults.go ``SetDefaultNetworkInterface``), else KubeVirt's
    built-in bridge, inferred. Computed once per index."""

    def read() -> PodDefault:
        whole = ix.data.state("KubeVirt") is KindState.COMPLETE and not ix.partial_for(
            "KubeVirt", ""
        )
        return pod_default(list(ix.data.of("KubeVirt")) if whole else None)

    return ix.memo("pod_default_interface", read)


def _stage(
    ix: ClusterIndex, vm: dict[str, Any], validated: list[tuple[str, str]] | None
) -> tuple[VMFacts, VMSpec, list[PvcRef]]:
    meta = vm["metadata"]
    namespace, name = str(meta.get("namespace") or ""), str(meta["name"])
    spec = read_vm_spec(
        vm,
        _preference(ix, vm, namespace),
        validated,
        architecture=_architecture(ix, namespace, name),
        pod_nic=_pod_default(ix),
    )
    pvcs = [
        PvcRef(
            claim,
            "disk",
            next(d.name for d in spec.disks if d.claim == claim),
            ix.pvcs.get((namespace, claim)),
        )
        for claim in spec.claims
    ]
    for state in ix.state_pvcs.get((namespace, name), []):
        pvcs.append(PvcRef(str(state["metadata"]["name"]), "state", None, state))
    templates = {
        n
        for t in _as_list(dig(vm, "spec", "dataVolumeTemplates"))
        if isinstance(n := dig(t, "metadata", "name"), str)
    }  # a name that is no string is vmvalidate's named problem, never a crash
    fw = spec.firmware
    vmi = ix.vmis.get((namespace, name))
    facts = VMFacts(
        namespace=namespace,
        name=name,
        labels=meta_labels(vm),
        created=parse_time(meta.get("creationTimestamp")),
        running=_running(
            vm,
            vmi,
            ix.data.known("VirtualMachineInstance")
            and not ix.partial_for("VirtualMachineInstance", namespace),
        ),
        claims=tuple(spec.claims),
        plugin_checked=tuple(
            d.claim
            for d in spec.disks
            if d.claim and (d.volume_type == "persistentVolumeClaim" or d.claim not in templates)
        ),
        plugin_dvs=tuple(
            d.claim
            for d in spec.disks
            if d.claim and d.volume_type == "dataVolume" and d.claim not in templates
        ),
        state_pvcs=tuple(p.name for p in pvcs if p.role == "state"),
        template_persistence=(
            fw.resolved_from.get("bootloader") == "vm" and fw.efi_persistent is True
        )
        or (fw.resolved_from.get("tpm") == "vm" and fw.tpm_persistent is True),
        obj=vm,
        vmi=vmi,
        deleting=parse_time(meta.get("deletionTimestamp")),
        restored_from=ix.restored_from(vm),
        stopped_since=_stopped_since(vm),
        fs_annotated=fs_annotated(vm, vmi),
        vmi_unread=vmi is None and ix.partial_for("VirtualMachineInstance", namespace),
    )
    return facts, spec, pvcs


def pinned_refs(ix: ClusterIndex, vm: dict[str, Any], namespace: str) -> dict[str, PinnedRef]:
    """The VM's instancetype and preference, from the ControllerRevisions it is pinned to."""
    state = (
        KindState.PARTIAL
        if ix.partial_for("ControllerRevision", namespace)
        else ix.data.state("ControllerRevision")
    )
    out: dict[str, PinnedRef] = {}
    for what, cluster, local in (
        ("instancetype", ix.cluster_instancetypes, ix.instancetypes),
        ("preference", ix.cluster_preferences, ix.preferences),
    ):
        name = dig(vm, "spec", what, "name")
        if not isinstance(name, str):
            continue
        live = {
            f"virtualmachinecluster{what}": cluster.get(name),
            f"virtualmachine{what}": local.get((namespace, name)),
        }
        ref = resolve_pinned(state, ix.controller_revisions, live, vm, namespace, what)
        if ref is not None:
            out[what] = ref
    return out


def _preference(ix: ClusterIndex, vm: dict[str, Any], namespace: str) -> dict[str, Any] | None:
    ref = pinned_refs(ix, vm, namespace).get("preference")
    return ref.obj if ref else None


def _next_gaps(
    pairing: Pairing,
    s: ScheduleView,
    facts: VMFacts,
    pvcs: list[PvcRef],
    newest: BackupEval,
    deciding: list[str],
) -> list[str] | None:
    """:meth:`Pairing.next_gaps` of Schedule ``s``'s next Backup (None: its template's filters
    cannot be read, or the gaps differ with the value of a server default no object states;
    those switches are appended to ``deciding``)."""
    if s.stopped:
        # velero pkg/controller/schedule_controller.go: a paused Schedule, or one not
        # Enabled, is skipped
        return [
            f"Schedule {s.name} is paused (spec.paused: true): Velero makes no backup of it"
            if s.paused
            else f"Schedule {s.name} failed validation (status.phase FailedValidation): "
            "Velero makes no backup of it"
        ]
    defaults = pairing.ix.backup_defaults(s)
    unknown = sorted(k for k, (v, _) in defaults.items() if v is None)
    outcomes: list[list[str] | None] = []
    # a server default no object states: judged with each value it may have; the gaps hold
    # only when every value gives the same ones (fp30: plain Velero's unseen flag read as
    # false made a next Backup "snapshot" that the server copies by file-system backup)
    for bits in range(2 ** len(unknown)):
        chosen = {k: bool(bits >> i & 1) for i, k in enumerate(unknown)}
        try:
            b = _next_backup(pairing, s, chosen)
        except SelectorError:
            return None
        down = pairing.location_gap(b)
        outcomes.append([down] if down else pairing.next_gaps(b, facts, pvcs, newest))
    if all(o == outcomes[0] for o in outcomes):
        return outcomes[0]
    # the switches whose value changes the outcome
    deciding.extend(
        k
        for i, k in enumerate(unknown)
        if any(outcomes[b] != outcomes[b ^ (1 << i)] for b in range(len(outcomes)))
    )
    if all(outcomes):  # a gap whatever the server does: each named with its assumption
        return [
            f"if Velero's {', '.join(f'{SERVER_FLAGS[k]}={str(bits >> i & 1 == 1).lower()}' for i, k in enumerate(unknown))}: {o[0]}"
            for bits, o in enumerate(outcomes)
            if o
        ]
    return None


def _next_backup(pairing: Pairing, s: ScheduleView, chosen: dict[str, bool]) -> BackupView:
    """Schedule ``s``'s next Backup (:meth:`ScheduleView.next_backup` with the server's
    defaults, ``chosen`` giving those no object states), made once per audit: every VM the
    Schedule covers asks.

    Raises:
        SelectorError: the template's filters cannot be read.
    """
    at, ix = pairing.at, pairing.ix

    def make() -> BackupView:
        defaults = {k: v for k, (v, _) in ix.backup_defaults(s).items() if v is not None}
        # the scope it will run with: the includeExcludePolicy of the policy it names, as
        # that policy stands now, combined in
        return policy_scope(ix, s.next_backup(at, {**defaults, **chosen}))

    key = ",".join(f"{k}={v}" for k, v in sorted(chosen.items()))
    return ix.memo(f"next-backup:{s.namespace}/{s.name}@{format_time(at)}:{key}", make)


def _record(
    ix: ClusterIndex, pairing: Pairing, facts: VMFacts, spec: VMSpec, pvcs: list[PvcRef]
) -> VMRecord:
    namespace, name, vm = facts.namespace, facts.name, facts.obj
    problems = list(spec.problems)
    if facts.deleting is not None and facts.deleting > pairing.at:
        problems.append(
            (
                "metadata.deletionTimestamp",
                f"is {format_time(facts.deleting)}, after the audit time; the API server sets "
                "it when deletion is requested, so when deletion began, and which Backups "
                "skipped the VM, is unknown",
            )
        )
    selector_problems: list[str] = []
    backups = pairing.evaluate(facts, pvcs, selector_problems)
    problems += [("Backup.spec.labelSelector", p) for p in selector_problems]
    drills = evaluate_drills(
        ix,
        namespace=namespace,
        name=name,
        vm_labels=facts.labels,
        pvcs=pvcs,
        backups=backups,
        at=pairing.at,
        created=facts.created,
        facts=facts,
    )
    snaps = {p.name: ix.volume_snapshots.get((namespace, p.name), []) for p in pvcs}
    uid = vm["metadata"].get("uid")
    schedules = covering_schedules(ix, namespace=namespace, vm_labels=facts.labels)
    newest = next((e for e in backups if e.usable), None)
    following: list[tuple[ScheduleView, list[str] | None]] = []
    deciding: dict[str, list[str]] = {}
    for s in schedules:
        if newest is None:
            break
        switches: list[str] = []
        if ("Schedule", s.namespace, s.name) in ix.unread_objects:
            # a malformed field (snapshotVolumes: "yes") left the Schedule unread: what its
            # next Backup takes is unknown, never a PASS resting on it (bench.mutations
            # wrong_type, seed 8020: RR-BKP-013 FAIL -> PASS, AT_RISK -> READY)
            following.append((s, None))
            continue
        following.append((s, _next_gaps(pairing, s, facts, pvcs, newest, switches)))
        if switches:
            deciding[f"{s.namespace}/{s.name}"] = switches
    return VMRecord(
        obj=vm,
        namespace=namespace,
        name=name,
        uid=uid if isinstance(uid, str) else None,
        created=facts.created,
        labels=facts.labels,
        annotations=meta_labels(vm, "annotations"),
        spec=spec,
        origin=ix.data.origins.get(("VirtualMachine", namespace, name)),
        vmi=facts.vmi,
        pvcs=pvcs,
        backups=backups,
        restores=[d.restore for d in drills],
        schedules=schedules,
        next_backups=following,
        next_unknown=deciding,
        volume_snapshots=snaps,
        vm_snapshots=ix.vm_snapshots.get((namespace, name), []),
        problems=problems,
        running=facts.running,
        drills=drills,
        revisions=pinned_refs(ix, vm, namespace),
        network=network_identity(
            vm,
            namespace,
            spec.nics,
            ix.nad_objects,
            ix.services_by_ns.get(namespace, []),
            ix.routes_by_ns.get(namespace, []),
        ),
    )


def _as_list(value: Any) -> list[Any]:
    """``value`` if it is a list, else [] (vmvalidate reports the malformed field)."""
    return value if isinstance(value, list) else []
