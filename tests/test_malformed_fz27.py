"""Red-team round fz27: malformed input never improves a verdict, and is always named.

Each case comes from ``python -m bench.mutations`` (seeds 201 and up) over the shared export
or our fixtures, or from a family added this round; each names file, object and field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.test_evidence_gaps import _audit, _docs

RANK = {"READY": 0, "AT_RISK": 1, "UNKNOWN": 2, "NOT_READY": 2}


def _vm(report: dict[str, Any], name: str = "vm1") -> dict[str, Any]:
    return next(v for v in report["vms"] if v["name"] == name)


def _statuses(report: dict[str, Any]) -> dict[str, str]:
    return {f["check_id"]: f["status"] for f in _vm(report)["findings"]}


@pytest.mark.parametrize("value", ["junk", [{"uuid": "x"}], 7], ids=["str", "list", "int"])
def test_a_vmi_mapping_of_the_wrong_type_on_the_way_to_a_field_is_named(
    tmp_path: Path, value: object
) -> None:
    """A VMI's ``spec.domain.firmware: junk`` read as "no firmware uuid" (bench.mutations
    wrong_type, seed 202 over the shared export): RR-DSK-003 PASS -> FAIL naming a firmware
    change, RR-FW-001 compared with nothing, no collection problem. A step on the way to a
    field that is no mapping is named, and the checks reading the VMI give ERROR."""
    docs = _docs("RR-FW-001/pass.yaml")
    baseline = _audit(tmp_path / "ok", docs)
    vmi = next(d for d in docs if d["kind"] == "VirtualMachineInstance")
    vmi["spec"]["domain"]["firmware"] = value
    report = _audit(tmp_path / "bad", docs)
    named = [
        p
        for p in report["collection_problems"]
        if p["kind"] == "VirtualMachineInstance" and p["field"] == "spec.domain.firmware"
    ]
    assert len(named) == 1 and named[0]["file"].startswith("c.yaml"), report["collection_problems"]
    assert "not a mapping" in named[0]["reason"]
    assert RANK[_vm(report)["readiness"]] >= RANK[_vm(baseline)["readiness"]]
    assert _statuses(baseline)["RR-FW-001"] == "PASS"
    assert _statuses(report)["RR-FW-001"] == "ERROR"


@pytest.mark.parametrize("driver", ["\u0441si.example.com", "csi.example.com\u200b"])
def test_a_snapshot_content_driver_with_a_look_alike_letter_is_named(
    tmp_path: Path, driver: str
) -> None:
    """A VolumeSnapshotContent's ``spec.driver`` with a Cyrillic look-alike letter (U+0441 for
    ``c``, bench.mutations confusable, seed 221) or an invisible character names no CSI
    driver: its snapshots counted for no driver with nothing named. Named; the VM's verdict
    is no better."""
    docs = _docs("RR-BKP-001/pass.yaml")
    baseline = _audit(tmp_path / "ok", docs)
    contents = [d for d in docs if d["kind"] == "VolumeSnapshotContent"]
    assert contents
    for c in contents:
        c["spec"]["driver"] = driver
    report = _audit(tmp_path / "bad", docs)
    named = [
        p
        for p in report["collection_problems"]
        if p["kind"] == "VolumeSnapshotContent" and p["field"] == "spec.driver"
    ]
    assert len(named) == len(contents), report["collection_problems"]
    assert "invisible character" in named[0]["reason"]
    assert RANK[_vm(report)["readiness"]] >= RANK[_vm(baseline)["readiness"]]


def _audit_whole(root: Path, docs: list[dict[str, Any]]) -> dict[str, Any]:
    """As ``_audit``, every kind the docs lack read as empty (as bench.mutations reads a
    fixture)."""
    import yaml

    from auditor.config import AuditSettings
    from auditor.kinds import BY_KIND
    from auditor.pipeline import audit_data
    from auditor.sources.base import KindState
    from auditor.sources.directory import DirectorySource
    from tests.conftest import AUDIT_AT, report_doc

    root.mkdir(parents=True)
    (root / "c.yaml").write_text(yaml.safe_dump_all(docs, allow_unicode=True))
    data = DirectorySource(root).collect()
    for kind in BY_KIND:
        if data.states.get(kind) is not KindState.PARTIAL:
            data.states[kind] = KindState.COMPLETE
    return report_doc(audit_data(data, AuditSettings(), at=AUDIT_AT))


@pytest.mark.parametrize(
    ("fixture", "kind"),
    [
        ("RR-BKP-004/na-ephemeral.yaml", "VirtualMachineInstance"),
        ("RR-NET-003/error-route-target-malformed.yaml", "Route"),
    ],
)
@pytest.mark.parametrize("field", ["namespace", "name"])
def test_an_object_whose_name_no_api_server_writes_leaves_its_kind_partial(
    tmp_path: Path, fixture: str, kind: str, field: str
) -> None:
    """A VMI or Route whose namespace (or name) has a Cyrillic look-alike letter (``аpp``,
    U+0430; bench.mutations confusable, seed 204) was named but read as an object of another
    namespace: the VM read as not running (AT_RISK -> READY) or without the Route RR-NET-003
    had found malformed (UNKNOWN -> READY). Whose object it was is unknown, so its kind's list
    no longer proves an absence: the verdict is no better."""
    docs = _docs(fixture)
    baseline = _audit_whole(tmp_path / "ok", docs)
    obj = next(d for d in docs if d["kind"] == kind)
    obj["metadata"][field] = "\u0430" + obj["metadata"][field][1:]
    report = _audit_whole(tmp_path / "bad", docs)
    assert RANK[_vm(report)["readiness"]] >= RANK[_vm(baseline)["readiness"]]
    named = [p for p in report["collection_problems"] if p["field"] == f"metadata.{field}"]
    assert len(named) == 1 and named[0]["kinds"] == [kind], report["collection_problems"]
    assert report["run"]["complete"] is False


@pytest.mark.parametrize("bound", ["", " {name}", "{name}\u200b"], ids=["empty", "blank", "zwsp"])
def test_a_volume_snapshot_bound_to_no_content_name_is_named(tmp_path: Path, bound: str) -> None:
    """A VolumeSnapshot's ``status.boundVolumeSnapshotContentName`` written ``""`` or with a
    blank names no content (bench.mutations empty_string and padded, seed 232): read as
    bound to none, with nothing named."""
    docs = _docs("RR-STG-001/pass-retained-volume-snapshots.yaml")
    baseline = _audit_whole(tmp_path / "ok", docs)
    snaps = [d for d in docs if d["kind"] == "VolumeSnapshot"]
    assert snaps
    for s in snaps:
        s["status"]["boundVolumeSnapshotContentName"] = bound.format(
            name=s["status"]["boundVolumeSnapshotContentName"]
        )
    report = _audit_whole(tmp_path / "bad", docs)
    assert RANK[_vm(report)["readiness"]] >= RANK[_vm(baseline)["readiness"]]
    named = [
        p
        for p in report["collection_problems"]
        if p["field"] == "status.boundVolumeSnapshotContentName"
    ]
    assert len(named) == len(snaps), report["collection_problems"]
    assert "it names no object" in named[0]["reason"]


def test_a_snapshot_content_driver_written_empty_is_named(tmp_path: Path) -> None:
    """``spec.driver: ""`` on a VolumeSnapshotContent (bench.mutations empty_string, seed
    232): its snapshots counted for no driver, unnamed."""
    docs = _docs("RR-BKP-001/pass.yaml")
    contents = [d for d in docs if d["kind"] == "VolumeSnapshotContent"]
    for c in contents:
        c["spec"]["driver"] = ""
    report = _audit(tmp_path / "bad", docs)
    named = [
        p
        for p in report["collection_problems"]
        if p["kind"] == "VolumeSnapshotContent" and p["field"] == "spec.driver"
    ]
    assert len(named) == len(contents) and "empty string" in named[0]["reason"]


@pytest.mark.parametrize(
    "owner", ["vm1 ", " vm1", "vm\u0031\u200b"], ids=["after", "before", "zwsp"]
)
def test_a_claim_owner_reference_naming_no_vm_is_named(tmp_path: Path, owner: str) -> None:
    """The persistent-state PVC's ``ownerReferences[0].name: "vm1 "`` names no VM
    (bench.mutations padded, seed 252): the claim read as owned by none, unnamed."""
    docs = _docs("RR-BKP-004/pass-snapshot-contents-without-counters.yaml")
    baseline = _audit_whole(tmp_path / "ok", docs)
    pvc = next(
        d
        for d in docs
        if d["kind"] == "PersistentVolumeClaim"
        and d["metadata"]["name"].startswith("persistent-state-for-")
    )
    pvc["metadata"]["ownerReferences"][0]["name"] = owner
    report = _audit_whole(tmp_path / "bad", docs)
    assert RANK[_vm(report)["readiness"]] >= RANK[_vm(baseline)["readiness"]]
    named = [
        p for p in report["collection_problems"] if p["field"] == "metadata.ownerReferences[0].name"
    ]
    assert len(named) == 1 and named[0]["name"] == pvc["metadata"]["name"], report[
        "collection_problems"
    ]


@pytest.mark.parametrize(
    "source", [{"dataVolume": {}}, {"persistentVolumeClaim": {"claimName": ""}}]
)
def test_a_vmi_volume_whose_source_names_nothing_is_named(
    tmp_path: Path, source: dict[str, Any]
) -> None:
    """A VMI volume ``dataVolume: {}`` (its name deleted; bench.mutations delete, seed 252)
    or a claim named ``""``: which data the running guest mounts is unknown. Named as a VM's
    volume would be."""
    docs = _docs("RR-BKP-004/pass-fs-backup-opt-out-snapshots-block-disks.yaml")
    baseline = _audit_whole(tmp_path / "ok", docs)
    vmi = next(d for d in docs if d["kind"] == "VirtualMachineInstance")
    volume = vmi["spec"]["volumes"][0]
    vmi["spec"]["volumes"][0] = {"name": volume["name"], **source}
    report = _audit_whole(tmp_path / "bad", docs)
    assert RANK[_vm(report)["readiness"]] >= RANK[_vm(baseline)["readiness"]]
    named = [
        p
        for p in report["collection_problems"]
        if p["kind"] == "VirtualMachineInstance"
        and p["field"].startswith(f"spec.volumes[{volume['name']}].")
    ]
    assert len(named) == 1, report["collection_problems"]


def test_a_restore_namespace_mapping_written_null_is_named(tmp_path: Path) -> None:
    """A drill's ``spec.namespaceMapping: null`` (bench.mutations null_list, seed 301 over the
    shared export) read as "restored in place" with nothing named. The API server drops a
    null field, so no export of a stored Restore holds one: named; the verdict is no better."""
    docs = _docs("RR-RST-002/pass-drill-labelled.yaml")
    baseline = _audit(tmp_path / "ok", docs)
    restore = next(d for d in docs if d["kind"] == "Restore" and "namespaceMapping" in d["spec"])
    restore["spec"]["namespaceMapping"] = None
    report = _audit(tmp_path / "bad", docs)
    named = [
        p
        for p in report["collection_problems"]
        if p["kind"] == "Restore" and p["field"] == "spec.namespaceMapping"
    ]
    assert len(named) == 1 and "is null" in named[0]["reason"], report["collection_problems"]
    assert RANK[_vm(report)["readiness"]] >= RANK[_vm(baseline)["readiness"]]
