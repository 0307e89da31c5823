"""Verdicts that were better than the evidence allows (red team, helper-15).

Each test takes a fixture of the check catalog, changes one thing a real cluster (or a
damaged export) can hold, and asserts the finding that must change: a disk whose data sits
under an ``ephemeral`` overlay, a VolumeSnapshotContent whose ``readyToUse`` is no boolean,
a selector whose ``values`` is a string, a creation time given as a number, a
DataProtectionApplication whose plugin list is no list, and a NetworkAttachmentDefinition
created after the backups that are said to hold it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from auditor.config import AuditSettings
from auditor.pipeline import audit_data
from auditor.sources.directory import DirectorySource
from tests.conftest import AUDIT_AT, report_doc

FIXTURES = Path(__file__).parent / "fixtures" / "checks"
Docs = list[dict[str, Any]]


def _docs(fixture: str) -> Docs:
    return [d for d in yaml.safe_load_all((FIXTURES / fixture).read_text()) if d]


def _audit(tmp_path: Path, docs: Docs) -> dict[str, Any]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "c.yaml").write_text(yaml.safe_dump_all(docs))
    return report_doc(audit_data(DirectorySource(tmp_path).collect(), AuditSettings(), at=AUDIT_AT))


def _finding(report: dict[str, Any], check_id: str, vm: str = "vm1") -> dict[str, Any]:
    entry = next(v for v in report["vms"] if v["name"] == vm)
    return next(f for f in entry["findings"] if f["check_id"] == check_id)


def _of(docs: Docs, kind: str) -> Docs:
    found = [d for d in docs if d["kind"] == kind]
    assert found, kind
    return found


def _ephemeral(docs: Docs) -> None:
    """Every DataVolume volume of the VM becomes an ``ephemeral`` overlay on the same PVC."""
    vm = _of(docs, "VirtualMachine")[0]
    for volume in vm["spec"]["template"]["spec"]["volumes"]:
        if "dataVolume" in volume:
            claim = volume.pop("dataVolume")["name"]
            volume["ephemeral"] = {"persistentVolumeClaim": {"claimName": claim}}


def test_a_disk_on_an_ephemeral_overlay_is_protected_like_its_pvc(tmp_path: Path) -> None:
    """KubeVirt's ``ephemeral`` volume is a throw-away layer over a PVC that holds the disk
    image (https://kubevirt.io/user-guide/storage/disks_and_volumes/#ephemeral): a restore
    needs that PVC's data. A PVC excluded from the backups fails RR-BKP-004 as a DataVolume
    would; it was "ephemeral by design" (RR-STG-002 info) and READY."""
    docs = _docs("RR-BKP-004/fail-pvc-exclude-label.yaml")
    before = _finding(_audit(tmp_path / "dv", docs), "RR-BKP-004")
    _ephemeral(docs)
    report = _audit(tmp_path / "ephemeral", docs)
    after = _finding(report, "RR-BKP-004")
    assert before["status"] == after["status"] == "FAIL"
    assert "vm1-data" in after["message"]
    assert _finding(report, "RR-STG-002")["status"] != "FAIL"  # not "ephemeral by design"


def test_a_disk_on_an_ephemeral_overlay_whose_pvc_is_backed_up_passes(tmp_path: Path) -> None:
    """The same overlay on PVCs the backups snapshot: the capture is evidenced as before."""
    docs = _docs("RR-BKP-004/pass.yaml")
    _ephemeral(docs)
    finding = _finding(_audit(tmp_path, docs), "RR-BKP-004")
    assert finding["status"] == "PASS"
    assert "vm1-root" in str(finding["evidence"])


@pytest.mark.parametrize("value", ["true", "false", 1, ["true"]])
def test_a_snapshot_content_readiness_that_is_no_boolean_proves_nothing(
    tmp_path: Path, value: object
) -> None:
    """A VolumeSnapshotContent ``status.readyToUse: "false"`` was neither ready nor failed, so
    the Backup's counters alone proved the PVC (READY). It is now named, and the counters of
    that Backup prove no PVC: RR-BKP-004 is no longer a PASS."""
    docs = _docs("RR-BKP-004/pass.yaml")
    assert _finding(_audit(tmp_path / "base", docs), "RR-BKP-004")["status"] == "PASS"
    for content in _of(docs, "VolumeSnapshotContent"):
        content["status"]["readyToUse"] = value
    report = _audit(tmp_path / "bad", docs)
    assert _finding(report, "RR-BKP-004")["status"] == "ERROR"
    named = [
        p
        for p in report["collection_problems"]
        if p["kind"] == "VolumeSnapshotContent" and p["field"] == "status.readyToUse"
    ]
    assert len(named) == len(_of(docs, "VolumeSnapshotContent"))
    assert "not true or false" in named[0]["reason"]


def _exclude_vm1(backup: dict[str, Any], values: object) -> None:
    backup["spec"]["labelSelector"] = {
        "matchExpressions": [{"key": "app", "operator": "NotIn", "values": values}]
    }


def test_a_selector_whose_values_is_a_string_is_malformed_not_read_letter_by_letter(
    tmp_path: Path,
) -> None:
    """``values: "vm1"`` is no list of strings (the API server refuses it); it was read as the
    letters v, m, 1, so ``NotIn`` no longer left the VM out and the VM was held (READY)."""
    docs = _docs("RR-BKP-001/pass.yaml")
    vm = _of(docs, "VirtualMachine")[0]
    vm["metadata"].setdefault("labels", {})["app"] = "vm1"
    for backup in _of(docs, "Backup"):
        _exclude_vm1(backup, ["vm1"])
    listed = _finding(_audit(tmp_path / "list", docs), "RR-BKP-001")
    for backup in _of(docs, "Backup"):
        _exclude_vm1(backup, "vm1")
    report = _audit(tmp_path / "string", docs)
    assert listed["status"] == "FAIL"
    assert _finding(report, "RR-BKP-001")["status"] in ("FAIL", "ERROR")
    assert any(
        "not a list of strings" in p["reason"] and p["field"] == "Backup.spec.labelSelector"
        for p in report["collection_problems"]
    ), report["collection_problems"]


@pytest.mark.parametrize(
    ("selector", "why"),
    [
        ({"matchLabels": {"app": 1}}, "not a string label"),
        ({"matchExpressions": [{"key": "app", "operator": "In"}]}, "has no values"),
        (
            {"matchExpressions": [{"key": "app", "operator": "Exists", "values": ["x"]}]},
            "has values",
        ),
    ],
)
def test_selectors_velero_could_not_use_raise(selector: dict[str, Any], why: str) -> None:
    """``metav1.LabelSelectorAsSelector`` refuses these; the auditor never guesses a match."""
    from auditor.scope import SelectorError, selector_matches

    with pytest.raises(SelectorError, match=why):
        selector_matches(selector, {"app": "1"})


def test_a_vm_creation_time_given_as_a_number_is_malformed_not_nanoseconds(
    tmp_path: Path,
) -> None:
    """``creationTimestamp: 1764471600`` was read as nanoseconds since 1970, so a VM created
    after its backups looked older than them (READY). It is now a malformed field: the
    backup checks cannot conclude."""
    docs = _docs("RR-BKP-001/pass.yaml")
    assert _finding(_audit(tmp_path / "base", docs), "RR-BKP-001")["status"] == "PASS"
    _of(docs, "VirtualMachine")[0]["metadata"]["creationTimestamp"] = 1764471600
    finding = _finding(_audit(tmp_path / "bad", docs), "RR-BKP-001")
    assert finding["status"] == "ERROR"
    assert "metadata.creationTimestamp" in finding["message"]


def _dpa_plugins(value: object) -> Callable[[Docs], None]:
    def change(docs: Docs) -> None:
        for dpa in _of(docs, "DataProtectionApplication"):
            dpa["spec"]["configuration"]["velero"]["defaultPlugins"] = value

    return change


@pytest.mark.parametrize("value", ["openshift,aws,csi,kubevirt", {"kubevirt": True}])
def test_a_plugin_list_that_is_no_list_makes_the_kubevirt_plugin_s_refusals_apply(
    tmp_path: Path, value: object
) -> None:
    """A running VM in backups that exclude pods: the kubevirt plugin refuses it. With
    ``defaultPlugins`` a string, whether the plugin runs is unknown; it counted as absent, and
    the refusal with it (READY). The field is named and the refusal applies, as for a DPA that
    could not be read."""
    docs = _docs("RR-BKP-001/pass.yaml")
    for backup in _of(docs, "Backup"):
        backup["spec"]["excludedResources"] = ["pods"]
    refused = _finding(_audit(tmp_path / "list", docs), "RR-BKP-001")
    _dpa_plugins(value)(docs)
    report = _audit(tmp_path / "bad", docs)
    assert refused["status"] == "FAIL"
    assert _finding(report, "RR-BKP-001")["status"] == refused["status"]
    named = [p for p in report["collection_problems"] if p["kind"] == "DataProtectionApplication"]
    assert named and named[0]["field"] == "spec.configuration.velero.defaultPlugins"


def _static_nad_docs() -> Docs:
    docs = _docs("RR-NET-002/pass.yaml")
    _of(docs, "NetworkAttachmentDefinition")
    return docs


def test_a_nad_created_after_the_backups_began_is_in_none_of_them(tmp_path: Path) -> None:
    """RR-NET-002 judged the backups' filters only: a NAD created after every backup began
    passed, though no backup can hold an object that did not exist yet."""
    docs = _static_nad_docs()
    assert _finding(_audit(tmp_path / "base", docs), "RR-NET-002")["status"] == "PASS"
    nad = _of(docs, "NetworkAttachmentDefinition")[0]
    nad["metadata"]["creationTimestamp"] = "2026-11-30T03:00:00Z"  # after daily-20261130 began
    finding = _finding(_audit(tmp_path / "late", docs), "RR-NET-002")
    assert finding["status"] == "FAIL"
    assert "created after the backup began" in finding["message"]
    assert {g["backup"] for g in finding["evidence"]["gaps"]} == {
        b["metadata"]["name"] for b in _of(docs, "Backup")
    }
    nad["metadata"]["creationTimestamp"] = "2026-11-27T00:00:00Z"  # before every backup
    assert _finding(_audit(tmp_path / "early", docs), "RR-NET-002")["status"] == "PASS"
    nad["metadata"]["creationTimestamp"] = 1764471600
    assert _finding(_audit(tmp_path / "number", docs), "RR-NET-002")["status"] == "ERROR"


def test_a_template_label_that_is_no_string_leaves_the_vm_s_services_unknown(
    tmp_path: Path,
) -> None:
    """bench.mutations seed 77: ``spec.template.metadata.labels`` with a number no longer
    matched the Service selecting the VM's pods, so RR-NET-003 found no Service and a VM that
    was UNKNOWN became READY. The API server refuses such a label: the field is malformed and
    RR-NET-003, which reads it, cannot conclude."""
    docs = _docs("RR-NET-003/pass.yaml")
    assert _finding(_audit(tmp_path / "base", docs), "RR-NET-003")["status"] == "PASS"
    labels = _of(docs, "VirtualMachine")[0]["spec"]["template"]["metadata"]["labels"]
    key = next(iter(labels))
    labels[key] = 42
    finding = _finding(_audit(tmp_path / "bad", docs), "RR-NET-003")
    assert finding["status"] == "ERROR"
    assert "spec.template.metadata.labels" in finding["message"]


@pytest.mark.parametrize(
    ("fixture", "kind", "path", "value", "field"),
    [
        ("RR-BKP-001/pass.yaml", "Backup", ("spec", "storageLocation"), 42, "spec.storageLocation"),
        (
            "RR-BKP-001/fail-bsl-unavailable.yaml",
            "VolumeSnapshotContent",
            ("spec", "deletionPolicy"),
            42,
            "spec.deletionPolicy",
        ),
        (
            "RR-STG-001/fail-cpu-hotplug-vm-snapshot-not-restorable.yaml",
            "VirtualMachineSnapshotContent",
            ("spec", "source", "virtualMachine", "spec", "template", "spec", "domain"),
            "junk",
            "spec.source.virtualMachine.spec.template.spec.domain",
        ),
    ],
)
def test_fields_that_changed_verdicts_unnamed_are_named(
    tmp_path: Path, fixture: str, kind: str, path: tuple[str, ...], value: object, field: str
) -> None:
    """bench.mutations seed 77: each of these changed a verdict without naming the field."""
    docs = _docs(fixture)
    target = _of(docs, kind)[0]
    node = target
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value
    report = _audit(tmp_path, docs)
    named = [p for p in report["collection_problems"] if p["kind"] == kind and p["field"] == field]
    assert named, report["collection_problems"]
    assert named[0]["name"] == target["metadata"]["name"]
