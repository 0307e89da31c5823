"""False-alarm round fp24: the rules that landed in rt18/rt22, probed with healthy shapes
real clusters produce. Each test holds a healthy (or better-evidenced) shape to the verdict
its evidence allows, beside the rule's true positive, which keeps its finding.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.test_evidence_gaps import _complete, _docs, _finding

Docs = list[dict[str, Any]]

#: vm1 in namespace app, two daily Completed Backups of app holding it and its disks: READY.
HEALTHY = "RR-BKP-001/pass.yaml"


def _vm(report: dict[str, Any], name: str = "vm1") -> dict[str, Any]:
    return next(v for v in report["vms"] if v["name"] == name)


def _label_app(docs: Docs, value: str = "true") -> Docs:
    for d in docs:
        if d["kind"] == "Namespace" and d["metadata"]["name"] == "app":
            d["metadata"].setdefault("labels", {})["velero.io/exclude-from-backup"] = value
    return docs


# -- a namespace labelled velero.io/exclude-from-backup after its Backups -------------------


def test_a_namespace_labelled_after_its_backups_is_still_in_them(tmp_path: Path) -> None:
    """Velero (v1.10+, velero#2413, https://github.com/vmware-tanzu/velero/pull/5178) appends
    each labelled namespace to the Backup request's spec.excludedNamespaces in
    prepareBackupRequest and patches the Backup with it before it runs
    (pkg/controller/backup_controller.go). Completed Backups whose excludedNamespaces do not
    name the namespace were taken before the label (or by a Velero before 1.10, which left
    the namespace's contents in): they hold the VM and its disks. The label read now made
    RR-BKP-001 FAIL high and the VM NOT_READY."""
    base = _complete(tmp_path / "base", HEALTHY, _docs(HEALTHY))
    report = _complete(tmp_path, HEALTHY, _label_app(_docs(HEALTHY)))
    assert _finding(report, "RR-BKP-001")["status"] == "PASS", _finding(report, "RR-BKP-001")
    assert _finding(report, "RR-BKP-004")["status"] == "PASS"
    assert _vm(report)["readiness"] == _vm(base)["readiness"]


def test_a_backup_taken_with_the_label_lists_the_namespace_and_leaves_the_vm_out(
    tmp_path: Path,
) -> None:
    """The true positive as Velero writes it: the Backups carry the labelled namespace in
    spec.excludedNamespaces even when they include it by name (Velero's exclusion wins), and
    the finding names the label."""
    docs = _label_app(_docs(HEALTHY))
    for d in docs:
        if d["kind"] == "Backup":
            d["spec"]["excludedNamespaces"] = ["app"]
    report = _complete(tmp_path, HEALTHY, docs)
    finding = _finding(report, "RR-BKP-001")
    assert (finding["status"], finding["severity"]) == ("FAIL", "high"), finding["message"]
    assert "velero.io/exclude-from-backup=true" in finding["message"]
    assert _vm(report)["readiness"] == "NOT_READY"


@pytest.mark.parametrize("phase", ["New", None])
def test_a_backup_not_yet_prepared_takes_the_label_read_now(
    tmp_path: Path, phase: str | None
) -> None:
    """A Backup Velero has not prepared yet will exclude the labelled namespace: it is no
    copy of the VM (and, not Completed, no restore point either)."""
    docs = _label_app(_docs(HEALTHY))
    for d in docs:
        if d["kind"] == "Backup":
            if phase is None:
                d.pop("status", None)
            else:
                d["status"] = {"phase": phase}
    report = _complete(tmp_path, HEALTHY, docs)
    assert _finding(report, "RR-BKP-001")["status"] != "PASS"
    assert _vm(report)["readiness"] != "READY"
