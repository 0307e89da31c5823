"""One reading of a Completed DataUpload's or PodVolumeBackup's snapshot ID, shared by the
cluster reading (``auditor.inventory.capture``) and the bucket reader
(``auditor.sources.bucket.decode``): an empty-volume message means an empty volume, no ID and
no such message means the record was stripped or edited (unknown).

Velero's node-agent completes both in one place, writing the uploader's result:
``status.snapshotID`` is set on every Completed record and empty only when the uploader
reported an empty snapshot, and then beside the message :data:`EMPTY_VOLUME`
(https://github.com/vmware-tanzu/velero/blob/main/pkg/controller/data_upload_controller.go
``OnDataUploadCompleted``,
https://github.com/vmware-tanzu/velero/blob/main/pkg/controller/pod_volume_backup_controller.go
``OnDataPathCompleted``). Kopia returns a snapshot ID on every successful backup
(pkg/uploader/provider/kopia.go ``RunBackup``); restic's empty snapshot (Velero 1.1-1.18) and
kopia's empty directory (1.10-1.13, pkg/uploader/kopia/snapshot.go ``Backup``) are that
empty-snapshot case. The field is ``omitempty``, so it is absent exactly when it was empty.
"""

from __future__ import annotations

from typing import Any

__all__ = ["EMPTY_VOLUME", "SNAPSHOT_ID_SRC", "no_snapshot", "says_empty"]

#: The message Velero's node-agent completes an upload of an empty volume with (velero
#: pkg/controller/data_upload_controller.go "volume was empty so no data was upload",
#: pod_volume_backup_controller.go "volume was empty so no snapshot was taken").
EMPTY_VOLUME = "volume was empty"

#: Where Velero completes a DataUpload or PodVolumeBackup (the module docstring's rule).
SNAPSHOT_ID_SRC = {
    "DataUpload": (
        "https://github.com/vmware-tanzu/velero/blob/main/pkg/controller/data_upload_controller.go"
    ),
    "PodVolumeBackup": (
        "https://github.com/vmware-tanzu/velero/blob/main/pkg/controller/"
        "pod_volume_backup_controller.go"
    ),
}


def no_snapshot(status: dict[str, Any]) -> bool:
    """Whether a Completed DataUpload or PodVolumeBackup ``status`` (its ``status`` mapping)
    shows no snapshot a restore can take: its ``snapshotID`` is there but no non-empty
    printable string, or it is absent. Never raises.

    The field is ``omitempty`` (velero pkg/apis/velero/v2alpha1 data_upload_types.go, v1
    pod_volume_backup_types.go), so the API server never stores the empty ID of an empty
    volume's upload: only its message shows it (red team rt34: a Completed upload of an empty
    volume counted as the disk's copy, READY). A blank or unprintable ID cannot show a
    snapshot either (fz35). Velero writes the ID of every other Completed upload
    (:data:`SNAPSHOT_ID_SRC`), so a Completed status without the key and without that
    message was stripped or edited: it proves no copy either (h43a; it counted before).
    """
    if "snapshotID" in status:
        snapshot = status.get("snapshotID")
        # blank, or holding an invisible character, it names no snapshot (fz35)
        return not (isinstance(snapshot, str) and snapshot.strip() and snapshot.isprintable())
    return True


def says_empty(message: Any) -> bool | None:
    """Whether a record's ``status.message`` says the volume was empty (:data:`EMPTY_VOLUME`,
    case-insensitive): True or False for a string or an absent message (None), None when it
    is of another type (it cannot be read, and may say so). Never raises."""
    if isinstance(message, str):
        return EMPTY_VOLUME in message.lower()
    return False if message is None else None
