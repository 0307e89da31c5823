"""JSON through orjson (Rust), byte-identical to the stdlib forms the auditor has always written.

orjson parses and serialises 5-20x faster than :mod:`json`, but differs from
it in a few corners: it refuses ``NaN``/``Infinity`` and lone surrogates and
reads integers beyond 64 bits as floats; when writing it emits non-ASCII text as
UTF-8, leaves ``\\x7f`` unescaped, writes floats below 1e-4 as ``0.000015`` or
``1e-7`` (the stdlib: ``1.5e-05``, ``1e-07``) and non-finite floats as
``null``, and refuses non-string keys, big integers and unknown types. Each
function here takes the orjson result only where none of these corners can
occur, and otherwise gives exactly what the stdlib gives, so report.json and
the input digest stay byte-identical (``tests/test_jsonfast.py`` compares
both on random trees and the corpus reports).
"""

from __future__ import annotations

import json
import pickle
import re
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import orjson

__all__ = [
    "loads",
    "dumps_canonical",
    "canonical_lines",
    "dumps_report",
    "report_pieces",
    "nests_within",
]

# 19 digits in a row may be an integer beyond 64 bits, which orjson reads as a float. Found
# by mapping every digit to "0" and everything else to " ", then a literal search.
_DIGITS_AS_ZERO = bytes(48 if 48 <= b <= 57 else 32 for b in range(256))
_LONG_DIGITS = b"0" * 19
# Where a small float (below 1e-4) shows in orjson's output: "0.0000..." or "<digit>e-<digit>".
# Each is a search whose pattern starts with a literal (the regex engine then scans for it at
# memchr-like speed over a report of hundreds of MB, with no translated copy); the exponent's
# leading digit is checked by a look-behind after the literal, which keeps that speed. Only the
# hits are looked at closely.
_SMALL_FLOAT_MARKS = (re.compile(rb"0\.0000"), re.compile(rb"e-(?<=[0-9]e-)[0-9]"))
_NUMBER_CHARS = frozenset(b"0123456789.-")
_VALUE_START = frozenset(b" :,[\n")
_VALUE_END = frozenset(b",]}\n")


def _small_float(out: bytes) -> bool:
    """Whether ``out`` may hold a float the stdlib writes differently (below 1e-4).

    Looks at each candidate's token: digits, dots and signs back to a value
    start (space, colon, comma, bracket, newline) and on to a value end (comma,
    bracket, brace, newline). A candidate inside a string that looks like such a
    token is a false alarm, which only costs speed.
    """
    for pattern in _SMALL_FLOAT_MARKS:
        for found in pattern.finditer(out):
            i = found.start() - 1
            while i >= 0 and out[i] in _NUMBER_CHARS:
                i -= 1
            j = found.end()
            while j < len(out) and out[j] in _NUMBER_CHARS:
                j += 1
            if (i < 0 or out[i] in _VALUE_START) and (j == len(out) or out[j] in _VALUE_END):
                return True
    return False


_PASSTHROUGH = (
    orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)


def _refuse(value: Any) -> Any:
    """orjson ``default``: every type orjson does not write natively goes to the stdlib."""
    raise TypeError(type(value).__name__)


def loads(raw: bytes | str) -> Any:
    """Parse a JSON text as :func:`json.loads` would (same values, same errors).

    Raises:
        json.JSONDecodeError: not JSON (a ``ValueError``).
    """
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    if _LONG_DIGITS in data.translate(_DIGITS_AS_ZERO):
        return json.loads(raw)
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        # NaN/Infinity, lone surrogates, 64-bit overflow: the stdlib accepts them; and a
        # real error is then raised by the stdlib with its own message.
        return json.loads(raw)


