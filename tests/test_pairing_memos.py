"""The per-audit answers pairing keeps (issue 15) are the answers it would work out each time.

Each memo is keyed by everything its answer reads: a Scope's plugin test by resource, a
Backup's namespace reason by the Backup object and namespace (two Velero installs may each
have a Backup of one name), a driver's VolumeSnapshotClass fallback by driver (the PVC's
and the Backup's annotations still decide first), a VM's exclude labels by the VM. A memo
keyed by less would give one Backup's, PVC's or VM's answer to another.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from auditor.inventory.capture import select_snapshot_class
from auditor.inventory.index import ClusterIndex
from auditor.inventory.protection import Pairing, VMFacts
from auditor.scope import Scope
from auditor.sources.base import ClusterData, SourceInfo

AT = datetime(2026, 11, 30, 6, tzinfo=UTC)
EXCLUDE = {"velero.io/exclude-from-backup": "true"}
CLASS = "velero.io/csi-volumesnapshot-class"


def _backup(velero_ns: str, name: str, phase: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "velero.io/v1",
        "kind": "Backup",
        "metadata": {
            "name": name,
            "namespace": velero_ns,
            "creationTimestamp": "2026-11-29T01:00:00Z",
        },
        "spec": spec,
        "status": {
            "phase": phase,
            "startTimestamp": "2026-11-29T01:00:00Z",
            "completionTimestamp": "2026-11-29T01:05:00Z",
        },
    }


def _namespace(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def _index(**objects: list[dict[str, Any]]) -> ClusterIndex:
    data = ClusterData(info=SourceInfo(type="directory", location="/nowhere"))
    data.objects.update(objects)
    return ClusterIndex.build(data)


def test_the_plugin_test_is_answered_per_resource() -> None:
    """kubevirt-velero-plugin util.IsResourceInBackup, asked twice of each resource."""
    only = Scope.from_spec({"includedResources": ["virtualmachineinstances", "PVCs", "pods"]})
    without = Scope.from_spec({"excludedResources": ["pods"]})
    for _ in range(2):
        assert only.plugin_in_backup("virtualmachineinstances") is True
        assert only.plugin_in_backup("persistentvolumeclaims") is False  # "pvcs" is no match
        assert only.plugin_in_backup("pods") is True
        assert only.plugin_in_backup("datavolume") is False
        assert without.plugin_in_backup("pods") is False
        assert without.plugin_in_backup("datavolume") is True


def test_each_backup_of_one_name_keeps_its_own_namespace_reason() -> None:
    """Two Velero installs' Backups named daily: one takes namespace app, the other not."""
    ix = _index(
        Namespace=[_namespace("app"), _namespace("held", EXCLUDE)],
        Backup=[
            _backup("velero", "daily", "Completed", includedNamespaces=["app", "held"]),
            _backup("openshift-adp", "daily", "Completed", includedNamespaces=["other"]),
            _backup("openshift-adp", "queued", "New", includedNamespaces=["held"]),
        ],
    )
    views = {(b.namespace, b.name): b for b in ix.backups_any_ns}
    views.update({(b.namespace, b.name): b for bs in ix.backups_by_ns.values() for b in bs})
    ours, theirs = views[("velero", "daily")], views[("openshift-adp", "daily")]
    queued = views[("openshift-adp", "queued")]
    pairing = Pairing(ix, [], AT)
    for _ in range(2):
        assert pairing.namespace_reason(ours, "app") is None
        assert pairing.namespace_reason(theirs, "app") == (
            "namespace app is outside backup daily's namespaces"
        )
        # prepared before the label came: it holds the namespace (velero#5178)
        assert pairing.namespace_reason(ours, "held") is None
        # not yet prepared: Velero adds the labelled namespace to its excludedNamespaces
        why = pairing.namespace_reason(queued, "held")
        assert why is not None and why.startswith("namespace held carries")
        assert pairing.namespace_label_applies(queued, "held") is True
        assert pairing.namespace_label_applies(ours, "held") is False
        assert pairing.namespace_label_applies(queued, "app") is False


def _class(name: str, driver: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "snapshot.storage.k8s.io/v1",
        "kind": "VolumeSnapshotClass",
        "metadata": {"name": name, "labels": labels},
        "driver": driver,
        "deletionPolicy": "Retain",
    }


def _pvc(annotations: dict[str, str] | None = None) -> dict[str, Any]:
    meta = {"name": "disk", "namespace": "app", "annotations": annotations}
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta}


def test_the_driver_fallback_still_yields_to_the_pvc_and_the_backup() -> None:
    """velero pkg/util/csi/volume_snapshot.go GetVolumeSnapshotClass: the PVC's annotation,
    then the Backup's per-driver annotation, then the labelled class (an annotation naming
    no class of the driver falls through to the next step)."""
    label = {CLASS: "true"}
    ix = _index(
        VolumeSnapshotClass=[
            _class("chosen", "d.csi", label),
            _class("Other", "d.csi"),
            _class("alone", "e.csi"),
            _class("one", "f.csi"),
            _class("two", "f.csi"),
        ],
        Backup=[
            _backup("velero", "plain", "Completed"),
            _backup("velero", "annotated", "Completed"),
        ],
    )
    views = {b.name: b for b in ix.backups_any_ns}
    plain = views["plain"]
    named = replace(views["annotated"], annotations={f"{CLASS}_d.csi": "other"})
    asked = _pvc({CLASS: "OTHER"})
    for _ in range(2):
        assert select_snapshot_class(ix, "d.csi", plain, _pvc()) == "chosen"
        assert select_snapshot_class(ix, "d.csi", plain, asked) == "Other"
        assert select_snapshot_class(ix, "d.csi", named, _pvc()) == "Other"
        # a class named by annotation that the driver lacks is only logged: the labelled one
        assert select_snapshot_class(ix, "d.csi", plain, _pvc({CLASS: "gone"})) == "chosen"
        assert select_snapshot_class(ix, "f.csi", plain, _pvc({CLASS: "gone"})) is None
        assert select_snapshot_class(ix, "e.csi", plain, _pvc()) == "alone"
        assert select_snapshot_class(ix, "f.csi", plain, _pvc()) is None  # two, no label
        assert select_snapshot_class(ix, "f.csi", plain, _pvc({CLASS: "two"})) == "two"
        assert select_snapshot_class(ix, "g.csi", plain, _pvc()) is None


