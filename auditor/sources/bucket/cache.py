"""An ETag-keyed cache of what was read from each backup, under the state directory.

A backup's objects do not change once Velero has written them, so the list of
``(file, ETag)`` pairs from the bucket listing identifies a read: when it is
unchanged, the cached :class:`BackupContents` is returned without a GET. One
JSON file per backup: ``<cache_dir>/<location>/<backup>.json``. The cached VM
manifests were secret-stripped before they were stored. An unreadable or
mismatching cache file is ignored (read again), never an error.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from auditor.sources.base import BackupContents, StoredVolume

__all__ = ["ContentsCache", "contents_to_dict", "contents_from_dict"]

#: 2 since round h44b: a stored PodVolumeBackup without a snapshot ID may now read ``unknown``
_FORMAT = 2


def contents_to_dict(c: BackupContents) -> dict[str, Any]:
    """JSON-ready form of ``c`` (also the ``# backup-contents:`` fixture header's form)."""
    return {
        "backup": c.backup,
        "location": c.location,
        "state": c.state,
        "detail": c.detail,
        "resources": None if c.resources is None else sorted(list(r) for r in c.resources),
        "volumes": None
        if c.volumes is None
        else [
            {
                "namespace": v.namespace,
                "pvc": v.pvc,
                "method": v.method,
                "outcome": v.outcome,
                "detail": v.detail,
                "size_bytes": v.size_bytes,
                "pv": v.pv,
                "tie": v.tie,
            }
            for v in c.volumes
        ],
        "vm_manifests": [[ns, name, m] for (ns, name), m in sorted(c.vm_manifests.items())],
        "errors": c.errors,
        "warnings": c.warnings,
    }


def contents_from_dict(raw: dict[str, Any]) -> BackupContents:
    """Inverse of :func:`contents_to_dict`.

    Raises:
        KeyError, TypeError, ValueError: ``raw`` is not of that shape.
    """
    resources = raw.get("resources")
    volumes = raw.get("volumes")
    return BackupContents(
        backup=str(raw["backup"]),
        location=str(raw["location"]),
        state=str(raw["state"]),
        detail=str(raw.get("detail") or ""),
        resources=None
        if resources is None
        else frozenset((str(g), str(ns), str(n)) for g, ns, n in resources),
        volumes=None if volumes is None else tuple(StoredVolume(**v) for v in volumes),
        vm_manifests={(str(ns), str(n)): dict(m) for ns, n, m in raw.get("vm_manifests") or []},
        errors=raw.get("errors"),
        warnings=raw.get("warnings"),
    )


class ContentsCache:
    """Read and write cached backup contents under ``directory`` (created on first write)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _path(self, location: str, backup: str) -> Path:
        return self.directory / location / f"{backup}.json"

    def get(self, location: str, backup: str, key: list[list[str]]) -> BackupContents | None:
        """The cached contents when stored under the same ``key``; None otherwise."""
        try:
            raw = json.loads(self._path(location, backup).read_text())
            if raw.get("format") != _FORMAT or raw.get("key") != key:
                return None
            return contents_from_dict(raw["contents"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def prune(self, location: str, keep: set[str]) -> int:
        """Delete cached backups of ``location`` not in ``keep``; return how many (never raises)."""
        removed = 0
        try:
            for path in (self.directory / location).glob("*.json"):
                if path.stem not in keep:
                    path.unlink(missing_ok=True)
                    removed += 1
        except OSError:
            pass
        return removed

    def put(self, location: str, backup: str, key: list[list[str]], c: BackupContents) -> None:
        """Store ``c`` atomically (temp file + rename); an OSError is left to the caller."""
        path = self._path(location, backup)
        path.parent.mkdir(parents=True, exist_ok=True)
        body = json.dumps({"format": _FORMAT, "key": key, "contents": contents_to_dict(c)})
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "w") as fh:
                fh.write(body)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
