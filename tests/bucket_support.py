"""Write a bucket laid out as Velero lays it out, from a cluster export (test and bench support).

For every Backup of the export in the chosen location, :func:`write_velero_bucket`
writes under ``<prefix>/backups/<name>/`` the files Velero writes (see
``auditor/sources/bucket/layout.py`` for the source references): the Backup
metadata, a gzip'd tarball with every in-scope object at
``resources/<resource.group>/namespaces/<ns>/<name>.json`` (and the
``v1-preferredversion`` copy), the resource list, volume info, results, item
operations and an (empty) log. What a Backup holds follows its namespace,
resource and label filters and the objects' creation times. ``Mutations``
produce the test cases: failed volumes, objects left out of the resource list,
deleted backups and changed VM manifests.
"""

from __future__ import annotations

import copy
import gzip
import io
import json
import tarfile
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from auditor.inventory.needs import restore_needs
from auditor.kinds import KINDS
from auditor.kubevalues import dig, parse_time
from auditor.scope import Scope, SelectorError
from auditor.sources.base import ClusterData

__all__ = ["Mutations", "write_velero_bucket", "backups_in"]

_GROUP_PLURAL = {k.kind: (k.group, k.plural) for k in KINDS}
_GROUP_PLURAL["NetworkAttachmentDefinition"] = ("k8s.cni.cncf.io", "network-attachment-definitions")
_GROUP_PLURAL["Secret"] = ("", "secrets")
_GROUP_PLURAL["ConfigMap"] = ("", "configmaps")
_GROUP_PLURAL["ControllerRevision"] = ("apps", "controllerrevisions")


@dataclass
class Mutations:
    """Deviations from a faithful copy.

    ``failed_pvcs``: ``(backup, ns, pvc)`` whose volume info says ``failed``.
    ``drop``: ``(backup, group-resource, ns, name)`` left out of the resource list and tarball.
    ``delete``: backup names whose objects are not written at all.
    ``delete_files``: ``(backup, file name)`` not written (e.g. the tarball).
    ``vm_patch``: ``(backup, ns, vm) -> function`` changing the backed-up manifest.
    ``old_velero``: backups written without volume info and resource list.
    """

    failed_pvcs: set[tuple[str, str, str]] = field(default_factory=set)
    drop: set[tuple[str, str, str, str]] = field(default_factory=set)
    delete: set[str] = field(default_factory=set)
    delete_files: set[tuple[str, str]] = field(default_factory=set)
    vm_patch: dict[tuple[str, str, str], Callable[[dict[str, Any]], None]] = field(
        default_factory=dict
    )
    old_velero: set[str] = field(default_factory=set)


def _gz(obj: Any) -> bytes:
    return gzip.compress(json.dumps(obj).encode(), mtime=0)


def _gr(obj: dict[str, Any]) -> tuple[str, str]:
    kind = str(obj.get("kind"))
    group, plural = _GROUP_PLURAL.get(kind, ("", kind.lower() + "s"))
    return group, plural


def backups_in(data: ClusterData, location: str) -> list[dict[str, Any]]:
    """The export's Backups written to ``location`` (``spec.storageLocation``, default BSL)."""
    default = next(
        (
            str(b["metadata"]["name"])
            for b in data.of("BackupStorageLocation")
            if dig(b, "spec", "default") is True
        ),
        "default",
    )
    return [
        b
        for b in data.of("Backup")
        if (dig(b, "spec", "storageLocation") or default) == location
        and dig(b, "status", "phase") in ("Completed", "PartiallyFailed")
    ]


def _held(data: ClusterData, backup: dict[str, Any]) -> list[dict[str, Any]]:
    try:
        scope = Scope.from_spec(backup.get("spec"))
    except SelectorError:
        return []
    began = parse_time(dig(backup, "status", "startTimestamp")) or parse_time(
        dig(backup, "metadata", "creationTimestamp")
    )
    out = []
    for kind in (
        "VirtualMachine",
        "DataVolume",
        "PersistentVolumeClaim",
        "NetworkAttachmentDefinition",
    ):
        for obj in data.of(kind):
            ns = str(dig(obj, "metadata", "namespace") or "")
            created = parse_time(dig(obj, "metadata", "creationTimestamp"))
            if began and created and created > began:
                continue
            group, plural = _gr(obj)
            labels = dig(obj, "metadata", "labels") or {}
            try:
                if scope.includes(
                    namespace=ns, labels=labels, plural=plural, kind=kind, group=group
                ):
                    out.append(obj)
            except SelectorError:
                continue
    return out + _named_stubs(out, scope)


