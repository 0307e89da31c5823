"""The rules of the sixth session's red-team rounds (helpers 23-25), each held to the case
that broke it: a verdict better than the evidence, a false alarm or a crash.

Each test takes a fixture of the check catalog, changes one thing a real cluster (or a
damaged export) can hold, and asserts the finding that must follow.
"""

from __future__ import annotations

import copy
import hashlib
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.test_evidence_gaps import FIXTURES, _complete, _docs, _finding, _of

Docs = list[dict[str, Any]]


def _platform(report: dict[str, Any], check: str) -> dict[str, Any]:
    return next(f for f in report["platform_findings"] if f["check_id"] == check)


def _set(obj: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    """Set ``obj[path[0]]...[path[-1]] = value``, making the mappings on the way."""
    for key in path[:-1]:
        obj = obj.setdefault(key, {})
    obj[path[-1]] = value


def _named(report: dict[str, Any], kind: str, field: str) -> bool:
    return any(p["kind"] == kind and p["field"] == field for p in report["collection_problems"])


@pytest.mark.parametrize(
    ("image", "enabled"),
    [
        ("quay.io/kubevirt/kubevirt-velero-plugin:v0.7.1", True),
        (
            "registry.redhat.io/container-native-virtualization/kubevirt-velero-plugin-rhel9:v4.17",
            True,
        ),
        ("localhost:5000/kubevirt-velero-plugin@sha256:0123", True),
        # a tag, a digest or another image that merely mentions the name (red team)
        ("quay.io/velero/velero-plugin-for-aws:kubevirt-velero-plugin-compat", False),
        ("registry.example.com/tools/not-a-kubevirt-velero-plugin-checker:1", False),
        ("quay.io/velero/velero-plugin-for-aws@sha256:kubevirt-velero-plugin", False),
    ],
)
def test_only_the_kubevirt_plugin_image_counts_as_the_custom_plugin(
    tmp_path: Path, image: str, enabled: bool
) -> None:
    """A customPlugins entry is the kubevirt plugin when its repository name (no tag, no
    digest) is kubevirt-velero-plugin or a build of it; the label-selected Backups then take
    the VM's unlabelled PVCs, and only then."""
    fixture = "RR-BKP-004/pass-kubevirt-plugin-installed-as-custom-plugin.yaml"
    docs = _docs(fixture)
    dpa = _of(docs, "DataProtectionApplication")[0]
    dpa["spec"]["configuration"]["velero"]["customPlugins"][0]["image"] = image
    report = _complete(tmp_path, fixture, docs)
    assert _platform(report, "RR-PLT-004")["status"] == ("PASS" if enabled else "FAIL")
    assert _finding(report, "RR-BKP-004")["status"] == ("PASS" if enabled else "FAIL")


@pytest.mark.parametrize(
    ("configuration", "status"),
    [
        ({"nodeAgent": {"enable": True}}, "PASS"),
        # OADP deploys the node-agent only when asked (oadp-operator nodeagent.go)
        ({}, "FAIL"),
        ({"nodeAgent": None}, "FAIL"),
        ({"nodeAgent": {"uploaderType": "kopia"}}, "FAIL"),
        # either switch deploys it (OADP 1.3 still reads restic)
        ({"nodeAgent": {"enable": False}, "restic": {"enable": True}}, "PASS"),
        # not a mapping: unreadable, never "on" (red team: read as enabled)
        ({"nodeAgent": True}, "ERROR"),
        ({"nodeAgent": {"enable": "yes"}}, "ERROR"),
    ],
)
def test_a_data_mover_copy_needs_a_node_agent_the_dpa_deploys(
    tmp_path: Path, configuration: dict[str, Any], status: str
) -> None:
    """A DataProtectionApplication in the Backup's namespace that does not turn the
    node-agent on leaves data-mover copies that no restore can bring back."""
    fixture = "RR-BKP-004/pass-data-mover.yaml"
    docs = _docs(fixture)
    config = _of(docs, "DataProtectionApplication")[0]["spec"]["configuration"]
    config.pop("nodeAgent", None)
    config.update(copy.deepcopy(configuration))
    finding = _finding(_complete(tmp_path, fixture, docs), "RR-BKP-004")
    assert finding["status"] == status, finding["message"]


def test_without_a_dpa_the_node_agent_is_not_judged(tmp_path: Path) -> None:
    """Plain Velero has no DataProtectionApplication: whether its node-agent runs is not in
    the export, and no verdict is drawn from that."""
    fixture = "RR-BKP-004/pass-data-mover.yaml"
    docs = [d for d in _docs(fixture) if d["kind"] != "DataProtectionApplication"]
    assert _finding(_complete(tmp_path, fixture, docs), "RR-BKP-004")["status"] != "FAIL"


@pytest.mark.parametrize("kind", ["VirtualMachine", "PersistentVolumeClaim"])
def test_a_deletion_time_after_the_audit_is_no_evidence(tmp_path: Path, kind: str) -> None:
    """The API server sets deletionTimestamp when deletion is requested: one after the audit
    time cannot be real, and when deletion began (which Backups skipped the object) is
    unknown. It was trusted, and the Backups before it held the object (red team)."""
    fixture = "RR-BKP-004/pass.yaml"
    docs = _docs(fixture)
    _of(docs, kind)[0]["metadata"]["deletionTimestamp"] = "2026-12-05T00:00:00Z"
    report = _complete(tmp_path, fixture, docs)
    check = "RR-BKP-001" if kind == "VirtualMachine" else "RR-BKP-004"
    assert _finding(report, check)["status"] == "ERROR", _finding(report, check)["message"]
    assert next(v for v in report["vms"] if v["name"] == "vm1")["readiness"] != "READY"


def test_a_retained_snapshot_content_being_deleted_does_not_outlive_the_namespace(
    tmp_path: Path,
) -> None:
    """A VolumeSnapshotContent with deletionPolicy Retain that is being deleted keeps the
    storage snapshot, but nothing will point at it once the namespace is gone: it is no copy
    that outlives the namespace (red team: RR-STG-001 passed)."""
    fixture = "RR-STG-001/pass-retained-volume-snapshots.yaml"
    docs = _docs(fixture)
    for content in _of(docs, "VolumeSnapshotContent"):
        content["metadata"]["deletionTimestamp"] = "2026-11-30T05:30:00Z"
    assert _finding(_complete(tmp_path, fixture, docs), "RR-STG-001")["status"] == "FAIL"


@pytest.mark.parametrize("kind", ["VolumeSnapshot", "VirtualMachineSnapshotContent"])
def test_owner_references_that_are_no_list_are_named(tmp_path: Path, kind: str) -> None:
    """Which VirtualMachineSnapshot owns a VolumeSnapshot decides whether it goes with that
    snapshot: owner references of another type silently lowered RR-STG-001 from high to
    medium (red team). They are named."""
    fixture = "RR-STG-001/fail-vm-snapshot-being-deleted-takes-its-volume-snapshots.yaml"
    docs = _docs(fixture)
    for obj in _of(docs, kind):
        obj["metadata"]["ownerReferences"] = obj["metadata"]["ownerReferences"][0]
    report = _complete(tmp_path, fixture, docs)
    assert _named(report, kind, "metadata.ownerReferences")
    finding = _finding(report, "RR-STG-001")
    assert finding["status"] == "ERROR" or finding["severity"] == "high", finding


def test_schedules_of_one_name_in_two_velero_installs_are_both_judged(tmp_path: Path) -> None:
    """RR-PLT-002 keyed Schedules by name alone: a second Velero's Schedule of the same name,
    writing to a ReadOnly location, hid behind the first (red team)."""
    fixture = "RR-PLT-002/pass.yaml"
    docs = _docs(fixture)
    schedule = copy.deepcopy(_of(docs, "Schedule")[0])
    location = copy.deepcopy(_of(docs, "BackupStorageLocation")[0])
    for obj in (schedule, location):
        obj["metadata"]["namespace"] = "velero-two"
    location["spec"]["accessMode"] = "ReadOnly"
    assert _platform(_complete(tmp_path / "one", fixture, docs), "RR-PLT-002")["status"] == "PASS"
    report = _complete(tmp_path / "two", fixture, [*docs, schedule, location])
    assert _platform(report, "RR-PLT-002")["status"] == "FAIL"


@pytest.mark.parametrize(
    ("kind", "path", "value"),
    [
        ("Schedule", ("spec", "template", "storageLocation"), ["default"]),
        ("BackupStorageLocation", ("spec", "default"), "true"),
    ],
)
def test_where_a_schedule_writes_cannot_be_read_is_named(
    tmp_path: Path, kind: str, path: tuple[str, ...], value: Any
) -> None:
    """A storageLocation of another type read as "the default location", and a default flag
    that is no boolean as "not the default": both are named, so RR-PLT-002 cannot pass on a
    location nothing says is writable (red team)."""
    fixture = "RR-PLT-002/fail-schedule-writes-to-read-only-location.yaml"
    docs = _docs(fixture)
    _set(_of(docs, kind)[0], path, value)
    report = _complete(tmp_path, fixture, docs)
    assert _named(report, kind, ".".join(path))
    assert _platform(report, "RR-PLT-002")["status"] != "PASS"


def test_the_first_default_location_is_the_one_velero_uses(tmp_path: Path) -> None:
    """Velero takes the first location marked default; a later ReadWrite one does not make
    the Schedule's ReadOnly default writable."""
    fixture = "RR-PLT-002/fail-schedule-writes-to-read-only-location.yaml"
    docs = _docs(fixture)
    schedule = _of(docs, "Schedule")[0]
    schedule["spec"]["template"].pop("storageLocation", None)
    location = _of(docs, "BackupStorageLocation")[0]
    location["spec"]["default"] = True
    writable = copy.deepcopy(location)
    writable["metadata"]["name"] = "zz-writable"
    writable["spec"]["accessMode"] = "ReadWrite"
    report = _complete(tmp_path, fixture, [*docs, writable])
    assert _platform(report, "RR-PLT-002")["status"] == "FAIL"


def test_a_damaged_custom_plugin_list_leaves_the_plugin_check_unknown(tmp_path: Path) -> None:
    """The kubevirt plugin listed beside an entry without an image: the DPA is named and
    unread, and RR-PLT-004 no longer says the plugin is enabled (red team)."""
    fixture = "RR-PLT-004/pass-custom-plugin.yaml"
    docs = _docs(fixture)
    _of(docs, "DataProtectionApplication")[0]["spec"]["configuration"]["velero"][
        "customPlugins"
    ].append({"name": "x"})
    report = _complete(tmp_path, fixture, docs)
    assert _named(report, "DataProtectionApplication", "spec.configuration.velero.customPlugins")
    assert _platform(report, "RR-PLT-004")["status"] == "ERROR"


def test_none_completed_is_no_failure_while_a_ready_content_of_unknown_driver_exists(
    tmp_path: Path,
) -> None:
    """A Backup that completed none of its CSI attempts captured nothing that way, unless a
    ready content labelled with it says otherwise; one whose driver cannot be read may be the
    PVC's snapshot (red team: FAIL), so no PVC is failed. One content is at most one of the
    VM's two disks, though: the VM lacks a disk (red team rt22, the counters' shortfall)."""
    fixture = "RR-BKP-004/fail-csi-attempts-none-completed.yaml"
    docs = _docs(fixture)
    content = copy.deepcopy(
        next(
            c
            for c in _of(docs, "VolumeSnapshotContent")
            if c["metadata"]["labels"]["velero.io/backup-name"] == "daily-20261128"
        )
    )
    content["metadata"]["name"] = "snapcontent-daily-20261130-nodriver"
    content["metadata"]["labels"]["velero.io/backup-name"] = "daily-20261130"
    del content["spec"]["driver"]
    finding = _finding(_complete(tmp_path, fixture, [*docs, content]), "RR-BKP-004")
    statuses = {p["pvc"]: p["status"] for p in finding["evidence"]["pvcs"]}
    assert statuses["vm1-root"] == statuses["vm1-data"] == "unknown", statuses
    assert finding["status"] == "FAIL", finding["message"]
    assert "at most 1 csi-snapshot" in finding["evidence"]["shortfall"]


@pytest.mark.parametrize(
    ("fixture", "status"),
    [
        ("RR-RST-001/fail-data-download-failed.yaml", "FAIL"),
        ("RR-RST-001/pass-data-downloads-completed.yaml", "PASS"),
    ],
)
def test_items_of_a_long_named_restore_are_found_under_velero_s_label(
    tmp_path: Path, fixture: str, status: str
) -> None:
    """Velero labels a Restore's DataDownloads with its name cut to a label value: the first
    57 characters and 6 hex digits of its sha256 (pkg/label GetValidName). Matched by the raw
    name, a failed data restore of a drill with a 69-character name went unseen (red team:
    READY, RR-RST-001 FAIL info 'no DataDownload')."""
    from auditor.inventory.index import velero_label

    docs = _docs(fixture)
    restore = _of(docs, "Restore")[0]
    long_name = (
        restore["metadata"]["name"] + "-app-vm-01-team-apps-daily-20261128010002-20261128100000"
    )
    assert len(long_name) > 63
    restore["metadata"]["name"] = long_name
    for download in _of(docs, "DataDownload"):
        download["metadata"]["labels"]["velero.io/restore-name"] = velero_label(long_name)
    finding = _finding(_complete(tmp_path, fixture, docs), "RR-RST-001")
    assert finding["status"] == status, finding["message"]
    # Velero's own form, computed here independently: 57 characters and 6 of the sha256
    assert velero_label(long_name) == (
        long_name[:57] + hashlib.sha256(long_name.encode()).hexdigest()[:6]
    )


def test_contents_of_a_long_named_backup_are_found_under_velero_s_label(tmp_path: Path) -> None:
    """The same label rule for a Backup's VolumeSnapshotContents: a long-named Backup's
    ready contents are its evidence, not 'none labelled'."""
    from auditor.inventory.index import velero_label

    fixture = "RR-BKP-004/pass-snapshot-contents-without-counters.yaml"
    docs = _docs(fixture)
    newest = next(b for b in _of(docs, "Backup") if b["metadata"]["name"] == "daily-20261130")
    long_name = "daily-20261130-" + "x" * 60
    newest["metadata"]["name"] = long_name
    for content in _of(docs, "VolumeSnapshotContent"):
        labels = content["metadata"]["labels"]
        if labels["velero.io/backup-name"] == "daily-20261130":
            labels["velero.io/backup-name"] = velero_label(long_name)
    finding = _finding(_complete(tmp_path, fixture, docs), "RR-BKP-004")
    assert finding["status"] == "PASS", finding["message"]
    assert long_name in finding["message"]


@pytest.mark.parametrize(
    ("selector", "status"),
    [
        ({"vm.kubevirt.io/name": "vm1"}, "FAIL"),
        ({"vm.kubevirt.io/name": "vm1", "kubevirt.io": "virt-launcher"}, "FAIL"),
        ({"vm.kubevirt.io/name": "other-vm"}, "NOT_APPLICABLE"),
    ],
)
def test_a_service_selecting_the_launcher_pod_label_names_the_vm(
    tmp_path: Path, selector: dict[str, str], status: str
) -> None:
    """KubeVirt labels every virt-launcher pod vm.kubevirt.io/name=<vm> (and
    kubevirt.io=virt-launcher) whatever the template says: a Service selecting the VM that
    way, left out of the backup, went unseen (red team: RR-NET-003 N/A, READY)."""
    fixture = "RR-NET-003/fail-service-outside-backup.yaml"
    docs = _docs(fixture)
    _of(docs, "Service")[0]["spec"]["selector"] = selector
    finding = _finding(_complete(tmp_path, fixture, docs), "RR-NET-003")
    assert finding["status"] == status, finding["message"]


@pytest.mark.parametrize(
    ("os_label", "change", "status", "severity"),
    [
        (None, None, "PASS", None),
        (None, "bus", "FAIL", "medium"),
        ("windows2k22", "bus", "FAIL", "high"),
        (None, "model", "FAIL", "medium"),
    ],
)
def test_hardware_changed_in_the_spec_while_the_vm_runs_is_named(
    tmp_path: Path, os_label: str | None, change: str | None, status: str, severity: str | None
) -> None:
    """Red team (helper-26): a Windows VM's boot disk bus edited from sata to virtio while it
    runs (RestartRequired) was READY, though every backup since restores it on a bus it has
    no boot driver for. RR-DSK-003 compares the spec's stated buses and NIC models with the
    running VMI's."""
    fixture = "RR-DSK-003/pass.yaml"
    docs = _docs(fixture)
    vm = _of(docs, "VirtualMachine")[0]
    devices = vm["spec"]["template"]["spec"]["domain"]["devices"]
    if os_label:
        labels = vm["metadata"].setdefault("labels", {})
        labels[f"os.template.kubevirt.io/{os_label}"] = "true"
    if change == "bus":
        devices["disks"][0]["disk"]["bus"] = "sata"
    if change == "model":
        devices["interfaces"][0]["model"] = "e1000e"
        vmi_ifaces = _of(docs, "VirtualMachineInstance")[0]["spec"]["domain"]["devices"]
        vmi_ifaces["interfaces"][0]["model"] = "virtio"
    finding = _finding(_complete(tmp_path, fixture, docs), "RR-DSK-003")
    assert finding["status"] == status, finding["message"]
    if severity:
        assert finding["severity"] == severity


@pytest.mark.parametrize("how", ["none", "nothing-restored", "pvc-left-in-target"])
def test_a_drill_that_brought_no_data_back_proves_no_restore(tmp_path: Path, how: str) -> None:
    """Red team (helper-26): a Completed drill whose status.progress says 0 items restored,
    or one into a namespace where the disk's PVC was left by an earlier drill (Velero skips an
    existing object), passed RR-RST-001. Neither brought disk data back."""
    fixture = "RR-RST-001/pass.yaml"
    docs = _docs(fixture)
    restore = _of(docs, "Restore")[0]
    if how == "nothing-restored":
        restore["status"]["progress"] = {"itemsRestored": 0, "totalItems": 0}
    if how == "pvc-left-in-target":
        pvc = copy.deepcopy(
            next(
                p
                for p in _of(docs, "PersistentVolumeClaim")
                if not p["metadata"]["name"].startswith("persistent-state")
            )
        )
        pvc["metadata"]["namespace"] = restore["spec"]["namespaceMapping"]["app"]
        pvc["metadata"]["creationTimestamp"] = "2026-10-28T09:00:00Z"
        pvc["metadata"]["uid"] = "uid-left-over"
        docs.append(pvc)
    finding = _finding(_complete(tmp_path, fixture, docs), "RR-RST-001")
    assert finding["status"] == ("PASS" if how == "none" else "FAIL"), finding["message"]


def _dsk3(docs: Docs) -> tuple[dict[str, Any], dict[str, Any]]:
    vm = _of(docs, "VirtualMachine")[0]
    vmi = _of(docs, "VirtualMachineInstance")[0]
    return vm["spec"]["template"]["spec"], vmi["spec"]


def _windows(docs: Docs) -> None:
    labels = _of(docs, "VirtualMachine")[0]["metadata"].setdefault("labels", {})
    labels["os.template.kubevirt.io/windows2k22"] = "true"


def _rename_disk(docs: Docs) -> None:
    """The root disk and its volume renamed in the spec (same DataVolume), bus changed."""
    spec, _ = _dsk3(docs)
    spec["domain"]["devices"]["disks"][0].update(name="system", disk={"bus": "sata"})
    next(v for v in spec["volumes"] if v["name"] == "root")["name"] = "system"


def _rename_nic(docs: Docs) -> None:
    """The first interface renamed in the spec (same MAC), model changed."""
    spec, _ = _dsk3(docs)
    spec["domain"]["devices"]["interfaces"][0].update(name="nic0", model="e1000e")
    next(n for n in spec["networks"] if n["name"] == "default")["name"] = "nic0"


def _vmi_disks_mapping(docs: Docs) -> None:
    _, vmi = _dsk3(docs)
    vmi["domain"]["devices"]["disks"] = {"root": {"disk": {"bus": "virtio"}}}


def _vmi_finished(docs: Docs) -> None:
    spec, _ = _dsk3(docs)
    spec["domain"]["devices"]["disks"][0]["disk"]["bus"] = "sata"
    _of(docs, "VirtualMachineInstance")[0].setdefault("status", {})["phase"] = "Succeeded"


def _cdrom_only(docs: Docs) -> None:
    _windows(docs)
    spec, vmi = _dsk3(docs)
    for side in (spec, vmi):
        side["domain"]["devices"]["disks"].append({"name": "virtio-win", "cdrom": {"bus": "sata"}})
        side["volumes"].append(
            {
                "name": "virtio-win",
                "containerDisk": {"image": "quay.io/kubevirt/virtio-container-disk"},
            }
        )
    spec["domain"]["devices"]["disks"][-1]["cdrom"]["bus"] = "scsi"


@pytest.mark.parametrize(
    ("edit", "status", "severity"),
    [
        (_rename_disk, "FAIL", "medium"),
        (lambda d: (_windows(d), _rename_disk(d)), "FAIL", "high"),
        (_rename_nic, "FAIL", "medium"),
        (_vmi_disks_mapping, "ERROR", None),
        (_vmi_finished, "NOT_APPLICABLE", None),
        (_cdrom_only, "FAIL", "medium"),
    ],
)
def test_running_hardware_pairs_devices_and_rates_them(
    tmp_path: Path, edit: Any, status: str, severity: str | None
) -> None:
    """Red team (helper-27) on RR-DSK-003: a disk or NIC renamed in the spec is paired with
    the running one by its DataVolume or MAC (a bus or model change hid behind the rename);
    VMI disks that are no list are ERROR (they passed); a VMI that has finished runs nothing
    (N/A, not high); a Windows cdrom's bus is no boot disk's (medium)."""
    fixture = "RR-DSK-003/pass.yaml"
    docs = _docs(fixture)
    edit(docs)
    finding = _finding(_complete(tmp_path, fixture, docs), "RR-DSK-003")
    assert finding["status"] == status, finding["message"]
    if severity:
        assert finding["severity"] == severity


def test_a_lun_takes_the_preferred_lun_bus_not_the_disk_bus() -> None:
    """KubeVirt applies preferredLunBus to LUNs (preferredDiskBus to disks only): a LUN the
    VM leaves to its preference runs on scsi, which RR-DSK-003 took for a change."""
    from auditor.inventory.vmspec import read_vm_spec

    vm = {
        "metadata": {"name": "v", "namespace": "n"},
        "spec": {
            "template": {
                "spec": {
                    "domain": {"devices": {"disks": [{"name": "l", "lun": {}}]}},
                    "volumes": [{"name": "l", "persistentVolumeClaim": {"claimName": "c"}}],
                }
            }
        },
    }
    pref = {"spec": {"devices": {"preferredDiskBus": "virtio", "preferredLunBus": "scsi"}}}
    disk = read_vm_spec(vm, pref).disks[0]
    assert (disk.bus, disk.bus_from) == ("scsi", "preference")


@pytest.mark.parametrize(
    ("hostname", "vm_name", "selected", "status"),
    [
        ("db01", None, "db01", "FAIL"),
        ("db01", None, "vm1", "NOT_APPLICABLE"),
        (None, "vm1.internal", "vm1", "FAIL"),
    ],
)
def test_the_launcher_label_is_the_vm_s_hostname(
    tmp_path: Path, hostname: str | None, vm_name: str | None, selected: str, status: str
) -> None:
    """vm.kubevirt.io/name on the launcher pod is the VMI's spec.hostname, else its name up
    to the first dot (red team: a Service selecting it was missed, READY; one selecting the
    VM's name matched no pod yet failed)."""
    fixture = "RR-NET-003/fail-service-outside-backup.yaml"
    docs = _docs(fixture)
    vm = _of(docs, "VirtualMachine")[0]
    if hostname:
        vm["spec"]["template"]["spec"]["hostname"] = hostname
    if vm_name:
        vm["metadata"]["name"] = vm_name
        for vmi in _of(docs, "VirtualMachineInstance"):
            vmi["metadata"]["name"] = vm_name
        for doc in docs:  # what the VM owns names it (an owner of another UID is named: fz34)
            for ref in doc["metadata"].get("ownerReferences") or []:
                if ref.get("kind") == "VirtualMachine" and ref.get("name") == "vm1":
                    ref["name"] = vm_name
    _of(docs, "Service")[0]["spec"]["selector"] = {"vm.kubevirt.io/name": selected}
    report = _complete(tmp_path, fixture, docs)
    finding = _finding(report, "RR-NET-003", vm=vm["metadata"]["name"])
    assert finding["status"] == status, finding["message"]


@pytest.mark.parametrize("value", ["0", 0.0, [0], True])
def test_a_restored_item_count_of_another_type_is_named(tmp_path: Path, value: Any) -> None:
    """status.progress.itemsRestored as "0", 0.0 or a list passed RR-RST-001 with nothing
    named (red team); the Restore is named and the drill check cannot pass on it."""
    fixture = "RR-RST-001/pass.yaml"
    docs = _docs(fixture)
    _of(docs, "Restore")[0]["status"]["progress"] = {"itemsRestored": value, "totalItems": 3}
    report = _complete(tmp_path, fixture, docs)
    assert _named(report, "Restore", "status.progress.itemsRestored")
    assert _finding(report, "RR-RST-001")["status"] != "PASS"


def test_a_backup_named_as_another_s_cut_form_gets_none_of_its_items(tmp_path: Path) -> None:
    """Red team: a Backup named exactly as Velero's cut form of a longer Backup's name owns
    its labelled items; they are not filed under the long one too."""
    from auditor.inventory.index import velero_label

    fixture = "RR-BKP-004/pass-snapshot-contents-without-counters.yaml"
    docs = _docs(fixture)
    newest = next(b for b in _of(docs, "Backup") if b["metadata"]["name"] == "daily-20261130")
    long_name = "daily-20261130-" + "x" * 60
    short = copy.deepcopy(newest)
    short["metadata"]["name"] = velero_label(long_name)
    short["metadata"]["creationTimestamp"] = short["status"]["startTimestamp"] = (
        "2026-11-27T01:00:00Z"
    )
    short["status"]["completionTimestamp"] = "2026-11-27T01:15:00Z"
    newest["metadata"]["name"] = long_name
    for content in _of(docs, "VolumeSnapshotContent"):
        labels = content["metadata"]["labels"]
        if labels["velero.io/backup-name"] == "daily-20261130":
            labels["velero.io/backup-name"] = velero_label(long_name)
    finding = _finding(_complete(tmp_path, fixture, [*docs, short]), "RR-BKP-004")
    assert long_name in finding["message"]
    assert finding["status"] != "PASS", finding["message"]


@pytest.mark.parametrize(
    ("kind", "path", "value", "check"),
    [
        ("VirtualMachineInstance", ("spec", "domain"), "junk", "RR-DSK-003"),
        ("VirtualMachineInstance", ("spec", "domain", "devices"), "junk", "RR-DSK-003"),
        (
            "VirtualMachine",
            ("spec", "template", "spec", "domain", "devices", "autoattachPodInterface"),
            "yes",
            "RR-NIC-001",
        ),
    ],
)
def test_running_devices_or_the_pod_interface_switch_of_another_type_are_named(
    tmp_path: Path, kind: str, path: tuple[str, ...], value: Any, check: str
) -> None:
    """Mutations seed 4001: a VMI whose spec.domain or devices was a string, and a VM whose
    autoattachPodInterface was 'yes', changed verdicts with nothing named."""
    fixture = "RR-DSK-003/pass.yaml"
    docs = _docs(fixture)
    _set(_of(docs, kind)[0], path, value)
    report = _complete(tmp_path, fixture, docs)
    assert _named(report, kind, ".".join(path))
    assert _finding(report, check)["status"] == "ERROR"


@pytest.mark.parametrize("how", ["as-is", "no-plugin-config-label", "two-configmaps"])
def test_velero_reads_one_plugin_configmap_for_the_class_mapping(tmp_path: Path, how: str) -> None:
    """Velero finds its change-storage-class map with the selector velero.io/plugin-config,
    velero.io/change-storage-class=RestoreItemAction, and fails every PVC restore when two
    match (GetPluginConfig). The auditor honoured a map without the plugin-config label, and
    merged two (red team, helper-28: READY both times)."""
    fixture = "RR-STG-003/pass-mapped-by-configmap.yaml"
    docs = _docs(fixture)
    config = _of(docs, "ConfigMap")[0]
    if how == "no-plugin-config-label":
        del config["metadata"]["labels"]["velero.io/plugin-config"]
    if how == "two-configmaps":
        other = copy.deepcopy(config)
        other["metadata"]["name"] = "another-class-map"
        other["data"] = {"thin": "thin-csi"}
        docs.append(other)
    finding = _finding(_complete(tmp_path, fixture, docs), "RR-STG-003")
    assert finding["status"] == ("PASS" if how == "as-is" else "FAIL"), finding["message"]


def test_the_rpo_counts_from_a_backup_s_start(tmp_path: Path) -> None:
    """Red team (helper-28): a data-mover Backup that started at 01:00 and finished its upload
    at 05:00 holds data from about 01:00, yet passed a 4 h RPO at 06:00 ("1.0 h old"):
    the age was counted from completion. It counts from the start now."""
    fixture = "RR-BKP-002/pass.yaml"
    docs = _docs(fixture)
    newest = max(_of(docs, "Backup"), key=lambda b: b["status"]["startTimestamp"])
    newest["status"]["completionTimestamp"] = "2026-11-30T05:00:00Z"
    report = _complete(tmp_path, fixture, docs)
    finding = _finding(report, "RR-BKP-002")
    assert finding["evidence"]["age_hours"] == pytest.approx(5.0, abs=0.01)
    assert finding["evidence"]["started"] == newest["status"]["startTimestamp"]


def test_a_recycled_volume_without_a_copy_has_lost_its_data(tmp_path: Path) -> None:
    """Recycle scrubs the volume on release, as Delete removes it: a disk on a Recycle PV with
    no copy passed RR-STG-001 as if Retain (red team, helper-28)."""
    fixture = "RR-STG-001/fail-delete-no-copy.yaml"
    docs = _docs(fixture)
    for pv in _of(docs, "PersistentVolume"):
        pv["spec"]["persistentVolumeReclaimPolicy"] = "Recycle"
    assert _finding(_complete(tmp_path, fixture, docs), "RR-STG-001")["status"] == "FAIL"


def test_a_guest_that_has_shut_down_is_not_running_without_its_agent(tmp_path: Path) -> None:
    """A VMI in phase Succeeded (the guest shut itself down) runs nothing: RR-BKP-011 is N/A,
    not 'runs without a connected guest agent' (red team, helper-28)."""
    fixture = "RR-BKP-011/fail-no-agent.yaml"
    docs = _docs(fixture)
    _of(docs, "VirtualMachineInstance")[0].setdefault("status", {})["phase"] = "Succeeded"
    assert _finding(_complete(tmp_path, fixture, docs), "RR-BKP-011")["status"] == "NOT_APPLICABLE"


@pytest.mark.parametrize(
    ("volume", "excluded", "status"),
    [
        (
            {"name": "tools", "containerDisk": {"image": "r/t", "imagePullSecret": "pull"}},
            "secrets",
            "FAIL",
        ),
        (
            {"name": "sa", "serviceAccount": {"serviceAccountName": "app-sa"}},
            "serviceaccounts",
            "FAIL",
        ),
        ({"name": "sa", "serviceAccount": {"serviceAccountName": "app-sa"}}, None, "PASS"),
        # every namespace gets its default ServiceAccount anew
        (
            {"name": "sa", "serviceAccount": {"serviceAccountName": "default"}},
            "serviceaccounts",
            "NOT_APPLICABLE",
        ),
    ],
)
def test_pull_secrets_and_service_accounts_are_references(
    tmp_path: Path, volume: dict[str, Any], excluded: str | None, status: str
) -> None:
    """Red team (helper-28): a containerDisk's imagePullSecret and a serviceAccount volume's
    account, left out by the Backup's excludedResources, were unseen by RR-BKP-012 (N/A,
    READY); the restored launcher cannot pull the image or run as the account."""
    fixture = "RR-BKP-012/na-no-references.yaml"
    docs = _docs(fixture)
    vm = _of(docs, "VirtualMachine")[0]
    vm["spec"]["template"]["spec"]["volumes"].append(volume)
    vm["spec"]["template"]["spec"]["domain"]["devices"]["disks"].append(
        {"name": volume["name"], "disk": {"bus": "virtio"}}
        if "containerDisk" in volume
        else {"name": volume["name"], "disk": {}}
    )
    if excluded:
        for backup in _of(docs, "Backup"):
            backup["spec"].setdefault("excludedResources", []).append(excluded)
    finding = _finding(_complete(tmp_path, fixture, docs), "RR-BKP-012")
    assert finding["status"] == status, finding["message"]


def test_a_standalone_vmi_is_listed_as_not_audited(tmp_path: Path) -> None:
    """A VirtualMachineInstance that no VirtualMachine owns runs and is backed up, but the
    auditor rates VirtualMachines: the report lists it among what it did not audit (red team:
    it was in no list)."""
    fixture = "RR-DSK-003/pass.yaml"
    docs = _docs(fixture)
    assert "(no VirtualMachine)" not in str(_complete(tmp_path / "a", fixture, docs)["cluster"])
    lonely = copy.deepcopy(_of(docs, "VirtualMachineInstance")[0])
    lonely["metadata"] = {"name": "lonely-vmi", "namespace": "app", "uid": "uid-lonely"}
    report = _complete(tmp_path / "b", fixture, [*docs, lonely])
    skipped = report["cluster"]["skipped"]
    assert skipped["kubevirt.io/v1 VirtualMachineInstance (no VirtualMachine)"] == 1
    assert [v["name"] for v in report["vms"]] == ["vm1"]


@pytest.mark.parametrize("policy", ["vm-backup-policy", {"kind": "configmap"}, ["x"]])
def test_an_unreadable_resource_policy_is_named(tmp_path: Path, policy: Any) -> None:
    """A Backup's spec.resourcePolicy must be a {kind, name} reference; anything else is
    named, and the Backup proves nothing (it is unread, never a policy-free Backup)."""
    fixture = "RR-BKP-004/error-resource-policy-unread.yaml"
    docs = _docs(fixture)
    for b in _of(docs, "Backup"):
        b["spec"]["resourcePolicy"] = policy
    report = _complete(tmp_path, fixture, docs)
    assert _named(report, "Backup", "spec.resourcePolicy")
    assert _finding(report, "RR-BKP-004")["status"] in ("ERROR", "FAIL")
    assert next(v for v in report["vms"] if v["name"] == "vm1")["readiness"] != "READY"


def test_a_vmi_boot_order_that_is_no_integer_is_named(tmp_path: Path) -> None:
    """Which disk the running guest boots from cannot be told: RR-DSK-003 names the field
    and gives ERROR (mutation seed 4441: its verdict changed, unnamed)."""
    fixture = "RR-DSK-003/pass.yaml"
    docs = _docs(fixture)
    _of(docs, "VirtualMachineInstance")[0]["spec"]["domain"]["devices"]["disks"][0]["bootOrder"] = (
        "x7"
    )
    finding = _finding(_complete(tmp_path, fixture, docs), "RR-DSK-003")
    assert finding["status"] == "ERROR"
    assert "spec.domain.devices.disks[0].bootOrder" in finding["message"]


def test_a_null_creation_time_of_a_restore_is_named(tmp_path: Path) -> None:
    fixture = "RR-RST-002/pass-in-place.yaml"
    docs = _docs(fixture)
    _of(docs, "Restore")[0]["metadata"]["creationTimestamp"] = None
    assert _named(_complete(tmp_path, fixture, docs), "Restore", "metadata.creationTimestamp")


def test_an_empty_storage_class_is_valid_not_malformed(tmp_path: Path) -> None:
    """storageClassName "" is Kubernetes' "no class" (static binding only): not named as
    malformed (it made the VM UNKNOWN); a disk copied by snapshot is provisioned anew on
    restore, which such a claim never is, so RR-STG-003 fails."""
    fixture = "RR-STG-003/fail-empty-class-reprovisioned.yaml"
    report = _complete(tmp_path, fixture, _docs(fixture))
    assert not [p for p in report["collection_problems"] if "storageClassName" in str(p)]
    finding = _finding(report, "RR-STG-003")
    assert finding["status"] == "FAIL"
    assert 'storageClassName is ""' in finding["message"]


@pytest.mark.parametrize(
    ("change", "held"),
    [
        (None, True),
        # the labels name a Restore that is not there: nothing says the object was in it
        (lambda docs: _of(docs, "Restore")[0]["metadata"].update(name="another-restore"), False),
        # a copy mapped from another namespace was never in a Backup under this one
        (
            lambda docs: _of(docs, "Restore")[0]["spec"].update(namespaceMapping={"prod": "app"}),
            False,
        ),
        # the Backup the labels name does not take the object's namespace
        (
            lambda docs: _of(docs, "Backup")[1]["spec"].update(includedNamespaces=["other"]),
            False,
        ),
    ],
)
def test_restore_labels_prove_only_an_in_place_restore(
    tmp_path: Path, change: Any, held: bool
) -> None:
    """A VM and PVCs an in-place Restore recreated (labels velero.io/backup-name and
    velero.io/restore-name) are the objects that Backup held; labels alone are not (red team:
    they made a VM created after every Backup READY)."""
    fixture = "RR-RST-002/fail-in-place-new-uuid-windows.yaml"
    docs = _docs(fixture)
    assert _of(docs, "Backup")[1]["metadata"]["name"] == "daily-20261128"
    if change is not None:
        change(docs)
    points = _finding(_complete(tmp_path, fixture, docs), "RR-BKP-005")["evidence"]["backups"]
    assert ("daily-20261128" in points) is held, points


@pytest.mark.parametrize("kind", ["Schedule", "Backup"])
def test_a_ttl_beyond_go_s_range_is_named_not_a_crash(tmp_path: Path, kind: str) -> None:
    """Go's time.Duration holds about 2562047 h; a longer ttl overflowed Python's timedelta
    and the run died with a traceback (red team)."""
    fixture = "RR-BKP-006/pass.yaml"
    docs = _docs(fixture)
    obj = _of(docs, kind)[0]
    (obj["spec"]["template"] if kind == "Schedule" else obj["spec"])["ttl"] = "300000000000h"
    report = _complete(tmp_path, fixture, docs)
    field = "spec.template.ttl" if kind == "Schedule" else "spec.ttl"
    assert _named(report, kind, field)


def _audit_with(
    tmp_path: Path, fixture: str, docs: Docs, unavailable: str | None = None
) -> dict[str, Any]:
    """Audit ``docs`` under the fixture's whole header (settings too), and ``unavailable``."""
    from tests.test_check_fixtures import audit_fixture

    header = [ln for ln in (FIXTURES / fixture).read_text().splitlines() if ln.startswith("# ")]
    if unavailable:
        header.append(f"# unavailable: {unavailable}")
    path = tmp_path / "c.yaml"
    text = "\n".join(header) + "\n" + yaml.safe_dump_all(docs)
    path.write_text(text)
    return audit_fixture(path)


def test_an_unread_dpa_list_never_drops_the_plugin_s_refusal(tmp_path: Path) -> None:
    """With the DataProtectionApplication list forbidden or not exported, whether the kubevirt
    plugin runs is unknown: its refusals still apply (red team: the VM became READY)."""
    fixture = "RR-BKP-001/fail-plugin-refuses-running-vm-under-star-resources.yaml"
    docs = [d for d in _docs(fixture) if d["kind"] != "DataProtectionApplication"]
    report = _audit_with(tmp_path, fixture, docs, "DataProtectionApplication")
    assert _finding(report, "RR-BKP-001")["status"] == "FAIL"


def test_an_unreadable_dpa_leaves_the_node_agent_unknown(tmp_path: Path) -> None:
    """A DPA that cannot be read may be the one that does not deploy the node-agent: a
    data-mover copy is then unknown, never captured (mutation seed 7777: READY)."""
    fixture = "RR-BKP-004/fail-data-mover-node-agent-disabled.yaml"
    docs = _docs(fixture)
    _of(docs, "DataProtectionApplication")[0]["metadata"] = "junk"
    finding = _finding(_complete(tmp_path, fixture, docs), "RR-BKP-004")
    assert finding["status"] == "ERROR", finding["message"]


def test_an_off_cluster_copy_is_unknown_while_routes_are_unread(tmp_path: Path) -> None:
    """A Route of this cluster may serve the BackupStorageLocation's host: with the Routes
    unread, RR-BKP-007 cannot pass (red team: READY)."""
    fixture = "RR-BKP-007/fail-minio-route-of-cluster.yaml"
    docs = [d for d in _docs(fixture) if d["kind"] != "Route"]
    finding = _finding(_audit_with(tmp_path, fixture, docs, "Route"), "RR-BKP-007")
    assert finding["status"] == "ERROR", finding["message"]
    assert "Routes were not read" in finding["message"]


@pytest.mark.parametrize("config", [{"s3Url": 12345}, {"s3Url": ["http://minio.minio.svc"]}, ["x"]])
def test_an_unreadable_s3_url_is_named_and_unknown(tmp_path: Path, config: Any) -> None:
    fixture = "RR-BKP-007/fail-minio-service-in-cluster.yaml"
    docs = _docs(fixture)
    _of(docs, "BackupStorageLocation")[0]["spec"]["config"] = config
    report = _audit_with(tmp_path, fixture, docs)
    assert _finding(report, "RR-BKP-007")["status"] == "ERROR"
    assert _named(report, "BackupStorageLocation", "spec.config") or _named(
        report, "BackupStorageLocation", "spec.config.s3Url"
    )


def test_retention_is_unknown_while_a_schedule_is_unread(tmp_path: Path) -> None:
    """An unread Schedule may cover the VM with a short ttl: RR-BKP-006 cannot pass on the
    older, longer-kept Backups alone (red team: READY with the Schedule list missing)."""
    fixture = "RR-BKP-006/fail-schedule-ttl-shortened.yaml"
    docs = [d for d in _docs(fixture) if d["kind"] != "Schedule"]
    finding = _finding(_audit_with(tmp_path, fixture, docs, "Schedule"), "RR-BKP-006")
    assert finding["status"] == "ERROR", finding["message"]
    docs = _docs(fixture)
    _of(docs, "Schedule")[0]["spec"]["template"] = "junk"
    assert _finding(_complete(tmp_path / "junk", fixture, docs), "RR-BKP-006")["status"] == "ERROR"


@pytest.mark.parametrize(
    ("entry", "taken"),
    [("virtualmachines.", False), ("VirtualMachines.", False), ("vm.", False), ("vms.v1", True)],
)
def test_a_filter_entry_with_a_trailing_dot_names_the_resource(entry: str, taken: bool) -> None:
    """Velero splits an entry at its first dot and resolves an empty group in every API
    group: ``virtualmachines.`` excludes VMs (red team: they stayed in, READY)."""
    from auditor.scope import Scope

    scope = Scope.from_spec({"excludedResources": [entry]})
    assert scope.resource_included("virtualmachines", "VirtualMachine", "kubevirt.io") is taken


@pytest.mark.parametrize(
    ("path", "value", "field"),
    [
        (("status", "conditions"), {"type": "RestartRequired"}, "status.conditions"),
        (
            ("status", "conditions"),
            [{"type": "RestartRequired", "status": "true"}],
            "status.conditions[0].status",
        ),
        (
            ("spec", "template", "spec", "domain", "machine", "type"),
            42,
            "spec.template.spec.domain.machine.type",
        ),
    ],
)
def test_what_a_restart_would_change_is_named_when_unreadable(
    tmp_path: Path, path: tuple[str, ...], value: Any, field: str
) -> None:
    """A RestartRequired condition or a machine type RR-DSK-003 cannot read is named and the
    check is ERROR (red team: read as 'no pending change', PASS)."""
    fixture = "RR-DSK-003/fail-restart-required.yaml"
    docs = _docs(fixture)
    _set(_of(docs, "VirtualMachine")[0], path, value)
    report = _complete(tmp_path, fixture, docs)
    assert _finding(report, "RR-DSK-003")["status"] == "ERROR"
    assert _named(report, "VirtualMachine", field), report["collection_problems"]


def _restore_case(tmp_path: Path, change: Any) -> dict[str, Any]:
    fixture = "RR-RST-001/pass.yaml"
    docs = _docs(fixture)
    change(docs)
    return _finding(_complete(tmp_path, fixture, docs), "RR-RST-001")


def test_a_restore_that_failed_validation_hides_no_drill(tmp_path: Path) -> None:
    """A Restore in FailedValidation never ran: a newer one (naming a Backup that never
    existed) no longer makes the good drill before it look failed (red team: AT_RISK)."""

    def typo(docs: Docs) -> None:
        bad = copy.deepcopy(_of(docs, "Restore")[0])
        bad["metadata"].update(name="restore-typo", creationTimestamp="2026-11-29T09:00:00Z")
        bad["spec"]["backupName"] = "no-such-backup"
        bad["status"] = {"phase": "FailedValidation", "validationErrors": ["backup not found"]}
        docs.append(bad)

    assert _restore_case(tmp_path, typo)["status"] == "PASS"


def test_a_restore_after_the_audit_instant_proves_nothing_yet(tmp_path: Path) -> None:
    def later(docs: Docs) -> None:
        r = _of(docs, "Restore")[0]
        r["metadata"]["creationTimestamp"] = "2026-11-30T06:30:00Z"
        r["status"].update(
            startTimestamp="2026-11-30T06:30:01Z", completionTimestamp="2026-11-30T06:40:00Z"
        )

    finding = _restore_case(tmp_path, later)
    assert finding["status"] == "FAIL" and "No restore test" in finding["message"]


def test_a_drill_of_a_gone_backup_before_the_disk_existed_proves_no_disk(tmp_path: Path) -> None:
    """With its Backup gone, a drill is judged on its filters; a PVC created after the drill
    began was in no Backup it read (red team: PASS)."""

    def newer(docs: Docs) -> None:
        backup = _of(docs, "Restore")[0]["spec"]["backupName"]
        docs[:] = [
            d for d in docs if not (d["kind"] == "Backup" and d["metadata"]["name"] == backup)
        ]
        for pvc in _of(docs, "PersistentVolumeClaim"):
            pvc["metadata"]["creationTimestamp"] = "2026-11-29T20:00:00Z"

    assert _restore_case(tmp_path, newer)["status"] == "FAIL"


def test_a_backup_that_completed_before_it_started_is_named(tmp_path: Path) -> None:
    fixture = "RR-BKP-002/pass.yaml"
    docs = _docs(fixture)
    newest = max(_of(docs, "Backup"), key=lambda b: b["status"]["startTimestamp"])
    newest["status"]["completionTimestamp"] = "2026-11-29T01:06:00Z"
    report = _complete(tmp_path, fixture, docs)
    assert _named(report, "Backup", "status.completionTimestamp")
    # its data counts from the earlier instant: a day old, not five hours (red team: READY)
    assert _finding(report, "RR-BKP-002")["status"] == "FAIL"


@pytest.mark.parametrize("where", ["vmi-restarted", "template-only"])
def test_an_opt_in_the_running_pod_may_have_had_leaves_the_copy_unknown(
    tmp_path: Path, where: str
) -> None:
    """A VMI started after the Backup, or the VM template alone, lists the disks in
    backup.velero.io/backup-volumes: the pod that ran then may have too, so whether Velero
    snapshotted the Block disks is unknown (red team: READY)."""
    fixture = "RR-BKP-004/fail-fs-backup-opt-in-skips-block-disks.yaml"
    docs = _docs(fixture)
    vmi = _of(docs, "VirtualMachineInstance")[0]
    if where == "vmi-restarted":
        vmi["metadata"]["creationTimestamp"] = "2026-11-30T04:00:00Z"
    else:
        annotations = vmi["metadata"].pop("annotations")
        _of(docs, "VirtualMachine")[0]["spec"]["template"]["metadata"]["annotations"] = annotations
    assert _finding(_complete(tmp_path, fixture, docs), "RR-BKP-004")["status"] == "ERROR"


def test_the_plugin_judges_a_vm_as_it_ran_when_the_backup_began(tmp_path: Path) -> None:
    """A VM stopped now, whose Ready condition turned False after the Backup began, was
    running then: the kubevirt plugin refused it under includedResources '*' (red team:
    READY because it is stopped today)."""
    fixture = "RR-BKP-001/pass-stopped-vm-with-datavolume-templates-under-star-resources.yaml"
    docs = _docs(fixture)
    vm = _of(docs, "VirtualMachine")[0]
    vm.setdefault("status", {})["conditions"] = [
        {"type": "Ready", "status": "False", "lastTransitionTime": "2026-11-30T05:00:00Z"}
    ]
    assert _finding(_complete(tmp_path / "late", fixture, docs), "RR-BKP-001")["status"] == "FAIL"
    vm["status"]["conditions"][0]["lastTransitionTime"] = "2026-11-01T00:00:00Z"
    assert _finding(_complete(tmp_path / "early", fixture, docs), "RR-BKP-001")["status"] == "PASS"


def test_references_are_unknown_under_an_unread_resource_policy(tmp_path: Path) -> None:
    """A resource policy's include/exclude policy may leave the VM's Secrets out; the
    auditor does not read it (red team: RR-BKP-012 PASS)."""
    fixture = "RR-BKP-012/pass-secret-in-scope.yaml"
    docs = _docs(fixture)
    for b in _of(docs, "Backup"):
        b["spec"]["resourcePolicy"] = {"kind": "configmap", "name": "policy"}
    finding = _finding(_complete(tmp_path, fixture, docs), "RR-BKP-012")
    assert finding["status"] == "ERROR" and "resource policy" in finding["message"]


def test_a_platform_check_cannot_pass_over_an_unread_object(tmp_path: Path) -> None:
    """The paused Schedule written 'kind: schedule' is named and unread: RR-PLT-002 cannot
    say every Schedule is active (red team: FAIL -> PASS)."""
    fixture = "RR-PLT-002/fail-paused.yaml"
    docs = _docs(fixture)
    _of(docs, "Schedule")[0]["kind"] = "schedule"
    assert _platform(_complete(tmp_path, fixture, docs), "RR-PLT-002")["status"] == "ERROR"


@pytest.mark.parametrize("differs", [True, False])
def test_an_object_defined_twice_with_different_content_is_unknown(
    tmp_path: Path, differs: bool
) -> None:
    """A second copy of the VM's PersistentVolume, in another file, that says Retain where
    the first says Delete: which one the cluster holds cannot be told, so the VM's checks are
    ERROR (red team: RR-STG-001 FAIL -> PASS, and a VM copy without a disk raised its
    readiness). An identical copy is named as a plain duplicate."""
    fixture = "RR-STG-001/fail-delete-no-copy.yaml"
    docs = _docs(fixture)
    pv = copy.deepcopy(_of(docs, "PersistentVolume")[0])
    if differs:
        pv["spec"]["persistentVolumeReclaimPolicy"] = "Retain"
    from auditor.config import AuditSettings
    from auditor.kinds import BY_KIND
    from auditor.pipeline import audit_data
    from auditor.sources.base import KindState
    from auditor.sources.directory import DirectorySource
    from tests.conftest import AUDIT_AT, report_doc

    (tmp_path / "b-cluster.yaml").write_text(yaml.safe_dump_all(docs))
    (tmp_path / "a-persistentvolumes.yaml").write_text(yaml.safe_dump(pv))
    data = DirectorySource(tmp_path).collect()
    for kind in BY_KIND:  # every kind's list complete, as the fixture test reads them
        if data.states.get(kind) is not KindState.PARTIAL:
            data.states[kind] = KindState.COMPLETE
    report = report_doc(audit_data(data, AuditSettings(), at=AUDIT_AT))
    finding = _finding(report, "RR-STG-001")
    assert finding["status"] == "ERROR", finding["message"]  # a duplicate leaves the list partial
    said = [p["reason"] for p in report["collection_problems"] if "defined twice" in p["reason"]]
    assert said and ("different content" in said[0]) is differs


@pytest.mark.parametrize(
    ("kind", "change", "field"),
    [
        ("Restore", lambda o: o.pop("spec"), "spec"),
        ("Restore", lambda o: o["spec"].pop("backupName"), "spec.backupName"),
        ("Schedule", lambda o: o.update(spec=None), "spec"),
        ("Schedule", lambda o: o["spec"].pop("schedule"), "spec.schedule"),
    ],
)
def test_a_restore_or_schedule_without_its_required_spec_is_named(
    tmp_path: Path, kind: str, change: Any, field: str
) -> None:
    """Velero's API requires a Restore's Backup (or Schedule) name and a Schedule's cron:
    without them the object was read as a drill that took every VM, or a Schedule that runs
    (red team: FAIL -> PASS with nothing named)."""
    fixture = "RR-RST-001/pass.yaml"
    docs = _docs(fixture)
    if kind == "Schedule":
        docs = _docs("RR-PLT-002/fail-paused.yaml")
    change(_of(docs, kind)[0])
    report = _complete(tmp_path, fixture, docs)
    assert _named(report, kind, field), report["collection_problems"]


def test_a_list_item_without_apiversion_or_a_null_items_leaves_its_kind_partial(
    tmp_path: Path,
) -> None:
    """A VM item without apiVersion vanished with the VM list read as complete (exit 0), and
    'items: null' read as an empty list, nothing named (red team)."""
    from auditor.sources.base import KindState
    from auditor.sources.directory import DirectorySource

    vm = {"kind": "VirtualMachine", "metadata": {"name": "vm1", "namespace": "app"}}
    lists = {"virtualmachines": [vm], "backups": None}
    for stem, items in lists.items():
        doc = {"apiVersion": "v1", "kind": "List", "items": items, "metadata": {}}
        (tmp_path / f"{stem}.yaml").write_text(yaml.safe_dump(doc))
    data = DirectorySource(tmp_path).collect()
    assert data.state("VirtualMachine") is KindState.PARTIAL
    assert data.state("Backup") is KindState.PARTIAL
    reasons = {p.field: p for p in data.problems}
    assert reasons["apiVersion"].name == "vm1"
    assert "items is null" in reasons["items"].reason


def test_a_file_system_backup_with_an_empty_snapshot_id_is_no_copy(tmp_path: Path) -> None:
    """Velero completes the PodVolumeBackup of an empty volume with no snapshot ID and a
    restore skips it (pkg/podvolume/util.go): it proves no copy (red team: READY)."""
    fixture = "RR-BKP-004/pass-fs-backup-podvolumebackups.yaml"
    docs = _docs(fixture)
    for pvb in _of(docs, "PodVolumeBackup"):
        pvb["status"]["snapshotID"] = ""
    finding = _finding(_complete(tmp_path, fixture, docs), "RR-BKP-004")
    assert finding["status"] == "ERROR" and "snapshotID is empty" in finding["message"]


def test_a_backup_that_backed_up_no_item_holds_no_vm(tmp_path: Path) -> None:
    """status.progress.itemsBackedUp=0 is Velero's own count: the Backup holds nothing, as a
    drill with itemsRestored=0 restored nothing (red team: READY)."""
    fixture = "RR-BKP-001/pass.yaml"
    docs = _docs(fixture)
    for b in _of(docs, "Backup"):
        b["status"]["progress"] = {"itemsBackedUp": 0, "totalItems": 0}
    finding = _finding(_complete(tmp_path, fixture, docs), "RR-BKP-001")
    assert finding["status"] == "FAIL" and "itemsBackedUp=0" in finding["message"]


def test_a_pinned_revision_of_unknown_name_is_named_not_dropped(tmp_path: Path) -> None:
    """A null controllerRevisionRef name made the left-out revision vanish: READY (mutation
    seed 5417). It is named and RR-BKP-012 is ERROR."""
    fixture = "RR-BKP-012/fail-pinned-revision-excluded.yaml"
    docs = _docs(fixture)
    _set(
        _of(docs, "VirtualMachine")[0],
        ("status", "instancetypeRef", "controllerRevisionRef", "name"),
        None,
    )
    report = _complete(tmp_path, fixture, docs)
    assert _finding(report, "RR-BKP-012")["status"] == "ERROR"
    assert _named(report, "VirtualMachine", "status.instancetypeRef.controllerRevisionRef.name")


def test_an_unread_snapshot_class_leaves_a_classless_pvc_unknown(tmp_path: Path) -> None:
    """A VolumeSnapshotClass whose driver is junk is unread; the PVC it may have snapshotted
    is unknown, not 'failed', so its Backup's errors are not accounted for (mutation seed
    5417: UNKNOWN -> AT_RISK)."""
    fixture = "RR-BKP-003/error-one-failed-snapshot-counted-once.yaml"
    docs = _docs(fixture)
    _of(docs, "VolumeSnapshotClass")[0]["driver"] = 42
    report = _complete(tmp_path, fixture, docs)
    assert next(v for v in report["vms"] if v["name"] == "vm1")["readiness"] == "UNKNOWN"


def test_a_disk_target_that_is_no_mapping_is_named(tmp_path: Path) -> None:
    """A disk's ``disk: junk`` read as KubeVirt's default bus: RR-DSK-003 FAIL -> PASS
    (mutation seed 5521). It is named and the check is ERROR."""
    fixture = "RR-DSK-003/fail-disk-bus-changed-while-running.yaml"
    docs = _docs(fixture)
    _of(docs, "VirtualMachine")[0]["spec"]["template"]["spec"]["domain"]["devices"]["disks"][0][
        "disk"
    ] = "junk"
    report = _complete(tmp_path, fixture, docs)
    assert _finding(report, "RR-DSK-003")["status"] == "ERROR"
