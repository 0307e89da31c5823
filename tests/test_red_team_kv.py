"""Red team rt-b: KubeVirt-side false verdicts, each reproduced from a check fixture with
one change a real cluster (or `virtctl`) makes, and the rule (with its source) that decides.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.test_evidence_gaps import _complete, _docs, _finding, _of

Docs = list[dict[str, Any]]


def _readiness(report: dict[str, Any], vm: str = "vm1") -> str:
    readiness: str = next(v for v in report["vms"] if v["name"] == vm)["readiness"]
    return readiness


# --- 1. a pinned ControllerRevision the Backup's resource filters leave out ---------------


def test_revision_filtered_out_makes_the_vm_not_ready(tmp_path: Path) -> None:
    """The kubevirt plugin sets spec.instancetype.revisionName from the status at backup
    (kubevirt-velero-plugin pkg/plugin/vm_backup_item_action.go); Velero drops the revision,
    an additional item, when excludedResources names controllerrevisions.apps (velero
    pkg/backup/item_backupper.go); KubeVirt cannot start the restored VM
    (kubevirt pkg/instancetype/find/revision.go). Was READY with RR-BKP-012 N/A."""
    fixture = "RR-BKP-012/fail-pinned-revision-excluded.yaml"
    report = _complete(tmp_path, fixture, _docs(fixture))
    finding = _finding(report, "RR-BKP-012")
    assert (finding["status"], finding["severity"]) == ("FAIL", "high"), finding["message"]
    assert "ControllerRevision vm1-u1.medium-v1beta1-uid-1" in finding["message"]
    [ref] = finding["evidence"]["references"]
    assert ref["field"] == "status.instancetypeRef.controllerRevisionRef.name"
    assert ref["state"] == "dropped"
    assert _readiness(report) == "NOT_READY"


def _select_by_label(docs: Docs) -> None:
    for backup in _of(docs, "Backup"):
        backup["spec"]["labelSelector"] = {"matchLabels": {"app": "vm1"}}


@pytest.mark.parametrize(
    ("plugin", "revision_labels", "status"),
    [
        # the plugin returns the revision as an additional item: the selector does not filter it
        (True, {}, "PASS"),
        # no plugin: the revision's own labels decide (the auditor reads ControllerRevisions)
        (False, {}, "FAIL"),
        (False, {"app": "vm1"}, "PASS"),
    ],
)
def test_a_label_selected_revision_is_taken_by_the_plugin_or_its_labels(
    tmp_path: Path, plugin: bool, revision_labels: dict[str, str], status: str
) -> None:
    """Under a label selector a revision is in the backup when the plugin pulls it in or its
    own labels match; a read revision whose labels do not match, without the plugin, is
    left out (high)."""
    fixture = "RR-BKP-012/pass-pinned-revision-in-backup.yaml"
    docs = _docs(fixture)
    _select_by_label(docs)
    for doc in _of(docs, "PersistentVolumeClaim"):
        doc["metadata"].setdefault("labels", {})["app"] = "vm1"
    if not plugin:
        dpa = _of(docs, "DataProtectionApplication")[0]
        dpa["spec"]["configuration"]["velero"]["defaultPlugins"] = ["openshift", "aws", "csi"]
    _of(docs, "ControllerRevision")[0]["metadata"]["labels"].update(revision_labels)
    finding = _finding(_complete(tmp_path, fixture, docs), "RR-BKP-012")
    assert finding["status"] == status, finding["message"]
    if status == "FAIL":
        assert finding["severity"] == "high"


def test_a_revision_labelled_exclude_from_backup_is_left_out(tmp_path: Path) -> None:
    """Velero skips any item labelled velero.io/exclude-from-backup=true, plugin additions
    included (velero pkg/backup/item_backupper.go)."""
    fixture = "RR-BKP-012/pass-pinned-revision-in-backup.yaml"
    docs = _docs(fixture)
    _of(docs, "ControllerRevision")[0]["metadata"]["labels"]["velero.io/exclude-from-backup"] = (
        "true"
    )
    finding = _finding(_complete(tmp_path, fixture, docs), "RR-BKP-012")
    assert (finding["status"], finding["severity"]) == ("FAIL", "high"), finding["message"]


# --- 3. what the kubevirt plugin pulls in past a label selector ----------------------------


@pytest.mark.parametrize(
    ("volume", "plugin_adds"),
    [
        ({"configMap": {"name": "x"}}, True),
        ({"secret": {"secretName": "x"}}, True),
        ({"serviceAccount": {"serviceAccountName": "x"}}, True),
        ({"cloudInitNoCloud": {"secretRef": {"name": "x"}}}, True),
        ({"cloudInitNoCloud": {"networkDataSecretRef": {"name": "x"}}}, True),
        ({"cloudInitConfigDrive": {"secretRef": {"name": "x"}}}, True),
        ({"cloudInitConfigDrive": {"networkDataSecretRef": {"name": "x"}}}, True),
        # addVolumeGraph has no case for these
        ({"sysprep": {"configMap": {"name": "x"}}}, False),
        ({"sysprep": {"secret": {"name": "x"}}}, False),
        ({"containerDisk": {"image": "r/i", "imagePullSecret": "x"}}, False),
    ],
)
def test_plugin_pull_in_follows_add_volume_graph(volume: dict[str, Any], plugin_adds: bool) -> None:
    """The volume kinds the plugin returns as additional items are exactly those of
    addVolumeGraph (kubevirt-velero-plugin pkg/util/kvgraph/util.go at 734e6cd)."""
    from auditor.inventory.needs import references

    vm = {"spec": {"template": {"spec": {"volumes": [{"name": "v", **volume}]}}}}
    (ref,) = references(vm)
    assert (ref.name, ref.plugin_adds) == ("x", plugin_adds)


def test_sysprep_under_a_label_selector_is_unknown_not_passed(tmp_path: Path) -> None:
    """Red team: a sysprep ConfigMap under a label-selected Backup with the kubevirt plugin
    passed RR-BKP-012 (READY); the plugin does not pull it in and its labels are not read."""
    fixture = "RR-BKP-012/error-sysprep-label-selected-plugin.yaml"
    report = _complete(tmp_path, fixture, _docs(fixture))
    finding = _finding(report, "RR-BKP-012")
    assert finding["status"] == "ERROR", finding["message"]
    assert "ConfigMap vm1-sysprep" in finding["message"]
    assert "sysprep.configMap.name" in finding["message"]
    assert _readiness(report) != "READY"


# --- 4. a memoryDump volume is no disk ------------------------------------------------------


@pytest.mark.parametrize(
    "fixture",
    [
        "RR-BKP-004/pass-memory-dump-volume.yaml",
        "RR-BKP-004/pass-memory-dump-pvc-not-captured.yaml",
    ],
)
def test_a_memory_dump_volume_is_no_collection_problem(tmp_path: Path, fixture: str) -> None:
    """`virtctl memory-dump get` leaves ``{memoryDump: {claimName, hotpluggable: true}}`` in
    the VM spec with no disk (kubevirt pkg/storage/memorydump/memorydump.go); it was reported
    as "attached to no disk or filesystem (a renamed disk?)" and every check gave ERROR
    (UNKNOWN). It is not a disk to protect: its PVC, even left out of the backup, is not
    required by RR-BKP-004."""
    report = _complete(tmp_path, fixture, _docs(fixture))
    assert not [p for p in report["collection_problems"] if "memdump" in p.get("field", "")]
    assert _finding(report, "RR-BKP-004")["status"] == "PASS"
    vm = next(v for v in report["vms"] if v["name"] == "vm1")
    assert not [f for f in vm["findings"] if f["status"] == "ERROR"]
