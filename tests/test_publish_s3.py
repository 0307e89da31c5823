"""auditor.publish against a real S3 server: SeaweedFS ``weed mini`` on loopback."""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError
from click.testing import CliRunner

from auditor.cli import main
from auditor.publish import compute_trend, publish_run
from auditor.publish.spool import pending
from tests.answer_support import answers
from tests.publish_support import (
    CLUSTER,
    KMS_KEY,
    SECRET_KEY,
    WeedServer,
    artifact_count,
    audit_report,
    make_run,
    weed_credentials,
)

_names = itertools.count()


@pytest.fixture(scope="module")
def kms_weed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WeedServer]:
    server = WeedServer(tmp_path_factory.mktemp("weed-kms"), kms=True)
    server.start()
    yield server
    server.stop(crash=True)


def new_bucket(server: WeedServer, *, lock: bool = False) -> str:
    name = f"evidence-{next(_names)}-{'locked' if lock else 'plain'}"
    if lock:
        server.client().create_bucket(Bucket=name, ObjectLockEnabledForBucket=True)
    else:
        server.client().create_bucket(Bucket=name)
    return name


def manifest_of(server: WeedServer, bucket: str, run_prefix: str) -> dict[str, Any]:
    body = server.client().get_object(Bucket=bucket, Key=f"evidence/{run_prefix}/manifest.json")
    doc: dict[str, Any] = json.loads(body["Body"].read())
    return doc


def assert_archive_matches(server: WeedServer, bucket: str, run_prefix: str) -> dict[str, Any]:
    """Download every artifact of a run and compare with its manifest; return the manifest."""
    manifest = manifest_of(server, bucket, run_prefix)
    for art in manifest["artifacts"]:
        obj = server.client().get_object(Bucket=bucket, Key=f"evidence/{run_prefix}/{art['path']}")
        data = obj["Body"].read()
        assert hashlib.sha256(data).hexdigest() == art["sha256"], art["path"]
        assert len(data) == art["size"]
    return manifest


def test_example_cluster_lands_with_matching_manifest(weed: WeedServer, tmp_path: Path) -> None:
    bucket = new_bucket(weed)
    report = audit_report("2026-11-30T06:00:00Z")
    run_dir = make_run(tmp_path / "run", report)
    settings = weed.settings(bucket, tmp_path)

    result = publish_run(run_dir, settings, store=weed.store(settings))

    assert result.published, result.error
    prefix = f"{CLUSTER}/2026/11/30/{report['run']['id']}"
    assert result.location == f"s3://{bucket}/evidence/{prefix}/"
    manifest = assert_archive_matches(weed, bucket, prefix)
    paths = [a["path"] for a in manifest["artifacts"]]
    assert paths[:1] == ["findings.csv"] and "report.json" in paths and "vms.csv" in paths
    assert "recovery-cards/finance-prod/fin-db-01.json" in paths
    assert len(paths) == artifact_count(run_dir)
    assert manifest["run"] == {
        "id": report["run"]["id"],
        "audit_time": "2026-11-30T06:00:00Z",
        "tool_version": report["run"]["tool_version"],
        "input_digest": report["run"]["input_digest"],
        "complete": report["run"]["complete"],
        "owner_filter": None,
    }
    assert manifest["summary"]["readiness"] == report["summary"]["readiness"]
    assert len(result.uploaded) == artifact_count(run_dir) + 1  # + manifest
    assert result.already_present == []
    latest = json.loads(
        weed.client()
        .get_object(Bucket=bucket, Key=f"evidence/{CLUSTER}/latest.json")["Body"]
        .read()
    )
    assert latest["run_id"] == report["run"]["id"] and latest["prefix"] == prefix + "/"
    # the server stored our SHA-256 checksum and returns it on HEAD
    head = weed.client().head_object(
        Bucket=bucket, Key=f"evidence/{prefix}/report.json", ChecksumMode="ENABLED"
    )
    report_sha = next(a["sha256"] for a in manifest["artifacts"] if a["path"] == "report.json")
    assert base64.b64decode(head["ChecksumSHA256"]).hex() == report_sha

    again = publish_run(run_dir, settings, store=weed.store(settings))
    assert (
        again.published
        and again.uploaded == []
        and len(again.already_present) == len(result.uploaded)
    )


