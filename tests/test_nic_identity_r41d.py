"""NIC identity a restore changes, left unjudged before round r41d (docs/readiness.md).

Each case edits one field of RR-NIC-001's pass fixture (READY: MACs pinned, models virtio,
a bridge NIC on the Multus NAD app/vlan10 held by every backup) and asserts the finding,
its message naming the interface and field, and the VM's verdict.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.test_check_fixtures import FIXTURES, audit_fixture

_BASE = (FIXTURES / "RR-NIC-001" / "pass.yaml").read_text()
_VM_MAC = "          - bridge: {}\n            macAddress: 02:00:00:00:00:02\n"
_VMI_MAC = "      - bridge: {}\n        macAddress: 02:00:00:00:00:02\n"
_VM_MODEL = "            macAddress: 02:00:00:00:00:02\n            model: virtio\n"
_VMI_MODEL = "        macAddress: 02:00:00:00:00:02\n        model: virtio\n"
_MASQ_VM = "          - macAddress: 02:00:00:00:00:01\n            masquerade"
_MASQ_VMI = "      - macAddress: 02:00:00:00:00:01\n        masquerade"
_NET_VM = "      - multus:\n          networkName: vlan10\n        name: vlan\n"
_BACKUP = "  includedNamespaces:\n  - app\n  snapshotVolumes: true\n"


def _audit(tmp_path: Path, *edits: tuple[str, str]) -> dict[str, Any]:
    text = _BASE
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new, 1)
    path = tmp_path / "export.yaml"
    path.write_text(text)
    return audit_fixture(path)


def _vm(doc: dict[str, Any]) -> dict[str, Any]:
    return next(v for v in doc["vms"] if (v["namespace"], v["name"]) == ("app", "vm1"))


def _check(doc: dict[str, Any], check: str) -> dict[str, Any]:
    return next(f for f in _vm(doc)["findings"] if f["check_id"] == check)


def _both_macs(mac: str) -> tuple[tuple[str, str], tuple[str, str]]:
    return (
        # quoted: YAML 1.1 reads 33:33:00:00:00:01 as a base-60 integer
        (_VM_MAC, _VM_MAC.replace("02:00:00:00:00:02", f"'{mac}'")),
        (_VMI_MAC, _VMI_MAC.replace("02:00:00:00:00:02", f"'{mac}'")),
    )


def test_the_baseline_is_ready(tmp_path: Path) -> None:
    doc = _audit(tmp_path)
    assert _vm(doc)["readiness"] == "READY"
    for check in ("RR-NIC-001", "RR-DSK-003", "RR-NET-001", "RR-NET-002"):
        assert _check(doc, check)["status"] == "PASS"


@pytest.mark.parametrize("mac", ["01:00:5e:00:00:02", "FF-FF-FF-FF-FF-FF", "33:33:00:00:00:01"])
def test_a_multicast_mac_fails_high(tmp_path: Path, mac: str) -> None:
    """KubeVirt admits any 6-byte MAC (pkg/network/link/mac.go); libvirt refuses a multicast
    one ("expected unicast mac address, found multicast"): the VM does not start."""
    doc = _audit(tmp_path, *_both_macs(mac))
    f = _check(doc, "RR-NIC-001")
    assert (f["status"], f["severity"]) == ("FAIL", "high")
    assert f"interface vlan macAddress {mac} is a multicast address" in f["message"]
    assert "libvirt refuses" in f["message"]
    assert list(f["evidence"]["unusable_macs"]) == ["vlan"]
    assert _vm(doc)["readiness"] == "NOT_READY"


def test_an_all_zero_mac_is_no_pinned_mac(tmp_path: Path) -> None:
    """QEMU reads 00:00:00:00:00:00 as unset (qemu_macaddr_default_if_unset)."""
    doc = _audit(tmp_path, *_both_macs("00:00:00:00:00:00"))
    f = _check(doc, "RR-NIC-001")
    assert (f["status"], f["severity"]) == ("FAIL", "medium")
    assert "interface vlan macAddress 00:00:00:00:00:00 is all-zero" in f["message"]
    assert _vm(doc)["readiness"] == "AT_RISK"


def test_the_masquerade_bridge_mac_fails_high(tmp_path: Path) -> None:
    """kubevirt pkg/network/admitter/binding.go validateMasqueradeBinding refuses it."""
    doc = _audit(
        tmp_path,
        (_MASQ_VM, _MASQ_VM.replace("00:01", "00:00")),
        (_MASQ_VMI, _MASQ_VMI.replace("00:01", "00:00")),
    )
    f = _check(doc, "RR-NIC-001")
    assert (f["status"], f["severity"]) == ("FAIL", "high")
    assert (
        "interface default macAddress 02:00:00:00:00:00 is reserved for the in-pod bridge"
        in (f["message"])
    )
    assert _vm(doc)["readiness"] == "NOT_READY"


def test_the_same_mac_in_another_spelling_passes(tmp_path: Path) -> None:
    """Upper case and '-' separators are the address the VMI reports in lower case."""
    doc = _audit(
        tmp_path,
        (_VM_MAC, _VM_MAC.replace("02:00:00:00:00:02", "02-00-00-00-00-0A")),
        (_VMI_MAC, _VMI_MAC.replace("02:00:00:00:00:02", "02:00:00:00:00:0a")),
        (
            "status:\n  phase: Running",
            "status:\n  interfaces:\n  - mac: 02:00:00:00:00:0a\n    name: vlan\n  phase: Running",
        ),
    )
    assert _check(doc, "RR-NIC-001")["status"] == "PASS"
    assert _vm(doc)["readiness"] == "READY"


def test_a_vmi_spec_mac_other_than_the_vm_spec_fails_without_status(tmp_path: Path) -> None:
    """Without status.interfaces the VMI spec holds the MAC the guest started with."""
    doc = _audit(tmp_path, (_VMI_MAC, _VMI_MAC.replace("00:02", "00:99")))
    f = _check(doc, "RR-NIC-001")
    assert (f["status"], f["severity"]) == ("FAIL", "medium")
    assert "vlan (spec 02:00:00:00:00:02, running 02:00:00:00:00:99)" in f["message"]
    assert f["evidence"]["running_macs"] == {"vlan": "02:00:00:00:00:99"}
    assert _vm(doc)["readiness"] == "AT_RISK"


@pytest.mark.parametrize(
    ("vm_model", "vmi_model", "text"),
    [
        (None, "e1000", "interface vlan model e1000 -> virtio"),
        ("e1000", None, "interface vlan model virtio -> e1000"),
        ("e1000", "e1000e", "interface vlan model e1000e -> e1000"),
    ],
)
def test_a_model_left_to_the_virtio_default_is_compared(
    tmp_path: Path, vm_model: str | None, vmi_model: str | None, text: str
) -> None:
    """An interface without a model runs virtio (kubevirt pkg/network/setup/netpod)."""
    vm = (
        _VM_MODEL.replace("virtio", vm_model)
        if vm_model
        else _VM_MODEL.split("            model")[0]
    )
    vmi = (
        _VMI_MODEL.replace("virtio", vmi_model)
        if vmi_model
        else _VMI_MODEL.split("        model")[0]
    )
    doc = _audit(tmp_path, (_VM_MODEL, vm), (_VMI_MODEL, vmi))
    f = _check(doc, "RR-DSK-003")
    assert (f["status"], f["severity"]) == ("FAIL", "medium")
    assert text in f["message"]
    assert _vm(doc)["readiness"] == "AT_RISK"


def test_no_model_on_either_side_passes(tmp_path: Path) -> None:
    doc = _audit(
        tmp_path,
        (_VM_MODEL, _VM_MODEL.split("            model")[0]),
        (_VMI_MODEL, _VMI_MODEL.split("        model")[0]),
    )
    assert _check(doc, "RR-DSK-003")["status"] == "PASS"
    assert _vm(doc)["readiness"] == "READY"


def test_a_pod_network_beside_a_multus_default_network_is_named(tmp_path: Path) -> None:
    """kubevirt pkg/network/admitter/netsource.go validateSinglePodNetwork refuses it."""
    doc = _audit(
        tmp_path, (_NET_VM, _NET_VM.replace("vlan10\n", "vlan10\n          default: true\n"))
    )
    named = [(p["kind"], p["namespace"], p["name"], p["field"]) for p in doc["collection_problems"]]
    assert named == [
        ("VirtualMachine", "app", "vm1", "spec.template.spec.networks[vlan].multus.default")
    ]
    for check in ("RR-NET-001", "RR-NIC-001"):
        assert _check(doc, check)["status"] == "ERROR"
    assert _vm(doc)["readiness"] == "UNKNOWN"


# -- probed, already handled (no change in r41d) -------------------------------------------


def test_a_nad_in_another_namespace_outside_a_namespace_backup_fails(tmp_path: Path) -> None:
    doc = _audit(
        tmp_path,
        (_NET_VM, _NET_VM.replace("vlan10", "netops/vlan10")),
        ("  name: vlan10\n  namespace: app\n", "  name: vlan10\n  namespace: netops\n"),
    )
    assert _check(doc, "RR-NET-001")["status"] == "PASS"
    f = _check(doc, "RR-NET-002")
    assert f["status"] == "FAIL"
    assert "netops/vlan10 (NIC vlan) are outside 2 of its 2 usable backup(s)" in f["message"]
    assert _vm(doc)["readiness"] == "AT_RISK"


def test_a_bare_network_name_resolves_in_the_vm_namespace_only(tmp_path: Path) -> None:
    doc = _audit(
        tmp_path, ("  name: vlan10\n  namespace: app\n", "  name: vlan10\n  namespace: default\n")
    )
    f = _check(doc, "RR-NET-001")
    assert f["status"] == "FAIL"
    assert "NetworkAttachmentDefinition(s) app/vlan10, which do not exist" in f["message"]
    assert _vm(doc)["readiness"] == "NOT_READY"


@pytest.mark.parametrize(
    "resource", ["network-attachment-definitions.k8s.cni.cncf.io", "net-attach-def"]
)
def test_a_backup_excluding_nads_fails(tmp_path: Path, resource: str) -> None:
    doc = _audit(tmp_path, (_BACKUP, _BACKUP + f"  excludedResources:\n  - {resource}\n"))
    f = _check(doc, "RR-NET-002")
    assert f["status"] == "FAIL"
    assert (
        "app/vlan10 (NIC vlan) are outside 1 of its 2 usable backup(s), e.g. daily-20261130"
        in (f["message"])
    )
