"""Hostile names, labels and annotations: audited as data, rendered as inert text, never fetched.

The HTML, PDF and CSV assertions run as soon as those writers exist on main
(they skip until then). A local HTTP server records every request: no report
may make the auditor fetch anything, whatever URLs the cluster data holds.
"""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

from auditor.config import AuditSettings
from auditor.envelope import AuditReport
from auditor.pipeline import audit_data, dump_report_json, write_artifacts
from auditor.sources.directory import DirectorySource
from tests.conftest import AUDIT_AT
from tests.hostile_support import HOSTILE_VM_NAMES, hostile_strings, write_hostile_export
from tests.scale_support import strict_json


def _report(root: Path) -> AuditReport:
    return audit_data(DirectorySource(root).collect(), AuditSettings(), at=AUDIT_AT)


def _needs(fmt: str, report: AuditReport, tmp_path: Path) -> list[Path]:
    return write_artifacts(report, tmp_path / f"out-{fmt}", [fmt])


def test_hostile_export_audits_and_keeps_the_text_verbatim(tmp_path: Path) -> None:
    report = _report(write_hostile_export(tmp_path / "export"))
    strict_json(report)
    names = {vm.name for vm in report.vms}
    assert set(HOSTILE_VM_NAMES) | {"vm1"} <= names
    raw = dump_report_json(report).decode()
    assert "<script>alert(1)</script>" in raw  # data, escaped only by the renderers
    assert "\\u0000" in raw or "nul" in raw
    # no API server writes those names: each hostile VM is named as a problem (and read)
    named = {p.name: p for p in report.collection_problems if p.field == "metadata.name"}
    assert set(named) == set(HOSTILE_VM_NAMES)
    assert all(p.kind == "VirtualMachine" and p.namespace == "app" for p in named.values())
    assert ascii(HOSTILE_VM_NAMES[1]) in named[HOSTILE_VM_NAMES[1]].reason
    assert report.run.complete is False


class _Shape(HTMLParser):
    """Collects the tag and attribute names of a document, and the text of <script>/<style>."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.attrs: set[str] = set()
        self.urls: list[str] = []
        self._raw: str | None = None
        self.raw_text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        for name, value in attrs:
            self.attrs.add(name)
            if name in ("src", "href", "srcset", "data", "action", "poster") and value:
                self.urls.append(value)
        if tag in ("script", "style"):
            self._raw = tag

    def handle_endtag(self, tag: str) -> None:
        self._raw = None

    def handle_data(self, data: str) -> None:
        if self._raw:
            self.raw_text.append(data)


def _shape(html_text: str) -> _Shape:
    parser = _Shape()
    parser.feed(html_text)
    return parser


def test_html_renders_hostile_data_as_inert_text(tmp_path: Path) -> None:
    benign_root = write_hostile_export(tmp_path / "benign", benign=True)
    benign = _needs("html", _report(benign_root), tmp_path / "b")
    hostile = _needs("html", _report(write_hostile_export(tmp_path / "export")), tmp_path / "h")
    [b_html] = [p for p in benign if p.suffix == ".html"]
    [h_html] = [p for p in hostile if p.suffix == ".html"]
    b, h = _shape(b_html.read_text()), _shape(h_html.read_text())
    # the hostile data adds no element and no attribute the benign report does not have
    assert h.tags <= b.tags, h.tags - b.tags
    assert h.attrs <= b.attrs, h.attrs - b.attrs
    assert not any(a.startswith("on") for a in h.attrs)
    # nothing from the data reached a URL attribute or a script/style body
    assert [u for u in h.urls if "127.0.0.1" in u or "javascript:" in u] == []
    joined = "".join(h.raw_text)
    for marker in ("pwned", "alert(1)", "127.0.0.1", "@import"):
        assert marker not in joined
    text = h_html.read_text()
    assert "&lt;script&gt;" in text
    assert "<script>document.title" not in text


def test_pdf_renderer_fetches_nothing(
    tmp_path: Path, recording_server: tuple[str, list[str]]
) -> None:
    url, hits = recording_server
    report = _report(write_hostile_export(tmp_path / "export", fetch_url=url))
    paths = _needs("pdf", report, tmp_path)
    [pdf] = [p for p in paths if p.suffix == ".pdf"]
    assert pdf.read_bytes().startswith(b"%PDF")
    html_paths = _needs("html", report, tmp_path / "html")
    assert html_paths
    assert hits == [], f"the renderers fetched {hits}"


def test_pdf_shows_hostile_text_as_text(tmp_path: Path) -> None:
    from tests.canary_support import pdf_text

    report = _report(write_hostile_export(tmp_path / "export"))
    paths = _needs("pdf", report, tmp_path)
    [pdf] = [p for p in paths if p.suffix == ".pdf"]
    text = pdf_text(pdf)
    # the PDF's text layer holds the name as written (line wraps add whitespace, nothing else)
    assert "<script>alert(1)</script>" in "".join(text.split())


def test_csv_cells_cannot_start_a_formula(tmp_path: Path) -> None:
    import csv

    report = _report(write_hostile_export(tmp_path / "export"))
    paths = [p for p in _needs("csv", report, tmp_path) if p.suffix == ".csv"]
    assert paths
    bad = hostile_strings("http://127.0.0.1:9")
    for path in paths:
        with path.open(newline="", encoding="utf-8") as fh:
            for row in csv.reader(fh):
                for cell in row:
                    assert not cell.startswith(("=", "+", "@")), (path.name, cell[:60])
                    assert cell != bad["csv-formula"]
