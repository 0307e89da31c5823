"""Round r41b: the VM side of a restore.

1. ``kubevirt.io/skip-backup-hooks`` true on the VM (synced onto its VMI), the VMI or the
   KubeVirt CR keeps KubeVirt from injecting the virt-freezer pre/post backup hooks into the
   virt-launcher pod (kubevirt pkg/storage/pod/annotations/generator.go ``Generate``,
   https://github.com/kubevirt/kubevirt/blob/main/pkg/storage/pod/annotations/generator.go).
   RR-BKP-011 passed on the connected guest agent alone ("backups can freeze its
   filesystems"): with ``require_application_consistent`` a VM whose backups are
   crash-consistent read READY.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tests.test_check_fixtures import audit_fixture
from tests.test_evidence_gaps import FIXTURES, _docs, _finding

Docs = list[dict[str, Any]]

AGENT = "RR-BKP-011/pass-agent-connected.yaml"
REQUIRED = '# settings: {"thresholds": {"require_application_consistent": true}}'


def _audit(tmp_path: Path, docs: Docs) -> dict[str, Any]:
    """Audit ``docs`` with the fixture's header and application consistency required."""
    head = [ln for ln in (FIXTURES / AGENT).read_text().splitlines() if ln.startswith("#")]
    head = [*head, REQUIRED]
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "c.yaml"
    path.write_text("\n".join(head) + "\n" + yaml.safe_dump_all(docs))
    return audit_fixture(path)


def _annotate(docs: Docs, kind: str, value: str) -> Docs:
    for d in docs:
        if d["kind"] == kind and d["metadata"]["name"] == "vm1":
            d["metadata"].setdefault("annotations", {})["kubevirt.io/skip-backup-hooks"] = value
    return docs


def _readiness(report: dict[str, Any]) -> str:
    return str(next(v for v in report["vms"] if v["name"] == "vm1")["readiness"])


def test_a_connected_agent_with_hooks_keeps_the_pass(tmp_path: Path) -> None:
    report = _audit(tmp_path, _docs(AGENT))
    assert _finding(report, "RR-BKP-011")["status"] == "PASS"
    assert _readiness(report) == "READY"


def test_skip_backup_hooks_on_the_vm_is_no_freeze(tmp_path: Path) -> None:
    report = _audit(tmp_path, _annotate(_docs(AGENT), "VirtualMachine", "true"))
    f = _finding(report, "RR-BKP-011")
    assert (f["status"], f["severity"]) == ("FAIL", "medium")
    assert "VM vm1 metadata.annotations[kubevirt.io/skip-backup-hooks]=true" in f["message"]
    assert "no virt-freezer pre/post backup hook" in f["message"]
    assert f["evidence"]["skip_backup_hooks"].startswith("VM vm1 ")
    assert _readiness(report) == "AT_RISK"


def test_the_vmi_annotation_decides_over_the_vm(tmp_path: Path) -> None:
    # Go's strconv.ParseBool reads "True" as true; the VMI's value is the one Generate reads
    docs = _annotate(
        _annotate(_docs(AGENT), "VirtualMachine", "false"), "VirtualMachineInstance", "True"
    )
    f = _finding(_audit(tmp_path / "a", docs), "RR-BKP-011")
    assert f["status"] == "FAIL"
    assert "VMI vm1 metadata.annotations[kubevirt.io/skip-backup-hooks]=True" in f["message"]
    # h43b: virt-controller replaces the VMI's value with the VM's
    # (syncDynamicAnnotationsAndLabelsToVMI), so the VM's true turns the hooks off at its
    # next sync: the VMI's false no longer passes (tests/test_skip_hooks_h43b.py)
    docs = _annotate(
        _annotate(_docs(AGENT), "VirtualMachine", "true"), "VirtualMachineInstance", "false"
    )
    f = _finding(_audit(tmp_path / "b", docs), "RR-BKP-011")
    assert f["status"] == "FAIL"
    assert "VM vm1 metadata.annotations[kubevirt.io/skip-backup-hooks]=true" in f["message"]


def test_a_backup_with_hooks_of_its_own_may_freeze(tmp_path: Path) -> None:
    # Velero runs a Backup's spec.hooks on pods without hook annotations; the export
    # withholds their commands, so they may hold virt-freezer: no FAIL on the annotation
    docs = _annotate(_docs(AGENT), "VirtualMachine", "true")
    for d in docs:
        if d["kind"] == "Backup":
            d["spec"]["hooks"] = {
                "resources": [{"name": "freeze", "pre": [{"exec": {"command": ["fsfreeze"]}}]}]
            }
    assert _finding(_audit(tmp_path, docs), "RR-BKP-011")["status"] == "PASS"


def _audit_unread(tmp_path: Path, docs: Docs, kinds: str) -> dict[str, Any]:
    """:func:`_audit` with ``kinds`` (comma-separated) not read (the fixture header's
    ``# unavailable:``)."""
    head = [ln for ln in (FIXTURES / AGENT).read_text().splitlines() if ln.startswith("#")]
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "c.yaml"
    lines = [*head, REQUIRED, f"# unavailable: {kinds}"]
    path.write_text("\n".join(lines) + "\n" + yaml.safe_dump_all(docs))
    return audit_fixture(path)


def test_an_unread_kubevirt_cr_makes_the_pass_inferred(tmp_path: Path) -> None:
    # the CR's annotation turns the hooks off for every VM: unread, the freeze is KubeVirt's
    # default, inferred and named, not observed
    report = _audit_unread(tmp_path / "a", _docs(AGENT), "KubeVirt")
    f = _finding(report, "RR-BKP-011")
    assert (f["status"], f["basis"]) == ("PASS", "inferred")
    assert (
        "the KubeVirt CR, whose metadata.annotations[kubevirt.io/skip-backup-hooks]"
        in (f["message"])
    )
    assert f["evidence"]["kubevirt_read"] is False
    vm = next(v for v in report["vms"] if v["name"] == "vm1")
    assert "RR-BKP-011" in vm["inferred"]
    # the VM's own annotation, synced onto its VMI, decides without the CR: observed again
    # (h43b: with the VMI's key missing, Generate reads the CR until the next sync)
    docs = _annotate(
        _annotate(_docs(AGENT), "VirtualMachine", "false"), "VirtualMachineInstance", "false"
    )
    f = _finding(_audit_unread(tmp_path / "b", docs, "KubeVirt"), "RR-BKP-011")
    assert (f["status"], f["basis"]) == ("PASS", "observed")
    # read in full, the CR's silence is observed
    assert _finding(_audit(tmp_path / "c", _docs(AGENT)), "RR-BKP-011")["basis"] == "observed"
