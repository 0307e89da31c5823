"""Hand-made report.json envelopes for the report renderer tests (and the bench).

``sample_report()`` builds a small dict that follows ``docs/report-schema.md``:
one VM per readiness state, a waived finding, a Windows guest, an incomplete
audit and (with ``hostile=True``) a VM whose annotation-derived values carry
markup and URLs. ``synthetic_report(n)`` scales the same shapes to ``n`` VMs.
No data is copied from the shared corpus.
"""

from __future__ import annotations

import random
from typing import Any

from auditor.envelope import AuditReport
from auditor.models import SEVERITY_ORDER, Readiness, Status

AUDIT_TIME = "2026-11-30T06:00:00Z"

CHECKS: list[dict[str, Any]] = [
    {
        "id": "RR-BKP-001",
        "family": "BKP",
        "severity": "high",
        "title": "Every VM has a usable backup newer than the RPO",
        "rationale": "Without a recent completed backup the VM cannot be restored to the RPO.",
        "remediation": "Add the VM's namespace to a Velero Schedule and check it completes.",
        "references": ["https://velero.io/docs/main/backup-reference/"],
        "requires": ["Backup", "VirtualMachine"],
    },
    {
        "id": "RR-BKP-002",
        "family": "BKP",
        "severity": "high",
        "title": "Backups hold the VM's disk data",
        "rationale": "A backup of the VM object alone restores an empty shell.",
        "remediation": "Enable CSI snapshots or the data mover for the VM's PVCs.",
        "references": [],
        "requires": ["Backup", "PersistentVolumeClaim"],
    },
    {
        "id": "RR-BKP-003",
        "family": "BKP",
        "severity": "medium",
        "title": "At least the minimum number of restore points exist",
        "rationale": "One restore point leaves no fallback when it is corrupt.",
        "remediation": "Keep backups longer (Schedule ttl).",
        "references": [],
        "requires": ["Backup"],
    },
    {
        "id": "RR-FW-001",
        "family": "FW",
        "severity": "high",
        "title": "The firmware UUID is pinned",
        "rationale": "Guests license and name devices by the SMBIOS UUID.",
        "remediation": "Set spec.template.spec.domain.firmware.uuid.",
        "references": [],
        "requires": ["VirtualMachine"],
    },
    {
        "id": "RR-NIC-001",
        "family": "NIC",
        "severity": "medium",
        "title": "Every NIC has a pinned MAC address",
        "rationale": "A new MAC breaks DHCP reservations and licences.",
        "remediation": "Set macAddress on each interface.",
        "references": [],
        "requires": ["VirtualMachine"],
    },
    {
        "id": "RR-RST-001",
        "family": "RST",
        "severity": "medium",
        "title": "A restore test completed within the restore-test window",
        "rationale": "Untested backups fail when needed.",
        "remediation": "Run a Velero Restore into a scratch namespace.",
        "references": [],
        "requires": ["Restore"],
    },
    {
        "id": "RR-STO-001",
        "family": "STO",
        "severity": "info",
        "title": "Volumes use a Retain reclaim policy",
        "rationale": "Delete loses the data when the PVC goes.",
        "remediation": "Use Retain.",
        "references": [],
        "requires": ["PersistentVolume"],
    },
]
for _c in CHECKS:
    _c["scope"] = "vm"

# readiness -> {check_id: (status, severity)} for the checks that do not PASS
_PROFILES: dict[str, dict[str, tuple[str, str]]] = {
    "READY": {"RR-STO-001": ("FAIL", "info")},
    "AT_RISK": {"RR-NIC-001": ("FAIL", "medium"), "RR-RST-001": ("FAIL", "medium")},
    "NOT_READY": {
        "RR-BKP-001": ("FAIL", "high"),
        "RR-FW-001": ("FAIL", "high"),
        "RR-BKP-003": ("FAIL", "medium"),
    },
    "UNKNOWN": {"RR-BKP-002": ("ERROR", "high"), "RR-RST-001": ("ERROR", "medium")},
}


