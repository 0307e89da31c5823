"""What the console script keeps until it exits, and that nothing else keeps anything."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import weakref
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from auditor import lifetime, pipeline
from auditor.cli import main
from auditor.config import AuditSettings
from auditor.config.service import DirectorySourceSettings
from auditor.service.jobs import pipeline_runner
from auditor.sources.base import ClusterData
from auditor.sources.directory import DirectorySource

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "small-cluster"
AT = "2026-11-30T06:00:00Z"


class _Thing:
    """Something a weak reference can follow."""


def test_keep_until_exit_keeps_nothing_outside_the_console_script() -> None:
    thing = _Thing()
    ref = weakref.ref(thing)
    lifetime.keep_until_exit(thing)
    del thing
    gc.collect()
    assert ref() is None
    assert lifetime.kept() is False


def test_run_audit_leaves_nothing_alive_in_a_long_lived_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The service audits in one process day after day: each audit's inputs must go when
    its run is dropped (only the console script keeps them, to skip the teardown)."""
    settings = AuditSettings(source=DirectorySourceSettings(type="directory", path=EXAMPLE))
    collected: list[weakref.ref[ClusterData]] = []
    real = DirectorySource.collect

    def collect(self: DirectorySource) -> ClusterData:
        data = real(self)
        collected.append(weakref.ref(data))
        return data

    monkeypatch.setattr(DirectorySource, "collect", collect)
    run = pipeline.run_audit(settings, lambda: datetime(2026, 11, 30, 6, tzinfo=UTC))
    assert run.report.summary.vms > 0
    gc.collect()
    assert len(collected) == 1
    assert collected[0]() is None


@pytest.fixture
def console_script(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """This process as the console script leaves it (auditor.cli.entry), and what is kept."""
    kept: list[object] = []
    monkeypatch.setattr(lifetime, "_ENDS", False)  # restored afterwards
    monkeypatch.setattr(lifetime, "_KEEPING", False)
    monkeypatch.setattr(lifetime, "_KEPT", kept)
    lifetime.ends_with_command()  # what entry() does before any command runs
    return kept


def test_the_service_keeps_nothing_under_the_console_script(
    console_script: list[object], tmp_path: Path
) -> None:
    """red team (helper-22): ``auditor serve`` runs under the console script too, and its
    scheduled audits run in its own process: keeping their inputs would hold a parsed cluster
    and an index per schedule slot until the service stops."""
    settings = AuditSettings(source=DirectorySourceSettings(type="directory", path=EXAMPLE))
    for hour in (6, 7):
        pipeline_runner(
            settings,
            at=datetime(2026, 11, 30, hour, tzinfo=UTC),
            out_dir=tmp_path / str(hour),
            formats=["json"],
        )
        assert (tmp_path / str(hour) / "report.json").is_file()
    assert console_script == []
    assert lifetime.kept() is False


def test_auditor_run_keeps_its_audit_under_the_console_script(
    console_script: list[object], tmp_path: Path
) -> None:
    args = ["run", "--at", AT, "--format", "json", "--from-dir", str(EXAMPLE)]
    result = CliRunner().invoke(main, [*args, "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    kinds = {type(o).__name__ for o in console_script}
    assert {"ClusterData", "Evaluation", "AuditRun"} <= kinds


def test_the_console_script_exits_with_the_command_s_code_and_output(tmp_path: Path) -> None:
    """The console script keeps the audit's objects and ends with os._exit: the report is
    written whole, stdout is flushed, and a gate failure still exits 1."""
    code = "from auditor.cli import entry; entry()"
    args = ["run", "--at", AT, "--format", "json", "--from-dir", str(EXAMPLE)]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    ok = subprocess.run(
        [sys.executable, "-c", code, *args, "--out", str(tmp_path / "a")],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    report = json.loads((tmp_path / "a" / "report.json").read_text())
    assert ok.stdout.startswith(f"audited {report['summary']['vms']} VMs at {AT}")
    assert f"wrote {tmp_path / 'a' / 'manifest.json'}" in ok.stdout
    gate = subprocess.run(
        [sys.executable, "-c", code, *args, "--out", str(tmp_path / "b"), "--fail-on", "at-risk"],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert gate.returncode == 1, gate.stderr
    assert (tmp_path / "b" / "manifest.json").is_file()
