"""Whether a claim recreated with its ``spec.dataSourceRef`` (or ``spec.dataSource``) finds
its data source again when a file-system backup is restored.

Velero recreates a PVC from the backup's copy of it. Its CSI restore action clears the claim's
``dataSource`` and ``dataSourceRef`` (pointing it at the restored VolumeSnapshot, or at nothing
when ``restorePVs`` is false), and a native snapshot's claim keeps its ``volumeName`` and binds to
the restored PV; a file-system backup's claim is only stripped of its ``volumeName`` and is
provisioned anew with its data source as it was
(velero pkg/restore/actions/csi/pvc_action.go, pkg/restore/restore.go,
https://github.com/vmware-tanzu/velero/blob/main/pkg/restore/actions/csi/pvc_action.go;
the kubevirt plugin's PVC restore action changes only labels,
https://github.com/kubevirt/kubevirt-velero-plugin/blob/main/pkg/plugin/pvc_restore_item_action.go).
A claim whose source is gone then stays Pending and the pod volume restore never runs: the CSI
provisioner cannot find a VolumeSnapshot or PVC to clone
(https://github.com/vmware-tanzu/velero/issues/6106,
https://github.com/kubevirt/kubevirt-velero-plugin/issues/117), and CDI's volume populators wait
until their VolumeImportSource, VolumeUploadSource or VolumeCloneSource exists (containerized-
data-importer pkg/controller/populators/populator-base.go ``reconcileCommon``: "Wait until
dataSourceRef exists"), which CDI deletes as soon as the DataVolume succeeded
(pkg/controller/datavolume/import-controller.go ``cleanup``,
https://github.com/kubevirt/containerized-data-importer/blob/main/pkg/controller/datavolume/import-controller.go).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from auditor.inventory.index import ClusterIndex
from auditor.kubevalues import dig

__all__ = ["SourceGap", "CDI_POPULATOR_KINDS", "fs_restore_source_gap"]

#: the populator sources CDI's DataVolume controller makes and deletes once it succeeded
CDI_POPULATOR_KINDS = frozenset({"VolumeImportSource", "VolumeUploadSource", "VolumeCloneSource"})
CDI_GROUP = "cdi.kubevirt.io"
SNAPSHOT_GROUP = "snapshot.storage.k8s.io"


@dataclass(frozen=True)
class SourceGap:
    """A claim's data source a file-system restore does not find.

    ``state``: ``"missing"`` (gone: observed, or ``inferred`` from CDI's cleanup) or
    ``"unknown"``; ``reason``: one clause naming the field and the object."""

    state: str
    reason: str
    inferred: bool = False


def _ref(pvc: dict[str, Any]) -> tuple[str, Any] | None:
    """The first of ``spec.dataSourceRef``, ``spec.dataSource`` set, with its path."""
    spec = pvc.get("spec")
    if not isinstance(spec, dict):
        return None
    for field in ("dataSourceRef", "dataSource"):
        ref = spec.get(field)
        if ref is not None:
            return f"spec.{field}", ref
    return None


def fs_restore_source_gap(ix: ClusterIndex, pvc: dict[str, Any]) -> SourceGap | None:
    """Why ``pvc``, recreated by a file-system backup's restore with its data source, would
    stay Pending (None: it names no source, or one that exists).

    A PVC or VolumeSnapshot source absent from a complete list is missing (observed); a CDI
    populator source of a Bound claim is missing (inferred: CDI deletes it once the
    DataVolume succeeded, and the auditor does not read those kinds); any other source, or
    one whose list was not read whole, is unknown."""
    found = _ref(pvc)
    if found is None:
        return None
    field, ref = found
    if not isinstance(ref, dict):
        # a malformed reference proves no source absent, nor present
        return SourceGap("unknown", f"its {field} is {ref!r}, not an object reference")
    kind, name, group = ref.get("kind"), ref.get("name"), ref.get("apiGroup") or ""
    own_ns = str(dig(pvc, "metadata", "namespace") or "")
    ns = ref.get("namespace") or own_ns
    what = f"its {field} names {kind} {ns}/{name}"
    if not kind or not name or not all(isinstance(v, str) for v in (kind, name, ns)):
        # named by the index (ClusterIndex._data_source_issues)
        return SourceGap("unknown", f"its {field} is no kind and name ({ref!r})")
    if group == "" and kind == "PersistentVolumeClaim":
        if (ns, name) in ix.pvcs:
            return None
        if ix.data.known("PersistentVolumeClaim") and not ix.partial_for(kind, ns):
            return SourceGap("missing", f"{what}, which does not exist: nothing can clone it")
        return SourceGap("unknown", f"{what}, and the PVCs were not all read")
    if group == SNAPSHOT_GROUP and kind == "VolumeSnapshot":
        if (ns, name) in ix.by_name("VolumeSnapshot"):
            return None
        if ix.data.known("VolumeSnapshot") and not ix.partial_for(kind, ns):
            return SourceGap(
                "missing", f"{what}, which does not exist: the provisioner cannot restore it"
            )
        return SourceGap("unknown", f"{what}, and the VolumeSnapshots were not all read")
    if group == CDI_GROUP and kind in CDI_POPULATOR_KINDS:
        if dig(pvc, "status", "phase") == "Bound":
            return SourceGap(
                "missing",
                f"{what}, which CDI deletes once the DataVolume populated the claim: its "
                "populator waits for it",
                inferred=True,
            )
        return SourceGap(
            "unknown", f"{what}, which the auditor does not read, and the claim is not Bound"
        )
    return SourceGap(
        "unknown", f"{what} (group {group or 'core'}), which the auditor does not read"
    )
