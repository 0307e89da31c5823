"""The compact (large-estate) HTML: findings sharing a root cause are listed under its first
one, and no open finding is lost or shown twice (issue 15: 10,000 VMs in at most 50 MB)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from markupsafe import escape

from auditor.config import AuditSettings
from auditor.envelope.model import Status
from auditor.pipeline import audit_data
from auditor.report.html import render_html
from auditor.report.view import build_view
from auditor.sources.directory import DirectorySource
from bench.generate import AUDIT_TIME, generate


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    out = tmp_path_factory.mktemp("compact") / "export"
    generate(out, 80, seed=7)
    return audit_data(DirectorySource(out).collect(), AuditSettings(), at=AUDIT_TIME)


def _sections(page: str) -> dict[str, str]:
    found = re.findall(r'<section class="vm" id="vm-\d+">\n<h3>([^ ]+) .*?</section>', page, re.S)
    bodies = re.findall(r'<section class="vm" id="vm-\d+">.*?</section>', page, re.S)
    return dict(zip(found, bodies, strict=True))


def test_every_open_finding_is_shown_once_under_its_root_cause(report) -> None:  # type: ignore[no-untyped-def]
    page = render_html(report, view=build_view(report, html_detail_limit=0))
    assert "so each VM's section is compact" in page
    sections = _sections(page)
    assert len(sections) == len(report.vms) == 80
    grouped = 0
    for vm in report.vms:
        body = sections[f"{vm.namespace}/{vm.name}"]
        open_ = [f for f in vm.findings if f.status in (Status.FAIL, Status.ERROR, Status.WAIVED)]
        for f in open_:
            # each open finding's check id once, as a cell or a list item, with its message
            assert body.count(f'cid">{f.check_id}<') == 1, (vm.name, f.check_id)
            assert str(escape(f.message)) in body, (vm.name, f.check_id)
        for cause in vm.root_causes:
            members = [c for c in cause.check_ids[1:] if any(f.check_id == c for f in open_)]
            head = cause.check_ids[0]
            if not members or any(f.check_id == head and f.severity.value == "info" for f in open_):
                continue
            # the members are items of the list in their head's row, after the head's fix
            row = re.search(rf'<td class="mono cid">{head}<br>.*?</td></tr>', body, re.S)
            assert row is not None, (vm.name, head)
            assert "Same root cause, same fix:" in row.group(0)
            items = re.findall(r'<li><span class="mono cid">(RR-[A-Z]+-\d+)</span>', row.group(0))
            assert set(members) <= set(items), (vm.name, head, members, items)
            grouped += len(members)
    assert grouped >= 100  # the estate's UNKNOWN VMs: four findings under RR-BKP-001 each


def test_compact_html_is_smaller_and_the_detailed_one_keeps_its_rows(report) -> None:  # type: ignore[no-untyped-def]
    detailed = render_html(report, view=build_view(report, html_detail_limit=10_000))
    compact = render_html(report, view=build_view(report, html_detail_limit=0))
    assert "Same root cause, same fix" not in detailed
    assert "so each VM's section is compact" not in detailed
    # the detailed page: one findings row per open finding of every VM
    open_rows = sum(
        1
        for vm in report.vms
        for f in vm.findings
        if f.status in (Status.FAIL, Status.ERROR, Status.WAIVED)
    )
    details = detailed[detailed.index("VM details</h2>") :]
    assert len(re.findall(r'<tr class="fs-(?:FAIL|ERROR|WAIVED)">', details)) == open_rows
    assert len(compact.encode()) < 0.8 * len(detailed.encode())


def test_same_cause_groups_hold_each_problem_once(report) -> None:  # type: ignore[no-untyped-def]
    view = build_view(report, html_detail_limit=0)
    members_seen = 0
    for d in view.details:
        groups = d.same_cause_groups()
        flat = [f for head, members in groups for f in (head, *members)]
        major = [f for f in d.problems if f.severity != "info"]
        assert sorted(f.check_id for f in flat) == sorted(f.check_id for f in major)
        for head, members in groups:
            assert all(m.fix_ref == head.check_id for m in members)
            members_seen += len(members)
    assert members_seen > 0


def test_a_member_whose_head_is_not_listed_heads_its_own_group(report) -> None:  # type: ignore[no-untyped-def]
    """A finding pointing at a head shown elsewhere (an info head, on the Info line) stays
    a row of its own: nothing is dropped for want of its head."""
    from dataclasses import replace

    view = build_view(report, html_detail_limit=0)
    d = next(d for d in view.details if any(f.fix_ref.startswith("RR-") for f in d.problems))
    orphaned = tuple(
        replace(f, fix_ref="RR-ZZZ-999") if f.fix_ref.startswith("RR-") else f for f in d.problems
    )
    groups = replace(d, problems=orphaned).same_cause_groups()
    assert sum(1 + len(m) for _, m in groups) == sum(1 for f in orphaned if f.severity != "info")
    assert all(not m for _, m in groups)


def test_module_fixture_is_a_real_estate(tmp_path: Path) -> None:
    """The fixture above reads back without collection problems (a broken generator would
    make every test here vacuous)."""
    generate(tmp_path / "e", 10, seed=7)
    assert DirectorySource(tmp_path / "e").collect().problems == []
