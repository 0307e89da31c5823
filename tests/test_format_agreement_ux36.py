"""report.json, vms.csv, findings.csv, report.html and report.pdf agree on every number and
verdict of the bundled example, and of the shared cluster export where it is present (trial
ux36: a compliance reader compares formats).

One run of the example with every format; report.json is the envelope the others are
rendered from, so each figure a reader sees elsewhere is recomputed here from it and looked
up in the other formats: readiness totals and shares, counts per owner and namespace, each
VM's readiness, newest usable backup, its age, RPO, RPO state and restore points, every
FAIL/ERROR finding (check, status, severity), root-cause VM counts, the catalog's open
counts, and the run id and audit time. HTML and PDF text are compared with whitespace
removed (the PDF wraps long names inside a cell).
"""

from __future__ import annotations

import csv
import html as htmllib
import io
import json
import re
from collections import Counter
from typing import Any

import pytest
from pypdf import PdfReader

from auditor.models import Severity
from auditor.report.formatting import fmt_hours
from tests.conftest import REPO, find_corpus, invoke_run

EXAMPLE = REPO / "examples" / "small-cluster"
LABELS = {"NOT_READY": "Not ready", "AT_RISK": "At risk", "UNKNOWN": "Unknown", "READY": "Ready"}
ORDER = ("NOT_READY", "AT_RISK", "UNKNOWN", "READY")
FAILING = ("FAIL", "ERROR")


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


#: input -> (VMs, FAIL/ERROR findings of VMs and platform); the shared export skips where absent
CASES = {"example": (5, 20), "cluster-export": (12, 61)}


