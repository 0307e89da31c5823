"""Single-field mutations of our own exports: no VM's verdict may improve (issue 17).

Each mutation changes one field of one object of ``examples/small-cluster`` or of
a check fixture (``tests/fixtures/checks/*/*.yaml``), writes the file back as
YAML and audits it through the directory source, exactly as ``auditor run
--from-dir`` would. Families:

- ``wrong_type``: a value of another JSON type (string -> 42, number -> "x7",
  list -> 1.5, mapping -> "junk", bool -> "yes");
- ``null`` / ``delete``: a required, server-set or referencing field set to null
  or removed (names, claim and network names, reclaim policy, driver,
  provisioner, creation time, phase, volume name, volumes/interfaces/networks
  lists, domain);
- ``invalid_enum``: an enum value (CamelCase constant) lower-cased;
- ``bad_format``: a timestamp, UUID, MAC, quantity or duration that does not parse;
- ``deep_type``: a number of another JSON type where the API has an integer (``12`` ->
  ``12.5``, as a VMI's ``status.volumeStatus[].size``), or a float where a list holds a
  string or an object;
- ``number_string``: an integer given as a string (``itemsBackedUp: "12"``);
- ``null_list``: a list or mapping set to null (``interfaces: null``);
- ``time_format``: an RFC 3339 timestamp written another way (no zone, a UNIX epoch,
  day/month/year);
- ``label_value``: a label, annotation or selector value that is no string (true, null, a
  list);
- ``enum_case``: an enum value in another case or with a blank (``RETAIN``, ``Retain ``,
  ``VIRTIO``): the API is case-sensitive and trims nothing;
- ``list_item``: one entry of a list replaced by null, by a string (an object's place) or
  by a mapping (a string's place);
- ``mapping_list``: a mapping replaced by a list holding it, a list of mappings by its first
  entry;
- ``empty_string``: a name or reference that must be set, written ``""``;
- ``duplicate``: a list of objects with its first entry twice (two disks, volumes,
  interfaces or networks of one name, two NICs of one MAC);
- ``quantity``: a resource quantity written as no quantity (``10GB``, ``-10Gi``, ``10 Gi``,
  a float, ``10Gi `` with a blank);
- ``bool_string``: a boolean written as a string (``"true"``, ``"false"``: a non-empty string
  is truthy whatever it says);
- ``negative``: an integer (a counter, a size, a count) set to ``-1``;
- ``padded``: a name or reference with a blank before or after it (``"db-data "``);
- ``future_time``: a timestamp set years after the audit (valid input: ``--at`` may lie before
  the export was taken, and an object created or completed after the audit instant did not
  exist or was not done then, so a change it makes need not be named; it must still never
  improve a verdict);
- ``time_order``: an end or completion time set before its start time;
- ``api_version``: an object's ``apiVersion`` of another group or version than its kind has
  (``kubevirt.io/v9``, ``v1`` for a Velero kind, ``v9`` for a core kind);
- ``no_namespace``: ``metadata.namespace`` removed from an object of a namespaced kind;
- ``status_type``: a field of a Velero Backup's, Schedule's, Restore's or
  BackupStorageLocation's ``status`` of another JSON type (``phase: 3``, ``progress: "50%"``,
  ``errors: "2"``, ``lastBackup: 3``);
- ``confusable``: a name or reference with one Latin letter replaced by its Cyrillic look-alike
  (``db-dаta``: U+0430, not ``a``);
- ``quantity_text``: a quantity written another way: its bytes as a JSON number (valid, the
  same value), a leading blank, a lower-case suffix (``10gi``), an exponent with a binary
  suffix (``1e1Gi``);
- ``encoding``: the whole file with a byte-order mark, with CRLF line ends (both valid YAML), or
  with a tab in the indentation of its first indented line (YAML forbids it);
- ``list_shape``: an item of a ``List`` nested in a ``List`` of its own, the ``List`` typed by its
  items' kind (``VirtualMachineList``, valid) or by another kind (a ``BackupList`` holding VMs);
- ``duplicate_object``: an object written twice, the copy with another ``resourceVersion``;
- ``null_scalar``: any string, number or boolean set to null (``firmware.uuid: null``,
  ``bus: null``: the API server prunes a null it does not allow, so none is in a true export);
- ``item_number``: one entry of a list of strings or objects replaced by a number
  (``includedNamespaces: [web, 7]``, ``accessModes: [3]``);
- ``key_case``: a field's key written in another case (``claimname``, ``Labels``): no field
  the API knows, so the field it should be is missing;
- ``empty_ref``: a reference field beyond ``empty_string``'s names set to ``""`` (any key
  ending in ``Name``, ``Ref`` or ``Namespace``);
- ``confusable_mark``: a name or reference with a look-alike punctuation mark or digit
  (``db\u2010data``: a Unicode hyphen; ``vm\u2024a``; the digit ``1`` as ``\u0406`` or ``0``
  as ``\u041e``);
- ``enum_unknown``: an enum value no API knows, in the right case (``Complete`` for
  ``Completed``, ``Boun`` for ``Bound``: the value cut short) or with its words run together
  in one case (``Partiallyfailed``, ``Readwriteonce``);
- ``quantity_exotic``: a quantity no parser should take as the size it looks like
  (``1e3Zi``: an exponent and an unknown suffix, ``+10Gi``, ``0x10Gi``, ``10.5.5Gi``,
  ``10Gi\n``, ``99999999999999999999Ei``: beyond any integer);
- ``counter_text``: a status counter written as a float or with a sign (``3.0``, ``"+3"``,
  ``"3 "``);
- ``cross_file``: an object also written to a file of its own (``zz-copy.yaml``), the copy
  identical or with another label (the same namespace/name twice, in two files);
- ``uid_twice``: an object's ``metadata.uid`` set to the UID of another object of the export
  (the API server gives each object its own UID over the cluster's whole life);
- ``filed_elsewhere``: a namespaced object moved (or copied) into
  ``namespaces/zz-elsewhere/<its file>``, a folder of another namespace than its
  ``metadata.namespace``;
- ``raw_text``: the whole file in UTF-16, with a NUL byte in its middle, with a custom YAML tag
  (``!custom``) on its first name, as JSON cut in the middle of an object, or (a file that is
  one ``oc get`` List) cut at the line nearest its middle;
- ``owner_uid``: an ownerReference's ``uid`` set to the UID of another object of the export
  (Kubernetes' garbage collector takes an owner whose UID differs as gone);
- ``api_version`` also gives the next version of the group (``kubevirt.io/v2``,
  ``velero.io/v2``), one no API server of today serves, and since fz34 ``group/v1alpha1``
  (served, with its own schema, for some kinds: CDI's DataVolume, instancetypes).

Since fz36:

- ``key_blank``: a key with a blank after or before it, or a no-break space after it
  (``"claimName "``, ``"velero.io/exclude-from-backup\u00a0"``): no field or label key the
  API server stores (it prunes an unknown field; a label key is a qualified name), so the
  key it should be is missing;
- ``time_zone``: an RFC 3339 timestamp written as the same instant in another valid form
  (``+02:00`` offset, ``-05:30`` offset, ``.000000`` fraction): valid input that must read as
  the same instant;
- ``time_edge``: a timestamp as a date only, Go's zero time (``0001-01-01T00:00:00Z``), the
  last second of 9999, an hour 24 or a leap second (``...T23:59:60Z``, which Go refuses);
- ``bool_text``: a boolean as ``"True"``/``"False"`` (Python's spelling) or as ``1``/``0``
  (truthy and falsy, no JSON boolean);
- ``list_entry``: an item of an ``oc get`` List replaced by null, a string or a number, or
  with its ``kind`` or ``apiVersion`` removed; the List's ``items`` a mapping (its first item);
- ``doc_shape``: an empty document, a ``null`` document, or a document of a bare string
  before the file's first one.

Since h45b (the shared fuzz cases' kinds: a value that vanishes when its type is wrong, a
scalar where a list or number is read, a null where a list is read):

- ``other_type``: a value of each JSON type ``wrong_type`` does not give it (a string as
  ``true``, ``["x"]`` or ``{"x": <it>}``; a number as ``true`` or ``[<it>]``; a list as ``7``,
  ``"x"``, ``true`` or ``{"x": "y"}``; a mapping as ``7``, ``true`` or ``["x"]``; a boolean as
  ``[<it>]``);
- ``list_scalar``: a list of strings or numbers written as its first entry alone
  (``includedNamespaces: web``, ``accessModes: ReadWriteOnce``: a string is iterable, and
  ``"web" in "web-platform"`` holds);
- ``absent_typed``: an optional field the readers read that the object lacks, added with a
  value of the wrong type (``firmware.uuid: 42``, ``snapshotVolumes: "false"``,
  ``macAddress: true``; :data:`_ABSENT_FIELDS`): the other families change only the fields
  the export holds.

``--export DIR`` mutates a temporary copy of another export (for example the shared
cluster export) instead of ours; its files are never written.

Readiness is ranked READY (best), AT_RISK, then UNKNOWN and NOT_READY together
(``docs/readiness.md``), by the worst verdict the VM may truly have (an UNKNOWN of medium or
low ERRORs alone may be AT_RISK at worst: :func:`worst_rank`); a mutation *improves* a verdict
when a VM moves to a strictly better rank. Usage: ``python -m bench.mutations [--count 5000] [--seed 17]
[--export DIR] [--family F] [--kind K]``
prints per family how many mutations were tried, improved verdicts, tracebacks
and changed-but-unnamed results.
"""

