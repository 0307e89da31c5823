"""Turn Velero's per-backup metadata files into :class:`StoredVolume` records and counts.

The shapes follow Velero's Go types (vmware-tanzu/velero):

- ``<name>-volumeinfo.json.gz``: a list of ``BackupVolumeInfo``
  (``internal/volume/volumes_information.go``): ``pvcName``, ``pvcNamespace``,
  ``backupMethod`` (``CSISnapshot``/``PodVolumeBackup``/``NativeSnapshot``),
  ``snapshotDataMoved``, ``skipped``/``skippedReason``, ``result``
  (``succeeded``/``failed``) and per-method info holding ``size``. Fields
  without a JSON tag keep their Go name (``Phase``, ``ReadyToUse``).
- ``<name>-resource-list.json.gz``: ``map[string][]string`` keyed by
  ``<group>/<version>/<Kind>`` (``v1/<Kind>`` for the core group), values
  ``<ns>/<name>`` or ``<name>`` (``pkg/backup/backed_up_items_map.go``
  ``ResourceMap``, key from ``pkg/backup/item_backupper.go`` ``resourceKey``).
- ``<name>-results.gz``: ``{"errors": Result, "warnings": Result}`` with
  ``velero``/``cluster`` lists and a ``namespaces`` map of lists
  (``pkg/util/results/result.go``).
- ``<name>-itemoperations.json.gz``: ``BackupOperation`` list
  (``pkg/itemoperation/backup_operation.go``); ``spec.resourceIdentifier`` has
  untagged ``Group``/``Resource``/``Namespace``/``Name``; an operation id starting
  ``du-`` is a data-mover upload (``pkg/backup/actions/csi/pvc_action.go``).
- ``<name>-podvolumebackups.json.gz``: PodVolumeBackup objects, labelled
  ``velero.io/pvc-uid`` (``pkg/podvolume/backupper.go``).
- ``<name>-volumesnapshots.json.gz``: native snapshots naming the PV
  (``internal/volume/native_snapshot.go``).
- ``<name>-csi-volumesnapshotcontents.json.gz``: VolumeSnapshotContents whose
  ``spec.source.volumeHandle`` is the PV's CSI volume handle
  (``pkg/persistence/object_store.go`` ``GetCSIVolumeSnapshotContents``).

Every function takes already decoded JSON and never raises on odd shapes: what
it cannot read is left out (less evidence).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from auditor.kinds import KINDS
from auditor.sources.base import StoredVolume
from auditor.sources.snapshotid import SNAPSHOT_ID_SRC, no_snapshot, says_empty

__all__ = [
    "VolumeLookup",
    "resources_from_list",
    "volumes_from_volumeinfo",
    "volumes_from_method_files",
    "result_counts",
]

_EXTRA_PLURALS = {
    ("k8s.cni.cncf.io", "NetworkAttachmentDefinition"): "network-attachment-definitions",
    ("apps", "ControllerRevision"): "controllerrevisions",
    ("", "Secret"): "secrets",
    ("", "ConfigMap"): "configmaps",
    ("", "ServiceAccount"): "serviceaccounts",
}
_PLURALS = {(k.group, k.kind): k.plural for k in KINDS} | _EXTRA_PLURALS


@dataclass(frozen=True)
class VolumeLookup:
    """Cluster facts that turn PV names and PVC UIDs into ``(namespace, pvc)``."""

    pv_claims: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    pvc_uids: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    #: CSI volume handle -> (namespace, pvc), from the PVs' ``spec.csi.volumeHandle``
    handle_claims: Mapping[str, tuple[str, str]] = field(default_factory=dict)


def group_resource(api_version_kind: str) -> str:
    """``kubevirt.io/v1/VirtualMachine`` -> ``virtualmachines.kubevirt.io``; ``v1/Secret`` -> ``secrets``."""
    parts = api_version_kind.split("/")
    kind = parts[-1]
    group = parts[0] if len(parts) == 3 else ""
    plural = _PLURALS.get((group, kind), kind.lower() + "s")
    return f"{plural}.{group}" if group else plural


def resources_from_list(raw: Any) -> frozenset[tuple[str, str, str]] | None:
    """``(group-resource, namespace or "", name)`` for every item; None when not a mapping."""
    if not isinstance(raw, dict):
        return None
    out: set[tuple[str, str, str]] = set()
    for key, items in raw.items():
        if not isinstance(key, str) or not isinstance(items, list):
            continue
        gr = group_resource(key)
        for item in items:
            if isinstance(item, str):
                ns, _, name = item.rpartition("/")
                out.add((gr, ns, name))
    return frozenset(out)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _volume_info(entry: dict[str, Any]) -> StoredVolume | None:
    ns, pvc = entry.get("pvcNamespace"), entry.get("pvcName")
    if not isinstance(ns, str) or not isinstance(pvc, str) or not pvc:
        return None  # a PV without a claim: nothing a VM names
    raw = entry.get("backupMethod")
    moved = entry.get("snapshotDataMoved") is True
    method, info = {
        "CSISnapshot": ("csi-data-mover", "snapshotDataMovementInfo")
        if moved
        else ("csi-snapshot", "csiSnapshotInfo"),
        "PodVolumeBackup": ("fs-backup", "pvbInfo"),
        "NativeSnapshot": ("native-snapshot", "nativeSnapshotInfo"),
    }.get(str(raw), ("", ""))
    details = entry.get(info) if info else None
    details = details if isinstance(details, dict) else {}
    size = _int(details.get("size"))
    pv = entry.get("pvName")
    found = _volume_result(entry, ns, pvc, method, details, size)
    return replace(found, pv=pv) if isinstance(pv, str) and pv else found


def _volume_result(
    entry: dict[str, Any], ns: str, pvc: str, method: str, details: dict[str, Any], size: int | None
) -> StoredVolume:
    """What one volume info entry says of its PVC's data (``pvName`` left to the caller)."""
    if entry.get("skipped") is True:
        reason = entry.get("skippedReason")
        return StoredVolume(ns, pvc, method, "failed", f"skipped: {reason or 'no reason given'}")
    result = entry.get("result")
    empty = _empty_upload(method, details)
    if empty and result != "failed":
        return StoredVolume(ns, pvc, method, "failed", empty, size)
    if result == "succeeded":
        return StoredVolume(ns, pvc, method, "captured", "result succeeded", size)
    if result == "failed":
        return StoredVolume(ns, pvc, method, "failed", "result failed", size)
    phase = details.get("Phase")
    if phase == "Completed" or (method == "csi-snapshot" and details.get("ReadyToUse") is True):
        return StoredVolume(ns, pvc, method, "captured", f"phase {phase or 'ReadyToUse'}", size)
    return StoredVolume(ns, pvc, method, "failed", f"no result recorded (phase {phase!r})", size)


