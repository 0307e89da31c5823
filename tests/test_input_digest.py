"""The input digest (and so the run id) covers what a run read and what it could not read."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

from auditor.envelope.digest import input_digest
from auditor.models import CollectionProblem
from auditor.sources.base import BackupContents, KindState, StorageLocationStatus
from auditor.sources.directory import DirectorySource
from tests.conftest import REPO

EXAMPLE = REPO / "examples" / "small-cluster"


def test_the_digest_covers_what_could_not_be_read(tmp_path: Path) -> None:
    """ux19: the same objects with a malformed file beside them, one list partial, or one
    more collection problem give another digest; the same export copied elsewhere and the
    same export read twice keep theirs."""
    shutil.copytree(EXAMPLE, tmp_path / "a")
    (tmp_path / "a" / "extra.yaml").write_text("kind: List\nitems: [\n  - {bad\n")
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    a = DirectorySource(tmp_path / "a").collect()
    assert [p.file for p in a.problems] == ["extra.yaml"]
    assert input_digest(a) == input_digest(DirectorySource(tmp_path / "b").collect())
    whole = DirectorySource(EXAMPLE).collect()
    assert whole.objects == a.objects
    assert input_digest(whole) != input_digest(a)
    digest = input_digest(whole)
    assert digest == input_digest(DirectorySource(EXAMPLE).collect())
    whole.states["Backup"] = KindState.PARTIAL
    assert input_digest(whole) != digest
    whole.states["Backup"] = KindState.COMPLETE
    assert input_digest(whole) == digest
    whole.problems.append(CollectionProblem(reason="Backup apps/x: forbidden", kind="Backup"))
    assert input_digest(whole) != digest


def test_the_digest_covers_what_the_buckets_gave_but_not_request_counts() -> None:
    """A Backup whose bucket objects are gone is no restore point: a run that found them
    missing is another run than one that read them; cached and fresh reads are the same."""
    data = DirectorySource(EXAMPLE).collect()
    unread = input_digest(data)
    status = StorageLocationStatus("default", "b", "p", None, "read", requests=4)
    data.storage_locations = {"default": status}
    data.backup_contents = {"n": BackupContents("n", "default", "read")}
    read = input_digest(data)
    assert read != unread
    data.storage_locations = {"default": replace(status, requests=9, cached=1)}
    assert input_digest(data) == read
    data.backup_contents = {"n": BackupContents("n", "default", "missing")}
    assert input_digest(data) not in (read, unread)
