"""Red-team round rt33: restores without the kubevirt Velero plugin, containerDisk pull
secrets, and the core passt binding.

Each test changes one project fixture the way a real cluster drifts, and asserts the verdict
beside the healthy shape, which keeps its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.test_evidence_gaps import FIXTURES, _complete, _docs, _finding, _of

Docs = list[dict[str, Any]]

#: app/vm1, running, disks the dataVolume volumes vm1-root and vm1-data (PVCs, no DataVolume
#: objects), namespace Backups by CSI snapshot; the DPA's defaultPlugins lack kubevirt
NO_PLUGIN = "RR-PLT-004/fail-no-kubevirt-plugin.yaml"
#: the same cluster with kubevirt in the DPA's defaultPlugins
PLUGIN = "RR-PLT-004/pass.yaml"


def _readiness(report: dict[str, Any], vm: str = "vm1") -> str:
    return str(next(v for v in report["vms"] if v["name"] == vm)["readiness"])


def _add_datavolume(docs: Docs, name: str, **annotations: str) -> dict[str, Any]:
    """Give PVC app/``name`` the Succeeded standalone DataVolume that filled it."""
    dv: dict[str, Any] = {
        "apiVersion": "cdi.kubevirt.io/v1beta1",
        "kind": "DataVolume",
        "metadata": {
            "name": name,
            "namespace": "app",
            "creationTimestamp": "2026-01-10T10:00:00Z",
            "annotations": dict(annotations),
        },
        "spec": {
            "source": {"http": {"url": "https://example.com/rhel9.qcow2"}},
            "storage": {"storageClassName": "delete-sc"},
        },
        "status": {"phase": "Succeeded", "progress": "100.0%"},
    }
    docs.append(dv)
    return dv


def test_a_datavolume_restored_without_the_plugin_is_refused_by_cdi(tmp_path: Path) -> None:
    """Velero without the kubevirt plugin restores the DataVolume and its PVC without owner
    references and without the plugin's populatedFor/prePopulated marks: CDI refuses the PVC
    ("already exists and is not managed by DataVolume"), the DataVolume never succeeds and
    the VM does not start. The VM was READY; only RR-PLT-004 (medium) spoke."""
    docs = _docs(NO_PLUGIN)
    base = _complete(tmp_path / "base", NO_PLUGIN, docs)
    assert _readiness(base) == "READY"
    _add_datavolume(docs, "vm1-root")
    # CDI's DataVolumeClaimAdoption gate seen off (the CDIConfig CDI reads); unseen, the
    # refusal is unknown (tests/test_leftovers_lo34.py)
    docs.append(
        {
            "apiVersion": "cdi.kubevirt.io/v1beta1",
            "kind": "CDIConfig",
            "metadata": {"name": "config"},
            "spec": {"featureGates": ["HonorWaitForFirstConsumer"]},
        }
    )
    report = _complete(tmp_path / "dv", NO_PLUGIN, docs)
    finding = _finding(report, "RR-BKP-004")
    assert finding["status"] == "FAIL"
    assert finding["severity"] == "high"
    assert "vm1-root" in finding["message"]
    assert "not managed by the DataVolume" in finding["message"]
    # the fix names the plugin or the adoption annotation, not labels
    assert "cdi.kubevirt.io/allowClaimAdoption=true" in finding["remediation"]
    assert "oc label pvc" not in finding["remediation"]
    assert _readiness(report) != "READY"


@pytest.mark.parametrize(
    ("where", "annotations"),
    [
        ("dv", {"cdi.kubevirt.io/allowClaimAdoption": "true"}),
        ("pvc", {"cdi.kubevirt.io/storage.populatedFor": "vm1-root"}),
    ],
)
def test_a_datavolume_marked_for_adoption_restores_without_the_plugin(
    tmp_path: Path, where: str, annotations: dict[str, str]
) -> None:
    """CDI adopts a PVC marked populated for the DataVolume, or one its DataVolume may adopt
    (KubeVirt writes allowClaimAdoption on the DataVolumes of dataVolumeTemplates)."""
    docs = _docs(NO_PLUGIN)
    if where == "dv":
        _add_datavolume(docs, "vm1-root", **annotations)
    else:
        _add_datavolume(docs, "vm1-root")
        pvc = next(
            p for p in _of(docs, "PersistentVolumeClaim") if p["metadata"]["name"] == "vm1-root"
        )
        pvc["metadata"].setdefault("annotations", {}).update(annotations)
    report = _complete(tmp_path, NO_PLUGIN, docs)
    assert _finding(report, "RR-BKP-004")["status"] == "PASS"
    assert _readiness(report) == "READY"


def test_a_datavolume_adoption_annotation_that_is_no_bool_does_not_adopt(tmp_path: Path) -> None:
    """CDI parses allowClaimAdoption with strconv.ParseBool: "yes" is an error, no adoption."""
    docs = _docs(NO_PLUGIN)
    _add_datavolume(docs, "vm1-root", **{"cdi.kubevirt.io/allowClaimAdoption": "yes"})
    report = _complete(tmp_path, NO_PLUGIN, docs)
    assert _finding(report, "RR-BKP-004")["status"] == "FAIL"


def test_a_datavolume_with_the_plugin_restores(tmp_path: Path) -> None:
    """The plugin marks both objects in the backup: the healthy shape stays READY."""
    docs = _docs(PLUGIN)
    _add_datavolume(docs, "vm1-root")
    report = _complete(tmp_path, PLUGIN, docs)
    assert _finding(report, "RR-BKP-004")["status"] == "PASS"
    assert _readiness(report) == "READY"


def test_a_datavolume_left_out_of_the_backup_is_not_refused(tmp_path: Path) -> None:
    """No DataVolume restored, nothing for CDI to refuse: the PVC comes back as a PVC."""
    docs = _docs(NO_PLUGIN)
    _add_datavolume(docs, "vm1-root")
    for backup in _of(docs, "Backup"):
        backup["spec"]["excludedResources"] = ["datavolumes.cdi.kubevirt.io"]
    report = _complete(tmp_path, NO_PLUGIN, docs)
    assert _finding(report, "RR-BKP-004")["status"] == "PASS"


def test_a_datavolume_where_no_dpa_shows_the_plugin_is_unknown(tmp_path: Path) -> None:
    """Plain Velero (no DataProtectionApplication): whether the plugin runs is not seen, so
    an unmarked DataVolume's restore is not evidenced (ERROR), never READY."""
    docs = [d for d in _docs(NO_PLUGIN) if d["kind"] != "DataProtectionApplication"]
    base = _complete(tmp_path / "base", NO_PLUGIN, docs)
    assert _finding(base, "RR-BKP-004")["status"] == "PASS"
    _add_datavolume(docs, "vm1-root")
    report = _complete(tmp_path / "dv", NO_PLUGIN, docs)
    finding = _finding(report, "RR-BKP-004")
    assert finding["status"] == "ERROR"
    assert "not seen" in finding["message"]
    assert _readiness(report) != "READY"


