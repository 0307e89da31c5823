"""The input digest (and so the run id) covers what a run read and what it could not read."""

from __future__ import annotations

import shutil
from pathlib import Path

from auditor.envelope.digest import input_digest
from auditor.models import CollectionProblem
from auditor.sources.base import KindState
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
