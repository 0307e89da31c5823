"""One measurement, run in a fresh child process so its peak RSS is its own.

``python -m bench._child parse DIR`` loads every ``*.yaml`` with PyYAML's C
loader and keeps the documents alive (the floor; ``parse-nogc`` does it with
Python's cyclic GC paused, as the auditor's loader does). ``python -m bench._child
audit DIR OUT [--profile FILE]`` runs the lead's pipeline exactly as ``auditor
run --from-dir DIR --format json`` does (DirectorySource -> audit_data ->
write_artifacts), with a file size limit large enough for a 10,000-VM export.
Prints one JSON line of phase timings (seconds) on stdout.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

AT = "2026-11-30T06:00:00Z"
#: Large enough for a 10,000-VM volumesnapshotcontents.yaml (about 310 MB).
BENCH_MAX_FILE_BYTES = 2 * 1024**3


def parse(root: Path, *, gc_paused: bool = False) -> dict[str, float]:
    import gc

    import yaml

    if gc_paused:
        gc.disable()
    t0 = time.perf_counter()
    kept: list[Any] = []
    for path in sorted(root.glob("*.yaml")):
        with path.open(encoding="utf-8") as fh:
            kept.append(yaml.load(fh, Loader=yaml.CSafeLoader))
    return {"total": time.perf_counter() - t0}


def audit(root: Path, out: Path) -> dict[str, float]:
    from auditor.config import AuditSettings
    from auditor.kubevalues import parse_time
    from auditor.pipeline import audit_data, write_artifacts
    from auditor.sources.directory import DirectorySource

    at = parse_time(AT)
    assert at is not None
    t0 = time.perf_counter()
    data = DirectorySource(root, max_file_bytes=BENCH_MAX_FILE_BYTES).collect()
    t1 = time.perf_counter()
    report = audit_data(data, AuditSettings(), at=at)
    doc = report.model_dump(mode="json") if hasattr(report, "model_dump") else report
    t2 = time.perf_counter()
    write_artifacts(report, out, ["json"])
    t3 = time.perf_counter()
    problems = len(doc["collection_problems"])
    if problems:
        print(
            f"warning: {problems} collection problems, first: "
            f"{doc['collection_problems'][0]['reason']}",
            file=sys.stderr,
        )
    return {
        "collect": t1 - t0,
        "audit": t2 - t1,
        "write_json": t3 - t2,
        "total": t3 - t0,
        "vms": float(doc["summary"]["vms"]),
        "problems": float(problems),
    }


def main(argv: list[str]) -> int:
    mode, root = argv[0], Path(argv[1])
    if mode in ("parse", "parse-nogc"):
        result = parse(root, gc_paused=mode == "parse-nogc")
    elif "--profile" in argv:
        import cProfile
        import pstats

        prof_path = argv[argv.index("--profile") + 1]
        profiler = cProfile.Profile()
        result = profiler.runcall(audit, root, Path(argv[2]))
        profiler.dump_stats(prof_path)
        stats = pstats.Stats(profiler, stream=sys.stderr)
        stats.sort_stats("cumulative").print_stats(30)
        stats.sort_stats("tottime").print_stats(20)
    else:
        result = audit(root, Path(argv[2]))
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