from __future__ import annotations

import argparse
import copy
import io
import json
import logging
import random
import re
import shutil
import tempfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from auditor.config import AuditSettings
from auditor.envelope import AuditReport
from auditor.kinds import BY_KIND
from auditor.pipeline import audit_data
from auditor.sources.asof import CREATED_AFTER
from auditor.sources.base import KindState
from auditor.sources.directory import DirectorySource

__all__ = [
    "FAMILIES",
    "RANK",
    "Mutation",
    "Outcome",
    "Target",
    "mutations",
    "run",
    "targets",
    "worst_rank",
]

ROOT = Path(__file__).resolve().parent.parent
AT = datetime(2026, 11, 30, 6, 0, tzinfo=UTC)
FAMILIES = (
    "wrong_type",
    "null",
    "delete",
    "invalid_enum",
    "bad_format",
    "deep_type",
    "number_string",
    "null_list",
    "time_format",
    "label_value",
    "enum_case",
    "list_item",
    "mapping_list",
    "empty_string",
    "duplicate",
    "quantity",
    "bool_string",
    "negative",
    "padded",
    "future_time",
    "time_order",
    "api_version",
    "no_namespace",
    "status_type",
    "confusable",
    "quantity_text",
    "encoding",
    "list_shape",
    "duplicate_object",
    "null_scalar",
    "item_number",
    "key_case",
    "empty_ref",
    "confusable_mark",
    "enum_unknown",
    "quantity_exotic",
    "counter_text",
    "cross_file",
    "uid_twice",
    "filed_elsewhere",
    "raw_text",
    "owner_uid",
    "key_blank",
    "time_zone",
    "time_edge",
    "bool_text",
    "list_entry",
    "doc_shape",
    "other_type",
    "list_scalar",
    "absent_typed",
)
#: Families whose mutations are valid input: a finding they change need not be named.
VALID_INPUT_FAMILIES = frozenset({"future_time", "time_zone"})
#: A timestamp years after the audit (``AT``).
_FUTURE = "2031-06-01T00:00:00Z"
#: An end time and the start it must not precede, by the key they share a mapping with.
_TIME_PAIRS = {
    "completionTimestamp": "startTimestamp",
    "completionTime": "startTime",
    "endTime": "startTime",
    "lastSuccessfulTime": "lastScheduleTime",
}
#: Lower is better; UNKNOWN ranks with NOT_READY (but see :func:`worst_rank`).
RANK = {"READY": 0, "AT_RISK": 1, "UNKNOWN": 2, "NOT_READY": 2}


def worst_rank(readiness: str, findings: dict[str, str]) -> int:
    """The :data:`RANK` of the worst verdict the VM may truly have: ``readiness``, but for an
    UNKNOWN whose ERRORs are all of medium or low checks, AT_RISK's. Such an ERROR can hide
    no more than a FAIL of its own severity (``auditor.models.readiness_of``), so the VM is
    READY or AT_RISK: a mutation that adds a medium FAIL to it (AT_RISK) tells more, not
    better (mutations seed 205: a state PVC's creation time in the future). ``findings``:
    check id -> "STATUS severity", as :func:`_verdicts` gives them."""
    if readiness == "UNKNOWN" and not any(
        v.startswith("ERROR ") and v.endswith((" high", " critical")) for v in findings.values()
    ):
        return RANK["AT_RISK"]
    return RANK[readiness]


