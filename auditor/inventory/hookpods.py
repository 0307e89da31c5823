"""What the freeze of a VM's backup rests on: its virt-launcher pod in the Backup (the only
place its backup hooks run), and a copy that ends within virt-freezer's 300 s freeze.

KubeVirt writes the ``pre/post.hook.backup.velero.io`` annotations that run ``virt-freezer`` on
the virt-launcher pod, and Velero runs backup hooks (those annotations, and a Backup's own
``spec.hooks``) only on the pods it backs up: its ``backupItemBlock`` runs the pre hooks of
the pods in an ItemBlock
(https://github.com/vmware-tanzu/velero/blob/main/pkg/backup/backup.go ``backupItemBlock``,
``handleItemBlockPreHooks``), and a pod reaches an ItemBlock only when the item collector took
it (namespace, resource and label filters, less ``velero.io/exclude-from-backup=true``) or as a
related item that passes ``itemInclusionChecks`` ("Don't add to ItemBlock if item is
excluded", ``executeItemBlockActions``;
https://github.com/vmware-tanzu/velero/blob/main/pkg/backup/item_backupper.go
``itemInclusionChecks``: the exclude label ``== "true"``, the namespace and the resource
filters). Before ItemBlocks (Velero 1.15) the hooks ran inside ``backupItem``, after the same
checks. So a Backup whose resource filters leave out ``pods`` (``includedResources`` without
it, ``excludedResources``, or the scoped ``included/excludedNamespaceScopedResources``, which
the kubevirt plugin does not read and so never refuses a running VM for) snapshots the VM's
disks unfrozen, and so does any Backup when the pod carries the exclude label: the pod's
labels are its VMI's, copied by virt-controller
(https://github.com/kubevirt/kubevirt/blob/main/pkg/virt-controller/services/template.go
``podLabels``).

A Backup run with a resource policy whose ``includeExcludePolicy`` may leave out pods but was
not read (the ConfigMap missing from the export, unreadable, or changed since the Backup
began: :func:`auditor.inventory.volpolicy.backup_policy`) takes the pod or not: unknown.

The freeze also ends on its own: KubeVirt's pre hook runs ``virt-freezer --freeze`` without
``--unfreezeTimeoutSeconds``, whose default is 300 s, after which virt-launcher thaws the guest
whatever the post hook does
(https://github.com/kubevirt/kubevirt/blob/main/pkg/storage/pod/annotations/generator.go
``Generate``; https://github.com/kubevirt/kubevirt/blob/main/cmd/virt-freezer/virt-freezer.go
``unfreezeTimeoutSeconds``, passed to virt-launcher, which schedules the thaw:
https://github.com/kubevirt/kubevirt/blob/main/pkg/virt-launcher/virtwrap/storage/fsfreeze.go
``FreezeVMI``, ``scheduleSafetyVMIUnfreeze``). A CSI snapshot is cut in that window; a file-system backup
(PodVolumeBackup) reads the live disk image file for as long as it runs, from
``status.startTimestamp`` (set when the node-agent starts the copy, after the pre hook ran) to
``status.completionTimestamp``
(https://github.com/vmware-tanzu/velero/blob/main/pkg/controller/pod_volume_backup_controller.go).
One that ran longer than 300 s read part of the image after the guest wrote again: no point
in time, not even a crash-consistent image (:func:`thawed_copies`).

A CSI snapshot is cut in that window only when the driver cuts it within 300 s of the freeze
(round h48a). Velero's CSI action creates the VolumeSnapshot after the pre hook ran and waits,
up to the Backup's ``csiSnapshotTimeout`` (10 min by default), for its content's snapshot
handle before it goes on to the post hook
(https://github.com/vmware-tanzu/velero/blob/main/pkg/backup/actions/csi/pvc_action.go
``Execute``, ``csi.WaitUntilVSCHandleIsReady`` in
https://github.com/vmware-tanzu/velero/blob/main/pkg/util/csi/volume_snapshot.go). The
content's ``status.creationTime`` is "the time the point-in-time snapshot was taken by the
underlying storage system" (Unix nanoseconds; the CSI ``CreateSnapshot`` response's required
``creation_time``:
https://github.com/kubernetes-csi/external-snapshotter/blob/master/client/apis/volumesnapshot/v1/types.go
``VolumeSnapshotContentStatus``), and its ``metadata.creationTimestamp`` comes after the
freeze (the snapshot controller creates the content for the VolumeSnapshot Velero created).
A cut more than 300 s after the content was created came after virt-launcher's own thaw: the
guest had written again, so the snapshot is crash-consistent only (:func:`late_cuts`).
KubeVirt itself thaws a VirtualMachineSnapshot's guest once each VolumeSnapshot has its
``creationTime`` for this reason (kubevirt/kubevirt PR #8640); the freeze window shorter than
the cut is the failure harvester/harvester#3976 and kubevirt/kubevirt PR #16653 describe.

Label selectors are not judged here: since ItemBlocks a claim's ItemBlock action pulls in the
running pods that mount it past the selector (pkg/itemblock/actions/pvc_action.go
``GetRelatedItems``), before them it did not, and the Velero release is not read.
"""

