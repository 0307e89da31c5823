"""Recovery cards: one JSON file per VM, ``recovery-cards/<namespace>/<vm>.json``.

Each file is the VM's ``recovery_card`` from report.json as is (the engine
resolved it) plus an ``audit`` block naming the run it came from, so a card read
alone (printed and taken to a restore) says when it was true and whether that
audit was complete: ``run_id``, ``audit_time`` (RFC 3339 UTC), ``cluster``,
``tool_version``, ``audit_complete`` (the run's ``complete``), ``incomplete_checks``,
the VM's ``readiness`` and ``unknown_checks`` (its ERROR findings: not seen, never a
pass) and, when set, ``at_after_input`` (the cluster was read before ``audit_time``).
Written as deterministic JSON: sorted keys, two-space indent, UTF-8, trailing newline. Names become path segments only when they are valid
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

from auditor.envelope.model import AuditReport, RecoveryCard, VmEntry
from auditor.models import Status

__all__ = ["CARDS_DIR", "card_audit", "card_json", "safe_segment", "write_cards"]

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


def card_audit(report: AuditReport, vm: VmEntry) -> dict[str, object]:
    """Return the ``audit`` block of ``vm``'s card file: the run it came from and how complete.

    ``audit_complete`` is the run's ``complete`` (false with any collection problem or
    incomplete check); ``unknown_checks`` lists, sorted, the VM's checks that gave ERROR.
    ``note`` says in one sentence that the card held at ``audit_time`` and where the full
    report is, so a printed card is never read as the VM's state today.
    """
    run = report.run
    unknown = sorted(f.check_id for f in vm.findings if f.status == Status.ERROR)
    note = (
        f"recovery card of {vm.namespace}/{vm.name} as audited at {run.audit_time} "
        f"(run {run.id}); "
        + (
            "the audit was complete"
            if run.complete
            else "the audit was INCOMPLETE: some inputs were missing or unreadable"
        )
        + "; the full findings are in that run's report.json"
    )
    block: dict[str, object] = {
        "run_id": run.id,
        "audit_time": run.audit_time,
        "cluster": report.cluster.name,
        "tool_version": run.tool_version,
        "audit_complete": run.complete,
        "incomplete_checks": list(run.incomplete_checks),
        "readiness": vm.readiness.value,
        "unknown_checks": unknown,
        "note": note,
    }
    if run.at_after_input is not None:
        block["at_after_input"] = run.at_after_input
    return block


def card_json(card: RecoveryCard, audit: dict[str, object] | None = None) -> bytes:
    """Return the deterministic JSON bytes of one recovery card (with its ``audit`` block)."""
    doc = card.model_dump(mode="json")
    if audit is not None:
        doc["audit"] = audit
    return (json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def write_cards(report: AuditReport, out_dir: Path) -> list[Path]:
    """Write each VM's recovery card under ``out_dir/recovery-cards``; return paths in VM order.

    Raises OSError when a file cannot be written.
    """
    paths = []
    for vm in report.vms:
        path = out_dir / CARDS_DIR / safe_segment(vm.namespace) / f"{safe_segment(vm.name)}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(card_json(vm.recovery_card, card_audit(report, vm)))
        paths.append(path)
    return paths
