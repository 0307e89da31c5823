"""Shared helpers for the live-cluster tests: corpus path, kubeconfig, sources, estates."""

from __future__ import annotations

import copy
import functools
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from auditor.kinds import KINDS
from auditor.sources.base import ClusterData
from auditor.sources.cluster import ClusterSource, CollectOptions
from auditor.sources.kubeclient import ClientSettings, api_client
from tests.conftest import find_corpus
from tests.kubeapi_server import FakeKubeAPI, Faults, load_export, running

__all__ = [
    "corpus_dir",
    "export_dir",
    "write_kubeconfig",
    "Live",
    "serve",
    "fast_options",
    "comparable",
    "synthetic_estate",
]


def corpus_dir() -> Path:
    """Return ``shared/corpus`` (see :func:`tests.conftest.find_corpus`)."""
    return find_corpus()


def export_dir() -> Path:
    """The synthetic 12-VM ``oc get -A -o yaml`` export."""
    return corpus_dir() / "cluster-export"


def write_kubeconfig(path: Path, url: str, *, context: str = "loopback") -> Path:
    """Write a kubeconfig for ``url`` with a bearer token; its current context is ``context``."""
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "loop", "cluster": {"server": url}}],
        "users": [{"name": "auditor", "user": {"token": "test-token-not-secret"}}],
        "contexts": [
            {"name": context, "context": {"cluster": "loop", "user": "auditor"}},
            {"name": "elsewhere", "context": {"cluster": "loop", "user": "auditor"}},
        ],
        "current-context": context,
    }
    path.write_text(yaml.safe_dump(doc))
    return path


def fast_options(**kw: Any) -> CollectOptions:
    """Options with short timeouts and retry delays, for tests."""
    base: dict[str, Any] = {"request_timeout": 2.0, "retry_delays": (0.01, 0.01)}
    base.update(kw)
    return CollectOptions(**base)


@dataclass
class Live:
    """A running loopback server and a kubeconfig pointing at it."""

    api: FakeKubeAPI
    url: str
    kubeconfig: Path

    def source(self, **kw: Any) -> ClusterSource:
        """A ClusterSource on this server (fast retry options unless given)."""
        kw.setdefault("options", fast_options())
        client = api_client(ClientSettings(kubeconfig=self.kubeconfig))
        return ClusterSource(client, **kw)

    def collect(self, **kw: Any) -> ClusterData:
        """Collect from this server."""
        return self.source(**kw).collect()


@contextmanager
def serve(
    tmp: Path,
    *,
    objects: dict[str, list[dict[str, Any]]] | None = None,
    served_kinds: set[str] | None = None,
    faults: Faults | None = None,
    root: Path | None = None,
) -> Iterator[Live]:
    """Serve ``objects`` (default: the export at ``root`` or the corpus export) on loopback."""
    if objects is None:
        objects, exported = _export(root or export_dir())
        served_kinds = exported if served_kinds is None else served_kinds
    api = FakeKubeAPI(objects, served_kinds=served_kinds, faults=faults)
    with running(api) as url:
        yield Live(api=api, url=url, kubeconfig=write_kubeconfig(tmp / "kubeconfig", url))


@functools.lru_cache(maxsize=4)
def _parsed(root: Path) -> tuple[dict[str, list[dict[str, Any]]], frozenset[str]]:
    objects, exported = load_export(root)
    return objects, frozenset(exported)


def _export(root: Path) -> tuple[dict[str, list[dict[str, Any]]], set[str]]:
    """The raw objects of an export (parsed once per test session, copied per use)."""
    objects, exported = _parsed(root)
    return copy.deepcopy(objects), set(exported)


def comparable(data: ClusterData) -> dict[str, Any]:
    """What two sources must agree on: objects, states, problems, skipped (not info/origins)."""
    return {
        "objects": data.objects,
        "states": {k.kind: data.state(k.kind).value for k in KINDS},
        "problems": [p.to_dict() for p in data.problems],
        "skipped": data.skipped,
    }


def synthetic_estate(vms: int) -> dict[str, list[dict[str, Any]]]:
    """``vms`` VirtualMachines with a VMI, DataVolume and PVC each, over 20 namespaces.

    Built in memory from the first corpus VM/VMI/DV/PVC as templates.
    """
    base, _ = _export(export_dir())
    templates = {
        kind: base[kind][0]
        for kind in (
            "VirtualMachine",
            "VirtualMachineInstance",
            "DataVolume",
            "PersistentVolumeClaim",
        )
    }
    out: dict[str, list[dict[str, Any]]] = {kind: [] for kind in templates}
    namespaces = [f"estate-{i:02d}" for i in range(20)]
    for i in range(vms):
        ns, name = namespaces[i % len(namespaces)], f"vm-{i:05d}"
        for k, (kind, template) in enumerate(templates.items()):
            obj = copy.deepcopy(template)
            # one UID per object: the API server never gives two objects the same one, and the
            # sources mark two objects sharing a UID as conflicting copies (partial lists)
            uid = f"00000000-0000-4000-800{k}-{i:012d}"
            obj["metadata"].update(name=name, namespace=ns, uid=uid)
            out[kind].append(obj)
    out["Namespace"] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}} for ns in namespaces
    ]
    return out
