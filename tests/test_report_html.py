"""The HTML report: self-contained, escaped, deterministic; opened in headless Chromium."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from jinja2 import UndefinedError

from auditor.report.html import environment, render_html
from auditor.report.view import build_view
from auditor.report.writers import write_formats
from tests.reports_support import HOSTILE_SCRIPT, sample_report

CHROMIUM = shutil.which("chromium")
TREND = {  # the trend.json shape of docs/publishing.md
    "series": [
        {"audit_time": "2026-10-31T06:00:00Z", "readiness": {"READY": 4, "NOT_READY": 1}},
        {"audit_time": "2026-11-30T06:00:00Z", "readiness": {"READY": 2, "NOT_READY": 3}},
    ],
    "vs_previous": {
        "became_not_ready": [{"namespace": "lab", "name": "lab-01", "was": "READY"}],
        "gaps_fixed": [{"namespace": "hr-prod", "name": "hr-app-01", "check_id": "RR-BKP-001"}],
    },
}


def test_hostile_values_are_escaped_text() -> None:
    html = render_html(sample_report(hostile=True))
    assert "<img" not in html
    assert html.count("<script") == 1  # the report's own script only
    assert "&lt;script&gt;document.title=&#39;PWNED&#39;" in html
    assert "&lt;img src=x onerror=&#34;document.title=&#39;PWNED-IMG&#39;&#34;&gt;" in html


def test_html_is_self_contained_with_strict_csp() -> None:
    html = render_html(sample_report(hostile=True))
    assert "<link" not in html and "@import" not in html.split("</style>")[0]
    # every src/href attribute is a same-document anchor
    refs = re.findall(r'\s(?:src|href)="([^"]*)"', html)
    assert refs and all(r.startswith("#") for r in refs)
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert csp is not None
    assert "default-src 'none'" in csp.group(1) and "script-src 'sha256-" in csp.group(1)


def test_cover_summary_table_and_appendices_present() -> None:
    html = render_html(sample_report(complete=False), trend=TREND)
    for needle in (
        'id="incomplete"',
        "Incomplete audit.",
        'Checks with missing or partial input: <span class="cid">RR-BKP-001</span>, '
        '<span class="cid">RR-BKP-002</span>.',
        'id="vm-table"',
        'id="by-owner"',
        'id="by-namespace"',
        'id="top-gaps"',
        "Appendix A: Check catalog",
        "Backup list forbidden (403) for velero.io/v1 backups",
        "Appendix C: Method",
        "rpo_hours",
        'id="trend-table"',
        "lab/lab-01 READY",
        "hr-prod/hr-app-01 RR-BKP-001",
        "Recovery card",
        "02:00:00:01:01:02",
        "https://velero.io/docs/main/backup-reference/",
        'id="waiver-table"',
        "name fin-app-*; namespace finance-*",
        "kubevirt.io/latest-observed-api-version",
    ):
        assert needle in html, needle
    rows = re.search(r'<table class="grid vms sortable" id="vm-table">.*?</table>', html, re.S)
    assert rows is not None and rows.group(0).count("<tr class=") == 6
    complete = render_html(sample_report(complete=True))
    assert 'id="incomplete"' not in complete and 'id="trend"' not in complete


def test_strict_undefined_fails_loudly() -> None:
    template = environment().from_string("{{ view.no_such_field }}")
    with pytest.raises(UndefinedError):
        template.render(view=build_view(sample_report()))


def test_same_report_gives_byte_identical_html(tmp_path: Path) -> None:
    first = write_formats(sample_report(hostile=True), tmp_path / "a", ["html"], trend=TREND)
    second = write_formats(sample_report(hostile=True), tmp_path / "b", ["html"], trend=TREND)
    assert first[0].read_bytes() == second[0].read_bytes()


def _chromium(*args: str) -> str:
    assert CHROMIUM is not None
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--no-first-run", f"--user-data-dir={profile}", *args],
            capture_output=True, text=True, timeout=120, check=True,
        )  # fmt: skip
    return proc.stdout


@pytest.mark.skipif(CHROMIUM is None, reason="chromium missing: run .ci/setup-reports.sh")
def test_chromium_runs_nothing_from_hostile_vm(tmp_path: Path) -> None:
    (path,) = write_formats(sample_report(hostile=True), tmp_path, ["html"])
    dom = _chromium("--dump-dom", path.as_uri())
    # our script ran (it marks <html class="js"> and un-hides the filter box) ...
    assert re.search(r'<html lang="en" class="js">', dom)
    assert re.search(r'<p class="filter" id="vm-filter-box">', dom)
    # ... the hostile ones did not: title unchanged, nothing appended, no injected elements
    titles = re.findall(r"<title>([^<]*)</title>", dom)
    assert titles[0] == "Recovery readiness: ocp-test-east, 2026-11-30T06:00:00Z"
    assert "PWNED" not in "".join(titles)
    assert dom.count("<script") == 1 and "<img" not in dom
    body_end = dom.rsplit("</script>", 1)[1]
    assert "PWNED" not in body_end
    assert HOSTILE_SCRIPT.replace("<", "&lt;").replace(">", "&gt;") in dom
    table = re.search(r'<table class="grid vms sortable" id="vm-table">.*?</table>', dom, re.S)
    assert table is not None and "evil-vm" in table.group(0) and "fin-db-01" in table.group(0)


@pytest.mark.skipif(CHROMIUM is None, reason="chromium missing: run .ci/setup-reports.sh")
def test_chromium_reads_report_without_its_script(tmp_path: Path) -> None:
    # headless --dump-dom needs JavaScript itself, so "scripts off" is the page minus its script
    (path,) = write_formats(sample_report(), tmp_path, ["html"])
    html = path.read_text(encoding="utf-8")
    stripped = tmp_path / "noscript.html"
    stripped.write_text(re.sub(r"<script>.*?</script>", "", html, flags=re.S), encoding="utf-8")
    dom = _chromium("--dump-dom", stripped.as_uri())
    assert '<html lang="en">' in dom  # no script ran
    table = re.search(r'<table class="grid vms sortable" id="vm-table">.*?</table>', dom, re.S)
    assert table is not None and table.group(0).count("<tr class=") == 6
    assert dom.count('<section class="vm"') == 6 and "Appendix A: Check catalog" in dom
    assert 'id="vm-filter-box" hidden=""' in dom  # the JS-only filter stays out of the way


def test_templates_ship_with_wheel_and_image() -> None:
    import tomllib

    from auditor.report.html import TEMPLATES_DIR

    repo = Path(__file__).resolve().parents[1]
    config = tomllib.loads((repo / "pyproject.toml").read_text(encoding="utf-8"))
    data_files = config["tool"]["setuptools"]["data-files"]
    assert data_files["share/vm-recovery-auditor/report_templates"] == ["report_templates/*"]
    assert not [p for p in TEMPLATES_DIR.iterdir() if p.is_dir()]  # the glob takes every file
    assert "COPY report_templates ./report_templates" in (repo / "Containerfile").read_text()


def test_check_ids_are_never_broken_across_lines() -> None:
    """ux19: every check id the report prints on its own is one unbreakable span (PDF tables
    broke "RR-PLT-005" after its first hyphen); ids inside sentences (messages, waiver
    pairs) are the check's text."""
    from auditor.report.html import check_ids

    assert str(check_ids(["RR-BKP-012", "RR-NET-003"], ", ")) == (
        '<span class="cid">RR-BKP-012</span>, <span class="cid">RR-NET-003</span>'
    )
    assert str(check_ids("<x>")) == '<span class="cid">&lt;x&gt;</span>'
    html = render_html(sample_report())
    assert ".nowrap, .cid { white-space: nowrap; }" in html
    assert (
        "Checks with missing or partial input: "
        + str(check_ids(["RR-BKP-001", "RR-BKP-002"], ", "))
        in html
    )
    assert '<td class="mono"><span class="cid">RR-STO-001</span><br>' in html  # platform
    assert '<td class="mono"><span class="cid">RR-FW-001</span><br>' in html
    # 102, plus the sample's waived check beside its VM's verdict ("accepted risk: ..."),
    # plus its two incomplete checks named again beside the kinds not read (Appendix B, nu34)
    assert len(re.findall(r'<span class="cid">RR-[A-Z]+-\d{3}</span>', html)) == 105
