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

from auditor.inventory.fields import name_fault_of
from auditor.inventory.index import ClusterIndex
from auditor.kubevalues import dig
from auditor.sources.base import KindState

__all__ = ["DELETION_SRC", "deletion_doubts", "pending_deletions"]

DELETION_SRC = (
    "https://github.com/vmware-tanzu/velero/blob/main/pkg/controller/backup_deletion_controller.go"
)


def _pending(request: dict[str, Any]) -> tuple[str, str, str] | None:
    """``(velero namespace, backup name, phase)`` of a request not yet processed, else None.

    A request with no ``spec.backupName`` or an empty one is refused by Velero ("spec.
    backupName is required") and deletes nothing; one whose name cannot be read is left to
    :func:`deletion_doubts`. A phase that is not a string is no phase Velero writes and counts
    as not processed (its Backup may be going)."""
    name = dig(request, "spec", "backupName")
    if not isinstance(name, str) or not name or name_fault_of(name) is not None:
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


def _unreadable(request: Any) -> str | None:
    """Why a DeleteBackupRequest cannot say which Backup it deletes (``field reason``), or
    None: its body, ``spec``, ``status`` or namespace of another type, a ``spec.backupName``
    that is no string or holds a blank or invisible character (a look-alike of a Backup's
    name), a ``status.phase`` that is no string. A request with no ``backupName`` or an empty
    one names nothing Velero deletes (refused: "spec.backupName is required")."""
    if not isinstance(request, dict):
        return f"(object) is a {type(request).__name__}, not a mapping"
    for key in ("spec", "status"):
        if request.get(key) is not None and not isinstance(request[key], dict):
            return f"{key} is a {type(request[key]).__name__}, not a mapping"
    name = dig(request, "spec", "backupName")
    if name is not None and not isinstance(name, str):
        return f"spec.backupName is a {type(name).__name__}, not a string"
    if isinstance(name, str) and name and (fault := name_fault_of(name)) is not None:
        return f"spec.backupName is {fault}"
    phase = dig(request, "status", "phase")
    if phase is not None and not isinstance(phase, str):
        return f"status.phase is a {type(phase).__name__}, not a string"
    ns = dig(request, "metadata", "namespace")
    if ns is not None and not isinstance(ns, str):
        return f"metadata.namespace is a {type(ns).__name__}, not a string"
    return None


def deletion_doubts(ix: ClusterIndex) -> dict[str, str]:
    """Velero namespace (``""``: any, the request's own cannot be read) -> why a Backup of it
    may be named by a DeleteBackupRequest that cannot be read (:func:`_unreadable`), once per
    audit. Such a request may ask for the deletion of any Backup of its namespace: a Backup
    there is then a possible restore point only, never evidence (malformed data never
    improves a verdict; fz35: a ``backupName`` of ``[daily]`` or ``"daily\u200b"`` let a
    Backup being deleted count)."""

    def compute() -> dict[str, str]:
        out: dict[str, str] = {}
        for request in ix.data.of("DeleteBackupRequest"):
            fault = _unreadable(request)
            if fault is None:
                continue
            ns = dig(request, "metadata", "namespace")
            ns = ns if isinstance(ns, str) else ""
            name = dig(request, "metadata", "name")
            file = ix.data.origins.get(("DeleteBackupRequest", ns, str(name)))
            out.setdefault(
                ns,
                f"DeleteBackupRequest {ns}/{name}{f' ({file})' if file else ''} cannot be read "
                f"({fault}): it may ask Velero to delete this backup ({DELETION_SRC})",
            )
        if ix.data.state("DeleteBackupRequest") is KindState.PARTIAL:
            # some request was dropped as unreadable (named among the collection problems)
            out.setdefault(
                "",
                "a DeleteBackupRequest could not be read (see the collection problems): it may "
                f"ask Velero to delete this backup ({DELETION_SRC})",
            )
        return out

    return ix.memo("deletion_doubts", compute)
