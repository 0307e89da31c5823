"""False alarms (helper fp15): VirtualMachineSnapshots in the shapes a healthy KubeVirt writes
them, each held to the copy it is.

Each test takes the namespace-bound VM snapshot fixture (no Backup: RR-STG-001 FAIL medium
while the VM snapshot copies the disks, high once it copies none), changes it into a shape
KubeVirt really produces, and asserts the VM snapshot still counts as each disk's copy. The
disks' PVCs are made newer than the snapshot first, so its VolumeSnapshots count as no
standalone copy of them and the VM snapshot is judged alone: exactly one copy per disk.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from tests.test_evidence_gaps import _complete, _docs, _finding, _of

Docs = list[dict[str, Any]]

VM_SNAPSHOT = "RR-STG-001/fail-only-namespace-bound-vm-snapshot.yaml"
#: uids in KubeVirt's own format, as in the exported cluster (corpus/cluster-export)
SNAP_UID = "2928ed79-151c-4240-a539-e25d73b06067"
VM_UID = "uid-vm-app-vm1"


def _alone(docs: Docs) -> Docs:
    """The disks' PVCs re-created after the snapshot: only the VM snapshot copies them."""
    for pvc in _of(docs, "PersistentVolumeClaim"):
        pvc["metadata"]["creationTimestamp"] = "2026-11-29T12:00:00Z"
    return docs


def _rows(tmp_path: Path, docs: Docs) -> tuple[str, str, str, dict[str, int]]:
    """RR-STG-001's status, severity and message, and the copies it counted per PVC."""
    finding = _finding(_complete(tmp_path, VM_SNAPSHOT, docs), "RR-STG-001")
    rows = finding["evidence"]["disks"]
    copies = {r["pvc"]: r["copies"] for r in rows}
    return finding["status"], finding["severity"], finding["message"], copies


def _vmsnap(docs: Docs) -> dict[str, Any]:
    return _of(docs, "VirtualMachineSnapshot")[0]


def _content(docs: Docs) -> dict[str, Any]:
    return _of(docs, "VirtualMachineSnapshotContent")[0]


def _vm(docs: Docs) -> dict[str, Any]:
    return _of(docs, "VirtualMachine")[0]


def _broken(docs: Docs) -> Docs:
    """The same VM snapshot whose content backs up no volume: no copy of any disk."""
    _content(docs)["spec"]["volumeBackups"] = []
    return docs


def test_the_vm_snapshot_alone_is_each_disks_one_copy(tmp_path: Path) -> None:
    """The baseline every variant is measured against, and its broken counterpart."""
    status, severity, message, copies = _rows(tmp_path / "ok", _alone(_docs(VM_SNAPSHOT)))
    assert (status, severity) == ("FAIL", "medium"), message
    assert copies == {"vm1-root": 1, "vm1-data": 1}
    status, severity, message, copies = _rows(
        tmp_path / "broken", _broken(_alone(_docs(VM_SNAPSHOT)))
    )
    assert (status, severity) == ("FAIL", "high"), message
    assert copies == {"vm1-root": 0, "vm1-data": 0}


# -- the API versions and the objects as KubeVirt writes them ------------------------------


def _v1alpha1(docs: Docs) -> None:
    """snapshot.kubevirt.io/v1alpha1 (KubeVirt before v1.0 served and stored it)."""
    for d in _of(docs, "VirtualMachineSnapshot") + _of(docs, "VirtualMachineSnapshotContent"):
        d["apiVersion"] = "snapshot.kubevirt.io/v1alpha1"
    for vs in _of(docs, "VolumeSnapshot"):
        for ref in vs["metadata"].get("ownerReferences", []):
            ref["apiVersion"] = "snapshot.kubevirt.io/v1alpha1"


