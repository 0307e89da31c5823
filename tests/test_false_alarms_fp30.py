"""False-alarm round fp30: valid spellings of one identity read as malformed or as changed.

A firmware UUID written without dashes is one libvirt reads (virUUIDParse), a MAC written
with dashes or dotted groups is one Go's ``net.ParseMAC`` reads, a Multus ``networkName`` with
or without the VM's own namespace names one NetworkAttachmentDefinition: none is malformed and
none is a change of identity. Each case stands beside the shape that keeps its finding.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.test_check_fixtures import audit_fixture
from tests.test_evidence_gaps import FIXTURES, _complete, _docs, _finding

#: vm1 in namespace app pinning uuid 3f6d2c1e-8b0a-4f7e-b3c5-6a1d9e2f4b10, serial
#: SERIAL-0001, NICs default (02:00:00:00:00:01) and vlan (02:00:00:00:00:02 on NAD vlan10),
#: running; its VMI carries the same firmware.
FW_PASS = "RR-FW-001/pass.yaml"
#: The same VM with the bucket's contents of its two Backups (``# backup-contents`` header):
#: the newest holds the VM manifest with the live identity.
BUCKET_PASS = "RR-BKP-009/pass.yaml"
UUID = "3f6d2c1e-8b0a-4f7e-b3c5-6a1d9e2f4b10"


def _audit(tmp_path: Path, fixture: str, *edits: tuple[str, str]) -> dict[str, Any]:
    """Audit ``fixture`` with each ``(old, new)`` text edit made in its YAML body only (the
    bucket header keeps the backed-up manifest as it was)."""
    head, _, body = (FIXTURES / fixture).read_text().partition("\napiVersion:")
    body = "apiVersion:" + body
    for old, new in edits:
        assert old in body, old
        body = body.replace(old, new)
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "c.yaml"
    path.write_text(head + "\n" + body)
    return audit_fixture(path)


def _vm(report: dict[str, Any], name: str = "vm1") -> dict[str, Any]:
    return next(v for v in report["vms"] if v["name"] == name)


def _errors(report: dict[str, Any]) -> list[str]:
    return [
        f"{f['check_id']}: {f['message']}"
        for f in _vm(report)["findings"]
        if f["status"] == "ERROR"
    ]


# -- a firmware UUID without dashes ---------------------------------------------------------


def test_a_firmware_uuid_without_dashes_is_a_uuid(tmp_path: Path) -> None:
    """``firmware.uuid: 3F6D2C1E8B0A...`` (32 hex digits) was malformed: eight checks ERROR
    and the VM UNKNOWN. KubeVirt hands it to libvirt's SMBIOS sysinfo as is and libvirt
    reads it (dashes are optional between digit pairs)."""
    bare = UUID.replace("-", "").upper()
    report = _audit(tmp_path, FW_PASS, (f"uuid: {UUID}", f"uuid: {bare}"))
    assert _errors(report) == []
    fw = _finding(report, "RR-FW-001")
    assert fw["status"] == "PASS", fw["message"]
    assert bare in fw["message"]
    assert _vm(report)["readiness"] == "READY"


def test_a_running_vmi_with_the_dashed_spelling_runs_with_the_pinned_uuid(
    tmp_path: Path,
) -> None:
    """The spec pins the bare spelling, the VMI shows the dashed one: one UUID, no drift."""
    bare = UUID.replace("-", "")
    text = (FIXTURES / FW_PASS).read_text()
    first = text.index(f"uuid: {UUID}")  # the VM's (the VMI follows it in the file)
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "c.yaml"
    path.write_text(text[:first] + f"uuid: {bare}" + text[first + len(f"uuid: {UUID}") :])
    fw = _finding(audit_fixture(path), "RR-FW-001")
    assert fw["status"] == "PASS", fw["message"]


def test_a_running_vmi_with_another_uuid_still_differs(tmp_path: Path) -> None:
    """Kept: a bare spelling of another UUID than the VMI's is drift (FAIL)."""
    other = "3f6d2c1e8b0a4f7eb3c56a1d9e2f4b11"
    text = (FIXTURES / FW_PASS).read_text().replace(f"uuid: {UUID}", f"uuid: {other}", 1)
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "c.yaml"
    path.write_text(text)
    fw = _finding(audit_fixture(path), "RR-FW-001")
    assert fw["status"] == "FAIL", fw["message"]
    assert fw["evidence"]["mismatched"] == ["uuid"]


