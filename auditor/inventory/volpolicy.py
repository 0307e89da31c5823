"""Velero resource policies: the ConfigMap a Backup's ``spec.resourcePolicy`` names.

Velero reads it when the Backup starts (velero internal/resourcepolicies/resource_policies.go
``GetResourcePoliciesFromBackup``): a ConfigMap of the Backup's namespace with exactly one
``data`` entry, YAML decoded with unknown fields refused (``decodeStruct``, ``KnownFields``),
``version: v1``; each ``volumePolicies`` item has ``conditions`` and an ``action``
(``skip``, ``snapshot``, ``fs-backup`` or ``custom``). A volume takes the action of the first
policy whose every condition matches (``Policies.match``); no match leaves Velero's usual
choice (internal/volumehelper/volume_policy_helper.go ``ShouldPerformSnapshot``,
``ShouldPerformFSBackup``). Conditions (volume_resources.go, volume_types_conditions.go):
``capacity`` ``"lo,hi"`` against the PV's ``spec.capacity.storage``, ``storageClass`` the
PV's ``spec.storageClassName``, ``nfs``/``csi`` the PV's sources, ``volumeTypes`` the PV's
source kind, ``pvcLabels`` (a selector from the set) and ``pvcPhase``.

An ``includeExcludePolicy`` (Velero 1.17) adds resource types to a Backup's scoped resource
filters (``included/excludedNamespaceScopedResources``, ``included/excludedClusterScopedResources``)
where the Backup's own filters do not already name them (pkg/backup/backup.go
``BackupWithResolvers`` -> pkg/util/collections/includes_excludes.go ``CombineWithPolicy``):
:func:`policy_scope` gives a Backup the scope it ran with, so a policy that leaves out the VM,
its PVCs or its DataVolumes is a verdict, not an unknown.

What the auditor cannot see is unknown, never a match or a miss: the ConfigMap not read, one
Velero would refuse (it is then not the one the Backup ran with), one created or changed
after the Backup began (``metadata.creationTimestamp``, ``metadata.managedFields[].time``),
an ``includeExcludePolicy`` naming a resource by a glob, or on a Backup with the old resource
filters (Velero fails its validation: it did not run as read), a PV not read or without the
field a condition reads. An export without ``managedFields`` (``kubectl
get`` hides them) shows no edit: the policy is then read as it stands, like the PVC labels
and classes the rest of the plan reads; the counters must still cover every PVC it sends to
a method.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import yaml

from auditor.inventory.index import BackupView, ClusterIndex
from auditor.kubevalues import dig, parse_quantity, parse_time

__all__ = [
    "POLICY_SRC",
    "ResourcePolicy",
    "VolumeAction",
    "backup_policy",
    "parse_policy_configmap",
    "policy_scope",
    "volume_action",
]

POLICY_SRC = (
    "https://github.com/vmware-tanzu/velero/blob/main/internal/resourcepolicies/"
    "resource_policies.go"
)
#: ``includeExcludePolicy``'s fields (velero ``IncludeExcludePolicy``), in
#: :meth:`~auditor.scope.Scope.with_policy`'s order
_IEP_FIELDS = (
    "includedNamespaceScopedResources",
    "excludedNamespaceScopedResources",
    "includedClusterScopedResources",
    "excludedClusterScopedResources",
)
_ACTIONS = frozenset({"skip", "snapshot", "fs-backup", "custom"})
_CONDITIONS = frozenset(
    {"capacity", "storageClass", "nfs", "csi", "volumeTypes", "pvcLabels", "pvcPhase"}
)
#: velero volume_types_conditions.go getVolumeTypeFromPV: the first PV source set, in order
_PV_TYPES = (
    "awsElasticBlockStore",
    "azureDisk",
    "azureFile",
    "cephfs",
    "cinder",
    "csi",
    "fc",
    "flocker",
    "flexVolume",
    "gcePersistentDisk",
    "glusterfs",
    "hostPath",
    "iscsi",
    "local",
    "nfs",
    "photonPersistentDisk",
    "portworxVolume",
    "quobyte",
    "rbd",
    "scaleIO",
    "storageOS",
    "vsphereVolume",
)


@dataclass(frozen=True)
class ResourcePolicy:
    """One resource-policy ConfigMap as read: ``volume_policies`` ``(conditions, action)``
    in order; ``problem`` why it cannot stand for what the Backup applied (None: it can),
    naming the ConfigMap and field."""

    ref: str
    volume_policies: tuple[tuple[dict[str, Any], str], ...]
    problem: str | None = None
    #: its ``includeExcludePolicy`` lists (lower-cased, in ``_IEP_FIELDS`` order), None
    #: without one
    include_exclude: tuple[tuple[str, ...], ...] | None = None


@dataclass(frozen=True)
class VolumeAction:
    """The policy's answer for one PVC: ``action`` (``skip``, ``snapshot``, ``fs-backup``,
    ``custom``; None: no policy matched, Velero's usual choice applies), ``known`` False when
    that cannot be told, ``why`` a sentence naming the policy and condition."""

    action: str | None
    known: bool
    why: str


def _refused(ref: str, what: str) -> ResourcePolicy:
    return ResourcePolicy(
        ref,
        (),
        f"ConfigMap {ref} {what}: Velero refuses such a policy ({POLICY_SRC}), so it is not "
        "the one the Backup ran with",
    )


def _capacity(value: Any) -> tuple[int, int] | None:
    """velero ``parseCapacity``: ``"lo,hi"``, an empty side is 0; None when refused."""
    text = "," if value in (None, "") else value
    if not isinstance(text, str) or text.count(",") != 1:
        return None
    sides = []
    for part in text.split(","):
        q = parse_quantity(part.strip()) if part.strip() else 0
        if q is None:
            return None
        sides.append(q)
    lo, hi = sides
    # volume_resources_validator.go capacityCondition.validate: lo <= hi, or hi is 0
    return (lo, hi) if hi >= lo or (lo and not hi) else None


def _valid_conditions(cond: Any) -> str | None:
    if cond is None:
        return None
    if not isinstance(cond, dict):
        return "has conditions that are no mapping"
    unknown = sorted(str(k) for k in cond if k not in _CONDITIONS)
    if unknown:
        return f"has unknown condition(s) {', '.join(unknown)}"
    if _capacity(cond.get("capacity")) is None:
        return f"has capacity {cond.get('capacity')!r}, no 'lower,upper' range"
    for key in ("storageClass", "volumeTypes", "pvcPhase"):
        v = cond.get(key)
        if v is not None and not (isinstance(v, list) and all(isinstance(x, str) for x in v)):
            return f"has {key} that is no list of strings"
    for key, fields in (("nfs", {"server", "path"}), ("csi", {"driver", "volumeAttributes"})):
        v = cond.get(key)
        if v is not None and not (isinstance(v, dict) and set(v) <= fields):
            return f"has {key} that is no mapping of {', '.join(sorted(fields))}"
    csi = cond.get("csi")
    if isinstance(csi, dict) and not csi.get("driver") and csi.get("volumeAttributes"):
        return "filters csi volumeAttributes without a driver"
    labels = cond.get("pvcLabels")
    if labels is not None and not (
        isinstance(labels, dict) and all(isinstance(v, str) for v in labels.values())
    ):
        return "has pvcLabels that are no map of strings"
    return None


def parse_policy_configmap(cm: dict[str, Any], began: datetime | None) -> ResourcePolicy:
    """Read a resource-policy ConfigMap as it stood for a Backup that began at ``began``.

    ``problem`` is set (the policy is then unknown) when Velero would refuse it, when it was
    created or changed after ``began`` (or ``began`` is unknown), or when it has an
    ``includeExcludePolicy``.
    """
    ref = f"{dig(cm, 'metadata', 'namespace')}/{dig(cm, 'metadata', 'name')}"
    created = parse_time(dig(cm, "metadata", "creationTimestamp"))
    changed = [
        parse_time(m.get("time"))
        for m in dig(cm, "metadata", "managedFields") or []
        if isinstance(m, dict)
    ]
    if began is None or created is None or any(t is None or t > began for t in changed):
        return ResourcePolicy(
            ref,
            (),
            f"ConfigMap {ref} may have changed since the Backup began (its creationTimestamp "
            "or a metadata.managedFields time is unreadable or later): what the Backup "
            "applied is unknown",
        )
    if created > began:
        return ResourcePolicy(
            ref,
            (),
            f"ConfigMap {ref} was created at {created:%Y-%m-%dT%H:%M:%SZ}, after the Backup "
            "began: what the Backup applied is unknown",
        )
    data = cm.get("data")
    if not isinstance(data, dict) or len(data) != 1:
        return _refused(ref, "does not hold exactly one data entry")
    text = next(iter(data.values()))
    try:
        doc = yaml.safe_load(text) if isinstance(text, str) else None
    except yaml.YAMLError:
        doc = None
    if not isinstance(doc, dict):
        return _refused(ref, "holds no readable policy YAML")
    unknown = sorted(
        str(k) for k in doc if k not in ("version", "volumePolicies", "includeExcludePolicy")
    )
    if unknown:
        return _refused(ref, f"has unknown field(s) {', '.join(unknown)}")
    lists = _include_exclude(doc.get("includeExcludePolicy"))
    if isinstance(lists, str):
        return _refused(ref, f"has an includeExcludePolicy {lists}")
    if doc.get("version") != "v1":
        return _refused(ref, f"has version {doc.get('version')!r}, not v1")
    items = doc.get("volumePolicies") or []
    if not isinstance(items, list):
        return _refused(ref, "has volumePolicies that are no list")
    out: list[tuple[dict[str, Any], str]] = []
    for i, item in enumerate(items):
        where = f"volumePolicies[{i}]"
        if not isinstance(item, dict) or set(item) - {"conditions", "action"}:
            return _refused(ref, f"has a {where} that is not {{conditions, action}}")
        action = item.get("action")
        kind = action.get("type") if isinstance(action, dict) else None
        if kind not in _ACTIONS or set(action or {}) - {"type", "parameters"}:
            return _refused(ref, f"has {where}.action.type {kind!r}")
        bad = _valid_conditions(item.get("conditions"))
        if bad is not None:
            return _refused(ref, f"{where} {bad}")
        out.append((dict(item.get("conditions") or {}), str(kind)))
    if lists is not None and any(any(c in e for c in "*?[") for entries in lists for e in entries):
        return ResourcePolicy(
            ref,
            tuple(out),
            f"ConfigMap {ref} has an includeExcludePolicy naming resources by a glob, which "
            "the auditor does not resolve: it may leave out the VM or its disks",
            lists,
        )
    return ResourcePolicy(ref, tuple(out), include_exclude=lists)


def _include_exclude(value: Any) -> tuple[tuple[str, ...], ...] | str | None:
    """An ``includeExcludePolicy`` as its four lists (``_IEP_FIELDS`` order, lower-cased),
    None when absent or empty, or why Velero refuses it: a field it does not know or not a
    list of strings (``decodeStruct`` with ``KnownFields``), ``*`` in a list, or a type both
    included and excluded (``IncludeExcludePolicy.Validate``; internal/resourcepolicies/
    resource_policies.go)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        return "that is no mapping"
    unknown = sorted(str(k) for k in value if k not in _IEP_FIELDS)
    if unknown:
        return f"with unknown field(s) {', '.join(unknown)}"
    lists: list[tuple[str, ...]] = []
    for key in _IEP_FIELDS:
        entries = value.get(key) or []
        if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
            return f"whose {key} is no list of strings"
        if "*" in entries:
            return f"whose {key} holds '*'"
        lists.append(tuple(e.lower() for e in entries))
    for inc, exc, scope in ((0, 1, "namespace"), (2, 3, "cluster")):
        both = sorted(set(lists[inc]) & set(lists[exc]))
        if both:
            return f"that both includes and excludes {scope}-scoped {', '.join(both)}"
    return tuple(lists) if any(lists) else None


