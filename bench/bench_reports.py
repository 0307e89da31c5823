"""Render time and peak memory of the HTML and PDF reports for synthetic estates.

Usage: python bench/bench_reports.py [N ...]   (default: 1000 10000)

Each measurement runs in a fresh child process so peak RSS is its own: for HTML
the renderer's process; for PDF the larger of the renderer and its WeasyPrint
child. The estate is a synthetic report.json dict (tests/reports_support.py);
when ``bench/generate.py`` (synthetic cluster export) is on main, the bench can
run the real pipeline on it instead. Budget: the 10,000-VM PDF within 60 s and 1 GiB.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PDF_BUDGET_S = 60.0
PDF_BUDGET_BYTES = 1024**3


def _measure(fmt: str, n: int) -> dict[str, float]:
    """Child side: build the report, render ``fmt`` once, print figures as JSON."""
    from auditor.report.writers import write_formats
    from tests.reports_support import synthetic_report

    report = synthetic_report(n)
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        (path,) = write_formats(report, Path(tmp), [fmt])
        seconds = time.perf_counter() - start
        size = path.stat().st_size
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    return {
        "seconds": seconds,
        "peak_bytes": max(own, child),
        "renderer_bytes": own,
        "child_bytes": child,
        "size_bytes": size,
    }


def run(n: int, fmt: str) -> dict[str, float]:
    """Measure ``fmt`` for ``n`` VMs in a fresh interpreter; return its figures."""
    out = subprocess.run(
        [sys.executable, __file__, "--one", fmt, str(n)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main(argv: list[str]) -> int:
    if argv[:1] == ["--one"]:
        print(json.dumps(_measure(argv[1], int(argv[2]))))
        return 0
    sizes = [int(a) for a in argv] or [1000, 10000]
    ok = True
    print(f"{'VMs':>7} {'format':<6} {'seconds':>8} {'peak MiB':>9} {'file MiB':>9}")
    for n in sizes:
        for fmt in ("html", "pdf"):
            r = run(n, fmt)
            print(
                f"{n:>7} {fmt:<6} {r['seconds']:>8.1f} {r['peak_bytes'] / 2**20:>9.0f} "
                f"{r['size_bytes'] / 2**20:>9.1f}",
                flush=True,
            )
            if fmt == "pdf" and n >= 10000:
                ok &= r["seconds"] <= PDF_BUDGET_S and r["peak_bytes"] <= PDF_BUDGET_BYTES
    print("budget (10,000-VM PDF <= 60 s, <= 1 GiB):", "met" if ok else "MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
