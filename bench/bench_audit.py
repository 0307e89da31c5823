"""Time and peak memory of the audit against the bare YAML parse, at 1,000 and 10,000 VMs.

For each size: generate the estate (cached under ``--work``), then in fresh
child processes measure (a) parsing every file with PyYAML's C loader, the
floor, and (b) the full audit to report.json through the lead's pipeline.
Peak memory is the child's max RSS (``os.wait4``). Prints the ratios against
the targets of issue 7: audit <= 1.5x parse time, <= 2x parse peak memory,
and 10x the VMs <= 11x the time.

Usage: ``python -m bench.bench_audit [--sizes 1000,10000] [--work DIR] [--profile]``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from auditor.yamlstrict import DEFAULT_MAX_FILE_BYTES as DEFAULT_LIMIT
from bench.generate import generate

__all__ = ["measure", "main"]

TIME_RATIO, MEM_RATIO, SCALE_RATIO = 1.5, 2.0, 11.0


def measure(args: list[str]) -> dict[str, Any]:
    """Run ``python -m bench._child ARGS`` and return its JSON plus wall seconds and max RSS (MiB)."""
    repo = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": f"{repo}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "bench._child", *args], stdout=subprocess.PIPE, env=env, cwd=repo
    )
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"child {args} exited {proc.returncode}")
    result: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    result["wall"] = wall
    result["rss_mib"] = usage.ru_maxrss / 1024  # Linux reports KiB
    return result


def _estate(work: Path, n: int, seed: int) -> Path:
    path = work / f"estate-{n}-seed{seed}"
    marker = path / ".complete"
    if not marker.exists():
        estate = generate(path, n, seed)
        marker.write_text(json.dumps(estate.counts))
        print(
            f"generated {n} VMs: {estate.bytes / 1e6:.0f} MB, "
            f"{sum(estate.counts.values())} objects in {estate.seconds:.1f} s",
            flush=True,
        )
    return path


def _verdict(value: float, limit: float) -> str:
    return f"{value:5.2f}x (target <= {limit}x: {'ok' if value <= limit else 'MISSED'})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--work", type=Path, default=Path("/tmp/vra-bench"))
    parser.add_argument("--profile", action="store_true", help="also cProfile the largest audit")
    opts = parser.parse_args(argv)
    sizes = [int(s) for s in opts.sizes.split(",")]
    rows: dict[int, tuple[dict[str, Any], dict[str, Any]]] = {}
    for n in sizes:
        root = _estate(opts.work, n, opts.seed)
        big = [p for p in root.glob("*.yaml") if p.stat().st_size > DEFAULT_LIMIT]
        for p in big:
            print(
                f"note: {p.name} is {p.stat().st_size / 1e6:.0f} MB, above the default "
                f"{DEFAULT_LIMIT // 2**20} MiB file limit; the bench raises the limit",
                flush=True,
            )
        parse = measure(["parse", str(root)])
        nogc = measure(["parse-nogc", str(root)])
        audit = measure(["audit", str(root), str(opts.work / f"out-{n}")])
        rows[n] = (parse, audit)
        print(
            f"N={n:>6}: parse {parse['total']:7.1f} s {parse['rss_mib']:7.0f} MiB | "
            f"audit {audit['total']:7.1f} s {audit['rss_mib']:7.0f} MiB "
            f"(collect {audit['collect']:.1f} s, checks+envelope {audit['audit']:.1f} s, "
            f"json {audit['write_json']:.1f} s; {int(audit['vms'])} VMs, "
            f"{int(audit['problems'])} problems)",
            flush=True,
        )
        print(
            f"          time  audit/parse {_verdict(audit['total'] / parse['total'], TIME_RATIO)}"
        )
        print(
            f"          memory audit/parse {_verdict(audit['rss_mib'] / parse['rss_mib'], MEM_RATIO)}"
        )
        print(
            f"          (parse with GC paused, as the auditor loads: {nogc['total']:.1f} s, "
            f"{nogc['rss_mib']:.0f} MiB; audit/that {audit['total'] / nogc['total']:.2f}x)"
        )
    if len(sizes) >= 2:
        lo, hi = sizes[0], sizes[-1]
        factor = hi / lo
        scale = rows[hi][1]["total"] / rows[lo][1]["total"]
        limit = SCALE_RATIO * factor / 10
        print(
            f"scaling {lo} -> {hi} VMs ({factor:.0f}x): audit time x{scale:.2f} "
            f"(target <= {limit:.1f}x: {'ok' if scale <= limit else 'MISSED'}); "
            f"parse time x{rows[hi][0]['total'] / rows[lo][0]['total']:.2f}"
        )
    if opts.profile:
        n = sizes[-1]
        prof = opts.work / f"audit-{n}.prof"
        print(f"profiling the {n}-VM audit into {prof} (stats on stderr)", flush=True)
        measure(
            [
                "audit",
                str(_estate(opts.work, n, opts.seed)),
                str(opts.work / "out-prof"),
                "--profile",
                str(prof),
            ]
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
