"""What every source returns: plain object dicts per kind plus what could not be read."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

from auditor.models import CollectionProblem

__all__ = ["ClusterData", "KindState", "Source", "SourceInfo"]


class KindState(StrEnum):
    """How much the source knows about one kind.

    ``COMPLETE``: the full list was read (it may be empty).
    ``NOT_INSTALLED``: the API group is not served, so no such object exists
    (a known empty list: "no Velero installed" is a fact, not a gap).
    ``UNAVAILABLE``: forbidden, failed or never exported; nothing can be
    concluded from its absence and the checks that need it give ERROR.
    ``PARTIAL``: some objects were read but others were broken or lost.
    """

    COMPLETE = "complete"
    NOT_INSTALLED = "not_installed"
    UNAVAILABLE = "unavailable"
    PARTIAL = "partial"


@dataclass(frozen=True)
class SourceInfo:
    """Where the data came from: ``type`` is ``directory`` or ``cluster``."""

    type: str
    location: str
    cluster_name: str | None = None


@dataclass
class ClusterData:
    """A snapshot of the cluster objects the audit reads.

    ``objects`` maps a kind name from :data:`auditor.kinds.KINDS` to plain
    dicts as the API returns them. ``states`` says for each kind whether its
    list is complete; a kind missing from ``states`` counts as UNAVAILABLE.
    ``skipped`` counts objects of kinds the auditor does not read, keyed by
    ``apiVersion/kind``. Both sources return exactly this shape.
    """

    info: SourceInfo
    objects: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    states: dict[str, KindState] = field(default_factory=dict)
    problems: list[CollectionProblem] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)
    #: (kind, namespace or "", name) -> where the object was read (file and item, or API path)
    origins: dict[tuple[str, str, str], str] = field(default_factory=dict)

    def of(self, kind: str) -> list[dict[str, Any]]:
        """Return the objects of ``kind`` (empty list when none were read)."""
        return self.objects.get(kind, [])

    def state(self, kind: str) -> KindState:
        """Return how complete the list of ``kind`` is."""
        return self.states.get(kind, KindState.UNAVAILABLE)

    def known(self, kind: str) -> bool:
        """True when the absence of an object of ``kind`` can be trusted."""
        return self.state(kind) in (KindState.COMPLETE, KindState.NOT_INSTALLED)

    def unknown_kinds(self, kinds: Iterable[str]) -> list[str]:
        """Return those of ``kinds`` whose list cannot be trusted, sorted."""
        return sorted(k for k in kinds if not self.known(k))


class Source(Protocol):
    """Anything that can produce :class:`ClusterData` (directory export, live cluster)."""

    def collect(self) -> ClusterData:
        """Read the cluster; never raises for bad objects, records them as problems."""
        ...
