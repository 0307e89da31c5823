"""``auditor report --period YYYY-MM``: the monthly report from archived runs."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from auditor.cli.exitcodes import EXIT_USAGE
from auditor.cli.options import archive_report_options, refuse_out_in_archive
from auditor.kubevalues import parse_time
from auditor.period import FORMATS, Period, compute_period, read_with_previous, write_period
from auditor.publish import PublishError
from auditor.publish.signing import SigningError, load_public_key
from auditor.report.pdf import PdfRenderError
from auditor.sources.freshness import at_after_archive, newest_run

__all__ = ["report"]


@click.command()
@click.option("--period", "period_text", required=True, metavar="YYYY-MM", help="Month (UTC).")
@click.option(
    "--from",
    "source",
    required=True,
    metavar="DIR|s3://BUCKET/PREFIX",
    help="The archive: publish target or a local directory with the same layout.",
)
@click.option("--cluster", required=True, help="Cluster name as in the archive's keys.")
@click.option(
    "--public-key",
    "public_keys",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Ed25519 public key (PEM) that must have signed each run's manifest (repeatable: "
    "rotation); a run not signed by one is left out and named under problems.",
)
@click.option(
    "--at",
    "at_text",
    metavar="TIME",
    help="When the report is built (RFC 3339, UTC); default now. Before the period's end "
    "the report is marked partial.",
)
@click.option(
    "--cluster-uid",
    default=None,
    help="Only runs of this cluster identity (kube-system uid), when clusters share the name.",
)
@archive_report_options(FORMATS)
def report(
    period_text: str,
    source: str,
    cluster: str,
    public_keys: tuple[Path, ...],
    at_text: str | None,
    cluster_uid: str | None,
    out_dir: Path,
    formats: tuple[str, ...],
    **store_flags: Any,
) -> None:
    """Build the period report of one month from the archived runs of --cluster.

    With --public-key, a run counts only when one of the keys signed its manifest.
    Exit codes: 0 written; 2 bad option, unreadable archive, or no run in the period.
    S3 credentials come from boto3's standard chain, as for ``publish``.
    """
    options = {k: v for k, v in store_flags.items() if v is not None}
    refuse_out_in_archive(out_dir, source)
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
        archive, previous = read_with_previous(
            source,
            cluster,
            period,
            store_options=options,
            public_keys=keys,
            cluster_uid=cluster_uid,
        )
    except (FileNotFoundError, PublishError) as exc:
        click.echo(f"Error: cannot read the archive {source}: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    if at_text is not None:  # auditor.sources.freshness: the figures stay as computed
        late = at_after_archive(
            at, datetime.now(UTC), newest_run(archive.reports), period_end=period.end
        )
        if late is not None:
            archive.problems.append(late)
    for problem in archive.problems:
        click.echo(f"Warning: {problem}", err=True)
    if not archive.reports:
        click.echo(
            f"Error: no full-fleet run of {cluster} in {period.label} under {source}", err=True
        )
        sys.exit(EXIT_USAGE)
    doc = compute_period(archive, period, cluster, previous, as_of=at)
    if doc["partial"]:
        click.echo(
            f"Warning: {period.label} has not ended (ends {doc['end']}): the report is partial, "
            f"as of {doc['as_of']}",
            err=True,
        )
    if not doc["complete"]:
        click.echo(
            f"Warning: the {period.label} report is INCOMPLETE: "
            + "; ".join(doc["incomplete_reasons"]),
            err=True,
        )
    try:
        paths = write_period(doc, out_dir, wanted)
    except PdfRenderError as exc:
        click.echo(f"Error: period.pdf not written: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    except OSError as exc:
        click.echo(f"Error: cannot write to --out {out_dir}: {exc.strerror or exc}", err=True)
        sys.exit(EXIT_USAGE)
    fleet = doc["fleet"]
    share = fleet["rpo_attainment"]
    click.echo(
        f"{period.label}: {fleet['runs']} runs, {fleet['vms']} VMs, RPO attainment "
        + ("unknown" if share is None else f"{share * 100:.1f} %")
        + f" ({fleet['rpo_unknown']} VM audits unknown)"
    )
    for path in paths:
        click.echo(f"wrote {path}")
