"""One cluster name, several clusters: keep their archived runs apart by cluster identity.

The archive is keyed by cluster *name* (``<cluster>/YYYY/MM/DD/<run-id>/``), and two clusters
can share one: both exported without a name (``unknown-cluster``), or two ``prod`` clusters in
different regions. Their runs then sit in one folder, and a period report, a fleet roll-up, a
history or a trend computed over that folder mixes two clusters' RPO attainment, breaches and
readiness. Each run's ``manifest.json`` (version 1.1) records ``cluster_uid``, the
``kube-system`` Namespace's ``metadata.uid`` (:func:`auditor.sources.identity.cluster_uid`).

The rule (:func:`select_identity`), for everything that reads several runs of one name:

- runs carrying two or more different known identities are never mixed:
  :class:`IdentityConflict` names each identity (its runs, its newest run) unless the caller
  chose one (``--cluster-uid``); then only that identity's runs count and the others (and runs
  of unknown identity, which cannot be shown to be that cluster) are named as left out;
- otherwise every run counts, and runs of unknown identity beside a known one are named:
  the runs archived before identities were recorded (manifest 1.0, no ``cluster_uid``) and
  those whose export had no ``kube-system`` Namespace (``cluster_uid: null``) are counted on
  the name alone, never taken to be the known cluster.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from auditor.publish.errors import PublishError

__all__ = ["IdentityConflict", "select_identity", "identity_text", "NO_IDENTITY"]

T = TypeVar("T")

#: How a run of unknown identity is described.
NO_IDENTITY = (
    "no cluster identity recorded (archived before identities were recorded, or the export "
    "had no kube-system Namespace)"
)


class IdentityConflict(PublishError):
    """Runs of two or more cluster identities share one cluster name (the folder mixes them)."""


def identity_text(uid: str | None) -> str:
    """``kube-system uid <uid>`` or ``unknown identity``."""
    return f"kube-system uid {uid}" if uid else "unknown identity"


def select_identity(
    cluster: str,
    runs: Sequence[T],
    uid_of: Callable[[T], str | None],
    id_of: Callable[[T], str],
    *,
    wanted: str | None = None,
    problems: list[str],
) -> list[T]:
    """The runs of ``cluster`` that may be read together (in the order given).

    ``uid_of``: a run's recorded identity (None: unknown); ``id_of``: its run id (for
    messages); ``wanted``: the identity chosen by the caller (``--cluster-uid``), or None.
    What is left out, and runs of unknown identity counted beside a known one, are named in
    ``problems`` (one line each kind).

    Raises:
        IdentityConflict: without ``wanted``, the runs carry two or more known identities.
    """
    groups: dict[str | None, list[T]] = {}
    for run in runs:
        groups.setdefault(uid_of(run), []).append(run)
    known = sorted(uid for uid in groups if uid is not None)
    unknown = groups.get(None, [])
    if wanted is not None:
        kept = groups.get(wanted, [])
        left = [run for uid, group in groups.items() if uid != wanted for run in group]
        if left:
            problems.append(
                f"cluster {cluster}: {len(left)} run(s) left out, not of cluster identity "
                f"{wanted} (" + ", ".join(_count(uid, groups[uid], id_of) for uid in
                                         [*known, None] if uid != wanted and uid in groups) + ")"
            )  # fmt: skip
        return kept
    if len(known) > 1:
        raise IdentityConflict(
            f"cluster {cluster}: its runs are of {len(known)} different clusters that share "
            f"this name: " + "; ".join(_count(uid, groups[uid], id_of) for uid in known)
            + (f"; and {len(unknown)} run(s) with {NO_IDENTITY}" if unknown else "")
            + ". Their figures are not mixed: give each cluster its own name (cluster_name, "
            "--cluster-name), and choose one with --cluster-uid to read this folder"
        )  # fmt: skip
    if known and unknown:
        problems.append(
            f"cluster {cluster}: {len(unknown)} run(s) with {NO_IDENTITY} (first "
            f"{id_of(unknown[0])}), counted on the name alone beside the runs of "
            f"{identity_text(known[0])}"
        )
    return list(runs)


def _count(uid: str | None, group: Sequence[T], id_of: Callable[[T], str]) -> str:
    newest = max(id_of(run) for run in group)
    return f"{identity_text(uid)}: {len(group)} run(s), newest {newest}"
