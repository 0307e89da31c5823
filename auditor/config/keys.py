"""Reading the Ed25519 public keys that verify signed runs (``manifest.json.sig``).

One reader for the settings, which check a configured key file when they are loaded, and for
:mod:`auditor.publish.signing`, which verifies with it.
"""

from __future__ import annotations

from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

__all__ = ["read_public_key"]


def read_public_key(path: Path) -> Ed25519PublicKey:
    """The PEM Ed25519 public key in file ``path``.

    Raises:
        ValueError: the file cannot be read, holds no PEM public key, or another kind of
            key (the message names the file and says how to make the right one).
    """
    try:
        key = serialization.load_pem_public_key(path.read_bytes())
    except OSError as exc:
        raise ValueError(f"public key {path}: cannot read: {exc.strerror or exc}") from None
    except (ValueError, TypeError):
        raise ValueError(
            f"public key {path}: not a PEM public key (openssl pkey -in signing.pem -pubout)"
        ) from None
    if not isinstance(key, Ed25519PublicKey):
        raise ValueError(f"public key {path}: a {type(key).__name__}, not an Ed25519 key")
    return key
