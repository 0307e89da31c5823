"""``/healthz`` reflects the scheduler thread (issue 14 item 7), over real HTTP."""

from __future__ import annotations

import urllib.error
import urllib.request

from auditor.service.metrics import HealthServer, ServiceMetrics


def _get(port: int, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_healthz_follows_the_scheduler_thread() -> None:
    state = {"alive": True}
    server = HealthServer(
        ServiceMetrics(), lambda: True, host="127.0.0.1", port=0, alive=lambda: state["alive"]
    )
    server.start()
    try:
        assert _get(server.port, "/healthz") == (200, "ok\n")
        state["alive"] = False
        assert _get(server.port, "/healthz") == (503, "scheduler thread not running\n")
        assert _get(server.port, "/readyz") == (200, "ready\n")
    finally:
        server.stop()
