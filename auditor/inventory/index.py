"""Lookup tables over the collected objects, built once per audit in linear time.

Pairing VMs with their evidence goes through these dicts so the audit stays
O(VMs + objects): never a VM x Backup loop over every Backup in the cluster
(Backups are indexed by the namespaces they name; only wildcard Backups are
considered for every VM).
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from functools import reduce
from typing import Any, TypeVar

from auditor.fieldnames import spelled_as
from auditor.inventory.endpoints import ClusterHosts
from auditor.inventory.fields import (
    FieldIssue,
    name_fault_of,
    owner_ref_fault,
    read_enum,
    read_str,
    read_time,
    to_problem,
)
from auditor.inventory.identities import IdentityIndex
from auditor.inventory.prunednulls import nulls_below
from auditor.inventory.records import (
    DataVolumeRecord,
    PersistentVolumeClaimRecord,
    PersistentVolumeRecord,
    StorageClassRecord,
    VirtualMachineInstanceRecord,
    clone_source_issues,
    parse_record,
)
from auditor.inventory.volmig import migration_state_issues
from auditor.kinds import is_resource_policy
from auditor.kubevalues import dig, format_time, parse_duration, parse_go_duration, parse_time
from auditor.models import CollectionProblem
from auditor.scope import Scope, SelectorError
from auditor.sources.base import ClusterData, KindState
from auditor.sources.velero import backup_location

__all__ = [
    "BackupView",
    "COMPLETED_RULE_SRC",
    "RESTORE_RULE_SRC",
    "RestoreView",
    "ScheduleView",
    "ClusterIndex",
    "meta_labels",
    "meta_label",
    "EXCLUDE_LABEL",
    "excluded_from_backup",
    "VM_SNAPSHOT_PHASES",
    "VM_SNAPSHOT_DELETION_POLICIES",
    "vm_snapshot_value_issues",
]

_V = TypeVar("_V")
_CLUSTER_SCOPED = frozenset({"PersistentVolume", "StorageClass"})
_STR_OR_NONE = (str, type(None))
#: Velero's BackupPhase / RestorePhase values (velero.io/v1 backup_types.go, restore_types.go).
_COMMON_PHASES = (
    "New",
    "FailedValidation",
    "InProgress",
    "WaitingForPluginOperations",
    "WaitingForPluginOperationsPartiallyFailed",
    "Finalizing",
    "FinalizingPartiallyFailed",
    "Completed",
    "PartiallyFailed",
    "Failed",
)
BACKUP_PHASES = (*_COMMON_PHASES, "Deleting", "Queued", "ReadyToStart")
RESTORE_PHASES = BACKUP_PHASES  # the newest Velero queues restores too
#: velero.io/v2alpha1 DataUploadPhase.
DATA_MOVER_PHASES = (
    "New",
    "Accepted",
    "Prepared",
    "InProgress",
    "Canceling",
    "Canceled",
    "Completed",
    "Failed",
)
#: velero.io/v1 BackupStorageLocationPhase (backupstoragelocation_types.go); unset until the
#: first validation.
BSL_PHASES = ("Available", "Unavailable")
#: velero.io/v1 SchedulePhase (schedule_types.go): Velero's schedule controller skips a
#: Schedule that is not Enabled, so a phase outside these is no Schedule it runs or skips.
SCHEDULE_PHASES = ("New", "Enabled", "FailedValidation")
#: Paths, under a VirtualMachineSnapshotContent's ``spec.source.virtualMachine``, that must be
#: mappings when present.
_SNAPSHOT_VM_MAPPINGS = (
    "spec",
    "spec.template",
    "spec.template.spec",
    "spec.template.spec.domain",
    "spec.template.spec.domain.cpu",
)
#: A VolumeSnapshot's own word on whether it was cut, the content a restore reads and the PVC
#: it was cut from (snapshot.storage.k8s.io/v1 VolumeSnapshot).
_VOLUME_SNAPSHOT_FIELDS: _Typed = (
    ("status.readyToUse", bool, "a boolean"),
    ("status.boundVolumeSnapshotContentName", str, "a string"),
    ("spec.source", dict, "a mapping"),
    ("spec.source.persistentVolumeClaimName", str, "a string"),
    ("spec.source.volumeSnapshotContentName", str, "a string"),
    # which VirtualMachineSnapshot's content owns it (a copy that goes with that snapshot)
    ("metadata.ownerReferences", list, "a list"),
    # *VolumeSnapshotError {time, message} (VolumeSnapshotStatus.Error, https://github.com/
    # kubernetes-csi/external-snapshotter/blob/master/client/apis/volumesnapshot/v1/types.go):
    # of another type it says neither that the cut failed nor what failed (round h45b)
    ("status.error", dict, "a mapping (VolumeSnapshotError)"),
)
#: What says whether a VirtualMachineSnapshot holds a usable copy, and of which VM
#: (snapshot.kubevirt.io/v1beta1 VirtualMachineSnapshot).
_VM_SNAPSHOT_FIELDS: _Typed = (
    ("spec.source", dict, "a mapping"),
    ("spec.source.name", str, "a string"),
    ("status.readyToUse", bool, "a boolean"),
    ("status.phase", str, "a string"),
    ("status.virtualMachineSnapshotContentName", str, "a string"),
    # the VM it was taken of: another VM's snapshot is restored neither onto this one nor,
    # with EFI or TPM state, elsewhere (red team rt13)
    ("status.sourceUID", str, "a string"),
    # what keeps it from holding a disk (snapcopy.vm_snapshot_fault): ``Error *Error``
    # {time, message} and ``SnapshotVolumesLists`` (IncludedVolumes, ExcludedVolumes
    # []string) in kubevirt staging/src/kubevirt.io/api/snapshot/v1beta1/types.go. Of another
    # type (``excludedVolumes: data``, ``error: []``) they were read as "nothing excluded", "no
    # error": a disk the snapshot left out counted as copied, unnamed (round h47c)
    ("status.error", dict, "a mapping (Error: time, message)"),
    ("status.snapshotVolumes", dict, "a mapping (SnapshotVolumesLists)"),
    ("status.snapshotVolumes.excludedVolumes", list, "a list of volume names"),
)
#: The VirtualMachineSnapshot and VirtualMachineSnapshotContent fields read as lists or
#: error objects that the API server never stores null (``omitempty`` fields of KubeVirt's
#: snapshot types, none nullable in its CRD schema): written null, they were read as absent
#: ("nothing excluded", "no per-volume status"), unnamed (round h47c).
_VM_SNAPSHOT_NULLS = (
    "status.error",
    "status.snapshotVolumes.includedVolumes",
    "status.snapshotVolumes.excludedVolumes",
)
_VM_SNAPSHOT_CONTENT_NULLS = ("status.error", "status.volumeSnapshotStatus")
#: A VolumeSnapshot's fields of :data:`_VOLUME_SNAPSHOT_FIELDS` written null (``omitempty``
#: pointers in external-snapshotter client/apis/volumesnapshot/v1/types.go, none nullable in
#: its CRD): read as "not ready", "bound to no content" (worse) with nothing named (round
#: h47c, probe seed 4732); named now, the snapshot unread, as its VolumeSnapshotContent's are.
_VOLUME_SNAPSHOT_NULLS = (
    "status.readyToUse",
    "status.boundVolumeSnapshotContentName",
    "status.error",
    "spec.source",
    "spec.source.persistentVolumeClaimName",
    "spec.source.volumeSnapshotContentName",
)


#: The snapshot kinds whose ``metadata.deletionTimestamp`` (a ``*metav1.Time``) the capture
#: and copy rules read as "being deleted" whenever set (capture, snapcopy, facts).
_DELETION_READ_KINDS = (
    "VolumeSnapshot",
    "VolumeSnapshotContent",
    "VirtualMachineSnapshot",
    "VirtualMachineSnapshotContent",
)


def _null_issues(obj: dict[str, Any], paths: tuple[str, ...]) -> list[FieldIssue]:
    """A named issue for each of ``paths`` present in ``obj`` with the value null."""
    out = []
    for path in paths:
        *head, last = path.split(".")
        parent = dig(obj, *head) if head else obj
        if isinstance(parent, dict) and last in parent and parent[last] is None:
            out.append(FieldIssue(path, "is null, which the API server never stores", True))
    return out


#: snapshot.kubevirt.io/v1beta1 ``VirtualMachineSnapshotPhase`` and ``DeletionPolicy``
#: (https://github.com/kubevirt/kubevirt/blob/main/staging/src/kubevirt.io/api/snapshot/v1beta1/types.go;
#: ``PhaseUnset`` is ``""``, which ``omitempty`` never writes).
VM_SNAPSHOT_PHASES = ("InProgress", "Succeeded", "Failed", "Deleting", "Unknown")
VM_SNAPSHOT_DELETION_POLICIES = ("Delete", "Retain")


def vm_snapshot_value_issues(obj: dict[str, Any]) -> list[FieldIssue]:
    """Issues (:class:`FieldIssue`, each naming its field) for the VirtualMachineSnapshot
    fields that decide whether KubeVirt deletes its content and the VolumeSnapshots the
    content owns (kubevirt pkg/storage/snapshot/snapshot.go ``vmSnapshotDeadlineExceeded``,
    ``shouldDeleteContent``; :func:`auditor.inventory.snapcopy.vm_snapshot_terminating`):

    - ``status.phase`` a string outside :data:`VM_SNAPSHOT_PHASES` (``failed``, ``Error``,
      ``""``), or null (its type is checked by :data:`_VM_SNAPSHOT_FIELDS`);
    - ``spec.deletionPolicy`` anything but ``Delete`` or ``Retain`` (a ``*DeletionPolicy``
      string; null is pruned);
    - ``spec.failureDeadline`` no ``metav1.Duration`` string (``60``, ``"1 minute"``,
      ``[5m]``, null): :func:`auditor.kubevalues.parse_go_duration`.

    KubeVirt's CRD schema types the three as strings without an enum (pkg/virt-operator/
    resource/generate/components/validations_generated.go) and its admitter checks none
    (pkg/storage/admitters/vmsnapshot.go), so only a null or a value of another type is one
    the API server refuses (``FieldIssue.rejected``).

    Read as written, an invalid phase or an unreadable deadline left a failed snapshot's
    ready VolumeSnapshots counted as the disk's copies, unnamed (round h47c: RR-STG-001 FAIL
    high -> FAIL medium). The list is empty when all are valid or absent."""
    out: list[FieldIssue] = []
    status, spec = obj.get("status"), obj.get("spec")
    if isinstance(status, dict) and "phase" in status:
        phase = status["phase"]
        if phase is None:
            out.append(FieldIssue("status.phase", "is null, which KubeVirt never writes", True))
        elif isinstance(phase, str) and phase not in VM_SNAPSHOT_PHASES:
            out.append(
                FieldIssue(
                    "status.phase",
                    f"is {phase[:40]!r}, not one of {', '.join(VM_SNAPSHOT_PHASES)} (no phase "
                    "KubeVirt writes: whether the snapshot failed is unknown)",
                )
            )
    if isinstance(spec, dict) and "deletionPolicy" in spec:
        policy = spec["deletionPolicy"]
        if not isinstance(policy, str) or policy not in VM_SNAPSHOT_DELETION_POLICIES:
            shown = repr(policy[:40]) if isinstance(policy, str) else f"a {type(policy).__name__}"
            out.append(
                FieldIssue(
                    "spec.deletionPolicy",
                    f"is {shown}, not one of {', '.join(VM_SNAPSHOT_DELETION_POLICIES)}",
                    not isinstance(policy, str),
                )
            )
    if isinstance(spec, dict) and "failureDeadline" in spec:
        deadline = spec["failureDeadline"]
        if parse_go_duration(deadline) is None:
            shown = (
                repr(deadline[:40]) if isinstance(deadline, str) else f"a {type(deadline).__name__}"
            )
            out.append(
                FieldIssue(
                    "spec.failureDeadline",
                    f"is {shown}, not a Go duration string (metav1.Duration, e.g. 5m0s)",
                    not isinstance(deadline, str),
                )
            )
    return out


#: A VirtualMachineSnapshotContent's fields other than its VM definition: its owner and the
#: volumes a restore recreates (snapshot.kubevirt.io/v1beta1 VirtualMachineSnapshotContentSpec;
#: a ``volumeBackups`` of another type backs up no volume, red team rt13).
_VM_SNAPSHOT_CONTENT_FIELDS: _Typed = (
    ("metadata.ownerReferences", list, "a list"),
    ("spec.volumeBackups", list, "a list"),
    # the content's own word on its volumes (VirtualMachineSnapshotContentStatus in kubevirt
    # staging/src/kubevirt.io/api/snapshot/v1beta1/types.go: ReadyToUse *bool, Error *Error,
    # VolumeSnapshotStatus []VolumeSnapshotStatus): a per-volume status written as a mapping
    # or a scalar was read as "not written", so a VolumeSnapshot it says is not ready counted
    # as the disk's copy, unnamed (round h47c)
    ("status.readyToUse", bool, "true or false"),
    ("status.error", dict, "a mapping (Error: time, message)"),
    ("status.volumeSnapshotStatus", list, "a list (VolumeSnapshotStatus)"),
)
#: A VolumeSnapshotContent's fields the capture records read, with their types
#: (external-snapshotter client/apis/volumesnapshot/v1/types.go). Of another type: a
#: ``readyToUse`` proves neither a snapshot nor its failure; a ``volumeHandle`` proves no copy
#: of any PVC's volume; a ``snapshotHandle`` names no snapshot to restore from (no copy).
#: Named (mutations of the shared export: a handle of 42 changed RR-BKP-003 unnamed).
_CONTENT_FIELDS: _Typed = (
    ("status.readyToUse", bool, "true or false"),
    ("spec.source", dict, "a mapping"),
    ("spec.source.volumeHandle", str, "a string (VolumeSnapshotContentSource.volumeHandle)"),
    ("status.snapshotHandle", str, "a string (VolumeSnapshotContentStatus.snapshotHandle)"),
    # *VolumeSnapshotError {time, message} (VolumeSnapshotContentStatus.Error, types.go as
    # above): ``error: 42`` was read as a failed cut with no message, unnamed (round h45b,
    # bench.mutations absent_typed seed 4571)
    ("status.error", dict, "a mapping (VolumeSnapshotContentStatus.error)"),
)
#: A VolumeSnapshotContent field written null. The CRD makes none of its fields nullable
#: (external-snapshotter client/config/crd/snapshot.storage.k8s.io_volumesnapshotcontents.yaml;
#: ``status``, ``readyToUse`` and ``snapshotHandle`` are ``omitempty`` pointers in
#: client/apis/volumesnapshot/v1/types.go), and the API server prunes the null of a field
#: whose schema is not nullable (https://kubernetes.io/docs/tasks/extend-kubernetes/
#: custom-resources/custom-resource-definitions/#defaulting-and-nullable).
_CONTENT_NULL = (
    "is null, which the API server never stores (a damaged or edited copy): read as absent, "
    "no ready snapshot"
)


def _nulled_status(status: dict[str, Any]) -> tuple[str, ...]:
    """The fields of a VolumeSnapshotContent's ``status`` (a mapping) the capture records
    read that are written null (:data:`_CONTENT_NULL`)."""
    return tuple(
        f"status.{key}"
        for key in ("readyToUse", "snapshotHandle")
        if key in status and status[key] is None
    )


#: snapshot.storage.k8s.io/v1 DeletionPolicy (external-snapshotter's volume_snapshot types)
_DELETION_POLICIES = ("Delete", "Retain")
_VELERO_TIMES = (
    "metadata.creationTimestamp",
    "status.startTimestamp",
    "status.completionTimestamp",
    "status.expiration",
)
VELERO_BACKUP_LABEL = "velero.io/backup-name"
VELERO_SCHEDULE_LABEL = "velero.io/schedule-name"
#: Velero sets a Backup ``Completed`` only from ``Finalizing``, which it reaches only with no
#: error logged and every item operation Completed or Failed (red team r41a)
COMPLETED_RULE_SRC = (
    "https://github.com/vmware-tanzu/velero/blob/main/pkg/controller/backup_controller.go"
)
#: Velero sets a Restore ``Completed`` only from ``Finalizing``, with no error counted
RESTORE_RULE_SRC = "https://github.com/vmware-tanzu/velero/blob/main/pkg/controller/restore_finalizer_controller.go"
#: Velero skips any item carrying this label, additional items from plugins included
#: (velero pkg/backup/item_backupper.go; https://velero.io/docs/main/resource-filtering/).
EXCLUDE_LABEL = "velero.io/exclude-from-backup"
PVC_UID_LABEL = "velero.io/pvc-uid"


#: Kinds whose objects only concern VMs of their own namespace (Services select pods of
#: their namespace; a Route targets Services of its namespace).
#: Per-volume Velero items: the fields naming the PVC (or pod volume) they copied
_ITEM_REFS = {
    "DataUpload": ("spec.sourceNamespace", "spec.sourcePVC"),
    "DataDownload": ("spec.targetVolume.namespace", "spec.targetVolume.pvc"),
    "PodVolumeBackup": ("spec.volume", "spec.pod.name", "spec.pod.namespace"),
    "PodVolumeRestore": ("spec.volume", "spec.pod.name", "spec.pod.namespace"),
}
#: The label naming the Backup or Restore a per-volume item belongs to
_ITEM_OWNER_LABELS = {
    "DataUpload": "velero.io/backup-name",
    "PodVolumeBackup": "velero.io/backup-name",
    "DataDownload": "velero.io/restore-name",
    "PodVolumeRestore": "velero.io/restore-name",
}
#: The labels Velero writes on each per-volume item (velero pkg/apis/velero/v1/
#: labels_annotations.go): which run and which claim the item is of
_ITEM_LABEL_KEYS = {
    k.lower(): k
    for k in (
        "velero.io/backup-name",
        "velero.io/backup-uid",
        "velero.io/pvc-uid",
        "velero.io/restore-name",
        "velero.io/restore-uid",
    )
}


def _item_label_case_issues(o: dict[str, Any]) -> list[FieldIssue]:
    """A label key of a DataUpload, DataDownload, PodVolumeBackup or PodVolumeRestore that is
    one of Velero's item labels (:data:`_ITEM_LABEL_KEYS`) in another case
    (``velero.io/Backup-uid``): a valid key, but none Velero writes, so the label it stands
    for is missing (round m42: a DataUpload of another Backup, its ``velero.io/backup-uid``
    written ``velero.io/Backup-uid``, was read as unlabelled and counted as the Backup's own,
    RR-BKP-004 ERROR -> PASS, UNKNOWN -> AT_RISK). Label keys are case-sensitive
    (https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/)."""
    labels = dig(o, "metadata", "labels")
    if not isinstance(labels, dict):
        return []
    return [
        FieldIssue(
            f"metadata.labels[{key}]",
            f"is Velero's label {_ITEM_LABEL_KEYS[key.lower()]} in another case: label keys "
            "are case-sensitive, so that label is missing",
            True,
        )
        for key in labels
        if isinstance(key, str)
        and key.lower() in _ITEM_LABEL_KEYS
        and key != _ITEM_LABEL_KEYS[key.lower()]
    ]


#: A custom resource's name: a DNS-1123 subdomain (apimachinery ``IsDNS1123Subdomain``), which
#: the API server requires of every custom resource, BackupStorageLocations included
#: (https://github.com/kubernetes/kubernetes/blob/master/staging/src/k8s.io/apiextensions-apiserver/pkg/registry/customresource/validator.go
#: ``customResourceValidator.Validate``: ``validation.NameIsDNSSubdomain``)
_DNS_SUBDOMAIN = re.compile(
    r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*"
)


def _location_name_issues(o: dict[str, Any], path: str) -> list[FieldIssue]:
    """A Backup's ``spec.storageLocation`` or a Schedule's ``spec.template.storageLocation``
    that is a readable string (no blank: :func:`read_str` names those) but no DNS-1123
    subdomain (``Default``, ``default_loc``): no BackupStorageLocation can be named so, so it
    names none, as Velero reads it: its backup controller looks the location up by that name
    and, not found, fails the Backup's validation
    (https://github.com/vmware-tanzu/velero/blob/main/pkg/controller/backup_controller.go
    ``prepareBackupRequest``: "the default %s was not found"). The reading is kept (worse
    than any location); the field is named (round h47c's "left", round h48b). ``""`` (the
    default location) and an absent field name nothing."""
    value = dig(o, *path.split("."))
    if not (isinstance(value, str) and value and name_fault_of(value) is None):
        return []
    if len(value) <= 253 and _DNS_SUBDOMAIN.fullmatch(value):
        return []
    return [
        FieldIssue(
            path,
            f"is {value!r:.60}, no DNS-1123 subdomain (lower-case letters, digits, '-' and "
            "'.'): no BackupStorageLocation is named so, and it is read as naming none",
        )
    ]


#: A namespace name: an RFC 1123 label (apimachinery ValidateNamespaceName)
_NAMESPACE_NAME = re.compile(r"[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?")
_GLOB = re.compile(r"[*?\[\]]")


def _restore_namespace_issues(o: dict[str, Any]) -> list[FieldIssue]:
    """Names in a Restore's ``spec.includedNamespaces`` and ``spec.namespaceMapping`` that
    are no namespace name: a blank around it, a look-alike hyphen or letter (U+2010, a
    Cyrillic a), an upper-case letter. Velero's Restore controller validates the include
    list only as a list (``collections.ValidateIncludesExcludes``; the Backup controller
    alone checks each name, ``ValidateNamespaceIncludesExcludes``,
    https://github.com/vmware-tanzu/velero/blob/main/pkg/controller/restore_controller.go)
    and applies the mapping's keys as written, so such a Restore is stored and restores no
    namespace of that name: which namespace it was meant for is unknown. ``"*"``, ``""`` and
    glob patterns (``*``, ``?``, ``[...]`` read as a letter) are valid includes. Returns one
    issue per bad name (``[]`` when none); cheap: one regex match per name."""
    out: list[FieldIssue] = []
    names = dig(o, "spec", "includedNamespaces")
    if isinstance(names, list):
        for i, n in enumerate(names):
            if isinstance(n, str) and n and not _NAMESPACE_NAME.fullmatch(_GLOB.sub("x", n)):
                out.append(
                    FieldIssue(
                        f"spec.includedNamespaces[{i}]",
                        f"is {n!r}, no namespace name (a blank or a look-alike character): "
                        "Velero restores no namespace of that name",
                    )
                )
    mapping = dig(o, "spec", "namespaceMapping")
    if isinstance(mapping, dict):
        for k, v in mapping.items():
            for what, text in (("key", k), ("target", v)):
                if not (isinstance(text, str) and _NAMESPACE_NAME.fullmatch(text)):
                    out.append(
                        FieldIssue(
                            f"spec.namespaceMapping[{k!r}]",
                            f"{what} {text!r} is no namespace name (a blank or a look-alike "
                            "character): Velero applies it as written, mapping no namespace "
                            "of that name",
                        )
                    )
    return out


def _source_namespace_issues(o: dict[str, Any], *, required: bool) -> list[FieldIssue]:
    """A DataDownload's (``required``) or PodVolumeRestore's ``spec.sourceNamespace`` that is
    no namespace name: the namespace its volume was backed up from, which ties a data restore
    left by a deleted Restore to a VM (:func:`auditor.inventory.drills.deleted_drill_failures`).
    Velero sets it from the Backup (velero pkg/apis/velero/v2alpha1/data_download_types.go,
    pkg/apis/velero/v1/pod_volume_restore_type.go ``SourceNamespace``); a PodVolumeRestore of a
    Velero before it has none (valid). fz39: a failed DataDownload of a deleted drill whose
    sourceNamespace was 42, ``"app "`` or ``App`` was read as another namespace's, and the VM's
    RR-RST-001 FAIL became the older drill's PASS, nothing named."""
    issues: list[FieldIssue] = []
    src = read_str(o, "spec.sourceNamespace", issues, required=required)
    spec = o.get("spec")
    if isinstance(spec, dict) and spec.get("sourceNamespace", "") is None and not issues:
        issues.append(FieldIssue("spec.sourceNamespace", "is null, which Velero never writes"))
    if src is not None and not _NAMESPACE_NAME.fullmatch(src):
        issues.append(FieldIssue("spec.sourceNamespace", f"is {src!r}, no namespace name", True))
    return issues


def _backup_namespace_issues(o: dict[str, Any], where: str) -> list[FieldIssue]:
    """Names in a Backup's (``where``: ``spec``) or a Schedule's Backup template's
    (``spec.template``) ``includedNamespaces``/``excludedNamespaces`` that are no namespace
    name (a blank around it, a look-alike hyphen or letter, an upper-case letter).

    Velero's Backup and Schedule controllers refuse such a list
    (``collections.ValidateNamespaceIncludesExcludes``: each name, ``*`` read as a letter,
    must pass ``ValidateNamespaceName``;
    https://github.com/vmware-tanzu/velero/blob/main/pkg/util/collections/includes_excludes.go)
    and set the phase FailedValidation; releases before that check applied the name as
    written, excluding (or including) no namespace of that name. So a Backup or Schedule in any
    other phase holding one is a damaged or edited copy whose scope is unknown (fz39: an
    exclude of ``"billing "`` read as written made a Backup cover the namespace it excluded).
    ``""`` is no namespace and skipped by Velero (valid). One issue per bad name."""
    if dig(o, "status", "phase") == "FailedValidation":
        return []  # Velero refused it: what RR-BKP-003/RR-PLT-002 read of it, consistently
    out: list[FieldIssue] = []
    for key in ("includedNamespaces", "excludedNamespaces"):
        names = dig(o, *where.split("."), key)
        for i, n in enumerate(names if isinstance(names, list) else ()):
            if isinstance(n, str) and n and not _NAMESPACE_NAME.fullmatch(_GLOB.sub("x", n)):
                out.append(
                    FieldIssue(
                        f"{where}.{key}[{i}]",
                        f"is {n!r}, no namespace name (a blank or a look-alike character): "
                        "Velero refuses it (FailedValidation) or, before it validated names, "
                        "applied it to no namespace of that name",
                        True,
                    )
                )
    return out


_OWN_NAMESPACE_KINDS = frozenset({"Service", "Route", "ControllerRevision", "VolumeSnapshot"})
#: The kinds the API server always writes a ``spec`` for, read by :func:`_selector_issues`
#: (a Service's selector, a Route's backends; a VolumeSnapshot's source). Not a
#: ControllerRevision: it has no spec at all, its body is ``data`` and ``revision`` (apps/v1
#: ControllerRevision; KubeVirt's revisions: kubevirt pkg/instancetype/revision/store.go
#: CreateControllerRevision), so every revision KubeVirt wrote was named 'spec is missing'
#: and its namespace's revisions counted as partly unread (fp32)
_SELECTOR_KINDS = frozenset({"Service", "Route", "VolumeSnapshot"})
#: Sections of an instancetype or preference spec (as a ControllerRevision holds it in
#: ``data.spec``) that KubeVirt's API types define as objects; anything else there is no
#: revision KubeVirt wrote (instancetype.kubevirt.io/v1beta1 types)
_REVISION_SPEC_MAPPINGS = (
    "cpu",
    "memory",
    "devices",
    "features",
    "firmware",
    "machine",
    "clock",
    "volumes",
    "launchSecurity",
    "requirements",
)
#: ``(dotted path, the type the API gives it, that type in words)`` of fields read as typed.
_Typed = tuple[tuple[str, type, str], ...]

#: Phases Velero writes (velero pkg/apis/velero/v1 delete_backup_request_types.go
#: DeleteBackupRequestPhase, backup_repository_types.go BackupRepositoryPhase).
_NEW_KIND_PHASES = {
    "DeleteBackupRequest": frozenset({"New", "InProgress", "Processed"}),
    "BackupRepository": frozenset({"New", "Ready", "NotReady"}),
}
#: Where a kind lists CDI feature gates (containerized-data-importer CDIConfigSpec and
#: CDISpec.config: ``featureGates []string``).
_GATE_LISTS = {"CDIConfig": "spec.featureGates", "CDI": "spec.config.featureGates"}


def _enum_and_item_issues(kind: str, obj: dict[str, Any]) -> list[FieldIssue]:
    """A ``spec`` or ``status`` written null, a ``status.phase`` string no Velero release
    writes (``processed``, ``Processed ``), and a feature-gate entry that is no string (``42``,
    null): named (bench.mutations fz35, seeds 3003-3004: read as "not processed" or "gate
    off", unnamed; fz36, a null status). Cheap: a few objects."""
    out = [
        # the API server prunes a null field (and Go writes a struct as {}), so no stored
        # object has one: a NotReady BackupRepository's ``status: null`` read as one not yet
        # prepared, UNKNOWN -> READY with nothing named (bench.mutations null_list, fz36)
        FieldIssue(section, "is null, which the API server never stores")
        for section in ("spec", "status")
        if section in obj and obj[section] is None
    ]
    phases = _NEW_KIND_PHASES.get(kind)
    phase = dig(obj, "status", "phase")
    if phases is not None and isinstance(phase, str) and phase and phase not in phases:
        out.append(
            FieldIssue("status.phase", f"is {ascii(phase)[:40]}, no phase Velero writes", True)
        )
    where = _GATE_LISTS.get(kind)
    gates = dig(obj, *where.split(".")) if where is not None else None
    if isinstance(gates, list):
        out += [
            FieldIssue(f"{where}[{i}]", f"is a {type(g).__name__}, not a string", True)
            for i, g in enumerate(gates)
            if not isinstance(g, str)
        ]
    return out


#: The fields of today's kinds that decide a verdict, by kind: which Backup a
#: DeleteBackupRequest deletes and whether it is done (velero pkg/apis/velero/v1
#: delete_backup_request_types.go), which copies a BackupRepository reads back and whether it
#: is Ready (backup_repository_types.go), and CDI's feature gates (containerized-data-importer
#: pkg/apis/core/v1beta1 CDIConfigSpec, CDISpec; HCO's annotations). Of another type they are
#: named here (file, object, field); their readers (auditor.inventory.deletions, repos,
#: cdiadopt) never read them as the better answer.
_GATE_AND_DELETION_FIELDS: dict[str, _Typed] = {
    "DeleteBackupRequest": (
        ("spec.backupName", str, "a string"),
        ("status.phase", str, "a string"),
    ),
    "BackupRepository": (
        ("spec.volumeNamespace", str, "a string"),
        ("spec.backupStorageLocation", str, "a string"),
        ("spec.repositoryType", str, "a string"),
        ("status.phase", str, "a string"),
        ("status.message", str, "a string"),
    ),
    "CDIConfig": (("metadata.name", str, "a string"), ("spec.featureGates", list, "a list")),
    "CDI": (
        ("metadata.annotations", dict, "a mapping"),
        ("spec.config", dict, "a mapping"),
        ("spec.config.featureGates", list, "a list"),
    ),
    "HyperConverged": (("metadata.annotations", dict, "a mapping"),),
    # the labels its next Backup carries (velero pkg/builder/backup_builder.go FromSchedule):
    # of another type, ScheduleView read the Schedule's own instead, unnamed (fz35)
    "Schedule": (
        ("spec.template.metadata", dict, "a mapping"),
        ("spec.template.metadata.labels", dict, "a mapping"),
    ),
}


def _owner_issues(obj: Any) -> list[FieldIssue]:
    """An issue per ``metadata.ownerReferences`` entry the API server would refuse
    (:func:`auditor.inventory.fields.owner_ref_fault`): whose object it is cannot be read."""
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    if isinstance(meta, dict) and "ownerReferences" in meta and meta["ownerReferences"] is None:
        # ObjectMeta's list is omitempty: the API server never writes it null (read as "no
        # owner", a snapshot content lost the VM snapshot that owns it, unnamed: fz39)
        return [
            FieldIssue("metadata.ownerReferences", "is null, which the API server never writes")
        ]
    refs = dig(obj, "metadata", "ownerReferences")
    return [
        FieldIssue(f"metadata.ownerReferences[{i}]", fault, True)
        for i, ref in enumerate(refs if isinstance(refs, list) else ())
        if (fault := owner_ref_fault(ref)) is not None
    ]


#: The DataProtectionApplication fields the index reads (OADP's DataProtectionApplication
#: API, oadp-operator api/v1alpha1/dataprotectionapplication_types.go)
_DPA_SECTIONS: _Typed = (
    ("spec.configuration", dict, "a mapping"),
    ("spec.configuration.velero", dict, "a mapping"),
    ("spec.configuration.velero.args", dict, "a mapping"),
    ("spec.configuration.velero.args.default-volumes-to-fs-backup", bool, "true or false"),
    # DefaultBackupTTL *time.Duration: an integer of nanoseconds in JSON (round m42: a string
    # "24h", a float or a null was read as no ttl known, or as none set, with nothing named)
    ("spec.configuration.velero.args.default-backup-ttl", int, "an integer of nanoseconds"),
    ("spec.configuration.velero.defaultVolumesToFSBackup", bool, "true or false"),
    ("spec.configuration.velero.defaultSnapshotMoveData", bool, "true or false"),
    ("spec.configuration.nodeAgent", dict, "a mapping"),
    ("spec.configuration.nodeAgent.enable", bool, "true or false"),
    ("spec.configuration.restic", dict, "a mapping"),
    ("spec.configuration.restic.enable", bool, "true or false"),
    ("spec.configuration.nodeAgent.restorePVC", dict, "a mapping"),
    ("spec.configuration.nodeAgent.restorePVC.ignoreDelayBinding", bool, "true or false"),
)


def _null_at(obj: Any, path: str) -> bool:
    """Whether ``path`` (dotted) is present in ``obj`` and written null."""
    parent, _, leaf = path.rpartition(".")
    holder = dig(obj, *parent.split(".")) if parent else obj
    return isinstance(holder, dict) and leaf in holder and holder[leaf] is None


#: The phases a Backup reaches only after it ran, with both times written: velero
#: pkg/controller/backup_controller.go sets ``status.startTimestamp`` when the Backup goes
#: InProgress and ``status.completionTimestamp`` with its final phase (runBackup), and
#: pkg/controller/backup_finalizer_controller.go for one that waited on plugin operations
_FINISHED_BACKUP_PHASES = ("Completed", "PartiallyFailed")


def _finished_time_issues(o: dict[str, Any], phase: str | None) -> list[FieldIssue]:
    """A Backup's time fields an export of a stored Backup always holds and this one lacks
    (absent or null; a value that is no time is :func:`read_time`'s): its
    ``metadata.creationTimestamp`` (the API server sets it on every object) and, once it
    finished (:data:`_FINISHED_BACKUP_PHASES`), its start and completion times.

    Round m42: read as absent, a synced Backup (:func:`~auditor.inventory.provenance
    .synced_from_storage`: created after it completed) without its creationTimestamp, or
    without both status times, counted as taken of this cluster (RR-BKP-004 ERROR -> PASS,
    UNKNOWN -> AT_RISK), and a Completed Backup without its times dated its data from its
    creation (r41c left it unnamed)."""
    out = []
    meta = o.get("metadata")
    if isinstance(meta, dict) and "creationTimestamp" not in meta:
        out.append(
            FieldIssue(
                "metadata.creationTimestamp",
                "is missing: the API server sets it on every object it stores",
                True,
            )
        )
    if phase in _FINISHED_BACKUP_PHASES:
        status = o.get("status")
        out += [
            FieldIssue(
                f"status.{key}",
                f"is missing from a {phase} Backup: Velero writes it before that phase",
            )
            for key in ("startTimestamp", "completionTimestamp")
            if isinstance(status, dict) and status.get(key) is None
        ]
    return out


def _wrong_types(obj: Any, fields: _Typed, prefix: str = "") -> list[FieldIssue]:
    """A named issue for each field of ``fields`` set in ``obj`` to a value of another type
    (``prefix``: where ``obj`` sits in its object); an absent or null field is no issue. A
    boolean is no integer here (Python's bool is an int; the API's are distinct types).

    A field naming an object (``...Name``, ``name``) that is ``""`` or holds a blank or an
    invisible character names none: an issue too (bench.mutations padded and empty_string,
    seed 232: a VolumeSnapshot's ``boundVolumeSnapshotContentName: " snapcontent-..."`` read
    as bound to no content, unnamed)."""
    out = []
    for path, want, what in fields:
        value = dig(obj, *path.split("."))
        if value is None:
            continue
        if not isinstance(value, want) or (want is int and isinstance(value, bool)):
            out.append(
                FieldIssue(f"{prefix}{path}", f"is a {type(value).__name__}, not {what}", True)
            )
        elif isinstance(value, str) and path.endswith(("Name", ".name")):
            fault = "an empty string" if not value else name_fault_of(value)
            if fault is not None:
                out.append(FieldIssue(f"{prefix}{path}", f"is {fault}: it names no object"))
    return out


#: Fields of a preference spec the auditor reads (:func:`auditor.inventory.vmspec._read_firmware`),
#: with the type KubeVirt's API gives them (instancetype.kubevirt.io/v1beta1
#: FirmwarePreferences, DevicePreferences, MachinePreferences:
#: https://kubevirt.io/api-reference/main/definitions.html): of another type, the revision
#: says nothing of the VM's firmware (bench.mutations seed 1499: a string ``preferredEfi``
#: read as "no EFI preference").
_REVISION_PREFERENCE_FIELDS: _Typed = (
    ("firmware.preferredEfi", dict, "a mapping"),
    ("firmware.preferredUseBios", bool, "true or false"),
    ("firmware.preferredUseBiosSerial", bool, "true or false"),
    # deprecated, still applied without preferredEfi (kubevirt applyFirmwarePreferences)
    ("firmware.preferredUseEfi", bool, "true or false"),
    ("firmware.preferredUseSecureBoot", bool, "true or false"),
    ("devices.preferredTPM", dict, "a mapping"),
    ("machine.preferredMachineType", str, "a string"),
    # the switches inside them (KubeVirt's EFI and TPMDevice: *bool): "yes" read as false
    # made a persistent TPM volatile, unnamed (mutations of the shared export)
    ("devices.preferredTPM.persistent", bool, "true or false"),
    ("firmware.preferredEfi.persistent", bool, "true or false"),
    ("firmware.preferredEfi.secureBoot", bool, "true or false"),
)


#: The fields of a KubeVirt CR the checks read, with their API types (KubeVirtConfiguration,
#: ArchConfiguration, ArchSpecificConfiguration, NetworkConfiguration, InterfaceBindingPlugin,
#: KubeVirtStatus: https://kubevirt.io/api-reference/main/definitions.html): RR-PLT-006 and
#: RR-FW-002 (gates, version, state class), RR-DSK-003 (the default machine type a restore
#: gets, per architecture), RR-NET-001/002 (the NAD each binding plugin is registered with).
_KUBEVIRT_FIELDS: _Typed = (
    ("spec.configuration", dict, "a mapping"),
    ("spec.configuration.developerConfiguration", dict, "a mapping"),
    ("spec.configuration.vmStateStorageClass", str, "a string"),
    ("spec.configuration.machineType", str, "a string"),
    ("spec.configuration.architectureConfiguration", dict, "a mapping"),
    ("spec.configuration.architectureConfiguration.defaultArchitecture", str, "a string"),
    ("spec.configuration.architectureConfiguration.amd64", dict, "a mapping"),
    ("spec.configuration.architectureConfiguration.amd64.machineType", str, "a string"),
    ("spec.configuration.architectureConfiguration.arm64", dict, "a mapping"),
    ("spec.configuration.architectureConfiguration.arm64.machineType", str, "a string"),
    ("spec.configuration.architectureConfiguration.s390x", dict, "a mapping"),
    ("spec.configuration.architectureConfiguration.s390x.machineType", str, "a string"),
    ("spec.configuration.network", dict, "a mapping"),
    ("spec.configuration.network.binding", dict, "a mapping"),
    ("status.observedKubeVirtVersion", str, "a string"),
    ("status.operatorVersion", str, "a string"),
    ("status.defaultArchitecture", str, "a string"),
)
_KUBEVIRT_NULL = (
    "is null, which the API server never stores (it prunes a null field of a custom "
    "resource whose schema does not make it nullable): a damaged or edited copy"
)


def _kubevirt_issues(obj: dict[str, Any]) -> list[FieldIssue]:
    """What makes the parts of a KubeVirt CR the checks read unreadable: a field of
    :data:`_KUBEVIRT_FIELDS` of another type or written null, ``featureGates`` that is no list
    of strings, a binding plugin entry that is no mapping or whose
    ``networkAttachmentDefinition`` is no string.

    mutations seed 2003: a gate of 42, or a configuration of "junk", read as "no gates" and
    changed verdicts with nothing named. fz39: a default ``machineType`` of 42 read as
    KubeVirt's built-in ``q35`` (RR-DSK-003 FAIL low -> PASS, AT_RISK -> READY); a binding
    plugin's ``networkAttachmentDefinition`` of 42, or the plugin entry a string, read as
    "no NAD" (RR-NET-001 FAIL high -> PASS, NOT_READY -> READY); ``vmStateStorageClass: null``
    read as unset, so the default class (RR-PLT-006 FAIL -> PASS). The API server prunes a
    null of a field the CRD's schema does not make nullable
    (https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#defaulting-and-nullable),
    so none of these is null in a stored KubeVirt CR."""
    issues = _wrong_types(obj, _KUBEVIRT_FIELDS)
    issues += [
        FieldIssue(section, _KUBEVIRT_NULL)
        for section in ("spec", "status")
        if section in obj and obj[section] is None
    ]
    paths = [p for p, _, _ in _KUBEVIRT_FIELDS]
    paths.append("spec.configuration.developerConfiguration.featureGates")
    for path in paths:
        parent, _, leaf = path.rpartition(".")
        holder = dig(obj, *parent.split("."))
        if isinstance(holder, dict) and leaf in holder and holder[leaf] is None:
            issues.append(FieldIssue(path, _KUBEVIRT_NULL))
    path = "spec.configuration.developerConfiguration.featureGates"
    gates = dig(obj, *path.split("."))
    if gates is not None and not (
        isinstance(gates, list) and all(isinstance(g, str) for g in gates)
    ):
        issues.append(FieldIssue(path, "is not a list of strings", True))
    binding = dig(obj, "spec", "configuration", "network", "binding")
    for plugin, conf in binding.items() if isinstance(binding, dict) else ():
        where = f"spec.configuration.network.binding.{plugin}"
        if not isinstance(conf, dict):
            # a plugin KubeVirt registers has an InterfaceBindingPlugin object; read as one
            # without a NAD, a missing NAD passed (fz39)
            if conf is None:
                issues.append(FieldIssue(where, _KUBEVIRT_NULL))
            else:
                issues.append(FieldIssue(where, f"is a {type(conf).__name__}, not a mapping", True))
            continue
        nad = conf.get("networkAttachmentDefinition")
        if "networkAttachmentDefinition" in conf and not isinstance(nad, str):
            field_ = f"{where}.networkAttachmentDefinition"
            issues.append(
                FieldIssue(field_, _KUBEVIRT_NULL)
                if nad is None
                else FieldIssue(field_, f"is a {type(nad).__name__}, not a string", True)
            )
    return issues


def _data_source_issues(obj: dict[str, Any]) -> list[FieldIssue]:
    """What makes the golden image a DataSource names unreadable: ``spec`` or
    ``spec.source`` missing, null or no mapping (``DataSourceSpec.Source`` is required), or a
    ``pvc``/``snapshot`` source that names nothing readable (:func:`clone_source_issues`).
    containerized-data-importer api/pkg/apis/core/v1beta1/types.go ``DataSourceSpec``,
    ``DataSourceSource``. fz39: ``spec.source.pvc.name: 42`` (or ``pvc: junk``,
    ``source: null``) read as "a source the export cannot judge", and the never-filled disk
    cloned from a gone golden image counted as held: NOT_READY -> READY, nothing named."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        what = "missing" if "spec" not in obj else f"a {type(spec).__name__}, not a mapping"
        return [FieldIssue("spec", f"is {what}", True)]
    if "source" not in spec:
        return [FieldIssue("spec.source", "is missing (every DataSource has one)", True)]
    return clone_source_issues(obj, "spec.source")


def _misspelt_keys(node: Any, path: str = "", depth: int = 0) -> list[tuple[str, str]]:
    """``(path of the field it stands for, key)`` for each key below ``node`` that is a known
    field name in another case or with blanks (:func:`auditor.fieldnames.spelled_as`)."""
    out: list[tuple[str, str]] = []
    if depth > 8:
        return out
    items = (
        node.items()
        if isinstance(node, dict)
        else enumerate(node)
        if isinstance(node, list)
        else ()
    )
    for key, value in items:
        meant = spelled_as(key) if isinstance(key, str) else None
        step = str(meant or key) if isinstance(node, dict) else f"[{key}]"
        here = f"{path}.{step}" if path and isinstance(node, dict) else f"{path}{step}"
        if meant is not None:
            out.append((here, str(key)))
        out += _misspelt_keys(value, here, depth + 1)
    return out


def _spec_issues(spec: Any, prefix: str) -> list[FieldIssue]:
    """What makes an instancetype or preference spec (``prefix``: where it sits) unreadable:
    a section of :data:`_REVISION_SPEC_MAPPINGS` that is no mapping, or a field of
    :data:`_REVISION_PREFERENCE_FIELDS` of another type."""
    if not isinstance(spec, dict):
        return []
    issues = [
        FieldIssue(f"{prefix}.{part}", "is not a mapping", True)
        for part in _REVISION_SPEC_MAPPINGS
        if spec.get(part) is not None and not isinstance(spec.get(part), dict)
    ]
    issues += _wrong_types(spec, _REVISION_PREFERENCE_FIELDS, f"{prefix}.")
    # a key that stands for a field in another case or with a blank around it
    # (``"firmware\u00a0"``): KubeVirt decodes no such field, so the setting under it is
    # missing, never a spec without it (fz39 seed 11503: a pinned preference's EFI
    # settings so hidden, RR-FW-002 FAIL -> N/A, AT_RISK -> READY, nothing named)
    issues += [
        FieldIssue(
            f"{prefix}.{path}", f"is written {key!r}, a field name in another case or with a blank"
        )
        for path, key in _misspelt_keys(spec)
    ]
    # instancetype and preference schemas allow no null (the API server prunes each): a
    # null preferredEfi.persistent read as unset made EFI NVRAM volatile, unnamed
    # (bench.mutations null_scalar, seed 410)
    return issues + [
        FieldIssue(f"{prefix}{path[4:]}", why)
        for path, why in nulls_below({"spec": spec}, ("spec",))
        if not any(i.field.startswith(f"{prefix}{path[4:]}") for i in issues)
    ]


def _instancetype_spec_issues(obj: dict[str, Any]) -> list[FieldIssue]:
    """An issue when ``obj``'s ``spec`` is missing, null or no mapping: instancetypes and
    preferences (instancetype.kubevirt.io/v1beta1) require one, and the API server prunes a
    null field. Read as a spec without settings, a Windows preference's EFI and TPM vanished
    and RR-FW-002 went PASS -> NOT_APPLICABLE, unnamed (bench.mutations null_list)."""
    spec = obj.get("spec")
    if isinstance(spec, dict):
        return []
    what = "missing" if spec is None else f"a {type(spec).__name__}, not a mapping"
    return [FieldIssue("spec", f"is {what} (every instancetype and preference has one)", True)]


def _selector_issues(kind: str, o: dict[str, Any]) -> list[FieldIssue]:
    """A Service's ``spec.selector`` must be a ``str -> str`` map; a Route's ``spec.to`` a
    mapping and ``spec.alternateBackends`` a list of mappings. Otherwise which VM the object
    names cannot be told (https://kubernetes.io/docs/reference/kubernetes-api/service-resources/service-v1/,
    https://docs.openshift.com/container-platform/latest/rest_api/network_apis/route-route-openshift-io-v1.html)."""
    spec = o.get("spec")
    if spec is None:
        # the API server writes every Service's and Route's spec (a Service's ports, a Route's
        # ``to`` are required): without one, what it selects is unknown, never "nothing"
        # (mutations: a Service whose spec was null let RR-NET-003 pass, AT_RISK -> READY)
        return [FieldIssue("spec", "is missing or null (the API server always writes it)", True)]
    if not isinstance(spec, dict):
        return []
    if kind == "Service":
        sel = spec.get("selector")
        if sel is not None and not (
            isinstance(sel, dict)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in sel.items())
        ):
            return [FieldIssue("spec.selector", "is not a string-to-string mapping", True)]
        return []
    if kind != "Route":
        return []
    to, alt = spec.get("to"), spec.get("alternateBackends")
    if to is not None and not isinstance(to, dict):
        return [FieldIssue("spec.to", "is not a mapping", True)]
    if alt is not None and not (isinstance(alt, list) and all(isinstance(a, dict) for a in alt)):
        return [FieldIssue("spec.alternateBackends", "is not a list of mappings", True)]
    targets = [("spec.to", to)] + [
        (f"spec.alternateBackends[{i}]", a) for i, a in enumerate(alt or [])
    ]
    if to is None:
        # RouteSpec.To is required (openshift route validation: "spec.to.name: Required")
        return [FieldIssue("spec.to", "is missing: every Route names the Service it exposes", True)]
    for path, target in targets:
        for key in ("kind", "name"):
            value = target.get(key) if isinstance(target, dict) else None
            if value is not None and not isinstance(value, str):
                return [FieldIssue(f"{path}.{key}", "is not a string", True)]
            if key == "name" and (not value or name_fault_of(value) is not None):
                # RouteTargetReference.Name is required and names a Service (openshift
                # pkg/route/apis/route/validation ValidateRoute: "spec.to.name: Required
                # value"); "", null or a name with a blank names none, and read so the Route
                # dropped out of RR-NET-003 (bench.mutations empty_string/null, fz39 seed
                # 11102: AT_RISK -> READY, nothing named)
                fault = "missing or empty" if not value else name_fault_of(value)
                return [FieldIssue(f"{path}.name", f"is {fault}: it names no Service", True)]
            if key == "kind" and value not in (None, "", "Service"):
                # OpenShift defaults an empty kind to Service and refuses any other (openshift
                # route validation: a backend "must reference a Service"); read as "not a
                # Service" the Route dropped out of RR-NET-003 (bench.mutations number_string,
                # seed 904: UNKNOWN read as READY)
                return [
                    FieldIssue(
                        f"{path}.kind",
                        f"is {value!r:.40}; a Route's backend must be a Service",
                        True,
                    )
                ]
    return []


def excluded_from_backup(obj: dict[str, Any] | None) -> bool:
    """True when ``obj`` carries ``velero.io/exclude-from-backup=true``."""
    return obj is not None and meta_label(obj, EXCLUDE_LABEL) == "true"


VELERO_RESTORE_LABEL = "velero.io/restore-name"


def meta_labels(obj: dict[str, Any], key: str = "labels") -> dict[str, str]:
    """Return ``metadata.labels`` (or annotations) as ``str -> str``, ignoring junk."""
    raw = dig(obj, "metadata", key)
    if not isinstance(raw, dict):
        return {}
    return {str(k): str(v) for k, v in raw.items() if isinstance(v, str | int | float | bool)}


def meta_label(obj: dict[str, Any] | None, name: str, key: str = "labels") -> str | None:
    """``meta_labels(obj, key).get(name)`` without building the whole map (asked of every
    VolumeSnapshotContent, PVC and Backup item, often hundreds of thousands)."""
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    raw = meta.get(key) if isinstance(meta, dict) else None
    value = raw.get(name) if isinstance(raw, dict) else None
    if isinstance(value, str):
        return value
    return str(value) if isinstance(value, int | float | bool) else None


def _name(obj: dict[str, Any]) -> str:
    return str(obj["metadata"]["name"])


def _ns(obj: dict[str, Any]) -> str:
    return str(obj["metadata"].get("namespace") or "")


def _require_backup_spec(obj: dict[str, Any]) -> None:
    """Raise :class:`SelectorError` when a Backup's ``spec`` is null, or absent although
    Velero ran the Backup (``status.phase`` set).

    The API server prunes a null field of a custom resource, so a null spec is no export of
    a stored object; and Velero's backup controller writes its defaults (``storageLocation``,
    ``ttl``, the timeouts) into the spec of every Backup it takes up (velero
    pkg/controller/backup_controller.go prepareBackupRequest, then a patch of the object).
    Read as an empty spec, either became a Backup of every namespace: bench.mutations
    (null_list) over the shared export turned RR-BKP-003's FAIL into a PASS, unnamed.
    """
    spec = obj.get("spec", _ABSENT)
    if spec is None:
        raise SelectorError("spec is null, which the API server never stores")
    if spec is _ABSENT and dig(obj, "status", "phase") is not None:
        raise SelectorError(
            "spec is missing although Velero ran the Backup (it writes its defaults there)"
        )


_ABSENT = object()


@dataclass(frozen=True)
class BackupView:
    """One Velero Backup, parsed. Times are UTC; ``when`` is completion, else start, else creation."""

    name: str
    namespace: str
    phase: str
    scope: Scope
    created: datetime | None
    started: datetime | None
    completed: datetime | None
    expiration: datetime | None
    snapshot_volumes: bool | None
    fs_backup_default: bool
    snapshot_move_data: bool
    storage_location: str | None
    schedule: str | None
    errors: int | None
    warnings: int | None
    csi_attempted: int | None
    csi_completed: int | None
    #: Velero status counters are ``omitempty``: an absent counter is 0 (velero
    #: pkg/apis/velero/v1/backup_types.go BackupStatus).
    native_attempted: int = 0
    native_completed: int = 0
    item_ops_attempted: int = 0
    item_ops_completed: int = 0
    item_ops_failed: int = 0
    annotations: Mapping[str, str] = field(default_factory=dict)
    #: ``spec.resourcePolicy`` as ``<kind>/<name>`` (Velero reads a ConfigMap of the Backup's
    #: namespace), or None when the Backup has none; "?" when it is set but unreadable
    resource_policy: str | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    #: ``status.progress.itemsBackedUp`` (None when absent): Velero's own count of the items
    #: the Backup holds (pkg/backup/backup.go)
    items_backed_up: int | None = None
    #: ``status.progress`` or its ``itemsBackedUp`` is set but no count (``"0"``, -1, a
    #: string progress): whether the Backup holds any item is unknown (never "holds some")
    items_unreadable: bool = False
    #: ``status.hookStatus.hooksFailed``: how many backup hooks ended in an error (KubeVirt's
    #: virt-freezer pre/post hooks on virt-launcher pods among them); 0 when absent
    #: (``omitempty``), None when set but unreadable. Velero counts every pod of the Backup,
    #: not one VM's (velero pkg/apis/velero/v1/backup_types.go ``HookStatus``, v1.11+).
    hooks_failed: int | None = 0
    #: ``spec.includeClusterResources`` (None when unset or not a boolean)
    include_cluster_resources: bool | None = None
    #: a Backup a Schedule has yet to make (:meth:`ScheduleView.next_backup`), not one read
    planned: bool = False
    #: ``namespace/name`` of the resource-policy ConfigMap whose ``includeExcludePolicy`` is
    #: combined into ``scope`` (auditor.inventory.volpolicy.policy_scope), None when none is
    scope_policy: str | None = None
    #: ``expiration`` was computed (creationTimestamp + spec.ttl), the Backup's
    #: ``status.expiration`` being unset: inferred, not what Velero recorded
    expiration_from_ttl: bool = False

    @property
    def completed_contradiction(self) -> str | None:
        """Why a ``Completed`` Backup's status counters say it is no clean one (None when they
        agree, or the phase is another).

        Velero writes ``Completed`` only through ``Finalizing``, which it sets only when no
        error was logged (``status.errors`` is that log's count), and it moves a Backup whose
        item operation failed to ``WaitingForPluginOperationsPartiallyFailed`` (errors counted)
        and finalizes only once every operation is Completed or Failed: so a Completed Backup
        has ``errors`` 0, ``backupItemOperationsFailed`` 0, Attempted equal to Completed plus
        Failed, and every native snapshot completed (a failed one is logged as an error)
        (velero pkg/controller/backup_controller.go, backup_operations_controller.go,
        pkg/backup/item_backupper.go ``takePVSnapshot``: :data:`COMPLETED_RULE_SRC`). Such a
        status was edited or damaged, or an item failed: never a clean Backup. The CSI
        counters are left out: Velero 1.12.0-1.12.1 wrote ``csiVolumeSnapshotsCompleted``
        wrong on clean Backups (velero#7047, #7163)."""
        if self.phase != "Completed":
            return None
        odd: list[str] = []
        if self.errors:
            odd.append(f"status.errors={self.errors}")
        if self.item_ops_failed:
            odd.append(f"status.backupItemOperationsFailed={self.item_ops_failed}")
        if self.item_ops_attempted > self.item_ops_completed + self.item_ops_failed:
            odd.append(
                f"status.backupItemOperationsAttempted={self.item_ops_attempted} but Completed="
                f"{self.item_ops_completed} and Failed={self.item_ops_failed}"
            )
        if self.native_attempted > self.native_completed:
            odd.append(
                f"status.volumeSnapshotsAttempted={self.native_attempted} but Completed="
                f"{self.native_completed}"
            )
        return ", ".join(odd) or None

    @property
    def filters(self) -> str:
        """What ``scope`` holds, for a message: "its filters", naming the combined policy."""
        if self.scope_policy is None:
            return "filters"
        return f"filters (with the includeExcludePolicy of resource policy {self.scope_policy})"

    @property
    def when(self) -> datetime | None:
        """Best time for ordering backups (completion, else start, else creation)."""
        return self.completed or self.started or self.created

    @property
    def began(self) -> datetime | None:
        """When the backup started reading the cluster (start, else creation)."""
        return self.started or self.created

    @property
    def data_time(self) -> datetime | None:
        """How old its data may be: its start (else creation, else completion). A restore
        brings back what the Backup read from its start on, so the RPO counts from there: a
        data-mover upload that ran four hours made five-hour-old data look one hour old when
        counted from completion (red team)."""
        if self.started and self.completed and self.completed < self.started:
            return self.completed  # a status that contradicts itself: the older instant
        return self.started or self.created or self.completed

    @staticmethod
    def parse_policy(ref: Any) -> str | None:
        """A Backup's ``spec.resourcePolicy`` (a TypedLocalObjectReference: velero
        pkg/apis/velero/v1/backup_types.go) as ``<kind>/<name>``; "?" when set but
        unreadable; None when unset."""
        if ref is None:
            return None
        if isinstance(ref, dict) and isinstance(ref.get("name"), str) and ref["name"]:
            kind = ref.get("kind")
            return f"{kind if isinstance(kind, str) and kind else 'ConfigMap'}/{ref['name']}"
        return "?"

    @classmethod
    def parse(cls, obj: dict[str, Any]) -> BackupView:
        """Build from a Backup object; unreadable fields become None.

        Raises:
            SelectorError: the spec is null, or absent from a Backup Velero has run (its
                scope is then unknown, never "every namespace").
        """
        _require_backup_spec(obj)
        spec = obj.get("spec") or {}
        status = obj.get("status") or {}
        ttl = parse_duration(spec.get("ttl"))
        created = parse_time(dig(obj, "metadata", "creationTimestamp"))
        expiration = parse_time(status.get("expiration"))
        from_ttl = expiration is None and ttl is not None and created is not None
        if from_ttl and ttl is not None and created is not None:
            expiration = created + ttl
        phase = status.get("phase")
        items = dig(status, "progress", "itemsBackedUp")
        return cls(
            name=_name(obj),
            namespace=_ns(obj),
            phase=phase if isinstance(phase, str) else "",
            scope=Scope.from_spec(spec),
            created=created,
            started=parse_time(status.get("startTimestamp")),
            completed=parse_time(status.get("completionTimestamp")),
            expiration=expiration,
            expiration_from_ttl=from_ttl,
            snapshot_volumes=spec.get("snapshotVolumes")
            if isinstance(spec.get("snapshotVolumes"), bool)
            else None,
            fs_backup_default=spec.get("defaultVolumesToFsBackup") is True,
            snapshot_move_data=spec.get("snapshotMoveData") is True,
            storage_location=backup_location(obj),
            schedule=meta_label(obj, VELERO_SCHEDULE_LABEL),
            errors=_int(status.get("errors")),
            warnings=_int(status.get("warnings")),
            csi_attempted=_int(status.get("csiVolumeSnapshotsAttempted")),
            csi_completed=_int(status.get("csiVolumeSnapshotsCompleted")),
            native_attempted=_int(status.get("volumeSnapshotsAttempted")) or 0,
            native_completed=_int(status.get("volumeSnapshotsCompleted")) or 0,
            item_ops_attempted=_int(status.get("backupItemOperationsAttempted")) or 0,
            item_ops_completed=_int(status.get("backupItemOperationsCompleted")) or 0,
            item_ops_failed=_int(status.get("backupItemOperationsFailed")) or 0,
            annotations=meta_labels(obj, "annotations"),
            resource_policy=cls.parse_policy(spec.get("resourcePolicy")),
            labels=meta_labels(obj),
            items_backed_up=_int(items),
            hooks_failed=_hooks_failed(status.get("hookStatus")),
            include_cluster_resources=spec.get("includeClusterResources")
            if isinstance(spec.get("includeClusterResources"), bool)
            else None,
            items_unreadable=(
                "progress" in status
                and status["progress"] is not None
                and not isinstance(status["progress"], dict)
            )
            or (items is not None and (_int(items) is None or items < 0)),
        )


@dataclass(frozen=True)
class RestoreView:
    """One Velero Restore, parsed."""

    name: str
    namespace: str
    phase: str
    backup_name: str | None
    schedule_name: str | None
    scope: Scope
    created: datetime | None
    completed: datetime | None
    namespace_mapping: dict[str, str]
    labels: dict[str, str] = field(default_factory=dict)
    restore_pvs: bool | None = None
    #: ``status.progress.itemsRestored`` (None when absent or no integer)
    items_restored: int | None = None
    #: ``status.restoreItemOperations{Attempted,Completed,Failed}``: the Restore's async item
    #: operations (a data-mover DataDownload is one), None when Attempted is absent or any
    #: of the three is no integer (Completed and Failed are omitted when 0: omitempty)
    item_ops: tuple[int, int, int] | None = None
    #: ``status.errors`` (None when absent or no integer: ``omitempty``, so absent is 0)
    errors: int | None = None

    @property
    def completed_contradiction(self) -> str | None:
        """Why a ``Completed`` Restore's status counters say it is no clean one (None when
        they agree, or the phase is another).

        Velero moves a Restore with any error (``status.errors``, a failed item operation
        counted among them) to ``...PartiallyFailed`` and writes ``Completed`` only from
        ``Finalizing`` once every operation is Completed or Failed (velero
        pkg/controller/restore_controller.go, restore_operations_controller.go,
        restore_finalizer_controller.go: :data:`RESTORE_RULE_SRC`): such a status was edited
        or damaged (red team r41a)."""
        if self.phase != "Completed":
            return None
        odd: list[str] = []
        if self.errors:
            odd.append(f"status.errors={self.errors}")
        if self.item_ops is not None:
            attempted, completed, failed = self.item_ops
            if failed:
                odd.append(f"status.restoreItemOperationsFailed={failed}")
            if attempted > completed + failed:
                odd.append(
                    f"status.restoreItemOperationsAttempted={attempted} but Completed="
                    f"{completed} and Failed={failed}"
                )
        return ", ".join(odd) or None

    @classmethod
    def parse(cls, obj: dict[str, Any]) -> RestoreView:
        """Build from a Restore object; unreadable fields become None."""
        spec = obj.get("spec") or {}
        status = obj.get("status") or {}
        mapping = spec.get("namespaceMapping")
        return cls(
            name=_name(obj),
            namespace=_ns(obj),
            phase=str(status["phase"]) if isinstance(status.get("phase"), str) else "",
            backup_name=spec.get("backupName") if isinstance(spec.get("backupName"), str) else None,
            schedule_name=spec.get("scheduleName")
            if isinstance(spec.get("scheduleName"), str)
            else None,
            scope=Scope.from_spec(spec),
            created=parse_time(dig(obj, "metadata", "creationTimestamp")),
            completed=parse_time(status.get("completionTimestamp")),
            namespace_mapping={str(k): str(v) for k, v in mapping.items()}
            if isinstance(mapping, dict)
            else {},
            labels=meta_labels(obj),
            restore_pvs=spec["restorePVs"] if isinstance(spec.get("restorePVs"), bool) else None,
            items_restored=restored
            if isinstance(restored := dig(status, "progress", "itemsRestored"), int)
            and not isinstance(restored, bool)
            else None,
            item_ops=_restore_item_ops(status),
            errors=_int(status.get("errors")),
        )


def _restore_item_ops(status: dict[str, Any]) -> tuple[int, int, int] | None:
    """``(attempted, completed, failed)`` of a Restore's ``status`` (velero
    pkg/apis/velero/v1/restore_types.go: each ``omitempty``), None when ``attempted`` is
    absent (an older Velero, or none counted) or a count is no non-negative integer."""
    counts = []
    for key, absent in (
        ("restoreItemOperationsAttempted", None),
        ("restoreItemOperationsCompleted", 0),
        ("restoreItemOperationsFailed", 0),
    ):
        value = status.get(key, absent)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            return None
        counts.append(value)
    return counts[0], counts[1], counts[2]


@dataclass(frozen=True)
class ScheduleView:
    """One Velero Schedule: its template scope, pause flag and last backup time."""

    name: str
    namespace: str
    paused: bool
    cron: str | None
    scope: Scope
    last_backup: datetime | None
    #: ``spec.template.storageLocation``: None for the default BackupStorageLocation
    storage_location: str | None = None
    #: ``spec.template.ttl``, the lifetime of the Backups it makes: None when unset or zero
    #: (Velero's default then applies: pkg/controller/backup_controller.go
    #: prepareBackupRequest); ``ttl_unread`` when set but no Go duration
    ttl: timedelta | None = None
    ttl_unread: bool = False
    #: ``status.phase`` (New, Enabled, FailedValidation; "" when unset): Velero's schedule
    #: controller skips a Schedule that is not Enabled (pkg/controller/schedule_controller.go)
    phase: str = ""
    #: ``spec.template``, the spec of every Backup it makes
    template: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    #: the labels of every Backup it makes: ``spec.template.metadata.labels`` when set, else
    #: the Schedule's own (velero pkg/builder/backup_builder.go ``FromSchedule``)
    backup_labels: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)
    #: the annotations of every Backup it makes: the Schedule's own (``FromSchedule``), where
    #: ``velero.io/csi-volumesnapshot-class_<driver>`` picks a driver's snapshot class
    backup_annotations: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)

    @property
    def stopped(self) -> bool:
        """Whether Velero makes no backup of it: paused, or failed validation."""
        return self.paused or self.phase == "FailedValidation"

    def next_backup(self, at: datetime, defaults: Mapping[str, bool] | None = None) -> BackupView:
        """The Backup it makes next, as Velero creates it before preparing it: its template as
        the spec, labelled with its name and its template's labels (else its own), annotated
        with its own annotations, phase New, created at ``at`` (velero
        pkg/builder/backup_builder.go ``FromSchedule``; pkg/controller/schedule_controller.go
        ``getBackup``), with each switch of ``defaults`` the template leaves unset filled in
        as Velero's server does when it prepares the Backup
        (:meth:`ClusterIndex.backup_defaults`).

        Raises:
            SelectorError: the template's filters cannot be read.
        """
        view = BackupView.parse(
            {
                "metadata": {
                    "name": f"{self.name} (next)",
                    "namespace": self.namespace,
                    "labels": {**self.backup_labels, VELERO_SCHEDULE_LABEL: self.name},
                    "annotations": dict(self.backup_annotations),
                    "creationTimestamp": format_time(at),
                },
                "spec": {
                    **dict(defaults or {}),
                    **{k: v for k, v in self.template.items() if v is not None},
                },
                "status": {"phase": "New"},
            }
        )
        return replace(view, planned=True)

    @classmethod
    def parse(cls, obj: dict[str, Any]) -> ScheduleView:
        """Build from a Schedule object."""
        spec = obj.get("spec") or {}
        where = dig(spec, "template", "storageLocation")
        raw_ttl = dig(spec, "template", "ttl")
        ttl = parse_duration(raw_ttl)
        return cls(
            name=_name(obj),
            namespace=_ns(obj),
            paused=spec.get("paused") is True,
            cron=spec.get("schedule") if isinstance(spec.get("schedule"), str) else None,
            scope=Scope.from_spec(spec.get("template")),
            last_backup=parse_time(dig(obj, "status", "lastBackup")),
            storage_location=where if isinstance(where, str) and where else None,
            ttl=ttl if ttl else None,
            ttl_unread=raw_ttl is not None and ttl is None,
            phase=phase if isinstance(phase := dig(obj, "status", "phase"), str) else "",
            template=template if isinstance(template := spec.get("template"), dict) else {},
            # FromSchedule copies the template's labels when the map is set (even empty),
            # else the Schedule's; and always the Schedule's annotations (false alarm fp34:
            # a Schedule annotated velero.io/csi-volumesnapshot-class_<driver>, its Backups
            # so annotated, was RR-BKP-013 "no VolumeSnapshotClass it can select")
            backup_labels=meta_labels(template)
            if isinstance(template, dict) and isinstance(dig(template, "metadata", "labels"), dict)
            else meta_labels(obj),
            backup_annotations=meta_labels(obj, "annotations"),
        )


