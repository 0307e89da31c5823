"""Time and peak memory of ``auditor run`` against the fastest bare parse (issue 15).

For each size: generate the estate with :mod:`bench.generate` (cached under
``--work``), then in fresh processes measure

- **parse**: every file parsed by yaml-rs, documents kept alive, whole and in the
  reader's 4 MB pieces (the floor is the faster of the two);
- **audit**: ``auditor run --from-dir DIR --format json --at ...`` (the CLI
  itself: interpreter start, imports, collect, checks, envelope, report.json);
- **live** (``--live``): the same estate served by the loopback API server of
  ``tests/kubeapi_server.py`` and audited with ``auditor run --kubeconfig``,
  with the number of list requests against kinds x pages;
- **phases** (``--phases``): the directory audit in-process, timed per phase.

With ``--repeat K`` the three measures run interleaved, K rounds of (parse, pieces, audit),
and each keeps its fastest run: on a shared machine whose speed drifts over minutes, the
fastest runs then come from the same stretch of time.

Peak memory is the child's max RSS (``os.wait4``: the largest one process of its tree), and,
for the audit, the peak of the whole process tree's summed PSS (the audit, its read helper and
its audit worker share pages; PSS counts each shared page once), sampled every second from
``/proc/<pid>/smaps_rollup``; the memory ratio uses the larger. The sampling is done in a run
of its own, after the timed runs: reading ``smaps_rollup`` walks each process's page tables,
and on this 2-CPU machine the sampler's walks of a 3 GB tree slowed the 10,000-VM audit it
timed by 2.7 s (35.8 s against 33.1 s, two interleaved pairs). The bare parse is one
process, whose PSS is at most its RSS: its max RSS is its peak. Prints the ratios against
the targets: audit <= 3x parse time and <= 2x parse peak RSS, 10x the VMs <=
x10.5 time, live <= 2x the directory audit.

Usage: ``python -m bench.bench_audit [--sizes 1000,10000] [--work DIR] [--live 10000]
[--phases] [--profile N] [--repeat K]``
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from bench._child import AT, BENCH_MAX_FILE_BYTES
from bench.generate import GENERATOR_VERSION, generate

__all__ = ["measure", "main", "warm_files"]

TIME_RATIO, MEM_RATIO, SCALE_RATIO, LIVE_RATIO = 3.0, 2.0, 10.5, 2.0
REPO = Path(__file__).resolve().parents[1]
_CLI = "from auditor.cli import entry; entry()"


def _run(cmd: list[str], *, tree: bool = False) -> tuple[bytes, float, float, float, float]:
    """Run ``cmd`` from the repo; return (stdout, wall seconds, CPU seconds, max RSS MiB,
    peak summed PSS of its process tree MiB, sampled only with ``tree``, else 0).

    Raises:
        RuntimeError: the command exited non-zero.
    """
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, env=env, cwd=REPO)
    sampler = _TreeMemory(proc.pid) if tree else None
    if sampler is not None:
        sampler.start()
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if sampler is not None:
        sampler.stop()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise RuntimeError(f"{' '.join(cmd[:6])} ... exited {code}")
    cpu = usage.ru_utime + usage.ru_stime
    peak = sampler.peak_kib / 1024 if sampler is not None else 0.0
    return out, wall, cpu, usage.ru_maxrss / 1024, peak  # Linux: KiB


class _TreeMemory(threading.Thread):
    """Samples the summed PSS of a process and its descendants every ``every`` seconds;
    ``peak_kib`` is the largest sum seen (KiB; 0 where ``/proc`` cannot tell)."""

    def __init__(self, pid: int, every: float = 1.0) -> None:
        super().__init__(daemon=True)
        self._pid, self._every, self._done = pid, every, threading.Event()
        self.peak_kib = 0

    def run(self) -> None:
        while not self._done.wait(self._every):
            self.peak_kib = max(self.peak_kib, sum(_pss_kib(p) for p in _tree(self._pid)))

    def stop(self) -> None:
        self._done.set()
        self.join()


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants (``/proc/<pid>/task/*/children``)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        for task in Path(f"/proc/{p}/task").glob("*/children"):
            with contextlib.suppress(OSError):
                todo += [int(c) for c in task.read_text().split()]
    return out


def _pss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def measure(args: list[str], *, warm: Path | None = None) -> dict[str, Any]:
    """Run ``python -m bench._child ARGS``; its JSON plus ``wall``, ``cpu`` (s) and ``rss_mib``.
    ``warm``: a folder whose files are read into the page cache just before
    (:func:`warm_files`)."""
    if warm is not None:
        warm_files(warm)
    out, wall, cpu, rss, tree = _run([sys.executable, "-m", "bench._child", *args])
    result: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    result.update(wall=wall, cpu=cpu, rss_mib=rss, tree_mib=tree)
    return result


def run_cli(args: list[str], *, tree: bool = False) -> dict[str, Any]:
    """Run ``auditor ARGS`` in a fresh interpreter; ``total`` (wall s), ``cpu`` (s),
    ``rss_mib`` and ``tree_mib`` (0 unless ``tree``; see :func:`_run`)."""
    _, wall, cpu, rss, peak = _run([sys.executable, "-c", _CLI, *args], tree=tree)
    return {"total": wall, "cpu": cpu, "rss_mib": rss, "tree_mib": peak}


def estate(work: Path, n: int, seed: int) -> Path:
    """The generated ``n``-VM estate under ``work`` (generated once, then reused)."""
    path = work / f"estate-{n}-seed{seed}"
    marker = path / ".complete"
    if not marker.exists() or json.loads(marker.read_text()).get("version") != GENERATOR_VERSION:
        made = generate(path, n, seed)
        marker.write_text(json.dumps({"version": GENERATOR_VERSION, "counts": made.counts}))
        print(
            f"generated {n} VMs: {made.bytes / 1e6:.0f} MB, "
            f"{sum(made.counts.values())} objects in {made.seconds:.1f} s",
            flush=True,
        )
    return path


def estate_objects(root: Path) -> int:
    """The number of objects :func:`estate` generated into ``root`` (from its marker)."""
    return sum(json.loads((root / ".complete").read_text())["counts"].values())


def _audit_args(out: Path) -> list[str]:
    return ["run", "--at", AT, "--format", "json", "--out", str(out)]


def audit_dir(root: Path, out: Path, *, warm: bool = False, tree: bool = False) -> dict[str, Any]:
    """``auditor run --from-dir root`` to report.json in ``out`` (``warm``: with ``root``'s
    files read into the page cache just before, :func:`warm_files`; ``tree``: also sample
    the process tree's peak PSS, which slows the run: for memory, not time)."""
    if warm:
        warm_files(root)
    args = [*_audit_args(out), "--from-dir", str(root), "--max-file-bytes"]
    return run_cli([*args, str(BENCH_MAX_FILE_BYTES)], tree=tree)


def audit_live(root: Path, out: Path, work: Path) -> dict[str, Any]:
    """Serve ``root`` on the loopback API server and audit it with ``auditor run``.

    Adds ``requests`` (list requests answered) and ``expected`` (kinds x pages
    of 500, the client's page size).
    """
    sys.path.insert(0, str(REPO))
    from auditor.kinds import KINDS
    from tests.kubeapi_server import FakeKubeAPI, load_export, running
    from tests.live_support import write_kubeconfig

    objects, exported = load_export(root)
    api = FakeKubeAPI(objects, served_kinds=exported)
    # every kind is listed once per page (an unserved kind: one request, answered 403)
    expected = sum(max(1, math.ceil(len(objects.get(k.kind, [])) / 500)) for k in KINDS)
    with running(api) as url:
        kubeconfig = write_kubeconfig(work / "kubeconfig", url)
        result = run_cli([*_audit_args(out), "--kubeconfig", str(kubeconfig)])
    result.update(requests=len(api.list_requests()), expected=expected)
    return result


def _verdict(value: float, limit: float) -> str:
    return f"{value:5.2f}x (target <= {limit}x: {'ok' if value <= limit else 'MISSED'})"


def main(argv: list[str] | None = None) -> int:
    """Measure and print; see the module docstring."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--work", type=Path, default=Path("/tmp/vra-bench"))
    parser.add_argument("--repeat", type=int, default=1, help="runs per measurement; fastest kept")
    parser.add_argument("--live", default="", help="sizes (comma-separated) also audited live")
    parser.add_argument("--phases", action="store_true", help="also time the phases in-process")
    parser.add_argument("--profile", type=int, default=0, help="cProfile the audit of this size")
    opts = parser.parse_args(argv)
    sizes = [int(s) for s in opts.sizes.split(",") if s]
    live = {int(s) for s in opts.live.split(",") if s}
    rows: dict[int, tuple[dict[str, Any], dict[str, Any]]] = {}
    for n in sizes:
        root = estate(opts.work, n, opts.seed)
        size = sum(p.stat().st_size for p in root.glob("*.yaml"))
        objects = estate_objects(root)
        out = opts.work / f"out-{n}"
        # Interleaved (parse, pieces, audit, parse, ...): on a shared machine whose speed
        # drifts over minutes, each measure's fastest run comes from the same stretch of time.
        # Each run starts with the estate's files in the page cache (warm_files).
        runs = [
            (
                measure(["parse", str(root)], warm=root),
                measure(["parse-pieces", str(root)], warm=root),
                audit_dir(root, out, warm=True),
            )
            for _ in range(opts.repeat)
        ]
        parse = min((r[0] for r in runs), key=_wall)
        pieces = min((r[1] for r in runs), key=_wall)
        audit = min((r[2] for r in runs), key=_wall)
        # memory in a run of its own: the tree's PSS sampler slows the run it watches
        sampled = audit_dir(root, out, warm=True, tree=True)
        audit = {
            **audit,
            "rss_mib": max([r[2]["rss_mib"] for r in runs] + [sampled["rss_mib"]]),
            "tree_mib": sampled["tree_mib"],
        }
        rows[n] = (parse, audit)
        print(
            f"N={n:>6} ({size / 1e6:.0f} MB, {objects} objects): yaml-rs parse "
            f"{parse['wall']:6.2f} s {parse['rss_mib']:6.0f} MiB | auditor run --format json "
            f"{audit['total']:6.2f} s {audit['rss_mib']:6.0f} MiB",
            flush=True,
        )
        print(
            f"          time   audit/parse {_verdict(audit['total'] / parse['wall'], TIME_RATIO)}"
        )
        print(
            f"          CPU    audit/parse {_verdict(audit['cpu'] / parse['cpu'], TIME_RATIO)} "
            f"({audit['cpu']:.2f} s / {parse['cpu']:.2f} s; steadier on a loaded machine)"
        )
        used, floor = _memory(audit), _memory(parse)
        print(
            f"          memory audit/parse {_verdict(used / floor, MEM_RATIO)} ({used:.0f} / "
            f"{floor:.0f} MiB: the larger of max RSS and the process tree's peak PSS, "
            f"{audit['tree_mib']:.0f} MiB for the audit)",
            flush=True,
        )
        print(
            f"          yaml-rs parse in the reader's 4 MB pieces {pieces['wall']:.2f} s "
            f"{pieces['rss_mib']:.0f} MiB: audit/that {audit['total'] / pieces['wall']:.2f}x "
            f"time, {_memory(audit) / _memory(pieces):.2f}x memory",
            flush=True,
        )
        fastest = min(parse["wall"], pieces["wall"])
        audits = ", ".join(f"{r[2]['total']:.2f}" for r in runs)
        parses = ", ".join(f"{min(r[0]['wall'], r[1]['wall']):.2f}" for r in runs)
        print(
            f"          against the fastest bare parse ({fastest:.2f} s): time "
            f"{_verdict(audit['total'] / fastest, TIME_RATIO)} (audit runs {audits} s; "
            f"fastest parse of each round {parses} s)",
            flush=True,
        )
        if opts.phases:
            ph = measure(["audit", str(root), str(opts.work / f"out-phases-{n}")], warm=root)
            print(
                f"          phases in-process: collect {ph['collect']:.2f} s, checks+envelope "
                f"{ph['audit']:.2f} s, report.json {ph['write_json']:.2f} s "
                f"({int(ph['vms'])} VMs, {int(ph['problems'])} problems)",
                flush=True,
            )
        if n in live:
            warm_files(root)
            got = audit_live(root, opts.work / f"out-live-{n}", opts.work)
            print(
                f"          live (loopback API) {got['total']:.2f} s {got['rss_mib']:.0f} MiB: "
                f"{_verdict(got['total'] / audit['total'], LIVE_RATIO)} of the directory audit; "
                f"{got['requests']} list requests, kinds x pages = {got['expected']}",
                flush=True,
            )
    if len(sizes) >= 2:
        lo, hi = sizes[0], sizes[-1]
        scale = rows[hi][1]["total"] / rows[lo][1]["total"]
        limit = SCALE_RATIO * hi / lo / 10
        print(
            f"scaling {lo} -> {hi} VMs: audit time x{scale:.2f} (target <= x{limit:.1f}: "
            f"{'ok' if scale <= limit else 'MISSED'}); parse time "
            f"x{rows[hi][0]['wall'] / rows[lo][0]['wall']:.2f}; audit CPU "
            f"x{rows[hi][1]['cpu'] / rows[lo][1]['cpu']:.2f}; audit memory "
            f"x{rows[hi][1]['rss_mib'] / rows[lo][1]['rss_mib']:.2f}"
        )
    if opts.profile:
        n = opts.profile
        prof = opts.work / f"audit-{n}.prof"
        print(f"profiling the {n}-VM audit into {prof} (stats on stderr)", flush=True)
        root = estate(opts.work, n, opts.seed)
        measure(["audit", str(root), str(opts.work / "out-prof"), "--profile", str(prof)])
    return 0


def warm_files(root: Path) -> None:
    """Read every file under ``root`` once (1 MiB at a time into one buffer) so that the
    measurement after it starts with the estate in the page cache.

    Why: a file page left unread for a minute may be dropped from the cache on this
    machine (its kernel runs DAMON with a ``pageout`` scheme for unmapped file pages idle
    12 aggregation intervals of 5 s, ``/sys/kernel/mm/damon/admin``), and which of the
    parse and the audit then read from disk depended on the order and the pauses between
    them."""
    buf = bytearray(1 << 20)
    for path in sorted(root.iterdir()):
        if path.is_file():
            with path.open("rb", buffering=0) as stream:
                while stream.readinto(buf):
                    pass


def _memory(m: dict[str, Any]) -> float:
    """MiB: the larger of the max RSS and the process tree's peak summed PSS."""
    return max(float(m["rss_mib"]), float(m.get("tree_mib", 0.0)))


def _wall(m: dict[str, Any]) -> float:
    return float(m.get("wall", m.get("total", 0.0)))


if __name__ == "__main__":
    raise SystemExit(main())
