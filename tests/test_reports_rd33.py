"""Reports read as their readers do (rd33): CSV cells safe in every CSV the tool writes,
rows that say when the audit behind them was incomplete, and what could not be seen.

Rule for the CSV cells: OWASP "CSV Injection" (cells starting ``=``, ``+``, ``-``, ``@``,
tab, CR) and OWASP ASVS V1.2 (NUL too); names come from the cluster.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pytest

from auditor.envelope import AuditReport
from auditor.period.render import period_csv
from auditor.report.csvout import findings_csv, vms_csv
from auditor.report.csvsafe import csv_cell
from tests.reports_support import sample_doc

#: values a spreadsheet could run as a formula, and how each must be written
DANGEROUS = (
    ' =HYPERLINK("http://evil.example","x")',
    "\n=cmd|' /C calc'!A0",
    "\x00=1+1",
    "\u00a0@SUM(A1)",
    "\uff1dcmd|' /C calc'!A0",  # full-width equals sign
    "\uff0b1+1",
    "\uff20SUM(A1)",
    "\t-1+2",
    "-1+2",
)
#: values that must stay as they are (numbers a numeric column holds, plain text)
SAFE = ("-", "-1.5", "+3", "24.0", "1e5", "web-api", "team web", "")


def _rows(data: bytes | str) -> list[dict[str, str]]:
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    return list(csv.DictReader(io.StringIO(text, newline="")))


@pytest.mark.parametrize("value", DANGEROUS)
def test_a_cell_that_could_start_a_formula_is_quoted(value: str) -> None:
    assert csv_cell(value) == "'" + value


@pytest.mark.parametrize("value", SAFE)
def test_numbers_and_plain_text_stay_as_they_are(value: str) -> None:
    assert csv_cell(value) == value
    assert csv_cell(3.5) == 3.5 and csv_cell(None) == ""


def _hostile_doc(owner: str) -> dict[str, Any]:
    doc = sample_doc()
    doc["vms"][0]["owner"] = owner
    doc["vms"][0]["name"] = owner
    return doc


@pytest.mark.parametrize("value", DANGEROUS)
def test_vms_and_findings_csv_quote_hidden_formulas(value: str) -> None:
    report = AuditReport.model_validate(_hostile_doc(value))
    vms = _rows(vms_csv(report))
    assert {r["owner"] for r in vms} >= {"'" + value}
    assert "'" + value in {r["vm"] for r in _rows(findings_csv(report))}


def _period_doc(name: str) -> dict[str, Any]:
    vm = {
        "namespace": name,
        "name": name,
        "owner": name,
        "audits": 3,
        "rpo": {"attained": 2, "breached": 1, "unknown": 0, "attainment": None},
        "longest_breach": {"audits": 1, "hours": 24.0},
        "restore_drills": [],
        "waived_checks": [],
        "readiness_last": "READY",
    }
    return {"partial": True, "as_of": "=1+1", "vms": [vm]}


@pytest.mark.parametrize("value", DANGEROUS)
def test_period_csv_quotes_every_text_cell(value: str) -> None:
    row = _rows(period_csv(_period_doc(value)))[0]
    assert (row["namespace"], row["name"], row["owner"]) == ("'" + value,) * 3
    assert row["period_as_of"] == "'=1+1"
    assert (row["audits"], row["rpo_attainment"], row["longest_breach_hours"]) == (
        "3",
        "unknown",
        "24.0",
    )


def test_fleet_csv_quotes_hidden_formulas() -> None:
    from auditor.fleet.render import _cell

    for value in DANGEROUS:
        assert _cell(value) == "'" + value
    assert (_cell(None), _cell(12), _cell(-0.5), _cell(True)) == ("", "12", "-0.5", "True")


def test_csv_rows_say_the_audit_was_incomplete_and_what_was_not_seen() -> None:
    """A READY row cut out of vms.csv from an incomplete audit looked like any READY, and an
    ERROR check (could not be evaluated) was only one more id among the failing ones."""
    report = AuditReport.model_validate(sample_doc(complete=False))
    vms = {r["vm"]: r for r in _rows(vms_csv(report))}
    assert {r["audit_complete"] for r in vms.values()} == {"false"}
    hr = vms["hr-db-01"]
    errors = sorted({f.check_id for v in report.vms if v.name == "hr-db-01" for f in v.findings
                     if f.status.value == "ERROR"})  # fmt: skip
    assert errors and hr["unknown_checks"] == " ".join(errors)
    assert vms["fin-app-01"]["unknown_checks"] == ""
    assert {r["audit_complete"] for r in _rows(findings_csv(report))} == {"false"}
    complete = AuditReport.model_validate(sample_doc(complete=True))
    assert {r["audit_complete"] for r in _rows(vms_csv(complete))} == {"true"}


RLO_NAME = "vm-\u202eexe.pdf"
#: the bidi and zero-width characters a cluster name can carry (Unicode TR #9; CVE-2021-42574)
CONTROLS = (
    "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c\u200b\u2060\ufeff"
)


def _rlo_report() -> AuditReport:
    doc = sample_doc(complete=True)
    vm = doc["vms"][1]  # fin-app-01, READY
    old = f"{vm['namespace']}/{vm['name']}"
    vm["name"] = RLO_NAME
    vm["owner"] = "team\u2066x\u200b"
    for f in vm["findings"]:
        f["message"] = f["message"].replace(old, f"{vm['namespace']}/{RLO_NAME}")
    return AuditReport.model_validate(doc)


def test_html_and_pdf_html_show_bidi_controls_instead_of_obeying_them() -> None:
    """An unterminated RLO in a VM name displayed the rest of each sentence that named the VM
    reversed ("Cannot evaluate ... for VM app/vm-<RLO>exe.pdf: the list ... could not be read"
    read backwards); a zero-width space made two owners look the same."""
    from auditor.report.html import render_html, render_pdf_html

    report = _rlo_report()
    for html in (render_html(report), render_pdf_html(report)):
        assert not [c for c in CONTROLS if c in html], "an invisible control reached the page"
        assert "vm-[U+202E]exe.pdf" in html
        assert "team[U+2066]x[U+200B]" in html


def test_the_shared_environment_shows_controls_in_text_and_attributes() -> None:
    """report, period and fleet pages all render through ``environment()``."""
    from auditor.report.html import environment

    out = (
        environment()
        .from_string('{{ a }}|{{ b|e }}|<p title="{{ a }}">|{{ n }}')
        .render(a=RLO_NAME, b="x\u2067y", n=3)
    )
    assert out == 'vm-[U+202E]exe.pdf|x[U+2067]y|<p title="vm-[U+202E]exe.pdf">|3'


def test_pdf_text_stays_inside_the_page_with_a_long_unbroken_name(tmp_path: Path) -> None:
    """The "First action" line naming a 300-character VM (``vm-xxx...``: one run with no break
    opportunity) ran 2 pt past the A4 page edge on 5 pages of the hostile export's PDF."""
    import re
    import shutil
    import subprocess

    from auditor.config import AuditSettings
    from auditor.pipeline import audit_data, write_artifacts
    from auditor.sources.directory import DirectorySource
    from tests.conftest import AUDIT_AT
    from tests.hostile_support import write_hostile_export

    pdftotext = shutil.which("pdftotext")
    if pdftotext is None:
        pytest.skip("pdftotext missing: run .ci/setup-reports.sh")
    root = write_hostile_export(tmp_path / "export")
    report = audit_data(DirectorySource(root).collect(), AuditSettings(), at=AUDIT_AT)
    [pdf] = [p for p in write_artifacts(report, tmp_path / "out", ["pdf"]) if p.suffix == ".pdf"]
    bbox = subprocess.run(
        [pdftotext, "-bbox", str(pdf), "-"], check=True, capture_output=True, text=True, timeout=120
    ).stdout
    right = [
        (float(x1), w[:30]) for x1, w in re.findall(r'xMax="([\d.]+)" yMax="[\d.]+">([^<]*)<', bbox)
    ]
    # A4 is 595 pt wide, the right margin 12 mm (34 pt): text stays left of 562 pt
    worst = max(right)
    assert worst[0] <= 562.0, f"text runs to {worst[0]:.0f} pt, past the margin: {worst[1]}"
    assert any("xxxxxxxxxx" in w for _, w in right)


