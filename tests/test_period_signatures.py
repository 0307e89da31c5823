"""``report --period --public-key`` (and ``period_public_keys``): unsigned or re-signed runs are out."""

from __future__ import annotations

import base64
import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from auditor.cli import main
from auditor.config import ConfigError, parse_settings
from auditor.period.job import add_period_report
from auditor.publish.signing import key_id
from tests.conftest import REPO, invoke_run

EXAMPLE = REPO / "examples" / "small-cluster"
CLUSTER = "small-east"


def _keypair(tmp: Path, name: str) -> tuple[Path, Path, str]:
    key = Ed25519PrivateKey.generate()
    pem = tmp / f"{name}.pem"
    pem.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                    serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))  # fmt: skip
    pub = tmp / f"{name}.pub"
    pub.write_bytes(key.public_key().public_bytes(serialization.Encoding.PEM,
                    serialization.PublicFormat.SubjectPublicKeyInfo))  # fmt: skip
    return pem, pub, key_id(key.public_key())


@pytest.fixture
def signed_archive(tmp_path: Path) -> dict[str, object]:
    """November runs: 27 and 28 signed with the real key, 29 unsigned, 30 re-signed with
    another key, 26 signed but its signature corrupted."""
    real, real_pub, real_id = _keypair(tmp_path, "real")
    other, _, other_id = _keypair(tmp_path, "other")
    archive = tmp_path / "archive"
    ids: dict[int, str] = {}
    for day, key in ((26, real), (27, real), (28, real), (29, None), (30, other)):
        extra = ["--signing-key", str(key)] if key else []
        out = tmp_path / f"r{day}"
        result = invoke_run(
            EXAMPLE, out, "--cluster-name", CLUSTER, "--publish", str(archive), *extra,
            at=f"2026-11-{day}T06:00:00Z",
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        ids[day] = json.loads((out / "report.json").read_text())["run"]["id"]
    [sig] = (archive / CLUSTER / "2026" / "11" / "26").glob("*/manifest.json.sig")
    doc = json.loads(sig.read_text())
    raw = bytearray(base64.b64decode(doc["signature"]))
    raw[0] ^= 0xFF
    doc["signature"] = base64.b64encode(bytes(raw)).decode()
    sig.write_text(json.dumps(doc))
    return {"archive": archive, "pub": real_pub, "kid": real_id, "other": other_id, "ids": ids}


def test_report_period_with_public_key_leaves_out_unsigned_and_resigned_runs(
    tmp_path: Path, signed_archive: dict[str, object]
) -> None:
    archive, pub, ids = signed_archive["archive"], signed_archive["pub"], signed_archive["ids"]
    assert isinstance(ids, dict)
    out = tmp_path / "out"
    args = ["report", "--period", "2026-11", "--from", str(archive), "--cluster", CLUSTER]
    result = CliRunner().invoke(main, [*args, "--out", str(out), "--public-key", str(pub),
                                       "--format", "json,csv,html"])  # fmt: skip
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "period.json").read_text())
    assert doc["runs"] == [ids[27], ids[28]]
    assert doc["fleet"]["runs"] == 2
    assert doc["signatures"] == {"checked": True, "keys": [signed_archive["kid"]]}
    problems = doc["problems"]
    assert len(problems) == 3
    by_run = {run: next(p for p in problems if run in p) for run in (ids[26], ids[29], ids[30])}
    assert "BAD SIGNATURE" in by_run[ids[26]]
    assert "no manifest.json.sig: the manifest is not signed" in by_run[ids[29]]
    assert f"signed by key {signed_archive['other']}, which is not among" in by_run[ids[30]]
    assert all("run left out" in p for p in problems)
    html = (out / "period.html").read_text()
    assert f"Manifest signatures checked against key(s) {signed_archive['kid']}" in html
    assert ids[29] in html
    # and the report says it is incomplete (ux35): three runs of the month left out
    assert (doc["complete"], doc["runs_left_out"]["unsigned"]) == (False, 3)
    assert result.output.count("Warning: ") == 4
    assert (
        "Warning: the 2026-11 report is INCOMPLETE: 3 run(s) of the period left out: not "
        "signed by a key given (--public-key); named under problems"
    ) in result.output

    unchecked = CliRunner().invoke(
        main, [*args, "--out", str(tmp_path / "all"), "--format", "json"]
    )
    assert unchecked.exit_code == 0, unchecked.output
    every = json.loads((tmp_path / "all" / "period.json").read_text())
    assert every["runs"] == [ids[d] for d in (26, 27, 28, 29, 30)]
    assert every["signatures"] == {"checked": False, "keys": []} and every["problems"] == []
    assert every["runs_left_out"]["unsigned"] == 0

    bad = CliRunner().invoke(main, [*args, "--public-key", str(tmp_path / "nope.pub")])
    assert bad.exit_code == 2 and "--public-key" in bad.output


def test_service_period_public_keys(tmp_path: Path, signed_archive: dict[str, object]) -> None:
    archive, pub, ids = signed_archive["archive"], signed_archive["pub"], signed_archive["ids"]
    assert isinstance(ids, dict)
    with pytest.raises(ConfigError, match=r"schedules\.0\.period_public_keys: .*period_report"):
        parse_settings(
            {"schedules": [{"id": "m", "cron": "0 7 1 * *", "period_public_keys": [str(pub)]}]},
            path=tmp_path / "c.yaml",
        )
    settings = parse_settings(
        {
            "cluster_name": CLUSTER,
            "publish": {"url": str(archive), "spool_dir": str(tmp_path / "spool")},
            "schedules": [
                {
                    "id": "m",
                    "cron": "0 7 1 * *",
                    "publish": True,
                    "period_report": True,
                    "period_public_keys": [str(pub)],
                }
            ],
        },  # fmt: skip
        path=tmp_path / "c.yaml",
    )
    run_dir = shutil.copytree(tmp_path / "r28", tmp_path / "run")
    report = json.loads((tmp_path / "r28" / "report.json").read_text())
    sched = settings.schedules[0]
    add_period_report(
        settings, report, run_dir, datetime(2026, 12, 1, 7, tzinfo=UTC), "UTC", ["json"],
        sched.period_public_keys,
    )  # fmt: skip
    doc = json.loads((run_dir / "period-2026-11" / "period.json").read_text())
    assert doc["runs"] == [ids[27], ids[28]] and len(doc["problems"]) == 3
