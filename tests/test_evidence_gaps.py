"""Verdicts that were better than the evidence allows (red team, helper-15).

Each test takes a fixture of the check catalog, changes one thing a real cluster (or a
damaged export) can hold, and asserts the finding that must change: a disk whose data sits
under an ``ephemeral`` overlay, a VolumeSnapshotContent whose ``readyToUse`` is no boolean,
a selector whose ``values`` is a string, a creation time given as a number, a
DataProtectionApplication whose plugin list is no list, and a NetworkAttachmentDefinition
created after the backups that are said to hold it.
"""

from __future__ import annotations

import copy
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


def _without_vm_snapshot_volumes(docs: Docs) -> Docs:
    """``docs`` without the VolumeSnapshots (and their contents) that the namespace-bound VM
    snapshot fixture's content backs its disks up with: a test that builds its own."""
    return [
        d
        for d in docs
        if not str(d["metadata"].get("name", "")).startswith(
            ("vmsnapshot-uid-vms-volume-", "snapcontent-vmsnapshot-uid-vms-volume-")
        )
    ]


def _backup_snapshot(pvc: str, backup: str, **status: Any) -> dict[str, Any]:
    """A VolumeSnapshot Velero's CSI path made of ``pvc`` (namespace app) for ``backup``,
    ready unless ``status`` says otherwise."""
    return {
        "apiVersion": "snapshot.storage.k8s.io/v1",
        "kind": "VolumeSnapshot",
        "metadata": {
            "name": f"velero-{pvc}-x",
            "namespace": "app",
            "labels": {"velero.io/backup-name": backup},
        },
        "spec": {"source": {"persistentVolumeClaimName": pvc}},
        "status": {"readyToUse": True, **status},
    }


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
    # named on the Backup when it is read (auditor.scope.validate_selector; red team fz14),
    # which is then unread, no longer on each VM its selector was matched against
    assert any(
        "not a list of strings" in p["reason"]
        and p["kind"] == "Backup"
        and "labelSelector" in p["reason"]
        for p in report["collection_problems"]
    ), report["collection_problems"]
    assert report["run"]["complete"] is False


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
        # seed 131
        (
            "RR-BKP-004/error-item-operation-failed.yaml",
            "DataProtectionApplication",
            ("spec", "configuration"),
            "junk",
            "spec.configuration",
        ),
        (
            "RR-BKP-004/pass-data-mover.yaml",
            "DataUpload",
            ("spec", "sourceNamespace"),
            42,
            "spec.sourceNamespace",
        ),
        # seed 211
        (
            "RR-STG-001/pass-retained-volume-snapshots.yaml",
            "VolumeSnapshot",
            ("status", "readyToUse"),
            "yes",
            "status.readyToUse",
        ),
        (
            "RR-STG-001/pass-retained-volume-snapshots.yaml",
            "VolumeSnapshot",
            ("status", "boundVolumeSnapshotContentName"),
            42,
            "status.boundVolumeSnapshotContentName",
        ),
        # seed 1361
        (
            "RR-STG-001/fail-delete-policy-volume-snapshots-die-with-namespace.yaml",
            "VolumeSnapshot",
            ("spec", "source"),
            "junk",
            "spec.source",
        ),
        (
            "RR-STG-001/pass-retained-volume-snapshots.yaml",
            "VolumeSnapshot",
            ("spec", "source", "persistentVolumeClaimName"),
            42,
            "spec.source.persistentVolumeClaimName",
        ),
        (
            "RR-STG-001/fail-cpu-hotplug-vm-snapshot-not-restorable.yaml",
            "VirtualMachineSnapshotContent",
            ("spec", "source", "virtualMachine"),
            "junk",
            "spec.source.virtualMachine",
        ),
        # seeds 2111 and 2229
        (
            "RR-FW-002/fail-preference-pinned-to-older-revision.yaml",
            "ControllerRevision",
            ("data", "spec"),
            "junk",
            "data.spec",
        ),
        (
            "RR-FW-002/fail-preference-pinned-to-older-revision.yaml",
            "ControllerRevision",
            ("data",),
            ["junk"],
            "data",
        ),
        (
            "RR-STG-001/fail-only-namespace-bound-vm-snapshot.yaml",
            "VirtualMachineSnapshot",
            ("status", "readyToUse"),
            "yes",
            "status.readyToUse",
        ),
        (
            "RR-STG-001/fail-only-namespace-bound-vm-snapshot.yaml",
            "VirtualMachineSnapshot",
            ("status", "virtualMachineSnapshotContentName"),
            42,
            "status.virtualMachineSnapshotContentName",
        ),
    ],
)
def test_fields_that_changed_verdicts_unnamed_are_named(
    tmp_path: Path, fixture: str, kind: str, path: tuple[str, ...], value: object, field: str
) -> None:
    """bench.mutations seeds 77, 131, 211, 1361, 2111 and 2229: each of these changed a verdict
    without naming the field."""
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


# -- red team round 2 (helper-16) and bench.mutations seed 91 --------------------------------


def _named(docs: Docs, kind: str, name: str) -> dict[str, Any]:
    """The ``kind`` object named ``name`` among ``docs``."""
    return next(d for d in _of(docs, kind) if d["metadata"]["name"] == name)


def _being_deleted(
    tmp_path: Path,
    fixture: str,
    kind: str,
    name: str,
    deleting: str | None,
    finalizer: str,
) -> dict[str, Any]:
    """The report of ``fixture`` with its ``kind`` ``name`` being deleted since ``deleting``
    (an RFC 3339 time) and kept by ``finalizer``; the fixture as it is when None."""
    docs = _docs(fixture)
    if deleting is not None:
        obj = _named(docs, kind, name)
        obj["metadata"]["deletionTimestamp"] = deleting
        obj["metadata"]["finalizers"] = [finalizer]
    return _complete(tmp_path, fixture, docs)


