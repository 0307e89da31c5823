"""Differential test: the yaml-rs fast path reads every text exactly as the PyYAML strict loader.

Same objects (types included: ``True`` is not ``1``, ``1`` is not ``1.0``) and
the same named errors on the public corpus, the exports, the bug and fuzz
cases, the project's fixtures, hostile snippets and Hypothesis-generated
texts. Where the fast path declines (``fast_documents`` returns ``None``) the
strict loader is used, so only texts it accepts need comparing; the tests also
check that exports do take the fast path, or there would be no speed-up.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from auditor import yamlfast
from auditor.yamlstrict import MAX_DEPTH, LoadError, load_documents
from tests.conftest import REPO, find_corpus
from tests.fuzz_strategies import FUZZ, scalars
from tests.test_fuzz_source import GOOD_TEXT, SNIPPETS

pytestmark = pytest.mark.skipif(not yamlfast.AVAILABLE, reason="yaml-rs is not installed")


def fast(text: str) -> list[Any] | None:
    """The fast path's documents, or None where it declines."""
    return yamlfast.fast_documents(text, max_depth=MAX_DEPTH)


def typed(value: Any) -> Any:
    """``value`` with every scalar tagged by its type, so ``==`` is type-strict (NaN equals NaN)."""
    if isinstance(value, dict):
        return ("dict", [(typed(k), typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [typed(v) for v in value])
    if isinstance(value, float) and math.isnan(value):
        return ("float", "nan")
    return (type(value).__name__, value)


def strict(text: str, tmp: Path) -> Any:
    """What the PyYAML strict loader makes of ``text``: typed documents or the LoadError text."""
    path = tmp / "doc.yaml"
    path.write_text(text, encoding="utf-8")
    try:
        return typed(list(load_documents(path, fast=False)))
    except LoadError as exc:
        return f"LoadError: {exc}"


def assert_same(text: str, tmp: Path) -> bool:
    """Assert both paths agree on ``text``; return whether the fast path took it."""
    docs = fast(text)
    path = tmp / "doc.yaml"
    path.write_text(text, encoding="utf-8")
    try:
        via_loader: Any = typed(list(load_documents(path)))
    except LoadError as exc:
        via_loader = f"LoadError: {exc}"
    reference = strict(text, tmp)
    assert via_loader == reference, text[:300]
    if docs is not None:
        assert typed(docs) == reference, text[:300]
    return docs is not None


def _files(root: Path) -> list[Path]:
    return sorted(
        p for p in root.rglob("*") if p.is_file() and p.suffix in (".yaml", ".yml", ".json")
    )


def _corpus_dir(name: str) -> Path:
    return find_corpus() / name


@pytest.mark.parametrize("name", ["public", "cluster-export", "bugcases", "fuzzcases"])
def test_shared_corpus_reads_the_same(name: str, tmp_path: Path) -> None:
    files = _files(_corpus_dir(name))
    assert files
    taken = [f for f in files if assert_same(f.read_text(encoding="utf-8"), tmp_path)]
    if name == "cluster-export":
        # An `oc get -o yaml` export quotes every string YAML 1.1 would read as
        # something else; only prose (a "*U*" line in a description, "[*]" in a
        # JSON annotation) trips the conservative scan, so most bytes go fast.
        size = sum(f.stat().st_size for f in files)
        assert sum(f.stat().st_size for f in taken) > 0.5 * size


def test_project_exports_and_fixtures_read_the_same(tmp_path: Path) -> None:
    export = _files(REPO / "examples" / "small-cluster")
    fixtures = _files(REPO / "tests" / "fixtures")
    assert export and fixtures
    for f in export + fixtures:
        assert_same(f.read_text(encoding="utf-8"), tmp_path)
    assert all(fast(f.read_text(encoding="utf-8")) is not None for f in export)


def test_generated_estate_takes_the_fast_path(tmp_path: Path) -> None:
    from bench.generate import generate

    generate(tmp_path / "estate", 40, seed=3)
    for f in _files(tmp_path / "estate"):
        assert assert_same(f.read_text(encoding="utf-8"), tmp_path), f.name


TRICKY = [
    "a: yes\nb: On\nc: OFF\nd: no\n",
    "a: 0755\nb: 08\nc: 0o17\nd: 0x1F\ne: 0b11\nf: 1_000\ng: +5\n",
    "a: 1e3\nb: 1.0e5\nc: 1.0e+5\nd: .5\ne: 5.\nf: .inf\ng: -.Inf\nh: .NaN\n",
    "a: 1:20\nb: 1:20.5\nc: 190:20:30\n",
    "a: 2018-07-04T15:03:08Z\nb: 2018-07-04\nc: 2001-12-14 21:59:43.10 -5\n",
    "a: 99999999999999999999999\nb: -0\nc: 1.50\nd: 1795579394000000000\n",
    "a: True\nb: FALSE\nc: Null\nd: ~\ne:\nf: NULL\n",
    "b: &x {p: 1}\nc:\n  <<: *x\n  p: 2\n",
    "a: &a [*a]\n",
    "a: &a [x, x]\nb: [*a, *a]\n",
    "a: !!str 12\n",
    "a: !foo bar\n",
    "a: !!binary aGVsbG8=\n",
    "a: =\n",
    "? [1, 2]\n: x\n",
    "[1, 2]: x\n",
    "{a: 1}: x\n",
    '{"a":yes}\n',
    "{a:yes}\n",
    "[a,yes]\n",
    "a: 1\na: 2\n",
    "1: a\n1.0: b\n",
    "a: {x: 1, x: 2}\n",
    "a: 1\n---\nb: 2\n",
    "- 1\n---\n- 2\n",
    "---\n- [1]\n- [2]\n",
    "---\n",
    "",
    "# only a comment\n",
    "a: 1\n...\n",
    "--- a\n",
    "%YAML 1.1\n---\na: yes\n",
    "\ufeffa: 1\n",
    "a: b\u2028c\n",
    "a: \x01\n",
    "a:\tb\n",
    "a: b\r\nc: d\r\n",
    "a: 'it''s'\nb: \"x\\ny\\u00e9\\/\"\nc: \"\\x00\"\n",
    "a: |\n  x\n  y\nb: >-\n  x\n\n  y\nc: |+\n  z\n\n",
    "a: x\n  y\n\n  z\n",
    "a: [1, 2\n",
    "a: b: c\n",
    "a: @x\n",
    "a: `x\n",
    "a: -\n",
    "a: .\n",
    "- - - yes\n",
    "[" * 250 + "]" * 250,
    "[" * 150 + "]" * 150,
    '{"apiVersion": "v1", "kind": "List", "items": [{"a": 1e5, "b": 1.0E+5, "c": -0.0}]}\n',
    '{"a": "x", "a": "y"}\n',
]


@pytest.mark.parametrize("text", TRICKY)
def test_tricky_texts_read_the_same(text: str, tmp_path: Path) -> None:
    assert_same(text, tmp_path)


def test_divergent_plain_scalars_decline() -> None:
    for text in ["a: yes\n", "a: 0755\n", "a: 1e3\n", "a: 1:20\n", "b: &x 1\n", "yes: 1\n"]:
        assert fast(text) is None, text
    assert fast("a: 'yes'\nb: \"0755\"\nc: 10Gi\nd: 10.0.0.1\n") == [
        {"a": "yes", "b": "0755", "c": "10Gi", "d": "10.0.0.1"}
    ]


objects = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.one_of(st.text(max_size=8), scalars), inner, max_size=4)
    ),
    max_leaves=20,
)


