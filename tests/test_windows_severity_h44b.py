"""Round h44b: RR-DSK-003 declares its Windows severity (docs/readiness.md).

RR-DSK-003 FAILs high for a Windows guest whose disk (not a cdrom) changed bus, or whose boot
disk or firmware changed (medium by default), but declared no ``windows_severity``: an ERROR
the engine gives for a malformed field it reads (standing for a would-be PASS) took the
check's medium default on a Windows VM, UNKNOWN of medium ERRORs alone, ranked AT_RISK at
worst, where the field the guest may boot from is a high FAIL. The check now declares
``windows_severity`` from one module constant its body reads too
(``identity._BOOT_CHANGE_ON_WINDOWS``), as round h43c did for RR-FW-001/002/003.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from auditor.checks import CATALOG, duplicates, identity, restore
from auditor.models import Severity
from bench.mutations import RANK
from tests.test_check_fixtures import FIXTURES, audit_fixture
from tests.test_malformed_m42 import _vm
from tests.test_windows_severity_h43c import RHEL, WINDOWS, _rank, _write

#: every check whose body gives a Windows guest a FAIL above its default, with the
#: constant it reads (RR-BKP-004 raises a Windows TPM's state PVC to high, its default:
#: nothing to declare)
DECLARED = {
    "RR-FW-001": identity._UUID_ON_WINDOWS,
    "RR-FW-002": identity._TPM_ON_WINDOWS,
    "RR-FW-003": duplicates._SHARED_ON_WINDOWS,
    "RR-RST-002": restore._NEW_UUID_ON_WINDOWS,
    "RR-DSK-003": identity._BOOT_CHANGE_ON_WINDOWS,
}


def test_rr_dsk_003_declares_its_windows_severity() -> None:
    spec = CATALOG["RR-DSK-003"]
    assert spec.severity is Severity.MEDIUM
    assert spec.windows_severity is identity._BOOT_CHANGE_ON_WINDOWS is Severity.HIGH
    assert spec.severity_for("windows") is Severity.HIGH
    assert spec.severity_for("linux") is spec.severity_for("unknown") is Severity.MEDIUM


@pytest.mark.parametrize(("check_id", "constant"), sorted(DECLARED.items()))
def test_each_windows_fail_is_declared_on_its_check(check_id: str, constant: Severity) -> None:
    assert CATALOG[check_id].windows_severity is constant is Severity.HIGH
    assert CATALOG[check_id].severity is Severity.MEDIUM


def test_the_checks_declaring_a_windows_severity_are_those_listed() -> None:
    """No other check declares one; RR-BKP-004 raises a Windows TPM's state PVC to high, its
    default already (nothing to declare)."""
    assert {c for c, spec in CATALOG.items() if spec.windows_severity} == set(DECLARED)
    assert CATALOG["RR-BKP-004"].severity is Severity.HIGH


@pytest.mark.parametrize(
    ("fixture", "severity"),
    [
        ("fail-disk-bus-changed-while-running.yaml", "high"),
        ("fail-boot-disk-changed-while-running.yaml", "high"),
    ],
)
def test_the_windows_fail_is_the_declared_severity(
    tmp_path: Path, fixture: str, severity: str
) -> None:
    text = (FIXTURES / "RR-DSK-003" / fixture).read_text()
    for guest, want in ((WINDOWS, severity), (RHEL, "medium")):
        doc = audit_fixture(_write(tmp_path, text.replace(RHEL, guest, 1)))
        f = next(f for f in _vm(doc)["findings"] if f["check_id"] == "RR-DSK-003")
        assert (f["status"], f["severity"]) == ("FAIL", want)


#: fields RR-DSK-003 reads, written malformed on app/vm1's spec (pass.yaml)
EDITS = [
    (
        "          type: pc-q35-rhel9.4.0\n",
        "          type: 5\n",
        "spec.template.spec.domain.machine.type",
    ),
    (
        "            disk:\n              bus: virtio\n            name: root\n",
        "            disk:\n              bus: 5\n            name: root\n",
        "spec.template.spec.domain.devices.disks[root].disk.bus",
    ),
]


@pytest.mark.parametrize(("old", "new", "field"), EDITS)
@pytest.mark.parametrize(
    ("guest", "severity", "rank"),
    [(WINDOWS, "high", "NOT_READY"), (RHEL, "medium", None)],
)
def test_a_malformed_field_of_a_windows_guest_is_a_high_dsk_003_error(
    tmp_path: Path, old: str, new: str, field: str, guest: str, severity: str, rank: str | None
) -> None:
    """Before: ERROR medium on Windows too (the engine's would-be PASS took the check's
    default); now the check's Windows default, high, and a Linux guest's stays medium."""
    text = (FIXTURES / "RR-DSK-003" / "pass.yaml").read_text().replace(RHEL, guest, 1)
    base = audit_fixture(_write(tmp_path, text))
    assert _vm(base)["readiness"] == "READY"
    assert text.count(old) == 1
    doc = audit_fixture(_write(tmp_path, text.replace(old, new, 1)))
    f = next(f for f in _vm(doc)["findings"] if f["check_id"] == "RR-DSK-003")
    assert (f["status"], f["severity"]) == ("ERROR", severity)
    assert f["evidence"]["malformed_fields"] == [field]
    assert f["evidence"]["would_be"]["status"] == "PASS"
    assert _vm(doc)["readiness"] == "UNKNOWN"
    if rank is not None:
        assert _rank(doc) == RANK[rank]
