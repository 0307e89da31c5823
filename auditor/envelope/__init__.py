"""The report envelope: the typed :class:`AuditReport`, its JSON form and its JSON Schema.

The builder (:mod:`auditor.envelope.build`) sits with the engine; this package's
top level only holds the model, so renderers and readers of report.json import
it without pulling in the checks.
"""

from __future__ import annotations

import weakref
from pathlib import Path
from typing import Any

from auditor.envelope.model import SCHEMA_VERSION, AuditReport, report_schema
from auditor.jsonfast import dumps_report, report_pieces
from auditor.yamlstrict import paused_gc

__all__ = [
    "SCHEMA_VERSION",
    "AuditReport",
    "report_schema",
    "dump_report_json",
    "write_report_json",
    "report_document",
    "seed_report_document",
    "dump_report_schema",
    "load_report",
]


def _dump(doc: Any) -> bytes:
    """Sorted keys, 2-space indent, UTF-8, trailing newline (orjson, stdlib bytes)."""
    return dumps_report(doc)


#: id(report) -> (a weak reference to it, its JSON document); an entry leaves with its report.
_DOCUMENTS: dict[int, tuple[weakref.ref[AuditReport], dict[str, Any]]] = {}


def report_document(report: AuditReport) -> dict[str, Any]:
    """``report.model_dump(mode="json")``, made once per report and shared; do not mutate it.

    The report is immutable (frozen), so its JSON form never changes: the CLI's summary,
    the trend and report.json all read this one document (a 10,000-VM report is a
    million dicts, seconds to build). :func:`seed_report_document` gives it its VM entries'
    forms when they were made beforehand.
    """
    hit = _DOCUMENTS.get(id(report))
    if hit is not None and hit[0]() is report:
        return hit[1]
    with paused_gc():  # a million short-lived dicts at 10,000 VMs: see paused_gc
        return _remember(report, report.model_dump(mode="json"))


def seed_report_document(report: AuditReport, vm_documents: list[dict[str, Any]]) -> None:
    """Make :func:`report_document` of ``report`` from its VM entries' JSON forms, made
    beforehand (``TypeAdapter(list[VmEntry]).dump_python(report.vms, mode="json")``, made a
    run of VMs at a time while the VMs are checked): only the rest of the report is dumped
    here. ``vms`` is the envelope's last field, so the document is the same, key
    order included.

    Raises:
        ValueError: not one document per VM entry.
    """
    if len(vm_documents) != len(report.vms):
        raise ValueError(f"{len(vm_documents)} VM documents for {len(report.vms)} VM entries")
    with paused_gc():
        doc = report.model_dump(mode="json", exclude={"vms"})
    doc["vms"] = vm_documents
    _remember(report, doc)


def _remember(report: AuditReport, doc: dict[str, Any]) -> dict[str, Any]:
    """Keep ``doc`` as the JSON form of ``report`` for as long as the report lives."""
    key = id(report)

    def forget(_: weakref.ref[AuditReport]) -> None:
        _DOCUMENTS.pop(key, None)

    _DOCUMENTS[key] = (weakref.ref(report, forget), doc)
    return doc


def dump_report_json(report: AuditReport) -> bytes:
    """Serialise deterministically: sorted keys, 2-space indent, UTF-8, trailing newline."""
    return b"".join(report_pieces(report_document(report), "vms"))


def write_report_json(report: AuditReport, path: Path) -> None:
    """Write :func:`dump_report_json` of ``report`` to ``path`` a VM entry at a time
    (:func:`auditor.jsonfast.report_pieces`): the report's whole text is never in memory,
    which at 50,000 VMs is 1.6 GB on top of the report itself.

    Raises:
        OSError: ``path`` cannot be written.
    """
    with path.open("wb", buffering=1 << 20) as out:
        for piece in report_pieces(report_document(report), "vms"):
            out.write(piece)


def dump_report_schema() -> bytes:
    """The JSON Schema of report.json, serialised like the report (``report.schema.json``)."""
    return _dump(report_schema())


def load_report(raw: bytes | str) -> AuditReport:
    """Parse and validate a report.json document.

    Raises:
        pydantic.ValidationError: not JSON, or not the report.json shape.
    """
    return AuditReport.model_validate_json(raw)
