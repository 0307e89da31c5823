"""Malformed-input round h48b: a key of a VirtualMachine's (or VMI's) firmware or TPM block
that is no field of its KubeVirt type is named, and the verdict is no better than before.

KubeVirt's ``Firmware`` (uuid, bootloader, serial, kernelBoot, acpi), ``Bootloader`` (bios,
efi), ``EFI`` (secureBoot, persistent), ``BIOS`` (useSerial) and ``TPMDevice`` (enabled,
persistent) are structural schemas
(https://github.com/kubevirt/kubevirt/blob/main/staging/src/kubevirt.io/api/core/v1/schema.go),
so the API server prunes any other key: a stored block holds none, and a copy that does was
edited. Before the round a key in another case was named (``Persistent``, round fz32) but a
key that is no field at all (``persistant``, ``uid``, ``x``) was read as absent with nothing
named: an EFI's NVRAM read as volatile, a pinned UUID as unpinned (round h47c's "left").
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from auditor.inventory.fieldcase import CLOSED, miscased_keys
from tests.test_evidence_gaps import _complete, _docs, _finding

Docs = list[dict[str, Any]]
RANK = {"PASS": 0, "NOT_APPLICABLE": 0, "FAIL": 1, "ERROR": 1}
SEVERITY = {"info": 0, "low": 1, "medium": 2, "high": 3, "critical": 4}
VM_DOMAIN = "spec.template.spec.domain"


def _vm(docs: Docs) -> dict[str, Any]:
    return next(d for d in docs if d["kind"] == "VirtualMachine")


def _vmi(docs: Docs) -> dict[str, Any]:
    return next(d for d in docs if d["kind"] == "VirtualMachineInstance")


def _run(
    tmp_path: Path, fixture: str, check: str, change: Callable[[Docs], None] | None = None
) -> tuple[dict[str, Any], list[dict[str, Any]], str]:
    docs = _docs(fixture)
    if change is not None:
        change(docs)
    report = _complete(tmp_path, fixture, docs)
    vm = next(v for v in report["vms"] if v["name"] == "vm1")
    return _finding(report, check), report["collection_problems"], vm["readiness"]


def _bad(finding: dict[str, Any]) -> tuple[int, int]:
    return RANK[finding["status"]], SEVERITY[finding["severity"]]


def _fields(problems: list[dict[str, Any]]) -> set[str]:
    return {p["field"] for p in problems if p["name"] == "vm1"}


def _malformed(finding: dict[str, Any]) -> set[tuple[str, str]]:
    return {(m["kind"], m["field"]) for m in finding["evidence"].get("malformed_objects", [])}


def _rename(block: Callable[[Docs], dict[str, Any]], old: str, new: str) -> Callable[[Docs], None]:
    def change(docs: Docs) -> None:
        b = block(docs)
        b[new] = b.pop(old)

    return change


def _efi(docs: Docs) -> dict[str, Any]:
    return _vm(docs)["spec"]["template"]["spec"]["domain"]["firmware"]["bootloader"]["efi"]


def _firmware(docs: Docs) -> dict[str, Any]:
    return _vm(docs)["spec"]["template"]["spec"]["domain"]["firmware"]


def _tpm(docs: Docs) -> dict[str, Any]:
    return _vm(docs)["spec"]["template"]["spec"]["domain"]["devices"]["tpm"]


@pytest.mark.parametrize("key", ["persistant", "persist", "x"])
def test_an_efi_persistent_under_no_field_name_is_named_and_no_better(
    tmp_path: Path, key: str
) -> None:
    fixture = "RR-FW-002/pass.yaml"
    before, problems0, _ = _run(tmp_path / "a", fixture, "RR-FW-002")
    assert (before["status"], before["severity"]) == ("PASS", "medium")
    after, problems, _ = _run(
        tmp_path / "b", fixture, "RR-FW-002", _rename(_efi, "persistent", key)
    )
    assert _bad(after) >= _bad(before)
    assert after["status"] in ("FAIL", "ERROR")
    field = f"{VM_DOMAIN}.firmware.bootloader.efi.{key}"
    assert field in _fields(problems) - _fields(problems0)
    why = next(p["reason"] for p in problems if p["field"] == field)
    assert "no field of KubeVirt's EFI" in why and "persistent, secureBoot" in why


@pytest.mark.parametrize("key", ["uid", "uuid_", "x"])
def test_a_firmware_uuid_under_no_field_name_is_named_and_no_better(
    tmp_path: Path, key: str
) -> None:
    fixture = "RR-FW-001/pass.yaml"
    before, problems0, _ = _run(tmp_path / "a", fixture, "RR-FW-001")
    assert before["status"] == "PASS"
    after, problems, _ = _run(tmp_path / "b", fixture, "RR-FW-001", _rename(_firmware, "uuid", key))
    assert after["status"] in ("FAIL", "ERROR")
    assert _bad(after) >= _bad(before)
    assert f"{VM_DOMAIN}.firmware.{key}" in _fields(problems) - _fields(problems0)


def test_an_unknown_key_in_a_volatile_tpm_is_named_and_the_fail_stays(tmp_path: Path) -> None:
    fixture = "RR-FW-002/fail-windows-tpm-volatile.yaml"
    before, problems0, verdict0 = _run(tmp_path / "a", fixture, "RR-FW-002")
    assert (before["status"], before["severity"], verdict0) == ("FAIL", "high", "NOT_READY")

    def change(docs: Docs) -> None:
        _tpm(docs)["x"] = "y"

    after, problems, verdict = _run(tmp_path / "b", fixture, "RR-FW-002", change)
    assert _bad(after) >= _bad(before)
    assert verdict in ("NOT_READY", "UNKNOWN")
    assert f"{VM_DOMAIN}.devices.tpm.x" in _fields(problems) - _fields(problems0)


def test_a_tpm_persistent_under_no_field_name_is_named(tmp_path: Path) -> None:
    fixture = "RR-FW-002/fail-windows-tpm-volatile.yaml"

    def persistent(docs: Docs) -> None:
        _tpm(docs)["persistent"] = True

    base, _, _ = _run(tmp_path / "a", fixture, "RR-FW-002", persistent)

    def misspelt(docs: Docs) -> None:
        _tpm(docs)["persistant"] = True

    after, problems, _ = _run(tmp_path / "b", fixture, "RR-FW-002", misspelt)
    assert _bad(after) >= _bad(base)
    assert after["status"] in ("FAIL", "ERROR")
    assert f"{VM_DOMAIN}.devices.tpm.persistant" in _fields(problems)


def test_an_unknown_key_in_a_vmi_firmware_is_named(tmp_path: Path) -> None:
    fixture = "RR-FW-001/pass.yaml"

    def change(docs: Docs) -> None:
        fw = _vmi(docs)["spec"]["domain"]["firmware"]
        fw["uid"] = fw.pop("uuid")

    after, problems, _ = _run(tmp_path, fixture, "RR-FW-001", change)
    named = {p["field"] for p in problems if p["kind"] == "VirtualMachineInstance"}
    assert "spec.domain.firmware.uid" in named


def test_every_field_of_the_blocks_is_silent() -> None:
    """A block holding every field of its type names nothing (no false alarm), in a VM and a
    VMI; a key in another case keeps its own reason (named at the field it stands for)."""
    full = {
        "uuid": "u",
        "serial": "s",
        "acpi": {},
        "kernelBoot": {"kernelArgs": "a", "container": {"image": "i"}},
        "bootloader": {
            "efi": {"secureBoot": True, "persistent": True},
            "bios": {"useSerial": True},
        },
    }
    devices = {"tpm": {"enabled": True, "persistent": True}}
    vm = {"spec": {"template": {"spec": {"domain": {"firmware": full, "devices": devices}}}}}
    vmi = {"spec": {"domain": {"firmware": full, "devices": devices}}}
    assert miscased_keys(vm) == []
    assert miscased_keys(vmi) == []
    assert {k for fields in CLOSED.values() for k in fields} >= {"uuid", "persistent", "useSerial"}
    devices["tpm"] = {"Persistent": True, "x": 1}
    found = dict(miscased_keys(vmi))
    assert set(found) == {"spec.domain.devices.tpm.persistent", "spec.domain.devices.tpm.x"}
    assert "another case" not in found["spec.domain.devices.tpm.x"]
    assert "TPMDevice" in found["spec.domain.devices.tpm.x"]


def _moved_to_bios(docs: Docs) -> None:
    """The VM spec moved to BIOS while its VMI runs the EFI it booted with: RR-DSK-003 FAIL."""
    _firmware(docs)["bootloader"] = {"bios": {}}


def _vmi_loader(value: Any, key: str = "efi") -> Callable[[Docs], None]:
    def change(docs: Docs) -> None:
        _moved_to_bios(docs)
        _vmi(docs)["spec"]["domain"]["firmware"]["bootloader"] = {key: value}

    return change


def test_a_spec_moved_from_the_running_efi_is_the_baseline(tmp_path: Path) -> None:
    before, _, _ = _run(tmp_path, "RR-DSK-003/pass.yaml", "RR-DSK-003", _moved_to_bios)
    assert (before["status"], before["severity"]) == ("FAIL", "medium")
    assert "efi" in before["message"] and "bios" in before["message"]


@pytest.mark.parametrize("value", [True, "yes", None, ["x"], 42, ""])
def test_a_running_efi_of_another_type_is_named_and_never_a_pass(
    tmp_path: Path, value: Any
) -> None:
    """Before: ``efi`` of another type (or null) was read as "not compared", RR-DSK-003 FAIL
    medium -> PASS with nothing named. Now ERROR naming the VMI's field, and a problem."""
    base, _, _ = _run(tmp_path / "a", "RR-DSK-003/pass.yaml", "RR-DSK-003", _moved_to_bios)
    after, problems, _ = _run(
        tmp_path / "b", "RR-DSK-003/pass.yaml", "RR-DSK-003", _vmi_loader(value)
    )
    assert after["status"] == "ERROR"
    assert _bad(after) >= _bad(base)
    field = "spec.domain.firmware.bootloader.efi"
    assert ("VirtualMachineInstance", field) in _malformed(after)
    assert any(p["kind"] == "VirtualMachineInstance" and p["field"] == field for p in problems)


