"""The forked audit worker (``auditor/split.py``): shares work, and nothing depends on it.

``share_out`` is driven with small work functions: every item is done exactly once, in item
order, both processes take part, and a worker that dies, hangs or sends garbage costs time,
never an item. The audit itself is run with the worker forced on and off over a generated
estate (and the shared example export): report.json, the CSVs and the HTML are the same
bytes, with and without an owner filter, and when every worker message is refused.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import pickle
import signal
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from auditor import pipeline, split
from auditor.config import AuditSettings
from auditor.engine import evaluate
from auditor.envelope import report_document, seed_report_document
from auditor.envelope.build import build_envelope
from auditor.envelope.model import VmEntry
from auditor.inventory import capture
from auditor.inventory.index import velero_label
from auditor.pipeline import UnknownOwnerError, audit_data, dump_report_json, write_artifacts
from auditor.sources.directory import DirectorySource
from bench.generate import generate
from tests.conftest import AUDIT_AT

PARENT = os.getpid()


def _pids(r: range) -> list[tuple[int, int]]:
    """Each item with the process that did it; slow enough for both processes to claim."""
    time.sleep(0.002)
    return [(i, os.getpid()) for i in r]


def _encode(result: list[tuple[int, int]]) -> bytes:
    return repr(result).encode()


def _decode(raw: bytes, r: range) -> list[tuple[int, int]]:
    value = eval(raw.decode())  # noqa: S307 - our own child's repr of int pairs
    if not isinstance(value, list):
        raise TypeError("not a list")
    return value


def _flatten(chunks: list[tuple[range, list[tuple[int, int]]]]) -> list[tuple[int, int]]:
    return [pair for _, result in chunks for pair in result]


@pytest.fixture()
def forced(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(split.WORKER_ENV, "1")


def test_wanted_follows_the_setting_and_the_size(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(split.WORKER_ENV, "0")
    assert not split.wanted(100_000)
    monkeypatch.setenv(split.WORKER_ENV, "1")
    assert split.wanted(2)
    assert not split.wanted(1)  # nothing to share
    monkeypatch.delenv(split.WORKER_ENV)
    assert not split.wanted(split.WORKER_MIN_ITEMS - 1)


@pytest.mark.usefixtures("forced")
def test_both_processes_take_items_and_every_item_is_done_once_in_order() -> None:
    chunks = split.share_out(400, _pids, _encode, _decode)
    pairs = _flatten(chunks)
    assert [i for i, _ in pairs] == list(range(400))
    by = {pid for _, pid in pairs}
    assert PARENT in by and len(by) == 2  # the worker did some of them
    # the worker takes from the back, this process from the front
    assert pairs[0][1] == PARENT and pairs[-1][1] != PARENT
    assert [r.start for r, _ in chunks] == sorted(r.start for r, _ in chunks)
    assert not multiprocessing.active_children()


@pytest.mark.usefixtures("forced")
def test_this_process_s_chunks_are_given_while_the_worker_works() -> None:
    """share_out_iter gives each chunk of this process as soon as it is done: what the caller
    does with it overlaps the worker's work (the read keeps a List's items meanwhile)."""

    def slow(r: range) -> list[tuple[int, int]]:
        time.sleep(0.002 if os.getpid() == PARENT else 0.01)
        return _pids(r)

    given: list[tuple[range, bool]] = []
    for r, result in split.share_out_iter(400, slow, _encode, _decode):
        given.append((r, bool(multiprocessing.active_children())))
        assert [i for i, _ in result] == list(r)
    assert [i for r, _ in given for i in r] == list(range(400))
    # the first chunk was given while the worker was still at work
    assert given[0][1] is True
    assert not multiprocessing.active_children()


@pytest.mark.parametrize("worker", ["1", "0"])
def test_prepare_runs_once_before_the_fork_and_only_when_forking(
    monkeypatch: pytest.MonkeyPatch, worker: str
) -> None:
    """What ``prepare`` builds exists in the worker from the fork on (it reads it, never
    builds it); without a worker it is not run at all (the caches it fills are lazy)."""
    monkeypatch.setenv(split.WORKER_ENV, worker)
    built: list[int] = []

    def seen(r: range) -> list[tuple[int, int]]:
        time.sleep(0.002)
        return [(len(built), os.getpid()) for _ in r]  # 1 in either process once prepared

    chunks = split.share_out(400, seen, _encode, _decode, prepare=lambda: built.append(os.getpid()))
    pairs = _flatten(chunks)
    assert len(pairs) == 400
    if worker == "1":
        assert built == [PARENT]
        assert {n for n, _ in pairs} == {1}
        assert len({pid for _, pid in pairs}) == 2  # the worker, too, saw it prepared
    else:
        assert built == []
        assert {n for n, _ in pairs} == {0}
        assert [r for r, _ in chunks] == [range(400)]


@pytest.mark.usefixtures("forced")
def test_closing_the_iterator_early_kills_the_worker() -> None:
    chunks = split.share_out_iter(400, _pids, _encode, _decode)
    first, _ = next(chunks)
    assert first.start == 0
    chunks.close()
    assert not multiprocessing.active_children()


def test_without_a_worker_one_chunk(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(split.WORKER_ENV, "0")
    chunks = split.share_out(50, _pids, _encode, _decode)
    assert [r for r, _ in chunks] == [range(50)]
    assert {pid for _, pid in _flatten(chunks)} == {PARENT}
    assert split.aside([lambda: b"x"], 50) is None


@pytest.mark.usefixtures("forced")
def test_a_worker_that_dies_mid_way_loses_no_item(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    started = tmp_path / "worker-started"

    def dies(r: range) -> list[tuple[int, int]]:
        if os.getpid() != PARENT:
            if r.start < 300:
                os._exit(3)  # the worker dies on its second chunk or so, holding claimed items
            started.touch()
        elif r.start == 0:
            # this process's first chunk waits for the worker's first one, so the worker has
            # delivered something before this process could claim every item (on a loaded
            # machine the worker may start after this process has claimed them all)
            deadline = time.monotonic() + 10
            while not started.exists() and time.monotonic() < deadline:
                time.sleep(0.01)
        return _pids(r)

    with caplog.at_level(logging.WARNING, logger="auditor.split"):
        chunks = split.share_out(400, dies, _encode, _decode)
    pairs = _flatten(chunks)
    assert [i for i, _ in pairs] == list(range(400))
    assert any(pid != PARENT for _, pid in pairs)  # what it delivered before dying is kept
    assert "stopped early" in caplog.text
    assert not multiprocessing.active_children()


@pytest.mark.usefixtures("forced")
def test_a_silent_worker_is_killed_and_its_items_done_here(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(split, "SILENCE_S", 0.5)

    def hangs(r: range) -> list[tuple[int, int]]:
        if os.getpid() != PARENT:
            time.sleep(60)
        return _pids(r)

    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="auditor.split"):
        chunks = split.share_out(100, hangs, _encode, _decode)
    assert time.monotonic() - started < 30
    assert _flatten(chunks) == [(i, PARENT) for i in range(100)]
    assert "stopped early" in caplog.text
    assert not multiprocessing.active_children()


@pytest.mark.usefixtures("forced")
def test_unreadable_worker_messages_are_redone_here(caplog: pytest.LogCaptureFixture) -> None:
    def refuse(raw: bytes) -> list[tuple[int, int]]:
        raise ValueError("garbage")

    with caplog.at_level(logging.WARNING, logger="auditor.split"):
        chunks = split.share_out(300, _pids, _encode, refuse)
    assert _flatten(chunks) == [(i, PARENT) for i in range(300)]
    assert "unreadable message" in caplog.text


@pytest.mark.usefixtures("forced")
def test_an_error_here_propagates_and_the_worker_is_reaped() -> None:
    def fails_here(r: range) -> list[tuple[int, int]]:
        if os.getpid() == PARENT and r.start >= 16:
            raise RuntimeError("boom")
        return _pids(r)

    with pytest.raises(RuntimeError, match="boom"):
        split.share_out(400, fails_here, _encode, _decode)
    assert not multiprocessing.active_children()


def _share_in_a_daemon(conn: multiprocessing.connection.Connection) -> None:
    chunks = split.share_out(40, _pids, _encode, _decode)
    conn.send((_flatten(chunks), split.aside([lambda: b"x"], 40)))


def test_a_daemonic_caller_checks_everything_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    """red team (helper-20): multiprocessing forbids a daemonic process children; an audit
    run in a Pool worker raised instead of checking every VM itself."""
    monkeypatch.setenv(split.WORKER_ENV, "1")
    ctx = multiprocessing.get_context("fork")
    ours, theirs = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_share_in_a_daemon, args=(theirs,), daemon=True)
    proc.start()
    theirs.close()  # its end: a child that dies gives EOF, never a hang
    assert ours.poll(60)
    pairs, aside = ours.recv()  # EOFError when it died
    proc.join()
    assert proc.exitcode == 0
    assert [i for i, _ in pairs] == list(range(40))
    assert {pid for _, pid in pairs} == {proc.pid}  # no worker of its own
    assert aside is None


@pytest.mark.usefixtures("forced")
def test_the_worker_does_not_run_the_callers_signal_handlers() -> None:
    """red team (helper-20): the worker inherited the service's SIGTERM handler (which stops
    the scheduler) and went on working. A SIGTERM now ends it; its items are done here."""
    seen: list[int] = []
    before = signal.signal(signal.SIGTERM, lambda *_: seen.append(os.getpid()))
    try:

        def terminated(r: range) -> list[tuple[int, int]]:
            if os.getpid() != PARENT:
                os.kill(os.getpid(), signal.SIGTERM)
            return _pids(r)

        chunks = split.share_out(200, terminated, _encode, _decode)
    finally:
        signal.signal(signal.SIGTERM, before)
    assert _flatten(chunks) == [(i, PARENT) for i in range(200)]
    assert seen == []
    assert not multiprocessing.active_children()


@pytest.mark.usefixtures("forced")
def test_aside_gives_what_the_child_computed_from_memory_at_the_fork() -> None:
    state = {"value": b"at the fork"}
    job = split.aside(
        [lambda: state["value"] + f" in {os.getpid()}".encode(), lambda: b"second"], 10
    )
    state["value"] = b"changed after"  # the child's memory is as it was at the fork
    assert job is not None
    value = job.result()
    assert value is not None and value.startswith(b"at the fork in ")
    assert int(value.split()[-1]) != PARENT
    assert job.result() == b"second"  # the values come in the order of the functions
    assert not multiprocessing.active_children()  # reaped with the last value
    with pytest.raises(RuntimeError, match="every value was taken"):
        job.result()


@pytest.mark.usefixtures("forced")
def test_after_an_aside_function_fails_every_later_value_is_none() -> None:
    """The caller makes what the child did not send; nothing after a failure is trusted."""

    def fails() -> bytes:
        raise RuntimeError("boom")

    job = split.aside([lambda: b"first", fails, lambda: b"third"], 10)
    assert job is not None
    assert [job.result(timeout=30), job.result(timeout=30), job.result(timeout=30)] == [
        b"first",
        None,
        None,
    ]
    assert not multiprocessing.active_children()


@pytest.mark.parametrize("how", ["raises", "dies", "hangs"])
@pytest.mark.usefixtures("forced")
def test_an_aside_that_fails_gives_none_and_is_reaped(
    how: str, caplog: pytest.LogCaptureFixture
) -> None:
    def fn() -> bytes:
        if how == "raises":
            raise RuntimeError("boom")
        if how == "dies":
            os._exit(3)
        time.sleep(60)
        return b"late"

    job = split.aside([fn], 10)
    assert job is not None
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="auditor.split"):
        assert job.result(timeout=0.5) is None
    assert time.monotonic() - started < 30
    assert "gave no answer" in caplog.text
    assert not multiprocessing.active_children()


# -- the audit ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def estate(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("estate")
    generate(out, 60, seed=7)
    return out


def _artifacts(
    export: Path, out: Path, monkeypatch: pytest.MonkeyPatch, worker: str, **kw: str
) -> dict[str, bytes]:
    monkeypatch.setenv(split.WORKER_ENV, worker)
    report = audit_data(DirectorySource(export).collect(), AuditSettings(), at=AUDIT_AT, **kw)
    paths = write_artifacts(report, out, ["json", "csv", "html"])
    return {p.name: p.read_bytes() for p in paths}


@pytest.mark.parametrize("owner", [None, "team-web"])
def test_the_report_is_the_same_with_and_without_the_worker(
    estate: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, owner: str | None
) -> None:
    kw = {"owner": owner} if owner else {}
    alone = _artifacts(estate, tmp_path / "alone", monkeypatch, "0", **kw)
    shared = _artifacts(estate, tmp_path / "shared", monkeypatch, "1", **kw)
    assert set(alone) >= {"report.json", "findings.csv", "vms.csv", "report.html"}
    for name, data in alone.items():
        assert shared[name] == data, name
    assert b'"name": "' in alone["report.json"] and len(alone["report.json"]) > 100_000


def test_a_refused_worker_gives_the_same_report(
    estate: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    alone = _artifacts(estate, tmp_path / "alone", monkeypatch, "0")

    def refuse(raw: bytes, vms: range, owner: str | None) -> pipeline._Share:
        raise ValueError("refused")

    monkeypatch.setattr(pipeline, "_decode_share", refuse)
    refused = _artifacts(estate, tmp_path / "refused", monkeypatch, "1")
    assert refused["report.json"] == alone["report.json"]


@pytest.mark.parametrize("owner", [None, "team-web"])
@pytest.mark.parametrize("flaw", ["entry", "fact"])
def test_a_worker_share_that_leaves_out_a_vm_is_done_here(
    estate: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flaw: str, owner: str | None
) -> None:
    """red team (helper-22): a share that leaves one VM out was taken as it came, and the
    report held 29 of 30 VMs with nothing named. A share that does not account for every VM
    of its range is redone here."""
    kw = {"owner": owner} if owner else {}
    alone = _artifacts(estate, tmp_path / "alone", monkeypatch, "0", **kw)
    real = pipeline._encode_share

    def lossy(share: pipeline._Share) -> bytes:
        if flaw == "entry" and share.entries:
            share.entries = share.entries[1:]
        elif flaw == "fact":
            share.facts = share.facts[1:]
        return real(share)

    monkeypatch.setattr(pipeline, "_encode_share", lossy)
    refused = []
    real_decode = pipeline._decode_share

    def decode(raw: bytes, vms: range, owner: str | None) -> pipeline._Share:
        try:
            return real_decode(raw, vms, owner)
        except ValueError:
            refused.append(vms)
            raise

    monkeypatch.setattr(pipeline, "_decode_share", decode)
    lossy_run = _artifacts(estate, tmp_path / "lossy", monkeypatch, "1", **kw)
    assert refused  # the worker's shares were refused, and redone here
    for name, data in alone.items():
        assert lossy_run[name] == data, name


@pytest.mark.parametrize(
    ("part", "answer"),
    [
        (0, b""),
        (0, "dies"),
        (1, b"not a pickle"),
        (1, "dies"),
        (1, "wrong"),
        (2, b"sha256:not-a-digest"),
        (2, "dies"),
    ],
)
def test_a_side_child_that_fails_or_sends_nonsense_changes_nothing(
    estate: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, part: int, answer: bytes | str
) -> None:
    """Each VM's malformed fields, each Backup label's content summary and the input digest
    are made in a child forked before the index is built (pipeline._SideWork); whatever it
    sends for any of them that is not that, it is made here and the report is the same."""
    alone = _artifacts(estate, tmp_path / "alone", monkeypatch, "0")
    real = split.aside

    def odd_aside(fns: list[Callable[[], bytes]], items: int) -> split.Aside | None:
        odd = list(fns)
        if answer == "dies":
            odd[part] = lambda: os._exit(5)  # type: ignore[assignment,return-value]
        elif answer == "wrong":  # a summary of another label's count: not taken
            odd[part] = lambda: pickle.dumps(
                {k: (n + 1, s) for k, (n, s) in pickle.loads(fns[part]()).items()}
            )
        else:
            odd[part] = lambda: answer  # type: ignore[assignment,return-value]
        return real(odd, items)

    monkeypatch.setattr(pipeline, "aside", odd_aside)
    odd = _artifacts(estate, tmp_path / "odd", monkeypatch, "1")
    assert odd["report.json"] == alone["report.json"]
    assert b'"input_digest": "sha256:' in alone["report.json"]


def test_the_side_child_s_parts_are_used_and_agree_with_what_is_made_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the child's parts taken (no summary is made here), the report is the one made in
    one process, on an estate with malformed VMs (their problems are the child's
    validate_vm) and a Backup whose name is longer than a label value (its contents are
    labelled with Velero's cut form of it)."""

    def hook(vm: dict[str, Any]) -> None:
        name = vm["metadata"]["name"]
        devices = vm["spec"]["template"]["spec"]["domain"]["devices"]
        if name.endswith("3"):
            devices["disks"][0]["bootOrder"] = 0
        elif name.endswith("7"):
            devices.setdefault("interfaces", [{"name": "default"}])[0]["macAddress"] = "zz:zz"

    export = tmp_path / "export"
    generate(export, 60, seed=7, vm_hook=hook)
    _lengthen_a_backup_name(export)
    made_here: list[int] = []
    real = capture.summarise_contents

    def counted(contents: list[dict[str, Any]]) -> capture.ContentSummary:
        if os.getpid() == PARENT:
            made_here.append(len(contents))
        return real(contents)

    monkeypatch.setattr(capture, "summarise_contents", counted)
    alone = _artifacts(export, tmp_path / "alone", monkeypatch, "0")
    assert made_here  # one process: every summary made here
    made_here.clear()
    shared = _artifacts(export, tmp_path / "shared", monkeypatch, "1")
    assert made_here == []  # every summary was the child's, the long-named Backup's too
    assert shared == alone
    assert b"bootOrder" in alone["report.json"] and b"macAddress" in alone["report.json"]