from __future__ import annotations

from typing import Any

from auditor.inventory.capture import (
    content_shows_snapshot,
    snapshot_claim,
    velero_snapshot_prefix,
)
from auditor.inventory.index import (
    EXCLUDE_LABEL,
    PVC_UID_LABEL,
    BackupView,
    ClusterIndex,
    excluded_from_backup,
    meta_label,
)
from auditor.inventory.volpolicy import backup_policy
from auditor.kubevalues import dig, parse_time

__all__ = [
    "FREEZE_LIMIT_S",
    "FREEZER_SRC",
    "HOOK_PODS_SRC",
    "LEFT_OUT",
    "UNKNOWN",
    "VSC_TIME_SRC",
    "late_cuts",
    "launcher_pod_left_out",
    "thawed_copies",
]

#: virt-freezer's default ``--unfreezeTimeoutSeconds``, which KubeVirt's hook does not set
FREEZE_LIMIT_S = 300
FREEZER_SRC = "https://github.com/kubevirt/kubevirt/blob/main/cmd/virt-freezer/virt-freezer.go"

#: the launcher pod is not in the Backup (observed), or whether it is cannot be told
LEFT_OUT = "left out"
UNKNOWN = "unknown"

HOOK_PODS_SRC = "https://github.com/vmware-tanzu/velero/blob/main/pkg/backup/backup.go"
#: where the content's ``status.creationTime`` (the cut) is defined
VSC_TIME_SRC = (
    "https://github.com/kubernetes-csi/external-snapshotter/blob/master/client/apis/"
    "volumesnapshot/v1/types.go"
)


def launcher_pod_left_out(
    ix: ClusterIndex, b: BackupView, vmi: dict[str, Any] | None, vm_name: str
) -> tuple[str, str] | None:
    """Whether Backup ``b`` takes the virt-launcher pod of the VM whose running VMI is ``vmi``:
    None when it does (as far as its filters and the VMI's labels show), else
    ``(LEFT_OUT, why)`` or ``(UNKNOWN, why)``, ``why`` a clause naming the filter fields, the
    VMI's label or the resource policy not read.

    Cost: two memoised look-ups on ``b.scope``, one label read and the Backup's memoised
    resource policy; no pass over any kind.
    """
    sc = b.scope
    if not sc.resource_included("pods", "Pod", ""):
        shown = [
            f"{name}={list(values)}"
            for name, values in (
                ("includedResources", sc.included_resources),
                ("excludedResources", sc.excluded_resources),
                ("includedNamespaceScopedResources", sc.included_namespaced),
                ("excludedNamespaceScopedResources", sc.excluded_namespaced),
            )
            if values
        ]
        what = ", ".join(shown) or "its resource policy's includeExcludePolicy"
        return LEFT_OUT, f"Backup {b.name}'s resource {b.filters} leave out pods ({what})"
    if excluded_from_backup(vmi):
        return LEFT_OUT, (
            f"VMI {vm_name} carries {EXCLUDE_LABEL}=true, which virt-controller copies onto "
            "its virt-launcher pod, and Velero backs up no item with that label"
        )
    policy = backup_policy(ix, b)
    if policy is not None and policy.problem is not None:
        return UNKNOWN, (
            f"Backup {b.name}'s resource policy {b.resource_policy} may leave out pods "
            f"({policy.problem})"
        )
    return None


def _pvbs_by_claim_uid(ix: ClusterIndex, backup: str) -> dict[str, list[dict[str, Any]]]:
    """The PodVolumeBackups of Backup ``backup`` by their ``velero.io/pvc-uid`` label (Velero
    labels every one made for a claim so: pkg/podvolume/backupper.go
    ``newPodVolumeBackup``), one pass over that Backup's records per audit."""

    def build() -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = {}
        for o in ix.pod_volume_backups.get(backup, []):
            uid = meta_label(o, PVC_UID_LABEL)
            if uid:
                out.setdefault(uid, []).append(o)
        return out

    return ix.memo(f"hookpods.pvbs_by_claim_uid:{backup}", build)


