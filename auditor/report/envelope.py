"""Build the report.json envelope (``docs/report-schema.md``) from an :class:`AuditResult`."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from datetime import datetime
from typing import Any

from auditor import __version__
from auditor.checks import CATALOG
from auditor.checks.backup import usable
from auditor.config import AuditSettings
from auditor.engine import AuditResult, VMResult
from auditor.inventory.index import meta_labels
from auditor.kinds import KINDS
from auditor.kubevalues import age_hours, format_time
from auditor.models import Readiness, Severity, Status, readiness_of
from auditor.recovery_card import recovery_card
from auditor.sources.base import ClusterData
from auditor.sources.bucket import run_summary as bucket_run_summary
from auditor.waivers import waiver_appendix

__all__ = ["SCHEMA_VERSION", "build_envelope", "input_digest", "resolve_owner"]

SCHEMA_VERSION = "1.0"


def input_digest(data: ClusterData) -> str:
    """``sha256:<hex>`` over the (already secret-stripped) objects, canonical JSON."""
    h = hashlib.sha256()
    for kind in sorted(data.objects):
        for obj in data.objects[kind]:
            h.update(json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str).encode())
            h.update(b"\n")
    return "sha256:" + h.hexdigest()


def resolve_owner(settings: AuditSettings, result: AuditResult, vm: VMResult) -> str:
    """Owner from the VM's labels/annotations, its Namespace's, the namespace map, or default."""
    keys = settings.ownership.keys
    rec = vm.record
    ns_obj = result.index.namespaces.get(rec.namespace) or {}
    for source in (
        rec.labels,
        rec.annotations,
        meta_labels(ns_obj),
        meta_labels(ns_obj, "annotations"),
    ):
        for key in keys:
            if source.get(key):
                return source[key]
    return settings.ownership.namespaces.get(rec.namespace, settings.ownership.default)


def _vm_entry(vm: VMResult, owner: str) -> dict[str, Any]:
    rec, ctx = vm.record, vm.context
    rpo = ctx.thresholds.rpo_hours
    good = usable(rec)
    newest = good[0] if good else None
    hours = age_hours(newest.backup.when, ctx.at) if newest else None
    return {
        "namespace": rec.namespace,
        "name": rec.name,
        "uid": rec.uid,
        "owner": owner,
        "os": rec.spec.os,
        "policy": vm.policy,
        "readiness": readiness_of(vm.findings).value,
        "labels": rec.labels,
        "annotations": rec.annotations,
        "backup": {
            "newest_usable": {
                "name": newest.backup.name,
                "phase": newest.backup.phase,
                "completed": format_time(newest.backup.completed),
                "age_hours": hours,
            }
            if newest
            else None,
            "rpo_hours": rpo,
            "within_rpo": None if newest is None or hours is None else hours <= rpo,
            "restore_points": len(good),
        },
        "findings": [f.to_dict() for f in vm.findings],
        "recovery_card": recovery_card(rec, ctx, owner),
    }


def build_envelope(
    data: ClusterData,
    result: AuditResult,
    settings: AuditSettings,
    *,
    at: datetime,
    owner: str | None = None,
) -> dict[str, Any]:
    """Assemble the envelope; ``owner`` keeps only that owner's VMs (summary follows)."""
    digest = input_digest(data)
    vms = []
    for vm in result.vms:
        who = resolve_owner(settings, result, vm)
        if owner is not None and who != owner:
            continue
        vms.append(_vm_entry(vm, who))
    problems = [p.to_dict() for p in result.problems]
    return {
        "schema_version": SCHEMA_VERSION,
        "run": {
            "id": f"{at.strftime('%Y%m%dT%H%M%SZ')}-{digest.split(':')[1][:8]}",
            "audit_time": format_time(at),
            "tool_version": __version__,
            "source": {"type": data.info.type, "location": data.info.location},
            "input_digest": digest,
            "complete": not problems and not result.incomplete_checks,
            "incomplete_checks": result.incomplete_checks,
            "thresholds": settings.thresholds.model_dump(),
            "owner_filter": owner,
            "backup_storage": bucket_run_summary(data),
        },
        "cluster": {
            "name": settings.cluster_name or data.info.cluster_name,
            "name_source": _name_source(settings, data),
            "counts": {k: len(v) for k, v in sorted(data.objects.items())},
            # Every kind the auditor reads, so a reader sees what was *not* read too.
            "kind_states": {
                k.kind: data.state(k.kind).value for k in sorted(KINDS, key=lambda k: k.kind)
            },
            "skipped": dict(sorted(data.skipped.items())),
        },
        "collection_problems": problems,
        "checks": [spec.to_dict() for spec in sorted(CATALOG.values(), key=lambda s: s.id)],
        "platform_findings": [f.to_dict() for f in result.platform],
        "waivers": waiver_appendix(settings, at),
        "summary": _summary(vms),
        "vms": vms,
    }


def _name_source(settings: AuditSettings, data: ClusterData) -> str:
    """Where ``cluster.name`` came from (``auditor.sources.identity.NAME_SOURCES``)."""
    if settings.cluster_name:
        return "config"
    return data.info.name_source if data.info.cluster_name else "unknown"


def _summary(vms: list[dict[str, Any]]) -> dict[str, Any]:
    def readiness_counts(entries: list[dict[str, Any]]) -> dict[str, int]:
        c = Counter(v["readiness"] for v in entries)
        return {r.value: c.get(r.value, 0) for r in Readiness}

    status = Counter(f["status"] for v in vms for f in v["findings"])
    fails = [f for v in vms for f in v["findings"] if f["status"] == Status.FAIL.value]
    severity = Counter(f["severity"] for f in fails)
    by_check = Counter(f["check_id"] for f in fails)
    groups: dict[str, dict[str, list[dict[str, Any]]]] = {"namespace": {}, "owner": {}}
    for v in vms:
        groups["namespace"].setdefault(v["namespace"], []).append(v)
        groups["owner"].setdefault(v["owner"], []).append(v)
    return {
        "vms": len(vms),
        "readiness": readiness_counts(vms),
        "findings_by_status": {s.value: status.get(s.value, 0) for s in Status},
        "fails_by_severity": {s.value: severity.get(s.value, 0) for s in Severity},
        "fails_by_check": dict(sorted(by_check.items())),
        "by_namespace": {k: readiness_counts(v) for k, v in sorted(groups["namespace"].items())},
        "by_owner": {k: readiness_counts(v) for k, v in sorted(groups["owner"].items())},
    }
