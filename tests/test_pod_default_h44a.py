"""Round h44a: the interface KubeVirt adds to a VM listing none, and the discontinued bindings.

1. A VM that lists no interface and no network (``autoattachPodInterface`` not false) gets
   one interface on the pod network, bound as the KubeVirt CR's
   ``spec.configuration.network.defaultNetworkInterface`` says: ``bridge`` unless set, which
   needs ``permitBridgeInterfaceOnPodNetwork`` (default true); ``slirp`` is refused
   (https://github.com/kubevirt/kubevirt/blob/main/pkg/network/vmispec/defaults.go
   ``SetDefaultNetworkInterface``; pkg/virt-config/virt-config.go ``DefaultNetworkInterface``,
   ``GetDefaultNetworkInterface``; pkg/virt-config/configuration.go ``validateConfig``).
   Before h44a it was read as masquerade whatever the CR said.
2. ``slirp``, ``macvtap`` and ``passt`` (the core bindings discontinued in v1.3) are refused
   by KubeVirt's webhook at ``interfaces[<i>].<key>``
   (https://github.com/kubevirt/kubevirt/blob/main/pkg/network/admitter/discontinued.go
   ``validateDiscontinuedBindings``); before h44a each counted as one binding, unnamed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from auditor.inventory.vmspec import INFERRED_POD_DEFAULT, pod_default
from auditor.inventory.vmvalidate import device_issues
from tests.test_check_fixtures import FIXTURES, audit_fixture
from tests.test_malformed_b40 import _check, _named, _vm, _write

#: vm1 with a masquerade "default" and a bridge "vlan" NIC, neither MAC pinned; a VMI runs
_UNPINNED = (FIXTURES / "RR-NIC-001" / "fail-unpinned.yaml").read_text()
_VM_NICS = """          interfaces:
          - masquerade: {}
            model: virtio
            name: default
          - bridge: {}
            model: virtio
            name: vlan
"""
_VM_NETWORKS = """      networks:
      - name: default
        pod: {}
      - multus:
          networkName: vlan10
        name: vlan
