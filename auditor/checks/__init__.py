"""The check catalog. Modules are imported explicitly, in family order."""

from __future__ import annotations

from auditor.checks import backup, identity, network, platform, restore, storage
from auditor.checks.registry import CATALOG, CheckContext, CheckSpec, Result

__all__ = ["CATALOG", "CheckContext", "CheckSpec", "Result", "MODULES"]

MODULES = (backup, restore, identity, network, storage, platform)
