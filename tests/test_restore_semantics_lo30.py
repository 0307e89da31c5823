"""Restore semantics the auditor read wrong (lo30): each a possible false READY or a wrong
finding, each checked against the upstream source named in its test."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.test_evidence_gaps import _complete, _docs, _finding
from tests.test_red_team_rt29 import MOVER, _halted_on_wffc

Docs = list[dict[str, Any]]


def _wffc_class(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": "csi.example.com",
        "reclaimPolicy": "Delete",
        "volumeBindingMode": "WaitForFirstConsumer",
    }


def _class_map(data: dict[str, Any]) -> dict[str, Any]:
    """Velero's change-storage-class ConfigMap in its namespace (velero docs
    restore-reference, "Changing PV/PVC Storage Classes")."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "change-storage-class-config",
            "namespace": "velero",
            "labels": {
                "velero.io/plugin-config": "",
                "velero.io/change-storage-class": "RestoreItemAction",
            },
        },
        "data": data,
    }


def _halted_mover(*, backed_wffc: bool) -> Docs:
    """The data-mover fixture with its VM Halted and a DPA that does not ignore delay
    binding; its class ``delete-sc`` WaitForFirstConsumer when ``backed_wffc``, else
    Immediate (as written), with a WaitForFirstConsumer class ``local-wffc`` beside it."""
    docs = _halted_on_wffc(_docs(MOVER), ignore=False)
    for d in docs:
        if d["kind"] == "StorageClass":
            if backed_wffc:
                d["volumeBindingMode"] = "WaitForFirstConsumer"
            else:
                d.pop("volumeBindingMode", None)  # Immediate, the API's default
    return [*docs, _wffc_class("local-wffc")]


def test_a_class_mapped_to_a_wffc_class_waits_for_a_consumer(tmp_path: Path) -> None:
    """The restored PVC is created with the class Velero's change-storage-class ConfigMap
    maps the backed-up one to (velero pkg/restore/actions/change_storageclass_action.go
    Execute), and WaitPVCConsumed (pkg/util/kube/pvc_pv.go) reads that PVC's class: an
    Immediate class mapped to a WaitForFirstConsumer one leaves a Halted VM's DataDownload
    waiting for a pod that never comes. Before: PASS, the VM READY on the backed-up class."""
    docs = [*_halted_mover(backed_wffc=False), _class_map({"delete-sc": "local-wffc"})]
    report = _complete(tmp_path, MOVER, docs)
    finding = _finding(report, "RR-BKP-004")
    assert (finding["status"], finding["severity"]) == ("FAIL", "high"), finding["message"]
    assert "maps StorageClass delete-sc to local-wffc" in finding["message"]
    vm = next(v for v in report["vms"] if v["name"] == "vm1")
    assert vm["readiness"] == "NOT_READY"


def test_a_wffc_class_mapped_to_an_immediate_one_restores_without_a_consumer(
    tmp_path: Path,
) -> None:
    """The other way round: the backed-up class waits for a consumer, the mapped one binds at
    once, so the DataDownload proceeds. Before: FAIL on the backed-up class's binding mode."""
    immediate = {**_wffc_class("fast-immediate"), "volumeBindingMode": "Immediate"}
    docs = [
        *_halted_mover(backed_wffc=True),
        immediate,
        _class_map({"delete-sc": "fast-immediate"}),
    ]
    finding = _finding(_complete(tmp_path, MOVER, docs), "RR-BKP-004")
    assert finding["status"] == "PASS", finding["message"]


def test_unread_class_mappings_leave_a_wffc_restore_unknown(tmp_path: Path) -> None:
    """With the ConfigMaps unread, an Immediate class may be mapped to the cluster's
    WaitForFirstConsumer class: the copy's restore is unknown, not READY."""
    docs = _halted_mover(backed_wffc=False)
    path = tmp_path / "c.yaml"
    path.write_text(
        "# expect: RR-BKP-004 app/vm1 ERROR\n# unavailable: ConfigMap\n" + yaml.safe_dump_all(docs)
    )
    from tests.test_check_fixtures import audit_fixture

    finding = _finding(audit_fixture(path), "RR-BKP-004")
    assert finding["status"] == "ERROR", finding["message"]
    assert "change-storage-class" in finding["message"]


def test_read_class_mappings_without_wffc_classes_change_nothing(tmp_path: Path) -> None:
    """Out of the rule: no mapping of delete-sc, and it binds at once: PASS as before."""
    docs = [*_halted_mover(backed_wffc=False), _class_map({"other-sc": "local-wffc"})]
    finding = _finding(_complete(tmp_path, MOVER, copy.deepcopy(docs)), "RR-BKP-004")
    assert finding["status"] == "PASS", finding["message"]


