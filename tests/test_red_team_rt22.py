"""Red-team round rt22: the shared bug cases' kinds expressed through other fields, each held
to the finding its evidence allows, and the healthy counterpart held to its own.

Each test takes a fixture of the check catalog, changes one thing, and asserts the finding
that must follow: never a finding better than the evidence, never a false alarm.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.test_evidence_gaps import _complete, _docs, _finding

Docs = list[dict[str, Any]]

#: vm1 pinned to a preference revision that sets persistent EFI (the state PVC exists).
PREF_EFI = "RR-FW-002/pass-preference-pinned-revision.yaml"


def _vm(report: dict[str, Any], name: str = "vm1") -> dict[str, Any]:
    return next(v for v in report["vms"] if v["name"] == name)


def _with_preference_firmware(firmware: dict[str, Any]) -> Docs:
    """PREF_EFI with the firmware section of the preference (live and pinned) replaced."""
    docs = _docs(PREF_EFI)
    for d in docs:
        if d["kind"] == "VirtualMachineClusterPreference":
            d["spec"]["firmware"] = firmware
        if d["kind"] == "ControllerRevision":
            d["data"]["spec"]["firmware"] = firmware
    return docs


# -- EFI state through a preference's deprecated switch --------------------------------------


@pytest.mark.parametrize("secure_boot", [True, False, None])
def test_a_preference_s_deprecated_use_efi_boots_efi_with_volatile_nvram(
    tmp_path: Path, secure_boot: bool | None
) -> None:
    """kubevirt pkg/instancetype/preference/apply/firmware.go applyFirmwarePreferences: a
    preference without ``preferredEfi`` whose deprecated ``preferredUseEfi`` is true gives the
    VMI ``bootloader.efi: {}`` (``preferredUseSecureBoot`` its secureBoot): EFI with no
    ``persistent``, so NVRAM (boot entries, enrolled keys) is lost at every restore. Read as
    BIOS, RR-FW-002 was NOT_APPLICABLE and the VM READY."""
    firmware: dict[str, Any] = {"preferredUseEfi": True}
    if secure_boot is not None:
        firmware["preferredUseSecureBoot"] = secure_boot
    report = _complete(tmp_path, PREF_EFI, _with_preference_firmware(firmware))
    finding = _finding(report, "RR-FW-002")
    assert (finding["status"], finding["severity"]) == ("FAIL", "medium"), finding["message"]
    assert finding["evidence"]["bootloader"] == "efi"
    assert finding["evidence"]["efi_persistent"] is False
    assert _vm(report)["readiness"] != "READY"


@pytest.mark.parametrize(
    "firmware",
    [
        {"preferredUseEfi": False},
        # KubeVirt applies preferredUseBios before the deprecated EFI switch
        {"preferredUseBios": True, "preferredUseEfi": True},
    ],
)
def test_a_preference_that_does_not_turn_efi_on_stays_bios(
    tmp_path: Path, firmware: dict[str, Any]
) -> None:
    """Out of the rule: ``preferredUseEfi: false``, or ``preferredUseBios`` beside it, leaves
    the VM on BIOS: RR-FW-002 has nothing to persist."""
    report = _complete(tmp_path, PREF_EFI, _with_preference_firmware(firmware))
    finding = _finding(report, "RR-FW-002")
    assert finding["status"] == "NOT_APPLICABLE", finding["message"]


def test_the_new_preferred_efi_wins_over_the_deprecated_switch(tmp_path: Path) -> None:
    """The healthy shape: ``preferredEfi`` with ``persistent: true`` beside the deprecated
    switch is the EFI KubeVirt applies (it returns before the deprecated ones)."""
    firmware = {"preferredEfi": {"persistent": True, "secureBoot": True}, "preferredUseEfi": True}
    report = _complete(tmp_path, PREF_EFI, _with_preference_firmware(firmware))
    finding = _finding(report, "RR-FW-002")
    assert finding["status"] == "PASS", finding["message"]


def test_a_deprecated_use_efi_of_another_type_is_named(tmp_path: Path) -> None:
    """``preferredUseEfi: "yes"`` (a *bool in KubeVirt's API) says nothing of the firmware:
    named, never read as BIOS."""
    report = _complete(tmp_path, PREF_EFI, _with_preference_firmware({"preferredUseEfi": "yes"}))
    finding = _finding(report, "RR-FW-002")
    assert finding["status"] in ("ERROR", "FAIL"), finding["message"]
    problems = " ".join(str(p) for p in report["collection_problems"])
    assert "preferredUseEfi" in problems


# -- the firmware serial the guest runs with -------------------------------------------------

#: vm1 pins uuid and serial SERIAL-0001; its running VMI has both.
FW_PASS = "RR-FW-001/pass.yaml"


def _firmware(docs: Docs, kind: str) -> dict[str, Any]:
    obj = next(d for d in docs if d["kind"] == kind)
    spec = obj["spec"]["template"]["spec"] if kind == "VirtualMachine" else obj["spec"]
    firmware: dict[str, Any] = spec["domain"]["firmware"]
    return firmware


@pytest.mark.parametrize(
    ("kind", "serial"),
    [
        ("VirtualMachine", None),  # dropped from the spec while the VM ran
        ("VirtualMachine", "SERIAL-0002"),  # changed in the spec
        ("VirtualMachineInstance", None),  # pinned in the spec after the VM started
    ],
)
def test_a_serial_the_guest_does_not_run_with_is_no_pinned_identity(
    tmp_path: Path, kind: str, serial: str | None
) -> None:
    """KubeVirt puts ``firmware.serial`` into the guest's SMBIOS only when set and never
    generates one (kubevirt pkg/virt-launcher/virtwrap/converter/compute/sysinfo.go): a VMI
    that runs with a serial other than the spec's saw the spec change since it started, and
    a restore gives the guest the spec's serial (licences, asset inventories). RR-FW-001
    compared the uuid only and passed."""
    docs = _docs(FW_PASS)
    firmware = _firmware(docs, kind)
    if serial is None:
        del firmware["serial"]
    else:
        firmware["serial"] = serial
    report = _complete(tmp_path, FW_PASS, docs)
    finding = _finding(report, "RR-FW-001")
    assert (finding["status"], finding["severity"]) == ("FAIL", "medium"), finding["message"]
    assert finding["evidence"]["mismatched"] == ["serial"]
    assert "serial" in finding["message"]
    assert _vm(report)["readiness"] != "READY"


def test_a_serial_changed_with_the_uuid_names_both(tmp_path: Path) -> None:
    """Both changed in the spec: one FAIL naming the uuid and the serial."""
    docs = _docs(FW_PASS)
    firmware = _firmware(docs, "VirtualMachine")
    firmware["serial"] = "SERIAL-0002"
    firmware["uuid"] = "3f6d2c1e-8b0a-4f7e-b3c5-6a1d9e2f4b11"
    finding = _finding(_complete(tmp_path, FW_PASS, docs), "RR-FW-001")
    assert finding["status"] == "FAIL", finding["message"]
    assert finding["evidence"]["mismatched"] == ["uuid", "serial"]


@pytest.mark.parametrize("how", ["same", "both-unset", "finished-vmi", "empty-string"])
def test_a_serial_the_guest_runs_with_stays_pinned(tmp_path: Path, how: str) -> None:
    """The healthy shapes: the spec's serial is the running one, neither has one (an unset
    serial stays unset), an empty serial is no serial, or the VMI has finished (nothing
    runs to compare with)."""
    docs = _docs(FW_PASS)
    if how == "both-unset":
        del _firmware(docs, "VirtualMachine")["serial"]
        del _firmware(docs, "VirtualMachineInstance")["serial"]
    elif how == "empty-string":
        del _firmware(docs, "VirtualMachine")["serial"]
        _firmware(docs, "VirtualMachineInstance")["serial"] = ""
    elif how == "finished-vmi":
        del _firmware(docs, "VirtualMachine")["serial"]
        vmi = next(d for d in docs if d["kind"] == "VirtualMachineInstance")
        vmi["status"]["phase"] = "Succeeded"
    finding = _finding(_complete(tmp_path, FW_PASS, docs), "RR-FW-001")
    assert finding["status"] == "PASS", finding["message"]


# -- the firmware the guest booted with ------------------------------------------------------

#: vm1 boots persistent EFI with secure boot, in its spec and its running VMI.
DSK_PASS = "RR-DSK-003/pass.yaml"


def _template(docs: Docs) -> dict[str, Any]:
    vm = next(d for d in docs if d["kind"] == "VirtualMachine")
    template: dict[str, Any] = vm["spec"]["template"]["spec"]
    return template


@pytest.mark.parametrize("how", ["bios", "unset-amd64"])
def test_a_firmware_changed_while_the_vm_runs_is_named(tmp_path: Path, how: str) -> None:
    """KubeVirt boots OVMF for a VMI with ``bootloader.efi`` and SeaBIOS otherwise on amd64
    (kubevirt pkg/virt-launcher/virtwrap/converter/compute/os.go): a spec moved from EFI to
    BIOS while the guest runs restores a guest installed for EFI on BIOS, where its disk has
    no boot code. RR-DSK-003 compared buses, models, boot disk and machine type only and
    passed; RR-FW-002 is not applicable to BIOS, so the VM was READY."""
    docs = _docs(DSK_PASS)
    template = _template(docs)
    if how == "bios":
        template["domain"]["firmware"]["bootloader"] = {"bios": {}}
    else:
        del template["domain"]["firmware"]["bootloader"]
        template["architecture"] = "amd64"
    report = _complete(tmp_path, DSK_PASS, docs)
    finding = _finding(report, "RR-DSK-003")
    assert finding["status"] == "FAIL", finding["message"]
    assert finding["evidence"]["bootloader"] == {"spec": "bios", "running": "efi"}
    assert "firmware efi -> bios" in finding["message"]
    assert "firmware (efi -> bios)" in finding["remediation"]
    assert _vm(report)["readiness"] != "READY"


@pytest.mark.parametrize("how", ["same", "unset-no-architecture", "unset-arm64"])
def test_a_firmware_the_guest_runs_with_is_no_change(tmp_path: Path, how: str) -> None:
    """The healthy shapes: the same EFI in both, or a spec that leaves the bootloader to a
    default the auditor cannot pin (no architecture; arm64, whose default is EFI)."""
    docs = _docs(DSK_PASS)
    template = _template(docs)
    if how != "same":
        del template["domain"]["firmware"]["bootloader"]
    if how == "unset-arm64":
        template["architecture"] = "arm64"
    finding = _finding(_complete(tmp_path, DSK_PASS, docs), "RR-DSK-003")
    assert finding["status"] == "PASS", finding["message"]
    assert finding["evidence"]["bootloader"] is None


# -- a disk on an in-tree PV no CSI snapshot can take ----------------------------------------

#: vm1's root, data and state PVCs CSI-snapshotted by the newest Backup (3 of 3 contents).
BKP_PASS = "RR-BKP-004/pass.yaml"


def _data_disk_on_nfs(native: tuple[int, int] | None) -> Docs:
    """BKP_PASS with vm1-data on an in-tree NFS PersistentVolume (no CSI, no class), the
    Backup's CSI counters and contents for the other two PVCs, and ``native`` as its
    ``volumeSnapshotsAttempted``/``Completed`` (None: Velero omitted them, i.e. 0)."""
    docs = _docs(BKP_PASS)
    out: Docs = []
    for d in docs:
        name = d.get("metadata", {}).get("name")
        if d["kind"] == "PersistentVolumeClaim" and name == "vm1-data":
            d["spec"]["storageClassName"] = ""
            d["spec"]["volumeMode"] = "Filesystem"
        elif d["kind"] == "PersistentVolume" and name == "pv-app-vm1-data":
            del d["spec"]["csi"]
            d["spec"]["nfs"] = {"server": "nfs.example.com", "path": "/exports/vm1-data"}
            d["spec"]["storageClassName"] = ""
        elif d["kind"] == "Backup" and name == "daily-20261130":
            for field in ("csiVolumeSnapshots", "backupItemOperations"):
                d["status"][f"{field}Attempted"] = d["status"][f"{field}Completed"] = 2
            if native is not None:
                d["status"]["volumeSnapshotsAttempted"] = native[0]
                d["status"]["volumeSnapshotsCompleted"] = native[1]
        elif d["kind"] == "VolumeSnapshotContent" and name == "snapcontent-daily-20261130-2":
            continue
        out.append(d)
    return out


def test_a_disk_no_native_snapshot_was_attempted_for_is_not_captured(tmp_path: Path) -> None:
    """velero pkg/backup/item_backupper.go takePVSnapshot: a PV without CSI gets a native
    snapshot only from a volume snapshotter that returns a volume ID for it (none does for
    an in-tree NFS PV: "no applicable volumesnapshotter found"), and Velero counts native
    snapshots in ``volumeSnapshotsAttempted`` (pkg/controller/backup_controller.go). They are
    no VolumeSnapshotContents: the root disk's CSI content labelled with the Backup made the
    NFS data disk "unknown" (RR-BKP-004 ERROR, UNKNOWN) where the Backup attempted no native
    snapshot at all and the disk is in no backup."""
    report = _complete(tmp_path, BKP_PASS, _data_disk_on_nfs(None))
    finding = _finding(report, "RR-BKP-004")
    assert (finding["status"], finding["severity"]) == ("FAIL", "high"), finding["message"]
    pvcs = {p["pvc"]: p for p in finding["evidence"]["pvcs"]}
    assert (pvcs["vm1-data"]["status"], pvcs["vm1-data"]["method"]) == (
        "not_attempted",
        "native-snapshot",
    )
    assert pvcs["vm1-root"]["status"] == "captured"
    assert _vm(report)["readiness"] == "NOT_READY"


def test_native_snapshots_that_all_failed_capture_no_disk(tmp_path: Path) -> None:
    """The same disk with ``volumeSnapshotsAttempted: 1, Completed: 0``: the Backup's one
    native snapshot failed, and a CSI content of another disk is no native snapshot."""
    report = _complete(tmp_path, BKP_PASS, _data_disk_on_nfs((1, 0)))
    finding = _finding(report, "RR-BKP-004")
    assert finding["status"] == "FAIL", finding["message"]
    pvcs = {p["pvc"]: p for p in finding["evidence"]["pvcs"]}
    assert pvcs["vm1-data"]["status"] == "failed"


def test_a_native_snapshot_the_counters_account_for_stays_captured(tmp_path: Path) -> None:
    """The healthy shape: a native snapshot attempted and completed for the one PV without
    CSI keeps the disk captured (a volume snapshotter handled it)."""
    report = _complete(tmp_path, BKP_PASS, _data_disk_on_nfs((1, 1)))
    finding = _finding(report, "RR-BKP-004")
    assert finding["status"] == "PASS", finding["message"]
    assert {p["status"] for p in finding["evidence"]["pvcs"]} == {"captured"}


# -- a network boot device moved ahead of the boot disk --------------------------------------


def _boot_orders(docs: Docs, kind: str, root: int, nic: int | None) -> None:
    obj = next(d for d in docs if d["kind"] == kind)
    spec = obj["spec"]["template"]["spec"] if kind == "VirtualMachine" else obj["spec"]
    devices = spec["domain"]["devices"]
    for disk in devices["disks"]:
        if disk["name"] == "root":
            disk["bootOrder"] = root
        elif disk.get("bootOrder") is not None:
            disk["bootOrder"] = root + 1
    if nic is not None:
        devices["interfaces"][0]["bootOrder"] = nic


def test_a_nic_moved_ahead_of_the_boot_disk_is_named(tmp_path: Path) -> None:
    """An interface's ``bootOrder`` makes it a PXE boot device in the same order as the disks
    (kubevirt pkg/virt-launcher/virtwrap/converter/network/configurator.go): a spec changed
    while the VM runs to boot from the network first restores a guest that boots from
    whatever the network serves. Only disks' orders were compared, and it passed."""
    docs = _docs(DSK_PASS)
    _boot_orders(docs, "VirtualMachine", root=2, nic=1)
    report = _complete(tmp_path, DSK_PASS, docs)
    finding = _finding(report, "RR-DSK-003")
    assert finding["status"] == "FAIL", finding["message"]
    assert finding["evidence"]["boot_disk"] == {"spec": "interface default", "running": "root"}
    assert _vm(report)["readiness"] != "READY"


