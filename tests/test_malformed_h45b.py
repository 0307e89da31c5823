"""Round h45b: the shared fuzz cases' kinds of fault, probed beyond the five listed cases
(docs/readiness.md, "Round h45b").

Each case edits one field of a copy of the shared cluster export (``../shared/corpus``;
skipped where it is absent), as the held-back fuzz cases do, and asserts the problem naming
file, object and field, the findings that rest on it and the VM's readiness, never better
than before. The last tests pin the mutation families this round added to
``bench/mutations.py`` (``other_type``, ``list_scalar``, ``absent_typed``).
"""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from auditor.config import AuditSettings
from auditor.pipeline import audit_data
from auditor.sources.directory import DirectorySource
from bench.mutations import RANK, mutations, run, targets, worst_rank
from tests.conftest import AUDIT_AT, find_corpus, report_doc


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader with timestamps kept as strings, as the auditor reads them."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _export(tmp_path: Path) -> Path:
    """A copy of the shared cluster export (skips the test where it is absent)."""
    root = tmp_path / "export"
    shutil.copytree(find_corpus() / "cluster-export", root)
    return root


def _set(root: Path, file: str, name: str, path: str, value: Any) -> None:
    """Set the dotted ``path`` (list indexes as numbers) of the List item ``name`` of ``file``."""
    doc = yaml.load((root / file).read_text(), Loader=_Loader)  # noqa: S506 (a SafeLoader)
    obj = next(o for o in doc["items"] if o["metadata"]["name"] == name)
    steps: list[Any] = [int(s) if s.isdigit() else s for s in path.split(".")]
    for step in steps[:-1]:
        obj = obj[step]
    obj[steps[-1]] = value
    (root / file).write_text(yaml.safe_dump(doc, sort_keys=False, width=1 << 16))


def _audit(root: Path) -> dict[str, Any]:
    return report_doc(audit_data(DirectorySource(root).collect(), AuditSettings(), at=AUDIT_AT))


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _audit(_export(tmp_path_factory.mktemp("base")))


def _vm(doc: dict[str, Any], ref: str) -> dict[str, Any]:
    ns, name = ref.split("/")
    return next(v for v in doc["vms"] if (v["namespace"], v["name"]) == (ns, name))


def _status(doc: dict[str, Any], ref: str, check: str) -> tuple[str, str]:
    f = next(f for f in _vm(doc, ref)["findings"] if f["check_id"] == check)
    return f["status"], f["severity"]


def _fields(doc: dict[str, Any], kind: str, name: str) -> list[tuple[str, str]]:
    """(file without its ``items[i]`` anchor, field) of each problem naming ``kind`` ``name``."""
    return [
        (str(p["file"]).split(" ", 1)[0].split("#", 1)[0], str(p["field"]))
        for p in doc["collection_problems"]
        if p["kind"] == kind and p["name"] == name
    ]


def _no_better(before: dict[str, Any], after: dict[str, Any], ref: str) -> None:
    """``ref`` ranks no better after than before (``bench.mutations.worst_rank``), and no
    check of it that FAILed now passes."""

    def rank(doc: dict[str, Any]) -> int:
        vm = _vm(doc, ref)
        found = {f["check_id"]: f"{f['status']} {f['severity']}" for f in vm["findings"]}
        return worst_rank(vm["readiness"], found)

    assert rank(after) >= rank(before)
    was = {f["check_id"]: f["status"] for f in _vm(before, ref)["findings"]}
    for f in _vm(after, ref)["findings"]:
        if was[f["check_id"]] == "FAIL":
            assert f["status"] in ("FAIL", "ERROR"), f


# -- a Velero filter of another type is named at its own field, not at "spec" ---------------


