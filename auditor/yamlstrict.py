"""A strict, bounded YAML/JSON loader for exported cluster files.

Stricter than ``yaml.safe_load_all`` in the ways that matter for evidence:

- duplicate mapping keys are an error (two documents pasted without ``---``
  otherwise silently become one object and the first is lost);
- timestamps stay strings (``creationTimestamp: 2018-07-04T15:03:08Z`` is not
  turned into a ``datetime``);
- values JSON has no form for (``!!binary``, ``!!set``, ``!!omap``, ``!!pairs``,
  ``.nan``, ``.inf``) are an error: the API server writes JSON values only, so such a
  file is no export of it, and its values would compare or print differently in every
  report (bytes, sets, NaN);
- alias expansion is bounded (a "billion laughs" file is refused rather than
  expanded into an exponential tree);
- files above a size limit are refused before parsing.

Texts that both parsers read alike (every ``oc get -o yaml`` export) are
parsed by yaml-rs, many times faster (:mod:`auditor.yamlfast`); all
else, and every error, goes through the PyYAML loader below.
"""

from __future__ import annotations

import gc
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from auditor.yamlfast import StreamDeclined, fast_documents, fast_list

__all__ = [
    "paused_gc",
    "thaw_gc",
    "LoadError",
    "load_documents",
    "read_text",
    "documents",
    "stream_list",
    "StreamDeclined",
    "DEFAULT_MAX_FILE_BYTES",
    "MAX_EXPANDED_NODES",
]

DEFAULT_MAX_FILE_BYTES = 1024 * 1024 * 1024  # a 10,000-VM export has ~310 MB lists
#: Upper bound on the number of nodes a document may expand to through aliases.
MAX_EXPANDED_NODES = 5_000_000
#: Upper bound on nesting depth.
MAX_DEPTH = 200

_BaseLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class LoadError(Exception):
    """A file could not be read as YAML/JSON; ``str()`` names the reason and position."""


class _StrictLoader(_BaseLoader):  # type: ignore[valid-type,misc]
    """Safe loader that rejects duplicate keys and keeps timestamps as strings."""


def _construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False) -> Any:
    """Construct a mapping, refusing a key written twice in the same mapping.

    Keys brought in by a YAML merge (``<<: *anchor``) may be overridden locally, as
    the YAML merge spec allows, so only the keys written in this mapping are compared.
    Scalar keys are compared by (tag, text) without constructing them (the hot path).
    """
    seen: dict[Any, yaml.Node] = {}
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue
        if isinstance(key_node, yaml.ScalarNode):
            key: Any = (key_node.tag, key_node.value)
        else:
            key = loader.construct_object(key_node, deep=True)
            try:
                hash(key)
            except TypeError as exc:
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping",
                    node.start_mark,
                    "found unhashable key",
                    key_node.start_mark,
                ) from exc
        if key in seen:
            first = seen[key].start_mark
            shown = key[1] if isinstance(key_node, yaml.ScalarNode) else key
            raise yaml.constructor.ConstructorError(
                "while constructing a mapping",
                node.start_mark,
                f"found duplicate key {shown!r} (first at line {first.line + 1})",
                key_node.start_mark,
            )
        seen[key] = key_node
    return loader.construct_mapping(node, deep=deep)


