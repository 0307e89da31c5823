"""False-alarm round fp32: valid configurations read as malformed or as a gap.

An empty CD-ROM tray (a ``cdrom`` disk that names no volume) is what KubeVirt admits with its
DeclarativeHotplugVolumes feature gate (beta since v1.9): an ISO is inserted and ejected by
adding and removing the volume (kubevirt pkg/virt-api/webhooks/validating-webhook/admitters/
vmi-create-admitter.go ``validateBootOrder``). It holds no data and boots nothing. Each case
stands beside the shape that keeps its finding.
"""

from __future__ import annotations

from pathlib import Path

from tests.test_check_fixtures import audit_fixture
from tests.test_evidence_gaps import FIXTURES, _finding
from tests.test_false_alarms_fp30 import _errors, _vm

#: vm1 in namespace app with disks root, data (bootOrder 1, 2) and cloudinitdisk, backed up
#: and READY; its running VMI lists the same disks.
FW_PASS = "RR-FW-001/pass.yaml"
#: vm1 with one bootable disk (root, no bootOrder) and cloudinitdisk: RR-DSK-001 N/A.
ONE_DISK = "RR-DSK-001/na-single-disk.yaml"

#: the VM's (12 spaces) and the VMI's (8 spaces) disk lists end with cloudinitdisk
VM_TAIL = "            name: cloudinitdisk\n          interfaces:"
VMI_TAIL = "        name: cloudinitdisk\n      interfaces:"


def _tray(indent: int, name: str = "installcd", extra: str = "") -> str:
    pad = " " * indent
    return f"{pad}- cdrom:\n{pad}    bus: sata\n{pad}  name: {name}\n{extra}"


def _with_tray(tmp_path: Path, fixture: str, *, vmi: bool = True, extra: str = "") -> Path:
    """``fixture`` with an empty CD-ROM after cloudinitdisk in the VM (and its VMI)."""
    text = (FIXTURES / fixture).read_text()
    assert text.count(VM_TAIL) == 1 and text.count(VMI_TAIL) == 1
    text = text.replace(
        VM_TAIL, VM_TAIL.replace("          interfaces:", _tray(10) + "          interfaces:")
    )
    if vmi:
        text = text.replace(
            VMI_TAIL, VMI_TAIL.replace("      interfaces:", _tray(6) + "      interfaces:")
        )
    text += extra
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "c.yaml"
    path.write_text(text)
    return path


def test_an_empty_cdrom_tray_is_no_malformed_disk(tmp_path: Path) -> None:
    """A ``cdrom`` disk naming no volume was 'names no volume of that name': every disk
    check ERROR (17 of them) and the READY VM UNKNOWN. KubeVirt admits it (an empty tray)."""
    report = audit_fixture(_with_tray(tmp_path, FW_PASS))
    assert _errors(report) == []
    assert not [p for p in report["collection_problems"] if "installcd" in str(p.get("field"))]
    assert _vm(report)["readiness"] == "READY"
    bkp = _finding(report, "RR-BKP-004")
    assert bkp["status"] == "PASS", bkp["message"]
    assert "installcd" not in bkp["message"]


def test_an_empty_cdrom_tray_boots_nothing(tmp_path: Path) -> None:
    """One bootable disk and an empty tray is still one bootable disk: RR-DSK-001 N/A, not
    'has 2 bootable disks and none has a bootOrder' (a boot order to pin on nothing)."""
    report = audit_fixture(_with_tray(tmp_path, ONE_DISK))
    dsk = _finding(report, "RR-DSK-001")
    assert dsk["status"] == "NOT_APPLICABLE", dsk["message"]
    assert [d["disk"] for d in dsk["evidence"]["bootable_disks"]] == ["root"]
    assert _errors(report) == []


def test_an_empty_tray_on_an_ephemeral_vm_is_named_as_such(tmp_path: Path) -> None:
    """RR-STG-002 lists the volume kinds of a VM with no persistent disk: the empty tray is
    an 'empty cdrom', not an 'unknown' volume."""
    path = _with_tray(tmp_path, ONE_DISK, vmi=False)
    path.write_text(
        path.read_text().replace(
            "      - dataVolume:\n          name: vm1-root\n        name: root",
            "      - containerDisk:\n          image: quay.io/containerdisks/fedora:41\n"
            "        name: root",
        )
    )
    stg = _finding(audit_fixture(path), "RR-STG-002")
    assert stg["status"] == "FAIL", stg["message"]
    assert stg["evidence"]["volume_types"] == ["cloudInitNoCloud", "containerDisk", "empty cdrom"]