def _complete(tmp_path: Path, fixture: str, docs: Docs) -> dict[str, Any]:
    """Audit ``docs`` as the fixture test does: every kind's list complete."""
    from tests.test_check_fixtures import audit_fixture

    header = [
        line
        for line in (FIXTURES / fixture).read_text().splitlines()
        if line.startswith(("# unavailable", "# expect"))
    ]
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "c.yaml"
    path.write_text("\n".join(header) + ("\n" if header else "") + yaml.safe_dump_all(docs))
    return audit_fixture(path)


def test_a_backup_of_the_same_name_in_another_velero_namespace_has_its_own_plan(
    tmp_path: Path,
) -> None:
    """Backups were planned by name alone: a second Velero's Backup of the same name, which
    took no volume data, borrowed the first one's plan and counters (READY)."""
    fixture = "RR-BKP-004/pass.yaml"
    docs = _docs(fixture)
    newest = max(_of(docs, "Backup"), key=lambda b: b["metadata"]["name"])
    for location in _of(docs, "BackupStorageLocation"):
        copy = yaml.safe_load(yaml.safe_dump(location))
        copy["metadata"]["namespace"] = "velero-two"
        copy["metadata"]["uid"] = f"{copy['metadata'].get('uid', '')}-two"  # its own (fz34)
        copy.setdefault("status", {})["phase"] = "Available"
        docs.append(copy)
        location.setdefault("status", {})["phase"] = "Unavailable"
    twin = yaml.safe_load(yaml.safe_dump(newest))
    twin["metadata"]["namespace"] = "velero-two"
    twin["metadata"]["uid"] = f"{twin['metadata'].get('uid', '')}-two"
    twin["spec"]["snapshotVolumes"] = False
    for key in list(twin["status"]):
        if key.endswith(("Attempted", "Completed")):
            del twin["status"][key]
    docs.append(twin)
    finding = _finding(_complete(tmp_path, fixture, docs), "RR-BKP-004")
    assert finding["status"] == "FAIL", finding["message"]
    assert "snapshotVolumes" in finding["message"]


@pytest.mark.parametrize(("phase", "status"), [("ImportInProgress", "FAIL"), ("Failed", "FAIL")])
def test_a_disk_whose_datavolume_never_finished_is_in_no_backup(
    tmp_path: Path, phase: str, status: str
) -> None:
    """kubevirt-velero-plugin marks the PVC of an unfinished DataVolume in progress and does
    not restore it; the auditor ignored the DataVolume's phase (READY)."""
    fixture = "RR-BKP-004/pass.yaml"
    docs = _docs(fixture)
    assert _finding(_complete(tmp_path / "base", fixture, docs), "RR-BKP-004")["status"] == "PASS"
    claim = _of(docs, "PersistentVolumeClaim")[0]["metadata"]
    docs.append(
        {
            "apiVersion": "cdi.kubevirt.io/v1beta1",
            "kind": "DataVolume",
            "metadata": {
                "name": claim["name"],
                "namespace": claim["namespace"],
                "creationTimestamp": "2026-01-01T00:00:00Z",
            },
            "spec": {"source": {"http": {"url": "https://example.com/disk.img"}}},
            "status": {"phase": phase},
        }
    )
    finding = _finding(_complete(tmp_path / "dv", fixture, docs), "RR-BKP-004")
    assert finding["status"] == status
    assert f"is {phase}, not Succeeded" in finding["message"]
    docs[-1]["status"]["phase"] = "succeeded"  # no CDI phase: named
    report = _complete(tmp_path / "lower", fixture, docs)
    assert any(
        p["kind"] == "DataVolume" and p["field"] == "status.phase"
        for p in report["collection_problems"]
    )


def _waiting_disk(docs: Docs, dv_spec: dict[str, Any], ran: bool, bound: bool) -> tuple[Docs, str]:
    """``docs`` with the VM's DataVolume disk made one of its ``dataVolumeTemplates``
    (``dv_spec``) waiting for its first consumer: DataVolume PendingPopulation, PVC Pending
    with no volume unless ``bound``, the VM Halted with no VMI unless ``ran``. Returns the
    docs and the disk's claim."""
    if not ran:
        docs = [d for d in docs if d["kind"] != "VirtualMachineInstance"]
    vm = _of(docs, "VirtualMachine")[0]
    if not ran:
        vm["spec"].pop("running", None)
        vm["spec"]["runStrategy"] = "Halted"
    template = vm["spec"]["template"]["spec"]
    claim = next(v["dataVolume"]["name"] for v in template["volumes"] if "dataVolume" in v)
    vm["spec"]["dataVolumeTemplates"] = [{"metadata": {"name": claim}, "spec": dv_spec}]
    pvc = next(d for d in _of(docs, "PersistentVolumeClaim") if d["metadata"]["name"] == claim)
    if not bound:
        pvc["spec"].pop("volumeName", None)
        pvc["status"] = {"phase": "Pending"}
    docs.append(
        {
            "apiVersion": "cdi.kubevirt.io/v1beta1",
            "kind": "DataVolume",
            "metadata": {
                "name": claim,
                "namespace": vm["metadata"]["namespace"],
                "creationTimestamp": "2026-01-10T09:59:00Z",
            },
            "spec": dv_spec,
            "status": {"phase": "PendingPopulation"},
        }
    )
    return docs, claim


