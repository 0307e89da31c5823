"""``auditor collect`` and ``auditor preflight``: read a live cluster, check RBAC first.

Also the shared cluster options (``--kubeconfig``, ``--context``, ``-n/--namespace``,
``--velero-namespace``) and the progress display ``auditor run`` uses. Exit codes: 0 done
(collection problems are reported, not fatal), 1 preflight found a denied permission, 2 the
cluster or output directory could not be used.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn

from auditor.cli.exitcodes import EXIT_NOTHING_AUDITED, EXIT_USAGE
from auditor.config import ClusterSourceSettings
from auditor.sources.base import ClusterData, KindState, Source
from auditor.sources.export import ExportError, write_export
from auditor.sources.from_settings import open_source
from auditor.sources.kubeclient import (
    ClientSettings,
    ClusterAccessError,
    ClusterLostError,
    api_client,
)
from auditor.sources.preflight import Permission, check_permissions
from auditor.sources.progress import CollectProgress, NullProgress

__all__ = [
    "NothingAudited",
    "collect",
    "preflight",
    "cluster_options",
    "velero_option",
    "cluster_source",
    "progress_for",
    "RichProgress",
]

F = TypeVar("F", bound=Callable[..., Any])


class _Fatal(click.ClickException):
    """The cluster or the output directory could not be used (exit code 2)."""

    exit_code = EXIT_USAGE


class NothingAudited(click.ClickException):
    """Nothing trustworthy was read: no VM, VM list unreadable, server lost (exit code 4)."""

    exit_code = EXIT_NOTHING_AUDITED


def cluster_options(func: F) -> F:
    """Add ``--kubeconfig``, ``--context`` and repeatable ``-n/--namespace`` to a command."""
    func = click.option(
        "-n",
        "--namespace",
        "namespaces",
        multiple=True,
        help="Read namespaced kinds only in this namespace (repeatable; default: all).",
    )(func)
    func = click.option("--context", default=None, help="Kubeconfig context (default: current).")(
        func
    )
    func = click.option(
        "--kubeconfig",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        help="Kubeconfig file (default: in-cluster service account, $KUBECONFIG, ~/.kube/config).",
    )(func)
    return func


def velero_option(func: F) -> F:
    """Add repeatable ``--velero-namespace`` (where Velero/OADP objects live, with ``-n``)."""
    return click.option(
        "--velero-namespace",
        "velero_namespaces",
        multiple=True,
        help="With -n: the namespace holding Velero/OADP objects (default: found from "
        "DataProtectionApplications/BackupStorageLocations; else backup checks give ERROR).",
    )(func)


class RichProgress:
    """A rich progress display on stderr: kinds done, current kind and objects read."""

    def __init__(self, console: Console) -> None:
        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[detail]}"),
            console=console,
            transient=True,
        )
        self._task: Any = None

    def start(self, total: int) -> None:
        """Show the display."""
        self._progress.start()
        self._task = self._progress.add_task("kinds", total=total, detail="discovery")

    def page_read(self, kind: str, items: int) -> None:
        """Show the kind being read and its object count."""
        self._progress.update(self._task, detail=f"{kind}: {items} objects")

    def kind_done(self, kind: str, state: KindState) -> None:
        """Advance by one kind."""
        self._progress.update(self._task, advance=1, detail=f"{kind}: {state.value}")

    def finish(self) -> None:
        """Remove the display."""
        self._progress.stop()


def progress_for(console: Console) -> CollectProgress:
    """Rich progress when ``console`` is a terminal, else silent."""
    return RichProgress(console) if console.is_terminal else NullProgress()


def cluster_source(
    kubeconfig: Path | None,
    context: str | None,
    namespaces: tuple[str, ...],
    *,
    cluster_name: str | None = None,
    console: Console | None = None,
    velero_namespaces: tuple[str, ...] = (),
    slim: bool = True,
) -> Source:
    """Build the live source from CLI options (progress on ``console`` if a terminal).

    ``slim=False`` keeps every object whole (``collect`` exports them), instead of the slim
    records an audit keeps (:attr:`auditor.kinds.KindSpec.keep`).

    Raises:
        ClusterAccessError: the credentials cannot be loaded.
    """
    cfg = ClusterSourceSettings(
        type="cluster",
        kubeconfig=kubeconfig,
        context=context,
        namespaces=tuple(namespaces),
        velero_namespaces=tuple(velero_namespaces),
    )
    progress = progress_for(console or Console(stderr=True))
    return open_source(cfg, cluster_name=cluster_name, progress=progress, slim=slim)


def _summary(data: ClusterData) -> str:
    count = sum(len(v) for v in data.objects.values())
    missing = sorted(k for k, s in data.states.items() if s is KindState.NOT_INSTALLED)
    lines = [f"read {count} objects from {data.info.location}"]
    if missing:
        lines.append(f"not installed: {', '.join(missing)}")
    lines += [f"problem: {p.reason}" for p in data.problems]
    return "\n".join(lines)


@click.command()
@cluster_options
@velero_option
@click.option(
    "--out",
    "out",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="New or empty directory for the export.",
)
@click.option("--cluster-name", default=None, help="Cluster name for reports (default: context).")
def collect(
    kubeconfig: Path | None,
    context: str | None,
    namespaces: tuple[str, ...],
    velero_namespaces: tuple[str, ...],
    out: Path,
    cluster_name: str | None,
) -> None:
    """Read the cluster (GET only) and write it as an export `run --from-dir` reads back.

    One <plural>.yaml List per kind, secrets already stripped, plus
    .auditor-collection.json recording kinds not installed or unreadable.

    Exit codes: 0 written (kinds that could not be read are recorded, not fatal);
    2 the cluster or the output folder could not be used.
    """
    console = Console(stderr=True)
    try:
        source = cluster_source(
            kubeconfig,
            context,
            namespaces,
            cluster_name=cluster_name,
            console=console,
            velero_namespaces=velero_namespaces,
            slim=False,
        )
        data = source.collect()
        files = write_export(data, out)
    except ClusterLostError as exc:
        raise NothingAudited(str(exc)) from exc
    except (ClusterAccessError, ExportError) as exc:
        raise _Fatal(str(exc)) from exc
    click.echo(_summary(data), err=True)
    click.echo(f"wrote {len(files)} files to {out}")


@click.command()
@cluster_options
def preflight(kubeconfig: Path | None, context: str | None, namespaces: tuple[str, ...]) -> None:
    """Check, like `oc auth can-i`, that the audit may list and get every kind it reads.

    Exit codes: 0 every permission granted; 1 one is denied (each named); 2 the
    cluster could not be used.
    """
    try:
        client = api_client(ClientSettings(kubeconfig=kubeconfig, context=context))
        rows = check_permissions(client, tuple(namespaces))
    except ClusterAccessError as exc:
        raise _Fatal(str(exc)) from exc
    click.echo(_table(rows))
    denied = [r for r in rows if not r.allowed]
    if denied:
        click.echo(f"{len(denied)} of {len(rows)} permissions denied", err=True)
        raise SystemExit(1)
    click.echo(f"all {len(rows)} permissions allowed", err=True)


def _table(rows: list[Permission]) -> str:
    header = ("RESOURCE", "NAMESPACE", "VERB", "ALLOWED")
    cells = [(r.resource, r.namespace or "*", r.verb, "yes" if r.allowed else "no") for r in rows]
    widths = [max(len(c[i]) for c in [header, *cells]) for i in range(4)]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in [header, *cells]
    ]
    return "\n".join(line.rstrip() for line in lines)
