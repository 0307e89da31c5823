"""The live source against the loopback API server: same data as the directory source."""

from __future__ import annotations

from pathlib import Path

import pytest

from auditor.kinds import BY_KIND, KINDS
from auditor.sources.base import KindState
from auditor.sources.cluster import ClusterSource
from auditor.sources.directory import DirectorySource
from auditor.sources.kubeclient import ClientSettings, ClusterAccessError, api_client
from tests.kubeapi_server import Faults
from tests.live_support import comparable, export_dir, fast_options, serve

UNEXPORTED = {
    "Route",
    "KubeVirt",
    "ControllerRevision",
    "ConfigMap",
    "VirtualMachineInstancetype",
    "VirtualMachinePreference",
    "PodVolumeRestore",
    "DataDownload",
    "DeleteBackupRequest",
    "BackupRepository",
}


def test_same_cluster_data_as_directory_source(tmp_path: Path) -> None:
    with serve(tmp_path) as live:
        data = live.collect()
    ref = DirectorySource(export_dir()).collect()
    got, want = comparable(data), comparable(ref)
    assert got["objects"] == want["objects"]
    assert got["states"] == want["states"]
    assert got["skipped"] == want["skipped"] == {}
    assert sum(len(v) for v in data.objects.values()) == 210
    # The kinds the export lacks are forbidden on the server: the live source says
    # why; the directory source simply has no file. Nothing else differs.
    assert want["problems"] == []
    assert [p.kinds for p in data.problems] == [
        ("KubeVirt",),
        ("CDIConfig",),
        ("CDI",),
        ("HyperConverged",),
        ("DataSource",),
        ("ControllerRevision",),
        ("ConfigMap",),
        ("VirtualMachineInstancetype",),
        ("VirtualMachinePreference",),
        ("PodVolumeRestore",),
        ("DataDownload",),
        ("DeleteBackupRequest",),
        ("BackupRepository",),
        ("Route",),
    ]
    for problem in data.problems:
        spec = BY_KIND[problem.kind or ""]
        assert f"{spec.group}/{spec.versions[0]}" in problem.reason
        assert "HTTP 403" in problem.reason


def test_items_get_api_version_kind_and_api_path_origins(tmp_path: Path) -> None:
    with serve(tmp_path) as live:
        data = live.collect()
        assert live.api.methods() == {"GET"}
    vm = data.of("VirtualMachine")[0]
    assert (vm["apiVersion"], vm["kind"]) == ("kubevirt.io/v1", "VirtualMachine")
    assert (data.of("Namespace")[0]["apiVersion"], data.of("StorageClass")[0]["kind"]) == (
        "v1",
        "StorageClass",
    )
    assert data.origins[("VirtualMachine", "eng-sandbox", "dev-build-01")] == (
        "/apis/kubevirt.io/v1/namespaces/eng-sandbox/virtualmachines/dev-build-01"
    )
    assert (
        data.origins[("StorageClass", "", "nfs-csi")]
        == "/apis/storage.k8s.io/v1/storageclasses/nfs-csi"
    )
    assert data.info.type == "cluster" and data.info.location == live.url


def test_managed_fields_are_dropped(tmp_path: Path) -> None:
    with serve(tmp_path) as live:
        vm = live.api.objects["VirtualMachine"][0]
        vm["metadata"]["managedFields"] = [{"manager": "kubectl", "operation": "Apply"}]
        data = live.collect()
    assert all("managedFields" not in o["metadata"] for o in data.of("VirtualMachine"))


def test_older_served_version_is_used_and_unknown_version_is_unavailable(tmp_path: Path) -> None:
    faults = Faults(versions={"snapshot.kubevirt.io": ("v1alpha1",), "kubevirt.io": ("v2",)})
    with serve(tmp_path, faults=faults) as live:
        data = live.collect()
    snap = data.of("VirtualMachineSnapshot")
    assert [s["apiVersion"] for s in snap] == ["snapshot.kubevirt.io/v1alpha1"]
    assert data.state("VirtualMachineSnapshot") is KindState.COMPLETE
    assert data.state("VirtualMachine") is KindState.UNAVAILABLE
    assert data.of("VirtualMachine") == []
    vm_problem = next(p for p in data.problems if p.kind == "VirtualMachine")
    assert "served only at kubevirt.io/v2" in vm_problem.reason