@pytest.mark.parametrize(("bound", "ran"), [(False, False), (True, False), (False, True)])
def test_a_disk_waiting_for_its_first_consumer_has_nothing_to_lose(
    tmp_path: Path, bound: bool, ran: bool
) -> None:
    """Red-team case (helper-24): a VM made from a template on WaitForFirstConsumer storage
    and never started (DataVolume PendingPopulation, PVC Pending with no volume) was
    NOT_READY for disk data it never had. A restore re-creates the DataVolume from the VM's
    dataVolumeTemplates, to be filled on first start as the original would be, so the disk
    counts as held. Once its PVC was bound (data may exist), or while a VMI runs the VM (red
    team: a Running VMI beside a 'never bound' disk passed), the unfinished-DataVolume rule
    holds again: no backup restores a finished image."""
    fixture = "RR-BKP-004/pass.yaml"
    docs, claim = _waiting_disk(
        _docs(fixture), {"sourceRef": {"kind": "DataSource", "name": "rhel9"}}, ran, bound
    )
    vm = _of(docs, "VirtualMachine")[0]
    docs += _golden_image(docs, vm["metadata"]["namespace"])
    finding = _finding(_complete(tmp_path, fixture, docs), "RR-BKP-004")
    if bound or ran:
        assert finding["status"] == "FAIL", finding["message"]
        assert "is PendingPopulation, not Succeeded" in finding["message"]
    else:
        assert finding["status"] == "PASS", finding["message"]
        row = next(r for r in finding["evidence"]["pvcs"] if r["pvc"] == claim)
        assert "never bound" in row["reason"], row


def _golden_image(docs: Docs, namespace: str, *, pvc: bool = True) -> Docs:
    """DataSource ``rhel9`` and (with ``pvc``) the golden-image PVC it names."""
    golden = copy.deepcopy(_of(docs, "PersistentVolumeClaim")[0])
    # in a namespace of its own, as OpenShift keeps golden images (no Backup takes it here)
    golden["metadata"].update(name="rhel9-golden", uid="uid-rhel9-golden", namespace="os-images")
    source = {
        "apiVersion": "cdi.kubevirt.io/v1beta1",
        "kind": "DataSource",
        "metadata": {"name": "rhel9", "namespace": namespace},
        "spec": {"source": {"pvc": {"namespace": "os-images", "name": "rhel9-golden"}}},
    }
    return [source, golden] if pvc else [source]


@pytest.mark.parametrize(
    ("source", "status", "says"),
    [
        ("golden", "PASS", "never bound"),
        (
            "golden-pvc-gone",
            "FAIL",
            "PersistentVolumeClaim os-images/rhel9-golden no longer exists",
        ),
        ("datasource-gone", "FAIL", "DataSource app/rhel9 no longer exists"),
        ("datasources-unread", "ERROR", "whether its source DataSource app/rhel9 exists"),
        ("clone-pvc-gone", "FAIL", "PersistentVolumeClaim app/base-image no longer exists"),
    ],
)
def test_a_never_filled_disk_needs_its_source(
    tmp_path: Path, source: str, status: str, says: str
) -> None:
    """Red team: a never-started VM's WaitForFirstConsumer disk counted as held although the
    PVC it clones from was gone. A restore re-creates the DataVolume to be filled from its
    source on first start; CDI leaves a clone without its source unfilled
    (CloneWithoutSource), so the VM never gets a disk."""
    fixture = "RR-BKP-004/pass.yaml"
    ns = _of(_docs(fixture), "VirtualMachine")[0]["metadata"]["namespace"]
    dv_spec: dict[str, Any] = (
        {"source": {"pvc": {"namespace": ns, "name": "base-image"}}}
        if source == "clone-pvc-gone"
        else {"sourceRef": {"kind": "DataSource", "name": "rhel9"}}
    )
    docs, _ = _waiting_disk(_docs(fixture), dv_spec, ran=False, bound=False)
    if source in ("golden", "golden-pvc-gone"):
        docs += _golden_image(docs, ns, pvc=source == "golden")
    elif source == "datasource-gone":
        docs += [d for d in _golden_image(docs, ns) if d["kind"] != "DataSource"]
    if source == "datasources-unread":
        # the DataSource list not read: the fixture test's header for an unavailable kind
        from tests.test_check_fixtures import audit_fixture

        path = tmp_path / "c.yaml"
        header = "# expect: RR-BKP-004 app/vm1 ERROR\n# unavailable: DataSource\n"
        path.write_text(header + yaml.safe_dump_all(docs))
        finding = _finding(audit_fixture(path), "RR-BKP-004")
        assert finding["status"] == status and says in finding["message"], finding["message"]
        return
    _check_source(tmp_path, fixture, docs, status, says)


def _check_source(tmp_path: Path, fixture: str, docs: Docs, status: str, says: str) -> None:
    finding = _finding(_complete(tmp_path, fixture, docs), "RR-BKP-004")
    assert finding["status"] == status, finding["message"]
    row = next(r for r in finding["evidence"]["pvcs"] if says in str(r["reason"]))
    assert row


def test_a_ready_volume_snapshot_whose_content_failed_is_no_copy(tmp_path: Path) -> None:
    """The VolumeSnapshot said readyToUse while its bound VolumeSnapshotContent carried an
    error: a restore reads the content, so the snapshot is no copy."""
    fixture = "RR-STG-001/pass-retained-volume-snapshots.yaml"
    docs = _docs(fixture)
    assert _finding(_complete(tmp_path / "base", fixture, docs), "RR-STG-001")["status"] == "PASS"
    for content in _of(docs, "VolumeSnapshotContent"):
        content["status"]["readyToUse"] = False
        content["status"]["error"] = {"message": "snapshot failed", "time": "2026-11-29T10:00:00Z"}
    assert _finding(_complete(tmp_path / "bad", fixture, docs), "RR-STG-001")["status"] != "PASS"