def policy_scope(ix: ClusterIndex, b: BackupView) -> BackupView:
    """``b`` with the scope it ran with: its filters combined with the ``includeExcludePolicy``
    of its resource policy (:meth:`~auditor.scope.Scope.with_policy`), or ``b`` itself when
    it has none or that policy is unknown (:func:`backup_policy` then names why).

    Velero combines the policy only into the scoped filters; a Backup with the old ones
    (``includedResources``, ``excludedResources``, ``includeClusterResources``) and such a
    policy fails validation ("cannot be used with include-exclude policies",
    pkg/controller/backup_controller.go ``prepareBackupRequest``), so one read as having run
    keeps its policy unknown (:func:`backup_policy`). Source: velero v1.17+
    https://github.com/vmware-tanzu/velero/blob/main/pkg/util/collections/includes_excludes.go
    ``CombineWithPolicy``.
    """
    policy = backup_policy(ix, b)
    if policy is None or policy.problem is not None or policy.include_exclude is None:
        return b
    return replace(b, scope=b.scope.with_policy(*policy.include_exclude), scope_policy=policy.ref)


def _match(cond: dict[str, Any], pvc: dict[str, Any], pv: dict[str, Any] | None) -> bool | None:
    """Whether every condition matches the PVC (None: one cannot be told)."""
    labels = cond.get("pvcLabels") or {}
    if labels:
        have = dig(pvc, "metadata", "labels")
        if not isinstance(have, dict):
            return False if have is None else None
        if any(have.get(k) != v for k, v in labels.items()):
            return False
    phases = cond.get("pvcPhase") or []
    if phases:
        phase = dig(pvc, "status", "phase")
        if not isinstance(phase, str):
            return None
        if phase not in phases:
            return False
    pv_keys = [k for k in ("capacity", "storageClass", "nfs", "csi", "volumeTypes") if cond.get(k)]
    if not pv_keys:
        return True
    spec = dig(pv, "spec") if pv is not None else None
    if not isinstance(spec, dict):
        return None  # the PV (or its spec) was not read: its capacity, class, source unknown
    verdicts = [_pv_match(key, cond[key], spec) for key in pv_keys]
    if False in verdicts:
        return False
    return None if None in verdicts else True


