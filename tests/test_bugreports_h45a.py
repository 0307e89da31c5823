"""Round h45a: kinds of fault from public bug reports where a backup looks fine but its
restore loses something.

1. The virt-launcher pod left out of the Backup. Velero runs backup hooks (KubeVirt's
   virt-freezer annotations, a Backup's own ``spec.hooks``) only on the pods it backs up
   (velero pkg/backup/backup.go ``backupItemBlock``, pkg/backup/item_backupper.go
   ``itemInclusionChecks``); the kubevirt plugin refuses a running VM for ``pods`` left out by
   ``excludedResources`` (kubevirt-velero-plugin#68's e2e "Pod excluded" case), but not for
   the scoped filters, nor without the plugin, nor for the exclude label that the pod
   inherits from its VMI (kubevirt pkg/virt-controller/services/template.go ``podLabels``).
   RR-BKP-011 passed on the connected agent ("backups can freeze its filesystems"): READY
   with ``require_application_consistent`` while no freeze ran.
2. A file-system copy longer than the freeze. KubeVirt's pre hook runs ``virt-freezer
   --freeze`` without ``--unfreezeTimeoutSeconds`` (default 300 s: kubevirt
   cmd/virt-freezer/virt-freezer.go), so virt-launcher thaws the guest after five minutes,
   while a PodVolumeBackup reads the live disk image from its ``status.startTimestamp`` to its
   ``status.completionTimestamp`` (velero pkg/controller/pod_volume_backup_controller.go;
   kubevirt#8672 backs VMs up with restic). One that ran longer copied a torn image: RR-BKP-011
   passed (READY with the option).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.test_evidence_gaps import _docs, _finding
from tests.test_vm_side_r41b import _audit, _readiness

Docs = list[dict[str, Any]]

AGENT = "RR-BKP-011/pass-agent-connected.yaml"


def _backups(docs: Docs) -> Docs:
    return [d for d in docs if d["kind"] == "Backup"]


def _drop_kubevirt_plugin(docs: Docs) -> None:
    for d in docs:
        if d["kind"] == "DataProtectionApplication":
            d["spec"]["configuration"]["velero"]["defaultPlugins"].remove("kubevirt")


def _scoped_pods_out(docs: Docs) -> None:
    for b in _backups(docs):
        b["spec"]["excludedNamespaceScopedResources"] = ["pods"]


def _old_style_pods_out_no_plugin(docs: Docs) -> None:
    for b in _backups(docs):
        b["spec"]["excludedResources"] = ["pods"]
    _drop_kubevirt_plugin(docs)


def _included_without_pods_no_plugin(docs: Docs) -> None:
    for b in _backups(docs):
        b["spec"]["includedResources"] = [
            "virtualmachines",
            "datavolumes",
            "persistentvolumeclaims",
            "persistentvolumes",
            "virtualmachineinstances",
        ]
    _drop_kubevirt_plugin(docs)


def _vmi_exclude_label_no_plugin(docs: Docs) -> None:
    for d in docs:
        if d["kind"] == "VirtualMachineInstance":
            d["metadata"].setdefault("labels", {})["velero.io/exclude-from-backup"] = "true"
    _drop_kubevirt_plugin(docs)


@pytest.mark.parametrize(
    ("mutate", "named"),
    [
        (_scoped_pods_out, "excludedNamespaceScopedResources=['pods']"),
        (_old_style_pods_out_no_plugin, "excludedResources=['pods']"),
        (_included_without_pods_no_plugin, "includedResources=['virtualmachines'"),
        (
            _vmi_exclude_label_no_plugin,
            "VMI vm1 carries velero.io/exclude-from-backup=true",
        ),
    ],
)
def test_a_backup_without_the_launcher_pod_froze_nothing(
    tmp_path: Path, mutate: Callable[[Docs], None], named: str
) -> None:
    docs = _docs(AGENT)
    mutate(docs)
    report = _audit(tmp_path, docs)
    f = _finding(report, "RR-BKP-011")
    assert (f["status"], f["severity"]) == ("FAIL", "medium")
    assert "does not take its virt-launcher pod" in f["message"]
    assert named in f["message"]
    assert f["evidence"]["backup"] == "daily-20261130"
    assert named in f["evidence"]["launcher_pod_left_out"]
    # before h45a: PASS, READY
    assert _readiness(report) == "AT_RISK"
    # the disks are still captured: only the freeze is missing
    assert _finding(report, "RR-BKP-004")["status"] == "PASS"


def test_the_launcher_pod_taken_keeps_the_pass(tmp_path: Path) -> None:
    docs = _docs(AGENT)
    for b in _backups(docs):
        # pods named among the included resources (the plugin reads '*' literally)
        b["spec"]["includedResources"] = [
            "virtualmachines",
            "virtualmachineinstances",
            "datavolumes",
            "persistentvolumeclaims",
            "persistentvolumes",
            "network-attachment-definitions.k8s.cni.cncf.io",
            "pods",
        ]
    report = _audit(tmp_path, docs)
    assert _finding(report, "RR-BKP-011")["status"] == "PASS"
    assert _readiness(report) == "READY"


def test_with_the_plugin_the_old_style_exclusion_is_its_refusal(tmp_path: Path) -> None:
    # the kubevirt plugin refuses a running VM whose Backup leaves out pods while it takes
    # PVCs (canBeSafelyBackedUp): no usable backup at all, which RR-BKP-001 names
    docs = _docs(AGENT)
    for b in _backups(docs):
        b["spec"]["excludedResources"] = ["pods"]
    report = _audit(tmp_path, docs)
    assert _finding(report, "RR-BKP-001")["status"] == "FAIL"
    assert _readiness(report) == "NOT_READY"


def test_an_older_backup_leaving_out_pods_is_not_the_newest(tmp_path: Path) -> None:
    # only the newest usable backup is judged, as for a failed hook
    docs = _docs(AGENT)
    for b in _backups(docs):
        if b["metadata"]["name"] != "daily-20261130":
            b["spec"]["excludedNamespaceScopedResources"] = ["pods"]
    report = _audit(tmp_path, docs)
    assert _finding(report, "RR-BKP-011")["status"] == "PASS"


def test_without_the_option_the_fail_is_info(tmp_path: Path) -> None:
    from tests.test_evidence_gaps import _audit as audit_default

    docs = _docs(AGENT)
    _scoped_pods_out(docs)
    report = audit_default(tmp_path, docs)
    f = _finding(report, "RR-BKP-011")
    assert (f["status"], f["severity"]) == ("FAIL", "info")


def _policy_unread(docs: Docs) -> None:
    # a resource policy ConfigMap missing from the export: its includeExcludePolicy (Velero
    # 1.17) may leave out pods
    for b in _backups(docs):
        b["spec"]["resourcePolicy"] = {"kind": "configmap", "name": "vm-policy"}


def test_a_resource_policy_not_read_leaves_the_freeze_unknown(tmp_path: Path) -> None:
    docs = _docs(AGENT)
    _policy_unread(docs)
    report = _audit(tmp_path, docs)
    f = _finding(report, "RR-BKP-011")
    assert (f["status"], f["severity"]) == ("ERROR", "medium")
    assert (
        "whether its newest usable backup daily-20261130 takes its virt-launcher pod"
        in (f["message"])
    )
    assert "ConfigMap velero/vm-policy" in f["evidence"]["launcher_pod_unknown"]
    assert _readiness(report) == "UNKNOWN"


def test_a_resource_policy_not_read_without_the_option_is_an_info_fail(tmp_path: Path) -> None:
    from tests.test_evidence_gaps import _audit as audit_default

    docs = _docs(AGENT)
    _policy_unread(docs)
    f = _finding(audit_default(tmp_path, docs), "RR-BKP-011")
    assert (f["status"], f["severity"]) == ("FAIL", "info")
    assert "is unknown" in f["message"]


FS = "RR-BKP-004/pass-fs-backup-podvolumebackups.yaml"


def _fs_with_agent(took_s: int) -> Docs:
    """The file-system fixture with its VMI's guest agent connected and the newest Backup's
    PodVolumeBackups running ``took_s`` seconds."""
    docs = _docs(FS)
    for d in docs:
        if d["kind"] == "VirtualMachineInstance":
            d.setdefault("status", {})["conditions"] = [
                {
                    "type": "AgentConnected",
                    "status": "True",
                    "lastProbeTime": None,
                    "lastTransitionTime": "2026-11-20T09:00:00Z",
                }
            ]
        labels = d["metadata"].get("labels", {})
        if d["kind"] == "PodVolumeBackup" and labels["velero.io/backup-name"] == "daily-20261130":
            d["status"]["startTimestamp"] = "2026-11-30T01:00:30Z"
            end = 30 + took_s
            d["status"]["completionTimestamp"] = f"2026-11-30T01:{end // 60:02d}:{end % 60:02d}Z"
    return docs


def test_a_file_system_copy_longer_than_the_freeze_is_torn(tmp_path: Path) -> None:
    report = _audit(tmp_path, _fs_with_agent(370))
    f = _finding(report, "RR-BKP-011")
    assert (f["status"], f["severity"]) == ("FAIL", "medium")
    assert (
        "PodVolumeBackup velero/daily-20261130-vm1-root copied PVC vm1-root for 370 s"
        in f["message"]
    )
    assert "longer than the 300 s virt-freezer keeps the guest frozen" in f["message"]
    assert any("vm1-data for 370 s" in t for t in f["evidence"]["thawed_copies"])
    # before h45a: PASS, READY; the copies still count as captured (RR-BKP-004)
    assert _readiness(report) == "AT_RISK"
    assert _finding(report, "RR-BKP-004")["status"] == "PASS"


@pytest.mark.parametrize("took", [120, 300])
def test_a_copy_within_the_freeze_keeps_the_pass(tmp_path: Path, took: int) -> None:
    report = _audit(tmp_path, _fs_with_agent(took))
    assert _finding(report, "RR-BKP-011")["status"] == "PASS"
    assert _readiness(report) == "READY"


def test_a_copy_without_its_times_is_not_judged(tmp_path: Path) -> None:
    docs = _fs_with_agent(370)
    for d in docs:
        if d["kind"] == "PodVolumeBackup":
            d["status"].pop("startTimestamp", None)
    assert _finding(_audit(tmp_path, docs), "RR-BKP-011")["status"] == "PASS"
