"""Bug classes bc39: restore failures a verdict was better than.

1. A DataVolume with no ``status.phase`` read as a finished one: RR-BKP-004 passed on the
   Backup's counters. CDI writes the phase with omitempty, so none is phase "" (not yet
   reconciled) or a status the export stripped; either way it cannot be shown Succeeded, and
   the kubevirt plugin marks the PVC of a DataVolume that is not Succeeded in progress and
   restores it unfilled (kubevirt-velero-plugin pkg/plugin/dv_backup_item_action.go
   ``handlePVC``, pvc_restore_item_action.go). The capture is now unknown (ERROR).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tests.test_check_fixtures import audit_fixture
from tests.test_evidence_gaps import FIXTURES, _docs, _finding

Docs = list[dict[str, Any]]

#: vm1 with DataVolume volumes vm1-root and vm1-data, captured by Completed DataUploads.
DATA_MOVER = "RR-BKP-004/pass-data-mover.yaml"


def _audit(tmp_path: Path, docs: Docs, fixture: str = DATA_MOVER) -> dict[str, Any]:
    """Audit ``docs`` as the catalog fixture ``fixture`` is audited (its header kept: every
    kind read in full but those it marks unavailable)."""
    head = [ln for ln in (FIXTURES / fixture).read_text().splitlines() if ln.startswith("#")]
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "c.yaml"
    path.write_text("\n".join(head) + "\n" + yaml.safe_dump_all(docs))
    return audit_fixture(path)


def _datavolume(name: str, status: dict[str, Any] | None) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "apiVersion": "cdi.kubevirt.io/v1beta1",
        "kind": "DataVolume",
        "metadata": {
            "name": name,
            "namespace": "app",
            "uid": f"uid-dv-{name}",
            "creationTimestamp": "2026-01-10T09:59:30Z",
        },
        "spec": {"source": {"blank": {}}, "storage": {"resources": {"requests": {"storage": "20Gi"}}}},
    }
    if status is not None:
        doc["status"] = status
    return doc


def _with_root_dv(status: dict[str, Any] | None) -> Docs:
    docs = _docs(DATA_MOVER)
    docs.append(_datavolume("vm1-root", status))
    docs.append(_datavolume("vm1-data", {"phase": "Succeeded", "progress": "100.0%"}))
    return docs


def test_succeeded_datavolumes_keep_the_pass(tmp_path: Path) -> None:
    report = _audit(tmp_path, _with_root_dv({"phase": "Succeeded", "progress": "100.0%"}))
    assert _finding(report, "RR-BKP-004")["status"] == "PASS"


def test_a_datavolume_without_a_phase_is_not_evidenced(tmp_path: Path) -> None:
    for status in ({"claimName": "vm1-root"}, None):
        report = _audit(tmp_path / str(bool(status)), _with_root_dv(status))
        f = _finding(report, "RR-BKP-004")
        assert (f["status"], f["severity"]) == ("ERROR", "high")
        assert "DataVolume vm1-root has no status.phase" in f["message"]
        entry = next(v for v in report["vms"] if v["name"] == "vm1")
        assert entry["readiness"] == "UNKNOWN"


def test_a_datavolume_in_progress_still_fails(tmp_path: Path) -> None:
    report = _audit(tmp_path, _with_root_dv({"phase": "ImportInProgress"}))
    f = _finding(report, "RR-BKP-004")
    assert (f["status"], f["severity"]) == ("FAIL", "high")
