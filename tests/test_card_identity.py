"""The recovery card keeps the identity a guest has seen, where the VM does not pin it."""

from __future__ import annotations

from pathlib import Path

from auditor.config import AuditSettings
from auditor.pipeline import audit_data
from auditor.sources.directory import DirectorySource
from tests.conftest import AUDIT_AT

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "small-cluster"


def test_the_card_keeps_the_uuid_a_vm_runs_with_when_none_is_pinned() -> None:
    """New-user trial: billing-win pins no firmware UUID, and its card said ``uuid: null``
    ("Firmware UUID: -" in the PDF) though its VMI shows the UUID the guest runs with: the one
    a restorer must pin to keep Windows activated. It is on the card now, marked as the
    running VMI's (``resolved_from.uuid == "vmi"``), and the HTML and PDF say "unpinned" (the
    shared export's PDF keeps its 12 pages); a pinned one stays the VM's."""
    from auditor.report.vmview import card_view

    report = audit_data(DirectorySource(EXAMPLE).collect(), AuditSettings(), at=AUDIT_AT)
    by_name = {v.name: v for v in report.vms}
    win = by_name["billing-win"].recovery_card.firmware
    assert win.uuid == "5e1f0c2a-9d3b-4c7e-8a6f-0b1d2c3e4f50"
    assert win.resolved_from.get("uuid") == "vmi"
    shown = dict(card_view(by_name["billing-win"].recovery_card).firmware)
    assert shown["Firmware UUID"] == "unpinned"  # the value is in the JSON card")
    pinned = [v for v in report.vms if v.recovery_card.firmware.resolved_from.get("uuid") is None]
    assert pinned and all(v.recovery_card.firmware.uuid != win.uuid for v in pinned)
