"""Velero scope semantics: does a Backup, Schedule template or Restore include an object?

Implements the filters documented for Velero Backup/Restore specs
(https://velero.io/docs/main/api-types/backup/ and
https://velero.io/docs/main/resource-filtering/): ``includedNamespaces`` /
``excludedNamespaces`` (``*`` and globs), ``includedResources`` /
``excludedResources`` (plural, singular, kind, short name, optionally
``.group``), Velero 1.11's ``included/excludedNamespaceScopedResources`` and
``included/excludedClusterScopedResources``, ``labelSelector`` (matchLabels + matchExpressions) and
``orLabelSelectors`` (any one matches).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from typing import Any

from auditor.labelsyntax import QUALIFIED_NAME, label_value_ok

__all__ = ["Scope", "entry_resource", "selector_matches", "validate_selector", "SelectorError"]

#: Short names Velero expands in resource filters: it resolves each entry through the API
#: server's discovery with the short-name expander (``restmapper.NewShortcutExpander`` in
#: velero ``pkg/discovery/helper.go``), so a CRD's ``shortNames`` and the core short names
#: work as the plural does. Those of the types the auditor reads or a VM's restore needs.
_SHORT_NAMES = {
    # core/v1
    "po": "pods",
    "svc": "services",
    "cm": "configmaps",
    "pvc": "persistentvolumeclaims",
    "pv": "persistentvolumes",
    "ns": "namespaces",
    "sa": "serviceaccounts",
    "sc": "storageclasses",
    # kubevirt.io (the CRDs' shortNames)
    "vm": "virtualmachines",
    "vms": "virtualmachines",
    "vmi": "virtualmachineinstances",
    "vmis": "virtualmachineinstances",
    "vminstancetype": "virtualmachineinstancetypes",
    "vminstancetypes": "virtualmachineinstancetypes",
    "vmf": "virtualmachineinstancetypes",
    "vmfs": "virtualmachineinstancetypes",
    "vmclusterinstancetype": "virtualmachineclusterinstancetypes",
    "vmclusterinstancetypes": "virtualmachineclusterinstancetypes",
    "vmcf": "virtualmachineclusterinstancetypes",
    "vmcfs": "virtualmachineclusterinstancetypes",
    "vmpref": "virtualmachinepreferences",
    "vmprefs": "virtualmachinepreferences",
    "vmp": "virtualmachinepreferences",
    "vmps": "virtualmachinepreferences",
    "vmclusterpref": "virtualmachineclusterpreferences",
    "vmclusterprefs": "virtualmachineclusterpreferences",
    "vmcp": "virtualmachineclusterpreferences",
    "vmcps": "virtualmachineclusterpreferences",
    "vmsnapshot": "virtualmachinesnapshots",
    "vmsnapshots": "virtualmachinesnapshots",
    "vmsnapshotcontent": "virtualmachinesnapshotcontents",
    "vmsnapshotcontents": "virtualmachinesnapshotcontents",
    # cdi.kubevirt.io
    "dv": "datavolumes",
    "dvs": "datavolumes",
    # k8s.cni.cncf.io
    "net-attach-def": "network-attachment-definitions",
    # snapshot.storage.k8s.io
    "vs": "volumesnapshots",
    "vsc": "volumesnapshotcontents",
    "vscs": "volumesnapshotcontents",
    "vsclass": "volumesnapshotclasses",
    "vsclasses": "volumesnapshotclasses",
}

#: Resources whose name in discovery is not the lower-cased kind: Velero resolves a filter
#: entry only by the plural, the singular (``APIResource.singularName``, the CRD's
#: ``spec.names.singular``) or a short name (client-go restmapper.NewDiscoveryRESTMapper,
#: via velero pkg/discovery/helper.go ResourceFor), and drops an entry that resolves to
#: nothing (velero pkg/util/collections/includes_excludes.go generateIncludesExcludes). The
#: NetworkAttachmentDefinition CRD names itself ``network-attachment-definition``
#: (k8snetworkplumbingwg/network-attachment-definition-client artifacts/
#: networks-crd.yaml): that entry includes NADs, ``networkattachmentdefinition(s)`` none.
_SINGULAR = {"network-attachment-definitions": "network-attachment-definition"}

#: Cluster-scoped resource types among those the scope is asked about: Velero's newer
#: filters (``included/excludedClusterScopedResources``) apply to them, the
#: ``...NamespaceScopedResources`` ones to every other type.
_CLUSTER_SCOPED = frozenset(
    {
        "persistentvolumes",
        "namespaces",
        "storageclasses",
        "virtualmachineclusterinstancetypes",
        "virtualmachineclusterpreferences",
        "volumesnapshotcontents",
        "volumesnapshotclasses",
        "customresourcedefinitions",
    }
)


def entry_resource(entry: str) -> str:
    """The resource a filter entry names, short names spelled out, group dropped
    (``pv`` and ``persistentvolumes.`` are ``persistentvolumes``)."""
    return _expand(entry.lower()).partition(".")[0]


def _expand(entry: str) -> str:
    """A filter entry with a short resource name spelled out (``vm.kubevirt.io`` too).

    ``virtualmachines.`` is ``virtualmachines``: Velero splits an entry at its first dot
    (``schema.ParseGroupResource``) and resolves an empty group in every API group (velero
    pkg/util/collections/includes_excludes.go; red team: a trailing dot kept VMs in).
    """
    short, dot, group = entry.partition(".")
    if dot and not group:
        dot = ""
    full = _SHORT_NAMES.get(short)
    return short + dot + group if full is None else full + dot + group


class SelectorError(ValueError):
    """A label selector or object filter is malformed (unknown operator, wrong types).

    ``field``: the malformed field's path below the spec the filters sit in
    (``includedNamespaces``, ``labelSelector.matchLabels[app]``,
    ``orLabelSelectors[0].matchExpressions``), or None when it is the spec itself. The
    reader's collection problem names it after the spec's own path (``spec.`` for a Backup
    or Restore, ``spec.template.`` for a Schedule): round h45b, where every scope fault was
    named at ``spec`` alone. The filters are ``BackupSpec``'s
    (https://github.com/vmware-tanzu/velero/blob/main/pkg/apis/velero/v1/backup_types.go:
    ``IncludedNamespaces []string``, ``LabelSelector *metav1.LabelSelector``), a Schedule's
    in its ``Template BackupSpec``
    (https://github.com/vmware-tanzu/velero/blob/main/pkg/apis/velero/v1/schedule_types.go).
    """

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


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
        raise SelectorError(f"{key} is not a list of strings", field=key)
    return list(value)


#: Velero's resource filters before 1.11, and the scoped ones since (one style per Backup).
_OLD_FILTERS = ("includedResources", "excludedResources", "includeClusterResources")
_SCOPED_FILTERS = (
    "includedNamespaceScopedResources",
    "excludedNamespaceScopedResources",
    "includedClusterScopedResources",
    "excludedClusterScopedResources",
)


def _lower(spec: dict[str, Any], key: str) -> tuple[str, ...]:
    """A resource filter list, lower-cased (see :func:`_str_list`)."""
    return tuple(r.lower() for r in _str_list(spec, key))


@dataclass(frozen=True)
class Scope:
    """The object filters of one Velero Backup spec, Schedule template or Restore spec."""

    included_namespaces: tuple[str, ...]
    excluded_namespaces: tuple[str, ...]
    included_resources: tuple[str, ...]
    excluded_resources: tuple[str, ...]
    label_selector: Mapping[str, Any] | None
    or_label_selectors: tuple[Mapping[str, Any], ...]
    #: Velero 1.11's scoped filters (``included/excludedNamespaceScopedResources``,
    #: ``included/excludedClusterScopedResources``); never set together with
    #: ``included/excludedResources`` (Velero fails such a Backup's validation)
    included_namespaced: tuple[str, ...] = ()
    excluded_namespaced: tuple[str, ...] = ()
    included_cluster: tuple[str, ...] = ()
    excluded_cluster: tuple[str, ...] = ()
    # Answers already given: every VM and PVC of an audit asks each Backup the same few
    # questions (its namespace, the same handful of resource types), and the filters are
    # fixed once built.
    _namespaces: dict[str, bool] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _resources: dict[tuple[str, str, str], bool] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _plugin_resources: dict[str, bool] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    #: the selectors were validated when built (:meth:`from_spec`): matching need not
    #: validate them again for every object asked about
    _validated: bool = field(default=False, init=False, repr=False, compare=False)

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
            raise SelectorError("labelSelector is not a mapping", field="labelSelector")
        if ors is not None and not (
            isinstance(ors, list) and all(isinstance(s, dict) for s in ors)
        ):
            raise SelectorError(
                "orLabelSelectors is not a list of selectors", field="orLabelSelectors"
            )
        for where, sel in [("labelSelector", ls)] + [
            (f"orLabelSelectors[{i}]", s) for i, s in enumerate(ors or [])
        ]:
            if isinstance(sel, dict):
                _selector_shape(sel, where)
        scoped = {key: _lower(spec, key) for key in _SCOPED_FILTERS}
        old_style = [k for k in _OLD_FILTERS if spec.get(k) is not None]
        new_style = [k for k, v in scoped.items() if v]
        if old_style and new_style:
            # "They cannot be used together" (https://velero.io/docs/main/resource-filtering/):
            # Velero refuses the Backup, so it filters nothing the auditor could tell
            raise SelectorError(
                f"{', '.join(old_style)} and {', '.join(new_style)} are set together; Velero "
                "fails the validation of a backup mixing its old and new resource filters",
                field=new_style[0],
            )
        scope = cls(
            included_namespaced=scoped["includedNamespaceScopedResources"],
            excluded_namespaced=scoped["excludedNamespaceScopedResources"],
            included_cluster=scoped["includedClusterScopedResources"],
            excluded_cluster=scoped["excludedClusterScopedResources"],
            included_namespaces=tuple(_str_list(spec, "includedNamespaces")),
            excluded_namespaces=tuple(_str_list(spec, "excludedNamespaces")),
            included_resources=_lower(spec, "includedResources"),
            excluded_resources=_lower(spec, "excludedResources"),
            label_selector=ls if isinstance(ls, dict) else None,
            or_label_selectors=tuple(s for s in ors if isinstance(s, dict))
            if isinstance(ors, list)
            else (),
        )
        object.__setattr__(scope, "_validated", True)  # each selector passed _selector_shape
        return scope

    def with_policy(
        self,
        included_namespaced: tuple[str, ...],
        excluded_namespaced: tuple[str, ...],
        included_cluster: tuple[str, ...],
        excluded_cluster: tuple[str, ...],
    ) -> Scope:
        """This scope combined with a resource policy's ``includeExcludePolicy`` lists, as
        Velero 1.17+ combines them (pkg/util/collections/includes_excludes.go
        ``ScopeIncludesExcludes.CombineWithPolicy``,
        https://github.com/vmware-tanzu/velero/blob/main/pkg/util/collections/includes_excludes.go):
        the Backup's own filters win, so each policy entry is added, excludes first, only
        where neither of that scope's own lists already names its type (an own include of
        ``*`` names every type); an entry of the other scope's kind of resource is dropped
        (``scopeResourceMapFunc``: "namespaced != resource.Namespaced"): a type the auditor
        knows to be cluster-scoped in the namespace-scoped lists (alone there it would
        otherwise narrow the Backup to nothing namespaced). Entries are lower-cased names.
        """

        def names(entries: tuple[str, ...], entry: str) -> bool:
            want = entry_resource(entry)
            return any(e == "*" or entry_resource(e) == want for e in entries)

        def combine(
            inc: tuple[str, ...],
            exc: tuple[str, ...],
            add_inc: tuple[str, ...],
            add_exc: tuple[str, ...],
            cluster: bool,
        ) -> tuple[tuple[str, ...], tuple[str, ...]]:
            # a known cluster-scoped type in the namespace-scoped lists is dropped; in the
            # cluster-scoped lists every entry is kept (a namespaced type there, which Velero
            # drops, is never asked about under them)
            ours = [
                e
                for e in (*add_exc, *add_inc)
                if cluster or entry_resource(e) not in _CLUSTER_SCOPED
            ]
            for e in add_exc:
                if e in ours and not names(inc, e) and not names(exc, e):
                    exc = (*exc, e)
            for e in add_inc:
                if e in ours and not names(inc, e) and not names(exc, e):
                    inc = (*inc, e)
            return inc, exc

        inc_ns, exc_ns = combine(
            self.included_namespaced,
            self.excluded_namespaced,
            included_namespaced,
            excluded_namespaced,
            False,
        )
        inc_cl, exc_cl = combine(
            self.included_cluster, self.excluded_cluster, included_cluster, excluded_cluster, True
        )
        combined = replace(
            self,
            included_namespaced=inc_ns,
            excluded_namespaced=exc_ns,
            included_cluster=inc_cl,
            excluded_cluster=exc_cl,
        )
        object.__setattr__(combined, "_validated", self._validated)
        return combined

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
        singular = _SINGULAR.get(plural)
        names = (
            {plural, kind.lower(), kind.lower() + "s"} if singular is None else {plural, singular}
        )
        qualified = {f"{n}.{group}" for n in names} if group else set()

        def hit(entry: str) -> bool:
            entry = _expand(entry)
            return entry == "*" or entry in names or entry in qualified

        if plural in _CLUSTER_SCOPED:
            included, excluded = self.included_cluster, self.excluded_cluster
        else:
            included, excluded = self.included_namespaced, self.excluded_namespaced
        # '*' alone is a valid exclude of the scoped filters (it excludes every resource of
        # that scope: velero pkg/util/collections/includes_excludes.go
        # ValidateScopedIncludesExcludes, ScopeIncludesExcludes.ShouldExclude); Velero fails
        # the validation of a Backup whose old-style excludedResources holds it
        # (ValidateIncludesExcludes), so there it filters nothing the auditor could tell
        for inc, exc, star in (
            (self.included_resources, self.excluded_resources, False),
            (included, excluded, True),
        ):
            if inc and not any(hit(e) for e in inc):
                return False
            if any(hit(e) for e in exc if star or e != "*"):
                return False
        return True

    def plugin_in_backup(self, resource: str) -> bool:
        """Whether the kubevirt Velero plugin counts ``resource`` (``"pods"``,
        ``"datavolume"``...) as in the Backup: its ``util.IsResourceInBackup``.

        The plugin reads only ``includedResources``/``excludedResources`` (never the scoped
        filters) and compares the resource part of each entry (before the first ``.``,
        ``schema.ParseGroupResource``) with ``resource``, ignoring case and one trailing
        ``s`` (``equalIgnorePlural``): ``*`` and short names such as ``vmi`` match nothing,
        so ``includedResources: ['*']``, which Velero keeps as it is (velero
        pkg/controller/backup_controller.go ``prepareBackupRequest``), leaves every resource
        out for the plugin. Source: kubevirt-velero-plugin pkg/util/util.go
        (``IsResourceIncluded``, ``IsResourceExcluded``, ``equalIgnorePlural``),
        https://github.com/kubevirt/kubevirt-velero-plugin/blob/main/pkg/util/util.go.

        Answered once per Scope and resource (the filters are fixed once built; every VM a
        Backup is judged against asks the same three or four resources).
        """
        known = self._plugin_resources.get(resource)
        if known is None:
            known = self._plugin_resources[resource] = self._plugin_in_backup(resource)
        return known

    def _plugin_in_backup(self, resource: str) -> bool:
        """:meth:`plugin_in_backup`, computed."""

        def hit(entry: str) -> bool:
            got, want = entry.partition(".")[0].lower(), resource.lower()
            return got in (want, want + "s") or got + "s" == want

        inc, exc = self.included_resources, self.excluded_resources
        return (not inc or any(hit(e) for e in inc)) and not any(hit(e) for e in exc)

    def labels_match(self, labels: Mapping[str, str]) -> bool:
        """True if ``labels`` satisfy the selectors (no selector matches everything).

        Raises:
            SelectorError: a selector is malformed.
        """
        match = _matches if self._validated else selector_matches
        if self.or_label_selectors:
            return any(match(s, labels) for s in self.or_label_selectors)
        if self.label_selector is not None:
            return match(self.label_selector, labels)
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


def _selector_shape(selector: dict[str, Any], where: str) -> None:
    """:func:`validate_selector`, naming ``where``: a selector the API server would not have
    stored, read leniently, would be the empty selector, which matches everything.

    Raises:
        SelectorError: naming ``where`` and the field.
    """
    try:
        validate_selector(selector)
    except SelectorError as exc:
        inner = f".{exc.field}" if exc.field else ""
        raise SelectorError(f"{where}: {exc}", field=f"{where}{inner}") from None


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
    validate_selector(selector)
    return _matches(selector, labels)


def _matches(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """:func:`selector_matches` of a selector :func:`validate_selector` has passed."""
    match_labels: dict[str, str] = selector.get("matchLabels") or {}
    for key, value in match_labels.items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr["key"], expr["operator"], expr.get("values") or []
        if op == "In":
            ok = key in labels and labels[key] in values
        elif op == "NotIn":
            ok = key not in labels or labels[key] not in values
        elif op == "Exists":
            ok = key in labels
        else:
            ok = key not in labels  # DoesNotExist
        if not ok:
            return False
    return True


_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def validate_selector(selector: Mapping[str, Any]) -> None:
    """Refuse a LabelSelector Velero could not have read (``metav1.LabelSelector``: string
    label values; ``values`` a list of strings, given for ``In``/``NotIn`` and only for them;
    one of the four operators). Checked once when a Backup, Restore or Schedule is parsed, so
    a malformed one is named as a collection problem (red team fz14: a Restore whose
    ``matchLabels`` value was 42 matched nothing, and its drill's RR-RST-002 FAIL became
    NOT_APPLICABLE, unnamed), and again by :func:`selector_matches`.

    Raises:
        SelectorError: naming the malformed part.
    """
    unknown = sorted(str(k) for k in selector if k not in ("matchLabels", "matchExpressions"))
    if unknown:
        # the API server keeps no other field of a LabelSelector: an export holding one is
        # not the selector Velero read (which may have been the empty, match-all one)
        raise SelectorError(f"unknown selector field(s) {', '.join(unknown)}", field=unknown[0])
    nulls = sorted(
        k for k in ("matchLabels", "matchExpressions") if k in selector and selector[k] is None
    )
    if nulls:
        # both are omitempty (metav1.LabelSelector): the API server and Velero's stored
        # backup JSON omit an empty one and never write null, so an export holding null is
        # not the selector Velero read; read as empty it would select everything (mutation
        # null_list: a label-selected Backup's matchLabels set to null turned AT_RISK READY)
        raise SelectorError(
            f"{' and '.join(nulls)} is null, which the API server never writes", field=nulls[0]
        )
    match_labels = selector.get("matchLabels")
    match_labels = {} if match_labels is None else match_labels
    if not isinstance(match_labels, dict):
        raise SelectorError("matchLabels is not a mapping", field="matchLabels")
    for key, value in match_labels.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise SelectorError(
                f"matchLabels entry {key!r} is not a string label", field=f"matchLabels[{key}]"
            )
        if not QUALIFIED_NAME.fullmatch(key) or not label_value_ok(value):
            # a blank or a look-alike in a key or value (" backup.corp.example/policy"):
            # metav1.LabelSelectorAsSelector refuses it (labels.NewRequirement validates
            # both, apimachinery pkg/labels/selector.go), so Velero selected nothing by it;
            # read as written it matched no VM, unnamed (bench.mutations key_blank, seed 8033)
            raise SelectorError(
                f"matchLabels entry {key!r}: {value!r} is no label key and value",
                field=f"matchLabels[{key}]",
            )
    expressions = selector.get("matchExpressions")
    expressions = [] if expressions is None else expressions
    if not isinstance(expressions, list):
        raise SelectorError("matchExpressions is not a list", field="matchExpressions")
    for i, expr in enumerate(expressions):
        at = f"matchExpressions[{i}]"
        if not isinstance(expr, dict) or not isinstance(expr.get("key"), str):
            raise SelectorError("a matchExpressions entry has no key", field=at)
        key, op, raw = expr["key"], expr.get("operator"), expr.get("values")
        if raw is not None and (
            not isinstance(raw, list) or not all(isinstance(v, str) for v in raw)
        ):
            raise SelectorError(
                f"matchExpressions values for key {key!r} is not a list of strings", field=at
            )
        if op not in _OPERATORS:
            raise SelectorError(f"unknown matchExpressions operator {op!r}", field=at)
        if op in ("In", "NotIn") and not raw:
            raise SelectorError(f"matchExpressions {op} for key {key!r} has no values", field=at)
        if op in ("Exists", "DoesNotExist") and raw:
            raise SelectorError(f"matchExpressions {op} for key {key!r} has values", field=at)