RST = "RR-RST-001/pass.yaml"
RUN_LABEL = "velero.kubevirt.io/restore-run-strategy"


def _drill(docs: Docs, strategy: str | None) -> Docs:
    for d in docs:
        if d["kind"] == "Restore" and strategy is not None:
            d["metadata"].setdefault("labels", {})[RUN_LABEL] = strategy
    return docs


def _drill_vmi(docs: Docs) -> dict[str, Any]:
    vmi = copy.deepcopy(next(d for d in docs if d["kind"] == "VirtualMachineInstance"))
    vmi["metadata"]["namespace"] = "app-drill"
    vmi["metadata"].pop("uid", None)
    vmi.setdefault("status", {})["phase"] = "Running"
    return vmi


@pytest.mark.parametrize("strategy", ["Halted", "Manual"])
def test_a_drill_restored_halted_proves_no_boot(tmp_path: Path, strategy: str) -> None:
    """kubevirt-velero-plugin pkg/plugin/vm_restore_item_action.go Execute: a Restore
    labelled velero.kubevirt.io/restore-run-strategy (pkg/util/util.go
    GetRestoreRunStrategy, presence of the key) gets each restored VM's spec.runStrategy set to
    the label's value. Halted or Manual starts no VMI, so the drill proved the data came back,
    never that the VM boots. Before: RR-RST-001 PASS."""
    docs = _drill(_docs(RST), strategy)
    finding = _finding(_complete(tmp_path, RST, docs), "RR-RST-001")
    assert (finding["status"], finding["severity"]) == ("FAIL", "info"), finding["message"]
    assert f"{RUN_LABEL}='{strategy}'" in finding["message"]
    assert finding["evidence"]["restore_run_strategy"] == strategy


@pytest.mark.parametrize(("strategy", "booted"), [("Always", False), ("Halted", True)])
def test_a_drill_that_started_the_vm_still_proves_it(
    tmp_path: Path, strategy: str, booted: bool
) -> None:
    """Out of the rule: a label that starts the VM (Always), or a drill VM seen Running in
    the drill namespace (started by hand after a Halted restore)."""
    docs = _drill(_docs(RST), strategy)
    if booted:
        docs.append(_drill_vmi(docs))
    finding = _finding(_complete(tmp_path, RST, docs), "RR-RST-001")
    assert finding["status"] == "PASS", finding["message"]


RST2 = "RR-RST-002/pass-drill-labelled.yaml"


@pytest.mark.parametrize(
    ("field", "status"),
    [
        (("domain", "devices", "disks"), "PASS"),
        (("domain", "firmware"), "PASS"),
        (("domain", "devices", "interfaces"), "ERROR"),
        (("networks",), "ERROR"),
    ],
)
def test_rst002_errors_only_on_the_fields_it_reads(
    tmp_path: Path, field: tuple[str, ...], status: str
) -> None:
    """RR-RST-002 judges the newest drill by its target namespace, its plugin labels, the
    VM's L2 MACs and whether it is Windows (docs/adding-a-check.md: ``reads`` names exactly
    the fields read). It declared the whole template: a malformed disk list or firmware made
    it ERROR (UNKNOWN) although neither decides its verdict. Before: ERROR for all four."""
    docs = _docs(RST2)
    vm = next(d for d in docs if d["kind"] == "VirtualMachine")
    node = vm["spec"]["template"]["spec"]
    for key in field[:-1]:
        node = node.setdefault(key, {})
    node[field[-1]] = "junk"
    finding = _finding(_complete(tmp_path, RST2, docs), "RR-RST-002")
    assert finding["status"] == status, finding["message"]


