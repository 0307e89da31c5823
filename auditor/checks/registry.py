"""The check registry: metadata validated at import, explicit registration.

A VM check is a small function ``(vm: VMRecord, ctx: CheckContext) -> Result``
(:data:`VmCheck`) decorated with :func:`check`; a platform check is
``(ctx: CheckContext, vms: list[PlatformFacts]) -> Result`` (:data:`PlatformCheck`, one
:class:`~auditor.checks.fleetview.PlatformFacts` per audited VM)
decorated with :func:`platform_check`. Either decorator records the catalog
entry. IDs are ``RR-<FAMILY>-NNN`` and never reused.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from typing import TYPE_CHECKING, Any, Literal

from auditor.config import Thresholds
from auditor.dictinit import direct_init
from auditor.kinds import BY_KIND
from auditor.models import CHECK_ID, FAMILIES, Basis, Severity, Status

if TYPE_CHECKING:
    from auditor.checks.fleetview import PlatformFacts
    from auditor.inventory import ClusterIndex, VMRecord

__all__ = [
    "CheckSpec",
    "DISK_DATA",
    "NOT_READ",
    "CheckContext",
    "Result",
    "check",
    "platform_check",
    "VmCheck",
    "PlatformCheck",
    "CATALOG",
    "FAMILIES",
    "CHECK_ID",
    "passed",
    "failed",
    "not_applicable",
    "errored",
]


@direct_init
@dataclass(frozen=True, slots=True)
class Result:
    """What a check function returns; ``severity`` overrides the default for this VM.

    ``holds_without``: required kinds whose unread objects cannot change this result (it
    rests on none of them: a NOT_APPLICABLE read from the VM's spec alone, a FAIL at the
    check's worst severity that a read object proves whatever the unread ones say). The
    engine then keeps it where a kind is partly unread (``engine._run``), naming the kind in
    ``incomplete_kinds``; empty (the default), any partly unread kind may.
    """

    status: Status
    message: str
    evidence: dict[str, Any] = field(default_factory=dict)
    severity: Severity | None = None
    basis: Basis | None = None
    holds_without: frozenset[str] = frozenset()

    def on(self, basis: Basis) -> Result:
        """This result, saying whether it rests on observed or inferred facts."""
        # the fields spelled out: dataclasses.replace, as it was, reads them by name (a
        # quarter of the checks' results pass here)
        return Result(
            self.status, self.message, self.evidence, self.severity, basis, self.holds_without
        )

    def regardless_of(self, *kinds: str) -> Result:
        """This result, saying that unread objects of ``kinds`` cannot change it (the caller
        reasons why, beside the call)."""
        return Result(
            self.status,
            self.message,
            self.evidence,
            self.severity,
            self.basis,
            self.holds_without | frozenset(kinds),
        )


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


#: A VM check: one VM and the context -> its result.
VmCheck = Callable[["VMRecord", CheckContext], Result]
#: A platform check: the context and every audited VM's platform facts -> one cluster-wide
#: result.
PlatformCheck = Callable[[CheckContext, "list[PlatformFacts]"], Result]


#: Fields below a read volume that no check but the network ones reads: cloud-init
#: ``networkData`` (its facts, :mod:`auditor.netdata`). A prefix list cannot leave them out
#: of ``spec.template.spec.volumes``: a ``!`` entry (``[*]`` for any list item) does.
NOT_READ = tuple(
    f"!spec.template.spec.volumes[*].{source}.{key}"
    for source in ("cloudInitNoCloud", "cloudInitConfigDrive")
    for key in ("networkData", "networkDataBase64")
)

#: What pairing a VM with the copies of its disk data reads (besides ``metadata``, read for
#: every check that pairs): which PVCs its volumes, disks, filesystems and DataVolume
#: templates name, whether it ran when a Backup began (``status.conditions``: its Ready
#: condition, ``VMFacts.ran_during``, for a check that reads pairing without requiring a
#: Backup kind too), the pod annotations that opt volumes in or
#: out of file-system backup (``spec.template.metadata``), whether it runs, and whether it
#: keeps EFI/TPM state in ``persistent-state-for-<vm>`` (bootloader, TPM, and the preference
#: and architecture they default from). Not its NICs, networks, firmware UUID or serial:
#: the kubevirt Velero plugin takes a VM's PVCs from its volumes and DataVolume templates
#: (kubevirt-velero-plugin pkg/plugin/vm_backup_item_action.go, Execute), Velero's file-system
#: backup from the pod annotations (velero pkg/util/podvolume GetVolumesByPod).
DISK_DATA = (
    "spec.running",
    "spec.runStrategy",
    "spec.dataVolumeTemplates",
    "status.conditions",
    # an unfinished volume migration's destination PVCs hold no copy of the disk yet
    "status.volumeUpdateState",
    "spec.template.metadata",
    "spec.template.spec.volumes",
    "spec.template.spec.domain.devices.disks",
    "spec.template.spec.domain.devices.filesystems",
    "spec.template.spec.domain.devices.tpm",
    "spec.template.spec.domain.firmware.bootloader",
    "spec.template.spec.architecture",
    "spec.preference",
    "status.preferenceRef",
    *NOT_READ,
)


@cache
def _pattern(read: str) -> re.Pattern[str]:
    """A field path under ``read`` (``[*]``: any one list item); made once per ``!`` entry
    (asked for every malformed field of every VM, for each check)."""
    body = re.escape(read).replace(re.escape("[*]"), r"\[[^\]]*\]")
    return re.compile(f"{body}(?:$|[.\\[])")


def _overlaps(path: str, read: str) -> bool:
    """True when ``path`` lies under ``read`` or contains it (a broken parent breaks its
    fields)."""
    short, long = sorted((path, read), key=len)
    return long == short or long.startswith(short + ".") or long.startswith(short + "[")


@dataclass(frozen=True)
class CheckSpec:
    """Catalog entry of one check.

    ``requires`` lists kinds whose complete list the check needs (an
    unavailable kind gives ERROR); ``reads`` lists VM field-path prefixes whose
    malformation makes the check ERROR, and ``!`` prefixes (``[*]``: any list item) of
    fields below them it does not read (:meth:`reads_field`); ``scope`` is ``vm`` (``vm_func`` set)
    or ``platform`` (``platform_func`` set). ``windows_severity``: the severity of the check's
    FAIL for a Windows guest, where it is above ``severity`` (None: the same); the check's
    body reads its Windows FAIL severity from the same declaration (a module constant, e.g.
    ``identity._UUID_ON_WINDOWS``), and an ERROR of a Windows VM that stands for the result of
    an unread input takes it too (``auditor.engine._unsure_severity``, and ``_finding`` for an
    ERROR that names no severity): :meth:`severity_for`. ``worst_severity``: the worst severity
    the check's FAIL can take for any guest, where it is above ``severity`` (None: no FAIL of
    it is above ``severity``, or only a Windows guest's, declared by ``windows_severity``): an
    ERROR of the check that names no severity (its own ``errored(...)``, one it raised, an
    unread kind) and an ERROR standing for a would-be result take it, for every guest, so
    malformed or unread input that hides such a FAIL never ranks the VM better than the FAIL
    would (round h46, ``docs/readiness.md``: an ERROR never ranks above a high FAIL):
    :meth:`error_severity_for`.
    """

    id: str
    title: str
    severity: Severity
    rationale: str
    remediation: str
    references: tuple[str, ...]
    requires: tuple[str, ...]
    reads: tuple[str, ...]
    vm_func: VmCheck | None = None
    platform_func: PlatformCheck | None = None
    windows_severity: Severity | None = None
    worst_severity: Severity | None = None

    @property
    def scope(self) -> Literal["vm", "platform"]:
        """``platform`` for a cluster-wide check, else ``vm``."""
        return "platform" if self.platform_func is not None else "vm"

    def reads_field(self, path: str) -> bool:
        """True when the check reads VM field ``path``: it lies under a ``reads`` prefix (or
        is a parent of one) and under no ``!`` exclusion."""
        if any(_pattern(r[1:]).match(path) for r in self.reads if r.startswith("!")):
            return False
        return any(_overlaps(path, r) for r in self.reads if not r.startswith("!"))

    def severity_for(self, os: str) -> Severity:
        """The check's default severity for a guest of ``os`` (``windows``, ``linux`` or
        ``unknown``, as ``VMSpec.os``): ``windows_severity`` for a Windows guest when the
        check declares one above ``severity``, else ``severity``."""
        windows = self.windows_severity
        if windows is not None and os == "windows" and windows.rank < self.severity.rank:
            return windows
        return self.severity

    def error_severity_for(self, os: str | None) -> Severity:
        """The severity of an ERROR of the check that names none, for a guest of ``os`` (as
        :meth:`severity_for`; None for a platform check): the worse of the guest's default
        (:meth:`severity_for`) and ``worst_severity``. What the check could not conclude may
        be the worst FAIL it gives, so its ERROR ranks the VM no better (a medium ERROR
        beside a medium FAIL read AT_RISK at worst where the hidden FAIL was high, NOT_READY:
        ``readiness_of``)."""
        default = self.severity_for(os) if os is not None else self.severity
        worst = self.worst_severity
        return worst if worst is not None and worst.rank < default.rank else default

    @property
    def family(self) -> str:
        """The family code, e.g. ``BKP``."""
        return self.id.split("-")[1]

    def run(self, ctx: CheckContext, vm: VMRecord | None, vms: list[PlatformFacts]) -> Result:
        """Call the check: ``vm_func(vm, ctx)``, or ``platform_func(ctx, vms)`` when ``vm`` is None.

        Raises:
            TypeError: a VM check called without a VM, or a platform check with one.
            Whatever the check function raises (the engine turns it into ERROR).
        """
        if vm is not None and self.vm_func is not None:
            return self.vm_func(vm, ctx)
        if vm is None and self.platform_func is not None:
            return self.platform_func(ctx, vms)
        raise TypeError(f"{self.id} is a {self.scope} check")

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


def _register(spec: CheckSpec) -> None:
    """Validate ``spec`` and add it to :data:`CATALOG`.

    Raises:
        ValueError: malformed or duplicate id, empty text, no reference, a ``requires``
            kind not in :data:`auditor.kinds.BY_KIND`, or a ``worst_severity`` or
            ``windows_severity`` not above ``severity`` (a declaration that changes nothing
            is a mistake: the check's FAIL is not what it says).
    """
    if not CHECK_ID.match(spec.id):
        raise ValueError(f"check id {spec.id!r} is not RR-<FAMILY>-NNN")
    if spec.id in CATALOG:
        raise ValueError(f"check id {spec.id} registered twice")
    if not (spec.title and spec.rationale and spec.remediation and spec.references):
        raise ValueError(f"check {spec.id} lacks title, rationale, remediation or references")
    unknown = sorted(set(spec.requires) - set(BY_KIND))
    if unknown:
        raise ValueError(f"check {spec.id} requires unknown kind(s) {', '.join(unknown)}")
    for name, above in (
        ("worst_severity", spec.worst_severity),
        ("windows_severity", spec.windows_severity),
    ):
        if above is not None and above.rank >= spec.severity.rank:
            raise ValueError(
                f"check {spec.id} declares {name}={above.value}, not above its severity "
                f"{spec.severity.value}"
            )
    CATALOG[spec.id] = spec


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
    windows_severity: Severity | None = None,
    worst_severity: Severity | None = None,
) -> Callable[[VmCheck], VmCheck]:
    """Register a VM check function (:data:`VmCheck`) under ``id`` with its catalog metadata
    (``windows_severity``, ``worst_severity``: see :class:`CheckSpec`).

    Raises:
        ValueError: as :func:`_register`.
    """

    def register(func: VmCheck) -> VmCheck:
        meta = (title, severity, rationale, remediation, references, requires, reads)
        _register(
            CheckSpec(
                id,
                *meta,
                vm_func=func,
                windows_severity=windows_severity,
                worst_severity=worst_severity,
            )
        )
        return func

    return register


def platform_check(
    id: str,
    *,
    title: str,
    severity: Severity,
    rationale: str,
    remediation: str,
    references: tuple[str, ...],
    requires: tuple[str, ...] = (),
) -> Callable[[PlatformCheck], PlatformCheck]:
    """Register a platform check function (:data:`PlatformCheck`) under ``id``.

    Raises:
        ValueError: as :func:`check`.
    """

    def register(func: PlatformCheck) -> PlatformCheck:
        meta = (title, severity, rationale, remediation, references, requires, ())
        _register(CheckSpec(id, *meta, platform_func=func))
        return func

    return register
