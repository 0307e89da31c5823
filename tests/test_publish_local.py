"""auditor.publish without a server: settings, manifest, local directory, spool, trend.

Everything S3 (SSE-S3, SSE-KMS, Object Lock, checksums) runs against SeaweedFS in
tests/test_publish_s3.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import boto3
import pytest
from click.testing import CliRunner, Result
from pydantic import ValidationError

from auditor.cli import main
from auditor.config import AuditSettings
from auditor.publish import (
    PublishError,
    PublishSettings,
    RunDirError,
    StoreConfigError,
    VerificationError,
    build_manifest,
    compute_trend,
    list_runs,
    publish_run,
    publish_settings,
    service_publisher,
    trend_for,
)
from auditor.publish.local import LocalStore
from auditor.publish.s3 import make_client
from auditor.publish.spool import pending
from auditor.publish.trend import compare_reports
from tests.answer_support import answers
from tests.publish_support import CLUSTER, artifact_count, audit_report, make_run


def cli(*args: str) -> Result:
    """Run ``auditor ARGS`` in-process."""
    return CliRunner().invoke(main, list(args))


def local(tmp_path: Path, **options: Any) -> PublishSettings:
    return PublishSettings(local_dir=tmp_path / "archive", spool_dir=tmp_path / "spool", **options)


def test_settings_from_url_and_validation(tmp_path: Path) -> None:
    s3 = PublishSettings.from_url("s3://audit-bkt/evidence/prod", region="eu-west-1")
    assert (s3.bucket, s3.prefix, s3.region, s3.is_s3) == (
        "audit-bkt",
        "evidence/prod",
        "eu-west-1",
        True,
    )
    assert PublishSettings.from_url(str(tmp_path)).local_dir == tmp_path
    assert not PublishSettings.from_url(f"file://{tmp_path}").is_s3
    with pytest.raises(ValueError, match="only s3://"):
        PublishSettings.from_url("gs://bucket")
    with pytest.raises(ValidationError, match="credentials are not read from the configuration"):
        PublishSettings.model_validate({"bucket": "b", "aws_secret_access_key": "x"})
    with pytest.raises(ValidationError, match="must be set together"):
        PublishSettings(bucket="b", object_lock_mode="COMPLIANCE")
    with pytest.raises(ValidationError, match="kms_key_id requires sse: aws:kms"):
        PublishSettings(bucket="b", sse="AES256", kms_key_id="k")
    with pytest.raises(ValidationError, match="must not contain credentials"):
        PublishSettings(bucket="b", endpoint_url="https://user:pw@s3.example.test")
    with pytest.raises(ValidationError, match="need an S3 bucket"):
        PublishSettings(sse="AES256")
    with pytest.raises(ValidationError, match="object_lock_days"):
        PublishSettings(bucket="b", object_lock_mode="GOVERNANCE", object_lock_days=0)


def test_client_config_follows_settings() -> None:
    settings = PublishSettings(
        bucket="b", addressing_style="virtual", retry_mode="adaptive", max_attempts=7,
        region="eu-central-1", endpoint_url="https://s3.example.test",
    )  # fmt: skip
    session = boto3.session.Session(aws_access_key_id="k", aws_secret_access_key="s")
    client = make_client(settings, session=session)
    config = client.meta.config
    assert config.s3["addressing_style"] == "virtual"
    assert config.retries == {"mode": "adaptive", "total_max_attempts": 7}
    assert client.meta.region_name == "eu-central-1"
    assert client.meta.endpoint_url == "https://s3.example.test"


def test_manifest_is_deterministic_recursive_and_checked(tmp_path: Path) -> None:
    report = audit_report("2026-11-30T06:00:00Z")
    run_dir = make_run(tmp_path / "run", report)
    first = build_manifest(run_dir)
    (run_dir / "manifest.json").write_bytes(first.to_bytes())
    second = build_manifest(run_dir)
    assert first.to_bytes() == second.to_bytes()
    assert first.run_prefix == f"{CLUSTER}/2026/11/30/{report['run']['id']}"
    paths = [a.path for a in first.artifacts]
    assert paths == sorted(paths) and "manifest.json" not in paths
    assert "recovery-cards/web-platform/web-shop-db.json" in paths
    assert first.document["run"]["input_digest"] == report["run"]["input_digest"]

    broken = tmp_path / "broken"
    broken.mkdir()
    with pytest.raises(RunDirError, match="report.json: not found"):
        build_manifest(broken)
    (broken / "report.json").write_text(json.dumps({"run": {"id": "x", "audit_time": "y"}}))
    with pytest.raises(RunDirError, match=r"report.json: run.id 'x' is not"):
        build_manifest(broken)


def test_unnamed_cluster_goes_under_unknown_cluster(tmp_path: Path) -> None:
    report = audit_report("2026-11-30T06:00:00Z")
    report["cluster"]["name"] = None
    assert build_manifest(make_run(tmp_path / "run", report)).cluster == "unknown-cluster"


def test_local_publish_layout_idempotence_and_latest(tmp_path: Path) -> None:
    settings = local(tmp_path, prefix="evidence")
    newer = make_run(tmp_path / "newer", audit_report("2026-11-30T06:00:00Z"))
    older = make_run(tmp_path / "older", audit_report("2026-11-29T06:00:00Z"))

    result = publish_run(newer, settings)
    assert result.published and len(result.uploaded) == artifact_count(newer) + 1  # + manifest
    root = tmp_path / "archive" / "evidence" / CLUSTER
    run_id = result.run_id
    manifest = json.loads((root / "2026/11/30" / run_id / "manifest.json").read_text())
    assert {a["path"] for a in manifest["artifacts"]} >= {"report.json", "vms.csv", "findings.csv"}
    assert publish_run(newer, settings).uploaded == []
    assert publish_run(older, settings).published
    latest = json.loads((root / "latest.json").read_text())
    assert latest["run_id"] == run_id  # an older run does not move latest back
    runs = list_runs(LocalStore(settings), CLUSTER)
    assert [r.audit_time[:10] for r in runs] == ["2026-11-29", "2026-11-30"]
    assert runs[1].readiness == answers("cluster-export").summary


def test_unreachable_store_spools_and_retry_delivers(tmp_path: Path) -> None:
    blocker = tmp_path / "archive"
    blocker.write_text("a file where the archive directory should be")
    settings = local(tmp_path)
    run_dir = make_run(tmp_path / "run", audit_report("2026-11-30T06:00:00Z"))

    spool_opt = ["--spool-dir", str(settings.spool_dir)]
    out = cli("publish", "--from-run", str(run_dir), "--to", str(blocker), *spool_opt, "--no-trend")
    assert out.exit_code == 3, out.output
    assert "NOT published: cannot create publish directory" in out.output
    (entry,) = pending(settings.spool_dir)
    assert (entry.run_dir / "manifest.json").is_file()

    blocker.unlink()
    retry = cli("publish", "--retry", *spool_opt)
    assert retry.exit_code == 0, retry.output
    assert f"published run {entry.run_id}" in retry.output
    assert pending(settings.spool_dir) == []
    assert [r.run_id for r in list_runs(LocalStore(settings), CLUSTER)] == [entry.run_id]


def test_cli_publish_writes_trend_from_archive(tmp_path: Path) -> None:
    archive = str(tmp_path / "archive")
    digests = set()
    # two runs of one export, both after its newest object (02:39:53Z) and its newest status
    # time (05:59:40Z; one read at an instant before it reads that status as not yet, fz32):
    # the same input
    for at in ("2026-11-30T06:00:00Z", "2026-11-30T06:00:30Z"):
        report = audit_report(at)
        digests.add(report["run"]["id"].split("-")[1])
        run_dir = make_run(tmp_path / at.replace(":", "-"), report)
        out = cli("publish", "--from-run", str(run_dir), "--to", archive,
                  "--spool-dir", str(tmp_path / "spool"))  # fmt: skip
        assert out.exit_code == 0, out.output
    trend = json.loads((tmp_path / "2026-11-30T06-00-30Z" / "trend.json").read_text())
    assert trend["previous"]["audit_time"] == "2026-11-30T06:00:00Z"
    assert trend["vs_previous"]["readiness_delta"] == {
        "AT_RISK": 0,
        "NOT_READY": 0,
        "READY": 0,
        "UNKNOWN": 0,
    }
    hist = cli("history", "--cluster", CLUSTER, "--to", archive)
    (digest,) = digests  # the same input twice: one digest, two run ids
    assert hist.exit_code == 0 and hist.output.count(f"Z-{digest}") == 2


def _vm(ns: str, name: str, readiness: str, fails: dict[str, str]) -> dict[str, Any]:
    findings = [{"check_id": c, "status": s, "severity": "high"} for c, s in fails.items()]
    return {"namespace": ns, "name": name, "readiness": readiness, "findings": findings}


def test_compare_reports_lists_changes() -> None:
    old = {"summary": {"readiness": {"READY": 1, "NOT_READY": 1}}, "vms": [
        _vm("a", "db", "READY", {"RR-BKP-001": "PASS"}),
        _vm("a", "web", "NOT_READY", {"RR-BKP-001": "FAIL", "RR-NET-001": "FAIL"}),
        _vm("b", "gone", "READY", {}),
    ]}  # fmt: skip
    new = {"summary": {"readiness": {"READY": 1, "NOT_READY": 2}}, "vms": [
        _vm("a", "db", "NOT_READY", {"RR-BKP-001": "FAIL"}),
        _vm("a", "web", "READY", {"RR-BKP-001": "PASS", "RR-NET-001": "WAIVED"}),
        _vm("c", "new", "NOT_READY", {}),
    ]}  # fmt: skip
    diff = compare_reports(old, new)
    assert diff["became_not_ready"] == [{"namespace": "a", "name": "db", "was": "READY"}]
    assert diff["recovered"] == [{"namespace": "a", "name": "web", "now": "READY"}]
    assert [(g["check_id"], g["now"]) for g in diff["gaps_fixed"]] == [
        ("RR-BKP-001", "PASS"),
        ("RR-NET-001", "WAIVED"),
    ]
    assert diff["new_gaps"] == [
        {
            "namespace": "a",
            "name": "db",
            "check_id": "RR-BKP-001",
            "severity": "high",
            "was": "PASS",
        }
    ]
    assert diff["added_vms"] == [{"namespace": "c", "name": "new", "readiness": "NOT_READY"}]
    assert diff["removed_vms"] == [{"namespace": "b", "name": "gone"}]
    assert diff["readiness_delta"] == {"NOT_READY": 1, "READY": 0}


def test_trend_month_window_scope_and_integrity(tmp_path: Path) -> None:
    settings = local(tmp_path)
    store = LocalStore(settings)
    for at in ("2026-10-20T06:00:00Z", "2026-11-10T06:00:00Z", "2026-11-29T06:00:00Z"):
        assert publish_run(make_run(tmp_path / at[:10], audit_report(at)), settings).published
    owned = audit_report("2026-11-28T06:00:00Z")
    owned["run"]["owner_filter"] = "team-finance"
    assert publish_run(make_run(tmp_path / "owned", owned), settings).published

    trend = compute_trend(audit_report("2026-11-30T06:00:00Z"), store)
    assert trend["previous"]["audit_time"] == "2026-11-29T06:00:00Z"  # owner-filtered run skipped
    assert trend["month_ago"] is None  # 2026-10-20 is more than 7 days before 2026-10-30
    assert [s["audit_time"][:10] for s in trend["series"]] == [
        "2026-10-20",
        "2026-11-10",
        "2026-11-29",
        "2026-11-30",
    ]
    current_id = trend["current"]["run_id"]
    assert trend["series"][-1]["prefix"] == f"{CLUSTER}/2026/11/30/{current_id}/"
    later = compute_trend(audit_report("2026-12-12T06:00:00Z"), store)
    assert later["month_ago"]["audit_time"] == "2026-11-10T06:00:00Z"

    prev = tmp_path / "archive" / trend["previous"]["prefix"] / "report.json"
    prev.write_text(prev.read_text().replace('"READY"', '"NOT_READY"', 1))
    with pytest.raises(VerificationError, match="differs from manifest"):
        compute_trend(audit_report("2026-11-30T06:00:00Z"), store)
    assert trend_for(audit_report("2026-11-30T06:00:00Z"), settings) is None  # logged, not fatal
    fresh = local(tmp_path / "other")
    first = trend_for(audit_report("2026-11-30T06:00:00Z"), fresh)
    assert first is not None and first["previous"] is None and len(first["series"]) == 1


def test_config_section_and_service_publisher(tmp_path: Path) -> None:
    with pytest.raises(StoreConfigError, match=r"publish\.object_lock_days: .*greater than 0"):
        publish_settings({"bucket": "b", "object_lock_mode": "COMPLIANCE", "object_lock_days": 0})
    with pytest.raises(StoreConfigError, match="publish.url: .*only s3://"):
        publish_settings({"url": "ftp://x"})
    target = publish_settings({"url": "s3://bkt/a/b", "region": "eu-west-1"})
    assert (target.bucket, target.prefix, target.region) == ("bkt", "a/b", "eu-west-1")

    archive, spool = str(tmp_path / "archive"), str(tmp_path / "spool")
    settings = AuditSettings(publish={"url": archive, "spool_dir": spool})
    for at in ("2026-11-29T06:00:00Z", "2026-11-30T06:00:00Z"):
        report = audit_report(at)
        service_publisher(settings, report, make_run(tmp_path / at[:10], report))
    trend = json.loads((tmp_path / "2026-11-30" / "trend.json").read_text())
    assert trend["previous"]["audit_time"] == "2026-11-29T06:00:00Z"
    blocked = AuditSettings(
        publish={"url": str(tmp_path / "2026-11-30" / "vms.csv"), "spool_dir": spool}
    )
    with pytest.raises(PublishError, match="spooled at"):
        service_publisher(blocked, report, tmp_path / "2026-11-30")
    assert [e.run_id for e in pending(Path(spool))] == [report["run"]["id"]]


def test_history_of_an_archive_that_is_not_there_is_exit_2(tmp_path: Path) -> None:
    """``history`` said "no published runs" and exited 0 for a mistyped archive directory,
    and exited 1 (the gate's code) when the archive could not be read; an unreadable archive
    is exit 2, as for ``verify``, ``report --period`` and ``fleet`` (trial nu20)."""
    missing = tmp_path / "no-such-archive"
    res = cli("history", "--cluster", CLUSTER, "--to", str(missing))
    assert res.exit_code == 2, res.output
    assert f"archive directory {missing} does not exist" in res.output
    missing.mkdir()
    res = cli("history", "--cluster", CLUSTER, "--to", str(missing))
    # an archive holding no run of the cluster is exit 2 too, naming what it holds (ux35)
    assert res.exit_code == 2 and "the archive holds no cluster folder" in res.output
