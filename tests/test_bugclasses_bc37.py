"""Bug classes bc37: VM identity after restore, what a guest notices.

1. RR-BKP-009 compared the backed-up VM with the live one on its firmware UUID and serial,
   MACs, networks, boot order and revisions only: a disk bus, NIC model, bootloader (BIOS or
   EFI, secure boot, persistent NVRAM) or TPM changed since the backup passed as "the live
   identity", though the restore brings back the old hardware (a Windows boot disk moved
   back from virtio to sata, an EFI guest booted with BIOS, does not boot). An unset bus or
   model and KubeVirt's default written out are one identity (kubevirt pkg/defaults/amd64.go
   ``setDefaultAmd64DisksBus``: sata; arm64.go: virtio; pkg/network/vmispec/interface.go: ""
   is virtio).
2. RR-PLT-006 passed "creates their state on the default virt/cluster class" when
   vmStateStorageClass was unset and no StorageClass was marked default: KubeVirt then fails
   "no default storage class found" and a persistent-state VM without its state PVC does not
   start (kubevirt pkg/storage/backend-storage/backend-storage.go ``getStorageClass``).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from auditor.inventory.needs import identity_of
from auditor.inventory.vmspec import read_vm_spec
from tests.test_check_fixtures import audit_fixture
from tests.test_evidence_gaps import FIXTURES, _finding

#: vm1 (amd64 by default, EFI with persistent NVRAM and secure boot, disks root/data/
#: cloudinitdisk on virtio, NICs default and vlan of model virtio) with the bucket's contents
#: of its two Backups (``# backup-contents`` header) holding the live identity.
BUCKET_PASS = "RR-BKP-009/pass.yaml"
HEADER = "# backup-contents: "

Edit = Callable[[dict[str, Any]], None]


def _tspec(vm: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = vm["spec"]["template"]["spec"]
    return spec


def _audit(tmp_path: Path, *, live: Edit | None = None, backed_up: Edit | None = None) -> Any:
    """Audit BUCKET_PASS with ``live`` applied to the VirtualMachine of the export and
    ``backed_up`` to the VM manifest of every Backup in the bucket header."""
    lines = (FIXTURES / BUCKET_PASS).read_text().splitlines()
    head = [ln for ln in lines if ln.startswith("#")]
    docs = [d for d in yaml.safe_load_all("\n".join(lines)) if d]
    if live:
        for d in docs:
            if d["kind"] == "VirtualMachine":
                live(d)
    if backed_up:
        for i, ln in enumerate(head):
            if ln.startswith(HEADER):
                contents = json.loads(ln[len(HEADER) :])
                for c in contents:
                    for _, _, manifest in c["vm_manifests"]:
                        backed_up(manifest)
                head[i] = HEADER + json.dumps(contents)
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "c.yaml"
    path.write_text("\n".join(head) + "\n" + yaml.safe_dump_all(docs))
    return audit_fixture(path)


def _drift(report: dict[str, Any]) -> tuple[str, dict[str, tuple[Any, Any]]]:
    f = _finding(report, "RR-BKP-009")
    return f["status"], {d["field"]: (d["backup"], d["live"]) for d in f["evidence"]["drift"]}


def _root_bus(bus: str | None) -> Edit:
    def edit(vm: dict[str, Any]) -> None:
        disk = _tspec(vm)["domain"]["devices"]["disks"][0]
        assert disk["name"] == "root"
        if bus is None:
            disk["disk"].pop("bus")
        else:
            disk["disk"]["bus"] = bus

    return edit


def test_untouched_fixture_passes(tmp_path: Path) -> None:
    status, drift = _drift(_audit(tmp_path))
    assert (status, drift) == ("PASS", {})


def test_a_boot_disk_bus_changed_since_the_backup_is_drift(tmp_path: Path) -> None:
    """The live root disk moved to sata: the restore brings back virtio."""
    status, drift = _drift(_audit(tmp_path, live=_root_bus("sata")))
    assert status == "FAIL"
    assert drift == {"disk/root.bus": ("virtio", "sata")}


def test_an_unset_bus_is_kubevirts_default_not_a_change(tmp_path: Path) -> None:
    """Backed up unset, live written out as sata: on amd64 KubeVirt gives sata to both."""
    report = _audit(tmp_path, live=_root_bus("sata"), backed_up=_root_bus(None))
    assert _drift(report) == ("PASS", {})


def test_an_unset_bus_on_arm64_is_virtio(tmp_path: Path) -> None:
    """On arm64 the default is virtio: unset in the backup and sata live differ."""

    def arm(vm: dict[str, Any]) -> None:
        _tspec(vm)["architecture"] = "arm64"
        _root_bus("sata")(vm)

    status, drift = _drift(_audit(tmp_path, live=arm, backed_up=_root_bus(None)))
    assert status == "FAIL"
    assert drift["disk/root.bus"] == ("virtio", "sata")


def test_a_nic_model_changed_since_the_backup_is_drift(tmp_path: Path) -> None:
    def e1000e(vm: dict[str, Any]) -> None:
        _tspec(vm)["domain"]["devices"]["interfaces"][1]["model"] = "e1000e"

    status, drift = _drift(_audit(tmp_path, live=e1000e))
    assert status == "FAIL"
    assert drift == {"nic/vlan.model": ("virtio", "e1000e")}


def test_efi_switched_to_bios_since_the_backup_is_drift(tmp_path: Path) -> None:
    """The live VM boots BIOS now; the backed-up one EFI with persistent NVRAM."""

    def bios(vm: dict[str, Any]) -> None:
        _tspec(vm)["domain"]["firmware"]["bootloader"] = {"bios": {}}

    status, drift = _drift(_audit(tmp_path, live=bios))
    assert status == "FAIL"
    assert drift == {
        "firmware.bootloader": ("efi", "bios"),
        "firmware.secureBoot": (True, None),
        "firmware.efi.persistent": (True, None),
    }


def test_a_tpm_added_since_the_backup_is_drift(tmp_path: Path) -> None:
    def tpm(vm: dict[str, Any]) -> None:
        _tspec(vm)["domain"]["devices"]["tpm"] = {"persistent": True}

    status, drift = _drift(_audit(tmp_path, live=tpm))
    assert status == "FAIL"
    assert drift == {"tpm": (False, True), "tpm.persistent": (None, True)}


# -- identity_of's defaults, directly ------------------------------------------------------


def _vm(**tspec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "domain": {
            "devices": {
                "disks": [{"name": "root", "disk": {}}, {"name": "iso", "cdrom": {}}],
                "interfaces": [{"name": "default", "masquerade": {}}],
            }
        },
        "networks": [{"name": "default", "pod": {}}],
        "volumes": [
            {"name": "root", "dataVolume": {"name": "root"}},
            {"name": "iso", "dataVolume": {"name": "iso"}},
        ],
    }
    base.update(tspec)
    return {
        "kind": "VirtualMachine",
        "metadata": {"name": "vm1", "namespace": "app"},
        "spec": {"template": {"spec": base}},
    }


def _identity(vm: dict[str, Any], arch: str | None = None) -> dict[str, Any]:
    return identity_of(vm, read_vm_spec(vm, None, architecture=arch), architecture=arch)


def test_identity_unset_bus_and_model_are_kubevirts_defaults() -> None:
    got = _identity(_vm())
    assert (got["disk/root.bus"], got["disk/iso.bus"], got["nic/default.model"]) == (
        "sata",
        "sata",
        "virtio",
    )
    arm = _identity(_vm(), arch="arm64")
    assert (arm["disk/root.bus"], arm["disk/iso.bus"]) == ("virtio", "virtio")
    s390 = _identity(_vm(architecture="s390x"))
    assert s390["disk/root.bus"] == "virtio"


def test_identity_leaves_to_a_named_preference_what_the_vm_leaves_unset() -> None:
    vm = _vm()
    vm["spec"]["preference"] = {"kind": "VirtualMachineClusterPreference", "name": "windows"}
    got = _identity(vm)
    assert (got["disk/root.bus"], got["nic/default.model"]) == (None, None)
    explicit = copy.deepcopy(vm)
    _tspec(explicit)["domain"]["devices"]["disks"][0]["disk"]["bus"] = "virtio"
    assert _identity(explicit)["disk/root.bus"] == "virtio"


# -- RR-PLT-006: no class for a new state PVC ----------------------------------------------


def _plt006(tmp_path: Path, fixture: str, old: str = "", new: str = "") -> dict[str, Any]:
    text = (FIXTURES / "RR-PLT-006" / fixture).read_text()
    if old:
        assert old in text, old
        text = text.replace(old, new)
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "c.yaml"
    path.write_text(text)
    report = audit_fixture(path)
    found: dict[str, Any] = next(
        f for f in report["platform_findings"] if f["check_id"] == "RR-PLT-006"
    )
    return found


def test_no_state_class_and_no_default_class_fails(tmp_path: Path) -> None:
    f = _plt006(tmp_path, "fail-state-class-unset-no-default.yaml")
    assert (f["status"], f["severity"]) == ("FAIL", "high")
    assert "no default storage class found" in f["message"]
    assert "state_class_fallback" not in f["evidence"]


def test_the_default_virt_class_comes_before_the_cluster_default(tmp_path: Path) -> None:
    """Both marked: KubeVirt takes the kubevirt.io default virt class."""
    f = _plt006(
        tmp_path,
        "pass-state-class-unset-cluster-default.yaml",
        "  name: delete-sc\n",
        "  annotations:\n    storageclass.kubevirt.io/is-default-virt-class: 'true'\n"
        "  name: delete-sc\n",
    )
    assert f["status"] == "PASS"
    assert f["evidence"]["state_class_fallback"] == [
        "delete-sc",
        "storageclass.kubevirt.io/is-default-virt-class",
    ]


def test_a_default_annotation_other_than_true_marks_no_class(tmp_path: Path) -> None:
    """KubeVirt compares the annotation with the string "true" exactly."""
    f = _plt006(
        tmp_path,
        "pass-state-class-unset-cluster-default.yaml",
        "is-default-class: 'true'",
        "is-default-class: 'yes'",
    )
    assert (f["status"], f["severity"]) == ("FAIL", "high")


# -- a backed-up manifest whose identity fields cannot be read ------------------------------


def test_a_malformed_bus_in_the_backup_is_unknown_not_the_default(tmp_path: Path) -> None:
    """bus: 5 in the backed-up manifest read as unset, i.e. sata, the live bus: PASS on a
    field that could not be read. It is ERROR, naming the backup and the field."""

    def junk(vm: dict[str, Any]) -> None:
        _tspec(vm)["domain"]["devices"]["disks"][0]["disk"]["bus"] = 5

    report = _audit(tmp_path, live=_root_bus("sata"), backed_up=junk)
    f = _finding(report, "RR-BKP-009")
    assert f["status"] == "ERROR", f["message"]
    assert "daily-20261130" in f["message"]
    assert "spec.template.spec.domain.devices.disks[root].disk.bus" in f["message"]


def test_a_malformed_field_beside_a_real_drift_keeps_the_fail(tmp_path: Path) -> None:
    """Kept: a drift read on other fields stays a FAIL (an ERROR would rank lower)."""

    def junk(vm: dict[str, Any]) -> None:
        _tspec(vm)["domain"]["devices"]["disks"][0]["disk"]["bus"] = 5

    def e1000e(vm: dict[str, Any]) -> None:
        _root_bus("sata")(vm)
        _tspec(vm)["domain"]["devices"]["interfaces"][1]["model"] = "e1000e"

    report = _audit(tmp_path, live=e1000e, backed_up=junk)
    f = _finding(report, "RR-BKP-009")
    assert f["status"] == "FAIL", f["message"]
    assert [d["field"] for d in f["evidence"]["drift"]] == ["nic/vlan.model"]
    assert f["evidence"]["unreadable_backup_fields"] == [
        "spec.template.spec.domain.devices.disks[root].disk.bus is a int, not a string "
        "(KubeVirt's admission webhook rejects such a VM)"
    ]


def test_a_malformed_field_outside_the_identity_is_not_named(tmp_path: Path) -> None:
    """A machine type that is no mapping is a problem of the manifest (read_vm_spec lists
    it), but not of what RR-BKP-009 compares."""

    def junk(vm: dict[str, Any]) -> None:
        _tspec(vm)["domain"]["machine"] = "junk"
        assert any(
            f == "spec.template.spec.domain.machine" for f, _ in read_vm_spec(vm, None).problems
        )

    status, drift = _drift(_audit(tmp_path, backed_up=junk))
    assert (status, drift) == ("PASS", {})


# -- the pinned revision: status on the live VM, spec in the backup ------------------------


REV = "vm1-u1.medium-v1beta1-uid-1"


def _pinned_in_status(vm: dict[str, Any]) -> None:
    vm["spec"]["instancetype"] = {"kind": "VirtualMachineClusterInstancetype", "name": "u1.medium"}
    vm.setdefault("status", {})["instancetypeRef"] = {
        "kind": "VirtualMachineClusterInstancetype",
        "name": "u1.medium",
        "controllerRevisionRef": {"name": REV},
    }


def _pinned_in_spec(rev: str) -> Edit:
    def edit(vm: dict[str, Any]) -> None:
        vm["spec"]["instancetype"] = {
            "kind": "VirtualMachineClusterInstancetype",
            "name": "u1.medium",
            "revisionName": rev,
        }

    return edit


def test_the_live_revision_in_status_is_the_backed_up_revision_name(tmp_path: Path) -> None:
    """KubeVirt keeps the pinned revision in status.instancetypeRef.controllerRevisionRef;
    the kubevirt plugin writes it into the backed-up spec.instancetype.revisionName
    (kubevirt-velero-plugin pkg/plugin/vm_backup_item_action.go). Read from the spec only,
    the live VM had none: "instancetype.revision differs" on every such VM."""
    report = _audit(tmp_path, live=_pinned_in_status, backed_up=_pinned_in_spec(REV))
    assert _drift(report) == ("PASS", {})


def test_another_backed_up_revision_still_differs(tmp_path: Path) -> None:
    report = _audit(tmp_path, live=_pinned_in_status, backed_up=_pinned_in_spec("older-rev"))
    assert _drift(report) == ("FAIL", {"instancetype.revision": ("older-rev", REV)})