@pytest.mark.parametrize("loader", ["efi", ["efi"], None, 1])
def test_a_running_bootloader_of_another_type_is_never_a_pass(tmp_path: Path, loader: Any) -> None:
    def change(docs: Docs) -> None:
        _moved_to_bios(docs)
        _vmi(docs)["spec"]["domain"]["firmware"]["bootloader"] = loader

    after, problems, _ = _run(tmp_path, "RR-DSK-003/pass.yaml", "RR-DSK-003", change)
    assert after["status"] == "ERROR"
    field = "spec.domain.firmware.bootloader"
    assert ("VirtualMachineInstance", field) in _malformed(after)
    assert any(p["kind"] == "VirtualMachineInstance" and p["field"] == field for p in problems)


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("firmware", "bootloader", "efi", "persistent"), "true"),
        (("firmware", "bootloader", "efi", "secureBoot"), 1),
        (("devices", "tpm", "persistent"), ["x"]),
        (("devices", "tpm"), "yes"),
    ],
)
def test_a_running_switch_of_another_type_is_named(
    tmp_path: Path, path: tuple[str, ...], value: Any
) -> None:
    """The VMI's EFI and TPM switches (``*bool``), named as the VM's are; RR-DSK-003 keeps
    no PASS on the damaged VMI."""

    def change(docs: Docs) -> None:
        at = _vmi(docs)["spec"]["domain"]
        for step in path[:-1]:
            at = at.setdefault(step, {})
        at[path[-1]] = value

    after, problems, _ = _run(tmp_path, "RR-DSK-003/pass.yaml", "RR-DSK-003", change)
    field = "spec.domain." + ".".join(path)
    assert any(p["kind"] == "VirtualMachineInstance" and p["field"] == field for p in problems)
    # the VMI is a damaged copy: RR-DSK-003 (PASS on the unmutated fixture) reads it no more
    assert after["status"] == "ERROR"
    assert ("VirtualMachineInstance", field) in _malformed(after)


