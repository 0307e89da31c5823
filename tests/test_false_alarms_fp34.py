"""False-alarm round fp34: valid configurations read as malformed or as a gap.

A VM with no disks at all (booting from the network with a NIC ``bootOrder``, or from a
``kernelBoot`` container: kubevirt examples/vmi-kernel-boot.yaml) runs a VMI without
``spec.volumes``: the field is ``omitempty`` (kubevirt staging/src/kubevirt.io/api/core/v1/
types.go ``VirtualMachineInstanceSpec.Volumes``). Each case stands beside the shape that
keeps its finding.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from auditor.inventory.index import ScheduleView
from tests.test_check_fixtures import audit_fixture
from tests.test_evidence_gaps import FIXTURES, _finding, _of
from tests.test_false_alarms_fp30 import _errors, _vm

Docs = list[dict[str, Any]]

#: vm1 in namespace app with disks root, data (DataVolumes vm1-root, vm1-data) and
#: cloudinitdisk, persistent EFI state, two Backups with 3 CSI snapshots each: READY.
FW_PASS = "RR-FW-001/pass.yaml"


def _load(fixture: str) -> tuple[str, Docs]:
    text = (FIXTURES / fixture).read_text()
    header = "\n".join(line for line in text.splitlines() if line.startswith("#"))
    return header, [d for d in yaml.safe_load_all(text) if d]


def _write(tmp_path: Path, header: str, docs: Docs) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "c.yaml"
    path.write_text(header + "\n" + yaml.safe_dump_all(docs, sort_keys=False))
    return path


def _diskless(docs: Docs, boot: str) -> None:
    """vm1 and its VMI without disks and volumes, booting by ``boot`` ("network": the first
    NIC has bootOrder 1; "kernel": a kernelBoot container); its disk PVCs gone, the Backups'
    counters and snapshot contents down to the one persistent-state PVC."""
    vm = _of(docs, "VirtualMachine")[0]["spec"]["template"]["spec"]
    vmi = _of(docs, "VirtualMachineInstance")[0]["spec"]
    for spec in (vm, vmi):
        del spec["domain"]["devices"]["disks"]
        del spec["volumes"]
        if boot == "network":
            spec["domain"]["devices"]["interfaces"][0]["bootOrder"] = 1
        else:
            spec["domain"]["firmware"]["kernelBoot"] = {
                "container": {
                    "image": "quay.io/kubevirt/alpine-ext-kernel-boot-demo:v1.6.0",
                    "initrdPath": "/boot/initramfs-virt",
                    "kernelPath": "/boot/vmlinuz-virt",
                },
                "kernelArgs": "console=ttyS0",
            }
    for kind in ("PersistentVolumeClaim", "PersistentVolume"):
        for o in _of(docs, kind):
            if "persistent-state" not in o["metadata"]["name"]:
                docs.remove(o)
    for b in _of(docs, "Backup"):
        name = b["metadata"]["name"]
        b["status"].update(
            csiVolumeSnapshotsAttempted=1,
            csiVolumeSnapshotsCompleted=1,
            backupItemOperationsAttempted=1,
            backupItemOperationsCompleted=1,
        )
        contents = [
            c
            for c in _of(docs, "VolumeSnapshotContent")
            if c["metadata"]["labels"]["velero.io/backup-name"] == name
        ]
        for c in contents[1:]:
            docs.remove(c)


@pytest.mark.parametrize("boot", ["network", "kernel"])
def test_a_diskless_vm_runs_a_vmi_without_volumes(tmp_path: Path, boot: str) -> None:
    """A running diskless VM's VMI has no ``spec.volumes``: it was 'missing (a VMI started
    from a VM lists its volumes)', the audit incomplete, RR-DSK-002/003 and RR-BKP-011 ERROR
    and the VM UNKNOWN. Nothing is missing: no disk needs a volume."""
    header, docs = _load(FW_PASS)
    _diskless(docs, boot)
    report = audit_fixture(_write(tmp_path, header, docs))
    assert not [p for p in report["collection_problems"] if p.get("field") == "spec.volumes"]
    assert report["run"]["complete"] is True
    assert _errors(report) == []
    assert _vm(report)["readiness"] == "READY"
    dsk = _finding(report, "RR-DSK-002")
    assert dsk["status"] == "PASS", dsk["message"]
    assert dsk["evidence"]["volumes"] == []
    stg = _finding(report, "RR-STG-002")
    assert stg["status"] == "FAIL" and stg["severity"] == "info", stg
    assert "(no disks)" in stg["message"], stg["message"]
    assert stg["evidence"]["volume_types"] == []


def test_a_vmi_with_disks_and_no_volumes_stays_malformed(tmp_path: Path) -> None:
    """Kept: a VMI that lists disks but no ``spec.volumes`` is damaged (KubeVirt admits no
    disk without its volume): named, and the checks reading it ERROR."""
    header, docs = _load(FW_PASS)
    del _of(docs, "VirtualMachineInstance")[0]["spec"]["volumes"]
    report = audit_fixture(_write(tmp_path, header, docs))
    problem = next(p for p in report["collection_problems"] if p.get("field") == "spec.volumes")
    assert problem["kind"] == "VirtualMachineInstance"
    assert "missing while 3 disk(s)" in problem["reason"], problem["reason"]
    assert _finding(report, "RR-DSK-002")["status"] == "ERROR"
    assert _vm(report)["readiness"] == "UNKNOWN"


def test_a_vmi_with_a_filesystem_and_no_volumes_stays_malformed(tmp_path: Path) -> None:
    """Kept: a virtiofs filesystem needs its volume as a disk does."""
    header, docs = _load(FW_PASS)
    _diskless(docs, "network")
    vmi = _of(docs, "VirtualMachineInstance")[0]["spec"]
    vmi["domain"]["devices"]["filesystems"] = [{"name": "shared", "virtiofs": {}}]
    report = audit_fixture(_write(tmp_path, header, docs))
    assert [p for p in report["collection_problems"] if p.get("field") == "spec.volumes"]
    assert _finding(report, "RR-DSK-002")["status"] == "ERROR"


# -- a Schedule's annotations reach the Backups it makes ----------------------------------

CLASS_BY_DRIVER = "velero.io/csi-volumesnapshot-class_csi.example.com"


def _two_unlabelled_classes(docs: Docs) -> None:
    """The fixture's VolumeSnapshotClass ``snapclass`` loses its velero label and a second
    class for the same driver appears: Velero then selects neither on its own (velero
    pkg/util/csi/volume_snapshot.go ``GetVolumeSnapshotClassForStorageClass``)."""
    snapclass = _of(docs, "VolumeSnapshotClass")[0]
    del snapclass["metadata"]["labels"]
    other = {**snapclass, "metadata": {"name": "snapclass-fast"}}
    docs.append(other)
    for b in _of(docs, "Backup"):  # the Backups the Schedule made carry its annotation
        b["metadata"]["annotations"] = {CLASS_BY_DRIVER: "snapclass"}


def test_a_schedule_annotation_picks_the_snapshot_class_of_its_next_backup(
    tmp_path: Path,
) -> None:
    """Velero copies a Schedule's annotations onto every Backup it makes (velero
    pkg/builder/backup_builder.go ``FromSchedule``), and a Backup annotated
    ``velero.io/csi-volumesnapshot-class_<driver>`` snapshots with that class. The next
    backup was built without them: RR-BKP-013 FAIL 'finds no VolumeSnapshotClass it can
    select' and a READY VM AT_RISK."""
    header, docs = _load(FW_PASS)
    _two_unlabelled_classes(docs)
    _of(docs, "Schedule")[0]["metadata"]["annotations"] = {CLASS_BY_DRIVER: "snapclass"}
    report = audit_fixture(_write(tmp_path, header, docs))
    bkp = _finding(report, "RR-BKP-013")
    assert bkp["status"] == "PASS", bkp["message"]
    assert _vm(report)["readiness"] == "READY"