def _card(ns: str, name: str, owner: str, i: int, *, windows: bool) -> dict[str, Any]:
    pvc = {
        "name": f"{name}-root",
        "size": "40Gi",
        "size_bytes": 42949672960,
        "storage_class": "ocs-rbd",
        "volume_mode": "Block",
        "access_modes": ["ReadWriteMany"],
        "reclaim_policy": "Delete",
        "volume_name": f"pvc-{i:08x}",
    }
    return {
        "vm": {
            "namespace": ns,
            "name": name,
            "uid": f"uid-{i:06d}",
            "created": "2026-01-05T10:00:00Z",
            "run_strategy": "Always",
        },
        "owner": owner,
        "instancetype": {"kind": "VirtualMachineClusterInstancetype", "name": "u1.large"},
        "preference": (
            {"kind": "VirtualMachineClusterPreference", "name": "windows.11.virtio"}
            if windows
            else None
        ),
        "revisions": [],
        "network_identity": {"hostname": None, "subdomain": None, "nics": [], "services": []},
        "firmware": {
            "uuid": None if i % 3 == 2 else f"6a1f{i:04d}-0000-4000-8000-000000000000",
            "serial": f"SER{i:05d}",
            "bootloader": "efi" if windows else "bios",
            "secure_boot": True if windows else None,
            "efi_persistent": windows,
            "tpm": windows,
            "tpm_persistent": windows if windows else None,
            "machine_type": "pc-q35-rhel9.4.0",
            "resolved_from": {
                "bootloader": "preference" if windows else "default",
                "tpm": "preference" if windows else "default",
                "machine_type": "vm",
            },
        },
        "disks": [
            {
                "name": "rootdisk",
                "boot_order": 1,
                "device": "disk",
                "bus": "virtio",
                "bus_from": "preference" if windows else "vm",
                "serial": f"D{i:05d}",
                "volume": {"type": "dataVolume", "name": f"{name}-root"},
                "pvc": pvc,
                "newest_copy": {
                    "kind": "Backup",
                    "name": f"nightly-{i}",
                    "time": "2026-11-30T01:15:00Z",
                    "age_hours": 4.75,
                    "off_cluster": True,
                    "survives_namespace_loss": True,
                    "basis": "observed",
                },
            },
            {
                "name": "cloudinit",
                "boot_order": None,
                "device": "disk",
                "bus": None,
                "bus_from": "default",
                "serial": None,
                "volume": {"type": "cloudInitNoCloud", "name": f"{name}-userdata"},
                "pvc": None,
                "newest_copy": None,
            },
        ],
        "persistent_state_pvc": None,
        "nics": [
            {
                "name": "default",
                "mac": None if i % 4 == 1 else f"02:00:00:00:{i % 256:02x}:01",
                "model": "virtio",
                "model_from": "vm",
                "binding": "masquerade",
                "network": {"type": "pod", "name": None},
            },
            {
                "name": "storage",
                "mac": f"02:00:00:01:{i % 256:02x}:02",
                "model": "virtio",
                "model_from": "vm",
                "binding": "bridge",
                "network": {"type": "multus", "name": f"{ns}/storage-net"},
            },
        ],
    }


def make_vm(
    ns: str, name: str, owner: str, readiness: str, i: int, *, windows: bool = False
) -> dict[str, Any]:
    """Return one report.json VM entry whose findings yield ``readiness``."""
    profile = _PROFILES[readiness]
    findings = []
    for check in CHECKS:
        status, sev = profile.get(check["id"], ("PASS", check["severity"]))
        msg = (
            f"VM {ns}/{name}: {check['title'].lower()}."
            if status == "PASS"
            else f"VM {ns}/{name} fails {check['id']}: newest backup nightly-{i} is 30.5 h old."
        )
        if status == "ERROR":
            msg = f"VM {ns}/{name}: cannot evaluate {check['id']}: Backup list is forbidden."
        findings.append(
            {
                "check_id": check["id"],
                "status": status,
                "severity": sev,
                "message": msg,
                "evidence": {
                    "backup": f"nightly-{i}",
                    "age_hours": 30.5,
                    "disks": ["rootdisk", "cloudinit"],
                },
            }
        )
    usable = readiness != "NOT_READY"
    return {
        "namespace": ns,
        "name": name,
        "uid": f"uid-{i:06d}",
        "owner": owner,
        "os": "windows" if windows else "linux",
        "readiness": readiness,
        "policy": "default",
        "labels": {"app": name, "owner": owner},
        "annotations": {"kubevirt.io/latest-observed-api-version": "v1"},
        "backup": {
            "newest_usable": (
                {
                    "name": f"nightly-{i}",
                    "phase": "Completed",
                    "completed": "2026-11-30T01:15:00Z",
                    "age_hours": 4.75,
                }
                if usable
                else None
            ),
            "rpo_hours": 24.0,
            "within_rpo": usable,
            "restore_points": 7 if usable else 0,
        },
        "findings": findings,
        "recovery_card": _card(ns, name, owner, i, windows=windows),
    }


