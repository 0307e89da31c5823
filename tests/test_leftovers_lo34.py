"""Leftovers of the earlier reviews (helper lo34): each a verdict that was wrong or unnamed.

1. An exception raised while building one VM's record (staging its facts, pairing it with
   PVCs, DataVolumes, backups, snapshots and identity, or entering it in the report) ended
   the whole audit with a traceback. Now the per-VM guard (``auditor.pipeline._check_share``,
   ``auditor.engine.Evaluation.unpaired``, ``auditor.inventory.Inventory`` for staging) makes
   that VM UNKNOWN (every check ERROR), names VM, stage and exception (quoted values left
   out) in a collection problem, and marks the audit incomplete; the other VMs keep their
   verdicts. Exit code as ``docs/exit-codes.md``: 0, or 1 with ``--fail-on`` (UNKNOWN counts).
2. A DataVolume restored without the kubevirt Velero plugin was a surely-refused FAIL
   (RR-BKP-004) wherever no KubeVirt CR carried HCO's label, though CDI adopts the PVC when
   its DataVolumeClaimAdoption gate is on, which OpenShift Virtualization does by default:
   an OpenShift export without the CDI/HyperConverged CRs was a false NOT_READY. And a
   DataVolume annotated ``allowClaimAdoption: "false"`` passed under HCO, though CDI reads the
   annotation before and instead of the gate (a false READY). Now the gate is read from
   CDIConfig, the CDI CR (config authority) or a HyperConverged; unseen, the refusal is
   UNKNOWN (ERROR), naming what was not read and the OpenShift signs. Rule:
   ``auditor.inventory.cdiadopt.claim_adoption_gate``, ``restore_refused``
   (containerized-data-importer pkg/controller/common/util.go ``AllowClaimAdoption``,
   hyperconverged-cluster-operator controllers/handlers/cdi.go ``getDefaultFeatureGates``).
3. RR-RST-001: a stale drill (low FAIL, AT_RISK) ranked below no drill at all (info, READY),
   so deleting the old Restore improved the VM. Now a stale drill is info too
   (``docs/readiness.md``), and the fail-stale fixture is a consistent drill.
4. period.csv ``longest_breach_hours`` was 0.0 for a breach seen in one audit only, which
   reads as "no breach". Now it is null/``unknown`` (not measured), and
   ``ended_within_hours`` says by when the next audit saw it over (``docs/period-report.md``).
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
from tests.test_evidence_gaps import _complete, _docs, _finding
from tests.test_redteam_rt33 import NO_PLUGIN, _add_datavolume

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


GATE = "DataVolumeClaimAdoption"


def _cdi_config(gates: list[str]) -> dict[str, Any]:
    return {
        "apiVersion": "cdi.kubevirt.io/v1beta1",
        "kind": "CDIConfig",
        "metadata": {"name": "config"},
        "spec": {"featureGates": gates},
    }


def _cdi(gates: list[str] | None, authority: bool = True) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "cdi-kubevirt-hyperconverged"}
    if authority:
        meta["annotations"] = {"cdi.kubevirt.io/configAuthority": ""}
    spec: dict[str, Any] = {"config": {"featureGates": gates}} if gates is not None else {}
    return {"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "CDI", "metadata": meta, "spec": spec}


def _hco(patch: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "kubevirt-hyperconverged", "namespace": "openshift-cnv"}
    if patch is not None:
        meta["annotations"] = {"containerizeddataimporter.kubevirt.io/jsonpatch": patch}
    return {"apiVersion": "hco.kubevirt.io/v1beta1", "kind": "HyperConverged", "metadata": meta}


def _openshift_namespace() -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "openshift-cnv"}}


@pytest.mark.parametrize(
    ("objects", "status", "words"),
    [
        # nothing shows the gate: unknown, never a surely-refused FAIL (main: FAIL)
        ([], "ERROR", "no CDIConfig, CDI or HyperConverged object shows it"),
        # an OpenShift export without the CRs: HCO's default is on (main: FAIL, NOT_READY)
        (
            [_openshift_namespace()],
            "ERROR",
            "the export shows OpenShift (openshift-* namespaces, oadp.openshift.io "
            "DataProtectionApplications), where OpenShift Virtualization turns it on by default",
        ),
        # the CDIConfig CDI reads decides
        ([_cdi_config([GATE])], "PASS", None),
        ([_cdi_config(["HonorWaitForFirstConsumer"])], "FAIL", f"lacks {GATE}"),
        # the CDI CR with config authority is copied over the CDIConfig
        ([_cdi(["HonorWaitForFirstConsumer", GATE])], "PASS", None),
        ([_cdi(None)], "FAIL", "CDI cdi-kubevirt-hyperconverged spec.config.featureGates lacks"),
        # without config authority the CR does not decide
        ([_cdi([GATE], authority=False)], "ERROR", "no CDIConfig, CDI or HyperConverged"),
        # HyperConverged: HCO writes the CDI CR with the gate (main: FAIL)
        ([_hco()], "PASS", None),
        # ... unless its CDI jsonpatch touches spec.config
        (
            [_hco('[{"op": "replace", "path": "/spec/config/featureGates", "value": []}]')],
            "ERROR",
            "may change CDI's featureGates",
        ),
        ([_hco('[{"op": "add", "path": "/spec/workloads", "value": {}}]')], "PASS", None),
    ],
)
def test_a_refused_datavolume_restore_rests_on_the_claim_adoption_gate_as_seen(
    tmp_path: Path, objects: list[dict[str, Any]], status: str, words: str | None
) -> None:
    docs = _docs(NO_PLUGIN)
    _add_datavolume(docs, "vm1-root")
    docs += objects
    finding = _finding(_complete(tmp_path, NO_PLUGIN, docs), "RR-BKP-004")
    assert finding["status"] == status, finding["message"]
    if words is not None:
        assert words in finding["message"]
    if status == "ERROR":
        assert "whether CDI adopts the restored PVC cannot be seen" in finding["message"]


def test_an_adoption_annotation_that_is_not_true_is_refused_whatever_the_gate(
    tmp_path: Path,
) -> None:
    """CDI reads the DataVolume's allowClaimAdoption first: "false" refuses the PVC even with
    the gate on (main: PASS under a HyperConverged-labelled KubeVirt CR)."""
    docs = _docs(NO_PLUGIN)
    _add_datavolume(docs, "vm1-root", **{"cdi.kubevirt.io/allowClaimAdoption": "false"})
    docs.append(_cdi_config([GATE]))
    for kv in docs:
        if kv["kind"] == "KubeVirt":
            kv["metadata"].setdefault("labels", {})["app.kubernetes.io/part-of"] = (
                "hyperconverged-cluster"
            )
    finding = _finding(_complete(tmp_path, NO_PLUGIN, docs), "RR-BKP-004")
    assert finding["status"] == "FAIL"
    assert "annotation is not true, which CDI reads before and instead of" in finding["message"]


READINESS_ORDER = ("READY", "AT_RISK", "UNKNOWN", "NOT_READY")


def _vm1(tmp_path: Path, fixture: str) -> tuple[str, dict[str, Any]]:
    report = _complete(tmp_path, fixture, _docs(fixture))
    vm = next(v for v in report["vms"] if v["name"] == "vm1")
    return vm["readiness"], _finding(report, "RR-RST-001")


def test_a_stale_restore_drill_never_ranks_below_no_drill(tmp_path: Path) -> None:
    """RR-RST-001's stale drill was a low FAIL (AT_RISK) while no drill at all is info
    (READY): deleting the old Restore improved the VM. Now both are info, and the stale
    drill is a consistent one (created, started, completed in that order, of a Backup older
    than it)."""
    none, none_finding = _vm1(tmp_path / "none", "RR-RST-001/fail-none.yaml")
    stale, stale_finding = _vm1(tmp_path / "stale", "RR-RST-001/fail-stale.yaml")
    assert none_finding["severity"] == "info" and stale_finding["severity"] == "info"
    assert READINESS_ORDER.index(stale) <= READINESS_ORDER.index(none) == 0
    assert "is older than 30 d" in stale_finding["message"]
    restore = next(d for d in _docs("RR-RST-001/fail-stale.yaml") if d["kind"] == "Restore")
    times = (
        restore["metadata"]["creationTimestamp"],
        restore["status"]["startTimestamp"],
        restore["status"]["completionTimestamp"],
    )
    assert list(times) == sorted(times) and times[0].startswith("2026-10-01")
    assert restore["spec"]["backupName"] == "daily-20260930"


def _rows_of(within: list[bool | None]) -> list[tuple[Any, dict[str, Any]]]:
    from datetime import UTC, datetime, timedelta

    first = datetime(2026, 11, 1, 6, tzinfo=UTC)
    return [
        (
            first + timedelta(days=i),
            {
                "namespace": "app",
                "name": "vm1",
                "owner": "team",
                "readiness": "READY",
                "backup": {"within_rpo": w},
                "findings": [],
            },
        )  # fmt: skip
        for i, w in enumerate(within)
    ]


@pytest.mark.parametrize(
    ("within", "audits", "hours", "ended", "csv_hours", "csv_ended"),
    [
        # seen outside the RPO in one daily audit, within again the next day: not measured
        # (main: 0.0 h, read as no breach), over within 24 h
        ([True, False, True], 1, None, 24.0, "unknown", "24.0"),
        # seen in the period's last audit only: not measured, still open
        ([True, True, None], 1, None, None, "unknown", "unknown"),
        # two audits: 24 h measured, over by the third day's audit
        ([False, False, True], 2, 24.0, 48.0, "24.0", "48.0"),
        # no breach
        ([True, True], 0, 0.0, None, "0.0", ""),
    ],
)
def test_a_breach_seen_in_one_audit_has_no_measured_length_not_zero_hours(
    within: list[bool | None],
    audits: int,
    hours: float | None,
    ended: float | None,
    csv_hours: str,
    csv_ended: str,
) -> None:
    import csv
    import io

    from auditor.period.compute import _vm_figures
    from auditor.period.render import period_csv

    figures = _vm_figures(_rows_of(within))
    breach = figures["longest_breach"]
    assert (breach["audits"], breach["hours"], breach["ended_within_hours"]) == (
        audits,
        hours,
        ended,
    )
    [row] = list(csv.DictReader(io.StringIO(period_csv({"vms": [figures]}))))
    assert (row["longest_breach_hours"], row["longest_breach_ended_within_hours"]) == (
        csv_hours,
        csv_ended,
    )
