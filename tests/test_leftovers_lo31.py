"""Leftovers of the morning's reviews (helper lo31): each a verdict that was wrong or unnamed.

1. A BackupStorageLocation with ``metadata.deletionTimestamp`` set still counted as Available:
   Velero sets no finalizer on it, so it goes once any other finalizer is released, and then
   restores of its Backups fail validation (velero ``pkg/controller/restore_controller.go``
   ``fetchBackupInfoInternal``). Rule: ``auditor/inventory/locations.py``.
2. ``run --at`` clearly after the input was taken (year 9999, or weeks after the export's newest
   timestamp) was accepted silently: now a warning and ``run.at_after_input``, verdicts
   unchanged. Rule: ``auditor/sources/freshness.py``.
3. ``--max-file-bytes 10`` said the VirtualMachine list could not be read because of
   persistentvolumeclaims.yaml (its ownerReferences have ``kind: VirtualMachine`` lines), not
   the refused virtualmachines.yaml. Rule: ``auditor.sources.usable.problems_for``.
4. Problems a config model finds across fields (a publishing schedule without ``json``, a
   bad ``publish.endpoint_url``, lock mode without days) were shown under ``<root>`` or
   ``publish``: now under the field to change. Rule: ``auditor/config/fields.py``.
5. ``run --publish`` with ``--object-lock-mode COMPLIANCE`` to a bucket without Object Lock
   (or one that does not exist) spooled the run (exit 3) to be retried for ever: a store
   configuration fault is exit 2 and not spooled (docs/exit-codes.md). A real S3 server.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import invoke_run
from tests.publish_support import WeedServer, weed_credentials
from tests.test_evidence_gaps import _complete, _docs, _finding, _of

BSL_FIXTURE = "RR-BKP-004/pass.yaml"


def _bsl_audit(tmp_path: Path, deleted: str | None) -> dict[str, Any]:
    docs = _docs(BSL_FIXTURE)
    (bsl,) = _of(docs, "BackupStorageLocation")
    if deleted is not None:
        bsl["metadata"]["deletionTimestamp"] = deleted
        bsl["metadata"]["finalizers"] = ["example.com/keep"]
    return _complete(tmp_path, BSL_FIXTURE, docs)


def test_a_location_being_deleted_is_no_evidence(tmp_path: Path) -> None:
    kept = _bsl_audit(tmp_path / "kept", None)
    vm = next(v for v in kept["vms"] if v["name"] == "vm1")
    assert vm["readiness"] == "READY"
    report = _bsl_audit(tmp_path / "deleted", "2026-11-30T05:00:00Z")
    vm = next(v for v in report["vms"] if v["name"] == "vm1")
    assert vm["readiness"] == "UNKNOWN"
    bkp004 = _finding(report, "RR-BKP-004")
    assert bkp004["status"] == "ERROR"
    assert "velero/default is being deleted" in bkp004["message"]
    assert "2026-11-30T05:00:00Z" in bkp004["message"]
    plt = next(f for f in report["platform_findings"] if f["check_id"] == "RR-PLT-001")
    assert plt["status"] == "ERROR" and "being deleted" in plt["message"]
    assert plt["evidence"]["stale_locations"] == ["velero/default"]


EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "small-cluster"


def _late_run(
    tmp_path: Path, at: str, written: float | None = None, *extra: str
) -> tuple[Any, dict[str, Any]]:
    export = tmp_path / "export"
    shutil.copytree(EXAMPLE, export)
    if written is not None:
        for f in export.rglob("*"):
            os.utime(f, (written, written))
    result = invoke_run(export, tmp_path / "out", *extra, at=at)
    report = tmp_path / "out" / "report.json"
    return result, json.loads(report.read_text()) if report.is_file() else {}


def _readiness(report: dict[str, Any]) -> dict[str, str]:
    return {f"{v['namespace']}/{v['name']}": v["readiness"] for v in report["vms"]}


def test_an_audit_instant_of_the_export_is_not_named(tmp_path: Path) -> None:
    result, report = _late_run(tmp_path, "2026-11-30T06:00:00Z")
    assert result.exit_code == 0, result.output
    assert "after the input" not in result.output and "newest timestamp" not in result.output
    assert "at_after_input" not in report["run"]


@pytest.mark.parametrize(
    ("at", "written", "words"),
    [
        # after now, and after the files were written
        ("9999-01-01T00:00:00Z", None, "is after the input was taken (the export's files"),
        # files written on 2026-11-30 07:00 (touch): --at a day later
        ("2026-12-01T08:00:00Z", 1796022000.0, "last written at 2026-11-30T07:00:00Z"),
    ],
)
def test_an_audit_instant_after_the_input_is_named(
    tmp_path: Path, at: str, written: float | None, words: str
) -> None:
    _, before = _late_run(tmp_path / "ref", at="2026-11-30T06:00:00Z")
    result, report = _late_run(tmp_path, at, written)
    assert result.exit_code == 0, result.output
    assert f"Warning: --at {at}" in result.output and words in result.output
    assert words in report["run"]["at_after_input"]
    html = _late_run(tmp_path / "html", at, written, "--format", "html")[0]
    assert html.exit_code == 0, html.output
    page = (tmp_path / "html" / "out" / "report.html").read_text()
    assert "Audit time after the input" in page and words.split("(")[0] in page
    assert report["run"]["complete"] is True  # never an error
    assert set(_readiness(report)) == set(_readiness(before))


def test_weeks_after_the_newest_timestamp_is_named_though_the_files_are_newer(
    tmp_path: Path,
) -> None:
    """An export copied (new mtimes) after --at, whose cluster wrote nothing in the weeks
    before --at: named by the newest timestamp in it (2026-11-30 in the example)."""
    from datetime import UTC, datetime

    from auditor.sources.directory import DirectorySource
    from auditor.sources.freshness import at_after_input, newest_timestamp

    export = tmp_path / "export"
    shutil.copytree(EXAMPLE, export)
    copied = datetime(2027, 2, 1, tzinfo=UTC)
    for f in export.rglob("*"):
        os.utime(f, (copied.timestamp(), copied.timestamp()))
    data = DirectorySource(export).collect()
    newest = newest_timestamp(data)
    assert newest is not None and datetime(2026, 11, 29, tzinfo=UTC) < newest < copied
    late = at_after_input(data, datetime(2027, 1, 15, tzinfo=UTC), copied)
    assert late is not None and "days after the newest timestamp in the input" in late
    assert at_after_input(data, newest, copied) is None


def test_the_file_named_for_the_kind_is_named_first(tmp_path: Path) -> None:
    export = tmp_path / "export"
    shutil.copytree(EXAMPLE, export)
    result = invoke_run(export, tmp_path / "out", "--max-file-bytes", "10")
    assert result.exit_code == 4, result.output
    assert (
        "the VirtualMachine list could not be read: file virtualmachines.yaml could not be "
        "read: file is" in result.output
    )


def test_problems_for_ranks_the_kind_then_its_file_then_the_narrowest() -> None:
    from auditor.models import CollectionProblem
    from auditor.sources.base import ClusterData, SourceInfo
    from auditor.sources.usable import problems_for

    wide = CollectionProblem("any", file="junk.yaml", kinds=("Backup", "VirtualMachine", "Pod"))
    pvcs = CollectionProblem(
        "pvcs",
        file="persistentvolumeclaims.yaml",
        kinds=("PersistentVolumeClaim", "VirtualMachine"),
    )
    named = CollectionProblem("vms", file="sub/virtual-machines.yaml", kinds=("VirtualMachine",))
    obj = CollectionProblem("obj", file="x.yaml", kind="VirtualMachine", kinds=("VirtualMachine",))
    other = CollectionProblem("nad", file="nads.yaml", kinds=("NetworkAttachmentDefinition",))
    data = ClusterData(SourceInfo("directory", "x"), problems=[wide, pvcs, other, named, obj])
    assert [p.reason for p in problems_for(data, "VirtualMachine")] == [
        "obj",
        "vms",
        "pvcs",
        "any",
    ]


@pytest.mark.parametrize(
    ("config", "lines"),
    [
        (
            {
                "report": {"formats": ["html"]},
                "publish": {"local_dir": "/tmp/lo31-never"},
                "schedules": [{"id": "n", "cron": "0 2 * * *", "publish": True}],
            },
            ["  report.formats: schedule 'n' publishes, so its formats must include json"],
        ),
        (
            {
                "publish": {"local_dir": "/tmp/lo31-never"},
                "schedules": [
                    {"id": "n", "cron": "0 2 * * *", "publish": True, "formats": ["pdf"]}
                ],
            },
            ["  schedules.0.formats: schedule 'n' publishes"],
        ),
        (
            {
                "publish": {
                    "bucket": "b",
                    "endpoint_url": "ftp://x",
                    "object_lock_mode": "GOVERNANCE",
                }
            },
            [
                "  publish.endpoint_url: endpoint_url must be an http:// or https:// URL",
                "  publish.object_lock_days: object_lock_mode and object_lock_days must be set",
            ],
        ),
        (
            {
                "publish": {
                    "local_dir": "/tmp/lo31-never",
                    "sse": "AES256",
                    "verify_tls": False,
                    "ca_bundle": "/etc/ca.pem",
                    "prefix": "/p",
                }
            },
            [
                "  publish.sse: sse and object_lock_mode need an S3 bucket",
                "  publish.verify_tls: ca_bundle is set but verify_tls is false",
                "  publish.prefix: prefix must not start or end with '/'",
            ],
        ),
    ],
)
def test_config_problems_across_fields_name_the_field(
    tmp_path: Path, config: dict[str, Any], lines: list[str]
) -> None:
    import yaml
    from click.testing import CliRunner

    from auditor.cli import main

    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(config))
    result = CliRunner().invoke(main, ["validate-config", str(path)])
    assert result.exit_code == 2, result.output
    out = result.output.splitlines()
    for line in lines:
        assert any(o.startswith(line) for o in out), (line, result.output)
    assert not any(o.startswith(("  <root>:", "  publish:")) for o in out), result.output


def test_run_publish_options_name_the_field(tmp_path: Path) -> None:
    result = invoke_run(
        EXAMPLE, tmp_path / "out", "--publish", "s3://bkt/pre", "--object-lock-mode",
        "COMPLIANCE", "--spool-dir", str(tmp_path / "spool"),
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "publish.object_lock_days: object_lock_mode and object_lock_days" in result.output
    assert "<root>" not in result.output


def _publish_cli(tmp_path: Path, weed: WeedServer, command: list[str], bucket: str) -> Any:
    from click.testing import CliRunner

    from auditor.cli import main

    env = weed_credentials(tmp_path)
    target = [
        "--endpoint-url", weed.endpoint, "--addressing-style", "path", "--region", "us-east-1",
        "--spool-dir", str(tmp_path / "spool"), "--object-lock-mode", "COMPLIANCE",
        "--object-lock-days", "1",
    ]  # fmt: skip
    return CliRunner().invoke(main, [*command, *target], env=env)


def _spooled(tmp_path: Path) -> list[str]:
    spool = tmp_path / "spool"
    return (
        sorted(p.name for p in spool.iterdir() if p.name != "quarantine") if spool.is_dir() else []
    )


@pytest.mark.parametrize("lock", ["plain", "missing"])
def test_a_misconfigured_bucket_is_exit_2_and_not_spooled(
    tmp_path: Path, weed: WeedServer, lock: str
) -> None:
    bucket = f"lo31-{lock}"
    if lock == "plain":
        weed.client().create_bucket(Bucket=bucket)
    out = tmp_path / "out"
    run = [
        "run", "--from-dir", str(EXAMPLE), "--at", "2026-11-30T06:00:00Z", "--out", str(out),
        "--format", "json", "--publish", f"s3://{bucket}/evidence",
    ]  # fmt: skip
    result = _publish_cli(tmp_path, weed, run, bucket)
    assert result.exit_code == 2, result.output
    why = "has no Object Lock enabled" if lock == "plain" else "does not exist"
    assert f"bucket '{bucket}' {why}" in result.output
    assert "not spooled" in result.output
    assert _spooled(tmp_path) == []
    assert (out / "report.json").is_file()  # the report is written all the same
    # publishing that run again, by hand: the same fault, the same answer
    again = _publish_cli(
        tmp_path,
        weed,
        ["publish", "--from-run", str(out), "--to", f"s3://{bucket}/evidence"],
        bucket,
    )
    assert again.exit_code == 2, again.output
    assert why in again.output and _spooled(tmp_path) == []


def test_a_run_already_waiting_in_the_spool_stays_there(tmp_path: Path, weed: WeedServer) -> None:
    """Refused, a run an earlier attempt spooled is not deleted from the spool (nothing lost)."""
    from auditor.publish import publish_run, refused_note
    from tests.publish_support import audit_report, make_run

    bucket = "lo31-waiting"
    weed.client().create_bucket(Bucket=bucket)
    run_dir = make_run(tmp_path / "run", audit_report("2026-11-30T06:00:00Z"))
    settings = weed.settings(bucket, tmp_path, object_lock_mode="COMPLIANCE", object_lock_days=1)
    first = publish_run(run_dir, settings, store=weed.store(settings))  # the service's default
    assert not first.refused and first.spooled is not None and first.spooled.is_dir()
    again = publish_run(run_dir, settings, store=weed.store(settings), refuse_misconfigured=True)
    assert again.refused and again.spooled == first.spooled and first.spooled.is_dir()
    assert "stays in the spool" in refused_note(again)
    fresh = make_run(tmp_path / "run2", audit_report("2026-11-29T06:00:00Z"))
    refused = publish_run(fresh, settings, store=weed.store(settings), refuse_misconfigured=True)
    assert refused.refused and refused.spooled is None
    assert "has no Object Lock enabled" in (refused.error or "")
    assert [p.name for p in (tmp_path / "spool").iterdir() if p.is_dir()] == [first.spooled.name]
