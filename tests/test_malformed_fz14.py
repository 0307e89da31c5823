"""Red-team round fz14: mutations of the shared cluster export (``python -m bench.mutations
--export DIR``, the old families and the new ones: enum_case, list_item, mapping_list,
empty_string, duplicate, quantity), each shrunk to a small export built here.

The rule: malformed input never improves a verdict. A broken field is a collection problem
naming kind, object and field; the run is incomplete; the checks that read it give ERROR
(or a verdict no better than before), never PASS or NOT_APPLICABLE in place of a FAIL.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.test_evidence_gaps import _complete, _docs, _finding, _of

Docs = list[dict[str, Any]]
RANK = {"READY": 0, "AT_RISK": 1, "UNKNOWN": 2, "NOT_READY": 2}
_DELETE = object()


def _problems(report: dict[str, Any], kind: str, field: str) -> list[dict[str, Any]]:
    return [p for p in report["collection_problems"] if p["kind"] == kind and p["field"] == field]


def _vm1(report: dict[str, Any]) -> dict[str, Any]:
    vm: dict[str, Any] = next(v for v in report["vms"] if v["name"] == "vm1")
    return vm


def _set(obj: dict[str, Any], key: str, value: Any) -> None:
    if value is _DELETE:
        del obj[key]
    else:
        obj[key] = value


def _no_better(before: dict[str, Any], after: dict[str, Any]) -> None:
    """``after``'s vm1 is ranked no better than ``before``'s, and no check of it that
    failed, or found nothing to judge, now passes."""
    b, a = _vm1(before), _vm1(after)
    assert RANK[a["readiness"]] >= RANK[b["readiness"]], (b["readiness"], a["readiness"])
    was = {f["check_id"]: f["status"] for f in b["findings"]}
    for f in a["findings"]:
        if was[f["check_id"]] in ("FAIL", "ERROR", "NOT_APPLICABLE"):
            assert f["status"] != "PASS", f


# -- a Backup whose spec is null, or lost after Velero ran it ---------------------------------


@pytest.mark.parametrize("spec", [None, _DELETE], ids=["null", "missing-after-a-run"])
def test_a_backup_without_its_spec_covers_no_namespace_it_cannot_show(
    tmp_path: Path, spec: Any
) -> None:
    """Velero writes its defaults (storageLocation, ttl) into the spec of every Backup it runs,
    and the API server prunes a null field: a Completed Backup whose spec is null or gone was
    read as an empty spec, a Backup of every namespace. Mutations of the shared export
    (null_list): RR-BKP-003 FAIL -> PASS and RR-NET-003 NOT_APPLICABLE -> PASS, unnamed."""
    fixture = "RR-BKP-001/pass.yaml"
    docs = _docs(fixture)
    backups = _of(docs, "Backup")
    for backup in backups:
        backup["spec"]["includedNamespaces"] = ["other"]
    baseline = _complete(tmp_path / "elsewhere", fixture, docs)
    assert _finding(baseline, "RR-BKP-003")["status"] == "NOT_APPLICABLE"
    assert _vm1(baseline)["readiness"] == "NOT_READY"
    newest = max(backups, key=lambda b: b["metadata"]["name"])
    _set(newest, "spec", spec)
    report = _complete(tmp_path / "mutated", fixture, docs)
    named = _problems(report, "Backup", "spec")
    assert named and named[0]["name"] == newest["metadata"]["name"], report["collection_problems"]
    assert report["run"]["complete"] is False
    assert _finding(report, "RR-BKP-003")["status"] == "ERROR"
    _no_better(baseline, report)


def test_a_backup_velero_never_ran_may_have_no_spec(tmp_path: Path) -> None:
    """A Backup created without a spec (``spec`` is optional in Velero's CRD) and not yet
    taken up (no status) is valid: nothing is named."""
    fixture = "RR-BKP-001/pass.yaml"
    docs = _docs(fixture)
    newest = max(_of(docs, "Backup"), key=lambda b: b["metadata"]["name"])
    del newest["spec"]
    del newest["status"]
    report = _complete(tmp_path, fixture, docs)
    assert not [p for p in report["collection_problems"] if p["kind"] == "Backup"]


# -- an instancetype or preference without its spec -------------------------------------------

PREFERENCE_FIXTURE = (
    "RR-BKP-004/fail-state-pvc-not-pulled-when-persistence-comes-from-preference.yaml"
)


@pytest.mark.parametrize("spec", [None, _DELETE, ["junk"]], ids=["null", "missing", "list"])
def test_a_preference_without_its_spec_is_named_and_unread(tmp_path: Path, spec: Any) -> None:
    """instancetype.kubevirt.io requires every (cluster) instancetype and preference to have
    a spec. A Windows preference whose spec was null read as one without settings: its EFI
    and TPM vanished and RR-FW-002 went PASS -> NOT_APPLICABLE, unnamed (null_list over the
    shared export)."""
    docs = _docs(PREFERENCE_FIXTURE)
    baseline = _complete(tmp_path / "ok", PREFERENCE_FIXTURE, docs)
    assert _finding(baseline, "RR-FW-002")["status"] not in ("NOT_APPLICABLE", "ERROR")
    preference = _of(docs, "VirtualMachineClusterPreference")[0]
    _set(preference, "spec", spec)
    report = _complete(tmp_path / "mutated", PREFERENCE_FIXTURE, docs)
    named = _problems(report, "VirtualMachineClusterPreference", "spec")
    assert named and named[0]["name"] == preference["metadata"]["name"]
    assert report["run"]["complete"] is False
    assert _finding(report, "RR-FW-002")["status"] == "ERROR"
    _no_better(baseline, report)


# -- a disk's bus or a NIC's model that is no string, or no value KubeVirt knows --------------

BUS_FIXTURE = "RR-DSK-003/fail-disk-bus-changed-while-running.yaml"


def _buses(obj: dict[str, Any], devices: dict[str, Any], value: Any) -> None:
    for disk in devices["disks"]:
        for target in ("disk", "cdrom", "lun"):
            if isinstance(disk.get(target), dict) and "bus" in disk[target]:
                disk[target]["bus"] = value


@pytest.mark.parametrize("kind", ["VirtualMachine", "VirtualMachineInstance"])
@pytest.mark.parametrize(
    "bus",
    [42, None, ["virtio"], "VIRTIO", "virtio "],
    ids=["int", "null", "list", "upper", "blank"],
)
def test_a_disk_bus_that_is_no_bus_is_named(tmp_path: Path, kind: str, bus: Any) -> None:
    """A disk target's ``bus`` is a string among virtio, sata, scsi and usb (kubevirt.io/api
    core/v1 DiskBus). Of another type (or null), either side read as "left to KubeVirt's
    default" and was not compared: a disk whose bus changed while the VM ran passed RR-DSK-003
    (AT_RISK -> READY, wrong_type). A case variant changed the check with nothing named
    (enum_case)."""
    docs = _docs(BUS_FIXTURE)
    baseline = _complete(tmp_path / "ok", BUS_FIXTURE, docs)
    assert _finding(baseline, "RR-DSK-003")["status"] == "FAIL"
    obj = _of(docs, kind)[0]
    spec = obj["spec"]["template"]["spec"] if kind == "VirtualMachine" else obj["spec"]
    _buses(obj, spec["domain"]["devices"], bus)
    report = _complete(tmp_path / "mutated", BUS_FIXTURE, docs)
    prefix = "spec.template.spec." if kind == "VirtualMachine" else "spec."
    named = _problems(report, kind, f"{prefix}domain.devices.disks[root].disk.bus")
    assert named and named[0]["name"] == "vm1", report["collection_problems"]
    assert report["run"]["complete"] is False
    assert _finding(report, "RR-DSK-003")["status"] == "ERROR"
    _no_better(baseline, report)


@pytest.mark.parametrize("model", [7, None, "VirtIO"], ids=["int", "null", "case"])
def test_a_nic_model_that_is_no_model_is_named(tmp_path: Path, model: Any) -> None:
    """A NIC's ``model`` is one of KubeVirt's interface models; of another type it read as
    the default and RR-DSK-003 compared nothing for the NIC."""
    docs = _docs(BUS_FIXTURE)
    vmi = _of(docs, "VirtualMachineInstance")[0]
    iface = vmi["spec"]["domain"]["devices"].setdefault("interfaces", [{"name": "default"}])[0]
    iface["model"] = model
    report = _complete(tmp_path, BUS_FIXTURE, docs)
    field = f"spec.domain.devices.interfaces[{iface['name']}].model"
    assert _problems(report, "VirtualMachineInstance", field), report["collection_problems"]
    assert _finding(report, "RR-DSK-003")["status"] == "ERROR"


@pytest.mark.parametrize("bus", ["virtio", "sata", "scsi", "usb"])
def test_every_bus_kubevirt_knows_is_read_without_a_problem(tmp_path: Path, bus: str) -> None:
    docs = _docs(BUS_FIXTURE)
    for kind in ("VirtualMachine", "VirtualMachineInstance"):
        obj = _of(docs, kind)[0]
        spec = obj["spec"]["template"]["spec"] if kind == "VirtualMachine" else obj["spec"]
        _buses(obj, spec["domain"]["devices"], bus)
    report = _complete(tmp_path, BUS_FIXTURE, docs)
    assert not [p for p in report["collection_problems"] if ".bus" in str(p["field"])]


# -- an access credential without its Secret --------------------------------------------------


@pytest.mark.parametrize(
    "source", [{"secret": None}, {}, None], ids=["secret-null", "no-secret", "source-null"]
)
def test_an_access_credential_without_its_secret_is_named(tmp_path: Path, source: Any) -> None:
    """An SSH key or password credential names its Secret in ``source.secret.secretName``,
    its only source (KubeVirt's admitter refuses a credential without exactly one). A null
    ``source.secret`` read as "references no Secret": RR-BKP-012 FAIL (the Backups leave
    Secrets out) -> NOT_APPLICABLE, unnamed (null_list over the shared export)."""
    fixture = "RR-BKP-012/fail-secrets-excluded.yaml"
    docs = _docs(fixture)
    vm = _of(docs, "VirtualMachine")[0]
    tspec = vm["spec"]["template"]["spec"]
    for volume in tspec["volumes"]:
        if "cloudInitNoCloud" in volume:
            volume["cloudInitNoCloud"] = {"userData": "#cloud-config\n"}
    credential = {
        "sshPublicKey": {
            "source": {"secret": {"secretName": "vm1-ssh"}},
            "propagationMethod": {"noCloud": {}},
        }
    }
    tspec["accessCredentials"] = [credential]
    baseline = _complete(tmp_path / "ok", fixture, docs)
    assert _finding(baseline, "RR-BKP-012")["status"] == "FAIL"
    credential["sshPublicKey"]["source"] = source
    report = _complete(tmp_path / "mutated", fixture, docs)
    where = "spec.template.spec.accessCredentials[0].sshPublicKey.source"
    field = where if source is None else f"{where}.secret"
    assert _problems(report, "VirtualMachine", field), report["collection_problems"]
    assert report["run"]["complete"] is False
    assert _finding(report, "RR-BKP-012")["status"] == "ERROR"
    _no_better(baseline, report)


@pytest.mark.parametrize("field", ["status.snapshotHandle", "spec.source.volumeHandle"])
def test_a_snapshot_content_handle_written_empty_is_named(tmp_path: Path, field: str) -> None:
    """A VolumeSnapshotContent's ``snapshotHandle`` (``volumeHandle``) names the snapshot
    (the volume) it holds; ``""`` names none. Read as "no handle", the content was no copy
    and RR-BKP-004 changed with nothing named (bench.mutations empty_string over the shared
    export)."""
    fixture = "RR-BKP-004/pass.yaml"
    docs = _docs(fixture)
    baseline = _complete(tmp_path / "ok", fixture, docs)
    content = _of(docs, "VolumeSnapshotContent")[0]
    section, *rest = field.split(".")
    target = content[section]
    for key in rest[:-1]:
        target = target[key]
    target[rest[-1]] = ""
    report = _complete(tmp_path / "mutated", fixture, docs)
    named = _problems(report, "VolumeSnapshotContent", field)
    assert named and named[0]["name"] == content["metadata"]["name"], report["collection_problems"]
    assert report["run"]["complete"] is False
    if field == "status.snapshotHandle":  # the handle that says the snapshot exists
        assert _finding(report, "RR-BKP-004")["status"] != "PASS"
    _no_better(baseline, report)


# -- a Velero label selector that is no selector Velero could read ----------------------------


@pytest.mark.parametrize(
    ("selector", "field"),
    [
        ({"matchLabels": {"app": 42}}, "spec.labelSelector.matchLabels[app]"),
        ({"matchLabels": {"app": None}}, "spec.labelSelector.matchLabels[app]"),
        (
            {"matchExpressions": [{"key": "app", "operator": "in", "values": ["vm1"]}]},
            "spec.labelSelector.matchExpressions[0]",
        ),
        (
            {"matchExpressions": [{"key": "app", "operator": "In", "values": "vm1"}]},
            "spec.labelSelector.matchExpressions[0]",
        ),
    ],
    ids=["label-int", "label-null", "operator-case", "values-string"],
)
def test_a_restore_selector_velero_could_not_read_is_named(
    tmp_path: Path, selector: dict[str, Any], field: str
) -> None:
    """A Restore's ``labelSelector`` is a metav1.LabelSelector: string label values, one of
    four operators, ``values`` a list of strings. Malformed, it was checked only when a
    check matched it, where it matched nothing: the drill vanished, RR-RST-001 PASS -> FAIL
    and RR-RST-002 FAIL -> NOT_APPLICABLE, unnamed (wrong_type, label_value over the shared
    export). Now it is named when the Restore is read, and the Restore is unread."""
    fixture = "RR-RST-002/fail-drill-clones-mac-and-uuid.yaml"
    docs = _docs(fixture)
    for restore in _of(docs, "Restore"):
        restore["spec"]["labelSelector"] = {"matchLabels": {"app": "vm1"}}
    baseline = _complete(tmp_path / "ok", fixture, docs)
    assert _finding(baseline, "RR-RST-002")["status"] == "FAIL"
    for restore in _of(docs, "Restore"):
        restore["spec"]["labelSelector"] = selector
    report = _complete(tmp_path / "mutated", fixture, docs)
    # the field itself since round h45b (it was "spec")
    named = _problems(report, "Restore", field)
    assert named and "labelSelector" in named[0]["reason"], report["collection_problems"]
    assert report["run"]["complete"] is False
    assert _finding(report, "RR-RST-002")["status"] == "ERROR"
    _no_better(baseline, report)


# -- a condition type KubeVirt never writes, a credential of no type ---------------------------


@pytest.mark.parametrize(
    "kind", ["AgentConnected ", "agentconnected", "AGENTCONNECTED", " AgentConnected"]
)
def test_a_kubevirt_condition_type_written_another_way_is_named(tmp_path: Path, kind: str) -> None:
    """KubeVirt writes ``AgentConnected`` so; a blank or another case read as "no such
    condition" and RR-BKP-011 changed (PASS -> FAIL) with nothing named (enum_case and
    invalid_enum over the shared export)."""
    fixture = "RR-BKP-011/pass-agent-connected.yaml"
    docs = _docs(fixture)
    baseline = _complete(tmp_path / "ok", fixture, docs)
    vmi = _of(docs, "VirtualMachineInstance")[0]
    conditions = vmi["status"]["conditions"]
    i = next(n for n, c in enumerate(conditions) if c["type"] == "AgentConnected")
    conditions[i]["type"] = kind
    report = _complete(tmp_path / "mutated", fixture, docs)
    named = _problems(report, "VirtualMachineInstance", f"status.conditions[{i}].type")
    assert named and named[0]["name"] == "vm1", report["collection_problems"]
    assert report["run"]["complete"] is False
    assert _finding(report, "RR-BKP-011")["status"] == "ERROR"
    _no_better(baseline, report)


@pytest.mark.parametrize("kind", ["AgentConnected", "example.com/Custom-Ready", "Ready"])
def test_a_well_formed_condition_type_is_read_without_a_problem(tmp_path: Path, kind: str) -> None:
    fixture = "RR-BKP-011/pass-agent-connected.yaml"
    docs = _docs(fixture)
    vmi = _of(docs, "VirtualMachineInstance")[0]
    vmi["status"]["conditions"].append({"type": kind, "status": "True"})
    report = _complete(tmp_path, fixture, docs)
    assert not [p for p in report["collection_problems"] if "conditions" in str(p["field"])]


def test_an_access_credential_of_no_type_is_named(tmp_path: Path) -> None:
    """An access credential sets exactly one of sshPublicKey and userPassword (KubeVirt's
    admitter); one whose sshPublicKey is null read as no credential, and its Secret vanished
    from RR-BKP-012 (null_list over the shared export)."""
    fixture = "RR-BKP-012/fail-secrets-excluded.yaml"
    docs = _docs(fixture)
    tspec = _of(docs, "VirtualMachine")[0]["spec"]["template"]["spec"]
    for volume in tspec["volumes"]:
        if "cloudInitNoCloud" in volume:
            volume["cloudInitNoCloud"] = {"userData": "#cloud-config\n"}
    tspec["accessCredentials"] = [
        {"sshPublicKey": {"source": {"secret": {"secretName": "vm1-ssh"}}}}
    ]
    baseline = _complete(tmp_path / "ok", fixture, docs)
    assert _finding(baseline, "RR-BKP-012")["status"] == "FAIL"
    tspec["accessCredentials"][0]["sshPublicKey"] = None
    report = _complete(tmp_path / "mutated", fixture, docs)
    named = _problems(report, "VirtualMachine", "spec.template.spec.accessCredentials[0]")
    assert named and "neither" in named[0]["reason"], report["collection_problems"]
    assert _finding(report, "RR-BKP-012")["status"] == "ERROR"
    _no_better(baseline, report)


# -- a Schedule phase outside Velero's enum -----------------------------------------------------


@pytest.mark.parametrize("phase", ["failedvalidation", "FAILEDVALIDATION", "Bogus", 42, None])
def test_a_schedule_phase_velero_never_writes_is_named(tmp_path: Path, phase: Any) -> None:
    """``SchedulePhase`` is New, Enabled or FailedValidation (velero schedule_types.go);
    Velero skips a Schedule that is not Enabled. A FailedValidation phase written another way
    read as Enabled: RR-PLT-002 FAIL -> PASS, nothing named."""
    fixture = "RR-PLT-002/fail-failed-validation.yaml"
    docs = _docs(fixture)
    schedule = next(s for s in _of(docs, "Schedule") if s["status"]["phase"] == "FailedValidation")
    schedule["status"]["phase"] = phase
    report = _complete(tmp_path, fixture, docs)
    named = _problems(report, "Schedule", "status.phase")
    assert named and named[0]["name"] == schedule["metadata"]["name"], report["collection_problems"]
    assert report["run"]["complete"] is False
    finding = next(f for f in report["platform_findings"] if f["check_id"] == "RR-PLT-002")
    assert finding["status"] in ("FAIL", "ERROR"), finding


# -- an owner reference without its kind or name ------------------------------------------------


@pytest.mark.parametrize("name", ["", 42, None], ids=["empty", "int", "null"])
def test_a_claim_owner_reference_without_a_name_is_named(tmp_path: Path, name: Any) -> None:
    """The API server requires every owner reference's kind and name. A persistent-state
    PVC's reference to its VM with the name ``""`` (or 42, or none) was dropped unnamed, and
    which VM the claim belongs to was guessed from its name (bench.mutations empty_string
    over our own exports)."""
    fixture = "RR-BKP-004/pass.yaml"
    docs = _docs(fixture)
    baseline = _complete(tmp_path / "ok", fixture, docs)
    pvc = next(
        p
        for p in _of(docs, "PersistentVolumeClaim")
        if any(r.get("kind") == "VirtualMachine" for r in p["metadata"].get("ownerReferences", []))
    )
    ref = next(r for r in pvc["metadata"]["ownerReferences"] if r["kind"] == "VirtualMachine")
    ref["name"] = name
    report = _complete(tmp_path / "mutated", fixture, docs)
    named = [
        p
        for p in report["collection_problems"]
        if p["kind"] == "PersistentVolumeClaim"
        and str(p["field"]).startswith("metadata.ownerReferences[")
    ]
    assert named and named[0]["name"] == pvc["metadata"]["name"], report["collection_problems"]
    assert report["run"]["complete"] is False
    _no_better(baseline, report)


@pytest.mark.parametrize("strategy", ["livemigrate", "LiveMigrate ", 1, ["LiveMigrate"]])
def test_an_eviction_strategy_kubevirt_does_not_know_is_named(
    tmp_path: Path, strategy: Any
) -> None:
    """``evictionStrategy`` is None, LiveMigrate, LiveMigrateIfPossible or External; it says
    whether the VM live-migrates, so whether RR-STG-003 needs ReadWriteMany storage on the
    class a restore provisions on. ``livemigrate`` read as "does not migrate", unnamed."""
    fixture = "RR-STG-003/pass.yaml"
    docs = _docs(fixture)
    baseline = _complete(tmp_path / "ok", fixture, docs)
    _of(docs, "VirtualMachine")[0]["spec"]["template"]["spec"]["evictionStrategy"] = strategy
    report = _complete(tmp_path / "mutated", fixture, docs)
    assert _problems(report, "VirtualMachine", "spec.template.spec.evictionStrategy")
    assert report["run"]["complete"] is False
    assert _finding(report, "RR-STG-003")["status"] == "ERROR"
    _no_better(baseline, report)


# -- a name written "", a bootloader written null ----------------------------------------------


def test_a_vm_volume_named_empty_is_named(tmp_path: Path) -> None:
    """KubeVirt refuses a volume (disk, interface, network) named ``""``; it was read as a
    volume of that name, and a memory-dump volume so named changed findings unnamed
    (bench.mutations empty_string over our own exports)."""
    fixture = "RR-DSK-002/pass-memory-dump-volume.yaml"
    docs = _docs(fixture)
    baseline = _complete(tmp_path / "ok", fixture, docs)
    volumes = _of(docs, "VirtualMachine")[0]["spec"]["template"]["spec"]["volumes"]
    volumes[-1]["name"] = ""
    report = _complete(tmp_path / "mutated", fixture, docs)
    named = _problems(report, "VirtualMachine", "spec.template.spec.volumes")
    assert named and "not objects with a name" in named[0]["reason"], report["collection_problems"]
    assert report["run"]["complete"] is False
    _no_better(baseline, report)


@pytest.mark.parametrize("loader", ["efi", "bios"])
def test_a_bootloader_written_null_is_named(tmp_path: Path, loader: str) -> None:
    """The API server prunes a null field, so ``bootloader: {efi: null}`` is no bootloader
    KubeVirt stored; read as EFI without settings, an EFI VM's volatile NVRAM changed
    RR-FW-002 unnamed (null_list over our own exports)."""
    fixture = "RR-FW-002/fail-efi-volatile.yaml"
    docs = _docs(fixture)
    baseline = _complete(tmp_path / "ok", fixture, docs)
    firmware = _of(docs, "VirtualMachine")[0]["spec"]["template"]["spec"]["domain"]["firmware"]
    firmware["bootloader"] = {loader: None}
    report = _complete(tmp_path / "mutated", fixture, docs)
    assert _problems(report, "VirtualMachine", "spec.template.spec.domain.firmware.bootloader")
    assert report["run"]["complete"] is False
    assert _finding(report, "RR-FW-002")["status"] == "ERROR"
    _no_better(baseline, report)


# -- a snapshot content without its spec, a running volume without its source ------------------


def test_a_snapshot_content_without_its_spec_is_named(tmp_path: Path) -> None:
    """The VolumeSnapshotContent CRD requires its spec (driver, source, deletionPolicy); one
    whose spec was null was read without a word (bench.mutations null_list over our own
    exports)."""
    fixture = "RR-BKP-004/pass.yaml"
    docs = _docs(fixture)
    baseline = _complete(tmp_path / "ok", fixture, docs)
    content = _of(docs, "VolumeSnapshotContent")[0]
    content["spec"] = None
    report = _complete(tmp_path / "mutated", fixture, docs)
    named = _problems(report, "VolumeSnapshotContent", "spec")
    assert named and named[0]["name"] == content["metadata"]["name"], report["collection_problems"]
    assert report["run"]["complete"] is False
    _no_better(baseline, report)


@pytest.mark.parametrize("source", ["dataVolume", "persistentVolumeClaim"])
def test_a_running_volume_without_its_source_is_named(tmp_path: Path, source: str) -> None:
    """A VMI volume names exactly one source (KubeVirt refuses one without); with its
    ``dataVolume`` null it was read by its name alone, unnamed (null_list over our exports)."""
    fixture = "RR-BKP-004/pass.yaml"
    docs = _docs(fixture)
    baseline = _complete(tmp_path / "ok", fixture, docs)
    vmi = _of(docs, "VirtualMachineInstance")[0]
    volume = next(v for v in vmi["spec"]["volumes"] if "dataVolume" in v)
    volume.pop("dataVolume")
    volume[source] = None
    report = _complete(tmp_path / "mutated", fixture, docs)
    named = _problems(report, "VirtualMachineInstance", f"spec.volumes[{volume['name']}]")
    assert named and named[0]["name"] == "vm1", report["collection_problems"]
    assert report["run"]["complete"] is False
    assert _finding(report, "RR-DSK-002")["status"] == "ERROR"
    _no_better(baseline, report)


@pytest.mark.parametrize("kind", ["VirtualMachine", "VirtualMachineInstance"])
def test_conditions_written_null_are_named(tmp_path: Path, kind: str) -> None:
    """The API server prunes a null field, so ``status.conditions: null`` is in no export of
    a stored object. Read as "no conditions", the VM's pending RestartRequired vanished:
    RR-DSK-003 FAIL -> PASS, AT_RISK -> READY (bench.mutations null_list, seed 120)."""
    fixture = "RR-DSK-003/fail-restart-required.yaml"
    docs = _docs(fixture)
    baseline = _complete(tmp_path / "ok", fixture, docs)
    assert _finding(baseline, "RR-DSK-003")["status"] == "FAIL"
    obj = _of(docs, kind)[0]
    obj.setdefault("status", {})["conditions"] = None
    report = _complete(tmp_path / "mutated", fixture, docs)
    named = _problems(report, kind, "status.conditions")
    assert named and named[0]["name"] == "vm1", report["collection_problems"]
    assert report["run"]["complete"] is False
    assert _finding(report, "RR-DSK-003")["status"] in ("FAIL", "ERROR")
    _no_better(baseline, report)


@pytest.mark.parametrize("kind", ["Restore", "Backup"])
def test_a_velero_status_written_null_is_named(tmp_path: Path, kind: str) -> None:
    """A Velero object's ``status: null`` is in no export of a stored object (the API
    server prunes a null field); a drill's Restore so written read as never run, unnamed
    (bench.mutations null_list over our own exports, seed 120)."""
    fixture = "RR-RST-001/pass.yaml"
    docs = _docs(fixture)
    baseline = _complete(tmp_path / "ok", fixture, docs)
    obj = max(_of(docs, kind), key=lambda o: o["metadata"]["name"])
    obj["status"] = None
    report = _complete(tmp_path / "mutated", fixture, docs)
    named = _problems(report, kind, "status")
    assert named and named[0]["name"] == obj["metadata"]["name"], report["collection_problems"]
    assert report["run"]["complete"] is False
    _no_better(baseline, report)
