"""Bucket evidence against a real SeaweedFS server holding a Velero-layout bucket.

The bucket is written by ``tests/bucket_support.py`` from ``examples/small-cluster``
(and the shared cluster export when present); each case changes one thing the
way a real bucket goes wrong and asserts the reader's record and the verdict.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from auditor.config import AuditSettings
from auditor.pipeline import audit_data
from auditor.sources.base import ClusterData
from auditor.sources.bucket.load import read_backup_storage
from auditor.sources.directory import DirectorySource
from tests.bucket_support import Mutations, backups_in, write_velero_bucket
from tests.conftest import AUDIT_AT, report_doc
from tests.publish_support import ACCESS_KEY, SECRET_KEY, WeedServer

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "small-cluster"
_names = itertools.count()
NEWEST_BILLING = "billing-daily-20261130"
NEWEST_WEB = "web-nightly-20261130"


def make_bucket(
    weed: WeedServer, data: ClusterData, mutations: Mutations | None = None, *, lock: bool = False
) -> str:
    client = weed.client()
    name = f"velero-{next(_names)}"
    if lock:
        client.create_bucket(Bucket=name, ObjectLockEnabledForBucket=True)
        client.put_object_lock_configuration(
            Bucket=name,
            ObjectLockConfiguration={
                "ObjectLockEnabled": "Enabled",
                "Rule": {"DefaultRetention": {"Mode": "GOVERNANCE", "Days": 30}},
            },
        )
    else:
        client.create_bucket(Bucket=name)
    write_velero_bucket(client, name, "velero", data, "default", mutations)
    return name


def settings_for(weed: WeedServer, bucket: str, tmp: Path, **extra: Any) -> AuditSettings:
    return AuditSettings.model_validate(
        {
            "backup_storage": {
                "locations": {
                    "default": {
                        "endpoint_url": weed.endpoint,
                        "addressing_style": "path",
                        "bucket": bucket,
                        "prefix": "velero",
                    }
                },
                "cache_dir": str(tmp / "cache"),
                "max_attempts": 1,
            },
            **extra,
        }
    )


def audit(
    weed: WeedServer,
    tmp: Path,
    mutations: Mutations | None = None,
    *,
    lock: bool = False,
    secret: str = SECRET_KEY,
    **extra: Any,
) -> tuple[ClusterData, dict[str, Any]]:
    data = DirectorySource(EXAMPLE).collect()
    bucket = make_bucket(weed, data, mutations, lock=lock)
    settings = settings_for(weed, bucket, tmp, **extra)
    read_backup_storage(data, settings, sessions={"default": weed.session(secret)})
    return data, report_doc(audit_data(data, settings, at=AUDIT_AT))


def finding(report: dict[str, Any], ref: str, check_id: str) -> dict[str, Any]:
    ns, name = ref.split("/")
    vm = next(v for v in report["vms"] if (v["namespace"], v["name"]) == (ns, name))
    return next(f for f in vm["findings"] if f["check_id"] == check_id)


def readiness(report: dict[str, Any], ref: str) -> str:
    ns, name = ref.split("/")
    return str(
        next(v for v in report["vms"] if (v["namespace"], v["name"]) == (ns, name))["readiness"]
    )


def test_faithful_bucket_reads_every_backup_and_passes(weed: WeedServer, tmp_path: Path) -> None:
    data, report = audit(weed, tmp_path)
    assert data.backup_contents is not None
    names = {b["metadata"]["name"] for b in backups_in(data, "default")}
    assert {n for n, c in data.backup_contents.items() if c.state == "read"} == names
    newest = data.backup_contents[NEWEST_BILLING]
    assert ("virtualmachines.kubevirt.io", "billing", "billing-db") in (newest.resources or ())
    assert set(newest.vm_manifests) == {("billing", "billing-db"), ("billing", "billing-win")}
    assert {(v.pvc, v.method, v.outcome) for v in newest.volumes or ()} >= {
        ("billing-db-root", "csi-snapshot", "captured"),
        ("billing-db-data", "csi-snapshot", "captured"),
    }
    for check in ("RR-BKP-008", "RR-BKP-009", "RR-BKP-010"):
        assert finding(report, "billing/billing-db", check)["status"] == "PASS", check
    assert readiness(report, "billing/billing-db") == "READY"
    run = report["run"]["backup_storage"]
    assert run["configured"] is True
    assert run["locations"][0]["state"] == "read"
    assert data.storage_locations is not None
    loc = data.storage_locations["default"]
    assert loc.state == "read" and loc.backups_read == len(names) and loc.cached == 0
    # 2 protection calls + 1 listing page + per backup 3 small files and 1 archive
    assert loc.requests == 3 + 4 * len(names)
    assert loc.bytes_read > 0
    assert "CANARY" not in json.dumps(report)


def test_manifests_in_the_bucket_are_secret_stripped(weed: WeedServer, tmp_path: Path) -> None:
    def leak(vm: dict[str, Any]) -> None:
        vols = vm["spec"]["template"]["spec"]["volumes"]
        vols.append({"name": "ci2", "cloudInitNoCloud": {"userData": "password: CANARY-bucket"}})

    data, report = audit(
        weed, tmp_path, Mutations(vm_patch={(NEWEST_BILLING, "billing", "billing-db"): leak})
    )
    assert data.backup_contents is not None
    saved = data.backup_contents[NEWEST_BILLING].vm_manifests[("billing", "billing-db")]
    assert "CANARY-bucket" not in str(saved)
    assert "CANARY-bucket" not in json.dumps(report)
    cached = list((tmp_path / "cache").rglob("*.json"))
    assert cached and not any(b"CANARY-bucket" in p.read_bytes() for p in cached)


def test_failed_volume_in_volume_info(weed: WeedServer, tmp_path: Path) -> None:
    m = Mutations(failed_pvcs={(NEWEST_BILLING, "billing", "billing-db-data")})
    data, report = audit(weed, tmp_path, m)
    assert data.backup_contents is not None
    vols = {v.pvc: v for v in data.backup_contents[NEWEST_BILLING].volumes or ()}
    assert vols["billing-db-data"].outcome == "failed"
    assert vols["billing-db-data"].detail == "result failed"
    assert vols["billing-db-root"].outcome == "captured"
    # the capture evaluation takes the bucket's word over the cluster's Completed phase
    f = finding(report, "billing/billing-db", "RR-BKP-004")
    assert f["status"] == "FAIL" and "billing-db-data failed in backup" in f["message"]
    assert readiness(report, "billing/billing-db") == "NOT_READY"


def test_resource_list_without_the_vms_nad(weed: WeedServer, tmp_path: Path) -> None:
    nad = "network-attachment-definitions.k8s.cni.cncf.io"
    m = Mutations(drop={(NEWEST_BILLING, nad, "billing", "billing-vlan")})
    _, report = audit(weed, tmp_path, m)
    f = finding(report, "billing/billing-db", "RR-BKP-008")
    assert (f["status"], f["severity"]) == ("FAIL", "high")
    assert f["evidence"]["missing"] == [f"{nad} billing/billing-vlan"]
    assert f["evidence"]["backup"] == NEWEST_BILLING
    assert readiness(report, "billing/billing-db") == "NOT_READY"


def test_backup_whose_objects_are_gone(weed: WeedServer, tmp_path: Path) -> None:
    m = Mutations(
        delete={NEWEST_WEB}, delete_files={("web-nightly-20261129", "web-nightly-20261129.tar.gz")}
    )
    data, report = audit(weed, tmp_path, m)
    assert data.backup_contents is not None
    gone = data.backup_contents[NEWEST_WEB]
    assert gone.state == "missing" and "no objects under velero/backups/" in gone.detail
    partial = data.backup_contents["web-nightly-20261129"]
    assert partial.state == "missing" and "web-nightly-20261129.tar.gz absent" in partial.detail
    f = finding(report, "web/web-api", "RR-BKP-010")
    assert (f["status"], f["severity"]) == ("FAIL", "medium")  # an older backup is still there
    assert {b["backup"] for b in f["evidence"]["backups"] if b["state"] == "missing"} == {
        NEWEST_WEB,
        "web-nightly-20261129",
    }
    # the newest Backup is no restore point any more: the newest usable one is two days old
    assert finding(report, "web/web-api", "RR-BKP-002")["status"] == "FAIL"


def test_backed_up_mac_differs_from_live(weed: WeedServer, tmp_path: Path) -> None:
    def new_mac(vm: dict[str, Any]) -> None:
        vm["spec"]["template"]["spec"]["domain"]["devices"]["interfaces"][1]["macAddress"] = (
            "02:00:00:00:00:99"
        )

    m = Mutations(vm_patch={(NEWEST_BILLING, "billing", "billing-db"): new_mac})
    _, report = audit(weed, tmp_path, m)
    f = finding(report, "billing/billing-db", "RR-BKP-009")
    assert (f["status"], f["severity"]) == ("FAIL", "medium")
    assert f["evidence"]["drift"] == [
        {"field": "nic/vlan.mac", "backup": "02:00:00:00:00:99", "live": "02:00:00:00:00:02"}
    ]
    assert readiness(report, "billing/billing-db") == "AT_RISK"


def test_bucket_with_and_without_object_lock(weed: WeedServer, tmp_path: Path) -> None:
    data, report = audit(weed, tmp_path / "a", lock=True)
    assert data.storage_locations is not None
    loc = data.storage_locations["default"]
    assert (loc.versioning, loc.object_lock, loc.lock_mode, loc.lock_days) == (
        "Enabled", True, "GOVERNANCE", 30,
    )  # fmt: skip
    plt = next(f for f in report["platform_findings"] if f["check_id"] == "RR-PLT-005")
    assert plt["status"] == "PASS"

    data, report = audit(weed, tmp_path / "b")
    assert data.storage_locations is not None
    assert data.storage_locations["default"].object_lock is False
    plt = next(f for f in report["platform_findings"] if f["check_id"] == "RR-PLT-005")
    assert (plt["status"], plt["severity"]) == ("FAIL", "info")

    required = {"thresholds": {"require_immutable_backups": True}}
    _, report = audit(weed, tmp_path / "c", **required)
    plt = next(f for f in report["platform_findings"] if f["check_id"] == "RR-PLT-005")
    assert (plt["status"], plt["severity"]) == ("FAIL", "high")


def test_wrong_credentials_error_naming_the_location(weed: WeedServer, tmp_path: Path) -> None:
    data, report = audit(weed, tmp_path, secret="not-the-secret")
    assert data.backup_contents is not None
    assert {c.state for c in data.backup_contents.values()} == {"error"}
    for check in ("RR-BKP-008", "RR-BKP-009", "RR-BKP-010"):
        f = finding(report, "billing/billing-db", check)
        assert f["status"] == "ERROR", check
        assert "BackupStorageLocation default" in f["message"], check
        assert "access denied (SignatureDoesNotMatch)" in f["message"], check
    plt = next(f for f in report["platform_findings"] if f["check_id"] == "RR-PLT-005")
    assert plt["status"] == "ERROR" and "BackupStorageLocation default" in plt["message"]
    assert readiness(report, "billing/billing-db") == "UNKNOWN"
    assert report["run"]["backup_storage"]["locations"][0]["state"] == "error"


def test_warm_cache_reads_no_backup_again(weed: WeedServer, tmp_path: Path) -> None:
    data = DirectorySource(EXAMPLE).collect()
    bucket = make_bucket(weed, data)
    settings = settings_for(weed, bucket, tmp_path)
    read_backup_storage(data, settings, sessions={"default": weed.session()})
    assert data.storage_locations is not None
    cold = data.storage_locations["default"]
    first = dict(data.backup_contents or {})
    read_backup_storage(data, settings, sessions={"default": weed.session()})
    warm = data.storage_locations["default"]
    assert (warm.backups_read, warm.cached) == (0, cold.backups_read)
    assert warm.requests == 3  # versioning, Object Lock, one listing page
    assert data.backup_contents == first
    # a Backup gone from the cluster (Velero's GC) leaves the cache on the next run
    cache = tmp_path / "cache" / "default"
    assert (cache / f"{NEWEST_WEB}.json").is_file()
    data.objects["Backup"] = [b for b in data.of("Backup") if b["metadata"]["name"] != NEWEST_WEB]
    read_backup_storage(data, settings, sessions={"default": weed.session()})
    assert not (cache / f"{NEWEST_WEB}.json").exists()
    assert len(list(cache.glob("*.json"))) == cold.backups_read - 1


def test_not_configured_keeps_cluster_only_evidence() -> None:
    data = DirectorySource(EXAMPLE).collect()
    report = report_doc(audit_data(data, AuditSettings(), at=AUDIT_AT))
    assert data.backup_contents is None
    assert report["run"]["backup_storage"]["configured"] is False
    assert "cluster only" in report["run"]["backup_storage"]["note"]
    for vm in report["vms"]:
        for f in vm["findings"]:
            if f["check_id"] in ("RR-BKP-008", "RR-BKP-009", "RR-BKP-010"):
                assert f["status"] == "NOT_APPLICABLE"


def test_run_command_reads_the_bucket_from_config(weed: WeedServer, tmp_path: Path) -> None:
    """`auditor run --config` with a profile in a credentials file: the one orchestration."""
    import json

    from tests.conftest import invoke_run

    data = DirectorySource(EXAMPLE).collect()
    bucket = make_bucket(weed, data, Mutations(delete={NEWEST_WEB}))
    creds = tmp_path / "credentials"
    creds.write_text(
        f"[velero-ro]\naws_access_key_id = {ACCESS_KEY}\naws_secret_access_key = {SECRET_KEY}\n"
    )
    config = tmp_path / "auditor.yaml"
    config.write_text(
        json.dumps(
            {
                "backup_storage": {
                    "locations": {
                        "default": {
                            "endpoint_url": weed.endpoint,
                            "addressing_style": "path",
                            "bucket": bucket,
                            "prefix": "velero",
                            "profile": "velero-ro",
                            "credentials_file": str(creds),
                        }
                    },
                    "cache_dir": str(tmp_path / "cache"),
                }
            }
        )
    )
    result = invoke_run(EXAMPLE, tmp_path / "out", "--config", str(config), "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["run"]["backup_storage"]["backups"] == {"missing": 1, "read": 6}
    f = finding(report, "web/web-api", "RR-BKP-010")
    assert f["status"] == "FAIL" and NEWEST_WEB in f["message"]


def test_older_velero_without_volume_info_or_resource_list(
    weed: WeedServer, tmp_path: Path
) -> None:
    data, report = audit(weed, tmp_path, Mutations(old_velero={NEWEST_BILLING}))
    assert data.backup_contents is not None
    old = data.backup_contents[NEWEST_BILLING]
    assert (old.state, old.resources) == ("read", None)
    assert "-volumeinfo.json.gz" in old.detail and "older Velero" in old.detail
    # without volume info, the CSI VolumeSnapshotContents are matched to PVCs through the PVs
    assert {(v.pvc, v.method, v.outcome, v.detail) for v in old.volumes or ()} == {
        (p, "csi-snapshot", "captured", "VolumeSnapshotContent readyToUse")
        for p in ("billing-db-root", "billing-db-data", "persistent-state-for-billing-db-q7x2k",
                  "billing-win-root", "persistent-state-for-billing-win-q7x2k")
    }  # fmt: skip
    # the archive is still read in full when no resource list names the VMs
    assert set(old.vm_manifests) == {("billing", "billing-db"), ("billing", "billing-win")}
    f = finding(report, "billing/billing-db", "RR-BKP-008")
    assert f["status"] == "NOT_APPLICABLE" and "no resource list" in f["message"]
    assert finding(report, "billing/billing-db", "RR-BKP-009")["status"] == "PASS"


def test_shared_export_bucket(weed: WeedServer, tmp_path: Path) -> None:
    """The shared cluster export's backups, laid out in a bucket and read back."""
    from tests.conftest import find_corpus

    export = find_corpus() / "cluster-export"
    data = DirectorySource(export).collect()
    client = weed.client()
    bucket = f"velero-{next(_names)}"
    client.create_bucket(Bucket=bucket)
    written = write_velero_bucket(client, bucket, "velero", data, "dpa-primary-1")
    settings = AuditSettings.model_validate(
        {
            "backup_storage": {
                "locations": {
                    "dpa-primary-1": {
                        "endpoint_url": weed.endpoint,
                        "addressing_style": "path",
                        "bucket": bucket,
                    }
                },
                "cache_dir": str(tmp_path / "cache"),
            }
        }
    )
    read_backup_storage(data, settings, sessions={"dpa-primary-1": weed.session()})
    assert data.backup_contents is not None and data.storage_locations is not None
    # the BSL's own spec gives the prefix (objectStorage.prefix: velero)
    assert data.storage_locations["dpa-primary-1"].prefix == "velero"
    assert len(written) == 17
    assert {n for n, c in data.backup_contents.items() if c.state == "read"} == set(written)
    # the FailedValidation Backup names location "default", which is not configured: no entry
    assert "web-admin-jump-adhoc-20261118" not in data.backup_contents
    newest = data.backup_contents["finance-prod-daily-20261130010019"]
    assert ("finance-prod", "fin-db-01") in newest.vm_manifests
    report = report_doc(audit_data(data, settings, at=AUDIT_AT))
    for check in ("RR-BKP-008", "RR-BKP-009", "RR-BKP-010"):
        f = finding(report, "finance-prod/fin-db-01", check)
        assert f["status"] == "PASS", f["message"]


