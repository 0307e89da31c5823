"""VM-shaped objects of the synthetic estate: VirtualMachine, its VMI and VM snapshots.

A :class:`VmPlan` says what one VM looks like (firmware, disks, NICs, what is
pinned); the builders turn it into the objects ``oc get`` would print.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from bench.objects import meta, owner, ts

__all__ = ["Disk", "VmPlan", "vm_object", "vmi_object", "vm_snapshot_objects"]


@dataclass
class Disk:
    """One PVC-backed disk (or the persistent-state PVC): names, size, class, labels."""

    name: str
    pvc: str
    uid: str
    size: str
    size_bytes: int
    sc: str
    labels: dict[str, str]
    from_template: bool = True
    dv_uid: str = ""


@dataclass
class VmPlan:
    """What one VM looks like; ``gaps`` names the recovery gaps planted on purpose."""

    ns: str
    name: str
    uid: str
    created: datetime
    windows: bool
    efi: str | None  # None (BIOS), "persistent", "volatile"
    via_preference: bool
    fw_pinned: bool
    mac_pinned: bool
    macs: list[str]
    nics: list[tuple[str, str | None]]  # (name, multus network name or None for pod)
    disks: list[Disk]
    labels: dict[str, str]
    state_pvc: Disk | None = None
    ephemeral: bool = False
    running: bool = True
    inline_cloudinit: bool = False
    gaps: list[str] = field(default_factory=list)


def _domain(plan: VmPlan) -> dict[str, Any]:
    disks: list[dict[str, Any]] = []
    names = ["containerdisk"] if plan.ephemeral else [d.name for d in plan.disks]
    for i, name in enumerate(names):
        disk: dict[str, Any] = {
            "disk": {}
            if plan.via_preference
            else {"bus": "sata" if plan.windows and i == 0 else "virtio"},
            "name": name,
        }
        if i == 0 and len(names) > 1:
            disk["bootOrder"] = 1
        disks.append(disk)
    if not plan.windows:
        disks.append({"disk": {"bus": "virtio"}, "name": "cloudinitdisk"})
    ifaces: list[dict[str, Any]] = []
    for (nic, net), mac in zip(plan.nics, plan.macs, strict=True):
        iface: dict[str, Any] = {"name": nic, ("bridge" if net else "masquerade"): {}}
        if not plan.via_preference:
            iface["model"] = "e1000e" if plan.windows else "virtio"
        if plan.mac_pinned:
            iface["macAddress"] = mac
        ifaces.append(iface)
    devices: dict[str, Any] = {"disks": disks, "interfaces": ifaces}
    domain: dict[str, Any] = {"devices": devices, "resources": {}}
    if not plan.via_preference:
        domain["cpu"] = {"cores": 2, "sockets": 1, "threads": 1}
        domain["memory"] = {"guest": "8Gi"}
        domain["machine"] = {"type": "pc-q35-rhel9.4.0"}
    firmware: dict[str, Any] = {}
    if plan.efi and not plan.via_preference:
        efi: dict[str, Any] = (
            {"persistent": True, "secureBoot": True} if plan.efi == "persistent" else {}
        )
        firmware["bootloader"] = {"efi": efi}
        domain["features"] = {"smm": {"enabled": True}}
        if plan.windows:
            devices["tpm"] = {"persistent": True}
    if plan.fw_pinned:
        firmware["uuid"] = plan.uid[::-1][:8] + plan.uid[8:]
        firmware["serial"] = plan.uid[:8] + plan.uid[::-1][8:]
    if firmware:
        domain["firmware"] = firmware
    return domain


def _volumes(plan: VmPlan) -> list[dict[str, Any]]:
    if plan.ephemeral:
        vols: list[dict[str, Any]] = [
            {
                "containerDisk": {"image": "quay.io/containerdisks/fedora:41"},
                "name": "containerdisk",
            }
        ]
    else:
        vols = [
            {"dataVolume": {"name": d.pvc}, "name": d.name}
            if d.from_template
            else {"persistentVolumeClaim": {"claimName": d.pvc}, "name": d.name}
            for d in plan.disks
        ]
    if not plan.windows:
        ci: dict[str, Any] = (
            {"userData": f"#cloud-config\nhostname: {plan.name}\npackages:\n  - qemu-guest-agent\n"}
            if plan.inline_cloudinit
            else {"secretRef": {"name": f"{plan.name}-cloudinit"}}
        )
        vols.append({"cloudInitNoCloud": ci, "name": "cloudinitdisk"})
    return vols


def _template_spec(plan: VmPlan) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "domain": _domain(plan),
        "networks": [
            {"name": nic, "multus": {"networkName": net}} if net else {"name": nic, "pod": {}}
            for nic, net in plan.nics
        ],
        "terminationGracePeriodSeconds": 3600 if plan.windows else 180,
        "volumes": _volumes(plan),
    }
    if not plan.windows:
        spec["accessCredentials"] = [
            {
                "sshPublicKey": {
                    "propagationMethod": {"noCloud": {}},
                    "source": {"secret": {"secretName": f"{plan.ns}-ssh-pubkeys"}},
                }
            }
        ]
    return spec


#: The ``vm.kubevirt.io/validations`` annotation OpenShift's common templates write on each
#: VM made from them, as written (ssp-operator common-templates v0.35.0, rhel9-server-medium
#: and windows2k22-server-medium; the Windows one's ``disks[*]`` paths are flow-like text).
_WINDOWS_BUS = [
    (
        "windows-virtio-bus",
        "disks[*].disk.bus",
        "virtio disk bus type has better performance, "
        "install virtio drivers in VM and change bus type",
        '["virtio"],\n    "justWarning": true',
    ),
    (
        "windows-disk-bus",
        "disks[*].disk.bus",
        "disk bus has to be either virtio or sata or scsi",
        '["virtio", "sata", "scsi"]',
    ),
    ("windows-cd-bus", "disks[*].cdrom.bus", "cd bus has to be sata", '["sata"]'),
]
_MEMORY_RULE = (
    '  {\n    "name": "minimal-required-memory",\n'
    '    "path": "jsonpath::.spec.domain.memory.guest",\n    "rule": "integer",\n'
    '    "message": "This VM requires more memory.",\n    "min": %d\n  }'
)
_VALIDATIONS = {
    "rhel9": "[\n" + _MEMORY_RULE % 1610612736 + "\n]\n",
    "windows2k22": "[\n"
    + _MEMORY_RULE % 536870912
    + "".join(
        f', {{\n    "name": "{name}",\n'
        f'    "path": "jsonpath::.spec.domain.devices.{path}",\n'
        f'    "valid": "jsonpath::.spec.domain.devices.{path}",\n    "rule": "enum",\n'
        f'    "message": "{message}",\n    "values": {values}\n  }}'
        for name, path, message, values in _WINDOWS_BUS
    )
    + "\n]\n",
}


def vm_object(plan: VmPlan) -> dict[str, Any]:
    """Return the VirtualMachine for ``plan`` (dataVolumeTemplates for template disks)."""
    os_name = "windows2k22" if plan.windows else "rhel9"
    spec: dict[str, Any] = {
        "runStrategy": "Always" if plan.running else "Halted",
        "template": {
            "metadata": {
                "annotations": {"vm.kubevirt.io/os": os_name, "vm.kubevirt.io/workload": "server"},
                # as the API server writes an embedded ObjectMeta (oc get -o yaml: null)
                "creationTimestamp": None,
                "labels": {"kubevirt.io/domain": plan.name, **plan.labels},
            },
            "spec": _template_spec(plan),
        },
    }
    dvts = [
        {
            "apiVersion": "cdi.kubevirt.io/v1beta1",
            "kind": "DataVolume",
            "metadata": {"creationTimestamp": None, "labels": d.labels, "name": d.pvc},
            "spec": {
                "source": {"blank": {}},
                "storage": {
                    "resources": {"requests": {"storage": d.size}},
                    "storageClassName": d.sc,
                },
            },
        }
        for d in plan.disks
        if d.from_template
    ]
    if dvts:
        spec["dataVolumeTemplates"] = dvts
    if plan.via_preference:
        spec["instancetype"] = {"kind": "virtualmachineclusterinstancetype", "name": "u1.large"}
        spec["preference"] = {
            "kind": "virtualmachineclusterpreference",
            "name": "windows.11.virtio",
        }
    labels = {**plan.labels, "vm.kubevirt.io/template": f"{os_name}-server-medium"}
    return {
        "apiVersion": "kubevirt.io/v1",
        "kind": "VirtualMachine",
        "metadata": meta(
            plan.name,
            plan.uid,
            plan.created,
            plan.ns,
            labels=labels,
            generation=2,
            annotations={
                "kubevirt.io/latest-observed-api-version": "v1",
                "vm.kubevirt.io/validations": _VALIDATIONS[os_name],
            },
            finalizers=["kubevirt.io/virtualMachineControllerFinalize"],
        ),
        "spec": spec,
        "status": {
            "created": plan.running,
            "printableStatus": "Running" if plan.running else "Stopped",
            "ready": plan.running,
            "volumeSnapshotStatuses": [{"enabled": True, "name": d.name} for d in plan.disks],
        },
    }


def vmi_object(
    plan: VmPlan, vm: dict[str, Any], uid: str, started: datetime, node: str
) -> dict[str, Any]:
    """Return the running VMI of ``vm``: runtime UUID and MACs are always filled in."""
    tspec = vm["spec"]["template"]["spec"]
    domain = {**tspec["domain"], "firmware": {**tspec["domain"].get("firmware", {})}}
    domain["firmware"].setdefault("uuid", plan.uid[:24] + plan.uid[-12:][::-1])
    return {
        "apiVersion": "kubevirt.io/v1",
        "kind": "VirtualMachineInstance",
        "metadata": meta(
            plan.name,
            uid,
            started,
            plan.ns,
            labels={"kubevirt.io/domain": plan.name, "kubevirt.io/nodeName": node},
            ownerReferences=owner("VirtualMachine", "kubevirt.io/v1", plan.name, plan.uid),
        ),
        "spec": {**tspec, "domain": domain},
        "status": {
            "interfaces": [
                {"name": nic, "mac": mac, "infoSource": "domain, guest-agent"}
                for (nic, _), mac in zip(plan.nics, plan.macs, strict=True)
            ],
            "nodeName": node,
            "phase": "Running",
            "guestOSInfo": {"id": "mswindows" if plan.windows else "rhel"},
        },
    }


def vm_snapshot_objects(
    plan: VmPlan, vm: dict[str, Any], uids: list[str], taken: datetime
) -> dict[str, list[dict[str, Any]]]:
    """A VirtualMachineSnapshot with its content, one VolumeSnapshot and bound VSC per disk."""
    snap_uid, content_uid = uids[0], uids[1]
    name = f"{plan.name}-pre-upgrade"
    content_name = f"vmsnapshot-content-{snap_uid}"
    snap_api = "snapshot.kubevirt.io/v1beta1"
    vols, vscs, backups = [], [], []
    for disk, vs_uid in zip(plan.disks, uids[2:], strict=False):
        vs_name = f"vmsnapshot-{snap_uid}-volume-{disk.name}"
        vols.append(
            {
                "apiVersion": "snapshot.storage.k8s.io/v1",
                "kind": "VolumeSnapshot",
                "metadata": meta(
                    vs_name,
                    vs_uid,
                    taken,
                    plan.ns,
                    labels={
                        "snapshot.kubevirt.io/source-vm-name": plan.name,
                        "snapshot.kubevirt.io/source-vm-namespace": plan.ns,
                    },
                    ownerReferences=owner(
                        "VirtualMachineSnapshotContent", snap_api, content_name, content_uid
                    ),
                ),
                "spec": {"source": {"persistentVolumeClaimName": disk.pvc}},
                "status": {
                    "boundVolumeSnapshotContentName": f"snapcontent-{vs_uid}",
                    "creationTime": ts(taken),
                    "readyToUse": True,
                    "restoreSize": disk.size,
                },
            }
        )
        vscs.append(
            {
                "apiVersion": "snapshot.storage.k8s.io/v1",
                "kind": "VolumeSnapshotContent",
                "metadata": meta(f"snapcontent-{vs_uid}", vs_uid[::-1], taken),
                "spec": {
                    "deletionPolicy": "Delete",
                    "driver": "openshift-storage.rbd.csi.ceph.com",
                    "source": {"volumeHandle": f"0001-0011-openshift-storage-{disk.uid}"},
                    "volumeSnapshotRef": {
                        "apiVersion": "snapshot.storage.k8s.io/v1",
                        "kind": "VolumeSnapshot",
                        "name": vs_name,
                        "namespace": plan.ns,
                        "uid": vs_uid,
                    },
                },
                "status": {"readyToUse": True, "restoreSize": disk.size_bytes},
            }
        )
        backups.append(
            {
                "volumeName": disk.name,
                "volumeSnapshotName": vs_name,
                "persistentVolumeClaim": {"metadata": {"name": disk.pvc, "namespace": plan.ns}},
            }
        )
    snapshot = {
        "apiVersion": snap_api,
        "kind": "VirtualMachineSnapshot",
        "metadata": meta(
            name,
            snap_uid,
            taken,
            plan.ns,
            ownerReferences=owner(
                "VirtualMachine", "kubevirt.io/v1", plan.name, plan.uid, controller=False
            ),
        ),
        "spec": {
            "source": {"apiGroup": "kubevirt.io", "kind": "VirtualMachine", "name": plan.name}
        },
        "status": {
            "creationTime": ts(taken + timedelta(seconds=5)),
            "indications": ["Online", "GuestAgent"],
            "phase": "Succeeded",
            "readyToUse": True,
            "sourceUID": plan.uid,
            "virtualMachineSnapshotContentName": content_name,
        },
    }
    content = {
        "apiVersion": snap_api,
        "kind": "VirtualMachineSnapshotContent",
        "metadata": meta(
            content_name,
            content_uid,
            taken,
            plan.ns,
            ownerReferences=owner("VirtualMachineSnapshot", snap_api, name, snap_uid),
        ),
        "spec": {
            "source": {
                "virtualMachine": {"metadata": vm["metadata"], "spec": vm["spec"], "status": {}}
            },
            "virtualMachineSnapshotName": name,
            "volumeBackups": backups,
        },
        "status": {"creationTime": ts(taken + timedelta(seconds=5)), "readyToUse": True},
    }
    return {
        "virtualmachinesnapshots": [snapshot],
        "virtualmachinesnapshotcontents": [content],
        "volumesnapshots": vols,
        "volumesnapshotcontents": vscs,
    }
