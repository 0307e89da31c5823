"""The newest backup's age counts from one instant everywhere: its start, the data's time.

Velero's ``status.startTimestamp`` "records the time a backup was started"
(pkg/apis/velero/v1/backup_types.go); the objects and the CSI snapshots are read while the
backup runs, after it ("How Velero Works": the backup is not strictly atomic), so the data is
no older than the start and the RPO counts from there, the conservative instant.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from tests.conftest import REPO, invoke_run


def test_report_card_csv_and_html_give_one_age_from_one_instant(tmp_path: Path) -> None:
    """ux19: billing-db's newest backup started 01:00 and completed 01:12; the report said
    5.0 h beside the completion time and the recovery card 4.8 h (from completion)."""
    out = tmp_path / "out"
    result = invoke_run(REPO / "examples" / "small-cluster", out, "--format", "json,html,csv,cards")
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    vm = next(v for v in report["vms"] if v["name"] == "billing-db")
    newest = vm["backup"]["newest_usable"]
    assert (newest["name"], newest["completed"]) == (
        "billing-daily-20261130",
        "2026-11-30T01:12:00Z",
    )
    assert (newest["data_time"], newest["age_hours"]) == ("2026-11-30T01:00:00Z", 5.0)
    card = json.loads((out / "recovery-cards" / "billing" / "billing-db.json").read_text())
    for c in (card, vm["recovery_card"]):
        copies = {d["name"]: d["newest_copy"] for d in c["disks"] if d["newest_copy"]}
        assert {k: (v["name"], v["time"], v["age_hours"]) for k, v in copies.items()} == {
            "root": ("billing-daily-20261130", "2026-11-30T01:00:00Z", 5.0),
            "data": ("billing-daily-20261130", "2026-11-30T01:00:00Z", 5.0),
        }
    html = (out / "report.html").read_text()
    assert "billing-daily-20261130 (as of 2026-11-30T01:00:00Z, 5.0 h old;" in html
    assert "Backup billing-daily-20261130 as of 2026-11-30T01:00:00Z (5.0 h old," in html
    assert "4.8 h" not in html
    rows = csv.DictReader(io.StringIO((out / "vms.csv").read_text()))
    row = next(r for r in rows if r["vm"] == "billing-db")
    assert (row["backup_data_time"], row["backup_age_hours"]) == ("2026-11-30T01:00:00Z", "5.0")