def test_a_velero_namespace_whose_dpa_cannot_tell_answers_unknown() -> None:
    """A DPA's own None is its answer, not the cluster-wide one."""
    ix = _index()
    ix.kubevirt_plugins.update({"a": None, "b": False})
    ix.csi_plugins.update({"a": None, "b": True})
    assert ix.kubevirt_plugin is False
    assert ix.kubevirt_plugin_in("a") is None
    assert ix.kubevirt_plugin_in("b") is False
    assert ix.kubevirt_plugin_in("elsewhere") is False
    assert ix.csi_in("a") is None
    assert ix.csi_in("b") is True
    assert ix.csi_in("elsewhere") == ix.csi_enabled
    assert _index().csi_in("elsewhere") is None  # no DPA seen


def _facts(name: str, labels: dict[str, str] | None, vmi: dict[str, Any] | None) -> VMFacts:
    obj = {"metadata": {"name": name, "namespace": "app", "labels": labels}}
    return VMFacts("app", name, dict(labels or {}), None, None, (), (), (), False, obj, vmi)


def test_each_vm_keeps_its_own_exclude_labels() -> None:
    kept = _facts("kept", {"app": "db"}, {"metadata": {"labels": EXCLUDE}})
    left = _facts("left", EXCLUDE, None)
    for _ in range(2):
        assert (kept.excluded, kept.vmi_excluded) == (False, True)
        assert (left.excluded, left.vmi_excluded) == (True, False)


def test_a_result_on_a_basis_keeps_every_other_field() -> None:
    """``Result.on`` spells its fields out (it used dataclasses.replace)."""
    from auditor.checks.registry import Result, failed
    from auditor.models import Basis, Severity, Status

    base = failed("VM app/db has 0 restore points.", Severity.HIGH, restore_points=0)
    got = base.on(Basis.INFERRED)
    assert got == Result(
        Status.FAIL,
        "VM app/db has 0 restore points.",
        {"restore_points": 0},
        Severity.HIGH,
        Basis.INFERRED,
    )
    assert got.evidence is base.evidence and base.basis is None


def _snapshot(ns: Any, name: Any, pvc: str) -> dict[str, Any]:
    return {
        "apiVersion": "snapshot.storage.k8s.io/v1",
        "kind": "VolumeSnapshot",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"source": {"persistentVolumeClaimName": pvc}},
    }


def test_objects_by_name_are_the_objects_a_walk_over_the_kind_finds() -> None:
    """``ClusterIndex.by_name``, which the per-VM lookups of a VolumeSnapshot, DataSource,
    Backup, ConfigMap and VirtualMachineSnapshot by name use in place of a walk over every
    object of the kind: the first object of each name, in each namespace apart; a name or
    namespace of another type, which no walk comparing strings matched, is in no key."""
    first, second = _snapshot("vms", "snap-1", "disk-a"), _snapshot("vms", "snap-1", "disk-b")
    other_ns = _snapshot("apps", "snap-1", "disk-c")
    odd = _snapshot("vms", ["snap-2"], "disk-d")
    ix = _index(VolumeSnapshot=[first, second, other_ns, odd])
    found = ix.by_name("VolumeSnapshot")
    assert found == {("vms", "snap-1"): first, ("apps", "snap-1"): other_ns}
    assert found[("vms", "snap-1")] is first
    assert ix.by_name("VolumeSnapshot") is found  # built once per index
    assert ix.by_name("DataSource") == {}


def _restore(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "velero.io/v1",
        "kind": "Restore",
        "metadata": {
            "name": name,
            "namespace": "velero",
            "creationTimestamp": "2026-11-29T02:00:00Z",
        },
        "spec": {"backupName": "daily", **spec},
        "status": {"phase": "Completed"},
    }


def test_the_restores_of_a_namespace_are_those_whose_filters_include_it() -> None:
    """``drills._restores_into``: the Restores a VM's drills are looked for in, once per
    namespace, in the index's order; a Restore whose namespace filters leave the namespace
    out (by name, by glob, or excluded) is not among them, one with no filter is."""
    from auditor.inventory.drills import _restores_into

    ix = _index(
        Restore=[
            _restore("all"),
            _restore("only-apps", includedNamespaces=["apps"]),
            _restore("vm-glob", includedNamespaces=["vm*"]),
            _restore("not-vms", excludedNamespaces=["vms"]),
        ]
    )
    assert [r.name for r in ix.restores] == ["all", "only-apps", "vm-glob", "not-vms"]
    assert [r.name for r in _restores_into(ix, "vms")] == ["all", "vm-glob"]
    assert [r.name for r in _restores_into(ix, "apps")] == ["all", "only-apps", "not-vms"]
    assert _restores_into(ix, "vms") is _restores_into(ix, "vms")
