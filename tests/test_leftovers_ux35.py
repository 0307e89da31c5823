"""Leftovers on the archive and CLI side, each a misleading output (helper ux35).

1. ``auditor history --cluster <typo>`` printed "no published runs" and exited 0, the same as
   for a cluster never published: a script saw success, a reader no hint of the typo. Now
   nothing found is exit 2 (as ``report --period`` with no run of the month,
   ``docs/exit-codes.md``), the line names the clusters the archive does hold (and the
   closest), ``--json`` still prints a JSON list (``[]``); ``report --period`` and ``fleet
   --cluster`` name them too. Rule: ``auditor.publish.history.clusters_held``.
2. ``period.json`` had no complete/incomplete flag: runs skipped (an unreadable manifest,
   another identity) appeared only under ``problems``, among lines that leave nothing out,
   and a counted run that read part of its cluster was not named at all. Now ``complete``,
   ``incomplete_reasons``, ``runs_left_out`` (by why) and ``runs_incomplete``; period.html
   says "Incomplete", period.csv ``period_complete``. Rule: ``auditor.period.compute``
   (``docs/period-report.md``, Completeness).
3. ``fleet.json`` had no per-cluster identity: it showed only inside ``problems``. Now each
   cluster has ``cluster_uid`` (null when unknown; ``fleet-clusters.csv`` too), and a run
   whose report.json and manifest name two identities is not used (as the period report).
   Rule: ``auditor.fleet.model.FleetCluster``, ``docs/fleet.md``, ``docs/fleet-schema.json``.
4. ``auditor publish --retry`` kept a spooled run whose target is misconfigured (no such
   bucket, no Object Lock for the lock mode) and exited 3 at every retry, for ever, while
   ``serve`` moves it to ``<spool_dir>/refused/`` (ux34). Now the CLI does the same, names
   it ``REFUSED`` and exits 2 (as ``publish --from-run`` to that target) when nothing else
   waits. Rule: ``auditor.publish.publisher.retry_spool`` (``refuse_misconfigured``).
5. The README did not say that a run into a folder of an earlier run removes that run's
   artifacts (deliberate, ``tests/test_run_folder_reuse.py``): ``--format json`` into the
   folder of a ``json,html,csv`` run silently loses the HTML and CSVs. Now said where
   ``--out`` is described, and in ``run --help``.
6. The HTML report's VM table (882 px) and check catalog (904 px) ran past an 800 px window
   with the example's short names (nine columns at their narrowest; reference URLs). Now
   any cell of either breaks a long word at its edge and both fit; narrower, each scrolls in
   its own box. Rule: ``report_templates/report.css`` (``.table-scroll``).
"""

from __future__ import annotations

import csv
import io
import json
import shutil
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
    spool = ["--spool-dir", str(tmp_path / "spool")]
    res = invoke_run(
        EXAMPLE, out, "--cluster-name", name, "--publish", archive, *spool, *extra, at=at
    )
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
        _publish(tmp_path, str(archive), name, "2026-11-30T08:00:00Z")
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
    _publish(tmp_path, url, "ocp-prod-east", "2026-11-30T08:00:00Z", *conn)
    res = _cli("history", "--cluster", "ocp-prod-eats", "--to", url, *conn, "--json")
    assert res.exit_code == 2, res.output
    assert json.loads(res.stdout) == []
    assert (
        "no published run of cluster ocp-prod-eats in s3://ux35-history/evidence "
        f"({weed.endpoint}): the archive holds 1 cluster(s): ocp-prod-east (did you mean "
        "ocp-prod-east?)"
    ) in res.stderr


# 2. period.json completeness

UID_A = "0d7c9c3e-1111-4a4a-9a9a-aaaaaaaaaaaa"
UID_B = "5f2e8b1d-2222-4b4b-8b8b-bbbbbbbbbbbb"
KUBE_SYSTEM = """- apiVersion: v1
  kind: Namespace
  metadata:
    name: kube-system
    uid: {uid}
"""


def _export(tmp_path: Path, uid: str | None, *, broken_backups: bool = False) -> Path:
    """The example export with a kube-system Namespace of ``uid`` (``broken_backups``: a
    backups.yaml that is no YAML, so the run reads only part of the cluster)."""
    root = tmp_path / f"export-{uid or 'none'}-{int(broken_backups)}"
    if not root.exists():
        shutil.copytree(EXAMPLE, root)
        if uid is not None:
            path = root / "namespaces.yaml"
            text = path.read_text()
            path.write_text(text.replace("items:\n", "items:\n" + KUBE_SYSTEM.format(uid=uid), 1))
        if broken_backups:
            (root / "backups.yaml").write_text("{\n")
    return root


