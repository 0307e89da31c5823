"""``auditor run``: audit once and write the report artifacts."""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from auditor.cli import keep_until_exit
from auditor.cli.cluster import NothingAudited, cluster_options, progress_for, velero_option
from auditor.cli.exitcodes import EXIT_GATE, EXIT_NOT_PUBLISHED, EXIT_USAGE
from auditor.cli.options import AnyCase, FormatList
from auditor.cli.publish import target_options
from auditor.config import (
    AuditSettings,
    ClusterSourceSettings,
    ConfigError,
    DirectorySourceSettings,
    SourceSettings,
    load_settings,
)
from auditor.config.publish import signing_key_problem
from auditor.envelope import report_document
from auditor.kubevalues import parse_time
from auditor.lifetime import keep_from_now
from auditor.pipeline import FORMATS, AuditRun, UnknownOwnerError, run_audit, write_run
from auditor.publish import (
    PublishError,
    PublishSettings,
    RunDirError,
    publish_run,
    publish_settings,
    refused_note,
)
from auditor.publish.manifest import foreign_files
from auditor.publish.signing import SigningError
from auditor.sources.kubeclient import ClusterAccessError, ClusterLostError
from auditor.sources.usable import NothingToAudit
from auditor.yamlstrict import DEFAULT_MAX_FILE_BYTES

__all__ = ["run"]

log = logging.getLogger("auditor")

DEFAULT_FORMATS = ",".join(FORMATS)


def publish_target(
    url: str | None, options: dict[str, Any], section: dict[str, Any] | None
) -> PublishSettings | None:
    """The publish target: the config's ``publish:`` section, ``--publish URL`` overriding
    where it goes, and the target flags (``--sse``, ``--object-lock-mode``...) overriding
    single fields. One set of settings: the config's Object Lock and SSE stay in force.

    Raises:
        click.BadParameter: the URL, a flag or the section is invalid (field named).
        click.UsageError: target flags without --publish or a ``publish:`` section.
    """
    flags = {k: v for k, v in options.items() if v is not None}
    if flags.pop("no_verify_tls", None):
        flags["verify_tls"] = False
    if not url and not section:
        if flags:
            raise click.UsageError(
                f"--{next(iter(flags)).replace('_', '-')} needs --publish URL or a publish: "
                "section in the config"
            )
        return None
    values = dict(section or {})
    if url:
        for key in ("url", "bucket", "prefix", "local_dir"):
            values.pop(key, None)
        values["url"] = url
    values.update(flags)
    try:
        return publish_settings(values)
    except (ValueError, PublishError) as exc:
        raise click.BadParameter(str(exc), param_hint="--publish / publish:") from exc


def parse_at(value: str | None) -> datetime:
    """``--at`` as an aware UTC datetime; now (UTC) when None.

    Raises:
        click.BadParameter: not an RFC 3339 time.
    """
    if value is None:
        return datetime.now(UTC).replace(microsecond=0)
    parsed = parse_time(value)
    if parsed is None:
        raise click.BadParameter(
            f"{value!r} is not an RFC 3339 time such as 2026-11-30T06:00:00Z", param_hint="--at"
        )
    if not value.rstrip().endswith(("Z", "z")) and not re.search(r"[+-]\d\d:?\d\d$", value):
        raise click.BadParameter(
            f"{value!r} has no time zone; write it in UTC with a Z, e.g. 2026-11-30T06:00:00Z",
            param_hint="--at",
        )
    return parsed


def load_config(path: Path | None) -> AuditSettings:
    """Settings from ``--config`` (defaults when None); exits 2 naming every bad field."""
    if path is None:
        return AuditSettings()
    try:
        # service hook: waivers name real VM checks
        from auditor.waivers import catalog_check_ids, platform_check_ids

        return load_settings(
            path, known_check_ids=catalog_check_ids(), platform_check_ids=platform_check_ids()
        )
    except ConfigError as exc:
        click.echo(str(exc), err=True)
        sys.exit(2)


