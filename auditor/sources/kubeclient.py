"""Build a Kubernetes API client from a kubeconfig, a context or the pod's service account.

Order: an explicit ``kubeconfig`` file; else, when running in a pod
(``KUBERNETES_SERVICE_HOST`` set) and no ``context`` was asked for, the
in-cluster service account; else the default kubeconfig (``$KUBECONFIG`` or
``~/.kube/config``). urllib3's own retries are switched off: the cluster source
retries by itself, so a slow or failing server costs a known number of requests.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

__all__ = ["ClusterAccessError", "ClusterLostError", "ClientSettings", "api_client"]


class ClusterAccessError(Exception):
    """The cluster cannot be reached or its API discovery read (nothing can be audited).

    The message names the API server URL (or kubeconfig) and the reason.
    """


class ClusterLostError(ClusterAccessError):
    """The API server stopped answering (connection refused/reset) after discovery.

    What was read before is not a complete picture, so nothing is audited; the
    message names the server, the request and how many kinds were read.
    """


@dataclass(frozen=True)
class ClientSettings:
    """How to reach the cluster.

    ``kubeconfig``: a kubeconfig file (None: in-cluster or the default file).
    ``context``: a context in it (None: its current context).
    """

    kubeconfig: Path | None = None
    context: str | None = None


def api_client(settings: ClientSettings) -> Any:
    """Return a ``kubernetes.client.ApiClient`` for ``settings``.

    Raises:
        ClusterAccessError: no usable kubeconfig or service account, or the
            context does not exist.
    """
    # imported when used: a directory audit never loads the Kubernetes client
    from kubernetes import client as k8s_client
    from kubernetes import config as k8s_config

    cfg = k8s_client.Configuration()
    in_pod = "KUBERNETES_SERVICE_HOST" in os.environ
    try:
        if settings.kubeconfig is None and settings.context is None and in_pod:
            k8s_config.load_incluster_config(client_configuration=cfg)  # type: ignore[no-untyped-call]
        else:
            k8s_config.load_kube_config(  # type: ignore[no-untyped-call]
                config_file=str(settings.kubeconfig) if settings.kubeconfig else None,
                context=settings.context,
                client_configuration=cfg,
                persist_config=False,
            )
    except (k8s_config.ConfigException, OSError, ValueError, TypeError, yaml.YAMLError) as exc:
        where = settings.kubeconfig or os.environ.get("KUBECONFIG", "~/.kube/config")
        raise ClusterAccessError(f"cannot load cluster credentials from {where}: {exc}") from exc
    cfg.retries = False
    return k8s_client.ApiClient(configuration=cfg)
