"""Velero resource filters as Velero reads them (red team helper-17).

A filter the auditor did not read, or read differently from Velero, left a VM "in" a backup
that leaves it out: Velero 1.11's scoped filters (``excludedNamespaceScopedResources``...),
short resource names (``net-attach-def``, ``svc``), and a group-qualified VMI exclusion the
kubevirt plugin refuses the running VM for.
Sources: https://velero.io/docs/main/resource-filtering/, velero ``pkg/discovery/helper.go``
(``restmapper.NewShortcutExpander``), kubevirt-velero-plugin ``pkg/util/util.go``
(``IsResourceExcluded`` compares ``schema.ParseGroupResource(entry).Resource``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from auditor.scope import Scope, SelectorError
from tests.test_evidence_gaps import _complete, _docs, _finding, _of


def _included(spec: dict[str, Any], plural: str, kind: str, group: str) -> bool:
    return Scope.from_spec(spec).resource_included(plural, kind, group)


@pytest.mark.parametrize(
    ("spec", "plural", "kind", "group", "expected"),
    [
        # Velero 1.11's scoped filters: namespace-scoped types by the namespace-scoped lists
        (
            {"excludedNamespaceScopedResources": ["virtualmachines.kubevirt.io"]},
            "virtualmachines",
            "VirtualMachine",
            "kubevirt.io",
            False,
        ),
        (
            {"excludedNamespaceScopedResources": ["virtualmachines.kubevirt.io"]},
            "persistentvolumeclaims",
            "PersistentVolumeClaim",
            "",
            True,
        ),
        (
            {"includedNamespaceScopedResources": ["persistentvolumeclaims", "pods"]},
            "virtualmachines",
            "VirtualMachine",
            "kubevirt.io",
            False,
        ),
        (
            {"includedNamespaceScopedResources": ["*"]},
            "virtualmachines",
            "VirtualMachine",
            "kubevirt.io",
            True,
        ),
        # ... and cluster-scoped types by the cluster-scoped ones only
        (
            {"excludedClusterScopedResources": ["persistentvolumes"]},
            "persistentvolumes",
            "PersistentVolume",
            "",
            False,
        ),
        (
            {"excludedNamespaceScopedResources": ["persistentvolumes"]},
            "persistentvolumes",
            "PersistentVolume",
            "",
            True,
        ),
        # short names, as Velero's discovery expands them
        (
            {"excludedResources": ["net-attach-def"]},
            "network-attachment-definitions",
            "NetworkAttachmentDefinition",
            "k8s.cni.cncf.io",
            False,
        ),
        ({"excludedResources": ["svc"]}, "services", "Service", "", False),
        ({"excludedResources": ["cm"]}, "configmaps", "ConfigMap", "", False),
        ({"excludedResources": ["po"]}, "pods", "Pod", "", False),
        (
            {"excludedResources": ["vm.kubevirt.io"]},
            "virtualmachines",
            "VirtualMachine",
            "kubevirt.io",
            False,
        ),
        ({"includedResources": ["svc"]}, "services", "Service", "", True),
        ({"excludedResources": ["svc"]}, "configmaps", "ConfigMap", "", True),
    ],
)
def test_resource_filters_read_as_velero_reads_them(
    spec: dict[str, Any], plural: str, kind: str, group: str, expected: bool
) -> None:
    assert _included(spec, plural, kind, group) is expected


def test_old_and_new_resource_filters_together_are_no_scope() -> None:
    """Velero fails the validation of a Backup mixing them: its scope is unknown."""
    with pytest.raises(SelectorError, match="set together"):
        Scope.from_spec(
            {"excludedResources": ["pods"], "excludedNamespaceScopedResources": ["secrets"]}
        )
    with pytest.raises(SelectorError, match="includeClusterResources"):
        Scope.from_spec({"includeClusterResources": False, "includedClusterScopedResources": ["*"]})


def _backups(docs: list[dict[str, Any]], **spec: Any) -> None:
    for b in _of(docs, "Backup"):
        b["spec"].update(spec)
    for s in _of(docs, "Schedule"):
        s["spec"]["template"].update(spec)


def test_a_scoped_exclusion_of_virtual_machines_leaves_the_vm_out(tmp_path: Path) -> None:
    """``excludedNamespaceScopedResources: [virtualmachines.kubevirt.io]`` on every Backup:
    the disks are still snapshotted (the counters still add up) but no Backup holds the VM
    object. RR-BKP-001 was PASS, "in 2 usable backups"."""
    fixture = "RR-BKP-001/pass.yaml"
    docs = _docs(fixture)
    assert _finding(_complete(tmp_path / "base", fixture, docs), "RR-BKP-001")["status"] == "PASS"
    _backups(docs, excludedNamespaceScopedResources=["virtualmachines.kubevirt.io"])
    finding = _finding(_complete(tmp_path / "scoped", fixture, docs), "RR-BKP-001")
    assert finding["status"] == "FAIL"


def test_a_short_name_excludes_the_nads(tmp_path: Path) -> None:
    """``excludedResources: [net-attach-def]`` leaves the NADs out as the plural would."""
    fixture = "RR-NET-002/pass.yaml"
    docs = _docs(fixture)
    assert _finding(_complete(tmp_path / "base", fixture, docs), "RR-NET-002")["status"] == "PASS"
    _backups(docs, excludedResources=["net-attach-def"])
    assert _finding(_complete(tmp_path / "short", fixture, docs), "RR-NET-002")["status"] == "FAIL"


def test_a_group_qualified_vmi_exclusion_makes_the_plugin_refuse_the_running_vm(
    tmp_path: Path,
) -> None:
    """The kubevirt plugin refuses a running VM whose backup leaves out its VMI, and it reads
    ``virtualmachineinstances.kubevirt.io`` as ``virtualmachineinstances``."""
    fixture = "RR-BKP-001/pass.yaml"
    docs = _docs(fixture)
    _backups(docs, excludedResources=["virtualmachineinstances.kubevirt.io"])
    finding = _finding(_complete(tmp_path, fixture, docs), "RR-BKP-001")
    assert finding["status"] == "FAIL"
    assert "refuses VM vm1" in str(finding)


def test_a_kubevirt_plugin_in_another_velero_install_does_not_run_for_these_backups(
    tmp_path: Path,
) -> None:
    """OADP can run a Velero per namespace, each loading the plugins of the
    DataProtectionApplication in its own namespace. The Backups' install lacks the kubevirt
    plugin, a second install has it: the plugin pulls no unlabelled PVC into these Backups
    and RR-PLT-004 names the install without it (both were PASS on the other DPA's list)."""
    import copy

    fixture = "RR-BKP-004/pass-kubevirt-plugin-adds-unlabelled-pvcs.yaml"
    docs = _docs(fixture)
    report = _complete(tmp_path / "base", fixture, docs)
    assert _finding(report, "RR-BKP-004")["status"] == "PASS"
    dpa = _of(docs, "DataProtectionApplication")[0]
    other = copy.deepcopy(dpa)
    other["metadata"]["namespace"] = "openshift-adp-dr"
    dpa["spec"]["configuration"]["velero"]["defaultPlugins"] = ["openshift", "csi"]
    docs.append(other)
    report = _complete(tmp_path / "two", fixture, docs)
    assert _finding(report, "RR-BKP-004")["status"] == "FAIL"
    platform = next(f for f in report["platform_findings"] if f["check_id"] == "RR-PLT-004")
    assert platform["status"] == "FAIL"
    assert "namespace(s) velero do not enable" in platform["message"]


@pytest.mark.parametrize(
    ("fixture", "kind", "check_id"),
    [
        ("RR-NET-002/pass.yaml", "NetworkAttachmentDefinition", "RR-NET-002"),
        ("RR-NET-003/pass.yaml", "Service", "RR-NET-003"),
    ],
)
def test_an_object_labelled_exclude_from_backup_is_in_no_backup(
    tmp_path: Path, fixture: str, kind: str, check_id: str
) -> None:
    """Velero skips an object labelled ``velero.io/exclude-from-backup=true`` whatever its
    filters say (red team helper-18: a labelled NAD or Service was "in" the backups)."""
    docs = _docs(fixture)
    assert _finding(_complete(tmp_path / "base", fixture, docs), check_id)["status"] == "PASS"
    for obj in _of(docs, kind):
        obj["metadata"].setdefault("labels", {})["velero.io/exclude-from-backup"] = "true"
    finding = _finding(_complete(tmp_path / "excluded", fixture, docs), check_id)
    assert finding["status"] == "FAIL"
    assert "velero.io/exclude-from-backup=true" in finding["message"]


@pytest.mark.parametrize(
    "selector",
    [
        {"matchLabels": ""},
        {"matchLabels": []},
        {"matchlabels": {"app": "vm1"}},
        {"matchExpressions": ""},
    ],
)
def test_a_damaged_selector_is_malformed_not_match_all(selector: dict[str, Any]) -> None:
    """red team helper-19: an empty string or list, or a misspelt key, read as "no
    selector", which matches everything and put every VM in the Backup or Restore."""
    from auditor.scope import selector_matches

    with pytest.raises(SelectorError):
        selector_matches(selector, {"app": "vm1"})
    with pytest.raises(SelectorError):
        Scope.from_spec({"orLabelSelectors": [selector]}).labels_match({"app": "vm1"})
