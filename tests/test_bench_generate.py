"""The synthetic estate generator: deterministic, valid YAML, read cleanly, realistic ratios."""

from __future__ import annotations

from pathlib import Path

import yaml

from auditor.sources.base import KindState
from auditor.sources.directory import DirectorySource
from bench.generate import generate
from bench.yamlout import dump_list


def test_same_seed_gives_identical_files_and_other_seed_differs(tmp_path: Path) -> None:
    a = generate(tmp_path / "a", 60, seed=7)
    b = generate(tmp_path / "b", 60, seed=7)
    c = generate(tmp_path / "c", 60, seed=8)
    for name in ("virtualmachines.yaml", "backups.yaml", "volumesnapshotcontents.yaml"):
        assert (a.out_dir / name).read_bytes() == (b.out_dir / name).read_bytes()
    assert (a.out_dir / "virtualmachines.yaml").read_bytes() != (
        c.out_dir / "virtualmachines.yaml"
    ).read_bytes()
    assert a.gaps == b.gaps


def test_emitter_round_trips_awkward_scalars() -> None:
    import io

    item = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "x", "labels": {"a": "yes", "b": "null", "c": "0755", "d": "1e3"}},
        "data": {
            "multi": "line one\nline two: colon\n",
            "quote": "he said \"hi\" and 'bye'",
            "unicode": "\u202eRTL \u00e9\u4e2d",
            "empty": "",
            "list": [[1, 2], [], {}, None, True, 1.5, "- dash", "#hash", "key: value"],
            "nested": [{"a": [{"b": {"c": []}}]}],
        },
    }
    buf = io.StringIO()
    dump_list([item], buf)
    assert yaml.safe_load(buf.getvalue())["items"] == [item]


def test_estate_reads_without_problems_and_has_realistic_ratios(tmp_path: Path) -> None:
    estate = generate(tmp_path, 200, seed=1)
    data = DirectorySource(tmp_path).collect()
    assert data.problems == []
    counts = {k: len(v) for k, v in data.objects.items()}
    assert counts["VirtualMachine"] == 200
    assert estate.counts["virtualmachines"] == 200
    disks = counts["DataVolume"]
    assert 2.0 * 200 <= counts["PersistentVolumeClaim"] <= 3.6 * 200
    assert 1.5 * 200 <= disks <= 3.0 * 200
    assert counts["PersistentVolume"] == counts["PersistentVolumeClaim"]
    # daily backups kept 7-30 days per backed-up namespace
    schedules = counts["Schedule"]
    assert 7 * schedules * 0.8 <= counts["Backup"] <= 31 * schedules
    # one Velero leftover VSC per backup and PVC: far more VSCs than PVCs
    velero = [
        c
        for c in data.of("VolumeSnapshotContent")
        if "velero.io/backup-name" in c["metadata"].get("labels", {})
    ]
    assert len(velero) > 5 * counts["PersistentVolumeClaim"]
    backups = {b["metadata"]["name"] for b in data.of("Backup")}
    assert {c["metadata"]["labels"]["velero.io/backup-name"] for c in velero} <= backups
    state_pvcs = [
        p
        for p in data.of("PersistentVolumeClaim")
        if p["metadata"]["name"].startswith("persistent-state-for-")
    ]
    assert state_pvcs
    for kind in ("DataUpload", "PodVolumeBackup", "Service", "Restore", "VirtualMachineSnapshot"):
        assert data.state(kind) is KindState.COMPLETE, kind
    gapped = sum(1 for g in estate.gaps.values() if g)
    assert 0.25 * 200 <= gapped <= 0.7 * 200


def test_cross_references_are_consistent(tmp_path: Path) -> None:
    generate(tmp_path, 120, seed=3)
    data = DirectorySource(tmp_path).collect()
    pvcs = {
        (p["metadata"]["namespace"], p["metadata"]["name"]): p
        for p in data.of("PersistentVolumeClaim")
    }
    for pv in data.of("PersistentVolume"):
        ref = pv["spec"]["claimRef"]
        assert pvcs[(ref["namespace"], ref["name"])]["metadata"]["uid"] == ref["uid"]
    vms = {
        (v["metadata"]["namespace"], v["metadata"]["name"]): v for v in data.of("VirtualMachine")
    }
    for dv in data.of("DataVolume"):
        ns = dv["metadata"]["namespace"]
        vm_ref = dv["metadata"]["ownerReferences"][0]
        assert vms[(ns, vm_ref["name"])]["metadata"]["uid"] == vm_ref["uid"]
        assert (ns, dv["metadata"]["name"]) in pvcs
    for vm in vms.values():
        for vol in vm["spec"]["template"]["spec"]["volumes"]:
            claim = (vol.get("dataVolume") or {}).get("name") or (
                vol.get("persistentVolumeClaim") or {}
            ).get("claimName")
            if claim:
                assert (vm["metadata"]["namespace"], claim) in pvcs


def test_the_audit_bench_remakes_an_estate_of_another_generator_version(tmp_path: Path) -> None:
    """A cached estate is reused, and made anew when an older generator wrote it (its files
    would differ: GENERATOR_VERSION)."""
    import json

    from bench.bench_audit import estate, estate_objects
    from bench.generate import GENERATOR_VERSION

    root = estate(tmp_path, 2, 0)
    marker = root / ".complete"
    assert json.loads(marker.read_text())["version"] == GENERATOR_VERSION
    objects = estate_objects(root)
    assert objects == sum(len(yaml.safe_load(p.read_text())["items"]) for p in root.glob("*.yaml"))
    bsl = (root / "backupstoragelocations.yaml").read_text()
    assert 'lastValidationTime: "2026-11-30T05:59:40Z"' in bsl
    marker.write_text(json.dumps({"counts": {}}))  # as a version-1 marker reads
    (root / "backupstoragelocations.yaml").write_text("stale")
    assert estate(tmp_path, 2, 0) == root
    assert (root / "backupstoragelocations.yaml").read_text() == bsl
    assert estate_objects(root) == objects


def test_every_object_exists_at_the_audit_instant(tmp_path: Path) -> None:
    """An object created after the audit instant is left out as no evidence then
    (auditor.sources.asof): the bench must audit every object it generated (restore drills
    started four hours after a 05:00 Backup were made after the 06:00 audit)."""
    from auditor.kubevalues import parse_rfc3339
    from bench.generate import AUDIT_TIME

    made = generate(tmp_path / "e", 200, seed=1)
    data = DirectorySource(made.out_dir).collect()
    created = [
        (kind, parse_rfc3339(o["metadata"]["creationTimestamp"]))
        for kind, objects in data.objects.items()
        for o in objects
        if "creationTimestamp" in o.get("metadata", {})
    ]
    assert len(created) > 1_500 and {k for k, _ in created} >= {"Restore", "Backup"}
    late = [(kind, when) for kind, when in created if when is None or when > AUDIT_TIME]
    assert late == []
