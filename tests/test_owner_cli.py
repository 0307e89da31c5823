"""``auditor run --owner``: an unknown owner is a usage error; a hint when most VMs are unowned."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import REPO, invoke_run

EXAMPLE = REPO / "examples" / "small-cluster"


def test_unknown_owner_is_an_error_listing_known_owners(tmp_path: Path) -> None:
    result = invoke_run(EXAMPLE, tmp_path, "--owner", "team-biling", "--fail-on", "never")
    assert result.exit_code == 2, result.output
    assert "unknown owner 'team-biling'" in result.output
    assert "team-billing (" in result.output and "team-web (" in result.output
    assert "unassigned (" in result.output  # the lab namespace has no owner label
    assert not (tmp_path / "report.json").exists()


def test_known_owner_filters_without_hint(tmp_path: Path) -> None:
    result = invoke_run(EXAMPLE, tmp_path, "--owner", "team-web")
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["vms"] and {v["owner"] for v in report["vms"]} == {"team-web"}
    assert "hint:" not in result.output


def test_hint_when_most_vms_are_unassigned(tmp_path: Path) -> None:
    config = tmp_path / "auditor.yaml"
    config.write_text("ownership:\n  keys: [no-such-key]\n")
    result = invoke_run(EXAMPLE, tmp_path / "out", "--config", str(config))
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    n = len(report["vms"])
    assert n > 0 and all(v["owner"] == "unassigned" for v in report["vms"])
    hints = [line for line in result.output.splitlines() if line.startswith("hint:")]
    assert len(hints) == 1
    assert f"{n} of {n} VMs have no owner" in hints[0]
    assert "ownership.keys" in hints[0] and "ownership.namespaces" in hints[0]


def test_no_hint_when_most_vms_are_owned(tmp_path: Path) -> None:
    result = invoke_run(EXAMPLE, tmp_path)
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "report.json").read_text())
    owned = sum(1 for v in report["vms"] if v["owner"] != "unassigned")
    assert owned * 2 >= len(report["vms"])
    assert "hint:" not in result.output