def _config(
    weed: WeedServer, bucket: str, tmp: Path, creds: Path, **location: Any
) -> dict[str, Any]:
    return {
        "backup_storage": {
            "locations": {
                "default": {
                    "endpoint_url": weed.endpoint,
                    "addressing_style": "path",
                    "bucket": bucket,
                    "prefix": "velero",
                    "profile": "velero-ro",
                    "credentials_file": str(creds),
                    **location,
                }
            },
            "cache_dir": str(tmp / "cache"),
            "max_attempts": 1,
        }
    }


def _credentials(tmp: Path) -> Path:
    creds = tmp / "credentials"
    creds.write_text(
        f"[velero-ro]\naws_access_key_id = {ACCESS_KEY}\naws_secret_access_key = {SECRET_KEY}\n"
    )
    return creds


def test_scheduled_service_runner_reads_the_bucket(weed: WeedServer, tmp_path: Path) -> None:
    """The service's production runner goes through the same pipeline.run_audit."""
    from auditor.service.jobs import pipeline_runner

    data = DirectorySource(EXAMPLE).collect()
    bucket = make_bucket(weed, data, Mutations(delete={NEWEST_WEB}))
    raw = _config(weed, bucket, tmp_path, _credentials(tmp_path))
    raw["source"] = {"type": "directory", "path": str(EXAMPLE)}
    settings = AuditSettings.model_validate(raw)
    report = pipeline_runner(settings, at=AUDIT_AT, out_dir=tmp_path / "out", formats=["json"])
    assert report["run"]["backup_storage"]["backups"] == {"missing": 1, "read": 6}
    assert finding(report, "web/web-api", "RR-BKP-010")["status"] == "FAIL"


