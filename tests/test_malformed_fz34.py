"""Red-team round fz34: malformed input never improves a verdict (new kinds).

Shapes the ``bench.mutations`` families ``uid_twice``, ``filed_elsewhere`` and ``raw_text``
make, each shrunk to a small export built here from ``tests/fixtures/checks``: two objects with
one ``metadata.uid``, an object filed under another namespace's folder, and files whose bytes
no export writes (UTF-16, a NUL byte, a custom tag, JSON or a List cut short). Each is a
collection problem naming file, kind, object and field; the run is incomplete; no verdict is
better than before.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from auditor.config import AuditSettings
from auditor.pipeline import audit_data
from auditor.sources.directory import DirectorySource, folder_namespace
from tests.conftest import AUDIT_AT, report_doc
from tests.test_evidence_gaps import _complete, _docs, _finding
from tests.test_malformed_fz14 import _no_better, _vm1

Docs = list[dict[str, Any]]

FS_PASS = "RR-BKP-004/pass-fs-backup-podvolumebackups.yaml"


def _problems(report: dict[str, Any], field: str) -> list[dict[str, Any]]:
    return [p for p in report["collection_problems"] if p["field"] == field]


def _pvc(docs: Docs, name: str) -> dict[str, Any]:
    return next(
        d for d in docs if d["kind"] == "PersistentVolumeClaim" and d["metadata"]["name"] == name
    )


# -- two objects with one metadata.uid ---------------------------------------------------------


def test_a_claim_with_another_claims_uid_borrows_no_podvolumebackup(tmp_path: Path) -> None:
    """Velero labels each PodVolumeBackup with the UID of the claim it copied
    (``velero.io/pvc-uid``), and capture evidence is also looked up by that UID: a claim given
    the UID of the VM's other claim counted that claim's PodVolumeBackup as its own, and a VM
    whose data disk had no copy read READY with nothing named (bench.mutations uid_twice).
    The API server gives every object its own UID
    (https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#uids): now both
    claims are named at ``metadata.uid``, the run is incomplete and the VM is no better."""
    docs = [d for d in _docs(FS_PASS) if d["metadata"].get("name") != "daily-20261130-vm1-data"]
    before = _complete(tmp_path / "a", FS_PASS, docs)
    assert _finding(before, "RR-BKP-004")["status"] == "FAIL"
    assert _vm1(before)["readiness"] == "NOT_READY"
    _pvc(docs, "vm1-data")["metadata"]["uid"] = _pvc(docs, "vm1-root")["metadata"]["uid"]
    after = _complete(tmp_path / "b", FS_PASS, docs)
    _no_better(before, after)
    assert _finding(after, "RR-BKP-004")["status"] != "PASS"
    found = _problems(after, "metadata.uid")
    assert [(p["kind"], p["name"]) for p in found] == [("PersistentVolumeClaim", "vm1-data")]
    assert "vm1-root" in found[0]["reason"] and found[0]["file"] == "c.yaml"
    assert after["run"]["complete"] is False


def test_one_uid_on_objects_of_two_kinds_is_named(tmp_path: Path) -> None:
    """A Backup with the VM's UID: both kinds' lists no longer prove anything, the VM's
    checks give ERROR (never PASS where they failed)."""
    docs = _docs(FS_PASS)
    vm = next(d for d in docs if d["kind"] == "VirtualMachine")
    before = _complete(tmp_path / "a", FS_PASS, docs)
    backup = next(d for d in docs if d["kind"] == "Backup")
    backup["metadata"]["uid"] = vm["metadata"]["uid"]
    after = _complete(tmp_path / "b", FS_PASS, docs)
    _no_better(before, after)
    found = _problems(after, "metadata.uid")
    assert len(found) == 1 and found[0]["kind"] in ("Backup", "VirtualMachine")
    assert after["run"]["complete"] is False
    assert _vm1(after)["readiness"] != "READY"


# -- an object filed under another namespace's folder ------------------------------------------


def _split_audit(root: Path, docs: Docs, moved: str, folder: str) -> dict[str, Any]:
    """Audit ``docs`` as a directory export, the claim ``moved`` in
    ``namespaces/<folder>/persistentvolumeclaims.yaml`` and the rest in ``c.yaml``."""
    (root / "namespaces" / folder).mkdir(parents=True)
    claim = _pvc(docs, moved)
    (root / "namespaces" / folder / "persistentvolumeclaims.yaml").write_text(
        yaml.safe_dump_all([claim])
    )
    (root / "c.yaml").write_text(yaml.safe_dump_all([d for d in docs if d is not claim]))
    return report_doc(audit_data(DirectorySource(root).collect(), AuditSettings(), at=AUDIT_AT))


def test_a_claim_filed_under_another_namespaces_folder_is_named(tmp_path: Path) -> None:
    """``oc adm inspect`` and must-gather file each object under ``namespaces/<its
    namespace>/``: a claim of namespace app under ``namespaces/other/`` was moved or edited,
    and which namespace it lives in cannot be told. It was read in its own namespace with
    nothing named (bench.mutations filed_elsewhere); now it is named at
    ``metadata.namespace`` with its file, the run is incomplete and its VM no better."""
    docs = _docs(FS_PASS)
    before = _split_audit(tmp_path / "a", docs, "vm1-data", "app")
    assert not _problems(before, "metadata.namespace")
    after = _split_audit(tmp_path / "b", docs, "vm1-data", "other")
    found = _problems(after, "metadata.namespace")
    assert [(p["kind"], p["namespace"], p["name"]) for p in found] == [
        ("PersistentVolumeClaim", "app", "vm1-data")
    ]
    assert found[0]["file"] == "namespaces/other/persistentvolumeclaims.yaml"
    assert after["run"]["complete"] is False
    _no_better(before, after)
    assert _vm1(after)["readiness"] != "READY"


@pytest.mark.parametrize(
    ("rel", "namespace"),
    [
        ("namespaces/app/persistentvolumeclaims.yaml", "app"),
        ("must-gather/namespaces/app/core/persistentvolumeclaims.yaml", "app"),
        ("namespaces/app.yaml", None),  # a file named after a namespace, no folder
        ("cluster/persistentvolumes.yaml", None),
        ("persistentvolumeclaims.yaml", None),
    ],
)
def test_the_namespace_a_folder_names(rel: str, namespace: str | None) -> None:
    assert folder_namespace(rel) == namespace


def test_a_namespace_object_in_its_own_folder_is_not_named(tmp_path: Path) -> None:
    """A cluster-scoped object (the Namespace itself, must-gather's
    ``namespaces/<ns>/<ns>.yaml``) belongs to no namespace: never named for its folder."""
    docs = _docs(FS_PASS)
    ns = next(d for d in docs if d["kind"] == "Namespace")
    (tmp_path / "namespaces" / "elsewhere").mkdir(parents=True)
    (tmp_path / "namespaces" / "elsewhere" / "elsewhere.yaml").write_text(yaml.safe_dump(ns))
    (tmp_path / "c.yaml").write_text(yaml.safe_dump_all([d for d in docs if d is not ns]))
    data = DirectorySource(tmp_path).collect()
    assert not [p for p in data.problems if p.field == "metadata.namespace"]


# -- bytes no export writes --------------------------------------------------------------------


@pytest.mark.parametrize(
    "edit",
    [
        lambda t: t.encode("utf-16"),
        lambda t: (t[: len(t) // 2] + "\0" + t[len(t) // 2 :]).encode(),
        lambda t: t.replace("name: vm1-data", "name: !custom vm1-data", 1).encode(),
        lambda t: t.replace(
            "name: vm1-data", "name: !!python/object:os.system vm1-data", 1
        ).encode(),
        lambda t: t.replace("storage: ", "storage: !!binary ", 1).encode(),
    ],
    ids=["utf16", "nul", "custom-tag", "python-tag", "binary-tag"],
)
def test_a_file_no_export_writes_is_named_and_unread(tmp_path: Path, edit: Any) -> None:
    """UTF-16, a NUL byte and a YAML tag (the API server writes JSON values, as UTF-8, with no
    tags) make the file unreadable: named with the file, every kind it may hold partial."""
    text = yaml.safe_dump_all(_docs(FS_PASS))
    (tmp_path / "persistentvolumeclaims.yaml").write_bytes(edit(text))
    data = DirectorySource(tmp_path).collect()
    assert [p.file for p in data.problems] == ["persistentvolumeclaims.yaml"]
    assert "PersistentVolumeClaim" in data.problems[0].kinds
    assert "PersistentVolumeClaim" not in data.objects


def test_an_oc_get_list_cut_at_a_line_is_named(tmp_path: Path) -> None:
    """``oc get -o yaml`` writes ``kind: List`` after the items: a List cut at a line boundary
    parses, but has no kind and is named (its kind partial), never read as fewer items."""
    docs = [d for d in _docs(FS_PASS) if d["kind"] == "Backup"]
    text = yaml.safe_dump({"apiVersion": "v1", "items": docs, "kind": "List", "metadata": {}})
    lines = text.split("\n")
    (tmp_path / "backups.yaml").write_text("\n".join(lines[: len(lines) // 2]) + "\n")
    data = DirectorySource(tmp_path).collect()
    assert [p.file for p in data.problems] == ["backups.yaml"]
    assert "Backup" in data.problems[0].kinds


# -- an ownerReference whose UID is not its owner's --------------------------------------------


@pytest.mark.parametrize(
    ("uid", "says"),
    [
        ("uid-pvc-app-vm1-root", "the UID of PersistentVolumeClaim app/vm1-root"),
        ("uid-vm-app-vm1-before", "is not the UID of VirtualMachine vm1 (uid-vm-app-vm1)"),
    ],
    ids=["another-objects-uid", "a-recreated-owner"],
)
def test_an_owner_reference_with_another_uid_is_named(tmp_path: Path, uid: str, says: str) -> None:
    """Kubernetes' garbage collector looks an owner up by kind and name and takes it as gone
    when its UID is not the reference's (kubernetes pkg/controller/garbagecollector/
    garbagecollector.go isDangling, "UID mismatch"), then deletes what only it owns: the VM's
    persistent-state claim whose owner reference holds the UID of another claim (or of an
    earlier VM of that name) is on its way out, or was edited; it was read as the VM's with
    nothing named (bench.mutations owner_uid). Now it is named at the reference's uid, the
    run is incomplete and the VM no better."""
    docs = _docs(FS_PASS)
    before = _complete(tmp_path / "a", FS_PASS, docs)
    state = _pvc(docs, "persistent-state-for-vm1-abcde")
    state["metadata"]["ownerReferences"][0]["uid"] = uid
    after = _complete(tmp_path / "b", FS_PASS, docs)
    found = _problems(after, "metadata.ownerReferences[0].uid")
    assert [(p["kind"], p["name"]) for p in found] == [
        ("PersistentVolumeClaim", "persistent-state-for-vm1-abcde")
    ]
    assert says in found[0]["reason"] and found[0]["file"] == "c.yaml"
    assert after["run"]["complete"] is False
    _no_better(before, after)
    assert _vm1(after)["readiness"] != "READY"


def test_owner_references_that_match_are_not_named(tmp_path: Path) -> None:
    """The fixture's references hold their owners' UIDs, and one naming an owner not in the
    export (a controller's ReplicaSet, say) is no fault: nothing is named."""
    docs = _docs(FS_PASS)
    _pvc(docs, "vm1-data")["metadata"]["ownerReferences"] = [
        {"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume", "name": "x", "uid": "u-x"}
    ]
    report = _complete(tmp_path, FS_PASS, docs)
    assert not [p for p in report["collection_problems"] if "ownerReferences" in (p["field"] or "")]


# -- labels or annotations written as null -----------------------------------------------------


@pytest.mark.parametrize(
    ("fixture", "check"),
    [
        ("RR-BKP-004/fail-pvc-exclude-label.yaml", "RR-BKP-004"),
        ("RR-BKP-001/fail-plugin-refuses-vm-with-excluded-pvc.yaml", "RR-BKP-001"),
    ],
)
def test_a_claims_null_labels_never_drop_its_exclude_label(
    tmp_path: Path, fixture: str, check: str
) -> None:
    """``ObjectMeta``'s maps are ``omitempty``: the API server never writes ``labels: null``.
    Read as no labels, a claim's null labels dropped ``velero.io/exclude-from-backup``: the
    check's FAIL became PASS and vm1 NOT_READY -> READY with nothing named (bench.mutations
    null_list over split fixtures; fz30 named it for VirtualMachines only). Now the claim is
    named at ``metadata.labels`` and unread, the run incomplete, vm1 no better."""
    docs = _docs(fixture)
    before = _complete(tmp_path / "a", fixture, docs)
    assert _finding(before, check)["status"] == "FAIL"
    _pvc(docs, "vm1-data")["metadata"]["labels"] = None
    after = _complete(tmp_path / "b", fixture, docs)
    found = _problems(after, "metadata.labels")
    assert [(p["kind"], p["name"]) for p in found] == [("PersistentVolumeClaim", "vm1-data")]
    assert "null" in found[0]["reason"]
    assert after["run"]["complete"] is False
    _no_better(before, after)
    assert _vm1(after)["readiness"] != "READY"


def test_null_annotations_of_a_backup_are_named(tmp_path: Path) -> None:
    """The same for annotations, and for any kind but the VirtualMachine (whose null maps
    fz30 names with the VM still read)."""
    docs = _docs(FS_PASS)
    backup = next(d for d in docs if d["kind"] == "Backup")
    backup["metadata"]["annotations"] = None
    (tmp_path / "c.yaml").write_text(yaml.safe_dump_all(docs))
    data = DirectorySource(tmp_path).collect()
    found = [p for p in data.problems if p.field == "metadata.annotations"]
    assert [(p.kind, p.name) for p in found] == [("Backup", backup["metadata"]["name"])]
