"""Velero DeleteBackupRequests not yet processed: Backups about to be deleted.

``velero backup delete`` (and Velero's garbage collection of an expired Backup) creates a
DeleteBackupRequest naming the Backup in ``spec.backupName``. Velero's backup deletion
controller takes a request with no phase or ``New``, marks it ``InProgress``, sets the Backup's
phase to ``Deleting`` and removes its snapshots, uploads and bucket objects; a request is
``Processed`` when done or refused (an in-progress Backup, a read-only or unavailable
location: the Backup stays). So a request that is not ``Processed`` names a Backup whose data
is being, or is about to be, deleted, though the Backup may still say Completed
(velero pkg/controller/backup_deletion_controller.go ``Reconcile``).
"""

from __future__ import annotations

from typing import Any

from auditor.inventory.index import ClusterIndex
from auditor.kubevalues import dig

__all__ = ["DELETION_SRC", "pending_deletions"]

DELETION_SRC = (
    "https://github.com/vmware-tanzu/velero/blob/main/pkg/controller/backup_deletion_controller.go"
)


def _pending(request: dict[str, Any]) -> tuple[str, str, str] | None:
    """``(velero namespace, backup name, phase)`` of a request not yet processed, else None.

    A request naming no Backup by a non-empty string is refused by Velero ("spec.backupName
    is required") and deletes nothing; a phase that is not a string is no phase Velero
    writes and counts as not processed (its Backup may be going)."""
    name = dig(request, "spec", "backupName")
    if not isinstance(name, str) or not name:
        return None
    phase = dig(request, "status", "phase")
    if phase == "Processed":
        return None
    ns = dig(request, "metadata", "namespace")
    return (ns if isinstance(ns, str) else ""), name, (phase if isinstance(phase, str) else "")


def pending_deletions(ix: ClusterIndex) -> dict[tuple[str, str], str]:
    """(Velero namespace, Backup name) -> why it is no restore point: the DeleteBackupRequest
    that asks for its deletion and has not been processed (once per audit)."""

    def compute() -> dict[tuple[str, str], str]:
        out: dict[tuple[str, str], str] = {}
        for request in ix.data.of("DeleteBackupRequest"):
            found = _pending(request)
            if found is None:
                continue
            ns, backup, phase = found
            out[(ns, backup)] = (
                f"DeleteBackupRequest {ns}/{dig(request, 'metadata', 'name')} "
                f"({phase or 'not yet taken up'}) asks Velero to delete backup {backup}: its "
                f"snapshots and bucket objects are being removed ({DELETION_SRC})"
            )
        return out

    return ix.memo("pending_deletions", compute)
