"""Click options shared by the commands that read an archive and write a report."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

__all__ = ["archive_report_options"]

F = TypeVar("F", bound=Callable[..., Any])


def archive_report_options(formats: Sequence[str]) -> Callable[[F], F]:
    """``--out``, ``--format`` (``formats``, all by default) and the S3 connection options of
    an ``s3://`` ``--from`` (``--endpoint-url``, ``--region``, ``--addressing-style``,
    ``--ca-bundle``), in that order, for ``auditor report`` and ``auditor fleet``."""
    options = [
        click.option(
            "--out",
            "out_dir",
            type=click.Path(path_type=Path),
            default=Path("out"),
            show_default=True,
        ),
        click.option(
            "--format",
            "formats",
            default=",".join(formats),
            show_default=True,
            help=f"Comma-separated: {', '.join(formats)}.",
        ),
        click.option(
            "--endpoint-url", help="S3 endpoint of an s3:// --from, e.g. https://s3.example:9000."
        ),
        click.option("--region", help="S3 region name for signing (e.g. us-east-1)."),
        click.option("--addressing-style", type=click.Choice(["auto", "path", "virtual"])),
        click.option("--ca-bundle", type=click.Path(dir_okay=False, path_type=Path)),
    ]

    def apply(func: F) -> F:
        for option in reversed(options):
            func = option(func)
        return func

    return apply