def _lengthen_a_backup_name(export: Path) -> None:
    """Rename the first Backup that labels VolumeSnapshotContents to a name longer than a
    label value, and label its contents with Velero's cut form of it."""
    backups = yaml.safe_load((export / "backups.yaml").read_text())
    contents = yaml.safe_load((export / "volumesnapshotcontents.yaml").read_text())
    labelled = {
        c["metadata"].get("labels", {}).get("velero.io/backup-name") for c in contents["items"]
    }
    backup = next(b for b in backups["items"] if b["metadata"]["name"] in labelled)
    old, new = backup["metadata"]["name"], backup["metadata"]["name"] + "-" + "x" * 60
    backup["metadata"]["name"] = new
    for c in contents["items"]:
        if c["metadata"].get("labels", {}).get("velero.io/backup-name") == old:
            c["metadata"]["labels"]["velero.io/backup-name"] = velero_label(new)
    (export / "backups.yaml").write_text(yaml.safe_dump(backups))
    (export / "volumesnapshotcontents.yaml").write_text(yaml.safe_dump(contents))


def test_the_in_process_engine_path_agrees_with_the_pipeline(
    estate: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """engine.evaluate + build_envelope (one process, every VMRecord kept) and audit_data
    with a worker (platform checks fed from PlatformFacts sent back) give the same bytes."""
    data = DirectorySource(estate).collect()
    settings = AuditSettings()
    whole = build_envelope(data, evaluate(data, settings, at=AUDIT_AT), settings, at=AUDIT_AT)
    monkeypatch.setenv(split.WORKER_ENV, "1")
    shared = audit_data(DirectorySource(estate).collect(), settings, at=AUDIT_AT)
    assert dump_report_json(shared) == dump_report_json(whole)
    assert {f.check_id for f in shared.platform_findings} >= {"RR-PLT-001", "RR-PLT-002"}


@pytest.mark.parametrize(("worker", "owner"), [("1", None), ("1", "team-web"), ("0", None)])
def test_the_report_document_made_while_checking_is_the_report_s_json_form(
    estate: Path, monkeypatch: pytest.MonkeyPatch, worker: str, owner: str | None
) -> None:
    """Each VM entry's report.json form is made as its VMs are checked, in this process for
    the worker's VMs too; the document is the one model_dump gives, key order included."""
    monkeypatch.setenv(split.WORKER_ENV, worker)
    made = []
    real = pipeline._documents

    def documents(entries: list[VmEntry]) -> list[dict[str, object]]:
        made.append((os.getpid(), len(entries)))
        return real(entries)

    monkeypatch.setattr(pipeline, "_documents", documents)
    kw = {"owner": owner} if owner else {}
    report = audit_data(DirectorySource(estate).collect(), AuditSettings(), at=AUDIT_AT, **kw)
    doc = report_document(report)
    assert {pid for pid, _ in made} == {os.getpid()}
    assert sum(n for _, n in made) == len(report.vms) > 0
    expected = report.model_dump(mode="json")
    assert doc == expected
    assert list(doc) == list(expected)
    assert [list(v) for v in doc["vms"]] == [list(v) for v in expected["vms"]]


def test_a_report_document_needs_one_form_per_vm(estate: Path) -> None:
    report = audit_data(DirectorySource(estate).collect(), AuditSettings(), at=AUDIT_AT)
    with pytest.raises(ValueError, match="VM documents for"):
        seed_report_document(report, [])


def test_entries_come_back_from_the_worker_with_their_python_values(estate: Path) -> None:
    """red team (helper-20): entries sent as JSON came back with tuples as lists (and NaN as
    None, bytes as text), so the CSV and HTML of the worker's VMs could differ from this
    process's. The share's encoding keeps every value as it was."""
    from auditor.engine import Evaluation
    from auditor.yamlstrict import paused_gc

    data = DirectorySource(estate).collect()
    settings = AuditSettings()
    with paused_gc():
        ev = Evaluation(data, settings, at=AUDIT_AT)
        share = pipeline._check_share(ev, settings, None, range(len(ev)), os.getpid())
    first = share.entries[0]
    finding = first.findings[0].model_copy(
        update={"evidence": {"pair": ("a", "b"), "nested": [("x", 1)], "n": 1.5}}
    )
    share.entries[0] = first.model_copy(update={"findings": [finding, *first.findings[1:]]})
    back = pipeline._decode_share(pipeline._encode_share(share), range(len(ev)), None)
    assert back.entries == share.entries
    assert back.entries[0].findings[0].evidence == {
        "pair": ("a", "b"),
        "nested": [("x", 1)],
        "n": 1.5,
    }
    assert type(back.entries[0].findings[0].evidence["pair"]) is tuple
    assert (back.problems, back.facts, back.owners) == (share.problems, share.facts, share.owners)


def test_an_unknown_owner_is_refused_with_the_worker_too(
    estate: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    known = {}
    for worker in ("0", "1"):
        monkeypatch.setenv(split.WORKER_ENV, worker)
        with pytest.raises(UnknownOwnerError) as err:
            audit_data(DirectorySource(estate).collect(), AuditSettings(), at=AUDIT_AT, owner="x")
        known[worker] = err.value.known
    # every VM counted once, under its namespace's team (the generator's owner label)
    vms = yaml.safe_load((estate / "virtualmachines.yaml").read_text())["items"]
    spaces = yaml.safe_load((estate / "namespaces.yaml").read_text())["items"]
    team = {n["metadata"]["name"]: n["metadata"]["labels"]["owner"] for n in spaces}
    expected = Counter(team[vm["metadata"]["namespace"]] for vm in vms)
    assert known["1"] == known["0"] == dict(expected)
    assert sum(known["1"].values()) == len(vms) > 0


def test_a_frame_is_received_whole_however_it_is_sent_and_short_only_at_the_end() -> None:
    """``receive_exact`` waits for every byte of a frame sent in several writes, and gives what
    came when the helper's end closes."""
    import socket
    import threading
    import time

    ours, theirs = socket.socketpair()

    def send() -> None:
        for part in (b"abc", b"defg", b"hij"):
            theirs.sendall(part)
            time.sleep(0.05)
        theirs.sendall(b"rest")
        theirs.close()

    sender = threading.Thread(target=send)
    sender.start()
    try:
        assert split.receive_exact(ours, 10) == b"abcdefghij"
        assert split.receive_exact(ours, 8) == b"rest"  # the end came first
        assert split.receive_exact(ours, 8) == b""
    finally:
        sender.join()
        ours.close()


@pytest.mark.skipif(not Path("/proc/meminfo").exists(), reason="reads Linux's /proc/meminfo")
def test_no_worker_without_room_for_what_this_process_keeps(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The worker is forked only when the memory free holds this process's resident size
    plus what it keeps per VM meanwhile (``KEPT_PER_VM``): a 50,000-VM audit forked its
    worker with room for the copies only, and was killed for memory."""
    with open("/proc/meminfo", encoding="ascii") as meminfo:
        free = next(int(line.split()[1]) * 1024 for line in meminfo if "MemAvailable:" in line)
    assert split._room_to_copy() is True  # this test process is small
    assert split._room_to_copy(2 * free) is False
    monkeypatch.delenv(split.WORKER_ENV, raising=False)
    monkeypatch.setattr(split, "spare_cpu", lambda: True)
    assert split.wanted(split.WORKER_MIN_ITEMS) is True
    too_many = 2 * free // split.KEPT_PER_VM
    assert split.wanted(too_many) is False
    monkeypatch.setenv(split.WORKER_ENV, "1")  # the tests' switch still forces it
    assert split.wanted(too_many) is True
