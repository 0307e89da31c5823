"""Red-team round rt10: single-field mutations of the shared cluster export (``python -m
bench.mutations --export DIR``), each shrunk to a small export built here.

The rule: malformed input never improves a verdict. A broken field is a collection problem
naming file, kind, object and field; the run is incomplete; the checks that read it give
ERROR (or a verdict no better than before). These tests need no ``/work/shared``; the one
that runs the bench over the shared export skips without it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.test_evidence_gaps import _complete, _docs, _finding, _of

Docs = list[dict[str, Any]]
SHARED_EXPORT = Path("/work/shared/corpus/cluster-export")


def _problems(report: dict[str, Any], kind: str, field: str) -> list[dict[str, Any]]:
    return [p for p in report["collection_problems"] if p["kind"] == kind and p["field"] == field]


def _vm1(report: dict[str, Any]) -> dict[str, Any]:
    vm: dict[str, Any] = next(v for v in report["vms"] if v["name"] == "vm1")
    return vm


def test_a_snapshot_handle_that_is_no_string_is_named(tmp_path: Path) -> None:
    """``VolumeSnapshotContentStatus.snapshotHandle`` is a string (external-snapshotter
    client/apis/volumesnapshot/v1/types.go). A handle of 42 read as "no handle": the content
    was no copy and RR-BKP-004 changed with nothing named."""
    fixture = "RR-BKP-004/pass.yaml"
    docs = _docs(fixture)
    content = _of(docs, "VolumeSnapshotContent")[0]
    content["status"]["snapshotHandle"] = 42
    report = _complete(tmp_path, fixture, docs)
    named = _problems(report, "VolumeSnapshotContent", "status.snapshotHandle")
    assert named, report["collection_problems"]
    assert named[0]["name"] == content["metadata"]["name"]
    assert "not a string" in named[0]["reason"]
    assert report["run"]["complete"] is False
    assert _finding(report, "RR-BKP-004")["status"] != "PASS"


def _progress(docs: Docs, value: Any) -> None:
    for backup in _of(docs, "Backup"):
        backup["status"]["progress"] = value


@pytest.mark.parametrize(
    "progress",
    [{"itemsBackedUp": "0"}, {"itemsBackedUp": 0.0}, {"itemsBackedUp": -1}, "0", [0]],
    ids=["string", "float", "negative", "progress-string", "progress-list"],
)
def test_a_backed_up_item_count_that_is_no_count_proves_no_backup(
    tmp_path: Path, progress: Any
) -> None:
    """``BackupProgress.itemsBackedUp`` is a Go int (velero pkg/apis/velero/v1/
    backup_types.go); 0 says the Backup holds no item. Written ``"0"`` (or 0.0, -1, or a
    progress that is no mapping) it read as "no count", and the Backups that hold nothing
    made the VM READY."""
    fixture = "RR-BKP-001/pass.yaml"
    docs = _docs(fixture)
    _progress(docs, {"itemsBackedUp": 0})
    empty = _complete(tmp_path / "zero", fixture, docs)
    assert _finding(empty, "RR-BKP-001")["status"] == "FAIL"
    assert _vm1(empty)["readiness"] == "NOT_READY"
    _progress(docs, progress)
    report = _complete(tmp_path / "mutated", fixture, docs)
    field = "status.progress" if not isinstance(progress, dict) else "status.progress.itemsBackedUp"
    assert _problems(report, "Backup", field), report["collection_problems"]
    assert report["run"]["complete"] is False
    assert _finding(report, "RR-BKP-001")["status"] in ("FAIL", "ERROR")
    assert _vm1(report)["readiness"] in ("NOT_READY", "UNKNOWN")


def _stopped_after_the_backup(docs: Docs, ready: dict[str, Any]) -> Docs:
    """vm1 stopped (no VMI) with ``ready`` as its only condition."""
    docs = [d for d in docs if d["kind"] != "VirtualMachineInstance"]
    vm = _of(docs, "VirtualMachine")[0]
    vm["spec"].pop("running", None)
    vm["spec"]["runStrategy"] = "Halted"
    vm["status"] = {"printableStatus": "Stopped", "conditions": [ready]}
    return docs


@pytest.mark.parametrize(
    ("status", "changed", "field"),
    [
        ("False", "30/11/2026 05:00:00", "lastTransitionTime"),
        ("False", 1764478800, "lastTransitionTime"),
        ("false", "2026-11-30T05:00:00Z", "status"),
    ],
    ids=["day-month-year", "epoch", "status-lower-case"],
)
def test_a_ready_condition_that_cannot_be_read_leaves_the_plugin_s_refusals_applying(
    tmp_path: Path, status: str, changed: Any, field: str
) -> None:
    """A stopped VM's ``Ready`` condition says since when it is stopped; stopped after the
    Backup began, it ran then and the kubevirt plugin refused it (its Backup leaves out
    virtualmachineinstances). A ``lastTransitionTime`` that is no RFC 3339 time (a
    metav1.Time) or a status that is no ConditionStatus read as "stopped before every
    Backup": NOT_READY -> AT_RISK."""
    fixture = "RR-BKP-001/fail-plugin-refuses-running-vm-without-vmi.yaml"
    ready = {"type": "Ready", "status": "False", "lastTransitionTime": "2026-11-30T05:00:00Z"}
    baseline = _complete(tmp_path / "ok", fixture, _stopped_after_the_backup(_docs(fixture), ready))
    assert _finding(baseline, "RR-BKP-001")["status"] == "FAIL"
    ready = {"type": "Ready", "status": status, "lastTransitionTime": changed}
    report = _complete(tmp_path / "bad", fixture, _stopped_after_the_backup(_docs(fixture), ready))
    assert _problems(report, "VirtualMachine", f"status.conditions[0].{field}")
    assert report["run"]["complete"] is False
    assert _finding(report, "RR-BKP-001")["status"] in ("FAIL", "ERROR")
    assert _vm1(report)["readiness"] in ("NOT_READY", "UNKNOWN")


