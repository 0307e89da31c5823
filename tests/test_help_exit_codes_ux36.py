"""Every command that can exit non-zero says its exit codes in ``--help`` (trial ux36: a new
user reading ``auditor fleet --help`` or ``verify --help`` found none, only in
docs/exit-codes.md), and ``fleet --help`` says what makes a cluster's READY VMs not count.
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from auditor.cli import main

#: command -> the codes its help must name (docs/exit-codes.md)
CODES = {
    "run": ("0", "1", "2", "3", "4"),
    "fleet": ("0", "2", "4"),
    "verify": ("0", "1", "2"),
    "history": ("0", "2"),
    "publish": ("0", "2", "3"),
    "report": ("0", "2"),
    "collect": ("0", "2"),
    "preflight": ("0", "1", "2"),
    "serve": ("0", "2"),
}


def _help(command: str) -> str:
    result = CliRunner().invoke(main, [command, "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split())


@pytest.mark.parametrize("command", sorted(CODES))
def test_help_names_the_exit_codes(command: str) -> None:
    text = _help(command)
    assert "Exit codes:" in text, command
    codes = text[text.index("Exit codes:") :]
    for code in CODES[command]:
        assert f" {code} " in codes or f"; {code} " in codes, (command, code)


def test_fleet_help_says_what_keeps_ready_from_counting() -> None:
    text = _help("fleet")
    assert "stale, incomplete, unverified or unreadable counts them UNKNOWN" in text
    assert "with --period, a month not counted whole" in text
