"""``auditor fleet --from s3://BUCKET/PREFIX``: every cluster's latest (or a month's) report.

Exit codes (docs/exit-codes.md): 0 written; 2 bad option, unreadable archive, no cluster
under the prefix, unwritable ``--out``; 4 written, but no cluster had a readable run
(nothing trustworthy to roll up).
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from auditor.cli.exitcodes import EXIT_NOTHING_AUDITED, EXIT_USAGE
from auditor.cli.options import Finite, archive_report_options, refuse_out_in_archive
from auditor.config.rules import MAX_HOURS
from auditor.fleet import FORMATS, build_fleet, read_fleet, write_fleet
from auditor.kubevalues import parse_time
from auditor.period import Period
from auditor.publish import PublishError
from auditor.publish.signing import SigningError, load_public_key
from auditor.report.pdf import PdfRenderError
from auditor.sources.freshness import at_after_archive, newest_run

__all__ = ["fleet"]


@click.command()
@click.option(
    "--from",
    "source",
    required=True,
    metavar="s3://BUCKET/PREFIX|DIR",
    help="The shared archive: one folder per cluster, as `auditor publish` lays it out.",
)
@click.option(
    "--period", "period_text", metavar="YYYY-MM", help="A month's runs instead of the latest."
)
@click.option("--cluster", "clusters", multiple=True, help="Only this cluster (repeatable).")
@click.option(
    "--at", "at_text", metavar="TIME", help="Reference time (RFC 3339, UTC); default now."
)
@click.option(
    "--max-age-hours",
    type=Finite(min=0, min_open=True, max=MAX_HOURS),
    default=36.0,
    show_default=True,
    help="A cluster whose run is older than this is stale and never counts as ready.",
)
@click.option(
    "--public-key",
    "public_keys",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Ed25519 public key (PEM) that must have signed each run's manifest (repeatable).",
)
@archive_report_options(FORMATS)
def fleet(
    source: str,
    period_text: str | None,
    clusters: tuple[str, ...],
    at_text: str | None,
    max_age_hours: float,
    public_keys: tuple[Path, ...],
    out_dir: Path,
    formats: tuple[str, ...],
    **store_flags: Any,
) -> None:
    """Roll up the latest report of every cluster under --from (or, with --period, a month's).

    Per cluster: readiness, the run's age and completeness, whether it verified against
    its manifest (and signature with --public-key); fleet-wide: top root causes and the
    owners with the most VMs not ready. Writes fleet.json, fleet-*.csv, fleet.html and
    fleet.pdf. S3 credentials come from boto3's standard chain, as for ``publish``.
    Only a current cluster's READY VMs count as READY: one whose run is stale,
    incomplete, unverified or unreadable counts them UNKNOWN; with --period, a month
    not counted whole (a run left out, or one that read part of the cluster) makes
    the cluster incomplete.

    Exit codes: 0 written; 2 bad option, unreadable archive or no cluster folder;
    4 written, but no cluster had a readable run.
    """
    options = {k: v for k, v in store_flags.items() if v is not None}
    refuse_out_in_archive(out_dir, source)
    period = None
    if period_text is not None:
        try:
            period = Period.parse(period_text)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--period") from exc
    at = datetime.now(UTC).replace(microsecond=0) if at_text is None else parse_time(at_text)
    if at is None:
        raise click.BadParameter(
            f"{at_text!r} is not an RFC 3339 time such as 2026-11-30T06:00:00Z", param_hint="--at"
        )
    wanted = formats
    try:
        keys = [load_public_key(p) for p in public_keys]
    except SigningError as exc:
        raise click.BadParameter(str(exc), param_hint="--public-key") from exc
    try:
        data = read_fleet(
            source,
            period=period,
            clusters=clusters,
            public_keys=keys,
            store_options=options,
            clock=lambda: at,
        )
    except (FileNotFoundError, PublishError) as exc:
        click.echo(f"Error: cannot read the archive {source}: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    if not data.clusters:
        click.echo(f"Error: no cluster folder under {source}", err=True)
        sys.exit(EXIT_USAGE)
    if at_text is not None:  # auditor.sources.freshness: the figures stay as computed
        late = at_after_archive(
            at,
            datetime.now(UTC),
            newest_run(c.report for c in data.clusters),
            period_end=period.end if period is not None else None,
        )
        if late is not None:
            data.problems.append(late)
            click.echo(f"Warning: {late}", err=True)
    report = build_fleet(
        data, at=at, period=period, max_age_hours=max_age_hours, signatures_checked=bool(keys)
    )
    try:
        paths = write_fleet(report, out_dir, wanted)
    except PdfRenderError as exc:
        click.echo(f"Error: fleet.pdf not written: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    except OSError as exc:
        click.echo(f"Error: cannot write to --out {out_dir}: {exc.strerror or exc}", err=True)
        sys.exit(EXIT_USAGE)
    for c in report.clusters:
        if c.status != "current":
            click.echo(f"Warning: {c.name} is {c.status}: {'; '.join(c.problems)}", err=True)
    s = report.summary
    click.echo(
        f"{_count(s.clusters, 'cluster')} ({s.clusters_by_status['current']} current, "
        f"{_count(s.runs_verified, 'run')} verified), {_count(s.vms, 'VM')}: "
        + ", ".join(f"{n} {state.value}" for state, n in s.readiness.items())
    )
    for path in paths:
        click.echo(f"wrote {path}")
    if all(c.status == "unreadable" for c in report.clusters):
        click.echo("Error: no cluster had a readable run", err=True)
        sys.exit(EXIT_NOTHING_AUDITED)


def _count(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural unless ``n`` is 1 ("1 cluster", "3 runs", "0 VMs")."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
