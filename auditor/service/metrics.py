"""Prometheus metrics and the small HTTP endpoint of ``auditor serve``.

Routes: ``/metrics`` (Prometheus text format), ``/healthz`` (200 while the
scheduler's thread is alive and the scheduler has not died after starting, else
503), ``/readyz`` (200 once the scheduler runs, 503 before and while shutting
down). Metrics live in their own registry, never the global one.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, make_wsgi_app

from auditor.models import SEVERITY_ORDER, Readiness, Status

__all__ = ["ServiceMetrics", "HealthServer"]

log = logging.getLogger(__name__)

_READINESS = tuple(r.value for r in Readiness)
_SEVERITIES = tuple(s.value for s in SEVERITY_ORDER)
_STATUSES = tuple(s.value for s in Status)


class ServiceMetrics:
    """Every metric the service exports (names in ``docs/service.md``)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.last_run_time = Gauge(
            "auditor_last_run_timestamp_seconds",
            "Unix time the last run of a schedule ended",
            ["schedule"],
            registry=r,
        )
        self.last_run_success = Gauge(
            "auditor_last_run_success",
            "1 if the last run succeeded, else 0",
            ["schedule"],
            registry=r,
        )
        self.last_run_duration = Gauge(
            "auditor_last_run_duration_seconds",
            "Duration of the last run",
            ["schedule"],
            registry=r,
        )
        self.run_duration = Histogram(
            "auditor_run_duration_seconds",
            "Duration of audit runs",
            ["schedule"],
            buckets=(1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600),
            registry=r,
        )
        self.runs = Counter(
            "auditor_runs",
            "Runs by outcome (success, failure, skipped, abandoned)",
            ["schedule", "outcome"],
            registry=r,
        )
        self.job_errors = Counter(
            "auditor_job_errors", "Jobs that raised an exception", ["schedule"], registry=r
        )
        self.job_misses = Counter(
            "auditor_job_misses",
            "Runs not started: misfire (later than the grace time) or max_instances",
            ["schedule", "reason"],
            registry=r,
        )
        self.catch_up_runs = Counter(
            "auditor_catch_up_runs",
            "Runs started at boot for a slot the previous process abandoned or the service missed",
            ["schedule", "reason"],
            registry=r,
        )
        self.publish_failures = Counter(
            "auditor_publish_failures",
            "Failed publications of a run's artifacts",
            ["schedule"],
            registry=r,
        )
        self.vms = Gauge(
            "auditor_vms", "VMs per readiness in the last report", ["readiness"], registry=r
        )
        self.failed_findings = Gauge(
            "auditor_failed_findings",
            "FAIL findings per severity in the last report",
            ["severity"],
            registry=r,
        )
        self.findings = Gauge(
            "auditor_findings", "Findings per status in the last report", ["status"], registry=r
        )
        self.vms_by_owner = Gauge(
            "auditor_owner_vms",
            "VMs per cluster, owner and readiness in the last report",
            ["cluster", "owner", "readiness"],
            registry=r,
        )
        self.last_publish = Gauge(
            "auditor_last_publish_success_timestamp_seconds",
            "Unix time a run was last published and verified",
            registry=r,
        )
        self.spool_backlog = Gauge(
            "auditor_spool_backlog_runs", "Runs waiting in the spool to be published", registry=r
        )
        self.spool_quarantined = Gauge(
            "auditor_spool_quarantined_runs",
            "Runs quarantined because they conflict with the archive",
            registry=r,
        )

    def record_report(self, report: dict[str, Any]) -> None:
        """Set the report gauges from a report.json envelope's ``summary``."""
        summary = report.get("summary", {})
        for gauge, keys, source in (
            (self.vms, _READINESS, summary.get("readiness", {})),
            (self.failed_findings, _SEVERITIES, summary.get("fails_by_severity", {})),
            (self.findings, _STATUSES, summary.get("findings_by_status", {})),
        ):
            for key in keys:
                gauge.labels(key).set(float(source.get(key, 0)))
        cluster = str((report.get("cluster") or {}).get("name") or "unknown")
        counts: dict[tuple[str, str], int] = {}
        for vm in report.get("vms", []):
            owner = str(vm.get("owner") or "unassigned")
            for readiness in _READINESS:
                counts.setdefault((owner, readiness), 0)
            slot = (owner, str(vm.get("readiness")))
            counts[slot] = counts.get(slot, 0) + 1
        self.vms_by_owner.clear()
        for (owner, readiness), count in counts.items():
            self.vms_by_owner.labels(cluster, owner, readiness).set(float(count))

    def record_run(self, schedule: str, outcome: str, *, ended: float, duration: float) -> None:
        """Count a finished run; ``ended`` is Unix time, ``duration`` seconds."""
        self.runs.labels(schedule, outcome).inc()
        if outcome in ("success", "failure"):
            self.last_run_time.labels(schedule).set(ended)
            self.last_run_success.labels(schedule).set(1.0 if outcome == "success" else 0.0)
            self.last_run_duration.labels(schedule).set(duration)
            self.run_duration.labels(schedule).observe(duration)


class _ThreadingServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        log.debug("http: " + format, *args)


class HealthServer:
    """Serve ``/metrics``, ``/healthz`` and ``/readyz`` on ``host:port`` in a daemon thread."""

    def __init__(
        self,
        metrics: ServiceMetrics,
        ready: Callable[[], bool],
        *,
        host: str,
        port: int,
        alive: Callable[[], bool] = lambda: True,
    ) -> None:
        self._metrics_app = make_wsgi_app(metrics.registry)
        self._ready = ready
        self._alive = alive
        self._server = make_server(
            host, port, self._app, server_class=_ThreadingServer, handler_class=_QuietHandler
        )
        self.port: int = self._server.server_port
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="auditor-http", daemon=True
        )

    def _app(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if path == "/metrics":
            body: Iterable[bytes] = self._metrics_app(environ, start_response)
            return body
        if path == "/healthz":
            ok = self._alive()
            code, text = (
                ("200 OK", b"ok\n")
                if ok
                else ("503 Service Unavailable", b"scheduler thread not running\n")
            )
        elif path == "/readyz":
            ok = self._ready()
            code, text = (
                ("200 OK", b"ready\n") if ok else ("503 Service Unavailable", b"not ready\n")
            )
        else:
            code, text = "404 Not Found", b"not found: try /metrics, /healthz, /readyz\n"
        start_response(code, [("Content-Type", "text/plain; charset=utf-8")])
        return [text]

    def start(self) -> None:
        """Start serving in the background."""
        self._thread.start()

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._server.shutdown()
        self._server.server_close()
