"""Malformed fields left unnamed (or read as the better answer) by fz38, named by fz39.

Each case edits one field of a check fixture (tests/fixtures/checks), so it runs without
../shared, and asserts the exact problem named (kind, object, field), the finding that
rests on it and the VM's verdict, never better than before (docs/readiness.md, fz39).
"""

from __future__ import annotations

import copy
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from auditor.config import AuditSettings
from auditor.pipeline import audit_data
from auditor.sources.directory import DirectorySource
from tests.conftest import AUDIT_AT, REPO, report_doc
from tests.test_check_fixtures import FIXTURES, audit_fixture
from tests.test_deleted_drills_rt38 import FIXTURE, _download, _pod_volume_restore
from tests.test_evidence_gaps import _audit, _complete, _docs, _golden_image, _of, _waiting_disk

_RANK = {"READY": 0, "AT_RISK": 1, "UNKNOWN": 2, "NOT_READY": 3}


def _write(tmp_path: Path, text: str, *edits: tuple[str, str]) -> Path:
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    path = tmp_path / "export.yaml"
    path.write_text(text)
    return path


def _vm(doc: dict[str, Any], ref: str = "app/vm1") -> dict[str, Any]:
    return next(v for v in doc["vms"] if f"{v['namespace']}/{v['name']}" == ref)


def _status(doc: dict[str, Any], check: str, ref: str = "app/vm1") -> str:
    return next(f["status"] for f in _vm(doc, ref)["findings"] if f["check_id"] == check)


def _named(doc: dict[str, Any], kind: str) -> list[tuple[str | None, str | None]]:
    return [(p["name"], p["field"]) for p in doc["collection_problems"] if p["kind"] == kind]


# -- the KubeVirt CR: every field a check reads is typed, and none is null ------------------

#: RR-DSK-003's low FAIL: the VM names no machine type and the cluster's default differs
#: from the one its guest runs on (q35 here, so KubeVirt's built-in default would match)
_MACHINE = (FIXTURES / "RR-DSK-003" / "fail-machine-type-default-differs.yaml").read_text()
_BIOS_Q35 = (
    # BIOS firmware (no persistent EFI: RR-FW-002 and RR-PLT-006 have nothing to say) and a
    # guest running on the alias q35, which the KubeVirt CR's default is not
    (
        "            efi:\n              persistent: true\n              secureBoot: true\n",
        "            bios: {}\n",
    ),
    (
        "        efi:\n          persistent: true\n          secureBoot: true\n",
        "        bios: {}\n",
    ),
    ("    machine:\n      type: pc-q35-rhel9.4.0\n", "    machine:\n      type: q35\n"),
)
_DEFAULT = "      amd64:\n        machineType: pc-q35-rhel9.6.0\n"


def test_the_machine_type_baseline_is_at_risk(tmp_path: Path) -> None:
    doc = audit_fixture(_write(tmp_path, _MACHINE, *_BIOS_Q35))
    assert _status(doc, "RR-DSK-003") == "FAIL"
    assert _vm(doc)["readiness"] == "AT_RISK"
    assert not _named(doc, "KubeVirt")


@pytest.mark.parametrize(
    ("new", "field"),
    [
        # read as unset, KubeVirt's built-in q35 matched the guest: AT_RISK -> READY
        (
            "      amd64:\n        machineType: 42\n",
            "spec.configuration.architectureConfiguration.amd64.machineType",
        ),
        (
            "      amd64:\n        machineType: null\n",
            "spec.configuration.architectureConfiguration.amd64.machineType",
        ),
        ("      amd64: pc-q35-rhel9.6.0\n", "spec.configuration.architectureConfiguration.amd64"),
        (
            "      amd64:\n        machineType: pc-q35-rhel9.6.0\n    machineType: [pc]\n",
            "spec.configuration.machineType",
        ),
        (
            "      amd64:\n        machineType: pc-q35-rhel9.6.0\n      defaultArchitecture: 7\n",
            "spec.configuration.architectureConfiguration.defaultArchitecture",
        ),
    ],
)
def test_an_unreadable_default_machine_type_is_named_and_no_pass(
    tmp_path: Path, new: str, field: str
) -> None:
    doc = audit_fixture(_write(tmp_path, _MACHINE, *_BIOS_Q35, (_DEFAULT, new)))
    assert ("kubevirt", field) in _named(doc, "KubeVirt")
    assert _status(doc, "RR-DSK-003") == "ERROR"
    assert _vm(doc)["readiness"] == "UNKNOWN"
    assert doc["run"]["complete"] is False


#: RR-NET-001's high FAIL: the passt binding plugin is registered with a NAD that is gone
_BINDING = (FIXTURES / "RR-NET-001" / "fail-binding-plugin-nad-missing.yaml").read_text()
_PLUGIN = (
    "        passt:\n"
    "          networkAttachmentDefinition: default/netbindingpasst\n"
    "          sidecarImage: quay.io/kubevirt/network-passt-binding:v1.6.0\n"
)


