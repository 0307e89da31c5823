"""Faults the m42 mutation sweeps found (docs/readiness.md, "Round m42").

Each case edits one field of a check fixture (tests/fixtures/checks), as the sweep did, and
asserts the problem named (file, kind, object, field), the findings that rest on it and the
VM's readiness, never better than before.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.mutations import RANK, worst_rank
from tests.test_check_fixtures import FIXTURES, audit_fixture

#: vm1's VMI opts its Block disks in to file-system backup (backup.velero.io/backup-volumes),
#: which never copies a Block volume: RR-BKP-004 and RR-STG-001 FAIL high, NOT_READY
FS_OPT_IN = "RR-BKP-004/fail-fs-backup-opt-in-skips-block-disks.yaml"


def _edit(tmp_path: Path, fixture: str, old: str, new: str, after: str = "") -> Path:
    """The fixture with the first ``old`` after the first ``after`` replaced by ``new``."""
    text = (FIXTURES / fixture).read_text()
    start = text.index(after) if after else 0
    at = text.index(old, start)
    path = tmp_path / "export.yaml"
    path.write_text(text[:at] + new + text[at + len(old) :])
    return path


def _vm(doc: dict[str, Any]) -> dict[str, Any]:
    return next(v for v in doc["vms"] if (v["namespace"], v["name"]) == ("app", "vm1"))


def _status(doc: dict[str, Any], check: str) -> tuple[str, str]:
    f = next(f for f in _vm(doc)["findings"] if f["check_id"] == check)
    return f["status"], f["severity"]


def _named(doc: dict[str, Any], kind: str) -> list[tuple[str, str | None, str | None, str | None]]:
    return [
        (p["file"].split("#", 1)[0], p["namespace"], p["name"], p["field"])
        for p in doc["collection_problems"]
        if p["kind"] == kind
    ]


# -- 1. a VMI that is not read leaves its pod's file-system backup opt-in unknown -----------


def test_unread_vmi_leaves_the_fs_opt_in_unknown(tmp_path: Path) -> None:
    """Seed 4201: the VMI's ``metadata.namespace`` set to ``""`` is named and the VMI read in
    namespace ``default`` (as kubectl would apply it), so VM app/vm1 had no VMI: its Block
    disks, opted in to file-system backup only by the VMI's annotation, counted as
    snapshotted (RR-BKP-004, RR-STG-001 FAIL -> PASS; NOT_READY -> UNKNOWN of medium ERRORs
    alone). The unread VMI may carry the opt-in: the capture is unknown, ERROR high."""
    before = audit_fixture(FIXTURES / FS_OPT_IN)
    assert _vm(before)["readiness"] == "NOT_READY"
    assert _status(before, "RR-BKP-004") == ("FAIL", "high")
    path = _edit(
        tmp_path,
        FS_OPT_IN,
        "  namespace: app\n",
        "  namespace: ''\n",
        after="kind: VirtualMachineInstance",
    )
    doc = audit_fixture(path)
    assert ("export.yaml", None, "vm1", "metadata.namespace") in _named(
        doc, "VirtualMachineInstance"
    )
    for check in ("RR-BKP-001", "RR-BKP-004", "RR-STG-001"):
        assert _status(doc, check) == ("ERROR", "high"), check
    finding = next(f for f in _vm(doc)["findings"] if f["check_id"] == "RR-BKP-004")
    assert "its VMI was not read" in finding["message"]
    assert _vm(doc)["readiness"] == "UNKNOWN"
    assert doc["run"]["complete"] is False
    verdicts = {f["check_id"]: f"{f['status']} {f['severity']}" for f in _vm(doc)["findings"]}
    assert worst_rank("UNKNOWN", verdicts) == RANK["NOT_READY"]  # no better than before
