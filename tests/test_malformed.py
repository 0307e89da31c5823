"""Malformed input gives named collection problems, never a crash or a PASS."""

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

FIXTURES_PASS = Path(__file__).parent / "fixtures" / "checks" / "RR-BKP-004" / "pass.yaml"

GOOD = Path(__file__).parent / "fixtures" / "checks" / "RR-BKP-001" / "pass.yaml"


def _audit(tmp_path: Path, files: dict[str, str]) -> dict[str, Any]:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return report_doc(audit_data(DirectorySource(tmp_path).collect(), AuditSettings(), at=AUDIT_AT))


def _vm_doc() -> dict:  # type: ignore[type-arg]
    return next(d for d in yaml.safe_load_all(GOOD.read_text()) if d["kind"] == "VirtualMachine")


CASES = {
    "not-yaml": ("broken.yaml", "kind: [unclosed\n", "broken.yaml", "YAML error at line"),
    "scalar-document": ("scalar.yaml", "just a string\n", "scalar.yaml", "not a Kubernetes object"),
    "no-name": (
        "noname.yaml",
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {}\n",
        "noname.yaml",
        "has no metadata.name",
    ),
    "no-kind": (
        "nokind.yaml",
        "apiVersion: v1\nmetadata: {name: x}\n",
        "nokind.yaml",
        "no apiVersion/kind",
    ),
    "spec-is-list": (
        "listspec.yaml",
        "apiVersion: velero.io/v1\nkind: Backup\nmetadata: {name: b, namespace: velero}\nspec: [1]\n",
        "listspec.yaml",
        "field spec is a list",
    ),
    "items-not-list": (
        "items.yaml",
        "apiVersion: v1\nkind: List\nitems: {a: 1}\n",
        "items.yaml",
        "items is a mapping",
    ),
    "not-utf8": ("latin1.yaml", "caf\xe9", "latin1.yaml", None),
    # red team (helper-20): values JSON has no form for. !!binary bytes that are no UTF-8
    # crashed the report's serialiser; NaN and sets printed differently per process and
    # made the input digest depend on PYTHONHASHSEED.
    "binary-value": (
        "svc.yaml",
        'apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: a}\nspec: {type: !!binary "/w=="}\n',
        "svc.yaml",
        "found a binary value",
    ),
    "set-value": (
        "svcset.yaml",
        "apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: a}\nspec: {ports: !!set {a, b}}\n",
        "svcset.yaml",
        "found a set value",
    ),
    "nan-number": (
        "svcnan.yaml",
        "apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: a}\nspec: {type: .nan}\n",
        "svcnan.yaml",
        "no JSON number",
    ),
    "infinite-number": (
        "pvc.yaml",
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: p, namespace: a}\n"
        "spec: {resources: {requests: {storage: -.inf}}}\n",
        "pvc.yaml",
        "no JSON number",
    ),
    "namespace-not-string": (
        "nsint.yaml",
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: p, namespace: 5}\n",
        "nsint.yaml",
        "metadata.namespace that is not a string",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_malformed_file_is_a_named_problem(tmp_path: Path, case: str) -> None:
    name, text, file, needle = CASES[case]
    if case == "not-utf8":
        (tmp_path / name).write_bytes(b"kind: caf\xe9\xff\n")
        report = report_doc(
            audit_data(DirectorySource(tmp_path).collect(), AuditSettings(), at=AUDIT_AT)
        )
        needle = "not UTF-8"
    else:
        report = _audit(tmp_path, {name: text})
    problems = [p for p in report["collection_problems"] if p["file"] == file]
    assert problems, report["collection_problems"]
    assert needle in problems[0]["reason"]
    assert report["run"]["complete"] is False


