"""Whether a BackupStorageLocation's object storage is served from inside the audited cluster.

A copy in object storage counts as off-cluster only when the storage is: a MinIO (or any S3
server) running as a Service of the same cluster dies with it. Velero reaches the S3 server
at the location's ``spec.config.s3Url`` (velero-plugin-for-aws, ``s3Url``:
https://github.com/vmware-tanzu/velero-plugin-for-aws/blob/main/backupstoragelocation.md),
resolved by the Velero pod's DNS: a Service name, bare (``minio``), with its namespace
(``minio.velero``) or in full (``minio.velero.svc.cluster.local``), names a Service of the
cluster (https://kubernetes.io/docs/concepts/services-networking/dns-pod-service/). A
Route's host or a Service's cluster IP found in the export names one too.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Collection
from dataclasses import dataclass
from urllib.parse import urlsplit

__all__ = ["ClusterHosts", "InCluster", "endpoint_host", "in_cluster_endpoint"]


@dataclass(frozen=True)
class ClusterHosts:
    """What of the audited cluster an endpoint host may name: its namespaces, its Services
    as ``(namespace, name)``, its Routes' hosts (``namespace/name`` by host) and its
    Services' cluster IPs (``namespace/name`` by IP)."""

    namespaces: Collection[str]
    services: Collection[tuple[str, str]]
    route_hosts: dict[str, str]
    service_ips: dict[str, str]


@dataclass(frozen=True)
class InCluster:
    """Why an endpoint is served from inside the cluster. ``observed``: an object of the
    export (a Service, a Route) or the address itself shows it; False when only the name's
    form does (a bare name the Velero pod's DNS would try as a Service first)."""

    reason: str
    observed: bool


def endpoint_host(url: str) -> str:
    """The host of ``url`` (lower case), with no user or password: what evidence may show.

    A URL without a scheme is read as ``host[:port][/path]``. Returns "" when no host can be
    read.
    """
    text = url.strip()
    try:
        parts = urlsplit(text if "//" in text else f"//{text}")
        return (parts.hostname or "").rstrip(".").lower()
    except ValueError:  # an unbalanced "[" in an IPv6 literal
        return ""


def in_cluster_endpoint(url: str, velero_namespace: str, cluster: ClusterHosts) -> InCluster | None:
    """Why the S3 endpoint ``url`` of a BackupStorageLocation in ``velero_namespace`` is
    served from inside the audited cluster, or None when nothing says so (an external name,
    or an address of no known Service).

    Never raises.
    """
    host = endpoint_host(url)
    if not host:
        return None
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        address = None
    if address is not None:
        mapped = getattr(address, "ipv4_mapped", None)
        address = mapped if mapped is not None else address  # ::ffff:10.0.0.1 is 10.0.0.1
        if address.is_loopback or address.is_unspecified:
            return InCluster(f"{host} is a loopback or unspecified address", True)
        service = cluster.service_ips.get(str(address))
        if service:
            return InCluster(f"{host} is the cluster IP of Service {service}", True)
        return None
    if host == "localhost":
        return InCluster("localhost is the Velero pod itself", True)
    labels = host.split(".")
    if (
        len(labels) >= 3
        and labels[2] in ("svc", "pod")
        and (labels[1] in cluster.namespaces or labels[3:] in ([], ["cluster", "local"]))
    ):
        what = "Service" if labels[2] == "svc" else "pod"
        return InCluster(f"{host} is {what} {labels[1]}/{labels[0]} of this cluster", True)
    if len(labels) <= 2:
        namespace = labels[1] if len(labels) == 2 else velero_namespace
        if (namespace, labels[0]) in cluster.services:
            return InCluster(f"{host} is Service {namespace}/{labels[0]} of this cluster", True)
        if len(labels) == 1:
            return InCluster(
                f"{host} is a bare name, which the Velero pod's DNS resolves as a Service of "
                f"namespace {velero_namespace} first",
                False,
            )
        if namespace in cluster.namespaces:
            return InCluster(
                f"{host} names a Service {labels[0]} in namespace {namespace} of this cluster",
                False,
            )
    route = cluster.route_hosts.get(host)
    if route:
        return InCluster(f"{host} is the host of Route {route} of this cluster", True)
    return None