#: How Velero records an upload of an empty volume: no snapshot ID, so a restore takes
#: nothing from it (velero pkg/controller/data_upload_controller.go,
#: pod_volume_backup_controller.go "volume was empty so no ... was taken/upload";
#: pkg/podvolume/util.go skips a PodVolumeBackup without a snapshot ID).
_EMPTY_SRC = (
    "https://github.com/vmware-tanzu/velero/blob/main/internal/volume/volumes_information.go"
)


def _empty_upload(method: str, details: dict[str, Any]) -> str:
    """Why a node-agent upload recorded in volume info holds nothing ("" when it may): the
    file-system backup's ``pvbInfo.snapshotHandle`` is ``omitempty``, so absent means the
    PodVolumeBackup had no snapshot ID; the data mover's ``snapshotHandle`` is always
    written, so only an empty one says so (internal/volume/volumes_information.go
    PodVolumeInfo, SnapshotDataMovementInfo)."""
    handle = details.get("snapshotHandle")
    if method == "fs-backup" and not (isinstance(handle, str) and handle):
        return f"pvbInfo has no snapshotHandle: the volume was empty, nothing to restore ({_EMPTY_SRC})"
    if method == "csi-data-mover" and "snapshotHandle" in details and not handle:
        return (
            "snapshotDataMovementInfo.snapshotHandle is empty: the volume was empty, nothing to "
            f"restore ({_EMPTY_SRC})"
        )
    return ""


def volumes_from_volumeinfo(raw: Any) -> tuple[StoredVolume, ...] | None:
    """Records from ``-volumeinfo.json.gz`` (None when not a list)."""
    if not isinstance(raw, list):
        return None
    vols = [v for e in raw if isinstance(e, dict) and (v := _volume_info(e)) is not None]
    return tuple(sorted(vols, key=lambda v: (v.namespace, v.pvc, v.method)))


