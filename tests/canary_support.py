"""Secret canaries: plant unique values wherever VM definitions carry secrets, then hunt for them.

Each canary is ``<core><tail>``: ``core`` is alphanumeric (so it survives JSON,
HTML and URL escaping unchanged and is found by a plain search), ``tail`` holds
characters those encodings rewrite. :func:`leaks` looks for every core raw and
base64-encoded at each byte alignment, in bytes and in extracted text.
"""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path
from typing import Any

from tests.scale_support import good_objects, of_kind

TAIL = "<&>\"' /+=?%é"

#: where -> alphanumeric core of the canary planted there
CORES = {
    "userData": "Cq1UserDataZx",
    "userDataBase64": "Cq2UdB64Zx",
    "networkData": "Cq3NetDataZx",
    "networkDataBase64": "Cq4NdB64Zx",
    "configDrive": "Cq5CfgDriveZx",
    "sysprep": "Cq6SysprepZx",
    "accessCredentials": "Cq7AccessCredZx",
    "annotation-password": "Cq8AnnoPassZx",
    "annotation-token": "Cq9AnnoTokenZx",
    "label-secret": "CqALabelSecretZx",
    "last-applied": "CqBLastAppliedZx",
    "vmi-userData": "CqCVmiUserDataZx",
    "snapshot-userData": "CqDSnapUserDataZx",
    "template-annotation": "CqETmplAnnoZx",
    # credentials under other names (red team helper-35)
    "annotation-ssh-key": "CqFAnnoSshKeyZx",
    "dv-url-userinfo": "CqGDvUrlPassZx",
    "cdi-endpoint": "CqHCdiEndpointZx",
    "bsl-secret-key": "CqIBslSecretZx",
    "hook-command": "CqJHookCmdZx",
    "nad-config": "CqKNadConfigZx",
    "pv-chap": "CqLPvChapZx",
}


def canary(where: str) -> str:
    """The full planted value for ``where`` (core plus escaping-sensitive tail)."""
    return CORES[where] + TAIL


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _cloud_init(prefix: str = "") -> dict[str, Any]:
    return {
        "userData": f"#cloud-config\npassword: {canary(prefix + 'userData')}\nchpasswd: {{expire: false}}\n",
        "networkData": f"version: 2\nethernets: {{eth0: {{password: {canary('networkData')}}}}}\n",
    }


def plant(vm: dict[str, Any]) -> None:
    """Plant every canary into one VirtualMachine dict (in place)."""
    tmpl = vm["spec"]["template"]
    spec = tmpl["spec"]
    meta = vm["metadata"]
    meta.setdefault("annotations", {}).update(
        {
            "corp.example/root-password": canary("annotation-password"),
            "corp.example/api-token": canary("annotation-token"),
            "kubectl.kubernetes.io/last-applied-configuration": json.dumps(
                {"spec": {"userData": canary("last-applied")}}
            ),
        }
    )
    meta.setdefault("labels", {})["corp.example/secret-ref"] = CORES["label-secret"]
    tmpl.setdefault("metadata", {}).setdefault("annotations", {})["corp.example/admin-password"] = (
        canary("template-annotation")
    )
    vols = [v for v in spec.get("volumes", []) if "cloudInitNoCloud" not in v]
    vols += [
        {"name": "cloudinitdisk", "cloudInitNoCloud": _cloud_init()},
        {
            "name": "cloudinitb64",
            "cloudInitNoCloud": {
                "userDataBase64": _b64(f"#cloud-config\npassword: {canary('userDataBase64')}\n"),
                "networkDataBase64": _b64(f"version: 2 # {canary('networkDataBase64')}\n"),
            },
        },
        {
            "name": "configdrive",
            "cloudInitConfigDrive": {
                "userData": f"#cloud-config\npassword: {canary('configDrive')}\n"
            },
        },
        {
            "name": "sysprep",
            "sysprep": {
                "secret": {"name": "win-sysprep"},
                "unattend": f"<AdministratorPassword>{canary('sysprep')}</AdministratorPassword>",
            },
        },
    ]
    spec["volumes"] = vols
    spec["accessCredentials"] = [
        {
            "sshPublicKey": {
                "source": {"secret": {"secretName": "ssh-keys"}},
                "propagationMethod": {"noCloud": {}},
            }
        },
        {
            "userPassword": {
                "source": {"secret": {"secretName": "user-pw"}},
                "propagationMethod": {"qemuGuestAgent": {}},
                "password": canary("accessCredentials"),
            }
        },
    ]


