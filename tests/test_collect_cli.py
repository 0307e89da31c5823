"""`auditor collect` and `auditor preflight` against the loopback API server."""

from __future__ import annotations

import base64
import io
from pathlib import Path

from click.testing import CliRunner
from rich.console import Console

from auditor.cli import main
from auditor.cli.cluster import RichProgress, progress_for
from auditor.sources.base import KindState
from auditor.sources.directory import DirectorySource
from auditor.sources.export import RECORD_NAME
from auditor.sources.progress import NullProgress
from tests.answer_support import answers
from tests.kubeapi_server import Faults
from tests.live_support import comparable, export_dir, serve

CANARY = "CANARY-7f3a-do-not-leak"


def _collect(kubeconfig: Path, out: Path, *extra: str) -> str:
    result = CliRunner().invoke(
        main, ["collect", "--kubeconfig", str(kubeconfig), "--out", str(out), *extra]
    )
    assert result.exit_code == 0, result.output
    return result.output


def test_collect_round_trips_through_the_directory_source(tmp_path: Path) -> None:
    out = tmp_path / "export"
    with serve(tmp_path, faults=Faults(missing_groups={"oadp.openshift.io"})) as live:
        live_data = live.collect()
        output = _collect(live.kubeconfig, out)
        assert live.api.methods() == {"GET"}
    assert "wrote 24 files" in output
    back = DirectorySource(out).collect()
    assert comparable(back) == comparable(live_data)
    assert back.state("DataProtectionApplication") is KindState.NOT_INSTALLED
    assert back.state("VirtualMachinePreference") is KindState.UNAVAILABLE
    # instancetypes, preferences and the kinds the export predates: KubeVirt, CDIConfig, CDI,
    # HyperConverged, DataSource, ControllerRevision, ConfigMap, PodVolumeRestore,
    # DataDownload, DeleteBackupRequest, BackupRepository, Route
    assert len(back.problems) == 14
    original = DirectorySource(export_dir()).collect()
    dpa_free = {k: v for k, v in original.objects.items() if k != "DataProtectionApplication"}
    assert back.objects == dpa_free
    assert (out / "datauploads.yaml").read_text().startswith("apiVersion: v1\nitems: []\n")
    assert not (out / "virtualmachinepreferences.yaml").exists()  # unknown: no file
    assert (out / RECORD_NAME).is_file()
    # collect exports whole objects, not the slim records an audit keeps
    whole = DirectorySource(export_dir(), slim=False).collect().of("VolumeSnapshotContent")
    assert whole and whole != original.of("VolumeSnapshotContent")
    assert DirectorySource(out, slim=False).collect().of("VolumeSnapshotContent") == whole


def test_collect_strips_planted_secrets(tmp_path: Path) -> None:
    encoded = base64.b64encode(f"#cloud-config\npassword: {CANARY}\n".encode()).decode()
    out = tmp_path / "export"
    with serve(tmp_path) as live:
        vm = live.api.objects["VirtualMachine"][0]
        vm["metadata"].setdefault("annotations", {})["corp.example/db-password"] = CANARY
        vm["spec"]["template"]["spec"]["volumes"].append(
            {
                "name": "canary-init",
                "cloudInitNoCloud": {
                    "userData": f"#cloud-config\nchpasswd: {CANARY}\n",
                    "userDataBase64": encoded,
                    "networkData": f"version: 2 # {CANARY}",
                },
            }
        )
        _collect(live.kubeconfig, out)
    text = "".join(p.read_text() for p in out.iterdir())
    assert CANARY not in text and encoded not in text
    back = DirectorySource(out).collect()
    name = vm["metadata"]["name"]
    [got] = [v for v in back.of("VirtualMachine") if v["metadata"]["name"] == name]
    volume = got["spec"]["template"]["spec"]["volumes"][-1]
    assert volume["cloudInitNoCloud"] == {
        "userData": "<redacted>",
        "userDataBase64": "<redacted>",
        "networkData": "<redacted>",
        # the non-secret fact kept while reading (a config without interfaces: unknown)
        "networkDataFacts": {"static": None, "static_macs": [], "dhcp_macs": []},
    }


def test_collect_refuses_a_non_empty_directory(tmp_path: Path) -> None:
    out = tmp_path / "export"
    out.mkdir()
    (out / "old.yaml").write_text("stale: true\n")
    with serve(tmp_path) as live:
        result = CliRunner().invoke(
            main, ["collect", "--kubeconfig", str(live.kubeconfig), "--out", str(out)]
        )
    assert result.exit_code == 2
    assert "exists and is not empty" in result.output


def test_collect_with_an_unreachable_server_exits_2(tmp_path: Path) -> None:
    with serve(tmp_path) as live:
        kubeconfig = live.kubeconfig
    result = CliRunner().invoke(
        main, ["collect", "--kubeconfig", str(kubeconfig), "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 2
    assert "cannot read API discovery" in result.output


def test_preflight_prints_allowed_and_denied(tmp_path: Path) -> None:
    with serve(tmp_path, faults=Faults(ssar_denied={"backups", "restores"})) as live:
        result = CliRunner().invoke(main, ["preflight", "--kubeconfig", str(live.kubeconfig)])
        posts = [p for m, p in live.api.log if m == "POST"]
        methods = live.api.methods()
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert lines[0].split() == ["RESOURCE", "NAMESPACE", "VERB", "ALLOWED"]
    rows = [line.split() for line in lines[1:]]
    assert ["backups.velero.io", "*", "list", "no"] in rows
    assert ["restores.velero.io", "*", "get", "no"] in rows
    assert ["virtualmachines.kubevirt.io", "*", "list", "yes"] in rows
    assert ["persistentvolumeclaims", "*", "get", "yes"] in rows
    assert "4 of 74 permissions denied" in result.output
    assert methods == {"POST"}
    assert set(posts) == {"/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"}


def test_preflight_per_namespace_all_allowed(tmp_path: Path) -> None:
    with serve(tmp_path) as live:
        result = CliRunner().invoke(
            main, ["preflight", "--kubeconfig", str(live.kubeconfig), "-n", "a", "-n", "b"]
        )
    assert result.exit_code == 0, result.output
    rows = [line.split() for line in result.output.splitlines()[1:] if line.strip()]
    assert ["namespaces", "a", "get", "yes"] in rows
    assert ["virtualmachines.kubevirt.io", "b", "list", "yes"] in rows
    assert ["storageclasses.storage.k8s.io", "*", "list", "yes"] in rows


def test_progress_shows_only_on_a_terminal(tmp_path: Path) -> None:
    assert isinstance(progress_for(Console(file=io.StringIO())), NullProgress)
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=120)
    progress = progress_for(console)
    assert isinstance(progress, RichProgress)
    with serve(tmp_path) as live:
        data = live.collect(progress=progress)
    assert len(data.of("VirtualMachine")) == answers("cluster-export").vm_count
    assert "kinds" in screen.getvalue()
