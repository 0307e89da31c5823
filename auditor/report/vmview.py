"""Presentation of one VM: its table row, its findings and its recovery card.

Reads one ``report["vms"][i]`` entry (see ``docs/report-schema.md``) and the
check catalog; returns frozen view objects that templates only loop over and
print. Missing keys show as ``"-"``; nothing here judges readiness (the engine
did that).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from auditor.report.formatting import (
    READINESS_LABEL,
    SEVERITY_ORDER,
    STATUS_ORDER,
    evidence_pairs,
    fmt_hours,
    fmt_value,
)

__all__ = ["IDENTITY_FAMILIES", "VmRow", "FindingView", "CardView", "VmDetail", "vm_detail"]

#: Check families whose FAIL/ERROR findings count as identity gaps in the VM table.
IDENTITY_FAMILIES = frozenset({"FW", "DSK", "NIC"})

Pairs = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class VmRow:
    """One line of the "protected VMs" table; ``anchor`` links to the VM's section."""

    anchor: str
    namespace: str
    name: str
    owner: str
    os: str
    readiness: str
    readiness_label: str
    newest_backup: str
    backup_time: str
    backup_age: str
    rpo: str
    rpo_state: str  # "within" | "exceeds" | "unknown"
    rpo_label: str
    restore_points: str
    identity_gaps: tuple[str, ...]
    failing_checks: tuple[str, ...]


@dataclass(frozen=True)
class FindingView:
    """One finding with its check's title and remediation; ``waiver`` pairs when WAIVED."""

    check_id: str
    title: str
    status: str
    severity: str
    message: str
    evidence: Pairs
    remediation: str
    waiver: Pairs


@dataclass(frozen=True)
class DiskRow:
    """One disk of a recovery card, in boot order."""

    boot_order: str
    name: str
    device: str
    bus: str
    serial: str
    volume: str
    pvc: str
    newest_copy: str


@dataclass(frozen=True)
class NicRow:
    """One NIC of a recovery card."""

    name: str
    mac: str
    model: str
    binding: str
    network: str


@dataclass(frozen=True)
class CardView:
    """A recovery card as label/value pairs and disk/NIC rows."""

    facts: Pairs
    firmware: Pairs
    disks: tuple[DiskRow, ...]
    nics: tuple[NicRow, ...]


@dataclass(frozen=True)
class VmDetail:
    """Everything a VM's section shows; ``problems`` are its FAIL/ERROR/WAIVED findings.

    ``labels``/``annotations`` are the VM's own metadata as report.json carries it
    (secret-looking values already redacted by the source); ``policy`` names the
    recovery policy applied.
    """

    row: VmRow
    findings: tuple[FindingView, ...]
    problems: tuple[FindingView, ...]
    card: CardView
    policy: str
    labels: Pairs
    annotations: Pairs


def _rank(order: tuple[str, ...], value: str) -> int:
    return order.index(value) if value in order else len(order)


def finding_view(
    finding: Mapping[str, Any], checks: Mapping[str, Mapping[str, Any]]
) -> FindingView:
    """Return the view of one report.json finding, titled from the check catalog."""
    check = checks.get(str(finding.get("check_id")), {})
    waiver = finding.get("waiver")
    return FindingView(
        check_id=str(finding.get("check_id", "-")),
        title=str(check.get("title", "")),
        status=str(finding.get("status", "ERROR")),
        severity=str(finding.get("severity", "")),
        message=str(finding.get("message", "")),
        evidence=evidence_pairs(finding.get("evidence")),
        remediation=str(check.get("remediation", "")),
        waiver=evidence_pairs(waiver) if isinstance(waiver, Mapping) else (),
    )


def sorted_findings(findings: list[FindingView]) -> tuple[FindingView, ...]:
    """Order findings: FAIL, ERROR, WAIVED, PASS, N/A; then severity, then check id."""
    return tuple(
        sorted(
            findings,
            key=lambda f: (
                _rank(STATUS_ORDER, f.status),
                _rank(SEVERITY_ORDER, f.severity),
                f.check_id,
            ),
        )
    )


def vm_row(index: int, vm: Mapping[str, Any], checks: Mapping[str, Mapping[str, Any]]) -> VmRow:
    """Return the table row of ``report["vms"][index]``."""
    backup = vm.get("backup") or {}
    newest = backup.get("newest_usable") or {}
    within = backup.get("within_rpo")
    rpo_state = "unknown" if within is None else ("within" if within else "exceeds")
    failing = sorted(
        {
            str(f.get("check_id"))
            for f in vm.get("findings", [])
            if f.get("status") in ("FAIL", "ERROR")
        }
    )
    identity = [c for c in failing if checks.get(c, {}).get("family") in IDENTITY_FAMILIES]
    readiness = str(vm.get("readiness", "UNKNOWN"))
    points = backup.get("restore_points")
    return VmRow(
        anchor=f"vm-{index}",
        namespace=str(vm.get("namespace", "")),
        name=str(vm.get("name", "")),
        owner=str(vm.get("owner", "unassigned")),
        os=str(vm.get("os", "unknown")),
        readiness=readiness,
        readiness_label=READINESS_LABEL.get(readiness, readiness),
        newest_backup=str(newest.get("name", "none")) if newest else "none",
        backup_time=str(newest.get("completed") or "-") if newest else "-",
        backup_age=fmt_hours(newest.get("age_hours")) if newest else "-",
        rpo=fmt_hours(backup.get("rpo_hours")),
        rpo_state=rpo_state,
        rpo_label={"within": "within RPO", "exceeds": "exceeds RPO"}.get(rpo_state, "unknown"),
        restore_points="-" if points is None else str(points),
        identity_gaps=tuple(identity),
        failing_checks=tuple(failing),
    )


