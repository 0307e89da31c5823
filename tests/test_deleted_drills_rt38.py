"""A restore drill deleted after it failed still shows through what it left behind.

Velero owns each PodVolumeRestore/DataDownload by its Restore and labels it
``velero.io/restore-name`` (pkg/podvolume/restorer.go, pkg/restore/actions/csi/pvc_action.go);
``velero backup delete`` deletes the Backup's Restores (pkg/controller/
backup_deletion_controller.go). An unfinished one naming a Restore no longer there is a drill
that failed and was deleted: RR-RST-001 stays a medium FAIL, never "no drill" or an older PASS.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.test_evidence_gaps import _audit, _docs, _finding

FIXTURE = "RR-RST-001/pass-data-downloads-completed.yaml"


def _download(
    restore: str, pvc: str, phase: str | None, made: str | None, source: str = "app"
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "labels": {"velero.io/restore-name": restore},
        "name": f"{restore}-{pvc}",
        "namespace": "velero",
    }
    if made is not None:
        meta["creationTimestamp"] = made
    return {
        "apiVersion": "velero.io/v2alpha1",
        "kind": "DataDownload",
        "metadata": meta,
        "spec": {
            "sourceNamespace": source,
            "targetVolume": {"namespace": "app-drill", "pv": "", "pvc": pvc},
        },
        "status": {} if phase is None else {"phase": phase},
    }


def _pod_volume_restore(restore: str, volume: str, phase: str) -> dict[str, Any]:
    return {
        "apiVersion": "velero.io/v1",
        "kind": "PodVolumeRestore",
        "metadata": {
            "creationTimestamp": "2026-11-29T09:00:00Z",
            "labels": {"velero.io/restore-name": restore},
            "name": f"{restore}-x1",
            "namespace": "velero",
        },
        "spec": {
            "pod": {"kind": "Pod", "name": "virt-launcher-vm1-abcde", "namespace": "app-drill"},
            "sourceNamespace": "app",
            "volume": volume,
        },
        "status": {"phase": phase},
    }


def test_the_fixture_passes_without_a_trace() -> None:
    # the base the cases below change: a Completed data-mover drill of both disks
    assert (
        "# expect: RR-RST-001 app/vm1 PASS"
        in (Path(__file__).parent / "fixtures" / "checks" / FIXTURE).read_text()
    )


@pytest.mark.parametrize(
    ("extra", "status", "severity"),
    [
        # a failed DataDownload of a deleted Restore, after the drill that passes
        (
            [_download("drill-20261129", "vm1-root", "Failed", "2026-11-29T09:00:00Z")],
            "FAIL",
            "medium",
        ),
        # unfinished, or no status at all: it never completed
        (
            [_download("drill-20261129", "vm1-data", "InProgress", "2026-11-29T09:00:00Z")],
            "FAIL",
            "medium",
        ),
        ([_download("drill-20261129", "vm1-data", None, None)], "FAIL", "medium"),
        # a file-system restore of the launcher pod's volume
        ([_pod_volume_restore("drill-20261129", "root", "Failed")], "FAIL", "medium"),
        # completed: says nothing against the drill
        (
            [_download("drill-20261129", "vm1-root", "Completed", "2026-11-29T09:00:00Z")],
            "PASS",
            None,
        ),
        # older than the newest drill, which began after it: superseded
        ([_download("drill-20261120", "vm1-root", "Failed", "2026-11-20T09:00:00Z")], "PASS", None),
        # another namespace's VM with a PVC of the same name
        (
            [_download("drill-20261129", "vm1-root", "Failed", "2026-11-29T09:00:00Z", "other")],
            "PASS",
            None,
        ),
        # a PVC that is no disk of this VM
        ([_download("drill-20261129", "vm9-root", "Failed", "2026-11-29T09:00:00Z")], "PASS", None),
    ],
)
def test_a_deleted_drill_s_unfinished_data_restore_keeps_it_failed(
    tmp_path: Path, extra: list[dict[str, Any]], status: str, severity: str | None
) -> None:
    finding = _finding(_audit(tmp_path, _docs(FIXTURE) + extra), "RR-RST-001")
    assert finding["status"] == status, finding["message"]
    if severity is not None:
        assert finding["severity"] == severity
        assert "drill-20261129" in finding["message"]
        assert "no longer exists" in finding["message"]


def test_deleting_the_failed_drill_is_no_better_than_keeping_it(tmp_path: Path) -> None:
    """The only drill and its Restore deleted, its failed DataDownload left: medium, as the
    failed Restore itself ranks, not the info FAIL of "no drill"."""
    docs = [d for d in _docs(FIXTURE) if d["kind"] not in ("Restore", "DataDownload")]
    # another namespace's Restore: the Restores were read, and none is the drill
    docs.append(
        {
            "apiVersion": "velero.io/v1",
            "kind": "Restore",
            "metadata": {
                "creationTimestamp": "2026-11-28T08:00:00Z",
                "name": "other-20261128",
                "namespace": "velero",
            },
            "spec": {"backupName": "daily-20261128", "includedNamespaces": ["other"]},
            "status": {"completionTimestamp": "2026-11-28T08:10:00Z", "phase": "Completed"},
        }
    )
    docs.append(_download("drill-20261128", "vm1-root", "Failed", "2026-11-28T09:05:00Z"))
    finding = _finding(_audit(tmp_path, docs), "RR-RST-001")
    assert finding["status"] == "FAIL", finding["message"]
    assert finding["severity"] == "medium"
    assert finding["evidence"]["deleted_drill_data_operations"] == [
        "DataDownload drill-20261128-vm1-root of Restore drill-20261128 (Failed)"
    ]
    # the same export with the trace gone: the info FAIL of no drill
    docs.pop()
    finding = _finding(_audit(tmp_path / "b", docs), "RR-RST-001")
    assert (finding["status"], finding["severity"]) == ("FAIL", "info")
