"""Exit codes tell the truth (issue 14 item 5): nothing audited is never 0 and never the gate's 1.

Uses the in-repo example export and the loopback API server (tests/kubeapi_server.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from auditor.cli import main
from auditor.cli.exitcodes import EXIT_GATE, EXIT_NOTHING_AUDITED, EXIT_OK
from auditor.sources.kubeclient import ClusterLostError
from tests.conftest import REPO, invoke_run
from tests.kubeapi_server import Faults
from tests.live_support import fast_options, serve

EXAMPLE = REPO / "examples" / "small-cluster"


def _nothing(result: object, tmp: Path) -> str:
    assert result.exit_code == EXIT_NOTHING_AUDITED, result.output  # type: ignore[attr-defined]
    assert not (tmp / "out" / "report.json").exists(), "no clean-looking report is left"
    return result.output  # type: ignore[attr-defined, no-any-return]


def test_empty_directory_exits_4_naming_it(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    output = _nothing(invoke_run(empty, tmp_path / "out"), tmp_path)
    assert f"no VirtualMachine objects found in {empty} (nothing readable)" in output


def test_a_junk_file_instead_of_a_folder_exits_4(tmp_path: Path) -> None:
    junk = tmp_path / "junk.yaml"
    junk.write_text("just: [a, list\n  of: nonsense\n")
    output = _nothing(invoke_run(junk, tmp_path / "out"), tmp_path)
    assert f"no VirtualMachine objects found in {junk}" in output
    # a file naming no kind could have held VMs: the error says which file and why
    assert "the VirtualMachine list could not be read: file junk.yaml could not be read" in output
    assert "YAML error at line 2" in output


def test_a_folder_without_vms_exits_4(tmp_path: Path) -> None:
    root = tmp_path / "novms"
    root.mkdir()
    (root / "backups.yaml").write_text((EXAMPLE / "backups.yaml").read_text())
    output = _nothing(invoke_run(root, tmp_path / "out"), tmp_path)
    assert "no VirtualMachine objects found" in output
    assert "other object(s) read" in output


def test_unreadable_vm_list_exits_4(tmp_path: Path) -> None:
    root = tmp_path / "broken"
    root.mkdir()
    (root / "virtualmachines.yaml").write_text("items: [\n")
    output = _nothing(invoke_run(root, tmp_path / "out"), tmp_path)
    assert "no VirtualMachine objects found" in output
    assert "the VirtualMachine list could not be read: file virtualmachines.yaml" in output


def test_gate_keeps_exit_1_and_a_clean_run_exits_0(tmp_path: Path) -> None:
    clean = invoke_run(EXAMPLE, tmp_path / "a")
    assert clean.exit_code == EXIT_OK, clean.output
    gated = invoke_run(EXAMPLE, tmp_path / "b", "--fail-on", "at-risk")
    assert gated.exit_code == EXIT_GATE, gated.output
    # its one-line reason (docs/exit-codes.md; new-user trial: it exited 1 saying nothing)
    assert (
        "Error: --fail-on at-risk: 3 NOT_READY, 1 AT_RISK VM(s) at or below the gate "
        "(UNKNOWN always counts)"
    ) in gated.output
    assert "--fail-on" not in clean.output


@pytest.mark.parametrize("after", [0, 5])
def test_api_server_lost_after_discovery_raises_lost(tmp_path: Path, after: int) -> None:
    sleeps: list[float] = []
    with serve(tmp_path, root=EXAMPLE, faults=Faults(vanish_after=after)) as live:
        source = live.source(options=fast_options(retry_delays=(0.01, 0.02)))
        source._sleep = sleeps.append
        with pytest.raises(ClusterLostError) as caught:
            source.collect()
        lists = live.api.lists_answered
    assert lists == after
    assert f"lost the API server {live.url}" in str(caught.value)
    assert f"after {after} of " in str(caught.value)
    # fail fast: one round of retry delays in all, not one per kind left
    assert sleeps == [0.01, 0.02]


def test_cli_run_with_api_server_lost_mid_run_exits_4(tmp_path: Path) -> None:
    with serve(tmp_path, root=EXAMPLE, faults=Faults(vanish_after=3)) as live:
        result = CliRunner().invoke(
            main,
            ["run", "--kubeconfig", str(live.kubeconfig), "--out", str(tmp_path / "out")],
        )
    output = _nothing(result, tmp_path)
    assert "lost the API server" in output
    assert "No check failed" not in output


def test_cli_run_with_a_forbidden_vm_list_exits_4(tmp_path: Path) -> None:
    with serve(tmp_path, root=EXAMPLE, faults=Faults(forbidden={"VirtualMachine"})) as live:
        result = CliRunner().invoke(
            main,
            ["run", "--kubeconfig", str(live.kubeconfig), "--out", str(tmp_path / "out")],
        )
    output = _nothing(result, tmp_path)
    assert "the VirtualMachine list could not be read" in output and "HTTP 403" in output


def test_the_summary_names_kinds_not_read_even_when_the_audit_is_complete() -> None:
    from auditor.cli.run import incomplete_note

    states = {"VirtualMachine": "complete", "KubeVirt": "unavailable", "Route": "unavailable"}
    report = {
        "run": {"complete": True},
        "cluster": {"kind_states": states},
        "collection_problems": [],
    }
    assert incomplete_note(report) == "; 2 kind(s) not read: KubeVirt, Route"
    report["run"]["complete"] = False
    report["collection_problems"] = [{"reason": "x"}]
    assert incomplete_note(report) == (
        "; INCOMPLETE (1 collection problem(s); 2 kind(s) not read: KubeVirt, Route)"
    )
    states.update(KubeVirt="complete", Route="complete")
    report["run"]["complete"] = True
    assert incomplete_note(report) == ""


@pytest.mark.parametrize(
    ("at", "said"),
    [
        ("yesterday", "not an RFC 3339 time"),
        ("2026-11-30T06:00:00", "has no time zone"),
    ],
)
def test_a_bad_at_is_refused_naming_the_option(tmp_path: Path, at: str, said: str) -> None:
    result = CliRunner().invoke(
        main, ["run", "--from-dir", str(tmp_path), "--at", at, "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 2
    assert "--at" in result.output and said in result.output


def test_an_empty_format_list_is_refused(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["run", "--from-dir", str(tmp_path), "--format", "", "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 2
    assert "--format" in result.output and "is empty" in result.output


@pytest.mark.parametrize(
    ("extra", "code"), [((), EXIT_OK), (("--fail-on", "at-risk"), EXIT_GATE), (("--at", "x"), 2)]
)
def test_console_script_ends_without_teardown_and_keeps_exit_code_and_output(
    tmp_path: Path, extra: tuple[str, ...], code: int
) -> None:
    """The installed ``auditor`` script (``auditor.cli:entry``) leaves with ``os._exit`` once a
    run's reports are written: same exit code, every line of output flushed."""
    import subprocess
    import sys

    script = Path(sys.executable).with_name("auditor")
    out = tmp_path / "out"
    done = subprocess.run(
        [str(script), "run", "--from-dir", str(EXAMPLE), "--out", str(out), *extra],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == code, done.stderr
    if code == 2:
        assert "--at" in done.stderr and not out.exists()
        return
    assert done.stdout.startswith("audited ") and done.stdout.rstrip().endswith(
        f"wrote {out / 'manifest.json'}"
    )
    assert (out / "report.json").stat().st_size > 1000
