"""Write plain JSON-like data as block YAML the way ``oc get -o yaml`` prints it, fast.

PyYAML's emitter (even the C one) is too slow for a 10,000-VM estate; this one
handles only what the generator produces: dicts (keys sorted), lists, str,
int, float, bool and None. Strings that YAML could read as anything but a
string are double-quoted with JSON escapes (valid YAML), as ``oc`` does; a multi-line
mapping value is a literal block scalar (``|``), as ``oc`` prints annotations holding JSON.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TextIO

__all__ = ["dump_list", "write_list"]

_PLAIN = re.compile(r"[A-Za-z][A-Za-z0-9_./-]*\Z")
_RESERVED = frozenset(
    w
    for base in ("yes", "no", "true", "false", "on", "off", "null")
    for w in (base, base.capitalize(), base.upper())
)


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        if _PLAIN.match(value) and value not in _RESERVED:
            return value
        return json.dumps(value, ensure_ascii=False)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int | float):
        return repr(value)
    raise TypeError(f"cannot emit {type(value).__name__}")


def _key(key: Any) -> str:
    return _scalar(str(key))


def _emit(value: Any, pad: str, out: list[str]) -> None:
    """Append the lines of a non-empty dict or list at indentation ``pad``."""
    if isinstance(value, dict):
        for key in sorted(value):
            item = value[key]
            if isinstance(item, dict | list) and item:
                out.append(f"{pad}{_key(key)}:\n")
                _emit(item, pad + "  " if isinstance(item, dict) else pad, out)
            elif _literal(item):
                chomp = "" if item.endswith("\n") else "-"
                out.append(f"{pad}{_key(key)}: |{chomp}\n")
                out += [f"{pad}  {line}\n" if line else "\n" for line in item.splitlines()]
            else:
                out.append(f"{pad}{_key(key)}: {_inline(item)}\n")
        return
    for item in value:
        if isinstance(item, dict | list) and item:
            start = len(out)
            _emit(item, pad + "  ", out)
            out[start] = f"{pad}- {out[start][len(pad) + 2 :]}"
        else:
            out.append(f"{pad}- {_inline(item)}\n")


def _literal(value: Any) -> bool:
    """Whether ``value`` is a multi-line string ``oc`` prints as a literal block scalar
    (``|``, or ``|-`` without a final line break): printable lines, the first not starting
    with a blank, at most one final line break."""
    return (
        isinstance(value, str)
        and "\n" in value.rstrip("\n")
        and not value.endswith("\n\n")
        and not value.startswith((" ", "\n"))
        and all(line.isprintable() and line == line.rstrip() for line in value.splitlines())
    )


def _inline(value: Any) -> str:
    if isinstance(value, dict):
        return "{}"
    if isinstance(value, list):
        return "[]"
    return _scalar(value)


def dump_list(items: Iterable[dict[str, Any]], stream: TextIO) -> None:
    """Write ``items`` as a ``v1`` ``List`` document (``items: []`` when empty)."""
    stream.write("apiVersion: v1\n")
    wrote = False
    for item in items:
        if not wrote:
            stream.write("items:\n")
            wrote = True
        lines: list[str] = []
        _emit(item, "  ", lines)
        lines[0] = "- " + lines[0][2:]
        stream.write("".join(lines))
    if not wrote:
        stream.write("items: []\n")
    stream.write('kind: List\nmetadata:\n  resourceVersion: ""\n')


def write_list(path: Path, items: Iterable[dict[str, Any]]) -> None:
    """Write ``items`` to ``path`` as an ``oc get -A -o yaml`` List file."""
    with path.open("w", encoding="utf-8") as fh:
        dump_list(items, fh)