@FUZZ
@given(objects, st.sampled_from([None, True, False]), st.booleans())
def test_dumped_objects_read_the_same(value: Any, flow: bool | None, explicit: bool) -> None:
    import tempfile

    try:
        text = yaml.safe_dump(value, default_flow_style=flow, explicit_start=explicit)
    except yaml.YAMLError:
        return
    with tempfile.TemporaryDirectory() as tmp:
        assert_same(text, Path(tmp))


YAMLISH = st.text(alphabet="ab01:-[]{},'\"\n #&*!?|>yesonfxE._+=<\\@%~", max_size=40)


@FUZZ
@given(YAMLISH)
def test_yamlish_texts_read_the_same(text: str) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        assert_same(text, Path(tmp))


@FUZZ
@given(st.data())
def test_mutated_export_reads_the_same(data: st.DataObject) -> None:
    import tempfile

    text = GOOD_TEXT
    for _ in range(data.draw(st.integers(1, 4), label="edits")):
        pos = data.draw(st.integers(0, len(text)), label="pos")
        snippet = data.draw(st.sampled_from(SNIPPETS + [" yes", " 0755", "\n---\n"]))
        text = text[:pos] + snippet + text[pos:]
    with tempfile.TemporaryDirectory() as tmp:
        assert_same(text, Path(tmp))


