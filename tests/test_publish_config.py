"""One set of publish settings (issue 14 item 4): validated at load, honoured by ``run --publish``."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from auditor.cli import main
from auditor.cli.run import publish_target

CONFIG = """\
publish:
  url: s3://bucket/prefix
  sse: aws:kmss
  max_attempts: 0
  bogus: 1
  object_lock_mode: COMPLIANCE
schedules:
  - id: a
    cron: "0 6 * * *"
"""


def test_validate_config_names_every_publish_problem(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(CONFIG)
    result = CliRunner().invoke(main, ["validate-config", str(path)])
    assert result.exit_code == 2
    assert "4 problem(s)" in result.output
    assert (
        "publish.object_lock_days: object_lock_mode and object_lock_days must be set together"
        in result.output
    )
    assert "publish.sse: Input should be 'AES256' or 'aws:kms'" in result.output
    assert "publish.max_attempts: Input should be greater than or equal to 1" in result.output
    assert "publish.bogus: unknown field" in result.output


def test_serve_refuses_an_invalid_publish_section_at_start(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(CONFIG)
    result = CliRunner().invoke(main, ["serve", "--config", str(path)])
    assert result.exit_code == 2 and "publish.sse" in result.output


def test_schedule_publish_without_target_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text('schedules:\n  - id: a\n    cron: "0 6 * * *"\n    publish: true\n')
    result = CliRunner().invoke(main, ["validate-config", str(path)])
    assert result.exit_code == 2
    assert "schedules.0.publish: true, but the config has no publish: section" in result.output


def test_run_publish_keeps_the_configs_object_lock_and_sse() -> None:
    section = {
        "url": "s3://config-bucket/evidence",
        "sse": "AES256",
        "object_lock_mode": "COMPLIANCE",
        "object_lock_days": 400,
        "spool_dir": "/var/lib/auditor/spool",
    }
    target = publish_target("s3://other-bucket/runs", {"endpoint_url": None}, section)
    assert target is not None
    assert (target.bucket, target.prefix) == ("other-bucket", "runs")
    assert target.sse == "AES256" and target.object_lock_mode == "COMPLIANCE"
    assert target.object_lock_days == 400 and str(target.spool_dir) == "/var/lib/auditor/spool"
    flagged = publish_target(None, {"object_lock_days": 30, "no_verify_tls": True}, section)
    assert flagged is not None and flagged.object_lock_days == 30 and not flagged.verify_tls
    assert flagged.bucket == "config-bucket"


def test_run_target_flags_without_a_target_are_refused() -> None:
    with pytest.raises(click.UsageError, match="--sse needs --publish URL"):
        publish_target(None, {"sse": "AES256"}, None)
    assert publish_target(None, {"sse": None}, None) is None
