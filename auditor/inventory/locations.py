"""Whether a BackupStorageLocation's ``Available`` phase still says something at the audit time.

Velero's server validates each location every ``spec.validationFrequency`` (the server's
``--store-validation-frequency``, 1 minute, when unset; never again after the first time when it
is 0) and writes ``status.phase`` and ``status.lastValidationTime`` together
(velero ``internal/storage/storagelocation.go`` ``IsReadyToValidate``,
``pkg/controller/backup_storage_location_controller.go``). A phase validated long before the
audit is the location as it was then: the Velero server may have stopped, or validation was
turned off. Such a phase is no evidence that the location can be restored from now (red team
rt9, bug case 20 variant: an ``Available`` location last validated ten days before the audit
rated its VMs READY).

A location with ``metadata.deletionTimestamp`` set is being deleted: Velero sets no finalizer
on BackupStorageLocations and its controllers do not look at the timestamp, so the object goes
as soon as any other finalizer is released. Then Velero's restore controller cannot fetch the
location of a Backup stored there (``pkg/controller/restore_controller.go``
``fetchBackupInfoInternal``: the Restore fails validation), new Backups naming it fail
validation (``backup_controller.go`` ``prepareBackupRequest``), the backup sync controller
skips it and the GC controller labels its expired Backups ``BSLNotFound``
(``gc_controller.go``). Its ``Available`` phase is therefore no evidence either.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from auditor.inventory.index import ClusterIndex
from auditor.kubevalues import format_time

__all__ = ["SERVER_VALIDATION_FREQUENCY", "VALIDATION_GRACE", "location_unverified"]

#: Velero's default ``--store-validation-frequency`` (pkg/cmd/server/config).
SERVER_VALIDATION_FREQUENCY = timedelta(minutes=1)
#: The least age at which a validation counts as stale: an export is often read some minutes
#: after it was taken, and a validation is due only every period.
VALIDATION_GRACE = timedelta(hours=1)

_SOURCE = "https://github.com/vmware-tanzu/velero/blob/main/internal/storage/storagelocation.go"
_DELETED_SOURCE = (
    "https://github.com/vmware-tanzu/velero/blob/main/pkg/controller/restore_controller.go"
)


def location_unverified(ix: ClusterIndex, namespace: str, name: str, at: datetime) -> str | None:
    """Why the ``Available`` phase of BackupStorageLocation ``namespace/name`` is no evidence
    at ``at`` (UTC), or why a location that exists has no phase at all (Velero validates every
    location at least once, and writes its phase then: it has not been validated); None when
    the phase is evidence, or the location is absent or in another phase (judged where read).

    Stale means: no readable ``status.lastValidationTime``, or one older than twice the
    location's validation period (at least :data:`VALIDATION_GRACE`) at ``at``. A period of 0
    (validation off) leaves only the grace. A validation after ``at`` (an export audited as of
    an earlier instant) is not stale. A location with ``metadata.deletionTimestamp`` set
    (``ix.deleted_locations``) is being deleted whatever its phase says.
    """
    phase = ix.storage_locations.get((namespace, name))
    where = f"BackupStorageLocation {namespace}/{name}"
    deleted = ix.deleted_locations.get((namespace, name))
    if deleted is not None and phase in ("Available", ""):
        return (
            f"{where} is being deleted (metadata.deletionTimestamp {deleted}): once it is gone "
            f"Velero cannot restore the Backups stored there nor write new ones, so its "
            f"{'Available phase' if phase else 'state'} is no evidence that it can be restored "
            f"from ({_DELETED_SOURCE})"
        )
    if phase == "":
        return (
            f"{where} has no status.phase: Velero has not validated it (it validates every "
            f"location at least once), so whether it can be restored from is unknown ({_SOURCE})"
        )
    if phase != "Available":
        return None
    validated, every = ix.location_checks.get((namespace, name), (None, None))
    if validated is None:
        return (
            f"{where} is Available but has no readable status.lastValidationTime, which Velero "
            f"writes with every validation: when it was last found reachable is unknown ({_SOURCE})"
        )
    period = SERVER_VALIDATION_FREQUENCY if every is None else every
    allowed = max(2 * period, VALIDATION_GRACE)
    age = at - validated
    if age > allowed:
        when = f"{age.total_seconds() / 3600:.1f} h before the audit"
        how = (
            "its validation is turned off (validationFrequency 0)"
            if every is not None and every.total_seconds() == 0
            else f"Velero validates it every {_period(period)}"
        )
        return (
            f"{where} was last validated at {format_time(validated)}, {when}, while {how}: "
            f"its Available phase is the location as it was then, and whether it can be "
            f"restored from now is unknown ({_SOURCE})"
        )
    return None


def _period(value: timedelta) -> str:
    seconds = value.total_seconds()
    return f"{seconds / 3600:g} h" if seconds >= 3600 else f"{seconds / 60:g} min"
