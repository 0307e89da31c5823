"""Velero scope semantics: does a Backup, Schedule template or Restore include an object?

Implements the filters documented for Velero Backup/Restore specs
(https://velero.io/docs/main/api-types/backup/ and
https://velero.io/docs/main/resource-filtering/): ``includedNamespaces`` /
``excludedNamespaces`` (``*`` and globs), ``includedResources`` /
``excludedResources`` (plural, singular, kind, short name, optionally
``.group``), ``labelSelector`` (matchLabels + matchExpressions) and
``orLabelSelectors`` (any one matches).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

__all__ = ["Scope", "selector_matches", "SelectorError"]

_SHORT_NAMES = {
    "pvc": "persistentvolumeclaims",
    "pv": "persistentvolumes",
    "vm": "virtualmachines",
    "vms": "virtualmachines",
    "vmi": "virtualmachineinstances",
    "vmis": "virtualmachineinstances",
    "dv": "datavolumes",
    "dvs": "datavolumes",
    "ns": "namespaces",
}


class SelectorError(ValueError):
    """A label selector is malformed (unknown operator, wrong types)."""


def _str_list(spec: dict[str, Any], key: str) -> list[str]:
    """A list-of-strings filter field; absent or null means no filter.

    Raises:
        SelectorError: the field is present but not a list of strings (a malformed
            filter must never widen into "everything").
    """
    value = spec.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise SelectorError(f"{key} is not a list of strings")
    return list(value)


@dataclass(frozen=True)
class Scope:
    """The object filters of one Velero Backup spec, Schedule template or Restore spec."""

    included_namespaces: tuple[str, ...]
    excluded_namespaces: tuple[str, ...]
    included_resources: tuple[str, ...]
    excluded_resources: tuple[str, ...]
    label_selector: Mapping[str, Any] | None
    or_label_selectors: tuple[Mapping[str, Any], ...]
    # Answers already given: every VM and PVC of an audit asks each Backup the same few
    # questions (its namespace, the same handful of resource types), and the filters are
    # fixed once built.
    _namespaces: dict[str, bool] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _resources: dict[tuple[str, str, str], bool] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    @classmethod
    def from_spec(cls, spec: Any) -> Scope:
        """Build from a Backup/Restore ``spec`` (or a Schedule's ``spec.template``).

        Raises:
            SelectorError: a filter field has the wrong type (the object's scope is unknown).
        """
        if spec is None:
            spec = {}
        if not isinstance(spec, dict):
            raise SelectorError("spec is not a mapping")
        ls = spec.get("labelSelector")
        ors = spec.get("orLabelSelectors")
        if ls is not None and not isinstance(ls, dict):
            raise SelectorError("labelSelector is not a mapping")
        if ors is not None and not (
            isinstance(ors, list) and all(isinstance(s, dict) for s in ors)
        ):
            raise SelectorError("orLabelSelectors is not a list of selectors")
        return cls(
            included_namespaces=tuple(_str_list(spec, "includedNamespaces")),
            excluded_namespaces=tuple(_str_list(spec, "excludedNamespaces")),
            included_resources=tuple(r.lower() for r in _str_list(spec, "includedResources")),
            excluded_resources=tuple(r.lower() for r in _str_list(spec, "excludedResources")),
            label_selector=ls if isinstance(ls, dict) else None,
            or_label_selectors=tuple(s for s in ors if isinstance(s, dict))
            if isinstance(ors, list)
            else (),
        )

    def namespace_included(self, namespace: str) -> bool:
        """True if objects in ``namespace`` pass the namespace filters."""
        known = self._namespaces.get(namespace)
        if known is None:
            inc = self.included_namespaces
            known = self._namespaces[namespace] = (
                not inc or any(fnmatchcase(namespace, pat) for pat in inc)
            ) and not any(fnmatchcase(namespace, pat) for pat in self.excluded_namespaces)
        return known

    def namespace_by_pattern_only(self, namespace: str) -> bool:
        """True if ``namespace`` is included only through a glob other than ``*``.

        Velero before 1.18 does not expand such patterns when it collects items: it
        lists the literal namespace ``team-*`` and backs up nothing
        (https://github.com/vmware-tanzu/velero/blob/main/changelogs/CHANGELOG-1.18.md,
        "Implement wildcard namespace pattern expansion", velero#9255).
        """
        inc = self.included_namespaces
        if not inc or "*" in inc or namespace in inc:
            return False
        return any(fnmatchcase(namespace, pat) for pat in inc)

    def resource_included(self, plural: str, kind: str, group: str) -> bool:
        """True if the resource type passes ``includedResources``/``excludedResources``."""
        key = (plural, kind, group)
        known = self._resources.get(key)
        if known is None:
            known = self._resources[key] = self._resource_included(plural, kind, group)
        return known

    def _resource_included(self, plural: str, kind: str, group: str) -> bool:
        names = {plural, kind.lower(), kind.lower() + "s"}
        qualified = {f"{n}.{group}" for n in names} if group else set()

        def hit(entry: str) -> bool:
            entry = _SHORT_NAMES.get(entry, entry)
            return entry == "*" or entry in names or entry in qualified

        if self.included_resources and not any(hit(e) for e in self.included_resources):
            return False
        return not any(hit(e) for e in self.excluded_resources if e != "*")

    def labels_match(self, labels: Mapping[str, str]) -> bool:
        """True if ``labels`` satisfy the selectors (no selector matches everything).

        Raises:
            SelectorError: a selector is malformed.
        """
        if self.or_label_selectors:
            return any(selector_matches(s, labels) for s in self.or_label_selectors)
        if self.label_selector is not None:
            return selector_matches(self.label_selector, labels)
        return True

    def includes(
        self, *, namespace: str, labels: Mapping[str, str], plural: str, kind: str, group: str
    ) -> bool:
        """True if an object with these coordinates is inside this scope.

        Raises:
            SelectorError: a selector is malformed.
        """
        return (
            self.namespace_included(namespace)
            and self.resource_included(plural, kind, group)
            and self.labels_match(labels)
        )


def selector_matches(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """Evaluate a Kubernetes LabelSelector against ``labels``.

    The fields are read as the API server and Velero read them (``metav1.LabelSelector``:
    string label values, ``values`` a list of strings, given for ``In``/``NotIn`` and only
    for them, as ``metav1.LabelSelectorAsSelector`` requires,
    https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#resources-that-support-set-based-requirements);
    anything else is no selector Velero could have used, never a guess at one.

    Raises:
        SelectorError: unknown operator or malformed fields.
    """
    match_labels = selector.get("matchLabels") or {}
    if not isinstance(match_labels, dict):
        raise SelectorError("matchLabels is not a mapping")
    for key, value in match_labels.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise SelectorError(f"matchLabels entry {key!r} is not a string label")
    for key, value in match_labels.items():
        if labels.get(key) != value:
            return False
    expressions = selector.get("matchExpressions") or []
    if not isinstance(expressions, list):
        raise SelectorError("matchExpressions is not a list")
    for expr in expressions:
        if not isinstance(expr, dict) or not isinstance(expr.get("key"), str):
            raise SelectorError("a matchExpressions entry has no key")
    for expr in expressions:
        key, op = expr["key"], expr.get("operator")
        raw = expr.get("values")
        if raw is not None and (
            not isinstance(raw, list) or not all(isinstance(v, str) for v in raw)
        ):
            raise SelectorError(f"matchExpressions values for key {key!r} is not a list of strings")
        values: list[str] = raw or []
        if op in ("In", "NotIn") and not values:
            raise SelectorError(f"matchExpressions {op} for key {key!r} has no values")
        if op in ("Exists", "DoesNotExist") and values:
            raise SelectorError(f"matchExpressions {op} for key {key!r} has values")
        if op == "In":
            ok = key in labels and labels[key] in values
        elif op == "NotIn":
            ok = key not in labels or labels[key] not in values
        elif op == "Exists":
            ok = key in labels
        elif op == "DoesNotExist":
            ok = key not in labels
        else:
            raise SelectorError(f"unknown matchExpressions operator {op!r}")
        if not ok:
            return False
    return True
