"""Read a live cluster through the Kubernetes API, read-only, into :class:`ClusterData`.

Returns exactly what :class:`~auditor.sources.directory.DirectorySource` returns
for the same objects: the objects go through the same identity/shape rules and
redaction (:func:`~auditor.sources.directory.ingest_objects`), and are sorted the
same way. List items get the ``apiVersion``/``kind`` the API leaves out of them,
and lose ``metadata.managedFields`` (as ``kubectl get -o yaml`` prints them).

Requests: ``GET /version`` and ``GET /apis`` (dynamic client discovery), one GET
per group version read, then per kind (and per namespace when namespaces are
given) one GET per page of ``page_size`` items. Nothing per VM, nothing but GET.
A continue token that expired (410) restarts that list. 429, 5xx and timeouts
are retried after ``retry_delays``; a list that still fails, or a 403/404, makes
the kind UNAVAILABLE (PARTIAL when other namespaces were read) with a
:class:`~auditor.models.CollectionProblem` naming kind, group/version and status.

A connection that is refused or reset (the server is gone, not slow) is retried
after ``retry_delays`` once, for the request that met it, and then ends the
collection with :class:`~auditor.sources.kubeclient.ClusterLostError`: the total
retry time is bounded by ``sum(retry_delays)``, not paid again for every kind left.

With ``namespaces`` (``-n``), the Velero/OADP kinds are still read where they
live: in ``velero_namespaces`` when given, else in the namespaces that hold a
DataProtectionApplication or a BackupStorageLocation (one cluster-wide list
each). When that cannot be found, those kinds are UNAVAILABLE with a problem
saying so: their checks give ERROR, never a false NOT_READY from "no backup".

Raises :class:`~auditor.sources.kubeclient.ClusterAccessError` when discovery
itself cannot be read (nothing at all could be audited), and its subclass
:class:`~auditor.sources.kubeclient.ClusterLostError` when the server is lost later.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import quote

import urllib3
from kubernetes.client.exceptions import ApiException
from kubernetes.dynamic import DynamicClient

from auditor.jsonfast import loads
from auditor.kinds import BY_KIND, INFRASTRUCTURE, KINDS, KindSpec, is_resource_policy
from auditor.kubevalues import dig
from auditor.models import CollectionProblem
from auditor.redact import shown_url
from auditor.sources.base import ClusterData, KindState, SourceInfo
from auditor.sources.directory import ingest_objects
from auditor.sources.discovery import Discovery, RequestFailed, Resolved, groups_from_dynamic
from auditor.sources.identity import IDENTITY_NAMESPACE, identity_from_infrastructure
from auditor.sources.kubeclient import ClusterAccessError, ClusterLostError
from auditor.sources.progress import CollectProgress, NullProgress
from auditor.yamlstrict import paused_gc

__all__ = ["ClusterSource", "CollectOptions"]

_RETRYABLE = frozenset({429, 500, 502, 503, 504})
#: Kinds that live in Velero's (OADP's) namespace, not in the VMs' namespaces.
_VELERO_GROUPS = frozenset({"velero.io", "oadp.openshift.io"})
#: Namespaced kinds read in every namespace even with ``-n``: the KubeVirt CR (the cluster's
#: one KubeVirt install, in its own namespace) says how every VM is run and restored; read
#: only in the VMs' namespaces it would look absent (RR-FW-002 passed on no evidence).
_READ_EVERYWHERE = frozenset({"KubeVirt"})
#: Kinds whose namespaces locate Velero, in the order they are tried.
_VELERO_MARKERS = ("DataProtectionApplication", "BackupStorageLocation")
#: The server is gone (nothing listens, or it dropped the connection): not a slow list.
_GONE = (
    urllib3.exceptions.NewConnectionError,
    urllib3.exceptions.ProtocolError,
    ConnectionError,
)


def _server_gone(exc: BaseException) -> bool:
    if isinstance(exc, urllib3.exceptions.MaxRetryError) and exc.reason is not None:
        return _server_gone(exc.reason)
    return isinstance(exc, _GONE)


@dataclass(frozen=True)
class CollectOptions:
    """How to read the cluster.

    ``namespaces``: read namespaced kinds only there (empty: all namespaces).
    ``velero_namespaces``: with ``namespaces``, where the Velero/OADP kinds are
    read (empty: found from DataProtectionApplications/BackupStorageLocations).
    ``page_size``: ``limit`` per list request. ``request_timeout``: seconds to
    wait for one response. ``retry_delays``: seconds to wait before each retry
    of a 429/5xx/timeout (so ``len + 1`` attempts). ``max_restarts``: how often
    one list may restart after its continue token expired (410).
    """

    namespaces: tuple[str, ...] = ()
    velero_namespaces: tuple[str, ...] = ()
    page_size: int = 500
    request_timeout: float = 30.0
    retry_delays: tuple[float, ...] = (0.5, 2.0)
    max_restarts: int = 3


class ClusterSource:
    """A :class:`~auditor.sources.base.Source` over the Kubernetes API.

    Args:
        api_client: a ``kubernetes.client.ApiClient`` (see
            :func:`auditor.sources.kubeclient.api_client`).
        cluster_name: the cluster's name for the report, when known.
        options: namespaces, paging, timeouts and retries.
        progress: told about each kind and page (default: silent).
        kinds: the kinds to read (default: all of :data:`auditor.kinds.KINDS`).
        context_name: the kubeconfig context in use: the name when neither
            ``cluster_name`` nor OpenShift's Infrastructure gives one.
        slim: keep the slim record of kinds that declare one (:attr:`auditor.kinds.KindSpec.keep`),
            as audits do; False keeps every object whole (``auditor collect`` exports them).
    """

    def __init__(
        self,
        api_client: Any,
        *,
        cluster_name: str | None = None,
        options: CollectOptions | None = None,
        progress: CollectProgress | None = None,
        kinds: Sequence[KindSpec] = KINDS,
        sleep: Callable[[float], None] = time.sleep,
        context_name: str | None = None,
        slim: bool = True,
    ) -> None:
        self.api_client = api_client
        self.slim = slim
        self.cluster_name = cluster_name
        self.context_name = context_name
        self.options = options or CollectOptions()
        self.progress = progress or NullProgress()
        self.kinds = tuple(kinds)
        self._sleep = sleep
        self._dyn: Any = None
        self._kinds_read = 0

    @property
    def host(self) -> str:
        """The API server URL as reports and messages may show it: no ``user:password@``
        and no query (a kubeconfig server URL may carry credentials; red team)."""
        return shown_url(str(self.api_client.configuration.host))

    def collect(self) -> ClusterData:
        """Read every kind; see the module docstring for requests and errors."""
        data = ClusterData(info=SourceInfo(type="cluster", location=self.host))
        self._dyn = None
        self._kinds_read = 0
        self._velero_ns: tuple[str, ...] | None = None
        self._velero_why = ""
        self._read_in: dict[str, frozenset[str]] = {}
        # paused_gc: the pages of a 10,000-VM cluster are millions of dicts (see paused_gc)
        with tempfile.TemporaryDirectory(prefix="auditor-discovery-") as tmp, paused_gc():
            self._dyn = self._attempt(
                "/apis",
                lambda: DynamicClient(self.api_client, cache_file=str(Path(tmp) / "d.json")),  # type: ignore[no-untyped-call]
            )
            discovery = Discovery(groups_from_dynamic(self._dyn.resources), self._get_json)
            pairs: list[tuple[str, Any]] = []
            states: dict[str, KindState] = {}
            if self.options.namespaces:
                self._velero_ns = self._find_velero(discovery)
            self.progress.start(len(self.kinds))
            for spec in self.kinds:
                resolved = discovery.resolve(spec)
                if resolved.state is KindState.COMPLETE:
                    read, state, problems = self._read_kind(resolved)
                    pairs.extend(read)
                else:
                    state, problems = resolved.state, _discovery_problems(resolved)
                states[spec.kind] = state
                data.problems.extend(problems)
                self._kinds_read += 1
                self.progress.kind_done(spec.kind, state)
            self.progress.finish()
            if states.get("ConfigMap") is KindState.COMPLETE:
                pairs.extend(self._resource_policies(pairs))
            if self.options.namespaces:
                pairs.extend(self._drill_targets(discovery, pairs, data.problems))
                pairs = self._check_velero_namespace(pairs, states, data.problems)
            data.info = self._identity(discovery)
            if self.options.namespaces and IDENTITY_NAMESPACE not in self.options.namespaces:
                data.info = replace(data.info, kube_system_uid=self._kube_system_uid())
            data.read_in = dict(self._read_in)
            # The pages were parsed for this collection alone: redacted in place, no copy.
            ingest_objects(data, pairs, owned=True, slim=self.slim)
        for kind, state in states.items():
            if data.states.get(kind) is not KindState.PARTIAL or state is KindState.UNAVAILABLE:
                data.states[kind] = state
        return data

    def _kube_system_uid(self) -> str | None:
        """With ``-n``, GET the kube-system Namespace for the cluster's identity alone (one
        request; not an audited object, so no check reads it). Forbidden or absent: None, the
        identity is unknown (:func:`auditor.sources.identity.cluster_uid`)."""
        try:
            obj = self._get_json(f"/api/v1/namespaces/{IDENTITY_NAMESPACE}", [])
        except RequestFailed:
            return None
        meta = obj.get("metadata")
        uid = meta.get("uid") if isinstance(meta, dict) else None
        return uid.strip() if isinstance(uid, str) and uid.strip() else None

    def _identity(self, discovery: Discovery) -> SourceInfo:
        """The cluster name: given, else OpenShift's Infrastructure ``cluster``, else the
        context (:mod:`auditor.sources.identity`). Lists ``infrastructures`` (one request)
        only when no name was given and the group is served; a failure leaves it unread."""
        if self.cluster_name:
            return SourceInfo("cluster", self.host, self.cluster_name, "config")
        resolved = discovery.resolve(INFRASTRUCTURE)
        if resolved.state is KindState.COMPLETE:
            try:
                items = self._list(f"{resolved.prefix}/{INFRASTRUCTURE.plural}", "Infrastructure")
            except RequestFailed:
                items = []
            found = identity_from_infrastructure(
                {"items": [obj for _, obj in _with_identity(items, resolved, resolved.prefix)]}
            )
            if found is not None:
                return SourceInfo("cluster", self.host, found.name, found.source)
        if self.context_name:
            return SourceInfo("cluster", self.host, self.context_name, "kubeconfig-context")
        return SourceInfo("cluster", self.host, None, "unknown")

    # -- one kind -----------------------------------------------------------------
    def _read_kind(
        self, resolved: Resolved
    ) -> tuple[list[tuple[str, Any]], KindState, list[CollectionProblem]]:
        spec = resolved.spec
        namespaces = self.options.namespaces
        # Velero's change-storage-class ConfigMap lives in Velero's namespace too
        if namespaces and (spec.group in _VELERO_GROUPS or spec.kind == "ConfigMap"):
            if self._velero_ns is None:
                return [], KindState.UNAVAILABLE, [self._velero_unknown(resolved)]
            namespaces = self._velero_ns
        if spec.kind in _READ_EVERYWHERE:
            namespaces = ()
        scopes: tuple[str | None, ...] = namespaces if namespaces and spec.namespaced else (None,)
        if namespaces and spec.namespaced and namespaces == self.options.namespaces:
            # objects of this kind in other namespaces are unseen, not absent
            self._read_in[spec.kind] = frozenset(namespaces)
        pairs: list[tuple[str, Any]] = []
        problems: list[CollectionProblem] = []
        if spec.kind == "Namespace" and namespaces:
            return self._get_namespaces(resolved, namespaces)
        for ns in scopes:
            base = f"{resolved.prefix}/namespaces/{ns}" if ns else resolved.prefix
            path = f"{base}/{spec.plural}"
            try:
                items = self._list(path, spec.kind)
            except RequestFailed as exc:
                problems.append(_list_problem(resolved, exc, ns))
                continue
            pairs.extend(_with_identity(items, resolved, base))
        if not problems:
            return pairs, KindState.COMPLETE, problems
        read_some = len(problems) < len(scopes)
        return pairs, KindState.PARTIAL if read_some else KindState.UNAVAILABLE, problems

    def _check_velero_namespace(
        self,
        pairs: list[tuple[str, Any]],
        states: dict[str, KindState],
        problems: list[CollectionProblem],
    ) -> list[tuple[str, Any]]:
        """With ``-n``, Velero's kinds were read in :attr:`_velero_ns` only: when both marker
        kinds (DataProtectionApplication, BackupStorageLocation) were read there and neither
        is, that is not where Velero runs (a wrong ``--velero-namespace``), so its Backups
        are unknown, not absent: Velero's kinds become unavailable, named (red team: a VM
        was NOT_READY with nothing named)."""
        if not self._velero_ns or any(
            states.get(k) is not KindState.COMPLETE for k in _VELERO_MARKERS
        ):
            return pairs
        if any(isinstance(o, dict) and o.get("kind") in _VELERO_MARKERS for _, o in pairs):
            return pairs
        velero = {
            spec.kind
            for spec in self.kinds
            if spec.group in _VELERO_GROUPS and states.get(spec.kind) is KindState.COMPLETE
        }
        for kind in velero:
            states[kind] = KindState.UNAVAILABLE
        problems.append(
            CollectionProblem(
                reason=f"no DataProtectionApplication or BackupStorageLocation in namespace(s) "
                f"{', '.join(self._velero_ns)}: Velero does not run there (check "
                "--velero-namespace); its Backups are unknown and the checks that need them "
                "give ERROR",
                kinds=tuple(sorted(velero)),
            )
        )
        return [(p, o) for p, o in pairs if not (isinstance(o, dict) and o.get("kind") in velero)]

    def _resource_policies(self, pairs: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
        """GET each ConfigMap a Backup's ``spec.resourcePolicy`` names (kind ``configmap`` in
        any case, in the Backup's namespace: velero internal/resourcepolicies
        ``GetResourcePoliciesFromBackup``), kept only when it holds a resource policy
        (:func:`auditor.kinds.is_resource_policy`), with its ``managedFields`` times (when
        it was last written says whether a Backup ran with it). One the GET does not return
        stays unread: its Backups' volume policies are unknown, named per PVC
        (:mod:`auditor.inventory.volpolicy`)."""
        wanted: set[tuple[str, str]] = set()
        have: set[tuple[str, str]] = set()
        for _, obj in pairs:
            if not isinstance(obj, dict):
                continue
            ns, name = dig(obj, "metadata", "namespace"), dig(obj, "metadata", "name")
            if obj.get("kind") == "ConfigMap":
                have.add((str(ns), str(name)))
                continue
            ref = dig(obj, "spec", "resourcePolicy") if obj.get("kind") == "Backup" else None
            kind = ref.get("kind") if isinstance(ref, dict) else None
            target = ref.get("name") if isinstance(ref, dict) else None
            if (
                isinstance(kind, str)
                and kind.lower() == "configmap"
                and isinstance(target, str)
                and target
                and isinstance(ns, str)
            ):
                wanted.add((ns, target))
        out: list[tuple[str, Any]] = []
        for ns, name in sorted(wanted - have):
            base = f"/api/v1/namespaces/{ns}/configmaps"
            try:
                obj = self._get_json(f"{base}/{quote(name, safe='')}", [])
            except RequestFailed:
                continue
            cm = {**obj, "apiVersion": "v1", "kind": "ConfigMap"}
            meta = cm.get("metadata")
            if not is_resource_policy(cm) or not isinstance(meta, dict):
                continue
            written = meta.get("managedFields")
            cm["metadata"] = {k: v for k, v in meta.items() if k != "managedFields"}
            if isinstance(written, list):
                cm["metadata"]["managedFields"] = [
                    {"time": m.get("time")} for m in written if isinstance(m, dict)
                ]
            out.append((base, cm))
        return out

    def _drill_targets(
        self, discovery: Discovery, pairs: list[tuple[str, Any]], problems: list[CollectionProblem]
    ) -> list[tuple[str, Any]]:
        """With ``-n``, the PVCs of the namespaces Restores of the read namespaces restored
        into (``spec.namespaceMapping``): a drill's data came back only if no PVC of the same
        name was there before it (see ``auditor.inventory.drills``). Each such namespace read
        is added to ``_read_in``; one that cannot be read stays unread (its drills unknown)."""
        mine = set(self.options.namespaces)
        targets: set[str] = set()
        for _, obj in pairs:
            if not isinstance(obj, dict) or obj.get("kind") != "Restore":
                continue
            spec = obj.get("spec")
            mapping = spec.get("namespaceMapping") if isinstance(spec, dict) else None
            if isinstance(mapping, dict):
                targets.update(
                    t for f, t in mapping.items() if f in mine and isinstance(t, str) and t
                )
        targets -= mine
        spec = next((k for k in self.kinds if k.kind == "PersistentVolumeClaim"), None)
        if not targets or spec is None or "PersistentVolumeClaim" not in self._read_in:
            return []
        resolved = discovery.resolve(spec)
        out: list[tuple[str, Any]] = []
        read = set(self._read_in["PersistentVolumeClaim"])
        for ns in sorted(targets):
            base = f"{resolved.prefix}/namespaces/{ns}"
            try:
                items = self._list(f"{base}/{spec.plural}", spec.kind)
            except RequestFailed as exc:
                problems.append(_list_problem(resolved, exc, ns))
                continue
            out.extend(_with_identity(items, resolved, base))
            read.add(ns)
        self._read_in["PersistentVolumeClaim"] = frozenset(read)
        return out

    def _find_velero(self, discovery: Discovery) -> tuple[str, ...] | None:
        """Velero's namespaces: the option, else where DPAs/BSLs are; None when unknown."""
        if self.options.velero_namespaces:
            return tuple(self.options.velero_namespaces)
        reasons = []
        for kind in _VELERO_MARKERS:
            spec = next((k for k in self.kinds if k.kind == kind), None)
            if spec is None:
                continue
            resolved = discovery.resolve(spec)
            if resolved.state is not KindState.COMPLETE:
                reasons.append(f"{kind} {resolved.state.value}")
                continue
            try:
                items = self._list(f"{resolved.prefix}/{spec.plural}", kind)
            except RequestFailed as exc:
                reasons.append(f"{kind} list gave {exc.status or 'no response'}")
                continue
            found = {
                str(i["metadata"]["namespace"])
                for i in items
                if isinstance(i, dict)
                and isinstance(i.get("metadata"), dict)
                and i["metadata"].get("namespace")
            }
            if found:
                return tuple(sorted(found))
            reasons.append(f"no {kind}")
        self._velero_why = "; ".join(reasons)
        return None

    def _velero_unknown(self, resolved: Resolved) -> CollectionProblem:
        spec = resolved.spec
        return CollectionProblem(
            reason=f"could not read {spec.kind} ({resolved.group_version}): with -n "
            f"{', '.join(self.options.namespaces)} the namespace that holds Velero/OADP is "
            f"unknown ({self._velero_why or 'not found'}); give --velero-namespace; checks "
            f"that need {spec.kind} give ERROR",
            kind=spec.kind,
            kinds=(spec.kind,),
        )

    def _get_namespaces(
        self, resolved: Resolved, names: tuple[str, ...]
    ) -> tuple[list[tuple[str, Any]], KindState, list[CollectionProblem]]:
        """With ``-n``, GET each named Namespace (a namespaced Role may grant that)."""
        pairs: list[tuple[str, Any]] = []
        problems: list[CollectionProblem] = []
        for name in names:
            path = f"{resolved.prefix}/namespaces/{name}"
            try:
                obj = self._get_json(path, [])
            except RequestFailed as exc:
                if exc.status != 404:  # a namespace that does not exist holds nothing
                    problems.append(_list_problem(resolved, exc, name))
                continue
            pairs.extend(_with_identity([obj], resolved, resolved.prefix))
            self.progress.page_read("Namespace", len(pairs))
        if not problems:
            return pairs, KindState.COMPLETE, problems
        state = KindState.PARTIAL if len(problems) < len(names) else KindState.UNAVAILABLE
        return pairs, state, problems

    def _list(self, path: str, kind: str) -> list[Any]:
        """Read every page of one list; restart it when the continue token expired."""
        restarts = 0
        items: list[Any] = []
        token: str | None = None
        while True:
            query = [("limit", str(self.options.page_size))]
            selector = BY_KIND[kind].label_selector if kind in BY_KIND else None
            if selector:
                query.append(("labelSelector", selector))
            if token:
                query.append(("continue", token))
            try:
                page = self._get_json(path, query)
            except RequestFailed as exc:
                if exc.status == 410 and token and restarts < self.options.max_restarts:
                    restarts += 1
                    items, token = [], None
                    continue
                raise
            batch = page.get("items")
            if not isinstance(batch, list):
                # a List answer always carries its items ([] when none): a page without them
                # (a Status body with 200, say) would cut the list short unseen (red team)
                raise RequestFailed(path, 200, "the page has no items list")
            items.extend(batch)
            self.progress.page_read(kind, len(items))
            meta = page.get("metadata")
            previous, token = token, (meta.get("continue") if isinstance(meta, dict) else None)
            if token and token == previous:
                # a server repeating its continue token would page forever (red team)
                raise RequestFailed(path, 200, "the server repeated its continue token")
            if not token:
                return items

    # -- HTTP ---------------------------------------------------------------------
    def _get_json(self, path: str, query: list[tuple[str, str]]) -> dict[str, Any]:
        """GET ``path`` through the dynamic client; return the JSON body (a dict)."""
        timeout = (min(10.0, self.options.request_timeout), self.options.request_timeout)

        def call() -> dict[str, Any]:
            resp = self._dyn.request(
                "get", path, query_params=list(query), serialize=False, _request_timeout=timeout
            )
            body = loads(resp.data.decode("utf-8"))  # orjson, as json.loads reads it
            if not isinstance(body, dict):
                raise RequestFailed(path, 200, f"body is a {type(body).__name__}, not an object")
            return body

        result: dict[str, Any] = self._attempt(path, call)
        return result

    def _lost(self, path: str, failure: RequestFailed, delays: list[float]) -> None:
        """The connection was refused/reset: wait out the retry delays once, then give up.

        Raises:
            ClusterLostError: the server still does not answer ``GET /version``.
        """
        for delay in delays:
            self._sleep(delay)
            try:
                self._dyn.request("get", "/version", serialize=False, _request_timeout=(5.0, 5.0))
                return  # it answers again: retry the request as usual
            except ApiException:
                return  # an HTTP answer of any status: the server is there
            except (urllib3.exceptions.HTTPError, OSError):
                continue
        raise ClusterLostError(
            f"lost the API server {self.host} during collection after {self._kinds_read} of "
            f"{len(self.kinds)} kinds: GET {path}: {failure.detail}"
        ) from failure

    def _attempt(self, path: str, call: Callable[[], Any]) -> Any:
        """Run ``call`` with retries on 429/5xx/timeouts; raise RequestFailed at the end.

        During discovery (no dynamic client yet) the failure is a ClusterAccessError.
        """
        delays = list(self.options.retry_delays)
        while True:
            try:
                return call()
            except ApiException as exc:
                failure = RequestFailed(path, exc.status or None, _message(exc))
                retry = exc.status in _RETRYABLE or not exc.status
            except (urllib3.exceptions.HTTPError, OSError) as exc:
                failure = RequestFailed(path, None, f"{type(exc).__name__}: {exc}")
                retry = True
                if self._dyn is not None and _server_gone(exc):
                    self._lost(path, failure, delays)
            except ValueError as exc:  # undecodable body or discovery refusing the host
                failure, retry = RequestFailed(path, None, f"unreadable response: {exc}"), False
            if retry and delays:
                self._sleep(delays.pop(0))
                continue
            if self._dyn is None:
                raise ClusterAccessError(
                    f"cannot read API discovery from {self.host}: {failure}"
                ) from failure
            raise failure