#: How a check's code reads a kind: the index's per-kind tables (and VMRecord fields built
#: from one kind), and the kind-state calls naming it.
_KIND_ATTRS = {
    "schedules": "Schedule",
    "next_backups": "Schedule",
    "restores": "Restore",
    "namespaces": "Namespace",
    "storage_classes": "StorageClass",
    "vmis": "VirtualMachineInstance",
    "datavolumes": "DataVolume",
    "nad_objects": "NetworkAttachmentDefinition",
    "services_by_ns": "Service",
    "routes_by_ns": "Route",
    "volume_snapshots": "VolumeSnapshot",
    "vm_snapshots": "VirtualMachineSnapshot",
    "pvs": "PersistentVolume",
}
_KIND_CALL = r'(?:known|partial_for|of|state)\(\s*"([A-Za-z]+)"'
#: Kinds a check reads without requiring them, each because the check itself says what an
#: unread list leaves unknown (ERROR from the check) or shows the kind as evidence only.
_READ_NOT_REQUIRED = {
    ("RR-BKP-001", "Namespace"): "a note beside the PASS (RR-BKP-013 judges the label)",
    ("RR-BKP-002", "Schedule"): "evidence and a 'paused' note only",
    ("RR-BKP-011", "Backup"): "the newest usable Backup's spec.hooks, one the index holds",
    ("RR-BKP-011", "KubeVirt"): "an inferred PASS when the CR is unread and no VM or VMI decides",
    ("RR-BKP-006", "Schedule"): "errored() when the Schedules are unread or partial",
    ("RR-BKP-006", "DataProtectionApplication"): "a template without ttl: unknown when partial; "
    "none read is plain Velero (720 h, its Deployment's flags are not read)",
    ("RR-BKP-007", "BackupStorageLocation"): "errored() when the locations are unread",
    ("RR-FW-002", "PersistentVolumeClaim"): "errored() when the PVCs or VMIs are unread",
    ("RR-FW-002", "VirtualMachineInstance"): "errored() when the PVCs or VMIs are unread",
    ("RR-NET-003", "Route"): "errored() when the Routes are unread or partial",
    ("RR-NET-001", "KubeVirt"): "errored() when a NIC names a binding plugin and the CR is unread",
    ("RR-DSK-003", "KubeVirt"): "errored() when the default machine type rests on an unread CR",
    ("RR-PLT-006", "KubeVirt"): "judged unknown when the KubeVirt CR is unread",
    ("RR-RST-002", "Namespace"): "the target namespace's labels, evidence only",
    ("RR-STG-003", "ConfigMap"): "unknown verdict when a gone class's mapping is unread",
}


def _closure_source(fn: Any) -> str:
    """The source of ``fn`` and of the functions of its module it calls, transitively."""
    import ast
    import inspect
    import sys
    import textwrap

    mod = sys.modules[fn.__module__]
    seen: set[str] = set()
    todo, out = [fn], []
    while todo:
        f = todo.pop()
        if f.__name__ in seen:
            continue
        seen.add(f.__name__)
        src = textwrap.dedent(inspect.getsource(f))
        out.append(src)
        for node in ast.walk(ast.parse(src)):
            other = getattr(mod, node.id, None) if isinstance(node, ast.Name) else None
            if inspect.isfunction(other) and other.__module__ == mod.__name__:
                todo.append(other)
    return "\n".join(out)


def test_each_check_requires_the_kinds_it_reads() -> None:
    """A check that reads a kind's objects needs that list whole, or says itself what an
    unread one leaves unknown: ``requires`` makes the engine ERROR for an unread or partial
    list and names the malformed objects of that kind (docs/adding-a-check.md). RR-BKP-013
    read the Schedules (vm.next_backups) without requiring them: with some Schedule objects
    unread, its FAIL "the next backup of Schedule X will not hold the VM" stood although an
    unread Schedule may take it. A new check reading a kind must require it or be listed in
    ``_READ_NOT_REQUIRED`` with its reason."""
    import re

    from auditor.checks.registry import CATALOG

    missing = []
    for cid, spec in sorted(CATALOG.items()):
        fn = spec.vm_func or spec.platform_func
        src = _closure_source(fn)
        kinds = set(re.findall(_KIND_CALL, src))
        kinds |= {k for a, k in _KIND_ATTRS.items() if re.search(rf"\.{a}\b", src)}
        for kind in sorted(kinds - set(spec.requires)):
            if (cid, kind) not in _READ_NOT_REQUIRED:
                missing.append(f"{cid} reads {kind}")
    assert not missing, missing
    stale = [k for k in _READ_NOT_REQUIRED if k[1] in CATALOG[k[0]].requires]
    assert not stale, f"listed as not required but required: {stale}"


def test_bkp013_fail_is_unsure_while_some_schedules_are_unread(tmp_path: Path) -> None:
    """RR-BKP-013's FAIL "the next backup of Schedule daily will not hold the VM's disk
    data" rests on every Schedule covering the VM: with a Schedule object unreadable (its
    metadata junk), that one may take it. Before: FAIL medium, observed; now not a FAIL."""
    fixture = "RR-BKP-013/fail-schedule-snapshot-volumes-off.yaml"
    docs = _docs(fixture)
    docs.append({"apiVersion": "velero.io/v1", "kind": "Schedule", "metadata": "junk"})
    finding = _finding(_complete(tmp_path, fixture, docs), "RR-BKP-013")
    assert finding["status"] == "ERROR", finding["message"]


FW = "RR-FW-001/fail-linux-no-uuid.yaml"