def _first(docs: Docs, kind: str) -> dict[str, Any]:
    return _of(docs, kind)[0]


def _set_path(obj: dict[str, Any], path: str, value: Any) -> None:
    *parents, last = path.split(".")
    for key in parents:
        obj = obj.setdefault(key, {})
    obj[last] = value


#: (fixture, kind, field, value, check that may no longer PASS): metav1.Time fields the checks
#: read, and a ConditionStatus, written as the API server never writes them
NAMED_FIELDS = {
    "nad-creation": (
        "RR-NET-002/pass.yaml",
        "NetworkAttachmentDefinition",
        "metadata.creationTimestamp",
        "12/03/2025 09:20:41",
        "RR-NET-002",
    ),
    "volume-snapshot-cut": (
        "RR-STG-001/fail-delete-policy-volume-snapshots-die-with-namespace.yaml",
        "VolumeSnapshot",
        "status.creationTime",
        1764410400,
        None,
    ),
    "schedule-last-backup": (
        "RR-PLT-002/pass.yaml",
        "Schedule",
        "status.lastBackup",
        "2026-11-30 01:00",
        None,
    ),
    "backup-completion-without-zone": (
        "RR-BKP-001/pass.yaml",
        "Backup",
        "status.completionTimestamp",
        "2026-11-30T01:15:00",
        None,
    ),
    "vmi-devices-null": (
        "RR-BKP-011/pass-agent-connected.yaml",
        "VirtualMachineInstance",
        "spec.domain.devices",
        None,
        None,
    ),
    "vmi-creation": (
        "RR-BKP-011/pass-agent-connected.yaml",
        "VirtualMachineInstance",
        "metadata.creationTimestamp",
        "30/11/2026 01:00:00",
        None,
    ),
    "vmi-condition-status": (
        "RR-BKP-011/pass-agent-connected.yaml",
        "VirtualMachineInstance",
        "status.conditions.0.status",
        "true",
        "RR-BKP-011",
    ),
}


@pytest.mark.parametrize("case", sorted(NAMED_FIELDS))
def test_a_time_or_condition_status_the_api_server_never_writes_is_named(
    tmp_path: Path, case: str
) -> None:
    """Found by ``bench.mutations --export`` over the shared cluster export (families
    time_format and invalid_enum): these fields changed findings (or could) with nothing
    named and the run complete. A metav1.Time is RFC 3339 (k8s.io/apimachinery
    pkg/apis/meta/v1/time.go UnmarshalJSON); a ConditionStatus is True, False or Unknown."""
    fixture, kind, path, value, check = NAMED_FIELDS[case]
    docs = _docs(fixture)
    obj = _first(docs, kind)
    if path.startswith("status.conditions.0."):
        obj["status"]["conditions"][0][path.rsplit(".", 1)[1]] = value
        field = "status.conditions[0].status"
    else:
        _set_path(obj, path, value)
        field = path
    report = _complete(tmp_path, fixture, docs)
    named = _problems(report, kind, field)
    assert named, report["collection_problems"]
    assert named[0]["name"] == obj["metadata"]["name"]
    assert report["run"]["complete"] is False
    if check is not None:
        assert _finding(report, check)["status"] != "PASS"


# -- the bench over another export (bench.mutations --export) ---------------------------------


