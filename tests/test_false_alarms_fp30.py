"""False-alarm round fp30: valid spellings of one identity read as malformed or as changed.

A firmware UUID written without dashes is one libvirt reads (virUUIDParse), a MAC written
with dashes or dotted groups is one Go's ``net.ParseMAC`` reads, a Multus ``networkName`` with
or without the VM's own namespace names one NetworkAttachmentDefinition: none is malformed and
none is a change of identity. Each case stands beside the shape that keeps its finding.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.test_check_fixtures import audit_fixture
from tests.test_evidence_gaps import FIXTURES, _finding

#: vm1 in namespace app pinning uuid 3f6d2c1e-8b0a-4f7e-b3c5-6a1d9e2f4b10, serial
#: SERIAL-0001, NICs default (02:00:00:00:00:01) and vlan (02:00:00:00:00:02 on NAD vlan10),
#: running; its VMI carries the same firmware.
FW_PASS = "RR-FW-001/pass.yaml"
#: The same VM with the bucket's contents of its two Backups (``# backup-contents`` header):
#: the newest holds the VM manifest with the live identity.
BUCKET_PASS = "RR-BKP-009/pass.yaml"
UUID = "3f6d2c1e-8b0a-4f7e-b3c5-6a1d9e2f4b10"


def _audit(tmp_path: Path, fixture: str, *edits: tuple[str, str]) -> dict[str, Any]:
    """Audit ``fixture`` with each ``(old, new)`` text edit made in its YAML body only (the
    bucket header keeps the backed-up manifest as it was)."""
    head, _, body = (FIXTURES / fixture).read_text().partition("\napiVersion:")
    body = "apiVersion:" + body
    for old, new in edits:
        assert old in body, old
        body = body.replace(old, new)
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "c.yaml"
    path.write_text(head + "\n" + body)
    return audit_fixture(path)


def _vm(report: dict[str, Any], name: str = "vm1") -> dict[str, Any]:
    return next(v for v in report["vms"] if v["name"] == name)


def _errors(report: dict[str, Any]) -> list[str]:
    return [
        f"{f['check_id']}: {f['message']}"
        for f in _vm(report)["findings"]
        if f["status"] == "ERROR"
    ]


# -- a firmware UUID without dashes ---------------------------------------------------------


def test_a_firmware_uuid_without_dashes_is_a_uuid(tmp_path: Path) -> None:
    """``firmware.uuid: 3F6D2C1E8B0A...`` (32 hex digits) was malformed: eight checks ERROR
    and the VM UNKNOWN. KubeVirt hands it to libvirt's SMBIOS sysinfo as is and libvirt
    reads it (dashes are optional between digit pairs)."""
    bare = UUID.replace("-", "").upper()
    report = _audit(tmp_path, FW_PASS, (f"uuid: {UUID}", f"uuid: {bare}"))
    assert _errors(report) == []
    fw = _finding(report, "RR-FW-001")
    assert fw["status"] == "PASS", fw["message"]
    assert bare in fw["message"]
    assert _vm(report)["readiness"] == "READY"


def test_a_running_vmi_with_the_dashed_spelling_runs_with_the_pinned_uuid(
    tmp_path: Path,
) -> None:
    """The spec pins the bare spelling, the VMI shows the dashed one: one UUID, no drift."""
    bare = UUID.replace("-", "")
    text = (FIXTURES / FW_PASS).read_text()
    first = text.index(f"uuid: {UUID}")  # the VM's (the VMI follows it in the file)
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "c.yaml"
    path.write_text(text[:first] + f"uuid: {bare}" + text[first + len(f"uuid: {UUID}") :])
    fw = _finding(audit_fixture(path), "RR-FW-001")
    assert fw["status"] == "PASS", fw["message"]


def test_a_running_vmi_with_another_uuid_still_differs(tmp_path: Path) -> None:
    """Kept: a bare spelling of another UUID than the VMI's is drift (FAIL)."""
    other = "3f6d2c1e8b0a4f7eb3c56a1d9e2f4b11"
    text = (FIXTURES / FW_PASS).read_text().replace(f"uuid: {UUID}", f"uuid: {other}", 1)
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "c.yaml"
    path.write_text(text)
    fw = _finding(audit_fixture(path), "RR-FW-001")
    assert fw["status"] == "FAIL", fw["message"]
    assert fw["evidence"]["mismatched"] == ["uuid"]


