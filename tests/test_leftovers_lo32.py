"""Leftovers of the earlier reviews (helper lo32): each a verdict that was wrong or unnamed.

1. A persistent-state PVC (EFI NVRAM / TPM) neither labelled ``persistent-state-for=<vm>`` nor
   named exactly ``persistent-state-for-<vm>`` (``persistent-state-for-vm1-abcde`` unlabelled),
   or being deleted, counted as the VM's state PVC, so RR-FW-002 passed and its backups were
   judged on a PVC KubeVirt never starts the VM with (kubevirt
   pkg/storage/backend-storage/backend-storage.go ``PVCForVMI``). Rule:
   ``auditor.inventory.index.ClusterIndex._index_state_pvcs``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.test_evidence_gaps import _complete, _docs, _finding, _of

Docs = list[dict[str, Any]]

#: app/vm1, running, persistent EFI, its state PVC persistent-state-for-vm1-abcde labelled
#: persistent-state-for=vm1 and in every Backup
FW = "RR-FW-002/pass.yaml"


def _state(docs: Docs, name: str, labels: dict[str, str], deleting: str | None = None) -> None:
    """Rename the persistent-state PVC (and its PV's claimRef), set its labels and deletion."""
    for pvc in _of(docs, "PersistentVolumeClaim"):
        if pvc["metadata"]["name"].startswith("persistent-state-for-"):
            pvc["metadata"]["name"], pvc["metadata"]["labels"] = name, dict(labels)
            if deleting:
                pvc["metadata"]["deletionTimestamp"] = deleting
                pvc["metadata"]["finalizers"] = ["kubernetes.io/pvc-protection"]
    for pv in _of(docs, "PersistentVolume"):
        if pv["spec"]["claimRef"]["name"].startswith("persistent-state-for-"):
            pv["spec"]["claimRef"]["name"] = name


@pytest.mark.parametrize(
    ("name", "labels", "deleting", "words"),
    [
        # the label removed: KubeVirt would create a new, empty PVC at the next start
        (
            "persistent-state-for-vm1-abcde",
            {},
            None,
            "PVC app/persistent-state-for-vm1-abcde is not labelled persistent-state-for=vm1 "
            "and not named exactly persistent-state-for-vm1",
        ),
        # labelled for another VM
        (
            "persistent-state-for-vm1-abcde",
            {"persistent-state-for": "vm2"},
            None,
            "is labelled persistent-state-for=vm2",
        ),
        # a migration target's
        (
            "persistent-state-for-vm1-x7k2p",
            {"kubevirt.io/migrationName": "vm1-migration-x7k2p"},
            None,
            "PVC app/persistent-state-for-vm1-x7k2p is not labelled",
        ),
        # labelled, but being deleted: KubeVirt skips it
        (
            "persistent-state-for-vm1-abcde",
            {"persistent-state-for": "vm1"},
            "2026-11-30T05:00:00Z",
            "is being deleted (since 2026-11-30T05:00:00Z)",
        ),
    ],
)
def test_a_state_pvc_kubevirt_would_not_use_is_no_state(
    tmp_path: Path, name: str, labels: dict[str, str], deleting: str | None, words: str
) -> None:
    docs = _docs(FW)
    _state(docs, name, labels, deleting)
    report = _complete(tmp_path, FW, docs)
    finding = _finding(report, "RR-FW-002")
    assert (finding["status"], finding["severity"]) == ("FAIL", "medium"), finding["message"]
    assert words in finding["message"]
    assert finding["evidence"]["persistent_state_pvc"] is None
    assert finding["evidence"]["state_pvc_lookalikes"] == [name]
    vm = next(v for v in report["vms"] if v["name"] == "vm1")
    assert vm["readiness"] != "READY"


@pytest.mark.parametrize(
    ("name", "labels"),
    [
        ("persistent-state-for-vm1-abcde", {"persistent-state-for": "vm1"}),
        ("vm1-backend-storage", {"persistent-state-for": "vm1"}),
        ("persistent-state-for-vm1", {}),  # the legacy exact name, unlabelled
    ],
)
def test_the_state_pvc_kubevirt_uses_is_the_state(
    tmp_path: Path, name: str, labels: dict[str, str]
) -> None:
    docs = _docs(FW)
    _state(docs, name, labels)
    report = _complete(tmp_path, FW, docs)
    finding = _finding(report, "RR-FW-002")
    assert finding["status"] == "PASS", finding["message"]
    assert finding["evidence"]["persistent_state_pvc"] == name
    vm = next(v for v in report["vms"] if v["name"] == "vm1")
    assert vm["readiness"] == "READY"