def test_the_binding_plugin_baseline_is_not_ready(tmp_path: Path) -> None:
    doc = audit_fixture(_write(tmp_path, _BINDING))
    assert _status(doc, "RR-NET-001") == "FAIL"
    assert _vm(doc)["readiness"] == "NOT_READY"


@pytest.mark.parametrize(
    ("new", "field"),
    [
        # read as "registered without a NAD": NOT_READY -> READY, nothing named
        (
            "        passt:\n          networkAttachmentDefinition: 42\n",
            "spec.configuration.network.binding.passt.networkAttachmentDefinition",
        ),
        (
            "        passt:\n          networkAttachmentDefinition: null\n",
            "spec.configuration.network.binding.passt.networkAttachmentDefinition",
        ),
        ("        passt: default/netbindingpasst\n", "spec.configuration.network.binding.passt"),
        ("        passt: [default/netbindingpasst]\n", "spec.configuration.network.binding.passt"),
        ("        passt: null\n", "spec.configuration.network.binding.passt"),
    ],
)
def test_an_unreadable_binding_plugin_entry_is_named_and_never_passes(
    tmp_path: Path, new: str, field: str
) -> None:
    doc = audit_fixture(_write(tmp_path, _BINDING, (_PLUGIN, new)))
    assert ("kubevirt", field) in _named(doc, "KubeVirt")
    assert _status(doc, "RR-NET-001") == "ERROR"
    assert _vm(doc)["readiness"] in ("UNKNOWN", "NOT_READY")
    assert doc["run"]["complete"] is False


def test_a_binding_plugin_without_a_nad_stays_valid(tmp_path: Path) -> None:
    """``networkAttachmentDefinition`` is optional (a plugin that needs no NAD)."""
    doc = audit_fixture(
        _write(tmp_path, _BINDING, (_PLUGIN, "        passt:\n          sidecarImage: x\n"))
    )
    assert not _named(doc, "KubeVirt")
    assert _status(doc, "RR-NET-001") == "PASS"


#: RR-PLT-006's FAIL: vmStateStorageClass names a class that is gone; a default class is
#: marked, so an unset vmStateStorageClass would PASS
_STATE = (FIXTURES / "RR-PLT-006" / "fail-state-class-missing.yaml").read_text()
_MARKED = (
    "metadata:\n  name: retain-sc\n",
    "metadata:\n  annotations:\n    storageclass.kubernetes.io/is-default-class: 'true'\n"
    "  name: retain-sc\n",
)


def _platform(doc: dict[str, Any], check: str) -> str:
    return next(f["status"] for f in doc["platform_findings"] if f["check_id"] == check)


def test_a_null_vm_state_storage_class_is_named_not_read_as_unset(tmp_path: Path) -> None:
    base = audit_fixture(_write(tmp_path, _STATE, _MARKED))
    assert _platform(base, "RR-PLT-006") == "FAIL"
    doc = audit_fixture(
        _write(
            tmp_path,
            _STATE,
            _MARKED,
            ("vmStateStorageClass: gone-sc", "vmStateStorageClass: null"),
        )
    )
    assert ("kubevirt", "spec.configuration.vmStateStorageClass") in _named(doc, "KubeVirt")
    assert _platform(doc, "RR-PLT-006") == "ERROR"
    # "" is KubeVirt's unset (omitempty string): valid, the default class is used
    unset = audit_fixture(
        _write(
            tmp_path, _STATE, _MARKED, ("vmStateStorageClass: gone-sc", 'vmStateStorageClass: ""')
        )
    )
    assert not _named(unset, "KubeVirt")
    assert _platform(unset, "RR-PLT-006") == "PASS"


@pytest.mark.parametrize("field", ["observedKubeVirtVersion", "operatorVersion"])
def test_a_kubevirt_version_of_another_type_is_named(tmp_path: Path, field: str) -> None:
    doc = audit_fixture(
        _write(
            tmp_path,
            _STATE,
            (
                "  observedKubeVirtVersion: v1.4.1\n",
                f"  observedKubeVirtVersion: v1.4.1\n  {field}: 1.5\n",
            )
            if field == "operatorVersion"
            else ("  observedKubeVirtVersion: v1.4.1\n", "  observedKubeVirtVersion: 1.4\n"),
        )
    )
    assert ("kubevirt", f"status.{field}") in _named(doc, "KubeVirt")
    assert _platform(doc, "RR-PLT-006") == "ERROR"


# -- a Backup's or Schedule's namespace filter: each entry a namespace name ------------------

_EXAMPLE = REPO / "examples" / "small-cluster"


