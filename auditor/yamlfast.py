"""The fast path of the strict loader: yaml-rs (Rust) where it reads exactly as PyYAML would.

yaml-rs parses YAML 1.2 about 7-20x faster than PyYAML's C loader, refuses
duplicate keys and bounds alias expansion itself, and can keep timestamps as
strings. But YAML 1.2 resolves some plain scalars differently from YAML 1.1
(PyYAML): ``yes``/``on``/``off`` are strings, ``0755`` is decimal, ``1e3`` is
a float, ``<<`` is no merge key, and a recursive alias silently becomes
``null``. So :func:`fast_documents` first scans the text for every construct
where the two could disagree and declines (returns ``None``) when it finds one;
the caller then uses the PyYAML strict loader, which stays the reference. The
scan is conservative: a false alarm only costs speed. Any yaml-rs error also
declines, so every error message still comes from the PyYAML loader.

``oc get -o yaml`` exports contain none of these constructs (kubectl quotes
every string that YAML 1.1 would read as something else), so whole exports
take the fast path. ``tests/test_yamlfast.py`` checks that both paths give the
same objects and the same errors on the corpus, the exports and fuzz inputs.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

__all__ = ["AVAILABLE", "fast_documents"]

try:  # a wheel may be missing on an unusual platform: the PyYAML loader is the fallback
    import yaml_rs
except ImportError:  # pragma: no cover - depends on the platform
    yaml_rs = None  # type: ignore[assignment]

#: Whether the fast parser is installed.
AVAILABLE = yaml_rs is not None

# A plain scalar's end: end of line, a comment, a flow indicator or a key's ":".
_END = r"(?=[ ]*(?:\n|\Z|#|[,\]}]|:(?:[ \n]|\Z)))"
# Numbers as either YAML version could read them: ints in any base, floats,
# inf/nan, and PyYAML's sexagesimal ints and floats (``1:20`` is 80, but
# ``02:00:00:00:00:01`` stays a string); and the subset both read alike.
_NUMBER = (
    r"[-+]?(?:0[bBoOxX][0-9a-fA-F_]+|[0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][-+]?[0-9_]+)?"
    r"|\.[0-9][0-9_]*(?:[eE][-+]?[0-9_]+)?|\.(?:inf|Inf|INF|nan|NaN|NAN)"
    r"|[1-9][0-9_]*(?::[0-5]?[0-9])+|[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*)"
)
_SAME_NUMBER = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?"
# A node start the two parsers may read differently: a YAML 1.1 boolean, the
# value key "=", a merge key, a number outside the common subset, an anchor,
# alias, tag, reserved indicator or directive, or an empty key (":"). The quick lookahead on the first
# character keeps the scan near str.find speed.
_TOKEN = (
    r"(?=[yYnNoO=<0-9+.&*!@`%:-])"
    rf"(?:(?:[yY]es|YES|[nN]o|NO|[oO]n|ON|[oO]ff|OFF|=|<<){_END}"
    rf"|(?!{_SAME_NUMBER}{_END}){_NUMBER}{_END}|[&*!@`%:])"
)
# One scan per place a node can start, each led by a literal so the regex
# engine can skip ahead: a line's indentation, after ": ", after "- ", after a
# flow indicator, and right after a quoted key's ":" (flow style allows it).
# "? " complex keys and flow collections used as keys are refused outright.
_DIVERGENT = [
    re.compile(rf"\n[ ]*+{_TOKEN}"),
    re.compile(rf"\A[ ]*+{_TOKEN}"),
    re.compile(rf":[ ]++{_TOKEN}"),
    re.compile(rf"-[ ]++{_TOKEN}"),
    re.compile(rf"\[[ ]*+(?:[|>]|{_TOKEN})"),
    re.compile(rf"\{{[ ]*+(?:[|>]|{_TOKEN})"),
    re.compile(rf",[ ]*+(?:[|>]|{_TOKEN})"),
    re.compile(rf"\":{_TOKEN}"),
    re.compile(rf"':{_TOKEN}"),
    re.compile(r"\?(?:[ \n]|\Z)"),
    # ":" right before a flow indicator: a value indicator to PyYAML, text to yaml-rs.
    re.compile(r":[,\]}]"),
    # A document that is a block scalar (indentation rules differ at the top).
    re.compile(r"\A(?:[ ]*(?:#[^\n]*)?\n)*(?:---[ ]+)?[ ]*[|>]"),
    re.compile(r"\][ ]*:(?:[ \n]|\Z)"),
    re.compile(r"}[ ]*:(?:[ \n]|\Z)"),
]
# Characters PyYAML refuses or reads as line breaks, a BOM, tabs and CRs
# (their indentation and line-break rules differ in corner cases).
_ASCII_OK = bytes(range(0x20, 0x7F)) + b"\n"
_ODD_UNICODE = tuple("\x85\u2028\u2029\ufeff\ufffe\uffff") + tuple(map(chr, range(0x80, 0xA0)))
# A flow collection inside another: it may be a mapping key, which PyYAML
# refuses as unhashable while yaml-rs makes it a tuple or frozenset.
_NESTED_FLOW = re.compile(r"[\[{,]\s*[\[{]")
# A block scalar header with no content before the end of the text: yaml-rs
# reads it as "\n", PyYAML as "" (checked on the text's tail only).
_EMPTY_BLOCK_AT_END = re.compile(r"[|>][-+0-9]*[ ]*(?:#[^\n]*)?(?:[ \n]|#[^\n]*)*\Z")
_TAIL = 4096
_MARKER_AT_START = re.compile(r"(?:---|\.\.\.)(?:[ \n]|\Z)")
_MARKER_AFTER_NEWLINE = re.compile(r"\n(?:---|\.\.\.)(?=[ \n]|\Z)")
_BLANK_OR_COMMENT = re.compile(r"(?:[ ]*(?:#[^\n]*)?\n)*[ ]*(?:#[^\n]*)?")


def _single_document(text: str) -> bool | None:
    """``False`` if ``text`` has no document marker, ``True`` if only one leading "---", else None.

    yaml-rs returns a stream of several documents as a list, indistinguishable
    from one document that is a list, so only these two shapes take the fast path.
    """
    starts = [0] if _MARKER_AT_START.match(text) else []
    found = _MARKER_AFTER_NEWLINE.search(text)
    if found is not None:
        starts.append(found.start() + 1)
    if not starts:
        return False
    first = starts[0]
    if (
        len(starts) > 1
        or text.startswith("...", first)
        or _BLANK_OR_COMMENT.fullmatch(text, 0, first) is None
        or (found is not None and _MARKER_AFTER_NEWLINE.search(text, found.end()))
    ):
        return None
    return True


def _odd_characters(text: str) -> bool:
    """Whether ``text`` holds a control character, tab, CR, BOM or a PyYAML line break."""
    if text.isascii():
        return bool(text.encode("ascii").translate(None, _ASCII_OK))
    if any(ch in text for ch in _ODD_UNICODE):
        return True
    return (
        any(ch in text for ch in "\t\r")
        or any(chr(c) in text for c in range(0x20) if c != 10)
        or "\x7f" in text
    )


def _unlike_pyyaml(node: dict[Any, Any] | list[Any], room: int, keys: bool) -> bool:
    """Whether ``node`` nests more than ``room`` levels or, with ``keys``, has a collection key.

    PyYAML refuses both (too deep, unhashable key) where yaml-rs makes a
    tuple or frozenset key, so either sends the text to the PyYAML loader.
    """
    if room <= 0:
        return True
    if isinstance(node, dict):
        if keys and any(isinstance(key, tuple | frozenset) for key in node):
            return True
        children: Any = node.values()
    else:
        children = node
    for child in children:
        if isinstance(child, dict | list) and _unlike_pyyaml(child, room - 1, keys):
            return True
    return False


def _orjson_depth_limit() -> int | None:
    """How many nested containers orjson serialises before it refuses (254 in orjson 3.x)."""
    value: Any = 0
    for depth in range(1, 1025):
        value = [value]
        try:
            orjson.dumps(value)
        except TypeError:
            return depth - 1
    return None


_ORJSON_DEPTH = _orjson_depth_limit()
#: List items serialised per orjson call by :func:`_unlike_pyyaml_quick` (about 1 MB).
_SLICE = 500


def _fits(node: Any, room: int) -> bool:
    """True when orjson proves ``node`` nests at most ``room`` container levels, string keys only.

    orjson (Rust) refuses more than :data:`_ORJSON_DEPTH` levels and any non-string key
    (yaml-rs makes a collection key a tuple or frozenset), so wrapping ``node`` in the
    difference turns its refusal into exactly this test. False only means "not proven".
    """
    if _ORJSON_DEPTH is None or room > _ORJSON_DEPTH or room <= 0:
        return False
    for _ in range(_ORJSON_DEPTH - room):
        node = [node]
    try:
        orjson.dumps(node)
    except TypeError:
        return False
    return True


def _unlike_pyyaml_quick(doc: dict[Any, Any] | list[Any], room: int, keys: bool) -> bool:
    """:func:`_unlike_pyyaml`, proven in orjson a slice at a time where it can be.

    A ``List`` document's items are checked :data:`_SLICE` at a time (a slice nests as
    deep as the list it is cut from; no copy of a 300 MB file's worth of JSON at once);
    anything orjson does not prove goes through the exact walk.
    """
    if room <= 2 or (isinstance(doc, dict) and not all(type(k) is str for k in doc)):
        return _unlike_pyyaml(doc, room, keys)
    children = doc.values() if isinstance(doc, dict) else doc
    for child in children:
        if isinstance(child, list):
            if all(_fits(child[i : i + _SLICE], room - 1) for i in range(0, len(child), _SLICE)):
                continue
        elif not isinstance(child, dict) or _fits(child, room - 1):
            continue
        if _unlike_pyyaml(child, room - 1, keys):
            return True
    return False


def fast_documents(text: str, *, max_depth: int) -> list[Any] | None:
    """Return the documents of ``text`` parsed by yaml-rs, or ``None`` to use PyYAML.

    ``None`` means yaml-rs is not installed, the text holds a construct the two
    parsers could read differently (see the module docstring), or yaml-rs
    refused it, or the document nests deeper than ``max_depth`` (the PyYAML
    loader then names the error). Timestamps stay strings and duplicate keys
    are refused, as in the strict loader.
    """
    if yaml_rs is None:
        return None
    if _odd_characters(text) or any(p.search(text) for p in _DIVERGENT):
        return None
    tail = text[-_TAIL:]
    if _EMPTY_BLOCK_AT_END.search(tail) or (len(text) > _TAIL and not tail.strip()):
        return None
    if _single_document(text) is None:
        return None
    try:
        doc = yaml_rs.loads(text, parse_datetime=False)
    except Exception:  # noqa: BLE001 - any refusal: PyYAML decides and names the error
        return None
    if isinstance(doc, dict | list) and _unlike_pyyaml_quick(
        doc, max_depth, keys=_NESTED_FLOW.search(text) is not None
    ):
        return None
    if doc is None:
        # Blanks and comments are no document; "---" or "~" is one empty document.
        return [] if _BLANK_OR_COMMENT.fullmatch(text) else [None]
    return [doc]