def test_broken_vm_spec_errors_instead_of_passing(tmp_path: Path) -> None:
    vm = _vm_doc()
    vm["spec"]["template"]["spec"]["domain"]["devices"]["interfaces"] = "eth0"
    vm["spec"]["template"]["spec"]["domain"]["firmware"] = ["uuid"]
    others = [d for d in yaml.safe_load_all(GOOD.read_text()) if d["kind"] != "VirtualMachine"]
    report = _audit(tmp_path, {"all.yaml": yaml.safe_dump_all([*others, vm])})
    entry = report["vms"][0]
    statuses = {f["check_id"]: f["status"] for f in entry["findings"]}
    assert statuses["RR-NIC-001"] == "ERROR"
    assert statuses["RR-FW-001"] == "ERROR"
    assert statuses["RR-FW-002"] == "ERROR"
    fields = {p["field"] for p in report["collection_problems"]}
    assert "spec.template.spec.domain.devices.interfaces" in fields
    assert "spec.template.spec.domain.firmware" in fields
    problem = next(
        p
        for p in report["collection_problems"]
        if p["field"] == "spec.template.spec.domain.firmware"
    )
    assert problem["file"].startswith("all.yaml") and problem["name"] == "vm1"
    assert entry["readiness"] != "READY"


def test_garbage_backup_phase_never_protects(tmp_path: Path) -> None:
    docs = list(yaml.safe_load_all(GOOD.read_text()))
    for d in docs:
        if d["kind"] == "Backup":
            d["status"]["phase"] = {"weird": True}
            d["status"]["completionTimestamp"] = "not-a-time"
    report = _audit(tmp_path, {"all.yaml": yaml.safe_dump_all(docs)})
    statuses = {f["check_id"]: f["status"] for f in report["vms"][0]["findings"]}
    # The phase is outside Velero's enum: a named problem, and the checks cannot conclude.
    assert statuses["RR-BKP-001"] == "ERROR"
    assert statuses["RR-BKP-002"] == "ERROR"
    assert report["vms"][0]["readiness"] == "UNKNOWN"
    assert any(
        p["kind"] == "Backup" and p["field"] == "status.phase"
        for p in report["collection_problems"]
    )


def test_duplicate_object_is_named_with_both_files(tmp_path: Path) -> None:
    text = GOOD.read_text()
    report = _audit(tmp_path, {"a/one.yaml": text, "b/two.yaml": text})
    dups = [p for p in report["collection_problems"] if "defined twice" in p["reason"]]
    vm_dup = next(p for p in dups if p["kind"] == "VirtualMachine")
    assert "a/one.yaml" in vm_dup["reason"] and "b/two.yaml" in vm_dup["reason"]
    assert len(report["vms"]) == 1


def test_oversized_file_refused(tmp_path: Path) -> None:
    (tmp_path / "big.yaml").write_text("a: " + "x" * 5000 + "\n")
    data = DirectorySource(tmp_path, max_file_bytes=1000).collect()
    assert "above the 1000-byte limit" in data.problems[0].reason


def test_alias_bomb_refused(tmp_path: Path) -> None:
    lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    for i in range(1, 10):
        prev, cur = chr(96 + i), chr(97 + i)
        lines.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 9) + "]")
    (tmp_path / "bomb.yaml").write_text("\n".join(lines) + "\n")
    data = DirectorySource(tmp_path).collect()
    assert "alias bomb" in data.problems[0].reason


def test_missing_directory_raises(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="does not exist"):
        DirectorySource(tmp_path / "nope").collect()


def test_malformed_backup_scope_is_a_problem_and_an_error(tmp_path: Path) -> None:
    docs = list(yaml.safe_load_all(GOOD.read_text()))
    for d in docs:
        if d["kind"] == "Backup":
            d["spec"]["includedNamespaces"] = "app"  # a string, not a list
    report = _audit(tmp_path, {"all.yaml": yaml.safe_dump_all(docs)})
    problem = next(p for p in report["collection_problems"] if p["kind"] == "Backup")
    assert "includedNamespaces is not a list of strings" in problem["reason"]
    assert problem["file"].startswith("all.yaml")
    statuses = {f["check_id"]: f for f in report["vms"][0]["findings"]}
    assert statuses["RR-BKP-001"]["status"] == "ERROR"
    assert "would_fail" in statuses["RR-BKP-001"]["evidence"]
    assert report["vms"][0]["readiness"] == "UNKNOWN"


