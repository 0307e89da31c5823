"""What ``auditor run`` leaves behind: a folder sealed for this run alone, and the right exit.

A run written into a folder that holds an earlier run is sealed alone.

New-user trial (helper-47): ``--out`` defaults to ``out`` and the bundled CronJob always
writes to one folder, so a second run found the first run's HTML, CSVs and recovery cards
(a card of a VM deleted since among them) and sealed them into its own manifest:
``auditor verify`` and ``publish`` then vouched for a READY HTML beside a NOT_READY
report.json. The earlier run's artifacts (those its manifest lists) are now removed first.
A folder holding files no run wrote there is refused before the audit (trial ux27: they were
sealed and published as the run's evidence).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from auditor.publish.errors import RunDirError
from auditor.publish.manifest import MANIFEST_NAME, clear_sealed_run
from tests.conftest import invoke_run

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "small-cluster"


def _listed(run: Path) -> set[str]:
    return {a["path"] for a in json.loads((run / MANIFEST_NAME).read_text())["artifacts"]}


def test_a_second_run_into_the_same_folder_seals_only_its_own_artifacts(tmp_path: Path) -> None:
    export = tmp_path / "export"
    shutil.copytree(EXAMPLE, export)
    out = tmp_path / "out"
    first = invoke_run(export, out, "--format", "json,csv,cards")
    assert first.exit_code == 0, first.output
    cards = sorted(p.relative_to(out).as_posix() for p in (out / "recovery-cards").rglob("*.json"))
    assert any("lab-ephemeral" in c for c in cards)
    (out / "notes.txt").write_text("the operator's own file")
    sealed = (out / MANIFEST_NAME).read_bytes()

    # a day later, a run into the same folder: the operator's file would be sealed as the
    # run's evidence, so the run is refused before the audit and nothing is changed (ux27)
    refused = invoke_run(export, out, "--at", "2026-12-01T06:00:00Z")
    assert refused.exit_code == 2
    assert "holds 1 file(s) no earlier audit run wrote there (notes.txt)" in refused.output
    assert (out / MANIFEST_NAME).read_bytes() == sealed and (out / "recovery-cards").is_dir()
    (out / "notes.txt").unlink()

    # a run of report.json only into the same folder
    second = invoke_run(export, out, "--at", "2026-12-01T06:00:00Z")
    assert second.exit_code == first.exit_code, second.output

    left = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert not any(p.startswith("recovery-cards/") for p in left)
    assert not any(p.endswith(".csv") for p in left)
    assert _listed(out) == {"report.json", "report.schema.json"}
    assert not (out / "recovery-cards").exists()


def test_clearing_removes_only_listed_regular_files_inside_the_folder(tmp_path: Path) -> None:
    run = tmp_path / "run"
    (run / "sub").mkdir(parents=True)
    (run / "sub" / "a.json").write_text("{}")
    (run / "keep.txt").write_text("x")
    outside = tmp_path / "outside.txt"
    outside.write_text("x")
    (run / "link.json").symlink_to(outside)
    artifacts = [{"path": p} for p in ("sub/a.json", "link.json", "../outside.txt", "gone.json")]
    (run / MANIFEST_NAME).write_text(json.dumps({"artifacts": artifacts}))
    assert clear_sealed_run(run) == ["sub/a.json", MANIFEST_NAME]
    assert not (run / "sub").exists()
    assert (run / "keep.txt").exists() and (run / "link.json").is_symlink() and outside.exists()


def test_a_folder_whose_manifest_is_unreadable_is_refused_by_name(tmp_path: Path) -> None:
    (tmp_path / MANIFEST_NAME).write_text("not json")
    with pytest.raises(RunDirError, match="manifest.json: not a run manifest"):
        clear_sealed_run(tmp_path)
    assert clear_sealed_run(tmp_path / "nothing-here") == []


def test_a_partly_read_vm_list_exits_4_even_when_publishing_fails(tmp_path: Path) -> None:
    """docs/exit-codes.md: a partly read VM list is 4 whatever else. New-user trial: with a
    publish that could not be delivered the run exited 3 (spooled) and hid the gap."""
    export = tmp_path / "export"
    shutil.copytree(EXAMPLE, export)
    (export / "nameless-vm.yaml").write_text(
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  namespace: web\n"
        "spec:\n  runStrategy: Halted\n"
    )
    blocker = tmp_path / "archive"
    blocker.write_text("a file where the archive directory should be")
    spool = ["--spool-dir", str(tmp_path / "spool")]
    result = invoke_run(export, tmp_path / "out", "--publish", str(blocker), *spool)
    assert result.exit_code == 4, result.output
    assert "publish: not delivered" in result.output
    assert "the VirtualMachine list" in result.output and "incomplete" in result.output
    # without the gap, the same failed publish is 3 (spooled)
    (export / "nameless-vm.yaml").unlink()
    again = invoke_run(export, tmp_path / "out2", "--publish", str(blocker), *spool)
    assert again.exit_code == 3, again.output


@pytest.mark.parametrize("inside", ["", "reports"])
def test_an_out_folder_in_the_export_read_is_refused_before_the_audit(
    tmp_path: Path, inside: str
) -> None:
    """``--out`` equal to ``--from-dir`` (or a folder in it) was accepted: manifest.json
    sealed the 24 input files, and the next audit of the export read report.json,
    report.schema.json and manifest.json as input and was INCOMPLETE (trial nu25). It is
    now exit 2 naming both, and nothing is written."""
    export = tmp_path / "export"
    shutil.copytree(EXAMPLE, export)
    before = sorted(p.name for p in export.rglob("*"))
    res = invoke_run(export, export / inside if inside else export)
    assert res.exit_code == 2
    assert "is inside the export read" in res.output and "--out" in res.output
    assert sorted(p.name for p in export.rglob("*")) == before
    # a folder beside the export is fine
    assert invoke_run(export, tmp_path / "out").exit_code == 0


def test_an_out_that_is_a_file_is_named_as_such(tmp_path: Path) -> None:
    """``--out`` naming a file said "File exists" (trial nu25)."""
    out = tmp_path / "report.txt"
    out.write_text("not a folder")
    res = invoke_run(EXAMPLE, out)
    assert res.exit_code == 2 and "is a file, not a directory" in res.output


@pytest.mark.parametrize("foreign", ["notes.txt", "run1/report.json", "link.json"])
def test_an_out_folder_with_files_no_run_wrote_is_refused_before_the_audit(
    tmp_path: Path, foreign: str
) -> None:
    """ux27: `run --out DIR` sealed whatever DIR already held (an operator's notes, an earlier
    run kept in a subfolder, a symlink) into manifest.json, and `--publish` archived it as
    this run's evidence. It is now exit 2 naming the files, and nothing is written."""
    out = tmp_path / "out"
    (out / foreign).parent.mkdir(parents=True, exist_ok=True)
    if foreign == "link.json":
        (tmp_path / "elsewhere.json").write_text("{}")
        (out / foreign).symlink_to(tmp_path / "elsewhere.json")
    else:
        (out / foreign).write_text("{}")
    res = invoke_run(EXAMPLE, out, "--publish", str(tmp_path / "archive"))
    assert res.exit_code == 2, res.output
    assert f"holds 1 file(s) no earlier audit run wrote there ({foreign})" in res.output
    assert "--out" in res.output
    assert not (out / MANIFEST_NAME).exists() and not (tmp_path / "archive").exists()
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == [foreign]
