"""The view model: grouping, ordering and formatting the templates print."""

from __future__ import annotations

from auditor.envelope import AuditReport
from auditor.models import Readiness
from auditor.report.formatting import fmt_evidence, fmt_hours, fmt_value
from auditor.report.view import build_view
from tests.reports_support import envelope, sample_doc, sample_report, synthetic_report


def test_readiness_bars_follow_summary_worst_first() -> None:
    view = build_view(sample_report())
    assert [(b.state, b.count, b.percent) for b in view.bars] == [
        ("NOT_READY", 2, "33.3"),
        ("AT_RISK", 1, "16.7"),
        ("UNKNOWN", 1, "16.7"),
        ("READY", 2, "33.3"),
    ]
    assert view.bars[0].width == 360.0 and view.bars[1].width == 180.0


def test_groups_sorted_worst_first_then_name() -> None:
    view = build_view(sample_report())
    assert [(o.name, o.counts, o.total) for o in view.owners] == [
        ("team-finance", (1, 1, 0, 1), 3),
        ("unassigned", (1, 0, 0, 1), 2),
        ("team-hr", (0, 0, 1, 0), 1),
    ]
    assert [n.name for n in view.namespaces] == ["finance-prod", "lab", "hr-prod"]


def test_top_gaps_by_worst_failed_severity_then_count() -> None:
    gaps = build_view(sample_report()).gaps
    assert [(g.check_id, g.severity, g.count) for g in gaps] == [
        ("RR-BKP-001", "high", 2),
        ("RR-FW-001", "high", 2),
        ("RR-BKP-003", "medium", 2),
        ("RR-NIC-001", "medium", 1),
        ("RR-RST-001", "medium", 1),
        ("RR-STO-001", "info", 2),
    ]
    assert gaps[0].title == "Every VM has a usable backup newer than the RPO"


def test_vm_row_presents_backup_rpo_and_identity_gaps() -> None:
    rows = {r.name: r for r in build_view(sample_report()).rows}
    ready = rows["fin-app-01"]
    assert (ready.newest_backup, ready.backup_age, ready.rpo, ready.rpo_state) == (
        "nightly-2",
        "4.8 h",
        "24.0 h",
        "within",
    )
    assert ready.restore_points == "7" and ready.identity_gaps == ()
    bad = rows["fin-db-01"]
    # no usable backup ever held it (RR-BKP-001 FAIL): said plainly, not "- / 24.0 h (unknown)"
    assert (bad.newest_backup, bad.rpo_label, bad.restore_points) == (
        "never backed up",
        "never backed up",
        "0",
    )
    assert bad.backup_gap == "never" and bad.why
    assert bad.identity_gaps == ("RR-FW-001",)
    assert rows["fin-web-01"].identity_gaps == ("RR-NIC-001",)


def test_vm_findings_problems_first_and_waiver_shown() -> None:
    view = build_view(sample_report())
    detail = next(d for d in view.details if d.row.name == "fin-db-01")
    assert [f.status for f in detail.findings[:3]] == ["FAIL", "FAIL", "FAIL"]
    assert [f.check_id for f in detail.problems] == ["RR-BKP-001", "RR-FW-001", "RR-BKP-003"]
    waived = next(d for d in view.details if d.row.name == "fin-app-01")
    assert [(w.vm, w.check_id) for w in view.waived] == [("finance-prod/fin-app-01", "RR-FW-001")]
    assert ("reason", "UUID set at restore") in waived.problems[1].waiver


def test_recovery_card_says_where_values_came_from() -> None:
    detail = next(d for d in build_view(sample_report()).details if d.row.name == "fin-db-01")
    firmware = dict(detail.card.firmware)
    assert firmware["Bootloader"] == "efi (from preference)"
    assert firmware["Machine type"] == "pc-q35-rhel9.4.0"
    assert detail.card.disks[0].bus == "virtio (from preference)"
    assert detail.card.disks[0].pvc.startswith("fin-db-01-root: 40Gi, class ocs-rbd, Block")
    assert detail.card.nics[1].network == "multus finance-prod/storage-net"
    assert dict(detail.card.facts)["Preference"] == (
        "windows.11.virtio (VirtualMachineClusterPreference)"
    )


def test_pdf_plan_small_estate_is_detailed_grouped_by_owner() -> None:
    plan = build_view(sample_report()).pdf
    assert plan.detailed and plan.omitted == 0 and plan.ready_count == 2
    assert [(g.owner, [r.name for r in g.rows]) for g in plan.groups] == [
        ("team-finance", ["fin-db-01", "fin-web-01"]),
        ("team-hr", ["hr-db-01"]),
        ("unassigned", ["lab-01"]),
    ]


