"""False-alarm round fp35: a Backup with a Velero resource policy (``spec.resourcePolicy``).

Velero 1.14+ deletes each Backup's VolumeSnapshots and VolumeSnapshotContents from the
cluster once it is done (``DeleteReadyVolumeSnapshot``), so only its counters remain. The
auditor did not read the policy ConfigMap and left every disk UNKNOWN. It now reads the
ConfigMap an export holds and applies its volume policies (velero
internal/resourcepolicies/resource_policies.go ``Policies.match``, internal/volumehelper/
volume_policy_helper.go): the counters prove a disk only when the policy provably leaves
every PVC of the Backup's scope to the same method; a policy that skips a disk is a FAIL;
a ConfigMap not read or changed since the Backup stays UNKNOWN, named (an
includeExcludePolicy is applied since round bc36: tests/test_bugclasses_bc36.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tests.test_check_fixtures import audit_fixture
from tests.test_evidence_gaps import _finding, _of
from tests.test_false_alarms_fp30 import _vm
from tests.test_false_alarms_fp34 import FW_PASS, Docs, _load, _write

POLICY = "vm-policy"


def _policy_cm(
    text: str, created: str = "2026-01-01T00:00:00Z", changed: str | None = None
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": POLICY, "namespace": "velero", "creationTimestamp": created}
    if changed is not None:
        meta["managedFields"] = [
            {"manager": "kubectl-edit", "operation": "Update", "time": changed}
        ]
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": meta,
        "data": {"policy.yaml": text},
    }


def _with_policy(docs: Docs, text: str | None, **kw: Any) -> Docs:
    """Both Backups name the policy; their VolumeSnapshotContents are gone (Velero 1.14+
    deletes them); the PVs carry their capacity."""
    for b in _of(docs, "Backup"):
        b["spec"]["resourcePolicy"] = {"kind": "configmap", "name": POLICY}
    for c in _of(docs, "VolumeSnapshotContent"):
        docs.remove(c)
    for pv in _of(docs, "PersistentVolume"):
        size = "10Mi" if "persistent-state" in pv["metadata"]["name"] else "20Gi"
        pv["spec"]["capacity"] = {"storage": size}
    if text is not None:
        docs.append(_policy_cm(text, **kw))
    return docs


def _bkp(report: dict[str, Any]) -> dict[str, Any]:
    """RR-BKP-004: every disk's data is in the newest usable Backup."""
    return _finding(report, "RR-BKP-004")


SNAPSHOT_ALL = """version: v1
volumePolicies:
- conditions:
    csi:
      driver: csi.example.com
  action:
    type: snapshot
"""

SKIP_BIG = """version: v1
volumePolicies:
- conditions:
    capacity: "1Gi,"
  action:
    type: skip
"""

SKIP_OTHER_CLASS = """version: v1
volumePolicies:
- conditions:
    storageClass: [nfs-scratch]
  action:
    type: skip
"""


def _audit(tmp_path: Path, text: str | None, **kw: Any) -> dict[str, Any]:
    header, docs = _load(FW_PASS)
    return audit_fixture(_write(tmp_path, header, _with_policy(docs, text, **kw)))


def test_a_policy_that_snapshots_every_disk_lets_the_counters_prove_them(
    tmp_path: Path,
) -> None:
    """Every PVC of the Backup's scope is on csi.example.com, the policy snapshots each,
    and csiVolumeSnapshotsCompleted is 3 for 3 PVCs: READY (was UNKNOWN)."""
    report = _audit(tmp_path, SNAPSHOT_ALL)
    assert _vm(report)["readiness"] == "READY", [
        (f["check_id"], f["status"], f["message"])
        for f in _vm(report)["findings"]
        if f["status"] not in ("PASS", "NOT_APPLICABLE")
    ]


def test_a_policy_that_matches_no_disk_leaves_the_usual_method(tmp_path: Path) -> None:
    """A skip of another StorageClass matches none of vm1's PVCs: Velero's usual choice
    (a CSI snapshot of each) applies and the counters prove them."""
    report = _audit(tmp_path, SKIP_OTHER_CLASS)
    assert _vm(report)["readiness"] == "READY"


