"""Command line: ``auditor run | checks | ...``. Thin: parses options, calls the pipeline.

Each command group lives in its own module and is registered here with one
``main.add_command`` line, so features stay independent.
"""

from __future__ import annotations

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


def _register() -> None:
    from auditor.cli.checks import checks
    from auditor.cli.cluster import collect, preflight
    from auditor.cli.fleet import fleet
    from auditor.cli.publish import history, publish
    from auditor.cli.report import report
    from auditor.cli.run import run
    from auditor.cli.service import serve_command, validate_config_command
    from auditor.cli.verify import verify

    main.add_command(run)
    main.add_command(checks)
    main.add_command(serve_command)
    main.add_command(validate_config_command)
    main.add_command(collect)
    main.add_command(preflight)
    main.add_command(publish)
    main.add_command(history)
    main.add_command(verify)
    main.add_command(report)
    main.add_command(fleet)


_register()
