"""The evidence archive and history across clusters and runs (helper ux34).

1. Two clusters sharing a name (both exported without one: ``unknown-cluster``) mixed their
   runs: the period report, the fleet roll-up, history and the trend read them as one
   cluster. Now report.json (``cluster.uid``) and manifest.json (``cluster_uid``) record the
   kube-system Namespace's uid, and what reads several runs refuses to mix identities, naming
   them (``--cluster-uid`` chooses one); runs without an identity are said to be unknown.
   Rule: ``auditor.sources.identity.cluster_uid``, ``auditor.publish.identity.select_identity``
   (OpenTelemetry ``k8s.cluster.uid``: the uid of the kube-system namespace).
2. ``auditor history`` (and the trend, which walks the same manifests) stopped at the first
   unreadable or malformed manifest. Now each is named (key and field) and skipped, the
   output is marked incomplete, and the rest is listed. Rule:
   ``auditor.publish.history.list_runs`` (``unreadable``).
3. Runs spooled (before lo32) for a target that is itself misconfigured (COMPLIANCE on a
   bucket without Object Lock, a bucket that does not exist) were retried by ``serve`` at
   every tick, for ever. Now the spool's retry applies lo32's test: such a run moves to
   ``<spool_dir>/refused/`` and the journal says ``refused: ...``. Rule:
   ``auditor.publish.publisher.retry_spool`` (``refuse_misconfigured``),
   ``auditor.service.jobs.ServiceRuntime.drain_spool``. A real S3 server.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from auditor.cli import main
from tests.conftest import REPO, invoke_run
from tests.publish_support import WeedServer, weed_credentials

EXAMPLE = REPO / "examples" / "small-cluster"
UID_A = "0d7c9c3e-1111-4a4a-9a9a-aaaaaaaaaaaa"
UID_B = "5f2e8b1d-2222-4b4b-8b8b-bbbbbbbbbbbb"
KUBE_SYSTEM = """- apiVersion: v1
  kind: Namespace
  metadata:
    labels:
      kubernetes.io/metadata.name: kube-system
    name: kube-system
    uid: {uid}
"""


def _export(tmp_path: Path, uid: str | None) -> Path:
    """The example export (no cluster name) with a kube-system Namespace of ``uid``."""
    root = tmp_path / f"export-{uid or 'none'}"
    if not root.exists():
        shutil.copytree(EXAMPLE, root)
        if uid is not None:
            path = root / "namespaces.yaml"
            text = path.read_text()
            path.write_text(text.replace("items:\n", "items:\n" + KUBE_SYSTEM.format(uid=uid), 1))
    return root


def _publish(tmp_path: Path, archive: Path, uid: str | None, at: str) -> dict[str, Any]:
    out = tmp_path / f"out-{uid or 'none'}-{at.replace(':', '')}"
    res = invoke_run(_export(tmp_path, uid), out, "--publish", str(archive), at=at)
    assert res.exit_code == 0, res.output
    return json.loads((out / "report.json").read_text())  # type: ignore[no-any-return]


def _cli(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


def test_the_kube_system_uid_is_recorded_in_the_report_and_the_manifest(tmp_path: Path) -> None:
    archive = tmp_path / "archive"
    report = _publish(tmp_path, archive, UID_A, "2026-11-30T06:00:00Z")
    assert (report["cluster"]["uid"], report["cluster"]["uid_source"]) == (
        UID_A,
        "kube-system-namespace",
    )
    [manifest] = archive.glob("unknown-cluster/*/*/*/*/manifest.json")
    doc = json.loads(manifest.read_text())
    assert (doc["cluster_uid"], doc["manifest_version"]) == (UID_A, "1.1")
    # no kube-system Namespace in the export: unknown, and said so
    plain = _publish(tmp_path, tmp_path / "other", None, "2026-11-30T06:00:00Z")
    assert (plain["cluster"]["uid"], plain["cluster"]["uid_source"]) == (None, "unknown")
    [manifest] = (tmp_path / "other").glob("unknown-cluster/*/*/*/*/manifest.json")
    assert json.loads(manifest.read_text())["cluster_uid"] is None


def test_two_clusters_sharing_a_name_are_not_mixed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Cluster A at 06:00, cluster B at 08:00, both ``unknown-cluster``: the period report
    computed one attainment over both, history listed both, the fleet showed B's run as the
    cluster's (A hidden), and B's trend compared B with A's VMs."""
    archive = tmp_path / "archive"
    _publish(tmp_path, archive, UID_A, "2026-11-30T06:00:00Z")
    out_b = tmp_path / "out-b"
    res = invoke_run(
        _export(tmp_path, UID_B), out_b, "--publish", str(archive), at="2026-11-30T08:00:00Z"
    )
    assert res.exit_code == 0, res.output
    assert any(
        "cluster name unknown-cluster is shared by two clusters" in r.getMessage()
        and UID_A in r.getMessage()
        and UID_B in r.getMessage()
        for r in caplog.records
    ), [r.getMessage() for r in caplog.records]
    trend = json.loads((out_b / "trend.json").read_text())
    assert trend["previous"] is None and trend["cluster_uid"] == UID_B  # A is another cluster

    period = ["report", "--period", "2026-11", "--from", str(archive)]
    period += ["--cluster", "unknown-cluster", "--at", "2026-12-01T01:00:00Z"]
    res = _cli(*period, "--out", str(tmp_path / "p1"))
    assert res.exit_code == 2, res.output
    assert "of 2 different clusters that share this name" in res.output
    assert f"kube-system uid {UID_A}: 1 run(s)" in res.output
    assert f"kube-system uid {UID_B}: 1 run(s)" in res.output
    res = _cli(*period, "--out", str(tmp_path / "p2"), "--cluster-uid", UID_A)
    assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / "p2" / "period.json").read_text())
    assert doc["cluster_uid"] == UID_A and len(doc["runs"]) == 1
    assert any(f"not of cluster identity {UID_A}" in p and UID_B in p for p in doc["problems"])

    history = ["history", "--cluster", "unknown-cluster", "--to", str(archive)]
    res = _cli(*history)
    assert res.exit_code == 2 and "share this name" in res.output, res.output
    res = _cli(*history, "--json", "--cluster-uid", UID_B)
    assert res.exit_code == 0, res.output
    listed = json.loads(res.stdout)
    assert [r["cluster_uid"] for r in listed] == [UID_B]

    res = _cli(
        "fleet", "--from", str(archive), "--out", str(tmp_path / "fleet"),
        "--at", "2026-11-30T09:00:00Z",
    )  # fmt: skip
    fleet = json.loads((tmp_path / "fleet" / "fleet.json").read_text())
    [cluster] = fleet["clusters"]
    assert cluster["status"] == "unreadable", cluster
    assert any("share this name" in p and UID_A in p and UID_B in p for p in cluster["problems"])


