"""Trial ux30: a new user's run of the CLI and reports, and what broke it.

Each test names the input, the behaviour before the fix and after.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import yaml

from tests.conftest import invoke_run

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "small-cluster"


def _example(tmp_path: Path) -> Path:
    export = tmp_path / "export"
    shutil.copytree(EXAMPLE, export)
    return export


def test_a_name_quoting_the_left_out_words_does_not_break_the_at_warning(tmp_path: Path) -> None:
    """A NetworkAttachmentDefinition named "x created after the audit instant" (a name no API
    server writes: a collection problem quoting it). The ``--at`` warning parsed its count out
    of each problem whose text held those words: ``int('network-attachment-definitions.yaml...')``
    raised a traceback after the report was written. The count is now data
    (``ClusterData.left_out``): no warning here, exit 0."""
    export = _example(tmp_path)
    path = export / "network-attachment-definitions.yaml"
    doc = yaml.safe_load(path.read_text())
    odd = {
        "apiVersion": "k8s.cni.cncf.io/v1",
        "kind": "NetworkAttachmentDefinition",
        "metadata": {"name": "x created after the audit instant", "namespace": "billing"},
        "spec": {"config": "{}"},
    }
    doc["items"].append(odd)
    path.write_text(yaml.safe_dump(doc))
    result = invoke_run(export, tmp_path / "out")
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert result.exit_code == 0, result.output
    assert "precedes the creation" not in result.output


def test_the_at_warning_counts_each_kind_left_out(tmp_path: Path) -> None:
    """``--at 2026-11-28T05:00:00Z`` on the example: four Backups and one Restore were created
    later. The warning names the total and each kind's count."""
    result = invoke_run(EXAMPLE, tmp_path / "out", at="2026-11-28T05:00:00Z")
    assert result.exit_code == 0, result.output
    assert (
        "precedes the creation of 5 object(s) read (Backup 4, Restore 1): they are left out"
        in result.output
    )


class _CountingList(list[Any]):
    """A list that counts how often it is iterated."""

    iterated = 0

    def __iter__(self) -> Any:
        type(self).iterated += 1
        return super().__iter__()


def test_leave_out_after_reads_the_objects_once_per_instant() -> None:
    """``run_audit`` leaves out the objects created after the instant, then ``audit_data``
    did it again over every object of every kind (two scans per CLI run). The result now
    records the instant (``read_as_of``): a second call at it returns its argument unread;
    at another instant it scans again, and the counts add up."""
    from datetime import UTC, datetime

    from auditor.sources.asof import leave_out_after
    from auditor.sources.base import ClusterData, KindState, SourceInfo

    at = datetime(2026, 11, 30, 6, tzinfo=UTC)
    objects = _CountingList(
        {"metadata": {"name": f"b{i}", "namespace": "velero", "creationTimestamp": stamp}}
        for i, stamp in enumerate(
            ["2026-11-29T00:00:00Z", "2026-11-30T07:00:00Z", "2026-11-30T05:00:00Z"]
        )
    )
    data = ClusterData(
        info=SourceInfo(type="directory", location="x"),
        objects={"Backup": objects},
        states={"Backup": KindState.COMPLETE},
    )
    _CountingList.iterated = 0
    once = leave_out_after(data, at, at=at)
    assert _CountingList.iterated == 1
    assert once.left_out == {"Backup": 1} and once.read_as_of == at
    assert leave_out_after(once, at, at=at) is once
    assert _CountingList.iterated == 1
    earlier = leave_out_after(once, datetime(2026, 11, 30, 1, tzinfo=UTC))
    assert earlier.left_out == {"Backup": 2}
    assert [o["metadata"]["name"] for o in earlier.of("Backup")] == ["b0"]
    assert data.left_out == {} and data.read_as_of is None  # the caller's data untouched


