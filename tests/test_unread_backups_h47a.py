"""Round h47a: RR-BKP-012 and RR-NET-002 with Backups partly unread (docs/readiness.md,
"Round h47a").

RR-BKP-012 judges the newest usable Backup, RR-NET-002 every usable Backup; neither was in
``engine.JUDGES_NEWEST``, so with a Backup that could cover the VM unread (one entry of the
Backup list malformed) their PASS rested on the Backups that were read. Each case adds to a
check's PASS fixture a newer Backup of the VM's namespace whose ``spec.excludedResources``
is a string (velero ``BackupSpec.ExcludedResources []string``): named, unread.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from auditor import engine
from tests.test_check_fixtures import FIXTURES, audit_fixture

#: a newer Backup of ``app`` (before the audit's 06:00) whose resource filter is no list:
#: the index names ``spec.excludedResources`` and counts it unread for ``app``
UNREAD = """---
apiVersion: velero.io/v1
kind: Backup
metadata:
  creationTimestamp: '2026-11-30T03:00:00Z'
  name: manual-20261130
  namespace: velero
  uid: uid-b-manual-20261130
spec:
  includedNamespaces:
  - {namespace}
  excludedResources: secrets
  storageLocation: default
status:
  completionTimestamp: '2026-11-30T03:15:00Z'
  phase: Completed
  startTimestamp: '2026-11-30T03:00:00Z'
"""

PASSES = {
    "RR-BKP-012": "RR-BKP-012/pass-secret-in-scope.yaml",
    "RR-NET-002": "RR-NET-002/pass.yaml",
}


def _audit(tmp_path: Path, fixture: str, extra: str = "") -> dict[str, Any]:
    path = tmp_path / "export.yaml"
    path.write_text((FIXTURES / fixture).read_text() + "\n" + extra)
    return audit_fixture(path)


def _finding(doc: dict[str, Any], check: str) -> dict[str, Any]:
    vm = next(v for v in doc["vms"] if (v["namespace"], v["name"]) == ("app", "vm1"))
    return next(f for f in vm["findings"] if f["check_id"] == check)


def _named(doc: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(p["kind"], p["name"], p["field"]) for p in doc["collection_problems"]]


@pytest.mark.parametrize("check", sorted(PASSES))
def test_a_pass_with_a_backup_of_the_namespace_unread_is_an_error_naming_it(
    check: str, tmp_path: Path
) -> None:
    """The unread Backup may be a newer usable one (RR-BKP-012) or one more usable one
    (RR-NET-002) that leaves the object out: ERROR at the check's worst severity (high, round
    h46), naming the unread Backup, with the PASS it gave without it."""
    doc = _audit(tmp_path, PASSES[check], UNREAD.format(namespace="app"))
    assert ("Backup", "manual-20261130", "spec.excludedResources") in _named(doc)
    f = _finding(doc, check)
    assert (f["status"], f["severity"]) == ("ERROR", "high"), f["message"]
    assert "Backup velero/manual-20261130" in f["message"]
    assert f["evidence"]["unread_objects"] == ["Backup velero/manual-20261130"]
    assert f["evidence"]["incomplete_kinds"] == ["Backup"]
    assert f["evidence"]["would_be"]["status"] == "PASS"


@pytest.mark.parametrize("check", sorted(PASSES))
def test_before_the_fix_the_same_export_passed(
    check: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the check in the engine's sets (as before this round) the same export gives
    PASS: the test above fails without the fix."""
    monkeypatch.setattr(engine, "JUDGES_NEWEST", engine.JUDGES_NEWEST - {check})
    monkeypatch.setattr(engine, "JUDGES_EVERY_BACKUP", engine.JUDGES_EVERY_BACKUP - {check})
    doc = _audit(tmp_path, PASSES[check], UNREAD.format(namespace="app"))
    assert _finding(doc, check)["status"] == "PASS"


@pytest.mark.parametrize("check", sorted(PASSES))
def test_with_nothing_unread_the_pass_stays(check: str, tmp_path: Path) -> None:
    """Control: the fixture as it is, no Backup unread: PASS, no unread object named."""
    doc = _audit(tmp_path, PASSES[check])
    assert not [p for p in doc["collection_problems"] if p["kind"] == "Backup"]
    f = _finding(doc, check)
    assert f["status"] == "PASS", f["message"]
    assert "unread_objects" not in f["evidence"]


