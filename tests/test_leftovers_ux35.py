"""Leftovers on the archive and CLI side, each a misleading output (helper ux35).

1. ``auditor history --cluster <typo>`` printed "no published runs" and exited 0, the same as
   for a cluster never published: a script saw success, a reader no hint of the typo. Now
   nothing found is exit 2 (as ``report --period`` with no run of the month,
   ``docs/exit-codes.md``), the line names the clusters the archive does hold (and the
   closest), ``--json`` still prints a JSON list (``[]``); ``report --period`` and ``fleet
   --cluster`` name them too. Rule: ``auditor.publish.history.clusters_held``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from auditor.cli import main
from tests.conftest import REPO, invoke_run
from tests.publish_support import ACCESS_KEY, SECRET_KEY, WeedServer

EXAMPLE = REPO / "examples" / "small-cluster"


def _cli(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


def _publish(tmp_path: Path, archive: str, name: str, at: str, *extra: str) -> Path:
    """Audit the example as cluster ``name`` at ``at`` and publish it to ``archive``."""
    out = tmp_path / f"out-{name}-{at.replace(':', '')}"
    res = invoke_run(EXAMPLE, out, "--cluster-name", name, "--publish", archive, *extra, at=at)
    assert res.exit_code == 0, res.output
    return out


def _s3_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    none = str(tmp_path / "none")
    for key, value in {
        "AWS_ACCESS_KEY_ID": ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
        "AWS_CONFIG_FILE": none,
        "AWS_SHARED_CREDENTIALS_FILE": none,
        "AWS_DEFAULT_REGION": "us-east-1",
    }.items():
        monkeypatch.setenv(key, value)


# 1. history --cluster <typo>


def test_history_of_a_mistyped_cluster_names_the_clusters_held(tmp_path: Path) -> None:
    archive = tmp_path / "archive"
    for name in ("ocp-prod-east", "ocp-prod-west", "ocp-dr-site"):
        _publish(tmp_path, str(archive), name, "2026-11-30T06:00:00Z")
    res = _cli("history", "--cluster", "ocp-prod-eats", "--to", str(archive))
    assert res.exit_code == 2, res.output
    assert res.stdout == ""
    assert res.stderr.strip() == (
        f"Error: no published run of cluster ocp-prod-eats in {archive}: the archive holds 3 "
        "cluster(s): ocp-prod-east, ocp-prod-west, ocp-dr-site (did you mean ocp-prod-east?)"
    )
    res = _cli("history", "--cluster", "ocp-prod-eats", "--to", str(archive), "--json")
    assert res.exit_code == 2 and json.loads(res.stdout) == []
    assert "did you mean ocp-prod-east?" in res.stderr
    # the right name still lists its run, exit 0
    res = _cli("history", "--cluster", "ocp-prod-east", "--to", str(archive), "--json")
    assert res.exit_code == 0 and len(json.loads(res.stdout)) == 1
    # report --period and fleet --cluster name them too
    res = _cli(
        "report", "--period", "2026-11", "--from", str(archive), "--cluster", "ocp-prod-eats",
        "--at", "2026-12-01T01:00:00Z", "--out", str(tmp_path / "p"),
    )  # fmt: skip
    assert res.exit_code == 2 and "did you mean ocp-prod-east?" in res.stderr, res.output
    res = _cli(
        "fleet", "--from", str(archive), "--cluster", "ocp-prod-eats", "--out",
        str(tmp_path / "f"), "--format", "json", "--at", "2026-11-30T07:00:00Z",
    )  # fmt: skip
    fleet = json.loads((tmp_path / "f" / "fleet.json").read_text())
    [cluster] = fleet["clusters"]
    assert any("did you mean ocp-prod-east?" in p for p in cluster["problems"]), cluster


def test_history_of_an_empty_archive_says_it_holds_no_cluster(tmp_path: Path) -> None:
    archive = tmp_path / "archive"
    archive.mkdir()
    res = _cli("history", "--cluster", "ocp-prod-east", "--to", str(archive))
    assert res.exit_code == 2, res.output
    assert "the archive holds no cluster folder" in res.stderr


def test_history_of_many_clusters_shows_a_short_list(tmp_path: Path) -> None:
    from auditor.publish import PublishSettings, open_store
    from auditor.publish.history import HELD_NAMES_SHOWN, clusters_held

    archive = tmp_path / "archive"
    for n in range(12):
        (archive / f"cluster-{n:02d}").mkdir(parents=True)
    text = clusters_held(open_store(PublishSettings.from_url(str(archive))), "zzz")
    assert text == (
        "the archive holds 12 cluster(s): "
        + ", ".join(f"cluster-{n:02d}" for n in range(HELD_NAMES_SHOWN))
        + f" and {12 - HELD_NAMES_SHOWN} more"
    )


def test_history_of_a_mistyped_cluster_in_s3(
    tmp_path: Path, weed: WeedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    _s3_env(tmp_path, monkeypatch)
    weed.client().create_bucket(Bucket="ux35-history")
    url = "s3://ux35-history/evidence"
    conn = ["--endpoint-url", weed.endpoint, "--addressing-style", "path"]
    _publish(tmp_path, url, "ocp-prod-east", "2026-11-30T06:00:00Z", *conn)
    res = _cli("history", "--cluster", "ocp-prod-eats", "--to", url, *conn, "--json")
    assert res.exit_code == 2, res.output
    assert json.loads(res.stdout) == []
    assert (
        "no published run of cluster ocp-prod-eats in s3://ux35-history/evidence "
        f"({weed.endpoint}): the archive holds 1 cluster(s): ocp-prod-east (did you mean "
        "ocp-prod-east?)"
    ) in res.stderr
