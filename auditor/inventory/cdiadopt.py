"""Whether CDI takes a restored DataVolume's restored PVC as its filled disk.

Velero restores an object without its ``ownerReferences`` and ``status`` (velero
pkg/restore/restore.go ``resetMetadata``, ``resetStatus``). A DataVolume and its PVC
restored that way are strangers to CDI: its DataVolume controller refuses a PVC of the
DataVolume's name that the DataVolume does not control ("Resource ... already exists and is
not managed by DataVolume", ``ErrResourceExists``) unless the PVC is marked populated for it
(annotation ``cdi.kubevirt.io/storage.populatedFor: <DataVolume name>``) or the DataVolume
may adopt it (annotation ``cdi.kubevirt.io/allowClaimAdoption`` true, or CDI's
``DataVolumeClaimAdoption`` feature gate)
(containerized-data-importer pkg/controller/datavolume; pkg/featuregates). The DataVolume then
never reaches Succeeded and KubeVirt does not start a VM whose DataVolume is not ready
(kubevirt pkg/virt-controller/watch/vm/vm.go ``handleDataVolumes``).

The kubevirt Velero plugin writes those marks into the backup (``storage.prePopulated`` on a
Succeeded DataVolume, ``storage.populatedFor`` on its PVC: kubevirt-velero-plugin
pkg/plugin/dv_backup_item_action.go), as KubeVirt's integration guide requires of any backup
tool (kubevirt docs/backup-restore-integration.md, "DataVolume Restore"). KubeVirt sets
``allowClaimAdoption: "true"`` on the DataVolumes it creates from ``dataVolumeTemplates``
(kubevirt pkg/storage/types/dv.go ``GenerateDataVolumeFromTemplate``, commit 493090eeb6);
older DataVolumes lack it. CDI decides in this order (containerized-data-importer
pkg/controller/common/util.go ``ClaimMayExistBeforeDataVolume``, ``AllowClaimAdoption``): the
PVC's ``populatedFor`` naming the DataVolume takes it; else the DataVolume's
``allowClaimAdoption`` annotation, when present, decides alone (``strconv.ParseBool``: any
other value is false, "regardless of featuregate"); else the gate, read from the CDIConfig
``config`` ``spec.featureGates`` (pkg/feature-gates/feature-gates.go). The CDI operator marks
its CDI CR ``cdi.kubevirt.io/configAuthority`` and from then copies the CR's ``spec.config``
over the CDIConfig's spec (pkg/operator/controller/callbacks.go
``reconcileSetConfigAuthority``, pkg/controller/config-controller.go). OpenShift
Virtualization's operator writes that CDI CR with ``featureGates`` [HonorWaitForFirstConsumer,
DataVolumeClaimAdoption] and reconciles any other value back (hyperconverged-cluster-operator
controllers/handlers/cdi.go ``getDefaultFeatureGates``, ``UpdateCR``), unless the
HyperConverged's ``containerizeddataimporter.kubevirt.io/jsonpatch`` annotation patches it;
it labels what it manages ``app.kubernetes.io/part-of: hyperconverged-cluster``, and CDI
passes the label to the PVCs it creates. :func:`claim_adoption_gate` reads those objects;
where none is read the gate is unknown, and a refusal that rests on it is UNKNOWN, never a
FAIL (an OpenShift export without them: HCO's default is on).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from auditor.inventory.capture import CaptureStatus
from auditor.inventory.index import BackupView, excluded_from_backup, meta_labels
from auditor.kubevalues import dig
from auditor.scope import SelectorError
from auditor.sources.base import ClusterData, KindState

__all__ = [
    "ADOPTION_SRC",
    "POPULATED_FOR",
    "Gate",
    "adoption_annotated",
    "claim_adoption_gate",
    "datavolume_names",
    "hco_managed",
    "restore_refused",
]

ADOPTION_SRC = "https://github.com/kubevirt/kubevirt/blob/main/docs/backup-restore-integration.md"
POPULATED_FOR = "cdi.kubevirt.io/storage.populatedFor"
ALLOW_ADOPTION = "cdi.kubevirt.io/allowClaimAdoption"
#: the spellings Go's strconv.ParseBool reads as true (CDI parses the annotation with it)
_GO_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
PART_OF = "app.kubernetes.io/part-of"
HCO = "hyperconverged-cluster"


GATE = "DataVolumeClaimAdoption"
CONFIG_AUTHORITY = "cdi.kubevirt.io/configAuthority"
HCO_CDI_PATCH = "containerizeddataimporter.kubevirt.io/jsonpatch"
_CDI_SRC = "containerized-data-importer pkg/controller/common/util.go AllowClaimAdoption"
_HCO_SRC = "hyperconverged-cluster-operator controllers/handlers/cdi.go getDefaultFeatureGates"


@dataclass(frozen=True)
class Gate:
    """Whether CDI's DataVolumeClaimAdoption gate is on: ``on`` (None: cannot be seen) and
    ``why``, the evidence as a phrase ("CDIConfig config spec.featureGates lacks ...")."""

    on: bool | None
    why: str


def claim_adoption_gate(data: ClusterData) -> Gate:
    """The DataVolumeClaimAdoption gate as the objects read show it, in CDI's own order:
    the CDIConfig ``config`` (what CDI reads), else the CDI CR marked
    ``cdi.kubevirt.io/configAuthority`` (copied into it), else a
    HyperConverged (on, HCO's default, unless its CDI jsonpatch annotation touches
    ``/spec/config``: then unknown), else a KubeVirt CR labelled as HCO-managed (on); else
    unknown, naming what was not read and whether the export shows OpenShift.

    Where several objects of one stage may decide (two CDIConfigs or HyperConverged, a
    duplicate the source could not settle, one whose name, annotations or gate list cannot be
    read, one dropped as unreadable: the kind PARTIAL), the gate is off when one says off, on
    only when all say on, else unknown (:func:`_agreed`): an unreadable object never hands the
    decision to the next stage (fz35)."""
    configs = data.of("CDIConfig")
    if configs:
        seen = [
            _listed(dig(c, "spec", "featureGates"), "CDIConfig config spec.featureGates")
            if dig(c, "metadata", "name") == "config"
            else Gate(None, f"a CDIConfig's metadata.name {_shown(dig(c, 'metadata', 'name'))}")
            for c in configs
            if not isinstance(dig(c, "metadata", "name"), str)
            or dig(c, "metadata", "name") == "config"
        ]
        seen += _unread_gate(data, "CDIConfig")
        if seen:
            return _agreed(seen, "the CDIConfig objects named config disagree on " + GATE)
    cdis = data.of("CDI")
    found = [
        _listed(
            dig(c, "spec", "config", "featureGates"),
            f"CDI {dig(c, 'metadata', 'name')} spec.config.featureGates",
        )
        if isinstance(dig(c, "metadata", "annotations"), dict)
        else Gate(
            None,
            f"CDI {_shown(dig(c, 'metadata', 'name'))} metadata.annotations cannot be read "
            f"(it may be marked {CONFIG_AUTHORITY})",
        )
        for c in cdis
        if _authority(dig(c, "metadata", "annotations"))
    ] + _unread_gate(data, "CDI")
    if found:
        return _agreed(found, "the CDI CRs disagree on " + GATE)
    hcs = [_hco_gate(hc) for hc in data.of("HyperConverged")]
    if hcs:
        hcs += _unread_gate(data, "HyperConverged")
        return _agreed(hcs, "the HyperConverged objects disagree")
    if hco_managed(*data.of("KubeVirt")):
        return Gate(True, f"the KubeVirt CR is labelled {PART_OF}={HCO} ({_HCO_SRC})")
    unread = ", ".join(k for k in ("CDIConfig", "CDI", "HyperConverged") if not data.known(k))
    shift = _openshift_signs(data)
    return Gate(
        None,
        "no CDIConfig, CDI or HyperConverged object shows it"
        + (f" (not read: {unread})" if unread else " (none was read)")
        + (
            f"; the export shows OpenShift ({shift}), where OpenShift Virtualization turns it "
            f"on by default ({_HCO_SRC})"
            if shift
            else ""
        ),
    )


def _authority(annotations: Any) -> bool:
    """Whether a CDI CR with ``metadata.annotations`` ``annotations`` may be the config
    authority: marked so, or annotations of another type (unreadable: it may be marked)."""
    if annotations is None:
        return False
    return not isinstance(annotations, dict) or CONFIG_AUTHORITY in annotations


def _unread_gate(data: ClusterData, kind: str) -> list[Gate]:
    """``[unknown]`` when some object of ``kind`` was dropped as unreadable or defined twice
    (the kind is PARTIAL: named among the collection problems): it may be the one that
    decides the gate, and says off; else ``[]``."""
    if data.state(kind) is not KindState.PARTIAL:
        return []
    return [Gate(None, f"a {kind} object could not be read (see the collection problems)")]


def _shown(value: Any) -> str:
    """``value`` as a short phrase for a message (a name that may not be a string)."""
    return ascii(value)[:60] if not isinstance(value, str) else value


def _agreed(gates: list[Gate], disagree: str) -> Gate:
    """One gate of several objects that each may decide it (two CDIConfigs named config, two
    CDI CRs marked as the config authority, two HyperConverged): off when a readable one says
    off (an unreadable or disagreeing one never improves on it), on only when all say on,
    else unknown (fz35: the first CDIConfig read decided, and a CDIConfig or HyperConverged
    that could not be read was passed over for the next object, which said on)."""
    ons = {g.on for g in gates}
    if False in ons:
        off = next(g for g in gates if g.on is False)
        return off if len(ons) == 1 else Gate(False, f"{disagree}; {off.why}")
    if ons == {True}:
        return gates[0]
    unread = next(g for g in gates if g.on is None)
    return unread if len(ons) == 1 else Gate(None, f"{disagree}; {unread.why}")


def _hco_gate(hc: dict[str, Any]) -> Gate:
    """The gate one HyperConverged implies: on (HCO's default) unless its CDI jsonpatch
    annotation may touch ``/spec/config``, or its annotations cannot be read (unknown)."""
    ref = f"HyperConverged {dig(hc, 'metadata', 'namespace')}/{dig(hc, 'metadata', 'name')}"
    raw = dig(hc, "metadata", "annotations")
    if raw is not None and not isinstance(raw, dict):
        return Gate(None, f"{ref} metadata.annotations is a {type(raw).__name__}, not a mapping")
    patch = raw.get(HCO_CDI_PATCH) if isinstance(raw, dict) else None
    if patch is None:
        return Gate(
            True, f"{ref}: its operator sets CDI featureGates to include {GATE} ({_HCO_SRC})"
        )
    if not isinstance(patch, str) or _patches_config(patch):
        return Gate(None, f"{ref} annotation {HCO_CDI_PATCH} may change CDI's featureGates")
    return Gate(True, f"{ref}: its operator sets CDI featureGates to include {GATE} ({_HCO_SRC})")


def _listed(gates: Any, where: str) -> Gate:
    """The gate as the feature-gate list ``gates`` (read at ``where``) shows it."""
    if gates is None:
        gates = []
    if not isinstance(gates, list):
        return Gate(None, f"{where} is a {type(gates).__name__}, not a list")
    if GATE in gates:
        return Gate(True, f"{where} lists {GATE}")
    return Gate(False, f"{where} lacks {GATE}")


def _patches_config(patch: str) -> bool:
    """Whether HCO's JSON patch text ``patch`` may change the CDI CR's ``spec.config`` (an
    unreadable patch may)."""
    try:
        ops = json.loads(patch)
    except ValueError:
        return True
    if not isinstance(ops, list):
        return True
    for op in ops:
        path = op.get("path") if isinstance(op, dict) else None
        if (
            not isinstance(path, str)
            or path in ("", "/", "/spec", "/spec/config")
            or (path.startswith("/spec/config/"))
        ):
            return True
    return False


def _openshift_signs(data: ClusterData) -> str:
    """What in ``data`` shows an OpenShift cluster (``openshift-*`` namespaces, Routes, OADP's
    DataProtectionApplications), as a phrase; "" when nothing does."""
    signs = []
    if any(
        str(dig(n, "metadata", "name") or "").startswith("openshift-") for n in data.of("Namespace")
    ):
        signs.append("openshift-* namespaces")
    if data.of("Route"):
        signs.append("route.openshift.io Routes")
    if data.of("DataProtectionApplication"):
        signs.append("oadp.openshift.io DataProtectionApplications")
    return ", ".join(signs)


def adoption_annotated(dv: dict[str, Any] | None) -> bool:
    """Whether DataVolume ``dv`` carries the ``allowClaimAdoption`` annotation at all (which
    then decides alone, whatever the gate)."""
    annotations = dig(dv, "metadata", "annotations")
    return isinstance(annotations, dict) and ALLOW_ADOPTION in annotations


def hco_managed(*objs: dict[str, Any] | None) -> bool:
    """Whether one of ``objs`` (a KubeVirt CR, a DataVolume, a PVC CDI made) is labelled as
    managed by OpenShift Virtualization's HyperConverged operator."""
    return any(o is not None and meta_labels(o).get(PART_OF) == HCO for o in objs)


def datavolume_names(vm: dict[str, Any]) -> frozenset[str]:
    """The DataVolumes VM ``vm`` names: its ``dataVolumeTemplates`` and ``dataVolume``
    volumes (their PVCs carry the same names). Any part of another shape names none (the
    VM's own validation names the malformed field: auditor.inventory.vmvalidate)."""
    spec = vm.get("spec") if isinstance(vm, dict) else None
    spec = spec if isinstance(spec, dict) else {}
    names = set()
    templates = spec.get("dataVolumeTemplates")
    for t in templates if isinstance(templates, list) else []:
        meta = t.get("metadata") if isinstance(t, dict) else None
        if isinstance(meta, dict) and isinstance(meta.get("name"), str):
            names.add(meta["name"])
    template = spec.get("template")
    tspec = template.get("spec") if isinstance(template, dict) else None
    volumes = tspec.get("volumes") if isinstance(tspec, dict) else None
    for v in volumes if isinstance(volumes, list) else []:
        dv = v.get("dataVolume") if isinstance(v, dict) else None
        if isinstance(dv, dict) and isinstance(dv.get("name"), str):
            names.add(dv["name"])
    return frozenset(names)


def restore_refused(
    b: BackupView,
    dv: dict[str, Any] | None,
    phase: str | None,
    pvc: dict[str, Any] | None,
    plugin: bool | None,
    gate: Gate,
    unread: str | None = None,
) -> tuple[CaptureStatus, str, tuple[str, ...]] | None:
    """Why the disk PVC ``pvc``, captured by ``b``, would not come back as the disk of its
    Succeeded DataVolume ``dv`` (``phase`` its ``status.phase``): ``(status, reason, proof)``,
    or None when it would (no such DataVolume, ``b`` does not take it, the kubevirt plugin
    marks both, the PVC is marked ``populatedFor`` it, the DataVolume's ``allowClaimAdoption``
    is true, or it has none and the gate is on).

    ``plugin`` is whether the kubevirt Velero plugin runs for ``b`` (None: not seen); ``gate``
    the DataVolumeClaimAdoption gate (:func:`claim_adoption_gate`, or on for an object
    labelled as HCO-managed). FAILED only when the plugin surely does not run and CDI surely
    refuses (the annotation false, or absent with the gate seen off); UNKNOWN when either
    cannot be told: a restore is never assumed to work on a plugin or gate no object shows,
    nor to fail on one. ``unread`` names the DataVolume of a ``dataVolume`` volume when
    ``dv`` is None because the DataVolume list was not read whole: whether an unmarked one
    comes back with the PVC is then UNKNOWN (even with the gate on: its own annotation,
    unread, may refuse), never a PASS.
    """
    if plugin is True:
        return None
    if dv is None and unread is not None:
        # gate on or not: the unread DataVolume's own allowClaimAdoption annotation, which CDI
        # reads before and instead of the gate, may be false (lo34 left it a PASS when on)
        unless = (
            f" unless its {ALLOW_ADOPTION} annotation, unread, is true or absent ({GATE} is on)"
            if gate.on is True
            else ""
        )
        return (
            CaptureStatus.UNKNOWN,
            f"DataVolume {unread} may exist, but the DataVolume list was not read whole; "
            "restored unmarked beside its PVC without the kubevirt Velero plugin, CDI would "
            f"refuse the PVC{unless} ({ADOPTION_SRC})",
            (f"DataVolume {unread}: list not read whole",),
        )
    if dv is None or phase != "Succeeded":
        return None
    name = str((dv.get("metadata") or {}).get("name"))
    ns = str((dv.get("metadata") or {}).get("namespace") or "")
    if pvc is not None and meta_labels(pvc, "annotations").get(POPULATED_FOR) == name:
        return None
    allow = meta_labels(dv, "annotations").get(ALLOW_ADOPTION)
    if allow in _GO_TRUE or (allow is None and gate.on is True):
        return None
    try:
        taken = not excluded_from_backup(dv) and b.scope.includes(
            namespace=ns,
            labels=meta_labels(dv),
            plural="datavolumes",
            kind="DataVolume",
            group="cdi.kubevirt.io",
        )
    except SelectorError:
        taken = True  # a selector that cannot be read may take it: the worse reading
    if not taken:
        return None
    if allow is not None:
        why = (
            f"its {ALLOW_ADOPTION} annotation is not true, which CDI reads before and instead "
            f"of the {GATE} gate ({_CDI_SRC})"
        )
        marks = f"DataVolume {ns}/{name} annotation {ALLOW_ADOPTION} not true"
    else:
        why = f"unless CDI's {GATE} gate is on ({gate.why})"
        marks = f"DataVolume {ns}/{name} status.phase=Succeeded, no {ALLOW_ADOPTION}"
    proof = (marks, f"PersistentVolumeClaim {ns}/{name} no {POPULATED_FOR}={name}")
    restored = (
        f"backup {b.name} holds DataVolume {name} and its PVC, unmarked: restored without "
        "their owner references, CDI refuses the PVC as not managed by the DataVolume, which "
        f"never succeeds, so the VM does not start; {why} ({ADOPTION_SRC})"
    )
    if plugin is None:
        return (
            CaptureStatus.UNKNOWN,
            f"whether the kubevirt Velero plugin, which marks a DataVolume's PVC populated, "
            f"runs for backup {b.name} is not seen; without it {restored}",
            proof,
        )
    if allow is None and gate.on is None:
        return (
            CaptureStatus.UNKNOWN,
            f"the kubevirt Velero plugin does not run for it, and whether CDI adopts the "
            f"restored PVC cannot be seen: {restored}",
            (*proof, f"kubevirt Velero plugin not enabled for Velero namespace {b.namespace}"),
        )
    return (
        CaptureStatus.FAILED,
        f"the kubevirt Velero plugin does not run for it; {restored}",
        (*proof, f"kubevirt Velero plugin not enabled for Velero namespace {b.namespace}"),
    )
