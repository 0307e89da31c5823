"""Keys and label entries the API server never stores never improve a verdict (fz36).

A key with a blank or an invisible character around it (``"claimName "``, ``" status"``,
``"defaultPlugins\\u00a0"``) is no field of any API the auditor reads: the API server prunes
an unknown field (https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#field-pruning),
so the copy was edited and the field it stands for is missing. A label key or value, or an
annotation key, with a blank or another character than ``IsQualifiedName`` /
``IsValidLabelValue`` allow is refused by the API server
(https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#syntax-and-character-set).
Read as absent, each changed a verdict with nothing named: a claim's
``"velero.io/exclude-from-backup "`` read as no exclusion (NOT_READY -> READY), a DPA's
``" defaultPlugins"`` as no plugin list (NOT_READY -> AT_RISK; bench.mutations key_blank,
seed 4021). Each is now named (file, object, field), the audit incomplete, and the verdict
no better than on the well-formed input.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from auditor.fieldnames import fold_key, spelled_as
from tests.test_evidence_gaps import _complete, _docs, _finding, _of
from tests.test_redteam_rt34 import _readiness

EXCLUDED_PVC = "RR-BKP-004/fail-pvc-exclude-label.yaml"
EXCLUDED_VM = "RR-BKP-001/fail-vm-exclude-label.yaml"
PLUGINS = "RR-BKP-001/fail-plugin-refuses-running-vm-without-vmi.yaml"
LABEL = "velero.io/exclude-from-backup"
#: Readiness no better than NOT_READY (UNKNOWN ranks with it: docs/readiness.md).
NOT_BETTER = ("NOT_READY", "UNKNOWN")


def _problems(report: dict[str, Any]) -> list[dict[str, Any]]:
    return list(report.get("collection_problems") or [])


def _excluded_claim(docs: list[dict[str, Any]]) -> dict[str, Any]:
    return next(
        d for d in _of(docs, "PersistentVolumeClaim") if LABEL in d["metadata"].get("labels", {})
    )


@pytest.mark.parametrize("suffix", [" ", "\u00a0", "\u200b", "\t"])
def test_a_label_key_with_a_blank_is_named_and_never_reads_as_no_exclusion(
    tmp_path: Path, suffix: str
) -> None:
    """A claim labelled ``velero.io/exclude-from-backup=true`` under a key with a blank
    after it: main read no exclusion and the VM READY, nothing named."""
    docs = _docs(EXCLUDED_PVC)
    assert _readiness(_complete(tmp_path / "base", EXCLUDED_PVC, docs)) == "NOT_READY"
    labels = _excluded_claim(docs)["metadata"]["labels"]
    labels[LABEL + suffix] = labels.pop(LABEL)
    report = _complete(tmp_path / "m", EXCLUDED_PVC, docs)
    assert _readiness(report) in NOT_BETTER
    assert _finding(report, "RR-BKP-004")["status"] in ("FAIL", "ERROR")
    named = [p for p in _problems(report) if p["kind"] == "PersistentVolumeClaim"]
    assert named and named[0]["field"] == "metadata.labels"
    assert named[0]["file"] == "c.yaml" and ascii(LABEL + suffix) in named[0]["reason"]
    assert report["run"]["complete"] is False


def test_a_label_value_with_a_blank_is_named(tmp_path: Path) -> None:
    """``"true "`` is no label value the API server stores; read as it stands it is no
    exclusion (Velero compares with ``"true"``), which the well-formed ``true`` was."""
    docs = _docs(EXCLUDED_PVC)
    _excluded_claim(docs)["metadata"]["labels"][LABEL] = "true "
    report = _complete(tmp_path / "m", EXCLUDED_PVC, docs)
    assert _readiness(report) in NOT_BETTER
    named = [p for p in _problems(report) if p["kind"] == "PersistentVolumeClaim"]
    assert named and "'true '" in named[0]["reason"] and named[0]["field"] == "metadata.labels"


def test_a_vm_label_key_with_a_blank_leaves_no_verdict(tmp_path: Path) -> None:
    """The VM's own exclusion label under a key with a blank: the VM is named and unread
    (as a label value of another type already was), never rated READY."""
    docs = _docs(EXCLUDED_VM)
    vm = _of(docs, "VirtualMachine")[0]
    labels = vm["metadata"]["labels"]
    labels[LABEL + " "] = labels.pop(LABEL)
    report = _complete(tmp_path / "m", EXCLUDED_VM, docs)
    assert all(v["readiness"] != "READY" for v in report["vms"])
    named = [p for p in _problems(report) if p["kind"] == "VirtualMachine"]
    assert named and named[0]["field"] == "metadata.labels" and named[0]["name"] == "vm1"


def test_an_annotation_key_with_a_no_break_space_is_named(tmp_path: Path) -> None:
    docs = _docs(EXCLUDED_PVC)
    claim = _excluded_claim(docs)
    claim["metadata"]["annotations"] = {"volume.kubernetes.io/storage-provisioner\u00a0": "x"}
    report = _complete(tmp_path / "m", EXCLUDED_PVC, docs)
    named = [p for p in _problems(report) if p["kind"] == "PersistentVolumeClaim"]
    assert named and named[0]["field"] == "metadata.annotations"


@pytest.mark.parametrize("key", [" defaultPlugins", "defaultPlugins ", "defaultPlugins\u00a0"])
def test_a_field_key_with_a_blank_is_named_at_its_field(tmp_path: Path, key: str) -> None:
    """The DPA's plugin list under ``" defaultPlugins"``: main read no list, and the VM went
    NOT_READY -> AT_RISK (RR-BKP-001's refused backup no longer seen), nothing named."""
    docs = _docs(PLUGINS)
    assert _readiness(_complete(tmp_path / "base", PLUGINS, docs)) == "NOT_READY"
    velero = _of(docs, "DataProtectionApplication")[0]["spec"]["configuration"]["velero"]
    velero[key] = velero.pop("defaultPlugins")
    report = _complete(tmp_path / "m", PLUGINS, docs)
    assert _readiness(report) in NOT_BETTER
    named = [p for p in _problems(report) if p["kind"] == "DataProtectionApplication"]
    assert named and named[0]["field"] == "spec.configuration.velero.defaultPlugins"
    assert repr(key) in named[0]["reason"]


def test_a_top_level_key_with_a_blank_is_named(tmp_path: Path) -> None:
    """A Backup whose ``status`` is written ``" status"`` (main read a Backup with no status,
    unnamed) and a VMI whose ``spec`` is ``"spec "``."""
    docs = _docs(EXCLUDED_PVC)
    backup = _of(docs, "Backup")[0]
    backup[" status"] = backup.pop("status")
    report = _complete(tmp_path / "m", EXCLUDED_PVC, docs)
    named = [p for p in _problems(report) if p["kind"] == "Backup"]
    assert named and named[0]["field"] == "status" and "' status'" in named[0]["reason"]
    assert _readiness(report) in NOT_BETTER


def test_a_vm_field_key_with_a_blank_is_named_and_its_readers_error(tmp_path: Path) -> None:
    """A VM volume's DataVolume ``"name "``: the disk's DataVolume is missing from the copy."""
    docs = _docs(EXCLUDED_PVC)
    vm = _of(docs, "VirtualMachine")[0]
    volume = next(v for v in vm["spec"]["template"]["spec"]["volumes"] if v["name"] == "data")
    volume["dataVolume"]["name "] = volume["dataVolume"].pop("name")
    report = _complete(tmp_path / "m", EXCLUDED_PVC, docs)
    assert _readiness(report) in NOT_BETTER
    assert _finding(report, "RR-BKP-004")["status"] in ("FAIL", "ERROR")
    fields = [p["field"] for p in _problems(report) if p["kind"] == "VirtualMachine"]
    assert any(f.endswith("dataVolume.name") for f in fields), fields


def test_fold_key_and_spelled_as() -> None:
    assert fold_key(" claimName\u00a0") == "claimname"
    assert fold_key("\ufeffStatus\u200b") == "status"
    assert spelled_as("claimName ") == "claimName"
    assert spelled_as("\u200bdisks") == "disks"
    assert spelled_as("claimName") is None  # the field as written
    assert spelled_as("claim Name") is None  # a blank inside: no field it stands for
    assert spelled_as("zzz ") is None


PASS = "RR-BKP-004/pass.yaml"


@pytest.mark.parametrize("field", ["startTimestamp", "completionTimestamp", "expiration"])
def test_go_zero_time_in_a_backup_is_named(tmp_path: Path, field: str) -> None:
    """``metav1.Time`` writes Go's zero time as null, never ``0001-01-01T00:00:00Z``
    (apimachinery pkg/apis/meta/v1/time.go ``MarshalJSON``): main read it as an instant
    2,025 years ago, unnamed."""
    docs = _docs(PASS)
    before = _readiness(_complete(tmp_path / "base", PASS, docs))
    backup = max(_of(docs, "Backup"), key=lambda b: str(b["status"]["completionTimestamp"]))
    backup["status"][field] = "0001-01-01T00:00:00Z"
    report = _complete(tmp_path / "m", PASS, docs)
    named = [p for p in _problems(report) if p["kind"] == "Backup"]
    assert named and named[0]["field"] == f"status.{field}", _problems(report)
    assert report["run"]["complete"] is False
    rank = {"READY": 0, "AT_RISK": 1, "UNKNOWN": 2, "NOT_READY": 2}
    assert rank[_readiness(report)] >= rank[before]


def test_parse_rfc3339_refuses_go_zero_time_only() -> None:
    from auditor.kubevalues import parse_rfc3339

    assert parse_rfc3339("0001-01-01T00:00:00Z") is None
    assert parse_rfc3339("0001-01-01T02:00:00+02:00") is None  # the same instant
    assert parse_rfc3339("0001-01-01T00:00:01Z") is not None
    assert parse_rfc3339("2026-11-30T02:30:12+02:00") == parse_rfc3339("2026-11-30T00:30:12Z")


REPOSITORY = "RR-BKP-004/error-repository-key-unreadable.yaml"


def test_a_backup_repository_status_written_null_is_named_and_may_be_not_ready(
    tmp_path: Path,
) -> None:
    """The API server prunes a null field (and Go writes a struct status as ``{}``): a
    NotReady BackupRepository's ``status: null`` read as one not yet prepared (velero
    pkg/repository/backup_repo_op.go ``GetBackupRepository``: phase "" is New), UNKNOWN ->
    READY with nothing named (bench.mutations null_list, seed 4063)."""
    docs = _docs(REPOSITORY)
    before = _readiness(_complete(tmp_path / "base", REPOSITORY, docs))
    assert before == "UNKNOWN"
    _of(docs, "BackupRepository")[0]["status"] = None
    report = _complete(tmp_path / "m", REPOSITORY, docs)
    assert _readiness(report) in NOT_BETTER
    assert _finding(report, "RR-BKP-004")["status"] == "ERROR"
    fields = [p["field"] for p in _problems(report) if p["kind"] == "BackupRepository"]
    assert "status" in fields, _problems(report)


MAPPED = "RR-STG-003/pass-mapped-by-configmap.yaml"


def test_a_selected_config_map_whose_label_key_has_a_blank_is_named(tmp_path: Path) -> None:
    """Velero's change-storage-class ConfigMap is found by its label
    (https://velero.io/docs/main/restore-reference/#changing-pvpvc-storage-classes); under
    ``"velero.io/change-storage-class "`` main dropped it unselected and unnamed."""
    docs = _docs(MAPPED)
    config_map = _of(docs, "ConfigMap")[0]
    labels = config_map["metadata"]["labels"]
    labels["velero.io/change-storage-class "] = labels.pop("velero.io/change-storage-class")
    report = _complete(tmp_path / "m", MAPPED, docs)
    named = [p for p in _problems(report) if p["kind"] == "ConfigMap"]
    assert named and named[0]["field"] == "metadata.labels", _problems(report)
    assert _finding(report, "RR-STG-003")["status"] == "ERROR"


POLICY = "RR-BKP-004/pass-resource-policy-snapshots-every-pvc.yaml"


@pytest.mark.parametrize("created", ["2026-01-01T24:00:00Z", "2026-01-01", None])
def test_a_resource_policy_creation_time_that_cannot_be_read_is_named(
    tmp_path: Path, created: str | None
) -> None:
    """When a resource-policy ConfigMap was made decides whether a Backup ran with it
    (auditor.inventory.volpolicy); unreadable it was read as "may have changed", with
    nothing named (bench.mutations bad_format/time_edge, seed 4063)."""
    docs = _docs(POLICY)
    policy = next(d for d in _of(docs, "ConfigMap") if d["metadata"]["name"] == "vm-backup-policy")
    if created is None:
        del policy["metadata"]["creationTimestamp"]
    else:
        policy["metadata"]["creationTimestamp"] = created
    report = _complete(tmp_path / "m", POLICY, docs)
    named = [p for p in _problems(report) if p["kind"] == "ConfigMap"]
    assert named and named[0]["field"] == "metadata.creationTimestamp", _problems(report)
    assert _readiness(report) != "READY"


def test_a_config_map_without_metadata_is_named_not_dropped_unselected(tmp_path: Path) -> None:
    """No stored object lacks ``metadata``: a change-storage-class ConfigMap written
    ``metadata: null`` may be the selected one, so it is read and named (main dropped it,
    and the class mapping with it, unnamed: bench.mutations null_list, seed 4063)."""
    docs = _docs(MAPPED)
    _of(docs, "ConfigMap")[0]["metadata"] = None
    report = _complete(tmp_path / "m", MAPPED, docs)
    assert [p for p in _problems(report) if p["kind"] == "ConfigMap"], _problems(report)
    assert _finding(report, "RR-STG-003")["status"] == "ERROR"


def test_a_label_our_redaction_withheld_is_read_not_refused() -> None:
    """``auditor collect`` redacts a label whose key names a secret
    (``kubevirt.io/dynamic-credentials-support``) to ``<redacted>``: reading that export back
    must keep the object (the full suite's collect round trip lost seven VMs), while any other
    value with a character the API server refuses is still named."""
    from auditor.labelsyntax import REDACTED_VALUE, label_value_ok, labels_ok
    from auditor.redact import REDACTED

    assert REDACTED == REDACTED_VALUE == "<redacted>"
    assert labels_ok({"kubevirt.io/dynamic-credentials-support": REDACTED, "app": "db"})
    assert label_value_ok(REDACTED) and label_value_ok("db-1.a_b") and label_value_ok("")
    for bad in ("<redacted> ", "<secret>", "a b", "x\u00a0"):
        assert not label_value_ok(bad)
        assert not labels_ok({"app": bad})
    assert not labels_ok({"app ": "db"})
    assert not labels_ok({"app": 1})
