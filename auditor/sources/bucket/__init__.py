"""Read Velero's BackupStorageLocation buckets, read-only, for capture evidence.

:func:`auditor.sources.bucket.load.read_backup_storage` fills
``ClusterData.backup_contents`` and ``ClusterData.storage_locations`` for the
locations named in the config's ``backup_storage`` section (boto3 is imported
only there). Layout: :mod:`.layout`; decoding: :mod:`.decode`; requests, the
bounded pool and the archive stream: :mod:`.reader`; ETag cache: :mod:`.cache`.
:func:`run_summary` is what report.json's ``run.backup_storage`` shows.
"""

from __future__ import annotations

from typing import Any

from auditor.sources.base import ClusterData

__all__ = ["run_summary", "NOT_CONFIGURED_NOTE"]

NOT_CONFIGURED_NOTE = (
    "backup storage not configured: capture evidence is from the cluster only "
    "(see docs/backup-storage.md)"
)


def run_summary(data: ClusterData) -> dict[str, Any]:
    """``run.backup_storage``: configured or not, and per location what was read.

    Per location: bucket, prefix, endpoint, state, detail, versioning, object
    lock and ``bucket_only`` (count of backups in the bucket the cluster does not
    list). ``backup_records``: per Backup what its bucket objects say (state, object
    count, VM manifests read, per-PVC volume records, error/warning counts).

    What the reader itself did (requests sent, bytes read, backups answered from the
    ETag cache) is left out: it differs between two runs of one ``--at`` on the same
    input (the second is answered from the cache), so in report.json, which
    manifest.json seals, it made a re-published run conflict with itself. It is logged
    instead (:func:`auditor.sources.bucket.load.read_backup_storage`).
    """
    locations = data.storage_locations
    if locations is None:
        return {"configured": False, "note": NOT_CONFIGURED_NOTE}
    contents = data.backup_contents or {}
    states: dict[str, int] = {}
    for c in contents.values():
        states[c.state] = states.get(c.state, 0) + 1
    rows = [
        {
            "location": s.location,
            "bucket": s.bucket,
            "prefix": s.prefix,
            "endpoint": s.endpoint,
            "state": s.state,
            "detail": s.detail,
            "versioning": s.versioning,
            "object_lock": s.object_lock,
            "lock_mode": s.lock_mode,
            "lock_days": s.lock_days,
            "bucket_only": len(s.bucket_only),
        }
        for _, s in sorted(locations.items())
    ]
    records = [
        {
            "backup": c.backup,
            "location": c.location,
            "state": c.state,
            "detail": c.detail,
            "objects": None if c.resources is None else len(c.resources),
            "vm_manifests": sorted(f"{ns}/{n}" for ns, n in c.vm_manifests),
            "errors": c.errors,
            "warnings": c.warnings,
            "volumes": None
            if c.volumes is None
            else [
                {
                    "pvc": f"{v.namespace}/{v.pvc}",
                    "method": v.method,
                    "outcome": v.outcome,
                    "detail": v.detail,
                    "size_bytes": v.size_bytes,
                }  # fmt: skip
                for v in c.volumes
            ],
        }
        for _, c in sorted(contents.items())
    ]
    return {
        "configured": True,
        "locations": rows,
        "backup_records": records,
        "backups": dict(sorted(states.items())),
    }
