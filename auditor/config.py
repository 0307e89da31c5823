"""Settings for an audit, validated with pydantic.

One YAML file configures everything (see ``config/auditor.example.yaml``).
A bad file fails at start with every problem named by its field path
(:class:`ConfigError`); nothing falls back silently to defaults.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = [
    "Thresholds",
    "Ownership",
    "AuditSettings",
    "ConfigError",
    "load_settings",
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Thresholds(_Strict):
    """Recovery policy thresholds (the default policy).

    ``rpo_hours``: newest usable backup must have completed within this many hours.
    ``restore_test_max_age_days``: a completed restore test must be this recent.
    ``min_restore_points``: usable backups holding the VM object (reported; not yet a FAIL).
    """

    rpo_hours: float = Field(default=24.0, gt=0)
    restore_test_max_age_days: int = Field(default=30, gt=0)
    min_restore_points: int = Field(default=1, ge=0)


class Ownership(_Strict):
    """How a VM's owner is resolved: VM label/annotation, namespace label/annotation, map.

    ``keys`` are label or annotation keys tried in order on the VM, then on its
    Namespace; ``namespaces`` maps a namespace to an owner; otherwise
    ``default`` ("unassigned").
    """

    keys: tuple[str, ...] = ("owner", "app.kubernetes.io/owner", "corp.example/owner")
    namespaces: dict[str, str] = Field(default_factory=dict)
    default: str = "unassigned"


class AuditSettings(_Strict):
    """Everything an audit run needs beyond its source and audit time."""

    cluster_name: str | None = None
    thresholds: Thresholds = Field(default_factory=Thresholds)
    ownership: Ownership = Field(default_factory=Ownership)


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


def load_settings(path: Path) -> AuditSettings:
    """Load and validate a YAML settings file.

    Raises:
        ConfigError: the file cannot be read or parsed, or a field is invalid
            (every invalid field is listed with its dotted path).
    """
    try:
        raw: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(path, [("<file>", str(exc))]) from exc
    except yaml.YAMLError as exc:
        raise ConfigError(path, [("<file>", f"not valid YAML: {exc}")]) from exc
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError(path, [("<root>", "must be a mapping")])
    try:
        return AuditSettings.model_validate(raw)
    except ValidationError as exc:
        problems = [
            (".".join(str(p) for p in err["loc"]) or "<root>", err["msg"]) for err in exc.errors()
        ]
        raise ConfigError(path, problems) from exc
