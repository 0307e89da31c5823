"""Build the source named by the config file's ``source`` section."""

from __future__ import annotations

import importlib
from typing import Any

from auditor.config import AuditSettings, ClusterSourceSettings
from auditor.sources.base import Source
from auditor.sources.directory import DirectorySource

__all__ = ["source_from_settings", "SourceSettingsError"]


class SourceSettingsError(Exception):
    """The ``source`` section is missing or names a source this build lacks."""


def source_from_settings(settings: AuditSettings) -> Source:
    """Return the :class:`~auditor.sources.base.Source` for ``settings.source``.

    Raises:
        SourceSettingsError: no ``source`` section, or the cluster source is not available.
    """
    cfg = settings.source
    if cfg is None:
        raise SourceSettingsError("the config has no 'source' section (directory or cluster)")
    if isinstance(cfg, ClusterSourceSettings):
        return _cluster_source(cfg, settings.cluster_name)
    return DirectorySource(cfg.path, cluster_name=settings.cluster_name)


def _cluster_source(cfg: ClusterSourceSettings, cluster_name: str | None) -> Source:
    """Build the live-cluster source (``auditor.sources.cluster.ClusterSource``)."""
    try:
        module: Any = importlib.import_module("auditor.sources.cluster")
    except ModuleNotFoundError as exc:
        raise SourceSettingsError(
            "source.type 'cluster' is not available in this build (auditor.sources.cluster)"
        ) from exc
    source: Source = module.ClusterSource(
        kubeconfig=cfg.kubeconfig,
        context=cfg.context,
        namespaces=list(cfg.namespaces) or None,
        cluster_name=cluster_name,
    )
    return source