def _summary(vms: list[dict[str, Any]]) -> dict[str, Any]:
    states = tuple(r.value for r in Readiness)
    readiness = {s: 0 for s in states}
    by_ns: dict[str, dict[str, int]] = {}
    by_owner: dict[str, dict[str, int]] = {}
    statuses = {s.value: 0 for s in Status}
    sevs = {s.value: 0 for s in SEVERITY_ORDER}
    by_check: dict[str, int] = {}
    for vm in vms:
        readiness[vm["readiness"]] += 1
        by_ns.setdefault(vm["namespace"], {s: 0 for s in states})[vm["readiness"]] += 1
        by_owner.setdefault(vm["owner"], {s: 0 for s in states})[vm["readiness"]] += 1
        for f in vm["findings"]:
            statuses[f["status"]] += 1
            if f["status"] == "FAIL":
                sevs[f["severity"]] += 1
                by_check[f["check_id"]] = by_check.get(f["check_id"], 0) + 1
    return {
        "vms": len(vms),
        "readiness": readiness,
        "findings_by_status": statuses,
        "fails_by_severity": sevs,
        "fails_by_check": by_check,
        "by_namespace": by_ns,
        "by_owner": by_owner,
    }


def envelope(
    vms: list[dict[str, Any]], *, complete: bool = True, cluster: str | None = "ocp-test-east"
) -> dict[str, Any]:
    """Wrap ``vms`` (sorted here) in a report.json envelope."""
    vms = sorted(vms, key=lambda v: (v["namespace"], v["name"]))
    problems = (
        []
        if complete
        else [
            {
                "reason": "Backup list forbidden (403) for velero.io/v1 backups",
                "file": None,
                "kind": "Backup",
                "namespace": "openshift-adp",
                "name": None,
                "field": None,
                "kinds": ["Backup"],
            },
            {
                "reason": "malformed YAML: mapping values are not allowed here",
                "file": "vms/bad.yaml",
                "kind": None,
                "namespace": None,
                "name": None,
                "field": None,
                "kinds": ["VirtualMachine"],
            },
        ]
    )
    return {
        "schema_version": "1.0",
        "run": {
            "id": "20261130T060000Z-3f2a9c1b",
            "audit_time": AUDIT_TIME,
            "tool_version": "0.1.0",
            "source": {"type": "directory", "location": "exports/ocp-test-east"},
            "input_digest": "sha256:" + "3f2a9c1b" * 8,
            "complete": complete,
            "incomplete_checks": [] if complete else ["RR-BKP-001", "RR-BKP-002"],
            "thresholds": {
                "rpo_hours": 24.0,
                "restore_test_max_age_days": 30,
                "min_restore_points": 1,
            },
            "owner_filter": None,
            "backup_storage": {"configured": False, "note": "no backup_storage configured"},
        },
        "cluster": {
            "name": cluster,
            "name_source": "config" if cluster else "unknown",
            "counts": {"VirtualMachine": len(vms), "Backup": 2 * len(vms)},
            "kind_states": {
                "VirtualMachine": "complete",
                "Backup": "complete" if complete else "unavailable",
                "Restore": "not_installed",
            },
            "skipped": {"template.openshift.io/v1 Template": 3},
        },
        "collection_problems": problems,
        "checks": CHECKS,
        "platform_findings": [
            {
                "check_id": "RR-BKP-001",
                "status": "FAIL",
                "severity": "medium",
                "message": "Schedule openshift-adp/nightly is paused.",
                "evidence": {"schedule": "openshift-adp/nightly", "paused": True},
            }
        ],
        "waivers": [],
        "summary": _summary(vms),
        "vms": vms,
    }