def _generated_names(docs: Docs, policy: str) -> None:
    """The names KubeVirt generates: content ``vmsnapshot-content-<snapshot uid>``, each
    VolumeSnapshot ``vmsnapshot-<snapshot uid>-volume-<volume>`` (pkg/storage/snapshot/
    snapshot.go), each content ``snapcontent-<VolumeSnapshot uid>`` (external-snapshotter),
    with the VolumeSnapshotClass's deletionPolicy ``policy``."""
    snap, content = _vmsnap(docs), _content(docs)
    snap["metadata"]["uid"] = SNAP_UID
    cname = f"vmsnapshot-content-{SNAP_UID}"
    snap["status"]["virtualMachineSnapshotContentName"] = cname
    content["metadata"]["name"] = cname
    content["metadata"]["uid"] = "5cce17d3-00f0-4b65-8c81-b77c56ba10bf"
    content["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "snapshot.kubevirt.io/v1beta1",
            "blockOwnerDeletion": True,
            "controller": True,
            "kind": "VirtualMachineSnapshot",
            "name": snap["metadata"]["name"],
            "uid": SNAP_UID,
        }
    ]
    renames: dict[str, str] = {}
    for i, vs in enumerate(_of(docs, "VolumeSnapshot")):
        volume = vs["metadata"]["name"].rsplit("-", 1)[1]
        new = f"vmsnapshot-{SNAP_UID}-volume-{volume}"
        renames[vs["metadata"]["name"]] = new
        vs["metadata"]["name"] = new
        vs["metadata"]["uid"] = f"f53d304a-b60a-4039-9fa0-71032990f86{i}"
        for ref in vs["metadata"]["ownerReferences"]:
            ref["name"], ref["uid"] = cname, content["metadata"]["uid"]
        old_vsc = vs["status"]["boundVolumeSnapshotContentName"]
        vsc = next(
            c for c in _of(docs, "VolumeSnapshotContent") if c["metadata"]["name"] == old_vsc
        )
        vsc["metadata"]["name"] = f"snapcontent-{vs['metadata']['uid']}"
        vs["status"]["boundVolumeSnapshotContentName"] = vsc["metadata"]["name"]
        vsc["spec"]["volumeSnapshotRef"]["name"] = new
        vsc["spec"]["deletionPolicy"] = policy
    for entry in content["spec"]["volumeBackups"]:
        entry["volumeSnapshotName"] = renames[entry["volumeSnapshotName"]]


def _full_objects(docs: Docs) -> None:
    """The content holds the whole VM (metadata, dataVolumeTemplates, an empty status) and
    each volumeBackup the whole PVC (metadata with CDI's annotations and labels, spec, and
    status), as the exported cluster's content does (KubeVirt stores the VM and PVCs it read,
    pkg/storage/snapshot/snapshot.go createContent, source.go Spec)."""
    vm, content = _vm(docs), _content(docs)
    held = content["spec"]["source"]["virtualMachine"]
    held["metadata"] = {
        "annotations": {"kubevirt.io/latest-observed-api-version": "v1"},
        "creationTimestamp": vm["metadata"]["creationTimestamp"],
        "generation": 2,
        "labels": dict(vm["metadata"]["labels"]),
        "name": "vm1",
        "namespace": "app",
        "resourceVersion": "67545688",
        "uid": VM_UID,
    }
    held["spec"]["dataVolumeTemplates"] = [
        {
            "apiVersion": "cdi.kubevirt.io/v1beta1",
            "kind": "DataVolume",
            "metadata": {"creationTimestamp": None, "name": name},
            "spec": {"storage": {"resources": {"requests": {"storage": "20Gi"}}}},
        }
        for name in ("vm1-root", "vm1-data")
    ]
    held["status"] = {}
    pvcs = {p["metadata"]["name"]: p for p in _of(docs, "PersistentVolumeClaim")}
    for entry in content["spec"]["volumeBackups"]:
        pvc = copy.deepcopy(pvcs[entry["persistentVolumeClaim"]["metadata"]["name"]])
        pvc["metadata"]["annotations"] = {
            "cdi.kubevirt.io/storage.contentType": "kubevirt",
            "pv.kubernetes.io/bind-completed": "yes",
        }
        pvc["metadata"]["labels"] = {"app": "containerized-data-importer"}
        pvc["metadata"]["ownerReferences"] = [
            {
                "apiVersion": "cdi.kubevirt.io/v1beta1",
                "blockOwnerDeletion": True,
                "controller": True,
                "kind": "DataVolume",
                "name": pvc["metadata"]["name"],
                "uid": f"dv-{pvc['metadata']['name']}",
            }
        ]
        del pvc["apiVersion"], pvc["kind"]
        entry["persistentVolumeClaim"] = pvc


def _cut_status(docs: Docs) -> None:
    """The VM snapshot's status as KubeVirt writes it after a snapshot: conditions,
    sourceUID of this VM, the excluded cloud-init volume; the content's own status with its
    volumeSnapshotStatus list."""
    status = _vmsnap(docs)["status"]
    status["conditions"] = [
        {"lastProbeTime": None, "lastTransitionTime": "2026-11-29T10:00:05Z",
         "reason": "Operation complete", "status": "False", "type": "Progressing"},
        {"lastProbeTime": None, "lastTransitionTime": "2026-11-29T10:00:05Z",
         "reason": "Operation complete", "status": "True", "type": "Ready"},
    ]  # fmt: skip
    status["sourceUID"] = VM_UID
    status["snapshotVolumes"]["excludedVolumes"] = ["cloudinitdisk"]
    content = _content(docs)
    content["status"]["volumeSnapshotStatus"] = [
        {"creationTime": "2026-11-29T10:00:00Z", "readyToUse": True, "volumeSnapshotName": e}
        for e in (b["volumeSnapshotName"] for b in content["spec"]["volumeBackups"])
    ]


