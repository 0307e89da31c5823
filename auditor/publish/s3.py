"""Publish to any S3-compatible store with boto3.

Credentials come only from boto3's standard chain (environment, shared files,
web identity, container/instance metadata); they are never read from the
settings and never logged. botocore's ``standard``/``adaptive`` retry mode
handles transient errors; what remains is translated into the
:mod:`auditor.publish.errors` hierarchy with the bucket and key named.

Every upload sends the manifest's SHA-256 (``x-amz-checksum-sha256``), so the
server rejects bytes that differ in transit; :meth:`S3Store.stat` reads the
stored checksum back (HEAD with ``ChecksumMode``, then GetObjectAttributes).
"""

from __future__ import annotations

import base64
import mimetypes
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import boto3
from botocore.config import Config
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    NoCredentialsError,
    PartialCredentialsError,
    SSLError,
)
from botocore.exceptions import (
    ConnectionError as BotoConnectionError,
)

from auditor.config.publish import PublishSettings
from auditor.publish.errors import (
    PublishError,
    StoreAuthError,
    StoreConfigError,
    StoreUnreachable,
)
from auditor.publish.store import ObjectInfo

__all__ = ["S3Store", "make_client"]

_T = TypeVar("_T")
_AUTH_CODES = {
    "AccessDenied",
    "InvalidAccessKeyId",
    "SignatureDoesNotMatch",
    "ExpiredToken",
    "InvalidToken",
    "TokenRefreshRequired",
    "403",
}
_MISSING_CODES = {"404", "NoSuchKey", "NotFound", "NoSuchBucket"}


class _NotFound(PublishError):
    """The bucket or key does not exist (404)."""


def make_client(settings: PublishSettings, session: boto3.session.Session | None = None) -> Any:
    """Create the S3 client for ``settings`` (credentials from boto3's standard chain)."""
    config = Config(
        region_name=settings.region,
        retries={"mode": settings.retry_mode, "total_max_attempts": settings.max_attempts},
        s3={"addressing_style": settings.addressing_style},
        connect_timeout=settings.connect_timeout,
        read_timeout=settings.read_timeout,
        signature_version="s3v4",
    )
    verify: bool | str = str(settings.ca_bundle) if settings.ca_bundle else settings.verify_tls
    return (session or boto3.session.Session()).client(
        "s3", endpoint_url=settings.endpoint_url, verify=verify, config=config
    )


def _b64_to_hex(value: str | None) -> str | None:
    if not value or "-" in value:  # composite multipart checksums are not a whole-object digest
        return None
    return base64.b64decode(value).hex()


def _content_type(key: str) -> str:
    guessed = mimetypes.guess_type(key)[0] or "application/octet-stream"
    text = guessed.startswith("text/") or guessed == "application/json"
    return f"{guessed}; charset=utf-8" if text else guessed