def test_the_bench_mutates_a_copy_of_another_export(tmp_path: Path) -> None:
    """``run(export=DIR)`` mutates a temporary copy of DIR only (here our example cluster,
    so no /work/shared is needed) and leaves DIR's files as they were."""
    import shutil

    from bench.mutations import FAMILIES, run

    root = Path(__file__).resolve().parent.parent
    export = tmp_path / "export"
    shutil.copytree(root / "examples" / "small-cluster", export)
    before = {p.name: p.read_bytes() for p in export.iterdir()}
    stats = run(60, seed=7, export=export, families=("number_string", "time_format"))
    assert sum(stats[f]["tried"] for f in FAMILIES) == 60
    assert {f for f in FAMILIES if stats[f]["tried"]} == {"number_string", "time_format"}
    assert list(stats["!"]) == []
    assert {p.name: p.read_bytes() for p in export.iterdir()} == before


@pytest.mark.skipif(
    not SHARED_EXPORT.is_dir(), reason="needs the shared cluster export in /work/shared"
)
def test_mutations_of_the_shared_cluster_export_never_improve_a_verdict() -> None:
    from bench.mutations import FAMILIES, run

    stats = run(120, seed=10, export=SHARED_EXPORT)
    assert sum(stats[f]["tried"] for f in FAMILIES) == 120
    assert list(stats["!"]) == []  # improved verdicts, tracebacks or checks that raised


@pytest.mark.parametrize("networks", [None, []], ids=["null", "empty"])
def test_interfaces_without_their_networks_leave_the_nad_check_unknown(
    tmp_path: Path, networks: Any
) -> None:
    """The mirror of null interfaces (shared fuzz case 05): ``networks`` null (or empty)
    while the interfaces name a multus network. KubeVirt's webhook refuses an interface
    without its network; read as "no networks", RR-NET-001's FAIL (the NAD is missing)
    became NOT_APPLICABLE."""
    fixture = "RR-NET-001/fail-nad-missing.yaml"
    docs = _docs(fixture)
    vm = _first(docs, "VirtualMachine")
    vm["spec"]["template"]["spec"]["networks"] = networks
    report = _complete(tmp_path, fixture, docs)
    assert _problems(report, "VirtualMachine", "spec.template.spec.networks")
    assert report["run"]["complete"] is False
    assert _finding(report, "RR-NET-001")["status"] in ("FAIL", "ERROR")


RANK = {"READY": 0, "AT_RISK": 1, "UNKNOWN": 2, "NOT_READY": 2}


@pytest.mark.parametrize("kind", ["Backup", "BackupStorageLocation"])
def test_a_velero_status_without_its_phase_is_named(tmp_path: Path, kind: str) -> None:
    """Velero writes a phase with the first status it writes (velero pkg/apis/velero/v1:
    BackupStatus.Phase, BackupStorageLocationStatus.Phase). A Backup whose FailedValidation
    phase was lost while its validationErrors stayed read as a Backup never run: RR-BKP-003
    FAIL -> NOT_APPLICABLE with nothing named (mutations of the shared export)."""
    fixture = "RR-BKP-001/pass.yaml"
    docs = _docs(fixture)
    obj = max(_of(docs, kind), key=lambda o: o["metadata"]["name"])
    if kind == "Backup":
        obj["status"] = {
            "phase": "FailedValidation",
            "validationErrors": ["the default BackupStorageLocation was not found"],
            "expiration": obj["status"]["expiration"],
        }
    baseline = _complete(tmp_path / "with", fixture, docs)
    del obj["status"]["phase"]
    report = _complete(tmp_path / "without", fixture, docs)
    named = _problems(report, kind, "status.phase")
    assert named and named[0]["name"] == obj["metadata"]["name"], report["collection_problems"]
    assert report["run"]["complete"] is False
    before, after = _vm1(baseline), _vm1(report)
    assert RANK[after["readiness"]] >= RANK[before["readiness"]]
    was = {f["check_id"]: f["status"] for f in before["findings"]}
    for f in after["findings"]:
        if was[f["check_id"]] == "FAIL":
            assert f["status"] in ("FAIL", "ERROR"), f


def test_a_hotpluggable_switch_that_is_no_boolean_is_named(tmp_path: Path) -> None:
    """``hotpluggable`` is a Go bool (kubevirt.io/api core/v1 PersistentVolumeClaimVolumeSource,
    DataVolumeSource); ``"false"`` read as true made the disk a hotplugged one, unnamed."""
    fixture = "RR-BKP-004/pass.yaml"
    docs = _docs(fixture)
    vm = _first(docs, "VirtualMachine")
    volume = next(v for v in vm["spec"]["template"]["spec"]["volumes"] if "dataVolume" in v)
    volume["dataVolume"]["hotpluggable"] = "false"
    report = _complete(tmp_path, fixture, docs)
    field = f"spec.template.spec.volumes[{volume['name']}].dataVolume.hotpluggable"
    assert _problems(report, "VirtualMachine", field), report["collection_problems"]
    assert report["run"]["complete"] is False