def test_a_backup_namespace_list_written_as_a_string_is_named_at_its_field(
    tmp_path: Path, baseline: dict[str, Any]
) -> None:
    """``includedNamespaces: eng-sandbox`` (a string, not a list: velero BackupSpec
    ``IncludedNamespaces []string``) was named at ``spec`` alone; the newest eng-sandbox
    Backup is unread, so dev-build-01's high RR-BKP-002 FAIL becomes a high ERROR (UNKNOWN,
    ranked with NOT_READY), never AT_RISK (fuzz case 10's kind)."""
    ref, backup = "eng-sandbox/dev-build-01", "eng-sandbox-weekly-20261115030004"
    assert _vm(baseline, ref)["readiness"] == "NOT_READY"
    assert _status(baseline, ref, "RR-BKP-002") == ("FAIL", "high")
    root = _export(tmp_path)
    _set(root, "backups.yaml", backup, "spec.includedNamespaces", "eng-sandbox")
    doc = _audit(root)
    assert ("backups.yaml", "spec.includedNamespaces") in _fields(doc, "Backup", backup)
    assert _status(doc, ref, "RR-BKP-002") == ("ERROR", "high")
    assert _vm(doc, ref)["readiness"] == "UNKNOWN"
    assert doc["run"]["complete"] is False
    _no_better(baseline, doc, ref)


def test_a_schedule_template_filter_is_named_below_its_template(tmp_path: Path) -> None:
    """A Schedule's filters sit in ``spec.template`` (velero ScheduleSpec ``Template
    BackupSpec``): ``excludedNamespaces: 7`` is named there."""
    root = _export(tmp_path)
    _set(root, "schedules.yaml", "eng-sandbox-weekly", "spec.template.excludedNamespaces", 7)
    doc = _audit(root)
    assert ("schedules.yaml", "spec.template.excludedNamespaces") in _fields(
        doc, "Schedule", "eng-sandbox-weekly"
    )
    assert doc["run"]["complete"] is False


def test_a_selector_label_value_of_another_type_is_named_at_its_key(tmp_path: Path) -> None:
    """A metav1.LabelSelector's ``matchLabels`` values are strings: 42 is named at
    ``spec.template.labelSelector.matchLabels[<key>]`` of the Schedule."""
    root = _export(tmp_path)
    key = "backup.corp.example/policy"
    doc = yaml.load((root / "schedules.yaml").read_text(), Loader=_Loader)  # noqa: S506
    sched = next(o for o in doc["items"] if o["metadata"]["name"] == "web-platform-nightly")
    sched["spec"]["template"]["labelSelector"]["matchLabels"][key] = 42
    (root / "schedules.yaml").write_text(yaml.safe_dump(doc, sort_keys=False, width=1 << 16))
    out = _audit(root)
    assert (
        "schedules.yaml",
        f"spec.template.labelSelector.matchLabels[{key}]",
    ) in _fields(out, "Schedule", "web-platform-nightly")


# -- the listed cases' kinds on other objects and fields: already named, kept so --------------


@pytest.mark.parametrize(
    ("path", "value", "field"),
    [
        (
            "spec.template.spec.volumes.0.dataVolume.name",
            42,
            "spec.template.spec.volumes[rootdisk].dataVolume.name",
        ),
        (
            "spec.template.spec.volumes.1.persistentVolumeClaim.claimName",
            ["web-shop-db-data"],
            "spec.template.spec.volumes[data].persistentVolumeClaim.claimName",
        ),
    ],
    ids=["datavolume-name-int", "claim-name-list"],
)
def test_a_volume_reference_of_another_type_never_drops_the_disk(
    tmp_path: Path, baseline: dict[str, Any], path: str, value: Any, field: str
) -> None:
    """Fuzz case 03's kind (a reference that vanished when its type was wrong, the disk
    dropped): the reference is named, and the checks that count the VM's disks give ERROR
    high, never PASS with one disk fewer."""
    ref = "web-platform/web-shop-db"
    assert _status(baseline, ref, "RR-BKP-004") == ("FAIL", "high")
    root = _export(tmp_path)
    _set(root, "virtualmachines.yaml", "web-shop-db", path, value)
    doc = _audit(root)
    assert ("virtualmachines.yaml", field) in _fields(doc, "VirtualMachine", "web-shop-db")
    for check in ("RR-BKP-004", "RR-STG-001"):
        assert _status(doc, ref, check) == ("ERROR", "high"), check
    assert _vm(doc, ref)["readiness"] == "UNKNOWN"
    _no_better(baseline, doc, ref)