def test_two_spellings_of_one_uuid_are_a_duplicate(tmp_path: Path) -> None:
    """Kept, and now seen: a second VM pinning the same UUID without dashes shares the
    SMBIOS UUID (RR-FW-003 FAIL naming it), where it was malformed before."""
    text = (FIXTURES / FW_PASS).read_text()
    vm = text[text.index("apiVersion: kubevirt.io/v1\nkind: VirtualMachine\n") :]
    vm = vm[: vm.index("\n---\n")]
    twin = vm.replace("name: vm1\n", "name: vm2\n").replace("uid: uid-vm-app-vm1", "uid: twin")
    twin = twin.replace(f"uuid: {UUID}", f"uuid: {UUID.replace('-', '').upper()}")
    twin = twin.replace("SERIAL-0001", "SERIAL-0002").replace(
        "02:00:00:00:00:0", "02:00:00:00:01:0"
    )
    assert "vm2" in twin and "SERIAL-0002" in twin
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "c.yaml"
    path.write_text(text + "\n---\n" + twin + "\n")
    report = audit_fixture(path)
    for name, other in (("vm1", "vm2"), ("vm2", "vm1")):
        dup = _finding(report, "RR-FW-003", name)
        assert dup["status"] == "FAIL", dup["message"]
        assert other in dup["message"]


def test_a_uuid_of_31_digits_stays_malformed(tmp_path: Path) -> None:
    """Kept: what libvirt refuses (31 hex digits, a non-hex digit) is no UUID (ERROR)."""
    for bad in (UUID.replace("-", "")[:-1], UUID.replace("3f", "3g", 1)):
        report = _audit(tmp_path / bad, FW_PASS, (f"uuid: {UUID}", f"uuid: {bad}"))
        fw = _finding(report, "RR-FW-001")
        assert fw["status"] == "ERROR", fw["message"]
        assert "firmware.uuid" in fw["message"]


# -- the bucket's identity compare (RR-BKP-009) --------------------------------------------


def test_backup_identity_in_another_notation_is_the_live_identity(tmp_path: Path) -> None:
    """The live VM spells its MACs with dashes and dotted groups and its NAD as app/vlan10;
    the backed-up manifest has colons and vlan10: RR-BKP-009 failed with "nic/...mac,
    nic/vlan.network differ" though a restore brings back the same identity."""
    report = _audit(
        tmp_path,
        BUCKET_PASS,
        ("macAddress: 02:00:00:00:00:01", "macAddress: 0200.0000.0001"),
        ("macAddress: 02:00:00:00:00:02", "macAddress: 02-00-00-00-00-02"),
        ("networkName: vlan10", "networkName: app/vlan10"),
    )
    drift = _finding(report, "RR-BKP-009")
    assert drift["status"] == "PASS", drift["message"]
    assert drift["evidence"]["drift"] == []


def test_backup_uuid_in_another_notation_is_the_live_uuid(tmp_path: Path) -> None:
    """The live VM pins the same UUID upper-case without dashes: no drift, no ERROR."""
    bare = UUID.replace("-", "").upper()
    report = _audit(tmp_path, BUCKET_PASS, (f"uuid: {UUID}", f"uuid: {bare}"))
    drift = _finding(report, "RR-BKP-009")
    assert drift["status"] == "PASS", drift["message"]


def test_backup_identity_changed_in_another_notation_still_differs(tmp_path: Path) -> None:
    """Kept: a different MAC and a NAD of another namespace are drift in any notation."""
    report = _audit(
        tmp_path,
        BUCKET_PASS,
        ("macAddress: 02:00:00:00:00:02", "macAddress: 02-00-00-00-00-03"),
        ("networkName: vlan10", "networkName: other/vlan10"),
    )
    drift = _finding(report, "RR-BKP-009")
    assert drift["status"] == "FAIL", drift["message"]
    got = {d["field"]: (d["backup"], d["live"]) for d in drift["evidence"]["drift"]}
    assert got == {
        "nic/vlan.mac": ("02:00:00:00:00:02", "02:00:00:00:00:03"),
        "nic/vlan.network": ("app/vlan10", "other/vlan10"),
    }


def test_the_bucket_header_is_untouched() -> None:
    """The fixture's backed-up manifest is in the canonical notation the tests vary from."""
    head = (FIXTURES / BUCKET_PASS).read_text().splitlines()[1]
    contents = json.loads(head.removeprefix("# backup-contents: "))
    saved = contents[0]["vm_manifests"][0][2]["spec"]["template"]["spec"]
    assert saved["domain"]["firmware"]["uuid"] == UUID
    assert saved["networks"][1]["multus"]["networkName"] == "vlan10"
