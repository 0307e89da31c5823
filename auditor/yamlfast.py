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
take the fast path. The bodies of literal block scalars are text to both parsers and are
not scanned (:func:`outside_literals`): the JSON that annotations hold there (KubeVirt's
``vm.kubevirt.io/validations``, kubectl's ``last-applied-configuration``) looks like flow
collections, aliases and YAML 1.1 booleans to the scans, and sent every such file to PyYAML.
``tests/test_yamlfast.py`` checks that both paths give the
same objects and the same errors on the corpus, the exports and fuzz inputs.
"""

from __future__ import annotations

import marshal
import re
from collections.abc import Callable, Iterator
from typing import Any

from auditor.jsonfast import nests_within
from auditor.split import Sharing, share_out_iter

__all__ = [
    "AVAILABLE",
    "CHUNK_BYTES",
    "HELPER_ENV",
    "READ",
    "StreamDeclined",
    "fast_documents",
    "fast_list",
    "outside_literals",
]

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
    r"|[1-9][0-9_]*(?::[0-5]?[0-9])+|[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*"
    # yaml-rs skips underscores before the digits too (``_0`` is 0, ``-_1`` is -1), which
    # PyYAML reads as strings
    r"|[._]*_[._]*[0-9][0-9_.]*(?:[eE][-+]?[0-9_]+)?)"
)
_SAME_NUMBER = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?"
# A node start the two parsers may read differently: a YAML 1.1 boolean, the
# value key "=", a merge key, a number outside the common subset, an anchor,
# alias, tag, reserved indicator or directive, or an empty key (":"). The quick lookahead on the first
# character keeps the scan near str.find speed.
_TOKEN = (
    r"(?=[yYnNoO=<0-9+.&*!@`%:_-])"
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
    _DOUBLE_QUOTED_KEY := re.compile(rf"\":{_TOKEN}"),
    _SINGLE_QUOTED_KEY := re.compile(rf"':{_TOKEN}"),
    _COMPLEX_KEY := re.compile(r"\?(?:[ \n,\]}]|\Z)"),
    # A document that is a block scalar (indentation rules differ at the top).
    re.compile(r"\A(?:[ ]*(?:#[^\n]*)?\n)*(?:---[ ]+)?[ ]*[|>]"),
]
# The constructs only a flow collection can make (flow indicators are text in block
# context, to PyYAML as to yaml-rs): scanned for only when the text holds a bracket or brace.
_FLOW_DIVERGENT = [
    re.compile(rf"\[[ ]*+(?:[|>]|{_TOKEN})"),
    re.compile(rf"\{{[ ]*+(?:[|>]|{_TOKEN})"),
    re.compile(rf",[ ]*+(?:[|>]|{_TOKEN})"),
    # ":" right before a flow indicator: a value indicator to PyYAML, text to yaml-rs.
    re.compile(r":[,\]}]"),
    re.compile(r"\][ ]*:(?:[ \n]|\Z)"),
    re.compile(r"}[ ]*:(?:[ \n]|\Z)"),
]
_FLOW_CHARS = "[]{}"
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
#: Scans whose every match holds a character that an export rarely holds: where the text
#: has none of it (``str.find`` of one character runs at memory speed), the scan cannot match
#: and its pass over the text is spared (:func:`_scan`). Only single characters pay: a
#: longer literal (``':``, ``\\n---``) is looked for no faster than the scan itself.
#: Together about a sixth of the scanning time of a 10,000-VM export.
_LEADS: dict[re.Pattern[str], str] = {
    _DOUBLE_QUOTED_KEY: '"',
    _COMPLEX_KEY: "?",
}


def _scan(pattern: re.Pattern[str], text: str, begin: int = 0, stop: int | None = None) -> bool:
    """Whether ``pattern.search(text, begin, stop)`` finds a match; a scan of :data:`_LEADS`
    is run only where its character lies within ``text[begin:stop]`` (every match lies
    there, and holds it)."""
    end = len(text) if stop is None else stop
    lead = _LEADS.get(pattern)
    if lead is not None and text.find(lead, begin, end) < 0:
        return False
    return pattern.search(text, begin, end) is not None


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


def _shallow(text: str, max_depth: int) -> bool:
    """True when the text of a block-style document (no flow collection) proves it nests at
    most ``max_depth`` levels.

    A block collection nested in another starts further right, except a sequence that is a
    mapping's value, which may start at the key's column; so the column grows at least every
    second level, and a document whose lines all start with fewer than ``(max_depth - 4) // 2``
    spaces and "-" indicators nests at most ``max_depth`` levels. Scalar continuation lines
    only count against the proof. False means "not proven", never "too deep".
    """
    run = (max_depth - 4) // 2
    if run <= 0:
        return False
    return (
        re.match(rf"[ -]{{{run}}}", text) is None and re.search(rf"\n[ -]{{{run}}}", text) is None
    )


#: List items serialised per orjson call by :func:`_unlike_pyyaml_quick` (about 1 MB).
_SLICE = 500


def _fits(node: Any, room: int) -> bool:
    """True when orjson proves ``node`` nests at most ``room`` levels with string keys only
    (yaml-rs makes a collection key a tuple or frozenset, which orjson refuses)."""
    return room > 0 and nests_within(node, room)


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


def _readable(text: str) -> bool | None:
    """Whether yaml-rs reads ``text`` as PyYAML would, as far as the text shows: None when it
    may not (see the module docstring), else whether the text holds a flow collection."""
    flow = _has_flow(text)
    if _odd_characters(text):
        return None
    gaps = outside_literals(text, 0, len(text))
    if _scan_gaps(_DIVERGENT, text, gaps) or (flow and _scan_gaps(_FLOW_DIVERGENT, text, gaps)):
        return None
    if flow and _spans_lines(text, gaps):
        return None
    tail = text[-_TAIL:]
    if _EMPTY_BLOCK_AT_END.search(tail) or (len(text) > _TAIL and not tail.strip()):
        return None
    if not text.endswith("\n") and ("|" in text or ">" in text):
        # a block scalar may run to the end: yaml-rs gives its last line a line break the
        # text does not hold (``k: |\n 0`` -> "0\n"), PyYAML none
        return None
    if _single_document(text) is None:
        return None
    return flow


#: The scans of :func:`_readable` not anchored at the text's start, and the document marker
#: after a line break (a List text starts with ``apiVersion``, so any marker makes
#: :func:`_single_document` decline): what each range of a streamed List's text is scanned for.
_ANYWHERE = [p for p in _DIVERGENT if not p.pattern.startswith(r"\A")] + [_MARKER_AFTER_NEWLINE]
_AT_START = [p for p in _DIVERGENT if p.pattern.startswith(r"\A")]


def _divergent_between(text: str, begin: int, end: int, flow: bool, opens: bool = False) -> bool:
    r"""Whether one of :data:`_ANYWHERE`'s constructs (and, with ``flow``, of
    :data:`_FLOW_DIVERGENT`) starts in ``text[begin:end]``; ``begin`` is 0 or follows a line
    break, ``end`` follows one or is the text's end.

    Every such construct lies within one line, or is a line break and (part of) the line after
    it, so the scan reads on to the end of the line after ``end``: no construct starting in the
    range is cut short (``\Z`` then matches only after a line break, where none of them ends).
    Ranges that tile the text find exactly what the scans of the whole text find. Control
    characters are checked on the range's own text (:func:`_odd_characters`) by the caller.
    ``opens``: whether the whole text opens a flow collection outside literal bodies
    (:func:`outside_literals`).
    """
    stop = text.find("\n", end)
    stop = len(text) if stop < 0 else stop + 1
    scans = _ANYWHERE + _FLOW_DIVERGENT if flow else _ANYWHERE
    return _scan_gaps(scans, text, outside_literals(text, begin, stop, opens))


def _spans_lines(text: str, gaps: list[tuple[int, int]]) -> bool:
    """Whether a flow collection that opens in one of ``gaps`` where a node may start (see
    :func:`_opens_flow`), outside a quoted scalar, may go on past its line: the rest of its
    line, quoted scalars left out, opens more brackets and braces than it closes, or holds a
    quote that does not close on the line.

    Inside a flow collection that spans lines, yaml-rs takes a plain key that continues on
    the next line (``y: {one\nk: |\n}`` -> ``{"one k": "|"}``, ``{d\nb: []}``) where PyYAML
    refuses it ("did not find expected ',' or '}'"): such a text goes to PyYAML. Found by
    generated texts around literals (``tests/test_yamlfast.py``); oc writes no flow
    collection but empty ones, and JSON in a quoted scalar (a NetworkAttachmentDefinition's
    ``config``) is text."""
    for begin, stop in gaps:
        for at in _flow_openers(text, begin, stop):
            line_start = text.rfind("\n", 0, at) + 1
            line_end = text.find("\n", at)
            line = text[line_start : len(text) if line_end < 0 else line_end]
            rest = _unquoted(line, at - line_start)
            if rest is not None and (
                rest.count("[") + rest.count("{") > rest.count("]") + rest.count("}")
                or '"' in rest
                or "'" in rest
            ):
                return True
    return False


_DOUBLE_QUOTED = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_SINGLE_QUOTED = re.compile(r"'(?:[^'\n]|'')*'")


def _unquoted(line: str, at: int) -> str | None:
    """``line`` from column ``at`` on, its quoted scalars taken out (double-quoted anywhere,
    single-quoted where a node starts), or None when column ``at`` lies inside one of
    them."""
    cut, pos = [], 0
    while True:
        dq = _DOUBLE_QUOTED.search(line, pos)
        sq = _SINGLE_QUOTED.search(line, pos)
        while sq is not None and not _node_starts(line, sq.start()):
            sq = _SINGLE_QUOTED.search(line, sq.start() + 1)
        found = min((m for m in (dq, sq) if m is not None), key=lambda m: m.start(), default=None)
        if found is None:
            break
        if found.start() <= at < found.end():
            return None
        cut.append((found.start(), found.end()))
        pos = found.end()
    out, last = [], at
    for a, b in cut:
        if b <= at:
            continue
        out.append(line[last:a])
        last = b
    out.append(line[last:])
    return "".join(out)


def _node_starts(text: str, at: int) -> bool:
    """Whether a node may start at ``text[at]``: at a line's indentation, or after ``:`` or
    ``-`` and blanks."""
    i = at - 1
    while i >= 0 and text[i] == " ":
        i -= 1
    return i < 0 or text[i] in "\n:-"


def _opens_flow_in(text: str, gaps: list[tuple[int, int]]) -> bool:
    """Whether a flow collection not closed on the spot opens in one of ``gaps``."""
    return any(_opens_flow(text, begin, stop) for begin, stop in gaps)


def _scan_gaps(patterns: list[re.Pattern[str]], text: str, gaps: list[tuple[int, int]]) -> bool:
    """Whether one of ``patterns`` matches within one of the ranges ``gaps`` of ``text``."""
    return any(_scan(p, text, begin, stop) for p in patterns for begin, stop in gaps)


# A literal block scalar ("|" or "|-", no indentation indicator, no comment) as the value of
# a block mapping key written as Kubernetes writes keys (``vm.kubevirt.io/validations: |``,
# ``kubectl.kubernetes.io/last-applied-configuration: |``), after the line's indentation
# and any "- " of the sequences it opens. Found from its rare "|" (:data:`_LITERAL_END`).
_LITERAL_HEADER = re.compile(r"([ ]*)((?:-[ ]+)*)[A-Za-z0-9_./][A-Za-z0-9_./-]*:[ ]+\|-?[ ]*\n")
_LITERAL_END = re.compile(r"\|-?[ ]*\n")
# The first line of a literal's body: its indentation, then a character that is no blank.
_FIRST_BODY_LINE = re.compile(r"([ ]*)(?=[^ \n])")


def _opens_flow(text: str, begin: int, end: int) -> bool:
    """Whether a flow collection that is not closed on the spot (``{}`` and ``[]`` are what
    oc writes for empty collections) opens in ``text[begin:end]`` where a node may start
    (:func:`_node_starts`). A bracket inside a plain scalar (``reason: not supported for
    [cloudinitdisk]``) is text. Found by ``str.find`` of each opener (a regex led by a
    character class tries every position: a 40 MB List of VMs took 1 s that way)."""
    return next(_flow_openers(text, begin, end), None) is not None


def _flow_openers(text: str, begin: int, end: int) -> Iterator[int]:
    """Where in ``text[begin:end]`` a flow collection opens that :func:`_opens_flow` counts:
    a bracket or brace not closed on the spot, where a node may start."""
    for opener in "[{":
        at = text.find(opener, begin, end)
        while at >= 0:
            if text[at + 1 : at + 2] not in ("]", "}") and _node_starts(text, at):
                yield at
            at = text.find(opener, at + 1, end)


_BODY_LINES: dict[int, re.Pattern[str]] = {}


def outside_literals(
    text: str, begin: int, end: int, opens: bool | None = None
) -> list[tuple[int, int]]:
    """Ranges that tile ``text[begin:end]`` except the bodies of its literal block scalars
    (:data:`_LITERAL_HEADER`): the text the divergence scans must read. Every range after a
    body starts at the line break that ends the body, so a scan led by a line break sees the
    line after it; ``begin`` is 0 or follows a line break.

    A literal's body is text to both parsers: JSON in an annotation (KubeVirt's
    ``vm.kubevirt.io/validations`` on every VM made from an OpenShift template, kubectl's
    ``last-applied-configuration``) holds brackets, quotes, ``*`` and ``yes`` that the scans
    took for YAML, and sent the whole file (a 10,000-VM List: 30 MB) to the PyYAML loader,
    20 times slower. The body is what YAML takes as one: the lines after the header indented
    as its first line or more, and empty lines (YAML 1.2 section 8.1.1.1, auto-detected
    indentation; PyYAML ``scan_block_scalar``), where that first line is indented more than
    the key. Kept scanned: a body with a leading empty line or a first line not indented past
    the key, and any text whose remaining lines open a flow collection that is not closed on
    the spot (a header inside a flow collection is no block scalar to either parser).
    ``opens``: whether the whole text does, when the caller knows (a piece of a List is then
    read as the whole text is); None: told from this range."""
    if opens or text.find("|", begin, end) < 0:
        return [(begin, end)]
    gaps, pos = [], begin
    for bar in _LITERAL_END.finditer(text, begin, end):
        line = text.rfind("\n", begin, bar.start()) + 1 if bar.start() > begin else begin
        if line < pos or (line == begin and begin > 0 and text[begin - 1] != "\n"):
            continue
        header = _LITERAL_HEADER.fullmatch(text, line, bar.end())
        if header is None:
            continue
        body = header.end()
        first = _FIRST_BODY_LINE.match(text, body, end)
        indent = len(first[1]) if first is not None else 0
        if first is None or indent <= len(header[1]) + len(header[2]):
            continue
        lines = _BODY_LINES.get(indent)
        if lines is None:
            lines = _BODY_LINES.setdefault(indent, re.compile(rf"(?:[ ]{{{indent}}}[^\n]*\n|\n)*"))
        stop = lines.match(text, body, end)
        if stop is None or stop.end() <= body:
            continue
        gaps.append((pos, body))
        pos = stop.end() - 1
    gaps.append((pos, end))
    if opens is None and len(gaps) > 1 and _opens_flow_in(text, gaps):
        return [(begin, end)]
    return gaps


def _list_lines_divergent(text: str, start: int, foot: int, flow: bool, opens: bool) -> bool:
    """What :func:`_readable` finds in a List text outside its items block
    ``text[start:foot + 1]`` (the List's own lines, and the checks of the whole text that are
    no scan: anchored at its start, or of its tail). With :func:`_divergent_between` and
    :func:`_odd_characters` on pieces that tile the items block, it finds exactly what
    :func:`_readable` finds (``tests/test_stream_read.py`` checks this on mutated texts)."""
    tail = text[-_TAIL:]
    return bool(
        any(_scan(p, text) for p in _AT_START)
        or _EMPTY_BLOCK_AT_END.search(tail)
        or (len(text) > _TAIL and not tail.strip())
        or any(
            _odd_characters(text[begin:end]) or _divergent_between(text, begin, end, flow, opens)
            for begin, end in ((0, start), (foot + 1, len(text)))
        )
    )


def _deeper(doc: Any, text: str, flow: bool, room: int) -> bool:
    """Whether ``doc`` (parsed from ``text``) nests beyond ``room`` levels or has a collection
    key, where PyYAML refuses what yaml-rs reads; proven from the text when it can be."""
    if not isinstance(doc, dict | list) or (not flow and _shallow(text, room)):
        return False
    return _unlike_pyyaml_quick(doc, room, keys=_NESTED_FLOW.search(text) is not None)


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
    flow = _readable(text)
    if flow is None:
        return None
    try:
        doc = yaml_rs.loads(text, parse_datetime=False)
    except Exception:  # noqa: BLE001 - any refusal: PyYAML decides and names the error
        return None
    if _deeper(doc, text, flow, max_depth):
        return None
    if doc is None:
        # Blanks and comments are no document; "---" or "~" is one empty document.
        return [] if _BLANK_OR_COMMENT.fullmatch(text) else [None]
    return [doc]


class StreamDeclined(Exception):
    """A streamed ``List`` cannot go on: a chunk may read differently from the whole text
    (or yaml-rs refused it); the caller drops what the stream gave and reads the whole text."""


#: Bytes of ``items`` text parsed per yaml-rs call when a ``List`` is streamed.
CHUNK_BYTES = 4 << 20
_LIST_HEAD = "apiVersion: v1\nitems:\n"
_LIST_FOOT = "\nkind: List\nmetadata:\n"
_FOOT_LINES = re.compile(r"(?:  [^\n]*\n)*")
# A line of the items block that neither starts an item ("- ") nor continues one ("  ").
_ITEMS_OTHER_LINE = re.compile(r"\n(?!- |  )")


def fast_list(
    text: str, *, max_depth: int, take: Callable[[Any], Any] | None = None
) -> tuple[dict[str, Any], Iterator[list[Any]]] | None:
    """Read an ``oc get -o yaml`` ``List`` item chunk by item chunk: ``(the List without its
    items, an iterator over lists of items)``, or None when ``text`` is not such a List or
    :func:`fast_documents` would decline it for what the List's own lines hold. Each piece of
    the items is scanned for the same constructs as it is read (:func:`_read_piece`).

    ``take``: a function applied to each item in whichever process parses it (this one or
    the forked read worker, :data:`READ`), so the lists hold ``take(item)`` for every item. It
    must return values :mod:`marshal` can write, never raise, and give the same value for the
    same item in either process.

    The ``items`` block is cut at lines starting with ``- `` into pieces of about
    :data:`CHUNK_BYTES`, each parsed alone, so a piece's parsed objects live only until
    ``take`` has made what is kept of them. Every line of the block must start with ``- `` or two
    spaces, so each such line starts an item, unless it continues a quoted or flow scalar, in
    which case the piece before it does not parse; each piece's lines are checked as it is
    read. The iterator raises :class:`StreamDeclined` whenever a piece has another line, does
    not parse or could read differently from the whole text.
    """
    if yaml_rs is None or not text.startswith(_LIST_HEAD):
        return None
    foot = text.rfind(_LIST_FOOT)
    start = len(_LIST_HEAD)
    if (
        foot < start
        or not text.startswith("- ", start)
        or _FOOT_LINES.fullmatch(text, foot + len(_LIST_FOOT)) is None
    ):
        return None
    try:
        header = yaml_rs.loads("apiVersion: v1\nitems: []" + text[foot:], parse_datetime=False)
    except Exception:  # noqa: BLE001 - duplicate keys and the like: the whole-text path decides
        return None
    if (
        not isinstance(header, dict)
        or header.get("items") != []
        or header.get("kind") != "List"
        # the List's own fields nest within the document's bounds, as the whole text's must
        or _unlike_pyyaml_quick(header, max_depth, keys=True)
    ):
        return None
    del header["items"]
    # What _readable checks of the whole text, here for the List's own lines (the header and
    # the foot) and the checks that need the whole text; each piece of the items is scanned
    # by the process that parses it (_read_piece), so the scan is shared with the worker.
    flow = _has_flow(text)
    gaps = outside_literals(text, 0, len(text))
    opens = flow and _opens_flow_in(text, gaps)
    if (opens and _spans_lines(text, gaps)) or _list_lines_divergent(
        text, start, foot, flow, opens
    ):
        return None
    rules = (flow, flow and _NESTED_FLOW.search(text) is not None, max_depth, foot, opens)
    pieces = _pieces(text, start, foot, CHUNK_BYTES)

    def work(numbers: range) -> list[list[Any] | None]:
        """The pieces numbered ``numbers``, each read and taken; None for a piece that
        declines the stream (and nothing after it)."""
        out: list[list[Any] | None] = []
        for number in numbers:
            begin, end = pieces[number]
            try:
                items = _read_piece(text, begin, end, rules)
            except StreamDeclined:
                out.append(None)
                break
            out.append(items if take is None else [take(item) for item in items])
        return out

    def chunks() -> Iterator[list[Any]]:
        # This process reads pieces from the front, a forked worker from the back (see
        # READ), until the two meet; the worker's items come back in marshal form. Each of
        # this process's pieces is given as soon as it is read, so the caller keeps its items
        # while the worker reads on.
        done = share_out_iter(len(pieces), work, marshal.dumps, _pieces_back, sharing=READ)
        try:
            for _, got in done:
                for items in got:
                    if items is None:
                        raise StreamDeclined("a piece does not read alone, or may read differently")
                    yield items
        finally:
            done.close()  # a declined or abandoned stream: the worker is killed now

    return header, chunks()


def _pieces(text: str, start: int, foot: int, size: int) -> list[tuple[int, int]]:
    """``(begin, end)`` of each piece of the items block ``text[start:foot + 1]``: about
    ``size`` characters each, cut before a line that starts with ``- ``."""
    out = []
    pos = start
    while pos <= foot:
        cut = text.find("\n- ", pos + size, foot)
        end = foot + 1 if cut < 0 else cut + 1
        out.append((pos, end))
        pos = end
    return out


def _other_line_between(text: str, begin: int, end: int, foot: int) -> bool:
    """Whether a line break in ``text[begin:end]`` (a piece of a List's items block
    ``text[start:foot + 1]``) is followed by a line that neither starts an item (``- ``) nor
    continues one (two spaces): what ``_ITEMS_OTHER_LINE.search(text, start, foot)`` finds,
    found a piece at a time by the process that reads it.

    The look-ahead reads up to two characters past the piece, never past ``foot``, so a line
    break at a piece's end is judged as in the whole block; a break past the piece is the
    next piece's. Pieces that tile the block find exactly what the whole block's search finds
    (``tests/test_stream_read.py``).
    """
    hit = _ITEMS_OTHER_LINE.search(text, begin, min(end + 2, foot))
    return hit is not None and hit.start() < end


def _has_flow(text: str) -> bool:
    """Whether ``text`` holds a flow indicator (a bracket or a brace)."""
    return any(c in text for c in _FLOW_CHARS)


def _read_piece(
    text: str, begin: int, end: int, rules: tuple[bool, bool, int, int, bool]
) -> list[Any]:
    """The items of the piece ``text[begin:end]`` of a List's items block, once its text is
    scanned for what :func:`_readable` scans the whole text for, and its lines for one that
    neither starts nor continues an item (:func:`_other_line_between`). ``rules``: whether the
    text holds a flow indicator, whether a piece may hold a collection key, the maximum depth,
    where the List's own lines start (``foot``).

    Raises:
        StreamDeclined: the piece holds a construct the two parsers may read differently or
            a line that is no item's, does not parse alone, or may read differently alone.
    """
    flow, keys, max_depth, foot, opens = rules
    if _other_line_between(text, begin, end, foot):
        raise StreamDeclined("a line of the items block neither starts nor continues an item")
    piece = text[begin:end]
    if _odd_characters(piece) or _divergent_between(text, begin, end, flow, opens):
        raise StreamDeclined("the text holds a construct PyYAML may read differently")
    # A block-style piece whose lines prove its depth needs no walk of its items (its lines
    # are the items' lines in the whole text, at the same columns).
    return _parse_piece(piece, not flow and _shallow(piece, max_depth), keys, max_depth)


def _parse_piece(piece: str, shallow: bool, keys: bool, max_depth: int) -> list[Any]:
    """The items of one piece of a List's items block.

    Raises:
        StreamDeclined: the piece does not parse alone, or may read differently alone.
    """
    if _EMPTY_BLOCK_AT_END.search(piece[-_TAIL:]):
        raise StreamDeclined("a piece ends in an empty block scalar")
    try:
        items = yaml_rs.loads(piece, parse_datetime=False)
    except Exception as exc:  # noqa: BLE001 - the whole-text path names the error
        raise StreamDeclined(str(exc)) from exc
    if not isinstance(items, list) or (
        not shallow and _unlike_pyyaml_quick(items, max_depth - 1, keys)
    ):
        raise StreamDeclined("a piece nests too deep or has a collection key")
    return items


#: Environment variable: "0" never forks a read worker, "1" forks one for every streamed
#: List of two pieces or more (see ``docs/scale.md``).
HELPER_ENV = "AUDITOR_READ_HELPER"
#: How a streamed List's pieces are shared with a forked worker (:func:`auditor.split.share_out_iter`):
#: one piece claimed at a time, from four pieces (16 MiB) on. The worker starts at once with
#: the text in its memory (copy-on-write: nothing is sent or parsed twice).
READ = Sharing(HELPER_ENV, 4, 1, "read worker")


def _pieces_back(raw: bytes, numbers: range) -> list[list[Any] | None]:
    """The read worker's pieces numbered ``numbers`` from their marshal form: one list of
    items per piece, or the pieces up to one it declined (None, the last).

    Raises:
        ValueError: not a list of pieces, or not one per piece of ``numbers``.
    """
    got = marshal.loads(raw)
    if not isinstance(got, list) or not all(p is None or isinstance(p, list) for p in got):
        raise ValueError("the read worker sent no list of pieces")
    if not (len(got) == len(numbers) or (got and got[-1] is None and len(got) < len(numbers))):
        raise ValueError(f"the read worker sent {len(got)} pieces for {len(numbers)}")
    if None in got[:-1]:
        raise ValueError("the read worker sent pieces after one it declined")
    return got
