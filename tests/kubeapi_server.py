"""A small loopback Kubernetes API server for tests of the live cluster source.

Serves, over real HTTP on 127.0.0.1 (port 0), what a kube-apiserver serves to a
read-only client: ``/version``, ``/api``, ``/api/v1``, ``/apis``,
``/apis/<group>/<version>`` discovery, namespaced and cluster-wide list URLs with
``limit``/``continue`` pagination, ``GET /api/v1/namespaces/<name>``, and
``POST .../selfsubjectaccessreviews``. List items carry no ``apiVersion``/``kind``
(as from a real server). Faults are injected per kind (:class:`Faults`).
Every request is logged as ``(method, path_with_query)`` in :attr:`FakeKubeAPI.log`.
"""

from __future__ import annotations

import base64
import copy
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import orjson

from auditor.kinds import KINDS, KindSpec, spec_for_file_stem, spec_for_object
from auditor.yamlstrict import load_documents

__all__ = ["Faults", "FakeKubeAPI", "load_export", "running"]

_CORE_EXTRA = (  # core resources a real server also lists (never read by the auditor)
    ("secrets", "Secret", True),
    ("pods", "Pod", True),
    ("configmaps", "ConfigMap", True),
)


@dataclass
class Faults:
    """Faults to inject, keyed by kind name (``"Backup"``) or API group (``"velero.io"``).

    ``forbidden``: lists of these kinds answer 403; ``forbidden_namespaces``: any
    list inside these namespaces answers 403. ``missing_groups``: not in
    ``/apis`` and 404 under ``/apis/<group>``. ``not_found``: discovery lists the kind
    but its list URL answers 404. ``expire``: kind -> how many continue requests
    answer 410 Expired. ``errors``: kind -> how many list requests answer 500.
    ``delay``: kind -> seconds to sleep before answering a list. ``versions``:
    group -> versions served (preferred first), overriding the kinds table.
    ``ssar_denied``: plural resources whose SelfSubjectAccessReview is denied.
    ``vanish_after``: the server stops listening (later connections are refused)
    when this many list requests were answered; 0 = right after discovery.
    """

    forbidden: set[str] = field(default_factory=set)
    forbidden_namespaces: set[str] = field(default_factory=set)
    missing_groups: set[str] = field(default_factory=set)
    not_found: set[str] = field(default_factory=set)
    expire: dict[str, int] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)
    delay: dict[str, float] = field(default_factory=dict)
    versions: dict[str, tuple[str, ...]] = field(default_factory=dict)
    ssar_denied: set[str] = field(default_factory=set)
    vanish_after: int | None = None


def load_export(root: Path) -> tuple[dict[str, list[dict[str, Any]]], set[str]]:
    """Read an ``oc get -A -o yaml`` export into raw objects per kind (unredacted).

    Returns ``(objects, exported_kinds)``: ``exported_kinds`` includes kinds whose
    file is present but empty.
    """
    objects: dict[str, list[dict[str, Any]]] = {}
    exported: set[str] = set()
    for path in sorted(root.glob("*.yaml")):
        hinted = spec_for_file_stem(path.stem)
        if hinted is not None:
            exported.add(hinted.kind)
        for doc in load_documents(path):
            for item in doc.get("items") or []:
                spec = spec_for_object(item["apiVersion"], item["kind"])
                if spec is not None:
                    objects.setdefault(spec.kind, []).append(item)
                    exported.add(spec.kind)
    return objects, exported


