"""``auditor serve`` as a real process delivers the publish spool at start (issue 14 item 3).

A publication stopped before its first object (as a ``kill -9`` would leave it) waits in the
spool; ``serve`` delivers it when the scheduler starts, before any tick, and reports the
backlog and the last successful publication in ``/metrics``.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path

from click.testing import CliRunner

from auditor.cli import main
from auditor.publish import publish_run, publish_settings
from auditor.publish.spool import pending
from tests.service_support import REPO, free_port, write_yaml
from tests.test_service_e2e import http, metric, process, wait_for

EXAMPLE = REPO / "examples" / "small-cluster"


def test_serve_delivers_a_spooled_run_at_start(tmp_path: Path) -> None:
    port = free_port()
    publish = {"url": str(tmp_path / "archive"), "spool_dir": str(tmp_path / "spool")}
    cfg = write_yaml(
        tmp_path / "auditor.yaml",
        {
            "cluster_name": "example",
            "source": {"type": "directory", "path": str(EXAMPLE)},
            "report": {"out_dir": str(tmp_path / "reports"), "formats": ["json"]},
            "publish": publish,
            "schedules": [{"id": "yearly", "cron": "0 6 1 1 *", "publish": True}],
            "service": {
                "state_dir": str(tmp_path / "state"),
                "metrics": {"host": "127.0.0.1", "port": port},
            },
        },
    )
    run = tmp_path / "run"
    args = ["run", "--from-dir", str(EXAMPLE), "--at", "2026-11-30T06:00:00Z"]
    made = CliRunner().invoke(main, [*args, "--out", str(run), "--format", "json"])
    assert made.exit_code == 0, made.output
    target = publish_settings(publish)
    stopped = publish_run(run, target, should_stop=lambda: True)
    assert not stopped.published and len(pending(target.spool_dir)) == 1

    auditor = str(Path(sys.executable).with_name("auditor"))
    with process([auditor, "serve", "--config", str(cfg)], tmp_path / "serve.log") as proc:
        base = f"http://127.0.0.1:{port}"
        wait_for("the spool delivered", lambda: not pending(target.spool_dir), timeout=30)

        def delivered_metrics() -> str | None:
            # the spool entry goes before the gauges are set: wait for both, not the first
            r = http(base + "/metrics")
            if not r or "auditor_spool_backlog_runs 0.0" not in r[1]:
                return None
            published = metric(r[1], "auditor_last_publish_success_timestamp_seconds")
            return r[1] if published > 0 else None

        text = wait_for("metrics", delivered_metrics, timeout=30)
        assert metric(text, "auditor_last_publish_success_timestamp_seconds") > 0
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(15) == 0
    manifests = list((tmp_path / "archive").rglob("manifest.json"))
    assert len(manifests) == 1 and manifests[0].parent.name == stopped.run_id
    assert "delivered spooled run" in (tmp_path / "serve.log").read_text()