def _example_with_exclude(tmp_path: Path, excluded: str, where: str = "backups") -> Path:
    """The bundled example with every billing Backup (or the billing Schedule's template)
    taking every namespace but ``excluded``."""
    out = tmp_path / "export"
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(_EXAMPLE, out)
    path = out / f"{where}.yaml"
    doc = yaml.safe_load(path.read_text())
    for item in doc["items"]:
        spec = item["spec"] if where == "backups" else item["spec"]["template"]
        if spec.get("includedNamespaces") == ["billing"]:
            spec["includedNamespaces"] = ["*"]
            spec["excludedNamespaces"] = [excluded]
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return out


def _audit_dir(root: Path) -> dict[str, Any]:
    return report_doc(audit_data(DirectorySource(root).collect(), AuditSettings(), at=AUDIT_AT))


@pytest.mark.parametrize("excluded", ["billing ", "bi\u2010lling", "Billing", "billing\u00a0"])
def test_a_backup_namespace_filter_entry_that_is_no_name_is_named(
    tmp_path: Path, excluded: str
) -> None:
    """Read as written, an exclude of ``"billing "`` excluded nothing: the Backups that left
    billing out covered it (Velero refuses such a name: FailedValidation)."""
    base = _audit_dir(_example_with_exclude(tmp_path, "billing"))
    assert _vm(base, "billing/billing-db")["readiness"] == "NOT_READY"
    assert _status(base, "RR-BKP-001", "billing/billing-db") == "FAIL"
    doc = _audit_dir(_example_with_exclude(tmp_path, excluded))
    named = {(n, f) for n, f in _named(doc, "Backup")}
    assert ("billing-daily-20261130", "spec.excludedNamespaces[0]") in named
    assert _vm(doc, "billing/billing-db")["readiness"] in ("UNKNOWN", "NOT_READY")
    assert _status(doc, "RR-BKP-001", "billing/billing-db") in ("FAIL", "ERROR")
    assert _status(doc, "RR-BKP-003", "billing/billing-db") == "ERROR"
    assert doc["run"]["complete"] is False


def test_a_schedule_template_namespace_that_is_no_name_is_named(tmp_path: Path) -> None:
    doc = _audit_dir(_example_with_exclude(tmp_path, "billing ", where="schedules"))
    assert ("billing-daily", "spec.template.excludedNamespaces[0]") in _named(doc, "Schedule")


@pytest.mark.parametrize("excluded", ["bill*", "billing"])
def test_valid_backup_namespace_filters_are_not_named(tmp_path: Path, excluded: str) -> None:
    doc = _audit_dir(_example_with_exclude(tmp_path, excluded))
    assert not _named(doc, "Backup")


# -- the source a never-filled DataVolume is filled from: a DataSource's or its own ---------


def _never_filled(tmp_path: Path, dv_spec: dict[str, Any], edit: Any = None) -> dict[str, Any]:
    """RR-BKP-004/pass.yaml with its DataVolume disk never filled (WaitForFirstConsumer, the
    VM never started) and cloned from ``dv_spec``'s source, whose golden-image PVC is gone;
    ``edit(docs)`` changes one field."""
    fixture = "RR-BKP-004/pass.yaml"
    docs, _ = _waiting_disk(_docs(fixture), copy.deepcopy(dv_spec), ran=False, bound=False)
    ns = _of(docs, "VirtualMachine")[0]["metadata"]["namespace"]
    if "sourceRef" in dv_spec:
        docs += _golden_image(docs, ns, pvc=False)  # the DataSource, its PVC gone
    if edit is not None:
        edit(docs)
    return _complete(tmp_path, fixture, docs)


_BY_REF = {"sourceRef": {"kind": "DataSource", "name": "rhel9"}}
_CLONE = {"source": {"pvc": {"namespace": "app", "name": "base-image"}}}


def _data_source(docs: list[dict[str, Any]]) -> dict[str, Any]:
    return next(d for d in docs if d["kind"] == "DataSource")


def _data_volume(docs: list[dict[str, Any]]) -> dict[str, Any]:
    return next(d for d in docs if d["kind"] == "DataVolume")


@pytest.mark.parametrize("spec", [_BY_REF, _CLONE])
def test_a_never_filled_disk_whose_source_is_gone_is_not_ready(
    tmp_path: Path, spec: dict[str, Any]
) -> None:
    doc = _never_filled(tmp_path, spec)
    assert _status(doc, "RR-BKP-004") == "FAIL"
    assert _vm(doc)["readiness"] == "NOT_READY"


