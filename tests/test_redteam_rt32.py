"""Red-team round rt32: volume kinds a restore cannot bring back, and Backup scoping.

Each test changes one project fixture the way a real cluster drifts, and asserts the verdict
beside the healthy shape, which keeps its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.test_evidence_gaps import _complete, _docs, _finding, _of

Docs = list[dict[str, Any]]

#: app/vm1 whose cloud-init reads Secret vm1-cloudinit (secretRef), namespace Backups with no
#: label selector and the kubevirt Velero plugin: the Secret is taken (RR-BKP-012 PASS)
IN_SCOPE = "RR-BKP-012/pass-secret-in-scope.yaml"


def _readiness(report: dict[str, Any], vm: str = "vm1") -> str:
    return str(next(v for v in report["vms"] if v["name"] == vm)["readiness"])


def _add_volume(docs: Docs, volume: dict[str, Any]) -> None:
    """Give app/vm1 one more volume (a disk names it), or access credentials when ``volume``
    is ``{"accessCredentials": [...]}``."""
    vm = next(d for d in _of(docs, "VirtualMachine") if d["metadata"]["name"] == "vm1")
    spec = vm["spec"]["template"]["spec"]
    if "accessCredentials" in volume:
        spec["accessCredentials"] = volume["accessCredentials"]
        return
    spec["volumes"].append({"name": "extra", **volume})
    spec["domain"]["devices"]["disks"].append({"name": "extra", "disk": {"bus": "virtio"}})


def _exclude(docs: Docs, *resources: str) -> None:
    for backup in _of(docs, "Backup"):
        backup["spec"]["excludedResources"] = list(resources)


# KubeVirt mounts these into the virt-launcher pod (pkg/virt-controller/services/
# rendervolumes.go: addSecretVolume/addConfigMapVolume copy `optional`, handleCloudInitNoCloud,
# handleSysprep and withAccessCredentials set none) or runs the pod as the account
# (template.go): the kubelet does not start a pod whose non-optional Secret/ConfigMap volume is
# missing, and the ServiceAccount admission plugin refuses a pod whose account does not exist
@pytest.mark.parametrize(
    ("volume", "excluded", "named"),
    [
        ({"secret": {"secretName": "app-tls"}}, "secrets", "Secret app-tls"),
        ({"configMap": {"name": "app-conf"}}, "configmaps", "ConfigMap app-conf"),
        ({"sysprep": {"configMap": {"name": "unattend"}}}, "configmaps", "ConfigMap unattend"),
        ({"sysprep": {"secret": {"name": "unattend"}}}, "secrets", "Secret unattend"),
        (
            {"serviceAccount": {"serviceAccountName": "app-sa"}},
            "serviceaccounts",
            "ServiceAccount app-sa",
        ),
        (
            {"cloudInitConfigDrive": {"networkDataSecretRef": {"name": "net"}}},
            "secrets",
            "Secret net",
        ),
        (
            {
                "accessCredentials": [
                    {
                        "sshPublicKey": {
                            "source": {"secret": {"secretName": "keys"}},
                            "propagationMethod": {"noCloud": {}},
                        }
                    }
                ]
            },
            "secrets",
            "Secret keys",
        ),
        # a non-boolean `optional` is not optional (the worse reading)
        ({"secret": {"secretName": "app-tls", "optional": "yes"}}, "secrets", "Secret app-tls"),
    ],
)
def test_a_left_out_object_the_launcher_pod_needs_is_high(
    tmp_path: Path, volume: dict[str, Any], excluded: str, named: str
) -> None:
    """Was FAIL medium (AT_RISK): a Backup whose resource filters leave out a Secret,
    ConfigMap or ServiceAccount the VM mounts restores a VM that cannot start."""
    docs = _docs(IN_SCOPE)
    _add_volume(docs, volume)
    _exclude(docs, excluded)
    report = _complete(tmp_path, IN_SCOPE, docs)
    finding = _finding(report, "RR-BKP-012")
    assert (finding["status"], finding["severity"]) == ("FAIL", "high"), finding["message"]
    assert named in finding["message"]
    assert "virt-launcher pod cannot start" in finding["message"]
    assert _readiness(report) == "NOT_READY"


@pytest.mark.parametrize(
    ("volume", "excluded"),
    [
        ({"secret": {"secretName": "app-tls", "optional": True}}, "secrets"),
        ({"configMap": {"name": "app-conf", "optional": True}}, "configmaps"),
        # a containerDisk's pull Secret is hard since rt33 (tests/test_redteam_rt33.py)
    ],
)
def test_a_left_out_object_the_vm_starts_without_stays_medium(
    tmp_path: Path, volume: dict[str, Any], excluded: str
) -> None:
    """An optional volume's object: the restored VM starts, unconfigured."""
    docs = _docs(IN_SCOPE)
    for vm in _of(docs, "VirtualMachine"):  # drop the cloud-init secretRef (hard) first
        spec = vm["spec"]["template"]["spec"]
        gone = {v["name"] for v in spec["volumes"] if "cloudInitNoCloud" in v}
        spec["volumes"] = [v for v in spec["volumes"] if v["name"] not in gone]
        disks = spec["domain"]["devices"]["disks"]
        spec["domain"]["devices"]["disks"] = [d for d in disks if d["name"] not in gone]
    _add_volume(docs, volume)
    _exclude(docs, excluded)
    report = _complete(tmp_path, IN_SCOPE, docs)
    finding = _finding(report, "RR-BKP-012")
    assert (finding["status"], finding["severity"]) == ("FAIL", "medium"), finding["message"]
    assert _readiness(report) == "AT_RISK"


