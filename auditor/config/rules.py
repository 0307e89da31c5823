"""Settings models for recovery policies and waivers (sections ``thresholds``,
``policies`` and ``waivers`` of the config file).

Re-exported from :mod:`auditor.config`; the matching logic lives in
:mod:`auditor.policy` and :mod:`auditor.waivers`.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    create_model,
    field_validator,
    model_validator,
)

from auditor.models import CHECK_ID, FAMILIES

__all__ = [
    "Strict",
    "MAX_HOURS",
    "MAX_DAYS",
    "Thresholds",
    "PolicyOverrides",
    "PolicyMatch",
    "Policy",
    "WaiverSelector",
    "Waiver",
]


class Strict(BaseModel):
    """Base for every settings model: unknown fields are errors, values are frozen, and a
    number is finite (``rpo_hours: inf``, a YAML string pydantic read as infinity, passed
    RR-BKP-002 for every VM "within the inf h RPO" and broke RR-BKP-013: trial ux30)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


#: 100 years in hours / days: the most a threshold may say (a Python timedelta, and any
#: recovery policy, ends long before 1e300 hours).
MAX_HOURS = 100 * 8766
MAX_DAYS = 100 * 366


class Thresholds(Strict):
    """One recovery policy's thresholds; the top-level ``thresholds`` is the default policy.

    ``rpo_hours``: the newest usable backup must have started (its data time) within this many
    hours.
    ``min_retention_hours``: usable backups must be kept at least this long (Velero TTL).
    ``min_restore_points``: restore points: usable backups holding the VM object and every
    disk's data on evidence.
    ``restore_test_max_age_days``: a completed restore test must be this recent.
    ``require_off_cluster_copy``: a copy outside the cluster (object storage) is required.
    ``require_application_consistent``: a newest restore point that is crash-consistent only
    (a running VM without a connected guest agent, a backup whose freeze did not run or of a
    paused VM, a VirtualMachineSnapshot taken without a freeze: RR-BKP-011) is a medium
    failure instead of an info notice.
    ``require_immutable_backups``: a BackupStorageLocation bucket without Object Lock
    (default retention) is a failing finding, not a notice (RR-PLT-005).
    """

    rpo_hours: float = Field(default=24.0, gt=0, le=MAX_HOURS)
    min_retention_hours: float = Field(default=168.0, ge=0, le=MAX_HOURS)
    min_restore_points: int = Field(default=1, ge=0, le=100_000)
    restore_test_max_age_days: int = Field(default=30, gt=0, le=MAX_DAYS)
    require_off_cluster_copy: bool = False
    require_application_consistent: bool = False
    require_immutable_backups: bool = False


def _overrides_of(model: type[Strict]) -> type[Strict]:
    """A model with every field of ``model`` optional (None: keep the default policy's value),
    with the same types and bounds, so a threshold is declared once, in :class:`Thresholds`."""
    fields: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        typ: Any = info.annotation
        if info.metadata:  # the bounds (gt=0...) stay on the value, not on None
            typ = Annotated[(typ, *info.metadata)]
        fields[name] = (typ | None, Field(default=None, description=info.description))
    derived: type[Strict] = create_model(
        "PolicyOverrides",
        __base__=Strict,
        __module__=__name__,
        __doc__="The thresholds a policy changes; fields left out keep the default "
        "policy's value. Derived from Thresholds (same fields, types and bounds).",
        **fields,
    )
    return derived


if TYPE_CHECKING:

    class PolicyOverrides(Strict):
        """The thresholds a policy changes (see :func:`_overrides_of`)."""

else:
    PolicyOverrides = _overrides_of(Thresholds)


class PolicyMatch(Strict):
    """Which VMs a policy covers: namespace globs (any matches) AND equal labels (all match)."""

    namespaces: tuple[str, ...] = ()
    labels: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _not_empty(self) -> PolicyMatch:
        if not self.namespaces and not self.labels:
            raise ValueError("give at least one of 'namespaces' or 'labels'")
        return self


class Policy(Strict):
    """A named override of the default policy for the VMs it ``match``es."""

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    match: PolicyMatch
    thresholds: PolicyOverrides = Field(default_factory=PolicyOverrides)

    @field_validator("name")
    @classmethod
    def _not_default(cls, value: str) -> str:
        if value == "default":
            raise ValueError(
                "'default' is reserved for the top-level thresholds; choose another name"
            )
        return value


class WaiverSelector(Strict):
    """Which VMs a waiver covers: namespace and name globs and equal labels, all must match."""

    namespace: str = "*"
    name: str = "*"
    labels: dict[str, str] = Field(default_factory=dict)


def _as_utc(value: Any) -> Any:
    """Turn a YAML date or datetime into an aware UTC datetime (naive means UTC)."""
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    if isinstance(value, date):
        return datetime.combine(value, time(0, 0), tzinfo=UTC)
    return value


#: The longest a waiver may run, from ``created`` to ``expires`` (days; a year, leap years too).
MAX_WAIVER_DAYS = 366


class Waiver(Strict):
    """An accepted risk: findings of ``check`` on selected VMs show as WAIVED until ``expires``.

    ``created`` and ``expires`` are UTC datetimes (a plain date means 00:00 UTC), at most
    :data:`MAX_WAIVER_DAYS` apart; the waiver applies while ``created <= audit time < expires``.
    """

    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    check: str
    selector: WaiverSelector
    reason: str = Field(min_length=1)
    approver: str = Field(min_length=1)
    created: datetime
    expires: datetime

    @field_validator("check")
    @classmethod
    def _known_check(cls, value: str, info: ValidationInfo) -> str:
        if not CHECK_ID.match(value):
            raise ValueError(
                f"'{value}' is not a check id (expected RR-<FAMILY>-NNN, FAMILY one of "
                f"{', '.join(FAMILIES)})"
            )
        known = (info.context or {}).get("known_check_ids")
        if known is not None and value not in known:
            raise ValueError(f"unknown check id '{value}' (see `auditor checks list`)")
        if value in (info.context or {}).get("platform_check_ids", ()):
            # a platform check gives one cluster-wide finding, on no VM: a waiver, which
            # applies to the findings of the VMs it selects, would be listed as active
            # and never applied (new-user trial nu20)
            raise ValueError(
                f"{value} is a platform check (one finding for the whole cluster, on no VM); "
                "a waiver applies to VM checks only"
            )
        return value

    @field_validator("reason", "approver")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value.strip()

    @field_validator("created", "expires", mode="before")
    @classmethod
    def _date_to_utc(cls, value: Any) -> Any:
        return _as_utc(value)

    @field_validator("created", "expires", mode="after")
    @classmethod
    def _aware_utc(cls, value: datetime) -> datetime:
        result: datetime = _as_utc(value)
        return result

    @field_validator("expires")
    @classmethod
    def _after_created(cls, value: datetime, info: ValidationInfo) -> datetime:
        created = info.data.get("created")
        if isinstance(created, datetime) and value <= created:
            raise ValueError(f"must be later than created ({created.isoformat()})")
        if isinstance(created, datetime) and value - created > timedelta(days=MAX_WAIVER_DAYS):
            # an accepted risk is reviewed at least yearly: a waiver written to 2099 would
            # hide a NOT_READY for good (new-user trial nu20)
            raise ValueError(
                f"is more than {MAX_WAIVER_DAYS} days after created ({created.date()}): a "
                "waiver is reviewed at least yearly; renew it with a new created date"
            )
        return value