@pytest.mark.parametrize(
    ("spec", "kind", "field", "edit"),
    [
        # the DataSource's golden image: read as "a source the export cannot judge", the
        # disk counted as held: NOT_READY -> READY, nothing named
        (
            _BY_REF,
            "DataSource",
            "spec.source.pvc.name",
            lambda d: _data_source(d)["spec"]["source"]["pvc"].update(name=42),
        ),
        (
            _BY_REF,
            "DataSource",
            "spec.source.pvc",
            lambda d: _data_source(d)["spec"]["source"].update(pvc="rhel9-golden"),
        ),
        (
            _BY_REF,
            "DataSource",
            "spec.source",
            lambda d: _data_source(d)["spec"].update(source=None),
        ),
        (
            _BY_REF,
            "DataSource",
            "spec.source.pvc.namespace",
            lambda d: _data_source(d)["spec"]["source"]["pvc"].update(namespace=7),
        ),
        # the DataVolume's own clone source, or the reference to its DataSource
        (
            _CLONE,
            "DataVolume",
            "spec.source.pvc.name",
            lambda d: _data_volume(d)["spec"]["source"]["pvc"].update(name=42),
        ),
        (
            _CLONE,
            "DataVolume",
            "spec.source",
            lambda d: _data_volume(d)["spec"].update(source="base-image"),
        ),
        (
            _BY_REF,
            "DataVolume",
            "spec.sourceRef.namespace",
            lambda d: _data_volume(d)["spec"]["sourceRef"].update(namespace=42),
        ),
        (
            _BY_REF,
            "DataVolume",
            "spec.sourceRef",
            lambda d: _data_volume(d)["spec"].update(sourceRef=None),
        ),
    ],
)
def test_an_unreadable_source_of_a_never_filled_disk_is_named_never_held(
    tmp_path: Path, spec: dict[str, Any], kind: str, field: str, edit: Any
) -> None:
    doc = _never_filled(tmp_path, spec, edit)
    assert any(f == field for _, f in _named(doc, kind)), doc["collection_problems"]
    assert _status(doc, "RR-BKP-004") == "ERROR"
    assert _vm(doc)["readiness"] == "UNKNOWN"
    assert doc["run"]["complete"] is False


def test_a_clone_source_in_the_data_volume_s_own_namespace_stays_valid(tmp_path: Path) -> None:
    """``namespace: ""`` (or none) is the DataVolume's own namespace to CDI: not named."""
    doc = _never_filled(
        tmp_path,
        _CLONE,
        lambda d: _data_volume(d)["spec"]["source"]["pvc"].update(namespace=""),
    )
    assert not _named(doc, "DataVolume")
    assert _status(doc, "RR-BKP-004") == "FAIL"


# -- found by bench.mutations --kind over the rarer kinds (seeds 11101, 11102) -------------

_GATE_OFF = (FIXTURES / "RR-PLT-006" / "fail-gate-off.yaml").read_text()


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("  observedKubeVirtVersion: v1.4.1\n", "  observedKubeVirtVersion: 42\n"),
        ("  name: kubevirt\n  namespace: kubevirt\n", "  name: kubevirt\n"),
    ],
)
def test_a_kubevirt_cr_unread_leaves_a_persistent_state_vm_high_unknown(
    tmp_path: Path, old: str, new: str
) -> None:
    """RR-FW-002's FAIL for a gate that refuses a restored copy is high: when the KubeVirt CR
    that says so cannot be read, its ERROR is high too, so the VM ranks with NOT_READY (a
    medium ERROR ranked it AT_RISK at worst: NOT_READY -> UNKNOWN was an improvement)."""
    base = audit_fixture(_write(tmp_path, _GATE_OFF))
    assert _vm(base)["readiness"] == "NOT_READY"
    doc = audit_fixture(_write(tmp_path, _GATE_OFF, (old, new)))
    finding = next(f for f in _vm(doc)["findings"] if f["check_id"] == "RR-FW-002")
    assert (finding["status"], finding["severity"]) == ("ERROR", "high")
    assert _vm(doc)["readiness"] == "UNKNOWN"


_ROUTE = (FIXTURES / "RR-NET-003" / "fail-route-outside-backup.yaml").read_text()


@pytest.mark.parametrize("name", ["''", "null", "'vm1-ssh '"])
def test_a_route_backend_naming_no_service_is_named(tmp_path: Path, name: str) -> None:
    """``spec.to.name`` is required and names a Service (openshift route validation): read as
    no backend, the Route outside the backup dropped out of RR-NET-003 (AT_RISK -> READY)."""
    base = audit_fixture(_write(tmp_path, _ROUTE))
    assert _status(base, "RR-NET-003") == "FAIL"
    assert _vm(base)["readiness"] == "AT_RISK"
    doc = audit_fixture(
        _write(
            tmp_path,
            _ROUTE,
            ("    kind: Service\n    name: vm1-ssh\n", f"    kind: Service\n    name: {name}\n"),
        )
    )
    assert ("vm1-web", "spec.to.name") in _named(doc, "Route")
    assert _status(doc, "RR-NET-003") == "ERROR"
    assert _vm(doc)["readiness"] != "READY"


_DELETING = (FIXTURES / "RR-BKP-012" / "fail-pinned-revision-being-deleted.yaml").read_text()


