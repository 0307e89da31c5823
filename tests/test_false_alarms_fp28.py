"""False-alarm round fp28: healthy setups the newest rules (RR-BKP-013's next Backups,
arm64 firmware) judged wrong, and rt27's leftovers, each beside the shape that keeps its
finding.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.test_evidence_gaps import _complete, _docs, _finding

Docs = list[dict[str, Any]]

#: vm1 in namespace app, two daily Backups of Schedule velero/daily (CSI snapshots).
HEALTHY = "RR-BKP-001/pass.yaml"
#: The same VM with its disks copied by file-system backup (PodVolumeBackups): the Backups'
#: spec holds ``defaultVolumesToFsBackup: true``, the Schedule's template leaves it unset.
FS = "RR-BKP-004/pass-fs-backup-podvolumebackups.yaml"


def _of(docs: Docs, kind: str) -> dict[str, Any]:
    return next(d for d in docs if d["kind"] == kind)


def _vm(report: dict[str, Any], name: str = "vm1") -> dict[str, Any]:
    return next(v for v in report["vms"] if v["name"] == name)


def _dpa_velero(docs: Docs) -> dict[str, Any]:
    velero: dict[str, Any] = _of(docs, "DataProtectionApplication")["spec"]["configuration"][
        "velero"
    ]
    return velero


# -- the server's defaults fill the Schedule's unset switches ------------------------------


def test_fs_backup_by_the_oadp_default_on_storage_without_snapshots_stays_ready(
    tmp_path: Path,
) -> None:
    """OADP's DPA ``defaultVolumesToFSBackup: true`` becomes Velero's
    ``--default-volumes-to-fs-backup`` (oadp-operator internal/controller/velero.go), which
    fills in every Backup whose spec leaves it unset (velero pkg/controller/backup_controller.go
    prepareBackupRequest): the next Backup of a template without it copies the disks by
    file-system backup again. Read as a snapshot Backup, a driver with no VolumeSnapshotClass
    made RR-BKP-013 FAIL on a healthy setup."""
    docs = [d for d in _docs(FS) if d["kind"] != "VolumeSnapshotClass"]
    _dpa_velero(docs)["defaultVolumesToFSBackup"] = True
    report = _complete(tmp_path, FS, docs)
    finding = _finding(report, "RR-BKP-013")
    assert finding["status"] == "PASS", finding["message"]
    assert finding["evidence"]["schedules"] == [
        {
            "schedule": "velero/daily",
            "gaps": [],
            "server_defaults": {
                "defaultVolumesToFsBackup": "DataProtectionApplication in velero "
                "defaultVolumesToFSBackup"
            },
        }
    ]
    assert _vm(report)["readiness"] == "READY"


def test_without_a_dpa_the_schedules_last_backup_says_the_server_default(tmp_path: Path) -> None:
    """Plain Velero (no DPA): the newest Backup the Schedule made holds the value the server
    filled in (prepareBackupRequest writes it to the Backup's spec)."""
    docs = [
        d
        for d in _docs(FS)
        if d["kind"] not in ("VolumeSnapshotClass", "DataProtectionApplication")
    ]
    report = _complete(tmp_path, FS, docs)
    finding = _finding(report, "RR-BKP-013")
    assert finding["status"] == "PASS", finding["message"]
    assert finding["evidence"]["schedules"][0]["server_defaults"] == {
        "defaultVolumesToFsBackup": "Backup velero/daily-20261130 spec.defaultVolumesToFsBackup"
    }


def test_a_dpa_that_leaves_the_switch_unset_gives_velero_its_false_default(
    tmp_path: Path,
) -> None:
    """OADP passes ``--default-volumes-to-fs-backup`` only when the DPA sets the field
    (oadp-operator internal/controller/velero.go getDefaultVolumesToFSBackup): unset, the
    next Backup of a template without it snapshots, whatever earlier Backups' specs hold, and
    with no VolumeSnapshotClass for the driver it copies no disk data."""
    docs = [d for d in _docs(FS) if d["kind"] != "VolumeSnapshotClass"]
    report = _complete(tmp_path, FS, docs)
    finding = _finding(report, "RR-BKP-013")
    assert (finding["status"], finding["severity"]) == ("FAIL", "medium"), finding["message"]
    assert "finds no VolumeSnapshotClass it can select" in finding["message"]
    assert "server_defaults" not in finding["evidence"]["schedules"][0]
    # server args from the DPA's ConfigMap may set it: the Backups' spec says the default
    _of(docs, "DataProtectionApplication")["metadata"]["annotations"] = {
        "oadp.openshift.io/unsupported-velero-server-args": "velero-args"
    }
    report = _complete(tmp_path / "args", FS, docs)
    assert _finding(report, "RR-BKP-013")["status"] == "PASS"


def test_a_server_default_turned_to_fs_backup_since_the_backups_drops_block_disks(
    tmp_path: Path,
) -> None:
    """rt27's leftover: the DPA now turns ``defaultVolumesToFSBackup`` on, the template leaves
    it unset and the Backups taken snapshotted the Block-mode disks (their spec: false). The
    next Backup takes a file-system backup, which never copies Block volumes (velero
    pkg/podvolume/backupper.go): read from the template alone it was PASS."""
    docs = _docs(HEALTHY)
    _dpa_velero(docs)["defaultVolumesToFSBackup"] = True
    for d in docs:
        if d["kind"] == "Backup":
            d["spec"]["defaultVolumesToFsBackup"] = False
    report = _complete(tmp_path, HEALTHY, docs)
    assert _finding(report, "RR-BKP-004")["status"] == "PASS"
    finding = _finding(report, "RR-BKP-013")
    assert (finding["status"], finding["severity"]) == ("FAIL", "medium"), finding["message"]
    assert "never copies Block-mode volumes such as PVC vm1-root" in finding["message"]
    assert _vm(report)["readiness"] == "AT_RISK"


def test_a_template_that_sets_the_switch_is_not_overridden_by_the_default(tmp_path: Path) -> None:
    """The template's own ``defaultVolumesToFsBackup: false`` wins over the DPA default."""
    docs = _docs(HEALTHY)
    _dpa_velero(docs)["defaultVolumesToFSBackup"] = True
    _of(docs, "Schedule")["spec"]["template"]["defaultVolumesToFsBackup"] = False
    report = _complete(tmp_path, HEALTHY, docs)
    finding = _finding(report, "RR-BKP-013")
    assert finding["status"] == "PASS", finding["message"]
    assert "server_defaults" not in finding["evidence"]["schedules"][0]


# -- namespace patterns this Velero is shown to expand ---------------------------------------

#: vm1's disks copied by the data mover (DataUploads naming their source namespace, app).
DATA_MOVER = "RR-BKP-007/pass-data-mover.yaml"


def _by_pattern(docs: Docs, pattern: str, *, backups: bool = True) -> Docs:
    for d in docs:
        if d["kind"] == "Schedule":
            d["spec"]["template"]["includedNamespaces"] = [pattern]
        if d["kind"] == "Backup" and backups:
            d["spec"]["includedNamespaces"] = [pattern]
    return docs


def test_a_schedule_naming_namespaces_by_a_pattern_its_velero_expands_stays_ready(
    tmp_path: Path,
) -> None:
    """Velero 1.18 expands ``includedNamespaces`` globs (velero#9255, CHANGELOG-1.18): the
    Schedule's Backups name ``ap*`` and their DataUploads show namespace app was backed up.
    The next Backup of the same Velero expands it too; it was judged an unexpanded pattern
    (RR-BKP-013 FAIL), and the capture plan looked ``ap*`` up as a namespace, so the
    persistent-state PVC the counters cover was 'not evidenced' (RR-BKP-004 ERROR): UNKNOWN."""
    docs = _by_pattern(_docs(DATA_MOVER), "ap*")
    report = _complete(tmp_path, DATA_MOVER, docs)
    assert _finding(report, "RR-BKP-001")["status"] == "PASS"
    assert _finding(report, "RR-BKP-004")["status"] == "PASS", _finding(report, "RR-BKP-004")[
        "message"
    ]
    finding = _finding(report, "RR-BKP-013")
    assert finding["status"] == "PASS", finding["message"]
    assert _vm(report)["readiness"] not in ("UNKNOWN", "AT_RISK", "NOT_READY")


def test_a_pattern_no_backup_of_that_velero_was_shown_to_expand_stays_named(
    tmp_path: Path,
) -> None:
    """The finding kept: the template switched to ``ap*`` while every Backup taken named app
    literally; nothing shows this Velero expands patterns (before 1.18 it does not)."""
    docs = _by_pattern(_docs(DATA_MOVER), "ap*", backups=False)
    report = _complete(tmp_path, DATA_MOVER, docs)
    finding = _finding(report, "RR-BKP-013")
    assert (finding["status"], finding["severity"]) == ("FAIL", "medium"), finding["message"]
    assert "names namespaces by pattern (ap*)" in finding["message"]


# -- RR-BKP-013 reads the fields it judges --------------------------------------------------


def _template_spec(docs: Docs) -> dict[str, Any]:
    spec: dict[str, Any] = _of(docs, "VirtualMachine")["spec"]["template"]["spec"]
    return spec


def test_a_malformed_mac_or_firmware_uuid_does_not_unsettle_the_next_backups(
    tmp_path: Path,
) -> None:
    """rt27's leftover: RR-BKP-013 declared no ``reads`` and so read the whole template: a
    malformed NIC MAC or firmware UUID (named by RR-NIC-001 / RR-FW-001) made it ERROR,
    though the next Backups' filters and methods read neither."""
    docs = _docs(HEALTHY)
    spec = _template_spec(docs)
    spec["domain"]["devices"]["interfaces"][0]["macAddress"] = "not-a-mac"
    spec["domain"]["firmware"]["uuid"] = "not-a-uuid"
    report = _complete(tmp_path, HEALTHY, docs)
    assert _finding(report, "RR-NIC-001")["status"] == "ERROR"
    finding = _finding(report, "RR-BKP-013")
    assert finding["status"] == "PASS", finding["message"]


def test_a_malformed_volume_or_run_strategy_still_leaves_the_next_backups_unknown(
    tmp_path: Path,
) -> None:
    """The fields it does read: which PVCs the VM has, and whether its pod runs (file-system
    backup needs it): malformed, the check gives ERROR, never PASS."""
    docs = _docs(HEALTHY)
    _template_spec(docs)["volumes"][0]["dataVolume"] = {"name": 7}
    _of(docs, "VirtualMachine")["spec"]["runStrategy"] = "Sometimes"
    report = _complete(tmp_path, HEALTHY, docs)
    finding = _finding(report, "RR-BKP-013")
    assert finding["status"] == "ERROR", finding["message"]
    assert "spec.template.spec.volumes[root].dataVolume.name" in finding["message"]
    assert "spec.runStrategy" in finding["message"]


# -- arm64 firmware: what KubeVirt cannot give, and what is only inferred --------------------

#: vm1 runs BIOS (no bootloader set), no TPM: RR-FW-002 N/A on amd64.
BIOS = "RR-FW-002/na-bios.yaml"


def _arm64(docs: Docs, bootloader: dict[str, Any] | None) -> Docs:
    """vm1 stopped on arm64 (``spec.template.spec.architecture``, as KubeVirt's VM webhook
    writes it), its bootloader ``bootloader`` (None: unset)."""
    vm = _of(docs, "VirtualMachine")
    tspec = vm["spec"]["template"]["spec"]
    tspec["architecture"] = "arm64"
    tspec["domain"]["machine"]["type"] = "virt"
    firmware = tspec["domain"].setdefault("firmware", {})
    firmware.pop("bootloader", None)
    if bootloader is not None:
        firmware["bootloader"] = bootloader
    vm["spec"]["runStrategy"] = "Halted"
    return [d for d in docs if d["kind"] != "VirtualMachineInstance"]


def test_an_empty_bootloader_on_arm64_is_not_read_as_bios(tmp_path: Path) -> None:
    """rt27's leftover: kubevirt pkg/defaults/arm64.go setDefaultArm64Bootloader fills in EFI
    only where the bootloader is unset; ``bootloader: {}`` keeps none, and arm64 has no BIOS
    (pkg/virt-api/webhooks/arm64.go). Read as BIOS, RR-FW-002 was NOT_APPLICABLE."""
    docs = _arm64(_docs(BIOS), {})
    report = _complete(tmp_path, BIOS, docs)
    finding = _finding(report, "RR-FW-002")
    assert finding["status"] == "ERROR", finding["message"]
    assert finding["evidence"]["bootloader"] == "unknown"
    assert finding["evidence"]["architecture"] == "arm64"
    assert _vm(report)["readiness"] != "READY"
    assert _vm(report)["recovery_card"]["firmware"]["bootloader"] == "unknown"
    assert "Give VM app/vm1 an EFI bootloader" in finding["remediation"]


def _with_preference(docs: Docs, firmware: dict[str, Any]) -> Docs:
    _of(docs, "VirtualMachine")["spec"]["preference"] = {
        "kind": "VirtualMachineClusterPreference",
        "name": "p1",
    }
    return [
        *docs,
        {
            "apiVersion": "instancetype.kubevirt.io/v1beta1",
            "kind": "VirtualMachineClusterPreference",
            "metadata": {"name": "p1"},
            "spec": {"firmware": firmware},
        },
    ]


def test_an_arm64_vm_whose_preference_gives_bios_cannot_start(tmp_path: Path) -> None:
    """rt27's leftover: applyFirmwarePreferences (kubevirt pkg/instancetype/preference/apply/
    firmware.go) gives the VMI BIOS for ``preferredUseBios``, and the VMI admission refuses
    BIOS on arm64 ('Arm64 does not support bios boot', pkg/virt-api/webhooks/arm64.go
    validateBootOptions): neither the VM nor a restored copy starts. It was N/A (BIOS)."""
    docs = _with_preference(_arm64(_docs(BIOS), None), {"preferredUseBios": True})
    report = _complete(tmp_path, BIOS, docs)
    finding = _finding(report, "RR-FW-002")
    assert (finding["status"], finding["severity"]) == ("FAIL", "high"), finding["message"]
    assert "preferredUseBios" in finding["message"]
    assert _vm(report)["readiness"] == "NOT_READY"
    assert "bootloader: {bios: null, efi: {persistent: true}}" in finding["remediation"]


def test_an_arm64_vm_whose_preference_prefers_efi_boots_efi(tmp_path: Path) -> None:
    """The healthy arm64 preference: ``preferredEfi: {persistent: true}`` gives persistent
    EFI, no finding about BIOS."""
    docs = _with_preference(_arm64(_docs(BIOS), None), {"preferredEfi": {"persistent": True}})
    report = _complete(tmp_path, BIOS, docs)
    finding = _finding(report, "RR-FW-002")
    assert finding["status"] == "PASS", finding["message"]
    assert finding["evidence"]["bootloader"] == "efi"


def test_no_architecture_anywhere_reads_bios_as_inferred(tmp_path: Path) -> None:
    """rt27's leftover: KubeVirt's VM webhook writes ``spec.template.spec.architecture`` on
    every VM it admits (pkg/defaults/defaults.go SetVirtualMachineDefaults); with none on the
    VM, its VMI or a KubeVirt CR, BIOS is amd64's default assumed, not observed: the N/A says
    so and rests on inference."""
    docs = _docs(BIOS)
    for d in docs:
        if d["kind"] in ("VirtualMachine", "VirtualMachineInstance"):
            spec = d["spec"]["template"]["spec"] if d["kind"] == "VirtualMachine" else d["spec"]
            spec.pop("architecture", None)
    report = _complete(tmp_path, BIOS, docs)
    finding = _finding(report, "RR-FW-002")
    assert finding["status"] == "NOT_APPLICABLE", finding["message"]
    assert finding["basis"] == "inferred"
    assert "inferred: no architecture is named" in finding["message"]
    assert finding["evidence"]["architecture"] is None


def test_an_amd64_vm_on_an_arm64_default_cluster_stays_bios_as_observed(tmp_path: Path) -> None:
    """Multi-arch: the VM names amd64 while the cluster default is arm64: BIOS, observed."""
    docs = _docs(BIOS)
    _of(docs, "VirtualMachine")["spec"]["template"]["spec"]["architecture"] = "amd64"
    docs.append(
        {
            "apiVersion": "kubevirt.io/v1",
            "kind": "KubeVirt",
            "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
            "spec": {},
            "status": {"defaultArchitecture": "arm64", "phase": "Deployed"},
        }
    )
    report = _complete(tmp_path, BIOS, docs)
    finding = _finding(report, "RR-FW-002")
    assert finding["status"] == "NOT_APPLICABLE", finding["message"]
    assert finding["basis"] != "inferred"
    assert _vm(report)["readiness"] == "READY"


# -- '*' in a scoped exclude filter ------------------------------------------------------------


def test_a_backup_excluding_every_namespaced_resource_holds_no_vm(tmp_path: Path) -> None:
    """Velero accepts ``'*'`` alone as a scoped exclude (pkg/util/collections/
    includes_excludes.go ValidateScopedIncludesExcludes) and it excludes every resource of
    that scope (ScopeIncludesExcludes.ShouldExclude): a cluster-resources-only Backup
    (``excludedNamespaceScopedResources: ['*']``) holds no VM. The auditor ignored the '*'
    and counted it as the VM's newest usable backup (RR-BKP-002 PASS on it)."""
    docs = _docs(HEALTHY)
    for d in docs:
        if d["kind"] == "Backup" and d["metadata"]["name"] == "daily-20261130":
            d["spec"]["excludedNamespaceScopedResources"] = ["*"]
            d["spec"]["includedClusterScopedResources"] = ["storageclasses"]
    report = _complete(tmp_path, HEALTHY, docs)
    assert "newest daily-20261128" in _finding(report, "RR-BKP-001")["message"]
    assert _finding(report, "RR-BKP-002")["status"] == "FAIL"


def test_a_native_snapshot_disk_whose_backup_excludes_every_cluster_resource_is_not_captured(
    tmp_path: Path,
) -> None:
    """The same '*' for cluster-scoped resources leaves out the PersistentVolume, and with it
    the native snapshot Velero takes only while it backs up the PV item
    (pkg/backup/item_backupper.go takePVSnapshot; rt27's rule, which read only named
    entries)."""
    from tests.test_red_team_rt22 import BKP_PASS, _data_disk_on_nfs
    from tests.test_red_team_rt27 import _with_scratch_on_nfs

    docs = _with_scratch_on_nfs(_data_disk_on_nfs((1, 1)))
    for d in docs:
        if d["kind"] == "Backup":
            d["spec"]["excludedClusterScopedResources"] = ["*"]
    report = _complete(tmp_path, BKP_PASS, docs)
    finding = _finding(report, "RR-BKP-004")
    assert (finding["status"], finding["severity"]) == ("FAIL", "high"), finding["message"]
    assert (
        "excludedClusterScopedResources leaves out its PersistentVolume pv-app-vm1-data"
        in (finding["message"])
    )


def test_a_native_snapshot_pv_unnamed_by_the_scoped_cluster_includes_stays_captured(
    tmp_path: Path,
) -> None:
    """Under Velero 1.11's scoped filters only an exclude leaves a PersistentVolume out
    (pkg/util/collections/includes_excludes.go ScopeIncludesExcludes.ShouldExclude; the PV
    comes in as the PVC's additional item): ``includedClusterScopedResources:
    [storageclasses]`` keeps it. rt27's rule gave the reason "None" and failed the disk
    (RR-BKP-004 FAIL high, NOT_READY) on this healthy Backup."""
    from tests.test_red_team_rt22 import BKP_PASS, _data_disk_on_nfs

    docs = _data_disk_on_nfs((1, 1))
    scoped = {
        "includedNamespaceScopedResources": ["*"],
        "includedClusterScopedResources": ["storageclasses"],
    }
    for d in docs:
        if d["kind"] == "Backup":
            d["spec"].update(scoped)
        if d["kind"] == "Schedule":
            d["spec"]["template"].update(scoped)
    report = _complete(tmp_path, BKP_PASS, docs)
    finding = _finding(report, "RR-BKP-004")
    assert finding["status"] == "PASS", finding["message"]
    assert _finding(report, "RR-BKP-013")["status"] == "PASS"


def test_a_bios_serial_preference_does_not_turn_a_deprecated_efi_preference_into_bios(
    tmp_path: Path,
) -> None:
    """applyFirmwarePreferences (kubevirt pkg/instancetype/preference/apply/firmware.go) sets
    BIOS only for ``preferredUseBios``; ``preferredUseBiosSerial`` only tunes a BIOS already
    set, and the deprecated ``preferredUseEfi`` then gives EFI with volatile NVRAM. Read as
    BIOS, RR-FW-002 was NOT_APPLICABLE on a VM whose NVRAM every restore loses."""
    docs = _with_preference(_docs(BIOS), {"preferredUseBiosSerial": True, "preferredUseEfi": True})
    _of(docs, "VirtualMachine")["spec"]["template"]["spec"]["domain"]["firmware"].pop(
        "bootloader", None
    )
    docs = [d for d in docs if d["kind"] != "VirtualMachineInstance"]
    _of(docs, "VirtualMachine")["spec"]["runStrategy"] = "Halted"
    report = _complete(tmp_path, BIOS, docs)
    finding = _finding(report, "RR-FW-002")
    assert (finding["status"], finding["severity"]) == ("FAIL", "medium"), finding["message"]
    assert finding["evidence"]["bootloader"] == "efi"


def test_file_system_copies_show_a_pattern_was_expanded(tmp_path: Path) -> None:
    """A PodVolumeBackup names the pod whose volume it copied (``spec.pod.namespace``, velero
    pkg/apis/velero/v1/pod_volume_backup_types.go); only its own namespace (Velero's) was
    read, so a Backup naming ``ap*`` whose file-system copies came from namespace app was
    'nothing shows that it backed up namespace app': RR-BKP-001 FAIL, NOT_READY."""
    docs = _by_pattern(_docs(FS), "ap*")
    report = _complete(tmp_path, FS, docs)
    assert _finding(report, "RR-BKP-001")["status"] == "PASS", _finding(report, "RR-BKP-001")[
        "message"
    ]
    assert _finding(report, "RR-BKP-013")["status"] == "PASS"