def test_tls_endpoint_needs_the_ca_bundle(weed: WeedServer, tmp_path: Path) -> None:
    data = DirectorySource(EXAMPLE).collect()
    bucket = make_bucket(weed, data)
    creds = _credentials(tmp_path)
    https = {"endpoint_url": weed.https_endpoint}
    without = AuditSettings.model_validate(_config(weed, bucket, tmp_path / "a", creds, **https))
    read_backup_storage(data, without)
    assert data.storage_locations is not None
    status = data.storage_locations["default"]
    assert status.state == "error" and "TLS verification failed" in status.detail
    assert "BackupStorageLocation default" in status.detail

    data = DirectorySource(EXAMPLE).collect()
    ca = {**https, "ca_bundle": str(weed.ca_file)}
    with_ca = AuditSettings.model_validate(_config(weed, bucket, tmp_path / "b", creds, **ca))
    read_backup_storage(data, with_ca)
    assert data.storage_locations is not None
    assert data.storage_locations["default"].state == "read"
    assert {c.state for c in (data.backup_contents or {}).values()} == {"read"}


def test_warm_rerun_of_one_instant_republishes_without_conflict(
    weed: WeedServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Two `run --at T` with bucket reading on, the second answered from the ETag cache:
    the reader's request counters are not in report.json (manifest.json seals it), so the
    second run writes the same report and publishes as the same run, not a conflict."""
    from tests.conftest import invoke_run

    data = DirectorySource(EXAMPLE).collect()
    bucket = make_bucket(weed, data)
    creds = tmp_path / "credentials"
    creds.write_text(
        f"[velero-ro]\naws_access_key_id = {ACCESS_KEY}\naws_secret_access_key = {SECRET_KEY}\n"
    )
    location = {
        "endpoint_url": weed.endpoint,
        "addressing_style": "path",
        "bucket": bucket,
        "prefix": "velero",
        "profile": "velero-ro",
        "credentials_file": str(creds),
    }
    config = tmp_path / "auditor.yaml"
    config.write_text(
        json.dumps(
            {
                "backup_storage": {
                    "locations": {"default": location},
                    "cache_dir": str(tmp_path / "cache"),
                },
                "publish": {"url": str(tmp_path / "archive"), "spool_dir": str(tmp_path / "spool")},
            }
        )
    )
    caplog.set_level("INFO", logger="auditor.sources.bucket.load")
    docs = []
    for out in ("cold", "warm"):
        result = invoke_run(EXAMPLE, tmp_path / out, "--config", str(config), "--format", "json")
        assert result.exit_code == 0, result.output
        assert "published run" in result.output
        docs.append((tmp_path / out / "report.json").read_bytes())
    assert docs[0] == docs[1]
    assert not (tmp_path / "spool" / "quarantine").exists() or not any(
        (tmp_path / "spool" / "quarantine").iterdir()
    )
    loc = json.loads(docs[1])["run"]["backup_storage"]["locations"][0]
    assert not {"requests", "bytes_read", "backups_read", "cached"} & set(loc)
    # the counters are logged instead: the cold run read every backup, the warm one none
    lines = [r.getMessage() for r in caplog.records if "requests" in r.getMessage()]
    assert len(lines) == 2 and ", 0 cached" in lines[0] and " 0 backups read" in lines[1]
