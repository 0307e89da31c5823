"""Verify a run against its ``manifest.json``: a run folder or a published run in a store.

:func:`verify_run` reads the manifest, then every object under the run's
prefix: it recomputes size and SHA-256 of each artifact from the bytes (never
trusting a stored checksum), names every missing, extra or changed object,
checks the Ed25519 signature when public keys are given, and, where the bucket
has Object Lock enabled, that every object carries retention that has not
expired. Raises :class:`VerifyReadError` only when the manifest itself cannot be
read (exit 2 in ``auditor verify``); everything else is a finding of the result.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from auditor.publish.errors import PublishError
from auditor.publish.jsondoc import artifact_list, load_object
from auditor.publish.manifest import MANIFEST_NAME, SIGNATURE_NAME, sha256_hex
from auditor.publish.signing import check_signature, parse_signature
from auditor.publish.store import ObjectStore

__all__ = ["VerifyReadError", "VerifyResult", "verify_run"]


class VerifyReadError(Exception):
    """The run's ``manifest.json`` cannot be read or parsed (the message names it)."""


@dataclass
class VerifyResult:
    """What :func:`verify_run` found.

    ``missing``/``extra``/``changed``: artifact paths (``changed`` entries carry
    ``path: actual vs manifest``). ``retention``: objects whose Object Lock
    retention is absent or expired (``None`` when the store has no Object Lock).
    ``signature_ok``: None when no public key was given; ``signature`` the detail.
    """

    location: str
    run_id: str
    checked: int = 0
    missing: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    retention: list[str] | None = None
    signature_ok: bool | None = None
    signature: str = ""

    @property
    def clean(self) -> bool:
        """True when nothing is missing, extra, changed, unretained or badly signed."""
        return not (
            self.missing
            or self.extra
            or self.changed
            or self.retention
            or self.signature_ok is False
        )

    def lines(self) -> list[str]:
        """Human-readable findings, one per line, problems first."""
        out = [f"MISSING {p}" for p in self.missing]
        out += [f"EXTRA {p}" for p in self.extra]
        out += [f"CHANGED {p}" for p in self.changed]
        out += [f"RETENTION {p}" for p in self.retention or []]
        if self.signature:
            out.append(("SIGNATURE " if self.signature_ok is False else "") + self.signature)
        return out


def _manifest(store: ObjectStore) -> tuple[bytes, dict[str, Any]]:
    try:
        data = store.get(MANIFEST_NAME)
    except PublishError as exc:
        raise VerifyReadError(f"cannot read {store.url_for(MANIFEST_NAME)}: {exc}") from None
    if data is None:
        raise VerifyReadError(
            f"{store.url_for(MANIFEST_NAME)} does not exist: not a run folder or published run"
        )
    try:
        doc = load_object(data)
        artifact_list(doc)
    except ValueError as exc:
        raise VerifyReadError(f"{store.url_for(MANIFEST_NAME)} is not a manifest: {exc}") from None
    return data, doc


def verify_run(
    store: ObjectStore,
    *,
    public_keys: Sequence[Ed25519PublicKey] = (),
    lock_enabled: bool = False,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> VerifyResult:
    """Verify the run whose objects sit at the root of ``store`` (keys = artifact paths).

    ``lock_enabled``: the bucket has Object Lock, so every object must carry
    retention ending after ``clock()``.

    Raises:
        VerifyReadError: ``manifest.json`` is missing, unreadable or malformed,
            or the store cannot be listed.
    """
    data, doc = _manifest(store)
    run_id = str((doc.get("run") or {}).get("id", "?"))
    location = store.url_for(MANIFEST_NAME)[: -len(MANIFEST_NAME)]
    result = VerifyResult(location=location, run_id=run_id)
    try:
        present = set(store.list_keys(""))
    except PublishError as exc:
        raise VerifyReadError(f"cannot list {location}: {exc}") from None
    listed = {str(a["path"]) for a in doc["artifacts"]}
    result.extra = sorted(present - listed - {MANIFEST_NAME, SIGNATURE_NAME})
    retention: list[str] = []
    now = clock()
    for art in doc["artifacts"]:
        path = str(art["path"])
        try:
            body = store.get(path)
            info = store.stat(path) if lock_enabled and body is not None else None
        except PublishError as exc:
            result.changed.append(f"{path}: cannot be read: {exc}")
            continue
        if body is None:
            result.missing.append(path)
            continue
        result.checked += 1
        digest = sha256_hex(body)
        if len(body) != art["size"] or digest != art["sha256"]:
            result.changed.append(
                f"{path}: size {len(body)}, sha256 {digest}; manifest says size "
                f"{art['size']}, sha256 {art['sha256']}"
            )
        if info is not None:
            until = info.retain_until
            if info.lock_mode is None or until is None:
                retention.append(f"{path}: no Object Lock retention")
            elif until <= now:
                retention.append(f"{path}: retention ended {until.isoformat()}")
    if lock_enabled:
        for name in sorted({MANIFEST_NAME, SIGNATURE_NAME} & present):
            try:
                info = store.stat(name)
            except PublishError as exc:
                retention.append(f"{name}: cannot be read: {exc}")
                continue
            if info is not None and (info.lock_mode is None or info.retain_until is None):
                retention.append(f"{name}: no Object Lock retention")
            elif info is not None and info.retain_until is not None and info.retain_until <= now:
                retention.append(f"{name}: retention ended {info.retain_until.isoformat()}")
        result.retention = retention
    if public_keys:
        try:
            sig = store.get(SIGNATURE_NAME)
        except PublishError as exc:
            sig = None
            result.signature = f"cannot read {SIGNATURE_NAME}: {exc}"
        ok, detail = check_signature(data, sig, public_keys)
        result.signature_ok = ok
        result.signature = result.signature or detail
    elif SIGNATURE_NAME in present:
        try:
            parse_signature(store.get(SIGNATURE_NAME) or b"")
        except (ValueError, PublishError) as exc:
            # not "signed": a file that is no signature proves nothing (trial ux32)
            result.signature = (
                f"{SIGNATURE_NAME} is malformed ({exc}); signature not checked (give --public-key)"
            )
        else:
            result.signature = "signed; signature not checked (give --public-key)"
    return result
