"""Publish to a local directory: the default when no bucket is configured.

Same key layout as S3 (``<dir>/<prefix>/<cluster>/YYYY/MM/DD/<run-id>/...``).
Files are written to a temporary name and renamed, so a reader never sees a
half-written artifact. There is no retention: a directory is not tamper-evident
by itself; the manifest's hashes still let a reader detect changes.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

from auditor.config.publish import PublishSettings
from auditor.publish.errors import PublishError, StoreConfigError, StoreUnreachable
from auditor.publish.store import ObjectInfo

__all__ = ["LocalStore"]


class LocalStore:
    """An :class:`~auditor.publish.store.ObjectStore` backed by a directory tree."""

    def __init__(self, settings: PublishSettings) -> None:
        if settings.object_lock_mode or settings.sse:
            raise StoreConfigError(
                f"{settings.describe()}: Object Lock and server-side encryption need an "
                "S3 bucket; a local directory supports neither"
            )
        self.root = settings.local_dir / settings.prefix if settings.prefix else settings.local_dir

    def describe(self) -> str:
        return str(self.root)

    def url_for(self, key: str) -> str:
        trailing = "/" if key.endswith("/") else ""
        return str(self._path(key.rstrip("/"))) + trailing

    def _path(self, key: str) -> Path:
        parts = key.split("/")
        if any(p in ("", ".", "..") for p in parts):
            raise PublishError(f"invalid key {key!r}")
        return self.root.joinpath(*parts)

    def preflight(self) -> None:
        """Create the archive folder.

        Raises:
            StoreUnreachable: it cannot be created now (a mount not there, a disk full, a
                file in its place): the run is spooled and retried, never refused as a
                misconfigured target (:attr:`~auditor.publish.publisher.PublishResult.refused`).
        """
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreUnreachable(f"cannot create publish directory {self.root}: {exc}") from exc

    def put(self, key: str, data: bytes, *, sha256: str, evidence: bool) -> None:
        path = self._path(key)
        tmp = path.with_name(f".{path.name}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_bytes(data)
            os.replace(tmp, path)
        except OSError as exc:
            raise PublishError(f"cannot write {path}: {exc}") from exc

    def protection_problem(self, info: ObjectInfo, *, evidence: bool) -> str | None:
        return None  # a directory has no retention or encryption settings

    def stat(self, key: str) -> ObjectInfo | None:
        path = self._path(key)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise PublishError(f"cannot read {path}: {exc}") from exc
        return ObjectInfo(key=key, size=len(data), sha256=hashlib.sha256(data).hexdigest())

    def get(self, key: str) -> bytes | None:
        try:
            return self._path(key).read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise PublishError(f"cannot read {self._path(key)}: {exc}") from exc

    def list_keys(self, prefix: str) -> Iterator[str]:
        if not self.root.is_dir():
            return iter(())
        keys = (
            p.relative_to(self.root).as_posix()
            for p in self.root.rglob("*")
            if p.is_file() and not p.name.startswith(".")
        )
        return iter(sorted(k for k in keys if k.startswith(prefix)))

    def list_folders(self, prefix: str) -> list[str]:
        base = self._path(prefix.rstrip("/")) if prefix.strip("/") else self.root
        if not base.is_dir():
            return []
        return sorted(p.name for p in base.iterdir() if p.is_dir() and not p.name.startswith("."))
