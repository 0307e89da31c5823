"""The period report a scheduled run adds to itself (``schedules[].period_report``).

``auditor serve``'s monthly schedule builds the report of the month before its slot
from the runs archived at the ``publish:`` target (as ``auditor report --period``
does) and writes it into the run's own folder, ``period-YYYY-MM/``. The run folder is
then sealed again, so the period report is listed in the run's ``manifest.json``,
signed with it and published next to the month's runs, under the same retention.
"""

from __future__ import annotations

import logging
import zoneinfo
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from auditor.config import AuditSettings
from auditor.period.archive import Archive, Period, read_with_previous
from auditor.period.compute import compute_period
from auditor.period.render import FORMATS, write_period
from auditor.publish import StoreConfigError, publish_settings
from auditor.publish.identity import IdentityConflict
from auditor.publish.manifest import cluster_segment, seal_run
from auditor.publish.signing import load_public_key

__all__ = ["previous_period", "archive_source", "add_period_report", "period_for_run"]

log = logging.getLogger(__name__)

_TARGET_KEYS = ("url", "bucket", "prefix", "local_dir")


def previous_period(slot: datetime, timezone: str = "UTC") -> Period:
    """The month before the one ``slot`` falls in, in ``timezone`` (an IANA name).

    A slot at 00:30 on 1 December in Europe/Berlin (23:30 UTC on 30 November) reports
    on November, as its schedule means.
    """
    local = slot.astimezone(zoneinfo.ZoneInfo(timezone))
    return Period(local.year, local.month).previous()


def archive_source(publish: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """``(source, store_options)`` for :func:`read_period` from the ``publish:`` section.

    Raises:
        auditor.publish.StoreConfigError: the section is invalid.
    """
    target = publish_settings(publish)
    if target.is_s3:
        source = f"s3://{target.bucket}/{target.prefix}".rstrip("/")
    else:
        source = str(target.local_dir / target.prefix if target.prefix else target.local_dir)
    return source, {k: v for k, v in publish.items() if k not in _TARGET_KEYS}


def add_period_report(
    settings: AuditSettings,
    report: dict[str, Any],
    run_dir: Path,
    slot: datetime,
    timezone: str = "UTC",
    formats: Sequence[str] = FORMATS,
    public_keys: Sequence[Path] = (),
    as_of: datetime | None = None,
) -> list[Path]:
    """Write the previous month's period report of ``report``'s cluster into ``run_dir``.

    Returns the files written (none when the archive holds no run of that month; a
    warning says so). ``formats``: those of :data:`~auditor.period.FORMATS` to write
    (json always). Reseals ``run_dir`` (``publish.signing_key_file`` signs).
    ``public_keys``: PEM files; with any, only runs whose manifest one of them signed count.
    ``as_of``: when the report is built (default ``slot``); a month that has not ended in UTC
    by then (a schedule east of UTC firing on the 1st local time) is marked ``partial``.

    Raises:
        auditor.publish.PublishError: no ``publish:`` section, or the archive unreadable.
        auditor.publish.signing.SigningError: a public key file cannot be read.
        OSError: ``run_dir`` cannot be written.
        auditor.report.pdf.PdfRenderError: the PDF could not be rendered.
    """
    if settings.publish is None:
        raise StoreConfigError("period_report needs a publish: section (the archive it reads)")
    period = previous_period(slot, timezone)
    cluster = cluster_segment((report.get("cluster") or {}).get("name"))
    source, options = archive_source(settings.publish)
    keys = [load_public_key(p) for p in public_keys]
    archive, previous = _this_cluster(report, source, cluster, period, options, keys)
    for problem in archive.problems:
        log.warning("period report %s: %s", period.label, problem)
    if not archive.reports:
        log.warning("period report %s: no run of %s archived at %s", period.label, cluster, source)
        return []
    doc = compute_period(archive, period, cluster, previous, as_of=as_of or slot)
    if doc["partial"]:
        log.warning(
            "period report %s is partial: built at %s, before the month ended at %s (UTC); "
            "schedule the monthly run after 00:00 UTC on the 1st for a complete month",
            period.label,
            doc["as_of"],
            doc["end"],
        )
    if not doc["complete"]:
        log.warning(
            "period report %s is incomplete: %s", period.label, "; ".join(doc["incomplete_reasons"])
        )
    wanted = tuple(f for f in FORMATS if f == "json" or f in formats)
    written = write_period(doc, run_dir / f"period-{period.label}", wanted)
    seal_run(run_dir, settings.signing_key)
    log.info("period report %s of %s: %d runs, %s", period.label, cluster, len(archive.reports),
             ", ".join(p.name for p in written))  # fmt: skip
    return written


def _this_cluster(
    report: dict[str, Any],
    source: str,
    cluster: str,
    period: Period,
    options: dict[str, Any],
    keys: Sequence[Any],
) -> tuple[Archive, Archive | None]:
    """The month's runs of the cluster ``report`` audited, never another's sharing its name.

    Its identity (``cluster.uid``) is chosen only when the month holds runs of another known
    identity: otherwise runs of unknown identity (archived before identities were recorded)
    count too, named (:mod:`auditor.publish.identity`).

    Raises:
        IdentityConflict: two identities and this run's own is unknown.
    """
    uid = (report.get("cluster") or {}).get("uid")
    uid = uid if isinstance(uid, str) and uid else None
    try:
        archive, previous = read_with_previous(
            source, cluster, period, store_options=options, public_keys=keys
        )
        if uid is None or archive.cluster_uid in (None, uid):
            return archive, previous
    except IdentityConflict:
        if uid is None:
            raise
    return read_with_previous(
        source, cluster, period, store_options=options, public_keys=keys, cluster_uid=uid
    )


def period_for_run(
    settings: AuditSettings,
    report: dict[str, Any],
    run_dir: Path,
    slot: datetime,
    timezone: str = "UTC",
    formats: Sequence[str] = FORMATS,
    public_keys: Sequence[Path] = (),
    as_of: datetime | None = None,
) -> list[Path]:
    """:func:`add_period_report` for ``serve``: a failure is logged, never raised.

    The audit of the slot stands on its own; a period report that cannot be built (the
    archive unreachable, the PDF renderer failing) must not discard it.
    """
    try:
        return add_period_report(
            settings, report, run_dir, slot, timezone, formats, public_keys, as_of
        )
    except Exception:
        log.exception("period report for %s not written", run_dir.name)
        return []
