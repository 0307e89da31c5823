"""Units behind the restore-drill, identity and provisioning checks (issue 12)."""

from __future__ import annotations

from pathlib import Path

import pytest

from auditor.inventory.identities import IdentityIndex, legacy_firmware_uuid, nic_binding
from auditor.inventory.netid import nad_facts
from auditor.kinds import BY_KIND
from auditor.netdata import network_data_facts
from auditor.redact import REDACTED, redact
from auditor.sources.directory import DirectorySource
from tests.live_support import serve


def test_legacy_uuid_matches_kubevirt_derivation() -> None:
    # the corpus VMI of fin-report-win2k22 shows the UUID KubeVirt derived from its name
    assert legacy_firmware_uuid("fin-report-win2k22") == "ec602b1f-2105-52db-9b1b-1c21ba738517"


def _vm(ns: str, name: str, **fw: str) -> dict[str, object]:
    iface = {"name": "nic0", "bridge": {}, "macAddress": "02:AA:00:00:00:01"}
    domain = {"firmware": fw, "devices": {"interfaces": [iface]}}
    return {
        "metadata": {"namespace": ns, "name": name},
        "spec": {"template": {"spec": {"domain": domain}}},
    }


def test_identity_index_names_the_other_vm_and_normalises_macs() -> None:
    vms = [_vm("a", "x", uuid="U1", serial="S1"), _vm("b", "y", uuid="u1")]
    ix = IdentityIndex.build(vms, {})
    [uuid, mac] = ix.shared("a", "x", "uuid", "mac")
    assert (uuid["what"], uuid["value"], uuid["others"]) == (
        "uuid",
        "u1",
        [{"vm": "b/y", "source": "spec"}],
    )
    assert mac["value"] == "02:aa:00:00:00:01"
    assert mac["others"] == [{"vm": "b/y", "source": "spec", "nic": "nic0", "binding": "bridge"}]
    assert ix.shared("a", "x", "serial") == []


def test_unpinned_same_name_vms_share_the_derived_uuid() -> None:
    ix = IdentityIndex.build([_vm("a", "db"), _vm("b", "db")], {})
    [dup] = ix.shared("a", "db", "uuid")
    assert dup["value"] == legacy_firmware_uuid("db") and dup["mine"]["source"] == "derived"


def test_nic_binding_reads_plugin_bindings() -> None:
    assert nic_binding({"name": "n", "binding": {"name": "passt"}}) == "passt"
    assert nic_binding({"name": "n", "masquerade": {}}) == "masquerade"
    assert nic_binding({"name": "n"}) is None


def test_configmaps_are_read_only_for_velero_storage_class_mapping() -> None:
    spec = BY_KIND["ConfigMap"]
    mapping = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "m",
            "namespace": "velero",
            "labels": {"velero.io/change-storage-class": "RestoreItemAction"},
        },
        "data": {"old-sc": "new-sc", "odd": "password: hunter2"},
    }
    other = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "o"}, "data": {"a": "b"}}
    assert spec.selects(mapping) and not spec.selects(other)
    assert redact(mapping)["data"] == {"old-sc": "new-sc", "odd": REDACTED}
    assert redact(other)["data"] == REDACTED


def test_live_source_lists_configmaps_only_with_velero_selector(tmp_path: Path) -> None:
    cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "change-storage-class-config",
            "namespace": "velero",
            "labels": {"velero.io/change-storage-class": "RestoreItemAction"},
        },
        "data": {"old-sc": "new-sc"},
    }
    with serve(tmp_path, objects={"ConfigMap": [cm]}) as live:
        data = live.collect()
        paths = [p for m, p in live.api.log if "configmaps" in p]
    assert paths and all(
        "labelSelector=velero.io/change-storage-class%3DRestoreItemAction" in p for p in paths
    )
    assert [o["data"] for o in data.of("ConfigMap")] == [{"old-sc": "new-sc"}]


def test_network_data_facts_survive_redaction_without_the_addresses() -> None:
    nd = (
        "version: 2\nethernets:\n  eth1:\n    match:\n      macaddress: '02:AA:00:00:00:02'\n"
        "    addresses: [192.0.2.10/24]\n  eth0:\n    match:\n      macaddress: '02:aa:00:00:00:01'\n"
        "    dhcp4: true\n"
    )
    vm = {"kind": "VirtualMachine", "spec": {"cloudInitNoCloud": {"networkData": nd}}}
    out = redact(vm)["spec"]["cloudInitNoCloud"]
    assert out["networkData"] == REDACTED
    assert out["networkDataFacts"] == {
        "static": True,
        "static_macs": ["02:aa:00:00:00:02"],
        "dhcp_macs": ["02:aa:00:00:00:01"],
    }
    assert "192.0.2.10" not in str(redact(vm))
    v1 = "config:\n- type: physical\n  mac_address: 02:aa:00:00:00:03\n  subnets:\n  - type: dhcp\n"
    assert network_data_facts("networkData", v1) == {
        "static": False,
        "static_macs": [],
        "dhcp_macs": ["02:aa:00:00:00:03"],
    }
    assert network_data_facts("networkData", "::not yaml: [")["static"] is None  # type: ignore[index]


@pytest.mark.parametrize(
    "text",
    ["a: 2024-13-01", "a: !!int x", "a: !!timestamp nope", "[" * 2000 + "]" * 2000],
)
def test_network_data_pyyaml_cannot_make_a_value_of_is_unreadable_never_a_crash(
    text: str, tmp_path: Path
) -> None:
    """red team (helper-21): a bad date raised ValueError, ``!!timestamp`` AttributeError and
    deep nesting RecursionError out of the redactor, which stopped the read of the whole
    export (and, since the redaction of a duplicate VM now comes before its duplicate check,
    the second copy of a VM too). Such networkData is unknown, named, and the rest is read."""
    facts = network_data_facts("networkData", text)
    assert facts is not None and facts["static"] is None
    assert "no cloud-init network config" in facts["malformed"]
    vm = {
        "apiVersion": "kubevirt.io/v1",
        "kind": "VirtualMachine",
        "metadata": {"name": "vm-1", "namespace": "apps"},
        "spec": {
            "template": {
                "spec": {
                    "volumes": [
                        {
                            "name": "ci",
                            "cloudInitNoCloud": {"networkData": text, "userData": "password: x"},
                        }
                    ]
                }
            }
        },
    }
    import yaml as pyyaml

    (tmp_path / "vms.yaml").write_text(
        pyyaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [vm, vm]})
    )
    data = DirectorySource(tmp_path).collect()
    assert [o["metadata"]["name"] for o in data.of("VirtualMachine")] == ["vm-1"]
    assert ["defined twice" in p.reason for p in data.problems] == [True]
    volume = data.of("VirtualMachine")[0]["spec"]["template"]["spec"]["volumes"][0]
    assert volume["cloudInitNoCloud"]["userData"] == REDACTED
    assert volume["cloudInitNoCloud"]["networkDataFacts"]["static"] is None


def test_nad_facts_read_cni_type_bridge_and_vlan() -> None:
    nad = {
        "metadata": {"name": "n"},
        "spec": {
            "config": '{"cniVersion":"0.3.1","type":"cnv-bridge","bridge":"br-fin","vlan":120}'
        },
    }
    assert nad_facts(nad) == {
        "cni_type": "cnv-bridge",
        "bridge": "br-fin",
        "vlan": 120,
        "topology": None,
        "resource": None,
    }
    listed = {"spec": {"config": '{"plugins":[{"type":"ovn-k8s-cni-overlay","vlanID":30}]}'}}
    assert nad_facts(listed)["vlan"] == 30  # type: ignore[index]