def test_openshift_virtualization_adopts_the_restored_pvc(tmp_path: Path) -> None:
    """The HyperConverged operator turns CDI's DataVolumeClaimAdoption gate on: a PVC CDI
    made there (labelled part-of hyperconverged-cluster) is adopted on restore."""
    docs = _docs(NO_PLUGIN)
    _add_datavolume(docs, "vm1-root")
    pvc = next(p for p in _of(docs, "PersistentVolumeClaim") if p["metadata"]["name"] == "vm1-root")
    pvc["metadata"]["labels"] = {"app.kubernetes.io/part-of": "hyperconverged-cluster"}
    report = _complete(tmp_path, NO_PLUGIN, docs)
    assert _finding(report, "RR-BKP-004")["status"] == "PASS"
    assert _readiness(report) == "READY"


# -- KubeVirt's core passt binding (v1.8+) ---------------------------------------------------


def _passt_binding(docs: Docs) -> None:
    """Bind app/vm1's pod-network NIC ``default`` with ``passtBinding: {}``."""
    vm = next(d for d in _of(docs, "VirtualMachine") if d["metadata"]["name"] == "vm1")
    nic = vm["spec"]["template"]["spec"]["domain"]["devices"]["interfaces"][0]
    assert nic["name"] == "default"
    del nic["masquerade"]
    nic["passtBinding"] = {}


def test_the_core_passt_binding_is_named(tmp_path: Path) -> None:
    """``passtBinding`` (kubevirt core v1 InterfacePasstBinding) was no binding the auditor
    knew: the recovery card showed the NIC without one."""
    fixture = "RR-NIC-002/pass.yaml"
    docs = _docs(fixture)
    _passt_binding(docs)
    report = _complete(tmp_path, fixture, docs)
    vm = next(v for v in report["vms"] if v["name"] == "vm1")
    bindings = {n["name"]: n["binding"] for n in vm["recovery_card"]["nics"]}
    assert bindings == {"default": "passtBinding", "vlan": "bridge"}
    assert _readiness(report) == "READY"


def test_a_mac_shared_through_the_core_passt_binding_is_no_layer2_collision(
    tmp_path: Path,
) -> None:
    """passtBinding serves the pod network only (kubevirt pkg/network/admitter/passt.go): its
    MAC stays inside the pod, like masquerade's, so a copy's MAC is a low finding; the
    evidence names the binding."""
    fixture = "RR-NIC-002/fail-clone-pod-network-mac.yaml"
    docs = _docs(fixture)
    _passt_binding(docs)
    finding = _finding(_complete(tmp_path, fixture, docs), "RR-NIC-002")
    assert finding["status"] == "FAIL"
    assert finding["severity"] == "low"
    assert finding["evidence"]["duplicates"][0]["mine"]["binding"] == "passtBinding"


