"""One measurement, run in a fresh child process so its peak RSS is its own.

``python -m bench._child parse DIR`` parses every ``*.yaml`` with yaml-rs (the
fastest parser behind the strict loader) and keeps the documents alive: the
floor of issue 15; ``parse-pieces DIR`` parses large Lists in the reader's pieces (the
stricter floor). ``python -m bench._child audit DIR OUT [--profile FILE]``
runs the pipeline as ``auditor run --from-dir DIR --format json`` does
(DirectorySource -> audit_data -> write_artifacts) and times its phases, with a
file size limit large enough for a 10,000-VM export. Prints one JSON line of
timings (seconds) on stdout.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

AT = "2026-11-30T06:00:00Z"
#: Large enough for a 50,000-VM volumesnapshotcontents.yaml (about 1.6 GB).
BENCH_MAX_FILE_BYTES = 4 * 1024**3


def parse(root: Path) -> dict[str, float]:
    """Bare parse: read and parse every ``*.yaml`` with yaml-rs; the documents stay alive."""
    import gc

    import yaml_rs

    gc.disable()  # as the auditor's loader does; the fastest bare parse
    t0 = time.perf_counter()
    kept: list[Any] = []
    for path in sorted(root.glob("*.yaml")):
        kept.append(yaml_rs.loads(path.read_text(encoding="utf-8"), parse_datetime=False))
    return {"total": time.perf_counter() - t0, "documents": float(len(kept))}


def parse_pieces(root: Path) -> dict[str, float]:
    """Bare parse as the auditor's streamed reader cuts large ``oc get`` Lists: each file of
    16 MiB or more parsed by yaml-rs in pieces of about 4 MB of items, every piece kept alive;
    smaller files whole. Faster than the whole-file parse and smaller in memory (the parser's
    own buffers are bounded by the piece), so it is the stricter floor."""
    import gc

    import yaml_rs

    from auditor.sources.directory import _STREAM_MIN_CHARS
    from auditor.yamlfast import _LIST_FOOT, _LIST_HEAD, CHUNK_BYTES, _pieces

    gc.disable()
    t0 = time.perf_counter()
    kept: list[Any] = []
    for path in sorted(root.glob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        foot = text.rfind(_LIST_FOOT)
        if len(text) < _STREAM_MIN_CHARS or not text.startswith(_LIST_HEAD) or foot < 0:
            kept.append(yaml_rs.loads(text, parse_datetime=False))
            continue
        for begin, end in _pieces(text, len(_LIST_HEAD), foot, CHUNK_BYTES):
            kept.append(yaml_rs.loads(text[begin:end], parse_datetime=False))
    return {"total": time.perf_counter() - t0, "documents": float(len(kept))}


def audit(root: Path, out: Path) -> dict[str, float]:
    """The directory audit to report.json, timed per phase."""
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
    t2 = time.perf_counter()
    write_artifacts(report, out, ["json"])
    t3 = time.perf_counter()
    problems = len(report.collection_problems)
    if problems:
        print(
            f"warning: {problems} collection problems, first: "
            f"{report.collection_problems[0].reason}",
            file=sys.stderr,
        )
    return {
        "collect": t1 - t0,
        "audit": t2 - t1,
        "write_json": t3 - t2,
        "total": t3 - t0,
        "vms": float(report.summary.vms),
        "problems": float(problems),
    }


def main(argv: list[str]) -> int:
    """``parse DIR`` or ``audit DIR OUT [--profile FILE]``; see the module docstring."""
    mode, root = argv[0], Path(argv[1])
    if mode == "parse":
        result = parse(root)
    elif mode == "parse-pieces":
        result = parse_pieces(root)
    elif "--profile" in argv:
        import cProfile
        import pstats

        prof_path = argv[argv.index("--profile") + 1]
        profiler = cProfile.Profile()
        result = profiler.runcall(audit, root, Path(argv[2]))
        profiler.dump_stats(prof_path)
        stats = pstats.Stats(profiler, stream=sys.stderr)
        stats.sort_stats("tottime").print_stats(25)
        stats.sort_stats("cumulative").print_stats(40)
    else:
        result = audit(root, Path(argv[2]))
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
