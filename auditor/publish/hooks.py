"""Entry points for the rest of the auditor: the ``publish:`` config section and ``serve``.

``publish:`` in the YAML config is a mapping with the fields of
:class:`~auditor.config.publish.PublishSettings`, plus an optional ``url``
(``s3://BUCKET/PREFIX`` or a directory) instead of ``bucket``/``prefix``/``local_dir``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from auditor.config import AuditSettings
from auditor.config.fields import error_problems
from auditor.config.publish import PublishSettings
from auditor.publish.errors import ConflictError, PublishError, StoreConfigError
from auditor.publish.publisher import PublishResult, open_store, publish_run, refused_note
from auditor.publish.trend import TREND_NAME, dump_trend, trend_for

__all__ = ["publish_settings", "service_publisher"]

log = logging.getLogger(__name__)


def publish_settings(raw: Mapping[str, Any]) -> PublishSettings:
    """Validate the ``publish:`` config mapping.

    Raises:
        StoreConfigError: a field is invalid; every problem is named
            ``publish.<field>: <message>``.
    """
    values = dict(raw)
    url = values.pop("url", None)
    try:
        if url is not None:
            if not isinstance(url, str):
                raise StoreConfigError("publish.url: must be a string")
            return PublishSettings.from_url(url, **values)
        return PublishSettings.model_validate(values)
    except ValidationError as exc:
        problems = "; ".join(
            f"publish.{where}: {text}" if where else f"publish: {text}"
            for e in exc.errors()
            for where, text in error_problems(e, str(e["msg"]).removeprefix("Value error, "))
        )
        raise StoreConfigError(problems) from None
    except ValueError as exc:
        raise StoreConfigError(f"publish.url: {exc}") from None


def service_publisher(
    settings: AuditSettings,
    report: dict[str, Any],
    artifacts: Path,
    *,
    should_stop: Callable[[], bool] | None = None,
) -> None:
    """Publish a finished run directory for ``auditor serve`` (its ``Publisher`` signature).

    Writes ``trend.json`` first when missing (best effort; the production runner,
    :func:`auditor.pipeline.run_audit`, has already written it and rendered the
    trend into the HTML/PDF), then :func:`publish_run`.

    ``should_stop`` is checked between objects: when the shutdown grace ended,
    publishing stops and the run waits in the spool for the next start.

    Raises:
        StoreConfigError: no ``publish:`` section, invalid settings, or the target is
            misconfigured (no such bucket, no Object Lock for the lock mode asked...): the
            run is not spooled, since no retry could deliver it (``refused_note`` says so;
            ``auditor run`` exits 2 for the same fault, docs/exit-codes.md).
        PublishError: the run was not published (it is in the spool; the next run
            delivers it first).
        ConflictError: the run conflicts with the archive and was quarantined.
    """
    if settings.publish is None:
        raise StoreConfigError("no publish: section in the configuration")
    target = publish_settings(settings.publish)
    store = open_store(target)
    added: tuple[str, ...] = ()
    if not (artifacts / TREND_NAME).exists():
        trend = trend_for(report, target, store=store)
        if trend is not None:
            (artifacts / TREND_NAME).write_bytes(dump_trend(trend))
            added = (TREND_NAME,)
    result: PublishResult = publish_run(
        artifacts,
        target,
        store=store,
        should_stop=should_stop or (lambda: False),
        added=added,
        refuse_misconfigured=True,
    )
    if result.refused:
        # no retry delivers it until the target is changed: not spooled (as `auditor run`)
        raise StoreConfigError(
            f"run {result.run_id} not published to {result.location}: {result.error}; "
            f"{refused_note(result)}"
        )
    if result.quarantined is not None:
        raise ConflictError(
            f"run {result.run_id} quarantined at {result.quarantined}: {result.error}"
        )
    if not result.published:
        raise PublishError(f"run {result.run_id} spooled at {result.spooled}: {result.error}")
    log.info("published run %s to %s", result.run_id, result.location)
