"""A VirtualMachine whose object the source refuses (malformed) stays in the report.

The reader names a malformed VM object and does not read it (a label value the API server
refuses, a spec that is no mapping). Before, such a VM was named among the collection
problems but missing from ``vms``: a reader looking it up (a backup owner, the answer key of
a malformed export) found nothing. Now it is listed as UNKNOWN with every check ERROR, from
the pipeline and from ``engine.evaluate`` alike. Built from the bundled example
(examples/small-cluster), so it runs without ../shared.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from auditor.config import AuditSettings
from auditor.engine import evaluate
from auditor.envelope.build import build_envelope
from auditor.pipeline import audit_data
from auditor.sources.directory import DirectorySource
from tests.conftest import EXAMPLE, edited_example, report_doc

AT = datetime(2026, 11, 30, 6, tzinfo=UTC)


def _vms(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f"{v['namespace']}/{v['name']}": v for v in doc["vms"]}


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        ("app: billing-db", 'app: "billing db!"', "metadata.labels"),
        ("      app: billing-db\n", "      app: null\n      x: null\n", "metadata.labels"),
    ],
)
def test_a_refused_vm_is_listed_unknown_with_every_check_error(
    tmp_path: Path, old: str, new: str, field: str
) -> None:
    data = DirectorySource(edited_example(tmp_path, old, new)).collect()
    assert "billing/billing-db" not in {
        f"{v['metadata']['namespace']}/{v['metadata']['name']}" for v in data.of("VirtualMachine")
    }
    doc = report_doc(audit_data(data, AuditSettings(), at=AT))
    vms = _vms(doc)
    vm = vms["billing/billing-db"]
    assert vm["readiness"] == "UNKNOWN"
    statuses = {f["status"] for f in vm["findings"]}
    assert statuses == {"ERROR"}
    assert len(vm["findings"]) == len({c["id"] for c in doc["checks"] if c["scope"] == "vm"})
    assert all("was not read" in f["message"] for f in vm["findings"])
    assert all(f["evidence"]["field"] == field for f in vm["findings"])
    # the other VMs are still audited, in namespace/name order, and the run is incomplete
    assert list(vms) == sorted(vms, key=lambda r: tuple(r.split("/")))
    assert len(vms) == 5
    assert doc["run"]["complete"] is False
    assert doc["summary"]["readiness"]["UNKNOWN"] >= 1
    named = [p for p in doc["collection_problems"] if p["name"] == "billing-db"]
    assert named and named[0]["kind"] == "VirtualMachine" and named[0]["field"] == field
    # engine.evaluate (build_envelope) gives the same entry
    other = report_doc(
        build_envelope(data, evaluate(data, AuditSettings(), at=AT), AuditSettings(), at=AT)
    )
    assert _vms(other)["billing/billing-db"] == vm


def test_a_well_formed_export_lists_no_unread_vm(tmp_path: Path) -> None:
    data = DirectorySource(EXAMPLE).collect()
    doc = report_doc(audit_data(data, AuditSettings(), at=AT))
    assert len(doc["vms"]) == len(data.of("VirtualMachine")) == 5
    assert not any("was not read" in f["message"] for v in doc["vms"] for f in v["findings"])


def test_a_vm_named_by_a_field_problem_is_not_listed_twice(tmp_path: Path) -> None:
    """A VM read with a malformed field (kept, named) is audited once, not also as unread."""
    data = DirectorySource(
        edited_example(tmp_path, "            name: billing-db-data\n", "            name: 5\n")
    ).collect()
    assert len(data.of("VirtualMachine")) == 5  # read; the field is named while auditing
    doc = report_doc(audit_data(data, AuditSettings(), at=AT))
    assert any(p["name"] == "billing-db" for p in doc["collection_problems"])
    refs = [f"{v['namespace']}/{v['name']}" for v in doc["vms"]]
    assert len(refs) == len(set(refs)) == 5
    vm = _vms(doc)["billing/billing-db"]
    assert not any("was not read" in f["message"] for f in vm["findings"])
    assert vm["readiness"] in ("UNKNOWN", "NOT_READY")


def test_a_vm_created_after_the_audit_instant_is_left_out_not_listed(tmp_path: Path) -> None:
    """A VM left out as created after the instant (auditor.sources.asof) did not exist then:
    it is named among the problems but is no unread VM (only refused objects are)."""
    data = DirectorySource(
        edited_example(
            tmp_path,
            "creationTimestamp: '2026-01-10T09:59:00Z'",
            "creationTimestamp: '2026-12-01T00:00:00Z'",
        )
    ).collect()
    doc = report_doc(audit_data(data, AuditSettings(), at=AT))
    refs = {f"{v['namespace']}/{v['name']}" for v in doc["vms"]}
    assert "billing/billing-db" not in refs and len(refs) == 4
    assert any(p["name"] == "billing-db" for p in doc["collection_problems"])


def test_a_vm_at_an_apiversion_the_auditor_does_not_read_is_listed_unknown(tmp_path: Path) -> None:
    text = (EXAMPLE / "virtualmachines.yaml").read_text()
    first = text.index("apiVersion: kubevirt.io/v1")
    assert text.index("name: billing-db") > first  # billing-db is the first item
    data = DirectorySource(
        edited_example(tmp_path, "apiVersion: kubevirt.io/v1", "apiVersion: kubevirt.io/v2")
    ).collect()
    doc = report_doc(audit_data(data, AuditSettings(), at=AT))
    vm = _vms(doc)["billing/billing-db"]
    assert vm["readiness"] == "UNKNOWN"
    assert {f["status"] for f in vm["findings"]} == {"ERROR"}


@pytest.mark.parametrize(
    "new", ["- kind: VirtualMachine", "- apiVersion: 5\n  kind: VirtualMachine"]
)
def test_a_vm_item_without_an_apiversion_string_is_listed_unknown(tmp_path: Path, new: str) -> None:
    """A List item of the VM file without an apiVersion string is refused, but its kind is
    told by its file: the VM is listed UNKNOWN, its problem naming file, namespace, name and
    field (bench.mutations list_entry no_api_version, seed 8001: it vanished)."""
    data = DirectorySource(
        edited_example(tmp_path, "- apiVersion: kubevirt.io/v1\n  kind: VirtualMachine", new)
    ).collect()
    doc = report_doc(audit_data(data, AuditSettings(), at=AT))
    vm = _vms(doc)["billing/billing-db"]
    assert vm["readiness"] == "UNKNOWN"
    assert {f["status"] for f in vm["findings"]} == {"ERROR"}
    assert len(doc["vms"]) == 5
    named = [p for p in doc["collection_problems"] if p["name"] == "billing-db"]
    assert named[0]["field"] == "apiVersion"
    assert named[0]["namespace"] == "billing"
    assert named[0]["file"] == "virtualmachines.yaml"


@pytest.mark.parametrize("api_version", ["v1", "KubeVirt.io/v1"])
def test_a_vm_under_a_group_the_api_server_never_writes_is_listed_unknown(
    tmp_path: Path, api_version: str
) -> None:
    """A VirtualMachine item at an apiVersion the API server never writes (the core group
    ``v1``, the group in another case; a kind of another group is another CRD) is refused as
    a damaged copy, but listed UNKNOWN (bench.mutations api_version, seed 8010: it
    vanished)."""
    data = DirectorySource(
        edited_example(
            tmp_path,
            "- apiVersion: kubevirt.io/v1\n  kind: VirtualMachine",
            f"- apiVersion: {api_version}\n  kind: VirtualMachine",
        )
    ).collect()
    doc = report_doc(audit_data(data, AuditSettings(), at=AT))
    assert len(doc["vms"]) == 5
    vm = _vms(doc)["billing/billing-db"]
    assert vm["readiness"] == "UNKNOWN"
    assert {f["status"] for f in vm["findings"]} == {"ERROR"}
    assert any(
        p["name"] == "billing-db" and p["kind"] == "VirtualMachine"
        for p in doc["collection_problems"]
    )
