"""Where and how a run is published: :class:`PublishSettings` (pydantic).

Credentials are never part of these settings: boto3 finds them through its
standard chain (environment, shared credentials/config files, web identity
token, container/instance metadata). A config that tries to carry them fails
validation with a message saying so.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlparse

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from auditor.config.fields import FieldProblems, error_problems

__all__ = [
    "PublishSettings",
    "consistency_problems",
    "default_spool_dir",
    "endpoint_problem",
    "publish_problems",
]

_CREDENTIAL_WORDS = ("access_key", "secret", "session_token", "password", "credential")


def default_spool_dir() -> Path:
    """``$XDG_CACHE_HOME/vm-recovery-auditor/spool`` (``~/.cache`` when unset)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "vm-recovery-auditor" / "spool"


class PublishSettings(BaseModel):
    """A publish target: an S3 bucket (``bucket`` set) or a local directory.

    ``prefix``: key prefix inside the bucket (or sub-directory of ``local_dir``),
    no leading/trailing ``/``. ``object_lock_days``: retention in days from the
    upload time (UTC). ``max_attempts``: botocore's total attempts per request.
    ``connect_timeout``/``read_timeout``: seconds. ``signing_key_file``: an
    Ed25519 private key (PEM) that signs ``manifest.json``, e.g. a file of a
    mounted Kubernetes Secret; its contents are never logged.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    bucket: str | None = None
    prefix: str = ""
    local_dir: Path = Path("published")
    endpoint_url: str | None = None
    region: str | None = None
    addressing_style: Literal["auto", "path", "virtual"] = "auto"
    verify_tls: bool = True
    ca_bundle: Path | None = None
    sse: Literal["AES256", "aws:kms"] | None = None
    kms_key_id: str | None = None
    object_lock_mode: Literal["GOVERNANCE", "COMPLIANCE"] | None = None
    object_lock_days: int | None = Field(default=None, gt=0, le=36500)
    spool_dir: Path = Field(default_factory=default_spool_dir)
    retry_mode: Literal["standard", "adaptive"] = "standard"
    max_attempts: int = Field(default=5, ge=1, le=20)
    connect_timeout: float = Field(default=10.0, gt=0, le=3600)
    read_timeout: float = Field(default=60.0, gt=0, le=3600)
    signing_key_file: Path | None = None

    # signing_key_file: signing_key_problem, at load (publish_problems)
    @field_validator("ca_bundle", mode="before")
    @classmethod
    def _a_path_not_a_key(cls, value: Any) -> Any:
        if (problem := file_text_problem(value)) is not None:
            raise ValueError(problem)
        return value

    @model_validator(mode="before")
    @classmethod
    def _no_credentials(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for key in data:
                if any(word in str(key).lower() for word in _CREDENTIAL_WORDS):
                    raise ValueError(
                        f"'{key}': credentials are not read from the configuration; "
                        "boto3's standard chain supplies them (AWS_ACCESS_KEY_ID/"
                        "AWS_SECRET_ACCESS_KEY, shared credentials file, web identity)"
                    )
        return data

    @model_validator(mode="after")
    def _consistent(self) -> PublishSettings:
        problems = consistency_problems(self.model_dump(), has_bucket=self.bucket is not None)
        if problems:
            raise FieldProblems(problems)  # each named by its field, never "publish"
        return self

    @classmethod
    def from_url(cls, url: str, **options: Any) -> PublishSettings:
        """Build settings from ``s3://BUCKET[/PREFIX]`` or a directory path/``file://`` URL.

        Raises:
            ValueError: the URL has another scheme or no bucket.
        """
        parsed = urlparse(url)
        if parsed.scheme == "s3":
            if not parsed.netloc:
                raise ValueError(f"publish URL {url!r} names no bucket")
            return cls(bucket=parsed.netloc, prefix=parsed.path.strip("/"), **options)
        if parsed.scheme == "file":
            return cls(local_dir=Path(parsed.path), **options)
        if parsed.scheme:
            raise ValueError(f"publish URL {url!r}: only s3:// and directories are supported")
        return cls(local_dir=Path(url), **options)

    @property
    def is_s3(self) -> bool:
        """True when publishing to a bucket, False for a local directory."""
        return self.bucket is not None

    def describe(self) -> str:
        """Human-readable target, e.g. ``s3://audit/evidence (http://127.0.0.1:8333)``."""
        if self.bucket is None:
            return str(self.local_dir / self.prefix) if self.prefix else str(self.local_dir)
        url = f"s3://{self.bucket}/{self.prefix}".rstrip("/")
        return f"{url} ({self.endpoint_url})" if self.endpoint_url else url

    def target_id(self) -> str:
        """Short stable id of the destination (bucket+prefix+endpoint or directory)."""
        if self.bucket is None:
            ident = f"file:{self.local_dir.resolve()}/{self.prefix}"
        else:
            ident = f"s3:{self.endpoint_url or ''}/{self.bucket}/{self.prefix}"
        return hashlib.sha256(ident.encode()).hexdigest()[:12]


