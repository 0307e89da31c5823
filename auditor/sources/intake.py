"""The record kept of an object read from an export, when the object has nothing to name.

Every object a source reads passes the same checks before it is kept: a known kind (and, for
ConfigMaps, the selected ones), a ``metadata.name`` the API server could have written, a
namespace for a namespaced kind, and mappings where the API server writes mappings (``spec``, ``status``, labels and
annotations of strings). :func:`plain_entry` is those checks and the record kept (the slim
record of kinds that declare one, redacted) as one pure function, with no side effect until it
takes the object. An object it does not take goes through
:meth:`auditor.sources.directory._Builder.add_object`'s full path, which names each defect;
the builder itself runs :func:`plain_entry` first, so the record kept of an object does not
depend on the process that made it.

Whichever process parses a piece of a large ``List`` (this one, or the forked read worker of
:mod:`auditor.yamlfast`) runs :func:`take_slim` or :func:`take_whole` on each item, so the
records of the worker's share come back ready to keep (checked, projected and redacted there,
on the spare CPU). An item :func:`plain_entry` refuses comes back whole, through the private
socket between the two processes, and is redacted here by the full path, like every object
(redacting it twice would not be the same: the facts taken from ``networkData`` before it is
redacted would be lost).
"""

from __future__ import annotations

from typing import Any

from auditor.fieldnames import FIELD_NAMES, fold_key, spelled_as
from auditor.kinds import KINDS, is_resource_policy, project, spec_for_object
from auditor.labelsyntax import (
    CONFIG_MAP_KEY,
    NO_CONFIG_MAP_KEY,
    NO_LABEL_VALUE,
    NO_QUALIFIED_NAME,
    QUALIFIED_NAME,
    annotations_ok,
    bad_key,
    label_value_ok,
    labels_ok,
)
from auditor.redact import redact, redact_in_place, redact_projected

__all__ = [
    "Entry",
    "configmap_data_fault",
    "miscased_field",
    "name_fault",
    "plain_entry",
    "shape_fault",
    "top_level_fault",
    "take_slim",
    "take_whole",
]


def _visible(text: str, longest: int) -> bool:
    """Whether ``text`` is 1 to ``longest`` visible ASCII characters other than "/".

    Every kind the auditor reads is named by a DNS-1123 subdomain on the API server (core kinds'
    ``NameIsDNSSubdomain``, and every custom resource's:
    https://kubernetes.io/docs/concepts/overview/working-with-objects/names/), and none by a name
    with "/" (``path.IsValidPathSegmentName``). Hand-written manifests (the public corpus's
    ``nameValue``) pass; what no object of a cluster can be named does not.
    """
    return (
        0 < len(text) <= longest
        and text.isascii()
        and text.isprintable()
        and " " not in text
        and "/" not in text
    )


def name_fault(name: str, namespace: str | None) -> tuple[str, str] | None:
    """``(field, value shown escaped)`` when ``name`` or ``namespace`` (None: a cluster-scoped
    kind) holds a control character, whitespace, a non-ASCII character or "/", or is longer
    than 253 characters (a namespace, 63), else None.

    No API server writes such a name, so an export holding one was altered (red team: a VM
    named ``"fin-app-01\x1b[2J\nFAKE: all READY"`` was rated READY and nothing named it).
    The object is still read, its text kept verbatim for the renderers to escape
    (``tests/test_hostile_data.py``); the value given here is as ``ascii()`` shows it, cut
    to 80 characters, for a problem's one-line reason.
    """
    if not _visible(name, 253):
        return "metadata.name", ascii(name[:80])
    if namespace is not None and not _visible(namespace, 63):
        return "metadata.namespace", ascii(namespace[:80])
    return None


#: ``(kind, namespace, name, record)``: namespace None for a cluster-scoped kind.
Entry = tuple[str, str | None, str, dict[str, Any]]