def test_object_lock_compliance_refuses_delete(weed: WeedServer, tmp_path: Path) -> None:
    bucket = new_bucket(weed, lock=True)
    run_dir = make_run(tmp_path / "run", audit_report("2026-11-30T06:00:00Z"))
    settings = weed.settings(bucket, tmp_path, object_lock_mode="COMPLIANCE", object_lock_days=3)
    before = datetime.now(UTC)

    result = publish_run(run_dir, settings, store=weed.store(settings))

    assert result.published, result.error
    key = "evidence/" + result.uploaded[0]
    head = weed.client().head_object(Bucket=bucket, Key=key)
    assert head["ObjectLockMode"] == "COMPLIANCE"
    until = head["ObjectLockRetainUntilDate"]
    assert before + timedelta(days=3) - timedelta(minutes=1) <= until
    assert until <= datetime.now(UTC) + timedelta(days=3, minutes=1)
    with pytest.raises(ClientError) as refused:
        weed.client().delete_object(Bucket=bucket, Key=key, VersionId=head["VersionId"])
    assert refused.value.response["Error"]["Code"] == "AccessDenied"
    data = weed.client().get_object(Bucket=bucket, Key=key, VersionId=head["VersionId"])
    assert data["ContentLength"] == head["ContentLength"]


def test_object_lock_on_plain_bucket_is_a_clear_error(weed: WeedServer, tmp_path: Path) -> None:
    bucket = new_bucket(weed)
    run_dir = make_run(tmp_path / "run", audit_report("2026-11-30T06:00:00Z"))
    settings = weed.settings(bucket, tmp_path, object_lock_mode="GOVERNANCE", object_lock_days=1)

    result = publish_run(run_dir, settings, store=weed.store(settings))

    assert not result.published
    assert f"bucket '{bucket}' has no Object Lock enabled" in (result.error or "")
    assert result.spooled is not None and (result.spooled / "run" / "report.json").is_file()
    listing = weed.client().list_objects_v2(Bucket=bucket)
    assert listing.get("KeyCount", 0) == 0


def test_wrong_credentials_give_a_clear_error(weed: WeedServer, tmp_path: Path) -> None:
    bucket = new_bucket(weed)
    run_dir = make_run(tmp_path / "run", audit_report("2026-11-30T06:00:00Z"))
    settings = weed.settings(bucket, tmp_path)
    wrong = "not-the-secret-at-all"

    result = publish_run(run_dir, settings, store=weed.store(settings, secret=wrong))

    assert not result.published
    error = result.error or ""
    assert "SignatureDoesNotMatch" in error and "boto3's standard chain" in error
    assert bucket in error
    assert wrong not in error and SECRET_KEY not in error
    assert [e.run_id for e in pending(settings.spool_dir)] == [result.run_id]


