"""Red-team round rt27: new variants of the shared bug cases' kinds (a restore that fails or
loses identity while the audit says READY), each held to the finding its evidence allows,
beside the healthy shape, which keeps its verdict.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.test_evidence_gaps import _complete, _docs, _finding

Docs = list[dict[str, Any]]

#: vm1 runs BIOS (no bootloader set, so KubeVirt's amd64 default), no TPM: RR-FW-002 N/A.
BIOS = "RR-FW-002/na-bios.yaml"


def _vm(report: dict[str, Any], name: str = "vm1") -> dict[str, Any]:
    return next(v for v in report["vms"] if v["name"] == name)


def _of(docs: Docs, kind: str) -> dict[str, Any]:
    return next(d for d in docs if d["kind"] == kind)


def _on_arm64(docs: Docs, *, vm_arch: str | None, vmi: bool = True) -> Docs:
    """BIOS with the VM (and, as KubeVirt's arm64 defaults write it, its VMI) on arm64:
    the VMI gets ``bootloader.efi.secureBoot: false`` and the ``virt`` machine type."""
    vm = _of(docs, "VirtualMachine")
    tspec = vm["spec"]["template"]["spec"]
    tspec["domain"]["machine"]["type"] = "virt"
    if vm_arch is not None:
        tspec["architecture"] = vm_arch
    out = []
    for d in docs:
        if d["kind"] == "VirtualMachineInstance":
            if not vmi:
                continue
            d["spec"]["architecture"] = "arm64"
            d["spec"]["domain"]["machine"]["type"] = "virt"
            d["spec"]["domain"]["firmware"]["bootloader"] = {"efi": {"secureBoot": False}}
        out.append(d)
    if not vmi:
        vm["spec"]["runStrategy"] = "Halted"
    return out


def _kubevirt(default_arch: str) -> dict[str, Any]:
    return {
        "apiVersion": "kubevirt.io/v1",
        "kind": "KubeVirt",
        "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
        "spec": {"configuration": {"developerConfiguration": {"featureGates": []}}},
        "status": {
            "defaultArchitecture": default_arch,
            "observedKubeVirtVersion": "v1.6.0",
            "phase": "Deployed",
        },
    }


# -- an arm64 VM without a bootloader boots UEFI -----------------------------------------


@pytest.mark.parametrize(
    ("vm_arch", "vmi", "cluster_default"),
    [
        ("arm64", True, None),  # the VM's own architecture (KubeVirt's VM webhook sets it)
        (None, True, None),  # only the running VMI says arm64
        (None, False, "arm64"),  # stopped: the cluster's default architecture
    ],
)
def test_an_arm64_vm_without_a_bootloader_boots_efi_with_volatile_nvram(
    tmp_path: Path, vm_arch: str | None, vmi: bool, cluster_default: str | None
) -> None:
    """kubevirt pkg/defaults/arm64.go setDefaultArm64Bootloader: an arm64 VMI with no
    bootloader gets ``efi: {secureBoot: false}`` (BIOS is refused on arm64,
    pkg/virt-api/webhooks/arm64.go). Its NVRAM, not persistent, is lost at every restore;
    read as BIOS, RR-FW-002 was NOT_APPLICABLE and the VM READY."""
    docs = _on_arm64(_docs(BIOS), vm_arch=vm_arch, vmi=vmi)
    if cluster_default:
        docs.append(_kubevirt(cluster_default))
    report = _complete(tmp_path, BIOS, docs)
    finding = _finding(report, "RR-FW-002")
    assert (finding["status"], finding["severity"]) == ("FAIL", "medium"), finding["message"]
    assert finding["evidence"]["bootloader"] == "efi"
    assert finding["evidence"]["efi_persistent"] is False
    assert _vm(report)["readiness"] != "READY"
    card = _vm(report)["recovery_card"]["firmware"]
    assert (card["bootloader"], card["secure_boot"]) == ("efi", False)
    if vmi:
        # the VMI boots the EFI the spec resolves to: no firmware change named
        dsk = _finding(report, "RR-DSK-003")
        assert dsk["evidence"]["bootloader"] is None, dsk["message"]


def test_an_arm64_vm_with_persistent_efi_needs_no_bootloader_change(tmp_path: Path) -> None:
    """The healthy arm64 shape: ``efi.persistent: true`` (secureBoot unset, so false on
    arm64) is no longer judged volatile."""
    docs = _on_arm64(_docs(BIOS), vm_arch="arm64")
    vm = _of(docs, "VirtualMachine")
    vm["spec"]["template"]["spec"]["domain"]["firmware"]["bootloader"] = {
        "efi": {"persistent": True}
    }
    report = _complete(tmp_path, BIOS, docs)
    finding = _finding(report, "RR-FW-002")
    assert finding["evidence"]["bootloader"] == "efi"
    assert finding["evidence"]["efi_persistent"] is True
    assert "not persistent" not in finding["message"]


@pytest.mark.parametrize("arch", ["amd64", None])
def test_an_amd64_or_unknown_architecture_without_a_bootloader_stays_bios(
    tmp_path: Path, arch: str | None
) -> None:
    """Out of the rule: on amd64 (or where nothing names the architecture) no bootloader is
    SeaBIOS, and RR-FW-002 has nothing to persist."""
    docs = _docs(BIOS)
    if arch:
        _of(docs, "VirtualMachine")["spec"]["template"]["spec"]["architecture"] = arch
        docs.append(_kubevirt("arm64"))  # the cluster default does not override the VM's
    report = _complete(tmp_path, BIOS, docs)
    assert _finding(report, "RR-FW-002")["status"] == "NOT_APPLICABLE"


# -- the Backups Velero makes from now on ------------------------------------------------

#: vm1 in namespace app, two daily Backups of Schedule velero/daily holding it and its disks.
HEALTHY = "RR-BKP-001/pass.yaml"


def _first_action(report: dict[str, Any], check_id: str) -> str:
    cause = next(c for c in _vm(report)["root_causes"] if check_id in c["check_ids"])
    action: str = cause["first_action"]
    return action


def test_a_namespace_labelled_after_its_backups_drops_out_of_the_next_ones(
    tmp_path: Path,
) -> None:
    """velero pkg/controller/backup_controller.go prepareBackupRequest appends every namespace
    labelled velero.io/exclude-from-backup=true to the excludedNamespaces of each Backup it
    prepares: today's Backups hold the VM, the next scheduled one will not. It was READY with
    the fact said only beside RR-BKP-001's PASS; now a medium finding whose first action
    removes that label."""
    docs = _docs(HEALTHY)
    _of(docs, "Namespace")["metadata"].setdefault("labels", {})["velero.io/exclude-from-backup"] = (
        "true"
    )
    report = _complete(tmp_path, HEALTHY, docs)
    assert _finding(report, "RR-BKP-001")["status"] == "PASS"
    finding = _finding(report, "RR-BKP-013")
    assert (finding["status"], finding["severity"]) == ("FAIL", "medium"), finding["message"]
    assert finding["evidence"]["excluded_by"] == {
        "kind": "Namespace",
        "name": "app",
        "label": "velero.io/exclude-from-backup=true",
    }
    assert finding["evidence"]["rpo_breach_at"] == "2026-12-01T01:00:00Z"
    assert _vm(report)["readiness"] == "AT_RISK"
    assert "oc label namespace app velero.io/exclude-from-backup-" in _first_action(
        report, "RR-BKP-013"
    )


def _schedule(docs: Docs) -> dict[str, Any]:
    return _of(docs, "Schedule")


def test_a_schedule_whose_selector_no_longer_matches_the_vm_drops_it(tmp_path: Path) -> None:
    """A Schedule's Backup spec is its template (velero pkg/builder/backup_builder.go
    FromSchedule): a template given a labelSelector the VM does not match (or a VM relabelled)
    takes it in no later Backup, while the Backups it took hold it."""
    docs = _docs(HEALTHY)
    _schedule(docs)["spec"]["template"]["labelSelector"] = {"matchLabels": {"backup": "gold"}}
    report = _complete(tmp_path, HEALTHY, docs)
    finding = _finding(report, "RR-BKP-013")
    assert (finding["status"], finding["severity"]) == ("FAIL", "medium"), finding["message"]
    assert finding["evidence"]["schedules"] == [
        {
            "schedule": "velero/daily",
            "why": "its template's labelSelector/orLabelSelectors no longer match the VM's labels",
            "filter": "labels",
        }
    ]
    action = _first_action(report, "RR-BKP-013")
    assert "labelSelector/orLabelSelectors match the labels of VM app/vm1" in action
    assert "oc edit schedule daily -n velero" in action
    assert _vm(report)["readiness"] == "AT_RISK"


def test_a_schedule_whose_resources_leave_out_virtualmachines_drops_it(tmp_path: Path) -> None:
    docs = _docs(HEALTHY)
    _schedule(docs)["spec"]["template"]["excludedResources"] = ["virtualmachines.kubevirt.io"]
    report = _complete(tmp_path, HEALTHY, docs)
    finding = _finding(report, "RR-BKP-013")
    assert finding["status"] == "FAIL", finding["message"]
    assert finding["evidence"]["schedules"][0]["filter"] == "resources"


def test_a_schedule_with_an_unreadable_selector_leaves_it_unknown(tmp_path: Path) -> None:
    """A selector Velero cannot parse says nothing of the next Backups: ERROR, never PASS."""
    docs = _docs(HEALTHY)
    _schedule(docs)["spec"]["template"]["labelSelector"] = {
        "matchExpressions": [{"key": "app", "operator": "Near", "values": ["vm1"]}]
    }
    report = _complete(tmp_path, HEALTHY, docs)
    assert _finding(report, "RR-BKP-013")["status"] in ("ERROR", "FAIL")
    assert _vm(report)["readiness"] != "READY"


def test_another_schedule_that_takes_the_vm_keeps_it_covered(tmp_path: Path) -> None:
    """The healthy move: the VM's Backups came from a Schedule now narrowed, and another
    Schedule takes its namespace: no finding."""
    docs = _docs(HEALTHY)
    sched = _schedule(docs)
    twin = {**sched, "metadata": {**sched["metadata"], "name": "weekly"}}
    twin["spec"] = {**sched["spec"], "template": dict(sched["spec"]["template"])}
    sched["spec"]["template"]["includedNamespaces"] = ["other"]
    docs.append(twin)
    report = _complete(tmp_path, HEALTHY, docs)
    finding = _finding(report, "RR-BKP-013")
    assert finding["status"] == "PASS", finding["message"]
    assert _vm(report)["readiness"] == "READY"


@pytest.mark.parametrize(
    ("template", "why"),
    [
        ({"snapshotVolumes": False}, "has snapshotVolumes: false"),
        # file-system backup never copies the Block-mode disks (velero PR#6680)
        ({"defaultVolumesToFsBackup": True}, "never copies Block-mode volumes"),
        ({"excludedResources": ["persistentvolumeclaims"]}, "leave out persistentvolumeclaims"),
    ],
)
def test_a_schedule_whose_next_backup_copies_no_disk_data_is_named(
    tmp_path: Path, template: dict[str, Any], why: str
) -> None:
    """A Schedule's Backup spec is its template (velero pkg/builder/backup_builder.go
    FromSchedule): a template changed after the Backups captured the disks makes the next ones
    object-only (bug case 17's kind, from now on). It was READY until the RPO passed."""
    docs = _docs(HEALTHY)
    _schedule(docs)["spec"]["template"].update(template)
    report = _complete(tmp_path, HEALTHY, docs)
    assert _finding(report, "RR-BKP-004")["status"] == "PASS"
    finding = _finding(report, "RR-BKP-013")
    assert (finding["status"], finding["severity"]) == ("FAIL", "medium"), finding["message"]
    assert why in finding["message"]
    assert finding["evidence"]["schedules"][0]["schedule"] == "velero/daily"
    assert _vm(report)["readiness"] == "AT_RISK"
    assert "oc edit schedule daily -n velero" in _first_action(report, "RR-BKP-013")


def test_a_schedule_whose_next_backup_matches_its_last_passes(tmp_path: Path) -> None:
    """The healthy shape: the template the Backups were taken with takes the VM and its
    disks the same way next time."""
    report = _complete(tmp_path, HEALTHY, _docs(HEALTHY))
    finding = _finding(report, "RR-BKP-013")
    assert finding["status"] == "PASS", finding["message"]
    assert finding["evidence"]["schedules"] == [{"schedule": "velero/daily", "gaps": []}]


@pytest.mark.parametrize(
    ("edit", "why", "action"),
    [
        (
            {"paused": True},
            "is paused (spec.paused: true)",
            "velero schedule unpause daily -n velero",
        ),
        (
            {"template": {"includedNamespaces": ["app"], "storageLocation": "gone"}},
            "velero/gone, does not exist",
            "spec.template.storageLocation",
        ),
    ],
)
def test_a_schedule_that_makes_no_next_backup_is_named(
    tmp_path: Path, edit: dict[str, Any], why: str, action: str
) -> None:
    """velero pkg/controller/schedule_controller.go skips a paused Schedule, and
    backup_controller.go prepareBackupRequest fails the validation of a Backup whose
    BackupStorageLocation does not exist (or is Unavailable, or ReadOnly): the Backups taken
    hold the VM, none follows. RR-PLT-002 names a paused Schedule on the platform only, so
    the VM stayed READY until the RPO passed."""
    docs = _docs(HEALTHY)
    _schedule(docs)["spec"].update(edit)
    report = _complete(tmp_path, HEALTHY, docs)
    finding = _finding(report, "RR-BKP-013")
    assert (finding["status"], finding["severity"]) == ("FAIL", "medium"), finding["message"]
    assert why in finding["message"]
    assert action in _first_action(report, "RR-BKP-013")
    assert _vm(report)["readiness"] == "AT_RISK"


def test_a_paused_schedule_whose_backups_are_past_the_rpo_is_left_to_the_rpo_check(
    export_doc: dict[str, Any],
) -> None:
    """The shared export's eng-sandbox-weekly is paused and dev-build-01's newest backup is
    15 days old: the gap is open, RR-BKP-002 names it (and the paused Schedule), and RR-BKP-013
    adds nothing."""
    vm = next(v for v in export_doc["vms"] if v["name"] == "dev-build-01")
    found = {f["check_id"]: f for f in vm["findings"]}
    assert found["RR-BKP-002"]["status"] == "FAIL"
    assert "is paused" in found["RR-BKP-002"]["message"]
    assert found["RR-BKP-013"]["status"] == "NOT_APPLICABLE", found["RR-BKP-013"]["message"]


# -- a native snapshot needs its PersistentVolume in the Backup ------------------------------


def _with_scratch_on_nfs(docs: Docs) -> Docs:
    """``docs`` plus a PVC of no VM, ``scratch``, on an in-tree NFS PersistentVolume in
    namespace app: the Backup's one native snapshot may be its."""
    pvc = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {
            "name": "scratch",
            "namespace": "app",
            "uid": "uid-pvc-app-scratch",
            "creationTimestamp": "2026-01-10T10:00:00Z",
        },
        "spec": {
            "accessModes": ["ReadWriteMany"],
            "resources": {"requests": {"storage": "5Gi"}},
            "storageClassName": "",
            "volumeMode": "Filesystem",
            "volumeName": "pv-app-scratch",
        },
        "status": {"phase": "Bound"},
    }
    pv = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": "pv-app-scratch"},
        "spec": {
            "claimRef": {"name": "scratch", "namespace": "app", "uid": "uid-pvc-app-scratch"},
            "nfs": {"server": "nfs.example.com", "path": "/exports/scratch"},
            "persistentVolumeReclaimPolicy": "Retain",
            "storageClassName": "",
        },
    }
    return [*docs, pvc, pv]


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        ("label", "carries velero.io/exclude-from-backup=true"),
        ("excludedResources", "excludedResources leaves out"),
        ("includeClusterResources", "includeClusterResources: false leaves out"),
    ],
)
def test_a_native_snapshot_disk_whose_pv_the_backup_leaves_out_is_not_captured(
    tmp_path: Path, edit: str, why: str
) -> None:
    """velero pkg/backup/item_backupper.go: a volume snapshotter's snapshot is taken only
    while Velero backs up the PersistentVolume item (takePVSnapshot), which it skips when the
    PV is labelled velero.io/exclude-from-backup=true or excluded as a cluster-scoped
    resource (pkg/util/collections/includes_excludes.go ShouldExclude). The one native
    snapshot the Backup counts is another PV's; read as vm1-data's, the VM was READY."""
    from tests.test_red_team_rt22 import BKP_PASS, _data_disk_on_nfs

    docs = _with_scratch_on_nfs(_data_disk_on_nfs((1, 1)))
    for d in docs:
        if edit == "label" and d["metadata"].get("name") == "pv-app-vm1-data":
            d["metadata"]["labels"] = {"velero.io/exclude-from-backup": "true"}
        if d["kind"] == "Backup" and edit == "excludedResources":
            d["spec"]["excludedResources"] = ["persistentvolumes"]
        if d["kind"] == "Backup" and edit == "includeClusterResources":
            d["spec"]["includeClusterResources"] = False
    report = _complete(tmp_path, BKP_PASS, docs)
    finding = _finding(report, "RR-BKP-004")
    assert (finding["status"], finding["severity"]) == ("FAIL", "high"), finding["message"]
    assert "pv-app-vm1-data" in finding["message"] and why in finding["message"]
    assert _vm(report)["readiness"] == "NOT_READY"


