"""The Velero-side rules of red team "vel", each held to the case that broke it: a verdict
better than the evidence, or a false alarm.

Each test takes a fixture of the check catalog, changes one thing a real cluster can hold, and
asserts the finding that must follow.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from auditor.scope import Scope
from tests.test_evidence_gaps import _complete, _docs, _finding, _of


def test_a_content_being_deleted_now_is_no_error_of_the_backup(tmp_path: Path) -> None:
    """A labelled VolumeSnapshotContent being deleted with its snapshot proves no copy, but
    it may have been ready when the Backup ran: it does not account for one of the Backup's
    ``status.errors`` (velero pkg/backup/snapshots.go counts the Backup's VolumeSnapshots;
    only a snapshot not completed is a failure). It was counted as one, so an error that may
    be the VM's own object was cleared (red team vel)."""
    fixture = "RR-BKP-003/fail-one-failed-snapshot-accounts-for-one-error.yaml"
    docs = _docs(fixture)
    backup = next(b for b in _of(docs, "Backup") if b["metadata"]["name"] == "daily-20261130")
    backup["status"].update(
        csiVolumeSnapshotsCompleted=4, backupItemOperationsCompleted=4, backupItemOperationsFailed=0
    )
    for snap in _of(docs, "VolumeSnapshot"):
        snap["status"] = {"readyToUse": True}
    content = next(
        c
        for c in _of(docs, "VolumeSnapshotContent")
        if c["metadata"]["name"].startswith("snapcontent-bad")
    )
    content["status"] = {"readyToUse": True}
    content["spec"]["deletionPolicy"] = "Delete"
    content["metadata"]["deletionTimestamp"] = "2026-11-30T05:30:00Z"
    found = _finding(_complete(tmp_path, fixture, docs), "RR-BKP-003")
    assert found["status"] == "ERROR", found["message"]


@pytest.mark.parametrize(
    ("where", "status"),
    [("labels", "PASS"), ("annotations", "FAIL")],
)
def test_a_metadata_backup_is_told_by_its_label(tmp_path: Path, where: str, status: str) -> None:
    """The plugin skips RestorePossible for a Backup *labelled*
    ``velero.kubevirt.io/metadataBackup`` (kubevirt-velero-plugin pkg/util/util.go
    ``IsMetadataBackup``: ``metav1.HasLabel``); an annotation of that name does nothing. The
    auditor read the annotation (red team vel)."""
    fixture = "RR-BKP-001/fail-plugin-refuses-vm-whose-standalone-datavolume-is-excluded.yaml"
    docs = _docs(fixture)
    for backup in _of(docs, "Backup"):
        backup["metadata"].setdefault(where, {})["velero.kubevirt.io/metadataBackup"] = "true"
    found = _finding(_complete(tmp_path, fixture, docs), "RR-BKP-001")
    assert found["status"] == status, found["message"]


@pytest.mark.parametrize(
    ("spec", "resource", "included"),
    [
        ({}, "pods", True),
        ({"includedResources": ["*"]}, "virtualmachineinstances", False),
        ({"includedResources": ["*"]}, "datavolume", False),
        ({"excludedResources": ["datavolumes.cdi.kubevirt.io"]}, "datavolume", False),
        ({"excludedResources": ["DataVolume"]}, "datavolume", False),
        (
            {"includedResources": ["VirtualMachineInstances.kubevirt.io"]},
            "virtualmachineinstances",
            True,
        ),
        ({"includedResources": ["vmi"]}, "virtualmachineinstances", False),  # no short names
        ({"includedResources": ["persistentvolumeclaim"]}, "persistentvolumeclaims", True),
        (
            {"excludedNamespaceScopedResources": ["virtualmachineinstances"]},
            "virtualmachineinstances",
            True,
        ),
        ({"includedNamespaceScopedResources": ["virtualmachines"]}, "pods", True),
    ],
)
def test_the_plugin_reads_only_the_old_resource_lists_literally(
    spec: dict[str, Any], resource: str, included: bool
) -> None:
    """kubevirt-velero-plugin pkg/util/util.go IsResourceInBackup: includedResources and
    excludedResources only, each entry's resource part compared ignoring case and a plural
    ``s``; ``*`` and short names are literal, the scoped filters unread."""
    assert Scope.from_spec(spec).plugin_in_backup(resource) is included
