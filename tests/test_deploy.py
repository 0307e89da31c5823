"""Static checks of the Containerfile and the kustomize manifests (no container engine here)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from auditor.config import load_settings
from tests.service_support import REPO

DEPLOY = REPO / "config" / "deploy"
RBAC = REPO / "config" / "rbac" / "clusterrole.yaml"
READ_VERBS = {"get", "list", "watch"}


def instructions(path: Path) -> list[tuple[str, str]]:
    """Return ``(INSTRUCTION, arguments)`` with continuation lines joined and comments dropped."""
    out: list[tuple[str, str]] = []
    pending = ""
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        full = pending + line
        pending = ""
        word, _, rest = full.partition(" ")
        out.append((word.upper(), rest.strip()))
    return out


def test_containerfile_instructions() -> None:
    ins = instructions(REPO / "Containerfile")
    args = dict(a.split("=", 1) for i, a in ins if i == "ARG" and "=" in a)
    froms = [a.split()[0].replace("${BASE}", args.get("BASE", "")) for i, a in ins if i == "FROM"]
    # issue 14: Red Hat UBI 9 Python, pinned by digest (never a moving tag)
    assert froms and all(
        f.startswith("registry.access.redhat.com/ubi9/python-311@sha256:")
        and len(f.rsplit(":", 1)[1]) == 64
        for f in froms
    ), froms
    final = ins[max(n for n, (i, _) in enumerate(ins) if i == "FROM") :]
    runs = " ".join(a for i, a in final if i == "RUN")
    for package in ("pango", "harfbuzz", "fontconfig", "dejavu-sans-fonts"):
        assert package in runs
    assert "chgrp -R 0 /var/lib/auditor" in runs and "chmod -R g=u /var/lib/auditor" in runs
    users = [a for i, a in final if i == "USER"]
    assert users and users[-1].split(":")[0].isdigit() and int(users[-1].split(":")[0]) > 0
    assert users[-1].endswith(":0")  # group 0: OpenShift's arbitrary UIDs write there
    assert json.loads(dict(final)["ENTRYPOINT"]) == ["auditor"]
    env = " ".join(a for i, a in final if i == "ENV")
    # the spool (under XDG_CACHE_HOME by default) must be on the volume, not /tmp
    assert "PYTHONDONTWRITEBYTECODE=1" in env and "XDG_CACHE_HOME=/var/lib/auditor/" in env
    build = ins[: max(n for n, (i, _) in enumerate(ins) if i == "FROM")]
    installs = " ".join(a for i, a in build if i == "RUN")
    assert "-c constraints.txt" in installs and (REPO / "constraints.txt").is_file()
    pins = (REPO / "constraints.txt").read_text()
    assert "\ncryptography==" in pins and "\nboto3==" in pins
    assert dict(final)["WORKDIR"] == "/var/lib/auditor"
    assert not any(i == "ADD" for i, _ in ins)  # COPY only, nothing fetched by the build


def docs(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d]


def one(path: Path) -> dict[str, Any]:
    [doc] = docs(path)
    return doc


def test_kustomizations_list_existing_resources() -> None:
    for kust in DEPLOY.rglob("kustomization.yaml"):
        spec = one(kust)
        assert spec["kind"] == "Kustomization"
        for res in spec.get("resources", []):
            target = (kust.parent / res).resolve()
            if target == RBAC.parent.resolve():
                continue  # config/rbac: see test_rbac_is_read_only
            assert target.exists(), f"{kust}: {res}"
            if target.is_dir():
                assert (target / "kustomization.yaml").exists(), f"{kust}: {res}"
    common = one(DEPLOY / "common" / "kustomization.yaml")
    assert "../../rbac" in common["resources"]
    assert common["configMapGenerator"][0] == {"name": "auditor-config", "files": ["auditor.yaml"]}


def test_deployed_config_is_valid() -> None:
    settings = load_settings(DEPLOY / "common" / "auditor.yaml")
    assert settings.source is not None and settings.source.type == "cluster"
    assert str(settings.service.state_dir).startswith("/var/lib/auditor")
    assert str(settings.report.out_dir).startswith("/var/lib/auditor")
    assert {s.id for s in settings.schedules} == {"daily-audit", "monthly-report"}
    # no fixed name: each cluster reports under its own (Infrastructure) name; a name deployed
    # unchanged to several clusters mixed their runs in one archive folder (trial nu20)
    assert settings.cluster_name is None


def pod_checks(pod: dict[str, Any], args_start: str) -> None:
    assert pod["serviceAccountName"] == "vm-recovery-auditor"
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert "runAsUser" not in pod["securityContext"]  # arbitrary UID on OpenShift
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    [c] = pod["containers"]
    assert c["args"][0] == args_start and "/etc/auditor/auditor.yaml" in c["args"]
    sc = c["securityContext"]
    assert sc["readOnlyRootFilesystem"] is True and sc["allowPrivilegeEscalation"] is False
    assert sc["capabilities"] == {"drop": ["ALL"]}
    mounts = {m["mountPath"]: m for m in c["volumeMounts"]}
    assert set(mounts) == {"/etc/auditor", "/etc/auditor-signing", "/var/lib/auditor", "/tmp"}
    assert mounts["/etc/auditor-signing"]["readOnly"] is True
    assert mounts["/etc/auditor"]["readOnly"] is True
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes[mounts["/var/lib/auditor"]["name"]]["persistentVolumeClaim"] == {
        "claimName": "auditor-data"
    }
    assert volumes[mounts["/etc/auditor"]["name"]]["configMap"]["name"] == "auditor-config"
    [secret] = c["envFrom"]
    assert secret["secretRef"] == {"name": "auditor-s3-credentials", "optional": True}
    env = {e["name"]: e["value"] for e in c["env"]}
    # spool and caches on the PVC (issue 14), never on the /tmp emptyDir
    assert env["HOME"].startswith("/var/lib/auditor")
    assert env["XDG_CACHE_HOME"].startswith("/var/lib/auditor/")
    limit = c["resources"]["limits"]["memory"]
    assert limit.endswith("Gi") and int(limit[:-2]) >= 2, "above the PDF child's 1 GiB cap"


def test_deployment_runs_serve_single_replica_recreate() -> None:
    dep = one(DEPLOY / "service" / "deployment.yaml")
    spec = dep["spec"]
    assert spec["replicas"] == 1 and spec["strategy"] == {"type": "Recreate"}
    pod = spec["template"]["spec"]
    pod_checks(pod, "serve")
    [c] = pod["containers"]
    assert c["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert c["readinessProbe"]["httpGet"]["path"] == "/readyz"
    grace = load_settings(DEPLOY / "common" / "auditor.yaml").service.shutdown_grace_seconds
    assert pod["terminationGracePeriodSeconds"] > grace
    assert spec["selector"]["matchLabels"].items() <= spec["template"]["metadata"]["labels"].items()
    svc = one(DEPLOY / "service" / "service.yaml")
    assert svc["spec"]["ports"][0]["port"] == c["ports"][0]["containerPort"] == 9090


def test_cronjob_runs_run_without_overlap() -> None:
    cron = one(DEPLOY / "cronjob" / "cronjob.yaml")
    assert cron["apiVersion"] == "batch/v1" and cron["kind"] == "CronJob"
    assert cron["spec"]["concurrencyPolicy"] == "Forbid"
    pod = cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    assert pod["restartPolicy"] == "Never"
    pod_checks(pod, "run")


def test_pvc_and_namespace() -> None:
    pvc = one(DEPLOY / "common" / "pvc.yaml")
    assert pvc["kind"] == "PersistentVolumeClaim" and pvc["spec"]["accessModes"] == [
        "ReadWriteOnce"
    ]
    ns = one(DEPLOY / "common" / "namespace.yaml")
    assert ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"


@pytest.mark.skipif(
    not RBAC.exists(), reason="config/rbac/clusterrole.yaml lands with the live source"
)
def test_rbac_is_read_only() -> None:
    kinds = {d["kind"]: d for d in docs(RBAC)}
    assert kinds["ServiceAccount"]["metadata"]["namespace"] == "vm-recovery-auditor"
    for rule in kinds["ClusterRole"]["rules"]:
        assert set(rule["verbs"]) <= READ_VERBS, rule
        assert "secrets" not in rule["resources"]
    subject = kinds["ClusterRoleBinding"]["subjects"][0]
    assert (subject["name"], subject["namespace"]) == ("vm-recovery-auditor", "vm-recovery-auditor")


@pytest.mark.skipif(
    not RBAC.exists() or shutil.which("kubectl") is None, reason="needs kubectl and config/rbac"
)
@pytest.mark.parametrize("variant", ["", "cronjob"])
def test_kustomize_builds(variant: str) -> None:
    out = subprocess.run(
        ["kubectl", "kustomize", str(DEPLOY / variant)],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout
    built = [d for d in yaml.safe_load_all(out) if d]
    kinds = sorted(d["kind"] for d in built)
    workload = "CronJob" if variant else "Deployment"
    assert {
        "Namespace",
        "ServiceAccount",
        "ClusterRole",
        "ClusterRoleBinding",
        "ConfigMap",
        "PersistentVolumeClaim",
        workload,
    } <= set(kinds)
    cm = next(d for d in built if d["kind"] == "ConfigMap")
    assert cm["metadata"]["name"].startswith("auditor-config-")  # hashed: changes roll the pods
    assert "auditor.yaml" in cm["data"]
    work = next(d for d in built if d["kind"] == workload)
    spec = work["spec"]["jobTemplate"]["spec"] if variant else work["spec"]
    pod = spec["template"]["spec"]
    config_volume = next(v for v in pod["volumes"] if "configMap" in v)
    assert config_volume["configMap"]["name"] == cm["metadata"]["name"]
    assert all(
        d["metadata"].get("namespace", "vm-recovery-auditor") == "vm-recovery-auditor"
        for d in built
    )