HOSTILE_SCRIPT = "<script>document.title='PWNED';document.body.append('PWNED')</script>"
HOSTILE_IMG = "<img src=x onerror=\"document.title='PWNED-IMG'\">"


def hostile_vm(i: int, url: str = "http://127.0.0.1:9/leak.png") -> dict[str, Any]:
    """A NOT_READY VM whose owner, messages and evidence carry markup and URLs."""
    vm = make_vm("evil-ns", "evil-vm", HOSTILE_SCRIPT, "NOT_READY", i)
    vm["findings"][0]["message"] = (
        f'{HOSTILE_IMG} <img src="{url}"> <div style="background:url({url})">x</div>'
    )
    vm["findings"][0]["evidence"] = {
        "annotation": HOSTILE_SCRIPT,
        "link": url,
        "style": f"<style>@import url({url}); body{{background:url({url})}}</style>",
    }
    vm["annotations"] = {
        "corp.example/owner": HOSTILE_SCRIPT,
        "note": HOSTILE_IMG,
        "docs": f'<a href="{url}">runbook</a>',
    }
    vm["recovery_card"]["nics"][0]["network"]["name"] = f'evil-ns/<a href="{url}">x</a>'
    return vm


def sample_report(
    *, hostile: bool = False, complete: bool = False, url: str = "http://127.0.0.1:9/leak.png"
) -> AuditReport:
    """:func:`sample_doc` as the typed envelope the renderers take."""
    return AuditReport.model_validate(sample_doc(hostile=hostile, complete=complete, url=url))


def sample_doc(
    *, hostile: bool = False, complete: bool = False, url: str = "http://127.0.0.1:9/leak.png"
) -> dict[str, Any]:
    """A small report: one VM per readiness, a Windows VM, a waived finding, optional hostile VM."""
    vms = [
        make_vm("finance-prod", "fin-db-01", "team-finance", "NOT_READY", 1, windows=True),
        make_vm("finance-prod", "fin-app-01", "team-finance", "READY", 2),
        make_vm("finance-prod", "fin-web-01", "team-finance", "AT_RISK", 3),
        make_vm("hr-prod", "hr-db-01", "team-hr", "UNKNOWN", 4),
        make_vm("hr-prod", "hr-app-01", "unassigned", "READY", 5),
        make_vm("lab", "lab-01", "unassigned", "NOT_READY", 6),
    ]
    waived = vms[1]["findings"][3]
    waived.update(
        status="WAIVED",
        waiver={
            "id": "W-7",
            "check_id": "RR-FW-001",
            "selector": {"namespace": "finance-*", "name": "fin-app-*", "labels": {}},
            "reason": "UUID set at restore",
            "approver": "j.doe",
            "created": "2026-11-01T00:00:00Z",
            "expires": "2027-01-31T00:00:00Z",
        },
    )
    if hostile:
        vms.append(hostile_vm(7, url))
    report = envelope(vms, complete=complete)
    report["waivers"] = [
        {
            "id": "W-7",
            "check_id": "RR-FW-001",
            "selector": {"namespace": "finance-*", "name": "fin-app-*", "labels": {}},
            "reason": "UUID set at restore",
            "approver": "j.doe",
            "created": "2026-11-01T00:00:00Z",
            "expires": "2027-01-31T00:00:00Z",
            "state": "active",
            "days_left": 62,
        },
    ]
    return report


def synthetic_report(n_vms: int, *, seed: int = 7, not_ready_share: float = 0.3) -> AuditReport:
    """A report of ``n_vms`` VMs over 40 namespaces and 12 owners (deterministic for ``seed``)."""
    rng = random.Random(seed)
    states = ["NOT_READY", "AT_RISK", "UNKNOWN", "READY"]
    rest = (1.0 - not_ready_share) / 3
    weights = [not_ready_share, rest, rest * 0.3, rest * 1.7]
    vms = []
    for i in range(n_vms):
        ns = f"ns-{i % 40:02d}"
        state = rng.choices(states, weights)[0]
        vms.append(make_vm(ns, f"vm-{i:05d}", f"team-{i % 12:02d}", state, i, windows=i % 5 == 0))
    return AuditReport.model_validate(envelope(vms, complete=True))
