"""report.json: deterministic, schema-shaped, secret-free; and the `auditor run` CLI."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from auditor.cli import main
from auditor.config import AuditSettings
from auditor.pipeline import audit_data, dump_report_json
from auditor.sources.directory import DirectorySource
from tests.answer_support import answers
from tests.conftest import AUDIT_AT, REPO, invoke_run, report_doc

EXAMPLE = REPO / "examples" / "small-cluster"


def test_same_input_same_bytes(corpus: Path) -> None:
    a = dump_report_json(
        audit_data(
            DirectorySource(corpus / "cluster-export").collect(), AuditSettings(), at=AUDIT_AT
        )
    )
    b = dump_report_json(
        audit_data(
            DirectorySource(corpus / "cluster-export").collect(), AuditSettings(), at=AUDIT_AT
        )
    )
    assert a == b
    report = json.loads(a)
    assert report["run"]["id"].startswith("20261130T060000Z-")
    assert report["run"]["input_digest"].startswith("sha256:")


def test_envelope_shape(export_doc: dict[str, Any]) -> None:
    assert export_doc["schema_version"] == "1.5"
    assert set(export_doc) == {
        "schema_version",
        "run",
        "cluster",
        "collection_problems",
        "checks",
        "platform_findings",
        "summary",
        "vms",
        "waivers",
    }
    assert export_doc["cluster"]["name"] == "ocp-prod-east"
    assert export_doc["cluster"]["counts"]["VolumeSnapshotContent"] == 82
    vm = export_doc["vms"][0]
    assert [f["check_id"] for f in vm["findings"]] == sorted(
        c["id"] for c in export_doc["checks"] if c["scope"] == "vm"
    )
    card = next(v for v in export_doc["vms"] if v["name"] == "fin-db-01")["recovery_card"]
    assert card["firmware"]["uuid"] == "3f6d2c1e-8b0a-4f7e-b3c5-6a1d9e2f4b10"
    assert [d["name"] for d in card["disks"]] == ["rootdisk", "pgdata", "cloudinitdisk"]
    assert card["disks"][1]["pvc"]["reclaim_policy"] == "Retain"
    assert card["disks"][1]["pvc"]["size_bytes"] == 200 * 2**30
    assert card["nics"][1] == {
        "name": "repl",
        "mac": "02:5e:a1:00:00:1d",
        "model": "virtio",
        "model_from": "vm",
        "binding": "bridge",
        "binding_from": "vm",
        "network": {"type": "multus", "name": "finance-prod/finance-db-vlan120"},
    }
    jump = next(v for v in export_doc["vms"] if v["name"] == "web-admin-jump")["recovery_card"]
    assert jump["firmware"]["resolved_from"]["bootloader"] == "preference"
    assert jump["preference"] == {
        "kind": "VirtualMachineClusterPreference",
        "name": "windows.11.virtio",
    }


def test_cloud_init_and_ssh_never_in_report(corpus: Path, tmp_path: Path) -> None:
    canary = "CANARY-s3cr3t-9f8e7d"
    import yaml

    doc = yaml.safe_load((corpus / "cluster-export" / "virtualmachines.yaml").read_text())
    planted = 0
    for vm in doc["items"]:
        for vol in vm["spec"]["template"]["spec"]["volumes"]:
            if "cloudInitNoCloud" in vol:
                vol["cloudInitNoCloud"]["userData"] = f"#cloud-config\npassword: {canary}\n"
                vol["cloudInitNoCloud"]["networkDataBase64"] = base64.b64encode(
                    canary.encode()
                ).decode()
                planted += 1
        vm["metadata"].setdefault("annotations", {})["ops/root-password"] = canary
    assert planted >= 9
    (tmp_path / "virtualmachines.yaml").write_text(yaml.safe_dump(doc))
    report = dump_report_json(
        audit_data(DirectorySource(tmp_path).collect(), AuditSettings(), at=AUDIT_AT)
    )
    assert canary.encode() not in report
    assert base64.b64encode(canary.encode()) not in report


def test_cli_run_writes_report(tmp_path: Path, corpus: Path) -> None:
    result = invoke_run(corpus / "cluster-export", tmp_path, "--cluster-name", "ocp-prod-east")
    assert result.exit_code == 0, result.output
    assert answers("cluster-export").summary_line() in result.output
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["run"]["audit_time"] == "2026-11-30T06:00:00Z"


def test_cli_owner_filter_and_fail_on(tmp_path: Path, corpus: Path) -> None:
    result = invoke_run(
        corpus / "cluster-export", tmp_path, "--owner", "platform-eng", "--fail-on", "not-ready"
    )
    assert result.exit_code == 1
    report = json.loads((tmp_path / "report.json").read_text())
    assert [v["name"] for v in report["vms"]] == ["dev-k8s-lab-03"]
    assert report["run"]["owner_filter"] == "platform-eng"


def test_cli_rejects_bad_at_and_missing_dir(tmp_path: Path) -> None:
    bad = CliRunner().invoke(main, ["run", "--from-dir", str(tmp_path), "--at", "yesterday"])
    assert bad.exit_code == 2 and "RFC 3339" in bad.output
    missing = CliRunner().invoke(
        main, ["run", "--from-dir", str(tmp_path / "nope"), "--out", str(tmp_path / "out")]
    )
    assert missing.exit_code == 2 and "does not exist" in missing.output


def test_bundled_example_cluster(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main,
        [
            "run",
            "--from-dir",
            str(EXAMPLE),
            "--at",
            "2026-11-30T06:00:00Z",
            "--out",
            str(tmp_path),
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "report.json").read_text())
    readiness = {v["name"]: v["readiness"] for v in report["vms"]}
    assert readiness == {
        "billing-db": "READY",
        "billing-win": "NOT_READY",
        "web-cache": "NOT_READY",
        "web-api": "AT_RISK",
        "lab-ephemeral": "NOT_READY",
    }
    assert report["run"]["complete"] is True


def test_checks_cli_lists_catalog() -> None:
    out = CliRunner().invoke(main, ["checks", "list"]).output
    assert "RR-BKP-001" in out and "RR-PLT-004" in out
    show = CliRunner().invoke(main, ["checks", "show", "rr-fw-001"]).output
    assert "SMBIOS" in show and "https://" in show


def test_waivers_keep_facts_and_fill_the_appendix(corpus: Path) -> None:
    settings = AuditSettings.model_validate(
        {
            "waivers": [
                {
                    "id": "W-1",
                    "check": "RR-FW-001",
                    "selector": {"namespace": "finance-prod", "name": "fin-report-win2k22"},
                    "reason": "Volume licence, UUID irrelevant",
                    "approver": "ciso@corp.example",
                    "created": "2026-11-01",
                    "expires": "2027-01-01",
                },
                {
                    "id": "W-2",
                    "check": "RR-NET-001",
                    "selector": {"namespace": "web-*"},
                    "reason": "NAD being recreated",
                    "approver": "netops",
                    "created": "2026-10-01",
                    "expires": "2026-11-15",
                },
            ]
        }
    )
    data = DirectorySource(corpus / "cluster-export").collect()
    report = report_doc(audit_data(data, settings, at=AUDIT_AT))
    win = next(v for v in report["vms"] if v["name"] == "fin-report-win2k22")
    fw = next(f for f in win["findings"] if f["check_id"] == "RR-FW-001")
    assert fw["status"] == "WAIVED" and fw["severity"] == "high"
    assert fw["waiver"]["id"] == "W-1" and "missing" in fw["evidence"]
    assert win["readiness"] == "READY"
    cache = next(v for v in report["vms"] if v["name"] == "web-cache-01")
    net = next(f for f in cache["findings"] if f["check_id"] == "RR-NET-001")
    assert net["status"] == "FAIL", "an expired waiver stops applying"
    states = {w["id"]: w["state"] for w in report["waivers"]}
    assert states == {"W-1": "active", "W-2": "expired"}


def test_cli_gate_fails_on_unknown_and_on_unread_vm_list(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    result = CliRunner().invoke(
        main,
        [
            "run",
            "--from-dir",
            str(empty),
            "--out",
            str(tmp_path / "o1"),
            "--format",
            "json",
            "--fail-on",
            "not-ready",
        ],
    )
    assert result.exit_code == 4, "nothing audited is not the gate's exit 1 (issue 14)"
    assert "no VirtualMachine objects found" in result.output
    assert not (tmp_path / "o1" / "report.json").exists()


def test_cli_out_that_is_a_file_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file.txt"
    blocker.write_text("x")
    result = CliRunner().invoke(
        main, ["run", "--from-dir", str(EXAMPLE), "--out", str(blocker), "--format", "json"]
    )
    assert result.exit_code == 2
    # refused before the audit, naming the option (trial nu25: it said "File exists")
    assert "Invalid value for --out" in result.output
    assert "is a file, not a directory" in result.output
    assert "Traceback" not in result.output


def test_cli_unparseable_kubeconfig_is_a_clear_error(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kc"
    kubeconfig.write_text("garbage: [\n")
    for args in (["preflight"], ["run", "--out", str(tmp_path / "o")]):
        result = CliRunner().invoke(main, [*args, "--kubeconfig", str(kubeconfig)])
        assert result.exit_code == 2, (args, result.output)
        assert "cannot load cluster credentials" in result.output
        assert "Traceback" not in result.output


def test_shipped_schema_is_the_generated_one() -> None:
    from auditor.envelope import dump_report_schema

    shipped = (REPO / "docs" / "report-schema.json").read_bytes()
    assert shipped == dump_report_schema(), (
        "docs/report-schema.json is stale: regenerate with "
        "python -c 'import sys; from auditor.envelope import dump_report_schema as d; "
        "sys.stdout.buffer.write(d())' > docs/report-schema.json"
    )
    schema = json.loads(shipped)
    assert set(schema["required"]) >= {"run", "cluster", "checks", "summary", "vms"}
    finding = schema["$defs"]["FindingEntry"]
    assert "waiver" not in finding["required"] and finding["additionalProperties"] is False


def test_report_json_round_trips_through_the_model_and_ships_its_schema(tmp_path: Path) -> None:
    from auditor.envelope import dump_report_schema, load_report
    from auditor.pipeline import write_artifacts

    report = audit_data(DirectorySource(EXAMPLE).collect(), AuditSettings(), at=AUDIT_AT)
    paths = write_artifacts(report, tmp_path, ["json"])
    assert [p.name for p in paths] == ["report.json", "report.schema.json"]
    raw = (tmp_path / "report.json").read_bytes()
    assert dump_report_json(load_report(raw)) == raw
    assert (tmp_path / "report.schema.json").read_bytes() == dump_report_schema()
    waived = json.loads(raw)["vms"][0]["findings"][0]
    assert "waiver" not in waived and waived["basis"] in ("observed", "inferred", None)


def test_deeply_nested_evidence_is_cut_not_a_crash() -> None:
    from auditor.envelope import dump_report_json as dump
    from auditor.envelope.build import EVIDENCE_DEPTH, finding_entry
    from auditor.models import Finding, Severity, Status

    deep: Any = "leaf"
    for _ in range(300):
        deep = [deep]
    entry = finding_entry(Finding("RR-PLT-004", Status.FAIL, Severity.HIGH, "m", {"plugins": deep}))
    value = entry.evidence["plugins"]
    for _ in range(EVIDENCE_DEPTH - 1):
        value = value[0]
    assert value == f"(nested deeper than {EVIDENCE_DEPTH} levels; cut)"
    doc = json.loads(dump(_report_with(entry)))
    assert doc["platform_findings"][0]["evidence"]["plugins"][0][0][0]


def test_a_vms_evidence_is_proven_shallow_at_once_or_tested_finding_by_finding() -> None:
    """``_findings_within_depth``: one orjson test for all of a VM's findings, which proves
    each within :data:`EVIDENCE_DEPTH` levels exactly when each would pass alone; a VM with
    one deeper finding is not proven, and only that finding's evidence is cut."""
    from auditor.envelope.build import (
        EVIDENCE_DEPTH,
        _findings_within_depth,
        finding_entry,
    )
    from auditor.models import Finding, Severity, Status

    def nested(levels: int) -> Any:
        value: Any = "leaf"
        for _ in range(levels - 1):  # the evidence mapping is the first level
            value = [value]
        return value

    def finding(levels: int) -> Finding:
        return Finding("RR-BKP-004", Status.FAIL, Severity.HIGH, "m", {"rows": nested(levels)})

    at_bound = [finding(2), finding(EVIDENCE_DEPTH)]
    assert _findings_within_depth(at_bound) is True
    one_deeper = [finding(2), finding(EVIDENCE_DEPTH + 1)]
    assert _findings_within_depth(one_deeper) is False
    assert _findings_within_depth([Finding("X", Status.PASS, Severity.LOW, "m", {1: "a"})]) is False
    kept, cut = (finding_entry(f, within_depth=False) for f in one_deeper)
    assert kept.evidence == {"rows": nested(2)}
    value = cut.evidence["rows"]
    for _ in range(EVIDENCE_DEPTH - 2):
        value = value[0]
    assert value == [f"(nested deeper than {EVIDENCE_DEPTH} levels; cut)"]


