"""Red-team round rt29: restore-side identity faults, each held to the finding its evidence
allows, beside the healthy shape, which keeps its verdict.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.test_evidence_gaps import _complete, _docs, _finding

Docs = list[dict[str, Any]]

#: app/vm1 and a drill copy app-drill/vm1 restored beside it with the same MACs and UUID
CLONE = "RR-NIC-002/fail-clone-bridge-mac.yaml"


def _vm(report: dict[str, Any], ns: str, name: str = "vm1") -> dict[str, Any]:
    return next(v for v in report["vms"] if (v["namespace"], v["name"]) == (ns, name))


def _dotted(mac: str) -> str:
    """``02:00:00:00:00:02`` as Go's net.ParseMAC also reads it: ``0200.0000.0002``."""
    digits = mac.replace(":", "").replace("-", "")
    return ".".join(digits[i : i + 4] for i in (0, 4, 8))


def test_a_mac_written_in_dotted_notation_is_the_same_address(tmp_path: Path) -> None:
    """KubeVirt admits any MAC Go's ``net.ParseMAC`` reads that has 6 octets (kubevirt
    pkg/network/link/mac.go ValidateMacAddress, called by pkg/network/admitter/netiface.go):
    ``0200.0000.0002`` is ``02:00:00:00:00:02``. Read as malformed, the drill copy that
    pins the original's MACs in dotted form left RR-NIC-002 of both VMs ERROR (the
    duplicate on the bridged network never named) and the copy's own NIC checks unread."""
    docs = _docs(CLONE)
    drill = next(
        d
        for d in docs
        if d["kind"] == "VirtualMachine" and d["metadata"]["namespace"] == "app-drill"
    )
    for iface in drill["spec"]["template"]["spec"]["domain"]["devices"]["interfaces"]:
        iface["macAddress"] = _dotted(iface["macAddress"])
    report = _complete(tmp_path, CLONE, docs)
    original = _finding(report, "RR-NIC-002")
    assert (original["status"], original["severity"]) == ("FAIL", "medium"), original["message"]
    assert "mac 02:00:00:00:00:02 with app-drill/vm1" in original["message"]
    copy = next(f for f in _vm(report, "app-drill")["findings"] if f["check_id"] == "RR-NIC-002")
    assert copy["status"] == "FAIL", copy["message"]
    pinned = next(f for f in _vm(report, "app-drill")["findings"] if f["check_id"] == "RR-NIC-001")
    assert pinned["status"] == "PASS", pinned["message"]
    assert [n["mac"] for n in pinned["evidence"]["nics"]] == [
        _dotted("02:00:00:00:00:01"),
        _dotted("02:00:00:00:00:02"),
    ]
    assert not [p for p in report["collection_problems"] if "macAddress" in str(p)]


@pytest.mark.parametrize(
    "mac", ["0200.0000.00022", "02:00:00:00:00:02:03:04", "0200:0000:0002", "02.00.00.00.00.02"]
)
def test_a_mac_go_cannot_read_as_six_octets_stays_malformed(tmp_path: Path, mac: str) -> None:
    """Out of the rule: what ``net.ParseMAC`` refuses, or reads as longer than 6 octets
    (EUI-64, refused by ValidateMacAddress as too long), is still a malformed field."""
    docs = _docs(CLONE)
    drill = next(
        d
        for d in docs
        if d["kind"] == "VirtualMachine" and d["metadata"]["namespace"] == "app-drill"
    )
    drill["spec"]["template"]["spec"]["domain"]["devices"]["interfaces"][1]["macAddress"] = mac
    report = _complete(tmp_path, CLONE, docs)
    copy = next(f for f in _vm(report, "app-drill")["findings"] if f["check_id"] == "RR-NIC-001")
    assert copy["status"] == "ERROR", copy["message"]


STATIC = "RR-NET-002/fail-static-bridge-nad-outside-backups.yaml"


def test_cloud_init_matches_a_dotted_mac_to_its_nic(tmp_path: Path) -> None:
    """cloud-init networkData names NICs by MAC (``match.macaddress``) in colon form; the VM
    may pin the same address dotted. Unmatched, the NIC on the NAD outside the backups,
    which cloud-init gives DHCP, took the VM-wide 'static addresses' of the other NIC and
    RR-NET-002 was high; matched, it is the medium of a DHCP NIC."""
    docs = _docs(STATIC)
    net = (
        "version: 2\nethernets:\n"
        "  eth0:\n    match:\n      macaddress: '02:00:00:00:00:01'\n"
        "    addresses: [192.0.2.10/24]\n"
        "  eth1:\n    match:\n      macaddress: '02:00:00:00:00:02'\n    dhcp4: true\n"
    )
    for d in docs:
        if d["kind"] not in ("VirtualMachine", "VirtualMachineInstance"):
            continue
        spec = d["spec"]["template"]["spec"] if d["kind"] == "VirtualMachine" else d["spec"]
        for iface in spec["domain"]["devices"]["interfaces"]:
            iface["macAddress"] = _dotted(iface["macAddress"])
        for vol in spec["volumes"]:
            if "cloudInitNoCloud" in vol:
                vol["cloudInitNoCloud"]["networkData"] = net
    report = _complete(tmp_path, STATIC, docs)
    finding = _finding(report, "RR-NET-002")
    assert (finding["status"], finding["severity"]) == ("FAIL", "medium"), finding["message"]
    assert "static addresses" not in finding["message"]


