"""Round h43c: the Windows severity of the firmware checks' ERRORs (docs/readiness.md).

RR-FW-001, RR-FW-002 and RR-FW-003 FAIL high for a Windows guest (medium by default). Their
ERROR for unread input took the check's default, so an unreadable input gave a Windows VM a
medium ERROR where the FAIL it stands for is high: UNKNOWN of medium ERRORs alone, ranked
AT_RISK at worst, better than the NOT_READY the FAIL gives. Each check now declares its
Windows severity (``CheckSpec.windows_severity``) and reads its FAIL severity from that one
declaration; every ERROR of a Windows VM that names no severity takes it
(``engine._finding``), as an ERROR standing for a would-be result already did
(``engine._unsure_severity``, round m42).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from auditor.checks import CATALOG
from auditor.models import Severity
from bench.mutations import RANK, worst_rank
from tests.test_check_fixtures import FIXTURES, audit_fixture
from tests.test_malformed_m42 import _status, _vm

FIRMWARE = ("RR-FW-001", "RR-FW-002", "RR-FW-003")
#: each check's Windows FAIL fixture (RR-FW-003's clone made a Windows guest below)
WINDOWS_FAILS = {
    "RR-FW-001": "RR-FW-001/fail-windows-no-uuid.yaml",
    "RR-FW-002": "RR-FW-002/fail-windows-tpm-volatile.yaml",
    "RR-FW-003": "RR-FW-003/fail-clone-shares-uuid-serial.yaml",
    "RR-RST-002": "RR-RST-002/fail-in-place-new-uuid-windows.yaml",
}
RHEL = "vm.kubevirt.io/os: rhel9"
WINDOWS = "vm.kubevirt.io/os: windows2k22"


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "export.yaml"
    path.write_text(text)
    return path


def _windows(text: str) -> str:
    """``text`` with app/vm1 (the first VM) annotated as a Windows guest."""
    assert RHEL in text
    return text.replace(RHEL, WINDOWS, 1)


def _verdicts(doc: dict[str, Any]) -> dict[str, str]:
    return {f["check_id"]: f"{f['status']} {f['severity']}" for f in _vm(doc)["findings"]}


def _rank(doc: dict[str, Any]) -> int:
    return worst_rank(_vm(doc)["readiness"], _verdicts(doc))


@pytest.mark.parametrize("check_id", [*FIRMWARE, "RR-RST-002"])
def test_the_windows_fail_severity_is_the_declared_one(check_id: str, tmp_path: Path) -> None:
    """The FAIL a Windows guest gets is the check's declared ``windows_severity`` (one
    declaration the check body and the engine both read), and ``severity_for`` gives it for
    Windows only."""
    spec = CATALOG[check_id]
    assert spec.windows_severity is Severity.HIGH
    assert spec.severity_for("windows") is Severity.HIGH
    assert spec.severity_for("linux") is spec.severity_for("unknown") is Severity.MEDIUM
    text = (FIXTURES / WINDOWS_FAILS[check_id]).read_text()
    if check_id == "RR-FW-003":
        text = _windows(text)
    doc = audit_fixture(_write(tmp_path, text))
    assert _status(doc, check_id) == ("FAIL", spec.windows_severity.value)


def test_a_check_without_a_windows_severity_keeps_its_default() -> None:
    assert CATALOG["RR-NIC-001"].windows_severity is None
    assert CATALOG["RR-NIC-001"].severity_for("windows") is CATALOG["RR-NIC-001"].severity


#: the clone's labels, and a value the API server refuses (a label value holds no blank)
CLONE = "    app: vm1\n  name: vm1\n  namespace: app-drill\n"
REFUSED = "    app: vm1 copy\n  name: vm1\n  namespace: app-drill\n"


@pytest.mark.parametrize(
    ("guest", "severity", "rank"),
    [(WINDOWS, "high", "NOT_READY"), (RHEL, "medium", "AT_RISK")],
)
def test_a_clone_left_unread_hides_a_high_clash_on_windows(
    tmp_path: Path, guest: str, severity: str, rank: str
) -> None:
    """RR-FW-003 on a Windows guest whose clone (app-drill/vm1, same UUID and serial) the
    source refuses (a label value with a blank: the VM list is partial): no clash was found
    among the VMs read, and the check's ERROR was medium, the VM UNKNOWN of medium ERRORs
    alone, ranked AT_RISK at worst, where the clone read gives FAIL high (NOT_READY). The
    ERROR is now high for Windows; a Linux guest's stays medium, as its FAIL."""
    text = (FIXTURES / WINDOWS_FAILS["RR-FW-003"]).read_text().replace(RHEL, guest, 1)
    assert _status(audit_fixture(_write(tmp_path, text)), "RR-FW-003") == ("FAIL", severity)
    assert text.count(CLONE) == 1
    doc = audit_fixture(_write(tmp_path, text.replace(CLONE, REFUSED)))
    assert ("VirtualMachine", "app-drill", "vm1") in {
        (p["kind"], p["namespace"], p["name"]) for p in doc["collection_problems"]
    }
    assert _status(doc, "RR-FW-003") == ("ERROR", severity)
    assert _vm(doc)["readiness"] == "UNKNOWN"
    assert _rank(doc) == RANK[rank]


