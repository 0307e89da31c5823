"""Where Velero keeps a backup in its BackupStorageLocation bucket.

From Velero's own source (vmware-tanzu/velero):

- ``pkg/persistence/object_store_layout.go``: ``<prefix>/backups/<name>/``
  holds ``velero-backup.json``, ``<name>.tar.gz``, ``<name>-logs.gz``,
  ``<name>-podvolumebackups.json.gz``, ``<name>-volumesnapshots.json.gz``,
  ``<name>-itemoperations.json.gz``, ``<name>-resource-list.json.gz``,
  ``<name>-results.gz``, ``<name>-volumeinfo.json.gz`` and the CSI files
  ``<name>-csi-volumesnapshots.json.gz``, ``-csi-volumesnapshotcontents.json.gz``,
  ``-csi-volumesnapshotclasses.json.gz``.
- ``pkg/persistence/object_store.go`` (``PutBackup``): the metadata file and
  the tarball are written first and the rest after; a failed upload deletes
  both, so a backup without them is incomplete. ``ListBackups`` lists the
  common prefixes under ``<prefix>/backups/``.
- ``pkg/archive/filesystem.go`` (``GetVersionedItemFilePath``) and
  ``pkg/backup/item_backupper.go``: inside the tarball an item is
  ``resources/<resource.group>/namespaces/<ns>/<name>.json``, and again under
  ``resources/<resource.group>/<version>-preferredversion/namespaces/...``.

Older Velero versions write fewer files (no volume info before 1.13, no
resource list in the oldest): less evidence, never an error.
"""

from __future__ import annotations

import re

__all__ = ["BackupKeys", "backups_prefix", "VM_MEMBER", "SMALL_FILES", "METHOD_FILES"]

#: The small metadata files read for every backup (suffix after ``<name>``), gzip'd JSON.
SMALL_FILES = (
    "-resource-list.json.gz",
    "-volumeinfo.json.gz",
    "-results.gz",
)

#: Per-method files, read only when ``-volumeinfo.json.gz`` is absent or unreadable.
METHOD_FILES = (
    "-itemoperations.json.gz",
    "-podvolumebackups.json.gz",
    "-csi-volumesnapshotcontents.json.gz",
    "-volumesnapshots.json.gz",
)

#: A VirtualMachine's manifest inside ``<name>.tar.gz``: (namespace, name).
VM_MEMBER = re.compile(
    r"^(?:\./)?resources/virtualmachines\.kubevirt\.io/(?:[^/]+-preferredversion/)?"
    r"namespaces/([^/]+)/([^/]+)\.json$"
)


def backups_prefix(prefix: str) -> str:
    """``<prefix>/backups/`` (``backups/`` for an empty prefix)."""
    prefix = prefix.strip("/")
    return f"{prefix}/backups/" if prefix else "backups/"


class BackupKeys:
    """The object keys of backup ``name`` under ``prefix``."""

    def __init__(self, prefix: str, name: str) -> None:
        self.name = name
        self.dir = f"{backups_prefix(prefix)}{name}/"

    @property
    def metadata(self) -> str:
        """``velero-backup.json``: the Backup object as Velero saw it at the end."""
        return self.dir + "velero-backup.json"

    @property
    def contents(self) -> str:
        """``<name>.tar.gz``: every backed-up Kubernetes object."""
        return f"{self.dir}{self.name}.tar.gz"

    def file(self, suffix: str) -> str:
        """``<name><suffix>``, e.g. ``-volumeinfo.json.gz``."""
        return f"{self.dir}{self.name}{suffix}"