class S3Store:
    """An :class:`~auditor.publish.store.ObjectStore` in an S3 bucket.

    ``client``: an injected boto3 S3 client (tests, custom sessions); built
    from ``settings`` when None. ``clock``: returns aware UTC now, used for
    Object Lock retain-until dates.
    """

    def __init__(
        self,
        settings: PublishSettings,
        *,
        client: Any = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        if settings.bucket is None:
            raise StoreConfigError("S3Store needs settings.bucket")
        self.settings = settings
        self.bucket: str = settings.bucket
        self.prefix = f"{settings.prefix}/" if settings.prefix else ""
        self.client = client if client is not None else make_client(settings)
        self._clock = clock or (lambda: datetime.now(UTC))

    def describe(self) -> str:
        return self.settings.describe()

    def url_for(self, key: str) -> str:
        return f"s3://{self.bucket}/{self.prefix}{key}"

    def _call(self, what: str, fn: Callable[[], _T]) -> _T:
        """Run one boto3 call, translating failures into PublishError subclasses."""
        where = f"{what} on {self.describe()}"
        try:
            return fn()
        except (NoCredentialsError, PartialCredentialsError) as exc:
            raise StoreAuthError(
                f"{where}: no usable credentials in boto3's standard chain ({exc}); set "
                "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE or a web identity token"
            ) from None
        except SSLError as exc:
            raise StoreConfigError(
                f"{where}: TLS verification failed ({exc}); set ca_bundle to the CA that "
                "signed the endpoint's certificate"
            ) from None
        except BotoConnectionError as exc:
            raise StoreUnreachable(f"{where}: store unreachable after retries: {exc}") from None
        except ClientError as exc:
            err = exc.response.get("Error", {})
            code = str(err.get("Code", "")) or "unknown"
            message = err.get("Message") or exc.response.get("ResponseMetadata", {}).get(
                "HTTPStatusCode", ""
            )
            detail = f"{where}: {code}: {message}"
            if code in _MISSING_CODES:
                raise _NotFound(detail) from None
            if code in _AUTH_CODES:
                raise StoreAuthError(
                    f"{detail} (credentials come from boto3's standard chain; check the "
                    "access key, secret key and the principal's permissions)"
                ) from None
            if code.startswith("KMS") or code == "InvalidRequest":
                raise StoreConfigError(detail) from None
            raise PublishError(detail) from None
        except BotoCoreError as exc:
            raise PublishError(f"{where}: {exc}") from None

    def preflight(self) -> None:
        """Check the bucket exists and, with Object Lock set, has Object Lock + versioning.

        Uses ListObjectsV2 (one key) rather than HeadBucket: its error body names
        the cause (SignatureDoesNotMatch, InvalidAccessKeyId, NoSuchBucket), and
        publishing needs s3:ListBucket anyway (without it HEAD of a missing key is 403).
        """
        try:
            self._call(
                "ListObjectsV2",
                lambda: self.client.list_objects_v2(
                    Bucket=self.bucket, Prefix=self.prefix, MaxKeys=1
                ),
            )
        except _NotFound as exc:
            raise StoreConfigError(f"bucket {self.bucket!r} does not exist: {exc}") from None
        if self.settings.object_lock_mode is None:
            self._refuse_unretained_objects()
            return
        if not self.lock_enabled():
            raise StoreConfigError(
                f"bucket {self.bucket!r} has no Object Lock enabled, so "
                f"{self.settings.object_lock_mode} retention cannot be applied; Object Lock is "
                "enabled when a bucket is created (create-bucket --object-lock-enabled-for-bucket)"
            )
        versioning = self._call(
            "GetBucketVersioning", lambda: self.client.get_bucket_versioning(Bucket=self.bucket)
        )
        if versioning.get("Status") != "Enabled":
            raise StoreConfigError(
                f"bucket {self.bucket!r} has versioning {versioning.get('Status', 'never enabled')}"
                "; Object Lock retention needs versioning Enabled"
            )

    def _refuse_unretained_objects(self) -> None:
        """Without ``object_lock_mode``, refuse a bucket with Object Lock but no default retention.

        Its objects would be stored without retention, and ``auditor verify`` and
        ``auditor fleet`` require retention on every object of a bucket with Object Lock:
        every run published there would be reported unverified, never current. When the
        configuration cannot be read, nothing is refused (publishing then needs no lock rights).

        Raises:
            StoreConfigError: Object Lock enabled, no default retention rule.
        """
        try:
            conf = self._call(
                "GetObjectLockConfiguration",
                lambda: self.client.get_object_lock_configuration(Bucket=self.bucket),
            ).get("ObjectLockConfiguration", {})
        except PublishError:
            return
        if conf.get("ObjectLockEnabled") != "Enabled":
            return
        if (conf.get("Rule") or {}).get("DefaultRetention"):
            return
        raise StoreConfigError(
            f"bucket {self.bucket!r} has Object Lock enabled but no default retention, and no "
            "object_lock_mode is set (--object-lock-mode/--object-lock-days, or publish."
            "object_lock_mode/object_lock_days): the run would be stored without retention and "
            "`auditor verify` and `auditor fleet` would report it unverified (RETENTION)"
        )

    def lock_enabled(self) -> bool:
        """True when the bucket has Object Lock enabled.

        Raises:
            StoreAuthError, StoreUnreachable: the configuration cannot be read.
        """
        try:
            conf = self._call(
                "GetObjectLockConfiguration",
                lambda: self.client.get_object_lock_configuration(Bucket=self.bucket),
            )
        except (StoreAuthError, StoreUnreachable):
            raise
        except PublishError:  # ObjectLockConfigurationNotFoundError and kin
            return False
        return bool(conf.get("ObjectLockConfiguration", {}).get("ObjectLockEnabled") == "Enabled")

    def put(self, key: str, data: bytes, *, sha256: str, evidence: bool) -> None:
        params: dict[str, Any] = {
            "Bucket": self.bucket,
            "Key": self.prefix + key,
            "Body": data,
            "ContentType": _content_type(key),
            "ChecksumSHA256": base64.b64encode(bytes.fromhex(sha256)).decode(),
        }
        if self.settings.sse:
            params["ServerSideEncryption"] = self.settings.sse
            if self.settings.kms_key_id:
                params["SSEKMSKeyId"] = self.settings.kms_key_id
        if evidence and self.settings.object_lock_mode and self.settings.object_lock_days:
            params["ObjectLockMode"] = self.settings.object_lock_mode
            params["ObjectLockRetainUntilDate"] = self._clock() + timedelta(
                days=self.settings.object_lock_days
            )
        self._call(f"PutObject {self.url_for(key)}", lambda: self.client.put_object(**params))

    def protection_problem(self, info: ObjectInfo, *, evidence: bool) -> str | None:
        """Retention must match ``object_lock_mode`` (evidence only); reported SSE must match."""
        mode = self.settings.object_lock_mode
        if evidence and mode and info.lock_mode != mode:
            return f"retention is {info.lock_mode or 'absent'}, expected {mode}"
        if self.settings.sse and info.sse not in (None, self.settings.sse):
            return f"server-side encryption is {info.sse}, expected {self.settings.sse}"
        return None

    def stat(self, key: str) -> ObjectInfo | None:
        full = self.prefix + key
        try:
            head = self._call(
                f"HeadObject {self.url_for(key)}",
                lambda: self.client.head_object(
                    Bucket=self.bucket, Key=full, ChecksumMode="ENABLED"
                ),
            )
        except _NotFound:
            return None
        sha = _b64_to_hex(head.get("ChecksumSHA256")) or self._attributes_sha256(full)
        return ObjectInfo(
            key=key,
            size=int(head["ContentLength"]),
            sha256=sha,
            lock_mode=head.get("ObjectLockMode"),
            retain_until=head.get("ObjectLockRetainUntilDate"),
            sse=head.get("ServerSideEncryption"),
            version_id=head.get("VersionId"),
        )

    def _attributes_sha256(self, full_key: str) -> str | None:
        """SHA-256 from GetObjectAttributes, or None when the store does not keep one."""
        try:
            attrs = self.client.get_object_attributes(
                Bucket=self.bucket, Key=full_key, ObjectAttributes=["Checksum", "ObjectSize"]
            )
        except (ClientError, BotoCoreError):
            return None
        return _b64_to_hex(attrs.get("Checksum", {}).get("ChecksumSHA256"))

    def get(self, key: str) -> bytes | None:
        full = self.prefix + key
        try:
            resp = self._call(
                f"GetObject {self.url_for(key)}",
                lambda: self.client.get_object(Bucket=self.bucket, Key=full),
            )
        except _NotFound:
            return None
        body: bytes = resp["Body"].read()
        return body

    def list_keys(self, prefix: str) -> Iterator[str]:
        paginator = self.client.get_paginator("list_objects_v2")
        pages = paginator.paginate(Bucket=self.bucket, Prefix=self.prefix + prefix)
        keys: list[str] = []
        for page in self._call(f"ListObjectsV2 {self.url_for(prefix)}", lambda: list(pages)):
            keys.extend(obj["Key"][len(self.prefix) :] for obj in page.get("Contents", []))
        return iter(sorted(keys))

    def list_folders(self, prefix: str) -> list[str]:
        paginator = self.client.get_paginator("list_objects_v2")
        full = self.prefix + prefix
        pages = paginator.paginate(Bucket=self.bucket, Prefix=full, Delimiter="/")
        names: list[str] = []
        for page in self._call(f"ListObjectsV2 {self.url_for(prefix)}", lambda: list(pages)):
            names.extend(
                p["Prefix"][len(full) :].rstrip("/") for p in page.get("CommonPrefixes", [])
            )
        return sorted(n for n in names if n)