@pytest.mark.parametrize("check", sorted(PASSES))
def test_an_unread_backup_of_another_namespace_leaves_the_pass(check: str, tmp_path: Path) -> None:
    """Control: the unread Backup names only namespace ``other``; it cannot hold app/vm1, so
    it cannot change the verdict: PASS (its problem is still named)."""
    doc = _audit(tmp_path, PASSES[check], UNREAD.format(namespace="other"))
    assert ("Backup", "manual-20261130", "spec.excludedResources") in _named(doc)
    f = _finding(doc, check)
    assert f["status"] == "PASS", f["message"]


def test_a_fail_with_a_backup_unread_stays_unknown_at_the_worst_severity(
    tmp_path: Path,
) -> None:
    """RR-NET-002's medium FAIL (a NAD outside a read backup) holds whatever the unread
    Backup says, but the unread one may leave out the NAD of a NIC with static addresses
    (high): the engine's ERROR at the worst severity, with the FAIL it would give, as before
    this round."""
    doc = _audit(
        tmp_path, "RR-NET-002/fail-nad-outside-backups.yaml", UNREAD.format(namespace="app")
    )
    f = _finding(doc, "RR-NET-002")
    assert (f["status"], f["severity"]) == ("ERROR", "high"), f["message"]
    assert f["evidence"]["would_be"]["status"] == "FAIL"
    assert "would_fail" in f["evidence"]
    assert f["evidence"]["unread_objects"] == ["Backup velero/manual-20261130"]


@pytest.mark.parametrize(
    ("fixture", "words"),
    [
        ("RR-BKP-012/na-no-references.yaml", "references no Secret"),
        ("RR-NET-002/na-no-multus.yaml", "has no NIC on a Multus network"),
    ],
)
def test_a_not_applicable_read_from_the_vm_alone_holds(
    fixture: str, words: str, tmp_path: Path
) -> None:
    """No reference, no Multus NIC: read from the VM's spec, which no Backup changes. Before
    this round the engine's rule for "no usable backup to judge" made every NOT_APPLICABLE
    of a Backup-reading check ERROR (high) with a Backup unread; now such a one keeps its
    NOT_APPLICABLE, naming the kind in ``incomplete_kinds``."""
    check = fixture.split("/")[0]
    doc = _audit(tmp_path, fixture, UNREAD.format(namespace="app"))
    assert ("Backup", "manual-20261130", "spec.excludedResources") in _named(doc)
    f = _finding(doc, check)
    assert f["status"] == "NOT_APPLICABLE", f["message"]
    assert words in f["message"]
    assert f["evidence"]["incomplete_kinds"] == ["Backup"]


def test_a_high_fail_of_rr_net_002_holds_with_a_backup_unread(tmp_path: Path) -> None:
    """A read usable Backup leaves out the NAD of a NIC with static addresses: FAIL high,
    the worst RR-NET-002 gives, whatever the unread Backup holds (it cannot put the NAD into
    the read one). Before this round: ERROR high (the engine's rule for any FAIL with a kind
    partly unread); now FAIL high, the unread kind named in ``incomplete_kinds``."""
    doc = _audit(
        tmp_path,
        "RR-NET-002/fail-static-bridge-nad-outside-backups.yaml",
        UNREAD.format(namespace="app"),
    )
    f = _finding(doc, "RR-NET-002")
    assert (f["status"], f["severity"]) == ("FAIL", "high"), f["message"]
    assert f["evidence"]["incomplete_kinds"] == ["Backup"]
    vm = next(v for v in doc["vms"] if (v["namespace"], v["name"]) == ("app", "vm1"))
    assert vm["readiness"] == "NOT_READY"


def test_a_fail_of_rr_bkp_012_with_a_backup_unread_is_unknown(tmp_path: Path) -> None:
    """RR-BKP-012's FAIL judges the newest usable Backup read; the unread one may be a newer
    usable one taking every object: ERROR high, the FAIL it would give named."""
    doc = _audit(tmp_path, "RR-BKP-012/fail-secrets-excluded.yaml", UNREAD.format(namespace="app"))
    f = _finding(doc, "RR-BKP-012")
    assert (f["status"], f["severity"]) == ("ERROR", "high"), f["message"]
    assert f["evidence"]["would_be"]["status"] == "FAIL"
    assert f["evidence"]["unread_objects"] == ["Backup velero/manual-20261130"]
