"""Malformed fields left unnamed by fz36, named by fz38 (see docs/readiness.md, fz38).

Each case edits one field of the bundled example (examples/small-cluster), so it runs
without ../shared, and asserts that the field is named (file, object, field) and that no
VM's verdict improves.
"""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from auditor.config import AuditSettings
from auditor.pipeline import audit_data
from auditor.sources.directory import DirectorySource
from tests.conftest import REPO, report_doc

AT = datetime(2026, 11, 30, 6, tzinfo=UTC)
EXAMPLE = REPO / "examples" / "small-cluster"
_RANK = {"READY": 0, "AT_RISK": 1, "UNKNOWN": 2, "NOT_READY": 3}


def _audit(root: Path) -> dict[str, Any]:
    return report_doc(audit_data(DirectorySource(root).collect(), AuditSettings(), at=AT))


def _edited(tmp_path: Path, file: str, old: str, new: str) -> Path:
    out = tmp_path / "export"
    shutil.copytree(EXAMPLE, out)
    path = out / file
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    return out


def _findings(doc: dict[str, Any], ref: str) -> dict[str, str]:
    vm = next(v for v in doc["vms"] if f"{v['namespace']}/{v['name']}" == ref)
    return {f["check_id"]: f["status"] for f in vm["findings"]}


def _readiness(doc: dict[str, Any]) -> dict[str, str]:
    return {f"{v['namespace']}/{v['name']}": v["readiness"] for v in doc["vms"]}


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        # a blank around a mapping key: Velero applies it as written (no namespace " billing")
        (
            "      billing: billing-drill",
            "      'billing ': billing-drill",
            "spec.namespaceMapping",
        ),
        (
            "      billing: billing-drill",
            "      billing: 'billing-drill '",
            "spec.namespaceMapping",
        ),
        # a look-alike hyphen (U+2010) in the target, and a Cyrillic a in the include list
        (
            "      billing: billing-drill",
            "      billing: billing\u2010drill",
            "spec.namespaceMapping",
        ),
        ("    - billing\n", "    - biлling\n", "spec.includedNamespaces[0]"),
        ("    - billing\n", "    - 'billing '\n", "spec.includedNamespaces[0]"),
    ],
)
def test_a_restore_namespace_that_is_no_namespace_name_is_named_and_the_drill_unknown(
    tmp_path: Path, old: str, new: str, field: str
) -> None:
    base = _audit(EXAMPLE)
    assert _findings(base, "billing/billing-db")["RR-RST-001"] == "PASS"
    doc = _audit(_edited(tmp_path, "restores.yaml", old, new))
    named = [p for p in doc["collection_problems"] if p["name"] == "drill-billing-db-20261128"]
    assert named, doc["collection_problems"]
    assert named[0]["kind"] == "Restore"
    assert named[0]["file"].startswith("restores.yaml")
    assert named[0]["field"].startswith(field)
    # the drill of billing-db proves nothing now: ERROR, never PASS
    assert _findings(doc, "billing/billing-db")["RR-RST-001"] == "ERROR"
    before, after = _readiness(base), _readiness(doc)
    assert all(_RANK[after[vm]] >= _RANK[before[vm]] for vm in before)
    assert doc["run"]["complete"] is False


def test_valid_restore_namespaces_and_globs_are_not_named(tmp_path: Path) -> None:
    doc = _audit(_edited(tmp_path, "restores.yaml", "    - billing\n", "    - 'bill*'\n"))
    assert not [p for p in doc["collection_problems"] if p["kind"] == "Restore"]


_MOVER = REPO / "tests" / "fixtures" / "checks" / "RR-BKP-007" / "pass-data-mover.yaml"


