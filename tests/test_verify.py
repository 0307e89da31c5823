"""``auditor verify`` and signed manifests (issue 14 items 1-2), on run folders and SeaweedFS.

The S3 tests publish with the real CLI to a real ``weed mini`` server (tests/publish_support.py)
and tamper with objects through its S3 API, as an attacker with write access would.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from auditor.cli import main
from auditor.publish.signing import key_id
from tests.conftest import REPO
from tests.publish_support import ACCESS_KEY, SECRET_KEY, WeedServer

EXAMPLE = REPO / "examples" / "small-cluster"
AT = "2026-11-30T06:00:00Z"
_names = itertools.count()


def audit(out: Path, *extra: str) -> Any:
    args = ["run", "--from-dir", str(EXAMPLE), "--at", AT, "--cluster-name", "example"]
    result = CliRunner().invoke(
        main, [*args, "--out", str(out), "--format", "json,csv,cards", *extra]
    )
    assert result.exit_code == 0, result.output
    return result


def verify(*args: str) -> Any:
    return CliRunner().invoke(main, ["verify", *args])


def write_keys(tmp: Path, name: str) -> tuple[Path, Path, Ed25519PrivateKey]:
    key = Ed25519PrivateKey.generate()
    private = tmp / f"{name}.pem"
    public = tmp / f"{name}.pub.pem"
    private.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    public.write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return private, public, key


# -- run folders -------------------------------------------------------------------------------
def test_every_run_folder_gets_a_manifest_that_verifies(tmp_path: Path) -> None:
    run = tmp_path / "run"
    audit(run)
    manifest = json.loads((run / "manifest.json").read_text())
    paths = {a["path"] for a in manifest["artifacts"]}
    assert {"report.json", "findings.csv", "vms.csv"} <= paths
    result = verify(str(run))
    assert result.exit_code == 0, result.output
    assert f"{len(paths)} artifacts match manifest.json" in result.output


def test_tampered_missing_and_extra_files_are_named(tmp_path: Path) -> None:
    run = tmp_path / "run"
    audit(run)
    report = run / "report.json"
    report.write_text(report.read_text().replace('"READY"', '"NOT_READY"', 1))
    (run / "vms.csv").unlink()
    (run / "notes.txt").write_text("added later\n")
    result = verify(str(run))
    assert result.exit_code == 1, result.output
    assert "CHANGED report.json: size" in result.output
    assert "MISSING vms.csv" in result.output
    assert "EXTRA notes.txt" in result.output
    assert "3 problem(s)" in result.output


def test_a_folder_without_manifest_cannot_be_read(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    result = verify(str(tmp_path / "x"))
    assert result.exit_code == 2, result.output
    assert "manifest.json does not exist" in result.output


def test_signed_run_verifies_and_a_bad_signature_is_refused(tmp_path: Path) -> None:
    private, public, key = write_keys(tmp_path, "current")
    _, other_public, _ = write_keys(tmp_path, "other")
    run = tmp_path / "run"
    audit(run, "--signing-key", str(private))
    sig = json.loads((run / "manifest.json.sig").read_text())
    assert sig["key_id"] == key_id(key.public_key()) and sig["algorithm"] == "Ed25519"

    good = verify(str(run), "--public-key", str(public))
    assert good.exit_code == 0, good.output
    assert f"signature valid (Ed25519, key {sig['key_id']})" in good.output
    # rotation: the new and the old public key may both be given
    both = verify(str(run), "--public-key", str(other_public), "--public-key", str(public))
    assert both.exit_code == 0, both.output

    wrong = verify(str(run), "--public-key", str(other_public))
    assert wrong.exit_code == 1 and "not among the public keys given" in wrong.output

    # a manifest rewritten to match a tampered report: hashes agree, the signature does not
    report = run / "report.json"
    report.write_text(report.read_text() + " ")
    manifest = json.loads((run / "manifest.json").read_text())
    import hashlib

    for art in manifest["artifacts"]:
        if art["path"] == "report.json":
            data = report.read_bytes()
            art["size"], art["sha256"] = len(data), hashlib.sha256(data).hexdigest()
    (run / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    forged = verify(str(run), "--public-key", str(public))
    assert forged.exit_code == 1, forged.output
    assert "BAD SIGNATURE" in forged.output
    unsigned = verify(str(run))
    assert unsigned.exit_code == 0, "without a key only the hashes are checked"
    assert "signature not checked" in unsigned.output


def test_missing_signature_with_public_key_is_refused(tmp_path: Path) -> None:
    _, public, _ = write_keys(tmp_path, "k")
    run = tmp_path / "run"
    audit(run)
    result = verify(str(run), "--public-key", str(public))
    assert result.exit_code == 1 and "the manifest is not signed" in result.output


def test_a_non_ed25519_or_missing_key_file_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pem"
    bad.write_text("not a key\n")
    run = tmp_path / "run"
    args = ["run", "--from-dir", str(EXAMPLE), "--at", AT, "--out", str(run), "--format", "json"]
    result = CliRunner().invoke(main, [*args, "--signing-key", str(bad)])
    assert result.exit_code == 2 and "not an unencrypted PEM private key" in result.output
    assert "not a key" not in result.output, "key file contents never printed"


# -- published runs on SeaweedFS ---------------------------------------------------------------
@pytest.fixture
def s3_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Credentials for the CLI through boto3's standard chain (environment)."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")


def publish(weed: WeedServer, run: Path, bucket: str, tmp: Path, *extra: str) -> str:
    args = ["publish", "--from-run", str(run), "--to", f"s3://{bucket}/evidence"]
    args += ["--endpoint-url", weed.endpoint, "--addressing-style", "path"]
    args += ["--spool-dir", str(tmp / "spool"), "--no-trend", *extra]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    run_id = json.loads((run / "report.json").read_text())["run"]["id"]
    return f"evidence/example/2026/11/30/{run_id}"


def s3_verify(weed: WeedServer, url: str, *extra: str) -> Any:
    return verify(url, "--endpoint-url", weed.endpoint, "--addressing-style", "path", *extra)


@pytest.mark.usefixtures("s3_env")
def test_published_run_verifies_and_tampering_is_named(weed: WeedServer, tmp_path: Path) -> None:
    bucket = f"verify-{next(_names)}"
    weed.client().create_bucket(Bucket=bucket)
    private, public, _ = write_keys(tmp_path, "k")
    run = tmp_path / "run"
    audit(run)
    prefix = publish(weed, run, bucket, tmp_path, "--signing-key", str(private))
    url = f"s3://{bucket}/{prefix}"

    clean = s3_verify(weed, url, "--public-key", str(public))
    assert clean.exit_code == 0, clean.output
    assert "signature valid" in clean.output
    latest = s3_verify(weed, f"s3://{bucket}/evidence", "--latest", "--cluster", "example")
    assert latest.exit_code == 0 and prefix in latest.output, latest.output

    client = weed.client()
    client.put_object(Bucket=bucket, Key=f"{prefix}/vms.csv", Body=b"namespace,name\nx,y\n")
    client.delete_object(Bucket=bucket, Key=f"{prefix}/findings.csv")
    client.put_object(Bucket=bucket, Key=f"{prefix}/report.html", Body=b"<p>all good</p>")
    tampered = s3_verify(weed, url, "--public-key", str(public))
    assert tampered.exit_code == 1, tampered.output
    assert "CHANGED vms.csv: size 19" in tampered.output
    assert "MISSING findings.csv" in tampered.output
    assert "EXTRA report.html" in tampered.output
    gone = s3_verify(weed, f"s3://{bucket}/evidence/example/2026/11/30/nope")
    assert gone.exit_code == 2 and "does not exist" in gone.output


@pytest.mark.usefixtures("s3_env")
def test_object_lock_retention_is_checked(weed: WeedServer, tmp_path: Path) -> None:
    bucket = f"verify-lock-{next(_names)}"
    weed.client().create_bucket(Bucket=bucket, ObjectLockEnabledForBucket=True)
    run = tmp_path / "run"
    audit(run)
    prefix = publish(
        weed,
        run,
        bucket,
        tmp_path,
        "--object-lock-mode",
        "GOVERNANCE",
        "--object-lock-days",
        "1",
    )
    clean = s3_verify(weed, f"s3://{bucket}/{prefix}")
    assert clean.exit_code == 0, clean.output
    assert "Object Lock retention checked" in clean.output
    # an object written later without retention (a new version with the same bytes)
    body = (run / "vms.csv").read_bytes()
    weed.client().put_object(Bucket=bucket, Key=f"{prefix}/vms.csv", Body=body)
    unlocked = s3_verify(weed, f"s3://{bucket}/{prefix}")
    assert unlocked.exit_code == 1, unlocked.output
    assert "RETENTION vms.csv: no Object Lock retention" in unlocked.output