def test_a_policy_that_skips_a_disk_is_a_named_fail(tmp_path: Path) -> None:
    """capacity ``1Gi,`` skips the 20Gi disks: they are not in the Backup (FAIL, named)."""
    report = _audit(tmp_path, SKIP_BIG)
    f = _bkp(report)
    assert f["status"] == "FAIL", f["message"]
    assert "volumePolicies[0] matches PVC vm1-root: action skip" in str(f["evidence"])
    assert _vm(report)["readiness"] not in ("READY", "UNKNOWN")


def test_a_policy_configmap_not_read_stays_unknown_and_named(tmp_path: Path) -> None:
    report = _audit(tmp_path, None)
    assert _vm(report)["readiness"] == "UNKNOWN"
    assert f"ConfigMap velero/{POLICY} (the Backup's spec.resourcePolicy) was not read" in str(
        _bkp(report)
    )


def test_a_policy_changed_or_created_after_the_backup_stays_unknown(tmp_path: Path) -> None:
    """Velero read the ConfigMap when the Backup began: one edited since (managedFields) or
    created since may not be the policy it applied (the audit is at 06:00 on 30 Nov)."""
    report = _audit(tmp_path / "a", SNAPSHOT_ALL, changed="2026-11-30T03:00:00Z")
    assert _vm(report)["readiness"] == "UNKNOWN"
    assert "may have changed since the Backup began" in str(_bkp(report))
    report = _audit(tmp_path / "b", SNAPSHOT_ALL, created="2026-11-30T03:00:00Z")
    assert _vm(report)["readiness"] == "UNKNOWN"
    assert "after the Backup began" in str(_bkp(report))


def test_an_include_exclude_policy_is_applied(tmp_path: Path) -> None:
    """An includeExcludePolicy is combined into the Backup's scoped filters (round bc36; was
    UNKNOWN): one leaving out Secrets keeps the disks (READY); one naming a type by a glob
    stays unknown, named."""
    text = SNAPSHOT_ALL + "includeExcludePolicy:\n  excludedNamespaceScopedResources: [secrets]\n"
    assert _vm(_audit(tmp_path / "a", text))["readiness"] == "READY"
    globbed = text.replace("[secrets]", "['secret*']")
    report = _audit(tmp_path / "b", globbed)
    assert _vm(report)["readiness"] == "UNKNOWN"
    assert "includeExcludePolicy naming resources by a glob" in str(_bkp(report))


def test_a_policy_velero_refuses_stays_unknown(tmp_path: Path) -> None:
    """An unknown condition key: Velero's decoder refuses the policy (KnownFields), so the
    ConfigMap now is not the one the Completed Backup ran with."""
    report = _audit(tmp_path, SNAPSHOT_ALL.replace("csi:", "csiDriver:"))
    assert _vm(report)["readiness"] == "UNKNOWN"
    assert "unknown condition(s) csiDriver" in str(_bkp(report))


def test_a_condition_on_an_unread_pv_stays_unknown(tmp_path: Path) -> None:
    header, docs = _load(FW_PASS)
    docs = _with_policy(docs, SKIP_BIG)
    for pv in _of(docs, "PersistentVolume"):
        if pv["metadata"]["name"] == "pv-app-vm1-data":
            docs.remove(pv)
    report = audit_fixture(_write(tmp_path, header, docs))
    assert _vm(report)["readiness"] != "READY"
    assert "is unknown: a field its conditions read" in str(_bkp(report))


def test_the_policy_text_survives_redaction_without_plugin_parameters() -> None:
    from auditor.redact import redact

    cm = _policy_cm(
        "version: v1\nvolumePolicies:\n- conditions: {}\n  action:\n    type: custom\n"
        "    parameters: {token: s3cr3t}\n"
    )
    out = redact(cm)
    doc = yaml.safe_load(out["data"]["policy.yaml"])
    assert doc["volumePolicies"][0]["action"]["type"] == "custom"
    assert "s3cr3t" not in str(out)


