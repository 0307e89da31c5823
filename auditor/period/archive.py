"""Read the archived runs of one month: ``PREFIX/<cluster>/<YYYY>/<MM>/<DD>/<run-id>/report.json``.

The layout is the one ``auditor publish`` writes (``docs/publishing.md``). An
``s3://BUCKET/PREFIX`` URL and a local directory laid out the same way are both read
through the publish store, where only runs with a manifest count and every report.json
is checked against the manifest's SHA-256 (:func:`auditor.publish.history.read_report`).
Owner-filtered runs are partial views of the fleet and are left out; runs that are one
audit written with other formats count once, and runs of one instant with other results
count once as the worst of them (the others named in ``problems``). With public keys,
a run whose ``manifest.json`` is not signed by one of them (no ``manifest.json.sig``, a bad
signature, another key) is left out and named in ``problems``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

__all__ = [
    "Period",
    "Archive",
    "LEFT_OUT_KINDS",
    "read_period",
    "read_with_previous",
    "one_per_instant",
]

_PERIOD = re.compile(r"^(\d{4})-(\d{2})$")


@dataclass(frozen=True)
class Period:
    """A calendar month in UTC: runs with ``start <= audit_time < end``."""

    year: int
    month: int

    @classmethod
    def parse(cls, text: str) -> Period:
        """``YYYY-MM`` -> Period.

        Raises:
            ValueError: not ``YYYY-MM`` with a month 01..12 and a year 0001..9998.
        """
        match = _PERIOD.match(text)
        # 0001-01 .. 9998-12: the month before and after must exist too (datetime's range)
        if not match or not 1 <= int(match[2]) <= 12 or not 1 <= int(match[1]) <= 9998:
            raise ValueError(f"{text!r} is not a month such as 2026-11")
        return cls(int(match[1]), int(match[2]))

    @property
    def label(self) -> str:
        """``YYYY-MM``."""
        return f"{self.year:04d}-{self.month:02d}"

    @property
    def start(self) -> datetime:
        """First instant of the month, UTC."""
        return datetime(self.year, self.month, 1, tzinfo=UTC)

    @property
    def end(self) -> datetime:
        """First instant of the next month, UTC (exclusive)."""
        return self.next().start

    def next(self) -> Period:
        """The following month."""
        return Period(self.year + self.month // 12, self.month % 12 + 1)

    def previous(self) -> Period:
        """The month before."""
        return Period(self.year - (self.month == 1), (self.month - 2) % 12 + 1)


#: Why an archived run of the period was left out (``Archive.left_out``, period.json
#: ``runs_left_out``): ``unreadable`` its manifest or report.json could not be read or
#: trusted (missing, malformed, refused, differing from the manifest, naming another
#: cluster, dated outside its folder's month); ``unsigned`` with ``--public-key``, no key
#: signed its manifest; ``other_identity`` it records another cluster identity than the
#: one read (``--cluster-uid``); ``unknown_identity`` it records none and ``--cluster-uid``
#: was given (it cannot be shown to be that cluster's).
LEFT_OUT_KINDS = ("unreadable", "unsigned", "other_identity", "unknown_identity")


@dataclass
class Archive:
    """The reports of one period, oldest first, and what could not be read (one line each)."""

    reports: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    #: key ids of the public keys each run's manifest signature was checked against
    #: (empty: signatures not checked)
    signature_keys: list[str] = field(default_factory=list)
    #: the cluster identity (kube-system uid) of the runs read; None when none records one
    cluster_uid: str | None = None
    #: runs counted whose manifest records no cluster identity
    unknown_identity_runs: int = 0
    #: runs of the period archived under the cluster's name and not counted, by why
    #: (:data:`LEFT_OUT_KINDS`); each is also named in ``problems``. Not counted here: a run
    #: archived twice with other formats, the kinder of two answers for one instant
    #: (:func:`one_per_instant`) and owner-filtered runs: those leave no audit out.
    left_out: dict[str, int] = field(default_factory=lambda: dict.fromkeys(LEFT_OUT_KINDS, 0))


def read_period(
    source: str,
    cluster: str,
    period: Period,
    *,
    store_options: Mapping[str, Any] | None = None,
    public_keys: Sequence[Ed25519PublicKey] = (),
    cluster_uid: str | None = None,
) -> Archive:
    """Read every full-fleet run of ``cluster`` audited within ``period``.

    ``source``: a local directory (the archive root, PREFIX) or ``s3://BUCKET/PREFIX``;
    ``store_options``: publish settings fields for S3 (``endpoint_url``, ``region``...);
    ``public_keys``: when given, a run counts only if one of them signed its manifest;
    ``cluster_uid``: only runs of this cluster identity (kube-system uid) count, when two
    clusters share the name (:func:`auditor.publish.identity.select_identity`).

    Raises:
        FileNotFoundError: a local ``source`` that does not exist.
        auditor.publish.PublishError: the S3 target is invalid or cannot be listed.
        auditor.publish.identity.IdentityConflict: the month's runs are of two or more
            clusters sharing the name and ``cluster_uid`` is None.
    """
    from auditor.publish.signing import key_id

    archive = Archive(signature_keys=[key_id(k) for k in public_keys])
    if not source.startswith("s3://") and not Path(source).is_dir():
        why = "is a file, not a directory" if Path(source).exists() else "does not exist"
        raise FileNotFoundError(f"archive directory {source} {why}")
    # A directory is read through the local publish store too: a run counts only with its
    # manifest (a publish killed midway has none) and a report.json that matches it.
    _read_store(
        source, cluster, period, archive, dict(store_options or {}), public_keys, cluster_uid
    )
    archive.reports.sort(key=lambda r: (r["run"]["audit_time"], r["run"]["id"]))
    archive.reports = one_per_instant(archive.reports, archive.problems)
    return archive


def read_with_previous(
    source: str,
    cluster: str,
    period: Period,
    *,
    store_options: Mapping[str, Any] | None = None,
    public_keys: Sequence[Ed25519PublicKey] = (),
    cluster_uid: str | None = None,
) -> tuple[Archive, Archive | None]:
    """:func:`read_period` of ``period`` and of the month before, the one cluster's.

    The month before is read for the identity of ``period``'s runs (``cluster_uid``, else
    the one they record): another cluster's runs under the name are never the previous
    figures. When the month before cannot be told apart (two identities, the current one
    unknown), it is None and ``problems`` of the first says so.

    Raises:
        as :func:`read_period` for ``period``.
    """
    from auditor.publish.identity import IdentityConflict

    archive = read_period(
        source,
        cluster,
        period,
        store_options=store_options,
        public_keys=public_keys,
        cluster_uid=cluster_uid,
    )
    try:
        previous: Archive | None = read_period(
            source,
            cluster,
            period.previous(),
            store_options=store_options,
            public_keys=public_keys,
            cluster_uid=cluster_uid or archive.cluster_uid,
        )
    except IdentityConflict as exc:
        archive.problems.append(f"{period.previous().label} not compared: {exc}")
        previous = None
    return archive, previous


def one_per_instant(reports: list[dict[str, Any]], problems: list[str]) -> list[dict[str, Any]]:
    """One run per audit instant, oldest first (``reports`` sorted by time, then id).

    Runs of one instant with the same input digest and VM verdicts are one audit archived
    with other artifact formats (the run id covers the formats,
    :func:`auditor.envelope.digest.run_key`): the first by run id is kept, silently.
    Runs of one instant whose results differ (other settings: an RPO, a waiver; or another
    export) are two answers for one instant: counting both weighed it twice in the RPO
    attainment and the days' readiness (trial ux30). The instant counts once, as the worst
    of them (:func:`_severity`: never the kinder answer), and each run left out is named in
    ``problems`` with the run kept.
    """
    groups: dict[str, list[dict[str, Any]]] = {}
    for report in reports:
        groups.setdefault(str(report["run"]["audit_time"]), []).append(report)
    kept: list[dict[str, Any]] = []
    for at, runs in groups.items():
        distinct: list[dict[str, Any]] = []
        seen: set[tuple[str, str]] = set()
        for report in runs:
            verdicts = json.dumps([report.get("summary"), report["vms"]], sort_keys=True)
            key = (str(report["run"].get("input_digest")), verdicts)
            if key not in seen:
                seen.add(key)
                distinct.append(report)
        worst = max(distinct, key=_severity)  # max keeps the first of equals (lowest id)
        kept.append(worst)
        for other in distinct:
            if other is not worst:
                problems.append(
                    f"run {other['run']['id']}: audited the same instant {at} as run "
                    f"{worst['run']['id']} with other results (other settings or input); "
                    "the instant counts once, as the worse result (more VMs not ready, at "
                    "risk or not within the RPO), and this run is left out"
                )
    return kept


def _severity(report: dict[str, Any]) -> tuple[int, int, int]:
    """How bad one run's answer is: VMs NOT_READY or UNKNOWN, then AT_RISK, then VMs whose
    newest backup is not known to be within the RPO (``backup.within_rpo`` not true)."""
    vms = [vm for vm in report["vms"] if isinstance(vm, dict)]
    states = [vm.get("readiness") for vm in vms]
    return (
        sum(s in ("NOT_READY", "UNKNOWN") for s in states),
        sum(s == "AT_RISK" for s in states),
        sum((vm.get("backup") or {}).get("within_rpo") is not True for vm in vms),
    )


def _read_store(
    url: str,
    cluster: str,
    period: Period,
    archive: Archive,
    options: dict[str, Any],
    public_keys: Sequence[Ed25519PublicKey],
    wanted: str | None,
) -> None:
    from auditor.publish import publish_settings
    from auditor.publish.errors import PublishError, StoreUnreachable, VerificationError
    from auditor.publish.history import (
        RunEntry,
        clusters_held,
        load_entry,
        read_report,
        run_keys,
    )
    from auditor.publish.identity import select_identity
    from auditor.publish.manifest import MANIFEST_NAME, SIGNATURE_NAME, cluster_segment
    from auditor.publish.publisher import open_store
    from auditor.publish.signing import check_signature

    store = open_store(publish_settings({**options, "url": url}))
    month = f"/{period.year:04d}/{period.month:02d}/"
    found: list[tuple[RunEntry, dict[str, Any]]] = []
    keys = run_keys(store, cluster)
    if not keys and cluster_segment(cluster) not in store.list_folders(""):
        # a --cluster typo: name the clusters the archive holds (trial ux35)
        archive.problems.append(
            f"no published run of cluster {cluster_segment(cluster)} in {store.describe()}: "
            + clusters_held(store, cluster)
        )
    for key in keys:
        if month not in f"{key.prefix}/":
            continue
        try:
            entry = load_entry(store, key)
            if entry.owner_filter is not None:
                continue
            if cluster_segment(entry.cluster) != cluster_segment(cluster):
                raise VerificationError(
                    f"{store.url_for(key.prefix + '/')}: its manifest names cluster "
                    f"{entry.cluster!r}, not {cluster_segment(cluster)!r} (a run copied from "
                    "another cluster)"
                )
            if public_keys:
                manifest = store.get(f"{key.prefix}/{MANIFEST_NAME}") or b""
                ok, detail = check_signature(
                    manifest, store.get(f"{key.prefix}/{SIGNATURE_NAME}"), public_keys
                )
                if not ok:
                    archive.problems.append(
                        f"{store.url_for(key.prefix + '/' + MANIFEST_NAME)}: {detail}; "
                        "run left out (its signature does not verify)"
                    )
                    archive.left_out["unsigned"] += 1
                    continue
            report = read_report(store, entry)
            about = report.get("cluster") if isinstance(report, dict) else None
            if isinstance(about, dict) and "uid" in about and about["uid"] != entry.cluster_uid:
                raise VerificationError(
                    f"{store.url_for(key.prefix + '/report.json')}: cluster.uid "
                    f"{about['uid']!r} differs from its manifest's cluster_uid "
                    f"{entry.cluster_uid!r}; run left out"
                )
        except StoreUnreachable:
            raise
        except PublishError as exc:  # this run's objects (a manifest refused, changed...)
            archive.problems.append(str(exc))
            archive.left_out["unreadable"] += 1
            continue
        found.append((entry, report))
    # two clusters sharing the name are never mixed (auditor.publish.identity)
    kept = select_identity(
        cluster_segment(cluster),
        found,
        lambda pair: pair[0].cluster_uid,
        lambda pair: pair[0].run_id,
        wanted=wanted,
        problems=archive.problems,
    )
    for entry, _ in found:  # what the identity choice left out
        if not any(entry is k for k, _ in kept):
            archive.left_out[
                "unknown_identity" if entry.cluster_uid is None else "other_identity"
            ] += 1
    uids = {entry.cluster_uid for entry, _ in kept}
    archive.cluster_uid = next((uid for uid in sorted(u for u in uids if u)), None)
    for entry, report in kept:
        before = len(archive.reports)
        _add(
            archive,
            json.dumps(report).encode(),
            store.url_for(f"{entry.prefix}/report.json"),
            period,
        )
        if entry.cluster_uid is None and len(archive.reports) > before:
            archive.unknown_identity_runs += 1


def _add(archive: Archive, raw: bytes, where: str, period: Period) -> None:
    try:
        report = json.loads(raw)
        run = report["run"]
        at = datetime.fromisoformat(str(run["audit_time"]).replace("Z", "+00:00"))
        if not isinstance(report["vms"], list) or not isinstance(run["id"], str):
            raise TypeError("vms is not a list or run.id not a string")
        if at.tzinfo is None:
            raise ValueError(f"run.audit_time {run['audit_time']!r} has no time zone")
    except (ValueError, KeyError, TypeError) as exc:
        archive.problems.append(f"{where}: not a report.json ({exc})")
        archive.left_out["unreadable"] += 1
        return
    if run.get("owner_filter") is not None:
        return
    if not period.start <= at < period.end:
        archive.problems.append(
            f"{where}: audit_time {run['audit_time']} is outside {period.label}"
        )
        archive.left_out["unreadable"] += 1
        return
    if any(r["run"]["id"] == run["id"] for r in archive.reports):
        return
    archive.reports.append(report)