def file_text_problem(value: Any) -> str | None:
    """Why ``value``, a file path setting (a key, a certificate bundle, a credentials file),
    is the file's text rather than its path, else None. A key pasted in place of its path was
    quoted back by "cannot read" or "does not exist" on stderr and kept in spool entries
    (fz27); the problem quotes nothing."""
    if not isinstance(value, str):
        return None
    if "\n" in value or "-----BEGIN" in value or "aws_secret_access_key" in value.lower():
        return (
            "holds PEM or credentials text, not a file path: write it to a file (a mounted "
            "Secret) and name that file"
        )
    return None


def endpoint_problem(url: str) -> str | None:
    """Why ``url`` cannot be an S3 endpoint setting, else None: it carries credentials
    (``user:password@``) or a query or fragment (a token such as ``?X-Amz-Signature=``).
    Either would be kept in spool entries, logs and report text, which hold no secret;
    credentials come only from boto3's chain (an S3 endpoint takes no query of its own).
    It is no ``http://`` or ``https://`` URL with a host (botocore refuses it at the first
    request: ``--endpoint-url ftp://x`` spooled the run, exit 3, to be retried for ever;
    trial ux30)."""
    parsed = urlparse(url)
    if parsed.scheme.lower() not in ("http", "https") or not parsed.hostname:
        return "endpoint_url must be an http:// or https:// URL with a host"
    if "@" in (parsed.netloc or ""):
        return "endpoint_url must not contain credentials (user:password@)"
    if parsed.query or parsed.fragment or "?" in url or "#" in url:
        return "endpoint_url must not carry a query or fragment (tokens belong in credentials)"
    return None


def consistency_problems(values: dict[str, Any], *, has_bucket: bool) -> list[tuple[str, str]]:
    """Cross-field rules of a publish target, every one that is broken (raw or typed values),
    as ``(field, message)``: the field to change (the one set in vain, or the one missing)."""
    problems: list[tuple[str, str]] = []
    sse, lock = values.get("sse"), values.get("object_lock_mode")
    if not has_bucket and (sse or lock):
        problems.append(
            (
                "sse" if sse else "object_lock_mode",
                "sse and object_lock_mode need an S3 bucket, not a local directory",
            )
        )
    if values.get("kms_key_id") and sse != "aws:kms":
        problems.append(("kms_key_id", "kms_key_id requires sse: aws:kms"))
    if (lock is None) != (values.get("object_lock_days") is None):
        problems.append(
            (
                "object_lock_mode" if lock is None else "object_lock_days",
                "object_lock_mode and object_lock_days must be set together",
            )
        )
    if values.get("ca_bundle") is not None and values.get("verify_tls") is False:
        problems.append(("verify_tls", "ca_bundle is set but verify_tls is false; choose one"))
    endpoint = values.get("endpoint_url")
    if isinstance(endpoint, str) and (problem := endpoint_problem(endpoint)) is not None:
        problems.append(("endpoint_url", problem))
    prefix = values.get("prefix")
    if isinstance(prefix, str) and prefix != prefix.strip("/"):
        problems.append(("prefix", "prefix must not start or end with '/'"))
    return problems