@pytest.fixture(scope="module", params=sorted(CASES))
def out(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    source = EXAMPLE if request.param == "example" else find_corpus() / "cluster-export"
    run_dir = tmp_path_factory.mktemp("ux36-formats") / "run"
    result = invoke_run(
        source, run_dir, "--cluster-name", request.param, "--format", "json,html,pdf,csv"
    )
    assert result.exit_code == 0, result.output
    page = (run_dir / "report.html").read_text()
    page = re.sub(r"<(style|script)\b.*?</\1>", "", page, flags=re.S)
    pdf = "\n".join(p.extract_text() or "" for p in PdfReader(run_dir / "report.pdf").pages)
    return {
        "case": CASES[request.param],
        "json": json.loads((run_dir / "report.json").read_text()),
        "vms": list(csv.DictReader(io.StringIO((run_dir / "vms.csv").read_text()))),
        "findings": list(csv.DictReader(io.StringIO((run_dir / "findings.csv").read_text()))),
        "html": _squash(htmllib.unescape(re.sub(r"<[^>]+>", " ", page))),
        "pdf": _squash(pdf),
    }


def _texts(out: dict[str, Any]) -> dict[str, str]:
    return {"html": out["html"], "pdf": out["pdf"]}


def test_readiness_totals_and_shares_agree(out: dict[str, Any]) -> None:
    doc = out["json"]
    counted = Counter(vm["readiness"] for vm in doc["vms"])
    assert {s: counted.get(s, 0) for s in ORDER} == doc["summary"]["readiness"]
    assert Counter(r["readiness"] for r in out["vms"]) == counted
    assert doc["summary"]["vms"] == len(doc["vms"]) == len(out["vms"]) == out["case"][0]
    total = doc["summary"]["vms"]
    rows = "".join(
        f"{_squash(LABELS[s])}{doc['summary']['readiness'][s]}"
        f"{100 * doc['summary']['readiness'][s] / total:.1f}%"
        for s in ORDER
    )
    for fmt, text in _texts(out).items():
        assert _squash("Readiness VMs Share") + rows in text, (fmt, rows)
        assert f"{total}VMs" in text, fmt


@pytest.mark.parametrize("group", ["by_owner", "by_namespace"])
def test_counts_per_owner_and_namespace_agree(out: dict[str, Any], group: str) -> None:
    doc = out["json"]
    key = "owner" if group == "by_owner" else "namespace"
    from_csv: dict[str, Counter[str]] = {}
    for r in out["vms"]:
        from_csv.setdefault(r[key], Counter())[r["readiness"]] += 1
    assert {k: {s: c.get(s, 0) for s in ORDER} for k, c in from_csv.items()} == doc["summary"][
        group
    ]
    for name, counts in doc["summary"][group].items():
        row = name + "".join(str(counts[s]) for s in ORDER) + str(sum(counts.values()))
        for fmt, text in _texts(out).items():
            assert row in text, (fmt, row)


def test_each_vms_verdict_and_backup_figures_agree(out: dict[str, Any]) -> None:
    doc = out["json"]
    rows = {(r["namespace"], r["vm"]): r for r in out["vms"]}
    for vm in doc["vms"]:
        row = rows[(vm["namespace"], vm["name"])]
        name = f"{vm['namespace']}/{vm['name']}"
        backup = vm["backup"]
        newest = backup["newest_usable"] or {}
        within = backup["within_rpo"]
        assert row["readiness"] == vm["readiness"] and row["owner"] == vm["owner"]
        assert row["newest_usable_backup"] == newest.get("name", "")
        assert row["backup_data_time"] == (newest.get("data_time") or "")
        assert row["backup_age_hours"] == (
            "" if newest.get("age_hours") is None else str(newest["age_hours"])
        )
        assert float(row["rpo_hours"]) == backup["rpo_hours"]
        assert row["within_rpo"] == {True: "yes", False: "no", None: "unknown"}[within]
        assert int(row["restore_points"]) == backup["restore_points"]
        assert row["backup_expires"] == (newest.get("expires") or "")
        assert row["backup_expires_from"] == (newest.get("expires_from") or "")
        failing = sorted({f["check_id"] for f in vm["findings"] if f["status"] in FAILING})
        assert row["failing_checks"].split() == failing
        label = _squash(f"{name} {LABELS[vm['readiness']]}")
        assert label in out["html"], name
        if vm["readiness"] != "READY":
            assert label in out["pdf"], name
        if not newest:
            continue
        state = row["backup_state"]  # the HTML's label, as vms.csv carries it
        points = backup["restore_points"]
        kept = _squash(
            f"{points} restore point{'' if points == 1 else 's'} · newest kept until "
            f"{newest['expires']}"
        )
        line = _squash(
            f"newest usable backup {newest['name']} (as of {newest['data_time']}, "
            f"{fmt_hours(newest['age_hours'])} old; RPO {backup['rpo_hours']:.1f} h, {state})"
        )
        cell = _squash(
            f"{newest['name']} {fmt_hours(newest['age_hours'])} / "
            f"{fmt_hours(backup['rpo_hours'])} ({state})"
        )
        # HTML: every VM's details; PDF: details for VMs not ready, a table row for ready ones
        assert line in out["html"], name
        if newest["expires"]:
            assert kept in out["html"], name
        if vm["readiness"] == "READY":
            assert cell in out["pdf"], name
        else:
            assert line in out["pdf"], name
            # the PDF leaves the expiry to the HTML, vms.csv and report.json (12 pages)
            assert _squash(f"{points} restore point{'' if points == 1 else 's'}") in out["pdf"]


def test_findings_csv_holds_every_failing_finding_of_the_json(out: dict[str, Any]) -> None:
    doc = out["json"]
    want = Counter(
        (vm["namespace"], vm["name"], f["check_id"], f["status"], f["severity"])
        for vm in doc["vms"]
        for f in vm["findings"]
        if f["status"] in FAILING
    )
    want.update(
        ("", "(platform)", f["check_id"], f["status"], f["severity"])
        for f in doc["platform_findings"]
        if f["status"] in FAILING
    )
    got = Counter(
        (r["namespace"], r["vm"], r["check_id"], r["status"], r["severity"])
        for r in out["findings"]
    )
    assert got == want and sum(got.values()) == out["case"][1]
    # the summary's status counts are the VMs' findings (platform findings apart)
    for status in FAILING:
        n = sum(c for (_, vm, _, st, _), c in want.items() if vm != "(platform)" and st == status)
        assert doc["summary"]["findings_by_status"][status] == n, status
    vm_fails = sum(
        c for (_, vm, _, st, _), c in want.items() if vm != "(platform)" and st == "FAIL"
    )
    assert sum(doc["summary"]["fails_by_severity"].values()) == vm_fails


def test_root_causes_and_open_counts_agree(out: dict[str, Any]) -> None:
    doc = out["json"]
    causes: dict[str, tuple[str, str, int]] = {}
    for vm in doc["vms"]:
        for rc in vm["root_causes"]:
            title, severity, n = causes.get(rc["id"], (rc["title"], rc["severity"], 0))
            worst = min(severity, rc["severity"], key=lambda s: Severity(s).rank)
            causes[rc["id"]] = (title, worst, n + 1)
    assert {k: v[2] for k, v in causes.items()} == doc["summary"]["vms_by_root_cause"]
    # the summary's top gaps: ten root causes, worst severity seen first, then most VMs
    top = sorted(causes.items(), key=lambda kv: (Severity(kv[1][1]).rank, -kv[1][2], kv[0]))
    for _, (title, severity, n) in top[:10]:
        assert _squash(f"{title} {severity} {n}") in out["html"], title
        assert _squash(f"{title} {severity.upper()} {n}") in out["pdf"], title
    # the catalog's "Open" column: FAIL/ERROR findings of the check, VMs and platform (the
    # HTML catalog had none: a reader of report.html could not see what the PDF counted)
    open_counts = Counter(
        f["check_id"] for vm in doc["vms"] for f in vm["findings"] if f["status"] in FAILING
    )
    open_counts.update(f["check_id"] for f in doc["platform_findings"] if f["status"] in FAILING)
    for check in doc["checks"]:
        n = open_counts.get(check["id"], 0)
        row = _squash(f"{check['id']} {check['title']} {check['severity']} {n or '-'}")
        assert row in out["pdf"], check["id"]
        family = check["id"].split("-")[1]
        row = _squash(f"{check['id']} {family} {check['title']} {check['severity']} {n or '-'}")
        assert row in out["html"], check["id"]


def test_run_id_and_audit_time_agree(out: dict[str, Any]) -> None:
    run = out["json"]["run"]
    for rows in (out["vms"], out["findings"]):
        assert {(r["run_id"], r["audit_time"]) for r in rows} == {(run["id"], run["audit_time"])}
    for fmt, text in _texts(out).items():
        assert _squash(f"Run id {run['id']}") in text, fmt
        assert _squash(f"Audit time (UTC) {run['audit_time']}") in text, fmt
