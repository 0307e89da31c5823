"""Bug classes of round bc36: verdicts and cards where real restores fail or facts were unseen.

1. A recovery card stated firmware facts it never observed: a VM naming a preference that
   was not found carried ``bootloader: bios`` (from "default") and ``tpm: false``, and a VM
   whose record could not be built carried ``tpm: false``. A preference fills in the
   bootloader, secure boot, TPM and machine type wherever the VM's own spec is silent
   (kubevirt pkg/instancetype/preference/apply/firmware.go ``applyFirmwarePreferences``,
   .../apply/device.go ``PreferredTPM``), so unread, those are unknown: ``bootloader``
   ``unknown``, ``tpm``/``secure_boot``/``machine_type`` null, no ``resolved_from`` entry.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import auditor.inventory
from auditor.envelope.model import RecoveryCard
from auditor.report.vmview import card_view
from tests.test_check_fixtures import audit_fixture
from tests.test_evidence_gaps import _of
from tests.test_false_alarms_fp34 import FW_PASS, Docs, _load, _write


def _vm_entry(report: dict[str, Any], name: str = "vm1") -> dict[str, Any]:
    return next(v for v in report["vms"] if v["name"] == name)


def _name_preference(docs: Docs, *, efi: bool, tpm: bool) -> None:
    """vm1 names VirtualMachineClusterPreference ``windows.2k22``, which the export lacks;
    its own spec keeps EFI (without secureBoot) when ``efi``, a persistent TPM when
    ``tpm``, and names no machine type."""
    vm = _of(docs, "VirtualMachine")[0]
    vm["spec"]["preference"] = {"kind": "VirtualMachineClusterPreference", "name": "windows.2k22"}
    domain = vm["spec"]["template"]["spec"]["domain"]
    domain.pop("machine", None)
    if efi:
        domain["firmware"]["bootloader"] = {"efi": {"persistent": True}}
    else:
        domain["firmware"].pop("bootloader", None)
    if tpm:
        domain["devices"]["tpm"] = {"persistent": True}


def test_card_of_a_vm_whose_preference_is_missing_states_no_unseen_firmware(
    tmp_path: Path,
) -> None:
    header, docs = _load(FW_PASS)
    _name_preference(docs, efi=False, tpm=False)
    report = audit_fixture(_write(tmp_path, header, docs))
    fw = _vm_entry(report)["recovery_card"]["firmware"]
    assert fw["bootloader"] == "unknown"
    assert fw["tpm"] is None and fw["tpm_persistent"] is None
    assert fw["secure_boot"] is None and fw["machine_type"] is None
    assert fw["resolved_from"] == {}
    # the identity the VM pins itself is still stated
    assert fw["uuid"] == "3f6d2c1e-8b0a-4f7e-b3c5-6a1d9e2f4b10"
    shown = dict(
        card_view(RecoveryCard.model_validate(_vm_entry(report)["recovery_card"])).firmware
    )
    assert shown["TPM"] == "unknown" and shown["Bootloader"] == "unknown"


def test_what_the_vm_itself_sets_stays_stated_beside_a_missing_preference(
    tmp_path: Path,
) -> None:
    header, docs = _load(FW_PASS)
    _name_preference(docs, efi=True, tpm=True)
    fw = _vm_entry(audit_fixture(_write(tmp_path, header, docs)))["recovery_card"]["firmware"]
    assert fw["bootloader"] == "efi" and fw["efi_persistent"] is True
    assert fw["tpm"] is True and fw["tpm_persistent"] is True
    assert fw["resolved_from"] == {"bootloader": "vm", "tpm": "vm"}
    # preferredUseSecureBoot may still set it: unknown, not KubeVirt's default (true)
    assert fw["secure_boot"] is None


def test_card_without_a_preference_keeps_kubevirt_defaults(tmp_path: Path) -> None:
    """The defaults stay where nothing can override them: no TPM, BIOS from the default."""
    header, docs = _load(FW_PASS)
    domain = _of(docs, "VirtualMachine")[0]["spec"]["template"]["spec"]["domain"]
    domain["firmware"].pop("bootloader")
    fw = _vm_entry(audit_fixture(_write(tmp_path, header, docs)))["recovery_card"]["firmware"]
    assert fw["tpm"] is False and fw["bootloader"] == "bios"
    assert fw["resolved_from"]["bootloader"] == "default"


def test_card_of_a_vm_whose_record_could_not_be_built_says_tpm_unknown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    header, docs = _load(FW_PASS)
    real = auditor.inventory.read_vm_spec

    def broken(vm: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        if vm["metadata"]["name"] == "vm1":
            raise ValueError("injected")
        return real(vm, *args, **kwargs)

    monkeypatch.setattr(auditor.inventory, "read_vm_spec", broken)
    entry = _vm_entry(audit_fixture(_write(tmp_path, header, docs)))
    assert entry["readiness"] == "UNKNOWN"
    fw = entry["recovery_card"]["firmware"]
    assert fw["tpm"] is None and fw["bootloader"] == "unknown" and fw["uuid"] is None
