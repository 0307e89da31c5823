"""Red-team round fz18: file-level damage and fields the earlier families did not reach.

The rule: malformed input never improves a verdict. A broken file or field is a collection
problem naming file, kind, object and field; the run is incomplete; the checks that read it
give ERROR (or a verdict no better than before), never PASS or NOT_APPLICABLE for a FAIL.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from auditor.config import AuditSettings
from auditor.kinds import BY_KIND
from auditor.pipeline import audit_data
from auditor.sources.base import KindState
from auditor.sources.directory import DirectorySource
from tests.conftest import AUDIT_AT, report_doc
from tests.test_evidence_gaps import _docs

RANK = {"READY": 0, "AT_RISK": 1, "UNKNOWN": 2, "NOT_READY": 2}
STG_FIXTURE = "RR-STG-001/fail-delete-no-copy.yaml"


def _write(root: Path, files: dict[str, str]) -> dict[str, Any]:
    root.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (root / name).write_text(text)
    return report_doc(audit_data(DirectorySource(root).collect(), AuditSettings(), at=AUDIT_AT))


def _write_whole(root: Path, files: dict[str, str]) -> dict[str, Any]:
    """As :func:`_write`, every kind the files lack read as empty (as a fixture is)."""
    root.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (root / name).write_text(text)
    data = DirectorySource(root).collect()
    for kind in BY_KIND:
        if data.states.get(kind) is not KindState.PARTIAL:
            data.states[kind] = KindState.COMPLETE
    return report_doc(audit_data(data, AuditSettings(), at=AUDIT_AT))


def _split(kind: str) -> tuple[str, str]:
    """The STG fixture as two files: every object but ``kind``'s, and ``kind``'s List."""
    docs = _docs(STG_FIXTURE)
    rest = [d for d in docs if d["kind"] != kind]
    mine = {"apiVersion": "v1", "kind": "List", "items": [d for d in docs if d["kind"] == kind]}
    assert mine["items"]
    return yaml.safe_dump_all(rest), yaml.safe_dump(mine)


def _rank(report: dict[str, Any]) -> dict[str, int]:
    return {v["name"]: RANK[v["readiness"]] for v in report["vms"]}


# -- a file that holds no object --------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["", "# exported by hand\n", "---\n---\n", "\n   \n"],
    ids=["0-bytes", "comment", "separators", "blanks"],
)
def test_a_file_that_holds_no_object_is_named_and_its_kind_partial(
    tmp_path: Path, text: str
) -> None:
    """A 0-byte persistentvolumes.yaml read as "kind not read" with no collection problem
    naming the file; ``oc get`` writes ``items: []`` for a kind without objects, so a file
    with no document was cut or blanked."""
    rest, pvs = _split("PersistentVolume")
    baseline = _write(tmp_path / "ok", {"all.yaml": rest, "persistentvolumes.yaml": pvs})
    report = _write(tmp_path / "cut", {"all.yaml": rest, "persistentvolumes.yaml": text})
    named = [p for p in report["collection_problems"] if p["file"] == "persistentvolumes.yaml"]
    assert len(named) == 1, report["collection_problems"]
    assert named[0]["kinds"] == ["PersistentVolume"]
    assert "persistentvolumes.yaml" in named[0]["reason"]
    assert report["run"]["complete"] is False
    for name, rank in _rank(report).items():
        assert rank >= _rank(baseline)[name]


def test_an_empty_file_whose_name_gives_no_kind_could_have_held_any(tmp_path: Path) -> None:
    (tmp_path / "extra.yaml").write_text("")
    (tmp_path / "vms.yaml").write_text(yaml.safe_dump_all(_docs(STG_FIXTURE)))
    data = DirectorySource(tmp_path).collect()
    (problem,) = [p for p in data.problems if p.file == "extra.yaml"]
    assert set(problem.kinds) == set(BY_KIND)
    assert data.state("VirtualMachine") is KindState.PARTIAL


# -- a document or a List's items that is no object ---------------------------------------------


@pytest.mark.parametrize(
    "extra",
    ["---\nhello\n", "---\n- a\n- b\n"],
    ids=["scalar-document", "list-document"],
)
def test_a_document_that_is_no_object_leaves_its_files_kind_partial(
    tmp_path: Path, extra: str
) -> None:
    """A multi-document persistentvolumes.yaml whose second document was damaged into a
    scalar or a list was named, but the PersistentVolume list still read complete: the
    damaged document may have held a PersistentVolume."""
    rest, pvs = _split("PersistentVolume")
    (tmp_path / "all.yaml").write_text(rest)
    (tmp_path / "persistentvolumes.yaml").write_text(pvs + extra)
    data = DirectorySource(tmp_path).collect()
    (problem,) = [p for p in data.problems if p.file == "persistentvolumes.yaml"]
    assert problem.kinds == ("PersistentVolume",)
    assert data.state("PersistentVolume") is KindState.PARTIAL


_MISSING = object()


@pytest.mark.parametrize(
    "items",
    [{"a": 1}, 3, "x", None, _MISSING],
    ids=["mapping", "number", "string", "null", "missing"],
)
def test_a_typed_lists_items_of_another_type_leave_its_kind_partial(
    tmp_path: Path, items: Any
) -> None:
    """``PersistentVolumeList`` with ``items`` a mapping, a scalar, null or missing, in a file
    whose name gives no kind: named (a missing one as "a List nested in a List", every kind
    partial), but the PersistentVolumes read from other files looked complete."""
    rest, pvs = _split("PersistentVolume")
    (tmp_path / "all.yaml").write_text(rest)
    (tmp_path / "persistentvolumes.yaml").write_text(pvs)
    doc: dict[str, Any] = {"apiVersion": "v1", "kind": "PersistentVolumeList"}
    if items is not _MISSING:
        doc["items"] = items
    (tmp_path / "more.yaml").write_text(yaml.safe_dump(doc))
    data = DirectorySource(tmp_path).collect()
    (problem,) = [p for p in data.problems if p.file == "more.yaml"]
    assert problem.field == "items"
    assert problem.kinds == ("PersistentVolume",)
    assert data.state("PersistentVolume") is KindState.PARTIAL


# -- a reference or driver name with a blank ----------------------------------------------------

PADDED_FIXTURE = "RR-BKP-004/pass.yaml"
_VM_SPEC = ("spec", "template", "spec")


def _at(obj: dict[str, Any], path: tuple[str | int, ...]) -> dict[str, Any]:
    for step in path:
        obj = obj[step]  # type: ignore[index]
    return obj


@pytest.mark.parametrize(
    ("kind", "path", "key", "field"),
    [
        ("VirtualMachine", (*_VM_SPEC, "volumes", 0, "dataVolume"), "name", "dataVolume.name"),
        ("VirtualMachine", (*_VM_SPEC, "networks", 1, "multus"), "networkName", "networkName"),
        ("PersistentVolume", ("spec", "csi"), "driver", "spec.csi.driver"),
        ("StorageClass", (), "provisioner", "provisioner"),
        ("Backup", ("spec",), "storageLocation", "spec.storageLocation"),
        ("VirtualMachineInstance", ("spec", "volumes", 0), "name", ".name"),
        ("VirtualMachineInstance", ("spec", "domain", "devices", "disks", 0), "name", ".name"),
    ],
    ids=[
        "vm-datavolume",
        "vm-network",
        "pv-driver",
        "sc-provisioner",
        "backup-location",
        "vmi-volume",
        "vmi-disk",
    ],
)
@pytest.mark.parametrize("pad", ["{} ", " {}", "{}\t"], ids=["after", "before", "tab"])
def test_a_name_with_a_blank_is_named_and_never_improves_a_verdict(
    tmp_path: Path, kind: str, path: tuple[str | int, ...], key: str, field: str, pad: str
) -> None:
    """A reference, CSI driver or provisioner with a blank names nothing on any cluster: it
    read as another name (a disk whose DataVolume is gone, a driver with no snapshot class,
    a Backup at no location) and changed findings with nothing named (``padded``)."""
    from tests.test_evidence_gaps import _complete, _of

    docs = _docs(PADDED_FIXTURE)
    baseline = _complete(tmp_path / "ok", PADDED_FIXTURE, docs)
    target = _of(docs, kind)[-1]
    holder = _at(target, path)
    holder[key] = pad.format(holder[key])
    report = _complete(tmp_path / "mutated", PADDED_FIXTURE, docs)
    named = [
        p
        for p in report["collection_problems"]
        if p["kind"] == kind
        and p["name"] == target["metadata"]["name"]
        and (p["field"] or "").endswith(field)
    ]
    assert named, report["collection_problems"]
    assert report["run"]["complete"] is False
    for name, rank in _rank(report).items():
        assert rank >= _rank(baseline)[name]


# -- a running disk's bootOrder below 1 ---------------------------------------------------------

BOOT_FIXTURE = "RR-DSK-003/fail-boot-disk-changed-while-running.yaml"


@pytest.mark.parametrize("order", [-1, 0], ids=["negative", "zero"])
def test_a_vmi_boot_order_below_one_is_named_not_read_as_the_boot_disk(
    tmp_path: Path, order: int
) -> None:
    """The VM boots from ``data`` (bootOrder 1) while its VMI runs from ``root``: FAIL. A VMI
    whose ``data`` disk says bootOrder -1 (KubeVirt refuses an order below 1, as it does in
    the VM, where this was named already) read as booting from ``data``: FAIL -> PASS, with
    nothing named (``negative``)."""
    from tests.test_evidence_gaps import _complete, _finding, _of

    docs = _docs(BOOT_FIXTURE)
    baseline = _complete(tmp_path / "ok", BOOT_FIXTURE, docs)
    assert _finding(baseline, "RR-DSK-003")["status"] == "FAIL"
    vmi = _of(docs, "VirtualMachineInstance")[0]
    disk = next(d for d in vmi["spec"]["domain"]["devices"]["disks"] if d["name"] == "data")
    disk["bootOrder"] = order
    report = _complete(tmp_path / "mutated", BOOT_FIXTURE, docs)
    named = [
        p
        for p in report["collection_problems"]
        if p["kind"] == "VirtualMachineInstance" and (p["field"] or "").endswith("bootOrder")
    ]
    assert named and named[0]["name"] == "vm1", report["collection_problems"]
    assert _finding(report, "RR-DSK-003")["status"] == "ERROR"
    assert _rank(report)["vm1"] >= _rank(baseline)["vm1"]


def test_a_list_without_items_is_named_as_such_and_only_its_files_kind_partial(
    tmp_path: Path,
) -> None:
    (tmp_path / "persistentvolumes.yaml").write_text(
        'apiVersion: v1\nkind: List\nmetadata:\n  resourceVersion: ""\n'
    )
    data = DirectorySource(tmp_path).collect()
    (problem,) = data.problems
    assert problem.reason == "persistentvolumes.yaml: List field items is missing, not a list"
    assert (problem.field, problem.kinds) == ("items", ("PersistentVolume",))
    assert data.state("PersistentVolume") is KindState.PARTIAL


# -- a medium FAIL beside a disk whose capture is not evidenced ---------------------------------

NODE_AGENT_FIXTURE = "RR-BKP-004/error-data-mover-node-agent-unreadable.yaml"


@pytest.mark.parametrize("field", ["spec", "labels"])
def test_a_missing_state_pvc_never_hides_disks_not_evidenced(tmp_path: Path, field: str) -> None:
    """The data disks' DataUploads are Completed but whether the node-agent restores them is
    unknown: RR-BKP-004 ERROR high, UNKNOWN. With the state PVC's DataUpload written with a
    null spec or null labels, the state PVC read as not captured and RR-BKP-004 gave its
    medium FAIL for it alone: UNKNOWN -> AT_RISK (``null_list`` over our fixtures)."""
    from tests.test_evidence_gaps import _complete, _finding, _of

    docs = _docs(NODE_AGENT_FIXTURE)
    baseline = _complete(tmp_path / "ok", NODE_AGENT_FIXTURE, docs)
    assert _finding(baseline, "RR-BKP-004")["status"] == "ERROR"
    upload = next(u for u in _of(docs, "DataUpload") if "persistent-state" in u["metadata"]["name"])
    if field == "spec":
        upload["spec"] = None
    else:
        upload["metadata"]["labels"] = None
    report = _complete(tmp_path / "mutated", NODE_AGENT_FIXTURE, docs)
    finding = _finding(report, "RR-BKP-004")
    assert (finding["status"], finding["severity"]) == ("ERROR", "high"), finding["message"]
    assert "persistent-state-for-vm1-abcde" in finding["message"]
    assert _rank(report)["vm1"] >= _rank(baseline)["vm1"]


# -- a per-volume Velero item that cannot say whose volume it copied ----------------------------

DOWNLOAD_FIXTURE = "RR-RST-001/fail-data-download-failed.yaml"
_UNSET = object()


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("spec", "targetVolume"), None),
        (("spec", "targetVolume"), "junk"),
        (("spec",), None),
        (("spec", "targetVolume", "pvc"), _UNSET),
        (("metadata", "labels"), None),
    ],
    ids=["target-null", "target-string", "spec-null", "pvc-missing", "labels-null"],
)
def test_a_data_download_that_names_no_volume_or_restore_is_named_and_unread(
    tmp_path: Path, path: tuple[str, ...], value: Any
) -> None:
    """A failed DataDownload of the drill gives RR-RST-001 its FAIL (AT_RISK). Written with
    a null or string ``spec.targetVolume``, a null ``spec`` or null labels (Velero creates
    each with its volume and labels it with its Restore), it matched no volume or no Restore
    and vanished: AT_RISK -> READY, nothing named."""
    from tests.test_evidence_gaps import _complete, _finding, _of

    docs = _docs(DOWNLOAD_FIXTURE)
    baseline = _complete(tmp_path / "ok", DOWNLOAD_FIXTURE, docs)
    assert _finding(baseline, "RR-RST-001")["status"] == "FAIL"
    failed = next(o for o in _of(docs, "DataDownload") if o["status"]["phase"] == "Failed")
    holder = _at(failed, path[:-1])
    if value is _UNSET:
        del holder[path[-1]]
    else:
        holder[path[-1]] = value
    report = _complete(tmp_path / "mutated", DOWNLOAD_FIXTURE, docs)
    named = [
        p
        for p in report["collection_problems"]
        if p["kind"] == "DataDownload" and p["name"] == failed["metadata"]["name"]
    ]
    assert named, report["collection_problems"]
    assert report["run"]["complete"] is False
    assert _finding(report, "RR-RST-001")["status"] in ("FAIL", "ERROR")
    assert _rank(report)["vm1"] >= _rank(baseline)["vm1"]


UNREAD_DOWNLOAD_FIXTURE = "RR-RST-001/error-data-download-unreadable.yaml"


@pytest.mark.parametrize("status", [None, {}], ids=["status-null", "phase-missing"])
def test_a_failed_data_restore_never_hides_one_that_is_unknown(tmp_path: Path, status: Any) -> None:
    """One DataDownload of the drill is unreadable: RR-RST-001 ERROR medium, UNKNOWN. With
    the other one's status null or without its phase, RR-RST-001 gave a medium FAIL for it
    and dropped the unknown disk: UNKNOWN -> AT_RISK."""
    from tests.test_evidence_gaps import _complete, _finding, _of

    docs = _docs(UNREAD_DOWNLOAD_FIXTURE)
    baseline = _complete(tmp_path / "ok", UNREAD_DOWNLOAD_FIXTURE, docs)
    assert _finding(baseline, "RR-RST-001")["status"] == "ERROR"
    root = next(
        o for o in _of(docs, "DataDownload") if o["metadata"].get("name", "").endswith("root")
    )
    root["status"] = status
    report = _complete(tmp_path / "mutated", UNREAD_DOWNLOAD_FIXTURE, docs)
    finding = _finding(report, "RR-RST-001")
    assert finding["status"] == "ERROR", finding["message"]
    assert "drill-20261128-root" in finding["message"]
    assert _rank(report)["vm1"] >= _rank(baseline)["vm1"]


# -- a Backup's hook counters of another shape --------------------------------------------------


@pytest.mark.parametrize(
    "hooks",
    [
        [{"hooksAttempted": 8}],
        "junk",
        {"hooksAttempted": 8, "hooksFailed": "1"},
        {"hooksFailed": -1},
    ],
    ids=["list", "string", "count-as-string", "negative"],
)
def test_a_backup_hook_status_of_another_shape_is_named(tmp_path: Path, hooks: Any) -> None:
    """RR-BKP-011 reads ``status.hookStatus.hooksFailed`` (Velero's HookStatus, Go ints): a
    hookStatus written as a list read as "failed hooks unknown" and changed the finding with
    nothing named (``mapping_list`` over the shared export)."""
    from tests.test_evidence_gaps import _complete, _of

    fixture = "RR-BKP-001/pass.yaml"
    docs = _docs(fixture)
    newest = max(_of(docs, "Backup"), key=lambda b: b["metadata"]["name"])
    newest["status"]["hookStatus"] = hooks
    report = _complete(tmp_path, fixture, docs)
    named = [
        p
        for p in report["collection_problems"]
        if p["kind"] == "Backup"
        and p["name"] == newest["metadata"]["name"]
        and (p["field"] or "").startswith("status.hookStatus")
    ]
    assert named, report["collection_problems"]
    assert report["run"]["complete"] is False


def test_an_unread_pv_list_never_lets_the_class_policy_stand_in_for_the_pvs(
    tmp_path: Path,
) -> None:
    """The PVs say Delete while their StorageClass now says Retain (a PV keeps the policy it
    was provisioned with, and the PV's own wins): RR-STG-001 FAIL. With
    persistentvolumes.yaml cut to 0 bytes the PV list is partial, and the disks read as on
    Retain storage from their class: FAIL -> PASS."""
    from tests.test_evidence_gaps import _finding

    docs = _docs(STG_FIXTURE)
    for doc in docs:
        if doc["kind"] == "StorageClass" and doc["metadata"]["name"] == "delete-sc":
            doc["reclaimPolicy"] = "Retain"
    rest = yaml.safe_dump_all([d for d in docs if d["kind"] != "PersistentVolume"])
    pvs = yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "List",
            "items": [d for d in docs if d["kind"] == "PersistentVolume"],
        }
    )
    baseline = _write_whole(tmp_path / "ok", {"all.yaml": rest, "persistentvolumes.yaml": pvs})
    assert _finding(baseline, "RR-STG-001")["status"] == "FAIL"
    report = _write_whole(tmp_path / "cut", {"all.yaml": rest, "persistentvolumes.yaml": ""})
    assert _finding(report, "RR-STG-001")["status"] == "ERROR"
    for name, rank in _rank(report).items():
        assert rank >= _rank(baseline)[name]
