"""Large ``oc get`` Lists are read a piece of their items at a time into slim records (issue 15).

The streamed read must give exactly what reading the whole text gives (the same objects, origins,
states, problems), fall back to the whole text wherever a piece could read differently, and keep
nothing of a file that turns out unreadable. The slim records of VolumeSnapshotContents must keep
every field the checks read, and the audit's verdicts must not change.
"""

from __future__ import annotations

import multiprocessing
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import auditor.sources.directory as directory
import auditor.yamlfast as yamlfast
from auditor.config import AuditSettings
from auditor.envelope import dump_report_json
from auditor.kinds import BY_KIND, project
from auditor.kubevalues import parse_time
from auditor.pipeline import audit_data
from auditor.sources.base import ClusterData, KindState
from auditor.sources.directory import DirectorySource
from bench.generate import generate
from bench.yamlout import dump_list

AT = parse_time("2026-11-30T06:00:00Z")


@pytest.fixture
def tiny_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stream every List of 1 KB or more, in pieces of about 2 KB (a few items each)."""
    monkeypatch.setattr(directory, "_STREAM_MIN_CHARS", 1024)
    monkeypatch.setattr(yamlfast, "CHUNK_BYTES", 2048)


def _whole(root: Path, *, slim: bool = True) -> ClusterData:
    """Read ``root`` without streaming."""
    saved = directory._STREAM_MIN_CHARS
    directory._STREAM_MIN_CHARS = 1 << 62
    try:
        return DirectorySource(root, slim=slim).collect()
    finally:
        directory._STREAM_MIN_CHARS = saved


def _same(a: ClusterData, b: ClusterData) -> None:
    assert {k: orjson.dumps(v) for k, v in a.objects.items()} == {
        k: orjson.dumps(v) for k, v in b.objects.items()
    }
    assert a.origins == b.origins
    assert a.states == b.states
    assert a.skipped == b.skipped
    assert [p.reason for p in a.problems] == [p.reason for p in b.problems]


def _vsc(i: int, **status: Any) -> dict[str, Any]:
    return {
        "apiVersion": "snapshot.storage.k8s.io/v1",
        "kind": "VolumeSnapshotContent",
        "metadata": {
            "name": f"snapcontent-{i:04d}",
            "labels": {"velero.io/backup-name": f"daily-{i % 3}"},
            "uid": f"uid-{i}",
            "resourceVersion": str(i),
            "managedFields": [{"manager": "csi-snapshotter", "operation": "Update"}],
        },
        "spec": {
            "deletionPolicy": "Retain",
            "driver": "rbd.csi.ceph.com",
            "source": {"snapshotHandle": f"handle-{i}"},
            "volumeSnapshotClassName": "rbd",
            "volumeSnapshotRef": {"name": f"vs-{i}", "namespace": "apps", "uid": f"vs-uid-{i}"},
        },
        "status": {"readyToUse": True, "restoreSize": 1 << 30, **status},
    }


def _write(root: Path, items: list[dict[str, Any]]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    path = root / "volumesnapshotcontents.yaml"
    with path.open("w", encoding="utf-8") as fh:
        dump_list(items, fh)
    return path


def test_streamed_estate_reads_exactly_as_the_whole_text(tmp_path: Path, tiny_pieces: None) -> None:
    generate(tmp_path, 40, seed=3)
    streamed = DirectorySource(tmp_path).collect()
    _same(streamed, _whole(tmp_path))
    assert len(streamed.of("VolumeSnapshotContent")) > 100
    assert streamed.problems == []


def test_slim_record_keeps_what_checks_read_and_drops_the_rest(tmp_path: Path) -> None:
    _write(tmp_path, [_vsc(1, error={"message": "snapshot failed: quota"}, readyToUse=False)])
    slim = DirectorySource(tmp_path).collect().of("VolumeSnapshotContent")[0]
    assert slim == {
        "apiVersion": "snapshot.storage.k8s.io/v1",
        "kind": "VolumeSnapshotContent",
        "metadata": {"name": "snapcontent-0001", "labels": {"velero.io/backup-name": "daily-1"}},
        "spec": {
            "deletionPolicy": "Retain",
            "driver": "rbd.csi.ceph.com",
            "source": {"snapshotHandle": "handle-1"},  # the volume (or snapshot) it is of
            "volumeSnapshotClassName": "rbd",
            # the VolumeSnapshot it was taken for (Velero names it after the PVC), its uid
            # dropped
            "volumeSnapshotRef": {"name": "vs-1", "namespace": "apps"},
        },
        "status": {
            "readyToUse": False,
            "restoreSize": 1 << 30,
            "error": {"message": "snapshot failed: quota"},
        },
    }
    whole = DirectorySource(tmp_path, slim=False).collect().of("VolumeSnapshotContent")[0]
    assert whole["spec"]["volumeSnapshotRef"] == {
        "name": "vs-1",
        "namespace": "apps",
        "uid": "vs-uid-1",
    }
    assert whole["metadata"]["uid"] == "uid-1"  # collect exports whole objects
    assert project(whole, BY_KIND["VolumeSnapshotContent"]) == slim


def test_slim_records_leave_every_verdict_and_finding_unchanged(tmp_path: Path) -> None:
    """The generated estate plants failed, partly failed and missing snapshot contents."""
    generate(tmp_path, 120, seed=11)
    assert AT is not None
    reports = [
        orjson.loads(dump_report_json(audit_data(data, AuditSettings(), at=AT)))
        for data in (DirectorySource(tmp_path).collect(), _whole(tmp_path, slim=False))
    ]
    for report in reports:
        # the digest of the records read (slim or whole), and the run id made from it
        report["run"].pop("input_digest")
        report["run"].pop("id")
    assert reports[0] == reports[1]
    verdicts = {vm["readiness"] for vm in reports[0]["vms"]}
    assert len(verdicts) >= 3


def test_a_piece_cut_inside_a_quoted_scalar_falls_back_to_the_whole_text(
    tmp_path: Path, tiny_pieces: None
) -> None:
    """A double-quoted scalar may continue on a line that starts with "- " (PyYAML is lax about
    its indentation); a cut there leaves a piece that does not parse, and the text is then read
    whole, with nothing of the stream kept twice."""
    items = [_vsc(i) for i in range(60)]
    path = _write(tmp_path, items)
    text = path.read_text()
    anchor = "  status:\n    readyToUse: true\n    restoreSize: 1073741824\n"
    at = text.index(anchor, len(text) // 2)
    padding = "x" * 2100  # longer than a piece, so a cut must fall inside the string
    text = text[:at] + f'    note: "{padding}\n- not an item"\n' + text[at:]
    path.write_text(text)
    streamed = DirectorySource(tmp_path).collect()
    _same(streamed, _whole(tmp_path))
    assert len(streamed.of("VolumeSnapshotContent")) == 60
    assert streamed.problems == []


def test_an_unreadable_late_piece_keeps_nothing_of_the_file(
    tmp_path: Path, tiny_pieces: None
) -> None:
    """A duplicate key in the last item: the whole file is unreadable, as when read whole;
    the items streamed before it are forgotten, never audited as if the list were complete."""
    path = _write(tmp_path, [_vsc(i) for i in range(60)])
    text = path.read_text()
    last = text.rindex("    readyToUse: true\n")
    path.write_text(text[:last] + "    readyToUse: true\n" + text[last:])
    streamed = DirectorySource(tmp_path).collect()
    _same(streamed, _whole(tmp_path))
    assert streamed.of("VolumeSnapshotContent") == []
    assert streamed.state("VolumeSnapshotContent") is KindState.PARTIAL
    assert "duplicate key" in streamed.problems[0].reason


def test_a_non_object_item_is_judged_on_the_whole_list(tmp_path: Path, tiny_pieces: None) -> None:
    path = _write(tmp_path, [_vsc(i) for i in range(40)])
    text = path.read_text()
    cut = text.index("\n- ", len(text) * 3 // 4) + 1
    path.write_text(text[:cut] + "- just a string\n" + text[cut:])
    streamed = DirectorySource(tmp_path).collect()
    _same(streamed, _whole(tmp_path))
    assert len(streamed.of("VolumeSnapshotContent")) == 40
    assert streamed.state("VolumeSnapshotContent") is KindState.PARTIAL
    assert "is a string, not an object" in streamed.problems[0].reason


@pytest.mark.parametrize(
    "edit",
    [
        lambda t: t.replace("items:\n", "items:\n# a comment\n", 1),  # not a plain oc List
        lambda t: t.replace("kind: List\n", "kind: List\nkind: List\n", 1),  # duplicate key
        lambda t: t + "---\napiVersion: v1\nkind: List\nitems: []\n",  # two documents
    ],
)
def test_texts_that_are_no_plain_list_are_read_whole(
    tmp_path: Path, tiny_pieces: None, edit: Any
) -> None:
    path = _write(tmp_path, [_vsc(i) for i in range(30)])
    path.write_text(edit(path.read_text()))
    found = yamlfast.fast_list(path.read_text(), max_depth=200)
    if found is not None:  # a line that is no item's is found by the piece that holds it
        with pytest.raises(yamlfast.StreamDeclined):
            for _ in found[1]:
                pass
    _same(DirectorySource(tmp_path).collect(), _whole(tmp_path))


def test_pieces_are_cut_at_item_starts_and_cover_the_list(tiny_pieces: None) -> None:
    import io

    buf = io.StringIO()
    items = [_vsc(i) for i in range(50)]
    dump_list(items, buf)
    found = yamlfast.fast_list(buf.getvalue(), max_depth=200)
    assert found is not None
    header, pieces = found
    assert header == {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}}
    got = [list(piece) for piece in pieces]
    assert len(got) > 5
    assert [item for piece in got for item in piece] == items


_KEYS = st.sampled_from(
    [
        "name",
        "labels",
        "annotations",
        "error",
        "message",
        "password",
        "userData",
        "data",
        "networkData",
        "sysprep",
        "db-password",
        "last-applied-configuration",
        "token",
        "x",
    ]
)
_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    kind=st.sampled_from(["VolumeSnapshotContent", "ConfigMap", "Secret"]),
    sections=st.dictionaries(
        st.sampled_from(["metadata", "spec", "status", "data"]),
        st.dictionaries(_KEYS, _VALUES, max_size=5) | _VALUES,
        max_size=4,
    ),
)
def test_slim_record_redaction_is_the_generic_redaction(
    kind: str, sections: dict[str, Any]
) -> None:
    """redact_record skips looking at a slim record's own keys one by one; the result must be
    exactly redact_in_place's, whatever the record holds."""
    import copy

    from auditor.redact import redact_in_place, redact_record

    record = {"apiVersion": "v1", "kind": kind, **sections}
    assert redact_record(copy.deepcopy(record)) == redact_in_place(copy.deepcopy(record))


