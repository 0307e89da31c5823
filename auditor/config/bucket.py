"""Settings for reading Velero's BackupStorageLocation buckets (section ``backup_storage``).

Re-exported from :mod:`auditor.config`. Each entry of ``locations`` names a
BackupStorageLocation; fields left out come from that location's own spec
(``objectStorage.bucket``/``prefix``, ``config.s3Url``, ``config.region``,
``config.s3ForcePathStyle``). Credentials come only from boto3's standard chain
(a named ``profile`` from ``credentials_file``, or the process environment);
the cluster's credential Secret is never read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints, field_validator

from auditor.config.publish import endpoint_problem, file_text_problem
from auditor.config.rules import Strict

__all__ = ["BucketLocationSettings", "BackupStorageSettings"]

#: A BackupStorageLocation name (a Kubernetes object name, DNS-1123 subdomain).
LocationName = Annotated[str, StringConstraints(pattern=r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")]


class BucketLocationSettings(Strict):
    """How to reach one BackupStorageLocation's bucket; None fields default from its spec.

    ``endpoint_url``: S3 endpoint (default ``spec.config.s3Url``; AWS when both are unset).
    ``region``: default ``spec.config.region``, else ``us-east-1``.
    ``addressing_style``: ``path``/``virtual``/``auto``; default ``path`` when
    ``spec.config.s3ForcePathStyle`` is ``"true"``, else ``auto``.
    ``ca_bundle``: PEM file of the CA that signed the endpoint's certificate.
    ``profile``: boto3 profile name; ``credentials_file``: shared credentials file
    that holds it (default: boto3's own lookup, ``~/.aws/credentials``).
    ``bucket``/``prefix``: override ``spec.objectStorage.bucket``/``prefix``.
    """

    endpoint_url: str | None = Field(default=None, pattern=r"^https?://")
    region: str | None = None
    addressing_style: Literal["path", "virtual", "auto"] | None = None
    ca_bundle: Path | None = None
    profile: str | None = Field(default=None, min_length=1)
    credentials_file: Path | None = None
    bucket: str | None = Field(default=None, min_length=3, max_length=63)
    prefix: str | None = None

    @field_validator("ca_bundle", "credentials_file", mode="before")
    @classmethod
    def _a_path_not_its_text(cls, value: Any) -> Any:
        if (problem := file_text_problem(value)) is not None:
            raise ValueError(problem)
        return value

    @field_validator("ca_bundle", "credentials_file")
    @classmethod
    def _exists(cls, value: Path | None) -> Path | None:
        if value is not None and not value.is_file():
            raise ValueError(f"file {value} does not exist")
        return value

    @field_validator("endpoint_url")
    @classmethod
    def _endpoint(cls, value: str | None) -> str | None:
        if value is not None and (problem := endpoint_problem(value)) is not None:
            raise ValueError(problem)
        return value

    @field_validator("prefix")
    @classmethod
    def _prefix(cls, value: str | None) -> str | None:
        return None if value is None else value.strip("/")


class BackupStorageSettings(Strict):
    """Read-only access to BackupStorageLocation buckets (section ``backup_storage``).

    ``locations`` maps a BackupStorageLocation name to how to reach it; Backups in
    other locations keep cluster-only evidence. ``workers``: concurrent backups
    read (bounded pool). ``max_attempts``/``connect_timeout``/``read_timeout``
    (seconds): botocore's retry and timeouts. ``read_manifests``: stream
    ``<backup>.tar.gz`` for the VM manifests (identity drift); ``max_archive_bytes``
    stops reading an archive after this many compressed bytes. ``cache_dir``: the
    ETag cache (default ``<service.state_dir>/bucket-cache``).
    """

    locations: dict[LocationName, BucketLocationSettings] = Field(min_length=1)
    workers: int = Field(default=4, ge=1, le=32)
    max_attempts: int = Field(default=3, ge=1, le=10)
    connect_timeout: float = Field(default=5.0, gt=0, le=3600)
    read_timeout: float = Field(default=30.0, gt=0, le=3600)
    read_manifests: bool = True
    max_archive_bytes: int = Field(default=4 * 1024**3, ge=1)
    cache_dir: Path | None = None
