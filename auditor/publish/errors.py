"""Errors raised while publishing or reading back the evidence archive.

::

    PublishError                 anything that kept a run from being published/read
    ├── StoreUnreachable         endpoint down, DNS, TLS handshake, timeouts (after retries)
    ├── StoreAuthError           no credentials, wrong key/secret, access denied
    ├── StoreConfigError         no such bucket, bucket lacks Object Lock or versioning,
    │                            KMS key refused, invalid target settings
    ├── PublishInterrupted       stopped between objects (shutdown grace ended); resumes later
    ├── IdentityConflict         runs of two clusters share one name (auditor.publish.identity)
    └── VerificationError        an object's size/SHA-256/retention differs from the manifest
        └── ConflictError        a different object already held the key before upload

Messages name the bucket/key or file; they never contain credentials.
"""

from __future__ import annotations

__all__ = [
    "PublishError",
    "StoreUnreachable",
    "StoreAuthError",
    "StoreConfigError",
    "VerificationError",
    "ConflictError",
    "PublishInterrupted",
    "RunDirError",
]


class PublishError(Exception):
    """A run could not be published, or the archive could not be read."""


class StoreUnreachable(PublishError):
    """The object store could not be reached (after botocore's retries)."""


class StoreAuthError(PublishError):
    """The store refused our credentials, or none were found in boto3's chain."""


class StoreConfigError(PublishError):
    """The target is misconfigured: missing bucket, Object Lock, versioning, KMS key."""


class VerificationError(PublishError):
    """A stored object does not match the manifest (size, SHA-256 or retention)."""


class ConflictError(VerificationError):
    """Different bytes already sit at a key of this run (a conflicting run: quarantined)."""


class PublishInterrupted(PublishError):
    """Publishing stopped between two objects because the process is shutting down."""


class RunDirError(ValueError):
    """The run directory is not a publishable audit run (missing/invalid report.json)."""
