"""A pinned identity other than the one the guest runs with is no pinned identity (red team
helper-17): the VM spec changed while the VM ran, so the VMI still uses what it started with
and a restore (or the next restart) gives the guest the spec's firmware uuid or MAC.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.test_evidence_gaps import _complete, _docs, _finding, _of

FIXTURE = "RR-NIC-001/pass.yaml"


def _running_macs(docs: list[dict[str, Any]], **macs: Any) -> None:
    vmi = _of(docs, "VirtualMachineInstance")[0]
    vmi.setdefault("status", {})["interfaces"] = [
        {"name": name, "mac": mac, "interfaceName": f"eth{i}"}
        for i, (name, mac) in enumerate(macs.items())
    ]


def test_a_pinned_mac_other_than_the_running_one_fails(tmp_path: Path) -> None:
    docs = _docs(FIXTURE)
    # the same addresses in another spelling are the same MACs
    _running_macs(docs, default="02:00:00:00:00:01", vlan="02-00-00-00-00-02".upper())
    assert _finding(_complete(tmp_path / "same", FIXTURE, docs), "RR-NIC-001")["status"] == "PASS"
    _running_macs(docs, default="02:00:00:00:00:01", vlan="02:00:00:00:00:99")
    finding = _finding(_complete(tmp_path / "differs", FIXTURE, docs), "RR-NIC-001")
    assert finding["status"] == "FAIL"
    assert finding["evidence"]["mismatched"] == ["vlan"]
    assert finding["evidence"]["running_macs"] == {"vlan": "02:00:00:00:00:99"}
    assert "interface(s) vlan of VM app/vm1" in finding["remediation"]


def test_a_running_mac_that_is_no_string_is_named(tmp_path: Path) -> None:
    """Unreadable, it cannot be compared: the VMI's field is a collection problem."""
    docs = _docs(FIXTURE)
    _running_macs(docs, default="02:00:00:00:00:01", vlan=2)
    report = _complete(tmp_path, FIXTURE, docs)
    assert any(
        p["kind"] == "VirtualMachineInstance" and p["field"] == "status.interfaces[1].mac"
        for p in report["collection_problems"]
    )


def test_a_pinned_uuid_other_than_the_running_one_fails(tmp_path: Path) -> None:
    fixture = "RR-FW-001/pass.yaml"
    docs = _docs(fixture)
    vm = _of(docs, "VirtualMachine")[0]
    assert _finding(_complete(tmp_path / "same", fixture, docs), "RR-FW-001")["status"] == "PASS"
    vm["spec"]["template"]["spec"]["domain"]["firmware"]["uuid"] = (
        "6b1f0c2e-4d3a-4e8b-9f70-1a2b3c4d5e6f"
    )
    finding = _finding(_complete(tmp_path / "differs", fixture, docs), "RR-FW-001")
    assert finding["status"] == "FAIL"
    assert "its running VMI uses 3f6d2c1e-8b0a-4f7e-b3c5-6a1d9e2f4b10" in finding["message"]
    assert "3f6d2c1e-8b0a-4f7e-b3c5-6a1d9e2f4b10" in finding["remediation"]


def test_a_persistent_state_vm_kubevirt_refuses_to_start_is_not_ready(tmp_path: Path) -> None:
    """RR-PLT-006 FAIL (VMPersistentState off, KubeVirt before 1.5) names VMs that run only
    because they started earlier: a restored copy does not start. The VM's own RR-FW-002 says
    so (high), so the VM is NOT_READY, not READY beside a platform FAIL (red team
    helper-18). Its state-class FAIL alone does not: a restored state PVC brings its class."""
    fixture = "RR-PLT-006/fail-gate-off.yaml"
    docs = _docs(fixture)
    report = _complete(tmp_path / "gate", fixture, docs)
    finding = _finding(report, "RR-FW-002")
    assert (finding["status"], finding["severity"]) == ("FAIL", "high")
    assert "VMPersistentState is off" in finding["message"]
    assert next(v for v in report["vms"] if v["name"] == "vm1")["readiness"] == "NOT_READY"
    other = "RR-PLT-006/fail-state-class-missing.yaml"
    assert (
        "VMPersistentState"
        not in _finding(_complete(tmp_path / "class", other, _docs(other)), "RR-FW-002")["message"]
    )