def test_a_data_upload_of_another_pvc_uid_is_not_this_pvc_s_copy(tmp_path: Path) -> None:
    """Velero labels each DataUpload with the uid of the PVC it uploaded; one of a same-named
    PVC (deleted and recreated since) was taken as this PVC's copy."""
    fixture = "RR-BKP-004/pass-data-mover.yaml"
    docs = _docs(fixture)
    assert _finding(_complete(tmp_path / "base", fixture, docs), "RR-BKP-004")["status"] == "PASS"
    for upload in _of(docs, "DataUpload"):
        upload["metadata"].setdefault("labels", {})["velero.io/pvc-uid"] = "another-pvc-uid"
    finding = _finding(_complete(tmp_path / "bad", fixture, docs), "RR-BKP-004")
    assert finding["status"] != "PASS", finding["message"]


@pytest.mark.parametrize(
    ("kind", "path", "value", "field"),
    [
        ("Backup", ("spec", "ttl"), "forever", "spec.ttl"),
        ("Schedule", ("spec", "paused"), "true", "spec.paused"),
        ("Backup", ("metadata", "labels"), {"velero.io/schedule-name": 42}, "metadata.labels"),
    ],
)
def test_velero_fields_that_read_as_a_default_are_named(
    tmp_path: Path, kind: str, path: tuple[str, ...], value: object, field: str
) -> None:
    """``ttl: forever`` read as the 720 h default (RR-BKP-006 PASS), ``paused: "true"`` as
    active (RR-PLT-002 PASS), a numeric label as no label: each is now a named problem."""
    fixture = "RR-BKP-001/pass.yaml"
    docs = _docs(fixture)
    target = _of(docs, kind)[0]
    node = target
    for step in path[:-1]:
        node = node.setdefault(step, {})
    node[path[-1]] = value
    report = _complete(tmp_path, fixture, docs)
    named = [p for p in report["collection_problems"] if p["kind"] == kind and p["field"] == field]
    assert named, report["collection_problems"]


def test_two_volumes_of_one_name_are_malformed(tmp_path: Path) -> None:
    """KubeVirt's webhook refuses two volumes of one name; the last one silently won, and a
    containerDisk named like the PVC volume hid the disk (READY, "ephemeral by design")."""
    fixture = "RR-BKP-004/fail-pvc-exclude-label.yaml"
    docs = _docs(fixture)
    volumes = _of(docs, "VirtualMachine")[0]["spec"]["template"]["spec"]["volumes"]
    volumes.append({"name": volumes[0]["name"], "containerDisk": {"image": "example/disk"}})
    finding = _finding(_complete(tmp_path, fixture, docs), "RR-BKP-004")
    assert finding["status"] == "ERROR"
    assert "spec.template.spec.volumes" in finding["message"]


def test_a_backup_completed_after_the_audit_time_is_no_restore_point(tmp_path: Path) -> None:
    """A completionTimestamp after ``--at`` cannot be evidence; it was the Backup's age for
    the RPO (a 53 h old backup counted as fresh)."""
    fixture = "RR-BKP-002/pass.yaml"
    docs = _docs(fixture)
    assert _finding(_complete(tmp_path / "base", fixture, docs), "RR-BKP-002")["status"] == "PASS"
    for backup in _of(docs, "Backup"):
        backup["status"]["completionTimestamp"] = "2026-12-05T00:00:00Z"
    assert _finding(_complete(tmp_path / "bad", fixture, docs), "RR-BKP-002")["status"] != "PASS"


def test_a_vmi_without_a_phase_may_be_running(tmp_path: Path) -> None:
    """bench.mutations seed 91: a VMI whose status.phase was gone read as "not running", so
    the kubevirt plugin's refusal of a running VM no longer applied (NOT_READY -> AT_RISK)."""
    fixture = "RR-BKP-001/fail-plugin-refuses-running-vm-without-vmi.yaml"
    docs = _docs(fixture)
    before = _finding(_complete(tmp_path / "base", fixture, docs), "RR-BKP-001")
    for vmi in _of(docs, "VirtualMachineInstance"):
        vmi["status"].pop("phase", None)
    after = _finding(_complete(tmp_path / "bad", fixture, docs), "RR-BKP-001")
    rank = {"PASS": 0, "NOT_APPLICABLE": 0, "FAIL": 1, "ERROR": 1}
    assert before["status"] == "FAIL"
    assert rank[after["status"]] >= rank[before["status"]]


def test_ready_snapshot_contents_of_other_volumes_prove_no_copy_of_this_one(
    tmp_path: Path,
) -> None:
    """Without counters, the Backup's ready VolumeSnapshotContents of the PVC's driver proved
    it by their number alone, even when every one was of another volume (its
    ``spec.source.volumeHandle``): READY on snapshots of other disks."""
    fixture = "RR-BKP-004/pass-snapshot-contents-without-counters.yaml"
    docs = _docs(fixture)
    assert _finding(_complete(tmp_path / "base", fixture, docs), "RR-BKP-004")["status"] == "PASS"
    for content in _of(docs, "VolumeSnapshotContent"):
        content["spec"]["source"] = {"volumeHandle": "a-volume-of-another-pvc"}
    finding = _finding(_complete(tmp_path / "other", fixture, docs), "RR-BKP-004")
    assert finding["status"] == "ERROR", finding["message"]
    assert "is of PVC" in finding["message"]