def test_a_disk_naming_no_volume_stays_malformed(tmp_path: Path) -> None:
    """Kept: a ``disk`` (not a CD-ROM) naming no volume is refused by KubeVirt's webhook:
    named, and the checks reading the disks ERROR."""
    text = (FIXTURES / FW_PASS).read_text()
    text = text.replace(
        VM_TAIL,
        VM_TAIL.replace(
            "          interfaces:",
            "          - disk:\n              bus: virtio\n            name: lost\n"
            "          interfaces:",
        ),
    )
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "c.yaml"
    path.write_text(text)
    report = audit_fixture(path)
    fields = [str(p.get("field")) for p in report["collection_problems"]]
    assert "spec.template.spec.domain.devices.disks[lost]" in fields
    assert _finding(report, "RR-BKP-004")["status"] == "ERROR"
    assert _vm(report)["readiness"] == "UNKNOWN"


def test_a_cdrom_with_an_iso_still_boots(tmp_path: Path) -> None:
    """Kept: a CD-ROM holding an ISO (a containerDisk) is a bootable disk: beside the root
    disk and with no bootOrder, RR-DSK-001 FAILs naming both."""
    text = (FIXTURES / ONE_DISK).read_text()
    text = text.replace(
        VM_TAIL, VM_TAIL.replace("          interfaces:", _tray(10) + "          interfaces:")
    )
    text = text.replace(
        "        name: cloudinitdisk\n---",
        "        name: cloudinitdisk\n      - containerDisk:\n"
        "          image: quay.io/example/installer-iso:1\n        name: installcd\n---",
        1,
    )
    assert "installer-iso" in text
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "c.yaml"
    path.write_text(text)
    dsk = _finding(audit_fixture(path), "RR-DSK-001")
    assert dsk["status"] == "FAIL", dsk["message"]
    assert sorted(d["disk"] for d in dsk["evidence"]["bootable_disks"]) == ["installcd", "root"]


# -- instancetype and preference kinds as KubeVirt reads them --------------------------------

#: vm1 on VirtualMachineClusterInstancetype u1.medium (live, not pinned): RR-DEF-001 PASS.
IT_PASS = "RR-DEF-001/pass.yaml"
#: vm1 on VirtualMachineClusterPreference rhel.9 (persistent EFI), pinned to a revision.
PREF_PASS = "RR-FW-002/pass-preference-pinned-revision.yaml"
PREF_PIN = "    revisionName: vm1-rhel.9-v1beta1-0f3c2b1a-1111-4222-8333-944455556666-1\n"


def _edited(tmp_path: Path, fixture: str, *edits: tuple[str, str]) -> Path:
    text = (FIXTURES / fixture).read_text()
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "c.yaml"
    path.write_text(text)
    return path


def test_a_plural_or_lower_case_instancetype_kind_is_that_kind(tmp_path: Path) -> None:
    """``kind: virtualmachineclusterinstancetypes`` (the resource's plural, which KubeVirt
    takes in any case: pkg/instancetype/find/spec.go switches on strings.ToLower(kind)) and an
    empty kind (the cluster-wide one) were read as kinds of their own: the live u1.medium was
    'not found' and RR-DEF-001 gave ERROR, the VM UNKNOWN."""
    for i, kind in enumerate(
        ("virtualmachineclusterinstancetypes", "VirtualMachineClusterInstancetypes", '""')
    ):
        path = _edited(
            tmp_path / str(i),
            IT_PASS,
            (
                "    kind: VirtualMachineClusterInstancetype\n    name: u1.medium",
                f"    kind: {kind}\n    name: u1.medium",
            ),
        )
        report = audit_fixture(path)
        d = _finding(report, "RR-DEF-001")
        assert d["status"] == "PASS", (kind, d["message"])
        assert "VirtualMachineClusterInstancetype u1.medium (live)" in d["message"]
        assert _errors(report) == []


def test_a_plural_preference_kind_gives_its_firmware(tmp_path: Path) -> None:
    """An unpinned ``kind: VirtualMachineClusterPreferences`` preference gives the firmware
    the singular spelling gives (the live rhel.9: EFI, NVRAM not persistent, FAIL), where it
    was ERROR ('which was not found; firmware and device defaults it sets are unknown')."""
    verdicts = []
    for i, kind in enumerate(
        ("VirtualMachineClusterPreference", "VirtualMachineClusterPreferences")
    ):
        path = _edited(
            tmp_path / str(i),
            PREF_PASS,
            (PREF_PIN, ""),
            (
                "    kind: VirtualMachineClusterPreference\n    name: rhel.9",
                f"    kind: {kind}\n    name: rhel.9",
            ),
        )
        fw = _finding(audit_fixture(path), "RR-FW-002")
        verdicts.append((fw["status"], fw["message"]))
    assert verdicts[1] == verdicts[0]
    assert verdicts[1][0] == "FAIL", verdicts[1][1]
    assert "EFI but its NVRAM is not persistent" in verdicts[1][1]


