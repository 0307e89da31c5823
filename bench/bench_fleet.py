"""Time ``auditor fleet`` over many published clusters (local archive, real publish layer).

Usage: python bench/bench_fleet.py [CLUSTERS] [VMS_PER_CLUSTER]   (default: 20 500)

Audits one synthetic export (``bench/generate.py``) once, then publishes it as the
latest run of CLUSTERS clusters (report.json, CSV and one recovery card per VM, so
verification reads as many objects as a real run), and times reading + verifying
every run, building the roll-up and rendering json/csv/html. Prints the figures.
"""

from __future__ import annotations

import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main(argv: list[str]) -> int:
    from auditor.config import AuditSettings
    from auditor.fleet import build_fleet, read_fleet, write_fleet
    from auditor.pipeline import audit_data, write_artifacts
    from auditor.publish import PublishSettings, publish_run
    from auditor.sources.directory import DirectorySource
    from bench.generate import AUDIT_TIME, generate

    clusters = int(argv[0]) if argv else 20
    vms = int(argv[1]) if len(argv) > 1 else 500
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        generate(tmp / "export", vms, 7)
        data = DirectorySource(tmp / "export").collect()
        t0 = time.perf_counter()
        target = PublishSettings(local_dir=tmp / "archive", spool_dir=tmp / "spool")
        objects = 0
        for i in range(clusters):
            settings = AuditSettings(cluster_name=f"ocp-{i:03d}")
            report = audit_data(data, settings, at=AUDIT_TIME)
            run_dir = tmp / "runs" / f"c{i}"
            write_artifacts(report, run_dir, ["json", "csv", "cards"])
            objects += sum(1 for p in run_dir.rglob("*") if p.is_file())
            assert publish_run(run_dir, target).published
        setup = time.perf_counter() - t0
        t1 = time.perf_counter()
        fleet_input = read_fleet(str(tmp / "archive"))
        t2 = time.perf_counter()
        fleet = build_fleet(fleet_input, at=datetime(2026, 11, 30, 12, tzinfo=UTC))
        t3 = time.perf_counter()
        write_fleet(fleet, tmp / "out", ("json", "csv", "html"))
        t4 = time.perf_counter()
        html = (tmp / "out" / "fleet.html").stat().st_size
    print(f"{clusters} clusters x {vms} VMs ({objects} published objects; setup {setup:.1f} s)")
    print(f"  read + verify every run: {t2 - t1:6.2f} s ({fleet.summary.runs_verified} verified)")
    print(f"  build the roll-up:       {t3 - t2:6.2f} s ({len(fleet.root_causes)} root causes, "
          f"{len(fleet.owners)} owners)")  # fmt: skip
    print(f"  write json/csv/html:     {t4 - t3:6.2f} s (fleet.html {html / 1024:.0f} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