def signing_key_problem(path: Path) -> str | None:
    """Why ``path`` cannot sign manifests (unreadable, not an unencrypted PEM private key,
    not Ed25519), or None. Checked when the config loads, not at the first publish (trial
    ux27: a missing key surfaced only when a run was sealed); the key is never shown."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    text = str(path)
    if "-----BEGIN" in text or "\n" in text or len(text) > 4096:
        # the key pasted in place of its file's path: name the field, quote nothing
        return "holds key text, not the path of a key file (the value is not shown)"
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except OSError as exc:
        return f"signing key {path}: cannot read: {exc.strerror or exc}"
    except (ValueError, TypeError):
        return (
            f"signing key {path}: not an unencrypted PEM private key "
            "(create one with: openssl genpkey -algorithm ed25519 -out signing.pem)"
        )
    if not isinstance(key, Ed25519PrivateKey):
        return f"signing key {path}: a {type(key).__name__}, not an Ed25519 key"
    return None


def publish_problems(publish: Any, schedules: Any) -> list[tuple[str, str]]:
    """Every problem of the ``publish:`` section and of ``schedules[].publish``, by field path.

    ``publish`` is the raw section (a mapping with :class:`PublishSettings` fields, or
    ``url`` instead of ``bucket``/``prefix``/``local_dir``); ``schedules`` the raw list.
    A schedule with ``publish: true`` or ``period_report: true`` and no ``publish:``
    section is a problem.
    """
    problems: list[tuple[str, str]] = []
    if publish is not None and not isinstance(publish, dict):
        problems.append(("publish", "must be a mapping"))
    elif publish is not None:
        values = dict(publish)
        url = values.pop("url", None)
        try:
            if url is not None and not isinstance(url, str):
                problems.append(("publish.url", "must be a string"))
            elif url is not None:
                PublishSettings.from_url(url, **values)
            else:
                PublishSettings.model_validate(values)
        except ValidationError as exc:
            fields = [e for e in exc.errors() if e["loc"]]
            for err in exc.errors():
                message = str(err["msg"]).removeprefix("Value error, ")
                if err["type"] == "extra_forbidden":
                    message = "unknown field (not a publish setting; check its spelling)"
                problems += [
                    (f"publish.{where}" if where else "publish", text)
                    for where, text in error_problems(err, message)
                ]
            if fields:  # pydantic skips the cross-field rules then: report them as well
                has_bucket = bool(values.get("bucket")) or str(url or "").startswith("s3://")
                problems += [
                    (f"publish.{f}", p)
                    for f, p in consistency_problems(values, has_bucket=has_bucket)
                ]
        except ValueError as exc:
            problems.append(("publish.url", str(exc)))
        key_file = values.get("signing_key_file")
        if isinstance(key_file, str | Path):
            problem = signing_key_problem(Path(key_file))
            if problem:
                problems.append(("publish.signing_key_file", problem))
    if publish is None and isinstance(schedules, list | tuple):
        for i, sched in enumerate(schedules):
            if isinstance(sched, dict) and sched.get("publish") is True:
                problems.append(
                    (
                        f"schedules.{i}.publish",
                        "true, but the config has no publish: section naming a target",
                    )
                )
            if isinstance(sched, dict) and sched.get("period_report") is True:
                problems.append(
                    (
                        f"schedules.{i}.period_report",
                        "true, but the config has no publish: section: the period report "
                        "reads the runs archived there",
                    )
                )
    return problems