#: app/vm1's first secureBoot (the VM spec's; the VMI's comes later): a string where
#: KubeVirt's ``*bool`` is, named at the field
SECURE_BOOT = (
    "              secureBoot: true\n",
    "              secureBoot: 'yes'\n",
    "spec.template.spec.domain.firmware.bootloader.efi.secureBoot",
)
#: a TPM device of another type than KubeVirt's ``TPMDevice`` object
TPM = (
    "          interfaces:\n",
    "          tpm: 5\n          interfaces:\n",
    "spec.template.spec.domain.devices.tpm",
)


@pytest.mark.parametrize(
    ("check_id", "fixture", "edit"),
    [
        ("RR-FW-001", "RR-FW-001/pass.yaml", SECURE_BOOT),
        ("RR-FW-002", "RR-FW-002/pass.yaml", TPM),
        ("RR-FW-003", "RR-FW-003/pass.yaml", SECURE_BOOT),
    ],
)
@pytest.mark.parametrize(("guest", "severity"), [(WINDOWS, "high"), (RHEL, "medium")])
def test_a_malformed_field_of_a_windows_guest_is_a_high_error(
    tmp_path: Path,
    check_id: str,
    fixture: str,
    edit: tuple[str, str, str],
    guest: str,
    severity: str,
) -> None:
    """A field the check reads, malformed on a VM that passes it: the ERROR names the field
    and stands for what the check may find, a FAIL of the Windows severity for a Windows
    guest (it was the check's medium default), of the default for a Linux one."""
    text = (FIXTURES / fixture).read_text().replace(RHEL, guest, 1)
    assert _status(audit_fixture(_write(tmp_path, text)), check_id) == ("PASS", "medium")
    assert text.count(edit[0]) >= 1
    doc = audit_fixture(_write(tmp_path, text.replace(edit[0], edit[1], 1)))
    f = next(f for f in _vm(doc)["findings"] if f["check_id"] == check_id)
    # round h46: RR-FW-002 FAILs high for any guest (KubeVirt refuses its restored copy:
    # state gate off, BIOS on arm64), so its ERROR is high for a Linux guest too (was medium)
    want = "high" if check_id == "RR-FW-002" else severity
    assert (f["status"], f["severity"]) == ("ERROR", want)
    assert f["evidence"]["malformed_fields"] == [edit[2]]
    assert _vm(doc)["readiness"] == "UNKNOWN"
    assert _rank(doc) == RANK["NOT_READY"]  # other checks read the template too


@pytest.mark.parametrize(("guest", "severity"), [(WINDOWS, "high"), (RHEL, "high")])
def test_a_preference_not_found_leaves_a_windows_tpm_unknown_high(
    tmp_path: Path, guest: str, severity: str
) -> None:
    """RR-FW-002's own ERROR for a preference revision that was not found (its firmware and
    TPM preferences unknown) named no severity: medium, where the TPM it may leave volatile
    is a high FAIL on Windows. It now takes the check's default for the guest. Round h46:
    high for a Linux guest too (was medium): the unknown preference may give arm64 BIOS,
    which KubeVirt refuses, a high FAIL for any guest (``worst_severity``)."""
    fixture = "RR-FW-002/error-pinned-revision-missing.yaml"
    doc = audit_fixture(_write(tmp_path, (FIXTURES / fixture).read_text().replace(RHEL, guest, 1)))
    f = next(f for f in _vm(doc)["findings"] if f["check_id"] == "RR-FW-002")
    assert (f["status"], f["severity"]) == ("ERROR", severity)
    assert "which was not found" in f["message"]


@pytest.mark.parametrize(
    ("guest", "tpm", "severity"),
    [(WINDOWS, False, "medium"), (WINDOWS, True, "high"), (RHEL, True, "medium")],
)
def test_an_unread_state_pvc_is_as_high_as_its_fail(
    tmp_path: Path, guest: str, tpm: bool, severity: str
) -> None:
    """RR-FW-002 with the PVC list unread: whether the state PVC exists is unknown. The
    ERROR is as high as the FAIL it stands for: high for a Windows guest's TPM, medium for
    its EFI NVRAM alone (no higher than that FAIL), medium for a Linux guest's TPM."""
    text = (FIXTURES / "RR-FW-002/error-pvcs-unread.yaml").read_text().replace(RHEL, guest, 1)
    if tpm:
        text = text.replace(TPM[0], "          tpm:\n            persistent: true\n" + TPM[0], 1)
    doc = audit_fixture(_write(tmp_path, text))
    f = next(f for f in _vm(doc)["findings"] if f["check_id"] == "RR-FW-002")
    assert (f["status"], f["severity"]) == ("ERROR", severity)
    assert f["evidence"]["tpm"] is tpm