class Helped:
    """What the read worker gave for one streamed text: the pieces it sent back, and whether
    it declined one."""

    def __init__(self, pieces: int) -> None:
        self.pieces = pieces
        self.served = 0
        self.declined = False

    def __repr__(self) -> str:
        return f"Helped(pieces={self.pieces}, served={self.served}, declined={self.declined})"


@pytest.fixture
def scan_elsewhere(monkeypatch: pytest.MonkeyPatch, tiny_pieces: None) -> list[Helped]:
    """Stream in tiny pieces with the read worker forced on; the list records what the worker
    gave, per streamed text. This process waits 20 ms before each piece it reads itself, so
    the worker (which claims from the back) surely gets a share of a List of a few pieces."""
    import os
    import time

    monkeypatch.setenv(yamlfast.HELPER_ENV, "1")
    here = os.getpid()
    real_read, real_back, real_share = (
        yamlfast._read_piece,
        yamlfast._pieces_back,
        yamlfast.share_out_iter,
    )
    seen: list[Helped] = []

    def read_piece(*args: Any) -> Any:
        if os.getpid() == here:
            time.sleep(0.02)
        return real_read(*args)

    def back(raw: bytes, numbers: range) -> Any:
        got = real_back(raw, numbers)
        seen[-1].served += sum(p is not None for p in got)
        seen[-1].declined |= None in got
        return got

    def share_out_iter(pieces: int, *args: Any, **kwargs: Any) -> Any:
        seen.append(Helped(pieces))
        return real_share(pieces, *args, **kwargs)

    monkeypatch.setattr(yamlfast, "_read_piece", read_piece)
    monkeypatch.setattr(yamlfast, "_pieces_back", back)
    monkeypatch.setattr(yamlfast, "share_out_iter", share_out_iter)
    return seen