def shape_fault(obj: dict[str, Any], meta: dict[str, Any]) -> tuple[str, str] | None:
    """``(field, what is wrong)`` for the first of ``spec``, ``status``, ``metadata.labels``,
    ``metadata.annotations`` and a ConfigMap's ``data`` that is not what the API server writes
    (a mapping; labels, annotations and ConfigMap data map strings to strings), or None when
    all are sound or absent.

    ConfigMap ``data``: https://kubernetes.io/docs/concepts/configuration/configmap/ (values
    are UTF-8 strings; bytes go in ``binaryData``). The auditor reads Velero's
    change-storage-class map there; a value that is no string was redacted unnamed and the
    mapping silently lost (mutations seed 857).
    """
    spec, status = obj.get("spec"), obj.get("status")
    labels, annotations = meta.get("labels"), meta.get("annotations")
    if (
        (spec is None or isinstance(spec, dict))
        and (status is None or isinstance(status, dict))
        and (labels is None or (isinstance(labels, dict) and (not labels or labels_ok(labels))))
        and (
            annotations is None
            or (isinstance(annotations, dict) and (not annotations or annotations_ok(annotations)))
        )
        and obj.get("kind") != "ConfigMap"
        and not _null_map(obj, meta, labels, annotations)
    ):
        return miscased_field(obj, meta)  # the common case, decided without naming each field
    return _named_shape_fault(obj, meta) or miscased_field(obj, meta)


def configmap_data_fault(obj: dict[str, Any]) -> str | None:
    """What is wrong with a ConfigMap's ``data`` that is not a mapping of strings to strings
    (the API server refuses any other: https://kubernetes.io/docs/concepts/configuration/configmap/),
    or None when it is one, absent or null.

    Such a ConfigMap is not selected (:func:`auditor.kinds.is_resource_policy` cannot read a
    policy in it), so the builder names it here: it may be the Velero resource policy a
    Backup's ``spec.resourcePolicy`` names (b40: read as "not in the export", unnamed).
    """
    data = obj.get("data")
    if data is None or (isinstance(data, dict) and _string_map(data)):
        return None
    if not isinstance(data, dict):
        return f"is a {type(data).__name__}, not a mapping"
    return "is not a mapping of strings to strings"


def _null_map(obj: dict[str, Any], meta: dict[str, Any], labels: Any, annotations: Any) -> bool:
    """Whether ``metadata.labels`` or ``metadata.annotations`` is written as null, in an
    object of a kind other than VirtualMachine (whose nulls ``auditor.inventory.prunednulls``
    names, the VM still read). ``ObjectMeta``'s maps are ``omitempty``: the API server never
    writes a null there, so the copy was edited, and read as no labels it dropped what they
    said (a claim's ``velero.io/exclude-from-backup``: RR-BKP-004 FAIL -> PASS, NOT_READY ->
    READY with nothing named; bench.mutations null_list, fz34)."""
    return (
        (labels is None and "labels" in meta) or (annotations is None and "annotations" in meta)
    ) and obj.get("kind") != "VirtualMachine"