def test_a_revision_deletion_after_the_instant_is_named_and_unknown(tmp_path: Path) -> None:
    """A pinned revision in deletion since before the Backup began is left out (high FAIL);
    its deletionTimestamp moved past the audit instant (2031) was read as a deletion that
    began after the Backup, so taken: NOT_READY -> AT_RISK, nothing named."""
    base = audit_fixture(_write(tmp_path, _DELETING))
    assert _status(base, "RR-BKP-012") == "FAIL"
    doc = audit_fixture(
        _write(
            tmp_path,
            _DELETING,
            (
                "deletionTimestamp: '2026-11-29T00:00:00Z'",
                "deletionTimestamp: '2031-06-01T00:00:00Z'",
            ),
        )
    )
    named = [
        p
        for p in doc["collection_problems"]
        if p["kind"] == "ControllerRevision" and p["field"] == "metadata.deletionTimestamp"
    ]
    assert named, doc["collection_problems"]
    finding = next(f for f in _vm(doc)["findings"] if f["check_id"] == "RR-BKP-012")
    assert (finding["status"], finding["severity"]) == ("ERROR", "high")
    assert _vm(doc)["readiness"] in ("UNKNOWN", "NOT_READY")


def test_a_kubevirt_cr_spec_written_null_is_named(tmp_path: Path) -> None:
    """``spec: null`` read as a CR without configuration: vmStateStorageClass unset, so the
    default class, and RR-PLT-006 FAIL -> PASS (bench.mutations null_list, seed 11103)."""
    spec = (
        "spec:\n  configuration:\n    developerConfiguration:\n      featureGates:\n"
        "      - VMPersistentState\n    vmStateStorageClass: gone-sc\n"
    )
    doc = audit_fixture(_write(tmp_path, _STATE, _MARKED, (spec, "spec: null\n")))
    assert ("kubevirt", "spec") in _named(doc, "KubeVirt")
    assert _platform(doc, "RR-PLT-006") == "ERROR"


@pytest.mark.parametrize("labels", ["  labels: null\n", "  Labels:\n", "  labels\u00a0:\n"])
def test_a_pinned_revision_with_unreadable_labels_is_read_and_named(
    tmp_path: Path, labels: str
) -> None:
    """A ControllerRevision is read only when labelled by KubeVirt: labels written null, in
    another case or with a blank dropped it unselected and unnamed (fz39 seeds 11101, 11103);
    now read, so its shape fault names it, and the VM pinned to it is not judged without it."""
    text = (FIXTURES / "RR-BKP-012" / "pass-pinned-revision-in-backup.yaml").read_text()
    old = (
        "  labels:\n    instancetype.kubevirt.io/object-kind: VirtualMachineClusterInstancetype\n"
        "    instancetype.kubevirt.io/object-name: u1.medium\n"
    )
    new = labels if "null" in labels else labels + old.split("\n", 1)[1]
    doc = audit_fixture(_write(tmp_path, text, (old, new)))
    assert [n for n, _ in _named(doc, "ControllerRevision")] == ["vm1-u1.medium-v1beta1-uid-1"]
    assert _vm(doc)["readiness"] == "UNKNOWN"


# -- ownerReferences of the snapshots whose owner decides whether they last ----------------

_VM_SNAP_GOING = (
    FIXTURES / "RR-STG-001" / "fail-vm-snapshot-being-deleted-takes-its-volume-snapshots.yaml"
).read_text()
_CONTENT_OWNER = (
    "    controller: true\n    kind: VirtualMachineSnapshotContent\n"
    "    name: vmsnapshot-content-vm1\n    uid: uid-vmsc\n"
)


@pytest.mark.parametrize(
    "new",
    [
        "    controller: true\n    kind: 1.5\n    name: vmsnapshot-content-vm1\n    uid: uid-vmsc\n",
        "    controller: true\n    kind: VirtualMachineSnapshotContent\n"
        "    name: vmsnapshot-content-vm1\n    uid: ''\n",
    ],
)
def test_a_volume_snapshot_owner_reference_that_is_none_is_named(tmp_path: Path, new: str) -> None:
    """The VolumeSnapshots a VirtualMachineSnapshotContent being deleted owns go with it
    (high FAIL: no lasting copy); an owner ``kind`` of 1.5 was read as no owner, so the
    snapshots as lasting copies: RR-STG-001 FAIL high -> FAIL medium, nothing named."""
    base = audit_fixture(_write(tmp_path, _VM_SNAP_GOING))
    stg = next(f for f in _vm(base)["findings"] if f["check_id"] == "RR-STG-001")
    assert (stg["status"], stg["severity"]) == ("FAIL", "high")
    doc = audit_fixture(_write(tmp_path, _VM_SNAP_GOING, (_CONTENT_OWNER, new)))
    assert ("vm1-root-manual", "metadata.ownerReferences[0]") in _named(doc, "VolumeSnapshot")
    stg = next(f for f in _vm(doc)["findings"] if f["check_id"] == "RR-STG-001")
    assert (stg["status"], stg["severity"]) in (("FAIL", "high"), ("ERROR", "high"))
    assert _vm(doc)["readiness"] in ("UNKNOWN", "NOT_READY")


