"""Cluster name without --cluster-name: OpenShift's Infrastructure, the context, or "unknown"."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

from auditor.sources.identity import current_context, identity_from_infrastructure
from tests.conftest import REPO, invoke_run

EXAMPLE = REPO / "examples" / "small-cluster"
INFRA = """apiVersion: v1
kind: List
items:
- apiVersion: config.openshift.io/v1
  kind: Infrastructure
  metadata: {name: cluster}
  spec: {}
  status:
    infrastructureName: ocp-east-7xk2p
    apiServerURL: https://api.ocp-east.example.com:6443
"""


def _export(tmp_path: Path, infra: str | None) -> Path:
    root = tmp_path / "export"
    shutil.copytree(EXAMPLE, root)
    if infra is not None:
        (root / "infrastructures.yaml").write_text(infra)
    return root


def _report(root: Path, out: Path, *extra: str) -> dict:  # type: ignore[type-arg]
    result = invoke_run(root, out, *extra)
    assert result.exit_code == 0, result.output
    return json.loads((out / "report.json").read_text())  # type: ignore[no-any-return]


def test_name_from_the_infrastructure_object(tmp_path: Path) -> None:
    report = _report(_export(tmp_path, INFRA), tmp_path / "out")
    assert report["cluster"]["name"] == "ocp-east-7xk2p"
    assert report["cluster"]["name_source"] == "infrastructure"
    assert "Infrastructure" not in report["cluster"]["kind_states"]  # no audit input


def test_configured_name_wins(tmp_path: Path) -> None:
    report = _report(_export(tmp_path, INFRA), tmp_path / "out", "--cluster-name", "prod-east")
    assert (report["cluster"]["name"], report["cluster"]["name_source"]) == ("prod-east", "config")


def test_unknown_name_is_said_plainly_and_the_rest_is_unchanged(tmp_path: Path) -> None:
    plain = _report(_export(tmp_path / "a", None), tmp_path / "o1")
    assert plain["cluster"]["name"] is None and plain["cluster"]["name_source"] == "unknown"
    wrong = INFRA.replace("{name: cluster}", "{name: other}")
    other = _report(_export(tmp_path / "b", wrong), tmp_path / "o2")
    assert other["cluster"]["name"] is None and other["cluster"]["name_source"] == "unknown"
    named = _report(_export(tmp_path / "c", INFRA), tmp_path / "o3")
    # Only the name, its source and the skipped count of the Infrastructure object differ.
    assert _rest(plain)[1] == {}
    for report in (other, named):
        assert report["cluster"]["skipped"] == {"config.openshift.io/v1 Infrastructure": 1}
        assert _rest(report)[0] == _rest(plain)[0]


def _rest(report: dict) -> tuple[dict, dict]:  # type: ignore[type-arg]
    """(report without cluster name/name_source/skipped, source location and run id, which
    covers both, skipped)."""
    doc = copy.deepcopy(report)
    skipped = doc["cluster"].pop("skipped")
    del doc["cluster"]["name"], doc["cluster"]["name_source"], doc["run"]["id"]
    doc["run"]["source"]["location"] = "EXPORT"
    return doc, skipped


def test_infrastructure_parsing_refuses_lookalikes() -> None:
    good = {
        "apiVersion": "config.openshift.io/v1",
        "kind": "Infrastructure",
        "metadata": {"name": "cluster"},
        "status": {"infrastructureName": "c1", "apiServerURL": "https://api.c1:6443"},
    }
    found = identity_from_infrastructure(good)
    assert found is not None
    assert (found.name, found.source, found.api_server_url) == (
        "c1",
        "infrastructure",
        "https://api.c1:6443",
    )
    assert identity_from_infrastructure({**good, "apiVersion": "example.com/v1"}) is None
    assert identity_from_infrastructure({**good, "status": {"infrastructureName": " "}}) is None
    assert identity_from_infrastructure({**good, "status": None}) is None
    assert identity_from_infrastructure({"items": "nope"}) is None


def test_current_context_from_a_kubeconfig(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: admin@ocp-west\n"
        "clusters: [{name: w, cluster: {server: 'https://127.0.0.1:1'}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: admin@ocp-west, context: {cluster: w, user: u}}]\n"
    )
    assert current_context(kubeconfig, None) == "admin@ocp-west"
    assert current_context(kubeconfig, "other") == "other"
    assert current_context(tmp_path / "missing", None) is None