def test_an_annotation_in_the_schedule_template_is_not_copied(tmp_path: Path) -> None:
    """Kept: ``spec.template.metadata`` holds labels only (velero
    pkg/apis/velero/v1/backup_types.go ``Metadata``): an annotation there reaches no Backup,
    so the next one still finds no class for the driver."""
    header, docs = _load(FW_PASS)
    _two_unlabelled_classes(docs)
    _of(docs, "Schedule")[0]["spec"]["template"]["metadata"] = {
        "annotations": {CLASS_BY_DRIVER: "snapclass"}
    }
    report = audit_fixture(_write(tmp_path, header, docs))
    bkp = _finding(report, "RR-BKP-013")
    assert bkp["status"] == "FAIL", bkp["message"]
    assert "no VolumeSnapshotClass it can select for driver csi.example.com" in bkp["message"]


def test_the_next_backup_carries_the_schedule_labels() -> None:
    """``FromSchedule``: the template's labels when that map is set (even empty), else the
    Schedule's own; the schedule-name label always; the Schedule's annotations."""
    at = datetime(2026, 12, 1, tzinfo=UTC)
    obj: dict[str, Any] = {
        "metadata": {
            "name": "daily",
            "namespace": "velero",
            "labels": {"velero.kubevirt.io/metadataBackup": "true", "team": "db"},
            "annotations": {CLASS_BY_DRIVER: "snapclass"},
        },
        "spec": {"schedule": "0 1 * * *", "template": {"includedNamespaces": ["app"]}},
    }
    nxt = ScheduleView.parse(obj).next_backup(at)
    assert nxt.labels == {
        "velero.kubevirt.io/metadataBackup": "true",
        "team": "db",
        "velero.io/schedule-name": "daily",
    }
    assert nxt.annotations == {CLASS_BY_DRIVER: "snapclass"}
    obj["spec"]["template"]["metadata"] = {"labels": {"tier": "gold"}}
    nxt = ScheduleView.parse(obj).next_backup(at)
    assert nxt.labels == {"tier": "gold", "velero.io/schedule-name": "daily"}
    obj["spec"]["template"]["metadata"] = {"labels": {}}
    assert ScheduleView.parse(obj).next_backup(at).labels == {"velero.io/schedule-name": "daily"}