#: Velero's Backup status counters (Go ``int``, ``omitempty``): velero
#: pkg/apis/velero/v1/backup_types.go BackupStatus.
_HOOK_COUNTERS = ("hooksAttempted", "hooksFailed")
#: The filter lists of a Backup's or Restore's spec (velero pkg/apis/velero/v1/
#: backup_types.go, restore_types.go; https://velero.io/docs/main/resource-filtering/)
_FILTER_LISTS = (
    "includedNamespaces",
    "excludedNamespaces",
    "includedResources",
    "excludedResources",
    "includedClusterScopedResources",
    "excludedClusterScopedResources",
    "includedNamespaceScopedResources",
    "excludedNamespaceScopedResources",
    "orLabelSelectors",
)
_BACKUP_COUNTERS = (
    "csiVolumeSnapshotsAttempted",
    "csiVolumeSnapshotsCompleted",
    "volumeSnapshotsAttempted",
    "volumeSnapshotsCompleted",
    "backupItemOperationsAttempted",
    "backupItemOperationsCompleted",
    "backupItemOperationsFailed",
    "errors",
    "warnings",
)
_GO_INT_MAX = 2**63 - 1
#: BackupProgress's counters (velero pkg/apis/velero/v1/backup_types.go)
_PROGRESS_COUNTERS = ("totalItems", "itemsBackedUp")
#: Velero's Restore status counters and RestoreProgress's (Go ``int``, ``omitempty``): velero
#: pkg/apis/velero/v1/restore_types.go RestoreStatus, RestoreProgress.
_RESTORE_COUNTERS = (
    "restoreItemOperationsAttempted",
    "restoreItemOperationsCompleted",
    "restoreItemOperationsFailed",
    "errors",
    "warnings",
)
_RESTORE_PROGRESS_COUNTERS = ("totalItems", "itemsRestored")


