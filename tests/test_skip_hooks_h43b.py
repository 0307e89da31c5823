"""Round h43b: ``kubevirt.io/skip-backup-hooks`` read as KubeVirt reads it (RR-BKP-011).

KubeVirt's ``Generate`` reads the VMI's value when the key is set, else the KubeVirt CR's,
with ``skip, _ := strconv.ParseBool(value)``: a value ParseBool refuses (``yes``,
``" true"``, ``tRue``, ``""``) is false, the error discarded, and the virt-freezer hooks are
injected (https://github.com/kubevirt/kubevirt/blob/main/pkg/storage/pod/annotations/generator.go
``Generate``). virt-controller replaces the VMI's value with the VM's, removing it when the
VM has none (pkg/virt-controller/watch/vm/vm.go ``syncDynamicAnnotationsAndLabelsToVMI``).
The kubevirt-velero-plugin does not read the annotation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.test_evidence_gaps import _docs, _finding
from tests.test_vm_side_r41b import AGENT, _annotate, _audit, _readiness

KEY = "kubevirt.io/skip-backup-hooks"


def _kubevirt(value: str) -> dict[str, Any]:
    return {
        "apiVersion": "kubevirt.io/v1",
        "kind": "KubeVirt",
        "metadata": {"name": "kubevirt", "namespace": "kubevirt", "annotations": {KEY: value}},
        "spec": {},
        # the release that brought the annotation (RR-FW-002 reads the release)
        "status": {"observedKubeVirtVersion": "v1.9.0", "phase": "Deployed"},
    }


@pytest.mark.parametrize("value", ["yes", " true", "tRue", "", "true\u200b", "on"])
def test_a_value_parsebool_refuses_keeps_the_hooks_and_is_named(tmp_path: Path, value: str) -> None:
    """ParseBool's error is discarded: false, hooks injected, a certain outcome. Before h43b
    the PASS said nothing of the value."""
    docs = _annotate(_docs(AGENT), "VirtualMachine", value)
    report = _audit(tmp_path, _annotate(docs, "VirtualMachineInstance", value))
    f = _finding(report, "RR-BKP-011")
    assert (f["status"], f["basis"]) == ("PASS", "observed")
    quoted = ascii(value)
    assert f["evidence"]["skip_backup_hooks_unparsed"] == [
        f"VMI vm1 metadata.annotations[{KEY}]={quoted}",
        f"VM vm1 metadata.annotations[{KEY}]={quoted}",
    ]
    assert f"VMI vm1 metadata.annotations[{KEY}]={quoted}" in f["message"]
    assert "reads false and injects the virt-freezer hooks" in f["message"]
    assert _readiness(report) == "READY"


def test_a_refused_value_on_the_vmi_hides_the_cr_but_not_after_the_sync(tmp_path: Path) -> None:
    # the VMI's key, whatever its value, keeps Generate from reading the CR; the VM without
    # it has virt-controller remove it, and the CR's true then turns the hooks off
    docs = [*_annotate(_docs(AGENT), "VirtualMachineInstance", "yes"), _kubevirt("true")]
    f = _finding(_audit(tmp_path / "a", docs), "RR-BKP-011")
    assert (f["status"], f["severity"]) == ("FAIL", "medium")
    assert f["evidence"]["skip_backup_hooks"] == (
        f"KubeVirt kubevirt metadata.annotations[{KEY}]=true (virt-controller syncs the VM's "
        "value onto the VMI; VMI vm1 holds 'yes')"
    )
    # the VM holding the same refused value: the CR is never read, the hooks stay
    docs = [
        *_annotate(
            _annotate(_docs(AGENT), "VirtualMachineInstance", "yes"), "VirtualMachine", "yes"
        ),
        _kubevirt("true"),
    ]
    report = _audit(tmp_path / "b", docs)
    assert _finding(report, "RR-BKP-011")["status"] == "PASS"
    assert _readiness(report) == "READY"


def test_a_vm_value_not_yet_synced_never_passes(tmp_path: Path) -> None:
    # VM true, VMI false: the launcher pod follows the VMI until virt-controller syncs the
    # VM's value; before h43b the VMI's false passed (READY)
    docs = _annotate(_annotate(_docs(AGENT), "VirtualMachine", "1"), "VirtualMachineInstance", "0")
    report = _audit(tmp_path, docs)
    f = _finding(report, "RR-BKP-011")
    assert (f["status"], f["severity"]) == ("FAIL", "medium")
    assert f["evidence"]["skip_backup_hooks"] == (
        f"VM vm1 metadata.annotations[{KEY}]=1 (virt-controller syncs the VM's value onto the "
        "VMI; VMI vm1 holds '0')"
    )
    assert _readiness(report) == "AT_RISK"


def test_a_long_value_is_quoted_and_cut(tmp_path: Path) -> None:
    value = "skip them all please " * 5
    docs = _annotate(
        _annotate(_docs(AGENT), "VirtualMachine", value), "VirtualMachineInstance", value
    )
    f = _finding(_audit(tmp_path, docs), "RR-BKP-011")
    assert f["status"] == "PASS"
    shown = f["evidence"]["skip_backup_hooks_unparsed"][0]
    assert shown == f"VMI vm1 metadata.annotations[{KEY}]={ascii(value[:40])}..."
    assert value not in f["message"]


@pytest.mark.parametrize("value", ["false", "F", "0"])
def test_a_false_value_adds_no_note(tmp_path: Path, value: str) -> None:
    docs = _annotate(
        _annotate(_docs(AGENT), "VirtualMachine", value), "VirtualMachineInstance", value
    )
    f = _finding(_audit(tmp_path, docs), "RR-BKP-011")
    assert f["status"] == "PASS"
    assert "skip_backup_hooks_unparsed" not in f["evidence"]