def test_two_spellings_of_one_uuid_are_a_duplicate(tmp_path: Path) -> None:
    """Kept, and now seen: a second VM pinning the same UUID without dashes shares the
    SMBIOS UUID (RR-FW-003 FAIL naming it), where it was malformed before."""
    text = (FIXTURES / FW_PASS).read_text()
    vm = text[text.index("apiVersion: kubevirt.io/v1\nkind: VirtualMachine\n") :]
    vm = vm[: vm.index("\n---\n")]
    twin = vm.replace("name: vm1\n", "name: vm2\n").replace("uid: uid-vm-app-vm1", "uid: twin")
    twin = twin.replace(f"uuid: {UUID}", f"uuid: {UUID.replace('-', '').upper()}")
    twin = twin.replace("SERIAL-0001", "SERIAL-0002").replace(
        "02:00:00:00:00:0", "02:00:00:00:01:0"
    )
    assert "vm2" in twin and "SERIAL-0002" in twin
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "c.yaml"
    path.write_text(text + "\n---\n" + twin + "\n")
    report = audit_fixture(path)
    for name, other in (("vm1", "vm2"), ("vm2", "vm1")):
        dup = _finding(report, "RR-FW-003", name)
        assert dup["status"] == "FAIL", dup["message"]
        assert other in dup["message"]


def test_a_uuid_of_31_digits_stays_malformed(tmp_path: Path) -> None:
    """Kept: what libvirt refuses (31 hex digits, a non-hex digit) is no UUID (ERROR)."""
    for bad in (UUID.replace("-", "")[:-1], UUID.replace("3f", "3g", 1)):
        report = _audit(tmp_path / bad, FW_PASS, (f"uuid: {UUID}", f"uuid: {bad}"))
        fw = _finding(report, "RR-FW-001")
        assert fw["status"] == "ERROR", fw["message"]
        assert "firmware.uuid" in fw["message"]


# -- the bucket's identity compare (RR-BKP-009) --------------------------------------------


def test_backup_identity_in_another_notation_is_the_live_identity(tmp_path: Path) -> None:
    """The live VM spells its MACs with dashes and dotted groups and its NAD as app/vlan10;
    the backed-up manifest has colons and vlan10: RR-BKP-009 failed with "nic/...mac,
    nic/vlan.network differ" though a restore brings back the same identity."""
    report = _audit(
        tmp_path,
        BUCKET_PASS,
        ("macAddress: 02:00:00:00:00:01", "macAddress: 0200.0000.0001"),
        ("macAddress: 02:00:00:00:00:02", "macAddress: 02-00-00-00-00-02"),
        ("networkName: vlan10", "networkName: app/vlan10"),
    )
    drift = _finding(report, "RR-BKP-009")
    assert drift["status"] == "PASS", drift["message"]
    assert drift["evidence"]["drift"] == []


def test_backup_uuid_in_another_notation_is_the_live_uuid(tmp_path: Path) -> None:
    """The live VM pins the same UUID upper-case without dashes: no drift, no ERROR."""
    bare = UUID.replace("-", "").upper()
    report = _audit(tmp_path, BUCKET_PASS, (f"uuid: {UUID}", f"uuid: {bare}"))
    drift = _finding(report, "RR-BKP-009")
    assert drift["status"] == "PASS", drift["message"]


