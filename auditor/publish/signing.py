"""Ed25519 signatures of ``manifest.json`` (the ``cryptography`` package).

The signature lives beside the manifest as ``manifest.json.sig``, a small JSON
document (sorted keys, trailing newline)::

    {"algorithm": "Ed25519", "key_id": "<16 hex>", "signature": "<base64, 64 bytes>"}

``key_id`` is the first 16 hex digits of the SHA-256 of the raw 32-byte public
key, so a verifier holding several public keys (during a key rotation) knows
which one signed. The signed message is the exact bytes of ``manifest.json``.
Keys are PEM files: PKCS#8 private keys (``openssl genpkey -algorithm ed25519``)
and SubjectPublicKeyInfo public keys (``openssl pkey -pubout``). The private
key's path may be a mounted Kubernetes Secret; its bytes are never logged.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from auditor.config.keys import read_public_key
from auditor.publish.jsondoc import load_object, text_field
from auditor.publish.manifest import SIGNATURE_NAME

__all__ = [
    "SIGNATURE_NAME",
    "SigningError",
    "key_id",
    "load_private_key",
    "load_public_key",
    "sign_manifest",
    "check_signature",
    "parse_signature",
]


class SigningError(Exception):
    """A key file cannot be read or is not an Ed25519 key (the message names the file)."""


def key_id(public_key: Ed25519PublicKey) -> str:
    """First 16 hex digits of SHA-256 over the raw 32-byte public key."""
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


def load_private_key(path: Path) -> Ed25519PrivateKey:
    """Read an unencrypted PEM (PKCS#8) Ed25519 private key.

    Raises:
        SigningError: unreadable file, not PEM, encrypted, or not Ed25519.
    """
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except OSError as exc:
        raise SigningError(f"signing key {path}: cannot read: {exc.strerror or exc}") from None
    except (ValueError, TypeError):
        raise SigningError(
            f"signing key {path}: not an unencrypted PEM private key "
            "(create one with: openssl genpkey -algorithm ed25519 -out signing.pem)"
        ) from None
    if not isinstance(key, Ed25519PrivateKey):
        raise SigningError(f"signing key {path}: a {type(key).__name__}, not an Ed25519 key")
    return key


def load_public_key(path: Path) -> Ed25519PublicKey:
    """Read a PEM Ed25519 public key (:func:`auditor.config.keys.read_public_key`).

    Raises:
        SigningError: unreadable file, not PEM, or not Ed25519.
    """
    try:
        return read_public_key(path)
    except ValueError as exc:
        raise SigningError(str(exc)) from None


def sign_manifest(manifest: bytes, key: Ed25519PrivateKey) -> bytes:
    """Return the ``manifest.json.sig`` document for the exact ``manifest`` bytes."""
    doc = {
        "algorithm": "Ed25519",
        "key_id": key_id(key.public_key()),
        "signature": base64.b64encode(key.sign(manifest)).decode(),
    }
    return (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode()


def parse_signature(signature: bytes) -> tuple[str, bytes]:
    """Return ``(key_id, signature bytes)`` of a ``manifest.json.sig`` document.

    Raises:
        ValueError: not a JSON object, a field missing or of another type, an algorithm
            other than Ed25519, or a signature that is not base64 of 64 bytes (named by
            field; before, a missing field read as ``'key_id'``, a KeyError's text).
    """
    doc = load_object(signature)
    if doc.get("algorithm") != "Ed25519":
        raise ValueError(f"field 'algorithm' is {doc.get('algorithm')!r}, not 'Ed25519'")
    kid = text_field(doc, "key_id")
    try:
        sig = base64.b64decode(text_field(doc, "signature"), validate=True)
    except binascii.Error:
        raise ValueError("field 'signature' is not base64") from None
    if len(sig) != 64:
        raise ValueError(f"field 'signature' holds {len(sig)} bytes, not an Ed25519 signature's 64")
    return kid, sig


def check_signature(
    manifest: bytes, signature: bytes | None, keys: Sequence[Ed25519PublicKey]
) -> tuple[bool, str]:
    """Check ``signature`` (a ``manifest.json.sig`` document) over ``manifest``.

    Returns ``(ok, detail)``: ok only when a key in ``keys`` with the document's
    ``key_id`` verifies it; ``detail`` says which key or what is wrong.
    """
    if signature is None:
        return False, f"no {SIGNATURE_NAME}: the manifest is not signed"
    try:
        kid, sig = parse_signature(signature)
    except ValueError as exc:
        return False, f"{SIGNATURE_NAME} is malformed: {exc}"
    matching = [k for k in keys if key_id(k) == kid]
    if not matching:
        known = ", ".join(key_id(k) for k in keys) or "none"
        return False, f"signed by key {kid}, which is not among the public keys given ({known})"
    try:
        matching[0].verify(sig, manifest)
    except InvalidSignature:
        return False, f"BAD SIGNATURE: the manifest does not match key {kid}'s signature"
    return True, f"signature valid (Ed25519, key {kid})"
