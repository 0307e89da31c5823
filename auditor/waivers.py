"""Accepted-risk waivers applied to findings.

Placeholder with the final signature: no waivers yet (issue 6 adds them).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from auditor.config import AuditSettings
from auditor.models import Finding

__all__ = ["apply_waivers"]


def apply_waivers(
    findings: list[Finding],
    *,
    namespace: str,
    name: str,
    labels: Mapping[str, str],
    settings: AuditSettings,
    at: datetime,
) -> list[Finding]:
    """Return ``findings`` with matching, unexpired waivers applied (status WAIVED)."""
    return findings
