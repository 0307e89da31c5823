"""``auditor report --period``: 30 daily runs published by the real pipeline, figures recomputed."""

from __future__ import annotations

import csv
import io
import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from auditor.cli import main
from auditor.period import Period
from auditor.publish import publish_run
from tests.conftest import REPO, invoke_run
from tests.publish_support import WeedServer, weed_credentials

EXAMPLE = REPO / "examples" / "small-cluster"
CLUSTER = "small-east"


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """PREFIX with 30 daily November runs (06:00 UTC) and 2 October runs, published locally."""
    base = tmp_path_factory.mktemp("archive")
    instants = [f"2026-11-{d:02d}T06:00:00Z" for d in range(1, 31)]
    instants += ["2026-10-30T06:00:00Z", "2026-10-31T06:00:00Z"]
    for i, at in enumerate(instants):
        result = invoke_run(
            EXAMPLE,
            base / f"run{i}",
            "--cluster-name",
            CLUSTER,
            "--publish",
            str(base / "a"),
            at=at,
        )
        assert result.exit_code == 0, result.output
    return base / "a"


def _reports(archive: Path, month: str) -> list[dict[str, Any]]:
    """Every report.json of ``month`` (YYYY-MM), read straight from the files, oldest first."""
    docs = [json.loads(p.read_text()) for p in archive.rglob("report.json")]
    docs = [d for d in docs if d["run"]["audit_time"].startswith(month)]
    return sorted(docs, key=lambda d: d["run"]["audit_time"])


