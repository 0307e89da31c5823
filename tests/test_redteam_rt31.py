"""Red-team round rt31: identity paths held to their evidence.

Each test changes one project fixture the way a real cluster drifts, and asserts the finding
beside the healthy shape, which keeps its verdict.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.test_evidence_gaps import _complete, _docs, _finding, _of

Docs = list[dict[str, Any]]

#: app/vm1 with persistent EFI, a label-selector Backup (backup=yes) and the kubevirt Velero
#: plugin enabled, which pulls the VM's unlabelled disk PVCs into it; its persistent-state
#: PVC persistent-state-for-vm1-abcde is labelled persistent-state-for=vm1 (KubeVirt >= 1.4)
PLUGIN = "RR-BKP-004/pass-kubevirt-plugin-adds-unlabelled-pvcs.yaml"


def _state(docs: Docs, name: str, labels: dict[str, str]) -> None:
    """Rename the persistent-state PVC (and its PV's claimRef) and set its labels."""
    for pvc in _of(docs, "PersistentVolumeClaim"):
        if pvc["metadata"]["name"].startswith("persistent-state-for-"):
            pvc["metadata"]["name"], pvc["metadata"]["labels"] = name, dict(labels)
    for pv in _of(docs, "PersistentVolume"):
        if pv["spec"]["claimRef"]["name"].startswith("persistent-state-for-"):
            pv["spec"]["claimRef"]["name"] = name


@pytest.mark.parametrize(
    "labels",
    [{}, {"kubevirt.io/migrationName": "vm1-migration-x7k2p"}],
)
def test_the_plugin_does_not_pull_an_unlabelled_suffixed_state_pvc(
    tmp_path: Path, labels: dict[str, str]
) -> None:
    """The kubevirt Velero plugin adds to a Backup of a VM the PVCs labelled
    persistent-state-for=<vm> and, only when none is, the PVC named exactly
    persistent-state-for-<vm> (kubevirt-velero-plugin pkg/util/kvgraph/util.go
    addBackendPVC). A persistent-state-for-vm1-abcde without that label (a migration
    target's, labelled kubevirt.io/migrationName, or one whose label was removed) is never added,
    so a label-selector Backup holds no EFI/TPM state: it counted as pulled (PASS; the VM READY but for other gaps).
    Nor does KubeVirt start the VM with it (pkg/storage/backend-storage/backend-storage.go
    ``PVCForVMI``): it is no state PVC of the VM at all, and RR-FW-002 names it (lo32)."""
    docs = _docs(PLUGIN)
    _state(docs, "persistent-state-for-vm1-abcde", labels)
    report = _complete(tmp_path, PLUGIN, docs)
    finding = _finding(report, "RR-FW-002")
    assert (finding["status"], finding["severity"]) == ("FAIL", "medium"), finding["message"]
    assert "persistent-state-for-vm1-abcde" in finding["message"]
    vm = next(v for v in report["vms"] if v["name"] == "vm1")
    assert vm["readiness"] != "READY"


@pytest.mark.parametrize(
    ("name", "labels"),
    [
        ("persistent-state-for-vm1-abcde", {"persistent-state-for": "vm1"}),
        ("vm1-backend-storage", {"persistent-state-for": "vm1"}),
        ("persistent-state-for-vm1", {}),
    ],
)
def test_the_plugin_pulls_a_labelled_or_legacy_named_state_pvc(
    tmp_path: Path, name: str, labels: dict[str, str]
) -> None:
    """Out of the rule: a PVC labelled for the VM (whatever its name), or, with none
    labelled, the one of the legacy exact name, is added by the plugin: PASS."""
    docs = _docs(PLUGIN)
    _state(docs, name, labels)
    report = _complete(tmp_path, PLUGIN, docs)
    finding = _finding(report, "RR-BKP-004")
    assert finding["status"] == "PASS", finding["message"]


#: app/vm1 whose pod-network NIC is bound by the network binding plugin passt
#: (``binding: {name: passt}``); its KubeVirt CR is left out (:func:`_pod_plugin`)
POD_PLUGIN = "RR-NET-002/na-binding-plugin-on-pod-network.yaml"


def _pod_plugin() -> Docs:
    """The ``POD_PLUGIN`` fixture without its KubeVirt CR (the tests add their own)."""
    return [d for d in _docs(POD_PLUGIN) if d["kind"] != "KubeVirt"]


def _kubevirt(binding: dict[str, Any] | None) -> dict[str, Any]:
    """A KubeVirt CR registering ``binding`` (spec.configuration.network.binding)."""
    conf: dict[str, Any] = {"developerConfiguration": {"featureGates": []}}
    if binding is not None:
        conf["network"] = {"binding": binding}
    return {
        "apiVersion": "kubevirt.io/v1",
        "kind": "KubeVirt",
        "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
        "spec": {"configuration": conf},
        "status": {"observedKubeVirtVersion": "v1.6.0"},
    }


def _nad(namespace: str, name: str) -> dict[str, Any]:
    return {
        "apiVersion": "k8s.cni.cncf.io/v1",
        "kind": "NetworkAttachmentDefinition",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "creationTimestamp": "2026-01-01T00:00:00Z",
        },
        "spec": {"config": '{"cniVersion": "1.0.0", "name": "netbindingpasst", "plugins": []}'},
    }


