"""Builders for the Kubernetes objects of the synthetic estate, shaped like ``oc get -o yaml``.

Each function returns a fresh plain dict; shapes follow the hand-made corpus
export (``../shared/corpus/cluster-export``): OpenShift Virtualization 4.18,
OADP 1.4 / Velero 1.14 with CSI snapshots, ODF storage plus ``nfs-csi``.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

__all__ = [
    "ts",
    "STORAGE_CLASSES",
    "static_objects",
    "namespace",
    "nad",
    "data_volume",
    "pvc",
    "pv",
    "backup",
    "schedule",
    "restore",
    "velero_vsc",
]

ADP_NS = "openshift-adp"
BSL = "dpa-primary-1"
RBD = "openshift-storage.rbd.csi.ceph.com"
CEPHFS = "openshift-storage.cephfs.csi.ceph.com"
NFS = "nfs.csi.k8s.io"

#: StorageClass name -> (provisioner, reclaimPolicy, volumeMode of its PVCs)
STORAGE_CLASSES: dict[str, tuple[str, str, str]] = {
    "ocs-storagecluster-ceph-rbd-virtualization": (RBD, "Delete", "Block"),
    "ocs-storagecluster-ceph-rbd": (RBD, "Delete", "Block"),
    "vm-gold-retain": (RBD, "Retain", "Block"),
    "ocs-storagecluster-cephfs": (CEPHFS, "Delete", "Filesystem"),
    "nfs-csi": (NFS, "Delete", "Filesystem"),
}
SNAPCLASS = {
    RBD: "ocs-storagecluster-rbdplugin-snapclass",
    CEPHFS: "ocs-storagecluster-cephfsplugin-snapclass",
}


def ts(moment: datetime) -> str:
    """RFC 3339 UTC with a ``Z``, second precision."""
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def meta(
    name: str, uid: str, created: datetime, ns: str | None = None, **extra: Any
) -> dict[str, Any]:
    """Return ``metadata`` with the fields every object has."""
    out: dict[str, Any] = {
        "creationTimestamp": ts(created),
        "name": name,
        "resourceVersion": str(50_000_000 + (int(uid[:6], 16) % 18_000_000)),
        "uid": uid,
    }
    if ns is not None:
        out["namespace"] = ns
    out.update({k: v for k, v in extra.items() if v})
    return out


def owner(
    kind: str, api: str, name: str, uid: str, controller: bool = True
) -> list[dict[str, Any]]:
    """Return an ``ownerReferences`` list of one entry."""
    return [
        {
            "apiVersion": api,
            "blockOwnerDeletion": True,
            "controller": controller,
            "kind": kind,
            "name": name,
            "uid": uid,
        }
    ]


def static_objects(created: datetime, validated: datetime) -> dict[str, list[dict[str, Any]]]:
    """Cluster-wide singletons keyed by file stem: classes, BSL (last validated at ``validated``),
    DPA, instancetype, preference."""
    scs = [
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": meta(name, f"5c0{i:05d}-0000-4000-8000-00000000000{i}", created),
            "provisioner": prov,
            "reclaimPolicy": policy,
            "volumeBindingMode": "Immediate" if prov == NFS else "WaitForFirstConsumer",
            "allowVolumeExpansion": True,
        }
        for i, (name, (prov, policy, _)) in enumerate(sorted(STORAGE_CLASSES.items()))
    ]
    vscs = [
        {
            "apiVersion": "snapshot.storage.k8s.io/v1",
            "kind": "VolumeSnapshotClass",
            "deletionPolicy": "Delete",
            "driver": driver,
            "metadata": meta(name, f"5dc{i:05d}-0000-4000-8000-000000000000", created),
            "parameters": {"clusterID": "openshift-storage"},
        }
        for i, (driver, name) in enumerate(sorted(SNAPCLASS.items()))
    ]
    bsl = {
        "apiVersion": "velero.io/v1",
        "kind": "BackupStorageLocation",
        "metadata": meta(BSL, "8206b4cd-7ba0-419c-aade-50fe7a4d7e21", created, ADP_NS),
        "spec": {
            "default": True,
            "objectStorage": {"bucket": "estate-velero", "prefix": "velero"},
            "provider": "aws",
            "credential": {"key": "cloud", "name": "cloud-credentials"},
            "config": {"region": "eu-west-1", "s3Url": "https://s3.dr-site.corp.example"},
        },
        # Velero validates its location every minute: last validated just before the audit
        "status": {"phase": "Available", "lastValidationTime": ts(validated)},
    }
    dpa = {
        "apiVersion": "oadp.openshift.io/v1alpha1",
        "kind": "DataProtectionApplication",
        "metadata": meta("dpa-primary", "34ceb605-78c7-4f4c-970b-d7084c04cf08", created, ADP_NS),
        "spec": {
            "configuration": {
                "velero": {"defaultPlugins": ["openshift", "aws", "csi", "kubevirt"]},
                "nodeAgent": {"enable": True, "uploaderType": "kopia"},
            }
        },
    }
    itype = {
        "apiVersion": "instancetype.kubevirt.io/v1beta1",
        "kind": "VirtualMachineClusterInstancetype",
        "metadata": meta("u1.large", "ea78e22b-9f84-47cd-8c72-812d787da47e", created),
        "spec": {"cpu": {"guest": 2}, "memory": {"guest": "8Gi"}},
    }
    pref = {
        "apiVersion": "instancetype.kubevirt.io/v1beta1",
        "kind": "VirtualMachineClusterPreference",
        "metadata": meta("windows.11.virtio", "5b97a8c9-d3cc-4591-94ff-6e0efc0e759e", created),
        "spec": {
            "devices": {
                "preferredDiskBus": "virtio",
                "preferredInterfaceModel": "virtio",
                "preferredTPM": {"persistent": True},
            },
            "firmware": {"preferredEfi": {"persistent": True, "secureBoot": True}},
            "features": {"preferredSmm": {}},
        },
    }
    return {
        "storageclasses": scs,
        "volumesnapshotclasses": vscs,
        "backupstoragelocations": [bsl],
        "dataprotectionapplications": [dpa],
        "virtualmachineclusterinstancetypes": [itype],
        "virtualmachineclusterpreferences": [pref],
        "datauploads": [],
        "podvolumebackups": [],
    }


def namespace(name: str, uid: str, created: datetime, team: str, kmp: bool) -> dict[str, Any]:
    labels = {"kubernetes.io/metadata.name": name, "owner": team}
    if not kmp:
        labels["mutatevirtualmachines.kubemacpool.io"] = "ignore"
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": meta(name, uid, created, labels=labels),
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }


def nad(ns: str, name: str, uid: str, created: datetime, vlan: int) -> dict[str, Any]:
    config = (
        f'{{"cniVersion":"0.3.1","name":"{name}","type":"cnv-bridge","bridge":"br-{vlan}",'
        f'"vlan":{vlan},"macspoofchk":true,"ipam":{{}}}}'
    )
    return {
        "apiVersion": "k8s.cni.cncf.io/v1",
        "kind": "NetworkAttachmentDefinition",
        "metadata": meta(name, uid, created, ns, generation=1),
        "spec": {"config": config},
    }


def data_volume(
    ns: str,
    name: str,
    uid: str,
    created: datetime,
    vm: tuple[str, str],
    size: str,
    sc: str | None,
    labels: dict[str, str],
) -> dict[str, Any]:
    storage: dict[str, Any] = {"resources": {"requests": {"storage": size}}}
    if sc:
        storage["storageClassName"] = sc
    return {
        "apiVersion": "cdi.kubevirt.io/v1beta1",
        "kind": "DataVolume",
        "metadata": meta(
            name,
            uid,
            created,
            ns,
            labels={**labels, "kubevirt.io/created-by": vm[1]},
            ownerReferences=owner("VirtualMachine", "kubevirt.io/v1", vm[0], vm[1]),
        ),
        "spec": {"source": {"blank": {}}, "storage": storage},
        "status": {"claimName": name, "phase": "Succeeded", "progress": "100.0%"},
    }


def pvc(
    ns: str,
    name: str,
    uid: str,
    created: datetime,
    sc: str,
    size: str,
    labels: dict[str, str],
    owner_refs: list[dict[str, Any]] | None,
) -> dict[str, Any]:
    prov, _, mode = STORAGE_CLASSES[sc]
    access = ["ReadWriteMany"]
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": meta(
            name,
            uid,
            created,
            ns,
            labels=labels,
            ownerReferences=owner_refs,
            annotations={"volume.kubernetes.io/storage-provisioner": prov},
        ),
        "spec": {
            "accessModes": access,
            "resources": {"requests": {"storage": size}},
            "storageClassName": sc,
            "volumeMode": mode,
            "volumeName": f"pvc-{uid}",
        },
        "status": {"accessModes": access, "capacity": {"storage": size}, "phase": "Bound"},
    }


def pv(claim: dict[str, Any], uid: str) -> dict[str, Any]:
    cm, cs = claim["metadata"], claim["spec"]
    prov, policy, _ = STORAGE_CLASSES[cs["storageClassName"]]
    created = datetime.strptime(cm["creationTimestamp"], "%Y-%m-%dT%H:%M:%SZ") + timedelta(
        seconds=2
    )
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": meta(
            cs["volumeName"], uid, created, annotations={"pv.kubernetes.io/provisioned-by": prov}
        ),
        "spec": {
            "accessModes": cs["accessModes"],
            "capacity": {"storage": cs["resources"]["requests"]["storage"]},
            "claimRef": {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "name": cm["name"],
                "namespace": cm["namespace"],
                "uid": cm["uid"],
            },
            "csi": {"driver": prov, "volumeHandle": f"0001-0011-openshift-storage-{uid}"},
            "persistentVolumeReclaimPolicy": policy,
            "storageClassName": cs["storageClassName"],
            "volumeMode": cs["volumeMode"],
        },
        "status": {"phase": "Bound"},
    }


def backup_spec(ns: str, selector: dict[str, str] | None, ttl_days: int) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "csiSnapshotTimeout": "10m0s",
        "defaultVolumesToFsBackup": False,
        "includedNamespaces": [ns],
        "itemOperationTimeout": "4h0m0s",
        "snapshotMoveData": False,
        "storageLocation": BSL,
        "ttl": f"{ttl_days * 24}h0m0s",
    }
    if selector:
        spec["labelSelector"] = {"matchLabels": dict(selector)}
    return spec


def backup(
    name: str,
    uid: str,
    start: datetime,
    spec: dict[str, Any],
    phase: str,
    snaps: int,
    errors: int,
    schedule_name: str | None,
    ttl_days: int,
) -> dict[str, Any]:
    status: dict[str, Any] = {"formatVersion": "1.1.0", "phase": phase, "version": 1}
    if phase != "FailedValidation":
        status["startTimestamp"] = ts(start + timedelta(seconds=1))
        status["expiration"] = ts(start + timedelta(days=ttl_days))
    if phase in ("Completed", "PartiallyFailed", "Failed"):
        status["completionTimestamp"] = ts(start + timedelta(minutes=6 + snaps % 11))
        items = 20 + 9 * snaps
        status["progress"] = {"itemsBackedUp": items, "totalItems": items}
    if phase in ("Completed", "PartiallyFailed"):
        status["csiVolumeSnapshotsAttempted"] = snaps + errors
        status["csiVolumeSnapshotsCompleted"] = snaps
    if errors:
        status["errors"] = errors
    if phase == "FailedValidation":
        status["validationErrors"] = ["an existing backup storage location was not specified"]
    labels = {"velero.io/storage-location": spec["storageLocation"]}
    if schedule_name:
        labels["velero.io/schedule-name"] = schedule_name
    return {
        "apiVersion": "velero.io/v1",
        "kind": "Backup",
        "metadata": meta(name, uid, start, ADP_NS, labels=labels, generation=9),
        "spec": spec,
        "status": status,
    }


def schedule(
    name: str,
    uid: str,
    created: datetime,
    spec: dict[str, Any],
    paused: bool,
    last: datetime | None,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "apiVersion": "velero.io/v1",
        "kind": "Schedule",
        "metadata": meta(name, uid, created, ADP_NS, generation=2),
        "spec": {"schedule": "0 1 * * *", "template": spec, "useOwnerReferencesInBackup": False},
        "status": {"phase": "Enabled"},
    }
    if paused:
        out["spec"]["paused"] = True
    if last is not None:
        out["status"]["lastBackup"] = ts(last)
    return out


def restore(
    name: str, uid: str, start: datetime, backup_name: str, ns: str, app: str
) -> dict[str, Any]:
    return {
        "apiVersion": "velero.io/v1",
        "kind": "Restore",
        "metadata": meta(name, uid, start, ADP_NS, generation=7),
        "spec": {
            "backupName": backup_name,
            "includedNamespaces": [ns],
            "labelSelector": {"matchLabels": {"app": app}},
            "namespaceMapping": {ns: f"{ns}-drill"},
            "restorePVs": True,
        },
        "status": {
            "completionTimestamp": ts(start + timedelta(minutes=7)),
            "phase": "Completed",
            "progress": {"itemsRestored": 14, "totalItems": 14},
            "startTimestamp": ts(start + timedelta(seconds=1)),
        },
    }


def velero_vsc(
    uid: str,
    ref_uid: str,
    created: datetime,
    backup_name: str,
    driver: str,
    mode: str,
    size_bytes: int,
    handle: str,
) -> dict[str, Any]:
    """A Velero 1.14 leftover: static, Retain, labelled with the backup, dummy snapshot ref."""
    return {
        "apiVersion": "snapshot.storage.k8s.io/v1",
        "kind": "VolumeSnapshotContent",
        "metadata": meta(
            f"snapcontent-{uid}",
            uid,
            created,
            generation=1,
            labels={"velero.io/backup-name": backup_name},
        ),
        "spec": {
            "deletionPolicy": "Retain",
            "driver": driver,
            "source": {"snapshotHandle": handle},
            "sourceVolumeMode": mode,
            "volumeSnapshotClassName": SNAPCLASS[driver],
            "volumeSnapshotRef": {
                "apiVersion": "snapshot.storage.k8s.io/v1",
                "kind": "VolumeSnapshot",
                "name": f"name-{ref_uid}",
                "namespace": f"ns-{ref_uid}",
            },
        },
        "status": {
            "creationTime": int(created.timestamp()) * 1_000_000_000,
            "readyToUse": True,
            "restoreSize": size_bytes,
            "snapshotHandle": handle,
        },
    }