# -- the namespace a deleted drill's leftover data restore came from ------------------------


@pytest.mark.parametrize("kind", ["DataDownload", "PodVolumeRestore"])
@pytest.mark.parametrize("source", [42, "app ", "App", None, ""])
def test_a_deleted_drill_leftover_with_an_unreadable_source_namespace_is_named(
    tmp_path: Path, kind: str, source: Any
) -> None:
    """A failed DataDownload (PodVolumeRestore) of a Restore deleted since keeps RR-RST-001 a
    medium FAIL; its sourceNamespace of 42, ``"app "`` or ``App`` was read as another
    namespace's, so the VM's FAIL became the older drill's PASS, nothing named."""

    def leftover(value: Any, *, keep: bool = False) -> dict[str, Any]:
        if kind == "DataDownload":
            o = _download("drill-20261129", "vm1-root", "Failed", "2026-11-29T09:00:00Z")
        else:
            o = _pod_volume_restore("drill-20261129", "root", "Failed")
        if not keep:
            o["spec"]["sourceNamespace"] = value
        return o

    base = _audit(tmp_path / "base", _docs(FIXTURE) + [leftover("app", keep=True)])
    rst = next(f for f in _vm(base)["findings"] if f["check_id"] == "RR-RST-001")
    assert (rst["status"], rst["severity"]) == ("FAIL", "medium")
    doc = _audit(tmp_path / "bad", _docs(FIXTURE) + [leftover(source)])
    assert any(f == "spec.sourceNamespace" for _, f in _named(doc, kind)), doc[
        "collection_problems"
    ]
    rst = next(f for f in _vm(doc)["findings"] if f["check_id"] == "RR-RST-001")
    assert (rst["status"], rst["severity"]) == ("ERROR", "medium")


def test_a_revision_without_its_spec_and_a_null_owner_list_are_named(tmp_path: Path) -> None:
    """KubeVirt writes each revision with the whole object, spec included; ObjectMeta's
    ownerReferences is never null (omitempty). Both were read unnamed (fz39 seed 11203)."""
    rev = (FIXTURES / "RR-FW-002" / "fail-preference-pinned-to-older-revision.yaml").read_text()
    doc = audit_fixture(_write(tmp_path, rev, ("\n  spec:\n", "\n  'spec\\xa0':\n")))
    assert any(f == "data.spec" for _, f in _named(doc, "ControllerRevision"))
    assert _vm(doc)["readiness"] in ("UNKNOWN", "NOT_READY")
    owner = "  ownerReferences:\n  - apiVersion: snapshot.kubevirt.io/v1beta1\n"
    assert owner in _VM_SNAP_GOING
    doc = audit_fixture(
        _write(
            tmp_path,
            _VM_SNAP_GOING.replace(
                owner + "    controller: true\n    kind: VirtualMachineSnapshot\n"
                "    name: vm1-snap\n    uid: uid-vms\n",
                "  ownerReferences: null\n",
            ),
        )
    )
    assert ("vmsnapshot-content-vm1", "metadata.ownerReferences") in _named(
        doc, "VirtualMachineSnapshotContent"
    )


# -- an ERROR no lighter than the FAIL it may hide (Windows guests) --------------------------


def _windows(text: str) -> str:
    assert "        vm.kubevirt.io/os: rhel9\n" in text
    return text.replace(
        "        vm.kubevirt.io/os: rhel9\n", "        vm.kubevirt.io/os: windows2k22\n"
    )


def _finding_of(doc: dict[str, Any], check: str) -> tuple[str, str]:
    f = next(f for f in _vm(doc)["findings"] if f["check_id"] == check)
    return f["status"], f["severity"]


def test_a_windows_vm_whose_running_firmware_cannot_be_read_is_high_unknown(
    tmp_path: Path,
) -> None:
    """RR-FW-001's FAIL for a pinned uuid the guest does not run with is high on Windows; the
    running VMI's uuid written 42 gave a medium ERROR: NOT_READY -> UNKNOWN ranked AT_RISK."""
    text = _windows(
        (FIXTURES / "RR-FW-001" / "fail-pinned-uuid-differs-from-running-vmi.yaml").read_text()
    )
    assert _finding_of(audit_fixture(_write(tmp_path, text)), "RR-FW-001") == ("FAIL", "high")
    doc = audit_fixture(
        _write(
            tmp_path,
            text,
            ("      uuid: 3f6d2c1e-8b0a-4f7e-b3c5-6a1d9e2f4b10\n", "      uuid: 42\n"),
        )
    )
    assert _finding_of(doc, "RR-FW-001") == ("ERROR", "high")
    assert _vm(doc)["readiness"] == "UNKNOWN"