@pytest.mark.parametrize("how", ["nic-after-disks", "nic-first-in-both"])
def test_a_nic_boot_order_the_guest_runs_with_is_no_change(tmp_path: Path, how: str) -> None:
    """The healthy shapes: a NIC ordered after the boot disk, or a network boot the running
    VMI has too."""
    docs = _docs(DSK_PASS)
    if how == "nic-after-disks":
        _boot_orders(docs, "VirtualMachine", root=1, nic=5)
    else:
        _boot_orders(docs, "VirtualMachine", root=2, nic=1)
        _boot_orders(docs, "VirtualMachineInstance", root=2, nic=1)
    finding = _finding(_complete(tmp_path, DSK_PASS, docs), "RR-DSK-003")
    assert finding["status"] == "PASS", finding["message"]


# -- fewer copies than the VM has disks -------------------------------------------------------


def _csi_counters(completed: int) -> Docs:
    """BKP_PASS with the newest Backup's CSI snapshots (and contents) cut to ``completed``."""
    out: Docs = []
    for d in _docs(BKP_PASS):
        name = d.get("metadata", {}).get("name", "")
        if d["kind"] == "Backup" and name == "daily-20261130":
            for field in ("csiVolumeSnapshots", "backupItemOperations"):
                d["status"][f"{field}Attempted"] = d["status"][f"{field}Completed"] = completed
        cut = d["kind"] == "VolumeSnapshotContent" and name.startswith(
            "snapcontent-daily-20261130-"
        )
        if cut and int(name.rsplit("-", 1)[1]) >= completed:
            continue
        out.append(d)
    return out