def _named_shape_fault(obj: dict[str, Any], meta: dict[str, Any]) -> tuple[str, str] | None:
    """:func:`shape_fault` field by field (what it gives when its shortcut does not apply)."""
    fields: tuple[tuple[str, Any], ...] = (
        ("spec", obj.get("spec")),
        ("status", obj.get("status")),
        ("metadata.labels", meta.get("labels")),
        ("metadata.annotations", meta.get("annotations")),
    )
    if obj.get("kind") == "ConfigMap":
        fields += (("data", obj.get("data")),)
    for fld, value in fields:
        if (
            value is None
            and fld.startswith("metadata.")
            and obj.get("kind") != "VirtualMachine"
            and fld[len("metadata.") :] in meta
        ):
            return fld, (
                "is null, which the API server never writes (it omits an empty map), so "
                "the copy was edited and what it held cannot be told"
            )
        if value is not None and not isinstance(value, dict):
            return fld, f"is a {type(value).__name__}, not a mapping"
        if fld != "spec" and fld != "status" and value and not _string_map(value):
            # the API server refuses a label, annotation or ConfigMap value that is no string;
            # the reason names the entry (its key and the value's type, never the value: an
            # annotation may hold a secret), round h45b: "metadata.labels" alone left which
            # of a dozen labels to look for unsaid
            key = next(k for k, v in value.items() if type(k) is not str or type(v) is not str)
            held = f"{type(key).__name__} key" if type(key) is not str else "value of type "
            if type(key) is str:
                held += type(value[key]).__name__
            return fld, (
                f"is not a mapping of strings to strings (entry {ascii(str(key)[:80])}: a {held})"
            )
        if fld.startswith("metadata.") and value:
            bad = bad_key(value, QUALIFIED_NAME)
            if bad is None and fld == "metadata.labels":
                bad = next((v for v in value.values() if not label_value_ok(v)), None)
                if bad is not None:
                    return fld, f"holds the value {ascii(bad[:80])}, {NO_LABEL_VALUE}"
            if bad is not None:
                return fld, f"holds the key {ascii(bad[:80])}, {NO_QUALIFIED_NAME}"
        if fld == "data" and value:
            bad = bad_key(value, CONFIG_MAP_KEY)
            if bad is not None:
                return fld, f"holds the key {ascii(bad[:80])}, {NO_CONFIG_MAP_KEY}"
    return None


#: Kinds whose miscased keys :mod:`auditor.inventory.fieldcase` names field by field (the
#: object is read, the checks reading the field give ERROR).
_FIELD_BY_FIELD = frozenset({"VirtualMachine", "VirtualMachineInstance"})
#: Keys whose value maps data, not field names: labels, annotations and selectors, resource
#: lists, free-form configuration (a storage location's ``config``, a class's
#: ``parameters``, CSI volume attributes, a Restore's ``namespaceMapping``, the DPA's
#: ``unsupportedOverrides``, a DataUpload's ``dataMoverConfig``, HCO feature gates).
_FREE_FORM = frozenset(
    {
        "labels",
        "annotations",
        "matchLabels",
        "nodeSelector",
        "selector",
        "requests",
        "limits",
        "capacity",
        "allocatedResources",
        "allocatedResourceStatuses",
        "config",
        "parameters",
        "volumeAttributes",
        "namespaceMapping",
        "orderedResources",
        "unsupportedOverrides",
        "dataMoverConfig",
        "featureGates",
        "data",
        "binaryData",
        "stringData",
        "metadata",
    }
)


def miscased_field(obj: dict[str, Any], meta: dict[str, Any]) -> tuple[str, str] | None:
    """``(field, what is wrong)`` for the first key of ``metadata`` (its own keys), ``spec``
    or ``status`` that is a known field written in another case (``storageclassname``,
    ``volumesnapshotref``, ``Phase``: :func:`auditor.fieldnames.spelled_as`), outside the
    free-form maps, or None. VirtualMachines and VMIs are left to
    :mod:`auditor.inventory.fieldcase`, which names such a field and keeps the object.

    The API server prunes a field its schema does not know, so no object a cluster stored
    has one: the copy was edited and the field it stands for is missing (read as absent, a
    PVC's class or a Schedule's storage location changed unnamed: bench.mutations key_case,
    seed 440; task fz32).

    A kind kept as a slim record (:attr:`auditor.kinds.KindSpec.keep`: VolumeSnapshotContents,
    most of a large estate's objects) is read only at the fields it keeps, so only a kept
    field in another case is looked for there (:func:`_miscased_kept`): a set difference per
    section instead of a walk, about 1 s of CPU less per 300,000 objects.
    """
    kind = obj.get("kind")
    if kind in _FIELD_BY_FIELD:
        return None
    top = top_level_fault(obj)
    if top is not None:
        return top
    kept = _KEPT.get(kind) if isinstance(kind, str) else None
    if kept is not None:
        return _miscased_kept(obj, meta, kept)
    if not _suspect(obj):
        return None
    for key in meta:
        field = spelled_as(key)
        if field is not None:
            return f"metadata.{field}", _miscased(key)
    for section in ("spec", "status"):
        value = obj.get(section)
        if isinstance(value, dict):
            found = _miscased_below(value, section)
            if found is not None:
                return found
    return None


