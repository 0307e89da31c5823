"""The CLI speaks one way: ``Error:`` as click does, choices in any case, only the options a
command uses, aligned columns (ux19 new-user trial)."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from auditor.cli import main
from tests.conftest import REPO, invoke_run

EXAMPLE = REPO / "examples" / "small-cluster"


def test_messages_say_error_as_click_does(tmp_path: Path) -> None:
    """`run` said "error: ..." where click's own usage errors say "Error: ..."."""
    sources = sorted((REPO / "auditor" / "cli").glob("*.py"))
    lower = [
        f"{p.name}:{n}"
        for p in sources
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if re.search(r"""f?["'](error|warning): """, line)
    ]
    assert lower == []
    (tmp_path / "archive").mkdir()
    fleet = CliRunner().invoke(
        main, ["fleet", "--from", str(tmp_path / "archive"), "--out", str(tmp_path / "f")]
    )
    assert fleet.exit_code == 2
    assert fleet.output == f"Error: no cluster folder under {tmp_path / 'archive'}\n"
    gated = invoke_run(EXAMPLE, tmp_path / "g", "--fail-on", "AT-RISK")  # any case too
    assert gated.exit_code == 1
    assert gated.output.splitlines()[-1].startswith("Error: --fail-on at-risk: 3 NOT_READY")


def test_format_names_are_taken_in_any_case(tmp_path: Path) -> None:
    result = invoke_run(EXAMPLE, tmp_path / "o", "--format", "HTML, Json,html")
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == [
        "manifest.json",
        "report.html",
        "report.json",
        "report.schema.json",
    ]
    bad = invoke_run(EXAMPLE, tmp_path / "b", "--format", "HTML,xml")
    assert bad.exit_code == 2
    assert "Error: Invalid value for '--format': unknown format(s) xml; name one or more of " in (
        bad.output
    )
    assert not (tmp_path / "b").exists()


def test_s3_choices_are_taken_in_any_case_and_listed_as_written() -> None:
    from auditor.cli.publish import settings_from_options

    target = settings_from_options(
        "s3://bucket/prefix",
        {"sse": "AES256", "object_lock_mode": "COMPLIANCE", "object_lock_days": 30},
    )
    assert (target.sse, target.object_lock_mode) == ("AES256", "COMPLIANCE")
    publish = CliRunner().invoke(main, ["publish", "--help"]).output
    assert "--sse [AES256|aws:kms]" in publish
    assert "--object-lock-mode [GOVERNANCE|COMPLIANCE]" in publish
    from auditor.cli.options import AnyCase

    assert AnyCase(["GOVERNANCE", "COMPLIANCE"]).convert("governance", None, None) == "GOVERNANCE"


def test_history_and_verify_offer_no_upload_options() -> None:
    """--sse, --kms-key-id, --object-lock-*, --spool-dir did nothing on the read commands."""
    upload = ("--sse", "--kms-key-id", "--object-lock-mode", "--object-lock-days", "--spool-dir")
    for command in ("history", "verify"):
        text = CliRunner().invoke(main, [command, "--help"]).output
        assert [o for o in upload if o in text] == [], command
        assert "--endpoint-url" in text and "--max-attempts" in text
        refused = CliRunner().invoke(main, [command, "x", "--sse", "AES256"])
        assert refused.exit_code == 2 and "No such option '--sse'" in refused.output
    for command in ("publish", "run"):
        text = CliRunner().invoke(main, [command, "--help"]).output
        assert [o for o in upload if o in text] == list(upload), command


def test_checks_list_columns_line_up() -> None:
    """RR-FW-001 is one character shorter than RR-BKP-001: its severity and title were shifted."""
    lines = CliRunner().invoke(main, ["checks", "list"]).output.splitlines()
    fw = next(line for line in lines if line.startswith("RR-FW-001 "))
    assert fw.startswith("RR-FW-001   medium    The firmware UUID")
    starts = {(line.index(line.split()[1]), line.index(line.split()[2])) for line in lines}
    assert starts == {(12, 22)}


def test_python_dash_m_auditor_runs_the_cli() -> None:
    """`python -m auditor --help` said "No module named auditor.__main__"."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "auditor", "checks", "list"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("RR-BKP-001  high      The VM and its disks")
