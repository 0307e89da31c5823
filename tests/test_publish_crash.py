"""Crash-safe publishing (issue 14 item 3) against a real SeaweedFS server and local archives.

``kill -9`` of a real ``auditor publish`` child process mid-upload, then a restart: the
run is published exactly once (one object version per key in a versioned, locked bucket)
and complete (``auditor verify`` is clean); a conflicting run is quarantined and blocks
nothing; a shutdown stops between objects and the next start resumes.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from auditor.cli import main
from auditor.config.publish import PublishSettings
from auditor.publish import publish_run, retry_spool
from auditor.publish.manifest import seal_run
from auditor.publish.spool import pending, quarantined
from tests.conftest import REPO
from tests.publish_support import ACCESS_KEY, SECRET_KEY, WeedServer

EXAMPLE = REPO / "examples" / "small-cluster"
_names = itertools.count()


def audit(out: Path, at: str = "2026-11-30T06:00:00Z") -> Path:
    args = ["run", "--from-dir", str(EXAMPLE), "--at", at, "--cluster-name", "example"]
    result = CliRunner().invoke(main, [*args, "--out", str(out), "--format", "json,csv"])
    assert result.exit_code == 0, result.output
    return out


def _env() -> dict[str, str]:
    return {
        **os.environ,
        "AWS_ACCESS_KEY_ID": ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
        "AWS_DEFAULT_REGION": "us-east-1",
    }


def _keys(weed: WeedServer, bucket: str, prefix: str) -> list[str]:
    pages = weed.client().get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
    return [o["Key"] for page in pages for o in page.get("Contents", [])]


def test_kill_9_during_publish_then_restart_publishes_exactly_once(
    weed: WeedServer, tmp_path: Path
) -> None:
    bucket = f"crash-{next(_names)}"
    weed.client().create_bucket(Bucket=bucket, ObjectLockEnabledForBucket=True)
    run = audit(tmp_path / "run")
    for i in range(300):  # enough objects that the child is still uploading when killed
        (run / "extra" / f"{i:03d}.txt").parent.mkdir(exist_ok=True)
        (run / "extra" / f"{i:03d}.txt").write_text(f"artifact {i}\n")
    seal_run(run)  # sealed as the run's own artifacts: publish refuses files added unsealed
    spool_dir = tmp_path / "spool"
    target = [
        "--to", f"s3://{bucket}/evidence", "--endpoint-url", weed.endpoint,
        "--addressing-style", "path", "--spool-dir", str(spool_dir),
        "--object-lock-mode", "GOVERNANCE", "--object-lock-days", "1",
    ]  # fmt: skip
    code = "from auditor.cli import main; main()"
    child = subprocess.Popen(
        [sys.executable, "-c", code, "publish", "--from-run", str(run), "--no-trend", *target],
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    run_id = json.loads((run / "report.json").read_text())["run"]["id"]
    prefix = f"evidence/example/2026/11/30/{run_id}/"
    deadline = time.monotonic() + 120
    while len(_keys(weed, bucket, prefix)) < 20:
        assert child.poll() is None, child.stdout.read() if child.stdout else ""
        assert time.monotonic() < deadline, "the child uploaded nothing"
        time.sleep(0.05)
    child.send_signal(signal.SIGKILL)
    child.wait()
    landed = _keys(weed, bucket, prefix)
    assert prefix + "manifest.json" not in landed, "killed before the manifest (incomplete run)"
    assert len(landed) < 300
    assert [e.run_id for e in pending(spool_dir)] == [run_id], "spooled before the first upload"

    restart = subprocess.run(
        [sys.executable, "-c", code, "publish", "--retry", "--spool-dir", str(spool_dir)],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = restart.stdout + restart.stderr
    assert restart.returncode == 0, output
    assert f"published run {run_id}" in output
    assert "1 spooled run(s): 1 published, 0 still spooled, 0 quarantined" in output
    assert pending(spool_dir) == []

    stored = weed.client().get_object(Bucket=bucket, Key=prefix + "manifest.json")
    manifest = json.loads(stored["Body"].read())
    paths = {a["path"] for a in manifest["artifacts"]}
    assert {"report.json", "extra/299.txt", "trend.json"} <= paths, "delivered with its trend"
    expected = {prefix + a["path"] for a in manifest["artifacts"]} | {prefix + "manifest.json"}
    versions = weed.client().list_object_versions(Bucket=bucket, Prefix=prefix, MaxKeys=1000)
    counts: dict[str, int] = {}
    for v in versions.get("Versions", []):
        counts[v["Key"]] = counts.get(v["Key"], 0) + 1
    assert set(counts) == expected, "complete: every artifact and the manifest"
    assert set(counts.values()) == {1}, "exactly once: one version per key"
    check = CliRunner().invoke(
        main,
        ["verify", f"s3://{bucket}/{prefix}", "--endpoint-url", weed.endpoint,
         "--addressing-style", "path"],
        env={"AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY},
    )  # fmt: skip
    assert check.exit_code == 0, check.output
    assert "Object Lock retention checked" in check.output


def _local(tmp: Path) -> PublishSettings:
    return PublishSettings(local_dir=tmp / "archive", spool_dir=tmp / "spool")


def test_shutdown_stops_between_objects_and_the_next_start_resumes(tmp_path: Path) -> None:
    run = audit(tmp_path / "run")
    target = _local(tmp_path)
    calls = itertools.count()
    stopped = publish_run(run, target, should_stop=lambda: next(calls) >= 2)
    assert not stopped.published and "publishing stopped before" in (stopped.error or "")
    assert stopped.spooled is not None and len(pending(target.spool_dir)) == 1
    archive = list((tmp_path / "archive").rglob("*"))
    assert not [p for p in archive if p.name == "manifest.json"], "no manifest: not published"
    resumed = retry_spool(target.spool_dir)
    assert [r.published for r in resumed] == [True]
    assert len(resumed[0].already_present) == 2, "the two objects landed before are kept"
    assert pending(target.spool_dir) == []


def test_conflicting_run_is_quarantined_and_blocks_nothing(tmp_path: Path) -> None:
    target = _local(tmp_path)
    first = audit(tmp_path / "first")
    assert publish_run(first, target).published
    # the same run id with different bytes (a forged or re-rendered copy)
    forged = tmp_path / "forged"
    shutil.copytree(first, forged)
    (forged / "manifest.json").unlink()  # a sealed folder changed in place is refused outright
    (forged / "vms.csv").write_text("namespace,name,readiness\nx,y,READY\n")
    later = audit(tmp_path / "later", at="2026-12-01T06:00:00Z")
    conflict = publish_run(forged, target)
    assert not conflict.published and conflict.quarantined is not None
    assert "a different object already holds this key" in (conflict.error or "")
    assert (conflict.quarantined / "error.txt").read_text().startswith(conflict.error or "?")
    assert quarantined(target.spool_dir) == [conflict.quarantined]
    result = publish_run(later, target)
    assert result.published, result.error
    assert pending(target.spool_dir) == []


def test_retry_reports_per_run_and_latest_is_not_rewritten(tmp_path: Path) -> None:
    target = _local(tmp_path)
    run = audit(tmp_path / "run")
    first = publish_run(run, target)
    assert first.published and first.latest_updated
    latest = next((tmp_path / "archive").rglob("latest.json"))
    mtime = latest.stat().st_mtime_ns
    again = publish_run(run, target)
    assert again.published and not again.latest_updated
    assert latest.stat().st_mtime_ns == mtime


def test_runs_delivered_from_the_spool_get_trend(tmp_path: Path) -> None:
    target = _local(tmp_path)
    assert publish_run(audit(tmp_path / "a"), target).published
    later = audit(tmp_path / "b", at="2026-12-01T06:00:00Z")
    stopped = publish_run(later, target, should_stop=lambda: True)
    assert not stopped.published
    assert not (later / "trend.json").exists()
    delivered = retry_spool(target.spool_dir)
    assert [r.published for r in delivered] == [True]
    trends = [p for p in (tmp_path / "archive").rglob("trend.json")]
    assert len(trends) == 1
    trend: dict[str, Any] = json.loads(trends[0].read_text())
    assert trend["previous"]["audit_time"] == "2026-11-30T06:00:00Z"
    assert trend["current"]["audit_time"] == "2026-12-01T06:00:00Z"


def test_an_unwritable_spool_refuses_to_publish_without_a_traceback(tmp_path: Path) -> None:
    run = audit(tmp_path / "run")
    blocker = tmp_path / "spool-is-a-file"
    blocker.write_text("x")
    args = ["publish", "--from-run", str(run), "--to", str(tmp_path / "archive")]
    result = CliRunner().invoke(main, [*args, "--spool-dir", str(blocker / "spool"), "--no-trend"])
    assert result.exit_code == 3, result.output
    assert "NOT published and NOT spooled" in result.output
    assert not list((tmp_path / "archive").rglob("manifest.json")), "nothing uploaded unspooled"