# -- KubeVirt's observedKubeVirtVersion is an image tag, not always a release ------------


def _with_kubevirt(status: dict[str, Any], gates: list[str] | None = None) -> Docs:
    header, docs = _load(FW_PASS)
    # a class to create state PVCs on (without one and no default class RR-PLT-006 fails
    # whatever the version: bc37)
    conf: dict[str, Any] = {"vmStateStorageClass": "retain-sc"}
    if gates is not None:
        conf["developerConfiguration"] = {"featureGates": gates}
    docs.append(
        {
            "apiVersion": "kubevirt.io/v1",
            "kind": "KubeVirt",
            "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
            "spec": {"configuration": conf},
            "status": {"phase": "Deployed", **status},
        }
    )
    return docs


def _plt006(report: dict[str, Any]) -> dict[str, Any]:
    return next(f for f in report["platform_findings"] if f["check_id"] == "RR-PLT-006")


def _audit_kv(tmp_path: Path, status: dict[str, Any], gates: list[str] | None = None) -> Any:
    header, _ = _load(FW_PASS)
    return audit_fixture(_write(tmp_path, header, _with_kubevirt(status, gates)))


def test_a_tag_or_digest_version_falls_back_to_the_operator_release(tmp_path: Path) -> None:
    """virt-operator writes its KUBEVIRT_VERSION tag to observedKubeVirtVersion ("latest"
    when unset, a digest or a nightly build string when deployed so: kubevirt
    pkg/virt-operator/util/config.go getConfig) and its own build to operatorVersion. A
    release there (v1.6.1, the gate GA since 1.5) answers: PASS, where both were ERROR."""
    for i, tag in enumerate(("latest", "sha256:0f1e2d3c", "20260520_abc1234")):
        report = _audit_kv(
            tmp_path / str(i), {"observedKubeVirtVersion": tag, "operatorVersion": "v1.6.1"}
        )
        plt = _plt006(report)
        assert plt["status"] == "PASS", plt["message"]
        assert "status.operatorVersion v1.6.1" in plt["message"]
        assert _finding(report, "RR-FW-002")["status"] == "PASS"


def test_an_old_operator_release_behind_a_tag_still_blocks(tmp_path: Path) -> None:
    """operatorVersion v1.4.0 behind "latest", the gate off: KubeVirt refuses persistent-state
    VMs (FAIL, as for observedKubeVirtVersion v1.4.0; was ERROR)."""
    report = _audit_kv(tmp_path, {"observedKubeVirtVersion": "latest", "operatorVersion": "v1.4.0"})
    plt = _plt006(report)
    assert plt["status"] == "FAIL", plt["message"]
    assert "KubeVirt is 1.4 (status.operatorVersion v1.4.0" in plt["message"]
    assert _finding(report, "RR-FW-002")["status"] == "FAIL"


def test_no_release_anywhere_stays_unknown_and_names_the_values(tmp_path: Path) -> None:
    """A digest and an operator built without a version (v0.0.0-master...): unknown, and the
    message names what was read (it said "no status.observedKubeVirtVersion")."""
    report = _audit_kv(
        tmp_path,
        {"observedKubeVirtVersion": "sha256:0f1e", "operatorVersion": "v0.0.0-master+$Format:%h$"},
    )
    plt = _plt006(report)
    assert plt["status"] == "ERROR"
    assert "observedKubeVirtVersion 'sha256:0f1e'" in plt["message"], plt["message"]
    assert _finding(report, "RR-FW-002")["status"] == "ERROR"


def test_the_gate_listed_makes_the_version_irrelevant(tmp_path: Path) -> None:
    """Where the version does not matter (VMPersistentState listed) a digest is no ERROR."""
    report = _audit_kv(
        tmp_path / "g", {"observedKubeVirtVersion": "sha256:0f1e"}, gates=["VMPersistentState"]
    )
    assert _plt006(report)["status"] == "PASS"
    assert _finding(report, "RR-FW-002")["status"] == "PASS"


# -- the live source GETs the policy ConfigMap a Backup names ----------------------------


