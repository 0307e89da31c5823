"""``auditor publish`` and ``auditor history``: move runs to the archive, read it back.

Exit codes of ``publish``: 0 published and verified; 3 not published (the run
was spooled, nothing lost; the message says why); 2 bad usage or run directory, or a
misconfigured target (no such bucket, a lock mode on a bucket without Object Lock: the run
is not spooled, as no retry could deliver it). ``publish --retry``: 3 while a run still waits
in the spool, else 2 when a spooled run's target was refused as misconfigured (moved to
``<spool_dir>/refused/``), else 0.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from pydantic import ValidationError

from auditor.cli.exitcodes import EXIT_UNREADABLE
from auditor.cli.options import AnyCase
from auditor.config.publish import default_spool_dir
from auditor.publish import (
    PublishError,
    PublishResult,
    PublishSettings,
    RunDirError,
    StoreConfigError,
    list_runs,
    open_store,
    publish_run,
    refused_note,
    retry_spool,
    write_trend,
)
from auditor.publish.history import clusters_held
from auditor.publish.manifest import check_seal, cluster_segment
from auditor.publish.signing import SigningError
from auditor.publish.store import ObjectStore
from auditor.publish.trend import TREND_NAME

__all__ = ["publish", "history", "store_options", "target_options", "settings_from_options"]

EXIT_SPOOLED = 3


class _Unreadable(click.ClickException):
    exit_code = EXIT_UNREADABLE


#: The options that reach the store, for reading and writing alike.
_CONNECTION = frozenset(
    {"endpoint_url", "region", "addressing_style", "ca_bundle", "no_verify_tls"}
    | {"retry_mode", "max_attempts"}
)

_OPTIONS: list[tuple[str, Callable[[Callable[..., Any]], Callable[..., Any]]]] = [
    (
        "endpoint_url",
        click.option("--endpoint-url", help="S3 endpoint, e.g. https://s3.example.com:9000."),
    ),
    ("region", click.option("--region", help="Region name for signing (e.g. us-east-1).")),
    (
        "addressing_style",
        click.option(
            "--addressing-style",
            type=AnyCase(["auto", "path", "virtual"]),
            help="S3 addressing: path-style or virtual-hosted (default auto).",
        ),
    ),
    (
        "ca_bundle",
        click.option(
            "--ca-bundle",
            type=click.Path(dir_okay=False, path_type=Path),
            help="PEM bundle of the private CA that signs the endpoint's TLS certificate.",
        ),
    ),
    (
        "no_verify_tls",
        click.option(
            "--no-verify-tls",
            "no_verify_tls",
            is_flag=True,
            default=None,
            help="Do not verify the endpoint's TLS certificate.",
        ),
    ),
    (
        "sse",
        click.option(
            "--sse",
            type=AnyCase(["AES256", "aws:kms"]),
            help="Server-side encryption: AES256 (SSE-S3) or aws:kms (SSE-KMS).",
        ),
    ),
    ("kms_key_id", click.option("--kms-key-id", help="KMS key id/ARN with --sse aws:kms.")),
    (
        "object_lock_mode",
        click.option(
            "--object-lock-mode",
            type=AnyCase(["GOVERNANCE", "COMPLIANCE"]),
            help="Object Lock retention mode of every uploaded object (with --object-lock-days).",
        ),
    ),
    (
        "object_lock_days",
        click.option("--object-lock-days", type=int, help="Retention in days from upload."),
    ),
    (
        "spool_dir",
        click.option(
            "--spool-dir",
            type=click.Path(file_okay=False, path_type=Path),
            help=f"Where undeliverable runs wait (default {default_spool_dir()}).",
        ),
    ),
    (
        "retry_mode",
        click.option(
            "--retry-mode",
            type=AnyCase(["standard", "adaptive"]),
            help="botocore retry mode (default standard).",
        ),
    ),
    (
        "max_attempts",
        click.option(
            "--max-attempts",
            type=int,
            help="botocore attempts per request, first one included (default 5).",
        ),
    ),
]


def target_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Add the S3 target options (all optional) to a click command that uploads: the
    connection options plus encryption, Object Lock and the spool."""
    for _, option in reversed(_OPTIONS):
        fn = option(fn)
    return fn


