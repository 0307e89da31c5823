"""The input digest (and so the run id) covers what a run read and what it could not read."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

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


def test_the_run_key_covers_source_version_and_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same objects read from another copy of the export, or audited with another RPO or
    owner filter, make another report: another run id; the same of each, the same id."""
    from auditor.config import AuditSettings
    from auditor.envelope import digest as digest_module
    from auditor.envelope.digest import run_key

    shutil.copytree(EXAMPLE, tmp_path / "copy")
    here, there = DirectorySource(EXAMPLE).collect(), DirectorySource(tmp_path / "copy").collect()
    digest = input_digest(here)
    assert digest == input_digest(there)
    base = AuditSettings()
    key = run_key(here, digest, base, None)
    assert key == run_key(DirectorySource(EXAMPLE).collect(), digest, AuditSettings(), None)
    others = {
        run_key(there, digest, base, None),
        run_key(here, digest, base, "team-billing"),
        run_key(here, digest, AuditSettings.model_validate({"thresholds": {"rpo_hours": 4}}), None),
        run_key(here, "sha256:" + "0" * 64, base, None),
    }
    assert len(others) == 4 and key not in others
    monkeypatch.setattr(digest_module, "__version__", "9.9.9")  # another tool version
    assert run_key(here, digest, base, None) not in (key, *others)
