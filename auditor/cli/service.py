"""CLI commands ``auditor serve`` and ``auditor validate-config``."""

from __future__ import annotations

import logging
import os
import sys
from datetime import UTC, datetime
from pathlib import Path

import click

from auditor.config import AuditSettings, ConfigError, load_settings
from auditor.waivers import catalog_check_ids, platform_check_ids, waiver_appendix

__all__ = ["serve_command", "validate_config_command", "load_checked_settings"]

_EXIT_INVALID = 2


def load_checked_settings(path: Path) -> AuditSettings:
    """Load ``path`` and refuse waivers naming checks the catalog does not have.

    Raises:
        ConfigError: every problem, by field path.
    """
    return load_settings(
        path, known_check_ids=catalog_check_ids(), platform_check_ids=platform_check_ids()
    )


def _print_problems(err: ConfigError) -> None:
    click.echo(f"{err.path}: {len(err.problems)} problem(s)", err=True)
    for field, message in err.problems:
        click.echo(f"  {field}: {message}", err=True)


@click.command("validate-config")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
def validate_config_command(file: Path) -> None:
    """Check a config FILE; print every problem with its field path (exit 2 when invalid)."""
    try:
        settings = load_checked_settings(file)
    except ConfigError as err:
        _print_problems(err)
        sys.exit(_EXIT_INVALID)
    appendix = waiver_appendix(settings, datetime.now(UTC))
    expired = [w["id"] for w in appendix if w["state"] == "expired"]
    click.echo(
        f"{file}: valid ({len(settings.schedules)} schedule(s), {len(settings.policies)} "
        f"policy override(s), {len(settings.waivers)} waiver(s))"
    )
    if expired:
        click.echo(f"  note: expired waiver(s) no longer apply: {', '.join(expired)}")


@click.command("serve")
@click.option(
    "--config",
    "config_file",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="The YAML config file (see config/auditor.example.yaml).",
)
@click.option(
    "--log-level",
    default="INFO",
    show_default=True,
    type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"], case_sensitive=False),
    help="Lowest level of the log records written.",
)
@click.option(
    "--cluster-name",
    metavar="NAME",
    envvar="AUDITOR_CLUSTER_NAME",
    help="Overrides cluster_name of the config (also $AUDITOR_CLUSTER_NAME): one config for a "
    "fleet, a name per cluster, its folder in the shared archive (docs/fleet.md).",
)
def serve_command(config_file: Path, log_level: str, cluster_name: str | None) -> None:
    """Run the scheduled audits from --config until SIGTERM (metrics on /metrics).

    Exit codes: 0 after a shutdown (SIGTERM/SIGINT); 2 could not start (bad config, a
    folder that cannot be written, the job store or run journal unopenable, another
    serve holding the state folder's lock, the metrics address taken).
    """
    from auditor.service import JobStoreError, ServiceLockedError, serve

    logging.basicConfig(
        level=log_level.upper(),
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        settings = load_checked_settings(config_file)
    except ConfigError as err:
        _print_problems(err)
        sys.exit(_EXIT_INVALID)
    if cluster_name:
        settings = settings.model_copy(update={"cluster_name": cluster_name})
    if not settings.schedules:
        click.echo(f"{config_file}: 'schedules' is empty; nothing to serve", err=True)
        sys.exit(_EXIT_INVALID)
    unusable = unusable_folders(settings)
    if unusable:
        click.echo(f"{config_file}: {len(unusable)} problem(s)", err=True)
        for field, message in unusable:
            click.echo(f"  {field}: {message}", err=True)
        sys.exit(_EXIT_INVALID)
    try:
        sys.exit(serve(settings))
    except (ServiceLockedError, JobStoreError) as err:  # could not start (docs/exit-codes.md)
        click.echo(f"Error: {err}", err=True)
        sys.exit(_EXIT_INVALID)


def unusable_folders(settings: AuditSettings) -> list[tuple[str, str]]:
    """The folders ``serve`` writes (``report.out_dir``, ``service.state_dir``) that cannot be
    made or written, as (field path, reason): checked at start, so a mistake fails the
    ``serve`` at once (exit 2) instead of every scheduled run at its hour (trial ux30:
    ``out_dir`` under a file served for a day and failed at 06:00); first, folders that lie
    inside one another (:func:`_overlaps`)."""
    problems = _overlaps(settings)
    if problems:
        return problems  # nothing made where it does not belong
    for field, folder in (
        ("report.out_dir", settings.report.out_dir),
        ("service.state_dir", settings.service.state_dir),
    ):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            writable = os.access(folder, os.W_OK | os.X_OK)
        except OSError as exc:
            problems.append((field, f"cannot make folder {folder}: {exc.strerror or exc}"))
            continue
        if not writable:
            problems.append((field, f"folder {folder} is not writable"))
    return problems


def _overlaps(settings: AuditSettings) -> list[tuple[str, str]]:
    """Folders that must not lie inside one another, as ``run`` refuses them: the runs or a
    local publish archive inside the export read (read back as input: an INCOMPLETE audit),
    and the runs inside the archive or the archive inside the runs' folder."""
    from auditor.config import DirectorySourceSettings
    from auditor.publish import PublishError, publish_settings

    out = settings.report.out_dir.resolve()
    archive: Path | None = None
    if settings.publish is not None:
        try:
            target = publish_settings(settings.publish)
        except PublishError:
            target = None  # named by validate-config already
        if target is not None and not target.is_s3:
            archive = Path(target.describe()).resolve()
    problems: list[tuple[str, str]] = []
    if isinstance(settings.source, DirectorySourceSettings):
        export = settings.source.path.resolve()
        for field, folder in (("report.out_dir", out), ("publish", archive)):
            if folder is not None and (folder == export or folder.is_relative_to(export)):
                problems.append(
                    (field, f"{folder} is inside the export read ({export}): read back as input")
                )
    if archive is not None and (out.is_relative_to(archive) or archive.is_relative_to(out)):
        problems.append(
            ("report.out_dir", f"{out} and the publish archive {archive} lie inside one another")
        )
    return problems
