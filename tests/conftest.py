"""Shared test fixtures: where the read-only shared corpus lives, an audit helper, and a real
S3-compatible server (SeaweedFS) per test module."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from tests.publish_support import WeedServer

REPO = Path(__file__).resolve().parents[1]
AUDIT_AT = datetime(2026, 11, 30, 6, 0, 0, tzinfo=UTC)
#: The bundled example export (``scripts/example.sh`` audits it)
EXAMPLE = REPO / "examples" / "small-cluster"


def edited_example(tmp_path: Path, old: str, new: str, file: str = "virtualmachines.yaml") -> Path:
    """A copy of :data:`EXAMPLE` under ``tmp_path / "export"`` with the first ``old`` in
    ``file`` replaced by ``new``; fails the test when ``old`` is not there (an edit that
    changed nothing would test the example itself)."""
    import shutil

    out = tmp_path / "export"
    shutil.copytree(EXAMPLE, out)
    path = out / file
    text = path.read_text()
    assert old in text, f"{old!r} is not in {path}"
    path.write_text(text.replace(old, new, 1))
    return out


def invoke_run(from_dir: Path, out: Path, *extra: str, at: str = "2026-11-30T06:00:00Z") -> Any:
    """Invoke ``auditor run --from-dir FROM --at AT --out OUT --format json EXTRA...`` in-process.

    Returns click's ``Result`` (``exit_code``, ``output``); a later ``--format`` in
    ``extra`` overrides the json default.
    """
    from click.testing import CliRunner

    from auditor.cli import main

    args = ["run", "--from-dir", str(from_dir), "--at", at, "--out", str(out), "--format", "json"]
    return CliRunner().invoke(main, [*args, *extra])


#: Why a suite skips on a clone with nothing beside it (CI and developers have ../shared).
SHARED_REASON = (
    "needs ../shared/corpus beside the clone; the project's own fixtures "
    "(tests/fixtures/checks, examples/small-cluster) cover the same rules"
)


def find_corpus() -> Path:
    """Locate ``shared/corpus`` beside the repository (or any parent of it).

    Where it is absent (a fresh clone with nothing beside it) the calling test, fixture or
    module is skipped with :data:`SHARED_REASON`; it never fails for that alone.
    """
    for parent in REPO.parents:
        candidate = parent / "shared" / "corpus"
        if candidate.is_dir():
            return candidate
    pytest.skip(SHARED_REASON, allow_module_level=True)


@pytest.fixture(scope="session")
def corpus() -> Path:
    """Path of ``../shared/corpus``."""
    return find_corpus()


def report_doc(report: Any) -> dict[str, Any]:
    """The report.json document of an :class:`AuditReport`, as a reader of the file sees it."""
    import json

    from auditor.envelope import dump_report_json

    doc: dict[str, Any] = json.loads(dump_report_json(report))
    return doc


@pytest.fixture(scope="session")
def export_report(corpus: Path) -> Any:
    """The :class:`AuditReport` of the shared example cluster export at its audit time."""
    from auditor.config import AuditSettings
    from auditor.pipeline import audit_data
    from auditor.sources.directory import DirectorySource
    from tests.answer_support import answers

    name = answers("cluster-export").cluster_name
    data = DirectorySource(corpus / "cluster-export", cluster_name=name).collect()
    return audit_data(data, AuditSettings(), at=AUDIT_AT)


@pytest.fixture(scope="session")
def export_doc(export_report: Any) -> dict[str, Any]:
    """report.json (as a dict) of the shared example cluster export at its audit time."""
    return report_doc(export_report)


class _RecordingHandler(http.server.BaseHTTPRequestHandler):
    """Answers every GET with an empty PNG and records the path asked for."""

    hits: list[str]

    def do_GET(self) -> None:  # noqa: N802 (http.server API)
        self.hits.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        return


@pytest.fixture()
def recording_server() -> Iterator[tuple[str, list[str]]]:
    """A real HTTP server on 127.0.0.1: ``(base_url, hits)``, hits being the paths requested.

    Renderers must never call out: tests put this URL into hostile values and assert
    ``hits`` stays empty.
    """
    hits: list[str] = []
    handler = type("Recorder", (_RecordingHandler,), {"hits": hits})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", hits
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def weed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WeedServer]:
    """A SeaweedFS S3 server on loopback (``tests/publish_support.py``), one per test module;
    stopped without its graceful shutdown (its data is thrown away)."""
    from tests.publish_support import WeedServer

    server = WeedServer(tmp_path_factory.mktemp("weed"))
    server.start()
    yield server
    server.stop(crash=True)
