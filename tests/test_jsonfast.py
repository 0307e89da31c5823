"""auditor.jsonfast gives the stdlib's bytes and values, on hostile trees and on real reports."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.config import AuditSettings
from auditor.envelope import dump_report_json
from auditor.envelope.build import input_digest
from auditor.jsonfast import (
    _DEPTH_LIMIT,
    canonical_lines,
    dumps_canonical,
    dumps_report,
    loads,
    nests_within,
)
from auditor.kubevalues import parse_time
from auditor.pipeline import audit_data
from auditor.sources.directory import DirectorySource

REPO = Path(__file__).resolve().parents[1]

_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",)) | st.sampled_from('\x7f\x00\x1f"\\é😀')
)
_scalar = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from([1.5e-05, 1e-07, -2e-10, 0.0001, 1e16, 1e22, 123.25, -0.0])
    | _text
)
_tree = st.recursive(
    _scalar,
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(_text, kids, max_size=4),
    max_leaves=30,
)


def _stdlib_canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str).encode()


def _stdlib_report(doc: Any) -> bytes:
    return (json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode()


@settings(max_examples=400, deadline=None)
@given(_tree)
def test_canonical_and_report_forms_are_the_stdlib_bytes(tree: Any) -> None:
    assert dumps_canonical(tree) == _stdlib_canonical(tree)
    finite = json.loads(json.dumps(tree), parse_constant=lambda _: None)
    assert dumps_report(finite) == _stdlib_report(finite)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.dictionaries(_text, _tree, max_size=3), max_size=5))
def test_canonical_lines_are_the_stdlib_lines(objs: list[Any]) -> None:
    assert canonical_lines(objs) == b"".join(_stdlib_canonical(o) + b"\n" for o in objs)


@pytest.mark.parametrize(
    "value",
    [
        {"a": float("nan")},
        [float("inf"), None],
        {"t": parse_time("2026-11-30T06:00:00Z")},  # stdlib default=str, not orjson's ISO form
        {"s": {"a"}, "b": b"x"},
        {1: "int key", "a": 2},
        {"x": 2**65},
        {"small": 1.5e-05, "tiny": [1e-07]},
    ],
)
def test_corner_values_take_the_stdlib_form(value: Any) -> None:
    try:
        expected = _stdlib_canonical(value)
    except TypeError as exc:
        # keys the stdlib cannot sort together: written as <type>repr, never an error
        assert "not supported between" in str(exc)
        assert dumps_canonical(value) == b'{"<int>1":"int key","a":2}'
        return
    assert dumps_canonical(value) == expected


def test_nulls_of_none_take_the_fast_form(monkeypatch: pytest.MonkeyPatch) -> None:
    """A VM as ``oc get -o yaml`` writes it holds ``creationTimestamp: null``: its nulls are
    None, so orjson's bytes are the stdlib's and the stdlib is not asked."""
    vm = {
        "kind": "VirtualMachine",
        "spec": {"template": {"metadata": {"creationTimestamp": None}}, "x": [1.5, None]},
    }
    expected = _stdlib_canonical(vm)

    def refuse(*_: Any, **__: Any) -> str:
        raise AssertionError("the stdlib form was asked for an object without NaN or Infinity")

    monkeypatch.setattr("auditor.jsonfast.json.dumps", refuse)
    assert dumps_canonical(vm) == expected
    assert canonical_lines([vm, {"a": None}]) == expected + b'\n{"a":null}\n'


@pytest.mark.parametrize(
    "value",
    [
        {"a": None, "deep": [[{"b": -float("inf")}]]},
        [None, float("nan"), 2.5],
        {"a": None, "s": "G\x7f😀"},  # a string whose bytes look like a non-finite float
    ],
)
def test_nulls_beside_non_finite_floats_take_the_stdlib_form(value: Any) -> None:
    assert dumps_canonical(value) == _stdlib_canonical(value)
    assert canonical_lines([value, {"n": None}]) == _stdlib_canonical(value) + b'\n{"n":null}\n'


@pytest.mark.parametrize(
    "text",
    ['{"a": NaN, "b": Infinity}', '{"k": "\\ud800"}', '{"n": 123456789012345678901234567890}'],
)
def test_loads_accepts_what_the_stdlib_accepts(text: str) -> None:
    got, want = loads(text), json.loads(text)
    assert json.dumps(got) == json.dumps(want)
    if isinstance(want.get("a"), float):
        assert math.isnan(got["a"])


def test_loads_raises_the_stdlib_error() -> None:
    with pytest.raises(json.JSONDecodeError, match="Expecting value: line 1 column 7"):
        loads('{"a": }')


def test_example_report_and_digest_match_the_stdlib_forms() -> None:
    at = parse_time("2026-11-30T06:00:00Z")
    assert at is not None
    data = DirectorySource(REPO / "examples" / "small-cluster").collect()
    report = audit_data(data, AuditSettings(), at=at)
    assert dump_report_json(report) == _stdlib_report(report.model_dump(mode="json"))
    for objs in data.objects.values():
        for obj in objs:
            assert dumps_canonical(obj) == _stdlib_canonical(obj)
    assert input_digest(data).startswith("sha256:")


def _nested(depth: int) -> Any:
    """``depth`` container levels, alternating dicts and lists (0: a scalar)."""
    node: Any = "leaf"
    for level in range(depth):
        node = {"k": node} if level % 2 else [node]
    return node


@pytest.mark.parametrize("levels", [0, 1, 2, 31, 32, 33, 100])
def test_nests_within_answers_exactly_at_every_depth(levels: int) -> None:
    """A node of ``d`` levels nests within ``levels`` iff ``d <= levels``; asked twice (the
    wrapping lists are reused), the answer is the same and the node is not kept."""
    assert _DEPTH_LIMIT is not None
    for depth in (levels - 1, levels, levels + 1):
        if depth < 0:
            continue
        node = _nested(depth)
        assert nests_within(node, levels) is (depth <= levels)
        assert nests_within(node, levels) is (depth <= levels)
    assert nests_within(_nested(_DEPTH_LIMIT), _DEPTH_LIMIT) is True
    assert nests_within(_nested(_DEPTH_LIMIT + 1), _DEPTH_LIMIT) is False
    assert nests_within({(1, 2): "tuple key"}, 5) is False
    assert nests_within({1: "int key"}, 5) is False
    assert nests_within("x", -1) is False


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_tree, max_size=5),
    st.dictionaries(_text, _tree, max_size=4),
    st.sampled_from(["vms", "items", "v\u00e9ms", 'a"b']),
)
def test_report_pieces_join_into_the_stdlib_report(
    items: list[Any], rest: dict[str, Any], key: str
) -> None:
    """``report_pieces``: the report written a list item at a time is the stdlib's indented
    form of the whole document, byte for byte, wherever the list's key sorts among the
    others and whatever the items hold (line breaks, small floats, big integers: each
    piece takes the stdlib's form where the fast one differs)."""
    from auditor.jsonfast import report_pieces

    # a model_dump(mode="json") tree, as dumps_report takes: non-finite floats made null
    doc = json.loads(json.dumps({**rest, key: items}), parse_constant=lambda _: None)
    pieces = list(report_pieces(doc, key))
    assert b"".join(pieces) == _stdlib_report(doc)
    if items:
        assert len(pieces) == len(items) + 2  # the head, one piece per item, the tail


def test_report_pieces_without_a_top_level_list_is_the_whole_text() -> None:
    from auditor.jsonfast import report_pieces

    nested = {"summary": {"vms": []}, "x": 1}
    assert list(report_pieces(nested, "vms")) == [_stdlib_report(nested)]
    not_list = {"vms": {"a": [1]}}
    assert list(report_pieces(not_list, "vms")) == [_stdlib_report(not_list)]
    empty = {"vms": [], "a": 0}
    assert list(report_pieces(empty, "vms")) == [_stdlib_report(empty)]
