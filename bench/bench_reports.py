"""Render time and peak memory of the HTML and PDF reports for synthetic estates.

Usage: python bench/bench_reports.py [--export] [N ...]   (default: 1000 10000)

For each N the bench builds one report.json, then renders each format in a fresh
child process that loads it, so peak RSS is the renderer's own: for HTML that
process (report.json loaded included); the PDF's WeasyPrint child renders under
its own address-space cap (``auditor/report/pdf.py``) and fails above it. By default the
estate is a synthetic report dict (tests/reports_support.py); with ``--export``
it is the real pipeline's report of a synthetic cluster export written by
``bench/generate.py`` (the scale work's generator). Budget: the 10,000-VM PDF
within 60 s and 1 GiB.
"""

from __future__ import annotations

import importlib
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from auditor.envelope import AuditReport

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from auditor.report.pdf import DEFAULT_MEMORY_BYTES  # noqa: E402 - after the path setup

PDF_BUDGET_S = 60.0
PDF_BUDGET_BYTES = 1024**3
#: issue 15: the HTML of 10,000 VMs is at most 50 MB
HTML_BUDGET_BYTES = 50 * 10**6


def export_report(n: int, tmp: Path) -> AuditReport:
    """Audit a synthetic cluster export of ``n`` VMs written by ``bench/generate.py``."""
    from datetime import UTC, datetime

    from auditor.config import AuditSettings
    from auditor.pipeline import audit_data
    from auditor.sources.directory import DirectorySource

    try:
        module = importlib.import_module("bench.generate")
    except ImportError as exc:
        raise SystemExit(f"bench/generate.py not importable ({exc}): run without --export") from exc
    module.generate(tmp / "export", n, 7)
    data = DirectorySource(tmp / "export", cluster_name="bench").collect()
    at = getattr(module, "AUDIT_TIME", datetime(2026, 11, 30, 6, tzinfo=UTC))
    return audit_data(data, AuditSettings(), at=at)


def _measure(fmt: str, report_path: Path) -> dict[str, float]:
    """Child side: load report.json, render ``fmt`` once, return the figures."""
    from auditor.envelope import load_report
    from auditor.report.writers import write_formats

    report = load_report(report_path.read_bytes())
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        (path,) = write_formats(report, Path(tmp), [fmt])
        seconds = time.perf_counter() - start
        size = path.stat().st_size
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    # The PDF is rendered by a WeasyPrint child that caps its own address space at
    # DEFAULT_MEMORY_BYTES (report/pdf.py) and fails above it, so a written PDF proves the
    # renderer stayed within it. ru_maxrss of children counts the pages a forked child
    # shares with this process (report.json loaded) and cannot show the renderer's own peak.
    return {"seconds": seconds, "peak_bytes": max(own, child), "size_bytes": size}


def run(fmt: str, report_path: Path) -> dict[str, float]:
    """Measure ``fmt`` for the report at ``report_path`` in a fresh interpreter."""
    out = subprocess.run(
        [sys.executable, __file__, "--one", fmt, str(report_path)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _build(n: int, export: bool, report_path: Path) -> None:
    """Child side: write the report.json of an ``n``-VM estate to ``report_path``."""
    from auditor.envelope import dump_report_json
    from tests.reports_support import synthetic_report

    with tempfile.TemporaryDirectory() as tmp:
        report = export_report(n, Path(tmp)) if export else synthetic_report(n)
    report_path.write_bytes(dump_report_json(report))


def main(argv: list[str]) -> int:
    if argv[:1] == ["--one"]:
        print(json.dumps(_measure(argv[1], Path(argv[2]))))
        return 0
    if argv[:1] == ["--build"]:
        _build(int(argv[1]), argv[2] == "export", Path(argv[3]))
        return 0
    export = "--export" in argv
    sizes = [int(a) for a in argv if a != "--export"] or [1000, 10000]
    print("estate:", "pipeline report of a bench/generate.py export" if export else "synthetic")
    print(
        f"{'VMs':>7} {'format':<6} {'seconds':>8} {'peak MiB':>9} {'file MiB':>9}"
        "   (peak: the measuring process with report.json loaded; the PDF renderer itself"
        " runs under a 1 GiB address-space cap and fails above it)"
    )
    ok = True
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            # built in its own process: a child inherits its parent's peak RSS in ru_maxrss
            report_path = Path(tmp) / "report.json"
            kind = "export" if export else "synthetic"
            subprocess.run(
                [sys.executable, __file__, "--build", str(n), kind, str(report_path)], check=True
            )
            for fmt in ("html", "pdf"):
                r = run(fmt, report_path)
                print(
                    f"{n:>7} {fmt:<6} {r['seconds']:>8.1f} {r['peak_bytes'] / 2**20:>9.0f} "
                    f"{r['size_bytes'] / 2**20:>9.1f}",
                    flush=True,
                )
                if fmt == "pdf" and n >= 10000:  # memory: the renderer's cap (see _measure)
                    ok &= r["seconds"] <= PDF_BUDGET_S and DEFAULT_MEMORY_BYTES <= PDF_BUDGET_BYTES
                if fmt == "html" and n >= 10000:
                    ok &= r["size_bytes"] <= HTML_BUDGET_BYTES
    print("budget (10,000-VM PDF <= 60 s, <= 1 GiB; HTML <= 50 MB):", "met" if ok else "MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