@pytest.mark.parametrize("levels", [1, 2, 3, 150, 198, 199, 200, 201, 202, 260])
@pytest.mark.parametrize("shape", ["list", "dict", "items"])
def test_quick_depth_check_agrees_with_the_walk(levels: int, shape: str) -> None:
    """The orjson-proven depth and key check gives the exact walk's answer at every depth."""
    from auditor.yamlfast import _unlike_pyyaml, _unlike_pyyaml_quick

    node: Any = "leaf"
    for i in range(levels - (2 if shape == "items" else 0)):
        node = [node] if (shape == "list" or i % 2) else {"k": node}
    if shape == "items":
        node = {"kind": "List", "items": [{"a": 1}, node] if isinstance(node, dict) else [node]}
    for keys in (False, True):
        assert _unlike_pyyaml_quick(node, 200, keys) == _unlike_pyyaml(node, 200, keys)
    assert _unlike_pyyaml_quick(node, 200, False) is (levels > 200)


def test_quick_check_leaves_collection_and_odd_keys_to_the_walk() -> None:
    from auditor.yamlfast import _unlike_pyyaml_quick

    assert _unlike_pyyaml_quick({"items": [{("a", "b"): 1}]}, 200, True) is True
    assert _unlike_pyyaml_quick({"items": [{("a", "b"): 1}]}, 200, False) is False
    assert _unlike_pyyaml_quick({1: {"x": [1]}, "b": [[{frozenset(): 2}]]}, 200, True) is True
    assert _unlike_pyyaml_quick({1: {"x": [1]}}, 200, True) is False