def _specs(docs: Docs) -> list[dict[str, Any]]:
    """The VM's template spec, its VMI's spec and the VM spec its snapshot content holds."""
    return [
        _vm(docs)["spec"]["template"]["spec"],
        _of(docs, "VirtualMachineInstance")[0]["spec"],
        _content(docs)["spec"]["source"]["virtualMachine"]["spec"]["template"]["spec"],
    ]


def _plain_pvcs(docs: Docs) -> None:
    """Both disks as ``persistentVolumeClaim`` volumes (no DataVolume): KubeVirt backs them
    up under their volume names like any other (source.go ``PersistentVolumeClaims``)."""
    for spec in _specs(docs):
        for volume in spec["volumes"]:
            if "dataVolume" in volume:
                volume["persistentVolumeClaim"] = {"claimName": volume.pop("dataVolume")["name"]}


def _templates(docs: Docs) -> None:
    """Both disks from ``dataVolumeTemplates`` of the VM (and of the VM its content holds),
    their PVCs owned by their DataVolumes, as CDI makes them."""
    templates = [
        {
            "apiVersion": "cdi.kubevirt.io/v1beta1",
            "kind": "DataVolume",
            "metadata": {"name": name},
            "spec": {
                "source": {"blank": {}},
                "storage": {"resources": {"requests": {"storage": "20Gi"}}},
            },
        }
        for name in ("vm1-root", "vm1-data")
    ]
    _vm(docs)["spec"]["dataVolumeTemplates"] = copy.deepcopy(templates)
    _content(docs)["spec"]["source"]["virtualMachine"]["spec"]["dataVolumeTemplates"] = templates
    for pvc in _of(docs, "PersistentVolumeClaim"):
        name = pvc["metadata"]["name"]
        if name in ("vm1-root", "vm1-data"):
            pvc["metadata"]["ownerReferences"] = [
                {
                    "apiVersion": "cdi.kubevirt.io/v1beta1",
                    "blockOwnerDeletion": True,
                    "controller": True,
                    "kind": "DataVolume",
                    "name": name,
                    "uid": f"uid-dv-{name}",
                }
            ]