def _pv_match(key: str, want: Any, spec: dict[str, Any]) -> bool | None:
    if key == "capacity":
        lo, hi = _capacity(want) or (0, 0)
        size = parse_quantity(dig(spec, "capacity", "storage"))
        if size is None:
            return None
        # volume_resources.go capacity.isInRange
        if not lo:
            return hi >= size
        if not hi:
            return lo <= size
        return lo <= size <= hi
    if key == "storageClass":
        sc = spec.get("storageClassName")
        return (sc in want) if isinstance(sc, str) or sc is None else None
    if key == "volumeTypes":
        kind = next((t for t in _PV_TYPES if isinstance(spec.get(t), dict)), "")
        return kind in want
    src = spec.get(key)
    if src is None:
        return False
    if not isinstance(src, dict):
        return None
    if key == "nfs":
        return all(not want.get(f) or want.get(f) == src.get(f) for f in ("server", "path"))
    if not want.get("driver"):
        return True  # csi: {} matches any CSI volume
    if want.get("driver") != src.get("driver"):
        return False
    attrs = src.get("volumeAttributes") or {}
    return all(attrs.get(k) == v for k, v in (want.get("volumeAttributes") or {}).items())


def volume_action(
    policy: ResourcePolicy, pvc: dict[str, Any], pv: dict[str, Any] | None
) -> VolumeAction:
    """The first volume policy of ``policy`` matching ``pvc`` (bound to ``pv``, None when not
    read) and its action (velero ``Policies.match``)."""
    name = dig(pvc, "metadata", "name")
    for i, (cond, action) in enumerate(policy.volume_policies):
        hit = _match(cond, pvc, pv)
        where = f"resource policy {policy.ref} volumePolicies[{i}]"
        if hit is None:
            return VolumeAction(
                None,
                False,
                f"whether {where} (action {action}) matches PVC {name} is unknown: a field its "
                "conditions read (the PV's capacity, class or source, the PVC's labels or "
                "phase) was not read",
            )
        if hit:
            return VolumeAction(action, True, f"{where} matches PVC {name}: action {action}")
    return VolumeAction(
        None, True, f"no volume policy of resource policy {policy.ref} matches PVC {name}"
    )


