"""Compare a report with earlier published runs: the ``trend`` dict (``trend.json``).

Read back from the archive only (no database): the previous run, the run a
calendar month earlier (the newest run at or before that moment and at most
:data:`MONTH_TOLERANCE_DAYS` older), and readiness counts of the last 12 runs.
Only runs with the same ``owner_filter`` and the same cluster identity (``cluster_uid``,
the kube-system uid; runs of unknown identity only with a report of unknown identity:
:mod:`auditor.publish.identity`) as the report are compared. The shape
is documented in ``docs/publishing.md``.
"""

from __future__ import annotations

import calendar
import json
import logging
from datetime import UTC, datetime, timedelta
from itertools import islice
from pathlib import Path
from typing import Any

from auditor.config.publish import PublishSettings
from auditor.publish.errors import PublishError, RunDirError
from auditor.publish.history import (
    RunEntry,
    iter_entries_newest_first,
    read_report,
    run_keys,
)
from auditor.publish.manifest import cluster_segment, run_prefix
from auditor.publish.publisher import open_store
from auditor.publish.store import ObjectStore

__all__ = [
    "compute_trend",
    "compare_reports",
    "dump_trend",
    "write_trend",
    "trend_for",
    "TREND_NAME",
    "MONTH_TOLERANCE_DAYS",
    "SERIES_LENGTH",
]

TREND_NAME = "trend.json"
log = logging.getLogger(__name__)
MONTH_TOLERANCE_DAYS = 7
SERIES_LENGTH = 12
_FIXED = {"PASS", "NOT_APPLICABLE", "WAIVED"}


