"""Whether a Backup copied a DataVolume's PVC before CDI finished filling it (round h47b).

The kubevirt-velero-plugin reads the DataVolume's phase when Velero backs its PVC up: a
DataVolume not yet ``Succeeded`` has its PVC annotated ``kvp.kubevirt.io/storage.inprogress``
in the backup and is stored without ``cdi.kubevirt.io/storage.prePopulated``
(pkg/plugin/dv_backup_item_action.go ``handlePVC``, ``handleDataVolume``; kubevirt-velero-
plugin PR #66, "Handle DV that is in progress"), and on restore the PVC is skipped
(pkg/plugin/pvc_restore_item_action.go ``Execute``: ``WithoutRestore``), so CDI fills the
restored DataVolume again from its source, which the backup does not hold. Without the
plugin the half-filled copy itself is restored. Either way the copy holds no finished disk
image: the same reading as a DataVolume that is not ``Succeeded`` now
(:meth:`auditor.inventory.protection.Pairing._capture`), made with the times instead of
today's phase.

The time it finished is the ``lastTransitionTime`` of its ``Ready`` condition, which CDI turns
``True`` exactly when the phase is ``Succeeded``
(https://github.com/kubevirt/containerized-data-importer/blob/main/pkg/controller/datavolume/controller-base.go
``updateConditions``; conditions.go ``updateCondition`` stamps ``metav1.Now()`` on each
status change): :attr:`auditor.inventory.records.DataVolumeRecord.ready_since`.

- Ready after the Backup's ``status.completionTimestamp``: the whole backup ran before the
  fill finished: the copy is of an unfinished disk (FAILED, observed).
- Ready between its ``startTimestamp`` and its completion: whether Velero reached the PVC
  before or after is unknown (UNKNOWN: never a capture).
- A DataVolume created after the Backup began is another object than the one it holds (a
  DataVolume re-created by a restore turns Ready again then): no claim. No ``Ready``
  condition, or no start time: no claim, as before.
"""

from __future__ import annotations

from auditor.inventory.capture import CaptureStatus
from auditor.inventory.index import BackupView
from auditor.inventory.records import DataVolumeRecord
from auditor.kubevalues import format_time

__all__ = ["DV_FILL_SRC", "filled_after"]

DV_FILL_SRC = (
    "https://github.com/kubevirt/kubevirt-velero-plugin/blob/main/pkg/plugin/"
    "dv_backup_item_action.go"
)


def _ready_time_fault(dv: DataVolumeRecord) -> str | None:
    """The named fault of the ``Ready`` condition's ``lastTransitionTime``, or None."""
    return next(
        (
            f"{i.field} {i.reason}"
            for i in dv.issues
            if i.field.startswith("status.conditions[") and i.field.endswith(".lastTransitionTime")
        ),
        None,
    )


def filled_after(
    dv: DataVolumeRecord | None, b: BackupView
) -> tuple[CaptureStatus, str, tuple[str, ...]] | None:
    """``(status, reason, proof)`` when Backup ``b`` began before DataVolume ``dv`` (the
    PVC's, ``Succeeded`` now) finished filling its PVC, else None.

    Status FAILED when ``dv`` turned Ready after ``b``'s ``status.completionTimestamp``,
    UNKNOWN when it turned Ready while ``b`` ran (or ``b`` has no completion time), or when
    the Ready time was named malformed (whether the fill finished before ``b`` is unknown).
    Times are compared as UTC instants. Raises nothing."""
    if dv is None or dv.phase != "Succeeded":
        return None
    ref = f"DataVolume {dv.namespace}/{dv.name}"
    fault = _ready_time_fault(dv)
    if fault is not None:
        return (
            CaptureStatus.UNKNOWN,
            f"DataVolume {dv.name}'s {fault}: whether it had finished filling its PVC when "
            f"backup {b.name} copied it is unknown",
            (f"{ref} {fault}",),
        )
    ready, began = dv.ready_since, b.started
    if ready is None or began is None or ready <= began:
        return None
    if dv.created is not None and dv.created > began:
        return None  # another DataVolume of this name than the one the Backup holds
    proof = (
        f"{ref} status.conditions[Ready].lastTransitionTime={format_time(ready)}",
        f"Backup {b.namespace}/{b.name} status.startTimestamp={format_time(began)}",
    )
    tail = (
        "the kubevirt plugin marks such a PVC kvp.kubevirt.io/storage.inprogress and skips it "
        "on restore, so CDI fills the DataVolume again from its source, which the backup does "
        f"not hold (without the plugin the half-filled copy is restored) ({DV_FILL_SRC})"
    )
    done = b.completed
    if done is not None and ready > done:
        return (
            CaptureStatus.FAILED,
            f"DataVolume {dv.name} turned Ready (Succeeded) at {format_time(ready)}, after "
            f"backup {b.name} completed ({format_time(done)}): the backup copied its PVC "
            f"before CDI finished filling it; {tail}",
            (
                *proof,
                f"Backup {b.namespace}/{b.name} status.completionTimestamp={format_time(done)}",
            ),
        )
    return (
        CaptureStatus.UNKNOWN,
        f"DataVolume {dv.name} turned Ready (Succeeded) at {format_time(ready)}, after backup "
        f"{b.name} began ({format_time(began)}) and "
        + (
            f"before it completed ({format_time(done)})"
            if done is not None
            else "it has no completion time"
        )
        + ": whether Velero copied its PVC before CDI finished filling it is unknown; if it "
        f"did, {tail}",
        proof,
    )