def test_vms_csv_says_unknown_and_never_instead_of_a_blank() -> None:
    """A VM whose backups could not be read had within_rpo blank, and a VM never backed up a
    blank newest_usable_backup: in a spreadsheet both read like a cell with nothing wrong. The
    HTML said "unknown" and "never backed up"; vms.csv now says so too."""
    doc = sample_doc(complete=False)
    hr = next(v for v in doc["vms"] if v["name"] == "hr-db-01")
    hr["backup"]["newest_usable"], hr["backup"]["within_rpo"] = None, None
    hr["backup"]["restore_points"] = 0
    rows = {r["vm"]: r for r in _rows(vms_csv(AuditReport.model_validate(doc)))}
    assert (rows["hr-db-01"]["within_rpo"], rows["hr-db-01"]["backup_state"]) == (
        "unknown",
        "unknown",
    )
    assert (rows["fin-app-01"]["within_rpo"], rows["fin-app-01"]["backup_state"]) == (
        "yes",
        "within RPO",
    )
    assert rows["fin-db-01"]["newest_usable_backup"] == ""
    assert rows["fin-db-01"]["backup_state"] == "never backed up"
    assert rows["fin-db-01"]["within_rpo"] == "no"


def test_fleet_owner_share_is_not_labelled_as_the_not_ready_count(tmp_path: Path) -> None:
    """fleet.html printed team-web's NOT_READY 2 of 4 VMs beside a "Not ready" column of 100 %:
    that share counts every VM not counted READY (AT_RISK too), so its header must not say
    "Not ready"."""
    import json
    import re
    from datetime import UTC, datetime

    from auditor.fleet import ClusterRun, FleetInput, build_fleet
    from auditor.fleet.model import FleetVerification
    from auditor.fleet.render import fleet_html
    from tests.conftest import REPO, invoke_run

    result = invoke_run(REPO / "examples" / "small-cluster", tmp_path / "run")
    assert result.exit_code == 0, result.output
    doc = json.loads((tmp_path / "run" / "report.json").read_text())
    verified = FleetVerification(manifest="verified", signature="unsigned", detail=[])
    data = FleetInput("archive", [ClusterRun("east", doc, "east/x", "east/x/", verified)])
    fleet = build_fleet(data, at=datetime(2026, 11, 30, 7, tzinfo=UTC))
    web = next(o for o in fleet.owners if o.owner == "team-web")
    assert (web.vms, web.readiness["NOT_READY"], web.not_ready_share) == (2, 1, 1.0)
    html = fleet_html(fleet)
    owners = html[html.index("<th>Owner</th>") :]
    headers = re.findall(r"<th>([^<]*)</th>", owners[: owners.index("</tr>")])
    assert "Not ready" not in headers and "Short of READY" in headers