def backup_policy(ix: ClusterIndex, b: BackupView) -> ResourcePolicy | None:
    """The resource policy Backup ``b`` ran with, as read (None: it names none).

    A reference that is no ``ConfigMap`` (any letter case) is ignored by Velero
    (``GetResourcePoliciesFromBackup``): no policy. A ConfigMap not among those read is
    unknown (the live source reads only labelled ConfigMaps; an export may lack it), never
    absent: ``problem`` says so.
    """
    if b.resource_policy is None:
        return None
    kind, _, name = b.resource_policy.partition("/")
    if b.resource_policy != "?" and kind.lower() != "configmap":
        return None
    ref = f"{b.namespace}/{name}"

    def compute() -> ResourcePolicy:
        if b.resource_policy == "?":
            return ResourcePolicy(ref, (), f"Backup {b.name}'s spec.resourcePolicy is unreadable")
        cm = ix.by_name("ConfigMap").get((b.namespace, name))
        if cm is not None:
            policy = parse_policy_configmap(cm, b.began)
            sc = b.scope
            old = sc.included_resources or sc.excluded_resources
            if (
                policy.include_exclude is not None
                and policy.problem is None
                and (old or b.include_cluster_resources is not None)
            ):
                # Velero fails such a Backup's validation: not the policy it ran with
                return replace(
                    policy,
                    problem=f"ConfigMap {ref} has an includeExcludePolicy, which Velero "
                    f"refuses beside Backup {b.name}'s old resource filters "
                    "(includedResources, excludedResources, includeClusterResources): "
                    "what the Backup applied is unknown",
                )
            return policy
        if ("ConfigMap", b.namespace, name) in ix.data.refused:
            return ResourcePolicy(
                ref,
                (),
                f"ConfigMap {ref} (the Backup's spec.resourcePolicy) was not read: its data "
                "is no mapping of strings (named among the collection problems), so what "
                "Velero applied is unknown",
            )
        return ResourcePolicy(
            ref,
            (),
            f"ConfigMap {ref} (the Backup's spec.resourcePolicy) was not read (not in the "
            "export, or the API server did not return it): export it with the Backups to have "
            "its volume policies applied",
        )

    return ix.memo(f"resource-policy:{b.namespace}/{b.name}", compute)