def _backups(docs: Docs) -> list[dict[str, Any]]:
    return [d for d in docs if d["kind"] == "Backup"]


def _schedule(docs: Docs) -> dict[str, Any]:
    return next(d for d in docs if d["kind"] == "Schedule")


@pytest.mark.parametrize("value", ["Default", "DEFAULT", "default_loc"])
def test_a_backup_location_no_object_can_be_named_is_named_and_no_better(
    tmp_path: Path, value: str
) -> None:
    """A BackupStorageLocation is a custom resource, named by a DNS-1123 subdomain
    (apiextensions-apiserver ``customResourceValidator.Validate``): ``Default`` names no
    location. Read as naming none (worse) as before, and now named at the field."""
    fixture = "RR-BKP-001/pass.yaml"
    before, problems0, verdict0 = _run(tmp_path / "a", fixture, "RR-BKP-001")
    assert (before["status"], verdict0) == ("PASS", "READY")

    def change(docs: Docs) -> None:
        for b in _backups(docs):
            b["spec"]["storageLocation"] = value

    after, problems, _ = _run(tmp_path / "b", fixture, "RR-BKP-001", change)
    assert _bad(after) >= _bad(before)
    named = [p for p in problems if p["kind"] == "Backup" and p["field"] == "spec.storageLocation"]
    assert len(named) == len(_backups(_docs(fixture)))
    assert "no DNS-1123 subdomain" in named[0]["reason"]
    assert not [p for p in problems0 if p["field"] == "spec.storageLocation"]