def test_backup_identity_changed_in_another_notation_still_differs(tmp_path: Path) -> None:
    """Kept: a different MAC and a NAD of another namespace are drift in any notation."""
    report = _audit(
        tmp_path,
        BUCKET_PASS,
        ("macAddress: 02:00:00:00:00:02", "macAddress: 02-00-00-00-00-03"),
        ("networkName: vlan10", "networkName: other/vlan10"),
    )
    drift = _finding(report, "RR-BKP-009")
    assert drift["status"] == "FAIL", drift["message"]
    got = {d["field"]: (d["backup"], d["live"]) for d in drift["evidence"]["drift"]}
    assert got == {
        "nic/vlan.mac": ("02:00:00:00:00:02", "02:00:00:00:00:03"),
        "nic/vlan.network": ("app/vlan10", "other/vlan10"),
    }


def test_the_bucket_header_is_untouched() -> None:
    """The fixture's backed-up manifest is in the canonical notation the tests vary from."""
    head = (FIXTURES / BUCKET_PASS).read_text().splitlines()[1]
    contents = json.loads(head.removeprefix("# backup-contents: "))
    saved = contents[0]["vm_manifests"][0][2]["spec"]["template"]["spec"]
    assert saved["domain"]["firmware"]["uuid"] == UUID
    assert saved["networks"][1]["multus"]["networkName"] == "vlan10"


# -- Velero's server defaults: OADP's velero.args, and no DPA at all -----------------------

#: vm1's disks copied by file-system backup (PodVolumeBackups); the Backups' spec holds
#: ``defaultVolumesToFsBackup: true``, the Schedule's template leaves it unset.
FS = "RR-BKP-004/pass-fs-backup-podvolumebackups.yaml"
#: vm1's Block-mode disks snapshotted by CSI; Schedule velero/daily made both Backups.
HEALTHY = "RR-BKP-001/pass.yaml"


def _velero(docs: list[dict[str, Any]]) -> dict[str, Any]:
    dpa = next(d for d in docs if d["kind"] == "DataProtectionApplication")
    velero: dict[str, Any] = dpa["spec"]["configuration"]["velero"]
    return velero


def test_oadp_server_args_give_the_fs_backup_default(tmp_path: Path) -> None:
    """OADP 1.3-1.5 build the Velero server's arguments from the DPA's
    ``spec.configuration.velero.args`` when it is set (oadp-operator pkg/velero/server/
    args.go): ``args: {default-volumes-to-fs-backup: true}`` copies the disks by file-system
    backup. Read as "unset, false", the next Backup snapshotted on storage with no
    VolumeSnapshotClass: RR-BKP-013 FAIL on a healthy setup."""
    docs = [d for d in _docs(FS) if d["kind"] != "VolumeSnapshotClass"]
    _velero(docs)["args"] = {"default-volumes-to-fs-backup": True}
    report = _complete(tmp_path, FS, docs)
    finding = _finding(report, "RR-BKP-013")
    assert finding["status"] == "PASS", finding["message"]
    assert finding["evidence"]["schedules"][0]["server_defaults"] == {
        "defaultVolumesToFsBackup": "DataProtectionApplication in velero "
        "args.default-volumes-to-fs-backup"
    }
    assert _vm(report)["readiness"] == "READY"


def test_oadp_server_args_replace_the_velero_section_defaults(tmp_path: Path) -> None:
    """With ``velero.args`` set, OADP passes no ``--default-volumes-to-fs-backup`` from
    ``velero.defaultVolumesToFSBackup`` (the arguments are rebuilt from args alone): the next
    Backup snapshots the Block-mode disks as the last ones did. Read from the velero section,
    it was a file-system backup dropping them (RR-BKP-013 FAIL)."""
    docs = _docs(HEALTHY)
    _velero(docs)["defaultVolumesToFSBackup"] = True
    _velero(docs)["args"] = {"client-burst": 200}
    report = _complete(tmp_path, HEALTHY, docs)
    finding = _finding(report, "RR-BKP-013")
    assert finding["status"] == "PASS", finding["message"]
    assert "server_defaults" not in finding["evidence"]["schedules"][0]
    # kept: the args' own switch turns file-system backup on, which drops Block disks
    _velero(docs)["args"] = {"default-volumes-to-fs-backup": True}
    report = _complete(tmp_path / "on", HEALTHY, docs)
    finding = _finding(report, "RR-BKP-013")
    assert finding["status"] == "FAIL", finding["message"]
    assert "never copies Block-mode volumes" in finding["message"]


