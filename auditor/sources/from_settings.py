"""Build the source named by the config file's ``source`` section."""

from __future__ import annotations

from auditor.config import AuditSettings, ClusterSourceSettings
from auditor.sources.base import Source
from auditor.sources.cluster import ClusterSource, CollectOptions
from auditor.sources.directory import DirectorySource
from auditor.sources.identity import current_context
from auditor.sources.kubeclient import ClientSettings, api_client

__all__ = ["source_from_settings", "SourceSettingsError"]


class SourceSettingsError(Exception):
    """The config has no ``source`` section."""


def source_from_settings(settings: AuditSettings) -> Source:
    """Return the :class:`~auditor.sources.base.Source` for ``settings.source``.

    Raises:
        SourceSettingsError: no ``source`` section.
        auditor.sources.kubeclient.ClusterAccessError: cluster credentials cannot be loaded.
    """
    cfg = settings.source
    if cfg is None:
        raise SourceSettingsError("the config has no 'source' section (directory or cluster)")
    if isinstance(cfg, ClusterSourceSettings):
        client = api_client(ClientSettings(kubeconfig=cfg.kubeconfig, context=cfg.context))
        return ClusterSource(
            client,
            cluster_name=settings.cluster_name,
            context_name=current_context(cfg.kubeconfig, cfg.context),
            options=CollectOptions(
                namespaces=cfg.namespaces, velero_namespaces=cfg.velero_namespaces
            ),
        )
    return DirectorySource(cfg.path, cluster_name=settings.cluster_name)
