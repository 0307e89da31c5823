"""Deliver a run's artifacts to a store, verify each, spool on failure.

Order for one run: every artifact (upload unless an identical object is
already there, then verify size + SHA-256 and, with Object Lock, retention),
then ``manifest.json`` (same), then ``<cluster>/latest.json`` when the run is
the newest. A run whose ``manifest.json`` is in the store is therefore
complete and verified: history lists only such runs.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from auditor.config.publish import PublishSettings
from auditor.publish import spool
from auditor.publish.errors import PublishError, RunDirError, VerificationError
from auditor.publish.local import LocalStore
from auditor.publish.manifest import (
    MANIFEST_NAME,
    SIGNATURE_NAME,
    RunManifest,
    build_manifest,
    seal_run,
    sha256_hex,
)
from auditor.publish.store import ObjectStore

__all__ = ["PublishResult", "open_store", "deliver", "publish_run", "retry_spool"]

log = logging.getLogger(__name__)
StoreFactory = Callable[[PublishSettings], ObjectStore]


def open_store(target: PublishSettings) -> ObjectStore:
    """The store for ``target``: :class:`S3Store` with a bucket, else :class:`LocalStore`."""
    if target.is_s3:
        from auditor.publish.s3 import S3Store

        return S3Store(target)
    return LocalStore(target)


@dataclass
class PublishResult:
    """Outcome of :func:`publish_run`.

    ``published``: every object of the run verified in the store. When False,
    ``error`` says why and ``spooled`` is the spool entry holding the run.
    ``uploaded``/``already_present``: store keys (relative to the prefix).
    ``delivered_from_spool``: run ids of earlier spooled runs delivered first.
    """

    run_id: str
    cluster: str
    location: str
    published: bool
    uploaded: list[str] = field(default_factory=list)
    already_present: list[str] = field(default_factory=list)
    delivered_from_spool: list[str] = field(default_factory=list)
    spooled: Path | None = None
    error: str | None = None


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


def _put_verified(store: ObjectStore, key: str, data: bytes, result: PublishResult) -> None:
    digest = sha256_hex(data)
    if _verify(store, key, len(data), digest, evidence=True):
        result.already_present.append(key)
        return
    store.put(key, data, sha256=digest, evidence=True)
    if not _verify(store, key, len(data), digest, evidence=True):
        raise VerificationError(f"{store.url_for(key)}: not found right after upload")
    result.uploaded.append(key)


def _update_latest(store: ObjectStore, manifest: RunManifest) -> None:
    key = f"{manifest.cluster}/latest.json"
    current = store.get(key)
    if current is not None:
        try:
            newest = json.loads(current).get("audit_time", "")
        except (ValueError, AttributeError):
            newest = ""
        if isinstance(newest, str) and newest > manifest.audit_time:
            return  # a newer run is already latest (we are delivering a spooled older one)
    doc = {
        "run_id": manifest.run_id,
        "audit_time": manifest.audit_time,
        "prefix": manifest.run_prefix + "/",
        "manifest": manifest.key(MANIFEST_NAME),
        "manifest_sha256": sha256_hex(manifest.to_bytes()),
    }
    data = (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode()
    digest = sha256_hex(data)
    store.put(key, data, sha256=digest, evidence=False)
    if not _verify(store, key, len(data), digest, evidence=False):
        raise VerificationError(f"{store.url_for(key)}: not found right after upload")


def deliver(store: ObjectStore, run_dir: Path, manifest: RunManifest) -> PublishResult:
    """Upload and verify one run (artifacts, manifest, latest.json); idempotent.

    Raises:
        PublishError: any store failure; VerificationError when a file changed
            since the manifest was built or a stored object differs.
    """
    result = PublishResult(
        manifest.run_id, manifest.cluster, store.url_for(manifest.run_prefix + "/"), False
    )
    for art in manifest.artifacts:
        data = (run_dir / art.path).read_bytes()
        if sha256_hex(data) != art.sha256:
            raise VerificationError(f"{run_dir / art.path}: changed since the manifest was built")
        _put_verified(store, manifest.key(art.path), data, result)
    sig = run_dir / SIGNATURE_NAME
    if sig.is_file():
        _put_verified(store, manifest.key(SIGNATURE_NAME), sig.read_bytes(), result)
    _put_verified(store, manifest.key(MANIFEST_NAME), manifest.to_bytes(), result)
    _update_latest(store, manifest)
    result.published = True
    return result


def _deliver_spooled(
    store: ObjectStore, target: PublishSettings, result: PublishResult | None
) -> list[str]:
    delivered = []
    for entry in spool.pending(target.spool_dir, target):
        if result is not None and entry.run_id == result.run_id:
            continue  # the current run is delivered by the caller
        try:
            manifest = build_manifest(entry.run_dir)
        except RunDirError as exc:
            log.error("spool entry %s is unusable, left in place: %s", entry.path, exc)
            continue
        deliver(store, entry.run_dir, manifest)
        spool.remove(entry)
        log.info("delivered spooled run %s to %s", entry.run_id, store.describe())
        delivered.append(entry.run_id)
    return delivered


def publish_run(
    run_dir: Path, target: PublishSettings, *, store: ObjectStore | None = None
) -> PublishResult:
    """Publish ``run_dir`` to ``target``, delivering earlier spooled runs first.

    Never raises for store failures: the run is spooled and the result says
    ``published=False`` with the error (see :class:`PublishResult`).

    ``manifest.json`` (signed with ``target.signing_key_file`` when set) is
    (re)written into ``run_dir`` first, so the folder and the archive agree.

    Raises:
        RunDirError: ``run_dir`` has no valid report.json.
        auditor.publish.signing.SigningError: the signing key is unusable.
        PublishError: the store failed *and* the run could not be spooled.
    """
    manifest = seal_run(run_dir, target.signing_key_file)
    result = PublishResult(manifest.run_id, manifest.cluster, target.describe(), False)
    delivered: list[str] = []
    try:
        store = store if store is not None else open_store(target)
        store.preflight()
        delivered = _deliver_spooled(store, target, result)
        result = deliver(store, run_dir, manifest)
        for entry in spool.pending(target.spool_dir, target):
            if entry.run_id == manifest.run_id:
                spool.remove(entry)
    except PublishError as exc:
        result.error = str(exc)
        result.spooled = spool.spool_run(target.spool_dir, run_dir, manifest, target)
        log.warning("run %s not published (%s); spooled at %s", result.run_id, exc, result.spooled)
    result.delivered_from_spool = delivered
    return result


def retry_spool(
    spool_dir: Path,
    *,
    target: PublishSettings | None = None,
    store_factory: StoreFactory = open_store,
) -> list[PublishResult]:
    """Deliver every spooled run (only those for ``target`` when given), oldest first.

    A run that fails stays in the spool; its result carries the error.
    """
    results = []
    for entry in spool.pending(spool_dir, target):
        try:
            store = store_factory(entry.target)
            store.preflight()
            result = deliver(store, entry.run_dir, build_manifest(entry.run_dir))
            spool.remove(entry)
        except (PublishError, RunDirError) as exc:
            result = PublishResult(
                entry.run_id,
                entry.cluster,
                entry.target.describe(),
                False,
                spooled=entry.path,
                error=str(exc),
            )
        results.append(result)
    return results
