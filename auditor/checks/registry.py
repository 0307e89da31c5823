"""The check registry: metadata validated at import, explicit registration.

A check is a small function ``(vm: VMRecord, ctx: CheckContext) -> Result``
(or ``(ctx) -> Result`` for platform checks) decorated with :func:`check`,
which records its catalog entry. IDs are ``RR-<FAMILY>-NNN`` and never reused.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from auditor.config import Thresholds
from auditor.kinds import BY_KIND
from auditor.models import Basis, Severity, Status

if TYPE_CHECKING:
    from auditor.inventory import ClusterIndex

__all__ = [
    "CheckSpec",
    "CheckContext",
    "Result",
    "check",
    "CATALOG",
    "FAMILIES",
    "CHECK_ID",
    "passed",
    "failed",
    "not_applicable",
    "errored",
]

FAMILIES = {
    "BKP": "backup",
    "RST": "restore test",
    "FW": "firmware",
    "DSK": "disks",
    "NIC": "network interfaces",
    "NET": "networks",
    "STG": "storage",
    "PLT": "platform",
}
#: The check-id pattern, derived from :data:`FAMILIES` (the one place families are declared).
CHECK_ID = re.compile(rf"^RR-({'|'.join(FAMILIES)})-\d{{3}}$")
_ID = CHECK_ID


@dataclass(frozen=True)
class Result:
    """What a check function returns; ``severity`` overrides the default for this VM."""

    status: Status
    message: str
    evidence: dict[str, Any] = field(default_factory=dict)
    severity: Severity | None = None
    basis: Basis | None = None

    def on(self, basis: Basis) -> Result:
        """This result, saying whether it rests on observed or inferred facts."""
        return replace(self, basis=basis)


def passed(message: str, /, **evidence: Any) -> Result:
    """A PASS result."""
    return Result(Status.PASS, message, evidence)


def failed(message: str, severity: Severity | None = None, /, **evidence: Any) -> Result:
    """A FAIL result, optionally at a severity other than the check's default."""
    return Result(Status.FAIL, message, evidence, severity)


def not_applicable(message: str, /, **evidence: Any) -> Result:
    """A NOT_APPLICABLE result."""
    return Result(Status.NOT_APPLICABLE, message, evidence)


def errored(message: str, /, **evidence: Any) -> Result:
    """An ERROR result: the check could not be evaluated."""
    return Result(Status.ERROR, message, evidence)


@dataclass(frozen=True)
class CheckContext:
    """What every check may read besides the VM: audit time (UTC), thresholds, the index."""

    at: datetime
    thresholds: Thresholds
    index: ClusterIndex
    policy: str = "default"


@dataclass(frozen=True)
class CheckSpec:
    """Catalog entry of one check.

    ``requires`` lists kinds whose complete list the check needs (an
    unavailable kind gives ERROR); ``reads`` lists VM field-path prefixes whose
    malformation makes the check ERROR; ``scope`` is ``vm`` or ``platform``.
    """

    id: str
    title: str
    severity: Severity
    rationale: str
    remediation: str
    references: tuple[str, ...]
    requires: tuple[str, ...]
    reads: tuple[str, ...]
    scope: str
    func: Callable[..., Result]

    @property
    def family(self) -> str:
        """The family code, e.g. ``BKP``."""
        return self.id.split("-")[1]

    def to_dict(self) -> dict[str, Any]:
        """The report.json catalog entry."""
        return {
            "id": self.id,
            "title": self.title,
            "family": self.family,
            "severity": self.severity.value,
            "rationale": self.rationale,
            "remediation": self.remediation,
            "references": list(self.references),
            "requires": list(self.requires),
            "scope": self.scope,
        }


CATALOG: dict[str, CheckSpec] = {}


def check(
    id: str,
    *,
    title: str,
    severity: Severity,
    rationale: str,
    remediation: str,
    references: tuple[str, ...],
    requires: tuple[str, ...] = (),
    reads: tuple[str, ...] = ("spec.template.spec",),
    scope: str = "vm",
) -> Callable[[Callable[..., Result]], Callable[..., Result]]:
    """Register a check function under ``id`` with its catalog metadata.

    Raises:
        ValueError: malformed or duplicate id, empty text, no reference, a ``requires``
            kind not in :data:`auditor.kinds.BY_KIND`, bad scope.
    """

    def register(func: Callable[..., Result]) -> Callable[..., Result]:
        if not _ID.match(id):
            raise ValueError(f"check id {id!r} is not RR-<FAMILY>-NNN")
        if id in CATALOG:
            raise ValueError(f"check id {id} registered twice")
        if not (title and rationale and remediation and references):
            raise ValueError(f"check {id} lacks title, rationale, remediation or references")
        unknown = sorted(set(requires) - set(BY_KIND))
        if unknown:
            raise ValueError(f"check {id} requires unknown kind(s) {', '.join(unknown)}")
        if scope not in ("vm", "platform"):
            raise ValueError(f"check {id} has unknown scope {scope!r}")
        CATALOG[id] = CheckSpec(
            id, title, severity, rationale, remediation, references, requires, reads, scope, func
        )
        return func

    return register