class FakeKubeAPI:
    """The server state: objects per kind, faults, request log.

    Kinds of :data:`KINDS` not in ``served_kinds`` answer 403 (an export that
    lacks a kind says nothing about it, like a forbidden list).
    """

    def __init__(
        self,
        objects: dict[str, list[dict[str, Any]]],
        *,
        served_kinds: set[str] | None = None,
        faults: Faults | None = None,
    ) -> None:
        self.objects = objects
        self.served_kinds = (
            set(served_kinds) if served_kinds is not None else {k.kind for k in KINDS}
        )
        self.faults = faults or Faults()
        self.log: list[tuple[str, str]] = []
        self._lock = threading.Lock()
        self.lists_answered = 0
        #: the single-object GET paths answered (get_configmap)
        self.gets: list[str] = []
        #: list path -> the sorted items its first page was cut from (see list_response)
        self._snapshots: dict[str, list[dict[str, Any]]] = {}
        #: set by :func:`running`: stops the server (used by ``Faults.vanish_after``)
        self.vanish: Any = None
        self._routes: dict[tuple[str, str], tuple[KindSpec, str]] = {}
        for spec in KINDS:
            for version in self.group_versions(spec.group):
                if spec not in self.kinds_at(spec.group, version):
                    continue
                prefix = f"/apis/{spec.group}/{version}" if spec.group else f"/api/{version}"
                self._routes[(prefix, spec.plural)] = (spec, version)

    # -- discovery ---------------------------------------------------------------
    def group_versions(self, group: str) -> tuple[str, ...]:
        """Versions served for ``group``, preferred first (empty when missing)."""
        if group in self.faults.missing_groups:
            return ()
        if group in self.faults.versions:
            return self.faults.versions[group]
        return tuple(dict.fromkeys(k.versions[0] for k in KINDS if k.group == group))

    def kinds_at(self, group: str, version: str) -> list[KindSpec]:
        """Kinds listed by ``/apis/<group>/<version>``: those that know the version, or
        every kind of the group when no kind knows it (a version newer than the auditor)."""
        specs = [k for k in KINDS if k.group == group]
        known = [k for k in specs if version in k.versions]
        return known or specs

    def route(self, path: str) -> tuple[KindSpec, str, str | None] | None:
        """Return ``(spec, version, namespace)`` when ``path`` is a list URL."""
        parts = path.strip("/").split("/")
        width = 2 if parts[0] == "api" else 3
        prefix, rest = "/" + "/".join(parts[:width]), parts[width:]
        if len(rest) == 1:
            found = self._routes.get((prefix, rest[0]))
            return (found[0], found[1], None) if found else None
        if len(rest) == 3 and rest[0] == "namespaces":
            found = self._routes.get((prefix, rest[2]))
            if found and found[0].namespaced:
                return found[0], found[1], rest[1]
        return None

    def discovery(self, path: str) -> dict[str, Any] | None:
        if path == "/version":
            return {
                "major": "1",
                "minor": "31",
                "gitVersion": "v1.31.11",
                "platform": "linux/amd64",
            }
        if path == "/api":
            return {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": []}
        if path == "/apis":
            groups = []
            for group in sorted({k.group for k in KINDS if k.group}):
                versions = self.group_versions(group)
                if not versions:
                    continue
                entries = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
                groups.append({"name": group, "versions": entries, "preferredVersion": entries[0]})
            groups.append(_authz_group())
            return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}
        parts = path.strip("/").split("/")
        if parts == ["api", "v1"]:
            return _resource_list("v1", [k for k in KINDS if not k.group], _CORE_EXTRA)
        if len(parts) == 3 and parts[0] == "apis" and parts[2] in self.group_versions(parts[1]):
            specs = self.kinds_at(parts[1], parts[2])
            return _resource_list(f"{parts[1]}/{parts[2]}", specs, ())
        return None

    # -- lists -------------------------------------------------------------------
    def list_response(
        self, path: str, route: tuple[KindSpec, str, str | None], query: dict[str, str]
    ) -> tuple[int, dict[str, Any]]:
        spec, version, ns = route
        faults = self.faults
        if spec.kind in faults.delay:
            time.sleep(faults.delay[spec.kind])
        with self._lock:
            if faults.errors.get(spec.kind, 0) > 0:
                faults.errors[spec.kind] -= 1
                return 500, _status(500, "InternalError", "etcdserver: request timed out")
            if "continue" in query and faults.expire.get(spec.kind, 0) > 0:
                faults.expire[spec.kind] -= 1
                return 410, _status(
                    410,
                    "Expired",
                    "The provided continue parameter is too old to display a consistent "
                    "list result. You can start a new list without the continue parameter.",
                )
        denied_ns = ns is not None and ns in faults.forbidden_namespaces
        if denied_ns or spec.kind in faults.forbidden or spec.kind not in self.served_kinds:
            return 403, _status(
                403,
                "Forbidden",
                f'{spec.plural}.{spec.group} is forbidden: User "system:'
                f'serviceaccount:audit:auditor" cannot list resource "{spec.plural}"',
            )
        if spec.kind in faults.not_found:
            return 404, _status(404, "NotFound", "the server could not find the requested resource")
        start = int(_decode(query["continue"])["offset"]) if "continue" in query else 0
        items = self._snapshots.get(path) if start else None
        if items is None:
            # A list is one consistent snapshot: its continue pages read the same sorted
            # list (a real server reads them at the first page's resourceVersion).
            items = [
                o
                for o in self.objects.get(spec.kind, [])
                if (ns is None or o["metadata"].get("namespace") == ns)
                and _labels_match(o, query.get("labelSelector"))
            ]
            items.sort(key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"]["name"]))
            with self._lock:
                self._snapshots[path] = items
        limit = int(query.get("limit", "0")) or len(items) or 1
        page = items[start : start + limit]
        meta: dict[str, Any] = {"resourceVersion": "68030000"}
        if start + limit < len(items):
            meta["continue"] = _encode({"path": path, "offset": start + limit})
            meta["remainingItemCount"] = len(items) - start - limit
        group_version = f"{spec.group}/{version}" if spec.group else version
        # Serialised right away, so shallow copies without apiVersion/kind are enough.
        out_items = [
            {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")} for obj in page
        ]
        return 200, {
            "apiVersion": group_version,
            "kind": f"{spec.kind}List",
            "metadata": meta,
            "items": out_items,
        }

    def get_configmap(self, path: str) -> tuple[int, dict[str, Any]]:
        """GET one ConfigMap: ``/api/v1/namespaces/<ns>/configmaps/<name>``."""
        self.gets.append(path)
        parts = path.strip("/").split("/")
        ns, name = parts[3], parts[5]
        if "ConfigMap" in self.faults.forbidden:
            return 403, _status(403, "Forbidden", f'configmaps "{name}" is forbidden')
        for o in self.objects.get("ConfigMap", []):
            if (o["metadata"].get("namespace"), o["metadata"].get("name")) == (ns, name):
                return 200, {k: v for k, v in o.items() if k not in ("apiVersion", "kind")}
        return 404, _status(404, "NotFound", f'configmaps "{name}" not found')

    def get_namespace(self, name: str) -> tuple[int, dict[str, Any]]:
        if "Namespace" in self.faults.forbidden or "Namespace" not in self.served_kinds:
            return 403, _status(403, "Forbidden", f'namespaces "{name}" is forbidden')
        for obj in self.objects.get("Namespace", []):
            if obj["metadata"]["name"] == name:
                return 200, copy.deepcopy(obj)
        return 404, _status(404, "NotFound", f'namespaces "{name}" not found')

    def ssar(self, body: dict[str, Any]) -> dict[str, Any]:
        attrs = body.get("spec", {}).get("resourceAttributes", {})
        allowed = attrs.get("resource") not in self.faults.ssar_denied
        body = dict(body)
        body["status"] = {"allowed": allowed, **({} if allowed else {"reason": "no RBAC rule"})}
        return body

    # -- counters ------------------------------------------------------------------
    def methods(self) -> set[str]:
        """HTTP methods seen so far."""
        with self._lock:
            return {m for m, _ in self.log}

    def list_requests(self) -> list[str]:
        """Paths (with query) of requests that were lists, not discovery."""
        with self._lock:
            logged = list(self.log)
        return [p for _, p in logged if self.route(urlsplit(p).path) is not None]


def _labels_match(obj: dict[str, Any], selector: str | None) -> bool:
    """A ``key=value`` or ``key`` label selector, as the API server applies it to a list."""
    if not selector:
        return True
    key, eq, value = selector.partition("=")
    labels = obj.get("metadata", {}).get("labels") or {}
    if not isinstance(labels, dict):
        return True  # a test's damaged object: served, for the source to name
    return labels.get(key) == value if eq else key in labels


def _status(code: int, reason: str, message: str) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }


def _resource_list(
    group_version: str, specs: list[KindSpec], extra: tuple[tuple[str, str, bool], ...]
) -> dict[str, Any]:
    verbs = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
    rows = [(s.plural, s.kind, s.namespaced) for s in specs] + list(extra)
    resources = [
        {
            "name": plural,
            "singularName": kind.lower(),
            "namespaced": namespaced,
            "kind": kind,
            "verbs": verbs,
        }
        for plural, kind, namespaced in rows
    ]
    resources += [
        {
            "name": f"{plural}/status",
            "singularName": "",
            "namespaced": namespaced,
            "kind": kind,
            "verbs": ["get", "patch", "update"],
        }
        for plural, kind, namespaced in rows
    ]
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": resources,
    }


