"""Print the report HTML to PDF with WeasyPrint, in a child process with limits.

This is the only module that imports WeasyPrint, and only in the child. The
parent (:func:`render_pdf`) starts ``python -m auditor.report.pdf``, sends the
print HTML on stdin and waits; the child caps its own address space
(``RLIMIT_AS``) and CPU time (``RLIMIT_CPU``) before importing WeasyPrint, and
the parent kills it after ``timeout_s`` of wall time. So one huge report fails
with a clear :class:`PdfRenderError` instead of taking the service down.

WeasyPrint fetches ``url()``/``src`` resources by default. The child passes a
:class:`weasyprint.urls.URLFetcher` subclass (the v70 API: a plain function is
no longer accepted) that allows the ``data:`` scheme only, so no report content
can make the auditor open a file or call out to the network.

Exceptions::

    PdfRenderError          rendering failed (message says why)
      PdfLimitError         the child hit its time or memory limit
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

__all__ = [
    "DEFAULT_MEMORY_BYTES",
    "DEFAULT_TIMEOUT_S",
    "PdfLimitError",
    "PdfRenderError",
    "render_pdf",
]

#: Address-space cap of the rendering child (bytes), set after WeasyPrint is imported and
#: warmed up (about 0.2 GiB). The 10,000-VM report renders within 0.75 GiB.
DEFAULT_MEMORY_BYTES = 1024**3
#: Wall-clock limit of the rendering child (seconds); the CPU limit is the same.
DEFAULT_TIMEOUT_S = 120.0

_EXIT_MEMORY = 3
_EXIT_FAILED = 4
# How an allocation failure shows when it happens outside our handler (start-up, C code).
_OOM_MARKERS = (
    "MemoryError",
    "Cannot allocate memory",
    "out of memory",
    "Resource temporarily unavailable",
)


class PdfRenderError(RuntimeError):
    """The PDF could not be rendered; the message names the cause."""


class PdfLimitError(PdfRenderError):
    """The rendering child exceeded its time or memory limit."""


def render_pdf(
    html: str,
    out_path: Path,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    memory_bytes: int = DEFAULT_MEMORY_BYTES,
) -> Path:
    """Render ``html`` (the print HTML) to ``out_path`` in a limited child process.

    The file appears only when rendering succeeded (written to a temporary
    file in the same directory, then renamed). Returns ``out_path``.

    Raises:
        PdfLimitError: the child ran longer than ``timeout_s`` seconds (wall or
            CPU) or needed more than ``memory_bytes`` of address space.
        PdfRenderError: WeasyPrint failed; the message carries its last error line.
    """
    out_path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=".pdf-", suffix=".tmp", dir=out_path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    cmd = [
        sys.executable,
        "-m",
        "auditor.report.pdf",
        tmp_name,
        str(memory_bytes),
        str(max(1, int(timeout_s))),
    ]
    try:
        try:
            proc = subprocess.run(
                cmd,
                input=html.encode("utf-8"),
                capture_output=True,
                timeout=timeout_s,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise PdfLimitError(
                f"PDF rendering of {out_path.name} exceeded the time limit of {timeout_s:g} s"
            ) from exc
        _raise_for(proc, out_path, timeout_s, memory_bytes)
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; match the other artifacts
        os.replace(tmp, out_path)
    finally:
        tmp.unlink(missing_ok=True)
    return out_path


def _raise_for(
    proc: subprocess.CompletedProcess[bytes], out_path: Path, timeout_s: float, memory_bytes: int
) -> None:
    """Turn a failed child into the matching exception.

    Native code (Pango, GLib, cairo) that cannot allocate under the address-space
    cap aborts or crashes instead of raising, so a child killed by a signal is
    reported as stopped by its limits, with the signal and its last error line.
    """
    if proc.returncode == 0:
        return
    err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
    last = err[-1] if err else "no error output"
    mib = memory_bytes / 1024**2
    out_of_memory = any(m in "\n".join(err) for m in _OOM_MARKERS)
    if proc.returncode == _EXIT_MEMORY or out_of_memory:
        raise PdfLimitError(
            f"PDF rendering of {out_path.name} exceeded the memory limit of {mib:.0f} MiB"
        )
    if proc.returncode < 0:
        raise PdfLimitError(
            f"PDF rendering of {out_path.name} was stopped by signal {-proc.returncode} "
            f"within its limits ({timeout_s:g} s CPU, memory limit of {mib:.0f} MiB): {last}"
        )
    raise PdfRenderError(
        f"PDF rendering of {out_path.name} failed (exit {proc.returncode}): {last}"
    )


def _address_space() -> int:
    """Return this process's current address-space size in bytes (0 if unknown)."""
    try:
        status = Path("/proc/self/status").read_text(encoding="ascii")
    except OSError:
        return 0
    for line in status.splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    return 0


def _child(out: str, memory_bytes: int, cpu_s: int) -> int:
    """Child side: import WeasyPrint, set limits, read HTML from stdin, write the PDF to ``out``.

    The limits are set after the imports and a one-line warm-up render, so an
    allocation failure can only happen while rendering the report; any failure there with the address space near the
    cap counts as the memory limit (C code may report it as another error).
    """
    from weasyprint import HTML
    from weasyprint.urls import URLFetcher

    class DataOnlyFetcher(URLFetcher):  # type: ignore[misc]
        """Fetch ``data:`` URLs only; any other URL is refused before opening it."""

        def fetch(self, url: str, headers: object = None) -> object:
            if not url.lower().startswith("data:"):
                raise ValueError(f"refused to fetch {url[:80]!r}: only data: URLs allowed")
            return super().fetch(url, headers)

    fetcher = DataOnlyFetcher(allowed_protocols=("data",), allow_redirects=False, timeout=1)
    # Warm up before the cap: fontconfig and Pango's font threads start on first use, and
    # under a tight address-space cap they fail and leave WeasyPrint without fonts.
    HTML(string='<p style="font-family: sans-serif">x</p>', url_fetcher=fetcher).write_pdf()
    html = sys.stdin.buffer.read().decode("utf-8")
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 5))
    try:
        HTML(string=html, url_fetcher=fetcher).write_pdf(out)
    except Exception as exc:  # reported to the parent as PdfRenderError
        if isinstance(exc, MemoryError) or _address_space() > 0.9 * memory_bytes:
            sys.stderr.write(f"memory limit of {memory_bytes} bytes reached\n")
            return _EXIT_MEMORY
        sys.stderr.write(f"{type(exc).__name__}: {exc}\n")
        return _EXIT_FAILED
    return 0


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
