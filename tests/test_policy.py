"""Recovery policy resolution: default, overrides, most specific wins."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from auditor.config import AuditSettings, parse_settings
from auditor.policy import resolve_policy


def settings(*policies: dict[str, Any]) -> AuditSettings:
    return parse_settings(
        {
            "thresholds": {
                "rpo_hours": 24,
                "min_restore_points": 3,
                "require_off_cluster_copy": True,
            },
            "policies": list(policies),
        },
        path=Path("t.yaml"),
    )


def pol(
    name: str,
    namespaces: list[str] | None = None,
    labels: dict[str, str] | None = None,
    **thresholds: Any,
) -> dict[str, Any]:
    match: dict[str, Any] = {}
    if namespaces:
        match["namespaces"] = namespaces
    if labels:
        match["labels"] = labels
    return {"name": name, "match": match, "thresholds": thresholds}


def test_no_policies_gives_default() -> None:
    name, th = resolve_policy(settings(), "apps", {})
    assert name == "default" and th.rpo_hours == 24 and th.min_restore_points == 3


def test_override_keeps_unset_thresholds_from_default() -> None:
    s = settings(pol("gold", ["finance-*"], rpo_hours=4))
    name, th = resolve_policy(s, "finance-prod", {})
    assert name == "gold"
    assert (th.rpo_hours, th.min_restore_points, th.require_off_cluster_copy) == (4, 3, True)
    assert resolve_policy(s, "finance", {})[0] == "default"  # glob needs the dash


def test_labels_must_all_match() -> None:
    s = settings(pol("bronze", labels={"tier": "bronze", "env": "dev"}, rpo_hours=72))
    assert resolve_policy(s, "a", {"tier": "bronze"})[0] == "default"
    assert resolve_policy(s, "a", {"tier": "bronze", "env": "dev", "x": "y"})[0] == "bronze"


def test_most_specific_wins_regardless_of_order() -> None:
    s = settings(
        pol("any-fin", ["fin*"], rpo_hours=12),
        pol("fin-prod-glob", ["fin-prod-*"], rpo_hours=8),
        pol("fin-prod-exact", ["fin-prod-01"], rpo_hours=6),
        pol("label", labels={"tier": "gold"}, rpo_hours=2),
        pol("label-and-ns", ["fin*"], labels={"tier": "gold"}, rpo_hours=1),
    )
    assert resolve_policy(s, "fin-dev", {})[0] == "any-fin"
    assert resolve_policy(s, "fin-prod-02", {})[0] == "fin-prod-glob"
    assert resolve_policy(s, "fin-prod-01", {})[0] == "fin-prod-exact"
    assert resolve_policy(s, "other", {"tier": "gold"})[0] == "label"
    name, th = resolve_policy(s, "fin-prod-01", {"tier": "gold"})
    assert (name, th.rpo_hours) == ("label-and-ns", 1)


def test_full_tie_goes_to_first_listed() -> None:
    s = settings(pol("first", ["a-*"], rpo_hours=1), pol("second", ["a-*"], rpo_hours=2))
    assert resolve_policy(s, "a-1", {})[0] == "first"


def test_any_of_several_namespace_globs() -> None:
    s = settings(pol("p", ["x", "y-*"], require_off_cluster_copy=False))
    assert resolve_policy(s, "y-1", {})[1].require_off_cluster_copy is False
    assert resolve_policy(s, "x", {})[0] == "p"
    assert resolve_policy(s, "z", {})[0] == "default"


def test_every_threshold_can_be_overridden_within_its_bounds() -> None:
    """Overrides derive from Thresholds: a new threshold needs no second declaration."""
    from auditor.config import ConfigError, PolicyOverrides, Thresholds

    assert list(PolicyOverrides.model_fields) == list(Thresholds.model_fields)
    changed = {
        "rpo_hours": 4.0,
        "min_retention_hours": 720.0,
        "min_restore_points": 7,
        "restore_test_max_age_days": 90,
        "require_off_cluster_copy": False,
        "require_application_consistent": True,
        "require_immutable_backups": True,
    }
    assert set(changed) == set(Thresholds.model_fields)
    name, got = resolve_policy(settings(pol("all", ["db"], **changed)), "db", {})
    assert name == "all" and got.model_dump() == changed
    for field, bad in (("rpo_hours", 0), ("min_restore_points", -1), ("rpo_hours", "soon")):
        with pytest.raises(ConfigError) as refused:
            settings(pol("bad", ["db"], **{field: bad}))
        assert [p for p, _ in refused.value.problems] == [f"policies.0.thresholds.{field}"]
