"""Malformed fields left unnamed before b40, and RR-STG-001's reason for an uncounted copy.

Each case edits one field of a check fixture (tests/fixtures/checks), as fz39 does, and
asserts the exact problem named (kind, object, field, file), the finding that rests on it
and the VM's verdict, never better than before (docs/readiness.md, "Round b40").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from auditor.inventory.records import PARSERS
from auditor.sources.directory import UID_READ_KINDS
from tests.test_bugclasses_bc39 import (
    CSI_BLOCK,
    RETAINED_SNAPSHOTS,
    VM_SNAPSHOT,
    _on_longhorn,
)
from tests.test_bugclasses_bc39 import _audit as _audit_docs
from tests.test_check_fixtures import FIXTURES, audit_fixture
from tests.test_evidence_gaps import _docs, _finding


def _write(tmp_path: Path, text: str, *edits: tuple[str, str]) -> Path:
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new, 1)
    path = tmp_path / "export.yaml"
    path.write_text(text)
    return path


def _vm(doc: dict[str, Any], ref: str = "app/vm1") -> dict[str, Any]:
    return next(v for v in doc["vms"] if f"{v['namespace']}/{v['name']}" == ref)


def _check(doc: dict[str, Any], check: str, ref: str = "app/vm1") -> dict[str, Any]:
    return next(f for f in _vm(doc, ref)["findings"] if f["check_id"] == check)


def _named(doc: dict[str, Any], kind: str) -> list[tuple[str | None, str | None, str | None]]:
    return [
        (p["namespace"], p["name"], p["field"])
        for p in doc["collection_problems"]
        if p["kind"] == kind
    ]


def _files(doc: dict[str, Any]) -> set[str]:
    """The files the problems name (a document's ``#docN`` left out)."""
    return {p["file"].split("#", 1)[0] for p in doc["collection_problems"]}


# -- 1. metadata.uid that is no string ---------------------------------------------------

#: vm1's three claims copied by Completed PodVolumeBackups labelled with their UIDs
_FS = (FIXTURES / "RR-BKP-004" / "pass-fs-backup-podvolumebackups.yaml").read_text()
_ROOT_UID = "  uid: uid-pvc-app-vm1-root\n"


def test_the_uid_baseline_is_ready(tmp_path: Path) -> None:
    doc = audit_fixture(_write(tmp_path, _FS))
    assert _check(doc, "RR-BKP-004")["status"] == "PASS"
    assert _vm(doc)["readiness"] == "READY"
    assert doc["collection_problems"] == []


@pytest.mark.parametrize("uid", ["42", "[uid-pvc-app-vm1-root]", "{a: b}", "true"])
def test_a_claim_uid_that_is_no_string_is_named_and_no_verdict(tmp_path: Path, uid: str) -> None:
    """https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#uids: the API
    server writes a UID string, and Velero ties a copy to its claim by it (velero.io/pvc-uid).
    Before b40 the claim was unnamed and its copy dropped: RR-BKP-004 PASS -> FAIL."""
    doc = audit_fixture(_write(tmp_path, _FS, (_ROOT_UID, f"  uid: {uid}\n")))
    assert _named(doc, "PersistentVolumeClaim") == [("app", "vm1-root", "metadata.uid")]
    assert _files(doc) == {"export.yaml"}
    for check in ("RR-BKP-001", "RR-BKP-004", "RR-STG-001"):
        assert _check(doc, check)["status"] == "ERROR", check
    assert _vm(doc)["readiness"] == "UNKNOWN"
    assert doc["run"]["complete"] is False


def test_a_number_uid_never_matches_a_label_of_its_digits(tmp_path: Path) -> None:
    """``uid: 42`` beside a PodVolumeBackup labelled ``velero.io/pvc-uid: "42"`` proved the
    copy by ``str(42) == "42"``: the would-be result no longer counts it."""
    doc = audit_fixture(
        _write(
            tmp_path,
            _FS,
            (_ROOT_UID, "  uid: 42\n"),
            ("    velero.io/pvc-uid: uid-pvc-app-vm1-root\n", "    velero.io/pvc-uid: '42'\n"),
        )
    )
    f = _check(doc, "RR-BKP-004")
    assert f["status"] == "ERROR"
    assert f["evidence"]["would_be"]["status"] == "FAIL"
    assert "no PodVolumeBackup names PVC vm1-root" in f["evidence"]["would_be"]["message"]


def test_a_vm_uid_that_is_no_string_is_named(tmp_path: Path) -> None:
    doc = audit_fixture(_write(tmp_path, _FS, ("  uid: uid-vm-app-vm1\n", "  uid: 12345\n")))
    assert _named(doc, "VirtualMachine") == [("app", "vm1", "metadata.uid")]
    assert _check(doc, "RR-BKP-001")["status"] == "ERROR"
    assert _check(doc, "RR-STG-001")["status"] == "ERROR"
    assert _vm(doc)["readiness"] == "UNKNOWN"


def test_any_other_kinds_uid_that_is_no_string_is_named(tmp_path: Path) -> None:
    """A Backup's: owner references name an object by UID, so its kind no longer proves an
    absence, and the VM is no longer READY."""
    doc = audit_fixture(
        _write(tmp_path, _FS, ("  uid: uid-b-daily-20261130\n", "  uid: 20261130\n"))
    )
    assert _named(doc, "Backup") == [("velero", "daily-20261130", "metadata.uid")]
    assert _files(doc) == {"export.yaml"}
    assert _check(doc, "RR-BKP-004")["status"] == "ERROR"
    assert _vm(doc)["readiness"] == "UNKNOWN"


def test_the_kinds_left_to_their_readers_are_those_with_readers() -> None:
    assert {*PARSERS, "VirtualMachine"} == UID_READ_KINDS


# -- 2. VMI status.conditions keys ---------------------------------------------------------

_AGENT = (FIXTURES / "RR-BKP-011" / "pass-agent-connected.yaml").read_text()
_CONDITION = "  - status: 'True'\n    type: AgentConnected\n"


def test_the_condition_baseline_passes(tmp_path: Path) -> None:
    doc = audit_fixture(_write(tmp_path, _AGENT))
    assert _check(doc, "RR-BKP-011")["status"] == "PASS"
    assert _vm(doc)["readiness"] == "READY"


@pytest.mark.parametrize(
    ("new", "field"),
    [
        # named before b40 (kept here as proof): not a mapping, type or status no string
        ("  - AgentConnected\n", "status.conditions[0]"),
        ("  - status: 'True'\n    type: [AgentConnected]\n", "status.conditions[0].type"),
        ("  - status: true\n    type: AgentConnected\n", "status.conditions[0].status"),
        # b40: a key with a blank, in another case, or missing read as no AgentConnected
        # condition (RR-BKP-011 PASS -> FAIL), unnamed
        ("  - status: 'True'\n    'type ': AgentConnected\n", "status.conditions[0].type"),
        (
            "  - \"status\\u00a0\": 'True'\n    type: AgentConnected\n",
            "status.conditions[0].status",
        ),
        ("  - status: 'True'\n    Type: AgentConnected\n", "status.conditions[0].type"),
        ("  - type: AgentConnected\n", "status.conditions[0].status"),
        ("  - status: 'True'\n    type: AgentConnected\n    7: x\n", "status.conditions[0][7]"),
        (
            "  - status: 'True'\n    type: AgentConnected\n    \"reason\\u200b\": x\n",
            "status.conditions[0].reason",
        ),
    ],
)
def test_an_odd_vmi_condition_is_named_and_no_pass(tmp_path: Path, new: str, field: str) -> None:
    """kubevirt.io/api core/v1 ``VirtualMachineInstanceCondition``: ``type`` and ``status``
    are required, and the API server prunes an unknown key
    (https://kubernetes.io/docs/reference/kubernetes-api/common-definitions/ Condition)."""
    doc = audit_fixture(_write(tmp_path, _AGENT, (_CONDITION, new)))
    assert _named(doc, "VirtualMachineInstance") == [("app", "vm1", field)]
    assert _files(doc) == {"export.yaml"}
    assert _check(doc, "RR-BKP-011")["status"] == "ERROR"
    assert _vm(doc)["readiness"] == "UNKNOWN"
    assert doc["run"]["complete"] is False


def test_a_well_formed_unknown_condition_key_is_left_alone(tmp_path: Path) -> None:
    doc = audit_fixture(
        _write(tmp_path, _AGENT, (_CONDITION, _CONDITION + "    observedGeneration: 3\n"))
    )
    assert doc["collection_problems"] == []
    assert _check(doc, "RR-BKP-011")["status"] == "PASS"


# -- 3. a resource-policy ConfigMap whose data is no mapping of strings -----------------

_POLICY = (FIXTURES / "RR-BKP-004" / "pass-resource-policy-snapshots-every-pvc.yaml").read_text()
_DATA = (
    'data:\n  policy.yaml: "version: v1\\nvolumePolicies:\\n- conditions:\\n    csi: {driver: '
    'csi.example.com}\\n\\\n    \\  action: {type: snapshot}\\n"\n'
)


def test_the_policy_baseline_passes(tmp_path: Path) -> None:
    doc = audit_fixture(_write(tmp_path, _POLICY))
    assert _check(doc, "RR-BKP-004")["status"] == "PASS"
    assert doc["collection_problems"] == []


@pytest.mark.parametrize(
    "new", ["data: [a, b]\n", "data: 7\n", "data:\n  policy.yaml: 42\n", "data:\n  7: x\n"]
)
def test_a_policy_configmap_whose_data_is_unreadable_is_named(tmp_path: Path, new: str) -> None:
    """https://kubernetes.io/docs/concepts/configuration/configmap/: ``data`` maps strings to
    strings. Before b40 the ConfigMap was skipped as no policy and the Backup's policy read
    "not in the export", the run complete."""
    doc = audit_fixture(_write(tmp_path, _POLICY, (_DATA, new)))
    assert _named(doc, "ConfigMap") == [("velero", "vm-backup-policy", "data")]
    assert _files(doc) == {"export.yaml"}
    f = _check(doc, "RR-BKP-004")
    assert f["status"] == "ERROR"
    assert "its data is no mapping of strings" in f["message"]
    assert _vm(doc)["readiness"] == "UNKNOWN"
    assert doc["run"]["complete"] is False


def test_another_configmap_with_string_data_stays_unread_and_unnamed(tmp_path: Path) -> None:
    extra = "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n  namespace: app\ndata:\n  k: v\n"
    doc = audit_fixture(_write(tmp_path, _POLICY + extra))
    assert doc["collection_problems"] == []
    assert _check(doc, "RR-BKP-004")["status"] == "PASS"


# -- 4. an interface with two bindings ---------------------------------------------------

#: vm1 (masquerade "default", bridge "vlan") and its drill copy share a pod-network MAC
_CLONE = (FIXTURES / "RR-NIC-002" / "fail-clone-pod-network-mac.yaml").read_text()
_MASQ = "          - macAddress: 02:00:00:00:00:01\n            masquerade: {}\n"
_BRIDGE = "          - bridge: {}\n"
_DEVICES = "spec.template.spec.domain.devices.interfaces"


def test_the_binding_baseline(tmp_path: Path) -> None:
    doc = audit_fixture(_write(tmp_path, _CLONE))
    assert (_check(doc, "RR-NIC-001")["status"], _check(doc, "RR-NIC-002")["status"]) == (
        "PASS",
        "FAIL",
    )
    assert _vm(doc)["readiness"] == "AT_RISK"
    assert doc["collection_problems"] == []


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        (_MASQ, _MASQ + "            bridge: {}\n", f"{_DEVICES}[default]"),
        (_BRIDGE, _BRIDGE + "            binding: {name: passt}\n", f"{_DEVICES}[vlan]"),
        (_BRIDGE, _BRIDGE + "            sriov: {}\n", f"{_DEVICES}[vlan]"),
    ],
)
def test_an_interface_with_two_bindings_is_named_and_no_pass(
    tmp_path: Path, old: str, new: str, field: str
) -> None:
    """KubeVirt refuses it: "logical <name> interface must have exactly one binding method or
    binding plugin" (https://github.com/kubevirt/kubevirt/blob/main/pkg/network/admitter/
    binding.go validateInterfaceBindingExists). Before b40 RR-NIC-001 passed, unnamed."""
    doc = audit_fixture(_write(tmp_path, _CLONE, (old, new)))
    assert _named(doc, "VirtualMachine") == [("app", "vm1", field)]
    assert "exactly one binding method or binding plugin" in doc["collection_problems"][0]["reason"]
    for check in ("RR-NIC-001", "RR-NIC-002", "RR-RST-002"):
        assert _check(doc, check)["status"] == "ERROR", check
    assert _vm(doc)["readiness"] == "UNKNOWN"
    assert doc["run"]["complete"] is False