@pytest.mark.parametrize("kind", ["DataUpload", "PodVolumeBackup"])
def test_a_velero_phase_written_null_is_named_and_the_item_unread(
    tmp_path: Path, kind: str
) -> None:
    """``status.phase: null``: Velero writes its phases as strings with omitempty, never
    null; read as "not yet started", a data-mover item dropped out of its Backup unnamed."""
    text = _MOVER.read_text()
    old = "  sourcePVC: vm1-root\nstatus:\n  phase: Completed\n"
    assert old in text
    base_dir, bad_dir = tmp_path / "base", tmp_path / "bad"
    base_dir.mkdir()
    bad_dir.mkdir()
    if kind == "PodVolumeBackup":
        # the same item as a PodVolumeBackup of the same Backup
        text = text.replace(
            "apiVersion: velero.io/v2alpha1\nkind: DataUpload\nmetadata:\n  labels:\n"
            "    velero.io/backup-name: daily-20261130\n  name: daily-20261130-vm1-root\n",
            "apiVersion: velero.io/v1\nkind: PodVolumeBackup\nmetadata:\n  labels:\n"
            "    velero.io/backup-name: daily-20261130\n  name: daily-20261130-vm1-root\n",
            1,
        ).replace(
            old,
            "  volume: root\n  pod:\n    name: virt-launcher-vm1\n"
            "    namespace: app\nstatus:\n  phase: Completed\n",
            1,
        )
        old = "    namespace: app\nstatus:\n  phase: Completed\n"
        assert old in text
    (base_dir / "all.yaml").write_text(text)
    (bad_dir / "all.yaml").write_text(text.replace(old, old.replace("Completed", "null"), 1))
    base, doc = _audit(base_dir), _audit(bad_dir)
    named = [p for p in doc["collection_problems"] if p["name"] == "daily-20261130-vm1-root"]
    assert [(p["kind"], p["field"]) for p in named] == [(kind, "status.phase")]
    assert named[0]["file"].startswith("all.yaml")
    assert not [p for p in base["collection_problems"] if p["name"] == "daily-20261130-vm1-root"]
    before, after = _readiness(base), _readiness(doc)
    assert all(_RANK[after[vm]] >= _RANK[before[vm]] for vm in before)
    assert doc["run"]["complete"] is False


@pytest.mark.parametrize(
    ("file", "old", "new", "field", "name"),
    [
        (
            "backups.yaml",
            "    csiVolumeSnapshotsCompleted: 5\n",
            "    csiVolumeSnapshotsCompleted: null\n",
            "status.csiVolumeSnapshotsCompleted",
            None,
        ),
        (
            "restores.yaml",
            "    includedNamespaces:\n    - billing\n",
            "    includedNamespaces: null\n",
            "spec.includedNamespaces",
            "drill-billing-db-20261128",
        ),
    ],
)
def test_a_velero_field_written_null_is_named(
    tmp_path: Path, file: str, old: str, new: str, field: str, name: str | None
) -> None:
    """A Go int (a Backup's counter) or a filter list written null: Velero and the API
    server never store one; read as "no count" or "no filter", findings changed unnamed."""
    base = _audit(EXAMPLE)
    doc = _audit(_edited(tmp_path, file, old, new))
    named = [p for p in doc["collection_problems"] if p["field"] == field]
    assert named, doc["collection_problems"]
    assert named[0]["file"].startswith(file)
    if name is not None:
        assert named[0]["name"] == name
    before, after = _readiness(base), _readiness(doc)
    assert all(_RANK[after[vm]] >= _RANK[before[vm]] for vm in before)
    assert doc["run"]["complete"] is False


_PLUGIN = (
    REPO / "tests" / "fixtures" / "checks" / "RR-NET-001" / "pass-binding-plugin-nad-exists.yaml"
)