@pytest.mark.parametrize("levels", [3, 60, 150, 196, 199, 200, 201, 260])
@pytest.mark.parametrize("style", ["compact", "indented", "dashes"])
def test_text_depth_proof_never_passes_a_document_too_deep(levels: int, style: str) -> None:
    """``_shallow`` proves a block document's depth from its indentation alone; the block styles
    that nest fastest per column (a sequence as a mapping's value at the key's column,
    ``- - -`` runs) never get a document deeper than the limit through it."""
    from auditor.yamlfast import _shallow

    lines, col = [], 0
    for i in range(levels - 1):
        if style == "dashes":
            lines.append(" " * col + "- " * (levels - 1) + "leaf")
            break
        if style == "compact" and i % 2:
            lines.append(" " * col + "-")  # a sequence at its key's column
            col += 2
        else:
            lines.append(" " * col + "k:")
            col += 2 if style == "indented" else 0
    else:
        lines.append(" " * (col + 2) + "leaf")
    text = "\n".join(lines) + "\n"
    doc: Any = yaml.load(text, Loader=yaml.SafeLoader)
    nesting = 0
    while isinstance(doc, dict | list):
        nesting, doc = nesting + 1, (doc["k"] if isinstance(doc, dict) else doc[0])
    assert nesting == levels - 1
    widest = max(len(line) - len(line.lstrip(" -")) for line in lines)
    assert _shallow(text, MAX_DEPTH) is (widest < (MAX_DEPTH - 4) // 2)
    if _shallow(text, MAX_DEPTH):
        assert nesting <= MAX_DEPTH
    if nesting > MAX_DEPTH:
        assert fast(text) is None


# Literal block scalars (yamlfast.outside_literals): their bodies are text to both parsers, so
# the divergence scans skip them; these texts put every divergent construct inside a body,
# around one, and where a header is no block scalar at all. Each must read as PyYAML reads it.
LITERALS = [
    # the shape of KubeVirt's vm.kubevirt.io/validations annotation: JSON in a literal
    "metadata:\n  annotations:\n    vm.kubevirt.io/validations: |\n      [\n        {\n"
    '          "name": "minimal-required-memory",\n          "min": 1073741824\n        }\n'
    "      ]\nspec:\n  running: false\n",
    "a: |\n  yes: *x\n  &y [1, {b: on}]\n  ? k\n  0755\nb: c\n",
    "a: |-\n  [x, yes]\n\n  <<: *m\nb: 1\n",
    "- a: |\n    !tag {x\n  b: 2\n- c: 3\n",
    '- - key: |\n      "q": [1,\n  - 2\n',
    # after the body, the next line is scanned: these must decline or read the same
    "a: |\n  text\nb: yes\n",
    "a: |\n  text\n*alias\n",
    "a: |\n  text\n  \nb: [1, {c: yes}]\n",
    # the body's first line not past the key: no body (an empty scalar, then a sibling)
    "a: |\nb: [yes]\n",
    "x:\n  a: |\n  b: yes\n",
    # a less indented line ends the body; the rest is structure
    "a:\n  b: |\n      deep\n    yes: 1\n",
    # a leading empty line, an indentation indicator, keep chomping, a comment: scanned as before
    "a: |\n\n  [x, yes]\n",
    "a: |2\n   [yes]\n",
    "a: |+\n  [yes]\n\n",
    "a: | # c\n  [yes]\n",
    "a: >\n  [yes]\n",
    # a header inside a quoted scalar or a flow collection is no block scalar
    'a: "one\n  b: |\n    yes"\nc: 1\n',
    'a: "one\n  b: |\n    two"\n    c: yes\n',
    "a: [\n  b: |\n    yes, on\n  ]\n",
    "a: {x: [\n  b: |\n    *y\n  ]}\n",
    "- [\n  k: |\n    yes\n  ]\n",
    # in a flow collection that spans lines, yaml-rs takes a plain key that goes on to the
    # next line ({"one k": "|"}, {"d b": []}) where PyYAML refuses it
    "y: {one\nk: |\n\n}",
    "y: [a,\n  - >\n  ]\n",
    "c: {d\nb: [\n]\n}\n",
    'c: {"x]": 1,\nd\nb: 2}\n',
    "c: [{d\n  e: 1}]\n",
    # found by the same generated texts, older than the literal scans: yaml-rs reads a
    # leading underscore as a digit separator, "?" before "}" as a key, and gives a literal
    # at the text's unterminated end a line break
    "a: _0\nb: -_1\nc: _.5\nd: __1\ne: _x\n",
    "{?}",
    "[?, a]",
    "k: |\n\n 0",
    "k: |\n 0",
    # a body holding a header, a document marker and a flow opener of its own
    "a: |\n  b: |\n    [yes\n  ---\n  {x\nc: d\n",
    "a: |\n  x\n---\nb: yes\n",
    "a: |\n  [\nb: |\n  ]\nc: 1\n",
]


@pytest.mark.parametrize("text", LITERALS)
def test_literal_bodies_read_the_same(text: str, tmp_path: Path) -> None:
    assert_same(text, tmp_path)


def test_literal_bodies_take_the_fast_path() -> None:
    """JSON in a literal (KubeVirt's validations, kubectl's last-applied-configuration) no
    longer sends the text to PyYAML; the same characters outside one still do."""
    text = LITERALS[0]
    assert fast(text) == [
        {
            "metadata": {
                "annotations": {
                    "vm.kubevirt.io/validations": '[\n  {\n    "name": '
                    '"minimal-required-memory",\n    "min": 1073741824\n  }\n]\n'
                }
            },
            "spec": {"running": False},
        }
    ]
    assert fast("a: |\n  yes: *x\nb: 1\n") == [{"a": "yes: *x\n", "b": 1}]
    assert fast("a: 1\nb: yes\n") is None
    assert fast("a: |\n  text\nb: yes\n") is None  # the line after the body is scanned


_BODY_LINE = st.text(alphabet="ab01:-[]{},'\"#&*!?|>yesonf._=<@%~ ", max_size=12)


@FUZZ
@given(
    st.integers(0, 3),
    st.lists(_BODY_LINE, min_size=1, max_size=4),
    st.integers(1, 3),
    st.sampled_from(["", "-"]),
    YAMLISH,
    st.booleans(),
)
def test_texts_around_literals_read_the_same(
    col: int, body: list[str], extra: int, chomp: str, after: str, in_seq: bool
) -> None:
    """A literal at any column, with any body (indented past its key, or not), followed by
    any YAML-ish text: the fast path reads it as PyYAML does, or declines."""
    import tempfile

    lead = " " * col + ("- " if in_seq else "")
    key_col = len(lead)
    lines = [lead + f"k: |{chomp}"] + [" " * (key_col + extra) + b for b in body]
    text = "x:\n" * (col > 0) + "\n".join(lines) + "\n" + after
    with tempfile.TemporaryDirectory() as tmp:
        assert_same(text, Path(tmp))
