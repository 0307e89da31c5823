"""Whether a Backup takes a VM's virt-launcher pod, the only place its backup hooks run.

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

Label selectors are not judged here: since ItemBlocks a claim's ItemBlock action pulls in the
running pods that mount it past the selector (pkg/itemblock/actions/pvc_action.go
``GetRelatedItems``), before them it did not, and the Velero release is not read.
"""

from __future__ import annotations

from typing import Any

from auditor.inventory.index import EXCLUDE_LABEL, BackupView, ClusterIndex, excluded_from_backup
from auditor.inventory.volpolicy import backup_policy

__all__ = ["HOOK_PODS_SRC", "LEFT_OUT", "UNKNOWN", "launcher_pod_left_out"]

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