def _manual(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``docs`` with the Backups made by hand (no velero.io/schedule-name label)."""
    for d in docs:
        if d["kind"] == "Backup":
            d["metadata"]["labels"].pop("velero.io/schedule-name")
    return docs


def test_without_a_dpa_an_unseen_server_default_is_unknown_and_named(tmp_path: Path) -> None:
    """Plain Velero (no DPA), Backups made by hand and a Schedule that has made none yet:
    whether its next Backup copies the Block-mode disks hangs on the server's
    ``--default-volumes-to-fs-backup``, an argument of the Velero Deployment the auditor does
    not read. It was taken as false (PASS); it is unknown, the flag named, never a FAIL."""
    docs = _manual([d for d in _docs(HEALTHY) if d["kind"] != "DataProtectionApplication"])
    report = _complete(tmp_path, HEALTHY, docs)
    finding = _finding(report, "RR-BKP-013")
    assert finding["status"] == "ERROR", finding["message"]
    assert "--default-volumes-to-fs-backup on or off" in finding["message"]
    assert "no DataProtectionApplication in velero sets it" in finding["message"]
    row = finding["evidence"]["schedules"][0]
    assert row["gaps"] is None
    assert list(row["server_defaults_unknown"]) == ["defaultVolumesToFsBackup"]


def test_without_a_dpa_an_unseen_default_that_decides_nothing_is_not_named(
    tmp_path: Path,
) -> None:
    """Kept: the same Schedule whose template sets ``defaultVolumesToFsBackup: false``; the
    unseen ``--default-snapshot-move-data`` changes nothing it judges: PASS."""
    docs = _manual([d for d in _docs(HEALTHY) if d["kind"] != "DataProtectionApplication"])
    schedule = next(d for d in docs if d["kind"] == "Schedule")
    schedule["spec"]["template"]["defaultVolumesToFsBackup"] = False
    finding = _finding(_complete(tmp_path, HEALTHY, docs), "RR-BKP-013")
    assert finding["status"] == "PASS", finding["message"]
    assert "server_defaults_unknown" not in finding["evidence"]["schedules"][0]


def test_a_dpa_that_leaves_the_switch_unset_still_says_false(tmp_path: Path) -> None:
    """Kept: a DPA in the Schedule's namespace with no server args says false (OADP passes
    no flag), so the manual Backups' Schedule is judged, not unknown."""
    docs = _manual(_docs(HEALTHY))
    finding = _finding(_complete(tmp_path, HEALTHY, docs), "RR-BKP-013")
    assert finding["status"] == "PASS", finding["message"]


# -- a resource filter naming the NAD by its singular ---------------------------------------


def _nad_included(entries: list[str]) -> bool:
    from auditor.scope import Scope

    return Scope.from_spec({"includedResources": entries}).resource_included(
        "network-attachment-definitions", "NetworkAttachmentDefinition", "k8s.cni.cncf.io"
    )


def test_the_nad_crds_singular_name_includes_nads() -> None:
    """``includedResources: [network-attachment-definition]`` is the CRD's
    ``spec.names.singular``, which Velero's discovery REST mapper resolves as the plural: the
    NADs are in the backup. Read as no NAD, RR-NET-002 failed a VM whose NAD is backed up."""
    assert _nad_included(["network-attachment-definition"])
    assert _nad_included(["network-attachment-definition.k8s.cni.cncf.io"])
    assert _nad_included(["network-attachment-definitions", "virtualmachines"])
    assert _nad_included(["net-attach-def"])