def test_a_service_without_its_spec_is_named_and_unread(tmp_path: Path) -> None:
    """The API server writes every Service's spec (ports are required). A Service of the VM
    whose spec was null selected nothing, so the Route to it left RR-NET-003 with nothing
    outside the backups: AT_RISK -> READY (bench.mutations family null_list)."""
    fixture = "RR-NET-003/fail-route-outside-backup.yaml"
    docs = _docs(fixture)
    baseline = _complete(tmp_path / "ok", fixture, docs)
    assert _finding(baseline, "RR-NET-003")["status"] == "FAIL"
    service = _first(docs, "Service")
    service["spec"] = None
    report = _complete(tmp_path / "null", fixture, docs)
    named = _problems(report, "Service", "spec")
    assert named and named[0]["name"] == service["metadata"]["name"]
    assert report["run"]["complete"] is False
    assert _finding(report, "RR-NET-003")["status"] in ("FAIL", "ERROR")
    assert RANK[_vm1(report)["readiness"]] >= RANK[_vm1(baseline)["readiness"]]


@pytest.mark.parametrize(
    ("field", "value"),
    [("spec.source.volumeHandle", 42), ("spec.source", "h-vm1-root")],
    ids=["volume-handle", "source"],
)
def test_a_snapshot_content_source_of_another_type_is_named(
    tmp_path: Path, field: str, value: Any
) -> None:
    """``VolumeSnapshotContentSource.volumeHandle`` is a string: the volume the snapshot was
    cut from, which tells a copy of a recreated PVC's predecessor from a copy of the PVC.
    Of another type it was read as "names none" (nothing told), unnamed."""
    fixture = "RR-BKP-004/pass.yaml"
    docs = _docs(fixture)
    content = _first(docs, "VolumeSnapshotContent")
    _set_path(content, field, value)
    report = _complete(tmp_path, fixture, docs)
    named = _problems(report, "VolumeSnapshotContent", field)
    assert named and named[0]["name"] == content["metadata"]["name"], report["collection_problems"]
    assert report["run"]["complete"] is False


def test_a_volume_snapshot_cut_time_that_cannot_be_read_shows_no_copy(tmp_path: Path) -> None:
    """A VolumeSnapshot cut before its PVC was made is a copy of an earlier PVC of that name.
    Its ``status.creationTime`` written 01/12/2025 fell back to ``metadata.creationTimestamp``
    (after the PVC's birth) and counted as a copy: RR-STG-001 FAIL -> PASS."""
    fixture = "RR-STG-001/pass-retained-volume-snapshots.yaml"
    docs = _docs(fixture)
    for snap in _of(docs, "VolumeSnapshot"):
        snap["metadata"]["creationTimestamp"] = "2026-11-29T10:00:00Z"
        snap["status"]["creationTime"] = "2025-12-01T10:00:00Z"
    baseline = _complete(tmp_path / "old", fixture, docs)
    assert _finding(baseline, "RR-STG-001")["status"] == "FAIL"
    for snap in _of(docs, "VolumeSnapshot"):
        snap["status"]["creationTime"] = "01/12/2025 10:00:00"
    report = _complete(tmp_path / "unreadable", fixture, docs)
    assert _problems(report, "VolumeSnapshot", "status.creationTime")
    assert _finding(report, "RR-STG-001")["status"] in ("FAIL", "ERROR")
    assert RANK[_vm1(report)["readiness"]] >= RANK[_vm1(baseline)["readiness"]]


@pytest.mark.parametrize(
    "field",
    ["firmware.preferredEfi.persistent", "firmware.preferredEfi.secureBoot"],
)
def test_a_preference_switch_that_is_no_boolean_is_named(tmp_path: Path, field: str) -> None:
    """KubeVirt's EFI and TPMDevice switches are ``*bool``: a cluster preference's
    ``persistent: "yes"`` read as false (a volatile EFI or TPM), with nothing named."""
    fixture = "RR-BKP-004/fail-state-pvc-not-pulled-when-persistence-comes-from-preference.yaml"
    docs = _docs(fixture)
    preference = _first(docs, "VirtualMachineClusterPreference")
    _set_path(preference["spec"], field, "yes")
    report = _complete(tmp_path, fixture, docs)
    named = _problems(report, "VirtualMachineClusterPreference", f"spec.{field}")
    assert named, report["collection_problems"]
    assert report["run"]["complete"] is False