def dumps_canonical(obj: Any) -> bytes:
    """``json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str).encode()``, fast.

    The canonical form the input digest hashes (ASCII, ``\\uXXXX`` escapes). A mapping
    with keys that are no strings (YAML's ``2: x``; the API server never writes one), which
    the stdlib cannot sort beside strings, is hashed with each such key written as
    ``<type>repr`` (``<int>2``): distinct from the string ``"2"``, and never an error.
    """
    try:
        out = orjson.dumps(obj, default=_refuse, option=orjson.OPT_SORT_KEYS | _PASSTHROUGH)
    except TypeError:
        out = None
    if out is None or not _canonical_ok(out, obj):
        try:
            return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str).encode()
        except TypeError:
            return json.dumps(
                _string_keys(obj), sort_keys=True, separators=(",", ":"), default=str
            ).encode()
    return out


def _string_keys(obj: Any) -> Any:
    """``obj`` with every mapping key that is no string written as ``<type>repr``."""
    if isinstance(obj, dict):
        return {
            k if isinstance(k, str) else f"<{type(k).__name__}>{k!r}": _string_keys(v)
            for k, v in obj.items()
        }
    if isinstance(obj, list | tuple):
        return [_string_keys(v) for v in obj]
    return obj


def _canonical_ok(out: bytes, obj: Any) -> bool:
    """Whether orjson's compact sorted output ``out`` of ``obj`` is the stdlib's canonical
    form byte for byte."""
    return (
        out.isascii()
        and b"\x7f" not in out
        and (b"null" not in out or _finite(obj))  # NaN/Infinity also come out as null
        and not _small_float(out)
    )


#: A non-finite float in a pickle: opcode BINFLOAT ("G") and an IEEE 754 double, big-endian,
#: whose exponent bits are all set (NaN, +Infinity, -Infinity: 0x7ff... or 0xfff...).
_NON_FINITE_PICKLED = re.compile(rb"G[\x7f\xff][\xf0-\xff]")