def test_a_running_interface_with_two_bindings_is_named(tmp_path: Path) -> None:
    vmi = "      - macAddress: 02:00:00:00:00:01\n        masquerade: {}\n"
    doc = audit_fixture(_write(tmp_path, _CLONE, (vmi, vmi + "        bridge: {}\n")))
    assert _named(doc, "VirtualMachineInstance") == [
        ("app", "vm1", "spec.domain.devices.interfaces[default]")
    ]
    # the running devices are unknown (RR-DSK-003 compares them); the medium ERROR ranks
    # below the baseline's low FAIL (docs/readiness.md, the readiness rule), never READY
    assert _check(doc, "RR-DSK-003")["status"] == "ERROR"
    assert _vm(doc)["readiness"] == "AT_RISK"


# -- 5. RR-STG-001 says why an in-volume snapshot was not counted ---------------------


def test_stg001_names_the_handle_that_keeps_a_snapshot_inside(tmp_path: Path) -> None:
    """https://github.com/longhorn/longhorn/issues/4083: a ``snap://`` snapshot goes with its
    volume, which reclaim policy Delete deletes with the claim."""
    docs = _on_longhorn(_docs(RETAINED_SNAPSHOTS), None, "snap://")
    f = _finding(_audit_docs(tmp_path, docs, RETAINED_SNAPSHOTS), "RR-STG-001")
    assert (f["status"], f["severity"]) == ("FAIL", "high")
    assert (
        "vm1-root: VolumeSnapshot vm1-root-manual: VolumeSnapshotContent "
        "snapcontent-vm1-root-manual status.snapshotHandle=snap://snap-vm1-root-manual; "
        "PersistentVolume pv-app-vm1-root spec.persistentVolumeReclaimPolicy=Delete"
    ) in f["message"]
    assert sorted(f["evidence"]["inside_volume"]) == ["vm1-data", "vm1-root"]


