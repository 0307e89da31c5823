"""No artifact carries a secret: canaries planted in every secret-bearing field never come out.

Checked: the objects a source returns, report.json, every other format
``write_artifacts`` knows (HTML, PDF text, CSV, recovery cards: each runs as
soon as its writer exists), the ``collect`` export, the CLI's output and every
log record, in raw, base64, JSON-, HTML- and URL-escaped form.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from auditor.cli import main as cli
from auditor.config import AuditSettings
from auditor.pipeline import FORMATS, audit_data, dump_report_json, write_artifacts
from auditor.sources.directory import DirectorySource
from bench.generate import generate
from tests.canary_support import CORES, canary_objects, leaks, plant, scan_tree
from tests.conftest import AUDIT_AT


@pytest.fixture()
def canary_dir(tmp_path: Path) -> Path:
    root = tmp_path / "export"
    root.mkdir()
    (root / "cluster.yaml").write_text(yaml.safe_dump_all(canary_objects(), sort_keys=True))
    return root


def test_the_export_really_carries_every_canary(canary_dir: Path) -> None:
    found = leaks((canary_dir / "cluster.yaml").read_bytes())
    assert {d.split(" ")[0] for d in found} == set(CORES)


def test_source_output_holds_no_canary(canary_dir: Path) -> None:
    data = DirectorySource(canary_dir).collect()
    assert data.of("VirtualMachine"), data.problems
    assert leaks(json.dumps(data.objects, default=str)) == []
    assert leaks(json.dumps([p.to_dict() for p in data.problems])) == []


def test_report_json_holds_no_canary(canary_dir: Path) -> None:
    report = audit_data(DirectorySource(canary_dir).collect(), AuditSettings(), at=AUDIT_AT)
    assert report.vms and report.vms[0].name == "vm1"
    assert leaks(dump_report_json(report)) == []


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f != "json"])
def test_every_other_artifact_format_holds_no_canary(
    canary_dir: Path, tmp_path: Path, fmt: str
) -> None:
    report = audit_data(DirectorySource(canary_dir).collect(), AuditSettings(), at=AUDIT_AT)
    out = tmp_path / "out"
    paths = write_artifacts(report, out, [fmt])
    assert paths
    assert scan_tree(out) == {}


def test_collect_export_holds_no_canary(canary_dir: Path, tmp_path: Path) -> None:
    from auditor.sources.export import write_export

    out = tmp_path / "collected"
    write_export(DirectorySource(canary_dir).collect(), out)
    assert any(out.iterdir())
    assert scan_tree(out) == {}


def test_cli_run_output_and_logs_hold_no_canary(
    canary_dir: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    out = tmp_path / "out"
    caplog.set_level(logging.DEBUG)
    result = CliRunner().invoke(
        cli,
        [
            "run",
            "--from-dir",
            str(canary_dir),
            "--at",
            "2026-11-30T06:00:00Z",
            "--out",
            str(out),
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    assert leaks(result.output) == []
    assert leaks("\n".join(r.getMessage() + str(r.args) for r in caplog.records)) == []
    assert scan_tree(out) == {}


def test_broken_file_with_secrets_does_not_echo_them_in_problems(tmp_path: Path) -> None:
    # A YAML error message quotes the neighbourhood of the error; the secret must not be in it.
    root = tmp_path / "export"
    root.mkdir()
    lines = yaml.safe_dump_all(canary_objects(), sort_keys=True).splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.lstrip().startswith("userData:"))
    indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
    lines.insert(at, f"{indent}bad: [unclosed\n")
    (root / "virtualmachines.yaml").write_text("".join(lines))
    data = DirectorySource(root).collect()
    assert data.problems
    report = audit_data(data, AuditSettings(), at=AUDIT_AT)
    assert leaks(dump_report_json(report)) == []


def test_canaries_in_a_generated_estate_stay_out_of_report_json(tmp_path: Path) -> None:
    generate(tmp_path / "estate", 40, seed=5, vm_hook=plant)
    assert leaks((tmp_path / "estate" / "virtualmachines.yaml").read_bytes())
    report = audit_data(
        DirectorySource(tmp_path / "estate").collect(), AuditSettings(), at=AUDIT_AT
    )
    assert len(report.vms) == 40
    assert leaks(dump_report_json(report)) == []


def test_a_free_text_annotation_is_never_shown_in_a_report(
    canary_dir: Path, tmp_path: Path
) -> None:
    """An annotation under an innocent key ("corp.example/notes") is free text a user may
    have put a password in: reports show its key, never its value, while the ownership and
    KubeVirt keys they need stay readable (red team: report.json showed it verbatim)."""
    path = canary_dir / "cluster.yaml"
    docs = list(yaml.safe_load_all(path.read_text()))
    vm = next(d for d in docs if d["kind"] == "VirtualMachine")
    vm["metadata"]["annotations"]["corp.example/notes"] = "root login: root / Cq0NotesZx"
    vm["metadata"]["annotations"]["vm.kubevirt.io/os"] = "rhel9"
    path.write_text(yaml.safe_dump_all(docs, sort_keys=True))
    report = audit_data(DirectorySource(canary_dir).collect(), AuditSettings(), at=AUDIT_AT)
    shown = report.vms[0].annotations
    assert shown["corp.example/notes"] == "<redacted>" and shown["vm.kubevirt.io/os"] == "rhel9"
    out = tmp_path / "out"
    write_artifacts(report, out, list(FORMATS))
    assert not [p for p in out.rglob("*") if p.is_file() and b"Cq0NotesZx" in p.read_bytes()]


def test_an_endpoint_is_shown_without_its_credentials() -> None:
    """A kubeconfig server URL (or any endpoint) may carry user:password@ or a token in its
    query: reports and messages show scheme, host, port and path only (red team)."""
    from auditor.redact import shown_url

    assert shown_url("http://admin:pw@127.0.0.1:34391") == "http://127.0.0.1:34391"
    assert shown_url("https://k8s.example.com:6443/?token=x") == "https://k8s.example.com:6443/"
    assert shown_url("https://u:p@[fd00::1]:6443/api#frag") == "https://[fd00::1]:6443/api"
