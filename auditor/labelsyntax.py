"""The character rules of label and annotation keys, label values and ConfigMap keys.

The API server refuses an object whose label or annotation key is no qualified name, whose
label value is no label value, or whose ConfigMap data key has another character
(k8s.io/apimachinery pkg/util/validation/validation.go ``IsQualifiedName``,
``IsValidLabelValue``, ``IsConfigMapKey``;
https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#syntax-and-character-set),
so an export holding one was edited. These are the characters only (a blank, an invisible or
non-ASCII character is what edits add), tested per map in one scan.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = [
    "CONFIG_MAP_KEY",
    "REDACTED_VALUE",
    "LABEL_VALUE",
    "NO_CONFIG_MAP_KEY",
    "NO_LABEL_VALUE",
    "NO_QUALIFIED_NAME",
    "QUALIFIED_NAME",
    "annotations_ok",
    "bad_key",
    "label_value_ok",
    "labels_ok",
]

#: The marker the auditor's own redaction writes in place of a secret value
#: (:data:`auditor.redact.REDACTED` is this string). ``auditor collect`` writes it for a label
#: whose key names a secret (``kubevirt.io/dynamic-credentials-support``), so an export it
#: wrote holds it as a label value: that value is withheld by us, not edited, and the object
#: is read (the label's value is then unknown, as the redaction intends).
REDACTED_VALUE = "<redacted>"

#: The characters of a label or annotation key: ASCII letters, digits, "-", "_", "." and the
#: "/" after its prefix. ``ValidateLabels`` and ``ValidateAnnotations`` refuse any other in a
#: key (k8s.io/apimachinery pkg/util/validation/validation.go ``IsQualifiedName``:
#: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#syntax-and-character-set),
#: so a blank, a no-break space or a look-alike is an edit (bench.mutations key_blank, fz36:
#: a claim's ``"velero.io/exclude-from-backup "`` read as no exclusion, NOT_READY -> READY).
#: The keys of a map joined by newlines are tested at once: one linear scan, no backtracking.
_QUALIFIED_KEYS = re.compile(r"[-A-Za-z0-9_./]+(?:\n[-A-Za-z0-9_./]+)*", re.ASCII)
#: The characters of a label value (``IsValidLabelValue``: letters, digits, "-", "_", ".").
_LABEL_VALUES = re.compile(r"[-A-Za-z0-9_.\n]*", re.ASCII)
#: A ConfigMap's data key (``IsConfigMapKey``: letters, digits, "-", "_", ".").
CONFIG_MAP_KEY = re.compile(r"[-._a-zA-Z0-9]+", re.ASCII)
QUALIFIED_NAME = re.compile(r"[-A-Za-z0-9_./]+", re.ASCII)
LABEL_VALUE = re.compile(r"[-A-Za-z0-9_.]*", re.ASCII)
NO_QUALIFIED_NAME = (
    "no qualified name (the API server refuses a label or annotation key with a blank or "
    "another character than letters, digits, '-', '_', '.' and '/', so the copy was edited "
    "and the key it stands for is missing)"
)
NO_LABEL_VALUE = (
    "no label value (the API server refuses one with a blank or another character than "
    "letters, digits, '-', '_' and '.', so the copy was edited)"
)
NO_CONFIG_MAP_KEY = "no ConfigMap key (letters, digits, '-', '_' and '.' only: the copy was edited)"


def bad_key(value: dict[str, Any], pattern: re.Pattern[str]) -> str | None:
    """The first key of ``value`` that ``pattern`` does not match in full, or None."""
    return next((k for k in value if not pattern.fullmatch(k)), None)


def annotations_ok(value: dict[Any, Any]) -> bool:
    """Whether ``value`` maps strings of a key's characters to strings: each ``join`` raises
    on an entry that is no string, so the common case costs two joins and a scan, in C."""
    try:
        "".join(value.values())
        return _QUALIFIED_KEYS.fullmatch("\n".join(value)) is not None
    except TypeError:
        return False


def labels_ok(value: dict[Any, Any]) -> bool:
    """Whether ``value`` maps strings of a key's characters to strings of a label value's
    (:func:`annotations_ok`'s joins, and one scan of the values), or to
    :data:`REDACTED_VALUE` (our own redaction's marker, tested only when the scan fails)."""
    try:
        if _QUALIFIED_KEYS.fullmatch("\n".join(value)) is None:
            return False
        if _LABEL_VALUES.fullmatch("\n".join(value.values())) is not None:
            return True
    except TypeError:
        return False
    return all(label_value_ok(v) for v in value.values())


def label_value_ok(value: str) -> bool:
    """Whether ``value`` (a string) is a label value the API server takes, or the marker
    :data:`REDACTED_VALUE` our redaction wrote in its place."""
    return value == REDACTED_VALUE or LABEL_VALUE.fullmatch(value) is not None
