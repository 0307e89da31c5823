"""The object store interface shared by the S3 and local-directory publishers.

Keys are ``/``-separated and relative to the target's prefix; each store adds
the prefix itself. History and trend read the archive through this interface
only, so they work the same on a bucket and on a directory.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

__all__ = ["ObjectInfo", "ObjectStore"]


@dataclass(frozen=True)
class ObjectInfo:
    """What a store reports about a stored object.

    ``sha256``: lowercase hex, or None when the store keeps no checksum
    (the caller then downloads and hashes). ``lock_mode``/``retain_until``:
    Object Lock retention, None when absent. ``sse``: server-side encryption
    reported by the store (``AES256``/``aws:kms``) or None.
    """

    key: str
    size: int
    sha256: str | None = None
    lock_mode: str | None = None
    retain_until: datetime | None = None
    sse: str | None = None
    version_id: str | None = None


class ObjectStore(Protocol):
    """A place artifacts are published to and read back from."""

    def describe(self) -> str:
        """Human-readable location, e.g. ``s3://bucket/prefix``; no credentials."""
        ...

    def url_for(self, key: str) -> str:
        """Full location of ``key`` (``s3://bucket/prefix/key`` or a file path)."""
        ...

    def preflight(self) -> None:
        """Check the target accepts writes as configured (bucket, Object Lock...).

        Raises:
            PublishError: a subclass saying what is wrong.
        """
        ...

    def put(self, key: str, data: bytes, *, sha256: str, evidence: bool) -> None:
        """Store ``data`` under ``key``; ``sha256`` is its hex digest.

        ``evidence``: apply retention/encryption settings (False for
        ``latest.json``, a pointer that is overwritten by each run).
        """
        ...

    def protection_problem(self, info: ObjectInfo, *, evidence: bool) -> str | None:
        """Say what is wrong with ``info``'s retention/encryption, or None when as configured.

        ``evidence``: the object should carry the configured retention.
        """
        ...

    def stat(self, key: str) -> ObjectInfo | None:
        """Return what the store knows about ``key``, or None when it does not exist."""
        ...

    def get(self, key: str) -> bytes | None:
        """Return the object's bytes, or None when it does not exist."""
        ...

    def list_keys(self, prefix: str) -> Iterator[str]:
        """Yield every key starting with ``prefix``, in lexicographic order."""
        ...

    def list_folders(self, prefix: str) -> list[str]:
        """Return the names one level below ``prefix`` (``""`` or ending in ``/``) that hold keys.

        ``list_folders("")`` on an archive gives its cluster names without listing every
        object (S3: ``ListObjectsV2`` with ``Delimiter="/"``), sorted.
        """
        ...