def _construct_timestamp(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> str:
    return str(loader.construct_scalar(node))


def _not_json(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    """Refuse a YAML 1.1 type that JSON, and so the Kubernetes API, has no form for."""
    raise yaml.constructor.ConstructorError(
        None,
        None,
        f"found a {node.tag.rsplit(':', 1)[-1]} value, which no Kubernetes object holds "
        "(the API server writes JSON values only)",
        node.start_mark,
    )


def _construct_float(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> float:
    """A float, refusing NaN and the infinities (JSON has no form for them: a number that
    reads as one is damage, and would compare false or true against every threshold)."""
    value = float(loader.construct_yaml_float(node))
    if value != value or value in (math.inf, -math.inf):
        raise yaml.constructor.ConstructorError(
            None,
            None,
            f"found the number {node.value!r}, which is no JSON number (NaN or infinite)",
            node.start_mark,
        )
    return value


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_StrictLoader.add_constructor("tag:yaml.org,2002:timestamp", _construct_timestamp)
_StrictLoader.add_constructor("tag:yaml.org,2002:float", _construct_float)
for _tag in ("binary", "set", "omap", "pairs"):
    _StrictLoader.add_constructor(f"tag:yaml.org,2002:{_tag}", _not_json)


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for the block (re-entrant).

    Loading and auditing build millions of long-lived, acyclic dicts; every
    automatic collection rescans that growing heap and finds nothing, which
    makes the whole run superlinear in the estate size. Reference counting
    still frees everything that is not in a cycle.

    When the outermost pause ends, the objects alive then are moved to the
    permanent generation (``gc.freeze()``) before the collector is switched
    back on: otherwise its first collection scans every object made during
    the pause (1.5 s per million objects; an audit of 10,000 VMs makes tens of
    millions). Frozen objects are still freed by reference counting; cycles
    among them wait for :func:`thaw_gc`, which a long-lived process calls
    once an audit's objects are dropped.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.freeze()
            gc.enable()


def thaw_gc() -> None:
    """Hand the objects frozen by :func:`paused_gc` back to the cyclic collector.

    Call it between audits in a long-lived process (the service), when the
    previous audit's objects are no longer referenced: cycles among them are
    then collected by the next full collection.
    """
    gc.unfreeze()


def _next_document(loader: _StrictLoader) -> Any:
    """Construct the next document with the cyclic GC paused (see :func:`paused_gc`)."""
    with paused_gc():
        return loader.get_data()


def _check_size(doc: Any, limit: int = MAX_EXPANDED_NODES) -> None:
    """Raise LoadError if ``doc`` expands to more than ``limit`` nodes or nests too deep.

    Callers pass ``max(MAX_EXPANDED_NODES, file size in bytes)``: without
    aliases a node takes at least one byte of the file, so an honest document
    (a 300 MB ``volumesnapshotcontents.yaml`` of 10,000 VMs) never reaches the
    bound, while an alias bomb expands far beyond its size.

    Shared subtrees (YAML aliases) are counted once per reference, the way a
    consumer walking the document would see them, but measured with a memo so
    the check itself stays linear in the number of distinct nodes. A node
    that contains itself (``&a [*a]``) is refused: no Kubernetes object is
    cyclic and every later walk would never end.
    """
    memo: dict[int, tuple[int, int]] = {}
    active: set[int] = set()

    def measure(node: Any) -> tuple[int, int]:
        if not isinstance(node, dict | list):
            return 1, 0
        ident = id(node)
        if ident in memo:
            return memo[ident]
        if ident in active:
            # Every later walk (redaction, digest, checks) would loop forever.
            raise LoadError("document has a recursive alias (a node that contains itself); refused")
        active.add(ident)
        children = node.values() if isinstance(node, dict) else node
        total, depth = 1, 0
        for child in children:
            n, d = measure(child)
            total += n
            depth = max(depth, d)
            if total > limit:
                raise LoadError(
                    f"document expands to more than {limit} nodes (alias bomb?); refused"
                )
        depth += 1
        if depth > MAX_DEPTH:
            raise LoadError(f"document nests deeper than {MAX_DEPTH} levels; refused")
        active.discard(ident)
        memo[ident] = (total, depth)
        return total, depth

    try:
        measure(doc)
    except RecursionError as exc:
        raise LoadError(f"document nests deeper than {MAX_DEPTH} levels; refused") from exc


def load_documents(
    path: Path, *, max_bytes: int = DEFAULT_MAX_FILE_BYTES, fast: bool = True
) -> Iterator[Any]:
    """Yield each document of a YAML or JSON file (JSON is a YAML subset).

    ``fast=False`` skips the yaml-rs path (the differential test and the bench
    compare the two); results and errors are the same either way.

    Raises:
        LoadError: the file is too large, unreadable, not UTF-8, does not
            parse, has duplicate keys, or expands beyond the alias bound. The
            message gives the line and column where known. Documents before
            the failing one have already been yielded.
    """
    yield from documents(read_text(path, max_bytes=max_bytes), fast=fast)


def read_text(path: Path, *, max_bytes: int = DEFAULT_MAX_FILE_BYTES) -> str:
    """The text of a file, refused above ``max_bytes`` bytes.

    Raises:
        LoadError: the file is too large, unreadable or not UTF-8.
    """
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise LoadError(f"cannot read file: {exc.strerror}") from exc
    if size > max_bytes:
        raise LoadError(f"file is {size} bytes, above the {max_bytes}-byte limit; refused")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise LoadError(f"file is not UTF-8 text (byte {exc.start})") from exc
    except OSError as exc:
        raise LoadError(f"cannot read file: {exc.strerror}") from exc


def documents(text: str, *, fast: bool = True) -> Iterator[Any]:
    """Yield each document of ``text`` (see :func:`load_documents`).

    Raises:
        LoadError: as :func:`load_documents`, for the text's content.
    """
    with paused_gc():
        docs = fast_documents(text, max_depth=MAX_DEPTH) if fast else None
    if docs is not None:
        # No aliases on this path, so a document has at most one node per byte
        # of the file (within the expansion bound) and its depth is checked.
        yield from docs
        return
    loader = _StrictLoader(text)
    try:
        while loader.check_data():
            doc = _next_document(loader)
            _check_size(doc, max(MAX_EXPANDED_NODES, len(text)))
            yield doc
    except yaml.YAMLError as exc:
        raise LoadError(_describe(exc) + _lenient_hint(text, exc)) from exc
    except RecursionError as exc:
        raise LoadError(f"document nests deeper than {MAX_DEPTH} levels; refused") from exc
    finally:
        loader.dispose()


def stream_list(
    text: str, take: Callable[[Any], Any] | None = None
) -> tuple[dict[str, Any], Iterator[list[Any]]] | None:
    """An ``oc get -o yaml`` ``List`` read a piece of its items at a time (see
    :func:`auditor.yamlfast.fast_list`, and its ``take``, applied to each item): ``(the List
    without items, lists of items)``, or None when the text is no such List or needs the
    whole-text reader. The iterator raises :class:`~auditor.yamlfast.StreamDeclined` when a
    piece cannot be read alone; the caller then forgets the items it was given and reads the
    text with :func:`documents`."""
    return fast_list(text, max_depth=MAX_DEPTH, take=take)


def _lenient_hint(text: str, exc: yaml.YAMLError) -> str:
    """Name the objects a duplicate-key file would silently have become, for the message."""
    if "duplicate key" not in str(exc):
        return ""
    try:
        docs = list(yaml.load_all(text, Loader=_BaseLoader))
    except yaml.YAMLError:
        return ""
    names = [
        f"{d.get('kind')} {(d.get('metadata') or {}).get('name')}"
        for d in docs
        if isinstance(d, dict) and isinstance(d.get("metadata"), dict)
    ]
    if not names:
        return ""
    return (
        f" (read leniently it would become {', '.join(names)}, losing the earlier object;"
        " two documents missing a '---' separator?)"
    )


def _describe(exc: yaml.YAMLError) -> str:
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        parts = [p for p in (exc.context, exc.problem) if p]
        return f"YAML error{where}: {'; '.join(parts)}"
    return f"YAML error: {exc}"
