"""Round h43c: fields the auditor read without naming them (docs/readiness.md, round m42's
"unnamed changes are no improvements").

A VolumeSnapshotContent's ``status: null``, ``status.readyToUse: null`` or
``status.snapshotHandle: null`` (none of them nullable: the API server prunes the null), and a
VMI interface's MAC that does not parse (KubeVirt's admission refuses it), are now named at
their field. Each is read as before, so the verdict is the one the input gave: no better than
the unbroken input. A VMI ``macAddress`` of another type, read as unset, passed RR-NIC-001 on
a mismatch (AT_RISK -> READY): it is named as an issue, and RR-NIC-001 gives ERROR.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from bench.mutations import RANK, worst_rank
from tests.test_check_fixtures import FIXTURES, audit_fixture
from tests.test_malformed_m42 import _named, _status, _vm

_DELETE = object()


def _edit(tmp_path: Path, text: str, kind: str, name: str, edit: Any) -> Path:
    """``text`` (a fixture's) with ``edit(doc)`` applied to ``kind`` ``name``."""
    docs = [d for d in yaml.safe_load_all(text) if d]
    hit = [d for d in docs if d.get("kind") == kind and d["metadata"].get("name") == name]
    assert hit, (kind, name)
    for d in hit:
        edit(d)
    head = [line for line in text.splitlines() if line.startswith("#")]
    path = tmp_path / "export.yaml"
    path.write_text("\n".join(head) + "\n" + yaml.safe_dump_all(docs))
    return path


def _setter(path: str, value: Any) -> Any:
    """An edit setting dotted ``path`` to ``value`` (:data:`_DELETE`: removing it)."""

    def edit(doc: dict[str, Any]) -> None:
        *parents, leaf = path.split(".")
        for key in parents:
            doc = doc[key]
        if value is _DELETE:
            del doc[leaf]
        else:
            doc[leaf] = value

    return edit


def _verdict(doc: dict[str, Any]) -> tuple[str, dict[str, str]]:
    vm = _vm(doc)
    return vm["readiness"], {
        f["check_id"]: f"{f['status']} {f['severity']}" for f in vm["findings"]
    }


def _rank(doc: dict[str, Any]) -> int:
    return worst_rank(*_verdict(doc))


# -- 1. a VolumeSnapshotContent's null status, readyToUse or snapshotHandle -----------------

#: vm1's newest Backup (daily-20261130) took its disks by CSI snapshot: READY
CSI = "RR-FW-001/pass.yaml"
CONTENT = "snapcontent-daily-20261130-0"


@pytest.mark.parametrize("field", ["status", "status.readyToUse", "status.snapshotHandle"])
def test_a_null_in_a_snapshot_content_status_is_named(tmp_path: Path, field: str) -> None:
    """Written null, the field is named at the VolumeSnapshotContent (it was not: m42's
    seeds 4202 and 4206), and read as absent, as before: no ready snapshot, so the newest
    Backup's CSI capture of the disk is not evidenced (RR-BKP-004 ERROR high, UNKNOWN), the
    verdict the content gives without the field, worse than the unbroken READY."""
    text = (FIXTURES / CSI).read_text()
    unbroken = audit_fixture(FIXTURES / CSI)
    assert _vm(unbroken)["readiness"] == "READY"
    gone = audit_fixture(
        _edit(tmp_path, text, "VolumeSnapshotContent", CONTENT, _setter(field, _DELETE))
    )
    doc = audit_fixture(
        _edit(tmp_path, text, "VolumeSnapshotContent", CONTENT, _setter(field, None))
    )
    named = [p for p in doc["collection_problems"] if p["kind"] == "VolumeSnapshotContent"]
    assert [(p["name"], p["field"]) for p in named] == [(CONTENT, field)]
    assert "is null, which the API server never stores" in named[0]["reason"]
    assert named[0]["file"].startswith("export.yaml")
    assert _status(doc, "RR-BKP-004") == ("ERROR", "high")
    assert _verdict(doc) == _verdict(gone)
    assert _rank(doc) == RANK["NOT_READY"] > RANK[_vm(unbroken)["readiness"]]
    assert not [p for p in gone["collection_problems"] if p["kind"] == "VolumeSnapshotContent"]


def test_an_absent_status_stays_unnamed(tmp_path: Path) -> None:
    """A content without status (Velero 1.4-1.15 synced them so) is valid: not named."""
    text = (FIXTURES / CSI).read_text()
    doc = audit_fixture(
        _edit(tmp_path, text, "VolumeSnapshotContent", CONTENT, _setter("status", _DELETE))
    )
    assert not _named(doc, "VolumeSnapshotContent")


# -- 2. a VMI interface's MAC that does not parse --------------------------------------------

#: vm1 pins 02:00:00:00:00:01 on interface default; its VMI runs with it: READY
NIC = "RR-NIC-001/pass.yaml"
SPEC_MAC = "spec.domain.devices.interfaces[default].macAddress"


def _vmi_mac(where: str, mac: Any) -> Any:
    """An edit of vm1's VMI: interface default's MAC ``mac`` in its spec, or in a
    ``status.interfaces`` it reports (interface vlan's as pinned)."""

    def edit(vmi: dict[str, Any]) -> None:
        if where == "spec":
            vmi["spec"]["domain"]["devices"]["interfaces"][0]["macAddress"] = mac
        else:
            vmi["status"]["interfaces"] = [
                {"name": "default", "mac": mac, "interfaceName": "eth0"},
                {"name": "vlan", "mac": "02:00:00:00:00:02", "interfaceName": "eth1"},
            ]

    return edit


@pytest.mark.parametrize(
    ("where", "field"), [("spec", SPEC_MAC), ("status", "status.interfaces[0].mac")]
)
@pytest.mark.parametrize(
    ("mac", "readiness"),
    [
        ("02:00:00:00:00:0g", "AT_RISK"),  # not hex
        ("02:00:00:00:00:\u041e1", "AT_RISK"),  # a Cyrillic O for the 0
        ("02:00:00:00:00:01:00", "AT_RISK"),  # seven bytes
        (" 02:00:00:00:00:01", "READY"),  # the pinned MAC, a blank before it
    ],
)
def test_a_vmi_mac_that_does_not_parse_is_named(
    tmp_path: Path, where: str, field: str, mac: str, readiness: str
) -> None:
    """Named at the VMI's field (no reader gives ERROR for it), and compared as it is, as
    before: its hex digits differ from the pinned MAC's (RR-NIC-001 FAIL medium, AT_RISK) or
    are the same (READY, as unbroken): never better than the unbroken READY."""
    text = (FIXTURES / NIC).read_text()
    assert _vm(audit_fixture(FIXTURES / NIC))["readiness"] == "READY"
    doc = audit_fixture(
        _edit(tmp_path, text, "VirtualMachineInstance", "vm1", _vmi_mac(where, mac))
    )
    named = [p for p in doc["collection_problems"] if p["kind"] == "VirtualMachineInstance"]
    assert [(p["namespace"], p["name"], p["field"]) for p in named] == [("app", "vm1", field)]
    assert "not a MAC address" in named[0]["reason"]
    assert _vm(doc)["readiness"] == readiness
    want = "FAIL medium" if readiness == "AT_RISK" else "PASS medium"
    verdicts = _verdict(doc)[1]
    assert verdicts["RR-NIC-001"] == want
    # no check gives ERROR for it (RR-DSK-002 and RR-DSK-003 read the VMI)
    assert not [c for c, v in verdicts.items() if v.startswith("ERROR")]


@pytest.mark.parametrize(
    ("where", "mac", "field"),
    [
        ("spec", 42, SPEC_MAC),
        ("spec", ["02:00:00:00:00:09"], SPEC_MAC),
        ("spec", None, SPEC_MAC),
        ("status", 42, "status.interfaces[0].mac"),
        ("status", None, "status.interfaces[default].mac"),
    ],
)
def test_a_running_mac_that_cannot_be_read_is_no_pass(
    tmp_path: Path, where: str, mac: Any, field: str
) -> None:
    """vm1's VMI runs interface default with 02:00:00:00:00:09, not the pinned
    02:00:00:00:00:01 (RR-NIC-001 FAIL, AT_RISK). A running MAC of another type was read as
    unset and the mismatch passed (spec 42 or a list: AT_RISK -> READY); a null one too
    (UNKNOWN of medium ERRORs of other checks). RR-NIC-001 now gives ERROR naming the field:
    the guest may run with another MAC than the pinned one."""
    text = (FIXTURES / NIC).read_text()
    mismatch = _edit(
        tmp_path, text, "VirtualMachineInstance", "vm1", _vmi_mac(where, "02:00:00:00:00:09")
    )
    base = audit_fixture(mismatch)
    assert _verdict(base)[0] == "AT_RISK"
    assert _status(base, "RR-NIC-001") == ("FAIL", "medium")
    doc = audit_fixture(
        _edit(tmp_path, mismatch.read_text(), "VirtualMachineInstance", "vm1", _vmi_mac(where, mac))
    )
    assert ("export.yaml", "app", "vm1", field) in _named(doc, "VirtualMachineInstance")
    f = next(f for f in _vm(doc)["findings"] if f["check_id"] == "RR-NIC-001")
    # high since round h46: RR-NIC-001 FAILs high for a refused MAC, which the unread one
    # may hide (CheckSpec.worst_severity), so its ERROR ranks the VM with NOT_READY
    assert (f["status"], f["severity"]) == ("ERROR", "high")
    assert f["evidence"]["malformed_objects"][0]["field"] == field
    assert _vm(doc)["readiness"] == "UNKNOWN"
    assert _rank(doc) >= RANK["NOT_READY"]


# -- 3. Hyper-V features of another type (what tells a Windows guest) -----------------------

#: a Windows guest told by its Hyper-V features alone, without a pinned firmware UUID
#: (RR-FW-001 FAIL high, NOT_READY)
HYPERV = "          hyperv:\n            relaxed: {}\n"


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        (HYPERV, "          hyperv: 'yes'\n", "spec.template.spec.domain.features.hyperv"),
        (HYPERV, "          hyperv: [relaxed]\n", "spec.template.spec.domain.features.hyperv"),
        (
            "        features:\n" + HYPERV,
            "        features: 5\n",
            "spec.template.spec.domain.features",
        ),
    ],
)
def test_hyperv_features_of_another_type_are_named(
    tmp_path: Path, old: str, new: str, field: str
) -> None:
    """Read as none, they made the Windows guest an unknown one: RR-FW-001's FAIL high became
    medium, NOT_READY -> AT_RISK, nothing named. KubeVirt's ``Features`` and its ``hyperv``
    are objects: named now, and the checks reading them give ERROR (UNKNOWN, ranked with
    NOT_READY)."""
    text = (FIXTURES / "RR-FW-001/fail-windows-no-uuid.yaml").read_text()
    text = text.replace("        vm.kubevirt.io/os: windows2k22\n", "        note: none\n", 1)
    path = tmp_path / "export.yaml"
    path.write_text(text)
    before = audit_fixture(path)
    assert _verdict(before)[0] == "NOT_READY"
    assert _status(before, "RR-FW-001") == ("FAIL", "high")
    assert text.count(old) >= 1
    path.write_text(text.replace(old, new, 1))
    doc = audit_fixture(path)
    assert ("export.yaml", "app", "vm1", field) in _named(doc, "VirtualMachine")
    assert _status(doc, "RR-FW-001")[0] == "ERROR"
    assert _rank(doc) == RANK["NOT_READY"]
