"""The scheduled service: APScheduler wiring (``scheduler``), the audit jobs (``jobs``),
the run journal (``journal``) and health/metrics (``metrics``). No audit logic lives here.
"""

from __future__ import annotations

from auditor.service.scheduler import (
    JOB_FUNC,
    JobStoreError,
    NoRunAfterShutdown,
    ServiceLockedError,
    ServiceScheduler,
    build_scheduler,
    serve,
    sync_jobs,
)

__all__ = [
    "serve",
    "build_scheduler",
    "ServiceScheduler",
    "NoRunAfterShutdown",
    "sync_jobs",
    "ServiceLockedError",
    "JobStoreError",
    "JOB_FUNC",
]