# -- red team case e03: a VolumeSnapshot ready now, in a Backup whose CSI counters fell short --


def _labelled_snapshots(docs: Docs, ready: dict[str, bool]) -> None:
    """Velero's VolumeSnapshot (labelled with the Backup's name) for each PVC in ``ready``,
    bound to the Backup's labelled VolumeSnapshotContents in order."""
    contents = [c for c in _of(docs, "VolumeSnapshotContent") if c["metadata"].get("labels")]
    for (pvc, ok), content in zip(ready.items(), contents, strict=False):
        status: dict[str, Any] = {
            "boundVolumeSnapshotContentName": content["metadata"]["name"],
            "readyToUse": ok,
        }
        if not ok:
            status["error"] = {"message": "timed out waiting for the snapshot"}
        docs.append(
            {
                "apiVersion": "snapshot.storage.k8s.io/v1",
                "kind": "VolumeSnapshot",
                "metadata": {
                    "name": f"velero-{pvc}-x1",
                    "namespace": "app",
                    "labels": {"velero.io/backup-name": "daily-20261130"},
                },
                "spec": {"source": {"persistentVolumeClaimName": pvc}},
                "status": status,
            }
        )


_DISKS = ("vm1-root", "vm1-data", "persistent-state-for-vm1-abcde")


def _short_by_one(docs: Docs) -> None:
    backup = _of(docs, "Backup")[0]
    backup["status"].update(
        phase="PartiallyFailed", csiVolumeSnapshotsCompleted=2, backupItemOperationsCompleted=2
    )
    backup["status"].update(backupItemOperationsFailed=1, errors=1)


def test_a_snapshot_ready_now_does_not_prove_a_backup_whose_csi_counters_fell_short(
    tmp_path: Path,
) -> None:
    """Velero gives up on a CSI snapshot after ``csiSnapshotTimeout`` and counts it attempted,
    not completed; the VolumeSnapshot may turn ready afterwards. With every labelled
    VolumeSnapshot ready now and the counters one short, none of them proves its PVC's copy
    (each could be the one Velero gave up on): RR-BKP-004 was PASS on their readiness."""
    fixture = "RR-BKP-004/pass.yaml"
    docs = _docs(fixture)
    _labelled_snapshots(docs, dict.fromkeys(_DISKS, True))
    clean = _finding(_complete(tmp_path / "clean", fixture, docs), "RR-BKP-004")
    assert clean["status"] == "PASS"
    assert "VolumeSnapshot app/velero-vm1-root-x1 status.readyToUse=True" in str(clean["evidence"])
    _short_by_one(docs)
    finding = _finding(_complete(tmp_path / "short", fixture, docs), "RR-BKP-004")
    assert finding["status"] != "PASS"
    assert "1 CSI snapshot(s) that did not complete" in str(finding["evidence"])


def test_a_failure_its_own_volume_snapshot_shows_leaves_the_others_proven(
    tmp_path: Path,
) -> None:
    """The same counters, with the data disk's VolumeSnapshot failed: that failure is the one
    the counters count, so the other two ready snapshots still prove their PVCs and only the
    data disk fails."""
    fixture = "RR-BKP-004/pass.yaml"
    docs = _docs(fixture)
    _labelled_snapshots(docs, {"vm1-root": True, "vm1-data": False, _DISKS[2]: True})
    _short_by_one(docs)
    finding = _finding(_complete(tmp_path, fixture, docs), "RR-BKP-004")
    assert finding["status"] == "FAIL"
    assert "vm1-data" in finding["message"]
    evidence = str(finding["evidence"])
    assert "did not complete" not in evidence
    assert "velero-vm1-root-x1 status.readyToUse=True" in evidence


def test_a_pinned_revision_whose_sections_cannot_be_read_resolves_nothing(
    tmp_path: Path,
) -> None:
    """bench.mutations seed 131: a preference ControllerRevision whose ``data.spec.firmware``
    is no mapping read as a preference without firmware settings, and the VM went AT_RISK ->
    READY. The revision is now named and unreadable: its VM's firmware checks and RR-DEF-001
    are unknown (ERROR), not FAIL "does not exist" and not PASS."""
    fixture = "RR-FW-002/fail-preference-pinned-to-older-revision.yaml"
    docs = _docs(fixture)
    intact = _complete(tmp_path / "intact", fixture, docs)
    assert next(v for v in intact["vms"] if v["name"] == "vm1")["readiness"] == "AT_RISK"
    revision = _of(docs, "ControllerRevision")[0]
    revision["data"]["spec"]["firmware"] = "junk"
    report = _complete(tmp_path / "junk", fixture, docs)
    assert next(v for v in report["vms"] if v["name"] == "vm1")["readiness"] != "READY"
    assert _finding(report, "RR-FW-002")["status"] == "ERROR"
    assert _finding(report, "RR-DEF-001")["status"] == "ERROR"
    assert any(
        p["kind"] == "ControllerRevision" and p["field"] == "data.spec.firmware"
        for p in report["collection_problems"]
    )


