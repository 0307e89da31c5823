"""Core value types: statuses, severities, findings and collection problems.

Everything the audit produces is built from these types and ends up in the one
typed report envelope (:class:`auditor.envelope.model.AuditReport`, serialised
as ``report.json``, see ``docs/report-schema.md``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from auditor.dictinit import direct_init

__all__ = [
    "Status",
    "Severity",
    "Readiness",
    "Basis",
    "Finding",
    "CollectionProblem",
    "readiness_of",
    "SEVERITY_ORDER",
    "FAMILIES",
    "CHECK_ID",
]

#: Check families: the code in a check id -> what it covers. The one place they are declared;
#: :data:`CHECK_ID`, the registry and the fixture test derive from it.
FAMILIES = {
    "BKP": "backup",
    "RST": "restore test",
    "FW": "firmware",
    "DSK": "disks",
    "NIC": "network interfaces",
    "NET": "networks",
    "STG": "storage",
    "PLT": "platform",
    "DEF": "VM definition",
}
#: A check id, ``RR-<FAMILY>-NNN`` (e.g. ``RR-BKP-001``), derived from :data:`FAMILIES`.
CHECK_ID = re.compile(rf"^RR-({'|'.join(FAMILIES)})-\d{{3}}$")


class Status(StrEnum):
    """Outcome of one check on one VM.

    ``ERROR`` means the check could not be evaluated (missing, forbidden or
    malformed input). It is never a PASS.
    """

    PASS = "PASS"
    FAIL = "FAIL"
    ERROR = "ERROR"
    NOT_APPLICABLE = "NOT_APPLICABLE"
    WAIVED = "WAIVED"


class Severity(StrEnum):
    """How much a FAIL matters for recovery, highest first."""

    CRITICAL = "critical"
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"
    INFO = "info"

    @property
    def rank(self) -> int:
        """Sort key: 0 for critical, 4 for info."""
        return SEVERITY_ORDER.index(self)


#: Severities worst first: the one order every sort and table uses.
SEVERITY_ORDER: tuple[Severity, ...] = tuple(Severity)


class Readiness(StrEnum):
    """Recovery readiness of one VM, derived from its findings (see :func:`readiness_of`)."""

    READY = "READY"
    AT_RISK = "AT_RISK"
    NOT_READY = "NOT_READY"
    UNKNOWN = "UNKNOWN"


class Basis(StrEnum):
    """What a finding's conclusion rests on.

    ``OBSERVED``: objects, counters or backup contents the auditor read say so
    (the evidence names them). ``INFERRED``: deduced from configuration (scope,
    capability) without a record that the thing happened; an inferred capture
    never by itself makes a VM READY.
    """

    OBSERVED = "observed"
    INFERRED = "inferred"


@direct_init
@dataclass(frozen=True, slots=True)
class Finding:
    """The result of one check on one VM (or on the platform).

    ``evidence`` holds JSON-ready values only (str, int, float, bool, None,
    lists and dicts of those): object names, UIDs, RFC 3339 UTC timestamps and
    ages in hours, so a reviewer can verify the message against the cluster.
    """

    check_id: str
    status: Status
    severity: Severity
    message: str
    evidence: dict[str, Any] = field(default_factory=dict)
    waiver: dict[str, Any] | None = None
    basis: Basis | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return the report.json form of this finding."""
        out: dict[str, Any] = {
            "check_id": self.check_id,
            "status": self.status.value,
            "severity": self.severity.value,
            "message": self.message,
            "evidence": self.evidence,
            "basis": self.basis.value if self.basis is not None else None,
        }
        if self.waiver is not None:
            out["waiver"] = self.waiver
        return out


@dataclass(frozen=True)
class CollectionProblem:
    """Something the source could not read or could not trust.

    ``reason`` is a sentence naming what went wrong; ``file``/``kind``/
    ``namespace``/``name``/``field`` locate it as far as known. ``kinds`` lists
    the resource kinds whose data is incomplete because of it; checks that need
    those kinds report ERROR instead of guessing.
    """

    reason: str
    file: str | None = None
    kind: str | None = None
    namespace: str | None = None
    name: str | None = None
    field: str | None = None
    kinds: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Return the report.json form of this problem."""
        return {
            "reason": self.reason,
            "file": self.file,
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
            "field": self.field,
            "kinds": list(self.kinds),
        }


def readiness_of(findings: list[Finding]) -> Readiness:
    """Derive a VM's readiness from its findings.

    The rule never rewards ignorance: NOT_READY if any FAIL is high or
    critical; else UNKNOWN if any high/critical check ERRORed (it could hide a
    NOT_READY, so a remaining medium FAIL must not make the VM look merely
    AT_RISK); else AT_RISK if any FAIL is medium or low; else UNKNOWN if any
    check ERRORed; else READY. FAILs of severity info and WAIVED findings do not
    lower readiness.
    """
    grave = (Severity.CRITICAL, Severity.HIGH)
    fails = [f.severity for f in findings if f.status is Status.FAIL]
    errors = [f.severity for f in findings if f.status is Status.ERROR]
    if any(s in grave for s in fails):
        return Readiness.NOT_READY
    if any(s in grave for s in errors):
        return Readiness.UNKNOWN
    if any(s in (Severity.MEDIUM, Severity.LOW) for s in fails):
        return Readiness.AT_RISK
    if errors:
        return Readiness.UNKNOWN
    return Readiness.READY