def _report_with(entry: Any) -> Any:
    from tests.reports_support import sample_report

    return sample_report().model_copy(update={"platform_findings": [entry]})


def test_the_example_run_leaves_the_default_out_folder_free(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """README's first command writes the example's run; a later ``auditor run`` without
    ``--out`` writes into the default folder, which refuses files no run of its own sealed
    there (trial ux27). With the example's run inside it (``out/example``), the user's first
    own run was refused ("out holds 12 file(s) ..."); the example writes beside it instead."""
    import re
    import shlex
    import shutil

    repo = Path(__file__).resolve().parents[1]
    script = (repo / "scripts" / "example.sh").read_text()
    words = shlex.split(re.sub(r"\\\n", " ", script), comments=True)
    example_out = words[words.index("--out") + 1]
    shutil.copytree(repo / "examples" / "small-cluster", tmp_path / "export")
    monkeypatch.chdir(tmp_path)  # as the README is run: from the clone's root
    args = ["run", "--from-dir", "export", "--at", "2026-11-30T06:00:00Z", "--format", "json"]
    example = CliRunner().invoke(main, [*args, "--out", example_out])
    assert example.exit_code in (0, 1), example.output  # 1: VMs not READY
    own = CliRunner().invoke(main, args)  # the default --out
    assert own.exit_code in (0, 1), own.output
    assert (tmp_path / "out" / "report.json").is_file()


def test_parts_given_the_same_fields_share_one_set_of_them() -> None:
    """``Part.model_post_init``: two findings given the same fields hold one set of their
    names (37 KB per VM entry otherwise); a copy with an update gets a set of its own, and
    the shared set and the others' fields given are unchanged."""
    from auditor.envelope.model import FindingEntry
    from auditor.models import Severity, Status

    row = {"check_id": "RR-BKP-004", "status": Status.FAIL, "severity": Severity.HIGH}
    a = FindingEntry.model_validate({**row, "message": "a", "evidence": {}})
    b = FindingEntry.model_validate({**row, "message": "b", "evidence": {"x": 1}})
    c = FindingEntry.model_validate({**row, "message": "c", "evidence": {}, "remediation": "r"})
    assert a.__pydantic_fields_set__ is b.__pydantic_fields_set__
    assert a.model_fields_set == {"check_id", "status", "severity", "message", "evidence"}
    assert c.model_fields_set == a.model_fields_set | {"remediation"}
    d = a.model_copy(update={"basis": None})
    assert "basis" in d.model_fields_set and "basis" not in a.model_fields_set
    assert b.model_fields_set == a.model_fields_set
    assert b.model_dump(exclude_unset=True)["evidence"] == {"x": 1}