PASST = {"sidecarImage": "quay.io/kubevirt/network-passt-binding:v1.6.0"}


@pytest.mark.parametrize(
    ("binding", "nads", "missing", "unregistered"),
    [
        # registered with a NAD (a bare name: the VM's namespace) that does not exist
        (
            {"passt": {**PASST, "networkAttachmentDefinition": "netbindingpasst"}},
            [],
            ["app/netbindingpasst"],
            [],
        ),
        # registered with a NAD in another namespace, which exists only in the VM's
        (
            {"passt": {**PASST, "networkAttachmentDefinition": "default/netbindingpasst"}},
            [("app", "netbindingpasst")],
            ["default/netbindingpasst"],
            [],
        ),
        # not registered at all: KubeVirt cannot make the launcher pod
        ({"slirp": PASST}, [], [], ["passt"]),
    ],
)
def test_a_binding_plugin_needs_its_registration_and_its_nad(
    tmp_path: Path,
    binding: dict[str, Any],
    nads: list[tuple[str, str]],
    missing: list[str],
    unregistered: list[str],
) -> None:
    """KubeVirt adds to the launcher pod's Multus networks annotation the NAD each binding
    plugin a NIC names is registered with (kubevirt pkg/network/multus/annotation.go
    newBindingPluginAnnotationData: a bare name in the VM's namespace), and fails for a plugin
    the CR does not register ("unable to find the network binding plugin"): the VM cannot
    start again, nor can a restored copy. RR-NET-001 was N/A (no multus network)."""
    docs = _pod_plugin() + [_kubevirt(binding)] + [_nad(ns, n) for ns, n in nads]
    report = _complete(tmp_path, POD_PLUGIN, docs)
    finding = _finding(report, "RR-NET-001")
    assert (finding["status"], finding["severity"]) == ("FAIL", "high"), finding["message"]
    assert finding["evidence"]["missing_nads"] == missing
    assert finding["evidence"]["unregistered_plugins"] == unregistered
    vm = next(v for v in report["vms"] if v["name"] == "vm1")
    assert vm["readiness"] == "NOT_READY"


def test_a_binding_plugin_whose_nad_exists_passes(tmp_path: Path) -> None:
    """Out of the rule: the plugin is registered and its NAD exists (or it needs none)."""
    with_nad = {"passt": {**PASST, "networkAttachmentDefinition": "default/netbindingpasst"}}
    for i, (binding, nads) in enumerate(
        [(with_nad, [("default", "netbindingpasst")]), ({"passt": PASST}, [])]
    ):
        docs = _pod_plugin() + [_kubevirt(binding)] + [_nad(ns, n) for ns, n in nads]
        finding = _finding(_complete(tmp_path / str(i), POD_PLUGIN, docs), "RR-NET-001")
        assert finding["status"] == "PASS", finding["message"]


