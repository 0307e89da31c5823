"""Generate a synthetic OpenShift Virtualization export of N VMs, deterministic per seed.

Writes one ``oc get <plural> -A -o yaml`` ``List`` file per kind
(``virtualmachines.yaml``, ``backups.yaml``, ...) shaped like the hand-made
corpus export. Ratios follow a real estate: 10-35 VMs per namespace, 1-2 data
disks per VM (each a DataVolume -> PVC -> PV), a ``persistent-state-for-<vm>``
PVC for persistent EFI/TPM, daily Velero Backups per namespace kept 7-30 days (mostly 7 or 14),
one Velero 1.14 leftover VolumeSnapshotContent per backup and PVC in scope,
some VM snapshots, NADs and restore drills. About half the VMs are planted
with recovery gaps (named in :attr:`Estate.gaps`).

Usage: ``python -m bench.generate OUT_DIR N [SEED]`` or :func:`generate`.
"""

from __future__ import annotations

import random
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench import objects as o
from bench.vmobjects import Disk, VmPlan, vm_object, vm_snapshot_objects, vmi_object
from bench.yamlout import write_list

__all__ = ["AUDIT_TIME", "GENERATOR_VERSION", "Estate", "generate"]

AUDIT_TIME = datetime(2026, 11, 30, 6, 0, tzinfo=UTC)
#: Bumped whenever the same arguments give other files (a cached estate is then made anew).
#: 2: the BackupStorageLocation is last validated 20 s before the audit, not at its creation.
#: 3: restore drills start at most an hour before the audit (some started after it).
#: 4: namespace size, backup policy and retention spread evenly (:class:`_Spread`).
#: 5: a VM's template and dataVolumeTemplates hold ``creationTimestamp: null``, as every VM
#: ``oc get -o yaml`` exports does (and as the input digest and the null rules then see).
#: 6: each VM holds the ``vm.kubevirt.io/validations`` annotation of the template it names
#: (JSON in a literal block scalar, as on VMs made from OpenShift's common templates).
GENERATOR_VERSION = 6
TEAMS = ("team-finance", "team-web", "team-data", "team-ops", "team-erp", "team-hr")
SELECTOR = {"backup.corp.example/policy": "nightly"}
_GI = 1024**3
#: Daily backups kept per namespace: most keep a week or two, some a month.
_RETENTION_DAYS = (7, 7, 7, 7, 14, 14, 21, 30)


@dataclass
class Estate:
    """What :func:`generate` wrote: item counts per file stem and the planted gaps per VM."""

    out_dir: Path
    n_vms: int
    seed: int
    at: datetime
    counts: dict[str, int] = field(default_factory=dict)
    #: "namespace/vm" -> gap tags (empty list: a VM meant to be fully protected)
    gaps: dict[str, list[str]] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def bytes(self) -> int:
        """Total size of the written files."""
        return sum(p.stat().st_size for p in self.out_dir.glob("*.yaml"))