# -- RR-STG-001 names each PVC's own reason for an unknown copy ----------------------------


def test_an_unknown_copy_is_not_blamed_on_a_pv_that_was_read(tmp_path: Path) -> None:
    """A BackupStorageLocation whose validation is off (``validationFrequency: 0s``) and
    last validated weeks ago leaves every backup's data unevidenced. RR-STG-001 said the
    disks' 'reclaim policy could not be read (PV and StorageClass not found)', though both
    were read (Delete): it names the reason that holds."""
    header, docs = _load(FW_PASS)
    bsl = _of(docs, "BackupStorageLocation")[0]
    bsl["spec"]["validationFrequency"] = "0s"
    bsl["status"]["lastValidationTime"] = "2026-10-01T00:00:00Z"
    report = audit_fixture(_write(tmp_path, header, docs))
    stg = _finding(report, "RR-STG-001")
    assert stg["status"] == "ERROR", stg["message"]
    assert "not found" not in stg["message"], stg["message"]
    assert "a backup may hold the data of vm1-root, vm1-data" in stg["message"]
    assert [r["reclaim_policy"] for r in stg["evidence"]["disks"]] == ["Delete", "Delete"]


def test_an_unread_reclaim_policy_is_still_named(tmp_path: Path) -> None:
    """Kept: a disk whose PV and StorageClass are both gone has an unknown reclaim policy,
    named as such."""
    header, docs = _load(FW_PASS)
    docs.remove(next(p for p in _of(docs, "PersistentVolume") if "vm1-data" in str(p)))
    next(p for p in _of(docs, "PersistentVolumeClaim") if p["metadata"]["name"] == "vm1-data")[
        "spec"
    ]["storageClassName"] = "gone-sc"
    report = audit_fixture(_write(tmp_path, header, docs))
    stg = _finding(report, "RR-STG-001")
    assert stg["status"] == "ERROR", stg["message"]
    assert "the reclaim policy of vm1-data could not be read" in stg["message"], stg["message"]


def test_a_vmi_stripped_of_disks_and_volumes_does_not_pass(tmp_path: Path) -> None:
    """Kept: a VMI whose disks and volumes were both deleted while its VM lists three disks
    (no RestartRequired condition) is no diskless machine: which disks the guest runs with
    cannot be told. Before the diskless rule it was malformed (spec.volumes missing); with
    it, RR-DSK-003 passed and the VM was READY (fp34 found; malformed input never improves a
    verdict)."""
    header, docs = _load(FW_PASS)
    spec = _of(docs, "VirtualMachineInstance")[0]["spec"]
    del spec["volumes"]
    del spec["domain"]["devices"]["disks"]
    report = audit_fixture(_write(tmp_path, header, docs))
    dsk = _finding(report, "RR-DSK-003")
    assert dsk["status"] == "ERROR", dsk["message"]
    assert "lists no disk" in dsk["message"], dsk["message"]
    assert _vm(report)["readiness"] == "UNKNOWN"