#: Every field name of the APIs read, as written (:data:`auditor.fieldnames.FIELD_NAMES`).
_FIELD_SET = frozenset(FIELD_NAMES)
#: Kind -> each section it keeps in its slim record: (section, each kept field's lower-case
#: spelling -> the field, the kept fields that may hold mappings to look into).
_KEPT: dict[str, tuple[tuple[str, dict[str, str], tuple[str, ...]], ...]] = {
    spec.kind: tuple(
        (section, {f.lower(): f for f in fields}, tuple(f for f in fields if f not in _FREE_FORM))
        for section, fields in spec.keep
    )
    for spec in KINDS
    if spec.keep is not None
}


def _miscased_kept(
    obj: dict[str, Any],
    meta: dict[str, Any],
    kept: tuple[tuple[str, dict[str, str], tuple[str, ...]], ...],
) -> tuple[str, str] | None:
    """:func:`miscased_field` for a kind kept as a slim record: a kept field written in
    another case (a key of its section that lower-cases to it), or a field in another case
    within a kept mapping (a VolumeSnapshotContent's ``spec.source``, ``status.error``);
    labels and annotations are free-form. A section whose keys are all field names as written
    (the common case) is decided by one subset test."""
    for section, lowered, nested in kept:
        part = meta if section == "metadata" else obj.get(section)
        if type(part) is not dict:
            continue
        if not _FIELD_SET.issuperset(part):
            for key in part.keys() - _FIELD_SET:
                field = lowered.get(fold_key(key)) if isinstance(key, str) else None
                if field is not None and field != key:
                    return f"{section}.{field}", _miscased(key)
        for field in nested:
            value = part.get(field)
            if type(value) is dict and not _FIELD_SET.issuperset(value):
                found = _miscased_below(value, f"{section}.{field}")
                if found is not None:
                    return found
    return None


#: The field names in lower case (what a key in another case lower-cases to).
_LOWER = frozenset(name.lower() for name in FIELD_NAMES)
#: What :func:`_suspect` does not look into: the free-form maps, and the write history
#: (``managedFields``: ``f:<field>`` keys, dropped unread).
_NOT_FIELDS = _FREE_FORM | {"managedFields"}


def _suspect(obj: dict[str, Any]) -> bool:
    """Whether a key of ``obj`` that :func:`miscased_field` would look at (``metadata``'s own
    keys; ``spec``, ``status`` and the rest outside the free-form maps) is a field name in
    another case, or no string: the walk that names it is then worth its cost. Each mapping is
    first tested as a subset of the field names, in C, so a sound object costs one test per
    mapping (about 8 us per object of the 1,000-VM estate, against 20 us for listing every
    key of orjson's text with a regular expression)."""
    meta = obj.get("metadata")
    if type(meta) is dict and _odd_keys(meta):
        return True
    return _suspect_below(obj)


def _odd_keys(value: dict[Any, Any]) -> bool:
    """Whether a key of ``value`` is no string, or a field name in another case."""
    if _FIELD_SET.issuperset(value):
        return False
    return any(type(k) is not str or fold_key(k) in _LOWER for k in value.keys() - _FIELD_SET)


def _suspect_below(value: dict[Any, Any]) -> bool:
    if _odd_keys(value):
        return True
    for key, child in value.items():
        kind = type(child)
        if kind is dict:
            if key not in _NOT_FIELDS and _suspect_below(child):
                return True
        elif kind is list and key not in _NOT_FIELDS:
            for item in child:
                if type(item) is dict and _suspect_below(item):
                    return True
    return False


