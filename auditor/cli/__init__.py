"""Command line: ``auditor run | checks | ...``. Thin: parses options, calls the pipeline.

Each command group lives in its own module and is registered here with one
``main.add_command`` line, so features stay independent.
"""

from __future__ import annotations

import importlib
import io
import logging
import os
import sys
from typing import Any, TextIO

import click

from auditor import __version__
from auditor.cli.exitcodes import EXIT_USAGE
from auditor.lifetime import ends_with_command, keep_until_exit, kept

__all__ = ["main", "entry", "keep_until_exit"]


def entry() -> None:
    """The ``auditor`` console script: :func:`main`, then the process ends without tearing
    down what :func:`keep_until_exit` kept (streams and log handlers are flushed first).

    Raises:
        SystemExit: when nothing was kept (the interpreter then exits as usual).
    """
    ends_with_command()
    try:
        main()
    except SystemExit as done:
        if not kept():
            raise
        code = done.code
        if not isinstance(code, int):
            if code is not None:
                print(code, file=sys.stderr)
            code = 0 if code is None else 1
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


class _Commands(click.Group):
    """The command group; a file-system error no command turned into its own message (a
    path too long for the system, a folder that cannot be listed, given as ``--from``,
    ``--to`` or ``--out``) ends the command with exit 2 and one line naming the path and the
    reason, never a traceback (``docs/exit-codes.md``: a path that cannot be used)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command's name, sorted (as click lists them)."""
        return sorted({*_COMMANDS, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command named ``cmd_name``, its module imported on first use; None when
        there is no such command (click then names it as unknown)."""
        known = self.commands.get(cmd_name)
        if known is None and cmd_name in _COMMANDS:
            module, _, attribute = _COMMANDS[cmd_name].partition(":")
            known = getattr(importlib.import_module(module), attribute)
            self.commands[cmd_name] = known
        return known

    def invoke(self, ctx: click.Context) -> object:
        """Run the command with stdout that outlives its reader (:class:`_PipeSafe`); an
        unhandled :class:`OSError` exits 2 naming its path."""
        stdout = sys.stdout
        sys.stdout = _PipeSafe(stdout)
        try:
            return super().invoke(ctx)
        except OSError as exc:
            where = f"{exc.filename}: " if exc.filename else ""
            click.echo(f"Error: {where}{exc.strerror or exc}", err=True)
            ctx.exit(EXIT_USAGE)
        finally:
            sys.stdout = stdout


class _PipeSafe:
    """stdout whose reader may go away (``auditor run ... | head -1``): the first write that
    meets a closed pipe points the descriptor at ``/dev/null`` and the command goes on, so the
    run is still sealed and published and exits with its own code. Before, the
    BrokenPipeError ended ``run`` before publishing with exit 1 (the ``--fail-on`` gate's
    code) and no message (trial ux30). Everything else is the wrapped stream's."""

    def __init__(self, inner: TextIO) -> None:
        self._inner = inner
        self._gone = False

    def write(self, text: str) -> int:
        """Write ``text``; dropped once the reader has gone."""
        if not self._gone:
            try:
                return self._inner.write(text)
            except BrokenPipeError:
                self._reader_gone()
        return len(text)

    def flush(self) -> None:
        """Flush; nothing once the reader has gone."""
        if not self._gone:
            try:
                self._inner.flush()
            except BrokenPipeError:
                self._reader_gone()

    def _reader_gone(self) -> None:
        self._gone = True
        try:  # the interpreter's own last flush then writes to /dev/null, quietly
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, self._inner.fileno())
            os.close(null)
        except (OSError, ValueError, io.UnsupportedOperation):
            pass  # no descriptor (a test's captured stream): dropping is enough

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="auditor")
def main() -> None:
    """Audit the recovery readiness of KubeVirt virtual machines."""


#: Each command's name and where it is defined (``module:attribute``). A command's module is
#: imported when the command is run or listed (``--help``), not before: ``auditor run`` does
#: not import the fleet roll-up, the scheduler's cron parser or the live preflight.
_COMMANDS = {
    "run": "auditor.cli.run:run",
    "checks": "auditor.cli.checks:checks",
    "serve": "auditor.cli.service:serve_command",
    "validate-config": "auditor.cli.service:validate_config_command",
    "collect": "auditor.cli.cluster:collect",
    "preflight": "auditor.cli.cluster:preflight",
    "publish": "auditor.cli.publish:publish",
    "history": "auditor.cli.publish:history",
    "verify": "auditor.cli.verify:verify",
    "report": "auditor.cli.report:report",
    "fleet": "auditor.cli.fleet:fleet",
}
