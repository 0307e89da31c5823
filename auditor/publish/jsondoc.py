"""Read the archive's own JSON documents (``manifest.json``, ``latest.json``) by field.

A document someone edited or a store truncated is refused with a reason naming the field
(``field 'run.id' is missing``, ``field 'artifacts[2].size' is a string, not an integer``),
never Python's text for the exception indexing raised (``'prefix'``, ``KeyError('run')``,
``'NoneType' object is not subscriptable``, trial ux32). Every function raises
``ValueError``; callers add the file or object URL.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["load_object", "text_field", "artifact_list"]


def _kind(value: object) -> str:
    """``value``'s JSON kind with its article: 'null', 'a string', 'a list', ..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string" if value else "an empty string"
    if isinstance(value, list):
        return "a list"
    return "an object"


def load_object(data: bytes | str) -> dict[str, Any]:
    """Parse ``data`` as one JSON object.

    Raises:
        ValueError: not UTF-8, not JSON (line and column), or JSON that is not an object.
    """
    try:
        doc = json.loads(data)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    except UnicodeDecodeError:
        raise ValueError("not UTF-8 text") from None
    if not isinstance(doc, dict):
        raise ValueError(f"not a JSON object but {_kind(doc)}")
    return doc


def _walk(doc: dict[str, Any], path: str) -> Any:
    """The value at dotted ``path`` in ``doc``; ValueError naming the first missing part."""
    value: Any = doc
    seen: list[str] = []
    for part in path.split("."):
        if not isinstance(value, dict):
            raise ValueError(f"field '{'.'.join(seen)}' is {_kind(value)}, not an object")
        seen.append(part)
        if part not in value:
            raise ValueError(f"field '{'.'.join(seen)}' is missing")
        value = value[part]
    return value


def text_field(doc: dict[str, Any], path: str) -> str:
    """The non-empty string at dotted ``path`` (``run.id``).

    Raises:
        ValueError: missing, or not a non-empty string (the message names the field).
    """
    value = _walk(doc, path)
    if not isinstance(value, str) or not value:
        raise ValueError(f"field '{path}' is {_kind(value)}, not a non-empty string")
    return value


def artifact_list(doc: dict[str, Any], *, paths_only: bool = False) -> list[dict[str, Any]]:
    """``artifacts``: a list of ``{path: str, size: int, sha256: str}``, each checked
    (``paths_only``: only ``path``, for a reader that needs no more).

    Raises:
        ValueError: the list or an entry's field is missing or of another type, named
            as ``artifacts[i].field``.
    """
    artifacts = _walk(doc, "artifacts")
    if not isinstance(artifacts, list):
        raise ValueError(f"field 'artifacts' is {_kind(artifacts)}, not a list")
    for i, entry in enumerate(artifacts):
        if not isinstance(entry, dict):
            raise ValueError(f"field 'artifacts[{i}]' is {_kind(entry)}, not an object")
        wanted = (
            ("path", str, "a string"),
            ("size", int, "an integer"),
            ("sha256", str, "a string"),
        )
        for name, kind, want in wanted[:1] if paths_only else wanted:
            if name not in entry:
                raise ValueError(f"field 'artifacts[{i}].{name}' is missing")
            value = entry[name]
            if not isinstance(value, kind) or isinstance(value, bool) or value == "":
                raise ValueError(f"field 'artifacts[{i}].{name}' is {_kind(value)}, not {want}")
    return artifacts
