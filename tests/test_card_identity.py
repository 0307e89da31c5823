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


def test_the_card_keeps_the_mac_a_nic_runs_with_when_none_is_pinned(tmp_path: Path) -> None:
    """Trial nu25: a NIC without a pinned MAC showed ``mac: null`` on the card while the VMI's
    ``status.interfaces`` held the MAC the guest runs with (a restore gets a new one unless it
    is pinned: DHCP reservations, licences and udev rules see the change). The card now has
    it with ``mac_from: "vmi"``; the HTML and PDF say "unpinned"; a pinned MAC stays the VM's
    and carries no ``mac_from``."""
    import shutil

    import yaml

    from auditor.report.vmview import card_view

    export = tmp_path / "export"
    shutil.copytree(EXAMPLE, export)
    vms = yaml.safe_load((export / "virtualmachines.yaml").read_text())
    api = next(v for v in vms["items"] if v["metadata"]["name"] == "web-api")
    (nic,) = api["spec"]["template"]["spec"]["domain"]["devices"]["interfaces"]
    del nic["macAddress"]
    (export / "virtualmachines.yaml").write_text(yaml.safe_dump(vms))
    vmis = yaml.safe_load((export / "virtualmachineinstances.yaml").read_text())
    running = next(v for v in vmis["items"] if v["metadata"]["name"] == "web-api")
    running.setdefault("status", {})["interfaces"] = [
        {"name": "default", "mac": "0a:58:0a:80:00:17", "interfaceName": "eth0"}
    ]
    (export / "virtualmachineinstances.yaml").write_text(yaml.safe_dump(vmis))

    report = audit_data(DirectorySource(export).collect(), AuditSettings(), at=AUDIT_AT)
    by_name = {v.name: v for v in report.vms}
    (card_nic,) = by_name["web-api"].recovery_card.nics
    assert (card_nic.mac, card_nic.mac_from) == ("0a:58:0a:80:00:17", "vmi")
    assert card_view(by_name["web-api"].recovery_card).nics[0].mac == "unpinned"
    pinned = by_name["billing-db"].recovery_card.nics[0]
    assert (pinned.mac, pinned.mac_from) == ("02:00:00:00:00:01", None)
    from auditor.envelope import report_document

    cards = {v["name"]: v["recovery_card"] for v in report_document(report)["vms"]}
    assert "mac_from" not in cards["billing-db"]["nics"][0]  # report.json: only when from the VMI
    assert cards["web-api"]["nics"][0]["mac_from"] == "vmi"