def store_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Add the S3 connection options only, to a click command that reads the archive
    (``history``, ``verify``): encryption, Object Lock and the spool apply to uploads."""
    for name, option in reversed(_OPTIONS):
        if name in _CONNECTION:
            fn = option(fn)
    return fn


def settings_from_options(url: str, options: dict[str, Any]) -> PublishSettings:
    """Build :class:`PublishSettings` from ``--to URL`` and the target options.

    Raises:
        click.UsageError: invalid URL or option combination (field named).
    """
    values = {k: v for k, v in options.items() if v is not None}
    if values.pop("no_verify_tls", None):
        values["verify_tls"] = False
    try:
        return PublishSettings.from_url(url, **values)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'target'}: {e['msg']}" for e in exc.errors()
        )
        raise click.UsageError(f"invalid publish target: {problems}") from None
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None


def _report(result: PublishResult) -> None:
    for earlier in result.earlier:
        _report(earlier)
    if result.published:
        click.echo(
            f"published run {result.run_id} to {result.location} "
            f"({len(result.uploaded)} uploaded, {len(result.already_present)} already present, "
            "all verified)"
        )
    elif result.quarantined is not None:
        click.echo(f"run {result.run_id} QUARANTINED: {result.error}", err=True)
        click.echo(
            f"kept in {result.quarantined} (not retried; other runs are not blocked)", err=True
        )
    elif result.refused:
        click.echo(f"run {result.run_id} REFUSED by {result.location}: {result.error}", err=True)
        where = result.refused_at or result.spooled
        click.echo(
            f"kept in {where} (not retried: the target is misconfigured; fix it, then publish "
            f"{where / 'run' if where else 'the run'} with auditor publish --from-run and "
            "remove the entry)",
            err=True,
        )
    elif result.undeliverable:
        click.echo(f"run {result.run_id} NOT published: {result.error}", err=True)
    else:
        click.echo(f"run {result.run_id} NOT published: {result.error}", err=True)
        click.echo(
            f"kept in spool {result.spooled}; deliver with: auditor publish --retry", err=True
        )


def _spool_dir_of(options: dict[str, Any]) -> Path:
    return options["spool_dir"] or default_spool_dir()


@click.command("publish")
@click.option(
    "--from-run",
    "run_dir",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="Run directory holding report.json and its artifacts.",
)
@click.option("--to", "url", help="s3://BUCKET/PREFIX or a local directory.")
@click.option("--retry", is_flag=True, help="Deliver spooled runs (only those for --to if given).")
@click.option(
    "--trend/--no-trend",
    default=True,
    show_default=True,
    help="Write trend.json (from the archive) into the run before publishing.",
)
@click.option(
    "--signing-key",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Ed25519 private key (PEM, e.g. a mounted Secret) that signs manifest.json.",
)
@target_options
def publish(
    run_dir: Path | None,
    url: str | None,
    retry: bool,
    trend: bool,
    signing_key: Path | None,
    **options: Any,
) -> None:
    """Publish an audit run as verified evidence, or deliver spooled runs.

    Exit codes: 0 published and verified; 2 bad usage or run folder, or a target
    refused as misconfigured (no such bucket, Object Lock unavailable: not spooled);
    3 not published, the run waits in the spool (--retry: a run still waits).
    """
    if retry and run_dir is not None:
        # --retry delivers the spool and read no --from-run: 'publish --from-run DIR --retry'
        # said "spool is empty" and exited 0 without publishing DIR (trial nu34)
        raise click.UsageError(
            "--retry delivers the runs kept in the spool and takes no --from-run; publish "
            "a run with --from-run DIR --to URL"
        )
    if retry:
        target = settings_from_options(url, options) if url else None
        # a target the store refuses as misconfigured (no such bucket, no Object Lock for the
        # lock mode asked...) leaves the retry loop for <spool_dir>/refused/, as under serve:
        # the CLI kept it and exited 3 at every retry, for ever (trial ux35)
        results = retry_spool(_spool_dir_of(options), target=target, refuse_misconfigured=True)
        if not results:
            click.echo("spool is empty")
        for result in results:
            _report(result)
        if results:
            click.echo(_retry_count(results))
        code = _retry_exit(results)
        if code:
            raise SystemExit(code)
        return
    if run_dir is None or url is None:
        raise click.UsageError("give --from-run DIR and --to URL, or --retry")
    target = settings_from_options(url, options)
    if signing_key is not None:
        target = target.model_copy(update={"signing_key_file": signing_key})
    try:
        store = open_store(target)
        check_seal(run_dir)  # before trend.json is added: nothing else may join the run
        added: tuple[str, ...] = ()
        if trend and not (run_dir / TREND_NAME).exists():
            try:
                write_trend(run_dir, store)
                added = (TREND_NAME,)
            except PublishError as exc:
                click.echo(f"trend not computed (archive unreadable): {exc}", err=True)
        result = publish_run(run_dir, target, store=store, added=added, refuse_misconfigured=True)
    except (RunDirError, SigningError) as exc:
        raise click.UsageError(str(exc)) from None
    except StoreConfigError as exc:  # open_store: the target itself is wrong
        click.echo(
            f"run NOT published and NOT spooled, the target is misconfigured: {exc}", err=True
        )
        raise SystemExit(EXIT_UNREADABLE) from None
    except PublishError as exc:  # the run could not even be spooled
        click.echo(f"run NOT published and NOT spooled: {exc}", err=True)
        raise SystemExit(EXIT_SPOOLED) from None
    if result.refused:  # no retry can deliver it: a bad target, exit 2 (docs/exit-codes.md)
        click.echo(
            f"run NOT published to {target.describe()}: {result.error}; {refused_note(result)}",
            err=True,
        )
        raise SystemExit(EXIT_UNREADABLE)
    _report(result)
    if not result.published:
        raise SystemExit(EXIT_SPOOLED)


def _retry_count(results: list[PublishResult]) -> str:
    """``publish --retry``'s last line: how many runs were published, still spooled,
    quarantined and refused (moved out of the retry loop)."""
    done = sum(r.published for r in results)
    quarantined = sum(r.quarantined is not None for r in results)
    refused = sum(r.refused for r in results)
    waiting = len(results) - done - quarantined - refused
    return (
        f"{len(results)} spooled run(s): {done} published, {waiting} still spooled, "
        f"{quarantined} quarantined, {refused} refused"
    )


def _retry_exit(results: list[PublishResult]) -> int:
    """``publish --retry``'s exit code (docs/exit-codes.md): 3 while a run still waits in the
    spool (or was quarantined), else 2 when a run was refused (its target is misconfigured:
    no retry delivers it, as ``publish --from-run`` exits 2), else 0."""
    if any(not r.published and not r.refused for r in results):
        return EXIT_SPOOLED
    if any(r.refused for r in results):
        return EXIT_UNREADABLE
    return 0


@click.command("history")
@click.option("--cluster", required=True, help="Cluster name as in report.json.")
@click.option("--to", "url", required=True, help="s3://BUCKET/PREFIX or a local directory.")
@click.option(
    "--limit", type=click.IntRange(min=1), default=30, show_default=True, help="Newest N runs."
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.option(
    "--cluster-uid",
    default=None,
    help="Only runs of this cluster identity (kube-system uid), when clusters share the name.",
)
@store_options
def history(
    cluster: str, url: str, limit: int, as_json: bool, cluster_uid: str | None, **options: Any
) -> None:
    """List the published runs of a cluster, oldest first.

    Exit codes: 0 listed; 2 the archive cannot be read, holds no run of the cluster
    (the clusters it holds are named), a manifest in it cannot be read, or its runs are
    of two clusters sharing the name (give --cluster-uid).
    """
    target = settings_from_options(url, options)
    if not target.is_s3 and not target.local_dir.is_dir():
        why = "is a file, not a directory" if target.local_dir.exists() else "does not exist"
        raise _Unreadable(f"archive directory {target.local_dir} {why}")
    problems: list[str] = []
    unreadable: list[str] = []
    try:
        store = open_store(target)
        entries = list_runs(
            store,
            cluster,
            limit=limit,
            uid=cluster_uid,
            problems=problems,
            unreadable=unreadable,
        )
    except PublishError as exc:
        # an archive that cannot be read is exit 2, as for verify, report and fleet (1 is
        # kept for gates and mismatches: docs/exit-codes.md)
        raise _Unreadable(str(exc)) from None
    for problem in problems:
        click.echo(f"Warning: {problem}", err=True)
    for problem in unreadable:
        click.echo(f"Error: {problem}", err=True)
    if not entries and not unreadable:
        # nothing found is exit 2, as report --period with no run of the month
        # (docs/exit-codes.md); the clusters the archive does hold are named, so a typo is
        # seen as one. It said "no published runs" and exited 0 (trial ux35).
        if as_json:
            click.echo("[]")
        raise _Unreadable(_nothing_found(store, cluster, cluster_uid, target.describe()))
    _history_table(entries, as_json, cluster, target.describe(), len(unreadable))
    if unreadable:  # listed in part: exit 2, as for an archive that cannot be read
        incomplete = (
            f"history INCOMPLETE: {len(unreadable)} manifest(s) unreadable, their runs not "
            "listed (named above)"
        )
        raise _Unreadable(incomplete)


def _nothing_found(store: ObjectStore, cluster: str, uid: str | None, where: str) -> str:
    """Why ``history`` lists no run: the cluster has no folder in the archive (the clusters
    it holds are named: :func:`auditor.publish.history.clusters_held`), or its folder holds
    no run with a manifest (of identity ``uid``, when given)."""
    segment = cluster_segment(cluster)
    try:
        folders = store.list_folders("")
    except PublishError as exc:
        return f"no published run of cluster {segment} in {where} (clusters not listed: {exc})"
    if segment not in folders:
        return f"no published run of cluster {segment} in {where}: " + clusters_held(store, cluster)
    of = f" of cluster identity {uid}" if uid is not None else ""
    return (
        f"no published run of cluster {segment}{of} in {where} (a run is listed once its "
        "manifest.json is published)"
    )


def _history_table(
    entries: list[Any], as_json: bool, cluster: str, where: str, skipped: int
) -> None:
    """Print ``history``'s runs: a JSON list of briefs, or a table (whose last line says
    ``INCOMPLETE`` when ``skipped`` manifests could not be read)."""
    if as_json:
        click.echo(json.dumps([e.brief() for e in entries], indent=2, sort_keys=True))
        return
    if skipped:
        click.echo(f"INCOMPLETE: {skipped} run(s) not listed, their manifest unreadable")
    if not entries:
        click.echo(f"no published runs for cluster {cluster} in {where}")
        return
    click.echo(
        f"{'RUN ID':<27} {'AUDIT TIME':<21} {'VMS':>4} {'READY':>6} {'AT_RISK':>8} "
        f"{'NOT_READY':>10} {'UNKNOWN':>8}  CLUSTER UID"
    )
    for e in entries:
        r = e.readiness
        click.echo(
            f"{e.run_id:<27} {e.audit_time:<21} {e.vms if e.vms is not None else '?':>4} "
            f"{r.get('READY', 0):>6} {r.get('AT_RISK', 0):>8} {r.get('NOT_READY', 0):>10} "
            f"{r.get('UNKNOWN', 0):>8}  {e.cluster_uid or 'unknown'}"
        )