def test_publish_from_run_refuses_files_added_after_the_run(tmp_path: Path) -> None:
    """A run folder sealed by ``run``, then ``notes.txt`` and ``extra/copy.json`` put in it.
    ``publish --from-run`` sealed them again with the run (digested, signed and published as
    its evidence, exit 0). It now refuses the folder (exit 2) naming both files, publishes
    nothing, and publishes the run once they are removed (its trend.json, written by publish
    itself, sealed with it)."""
    from click.testing import CliRunner

    from auditor.cli import main

    run = tmp_path / "run"
    assert invoke_run(EXAMPLE, run, "--cluster-name", "ex").exit_code == 0
    (run / "notes.txt").write_text("not evidence\n")
    (run / "extra").mkdir()
    (run / "extra" / "copy.json").write_text("{}\n")
    archive, spool = tmp_path / "archive", tmp_path / "spool"
    args = ["publish", "--from-run", str(run), "--to", str(archive), "--spool-dir", str(spool)]
    refused = CliRunner().invoke(main, args)
    assert refused.exit_code == 2, refused.output
    assert "extra/copy.json, notes.txt (2 file(s)) not listed in the manifest.json" in (
        refused.output
    )
    assert not archive.exists() or not any(archive.rglob("*.json"))
    (run / "notes.txt").unlink()
    shutil.rmtree(run / "extra")
    published = CliRunner().invoke(main, args)
    assert published.exit_code == 0, published.output
    names = {p.name for p in archive.rglob("*") if p.is_file()}
    assert {"report.json", "trend.json", "manifest.json"} <= names
    assert "notes.txt" not in names and "copy.json" not in names