def test_cli_max_file_bytes(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from auditor.cli import main

    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "vms.yaml").write_text(GOOD.read_text())
    result = CliRunner().invoke(
        main,
        [
            "run",
            "--from-dir",
            str(tmp_path / "in"),
            "--out",
            str(tmp_path / "out"),
            "--format",
            "json",
            "--max-file-bytes",
            "100",
        ],
    )
    # the only file was refused, so no VM was read: exit 4, not a clean empty report (issue 14)
    assert result.exit_code == 4, result.output
    assert "no VirtualMachine objects found" in result.output
    # the error names the file and why it was refused
    assert "file vms.yaml could not be read" in result.output
    assert "above the 100-byte limit" in result.output


def test_an_unreadable_file_leaves_the_kinds_it_names_partial(tmp_path: Path) -> None:
    """A duplicate key in an oddly named file: the VM it holds is lost, so the VM list is
    partial (the gate cannot pass on the VMs that were read)."""
    (tmp_path / "zz-more.yaml").write_text(
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\n"
        "metadata:\n  name: forgotten\n  namespace: app\n  labels:\n    a: x\n    a: y\n"
    )
    (tmp_path / "noise.yaml").write_text("just: [a, list\n")
    data = DirectorySource(tmp_path).collect()
    assert data.state("VirtualMachine") is KindState.PARTIAL
    by_file = {p.file: p for p in data.problems}
    assert by_file["zz-more.yaml"].kinds == ("VirtualMachine",)
    # a file that names no kind could have held any of them
    assert set(by_file["noise.yaml"].kinds) == set(BY_KIND)
    assert data.state("Backup") is KindState.PARTIAL


def test_a_non_object_list_item_leaves_that_lists_kind_partial(tmp_path: Path) -> None:
    (tmp_path / "things.yaml").write_text(
        "apiVersion: v1\nkind: List\nitems:\n"
        "- {apiVersion: kubevirt.io/v1, kind: VirtualMachine, metadata: {name: a, namespace: app}}\n"
        "- 42\n- null\n"
    )
    data = DirectorySource(tmp_path).collect()
    assert [o["metadata"]["name"] for o in data.of("VirtualMachine")] == ["a"]
    assert data.state("VirtualMachine") is KindState.PARTIAL
    reasons = sorted(p.reason for p in data.problems)
    assert reasons == [
        "things.yaml items[1]: item is a number, not an object",
        "things.yaml items[2]: item is null, not an object",
    ]
    assert {p.kinds for p in data.problems} == {("VirtualMachine",)}


def test_a_nonsense_backup_counter_proves_nothing(tmp_path: Path) -> None:
    """A count no Velero could write (above Go's int range) is named and its Backup unread."""
    docs = list(yaml.safe_load_all(FIXTURES_PASS.read_text()))
    for d in docs:
        if d and d["kind"] == "Backup" and d["metadata"]["name"] == "daily-20261130":
            d["status"]["csiVolumeSnapshotsCompleted"] = 10**40
            d["status"]["csiVolumeSnapshotsAttempted"] = 10**40
    (tmp_path / "all.yaml").write_text(yaml.safe_dump_all([d for d in docs if d]))
    report = report_doc(
        audit_data(DirectorySource(tmp_path).collect(), AuditSettings(), at=AUDIT_AT)
    )
    fields = {(p["kind"], p["name"], p["field"]) for p in report["collection_problems"]}
    assert ("Backup", "daily-20261130", "status.csiVolumeSnapshotsCompleted") in fields
    vm = next(v for v in report["vms"] if v["name"] == "vm1")
    assert vm["readiness"] == "UNKNOWN"
    assert report["run"]["complete"] is False