@pytest.mark.parametrize(
    ("section", "key", "junk"),
    [
        ("firmware", "preferredEfi", "junk"),
        ("firmware", "preferredUseBios", "yes"),
        ("devices", "preferredTPM", ["persistent"]),
        ("machine", "preferredMachineType", 42),
    ],
)
def test_a_pinned_preference_field_of_another_type_resolves_nothing(
    tmp_path: Path, section: str, key: str, junk: object
) -> None:
    """bench.mutations seed 1499: a pinned preference revision whose
    ``data.spec.firmware.preferredEfi`` was a string read as "no EFI preference", with
    nothing named. A field the auditor reads of a type KubeVirt never writes makes the
    revision named and unreadable, as a section that is no mapping does."""
    fixture = "RR-FW-002/fail-preference-pinned-to-older-revision.yaml"
    docs = _docs(fixture)
    revision = _of(docs, "ControllerRevision")[0]
    revision["data"]["spec"].setdefault(section, {})[key] = junk
    report = _complete(tmp_path, fixture, docs)
    assert next(v for v in report["vms"] if v["name"] == "vm1")["readiness"] != "READY"
    assert _finding(report, "RR-DEF-001")["status"] == "ERROR"
    assert any(
        p["kind"] == "ControllerRevision" and p["field"] == f"data.spec.{section}.{key}"
        for p in report["collection_problems"]
    )


@pytest.mark.parametrize(
    ("section", "key", "junk"),
    [("firmware", "preferredEfi", "junk"), ("firmware", None, ["efi"]), ("devices", None, 7)],
)
def test_a_live_preference_that_cannot_be_read_resolves_nothing(
    tmp_path: Path, section: str, key: str | None, junk: object
) -> None:
    """The same fault in the live preference a VM applies when it is pinned to no revision:
    it is named and left out as unread, so RR-DEF-001 is ERROR, not a preference without
    firmware settings."""
    fixture = "RR-FW-002/pass-preference-pinned-revision.yaml"
    docs = _docs(fixture)
    vm = _of(docs, "VirtualMachine")[0]
    vm["spec"]["preference"].pop("revisionName")
    vm.get("status", {}).pop("preferenceRef", None)
    live = _complete(tmp_path / "live", fixture, docs)
    assert _finding(live, "RR-DEF-001")["status"] == "PASS"
    preference = _of(docs, "VirtualMachineClusterPreference")[0]
    if key is None:
        preference["spec"][section] = junk
    else:
        preference["spec"][section][key] = junk
    report = _complete(tmp_path / "junk", fixture, docs)
    assert _finding(report, "RR-DEF-001")["status"] == "ERROR"
    assert next(v for v in report["vms"] if v["name"] == "vm1")["readiness"] != "READY"
    field = f"spec.{section}" + (f".{key}" if key else "")
    assert [
        (p["kind"], p["name"]) for p in report["collection_problems"] if p["field"] == field
    ] == [("VirtualMachineClusterPreference", "rhel.9")]


# -- red team round 3 (helper-19): damaged exports -------------------------------------------


def test_a_pvc_volume_is_read_by_its_claim_name_only(tmp_path: Path) -> None:
    """A stray ``name`` beside ``claimName`` in a persistentVolumeClaim source was read as
    the claim, pairing the disk with another PVC (KubeVirt reads ``claimName``)."""
    fixture = "RR-BKP-004/pass.yaml"
    docs = _docs(fixture)
    vm = _of(docs, "VirtualMachine")[0]
    for volume in vm["spec"]["template"]["spec"]["volumes"]:
        if volume.get("dataVolume", {}).get("name") == "vm1-data":
            volume.pop("dataVolume")
            volume["persistentVolumeClaim"] = {"claimName": "vm1-data", "name": "vm1-root"}
    report = _complete(tmp_path, fixture, docs)
    card = next(v for v in report["vms"] if v["name"] == "vm1")["recovery_card"]
    data = next(d for d in card["disks"] if d["name"] == "data")
    assert data["volume"]["name"] == "vm1-data"
    assert data["pvc"]["name"] == "vm1-data"


def test_a_vm_snapshot_volume_list_that_is_no_list_is_named_not_a_crash(tmp_path: Path) -> None:
    """``includedVolumes: 5`` crashed the recovery card (TypeError) and no report was
    written; it is a named problem and the snapshot holds no copy it could show."""
    fixture = "RR-STG-001/fail-only-namespace-bound-vm-snapshot.yaml"
    docs = _without_vm_snapshot_volumes(_docs(fixture))
    _of(docs, "VirtualMachineSnapshot")[0]["status"]["snapshotVolumes"]["includedVolumes"] = 5
    report = _complete(tmp_path, fixture, docs)
    finding = _finding(report, "RR-STG-001")
    assert (finding["status"], finding["severity"]) == ("FAIL", "high")  # no copy at all
    assert any(
        p["kind"] == "VirtualMachineSnapshot"
        and p["field"] == "status.snapshotVolumes.includedVolumes"
        for p in report["collection_problems"]
    )


def test_a_bootloader_of_no_known_type_is_named_not_bios(tmp_path: Path) -> None:
    """``bootloader: {EFI: {}}`` read as no bootloader, that is BIOS: the EFI VM's NVRAM
    check went FAIL -> NOT_APPLICABLE and its VM AT_RISK -> READY."""
    fixture = "RR-FW-002/fail-efi-volatile.yaml"
    docs = _docs(fixture)
    firmware = _of(docs, "VirtualMachine")[0]["spec"]["template"]["spec"]["domain"]["firmware"]
    firmware["bootloader"] = {"EFI": firmware["bootloader"].get("efi", {})}
    report = _complete(tmp_path, fixture, docs)
    assert _finding(report, "RR-FW-002")["status"] == "ERROR"
    assert any(
        p["field"] == "spec.template.spec.domain.firmware.bootloader"
        for p in report["collection_problems"]
    )