def test_the_worker_reads_the_estate_as_the_whole_text(
    tmp_path: Path, scan_elsewhere: list[Helped]
) -> None:
    generate(tmp_path, 30, seed=5)
    streamed = DirectorySource(tmp_path).collect()
    _same(streamed, _whole(tmp_path))
    assert len(streamed.of("VolumeSnapshotContent")) > 50
    assert len(scan_elsewhere) >= 5
    # the worker read a share of every List of several pieces, and declined none
    assert all(h.served > 0 for h in scan_elsewhere if h.pieces >= 3)
    assert sum(h.pieces >= 3 for h in scan_elsewhere) >= 5
    assert not any(h.declined for h in scan_elsewhere)
    assert multiprocessing.active_children() == []


@pytest.mark.parametrize("where", ["last item", "first item"])
def test_a_construct_only_pyyaml_reads_as_a_boolean_declines_the_stream(
    tmp_path: Path, scan_elsewhere: list[Helped], where: str
) -> None:
    """``yes`` is a string to yaml-rs and ``True`` to PyYAML, the reference: the scan of the
    piece that holds it, here or in the worker, drops the stream and the text is read whole."""
    path = _write(tmp_path, [_vsc(i) for i in range(40)])
    text = path.read_text()
    old, new = "volumeSnapshotClassName: rbd", "volumeSnapshotClassName: yes"
    at = text.rindex(old) if where == "last item" else text.index(old)
    path.write_text(text[:at] + new + text[at + len(old) :])
    streamed = DirectorySource(tmp_path).collect()
    _same(streamed, _whole(tmp_path))
    classes = [c["spec"]["volumeSnapshotClassName"] for c in streamed.of("VolumeSnapshotContent")]
    assert classes.count(True) == 1 and classes.count("rbd") == 39
    if where == "last item":  # the worker claims the last pieces first
        assert [h.declined for h in scan_elsewhere] == [True]
    # (a first item is this process's to read unless the worker, alone on the CPUs for a
    # while after the fork, claimed every piece: which process declines it is timing)


