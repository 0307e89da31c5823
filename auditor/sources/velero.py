"""Fields of Velero objects that both the bucket reader and the index read the same way."""

from __future__ import annotations

from typing import Any

__all__ = ["VELERO_LOCATION_LABEL", "backup_location"]

#: the BackupStorageLocation Velero wrote a Backup to (velero pkg/controller/backup_controller.go
#: prepareBackupRequest: ``label.GetValidName(spec.storageLocation)`` once it is defaulted)
VELERO_LOCATION_LABEL = "velero.io/storage-location"


def backup_location(obj: dict[str, Any]) -> str | None:
    """The BackupStorageLocation a Backup was written to: ``spec.storageLocation``; when that
    is absent, the ``velero.io/storage-location`` label. Velero fills an unset location with
    the default one and labels the Backup with it before it runs (velero
    pkg/controller/backup_controller.go ``prepareBackupRequest``,
    https://github.com/vmware-tanzu/velero/blob/main/pkg/controller/backup_controller.go), so
    the label is the location it used; the default location *now* may be another one and is
    never taken. None when neither names one (an empty or wrong-typed spec value is named by
    the index and leaves the Backup unread)."""
    spec = obj.get("spec")
    loc = spec.get("storageLocation") if isinstance(spec, dict) else None
    if isinstance(loc, str):
        return loc or None
    if loc is not None:
        return None
    meta = obj.get("metadata")
    labels = meta.get("labels") if isinstance(meta, dict) else None
    label = labels.get(VELERO_LOCATION_LABEL) if isinstance(labels, dict) else None
    return label if isinstance(label, str) and label else None
