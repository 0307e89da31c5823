"""``auditor fleet``: runs of three clusters published to a real SeaweedFS bucket, rolled up.

east: two runs (the newer one must stand for it), current. west: one run 54 h before
the reference time (stale: its READY VM must not count as READY). lab: an export
without services.yaml (the run says incomplete). Counts and root causes are recomputed
here from the published report.json files.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from auditor.cli import main
from auditor.fleet import ClusterRun, FleetInput, build_fleet, dump_fleet_schema
from auditor.fleet.model import FleetVerification
from auditor.models import SEVERITY_ORDER, Severity
from auditor.publish import PublishSettings, publish_run
from tests.conftest import REPO, invoke_run
from tests.publish_support import WeedServer, weed_credentials

EXAMPLE = REPO / "examples" / "small-cluster"
BUCKET = "fleet-evidence"
AT = "2026-11-30T12:00:00Z"
RUNS = {  # cluster -> audit times, oldest first
    "east": ["2026-11-29T06:00:00Z", "2026-11-30T06:00:00Z"],
    "west": ["2026-11-28T06:00:00Z"],
    "lab": ["2026-11-30T07:00:00Z"],
}


@pytest.fixture(scope="module")
def weed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WeedServer]:
    server = WeedServer(tmp_path_factory.mktemp("weed"))
    server.start()
    server.client().create_bucket(Bucket=BUCKET)
    yield server
    server.stop(crash=True)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Path]]:
    """Run folders written by the real pipeline, per cluster, oldest first."""
    base = tmp_path_factory.mktemp("fleet-runs")
    lab = base / "lab-export"
    shutil.copytree(EXAMPLE, lab)
    (lab / "services.yaml").unlink()  # Services unknown: RR-NET-003 cannot be evaluated
    out: dict[str, list[Path]] = {}
    for cluster, times in RUNS.items():
        for i, at in enumerate(times):
            run_dir = base / f"{cluster}-{i}"
            source = (
                lab if cluster == "lab" else _exported_at(EXAMPLE, base / f"{cluster}-{i}-in", at)
            )
            result = invoke_run(
                source, run_dir, "--cluster-name", cluster, "--format", "json,csv", at=at
            )
            assert result.exit_code == 0, result.output
            out.setdefault(cluster, []).append(run_dir)
    return out


def _exported_at(export: Path, into: Path, at: str) -> Path:
    """A copy of ``export`` as it would have been taken at ``at``: without the objects
    created after it, nor the status times after it (a location validated, a Schedule's
    last run): an audit at ``at`` names either as collection problems (trial ux27; fz32)."""
    import yaml

    from auditor.sources.asof import EVENT_TIMES

    into.mkdir()
    for path in export.glob("*.yaml"):
        doc = yaml.safe_load(path.read_text())
        doc["items"] = [
            o for o in doc["items"] if str(o["metadata"].get("creationTimestamp") or "") <= at
        ]
        for o in doc["items"]:
            status = o.get("status") or {}
            for key in EVENT_TIMES:
                if isinstance(status.get(key), str) and status[key] > at:
                    if key == "lastValidationTime":
                        status[key] = at  # Velero revalidates a location every minute
                    else:
                        del status[key]  # had not happened yet
        (into / path.name).write_text(yaml.safe_dump(doc))
    return into


def _publish(weed: WeedServer, tmp: Path, prefix: str, run_dirs: list[Path], **extra: Any) -> None:
    settings: PublishSettings = weed.settings(BUCKET, tmp, prefix=prefix, **extra)
    for run_dir in run_dirs:
        assert publish_run(run_dir, settings, store=weed.store(settings)).published


def _fleet(weed: WeedServer, prefix: str, out: Path, *extra: str) -> Any:
    return CliRunner().invoke(
        main,
        ["fleet", "--from", f"s3://{BUCKET}/{prefix}", "--at", AT, "--out", str(out),
         "--endpoint-url", weed.endpoint, "--addressing-style", "path", "--region",
         "us-east-1", *extra],
    )  # fmt: skip


@pytest.fixture(autouse=True)
def _credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for key, value in weed_credentials(tmp_path).items():
        monkeypatch.setenv(key, value)


def _report(run_dir: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((run_dir / "report.json").read_text())
    return doc


def _expected_causes(
    reports: dict[str, dict[str, Any]],
) -> list[tuple[str, str, int, dict[str, int]]]:
    """(id, severity, VMs, cluster -> VMs): the VMs' ``root_causes`` (schema 1.1), else one
    cause per check id with a FAIL/ERROR finding."""
    vms: Counter[str] = Counter()
    where: dict[str, Counter[str]] = {}
    worst: dict[str, int] = {}
    for cluster, doc in reports.items():
        for vm in doc["vms"]:
            if vm.get("root_causes"):
                failing = {c["id"]: c["severity"] for c in vm["root_causes"]}
            else:
                failing = {
                    f["check_id"].lower(): f["severity"]
                    for f in vm["findings"]
                    if f["status"] in ("FAIL", "ERROR")
                }
            for cid, sev in failing.items():
                vms[cid] += 1
                where.setdefault(cid, Counter())[cluster] += 1
                worst[cid] = min(worst.get(cid, 9), SEVERITY_ORDER.index(Severity(sev)))
    order = sorted(vms, key=lambda c: (worst[c], -vms[c], c))
    return [(c, SEVERITY_ORDER[worst[c]].value, vms[c], dict(sorted(where[c].items())))
            for c in order]  # fmt: skip


def test_fleet_rolls_up_latest_runs_from_s3(
    weed: WeedServer, runs: dict[str, list[Path]], tmp_path: Path
) -> None:
    _publish(weed, tmp_path, "fleet", [d for dirs in runs.values() for d in dirs])
    result = _fleet(weed, "fleet", tmp_path / "out")
    assert result.exit_code == 0, result.output
    doc = json.loads((tmp_path / "out" / "fleet.json").read_text())
    latest = {c: _report(dirs[-1]) for c, dirs in runs.items()}
    clusters = {c["name"]: c for c in doc["clusters"]}
    assert sorted(clusters) == ["east", "lab", "west"]
    assert clusters["east"]["run"]["id"] == latest["east"]["run"]["id"]  # the newer of two
    assert {n: c["status"] for n, c in clusters.items()} == {
        "east": "current",
        "west": "stale",
        "lab": "incomplete",
    }
    assert clusters["west"]["run"]["age_hours"] == 54.0
    assert "54.0 h old" in clusters["west"]["problems"][0]
    assert "RR-NET-003" in " ".join(clusters["lab"]["problems"])
    for name, c in clusters.items():
        reported = Counter(vm["readiness"] for vm in latest[name]["vms"])
        assert c["readiness"] == {s: reported.get(s, 0) for s in c["readiness"]}
        assert c["vms"] == len(latest[name]["vms"])
        assert c["verification"] == {"manifest": "verified", "signature": "unsigned", "detail": []}
    # west's run says one VM is READY; stale, it counts as UNKNOWN fleet-wide
    assert clusters["west"]["readiness"]["READY"] == 1
    assert clusters["west"]["readiness_counted"]["READY"] == 0
    assert (
        clusters["west"]["readiness_counted"]["UNKNOWN"]
        == 1 + clusters["west"]["readiness"]["UNKNOWN"]
    )
    assert clusters["lab"]["run"]["complete"] is False
    assert doc["summary"]["readiness"]["READY"] == clusters["east"]["readiness"]["READY"] == 1
    assert doc["summary"]["vms"] == 15 and doc["summary"]["runs_verified"] == 3
    assert doc["summary"]["clusters_by_status"] == {
        "current": 1, "stale": 1, "incomplete": 1, "unverified": 0, "unreadable": 0,
    }  # fmt: skip
    # root causes: the VMs' root_causes, counted in VMs per cluster
    got = [(r["id"], r["severity"], r["vms"], r["clusters"]) for r in doc["root_causes"]]
    assert got == _expected_causes(latest)
    assert not any(r["derived"] for r in doc["root_causes"])  # all reports carry root_causes
    for r in doc["root_causes"]:  # generic action, plus one VM's own filled-in fix
        cluster, vm = r["example_vm"].split(" ")
        entry = next(v for v in latest[cluster]["vms"] if f"{v['namespace']}/{v['name']}" == vm)
        cause = next(c for c in entry["root_causes"] if c["id"] == r["id"])
        assert r["example_action"] == cause["first_action"]
        catalog = {c["id"]: c["remediation"] for c in latest[cluster]["checks"]}
        assert r["first_action"] == catalog[r["check_ids"][0]]
    assert doc["root_causes"][0]["severity"] == "high"
    # owners, worst first: NOT_READY VMs, then VMs not counted READY (only east's READY counts)
    tally: dict[str, Counter[str]] = {}
    for name, rep in latest.items():
        for vm in rep["vms"]:
            t = tally.setdefault(vm["owner"], Counter())
            t["vms"] += 1
            t["nr"] += vm["readiness"] == "NOT_READY"
            t["ready"] += vm["readiness"] == "READY" and name == "east"
    order = sorted(
        tally, key=lambda o: (-tally[o]["nr"], -(tally[o]["vms"] - tally[o]["ready"]), o)
    )
    assert [(o["owner"], o["vms"], o["readiness"]["READY"]) for o in doc["owners"]] == [
        (o, tally[o]["vms"], tally[o]["ready"]) for o in order
    ]
    # CSV and HTML carry the same figures
    rows = list(csv.DictReader(io.StringIO((tmp_path / "out" / "fleet-clusters.csv").read_text())))
    assert [(r["cluster"], r["status"], r["counted_ready"]) for r in rows] == [
        ("east", "current", "1"), ("lab", "incomplete", "0"), ("west", "stale", "0"),
    ]  # fmt: skip
    html = (tmp_path / "out" / "fleet.html").read_text()
    assert "<script" not in html and "never counts as ready" in html
    assert html.count('class="status-stale"') == 1
    assert (tmp_path / "out" / "fleet.pdf").read_bytes().startswith(b"%PDF")
    assert "Warning: west is stale" in result.output
    assert "3 clusters (1 current, 3 runs verified), 15 VMs: " in result.output


def test_fleet_says_which_runs_were_verified(
    weed: WeedServer, runs: dict[str, list[Path]], tmp_path: Path
) -> None:
    key = Ed25519PrivateKey.generate()
    pem = tmp_path / "signing.pem"
    pem.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                    serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))  # fmt: skip
    public = tmp_path / "signing.pub"
    public.write_bytes(key.public_key().public_bytes(serialization.Encoding.PEM,
                       serialization.PublicFormat.SubjectPublicKeyInfo))  # fmt: skip
    signed = [shutil.copytree(runs["east"][-1], tmp_path / "east")]
    _publish(weed, tmp_path, "signed", signed, signing_key_file=pem)
    _publish(weed, tmp_path / "u", "signed", [shutil.copytree(runs["lab"][-1], tmp_path / "lab")])
    # tamper with lab's vms.csv in the bucket: its report.json still matches, the run does not
    lab_id = _report(runs["lab"][-1])["run"]["id"]
    weed.client().put_object(
        Bucket=BUCKET, Key=f"signed/lab/2026/11/30/{lab_id}/vms.csv", Body=b"changed\n"
    )
    result = _fleet(
        weed, "signed", tmp_path / "out", "--public-key", str(public), "--format", "json"
    )
    assert result.exit_code == 0, result.output
    doc = json.loads((tmp_path / "out" / "fleet.json").read_text())
    east, lab = doc["clusters"]
    assert (east["name"], east["status"], east["verification"]["signature"]) == (
        "east", "current", "verified",
    )  # fmt: skip
    assert (lab["status"], lab["verification"]["manifest"], lab["verification"]["signature"]) == (
        "unverified", "failed", "failed",
    )  # fmt: skip
    assert any(line.startswith("CHANGED vms.csv") for line in lab["verification"]["detail"])
    assert doc["signatures_checked"] is True and doc["summary"]["runs_verified"] == 1
    assert "2 clusters (1 current, 1 run verified), " in result.output  # not "1 runs"
    # lab's READY count (none: its READY VM was already UNKNOWN) never adds to the fleet's
    assert doc["summary"]["readiness"]["READY"] == east["readiness"]["READY"]


def test_fleet_exit_codes_and_period(
    weed: WeedServer, runs: dict[str, list[Path]], tmp_path: Path
) -> None:
    empty = _fleet(weed, "nothing-here", tmp_path / "o1")
    assert empty.exit_code == 2 and "no cluster folder" in empty.output
    bad = _fleet(weed, "fleet", tmp_path / "o2", "--period", "2026-13")
    assert bad.exit_code == 2 and "2026-13" in bad.output
    # a month with no run of any cluster: written, every cluster unreadable, exit 4
    _publish(weed, tmp_path, "fleet", [d for dirs in runs.values() for d in dirs])
    october = _fleet(weed, "fleet", tmp_path / "o3", "--period", "2026-10", "--format", "json")
    assert october.exit_code == 4, october.output
    doc = json.loads((tmp_path / "o3" / "fleet.json").read_text())
    assert {c["status"] for c in doc["clusters"]} == {"unreadable"}
    # November: each cluster's last run of the month, with the month's run count
    nov = _fleet(weed, "fleet", tmp_path / "o4", "--period", "2026-11", "--format", "json")
    assert nov.exit_code == 0, nov.output
    doc = json.loads((tmp_path / "o4" / "fleet.json").read_text())
    assert {c["name"]: c["period"]["runs"] for c in doc["clusters"]} == {
        c: len(t) for c, t in RUNS.items()
    }
    assert doc["period"] == "2026-11" and doc["generated_at"] == AT


def test_fleet_schema_is_shipped() -> None:
    assert (REPO / "docs" / "fleet-schema.json").read_bytes() == dump_fleet_schema()


def test_reports_without_root_causes_get_one_per_failing_check(runs: dict[str, list[Path]]) -> None:
    """An older report.json (no root_causes): each FAIL/ERROR check id is a root cause."""
    old = _report(runs["lab"][-1])
    for vm in old["vms"]:
        del vm["root_causes"]
    verified = FleetVerification(manifest="verified", signature="unsigned", detail=[])
    data = FleetInput("archive", [ClusterRun("lab", old, "lab/x", "lab/x/", verified)])
    fleet = build_fleet(data, at=datetime(2026, 11, 30, 12, tzinfo=UTC))
    got = [(r.id, r.severity.value, r.vms, r.clusters) for r in fleet.root_causes]
    assert got == _expected_causes({"lab": old})
    assert got and all(r.derived and r.check_ids == [r.id.upper()] for r in fleet.root_causes)
    assert fleet.clusters[0].status == "incomplete"


def test_malformed_reports_are_unreadable_never_a_crash(
    runs: dict[str, list[Path]], tmp_path: Path
) -> None:
    """Sealed, published runs whose report.json is not usable: named, not counted, exit 4."""
    archive = tmp_path / "archive"
    target = PublishSettings(local_dir=archive, spool_dir=tmp_path / "spool")
    for cluster, change in (("east", {"vms": "junk"}), ("west", {"naive": True})):
        run_dir = shutil.copytree(runs[cluster][-1], tmp_path / cluster)
        doc = _report(run_dir)
        if change.get("naive"):
            doc["run"]["audit_time"] = doc["run"]["audit_time"].rstrip("Z")
        else:
            doc.update(change)
        (run_dir / "report.json").write_text(json.dumps(doc))
        (run_dir / "manifest.json").unlink()  # a sealed run changed in place is refused
        assert publish_run(run_dir, target).published
    result = CliRunner().invoke(
        main, ["fleet", "--from", str(archive), "--at", AT, "--out", str(tmp_path / "o"),
               "--format", "json,csv"],
    )  # fmt: skip
    assert result.exit_code == 4, result.output
    doc = json.loads((tmp_path / "o" / "fleet.json").read_text())
    problems = {c["name"]: (c["status"], " ".join(c["problems"])) for c in doc["clusters"]}
    assert problems["east"][0] == problems["west"][0] == "unreadable"
    assert "vms is not a list" in problems["east"][1]
    assert "has no time zone" in problems["west"][1]
    assert doc["summary"]["vms"] == 0 and doc["root_causes"] == []


def test_period_mode_names_a_run_without_time_zone(
    runs: dict[str, list[Path]], tmp_path: Path
) -> None:
    """--period over a local archive: a naive audit time is a named problem, never a crash."""
    archive = tmp_path / "archive"
    target = PublishSettings(local_dir=archive, spool_dir=tmp_path / "spool")
    good, bad = (shutil.copytree(d, tmp_path / f"e{i}") for i, d in enumerate(runs["east"]))
    doc = _report(bad)
    doc["run"]["audit_time"] = doc["run"]["audit_time"].rstrip("Z")
    (bad / "report.json").write_text(json.dumps(doc))
    (bad / "manifest.json").unlink()  # a sealed run changed in place is refused
    for run_dir in (good, bad):
        assert publish_run(run_dir, target).published
    result = CliRunner().invoke(
        main, ["fleet", "--from", str(archive), "--period", "2026-11", "--at", AT,
               "--out", str(tmp_path / "o"), "--format", "json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    [east] = json.loads((tmp_path / "o" / "fleet.json").read_text())["clusters"]
    assert east["run"]["id"] == _report(good)["run"]["id"] and east["period"]["runs"] == 1
    assert any("has no time zone" in p for p in east["problems"])
