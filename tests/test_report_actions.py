"""What readers act on, in HTML and PDF: root-cause gaps, owner work lists, "never backed up",
readable evidence (no JSON or Python structures) and the PDF's length.

On the shared cluster export where it is present; the project's own per-check fixtures and
the bundled example cover the same rules without it.
"""

from __future__ import annotations

import html as htmllib
import re
from pathlib import Path
from typing import Any

import pytest
from pypdf import PdfReader

from auditor.config import AuditSettings
from auditor.envelope import AuditReport
from auditor.pipeline import audit_data
from auditor.report.html import render_html
from auditor.report.writers import write_formats
from auditor.sources.directory import DirectorySource
from tests.conftest import AUDIT_AT, REPO
from tests.test_check_fixtures import CASES, _header

#: Raw structures a reader must never see (issue 13).
RAW = ('{"', "{'", "[{")


def _pdf_text(path: Path) -> str:
    return "\n".join(page.extract_text() or "" for page in PdfReader(path).pages)


def _row(html: str, vm: str) -> str:
    """The VM table row of ``vm`` (name), as text."""
    table = html[html.index('id="vm-table"') :]
    for row in re.findall(r"<tr class=\"row-.*?</tr>", table, re.S):
        if f">{vm}</a>" in row:
            return htmllib.unescape(re.sub(r"<[^>]+>", " ", row))
    raise AssertionError(f"no row for {vm}")


def _fixture_report(check_id: str, stem: str) -> AuditReport:
    path = next(p for p in CASES if p.parent.name == check_id and p.stem == stem)
    _header(path)
    from auditor.kinds import BY_KIND
    from auditor.sources.base import KindState

    data = DirectorySource(path).collect()
    for kind in BY_KIND:
        data.states[kind] = KindState.COMPLETE
    return audit_data(data, AuditSettings(), at=AUDIT_AT)


@pytest.fixture(scope="module")
def export_out(export_report: AuditReport, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("export")
    write_formats(export_report, out, ["html", "pdf"])
    return out


def test_export_html_work_lists_never_backed_up_and_why(
    export_out: Path, export_doc: dict[str, Any]
) -> None:
    html = (export_out / "report.html").read_text(encoding="utf-8")
    text = htmllib.unescape(html)
    # a per-owner action list: every owner with a gap, and each VM's first action names it
    assert 'id="work"' in html
    owners = {v["owner"] for v in export_doc["vms"] if v["root_causes"]}
    for owner in owners:
        assert f"Owner {owner}:" in text, owner
    work = text[text.index('id="work"') : text.index('id="vms"')]
    assert "velero backup create dev-scratch-02-now" in work
    assert "oc patch vm fin-report-win2k22 -n finance-prod" in work
    # dev-scratch-02 was never in any backup: said plainly, in the table and its section
    assert "never backed up" in _row(html, "dev-scratch-02")
    assert "within RPO" not in _row(html, "dev-scratch-02")
    # web-legacy-cms: its definition is in last night's backup, its disks in none
    cms = _row(html, "web-legacy-cms")
    assert "no disk data in any backup" in cms and "within RPO" not in cms
    # the "why" column names the root cause
    assert "No usable backup holds the VM and its disks" in _row(html, "dev-scratch-02")
    # top gaps count root causes: three VMs lack a usable backup, one line says so
    gaps = text[text.index('id="top-gaps"') :]
    gaps = gaps[: gaps.index("</table>")]
    assert re.search(
        r"No usable backup holds the VM and its disks</td>.*?<td class=\"num\">3<", gaps, re.S
    )
    for raw in RAW:
        assert raw not in text, raw


def test_export_pdf_has_no_raw_structures_and_fits_12_pages(export_out: Path) -> None:
    pdf = export_out / "report.pdf"
    text = _pdf_text(pdf)
    for raw in RAW:
        assert raw not in text, raw
    assert len(PdfReader(pdf).pages) <= 12
    flat = " ".join(text.split())
    assert "Work by owner" in flat and "never backed up" in flat
    assert "ec602b1f-2105-52db-9b1b-1c21ba738517" in flat  # RR-FW-001's running UUID
    # catalog appendix: one line per check, details only for checks open in this audit
    appendix = flat[flat.index("Appendix A: Check catalog") :]
    assert "RR-BKP-011" in appendix
    details = appendix[appendix.index("Checks that failed or could not be evaluated") :]
    assert "RR-FW-001" in details and "RR-BKP-011" not in details.split("Appendix B")[0]


def test_export_pdf_never_breaks_a_check_id_across_lines(export_out: Path) -> None:
    """ux19: the platform findings table printed "RR-" on one line and "PLT-005" on the next
    (the hyphen is a break opportunity); ids are kept whole, within the 12 pages."""
    lines = _pdf_text(export_out / "report.pdf").splitlines()
    broken = [
        f"{a!r} / {b!r}"
        for a, b in zip(lines, lines[1:], strict=False)
        if re.search(r"\bRR(-[A-Z]+)?-?$", a.rstrip()) and re.match(r"[A-Z]*-?\d{3}\b", b)
    ]
    assert broken == []
    ids = set(re.findall(r"\bRR-[A-Z]+-\d{3}\b", "\n".join(lines)))
    assert {"RR-PLT-005", "RR-PLT-006", "RR-BKP-012", "RR-NET-003"} <= ids


def test_fixture_never_backed_up_and_work_list_without_the_shared_corpus() -> None:
    report = _fixture_report("RR-BKP-001", "fail-no-backup")
    html = render_html(report)
    assert "never backed up" in _row(html, "vm1")
    work = htmllib.unescape(html[html.index('id="work"') : html.index('id="vms"')])
    assert "Owner unassigned:" in work and "velero backup create vm1-now" in work
    # PASS evidence is summarised; the FAIL's evidence is shown
    assert "Passed (" in html
    for raw in RAW:
        assert raw not in htmllib.unescape(html), raw


def test_fixture_object_only_backup_is_not_within_rpo() -> None:
    report = _fixture_report("RR-BKP-001", "fail-object-only")
    vm = report.vms[0]
    # the backup holds the definition, not the disks: no restore point, not within RPO
    assert vm.backup.newest_usable is None and vm.backup.within_rpo is False
    assert vm.backup.data_captured is False
    row = _row(render_html(report), vm.name)
    assert "no disk data in any backup" in row and "within RPO" not in row


def test_example_pdf_has_no_raw_structures(tmp_path: Path) -> None:
    data = DirectorySource(REPO / "examples" / "small-cluster", cluster_name="example").collect()
    report = audit_data(data, AuditSettings(), at=AUDIT_AT)
    (pdf,) = write_formats(report, tmp_path, ["pdf"])
    text = _pdf_text(pdf)
    for raw in RAW:
        assert raw not in text, raw
    assert "Kinds not audited" in " ".join(text.split())