def _with_identity(items: list[Any], resolved: Resolved, base: str) -> list[tuple[str, Any]]:
    """Give list items their apiVersion/kind, drop managedFields; pair each with its API path."""
    out: list[tuple[str, Any]] = []
    for item in items:
        if not isinstance(item, dict):
            out.append((base, item))
            continue
        obj = {"apiVersion": resolved.group_version, "kind": resolved.spec.kind, **item}
        meta = obj.get("metadata")
        name = "?"
        if isinstance(meta, dict):
            obj["metadata"] = {k: v for k, v in meta.items() if k != "managedFields"}
            name = str(meta.get("name"))
            ns = meta.get("namespace")
            if resolved.spec.namespaced and isinstance(ns, str) and ns:
                path = f"{resolved.prefix}/namespaces/{ns}/{resolved.spec.plural}/{name}"
                out.append((path, obj))
                continue
        out.append((f"{resolved.prefix}/{resolved.spec.plural}/{name}", obj))
    return out


def _list_problem(resolved: Resolved, exc: RequestFailed, ns: str | None) -> CollectionProblem:
    spec = resolved.spec
    where = f" in namespace {ns}" if ns else ""
    what = f"HTTP {exc.status}" if exc.status is not None else "no response"
    return CollectionProblem(
        reason=f"could not read {spec.kind} ({resolved.group_version}){where}: GET {exc.path} "
        f"gave {what}: {exc.detail}; checks that need {spec.kind} give ERROR",
        kind=spec.kind,
        namespace=ns,
        kinds=(spec.kind,),
    )


def _discovery_problems(resolved: Resolved) -> list[CollectionProblem]:
    if resolved.state is not KindState.UNAVAILABLE:
        return []  # NOT_INSTALLED is a fact, not a problem
    return [
        CollectionProblem(
            reason=f"could not read {resolved.spec.kind} ({resolved.group_version}): "
            f"{resolved.reason}; checks that need {resolved.spec.kind} give ERROR",
            kind=resolved.spec.kind,
            kinds=(resolved.spec.kind,),
        )
    ]


def _message(exc: ApiException) -> str:
    """The server's Status message (or reason), one line, at most 300 characters."""
    text = str(exc.reason or "")
    body = exc.body
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    if isinstance(body, str) and body:
        try:
            doc = json.loads(body)
            if isinstance(doc, dict) and doc.get("message"):
                text = f"{doc.get('reason') or text}: {doc['message']}"
        except ValueError:
            text = f"{text}: {body}"
    return " ".join(text.split())[:300]
