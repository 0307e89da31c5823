"""Month figures from archived report.json documents (plain dicts, ``docs/report-schema.md``).

Per VM (``namespace/name``), over the audits of the period that list it:

- ``rpo.attained``: audits whose ``backup.within_rpo`` is true; ``rpo.breached``: false;
  ``rpo.unknown``: null (no usable backup or no age). Unknown is never attained.
  ``rpo.attainment`` = attained / audits (0..1, 4 decimals), None without audits.
  ``rpo.hours``: the RPOs (hours) those audits applied (``backup.rpo_hours``), distinct,
  ascending; empty when none was recorded.
- ``longest_breach``: the longest run of consecutive audits not within RPO (false or
  unknown): ``audits``; ``hours`` between its first and last audit (UTC), None when it was
  seen in one audit only (its length was not measured: 0 read as "no breach");
  ``ended_within_hours``, from its first audit to the next audit, which saw it over (None
  when no later audit of the period did: still open at the period's last audit).
- ``restore_drills``: distinct Restores named by RR-RST findings with phase Completed
  whose completion time falls within the period (a Restore without one is not counted).
- ``waived_checks``: check ids with a WAIVED finding in any audit.
- ``readiness_by_day``: ``YYYY-MM-DD`` (UTC) -> readiness in that day's last audit.

Completeness: ``complete`` is true only when every run of the period archived under the
cluster's name was counted (``runs_left_out``: none unreadable, unsigned or of another or an
unknown identity, :data:`auditor.period.archive.LEFT_OUT_KINDS`) and every run counted read
its whole cluster (``runs_incomplete``: run ids whose ``run.complete`` is not true);
``incomplete_reasons`` says why not, one line each. It is about the runs read, not the
month: ``partial`` says whether the month had ended.

Fleet: the same figures summed over VMs, readiness per day, attainment per owner
(owner of each VM's last audit), and the waivers of the reports' appendix that were
active, or expire within the period.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from math import inf
from typing import Any

from auditor.kubevalues import parse_rfc3339
from auditor.models import Readiness
from auditor.period.archive import LEFT_OUT_KINDS, Archive, Period

__all__ = ["compute_period", "READINESS"]

#: Readiness states in report.json order (from :class:`auditor.models.Readiness`).
READINESS = tuple(r.value for r in Readiness)


def _when(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _vm_figures(
    rows: list[tuple[datetime, dict[str, Any]]], period: Period | None = None
) -> dict[str, Any]:
    within = [(at, (vm.get("backup") or {}).get("within_rpo")) for at, vm in rows]
    attained = sum(1 for _, w in within if w is True)
    breached = sum(1 for _, w in within if w is False)
    best: tuple[int, float, str | None, str | None] = (0, 0.0, None, None)
    ended: float | None = None  # hours from the best breach's first audit to the one after it
    start: datetime | None = None
    count = 0
    for i, (at, w) in enumerate(within):
        if w is True:
            start, count = None, 0
            continue
        start = start or at
        count += 1
        hours = round((at - start).total_seconds() / 3600, 2)
        if (count, hours) > best[:2]:
            best = (count, hours, start.isoformat(), at.isoformat())
            after = within[i + 1][0] if i + 1 < len(within) else None
            ended = round((after - start).total_seconds() / 3600, 2) if after else None
    finished: dict[str, datetime | None] = {}  # Restore -> when it completed (None: unknown)
    waived = set()
    for _, vm in rows:
        for f in vm.get("findings") or []:
            ev = f.get("evidence") or {}
            cid = str(f.get("check_id", ""))
            if cid.startswith("RR-RST-") and ev.get("phase") == "Completed" and ev.get("restore"):
                finished.setdefault(str(ev["restore"]), None)
                when = parse_rfc3339(ev.get("completed"))
                if when is not None:
                    finished[str(ev["restore"])] = when
            if f.get("status") == "WAIVED":
                waived.add(cid)
    # A drill belongs to the month it completed in: the same Restore is named by every audit
    # of its restore-test window, the next month's too.
    drills = {
        name
        for name, when in finished.items()
        if when is not None and (period is None or period.start <= when < period.end)
    }
    days: dict[str, str] = {}
    for at, vm in rows:
        days[at.date().isoformat()] = str(vm.get("readiness"))
    last = rows[-1][1]
    return {
        "namespace": last.get("namespace"),
        "name": last.get("name"),
        "owner": last.get("owner"),
        "audits": len(rows),
        "rpo": {
            "attained": attained,
            "breached": breached,
            "unknown": len(rows) - attained - breached,
            "attainment": _ratio(attained, len(rows)),
            "hours": _rpo_hours(rows),
        },
        "longest_breach": {
            "audits": best[0],
            "hours": None if best[0] == 1 else best[1],
            "ended_within_hours": ended if best[0] else None,
            "first": _z(best[2]),
            "last": _z(best[3]),
        },
        "restore_drills": sorted(drills),
        "waived_checks": sorted(waived),
        "readiness_by_day": days,
        "readiness_last": last.get("readiness"),
    }


def _rpo_hours(rows: list[tuple[datetime, dict[str, Any]]]) -> list[float]:
    """The RPOs (hours) the month's audits of one VM measured against (report.json
    ``backup.rpo_hours``, set by its recovery policy), distinct, ascending; two values when
    the policy changed within the month, none when no audit recorded a number. Attainment
    without the RPO it was measured against said nothing a reader could hold to (ux36)."""
    seen = set()
    for _, vm in rows:
        hours = (vm.get("backup") or {}).get("rpo_hours")
        if isinstance(hours, int | float) and not isinstance(hours, bool) and 0 < hours < inf:
            seen.add(float(hours))
    return sorted(seen)


def _z(text: str | None) -> str | None:
    return text.replace("+00:00", "Z") if text else None


def _fleet(vms: dict[str, dict[str, Any]], reports: list[dict[str, Any]]) -> dict[str, Any]:
    rpo = Counter[str]()
    for v in vms.values():
        rpo.update({k: v["rpo"][k] for k in ("attained", "breached", "unknown")})
    audits = sum(v["audits"] for v in vms.values())
    by_day: dict[str, Counter[str]] = {}
    for report in reports:
        day = _when(report["run"]["audit_time"]).date().isoformat()
        by_day[day] = Counter(str(vm.get("readiness")) for vm in report["vms"])  # last run wins
    return {
        "runs": len(reports),
        "vms": len(vms),
        "vm_audits": audits,
        "rpo_attained": rpo["attained"],
        "rpo_breached": rpo["breached"],
        "rpo_unknown": rpo["unknown"],
        "rpo_attainment": _ratio(rpo["attained"], audits),
        "restore_drills": sum(len(v["restore_drills"]) for v in vms.values()),
        "readiness_last_run": dict(Counter(str(v.get("readiness")) for v in reports[-1]["vms"]))
        if reports
        else {},
        "readiness_by_day": {
            d: {r: c.get(r, 0) for r in READINESS} for d, c in sorted(by_day.items())
        },
    }


def _waivers(reports: list[dict[str, Any]], period: Period) -> list[dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for report in reports:
        for w in report.get("waivers") or []:
            entry = seen.setdefault(
                str(w.get("id")),
                {"id": w.get("id"), "check_id": w.get("check_id"), "active_runs": 0},
            )
            entry["expires"] = w.get("expires")
            entry["active_runs"] += w.get("state") == "active"
    out = []
    for entry in seen.values():
        expires = entry.get("expires")
        at = _when(expires) if isinstance(expires, str) else None
        entry["expires_in_period"] = at is not None and period.start <= at < period.end
        if entry["active_runs"] or entry["expires_in_period"]:
            out.append(entry)
    return sorted(out, key=lambda e: str(e["id"]))


def _utc(at: datetime) -> str:
    return at.astimezone(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def compute_period(
    archive: Archive,
    period: Period,
    cluster: str,
    previous: Archive | None = None,
    *,
    as_of: datetime | None = None,
) -> dict[str, Any]:
    """The period document (period.json): per-VM and fleet figures, previous month's fleet.

    ``as_of``: when the report is built (aware). Before ``period.end`` the report is
    ``partial: true`` with ``as_of`` that time (runs after it are missing); otherwise, or
    when None, ``partial: false`` and ``as_of`` is the period's end.
    """
    partial = as_of is not None and as_of < period.end
    covered = as_of if as_of is not None and partial else period.end
    rows: dict[str, list[tuple[datetime, dict[str, Any]]]] = {}
    for report in archive.reports:
        at = _when(report["run"]["audit_time"])
        for vm in report["vms"]:
            rows.setdefault(f"{vm.get('namespace')}/{vm.get('name')}", []).append((at, vm))
    vms = {key: _vm_figures(r, period) for key, r in sorted(rows.items())}
    fleet = _fleet(vms, archive.reports)
    owners: dict[str, Counter[str]] = {}
    for v in vms.values():
        c = owners.setdefault(str(v["owner"]), Counter())
        c.update({"audits": v["audits"], "attained": v["rpo"]["attained"], "vms": 1})
    prev = None
    if previous is not None and previous.reports:
        prev = compute_period(previous, period.previous(), cluster)["fleet"]
    left_out = {kind: archive.left_out.get(kind, 0) for kind in LEFT_OUT_KINDS}
    runs_incomplete = [
        str(r["run"]["id"]) for r in archive.reports if r["run"].get("complete") is not True
    ]
    reasons = _incomplete_reasons(left_out, runs_incomplete)
    return {
        "complete": not reasons,
        "incomplete_reasons": reasons,
        "runs_left_out": left_out,
        "runs_incomplete": runs_incomplete,
        "period": period.label,
        "cluster": cluster,
        "cluster_uid": archive.cluster_uid,
        "runs_unknown_identity": archive.unknown_identity_runs,
        "start": period.start.isoformat().replace("+00:00", "Z"),
        "end": period.end.isoformat().replace("+00:00", "Z"),
        "partial": partial,
        "as_of": _utc(covered),
        "runs": [r["run"]["id"] for r in archive.reports],
        "problems": list(archive.problems),
        "signatures": {
            "checked": bool(archive.signature_keys),
            "keys": list(archive.signature_keys),
        },
        "fleet": fleet,
        "previous": prev,
        "change": _change(fleet, prev),
        "by_owner": {
            o: {
                "vms": c["vms"],
                "audits": c["audits"],
                "attained": c["attained"],
                "attainment": _ratio(c["attained"], c["audits"]),
            }
            for o, c in sorted(owners.items())
        },
        "waivers": _waivers(archive.reports, period),
        "vms": list(vms.values()),
    }


#: What each kind of run left out means, for ``incomplete_reasons``.
_LEFT_OUT_TEXT = {
    "unreadable": "could not be read or trusted (manifest or report.json unreadable, "
    "refused or differing from its manifest)",
    "unsigned": "not signed by a key given (--public-key)",
    "other_identity": "of another cluster identity (--cluster-uid)",
    "unknown_identity": "with no cluster identity recorded, left out with --cluster-uid",
}


def _incomplete_reasons(left_out: dict[str, int], runs_incomplete: list[str]) -> list[str]:
    """One line per reason the period's figures rest on less than every archived run of the
    cluster's name, each of them whole (empty: complete). A period report that skipped runs
    (an unreadable manifest, another identity) named them only under ``problems``, among
    lines that left nothing out, with nothing saying its figures were incomplete (ux35)."""
    reasons = [
        f"{n} run(s) of the period left out: {_LEFT_OUT_TEXT[kind]}; named under problems"
        for kind, n in left_out.items()
        if n
    ]
    if runs_incomplete:
        reasons.append(
            f"{len(runs_incomplete)} run(s) counted read only part of the cluster "
            f"(run.complete not true): {', '.join(runs_incomplete)}"
        )
    return reasons


def _change(now: dict[str, Any], prev: dict[str, Any] | None) -> dict[str, Any] | None:
    if prev is None:
        return None
    out: dict[str, Any] = {}
    for key in ("vms", "rpo_attained", "rpo_breached", "rpo_unknown", "restore_drills"):
        out[key] = now[key] - prev[key]
    a, b = now["rpo_attainment"], prev["rpo_attainment"]
    out["rpo_attainment"] = None if a is None or b is None else round(a - b, 4)
    return out
