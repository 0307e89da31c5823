"""docs/fleet.md: its YAML parses, and its per-cluster patches build on config/deploy/fleet.

The ApplicationSet's kustomize patch and the PolicyGenerator's patch are applied with
``kubectl kustomize`` to a copy of ``config/`` (as Argo CD and the Policy Generator do);
``serve`` takes the name they set from ``AUDITOR_CLUSTER_NAME``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from auditor.config import parse_settings
from tests.conftest import REPO
from tests.service_support import free_port, write_yaml

DOC = REPO / "docs" / "fleet.md"
needs_kubectl = pytest.mark.skipif(shutil.which("kubectl") is None, reason="needs kubectl")


def _documents() -> list[dict[str, Any]]:
    blocks = re.findall(r"```yaml\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    return [d for block in blocks for d in yaml.safe_load_all(block) if d]


def _build(tmp: Path, patches: list[dict[str, Any]]) -> list[dict[str, Any]]:
    shutil.copytree(REPO / "config", tmp / "config")
    overlay = tmp / "overlay"
    overlay.mkdir()
    write_yaml(
        overlay / "kustomization.yaml",
        {"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization",
         "resources": ["../config/deploy/fleet"], "patches": patches},
    )  # fmt: skip
    out = subprocess.run(
        ["kubectl", "kustomize", str(overlay)], check=True, capture_output=True, text=True,
        timeout=60,
    ).stdout  # fmt: skip
    return [d for d in yaml.safe_load_all(out) if d]


def _env(built: list[dict[str, Any]]) -> dict[str, Any]:
    dep = next(d for d in built if d["kind"] == "Deployment")
    [container] = dep["spec"]["template"]["spec"]["containers"]
    return {e["name"]: e.get("value") for e in container["env"]}


def test_every_yaml_snippet_parses_into_known_kinds() -> None:
    kinds = sorted(d["kind"] for d in _documents())
    assert kinds == sorted(
        ["ApplicationSet", "ApplicationSet", "ManagedClusterSetBinding", "Placement",
         "GitOpsCluster", "ConfigMap", "PolicyGenerator"]
    )  # fmt: skip
    appsets = [d for d in _documents() if d["kind"] == "ApplicationSet"]
    # the Argo CD and the ACM variant deploy the same thing; only the cluster list differs
    assert appsets[0]["spec"]["template"]["spec"] == appsets[1]["spec"]["template"]["spec"]
    assert appsets[1]["spec"]["generators"][0]["clusterDecisionResource"]["configMapRef"] == (
        "acm-placement"
    )


@needs_kubectl
def test_applicationset_patch_names_each_cluster(tmp_path: Path) -> None:
    appset = next(d for d in _documents() if d["kind"] == "ApplicationSet")
    source = appset["spec"]["template"]["spec"]["source"]
    assert (REPO / source["path"] / "kustomization.yaml").is_file()
    patches = yaml.safe_load(
        yaml.safe_dump(source["kustomize"]["patches"]).replace("{{.name}}", "ocp-east")
    )
    built = _build(tmp_path, patches)
    assert _env(built)["AUDITOR_CLUSTER_NAME"] == "ocp-east"
    cm = next(d for d in built if d["kind"] == "ConfigMap" and "auditor.yaml" in d["data"])
    settings = parse_settings(yaml.safe_load(cm["data"]["auditor.yaml"]), path=tmp_path / "c")
    assert settings.cluster_name is None  # each cluster's name comes from the environment
    assert settings.publish is not None and settings.publish["url"].startswith("s3://")
    assert [(s.id, s.publish, s.period_report) for s in settings.schedules] == [
        ("daily-audit", True, False), ("monthly-report", True, True),
    ]  # fmt: skip


@needs_kubectl
def test_policy_generator_patch_applies_to_the_deployment(tmp_path: Path) -> None:
    gen = next(d for d in _documents() if d["kind"] == "PolicyGenerator")
    [manifest] = gen["policies"][0]["manifests"]
    assert manifest["path"] == "config/deploy/fleet"
    built = _build(tmp_path, [{"patch": yaml.safe_dump(p)} for p in manifest["patches"]])
    env = _env(built)
    assert env["AUDITOR_CLUSTER_NAME"] == '{{ fromClusterClaim "name" }}'
    assert env["HOME"] == "/var/lib/auditor"  # merged into the list, nothing replaced


def test_serve_takes_the_cluster_name_from_the_environment(tmp_path: Path) -> None:
    cfg = write_yaml(
        tmp_path / "auditor.yaml",
        {
            "source": {"type": "directory", "path": str(REPO / "examples" / "small-cluster")},
            "report": {"out_dir": str(tmp_path / "reports"), "formats": ["json"]},
            "schedules": [{"id": "fast", "cron": "*/2 * * * * *"}],
            "service": {"state_dir": str(tmp_path / "state"),
                        "metrics": {"host": "127.0.0.1", "port": free_port()}},
        },
    )  # fmt: skip
    auditor = str(Path(sys.executable).with_name("auditor"))
    env = {**os.environ, "AUDITOR_CLUSTER_NAME": "ocp-east"}
    with open(tmp_path / "serve.log", "wb") as log:
        proc = subprocess.Popen([auditor, "serve", "--config", str(cfg)], stdout=log,
                                stderr=subprocess.STDOUT, env=env)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        reports: list[Path] = []
        while not reports and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
            reports = sorted((tmp_path / "reports" / "fast").glob("*/report.json"))
        assert reports, (tmp_path / "serve.log").read_text()
        report = json.loads(reports[0].read_text())
        assert report["cluster"]["name"] == "ocp-east"
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
