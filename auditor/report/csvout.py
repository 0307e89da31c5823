"""CSV exports: ``findings.csv`` (one row per FAIL/ERROR finding) and ``vms.csv`` (one row per VM).

For spreadsheets: UTF-8, RFC 4180 quoting, CRLF line ends, a header row, rows
in a fixed order, so the same report.json gives byte-identical files. Every
cell goes through :func:`auditor.report.csvsafe.csv_cell`: one that a spreadsheet
would run as a formula gets a leading apostrophe (cluster names and messages are
attacker-influenced).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from typing import Any

from auditor.envelope.model import AuditReport, FindingEntry
from auditor.report.csvsafe import csv_cell
from auditor.report.formatting import SEVERITY_ORDER, fmt_evidence, fmt_value
from auditor.report.vmview import vm_row

__all__ = ["FINDINGS_COLUMNS", "VMS_COLUMNS", "findings_csv", "vms_csv"]

FINDINGS_COLUMNS = (
    "owner",
    "namespace",
    "vm",
    "readiness",
    "check_id",
    "status",
    "severity",
    "title",
    "message",
    "remediation",
    "evidence",
    "root_cause",
    "basis",
    "audit_complete",
    "audit_time",
    "run_id",
)
VMS_COLUMNS = (
    "namespace",
    "vm",
    "owner",
    "os",
    "readiness",
    "newest_usable_backup",
    "backup_completed",
    "backup_data_time",
    "backup_age_hours",
    "rpo_hours",
    "within_rpo",
    "restore_points",
    "backup_expires",
    "backup_expires_from",
    "identity_gaps",
    "failing_checks",
    "uid",
    "inferred_checks",
    "waived_checks",
    "unknown_checks",
    "backup_state",
    "audit_complete",
    "audit_time",
    "run_id",
)


def _cell(value: Any) -> str:
    text = "" if value is None else (value if isinstance(value, str) else fmt_value(value))
    return str(csv_cell(text))


def _write(columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> bytes:
    buf = io.StringIO(newline="")
    writer = csv.writer(buf, lineterminator="\r\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_cell(v) for v in row])
    return buf.getvalue().encode("utf-8")


def _sev_rank(severity: Any) -> int:
    return SEVERITY_ORDER.index(severity) if severity in SEVERITY_ORDER else len(SEVERITY_ORDER)


def findings_csv(report: AuditReport) -> bytes:
    """Return ``findings.csv``: FAIL/ERROR findings of every VM, then platform findings.

    Rows sort by owner, namespace, VM, severity (critical first), check id.
    Platform findings have VM ``(platform)`` and no owner. ``basis`` is ``observed`` or
    ``inferred`` as the check said (empty when it did not), so an inferred FAIL is labelled
    inferred here as in the HTML. ``audit_complete`` (``true`` or
    ``false``, the run's ``complete``) repeats on every row, so a row taken out of the file
    still says whether the audit that wrote it read everything; ``audit_time`` and ``run_id``
    (the run's) say when it was true and which run wrote it.
    """
    checks = {c.id: c for c in report.checks}
    complete = "true" if report.run.complete else "false"
    rows: list[tuple[Any, ...]] = []
    entries: list[tuple[tuple[str, str, str, str], list[FindingEntry], dict[str, str]]] = [
        (
            (vm.owner, vm.namespace, vm.name, vm.readiness.value),
            vm.findings,
            {cid: c.id for c in vm.root_causes for cid in c.check_ids},
        )
        for vm in report.vms
    ]
    entries.append((("", "", "(platform)", ""), report.platform_findings, {}))
    for who, findings, causes in entries:
        for f in findings:
            if f.status.value not in ("FAIL", "ERROR"):
                continue
            check = checks.get(f.check_id)
            rows.append(
                (
                    *who,
                    f.check_id,
                    f.status.value,
                    f.severity.value,
                    check.title if check else "",
                    f.message,
                    f.remediation or (check.remediation if check else ""),
                    fmt_evidence(f.evidence),
                    causes.get(f.check_id, f.check_id.lower()),
                    f.basis.value if f.basis is not None else "",
                    complete,
                    report.run.audit_time,
                    report.run.id,
                )
            )
    rows.sort(key=lambda r: (str(r[0]), str(r[1]), str(r[2]), _sev_rank(r[6]), str(r[4])))
    return _write(FINDINGS_COLUMNS, rows)


def vms_csv(report: AuditReport) -> bytes:
    """Return ``vms.csv``: one row per VM in report order (namespace, name); ages in hours.

    ``failing_checks`` lists the VM's FAIL and ERROR checks; ``unknown_checks`` the ERROR
    ones among them (could not be evaluated: not seen, never a pass). ``within_rpo`` is
    ``yes``, ``no`` or ``unknown`` (never blank); ``backup_state`` is the HTML's label for the
    newest usable backup: ``within RPO``, ``exceeds RPO``, ``never backed up``, ``no disk data
    in any backup``, ``no complete restore point`` or ``unknown``. ``audit_complete``
    (``true``/``false``, the run's ``complete``) repeats on every row: a READY from an
    incomplete audit says so in its own row, and ``audit_time``/``run_id`` say when and from
    which run it was true. ``backup_expires`` is when Velero may delete the newest usable
    backup (UTC), ``backup_expires_from`` where that time comes from: ``status.expiration``
    (recorded) or ``spec.ttl`` (computed from the creation time: inferred); both blank
    without a usable backup or an expiry.
    """
    checks = {c.id: c for c in report.checks}
    complete = "true" if report.run.complete else "false"
    rows = []
    for i, vm in enumerate(report.vms):
        row = vm_row(i, vm, checks)
        backup = vm.backup
        newest = backup.newest_usable
        within = backup.within_rpo
        rows.append(
            (
                row.namespace,
                row.name,
                row.owner,
                row.os,
                row.readiness,
                newest.name if newest else "",
                (newest.completed or "") if newest else "",
                (newest.data_time or "") if newest else "",
                "" if newest is None or newest.age_hours is None else newest.age_hours,
                backup.rpo_hours,
                "unknown" if within is None else ("yes" if within else "no"),
                backup.restore_points,
                (newest.expires or "") if newest else "",
                (newest.expires_from or "") if newest else "",
                " ".join(row.identity_gaps),
                " ".join(row.failing_checks),
                vm.uid or "",
                " ".join(row.inferred),
                " ".join(row.waived),
                " ".join(sorted({f.check_id for f in vm.findings if f.status.value == "ERROR"})),
                row.rpo_label,
                complete,
                report.run.audit_time,
                report.run.id,
            )
        )
    return _write(VMS_COLUMNS, rows)