def top_level_fault(obj: dict[str, Any]) -> tuple[str, str] | None:
    """``(field, what is wrong)`` for a top-level key of ``obj`` that is a field name in
    another case or with a blank around it (``" status"``, ``"Spec"``), or None. One subset
    test when every key is a field name as written (every object the API server wrote)."""
    if _FIELD_SET.issuperset(obj):
        return None
    for key in obj.keys() - _FIELD_SET:
        field = spelled_as(key)
        if field is not None:
            return field, _miscased(key)
    return None


def _miscased(key: str) -> str:
    return (
        f"is written {key!r:.40}, a field name in another case or with a blank or invisible "
        "character around it (the API server prunes an unknown key, so the field is missing "
        "from this copy)"
    )


def _miscased_below(value: dict[str, Any] | list[Any], path: str) -> tuple[str, str] | None:
    if isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(item, dict | list):
                found = _miscased_below(item, f"{path}[{i}]")
                if found is not None:
                    return found
        return None
    for key, item in value.items():
        field = spelled_as(key)
        if field is not None:
            return f"{path}.{field}", _miscased(key)
        if key not in _FREE_FORM and isinstance(item, dict | list):
            found = _miscased_below(item, f"{path}.{key}")
            if found is not None:
                return found
    return None


def _string_map(value: dict[Any, Any]) -> bool:
    """Whether every key and value of ``value`` is a string (labels, annotations)."""
    return all(type(k) is str and type(v) is str for k, v in value.items())


def plain_entry(obj: Any, *, slim: bool, owned: bool, names: bool = True) -> Entry | None:
    """The :data:`Entry` to keep for ``obj``, or None when ``obj`` is not one the builder
    keeps as it is: no mapping, no apiVersion/kind strings, a kind the auditor does not read
    (or a ConfigMap it does not select), no ``metadata.name``, a namespaced kind without a
    namespace string, a :func:`shape_fault` or a :func:`name_fault`. ``obj`` is untouched when the answer
    is None.

    ``slim``: keep the slim record of kinds that declare one (:func:`auditor.kinds.project`).
    ``owned``: ``obj`` was parsed for this reader alone, so it is redacted in place (and its
    ``managedFields`` dropped) instead of copied. ``names``: refuse a :func:`name_fault` (False
    once the builder has named it). Never raises for any parsed value.
    """
    if not isinstance(obj, dict):
        return None
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return None
    spec = spec_for_object(api_version, kind)
    if spec is None or not spec.selects(obj):
        return None
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return None
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        return None
    namespace = None
    if spec.namespaced:
        namespace = meta.get("namespace")
        if not isinstance(namespace, str) or not namespace:
            return None
    if shape_fault(obj, meta) is not None or (names and name_fault(name, namespace) is not None):
        return None
    if slim and spec.keep is not None:
        # new mappings over the same leaves; the shape check above makes the one-pass form exact
        clean = redact_projected(obj, spec.keep) if owned else redact(project(obj, spec))
    elif owned:
        written = meta.pop("managedFields", None)  # write history: large, never audited
        if is_resource_policy(obj) and isinstance(written, list):
            # but when a resource policy was last written says whether a Backup ran with it
            # (auditor.inventory.volpolicy): only the times are kept
            meta["managedFields"] = [
                {"time": m.get("time")} for m in written if isinstance(m, dict)
            ]
        clean = redact_in_place(obj)
    else:
        clean = redact(obj)
    return spec.kind, namespace, name, clean


def take_slim(item: Any) -> tuple[Any, ...]:
    """For whichever process parses a piece (this one or the read worker): ``(True, *entry)``
    for an item :func:`plain_entry` keeps (slim records, owned), else ``(False, item)``
    untouched, for the full path to name."""
    entry = plain_entry(item, slim=True, owned=True)
    return (False, item) if entry is None else (True, *entry)


def take_whole(item: Any) -> tuple[Any, ...]:
    """:func:`take_slim` keeping every object whole (``auditor collect``'s export)."""
    entry = plain_entry(item, slim=False, owned=True)
    return (False, item) if entry is None else (True, *entry)
