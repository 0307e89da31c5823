"""Deliver a run's artifacts to a store, verify each; crash-safe through the spool.

Order for one run:

1. ``manifest.json`` (signed when a key is set) is written into the run folder,
   and the run is copied into the spool *before the first upload*, so a process
   killed at any point leaves an entry the next start (or scheduler tick) delivers.
2. Every artifact (upload unless an identical object is already there, then
   verify size + SHA-256 and, with Object Lock, retention), then the signature,
   then ``manifest.json`` (same), then ``<cluster>/latest.json`` when the run is
   the newest and the pointer changed.
3. The spool entry is removed only after all of that verified.

A run whose ``manifest.json`` is in the store is therefore complete and
verified: history lists only such runs. Delivery checks ``should_stop`` between
objects and stops with :class:`~auditor.publish.errors.PublishInterrupted`
(the entry stays, the next start resumes it). A run whose bytes differ from an
object already at its key (:class:`~auditor.publish.errors.ConflictError`) is
moved to ``<spool_dir>/quarantine/`` with the error, and blocks nothing else.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from auditor.config.publish import PublishSettings
from auditor.publish import spool
from auditor.publish.errors import (
    ConflictError,
    PublishError,
    PublishInterrupted,
    RunDirError,
    StoreConfigError,
    VerificationError,
)
from auditor.publish.local import LocalStore
from auditor.publish.manifest import (
    MANIFEST_NAME,
    SIGNATURE_NAME,
    RunManifest,
    check_seal,
    seal_run,
    sha256_hex,
)
from auditor.publish.store import ObjectStore

__all__ = ["PublishResult", "open_store", "deliver", "publish_run", "refused_note", "retry_spool"]

log = logging.getLogger(__name__)
StoreFactory = Callable[[PublishSettings], ObjectStore]
StopCheck = Callable[[], bool]

#: One delivery at a time per process (a scheduler tick and the start-up drain may overlap).
_DELIVERY = threading.RLock()


def _never() -> bool:
    return False


def open_store(target: PublishSettings) -> ObjectStore:
    """The store for ``target``: :class:`S3Store` with a bucket, else :class:`LocalStore`."""
    if target.is_s3:
        from auditor.publish.s3 import S3Store

        return S3Store(target)
    return LocalStore(target)


@dataclass
class PublishResult:
    """Outcome of :func:`publish_run` or of one run in :func:`retry_spool`.

    ``published``: every object of the run verified in the store. When False,
    ``error`` says why and ``spooled`` is the spool entry holding the run, or
    ``quarantined`` the quarantine folder when it conflicts with the archive.
    ``uploaded``/``already_present``: store keys (relative to the prefix).
    ``delivered_from_spool``: run ids of earlier spooled runs delivered first;
    ``earlier``: the result of every earlier spooled run tried first.
    ``latest_updated``: ``<cluster>/latest.json`` was (re)written.
    ``undeliverable``: a spool entry whose ``spool.json`` is unreadable (no retry delivers it).
    ``refused``: the target is misconfigured (:class:`StoreConfigError`: no such bucket, no
    Object Lock or versioning for the lock mode asked, KMS key refused, TLS not verified)
    and the caller asked not to spool such a run (``publish_run(refuse_misconfigured=True)``):
    ``spooled`` is then None unless the same run already waited in the spool.
    """

    run_id: str
    cluster: str
    location: str
    published: bool
    uploaded: list[str] = field(default_factory=list)
    already_present: list[str] = field(default_factory=list)
    delivered_from_spool: list[str] = field(default_factory=list)
    earlier: list[PublishResult] = field(default_factory=list)
    spooled: Path | None = None
    quarantined: Path | None = None
    undeliverable: bool = False
    error: str | None = None
    latest_updated: bool = False
    refused: bool = False
    #: where :func:`retry_spool` moved a refused run (``<spool_dir>/refused/<entry>``)
    refused_at: Path | None = None


def _verify(store: ObjectStore, key: str, size: int, sha256: str, *, evidence: bool) -> bool:
    """Check the stored ``key`` against size/digest; return False when it does not exist.

    Raises:
        VerificationError: the object differs, or lacks the requested
            retention/encryption (``evidence`` objects only get retention).
    """
    info = store.stat(key)
    if info is None:
        return False
    actual = info.sha256
    if actual is None:  # the store keeps no checksum: read the bytes back
        data = store.get(key)
        actual = sha256_hex(data) if data is not None else None
    if info.size != size or actual != sha256:
        raise VerificationError(
            f"{store.url_for(key)}: stored object has size {info.size}, sha256 {actual}; "
            f"manifest says size {size}, sha256 {sha256}"
        )
    problem = store.protection_problem(info, evidence=evidence)
    if problem:
        raise VerificationError(f"{store.url_for(key)}: {problem}")
    return True


def _put_verified(
    store: ObjectStore, key: str, data: bytes, result: PublishResult, stop: StopCheck
) -> None:
    if stop():
        raise PublishInterrupted(
            f"publishing stopped before {store.url_for(key)} (shutdown); resumes from the spool"
        )
    digest = sha256_hex(data)
    try:
        present = _verify(store, key, len(data), digest, evidence=True)
    except VerificationError as exc:
        raise ConflictError(
            f"{exc}: a different object already holds this key; evidence is never overwritten"
        ) from None
    if present:
        result.already_present.append(key)
        return
    store.put(key, data, sha256=digest, evidence=True)
    if not _verify(store, key, len(data), digest, evidence=True):
        raise VerificationError(f"{store.url_for(key)}: not found right after upload")
    result.uploaded.append(key)


#: How far past this machine's clock an audit time may lie and still count as "now" (hours).
FUTURE_TOLERANCE_HOURS = 1.0


def _update_latest(
    store: ObjectStore, manifest: RunManifest, *, now: datetime | None = None
) -> bool:
    """Point ``<cluster>/latest.json`` at this run when it is the newest; True when written.

    ``latest.json`` only moves forward, so a run dated in the future (a test run with
    ``--at``, a node whose clock is ahead) would pin it, and the fleet roll-up after it, for
    months (new-user trial nu20). A run dated more than :data:`FUTURE_TOLERANCE_HOURS` past
    ``now`` (UTC, this machine's clock) never becomes latest, and a latest run dated that far
    ahead no longer holds back a run that is not.
    """
    horizon = ((now or datetime.now(UTC)) + timedelta(hours=FUTURE_TOLERANCE_HOURS)).strftime(
        "%Y-%m-%dT%H:%M:%SZ"
    )
    if manifest.audit_time > horizon:
        log.warning(
            "run %s is dated %s, past this machine's clock: latest.json not moved to it",
            manifest.run_id,
            manifest.audit_time,
        )
        return False
    key = f"{manifest.cluster}/latest.json"
    current = store.get(key)
    uid = manifest.document.get("cluster_uid")
    if current is not None:
        try:
            pointed = json.loads(current)
            newest = pointed.get("audit_time", "")
            other = pointed.get("cluster_uid")
        except (ValueError, AttributeError):
            newest, other = "", None
        if isinstance(other, str) and isinstance(uid, str) and other != uid:
            # two clusters publish under one name: the archive keeps both runs, and history,
            # period and fleet refuse to mix them (auditor.publish.identity); say so now
            log.warning(
                "cluster name %s is shared by two clusters: %s points at run %s of cluster "
                "identity %s, this run %s is of %s; give each cluster its own cluster_name",
                manifest.cluster,
                store.url_for(key),
                pointed.get("run_id"),
                other,
                manifest.run_id,
                uid,
            )
        if isinstance(newest, str) and manifest.audit_time < newest <= horizon:
            return False  # a newer run is already latest (we are delivering a spooled older one)
    doc: dict[str, object] = {
        "run_id": manifest.run_id,
        "audit_time": manifest.audit_time,
        "prefix": manifest.run_prefix + "/",
        "manifest": manifest.key(MANIFEST_NAME),
        "manifest_sha256": sha256_hex(manifest.to_bytes()),
    }
    if "cluster_uid" in manifest.document:
        doc["cluster_uid"] = uid
    data = (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode()
    if current == data:
        return False  # unchanged: no new object version
    digest = sha256_hex(data)
    store.put(key, data, sha256=digest, evidence=False)
    if not _verify(store, key, len(data), digest, evidence=False):
        raise VerificationError(f"{store.url_for(key)}: not found right after upload")
    return True


def _refuse_other_run(store: ObjectStore, manifest: RunManifest) -> None:
    """Refuse, before any upload, a run whose folder already holds another run's manifest.

    Two runs can share a run id (same audit second, same inputs and formats, a period
    report added by the service, or an edited folder); uploading the second's extra artifacts before its manifest conflicts would leave
    objects the published run's manifest does not list (``verify``: EXTRA), unremovable
    under Object Lock.

    Raises:
        ConflictError: ``manifest.json`` is stored with other bytes.
    """
    data = manifest.to_bytes()
    key = manifest.key(MANIFEST_NAME)
    try:
        _verify(store, key, len(data), sha256_hex(data), evidence=True)
    except VerificationError as exc:
        raise ConflictError(
            f"{exc}: a different object already holds this key (another run with this id is "
            "published there); nothing uploaded"
        ) from None


def deliver(
    store: ObjectStore, run_dir: Path, manifest: RunManifest, *, should_stop: StopCheck = _never
) -> PublishResult:
    """Upload and verify one run (artifacts, signature, manifest, latest.json); idempotent.

    Raises:
        PublishError: any store failure; VerificationError when a file changed
            since the manifest was built or a stored object differs
            (ConflictError when it differed before upload); PublishInterrupted
            when ``should_stop`` said so between two objects.
    """
    result = PublishResult(
        manifest.run_id, manifest.cluster, store.url_for(manifest.run_prefix + "/"), False
    )
    _refuse_other_run(store, manifest)
    for art in manifest.artifacts:
        data = (run_dir / art.path).read_bytes()
        if sha256_hex(data) != art.sha256:
            raise VerificationError(f"{run_dir / art.path}: changed since the manifest was built")
        _put_verified(store, manifest.key(art.path), data, result, should_stop)
    sig = run_dir / SIGNATURE_NAME
    if sig.is_file():
        _put_verified(store, manifest.key(SIGNATURE_NAME), sig.read_bytes(), result, should_stop)
    _put_verified(store, manifest.key(MANIFEST_NAME), manifest.to_bytes(), result, should_stop)
    result.latest_updated = _update_latest(store, manifest)
    result.published = True
    return result


def _prepare_spooled(store: ObjectStore, entry: spool.SpoolEntry, add_trend: bool) -> RunManifest:
    """Give a spooled run its trend.json (unless its manifest is already stored); reseal it."""
    from auditor.publish.manifest import build_manifest
    from auditor.publish.trend import TREND_NAME, write_trend

    run_dir = entry.run_dir
    # the spool's own copy: a trend.json in it was written here, before a crash could reseal
    check_seal(run_dir, added=(TREND_NAME,))
    if add_trend and not (run_dir / TREND_NAME).exists():
        stored = store.stat(build_manifest(run_dir).key(MANIFEST_NAME))
        if stored is None:
            try:
                write_trend(run_dir, store)
            except PublishError as exc:
                log.warning("spooled run %s: trend not computed: %s", entry.run_id, exc)
    return seal_run(run_dir, entry.target.signing_key_file)


def _deliver_entry(
    store: ObjectStore, entry: spool.SpoolEntry, should_stop: StopCheck, *, add_trend: bool = True
) -> PublishResult:
    """Deliver one spool entry; a conflict quarantines it; other failures leave it spooled.

    Raises:
        PublishInterrupted: ``should_stop`` said so (the entry stays).
        StoreUnreachable, StoreAuthError, StoreConfigError: the store itself fails
            (no use trying the next entry).
    """
    try:
        manifest = _prepare_spooled(store, entry, add_trend)
        result = deliver(store, entry.run_dir, manifest, should_stop=should_stop)
    except ConflictError as exc:
        moved = spool.quarantine(entry, str(exc))
        log.error("run %s quarantined at %s: %s", entry.run_id, moved, exc)
        return PublishResult(
            entry.run_id,
            entry.cluster,
            entry.target.describe(),
            False,
            quarantined=moved,
            error=str(exc),
        )
    except (VerificationError, RunDirError) as exc:
        log.error("spooled run %s not delivered, left in the spool: %s", entry.run_id, exc)
        return PublishResult(
            entry.run_id,
            entry.cluster,
            entry.target.describe(),
            False,
            spooled=entry.path,
            error=str(exc),
        )
    spool.remove(entry)
    log.info("delivered run %s to %s", entry.run_id, store.describe())
    return result


def publish_run(
    run_dir: Path,
    target: PublishSettings,
    *,
    store: ObjectStore | None = None,
    should_stop: StopCheck = _never,
    added: Collection[str] = (),
    refuse_misconfigured: bool = False,
) -> PublishResult:
    """Publish ``run_dir`` to ``target`` through the spool, delivering earlier spooled runs first.

    ``added``: files the caller wrote into the sealed run since (``trend.json``); any other
    file its manifest does not list is refused (:func:`~auditor.publish.manifest.check_seal`).
    ``refuse_misconfigured``: a :class:`StoreConfigError` (the target itself is wrong: a
    bucket that does not exist, COMPLIANCE/GOVERNANCE on a bucket without Object Lock or
    versioning...) takes the run out of the spool again (``refused``): no retry can deliver
    it until the target is changed, so ``auditor run``/``publish`` exit 2 rather than spool
    it to be retried for ever (docs/exit-codes.md). The service keeps the default (spooled).

    Never raises for store failures: the run stays in the spool and the result
    says ``published=False`` with the error (see :class:`PublishResult`).

    Raises:
        RunDirError: ``run_dir`` has no valid report.json, or manifest.json
            cannot be written into it.
        auditor.publish.signing.SigningError: the signing key is unusable.
        PublishError: the run could not be copied into the spool.
    """
    check_seal(run_dir, added=added)
    manifest = seal_run(run_dir, target.signing_key_file)
    waiting = (spool.entry_path(target.spool_dir, manifest.run_id, target) / "spool.json").exists()
    entry = spool.spool_run(target.spool_dir, run_dir, manifest, target)
    result = PublishResult(manifest.run_id, manifest.cluster, target.describe(), False)
    earlier: list[PublishResult] = []
    with _DELIVERY:
        try:
            store = store if store is not None else open_store(target)
            store.preflight()
            for pending in spool.pending(target.spool_dir, target):
                if pending.path == entry:
                    continue
                earlier.append(_deliver_entry(store, pending, should_stop))
            current = next(
                (e for e in spool.pending(target.spool_dir, target) if e.path == entry), None
            )
            if current is None:  # delivered by a concurrent drain meanwhile
                result.published = True
            else:
                result = _deliver_entry(store, current, should_stop, add_trend=False)
        except StoreConfigError as exc:
            result.error = str(exc)
            result.spooled = entry
            if refuse_misconfigured:
                result.refused = True
                if not waiting:  # spooled by this call only: never retried
                    spool.remove(entry)
                    result.spooled = None
                log.error("run %s not published, target misconfigured: %s", result.run_id, exc)
            else:
                log.warning("run %s not published (%s); spooled at %s", result.run_id, exc, entry)
        except PublishError as exc:
            result.error = str(exc)
            result.spooled = entry
            log.warning("run %s not published (%s); spooled at %s", result.run_id, exc, entry)
    result.earlier = earlier
    result.delivered_from_spool = [r.run_id for r in earlier if r.published]
    return result


def retry_spool(
    spool_dir: Path,
    *,
    target: PublishSettings | None = None,
    store_factory: StoreFactory = open_store,
    should_stop: StopCheck = _never,
    refuse_misconfigured: bool = False,
) -> list[PublishResult]:
    """Deliver every spooled run (only those for ``target`` when given), oldest first.

    One result per run: delivered, still spooled (with the error) or quarantined.
    A run that fails stays in the spool; a conflicting run is quarantined; neither
    stops the others. A shutdown (``should_stop``) ends the loop between objects.
    An entry whose ``spool.json`` is missing or unreadable cannot be delivered: it gets a
    result that is not published, its error naming the file and field.
    ``refuse_misconfigured``: a run whose target is itself misconfigured
    (:class:`StoreConfigError`: no such bucket, no Object Lock or versioning for the lock mode
    asked...) leaves the retry loop: it is moved to ``<spool_dir>/refused/`` with
    ``error.txt`` (:func:`~auditor.publish.spool.refuse`) and its result is ``refused`` (with
    ``spooled`` None). The same test ``publish_run(refuse_misconfigured=True)`` applies to a
    new run; ``auditor serve`` asks for it, so a run spooled before that test existed (or
    while the target was still right) is no longer retried for ever.
    """
    results = [
        PublishResult(
            spool.entry_run_id(folder),
            "",
            "(target unknown)",
            False,
            spooled=folder,
            undeliverable=True,
            error=f"{reason}; the run cannot be delivered from the spool: publish "
            f"{folder / 'run'} with auditor publish --from-run, then remove the entry",
        )
        for folder, reason in spool.unreadable(spool_dir, target)
    ]
    with _DELIVERY:
        for entry in spool.pending(spool_dir, target):
            if should_stop():
                break
            try:
                store = store_factory(entry.target)
                store.preflight()
                result = _deliver_entry(store, entry, should_stop)
            except PublishInterrupted as exc:
                results.append(_still_spooled(entry, exc))
                break
            except StoreConfigError as exc:
                result = _still_spooled(entry, exc)
                if refuse_misconfigured:
                    result = _refused(entry, exc)
            except PublishError as exc:
                result = _still_spooled(entry, exc)
            results.append(result)
    return results


def _refused(entry: spool.SpoolEntry, exc: StoreConfigError) -> PublishResult:
    """Take ``entry`` out of the retry loop (its target is misconfigured): ``refused/``."""
    moved = spool.refuse(entry, str(exc))
    result = _still_spooled(entry, exc)
    result.refused = True
    if moved != entry.path:
        result.spooled = None
        result.refused_at = moved
    log.error(
        "spooled run %s not delivered and no longer retried, the publish target is "
        "misconfigured (fix publish: and publish %s with `auditor publish --from-run`): %s",
        entry.run_id,
        moved / "run",
        exc,
    )
    return result


def refused_note(result: PublishResult) -> str:
    """What became of a :attr:`PublishResult.refused` run, for a message: not spooled, or left
    where it already waited in the spool (an earlier attempt put it there)."""
    if result.spooled is None:
        return "the target is misconfigured, so the run is not spooled"
    return (
        f"the target is misconfigured; the run stays in the spool at {result.spooled}, "
        "where an earlier attempt left it"
    )


def _still_spooled(entry: spool.SpoolEntry, exc: Exception) -> PublishResult:
    return PublishResult(
        entry.run_id,
        entry.cluster,
        entry.target.describe(),
        False,
        spooled=entry.path,
        error=str(exc),
    )
