"""False-alarm round fp24: the rules that landed in rt18/rt22, probed with healthy shapes
real clusters produce. Each test holds a healthy (or better-evidenced) shape to the verdict
its evidence allows, beside the rule's true positive, which keeps its finding.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.test_evidence_gaps import _complete, _docs, _finding

Docs = list[dict[str, Any]]

#: vm1 in namespace app, two daily Completed Backups of app holding it and its disks: READY.
HEALTHY = "RR-BKP-001/pass.yaml"


def _vm(report: dict[str, Any], name: str = "vm1") -> dict[str, Any]:
    return next(v for v in report["vms"] if v["name"] == name)


def _label_app(docs: Docs, value: str = "true") -> Docs:
    for d in docs:
        if d["kind"] == "Namespace" and d["metadata"]["name"] == "app":
            d["metadata"].setdefault("labels", {})["velero.io/exclude-from-backup"] = value
    return docs


# -- a namespace labelled velero.io/exclude-from-backup after its Backups -------------------


def test_a_namespace_labelled_after_its_backups_is_still_in_them(tmp_path: Path) -> None:
    """Velero (v1.10+, velero#2413, https://github.com/vmware-tanzu/velero/pull/5178) appends
    each labelled namespace to the Backup request's spec.excludedNamespaces in
    prepareBackupRequest and patches the Backup with it before it runs
    (pkg/controller/backup_controller.go). Completed Backups whose excludedNamespaces do not
    name the namespace were taken before the label (or by a Velero before 1.10, which left
    the namespace's contents in): they hold the VM and its disks. The label read now made
    RR-BKP-001 FAIL high and the VM NOT_READY."""
    base = _complete(tmp_path / "base", HEALTHY, _docs(HEALTHY))
    report = _complete(tmp_path, HEALTHY, _label_app(_docs(HEALTHY)))
    finding = _finding(report, "RR-BKP-001")
    assert finding["status"] == "PASS", finding["message"]
    # the label still leaves the namespace out of every later Backup: said beside the PASS
    assert "leaves it out of every Backup it prepares from now on" in finding["message"]
    assert finding["evidence"]["namespace_excluded_from_now_on"] is True
    assert _finding(report, "RR-BKP-004")["status"] == "PASS"
    # not NOT_READY: the Backups hold it; AT_RISK from RR-BKP-013 alone (rt27), as the next
    # Backups will not hold it
    assert _vm(base)["readiness"] == "READY"
    assert _vm(report)["readiness"] == "AT_RISK"
    later = _finding(report, "RR-BKP-013")
    assert (later["status"], later["severity"]) == ("FAIL", "medium")


def test_a_backup_taken_with_the_label_lists_the_namespace_and_leaves_the_vm_out(
    tmp_path: Path,
) -> None:
    """The true positive as Velero writes it: the Backups carry the labelled namespace in
    spec.excludedNamespaces even when they include it by name (Velero's exclusion wins), and
    the finding names the label."""
    docs = _label_app(_docs(HEALTHY))
    for d in docs:
        if d["kind"] == "Backup":
            d["spec"]["excludedNamespaces"] = ["app"]
    report = _complete(tmp_path, HEALTHY, docs)
    finding = _finding(report, "RR-BKP-001")
    assert (finding["status"], finding["severity"]) == ("FAIL", "high"), finding["message"]
    assert "velero.io/exclude-from-backup=true" in finding["message"]
    assert _vm(report)["readiness"] == "NOT_READY"


@pytest.mark.parametrize("phase", ["New", None])
def test_a_backup_not_yet_prepared_takes_the_label_read_now(
    tmp_path: Path, phase: str | None
) -> None:
    """A Backup Velero has not prepared yet will exclude the labelled namespace: it is no
    copy of the VM (and, not Completed, no restore point either)."""
    docs = _label_app(_docs(HEALTHY))
    for d in docs:
        if d["kind"] == "Backup":
            if phase is None:
                d.pop("status", None)
            else:
                d["status"] = {"phase": phase}
    report = _complete(tmp_path, HEALTHY, docs)
    assert _finding(report, "RR-BKP-001")["status"] != "PASS"
    assert _vm(report)["readiness"] != "READY"


# -- RR-BKP-004 counter shortfall on Velero 1.12.0-1.12.1 -----------------------------------

#: vm1 with two disk PVCs and a persistent-state PVC, each CSI-snapshotted by the newest
#: Backup (3 CSI snapshots, 3 item operations, 3 labelled ready contents).
BKP_PASS = "RR-BKP-004/pass.yaml"


def _csi_completed_understated(completed: int, operations: int) -> Docs:
    """BKP_PASS as Velero 1.12.0-1.12.1 leaves it: csiVolumeSnapshotsCompleted written before
    the snapshots turned ready (``completed``), the item operations counted as they
    completed (``operations``), and the VolumeSnapshotContents cleaned up after the backup."""
    out: Docs = []
    for d in _docs(BKP_PASS):
        name = d.get("metadata", {}).get("name", "")
        if d["kind"] == "Backup" and name == "daily-20261130":
            d["status"]["csiVolumeSnapshotsCompleted"] = completed
            d["status"]["backupItemOperationsCompleted"] = operations
        if d["kind"] == "VolumeSnapshotContent" and name.startswith("snapcontent-daily-20261130-"):
            continue
        out.append(d)
    return out


def test_csi_completions_written_before_the_snapshots_were_ready_prove_no_missing_disk(
    tmp_path: Path,
) -> None:
    """velero#7047 (https://github.com/vmware-tanzu/velero/issues/7047, OADP-3005) and #7163:
    Velero 1.12.0-1.12.1 wrote csiVolumeSnapshotsCompleted at the end of item backup, before
    the asynchronous VolumeSnapshot operations completed, so a Completed Backup showed fewer
    CSI completions than it took; backupItemOperationsCompleted counted them (fixed in
    1.12.2/1.13, pkg/controller/backup_finalizer_controller.go
    updateCSIVolumeSnapshotsCompleted). The counter shortfall read csiVolumeSnapshotsCompleted
    alone: three completed operations and csiVolumeSnapshotsCompleted=1 made RR-BKP-004 FAIL
    high and the VM NOT_READY. The counters do not say which PVC is in the Backup: UNKNOWN."""
    report = _complete(tmp_path, BKP_PASS, _csi_completed_understated(1, 3))
    finding = _finding(report, "RR-BKP-004")
    assert finding["status"] == "ERROR", finding["message"]
    assert "shortfall" not in finding["evidence"]
    assert _vm(report)["readiness"] == "UNKNOWN"


def test_operations_as_short_as_the_csi_counter_still_leave_a_disk_out(tmp_path: Path) -> None:
    """The rule's true positive holds: one CSI snapshot and one item operation for a VM with
    two disks (and a state PVC) cannot hold both disks."""
    report = _complete(tmp_path, BKP_PASS, _csi_completed_understated(1, 1))
    finding = _finding(report, "RR-BKP-004")
    assert (finding["status"], finding["severity"]) == ("FAIL", "high"), finding["message"]
    assert "at least 1 of them" in finding["message"]
    assert _vm(report)["readiness"] == "NOT_READY"


def _csi_counters_unwritten(**status: int | None) -> Docs:
    """BKP_PASS with the newest Backup's status fields set (None: absent) and its
    VolumeSnapshotContents cleaned up."""
    out: Docs = []
    for d in _docs(BKP_PASS):
        name = d.get("metadata", {}).get("name", "")
        if d["kind"] == "Backup" and name == "daily-20261130":
            for key, value in status.items():
                if value is None:
                    d["status"].pop(key, None)
                else:
                    d["status"][key] = value
        if d["kind"] == "VolumeSnapshotContent" and name.startswith("snapcontent-daily-20261130-"):
            continue
        out.append(d)
    return out


@pytest.mark.parametrize(
    "status",
    [
        # velero#7047: csiVolumeSnapshotsCompleted 0 (or absent) at completion
        {"csiVolumeSnapshotsCompleted": 0},
        {"csiVolumeSnapshotsCompleted": None},
        # velero#7163: neither CSI counter populated
        {"csiVolumeSnapshotsCompleted": None, "csiVolumeSnapshotsAttempted": None},
    ],
)
def test_unwritten_csi_counters_beside_completed_operations_prove_no_failure(
    tmp_path: Path, status: dict[str, int | None]
) -> None:
    """velero#7047 (https://github.com/vmware-tanzu/velero/issues/7047) and #7163 (Velero
    1.12.0-1.12.1, OADP 1.3.0): the CSI counters were written before the asynchronous
    VolumeSnapshot operations completed, or not at all, while backupItemOperationsCompleted
    counted them. "completed none of its 3 csiVolumeSnapshots" (or "records no csi-snapshot
    at all") made every disk failed and the VM NOT_READY; the operations may be the
    snapshots, so the counters prove nothing either way: UNKNOWN."""
    report = _complete(tmp_path, BKP_PASS, _csi_counters_unwritten(**status))
    finding = _finding(report, "RR-BKP-004")
    assert finding["status"] == "ERROR", finding["message"]
    assert {p["status"] for p in finding["evidence"]["pvcs"]} == {"unknown"}
    assert _vm(report)["readiness"] == "UNKNOWN"


def test_csi_attempts_whose_operations_failed_stay_failed(tmp_path: Path) -> None:
    """The true positive holds: no CSI completion and no completed operation (every one
    failed) is no copy (fixture RR-BKP-004/fail-csi-attempts-none-completed)."""
    docs = _csi_counters_unwritten(
        csiVolumeSnapshotsCompleted=0, backupItemOperationsCompleted=0, backupItemOperationsFailed=3
    )
    report = _complete(tmp_path, BKP_PASS, docs)
    finding = _finding(report, "RR-BKP-004")
    assert (finding["status"], finding["severity"]) == ("FAIL", "high"), finding["message"]
    assert _vm(report)["readiness"] == "NOT_READY"


# -- CSI PVs snapshotted natively while Velero's CSI support is off ------------------------

#: vm1's disks on CSI PVs (csi.example.com), the DPA with the aws plugin and no csi plugin
#: or EnableCSI flag, the Backups recording no CSI snapshot.
CSI_OFF = "RR-BKP-004/fail-velero-csi-disabled.yaml"


def _native(completed: int, driver: str = "ebs.csi.aws.com") -> Docs:
    """The fixture with its disks on ``driver`` (the AWS EBS CSI driver, whose PVs the aws
    plugin's volume snapshotter snapshots, by default) and ``completed`` native snapshots in
    each Backup."""
    docs = [
        yaml.safe_load(yaml.safe_dump(d).replace("csi.example.com", driver)) for d in _docs(CSI_OFF)
    ]
    for d in docs:
        if d["kind"] == "Backup":
            d["status"]["volumeSnapshotsAttempted"] = completed
            d["status"]["volumeSnapshotsCompleted"] = completed
    return docs


def test_native_snapshots_of_csi_pvs_with_csi_support_off_are_no_proof_of_absence(
    tmp_path: Path,
) -> None:
    """velero#4758 / #4797 (https://github.com/vmware-tanzu/velero/issues/4758): since 1.8
    the AWS, GCP and Azure volume snapshotters snapshot CSI PVs of their drivers, and Velero
    skips a CSI PV's native snapshot only when its CSI feature is on (pkg/backup/
    item_backupper.go: "Skipping snapshot of persistent volume ..., because it's handled by
    CSI plugin"). A DPA with the aws plugin and no csi plugin, whose Backups completed a
    native snapshot for every disk, made each disk "not attempted" and the VM NOT_READY; the
    native counters may be these disks': UNKNOWN."""
    report = _complete(tmp_path, CSI_OFF, _native(3))
    finding = _finding(report, "RR-BKP-004")
    assert finding["status"] == "ERROR", finding["message"]
    assert "native snapshot" in finding["message"]
    assert _vm(report)["readiness"] == "UNKNOWN"


@pytest.mark.parametrize("completed", [0, 1])
def test_too_few_native_snapshots_with_csi_support_off_still_fail(
    tmp_path: Path, completed: int
) -> None:
    """The true positives hold: no native snapshot at all (the fixture's own shape), or one
    for a VM with two disks, leaves a disk out."""
    report = _complete(tmp_path, CSI_OFF, _native(completed))
    finding = _finding(report, "RR-BKP-004")
    assert (finding["status"], finding["severity"]) == ("FAIL", "high"), finding["message"]
    assert _vm(report)["readiness"] == "NOT_READY"


# -- RR-DSK-003 firmware: a preference with preferredUseBios and preferredEfi ---------------

DSK_PASS = "RR-DSK-003/pass.yaml"


def test_a_preference_preferring_bios_and_efi_boots_bios_as_kubevirt_applies_it(
    tmp_path: Path,
) -> None:
    """kubevirt pkg/instancetype/preference/apply/firmware.go applyFirmwarePreferences sets
    BIOS for preferredUseBios first and applies preferredEfi only where no bootloader is set
    yet: a VM without its own bootloader whose preference names both runs BIOS. The auditor
    read preferredEfi first, so RR-DSK-003 named a firmware change "bios -> efi" on a VM
    whose running VMI booted exactly what its spec gives it."""
    docs = _docs(DSK_PASS)
    for d in docs:
        if d["kind"] == "VirtualMachine":
            d["spec"]["template"]["spec"]["domain"]["firmware"].pop("bootloader")
            d["spec"]["preference"] = {"kind": "VirtualMachineClusterPreference", "name": "p1"}
        if d["kind"] == "VirtualMachineInstance":
            d["spec"]["domain"]["firmware"]["bootloader"] = {"bios": {}}
            d["spec"]["architecture"] = "amd64"
    docs.append(
        {
            "apiVersion": "instancetype.kubevirt.io/v1beta1",
            "kind": "VirtualMachineClusterPreference",
            "metadata": {"name": "p1"},
            "spec": {"firmware": {"preferredUseBios": True, "preferredEfi": {"persistent": True}}},
        }
    )
    report = _complete(tmp_path, DSK_PASS, docs)
    finding = _finding(report, "RR-DSK-003")
    assert finding["status"] == "PASS", finding["message"]
    # the true positive: the same VMI running EFI while the spec gives BIOS is a change
    for d in docs:
        if d["kind"] == "VirtualMachineInstance":
            d["spec"]["domain"]["firmware"]["bootloader"] = {"efi": {"persistent": True}}
    changed = _complete(tmp_path / "changed", DSK_PASS, docs)
    assert _finding(changed, "RR-DSK-003")["status"] == "FAIL"
    assert "firmware efi -> bios" in _finding(changed, "RR-DSK-003")["message"]


# -- file-system copies of a Velero install the DPA does not configure ----------------------

#: vm1's disks copied by Completed PodVolumeBackups of Backups in namespace velero, the DPA
#: there enabling the kubevirt plugin.
FS_PLUGIN = "RR-BKP-004/fail-fs-backup-launcher-pod-skipped-on-restore.yaml"


def _dpa_in(namespace: str) -> Docs:
    docs = _docs(FS_PLUGIN)
    for d in docs:
        if d["kind"] == "DataProtectionApplication":
            d["metadata"]["namespace"] = namespace
    return docs


def test_a_dpa_in_another_namespace_does_not_say_which_plugins_the_backups_velero_runs(
    tmp_path: Path,
) -> None:
    """The OADP operator deploys Velero, with the DPA's plugins, in the DPA's namespace
    (oadp-operator internal/controller/velero.go ReconcileVeleroDeployment): a DPA in
    openshift-adp says nothing of the Velero in namespace velero that took these Backups.
    Its kubevirt plugin made their file-system copies "failed" and the VM NOT_READY; whether
    the plugin runs there is unknown, as for plain Velero (rt18): UNKNOWN."""
    report = _complete(tmp_path, FS_PLUGIN, _dpa_in("openshift-adp"))
    finding = _finding(report, "RR-BKP-004")
    assert finding["status"] == "ERROR", finding["message"]
    assert "kubevirt plugin" in finding["message"]
    assert _vm(report)["readiness"] == "UNKNOWN"
    # the true positive: the DPA of the Backups' own namespace enables the plugin
    same = _complete(tmp_path / "same", FS_PLUGIN, _dpa_in("velero"))
    assert _finding(same, "RR-BKP-004")["status"] == "FAIL"
    assert _vm(same)["readiness"] == "NOT_READY"