def thawed_copies(ix: ClusterIndex, b: BackupView, claims: list[dict[str, Any]]) -> list[str]:
    """The Completed PodVolumeBackups of Backup ``b`` for the claims ``claims`` (PVC objects)
    that ran longer than :data:`FREEZE_LIMIT_S`, each as a clause naming the record, the
    claim and the seconds (``status.completionTimestamp`` minus ``status.startTimestamp``).

    A record without both times, or with one that does not parse, is not judged (Velero
    writes both; the index names an unparseable one). Cost: one memoised map per Backup, a
    dictionary look-up per claim."""
    by_uid = _pvbs_by_claim_uid(ix, b.name)
    out: list[str] = []
    for pvc in claims:
        uid = dig(pvc, "metadata", "uid")
        for o in by_uid.get(uid, []) if isinstance(uid, str) else []:
            if dig(o, "status", "phase") != "Completed":
                continue
            began = parse_time(dig(o, "status", "startTimestamp"))
            ended = parse_time(dig(o, "status", "completionTimestamp"))
            if began is None or ended is None:
                continue
            took = (ended - began).total_seconds()
            if took > FREEZE_LIMIT_S:
                out.append(
                    f"PodVolumeBackup {dig(o, 'metadata', 'namespace')}/"
                    f"{dig(o, 'metadata', 'name')} copied PVC {dig(pvc, 'metadata', 'name')} "
                    f"for {int(took)} s (status.startTimestamp to status.completionTimestamp)"
                )
    return out


def _contents_by_claim(
    ix: ClusterIndex, backup: str
) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """The VolumeSnapshotContents labelled with Backup ``backup`` by the ``(namespace,
    "velero-<pvc>-")`` of the VolumeSnapshot they were cut for
    (:func:`auditor.inventory.capture.snapshot_claim`; a content whose VolumeSnapshot Velero
    did not name is left out), one pass over that Backup's contents per audit."""

    def build() -> dict[tuple[str, str], list[dict[str, Any]]]:
        out: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for o in ix.backup_snapshot_contents.get(backup, []):
            key = snapshot_claim(o.get("spec"))
            if key is not None:
                out.setdefault(key, []).append(o)
        return out

    return ix.memo(f"hookpods.contents_by_claim:{backup}", build)


def late_cuts(
    ix: ClusterIndex, b: BackupView, claims: list[dict[str, Any]]
) -> tuple[list[str], list[str]]:
    """``(late, unreadable)`` for the CSI snapshots Backup ``b`` took of the claims ``claims``
    (PVC objects): ``late`` names each ready VolumeSnapshotContent whose cut
    (``status.creationTime``, Unix nanoseconds) came more than :data:`FREEZE_LIMIT_S` after
    the content was created (``metadata.creationTimestamp``, after the freeze ran), with the
    claim and the seconds; ``unreadable`` names each whose ``status.creationTime`` is present
    but no non-negative integer, so when it was cut is unknown.

    A content without ``status.creationTime`` or a readable ``metadata.creationTimestamp`` is
    not judged (the CSI sidecar writes the former once the driver cut the snapshot; our
    fixtures hold neither), nor one not shown ready (the capture judges it), nor a cut
    before the content was created (a content re-created by a sync or a restore keeps the
    old cut). Cost: one memoised map per Backup, a dictionary look-up per claim."""
    by_claim = _contents_by_claim(ix, b.name)
    late: list[str] = []
    unreadable: list[str] = []
    for pvc in claims:
        ns, name = dig(pvc, "metadata", "namespace"), dig(pvc, "metadata", "name")
        if not isinstance(ns, str) or not isinstance(name, str):
            continue
        for o in by_claim.get((ns, velero_snapshot_prefix(name)), []):
            if not content_shows_snapshot(o):
                continue
            status = o.get("status")
            if not isinstance(status, dict) or "creationTime" not in status:
                continue
            what = f"VolumeSnapshotContent {dig(o, 'metadata', 'name')} of PVC {name}"
            cut = status["creationTime"]
            if isinstance(cut, bool) or not isinstance(cut, int) or cut < 0:
                unreadable.append(
                    f"{what} has status.creationTime={cut!r}, no Unix time in nanoseconds"
                )
                continue
            created = parse_time(dig(o, "metadata", "creationTimestamp"))
            if created is None:
                continue
            took = cut / 1e9 - created.timestamp()
            if took > FREEZE_LIMIT_S:
                late.append(
                    f"{what} was cut {int(took)} s after it was created "
                    "(status.creationTime against metadata.creationTimestamp)"
                )
    return late, unreadable
