"""Red-team round fz30: valid-looking but impossible input is named, never silently better.

Found by ``python -m bench.mutations`` (seeds 400-411, the shared cluster export and our
exports; the families ``null_list`` and the new ``null_scalar``, ``item_number``,
``key_case``, ``empty_ref``, ``confusable_mark``), each shrunk here to a check fixture.

The rule: the API server prunes a null it does not allow (a VirtualMachine's schema allows
almost none) and never writes a null ``metadata.labels``, so such a null is a damaged or
edited copy: a collection problem naming the VM and the field, the run incomplete, and the
checks that read the field ERROR, never the verdict of the field read as absent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.test_evidence_gaps import _complete, _docs, _finding, _of

Docs = list[dict[str, Any]]
RANK = {"READY": 0, "AT_RISK": 1, "UNKNOWN": 2, "NOT_READY": 2}


def _vm(docs: Docs) -> dict[str, Any]:
    return next(d for d in _of(docs, "VirtualMachine") if d["metadata"]["name"] == "vm1")


def _named(report: dict[str, Any], field: str) -> list[dict[str, Any]]:
    return [
        p
        for p in report["collection_problems"]
        if p["kind"] == "VirtualMachine" and p["name"] == "vm1" and p["field"] == field
    ]


def _readiness(report: dict[str, Any]) -> str:
    vm: dict[str, Any] = next(v for v in report["vms"] if v["name"] == "vm1")
    return str(vm["readiness"])


def test_a_null_firmware_is_named_and_never_drops_an_efi_finding(tmp_path: Path) -> None:
    """``firmware: null`` read as no firmware made an EFI VM a BIOS one: RR-FW-002 FAIL
    (volatile NVRAM) -> NOT_APPLICABLE, unnamed (mutations seed 401, null_list)."""
    fixture = "RR-FW-002/fail-efi-volatile.yaml"
    docs = _docs(fixture)
    assert _finding(_complete(tmp_path / "before", fixture, docs), "RR-FW-002")["status"] == (
        "FAIL"
    )
    _vm(docs)["spec"]["template"]["spec"]["domain"]["firmware"] = None
    report = _complete(tmp_path / "after", fixture, docs)
    named = _named(report, "spec.template.spec.domain.firmware")
    assert named and "null" in named[0]["reason"], report["collection_problems"]
    assert report["run"]["complete"] is False
    assert _finding(report, "RR-FW-002")["status"] == "ERROR"
    assert RANK[_readiness(report)] == 2


def test_null_labels_never_drop_the_label_that_excludes_the_vm(tmp_path: Path) -> None:
    """``metadata.labels: null`` read as no labels dropped ``velero.io/exclude-from-backup``:
    RR-BKP-001 FAIL -> PASS (the shared export, seed 400: six findings of web-frontend-01
    changed, unnamed)."""
    fixture = "RR-BKP-001/fail-vm-exclude-label.yaml"
    docs = _docs(fixture)
    before = _complete(tmp_path / "before", fixture, docs)
    assert _finding(before, "RR-BKP-001")["status"] == "FAIL"
    _vm(docs)["metadata"]["labels"] = None
    report = _complete(tmp_path / "after", fixture, docs)
    assert _named(report, "metadata.labels"), report["collection_problems"]
    assert report["run"]["complete"] is False
    assert _finding(report, "RR-BKP-001")["status"] == "ERROR"
    assert RANK[_readiness(report)] >= RANK[_readiness(before)]


def test_null_disks_are_named_not_read_as_a_vm_without_disks(tmp_path: Path) -> None:
    """``disks: null`` (pruned by the API server, so never in a true export) read as "no
    disks": RR-DSK-001's FAIL (two disks, no boot order) became NOT_APPLICABLE."""
    fixture = "RR-DSK-001/fail-two-disks-no-bootorder.yaml"
    docs = _docs(fixture)
    _vm(docs)["spec"]["template"]["spec"]["domain"]["devices"]["disks"] = None
    report = _complete(tmp_path / "after", fixture, docs)
    assert _named(report, "spec.template.spec.domain.devices.disks"), report["collection_problems"]
    assert _finding(report, "RR-DSK-001")["status"] == "ERROR"


def test_a_null_scalar_in_the_spec_is_named(tmp_path: Path) -> None:
    """Any null the VirtualMachine schema does not allow, a scalar too: ``runStrategy:
    null`` read as unset made the VM one of ``spec.running``'s (mutations null_scalar)."""
    fixture = "RR-BKP-001/fail-vm-exclude-label.yaml"
    docs = _docs(fixture)
    vm = _vm(docs)
    vm["spec"]["runStrategy"] = None
    vm["spec"].pop("running", None)
    report = _complete(tmp_path / "after", fixture, docs)
    assert _named(report, "spec.runStrategy"), report["collection_problems"]
    assert report["run"]["complete"] is False
    assert _finding(report, "RR-BKP-001")["status"] == "ERROR"


