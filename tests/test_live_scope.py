"""Live scope (issue 14 item 6): ``-n`` still reads Velero/OADP where they live.

The loopback API server (tests/kubeapi_server.py) serves the in-repo example cluster:
VMs in billing/web/lab, Velero (Backups, BSL, DPA) in ``velero``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from auditor.cli import main
from auditor.config import AuditSettings
from auditor.pipeline import audit_data
from auditor.sources.base import KindState
from tests.conftest import AUDIT_AT, REPO, report_doc
from tests.kubeapi_server import FakeKubeAPI, Faults, running
from tests.live_support import Live, _export, fast_options, serve, write_kubeconfig

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


def test_a_velero_namespace_where_velero_does_not_run_leaves_backups_unknown(
    tmp_path: Path,
) -> None:
    """``--velero-namespace`` pointing where no DPA or BackupStorageLocation is: Velero's
    objects were not looked for where they are, so its kinds are unavailable and named, and
    no VM is NOT_READY for it (red team: NOT_READY, nothing named)."""
    data, report = _audit(tmp_path, namespaces=("billing",), velero_namespaces=("nope",))
    assert data.state("Backup") is KindState.UNAVAILABLE
    assert any("Velero does not run there" in p.reason for p in data.problems)
    _, full = _audit(tmp_path / "full")
    whole = _readiness(full)
    for vm, readiness in _readiness(report).items():
        assert readiness != "NOT_READY" or whole[vm] == "NOT_READY", vm


class _OddPages(FakeKubeAPI):
    """Answers the Backup list's later pages oddly: without items, or with the same
    continue token forever."""

    def __init__(self, *args: Any, mode: str, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.mode = mode

    def list_response(
        self, path: str, route: tuple[Any, str, str | None], query: dict[str, str]
    ) -> tuple[int, dict[str, Any]]:
        odd = route[0].kind == "Backup"
        if odd and self.mode == "loop":  # every page is the first, always "continued"
            query = {k: v for k, v in query.items() if k != "continue"}
        code, body = super().list_response(path, route, query)
        if not odd or code != 200:
            return code, body
        if self.mode == "loop":
            body["metadata"]["continue"] = "c2FtZQ=="
        elif "continue" in query:
            return 200, {"kind": "Status", "apiVersion": "v1", "metadata": {}}
        return code, body


@pytest.mark.parametrize("mode", ["no-items", "loop"])
def test_an_odd_page_leaves_its_kind_unavailable(tmp_path: Path, mode: str) -> None:
    """A 200 page without items cut the Backup list short while it read as complete, and a
    server repeating its continue token paged forever (red team)."""
    objects, exported = _export(EXAMPLE)
    api = _OddPages(objects, served_kinds=set(exported), mode=mode)
    with running(api) as url:
        kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", url)
        live = Live(api=api, url=url, kubeconfig=kubeconfig)
        data = live.collect(options=fast_options(page_size=2), cluster_name="example")
    assert data.state("Backup") is KindState.UNAVAILABLE
    assert any(p.kind == "Backup" for p in data.problems)
