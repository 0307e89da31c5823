"""Settings for an audit, validated with pydantic.

One YAML file configures everything (see ``config/auditor.example.yaml``).
A bad file fails at start with every problem named by its field path
(:class:`ConfigError`); nothing falls back silently to defaults.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError, field_validator, model_validator

from auditor.config.bucket import BackupStorageSettings, BucketLocationSettings
from auditor.config.fields import FieldProblems, error_problems
from auditor.config.publish import publish_problems
from auditor.config.rules import (
    Policy,
    PolicyMatch,
    PolicyOverrides,
    Strict,
    Thresholds,
    Waiver,
    WaiverSelector,
)
from auditor.config.service import (
    ClusterSourceSettings,
    DirectorySourceSettings,
    MetricsSettings,
    ReportSettings,
    Schedule,
    ServiceSettings,
    SourceSettings,
)
from auditor.yamlstrict import LoadError, load_documents

__all__ = [
    "BackupStorageSettings",
    "BucketLocationSettings",
    "Thresholds",
    "Ownership",
    "Policy",
    "PolicyMatch",
    "PolicyOverrides",
    "Waiver",
    "WaiverSelector",
    "SourceSettings",
    "DirectorySourceSettings",
    "ClusterSourceSettings",
    "ReportSettings",
    "Schedule",
    "ServiceSettings",
    "MetricsSettings",
    "AuditSettings",
    "ConfigError",
    "load_settings",
    "parse_settings",
]


class Ownership(Strict):
    """How a VM's owner is resolved: VM label/annotation, namespace label/annotation, map.

    ``keys`` are label or annotation keys tried in order on the VM, then on its
    Namespace; ``namespaces`` maps a namespace to an owner; otherwise
    ``default`` ("unassigned").
    """

    keys: tuple[str, ...] = ("owner", "app.kubernetes.io/owner", "corp.example/owner")
    namespaces: dict[str, str] = Field(default_factory=dict)
    default: str = "unassigned"


def _no_repeats(values: tuple[Any, ...], attr: str) -> None:
    first: dict[str, int] = {}
    for i, item in enumerate(values):
        key = getattr(item, attr)
        if key in first:
            raise ValueError(f"[{i}].{attr} '{key}' repeats [{first[key]}].{attr}")
        first[key] = i


class AuditSettings(Strict):
    """Everything an audit run or the service needs (one YAML file).

    ``thresholds`` is the default recovery policy; ``policies`` override it for
    the VMs they match (see :func:`auditor.policy.resolve_policy`). ``publish``
    is kept loose here (a mapping) and validated by the publishing layer.
    ``backup_storage`` (None: not configured) lets the audit read Velero's
    buckets for capture evidence (:mod:`auditor.sources.bucket`).
    """

    cluster_name: str | None = None
    source: SourceSettings | None = None
    ownership: Ownership = Field(default_factory=Ownership)
    thresholds: Thresholds = Field(default_factory=Thresholds)
    policies: tuple[Policy, ...] = ()
    waivers: tuple[Waiver, ...] = ()
    report: ReportSettings = Field(default_factory=ReportSettings)
    publish: dict[str, Any] | None = None
    schedules: tuple[Schedule, ...] = ()
    service: ServiceSettings = Field(default_factory=ServiceSettings)
    backup_storage: BackupStorageSettings | None = None

    @property
    def signing_key(self) -> Path | None:
        """``publish.signing_key_file`` (an Ed25519 private key, PEM) when the config has one."""
        raw = (self.publish or {}).get("signing_key_file")
        return Path(raw) if isinstance(raw, str | Path) and str(raw) else None

    @field_validator("policies")
    @classmethod
    def _policy_names(cls, value: tuple[Policy, ...]) -> tuple[Policy, ...]:
        _no_repeats(value, "name")
        return value

    @field_validator("waivers")
    @classmethod
    def _waiver_ids(cls, value: tuple[Waiver, ...]) -> tuple[Waiver, ...]:
        _no_repeats(value, "id")
        return value

    @field_validator("schedules")
    @classmethod
    def _schedule_ids(cls, value: tuple[Schedule, ...]) -> tuple[Schedule, ...]:
        _no_repeats(value, "id")
        return value

    @model_validator(mode="after")
    def _published_runs_have_json(self) -> AuditSettings:
        """A schedule that publishes writes ``json``: report.json is the run's envelope, which
        sealing, ``history``, ``report --period`` and ``fleet`` read; without it every run
        failed to publish at its hour (trial ux30)."""
        for i, sched in enumerate(self.schedules):
            formats = sched.formats or self.report.formats
            if (sched.publish or sched.period_report) and "json" not in formats:
                where = f"schedules.{i}.formats" if sched.formats else "report.formats"
                raise FieldProblems(
                    [
                        (
                            where,
                            f"schedule {sched.id!r} publishes, so its formats must include "
                            f"json (report.json is what a published run is read by); it has "
                            f"{', '.join(formats)}",
                        )
                    ]
                )
        return self


class ConfigError(Exception):
    """The configuration file is unreadable or invalid.

    ``problems`` lists ``(field_path, message)`` pairs, e.g.
    ``("thresholds.rpo_hours", "Input should be greater than 0")``.
    """

    def __init__(self, path: Path, problems: list[tuple[str, str]]) -> None:
        self.path = path
        self.problems = problems
        lines = "\n".join(f"  {field}: {msg}" for field, msg in problems)
        super().__init__(f"invalid configuration {path}:\n{lines}")


_MESSAGES = {
    "extra_forbidden": "unknown field (not a setting; check its spelling and indentation)",
    "missing": "required field is missing",
}


def _problems(exc: ValidationError) -> list[tuple[str, str]]:
    """Turn pydantic errors into ``(dotted.field.path, message)`` pairs."""
    out: list[tuple[str, str]] = []
    for err in exc.errors():
        msg = _MESSAGES.get(err["type"], err["msg"]).removeprefix("Value error, ")
        out += [(path or "<root>", text) for path, text in error_problems(err, msg)]
    return out


def parse_settings(
    raw: Any,
    *,
    path: Path,
    known_check_ids: Collection[str] | None = None,
    platform_check_ids: Collection[str] = (),
) -> AuditSettings:
    """Validate an already parsed YAML mapping (``path`` is only used in errors).

    ``known_check_ids``: when given, a waiver naming another check id is refused;
    ``platform_check_ids``: a waiver naming one of these (cluster-wide checks) is refused.

    Raises:
        ConfigError: every invalid field, by dotted path.
    """
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError(path, [("<root>", "must be a mapping")])
    context = {
        "known_check_ids": None if known_check_ids is None else frozenset(known_check_ids),
        "platform_check_ids": frozenset(platform_check_ids),
    }
    # the publish: section is checked here too, so validate-config and serve name its problems
    extra = publish_problems(raw.get("publish"), raw.get("schedules"))
    try:
        settings = AuditSettings.model_validate(raw, context=context)
    except ValidationError as exc:
        raise ConfigError(path, _problems(exc) + extra) from exc
    if extra:
        raise ConfigError(path, extra)
    return settings


def load_settings(
    path: Path,
    *,
    known_check_ids: Collection[str] | None = None,
    platform_check_ids: Collection[str] = (),
) -> AuditSettings:
    """Load and validate a YAML settings file.

    ``known_check_ids``: the check catalog's ids; a waiver naming any other id
    is refused (``None`` checks only the id's form). ``platform_check_ids``: the
    cluster-wide checks; a waiver naming one is refused (it would waive nothing).

    Raises:
        ConfigError: the file cannot be read or parsed, holds no settings (empty or only
            comments: ``{}`` says "the defaults" on purpose), or a field is invalid (every
            invalid field is listed with its dotted path).
    """
    # The same strict loader as exports: a key written twice is an error, not "last wins".
    try:
        docs = list(load_documents(path, max_bytes=16 * 1024 * 1024))
    except LoadError as exc:
        text = str(exc)
        text = f"not valid YAML: {text}" if text.startswith("YAML error") else text
        raise ConfigError(path, [("<file>", text)]) from exc
    if len(docs) > 1:
        raise ConfigError(path, [("<file>", f"holds {len(docs)} YAML documents; expected one")])
    if not docs or docs[0] is None:
        # a 0-byte or comment-only file (a ConfigMap mounted empty, a file cut short) would
        # audit with the defaults and drop every policy and waiver it was meant to hold
        raise ConfigError(
            path,
            [
                (
                    "<file>",
                    "holds no settings (empty, or only comments): a cut or blanked config "
                    "would audit with the defaults; give no --config for the defaults, or "
                    "write '{}' to say so",
                )
            ],
        )
    raw: Any = docs[0]
    return parse_settings(
        raw, path=path, known_check_ids=known_check_ids, platform_check_ids=platform_check_ids
    )
