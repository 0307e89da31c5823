"""Fuzz: mutated and hostile files through DirectorySource, then the pipeline.

A file that cannot be read is a collection problem naming it; nothing raises,
hangs or expands without bound; objects of a broken file's kind are never
trusted as a complete list.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from auditor.config import AuditSettings
from auditor.pipeline import audit_data
from auditor.sources.base import KindState
from auditor.sources.directory import DirectorySource
from tests.conftest import AUDIT_AT, report_doc
from tests.fuzz_strategies import FUZZ
from tests.scale_support import GOOD_FIXTURE, GOOD_VM, statuses, strict_json, time_limit

GOOD_TEXT = GOOD_FIXTURE.read_text()
SNIPPETS = [
    "\t",
    ":",
    ": ",
    "- ",
    "---\n",
    "...\n",
    "&a ",
    "*a",
    "*undefined",
    "!!python/object:os.system ",
    "!!binary ",
    "%YAML 1.1\n",
    "{",
    "}",
    "[",
    "]",
    "'",
    '"',
    "\\",
    "#",
    "? ",
    "|",
    ">",
    "\u202e",
    "\x00",
    "\ufeff",
    "\U0001f4a3",
    "é",
    "\r",
    "<<: *a\n",
    "!Ref ",
    "0x1F",
    "~",
]


def _collect_and_audit(root: Path) -> dict[str, Any]:
    with time_limit(30):
        data = DirectorySource(root).collect()
        report = report_doc(audit_data(data, AuditSettings(), at=AUDIT_AT))
    strict_json(report)
    return report


@FUZZ
@given(st.data())
def test_mutated_yaml_text_never_crashes(data: st.DataObject) -> None:
    text = GOOD_TEXT
    for _ in range(data.draw(st.integers(1, 4), label="edits")):
        pos = data.draw(st.integers(0, len(text)), label="pos")
        edit = data.draw(st.sampled_from(["insert", "delete", "duplicate"]), label="edit")
        if edit == "insert":
            text = text[:pos] + data.draw(st.sampled_from(SNIPPETS), label="snippet") + text[pos:]
        elif edit == "delete":
            text = text[:pos] + text[pos + data.draw(st.integers(1, 200), label="n") :]
        else:
            end = text.find("\n", pos)
            line = text[text.rfind("\n", 0, pos) + 1 : end + 1 if end >= 0 else len(text)]
            text = text[:pos] + line + text[pos:]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "cluster.yaml").write_text(text, encoding="utf-8", errors="surrogatepass")
        report = _collect_and_audit(root)
    problems = [p for p in report["collection_problems"] if p["file"] == "cluster.yaml"]
    if problems:
        assert report["run"]["complete"] is False
        assert all("cluster.yaml" in p["reason"] for p in problems)


@FUZZ
@given(st.binary(max_size=400))
def test_random_bytes_file_is_a_named_problem_or_nothing(blob: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "backups.yaml").write_bytes(blob)
        report = _collect_and_audit(root)
    for p in report["collection_problems"]:
        assert p["file"] == "backups.yaml"
    assert report["vms"] == []


def _billion_laughs(levels: int = 12, width: int = 10) -> str:
    lines = ['a0: &a0 "lol"']
    for i in range(1, levels):
        refs = ", ".join(f"*a{i - 1}" for _ in range(width))
        lines.append(f"a{i}: &a{i} [{refs}]")
    return (
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\n"
        "metadata: {name: bomb, namespace: app}\nspec:\n" + "".join(f"  {line}\n" for line in lines)
    )


HOSTILE_FILES = {
    "billion-laughs": ("virtualmachines.yaml", _billion_laughs(), "alias bomb"),
    "recursive-alias": (
        "virtualmachines.yaml",
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: r, namespace: app}\n"
        "spec: {template: {spec: {volumes: &v [*v]}}}\n",
        "recursive alias",
    ),
    # libyaml stops flow nesting itself (at 1000 levels); either message names the cause
    "deep-nesting": ("backups.yaml", "a: " + "[" * 5000 + "]" * 5000 + "\n", "nesting depth"),
    "deep-mapping": (
        "backups.yaml",
        "apiVersion: velero.io/v1\nkind: Backup\nmetadata: {name: b, namespace: v}\nspec: "
        + "{a: " * 600
        + "1"
        + "}" * 600
        + "\n",
        "nests deeper",
    ),
    "duplicate-keys": (
        "backups.yaml",
        "apiVersion: velero.io/v1\nkind: Backup\nmetadata: {name: b, namespace: v}\n"
        "status: {phase: Failed}\nstatus: {phase: Completed}\n",
        "duplicate key",
    ),
    "python-tag": (
        "backups.yaml",
        "apiVersion: velero.io/v1\nkind: Backup\nmetadata: !!python/object/apply:os.system ['id']\n",
        "YAML error",
    ),
    "undefined-alias": ("backups.yaml", "a: *nothing\n", "YAML error"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_FILES))
def test_hostile_file_is_refused_quickly_with_a_named_reason(tmp_path: Path, case: str) -> None:
    name, text, needle = HOSTILE_FILES[case]
    (tmp_path / name).write_text(text)
    with time_limit(10):
        data = DirectorySource(tmp_path).collect()
    reasons = [p.reason for p in data.problems if p.file == name]
    assert reasons and needle in reasons[0], data.problems
    hinted = "VirtualMachine" if name.startswith("virtualmachines") else "Backup"
    assert data.state(hinted) is KindState.PARTIAL
    assert not data.known(hinted)


def test_file_above_the_size_limit_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    (tmp_path / "backups.yaml").write_text(GOOD_TEXT)
    (tmp_path / "small.yaml").write_text("apiVersion: v1\nkind: List\nitems: []\n")
    limit = 1000
    data = DirectorySource(tmp_path, max_file_bytes=limit).collect()
    [problem] = [p for p in data.problems if p.file == "backups.yaml"]
    size = len(GOOD_TEXT.encode())
    assert problem.reason == (
        f"file backups.yaml could not be read: file is {size} bytes, "
        f"above the {limit}-byte limit; refused"
    )
    assert data.state("Backup") is KindState.PARTIAL


@pytest.mark.parametrize("link", ["dangling", "loop"])
def test_a_yaml_symlink_that_leads_nowhere_is_named_not_skipped(tmp_path: Path, link: str) -> None:
    """New-user trial (helper-47): a dangling or looping ``*.yaml`` symlink was skipped in
    silence and the audit called complete; what it held may be the Backups. It is named, and
    every kind it might have held is partly read."""
    (tmp_path / "backups.yaml").write_text(GOOD_TEXT)
    if link == "dangling":
        (tmp_path / "x.yaml").symlink_to(tmp_path / "nonexistent.yaml")
    else:
        (tmp_path / "x.yaml").symlink_to(tmp_path / "y.yaml")
        (tmp_path / "y.yaml").symlink_to(tmp_path / "x.yaml")
    data = DirectorySource(tmp_path).collect()
    reasons = [p.reason for p in data.problems if p.file == "x.yaml"]
    assert reasons and reasons[0].startswith("file x.yaml could not be read: cannot read file")
    assert data.state("Backup") is KindState.PARTIAL


def _split_backups(tmp_path: Path) -> list[dict]:  # type: ignore[type-arg]
    docs = [d for d in yaml.safe_load_all(GOOD_TEXT) if d]
    (tmp_path / "rest.yaml").write_text(
        yaml.safe_dump_all([d for d in docs if d["kind"] != "Backup"])
    )
    return [d for d in docs if d["kind"] == "Backup"]


def test_unreadable_backups_file_gives_error_not_pass(tmp_path: Path) -> None:
    backups = _split_backups(tmp_path)
    (tmp_path / "backups.yaml").write_text("bad: [unclosed\n---\n" + yaml.safe_dump_all(backups))
    got = statuses(_collect_and_audit(tmp_path), GOOD_VM)
    assert {c: got[c] for c in ("RR-BKP-001", "RR-BKP-002")} == dict.fromkeys(
        ("RR-BKP-001", "RR-BKP-002"), "ERROR"
    )


def test_partly_read_backups_prove_coverage_but_never_absence(tmp_path: Path) -> None:
    # Documents before a syntax error are read: a usable backup among them is real evidence
    # (PASS is earned), but a stale one cannot prove there is no newer one (ERROR, not FAIL).
    backups = _split_backups(tmp_path)
    (tmp_path / "backups.yaml").write_text(yaml.safe_dump_all(backups) + "\n  bad: [unclosed\n")
    assert statuses(_collect_and_audit(tmp_path), GOOD_VM)["RR-BKP-002"] == "PASS"
    for b in backups:
        b["status"]["completionTimestamp"] = "2026-11-01T01:15:00Z"
        b["status"]["startTimestamp"] = "2026-11-01T01:00:00Z"
    (tmp_path / "backups.yaml").write_text(yaml.safe_dump_all(backups) + "\n  bad: [unclosed\n")
    assert statuses(_collect_and_audit(tmp_path), GOOD_VM)["RR-BKP-002"] == "ERROR"


def test_honest_large_document_is_not_mistaken_for_an_alias_bomb(tmp_path: Path) -> None:
    from auditor import yamlstrict

    n = 60_000  # 3 nodes per item plus the list: above a 100,000-node cap, no aliases
    items = "".join(f"- {{name: item-{i}, phase: Completed}}\n" for i in range(n))
    path = tmp_path / "big.yaml"
    path.write_text("items:\n" + items)
    old = yamlstrict.MAX_EXPANDED_NODES
    yamlstrict.MAX_EXPANDED_NODES = 100_000
    try:
        [doc] = list(yamlstrict.load_documents(path))
        assert len(doc["items"]) == n
        bomb = tmp_path / "bomb.yaml"
        bomb.write_text(_billion_laughs(levels=7, width=10))  # 10**6 leaves from ~1 KB
        with pytest.raises(yamlstrict.LoadError, match="alias bomb"):
            list(yamlstrict.load_documents(bomb))
    finally:
        yamlstrict.MAX_EXPANDED_NODES = old
