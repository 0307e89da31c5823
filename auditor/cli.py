"""Command line: ``auditor run | checks | ...``. Thin: parses options, calls the pipeline.

Each command group lives in its own module and is registered here with one
``main.add_command`` line, so features stay independent.
"""

from __future__ import annotations

import click

from auditor import __version__

__all__ = ["main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="auditor")
def main() -> None:
    """Audit the recovery readiness of KubeVirt virtual machines."""


from auditor.cli_cluster import collect, preflight  # noqa: E402 - registered after main exists

main.add_command(collect)
main.add_command(preflight)
