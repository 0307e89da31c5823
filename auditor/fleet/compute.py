"""Roll the clusters' reports up into :class:`~auditor.fleet.model.FleetReport`.

Reports are read as plain dicts (``docs/report-schema.md``), so older envelopes work:

- a cluster's status is the worst of: no trustworthy report (``unreadable``), manifest
  or signature not verified (``unverified``), ``run.complete`` not true
  (``incomplete``; with a period, also the period's ``complete`` not true: a run of the
  month left out or read in part, ``docs/period-report.md``), audited more than ``max_age_hours`` before the reference time, or
  dated more than an hour after this machine's clock (``stale``); else ``current``. Only a current cluster's READY VMs count as READY
  fleet-wide; the others' count as UNKNOWN (a false READY is the worst error).
- root causes: a VM's ``root_causes`` when the report has them; else one per check id
  with a FAIL or ERROR finding (id = the check id lower-cased, title and first action
  from the check catalog or the finding's ``remediation``).
- root causes: highest severity first, then most VMs, then id.
- owners, worst first: most NOT_READY VMs, then most VMs not counted READY, then name; an
  owner's top root cause is its most severe, then most frequent.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from auditor.fleet.collect import ClusterRun, FleetInput
from auditor.fleet.model import (
    CLUSTER_STATUSES,
    ClusterStatus,
    FleetCluster,
    FleetOwner,
    FleetPeriodFigures,
    FleetReport,
    FleetRootCause,
    FleetRun,
    FleetSummary,
    FleetVerification,
)
from auditor.models import Readiness, Severity
from auditor.period import Period, compute_period
from auditor.publish.publisher import FUTURE_TOLERANCE_HOURS

__all__ = ["build_fleet", "vm_root_causes"]

_FAILING = ("FAIL", "ERROR")


def _when(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _z(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")


def _json(value: Any) -> str:
    return json.dumps(value)


def _readiness(value: Any) -> Readiness:
    try:
        return Readiness(str(value))
    except ValueError:
        return Readiness.UNKNOWN


def _severity(value: Any) -> Severity:
    try:
        return Severity(str(value))
    except ValueError:
        return Severity.HIGH


def _counts(counter: Counter[Readiness]) -> dict[Readiness, int]:
    return {r: counter.get(r, 0) for r in Readiness}


@dataclass(frozen=True)
class _Cause:
    id: str
    title: str
    severity: Severity
    check_ids: tuple[str, ...]
    first_action: str
    derived: bool
    #: the catalog's remediation of the first check: the same for every VM
    generic_action: str = ""


def vm_root_causes(vm: dict[str, Any], catalog: dict[str, dict[str, Any]]) -> list[_Cause]:
    """The root causes of one VM entry of report.json, one per id.

    ``catalog``: check id -> the report's ``checks`` entry (title, remediation).
    """
    listed = vm.get("root_causes")
    if isinstance(listed, list):
        causes = {}
        for rc in listed:
            if isinstance(rc, dict) and rc.get("id"):
                ids = rc.get("check_ids")
                checks = tuple(sorted(str(c) for c in ids)) if isinstance(ids, list) else ()
                causes[str(rc["id"])] = _Cause(
                    id=str(rc["id"]),
                    title=str(rc.get("title") or rc["id"]),
                    severity=_severity(rc.get("severity")),
                    check_ids=checks,
                    first_action=str(rc.get("first_action") or ""),
                    derived=False,
                    generic_action=_generic(catalog, checks),
                )
        return [causes[k] for k in sorted(causes)]
    out: dict[str, _Cause] = {}
    for f in vm.get("findings") or []:
        if not isinstance(f, dict) or f.get("status") not in _FAILING or not f.get("check_id"):
            continue
        cid = str(f["check_id"])
        check = catalog.get(cid, {})
        cause = _Cause(
            id=cid.lower(),
            title=str(check.get("title") or cid),
            severity=_severity(f.get("severity")),
            check_ids=(cid,),
            first_action=str(f.get("remediation") or check.get("remediation") or ""),
            derived=True,
            generic_action=str(check.get("remediation") or ""),
        )
        old = out.get(cause.id)
        if old is None or cause.severity.rank < old.severity.rank:
            out[cause.id] = cause
    return [out[k] for k in sorted(out)]


def _generic(catalog: dict[str, dict[str, Any]], checks: tuple[str, ...]) -> str:
    """The catalog remediation of the first of ``checks`` that has one."""
    return next((str(catalog[c]["remediation"]) for c in checks
                 if catalog.get(c, {}).get("remediation")), "")  # fmt: skip


@dataclass
class _Agg:
    """Fleet-wide tallies while the clusters are walked."""

    causes: dict[str, _Cause] = field(default_factory=dict)
    cause_vms: Counter[str] = field(default_factory=Counter)
    cause_clusters: dict[str, Counter[str]] = field(default_factory=dict)
    owners: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: cause id -> (cluster ns/name, that VM's own first action), the first VM seen
    examples: dict[str, tuple[str, str]] = field(default_factory=dict)

    def add_vm(
        self, cluster: str, vm: str, owner: str, state: Readiness, causes: list[_Cause]
    ) -> None:
        o = self.owners.setdefault(
            owner, {"clusters": set(), "readiness": Counter(), "causes": Counter()}
        )
        o["clusters"].add(cluster)
        o["readiness"][state] += 1
        for c in causes:
            o["causes"][c.id] += 1
            self.cause_vms[c.id] += 1
            self.cause_clusters.setdefault(c.id, Counter())[cluster] += 1
            self.examples.setdefault(c.id, (f"{cluster} {vm}", c.first_action))
            old = self.causes.get(c.id)
            if old is None:
                self.causes[c.id] = c
                continue
            worst = c.severity if c.severity.rank < old.severity.rank else old.severity
            self.causes[c.id] = _Cause(
                old.id,
                old.title,
                worst,
                tuple(sorted(set(old.check_ids) | set(c.check_ids))),
                old.first_action or c.first_action,
                old.derived and c.derived,
                old.generic_action or c.generic_action,
            )


def _status(
    run: ClusterRun,
    ref: datetime,
    max_age_hours: float,
    now: datetime,
    figures: FleetPeriodFigures | None = None,
) -> tuple[ClusterStatus, list[str], FleetRun | None]:
    problems = list(run.problems)
    if run.report is None:
        return "unreadable", problems, None
    meta = run.report.get("run") or {}
    at = _when(str(meta["audit_time"]))
    age = round((ref - at).total_seconds() / 3600, 2)
    fleet_run = FleetRun(
        id=str(meta["id"]),
        audit_time=str(meta["audit_time"]),
        age_hours=age,
        complete=meta.get("complete") if isinstance(meta.get("complete"), bool) else None,
        location=run.location or "",
        tool_version=meta.get("tool_version"),
        schema_version=run.report.get("schema_version"),
    )
    flags: set[ClusterStatus] = set()
    ver = run.verification
    if ver is None or ver.manifest != "verified" or ver.signature == "failed":
        flags.add("unverified")
        what = "no manifest.json" if ver is None or ver.manifest == "absent" else "verification"
        lines = ver.detail if ver is not None else []
        problems.append(f"run {fleet_run.id} not verified ({what}): " + "; ".join(lines))
    if fleet_run.complete is not True:
        flags.add("incomplete")
        partial = meta.get("incomplete_checks") or []
        problems.append(
            f"run {fleet_run.id} is incomplete (run.complete is {_json(meta.get('complete'))}): part of "
            f"the cluster was not read; checks with partial input: {', '.join(partial) or '-'}"
        )
    if figures is not None and not figures.complete:
        # the month's figures rest on part of the archive: a roll-up of it said "current"
        # beside a period.json saying complete: false (ux36)
        flags.add("incomplete")
        problems.append(
            f"the period's figures are incomplete: {'; '.join(figures.incomplete_reasons)}"
        )
    if age > max_age_hours:
        flags.add("stale")
        problems.append(f"run {fleet_run.id} is {age:.1f} h old (more than {max_age_hours:g} h)")
    ahead = round((at - now).total_seconds() / 3600, 2)
    if ahead > FUTURE_TOLERANCE_HOURS:
        # a run dated after this machine's clock (a test run with a future --at, a node whose
        # clock is ahead) cannot be placed in time: never current (new-user trial nu20)
        flags.add("stale")
        problems.append(
            f"run {fleet_run.id} is dated {ahead:.1f} h after this machine's clock (a clock "
            "ahead, or a run with a future --at): not current evidence"
        )
    status: ClusterStatus = next((s for s in CLUSTER_STATUSES if s in flags), "current")
    return status, problems, fleet_run


def _period_figures(
    run: ClusterRun, period: Period | None, ref: datetime
) -> FleetPeriodFigures | None:
    """The month's figures of ``run`` as ``auditor report --period`` computes them as of
    ``ref``, completeness included; None without a period or a readable run of it."""
    if period is None or run.period is None or not run.period.reports:
        return None
    doc = compute_period(run.period, period, run.cluster, as_of=ref)
    fleet = doc["fleet"]
    return FleetPeriodFigures(
        runs=fleet["runs"],
        vm_audits=fleet["vm_audits"],
        rpo_attainment=fleet["rpo_attainment"],
        rpo_unknown=fleet["rpo_unknown"],
        complete=doc["complete"],
        incomplete_reasons=list(doc["incomplete_reasons"]),
        partial=doc["partial"],
        as_of=doc["as_of"],
    )


def _cluster(
    run: ClusterRun,
    ref: datetime,
    max_age_hours: float,
    period: Period | None,
    agg: _Agg,
    now: datetime,
) -> FleetCluster:
    figures = _period_figures(run, period, ref)
    status, problems, fleet_run = _status(run, ref, max_age_hours, now, figures)
    reported: Counter[Readiness] = Counter()
    counted: Counter[Readiness] = Counter()
    platform = 0
    if run.report is not None:
        catalog = {
            str(c.get("id")): c for c in run.report.get("checks") or [] if isinstance(c, dict)
        }
        for vm in run.report.get("vms") or []:
            if not isinstance(vm, dict):
                continue
            state = _readiness(vm.get("readiness"))
            reported[state] += 1
            if state is Readiness.READY and status != "current":
                state = Readiness.UNKNOWN
            counted[state] += 1
            name = f"{vm.get('namespace')}/{vm.get('name')}"
            agg.add_vm(run.cluster, name, str(vm.get("owner") or "unassigned"), state,
                       vm_root_causes(vm, catalog))  # fmt: skip
        platform = sum(
            1
            for f in run.report.get("platform_findings") or []
            if isinstance(f, dict) and f.get("status") in _FAILING
        )
    return FleetCluster(
        name=run.cluster,
        cluster_uid=run.cluster_uid if run.report is not None else None,
        status=status,
        problems=problems,
        run=fleet_run,
        verification=run.verification if run.report is not None else None,
        period=figures,
        vms=sum(reported.values()),
        readiness=_counts(reported),
        readiness_counted=_counts(counted),
        platform_failures=platform,
    )


def _owners(agg: _Agg) -> list[FleetOwner]:
    out = []
    for owner, o in agg.owners.items():
        vms = sum(o["readiness"].values())
        top = sorted(
            o["causes"].items(),
            key=lambda kv: (agg.causes[kv[0]].severity.rank, -kv[1], kv[0]),
        )
        out.append(
            FleetOwner(
                owner=owner,
                clusters=sorted(o["clusters"]),
                vms=vms,
                readiness=_counts(o["readiness"]),
                not_ready_share=round((vms - o["readiness"][Readiness.READY]) / vms, 4),
                top_root_cause=top[0][0] if top else None,
            )
        )
    return sorted(
        out,
        key=lambda o: (
            -o.readiness[Readiness.NOT_READY],
            -(o.vms - o.readiness[Readiness.READY]),
            o.owner,
        ),
    )


def _root_causes(agg: _Agg) -> list[FleetRootCause]:
    out = [
        FleetRootCause(
            id=c.id,
            title=c.title,
            severity=c.severity,
            check_ids=list(c.check_ids),
            first_action=c.generic_action or c.first_action,
            example_vm=agg.examples[c.id][0],
            example_action=agg.examples[c.id][1] or None,
            vms=agg.cause_vms[c.id],
            clusters=dict(sorted(agg.cause_clusters[c.id].items())),
            derived=c.derived,
        )
        for c in agg.causes.values()
    ]
    return sorted(out, key=lambda r: (r.severity.rank, -r.vms, r.id))


def _trusted(v: FleetVerification | None, signatures_checked: bool) -> bool:
    if v is None or v.manifest != "verified" or v.signature == "failed":
        return False
    return v.signature == "verified" or not signatures_checked


def build_fleet(
    data: FleetInput,
    *,
    at: datetime,
    period: Period | None = None,
    max_age_hours: float = 36.0,
    signatures_checked: bool = False,
    now: datetime | None = None,
) -> FleetReport:
    """The fleet report of ``data`` as of ``at`` (aware UTC).

    With ``period``, ages are measured from the end of the period (or ``at`` when
    earlier), so a month's last run is stale when the month's last days were not audited.
    ``now``: this machine's clock (UTC; default the current time); a run dated more than
    an hour after it is stale whatever ``at`` is.
    """
    ref = min(at, period.end) if period is not None else at
    agg = _Agg()
    clusters = [
        _cluster(run, ref, max_age_hours, period, agg, now or datetime.now(UTC))
        for run in sorted(data.clusters, key=lambda r: r.cluster)
    ]
    total: Counter[Readiness] = Counter()
    for c in clusters:
        total.update(c.readiness_counted)
    by_status = Counter(c.status for c in clusters)
    return FleetReport(
        generated_at=_z(ref),
        source=data.source,
        period=period.label if period is not None else None,
        max_age_hours=max_age_hours,
        signatures_checked=signatures_checked,
        summary=FleetSummary(
            clusters=len(clusters),
            clusters_by_status={s: by_status.get(s, 0) for s in CLUSTER_STATUSES},
            runs_verified=sum(_trusted(c.verification, signatures_checked) for c in clusters),
            vms=sum(c.vms for c in clusters),
            readiness=_counts(total),
        ),
        clusters=clusters,
        root_causes=_root_causes(agg),
        owners=_owners(agg),
        problems=list(data.problems),
    )
