"""Leftovers of the earlier reviews (helper lo34): each a verdict that was wrong or unnamed.

1. An exception raised while building one VM's record (staging its facts, pairing it with
   PVCs, DataVolumes, backups, snapshots and identity, or entering it in the report) ended
   the whole audit with a traceback. Now the per-VM guard (``auditor.pipeline._check_share``,
   ``auditor.engine.Evaluation.unpaired``, ``auditor.inventory.Inventory`` for staging) makes
   that VM UNKNOWN (every check ERROR), names VM, stage and exception (quoted values left
   out) in a collection problem, and marks the audit incomplete; the other VMs keep their
   verdicts. Exit code as ``docs/exit-codes.md``: 0, or 1 with ``--fail-on`` (UNKNOWN counts).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import auditor.inventory
import auditor.pipeline
from auditor.cli.exitcodes import EXIT_GATE, EXIT_OK
from tests.conftest import REPO, invoke_run

EXAMPLE = REPO / "examples" / "small-cluster"
#: The VM the injected faults hit, and a quoted value its exception text carries.
BROKEN = ("web", "web-api")
SECRET = "hunter2-not-for-reports"


def _run(tmp_path: Path, name: str, *extra: str) -> tuple[Any, dict[str, Any]]:
    out = tmp_path / name
    result = invoke_run(EXAMPLE, out, *extra)
    report = json.loads((out / "report.json").read_text()) if (out / "report.json").exists() else {}
    return result, report


def _readiness(report: dict[str, Any]) -> dict[tuple[str, str], str]:
    return {(v["namespace"], v["name"]): v["readiness"] for v in report["vms"]}


def _raise_for_broken(real: Any, pick: Any) -> Any:
    """``real`` that raises (a value quoted in its text) when ``pick(args, kwargs)`` names
    the broken VM."""

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if pick(args, kwargs) == BROKEN:
            raise ValueError(f"bad value '{SECRET}' in a field")
        return real(*args, **kwargs)

    return wrapped


def _meta(vm: Any) -> tuple[str, str]:
    meta = vm.get("metadata", {}) if isinstance(vm, dict) else {}
    return (meta.get("namespace"), meta.get("name"))


#: where the fault is injected -> (module, attribute, picks the VM from the call, stage named)
FAULTS = {
    "staging": (
        auditor.inventory,
        "read_vm_spec",
        lambda a, k: _meta(a[0]),
        "staging",
    ),
    "pairing": (
        auditor.inventory,
        "evaluate_drills",
        lambda a, k: (k["namespace"], k["name"]),
        "pairing",
    ),
    "report entry": (
        auditor.pipeline,
        "vm_entry",
        lambda a, k: (a[0].record.namespace, a[0].record.name),
        "report entry",
    ),
}


@pytest.mark.parametrize("where", sorted(FAULTS))
def test_a_fault_building_one_vm_s_record_makes_that_vm_unknown_and_the_audit_incomplete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    before_result, before = _run(tmp_path, "before")
    assert before_result.exit_code == EXIT_OK, before_result.output
    module, attr, pick, stage = FAULTS[where]
    monkeypatch.setattr(module, attr, _raise_for_broken(getattr(module, attr), pick))
    result, after = _run(tmp_path, "after")
    assert result.exit_code == EXIT_OK, result.output
    assert "Traceback" not in result.output
    # the others keep their verdicts; the broken one is UNKNOWN, every check ERROR
    expected = {**_readiness(before), BROKEN: "UNKNOWN"}
    assert _readiness(after) == expected
    entry = next(v for v in after["vms"] if (v["namespace"], v["name"]) == BROKEN)
    assert {f["status"] for f in entry["findings"]} == {"ERROR"}
    assert len(entry["findings"]) == len(
        next(v for v in before["vms"] if (v["namespace"], v["name"]) == BROKEN)["findings"]
    )
    assert entry["uid"] == "uid-vm-web-web-api"
    assert entry["backup"]["within_rpo"] is None and entry["backup"]["newest_usable"] is None
    assert after["run"]["complete"] is False
    named = [p for p in after["collection_problems"] if p["name"] == "web-api"]
    assert len(named) == 1, after["collection_problems"]
    problem = named[0]
    assert problem["namespace"] == "web" and problem["kind"] == "VirtualMachine"
    assert problem["file"] == "virtualmachines.yaml items[2]"
    assert (
        f"VirtualMachine web/web-api: its record could not be built ({stage})"
        in (problem["reason"])
    )
    assert "ValueError (bad value '…' in a field)" in problem["reason"]
    # the quoted value is in no artifact
    assert SECRET not in (tmp_path / "after" / "report.json").read_text()
    # the gate counts the UNKNOWN VM (docs/exit-codes.md)
    gated, _ = _run(tmp_path, "gated", "--fail-on", "not-ready")
    assert gated.exit_code == EXIT_GATE, gated.output


def test_a_platform_pass_cannot_speak_for_a_vm_whose_record_was_not_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, before = _run(tmp_path, "before")
    passed = {f["check_id"] for f in before["platform_findings"] if f["status"] == "PASS"}
    assert passed  # the example has platform checks that pass
    module, attr, pick, _ = FAULTS["pairing"]
    monkeypatch.setattr(module, attr, _raise_for_broken(getattr(module, attr), pick))
    _, after = _run(tmp_path, "after")
    for f in after["platform_findings"]:
        if f["check_id"] in passed:
            assert f["status"] == "ERROR", f
            assert f["evidence"]["unpaired_vms"] == ["web/web-api"]
            assert "could not be built" in f["message"]


def test_a_worker_s_share_carries_its_unpaired_vms(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The forked worker's share (``_encode_share``/``_decode_share``) keeps the VMs whose
    record was not built: counted in the share (no platform facts) and named."""
    from collections import Counter

    from auditor.pipeline import _decode_share, _encode_share, _Share

    share = _Share([], [], [], Counter({"team": 2}), set(), unpaired=["web/a", "web/b"])
    back = _decode_share(_encode_share(share), range(0, 2), "other")
    assert back.unpaired == ["web/a", "web/b"] and back.facts == []
    # a share that names neither facts nor unpaired VMs for its range is refused
    share.unpaired = ["web/a"]
    with pytest.raises(ValueError, match="does not account for each"):
        _decode_share(_encode_share(share), range(0, 2), "other")
