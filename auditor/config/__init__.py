"""Settings: the auditor's configuration file, validated with pydantic.

``settings`` holds the top-level :class:`AuditSettings`; ``rules`` the recovery
policies, thresholds and waivers; ``service`` the schedules; ``publish`` the
publish target. Everything public is re-exported here.
"""

from __future__ import annotations

from auditor.config.settings import (
    AuditSettings,
    BackupStorageSettings,
    BucketLocationSettings,
    ClusterSourceSettings,
    ConfigError,
    DirectorySourceSettings,
    MetricsSettings,
    Ownership,
    Policy,
    PolicyMatch,
    PolicyOverrides,
    ReportSettings,
    Schedule,
    ServiceSettings,
    SourceSettings,
    Thresholds,
    Waiver,
    WaiverSelector,
    load_settings,
    parse_settings,
)

__all__ = [
    "BackupStorageSettings",
    "BucketLocationSettings",
    "Thresholds",
    "Ownership",
    "Policy",
    "PolicyMatch",
    "PolicyOverrides",
    "Waiver",
    "WaiverSelector",
    "SourceSettings",
    "DirectorySourceSettings",
    "ClusterSourceSettings",
    "ReportSettings",
    "Schedule",
    "ServiceSettings",
    "MetricsSettings",
    "AuditSettings",
    "ConfigError",
    "load_settings",
    "parse_settings",
]