def test_two_results_for_one_instant_count_once_as_the_worse(tmp_path: Path) -> None:
    """The example audited at 2026-11-30T06:00Z twice, published to one archive: with the
    default RPO (READY 1, AT_RISK 1, NOT_READY 3) and with ``rpo_hours: 1`` (NOT_READY 5).
    Two run ids, one instant: the period report counted two runs, weighing that instant
    twice. It now counts one run, the worse (NOT_READY 5), and names the other."""
    from click.testing import CliRunner

    from auditor.cli import main

    archive = tmp_path / "a"
    strict = tmp_path / "strict.yaml"
    strict.write_text("thresholds:\n  rpo_hours: 1\n")
    ids = {}
    for name, extra in (("default", ()), ("strict", ("--config", str(strict)))):
        out = tmp_path / name
        result = invoke_run(EXAMPLE, out, "--cluster-name", "c1", "--publish", str(archive), *extra)
        assert result.exit_code == 0, result.output
        ids[name] = yaml.safe_load((out / "report.json").read_text())["run"]["id"]
    assert ids["default"] != ids["strict"]
    res = CliRunner().invoke(
        main,
        ["report", "--period", "2026-11", "--from", str(archive), "--cluster", "c1",
         "--out", str(tmp_path / "p"), "--format", "json"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    doc = yaml.safe_load((tmp_path / "p" / "period.json").read_text())
    assert doc["fleet"]["runs"] == 1
    assert doc["runs"] == [ids["strict"]]
    (problem,) = doc["problems"]
    assert problem.startswith(f"run {ids['default']}: audited the same instant")
    assert ids["strict"] in problem
    assert all(v["audits"] == 1 for v in doc["vms"])


def test_fleet_pdf_keeps_long_cluster_names_on_the_page(tmp_path: Path) -> None:
    """Three clusters published to one local archive, two with long names (80 characters,
    one with no hyphen). fleet.pdf let the name set its column's width, and the root-cause
    table's cluster column did not wrap at all: text ran to 846 pt on a page 842 pt wide
    (the margin ends at 808 pt). Columns are now fixed and break a long name inside them."""
    import re
    import subprocess

    from click.testing import CliRunner

    from auditor.cli import main

    pdftotext = shutil.which("pdftotext")
    if pdftotext is None:
        import pytest

        pytest.skip("pdftotext missing: run .ci/setup-reports.sh")
    archive = tmp_path / "a"
    names = ["prod-east-" + "x" * 70, "clusterwithaverylongnamewithoutanyhyphens" * 2, "short"]
    for name in names:
        result = invoke_run(
            EXAMPLE, tmp_path / name[:20], "--cluster-name", name, "--publish", str(archive)
        )
        assert result.exit_code == 0, result.output
    out = tmp_path / "fleet"
    res = CliRunner().invoke(
        main, ["fleet", "--from", str(archive), "--out", str(out), "--at", "2026-11-30T08:00:00Z"]
    )
    assert res.exit_code == 0, res.output
    bbox = subprocess.run(
        [pdftotext, "-bbox", str(out / "fleet.pdf"), "-"],
        check=True, capture_output=True, text=True, timeout=60,
    ).stdout  # fmt: skip
    words = re.findall(
        r'xMin="([\d.]+)" yMin="[\d.]+" xMax="([\d.]+)" yMax="[\d.]+">([^<]*)<', bbox
    )
    right = max(float(x1) for _, x1, _ in words)
    # A4 landscape is 842 pt wide, the page margin 1.2 cm (34 pt)
    assert right <= 808, f"text runs to {right:.0f} pt, past the right margin (808 pt)"
    texts = " ".join(w for _, _, w in words)
    assert "current" in texts and "First action" in texts


def test_a_path_the_system_refuses_is_exit_2_named_never_a_traceback(tmp_path: Path) -> None:
    """A 300-character folder name (the limit is 255: ENAMETOOLONG) given as ``run --out``,
    ``run --from-dir``, ``fleet --from``, ``report --from`` or ``history --to`` raised
    OSError out of a ``Path.exists``/``is_dir`` check: a traceback and exit 1 (the gate's
    code). Each is now exit 2 with one line naming the path (docs/exit-codes.md)."""
    from click.testing import CliRunner

    from auditor.cli import main

    long = tmp_path / ("c" * 300)
    out = str(tmp_path / "out")
    commands = [
        ["run", "--from-dir", str(EXAMPLE), "--at", "2026-11-30T06:00:00Z", "--out", str(long)],
        ["run", "--from-dir", str(long), "--at", "2026-11-30T06:00:00Z", "--out", out],
        ["fleet", "--from", str(long), "--out", out],
        ["report", "--period", "2026-11", "--from", str(long), "--cluster", "c", "--out", out],
        ["history", "--cluster", "c", "--to", str(long)],
    ]
    for args in commands:
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 2, (args, result.output, result.exception)
        assert "c" * 300 in result.output and "name too long" in result.output, result.output


def test_out_at_the_file_system_root_is_refused_without_walking_it(tmp_path: Path) -> None:
    """``run --out /`` walked the whole file system for files no run wrote (and met
    ``/proc/1/cwd``: PermissionError, a traceback). It now stops after 101 and refuses the
    folder (exit 2), or names the folder it could not list."""
    result = invoke_run(EXAMPLE, Path("/"))
    assert result.exit_code == 2, (result.output, result.exception)
    assert "Invalid value for --out: " in result.output
    assert "over 100 file(s)" in result.output or "cannot use /" in result.output


def test_a_threshold_or_age_that_is_no_finite_number_is_refused(tmp_path: Path) -> None:
    """``rpo_hours: inf`` (a YAML string, read by pydantic as infinity) was a valid config:
    RR-BKP-002 passed every VM "within the inf h RPO" and RR-BKP-013 gave ERROR with an
    OverflowError. ``rpo_hours: 1e300`` and a policy's ``rpo_hours: Infinity`` likewise, and
    ``fleet --max-age-hours nan`` made no run stale. Each is now exit 2 naming the field or
    option."""
    from click.testing import CliRunner

    from auditor.cli import main

    cases = {
        "thresholds:\n  rpo_hours: inf\n": "thresholds.rpo_hours: Input should be a finite number",
        "thresholds:\n  rpo_hours: 1e300\n": "thresholds.rpo_hours: Input should be less than",
        "thresholds:\n  restore_test_max_age_days: 1000000000000\n": (
            "thresholds.restore_test_max_age_days: Input should be less than"
        ),
        "policies:\n- name: p\n  match: {namespaces: ['*']}\n  thresholds:\n"
        "    rpo_hours: Infinity\n": "policies.0.thresholds.rpo_hours: Input should be a finite",
        "publish:\n  url: /tmp/x\n  read_timeout: nan\n": "publish.read_timeout: Input should",
    }
    config = tmp_path / "c.yaml"
    for text, named in cases.items():
        config.write_text(text)
        result = CliRunner().invoke(main, ["validate-config", str(config)])
        assert result.exit_code == 2, (text, result.output)
        assert named in result.output, result.output
        run = invoke_run(EXAMPLE, tmp_path / "out", "--config", str(config))
        assert run.exit_code == 2, (text, run.output)
    archive = tmp_path / "a"
    assert invoke_run(EXAMPLE, tmp_path / "r", "--publish", str(archive)).exit_code == 0
    for hours in ("nan", "inf"):
        fleet = CliRunner().invoke(
            main,
            [
                "fleet",
                "--from",
                str(archive),
                "--out",
                str(tmp_path / "f"),
                "--max-age-hours",
                hours,
            ],
        )
        assert fleet.exit_code == 2, (hours, fleet.output)
        assert "--max-age-hours" in fleet.output


def test_an_empty_vm_list_is_named_as_read_not_as_nothing_readable(tmp_path: Path) -> None:
    """An export whose virtualmachines.yaml is an empty List (``oc get vm -A`` on a cluster
    without VMs): exit 4 said "nothing readable", as for an empty folder, though the file was
    read. It now says the list was read and is empty."""
    export = tmp_path / "export"
    export.mkdir()
    (export / "virtualmachines.yaml").write_text("apiVersion: v1\nkind: List\nitems: []\n")
    result = invoke_run(export, tmp_path / "out")
    assert result.exit_code == 4, result.output
    assert "its VirtualMachine list was read and is empty; 0 other object(s) read" in (
        result.output
    )


def _serve_config(tmp_path: Path, out_dir: Path, state_dir: Path) -> Path:
    config = tmp_path / "serve.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "source": {"type": "directory", "path": str(EXAMPLE)},
                "report": {"formats": ["json"], "out_dir": str(out_dir)},
                "schedules": [{"id": "daily", "cron": "0 6 * * *"}],
                "service": {"state_dir": str(state_dir), "metrics": {"port": 0}},
            }
        )
    )
    return config


