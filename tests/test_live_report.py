"""The live source gives the same report.json as the directory source; faults give UNKNOWN."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from auditor.cli import main
from auditor.config import AuditSettings
from auditor.kinds import KINDS
from auditor.pipeline import audit_data
from auditor.sources.directory import DirectorySource
from tests.answer_support import answers
from tests.conftest import AUDIT_AT, report_doc
from tests.kubeapi_server import Faults
from tests.live_support import export_dir, serve

AT = "2026-11-30T06:00:00Z"


def _complete_export(tmp: Path) -> Path:
    """The corpus export (symlinked) plus empty lists for the kinds it lacks."""
    root = tmp / "complete-export"
    root.mkdir()
    for path in export_dir().glob("*.yaml"):
        (root / path.name).symlink_to(path)
    for spec in KINDS:
        if not (root / f"{spec.plural}.yaml").exists():
            (root / f"{spec.plural}.yaml").write_text("apiVersion: v1\nkind: List\nitems: []\n")
    return root


def _without_run_facts(report: dict[str, Any]) -> str:
    report = copy.deepcopy(report)
    source = report["run"].pop("source")
    assert source["type"] in ("cluster", "directory")
    # the run id covers the source (auditor.envelope.digest.run_key): the same input read
    # live and from an export is two runs of one input digest
    report["run"].pop("id")
    return json.dumps(report, sort_keys=True)


def test_live_report_equals_directory_report(tmp_path: Path) -> None:
    root = _complete_export(tmp_path)
    settings = AuditSettings(cluster_name="ocp-prod-east")
    with serve(tmp_path, root=root) as live:
        live_report = report_doc(audit_data(live.collect(), settings, at=AUDIT_AT))
    dir_report = report_doc(audit_data(DirectorySource(root).collect(), settings, at=AUDIT_AT))
    assert live_report["run"]["source"]["type"] == "cluster"
    assert live_report["run"]["complete"] is True
    assert live_report["summary"]["vms"] == answers("cluster-export").vm_count
    assert _without_run_facts(live_report) == _without_run_facts(dir_report)


def test_forbidden_backups_make_vms_unknown_never_ready(tmp_path: Path) -> None:
    settings = AuditSettings()
    with serve(tmp_path, root=_complete_export(tmp_path)) as live:
        healthy = report_doc(audit_data(live.collect(), settings, at=AUDIT_AT))
        live.api.faults.forbidden.add("Backup")
        report = report_doc(audit_data(live.collect(), settings, at=AUDIT_AT))
    readiness = {v["name"]: v["readiness"] for v in report["vms"]}
    was_ready = [v["name"] for v in healthy["vms"] if v["readiness"] == "READY"]
    assert was_ready  # the answer key has READY VMs ...
    assert "READY" not in readiness.values()  # ... none stays READY without Backups
    assert {readiness[name] for name in was_ready} == {"UNKNOWN"}
    assert report["run"]["complete"] is False
    assert report["cluster"]["kind_states"]["Backup"] == "unavailable"
    [problem] = report["collection_problems"]
    assert problem["kinds"] == ["Backup"] and "HTTP 403" in problem["reason"]
    fin_db = next(v for v in report["vms"] if v["name"] == "fin-db-01")
    assert "ERROR" in {f["status"] for f in fin_db["findings"]}


def test_missing_velero_is_a_platform_finding_not_a_crash(tmp_path: Path) -> None:
    faults = Faults(missing_groups={"velero.io", "oadp.openshift.io"})
    with serve(tmp_path, root=_complete_export(tmp_path), faults=faults) as live:
        report = report_doc(audit_data(live.collect(), AuditSettings(), at=AUDIT_AT))
    assert report["cluster"]["kind_states"]["Backup"] == "not_installed"
    assert report["collection_problems"] == []
    [plt] = [f for f in report["platform_findings"] if f["check_id"] == "RR-PLT-001"]
    assert plt["status"] == "FAIL" and "No backup system is installed" in plt["message"]
    assert "READY" not in {v["readiness"] for v in report["vms"]}


def test_run_live_and_run_on_collected_export_give_the_same_report(tmp_path: Path) -> None:
    runner = CliRunner()
    with serve(tmp_path) as live:  # the raw corpus: two kinds forbidden
        kc = str(live.kubeconfig)
        live_run = runner.invoke(
            main, ["run", "--kubeconfig", kc, "--at", AT, "--out", str(tmp_path / "live")]
        )
        collected = runner.invoke(
            main, ["collect", "--kubeconfig", kc, "--out", str(tmp_path / "x")]
        )
        assert live.api.methods() == {"GET"}
    assert live_run.exit_code == 0, live_run.output
    assert collected.exit_code == 0, collected.output
    dir_run = runner.invoke(
        main, ["run", "--from-dir", str(tmp_path / "x"), "--at", AT, "--out", str(tmp_path / "d")]
    )
    assert dir_run.exit_code == 0, dir_run.output
    # the kinds the export lacks (forbidden on the server), CDIConfig, CDI, HyperConverged,
    # DeleteBackupRequest and BackupRepository too
    assert "INCOMPLETE (14 collection problem(s)" in live_run.output
    live_report = json.loads((tmp_path / "live" / "report.json").read_text())
    dir_report = json.loads((tmp_path / "d" / "report.json").read_text())
    assert len(live_report["collection_problems"]) == 14
    # the live run is named after its kubeconfig context; the export records no name
    assert live_report["cluster"]["name_source"] == "kubeconfig-context"
    assert live_report["cluster"]["name"] == "loopback"
    assert (dir_report["cluster"]["name"], dir_report["cluster"]["name_source"]) == (
        None,
        "unknown",
    )
    for report in (live_report, dir_report):
        del report["cluster"]["name"], report["cluster"]["name_source"]
    assert _without_run_facts(live_report) == _without_run_facts(dir_report)


def test_run_rejects_from_dir_with_cluster_options(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["run", "--from-dir", str(export_dir()), "-n", "x", "--out", str(tmp_path)]
    )
    assert result.exit_code == 2
    assert "cannot be combined" in result.output
