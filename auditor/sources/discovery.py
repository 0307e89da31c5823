"""Decide, from API discovery, where each kind of :data:`auditor.kinds.KINDS` is served.

For a kind in an API group: the group missing from ``/apis`` means the
component is not installed (NOT_INSTALLED, a known-empty fact). Otherwise the
group's preferred version is used when the auditor knows it, else the first
known version the group serves (``snapshot.kubevirt.io`` ``v1beta1`` before
``v1alpha1``). ``/apis/<group>/<version>`` must list the kind's plural; a kind
the group does not serve at any version is NOT_INSTALLED too (Velero before
1.12 has no DataUpload). A kind served only at versions the auditor does not
know, or whose discovery fails, is UNAVAILABLE with a reason.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from auditor.kinds import KindSpec
from auditor.sources.base import KindState

__all__ = ["Resolved", "Discovery", "RequestFailed", "groups_from_dynamic"]


class RequestFailed(Exception):
    """One GET failed for good (after retries).

    ``status`` is the HTTP status (None for a timeout or connection error);
    ``detail`` the server's message or the transport error.
    """

    def __init__(self, path: str, status: int | None, detail: str) -> None:
        self.path = path
        self.status = status
        self.detail = detail
        what = f"HTTP {status}" if status is not None else "no response"
        super().__init__(f"GET {path}: {what}: {detail}")


#: GET a path (with query pairs) and return the decoded JSON body; raises RequestFailed.
GetJSON = Callable[[str, list[tuple[str, str]]], dict[str, Any]]


@dataclass(frozen=True)
class Resolved:
    """Where one kind is served.

    ``state`` is COMPLETE when the kind can be listed at ``prefix`` (``/api/v1``
    or ``/apis/<group>/<version>``), NOT_INSTALLED or UNAVAILABLE otherwise,
    with ``reason`` and ``status`` (HTTP status, if any) saying why.
    """

    spec: KindSpec
    state: KindState
    version: str | None = None
    reason: str | None = None
    status: int | None = None

    @property
    def group_version(self) -> str:
        """``v1`` for the core group, ``<group>/<version>`` otherwise."""
        version = self.version or self.spec.versions[0]
        return f"{self.spec.group}/{version}" if self.spec.group else version

    @property
    def prefix(self) -> str:
        """URL prefix for list paths: ``/api/v1`` or ``/apis/<group>/<version>``."""
        return (
            f"/api/{self.group_version}" if not self.spec.group else f"/apis/{self.group_version}"
        )


class Discovery:
    """Resolve kinds against the server's discovery documents.

    Args:
        groups: the ``/apis`` APIGroupList ``groups`` as read by the dynamic client:
            group name -> (served versions, preferred version).
        get_json: how to GET a discovery document (retries are the caller's).
    """

    def __init__(self, groups: dict[str, tuple[list[str], str | None]], get_json: GetJSON) -> None:
        self.groups = groups
        self.get_json = get_json
        self._resources: dict[str, dict[str, Any] | RequestFailed] = {}

    def resolve(self, spec: KindSpec) -> Resolved:
        """Return where ``spec`` is served (never raises for HTTP errors)."""
        if not spec.group:
            return self._in_version(spec, "v1") or Resolved(
                spec, KindState.NOT_INSTALLED, reason="not served by /api/v1"
            )
        if spec.group not in self.groups:
            return Resolved(
                spec,
                KindState.NOT_INSTALLED,
                reason=f"API group {spec.group} is not served (not installed)",
            )
        served, preferred = self.groups[spec.group]
        candidates = [v for v in spec.versions if v in served]
        if preferred in candidates:
            candidates.remove(preferred)
            candidates.insert(0, preferred)
        for version in candidates:
            found = self._in_version(spec, version)
            if found is not None:
                return found
        for version in served:
            if version in spec.versions:
                continue
            found = self._in_version(spec, version)
            if found is not None and found.state is KindState.COMPLETE:
                return Resolved(
                    spec,
                    KindState.UNAVAILABLE,
                    version=version,
                    reason=f"{spec.kind} is served only at {spec.group}/{version}, a version "
                    f"this auditor does not read (it knows {', '.join(spec.versions)})",
                )
        return Resolved(
            spec,
            KindState.NOT_INSTALLED,
            reason=f"API group {spec.group} does not serve {spec.plural}",
        )

    def _in_version(self, spec: KindSpec, version: str) -> Resolved | None:
        """COMPLETE if the group version lists the plural, UNAVAILABLE if unreadable, else None."""
        gv = f"{spec.group}/{version}" if spec.group else version
        path = f"/apis/{gv}" if spec.group else f"/api/{gv}"
        doc = self._resources.get(path)
        if doc is None:
            try:
                doc = self.get_json(path, [])
            except RequestFailed as exc:
                doc = exc
            self._resources[path] = doc
        if isinstance(doc, RequestFailed):
            return Resolved(
                spec,
                KindState.UNAVAILABLE,
                version=version,
                reason=f"discovery {doc}",
                status=doc.status,
            )
        for res in doc.get("resources") or []:
            if isinstance(res, dict) and res.get("name") == spec.plural:
                return Resolved(spec, KindState.COMPLETE, version=version)
        return None


def groups_from_dynamic(resources: Any) -> dict[str, tuple[list[str], str | None]]:
    """Read group -> (served versions, preferred version) from a dynamic client's discoverer.

    ``resources`` is ``DynamicClient.resources``; its ``/apis`` document was read
    when the client was made, so this costs no request.
    """
    out: dict[str, tuple[list[str], str | None]] = {}
    for name, versions in resources.parse_api_groups(request_resources=False)["apis"].items():
        if not name:
            continue
        preferred = next((v for v, rg in versions.items() if rg.preferred), None)
        out[name] = (list(versions), preferred)
    return out
