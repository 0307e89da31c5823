"""Velero BackupRepositories that are NotReady: data-mover and file-system copies that cannot
be read back now.

The node-agent restores a data-mover (DataDownload) or file-system (PodVolumeRestore) copy
through the BackupRepository of its volume namespace, BackupStorageLocation and uploader type
(``spec.volumeNamespace``, ``spec.backupStorageLocation``, ``spec.repositoryType``). Before
it reads, Velero gets that repository requiring it ready, and one in phase ``NotReady``
fails at once: "backup repository is not ready: <message>" (velero
pkg/repository/backup_repo_op.go ``GetBackupRepository``, pkg/repository/ensurer.go
``waitBackupRepository``).
"""

from __future__ import annotations

from auditor.inventory.index import ClusterIndex
from auditor.kubevalues import dig

__all__ = ["REPO_SRC", "not_ready_repositories"]

REPO_SRC = "https://github.com/vmware-tanzu/velero/blob/main/pkg/repository/backup_repo_op.go"

#: (Velero namespace, volume namespace, BackupStorageLocation) -> [(repository, type, message)]
Repos = dict[tuple[str, str, str], list[tuple[str, str, str]]]


def not_ready_repositories(ix: ClusterIndex) -> Repos:
    """Every BackupRepository read whose ``status.phase`` is ``NotReady``, by (Velero
    namespace, volume namespace, BackupStorageLocation), once per audit. A repository whose
    keys are not strings names no copy and is left out."""

    def compute() -> Repos:
        out: Repos = {}
        for repo in ix.data.of("BackupRepository"):
            if dig(repo, "status", "phase") != "NotReady":
                continue
            keys = (
                dig(repo, "metadata", "namespace"),
                dig(repo, "spec", "volumeNamespace"),
                dig(repo, "spec", "backupStorageLocation"),
            )
            kind, message = dig(repo, "spec", "repositoryType"), dig(repo, "status", "message")
            if not all(isinstance(k, str) for k in keys):
                continue
            ns, volume_ns, location = (str(k) for k in keys)
            out.setdefault((ns, volume_ns, location), []).append(
                (
                    str(dig(repo, "metadata", "name")),
                    kind if isinstance(kind, str) else "",
                    message if isinstance(message, str) else "",
                )
            )
        return out

    return ix.memo("not_ready_repositories", compute)
