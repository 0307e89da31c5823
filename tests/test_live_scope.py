"""Live scope (issue 14 item 6): ``-n`` still reads Velero/OADP where they live.

The loopback API server (tests/kubeapi_server.py) serves the in-repo example cluster:
VMs in billing/web/lab, Velero (Backups, BSL, DPA) in ``velero``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from auditor.cli import main
from auditor.config import AuditSettings
from auditor.pipeline import audit_data
from auditor.sources.base import KindState
from tests.conftest import AUDIT_AT, REPO, report_doc
from tests.kubeapi_server import Faults
from tests.live_support import fast_options, serve

EXAMPLE = REPO / "examples" / "small-cluster"


def _readiness(report: dict[str, Any]) -> dict[tuple[str, str], str]:
    return {(vm["namespace"], vm["name"]): vm["readiness"] for vm in report["vms"]}


def _audit(tmp: Path, faults: Faults | None = None, **options: Any) -> tuple[Any, dict[str, Any]]:
    tmp.mkdir(parents=True, exist_ok=True)
    with serve(tmp, root=EXAMPLE, faults=faults) as live:
        data = live.collect(options=fast_options(**options), cluster_name="example")
    settings = AuditSettings(cluster_name="example")
    return data, report_doc(audit_data(data, settings, at=AUDIT_AT))


def test_one_namespace_rates_vms_as_the_full_run_does(tmp_path: Path) -> None:
    _, full = _audit(tmp_path / "full")
    data, scoped = _audit(tmp_path / "scoped", namespaces=("billing",))
    assert data.state("Backup") is KindState.COMPLETE
    assert {o["metadata"]["namespace"] for o in data.of("Backup")} == {"velero"}
    whole, part = _readiness(full), _readiness(scoped)
    assert part and all(ns == "billing" for ns, _ in part)
    for vm, readiness in part.items():
        assert readiness == whole[vm], vm
    not_ready = [vm for vm, r in part.items() if r == "NOT_READY" and whole[vm] != "NOT_READY"]
    assert not_ready == []


def test_unknown_velero_namespace_gives_error_not_not_ready(tmp_path: Path) -> None:
    forbidden = Faults(forbidden={"DataProtectionApplication", "BackupStorageLocation"})
    _, full = _audit(tmp_path / "full")
    data, scoped = _audit(tmp_path / "scoped", faults=forbidden, namespaces=("billing",))
    assert data.state("Backup") is KindState.UNAVAILABLE
    [problem] = [p for p in data.problems if p.kind == "Backup"]
    assert "the namespace that holds Velero/OADP is unknown" in problem.reason
    assert "give --velero-namespace" in problem.reason
    whole = _readiness(full)
    for vm, readiness in _readiness(scoped).items():
        assert readiness != "NOT_READY" or whole[vm] == "NOT_READY", vm
        backup = [
            f for v in scoped["vms"] if (v["namespace"], v["name"]) == vm for f in v["findings"]
        ]
        assert any(f["status"] == "ERROR" for f in backup), vm


def test_velero_namespace_option_overrides_discovery(tmp_path: Path) -> None:
    forbidden = Faults(forbidden={"DataProtectionApplication", "BackupStorageLocation"})
    with serve(tmp_path, root=EXAMPLE, faults=forbidden) as live:
        args = ["run", "--kubeconfig", str(live.kubeconfig), "-n", "billing"]
        args += ["--velero-namespace", "velero", "--at", "2026-11-30T06:00:00Z"]
        args += ["--cluster-name", "example", "--out", str(tmp_path / "out"), "--format", "json"]
        result = CliRunner().invoke(main, args)
        lists = live.api.list_requests()
    assert result.exit_code == 0, result.output
    assert any("/namespaces/velero/backups" in p for p in lists)
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["cluster"]["kind_states"]["Backup"] == "complete"


def _drill(report: dict[str, Any], vm: tuple[str, str]) -> dict[str, Any]:
    [finding] = [
        f
        for v in report["vms"]
        if (v["namespace"], v["name"]) == vm
        for f in v["findings"]
        if f["check_id"] == "RR-RST-001"
    ]
    return finding


def test_one_namespace_reads_the_pvcs_of_its_drills_target_namespace(tmp_path: Path) -> None:
    # drill-billing-db-20261128 restored billing into billing-drill: a PVC there from before
    # the drill would mean Velero skipped it, so the target namespace's PVCs are read too
    with serve(tmp_path, root=EXAMPLE) as live:
        data = live.collect(options=fast_options(namespaces=("billing",)), cluster_name="example")
        lists = live.api.list_requests()
    assert any("/namespaces/billing-drill/persistentvolumeclaims" in p for p in lists)
    assert not any("/namespaces/web/persistentvolumeclaims" in p for p in lists)
    assert data.read_in["PersistentVolumeClaim"] == {"billing", "billing-drill"}
    assert data.read_in["VirtualMachine"] == {"billing"}
    assert "KubeVirt" not in data.read_in  # the one KubeVirt CR is read wherever it is
    assert data.of("KubeVirt")


def test_a_drill_into_an_unread_namespace_is_unknown(tmp_path: Path) -> None:
    data, _ = _audit(tmp_path / "scoped", namespaces=("billing",))
    data.read_in["PersistentVolumeClaim"] = frozenset({"billing"})  # as if billing-drill were not
    report = report_doc(audit_data(data, AuditSettings(cluster_name="example"), at=AUDIT_AT))
    finding = _drill(report, ("billing", "billing-db"))
    assert finding["status"] == "ERROR"
    assert "billing-drill, whose PVCs were not read" in finding["message"]