def test_serve_refuses_folders_it_cannot_write_at_start(tmp_path: Path) -> None:
    """``report.out_dir`` under a file: ``serve`` started, served /readyz and would have
    failed each scheduled run at its hour. It now exits 2 at start naming the field."""
    from click.testing import CliRunner

    from auditor.cli import main

    blocker = tmp_path / "a-file"
    blocker.write_text("")
    config = _serve_config(tmp_path, blocker / "reports", tmp_path / "state")
    result = CliRunner().invoke(main, ["serve", "--config", str(config)])
    assert result.exit_code == 2, (result.output, result.exception)
    assert f"report.out_dir: cannot make folder {blocker / 'reports'}: Not a directory" in (
        result.output
    )


def test_a_second_serve_on_one_state_dir_exits_2_could_not_start(tmp_path: Path) -> None:
    """A second ``serve`` on a held ``serve.lock`` exited 1, the code of a failed
    ``--fail-on`` gate (docs/exit-codes.md: 2 is "could not start")."""
    from click.testing import CliRunner

    from auditor.cli import main
    from auditor.service.scheduler import state_lock

    state = tmp_path / "state"
    state.mkdir()
    config = _serve_config(tmp_path, tmp_path / "reports", state)
    with state_lock(state):
        result = CliRunner().invoke(main, ["serve", "--config", str(config)])
    assert result.exit_code == 2, (result.output, result.exception)
    assert "serve.lock is locked by another auditor serve" in result.output


def test_an_endpoint_that_is_no_http_url_is_a_bad_option(tmp_path: Path) -> None:
    """``run --publish s3://bkt/pre --endpoint-url ftp://x`` (or ``s3.example:9000``, the
    scheme left out) audited, spooled the run and exited 3 ("not published"): botocore
    refuses such an endpoint at every attempt, so ``publish --retry`` could never deliver
    it. It is now a bad option (exit 2) naming ``endpoint_url``, before the audit."""
    for endpoint in ("ftp://x", "s3.example:9000", "http://"):
        result = invoke_run(
            EXAMPLE, tmp_path / "out", "--publish", "s3://bkt/pre", "--endpoint-url", endpoint,
            "--spool-dir", str(tmp_path / "spool"),
        )  # fmt: skip
        assert result.exit_code == 2, (endpoint, result.output)
        assert "endpoint_url must be an http:// or https:// URL with a host" in result.output
        assert not (tmp_path / "spool").exists() or not any((tmp_path / "spool").iterdir())