def test_an_empty_interface_list_beside_networks_leaves_the_nad_check_unknown(
    tmp_path: Path, baseline: dict[str, Any]
) -> None:
    """Fuzz case 05's kind with ``interfaces: []`` (a list, so no null to name): each network
    used by no interface is named, and RR-NET-001 (the missing NAD) is ERROR high."""
    ref = "web-platform/web-cache-01"
    assert _status(baseline, ref, "RR-NET-001") == ("FAIL", "high")
    root = _export(tmp_path)
    _set(
        root,
        "virtualmachines.yaml",
        "web-cache-01",
        "spec.template.spec.domain.devices.interfaces",
        [],
    )
    doc = _audit(root)
    named = _fields(doc, "VirtualMachine", "web-cache-01")
    assert ("virtualmachines.yaml", "spec.template.spec.networks[backend]") in named
    assert _status(doc, ref, "RR-NET-001") == ("ERROR", "high")
    assert _vm(doc, ref)["readiness"] == "UNKNOWN"
    _no_better(baseline, doc, ref)


def test_a_storage_class_reclaim_policy_in_lower_case_is_no_retain(
    tmp_path: Path, baseline: dict[str, Any]
) -> None:
    """Fuzz case 07's kind on a StorageClass (``reclaimPolicy: retain``; Kubernetes takes
    Retain, Delete or Recycle): named, RR-STG-001 ERROR high for the VMs on the class, and
    web-shop-db's Delete-storage FAIL never turns into a PASS."""
    ref, sc = "web-platform/web-shop-db", "ocs-storagecluster-ceph-rbd-virtualization"
    assert _status(baseline, ref, "RR-STG-001") == ("FAIL", "high")
    root = _export(tmp_path)
    _set(root, "storageclasses.yaml", sc, "reclaimPolicy", "retain")
    doc = _audit(root)
    assert ("storageclasses.yaml", "reclaimPolicy") in _fields(doc, "StorageClass", sc)
    assert _status(doc, ref, "RR-STG-001") == ("ERROR", "high")
    assert _status(doc, "finance-prod/fin-db-01", "RR-STG-001") == ("ERROR", "high")
    _no_better(baseline, doc, ref)


def test_a_vmi_volume_status_of_another_type_is_named_not_raised(
    tmp_path: Path, baseline: dict[str, Any]
) -> None:
    """Fuzz case 01's kind on another VMI list (``status.volumeStatus: 1.5``): named at the
    field, the checks reading it ERROR, and no check raised (no ``exception`` evidence)."""
    ref = "finance-prod/fin-db-01"
    assert _vm(baseline, ref)["readiness"] == "READY"
    root = _export(tmp_path)
    _set(root, "virtualmachineinstances.yaml", "fin-db-01", "status.volumeStatus", 1.5)
    doc = _audit(root)
    assert ("virtualmachineinstances.yaml", "status.volumeStatus") in _fields(
        doc, "VirtualMachineInstance", "fin-db-01"
    )
    assert _status(doc, ref, "RR-DSK-002") == ("ERROR", "medium")
    assert _vm(doc, ref)["readiness"] == "UNKNOWN"
    assert not [
        (v["name"], f["check_id"])
        for v in doc["vms"]
        for f in v["findings"]
        if "exception" in f["evidence"]
    ]


# -- the mutation families this round added ------------------------------------------------


def test_the_new_families_have_sites_in_our_exports() -> None:
    """``other_type``, ``list_scalar`` and ``absent_typed`` mutate our first exports, each in
    the shape the module docstring gives."""
    found = [m for t in targets()[:3] for m in mutations(t)]
    counts = Counter(m.family for m in found)
    assert all(counts[f] > 0 for f in ("other_type", "list_scalar", "absent_typed")), counts
    scalars = [m for m in found if m.family == "list_scalar"]
    assert all(isinstance(m.value, str | int) for m in scalars)
    added = {
        (m.kind, m.path[-1]) for m in found if m.family == "absent_typed" and m.kind == "Backup"
    }
    assert ("Backup", "snapshotMoveData") in added  # absent from our Backups, so added
    assert {repr(m.value) for m in found if m.family == "absent_typed"} >= {"42", "'false'"}