#: The Backup spec's switches (Go ``*bool``): velero pkg/apis/velero/v1/backup_types.go
#: BackupSpec. Which method copies each disk hangs on them.
_BACKUP_FLAGS = (
    "snapshotVolumes",
    "snapshotMoveData",
    "defaultVolumesToFsBackup",
    "includeClusterResources",
)


#: A Restore's switches (velero pkg/apis/velero/v1/restore_types.go ``RestoreSpec``:
#: ``RestorePVs``, ``PreserveNodePorts``, ``IncludeClusterResources`` are ``*bool``,
#: https://github.com/vmware-tanzu/velero/blob/main/pkg/apis/velero/v1/restore_types.go).
#: ``restorePVs: "false"`` (or ``0``, ``null``) was read as unset, so a drill that restored no
#: volume data read as one that did: RR-RST-001 FAIL -> PASS, unnamed (round h47c).
_RESTORE_FLAGS = ("restorePVs", "preserveNodePorts", "includeClusterResources")


def _flag_issues(spec: Any, where: str, flags: tuple[str, ...] = _BACKUP_FLAGS) -> list[FieldIssue]:
    """A Backup (or Restore) switch of ``flags`` that is set but not a boolean cannot be
    Velero's (``"yes"`` is not ``true`` to its API server), nor one written null (a ``*bool``
    with omitempty, which the API server prunes): named, and the Backup (Schedule, Restore)
    counts as unread, so a garbled ``snapshotMoveData`` never turns a data-mover backup into
    a snapshot one, nor ``restorePVs: "false"`` a drill without volume data into one with."""
    if not isinstance(spec, dict):
        return []
    return [
        FieldIssue(f"{where}.{key}", "is null, which the API server never stores", True)
        if spec[key] is None
        else FieldIssue(
            f"{where}.{key}", f"is a {type(spec[key]).__name__}, not true or false", True
        )
        for key in flags
        if key in spec and not isinstance(spec[key], bool)
    ]