def _expected(reports: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per VM: audits, attained/breached/unknown and the longest not-within-RPO streak."""
    out: dict[str, dict[str, Any]] = {}
    for doc in reports:
        at = datetime.fromisoformat(doc["run"]["audit_time"].replace("Z", "+00:00"))
        for vm in doc["vms"]:
            e = out.setdefault(
                f"{vm['namespace']}/{vm['name']}",
                {"n": 0, True: 0, False: 0, None: 0, "streak": [], "best": (0, 0.0)},
            )
            flag = vm["backup"]["within_rpo"]
            e["n"] += 1
            e[flag] += 1
            e["streak"] = [] if flag is True else [*e["streak"], at]
            if e["streak"]:
                hours = (e["streak"][-1] - e["streak"][0]).total_seconds() / 3600
                e["best"] = max(e["best"], (len(e["streak"]), hours))
    return out


def test_period_report_attainment_is_recomputed_from_the_runs(
    archive: Path, tmp_path: Path
) -> None:
    out = tmp_path / "period"
    result = CliRunner().invoke(
        main,
        ["report", "--period", "2026-11", "--from", str(archive), "--cluster", CLUSTER,
         "--out", str(out)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "period.json").read_text())
    november = _reports(archive, "2026-11")
    assert len(november) == 30 and doc["fleet"]["runs"] == 30 and doc["problems"] == []
    expected = _expected(november)
    assert sorted(expected) == [f"{v['namespace']}/{v['name']}" for v in doc["vms"]]
    for v in doc["vms"]:
        e = expected[f"{v['namespace']}/{v['name']}"]
        assert v["audits"] == e["n"] == 30
        assert (v["rpo"]["attained"], v["rpo"]["breached"], v["rpo"]["unknown"]) == (
            e[True],
            e[False],
            e[None],
        )
        assert v["rpo"]["attainment"] == round(e[True] / e["n"], 4)
        assert (v["longest_breach"]["audits"], v["longest_breach"]["hours"]) == e["best"]
    # the example's backups exist only late in the month: before them the VMs had never been
    # backed up, which breaches the RPO (not "unknown": the Backup list was read)
    attained = sum(e[True] for e in expected.values())
    breached = sum(e[False] for e in expected.values())
    assert 0 < attained < 150 and breached > attained
    assert doc["fleet"]["rpo_attainment"] == round(attained / 150, 4)
    assert doc["fleet"]["rpo_unknown"] == sum(e[None] for e in expected.values())
    assert doc["fleet"]["rpo_breached"] == breached
    assert len(doc["fleet"]["readiness_by_day"]) == 30
    # the previous month's two runs exist: the fleet is compared with them
    october = _expected(_reports(archive, "2026-10"))
    prev_attained = sum(e[True] for e in october.values())
    assert doc["previous"]["runs"] == 2 and doc["previous"]["rpo_attained"] == prev_attained
    assert doc["change"]["rpo_attained"] == attained - prev_attained
    # per owner: owners of the VMs' last audit; attainment over their VM audits
    owners = {v["owner"] for v in november[-1]["vms"]}
    assert set(doc["by_owner"]) == owners
    # CSV: one row per VM, same figures
    rows = list(csv.DictReader(io.StringIO((out / "period.csv").read_text())))
    assert [(r["namespace"], r["name"], int(r["rpo_attained"])) for r in rows] == [
        (v["namespace"], v["name"], v["rpo"]["attained"]) for v in doc["vms"]
    ]
    # HTML: server-drawn SVG, no script; PDF rendered from the same HTML
    html = (out / "period.html").read_text()
    assert html.count("<svg") == 2 and "<script" not in html
    assert html.count('<rect x="') >= 30  # at least one segment per day
    assert (out / "period.pdf").read_bytes().startswith(b"%PDF")


def test_period_json_is_deterministic_and_empty_periods_fail(archive: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    args = ["report", "--period", "2026-10", "--from", str(archive), "--cluster", CLUSTER]
    one = runner.invoke(main, [*args, "--out", str(tmp_path / "1"), "--format", "json"])
    two = runner.invoke(main, [*args, "--out", str(tmp_path / "2"), "--format", "json,csv"])
    assert one.exit_code == two.exit_code == 0, one.output + two.output
    first = (tmp_path / "1" / "period.json").read_bytes()
    assert first == (tmp_path / "2" / "period.json").read_bytes()
    assert json.loads(first)["previous"] is None  # no September runs
    empty = runner.invoke(main, [*args[:2], "2026-09", *args[3:], "--out", str(tmp_path / "3")])
    assert empty.exit_code == 2 and "no full-fleet run" in empty.output
    bad = runner.invoke(main, [*args[:2], "2026-13", *args[3:]])
    assert bad.exit_code == 2 and "2026-13" in bad.output


def test_period_arithmetic() -> None:
    assert Period.parse("2026-01").previous() == Period(2025, 12)
    assert Period.parse("2026-12").end.isoformat() == "2027-01-01T00:00:00+00:00"
    with pytest.raises(ValueError):
        Period.parse("2026-1")


def test_period_from_s3_reads_verified_runs(
    archive: Path, weed: WeedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bucket = "period-evidence"
    weed.client().create_bucket(Bucket=bucket)
    settings = weed.settings(bucket, tmp_path)
    runs = [archive.parent / f"run{i}" for i in (0, 1, 29)]  # 1, 2 and 30 November
    for run in runs:
        assert publish_run(run, settings, store=weed.store(settings)).published
    tampered = json.loads((runs[1] / "report.json").read_text())
    key = f"evidence/{CLUSTER}/2026/11/02/{tampered['run']['id']}/report.json"
    weed.client().put_object(Bucket=bucket, Key=key, Body=b"{}")
    for key, value in weed_credentials(tmp_path).items():
        monkeypatch.setenv(key, value)
    result = CliRunner().invoke(
        main,
        ["report", "--period", "2026-11", "--from", f"s3://{bucket}/evidence", "--cluster",
         CLUSTER, "--out", str(tmp_path / "p"), "--format", "json", "--endpoint-url",
         weed.endpoint, "--addressing-style", "path", "--region", "us-east-1"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    doc = json.loads((tmp_path / "p" / "period.json").read_text())
    good = [json.loads((r / "report.json").read_text()) for r in (runs[0], runs[2])]
    assert doc["runs"] == [r["run"]["id"] for r in good]  # the tampered run is not counted
    assert len(doc["problems"]) == 1 and "differs from manifest" in doc["problems"][0]
    assert "Warning:" in result.output
    expected = _expected(good)
    for v in doc["vms"]:
        assert v["rpo"]["attained"] == expected[f"{v['namespace']}/{v['name']}"][True]


def test_period_pdf_keeps_a_long_vm_name_inside_its_column(tmp_path: Path) -> None:
    """ux27: a 31-character VM name with no hyphen set the width of the VM column of
    period.pdf (auto table layout, no wrapping), pushing the table past the page edge: the
    last three columns (restore drills, waived checks, last readiness) were off the page.
    The table now has fixed columns and breaks a long name anywhere in its column."""
    import shutil
    import subprocess

    pdftotext = shutil.which("pdftotext")
    if pdftotext is None:
        pytest.skip("pdftotext missing: run .ci/setup-reports.sh")
    long_name = "m" * 31  # a DNS-1123 name may run to 63 characters
    export = tmp_path / "export"
    shutil.copytree(EXAMPLE, export)
    for f in export.glob("*.yaml"):
        f.write_text(f.read_text().replace("billing-win", long_name))
    for day in ("29", "30"):
        result = invoke_run(
            export, tmp_path / day, "--cluster-name", CLUSTER, "--publish",
            str(tmp_path / "a"), "--format", "json", at=f"2026-11-{day}T06:00:00Z",
        )  # fmt: skip
        assert result.exit_code == 0, result.output
    out = tmp_path / "period"
    res = CliRunner().invoke(
        main,
        ["report", "--period", "2026-11", "--from", str(tmp_path / "a"), "--cluster", CLUSTER,
         "--out", str(out), "--format", "pdf"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    bbox = subprocess.run(
        [pdftotext, "-bbox", str(out / "period.pdf"), "-"],
        check=True, capture_output=True, text=True, timeout=60,
    ).stdout  # fmt: skip
    import re

    words = re.findall(
        r'xMin="([\d.]+)" yMin="[\d.]+" xMax="([\d.]+)" yMax="[\d.]+">([^<]*)<', bbox
    )
    # A4 landscape is 842 pt wide, the page margin 1.2 cm (34 pt): text stays left of 808 pt
    right = max(float(x1) for _, x1, _ in words)
    assert right <= 808, f"text runs to {right:.0f} pt, past the right margin (808 pt)"
    texts = [w for _, _, w in words]
    assert "readiness" in texts and "AT_RISK" in texts  # the last column, on the page
    # the name is all there, broken into pieces within its column (left of "team-billing")
    pieces = [(float(x0), float(x1), w) for x0, x1, w in words if set(w) == {"m"}]
    assert sum(len(w) for _, _, w in pieces) >= len(long_name)
    owner_x = max(float(x0) for x0, _, w in words if w == "team-billing")  # the VM table's
    assert all(x1 < owner_x for _, x1, _ in pieces)


def test_one_audit_archived_with_two_format_sets_counts_once(tmp_path: Path) -> None:
    """ux27: `run --at T --publish` with `--format json` and again with `--format json,csv`
    are archived as two runs (the id covers the formats); the period report counted both,
    weighing that instant twice in the RPO attainment."""
    archive = tmp_path / "a"
    for name, at, formats in (
        ("d29", "2026-11-29T06:00:00Z", "json"),
        ("d30", "2026-11-30T06:00:00Z", "json"),
        ("d30csv", "2026-11-30T06:00:00Z", "json,csv"),
    ):
        result = invoke_run(
            EXAMPLE, tmp_path / name, "--cluster-name", CLUSTER, "--publish", str(archive),
            "--format", formats, at=at,
        )  # fmt: skip
        assert result.exit_code == 0, result.output
    ids = {n: json.loads((tmp_path / n / "report.json").read_text())["run"]["id"] for n in
           ("d29", "d30", "d30csv")}  # fmt: skip
    assert len(set(ids.values())) == 3
    res = CliRunner().invoke(
        main,
        ["report", "--period", "2026-11", "--from", str(archive), "--cluster", CLUSTER,
         "--out", str(tmp_path / "p"), "--format", "json"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / "p" / "period.json").read_text())
    assert doc["fleet"]["runs"] == 2
    assert doc["runs"] == sorted([ids["d29"], min(ids["d30"], ids["d30csv"])])
    lab = next(v for v in doc["vms"] if v["name"] == "lab-ephemeral")
    assert lab["audits"] == 2
