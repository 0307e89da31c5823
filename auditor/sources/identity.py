"""The cluster's name when none is configured: OpenShift's ``Infrastructure`` or the context.

Order (first that gives a name wins): the configured name (``--cluster-name`` or the
config's ``cluster_name``), the OpenShift ``Infrastructure`` object named ``cluster``
(``config.openshift.io/v1``: ``status.infrastructureName``, ``status.apiServerURL``;
https://docs.openshift.com/container-platform/4.14/rest_api/config_apis/infrastructure-config-openshift-io-v1.html),
then, for a live run, the kubeconfig context's name. Otherwise the name is unknown and
the report says so (``cluster.name_source: "unknown"``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from auditor.kinds import INFRASTRUCTURE
from auditor.yamlstrict import LoadError, load_documents

__all__ = [
    "ClusterIdentity",
    "NAME_SOURCES",
    "identity_from_infrastructure",
    "identity_from_export",
    "current_context",
    "UID_SOURCES",
    "cluster_uid",
]

#: Values of report.json ``cluster.name_source``.
NAME_SOURCES = ("config", "infrastructure", "kubeconfig-context", "unknown")

#: Values of report.json ``cluster.uid_source``.
UID_SOURCES = ("kube-system-namespace", "unknown")

#: The namespace whose ``metadata.uid`` identifies a cluster: created at install, never deleted,
#: independent of any name. OpenTelemetry's semantic convention ``k8s.cluster.uid`` is this uid
#: (containerized-data-importer vendor/go.opentelemetry.io/otel/semconv/v1.24.0/resource.go:
#: "set to the UID of the kube-system namespace", which "will exist for the lifetime of the
#: cluster" and changes "only if the cluster is rebuilt").
IDENTITY_NAMESPACE = "kube-system"

#: Export file names the directory source reads the Infrastructure object from.
EXPORT_FILES = ("infrastructures.yaml", "infrastructures.yml", "infrastructures.json")


@dataclass(frozen=True)
class ClusterIdentity:
    """A cluster name and where it came from (one of :data:`NAME_SOURCES`)."""

    name: str
    source: str
    api_server_url: str | None = None


def identity_from_infrastructure(doc: Any) -> ClusterIdentity | None:
    """The identity in an ``Infrastructure`` object or a List holding one; None without one.

    Only the object named ``cluster`` (the one OpenShift keeps) with a non-empty string
    ``status.infrastructureName`` counts; anything else is ignored (the name stays unknown).
    """
    items = doc.get("items") if isinstance(doc, dict) and "items" in doc else [doc]
    for obj in items if isinstance(items, list) else []:
        if not isinstance(obj, dict) or obj.get("kind") != INFRASTRUCTURE.kind:
            continue
        api = str(obj.get("apiVersion", ""))
        meta = obj.get("metadata")
        status = obj.get("status")
        if api.rpartition("/")[0] != INFRASTRUCTURE.group or not isinstance(meta, dict):
            continue
        if meta.get("name") != "cluster" or not isinstance(status, dict):
            continue
        name = status.get("infrastructureName")
        url = status.get("apiServerURL")
        if isinstance(name, str) and name.strip():
            return ClusterIdentity(
                name.strip(), "infrastructure", url if isinstance(url, str) else None
            )
    return None


def identity_from_export(root: Path, *, max_bytes: int) -> ClusterIdentity | None:
    """Read ``infrastructures.yaml`` (``oc get infrastructures -o yaml``) from an export root.

    None when the file is absent, unreadable or holds no usable ``cluster`` object; the
    directory source reports unreadable files itself.
    """
    for name in EXPORT_FILES:
        path = root / name
        if not path.is_file():
            continue
        try:
            for doc in load_documents(path, max_bytes=max_bytes):
                found = identity_from_infrastructure(doc)
                if found is not None:
                    return found
        except (LoadError, OSError, UnicodeDecodeError):
            return None
    return None


def current_context(kubeconfig: Path | None, context: str | None) -> str | None:
    """The kubeconfig context a live run uses: ``context``, else the file's current one.

    None when there is no kubeconfig (in-cluster service account) or it cannot be read.
    """
    if context:
        return context
    if kubeconfig is None and "KUBERNETES_SERVICE_HOST" in os.environ:
        return None  # the pod's service account: no kubeconfig context (see kubeclient)
    # imported when used: a directory audit never loads the Kubernetes client
    from kubernetes import config as k8s_config

    try:
        _, active = k8s_config.list_kube_config_contexts(  # type: ignore[no-untyped-call]
            config_file=str(kubeconfig) if kubeconfig else None
        )
    except (k8s_config.ConfigException, OSError, ValueError, TypeError, yaml.YAMLError):
        return None
    name = active.get("name") if isinstance(active, dict) else None
    return name if isinstance(name, str) and name else None


def cluster_uid(data: Any) -> str | None:
    """The cluster's identity: ``metadata.uid`` of its ``kube-system`` Namespace, or None.

    ``data``: :class:`auditor.sources.base.ClusterData`. None (unknown, never guessed) when no
    ``kube-system`` Namespace was read (an export without it; a live run with ``-n`` GETs it
    apart, ``data.info.kube_system_uid``, and a forbidden GET leaves it unknown),
    when it is defined twice with different content (which copy the cluster holds is unknown),
    or when its ``metadata.uid`` is no uid the API server writes (:func:`_uid`). Two clusters can share a name
    (``unknown-cluster``, two ``prod`` in different regions); this uid tells their archived
    runs apart (``docs/publishing.md``).
    """
    if ("Namespace", "", IDENTITY_NAMESPACE) in data.conflicts:
        return None
    for obj in data.of("Namespace"):
        meta = obj.get("metadata") if isinstance(obj, dict) else None
        if not isinstance(meta, dict) or meta.get("name") != IDENTITY_NAMESPACE:
            continue
        return _uid(meta.get("uid"))
    # a live run with -n reads kube-system for the identity alone (auditor.sources.cluster)
    return _uid(getattr(data.info, "kube_system_uid", None))


#: A uid as the API server writes it: RFC 4122 text of uuid.NewUUID, lower-case
#: (k8s.io/apimachinery pkg/types UID; apiserver pkg/registry/rest FillObjectMetaSystemFields).
_UID_RE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _uid(value: Any) -> str | None:
    """``value`` as the cluster's identity, or None (unknown) when it is no uid the API server
    writes: another type, blank, or any other text (a look-alike digit, upper case, ``null``):
    a malformed uid is never taken as an identity that keeps or mixes runs (fz35). Blanks
    around a uid are dropped, as before."""
    if not isinstance(value, str):
        return None
    value = value.strip()
    return value if _UID_RE.fullmatch(value) else None