def test_serve_reports_the_month_of_its_own_cluster(tmp_path: Path) -> None:
    """``serve``'s monthly schedule (``period_report``) built last month's report from every
    run under its name: cluster B's monthly run published A's and B's figures as one. Now it
    reads its own identity's runs when another appears, naming what was left out."""
    from datetime import UTC, datetime

    from auditor.config import parse_settings
    from auditor.period.job import add_period_report

    archive = tmp_path / "archive"
    _publish(tmp_path, archive, UID_A, "2026-11-30T06:00:00Z")
    report_b = _publish(tmp_path, archive, UID_B, "2026-11-30T08:00:00Z")
    settings = parse_settings(
        {"publish": {"url": str(archive), "spool_dir": str(tmp_path / "spool")}},
        path=tmp_path / "c.yaml",
    )
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "report.json").write_text(json.dumps(report_b))
    add_period_report(settings, report_b, run_dir, datetime(2026, 12, 1, 7, tzinfo=UTC))
    doc = json.loads((run_dir / "period-2026-11" / "period.json").read_text())
    assert doc["runs"] == [report_b["run"]["id"]] and doc["cluster_uid"] == UID_B
    assert any(f"not of cluster identity {UID_B}" in p and UID_A in p for p in doc["problems"])


def test_runs_archived_before_identities_are_said_to_be_unknown(tmp_path: Path) -> None:
    """A run whose manifest has no ``cluster_uid`` (archived by an older version) beside runs
    of one identity: counted on the name, and named as of unknown identity, never taken to
    be that cluster's."""
    archive = tmp_path / "archive"
    _publish(tmp_path, archive, None, "2026-11-30T05:00:00Z")
    [old] = archive.glob("unknown-cluster/*/*/*/*/manifest.json")
    doc = json.loads(old.read_text())
    assert doc.pop("cluster_uid") is None
    doc["manifest_version"] = "1.0"
    old.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    _publish(tmp_path, archive, UID_A, "2026-11-30T06:00:00Z")
    res = _cli(
        "report", "--period", "2026-11", "--from", str(archive), "--cluster", "unknown-cluster",
        "--at", "2026-12-01T01:00:00Z", "--out", str(tmp_path / "p"),
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    period = json.loads((tmp_path / "p" / "period.json").read_text())
    assert (period["cluster_uid"], period["runs_unknown_identity"], len(period["runs"])) == (
        UID_A,
        1,
        2,
    )
    assert any("no cluster identity recorded" in p for p in period["problems"])
    res = _cli("history", "--cluster", "unknown-cluster", "--to", str(archive))
    assert res.exit_code == 0, res.output
    rows = res.stdout.splitlines()
    assert rows[1].endswith("  unknown") and rows[2].endswith(f"  {UID_A}"), rows
    assert "1 run(s) with no cluster identity recorded" in res.stderr


def test_one_unreadable_manifest_is_named_and_skipped(tmp_path: Path) -> None:
    """Three runs, the middle one's manifest malformed (a count that is no number, as an
    edited copy or a newer writer may leave): history exited 2 listing nothing, and the next
    run's trend was not computed at all. Now history lists the two others, names the key and
    the field, says INCOMPLETE and exits 2; the trend skips it and names it."""
    archive = tmp_path / "archive"
    for at in ("2026-11-30T04:00:00Z", "2026-11-30T05:00:00Z"):
        _publish(tmp_path, archive, UID_A, at)
    [broken] = archive.glob("unknown-cluster/*/*/*/20261130T050000Z-*/manifest.json")
    doc = json.loads(broken.read_text())
    doc["summary"]["readiness"]["READY"] = "one"
    broken.write_text(json.dumps(doc))
    third = _publish(tmp_path, archive, UID_A, "2026-11-30T06:00:00Z")
    out = next(tmp_path.glob("out-*-2026-11-30T060000Z"))
    trend = json.loads((out / "trend.json").read_text())
    assert trend["previous"]["audit_time"] == "2026-11-30T04:00:00Z"
    assert [p.split(": unreadable")[0] for p in trend["problems"]] == [str(broken)]
    assert "field 'summary.readiness.READY' is not a count" in trend["problems"][0]

    res = _cli("history", "--cluster", "unknown-cluster", "--to", str(archive))
    assert res.exit_code == 2, res.output
    assert f"{broken}: unreadable manifest (field 'summary.readiness.READY' is not a count)" in (
        res.stderr
    )
    rows = res.stdout.splitlines()
    assert rows[0] == "INCOMPLETE: 1 run(s) not listed, their manifest unreadable"
    assert [r.split()[1] for r in rows[2:]] == ["2026-11-30T04:00:00Z", third["run"]["audit_time"]]
    assert "history INCOMPLETE" in res.stderr
    res = _cli("history", "--cluster", "unknown-cluster", "--to", str(archive), "--json")
    assert res.exit_code == 2
    assert len(json.loads(res.stdout)) == 2


@pytest.mark.parametrize("lock", ["plain", "missing"])
def test_a_run_spooled_for_a_misconfigured_target_leaves_the_retry_loop(
    tmp_path: Path, weed: WeedServer, lock: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from datetime import UTC, datetime

    from auditor.config import parse_settings
    from auditor.publish import publish_run, publish_settings, spool
    from auditor.service.jobs import ServiceRuntime
    from auditor.service.journal import RunJournal
    from auditor.service.metrics import ServiceMetrics

    bucket = f"ux34-{lock}"
    if lock == "plain":
        weed.client().create_bucket(Bucket=bucket)
    for key, value in weed_credentials(tmp_path).items():
        monkeypatch.setenv(key, value)
    publish = {
        "bucket": bucket,
        "prefix": "evidence",
        "endpoint_url": weed.endpoint,
        "region": "us-east-1",
        "addressing_style": "path",
        "object_lock_mode": "COMPLIANCE",
        "object_lock_days": 1,
        "max_attempts": 1,
        "spool_dir": str(tmp_path / "spool"),
    }
    raw = {
        "cluster_name": "example-cluster",
        "source": {"type": "directory", "path": str(EXAMPLE)},
        "report": {"out_dir": str(tmp_path / "reports"), "formats": ["json"]},
        "publish": publish,
        "schedules": [{"id": "daily", "cron": "0 6 * * *", "publish": True}],
        "service": {"state_dir": str(tmp_path / "state")},
    }
    # the run as serve spooled it before lo32: the folder, the entry, the journal row
    slot = datetime(2026, 11, 29, 6, 0, 0, tzinfo=UTC)
    run_dir = tmp_path / "reports" / "daily" / "20261129T060000Z"
    assert invoke_run(EXAMPLE, run_dir, at="2026-11-29T06:00:00Z").exit_code == 0
    target = publish_settings(publish)
    result = publish_run(run_dir, target)  # spooled, as serve's publisher did then
    assert not result.published and result.spooled is not None
    journal = RunJournal(tmp_path / "state" / "runs.sqlite")
    journal.begin("daily", slot, slot)
    journal.finish("daily", slot, slot, "success", str(run_dir))
    journal.set_publish("daily", slot, f"spooled: {result.error}", result.run_id)
    runtime = ServiceRuntime(
        parse_settings(raw, path=tmp_path / "config.yaml"),
        journal,
        ServiceMetrics(),
        clock=lambda: datetime(2026, 11, 30, 5, 0, 0, tzinfo=UTC),
    )
    runtime.drain_spool()
    why = "has no Object Lock enabled" if lock == "plain" else "does not exist"
    [rec] = journal.records("daily")
    assert rec.publish is not None and rec.publish.startswith("refused: "), rec.publish
    assert f"bucket '{bucket}' {why}" in rec.publish and "not retried" in rec.publish
    assert spool.pending(target.spool_dir, target) == []  # out of the retry loop
    [kept] = spool.refused(target.spool_dir)
    assert kept.name == result.spooled.name and (kept / "run" / "report.json").is_file()
    assert why in (kept / "error.txt").read_text()
    assert runtime.metrics.spool_backlog._value.get() == 0
    runtime.drain_spool()  # nothing left to retry, the journal row stays
    assert journal.records("daily")[0].publish == rec.publish


def test_a_manifest_the_store_refuses_is_named_and_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One run's manifest refused by the store (S3 AccessDenied on one object, a KMS key
    refused for it): history and the period report stopped (exit 2) at it. Now each names
    it, skips it, and reads the others."""
    from auditor.publish.errors import StoreAuthError
    from auditor.publish.local import LocalStore

    archive = tmp_path / "archive"
    for at in ("2026-11-30T04:00:00Z", "2026-11-30T05:00:00Z"):
        _publish(tmp_path, archive, UID_A, at)
    real = LocalStore.get

    def refuse(self: LocalStore, key: str) -> bytes | None:
        if "20261130T040000Z" in key and key.endswith("manifest.json"):
            raise StoreAuthError(f"GetObject on {key}: AccessDenied: Access Denied")
        return real(self, key)

    monkeypatch.setattr(LocalStore, "get", refuse)
    res = _cli("history", "--cluster", "unknown-cluster", "--to", str(archive))
    assert res.exit_code == 2 and "AccessDenied" in res.stderr, res.output
    assert "2026-11-30T05:00:00Z" in res.stdout
    res = _cli(
        "report", "--period", "2026-11", "--from", str(archive), "--cluster", "unknown-cluster",
        "--at", "2026-12-01T01:00:00Z", "--out", str(tmp_path / "p"),
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    period = json.loads((tmp_path / "p" / "period.json").read_text())
    assert len(period["runs"]) == 1 and any("AccessDenied" in p for p in period["problems"])


@pytest.mark.parametrize("scope", [(), ("billing",)])
def test_a_live_run_reads_the_identity_with_and_without_namespaces(
    tmp_path: Path, scope: tuple[str, ...]
) -> None:
    """A live run lists every Namespace, kube-system among them; with ``-n`` it lists none, so
    its runs had no identity: it now GETs kube-system for the identity alone (forbidden:
    unknown, said so)."""
    from auditor.config import AuditSettings
    from auditor.pipeline import audit_data
    from tests.conftest import AUDIT_AT, report_doc
    from tests.kubeapi_server import Faults
    from tests.live_support import fast_options, serve

    root = _export(tmp_path, UID_A)
    for faults, uid in ((None, UID_A), (Faults(forbidden={"Namespace"}), None)):
        (tmp_path / f"live-{uid}").mkdir()
        with serve(tmp_path / f"live-{uid}", root=root, faults=faults) as live:
            data = live.collect(options=fast_options(namespaces=scope), cluster_name="c")
        report = report_doc(audit_data(data, AuditSettings(cluster_name="c"), at=AUDIT_AT))
        assert report["cluster"]["uid"] == uid, (scope, faults)
        assert report["cluster"]["uid_source"] == (
            "unknown" if uid is None else "kube-system-namespace"
        )
    assert "kube-system" not in {ns["metadata"]["name"] for ns in data.of("Namespace")} or not scope