def _ttl_issues(ttl: Any, where: str) -> list[FieldIssue]:
    """A ``ttl`` that is set but no Go duration: Velero's API server refuses it (a
    ``metav1.Duration``), and reading it as the 720 h default would invent a retention."""
    if ttl is None or parse_duration(ttl) is not None:
        return []
    return [FieldIssue(where, f"is {ttl!r}, not a duration such as 720h0m0s", True)]


def _counter_issues(obj: dict[str, Any], kind: str = "Backup") -> list[FieldIssue]:
    """A counter of a Backup's (or a Restore's) status that is not a whole number in
    ``0..2**63-1`` cannot be Velero's: named, and the object counts as unread (a nonsense count
    must never prove a capture, nor a restore's outcome: a Restore's ``errors: "2"`` or
    ``itemsRestored: 3.0`` read as no count, unnamed; bench.mutations counter_text, fz32)."""
    status = obj.get("status")
    if not isinstance(status, dict):
        return []
    out = []
    restore = kind == "Restore"
    counters: list[tuple[str, Any]] = [
        (f"status.{key}", status.get(key, _ABSENT))
        for key in (_RESTORE_COUNTERS if restore else _BACKUP_COUNTERS)
    ]
    progress_keys = _RESTORE_PROGRESS_COUNTERS if restore else _PROGRESS_COUNTERS
    # Velero's BackupProgress (velero pkg/apis/velero/v1/backup_types.go: totalItems,
    # itemsBackedUp, Go ints): itemsBackedUp 0 means the Backup holds no item, so "0" read
    # as "no count" made a VM count as backed up (red team rt10). HookStatus (hooksAttempted,
    # hooksFailed: Go ints), which RR-BKP-011 reads: one written as a list read as "failed
    # hooks unknown", changing RR-BKP-011 with nothing named (red team fz18).
    for group, keys in (("progress", progress_keys), ("hookStatus", _HOOK_COUNTERS)):
        nested = status.get(group)
        if isinstance(nested, dict):
            counters += [(f"status.{group}.{key}", nested.get(key, _ABSENT)) for key in keys]
        elif nested is not None:
            out.append(
                FieldIssue(f"status.{group}", f"is a {type(nested).__name__}, not a mapping", True)
            )
    for path, value in counters:
        if value is _ABSENT:
            continue
        if value is None:
            # a Go int written with omitempty is absent or a number, never null (velero
            # pkg/apis/velero/v1/backup_types.go): read as "no count", a Backup's
            # csiVolumeSnapshotsCompleted: null changed its findings unnamed (fz38, seed 8012)
            out.append(FieldIssue(path, "is null, which Velero never writes (a Go int)", True))
            continue
        if _int(value) is None or not 0 <= value <= _GO_INT_MAX:
            shown = repr(value) if len(repr(value)) <= 24 else repr(value)[:21] + "..."
            out.append(
                FieldIssue(path, f"is {shown}, not a count (a Go int in Velero's API)", True)
            )
    return out


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


