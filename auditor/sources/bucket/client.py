"""One read-only S3 client per BackupStorageLocation, with request and byte counters.

Credentials come only from boto3's standard chain: the location's ``profile``
(in its ``credentials_file`` when given) or the process environment. The
cluster's credential Secret named in the location's spec is never read.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import boto3
import botocore.session
from botocore.config import Config
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    EndpointConnectionError,
    NoCredentialsError,
    ProfileNotFound,
    SSLError,
)

from auditor.config import BackupStorageSettings, BucketLocationSettings
from auditor.kubevalues import dig

__all__ = ["Target", "Meter", "resolve_target", "make_client", "describe_error", "DENIED"]

#: S3 error codes that mean "these credentials may not do this".
DENIED = frozenset(
    {"AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidToken", "403"}
)


@dataclass(frozen=True)
class Target:
    """Where one location's backups live and how to reach them (spec + config merged)."""

    location: str
    bucket: str
    prefix: str
    endpoint: str | None
    region: str
    addressing_style: str
    settings: BucketLocationSettings

    def describe(self) -> str:
        """``BackupStorageLocation NAME (s3://bucket/prefix at endpoint)`` for messages."""
        where = f"s3://{self.bucket}/{self.prefix}".rstrip("/")
        return f"BackupStorageLocation {self.location} ({where} at {self.endpoint or 'AWS S3'})"


def resolve_target(
    location: str, bsl: dict[str, Any] | None, config: BucketLocationSettings
) -> Target:
    """Merge the location's spec with its config entry (config wins).

    Raises:
        ValueError: no bucket known (the location is not in the cluster and the
            config names none), or the location's provider is not S3-compatible.
    """
    spec_cfg = dig(bsl, "spec", "config") if bsl else None
    spec_cfg = spec_cfg if isinstance(spec_cfg, dict) else {}
    provider = str(dig(bsl, "spec", "provider") or "aws") if bsl else "aws"
    if provider.rsplit("/", 1)[-1] not in ("aws", "s3"):
        raise ValueError(f"provider {provider!r} is not S3-compatible (aws)")
    bucket = config.bucket or (dig(bsl, "spec", "objectStorage", "bucket") if bsl else None)
    if not isinstance(bucket, str) or not bucket:
        raise ValueError("no bucket: the location is not in the cluster and config names none")
    prefix = config.prefix
    if prefix is None:
        spec_prefix = dig(bsl, "spec", "objectStorage", "prefix") if bsl else None
        prefix = spec_prefix.strip("/") if isinstance(spec_prefix, str) else ""
    endpoint = config.endpoint_url or spec_cfg.get("s3Url") or None
    style = config.addressing_style or (
        "path" if str(spec_cfg.get("s3ForcePathStyle", "")).lower() == "true" else "auto"
    )
    region = config.region or spec_cfg.get("region") or "us-east-1"
    return Target(location, bucket, prefix, endpoint, str(region), style, config)


class Meter:
    """Thread-safe counts of HTTP requests sent and response bytes read."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests = 0
        self.bytes_read = 0

    def request(self, **_: Any) -> None:
        """botocore ``before-send`` hook: one HTTP attempt (retries count too)."""
        with self._lock:
            self.requests += 1

    def add_bytes(self, n: int) -> None:
        """Count ``n`` response bytes."""
        with self._lock:
            self.bytes_read += n

    def response(self, http_response: Any = None, model: Any = None, **_: Any) -> None:
        """botocore ``after-call`` hook: count non-streaming response bodies."""
        if http_response is None or (model is not None and model.has_streaming_output):
            return
        self.add_bytes(len(http_response.content or b""))


def make_client(
    target: Target,
    options: BackupStorageSettings,
    meter: Meter,
    *,
    session: boto3.session.Session | None = None,
) -> Any:
    """A botocore S3 client for ``target`` that counts into ``meter``.

    ``session`` is injected by tests; otherwise one is built from the
    location's ``profile``/``credentials_file`` or the environment.

    Raises:
        botocore.exceptions.ProfileNotFound: the profile does not exist.
    """
    if session is None:
        core = botocore.session.Session()
        if target.settings.credentials_file is not None:
            core.set_config_variable("credentials_file", str(target.settings.credentials_file))
        if target.settings.profile:
            core.set_config_variable("profile", target.settings.profile)
        session = boto3.session.Session(botocore_session=core)
    ca = target.settings.ca_bundle
    client = session.client(
        "s3",
        endpoint_url=target.endpoint,
        region_name=target.region,
        verify=str(ca) if ca else True,
        config=Config(
            s3={"addressing_style": target.addressing_style},
            retries={"mode": "standard", "max_attempts": options.max_attempts},
            connect_timeout=options.connect_timeout,
            read_timeout=options.read_timeout,
            max_pool_connections=options.workers + 2,
        ),
    )
    client.meta.events.register("before-send.s3", meter.request)
    client.meta.events.register("after-call.s3", meter.response)
    return client


def error_code(exc: BaseException) -> str | None:
    """The S3 error code of a ClientError (``NoSuchKey``, ``AccessDenied``...), else None."""
    if isinstance(exc, ClientError):
        return str(exc.response.get("Error", {}).get("Code") or "") or None
    return None


def describe_error(exc: BaseException) -> str:
    """A short, secret-free reason for a failed S3 call."""
    code = error_code(exc)
    if code in DENIED:
        return f"access denied ({code}): check the credentials configured for this location"
    if code in ("NoSuchBucket", "404"):
        return "the bucket does not exist"
    if code:
        return f"S3 error {code}"
    if isinstance(exc, NoCredentialsError):
        return "no credentials found (set the location's profile, or AWS_* in the environment)"
    if isinstance(exc, ProfileNotFound):
        return f"credential profile not found: {exc}"
    if isinstance(exc, SSLError):
        return "TLS verification failed (set the location's ca_bundle)"
    if isinstance(exc, EndpointConnectionError):
        return "cannot connect to the endpoint"
    if isinstance(exc, BotoCoreError):
        return f"{type(exc).__name__}: {exc}"
    return f"{type(exc).__name__}"