@pytest.mark.parametrize("where", ["a worker piece", "a local piece"])
def test_a_piece_that_does_not_read_alone_keeps_nothing_of_the_file(
    tmp_path: Path, scan_elsewhere: list[Helped], where: str
) -> None:
    """A duplicate key in the last item (read by the worker) or the first (read here): the
    file is unreadable as when read whole, and nothing streamed before is kept."""
    path = _write(tmp_path, [_vsc(i) for i in range(60)])
    text = path.read_text()
    line = "    readyToUse: true\n"
    at = text.rindex(line) if where == "a worker piece" else text.index(line)
    path.write_text(text[:at] + line + text[at:])
    streamed = DirectorySource(tmp_path).collect()
    _same(streamed, _whole(tmp_path))
    assert streamed.of("VolumeSnapshotContent") == []
    assert streamed.state("VolumeSnapshotContent") is KindState.PARTIAL
    assert "duplicate key" in streamed.problems[0].reason
    if where == "a worker piece":  # the worker claims the last pieces first
        assert [h.declined for h in scan_elsewhere] == [True]


def test_a_worker_that_dies_midway_leaves_its_pieces_to_this_process(
    tmp_path: Path, scan_elsewhere: list[Helped], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker sends one piece and dies: the rest of its claimed pieces are read here,
    nothing lost or doubled, and no worker is left."""
    import os

    here, real_dumps = os.getpid(), yamlfast.marshal.dumps
    sent: list[int] = []

    class Marshal:
        loads = staticmethod(yamlfast.marshal.loads)

        @staticmethod
        def dumps(value: Any) -> bytes:
            if os.getpid() != here and sent:
                os._exit(3)
            sent.append(1)
            return real_dumps(value)

    monkeypatch.setattr(yamlfast, "marshal", Marshal)
    _write(tmp_path, [_vsc(i) for i in range(60)])
    streamed = DirectorySource(tmp_path).collect()
    _same(streamed, _whole(tmp_path))
    names = [c["metadata"]["name"] for c in streamed.of("VolumeSnapshotContent")]
    assert names == [f"snapcontent-{i:04d}" for i in range(60)]
    assert [(h.served, h.declined) for h in scan_elsewhere] == [(1, False)]
    assert multiprocessing.active_children() == []


@pytest.mark.parametrize("sent", ["garbage", "not a list", "a list of strings"])
def test_whatever_the_worker_sends_the_objects_are_those_of_the_whole_text(
    tmp_path: Path,
    scan_elsewhere: list[Helped],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    sent: str,
) -> None:
    """A worker message that does not read back as pieces is redone here (and said in the
    log); the objects are those of the whole text."""
    import logging
    import marshal

    frame = {
        "garbage": b"\xff\xfe\xfd",
        "not a list": marshal.dumps(7),
        "a list of strings": marshal.dumps(["x"]),
    }[sent]

    class Marshal:
        loads = staticmethod(marshal.loads)

        @staticmethod
        def dumps(value: Any) -> bytes:
            return frame

    monkeypatch.setattr(yamlfast, "marshal", Marshal)
    _write(tmp_path, [_vsc(i) for i in range(60)])
    with caplog.at_level(logging.WARNING, logger="auditor.split"):
        streamed = DirectorySource(tmp_path).collect()
    _same(streamed, _whole(tmp_path))
    assert len(streamed.of("VolumeSnapshotContent")) == 60
    assert "read worker sent an unreadable message" in caplog.text
    assert multiprocessing.active_children() == []


@pytest.mark.parametrize(("setting", "forked"), [("0", False), ("1", True)])
def test_the_read_worker_setting_turns_the_worker_off_and_on(
    tmp_path: Path,
    tiny_pieces: None,
    monkeypatch: pytest.MonkeyPatch,
    setting: str,
    forked: bool,
) -> None:
    """``AUDITOR_READ_HELPER``: 0 never forks a read worker, 1 forks one whatever the size."""
    import auditor.split as split

    monkeypatch.setenv(yamlfast.HELPER_ENV, setting)
    starts: list[str] = []
    real = split._Worker.__init__

    def init(self: Any, *args: Any) -> None:
        starts.append(args[-1].name)
        real(self, *args)

    monkeypatch.setattr(split._Worker, "__init__", init)
    _write(tmp_path, [_vsc(i) for i in range(40)])
    streamed = DirectorySource(tmp_path).collect()
    _same(streamed, _whole(tmp_path))
    assert starts == (["read worker"] if forked else [])


@pytest.mark.parametrize("style", ["flow", "block"])
def test_a_list_whose_own_metadata_nests_too_deep_is_read_whole(
    tmp_path: Path, scan_elsewhere: list[Helped], style: str
) -> None:
    """The List's fields after its items (its metadata) count toward the document's depth,
    as when the whole text is read: refused, nothing of the items kept (red team, helper-14)."""
    path = _write(tmp_path, [_vsc(i) for i in range(60)])
    if style == "flow":
        deep = "  x: " + "[" * 220 + "]" * 220 + "\n"
    else:
        deep = "".join(f"{'  ' * (level + 1)}k{level}:\n" for level in range(220)) + (
            "  " * 221 + "leaf: 1\n"
        )
    path.write_text(path.read_text() + deep)
    streamed = DirectorySource(tmp_path).collect()
    _same(streamed, _whole(tmp_path))
    assert streamed.of("VolumeSnapshotContent") == []
    assert "nests deeper than" in streamed.problems[0].reason


#: Constructs the two parsers may read differently (and harmless look-alikes), as values,
#: whole lines or line starts.
_SNIPPETS = [
    "yes",
    "No",
    "on",
    "OFF",
    "y",
    "0755",
    "1e3",
    "1:20",
    "0x1F",
    "-1",
    "12",
    ".inf",
    "&a x",
    "*a",
    "!!str x",
    "? k",
    "---",
    "...",
    "|",
    ">-",
    "=",
    "<<: *a",
    "\t",
    "\r",
    "\x85",
    "\x07",
    "\u2028",
    "[a, yes]",
    "{a: 1}",
    "[[a]]",
    "a: [b]",
    '"x":1',
    "'x':yes",
    "- 1",
    ": x",
    "#c",
    "a:b",
    "1.5",
    "- yes",
    "[1]: x",
    "x]: y",
    "}",
    "{",
    "é",
]


def _list_text() -> str:
    import io

    buf = io.StringIO()
    dump_list([_vsc(i) for i in range(6)], buf)
    return buf.getvalue()


def _put(lines: list[str], snippet: str, at: int, how: str) -> None:
    """Put ``snippet`` into ``lines`` at line ``at``: as its value, a line of its own (at
    column 0 or indented) or the start of the line."""
    line = lines[at]
    if how == "value" and ": " in line:
        lines[at] = line[: line.index(": ") + 2] + snippet
    elif how == "start":
        lines[at] = snippet + line
    elif how == "indented line":
        lines.insert(at, "    " + snippet)
    else:
        lines.insert(at, snippet)


def _scans_agree(text: str, size: int) -> None:
    """The List's own lines, the whole text's checks and the scans of pieces of about
    ``size`` characters that tile the items block decline ``text`` exactly when the scan of
    the whole text does."""
    start = len(yamlfast._LIST_HEAD)
    foot = text.rfind(yamlfast._LIST_FOOT)
    assert foot > start
    flow = yamlfast._has_flow(text)
    gaps = yamlfast.outside_literals(text, 0, len(text))
    opens = flow and yamlfast._opens_flow_in(text, gaps)
    pieces = yamlfast._pieces(text, start, foot, size)
    assert pieces[0][0] == start and pieces[-1][1] == foot + 1
    assert all(a[1] == b[0] for a, b in zip(pieces, pieces[1:], strict=False))
    # fast_list declines a text whose flow collection spans lines before any piece is read
    spans = opens and yamlfast._spans_lines(text, gaps)
    by_pieces = (
        spans
        or yamlfast._list_lines_divergent(text, start, foot, flow, opens)
        or any(
            yamlfast._odd_characters(text[b:e])
            or yamlfast._divergent_between(text, b, e, flow, opens)
            for b, e in pieces
        )
    )
    assert by_pieces is (yamlfast._readable(text) is None), (text, size)
    # and each piece's lines: a line that neither starts nor continues an item
    other = any(yamlfast._other_line_between(text, b, e, foot) for b, e in pieces)
    assert other is (yamlfast._ITEMS_OTHER_LINE.search(text, start, foot) is not None), (
        text,
        size,
    )


_HOWS = ["value", "line", "start", "indented line"]


@pytest.mark.parametrize("snippet", _SNIPPETS)
def test_scanning_a_list_a_piece_at_a_time_finds_what_the_whole_text_scan_finds(
    snippet: str,
) -> None:
    """The helper and this process each scan only the pieces they parse (issue 15): the
    List's own lines, the checks of the whole text and the scans of pieces that tile the
    items block decline exactly the texts that the scan of the whole text declines, with
    the construct on any line of the items block, in any of four places, and pieces cut
    anywhere (every line of its own piece, or a few lines each)."""
    text = _list_text()
    start = len(yamlfast._LIST_HEAD)
    count = len(text[start:].split("\n"))
    declined = 0
    for at in range(count - 5):  # the items block's lines
        for how in _HOWS:
            lines = text[start:].split("\n")
            _put(lines, snippet, at, how)
            mutated = text[:start] + "\n".join(lines)
            declined += yamlfast._readable(mutated) is None
            for size in (1, 90, 400):
                _scans_agree(mutated, size)
    assert count > 100
    if snippet in ("yes", "0755", "&a x", "---", "...", "\t", "\x85", "'x':yes"):
        assert declined  # the whole-text scan declines some of these texts


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_scanning_a_list_a_piece_at_a_time_agrees_with_several_constructs(
    data: st.DataObject,
) -> None:
    """As above, with two or three constructs at once."""
    text = _list_text()
    start = len(yamlfast._LIST_HEAD)
    lines = text[start:].split("\n")
    for _ in range(data.draw(st.integers(2, 3))):
        at = data.draw(st.integers(0, len(lines) - 6))
        _put(lines, data.draw(st.sampled_from(_SNIPPETS)), at, data.draw(st.sampled_from(_HOWS)))
    _scans_agree(text[:start] + "\n".join(lines), data.draw(st.integers(1, 400)))


@pytest.mark.parametrize(
    ("sent", "numbers", "whole"),
    [
        ([[1], [2]], range(3, 5), True),
        ([[1], None], range(3, 6), True),  # declined the second piece: nothing after it
        ([None], range(3, 4), True),
        ([[1], [2]], range(3, 4), False),  # a piece too many (sent twice, say)
        ([[1]], range(3, 5), False),  # a piece short
        ([None, [1]], range(3, 5), False),  # a piece after one it declined
        ([[1], None], range(3, 5), True),
        ([], range(3, 4), False),
    ],
)
def test_the_read_worker_must_send_one_result_per_piece_it_claimed(
    sent: list[Any], numbers: range, whole: bool
) -> None:
    """red team (helper-22): a worker that sent its pieces twice had its items kept twice.
    What does not account for each claimed piece is refused (and those pieces read here)."""
    import marshal

    raw = marshal.dumps(sent)
    if whole:
        assert yamlfast._pieces_back(raw, numbers) == sent
    else:
        with pytest.raises(ValueError, match="pieces"):
            yamlfast._pieces_back(raw, numbers)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(
    kind=st.sampled_from(["VolumeSnapshotContent", "ConfigMap", "Secret"]),
    labels=st.none()
    | st.dictionaries(
        st.sampled_from(["a", "velero.io/backup-name", "db-password", "api-key", "token", "x"]),
        st.text(max_size=4),
        max_size=3,
    ),
    sections=st.dictionaries(
        st.sampled_from(["spec", "status", "data"]),
        st.dictionaries(_KEYS | st.sampled_from(["driver", "source", "readyToUse"]), _VALUES)
        | _VALUES,
        max_size=3,
    ),
    keep_secret=st.booleans(),
)
def test_the_one_pass_slim_record_is_project_then_redact(
    kind: str, labels: dict[str, str] | None, sections: dict[str, Any], keep_secret: bool
) -> None:
    """redact_projected (projection and redaction in one pass, with the meta-map shortcut)
    gives exactly redact_record(project(...)) for every object plain_entry's shape check
    lets through; ``keep_secret``: a keep naming a secret field, where the shortcut must not
    apply."""
    import copy

    from auditor.kinds import project_fields
    from auditor.redact import redact_projected, redact_record
    from auditor.sources.intake import shape_fault

    meta: dict[str, Any] = {
        "name": "n",
        "annotations": {"note": "x", "last-applied-configuration": "{}"},
    }
    if labels is not None:
        meta["labels"] = labels
    obj = {"apiVersion": "v1", "kind": kind, "metadata": meta, **sections}
    if shape_fault(obj, meta) is not None:
        return
    keep: tuple[tuple[str, tuple[str, ...]], ...] = (
        ("metadata", ("name", "labels", "annotations")),
        ("spec", ("driver", "source", "error", "password" if keep_secret else "x")),
        ("status", ("readyToUse", "error", "message")),
    )
    want = redact_record(project_fields(copy.deepcopy(obj), keep))
    for _ in range(2):  # the second time, the label keys are known
        assert redact_projected(copy.deepcopy(obj), keep) == want


_SHAPES = st.none() | st.text(max_size=2) | st.integers() | st.lists(st.none(), max_size=1)
_MAPS = st.dictionaries(st.text(max_size=2) | st.integers(), _SHAPES, max_size=2)


@settings(max_examples=500, deadline=None, derandomize=True)
@given(
    kind=st.sampled_from(["VolumeSnapshotContent", "ConfigMap", "PersistentVolume"]),
    fields=st.dictionaries(
        st.sampled_from(["spec", "status", "data"]), _SHAPES | _MAPS, max_size=3
    ),
    meta=st.dictionaries(st.sampled_from(["labels", "annotations"]), _SHAPES | _MAPS),
)
def test_the_shape_check_shortcut_agrees_with_the_field_by_field_check(
    kind: str, fields: dict[str, Any], meta: dict[str, Any]
) -> None:
    """shape_fault's common-case shortcut answers None exactly when the field-by-field check
    finds nothing, and otherwise gives its answer."""
    from auditor.sources.intake import _named_shape_fault, shape_fault

    obj = {"kind": kind, "metadata": meta, **fields}
    assert shape_fault(obj, meta) == _named_shape_fault(obj, meta)


def test_a_name_no_api_server_writes_is_named_and_read_alike_in_pieces(
    tmp_path: Path, tiny_pieces: None
) -> None:
    """A VolumeSnapshotContent named with a control character, in a streamed List: named as a
    problem (file, kind, field, the name escaped) and still read, as the whole text reads it
    (red team: such names passed unnamed)."""
    items = [_vsc(i) for i in range(60)]
    items[41]["metadata"]["name"] = "snapcontent-0041\x1b[2J\nforged"
    _write(tmp_path, items)
    streamed = DirectorySource(tmp_path).collect()
    _same(streamed, _whole(tmp_path))
    assert len(streamed.of("VolumeSnapshotContent")) == 60
    (problem,) = streamed.problems
    assert problem.field == "metadata.name" and problem.kind == "VolumeSnapshotContent"
    assert problem.file == "volumesnapshotcontents.yaml"
    assert "'snapcontent-0041\\x1b[2J\\nforged'" in problem.reason
    assert "\x1b" not in problem.reason and "\n" not in problem.reason