_REQUIRED_KEYS = frozenset(
    {
        "name",
        "claimName",
        "networkName",
        "driver",
        "provisioner",
        "persistentVolumeReclaimPolicy",
        "creationTimestamp",
        "volumeName",
        "phase",
        "volumes",
        "interfaces",
        "networks",
        "domain",
    }
)
_ENUM = re.compile(r"^[A-Z][a-z]+(?:[A-Z][a-z]+)*$")
#: An enum-like value (``Completed``, ``PartiallyFailed``, ``ReadWriteOnce``, ``PVCBound``).
_ENUM_ANY = re.compile(r"^[A-Z][A-Za-z]+$")
_NO_ENUM_KEYS = frozenset({"kind", "apiVersion", "name", "namespace", "serial"})
_BAD_FORMAT = {
    "time": "2026-13-45T99:99:99Z",
    "uuid": "not-a-uuid",
    "macAddress": "02:00:00",
    "quantity": "10Qi",
    "ttl": "720x",
}
_TIME_KEYS = frozenset(
    {"creationTime", "lastBackup", "expiration", "lastValidationTime", "startTime", "endTime"}
)
_UNSET = object()
_RFC3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)$")
_LABEL_MAPS = frozenset({"labels", "annotations", "matchLabels", "nodeSelector"})
#: Lower-case enums the checks read (a disk's or NIC's bus and model, a bootloader's
#: firmware): ``VIRTIO`` is no value KubeVirt knows.
_LOWER_ENUM_KEYS = frozenset({"bus", "model"})
#: Names and references that must be set: ``""`` names nothing.
_NAME_KEYS = frozenset(
    {
        "name",
        "claimName",
        "networkName",
        "volumeName",
        "driver",
        "provisioner",
        "backupName",
        "storageLocation",
        "persistentVolumeClaimName",
        "volumeSnapshotContentName",
        "boundVolumeSnapshotContentName",
        "virtualMachineSnapshotContentName",
        "snapshotHandle",
        "volumeHandle",
        "secretName",
        "macAddress",
        "uuid",
    }
)
_QUANTITY_KEYS = frozenset({"storage", "capacity", "guest", "memory", "size", "restoreSize"})
#: Velero kinds whose ``status`` the ``status_type`` family changes.
_VELERO_STATUS_KINDS = frozenset({"Backup", "Schedule", "Restore", "BackupStorageLocation"})
#: Latin letters and their Cyrillic look-alikes (``confusable``).
_CONFUSABLE = {"a": "\u0430", "e": "\u0435", "o": "\u043e", "c": "\u0441", "p": "\u0440"}
_BINARY = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40, "Pi": 1 << 50, "Ei": 1 << 60}
#: Maps whose keys are data, not field names (``key_case`` leaves them): a Restore's namespace
#: mapping, a storage location's or class's free-form config, CSI volume attributes.
_FREE_FORM_MAPS = frozenset(
    {"namespaceMapping", "config", "parameters", "volumeAttributes", "data", "requests", "limits"}
)
#: Look-alikes of the punctuation and digits Kubernetes names hold (``confusable_mark``).
_CONFUSABLE_MARKS = {"-": "\u2010", ".": "\u2024", "0": "\u041e", "1": "\u0406"}
#: Keys whose value refers to another object by name (``empty_ref``), beyond ``_NAME_KEYS``.
_REF_KEY = re.compile(r"^(?!.*Timestamp$).*(?:Name|Ref|Namespace|namespace)$")
#: The :class:`_Edit` s of a whole file's text.
_TEXT_EDITS = ("bom", "crlf", "tab")
#: The ``raw_text`` edits of a whole file's text (:func:`_raw_text`).
_RAW_EDITS = ("utf16", "nul", "tag", "json_cut", "cut")
#: The ``doc_shape`` edits of a whole file's text (:func:`_doc_shape`).
_DOC_EDITS = ("empty_doc", "null_doc", "text_doc")
#: The ``list_entry`` edits of a List's item (:func:`_place`): the item replaced, or a key of
#: it removed; ``items_map``: the List's ``items`` its first item, no list.
_ENTRY_EDITS = ("entry_null", "entry_text", "entry_number", "no_kind", "no_api_version")
#: The edits of a List's ``items`` (at its first item).
_ITEMS_EDITS = ("items_map",)
#: The namespace folder ``filed_elsewhere`` files an object under.
_ELSEWHERE = "zz-elsewhere"


class _Edit(str):
    """A mutation that rewrites the object's place in the file or the file's text, not one
    field: ``bom``, ``crlf``, ``tab`` (the file), ``nest``, ``typed``, ``mistyped`` (the
    object's List), ``twice`` (the object)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<{str(self)}>"


class _Rename(str):
    """A ``key_case`` mutation: the field's key becomes this string (its value kept)."""

    __slots__ = ()


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader with timestamps kept as strings, as the auditor reads them."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


@dataclass(frozen=True)
class Target:
    """One export: a directory, or a single fixture file whose absent kinds count as empty."""

    path: Path
    unavailable: tuple[str, ...] = ()

    @property
    def files(self) -> list[Path]:
        """The YAML files of the export."""
        if self.path.is_file():
            return [self.path]
        return sorted(p for p in self.path.iterdir() if p.suffix in (".yaml", ".yml"))


@dataclass(frozen=True)
class Mutation:
    """One field change: ``path`` from the document root of ``doc`` in ``file``."""

    family: str
    target: Target
    file: Path
    doc: int
    path: tuple[str | int, ...]
    value: Any
    kind: str
    name: str

    def describe(self) -> str:
        """``family kind/name path -> value`` for messages."""
        where = ".".join(str(p) for p in self.path)
        what = "deleted" if self.value is _UNSET else repr(self.value)
        if isinstance(self.value, _Rename):
            what = f"renamed {str(self.value)!r}"
        return f"{self.family} {self.kind}/{self.name} {self.file.name}:{where} -> {what}"


@dataclass
class Outcome:
    """What one mutation did to the audit."""

    improved: list[str] = field(default_factory=list)
    traceback: str | None = None
    changed: bool = False
    named: bool = False


def targets() -> list[Target]:
    """Our own exports: the small example cluster and every check fixture without settings."""
    out = [Target(ROOT / "examples" / "small-cluster")]
    for path in sorted((ROOT / "tests" / "fixtures" / "checks").glob("*/*.yaml")):
        head = [ln for ln in path.read_text().splitlines() if ln.startswith("#")]
        if any(ln.startswith(("# settings:", "# backup-contents:")) for ln in head):
            continue
        unavailable = tuple(
            ln.split(": ", 1)[1].strip() for ln in head if ln.startswith("# unavailable: ")
        )
        out.append(Target(path, unavailable))
    return out


def _docs(path: Path) -> list[Any]:
    return list(yaml.load_all(path.read_text(), Loader=_Loader))  # noqa: S506 (a safe loader)


def _objects(doc: Any) -> Iterator[tuple[tuple[str | int, ...], dict[str, Any]]]:
    if not isinstance(doc, dict):
        return
    if str(doc.get("kind", "")).endswith("List") and isinstance(doc.get("items"), list):
        for i, item in enumerate(doc["items"]):
            if isinstance(item, dict):
                yield ("items", i), item
    else:
        yield (), doc