def test_a_native_snapshot_disk_whose_pv_is_in_the_backup_stays_captured(tmp_path: Path) -> None:
    """The healthy shape: includedResources naming persistentvolumes (and the PVCs) keeps the
    PV, and its native snapshot, in the Backup."""
    from tests.test_red_team_rt22 import BKP_PASS, _data_disk_on_nfs

    docs = _data_disk_on_nfs((1, 1))
    report = _complete(tmp_path, BKP_PASS, docs)
    assert _finding(report, "RR-BKP-004")["status"] == "PASS"


def test_a_snapshot_class_deleted_since_the_backups_stops_the_next_ones(tmp_path: Path) -> None:
    """The Backups' CSI snapshots outlive their VolumeSnapshotClass, but Velero selects a
    class for every new snapshot (velero pkg/util/csi/volume_snapshot.go): with none left for
    the driver the next Backups hold no disk data. RR-PLT-003 named it on the platform only;
    the VM stayed READY until the RPO passed."""
    docs = [d for d in _docs(HEALTHY) if d["kind"] != "VolumeSnapshotClass"]
    report = _complete(tmp_path, HEALTHY, docs)
    assert _finding(report, "RR-BKP-004")["status"] == "PASS"
    finding = _finding(report, "RR-BKP-013")
    assert (finding["status"], finding["severity"]) == ("FAIL", "medium"), finding["message"]
    assert (
        "finds no VolumeSnapshotClass it can select for driver csi.example.com"
        in (finding["message"])
    )
    assert _vm(report)["readiness"] == "AT_RISK"


