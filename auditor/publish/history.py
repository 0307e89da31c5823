"""Read the archive back: published runs of a cluster (``auditor history``).

A run is listed only when its ``manifest.json`` is in the store, which the
publisher writes after every artifact verified. Keys are
``<cluster>/YYYY/MM/DD/<run-id>/manifest.json``; run ids start with the audit
time, so key order is chronological and only the manifests needed are read.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import date
from typing import Any

from auditor.publish.errors import PublishError, StoreUnreachable, VerificationError
from auditor.publish.identity import select_identity
from auditor.publish.jsondoc import artifact_list, load_object, text_field
from auditor.publish.manifest import MANIFEST_NAME, cluster_segment, sha256_hex
from auditor.publish.store import ObjectStore

__all__ = [
    "RunEntry",
    "RunKey",
    "run_keys",
    "load_entry",
    "list_runs",
    "iter_entries_newest_first",
    "read_report",
    "clusters_held",
    "HELD_NAMES_SHOWN",
]

#: How many cluster names :func:`clusters_held` shows before "and N more".
HELD_NAMES_SHOWN = 8

_MANIFEST_KEY = re.compile(
    r"^(?P<prefix>[^/]+/\d{4}/\d{2}/\d{2}/(?P<run>\d{8}T\d{6}Z-[0-9a-f]+))/manifest\.json$"
)


@dataclass(frozen=True)
class RunKey:
    """A run found by listing: id and key prefix (``<cluster>/YYYY/MM/DD/<run-id>``)."""

    run_id: str
    prefix: str

    @property
    def stamp(self) -> str:
        """Audit time as in the run id, ``YYYYMMDDTHHMMSSZ`` (sorts chronologically)."""
        return self.run_id[:16]


@dataclass(frozen=True)
class RunEntry:
    """A published run as its manifest describes it.

    ``readiness``: counts per readiness state; ``artifacts``: path -> sha256 hex.
    """

    run_id: str
    audit_time: str
    cluster: str
    prefix: str
    tool_version: str | None
    owner_filter: str | None
    vms: int | None
    readiness: dict[str, int]
    artifacts: dict[str, str]
    #: ``manifest.json`` ``cluster_uid``: the kube-system Namespace's uid; None when unknown
    #: (not recorded: a manifest 1.0, written before identities were; or null: not read)
    cluster_uid: str | None = None

    def brief(self) -> dict[str, Any]:
        """JSON-ready summary: run_id, audit_time, cluster_uid, vms, readiness, prefix."""
        return {
            "run_id": self.run_id,
            "cluster_uid": self.cluster_uid,
            "audit_time": self.audit_time,
            "vms": self.vms,
            "readiness": dict(self.readiness),
            "prefix": self.prefix + "/",
        }


def run_keys(store: ObjectStore, cluster: str, days: Iterable[date] | None = None) -> list[RunKey]:
    """Every published run of ``cluster`` (key-safe name), oldest first.

    ``days``: only the runs audited on these UTC dates (their day folders are listed, not the
    cluster's every object).
    """
    segment = cluster_segment(cluster)
    prefixes = (
        [f"{segment}/"]
        if days is None
        else [f"{segment}/{d.year:04d}/{d.month:02d}/{d.day:02d}/" for d in sorted(set(days))]
    )
    found = []
    for prefix in prefixes:
        for key in store.list_keys(prefix):
            match = _MANIFEST_KEY.match(key)
            if match:
                found.append(RunKey(match["run"], match["prefix"]))
    return sorted(found, key=lambda k: k.run_id)


def load_entry(store: ObjectStore, key: RunKey) -> RunEntry:
    """Read and parse the manifest of ``key``.

    Raises:
        VerificationError: the manifest is missing, not JSON, or names another run.
    """
    url = store.url_for(f"{key.prefix}/{MANIFEST_NAME}")
    raw = store.get(f"{key.prefix}/{MANIFEST_NAME}")
    try:
        if raw is None:
            raise VerificationError(f"{url}: manifest is missing")
        doc = load_object(raw)
        run_id = text_field(doc, "run.id")
        if run_id != key.run_id:
            raise VerificationError(f"{url}: names run {run_id}, expected {key.run_id}")
        run = doc["run"]
        summary = doc.get("summary") or {}
        if not isinstance(summary, dict) or not isinstance(summary.get("readiness") or {}, dict):
            raise ValueError("field 'summary' is not an object of counts")
        vms = summary.get("vms")
        if vms is not None and (not isinstance(vms, int) or isinstance(vms, bool)):
            raise ValueError("field 'summary.vms' is not a count")
        for state, count in (summary.get("readiness") or {}).items():
            if not isinstance(count, int) or isinstance(count, bool):
                raise ValueError(f"field 'summary.readiness.{state}' is not a count")
        uid = doc.get("cluster_uid")
        if uid is not None and (not isinstance(uid, str) or not uid):
            raise ValueError("field 'cluster_uid' is not a non-empty string or null")
        return RunEntry(
            run_id=run_id,
            audit_time=text_field(doc, "run.audit_time"),
            cluster=text_field(doc, "cluster"),
            prefix=key.prefix,
            tool_version=run.get("tool_version"),
            owner_filter=run.get("owner_filter"),
            vms=vms,
            readiness=dict(summary.get("readiness") or {}),
            artifacts={a["path"]: a["sha256"] for a in artifact_list(doc)},
            cluster_uid=uid,
        )
    except (TypeError, KeyError, ValueError) as exc:
        raise VerificationError(f"{url}: unreadable manifest ({_reason(exc)})") from None


def _reason(exc: Exception) -> str:
    """Why a manifest is unreadable, naming the field (not Python's ``KeyError('run')``)."""
    if isinstance(exc, KeyError):
        return f"field {exc.args[0]!r} is missing"
    return str(exc)


def list_runs(
    store: ObjectStore,
    cluster: str,
    *,
    limit: int | None = None,
    uid: str | None = None,
    problems: list[str] | None = None,
    unreadable: list[str] | None = None,
) -> list[RunEntry]:
    """The newest ``limit`` published runs of ``cluster`` (all when None), oldest first.

    Runs of two cluster identities under the name are never listed together
    (:func:`auditor.publish.identity.select_identity`): ``uid`` chooses one; what is left out,
    and runs of unknown identity listed beside a known one, are named in ``problems``.
    ``unreadable``: when given, a manifest that cannot be read (missing, not JSON, a field
    missing or of the wrong type, the object refused) is named there (its key and field) and
    skipped, and the others are still listed: the listing is then incomplete. Before, one
    such manifest stopped the whole history (trial ux34).

    Raises:
        VerificationError: a manifest is unreadable and ``unreadable`` is None.
        StoreUnreachable: the store cannot be reached.
        IdentityConflict: the runs carry two or more identities and ``uid`` is None.
    """
    keys = run_keys(store, cluster)
    if limit is not None:
        keys = keys[-limit:] if limit > 0 else []
    entries = [e for e in (_load_or_name(store, k, unreadable) for k in keys) if e is not None]
    return select_identity(
        cluster,
        entries,
        lambda e: e.cluster_uid,
        lambda e: e.run_id,
        wanted=uid,
        problems=problems if problems is not None else [],
    )


def _load_or_name(store: ObjectStore, key: RunKey, unreadable: list[str] | None) -> RunEntry | None:
    """:func:`load_entry`, or None with the reason in ``unreadable`` (raises when it is None).

    A store that cannot be reached is no unreadable manifest: it raises.
    """
    try:
        return load_entry(store, key)
    except StoreUnreachable:
        raise
    except PublishError as exc:
        if unreadable is None:
            raise
        unreadable.append(f"{exc}; skipped")
        return None


def iter_entries_newest_first(
    store: ObjectStore,
    keys: list[RunKey],
    accept: Callable[[RunEntry], bool],
    unreadable: list[str] | None = None,
) -> Iterator[RunEntry]:
    """Load manifests of ``keys`` from the newest back, yielding those ``accept`` keeps.

    ``unreadable``: as in :func:`list_runs` (named and skipped; else the error is raised).
    """
    for key in reversed(keys):
        entry = _load_or_name(store, key, unreadable)
        if entry is not None and accept(entry):
            yield entry


def read_report(store: ObjectStore, entry: RunEntry) -> dict[str, Any]:
    """Download the run's report.json and check it against the manifest's SHA-256.

    Raises:
        VerificationError: report.json is missing, differs from the manifest, or is not JSON.
    """
    key = f"{entry.prefix}/report.json"
    data = store.get(key)
    expected = entry.artifacts.get("report.json")
    if data is None or expected is None:
        raise VerificationError(f"{store.url_for(key)}: missing from the archive or manifest")
    if sha256_hex(data) != expected:
        raise VerificationError(
            f"{store.url_for(key)}: sha256 {sha256_hex(data)} differs from manifest {expected}"
        )
    try:
        report: dict[str, Any] = json.loads(data)
    except ValueError as exc:
        raise VerificationError(f"{store.url_for(key)}: not JSON ({exc})") from None
    return report


def clusters_held(store: ObjectStore, cluster: str) -> str:
    """Name the clusters ``store`` does hold, for a message about ``cluster`` not found.

    Returns a clause such as ``"the archive holds 3 cluster(s): ocp-dr, ocp-prod-east,
    ocp-prod-west (did you mean ocp-prod-east?)"``: the folder names one level below the
    prefix (:meth:`ObjectStore.list_folders`, sorted), the first :data:`HELD_NAMES_SHOWN`
    and ``and N more``; the close matches of ``cluster``'s key-safe name first
    (:func:`difflib.get_close_matches`). ``"the archive holds no cluster folder"`` when
    there is none. A mistyped ``--cluster`` said only "no published runs" (exit 0) and left
    the reader to guess whether the cluster was never published or misspelt (trial ux35).

    Raises:
        PublishError: the prefix cannot be listed.
    """
    names = store.list_folders("")
    if not names:
        return "the archive holds no cluster folder"
    segment = cluster_segment(cluster)
    close = difflib.get_close_matches(segment, names, n=3, cutoff=0.6)
    shown = [*close, *(n for n in names if n not in close)][:HELD_NAMES_SHOWN]
    more = len(names) - len(shown)
    text = f"the archive holds {len(names)} cluster(s): " + ", ".join(shown)
    if more:
        text += f" and {more} more"
    if close:
        text += f" (did you mean {close[0]}?)"
    return text
