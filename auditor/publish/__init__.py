"""Publish a run's artifacts as tamper-evident evidence; read history and trend back.

Artifacts move here, they are not rendered: the input is a run directory
holding ``report.json`` and whatever renderers wrote next to it.

- :func:`publish_run` uploads a run to S3 (or a local directory), verifies
  every object against ``manifest.json``, and spools the run when the store
  cannot be reached; :func:`retry_spool` delivers spooled runs.
- :func:`list_runs` lists published runs of a cluster; :func:`compute_trend`
  compares a report with the previous run and the run a month earlier.

Errors: see :mod:`auditor.publish.errors`.
"""

from __future__ import annotations

from auditor.config.publish import PublishSettings
from auditor.publish.errors import (
    ConflictError,
    PublishError,
    PublishInterrupted,
    RunDirError,
    StoreAuthError,
    StoreConfigError,
    StoreUnreachable,
    VerificationError,
)
from auditor.publish.history import RunEntry, list_runs
from auditor.publish.hooks import publish_settings, service_publisher
from auditor.publish.manifest import RunManifest, build_manifest
from auditor.publish.publisher import (
    PublishResult,
    open_store,
    publish_run,
    refused_note,
    retry_spool,
)
from auditor.publish.store import ObjectInfo, ObjectStore
from auditor.publish.trend import compute_trend, dump_trend, trend_for, write_trend

__all__ = [
    "PublishSettings",
    "PublishResult",
    "publish_run",
    "refused_note",
    "publish_settings",
    "service_publisher",
    "retry_spool",
    "open_store",
    "build_manifest",
    "RunManifest",
    "list_runs",
    "RunEntry",
    "compute_trend",
    "dump_trend",
    "write_trend",
    "trend_for",
    "ObjectStore",
    "ObjectInfo",
    "PublishError",
    "PublishInterrupted",
    "ConflictError",
    "RunDirError",
    "StoreAuthError",
    "StoreConfigError",
    "StoreUnreachable",
    "VerificationError",
]
