"""The shipped RBAC grants read on exactly the kinds the audit reads, nothing more."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from auditor.kinds import INFRASTRUCTURE, KINDS

RBAC = Path(__file__).resolve().parents[1] / "config" / "rbac"
READ = {"get", "list", "watch"}
IDENTITY = {(INFRASTRUCTURE.group, INFRASTRUCTURE.plural)}  # the cluster's name only
ALL = {(k.group, k.plural) for k in KINDS} | IDENTITY
NAMESPACED = {(k.group, k.plural) for k in KINDS if k.namespaced} | {("", "namespaces")}
CLUSTER_SCOPED = {(k.group, k.plural) for k in KINDS if not k.namespaced} | IDENTITY


def _docs(name: str) -> dict[tuple[str, str], dict[str, Any]]:
    docs = list(yaml.safe_load_all((RBAC / name).read_text()))
    return {(d["kind"], d["metadata"]["name"]): d for d in docs}


def _granted(role: dict[str, Any]) -> set[tuple[str, str]]:
    granted: set[tuple[str, str]] = set()
    for rule in role["rules"]:
        assert set(rule) == {"apiGroups", "resources", "verbs"}, rule  # no names, no URLs
        assert set(rule["verbs"]) == READ, rule
        for group in rule["apiGroups"]:
            for resource in rule["resources"]:
                assert "*" not in (group, resource) and "/" not in resource, rule
                granted.add((group, resource))
    return granted


def test_clusterrole_reads_exactly_the_kinds() -> None:
    docs = _docs("clusterrole.yaml")
    role = docs[("ClusterRole", "vm-recovery-auditor-read")]
    assert _granted(role) == ALL
    assert ("", "secrets") not in _granted(role) and ("", "pods/log") not in _granted(role)
    binding = docs[("ClusterRoleBinding", "vm-recovery-auditor-read")]
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": "vm-recovery-auditor-read",
    }
    [subject] = binding["subjects"]
    sa = docs[("ServiceAccount", "vm-recovery-auditor")]
    assert (subject["name"], subject["namespace"]) == (
        sa["metadata"]["name"],
        sa["metadata"]["namespace"],
    )


def test_namespaced_variant_splits_role_and_cluster_scoped_clusterrole() -> None:
    docs = _docs("role-namespaced.yaml")
    role = docs[("Role", "vm-recovery-auditor-read")]
    assert _granted(role) == NAMESPACED
    cluster = docs[("ClusterRole", "vm-recovery-auditor-read-cluster-scoped")]
    assert _granted(cluster) == CLUSTER_SCOPED
    assert _granted(role) | _granted(cluster) == ALL
    rb = docs[("RoleBinding", "vm-recovery-auditor-read")]
    assert rb["roleRef"]["kind"] == "Role" and rb["metadata"]["namespace"] == "NAMESPACE"
    crb = docs[("ClusterRoleBinding", "vm-recovery-auditor-read-cluster-scoped")]
    assert crb["roleRef"]["name"] == "vm-recovery-auditor-read-cluster-scoped"
