"""Find every cluster under an archive prefix and read the run that stands for it.

The archive is the publish layout (``docs/publishing.md``):
``PREFIX/<cluster>/<YYYY>/<MM>/<DD>/<run-id>/`` with ``manifest.json``, and
``PREFIX/<cluster>/latest.json`` pointing at the newest run. Everything is read
through the publish store (:mod:`auditor.publish`), on S3 or a local directory:

- latest: the run ``latest.json`` names (the newest full-fleet run by manifest when the
  pointer is missing, unreadable or names an ``--owner`` run); report.json is checked
  against the manifest's SHA-256 (:func:`auditor.publish.history.read_report`);
- ``--period``: the month's runs through :func:`auditor.period.read_period`, the last
  of them standing for the cluster.

The chosen run is then verified as ``auditor verify`` does
(:func:`auditor.publish.verify.verify_run`): every artifact against the manifest and,
with public keys, the manifest's Ed25519 signature.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from auditor.config.publish import PublishSettings
from auditor.fleet.model import FleetVerification, Signature
from auditor.period import Archive, Period, one_per_instant, read_period
from auditor.publish import PublishError, VerificationError, open_store, publish_settings
from auditor.publish.errors import StoreUnreachable
from auditor.publish.history import (
    RunEntry,
    RunKey,
    clusters_held,
    load_entry,
    read_report,
    run_keys,
)
from auditor.publish.identity import IdentityConflict, select_identity
from auditor.publish.jsondoc import load_object, text_field
from auditor.publish.manifest import cluster_segment, run_prefix
from auditor.publish.store import ObjectStore
from auditor.publish.verify import VerifyReadError, verify_run

__all__ = ["ClusterRun", "FleetInput", "read_fleet"]


@dataclass
class ClusterRun:
    """One cluster as read: its report.json (a dict, or None when none could be trusted).

    ``prefix``: the run folder's key relative to the archive root; ``location``: its URL;
    ``cluster_uid``: the cluster identity (kube-system uid) of the runs read: the standing
    run's (its report.json ``cluster.uid``, equal to its manifest's ``cluster_uid``), with
    ``--period`` the month's (:attr:`auditor.period.Archive.cluster_uid`); None when unknown.
    """

    cluster: str
    report: dict[str, Any] | None = None
    prefix: str | None = None
    location: str | None = None
    verification: FleetVerification | None = None
    problems: list[str] = field(default_factory=list)
    period: Archive | None = None
    cluster_uid: str | None = None


@dataclass
class FleetInput:
    """Every cluster found under the prefix, sorted by name, and archive-level problems."""

    source: str
    clusters: list[ClusterRun]
    problems: list[str] = field(default_factory=list)


def read_fleet(
    source: str,
    *,
    period: Period | None = None,
    clusters: Sequence[str] = (),
    public_keys: Sequence[Ed25519PublicKey] = (),
    store_options: Mapping[str, Any] | None = None,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> FleetInput:
    """Read the latest (or ``period``'s last) run of every cluster under ``source``.

    ``source``: ``s3://BUCKET/PREFIX`` or a directory (the archive root);
    ``clusters``: only these (default: every folder under the prefix);
    ``store_options``: publish settings fields for S3 (``endpoint_url``, ``region``...).
    A cluster whose run cannot be read or trusted is returned with ``report`` None and
    the reason in ``problems``; nothing is skipped silently.

    Raises:
        FileNotFoundError: a local ``source`` that does not exist.
        auditor.publish.PublishError: the target is invalid or cannot be listed.
    """
    options = dict(store_options or {})
    target = publish_settings({**options, "url": source})
    if not target.is_s3 and not target.local_dir.is_dir():
        why = "is a file, not a directory" if target.local_dir.exists() else "does not exist"
        raise FileNotFoundError(f"archive directory {target.local_dir} {why}")
    store = open_store(target)
    folders = store.list_folders("")
    names = sorted({cluster_segment(c) for c in clusters}) if clusters else folders
    found = []
    for name in names:
        run = _latest(store, name) if period is None else _in_period(source, name, period, options)
        if period is None and name not in folders:  # a --cluster typo: name what is there
            run.problems.append(clusters_held(store, name))  # (read_period does, by month)
        if run.report is not None and run.prefix is not None:
            run.location = store.url_for(run.prefix + "/")
            run.verification = _verify(target, run.prefix, public_keys, clock)
        found.append(run)
    return FleetInput(source=target.describe(), clusters=found)


def _latest(store: ObjectStore, cluster: str) -> ClusterRun:
    run = ClusterRun(cluster)
    entry = _pointed(store, cluster, run.problems)
    try:
        if entry is None:
            entry = _newest_by_manifest(store, cluster, run.problems)
        if entry is None:
            run.problems.append(f"no published full-fleet run under {store.url_for(cluster + '/')}")
            return run
        if cluster_segment(entry.cluster) != cluster:
            raise VerificationError(
                f"{store.url_for(entry.prefix + '/')}: its manifest names cluster "
                f"{entry.cluster!r}, not {cluster!r} (a run copied from another cluster)"
            )
        _one_identity(store, cluster, entry, run.problems)
        report = read_report(store, entry)
    except IdentityConflict as exc:
        run.problems.append(str(exc))
        return run
    except (VerificationError, PublishError) as exc:
        run.problems.append(f"latest run not readable: {exc}")
        return run
    problem = _shape_problem(report)
    if problem is not None:
        run.problems.append(f"{store.url_for(entry.prefix + '/report.json')}: {problem}")
        return run
    report, entry = _worst_of_instant(store, cluster, entry, report, run.problems)
    about = report.get("cluster")
    if isinstance(about, dict) and "uid" in about and about["uid"] != entry.cluster_uid:
        # as the period report (auditor.period.archive): the report and its manifest name
        # two identities, so neither can be said to be the cluster's
        run.problems.append(
            f"{store.url_for(entry.prefix + '/report.json')}: cluster.uid {about['uid']!r} "
            f"differs from its manifest's cluster_uid {entry.cluster_uid!r}; run not used"
        )
        return run
    run.report, run.prefix, run.cluster_uid = report, entry.prefix, entry.cluster_uid
    return run


def _worst_of_instant(
    store: ObjectStore,
    cluster: str,
    entry: RunEntry,
    report: dict[str, Any],
    problems: list[str],
) -> tuple[dict[str, Any], RunEntry]:
    """The latest run, or the worse of the full-fleet runs of its audit instant.

    Runs of one instant with other results (another config or export) are two answers
    for one instant; ``latest.json`` names the one published last, so the kinder could
    stand for the cluster. As in the period report
    (:func:`auditor.period.one_per_instant`), the worse stands and the others are named
    in ``problems``. Only the latest run's day folder is listed.
    """
    day = entry.prefix.rsplit("/", 1)[0]
    stamp = entry.run_id[:16]
    candidates: list[tuple[dict[str, Any], RunEntry]] = [(report, entry)]
    for name in store.list_folders(f"{day}/"):
        if name == entry.run_id or not name.startswith(stamp):
            continue
        try:
            other = load_entry(store, RunKey(name, f"{day}/{name}"))
            if other.owner_filter is not None or cluster_segment(other.cluster) != cluster:
                continue
            if other.cluster_uid != entry.cluster_uid:  # another cluster sharing the name
                continue
            other_report = read_report(store, other)
        except (VerificationError, PublishError) as exc:
            problems.append(f"run of the same instant not readable: {exc}")
            continue
        if _shape_problem(other_report) is None and other.audit_time == entry.audit_time:
            candidates.append((other_report, other))
    if len(candidates) == 1:
        return report, entry
    candidates.sort(key=lambda c: c[1].run_id)
    (kept,) = one_per_instant([c[0] for c in candidates], problems)
    return next(c for c in candidates if c[0] is kept)


#: How far before the standing run other runs are read for their cluster identity (days), and
#: at most how many: enough to see a second cluster publishing under the same name each day.
IDENTITY_WINDOW_DAYS = 7
IDENTITY_WINDOW_RUNS = 30


def _one_identity(store: ObjectStore, cluster: str, entry: RunEntry, problems: list[str]) -> None:
    """Refuse a folder that two clusters publish to (:mod:`auditor.publish.identity`).

    Only the standing run is rolled up, but a second cluster sharing the name would be
    hidden behind it (whichever published last stands) and its state never shown. The
    manifests of the folder's full-fleet runs of the :data:`IDENTITY_WINDOW_DAYS` before the
    standing run (at most :data:`IDENTITY_WINDOW_RUNS`) are read for their identity.

    Raises:
        IdentityConflict: they carry two or more identities.
    """
    at = _stamp_time(entry.run_id)
    low = (at - timedelta(days=IDENTITY_WINDOW_DAYS)).strftime("%Y%m%dT%H%M%SZ")
    # the day folders of the window (and the day after: a clock a little ahead), not the
    # cluster's every object
    days = [(at - timedelta(days=n)).date() for n in range(-1, IDENTITY_WINDOW_DAYS + 1)]
    keys = [
        k for k in run_keys(store, cluster, days) if low <= k.stamp and k.run_id != entry.run_id
    ]
    others: list[RunEntry] = [entry]
    for key in keys[-IDENTITY_WINDOW_RUNS:]:
        try:
            other = load_entry(store, key)
        except StoreUnreachable:
            raise
        except PublishError as exc:
            problems.append(f"{exc}; its cluster identity is unknown")
            continue
        if other.owner_filter is None:
            others.append(other)
    select_identity(cluster, others, lambda e: e.cluster_uid, lambda e: e.run_id, problems=problems)


def _stamp_time(run_id: str) -> datetime:
    return datetime.strptime(run_id[:16], "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)


def _shape_problem(report: Any) -> str | None:
    """What keeps ``report`` from being rolled up (run id, audit time, VM list), or None."""
    run = report.get("run") if isinstance(report, dict) else None
    if not isinstance(run, dict) or not isinstance(run.get("id"), str):
        return "not a report.json (run.id missing)"
    try:
        at = datetime.fromisoformat(str(run.get("audit_time")).replace("Z", "+00:00"))
    except ValueError:
        return f"run.audit_time {run.get('audit_time')!r} is not an RFC 3339 time"
    if at.tzinfo is None:
        return f"run.audit_time {run.get('audit_time')!r} has no time zone"
    if not isinstance(report.get("vms"), list):
        return "not a report.json (vms is not a list)"
    return None


def _pointed(store: ObjectStore, cluster: str, problems: list[str]) -> RunEntry | None:
    """The run ``<cluster>/latest.json`` points at, when it is a readable full-fleet run."""
    key = f"{cluster}/latest.json"
    data = store.get(key)
    if data is None:
        return None
    try:
        doc = load_object(data)
        prefix = text_field(doc, "prefix").strip("/")
        if not prefix.startswith(f"{cluster}/"):
            raise ValueError(f"prefix {prefix!r} is outside {cluster}/")
        entry = load_entry(store, RunKey(text_field(doc, "run_id"), prefix))
    except (ValueError, VerificationError) as exc:
        problems.append(f"{store.url_for(key)}: not a usable pointer ({exc}); newest run listed")
        return None
    return entry if entry.owner_filter is None else None


def _newest_by_manifest(store: ObjectStore, cluster: str, problems: list[str]) -> RunEntry | None:
    for key in reversed(run_keys(store, cluster)):
        try:
            entry = load_entry(store, key)
        except StoreUnreachable:
            raise
        except PublishError as exc:  # one manifest refused or malformed: named, the next read
            problems.append(str(exc))
            continue
        if entry.owner_filter is None:
            return entry
    return None


def _in_period(source: str, cluster: str, period: Period, options: dict[str, Any]) -> ClusterRun:
    run = ClusterRun(cluster)
    try:
        archive = read_period(source, cluster, period, store_options=options)
    except IdentityConflict as exc:
        run.problems.append(str(exc))
        return run
    run.period = archive
    run.problems.extend(archive.problems)
    if not archive.reports:
        run.problems.append(f"no full-fleet run of {cluster} in {period.label}")
        return run
    run.report = archive.reports[-1]
    run.cluster_uid = archive.cluster_uid
    meta = run.report["run"]
    run.prefix = run_prefix(cluster, str(meta["id"]), str(meta["audit_time"]))
    return run


def _run_store(target: PublishSettings, prefix: str) -> ObjectStore:
    if target.is_s3:
        joined = f"{target.prefix}/{prefix}" if target.prefix else prefix
        return open_store(target.model_copy(update={"prefix": joined}))
    return open_store(target.model_copy(update={"local_dir": target.local_dir / prefix}))


def _verify(
    target: PublishSettings,
    prefix: str,
    public_keys: Sequence[Ed25519PublicKey],
    clock: Callable[[], datetime],
) -> FleetVerification:
    """``auditor verify`` on the run folder ``prefix``; never raises (a failure is the result)."""
    try:
        store = _run_store(target, prefix)
        lock = False
        if target.is_s3:
            from auditor.publish.s3 import S3Store

            lock = isinstance(store, S3Store) and store.lock_enabled()
        result = verify_run(store, public_keys=public_keys, lock_enabled=lock, clock=clock)
    except VerifyReadError as exc:
        return FleetVerification(
            manifest="absent",
            signature="failed" if public_keys else "not-checked",
            detail=[str(exc)],
        )
    except PublishError as exc:
        return FleetVerification(manifest="failed", signature="not-checked", detail=[str(exc)])
    files_ok = not (result.missing or result.extra or result.changed or result.retention)
    signature: Signature = "unsigned" if not result.signature else "not-checked"
    if result.signature_ok is not None:
        signature = "verified" if result.signature_ok else "failed"
    detail = [
        line
        for line in result.lines()
        if not (line == result.signature and result.signature_ok is not False)
    ]
    return FleetVerification(
        manifest="verified" if files_ok else "failed", signature=signature, detail=detail
    )
