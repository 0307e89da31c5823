"""Recovery cards: one JSON file per VM, ``recovery-cards/<namespace>/<vm>.json``.

Each file is the VM's ``recovery_card`` from report.json as is (the engine
resolved it), written as deterministic JSON: sorted keys, two-space indent,
UTF-8, trailing newline. Names become path segments only when they are valid
Kubernetes names; anything else (``..``, ``/``, markup) is percent-encoded
behind a ``_`` prefix, so no report can write outside ``recovery-cards/``.
A segment is at most 200 characters (``<vm>.json`` must fit in a file system's
255-byte name limit, and a valid name may be 253 characters long): a longer one
keeps its first characters and ends in ``~`` and a hash of the whole name, so two
long names never share a card.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from urllib.parse import quote

from auditor.envelope.model import AuditReport, RecoveryCard

__all__ = ["CARDS_DIR", "card_json", "safe_segment", "write_cards"]

CARDS_DIR = "recovery-cards"
_K8S_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")
_MAX_SEGMENT = 200


def safe_segment(name: str) -> str:
    """Return ``name`` as one safe path segment (unchanged when it is a valid Kubernetes name)."""
    if _K8S_NAME.match(name) and ".." not in name and len(name) <= _MAX_SEGMENT:
        return name
    if _K8S_NAME.match(name) and ".." not in name:
        encoded = name
    else:
        encoded = "_" + quote(name, safe="").replace(".", "%2E")
    if len(encoded) <= _MAX_SEGMENT:
        return encoded
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return encoded[: _MAX_SEGMENT - len(digest) - 1] + "~" + digest


def card_json(card: RecoveryCard) -> bytes:
    """Return the deterministic JSON bytes of one recovery card."""
    doc = card.model_dump(mode="json")
    return (json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def write_cards(report: AuditReport, out_dir: Path) -> list[Path]:
    """Write each VM's recovery card under ``out_dir/recovery-cards``; return paths in VM order.

    Raises OSError when a file cannot be written.
    """
    paths = []
    for vm in report.vms:
        path = out_dir / CARDS_DIR / safe_segment(vm.namespace) / f"{safe_segment(vm.name)}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(card_json(vm.recovery_card))
        paths.append(path)
    return paths