def _from(value: Any, source: Any) -> str:
    text = fmt_value(value)
    return f"{text} (from {source})" if source not in (None, "vm") and value is not None else text


def _pvc(pvc: Any) -> str:
    if not isinstance(pvc, Mapping):
        return "-"
    modes = fmt_value(pvc.get("access_modes") or [])
    return (
        f"{fmt_value(pvc.get('name'))}: {fmt_value(pvc.get('size'))}, "
        f"class {fmt_value(pvc.get('storage_class'))}, {fmt_value(pvc.get('volume_mode'))}, "
        f"{modes}, reclaim {fmt_value(pvc.get('reclaim_policy'))}"
    )


def _copy(copy: Any) -> str:
    if not isinstance(copy, Mapping):
        return "none"
    where = "off-cluster" if copy.get("off_cluster") else "in-cluster"
    return (
        f"{fmt_value(copy.get('kind'))} {fmt_value(copy.get('name'))} at "
        f"{fmt_value(copy.get('time'))} ({fmt_hours(copy.get('age_hours'))} old, {where})"
    )


def _ref(ref: Any) -> str:
    if not isinstance(ref, Mapping):
        return "none"
    return f"{fmt_value(ref.get('name'))} ({fmt_value(ref.get('kind'))})"


def card_view(card: Any) -> CardView:
    """Return the view of a VM's ``recovery_card`` (tolerates a missing or partial card)."""
    card = card if isinstance(card, Mapping) else {}
    vm = card.get("vm") or {}
    fw = card.get("firmware") or {}
    src = fw.get("resolved_from") or {}
    facts: Pairs = (
        ("UID", fmt_value(vm.get("uid"))),
        ("Created", fmt_value(vm.get("created"))),
        ("Run strategy", fmt_value(vm.get("run_strategy"))),
        ("Owner", fmt_value(card.get("owner"))),
        ("Instance type", _ref(card.get("instancetype"))),
        ("Preference", _ref(card.get("preference"))),
        ("Persistent state PVC", _pvc(card.get("persistent_state_pvc"))),
    )
    firmware: Pairs = (
        ("Firmware UUID", fmt_value(fw.get("uuid"))),
        ("Serial", fmt_value(fw.get("serial"))),
        ("Bootloader", _from(fw.get("bootloader"), src.get("bootloader"))),
        ("Secure boot", fmt_value(fw.get("secure_boot"))),
        ("Persistent EFI NVRAM", fmt_value(fw.get("efi_persistent"))),
        ("TPM", _from(fw.get("tpm"), src.get("tpm"))),
        ("Persistent TPM", fmt_value(fw.get("tpm_persistent"))),
        ("Machine type", _from(fw.get("machine_type"), src.get("machine_type"))),
    )
    disks = tuple(
        DiskRow(
            boot_order=fmt_value(d.get("boot_order")),
            name=fmt_value(d.get("name")),
            device=fmt_value(d.get("device")),
            bus=_from(d.get("bus"), d.get("bus_from")),
            serial=fmt_value(d.get("serial")),
            volume=_ref_volume(d.get("volume")),
            pvc=_pvc(d.get("pvc")),
            newest_copy=_copy(d.get("newest_copy")),
        )
        for d in card.get("disks") or []
        if isinstance(d, Mapping)
    )
    nics = tuple(
        NicRow(
            name=fmt_value(n.get("name")),
            mac=fmt_value(n.get("mac")),
            model=_from(n.get("model"), n.get("model_from")),
            binding=fmt_value(n.get("binding")),
            network=_network(n.get("network")),
        )
        for n in card.get("nics") or []
        if isinstance(n, Mapping)
    )
    return CardView(facts=facts, firmware=firmware, disks=disks, nics=nics)


def _ref_volume(volume: Any) -> str:
    if not isinstance(volume, Mapping):
        return "-"
    return f"{fmt_value(volume.get('type'))} {fmt_value(volume.get('name'))}"


def _network(net: Any) -> str:
    if not isinstance(net, Mapping):
        return "-"
    name = net.get("name")
    return fmt_value(net.get("type")) + (f" {name}" if name else "")


def vm_detail(
    index: int, vm: Mapping[str, Any], checks: Mapping[str, Mapping[str, Any]]
) -> VmDetail:
    """Return the full section view of ``report["vms"][index]``."""
    findings = sorted_findings([finding_view(f, checks) for f in vm.get("findings", [])])
    problems = tuple(f for f in findings if f.status in ("FAIL", "ERROR", "WAIVED"))
    return VmDetail(
        row=vm_row(index, vm, checks),
        findings=findings,
        problems=problems,
        card=card_view(vm.get("recovery_card")),
        policy=fmt_value(vm.get("policy")),
        labels=evidence_pairs(vm.get("labels") or {}),
        annotations=evidence_pairs(vm.get("annotations") or {}),
    )