def _named_stubs(held: list[dict[str, Any]], scope: Scope) -> list[dict[str, Any]]:
    """Secrets, ConfigMaps and ControllerRevisions the held VMs name, as name-only stubs.

    An export carries no Secrets (and often no ControllerRevisions), but Velero backs up
    every unlabelled object of an included namespace when the Backup has no label selector.
    """
    kinds = {"secrets": ("v1", "Secret"), "configmaps": ("v1", "ConfigMap"),
             "controllerrevisions.apps": ("apps/v1", "ControllerRevision")}  # fmt: skip
    out: dict[tuple[str, str, str], dict[str, Any]] = {}
    for vm in (o for o in held if o.get("kind") == "VirtualMachine"):
        ns, name = vm["metadata"]["namespace"], vm["metadata"]["name"]
        for gr, _, oname, _ in restore_needs(vm, ns, name, []):
            if gr not in kinds:
                continue
            api, kind = kinds[gr]
            plural, _, group = gr.partition(".")
            try:
                if scope.includes(namespace=ns, labels={}, plural=plural, kind=kind, group=group):
                    meta = {"name": oname, "namespace": ns}
                    stub = {"apiVersion": api, "kind": kind, "metadata": meta}
                    out[(kind, ns, oname)] = stub
            except SelectorError:
                continue
    return list(out.values())


def _volume_info(
    backup: dict[str, Any], pvcs: list[dict[str, Any]], failed: set[tuple[str, str, str]]
) -> list[dict[str, Any]]:
    spec = backup.get("spec") or {}
    name = backup["metadata"]["name"]
    out = []
    for p in pvcs:
        ns, pvc = p["metadata"]["namespace"], p["metadata"]["name"]
        bad = (name, ns, pvc) in failed
        entry: dict[str, Any] = {
            "pvcName": pvc,
            "pvcNamespace": ns,
            "pvName": dig(p, "spec", "volumeName") or "",
            "snapshotDataMoved": False,
            "preserveLocalSnapshot": False,
            "skipped": False,
            "result": "failed" if bad else "succeeded",
        }
        if spec.get("defaultVolumesToFsBackup") is True:
            entry["backupMethod"] = "PodVolumeBackup"
            entry["pvbInfo"] = {"size": 10 * 1024**3, "uploaderType": "kopia", "volumeName": pvc,
                                "podName": "virt-launcher", "podNamespace": ns,
                                "Phase": "Failed" if bad else "Completed"}  # fmt: skip
            if not bad:
                entry["pvbInfo"]["snapshotHandle"] = f"kopia-{pvc}"
        elif spec.get("snapshotMoveData") is True:
            entry["backupMethod"] = "CSISnapshot"
            entry["snapshotDataMoved"] = True
            entry["snapshotDataMovementInfo"] = {"dataMover": "velero", "uploaderType": "kopia",
                                                 "size": 10 * 1024**3,
                                                 "Phase": "Failed" if bad else "Completed",
                                                 "snapshotHandle": "" if bad else f"kopia-{pvc}"}  # fmt: skip
        else:
            entry["backupMethod"] = "CSISnapshot"
            entry["csiSnapshotInfo"] = {"snapshotHandle": f"snap-{pvc}", "size": 10 * 1024**3,
                                        "driver": "csi.example", "vscName": f"snapcontent-{pvc}",
                                        "ReadyToUse": not bad}  # fmt: skip
        out.append(entry)
    return out