def test_preferred_version_wins_over_table_order(tmp_path: Path) -> None:
    faults = Faults(versions={"snapshot.kubevirt.io": ("v1alpha1", "v1beta1")})
    with serve(tmp_path, faults=faults) as live:
        data = live.collect()
        paths = [p for _, p in live.api.log]
    assert data.of("VirtualMachineSnapshot")[0]["apiVersion"] == "snapshot.kubevirt.io/v1alpha1"
    assert "/apis/snapshot.kubevirt.io/v1beta1" not in paths


def test_namespaces_limit_namespaced_lists(tmp_path: Path) -> None:
    with serve(tmp_path) as live:
        data = live.collect(options=fast_options(namespaces=("finance-prod", "no-such-ns")))
        lists = live.api.list_requests()
    assert {o["metadata"]["namespace"] for o in data.of("VirtualMachine")} == {"finance-prod"}
    assert len(data.of("VirtualMachine")) == 4
    assert [o["metadata"]["name"] for o in data.of("Namespace")] == ["finance-prod"]
    assert len(data.of("StorageClass")) == 5  # cluster-scoped kinds are read cluster-wide
    assert "/apis/kubevirt.io/v1/namespaces/finance-prod/virtualmachines?limit=500" in lists
    assert "/apis/kubevirt.io/v1/virtualmachines?limit=500" not in lists
    assert data.state("Namespace") is KindState.COMPLETE


def test_forbidden_in_one_namespace_is_partial(tmp_path: Path) -> None:
    with serve(tmp_path) as live:
        live.api.faults.forbidden_namespaces = {"web-platform"}
        data = live.collect(options=fast_options(namespaces=("finance-prod", "web-platform")))
    assert data.state("VirtualMachine") is KindState.PARTIAL
    assert {p.namespace for p in data.problems if p.kind == "VirtualMachine"} == {"web-platform"}
    assert len(data.of("VirtualMachine")) == 4


def test_kubeconfig_context_is_honoured(tmp_path: Path) -> None:
    with serve(tmp_path) as live:
        client = api_client(ClientSettings(kubeconfig=live.kubeconfig, context="elsewhere"))
        assert client.configuration.host == live.url
        assert client.configuration.api_key["BearerToken"] == "Bearer test-token-not-secret"
    with pytest.raises(ClusterAccessError, match="no-such-context"):
        api_client(ClientSettings(kubeconfig=live.kubeconfig, context="no-such-context"))


def test_unreachable_server_is_a_cluster_access_error(tmp_path: Path) -> None:
    with serve(tmp_path) as live:
        client = api_client(ClientSettings(kubeconfig=live.kubeconfig))
    source = ClusterSource(client, options=fast_options(), sleep=lambda s: None)
    with pytest.raises(ClusterAccessError, match="cannot read API discovery from http://127.0.0.1"):
        source.collect()


def test_every_kind_has_a_state(tmp_path: Path) -> None:
    with serve(tmp_path) as live:
        data = live.collect()
    assert set(data.states) == {k.kind for k in KINDS}


def test_malformed_served_object_is_partial_and_named_by_api_path(tmp_path: Path) -> None:
    with serve(tmp_path) as live:
        vm = next(
            v for v in live.api.objects["VirtualMachine"] if v["metadata"]["name"] == "fin-app-01"
        )
        vm["spec"] = ["not", "a", "mapping"]
        data = live.collect()
    assert data.state("VirtualMachine") is KindState.PARTIAL
    assert len(data.of("VirtualMachine")) == 11
    [problem] = [p for p in data.problems if p.kind == "VirtualMachine"]
    assert problem.field == "spec"
    assert (
        "/apis/kubevirt.io/v1/namespaces/finance-prod/virtualmachines/fin-app-01" in problem.reason
    )
