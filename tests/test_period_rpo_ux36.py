"""The period report states the RPO, in hours, that each VM's attainment was measured against
(trial ux36: a compliance reader saw "RPO attainment 80 %" and nowhere which RPO).

``rpo.hours`` in period.json, ``rpo_hours`` in period.csv and "RPO 24 h" under the
attainment in period.html (and so the PDF); two values when the policy changed within the
month, ``unknown`` when no audit recorded one (a malformed value is never taken as one).
"""

from __future__ import annotations

import csv
import io
from typing import Any

from auditor.period import Archive, Period, compute_period
from auditor.period.render import period_csv, period_html


def _vm(name: str, within: bool | None, rpo: Any) -> dict[str, Any]:
    return {
        "namespace": "apps",
        "name": name,
        "owner": "team-a",
        "readiness": "READY" if within else "AT_RISK",
        "backup": {"within_rpo": within, "rpo_hours": rpo},
        "findings": [],
    }


def _report(day: int, vms: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "run": {"id": f"run-{day}", "audit_time": f"2026-11-{day:02d}T06:00:00Z", "complete": True},
        "vms": vms,
    }


def _doc() -> dict[str, Any]:
    archive = Archive(
        reports=[
            _report(1, [_vm("db", True, 24.0), _vm("web", True, 12), _vm("odd", None, "24")]),
            _report(
                2, [_vm("db", False, 24.0), _vm("web", True, 4.5), _vm("odd", None, float("inf"))]
            ),
        ]
    )
    return compute_period(archive, Period(2026, 11), "c1")


def test_rpo_hours_per_vm_in_json_csv_and_html() -> None:
    doc = _doc()
    by_name = {v["name"]: v["rpo"] for v in doc["vms"]}
    assert by_name["db"]["hours"] == [24.0] and by_name["db"]["attainment"] == 0.5
    assert by_name["web"]["hours"] == [4.5, 12.0]  # the policy changed within the month
    assert by_name["odd"]["hours"] == []  # "24" (text) and infinity are no number of hours
    rows = {r["name"]: r for r in csv.DictReader(io.StringIO(period_csv(doc)))}
    assert {n: r["rpo_hours"] for n, r in rows.items()} == {
        "db": "24",
        "web": "4.5 12",
        "odd": "unknown",
    }
    page = period_html(doc)
    assert '50.0 %<br><span class="note">RPO 24 h</span>' in page
    assert '<span class="note">RPO 4.5 h, 12 h</span>' in page
    assert '<span class="note">RPO unknown</span>' in page
