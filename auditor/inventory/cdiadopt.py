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
older DataVolumes lack it. OpenShift Virtualization's operator (HyperConverged) always turns
CDI's ``DataVolumeClaimAdoption`` gate on (hyperconverged-cluster-operator
controllers/operands/cdi.go ``dataVolumeClaimAdoptionGate``); it labels what it manages
``app.kubernetes.io/part-of: hyperconverged-cluster``, and CDI passes the label to the PVCs
it creates. Elsewhere the gate is on only where CDIConfig ``spec.featureGates`` lists it,
which the export does not show.
"""

from __future__ import annotations

from typing import Any

from auditor.inventory.capture import CaptureStatus
from auditor.inventory.index import BackupView, excluded_from_backup, meta_labels
from auditor.scope import SelectorError

__all__ = ["ADOPTION_SRC", "POPULATED_FOR", "datavolume_names", "hco_managed", "restore_refused"]

ADOPTION_SRC = "https://github.com/kubevirt/kubevirt/blob/main/docs/backup-restore-integration.md"
POPULATED_FOR = "cdi.kubevirt.io/storage.populatedFor"
ALLOW_ADOPTION = "cdi.kubevirt.io/allowClaimAdoption"
#: the spellings Go's strconv.ParseBool reads as true (CDI parses the annotation with it)
_GO_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
PART_OF = "app.kubernetes.io/part-of"
HCO = "hyperconverged-cluster"


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


def _marked(dv: dict[str, Any], pvc: dict[str, Any] | None, name: str) -> str | None:
    """The annotation that lets CDI take the restored PVC as ``dv``'s, or None."""
    if pvc is not None and meta_labels(pvc, "annotations").get(POPULATED_FOR) == name:
        return f"PVC annotation {POPULATED_FOR}={name}"
    if meta_labels(dv, "annotations").get(ALLOW_ADOPTION) in _GO_TRUE:
        return f"DataVolume annotation {ALLOW_ADOPTION}=true"
    return None


def restore_refused(
    b: BackupView,
    dv: dict[str, Any] | None,
    phase: str | None,
    pvc: dict[str, Any] | None,
    plugin: bool | None,
    gate: bool,
    unread: str | None = None,
) -> tuple[CaptureStatus, str, tuple[str, ...]] | None:
    """Why the disk PVC ``pvc``, captured by ``b``, would not come back as the disk of its
    Succeeded DataVolume ``dv`` (``phase`` its ``status.phase``): ``(status, reason, proof)``,
    or None when it would (no such DataVolume, ``b`` does not take it, the kubevirt plugin
    marks both, or they carry the marks themselves).

    ``plugin`` is whether the kubevirt Velero plugin runs for ``b`` (None: not seen); ``gate``
    whether CDI's DataVolumeClaimAdoption gate is seen on (:func:`hco_managed`). FAILED when
    the plugin surely does not run, UNKNOWN when that cannot be told: a restore is never
    assumed to work on a plugin no object shows. ``unread`` names the DataVolume of a
    ``dataVolume`` volume when ``dv`` is None because the DataVolume list was not read whole:
    whether an unmarked one comes back with the PVC is then UNKNOWN, never a PASS.
    """
    if plugin is True or gate:
        return None
    if dv is None and unread is not None:
        return (
            CaptureStatus.UNKNOWN,
            f"DataVolume {unread} may exist, but the DataVolume list was not read whole; "
            "restored unmarked beside its PVC without the kubevirt Velero plugin, CDI would "
            f"refuse the PVC ({ADOPTION_SRC})",
            (f"DataVolume {unread}: list not read whole",),
        )
    if dv is None or phase != "Succeeded":
        return None
    name = str((dv.get("metadata") or {}).get("name"))
    ns = str((dv.get("metadata") or {}).get("namespace") or "")
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
    if not taken or _marked(dv, pvc, name) is not None:
        return None
    proof = (
        f"DataVolume {ns}/{name} status.phase=Succeeded, no {ALLOW_ADOPTION}=true",
        f"PersistentVolumeClaim {ns}/{name} no {POPULATED_FOR}={name}",
    )
    restored = (
        f"backup {b.name} holds DataVolume {name} and its PVC, unmarked: restored without "
        "their owner references, CDI refuses the PVC as not managed by the DataVolume, which "
        "never succeeds, so the VM does not start, unless CDIConfig spec.featureGates lists "
        f"DataVolumeClaimAdoption, which the export does not show ({ADOPTION_SRC})"
    )
    if plugin is None:
        return (
            CaptureStatus.UNKNOWN,
            f"whether the kubevirt Velero plugin, which marks a DataVolume's PVC populated, "
            f"runs for backup {b.name} is not seen; without it {restored}",
            proof,
        )
    return (
        CaptureStatus.FAILED,
        f"the kubevirt Velero plugin does not run for it; {restored}",
        (*proof, f"kubevirt Velero plugin not enabled for Velero namespace {b.namespace}"),
    )