def test_the_live_source_gets_the_policy_configmap_a_backup_names(tmp_path: Path) -> None:
    """ConfigMaps are listed only with the change-storage-class selector; the one a Backup's
    spec.resourcePolicy names carries no label, so it is read by name (one GET), with its
    managedFields times. One the GET cannot return stays unread (its volume policies
    unknown, named per PVC)."""
    from tests.live_support import serve

    _, docs = _load(FW_PASS)
    docs = _with_policy(docs, SNAPSHOT_ALL, changed="2026-11-01T00:00:00Z")
    unrelated = _policy_cm(SNAPSHOT_ALL)
    unrelated["metadata"]["name"] = "someone-elses"
    docs.append(unrelated)
    objects: dict[str, list[dict[str, Any]]] = {}
    for d in docs:
        objects.setdefault(d["kind"], []).append(d)
    with serve(tmp_path, objects=objects, served_kinds=set(objects)) as live:
        data = live.collect()
        gets = list(live.api.gets)
    assert gets == [f"/api/v1/namespaces/velero/configmaps/{POLICY}"]
    cms = data.of("ConfigMap")
    assert [c["metadata"]["name"] for c in cms] == [POLICY]
    assert cms[0]["metadata"]["managedFields"] == [{"time": "2026-11-01T00:00:00Z"}]
    assert "volumePolicies" in cms[0]["data"]["policy.yaml"]


def test_volume_policies_match_as_velero_does() -> None:
    """First match wins (Policies.match); capacity "lo,hi" with an open side
    (capacity.isInRange); pvcLabels a selector from the set; a condition on a PV not read is
    unknown, never a miss; an unknown nfs field makes Velero refuse the policy."""
    from datetime import UTC, datetime

    from auditor.inventory.volpolicy import parse_policy_configmap, volume_action

    text = """version: v1
volumePolicies:
- conditions: {pvcLabels: {tier: scratch}}
  action: {type: skip}
- conditions: {capacity: "0,10Gi"}
  action: {type: fs-backup}
- conditions: {}
  action: {type: snapshot}
"""
    began = datetime(2026, 11, 30, 1, tzinfo=UTC)
    policy = parse_policy_configmap(_policy_cm(text), began)
    assert policy.problem is None

    def pvc(labels: dict[str, str] | None = None) -> dict[str, Any]:
        return {"metadata": {"name": "p", "labels": labels}, "status": {"phase": "Bound"}}

    def pv(size: str) -> dict[str, Any]:
        return {"spec": {"capacity": {"storage": size}, "csi": {"driver": "d"}}}

    assert volume_action(policy, pvc({"tier": "scratch"}), pv("5Gi")).action == "skip"
    assert volume_action(policy, pvc({"tier": "gold"}), pv("5Gi")).action == "fs-backup"
    assert volume_action(policy, pvc(), pv("20Gi")).action == "snapshot"
    unread = volume_action(policy, pvc(), None)
    assert (unread.action, unread.known) == (None, False)
    bad = parse_policy_configmap(_policy_cm(text.replace("{}", "{nfs: {host: x}}")), began)
    assert bad.problem is not None and "nfs" in bad.problem


def test_only_the_policy_document_of_a_resource_policy_configmap_is_kept() -> None:
    """A ConfigMap holding a resource policy may hold other entries (a credential beside it)
    and a policy document other top-level keys: only the policy's own keys are kept."""
    from auditor.redact import REDACTED, redact_in_place

    cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "policy", "namespace": "velero"},
        "data": {
            "policy.yaml": "version: v1\nvolumePolicies:\n- conditions:\n    storageClass: [a]\n"
            "  action:\n    type: skip\ntoken: CANARY-policy-token\n",
            "creds.yaml": "password: CANARY-policy-pw\n",
        },
    }
    out = redact_in_place(cm)
    text = str(out)
    assert "CANARY" not in text, text
    assert out["data"]["creds.yaml"] == REDACTED
    assert "volumePolicies" in out["data"]["policy.yaml"]
    assert "skip" in out["data"]["policy.yaml"]