def _authz_group() -> dict[str, Any]:
    entry = {"groupVersion": "authorization.k8s.io/v1", "version": "v1"}
    return {"name": "authorization.k8s.io", "versions": [entry], "preferredVersion": entry}


def _encode(token: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(token).encode()).decode()


def _decode(token: str) -> dict[str, Any]:
    return json.loads(base64.urlsafe_b64decode(token.encode()))  # type: ignore[no-any-return]


class _Handler(BaseHTTPRequestHandler):
    api: FakeKubeAPI  # set on the per-server subclass

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        return

    def _send(self, code: int, body: dict[str, Any]) -> None:
        try:  # as fast as a real server's encoder, for the bench
            data = orjson.dumps(body)
        except TypeError:  # what orjson refuses (non-string keys, huge ints): the stdlib
            data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _record(self) -> None:
        with self.api._lock:
            self.api.log.append((self.command, self.path))

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        self._record()
        url = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        path = url.path.rstrip("/") or "/"
        found = self.api.discovery(path)
        route = self.api.route(path)
        if found is not None:
            self._send(200, found)
        elif route is not None:
            limit = self.api.faults.vanish_after
            if limit is not None and self.api.lists_answered >= limit:
                self.api.vanish()  # the connection closes without an answer
                self.close_connection = True
                return
            self.api.lists_answered += 1
            self._send(*self.api.list_response(path, route, query))
        elif path.startswith("/api/v1/namespaces/") and "/configmaps/" in path:
            self._send(*self.api.get_configmap(path))
        elif path.startswith("/api/v1/namespaces/") and path.count("/") == 4:
            self._send(*self.api.get_namespace(path.rsplit("/", 1)[1]))
        else:
            self._send(
                404, _status(404, "NotFound", "the server could not find the requested resource")
            )

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        self._record()
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length) or b"{}")
        if urlsplit(self.path).path == "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews":
            self._send(201, self.api.ssar(body))
        else:
            self._send(405, _status(405, "MethodNotAllowed", "read-only test server"))

    def _refuse(self) -> None:
        self._record()
        self._send(405, _status(405, "MethodNotAllowed", "read-only test server"))

    do_PUT = do_PATCH = do_DELETE = _refuse  # noqa: N815


@contextmanager
def running(api: FakeKubeAPI) -> Iterator[str]:
    """Serve ``api`` on 127.0.0.1 (port 0) in a thread; yield its ``http://`` URL."""
    handler = type("Handler", (_Handler,), {"api": api})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    gone = threading.Event()

    def vanish() -> None:  # stop accepting, then close the listening socket: refused from now
        if not gone.is_set():
            gone.set()
            threading.Thread(target=lambda: (server.shutdown(), server.server_close())).start()
            deadline = time.monotonic() + 5
            while server.socket.fileno() != -1 and time.monotonic() < deadline:
                time.sleep(0.01)

    api.vanish = vanish
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