def test_the_nulls_the_schema_allows_are_no_problem(tmp_path: Path) -> None:
    """``creationTimestamp: null`` in the template's and a DataVolume template's metadata
    (every export holds them; both are ``nullable`` in KubeVirt's schema) names nothing."""
    fixture = "RR-DSK-001/fail-two-disks-no-bootorder.yaml"
    docs = _docs(fixture)
    vm = _vm(docs)
    vm["spec"]["template"].setdefault("metadata", {})["creationTimestamp"] = None
    vm["spec"]["dataVolumeTemplates"] = [
        {"metadata": {"name": "dv-x", "creationTimestamp": None}, "spec": {"source": {}}}
    ]
    report = _complete(tmp_path / "after", fixture, docs)
    assert not [p for p in report["collection_problems"] if "null" in p["reason"]]


def test_an_empty_mac_address_is_said_to_pin_nothing(tmp_path: Path) -> None:
    """``macAddress: ""`` is valid (KubeVirt uses a MAC only when it is not empty) and pins
    nothing: RR-NIC-001 FAILs and says the address is empty, not merely "without a MAC"."""
    fixture = "RR-NIC-001/pass.yaml"
    docs = _docs(fixture)
    iface = _vm(docs)["spec"]["template"]["spec"]["domain"]["devices"]["interfaces"][0]
    iface["macAddress"] = ""
    finding = _finding(_complete(tmp_path / "after", fixture, docs), "RR-NIC-001")
    assert finding["status"] == "FAIL"
    assert "empty string" in finding["message"]
    assert finding["evidence"]["blank_mac"] == [iface["name"]]


def test_a_null_in_a_running_vmi_is_named(tmp_path: Path) -> None:
    """A VMI's schema allows a null only in a few status times: a disk's ``bootOrder: null``
    read as no boot order changed RR-DSK-003 with nothing named (mutations null_scalar, seed
    421; ``firmware: null`` and ``serial: null`` likewise)."""
    fixture = "RR-DSK-003/fail-boot-disk-changed-while-running.yaml"
    docs = _docs(fixture)
    vmi = next(d for d in _of(docs, "VirtualMachineInstance") if d["metadata"]["name"] == "vm1")
    disk = vmi["spec"]["domain"]["devices"]["disks"][0]
    disk["bootOrder"] = None
    report = _complete(tmp_path / "after", fixture, docs)
    named = [
        p
        for p in report["collection_problems"]
        if p["kind"] == "VirtualMachineInstance"
        and p["field"] == f"spec.domain.devices.disks[{disk['name']}].bootOrder"
    ]
    assert named and "null" in named[0]["reason"], report["collection_problems"]
    assert _finding(report, "RR-DSK-003")["status"] == "ERROR"


def test_a_null_in_a_pinned_preference_is_named(tmp_path: Path) -> None:
    """Instancetype and preference schemas allow no null: ``preferredEfi.persistent: null``
    in the pinned revision read as unset made the NVRAM volatile (RR-FW-002 PASS -> FAIL,
    unnamed; the shared export, mutations null_scalar seed 410)."""
    fixture = "RR-FW-002/pass-preference-pinned-revision.yaml"
    docs = _docs(fixture)
    revision = _of(docs, "ControllerRevision")[0]
    revision["data"]["spec"]["firmware"]["preferredEfi"]["persistent"] = None
    report = _complete(tmp_path / "after", fixture, docs)
    named = [
        p
        for p in report["collection_problems"]
        if p["kind"] == "ControllerRevision"
        and p["field"] == "data.spec.firmware.preferredEfi.persistent"
    ]
    assert named, report["collection_problems"]
    assert _finding(report, "RR-FW-002")["status"] == "ERROR"


def test_a_field_written_with_a_capital_is_missing_and_named(tmp_path: Path) -> None:
    """KubeVirt's fields are lowerCamelCase and the API server prunes an unknown one:
    ``Persistent`` in place of ``persistent`` read as unset made an EFI VM's NVRAM volatile
    with nothing named (mutations key_case, seeds 410 and 411). Named at the field it stands
    for, so the checks reading it ERROR."""
    fixture = "RR-FW-002/fail-efi-volatile.yaml"
    docs = _docs(fixture)
    firmware = _vm(docs)["spec"]["template"]["spec"]["domain"]["firmware"]
    firmware["Bootloader"] = firmware.pop("bootloader")
    report = _complete(tmp_path / "after", fixture, docs)
    named = _named(report, "spec.template.spec.domain.firmware.bootloader")
    assert named and "'Bootloader'" in named[0]["reason"], report["collection_problems"]
    assert _finding(report, "RR-FW-002")["status"] == "ERROR"