class _Ids:
    """Deterministic UUIDs and MACs from one random stream."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.mac = 0

    def uid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def next_mac(self) -> str:
        self.mac += 1
        return "02:5e:{:02x}:{:02x}:{:02x}:{:02x}".format(*self.mac.to_bytes(4, "big"))


@dataclass
class _Ns:
    name: str
    team: str
    policy: str  # "namespace", "label", "none", "paused"
    days: int
    hour: int
    nads: list[str]
    vms: list[VmPlan] = field(default_factory=list)


def _plan_vm(rng: random.Random, ids: _Ids, ns: _Ns, index: int, at: datetime) -> VmPlan:
    name = f"{ns.name.split('-', 1)[1]}-vm-{index:03d}"
    windows = rng.random() < 0.25
    via_pref = windows and rng.random() < 0.3
    efi = "persistent" if windows else rng.choice(("persistent", None, None))
    gaps: list[str] = []
    if efi and not via_pref and rng.random() < 0.1:
        efi = "volatile"
        gaps.append("efi-not-persistent")
    fw_pinned = rng.random() > 0.12
    mac_pinned = rng.random() > 0.08
    gaps += [] if fw_pinned else ["firmware-id-unpinned"]
    gaps += [] if mac_pinned else ["mac-unpinned"]
    nics: list[tuple[str, str | None]] = [("default", None)]
    if ns.nads and rng.random() < 0.4:
        if rng.random() < 0.06:
            nics.append(("backend", f"{name}-deleted-net"))
            gaps.append("missing-nad")
        else:
            nics.append(("backend", rng.choice(ns.nads)))
    labels = {"app": name, **(SELECTOR if ns.policy == "label" else {})}
    ephemeral = not windows and rng.random() < 0.02
    created = at - timedelta(days=rng.randint(40, 900), seconds=rng.randint(0, 86_399))
    if rng.random() < 0.03:
        created = at - timedelta(minutes=rng.randint(10, 50))
        gaps.append("created-after-last-backup")
    plan = VmPlan(
        ns=ns.name,
        name=name,
        uid=ids.uid(),
        created=created,
        windows=windows,
        efi=efi,
        via_preference=via_pref,
        fw_pinned=fw_pinned,
        mac_pinned=mac_pinned,
        macs=[ids.next_mac() for _ in nics],
        nics=nics,
        disks=[],
        labels=labels,
        ephemeral=ephemeral,
        running=rng.random() < 0.9,
        inline_cloudinit=rng.random() < 0.4,
        gaps=gaps,
    )
    if ephemeral:
        gaps.append("ephemeral")
        return plan
    nfs = rng.random() < 0.02
    for d in range(rng.choice((1, 1, 2)) + 1):
        size = rng.choice((30, 40, 60, 80, 120)) if d == 0 else rng.choice((10, 50, 100, 250, 500))
        sc = (
            "nfs-csi"
            if nfs
            else rng.choice(
                ("ocs-storagecluster-ceph-rbd-virtualization",) * 3
                + ("vm-gold-retain", "ocs-storagecluster-ceph-rbd")
            )
        )
        disk_labels = dict(labels)
        admin_pvc = d > 0 and rng.random() < 0.05
        if ns.policy == "label" and admin_pvc:
            disk_labels = {"app": name}
            gaps.append("pvc-not-selected")
        pvc_name = f"{name}-rootdisk" if d == 0 else f"{name}-data{d}"
        plan.disks.append(
            Disk(
                name="rootdisk" if d == 0 else f"data{d}",
                pvc=pvc_name,
                uid=ids.uid(),
                size=f"{size}Gi",
                size_bytes=size * _GI,
                sc=sc,
                labels=disk_labels,
                from_template=not admin_pvc,
                dv_uid="" if admin_pvc else ids.uid(),
            )
        )
    if nfs:
        gaps.append("nfs-no-snapshot-class")
    if efi == "persistent":
        state_labels = {"persistent-state-for": name}
        if ns.policy == "label" and rng.random() < 0.5:
            state_labels.update(SELECTOR)
        elif ns.policy == "label":
            gaps.append("state-pvc-not-selected")
        suffix = "".join(rng.choice("bcdfghjklmnpqrstvwxz2456789") for _ in range(5))
        plan.state_pvc = Disk(
            name="persistent-state",
            pvc=f"persistent-state-for-{name}-{suffix}",
            uid=ids.uid(),
            size="10Mi",
            size_bytes=10 * 1024**2,
            sc="ocs-storagecluster-cephfs",
            labels=state_labels,
        )
    return plan


class _Spread:
    """Evenly spread points of the unit cube, one per namespace: a Kronecker sequence (an
    additive recurrence by the fractional parts of the golden ratio, sqrt 2 and sqrt 3, each
    with few close rational neighbours, so every coordinate alone is as even as can be) from
    a seeded start. Drawing a namespace's size, backup policy and retention from it instead
    of independently at random gives every estate size the same mix: with independent draws
    the 44 namespaces of a 1,000-VM estate (seed 0) held 12 % fewer Backups and
    VolumeSnapshotContents per VM than the 451 of the 10,000-VM one, and the bench's
    1,000 -> 10,000 scaling measured that as much as the audit."""

    _STEPS = ((5**0.5 - 1) / 2, 2**0.5 - 1, 3**0.5 - 1)

    def __init__(self, rng: random.Random) -> None:
        self._at = [rng.random() for _ in self._STEPS]

    def next(self) -> tuple[float, float, float]:
        """The next point, each coordinate in [0, 1)."""
        self._at = [(a + s) % 1.0 for a, s in zip(self._at, self._STEPS, strict=True)]
        return self._at[0], self._at[1], self._at[2]


def _weighted(u: float, choices: tuple[str, ...], weights: tuple[int, ...]) -> str:
    """The choice whose share of the cumulative ``weights`` holds ``u`` (in [0, 1))."""
    mark = u * sum(weights)
    for choice, weight in zip(choices, weights, strict=True):
        if mark < weight:
            return choice
        mark -= weight
    return choices[-1]


def _plan(rng: random.Random, ids: _Ids, n_vms: int, at: datetime) -> list[_Ns]:
    spaces: list[_Ns] = []
    left = n_vms
    draws = _Spread(rng)
    while left > 0:
        i = len(spaces)
        # size, backup policy and retention set how many Backups and VolumeSnapshotContents
        # a namespace has: spread evenly (see _Spread), so 1,000 and 10,000 VMs get one mix
        spread = draws.next()
        size = min(left, 10 + int(spread[0] * 26))
        policy = _weighted(spread[1], ("namespace", "label", "none", "paused"), (60, 27, 8, 5))
        team = TEAMS[i % len(TEAMS)]
        nads = [f"vlan{100 + j}" for j in range(rng.randint(0, 2))]
        ns = _Ns(
            f"{team.split('-')[1]}-{i:04d}",
            team,
            policy,
            _RETENTION_DAYS[int(spread[2] * len(_RETENTION_DAYS))],
            rng.randint(0, 4),
            nads,
        )
        ns.vms = [_plan_vm(rng, ids, ns, j, at) for j in range(size)]
        if policy in ("none", "paused"):
            for vm in ns.vms:
                vm.gaps.append("no-backup" if policy == "none" else "backup-stale")
        spaces.append(ns)
        left -= size
    return spaces


def _in_scope(ns: _Ns, labels: dict[str, str]) -> bool:
    return ns.policy != "label" or all(labels.get(k) == v for k, v in SELECTOR.items())


def _backups(
    rng: random.Random, ids: _Ids, ns: _Ns, at: datetime, out: dict[str, list[Any]]
) -> None:
    if ns.policy == "none":
        return
    selector = SELECTOR if ns.policy == "label" else None
    spec = o.backup_spec(ns.name, selector, ns.days)
    sched = f"{ns.name}-daily"
    disks = [(vm, d) for vm in ns.vms for d in vm.disks + ([vm.state_pvc] if vm.state_pvc else [])]
    scope = [(vm, d) for vm, d in disks if _in_scope(ns, d.labels)]
    nfs_errors = sum(1 for _, d in scope if d.sc == "nfs-csi")
    newest = at.replace(hour=1 + ns.hour, minute=0, second=rng.randint(0, 59))
    if newest > at:
        newest -= timedelta(days=1)
    if ns.policy == "paused":
        newest -= timedelta(days=15)
    in_progress = ns.policy == "namespace" and rng.random() < 0.04
    done: list[str] = []
    for day in range(ns.days):
        start = newest - timedelta(days=day, seconds=rng.randint(0, 30))
        if start < min(vm.created for vm in ns.vms):
            break
        name = f"{sched}-{start:%Y%m%d%H%M%S}"
        phase = "Completed"
        if day == 0 and in_progress:
            phase = "InProgress"
        elif rng.random() < 0.03:
            phase = "Failed"
        elif nfs_errors:
            phase = "PartiallyFailed"
        taken = [(vm, d) for vm, d in scope if vm.created < start and d.sc != "nfs-csi"]
        snaps = len(taken) if phase in ("Completed", "PartiallyFailed") else 0
        out["backups"].append(
            o.backup(
                name,
                ids.uid(),
                start,
                spec,
                phase,
                snaps,
                nfs_errors if phase == "PartiallyFailed" else 0,
                sched,
                ns.days,
            )
        )
        if phase in ("Completed", "PartiallyFailed"):
            done.append(name)
            provs = o.STORAGE_CLASSES
            for _, d in taken[:snaps]:
                prov, _, mode = provs[d.sc]
                # the arguments only: the dicts are made while the file is written (a
                # 50,000-VM estate has 1.5 million; as dicts they would not fit in memory)
                out["volumesnapshotcontents"].append(
                    (
                        ids.uid(),
                        ids.uid(),
                        start + timedelta(minutes=3),
                        name,
                        prov,
                        mode,
                        d.size_bytes,
                        f"0001-0011-openshift-storage-{ids.uid()}",
                    )
                )
    if rng.random() < 0.03:
        bad = {**spec, "storageLocation": "default"}
        out["backups"].append(
            o.backup(
                f"{ns.name}-adhoc-{newest:%Y%m%d}",
                ids.uid(),
                newest - timedelta(days=3),
                bad,
                "FailedValidation",
                0,
                0,
                None,
                ns.days,
            )
        )
    first = at - timedelta(days=120)
    out["schedules"].append(
        o.schedule(
            sched,
            ids.uid(),
            first,
            spec,
            ns.policy == "paused",
            newest if done or in_progress else None,
        )
    )
    if len(done) > 2 and rng.random() < 0.15:
        app = rng.choice(ns.vms).name
        out["restores"].append(
            o.restore(
                f"restore-drill-{app}-{newest:%Y%m%d}",
                ids.uid(),
                # a drill is done before the audit (one made after it is no evidence then)
                min(newest + timedelta(hours=4), at - timedelta(hours=1)),
                done[1],
                ns.name,
                app,
            )
        )


def _vm_objects(
    rng: random.Random, ids: _Ids, plan: VmPlan, at: datetime, out: dict[str, list[Any]]
) -> None:
    vm = vm_object(plan)
    out["virtualmachines"].append(vm)
    vm_ref = (plan.name, plan.uid)
    for d in plan.disks:
        created = plan.created + timedelta(seconds=3)
        if d.from_template:
            out["datavolumes"].append(
                o.data_volume(plan.ns, d.pvc, d.dv_uid, created, vm_ref, d.size, d.sc, d.labels)
            )
            refs = o.owner("DataVolume", "cdi.kubevirt.io/v1beta1", d.pvc, d.dv_uid)
        else:
            refs = None
        claim = o.pvc(plan.ns, d.pvc, d.uid, created, d.sc, d.size, d.labels, refs)
        out["persistentvolumeclaims"].append(claim)
        out["persistentvolumes"].append(o.pv(claim, ids.uid()))
    if plan.state_pvc:
        s = plan.state_pvc
        refs = o.owner("VirtualMachine", "kubevirt.io/v1", plan.name, plan.uid)
        claim = o.pvc(
            plan.ns,
            s.pvc,
            s.uid,
            plan.created + timedelta(seconds=40),
            s.sc,
            s.size,
            s.labels,
            refs,
        )
        out["persistentvolumeclaims"].append(claim)
        out["persistentvolumes"].append(o.pv(claim, ids.uid()))
    if plan.running:
        started = max(plan.created, at - timedelta(days=rng.randint(1, 80)))
        out["virtualmachineinstances"].append(
            vmi_object(
                plan, vm, ids.uid(), started, f"wrk-{rng.randint(1, 40):02d}.estate.corp.example"
            )
        )
    if plan.disks and rng.random() < 0.05:
        taken = at - timedelta(days=rng.randint(1, 20), hours=rng.randint(0, 23))
        for stem, items in vm_snapshot_objects(
            plan, vm, [ids.uid() for _ in range(2 + len(plan.disks))], taken
        ).items():
            out[stem].extend(items)


def _order(item: dict[str, Any] | tuple[Any, ...]) -> tuple[str, str]:
    """(namespace, name) of an object, or of the Velero VolumeSnapshotContent whose
    :func:`bench.objects.velero_vsc` arguments ``item`` holds (cluster-scoped, snapcontent-<uid>)."""
    if isinstance(item, tuple):
        return "", f"snapcontent-{item[0]}"
    return item["metadata"].get("namespace", ""), item["metadata"]["name"]


def generate(
    out_dir: Path,
    n_vms: int,
    seed: int = 0,
    *,
    at: datetime = AUDIT_TIME,
    vm_hook: Callable[[dict[str, Any]], None] | None = None,
) -> Estate:
    """Write a synthetic export of ``n_vms`` VMs into ``out_dir`` (created if missing).

    ``at`` is the audit time the backup ages are built around (UTC). ``vm_hook``
    may edit each VirtualMachine dict before it is written (tests plant secrets
    or hostile strings with it). Same arguments give byte-identical files.
    """
    t0 = time.perf_counter()
    rng = random.Random(seed)
    ids = _Ids(rng)
    out_dir.mkdir(parents=True, exist_ok=True)
    created = at - timedelta(days=700)
    out: dict[str, list[Any]] = o.static_objects(created, AUDIT_TIME - timedelta(seconds=20))
    for stem in (
        "namespaces",
        "network-attachment-definitions",
        "virtualmachines",
        "virtualmachineinstances",
        "datavolumes",
        "persistentvolumeclaims",
        "persistentvolumes",
        "backups",
        "schedules",
        "restores",
        "volumesnapshotcontents",
        "volumesnapshots",
        "virtualmachinesnapshots",
        "virtualmachinesnapshotcontents",
        "services",
        "datasources",
    ):
        out.setdefault(stem, [])
    spaces = _plan(rng, ids, n_vms, at)
    estate = Estate(out_dir=out_dir, n_vms=n_vms, seed=seed, at=at)
    for ns in spaces:
        ns_created = min(vm.created for vm in ns.vms) - timedelta(days=1)
        out["namespaces"].append(
            o.namespace(ns.name, ids.uid(), ns_created, ns.team, ns.policy != "none")
        )
        for j, nad in enumerate(ns.nads):
            out["network-attachment-definitions"].append(
                o.nad(ns.name, nad, ids.uid(), ns_created, 100 + j)
            )
        for plan in ns.vms:
            _vm_objects(rng, ids, plan, at, out)
            estate.gaps[f"{plan.ns}/{plan.name}"] = sorted(set(plan.gaps))
        _backups(rng, ids, ns, at, out)
    if vm_hook is not None:
        for vm in out["virtualmachines"]:
            vm_hook(vm)
    for stem, items in sorted(out.items()):
        items.sort(key=_order)
        write_list(
            out_dir / f"{stem}.yaml",
            (o.velero_vsc(*x) if isinstance(x, tuple) else x for x in items),
        )
        estate.counts[stem] = len(items)
    estate.seconds = time.perf_counter() - t0
    return estate


def main(argv: list[str]) -> int:
    """CLI: ``python -m bench.generate OUT_DIR N [SEED]``."""
    if len(argv) not in (2, 3):
        print(__doc__.split("\n\n")[-1], file=sys.stderr)
        return 2
    estate = generate(Path(argv[0]), int(argv[1]), int(argv[2]) if len(argv) == 3 else 0)
    gapped = sum(1 for g in estate.gaps.values() if g)
    print(
        f"wrote {estate.n_vms} VMs ({gapped} with planted gaps), {sum(estate.counts.values())} objects, "
        f"{estate.bytes / 1e6:.1f} MB in {estate.seconds:.1f} s to {estate.out_dir}"
    )
    for stem, count in sorted(estate.counts.items()):
        print(f"  {stem}.yaml: {count}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
