"""The CLI imports a command's module only when the command is used (``auditor.cli._COMMANDS``):
``auditor run`` does not pay for the fleet roll-up's imports, and every command is still
listed and found by name."""

from __future__ import annotations

import subprocess
import sys

import click

from auditor.cli import _COMMANDS, main


def _modules_after(code: str) -> set[str]:
    """The ``auditor`` modules a fresh interpreter has imported after running ``code``."""
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys\nprint(' '.join(sorted(sys.modules)))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return {m for m in out.split() if m.startswith("auditor")}


def test_the_run_command_does_not_import_the_fleet_roll_up() -> None:
    loaded = _modules_after(
        "import click\nfrom auditor.cli import main\nmain.get_command(click.Context(main), 'run')"
    )
    assert "auditor.cli.run" in loaded
    assert "auditor.pipeline" in loaded
    assert not {"auditor.cli.fleet", "auditor.fleet", "auditor.fleet.collect"} & loaded


def test_every_command_is_listed_and_found_under_its_own_name() -> None:
    ctx = click.Context(main)
    assert main.list_commands(ctx) == sorted(_COMMANDS)
    for name in _COMMANDS:
        command = main.get_command(ctx, name)
        assert command is not None and command.name == name
    assert main.get_command(ctx, "no-such-command") is None