def test_a_sample_of_the_new_families_never_improves_a_verdict() -> None:
    """60 mutations of the three new families over our exports: no verdict better, no
    traceback, no check that raised."""
    stats = run(60, seed=4581, families=("other_type", "list_scalar", "absent_typed"))
    assert sum(stats[f]["tried"] for f in ("other_type", "list_scalar", "absent_typed")) == 60
    assert list(stats["!"]) == []
    assert RANK["UNKNOWN"] == RANK["NOT_READY"]


# -- faults the new families found --------------------------------------------------------


@pytest.mark.parametrize("value", [42, "false", ["x"]], ids=["int", "string", "list"])
def test_a_snapshot_content_error_of_another_type_is_named(
    tmp_path: Path, baseline: dict[str, Any], value: Any
) -> None:
    """absent_typed, seed 4571: a VolumeSnapshotContent's ``status.error`` is a
    VolumeSnapshotError mapping (external-snapshotter types.go); ``error: 42`` read as a
    failed cut turned fin-db-01's RR-RST-001 PASS into an ERROR with nothing named. Now the
    field is named (the verdict as before: UNKNOWN, never better than READY)."""
    content = "snapcontent-3953f5f6-0fad-42f6-8454-6fd3f2192a94"
    ref = "finance-prod/fin-db-01"
    root = _export(tmp_path)
    _set(root, "volumesnapshotcontents.yaml", content, "status.error", value)
    doc = _audit(root)
    assert ("volumesnapshotcontents.yaml", "status.error") in _fields(
        doc, "VolumeSnapshotContent", content
    )
    assert _status(doc, ref, "RR-RST-001") == ("ERROR", "medium")
    assert doc["run"]["complete"] is False
    _no_better(baseline, doc, ref)


def test_a_label_of_another_type_names_its_key(tmp_path: Path) -> None:
    """A VMI label whose value is no string is named at ``metadata.labels`` (the field the
    earlier rounds' tests pin); the reason now says which entry, and the value's type only
    (an annotation may hold a secret)."""
    root = _export(tmp_path)
    doc = yaml.load((root / "virtualmachineinstances.yaml").read_text(), Loader=_Loader)  # noqa: S506
    vmi = next(o for o in doc["items"] if o["metadata"]["name"] == "web-cache-01")
    vmi["metadata"]["labels"]["kubevirt.io/domain"] = 42
    text = yaml.safe_dump(doc, sort_keys=False, width=1 << 16)
    (root / "virtualmachineinstances.yaml").write_text(text)
    out = _audit(root)
    reasons = [
        p["reason"]
        for p in out["collection_problems"]
        if p["kind"] == "VirtualMachineInstance"
        and p["name"] == "web-cache-01"
        and p["field"] == "metadata.labels"
    ]
    assert reasons and "entry 'kubevirt.io/domain': a value of type int" in reasons[0], reasons
    assert "42" not in reasons[0]


@pytest.mark.parametrize("phase", [["Completed"], {"x": "Failed"}], ids=["list", "mapping"])
def test_a_data_upload_phase_of_another_type_is_named_and_never_raises(
    tmp_path: Path, phase: Any
) -> None:
    """other_type, seed 4522 over bug case 15's export: a DataUpload's ``status.phase: [x]``
    made RR-BKP-001 raise (a list is unhashable; capture._phase_status looked it up in a
    set). The phase is named, no check raises, and app-vm-01 stays NOT_READY (RR-STG-001
    FAIL high -> ERROR high)."""
    root = tmp_path / "export"
    shutil.copytree(find_corpus() / "bugcases" / "15-datamover-block-du-failed" / "export", root)
    before = _audit(root)
    ref, upload = "team-apps/app-vm-01", "team-apps-daily-20261128010002-x7k2p"
    assert _status(before, ref, "RR-STG-001") == ("FAIL", "high")
    _set(root, "datauploads.yaml", upload, "status.phase", phase)
    doc = _audit(root)
    assert ("datauploads.yaml", "status.phase") in _fields(doc, "DataUpload", upload)
    assert not [
        (v["name"], f["check_id"])
        for v in doc["vms"]
        for f in v["findings"]
        if "exception" in f["evidence"]
    ]
    assert _status(doc, ref, "RR-STG-001") == ("ERROR", "high")
    assert _vm(doc, ref)["readiness"] == "NOT_READY"
    _no_better(before, doc, ref)