SHAPES = {
    "v1alpha1": _v1alpha1,
    "generated names, Delete": lambda d: _generated_names(d, "Delete"),
    "generated names, Retain": lambda d: _generated_names(d, "Retain"),
    "full VM and PVC objects": _full_objects,
    "status as written": _cut_status,
    "plain PVC volumes": _plain_pvcs,
    "dataVolumeTemplates": _templates,
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_vm_snapshot_in_the_shape_kubevirt_writes_it_copies_each_disk(
    tmp_path: Path, shape: str
) -> None:
    """Every one of these is a healthy snapshot: one copy of each disk, inside the namespace
    (FAIL medium); the same shape with no volume backed up is none (high)."""
    docs = _alone(_docs(VM_SNAPSHOT))
    SHAPES[shape](docs)
    status, severity, message, copies = _rows(tmp_path / "ok", docs)
    assert (status, severity) == ("FAIL", "medium"), message
    assert copies == {"vm1-root": 1, "vm1-data": 1}
    status, severity, message, copies = _rows(tmp_path / "broken", _broken(docs))
    assert (status, severity, copies) == ("FAIL", "high", {"vm1-root": 0, "vm1-data": 0})


# -- volumes of every kind -----------------------------------------------------------------


def _add_volume(docs: Docs, volume: dict[str, Any], *, disk: bool = True) -> None:
    """Add ``volume`` (a PVC source named ``vm1-<name>``) to the VM and its VMI, its PVC and
    PV, and back it up in the snapshot like the others (its VolumeSnapshot and content)."""
    name = volume["name"]
    claim = f"vm1-{name}"
    for obj in (_vm(docs)["spec"]["template"], _of(docs, "VirtualMachineInstance")[0]):
        obj["spec"]["volumes"].append(copy.deepcopy(volume))
        if disk:
            obj["spec"]["domain"]["devices"]["disks"].append(
                {"disk": {"bus": "scsi"}, "name": name}
            )
    held = _content(docs)["spec"]["source"]["virtualMachine"]["spec"]["template"]["spec"]
    held["volumes"].append(copy.deepcopy(volume))
    if disk:
        held["domain"]["devices"]["disks"].append({"disk": {"bus": "scsi"}, "name": name})
    data = {d["metadata"]["name"]: d for d in docs if d["kind"] != "Namespace"}
    pvc, pv = copy.deepcopy(data["vm1-data"]), copy.deepcopy(data["pv-app-vm1-data"])
    pvc["metadata"].update(name=claim, uid=f"uid-pvc-app-{claim}")
    pvc["spec"]["volumeName"] = f"pv-app-{claim}"
    pv["metadata"]["name"] = f"pv-app-{claim}"
    pv["spec"]["claimRef"].update(name=claim, uid=f"uid-pvc-app-{claim}")
    pv["spec"]["csi"]["volumeHandle"] = f"h-{claim}"
    vs = copy.deepcopy(data["vmsnapshot-uid-vms-volume-data"])
    vsc = copy.deepcopy(data["snapcontent-vmsnapshot-uid-vms-volume-data"])
    vs["metadata"]["name"] = f"vmsnapshot-uid-vms-volume-{name}"
    vs["spec"]["source"]["persistentVolumeClaimName"] = claim
    vs["status"]["boundVolumeSnapshotContentName"] = f"snapcontent-vmsnapshot-uid-vms-volume-{name}"
    vsc["metadata"]["name"] = f"snapcontent-vmsnapshot-uid-vms-volume-{name}"
    vsc["spec"]["source"]["volumeHandle"] = f"h-{claim}"
    vsc["spec"]["volumeSnapshotRef"]["name"] = vs["metadata"]["name"]
    docs += [pvc, pv, vs, vsc]
    _content(docs)["spec"]["volumeBackups"].append(
        {
            "persistentVolumeClaim": {"metadata": {"name": claim, "namespace": "app"}},
            "volumeName": name,
            "volumeSnapshotName": vs["metadata"]["name"],
        }
    )
    _vmsnap(docs)["status"]["snapshotVolumes"]["includedVolumes"].append(name)


def test_a_hotplugged_pvc_and_data_volume_are_copied_like_the_other_disks(tmp_path: Path) -> None:
    """A volume hotplugged with ``virtctl addvolume --persist`` is in the VM's volumes (with
    ``hotpluggable: true``) and disks, and KubeVirt snapshots it like any other PVC
    (pkg/storage/snapshot/source.go ``PersistentVolumeClaims`` lists every PVC volume): the
    VM snapshot is its copy too."""
    docs = _alone(_docs(VM_SNAPSHOT))
    _add_volume(
        docs,
        {"name": "hot", "persistentVolumeClaim": {"claimName": "vm1-hot", "hotpluggable": True}},
    )
    _add_volume(docs, {"name": "hotdv", "dataVolume": {"name": "vm1-hotdv", "hotpluggable": True}})
    _alone(docs)
    status, severity, message, copies = _rows(tmp_path, docs)
    assert (status, severity) == ("FAIL", "medium"), message
    assert copies == {"vm1-root": 1, "vm1-data": 1, "vm1-hot": 1, "vm1-hotdv": 1}


def test_a_memory_dump_volume_is_neither_demanded_nor_in_the_way(tmp_path: Path) -> None:
    """``virtctl memory-dump get`` adds a ``memoryDump`` volume (no disk) whose PVC KubeVirt
    also snapshots (source.go lists it as a PVC volume). It is an output, not a disk: no
    copy of it is demanded, and backing it up takes no copy from the disks."""
    docs = _alone(_docs(VM_SNAPSHOT))
    _add_volume(
        docs,
        {"name": "memdump", "memoryDump": {"claimName": "vm1-memdump", "hotpluggable": True}},
        disk=False,
    )
    _alone(docs)
    status, severity, message, copies = _rows(tmp_path, docs)
    assert (status, severity) == ("FAIL", "medium"), message
    assert copies == {"vm1-root": 1, "vm1-data": 1}
    assert "memdump" not in message


def test_container_disk_and_cloud_init_volumes_are_not_demanded(tmp_path: Path) -> None:
    """A containerDisk and a cloudInitNoCloud volume hold no PVC; KubeVirt lists them in
    ``excludedVolumes`` and backs up only the PVC disk (snapshot.go
    ``updateSnapshotSnapshotableVolumes``). The PVC disk keeps its copy; nothing is demanded
    of the others."""
    docs = _alone(_docs(VM_SNAPSHOT))
    root = {"name": "root", "containerDisk": {"image": "quay.io/containerdisks/fedora:41"}}
    for spec in (
        _vm(docs)["spec"]["template"]["spec"],
        _of(docs, "VirtualMachineInstance")[0]["spec"],
        _content(docs)["spec"]["source"]["virtualMachine"]["spec"]["template"]["spec"],
    ):
        spec["volumes"][0] = copy.deepcopy(root)
    content = _content(docs)
    content["spec"]["volumeBackups"] = content["spec"]["volumeBackups"][1:]
    _vmsnap(docs)["status"]["snapshotVolumes"] = {
        "includedVolumes": ["data"],
        "excludedVolumes": ["root", "cloudinitdisk"],
    }
    status, severity, message, copies = _rows(tmp_path, docs)
    assert (status, severity) == ("FAIL", "medium"), message
    assert copies == {"vm1-data": 1}


# -- sourceUID -----------------------------------------------------------------------------


def _efi(docs: Docs, persistent: bool) -> None:
    held = _content(docs)["spec"]["source"]["virtualMachine"]["spec"]["template"]["spec"]
    held["domain"]["firmware"]["bootloader"]["efi"]["persistent"] = persistent


@pytest.mark.parametrize(
    ("source", "efi"),
    [("absent", True), (VM_UID, True), ("uid-of-an-earlier-vm1", False)],
)
def test_a_source_uid_absent_equal_or_of_a_vm_without_state_keeps_the_copy(
    tmp_path: Path, source: str, efi: bool
) -> None:
    """KubeVirt writes ``status.sourceUID`` only while the source VM exists (snapshot.go
    ``updateSnapshotStatus``; before v0.34 not at all): absent, it is no mismatch. Equal to
    the VM's uid, or another VM's without EFI/TPM state (restorable to a new VM), the
    snapshot stays the disks' copy."""
    docs = _alone(_docs(VM_SNAPSHOT))
    _efi(docs, efi)
    if source == "absent":
        _vmsnap(docs)["status"].pop("sourceUID", None)
    else:
        _vmsnap(docs)["status"]["sourceUID"] = source
    status, severity, message, copies = _rows(tmp_path, docs)
    assert (status, severity) == ("FAIL", "medium"), message
    assert copies == {"vm1-root": 1, "vm1-data": 1}


# -- a snapshot an older KubeVirt wrote ----------------------------------------------------


def test_a_snapshot_without_snapshot_volumes_is_read_from_its_content(tmp_path: Path) -> None:
    """KubeVirt before v0.59 wrote no ``status.snapshotVolumes`` (kubevirt commit d390a8a
    added it); a VM snapshot taken then, in snapshot.kubevirt.io/v1alpha1, lists no volume
    in its own status while its content backs both disks up."""
    docs = _alone(_docs(VM_SNAPSHOT))
    _v1alpha1(docs)
    del _vmsnap(docs)["status"]["snapshotVolumes"]
    status, severity, message, copies = _rows(tmp_path, docs)
    assert (status, severity) == ("FAIL", "medium"), message
    assert copies == {"vm1-root": 1, "vm1-data": 1}
    status, severity, message, copies = _rows(tmp_path / "broken", _broken(docs))
    assert (status, severity, copies) == ("FAIL", "high", {"vm1-root": 0, "vm1-data": 0})


# -- a VM restored in place, then snapshotted again ----------------------------------------

RESTORE_UID = "7b1e0c52-4d7f-4f0e-9a53-0c9d2f6e1a77"
SNAP2_UID = "9c2f1d63-5e80-4a1f-8b64-1dae307f2b88"


def _restored_in_place(docs: Docs) -> Docs:
    """``vm1-snap`` restored onto vm1 (same uid) at 11:00, then snapshotted again at 13:00.

    The restore creates ``restore-<restore uid>-<volume>`` PVCs from the VolumeSnapshots,
    labelled and annotated with the restore, and rewrites each dataVolume volume that no
    template backs into a persistentVolumeClaim volume of that claim; the old PVCs are
    gone (kubevirt pkg/storage/snapshot/restore.go ``restoreVolumeName``,
    ``generateRestoredVMSpec``, ``CreateRestorePVCDefFromVMRestore``)."""
    names = {f"vm1-{v}": f"restore-{RESTORE_UID}-{v}" for v in ("root", "data")}
    vm = _vm(docs)
    vm["metadata"]["annotations"] = {
        "restore.kubevirt.io/lastRestoreUID": f"vm1-restore-{RESTORE_UID}"
    }
    for spec in (vm["spec"]["template"]["spec"], _of(docs, "VirtualMachineInstance")[0]["spec"]):
        for volume in spec["volumes"]:
            if "dataVolume" in volume:
                claim = names[volume.pop("dataVolume")["name"]]
                volume["persistentVolumeClaim"] = {"claimName": claim}
    old = {
        d["metadata"]["name"]: d
        for d in docs
        if d["kind"] in ("PersistentVolumeClaim", "PersistentVolume")
    }
    new: Docs = []
    for before, after in names.items():
        volume = before.split("-")[1]
        pvc = old[before]
        pvc["metadata"].update(
            name=after,
            uid=f"uid-{after}",
            creationTimestamp="2026-11-29T11:00:00Z",
            labels={
                "restore.kubevirt.io/source-vm-name": "vm1",
                "restore.kubevirt.io/source-vm-namespace": "app",
            },
            annotations={
                "restore.kubevirt.io/name": "vm1-restore",
                "restore.kubevirt.io/lastRestoreUID": f"vm1-restore-{RESTORE_UID}",
            },
        )
        pvc["spec"]["dataSource"] = {
            "apiGroup": "snapshot.storage.k8s.io",
            "kind": "VolumeSnapshot",
            "name": f"vmsnapshot-uid-vms-volume-{volume}",
        }
        pvc["spec"]["volumeName"] = f"pv-{after}"
        pv = old[f"pv-app-{before}"]
        pv["metadata"]["name"] = f"pv-{after}"
        pv["spec"]["claimRef"].update(name=after, uid=f"uid-{after}")
        pv["spec"]["csi"]["volumeHandle"] = f"h-{after}"
        # the second snapshot's VolumeSnapshot of the restored PVC, and its content
        vs_name = f"vmsnapshot-{SNAP2_UID}-volume-{volume}"
        new.append(
            {
                "apiVersion": "snapshot.storage.k8s.io/v1",
                "kind": "VolumeSnapshot",
                "metadata": {
                    "name": vs_name,
                    "namespace": "app",
                    "creationTimestamp": "2026-11-29T13:00:00Z",
                    "ownerReferences": [
                        {
                            "apiVersion": "snapshot.kubevirt.io/v1beta1",
                            "controller": True,
                            "kind": "VirtualMachineSnapshotContent",
                            "name": f"vmsnapshot-content-{SNAP2_UID}",
                            "uid": "uid-vmsc-2",
                        }
                    ],
                },
                "spec": {
                    "source": {"persistentVolumeClaimName": after},
                    "volumeSnapshotClassName": "snapclass",
                },
                "status": {
                    "boundVolumeSnapshotContentName": f"snapcontent-{vs_name}",
                    "creationTime": "2026-11-29T13:00:00Z",
                    "readyToUse": True,
                },
            }
        )
        new.append(
            {
                "apiVersion": "snapshot.storage.k8s.io/v1",
                "kind": "VolumeSnapshotContent",
                "metadata": {"name": f"snapcontent-{vs_name}"},
                "spec": {
                    "deletionPolicy": "Delete",
                    "driver": "csi.example.com",
                    "source": {"volumeHandle": f"h-{after}"},
                    "volumeSnapshotRef": {"name": vs_name, "namespace": "app"},
                },
                "status": {"readyToUse": True, "snapshotHandle": f"snap-{vs_name}"},
            }
        )
    snap2 = copy.deepcopy(_vmsnap(docs))
    snap2["metadata"].update(name="vm1-snap2", uid=SNAP2_UID)
    snap2["status"].update(
        creationTime="2026-11-29T13:00:00Z",
        sourceUID=VM_UID,
        virtualMachineSnapshotContentName=f"vmsnapshot-content-{SNAP2_UID}",
    )
    content2 = copy.deepcopy(_content(docs))
    content2["metadata"]["name"] = f"vmsnapshot-content-{SNAP2_UID}"
    content2["spec"]["virtualMachineSnapshotName"] = "vm1-snap2"
    content2["spec"]["source"]["virtualMachine"]["spec"] = copy.deepcopy(vm["spec"])
    content2["spec"]["volumeBackups"] = [
        {
            "persistentVolumeClaim": {"metadata": {"name": after, "namespace": "app"}},
            "volumeName": after.rsplit("-", 1)[1],
            "volumeSnapshotName": f"vmsnapshot-{SNAP2_UID}-volume-{after.rsplit('-', 1)[1]}",
        }
        for after in names.values()
    ]
    content2["status"]["creationTime"] = "2026-11-29T13:00:00Z"
    restore = {
        "apiVersion": "snapshot.kubevirt.io/v1beta1",
        "kind": "VirtualMachineRestore",
        "metadata": {"name": "vm1-restore", "namespace": "app", "uid": RESTORE_UID},
        "spec": {
            "target": {"apiGroup": "kubevirt.io", "kind": "VirtualMachine", "name": "vm1"},
            "virtualMachineSnapshotName": "vm1-snap",
        },
        "status": {
            "complete": True,
            "restoreTime": "2026-11-29T11:00:05Z",
            "restores": [
                {
                    "persistentVolumeClaim": after,
                    "volumeName": after.rsplit("-", 1)[1],
                    "volumeSnapshotName": f"vmsnapshot-uid-vms-volume-{after.rsplit('-', 1)[1]}",
                }
                for after in names.values()
            ],
        },
    }
    return docs + new + [snap2, content2, restore]


def test_a_vm_restored_in_place_and_snapshotted_again_keeps_both_snapshots(tmp_path: Path) -> None:
    """After an in-place restore the disks are ``restore-<uid>-<volume>`` PVCs. The new
    snapshot's VolumeSnapshots and the new VM snapshot copy them; the snapshot restored from
    (of this VM, its volumes by name) still does: three copies each. The card's newest copy
    is the new snapshot."""
    docs = _restored_in_place(_docs(VM_SNAPSHOT))
    report = _complete(tmp_path, VM_SNAPSHOT, docs)
    finding = _finding(report, "RR-STG-001")
    assert (finding["status"], finding["severity"]) == ("FAIL", "medium"), finding["message"]
    copies = {r["pvc"]: r["copies"] for r in finding["evidence"]["disks"]}
    assert copies == {f"restore-{RESTORE_UID}-root": 3, f"restore-{RESTORE_UID}-data": 3}
    vm = next(v for v in report["vms"] if v["name"] == "vm1")
    newest = {d["name"]: d["newest_copy"] for d in vm["recovery_card"]["disks"] if d["pvc"]}
    assert {n: c["time"] for n, c in newest.items()} == {
        "root": "2026-11-29T13:00:00Z",
        "data": "2026-11-29T13:00:00Z",
    }, newest


# -- beside a Backup: the VM stays READY ---------------------------------------------------

READY = "RR-BKP-001/pass.yaml"
_SNAPSHOT_KINDS = ("VirtualMachineSnapshot", "VirtualMachineSnapshotContent", "VolumeSnapshot")


def _with_backend_state(docs: Docs) -> None:
    """KubeVirt snapshots the persistent-state PVC of a VM with EFI or TPM state too, as a
    volume named ``persistent-state-for-<vm>`` that is in no VM spec (pkg/storage/utils/
    volumes.go ``GetVolumes`` ``WithAllVolumes``, ``BackendPVCVolumeName``)."""
    _content(docs)["spec"]["volumeBackups"].append(
        {
            "persistentVolumeClaim": {
                "metadata": {"name": "persistent-state-for-vm1-abcde", "namespace": "app"}
            },
            "volumeName": "persistent-state-for-vm1",
            "volumeSnapshotName": "vmsnapshot-uid-vms-volume-persistent-state-for-vm1",
        }
    )
    _vmsnap(docs)["status"]["snapshotVolumes"]["includedVolumes"].append("persistent-state-for-vm1")
    vs = copy.deepcopy(_of(docs, "VolumeSnapshot")[0])
    vs["metadata"]["name"] = "vmsnapshot-uid-vms-volume-persistent-state-for-vm1"
    vs["spec"]["source"]["persistentVolumeClaimName"] = "persistent-state-for-vm1-abcde"
    vs["status"]["boundVolumeSnapshotContentName"] = "snapcontent-state"
    vsc = copy.deepcopy(
        next(
            c
            for c in _of(docs, "VolumeSnapshotContent")
            if c["metadata"]["name"] == "snapcontent-vmsnapshot-uid-vms-volume-root"
        )
    )
    vsc["metadata"]["name"] = "snapcontent-state"
    vsc["spec"]["source"]["volumeHandle"] = "h-persistent-state-for-vm1-abcde"
    vsc["spec"]["volumeSnapshotRef"]["name"] = vs["metadata"]["name"]
    docs += [vs, vsc]


def _old_kubevirt(docs: Docs) -> None:
    _v1alpha1(docs)
    del _vmsnap(docs)["status"]["snapshotVolumes"]
    _vmsnap(docs)["status"].pop("sourceUID", None)


BESIDE = {
    "as the fixture": lambda d: None,
    "status as written": _cut_status,
    "backend state backed up": _with_backend_state,
    "older KubeVirt": _old_kubevirt,
    "full VM and PVC objects": _full_objects,
}


@pytest.mark.parametrize("shape", sorted(BESIDE))
def test_a_healthy_vm_snapshot_beside_a_backup_leaves_the_vm_ready(
    tmp_path: Path, shape: str
) -> None:
    """The backed-up VM of the READY fixture with a healthy VM snapshot too: still READY,
    RR-STG-001 PASS, and each disk has two copies more (its VolumeSnapshot and the VM
    snapshot) than without it."""
    snap = _docs(VM_SNAPSHOT)
    BESIDE[shape](snap)
    extra = [
        d
        for d in snap
        if d["kind"] in _SNAPSHOT_KINDS
        or (d["kind"] == "VolumeSnapshotContent" and "daily" not in d["metadata"]["name"])
    ]
    base = _complete(tmp_path / "base", READY, _docs(READY))
    report = _complete(tmp_path / "snap", READY, _docs(READY) + extra)
    vm = next(v for v in report["vms"] if v["name"] == "vm1")
    assert vm["readiness"] == "READY", [
        (f["check_id"], f["message"]) for f in vm["findings"] if f["status"] != "PASS"
    ]
    before = {r["pvc"]: r["copies"] for r in _finding(base, "RR-STG-001")["evidence"]["disks"]}
    finding = _finding(report, "RR-STG-001")
    assert finding["status"] == "PASS", finding["message"]
    after = {r["pvc"]: r["copies"] for r in finding["evidence"]["disks"]}
    assert after == {pvc: n + 2 for pvc, n in before.items()}, (before, after)


# -- maxSockets in the snapshotted VM: refused by KubeVirt v1.0 and v1.1 only ---------------


def _kubevirt(version: str | None) -> dict[str, Any]:
    """The KubeVirt CR, deployed at ``version`` (None: no observedKubeVirtVersion)."""
    status: dict[str, Any] = {"phase": "Deployed"}
    if version is not None:
        status["observedKubeVirtVersion"] = version
    return {
        "apiVersion": "kubevirt.io/v1",
        "kind": "KubeVirt",
        "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
        "spec": {"configuration": {"developerConfiguration": {"featureGates": []}}},
        "status": status,
    }


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("v1.2.0", "medium"),
        ("v1.5.2", "medium"),
        ("v1.6.0-rc.1", "medium"),
        ("v1.1.4", "high"),
        ("v1.0.0", "high"),
        (None, "high"),
        ("not read", "high"),
    ],
)
def test_a_snapshot_holding_max_sockets_is_refused_only_by_kubevirt_1_0_and_1_1(
    tmp_path: Path, version: str | None, expected: str
) -> None:
    """KubeVirt v1.0 and v1.1 refused a VM template with ``cpu.maxSockets`` ("CPU topology
    maxSockets cannot be set directy in VM template", kubevirt#10481), so an online snapshot
    of a CPU-hotplug VM, whose content holds it, could not be restored. v1.2 removed that
    refusal (kubevirt commit d0353454c7, "Remove LiveUpdateFeatures"): ``maxSockets`` is an
    ordinary field users and instancetypes set, and such a snapshot is the disks' copy
    (FAIL medium). It was read as refused whatever KubeVirt ran (FAIL high). Where the
    version is not read (no CR, or no version in it) the refusal stays. (The check catalog's
    cpu-hotplug fixture backs up no volume, so it fails high whatever this rule says.)"""
    docs = _alone(_docs(VM_SNAPSHOT))
    held = _content(docs)["spec"]["source"]["virtualMachine"]["spec"]["template"]["spec"]
    held["domain"]["cpu"] = {"sockets": 2, "maxSockets": 8}
    if version != "not read":
        docs.append(_kubevirt(version))
    status, severity, message, copies = _rows(tmp_path, docs)
    assert (status, severity) == ("FAIL", expected), message
    n = 1 if expected == "medium" else 0
    assert copies == {"vm1-root": n, "vm1-data": n}


