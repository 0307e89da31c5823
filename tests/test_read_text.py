"""The export reader's file text (:func:`auditor.yamlstrict.read_text`) is what Python's text-mode
read gives, whole, though it is read and decoded a block at a time: the same text (universal
newlines included) and, for a file that is not UTF-8, the same error at the same byte."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from auditor import yamlstrict
from auditor.yamlstrict import LoadError, read_text

# Pieces that cut characters at block ends: multi-byte characters, line breaks, and bytes
# that are no UTF-8 (a stray continuation byte, a start byte with its tail missing).
_PIECES = [b"a", b"\r", b"\n", b"\r\n", "é".encode(), "€".encode(), "𝄞".encode()]
_BAD = [b"\xff", b"\xc3", b"\xe2\x82", b"\x80"]


def _whole(path: Path) -> tuple[object, ...]:
    try:
        return ("text", path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        return ("error", exc.start, exc.end, exc.reason)


def _blockwise(path: Path) -> tuple[object, ...]:
    try:
        return ("text", yamlstrict._decoded(path))
    except UnicodeDecodeError as exc:
        return ("error", exc.start, exc.end, exc.reason)


@settings(max_examples=400, deadline=None)
@given(
    pieces=st.lists(st.sampled_from(_PIECES + _BAD), max_size=40),
    block=st.integers(min_value=1, max_value=9),
)
def test_blockwise_decoding_is_the_whole_file_decoding(
    tmp_path_factory: pytest.TempPathFactory, pieces: list[bytes], block: int
) -> None:
    path = tmp_path_factory.mktemp("read") / "f.yaml"
    path.write_bytes(b"".join(pieces))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(yamlstrict, "_READ_BLOCK", block)
        assert _blockwise(path) == _whole(path)


def test_a_character_cut_by_a_block_end_and_crlf_read_as_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(yamlstrict, "_READ_BLOCK", 3)
    path = tmp_path / "vms.yaml"
    path.write_bytes("kind: Liste\r\nname: vm-€\r".encode())
    assert read_text(path) == "kind: Liste\nname: vm-€\n"


def test_the_first_bad_byte_is_named_by_its_offset_in_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(yamlstrict, "_READ_BLOCK", 4)
    path = tmp_path / "pvcs.yaml"
    path.write_bytes(b"name: ok\nuid: \xff\n")  # the bad byte at offset 14, in the 4th block
    with pytest.raises(LoadError, match=r"^file is not UTF-8 text \(byte 14\)$"):
        read_text(path)


def test_an_empty_file_is_empty_text(tmp_path: Path) -> None:
    path = tmp_path / "empty.yaml"
    path.write_bytes(b"")
    assert read_text(path) == ""