def test_a_windows_vm_whose_running_devices_cannot_be_read_is_high_unknown(
    tmp_path: Path,
) -> None:
    """RR-DSK-003's FAIL for a Windows disk bus changed while running is high; the VMI's disks
    written as a string gave a medium ERROR."""
    text = _windows(
        (FIXTURES / "RR-DSK-003" / "fail-disk-bus-changed-while-running.yaml").read_text()
    )
    assert _finding_of(audit_fixture(_write(tmp_path, text)), "RR-DSK-003") == ("FAIL", "high")
    vmi = text.index("kind: VirtualMachineInstance")
    head, tail = text[:vmi], text[vmi:]
    i = tail.index("      disks:\n")
    j = tail.index("      interfaces:\n")
    broken = head + tail[:i] + "      disks: junk\n" + tail[j:]
    doc = audit_fixture(_write(tmp_path, broken))
    assert _finding_of(doc, "RR-DSK-003") == ("ERROR", "high")
    assert _vm(doc)["readiness"] in ("UNKNOWN", "NOT_READY")


# -- a DataVolume's phase: lost, null or no phase CDI writes ---------------------------------

_ADOPTION = (
    FIXTURES / "RR-BKP-004" / "error-datavolume-without-plugin-adoption-gate-unseen.yaml"
).read_text()
_DV_STATUS = "status:\n  phase: Succeeded\n  progress: 100.0%"


@pytest.mark.parametrize(
    ("status", "reason"),
    [
        ("status:\n  progress: 100.0%", "is missing although status holds progress"),
        ("status:\n  phase: null\n  progress: 100.0%", "is null"),
        ("status:\n  phase: succeeded\n  progress: 100.0%", "is 'succeeded'"),
    ],
)
def test_a_data_volume_phase_that_cannot_be_read_is_named_and_no_capture(
    tmp_path: Path, status: str, reason: str
) -> None:
    """A Succeeded DataVolume whose PVC a restore may not adopt is RR-BKP-004 ERROR; with its
    phase deleted (the status still holding its progress) it was read as "no phase", the
    adoption check never ran, and the VM was READY with nothing named (seed 11301)."""
    base = audit_fixture(_write(tmp_path, _ADOPTION))
    assert _finding_of(base, "RR-BKP-004") == ("ERROR", "high")
    doc = audit_fixture(_write(tmp_path, _ADOPTION, (_DV_STATUS, status)))
    named = [p for p in doc["collection_problems"] if p["kind"] == "DataVolume"]
    assert [(p["name"], p["field"]) for p in named] == [("vm1-root", "status.phase")]
    assert reason in named[0]["reason"]
    assert _finding_of(doc, "RR-BKP-004") == ("ERROR", "high")
    assert _finding_of(doc, "RR-STG-001") == ("ERROR", "high")
    assert _vm(doc)["readiness"] == "UNKNOWN"


def test_a_data_volume_with_an_empty_status_stays_valid(tmp_path: Path) -> None:
    """A DataVolume CDI has not reconciled yet has no status (or an empty one): not named."""
    doc = audit_fixture(_write(tmp_path, _ADOPTION, (_DV_STATUS, "status: {}")))
    assert not [p for p in doc["collection_problems"] if p["kind"] == "DataVolume"]


# -- a kind or group with a blank or an invisible character around it ------------------------


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("kind", "VirtualMachine\n"),
        ("kind", " VirtualMachine"),
        ("kind", "VirtualMachine\u00a0"),
        ("kind", "VirtualMachine\u200b"),
        ("apiVersion", " kubevirt.io/v1"),
        ("apiVersion", "kubevirt.io /v1"),
    ],
)
def test_a_vm_whose_kind_or_group_holds_a_blank_is_named_and_listed(
    tmp_path: Path, key: str, value: str
) -> None:
    """Read as a kind the auditor does not read, the VM vanished from the report with nothing
    named (an odd-shapes sweep of the bundled example, fz39); the API server writes neither."""
    out = tmp_path / "export"
    shutil.copytree(_EXAMPLE, out)
    path = out / "virtualmachines.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["items"][0][key] = value
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    report = _audit_dir(out)
    assert _vm(report, "billing/billing-db")["readiness"] == "UNKNOWN"
    named = [p for p in report["collection_problems"] if p["name"] == "billing-db"]
    assert [(p["kind"], p["field"]) for p in named] == [("VirtualMachine", key)]
    assert report["run"]["complete"] is False


