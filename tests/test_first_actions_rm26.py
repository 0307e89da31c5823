"""First actions that fix the gap (trial rm26): no "back up now" into a broken location, no
"never backed up" for VMs whose backups exist, no TTL for a capture gap, no new cron for a
Schedule that already runs often enough, no export hint for kinds that were read.

Each test audits a copy of the shared example export with one change.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from tests.conftest import AUDIT_AT, find_corpus, report_doc

Doc = dict[str, Any]


def _items(path: Path) -> tuple[Doc, list[Doc]]:
    doc = yaml.safe_load(path.read_text())
    return doc, doc["items"]


def _audit(tmp_path: Path, edit: Callable[[Path], None]) -> Doc:
    from auditor.config import AuditSettings
    from auditor.pipeline import audit_data
    from auditor.sources.directory import DirectorySource
    from tests.answer_support import answers

    export = tmp_path / "export"
    shutil.copytree(find_corpus() / "cluster-export", export)
    edit(export)
    name = answers("cluster-export").cluster_name
    data = DirectorySource(export, cluster_name=name).collect()
    return report_doc(audit_data(data, AuditSettings(), at=AUDIT_AT))


def _edit_items(export: Path, file: str, change: Callable[[Doc], None]) -> None:
    path = export / file
    doc, items = _items(path)
    for item in items:
        change(item)
    path.write_text(yaml.safe_dump(doc))


def _vm(doc: Doc, name: str) -> Doc:
    return next(v for v in doc["vms"] if v["name"] == name)


def _cause(doc: Doc, vm: str, cause: str) -> Doc:
    return next(c for c in _vm(doc, vm)["root_causes"] if c["id"] == cause)


def _finding(doc: Doc, vm: str, check: str) -> Doc:
    return next(f for f in _vm(doc, vm)["findings"] if f["check_id"] == check)


def _finance(item: Doc) -> bool:
    return "finance-prod" in item["metadata"]["name"]


def test_unavailable_location_first_action_fixes_the_location(tmp_path: Path) -> None:
    def edit(export: Path) -> None:
        _edit_items(
            export,
            "backupstoragelocations.yaml",
            lambda i: i["status"].update(phase="Unavailable"),
        )

    doc = _audit(tmp_path, edit)
    action = _cause(doc, "web-frontend-01", "no-usable-backup")["first_action"]
    assert "never" not in action
    assert action.startswith("VM web-platform/web-frontend-01 was backed up (web-platform-nightly-")
    assert "BackupStorageLocation dpa-primary-1 is Unavailable: fix it first (RR-PLT-001" in action
    assert "`oc describe backupstoragelocation dpa-primary-1 -n openshift-adp`. Then take" in action
    assert action.index("describe backupstoragelocation") < action.index("backup create")


def test_missing_location_first_action_names_it(tmp_path: Path) -> None:
    def edit(export: Path) -> None:
        def move(i: Doc) -> None:
            if _finance(i):
                i["spec"]["storageLocation"] = "gone-bsl"

        _edit_items(export, "backups.yaml", move)

    doc = _audit(tmp_path, edit)
    action = _cause(doc, "fin-app-01", "no-usable-backup")["first_action"]
    assert "never" not in action
    assert "BackupStorageLocation gone-bsl is missing: fix it first (RR-PLT-001" in action
    assert "spec.template.storageLocation" in action


def test_schedule_excluding_vms_first_action_edits_its_filter(tmp_path: Path) -> None:
    def edit(export: Path) -> None:
        def backup(i: Doc) -> None:
            if _finance(i):
                i["spec"]["excludedResources"] = ["virtualmachines.kubevirt.io"]

        def schedule(i: Doc) -> None:
            if _finance(i):
                i["spec"]["template"]["excludedResources"] = ["virtualmachines.kubevirt.io"]

        _edit_items(export, "backups.yaml", backup)
        _edit_items(export, "schedules.yaml", schedule)

    doc = _audit(tmp_path, edit)
    action = _cause(doc, "fin-app-01", "no-usable-backup")["first_action"]
    assert "never" not in action
    assert action.startswith("Schedule finance-prod-daily's filters leave out VM finance-prod/")
    assert "`oc edit schedule finance-prod-daily -n openshift-adp`" in action
    assert "spec.template.excludedResources" in action


def test_expired_backups_are_listed_with_their_reason(tmp_path: Path) -> None:
    def edit(export: Path) -> None:
        def expire(i: Doc) -> None:
            if _finance(i):
                i["status"]["expiration"] = "2026-11-29T00:00:00Z"

        _edit_items(export, "backups.yaml", expire)

    doc = _audit(tmp_path, edit)
    bkp1 = _finding(doc, "fin-app-01", "RR-BKP-001")
    assert bkp1["status"] == "FAIL"
    rows = bkp1["evidence"]["unusable"]
    assert rows and all(r["cause"] == "expired" for r in rows)
    assert rows[0]["why"] == (
        "backup finance-prod-daily-20261130010019 expired at 2026-11-29T00:00:00Z "
        "(Velero's garbage collection removes it)"
    )
    bkp2 = _finding(doc, "fin-app-01", "RR-BKP-002")
    assert "never" not in bkp2["message"]
    assert bkp2["evidence"]["unusable"] == rows
    action = _cause(doc, "fin-app-01", "no-usable-backup")["first_action"]
    assert "never" not in action
    assert action.startswith("The backups of VM finance-prod/fin-app-01 expired (backup ")
    assert "spec.template.ttl" in action


def test_bkp005_points_at_the_capture_gap_not_the_ttl(export_doc: Doc) -> None:
    for vm, pvc in (
        ("web-shop-db", "web-shop-db-data"),
        ("web-legacy-cms", "cms-migration-vm-4117-cz8gw"),
    ):
        f = _finding(export_doc, vm, "RR-BKP-005")
        assert f["status"] == "FAIL"
        fix = f["remediation"]
        assert "ttl" not in fix.lower().replace("a longer ttl adds none", "")
        assert "0 hold all its disks (RR-BKP-004): a longer TTL adds none." in fix
        assert f"`oc label pvc {pvc}" in fix
        assert pvc in f["evidence"]["missing_pvcs"]
    assert (
        "has 7 usable backup(s) but 0 hold all its disks"
        in _finding(export_doc, "web-shop-db", "RR-BKP-005")["remediation"]
    )
    # the capture gap is web-shop-db's one root cause for it: no separate TTL action
    causes = {c["id"]: c for c in _vm(export_doc, "web-shop-db")["root_causes"]}
    assert "rr-bkp-005" not in causes
    assert "RR-BKP-005" in causes["disks-outside-backup"]["check_ids"]


def _shift(value: str, hours: int) -> str:
    t = datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ") - timedelta(hours=hours)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_stale_backups_of_a_daily_schedule_are_not_a_cron_change(tmp_path: Path) -> None:
    def edit(export: Path) -> None:
        def backup(i: Doc) -> None:
            meta, status = i["metadata"], i.get("status", {})
            meta["creationTimestamp"] = _shift(meta["creationTimestamp"], 72)
            for key in ("startTimestamp", "completionTimestamp", "expiration"):
                if key in status:
                    status[key] = _shift(status[key], 72)

        def schedule(i: Doc) -> None:
            if "lastBackup" in i.get("status", {}):
                i["status"]["lastBackup"] = _shift(i["status"]["lastBackup"], 72)

        _edit_items(export, "backups.yaml", backup)
        _edit_items(export, "schedules.yaml", schedule)

    doc = _audit(tmp_path, edit)
    action = _cause(doc, "web-frontend-01", "stale-backups")["first_action"]
    assert "oc patch schedule" not in action and "0 1 * * *" not in action
    assert action.startswith(
        "Schedule web-platform-nightly (cron '30 2 * * *') runs often enough for the RPO "
        "(24 h), but its backups of VM web-platform/web-frontend-01 have not been completing."
    )
    assert "`velero schedule describe web-platform-nightly -n openshift-adp`" in action
    assert (
        "`velero backup get -l velero.io/schedule-name=web-platform-nightly -n openshift-adp`"
        in action
    )


def test_cron_max_gap_hours() -> None:
    from auditor.envelope.fixes import cron_max_gap_hours

    assert cron_max_gap_hours("30 2 * * *") == 24
    assert cron_max_gap_hours("0 */6 * * *") == 6
    assert cron_max_gap_hours("0 3 * * 0") == 168
    assert cron_max_gap_hours("CRON_TZ=UTC 0 1 * * 1-5") == 72
    assert cron_max_gap_hours("@every 12h") == 12
    assert cron_max_gap_hours("@daily") == 24
    assert cron_max_gap_hours("0 1 1 * *") == 744
    assert cron_max_gap_hours("not a cron") is None
    assert cron_max_gap_hours(None) is None


def test_stale_backups_of_a_weekly_schedule_still_get_a_cron() -> None:
    from auditor.envelope.fixes import FAIL_FIXES
    from auditor.envelope.fixfacts import FixFacts

    facts = FixFacts(
        "ns",
        "vm1",
        None,
        None,
        None,
        (("openshift-adp", "weekly", ()),),
        "openshift-adp",
        None,
        (),
        24.0,
        30.0,
        True,
    )
    ev = {
        "backup": "openshift-adp/weekly-1",
        "schedules": [{"schedule": "openshift-adp/weekly", "paused": False, "cron": "0 3 * * 0"}],
    }
    text = FAIL_FIXES["RR-BKP-002"](facts, ev)
    assert "oc patch schedule weekly -n openshift-adp" in text and '"0 1 * * *"' in text


def _csi_two_of_eight(export: Path) -> None:
    def fewer(i: Doc) -> None:
        if _finance(i):
            i["status"]["csiVolumeSnapshotsCompleted"] = 2

    _edit_items(export, "backups.yaml", fewer)


def test_unknown_capture_with_every_kind_read_says_describe_the_backup(tmp_path: Path) -> None:
    doc = _audit(tmp_path, _csi_two_of_eight)
    cause = _cause(doc, "fin-app-01", "unknown-input")
    action = cause["first_action"]
    assert "export" not in action
    assert action == (
        "Nothing read shows whether PVC(s) fin-app-01 of VM finance-prod/fin-app-01 were "
        "captured (DataUploads, PodVolumeBackups and VolumeSnapshotContents were read). See "
        "which volumes failed: `velero backup describe finance-prod-daily-20261130010019 "
        "--details -n openshift-adp`."
    )
    # RR-BKP-005's not_evidenced are Backups: they are not called PVCs
    fix = _finding(doc, "fin-app-01", "RR-BKP-005")["remediation"]
    assert "PVC(s) finance-prod-daily" not in fix
    assert "the disks of VM finance-prod/fin-app-01 were captured in backup(s) " in fix


def test_unknown_capture_exports_only_the_kinds_not_read(tmp_path: Path) -> None:
    def edit(export: Path) -> None:
        _csi_two_of_eight(export)
        (export / "datauploads.yaml").unlink()

    doc = _audit(tmp_path, edit)
    fix = _finding(doc, "fin-app-01", "RR-BKP-001")["remediation"]
    assert fix.startswith(
        "Nothing shows whether PVC(s) fin-app-01 of VM finance-prod/fin-app-01 were captured: "
        "export DataUploads (`oc get datauploads.velero.io -n openshift-adp -o yaml`)"
    )
    assert "PodVolumeBackups" not in fix and "volumesnapshotcontents" not in fix