MOVER = "RR-BKP-004/pass-data-mover-node-agent-enabled.yaml"


def _halted_on_wffc(docs: Docs, *, ignore: bool | None, strategy: str = "Halted") -> Docs:
    """The data-mover fixture with its class WaitForFirstConsumer and the VM stopped
    (``ignore``: the DPA's nodeAgent.restorePVC.ignoreDelayBinding; None: no DPA)."""
    out = []
    for d in docs:
        if d["kind"] == "StorageClass":
            d["volumeBindingMode"] = "WaitForFirstConsumer"
        if d["kind"] == "VirtualMachine":
            d["spec"]["runStrategy"] = strategy
        if d["kind"] == "VirtualMachineInstance" and strategy != "Always":
            continue
        if d["kind"] == "DataProtectionApplication":
            if ignore is None:
                continue
            agent = d["spec"]["configuration"]["nodeAgent"]
            agent["restorePVC"] = {"ignoreDelayBinding": ignore}
        out.append(d)
    return out


@pytest.mark.parametrize(("ignore", "status"), [(False, "FAIL"), (None, "ERROR")])
def test_a_data_mover_copy_on_wffc_storage_of_a_stopped_vm_does_not_restore(
    tmp_path: Path, ignore: bool | None, status: str
) -> None:
    """Velero's data-mover restore waits for a pod to consume a target PVC of a
    WaitForFirstConsumer class (velero pkg/exposer/generic_restore.go Expose ->
    pkg/util/kube/pvc_pv.go WaitPVCConsumed; docs data-movement-restore-pvc-configuration:
    "this also prevents Velero from restoring a volume without a pod mounted") unless the
    node-agent sets restorePVC.ignoreDelayBinding (OADP: the DPA's
    spec.configuration.nodeAgent.restorePVC). A VM restored Halted starts no virt-launcher,
    so its DataDownloads fail at the prepare timeout: the disks come back empty while
    RR-BKP-004 said PASS and the VM READY."""
    docs = _halted_on_wffc(_docs(MOVER), ignore=ignore)
    report = _complete(tmp_path, MOVER, docs)
    finding = _finding(report, "RR-BKP-004")
    assert (finding["status"], finding["severity"]) == (status, "high"), finding["message"]
    assert "WaitForFirstConsumer" in finding["message"]
    vm = next(v for v in report["vms"] if v["name"] == "vm1")
    assert vm["readiness"] == ("NOT_READY" if status == "FAIL" else "UNKNOWN")


@pytest.mark.parametrize(("ignore", "strategy"), [(True, "Halted"), (False, "Always")])
def test_a_data_mover_copy_on_wffc_storage_restores_with_a_consumer_or_ignored_binding(
    tmp_path: Path, ignore: bool, strategy: str
) -> None:
    """Out of the rule: ignoreDelayBinding set, or a VM restored running (its launcher pod
    consumes the PVC), restores the copy."""
    docs = _halted_on_wffc(_docs(MOVER), ignore=ignore, strategy=strategy)
    report = _complete(tmp_path, MOVER, docs)
    finding = _finding(report, "RR-BKP-004")
    assert finding["status"] == "PASS", finding["message"]


@pytest.mark.parametrize(("strategy", "status"), [("Halted", "PASS"), ("Manual", "FAIL")])
def test_a_vm_stopped_after_its_backups_began_is_restored_as_it_ran_then(
    tmp_path: Path, strategy: str, status: str
) -> None:
    """A VM Halted only after its Backups began was backed up with the runStrategy that ran
    it, so the restore starts it and its launcher consumes the PVC; a Manual VM is restored
    stopped however it ran (kubevirt: Manual starts only on request)."""
    docs = _halted_on_wffc(_docs(MOVER), ignore=False, strategy=strategy)
    vm = next(d for d in docs if d["kind"] == "VirtualMachine")
    vm.setdefault("status", {})["conditions"] = [
        {"type": "Ready", "status": "False", "lastTransitionTime": "2026-11-30T03:00:00Z"}
    ]
    report = _complete(tmp_path, MOVER, docs)
    finding = _finding(report, "RR-BKP-004")
    assert finding["status"] == status, finding["message"]


def test_an_unreadable_ignore_delay_binding_is_unknown_not_unset(tmp_path: Path) -> None:
    """``ignoreDelayBinding: "yes"`` is no boolean (oadp-operator api/v1alpha1
    NodeAgentConfigMapSettings.RestorePVCConfig): named as a malformed DPA field, and the
    copy's restore is unknown, neither restored nor lost."""
    docs = _halted_on_wffc(_docs(MOVER), ignore=False)
    dpa = next(d for d in docs if d["kind"] == "DataProtectionApplication")
    dpa["spec"]["configuration"]["nodeAgent"]["restorePVC"] = {"ignoreDelayBinding": "yes"}
    report = _complete(tmp_path, MOVER, docs)
    finding = _finding(report, "RR-BKP-004")
    assert finding["status"] == "ERROR", finding["message"]
    assert "cannot be read" in finding["message"]
    assert any("restorePVC.ignoreDelayBinding" in str(p) for p in report["collection_problems"]), (
        report["collection_problems"]
    )
