"""Whether a Backup takes each object a VM references (Secrets, ConfigMaps, ServiceAccounts,
pinned ControllerRevisions), judged from its filters and the kubevirt Velero plugin.

Velero backs up an object it lists when it passes the namespace, resource and label filters;
an object a BackupItemAction returns as an *additional item* passes only the namespace and
resource filters and the ``velero.io/exclude-from-backup`` label, never the label selector
(velero pkg/backup/item_backupper.go itemInclusionChecks,
https://github.com/vmware-tanzu/velero/blob/main/pkg/backup/item_backupper.go). The kubevirt
plugin returns only some references as additional items (:class:`Reference.plugin_adds`,
https://github.com/kubevirt/kubevirt-velero-plugin/blob/main/pkg/util/kvgraph/util.go); under
a label selector the others are taken only when their own labels match, which for objects the
auditor does not read (Secrets, ConfigMaps, ServiceAccounts) is unknown.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from auditor.inventory.index import EXCLUDE_LABEL, excluded_from_backup, meta_labels
from auditor.inventory.needs import REFERENCE_TYPES, Reference
from auditor.kubevalues import dig, format_time, parse_time
from auditor.scope import Scope, SelectorError

__all__ = ["RefVerdict", "judge_reference", "TAKEN", "DROPPED", "UNKNOWN"]

TAKEN, DROPPED, UNKNOWN = "taken", "dropped", "unknown"


@dataclass(frozen=True)
class RefVerdict:
    """One reference against one Backup: ``state`` is :data:`TAKEN`, :data:`DROPPED` or
    :data:`UNKNOWN`; ``reason`` one clause saying why."""

    ref: Reference
    state: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """Evidence form."""
        return {
            "kind": self.ref.kind,
            "name": self.ref.name,
            "field": self.ref.field,
            "state": self.state,
            "reason": self.reason,
        }


def _plugin_clause(plugin: bool | None, ref: Reference) -> str:
    if plugin is None:
        return "whether the kubevirt plugin runs is unknown"
    if not plugin:
        return "the kubevirt plugin is not enabled"
    return f"the kubevirt plugin does not pull in what {ref.field} names"


def judge_reference(
    ref: Reference,
    scope: Scope,
    plugin: bool | None,
    obj: dict[str, Any] | None,
    *,
    began: datetime | None = None,
    at: datetime | None = None,
) -> RefVerdict:
    """Whether a Backup with ``scope`` takes ``ref`` (the VM's namespace is in it).

    ``plugin``: whether the Backup's Velero runs the kubevirt plugin (None: unknown);
    ``obj``: the referenced object when the auditor read it (ControllerRevisions), else None;
    ``began``: when the Backup began (UTC; None: not known, or not begun yet); ``at``: the
    audit instant (UTC), after which no deletion the input records can have begun.

    An object being deleted (``metadata.deletionTimestamp``) since the Backup began, or
    before, is skipped whatever the filters and even as a plugin's additional item
    ("Skipping item because it's being deleted.", velero pkg/backup/item_backupper.go
    ``itemInclusionChecks``,
    https://github.com/vmware-tanzu/velero/blob/main/pkg/backup/item_backupper.go): red team
    rt37, a pinned revision kept by a finalizer read as taken; a deletionTimestamp that is no
    time leaves it unknown.
    """
    plural, kind, group = REFERENCE_TYPES[ref.resource]
    if not scope.resource_included(plural, kind, group):
        return RefVerdict(ref, DROPPED, f"the Backup's resource filters leave out {ref.resource}")
    if excluded_from_backup(obj):
        return RefVerdict(ref, DROPPED, f"it is labelled {EXCLUDE_LABEL}=true")
    raw = dig(obj, "metadata", "deletionTimestamp")
    if raw is not None:
        deleting = parse_time(raw)
        if deleting is None:
            return RefVerdict(
                ref,
                UNKNOWN,
                "its metadata.deletionTimestamp is no RFC 3339 time: whether Velero skipped "
                "it as being deleted is unknown",
            )
        if at is not None and deleting > at:
            # the API server sets it when deletion is requested: one after the instant is a
            # later read (named by sources.asof) or an edited copy, and when the deletion
            # began, so whether this Backup skipped it, is unknown (fz39: a pinned revision's
            # deletionTimestamp of 2031 read as taken, NOT_READY -> AT_RISK)
            return RefVerdict(
                ref,
                UNKNOWN,
                f"its metadata.deletionTimestamp {format_time(deleting)} is after the audit "
                "time: when its deletion began, so whether Velero skipped it as being "
                "deleted, is unknown",
            )
        if began is None or deleting <= began:
            return RefVerdict(
                ref,
                DROPPED,
                f"it has been in deletion since {format_time(deleting)} "
                f"(metadata.deletionTimestamp){'' if began is None else ', before the Backup began'}"
                ": Velero skips an item that is being deleted",
            )
    if scope.label_selector is None and not scope.or_label_selectors:
        return RefVerdict(ref, TAKEN, "no label selector: the namespace and resources are taken")
    if plugin is True and ref.plugin_adds:
        return RefVerdict(
            ref, TAKEN, "the kubevirt plugin adds it to the VM's backup past the label selector"
        )
    why = _plugin_clause(plugin, ref)
    if obj is None:
        return RefVerdict(
            ref, UNKNOWN, f"the Backup selects by label, {why}, and its labels are not read"
        )
    try:
        match = scope.labels_match(meta_labels(obj))
    except SelectorError as exc:
        return RefVerdict(ref, UNKNOWN, f"the Backup's label selector is malformed ({exc})")
    if match:
        return RefVerdict(ref, TAKEN, "its labels match the Backup's label selector")
    if plugin is None and ref.plugin_adds:
        return RefVerdict(ref, UNKNOWN, f"its labels do not match the label selector and {why}")
    return RefVerdict(ref, DROPPED, f"its labels do not match the label selector and {why}")