def test_a_reader_of_stdout_going_away_does_not_stop_the_run(tmp_path: Path) -> None:
    """``auditor run ... --publish DIR | head -1``: the reader closed the pipe, the next
    line raised BrokenPipeError and ``run`` ended before publishing, exit 1 (the gate's code)
    with no message. Here stdout is a pipe closed before the first line: the run is now
    published and exits 0."""
    import os
    import subprocess
    import sys

    from tests.conftest import REPO

    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "auditor", "run", "--from-dir", str(EXAMPLE),
             "--at", "2026-11-30T06:00:00Z", "--out", str(tmp_path / "run"), "--format",
             "json", "--publish", str(tmp_path / "archive")],
            stdout=write, stderr=subprocess.PIPE, text=True, timeout=300, cwd=REPO,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )  # fmt: skip
    finally:
        os.close(write)
    assert done.returncode == 0, done.stderr
    assert list((tmp_path / "archive").rglob("manifest.json")), "the run was not published"


def test_fleet_takes_the_worse_of_two_results_for_the_latest_instant(tmp_path: Path) -> None:
    """The example audited at one instant with ``rpo_hours: 1`` (NOT_READY 5) and then with
    the default RPO (READY 1, AT_RISK 1, NOT_READY 3), published in that order: latest.json
    names the kinder run, which stood for the cluster in the fleet roll-up. The worse now
    stands and the other is named in the cluster's problems (as in the period report)."""
    import json

    from click.testing import CliRunner

    from auditor.cli import main

    archive = tmp_path / "a"
    strict = tmp_path / "strict.yaml"
    strict.write_text("thresholds:\n  rpo_hours: 1\n")
    ids = {}
    for name, extra in (("strict", ("--config", str(strict))), ("default", ())):
        out = tmp_path / name
        result = invoke_run(EXAMPLE, out, "--cluster-name", "c1", "--publish", str(archive), *extra)
        assert result.exit_code == 0, result.output
        ids[name] = json.loads((out / "report.json").read_text())["run"]["id"]
    assert json.loads((archive / "c1" / "latest.json").read_text())["run_id"] == ids["default"]
    res = CliRunner().invoke(
        main,
        ["fleet", "--from", str(archive), "--out", str(tmp_path / "f"), "--at",
         "2026-11-30T08:00:00Z", "--format", "json"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    (cluster,) = json.loads((tmp_path / "f" / "fleet.json").read_text())["clusters"]
    assert cluster["run"]["id"] == ids["strict"]
    assert cluster["readiness"]["NOT_READY"] == 5 and cluster["readiness"]["READY"] == 0
    assert any(p.startswith(f"run {ids['default']}: audited the same instant") for p in
               cluster["problems"])  # fmt: skip


def test_history_limit_below_one_is_a_bad_option(tmp_path: Path) -> None:
    """``history --limit 0`` (or -5) on an archive holding runs said "no published runs for
    cluster c1", exit 0: false. It is now a bad option (exit 2)."""
    from click.testing import CliRunner

    from auditor.cli import main

    archive = tmp_path / "a"
    assert invoke_run(EXAMPLE, tmp_path / "r", "--cluster-name", "c1", "--publish",
                      str(archive)).exit_code == 0  # fmt: skip
    for limit in ("0", "-5"):
        result = CliRunner().invoke(
            main, ["history", "--cluster", "c1", "--to", str(archive), "--limit", limit]
        )
        assert result.exit_code == 2, result.output
        assert "--limit" in result.output and "no published runs" not in result.output


def test_verify_latest_finds_a_cluster_named_with_other_characters(tmp_path: Path) -> None:
    """A run published with ``--cluster-name "ünï cødé clüster"`` goes to the key-safe folder
    ``n-c-d-cl-ster/``; ``history`` and ``report --period`` found it by the name as given,
    but ``verify --latest --cluster "ünï cødé clüster"`` looked under ``ünï cødé clüster/``
    and exited 2, "no run published". It now verifies that run (exit 0)."""
    from click.testing import CliRunner

    from auditor.cli import main

    archive = tmp_path / "a"
    name = "ünï cødé clüster"
    assert invoke_run(EXAMPLE, tmp_path / "r", "--cluster-name", name, "--publish",
                      str(archive)).exit_code == 0  # fmt: skip
    assert (archive / "n-c-d-cl-ster" / "latest.json").is_file()
    result = CliRunner().invoke(main, ["verify", str(archive), "--latest", "--cluster", name])
    assert result.exit_code == 0, result.output
    assert "verified run" in result.output


def _ec_key(path: Path) -> Path:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return path


def test_a_bad_signing_key_is_refused_before_the_audit(tmp_path: Path) -> None:
    """``run --signing-key ec.pem`` (an EC key, not Ed25519): the key was read only when the
    run was sealed, after the audit, leaving report.json without a manifest; the same
    command with the right key was then refused ("holds 2 file(s) no earlier audit run
    wrote"). It is now a bad option before the audit, and nothing is written."""
    key = _ec_key(tmp_path / "ec.pem")
    out = tmp_path / "out"
    result = invoke_run(EXAMPLE, out, "--signing-key", str(key))
    assert result.exit_code == 2, result.output
    assert "Invalid value for --signing-key" in result.output
    assert "not an Ed25519 key" in result.output
    assert not out.exists() or not any(out.iterdir())


def test_a_run_that_cannot_be_sealed_leaves_no_half_written_folder(tmp_path: Path) -> None:
    """``write_run`` with a key that cannot sign: it wrote report.json and
    report.schema.json, then failed to seal; those unsealed files stayed and refused the
    next run into the folder. The files it wrote are now removed when writing fails, and
    the next run there succeeds."""
    from datetime import UTC, datetime

    import pytest

    from auditor import pipeline
    from auditor.config import AuditSettings
    from auditor.publish.signing import SigningError

    settings = AuditSettings.model_validate({"source": {"type": "directory", "path": str(EXAMPLE)}})
    run = pipeline.run_audit(settings, lambda: datetime(2026, 11, 30, 6, tzinfo=UTC))
    out = tmp_path / "out"
    with pytest.raises(SigningError):
        pipeline.write_run(run, out, ["json"], signing_key=_ec_key(tmp_path / "ec.pem"))
    assert [p for p in out.rglob("*")] == []
    assert invoke_run(EXAMPLE, out).exit_code == 0


def test_publishing_without_json_is_refused_at_start(tmp_path: Path) -> None:
    """``run --format csv --publish DIR`` audited, wrote the CSVs and then failed to publish
    ("report.json: not found", exit 2 after the work); a config whose publishing schedule
    writes only csv was valid and failed at every run. Both are refused at start, naming
    ``--format`` / ``report.formats``."""
    from click.testing import CliRunner

    from auditor.cli import main

    out = tmp_path / "out"
    result = invoke_run(EXAMPLE, out, "--format", "csv", "--publish", str(tmp_path / "a"))
    assert result.exit_code == 2, result.output
    assert "Invalid value for --format: csv without json" in result.output
    assert not out.exists()
    config = tmp_path / "c.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "report": {"formats": ["csv"]},
                "publish": {"url": str(tmp_path / "a")},
                "schedules": [{"id": "d", "cron": "0 6 * * *", "publish": True}],
            }
        )
    )
    checked = CliRunner().invoke(main, ["validate-config", str(config)])
    assert checked.exit_code == 2, checked.output
    assert "report.formats: schedule 'd' publishes, so its formats must include json" in (
        checked.output
    )