def check_out_dir(out_dir: Path, source: SourceSettings | None) -> None:
    """Refuse an ``--out`` that is a file, that is (or lies inside) the export directory
    read: the reports and manifest.json written there would be read as input by the next
    audit of it, which then is incomplete (trial nu25); or that holds files no earlier run
    sealed there (:func:`~auditor.publish.manifest.foreign_files`): manifest.json would seal
    them, and publishing would archive them, as this run's evidence (trial ux27).

    Raises:
        click.BadParameter: any case (exit 2), before anything is audited; also when
            ``out_dir`` cannot be looked at (a name too long, a folder that cannot be
            listed), naming the path and the system's reason.
    """
    try:
        _check_out_dir(out_dir, source)
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename and str(exc.filename) != str(out_dir) else ""
        raise click.BadParameter(
            f"cannot use {out_dir}: {exc.strerror or exc}{where}", param_hint="--out"
        ) from None


def check_archive_dir(archive: Path, out_dir: Path, source: SourceSettings | None) -> None:
    """Refuse a local publish target inside the export read (the next audit of it would read
    the archived report.json files as input: INCOMPLETE, 5 collection problems), and an
    ``--out`` inside the target (its run folder would be taken for a cluster's by ``fleet``
    and ``history``) or the target inside ``--out`` (unsealed among the run's files); trial ux30, as :func:`check_out_dir` for ``--out`` in the export.

    Raises:
        click.BadParameter: either case (exit 2), before anything is audited.
    """
    root = archive.resolve()
    if isinstance(source, DirectorySourceSettings):
        export = source.path.resolve()
        if root == export or root.is_relative_to(export):
            raise click.BadParameter(
                f"{archive} is inside the export read ({source.path}): the runs published "
                "there would be read as input by the next audit of it; publish elsewhere",
                param_hint="--publish / publish:",
            )
    out = out_dir.resolve()
    if out == root or out.is_relative_to(root):
        raise click.BadParameter(
            f"{out_dir} is inside the publish archive {archive}: every folder there is taken "
            "for a cluster's; write the run elsewhere",
            param_hint="--out",
        )
    if root.is_relative_to(out):
        raise click.BadParameter(
            f"{archive} is inside the run folder {out_dir}: the archive would sit among the "
            "run's artifacts, unsealed; publish elsewhere",
            param_hint="--publish / publish:",
        )


#: How many files no run wrote an ``--out`` folder is scanned for before it is refused.
FOREIGN_LIMIT = 100


def _check_out_dir(out_dir: Path, source: SourceSettings | None) -> None:
    if out_dir.exists() and not out_dir.is_dir():
        raise click.BadParameter(f"{out_dir} is a file, not a directory", param_hint="--out")
    if isinstance(source, DirectorySourceSettings):
        export = source.path.resolve()
        out = out_dir.resolve()
        if out == export or out.is_relative_to(export):
            raise click.BadParameter(
                f"{out_dir} is inside the export read ({source.path}): the reports written "
                "there would be read as input by the next audit of it; write them elsewhere",
                param_hint="--out",
            )
    foreign = foreign_files(out_dir, limit=FOREIGN_LIMIT)
    if foreign:
        more = f" and {len(foreign) - 3} more" if len(foreign) > 3 else ""
        count = str(len(foreign))
        if len(foreign) > FOREIGN_LIMIT:  # not scanned further (``--out /``)
            count, more = f"over {FOREIGN_LIMIT}", " and more"
        raise click.BadParameter(
            f"{out_dir} holds {count} file(s) no earlier audit run wrote there "
            f"({', '.join(foreign[:3])}{more}): manifest.json would seal them as this run's "
            "evidence; write to a new or empty folder, or move them out",
            param_hint="--out",
        )


def source_option(
    configured: SourceSettings | None,
    from_dir: Path | None,
    max_file_bytes: int,
    *,
    kubeconfig: Path | None,
    context: str | None,
    namespaces: tuple[str, ...],
    velero_namespaces: tuple[str, ...] = (),
) -> SourceSettings | None:
    """The ``source`` section the options mean: --from-dir, the live cluster options, else the
    config's ``source`` (None: the live cluster from default credentials, see
    :func:`auditor.sources.from_settings.source_from_settings`).

    Raises:
        click.UsageError: --from-dir combined with live cluster options.
    """
    live_options = bool(kubeconfig or context or namespaces or velero_namespaces)
    if from_dir is not None and live_options:
        # name the options given (--velero-namespace alone was answered with a list that did
        # not name it: trial nu34)
        given = [
            name
            for name, value in (
                ("--kubeconfig", kubeconfig),
                ("--context", context),
                ("-n", namespaces),
                ("--velero-namespace", velero_namespaces),
            )
            if value
        ]
        raise click.UsageError(
            f"--from-dir cannot be combined with {', '.join(given)}: those read a live cluster "
            "(--kubeconfig/--context/-n/--velero-namespace); an export is read as it is"
        )
    if from_dir is not None:
        return DirectorySourceSettings(
            type="directory", path=from_dir, max_file_bytes=max_file_bytes
        )
    if live_options:
        return ClusterSourceSettings(
            type="cluster",
            kubeconfig=kubeconfig,
            context=context,
            namespaces=namespaces,
            velero_namespaces=velero_namespaces,
        )
    return configured