def canary_objects() -> list[dict[str, Any]]:
    """The all-PASS export with every canary planted in its VM, VMI and a VM snapshot copy."""
    objects = good_objects()
    vm = of_kind(objects, "VirtualMachine")[0]
    plant(vm)
    vmi = of_kind(objects, "VirtualMachineInstance")[0]
    vmi["spec"]["volumes"] = [
        {"name": "cloudinitdisk", "cloudInitNoCloud": _cloud_init("vmi-")},
    ]
    _plant_elsewhere(objects)
    snap_vm = copy.deepcopy(vm)
    snap_vm["spec"]["template"]["spec"]["volumes"][-4]["cloudInitNoCloud"]["userData"] = canary(
        "snapshot-userData"
    )
    objects.append(
        {
            "apiVersion": "snapshot.kubevirt.io/v1beta1",
            "kind": "VirtualMachineSnapshotContent",
            "metadata": {"name": "vmsnapshot-content-x", "namespace": "app"},
            "spec": {
                "source": {"virtualMachine": snap_vm},
                "virtualMachineSnapshotName": "vm1-snap",
            },
            "status": {"readyToUse": True},
        }
    )
    return objects


def _plant_elsewhere(objects: list[dict[str, Any]]) -> None:
    """Canaries under names other than cloud-init's: a DataVolume URL's password and its CDI
    endpoint annotation, a BackupStorageLocation key, a Velero hook command, a CNI config
    password, a PersistentVolume's CHAP secret and an annotation key the old pattern missed."""
    vm = of_kind(objects, "VirtualMachine")[0]
    vm["metadata"]["annotations"]["corp.example/ssh-key"] = canary("annotation-ssh-key")
    core = CORES["dv-url-userinfo"]  # a URL's password holds no '/' or '@'
    objects.append(
        {
            "apiVersion": "cdi.kubevirt.io/v1beta1",
            "kind": "DataVolume",
            "metadata": {
                "name": "canary-dv",
                "namespace": "app",
                "creationTimestamp": "2026-01-10T10:00:00Z",
                "annotations": {
                    "cdi.kubevirt.io/storage.import.endpoint": "https://importer:"
                    + CORES["cdi-endpoint"]
                    + "@images.example.com/disk.img"
                },
            },
            "spec": {"source": {"http": {"url": f"https://admin:{core}@images.example.com/a.img"}}},
            "status": {"phase": "Succeeded"},
        }
    )
    bsl = of_kind(objects, "BackupStorageLocation")[0]
    bsl["spec"].setdefault("config", {})["secretAccessKey"] = canary("bsl-secret-key")
    backup = of_kind(objects, "Backup")[0]
    backup["spec"]["hooks"] = {
        "resources": [
            {
                "name": "db",
                "pre": [{"exec": {"command": ["mysql", "-p" + canary("hook-command")]}}],
            }
        ]
    }
    nad = of_kind(objects, "NetworkAttachmentDefinition")[0]
    config = json.loads(nad["spec"]["config"])
    config["password"] = canary("nad-config")
    nad["spec"]["config"] = json.dumps(config)
    pv = of_kind(objects, "PersistentVolume")[0]
    pv["spec"].setdefault("csi", {}).setdefault("volumeAttributes", {})["chapPassword"] = canary(
        "pv-chap"
    )


def _needles() -> dict[bytes, str]:
    needles: dict[bytes, str] = {}
    for where, core in CORES.items():
        needles[core.encode()] = f"{where} (raw/JSON/HTML/URL)"
        for pad in range(3):
            enc = base64.b64encode(b"\x00" * pad + core.encode())
            # drop the characters that depend on the neighbouring bytes
            start = (pad * 4 + 2) // 3 + 1
            needles[enc[start : len(enc) - 3]] = f"{where} (base64)"
    return needles


NEEDLES = _needles()


def leaks(blob: bytes | str) -> list[str]:
    """Return the canaries found in ``blob`` (raw or any base64 alignment), as descriptions."""
    data = blob.encode("utf-8", "surrogatepass") if isinstance(blob, str) else blob
    return sorted({desc for needle, desc in NEEDLES.items() if needle in data})


def scan_tree(root: Path) -> dict[str, list[str]]:
    """Return ``relative path -> leaks`` for every file under ``root`` that leaks."""
    found: dict[str, list[str]] = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        hits = leaks(path.read_bytes())
        if path.suffix == ".pdf":
            hits = sorted(set(hits) | set(leaks(pdf_text(path))))
        if hits:
            found[str(path.relative_to(root))] = hits
    return found


def pdf_text(path: Path) -> str:
    """Text of every page of a PDF (pypdf)."""
    from pypdf import PdfReader

    return "\n".join(page.extract_text() or "" for page in PdfReader(str(path)).pages)