def test_fewer_snapshots_than_the_vm_has_disks_leave_a_disk_out(tmp_path: Path) -> None:
    """Velero counts each CSI snapshot it takes (``csiVolumeSnapshotsAttempted`` is the number
    of VolumeSnapshots labelled with the Backup, velero pkg/backup/snapshots.go): one
    snapshot for a VM with two disk PVCs (and its state PVC) cannot hold both disks. Each
    PVC stays ``unknown`` (the count does not say which), but the VM lacks a disk: RR-BKP-004
    was ERROR and the VM UNKNOWN where the bug case's kind (a Completed Backup without the
    disk's data, here the second disk) is NOT_READY."""
    report = _complete(tmp_path, BKP_PASS, _csi_counters(1))
    finding = _finding(report, "RR-BKP-004")
    assert (finding["status"], finding["severity"]) == ("FAIL", "high"), finding["message"]
    assert "at least 1 of them" in finding["message"]
    assert {p["status"] for p in finding["evidence"]["pvcs"]} == {"unknown"}
    assert _vm(report)["readiness"] == "NOT_READY"


def test_as_many_snapshots_as_disks_still_say_nothing_of_which(tmp_path: Path) -> None:
    """Out of the rule: two snapshots for two disks and a state PVC may be the two disks, so
    the counters prove no missing disk (ERROR, never FAIL or PASS)."""
    report = _complete(tmp_path, BKP_PASS, _csi_counters(2))
    finding = _finding(report, "RR-BKP-004")
    assert finding["status"] == "ERROR", finding["message"]
    assert "shortfall" not in finding["evidence"]


def test_snapshots_for_every_pvc_stay_captured(tmp_path: Path) -> None:
    """The healthy shape: three snapshots for the three PVCs."""
    report = _complete(tmp_path, BKP_PASS, _csi_counters(3))
    finding = _finding(report, "RR-BKP-004")
    assert finding["status"] == "PASS", finding["message"]