def _vm_on_preference(docs: Docs, status_ref: Any) -> Docs:
    """The VM without its os annotation, on a cluster preference labelled Windows."""
    vm = next(d for d in docs if d["kind"] == "VirtualMachine")
    vm["spec"]["template"]["metadata"].pop("annotations", None)
    vm["spec"]["preference"] = {"kind": "VirtualMachineClusterPreference", "name": "corp-std"}
    if status_ref is not None:
        vm.setdefault("status", {})["preferenceRef"] = status_ref
    pref = {
        "apiVersion": "instancetype.kubevirt.io/v1beta1",
        "kind": "VirtualMachineClusterPreference",
        "metadata": {"name": "corp-std", "labels": {"instancetype.kubevirt.io/os-type": "windows"}},
        "spec": {"firmware": {"preferredUseEfi": True, "preferredUseSecureBoot": True}},
    }
    return [*docs, pref]


def test_fw001_reads_the_windows_guest_from_its_preference(tmp_path: Path) -> None:
    """The preference (its os-type label) tells a Windows guest: a missing uuid is high."""
    docs = _vm_on_preference(_docs(FW), None)
    finding = _finding(_complete(tmp_path, FW, docs), "RR-FW-001")
    assert (finding["status"], finding["severity"]) == ("FAIL", "high"), finding["message"]
    assert finding["evidence"]["os"] == "windows"


def test_fw001_errors_on_a_malformed_preference_ref(tmp_path: Path) -> None:
    """The preference a VM runs with is the ControllerRevision status.preferenceRef pins
    (kubevirt pkg/instancetype/preference/find/revision.go): malformed, which preference
    (and so whether the guest is Windows, the severity) cannot be told. RR-FW-001 did not
    declare it read: before, FAIL high on the live preference; now ERROR naming the field,
    as RR-FW-002, which reads the same preference, gives."""
    docs = _vm_on_preference(_docs(FW), "junk")
    report = _complete(tmp_path, FW, docs)
    finding = _finding(report, "RR-FW-001")
    assert finding["status"] == "ERROR", finding["message"]
    assert "status.preferenceRef" in finding["message"]
    assert _finding(report, "RR-FW-002")["status"] == "ERROR"


DSK3 = "RR-DSK-003/pass.yaml"


def _kubevirt(**conf: Any) -> dict[str, Any]:
    return {
        "apiVersion": "kubevirt.io/v1",
        "kind": "KubeVirt",
        "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
        "spec": {"configuration": conf},
        "status": {"observedKubeVirtVersion": "v1.5.2", "phase": "Deployed"},
    }


def _unpinned_machine(docs: Docs, running: str) -> Docs:
    """The VM's spec without a machine type; its VMI started on ``running``."""
    for d in docs:
        if d["kind"] == "VirtualMachine":
            d["spec"]["template"]["spec"]["domain"].pop("machine", None)
        if d["kind"] == "VirtualMachineInstance":
            d["spec"]["domain"]["machine"] = {"type": running}
    return docs


@pytest.mark.parametrize(
    ("conf", "status"),
    [
        ({"architectureConfiguration": {"amd64": {"machineType": "pc-q35-rhel9.4.0"}}}, "FAIL"),
        ({"machineType": "pc-q35-rhel9.4.0"}, "FAIL"),
        ({}, "FAIL"),  # the built-in default, q35
        ({"architectureConfiguration": {"amd64": {"machineType": "pc-q35-rhel8.6.0"}}}, "PASS"),
    ],
)
def test_a_restore_gives_an_unpinned_vm_the_clusters_default_machine_type(
    tmp_path: Path, conf: dict[str, Any], status: str
) -> None:
    """KubeVirt's VM admission webhook writes the cluster's default machine type into a VM
    that names none, on every create (pkg/defaults/defaults.go setVMDefaultMachineType ->
    pkg/virt-config/virt-config.go GetMachineType: spec.configuration.machineType, else
    architectureConfiguration.<arch>.machineType, else q35). A restore creates the VM, so
    a guest started on pc-q35-rhel8.6.0 boots on the cluster's default now: RR-DSK-003 said
    PASS "the machine type its spec states is the one it runs with" (it compared no default);
    now a low FAIL, inferred (AT_RISK at most, never NOT_READY)."""
    docs = [*_unpinned_machine(_docs(DSK3), "pc-q35-rhel8.6.0"), _kubevirt(**conf)]
    finding = _finding(_complete(tmp_path, DSK3, docs), "RR-DSK-003")
    assert finding["status"] == status, finding["message"]
    if status == "FAIL":
        assert finding["severity"] == "low"
        assert finding["basis"] == "inferred"
        assert "runs on pc-q35-rhel8.6.0" in finding["message"]
        assert finding["evidence"]["machine_type"]["running"] == "pc-q35-rhel8.6.0"


