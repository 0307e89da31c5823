"""Recovery cards: one JSON file per VM, ``recovery-cards/<namespace>/<vm>.json``.

Each file is the VM's ``recovery_card`` from report.json as is (the engine
resolved it), written as deterministic JSON: sorted keys, two-space indent,
UTF-8, trailing newline. Names become path segments only when they are valid
Kubernetes names; anything else (``..``, ``/``, markup) is percent-encoded
behind a ``_`` prefix, so no report can write outside ``recovery-cards/``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import quote

from auditor.envelope.model import AuditReport, RecoveryCard

__all__ = ["CARDS_DIR", "card_json", "safe_segment", "write_cards"]

CARDS_DIR = "recovery-cards"
_K8S_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")


def safe_segment(name: str) -> str:
    """Return ``name`` as one safe path segment (unchanged when it is a valid Kubernetes name)."""
    if _K8S_NAME.match(name) and ".." not in name:
        return name
    return "_" + quote(name, safe="").replace(".", "%2E")[:200]


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