def test_a_binding_plugin_without_the_kubevirt_cr_is_unknown(tmp_path: Path) -> None:
    """Whether the plugin is registered, and with which NAD, cannot be seen: ERROR, not N/A."""
    finding = _finding(_complete(tmp_path, POD_PLUGIN, _pod_plugin()), "RR-NET-001")
    assert finding["status"] == "ERROR", finding["message"]
    assert "KubeVirt CR was not read" in finding["message"]


def test_a_null_match_labels_is_no_match_all_selector(tmp_path: Path) -> None:
    """``matchLabels`` and ``matchExpressions`` are omitempty (metav1.LabelSelector): neither
    the API server nor Velero's stored backup JSON writes null, so a Backup whose exported
    selector holds null is not the selector Velero read. Read as empty it selected everything,
    and the label-selected VM's NAD gap (RR-NET-002, AT_RISK) turned READY; it is named."""
    docs = _docs(PLUGIN)
    _of(docs, "Backup")[0]["spec"]["labelSelector"]["matchLabels"] = None
    report = _complete(tmp_path, PLUGIN, docs)
    vm = next(v for v in report["vms"] if v["name"] == "vm1")
    assert vm["readiness"] != "READY"
    assert any("matchLabels is null" in p["reason"] for p in report["collection_problems"])


@pytest.mark.parametrize(
    ("binding", "status", "readiness"),
    [
        # names no plugin (virt-controller fails such a VMI): named at its field since fz38,
        # so ERROR and UNKNOWN, which ranks with NOT_READY (never better)
        ({"name": ""}, "ERROR", "UNKNOWN"),
        ({"name": 5}, "ERROR", "UNKNOWN"),  # names none: a named problem
        ({"nme": "passt"}, "ERROR", "UNKNOWN"),
    ],
)
def test_a_blank_or_malformed_binding_name_is_never_no_plugin(
    tmp_path: Path, binding: dict[str, Any], status: str, readiness: str
) -> None:
    """bench.mutations empty_string, seed 902: ``binding.name: ""`` was read as no binding
    plugin, and the unregistered-plugin fixture went from NOT_READY to READY."""
    fixture = "RR-NET-001/fail-binding-plugin-unregistered.yaml"
    docs = _docs(fixture)
    vm = next(d for d in docs if d["kind"] == "VirtualMachine")
    for iface in vm["spec"]["template"]["spec"]["domain"]["devices"]["interfaces"]:
        if "binding" in iface:
            iface["binding"] = binding
    report = _complete(tmp_path, fixture, docs)
    assert _finding(report, "RR-NET-001")["status"] == status
    assert next(v for v in report["vms"] if v["name"] == "vm1")["readiness"] == readiness


@pytest.mark.parametrize(("kind", "status"), [("42", "ERROR"), ("Service", "FAIL"), ("", "FAIL")])
def test_a_route_backend_of_another_kind_is_named_not_dropped(
    tmp_path: Path, kind: str, status: str
) -> None:
    """bench.mutations number_string, seed 904: a Route's ``spec.to.kind: "42"`` (refused by
    OpenShift, which defaults an empty kind to Service) was read as 'not a Service', the
    Route left out of RR-NET-003: UNKNOWN became READY."""
    fixture = "RR-NET-003/error-route-target-malformed.yaml"
    docs = _docs(fixture)
    route = next(d for d in docs if d["kind"] == "Route")
    route["spec"]["to"]["kind"] = kind
    report = _complete(tmp_path, fixture, docs)
    finding = _finding(report, "RR-NET-003")
    assert finding["status"] == status, finding["message"]
    if status == "ERROR":
        fields = {(p["kind"], p["field"]) for p in report["collection_problems"]}
        assert ("Route", "spec.to.kind") in fields, fields