#: Velero labels each DataUpload and PodVolumeBackup with its Backup's UID and skips one of
#: another UID (a Backup of the same name): pkg/podvolume/backupper.go
FOREIGN_ITEM_SRC = "https://github.com/vmware-tanzu/velero/blob/main/pkg/podvolume/backupper.go"
VELERO_BACKUP_UID_LABEL = "velero.io/backup-uid"


def _foreign_item(o: dict[str, Any], namespace: str, uid: str | None) -> str | None:
    """Why a DataUpload or PodVolumeBackup filed under a Backup's name was made for another
    Backup (labelled with another ``velero.io/backup-uid``, or in another namespace), or None."""
    label = meta_label(o, VELERO_BACKUP_UID_LABEL)
    if uid is not None and label is not None and label != uid:
        # an empty value is another UID too (round m42: ``""`` was read as no label, the
        # record counted as the Backup's own: RR-BKP-004 ERROR -> PASS)
        shown = label or '""'
        return f"is labelled {VELERO_BACKUP_UID_LABEL}={shown}, not the Backup's uid {uid}"
    if label is None:
        # the label under a key of another case (named by _item_label_case_issues): the
        # UID it holds may be another Backup's (round m42)
        labels = dig(o, "metadata", "labels")
        other = next(
            (
                k
                for k in (labels if isinstance(labels, dict) else {})
                if isinstance(k, str)
                and k != VELERO_BACKUP_UID_LABEL
                and k.lower() == VELERO_BACKUP_UID_LABEL
            ),
            None,
        )
        if other is not None:
            return (
                f"carries the label key {other}, not {VELERO_BACKUP_UID_LABEL}: which Backup "
                "it was made for is unknown"
            )
    ns = dig(o, "metadata", "namespace")
    if isinstance(ns, str) and ns and namespace and ns != namespace:
        return f"is in namespace {ns}, not the Backup's namespace {namespace}"
    return None


def _hooks_failed(hook_status: Any) -> int | None:
    """``hookStatus.hooksFailed`` of a Backup status: 0 when the status or the counter is
    absent (both ``omitempty``), None when either is set but not a count."""
    if hook_status is None:
        return 0
    if not isinstance(hook_status, dict):
        return None
    failed = hook_status.get("hooksFailed")
    if failed is None:
        return 0
    count = _int(failed)
    return count if count is not None and count >= 0 else None