@pytest.mark.parametrize("network", [{"Multus": {"networkName": "vlan10"}}, {"multus": None}])
def test_a_network_of_no_known_source_is_named_not_dropped(
    tmp_path: Path, network: dict[str, Any]
) -> None:
    """A multus network under a misspelt key (or null) was no network at all: RR-NET-001
    went FAIL -> NOT_APPLICABLE. KubeVirt refuses a network without a source."""
    fixture = "RR-NET-001/fail-nad-missing.yaml"
    docs = _docs(fixture)
    networks = _of(docs, "VirtualMachine")[0]["spec"]["template"]["spec"]["networks"]
    for n in networks:
        if "multus" in n:
            n.pop("multus")
            n.update(network)
    report = _complete(tmp_path, fixture, docs)
    assert _finding(report, "RR-NET-001")["status"] == "ERROR"


@pytest.mark.parametrize(
    ("kind", "api_version", "field"),
    [
        ("backup", "velero.io/v1", "kind"),
        ("Backup", "Velero.io/v1", "apiVersion"),
        ("Backup", "v1", "apiVersion"),
    ],
)
def test_a_known_kind_written_as_the_api_server_never_does_is_named(
    tmp_path: Path, kind: str, api_version: str, field: str
) -> None:
    """``kind: backup`` or a damaged group dropped the object silently (counted as an
    unknown kind) while its kind's list still read as complete: a dropped Backup, Schedule or
    state PVC made checks better. It is named and its kind's list is partial."""
    fixture = "RR-BKP-001/pass.yaml"
    docs = _docs(fixture)
    newest = next(b for b in _of(docs, "Backup") if b["metadata"]["name"] == "daily-20261130")
    newest["kind"], newest["apiVersion"] = kind, api_version
    report = _complete(tmp_path, fixture, docs)
    named = [
        p for p in report["collection_problems"] if p["kind"] == "Backup" and p["field"] == field
    ]
    assert named, report["collection_problems"]
    assert (named[0]["namespace"], named[0]["name"]) == ("velero", "daily-20261130")
    assert _finding(report, "RR-BKP-002")["status"] != "PASS"
    assert report["run"]["complete"] is False


def test_an_object_without_its_namespace_is_named_and_its_list_partial(tmp_path: Path) -> None:
    """A state PVC without ``metadata.namespace`` was read, silently, in ``default``: the
    VM's persistent-state PVC was then nowhere, which moved its checks both ways. The API
    server writes every namespaced object with its namespace; the object is named and the
    PVC list proves no absence."""
    fixture = "RR-BKP-004/pass.yaml"
    docs = _docs(fixture)
    state = next(
        p
        for p in _of(docs, "PersistentVolumeClaim")
        if p["metadata"]["name"].startswith("persistent-state-for-")
    )
    del state["metadata"]["namespace"]
    report = _complete(tmp_path, fixture, docs)
    assert any(
        p["kind"] == "PersistentVolumeClaim" and p["field"] == "metadata.namespace"
        for p in report["collection_problems"]
    )
    assert _finding(report, "RR-BKP-004")["status"] == "ERROR"


@pytest.mark.parametrize("selector", [{"matchLabels": ""}, {"matchlabels": {"app": "vm1"}}])
def test_a_backup_with_a_damaged_selector_is_named_and_judges_nothing(
    tmp_path: Path, selector: dict[str, Any]
) -> None:
    """The damaged selector makes the Backup's scope unknown: it is a named collection
    problem, and the checks that would judge it are ERROR, neither PASS (the match-all
    reading) nor NOT_APPLICABLE ("no usable backup", while the Backups were not read)."""
    fixture = "RR-NET-003/pass.yaml"
    docs = _docs(fixture)
    for b in _of(docs, "Backup"):
        b["spec"]["labelSelector"] = selector
    report = _complete(tmp_path, fixture, docs)
    # ``matchlabels`` is a field name in another case: since fz32 the source names the
    # Backup at spec.labelSelector.matchLabels and leaves it unread, before its scope is parsed
    assert any(
        p["kind"] == "Backup"
        and ("malformed scope" in p["reason"] or p["field"] == "spec.labelSelector.matchLabels")
        for p in report["collection_problems"]
    )
    for check_id in ("RR-NET-003", "RR-BKP-003"):
        assert _finding(report, check_id)["status"] == "ERROR", check_id


def test_a_null_bootloader_is_named_not_bios(tmp_path: Path) -> None:
    """The API server omits an unset bootloader; ``bootloader: null`` read as BIOS dropped
    the EFI VM's NVRAM check (AT_RISK -> READY)."""
    fixture = "RR-FW-002/fail-efi-volatile.yaml"
    docs = _docs(fixture)
    _of(docs, "VirtualMachine")[0]["spec"]["template"]["spec"]["domain"]["firmware"][
        "bootloader"
    ] = None
    assert _finding(_complete(tmp_path, fixture, docs), "RR-FW-002")["status"] == "ERROR"


@pytest.mark.parametrize("text", ["x7", "ethernets: [\n", "- a\n- b\n"])
def test_network_data_that_is_no_network_config_is_as_unknown_as_no_string(
    tmp_path: Path, text: str
) -> None:
    """bench.mutations seed 211: ``networkData: x7`` read as "no static addresses" where a
    non-string networkData was unknown (UNKNOWN -> AT_RISK). cloud-init applies no network
    config it cannot read: both are unknown."""
    fixture = "RR-NET-002/error-networkdata-not-a-string.yaml"
    docs = _docs(fixture)
    for volume in _of(docs, "VirtualMachine")[0]["spec"]["template"]["spec"]["volumes"]:
        if "cloudInitNoCloud" in volume:
            volume["cloudInitNoCloud"]["networkData"] = text
    assert _finding(_complete(tmp_path, fixture, docs), "RR-NET-002")["status"] == "ERROR"


