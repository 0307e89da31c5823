"""Red-team round fz27: malformed input never improves a verdict, and is always named.

Each case comes from ``python -m bench.mutations`` (seeds 201 and up) over the shared export
or our fixtures, or from a family added this round; each names file, object and field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.test_evidence_gaps import _audit, _docs

RANK = {"READY": 0, "AT_RISK": 1, "UNKNOWN": 2, "NOT_READY": 2}


def _vm(report: dict[str, Any], name: str = "vm1") -> dict[str, Any]:
    return next(v for v in report["vms"] if v["name"] == name)


def _statuses(report: dict[str, Any]) -> dict[str, str]:
    return {f["check_id"]: f["status"] for f in _vm(report)["findings"]}


@pytest.mark.parametrize("value", ["junk", [{"uuid": "x"}], 7], ids=["str", "list", "int"])
def test_a_vmi_mapping_of_the_wrong_type_on_the_way_to_a_field_is_named(
    tmp_path: Path, value: object
) -> None:
    """A VMI's ``spec.domain.firmware: junk`` read as "no firmware uuid" (bench.mutations
    wrong_type, seed 202 over the shared export): RR-DSK-003 PASS -> FAIL naming a firmware
    change, RR-FW-001 compared with nothing, no collection problem. A step on the way to a
    field that is no mapping is named, and the checks reading the VMI give ERROR."""
    docs = _docs("RR-FW-001/pass.yaml")
    baseline = _audit(tmp_path / "ok", docs)
    vmi = next(d for d in docs if d["kind"] == "VirtualMachineInstance")
    vmi["spec"]["domain"]["firmware"] = value
    report = _audit(tmp_path / "bad", docs)
    named = [
        p
        for p in report["collection_problems"]
        if p["kind"] == "VirtualMachineInstance" and p["field"] == "spec.domain.firmware"
    ]
    assert len(named) == 1 and named[0]["file"].startswith("c.yaml"), report["collection_problems"]
    assert "not a mapping" in named[0]["reason"]
    assert RANK[_vm(report)["readiness"]] >= RANK[_vm(baseline)["readiness"]]
    assert _statuses(baseline)["RR-FW-001"] == "PASS"
    assert _statuses(report)["RR-FW-001"] == "ERROR"