# -- pull Secrets left out of the backup ------------------------------------------------------

#: app/vm1 whose cloud-init reads Secret vm1-cloudinit, namespace Backups with no label
#: selector and the kubevirt Velero plugin (RR-BKP-012 PASS)
IN_SCOPE = "RR-BKP-012/pass-secret-in-scope.yaml"


def _pull_secret_vm(docs: Docs, where: str) -> None:
    """Drop app/vm1's cloud-init (a hard reference of its own) and give it a pull Secret
    ``pull``: on a containerDisk volume, or on a kernel boot container."""
    vm = next(d for d in _of(docs, "VirtualMachine") if d["metadata"]["name"] == "vm1")
    spec = vm["spec"]["template"]["spec"]
    gone = {v["name"] for v in spec["volumes"] if "cloudInitNoCloud" in v}
    spec["volumes"] = [v for v in spec["volumes"] if v["name"] not in gone]
    disks = spec["domain"]["devices"]["disks"]
    spec["domain"]["devices"]["disks"] = [d for d in disks if d["name"] not in gone]
    image = {"image": "registry.corp.example/vm/tools:1", "imagePullSecret": "pull"}
    if where == "containerDisk":
        spec["volumes"].append({"name": "tools", "containerDisk": image})
        spec["domain"]["devices"]["disks"].append({"name": "tools", "disk": {"bus": "virtio"}})
    else:
        spec["domain"]["firmware"]["kernelBoot"] = {
            "container": {**image, "kernelPath": "/boot/vmlinuz"}
        }


@pytest.mark.parametrize("where", ["containerDisk", "kernelBoot"])
def test_a_left_out_pull_secret_is_high(tmp_path: Path, where: str) -> None:
    """KubeVirt puts the pull Secret in the launcher pod's imagePullSecrets; the kubelet,
    missing it, pulls without credentials ("the image pull may not succeed": kubelet
    getPullSecretsForPod), which the registry the VM names credentials for refuses: the
    restored VM cannot start. A containerDisk's was FAIL medium (AT_RISK); a kernel boot
    container's was not seen at all (READY)."""
    docs = _docs(IN_SCOPE)
    _pull_secret_vm(docs, where)
    kept = _complete(tmp_path / "kept", IN_SCOPE, docs)
    assert _finding(kept, "RR-BKP-012")["status"] == "PASS"
    for backup in _of(docs, "Backup"):
        backup["spec"]["excludedResources"] = ["secrets"]
    report = _complete(tmp_path / "out", IN_SCOPE, docs)
    finding = _finding(report, "RR-BKP-012")
    assert (finding["status"], finding["severity"]) == ("FAIL", "high"), finding["message"]
    assert "Secret pull" in finding["message"]
    assert _readiness(report) == "NOT_READY"


def test_an_unread_datavolume_list_without_the_plugin_is_unknown(tmp_path: Path) -> None:
    """The DataVolume list forbidden: whether vm1-root's DataVolume exists, unmarked, is not
    read. Without the plugin that was READY; the disk's restore is now not evidenced."""
    from tests.test_check_fixtures import audit_fixture

    header = (FIXTURES / NO_PLUGIN).read_text().splitlines()[0]
    path = tmp_path / "c.yaml"
    path.write_text(f"{header}\n# unavailable: DataVolume\n" + yaml.safe_dump_all(_docs(NO_PLUGIN)))
    report = audit_fixture(path)
    finding = _finding(report, "RR-BKP-004")
    assert finding["status"] == "ERROR", finding["message"]
    assert "DataVolume list was not read whole" in finding["message"]
    assert _readiness(report) != "READY"


def test_an_unread_datavolume_list_stays_unknown_with_the_adoption_gate_on(
    tmp_path: Path,
) -> None:
    """With CDI's DataVolumeClaimAdoption gate on (lo34 reads it), an unread DataVolume may
    still carry ``allowClaimAdoption: "false"``, which CDI reads before and instead of the
    gate: the restore is not evidenced (lo34 left it a PASS, the VM READY)."""
    from tests.test_check_fixtures import audit_fixture

    header = (FIXTURES / NO_PLUGIN).read_text().splitlines()[0]
    docs = _docs(NO_PLUGIN) + [
        {
            "apiVersion": "cdi.kubevirt.io/v1beta1",
            "kind": "CDIConfig",
            "metadata": {"name": "config"},
            "spec": {"featureGates": ["DataVolumeClaimAdoption"]},
        }
    ]
    path = tmp_path / "c.yaml"
    path.write_text(f"{header}\n# unavailable: DataVolume\n" + yaml.safe_dump_all(docs))
    report = audit_fixture(path)
    finding = _finding(report, "RR-BKP-004")
    assert finding["status"] == "ERROR", finding["message"]
    assert "allowClaimAdoption annotation, unread" in finding["message"]
    assert _readiness(report) != "READY"
