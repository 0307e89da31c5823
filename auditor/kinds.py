"""The Kubernetes resource kinds the auditor reads, and how to recognise them.

Both sources (an exported directory and the live API) use this one table: the
directory source to recognise objects and empty ``oc get`` lists by file name,
the cluster source to discover and list each kind (group, served versions in
order of preference, plural, scope).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from auditor.fieldnames import fold_key
from auditor.labelsyntax import labels_ok

__all__ = [
    "KindSpec",
    "is_resource_policy",
    "KINDS",
    "INFRASTRUCTURE",
    "BY_KIND",
    "spec_for_object",
    "spec_for_file_stem",
    "unsupported_version",
    "kind_hinted",
    "project",
    "project_fields",
    "KEPT_WITHIN",
    "trim_within",
]


@dataclass(frozen=True)
class KindSpec:
    """One resource kind: its API group, known versions (preferred first), plural, scope."""

    kind: str
    group: str
    versions: tuple[str, ...]
    plural: str
    namespaced: bool
    #: ``key=value`` or ``key`` (exists) label selector: only such objects are listed and read
    label_selector: str | None = None
    #: The slim record an audit keeps of each object: section (``metadata``, ``spec``,
    #: ``status``) -> the fields of it that checks read; None keeps the whole object.
    #: For kinds of which an estate holds hundreds of thousands (see :func:`project`).
    keep: tuple[tuple[str, tuple[str, ...]], ...] | None = None

    def selects(self, obj: dict[str, Any]) -> bool:
        """True when ``obj`` matches :attr:`label_selector` (always, without one).

        Also True when ``metadata`` is not a mapping (or absent), or its ``labels`` are no mapping of
        strings to strings, or hold a key or value the API server refuses
        (:func:`auditor.labelsyntax.labels_ok`): the labels cannot be read, so the
        object may be one of the selected ones, and reading it names the defect. (Mutations
        seed 3001: a change-storage-class ConfigMap whose labels were a string was dropped
        unnamed, and the class mapping with it.)
        """
        if self.label_selector is None or (self.kind == "ConfigMap" and is_resource_policy(obj)):
            return True
        key, eq, value = self.label_selector.partition("=")
        meta = obj.get("metadata")
        if not isinstance(meta, dict):
            # absent or null too: no stored object lacks it (fz36: a change-storage-class
            # ConfigMap written ``metadata: null`` was dropped unselected, unnamed)
            return True
        labels = meta.get("labels")
        if labels is None:
            # written null (not absent): a damaged copy whose labels are unknown, so it may be
            # a selected one; read, its shape fault names it (fz39: a pinned revision's or the
            # change-storage-class ConfigMap's ``labels: null`` dropped it unselected, unnamed);
            # so with the key written with a blank or in another case (``"labels\u00a0"``)
            return "labels" in meta or any(
                isinstance(k, str) and k != "labels" and fold_key(k) == "labels" for k in meta
            )
        if not isinstance(labels, dict) or not labels_ok(labels):
            # (fz36: a key or value the API server refuses, ``"velero.io/change-storage-class "``:
            # the mapping ConfigMap was dropped unnamed)
            return True
        return labels.get(key) == value if eq else key in labels

    @property
    def group_label(self) -> str:
        """``group`` or ``core`` for the legacy core group (for messages)."""
        return self.group or "core"


#: a top-level key only a Velero resource-policy document has (velero
#: internal/resourcepolicies/resource_policies.go ``ResourcePolicies``)
_POLICY_KEY = re.compile(r"^(volumePolicies|includeExcludePolicy)\s*:", re.MULTILINE)


def is_resource_policy(obj: dict[str, Any]) -> bool:
    """Whether ``obj`` is a ConfigMap holding a Velero resource policy (what a Backup's
    ``spec.resourcePolicy`` names): one ``data`` value with a ``volumePolicies`` or
    ``includeExcludePolicy`` key. It carries no label to select it by, so its content says."""
    data = obj.get("data") if obj.get("kind") == "ConfigMap" else None
    return isinstance(data, dict) and any(
        isinstance(v, str) and _POLICY_KEY.search(v) for v in data.values()
    )


def project(obj: dict[str, Any], spec: KindSpec) -> dict[str, Any]:
    """The slim record of ``obj``: ``apiVersion``, ``kind`` and the fields ``spec.keep`` names,
    in new mappings (the parsed object can then be freed); ``obj`` itself without ``keep``.

    A section that is not a mapping is left out (the sources name that defect before), but
    for a null one, kept null: the API server never stores it, and the index names it (a
    VolumeSnapshotContent's ``status: null``, round h43c).
    """
    if spec.keep is None:
        return obj
    return project_fields(obj, spec.keep)


def project_fields(
    obj: dict[str, Any], keep: tuple[tuple[str, tuple[str, ...]], ...]
) -> dict[str, Any]:
    """:func:`project` by ``keep`` (a :attr:`KindSpec.keep`)."""
    out = {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind")}
    for section, fields in keep:
        part = obj.get(section)
        if isinstance(part, dict):
            kept: dict[str, Any] = {f: part[f] for f in fields if f in part}
            trim_within(kept)
            out[section] = kept
        elif part is None and section in obj:
            out[section] = None  # written null (see :func:`project`)
    return out


def trim_within(kept: dict[str, Any]) -> None:
    """Keep only the read keys (:data:`KEPT_WITHIN`) of the mappings a slim section holds."""
    for f, within in KEPT_WITHIN.items():
        value = kept.get(f)
        if type(value) is dict:
            kept[f] = {k: value[k] for k in within if k in value}


#: kept mappings of which only these keys are read: the rest (an object reference's uid,
#: resourceVersion...) is dropped from the slim record (60,000 of them at 2,000 VMs)
KEPT_WITHIN = {"volumeSnapshotRef": ("name", "namespace")}


#: The metadata kept of the objects that say whether a CDI feature gate is on.
_GATE_META = ("name", "namespace", "labels", "annotations", "deletionTimestamp")

KINDS: tuple[KindSpec, ...] = (
    KindSpec("VirtualMachine", "kubevirt.io", ("v1", "v1alpha3"), "virtualmachines", True),
    KindSpec(
        "VirtualMachineInstance", "kubevirt.io", ("v1", "v1alpha3"), "virtualmachineinstances", True
    ),
    KindSpec("KubeVirt", "kubevirt.io", ("v1",), "kubevirts", True),
    # whether CDI's DataVolumeClaimAdoption gate is on (auditor.inventory.cdiadopt): the
    # CDIConfig CDI reads, the CDI CR it is copied from and OpenShift Virtualization's
    # HyperConverged, which writes the CDI CR; only the fields that say so are kept
    KindSpec(
        "CDIConfig",
        "cdi.kubevirt.io",
        ("v1beta1",),
        "cdiconfigs",
        False,
        keep=(("metadata", _GATE_META), ("spec", ("featureGates",))),
    ),
    KindSpec(
        "CDI",
        "cdi.kubevirt.io",
        ("v1beta1",),
        "cdis",
        False,
        keep=(("metadata", _GATE_META), ("spec", ("config",))),
    ),
    KindSpec(
        "HyperConverged",
        "hco.kubevirt.io",
        ("v1beta1",),
        "hyperconvergeds",
        True,
        keep=(("metadata", _GATE_META),),
    ),
    KindSpec("DataVolume", "cdi.kubevirt.io", ("v1beta1", "v1alpha1"), "datavolumes", True),
    # the golden images a DataVolume's sourceRef names (what a never-filled disk is filled from)
    KindSpec("DataSource", "cdi.kubevirt.io", ("v1beta1",), "datasources", True),
    KindSpec("PersistentVolumeClaim", "", ("v1",), "persistentvolumeclaims", True),
    KindSpec("PersistentVolume", "", ("v1",), "persistentvolumes", False),
    KindSpec("Service", "", ("v1",), "services", True),
    # only KubeVirt's instancetype/preference revisions, not every StatefulSet's history
    KindSpec(
        "ControllerRevision",
        "apps",
        ("v1",),
        "controllerrevisions",
        True,
        label_selector="instancetype.kubevirt.io/object-kind",
    ),
    # only Velero's change-storage-class plugin ConfigMaps and, in an export, the resource
    # policies Backups name (is_resource_policy): nothing else is read or stored
    KindSpec(
        "ConfigMap",
        "",
        ("v1",),
        "configmaps",
        True,
        label_selector="velero.io/change-storage-class=RestoreItemAction",
    ),
    KindSpec("Namespace", "", ("v1",), "namespaces", False),
    KindSpec("StorageClass", "storage.k8s.io", ("v1", "v1beta1"), "storageclasses", False),
    KindSpec(
        "VolumeSnapshot", "snapshot.storage.k8s.io", ("v1", "v1beta1"), "volumesnapshots", True
    ),
    KindSpec(
        "VolumeSnapshotContent",
        "snapshot.storage.k8s.io",
        ("v1", "v1beta1"),
        "volumesnapshotcontents",
        False,
        # Velero's CSI path leaves one per Backup and PVC (7 per VM at a daily schedule kept a
        # week): most of an estate's objects. Read: the backup label, the driver, the outcome
        # (readyToUse, error, the snapshotHandle a restore names) and the deletion policy
        # (inventory/capture.py, inventory/facts.py), and the VolumeSnapshot it was taken
        # for, whose name Velero makes of the PVC's (capture.snapshot_claim); when it was
        # created and cut (creationTimestamp, status.creationTime: hookpods.late_cuts, h48a).
        keep=(
            (
                "metadata",
                (
                    "name",
                    "namespace",
                    "labels",
                    "annotations",
                    "deletionTimestamp",
                    "creationTimestamp",
                ),
            ),
            (
                "spec",
                (
                    "driver",
                    "deletionPolicy",
                    "volumeSnapshotClassName",
                    "source",
                    "volumeSnapshotRef",
                ),
            ),
            (
                "status",
                ("readyToUse", "error", "restoreSize", "snapshotHandle", "creationTime"),
            ),
        ),
    ),
    KindSpec(
        "VolumeSnapshotClass",
        "snapshot.storage.k8s.io",
        ("v1", "v1beta1"),
        "volumesnapshotclasses",
        False,
    ),
    KindSpec(
        "VirtualMachineSnapshot",
        "snapshot.kubevirt.io",
        ("v1beta1", "v1alpha1"),
        "virtualmachinesnapshots",
        True,
    ),
    KindSpec(
        "VirtualMachineSnapshotContent",
        "snapshot.kubevirt.io",
        ("v1beta1", "v1alpha1"),
        "virtualmachinesnapshotcontents",
        True,
    ),
    KindSpec(
        "VirtualMachineInstancetype",
        "instancetype.kubevirt.io",
        ("v1beta1", "v1alpha2", "v1alpha1"),
        "virtualmachineinstancetypes",
        True,
    ),
    KindSpec(
        "VirtualMachineClusterInstancetype",
        "instancetype.kubevirt.io",
        ("v1beta1", "v1alpha2", "v1alpha1"),
        "virtualmachineclusterinstancetypes",
        False,
    ),
    KindSpec(
        "VirtualMachinePreference",
        "instancetype.kubevirt.io",
        ("v1beta1", "v1alpha2", "v1alpha1"),
        "virtualmachinepreferences",
        True,
    ),
    KindSpec(
        "VirtualMachineClusterPreference",
        "instancetype.kubevirt.io",
        ("v1beta1", "v1alpha2", "v1alpha1"),
        "virtualmachineclusterpreferences",
        False,
    ),
    KindSpec("Backup", "velero.io", ("v1",), "backups", True),
    KindSpec("Schedule", "velero.io", ("v1",), "schedules", True),
    KindSpec("Restore", "velero.io", ("v1",), "restores", True),
    KindSpec("BackupStorageLocation", "velero.io", ("v1",), "backupstoragelocations", True),
    KindSpec("PodVolumeBackup", "velero.io", ("v1",), "podvolumebackups", True),
    KindSpec("DataUpload", "velero.io", ("v2alpha1",), "datauploads", True),
    KindSpec("PodVolumeRestore", "velero.io", ("v1",), "podvolumerestores", True),
    KindSpec("DataDownload", "velero.io", ("v2alpha1",), "datadownloads", True),
    # a request not yet processed names a Backup being deleted (inventory/deletions.py)
    KindSpec("DeleteBackupRequest", "velero.io", ("v1",), "deletebackuprequests", True),
    # a NotReady one cannot give back the data-mover and fs-backup copies (inventory/repos.py)
    KindSpec("BackupRepository", "velero.io", ("v1",), "backuprepositories", True),
    KindSpec(
        "NetworkAttachmentDefinition",
        "k8s.cni.cncf.io",
        ("v1",),
        "network-attachment-definitions",
        True,
    ),
    KindSpec("Route", "route.openshift.io", ("v1",), "routes", True),
    KindSpec(
        "DataProtectionApplication",
        "oadp.openshift.io",
        ("v1alpha1",),
        "dataprotectionapplications",
        True,
    ),
)

#: OpenShift's cluster-scoped ``Infrastructure`` (only the object named ``cluster``), read
#: for the cluster's name alone (:mod:`auditor.sources.identity`). Deliberately not in
#: :data:`KINDS`: it is no audit input, so it has no kind state and no counts in reports.
INFRASTRUCTURE = KindSpec(
    "Infrastructure", "config.openshift.io", ("v1",), "infrastructures", False
)

BY_KIND: dict[str, KindSpec] = {k.kind: k for k in KINDS}
_BY_GROUP_KIND: dict[tuple[str, str], KindSpec] = {(k.group, k.kind): k for k in KINDS}
_BY_LOWER_GROUP_KIND = {(k.group.lower(), k.kind.lower()): k for k in KINDS}
_BY_LOWER_KIND = {k.kind.lower(): k for k in KINDS}
_BY_STEM: dict[str, KindSpec] = {}
for _k in KINDS:
    for _stem in (_k.plural, _k.kind.lower(), _k.kind.lower() + "s"):
        _BY_STEM[_stem.replace("-", "")] = _k


def spec_for_object(api_version: str, kind: str) -> KindSpec | None:
    """Return the spec for an object's ``apiVersion``/``kind``, or None if not read.

    A known kind at an unknown version (say ``kubevirt.io/v2``) is not guessed
    at: it returns None so the object is counted as skipped.
    """
    group, _, version = api_version.rpartition("/")
    spec = _BY_GROUP_KIND.get((group, kind))
    if spec is None or version not in spec.versions:
        return None
    return spec


def kind_hinted(kind: Any) -> KindSpec | None:
    """The kind the auditor reads that a ``kind`` value of an object whose apiVersion or kind
    cannot be read stands for: a string naming one (folded as a field key is), or a list
    holding exactly one such string (``kind: [VirtualMachine]``); None otherwise."""
    if isinstance(kind, list) and len(kind) == 1:
        kind = kind[0]
    return _BY_LOWER_KIND.get(fold_key(kind)) if isinstance(kind, str) else None


def misspelt_kind(api_version: str, kind: str) -> KindSpec | None:
    """The spec of a kind the auditor reads that ``apiVersion``/``kind`` almost name: the
    same group and kind in another letter case (``kind: virtualmachine``,
    ``KubeVirt.io/v1``), or a kind of another API group given in the core group
    (``apiVersion: v1`` with ``kind: VirtualMachine``). The API server writes neither, so such
    an object is a damaged copy of one the auditor reads; None otherwise (a kind of another
    group, such as CloudNativePG's Backup, is no damage).
    """
    group, _, _ = api_version.rpartition("/")
    # a blank or an invisible character around the kind or group (``"VirtualMachine "``,
    # ``" kubevirt.io/v1"``) is no kind the API server writes either: folded like a field key
    # (fz39: a VirtualMachine whose kind ended in a newline vanished from the report unnamed)
    spec = _BY_LOWER_GROUP_KIND.get((fold_key(group), fold_key(kind)))
    if spec is not None and (spec.group, spec.kind) != (group, kind):
        return spec
    if not fold_key(group):
        named = _BY_LOWER_KIND.get(fold_key(kind))
        if named is not None and named.group:
            return named
    return None


def unsupported_version(api_version: str, kind: str) -> KindSpec | None:
    """The spec of a kind the auditor reads when ``api_version`` is one it does not read.

    ``snapshot.kubevirt.io/v2alpha1 VirtualMachineSnapshot`` gives the VirtualMachineSnapshot
    spec; an unknown kind, or a known version, gives None.
    """
    group, _, version = api_version.rpartition("/")
    spec = _BY_GROUP_KIND.get((group, kind))
    return spec if spec is not None and version not in spec.versions else None


def spec_for_file_stem(stem: str) -> KindSpec | None:
    """Guess the kind an ``oc get <plural> -A -o yaml`` file holds from its name.

    Used only for *empty* lists (``items: []`` carries no kind): an empty
    ``datauploads.yaml`` still proves there are no DataUploads.
    """
    key = stem.lower().replace("-", "").replace("_", "")
    return _BY_STEM.get(key)