@pytest.mark.parametrize(
    ("where", "value", "field"),
    [
        ("cloudinit", None, "cloudInitNoCloud.secretRef.name"),
        ("cloudinit", "", "cloudInitNoCloud.secretRef.name"),
        ("cloudinit", 7, "cloudInitNoCloud.secretRef.name"),
        ("cloudinit-ref", "a-string", "cloudInitNoCloud.secretRef"),
        ("credential", None, "accessCredentials[0].sshPublicKey.source.secret.secretName"),
    ],
)
def test_a_reference_that_names_no_secret_is_named_not_passed(
    tmp_path: Path, where: str, value: Any, field: str
) -> None:
    """bench.mutations seed 307: ``secretRef.name: null`` dropped the cloud-init Secret from
    what a restore needs, and the Backup that excludes Secrets passed RR-BKP-012 (AT_RISK ->
    READY). Which Secret a reference with no name means is unknown: the field is named and
    the check gives ERROR."""
    fixture = "RR-BKP-012/fail-secrets-excluded.yaml"
    docs = _docs(fixture)
    tspec = _of(docs, "VirtualMachine")[0]["spec"]["template"]["spec"]
    cloudinit = next(v for v in tspec["volumes"] if "cloudInitNoCloud" in v)
    if where == "cloudinit":
        cloudinit["cloudInitNoCloud"]["secretRef"]["name"] = value
    elif where == "cloudinit-ref":
        cloudinit["cloudInitNoCloud"]["secretRef"] = value
    else:  # the cloud-init Secret is dropped: the credential's is the only one named
        cloudinit["cloudInitNoCloud"].pop("secretRef")
        cloudinit["cloudInitNoCloud"]["userData"] = "#cloud-config\n"
        tspec["accessCredentials"] = [
            {"sshPublicKey": {"source": {"secret": {"secretName": value}}, "propagationMethod": {}}}
        ]
    report = _audit(tmp_path, docs)
    finding = _finding(report, "RR-BKP-012")
    assert finding["status"] == "ERROR", finding["message"]
    assert any(p["field"].endswith(field) for p in report["collection_problems"]), field
    assert next(v for v in report["vms"] if v["name"] == "vm1")["readiness"] != "READY"


def _plugins(docs: Docs) -> list[Any]:
    plugins: list[Any] = _of(docs, "DataProtectionApplication")[0]["spec"]["configuration"][
        "velero"
    ]["defaultPlugins"]
    return plugins


def test_a_plugin_list_entry_that_is_no_name_leaves_the_plugin_unknown(tmp_path: Path) -> None:
    """bench.mutations seed 419: ``defaultPlugins: [..., 42]`` where ``kubevirt`` stood read
    as "no kubevirt plugin", so the in-place Restore's new-UUID label no longer acted
    (RR-RST-002 FAIL -> PASS, NOT_READY -> READY). The entry may have been the plugin: the
    DPA's answer is unknown, which neither pulls volumes in nor drops the labels' effect."""
    fixture = "RR-RST-002/fail-in-place-new-uuid-windows.yaml"
    docs = _docs(fixture)
    plugins = _plugins(docs)
    plugins[plugins.index("kubevirt")] = 42
    report = _audit(tmp_path, docs)
    assert _finding(report, "RR-RST-002")["status"] == "FAIL"
    assert next(v for v in report["vms"] if v["name"] == "vm1")["readiness"] == "NOT_READY"
    assert any(
        p["field"] == "spec.configuration.velero.defaultPlugins"
        for p in report["collection_problems"]
    )
    platform = {f["check_id"]: f for f in report["platform_findings"]}
    assert platform["RR-PLT-004"]["status"] == "ERROR"
    assert "no plugin names" in platform["RR-PLT-004"]["message"]


def test_a_listed_plugin_stays_enabled_beside_a_damaged_entry(tmp_path: Path) -> None:
    """``kubevirt`` itself is listed: the damaged entry cannot unlist it (the DPA is still
    named and its list partial)."""
    fixture = "RR-RST-002/fail-in-place-new-uuid-windows.yaml"
    docs = _docs(fixture)
    _plugins(docs).append(42)
    report = _audit(tmp_path, docs)
    assert _finding(report, "RR-RST-002")["status"] == "FAIL"
    assert _finding(report, "RR-RST-002")["evidence"]["kubevirt_plugin"] is True


@pytest.mark.parametrize("value", ["junk", 7, ["app"]])
def test_a_template_metadata_that_is_no_mapping_is_named_not_unlabelled(
    tmp_path: Path, value: Any
) -> None:
    """bench.mutations seed 743: ``spec.template.metadata: junk`` read as a pod without
    labels, so no Service or Route selected the VM and RR-NET-003 no longer failed on the
    Route outside the backup (AT_RISK -> READY). Its labels are unknown: named, ERROR."""
    fixture = "RR-NET-003/fail-route-outside-backup.yaml"
    docs = _docs(fixture)
    _of(docs, "VirtualMachine")[0]["spec"]["template"]["metadata"] = value
    report = _audit(tmp_path, docs)
    assert _finding(report, "RR-NET-003")["status"] == "ERROR"
    assert any(p["field"] == "spec.template.metadata" for p in report["collection_problems"])
    assert next(v for v in report["vms"] if v["name"] == "vm1")["readiness"] != "READY"