def test_stg001_names_the_class_parameter_of_a_backups_snapshot(tmp_path: Path) -> None:
    docs = _on_longhorn(_docs(CSI_BLOCK), "snap", None)
    f = _finding(_audit_docs(tmp_path, docs, CSI_BLOCK), "RR-STG-001")
    assert f["status"] == "FAIL"
    assert (
        "Backup daily-20261130's CSI snapshot: VolumeSnapshotClass snapclass "
        "parameters.type=snap" in f["message"]
    )
    assert (
        "PersistentVolume pv-app-vm1-data spec.persistentVolumeReclaimPolicy=Delete"
        in (f["message"])
    )


def test_stg001_names_a_vm_snapshots_inside_snapshot(tmp_path: Path) -> None:
    docs = _on_longhorn(_docs(VM_SNAPSHOT), None, "snap://")
    f = _finding(_audit_docs(tmp_path, docs, VM_SNAPSHOT), "RR-STG-001")
    assert (f["status"], f["severity"]) == ("FAIL", "high")
    assert "VirtualMachineSnapshot vm1-snap: VolumeSnapshotContent" in f["message"]


def test_stg001_without_an_inside_copy_says_nothing_of_one(tmp_path: Path) -> None:
    docs = _on_longhorn(_docs(RETAINED_SNAPSHOTS), None, "bak://")
    f = _finding(_audit_docs(tmp_path, docs, RETAINED_SNAPSHOTS), "RR-STG-001")
    assert f["status"] == "PASS"
    assert "inside_volume" not in f["evidence"]
