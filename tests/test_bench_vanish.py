"""bench.mutations counts a VM that vanished from ``vms`` after a mutation as improved,
unless it could not be listed by name (its file refused whole, left out as created after
the audit instant) or it reappeared under another key. Built from the bundled example."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from auditor.config import AuditSettings
from auditor.envelope import AuditReport
from auditor.pipeline import audit_data
from auditor.sources.directory import DirectorySource
from bench.mutations import _vanish_excused, _verdicts
from tests.conftest import EXAMPLE, edited_example

AT = datetime(2026, 11, 30, 6, tzinfo=UTC)


def _report(root: Path) -> AuditReport:
    return audit_data(DirectorySource(root).collect(), AuditSettings(), at=AT)


def _judge(tmp_path: Path, old: str, new: str) -> tuple[bool, set[tuple[str, str]]]:
    base = _report(EXAMPLE)
    known = {str(p.model_dump()) for p in base.collection_problems}
    baseline = _verdicts(base)
    report = _report(edited_example(tmp_path, old, new))
    after = _verdicts(report)
    return _vanish_excused(report, known, after, baseline), set(baseline) - set(after)


def test_a_vm_dropped_without_a_refusal_is_no_excuse(tmp_path: Path) -> None:
    # billing-db cut out of its file, nothing named: a vanished VM, not excused
    text = (EXAMPLE / "virtualmachines.yaml").read_text()
    start = text.index("- apiVersion: kubevirt.io/v1")
    end = text.index("- apiVersion: kubevirt.io/v1", start + 1)
    excused, gone = _judge(tmp_path, text[start:end], "")
    assert gone == {("billing", "billing-db")}
    assert excused is False


def test_a_vm_renamed_or_left_out_as_later_is_excused(tmp_path: Path) -> None:
    excused, gone = _judge(tmp_path, "    name: billing-db\n", "    name: billing-db2\n")
    assert gone == {("billing", "billing-db")} and excused is True
    excused, gone = _judge(
        tmp_path / "later",
        "creationTimestamp: '2026-01-10T09:59:00Z'",
        "creationTimestamp: '2026-12-01T00:00:00Z'",
    )
    assert gone == {("billing", "billing-db")} and excused is True


def test_a_refused_vm_is_listed_so_nothing_vanishes(tmp_path: Path) -> None:
    _, gone = _judge(
        tmp_path, "- apiVersion: kubevirt.io/v1\n  kind: VirtualMachine", "- kind: VirtualMachine"
    )
    assert gone == set()
