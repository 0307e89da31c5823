"""Shared helpers for the config/policy/waiver/service tests (not a conftest)."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]


def corpus_dir() -> Path:
    """``shared/corpus`` beside the clone (skips the caller where absent)."""
    from tests.conftest import find_corpus

    return find_corpus()


def write_yaml(path: Path, data: Any) -> Path:
    """Write ``data`` as YAML to ``path`` and return it."""
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def free_port() -> int:
    """Return a TCP port that was free on 127.0.0.1 a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def waiver(**changes: Any) -> dict[str, Any]:
    """Return a valid waiver mapping with ``changes`` applied (None deletes a key)."""
    base: dict[str, Any] = {
        "id": "W-1",
        "check": "RR-BKP-001",
        "selector": {"namespace": "eng-*"},
        "reason": "rebuilt from templates",
        "approver": "jane@corp.example",
        "created": "2026-11-01",
        "expires": "2027-01-01",
    }
    for key, value in changes.items():
        if value is None:
            base.pop(key, None)
        else:
            base[key] = value
    return base
