"""Click options shared by the commands that read an archive and write a report."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

__all__ = ["AnyCase", "Finite", "FormatList", "archive_report_options", "refuse_out_in_archive"]

F = TypeVar("F", bound=Callable[..., Any])


class AnyCase(click.Choice[str]):
    """A choice taken in any case (``--sse aes256`` is ``AES256``), listed as written."""

    def __init__(self, choices: Sequence[str]) -> None:
        super().__init__(choices, case_sensitive=False)

    def get_metavar(self, param: click.Parameter, ctx: click.Context) -> str | None:
        return "[" + "|".join(self.choices) + "]"


class Finite(click.FloatRange):
    """A :class:`click.FloatRange` that refuses ``inf`` and ``nan`` (click's own range check
    lets ``nan`` through: every comparison with it is false). ``fleet --max-age-hours nan``
    made no run stale, so a cluster's week-old run counted as current (trial ux30)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        """The number, or a usage error (exit 2) naming the option."""
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


class FormatList(click.ParamType[tuple[str, ...]]):
    """``--format``: comma-separated names out of ``choices``, any case, as a tuple in the
    order given (repeats dropped); an unknown name or an empty list is a usage error."""

    name = "formats"

    def __init__(self, choices: Sequence[str]) -> None:
        self.choices = tuple(choices)

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> tuple[str, ...]:
        if isinstance(value, tuple):
            return tuple(str(v) for v in value)
        wanted = tuple(dict.fromkeys(f.strip().lower() for f in str(value).split(",")))
        wanted = tuple(f for f in wanted if f)
        bad = sorted(set(wanted) - set(self.choices))
        if bad:
            self.fail(
                f"unknown format(s) {', '.join(bad)}; name one or more of "
                f"{', '.join(self.choices)}",
                param,
                ctx,
            )
        if not wanted:
            self.fail(f"is empty; name one or more of {', '.join(self.choices)}", param, ctx)
        return wanted


def refuse_out_in_archive(out_dir: Path, source: str) -> None:
    """Refuse an ``--out`` inside a local archive read as ``--from`` (``report --period``,
    ``fleet``): every folder under the archive is a cluster, so ``fleet --from A --out
    A/fleet`` made the next roll-up count a cluster ``fleet`` with no readable run (trial
    ux30), as ``run`` refuses an ``--out`` inside the export it reads.

    Raises:
        click.BadParameter: ``out_dir`` is, or lies inside, the archive (exit 2).
    """
    if source.startswith("s3://"):
        return
    root = Path(source.removeprefix("file://")).resolve()
    out = out_dir.resolve()
    if out == root or out.is_relative_to(root):
        raise click.BadParameter(
            f"{out_dir} is inside the archive read ({source}): every folder there is taken "
            "for a cluster's; write elsewhere",
            param_hint="--out",
        )


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
            help="Folder to write the files to (created when missing).",
        ),
        click.option(
            "--format",
            "formats",
            type=FormatList(formats),
            default=",".join(formats),
            show_default=True,
            help=f"Comma-separated: {', '.join(formats)}.",
        ),
        click.option(
            "--endpoint-url", help="S3 endpoint of an s3:// --from, e.g. https://s3.example:9000."
        ),
        click.option("--region", help="S3 region name for signing (e.g. us-east-1)."),
        click.option(
            "--addressing-style",
            type=AnyCase(["auto", "path", "virtual"]),
            help="S3 addressing: path-style or virtual-hosted (default auto).",
        ),
        click.option(
            "--ca-bundle",
            type=click.Path(dir_okay=False, path_type=Path),
            help="PEM bundle of the private CA that signs the endpoint's TLS certificate.",
        ),
    ]

    def apply(func: F) -> F:
        for option in reversed(options):
            func = option(func)
        return func

    return apply