def test_a_user_set_max_sockets_snapshot_on_current_kubevirt_keeps_the_copy(
    tmp_path: Path,
) -> None:
    """A VM whose owner set ``maxSockets`` in its template (the CPU hotplug user guide's own
    example), snapshotted online on KubeVirt v1.5: one copy of each disk, as without it."""
    docs = _alone(_docs(VM_SNAPSHOT))
    cpu = {"cores": 1, "sockets": 2, "threads": 1, "maxSockets": 8}
    for spec in _specs(docs):
        spec["domain"]["cpu"] = dict(cpu)
    docs.append(_kubevirt("v1.5.2"))
    status, severity, message, copies = _rows(tmp_path, docs)
    assert (status, severity) == ("FAIL", "medium"), message
    assert copies == {"vm1-root": 1, "vm1-data": 1}


@pytest.mark.parametrize("policy", ["InPlace", "PrefixTargetName"])
def test_a_vm_restored_onto_pvcs_of_the_same_names_keeps_its_snapshot(
    tmp_path: Path, policy: str
) -> None:
    """With ``volumeRestorePolicy: InPlace`` (the claim's own name) or ``PrefixTargetName``
    (``<vm>-<volume>``: vm1-root, vm1-data here) a restore re-creates the PVCs under the same
    names, from the snapshot's VolumeSnapshots, on new volumes (restore.go
    ``restoreVolumeName``). Those VolumeSnapshots predate the new PVCs and hold another volume
    handle, so they are no standalone copies; the VM snapshot, which restores by volume name,
    still is: one copy each, namespace-bound."""
    docs = _alone(_docs(VM_SNAPSHOT))
    for pvc in _of(docs, "PersistentVolumeClaim"):
        name = pvc["metadata"]["name"]
        if name not in ("vm1-root", "vm1-data"):
            continue
        pvc["metadata"]["labels"] = {
            "restore.kubevirt.io/source-vm-name": "vm1",
            "restore.kubevirt.io/source-vm-namespace": "app",
        }
        pvc["metadata"]["annotations"] = {"restore.kubevirt.io/name": f"vm1-{policy.lower()}"}
        pvc["spec"]["dataSource"] = {
            "apiGroup": "snapshot.storage.k8s.io",
            "kind": "VolumeSnapshot",
            "name": f"vmsnapshot-uid-vms-volume-{name.split('-')[1]}",
        }
    for pv in _of(docs, "PersistentVolume"):
        pv["spec"]["csi"]["volumeHandle"] += "-restored"
    status, severity, message, copies = _rows(tmp_path, docs)
    assert (status, severity) == ("FAIL", "medium"), message
    assert copies == {"vm1-root": 1, "vm1-data": 1}