def test_a_nad_entry_discovery_cannot_resolve_includes_none() -> None:
    """Kept, and made exact: the lower-cased kind is no resource name of this CRD (the REST
    mapper matches plural and singular only, client-go ``DefaultRESTMapper.ResourcesFor``),
    so Velero drops the entry and the NADs stay out."""
    assert not _nad_included(["networkattachmentdefinitions"])
    assert not _nad_included(["NetworkAttachmentDefinition", "virtualmachines"])


def test_a_backup_naming_the_nad_by_its_singular_holds_it(tmp_path: Path) -> None:
    """RR-NET-002 on the catalog's NAD fixture with every Backup and the Schedule listing
    their resources, the NAD by its singular name: PASS (it was FAIL)."""
    fixture = "RR-NET-002/pass.yaml"
    docs = _docs(fixture)
    wanted = [
        "virtualmachines",
        "virtualmachineinstances",
        "datavolumes",
        "persistentvolumeclaims",
        "persistentvolumes",
        "network-attachment-definition",
        "pods",
    ]
    for d in docs:
        if d["kind"] == "Backup":
            d["spec"]["includedResources"] = wanted
        if d["kind"] == "Schedule":
            d["spec"]["template"]["includedResources"] = wanted
    finding = _finding(_complete(tmp_path, fixture, docs), "RR-NET-002")
    assert finding["status"] == "PASS", finding["message"]
    for d in docs:
        if d["kind"] == "Backup":
            d["spec"]["includedResources"] = [
                "networkattachmentdefinitions" if w.startswith("network") else w for w in wanted
            ]
    finding = _finding(_complete(tmp_path / "kind", fixture, docs), "RR-NET-002")
    assert finding["status"] == "FAIL", finding["message"]


# -- a VolumeSnapshotClass named by annotation in another letter case -----------------------


def _annotated_root(tmp_path: Path, name: str) -> dict[str, Any]:
    docs = _docs(HEALTHY)
    pvc = next(
        d
        for d in docs
        if d["kind"] == "PersistentVolumeClaim" and d["metadata"]["name"] == "vm1-root"
    )
    pvc["metadata"]["annotations"] = {"velero.io/csi-volumesnapshot-class": name}
    return _finding(_complete(tmp_path, HEALTHY, docs), "RR-BKP-013")


def test_a_snapshot_class_named_in_another_case_is_that_class(tmp_path: Path) -> None:
    """Velero matches the class a PVC (or Backup) annotation names with strings.EqualFold
    (velero pkg/util/csi/volume_snapshot.go GetVolumeSnapshotClassFromPVCAnnotationsForDriver):
    ``SnapClass`` is class ``snapclass``. Read as no class, the next Backup "could not
    snapshot" the disk (RR-BKP-013 FAIL)."""
    finding = _annotated_root(tmp_path, "SnapClass")
    assert finding["status"] == "PASS", finding["message"]


def test_a_snapshot_class_that_does_not_exist_falls_back_to_the_labelled_one(
    tmp_path: Path,
) -> None:
    """An annotation naming no class of the driver is only logged at debug ("Didn't find
    VolumeSnapshotClass from PVC annotations") and Velero goes on to the Backup annotation,
    then the labelled class (velero pkg/util/csi/volume_snapshot.go GetVolumeSnapshotClass):
    ``snapclass``, labelled, is used (round bc36; this test asserted a FAIL, a false AT_RISK).
    Without a class Velero can select on its own it still fails
    (tests/test_bugclasses_bc36.py)."""
    finding = _annotated_root(tmp_path, "snapclass-gone")
    assert finding["status"] == "PASS", finding["message"]


# -- a resource policy and a per-PVC record of the Backup ------------------------------------