_ORDER = ["critical", "high", "medium", "low", "info"]


def test_an_error_is_never_less_severe_than_its_checks_default(tmp_path: Path) -> None:
    """An ERROR took the severity of its would-be result: RR-BKP-001's "object backed up,
    disk data not" is a medium FAIL, so with a Backup unread its ERROR was medium, though the
    unread Backup may hide the check's high FAIL (the fuzz case kind "an error ranking above
    a high FAIL": a medium ERROR beside a medium FAIL reads AT_RISK). Every ERROR now has at
    least its check's default severity."""
    fixture = "RR-BKP-001/fail-object-only.yaml"
    docs = _docs(fixture)
    assert (_finding(_complete(tmp_path / "b", fixture, docs), "RR-BKP-001")["severity"]) == (
        "medium"
    )
    broken = {**_of(docs, "Backup")[0]}
    broken["metadata"] = {**broken["metadata"], "name": "broken"}
    broken["spec"] = {**broken["spec"], "excludedResources": "persistentvolumeclaims"}
    report = _complete(tmp_path / "a", fixture, [*docs, broken])
    finding = _finding(report, "RR-BKP-001")
    assert finding["status"] == "ERROR"
    assert finding["evidence"]["would_be"]["status"] == "FAIL"
    assert finding["severity"] == "high"
    default = {c["id"]: c["severity"] for c in report["checks"]}
    for vm in report["vms"]:
        for f in vm["findings"]:
            if f["status"] == "ERROR":
                assert _ORDER.index(f["severity"]) <= _ORDER.index(default[f["check_id"]]), f


def test_a_schedule_location_no_object_can_be_named_is_named(tmp_path: Path) -> None:
    """A Schedule's ``storageLocation`` was only type-checked: a look-alike (a Cyrillic
    ``е``, a Unicode hyphen) named no location, unnamed (mutations confusable_mark, seed
    440). Kubernetes names are ASCII: now named, and the Schedule unread. ``""`` stays
    Velero's "the default location"."""
    fixture = "RR-PLT-002/pass.yaml"
    docs = _docs(fixture)
    schedule = _of(docs, "Schedule")[0]
    schedule["spec"]["template"]["storageLocation"] = "d\u0435fault"
    report = _complete(tmp_path / "after", fixture, docs)
    named = [
        p
        for p in report["collection_problems"]
        if p["kind"] == "Schedule" and p["field"] == "spec.template.storageLocation"
    ]
    assert named, report["collection_problems"]
    plt = next(f for f in report["platform_findings"] if f["check_id"] == "RR-PLT-002")
    assert plt["status"] != "PASS"
    schedule["spec"]["template"]["storageLocation"] = ""
    report = _complete(tmp_path / "empty", fixture, docs)
    assert not [p for p in report["collection_problems"] if p["kind"] == "Schedule"]


def test_a_vmi_field_written_with_a_capital_is_named(tmp_path: Path) -> None:
    """A VMI's schema is lowerCamelCase as a VM's: ``Firmware`` read as no firmware made
    the running UUID unknown with nothing named (mutations key_case, seed 440: ``Serial``)."""
    fixture = "RR-FW-001/fail-pinned-uuid-differs-from-running-vmi.yaml"
    docs = _docs(fixture)
    vmi = next(d for d in _of(docs, "VirtualMachineInstance") if d["metadata"]["name"] == "vm1")
    vmi["spec"]["domain"]["Firmware"] = vmi["spec"]["domain"].pop("firmware")
    report = _complete(tmp_path / "after", fixture, docs)
    named = [
        p
        for p in report["collection_problems"]
        if p["kind"] == "VirtualMachineInstance" and p["field"] == "spec.domain.firmware"
    ]
    assert named and "'Firmware'" in named[0]["reason"], report["collection_problems"]
    assert _finding(report, "RR-FW-001")["status"] == "ERROR"


def test_the_null_prescan_never_hides_a_null() -> None:
    """nulls_below skips a subtree whose JSON text has no ``null``; a subtree JSON cannot
    write (a key that is no string, an integer beyond 64 bits) is walked, and a string
    holding the word is no null."""
    from auditor.inventory.prunednulls import nulls_below

    assert [p for p, _ in nulls_below({"spec": {"a": [{"b": None}], 5: 1}}, ("spec",))] == [
        "spec.a[0].b"
    ]
    assert [p for p, _ in nulls_below({"spec": {"n": 2**70, "c": None}}, ("spec",))] == ["spec.c"]
    assert nulls_below({"spec": {"x": "null", "y": ["nullable"]}}, ("spec",)) == []
    assert nulls_below({"spec": {"x": 1}}, ("spec",)) == []