@dataclass
class ClusterIndex:
    """Dictionaries over :class:`ClusterData` for O(1) pairing lookups."""

    data: ClusterData
    pvcs: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    pvs: dict[str, dict[str, Any]] = field(default_factory=dict)
    storage_classes: dict[str, dict[str, Any]] = field(default_factory=dict)
    snapshot_class_drivers: dict[str, list[str]] = field(default_factory=dict)
    snapshot_classes_by_driver: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    datavolumes: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    nads: set[tuple[str, str]] = field(default_factory=set)
    nad_objects: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    services_by_ns: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    routes_by_ns: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    vmis: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    namespaces: dict[str, dict[str, Any]] = field(default_factory=dict)
    cluster_preferences: dict[str, dict[str, Any]] = field(default_factory=dict)
    preferences: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    cluster_instancetypes: dict[str, dict[str, Any]] = field(default_factory=dict)
    instancetypes: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    #: KubeVirt's instancetype/preference ControllerRevisions by (namespace, name)
    controller_revisions: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    #: (namespace, VM name) -> the persistent EFI/TPM state PVCs KubeVirt would start the VM
    #: with (:meth:`_index_state_pvcs`)
    state_pvcs: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)
    #: (namespace, VM name) -> PVCs named ``persistent-state-for-<vm>-<suffix>`` (or being
    #: deleted) that KubeVirt would not start the VM with: no state of it, named by RR-FW-002
    state_lookalikes: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)
    volume_snapshots: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)
    vm_snapshots: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)
    vm_snapshot_contents: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    snapshot_contents: dict[str, dict[str, Any]] = field(default_factory=dict)
    backups_by_ns: dict[str, list[BackupView]] = field(default_factory=dict)
    backups_any_ns: list[BackupView] = field(default_factory=list)
    backups: dict[str, BackupView] = field(default_factory=dict)
    backup_snapshot_contents: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    data_uploads: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    pod_volume_backups: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    #: Backup name -> (record, why) of the DataUploads and PodVolumeBackups filed under its
    #: name that Velero made for another Backup (:meth:`_drop_foreign_items`)
    foreign_items: dict[str, list[tuple[dict[str, Any], str]]] = field(default_factory=dict)
    #: Backup name -> VolumeSnapshots Velero made for it (Velero < 1.14 leaves them in place)
    backup_volume_snapshots: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    #: (namespace, name) -> BackupStorageLocation phase ("" when it has none)
    storage_locations: dict[tuple[str, str], str] = field(default_factory=dict)
    #: BackupStorageLocations whose ``spec.accessMode`` is ReadOnly (no backup is created
    #: there: https://velero.io/docs/main/disaster-case/), and the default one per namespace
    read_only_locations: set[tuple[str, str]] = field(default_factory=set)
    #: (namespace, name) -> ``metadata.deletionTimestamp`` of a BackupStorageLocation being
    #: deleted (see :func:`auditor.inventory.locations.location_unverified`)
    deleted_locations: dict[tuple[str, str], str] = field(default_factory=dict)
    #: BackupStorageLocations whose ``spec.accessMode`` cannot be read (named)
    unknown_mode_locations: set[tuple[str, str]] = field(default_factory=set)
    #: Velero namespaces with a location whose ``spec.default`` cannot be read (named)
    unknown_defaults: set[str] = field(default_factory=set)
    default_locations: dict[str, str] = field(default_factory=dict)
    #: (namespace, name) -> a BackupStorageLocation's ``spec.config.s3Url`` (absent: none set,
    #: the provider's own service)
    location_endpoints: dict[tuple[str, str], str] = field(default_factory=dict)
    #: (namespace, name) of a BackupStorageLocation -> its ``status.lastValidationTime`` (None:
    #: absent or unreadable) and ``spec.validationFrequency`` (None: unset, the server's;
    #: see :func:`auditor.inventory.locations.location_unverified`)
    location_checks: dict[tuple[str, str], tuple[datetime | None, timedelta | None]] = field(
        default_factory=dict
    )
    #: BackupStorageLocations whose ``spec.config`` or ``s3Url`` cannot be read (named)
    unknown_endpoints: set[tuple[str, str]] = field(default_factory=set)
    pvcs_by_ns: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    #: names of the DPAs read, for evidence
    dpa_names: list[str] = field(default_factory=list)
    #: PodVolumeRestores and DataDownloads by their ``velero.io/restore-name`` label
    pod_volume_restores: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    data_downloads: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    #: ``velero.io/restore-name`` labels of PodVolumeRestores/DataDownloads that name no
    #: Restore read (the Restore was deleted, its owned objects not yet collected)
    gone_restores: tuple[str, ...] = ()
    restores: list[RestoreView] = field(default_factory=list)
    schedules: list[ScheduleView] = field(default_factory=list)
    #: Velero namespace -> whether its DPA enables the kubevirt plugin (a Velero install
    #: loads the plugins of the DPA in its own namespace only; OADP may run several); None
    #: when its plugin list holds entries that are no names and none of them is kubevirt
    kubevirt_plugins: dict[str, bool | None] = field(default_factory=dict)
    #: Velero namespace -> whether its DPA turns Velero's CSI support on (None: unknown, as
    #: above)
    csi_plugins: dict[str, bool | None] = field(default_factory=dict)
    #: Velero namespace -> the CSI drivers whose PVs the volume snapshotters of its DPA's
    #: plugins snapshot natively (:data:`SNAPSHOTTER_CSI_DRIVERS`); None when a plugin of it
    #: is custom, unknown or unreadable (any driver may be one)
    snapshotter_drivers: dict[str, frozenset[str] | None] = field(default_factory=dict)
    #: Velero namespace -> whether its DPA deploys Velero's node-agent (``spec.configuration
    #: .nodeAgent.enable`` or, before OADP 1.3, ``restic.enable`` true); None when that
    #: cannot be read; no entry without a DPA there (plain Velero: not known, not judged)
    node_agents: dict[str, bool | None] = field(default_factory=dict)
    #: Velero namespace -> whether its DPA sets ``spec.configuration.nodeAgent.restorePVC.
    #: ignoreDelayBinding`` true (oadp-operator api/v1alpha1 NodeAgentConfigMapSettings):
    #: a data-mover restore then provisions a WaitForFirstConsumer volume without a consumer
    #: pod; absent: no DPA there (plain Velero's node-agent ConfigMap is not read)
    ignore_delay_binding: dict[str, bool | None] = field(default_factory=dict)
    #: Velero namespace -> the Backup switches its server fills in when a Backup leaves them
    #: unset (``defaultVolumesToFsBackup``, ``snapshotMoveData``), as its DPA states them
    #: (:func:`_dpa_server_defaults`): ``{switch: (value, DPA field read)}``; value None and
    #: why where it cannot be told (server args from a ConfigMap, a malformed field, two DPAs
    #: of one namespace disagreeing)
    server_defaults: dict[str, dict[str, tuple[bool | None, str]]] = field(default_factory=dict)
    #: firmware UUID / serial / MAC -> the VMs claiming it (duplicate-identity checks)
    identities: IdentityIndex = field(default_factory=IdentityIndex)
    #: typed slim records (validated while parsed) of the non-Velero kinds checks read
    pv_records: dict[str, PersistentVolumeRecord] = field(default_factory=dict)
    pvc_records: dict[tuple[str, str], PersistentVolumeClaimRecord] = field(default_factory=dict)
    sc_records: dict[str, StorageClassRecord] = field(default_factory=dict)
    vmi_records: dict[tuple[str, str], VirtualMachineInstanceRecord] = field(default_factory=dict)
    dv_records: dict[tuple[str, str], DataVolumeRecord] = field(default_factory=dict)
    #: (kind, namespace or "", name) -> malformed fields of that object (also in ``problems``)
    object_problems: dict[tuple[str, str, str], list[CollectionProblem]] = field(
        default_factory=dict
    )
    #: objects whose scope could not be read, and the kinds that makes incomplete
    problems: list[CollectionProblem] = field(default_factory=list)
    #: (kind, namespace or "", name) of the objects counted as unread (:meth:`_unread`): a
    #: reader that still parsed one must not conclude from it
    unread_objects: set[tuple[str, str, str]] = field(default_factory=set)
    partial: set[str] = field(default_factory=set)
    #: kind -> namespaces its unread objects could cover (None: any namespace)
    partial_namespaces: dict[str, set[str] | None] = field(default_factory=dict)
    #: kind -> ``namespace/name`` of each object :meth:`_mark_partial` counted as unread ->
    #: the namespaces it could cover (None: any): :meth:`unread_names`
    unread_scopes: dict[str, dict[str, set[str] | None]] = field(default_factory=dict)
    #: results derived from the whole index once per audit (see :meth:`memo`)
    _memo: dict[str, Any] = field(default_factory=dict, repr=False)
    #: id(PVC object) -> (that PVC, its ``capture.PvcFacts``), filled by
    #: ``capture.pvc_facts``; holding the PVC keeps its id from being reused
    pvc_facts: dict[int, tuple[dict[str, Any] | None, Any]] = field(
        default_factory=dict, repr=False
    )

    def cluster_hosts(self) -> ClusterHosts:
        """The namespaces, Services, Route hosts and Service cluster IPs an object-storage
        endpoint may name (:func:`auditor.inventory.endpoints.in_cluster_endpoint`), once per
        audit."""
        return self.memo("cluster_hosts", self._cluster_hosts)

    def _cluster_hosts(self) -> ClusterHosts:
        services: set[tuple[str, str]] = set()
        ips: dict[str, str] = {}
        for ns, objs in self.services_by_ns.items():
            for o in objs:
                services.add((ns, _name(o)))
                spec = o.get("spec")
                spec = spec if isinstance(spec, dict) else {}
                listed = spec.get("clusterIPs")
                for ip in [spec.get("clusterIP"), *(listed if isinstance(listed, list) else [])]:
                    try:  # one spelling per address (IPv6 has many)
                        canonical = str(ipaddress.ip_address(ip)) if isinstance(ip, str) else None
                    except ValueError:
                        canonical = None  # "None" (headless) or junk
                    if canonical:
                        ips.setdefault(canonical, f"{ns}/{_name(o)}")
        routes: dict[str, str] = {}
        for ns, objs in self.routes_by_ns.items():
            for o in objs:
                host = dig(o, "spec", "host")
                if isinstance(host, str) and host:
                    routes.setdefault(host.lower().rstrip("."), f"{ns}/{_name(o)}")
        return ClusterHosts(frozenset(self.namespaces), services, routes, ips)

    def restored_from(self, obj: dict[str, Any] | None) -> BackupView | None:
        """The Backup an in-place Restore recreated ``obj`` (a VM or PVC) from, or None.

        Velero labels what a Restore creates with ``velero.io/backup-name`` and
        ``velero.io/restore-name`` (velero pkg/restore/restore.go addRestoreLabels). The
        object is the one that Backup held, however new its creationTimestamp, only when the
        Restore is read, restored that Backup, created it after it began, and restored it in
        place: a copy mapped from another namespace (``namespaceMapping``) was never in any
        Backup under this one (red team: labels alone made a VM created after every Backup
        READY). The Backup must also take the object's namespace."""
        labels = meta_labels(obj) if obj is not None else {}
        source, by = labels.get(VELERO_BACKUP_LABEL), labels.get(VELERO_RESTORE_LABEL)
        if not source or not by or obj is None:
            return None
        ns = _ns(obj)
        restores = [r for r in self.restores if velero_label(r.name) == by]
        if len(restores) != 1:
            return None
        r = restores[0]
        b = self.backups.get(r.backup_name or "")
        made = parse_time(dig(obj, "metadata", "creationTimestamp"))
        if (
            b is None
            or velero_label(b.name) != source
            or r.created is None
            or made is None
            or made < r.created
            or r.namespace_mapping.get(ns, ns) != ns
            or any(to == ns and src != ns for src, to in r.namespace_mapping.items())
            or not b.scope.namespace_included(ns)
        ):
            return None
        return b

    def memo(self, key: str, compute: Callable[[], _V]) -> _V:
        """``compute()`` once per index under ``key``, then the same value (do not mutate it)."""
        if key not in self._memo:
            self._memo[key] = compute()
        value: _V = self._memo[key]
        return value

    def by_name(self, kind: str) -> dict[tuple[str, str], dict[str, Any]]:
        """The objects of a namespaced ``kind`` as read, by ``(namespace, name)``; built once
        per index (do not mutate it).

        For the per-VM lookups of one object by its name: a walk over ``data.of(kind)`` per
        VM, disk or snapshot is quadratic in the estate (a VirtualMachineSnapshot's disk
        looked for its VolumeSnapshot among all of them). The sources keep one object per
        kind, namespace and name, each with string ``metadata.namespace`` and
        ``metadata.name``, so the map holds every object; one that held another type would
        be left out, as a comparison with a string never matched it.
        """

        def build() -> dict[tuple[str, str], dict[str, Any]]:
            out: dict[tuple[str, str], dict[str, Any]] = {}
            for o in self.data.of(kind):
                ns, name = dig(o, "metadata", "namespace"), dig(o, "metadata", "name")
                if isinstance(ns, str) and isinstance(name, str):
                    out.setdefault((ns, name), o)
            return out

        return self.memo(f"by_name:{kind}", build)

    def backup_defaults(self, schedule: ScheduleView) -> dict[str, tuple[bool | None, str]]:
        """What Velero's server gives the switches ``schedule``'s template leaves unset, with
        where that is read: ``{switch: (value, source)}``; value None, and the source saying
        why, where nothing read states it.

        Velero's backup controller sets an unset ``defaultVolumesToFsBackup`` or
        ``snapshotMoveData`` of every Backup it prepares to its server flags
        ``--default-volumes-to-fs-backup`` / ``--default-snapshot-move-data``
        (velero pkg/controller/backup_controller.go ``prepareBackupRequest``), which OADP sets
        from the DPA's ``spec.configuration.velero.defaultVolumesToFSBackup`` /
        ``defaultSnapshotMoveData`` (oadp-operator internal/controller/velero.go). Read from
        the DPA of the Schedule's namespace (a switch it leaves unset: false, as OADP passes
        no flag, unless its ``oadp.openshift.io/unsupported-velero-server-args`` ConfigMap may
        set one), else from the newest Backup the Schedule made that Velero prepared (its
        spec holds the value the server filled in); a switch neither says is unknown (None):
        plain Velero's flags are arguments of its Deployment, which the auditor does not read
        (fp30: with no DPA the switch read as false, Velero's built-in default, and a server
        started with ``--default-volumes-to-fs-backup`` was judged to snapshot). Red team
        fp28: a Schedule relying on OADP's ``defaultVolumesToFSBackup: true`` was judged to
        snapshot next time, and a storage class with no VolumeSnapshotClass made it a false
        FAIL.
        """

        def compute() -> dict[str, tuple[bool | None, str]]:
            ns, name = schedule.namespace, schedule.name
            made = [
                b
                for b in self.backups_by_schedule().get((ns, name), [])
                if b.phase not in ("", "New", "FailedValidation")
            ]
            last = max(made, key=lambda b: (format_time(b.when) or "", b.name), default=None)
            stated = self.server_defaults.get(ns, {})
            out: dict[str, tuple[bool | None, str]] = {}
            for key in DPA_SERVER_DEFAULTS:
                value, source = stated.get(key, (None, ""))
                if schedule.template.get(key) is not None:
                    continue  # the template sets it: no default applies
                if value is not None:
                    out[key] = (value, f"DataProtectionApplication in {ns} {source}")
                elif last is not None:
                    got = last.fs_backup_default if key == _FS_DEFAULT else last.snapshot_move_data
                    out[key] = (got, f"Backup {ns}/{last.name} spec.{key}")
                else:
                    out[key] = (None, self._unseen_default(ns, schedule.name, source))
            return out

        return self.memo(f"backup-defaults:{schedule.namespace}/{schedule.name}", compute)

    def _unseen_default(self, ns: str, schedule: str, why: str) -> str:
        """Why no object read states a server default of the Schedule ``ns/schedule``."""
        if not why and not self.data.known("DataProtectionApplication"):
            why = "the DataProtectionApplications were not read"
        elif not why:
            why = (
                f"no DataProtectionApplication in {ns} sets it (plain Velero: an argument of "
                "its Deployment, which is not read)"
            )
        return f"{why}, and Schedule {ns}/{schedule} has no Backup Velero prepared to show it"

    def backups_by_schedule(self) -> dict[tuple[str, str], list[BackupView]]:
        """The Backups read, by ``(namespace, velero.io/schedule-name label)``."""

        def compute() -> dict[tuple[str, str], list[BackupView]]:
            out: dict[tuple[str, str], list[BackupView]] = {}
            for b in self.backups.values():
                if b.schedule:
                    out.setdefault((b.namespace, b.schedule), []).append(b)
            return out

        return self.memo("backups-by-schedule", compute)

    @classmethod
    def build(cls, data: ClusterData) -> ClusterIndex:
        """Index every kind once."""
        ix = cls(data=data)
        ix._index_records(data)
        for o in data.of("PersistentVolumeClaim"):
            ix.pvcs[(_ns(o), _name(o))] = o
            ix.pvcs_by_ns.setdefault(_ns(o), []).append(o)
            if o.get("spec") and ("dataSourceRef" in o["spec"] or "dataSource" in o["spec"]):
                ix._data_source_issues(o)
        ix._index_state_pvcs()
        ix.pvs = {_name(o): o for o in data.of("PersistentVolume")}
        ix.storage_classes = {_name(o): o for o in data.of("StorageClass")}
        drivers: dict[str, list[str]] = defaultdict(list)
        for o in data.of("VolumeSnapshotClass"):
            if isinstance(o.get("driver"), str):
                drivers[o["driver"]].append(_name(o))
                ix.snapshot_classes_by_driver.setdefault(o["driver"], []).append(o)
        ix.snapshot_class_drivers = dict(drivers)
        ix.datavolumes = {(_ns(o), _name(o)): o for o in data.of("DataVolume")}
        ix.nads = {(_ns(o), _name(o)) for o in data.of("NetworkAttachmentDefinition")}
        ix.nad_objects = {(_ns(o), _name(o)): o for o in data.of("NetworkAttachmentDefinition")}
        for o in ix.nad_objects.values():
            # when it was made decides which Backups could hold it (RR-NET-002, which gives
            # ERROR for an unreadable one): named, so the run is incomplete (mutations of the
            # shared export: a creationTimestamp of 30/11/2026 changed a verdict unnamed)
            stamp: list[FieldIssue] = []
            read_time(o, "metadata.creationTimestamp", stamp)
            # and whether it is being deleted, which Backups skipped it and whether it is
            # about to be gone (RR-NET-001, RR-NET-002; rt37)
            read_time(o, "metadata.deletionTimestamp", stamp)
            if stamp:
                ix._object_issues("NetworkAttachmentDefinition", o, stamp)
        for o in data.of("ConfigMap"):
            if is_resource_policy(o):
                # when a resource policy was made and last written decides whether a Backup
                # ran with it (auditor.inventory.volpolicy): unreadable, it was read as
                # "may have changed" with nothing named (bench.mutations bad_format, fz36)
                policy_issues: list[FieldIssue] = []
                read_time(o, "metadata.creationTimestamp", policy_issues, server_set=True)
                written = dig(o, "metadata", "managedFields")
                for i, entry in enumerate(written if isinstance(written, list) else []):
                    if isinstance(entry, dict) and entry.get("time") is not None:
                        entry_issues: list[FieldIssue] = []
                        read_time(entry, "time", entry_issues)
                        policy_issues += [
                            FieldIssue(f"metadata.managedFields[{i}].time", f.reason, f.rejected)
                            for f in entry_issues
                        ]
                if policy_issues:
                    ix._object_issues("ConfigMap", o, policy_issues)
        for o in data.of("Service"):
            ix.services_by_ns.setdefault(_ns(o), []).append(o)
        for o in data.of("Route"):
            ix.routes_by_ns.setdefault(_ns(o), []).append(o)
        ix.vmis = {(_ns(o), _name(o)): o for o in data.of("VirtualMachineInstance")}
        ix.identities = IdentityIndex.build(data.of("VirtualMachine"), ix.vmis)
        ix.namespaces = {_name(o): o for o in data.of("Namespace")}
        ix.cluster_preferences = {_name(o): o for o in data.of("VirtualMachineClusterPreference")}
        ix.preferences = {(_ns(o), _name(o)): o for o in data.of("VirtualMachinePreference")}
        ix.cluster_instancetypes = {
            _name(o): o for o in data.of("VirtualMachineClusterInstancetype")
        }
        ix.instancetypes = {(_ns(o), _name(o)): o for o in data.of("VirtualMachineInstancetype")}
        for kind, found in (
            ("VirtualMachineClusterPreference", ix.cluster_preferences),
            ("VirtualMachinePreference", ix.preferences),
            ("VirtualMachineClusterInstancetype", ix.cluster_instancetypes),
            ("VirtualMachineInstancetype", ix.instancetypes),
        ):
            # A live preference a VM applies (not pinned to a revision) is read as a pinned
            # revision's spec is: one that cannot be read is named, and left out as unread
            # (its VMs' RR-DEF-001 is then ERROR, never a preference without settings).
            for ref, o in list(found.items()):
                issues = _instancetype_spec_issues(o) or _spec_issues(o.get("spec"), "spec")
                if issues:
                    ix._unread(kind, o, issues)
                    del found[ref]  # type: ignore[arg-type]
        ix.controller_revisions = {(_ns(o), _name(o)): o for o in data.of("ControllerRevision")}
        for key, o in list(ix.controller_revisions.items()):
            # A pinned revision whose sections cannot be read is no revision to resolve the
            # VM from: named, and left out as unreadable (not as absent)
            # (mutations seed 2111: a data.spec of "junk")
            issues = _wrong_types(
                o, (("data", dict, "a mapping"), ("data.spec", dict, "a mapping"))
            )
            if isinstance(o.get("data"), dict) and dig(o, "data", "spec") is None:
                # KubeVirt stores the whole instancetype or preference, its spec included
                # (kubevirt pkg/instancetype/revision/store.go CreateControllerRevision): a
                # revision without one, or with it null, is a damaged copy (fz39, unnamed)
                issues.append(
                    FieldIssue(
                        "data.spec", "is missing or null; KubeVirt writes every revision with it"
                    )
                )
            issues += _spec_issues(dig(o, "data", "spec"), "data.spec")
            # being deleted, Velero skips it (RR-BKP-012, rt37): a time that is none is named
            gone: list[FieldIssue] = []
            read_time(o, "metadata.deletionTimestamp", gone)
            if gone:
                ix._object_issues("ControllerRevision", o, gone)
            if issues:
                ix._unread("ControllerRevision", o, issues)
                del ix.controller_revisions[key]
        for o in data.of("VolumeSnapshot"):
            # the snapshot's own word on whether it was cut, the content a restore reads and
            # the PVC it was cut from: of another type, none says anything (named, and the
            # list is partial: mutations seed 1361, a spec.source of "junk" dropped the
            # snapshot with nothing named)
            issues = (
                _wrong_types(o, _VOLUME_SNAPSHOT_FIELDS)
                + _null_issues(o, _VOLUME_SNAPSHOT_NULLS)
                + _owner_issues(o)
            )
            # when it was cut: a snapshot cut before its PVC was made is of an earlier PVC
            # of that name (facts.copy_rows); unreadable, it is no copy shown to be of this one
            read_time(o, "status.creationTime", issues)
            read_time(o, "metadata.creationTimestamp", issues)
            if issues:
                ix._unread("VolumeSnapshot", o, issues)
            pvc = dig(o, "spec", "source", "persistentVolumeClaimName")
            if isinstance(pvc, str):
                ix.volume_snapshots.setdefault((_ns(o), pvc), []).append(o)
            backup = meta_label(o, VELERO_BACKUP_LABEL)
            if backup:
                ix.backup_volume_snapshots.setdefault(backup, []).append(o)
        ix.vm_snapshot_contents = {
            (_ns(o), _name(o)): o for o in data.of("VirtualMachineSnapshotContent")
        }
        for o in ix.vm_snapshot_contents.values():
            # The VM definition the snapshot holds: the parts restores and checks read must
            # be mappings, as the API server stores them.
            issues = [
                FieldIssue(f"spec.source.virtualMachine.{path}", "is not a mapping", True)
                for path in _SNAPSHOT_VM_MAPPINGS
                if (value := dig(o, "spec", "source", "virtualMachine", *path.split(".")))
                is not None
                and not isinstance(value, dict)
            ]
            # ... and the sections that hold it (mutations seed 1361: a virtualMachine of
            # "junk" read as a snapshot without a VM definition, with nothing named)
            issues[:0] = (
                [
                    FieldIssue(path, "is not a mapping", True)
                    for path in ("spec.source", "spec.source.virtualMachine")
                    if (value := dig(o, *path.split("."))) is not None
                    and not isinstance(value, dict)
                ]
                + _wrong_types(o, _VM_SNAPSHOT_CONTENT_FIELDS)
                + _null_issues(o, _VM_SNAPSHOT_CONTENT_NULLS)
                + _owner_issues(o)
            )
            if issues:
                ix._object_issues("VirtualMachineSnapshotContent", o, issues)
        ix.snapshot_contents = {_name(o): o for o in data.of("VolumeSnapshotContent")}
        for kind in _DELETION_READ_KINDS:
            # every object kept has a metadata mapping (the sources' shape check); the
            # filter runs in C over the 300,000 VolumeSnapshotContents of a 10,000-VM estate
            for o in [o for o in data.of(kind) if "deletionTimestamp" in o["metadata"]]:
                if o["metadata"]["deletionTimestamp"] is None:
                    continue
                # whether the snapshot is being deleted, and its copy with it: a value that is
                # no RFC 3339 time (42, ``[x]``, ``""``) is read as "being deleted" (no copy,
                # never better) and named (round h47c: unnamed before)
                deleting: list[FieldIssue] = []
                read_time(o, "metadata.deletionTimestamp", deleting)
                if deleting:
                    ix._object_issues(kind, o, deleting)
        for o in data.of("VirtualMachineSnapshot"):
            src = dig(o, "spec", "source", "name")
            if isinstance(src, str):
                ix.vm_snapshots.setdefault((_ns(o), src), []).append(o)
            lists = dig(o, "status", "snapshotVolumes")
            for which in ("includedVolumes", "excludedVolumes"):
                held = lists.get(which) if isinstance(lists, dict) else None
                if held is not None and not (
                    isinstance(held, list) and all(isinstance(v, str) for v in held)
                ):
                    ix._object_issues(
                        "VirtualMachineSnapshot",
                        o,
                        [
                            FieldIssue(
                                f"status.snapshotVolumes.{which}",
                                "is not a list of volume names",
                                True,
                            )
                        ],
                    )
            # the fields that say whether it holds a usable copy, and of which VM: of another
            # type, none says anything (named, and the list is partial, as for VolumeSnapshots;
            # mutations seed 2229: a readyToUse of "yes" read as not ready, unnamed)
            # ... and whether KubeVirt deletes its content: an invalid phase, deletion policy
            # or failure deadline says neither (round h47c)
            issues = (
                [
                    i
                    for i in _wrong_types(o, _VM_SNAPSHOT_FIELDS)
                    # named above with its entries checked
                    if i.field != "status.snapshotVolumes.excludedVolumes"
                ]
                + vm_snapshot_value_issues(o)
                + _null_issues(o, _VM_SNAPSHOT_NULLS)
            )
            if issues:
                ix._unread("VirtualMachineSnapshot", o, issues)
        for o in data.of("KubeVirt"):
            issues = _kubevirt_issues(o)
            if issues:  # what RR-PLT-006 and RR-FW-002 read of it is unknown: named, unread
                ix._unread("KubeVirt", o, issues)
        for o in data.of("VirtualMachineInstance"):
            faults = migration_state_issues(o)
            if faults:  # named; the copy it bounds is judged unknown (volmig, fz35)
                ix._object_issues(
                    "VirtualMachineInstance", o, [FieldIssue(f, why) for f, why in faults]
                )
        for kind, fields in _GATE_AND_DELETION_FIELDS.items():
            for o in data.of(kind):
                issues = _wrong_types(o, fields) + _enum_and_item_issues(kind, o)
                if issues:  # named; what they decide is judged by its reader (fz35)
                    ix._unread(kind, o, issues)
        for o in data.of("DataSource"):
            issues = _data_source_issues(o)
            if issues:  # the golden image it names is unknown (protection._source_gone)
                ix._unread("DataSource", o, issues)
        ix._index_velero(data)
        return ix

    def _index_records(self, data: ClusterData) -> None:
        """Parse the non-Velero kinds checks read into records; malformed fields become problems."""
        targets: dict[str, dict[Any, Any]] = {
            "PersistentVolume": self.pv_records,
            "PersistentVolumeClaim": self.pvc_records,
            "StorageClass": self.sc_records,
            "VirtualMachineInstance": self.vmi_records,
            "DataVolume": self.dv_records,
        }
        for kind, target in targets.items():
            for o in data.of(kind):
                ns, name = _ns(o), _name(o)
                record, problems = parse_record(kind, o, data.origins.get((kind, ns, name)))
                target[name if kind in _CLUSTER_SCOPED else (ns, name)] = record
                if problems:
                    self.object_problems[(kind, ns, name)] = problems
                    self.problems.extend(problems)
                if isinstance(record, VirtualMachineInstanceRecord) and record.notes:
                    # named, but no reader of the VMI gives ERROR for them (records._mac_notes)
                    self._object_issues(kind, o, list(record.notes))
        self._check_velero_fields(data)
        for kind, objects in data.objects.items():
            selectors = kind in _SELECTOR_KINDS
            for o in objects:
                spec, status = o.get("spec"), o.get("status")
                if (
                    not selectors
                    and (spec is None or isinstance(spec, dict))
                    and (status is None or isinstance(status, dict))
                    and isinstance(o["metadata"].get("namespace", ""), _STR_OR_NONE)
                ):
                    continue  # the common case, without building an empty issue list
                issues = [
                    FieldIssue(key, f"is a {type(o[key]).__name__}, not a mapping", True)
                    for key in ("spec", "status")
                    if key in o and o[key] is not None and not isinstance(o[key], dict)
                ]
                if not isinstance(o["metadata"].get("namespace", ""), str | None):
                    issues.append(FieldIssue("metadata.namespace", "is not a string", True))
                if not issues and kind in _SELECTOR_KINDS:
                    issues = _selector_issues(kind, o)
                if issues:
                    # An object whose namespace or body cannot be read is as good as unread.
                    if (kind, _ns(o), _name(o)) not in self.object_problems:
                        self._object_issues(kind, o, issues)
                    self._mark_partial(kind, o)

    def _check_velero_fields(self, data: ClusterData) -> None:
        """Phases outside Velero's enums (or missing once an object started), unreadable
        timestamps, a non-mapping namespaceMapping and a Backup (or Schedule template) switch
        that is not a boolean are problems; the object then counts as unread for the
        namespaces it could cover. A VolumeSnapshotClass without a driver is named too."""
        for kind, phases in (
            ("Backup", BACKUP_PHASES),
            ("Restore", RESTORE_PHASES),
            ("DataUpload", DATA_MOVER_PHASES),
            ("DataDownload", DATA_MOVER_PHASES),
            ("PodVolumeBackup", DATA_MOVER_PHASES),
            ("PodVolumeRestore", DATA_MOVER_PHASES),
            ("BackupStorageLocation", BSL_PHASES),
            # red team fz14: a FailedValidation Schedule written "failedvalidation" (or 42)
            # read as Enabled, and RR-PLT-002 FAIL -> PASS with nothing named
            ("Schedule", SCHEDULE_PHASES),
        ):
            for o in data.of(kind):
                issues: list[FieldIssue] = []
                if "status" in o and o["status"] is None:
                    # the API server prunes a null field: read as "never run", a finished
                    # drill vanished unnamed (bench.mutations null_list, seed 120)
                    issues.append(
                        FieldIssue("status", "is null, which the API server never stores")
                    )
                status = o.get("status")
                if isinstance(status, dict) and status.get("phase", "") is None:
                    # Velero's phases are strings written with omitempty (velero
                    # pkg/apis/velero/v1/*_types.go, `json:"phase,omitempty"`;
                    # https://github.com/vmware-tanzu/velero/blob/main/pkg/apis/velero/v2alpha1/data_upload_types.go):
                    # never null. Read as "not yet started", a DataUpload or PodVolumeBackup
                    # dropped out of its Backup's data movement, unnamed (fz36's leftovers)
                    issues.append(
                        FieldIssue("status.phase", "is null, which Velero never writes", True)
                    )
                phase = read_enum(o, "status.phase", phases, issues)
                others = (
                    [str(k) for k in status if k != "phase"] if isinstance(status, dict) else []
                )
                if phase is None and not issues and others:
                    # Velero's controllers write the phase with the first status they write
                    # (a Backup's FailedValidation with its validationErrors, a location's
                    # Available with its lastValidationTime): a status without one lost it
                    # (mutations of the shared export: a FailedValidation Backup without its
                    # phase turned RR-BKP-003's FAIL into NOT_APPLICABLE, unnamed)
                    held = ", ".join(sorted(others)[:3])
                    issues.append(
                        FieldIssue("status.phase", f"is missing although status holds {held}")
                    )
                times = {path: read_time(o, path, issues) for path in _VELERO_TIMES}
                began, ended = times["status.startTimestamp"], times["status.completionTimestamp"]
                if began is not None and ended is not None and ended < began:
                    # a status that contradicts itself (clock skew, an edited export): named;
                    # a Backup's data then counts from the earlier instant (BackupView
                    # .data_time), never the later (red team: 5 h old, READY)
                    self._object_issues(
                        kind,
                        o,
                        [
                            FieldIssue(
                                "status.completionTimestamp",
                                f"is before status.startTimestamp ({format_time(began)}); the "
                                "earlier one is taken",
                            )
                        ],
                    )
                meta = o.get("metadata")
                if isinstance(meta, dict) and meta.get("creationTimestamp", "") is None:
                    # the API server always sets it (absent: a hand-written object)
                    issues.append(FieldIssue("metadata.creationTimestamp", "is null", True))
                mapping = dig(o, "spec", "namespaceMapping")
                if mapping is not None and not isinstance(mapping, dict):
                    issues.append(FieldIssue("spec.namespaceMapping", "is not a mapping", True))
                elif mapping is None and "namespaceMapping" in (o.get("spec") or {}):
                    # read as no mapping (the copy restored in place), as Velero would read
                    # it; but the API server drops a null field, so no export of a stored
                    # Restore holds one (bench.mutations null_list, seed 301: a drill's
                    # target namespace changed with nothing named)
                    issues.append(
                        FieldIssue(
                            "spec.namespaceMapping", "is null, which the API server never stores"
                        )
                    )
                spec = o.get("spec")
                if kind in ("Backup", "Restore") and isinstance(spec, dict):
                    # a filter list written null: the API server prunes a null field, so no
                    # stored object holds one; read as "no filter" a Backup of one namespace
                    # covered every one, unnamed (bench.mutations null_list, seed 8011)
                    issues += [
                        FieldIssue(
                            f"spec.{key}", "is null, which the API server never stores", True
                        )
                        for key in _FILTER_LISTS
                        if key in spec and spec[key] is None
                    ]
                if kind == "Backup":
                    issues += _finished_time_issues(o, phase)
                    issues += _counter_issues(o) + _flag_issues(o.get("spec"), "spec")
                    issues += _backup_namespace_issues(o, "spec")
                    issues += _ttl_issues(dig(o, "spec", "ttl"), "spec.ttl")
                    read_str(o, "spec.storageLocation", issues)
                    # named, the reading kept: a location no object can be named names none
                    # (worse than any location), as Velero reads it (round h48b)
                    self._object_issues(kind, o, _location_name_issues(o, "spec.storageLocation"))
                    if BackupView.parse_policy(dig(o, "spec", "resourcePolicy")) == "?":
                        issues.append(
                            FieldIssue("spec.resourcePolicy", "is no {kind, name} reference", True)
                        )
                elif kind == "Restore":
                    # Velero's own count of what came back, and the counters a drill whose
                    # DataDownloads were not read rests on: of another type, a drill of 0
                    # items could pass (red team: "0" and 0.0); negative, none Velero wrote
                    issues += _counter_issues(o, "Restore")
                    issues += _flag_issues(o.get("spec"), "spec", _RESTORE_FLAGS)
                    issues += _restore_namespace_issues(o)
                    read_str(o, "spec.backupName", issues)
                    # Velero's API requires a spec naming a Backup or a Schedule: without one
                    # the Restore restored nothing it could say (red team: read as a drill
                    # of a gone Backup that took every VM)
                    if not isinstance(o.get("spec"), dict):
                        issues.append(FieldIssue("spec", "is missing or no mapping", True))
                    elif not any(
                        isinstance(dig(o, "spec", key), str) and dig(o, "spec", key)
                        for key in ("backupName", "scheduleName")
                    ):
                        issues.append(
                            FieldIssue("spec.backupName", "is missing (and no scheduleName)", True)
                        )
                elif kind in _ITEM_REFS:
                    # the PVC a per-volume item names: read as a key, never as str(junk);
                    # Velero creates each item with it, and labels it with its Backup or
                    # Restore: without either, which volume of which run it copied cannot
                    # be told (red team fz18: a failed DataDownload whose spec.targetVolume
                    # or labels were null vanished from its drill, AT_RISK -> READY)
                    for path in _ITEM_REFS[kind]:
                        read_str(o, path, issues, required=True)
                    if kind in ("DataDownload", "PodVolumeRestore"):
                        issues += _source_namespace_issues(o, required=kind == "DataDownload")
                    issues += _item_label_case_issues(o)
                    owner = _ITEM_OWNER_LABELS[kind]
                    if meta_label(o, owner) is None:
                        issues.append(
                            FieldIssue(
                                f"metadata.labels[{owner}]",
                                "is missing: Velero labels every item it creates with its run",
                            )
                        )
                if issues:
                    self._unread(kind, o, issues)
        for o in data.of("Schedule"):
            issues = _flag_issues(dig(o, "spec", "template"), "spec.template")
            issues += _backup_namespace_issues(o, "spec.template")
            # when it last ran (RR-PLT-002 and RR-BKP-002 show it): a metav1.Time
            read_time(o, "status.lastBackup", issues)
            # ScheduleSpec requires its cron and its Backup template (velero
            # pkg/apis/velero/v1/schedule_types.go): without them it is no Schedule Velero runs
            for path, value in (
                ("spec", o.get("spec")),
                ("spec.schedule", dig(o, "spec", "schedule")),
            ):
                if not (isinstance(value, dict) if path == "spec" else isinstance(value, str)):
                    issues.append(FieldIssue(path, "is missing or of another type", True))
                    break
            issues += _ttl_issues(dig(o, "spec", "template", "ttl"), "spec.template.ttl")
            issues += _wrong_types(o, (("spec.paused", bool, "true or false"),))
            if issues:
                self._unread("Schedule", o, issues)
        for o in data.of("ConfigMap"):
            # Only Velero's change-storage-class maps are read: StorageClass name -> name.
            payload = o.get("data")
            if payload is not None and not (
                isinstance(payload, dict)
                and all(isinstance(k, str) and isinstance(v, str) for k, v in payload.items())
            ):
                self._unread(
                    "ConfigMap",
                    o,
                    [FieldIssue("data", "is not a mapping of strings to strings", True)],
                )
        for o in data.of("VolumeSnapshotClass"):
            issues = []
            read_str(o, "driver", issues, required=True)
            if issues:
                # which driver's snapshots it takes is unknown: the class list is partial
                # (mutation seed 5417: read as no class, a PVC "failed" to be snapshotted)
                self._unread("VolumeSnapshotClass", o, issues)

    def _index_state_pvcs(self) -> None:
        """Find each VM's persistent EFI/TPM state PVC as KubeVirt does when it starts the VM.

        KubeVirt (pkg/storage/backend-storage/backend-storage.go ``PVCForVMI``) skips PVCs
        being deleted, takes one labelled ``persistent-state-for=<vm>`` (>= 1.4 labels the
        PVC it creates, named ``persistent-state-for-<vm>-<5 chars>``, and any legacy one it
        starts with) and, only when none is, the PVC named exactly ``persistent-state-for-<vm>``
        (the legacy name); with neither it creates a new, empty one. Any other PVC of that
        name prefix whose ownerReference (or name) points at the VM, unlabelled or being
        deleted, is a look-alike: KubeVirt never starts the VM with it, so it is no state of
        the VM (``state_lookalikes``; earlier it counted as the state PVC).
        """
        prefix = "persistent-state-for-"
        labelled: dict[tuple[str, str], list[dict[str, Any]]] = {}
        legacy: dict[tuple[str, str], dict[str, Any]] = {}
        named: list[tuple[str, str, PersistentVolumeClaimRecord]] = []
        for (ns, pvc_name), rec in self.pvc_records.items():
            obj = self.pvcs[(ns, pvc_name)]
            if pvc_name.startswith(prefix):
                named.append((ns, pvc_name, rec))
            if dig(obj, "metadata", "deletionTimestamp") is not None:
                continue
            vm = meta_labels(obj).get("persistent-state-for")
            if isinstance(vm, str) and vm:
                labelled.setdefault((ns, vm), []).append(obj)
            if pvc_name.startswith(prefix):
                legacy[(ns, pvc_name[len(prefix) :])] = obj
        self.state_pvcs = dict(labelled)
        for key, obj in legacy.items():
            self.state_pvcs.setdefault(key, [obj])
        for ns, pvc_name, rec in named:
            obj = self.pvcs[(ns, pvc_name)]
            for vm in rec.owner_vms or (_state_pvc_vm_guess(pvc_name),):
                if not any(o is obj for o in self.state_pvcs.get((ns, vm), ())):
                    self.state_lookalikes.setdefault((ns, vm), []).append(obj)

    def _data_source_issues(self, pvc: dict[str, Any]) -> None:
        """Name a claim's ``spec.dataSourceRef`` or ``spec.dataSource`` that is no object
        reference with a kind and a name (the API server requires both): whether a
        file-system restore finds the source is then unknown (RR-STG-003 ERROR,
        :mod:`auditor.inventory.datasource`), and the audit incomplete. Named only, not
        as a problem of the claim every PVC check shares: no other check reads it (rt37)."""
        issues = []
        for field_name in ("dataSourceRef", "dataSource"):
            ref = pvc["spec"].get(field_name)
            if ref is not None and not (
                isinstance(ref, dict)
                and all(isinstance(ref.get(k), str) and ref[k] for k in ("kind", "name"))
            ):
                issues.append(
                    FieldIssue(
                        f"spec.{field_name}", "is no object reference with a kind and a name", True
                    )
                )
        if issues:
            self._object_issues("PersistentVolumeClaim", pvc, issues)

    def _object_issues(self, kind: str, obj: dict[str, Any], issues: list[FieldIssue]) -> None:
        ns, name = _ns(obj), _name(obj)
        origin = self.data.origins.get((kind, ns, name))
        self.problems += [
            to_problem(i, kind=kind, namespace=ns, name=name, file=origin) for i in issues
        ]

    def _unread(self, kind: str, obj: dict[str, Any], issues: list[FieldIssue]) -> None:
        """Name ``obj``'s ``issues`` and count it as unread (:meth:`_mark_partial`)."""
        self._object_issues(kind, obj, issues)
        self.unread_objects.add((kind, _ns(obj), _name(obj)))
        self._mark_partial(kind, obj)

    def _mark_partial(self, kind: str, obj: dict[str, Any]) -> None:
        """Record that ``obj`` of ``kind`` was not read; keep which namespaces it could cover."""
        self.partial.add(kind)
        spec = obj.get("spec")
        if kind == "Schedule":
            spec = dig(spec, "template")
        names = dig(spec, "includedNamespaces") if isinstance(spec, dict) else None
        if kind in _OWN_NAMESPACE_KINDS and isinstance(dig(obj, "metadata", "namespace"), str):
            # a Service or Route only ever names pods of its own namespace
            names = [_ns(obj)]
        known: set[str] | None = None
        if (
            isinstance(names, list)
            and names
            and all(
                # a name no namespace can have (a look-alike hyphen) covers an unknown one
                isinstance(n, str) and n and _NAMESPACE_NAME.fullmatch(n)
                for n in names
            )
        ):
            known = set(names)
        ref = f"{_ns(obj)}/{_name(obj)}" if _ns(obj) else _name(obj)
        mine = self.unread_scopes.setdefault(kind, {})
        if ref in mine:
            was = mine[ref]
            mine[ref] = None if was is None or known is None else was | known
        else:
            mine[ref] = known
        if kind in self.partial_namespaces:
            current = self.partial_namespaces[kind]
            known = None if current is None or known is None else current | known
        self.partial_namespaces[kind] = known

    def partial_for(self, kind: str, namespace: str) -> bool:
        """True when unread objects of ``kind`` could concern a VM in ``namespace``: the source
        found some of them broken (the kind is PARTIAL), read the kind in other namespaces only
        (``ClusterData.read_in``), or the index found some broken for that namespace."""
        if self.data.state(kind) is KindState.PARTIAL:
            return True
        read_in = self.data.read_in.get(kind)
        if read_in is not None and namespace not in read_in:
            return True  # the live source read this kind in other namespaces only (-n)
        if kind not in self.partial_namespaces:
            return False
        covered = self.partial_namespaces[kind]
        return covered is None or namespace in covered

    def unread_names(self, kind: str, namespace: str) -> list[str]:
        """``namespace/name`` of the objects of ``kind`` the index counted as unread that could
        concern a VM in ``namespace`` (their ``includedNamespaces`` name it, or could not be
        read), sorted. Objects the source could not parse at all (a broken file) have no name
        and are not among them (the kind is PARTIAL: :meth:`partial_for`)."""
        scopes = self.unread_scopes.get(kind)
        if not scopes:
            return []
        return sorted(
            ref for ref, covers in scopes.items() if covers is None or namespace in covers
        )

    def record_problems(self, kind: str, namespace: str, name: str) -> list[CollectionProblem]:
        """Malformed-field problems of one object ([] when none or not indexed)."""
        return self.object_problems.get((kind, namespace, name), [])

    def _index_velero(self, data: ClusterData) -> None:
        for o in data.of("Backup"):
            view = self._parse(BackupView.parse, "Backup", o)
            if view is None:
                continue
            if view.resource_policy is not None:
                # the scope it ran with, its resource policy's includeExcludePolicy combined
                # in (volpolicy reads this index: imported here, where the index exists)
                from auditor.inventory.volpolicy import policy_scope

                view = policy_scope(self, view)
            self.backups[view.name] = view
            explicit = view.scope.included_namespaces
            if explicit and not any(any(c in p for c in "*?[") for p in explicit):
                for ns in explicit:
                    self.backups_by_ns.setdefault(ns, []).append(view)
            else:
                self.backups_any_ns.append(view)
        policies = (None, *_DELETION_POLICIES)
        by_backup = self.backup_snapshot_contents
        for o in data.of("VolumeSnapshotContent"):  # 30 per VM: kept to the fewest steps
            spec, status = o.get("spec"), o.get("status")
            nulled: tuple[str, ...] = ()
            if isinstance(status, dict):
                ready, handle = status.get("readyToUse"), status.get("snapshotHandle")
                if ready is None or handle is None:  # not the usual ready content
                    nulled = _nulled_status(status)
                error = status.get("error")
            else:
                ready = handle = error = None
                if status is None and "status" in o:
                    nulled = ("status",)
            if isinstance(spec, dict):
                policy, source = spec.get("deletionPolicy"), spec.get("source")
            else:
                policy = source = None
            volume = source.get("volumeHandle") if isinstance(source, dict) else None
            driver = spec.get("driver") if isinstance(spec, dict) else "-"
            if (
                spec is None
                or not isinstance(driver, str)
                # a driver "" or with a blank or a look-alike letter ("сsi.example.com",
                # Cyrillic U+0441) names no CSI driver: its snapshots counted for none,
                # unnamed (bench.mutations confusable, empty_string); read_str names it below
                or not (driver and driver.isascii() and driver.isprintable() and " " not in driver)
                or (ready is not None and not isinstance(ready, bool))
                or (error is not None and not isinstance(error, dict))
                or policy not in policies
                or (handle is not None and not isinstance(handle, str))
                or (source is not None and not isinstance(source, dict))
                or (volume is not None and not isinstance(volume, str))
                or handle == ""
                or volume == ""
                or nulled
            ):
                # The driver is required by the CRD; without it the content counts for no
                # driver's snapshots. A readyToUse that is no boolean ("false") proves neither
                # a snapshot nor its failure: the Backup's counters then prove no PVC
                # (capture.BackupPlan). Named, not marked unread: both only weaken evidence.
                issues: list[FieldIssue] = []
                if spec is None:
                    # the CRD requires the spec (driver, source, deletionPolicy): without it
                    # the content is no copy anything can show (bench.mutations null_list)
                    issues.append(
                        FieldIssue("spec", "is missing (every VolumeSnapshotContent has one)", True)
                    )
                if isinstance(spec, dict):
                    read_str(o, "spec.driver", issues, required=True)
                    read_enum(o, "spec.deletionPolicy", _DELETION_POLICIES, issues)
                issues += _wrong_types(o, _CONTENT_FIELDS)
                # a handle written "" names no snapshot (no volume) either: read as "no
                # handle", the content was no copy, unnamed (bench.mutations empty_string)
                issues += [
                    FieldIssue(path, "is an empty string: it names nothing")
                    for path, value in (
                        ("status.snapshotHandle", handle),
                        ("spec.source.volumeHandle", volume),
                    )
                    if value == ""
                ]
                # written null: the API server prunes it, so the copy was damaged or edited;
                # read as absent (no ready snapshot: no copy, never better), unnamed before
                # (round m42's mutation seeds 4202 and 4206, round h43c)
                issues += [FieldIssue(path, _CONTENT_NULL) for path in nulled]
                self._object_issues("VolumeSnapshotContent", o, issues)
            backup = meta_label(o, VELERO_BACKUP_LABEL)
            if backup:
                held = by_backup.get(backup)
                if held is None:
                    by_backup[backup] = [o]
                else:
                    held.append(o)
        for kind, target in (
            ("DataUpload", self.data_uploads),
            ("PodVolumeBackup", self.pod_volume_backups),
        ):
            for o in data.of(kind):
                backup = meta_label(o, VELERO_BACKUP_LABEL)
                if backup:
                    target.setdefault(backup, []).append(o)
        for kind, target in (
            ("PodVolumeRestore", self.pod_volume_restores),
            ("DataDownload", self.data_downloads),
        ):
            for o in data.of(kind):
                restore = meta_label(o, VELERO_RESTORE_LABEL)
                if restore:
                    target.setdefault(restore, []).append(o)
        self.restores = [
            r for o in data.of("Restore") if (r := self._parse(RestoreView.parse, "Restore", o))
        ]
        self.schedules = [
            s for o in data.of("Schedule") if (s := self._parse(ScheduleView.parse, "Schedule", o))
        ]
        self._alias_long_names()
        self._drop_foreign_items(data)
        named = {r.name for r in self.restores} | {velero_label(r.name) for r in self.restores}
        self.gone_restores = tuple(
            sorted((set(self.pod_volume_restores) | set(self.data_downloads)) - named)
        )
        for o in data.of("Schedule"):
            # where its backups go: of another type, read as "the default location" (red team);
            # a name no location can have (a blank, a look-alike hyphen: mutations
            # confusable_mark, seed 440) names none, never the default one. "" is Velero's
            # "the default location", valid
            located: list[FieldIssue] = []
            read_str(o, "spec.template.storageLocation", located, empty_ok=True)
            if located:
                self._unread("Schedule", o, located)
            else:
                where = "spec.template.storageLocation"
                self._object_issues("Schedule", o, _location_name_issues(o, where))
        for o in data.of("BackupStorageLocation"):
            phase = dig(o, "status", "phase")
            self.storage_locations[(_ns(o), _name(o))] = phase if isinstance(phase, str) else ""
            deleted = dig(o, "metadata", "deletionTimestamp")
            if deleted is not None:
                # being deleted: its phase says nothing of the location to come
                self.deleted_locations[(_ns(o), _name(o))] = str(deleted)
            checked: list[FieldIssue] = []
            if phase is None and not o.get("status"):
                # Velero validates a location at least once and writes its phase then
                # (locations.location_unverified): unvalidated, so availability unknown. A
                # phase of another type, or missing beside other status fields, is named by
                # _check_velero_fields.
                checked.append(FieldIssue("status.phase", "is missing: Velero never validated it"))
            validated = read_time(o, "status.lastValidationTime", checked)
            every_raw = dig(o, "spec", "validationFrequency")
            every = parse_duration(every_raw) if every_raw is not None else None
            if every_raw is not None and every is None:
                checked.append(
                    FieldIssue(
                        "spec.validationFrequency",
                        f"is {every_raw!r}, not a Go duration such as 1m0s",
                        True,
                    )
                )
            if checked:
                self._object_issues("BackupStorageLocation", o, checked)
            self.location_checks[(_ns(o), _name(o))] = (validated, every)
            endpoint = dig(o, "spec", "config", "s3Url")
            if isinstance(endpoint, str) and endpoint:
                self.location_endpoints[(_ns(o), _name(o))] = endpoint
            typed = _wrong_types(
                o, (("spec.config", dict, "a mapping"), ("spec.config.s3Url", str, "a string"))
            )
            if typed:
                # where its object storage runs cannot be told (RR-BKP-007): named, never
                # read as "no s3Url, the provider's own service" (red team)
                self._object_issues("BackupStorageLocation", o, typed)
                self.unknown_endpoints.add((_ns(o), _name(o)))
            mode = dig(o, "spec", "accessMode")
            if mode is not None and mode not in _ACCESS_MODES:
                self._unread(
                    "BackupStorageLocation",
                    o,
                    [
                        FieldIssue(
                            "spec.accessMode", f"is {mode!r}, not ReadWrite or ReadOnly", True
                        )
                    ],
                )
                self.unknown_mode_locations.add((_ns(o), _name(o)))
            if mode == "ReadOnly":
                self.read_only_locations.add((_ns(o), _name(o)))
            if dig(o, "spec", "default") is True:
                # Velero takes the first default location it lists
                self.default_locations.setdefault(_ns(o), _name(o))
            typed = _wrong_types(o, (("spec.default", bool, "true or false"),))
            if typed:
                self._unread("BackupStorageLocation", o, typed)
                self.unknown_defaults.add(_ns(o))
        for dpa in data.of("DataProtectionApplication"):
            self.dpa_names.append(f"{_ns(dpa)}/{_name(dpa)}")
            velero = dig(dpa, "spec", "configuration", "velero")
            plugins = dig(velero, "defaultPlugins")
            flags = dig(velero, "featureFlags")
            sections = _wrong_types(dpa, _DPA_SECTIONS)
            issues = sections + [
                FieldIssue(
                    f"spec.configuration.velero.{key}",
                    f"is a {type(value).__name__}, not a list of strings",
                    True,
                )
                for key, value in (("defaultPlugins", plugins), ("featureFlags", flags))
                if value is not None
                and not (isinstance(value, list) and all(isinstance(v, str) for v in value))
            ]
            # a read field written null: the API server prunes it (the DPA is a custom
            # resource), so the copy was edited; read as absent, defaultPlugins: null dropped
            # every plugin with nothing named (fz39 seed 11501)
            issues += [
                FieldIssue(path, "is null, which the API server never stores")
                for path in (
                    *(f for f, _, _ in _DPA_SECTIONS),
                    "spec.configuration.velero.defaultPlugins",
                    "spec.configuration.velero.featureFlags",
                    "spec.configuration.velero.customPlugins",
                )
                if _null_at(dpa, path)
            ]
            ttl = dig(velero, "args", "default-backup-ttl")
            if isinstance(ttl, int) and not isinstance(ttl, bool) and ttl < 0:
                # OADP passes it as --default-backup-ttl (oadp-operator pkg/velero/server/
                # args.go); a negative duration keeps no Backup (round m42)
                issues.append(
                    FieldIssue(
                        "spec.configuration.velero.args.default-backup-ttl",
                        f"is negative ({ttl}): no time a Backup can be kept",
                    )
                )
            custom = dig(velero, "customPlugins")
            if custom is not None and not (
                isinstance(custom, list)
                and all(
                    isinstance(c, dict)
                    and all(isinstance(c.get(k), str) for k in ("name", "image"))
                    for c in custom
                )
            ):
                issues.append(
                    FieldIssue(
                        "spec.configuration.velero.customPlugins",
                        "is not a list of plugins each with a name and an image",
                        True,
                    )
                )
            if issues:
                # Which plugins run is unknown: the kubevirt plugin's refusals then apply and
                # its pull-in does not (Pairing), as for a DPA that could not be read at all.
                self._unread("DataProtectionApplication", dpa, issues)
            ns = _ns(dpa)
            if isinstance(plugins, list) or isinstance(custom, list):
                enabled = _either(
                    _listed("kubevirt", plugins if isinstance(plugins, list) else []),
                    _custom_kubevirt(custom if isinstance(custom, list) else []),
                )
                self.kubevirt_plugins[ns] = _either(self.kubevirt_plugins.get(ns, False), enabled)
            # OADP turns Velero's CSI support on with the csi plugin or the EnableCSI flag
            # (https://docs.openshift.com/container-platform/latest/backup_and_restore/
            # application_backup_and_restore/installing/oadp-installing-dpa.html).
            csi = _either(
                _listed("csi", plugins if isinstance(plugins, list) else []),
                _listed("EnableCSI", flags if isinstance(flags, list) else []),
            )
            self.csi_plugins[ns] = _either(self.csi_plugins.get(ns, False), csi)
            takes = (
                None
                if issues or not isinstance(plugins, list) or custom
                else _snapshotter_drivers(plugins)
            )
            earlier = self.snapshotter_drivers.get(ns, frozenset())
            self.snapshotter_drivers[ns] = (
                None if takes is None or earlier is None else earlier | takes
            )
            known = self.server_defaults.setdefault(ns, {})
            for key, (stated, source) in _dpa_server_defaults(dpa, velero, issues).items():
                prior = known.get(key, (stated, source))
                # more than one DPA in a namespace: a switch they disagree on is unknown
                known[key] = (
                    (stated, source)
                    if prior[0] == stated
                    else (None, f"the DataProtectionApplications in {ns} disagree on it")
                )
            restore_pvc = dig(dpa, "spec", "configuration", "nodeAgent", "restorePVC")
            switch = (
                restore_pvc.get("ignoreDelayBinding") if isinstance(restore_pvc, dict) else None
            )
            ignore: bool | None = switch is True
            if (restore_pvc is not None and not isinstance(restore_pvc, dict)) or not isinstance(
                switch, (bool, type(None))
            ):
                ignore = None  # named as a malformed field: unknown, never "not set"
            # more than one DPA in a namespace: only what every one of them sets holds
            before = self.ignore_delay_binding.get(ns, True)
            self.ignore_delay_binding[ns] = (
                False if False in (before, ignore) else None if None in (before, ignore) else True
            )
            agent = _node_agent(dpa)
            self.node_agents[ns] = (
                _either(self.node_agents[ns], agent) if ns in self.node_agents else agent
            )

    def _alias_long_names(self) -> None:
        """File the labelled items of a Backup or Restore whose name is longer than a label
        value may be under its name too: Velero labels them with :func:`velero_label` of it
        (red team: a failed DataDownload of a 69-character drill went unseen, READY)."""
        for names, targets in (
            (
                list(self.backups),
                (
                    self.backup_snapshot_contents,
                    self.data_uploads,
                    self.pod_volume_backups,
                    self.backup_volume_snapshots,
                ),
            ),
            (
                [r.name for r in self.restores],
                (self.pod_volume_restores, self.data_downloads),
            ),
        ):
            taken = set(names)
            for name in names:
                label = velero_label(name)
                if label == name or label in taken:
                    # another Backup (Restore) is named exactly that: whose items they are
                    # cannot be told, and neither gets the other's (red team)
                    continue
                for target in targets:
                    if label in target and name not in target:
                        target[name] = target[label]

    def _drop_foreign_items(self, data: ClusterData) -> None:
        """Leave out of each Backup's DataUploads and PodVolumeBackups those Velero made for
        another Backup of its name (one deleted and created again, a Velero install in
        another namespace): a record labelled ``velero.io/backup-uid`` with another UID than
        the Backup's, or in another namespace than the Backup's (Velero creates both in the
        Backup's namespace, labelled with its UID: velero pkg/backup/actions/csi/pvc_action.go
        ``createDataUpload``, pkg/podvolume/backupper.go ``newPodVolumeBackup``; the
        backupper itself skips a PodVolumeBackup whose backup-uid label is not its Backup's:
        :data:`FOREIGN_ITEM_SRC`). Filed by name alone, an earlier Backup's Completed
        DataUpload stood for a disk this Backup never copied (red team r41a)."""
        uids: dict[str, str] = {}
        for o in data.of("Backup"):
            uid = dig(o, "metadata", "uid")
            if isinstance(uid, str) and uid:
                uids[_name(o)] = uid
        for target in (self.data_uploads, self.pod_volume_backups):
            for name, objs in list(target.items()):
                b = self.backups.get(name)
                if b is None:
                    continue
                uid = uids.get(name)
                kept = []
                for o in objs:
                    why = _foreign_item(o, b.namespace, uid)
                    if why is None:
                        kept.append(o)
                    else:
                        self.foreign_items.setdefault(name, []).append((o, why))
                if len(kept) != len(objs):
                    target[name] = kept

    def _parse(
        self, parse: Callable[[dict[str, Any]], _V], kind: str, obj: dict[str, Any]
    ) -> _V | None:
        """Parse a Velero object; a malformed scope is a collection problem, never "everything"."""
        try:
            return parse(obj)
        except SelectorError as exc:
            ns, name = _ns(obj), _name(obj)
            self._mark_partial(kind, obj)
            # the field itself, below the spec the filters sit in (a Schedule's template):
            # round h45b, "includedNamespaces: web" was named at spec alone
            spec = "spec.template" if kind == "Schedule" else "spec"
            self.problems.append(
                CollectionProblem(
                    reason=f"{kind} {ns}/{name} has a malformed scope ({exc}); ignored, so "
                    f"checks that rely on the absence of a {kind} cannot conclude",
                    file=self.data.origins.get((kind, ns, name)),
                    kind=kind,
                    namespace=ns,
                    name=name,
                    field=f"{spec}.{exc.field}" if exc.field else spec,
                    kinds=(kind,),
                )
            )
            return None

    @property
    def kubevirt_plugin(self) -> bool | None:
        """True when every DataProtectionApplication with a plugin list enables the kubevirt
        plugin, False when one does not, None when none lists its plugins or a list that
        does not name it holds entries that are no names."""
        answers = set(self.kubevirt_plugins.values())
        if False in answers:
            return False
        return True if answers == {True} else None

    @property
    def csi_enabled(self) -> bool | None:
        """True when some DataProtectionApplication turns Velero's CSI support on (``csi`` in
        defaultPlugins or the ``EnableCSI`` feature flag), False when none does, None when
        no DPA is seen or the lists that could name it hold entries that are no names."""
        if not self.csi_plugins:
            return None
        start: bool | None = False
        return reduce(_either, self.csi_plugins.values(), start)

    def kubevirt_plugin_in(self, velero_ns: str) -> bool | None:
        """Whether the Velero install of ``velero_ns`` runs the kubevirt plugin: the answer of
        the DataProtectionApplication there, else :attr:`kubevirt_plugin` (every DPA's, worked
        out only then: asked for every PVC x Backup pair)."""
        if velero_ns in self.kubevirt_plugins:
            return self.kubevirt_plugins[velero_ns]
        return self.kubevirt_plugin

    def csi_in(self, velero_ns: str) -> bool | None:
        """Whether the Velero install of ``velero_ns`` has CSI support on: its DPA's answer,
        else :attr:`csi_enabled` (worked out only then: asked for every PVC x Backup pair)."""
        if velero_ns in self.csi_plugins:
            return self.csi_plugins[velero_ns]
        return self.csi_enabled

    def backups_for_namespace(self, namespace: str) -> list[BackupView]:
        """Backups that could include objects of ``namespace`` (explicit + wildcard ones)."""
        return self.backups_by_ns.get(namespace, []) + self.backups_any_ns