def test_a_schedule_location_no_object_can_be_named_is_named(tmp_path: Path) -> None:
    def change(docs: Docs) -> None:
        _schedule(docs)["spec"]["template"]["storageLocation"] = "Default"

    _, problems, _ = _run(tmp_path, "RR-BKP-001/pass.yaml", "RR-BKP-001", change)
    assert any(
        p["kind"] == "Schedule" and p["field"] == "spec.template.storageLocation" for p in problems
    )


@pytest.mark.parametrize("value", ["default", "velero-1.aws"])
def test_a_location_name_and_the_default_are_silent(tmp_path: Path, value: str) -> None:
    """A DNS-1123 name names nothing here; nor does a Schedule's ``""`` (Velero's default
    location; a Backup's ``""`` is named by the reader already, as before)."""

    def change(docs: Docs) -> None:
        for b in _backups(docs):
            b["spec"]["storageLocation"] = value
        _schedule(docs)["spec"]["template"]["storageLocation"] = value

    _, problems, _ = _run(tmp_path, "RR-BKP-001/pass.yaml", "RR-BKP-001", change)
    assert not [p for p in problems if (p["field"] or "").endswith("storageLocation")]


def test_a_schedule_default_location_is_silent(tmp_path: Path) -> None:
    def change(docs: Docs) -> None:
        _schedule(docs)["spec"]["template"]["storageLocation"] = ""

    _, problems, _ = _run(tmp_path, "RR-BKP-001/pass.yaml", "RR-BKP-001", change)
    assert not [p for p in problems if (p["field"] or "").endswith("storageLocation")]


@pytest.mark.parametrize("value", ["true", ["x"], 1])
def test_a_vm_bios_of_another_type_is_named(tmp_path: Path, value: Any) -> None:
    """``Bootloader.BIOS`` is a ``*BIOS`` object; ``bios: "true"`` was read as BIOS with
    nothing named (probe seed 4821: RR-DSK-003 PASS -> FAIL high, unnamed). The VM is now
    named at the field and RR-DSK-003 is no better than the FAIL it read before."""
    fixture = "RR-DSK-003/pass.yaml"

    def bios(docs: Docs) -> None:
        _firmware(docs)["bootloader"] = {"bios": {}}

    base, _, _ = _run(tmp_path / "a", fixture, "RR-DSK-003", bios)

    def change(docs: Docs) -> None:
        _firmware(docs)["bootloader"] = {"bios": value}

    after, problems, _ = _run(tmp_path / "b", fixture, "RR-DSK-003", change)
    assert f"{VM_DOMAIN}.firmware.bootloader.bios" in _fields(problems)
    assert _bad(after) >= _bad(base)
    assert after["status"] in ("FAIL", "ERROR")
