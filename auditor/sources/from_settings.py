"""The one place a source is chosen: the config's ``source`` section, or the live cluster.

``auditor run`` turns its options (``--from-dir``, ``--kubeconfig``...) into a
``source`` section and the service reads it from the config file; both then
call :func:`source_from_settings` (through :func:`auditor.pipeline.run_audit`).
"""

from __future__ import annotations

from auditor.config import (
    AuditSettings,
    ClusterSourceSettings,
    DirectorySourceSettings,
    SourceSettings,
)
from auditor.sources.base import Source
from auditor.sources.directory import DirectorySource
from auditor.sources.progress import CollectProgress

__all__ = ["source_from_settings", "open_source", "LIVE_DEFAULT"]

#: No ``source`` section: the live cluster through the in-cluster service account,
#: ``$KUBECONFIG`` or ``~/.kube/config`` (as ``auditor run`` without options).
LIVE_DEFAULT = ClusterSourceSettings(type="cluster")


def open_source(
    cfg: SourceSettings,
    *,
    cluster_name: str | None = None,
    progress: CollectProgress | None = None,
    slim: bool = True,
) -> Source:
    """Return the :class:`~auditor.sources.base.Source` ``cfg`` names.

    ``progress`` is shown while a live cluster is read (ignored for a directory).
    ``slim``: keep the slim records audits read (False: every object whole, to export).

    Raises:
        auditor.sources.kubeclient.ClusterAccessError: cluster credentials cannot be loaded.
    """
    if isinstance(cfg, DirectorySourceSettings):
        return DirectorySource(
            cfg.path, cluster_name=cluster_name, max_file_bytes=cfg.max_file_bytes, slim=slim
        )
    # imported here: a directory audit never loads the Kubernetes client (about 0.1 s)
    from auditor.sources.cluster import ClusterSource, CollectOptions
    from auditor.sources.identity import current_context
    from auditor.sources.kubeclient import ClientSettings, api_client

    client = api_client(ClientSettings(kubeconfig=cfg.kubeconfig, context=cfg.context))
    return ClusterSource(
        client,
        cluster_name=cluster_name,
        context_name=current_context(cfg.kubeconfig, cfg.context),
        options=CollectOptions(
            namespaces=tuple(cfg.namespaces), velero_namespaces=tuple(cfg.velero_namespaces)
        ),
        progress=progress,
        slim=slim,
    )


def source_from_settings(
    settings: AuditSettings, *, progress: CollectProgress | None = None
) -> Source:
    """The source of ``settings``: its ``source`` section, else :data:`LIVE_DEFAULT`.

    Raises:
        auditor.sources.kubeclient.ClusterAccessError: cluster credentials cannot be loaded.
    """
    return open_source(
        settings.source or LIVE_DEFAULT, cluster_name=settings.cluster_name, progress=progress
    )