def _parse(ts: str) -> datetime:
    return datetime.strptime(ts, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def _month_earlier(at: datetime) -> datetime:
    year, month = (at.year, at.month - 1) if at.month > 1 else (at.year - 1, 12)
    day = min(at.day, calendar.monthrange(year, month)[1])
    return at.replace(year=year, month=month, day=day)


def _vm_map(report: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(vm["namespace"], vm["name"]): vm for vm in report.get("vms") or []}


def _fails(vm: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["check_id"]: f for f in vm.get("findings") or [] if f.get("status") == "FAIL"}


def compare_reports(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """What changed from ``old`` to ``new`` (two report.json envelopes).

    Returns ``{became_not_ready, recovered, gaps_fixed, new_gaps, added_vms,
    removed_vms, readiness_delta}``; lists are sorted by namespace, name, check.
    """
    old_vms, new_vms = _vm_map(old), _vm_map(new)
    became, recovered, fixed, gaps = [], [], [], []
    for key in sorted(old_vms.keys() & new_vms.keys()):
        before, after = old_vms[key], new_vms[key]
        ident = {"namespace": key[0], "name": key[1]}
        was, now = before.get("readiness"), after.get("readiness")
        if now == "NOT_READY" and was != "NOT_READY":
            became.append({**ident, "was": was})
        elif was == "NOT_READY" and now != "NOT_READY":
            recovered.append({**ident, "now": now})
        old_fails, new_fails = _fails(before), _fails(after)
        statuses = {f["check_id"]: f.get("status") for f in after.get("findings") or []}
        for check_id in sorted(old_fails.keys() - new_fails.keys()):
            if statuses.get(check_id) in _FIXED:
                sev = old_fails[check_id].get("severity")
                fixed.append(
                    {**ident, "check_id": check_id, "severity": sev, "now": statuses[check_id]}
                )
        old_statuses = {f["check_id"]: f.get("status") for f in before.get("findings") or []}
        for check_id in sorted(new_fails.keys() - old_fails.keys()):
            gaps.append(
                {
                    **ident,
                    "check_id": check_id,
                    "severity": new_fails[check_id].get("severity"),
                    "was": old_statuses.get(check_id),
                }
            )
    old_counts = (old.get("summary") or {}).get("readiness") or {}
    new_counts = (new.get("summary") or {}).get("readiness") or {}
    return {
        "became_not_ready": became,
        "recovered": recovered,
        "gaps_fixed": fixed,
        "new_gaps": gaps,
        "added_vms": [
            {"namespace": k[0], "name": k[1], "readiness": new_vms[k].get("readiness")}
            for k in sorted(new_vms.keys() - old_vms.keys())
        ],
        "removed_vms": [
            {"namespace": k[0], "name": k[1]} for k in sorted(old_vms.keys() - new_vms.keys())
        ],
        "readiness_delta": {
            state: int(new_counts.get(state, 0)) - int(old_counts.get(state, 0))
            for state in sorted(set(old_counts) | set(new_counts))
        },
    }


def _current_brief(report: dict[str, Any]) -> dict[str, Any]:
    run, summary = report["run"], report.get("summary") or {}
    cluster = cluster_segment((report.get("cluster") or {}).get("name"))
    return {
        "run_id": run["id"],
        "audit_time": run["audit_time"],
        "cluster_uid": _uid(report),
        "vms": summary.get("vms"),
        "readiness": dict(summary.get("readiness") or {}),
        "prefix": run_prefix(cluster, run["id"], run["audit_time"]) + "/",
    }


def _uid(report: dict[str, Any]) -> str | None:
    """report.json ``cluster.uid`` (None: unknown, or a report written before it existed)."""
    about = report.get("cluster")
    uid = about.get("uid") if isinstance(about, dict) else None
    return uid if isinstance(uid, str) and uid else None


def compute_trend(report: dict[str, Any], store: ObjectStore) -> dict[str, Any]:
    """Build the trend dict of ``report`` against the runs published in ``store``.

    Runs at or after the report's audit time are ignored, so re-computing
    after the report itself was published gives the same result. Runs of another cluster
    identity (another cluster that shares the name) are never compared: only runs whose
    manifest records the report's ``cluster.uid`` (both unknown counts as the same).

    An archived manifest that cannot be read is named in ``problems`` and skipped.

    Raises:
        PublishError: the archive cannot be read; VerificationError when an
            archived report.json does not match its manifest's digest.
    """
    cluster = cluster_segment((report.get("cluster") or {}).get("name"))
    current = _current_brief(report)
    at = _parse(current["audit_time"])
    owner = report["run"].get("owner_filter")
    keys = [k for k in run_keys(store, cluster) if k.stamp < at.strftime("%Y%m%dT%H%M%SZ")]

    uid = _uid(report)

    def same_scope(entry: RunEntry) -> bool:
        return bool(entry.owner_filter == owner) and entry.cluster_uid == uid

    # an unreadable manifest is named and skipped, never the end of the trend (trial ux34)
    unreadable: list[str] = []
    series = list(
        islice(iter_entries_newest_first(store, keys, same_scope, unreadable), SERIES_LENGTH - 1)
    )
    target = _month_earlier(at)
    low = (target - timedelta(days=MONTH_TOLERANCE_DAYS)).strftime("%Y%m%dT%H%M%SZ")
    high = target.strftime("%Y%m%dT%H%M%SZ")
    window = [k for k in keys if low <= k.stamp <= high]
    month_ago = next(iter_entries_newest_first(store, window, same_scope, unreadable), None)
    previous = series[0] if series else None

    def versus(entry: RunEntry | None) -> dict[str, Any] | None:
        return compare_reports(read_report(store, entry), report) if entry else None

    return {
        "trend_version": "1.0",
        "cluster": cluster,
        "cluster_uid": uid,
        "owner_filter": owner,
        "current": current,
        "previous": previous.brief() if previous else None,
        "month_ago": month_ago.brief() if month_ago else None,
        "vs_previous": versus(previous),
        "vs_month_ago": versus(month_ago),
        "series": [e.brief() for e in reversed(series)] + [current],
        # manifests skipped as unreadable: "previous" may then be an older run than the last
        "problems": sorted(set(unreadable)),
    }


def dump_trend(trend: dict[str, Any]) -> bytes:
    """Canonical ``trend.json`` bytes (sorted keys, two-space indent, UTF-8, newline)."""
    return (json.dumps(trend, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def write_trend(run_dir: Path, store: ObjectStore) -> dict[str, Any]:
    """Compute the trend of ``run_dir/report.json`` against ``store``; write ``trend.json``.

    Raises:
        RunDirError: report.json is missing or invalid.
        PublishError: the archive cannot be read or fails verification.
    """
    path = run_dir / "report.json"
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RunDirError(f"{path}: cannot read report: {exc}") from None
    trend = compute_trend(report, store)
    (run_dir / TREND_NAME).write_bytes(dump_trend(trend))
    return trend


def trend_for(
    report: dict[str, Any], target: PublishSettings, *, store: ObjectStore | None = None
) -> dict[str, Any] | None:
    """The trend of ``report`` against ``target``'s archive, or None when it cannot be read.

    For ``auditor run --publish``: call before rendering, pass the result to
    ``write_artifacts(..., trend=...)``, write it as ``trend.json``, then
    :func:`~auditor.publish.publish_run`. An unreadable archive is logged as a
    warning, never fatal: the run is still published (or spooled).
    """
    try:
        return compute_trend(report, store if store is not None else open_store(target))
    except PublishError as exc:
        log.warning("trend not computed, archive %s unreadable: %s", target.describe(), exc)
        return None