def test_report_pdf_breaks_a_long_cluster_name_inside_the_page(tmp_path: Path) -> None:
    """``--cluster-name`` of 88 characters without a hyphen: the cover's title (h1) ran to
    598 pt on a 595 pt A4 page, the name cut at the edge. Headings now break such a name
    inside the margin (12 mm: text ends by 562 pt)."""
    import re
    import subprocess

    pdftotext = shutil.which("pdftotext")
    if pdftotext is None:
        import pytest

        pytest.skip("pdftotext missing: run .ci/setup-reports.sh")
    name = "clusterwithaverylongnamewithoutanyhyphens" * 2 + "xxxxxx"
    out = tmp_path / "out"
    result = invoke_run(EXAMPLE, out, "--cluster-name", name, "--format", "pdf")
    assert result.exit_code == 0, result.output
    bbox = subprocess.run(
        [pdftotext, "-bbox", str(out / "report.pdf"), "-"],
        check=True, capture_output=True, text=True, timeout=60,
    ).stdout  # fmt: skip
    words = re.findall(
        r'xMin="([\d.]+)" yMin="[\d.]+" xMax="([\d.]+)" yMax="[\d.]+">([^<]*)<', bbox
    )
    right = max(float(x1) for _, x1, _ in words)
    assert right <= 562, f"text runs to {right:.0f} pt, past the right margin (562 pt)"


