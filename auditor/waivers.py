"""Accepted-risk waivers applied to findings.

A waiver names one check and selects VMs by namespace glob, name glob and
equal labels. It applies while ``created <= at < expires``: a matching FAIL
becomes WAIVED, keeping its severity, message and evidence, and gains a
``waiver`` dict (:func:`waiver_record`). PASS, NOT_APPLICABLE and ERROR
findings are never waived: an ERROR means the check could not be evaluated,
and a waiver accepts a known risk, not an unknown one.

An expired waiver stops applying (the finding shows FAIL again) and is listed
as ``expired`` in :func:`waiver_appendix`, which the report carries for auditors.
"""

from __future__ import annotations

import importlib
from collections.abc import Collection, Mapping
from dataclasses import replace
from datetime import UTC, datetime
from fnmatch import fnmatchcase
from typing import Any

from auditor.config import AuditSettings, Waiver
from auditor.models import Finding, Status

__all__ = [
    "apply_waivers",
    "waiver_state",
    "waiver_record",
    "waiver_appendix",
    "validate_check_ids",
    "catalog_check_ids",
    "platform_check_ids",
]


def _rfc3339(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def waiver_state(waiver: Waiver, at: datetime) -> str:
    """Return ``active``, ``expired`` (``at >= expires``) or ``pending`` (``at < created``)."""
    if at >= waiver.expires:
        return "expired"
    if at < waiver.created:
        return "pending"
    return "active"


def selects(waiver: Waiver, namespace: str, name: str, labels: Mapping[str, str]) -> bool:
    """True when the waiver's selector covers the VM ``namespace/name`` with ``labels``."""
    sel = waiver.selector
    return (
        fnmatchcase(namespace, sel.namespace)
        and fnmatchcase(name, sel.name)
        and all(labels.get(k) == v for k, v in sel.labels.items())
    )


def waiver_record(waiver: Waiver) -> dict[str, Any]:
    """Return the JSON form of a waiver (as put on a WAIVED finding and in the appendix)."""
    return {
        "id": waiver.id,
        "check_id": waiver.check,
        "selector": {
            "namespace": waiver.selector.namespace,
            "name": waiver.selector.name,
            "labels": dict(sorted(waiver.selector.labels.items())),
        },
        "reason": waiver.reason,
        "approver": waiver.approver,
        "created": _rfc3339(waiver.created),
        "expires": _rfc3339(waiver.expires),
    }


def apply_waivers(
    findings: list[Finding],
    *,
    namespace: str,
    name: str,
    labels: Mapping[str, str],
    settings: AuditSettings,
    at: datetime,
) -> list[Finding]:
    """Return ``findings`` with matching, active waivers applied (FAIL -> WAIVED).

    The first active waiver listed for a check wins. ``at`` must be timezone-aware.
    """
    active = [
        w
        for w in settings.waivers
        if waiver_state(w, at) == "active" and selects(w, namespace, name, labels)
    ]
    if not active:
        return findings
    out: list[Finding] = []
    for finding in findings:
        waiver = next((w for w in active if w.check == finding.check_id), None)
        if waiver is None or finding.status is not Status.FAIL:
            out.append(finding)
            continue
        out.append(replace(finding, status=Status.WAIVED, waiver=waiver_record(waiver)))
    return out


def waiver_appendix(settings: AuditSettings, at: datetime) -> list[dict[str, Any]]:
    """Return every configured waiver for the report's appendix, sorted by id.

    Each entry is :func:`waiver_record` plus ``state`` (active, expired or
    pending) and ``days_left`` (whole days until expiry, negative once expired: -15 is
    15 whole days since it expired, 0 within a day either side).
    """
    out = []
    for waiver in sorted(settings.waivers, key=lambda w: w.id):
        record = waiver_record(waiver)
        record["state"] = waiver_state(waiver, at)
        left = waiver.expires - at
        # whole days toward zero: timedelta.days floors, which made a waiver that expired
        # 15 days and 6 hours ago "16 days" ago
        record["days_left"] = left.days if left.days >= 0 else -(-left).days
        out.append(record)
    return out


def validate_check_ids(
    settings: AuditSettings, known_ids: Collection[str]
) -> list[tuple[str, str]]:
    """Return ``(field_path, message)`` for each waiver naming a check not in ``known_ids``."""
    return [
        (f"waivers.{i}.check", f"unknown check id '{w.check}' (see `auditor checks list`)")
        for i, w in enumerate(settings.waivers)
        if w.check not in known_ids
    ]


def catalog_check_ids() -> frozenset[str] | None:
    """Return the check catalog's ids, or None while ``auditor.checks.registry`` is absent.

    Imports :mod:`auditor.checks` first so that every check module has
    registered itself. ``CATALOG`` may be a mapping keyed by id or a sequence of
    checks with an ``id``; an empty catalog also gives None (nothing to check against).
    """
    try:
        importlib.import_module("auditor.checks")
        registry = importlib.import_module("auditor.checks.registry")
    except ModuleNotFoundError as exc:
        if exc.name != "auditor.checks.registry":
            raise
        return None
    catalog: Any = registry.CATALOG
    if not catalog:
        return None
    if isinstance(catalog, Mapping):
        return frozenset(str(k) for k in catalog)
    return frozenset(str(c["id"] if isinstance(c, Mapping) else c.id) for c in catalog)


def platform_check_ids() -> frozenset[str]:
    """The ids of the catalog's platform checks (one cluster-wide finding each, on no VM,
    so no waiver can apply to them); empty while ``auditor.checks.registry`` is absent."""
    if catalog_check_ids() is None:
        return frozenset()
    registry = importlib.import_module("auditor.checks.registry")
    catalog: Any = registry.CATALOG
    specs = catalog.values() if isinstance(catalog, Mapping) else catalog
    return frozenset(str(s.id) for s in specs if getattr(s, "scope", "vm") == "platform")