@pytest.mark.parametrize(
    ("fixture", "kind", "path"),
    [
        ("RR-BKP-004/fail-data-uploads-name-other-pvcs.yaml", "Backup", ("spec",)),
        ("RR-BKP-004/pass.yaml", "Backup", ("spec",)),
        ("RR-BKP-004/pass.yaml", "Schedule", ("spec", "template")),
    ],
)
@pytest.mark.parametrize(
    "flag", ["snapshotMoveData", "defaultVolumesToFsBackup", "snapshotVolumes"]
)
def test_a_backup_switch_that_is_no_boolean_is_named_and_never_improves_a_verdict(
    tmp_path: Path, fixture: str, kind: str, path: tuple[str, ...], flag: str
) -> None:
    """bench.mutations seed 31: snapshotMoveData "yes" on a data-mover Backup whose DataUploads
    name other PVCs made it read as a snapshot backup whose counters proved the disk
    (NOT_READY -> READY). A switch Velero's API server would refuse makes the object unread."""
    source = Path(__file__).parent / "fixtures" / "checks" / fixture
    docs = list(yaml.safe_load_all(source.read_text()))
    base = _audit(tmp_path / "base", {"c.yaml": source.read_text()})
    targets = [d for d in docs if d and d["kind"] == kind]
    if not targets:
        pytest.skip(f"{fixture} has no {kind}")
    for doc in targets:
        node = doc
        for key in path:
            node = node.setdefault(key, {})
        node[flag] = "yes"
    report = _audit(tmp_path / "bad", {"c.yaml": yaml.safe_dump_all(docs)})
    named = [p for p in report["collection_problems"] if p["field"] == ".".join((*path, flag))]
    assert named and named[0]["kind"] == kind and "not true or false" in named[0]["reason"]
    rank = {"READY": 0, "AT_RISK": 1, "UNKNOWN": 2, "NOT_READY": 2}
    before = {(v["namespace"], v["name"]): v["readiness"] for v in base["vms"]}
    for vm in report["vms"]:
        assert rank[vm["readiness"]] >= rank[before[(vm["namespace"], vm["name"])]], vm["name"]
        assert vm["readiness"] != "READY"


@pytest.mark.parametrize("phase", ["available", "Ready", 7])
def test_a_storage_location_phase_outside_velero_s_enum_is_named(
    tmp_path: Path, phase: object
) -> None:
    """bench.mutations seed 5: ``status.phase: available`` (Velero writes ``Available`` or
    ``Unavailable``, backupstoragelocation_types.go) changed verdicts without naming the field.
    It is now a collection problem, the run is incomplete, and no VM's verdict improves."""
    source = Path(__file__).parent / "fixtures" / "checks" / "RR-PLT-001" / "pass.yaml"
    docs = [d for d in yaml.safe_load_all(source.read_text()) if d]
    base = _audit(tmp_path / "base", {"c.yaml": source.read_text()})
    locations = [d for d in docs if d["kind"] == "BackupStorageLocation"]
    assert locations
    for doc in locations:
        doc.setdefault("status", {})["phase"] = phase
    report = _audit(tmp_path / "bad", {"c.yaml": yaml.safe_dump_all(docs)})
    named = [
        p
        for p in report["collection_problems"]
        if p["kind"] == "BackupStorageLocation" and p["field"] == "status.phase"
    ]
    assert named, report["collection_problems"]
    assert "Available, Unavailable" in named[0]["reason"] or "not a string" in named[0]["reason"]
    assert report["run"]["complete"] is False
    rank = {"READY": 0, "AT_RISK": 1, "UNKNOWN": 2, "NOT_READY": 2}
    before = {(v["namespace"], v["name"]): v["readiness"] for v in base["vms"]}
    for vm in report["vms"]:
        assert rank[vm["readiness"]] >= rank[before[(vm["namespace"], vm["name"])]], vm["name"]


