"""Where a BackupStorageLocation's object storage runs (RR-BKP-007's off-cluster rule)."""

from __future__ import annotations

import pytest

from auditor.inventory.endpoints import ClusterHosts, endpoint_host, in_cluster_endpoint

CLUSTER = ClusterHosts(
    namespaces={"velero", "minio", "app"},
    services={("minio", "minio"), ("velero", "s3")},
    route_hosts={"minio-minio.apps.ocp.example.com": "minio/minio"},
    service_ips={"172.30.12.7": "minio/minio"},
)


@pytest.mark.parametrize(
    ("url", "reason", "observed"),
    [
        ("http://minio.minio.svc:9000", "Service minio/minio of this cluster", True),
        ("http://minio.minio.svc.cluster.local:9000", "Service minio/minio", True),
        ("http://minio.minio:9000", "Service minio/minio of this cluster", True),
        ("http://s3:9000", "Service velero/s3 of this cluster", True),
        ("http://objects:9000", "bare name", False),
        ("http://objects.app", "names a Service objects in namespace app", False),
        ("https://minio-minio.apps.ocp.example.com", "Route minio/minio", True),
        ("http://172.30.12.7:9000", "cluster IP of Service minio/minio", True),
        ("http://127.0.0.1:9000", "loopback", True),
        ("http://localhost:9000", "Velero pod itself", True),
        ("minio.minio.svc:9000", "Service minio/minio", True),
    ],
)
def test_in_cluster_endpoints_are_named(url: str, reason: str, observed: bool) -> None:
    found = in_cluster_endpoint(url, "velero", CLUSTER)
    assert found is not None
    assert reason in found.reason
    assert found.observed is observed


@pytest.mark.parametrize(
    "url",
    [
        "https://s3.eu-west-1.amazonaws.com",
        "https://s3.dr-site.corp.example",
        "https://s3.svc.example.com",  # "svc" as an external name's label, not *.ns.svc
        "http://10.0.0.5:9000",  # an address of no Service read
        "http://[::1",  # unreadable: nothing said
        "",
    ],
)
def test_other_endpoints_are_not_claimed(url: str) -> None:
    assert in_cluster_endpoint(url, "velero", CLUSTER) is None


def test_endpoint_host_drops_credentials() -> None:
    assert endpoint_host("https://AKIA:secret@S3.Example.com:9000/bucket") == "s3.example.com"
    assert "secret" not in endpoint_host("https://user:secret@minio.minio.svc")
