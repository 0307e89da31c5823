"""Field readers that validate while they read: type, enum and format, with a named issue.

Each reader takes the object, a dotted field path and a list to append
:class:`FieldIssue` to; it returns the value when valid, else None (never a
guess). The records in :mod:`auditor.inventory.records` are built from them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from auditor.fieldnames import fold_key
from auditor.kubevalues import dig, parse_quantity, parse_rfc3339, parse_time
from auditor.models import CollectionProblem

__all__ = [
    "FieldIssue",
    "read_str",
    "read_enum",
    "read_time",
    "read_labels",
    "read_quantity",
    "read_uuid",
    "read_list",
    "to_problem",
    "condition_type_fault",
    "condition_key_faults",
    "name_fault_of",
    "uid_fault",
    "owner_ref_fault",
    "OWNER_REF_KEYS",
    "boot_order_ok",
    "UUID_RE",
    "MAC_RE",
    "mac_address",
    "firmware_uuid",
]

#: A firmware UUID as libvirt reads it (KubeVirt passes ``firmware.uuid`` to the domain's
#: SMBIOS sysinfo unvalidated): 32 hex digits, ``-`` or spaces allowed between digit pairs
#: and spaces around, so ``6a1a24a140614607...`` (no dashes) is the same UUID as the
#: 8-4-4-4-12 form. libvirt src/util/viruuid.c virUUIDParse ("a liberal scan allowing '-'
#: and ' ' anywhere between character pairs"); kubevirt pkg/virt-launcher/virtwrap/
#: converter/compute/sysinfo.go buildSystem.
UUID_RE = re.compile(r"^ *(?:[- ]*[0-9a-fA-F]{2}){16} *$")
#: Ethernet MAC as KubeVirt accepts it: what Go's ``net.ParseMAC`` reads as 6 octets (colon
#: or dash separated, or three dot-separated groups of four digits: ``0200.0000.0002``);
#: kubevirt pkg/network/link/mac.go ValidateMacAddress refuses longer forms.
MAC_RE = re.compile(
    r"^(?:[0-9a-fA-F]{2}([:-])[0-9a-fA-F]{2}(?:\1[0-9a-fA-F]{2}){4}"
    r"|[0-9a-fA-F]{4}\.[0-9a-fA-F]{4}\.[0-9a-fA-F]{4})$"
)


def firmware_uuid(value: str) -> str:
    """One spelling of a UUID libvirt admits (:data:`UUID_RE`): lower-case 8-4-4-4-12, so
    ``6A1A24A1406146078BF4A3963D0C5895`` is ``6a1a24a1-4061-4607-8bf4-a3963d0c5895``;
    anything else is only lower-cased."""
    if not UUID_RE.match(value):
        return value.lower()
    h = "".join(c for c in value.lower() if c not in "- ")
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def mac_address(mac: str) -> str:
    """One spelling of a MAC KubeVirt admits (:data:`MAC_RE`): lower-case, colon separated,
    so ``02-00-00-AA-BB-CC`` and ``0200.00aa.bbcc`` are ``02:00:00:aa:bb:cc``; anything
    else is only lower-cased, dashes made colons."""
    if not MAC_RE.match(mac):
        return mac.lower().replace("-", ":")
    digits = "".join(c for c in mac.lower() if c not in ":-.")
    return ":".join(digits[i : i + 2] for i in range(0, 12, 2))


_REJECT = "; the API server would reject this object, so the export is damaged or hand-edited"
_SERVER_SET = "; the API server always sets it, so the export is damaged or hand-edited"


@dataclass(frozen=True, slots=True)
class FieldIssue:
    """One malformed field: dotted ``field`` path, ``reason`` (a phrase after the field name).

    ``rejected`` is True when Kubernetes (or KubeVirt's admission webhook) would
    refuse an object with this value, so the value cannot be what the cluster holds.
    """

    field: str
    reason: str
    rejected: bool = False

    @property
    def text(self) -> str:
        """The reason with the rejection note appended."""
        return self.reason + (_REJECT if self.rejected else "")


def _steps(path: str) -> tuple[tuple[str, ...], str]:
    steps = _STEPS.get(path)
    if steps is None:
        *head, last = path.split(".")
        steps = (tuple(head), last)
        if len(_STEPS) < _STEPS_MAX:
            _STEPS[path] = steps
    return steps


def _get(obj: Any, path: str) -> tuple[bool, Any]:
    """(present, value) of a dotted path; a non-mapping on the way counts as absent."""
    steps = _steps(path)
    parent = obj
    for key in steps[0]:  # kubevalues.dig, inlined: asked of every indexed object
        if not isinstance(parent, dict):
            return False, None
        parent = parent.get(key)
    if not isinstance(parent, dict) or steps[1] not in parent:
        return False, None
    return True, parent[steps[1]]


#: Dotted paths already split by :func:`_get` (the few dozen the parsers read, asked of
#: hundreds of thousands of objects); bounded, as a path could come from input.
_STEPS: dict[str, tuple[tuple[str, ...], str]] = {}
_STEPS_MAX = 1 << 12


def _blocked(obj: Any, path: str, issues: list[FieldIssue]) -> None:
    """For a ``path`` read as absent: when a step on the way holds a value that is no mapping
    (``spec.domain.firmware: "junk"``, a list), that step is an issue. What the field holds
    is then unknown, not unset (bench.mutations wrong_type over the shared export: a VMI's
    ``firmware: junk`` read as "no firmware uuid" and RR-DSK-003 named a firmware change,
    with nothing named). The API server refuses such an object (its OpenAPI schema types
    every step an object). Named once per step."""
    parent = obj
    head = _steps(path)[0]
    for depth, key in enumerate(head):
        if not isinstance(parent, dict):
            return
        parent = parent.get(key)
        if parent is None:
            return
        if not isinstance(parent, dict):
            field = ".".join(head[: depth + 1])
            if not any(i.field == field for i in issues):
                issues.append(FieldIssue(field, f"is a {_kind_of(parent)}, not a mapping", True))
            return


def _kind_of(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def read_str(
    obj: Any,
    path: str,
    issues: list[FieldIssue],
    *,
    required: bool = False,
    server_set: bool = False,
    empty_ok: bool = False,
    name: bool = True,
) -> str | None:
    """A non-empty string at ``path``; a wrong type, empty (unless ``empty_ok``: then "" is
    returned) or (if ``required``) absent value is an issue.

    ``name``: the string names an object, a driver or a provisioner (every caller but
    :func:`read_enum`), so a blank or control character in it is an issue too: no object is
    named so, and the value reads as absent (red team fz18: ``driver: "rbd.csi.ceph.com "``
    or a Backup's ``storageLocation: "default "`` changed findings with nothing named)."""
    present, value = _get(obj, path)
    if not present:
        _blocked(obj, path, issues)
    if not present or value is None:
        if required or (present and server_set):
            issues.append(
                FieldIssue(path, "is missing" + (_SERVER_SET if server_set else ""), not server_set)
            )
        elif present:
            return None
        return None
    if not isinstance(value, str):
        issues.append(FieldIssue(path, f"is a {_kind_of(value)}, not a string", True))
        return None
    if not value:
        if empty_ok:
            return value
        issues.append(FieldIssue(path, "is an empty string", required))
        return None
    if name and name_fault_of(value) is not None:
        issues.append(FieldIssue(path, f"is {name_fault_of(value)}: no object is named so"))
        return None
    return value


def boot_order_ok(value: Any) -> bool:
    """Whether ``value`` is a disk's ``bootOrder`` as KubeVirt takes it: a Go ``*uint`` its
    admitter refuses below 1 (an integer from 1 to 2^64 - 1, never a bool)."""
    return type(value) is int and 1 <= value < 2**64


#: The fields every ownerReference holds (apimachinery pkg/api/validation/objectmeta.go
#: ``validateOwnerReference``: apiVersion, kind, name and uid must not be empty)
OWNER_REF_KEYS = ("apiVersion", "kind", "name", "uid")


def owner_ref_fault(ref: Any) -> str | None:
    """Why ``ref`` (one ``metadata.ownerReferences`` entry) is no reference the API server
    stores, or None: not a mapping, or one of :data:`OWNER_REF_KEYS` missing, empty or of
    another type, or a name with a blank or an invisible character
    (https://github.com/kubernetes/apimachinery/blob/master/pkg/api/validation/objectmeta.go).
    Read as written, such an owner is none, and a VolumeSnapshot owned by a
    VirtualMachineSnapshotContent being deleted (a ``kind`` of 1.5) counted as a lasting
    copy, unnamed (bench.mutations deep_type, fz39 seed 11104)."""
    if not isinstance(ref, dict):
        return f"is a {_kind_of(ref)}, not an owner reference"
    for key in OWNER_REF_KEYS:
        value = ref.get(key)
        if not isinstance(value, str) or not value:
            what = "missing" if key not in ref else f"a {_kind_of(value)}" if value else "empty"
            return f"has {key} {what}, which every owner reference holds as a string"
    fault = name_fault_of(ref["name"])
    return None if fault is None else f"has name {fault}"


_TYPE_WORDS = {
    bool: "a boolean",
    int: "a number",
    float: "a number",
    list: "a list",
    dict: "a mapping",
}


def uid_fault(obj: Any) -> str | None:
    """What is wrong with ``obj``'s ``metadata.uid`` that is no string (None when it is one,
    or absent), as a phrase after the field name.

    The API server gives every object a UID string (``types.UID``;
    https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#uids), and the
    auditor ties objects together by it: Velero's ``velero.io/pvc-uid`` label ties a copy to
    its claim, a VirtualMachineSnapshot's ``status.sourceUID`` and owner references to their
    VM. A number, list or mapping proves no identity (b40: a claim's ``uid: 42`` matched a
    PodVolumeBackup labelled "42", and ``uid: [..]`` dropped the claim's copy for a FAIL, both
    unnamed).
    """
    uid = dig(obj, "metadata", "uid")
    if uid is None or isinstance(uid, str):
        return None
    word = _TYPE_WORDS.get(type(uid), f"a {type(uid).__name__}")
    return f"is {word}, not the UID string the API server writes"


def name_fault_of(value: str) -> str | None:
    """What makes ``value`` no name a Kubernetes object, driver or provisioner can have (a
    blank, a control or other invisible character), shown escaped; None when there is none.

    Every name and qualified name of the API is a run of visible ASCII characters (DNS-1123,
    ``IsQualifiedName``); a reference holding a blank names nothing on any cluster."""
    if value.isascii() and value.isprintable() and " " not in value:
        return None
    return f"{ascii(value[:80])}, which holds a blank or an invisible character"


def read_enum(
    obj: Any,
    path: str,
    allowed: Iterable[str],
    issues: list[FieldIssue],
    *,
    required: bool = False,
    server_set: bool = False,
) -> str | None:
    """A string at ``path`` that is one of ``allowed`` (case-sensitive, as the API is)."""
    value = read_str(obj, path, issues, required=required, server_set=server_set, name=False)
    options = tuple(allowed)
    if value is not None and value not in options:
        issues.append(FieldIssue(path, f"is {value!r}, not one of {', '.join(options)}", True))
        return None
    return value


def read_time(
    obj: Any, path: str, issues: list[FieldIssue], *, server_set: bool = False
) -> datetime | None:
    """An RFC 3339 timestamp (UTC) at ``path``; unreadable or (if ``server_set``) absent is an issue."""
    present, value = _get(obj, path)
    if not present:
        _blocked(obj, path, issues)
    if not present or value is None:
        if server_set:
            issues.append(FieldIssue(path, "is missing" + _SERVER_SET))
        return None
    parsed = parse_rfc3339(value) if isinstance(value, str | datetime) else None
    if parsed is None:
        zero = parse_time(value) == datetime(1, 1, 1, tzinfo=UTC)
        what = (
            "Go's zero time (metav1.Time writes it as null)"
            if zero
            else "not an RFC 3339 timestamp"
        )
        issues.append(FieldIssue(path, f"is {_show(value)}, {what}", True))
    return parsed


def read_labels(obj: Any, path: str, issues: list[FieldIssue]) -> dict[str, str]:
    """A ``str -> str`` mapping (labels, annotations); anything else is an issue and reads as {}."""
    present, value = _get(obj, path)
    if not present:
        _blocked(obj, path, issues)
    if not present or value is None:
        return {}
    if not isinstance(value, dict):
        issues.append(FieldIssue(path, f"is a {_kind_of(value)}, not a mapping", True))
        return {}
    bad = [str(k) for k, v in value.items() if not isinstance(k, str) or not isinstance(v, str)]
    if bad:
        issues.append(
            FieldIssue(path, f"has non-string keys or values ({', '.join(bad[:3])})", True)
        )
    return {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, str)}


def read_quantity(obj: Any, path: str, issues: list[FieldIssue]) -> int | None:
    """A resource quantity in bytes at ``path``; unreadable is an issue."""
    present, value = _get(obj, path)
    if not present:
        _blocked(obj, path, issues)
    if not present or value is None:
        return None
    size = parse_quantity(value)
    if size is None:
        issues.append(FieldIssue(path, f"is {_show(value)}, not a resource quantity", True))
    return size


def read_uuid(obj: Any, path: str, issues: list[FieldIssue]) -> str | None:
    """A UUID string at ``path``; anything else is an issue (not counted as set)."""
    value = read_str(obj, path, issues)
    if value is not None and not UUID_RE.match(value):
        issues.append(FieldIssue(path, f"is {_show(value)}, not a UUID"))
        return None
    return value


def read_list(
    obj: Any, path: str, issues: list[FieldIssue], *, named: bool = True
) -> list[Any] | None:
    """The list at ``path`` (None when absent); a non-list is an issue and reads as None.

    With ``named``, entries that are not mappings with a string ``name`` are an issue
    and left out.
    """
    present, value = _get(obj, path)
    if not present:
        _blocked(obj, path, issues)
    if not present or value is None:
        return None
    if not isinstance(value, list):
        issues.append(FieldIssue(path, f"is a {_kind_of(value)}, not a list", True))
        return None
    if not named:
        return value
    good = [
        v for v in value if isinstance(v, dict) and isinstance(v.get("name"), str) and v["name"]
    ]
    if len(good) != len(value):
        issues.append(FieldIssue(path, "has entries that are not objects with a name", True))
    return good


#: The condition types the checks look up on a VM or VMI (KubeVirt's
#: VirtualMachineInstanceConditionType and VirtualMachineConditionType constants).
KUBEVIRT_CONDITIONS = (
    "Ready",
    "AgentConnected",
    "LiveMigratable",
    "RestartRequired",
    "Paused",
    "Failure",
)
_CONDITION_KNOWN = {c.lower(): c for c in KUBEVIRT_CONDITIONS}
#: A condition type is a (qualified) name: no blank, no other punctuation than ``-_./``.
_CONDITION_TYPE = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?$")


def condition_type_fault(value: str) -> str | None:
    """Why the string ``value`` is no condition type KubeVirt writes, or None.

    A type with a blank or other stray characters, or one of KubeVirt's types in another
    case (``agentconnected``, ``AgentConnected ``), is no condition KubeVirt wrote: read as
    "no such condition", a guest agent vanished with nothing named (bench.mutations
    enum_case and invalid_enum over the shared export). Any other well-formed type is
    another controller's condition, and valid.
    """
    if not _CONDITION_TYPE.match(value):
        return f"is {value!r:.40}, not a condition type (a name without blanks)"
    known = _CONDITION_KNOWN.get(value.lower())
    if known is not None and known != value:
        return f"is {value!r:.40}, KubeVirt's {known} in another case"
    return None


#: The fields of a KubeVirt condition (kubevirt.io/api core/v1
#: ``VirtualMachineInstanceCondition``, ``VirtualMachineCondition``; ``observedGeneration``
#: of ``metav1.Condition``)
_CONDITION_KEYS = frozenset(
    {
        "type",
        "status",
        "lastProbeTime",
        "lastTransitionTime",
        "reason",
        "message",
        "observedGeneration",
    }
)
_CONDITION_BY_FOLD = {k.lower(): k for k in _CONDITION_KEYS}


def condition_key_faults(cond: dict[Any, Any]) -> list[tuple[str, str, bool]]:
    """``(field below the condition, reason, refused)`` for each key of one condition mapping
    that no cluster stores, and for a ``type`` or ``status`` it lacks.

    ``type`` and ``status`` are required (no ``omitempty``: kubevirt.io/api core/v1 types.go
    ``VirtualMachineInstanceCondition``; https://kubernetes.io/docs/reference/kubernetes-api/
    common-definitions/ Condition), and the API server prunes a key its schema does not
    know, so a key that is no string, or holds a blank or an invisible character, or is a
    condition field in another case (``"type "``, ``Status``) is an edited copy, and the
    field it stands for is missing from it (b40: ``"type ": AgentConnected`` read as no
    AgentConnected condition, unnamed). A well-formed unknown key is left alone. ``refused``:
    the API server refuses the condition (a missing ``type`` or ``status``), rather than
    pruning the key.
    """
    out: list[tuple[str, str, bool]] = []
    for key in cond:
        if key in _CONDITION_KEYS:
            continue
        if not isinstance(key, str):
            out.append((f"[{key!r:.40}]", "is a key that is no string", True))
            continue
        stands = _CONDITION_BY_FOLD.get(fold_key(key))
        if stands is not None or name_fault_of(key) is not None:
            what = f", standing for {stands}" if stands is not None else ""
            out.append(
                (
                    stands or f"[{ascii(key[:40])}]",
                    f"is written {ascii(key[:40])}{what}: no condition field is spelled so "
                    "(the API server prunes an unknown one)",
                    False,
                )
            )
    for key in ("type", "status"):
        if key not in cond and not any(f == key for f, _, _ in out):
            out.append((key, "is missing; every condition has one", True))
    return out


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def to_problem(
    issue: FieldIssue, *, kind: str, namespace: str, name: str, file: str | None
) -> CollectionProblem:
    """A collection problem naming file, object and field of ``issue``."""
    ref = f"{namespace}/{name}" if namespace else name
    return CollectionProblem(
        reason=f"{kind} {ref} field {issue.field} {issue.text}",
        file=file,
        kind=kind,
        namespace=namespace,
        name=name,
        field=issue.field,
        kinds=(kind,),
    )
