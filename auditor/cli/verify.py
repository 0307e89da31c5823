"""``auditor verify``: check a run folder or a published run against its manifest.json.

Exit codes (docs/exit-codes.md): 0 every artifact matches (and the signature
verifies when ``--public-key`` is given); 1 something is missing, extra,
changed, unretained or badly signed; 2 the run or its manifest cannot be read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from auditor.cli.exitcodes import EXIT_MISMATCH, EXIT_OK, EXIT_UNREADABLE
from auditor.cli.publish import settings_from_options, store_options
from auditor.config.publish import PublishSettings
from auditor.publish import PublishError, open_store
from auditor.publish.jsondoc import load_object, text_field
from auditor.publish.manifest import cluster_segment
from auditor.publish.signing import SigningError, load_public_key
from auditor.publish.store import ObjectStore
from auditor.publish.verify import VerifyReadError, verify_run

__all__ = ["verify"]


class _Unreadable(click.ClickException):
    exit_code = EXIT_UNREADABLE


def _latest_prefix(store: ObjectStore, cluster: str) -> str:
    """The run prefix ``<cluster>/latest.json`` points at (relative to the archive root).

    ``cluster`` is the name as given (``--cluster``); its folder is the key-safe form
    publish writes (:func:`~auditor.publish.manifest.cluster_segment`), as ``history``,
    ``fleet`` and ``report --period`` read it: ``verify --latest --cluster "ünï cødé"``
    looked under ``ünï cødé/`` and said no run was published (trial ux30)."""
    key = f"{cluster_segment(cluster)}/latest.json"
    data = store.get(key)
    if data is None:
        raise _Unreadable(f"{store.url_for(key)} does not exist: no run published for {cluster}")
    try:
        prefix = text_field(load_object(data), "prefix")
        if not prefix.strip("/"):
            raise ValueError("field 'prefix' names no folder")
    except ValueError as exc:
        raise _Unreadable(f"{store.url_for(key)} is not a latest pointer: {exc}") from None
    return str(prefix).strip("/")


def _run_target(location: str, latest: bool, cluster: str | None, options: dict[str, Any]) -> Any:
    root = settings_from_options(location, options)
    if not latest:
        return root
    if not cluster:
        raise click.UsageError("--latest needs --cluster NAME")
    prefix = _latest_prefix(open_store(root), cluster)
    if root.is_s3:
        joined = f"{root.prefix}/{prefix}" if root.prefix else prefix
        return root.model_copy(update={"prefix": joined})
    return root.model_copy(update={"local_dir": root.local_dir / prefix})


@click.command("verify")
@click.argument("location")
@click.option("--latest", is_flag=True, help="Verify the newest published run of --cluster.")
@click.option("--cluster", help="Cluster name (with --latest).")
@click.option(
    "--public-key",
    "public_keys",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Ed25519 public key (PEM) that must have signed manifest.json (repeatable: rotation).",
)
@store_options
def verify(
    location: str,
    latest: bool,
    cluster: str | None,
    public_keys: tuple[Path, ...],
    **options: Any,
) -> None:
    """Verify a run folder or a published run (s3://BUCKET/PREFIX/.../RUN-ID) against its manifest.

    With --latest, LOCATION is the archive (s3://BUCKET/PREFIX or a directory) and the
    run is the one <cluster>/latest.json points at.

    Exit codes: 0 every artifact matches (and the signature, with --public-key); 1
    something is missing, extra, changed, unretained or badly signed; 2 the run or
    its manifest cannot be read.
    """
    try:
        keys = [load_public_key(p) for p in public_keys]
        target: PublishSettings = _run_target(location, latest, cluster, options)
        store = open_store(target)
        lock = False
        if target.is_s3:
            from auditor.publish.s3 import S3Store

            lock = isinstance(store, S3Store) and store.lock_enabled()
        result = verify_run(store, public_keys=keys, lock_enabled=lock)
    except (VerifyReadError, SigningError, PublishError) as exc:
        raise _Unreadable(str(exc)) from None
    for line in result.lines():
        click.echo(line)
    lock_note = ", Object Lock retention checked" if result.retention is not None else ""
    if result.clean:
        click.echo(
            f"verified run {result.run_id} at {result.location}: {result.checked} artifacts "
            f"match manifest.json{lock_note}"
        )
        raise SystemExit(EXIT_OK)
    problems = len(result.missing) + len(result.extra) + len(result.changed)
    problems += len(result.retention or []) + (result.signature_ok is False)
    click.echo(f"run {result.run_id} at {result.location}: {problems} problem(s)", err=True)
    raise SystemExit(EXIT_MISMATCH)
