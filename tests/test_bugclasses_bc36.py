"""Bug classes of round bc36: verdicts and cards where real restores fail or facts were unseen.

1. A recovery card stated firmware facts it never observed: a VM naming a preference that
   was not found carried ``bootloader: bios`` (from "default") and ``tpm: false``, and a VM
   whose record could not be built carried ``tpm: false``. A preference fills in the
   bootloader, secure boot, TPM and machine type wherever the VM's own spec is silent
   (kubevirt pkg/instancetype/preference/apply/firmware.go ``applyFirmwarePreferences``,
   .../apply/device.go ``PreferredTPM``), so unread, those are unknown: ``bootloader``
   ``unknown``, ``tpm``/``secure_boot``/``machine_type`` null, no ``resolved_from`` entry.
   RR-PLT-006 likewise said "No VM keeps persistent EFI/TPM state" (N/A) when such a VM was
   the only one: it is now ERROR, naming the VMs whose state is unknown.
2. A Backup whose resource policy has an ``includeExcludePolicy`` (Velero 1.17) was UNKNOWN
   whatever the policy said, and its messages claimed the VM object was in the Backup. Velero
   combines the policy into the Backup's scoped filters where those do not already name a type
   (velero pkg/backup/backup.go -> pkg/util/collections/includes_excludes.go
   ``ScopeIncludesExcludes.CombineWithPolicy``): a policy leaving out VirtualMachines or
   PersistentVolumeClaims is now a FAIL naming the policy, one leaving out unrelated types a
   PASS; a glob entry, a policy Velero refuses (``*``, a type both included and excluded) or
   one beside the old resource filters (Velero fails that Backup's validation) stays unknown.
3. A PVC annotated ``velero.io/csi-volumesnapshot-class`` with a class its driver lacks was
   read as "Velero finds no class" (RR-BKP-013 FAIL, a false AT_RISK): Velero only logs that
   at debug and goes on to the Backup annotation, the labelled class, the default and the
   only class (velero pkg/util/csi/volume_snapshot.go ``GetVolumeSnapshotClass``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import auditor.inventory
from auditor.envelope.model import RecoveryCard
from auditor.report.vmview import card_view
from auditor.scope import Scope
from tests.test_check_fixtures import audit_fixture
from tests.test_evidence_gaps import _of
from tests.test_false_alarms_fp34 import FW_PASS, Docs, _load, _write
from tests.test_false_alarms_fp35 import SNAPSHOT_ALL, _audit, _bkp, _with_policy


def _vm_entry(report: dict[str, Any], name: str = "vm1") -> dict[str, Any]:
    return next(v for v in report["vms"] if v["name"] == name)


def _name_preference(docs: Docs, *, efi: bool, tpm: bool) -> None:
    """vm1 names VirtualMachineClusterPreference ``windows.2k22``, which the export lacks;
    its own spec keeps EFI (without secureBoot) when ``efi``, a persistent TPM when
    ``tpm``, and names no machine type."""
    vm = _of(docs, "VirtualMachine")[0]
    vm["spec"]["preference"] = {"kind": "VirtualMachineClusterPreference", "name": "windows.2k22"}
    domain = vm["spec"]["template"]["spec"]["domain"]
    domain.pop("machine", None)
    if efi:
        domain["firmware"]["bootloader"] = {"efi": {"persistent": True}}
    else:
        domain["firmware"].pop("bootloader", None)
    if tpm:
        domain["devices"]["tpm"] = {"persistent": True}


def test_card_of_a_vm_whose_preference_is_missing_states_no_unseen_firmware(
    tmp_path: Path,
) -> None:
    header, docs = _load(FW_PASS)
    _name_preference(docs, efi=False, tpm=False)
    report = audit_fixture(_write(tmp_path, header, docs))
    fw = _vm_entry(report)["recovery_card"]["firmware"]
    assert fw["bootloader"] == "unknown"
    assert fw["tpm"] is None and fw["tpm_persistent"] is None
    assert fw["secure_boot"] is None and fw["machine_type"] is None
    assert fw["resolved_from"] == {}
    # the identity the VM pins itself is still stated
    assert fw["uuid"] == "3f6d2c1e-8b0a-4f7e-b3c5-6a1d9e2f4b10"
    shown = dict(
        card_view(RecoveryCard.model_validate(_vm_entry(report)["recovery_card"])).firmware
    )
    assert shown["TPM"] == "unknown" and shown["Bootloader"] == "unknown"


def test_what_the_vm_itself_sets_stays_stated_beside_a_missing_preference(
    tmp_path: Path,
) -> None:
    header, docs = _load(FW_PASS)
    _name_preference(docs, efi=True, tpm=True)
    fw = _vm_entry(audit_fixture(_write(tmp_path, header, docs)))["recovery_card"]["firmware"]
    assert fw["bootloader"] == "efi" and fw["efi_persistent"] is True
    assert fw["tpm"] is True and fw["tpm_persistent"] is True
    assert fw["resolved_from"] == {"bootloader": "vm", "tpm": "vm"}
    # preferredUseSecureBoot may still set it: unknown, not KubeVirt's default (true)
    assert fw["secure_boot"] is None


def test_card_without_a_preference_keeps_kubevirt_defaults(tmp_path: Path) -> None:
    """The defaults stay where nothing can override them: no TPM, BIOS from the default."""
    header, docs = _load(FW_PASS)
    domain = _of(docs, "VirtualMachine")[0]["spec"]["template"]["spec"]["domain"]
    domain["firmware"].pop("bootloader")
    fw = _vm_entry(audit_fixture(_write(tmp_path, header, docs)))["recovery_card"]["firmware"]
    assert fw["tpm"] is False and fw["bootloader"] == "bios"
    assert fw["resolved_from"]["bootloader"] == "default"


def _platform(report: dict[str, Any], check: str) -> dict[str, Any]:
    return next(f for f in report["platform_findings"] if f["check_id"] == check)


def test_plt_006_is_unknown_not_n_a_when_a_missing_preference_may_set_persistent_state(
    tmp_path: Path,
) -> None:
    """The only VM leaves its bootloader and TPM to a preference that was not found: whether
    any VM keeps persistent EFI/TPM state is unknown (was N/A, "No VM keeps ...")."""
    header, docs = _load(FW_PASS)
    _name_preference(docs, efi=False, tpm=False)
    f = _platform(audit_fixture(_write(tmp_path, header, docs)), "RR-PLT-006")
    assert f["status"] == "ERROR", f["message"]
    assert f["evidence"]["vms_unknown"] == ["app/vm1"]


def test_plt_006_judges_a_vm_whose_own_spec_keeps_persistent_state(tmp_path: Path) -> None:
    """The VM's own EFI is persistent: it needs the feature whatever its preference says, so
    RR-PLT-006 judges it (no unknown)."""
    header, docs = _load(FW_PASS)
    _name_preference(docs, efi=True, tpm=False)
    f = _platform(audit_fixture(_write(tmp_path, header, docs)), "RR-PLT-006")
    assert f["status"] != "NOT_APPLICABLE" and "vms_unknown" not in f["evidence"]
    assert f["evidence"]["vms"] == ["app/vm1"]


def test_card_of_a_vm_whose_record_could_not_be_built_says_tpm_unknown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    header, docs = _load(FW_PASS)
    real = auditor.inventory.read_vm_spec

    def broken(vm: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        if vm["metadata"]["name"] == "vm1":
            raise ValueError("injected")
        return real(vm, *args, **kwargs)

    monkeypatch.setattr(auditor.inventory, "read_vm_spec", broken)
    entry = _vm_entry(audit_fixture(_write(tmp_path, header, docs)))
    assert entry["readiness"] == "UNKNOWN"
    fw = entry["recovery_card"]["firmware"]
    assert fw["tpm"] is None and fw["bootloader"] == "unknown" and fw["uuid"] is None


# --- 2. includeExcludePolicy ------------------------------------------------------------


def _included(scope: Scope, plural: str, kind: str, group: str) -> bool:
    return scope.resource_included(plural, kind, group)


def test_policy_excludes_join_the_backup_s_scoped_filters() -> None:
    scope = Scope.from_spec({"includedNamespaces": ["app"]}).with_policy(
        (), ("virtualmachines.kubevirt.io", "pvc"), (), ("persistentvolumes",)
    )
    assert not _included(scope, "virtualmachines", "VirtualMachine", "kubevirt.io")
    assert not _included(scope, "persistentvolumeclaims", "PersistentVolumeClaim", "")
    assert not _included(scope, "persistentvolumes", "PersistentVolume", "")
    assert _included(scope, "datavolumes", "DataVolume", "cdi.kubevirt.io")


def test_policy_includes_narrow_a_backup_that_names_no_types() -> None:
    scope = Scope.from_spec({}).with_policy(("configmaps",), (), (), ())
    assert _included(scope, "configmaps", "ConfigMap", "")
    assert not _included(scope, "virtualmachines", "VirtualMachine", "kubevirt.io")


def test_the_backup_s_own_filters_win_over_the_policy() -> None:
    """An own include (``*`` too) keeps a type the policy excludes; an own exclude keeps out
    a type the policy includes (CombineWithPolicy adds only types neither list names)."""
    own_star = Scope.from_spec({"includedNamespaceScopedResources": ["*"]})
    kept = own_star.with_policy((), ("virtualmachines",), (), ())
    assert _included(kept, "virtualmachines", "VirtualMachine", "kubevirt.io")
    own_vm = Scope.from_spec({"includedNamespaceScopedResources": ["vm", "pvc"]})
    kept = own_vm.with_policy((), ("virtualmachines.kubevirt.io",), (), ())
    assert _included(kept, "virtualmachines", "VirtualMachine", "kubevirt.io")
    own_exc = Scope.from_spec({"excludedNamespaceScopedResources": ["secrets"]})
    still = own_exc.with_policy(("secrets", "virtualmachines"), (), (), ())
    assert not _included(still, "secrets", "Secret", "")
    assert _included(still, "virtualmachines", "VirtualMachine", "kubevirt.io")
    assert not _included(still, "pods", "Pod", "")


def test_a_policy_entry_of_the_other_scope_is_dropped() -> None:
    """persistentvolumes in the namespace-scoped list resolves to a cluster-scoped type:
    Velero drops it (scopeResourceMapFunc), so it neither narrows nor excludes anything."""
    scope = Scope.from_spec({}).with_policy(("persistentvolumes",), (), (), ("pvc",))
    assert _included(scope, "virtualmachines", "VirtualMachine", "kubevirt.io")
    assert _included(scope, "persistentvolumeclaims", "PersistentVolumeClaim", "")


def _policy(lists: str) -> str:
    return SNAPSHOT_ALL + "includeExcludePolicy:\n" + lists


def _why(report: dict[str, Any], check: str) -> str:
    vm = _vm_entry(report)
    return str(next(f for f in vm["findings"] if f["check_id"] == check))


def test_a_policy_leaving_out_virtual_machines_fails_naming_it(tmp_path: Path) -> None:
    report = _audit(
        tmp_path, _policy("  excludedNamespaceScopedResources: [virtualmachines.kubevirt.io]\n")
    )
    vm = _vm_entry(report)
    assert vm["readiness"] == "NOT_READY"
    assert next(f for f in vm["findings"] if f["check_id"] == "RR-BKP-001")["status"] == "FAIL"
    assert "with the includeExcludePolicy of resource policy velero/vm-policy" in _why(
        report, "RR-BKP-001"
    )


def test_a_policy_leaving_out_the_disks_fails_rr_bkp_004(tmp_path: Path) -> None:
    report = _audit(tmp_path, _policy("  excludedNamespaceScopedResources: [pvc]\n"))
    f = _bkp(report)
    assert f["status"] == "FAIL", f["message"]
    assert "vm1-root" in f["message"] and "includeExcludePolicy" in f["message"]
    assert _vm_entry(report)["readiness"] == "NOT_READY"


def test_a_policy_including_only_other_types_leaves_the_vm_out(tmp_path: Path) -> None:
    report = _audit(tmp_path, _policy("  includedNamespaceScopedResources: [configmaps]\n"))
    assert _vm_entry(report)["readiness"] == "NOT_READY"
    assert _bkp(report)["status"] == "FAIL"


@pytest.mark.parametrize(
    ("lists", "named"),
    [
        ("  excludedNamespaceScopedResources: ['*']\n", "holds '*'"),
        (
            "  includedNamespaceScopedResources: [secrets]\n"
            "  excludedNamespaceScopedResources: [secrets]\n",
            "both includes and excludes namespace-scoped secrets",
        ),
        ("  excludedNamespacedResources: [secrets]\n", "unknown field(s)"),
    ],
)
def test_a_policy_velero_refuses_stays_unknown(tmp_path: Path, lists: str, named: str) -> None:
    report = _audit(tmp_path, _policy(lists))
    assert _vm_entry(report)["readiness"] == "UNKNOWN"
    assert named in str(_bkp(report))


def test_a_policy_beside_the_old_resource_filters_stays_unknown(tmp_path: Path) -> None:
    """Velero refuses an includeExcludePolicy beside includedResources/excludedResources
    (prepareBackupRequest): a Backup read as Completed did not run with this policy."""
    header, docs = _load(FW_PASS)
    docs = _with_policy(docs, _policy("  excludedNamespaceScopedResources: [secrets]\n"))
    for b in _of(docs, "Backup"):
        b["spec"]["excludedResources"] = ["events"]
    report = audit_fixture(_write(tmp_path, header, docs))
    assert _vm_entry(report)["readiness"] == "UNKNOWN"
    assert "refuses beside Backup" in str(_bkp(report))


def test_a_schedule_whose_policy_now_leaves_out_vms_fails_rr_bkp_013(tmp_path: Path) -> None:
    """The next Backup of a Schedule naming the policy runs with the policy as it stands: one
    excluding VirtualMachines breaks continuity though the Backups so far hold the VM."""
    header, docs = _load(FW_PASS)
    docs = _with_policy(docs, _policy("  excludedNamespaceScopedResources: [vms]\n"))
    for b in _of(docs, "Backup"):
        del b["spec"]["resourcePolicy"]  # the Backups so far ran without it
    for s in _of(docs, "Schedule"):
        s["spec"]["template"]["resourcePolicy"] = {"kind": "configmap", "name": "vm-policy"}
    report = audit_fixture(_write(tmp_path, header, docs))
    f = next(f for f in _vm_entry(report)["findings"] if f["check_id"] == "RR-BKP-013")
    assert f["status"] == "FAIL", f["message"]
    assert "includeExcludePolicy of resource policy velero/vm-policy" in f["message"]


# --- 3. a PVC's snapshot-class annotation naming no class of its driver -------------------


def _annotate_root_class(docs: Docs, name: str) -> None:
    pvc = next(p for p in _of(docs, "PersistentVolumeClaim") if p["metadata"]["name"] == "vm1-root")
    pvc["metadata"].setdefault("annotations", {})["velero.io/csi-volumesnapshot-class"] = name


def test_a_pvc_annotation_naming_a_missing_class_falls_back_to_the_labelled_class(
    tmp_path: Path,
) -> None:
    """velero pkg/util/csi/volume_snapshot.go GetVolumeSnapshotClass logs a PVC annotation
    naming no class of the driver at debug and goes on (Backup annotation, labelled class,
    default, the only one): the next backup still snapshots the disk."""
    header, docs = _load(FW_PASS)
    _annotate_root_class(docs, "snapclass-gone")
    report = audit_fixture(_write(tmp_path, header, docs))
    f = next(f for f in _vm_entry(report)["findings"] if f["check_id"] == "RR-BKP-013")
    assert f["status"] == "PASS", f["message"]
    assert _vm_entry(report)["readiness"] == "READY"


def test_with_no_class_velero_selects_itself_the_annotation_does_not_help(
    tmp_path: Path,
) -> None:
    """Two unlabelled classes, neither the default: the fallback finds none, so the missing
    class the annotation names leaves the disk unsnapshotted (RR-BKP-013 FAIL)."""
    header, docs = _load(FW_PASS)
    _annotate_root_class(docs, "snapclass-gone")
    snapclass = _of(docs, "VolumeSnapshotClass")[0]
    snapclass["metadata"].pop("labels", None)
    docs.append({**snapclass, "metadata": {"name": "snapclass-fast"}})
    report = audit_fixture(_write(tmp_path, header, docs))
    f = next(f for f in _vm_entry(report)["findings"] if f["check_id"] == "RR-BKP-013")
    assert f["status"] == "FAIL", f["message"]
    assert "finds no VolumeSnapshotClass" in f["message"] and "vm1-root" in f["message"]
