"""Round h43b: an interface that declares no binding at all.

KubeVirt's webhook requires exactly one binding method or binding plugin per interface
("logical <name> interface must have exactly one binding method or binding plugin",
https://github.com/kubevirt/kubevirt/blob/main/pkg/network/admitter/binding.go
``validateInterfaceBindingExists``, ``countInterfaceBindings``, since commit a90ada8; before
it virt-handler failed the VMI on every sync, "undefined binding method",
pkg/network/setup/netpod/discover.go). No default fills one in: the KubeVirt CR's
``spec.configuration.network.defaultNetworkInterface`` shapes only the pod interface added
to a VM that lists no interface and no network (pkg/network/vmispec/defaults.go
``SetDefaultNetworkInterface``). Round b40 named an interface with two bindings; before h43b
one with none was read as a NIC without binding and its identity judged, unnamed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from auditor.inventory.vmvalidate import device_issues
from tests.test_check_fixtures import FIXTURES, audit_fixture
from tests.test_malformed_b40 import _check, _named, _vm, _write

#: vm1 (masquerade "default", bridge "vlan") and its drill copy share a pod-network MAC
_CLONE = (FIXTURES / "RR-NIC-002" / "fail-clone-pod-network-mac.yaml").read_text()
_MASQ = "          - macAddress: 02:00:00:00:00:01\n            masquerade: {}\n"
_BRIDGE = "          - bridge: {}\n"
_DEVICES = "spec.template.spec.domain.devices.interfaces"
_KUBEVIRT_MASQUERADE = """---
apiVersion: kubevirt.io/v1
kind: KubeVirt
metadata:
  name: kubevirt
  namespace: kubevirt
spec:
  configuration:
    network:
      defaultNetworkInterface: masquerade
"""


def _nic_statuses(doc: dict[str, Any]) -> dict[str, str]:
    return {c: _check(doc, c)["status"] for c in ("RR-NIC-001", "RR-NIC-002", "RR-RST-002")}


def test_the_baseline_passes_and_fails_on_facts(tmp_path: Path) -> None:
    doc = audit_fixture(_write(tmp_path, _CLONE))
    assert _nic_statuses(doc) == {"RR-NIC-001": "PASS", "RR-NIC-002": "FAIL", "RR-RST-002": "FAIL"}
    assert _vm(doc)["readiness"] == "AT_RISK"
    assert doc["collection_problems"] == []


_NO_BINDING = "          - macAddress: 02:00:00:00:00:01\n"


def test_an_interface_without_a_binding_is_named_and_no_pass(tmp_path: Path) -> None:
    """masquerade removed from "default": before h43b RR-NIC-001 passed, unnamed (AT_RISK)."""
    field = f"{_DEVICES}[default]"
    doc = audit_fixture(_write(tmp_path, _CLONE, (_MASQ, _NO_BINDING)))
    assert _named(doc, "VirtualMachine") == [("app", "vm1", field)]
    reason = doc["collection_problems"][0]["reason"]
    assert "declares no binding (KubeVirt fills in none" in reason
    assert "exactly one binding method or binding plugin" in reason
    assert "admission webhook rejects such a VM" in reason
    # the NIC identity checks read the binding: ERROR, never PASS (RR-NIC-001 passed before)
    assert _nic_statuses(doc) == {
        "RR-NIC-001": "ERROR",
        "RR-NIC-002": "ERROR",
        "RR-RST-002": "ERROR",
    }
    assert field in _check(doc, "RR-NIC-001")["message"]
    assert _vm(doc)["readiness"] == "UNKNOWN"
    assert doc["run"]["complete"] is False
    # the drill copy keeps its own bindings and its verdict
    assert _check(doc, "RR-NIC-002", "app-drill/vm1")["status"] == "FAIL"


def test_the_cluster_default_interface_fills_in_no_binding(tmp_path: Path) -> None:
    """``defaultNetworkInterface: masquerade`` on the KubeVirt CR applies only to a VM
    listing no interface and no network (``SetDefaultNetworkInterface`` returns early):
    the interface stays without binding, named, never read as masquerade."""
    text = _CLONE + _KUBEVIRT_MASQUERADE
    doc = audit_fixture(_write(tmp_path, text, (_MASQ, _NO_BINDING)))
    assert _named(doc, "VirtualMachine") == [("app", "vm1", f"{_DEVICES}[default]")]
    assert _check(doc, "RR-NIC-001")["status"] == "ERROR"
    assert _vm(doc)["readiness"] == "UNKNOWN"


def test_a_running_interface_without_a_binding_is_named(tmp_path: Path) -> None:
    vmi = "      - macAddress: 02:00:00:00:00:01\n        masquerade: {}\n"
    doc = audit_fixture(_write(tmp_path, _CLONE, (vmi, "      - macAddress: 02:00:00:00:00:01\n")))
    assert _named(doc, "VirtualMachineInstance") == [
        ("app", "vm1", "spec.domain.devices.interfaces[default]")
    ]
    # the running devices are unknown (RR-DSK-003 compares them); the medium ERROR ranks
    # below the baseline's low FAIL (the readiness rule), never READY
    assert _check(doc, "RR-DSK-003")["status"] == "ERROR"
    assert _vm(doc)["readiness"] == "AT_RISK"


@pytest.mark.parametrize(
    ("iface", "issues"),
    [
        ({"name": "n", "masquerade": {}}, []),
        ({"name": "n", "binding": {"name": "passt"}}, []),
        ({"name": "n", "slirp": {}}, ["interfaces[n].slirp"]),  # discontinued in v1.3 (h44a)
        ({"name": "n"}, ["interfaces[n]"]),
        ({"name": "n", "masquerade": None}, []),  # named at the key, as every stored null
        ({"model": "virtio"}, ["interfaces[0]"]),
        ({"name": "n", "bridge": {}, "masquerade": {}}, ["interfaces[n]"]),
    ],
)
def test_exactly_one_binding_is_required(iface: dict[str, Any], issues: list[str]) -> None:
    found = device_issues({"interfaces": [iface]})
    assert [path for path, _ in found] == issues
    if iface == {"name": "n"}:
        assert found[0][1].startswith("declares no binding (KubeVirt fills in none")


def test_a_null_binding_stays_named_at_its_key(tmp_path: Path) -> None:
    """``bridge: null`` was named before h43b at its key (the API server never stores it);
    it is not named twice."""
    doc = audit_fixture(_write(tmp_path, _CLONE, (_BRIDGE, "          - bridge: null\n")))
    assert _named(doc, "VirtualMachine") == [("app", "vm1", f"{_DEVICES}[vlan].bridge")]
    assert _nic_statuses(doc)["RR-NIC-001"] == "ERROR"
    assert _vm(doc)["readiness"] == "UNKNOWN"
