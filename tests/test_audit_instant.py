"""An audit instant (``--at``) before objects in the input were created (trial ux27).

``run --at 2000-01-01`` on an export of 2026 judged five VMs that did not exist yet, with no
word of it; and an object created after the audit instant (a NetworkAttachmentDefinition,
a Schedule, a BackupStorageLocation) counted as evidence at that instant. Objects created
after ``--at`` are now left out and named (file, first object, ``metadata.creationTimestamp``);
when no VM existed then, nothing is audited (exit 4).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import yaml

from auditor.config import AuditSettings
from auditor.pipeline import audit_data
from auditor.sources.directory import DirectorySource
from tests.conftest import AUDIT_AT, invoke_run, report_doc

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "small-cluster"


def _vm(report: dict[str, object], name: str) -> dict[str, object]:
    return next(v for v in report["vms"] if v["name"] == name)  # type: ignore[attr-defined,index]


def _nad_created(tmp_path: Path, when: str) -> Path:
    export = tmp_path / "export"
    shutil.copytree(EXAMPLE, export)
    path = export / "network-attachment-definitions.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["items"][0]["metadata"]["creationTimestamp"] = when
    path.write_text(yaml.safe_dump(doc))
    return export


def test_a_network_created_after_the_audit_instant_is_no_evidence_then(tmp_path: Path) -> None:
    """billing-db plugs into NAD billing/billing-vlan. Created the day after the audit
    instant, the NAD did not exist then (or an earlier one of that name did, which the
    export cannot show): RR-NET-001 passed and the VM was READY at an instant its network
    may have been missing."""
    before = report_doc(
        audit_data(DirectorySource(_nad_created(tmp_path / "a", "2026-01-01T00:00:00Z")).collect(),
                   AuditSettings(), at=AUDIT_AT)
    )  # fmt: skip
    assert _vm(before, "billing-db")["readiness"] == "READY"
    export = _nad_created(tmp_path / "b", "2026-12-01T00:00:00Z")
    report = report_doc(audit_data(DirectorySource(export).collect(), AuditSettings(), at=AUDIT_AT))
    vm = _vm(report, "billing-db")
    net = next(f for f in vm["findings"] if f["check_id"] == "RR-NET-001")  # type: ignore[index]
    # at that instant the NAD was absent, or an earlier one of that name was there: unknown
    assert net["status"] == "ERROR"
    assert vm["readiness"] == "UNKNOWN"
    assert report["run"]["complete"] is False
    (problem,) = report["collection_problems"]
    assert problem["kind"] == "NetworkAttachmentDefinition"
    assert (problem["namespace"], problem["name"]) == ("billing", "billing-vlan")
    assert problem["field"] == "metadata.creationTimestamp"
    assert problem["file"].startswith("network-attachment-definitions.yaml")
    assert problem["kinds"] == ["NetworkAttachmentDefinition"]
    assert problem["reason"].startswith(
        "1 NetworkAttachmentDefinition object(s) created after the audit instant "
        "2026-11-30T06:00:00Z left out (the first, billing/billing-vlan, created "
        "2026-12-01T00:00:00Z)"
    )


def test_run_warns_when_at_precedes_objects_of_the_input(tmp_path: Path) -> None:
    result = invoke_run(EXAMPLE, tmp_path / "out", at="2026-11-25T00:00:00Z")
    assert result.exit_code == 0, result.output
    assert (
        "Warning: --at 2026-11-25T00:00:00Z precedes the creation of 7 object(s) read "
        "(Backup 6, Restore 1)" in result.output
    )
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    # Backups and Restores are records made once: left out, nothing else is unknown; the
    # storage location validated and the Schedule run after the instant are named only
    # (auditor.sources.asof: their status is later than the instant, fz32)
    assert {p["kind"]: p["kinds"] for p in report["collection_problems"]} == {
        "Backup": [],
        "Restore": [],
        "BackupStorageLocation": [],
        "Schedule": [],
    }
    assert report["run"]["complete"] is False
    # at the export's own instant nothing is left out and nothing is said
    same = invoke_run(EXAMPLE, tmp_path / "same")
    assert same.exit_code == 0 and "precedes the creation" not in same.output


def test_an_instant_before_every_vm_existed_audits_nothing(tmp_path: Path) -> None:
    result = invoke_run(EXAMPLE, tmp_path / "out", at="2000-01-01T00:00:00Z")
    assert result.exit_code == 4
    assert (
        "no VirtualMachine in " in result.output
        and "existed at the audit instant 2000-01-01T00:00:00Z: all 5 were created after it"
        in result.output
    )
    assert not (tmp_path / "out" / "report.json").exists()


def test_a_live_read_counts_objects_made_while_it_ran(tmp_path: Path) -> None:
    """A live read starts at the audit instant and pages its lists for a while: a VMI
    started two minutes in (or stamped by an API server whose clock runs a little ahead)
    was read at that instant, not after it; marking VirtualMachineInstance partial for it
    would make every running VM UNKNOWN. An object an hour later (a catch-up run for an
    earlier slot) is left out, as from an export."""
    from click.testing import CliRunner

    from auditor.cli import main
    from tests.live_support import _export, export_dir, serve

    def vmi_created(when: str) -> dict[str, list[dict[str, object]]]:
        objects, _ = _export(export_dir())
        vmi = objects["VirtualMachineInstance"][0]
        vmi["metadata"]["creationTimestamp"] = when  # type: ignore[index]
        return objects

    outputs = {}
    for label, when in (("minutes", "2026-11-30T06:02:00Z"), ("hour", "2026-11-30T07:00:00Z")):
        (tmp_path / label).mkdir()
        with serve(tmp_path / label, objects=vmi_created(when)) as live:
            res = CliRunner().invoke(
                main,
                ["run", "--kubeconfig", str(live.kubeconfig), "--at", "2026-11-30T06:00:00Z",
                 "--out", str(tmp_path / label / "out"), "--format", "json"],
            )  # fmt: skip
        assert res.exit_code == 0, res.output
        outputs[label] = json.loads((tmp_path / label / "out" / "report.json").read_text())
    later = [p for p in outputs["minutes"]["collection_problems"] if "created after" in p["reason"]]
    assert later == []
    assert outputs["minutes"]["cluster"]["kind_states"]["VirtualMachineInstance"] == "complete"
    (hour,) = [p for p in outputs["hour"]["collection_problems"] if "created after" in p["reason"]]
    assert hour["kind"] == "VirtualMachineInstance" and hour["kinds"] == ["VirtualMachineInstance"]
    assert outputs["hour"]["cluster"]["kind_states"]["VirtualMachineInstance"] == "partial"


def test_every_written_form_of_a_creation_time_is_judged_by_its_instant() -> None:
    """The API server's own form ("...T..:..:..Z") is compared as text; every other form an
    RFC 3339 reader accepts is parsed, so a time written with a blank, a lowercase "t", a
    fraction or an offset is judged by the instant it names, and one that is no time stays."""
    from datetime import timedelta

    from auditor.sources.asof import leave_out_after
    from auditor.sources.base import ClusterData, KindState, SourceInfo

    until = AUDIT_AT + timedelta(microseconds=500_000)  # a live read's bound need not be whole
    stamps = {
        "canonical-before": ("2026-11-29T23:59:59Z", True),
        "canonical-same-second": (AUDIT_AT.strftime("%Y-%m-%dT%H:%M:%SZ"), True),
        "canonical-after": ((AUDIT_AT + timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%SZ"), False),
        "blank-after": ((AUDIT_AT + timedelta(hours=3)).strftime("%Y-%m-%d %H:%M:%SZ"), False),
        # Go's time.Parse(RFC3339) refuses a lowercase "t" (the validators name it): no time
        "lower-t-after": ((AUDIT_AT + timedelta(hours=3)).strftime("%Y-%m-%dt%H:%M:%SZ"), True),
        "lower-z-after": ((AUDIT_AT + timedelta(hours=3)).strftime("%Y-%m-%dT%H:%M:%Sz"), False),
        "fraction-after": ((AUDIT_AT + timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%S.25Z"), False),
        "offset-before": ((AUDIT_AT + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S+02:00"), True),
        "offset-after": ((AUDIT_AT - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S-02:00"), False),
        "not-a-time": ("2026-13-99T99:99:99Z", True),
        "no-time": (None, True),
    }  # fmt: skip
    objects = [
        {"metadata": {"name": name, "namespace": "ns", "creationTimestamp": stamp}}
        for name, (stamp, _) in stamps.items()
    ]
    data = ClusterData(
        info=SourceInfo(type="directory", location="x"),
        objects={"NetworkAttachmentDefinition": objects},
        states={"NetworkAttachmentDefinition": KindState.COMPLETE},
    )
    kept = leave_out_after(data, until, at=AUDIT_AT)
    names = [o["metadata"]["name"] for o in kept.of("NetworkAttachmentDefinition")]
    assert names == [name for name, (_, stays) in stamps.items() if stays]
    assert data.of("NetworkAttachmentDefinition") == objects  # the caller's data untouched