@pytest.mark.parametrize(
    ("fixture", "kind", "path", "value"),
    [
        ("RR-BKP-004/fail-snapshot-contents-failed.yaml", "VolumeSnapshotContent", "driver", 42),
        ("RR-BKP-004/fail-snapshot-contents-failed.yaml", "VolumeSnapshotContent", "driver", None),
        ("RR-BKP-001/fail-completed-zero-volume-items.yaml", "Restore", "backupName", 42),
    ],
)
def test_a_snapshot_content_driver_or_restore_backup_name_of_the_wrong_type_is_named(
    tmp_path: Path, fixture: str, kind: str, path: str, value: object
) -> None:
    """bench.mutations seed 41: a VolumeSnapshotContent whose ``spec.driver`` is no string (or
    gone) counted for no driver, and a Restore whose ``spec.backupName`` is a number named no
    backup; verdicts changed with nothing named. Both are now collection problems; no VM's
    verdict improves."""
    source = Path(__file__).parent / "fixtures" / "checks" / fixture
    docs = [d for d in yaml.safe_load_all(source.read_text()) if d]
    base = _audit(tmp_path / "base", {"c.yaml": source.read_text()})
    targets = [d for d in docs if d["kind"] == kind]
    assert targets
    if value is None:
        del targets[0]["spec"][path]
    else:
        targets[0]["spec"][path] = value
    report = _audit(tmp_path / "bad", {"c.yaml": yaml.safe_dump_all(docs)})
    named = [
        p
        for p in report["collection_problems"]
        if p["kind"] == kind and p["field"] == f"spec.{path}"
    ]
    assert named, report["collection_problems"]
    assert named[0]["name"] == targets[0]["metadata"]["name"]
    assert report["run"]["complete"] is False
    rank = {"READY": 0, "AT_RISK": 1, "UNKNOWN": 2, "NOT_READY": 2}
    before = {(v["namespace"], v["name"]): v["readiness"] for v in base["vms"]}
    for vm in report["vms"]:
        assert rank[vm["readiness"]] >= rank[before[(vm["namespace"], vm["name"])]], vm["name"]


def test_a_data_volume_template_named_by_a_mapping_is_named_not_a_crash(tmp_path: Path) -> None:
    """red team (helper-20): ``dataVolumeTemplates[].metadata.name`` given as a mapping
    crashed the audit (a set of template names cannot hold a dict)."""
    vm = _vm_doc()
    vm["spec"]["dataVolumeTemplates"] = [{"metadata": {"name": {"x": 1}}, "spec": {}}]
    docs = [d for d in yaml.safe_load_all(GOOD.read_text()) if d and d["kind"] != "VirtualMachine"]
    report = _audit(tmp_path, {"c.yaml": yaml.safe_dump_all([*docs, vm])})
    assert any(p["field"] == "spec.dataVolumeTemplates" for p in report["collection_problems"])
    assert report["vms"][0]["readiness"] != "READY"


def test_keys_that_are_no_strings_never_crash_the_digest(tmp_path: Path) -> None:
    """A Service whose selector holds ``2: z`` beside string keys (YAML reads an int key;
    the API server never writes one) crashed the input digest: the stdlib cannot sort an
    int beside strings. The selector is named, RR-NET-003 cannot conclude, and the digest
    tells the int key from the string "2"."""
    fixture = Path(__file__).parent / "fixtures" / "checks" / "RR-NET-003"
    docs = [d for d in yaml.safe_load_all((fixture / "fail-route-outside-backup.yaml").read_text())]
    service = next(d for d in docs if d and d["kind"] == "Service")
    service["spec"]["selector"] = {**service["spec"]["selector"], 2: "z"}
    report = _audit(tmp_path / "int", {"c.yaml": yaml.safe_dump_all(docs)})
    vm = report["vms"][0]
    assert next(f for f in vm["findings"] if f["check_id"] == "RR-NET-003")["status"] == "ERROR"
    assert any(p["field"] == "spec.selector" for p in report["collection_problems"])
    service["spec"]["selector"] = {k: v for k, v in service["spec"]["selector"].items() if k != 2}
    service["spec"]["selector"]["2"] = "z"
    other = _audit(tmp_path / "str", {"c.yaml": yaml.safe_dump_all(docs)})
    assert report["run"]["input_digest"] != other["run"]["input_digest"]