def _with_policy(fixture: str) -> list[dict[str, Any]]:
    docs = _docs(fixture)
    for d in docs:
        if d["kind"] == "Backup":
            d["spec"]["resourcePolicy"] = {"kind": "configmap", "name": "vm-volume-policy"}
    return docs


def test_a_resource_policy_does_not_hide_a_completed_podvolumebackup(tmp_path: Path) -> None:
    """A Backup with ``spec.resourcePolicy`` (a ConfigMap the auditor does not read) and a
    Completed PodVolumeBackup of each disk: Velero copied them, whatever the policy says
    (it let them through). The policy made every disk UNKNOWN before the PodVolumeBackups
    were looked at (RR-BKP-004 ERROR)."""
    report = _complete(tmp_path, FS, _with_policy(FS))
    finding = _finding(report, "RR-BKP-004")
    assert finding["status"] == "PASS", finding["message"]
    assert (
        "PodVolumeBackup velero/daily-20261130-vm1-root status.phase=Completed"
        in (finding["message"])
    )
    assert _finding(report, "RR-BKP-001")["status"] == "PASS"


def test_a_resource_policy_still_hides_what_no_record_shows(tmp_path: Path) -> None:
    """Kept: a disk with no record of its own (the persistent-state PVC with no DataUpload,
    only counters) stays unknown under a policy the auditor cannot read."""
    fixture = "RR-BKP-007/pass-data-mover.yaml"
    finding = _finding(_complete(tmp_path, fixture, _with_policy(fixture)), "RR-BKP-004")
    assert finding["status"] == "ERROR", finding["message"]
    assert "persistent-state-for-vm1-abcde" in finding["message"]
    assert "resource policy configmap/vm-volume-policy" in finding["message"]


# -- a backup from before KubeVirt 1.6 wrote the name's UUID into the spec ------------------


def _saved_without_uuid(tmp_path: Path, live_uuid: str) -> dict[str, Any]:
    """RR-BKP-009 with the backed-up manifests pinning no firmware uuid and the live VM (and
    its VMI) pinning ``live_uuid``."""
    head, _, body = (FIXTURES / BUCKET_PASS).read_text().partition("\napiVersion:")
    lines = head.splitlines()
    i = next(n for n, line in enumerate(lines) if line.startswith("# backup-contents: "))
    contents = json.loads(lines[i].removeprefix("# backup-contents: "))
    for row in contents:
        for _, _, manifest in row["vm_manifests"]:
            del manifest["spec"]["template"]["spec"]["domain"]["firmware"]["uuid"]
    lines[i] = "# backup-contents: " + json.dumps(contents)
    body = ("apiVersion:" + body).replace(f"uuid: {UUID}", f"uuid: {live_uuid}")
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "c.yaml"
    path.write_text("\n".join(lines) + "\n" + body)
    return _finding(audit_fixture(path), "RR-BKP-009")


def test_a_backup_without_uuid_holds_the_name_derived_uuid_kubevirt_wrote(
    tmp_path: Path,
) -> None:
    """KubeVirt 1.6's VM controller writes the name-derived UUID (uuid5 of the VM name) into
    every VM spec that has none (pkg/virt-controller/watch/vm/firmware.go): a Backup taken
    before the upgrade has no uuid, the live VM has the one it always ran with. RR-BKP-009
    called that an older identity."""
    import uuid as uuidlib

    derived = str(uuidlib.uuid5(uuidlib.UUID("6a1a24a1-4061-4607-8bf4-a3963d0c5895"), "vm1"))
    finding = _saved_without_uuid(tmp_path, derived)
    assert finding["status"] == "PASS", finding["message"]


def test_a_backup_without_uuid_differs_from_another_pinned_uuid(tmp_path: Path) -> None:
    """Kept: a live uuid other than the name's is not what a restore of the backup gets."""
    finding = _saved_without_uuid(tmp_path, UUID)
    assert finding["status"] == "FAIL", finding["message"]
    assert [d["field"] for d in finding["evidence"]["drift"]] == ["firmware.uuid"]
