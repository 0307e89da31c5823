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

Label selectors are not judged here: since ItemBlocks a claim's ItemBlock action pulls in the
running pods that mount it past the selector (pkg/itemblock/actions/pvc_action.go
``GetRelatedItems``), before them it did not, and the Velero release is not read.
"""

from __future__ import annotations

from typing import Any

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
