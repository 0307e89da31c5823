"""Which recovery policy (thresholds) applies to a VM.

Placeholder with the final signature: every VM gets the default policy from
settings. Overrides by namespace glob and label selector come with issue 6.
"""

from __future__ import annotations

from collections.abc import Mapping

from auditor.config import AuditSettings, Thresholds

__all__ = ["resolve_policy"]


def resolve_policy(
    settings: AuditSettings, namespace: str, labels: Mapping[str, str]
) -> tuple[str, Thresholds]:
    """Return ``(policy_name, thresholds)`` for a VM in ``namespace`` with ``labels``."""
    return "default", settings.thresholds