@click.command()
@click.option(
    "--from-dir", type=click.Path(path_type=Path), help="Audit an exported directory of YAML/JSON."
)
@click.option(
    "--at",
    "at_text",
    metavar="TIME",
    help="Audit instant (RFC 3339, UTC); default now. Objects created after it are left out.",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(path_type=Path),
    default=Path("out"),
    show_default=True,
    help="Folder for the reports: new, empty or an earlier run's (whose artifacts are "
    "removed first); other files are refused.",
)
@click.option(
    "--format",
    "formats",
    type=FormatList(FORMATS),
    default=DEFAULT_FORMATS,
    show_default=True,
    help=f"Comma-separated: {', '.join(FORMATS)}.",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(path_type=Path),
    help="Settings YAML file (config/auditor.example.yaml); its report: and schedules: "
    "sections are serve's.",
)
@click.option("--cluster-name", help="Cluster name for the report (overrides config).")
@click.option(
    "--max-file-bytes",
    type=click.IntRange(min=1),
    default=DEFAULT_MAX_FILE_BYTES,
    show_default=True,
    help="Export files larger than this are refused (a collection problem).",
)
@cluster_options  # live cluster (used when --from-dir is not given)
@velero_option
@click.option("--owner", help="Write a report for this owner's VMs only.")
@click.option(
    "--publish",
    "publish_url",
    metavar="URL",
    help="Publish the run as evidence: s3://BUCKET/PREFIX or a directory (overrides config).",
)
@target_options
@click.option(
    "--signing-key",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Ed25519 private key (PEM) that signs manifest.json (default: publish.signing_key_file).",
)
@click.option(
    "--fail-on",
    type=AnyCase(["never", "not-ready", "at-risk"]),
    default="never",
    show_default=True,
    help="Exit 1 when any VM is at or below this readiness.",
)
def run(
    from_dir: Path | None,
    at_text: str | None,
    out_dir: Path,
    formats: tuple[str, ...],
    config_path: Path | None,
    cluster_name: str | None,
    max_file_bytes: int,
    owner: str | None,
    publish_url: str | None,
    signing_key: Path | None,
    fail_on: str,
    kubeconfig: Path | None,
    context: str | None,
    namespaces: tuple[str, ...],
    velero_namespaces: tuple[str, ...],
    **target_flags: Any,
) -> None:
    """Audit every VirtualMachine once and write the reports to --out.

    Reads --from-dir, or else the live cluster (read-only) through --kubeconfig/--context,
    the in-cluster service account, or the default kubeconfig.

    Exit codes: 0 done; 1 the --fail-on gate failed; 2 bad option, config or
    input; 3 not published (spooled); 4 nothing trustworthy audited (no
    VirtualMachine found, VM list unreadable or incomplete, API server lost).
    """
    keep_from_now()  # one audit, then the process ends: no teardown (auditor.lifetime)
    at = parse_at(at_text)
    settings = load_config(config_path)
    if cluster_name:
        settings = settings.model_copy(update={"cluster_name": cluster_name})
    wanted = list(formats)
    source = source_option(
        settings.source,
        from_dir,
        max_file_bytes,
        kubeconfig=kubeconfig,
        context=context,
        namespaces=namespaces,
        velero_namespaces=velero_namespaces,
    )
    check_out_dir(out_dir, source)
    target = publish_target(publish_url, target_flags, settings.publish)
    if target is not None and not target.is_s3:
        check_archive_dir(Path(target.describe()), out_dir, source)
    if signing_key is not None and target is not None:
        target = target.model_copy(update={"signing_key_file": signing_key})
    key_file = signing_key or (target.signing_key_file if target is not None else None)
    if target is not None and "json" not in wanted:
        raise click.BadParameter(
            f"{','.join(wanted)} without json: a published run needs report.json (sealing, "
            "history, report --period and fleet read it); add json or leave out --publish",
            param_hint="--format",
        )
    if signing_key is not None and (problem := signing_key_problem(signing_key)) is not None:
        # before the audit: a bad key found only when the run was sealed left an unsealed
        # folder that then refused the next run (trial ux30)
        raise click.BadParameter(problem, param_hint="--signing-key")
    # One set of settings for run_audit: the source the options name, the target they
    # publish to (the trend is computed against its archive).
    settings = settings.model_copy(
        update={"source": source, "publish": None if target is None else target.model_dump()}
    )
    audit = audit_or_exit(settings, at, owner, wanted, given_at=at_text is not None)
    report = report_document(audit.report)  # the one JSON form, shared with report.json
    try:
        paths = write_run(audit, out_dir, wanted, signing_key=key_file)
    except (RunDirError, SigningError) as exc:
        click.echo(f"Error: cannot write manifest.json: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    except OSError as exc:
        click.echo(
            f"Error: cannot write reports to --out {out_dir}: {exc.strerror or exc}", err=True
        )
        sys.exit(2)
    summary = report["summary"]["readiness"]
    click.echo(
        f"audited {report['summary']['vms']} VMs at {report['run']['audit_time']}: "
        + ", ".join(f"{k} {v}" for k, v in summary.items())
        + incomplete_note(report)
    )
    if audit.left_out:  # counted by auditor.sources.asof.leave_out_after, never parsed
        kinds = ", ".join(f"{kind} {n}" for kind, n in audit.left_out.items())
        click.echo(
            f"Warning: --at {report['run']['audit_time']} precedes the creation of "
            f"{sum(audit.left_out.values())} object(s) read ({kinds}): they are left out as "
            "no evidence at that instant, and the report cannot show what existed then and "
            "was deleted since",
            err=True,
        )
    if audit.at_after_input is not None:  # auditor.sources.freshness: verdicts unchanged
        click.echo(f"Warning: {audit.at_after_input}", err=True)
    if not report["vms"]:
        why = f" for owner {owner!r}" if owner else ""
        click.echo(f"Warning: no VirtualMachine was audited{why}", err=True)
    hint = ownership_hint(report, settings.ownership.default)
    if hint:
        click.echo(hint, err=True)
    for path in paths:
        click.echo(f"wrote {path}")
    unpublished = misconfigured = False
    if target is not None:
        try:
            result = publish_run(out_dir, target, refuse_misconfigured=True)
        except (RunDirError, SigningError) as exc:
            click.echo(f"Error: cannot publish: {exc}", err=True)
            sys.exit(EXIT_USAGE)
        except PublishError as exc:  # the run could not even be spooled
            click.echo(f"publish: not delivered and not spooled: {exc}", err=True)
            unpublished = True
        else:
            if result.refused:  # no retry can deliver it: exit 2, not the spool's 3
                click.echo(
                    f"Error: cannot publish to {target.describe()}: {result.error}; "
                    f"{refused_note(result)} (fix the target, then: auditor publish "
                    f"--from-run {out_dir} --to ...)",
                    err=True,
                )
                misconfigured = True
            elif result.published:
                click.echo(f"published run {report['run']['id']} to {target.describe()}")
            elif result.quarantined is not None:  # not in the spool: never retried
                click.echo(
                    f"publish: not delivered, run QUARANTINED in {result.quarantined} (not "
                    f"retried; {result.error})",
                    err=True,
                )
                unpublished = True
            else:
                click.echo(
                    f"publish: not delivered, run kept in the spool ({result.error})", err=True
                )
                unpublished = True
    keep_until_exit(audit, report)  # see keep_until_exit: no teardown of the audit's objects
    if audit.gap is not None:  # a partly read VM list is 4 whatever else (docs/exit-codes.md)
        raise NothingAudited(f"{audit.gap}; the report covers only the VMs that were read")
    if misconfigured:
        sys.exit(EXIT_USAGE)
    if unpublished:
        sys.exit(EXIT_NOT_PUBLISHED)
    if fail_on != "never" and gate_fails(report, fail_on):
        click.echo(f"Error: --fail-on {fail_on}: {_gate_reason(report, fail_on)}", err=True)
        sys.exit(EXIT_GATE)


def audit_or_exit(
    settings: AuditSettings,
    at: datetime,
    owner: str | None,
    formats: Sequence[str] | None = None,
    *,
    given_at: bool = False,
) -> AuditRun:
    """:func:`auditor.pipeline.run_audit` at ``at``, its failures as exit codes and messages.
    ``formats``: what the run writes (part of its id); ``given_at``: ``at`` is the user's
    ``--at`` (named when clearly after the input was taken).

    Exits 2 when the input cannot be used (missing directory, cluster credentials,
    unknown ``--owner``), 4 (:class:`NothingAudited`) when no VirtualMachine could be
    read or the cluster was lost mid-run.
    """
    try:
        return run_audit(
            settings,
            lambda: at,
            owner=owner,
            progress=progress_for(Console(stderr=True)),
            formats=formats,
            given_at=given_at,
        )
    except ClusterLostError as exc:
        raise NothingAudited(str(exc)) from exc
    except NothingToAudit as exc:
        raise NothingAudited(f"{exc}; no report written") from exc
    except UnknownOwnerError as exc:
        click.echo(f"Error: --owner: {exc}", err=True)
    except (ClusterAccessError, FileNotFoundError) as exc:
        click.echo(f"Error: {exc}", err=True)
    sys.exit(EXIT_USAGE)


def ownership_hint(report: dict[str, Any], default_owner: str) -> str:
    """A one-line hint on setting ownership when over half the VMs have the default owner.

    ``""`` when ownership is mostly set, or when the report is owner-filtered (its VMs
    are then not the whole audit).
    """
    vms = report["vms"]
    if report["run"]["owner_filter"] is not None or not vms:
        return ""
    unassigned = sum(1 for v in vms if v["owner"] == default_owner)
    if unassigned * 2 <= len(vms):
        return ""
    return (
        f"hint: {unassigned} of {len(vms)} VMs have no owner ({default_owner!r}); set "
        "ownership.keys (VM/Namespace label or annotation keys) or ownership.namespaces "
        "(namespace -> owner) in --config, see config/auditor.example.yaml"
    )


def incomplete_note(report: dict[str, Any]) -> str:
    """What made the audit incomplete (problems, unread kinds); for a complete audit, the
    kinds that were not read all the same (their checks report ERROR), else ``""``."""
    unread = sorted(k for k, s in report["cluster"]["kind_states"].items() if s == "unavailable")
    named = ""
    if unread:
        named = f"{len(unread)} kind(s) not read: {', '.join(unread[:6])}"
        if len(unread) > 6:
            named += ", ..."
    if report["run"]["complete"]:
        return f"; {named}" if named else ""
    parts = [f"{len(report['collection_problems'])} collection problem(s)"]
    if named:
        parts.append(named)
    return f"; INCOMPLETE ({'; '.join(parts)})"


def _gate_reason(report: dict[str, Any], fail_on: str) -> str:
    """The one line saying why :func:`gate_fails` failed the run (docs/exit-codes.md)."""
    readiness = report["summary"]["readiness"]
    states = ["NOT_READY", "UNKNOWN"] + (["AT_RISK"] if fail_on == "at-risk" else [])
    counts = [f"{readiness[s]} {s}" for s in states if readiness[s]]
    if not counts:
        return "no VM was audited and the VirtualMachine list was not fully read"
    return f"{', '.join(counts)} VM(s) at or below the gate (UNKNOWN always counts)"


def gate_fails(report: dict[str, Any], fail_on: str) -> bool:
    """True when the ``--fail-on`` gate must fail the run.

    UNKNOWN counts as failing at every level (missing data is never compliant),
    and so does an audit that found no VM while the VM list itself was not read.
    """
    summary = report["summary"]["readiness"]
    bad = summary["NOT_READY"] + summary["UNKNOWN"]
    if fail_on == "at-risk":
        bad += summary["AT_RISK"]
    vm_list_unknown = report["cluster"]["kind_states"].get("VirtualMachine") != "complete"
    return bad > 0 or (not report["vms"] and vm_list_unknown)
