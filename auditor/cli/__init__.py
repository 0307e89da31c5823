"""Command line: ``auditor run | checks | ...``. Thin: parses options, calls the pipeline.

Each command group lives in its own module and is registered here with one
``main.add_command`` line, so features stay independent.
"""

from __future__ import annotations

import logging
import os
import sys

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
        """Run the command; an unhandled :class:`OSError` exits 2 naming its path."""
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            raise  # the reader of stdout went away: not a path of ours
        except OSError as exc:
            where = f"{exc.filename}: " if exc.filename else ""
            click.echo(f"Error: {where}{exc.strerror or exc}", err=True)
            ctx.exit(EXIT_USAGE)


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
