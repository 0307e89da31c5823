"""The PDF report: content via pypdf, a page looked at via pdftoppm, no network, limits."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from PIL import Image
from pypdf import PdfReader

from auditor.report.pdf import PdfLimitError, render_pdf
from auditor.report.writers import write_formats
from tests.reports_support import sample_report, synthetic_report


@pytest.fixture(scope="module")
def sample_pdf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pdf")
    (path,) = write_formats(sample_report(hostile=True, complete=False), out, ["pdf"])
    return path


def _text(path: Path) -> str:
    return "\n".join(page.extract_text() or "" for page in PdfReader(path).pages)


def test_pdf_pages_headings_and_every_not_ready_vm(sample_pdf: Path) -> None:
    reader = PdfReader(sample_pdf)
    assert 4 <= len(reader.pages) <= 12  # issue 13: compact; the catalog is one line per check
    text = _text(sample_pdf)
    for heading in (
        "VM recovery readiness audit",
        "Executive summary",
        "VMs that are not ready, by owner",
        "Ready VMs (2)",
        "Appendix A: Check catalog",
        "Appendix B: Collection problems",
        "Appendix C: Method",
        "Incomplete audit.",
    ):
        assert heading.lower() in text.lower(), heading
    for vm in ("finance-prod/fin-db-01", "lab/lab-01", "evil-ns/evil-vm", "hr-prod/hr-db-01"):
        assert vm in text, vm
    # running header, page numbers and metadata
    first_pages = [reader.pages[i].extract_text() for i in (1, 2)]
    assert all("ocp-test-east · audit 2026-11-30T06:00:00Z" in t for t in first_pages)
    assert f"Page 2 of {len(reader.pages)}" in first_pages[0]
    assert reader.metadata is not None and reader.metadata.title is not None
    assert reader.metadata.title.startswith("Recovery readiness: ocp-test-east")
    assert "<script>document.title" in text  # hostile owner printed as text


def test_pdf_page_rendered_by_pdftoppm_shows_chart(sample_pdf: Path, tmp_path: Path) -> None:
    pdftoppm = shutil.which("pdftoppm")
    if pdftoppm is None:
        pytest.skip("pdftoppm missing: run .ci/setup-reports.sh")
    subprocess.run(
        [pdftoppm, "-f", "2", "-l", "2", "-r", "40", "-png", str(sample_pdf), str(tmp_path / "p")],
        check=True,
        timeout=60,
    )
    (png,) = tmp_path.glob("p-*.png")
    image = Image.open(png).convert("RGB")
    assert image.size == (331, 468)  # A4 at 40 dpi
    colours = {c for _, c in image.getcolors(maxcolors=1 << 16) or []}
    # the not-ready bar (#c62828) and ready bar (#2e7d32) of the summary chart are drawn
    assert (198, 40, 40) in colours and (46, 125, 50) in colours


def test_pdf_makes_no_request_even_with_urls_in_values(
    recording_server: tuple[str, list[str]], tmp_path: Path
) -> None:
    url, hits = recording_server
    write_formats(sample_report(hostile=True, url=f"{url}/leak.png"), tmp_path, ["pdf"])
    assert (tmp_path / "report.pdf").stat().st_size > 10_000
    assert hits == []


def test_fetcher_refuses_every_scheme_but_data(
    recording_server: tuple[str, list[str]], tmp_path: Path
) -> None:
    url, hits = recording_server
    pixel = (
        "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4"
        "z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
    )
    html = (
        f'<html><head><link rel="stylesheet" href="{url}/a.css">'
        f"<style>@import url({url}/b.css); body {{ background: url({url}/c.png) }}"
        f"@font-face {{ font-family: x; src: url({url}/d.woff) }}</style></head>"
        f'<body><img src="{url}/e.png"><img src="file:///etc/hostname">'
        f'<img src="{pixel}" width="50"><p style="background:url({url}/f.png)">x</p></body></html>'
    )
    out = render_pdf(html, tmp_path / "raw.pdf")
    assert hits == []
    assert b"/Subtype /Image" in out.read_bytes()  # the data: image was embedded


def test_same_report_gives_same_pdf_but_for_creation_stamp(tmp_path: Path) -> None:
    a = write_formats(sample_report(), tmp_path / "a", ["pdf"])[0].read_bytes()
    b = write_formats(sample_report(), tmp_path / "b", ["pdf"])[0].read_bytes()
    stamp = re.compile(rb"/(CreationDate|ModDate) \([^)]*\)")
    assert stamp.sub(b"", a) == stamp.sub(b"", b)


def test_large_estate_pdf_is_compact_and_says_so(tmp_path: Path) -> None:
    report = synthetic_report(320)
    (path,) = write_formats(report, tmp_path, ["pdf"])
    text = " ".join(_text(path).split())
    assert "This estate has 320 VMs, more than 300" in text
    assert "report.html, findings.csv and vms.csv" in text
    not_ready = [f"{v.namespace}/{v.name}" for v in report.vms if v.readiness == "NOT_READY"]
    assert not_ready and all(vm in text for vm in not_ready)
    assert "Recovery card." not in text


def test_memory_limit_gives_clear_error(tmp_path: Path) -> None:
    # WeasyPrint warmed up takes about 215 MiB of address space; 6,000 rows need far more.
    # Native code may abort instead of raising: either way the error names the limit.
    html = "<table>" + "<tr><td>x</td><td>y</td></tr>" * 6000 + "</table>"
    with pytest.raises(PdfLimitError, match="memory limit of 300 MiB"):
        render_pdf(html, tmp_path / "m.pdf", memory_bytes=300 * 1024**2)
    assert list(tmp_path.iterdir()) == []
    # fontconfig started before the cap, so its font cache stays whole: fonts still embed
    ok = render_pdf("<p>x</p>", tmp_path / "ok.pdf")
    fonts = PdfReader(ok).pages[0]["/Resources"]["/Font"]
    assert any("DejaVu" in str(font.get_object()["/BaseFont"]) for font in fonts.values())


def test_time_limit_gives_clear_error(tmp_path: Path) -> None:
    html = "<table>" + "<tr><td>x</td><td>y</td></tr>" * 20000 + "</table>"
    with pytest.raises(PdfLimitError, match="time limit of 1 s"):
        render_pdf(html, tmp_path / "t.pdf", timeout_s=1)
    assert list(tmp_path.iterdir()) == []