_FS_DEFAULT = "defaultVolumesToFsBackup"
#: Backup switch -> the DPA field (``spec.configuration.velero``) OADP turns into the Velero
#: server flag that fills it in when a Backup leaves it unset (oadp-operator
#: internal/controller/velero.go ``getDefaultVolumesToFSBackup``,
#: ``getDefaultSnapshotMoveDataValue``; velero pkg/controller/backup_controller.go
#: ``prepareBackupRequest``)
_UNSUPPORTED_ARGS = "oadp.openshift.io/unsupported-velero-server-args"
DPA_SERVER_DEFAULTS = {
    _FS_DEFAULT: "defaultVolumesToFSBackup",
    "snapshotMoveData": "defaultSnapshotMoveData",
}
#: Backup switch -> the Velero server flag that fills it in (velero pkg/cmd/server/config/
#: config.go)
SERVER_FLAGS = {
    _FS_DEFAULT: "--default-volumes-to-fs-backup",
    "snapshotMoveData": "--default-snapshot-move-data",
}
#: Backup switch -> its field in a DPA's ``spec.configuration.velero.args`` (OADP 1.3+
#: VeleroServerArgs; None: args has no such field)
_ARGS_FIELDS: dict[str, str | None] = {
    _FS_DEFAULT: "default-volumes-to-fs-backup",
    "snapshotMoveData": None,
}