def test_sse_s3_request_headers_and_stored_encryption(weed: WeedServer, tmp_path: Path) -> None:
    bucket = new_bucket(weed)
    run_dir = make_run(tmp_path / "run", audit_report("2026-11-30T06:00:00Z"))
    settings = weed.settings(bucket, tmp_path, sse="AES256")
    store = weed.store(settings)
    sent: list[dict[str, str]] = []

    def capture(request: Any, **_: Any) -> None:
        sent.append(
            {
                k.lower(): v.decode() if isinstance(v, bytes) else v
                for k, v in request.headers.items()
            }
        )

    store.client.meta.events.register("before-send.s3.PutObject", capture)
    result = publish_run(run_dir, settings, store=store)

    assert result.published, result.error
    assert len(sent) == artifact_count(run_dir) + 2  # artifacts, manifest, latest.json
    assert {h["x-amz-server-side-encryption"] for h in sent} == {"AES256"}
    manifest = assert_archive_matches(weed, bucket, result.uploaded[0].rsplit("/", 1)[0])
    report_sha = next(a["sha256"] for a in manifest["artifacts"] if a["path"] == "report.json")
    report_put = next(
        h
        for h in sent
        if h.get("x-amz-checksum-sha256")
        and base64.b64decode(h["x-amz-checksum-sha256"]).hex() == report_sha
    )
    assert "x-amz-object-lock-mode" not in report_put
    head = weed.client().head_object(Bucket=bucket, Key="evidence/" + result.uploaded[0])
    assert head["ServerSideEncryption"] == "AES256"


def test_outage_mid_run_spools_and_next_run_delivers(tmp_path: Path) -> None:
    server = WeedServer(tmp_path / "weed")
    server.start()
    try:
        bucket = new_bucket(server)
        settings = server.settings(bucket, tmp_path)
        first = make_run(tmp_path / "run1", audit_report("2026-11-29T06:00:00Z"))
        store = server.store(settings)
        puts = itertools.count(1)

        def crash_on_fifth_put(**_: Any) -> None:
            if next(puts) == 5:
                server.stop(crash=True)

        store.client.meta.events.register("before-send.s3.PutObject", crash_on_fifth_put)
        result = publish_run(first, settings, store=store)

        assert not result.published and "unreachable" in (result.error or "")
        assert [e.run_id for e in pending(settings.spool_dir)] == [result.run_id]
        server.start()
        listing = server.client().list_objects_v2(Bucket=bucket)
        assert listing["KeyCount"] == 4  # what landed before the crash; no manifest yet

        second = make_run(tmp_path / "run2", audit_report("2026-11-30T06:00:00Z"))
        later = publish_run(second, settings, store=server.store(settings))

        assert later.published, later.error
        assert later.delivered_from_spool == [result.run_id]
        assert pending(settings.spool_dir) == []
        for run_id, day in ((result.run_id, "29"), (later.run_id, "30")):
            assert_archive_matches(server, bucket, f"{CLUSTER}/2026/11/{day}/{run_id}")
        latest = server.client().get_object(Bucket=bucket, Key=f"evidence/{CLUSTER}/latest.json")
        assert json.loads(latest["Body"].read())["run_id"] == later.run_id
    finally:
        server.stop(crash=True)


