"""Read one BackupStorageLocation: bucket protection, the listing, and each Backup's files.

Requests per location: 2 for versioning and Object Lock, ``ceil(objects / 1000)``
for one recursive listing of ``<prefix>/backups/`` (it yields every file's ETag,
so missing or partly deleted backups need no further request), then per
backup not in the cache 3 small GETs (:data:`layout.SMALL_FILES`; 4 more of
:data:`layout.METHOD_FILES` only when volume info is absent, Velero < 1.13) plus
one streamed GET of ``<name>.tar.gz`` that stops as soon as the VM manifests
named in the resource list have been seen. Backups are read by a bounded
thread pool; the archive is never held in memory or on disk.
"""

from __future__ import annotations

import gzip
import io
import json
import logging
import tarfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from auditor.config import BackupStorageSettings
from auditor.redact import redact
from auditor.sources.base import BackupContents
from auditor.sources.bucket.cache import ContentsCache
from auditor.sources.bucket.client import Meter, Target, describe_error, error_code
from auditor.sources.bucket.decode import (
    VolumeLookup,
    resources_from_list,
    result_counts,
    volumes_from_method_files,
    volumes_from_volumeinfo,
)
from auditor.sources.bucket.layout import (
    METHOD_FILES,
    SMALL_FILES,
    VM_MEMBER,
    BackupKeys,
    backups_prefix,
)

__all__ = ["LocationReader", "Listing", "Protection"]

log = logging.getLogger(__name__)

#: Largest decompressed metadata file or VM manifest accepted (bytes); more is a gzip bomb.
MAX_JSON_BYTES = 64 * 1024 * 1024
MAX_MANIFEST_BYTES = 8 * 1024 * 1024
_VM_GR = "virtualmachines.kubevirt.io"


@dataclass
class Protection:
    """A bucket's versioning status, Object Lock and default retention (None: unknown)."""

    versioning: str | None = None
    object_lock: bool | None = None
    mode: str | None = None
    days: int | None = None
    notes: list[str] = field(default_factory=list)


@dataclass
class Listing:
    """Files per backup directory: backup -> {file name: ETag}."""

    backups: dict[str, dict[str, str]] = field(default_factory=dict)


class _Counting(io.RawIOBase):
    """A readable stream over a botocore body that counts bytes and stops at a limit."""

    def __init__(self, body: Any, meter: Meter, limit: int) -> None:
        self.body, self.meter, self.left = body, meter, limit
        self.truncated = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self.left <= 0:
            self.truncated = True
            return 0
        chunk = self.body.read(min(len(buffer), self.left, 1024 * 1024))
        n = len(chunk)
        buffer[:n] = chunk
        self.left -= n
        self.meter.add_bytes(n)
        return n