@pytest.mark.parametrize("data", [{"delete-sc": 42}, {"delete-sc": None}, ["delete-sc"]])
def test_a_storage_class_map_whose_data_is_no_string_map_is_named(
    tmp_path: Path, data: Any
) -> None:
    """mutations seed 857: a change-storage-class ConfigMap value of 42 was redacted
    unnamed, the mapping silently lost and RR-STG-003's verdict changed with nothing named.
    The API server only writes strings there: the ConfigMap is named and not read, and its
    kind's list is no longer complete."""
    fixture = Path(__file__).parent / "fixtures" / "checks" / "RR-STG-003"
    docs = [
        d for d in yaml.safe_load_all((fixture / "pass-mapped-by-configmap.yaml").read_text()) if d
    ]
    good = _audit(tmp_path / "good", {"c.yaml": yaml.safe_dump_all(docs)})
    config = next(d for d in docs if d["kind"] == "ConfigMap")
    config["data"] = data
    report = _audit(tmp_path / "bad", {"c.yaml": yaml.safe_dump_all(docs)})
    named = [p for p in report["collection_problems"] if p["field"] == "data"]
    assert [(p["kind"], p["namespace"], p["name"]) for p in named] == [
        ("ConfigMap", "velero", "change-storage-class-config")
    ]

    def stg3(doc: dict[str, Any]) -> str:
        vm = doc["vms"][0]
        return str(next(f for f in vm["findings"] if f["check_id"] == "RR-STG-003")["status"])

    assert stg3(good) == "PASS"
    assert stg3(report) != "PASS"


_RANK = {"READY": 3, "AT_RISK": 2, "NOT_READY": 1, "UNKNOWN": 0}


@pytest.mark.parametrize(
    ("check", "fixture", "path", "value"),
    [
        # "running" is no VMI phase: whether a pod runs the VM is unknown, not "no" (which
        # spared it the kubevirt plugin's refusal of a running VM without a VMI)
        ("RR-BKP-001", "fail-plugin-refuses-running-vm-without-vmi", "status.phase", "running"),
        # a VMI without spec.domain: the uuid it runs with is unknown, so a pinned uuid
        # that differs from it can no longer be told from one that matches
        ("RR-FW-001", "fail-pinned-uuid-differs-from-running-vmi", "spec.domain", None),
    ],
)
def test_a_damaged_vmi_never_improves_a_verdict(
    tmp_path: Path, check: str, fixture: str, path: str, value: Any
) -> None:
    """mutations seed 971: each of these VMI edits made a VM's verdict better (NOT_READY ->
    AT_RISK, AT_RISK -> READY). The field is now named and the check cannot pass on it."""
    source = Path(__file__).parent / "fixtures" / "checks" / check / f"{fixture}.yaml"
    docs = [d for d in yaml.safe_load_all(source.read_text()) if d]
    before = _audit(tmp_path / "before", {"c.yaml": yaml.safe_dump_all(docs)})
    vmi = next(d for d in docs if d["kind"] == "VirtualMachineInstance")
    *parents, leaf = path.split(".")
    target = vmi
    for key in parents:
        target = target[key]
    if value is None:
        del target[leaf]
    else:
        target[leaf] = value
    after = _audit(tmp_path / "after", {"c.yaml": yaml.safe_dump_all(docs)})
    assert _RANK[after["vms"][0]["readiness"]] <= _RANK[before["vms"][0]["readiness"]]
    named = [
        p
        for p in after["collection_problems"]
        if p["kind"] == "VirtualMachineInstance" and p["field"] == path
    ]
    assert named, after["collection_problems"]
    finding = next(f for f in after["vms"][0]["findings"] if f["check_id"] == check)
    assert finding["status"] != "PASS"


@pytest.mark.parametrize(
    ("key", "value", "field"),
    [
        ("type", 42, "status.conditions[0].type"),
        ("status", True, "status.conditions[0].status"),
        (None, "AgentConnected", "status.conditions[0]"),
    ],
)
def test_a_vmi_condition_that_cannot_be_read_is_named(
    tmp_path: Path, key: str | None, value: Any, field: str
) -> None:
    """mutations seed 1499: a VMI condition whose type was 42 read as "no AgentConnected
    condition" and RR-BKP-011 failed with nothing named. The condition may be the one the
    check looks for: it is named, and the check that reads it gives ERROR."""
    source = Path(__file__).parent / "fixtures" / "checks" / "RR-BKP-011"
    docs = [d for d in yaml.safe_load_all((source / "pass-agent-connected.yaml").read_text()) if d]
    vmi = next(d for d in docs if d["kind"] == "VirtualMachineInstance")
    conditions = vmi["status"]["conditions"]
    agent = next(i for i, c in enumerate(conditions) if c["type"] == "AgentConnected")
    conditions.insert(0, conditions.pop(agent))
    if key is None:
        conditions[0] = value
    else:
        conditions[0][key] = value
    report = _audit(tmp_path, {"c.yaml": yaml.safe_dump_all(docs)})
    named = [
        p
        for p in report["collection_problems"]
        if p["kind"] == "VirtualMachineInstance" and p["field"] == field
    ]
    assert named, report["collection_problems"]
    finding = next(f for f in report["vms"][0]["findings"] if f["check_id"] == "RR-BKP-011")
    assert finding["status"] == "ERROR"
    assert field in finding["message"]