@pytest.mark.parametrize("blank", ['""', "' '"])
def test_an_empty_interface_binding_name_is_named_and_not_passed(
    tmp_path: Path, blank: str
) -> None:
    """An interface's ``binding.name: ""`` names no plugin: virt-controller fails the VMI
    ("couldn't find configuration for network binding"); read as a plugin it changed
    RR-NET-001 with nothing named."""
    text = _PLUGIN.read_text()
    old = "          - binding:\n              name: passt\n"
    assert old in text
    base_dir, bad_dir = tmp_path / "base", tmp_path / "bad"
    base_dir.mkdir()
    bad_dir.mkdir()
    (base_dir / "all.yaml").write_text(text)
    (bad_dir / "all.yaml").write_text(text.replace(old, old.replace("passt", blank), 1))
    base, doc = _audit(base_dir), _audit(bad_dir)
    assert _findings(base, "app/vm1")["RR-NET-001"] == "PASS"
    named = [p for p in doc["collection_problems"] if (p["field"] or "").endswith(".binding.name")]
    assert named, doc["collection_problems"]
    assert (named[0]["kind"], named[0]["name"]) == ("VirtualMachine", "vm1")
    assert named[0]["file"].startswith("all.yaml")
    assert _findings(doc, "app/vm1")["RR-NET-001"] != "PASS"
    before, after = _readiness(base), _readiness(doc)
    assert all(_RANK[after[vm]] >= _RANK[before[vm]] for vm in before)


_SCHEDULE = (
    REPO
    / "tests"
    / "fixtures"
    / "checks"
    / "RR-BKP-013"
    / "fail-schedule-snapshot-volumes-off.yaml"
)


@pytest.mark.parametrize("value", ["'yes'", "1", "'false'"])
def test_an_unread_schedule_gives_no_next_backup_to_pass_on(tmp_path: Path, value: str) -> None:
    """A Schedule counted as unread (its template's snapshotVolumes no boolean) was still
    parsed and its next Backup judged: RR-BKP-013 FAIL -> PASS (bench.mutations wrong_type,
    seed 8020). Now its next Backup is unknown: ERROR."""
    text = _SCHEDULE.read_text()
    at = text.index("kind: Schedule")
    old = "    snapshotVolumes: false\n"
    cut = text.index(old, at)
    base_dir, bad_dir = tmp_path / "base", tmp_path / "bad"
    base_dir.mkdir()
    bad_dir.mkdir()
    (base_dir / "all.yaml").write_text(text)
    (bad_dir / "all.yaml").write_text(
        text[:cut] + f"    snapshotVolumes: {value}\n" + text[cut + len(old) :]
    )
    base, doc = _audit(base_dir), _audit(bad_dir)
    assert _findings(base, "app/vm1")["RR-BKP-013"] == "FAIL"
    assert _findings(doc, "app/vm1")["RR-BKP-013"] == "ERROR"
    named = [p for p in doc["collection_problems"] if p["kind"] == "Schedule"]
    assert named[0]["field"] == "spec.template.snapshotVolumes"
    before, after = _readiness(base), _readiness(doc)
    assert all(_RANK[after[vm]] >= _RANK[before[vm]] for vm in before)


@pytest.mark.parametrize(
    "new",
    ["        ' app': billing-db\n", "        app: 'billing-db '\n", "        aрp: billing-db\n"],
)
def test_a_selector_label_with_a_blank_or_look_alike_is_named(tmp_path: Path, new: str) -> None:
    """A matchLabels key or value with a blank or a look-alike letter: LabelSelectorAsSelector
    refuses it, so Velero selected nothing by it; read as written it matched no VM, unnamed
    (bench.mutations key_blank, seed 8033)."""
    base = _audit(EXAMPLE)
    doc = _audit(_edited(tmp_path, "restores.yaml", "        app: billing-db\n", new))
    named = [p for p in doc["collection_problems"] if p["name"] == "drill-billing-db-20261128"]
    assert named, doc["collection_problems"]
    assert "matchLabels" in named[0]["reason"]
    assert _findings(doc, "billing/billing-db")["RR-RST-001"] != "PASS"
    before, after = _readiness(base), _readiness(doc)
    assert all(_RANK[after[vm]] >= _RANK[before[vm]] for vm in before)
