"""Whether a Backup was taken of this cluster, or made from its bucket by Velero's backup sync.

Velero's backup sync controller creates a Backup object for every backup in a
BackupStorageLocation's bucket that the cluster lacks, from the metadata stored there:
``spec`` (its ``includedNamespaces`` and filters), ``status`` (phase, times, counters) and
labels as the cluster that took it wrote them, with ``spec.storageLocation`` and the
``velero.io/storage-location`` label rewritten to this cluster's location
(https://github.com/vmware-tanzu/velero/blob/main/pkg/controller/backup_sync_controller.go
``Reconcile``). Clusters that share a bucket therefore list each other's Backups; nothing in
such a Backup names the cluster it was taken of (the ``velero.io/source-cluster-k8s-*``
annotations give only a Kubernetes version). Velero 1.4-1.15 also created the synced
Backup's PodVolumeBackups (labelled with the source PVC's ``velero.io/pvc-uid``) and
VolumeSnapshotContents (without status); DataUploads and VolumeSnapshots are never synced.

What does show it: the API server sets ``metadata.creationTimestamp`` when the object is
created, and Velero writes ``status.startTimestamp`` only after, when it starts the backup
(``backup_controller.go`` ``prepareBackupRequest``). A Backup created after it completed was
not run by this cluster's Velero as that object: it was synced (or copied in) from storage.
Its namespace and name alone then say nothing of this cluster's VM: only a record tied to
this cluster's PVC by UID or storage volume does.
"""

from __future__ import annotations

from auditor.inventory.index import BackupView
from auditor.kubevalues import format_time

__all__ = ["SYNC_SRC", "synced_from_storage"]

SYNC_SRC = (
    "https://github.com/vmware-tanzu/velero/blob/main/pkg/controller/backup_sync_controller.go"
)


def synced_from_storage(b: BackupView) -> str | None:
    """Why Backup ``b`` may have been taken of another cluster (one clause naming the fields),
    or None when it was created before it ran (taken here) or its times cannot tell.

    ``b`` counts as synced when its ``metadata.creationTimestamp`` is later than its
    ``status.completionTimestamp`` (its ``startTimestamp`` when it has none): the object
    came after the run. A Schedule's next Backup (``planned``) is none.
    """
    ran = b.completed or b.started
    if b.planned or b.created is None or ran is None or b.created <= ran:
        return None
    field = "completionTimestamp" if b.completed is not None else "startTimestamp"
    location = b.storage_location or "(none named)"
    return (
        f"backup {b.name} was created in this cluster (metadata.creationTimestamp "
        f"{format_time(b.created)}) after it ran (status.{field} {format_time(ran)}): "
        f"Velero's backup sync made it from BackupStorageLocation {location}, which other "
        f"clusters may share, and which cluster it was taken of is not recorded ({SYNC_SRC})"
    )