def test_an_unread_kubevirt_cr_compares_no_default_machine_type(tmp_path: Path) -> None:
    """Without the KubeVirt CR the default is unknown: not compared (as every other value a
    spec leaves to KubeVirt's defaults), never a FAIL made up of a guess."""
    from tests.test_check_fixtures import audit_fixture

    docs = _unpinned_machine(_docs(DSK3), "pc-q35-rhel8.6.0")
    path = tmp_path / "c.yaml"
    path.write_text(
        "# expect: RR-DSK-003 app/vm1 PASS\n# unavailable: KubeVirt\n" + yaml.safe_dump_all(docs)
    )
    finding = _finding(audit_fixture(path), "RR-DSK-003")
    assert finding["status"] == "PASS", finding["message"]
    assert finding["evidence"]["machine_type_default_unknown"] == "the KubeVirt CR was not read"


def test_each_check_reading_the_preference_reads_its_pinned_revision() -> None:
    """The preference a VM runs with is the ControllerRevision status.preferenceRef pins
    (kubevirt pkg/instancetype/preference/find/revision.go): a check that reads
    spec.preference reads that too (RR-FW-001 and RR-DSK-003 did not)."""
    from auditor.checks.registry import CATALOG

    missing = [
        cid
        for cid, spec in sorted(CATALOG.items())
        if "spec.preference" in spec.reads and "status.preferenceRef" not in spec.reads
    ]
    assert not missing, missing


def _halted_vm(docs: Docs, stopped_at: str | None = None) -> Docs:
    """The drill fixture's VM Halted, no VMI running; ``stopped_at``: its Ready condition
    turned False then (else none: stopped as far as the export shows)."""
    out = [d for d in docs if d["kind"] != "VirtualMachineInstance"]
    for d in out:
        if d["kind"] == "VirtualMachine":
            d["spec"].pop("running", None)
            d["spec"]["runStrategy"] = "Halted"
            d.setdefault("status", {}).pop("printableStatus", None)
            if stopped_at:
                d["status"]["conditions"] = [
                    {"type": "Ready", "status": "False", "lastTransitionTime": stopped_at}
                ]
    return out


def test_a_drill_of_a_backup_holding_the_vm_stopped_proves_no_boot(tmp_path: Path) -> None:
    """Without the label the plugin leaves the restored VM's runStrategy as the Backup holds
    it (kubevirt-velero-plugin vm_restore_item_action.go acts only when the label is there):
    a VM Halted when its Backup began comes back Halted, started by nothing. Before: PASS."""
    docs = _halted_vm(_docs(RST))
    finding = _finding(_complete(tmp_path, RST, docs), "RR-RST-001")
    assert (finding["status"], finding["severity"]) == ("FAIL", "info"), finding["message"]
    assert finding["basis"] == "inferred"
    assert finding["evidence"]["backup_holds_vm_stopped"] == "Halted"


def test_a_vm_stopped_after_the_drills_backup_began_was_held_running(tmp_path: Path) -> None:
    """Out of the rule: the VM ran when the drill's Backup (daily-20261128, 01:00) began and
    was stopped later, so the Backup holds the spec that ran it."""
    docs = _halted_vm(_docs(RST), stopped_at="2026-11-29T12:00:00Z")
    finding = _finding(_complete(tmp_path, RST, docs), "RR-RST-001")
    assert finding["status"] == "PASS", finding["message"]


def test_a_classless_claim_restores_on_the_default_class_which_waits(tmp_path: Path) -> None:
    """A claim without storageClassName is given the cluster's default class when the restore
    creates it (DefaultStorageClass admission), and WaitPVCConsumed reads that class: a
    WaitForFirstConsumer default leaves a Halted VM's DataDownload waiting. Before: PASS
    (no class read as none that waits)."""
    docs = _halted_mover(backed_wffc=False)
    for d in docs:
        if d["kind"] in ("PersistentVolumeClaim", "PersistentVolume"):
            d["spec"].pop("storageClassName", None)
        if d["kind"] == "StorageClass" and d["metadata"]["name"] == "local-wffc":
            d["metadata"]["annotations"] = {"storageclass.kubernetes.io/is-default-class": "true"}
    finding = _finding(_complete(tmp_path, MOVER, docs), "RR-BKP-004")
    assert (finding["status"], finding["severity"]) == ("FAIL", "high"), finding["message"]
    assert "gets the default one, local-wffc, which is WaitForFirstConsumer" in finding["message"]
