"""The check catalog. Modules are imported explicitly, in family order."""

from __future__ import annotations

from auditor.checks import (
    backup,
    bucket,
    consistency,
    continuity,
    definition,
    duplicates,
    identity,
    kvconfig,
    netidentity,
    network,
    platform,
    provisioning,
    restore,
    retention,
    storage,
)
from auditor.checks.registry import CATALOG, CheckContext, CheckSpec, Result

__all__ = ["CATALOG", "CheckContext", "CheckSpec", "Result", "MODULES"]

MODULES = (
    backup,
    retention,
    continuity,
    consistency,
    restore,
    identity,
    duplicates,
    network,
    netidentity,
    storage,
    provisioning,
    definition,
    platform,
    kvconfig,
    bucket,
)
