"""Velero's change-storage-class mapping: the StorageClass a restored PVC is created with.

Velero's ``ChangeStorageClassAction`` (velero pkg/restore/actions/change_storageclass_action.go)
reads the one ConfigMap in Velero's namespace that its selector ``velero.io/plugin-config,
velero.io/change-storage-class=RestoreItemAction`` finds (pkg/plugin/framework/common
``GetPluginConfig``) and sets a restored PVC's ``spec.storageClassName`` from ``old`` to
``data[old]``; two such ConfigMaps make it fail every PVC and PV of a restore. Whatever reads
the restored PVC's class (its volume binding mode, its provisioner) must read the mapped one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from auditor.inventory.index import ClusterIndex
from auditor.kubevalues import dig
from auditor.redact import REDACTED
from auditor.sources.base import ClusterData

__all__ = [
    "CHANGE_SC_LABEL",
    "DEFAULT_SC_ANNOTATION",
    "PLUGIN_CONFIG_LABEL",
    "ClassMappings",
    "class_mappings",
    "default_storage_class",
]

CHANGE_SC_LABEL = "velero.io/change-storage-class"
PLUGIN_CONFIG_LABEL = "velero.io/plugin-config"
#: The annotation marking the cluster's default StorageClass
#: (https://kubernetes.io/docs/tasks/administer-cluster/change-default-storage-class/).
DEFAULT_SC_ANNOTATION = "storageclass.kubernetes.io/is-default-class"


@dataclass(frozen=True)
class ClassMappings:
    """The mappings Velero applies, per Velero namespace.

    ``by_namespace``: Velero namespace -> ``{old class: new class}`` (values that are no
    string, or were redacted, left out: see ``unreadable``; ``""`` kept, a class that
    does not exist); ``clashes``: Velero
    namespace -> the names of the two or more ConfigMaps its selector finds (Velero then
    fails every PVC of a restore); ``unreadable``: Velero namespace -> the old classes whose
    new class cannot be read.
    """

    by_namespace: dict[str, dict[str, str]] = field(default_factory=dict)
    clashes: dict[str, list[str]] = field(default_factory=dict)
    unreadable: dict[str, set[str]] = field(default_factory=dict)

    def merged(self) -> dict[str, str]:
        """Every namespace's readable mapping in one (namespaces in name order, a later
        one's entry winning): the classes a restore anywhere may map to."""
        out: dict[str, str] = {}
        for ns in sorted(self.by_namespace):
            out.update(self.by_namespace[ns])
        return out


def class_mappings(data: ClusterData) -> ClassMappings:
    """Read the change-storage-class ConfigMaps of every Velero namespace in ``data``.

    A Velero namespace is one holding a BackupStorageLocation or a Backup. A ConfigMap
    without the ``velero.io/plugin-config`` label is never read by Velero, so it maps
    nothing here either (red team: both read as a mapping). Never raises.
    """
    velero_ns = {
        str(dig(o, "metadata", "namespace"))
        for k in ("BackupStorageLocation", "Backup")
        for o in data.of(k)
    }
    found: dict[str, list[dict[str, Any]]] = {}
    for cm in data.of("ConfigMap"):
        labels = dig(cm, "metadata", "labels") or {}
        if (
            not isinstance(labels, dict)
            or labels.get(CHANGE_SC_LABEL) != "RestoreItemAction"
            or PLUGIN_CONFIG_LABEL not in labels
        ):
            continue
        ns = str(dig(cm, "metadata", "namespace"))
        if ns in velero_ns:
            found.setdefault(ns, []).append(cm)
    out = ClassMappings()
    for ns, maps in sorted(found.items()):
        if len(maps) > 1:
            out.clashes[ns] = sorted(str(dig(cm, "metadata", "name")) for cm in maps)
            continue
        payload = maps[0].get("data")
        for old, new in (payload if isinstance(payload, dict) else {}).items():
            if isinstance(new, str) and new != REDACTED:
                out.by_namespace.setdefault(ns, {})[str(old)] = new
            else:
                out.unreadable.setdefault(ns, set()).add(str(old))
    return out


def default_storage_class(ix: ClusterIndex) -> str | None:
    """The StorageClass a claim without ``storageClassName`` gets when it is created (on
    restore too): the default one, the newest when several are marked, as the
    DefaultStorageClass admission plugin picks since Kubernetes 1.26; None when none is."""

    def compute() -> str | None:
        marked = [
            (str(dig(o, "metadata", "creationTimestamp") or ""), name)
            for name, o in ix.storage_classes.items()
            if dig(o, "metadata", "annotations", DEFAULT_SC_ANNOTATION) == "true"
        ]
        return max(marked)[1] if marked else None

    return ix.memo("default_storage_class", compute)
