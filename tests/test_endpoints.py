"""Where a BackupStorageLocation's object storage runs (RR-BKP-007's off-cluster rule)."""

from __future__ import annotations

from pathlib import Path

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
        ("http://[::ffff:127.0.0.1]:9000", "loopback", True),
        ("http://0.0.0.0:9000", "unspecified", True),
        ("http://[::ffff:172.30.12.7]:9000", "cluster IP of Service minio/minio", True),
        ("http://10-128-2-5.minio.pod.cluster.local:9000", "pod minio/10-128-2-5", True),
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


def test_a_service_ip_is_matched_in_any_spelling(tmp_path: Path) -> None:
    """The index keeps one spelling per cluster IP: an IPv6 address written out in full in
    the Service matches its short form in the s3Url (red team)."""
    from auditor.inventory.index import ClusterIndex
    from auditor.sources.base import ClusterData, SourceInfo

    data = ClusterData(info=SourceInfo("directory", str(tmp_path), None, "unknown"))
    data.objects["Service"] = [
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "minio", "namespace": "minio"},
            "spec": {"clusterIP": "fd00:0000:0000:0000:0000:0000:0000:0010"},
        }
    ]
    hosts = ClusterIndex.build(data).cluster_hosts()
    found = in_cluster_endpoint("http://[fd00::10]:9000", "velero", hosts)
    assert found is not None and "Service minio/minio" in found.reason