def test_pdf_plan_large_estate_is_compact_worst_first_and_capped() -> None:
    report = synthetic_report(400)
    plan = build_view(report, pdf_detail_limit=300, pdf_row_cap=50).pdf
    assert not plan.detailed and plan.ready_rows == ()
    rows = [r for g in plan.groups for r in g.rows]
    not_ready = report.summary.readiness[Readiness.NOT_READY]
    assert len(rows) == 50 and all(r.readiness == "NOT_READY" for r in rows)
    assert plan.omitted == 400 - report.summary.readiness[Readiness.READY] - 50
    assert not_ready > 50


def test_trend_tolerates_missing_and_odd_keys() -> None:
    view = build_view(
        sample_report(),
        trend={"series": [{"readiness": "bad"}, 7], "vs_previous": {"gaps_fixed": [None]}},
    )
    assert view.trend is not None
    assert [(r.label, r.counts) for r in view.trend.runs] == [("-", (0, 0, 0, 0))]
    assert view.trend.fixed == () and view.trend.newly_not_ready == ()
    full = build_view(
        sample_report(),
        trend={
            "series": [
                {"run_id": "r1", "readiness": {"READY": 1, "NOT_READY": 3}},
                {"audit_time": "2026-11-30T06:00:00Z", "readiness": {"READY": 4}},
            ],
            "vs_previous": {
                "became_not_ready": [{"namespace": "a", "name": "b", "was": "READY"}, "c/d"],
                "gaps_fixed": [{"namespace": "a", "name": "e", "check_id": "RR-BKP-001"}],
            },
            "month_ago": {"audit_time": "2026-10-30T06:00:00Z"},
            "vs_month_ago": {"became_not_ready": [], "gaps_fixed": [{"name": "x"}, {"name": "y"}]},
        },
    ).trend
    assert full is not None
    assert [(r.label, r.total) for r in full.runs] == [("r1", 4), ("2026-11-30T06:00:00Z", 4)]
    assert full.runs[0].bars[0] == (20.0, 60.0, "#c62828")
    assert full.newly_not_ready == ("a/b READY", "c/d") and full.fixed == ("a/e RR-BKP-001",)
    assert full.month_ago == "2026-10-30T06:00:00Z" and full.month_fixed == 2
    assert build_view(sample_report()).trend is None


def test_empty_report_renders_as_empty_estate() -> None:
    view = build_view(AuditReport.model_validate(envelope([], cluster=None, complete=False)))
    assert view.total_vms == 0 and view.rows == () and view.cover.cluster == "unnamed cluster"
    assert not view.cover.complete


def test_formatting_helpers() -> None:
    assert (fmt_hours(None), fmt_hours(4.75), fmt_hours(200)) == ("-", "4.8 h", "8.3 d")
    assert fmt_value([1, "a"]) == "1, a" and fmt_value(True) == "yes" and fmt_value([]) == "(none)"
    # maps and lists of maps read as "key: value", never as JSON or Python structures
    assert fmt_value({"b": 1, "a": [2]}) == "b: 1; a: 2"
    assert fmt_value([{"x": 1}, {"x": 2, "age_hours": 50}]) == "x: 1; x: 2, age: 2.1 d"
    assert fmt_value({}) == "(none)"
    assert fmt_evidence({"z": 1, "a": "x" * 600}, limit=20) == "a=" + "x" * 17 + "…"


def test_waiver_appendix_rows() -> None:
    (row,) = build_view(sample_report()).waivers
    assert (row.waiver_id, row.check_id, row.state, row.days_left) == (
        "W-7",
        "RR-FW-001",
        "active",
        "62",
    )
    assert row.selector == "name fin-app-*; namespace finance-*"
    doc = sample_doc()
    doc["waivers"][0]["selector"] = {"namespace": "", "name": "", "labels": {"b": "2", "a": "1"}}
    labelled = build_view(AuditReport.model_validate(doc))
    assert labelled.waivers[0].selector == "labels a=1,b=2"


def test_an_expired_waiver_says_how_long_ago() -> None:
    """ux19: an expired waiver read "expired (-29 days left)"."""
    from auditor.report.html import render_html

    doc = sample_doc()
    waiver = doc["waivers"][0]
    texts = []
    for state, days in (("expired", -29), ("expired", -1), ("expired", 0), ("active", 1)):
        waiver.update(state=state, days_left=days)
        texts.append(build_view(AuditReport.model_validate(doc)).waivers[0].state_text)
    assert texts == [
        "expired 29 days ago",
        "expired 1 day ago",
        "expired within a day",
        "active (1 day left)",
    ]
    waiver.update(state="expired", days_left=-29)
    html = render_html(AuditReport.model_validate(doc))
    assert "<td>expired 29 days ago</td>" in html and "days left" not in html


def test_long_evidence_values_are_cut_and_say_so() -> None:
    from auditor.report.formatting import evidence_pairs

    ((key, text),) = evidence_pairs({"vms": [f"ns/vm-{i:04d}" for i in range(2000)]}, limit=50)
    assert key == "vms" and text.startswith("ns/vm-0000, ns/vm-0001")
    assert text.endswith("… (23948 more characters in report.json)")