class LocationReader:
    """Reads one location with an injected client; never raises for S3 errors."""

    def __init__(
        self,
        target: Target,
        client: Any,
        options: BackupStorageSettings,
        meter: Meter,
        cache: ContentsCache | None,
        lookup: VolumeLookup,
    ) -> None:
        self.target, self.client, self.options = target, client, options
        self.meter, self.cache, self.lookup = meter, cache, lookup

    def fail(self, what: str, exc: BaseException) -> str:
        """``<location description>: <what>: <reason>`` for a failed call."""
        return f"{self.target.describe()}: {what}: {describe_error(exc)}"

    def protection(self) -> Protection:
        """The bucket's versioning and Object Lock; None fields where they could not be read."""
        out = Protection()
        bucket = self.target.bucket
        try:
            out.versioning = str(self.client.get_bucket_versioning(Bucket=bucket).get("Status", ""))
        except Exception as exc:  # noqa: BLE001 - every failure is "unknown", with its reason
            out.notes.append(self.fail("GetBucketVersioning", exc))
        try:
            conf = self.client.get_object_lock_configuration(Bucket=bucket)
        except Exception as exc:  # noqa: BLE001
            if error_code(exc) == "ObjectLockConfigurationNotFoundError":
                out.object_lock = False
            else:
                out.notes.append(self.fail("GetObjectLockConfiguration", exc))
            return out
        lock = conf.get("ObjectLockConfiguration") or {}
        retention = (lock.get("Rule") or {}).get("DefaultRetention") or {}
        out.object_lock = lock.get("ObjectLockEnabled") == "Enabled"
        out.mode = retention.get("Mode")
        days, years = retention.get("Days"), retention.get("Years")
        out.days = (
            days if isinstance(days, int) else years * 365 if isinstance(years, int) else None
        )
        return out

    def list_backups(self) -> Listing:
        """List every file under ``<prefix>/backups/``.

        Raises:
            botocore.exceptions.ClientError, BotoCoreError: the listing failed.
        """
        root = backups_prefix(self.target.prefix)
        listing = Listing()
        paginator = self.client.get_paginator("list_objects_v2")
        for page in paginator.paginate(Bucket=self.target.bucket, Prefix=root):
            for obj in page.get("Contents") or []:
                name, _, file = str(obj["Key"])[len(root) :].partition("/")
                if name and file and "/" not in file:
                    listing.backups.setdefault(name, {})[file] = str(obj.get("ETag", ""))
        return listing

    def read_all(self, names: list[str], listing: Listing) -> tuple[dict[str, BackupContents], int]:
        """Contents of ``names`` (Backups in this location) and how many came from the cache."""
        out: dict[str, BackupContents] = {}
        todo: list[tuple[str, list[list[str]]]] = []
        cached = 0
        for name in names:
            files = listing.backups.get(name)
            keys = BackupKeys(self.target.prefix, name)
            if not files:
                out[name] = self._missing(name, f"no objects under {keys.dir}")
                continue
            absent = [f for f in ("velero-backup.json", f"{name}.tar.gz") if f not in files]
            if absent:
                out[name] = self._missing(name, f"incomplete: {', '.join(absent)} absent")
                continue
            key = [[f, e] for f, e in sorted(files.items())] + [
                ["read_manifests", str(self.options.read_manifests)]
            ]
            hit = self.cache.get(self.target.location, name, key) if self.cache else None
            if hit is not None:
                out[name] = hit
                cached += 1
            else:
                todo.append((name, key))
        with ThreadPoolExecutor(max_workers=self.options.workers) as pool:
            for (name, key), contents in zip(
                todo, pool.map(lambda t: self._read(t[0], listing.backups[t[0]]), todo), strict=True
            ):
                out[name] = contents
                if self.cache is not None and contents.state == "read" and "/" not in name:
                    try:
                        self.cache.put(self.target.location, name, key, contents)
                    except OSError as exc:
                        log.warning("bucket cache not written for %s: %s", name, exc)
        if self.cache is not None:  # Backups Velero deleted (or expired) leave the cache too
            self.cache.prune(self.target.location, set(names))
        return out, cached

    def _missing(self, name: str, why: str) -> BackupContents:
        return BackupContents(
            name, self.target.location, "missing", f"{self.target.describe()}: {why}"
        )

    def _get_json(self, key: str, gz: bool) -> Any:
        """GET ``key`` and decode (gunzip first when ``gz``); a bad body is None."""
        body = self.client.get_object(Bucket=self.target.bucket, Key=key)["Body"]
        stream: Any = _Counting(body, self.meter, MAX_JSON_BYTES)
        try:
            if gz:
                stream = gzip.GzipFile(fileobj=io.BufferedReader(stream))
            data = stream.read(MAX_JSON_BYTES + 1)
            if len(data) > MAX_JSON_BYTES:
                return None
            return json.loads(data)
        except (OSError, EOFError, ValueError):
            return None
        finally:
            body.close()

    def _read(self, name: str, files: dict[str, str]) -> BackupContents:
        keys = BackupKeys(self.target.prefix, name)
        raw: dict[str, Any] = {}
        try:
            for suffix in SMALL_FILES:
                if f"{name}{suffix}" in files:
                    raw[suffix] = self._get_json(keys.file(suffix), gz=True)
            if not isinstance(raw.get("-volumeinfo.json.gz"), list):
                for suffix in METHOD_FILES:
                    if f"{name}{suffix}" in files:
                        raw[suffix] = self._get_json(keys.file(suffix), gz=True)
            resources = resources_from_list(raw.get("-resource-list.json.gz"))
            manifests: dict[tuple[str, str], dict[str, Any]] = {}
            wanted = (
                None if resources is None else {(ns, n) for g, ns, n in resources if g == _VM_GR}
            )
            note = ""
            if self.options.read_manifests and (wanted is None or wanted):
                manifests, note = self._manifests(keys.contents, wanted)
        except Exception as exc:  # noqa: BLE001 - any failure makes this backup "error"
            if error_code(exc) in ("NoSuchKey", "404"):
                return self._missing(name, "objects deleted while being read")
            return BackupContents(
                name, self.target.location, "error", self.fail(f"reading backup {name}", exc)
            )
        volumes = volumes_from_volumeinfo(raw.get("-volumeinfo.json.gz"))
        if volumes is None:
            volumes = volumes_from_method_files(
                raw.get("-itemoperations.json.gz"),
                raw.get("-podvolumebackups.json.gz"),
                raw.get("-volumesnapshots.json.gz"),
                self.lookup,
                raw.get("-csi-volumesnapshotcontents.json.gz"),
            )
        errors, warnings = result_counts(raw.get("-results.gz"))
        absent = [s for s in SMALL_FILES if f"{name}{s}" not in files]
        if "-volumeinfo.json.gz" in absent:
            absent += [s for s in METHOD_FILES if f"{name}{s}" not in files]
        detail = "; ".join(
            x
            for x in (
                f"files absent (older Velero, less evidence): {', '.join(absent)}"
                if absent
                else "",
                note,
            )
            if x
        )
        return BackupContents(
            name,
            self.target.location,
            "read",
            detail,
            resources=resources,
            volumes=volumes,
            vm_manifests=manifests,
            errors=errors,
            warnings=warnings,
        )

    def _manifests(
        self, key: str, wanted: set[tuple[str, str]] | None
    ) -> tuple[dict[tuple[str, str], dict[str, Any]], str]:
        """Stream the archive; return the wanted VM manifests (secret-stripped) and a note."""
        body = self.client.get_object(Bucket=self.target.bucket, Key=key)["Body"]
        raw = _Counting(body, self.meter, self.options.max_archive_bytes)
        found: dict[tuple[str, str], dict[str, Any]] = {}
        try:
            with tarfile.open(fileobj=io.BufferedReader(raw), mode="r|gz") as archive:
                for member in archive:
                    m = VM_MEMBER.match(member.name)
                    if not m or not member.isfile() or (m.group(1), m.group(2)) in found:
                        continue
                    ident = (m.group(1), m.group(2))
                    if wanted is not None and ident not in wanted:
                        continue
                    if member.size > MAX_MANIFEST_BYTES:
                        continue
                    fh = archive.extractfile(member)
                    try:
                        obj = json.loads(fh.read()) if fh else None
                    except ValueError:
                        obj = None
                    if isinstance(obj, dict):
                        found[ident] = redact(obj)
                    if wanted is not None and wanted <= found.keys():
                        break
        except (tarfile.TarError, OSError, EOFError) as exc:
            return found, f"archive unreadable after {len(found)} VM manifest(s): {exc}"
        finally:
            body.close()
        if raw.truncated:
            return found, f"archive read stopped at max_archive_bytes ({len(found)} manifest(s))"
        missing = sorted(wanted - found.keys()) if wanted else []
        if missing:
            shown = ", ".join(f"{ns}/{n}" for ns, n in missing[:5])
            return found, f"VM manifest(s) listed but not in the archive: {shown}"
        return found, ""
