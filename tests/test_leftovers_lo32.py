"""Leftovers of the earlier reviews (helper lo32): each a verdict that was wrong or unnamed.

1. A persistent-state PVC (EFI NVRAM / TPM) neither labelled ``persistent-state-for=<vm>`` nor
   named exactly ``persistent-state-for-<vm>`` (``persistent-state-for-vm1-abcde`` unlabelled),
   or being deleted, counted as the VM's state PVC, so RR-FW-002 passed and its backups were
   judged on a PVC KubeVirt never starts the VM with (kubevirt
   pkg/storage/backend-storage/backend-storage.go ``PVCForVMI``). Rule:
   ``auditor.inventory.index.ClusterIndex._index_state_pvcs``.
2. RR-NET-002 did not require the NAD a NIC's network binding plugin is registered with
   (KubeVirt CR ``spec.configuration.network.binding.<name>.networkAttachmentDefinition``) to
   be in the VM's backups. Rule: ``auditor.checks.netidentity._binding_nads``.
3. A machine type stated as an alias (``q35``, ``pc``) alike in the VM and its VMI passed
   RR-DSK-003, though QEMU expands it at each start (the VMI's ``status.machine.type``) and a
   restore into a newer cluster gets a later chipset. Now the PASS names the alias (in its
   message and ``machine_type_alias``), failing nothing: a restore re-resolves it as any
   restart does. Rule: ``auditor.checks.identity._machine_alias``.
4. ``auditor serve`` spooled (retried for ever) runs whose publish target is itself
   misconfigured. Rule: ``auditor.publish.hooks.service_publisher``,
   ``auditor.service.jobs.ServiceRuntime._publish``. A real S3 server.
5. ``fleet --at`` / ``report --at`` after what the archive can show (after it was read, or
   days after the newest archived run) were silent, unlike ``run --at``. Now a named warning,
   also in ``problems``. Rule: ``auditor.sources.freshness.at_after_archive``.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.publish_support import WeedServer, weed_credentials
from tests.test_evidence_gaps import _complete, _docs, _finding, _of

Docs = list[dict[str, Any]]

#: app/vm1, running, persistent EFI, its state PVC persistent-state-for-vm1-abcde labelled
#: persistent-state-for=vm1 and in every Backup
FW = "RR-FW-002/pass.yaml"


def _state(docs: Docs, name: str, labels: dict[str, str], deleting: str | None = None) -> None:
    """Rename the persistent-state PVC (and its PV's claimRef), set its labels and deletion."""
    for pvc in _of(docs, "PersistentVolumeClaim"):
        if pvc["metadata"]["name"].startswith("persistent-state-for-"):
            pvc["metadata"]["name"], pvc["metadata"]["labels"] = name, dict(labels)
            if deleting:
                pvc["metadata"]["deletionTimestamp"] = deleting
                pvc["metadata"]["finalizers"] = ["kubernetes.io/pvc-protection"]
    for pv in _of(docs, "PersistentVolume"):
        if pv["spec"]["claimRef"]["name"].startswith("persistent-state-for-"):
            pv["spec"]["claimRef"]["name"] = name


@pytest.mark.parametrize(
    ("name", "labels", "deleting", "words"),
    [
        # the label removed: KubeVirt would create a new, empty PVC at the next start
        (
            "persistent-state-for-vm1-abcde",
            {},
            None,
            "PVC app/persistent-state-for-vm1-abcde is not labelled persistent-state-for=vm1 "
            "and not named exactly persistent-state-for-vm1",
        ),
        # labelled for another VM
        (
            "persistent-state-for-vm1-abcde",
            {"persistent-state-for": "vm2"},
            None,
            "is labelled persistent-state-for=vm2",
        ),
        # a migration target's
        (
            "persistent-state-for-vm1-x7k2p",
            {"kubevirt.io/migrationName": "vm1-migration-x7k2p"},
            None,
            "PVC app/persistent-state-for-vm1-x7k2p is not labelled",
        ),
        # labelled, but being deleted: KubeVirt skips it
        (
            "persistent-state-for-vm1-abcde",
            {"persistent-state-for": "vm1"},
            "2026-11-30T05:00:00Z",
            "is being deleted (since 2026-11-30T05:00:00Z)",
        ),
    ],
)
def test_a_state_pvc_kubevirt_would_not_use_is_no_state(
    tmp_path: Path, name: str, labels: dict[str, str], deleting: str | None, words: str
) -> None:
    docs = _docs(FW)
    _state(docs, name, labels, deleting)
    report = _complete(tmp_path, FW, docs)
    finding = _finding(report, "RR-FW-002")
    assert (finding["status"], finding["severity"]) == ("FAIL", "medium"), finding["message"]
    assert words in finding["message"]
    assert finding["evidence"]["persistent_state_pvc"] is None
    assert finding["evidence"]["state_pvc_lookalikes"] == [name]
    vm = next(v for v in report["vms"] if v["name"] == "vm1")
    assert vm["readiness"] != "READY"


@pytest.mark.parametrize(
    ("name", "labels"),
    [
        ("persistent-state-for-vm1-abcde", {"persistent-state-for": "vm1"}),
        ("vm1-backend-storage", {"persistent-state-for": "vm1"}),
        ("persistent-state-for-vm1", {}),  # the legacy exact name, unlabelled
    ],
)
def test_the_state_pvc_kubevirt_uses_is_the_state(
    tmp_path: Path, name: str, labels: dict[str, str]
) -> None:
    docs = _docs(FW)
    _state(docs, name, labels)
    report = _complete(tmp_path, FW, docs)
    finding = _finding(report, "RR-FW-002")
    assert finding["status"] == "PASS", finding["message"]
    assert finding["evidence"]["persistent_state_pvc"] == name
    vm = next(v for v in report["vms"] if v["name"] == "vm1")
    assert vm["readiness"] == "READY"


#: app/vm1 whose pod-network NIC ``default`` is bound by the plugin passt, which the KubeVirt
#: CR registers without a NAD; its Backups leave NetworkAttachmentDefinitions out
POD_PLUGIN = "RR-NET-002/na-binding-plugin-on-pod-network.yaml"


def _register_nad(docs: Docs, nad: str | None) -> None:
    """Register passt with ``nad`` (None: drop the KubeVirt CR) and add the NAD app/``nad``."""
    (cr,) = _of(docs, "KubeVirt")
    if nad is None:
        docs.remove(cr)
        return
    cr["spec"]["configuration"]["network"]["binding"]["passt"]["networkAttachmentDefinition"] = nad
    docs.append(
        {
            "apiVersion": "k8s.cni.cncf.io/v1",
            "kind": "NetworkAttachmentDefinition",
            "metadata": {
                "name": nad.split("/")[-1],
                "namespace": nad.split("/")[0] if "/" in nad else "app",
                "creationTimestamp": "2026-01-01T00:00:00Z",
            },
            "spec": {"config": '{"cniVersion": "1.0.0", "name": "netbindingpasst"}'},
        }
    )


@pytest.mark.parametrize(
    ("nad", "key"), [("netbindingpasst", "app/netbindingpasst"), ("default/bp", "default/bp")]
)
def test_a_binding_plugin_nad_outside_the_backups_fails(tmp_path: Path, nad: str, key: str) -> None:
    """2. KubeVirt adds the NAD a NIC's binding plugin is registered with to the launcher
    pod's Multus networks annotation (kubevirt pkg/network/multus/annotation.go
    ``newBindingPluginAnnotationData``): a restore without it cannot start the VM. RR-NET-002
    looked only at Multus networks (N/A: the NIC is on the pod network)."""
    docs = _docs(POD_PLUGIN)
    _register_nad(docs, nad)
    report = _complete(tmp_path, POD_PLUGIN, docs)
    finding = _finding(report, "RR-NET-002")
    assert (finding["status"], finding["severity"]) == ("FAIL", "medium"), finding["message"]
    assert f"{key} (NIC default (binding passt))" in finding["message"]
    assert finding["evidence"]["binding_nads"] == {"default (binding passt)": key}
    assert {g["nad"] for g in finding["evidence"]["gaps"]} == {key}
    vm = next(v for v in report["vms"] if v["name"] == "vm1")
    assert vm["readiness"] != "READY"


def test_a_binding_plugin_nad_in_the_backups_passes(tmp_path: Path) -> None:
    docs = _docs(POD_PLUGIN)
    _register_nad(docs, "netbindingpasst")
    for b in _of(docs, "Backup"):
        b["spec"]["includedResources"].append("network-attachment-definitions")
    finding = _finding(_complete(tmp_path, POD_PLUGIN, docs), "RR-NET-002")
    assert finding["status"] == "PASS", finding["message"]
    assert "and of its 1 binding plugin NIC(s)" in finding["message"]


def test_a_binding_plugin_without_the_kubevirt_cr_is_unknown_for_backups(tmp_path: Path) -> None:
    """Whether the plugin needs a NAD in the backups cannot be seen: ERROR, never N/A."""
    docs = _docs(POD_PLUGIN)
    _register_nad(docs, None)
    finding = _finding(_complete(tmp_path, POD_PLUGIN, docs), "RR-NET-002")
    assert finding["status"] == "ERROR", finding["message"]
    assert "the KubeVirt CR was not read" in finding["message"]


#: app/vm1, running, machine type pc-q35-rhel9.4.0 in its spec and its VMI's
DSK = "RR-DSK-003/pass.yaml"


def _machine(docs: Docs, stated: str | None, vmi_spec: str, expanded: str | None) -> None:
    """Set the VM's machine type (None: none), its VMI's and the VMI's status.machine.type."""
    (vm,) = _of(docs, "VirtualMachine")
    domain = vm["spec"]["template"]["spec"]["domain"]
    if stated is None:
        domain.pop("machine", None)
    else:
        domain["machine"] = {"type": stated}
    (vmi,) = _of(docs, "VirtualMachineInstance")
    vmi["spec"]["domain"]["machine"] = {"type": vmi_spec}
    if expanded is not None:
        vmi.setdefault("status", {})["machine"] = {"type": expanded}


def _kubevirt_default(machine: str | None) -> dict[str, Any]:
    conf: dict[str, Any] = {}
    if machine is not None:
        conf = {"architectureConfiguration": {"amd64": {"machineType": machine}}}
    return {
        "apiVersion": "kubevirt.io/v1",
        "kind": "KubeVirt",
        "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
        "spec": {"configuration": conf},
        "status": {"observedKubeVirtVersion": "v1.6.0", "phase": "Deployed"},
    }


@pytest.mark.parametrize(
    ("stated", "expanded", "cr", "running"),
    [
        ("q35", "pc-q35-rhel9.4.0", None, "pc-q35-rhel9.4.0"),
        ("pc", "pc-i440fx-rhel7.6.0", None, "pc-i440fx-rhel7.6.0"),
        # status.machine.type not written (yet): a known alias all the same
        ("q35", None, None, None),
        # no type in the spec, the cluster's default the alias q35 (KubeVirt's built-in)
        (None, "pc-q35-rhel9.4.0", _kubevirt_default(None), "pc-q35-rhel9.4.0"),
    ],
)
def test_a_machine_type_alias_is_named_not_failed(
    tmp_path: Path,
    stated: str | None,
    expanded: str | None,
    cr: dict[str, Any] | None,
    running: str | None,
) -> None:
    """3. ``q35`` and ``pc`` are aliases QEMU resolves to its newest versioned type at each
    start (the VMI's ``status.machine.type`` holds the expansion: kubevirt
    pkg/virt-handler/vm.go ``updateMachineType``); a restore into a cluster with a newer
    KubeVirt gets a later one. Stated alike in the VM and its VMI, RR-DSK-003 passed with no
    word of it; now it passes naming the alias (a restore changes it no more than a restart
    after an upgrade: no FAIL, or nearly every VM of a vanilla cluster, whose built-in default
    is q35, would fail)."""
    docs = _docs(DSK)
    alias = stated or "q35"
    _machine(docs, stated, alias, expanded)
    if cr is not None:
        docs.append(cr)
    report = _complete(tmp_path, DSK, docs)
    finding = _finding(report, "RR-DSK-003")
    assert finding["status"] == "PASS", finding["message"]
    assert f"machine type {alias} is an alias" in finding["message"]
    assert (
        f"the guest runs on {running or 'the type it resolved to, unread'}" in (finding["message"])
    )
    assert finding["evidence"]["machine_type_alias"]["spec"] == alias
    assert finding["evidence"]["machine_type_alias"]["running"] == running


@pytest.mark.parametrize(
    ("stated", "expanded"),
    [("pc-q35-rhel9.4.0", "pc-q35-rhel9.4.0"), ("pc-q35-rhel9.4.0", None)],
)
def test_a_versioned_machine_type_is_no_alias(
    tmp_path: Path, stated: str, expanded: str | None
) -> None:
    docs = _docs(DSK)
    _machine(docs, stated, stated, expanded)
    finding = _finding(_complete(tmp_path, DSK, docs), "RR-DSK-003")
    assert finding["status"] == "PASS", finding["message"]
    assert "machine_type_alias" not in finding["evidence"]


EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "small-cluster"


@pytest.mark.parametrize("lock", ["plain", "missing"])
def test_serve_names_a_misconfigured_target_and_does_not_spool(
    tmp_path: Path,
    weed: WeedServer,
    lock: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """4. ``auditor serve`` spooled a run whose target is itself wrong (COMPLIANCE lock mode on
    a bucket without Object Lock, or no such bucket), to be retried for ever, journaled as
    ``spooled``; ``auditor run`` exits 2 for it (docs/exit-codes.md). Now the service logs an
    error naming the schedule, the run and the fault, journals ``refused`` and spools
    nothing; the run folder stays."""
    from auditor.config import parse_settings
    from auditor.service.jobs import ServiceRuntime
    from auditor.service.journal import RunJournal
    from auditor.service.metrics import ServiceMetrics

    bucket = f"lo32-{lock}"
    if lock == "plain":
        weed.client().create_bucket(Bucket=bucket)
    for key, value in weed_credentials(tmp_path).items():
        monkeypatch.setenv(key, value)
    raw = {
        "cluster_name": "example-cluster",
        "source": {"type": "directory", "path": str(EXAMPLE)},
        "report": {"out_dir": str(tmp_path / "reports"), "formats": ["json"]},
        "publish": {
            "bucket": bucket,
            "prefix": "evidence",
            "endpoint_url": weed.endpoint,
            "region": "us-east-1",
            "addressing_style": "path",
            "object_lock_mode": "COMPLIANCE",
            "object_lock_days": 1,
            "max_attempts": 1,
            "spool_dir": str(tmp_path / "spool"),
        },
        "schedules": [{"id": "daily", "cron": "0 6 * * *", "publish": True}],
        "service": {"state_dir": str(tmp_path / "state")},
    }
    runtime = ServiceRuntime(
        parse_settings(raw, path=tmp_path / "config.yaml"),
        RunJournal(tmp_path / "state" / "runs.sqlite"),
        ServiceMetrics(),
        clock=lambda: datetime(2026, 11, 30, 6, 0, 7, tzinfo=UTC),
    )
    with caplog.at_level(logging.ERROR):
        assert runtime.run("daily") == "success"
    why = "has no Object Lock enabled" if lock == "plain" else "does not exist"
    [rec] = runtime.journal.records("daily")
    assert rec.publish is not None and rec.publish.startswith("refused: "), rec.publish
    assert f"bucket '{bucket}' {why}" in rec.publish
    assert "not spooled" in rec.publish
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert any(
        "schedule daily" in m and "NOT spooled" in m and why in m and rec.run_id in m
        for m in errors
    ), errors
    spool = tmp_path / "spool"
    assert not spool.is_dir() or [p for p in spool.iterdir() if p.name != "quarantine"] == []
    assert (tmp_path / "reports" / "daily" / "20261130T060000Z" / "report.json").is_file()
    runtime.drain_spool()  # nothing waits to be retried
    assert runtime.journal.records("daily")[0].publish == rec.publish


def _archive(tmp_path: Path, *ats: str) -> Path:
    """A local archive holding the example cluster's runs audited at ``ats``."""
    from auditor.publish import PublishSettings, publish_run
    from tests.publish_support import audit_report, make_run

    settings = PublishSettings(local_dir=tmp_path / "archive", spool_dir=tmp_path / "spool")
    for at in ats:
        run = make_run(tmp_path / at.replace(":", ""), audit_report(at))
        assert publish_run(run, settings).published
    return tmp_path / "archive"


def _cli(*args: str) -> Any:
    from click.testing import CliRunner

    from auditor.cli import main

    return CliRunner().invoke(main, list(args))


@pytest.mark.parametrize(
    ("command", "at", "words"),
    [
        # a year ahead of this machine's clock: after the archive was read
        ("fleet", "2099-01-01T00:00:00Z", "--at 2099-01-01T00:00:00Z is after the archive was read"),
        # days after the newest run (2026-11-20), before now
        (
            "fleet",
            "2026-12-01T00:00:00Z",
            "--at 2026-12-01T00:00:00Z is 10.8 days after the newest archived run "
            "(20261120T060000Z-",
        ),
        # the month's report measures to the period's end when --at is later
        ("report", "2026-12-20T00:00:00Z", "the period's end 2026-12-01T00:00:00Z is 10.8 days "
         "after the newest archived run"),
        ("report", "2026-11-29T00:00:00Z", "--at 2026-11-29T00:00:00Z is 8.8 days after"),
    ],
)  # fmt: skip
def test_fleet_and_report_name_an_instant_after_the_archive(
    tmp_path: Path, command: str, at: str, words: str
) -> None:
    """5. ``auditor run --at`` after its input is named (auditor/sources/freshness.py);
    ``fleet --at`` and ``report --at`` after what the archive can show were silent. Now
    the same kind of warning, also in fleet.json / period.json ``problems``; figures
    unchanged."""
    from tests.publish_support import CLUSTER

    archive = _archive(tmp_path, "2026-11-18T06:00:00Z", "2026-11-20T06:00:00Z")
    out = tmp_path / "out"
    if command == "fleet":
        args = ["fleet", "--from", str(archive), "--format", "json"]
        doc = "fleet.json"
    else:
        args = ["report", "--period", "2026-11", "--from", str(archive), "--cluster", CLUSTER]
        args += ["--format", "json"]
        doc = "period.json"
    result = _cli(*args, "--at", at, "--out", str(out))
    assert result.exit_code == 0, result.output
    assert f"Warning: {words}" in result.output
    assert any(words in p for p in json.loads((out / doc).read_text())["problems"])
    # an instant the archive shows: not named
    quiet = _cli(*args, "--at", "2026-11-21T00:00:00Z", "--out", str(tmp_path / "quiet"))
    assert quiet.exit_code == 0, quiet.output
    assert "archive" not in quiet.output.replace(str(archive), "")
