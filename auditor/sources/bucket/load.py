"""Fill :class:`ClusterData` from Velero's BackupStorageLocation buckets (read-only).

:func:`read_backup_storage` fills ``ClusterData.backup_contents`` (Backup name
-> :class:`~auditor.sources.base.BackupContents`) and
``ClusterData.storage_locations`` for the locations named in the config's
``backup_storage`` section. Layout: :mod:`auditor.sources.bucket.layout`;
decoding: :mod:`auditor.sources.bucket.decode`; requests and cache:
:mod:`auditor.sources.bucket.reader`. A location that cannot be read (wrong
credentials, no such bucket, unreachable) gives its Backups state ``error`` with
a detail naming the location; nothing here raises for S3 errors.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import boto3

from auditor.config import AuditSettings
from auditor.kubevalues import dig
from auditor.sources.base import BackupContents, ClusterData, StorageLocationStatus
from auditor.sources.bucket.cache import ContentsCache
from auditor.sources.bucket.client import Meter, make_client, resolve_target
from auditor.sources.bucket.decode import VolumeLookup
from auditor.sources.bucket.reader import LocationReader
from auditor.sources.velero import backup_location as labelled_location

__all__ = ["read_backup_storage", "cache_dir_for", "backup_location"]

log = logging.getLogger(__name__)


def cache_dir_for(settings: AuditSettings) -> Path:
    """``backup_storage.cache_dir``, else ``<service.state_dir>/bucket-cache``."""
    bs = settings.backup_storage
    if bs is not None and bs.cache_dir is not None:
        return bs.cache_dir
    return settings.service.state_dir / "bucket-cache"


def _name(obj: dict[str, Any]) -> str:
    return str(dig(obj, "metadata", "name") or "")


def backup_location(backup: dict[str, Any], default_location: str) -> str:
    """The location a Backup was written to: ``spec.storageLocation``, else the
    ``velero.io/storage-location`` label Velero wrote with the location it defaulted to
    (:func:`auditor.sources.velero.backup_location`), else (an edited export) the default
    BSL's bucket is the one read."""
    return labelled_location(backup) or default_location


def _lookup(data: ClusterData) -> VolumeLookup:
    pv_claims: dict[str, tuple[str, str]] = {}
    for pv in data.of("PersistentVolume"):
        ref = dig(pv, "spec", "claimRef")
        if isinstance(ref, dict) and isinstance(ref.get("name"), str):
            pv_claims[_name(pv)] = (str(ref.get("namespace") or ""), ref["name"])
    handles: dict[str, tuple[str, str]] = {}
    for pv in data.of("PersistentVolume"):
        handle = dig(pv, "spec", "csi", "volumeHandle")
        if isinstance(handle, str) and _name(pv) in pv_claims:
            handles[handle] = pv_claims[_name(pv)]
    uids = {
        str(dig(p, "metadata", "uid")): (str(dig(p, "metadata", "namespace") or ""), _name(p))
        for p in data.of("PersistentVolumeClaim")
        if isinstance(dig(p, "metadata", "uid"), str)
    }
    return VolumeLookup(pv_claims, uids, handles)


def read_backup_storage(
    data: ClusterData,
    settings: AuditSettings,
    *,
    sessions: Mapping[str, boto3.session.Session] | None = None,
) -> None:
    """Fill ``data.backup_contents`` and ``data.storage_locations`` from the buckets.

    Does nothing when ``settings.backup_storage`` is None (not configured: both
    stay None). ``sessions`` maps a location name to a boto3 session (tests);
    otherwise each location's profile or the environment is used. Backups of
    locations not in the config get no entry (cluster-only evidence).
    """
    options = settings.backup_storage
    if options is None:
        return
    bsls = {_name(b): b for b in data.of("BackupStorageLocation")}
    default = next((n for n, b in bsls.items() if dig(b, "spec", "default") is True), "default")
    by_location: dict[str, list[str]] = {}
    for backup in data.of("Backup"):
        by_location.setdefault(backup_location(backup, default), []).append(_name(backup))
    cache = ContentsCache(cache_dir_for(settings))
    lookup = _lookup(data)
    contents: dict[str, BackupContents] = {}
    statuses: dict[str, StorageLocationStatus] = {}
    for location, config in sorted(options.locations.items()):
        names = sorted(by_location.get(location, []))
        status, found = _read_location(
            location, bsls.get(location), config, options, names, cache, lookup, sessions
        )
        statuses[location] = status
        contents.update(found)
        # the reader's own work: logged, never in report.json (see bucket.run_summary)
        log.info(
            "BackupStorageLocation %s: %d requests, %d bytes read, %d backups read, %d cached",
            location,
            status.requests,
            status.bytes_read,
            status.backups_read,
            status.cached,
        )
    data.backup_contents = contents
    data.storage_locations = statuses


def _read_location(
    location: str,
    bsl: dict[str, Any] | None,
    config: Any,
    options: Any,
    names: list[str],
    cache: ContentsCache,
    lookup: VolumeLookup,
    sessions: Mapping[str, boto3.session.Session] | None,
) -> tuple[StorageLocationStatus, dict[str, BackupContents]]:
    meter = Meter()
    try:
        target = resolve_target(location, bsl, config)
    except ValueError as exc:
        detail = f"BackupStorageLocation {location}: {exc}"
        failed = {n: BackupContents(n, location, "error", detail) for n in names}
        return StorageLocationStatus(location, "", "", None, "error", detail), failed
    try:
        client = make_client(target, options, meter, session=(sessions or {}).get(location))
    except Exception as exc:  # noqa: BLE001 - a bad profile is this location's error
        from auditor.sources.bucket.client import describe_error

        detail = f"{target.describe()}: {describe_error(exc)}"
        failed = {n: BackupContents(n, location, "error", detail) for n in names}
        status = StorageLocationStatus(
            location, target.bucket, target.prefix, target.endpoint, "error", detail
        )
        return status, failed
    reader = LocationReader(target, client, options, meter, cache, lookup)
    prot = reader.protection()
    note = "; ".join(prot.notes)
    try:
        listing = reader.list_backups()
    except Exception as exc:  # noqa: BLE001 - denied/unreachable: every backup here is "error"
        detail = reader.fail("listing backups", exc)
        log.warning("%s", detail)
        failed = {n: BackupContents(n, location, "error", detail) for n in names}
        status = StorageLocationStatus(
            location,
            target.bucket,
            target.prefix,
            target.endpoint,
            "error",
            "; ".join([detail, *prot.notes]),
            prot.versioning,
            prot.object_lock,
            prot.mode,
            prot.days,
            meter.requests,
            meter.bytes_read,
        )
        return status, failed
    found, cached = reader.read_all(names, listing)
    status = StorageLocationStatus(
        location,
        target.bucket,
        target.prefix,
        target.endpoint,
        "read",
        note,
        prot.versioning,
        prot.object_lock,
        prot.mode,
        prot.days,
        meter.requests,
        meter.bytes_read,
        backups_read=sum(1 for c in found.values() if c.state != "missing") - cached,
        cached=cached,
        bucket_only=tuple(sorted(set(listing.backups) - set(names))),
    )
    return status, found
