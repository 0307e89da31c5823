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
import signal
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

#: Address-space cap of the rendering child (bytes). WeasyPrint's libraries map
#: about 0.3 GiB of address space before rendering anything.
DEFAULT_MEMORY_BYTES = 2 * 1024**3
#: Wall-clock limit of the rendering child (seconds); the CPU limit is the same.
DEFAULT_TIMEOUT_S = 120.0

_EXIT_MEMORY = 3
_EXIT_FAILED = 4


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
        os.replace(tmp, out_path)
    finally:
        tmp.unlink(missing_ok=True)
    return out_path


def _raise_for(
    proc: subprocess.CompletedProcess[bytes], out_path: Path, timeout_s: float, memory_bytes: int
) -> None:
    if proc.returncode == 0:
        return
    err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
    last = err[-1] if err else "no error output"
    mib = memory_bytes / 1024**2
    if proc.returncode == _EXIT_MEMORY:
        raise PdfLimitError(
            f"PDF rendering of {out_path.name} exceeded the memory limit of {mib:.0f} MiB"
        )
    if proc.returncode in (-signal.SIGXCPU, -signal.SIGKILL):
        raise PdfLimitError(
            f"PDF rendering of {out_path.name} was stopped by its limits "
            f"({timeout_s:g} s CPU, {mib:.0f} MiB): signal {-proc.returncode}"
        )
    raise PdfRenderError(
        f"PDF rendering of {out_path.name} failed (exit {proc.returncode}): {last}"
    )


def _child(out: str, memory_bytes: int, cpu_s: int) -> int:
    """Child side: set limits, read HTML from stdin, write the PDF to ``out``."""
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 5))
    html = sys.stdin.buffer.read().decode("utf-8")
    try:
        from weasyprint import HTML
        from weasyprint.urls import URLFetcher

        class DataOnlyFetcher(URLFetcher):  # type: ignore[misc]
            """Fetch ``data:`` URLs only; any other URL is refused before opening it."""

            def fetch(self, url: str, headers: object = None) -> object:
                if not url.lower().startswith("data:"):
                    raise ValueError(f"refused to fetch {url[:80]!r}: only data: URLs allowed")
                return super().fetch(url, headers)

        fetcher = DataOnlyFetcher(allowed_protocols=("data",), allow_redirects=False, timeout=1)
        HTML(string=html, url_fetcher=fetcher).write_pdf(out)
    except MemoryError:
        sys.stderr.write(f"memory limit of {memory_bytes} bytes reached\n")
        return _EXIT_MEMORY
    except Exception as exc:  # reported to the parent as PdfRenderError
        sys.stderr.write(f"{type(exc).__name__}: {exc}\n")
        return _EXIT_FAILED
    return 0


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