def test_a_namespaced_kind_in_the_plural_is_still_namespaced(tmp_path: Path) -> None:
    """Kept: ``virtualmachineinstancetypes`` names a namespaced instancetype; app has no
    u1.medium (only the cluster-wide one exists), so RR-DEF-001 FAILs as for the singular;
    a kind KubeVirt does not know stays missing too."""
    for i, kind in enumerate(
        ("virtualmachineinstancetypes", "VirtualMachineInstancetype", "Flavor")
    ):
        path = _edited(
            tmp_path / str(i),
            IT_PASS,
            (
                "    kind: VirtualMachineClusterInstancetype\n    name: u1.medium",
                f"    kind: {kind}\n    name: u1.medium",
            ),
        )
        d = _finding(audit_fixture(path), "RR-DEF-001")
        assert d["status"] in ("FAIL", "ERROR"), (kind, d["message"])
        assert d["status"] != "PASS"


# -- ControllerRevisions have no spec ---------------------------------------------------------


def test_a_controller_revision_without_spec_is_no_malformed_object(tmp_path: Path) -> None:
    """A ControllerRevision's body is ``data`` and ``revision`` (apps/v1); it has no spec.
    Every revision KubeVirt writes was named 'field spec is missing or null (the API server
    always writes it)': the audit incomplete and the namespace's revisions partly unread."""
    report = audit_fixture(FIXTURES / PREF_PASS)
    assert [p["reason"] for p in report["collection_problems"]] == []
    assert _errors(report) == []
    fw = _finding(report, "RR-FW-002")
    assert fw["status"] == "PASS", fw["message"]


def test_a_pinned_revision_that_is_gone_is_missing_not_unknown(tmp_path: Path) -> None:
    """With the revisions read in full, a VM pinned to a revision that does not exist is
    RR-DEF-001 FAIL (its restore cannot resolve the preference); read as partly unread
    because of the false 'spec is missing', it was ERROR ('may be among the unreadable')."""
    gone = PREF_PIN.replace("-1\n", "-7\n")
    report = audit_fixture(_edited(tmp_path, PREF_PASS, (PREF_PIN, gone)))
    d = _finding(report, "RR-DEF-001")
    assert d["status"] == "FAIL", d["message"]
    assert "does not exist" in d["message"]


def test_a_service_without_spec_stays_malformed(tmp_path: Path) -> None:
    """Kept: a Service (which always has a spec) written without one is still named."""
    text = (FIXTURES / FW_PASS).read_text() + (
        "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: broken\n  namespace: app\n"
        "  creationTimestamp: '2026-01-01T00:00:00Z'\n"
    )
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "c.yaml"
    path.write_text(text)
    fields = [(p.get("kind"), p.get("field")) for p in audit_fixture(path)["collection_problems"]]
    assert ("Service", "spec") in fields


# -- a containerPath volume ---------------------------------------------------------------


def _with_container_path(tmp_path: Path, source: str) -> Path:
    """FW_PASS's VM with a filesystem ``tokens`` on a volume of ``source`` (YAML lines)."""
    return _edited(
        tmp_path,
        FW_PASS,
        (
            VM_TAIL,
            VM_TAIL.replace(
                "          interfaces:",
                "          filesystems:\n          - name: tokens\n            virtiofs: {}\n"
                "          interfaces:",
            ),
        ),
        (
            "        name: cloudinitdisk\n---\napiVersion: kubevirt.io/v1\n"
            "kind: VirtualMachineInstance",
            f"        name: cloudinitdisk\n      - name: tokens\n{source}---\n"
            "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstance",
        ),
    )


def test_a_container_path_volume_is_a_volume_source(tmp_path: Path) -> None:
    """``containerPath`` (KubeVirt v1.8+, ContainerPathVolumes: a launcher container path,
    such as an injected cloud token, shared read-only by virtiofs; api core/v1
    ContainerPathVolumeSource) was 'only unknown keys (containerPath), not one of KubeVirt's
    volume sources': every disk check ERROR and the READY VM UNKNOWN. It holds no disk data."""
    path = _with_container_path(
        tmp_path, "        containerPath:\n          path: /var/run/secrets/tokens\n"
    )
    report = audit_fixture(path)
    assert _errors(report) == []
    assert report["collection_problems"] == []
    assert _vm(report)["readiness"] == "READY"


def test_an_unknown_volume_source_stays_malformed(tmp_path: Path) -> None:
    """Kept: a volume naming only a key KubeVirt has no source for is named."""
    path = _with_container_path(tmp_path, "        containerPaths:\n          path: /x\n")
    fields = [str(p.get("field")) for p in audit_fixture(path)["collection_problems"]]
    assert "spec.template.spec.volumes[tokens]" in fields
