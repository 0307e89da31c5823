"""A cross-VM check is held back only by the malformed fields it reads.

New-user trial (helper-47): one VM's cloud-init ``networkData`` that is no network config
turned RR-FW-003 (duplicate firmware UUID or serial) into ERROR on every other VM of the
example cluster, and billing-db from READY to UNKNOWN, though the check reads only each
VM's ``spec.template.spec.domain.firmware`` (and its name). A malformed firmware field of
another VM still holds it back: it might hide a clash.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import yaml

from auditor.config import AuditSettings
from auditor.envelope import report_document
from auditor.pipeline import audit_data
from auditor.sources.directory import DirectorySource
from tests.conftest import AUDIT_AT

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "small-cluster"


def _extra_vm(volume: dict[str, Any], firmware: Any = None) -> dict[str, Any]:
    domain: dict[str, Any] = {"devices": {"disks": [{"name": "ci", "disk": {"bus": "virtio"}}]}}
    if firmware is not None:
        domain["firmware"] = firmware
    return {
        "apiVersion": "kubevirt.io/v1",
        "kind": "VirtualMachine",
        "metadata": {
            "name": "sec-vm",
            "namespace": "web",
            "uid": "11111111-2222-3333-4444-555555555555",
            "creationTimestamp": "2026-11-01T00:00:00Z",
        },
        "spec": {
            "runStrategy": "Halted",
            "template": {"spec": {"domain": domain, "volumes": [{"name": "ci", **volume}]}},
        },
    }


def _audit(tmp_path: Path, vm: dict[str, Any] | None) -> dict[str, Any]:
    export = tmp_path / "export"
    shutil.copytree(EXAMPLE, export)
    if vm is not None:
        (export / "extra-vm.yaml").write_text(yaml.safe_dump(vm))
    report = audit_data(DirectorySource(export).collect(), AuditSettings(), at=AUDIT_AT)
    return report_document(report)


def _vm(doc: dict[str, Any], ref: str) -> dict[str, Any]:
    return next(v for v in doc["vms"] if f"{v['namespace']}/{v['name']}" == ref)


def _status(vm: dict[str, Any], check: str) -> str:
    return str(next(f["status"] for f in vm["findings"] if f["check_id"] == check))


OPAQUE_NETWORK_DATA = {"cloudInitConfigDrive": {"networkData": "opaque text: [unclosed"}}


def test_another_vm_s_malformed_cloud_init_does_not_hold_back_the_firmware_check(
    tmp_path: Path,
) -> None:
    before = _audit(tmp_path / "a", None)
    after = _audit(tmp_path / "b", _extra_vm(OPAQUE_NETWORK_DATA))
    # the defect is still named, on its own VM
    assert any(
        p["name"] == "sec-vm" and p["field"].endswith("cloudInitConfigDrive.networkData")
        for p in after["collection_problems"]
    )
    assert _status(_vm(before, "billing/billing-db"), "RR-FW-003") == "PASS"
    assert _status(_vm(after, "billing/billing-db"), "RR-FW-003") == "PASS"
    assert (
        _vm(after, "billing/billing-db")["readiness"]
        == _vm(before, "billing/billing-db")["readiness"]
    )
    assert _vm(before, "billing/billing-db")["readiness"] == "READY"


def test_another_vm_s_malformed_firmware_still_holds_back_the_firmware_check(
    tmp_path: Path,
) -> None:
    after = _audit(tmp_path, _extra_vm({"containerDisk": {"image": "x"}}, firmware="uuid-1"))
    db = _vm(after, "billing/billing-db")
    finding = next(f for f in db["findings"] if f["check_id"] == "RR-FW-003")
    assert finding["status"] == "ERROR"
    assert "web/sec-vm spec.template.spec.domain.firmware" in finding["message"]
    assert db["readiness"] != "READY"