def _vscs(data: ClusterData, backup: str, pvcs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The static VolumeSnapshotContents Velero keeps for CSI snapshots, one per PVC with a PV."""
    pvs = {p["metadata"]["name"]: p for p in data.of("PersistentVolume")}
    out = []
    for p in pvcs:
        handle = dig(pvs.get(dig(p, "spec", "volumeName") or ""), "spec", "csi", "volumeHandle")
        if isinstance(handle, str):
            out.append(
                {
                    "apiVersion": "snapshot.storage.k8s.io/v1",
                    "kind": "VolumeSnapshotContent",
                    "metadata": {
                        "name": f"snapcontent-{p['metadata']['name']}",
                        "labels": {"velero.io/backup-name": backup},
                    },
                    "spec": {"source": {"volumeHandle": handle}, "driver": "csi.example"},
                    # ready with the handle Velero's restore makes its content from
                    "status": {
                        "readyToUse": True,
                        "restoreSize": 10 * 1024**3,
                        "snapshotHandle": f"snap-{p['metadata']['name']}",
                    },
                }  # fmt: skip
            )
    return out


def _tarball(items: list[tuple[str, bytes]]) -> bytes:
    """``(member path, body)`` items -> tar.gz bytes, after Velero's ``metadata/version``."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for path, body in [("metadata/version", b"1\n"), *items]:
            info = tarfile.TarInfo(path)
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))
    return buf.getvalue()


def write_velero_bucket(
    client: Any,
    bucket: str,
    prefix: str,
    data: ClusterData,
    location: str,
    mutations: Mutations | None = None,
) -> list[str]:
    """Write every Backup of ``location`` in Velero's layout; return the backup names written."""
    m = mutations or Mutations()
    root = f"{prefix.strip('/')}/backups/" if prefix.strip("/") else "backups/"
    written = []
    for backup in backups_in(data, location):
        name = str(backup["metadata"]["name"])
        if name in m.delete:
            continue
        held = _held(data, backup)
        resources: dict[str, list[str]] = {}
        items = []
        for obj in held:
            group, plural = _gr(obj)
            ns, oname = obj["metadata"]["namespace"], obj["metadata"]["name"]
            gr = f"{plural}.{group}" if group else plural
            if (name, gr, ns, oname) in m.drop:
                continue
            body = copy.deepcopy(obj)
            patch = (
                m.vm_patch.get((name, ns, oname)) if obj.get("kind") == "VirtualMachine" else None
            )
            if patch:
                patch(body)
            raw = json.dumps(body).encode()
            version = str(obj.get("apiVersion", "v1")).rsplit("/", 1)[-1]
            items.append((f"resources/{gr}/namespaces/{ns}/{oname}.json", raw))
            pref = f"resources/{gr}/{version}-preferredversion/namespaces/{ns}/{oname}.json"
            items.append((pref, raw))
            resources.setdefault(f"{obj.get('apiVersion')}/{obj.get('kind')}", []).append(
                f"{ns}/{oname}"
            )
        pvcs = [o for o in held if o.get("kind") == "PersistentVolumeClaim"]
        files: dict[str, bytes] = {
            "velero-backup.json": json.dumps(backup).encode(),
            f"{name}.tar.gz": _tarball(items),
            f"{name}-logs.gz": gzip.compress(b"", mtime=0),
            f"{name}-results.gz": _gz({"errors": {}, "warnings": {}}),
            f"{name}-itemoperations.json.gz": _gz([]),
            f"{name}-podvolumebackups.json.gz": _gz([]),
            f"{name}-volumesnapshots.json.gz": _gz([]),
            f"{name}-csi-volumesnapshotcontents.json.gz": _gz(_vscs(data, name, pvcs)),
        }
        if name not in m.old_velero:
            files[f"{name}-resource-list.json.gz"] = _gz(
                {k: sorted(v) for k, v in resources.items()}
            )
            files[f"{name}-volumeinfo.json.gz"] = _gz(_volume_info(backup, pvcs, m.failed_pvcs))
        for fname, body in files.items():
            if (name, fname) in m.delete_files:
                continue
            client.put_object(Bucket=bucket, Key=f"{root}{name}/{fname}", Body=body)
        written.append(name)
    return written
