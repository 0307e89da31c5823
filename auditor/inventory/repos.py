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

from auditor.inventory.fields import name_fault_of
from auditor.inventory.index import ClusterIndex
from auditor.kubevalues import dig
from auditor.sources.base import KindState

__all__ = ["REPO_SRC", "not_ready_repositories", "repositories_for"]

REPO_SRC = "https://github.com/vmware-tanzu/velero/blob/main/pkg/repository/backup_repo_op.go"

#: (Velero namespace, volume namespace, BackupStorageLocation) -> [(repository, type, message)]
Repos = dict[tuple[str, str, str], list[tuple[str, str, str]]]


#: the phases Velero writes (velero pkg/apis/velero/v1/backup_repository_types.go
#: BackupRepositoryPhase); ``New`` (or none yet) is one being prepared
_PHASES = frozenset({"New", "Ready", "NotReady"})


def _key(value: object) -> str | None:
    """A key field as read: the string, ``"*"`` (may be any) when it cannot be read, None when
    absent (the repository names no copy)."""
    if value is None:
        return None
    if isinstance(value, str) and value and name_fault_of(value) is None:
        return value
    return "*"


def not_ready_repositories(ix: ClusterIndex) -> Repos:
    """Every BackupRepository read whose ``status.phase`` is ``NotReady``, by (Velero
    namespace, volume namespace, BackupStorageLocation), once per audit.

    One whose phase cannot be read (no string, or none Velero writes: ``"ready"``, ``42``) is
    not known Ready, and counts as NotReady (so does one whose ``status`` is written null,
    which the API server prunes: fz36); one whose key field cannot be read (no string, a
    blank or invisible character) is filed under ``"*"`` there, which
    :func:`repositories_for` matches to any value: malformed data never improves a verdict
    (fz35: a NotReady repository with ``volumeNamespace: [vms]`` was left out, READY). A
    repository with a key field absent names no copy and is left out."""

    def compute() -> Repos:
        out: Repos = {}
        for repo in ix.data.of("BackupRepository"):
            phase = dig(repo, "status", "phase")
            nulled = "status" in repo and repo["status"] is None
            if phase in ("Ready", "New", None, "") and not nulled:
                continue
            keys = (
                _key(dig(repo, "metadata", "namespace")),
                _key(dig(repo, "spec", "volumeNamespace")),
                _key(dig(repo, "spec", "backupStorageLocation")),
            )
            kind, message = dig(repo, "spec", "repositoryType"), dig(repo, "status", "message")
            if nulled:
                message = "status is null, which the API server never stores"
            elif not isinstance(phase, str) or phase not in _PHASES:
                message = f"status.phase {ascii(phase)[:40]} is no phase Velero writes"
            ns, volume_ns, location = keys
            if ns is None or volume_ns is None or location is None:
                continue
            out.setdefault((ns, volume_ns, location), []).append(
                (
                    str(dig(repo, "metadata", "name")),
                    kind if isinstance(kind, str) else ("" if kind is None else "*"),
                    message if isinstance(message, str) else "",
                )
            )
        if ix.data.state("BackupRepository") is KindState.PARTIAL:
            # a repository dropped as unreadable (named among the collection problems) may be
            # any one, and NotReady
            out.setdefault(("*", "*", "*"), []).append(
                ("(one not read, see the collection problems)", "*", "")
            )
        return out

    return ix.memo("not_ready_repositories", compute)


def repositories_for(
    repos: Repos, namespace: str, volume_ns: str, location: str
) -> list[tuple[str, str, str]]:
    """The entries of ``repos`` (:func:`not_ready_repositories`) that may be the repository of
    (Velero ``namespace``, ``volume_ns``, ``location``): exact, or filed under ``"*"`` for a
    key that cannot be read."""
    exact = repos.get((namespace, volume_ns, location))
    if len(repos) == 1 and exact is not None:
        return exact
    return [
        r
        for (n, v, loc), found in repos.items()
        if n in (namespace, "*") and v in (volume_ns, "*") and loc in (location, "*")
        for r in found
    ]
