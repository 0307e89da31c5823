"""Red-team round rt31: identity paths held to their evidence.

Each test changes one project fixture the way a real cluster drifts, and asserts the finding
beside the healthy shape, which keeps its verdict.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.test_evidence_gaps import _complete, _docs, _finding, _of

Docs = list[dict[str, Any]]

#: app/vm1 with persistent EFI, a label-selector Backup (backup=yes) and the kubevirt Velero
#: plugin enabled, which pulls the VM's unlabelled disk PVCs into it; its persistent-state
#: PVC persistent-state-for-vm1-abcde is labelled persistent-state-for=vm1 (KubeVirt >= 1.4)
PLUGIN = "RR-BKP-004/pass-kubevirt-plugin-adds-unlabelled-pvcs.yaml"


def _state(docs: Docs, name: str, labels: dict[str, str]) -> None:
    """Rename the persistent-state PVC (and its PV's claimRef) and set its labels."""
    for pvc in _of(docs, "PersistentVolumeClaim"):
        if pvc["metadata"]["name"].startswith("persistent-state-for-"):
            pvc["metadata"]["name"], pvc["metadata"]["labels"] = name, dict(labels)
    for pv in _of(docs, "PersistentVolume"):
        if pv["spec"]["claimRef"]["name"].startswith("persistent-state-for-"):
            pv["spec"]["claimRef"]["name"] = name


@pytest.mark.parametrize(
    "labels",
    [{}, {"kubevirt.io/migrationName": "vm1-migration-x7k2p"}],
)
def test_the_plugin_does_not_pull_an_unlabelled_suffixed_state_pvc(
    tmp_path: Path, labels: dict[str, str]
) -> None:
    """The kubevirt Velero plugin adds to a Backup of a VM the PVCs labelled
    persistent-state-for=<vm> and, only when none is, the PVC named exactly
    persistent-state-for-<vm> (kubevirt-velero-plugin pkg/util/kvgraph/util.go
    addBackendPVC). A persistent-state-for-vm1-abcde without that label (a migration
    target's, labelled kubevirt.io/migrationName, or one whose label was removed) is never added,
    so a label-selector Backup holds no EFI/TPM state: it counted as pulled (PASS, READY)."""
    docs = _docs(PLUGIN)
    _state(docs, "persistent-state-for-vm1-abcde", labels)
    report = _complete(tmp_path, PLUGIN, docs)
    finding = _finding(report, "RR-BKP-004")
    assert (finding["status"], finding["severity"]) == ("FAIL", "medium"), finding["message"]
    assert "persistent-state-for-vm1-abcde" in finding["message"]
    vm = next(v for v in report["vms"] if v["name"] == "vm1")
    assert vm["readiness"] != "READY"


@pytest.mark.parametrize(
    ("name", "labels"),
    [
        ("persistent-state-for-vm1-abcde", {"persistent-state-for": "vm1"}),
        ("vm1-backend-storage", {"persistent-state-for": "vm1"}),
        ("persistent-state-for-vm1", {}),
    ],
)
def test_the_plugin_pulls_a_labelled_or_legacy_named_state_pvc(
    tmp_path: Path, name: str, labels: dict[str, str]
) -> None:
    """Out of the rule: a PVC labelled for the VM (whatever its name), or, with none
    labelled, the one of the legacy exact name, is added by the plugin: PASS."""
    docs = _docs(PLUGIN)
    _state(docs, name, labels)
    report = _complete(tmp_path, PLUGIN, docs)
    finding = _finding(report, "RR-BKP-004")
    assert finding["status"] == "PASS", finding["message"]