@pytest.mark.parametrize("matcher", [{"name": None}, {"name": ""}, {"kind": "x"}, "u1.medium"])
def test_an_instancetype_matcher_that_names_nothing_is_named(tmp_path: Path, matcher: Any) -> None:
    """mutations seed 1103: ``spec.instancetype.name: null`` read as "no instancetype" and
    changed the verdict with nothing named. A matcher with neither a name nor
    inferFromVolume (or no mapping at all) is now a named malformed field, and the check that
    reads the VM's instancetype cannot pass on it."""
    vm = _vm_doc()
    vm["spec"]["instancetype"] = matcher
    docs = [d for d in yaml.safe_load_all(GOOD.read_text()) if d and d["kind"] != "VirtualMachine"]
    report = _audit(tmp_path, {"c.yaml": yaml.safe_dump_all([*docs, vm])})
    field = "spec.instancetype" if isinstance(matcher, str) else "spec.instancetype.name"
    named = [p for p in report["collection_problems"] if p["field"] == field]
    assert [(p["kind"], p["name"]) for p in named] == [("VirtualMachine", vm["metadata"]["name"])]
    finding = next(f for f in report["vms"][0]["findings"] if f["check_id"] == "RR-DEF-001")
    assert finding["status"] == "ERROR"


@pytest.mark.parametrize(
    ("where", "value"),
    [("metadata.namespace", 42), ("status.observedKubeVirtVersion", None)],
)
def test_a_kubevirt_cr_that_cannot_tell_whether_restored_vms_start_is_no_pass(
    tmp_path: Path, where: str, value: Any
) -> None:
    """mutations seed 1361: a KubeVirt CR whose metadata.namespace was 42 went unread (named),
    and the VM check that holds back a persistent-state VM when KubeVirt refuses to start such
    VMs passed on the absence: NOT_READY -> READY. Unread, or of unknown version without the
    gate listed, the VM's finding is now ERROR and its verdict never improves."""
    source = Path(__file__).parent / "fixtures" / "checks" / "RR-PLT-006" / "fail-gate-off.yaml"
    docs = [d for d in yaml.safe_load_all(source.read_text()) if d]
    before = _audit(tmp_path / "before", {"c.yaml": yaml.safe_dump_all(docs)})
    kv = next(d for d in docs if d["kind"] == "KubeVirt")
    section, key = where.split(".")
    if value is None:
        del kv[section][key]
    else:
        kv[section][key] = value
    after = _audit(tmp_path / "after", {"c.yaml": yaml.safe_dump_all(docs)})
    assert _RANK[after["vms"][0]["readiness"]] <= _RANK[before["vms"][0]["readiness"]]
    assert before["vms"][0]["readiness"] != "READY"
    finding = next(f for f in after["vms"][0]["findings"] if f["check_id"] == "RR-FW-002")
    assert finding["status"] == "ERROR"


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("spec.configuration.developerConfiguration.featureGates", [42]),
        ("spec.configuration.developerConfiguration.featureGates", "VMPersistentState"),
        ("spec.configuration.developerConfiguration", ["VMPersistentState"]),
        ("spec.configuration", "junk"),
        ("spec.configuration.vmStateStorageClass", 7),
    ],
)
def test_a_kubevirt_configuration_that_cannot_be_read_is_named_and_no_pass(
    tmp_path: Path, path: str, value: Any
) -> None:
    """mutations seed 2003: a KubeVirt CR whose first feature gate was 42, or whose
    spec.configuration was "junk", read as "no gates" and changed verdicts with nothing
    named. The field is named, the CR counts as unread, and RR-PLT-006 and the VM's RR-FW-002
    are ERROR."""
    source = Path(__file__).parent / "fixtures" / "checks" / "RR-PLT-006" / "pass.yaml"
    docs = [d for d in yaml.safe_load_all(source.read_text()) if d]
    kv = next(d for d in docs if d["kind"] == "KubeVirt")
    *parents, leaf = path.split(".")
    target = kv
    for key in parents:
        target = target[key]
    target[leaf] = value
    report = _audit(tmp_path, {"c.yaml": yaml.safe_dump_all(docs)})
    named = [p for p in report["collection_problems"] if p["kind"] == "KubeVirt"]
    assert [p["field"] for p in named] == [path], report["collection_problems"]
    platform = next(f for f in report["platform_findings"] if f["check_id"] == "RR-PLT-006")
    assert platform["status"] == "ERROR"
    finding = next(f for f in report["vms"][0]["findings"] if f["check_id"] == "RR-FW-002")
    assert finding["status"] == "ERROR"
    assert report["vms"][0]["readiness"] != "READY"