def _walk(value: Any, path: tuple[str | int, ...]) -> Iterator[tuple[tuple[str | int, ...], Any]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield (*path, k), v
            yield from _walk(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield (*path, i), v
            yield from _walk(v, (*path, i))


def _wrong_type(value: Any) -> Any:
    if isinstance(value, bool):
        return "yes"
    if isinstance(value, str | datetime):
        return 42
    if isinstance(value, int | float):
        return "x7"
    if isinstance(value, list):
        return 1.5
    if isinstance(value, dict):
        return "junk"
    return ["junk"]


def _format_kind(key: str | int) -> str | None:
    if not isinstance(key, str):
        return None
    if key.endswith("Timestamp") or key in _TIME_KEYS:
        return "time"
    if key in ("uuid", "macAddress", "ttl"):
        return key
    if key in ("storage", "guest"):
        return "quantity"
    return None


def _reformat(value: str) -> list[Any]:
    """An RFC 3339 timestamp written three other ways Kubernetes' ``metav1.Time`` refuses."""
    date, time = value[:10], value[11:19]
    epoch = int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp())
    return [f"{date}T{time}", epoch, f"{date[8:10]}/{date[5:7]}/{date[:4]} {time}"]


def _candidates(rel: tuple[str | int, ...], value: Any) -> Iterator[tuple[str, Any]]:
    key = rel[-1]
    if rel in (("kind",), ("apiVersion",)):
        return
    yield from _more_candidates(rel, value)
    yield "wrong_type", _wrong_type(value)
    if key in _REQUIRED_KEYS and isinstance(key, str):
        yield "null", None
        yield "delete", _UNSET
    if (
        isinstance(value, str)
        and _ENUM.match(value)
        and key not in _NO_ENUM_KEYS
        and "labels" not in rel
        and "annotations" not in rel
    ):
        yield "invalid_enum", value.lower()
    fmt = _format_kind(key if isinstance(key, str) else rel[-2] if len(rel) > 1 else "")
    if fmt is not None and isinstance(value, str | datetime):
        yield "bad_format", _BAD_FORMAT[fmt]


def _more_candidates(rel: tuple[str | int, ...], value: Any) -> Iterator[tuple[str, Any]]:
    """The families beyond the first five (shapes the shared fuzz cases showed)."""
    in_list = any(isinstance(p, int) for p in rel)
    if isinstance(value, int) and not isinstance(value, bool):
        yield "deep_type", value + 0.5
        yield "number_string", str(value)
    elif in_list and isinstance(value, str | dict):
        yield "deep_type", 1.5
    if isinstance(value, list | dict) and value and rel[-1] not in _REQUIRED_KEYS:
        yield "null_list", None
    if isinstance(value, str) and _RFC3339.match(value):
        for other in _reformat(value):
            yield "time_format", other
    if len(rel) > 1 and rel[-2] in _LABEL_MAPS and isinstance(value, str):
        for other in (True, None, [value]):
            yield "label_value", other
    yield from _shape_candidates(rel, value)


def _shape_candidates(rel: tuple[str | int, ...], value: Any) -> Iterator[tuple[str, Any]]:
    """The families after ``label_value``: case, list entries, shapes, names, duplicates."""
    key = rel[-1]
    in_labels = any(p in _LABEL_MAPS for p in rel)
    enum = isinstance(value, str) and (
        _ENUM.match(value) or (key in _LOWER_ENUM_KEYS and value.isalnum())
    )
    if enum and not in_labels and key not in _NO_ENUM_KEYS:
        yield "enum_case", value.upper()
        yield "enum_case", value + " "
    if isinstance(key, int) and not in_labels:
        yield "list_item", None
        if isinstance(value, dict):
            yield "list_item", "junk"
        elif isinstance(value, str):
            yield "list_item", {"name": value}
    if isinstance(value, dict) and value and not in_labels:
        yield "mapping_list", [value]
    elif isinstance(value, list) and value and isinstance(value[0], dict):
        yield "mapping_list", value[0]
    if key in _NAME_KEYS and isinstance(value, str) and value and not in_labels:
        yield "empty_string", ""
    if isinstance(value, list) and value and isinstance(value[0], dict) and not in_labels:
        yield "duplicate", [*value, copy.deepcopy(value[0])]
    if key in _QUANTITY_KEYS and isinstance(value, str) and re.fullmatch(r"\d+[KMGTPE]i", value):
        number, suffix = value[:-2], value[-2:]
        for other in (
            f"{number}{suffix[0]}B",
            f"-{value}",
            f"{number} {suffix}",
            float(number),
            f"{value} ",
        ):
            yield "quantity", other
    yield from _edge_candidates(rel, value)


def _edge_candidates(rel: tuple[str | int, ...], value: Any) -> Iterator[tuple[str, Any]]:
    """The families after ``quantity``: booleans as strings, negative integers, padded
    names, timestamps after the audit."""
    key = rel[-1]
    in_labels = any(p in _LABEL_MAPS for p in rel)
    if isinstance(value, bool):
        yield "bool_string", str(value).lower()
        yield "bool_string", str(not value).lower()
    elif isinstance(value, int) and value >= 0:
        yield "negative", -1
    if key in _NAME_KEYS and isinstance(value, str) and value and not in_labels:
        yield "padded", f"{value} "
        yield "padded", f" {value}"
    if isinstance(value, str) and _RFC3339.match(value) and not in_labels:
        yield "future_time", _FUTURE
    yield from _late_candidates(rel, value)


def _late_candidates(rel: tuple[str | int, ...], value: Any) -> Iterator[tuple[str, Any]]:
    """The families after ``duplicate_object``: nulls of scalars, numbers in lists, empty
    references, look-alike marks (``key_case`` is :func:`_object_candidates`')."""
    key = rel[-1]
    in_labels = any(p in _LABEL_MAPS for p in rel)
    if isinstance(value, str | int | float | bool) and not in_labels and rel[0] != "metadata":
        yield "null_scalar", None
    if isinstance(key, int) and isinstance(value, str | dict) and not in_labels:
        yield "item_number", 7
    ref = isinstance(key, str) and key not in _NAME_KEYS and bool(_REF_KEY.match(key))
    listed = isinstance(key, int) and len(rel) > 1 and str(rel[-2]).endswith("Namespaces")
    if ref and isinstance(value, str) and value and not in_labels:
        # not a list of namespaces' entry: Velero reads "" there as "no namespace", valid
        # (velero pkg/util/collections/includes_excludes.go validateNamespaceName)
        yield "empty_ref", ""
    if (key in _NAME_KEYS or ref or listed) and isinstance(value, str) and not in_labels:
        at = next((i for i, ch in enumerate(value) if ch in _CONFUSABLE_MARKS), None)
        if at is not None:
            yield "confusable_mark", value[:at] + _CONFUSABLE_MARKS[value[at]] + value[at + 1 :]
    yield from _fz32_candidates(rel, value)


def _fz32_candidates(rel: tuple[str | int, ...], value: Any) -> Iterator[tuple[str, Any]]:
    """``enum_unknown``, ``quantity_exotic``, ``counter_text``."""
    key = rel[-1]
    in_labels = any(p in _LABEL_MAPS for p in rel)
    if (
        isinstance(value, str)
        and _ENUM_ANY.match(value)
        and key not in _NO_ENUM_KEYS
        and not in_labels
        and "annotations" not in rel
    ):
        yield "enum_unknown", value[:-1]
        if sum(ch.isupper() for ch in value) > 1:
            yield "enum_unknown", value.capitalize()
    if key in _QUANTITY_KEYS and isinstance(value, str) and re.fullmatch(r"\d+[KMGTPE]i", value):
        number, suffix = value[:-2], value[-2:]
        for other in (
            "1e3Zi",
            f"+{value}",
            f"0x{value}",
            f"{number}.5.5{suffix}",
            f"{value}\n",
            f"99999999999999999999{suffix}",
        ):
            yield "quantity_exotic", other
    if isinstance(value, int) and not isinstance(value, bool) and rel[0] == "status" and value >= 0:
        for other in (float(value), f"+{value}", f"{value} "):
            yield "counter_text", other


def _order_candidates(
    rel: tuple[str | int, ...], value: Any
) -> Iterator[tuple[tuple[str | int, ...], str, Any]]:
    """``time_order``: each end time of a mapping set one hour before its start time."""
    if not isinstance(value, dict):
        return
    for end, start in _TIME_PAIRS.items():
        began = value.get(start)
        if isinstance(value.get(end), str) and isinstance(began, str) and _RFC3339.match(began):
            when = datetime.fromisoformat(began.replace("Z", "+00:00")) - timedelta(hours=1)
            yield (*rel, end), "time_order", when.strftime("%Y-%m-%dT%H:%M:%SZ")


def _uids(target: Target) -> list[str]:
    """Every ``metadata.uid`` string of ``target``'s objects, in file order, each once."""
    found: dict[str, None] = {}
    for file in target.files:
        for doc in _docs(file):
            for _, obj in _objects(doc):
                meta = obj.get("metadata")
                uid = meta.get("uid") if isinstance(meta, dict) else None
                if isinstance(uid, str) and uid:
                    found[uid] = None
    return list(found)


def mutations(target: Target) -> list[Mutation]:
    """Every single-field mutation of ``target``, in file/document/path order."""
    out = []
    uids = _uids(target)
    for file in target.files:
        docs = _docs(file)
        for d, doc in enumerate(docs):
            for prefix, obj in _objects(doc):
                kind, name = _kind_name(obj)
                meta = obj.get("metadata")
                uid = meta.get("uid") if isinstance(meta, dict) else None
                if isinstance(uid, str) and uid in uids and len(uids) > 1:
                    # the next object's UID (uid_twice)
                    other = uids[(uids.index(uid) + 1) % len(uids)]
                    out.append(
                        Mutation(
                            "uid_twice",
                            target,
                            file,
                            d,
                            (*prefix, "metadata", "uid"),
                            other,
                            kind,
                            name,
                        )
                    )
                refs = meta.get("ownerReferences") if isinstance(meta, dict) else None
                for i, ref in enumerate(refs if isinstance(refs, list) else []):
                    held = ref.get("uid") if isinstance(ref, dict) else None
                    other = next((u for u in uids if u != held and u != uid), None)
                    if isinstance(held, str) and other is not None:
                        at = (*prefix, "metadata", "ownerReferences", i, "uid")
                        out.append(Mutation("owner_uid", target, file, d, at, other, kind, name))
                if isinstance(meta, dict) and isinstance(meta.get("namespace"), str):
                    for edit in ("moved", "filed"):
                        out.append(
                            Mutation(
                                "filed_elsewhere", target, file, d, prefix, _Edit(edit), kind, name
                            )
                        )
                for rel, value in [((), obj), *_walk(obj, ())]:
                    for family, new in _candidates(rel, value) if rel else ():
                        out.append(
                            Mutation(family, target, file, d, (*prefix, *rel), new, kind, name)
                        )
                    for at, family, new in [
                        *_order_candidates(rel, value),
                        *_object_candidates(kind, rel, value),
                    ]:
                        out.append(
                            Mutation(family, target, file, d, (*prefix, *at), new, kind, name)
                        )
                for at, family, new in _absent_candidates(kind, obj):
                    out.append(Mutation(family, target, file, d, (*prefix, *at), new, kind, name))
                for family, edit in _place_candidates(prefix):
                    out.append(Mutation(family, target, file, d, prefix, edit, kind, name))
            if d == 0 and isinstance(doc, dict):
                first = next(_objects(doc), None)
                kind, name = _kind_name(first[1] if first else doc)
                for edit in _TEXT_EDITS:
                    out.append(Mutation("encoding", target, file, 0, (), _Edit(edit), kind, name))
                one_list = len(docs) == 1 and str(doc.get("kind", "")).endswith("List")
                for edit in _RAW_EDITS if one_list else _RAW_EDITS[:-1]:
                    out.append(Mutation("raw_text", target, file, 0, (), _Edit(edit), kind, name))
                for edit in _DOC_EDITS:
                    out.append(Mutation("doc_shape", target, file, 0, (), _Edit(edit), kind, name))
    return out


def _kind_name(obj: dict[str, Any]) -> tuple[str, str]:
    meta = obj.get("metadata")
    # some fixtures hold a deliberately broken object (metadata not a mapping)
    return str(obj.get("kind", "?")), str(meta.get("name", "?")) if isinstance(meta, dict) else "?"


def _object_candidates(
    kind: str, rel: tuple[str | int, ...], value: Any
) -> Iterator[tuple[tuple[str | int, ...], str, Any]]:
    """The families that depend on the object's kind or place: ``api_version``,
    ``no_namespace``, ``status_type``, ``confusable``, ``quantity_text``."""
    if rel == ("apiVersion",) and isinstance(value, str) and value:
        if "/" in value:
            yield rel, "api_version", f"{value.rsplit('/', 1)[0]}/v9"
            yield rel, "api_version", f"{value.rsplit('/', 1)[0]}/v2"
            if not value.endswith("/v1alpha1"):
                yield rel, "api_version", f"{value.rsplit('/', 1)[0]}/v1alpha1"
            yield rel, "api_version", "v1"
        else:
            yield rel, "api_version", "v9"
    if rel == ("metadata", "namespace") and isinstance(value, str):
        yield rel, "no_namespace", _UNSET
    if (
        len(rel) > 1
        and isinstance(rel[-1], str)
        and rel[-1] not in ("kind", "apiVersion")
        and isinstance(rel[-2], str)
        and rel[-2] not in _LABEL_MAPS
        and rel[-2] not in _FREE_FORM_MAPS
    ):
        other = rel[-1].lower() if rel[-1].lower() != rel[-1] else rel[-1].capitalize()
        yield rel, "key_case", _Rename(other)
    if kind in _VELERO_STATUS_KINDS and len(rel) > 1 and rel[0] == "status":
        if isinstance(value, str):
            yield rel, "status_type", 3
        elif isinstance(value, bool):
            yield rel, "status_type", "true"
        elif isinstance(value, int | float):
            yield rel, "status_type", f"{value}%" if rel[-1] == "progress" else str(value)
        elif isinstance(value, dict):
            yield rel, "status_type", [value]
    key = rel[-1] if rel else None
    in_labels = any(p in _LABEL_MAPS for p in rel)
    if (key in _NAME_KEYS or key == "namespace") and isinstance(value, str) and not in_labels:
        at = next((i for i, ch in enumerate(value) if ch in _CONFUSABLE), None)
        if at is not None:
            yield rel, "confusable", value[:at] + _CONFUSABLE[value[at]] + value[at + 1 :]
    found = re.fullmatch(r"(\d+)([KMGTPE]i)", value) if isinstance(value, str) else None
    if key in _QUANTITY_KEYS and found:
        number, suffix = found.groups()
        yield rel, "quantity_text", int(number) * _BINARY[suffix]
        yield rel, "quantity_text", f" {value}"
        yield rel, "quantity_text", f"{number}{suffix.lower()}"
        yield rel, "quantity_text", f"{number[0]}e{len(number) - 1}{suffix}"
    yield from _fz36_candidates(rel, value)
    yield from _h45b_candidates(rel, value)


def _h45b_candidates(
    rel: tuple[str | int, ...], value: Any
) -> Iterator[tuple[tuple[str | int, ...], str, Any]]:
    """``other_type`` and ``list_scalar`` (see the module docstring)."""
    if not rel or rel in (("kind",), ("apiVersion",)):
        return
    in_labels = any(p in _LABEL_MAPS for p in rel)
    others: tuple[Any, ...] = ()
    if isinstance(value, bool):
        others = ([value],)
    elif isinstance(value, str):
        others = () if in_labels else (True, ["x"], {"x": value})
    elif isinstance(value, int | float):
        others = (True, [value])
    elif isinstance(value, list):
        others = (7, "x", True, {"x": "y"})
    elif isinstance(value, dict) and rel[0] != "metadata":
        others = (7, True, ["x"])
    for other in others:
        yield rel, "other_type", other
    if (
        isinstance(value, list)
        and value
        and isinstance(value[0], str | int)
        and not isinstance(value[0], bool)
    ):
        yield rel, "list_scalar", value[0]


#: Optional fields the readers read, by kind, that an export often lacks (``absent_typed``):
#: each added with these wrong-typed values. ``template`` stands for a VM's
#: ``spec.template.spec``.
_ABSENT_FIELDS: dict[str, tuple[str, ...]] = {
    "VirtualMachine": (
        "spec.running",
        "template.domain.firmware.uuid",
        "template.domain.firmware.serial",
        "template.domain.firmware.bootloader",
        "template.domain.firmware.bootloader.efi.persistent",
        "template.domain.devices.tpm.persistent",
        "template.domain.devices.autoattachPodInterface",
        "template.domain.devices.interfaces.0.macAddress",
        "template.domain.devices.disks.0.bootOrder",
        "template.domain.machine.type",
        "template.architecture",
        "template.evictionStrategy",
        "spec.instancetype",
        "spec.preference",
    ),
    "VirtualMachineInstance": (
        "spec.domain.firmware.uuid",
        "status.volumeStatus",
        "status.interfaces",
        "status.migrationState",
    ),
    "Backup": (
        "spec.snapshotVolumes",
        "spec.defaultVolumesToFsBackup",
        "spec.snapshotMoveData",
        "spec.orLabelSelectors",
        "spec.excludedNamespaces",
        "spec.includedResources",
        "spec.resourcePolicy",
        "status.expiration",
    ),
    "Schedule": ("spec.paused", "spec.template.snapshotVolumes", "spec.template.ttl"),
    "PersistentVolumeClaim": ("spec.volumeMode", "spec.dataSourceRef"),
    "PersistentVolume": ("spec.claimRef", "spec.volumeMode"),
    "StorageClass": ("reclaimPolicy", "volumeBindingMode"),
    "VolumeSnapshot": ("status.readyToUse", "status.error"),
    "VolumeSnapshotContent": ("status.readyToUse", "status.error"),
}
_ABSENT_VALUES: tuple[Any, ...] = (42, "false", ["x"], {"x": "y"})


def _absent_candidates(
    kind: str, obj: dict[str, Any]
) -> Iterator[tuple[tuple[str | int, ...], str, Any]]:
    """``absent_typed``: each of :data:`_ABSENT_FIELDS` the object lacks, at the deepest
    mapping it has on the way (the keys below it a nested mapping)."""
    for dotted in _ABSENT_FIELDS.get(kind, ()):
        head, _, tail = dotted.partition(".")
        steps: list[str | int] = (
            ["spec", "template", "spec", *tail.split(".")]
            if head == "template"
            else [head, *tail.split(".")]
        )
        steps = [int(s) if isinstance(s, str) and s.isdigit() else s for s in steps]
        at: Any = obj
        depth = 0
        for step in steps:
            keyed = isinstance(at, dict) and isinstance(step, str) and step in at
            if not (keyed or (isinstance(at, list) and isinstance(step, int) and step < len(at))):
                break
            at = at[step]
            depth += 1
        if depth == len(steps) or not isinstance(at, dict) or isinstance(steps[depth], int):
            continue  # present (the other families change it), or no mapping to add it to
        rest = steps[depth + 1 :]
        if any(isinstance(s, int) for s in rest):
            continue
        for bad in _ABSENT_VALUES:
            new: Any = bad
            for key in reversed(rest):
                new = {key: new}
            yield tuple(steps[: depth + 1]), "absent_typed", new


#: The blanks ``key_blank`` puts around a key.
_KEY_BLANKS = ("{} ", " {}", "{}\u00a0")
#: ``time_edge``'s timestamps (a date only is made of the value's own date).
_TIME_EDGES = ("0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z")


def _fz36_candidates(
    rel: tuple[str | int, ...], value: Any
) -> Iterator[tuple[tuple[str | int, ...], str, Any]]:
    """``key_blank``, ``time_zone``, ``time_edge``, ``bool_text`` (see the module docstring)."""
    key = rel[-1] if rel else None
    if isinstance(key, str) and rel not in (("kind",), ("apiVersion",)):
        for form in _KEY_BLANKS:
            yield rel, "key_blank", _Rename(form.format(key))
    in_labels = any(p in _LABEL_MAPS for p in rel)
    if isinstance(value, str) and _RFC3339.match(value) and value.endswith("Z") and not in_labels:
        instant = datetime.fromisoformat(value.replace("Z", "+00:00"))
        for hours, minutes in ((2, 0), (-5, -30)):
            shifted = instant + timedelta(hours=hours, minutes=minutes)
            sign = "+" if hours >= 0 else "-"
            zone = f"{sign}{abs(hours):02d}:{abs(minutes):02d}"
            yield rel, "time_zone", shifted.strftime("%Y-%m-%dT%H:%M:%S") + zone
        yield rel, "time_zone", instant.strftime("%Y-%m-%dT%H:%M:%S") + ".000000Z"
        for other in (
            value[:10],
            *_TIME_EDGES,
            f"{value[:10]}T24:00:00Z",
            f"{value[:10]}T23:59:60Z",
        ):
            yield rel, "time_edge", other
    if isinstance(value, bool):
        for other in (str(value), str(not value), int(value), int(not value)):
            yield rel, "bool_text", other


def _place_candidates(prefix: tuple[str | int, ...]) -> Iterator[tuple[str, _Edit]]:
    """``duplicate_object`` of the object at ``prefix``; ``list_shape`` once per List (at its
    first item): the item nested, the List typed by its items' kind or by another's."""
    yield "duplicate_object", _Edit("twice")
    yield "cross_file", _Edit("elsewhere")
    yield "cross_file", _Edit("conflict")
    if prefix and prefix[-1] == 0:
        for edit in ("nest", "typed", "mistyped"):
            yield "list_shape", _Edit(edit)
        for edit in _ITEMS_EDITS:
            yield "list_entry", _Edit(edit)
    if prefix:
        for edit in _ENTRY_EDITS:
            yield "list_entry", _Edit(edit)


def _apply(docs: list[Any], m: Mutation) -> list[Any]:
    docs = list(docs)
    docs[m.doc] = copy.deepcopy(docs[m.doc])
    if isinstance(m.value, _Edit):
        return _place(docs, m)
    parent = docs[m.doc]
    for step in m.path[:-1]:
        parent = parent[step]
    if m.value is _UNSET:
        del parent[m.path[-1]]
    elif isinstance(m.value, _Rename):
        parent[str(m.value)] = parent.pop(m.path[-1])
    else:
        parent[m.path[-1]] = m.value
    return docs


def _place(docs: list[Any], m: Mutation) -> list[Any]:
    """Apply an :class:`_Edit` of an object's place (the document is a copy already)."""
    doc = docs[m.doc]
    obj = doc["items"][m.path[1]] if m.path else doc
    if m.value == "twice":
        twin = copy.deepcopy(obj)
        meta = twin.get("metadata")
        if isinstance(meta, dict):
            meta["resourceVersion"] = f"{meta.get('resourceVersion', '')}7919"
        if m.path:
            doc["items"].insert(m.path[1] + 1, twin)
        else:
            docs.insert(m.doc + 1, twin)
    elif m.value == "nest":
        doc["items"][m.path[1]] = {"apiVersion": "v1", "kind": "List", "items": [obj]}
    elif m.value == "typed":
        doc["kind"] = f"{m.kind}List"
    elif m.value == "mistyped":
        doc["kind"] = "BackupList" if m.kind == "VirtualMachine" else "VirtualMachineList"
    elif m.value in _ENTRY_REPLACEMENTS:
        doc["items"][m.path[1]] = _ENTRY_REPLACEMENTS[str(m.value)]
    elif m.value in ("no_kind", "no_api_version"):
        obj.pop("kind" if m.value == "no_kind" else "apiVersion", None)
    elif m.value == "items_map":
        doc["items"] = obj
    return docs


#: What ``list_entry`` puts in an item's place.
_ENTRY_REPLACEMENTS: dict[str, Any] = {"entry_null": None, "entry_text": "junk", "entry_number": 7}


#: The file :data:`_COPY_EDITS` write the object's copy to.
_COPY_FILE = "zz-copy.yaml"
#: The ``cross_file`` edits: the file itself is unchanged, a copy goes to :data:`_COPY_FILE`.
_COPY_EDITS = ("elsewhere", "conflict", "moved", "filed")
#: The :data:`_COPY_EDITS` whose copy goes to ``namespaces/`` :data:`_ELSEWHERE` ``/<file>``.
_FOLDER_EDITS = ("moved", "filed")


def _copy_path(root: Path, m: Mutation) -> Path:
    """Where the copy of ``m``'s object goes under the export ``root``."""
    if m.value in _FOLDER_EDITS:
        return root / "namespaces" / _ELSEWHERE / m.file.name
    return root / _COPY_FILE


def _without(docs: list[Any], m: Mutation) -> list[Any]:
    """``docs`` without the object of ``m`` (``filed_elsewhere`` moved it)."""
    docs = list(docs)
    if m.path:
        doc = docs[m.doc] = copy.deepcopy(docs[m.doc])
        del doc["items"][m.path[1]]
    else:
        del docs[m.doc]
    return docs


def _raw_text(docs: list[Any], edit: str) -> bytes:
    """The file's bytes after a ``raw_text`` edit (see the module docstring)."""
    text = _dump(docs)
    if edit == "utf16":
        return text.encode("utf-16")
    if edit == "nul":
        half = len(text) // 2
        return (text[:half] + "\0" + text[half:]).encode()
    if edit == "tag":
        return re.sub(r"^(\s*-?\s*name: )", r"\1!custom ", text, count=1, flags=re.M).encode()
    if edit == "json_cut":
        whole = json.dumps(docs[0], default=str)
        return whole[: len(whole) // 2].encode()
    lines = text.split("\n")
    return "\n".join(lines[: len(lines) // 2]).encode() + b"\n"


def _doc_shape(docs: list[Any], edit: str) -> bytes:
    """The file's bytes after a ``doc_shape`` edit: a document before its first one that is
    empty (``---`` right after ``---``), ``null``, or a bare string."""
    head = {"empty_doc": "---\n", "null_doc": "--- null\n", "text_doc": "--- junk\n"}[edit]
    return (head + "---\n" + _dump(docs)).encode()


def _copy_text(docs: list[Any], m: Mutation) -> bytes:
    """The object of ``m`` alone, as a file of its own (``conflict``: with another label
    and resourceVersion)."""
    doc = docs[m.doc]
    twin = copy.deepcopy(doc["items"][m.path[1]] if m.path else doc)
    meta = twin.get("metadata")
    if m.value == "conflict" and isinstance(meta, dict):
        meta["resourceVersion"] = f"{meta.get('resourceVersion', '')}7919"
        labels = meta.get("labels")
        meta["labels"] = {**(labels if isinstance(labels, dict) else {}), "copy": "other"}
    return _dump([twin]).encode()


def _render(docs: list[Any], m: Mutation) -> bytes:
    """The mutated file's bytes (a file-wide :class:`_Edit` applied to its text)."""
    if m.value == "moved":
        return _dump(_without(docs, m)).encode()
    if m.value in _COPY_EDITS:
        return _dump(docs).encode()
    if m.value in _RAW_EDITS:
        return _raw_text(docs, str(m.value))
    if m.value in _DOC_EDITS:
        return _doc_shape(docs, str(m.value))
    if m.value not in _TEXT_EDITS:
        return _dump(_apply(docs, m)).encode()
    text = _dump(docs)
    if m.value == "bom":
        return b"\xef\xbb\xbf" + text.encode()
    if m.value == "crlf":
        return text.replace("\n", "\r\n").encode()
    lines = text.split("\n")
    at = next((i for i, ln in enumerate(lines) if ln.startswith("  ")), None)
    if at is not None:
        lines[at] = "\t" + lines[at][2:]
    return "\n".join(lines).encode()


def _dump(docs: list[Any]) -> str:
    buf = io.StringIO()
    yaml.safe_dump_all(docs, buf, sort_keys=False, width=1 << 16)
    return buf.getvalue()


class _Tracebacks(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.seen: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info:
            self.seen.append(record.getMessage())


def _audit(target: Target, root: Path) -> AuditReport:
    data = DirectorySource(root).collect()
    if target.path.is_file():
        for kind in BY_KIND:
            if data.states.get(kind) is not KindState.PARTIAL:
                data.states[kind] = (
                    KindState.UNAVAILABLE if kind in target.unavailable else KindState.COMPLETE
                )
    return audit_data(data, AuditSettings(), at=AT)


def _verdicts(report: AuditReport) -> dict[tuple[str, str], tuple[str, dict[str, str]]]:
    return {
        (v.namespace, v.name): (
            v.readiness.value,
            {f.check_id: f"{f.status.value} {f.severity.value}" for f in v.findings},
        )
        for v in report.vms
    }


def _vanish_excused(
    report: AuditReport,
    known: set[str],
    after: dict[tuple[str, str], Any],
    baseline: dict[tuple[str, str], Any],
) -> bool:
    """True when VMs missing from ``report`` could not be listed by name: a new problem
    refuses a whole file or list item (no object name to list), or leaves objects out as
    created after the audit instant (they did not exist then, ``sources.asof``), or a VM
    appeared under another key (its name or namespace was the mutated field: it is listed
    there)."""
    if any(vm not in baseline for vm in after):
        return True
    for p in report.collection_problems:
        if str(p.model_dump()) in known:
            continue
        if CREATED_AFTER in p.reason or (p.file is not None and not p.name):
            return True
    return False


class _Workspace:
    """A scratch copy of one target; one file at a time is rewritten with a mutation."""

    def __init__(self, target: Target, scratch: Path) -> None:
        self.target = target
        self.root = scratch / "export"
        if target.path.is_file():
            self.root.mkdir(parents=True)
            shutil.copy(target.path, self.root / target.path.name)
        else:
            shutil.copytree(target.path, self.root)
        self.docs = {f: _docs(f) for f in target.files}
        for file, docs in self.docs.items():
            # the baseline is the same YAML dump as the mutated files, but for the mutation
            (self.root / file.name).write_text(_dump(docs))
        report = _audit(target, self.root)
        self.baseline = _verdicts(report)
        self.problems = {str(p.model_dump()) for p in report.collection_problems}

    def run(self, m: Mutation, handler: _Tracebacks) -> Outcome:
        dest = self.root / m.file.name
        original = dest.read_bytes()
        dest.write_bytes(_render(self.docs[m.file], m))
        extra = _copy_path(self.root, m)
        if m.value in _COPY_EDITS:
            extra.parent.mkdir(parents=True, exist_ok=True)
            extra.write_bytes(_copy_text(self.docs[m.file], m))
        out = Outcome()
        handler.seen.clear()
        try:
            report = _audit(self.target, self.root)
        except Exception as exc:  # the property: never
            out.traceback = f"{type(exc).__name__}: {exc}"
            return out
        finally:
            dest.write_bytes(original)
            extra.unlink(missing_ok=True)
            shutil.rmtree(self.root / "namespaces" / _ELSEWHERE, ignore_errors=True)
        if handler.seen:
            out.traceback = handler.seen[0]
        crashed = [
            f"{f.check_id} raised {f.evidence['exception']} on {v.namespace}/{v.name}"
            for v in report.vms
            for f in v.findings
            if "exception" in f.evidence
        ]
        if crashed and out.traceback is None:
            # the engine turns a check that raised into ERROR and logs the traceback at debug
            # level only: a crash all the same (a field the validation let through)
            out.traceback = crashed[0]
        # named by a problem the unmutated export did not have
        text = " ".join(
            t
            for t in (str(p.model_dump()) for p in report.collection_problems)
            if t not in self.problems
        )
        out.named = (
            m.name in text or m.file.name in text or _COPY_FILE in text or _ELSEWHERE in text
        )
        after = _verdicts(report)
        if not _vanish_excused(report, self.problems, after, self.baseline):
            # a VM the mutation made vanish from vms[] is the worst improvement: a reader
            # looking it up finds nothing, not even UNKNOWN (a VM the source refuses is
            # listed, ClusterData.refused)
            out.improved += [
                f"{vm[0]}/{vm[1]} {before[0]} -> vanished"
                for vm, before in self.baseline.items()
                if vm not in after
            ]
        for vm, (ready, findings) in after.items():
            before = self.baseline.get(vm)
            if before is None:
                continue
            out.changed = out.changed or findings != before[1]
            if worst_rank(ready, findings) < worst_rank(*before):
                out.improved.append(f"{vm[0]}/{vm[1]} {before[0]} -> {ready}")
        return out


def _sample(pool: list[Mutation], count: int, rng: random.Random) -> list[Mutation]:
    """``count`` mutations of ``pool`` (all of it when it is no larger): half the count spread
    evenly over the families (all of a family smaller than its share), the rest at random from
    what is left, so a family with few sites is tried in every run, not only by chance."""
    if count >= len(pool):
        return list(pool)
    by_family: dict[str, list[Mutation]] = {}
    for m in pool:
        by_family.setdefault(m.family, []).append(m)
    share = count // (2 * len(by_family))
    chosen: list[Mutation] = []
    for family in sorted(by_family):
        found = by_family[family]
        chosen += found if len(found) <= share else rng.sample(found, share)
    taken = {id(m) for m in chosen}
    rest = [m for m in pool if id(m) not in taken]
    return chosen + rng.sample(rest, count - len(chosen))


def run(
    count: int,
    seed: int = 17,
    export: Path | None = None,
    families: tuple[str, ...] = FAMILIES,
    kinds: tuple[str, ...] = (),
) -> dict[str, Counter[str]]:
    """Try ``count`` mutations sampled from every target, each family tried (:func:`_sample`);
    return per-family counters.

    ``export``: mutate (a temporary copy of) that export directory instead of ours;
    ``families``: only mutations of these families; ``kinds``: only mutations of objects of
    these kinds (all when empty: ``--kind DeleteBackupRequest`` reaches the few objects of a
    kind that a sample of every target seldom draws, fz35).

    Counter keys: ``tried``, ``improved``, ``traceback``, ``changed``, ``unnamed``
    (changed a finding without a collection problem naming the object or file),
    plus the key ``"!"`` (improved or traceback) and ``"?"`` (changed but unnamed), each
    a Counter of mutation descriptions.
    """
    rng = random.Random(seed)
    chosen_targets = [Target(export)] if export is not None else targets()
    pool = [
        m
        for t in chosen_targets
        for m in mutations(t)
        if m.family in families and (not kinds or m.kind in kinds)
    ]
    chosen = _sample(pool, count, rng)
    chosen.sort(key=lambda m: (str(m.target.path), str(m.file), m.doc))
    stats: dict[str, Counter[str]] = {f: Counter() for f in FAMILIES}
    stats["!"] = Counter()
    stats["?"] = Counter()
    handler = _Tracebacks()
    logging.getLogger().addHandler(handler)
    logging.getLogger().setLevel(logging.INFO)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            workspace: _Workspace | None = None
            for i, m in enumerate(chosen):
                if workspace is None or workspace.target != m.target:
                    scratch = Path(tmp) / str(i)
                    workspace = _Workspace(m.target, scratch)
                out = workspace.run(m, handler)
                s = stats[m.family]
                s["tried"] += 1
                for key, hit in (
                    ("improved", bool(out.improved)),
                    ("traceback", out.traceback is not None),
                    ("changed", out.changed),
                    (
                        "unnamed",
                        out.changed and not out.named and m.family not in VALID_INPUT_FAMILIES,
                    ),
                ):
                    if hit:
                        s[key] += 1
                if out.improved or out.traceback:
                    detail = "; ".join(out.improved) or str(out.traceback)
                    stats["!"][f"{m.describe()} => {detail}"] += 1
                elif out.changed and not out.named:
                    stats["?"][m.describe()] += 1
    finally:
        logging.getLogger().removeHandler(handler)
    return stats


def main() -> None:
    """Print the per-family figures of a mutation run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument("--show", type=int, default=20, help="print this many failing mutations")
    parser.add_argument(
        "--export", type=Path, help="mutate a temporary copy of this export directory instead"
    )
    parser.add_argument(
        "--family", action="append", choices=FAMILIES, help="only this family (repeatable)"
    )
    parser.add_argument(
        "--kind", action="append", help="only objects of this kind (repeatable)", default=[]
    )
    args = parser.parse_args()
    if args.export is not None and not args.export.is_dir():
        parser.error(f"--export {args.export}: not a directory")
    stats = run(
        args.count, args.seed, args.export, tuple(args.family or FAMILIES), tuple(args.kind)
    )
    print(
        f"{'family':<17}{'tried':>7}{'improved':>10}{'traceback':>11}{'changed':>9}{'unnamed':>9}"
    )
    total: Counter[str] = Counter()
    for family in FAMILIES:
        s = stats[family]
        total.update(s)
        print(
            f"{family:<17}{s['tried']:>7}{s['improved']:>10}{s['traceback']:>11}"
            f"{s['changed']:>9}{s['unnamed']:>9}"
        )
    print(
        f"{'total':<17}{total['tried']:>7}{total['improved']:>10}{total['traceback']:>11}"
        f"{total['changed']:>9}{total['unnamed']:>9}"
    )
    for line in list(stats["!"])[: args.show]:
        print("  BAD", line)
    for line in list(stats["?"])[: args.show]:
        print("  UNNAMED", line)


if __name__ == "__main__":
    main()