@pytest.mark.parametrize("key", ["apiVersion", "kind"])
def test_an_object_of_no_readable_kind_in_a_file_of_many_kinds_leaves_every_kind_partial(
    tmp_path: Path, key: str
) -> None:
    """A KubeVirt CR whose apiVersion (or kind) was a list, in a file of many kinds, was
    dropped and its kind read complete with no CR: RR-FW-002's high FAIL (the gate off) went
    PASS, NOT_READY -> READY. A kind told by a one-string list is that kind's."""
    old = "apiVersion: kubevirt.io/v1\nkind: KubeVirt\n"
    assert old in _GATE_OFF
    new = (
        "apiVersion: [kubevirt.io/v1]\nkind: KubeVirt\n"
        if key == "apiVersion"
        else "apiVersion: kubevirt.io/v1\nkind: [KubeVirt, x]\n"
    )
    doc = audit_fixture(_write(tmp_path, _GATE_OFF, (old, new)))
    assert any(p["field"] == key for p in doc["collection_problems"])
    assert _finding_of(doc, "RR-FW-002")[0] == "ERROR"
    assert _vm(doc)["readiness"] == "UNKNOWN"
    vm_old = "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\n"
    assert vm_old in _GATE_OFF
    listed = audit_fixture(
        _write(
            tmp_path, _GATE_OFF, (vm_old, "apiVersion: kubevirt.io/v1\nkind: [VirtualMachine]\n")
        )
    )
    assert _vm(listed)["readiness"] == "UNKNOWN"  # refused, still listed


@pytest.mark.parametrize("namespace", [{"value": "app"}, ["app"], 7])
def test_a_vm_whose_namespace_is_no_string_is_listed_unknown(
    tmp_path: Path, namespace: Any
) -> None:
    """Refused, the VM vanished from the report while its problem named it (bench.mutations
    counts that as an improvement): it is listed UNKNOWN under its folder's namespace, or
    under "(unreadable)", which no namespace can be."""
    out = tmp_path / "export"
    shutil.copytree(_EXAMPLE, out)
    path = out / "virtualmachines.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["items"][0]["metadata"]["namespace"] = namespace
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    report = _audit_dir(out)
    vm = _vm(report, "(unreadable)/billing-db")
    assert vm["readiness"] == "UNKNOWN"
    assert {f["status"] for f in vm["findings"]} == {"ERROR"}
    named = [p for p in report["collection_problems"] if p["name"] == "billing-db"]
    assert [(p["kind"], p["field"]) for p in named] == [("VirtualMachine", "metadata.namespace")]


@pytest.mark.parametrize("name", ["''", "'vm1-root '"])
def test_a_data_volume_template_naming_nothing_is_named(tmp_path: Path, name: str) -> None:
    """A dataVolumeTemplate's name is the DataVolume and PVC it makes: "" (or a blank) names
    none (bench.mutations empty_string, seed 11401: unnamed)."""
    text = (
        FIXTURES
        / "RR-BKP-001"
        / "pass-stopped-vm-with-datavolume-templates-under-star-resources.yaml"
    ).read_text()
    old = "  dataVolumeTemplates:\n  - metadata:\n      name: vm1-root\n"
    doc = audit_fixture(
        _write(tmp_path, text, (old, old.replace("name: vm1-root", f"name: {name}")))
    )
    named = [
        p
        for p in doc["collection_problems"]
        if p["kind"] == "VirtualMachine"
        and p["field"] == "spec.dataVolumeTemplates[0].metadata.name"
    ]
    assert named, doc["collection_problems"]
    assert _finding_of(doc, "RR-BKP-001")[0] == "ERROR"


def test_a_dpa_plugin_list_written_null_is_named(tmp_path: Path) -> None:
    """``defaultPlugins: null`` read as no plugins (the API server prunes a null of a custom
    resource): bench.mutations null_list, seed 11501, unnamed."""
    path = next(FIXTURES.glob("*/pass-kubevirt-plugin-adds-unlabelled-pvcs.yaml"))
    text = path.read_text()
    i = text.index("      defaultPlugins:\n")
    j = i + len("      defaultPlugins:\n")
    while text[j:].startswith("      - "):
        j = text.index("\n", j) + 1
    doc = audit_fixture(_write(tmp_path, text[:i] + "      defaultPlugins: null\n" + text[j:]))
    assert ("dpa", "spec.configuration.velero.defaultPlugins") in _named(
        doc, "DataProtectionApplication"
    )
    assert _vm(doc)["readiness"] != "READY"


def test_a_revision_spec_key_with_a_blank_is_named(tmp_path: Path) -> None:
    """A pinned preference revision's ``"firmware\\u00a0"`` hid its EFI settings: RR-FW-002
    FAIL -> N/A, AT_RISK -> READY, nothing named (bench.mutations key_blank, seed 11503)."""
    rev = (FIXTURES / "RR-FW-002" / "fail-preference-pinned-to-older-revision.yaml").read_text()
    base = audit_fixture(_write(tmp_path, rev))
    assert _vm(base)["readiness"] == "AT_RISK"
    doc = audit_fixture(
        _write(tmp_path, rev, ("  spec:\n    firmware:\n", '  spec:\n    "firmware\\u00a0":\n'))
    )
    assert any(f == "data.spec.firmware" for _, f in _named(doc, "ControllerRevision"))
    assert _vm(doc)["readiness"] in ("UNKNOWN", "NOT_READY")