def _finite(obj: Any) -> bool:
    """Whether ``obj`` (JSON-like: dicts, lists, scalars) holds no NaN or infinite float,
    so every ``null`` in orjson's output of it stands for None.

    Real exports hold nulls in most VirtualMachines (``creationTimestamp: null`` in the
    template's metadata, as ``oc get -o yaml`` writes it), VMIs and VM snapshots (condition
    times), and the stdlib form of such an object took 47 us against orjson's 5 us. Pickling
    is C-speed and writes every float as opcode BINFLOAT and its eight bytes, so a non-finite
    one cannot hide; bytes of a string that look like one only send the object the slow,
    exact way."""
    try:
        raw = pickle.dumps(obj, pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 - anything unusual goes the exact way
        return False
    return _NON_FINITE_PICKLED.search(raw) is None


def canonical_lines(objs: Sequence[Any]) -> bytes:
    """``b"".join(dumps_canonical(o) + b"\n" for o in objs)``, checked in bulk.

    One orjson call per object and one check over the joined bytes (instead of one
    per object); any doubt sends the whole batch through :func:`dumps_canonical`.
    """
    try:
        outs = [
            orjson.dumps(o, default=_refuse, option=orjson.OPT_SORT_KEYS | _PASSTHROUGH)
            for o in objs
        ]
    except TypeError:
        outs = None
    if outs is not None:
        joined = b"".join(out + b"\n" for out in outs)
        if _canonical_ok(joined, objs):
            return joined
    return b"".join(dumps_canonical(o) + b"\n" for o in objs)


def dumps_report(doc: Any) -> bytes:
    """``(json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False) + "\\n").encode()``, fast.

    ``doc`` is a ``model_dump(mode="json")`` tree: pydantic has already turned
    non-finite floats in untyped (evidence) fields into None; the typed float
    fields (ages in hours) are computed from timestamps and finite.

    Raises:
        TypeError, ValueError, UnicodeEncodeError: as the stdlib form raises.
    """
    try:
        # orjson appends the newline itself: no copy of a report of hundreds of MB
        out = orjson.dumps(
            doc,
            default=_refuse,
            option=orjson.OPT_SORT_KEYS
            | orjson.OPT_INDENT_2
            | orjson.OPT_APPEND_NEWLINE
            | _PASSTHROUGH,
        )
    except TypeError:
        out = None
    if out is None or _small_float(out):
        return (json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode()
    return out


def report_pieces(doc: dict[str, Any], key: str) -> Iterator[bytes]:
    """:func:`dumps_report` of ``doc``, given a piece at a time: the bytes joined are
    ``dumps_report(doc)``, and the largest piece is one item of ``doc[key]`` (a list), so
    a report of hundreds of MB is written without its whole text in memory at once (the
    ``vms`` of a 50,000-VM report.json: 1.6 GB).

    How: the stdlib's indented form puts each item of a top-level list on lines of their
    own, indented four spaces, and separated by ``,``; an item dumped alone is the same
    text indented from zero (a JSON string holds no raw line break). ``doc`` is dumped with
    the list empty, and the list's items are put where its ``"key": []`` line is: a line
    starting with exactly two spaces and a quote is a key of the top-level mapping. Where
    that line is not found once (or ``doc[key]`` is no list), the whole text is one piece.
    ``doc`` is what :func:`dumps_report` takes: a ``model_dump(mode="json")`` tree, which
    holds no non-finite float (a piece that falls back to the stdlib form alone would
    write one as ``NaN`` where orjson's piece beside it writes ``null``).

    Raises:
        TypeError, ValueError, UnicodeEncodeError: as :func:`dumps_report` raises.
    """
    items = doc.get(key)
    if not isinstance(items, list):
        yield dumps_report(doc)
        return
    head = dumps_report({**doc, key: []})
    if not items:
        yield head  # the document itself
        return
    marker = b'\n  "' + json.dumps(key, ensure_ascii=False).encode()[1:-1] + b'": []'
    at = head.find(marker)
    if at < 0 or head.find(marker, at + 1) >= 0:
        yield dumps_report(doc)
        return
    cut = at + len(marker) - 2  # before the "[]"
    yield head[:cut] + b"[\n    "
    last = len(items) - 1
    for i, item in enumerate(items):
        text = dumps_report(item)[:-1].replace(b"\n", b"\n    ")
        yield text + (b",\n    " if i < last else b"\n  ]")
    yield head[cut + 2 :]


def _depth_limit() -> int | None:
    """How many nested containers orjson serialises before it refuses (254 in orjson 3.x)."""
    value: Any = 0
    for depth in range(1, 1025):
        value = [value]
        try:
            orjson.dumps(value)
        except TypeError:
            return depth - 1
    return None


_DEPTH_LIMIT = _depth_limit()


def nests_within(node: Any, levels: int) -> bool:
    """True when orjson proves that ``node`` nests at most ``levels`` container levels (a
    scalar: 0, ``{"a": [1]}``: 2) and has string keys only; False means "not proven".

    orjson (Rust) refuses more than its fixed depth (:data:`_DEPTH_LIMIT`), any non-string
    key and any type it does not know, so wrapping ``node`` in the difference of lists turns
    its refusal into this test, at serialisation speed and without a Python walk. The
    wrapping lists are built once per thread and depth, not once per call.
    """
    if _DEPTH_LIMIT is None or levels > _DEPTH_LIMIT or levels < 0:
        return False
    if levels == _DEPTH_LIMIT:
        try:
            orjson.dumps(node)
        except TypeError:
            return False
        return True
    chains = _CHAINS.__dict__.setdefault("chains", {})
    chain = chains.get(levels)
    if chain is None:
        inner: list[Any] = [None]
        outer = inner
        for _ in range(_DEPTH_LIMIT - levels - 1):
            outer = [outer]
        chain = chains[levels] = (outer, inner)
    outer, inner = chain
    inner[0] = node
    try:
        orjson.dumps(outer)
    except TypeError:
        return False
    finally:
        inner[0] = None
    return True


#: Per thread: ``levels -> (outermost list, innermost list)`` of :func:`nests_within`.
_CHAINS = threading.local()
