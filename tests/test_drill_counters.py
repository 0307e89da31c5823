"""A data-mover restore drill whose DataDownloads were not read: the Restore's own item
operation counters decide (velero pkg/controller/restore_operations_controller.go: a failed
DataDownload makes the Restore PartiallyFailed). And the kind that restores a disk is the one
its copy method needs: an unread PodVolumeRestore list says nothing of a data-mover disk.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.test_evidence_gaps import FIXTURES, _docs, _finding, _of

FIXTURE = "RR-RST-001/pass-data-downloads-completed.yaml"


def _audit(tmp_path: Path, docs: list[dict[str, Any]], unavailable: str) -> dict[str, Any]:
    import yaml

    from tests.test_check_fixtures import audit_fixture

    path = tmp_path / "c.yaml"
    header = [
        line
        for line in (FIXTURES / FIXTURE).read_text().splitlines()
        if line.startswith("# expect")
    ]
    path.write_text("\n".join([*header, f"# unavailable: {unavailable}", yaml.safe_dump_all(docs)]))
    return audit_fixture(path)


def _without_downloads(status: dict[str, Any] | None) -> list[dict[str, Any]]:
    docs = [d for d in _docs(FIXTURE) if d["kind"] != "DataDownload"]
    if status is not None:
        _of(docs, "Restore")[0]["status"].update(status)
    return docs


@pytest.mark.parametrize(
    ("counters", "status"),
    [
        # every operation completed, none failed: the disks came back
        ({"restoreItemOperationsAttempted": 2, "restoreItemOperationsCompleted": 2}, "PASS"),
        # no counters (an older Velero): nothing proves the data
        (None, "ERROR"),
        # an operation short of completed, or one failed (Velero would not say Completed,
        # but the counters are what was read): unknown, never PASS
        ({"restoreItemOperationsAttempted": 2, "restoreItemOperationsCompleted": 1}, "ERROR"),
        (
            {
                "restoreItemOperationsAttempted": 2,
                "restoreItemOperationsCompleted": 2,
                "restoreItemOperationsFailed": 1,
            },
            "ERROR",
        ),
        # a count that is no integer proves nothing
        ({"restoreItemOperationsAttempted": "2", "restoreItemOperationsCompleted": 2}, "ERROR"),
        ({"restoreItemOperationsAttempted": 0}, "ERROR"),
    ],
)
def test_unread_data_downloads_are_judged_by_the_restore_s_counters(
    tmp_path: Path, counters: dict[str, Any] | None, status: str
) -> None:
    report = _audit(tmp_path, _without_downloads(counters), "DataDownload")
    finding = _finding(report, "RR-RST-001")
    assert finding["status"] == status, finding["message"]
    if status == "PASS":
        reasons = " ".join(d["reason"] for d in finding["evidence"]["disks"])
        assert "restoreItemOperationsAttempted=2, Completed=2, Failed=0" in reasons, reasons


def test_a_partially_failed_restore_with_counters_proves_nothing(tmp_path: Path) -> None:
    docs = _without_downloads(
        {"restoreItemOperationsAttempted": 2, "restoreItemOperationsCompleted": 2}
    )
    _of(docs, "Restore")[0]["status"]["phase"] = "PartiallyFailed"
    finding = _finding(_audit(tmp_path, docs, "DataDownload"), "RR-RST-001")
    assert finding["status"] == "FAIL", finding["message"]
    assert "PartiallyFailed" in finding["message"]


def test_an_unread_pod_volume_restore_list_says_nothing_of_a_data_mover_disk(
    tmp_path: Path,
) -> None:
    """The DataDownload list was read and names neither disk; the PodVolumeRestores
    (file-system backup's) were not read, and no disk of this VM was copied that way: the
    drill brought no data back (FAIL), not 'unknown' because of the other kind."""
    docs = [d for d in _docs(FIXTURE) if d["kind"] != "DataDownload"]
    finding = _finding(_audit(tmp_path, docs, "PodVolumeRestore"), "RR-RST-001")
    assert finding["status"] == "FAIL", finding["message"]
    reasons = " ".join(d["reason"] for d in finding["evidence"]["disks"])
    assert "no DataDownload of Restore drill-20261128 names PVC" in reasons, reasons