def _dig(obj: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def _from_operations(raw: Any) -> list[StoredVolume]:
    out = []
    for op in raw if isinstance(raw, list) else []:
        rid = _dig(op, "spec", "resourceIdentifier")
        if not isinstance(rid, dict) or rid.get("Resource") != "persistentvolumeclaims":
            continue
        ns, name = rid.get("Namespace"), rid.get("Name")
        if not isinstance(ns, str) or not isinstance(name, str):
            continue
        op_id = str(_dig(op, "spec", "operationID") or "")
        method = "csi-data-mover" if op_id.startswith("du-") else "csi-snapshot"
        phase = _dig(op, "status", "phase")
        error = _dig(op, "status", "error")
        outcome = "captured" if phase == "Completed" else "failed"
        detail = f"operation {phase or 'without phase'}" + (f": {error}" if error else "")
        out.append(StoredVolume(ns, name, method, outcome, detail))
    return out


def _from_pvbs(raw: Any, lookup: VolumeLookup) -> list[StoredVolume]:
    """Records from a Backup's stored ``-podvolumebackups.json.gz`` (PodVolumeBackup objects,
    matched to a PVC of the cluster read by ``velero.io/pvc-uid``); what cannot be read is left
    out. A Completed one without a snapshot ID is read as the cluster's are
    (:func:`_stored_no_snapshot`, round h44b)."""
    out = []
    for pvb in raw if isinstance(raw, list) else []:
        uid = _dig(pvb, "metadata", "labels", "velero.io/pvc-uid")
        claim = lookup.pvc_uids.get(uid) if isinstance(uid, str) else None
        if claim is None:
            continue
        phase = _dig(pvb, "status", "phase")
        size = _int(_dig(pvb, "status", "progress", "totalBytes"))
        outcome = "captured" if phase == "Completed" else "failed"
        msg = _dig(pvb, "status", "message")
        detail = f"PodVolumeBackup {phase or 'without phase'}" + (f": {msg}" if msg else "")
        status = pvb.get("status")
        if outcome == "captured" and isinstance(status, dict) and no_snapshot(status):
            outcome, detail = _stored_no_snapshot(pvb, status)
        out.append(
            StoredVolume(
                claim[0], claim[1], "fs-backup", outcome, detail, size, tie="velero.io/pvc-uid"
            )
        )
    return out


#: A restore reads the cluster's PodVolumeBackups of the Backup
#: (pkg/controller/restore_controller.go), which the backup sync creates from the stored
#: list only where the cluster has none of that name (pkg/controller/backup_sync_controller.go
#: "process the pod volume backups from object store"), and takes nothing from one without a
#: snapshot ID (pkg/podvolume/util.go ``getVolumeBackupInfoForPod``)
_PVB_RESTORE_SRC = (
    "https://github.com/vmware-tanzu/velero/blob/main/pkg/controller/restore_controller.go"
)


def _stored_no_snapshot(pvb: dict[str, Any], status: dict[str, Any]) -> tuple[str, str]:
    """``(outcome, detail)`` of a stored Completed PodVolumeBackup whose ``status``
    :func:`~auditor.sources.snapshotid.no_snapshot` refused, naming the record and its field:
    ``failed`` when the ID is absent and its message says the volume was empty (Velero's
    upload of an empty volume: nothing to restore); ``unknown`` otherwise: Velero writes the
    ID of every other Completed upload (:data:`~auditor.sources.snapshotid.SNAPSHOT_ID_SRC`),
    so the stored record was stripped or edited, and the cluster's record a restore reads
    (:data:`_PVB_RESTORE_SRC`) may hold it. The cluster's reading of the same record
    (auditor.inventory.capture ``_no_snapshot_reason``) is ``unknown`` in every case; the
    bucket keeps an empty volume ``failed`` (rt34). Never raises."""
    ns = _dig(pvb, "metadata", "namespace")
    ref = f"PodVolumeBackup {ns + '/' if isinstance(ns, str) and ns else ''}"
    ref += f"{_dig(pvb, 'metadata', 'name')}"
    src = SNAPSHOT_ID_SRC["PodVolumeBackup"]
    if "snapshotID" in status:
        snapshot = status.get("snapshotID")
        shape = "is empty" if snapshot in (None, "") else "names no snapshot"
        return "unknown", (
            f"{ref} Completed, but its status.snapshotID {shape} ({snapshot!r:.80}), which "
            "Velero omits when empty: the stored record was edited, so whether a restore "
            f"takes a copy is unknown ({src})"
        )
    message = status.get("message")
    empty = says_empty(message)
    if empty:
        return "failed", (
            f"{ref} Completed with no status.snapshotID and status.message {message!r:.80}: "
            f"the volume was empty, nothing to restore ({_EMPTY_SRC})"
        )
    says = (
        "cannot be read (it may say the volume was empty)"
        if empty is None
        else "does not say the volume was empty"
        if message is not None
        else "is absent"
    )
    return "unknown", (
        f"{ref} Completed, but it has no status.snapshotID (absent), which Velero writes on "
        f"every Completed upload but an empty volume's, and its status.message {says}: the "
        "stored record was stripped or edited, and a restore reads the cluster's "
        "PodVolumeBackup (synced from this list only where absent), so whether it takes a "
        f"copy is unknown ({src}; {_PVB_RESTORE_SRC})"
    )


def _from_native(raw: Any, lookup: VolumeLookup) -> list[StoredVolume]:
    out = []
    for snap in raw if isinstance(raw, list) else []:
        pv = _dig(snap, "spec", "persistentVolumeName")
        claim = lookup.pv_claims.get(pv) if isinstance(pv, str) else None
        if claim is None:
            continue
        phase = _dig(snap, "status", "phase")
        outcome = "captured" if phase == "Completed" else "failed"
        out.append(
            StoredVolume(
                claim[0],
                claim[1],
                "native-snapshot",
                outcome,
                f"phase {phase}",
                tie="spec.persistentVolumeName",
            )
        )
    return out


def _from_vscs(raw: Any, lookup: VolumeLookup) -> list[StoredVolume]:
    out = []
    for vsc in raw if isinstance(raw, list) else []:
        handle = _dig(vsc, "spec", "source", "volumeHandle")
        claim = lookup.handle_claims.get(handle) if isinstance(handle, str) else None
        if claim is None:
            continue
        size = _int(_dig(vsc, "status", "restoreSize"))
        detail = _stored_content_fault(vsc.get("status"))
        outcome = "failed" if detail else "captured"
        detail = detail or "VolumeSnapshotContent readyToUse"
        out.append(
            StoredVolume(
                claim[0],
                claim[1],
                "csi-snapshot",
                outcome,
                detail,
                size,
                tie="spec.source.volumeHandle",
            )
        )
    return out


#: Velero's restore makes its static VolumeSnapshotContent from the stored content's
#: ``status.snapshotHandle`` and fails without one ("fail to get snapshot handle from VSC
#: status")
_VSC_RESTORE_SRC = (
    "https://github.com/vmware-tanzu/velero/blob/main/pkg/restore/actions/csi/"
    "volumesnapshotcontent_action.go"
)


def _stored_content_fault(status: Any) -> str:
    """Why a VolumeSnapshotContent stored with a Backup restores nothing ("" when it shows
    ``readyToUse: true`` with a ``snapshotHandle``), naming the field it lacks."""
    if not isinstance(status, dict) or not status:
        return (
            f"VolumeSnapshotContent stored without status: no snapshotHandle ({_VSC_RESTORE_SRC})"
        )
    ready, handle = status.get("readyToUse"), status.get("snapshotHandle")
    if ready is not True:
        return "VolumeSnapshotContent not ready" + (
            "" if ready is False else " (no status.readyToUse: readiness unknown)"
        )
    if not (isinstance(handle, str) and handle):
        return f"VolumeSnapshotContent has no status.snapshotHandle ({_VSC_RESTORE_SRC})"
    return ""


def volumes_from_method_files(
    operations: Any, pvbs: Any, native: Any, lookup: VolumeLookup, vscs: Any = None
) -> tuple[StoredVolume, ...] | None:
    """Records from the per-method files (Velero < 1.13 has no volume info).

    None when they name no PVC the cluster still knows (VolumeSnapshotContents
    and native snapshots are matched through the PVs): an empty result is "no
    record", never "nothing captured".
    """
    vols = _from_operations(operations) + _from_pvbs(pvbs, lookup) + _from_native(native, lookup)
    claimed = {(v.namespace, v.pvc) for v in vols}  # an async operation outranks its snapshot
    vols += [v for v in _from_vscs(vscs, lookup) if (v.namespace, v.pvc) not in claimed]
    if not vols:
        return None
    return tuple(sorted(set(vols), key=lambda v: (v.namespace, v.pvc, v.method, v.outcome)))


def result_counts(raw: Any) -> tuple[int | None, int | None]:
    """``(errors, warnings)`` message counts from ``-results.gz`` (None when unreadable)."""
    if not isinstance(raw, dict):
        return None, None

    def count(result: Any) -> int | None:
        if result is None:
            return 0
        if not isinstance(result, dict):
            return None
        n = sum(len(v) for k in ("velero", "cluster") if isinstance(v := result.get(k), list))
        spaces = result.get("namespaces")
        if isinstance(spaces, dict):
            n += sum(len(v) for v in spaces.values() if isinstance(v, list))
        return n

    return count(raw.get("errors")), count(raw.get("warnings"))