def test_period_html_never_calls_a_one_audit_breach_zero_hours(tmp_path: Path) -> None:
    """lab/lab-ephemeral's newest backup was 243 h old against a 24 h RPO at the month's only
    audit; period.html printed its longest breach as "0.0 h over 1 audits", which reads as a
    breach of no length. A breach seen in one audit has no measured length."""
    from click.testing import CliRunner

    from auditor.cli import main
    from tests.conftest import REPO, invoke_run

    result = invoke_run(
        REPO / "examples" / "small-cluster",
        tmp_path / "run",
        "--cluster-name",
        "east",
        "--publish",
        str(tmp_path / "a"),
    )
    assert result.exit_code == 0, result.output
    out = tmp_path / "period"
    res = CliRunner().invoke(
        main,
        ["report", "--period", "2026-11", "--from", str(tmp_path / "a"), "--cluster", "east",
         "--out", str(out), "--format", "html,csv"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    html = (out / "period.html").read_text(encoding="utf-8")
    row = html[html.index("lab-ephemeral") :]
    row = row[: row.index("</tr>")]
    assert "0.0 h" not in row and "1 audit (2026-11-30T06:00:00Z): length not measured" in row
    lab = next(r for r in _rows((out / "period.csv").read_text()) if r["name"] == "lab-ephemeral")
    assert (lab["rpo_breached"], lab["longest_breach_audits"]) == ("1", "1")


def test_findings_csv_labels_an_inferred_fail_inferred() -> None:
    """The HTML labels each finding Observed or Inferred; findings.csv had no such column, so
    a FAIL resting on inference read like an observed one in the spreadsheet."""
    doc = sample_doc(complete=True)
    db = next(v for v in doc["vms"] if v["name"] == "fin-db-01")
    fail = next(f for f in db["findings"] if f["status"] == "FAIL")
    fail["basis"] = "inferred"
    rows = _rows(findings_csv(AuditReport.model_validate(doc)))
    got = {(r["vm"], r["check_id"]): r["basis"] for r in rows}
    assert got[("fin-db-01", fail["check_id"])] == "inferred"
    assert set(got.values()) <= {"", "observed", "inferred"}