def _dpa_server_defaults(
    dpa: dict[str, Any], velero: Any, issues: list[FieldIssue]
) -> dict[str, tuple[bool | None, str]]:
    """The server defaults one DPA gives Velero: ``{switch: (value, the DPA field read)}``,
    value None (and why) where it cannot be told.

    OADP passes ``--default-volumes-to-fs-backup`` / ``--default-snapshot-move-data`` only
    for a field of ``spec.configuration.velero`` the DPA sets (unset: Velero's default,
    false). With ``spec.configuration.velero.args`` set, OADP rebuilds the server's
    arguments from ``args`` alone (oadp-operator internal/controller/velero.go, "if server
    args is set, override the default server args"; pkg/velero/server/args.go GetArgs, in
    OADP 1.3 to 1.5): then ``args.default-volumes-to-fs-backup`` holds and
    ``defaultVolumesToFSBackup``/``defaultSnapshotMoveData`` are not passed (fp30: a DPA
    giving ``args: {default-volumes-to-fs-backup: true}`` was read as snapshotting). The
    ``oadp.openshift.io/unsupported-velero-server-args`` ConfigMap replaces them all: unknown.
    """
    annotations = dig(dpa, "metadata", "annotations")
    args = dig(velero, "args")
    if (
        bool(issues)
        or not isinstance(annotations or {}, dict)
        or _UNSUPPORTED_ARGS in (annotations or {})
    ):
        why = "its DataProtectionApplication takes its server arguments from a ConfigMap"
        if issues:
            why = "its DataProtectionApplication cannot be read whole"
        return {key: (None, why) for key in DPA_SERVER_DEFAULTS}
    out: dict[str, tuple[bool | None, str]] = {}
    for key, flag in DPA_SERVER_DEFAULTS.items():
        if args is not None:
            field_name = _ARGS_FIELDS[key]
            stated = args.get(field_name) if isinstance(args, dict) and field_name else None
            read = f"args.{field_name}" if field_name else f"args (no {SERVER_FLAGS[key]})"
            if not isinstance(args, dict) or not isinstance(stated, (bool, type(None))):
                out[key] = (None, "its DataProtectionApplication's velero.args cannot be read")
                continue
            out[key] = (stated is True, read)
            continue
        stated = dig(velero, flag)
        if isinstance(stated, bool) or stated is None:
            out[key] = (stated is True, flag)
        else:
            out[key] = (None, f"its DataProtectionApplication's velero.{flag} is no boolean")
    return out


#: A BackupStorageLocation's ``spec.accessMode`` (velero pkg/apis/velero/v1
#: backupstoragelocation_types.go; ReadWrite when unset).
_ACCESS_MODES = ("ReadWrite", "ReadOnly")


def velero_label(name: str) -> str:
    """The label value Velero writes for ``name`` (``velero.io/backup-name``,
    ``velero.io/restore-name``): the name itself up to 63 characters, else its first 57 and
    the first 6 hex digits of its sha256 (velero pkg/label/label.go GetValidName,
    https://github.com/vmware-tanzu/velero/blob/main/pkg/label/label.go)."""
    if len(name) <= 63:
        return name
    return name[:57] + hashlib.sha256(name.encode()).hexdigest()[:6]


def _node_agent(dpa: dict[str, Any]) -> bool | None:
    """Whether a DataProtectionApplication deploys Velero's node-agent: OADP deploys it only
    when ``spec.configuration.nodeAgent.enable`` (or, before OADP 1.3, ``restic.enable``) is
    true, and deletes it otherwise (oadp-operator internal/controller/nodeagent.go); None
    when neither says true and one of them cannot be read (the index names it). The
    node-agent runs every data-mover and file-system backup and restore
    (https://velero.io/docs/main/csi-snapshot-data-movement/,
    https://velero.io/docs/main/file-system-backup/)."""
    config = dig(dpa, "spec", "configuration")
    if config is None:
        return False
    if not isinstance(config, dict):
        return None
    answers: list[bool | None] = []
    for key in ("nodeAgent", "restic"):
        section = config.get(key)
        enable = section.get("enable") if isinstance(section, dict) else None
        if section is not None and not isinstance(section, dict):
            answers.append(None)  # ``nodeAgent: true`` is no mapping: unreadable, not "on"
        elif enable is None or isinstance(enable, bool):
            answers.append(enable is True)
        else:
            answers.append(None)
    return True if True in answers else None if None in answers else False


#: The kubevirt Velero plugin's image (quay.io/kubevirt/kubevirt-velero-plugin:<tag>), as a DPA
#: installs it through ``spec.configuration.velero.customPlugins`` instead of defaultPlugins
#: (OADP's DataProtectionApplication API: CustomPlugin has a name and an image).
_KUBEVIRT_PLUGIN_IMAGE = "kubevirt-velero-plugin"


#: OADP ``defaultPlugins`` entry -> the CSI drivers whose PVs its Velero volume snapshotter
#: snapshots natively (velero-plugin-for-aws since 1.4: ebs.csi.aws.com; for-gcp:
#: pd.csi.storage.gke.io; for-microsoft-azure: disk.csi.azure.com; the vSphere plugin:
#: csi.vsphere.vmware.com). Entries with no volume snapshotter (openshift, csi, kubevirt,
#: hypershift) handle none; any other name is unknown (oadp-operator api/v1alpha1
#: DefaultPlugin).
SNAPSHOTTER_CSI_DRIVERS: dict[str, frozenset[str]] = {
    "aws": frozenset({"ebs.csi.aws.com"}),
    "legacy-aws": frozenset({"ebs.csi.aws.com"}),
    "gcp": frozenset({"pd.csi.storage.gke.io"}),
    "azure": frozenset({"disk.csi.azure.com"}),
    "vsphere": frozenset({"csi.vsphere.vmware.com"}),
    "openshift": frozenset(),
    "csi": frozenset(),
    "kubevirt": frozenset(),
    "hypershift": frozenset(),
}


def _snapshotter_drivers(plugins: list[Any]) -> frozenset[str] | None:
    """The CSI drivers the volume snapshotters of ``plugins`` (a DPA's ``defaultPlugins``)
    snapshot natively; None when one entry is not a plugin :data:`SNAPSHOTTER_CSI_DRIVERS`
    knows."""
    found: frozenset[str] = frozenset()
    for name in plugins:
        known = SNAPSHOTTER_CSI_DRIVERS.get(name) if isinstance(name, str) else None
        if known is None:
            return None
        found |= known
    return found


def _custom_kubevirt(custom: list[Any]) -> bool | None:
    """Whether a DPA's ``customPlugins`` install the kubevirt Velero plugin: an image whose
    repository (the last path part, without tag or digest) is ``kubevirt-velero-plugin`` or
    a build of it (``kubevirt-velero-plugin-rhel9``). True when one does, None when not but
    an entry cannot be read, else False. A tag or another image that merely mentions the
    name is no such plugin (red team)."""
    if any(
        isinstance(c, dict) and isinstance(c.get("image"), str) and _is_kubevirt_image(c["image"])
        for c in custom
    ):
        return True
    unreadable = any(not isinstance(c, dict) or not isinstance(c.get("image"), str) for c in custom)
    return None if unreadable else False


def _is_kubevirt_image(image: str) -> bool:
    repository = image.split("@", 1)[0].rsplit("/", 1)[-1].split(":", 1)[0]
    return repository == _KUBEVIRT_PLUGIN_IMAGE or repository.startswith(
        f"{_KUBEVIRT_PLUGIN_IMAGE}-"
    )


def _listed(name: str, values: list[Any]) -> bool | None:
    """Whether ``name`` is among ``values`` (a DPA's plugin or flag list): True when listed,
    None when not but some entry is no string (it may have been ``name``), else False."""
    if name in values:
        return True
    return None if any(not isinstance(v, str) for v in values) else False


def _either(a: bool | None, b: bool | None) -> bool | None:
    """True when either is, else None when either is unknown, else False."""
    return True if a is True or b is True else None if a is None or b is None else False


def _state_pvc_vm_guess(pvc_name: str) -> str:
    """``persistent-state-for-<vm>-<5 chars>`` -> ``<vm>`` (when no ownerReference says)."""
    rest = pvc_name[len("persistent-state-for-") :]
    head, _, tail = rest.rpartition("-")
    return head if head and len(tail) == 5 else rest