"""
_NONE = ((_VM_NICS, ""), (_VM_NETWORKS, ""))
_DEVICES = "spec.template.spec.domain.devices.interfaces"


def _kubevirt(network: str) -> str:
    """A KubeVirt CR of a known release whose ``spec.configuration.network`` is ``network``
    (YAML lines indented six spaces; "" for no network section)."""
    return (
        "---\napiVersion: kubevirt.io/v1\nkind: KubeVirt\nmetadata:\n  name: kubevirt\n"
        "  namespace: kubevirt\nspec:\n  configuration:\n"
        + (f"    network:\n{network}" if network else "    developerConfiguration: {}\n")
        + "status:\n  observedKubeVirtVersion: v1.6.0\n"
    )


def _audit(tmp_path: Path, extra: str = "") -> dict[str, Any]:
    return audit_fixture(_write(tmp_path, _UNPINNED + extra, *_NONE))


def _default(doc: dict[str, Any]) -> dict[str, Any]:
    ev: dict[str, Any] = _check(doc, "RR-NIC-001")["evidence"]["default_interface"]
    return ev


def test_without_the_kubevirt_cr_the_default_is_bridge_inferred(tmp_path: Path) -> None:
    """Before h44a: read as masquerade, nothing said. The binding decides no verdict here
    (the added interface pins no MAC: RR-NIC-001 FAILs whatever it is, and RR-RST-002 and
    RR-NIC-002 read bindings only of pinned MACs), so the FAIL stands, the basis said."""
    doc = _audit(tmp_path)
    finding = _check(doc, "RR-NIC-001")
    assert (finding["status"], finding["severity"]) == ("FAIL", "medium")
    assert _default(doc) == {"name": "default", "binding": "bridge", "basis": "inferred"}
    assert "bound bridge, inferred: the KubeVirt CR was not read" in finding["message"]
    assert _check(doc, "RR-NIC-002")["status"] == "NOT_APPLICABLE"
    assert _vm(doc)["readiness"] == "AT_RISK"
    assert doc["collection_problems"] == []


@pytest.mark.parametrize(
    ("network", "binding"),
    [
        ("      defaultNetworkInterface: masquerade\n", "masquerade"),
        ("      defaultNetworkInterface: bridge\n", "bridge"),
        ('      defaultNetworkInterface: ""\n', "bridge"),  # omitempty: the default stays
        ("", "bridge"),  # no network section: KubeVirt's built-in default
        ("      permitBridgeInterfaceOnPodNetwork: true\n", "bridge"),
    ],
)
def test_the_kubevirt_cr_gives_the_binding(tmp_path: Path, network: str, binding: str) -> None:
    doc = _audit(tmp_path, _kubevirt(network))
    assert _default(doc) == {"name": "default", "binding": binding, "basis": "kubevirt-cr"}
    finding = _check(doc, "RR-NIC-001")
    assert (finding["status"], finding["severity"]) == ("FAIL", "medium")
    assert f"bound {binding}, from the KubeVirt CR" in finding["message"]
    assert _vm(doc)["readiness"] == "AT_RISK"
    assert _named(doc, "VirtualMachine") == []


@pytest.mark.parametrize(
    ("network", "words"),
    [
        (
            "      defaultNetworkInterface: slirp\n",
            "defaultNetworkInterface is 'slirp': KubeVirt refuses to start the VM",
        ),
        (
            "      permitBridgeInterfaceOnPodNetwork: false\n",
            "permitBridgeInterfaceOnPodNetwork is false: KubeVirt refuses to start the VM",
        ),
        (
            "      defaultNetworkInterface: passt\n",
            "defaultNetworkInterface is 'passt', not one of bridge, masquerade, slirp",
        ),
        (
            "      defaultNetworkInterface: 42\n",
            "defaultNetworkInterface is a int, not one of bridge, masquerade, slirp",
        ),
        (
            "      permitBridgeInterfaceOnPodNetwork: 'no'\n",
            "permitBridgeInterfaceOnPodNetwork is a str, not true or false",
        ),
    ],
)
def test_a_refused_or_unknown_default_is_named_never_a_pass(
    tmp_path: Path, network: str, words: str
) -> None:
    """KubeVirt refuses the VMI (or the binding cannot be told): the VM's interfaces are
    named with the CR field, and the checks reading the NICs give ERROR (UNKNOWN)."""
    doc = _audit(tmp_path, _kubevirt(network))
    assert _named(doc, "VirtualMachine") == [("app", "vm1", _DEVICES)]
    reason = next(p["reason"] for p in doc["collection_problems"] if p["kind"] == "VirtualMachine")
    assert "lists no interface and no network, so KubeVirt adds one on the pod network" in reason
    assert words in reason
    for check in ("RR-NIC-001", "RR-NIC-002", "RR-RST-002"):
        assert _check(doc, check)["status"] == "ERROR", check
    assert _DEVICES in _check(doc, "RR-NIC-001")["message"]
    assert _vm(doc)["readiness"] == "UNKNOWN"


def test_no_pod_interface_when_autoattach_is_off(tmp_path: Path) -> None:
    """``autoattachPodInterface: false``: KubeVirt adds nothing, whatever the CR says."""
    doc = audit_fixture(
        _write(
            tmp_path,
            _UNPINNED + _kubevirt("      defaultNetworkInterface: slirp\n"),
            (_VM_NICS, "          autoattachPodInterface: false\n"),
            (_VM_NETWORKS, ""),
        )
    )
    assert _check(doc, "RR-NIC-001")["status"] == "NOT_APPLICABLE"
    assert _named(doc, "VirtualMachine") == []


def test_crs_that_disagree_or_none_read_infer_the_builtin_default() -> None:
    bridge = {"spec": {"configuration": {"network": {"defaultNetworkInterface": "bridge"}}}}
    masq = {"spec": {"configuration": {"network": {"defaultNetworkInterface": "masquerade"}}}}
    assert pod_default(None) == INFERRED_POD_DEFAULT
    assert pod_default([]) == INFERRED_POD_DEFAULT
    assert pod_default([bridge, masq]) == INFERRED_POD_DEFAULT
    assert pod_default([masq, masq]).binding == "masquerade"
    broken = pod_default([{"spec": {"configuration": {"network": "bridge"}}}])
    assert (broken.binding, broken.basis) == (None, "kubevirt-cr")
    assert (
        broken.refusal
        == "KubeVirt spec.configuration.network is no mapping: the binding is unknown"
    )


# --- 2. the discontinued core bindings ------------------------------------------------

_CLONE = (FIXTURES / "RR-NIC-002" / "fail-clone-pod-network-mac.yaml").read_text()
_MASQ = "          - macAddress: 02:00:00:00:00:01\n            masquerade: {}\n"


@pytest.mark.parametrize(
    ("iface", "issues"),
    [
        ({"name": "n", "slirp": {}}, ["interfaces[n].slirp"]),
        ({"name": "n", "macvtap": {}}, ["interfaces[n].macvtap"]),
        ({"name": "n", "passt": {}}, ["interfaces[n].passt"]),
        ({"name": "n", "bridge": {}, "macvtap": {}}, ["interfaces[n].macvtap"]),
        ({"slirp": {}, "passt": {}}, ["interfaces[0].slirp", "interfaces[0].passt"]),
        ({"name": "n", "passtBinding": {}}, []),  # the v1.8 core passt binding counts
        ({"name": "n", "passt": None}, []),  # named at the key, as every stored null
        (
            {"name": "n", "bridge": {}, "masquerade": {}, "slirp": {}},
            ["interfaces[n].slirp", "interfaces[n]"],
        ),
    ],
)
def test_a_discontinued_binding_is_named_at_its_key(
    iface: dict[str, Any], issues: list[str]
) -> None:
    """Before h44a each counted as one binding and none was named."""
    found = device_issues({"interfaces": [iface]})
    assert [path for path, _ in found] == issues
    if "slirp" in iface:
        assert found[0][1] == (
            "is the core slirp binding, which KubeVirt refuses since v1.3: "
            '"Slirp interface support has been discontinued since v1.3"'
        )


@pytest.mark.parametrize("key", ["slirp", "macvtap", "passt"])
def test_a_vm_nic_on_a_discontinued_binding_gives_no_pass(tmp_path: Path, key: str) -> None:
    """masquerade on "default" replaced: before h44a RR-NIC-001 passed (its pinned MAC read
    as bound by ``key``), the VM AT_RISK on RR-NIC-002 alone; now the field is named."""
    field = f"{_DEVICES}[default].{key}"
    doc = audit_fixture(
        _write(
            tmp_path,
            _CLONE,
            (_MASQ, f"          - macAddress: 02:00:00:00:00:01\n            {key}: {{}}\n"),
        )
    )
    assert _named(doc, "VirtualMachine") == [("app", "vm1", field)]
    reason = doc["collection_problems"][0]["reason"]
    assert "which KubeVirt refuses since v1.3" in reason
    assert "discontinued since v1.3" in reason
    assert _check(doc, "RR-NIC-001")["status"] == "ERROR"
    assert field in _check(doc, "RR-NIC-001")["message"]
    assert _check(doc, "RR-RST-002")["status"] == "ERROR"
    assert _vm(doc)["readiness"] == "UNKNOWN"
    # the drill copy keeps its own bindings and its verdict
    assert _check(doc, "RR-NIC-002", "app-drill/vm1")["status"] == "FAIL"


def test_a_running_nic_on_a_discontinued_binding_is_named(tmp_path: Path) -> None:
    vmi = "      - macAddress: 02:00:00:00:00:01\n        masquerade: {}\n"
    doc = audit_fixture(
        _write(
            tmp_path, _CLONE, (vmi, "      - macAddress: 02:00:00:00:00:01\n        slirp: {}\n")
        )
    )
    assert _named(doc, "VirtualMachineInstance") == [
        ("app", "vm1", "spec.domain.devices.interfaces[default].slirp")
    ]
    assert _check(doc, "RR-DSK-003")["status"] == "ERROR"
    assert _vm(doc)["readiness"] != "READY"