def test_fleet_and_period_out_inside_the_archive_is_refused(tmp_path: Path) -> None:
    """``fleet --from A --out A/fleet-out`` wrote fleet.json into the archive; the next
    roll-up counted a fourth cluster ``fleet-out`` ("unreadable: no published full-fleet
    run"). ``report --period --out A/c1/rep`` likewise. Both are refused (exit 2) and
    nothing is written there."""
    from click.testing import CliRunner

    from auditor.cli import main

    archive = tmp_path / "a"
    assert invoke_run(EXAMPLE, tmp_path / "r", "--cluster-name", "c1", "--publish",
                      str(archive)).exit_code == 0  # fmt: skip
    for args in (
        ["fleet", "--from", str(archive), "--out", str(archive / "fleet-out")],
        ["report", "--period", "2026-11", "--from", str(archive), "--cluster", "c1",
         "--out", str(archive / "c1" / "rep")],
    ):  # fmt: skip
        result = CliRunner().invoke(main, [*args, "--format", "json"])
        assert result.exit_code == 2, result.output
        assert "is inside the archive read" in result.output
    assert sorted(p.name for p in archive.iterdir()) == ["c1"]
    assert not (archive / "c1" / "rep").exists()


def test_a_local_publish_target_overlapping_the_export_or_the_run_is_refused(
    tmp_path: Path,
) -> None:
    """``run --from-dir E --publish E/arch``: the next audit of E read the archived
    report.json files as input (INCOMPLETE, 5 collection problems). ``--out A/run
    --publish A``: the run folder became a cluster ``run`` in the archive. ``--publish``
    inside ``--out``: the archive sat unsealed among the run's files. Each is refused at
    start (exit 2) and nothing is written."""
    export = _example(tmp_path)
    cases = [
        (tmp_path / "o1", export / "arch", "is inside the export read"),
        (tmp_path / "a2" / "run", tmp_path / "a2", "is inside the publish archive"),
        (tmp_path / "o3", tmp_path / "o3" / "arch", "is inside the run folder"),
    ]
    for out, archive, named in cases:
        result = invoke_run(export, out, "--publish", str(archive))
        assert result.exit_code == 2, (named, result.output)
        assert named in result.output, result.output
        assert not out.exists() and not archive.exists()
    again = invoke_run(export, tmp_path / "o4")
    assert again.exit_code == 0 and "INCOMPLETE" not in again.output, again.output


def test_serve_refuses_runs_or_archive_inside_the_export(tmp_path: Path) -> None:
    """A service config whose ``report.out_dir`` and local ``publish`` archive lie inside the
    export it audits started; every run after the first would read the earlier runs as
    input (INCOMPLETE). ``serve`` now exits 2 at start naming both fields, and makes no
    folder in the export."""
    from click.testing import CliRunner

    from auditor.cli import main

    export = _example(tmp_path)
    config = tmp_path / "serve.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "source": {"type": "directory", "path": str(export)},
                "report": {"formats": ["json"], "out_dir": str(export / "reports")},
                "publish": {"url": str(export / "arch")},
                "schedules": [{"id": "daily", "cron": "0 6 * * *", "publish": True}],
                "service": {"state_dir": str(tmp_path / "state"), "metrics": {"port": 0}},
            }
        )
    )
    result = CliRunner().invoke(main, ["serve", "--config", str(config)])
    assert result.exit_code == 2, (result.output, result.exception)
    assert "report.out_dir: " in result.output and "publish: " in result.output
    assert "is inside the export read" in result.output
    assert not (export / "reports").exists() and not (export / "arch").exists()
