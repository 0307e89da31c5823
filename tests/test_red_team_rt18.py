"""Red-team round rt18: restore failures reported upstream, each held to the finding its
evidence allows, and the healthy (or out-of-rule) counterpart held to its own.

Each test takes a fixture of the check catalog, changes one thing where needed, and asserts
the finding that must follow: never a finding better than the evidence, never a false alarm.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.test_evidence_gaps import _complete, _docs, _finding

Docs = list[dict[str, Any]]

#: vm1's Filesystem-mode disks copied by Completed PodVolumeBackups of the newest Backup
#: (defaultVolumesToFsBackup), the DPA enabling the kubevirt plugin.
FS_PLUGIN = "RR-BKP-004/fail-fs-backup-launcher-pod-skipped-on-restore.yaml"
#: the same, the DPA without the kubevirt plugin.
FS_NO_PLUGIN = "RR-BKP-004/pass-fs-backup-podvolumebackups.yaml"


def _vm(report: dict[str, Any], name: str = "vm1") -> dict[str, Any]:
    return next(v for v in report["vms"] if v["name"] == name)


# -- a file-system copy of a VM disk under the kubevirt plugin -------------------------------


def test_a_file_system_copy_is_no_copy_while_the_kubevirt_plugin_runs(tmp_path: Path) -> None:
    """kubevirt#8672 (https://github.com/kubevirt/kubevirt/issues/8672): a VM backed up with
    Velero's file-system backup (restic/kopia) came back with empty DataVolumes. Velero
    re-provisions a PodVolumeBackup's PVC empty and fills it only through the
    PodVolumeRestores it creates when it restores the pod that mounted it (velero
    pkg/restore/restore.go hasPodVolumeBackup, restorePodVolumeBackups); the kubevirt plugin
    skips every virt-launcher pod on restore (kubevirt-velero-plugin
    pkg/plugin/pod_restore_item_action.go, "Launcher Pod should be unconditionally
    skipped"), and OADP excludes file-system backup for VMs. Completed PodVolumeBackups
    made RR-BKP-004 PASS and the VM READY."""
    report = _complete(tmp_path, FS_PLUGIN, _docs(FS_PLUGIN))
    finding = _finding(report, "RR-BKP-004")
    assert (finding["status"], finding["severity"]) == ("FAIL", "high"), finding["message"]
    assert "virt-launcher pod" in finding["message"]
    pvcs = {p["pvc"]: p for p in finding["evidence"]["pvcs"]}
    assert pvcs["vm1-root"]["status"] == "failed"
    assert pvcs["vm1-root"]["method"] == "fs-backup"
    assert _vm(report)["readiness"] == "NOT_READY"
    # the root disk's PV reclaims with Delete: no other copy
    assert _finding(report, "RR-STG-001")["status"] == "FAIL"
    # the fix moves the Schedule off file-system backup, not "label the PVCs"
    assert "defaultVolumesToFsBackup: false" in finding["remediation"]


def test_a_file_system_copy_is_unknown_while_the_plugin_cannot_be_told(tmp_path: Path) -> None:
    """Plain Velero (no DataProtectionApplication) runs the kubevirt plugin or not, and the
    export cannot say: the PodVolumeBackups prove no restorable copy, so RR-BKP-004 is ERROR
    (UNKNOWN, never READY)."""
    docs = [d for d in _docs(FS_PLUGIN) if d["kind"] != "DataProtectionApplication"]
    report = _complete(tmp_path, FS_PLUGIN, docs)
    finding = _finding(report, "RR-BKP-004")
    assert finding["status"] == "ERROR", finding["message"]
    assert "kubevirt plugin" in finding["message"]
    assert _vm(report)["readiness"] in ("UNKNOWN", "NOT_READY")


def test_a_file_system_copy_without_the_plugin_stays_a_copy(tmp_path: Path) -> None:
    """Out of the rule: a DPA that does not enable the kubevirt plugin lets Velero restore the
    launcher pod with its PodVolumeRestores, so the copy stands (RR-PLT-004 names the missing
    plugin on its own)."""
    report = _complete(tmp_path, FS_NO_PLUGIN, _docs(FS_NO_PLUGIN))
    finding = _finding(report, "RR-BKP-004")
    assert finding["status"] == "PASS", finding["message"]
    assert {p["status"] for p in finding["evidence"]["pvcs"]} == {"captured"}


def test_csi_snapshots_under_the_plugin_stay_a_copy(tmp_path: Path) -> None:
    """The healthy shape: the kubevirt plugin with CSI snapshots (no PodVolumeBackup) keeps
    its PASS and the VM's verdict."""
    fixture = "RR-BKP-004/pass.yaml"
    report = _complete(tmp_path, fixture, _docs(fixture))
    assert _finding(report, "RR-BKP-004")["status"] == "PASS"
    assert _finding(report, "RR-STG-001")["status"] == "PASS"


# -- a namespace labelled velero.io/exclude-from-backup ---------------------------------------

#: vm1 in namespace app, two daily Backups of app holding it and its disks: READY.
HEALTHY = "RR-BKP-001/pass.yaml"


def _label_namespace(docs: Docs, name: str, value: str, *, prepared: bool = False) -> Docs:
    """Label Namespace ``name``; ``prepared``: the Backups were taken with the label, so
    Velero wrote the namespace into their spec.excludedNamespaces (prepareBackupRequest)."""
    for d in docs:
        if d["kind"] == "Namespace" and d["metadata"]["name"] == name:
            d["metadata"].setdefault("labels", {})["velero.io/exclude-from-backup"] = value
        if prepared and d["kind"] == "Backup":
            d["spec"].setdefault("excludedNamespaces", []).append(name)
    return docs


def test_a_namespace_labelled_exclude_from_backup_is_in_no_backup(tmp_path: Path) -> None:
    """velero#2413 (https://github.com/vmware-tanzu/velero/issues/2413), fixed in v1.10: Velero
    adds every Namespace labelled velero.io/exclude-from-backup=true to a Backup's
    excludedNamespaces when it prepares the Backup (pkg/controller/backup_controller.go
    prepareBackupRequest), so nothing of the namespace is backed up. The auditor read the
    label on VMs and PVCs only: the VM in the labelled namespace was READY. Velero patches
    the Backup with that request, so Backups taken with the label list the namespace in
    spec.excludedNamespaces (fp24: the label alone, on Backups that do not list it, is one
    added after them; tests/test_false_alarms_fp24.py)."""
    docs = _label_namespace(_docs(HEALTHY), "app", "true", prepared=True)
    report = _complete(tmp_path, HEALTHY, docs)
    finding = _finding(report, "RR-BKP-001")
    assert (finding["status"], finding["severity"]) == ("FAIL", "high"), finding["message"]
    assert "amespace app carries velero.io/exclude-from-backup=true" in finding["message"]
    assert _finding(report, "RR-BKP-004")["status"] == "FAIL"
    assert _vm(report)["readiness"] == "NOT_READY"


@pytest.mark.parametrize(("namespace", "value"), [("app", "false"), ("velero", "true")])
def test_an_exclude_label_elsewhere_leaves_the_vm_backed_up(
    tmp_path: Path, namespace: str, value: str
) -> None:
    """Healthy: Velero compares the label with "true" exactly, and labelling Velero's own
    namespace (a common setup) excludes nothing of the VM's."""
    docs = _docs(HEALTHY)
    if not any(d["kind"] == "Namespace" and d["metadata"]["name"] == namespace for d in docs):
        docs.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    report = _complete(tmp_path, HEALTHY, _label_namespace(docs, namespace, value))
    assert _finding(report, "RR-BKP-001")["status"] == "PASS"
    assert (
        _vm(report)["readiness"]
        == _vm(_complete(tmp_path / "base", HEALTHY, _docs(HEALTHY)))["readiness"]
    )
