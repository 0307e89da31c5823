"""Which recovery policy (thresholds) applies to a VM.

The top-level ``thresholds`` are the policy named ``default``. Each entry of
``policies`` overrides some thresholds for the VMs it matches: a namespace glob
(any of ``match.namespaces``) and equal labels (all of ``match.labels``).

When several policies match, the most specific wins, compared in this order:

1. more label requirements;
2. a namespace named exactly beats a glob, which beats no namespace constraint;
3. the longer literal part of the matching namespace pattern (``fin-prod-*`` beats ``fin-*``);
4. on a full tie, the policy listed first.
"""

from __future__ import annotations

from collections.abc import Mapping
from fnmatch import fnmatchcase

from auditor.config import AuditSettings, Policy, Thresholds

__all__ = ["resolve_policy", "specificity", "DEFAULT_POLICY"]

DEFAULT_POLICY = "default"
_GLOB_CHARS = frozenset("*?[")


def _namespace_score(policy: Policy, namespace: str) -> tuple[int, int] | None:
    """Return ``(exactness, literal_length)`` of the best matching pattern, None if none match.

    exactness: 0 no namespace constraint, 1 glob, 2 exact name.
    """
    if not policy.match.namespaces:
        return (0, 0)
    best: tuple[int, int] | None = None
    for pattern in policy.match.namespaces:
        if not fnmatchcase(namespace, pattern):
            continue
        literal = sum(1 for ch in pattern if ch not in _GLOB_CHARS)
        score = (1 if _GLOB_CHARS & set(pattern) else 2, literal)
        best = score if best is None or score > best else best
    return best


def specificity(
    policy: Policy, namespace: str, labels: Mapping[str, str]
) -> tuple[int, ...] | None:
    """Return how specifically ``policy`` matches the VM (bigger wins), or None if it does not."""
    if any(labels.get(key) != value for key, value in policy.match.labels.items()):
        return None
    ns = _namespace_score(policy, namespace)
    if ns is None:
        return None
    return (len(policy.match.labels), *ns)


def resolve_policy(
    settings: AuditSettings, namespace: str, labels: Mapping[str, str]
) -> tuple[str, Thresholds]:
    """Return ``(policy_name, thresholds)`` for a VM in ``namespace`` with ``labels``.

    ``thresholds`` is the default policy with the winning policy's overrides
    applied; ``policy_name`` is ``"default"`` when no policy matches.
    """
    best: tuple[tuple[int, ...], Policy] | None = None
    for policy in settings.policies:
        score = specificity(policy, namespace, labels)
        if score is not None and (best is None or score > best[0]):
            best = (score, policy)
    if best is None:
        return DEFAULT_POLICY, settings.thresholds
    policy = best[1]
    changes = policy.thresholds.model_dump(exclude_none=True)
    return policy.name, settings.thresholds.model_copy(update=changes)