def test_history_and_trend_over_three_runs(
    weed: WeedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bucket = new_bucket(weed)
    settings = weed.settings(bucket, tmp_path)
    store = weed.store(settings)
    trends = {}
    for at in ("2026-10-30T06:00:00Z", "2026-11-30T06:00:00Z", "2026-12-03T06:00:00Z"):
        report = audit_report(at)
        trends[at] = compute_trend(report, store)
        result = publish_run(
            make_run(tmp_path / at[:10], report, trends[at]), settings, store=store
        )
        assert result.published, result.error

    first, mid, last = trends.values()
    assert first["previous"] is None and first["series"][0]["run_id"].startswith("20261030")
    assert mid["previous"]["run_id"].startswith("20261030")
    assert mid["month_ago"]["run_id"].startswith("20261030")
    recovered = {(v["namespace"], v["name"]) for v in mid["vs_previous"]["recovered"]}
    assert recovered == {
        ("finance-prod", "fin-app-01"),
        ("finance-prod", "fin-db-01"),
        ("finance-prod", "fin-batch-01"),
        ("web-platform", "web-frontend-01"),
    }
    fixed = {(g["name"], g["check_id"]) for g in mid["vs_previous"]["gaps_fixed"]}
    assert ("fin-db-01", "RR-BKP-001") in fixed
    # the export as of 2026-10-30 holds 10 of the 12 VMs (two were created later)
    assert mid["vs_previous"]["readiness_delta"]["NOT_READY"] == -2
    assert last["previous"]["run_id"].startswith("20261130")
    assert last["month_ago"]["run_id"].startswith("20261030")  # window 2026-10-27..11-03
    became = {v["name"]: v["was"] for v in last["vs_previous"]["became_not_ready"]}
    assert became == {
        "fin-app-01": "READY",
        "fin-db-01": "READY",
        "fin-batch-01": "AT_RISK",
        "web-frontend-01": "AT_RISK",
    }
    assert [s["readiness"]["NOT_READY"] for s in last["series"]] == [10, 8, 12]

    for key, value in weed_credentials(tmp_path).items():
        monkeypatch.setenv(key, value)
    args = ["history", "--cluster", CLUSTER, "--to", f"s3://{bucket}/evidence"]
    args += ["--endpoint-url", weed.endpoint, "--addressing-style", "path"]
    out = CliRunner().invoke(main, [*args, "--region", "us-east-1", "--json"])
    assert out.exit_code == 0, out.output
    listed = json.loads(out.output)
    assert [r["audit_time"] for r in listed] == [
        "2026-10-30T06:00:00Z",
        "2026-11-30T06:00:00Z",
        "2026-12-03T06:00:00Z",
    ]
    assert listed[1]["readiness"] == answers("cluster-export").summary
    table = CliRunner().invoke(main, args)
    assert table.exit_code == 0 and "2026-12-03T06:00:00Z" in table.output


def test_tampered_object_is_detected(weed: WeedServer, tmp_path: Path) -> None:
    bucket = new_bucket(weed)
    run_dir = make_run(tmp_path / "run", audit_report("2026-11-30T06:00:00Z"))
    settings = weed.settings(bucket, tmp_path)
    assert publish_run(run_dir, settings, store=weed.store(settings)).published
    key = (
        f"evidence/{CLUSTER}/2026/11/30/{audit_report('2026-11-30T06:00:00Z')['run']['id']}/vms.csv"
    )
    weed.client().put_object(Bucket=bucket, Key=key, Body=b"namespace,name,readiness\n")

    again = publish_run(run_dir, settings, store=weed.store(settings))

    assert not again.published
    assert f"s3://{bucket}/{key}: stored object has size 25" in (again.error or "")


def test_tls_endpoint_with_private_ca(weed: WeedServer, tmp_path: Path) -> None:
    bucket = new_bucket(weed)
    run_dir = make_run(tmp_path / "run", audit_report("2026-11-30T06:00:00Z"))
    base = {"endpoint_url": weed.https_endpoint}

    default_cas = weed.settings(bucket, tmp_path, **base)
    refused = publish_run(run_dir, default_cas, store=weed.store(default_cas))
    assert not refused.published
    assert "TLS verification failed" in (refused.error or "") and "ca_bundle" in (
        refused.error or ""
    )

    with_ca = weed.settings(bucket, tmp_path, ca_bundle=weed.ca_file, **base)
    result = publish_run(run_dir, with_ca, store=weed.store(with_ca))
    assert result.published, result.error
    assert result.location.startswith(f"s3://{bucket}/evidence/")
    assert pending(with_ca.spool_dir) == []  # spooled copy cleared once published


def _put_headers(store: Any) -> list[dict[str, str]]:
    """Every PutObject request's headers (lower-case names, str values), as sent."""
    sent: list[dict[str, str]] = []

    def capture(request: Any, **_: Any) -> None:
        sent.append(
            {
                k.lower(): v.decode() if isinstance(v, bytes) else v
                for k, v in request.headers.items()
            }
        )

    store.client.meta.events.register("before-send.s3.PutObject", capture)
    return sent


def test_sse_kms_with_seaweedfs_local_kms(kms_weed: WeedServer, tmp_path: Path) -> None:
    """SSE-KMS against a real server: SeaweedFS's ``local`` KMS provider encrypts every object
    under a data key of its master key (KMS_KEY) and reports the key on HEAD.

    Not tested here (no AWS KMS): key policies and grants, a key ARN of another account, and
    AWS's answer to an unknown key (SeaweedFS answers InternalError; AWS, KMS.NotFoundException).
    """
    bucket = new_bucket(kms_weed)
    run_dir = make_run(tmp_path / "run", audit_report("2026-11-30T06:00:00Z"))
    settings = kms_weed.settings(bucket, tmp_path, sse="aws:kms", kms_key_id=KMS_KEY)
    store = kms_weed.store(settings)
    sent = _put_headers(store)

    result = publish_run(run_dir, settings, store=store)

    assert result.published, result.error
    assert len(sent) == artifact_count(run_dir) + 2  # artifacts, manifest, latest.json
    assert {h["x-amz-server-side-encryption"] for h in sent} == {"aws:kms"}
    assert {h["x-amz-server-side-encryption-aws-kms-key-id"] for h in sent} == {KMS_KEY}
    client = kms_weed.client()
    heads = [client.head_object(Bucket=bucket, Key=f"evidence/{k}") for k in result.uploaded]
    assert {h["ServerSideEncryption"] for h in heads} == {"aws:kms"}
    [key_id] = {h["SSEKMSKeyId"] for h in heads}  # the alias resolved to one master key id
    assert len(key_id) == 36 and key_id.count("-") == 4, key_id
    # decrypted on the way out: the stored objects are the run's files, byte for byte
    assert_archive_matches(kms_weed, bucket, result.uploaded[0].rsplit("/", 1)[0])

    unknown = kms_weed.settings(
        new_bucket(kms_weed), tmp_path / "u", sse="aws:kms", kms_key_id="alias/no-such-key"
    )
    refused = publish_run(run_dir, unknown, store=kms_weed.store(unknown))
    assert not refused.published and "InternalError" in (refused.error or "")
    assert [e.run_id for e in pending(unknown.spool_dir)] == [refused.run_id]


def test_store_without_checksums_is_verified_by_reading_back(
    weed: WeedServer, tmp_path: Path
) -> None:
    """Objects stored without a SHA-256 (another tool uploaded them) are downloaded and hashed:
    equal bytes count as already present, nothing is overwritten."""
    run_dir = make_run(tmp_path / "run", audit_report("2026-11-30T06:00:00Z"))
    first_bucket = new_bucket(weed)
    plain = weed.settings(first_bucket, tmp_path / "a")
    first = publish_run(run_dir, plain, store=weed.store(plain))
    assert first.published, first.error
    client = weed.client()
    bucket = new_bucket(weed)
    for key in first.uploaded:  # the same objects, put without x-amz-checksum-sha256
        body = client.get_object(Bucket=first_bucket, Key=f"evidence/{key}")["Body"].read()
        client.put_object(Bucket=bucket, Key=f"evidence/{key}", Body=body)
        head = client.head_object(Bucket=bucket, Key=f"evidence/{key}", ChecksumMode="ENABLED")
        assert "ChecksumSHA256" not in head
    settings = weed.settings(bucket, tmp_path / "b")
    store = weed.store(settings)
    gets: list[str] = []
    puts: list[str] = []
    store.client.meta.events.register(
        "before-send.s3.GetObject", lambda request, **_: gets.append(request.url)
    )
    store.client.meta.events.register(
        "before-send.s3.PutObject", lambda request, **_: puts.append(request.url)
    )

    again = publish_run(run_dir, settings, store=store)

    assert again.published, again.error
    assert again.uploaded == [] and sorted(again.already_present) == sorted(first.uploaded)
    assert len(gets) >= len(again.already_present)  # each object was read back and hashed
    assert [u.endswith(f"/evidence/{CLUSTER}/latest.json") for u in puts] == [True]  # pointer only