def test_a_schedule_s_next_backup_is_made_once_per_audit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every VM a Schedule covers asks for its next Backup (RR-BKP-013); it is the same for
    all of them, so it is made once per Schedule, not once per VM (about 2 % of the per-VM
    work at 10,000 VMs)."""
    from collections import Counter

    from auditor.config import AuditSettings
    from auditor.inventory.index import ScheduleView
    from auditor.pipeline import audit_data
    from auditor.sources.directory import DirectorySource
    from bench.generate import generate
    from tests.conftest import AUDIT_AT

    made: Counter[str] = Counter()
    real = ScheduleView.next_backup

    def counted(self: ScheduleView, *a: Any, **kw: Any) -> Any:
        made[f"{self.namespace}/{self.name}"] += 1
        return real(self, *a, **kw)

    monkeypatch.setattr(ScheduleView, "next_backup", counted)
    monkeypatch.setenv("AUDITOR_AUDIT_WORKER", "0")
    generate(tmp_path / "e", 80, seed=5)
    report = audit_data(DirectorySource(tmp_path / "e").collect(), AuditSettings(), at=AUDIT_AT)
    judged = [
        f
        for v in report.vms
        for f in v.findings
        if f.check_id == "RR-BKP-013" and f.status.value in ("PASS", "FAIL")
    ]
    assert len(judged) > len(made) > 0  # several VMs per Schedule were judged
    assert set(made.values()) == {1}