def _archive_run(tmp_path: Path, archive: Path, export: Path, at: str) -> Path:
    out = tmp_path / f"run-{export.name}-{at.replace(':', '')}"
    spool = ["--spool-dir", str(tmp_path / "spool")]
    res = invoke_run(
        export, out, "--cluster-name", "prod", "--publish", str(archive), *spool, at=at
    )
    assert res.exit_code == 0, res.output
    stamp = at.replace("-", "").replace(":", "")
    [manifest] = archive.glob(f"prod/*/*/*/{stamp}-*/manifest.json")
    return manifest


def _period(tmp_path: Path, archive: Path, *extra: str) -> tuple[Any, dict[str, Any], str, str]:
    out = tmp_path / "period"
    shutil.rmtree(out, ignore_errors=True)
    res = _cli(
        "report", "--period", "2026-11", "--from", str(archive), "--cluster", "prod",
        "--at", "2026-12-01T01:00:00Z", "--out", str(out), "--format", "json,csv,html", *extra,
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    doc = json.loads((out / "period.json").read_text())
    return res, doc, (out / "period.csv").read_text(), (out / "period.html").read_text()


def test_a_period_with_every_run_read_says_complete(tmp_path: Path) -> None:
    archive = tmp_path / "archive"
    for hour in ("06", "07"):
        _archive_run(tmp_path, archive, _export(tmp_path, UID_A), f"2026-11-30T{hour}:00:00Z")
    res, doc, csv_text, html = _period(tmp_path, archive)
    assert (doc["complete"], doc["incomplete_reasons"], doc["runs_incomplete"]) == (True, [], [])
    assert doc["runs_left_out"] == dict.fromkeys(
        ("unreadable", "unsigned", "other_identity", "unknown_identity"), 0
    )
    rows = list(csv.DictReader(io.StringIO(csv_text)))
    assert rows and {r["period_complete"] for r in rows} == {"true"}
    assert "Incomplete:" not in html and "INCOMPLETE" not in res.stderr


def test_a_period_that_skipped_an_unreadable_run_says_incomplete(tmp_path: Path) -> None:
    archive = tmp_path / "archive"
    export = _export(tmp_path, UID_A)
    _archive_run(tmp_path, archive, export, "2026-11-30T06:00:00Z")
    broken = _archive_run(tmp_path, archive, export, "2026-11-30T07:00:00Z")
    _archive_run(tmp_path, archive, export, "2026-11-30T08:00:00Z")
    broken.write_text("{")
    res, doc, csv_text, html = _period(tmp_path, archive)
    assert len(doc["runs"]) == 2 and doc["complete"] is False
    assert doc["runs_left_out"]["unreadable"] == 1
    reason = (
        "1 run(s) of the period left out: could not be read or trusted (manifest or "
        "report.json unreadable, refused or differing from its manifest); named under problems"
    )
    assert doc["incomplete_reasons"] == [reason]
    rows = list(csv.DictReader(io.StringIO(csv_text)))
    assert {r["period_complete"] for r in rows} == {"false"}
    assert "<strong>Incomplete:</strong>" in html and reason in html
    assert f"Warning: the 2026-11 report is INCOMPLETE: {reason}" in res.stderr


def test_a_period_of_one_identity_names_the_runs_of_others_left_out(tmp_path: Path) -> None:
    archive = tmp_path / "archive"
    _archive_run(tmp_path, archive, _export(tmp_path, UID_A), "2026-11-30T06:00:00Z")
    _archive_run(tmp_path, archive, _export(tmp_path, UID_B), "2026-11-30T07:00:00Z")
    _archive_run(tmp_path, archive, _export(tmp_path, None), "2026-11-30T08:00:00Z")
    _, doc, csv_text, _ = _period(tmp_path, archive, "--cluster-uid", UID_A)
    assert len(doc["runs"]) == 1 and doc["complete"] is False
    assert (doc["runs_left_out"]["other_identity"], doc["runs_left_out"]["unknown_identity"]) == (
        1,
        1,
    )
    assert len(doc["incomplete_reasons"]) == 2
    assert "false" in csv_text.splitlines()[1].split(",")[-1]


def test_a_period_counting_a_run_that_read_part_of_the_cluster_says_incomplete(
    tmp_path: Path,
) -> None:
    archive = tmp_path / "archive"
    _archive_run(tmp_path, archive, _export(tmp_path, UID_A), "2026-11-30T06:00:00Z")
    part = _export(tmp_path, UID_A, broken_backups=True)
    manifest = _archive_run(tmp_path, archive, part, "2026-11-30T07:00:00Z")
    run_id = manifest.parent.name
    _, doc, _, html = _period(tmp_path, archive)
    assert len(doc["runs"]) == 2 and doc["complete"] is False
    assert doc["runs_incomplete"] == [run_id]
    assert doc["incomplete_reasons"] == [
        f"1 run(s) counted read only part of the cluster (run.complete not true): {run_id}"
    ]
    assert run_id in html


# 3. fleet.json cluster_uid per cluster


def _fleet(tmp_path: Path, archive: Path, *extra: str) -> tuple[dict[str, Any], list[Any]]:
    out = tmp_path / "fleet"
    shutil.rmtree(out, ignore_errors=True)
    res = _cli(
        "fleet", "--from", str(archive), "--out", str(out), "--format", "json,csv",
        "--at", "2026-11-30T09:00:00Z", *extra,
    )  # fmt: skip
    assert res.exit_code in (0, 4), res.output
    rows = list(csv.DictReader(io.StringIO((out / "fleet-clusters.csv").read_text())))
    return json.loads((out / "fleet.json").read_text()), rows


def _archive_as(tmp_path: Path, archive: Path, name: str, uid: str | None, at: str) -> Path:
    out = tmp_path / f"run-{name}-{uid}-{at.replace(':', '')}"
    spool = ["--spool-dir", str(tmp_path / "spool")]
    res = invoke_run(
        _export(tmp_path, uid), out, "--cluster-name", name, "--publish", str(archive), *spool,
        at=at,
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    stamp = at.replace("-", "").replace(":", "")
    [manifest] = archive.glob(f"{name}/*/*/*/{stamp}-*/manifest.json")
    return manifest


def test_fleet_names_each_clusters_identity(tmp_path: Path) -> None:
    archive = tmp_path / "archive"
    _archive_as(tmp_path, archive, "east", UID_A, "2026-11-30T06:00:00Z")
    _archive_as(tmp_path, archive, "legacy", None, "2026-11-30T06:00:00Z")
    _archive_as(tmp_path, archive, "shared", UID_A, "2026-11-30T06:00:00Z")
    _archive_as(tmp_path, archive, "shared", UID_B, "2026-11-30T07:00:00Z")
    doc, rows = _fleet(tmp_path, archive)
    uids = {c["name"]: (c["cluster_uid"], c["status"]) for c in doc["clusters"]}
    assert uids == {
        "east": (UID_A, "current"),
        "legacy": (None, "current"),
        "shared": (None, "unreadable"),  # two identities: neither is the cluster's
    }
    assert doc["schema_version"] == "1.2"
    assert {r["cluster"]: r["cluster_uid"] for r in rows} == {
        "east": UID_A,
        "legacy": "",
        "shared": "",
    }
    doc, _ = _fleet(tmp_path, archive, "--period", "2026-11")
    assert {c["name"]: c["cluster_uid"] for c in doc["clusters"]}["east"] == UID_A


def test_fleet_refuses_a_run_whose_report_and_manifest_name_two_identities(
    tmp_path: Path,
) -> None:
    archive = tmp_path / "archive"
    manifest = _archive_as(tmp_path, archive, "east", UID_A, "2026-11-30T06:00:00Z")
    doc = json.loads(manifest.read_text())
    doc["cluster_uid"] = UID_B  # edited: the report (hash intact) still says UID_A
    manifest.write_text(json.dumps(doc))
    (archive / "east" / "latest.json").unlink()  # read by manifest
    fleet, _ = _fleet(tmp_path, archive)
    [east] = fleet["clusters"]
    assert (east["status"], east["cluster_uid"]) == ("unreadable", None)
    assert any(
        f"cluster.uid '{UID_A}' differs from its manifest's cluster_uid '{UID_B}'" in p
        for p in east["problems"]
    ), east["problems"]


# 4. publish --retry: a spooled run whose target is misconfigured leaves the retry loop


@pytest.mark.parametrize("lock", ["plain", "missing"])
def test_publish_retry_moves_a_run_for_a_misconfigured_target_to_refused(
    tmp_path: Path, weed: WeedServer, lock: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from auditor.publish import publish_run, publish_settings, spool

    _s3_env(tmp_path, monkeypatch)
    bucket = f"ux35-retry-{lock}"
    if lock == "plain":  # a bucket without Object Lock, asked for COMPLIANCE
        weed.client().create_bucket(Bucket=bucket)
    spool_dir = tmp_path / "spool"
    publish = {
        "bucket": bucket,
        "prefix": "evidence",
        "endpoint_url": weed.endpoint,
        "region": "us-east-1",
        "addressing_style": "path",
        "object_lock_mode": "COMPLIANCE",
        "object_lock_days": 1,
        "max_attempts": 1,
        "spool_dir": str(spool_dir),
    }
    run_dir = tmp_path / "run"
    assert invoke_run(EXAMPLE, run_dir).exit_code == 0
    target = publish_settings(publish)
    spooled = publish_run(run_dir, target)  # spooled, as before lo32's test (or a target
    assert not spooled.published and spooled.spooled is not None  # broken since)
    res = _cli("publish", "--retry", "--spool-dir", str(spool_dir))
    why = "has no Object Lock enabled" if lock == "plain" else "does not exist"
    assert res.exit_code == 2, res.output  # as publish --from-run to that target
    [kept] = spool.refused(spool_dir)
    assert kept.name == spooled.spooled.name and (kept / "run" / "report.json").is_file()
    assert why in (kept / "error.txt").read_text()
    assert f"run {spooled.run_id} REFUSED by s3://{bucket}/evidence" in res.stderr
    assert f"bucket '{bucket}' {why}" in res.stderr
    assert f"kept in {kept} (not retried: the target is misconfigured" in res.stderr
    assert "1 spooled run(s): 0 published, 0 still spooled, 0 quarantined, 1 refused" in (
        res.stdout
    )
    assert spool.pending(spool_dir) == []
    again = _cli("publish", "--retry", "--spool-dir", str(spool_dir))
    assert (again.exit_code, again.stdout) == (0, "spool is empty\n")


# 5. README: --out into an earlier run's folder removes its artifacts


def test_the_readme_says_a_run_into_an_earlier_runs_folder_removes_its_artifacts(
    tmp_path: Path,
) -> None:
    readme = (REPO / "README.md").read_text()
    bullet = next(b for b in readme.split("\n- ") if b.startswith("`--out DIR`"))
    assert "removes that run's artifacts" in " ".join(bullet.split())
    assert "leaves no `report.html` or CSVs behind" in " ".join(bullet.split())
    # what it says is what happens
    out = tmp_path / "out"
    assert invoke_run(EXAMPLE, out, "--format", "json,html,csv").exit_code == 0
    assert (out / "report.html").is_file() and (out / "vms.csv").is_file()
    assert invoke_run(EXAMPLE, out, "--format", "json").exit_code == 0
    assert sorted(p.name for p in out.iterdir()) == [
        "manifest.json",
        "report.json",
        "report.schema.json",
    ]
    usage = _cli("run", "--help").output
    assert "whose artifacts are removed first" in " ".join(usage.split())


# 6. the HTML report's VM table and check catalog in an 800 px window


def _tables_past(html: Path, width_px: float) -> dict[str, float]:
    """Lay ``html`` out ``width_px`` wide at the screen's 14 px body font (weasyprint reads
    the print rules, whose body has no padding and a 10 pt font) and return each table whose
    right edge runs past it: class -> right edge (px)."""
    weasyprint = pytest.importorskip("weasyprint")

    def walk(box: Any) -> Any:
        yield box
        for child in getattr(box, "children", None) or []:
            yield from walk(child)

    css = weasyprint.CSS(
        string=f"@page {{ size: {width_px}px 40000px; margin: 0 }} "
        "body { font-size: 14px !important }"
    )
    wide = {}
    for page in weasyprint.HTML(filename=str(html)).render(stylesheets=[css]).pages:
        for box in walk(page._page_box):
            element = getattr(box, "element", None)
            if type(box).__name__ == "TableBox" and element is not None:
                right = box.position_x + box.border_width()
                if right > width_px + 0.5:
                    wide[str(element.get("class"))] = round(float(right), 1)
    return wide


def test_the_vm_table_and_the_check_catalog_fit_an_800_px_window(tmp_path: Path) -> None:
    """An 800 px window less a 15 px scrollbar and the body's 2 x 24 px padding leaves 737 px:
    the VM table (nine columns) was 882 px and the catalog 904 px (917 and 943 at the
    screen's 14 px font) with the example's short names. Narrower still, each scrolls inside
    its own box (``.table-scroll``, screen only: the PDF is not clipped)."""
    out = tmp_path / "out"
    assert invoke_run(EXAMPLE, out, "--format", "html").exit_code == 0
    html = out / "report.html"
    assert _tables_past(html, 800 - 15 - 2 * 24) == {}
    text = html.read_text()
    for table in (
        '<table class="grid vms sortable" id="vm-table">',
        '<table class="grid catalog">',
    ):
        assert f'<div class="table-scroll">\n{table}' in text
    assert "@media screen { .table-scroll { overflow-x: auto; } }" in text