@pytest.mark.parametrize(
    "labels", ["junk", ["velero.io/change-storage-class"], {"velero.io/change-storage-class": 1}]
)
def test_a_storage_class_map_whose_labels_are_unreadable_is_named(
    tmp_path: Path, labels: Any
) -> None:
    """mutations seed 3001: a change-storage-class ConfigMap whose ``metadata.labels`` was a
    string no longer matched the label selector, so it was dropped as "not Velero's" with
    nothing named, and RR-STG-003 judged the VM as if no class mapping existed. Labels that
    are no mapping of strings cannot tell whether the ConfigMap is Velero's: it is read,
    named, and its kind's list is no longer complete."""
    fixture = Path(__file__).parent / "fixtures" / "checks" / "RR-STG-003"
    docs = [
        d for d in yaml.safe_load_all((fixture / "pass-mapped-by-configmap.yaml").read_text()) if d
    ]
    config = next(d for d in docs if d["kind"] == "ConfigMap")
    config["metadata"]["labels"] = labels
    report = _audit(tmp_path / "bad", {"c.yaml": yaml.safe_dump_all(docs)})
    named = [p for p in report["collection_problems"] if p["field"] == "metadata.labels"]
    assert [(p["kind"], p["namespace"], p["name"]) for p in named] == [
        ("ConfigMap", "velero", "change-storage-class-config")
    ]
    assert report["cluster"]["kind_states"]["ConfigMap"] != "complete"
    vm = report["vms"][0]
    assert next(f for f in vm["findings"] if f["check_id"] == "RR-STG-003")["status"] != "PASS"


@pytest.mark.parametrize(
    ("field", "value"), [("revisionName", 42), ("kind", 7), ("inferFromVolume", ["root"])]
)
def test_a_preference_matcher_string_of_another_type_is_named(
    tmp_path: Path, field: str, value: Any
) -> None:
    """mutations seed 3617: ``spec.preference.revisionName: 42`` was read as "not pinned to a
    revision" and changed the verdict with nothing named (a ``kind`` that is no string was
    read as the default kind). Each of the matcher's string fields of another type is now a
    named malformed field, and no check that reads the pinned preference passes on it."""
    source = (
        Path(__file__).parent
        / "fixtures"
        / "checks"
        / "RR-FW-002"
        / "fail-preference-pinned-to-older-revision.yaml"
    )
    docs = [d for d in yaml.safe_load_all(source.read_text()) if d]
    vm = next(d for d in docs if d["kind"] == "VirtualMachine")
    vm["spec"]["preference"][field] = value
    report = _audit(tmp_path, {"c.yaml": yaml.safe_dump_all(docs)})
    named = [p for p in report["collection_problems"] if p["field"] == f"spec.preference.{field}"]
    assert [(p["kind"], p["name"]) for p in named] == [("VirtualMachine", vm["metadata"]["name"])]
    statuses = {f["check_id"]: f["status"] for f in report["vms"][0]["findings"]}
    assert statuses["RR-FW-002"] in ("FAIL", "ERROR")  # the FAIL of the fixture, or unknown
    assert statuses["RR-DEF-001"] != "PASS"
