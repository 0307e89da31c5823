"""The one orchestration path: source data -> inventory -> checks -> report envelope.

The CLI's ``run``, the scheduler's jobs and the tests all call :func:`run_audit`
and :func:`write_artifacts`; nothing else wires the layers together.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from auditor.config import AuditSettings
from auditor.engine import evaluate
from auditor.envelope import AuditReport, dump_report_json, dump_report_schema
from auditor.envelope.build import build_envelope, resolve_owner
from auditor.sources.base import ClusterData
from auditor.yamlstrict import paused_gc

__all__ = ["run_audit", "dump_report_json", "write_artifacts", "FORMATS", "UnknownOwnerError"]

#: Every artifact format ``write_artifacts`` knows, in the order they are written.
FORMATS = ("json", "html", "pdf", "csv", "cards")


class UnknownOwnerError(ValueError):
    """``owner`` owns none of the audited VMs.

    Attributes:
        owner: the owner asked for.
        known: every owner of an audited VM -> its number of VMs, sorted by owner.
    """

    def __init__(self, owner: str, known: dict[str, int]) -> None:
        self.owner = owner
        self.known = known
        names = ", ".join(f"{k} ({n} VMs)" for k, n in known.items()) or "none"
        super().__init__(f"unknown owner {owner!r}; known owners: {names}")


def run_audit(
    data: ClusterData, settings: AuditSettings, *, at: datetime, owner: str | None = None
) -> AuditReport:
    """Audit ``data`` at instant ``at`` (UTC) and return the report envelope.

    ``owner`` limits the report to one owner's VMs. Never raises for bad
    cluster data: it becomes collection problems and ERROR findings. When
    ``settings.backup_storage`` is set and ``data.backup_contents`` is still
    None, the BackupStorageLocation buckets are read first (read-only, S3
    requests; :func:`auditor.sources.bucket.read_backup_storage`).

    Raises:
        UnknownOwnerError: ``owner`` owns none of the audited VMs.
    """
    if settings.backup_storage is not None and data.backup_contents is None:
        from auditor.sources.bucket.load import read_backup_storage

        read_backup_storage(data, settings)
    with paused_gc():  # see paused_gc: keeps a 10,000-VM audit linear in the VM count
        result = evaluate(data, settings, at=at)
        if owner is not None:
            owners = Counter(resolve_owner(settings, result, vm) for vm in result.vms)
            if owner not in owners:
                raise UnknownOwnerError(owner, dict(sorted(owners.items())))
        return build_envelope(data, result, settings, at=at, owner=owner)


def write_artifacts(
    report: AuditReport,
    out_dir: Path,
    formats: Sequence[str],
    *,
    trend: Mapping[str, Any] | None = None,
) -> list[Path]:
    """Write the requested formats into ``out_dir``; return the paths written.

    ``json`` writes ``report.json`` and its JSON Schema ``report.schema.json``.

    Raises:
        ValueError: an unknown format name.
        OSError: ``out_dir`` cannot be written.
    """
    unknown = sorted(set(formats) - set(FORMATS))
    if unknown:
        raise ValueError(f"unknown format(s) {', '.join(unknown)}; known: {', '.join(FORMATS)}")
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    if "json" in formats:
        for name, data in (
            ("report.json", dump_report_json(report)),
            ("report.schema.json", dump_report_schema()),
        ):
            path = out_dir / name
            path.write_bytes(data)
            written.append(path)
    others = [f for f in formats if f != "json"]
    if others:
        from auditor.report.writers import write_formats

        written += write_formats(report, out_dir, others, trend=trend)
    return written
