"""Recovery cards of VMs with long names: every path segment fits in NAME_MAX (255 bytes)."""

from __future__ import annotations

from pathlib import Path

from auditor.envelope import AuditReport
from auditor.report.cards import safe_segment
from auditor.report.html import render_html
from auditor.report.view import build_view
from auditor.report.writers import write_formats
from tests.reports_support import sample_doc


def test_longest_valid_kubernetes_name_gets_a_card(tmp_path: Path) -> None:
    doc = sample_doc()
    doc["vms"][0]["name"] = "b" * 253  # a valid DNS-1123 subdomain, the longest allowed
    doc["vms"][1]["name"] = "ü" * 80  # percent-encodes to 480 characters
    report = AuditReport.model_validate(doc)
    paths = write_formats(report, tmp_path / "out", ["cards"])
    assert all(len(p.name.encode()) <= 255 for p in paths)
    assert all(p.is_file() for p in paths)


def test_truncated_segments_stay_distinct() -> None:
    a, b = "c" * 252 + "a", "c" * 252 + "b"
    assert safe_segment(a) != safe_segment(b)
    assert safe_segment("x" * 300 + "1") != safe_segment("x" * 300 + "2")
    assert len(safe_segment("ü" * 200)) <= 200
    assert safe_segment("fin-db-01") == "fin-db-01"


def test_compact_html_names_the_card_file_that_was_written(tmp_path: Path) -> None:
    doc = sample_doc()
    doc["vms"][0]["name"] = "b" * 253
    doc["vms"][1]["name"] = "../../etc/passwd"
    report = AuditReport.model_validate(doc)
    paths = write_formats(report, tmp_path / "out", ["cards"])
    html = render_html(report, view=build_view(report, html_detail_limit=0))
    for p in paths[:2]:
        rel = p.relative_to(tmp_path / "out").as_posix()
        assert f"(full card: {rel})" in html
