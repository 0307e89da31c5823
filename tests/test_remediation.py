"""Filled-in fixes (``FindingEntry.remediation``) and root causes (``VmEntry.root_causes``).

Run through the real pipeline: the shared cluster export where it is present, and the
project's own per-check fixtures (which cover the same rules without it).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from auditor.checks import CATALOG
from auditor.envelope.fixes import FAIL_FIXES
from auditor.envelope.rootcause import CAUSES
from tests.conftest import find_corpus
from tests.test_check_fixtures import CASES, _header, audit_fixture

OPEN = ("FAIL", "ERROR")
#: Commands on cluster-scoped objects need no namespace.
CLUSTER_SCOPED = (
    "volumesnapshotcontents",
    "kind: VolumeSnapshotClass",
    "oc patch pv ",
    "oc label namespace ",
)


def _namespaced(cmd: str) -> bool:
    return " -n " in cmd or " -A " in cmd or any(c in cmd for c in CLUSTER_SCOPED)


def _vm(doc: dict[str, Any], ref: str) -> dict[str, Any]:
    ns, name = ref.split("/")
    return next(v for v in doc["vms"] if (v["namespace"], v["name"]) == (ns, name))


def _finding(doc: dict[str, Any], who: str, check_id: str) -> dict[str, Any]:
    findings = doc["platform_findings"] if who == "platform" else _vm(doc, who)["findings"]
    return next(f for f in findings if f["check_id"] == check_id)


def _vmi_uuid(export: Path, ns: str, name: str) -> str:
    """The firmware UUID the VMI runs with, read straight from the export file."""
    for doc in yaml.safe_load_all((export / "virtualmachineinstances.yaml").read_text()):
        for item in doc.get("items", [doc]):
            meta = item["metadata"]
            if (meta.get("namespace"), meta["name"]) == (ns, name):
                return str(item["spec"]["domain"]["firmware"]["uuid"])
    raise AssertionError(f"no VMI {ns}/{name}")


def test_every_check_has_a_fix_template() -> None:
    assert set(FAIL_FIXES) == set(CATALOG)


def test_shared_export_fin_report_fixes_name_vm_and_running_uuid(
    export_doc: dict[str, Any],
) -> None:
    export = find_corpus() / "cluster-export"
    uuid = _vmi_uuid(export, "finance-prod", "fin-report-win2k22")
    vm = _vm(export_doc, "finance-prod/fin-report-win2k22")
    fails = [f for f in vm["findings"] if f["status"] == "FAIL"]
    assert {f["check_id"] for f in fails} >= {"RR-FW-001"}
    for f in fails:
        assert "finance-prod" in f["remediation"] and "fin-report-win2k22" in f["remediation"]
        assert re.search(r"-n (finance-prod|openshift-adp)\b", f["remediation"]), f
    fw = next(f for f in fails if f["check_id"] == "RR-FW-001")
    assert uuid == "ec602b1f-2105-52db-9b1b-1c21ba738517"
    assert f"uuid: {uuid}" in fw["remediation"]
    assert "oc patch vm fin-report-win2k22 -n finance-prod" in fw["remediation"]


def test_shared_export_every_open_finding_has_a_fix_and_closed_ones_none(
    export_doc: dict[str, Any],
) -> None:
    for vm in export_doc["vms"]:
        for f in vm["findings"]:
            if f["status"] in OPEN:
                assert vm["name"] in f["remediation"] or f["status"] == "ERROR", f
                # every command is namespaced
                for cmd in re.findall(r"`((?:oc|virtctl|velero) [^`]*)`", f["remediation"]):
                    assert _namespaced(cmd), cmd
            else:
                assert f["remediation"] is None, f
    for f in export_doc["platform_findings"]:
        assert (f["remediation"] is not None) == (f["status"] in OPEN), f


def test_shared_export_no_usable_backup_is_one_root_cause(export_doc: dict[str, Any]) -> None:
    vm = _vm(export_doc, "eng-sandbox/dev-scratch-02")
    cause = next(c for c in vm["root_causes"] if c["id"] == "no-usable-backup")
    assert cause["check_ids"] == ["RR-BKP-001", "RR-BKP-002", "RR-BKP-004", "RR-STG-001"]
    assert cause["severity"] == "high"
    assert "velero backup create dev-scratch-02-now" in cause["first_action"]
    # never backed up: the RPO is breached, not unknown (the Backup list was read)
    assert vm["backup"]["within_rpo"] is False and vm["backup"]["data_captured"] is False
    # the summary counts VMs per root cause: three VMs lack a usable backup of their data
    assert export_doc["summary"]["vms_by_root_cause"]["no-usable-backup"] == 3
    # a VM whose disks are in no backup is not "within RPO" though its definition is fresh
    cms = _vm(export_doc, "web-platform/web-legacy-cms")
    bkp001 = next(f for f in cms["findings"] if f["check_id"] == "RR-BKP-001")
    assert bkp001["evidence"]["object_only"] is True and bkp001["evidence"]["age_hours"] < 24
    assert cms["backup"]["newest_usable"] is None and cms["backup"]["within_rpo"] is False
    assert cms["backup"]["data_captured"] is False


def test_every_open_finding_is_in_exactly_one_root_cause(export_doc: dict[str, Any]) -> None:
    for vm in export_doc["vms"]:
        open_ids = sorted(f["check_id"] for f in vm["findings"] if f["status"] in OPEN)
        grouped = sorted(cid for c in vm["root_causes"] for cid in c["check_ids"])
        assert grouped == open_ids, vm["name"]


@pytest.mark.parametrize(
    "path",
    [p for p in CASES if _header(p)[0][2] in OPEN],
    ids=lambda p: f"{p.parent.name}/{p.stem}",
)
def test_fixture_fix_is_filled(path: Path) -> None:
    (check_id, who, status, _), unavailable = _header(path)
    doc = audit_fixture(path)
    finding = _finding(doc, who, check_id)
    fix = finding["remediation"]
    assert fix and "CANARY" not in fix
    if who != "platform" and status == "FAIL":
        ns, name = who.split("/")
        assert name in fix and ns in fix, fix
    for cmd in re.findall(r"`((?:oc|virtctl|velero) [^`]*)`", fix):
        assert _namespaced(cmd), cmd
    for kind in unavailable:
        if kind in finding["evidence"].get("unavailable_kinds", []):
            assert "Export" in fix and "grant" in fix, fix
    if who != "platform":
        vm = _vm(doc, who)
        causes = [c for c in vm["root_causes"] if check_id in c["check_ids"]]
        assert len(causes) == 1


def test_fixture_fw001_names_the_running_uuid_not_the_derived_one() -> None:
    path = next(p for p in CASES if p.parent.name == "RR-FW-001" and p.stem == "fail-linux-no-uuid")
    fix = _finding(audit_fixture(path), "app/vm1", "RR-FW-001")["remediation"]
    assert "uuid: 5e1f0c2a-9d3b-4c7e-8a6f-0b1d2c3e4f50" in fix
    assert "133bf63e-9459-5126-9b21-b56e9b3d17b3" not in fix
    assert "serial: SERIAL-0001" not in fix or "SERIAL-0001" in path.read_text()


def test_fixture_unreadable_backups_say_what_to_export() -> None:
    path = next(
        p for p in CASES if p.parent.name == "RR-BKP-001" and p.stem == "error-backups-unreadable"
    )
    doc = audit_fixture(path)
    fix = _finding(doc, "app/vm1", "RR-BKP-001")["remediation"]
    assert "oc get backups.velero.io -A -o yaml" in fix and "get/list" in fix
    vm = _vm(doc, "app/vm1")
    unknown = [c for c in vm["root_causes"] if c["id"] == "unknown-input"]
    errors = sorted(f["check_id"] for f in vm["findings"] if f["status"] == "ERROR")
    assert len(errors) > 1 and unknown and sorted(unknown[0]["check_ids"]) == errors


def test_fixture_no_backup_groups_consequences() -> None:
    path = next(p for p in CASES if p.parent.name == "RR-BKP-001" and p.stem == "fail-no-backup")
    vm = _vm(audit_fixture(path), "app/vm1")
    cause = next(c for c in vm["root_causes"] if c["id"] == "no-usable-backup")
    failing = {f["check_id"] for f in vm["findings"] if f["status"] == "FAIL"}
    members = {"RR-BKP-001", *CAUSES[0].members}
    assert set(cause["check_ids"]) == failing & members
    assert cause["check_ids"][0] == "RR-BKP-001" and len(cause["check_ids"]) >= 2
    assert vm["backup"]["data_captured"] is False