def test_the_fixture_in_scope_keeps_its_pass(tmp_path: Path) -> None:
    """The healthy shape: no filter leaves the Secret out."""
    report = _complete(tmp_path, IN_SCOPE, _docs(IN_SCOPE))
    assert _finding(report, "RR-BKP-012")["status"] == "PASS"


def test_restore_needs_marks_a_mounted_secret_not_soft() -> None:
    """The bucket check (RR-BKP-008) grades a missing object by ``soft``: a mounted, required
    Secret is not soft, an optional one is; a pull Secret is not (rt33)."""
    from auditor.inventory.needs import restore_needs

    vm = {
        "spec": {
            "template": {
                "spec": {
                    "volumes": [
                        {"name": "a", "secret": {"secretName": "req"}},
                        {"name": "b", "secret": {"secretName": "opt", "optional": True}},
                        {"name": "c", "containerDisk": {"image": "i", "imagePullSecret": "pull"}},
                        # one Secret named twice, once required: required
                        {"name": "d", "configMap": {"name": "both", "optional": True}},
                        {"name": "e", "sysprep": {"configMap": {"name": "both"}}},
                    ]
                }
            }
        }
    }
    soft = {(gr, n): s for gr, _, n, s in restore_needs(vm, "app", "vm1", [])}
    assert soft[("secrets", "req")] is False
    assert soft[("secrets", "opt")] is True
    assert soft[("secrets", "pull")] is False
    assert soft[("configmaps", "both")] is False


def test_an_unknown_mounted_secret_stays_medium(tmp_path: Path) -> None:
    """Under a label selector without the plugin, whether the cloud-init Secret is taken is
    unknown (its labels are not read): ERROR, medium as before (the shared answer key grades
    web-frontend-01, whose ssh key Secret is in that state, AT_RISK); only a left-out one is
    high."""
    fixture = "RR-BKP-012/error-cloudinit-secret-label-selected-no-plugin.yaml"
    finding = _finding(_complete(tmp_path, fixture, _docs(fixture)), "RR-BKP-012")
    assert (finding["status"], finding["severity"]) == ("ERROR", "medium"), finding["message"]
