"""Round h47a: the recovery card says where a NIC's binding comes from (docs/readiness.md,
"Round h47a"; report.json 1.5, ``binding_from``).

A VM listing no interface and no network gets one on the pod network from KubeVirt, bound as
the KubeVirt CR's ``spec.configuration.network.defaultNetworkInterface`` says, ``bridge``
when unset (https://github.com/kubevirt/kubevirt/blob/main/pkg/network/vmispec/defaults.go
``SetDefaultNetworkInterface``; round h44a). With no CR read the binding is KubeVirt's
built-in default, inferred. Round h43b left the card showing that inferred ``bridge``
exactly like a binding read from the VM spec.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from auditor.envelope import load_report
from auditor.report.html import render_html
from auditor.report.vmview import card_view
from tests.test_check_fixtures import audit_fixture
from tests.test_malformed_b40 import _vm, _write
from tests.test_pod_default_h44a import _NONE, _UNPINNED, _kubevirt

INFERRED = "bridge (inferred: added by KubeVirt, the KubeVirt CR not read)"
FROM_CR = "masquerade (added by KubeVirt, from the KubeVirt CR)"


def _card(doc: dict[str, Any]) -> dict[str, Any]:
    card: dict[str, Any] = _vm(doc)["recovery_card"]
    return card


def _shown(doc: dict[str, Any]) -> dict[str, str]:
    """NIC name -> the binding as the HTML card shows it (``card_view``), and the HTML."""
    report = load_report(json.dumps(doc))
    vm = next(v for v in report.vms if (v.namespace, v.name) == ("app", "vm1"))
    return {n.name: n.binding for n in card_view(vm.recovery_card).nics}


def test_an_added_interface_without_the_kubevirt_cr_reads_as_inferred(tmp_path: Path) -> None:
    """No KubeVirt CR: the added ``default`` interface is bridge, inferred, in report.json
    (card and network identity) and in the HTML card; before, ``binding: bridge`` alone."""
    doc = audit_fixture(_write(tmp_path, _UNPINNED, *_NONE))
    (nic,) = _card(doc)["nics"]
    assert (nic["name"], nic["binding"], nic["binding_from"]) == ("default", "bridge", "inferred")
    (ident,) = _card(doc)["network_identity"]["nics"]
    assert (ident["binding"], ident["binding_from"]) == ("bridge", "inferred")
    assert _shown(doc) == {"default": INFERRED}
    html = render_html(load_report(json.dumps(doc)))
    assert INFERRED in html


def test_an_added_interface_bound_by_the_kubevirt_cr_says_so(tmp_path: Path) -> None:
    """The CR's ``defaultNetworkInterface: masquerade`` read: ``kubevirt-cr``, shown as
    added by KubeVirt from its CR (not pinned in the VM, not inferred either)."""
    extra = _kubevirt("      defaultNetworkInterface: masquerade\n")
    doc = audit_fixture(_write(tmp_path, _UNPINNED + extra, *_NONE))
    (nic,) = _card(doc)["nics"]
    assert (nic["binding"], nic["binding_from"]) == ("masquerade", "kubevirt-cr")
    assert _shown(doc) == {"default": FROM_CR}
    assert "inferred" not in _shown(doc)["default"]


def test_a_binding_from_the_vm_spec_reads_as_observed(tmp_path: Path) -> None:
    """The fixture's own interfaces (masquerade ``default``, bridge ``vlan``): ``vm``, the
    binding shown bare, nothing inferred, even with no KubeVirt CR read."""
    doc = audit_fixture(_write(tmp_path, _UNPINNED))
    nics = {n["name"]: (n["binding"], n["binding_from"]) for n in _card(doc)["nics"]}
    assert nics == {"default": ("masquerade", "vm"), "vlan": ("bridge", "vm")}
    idents = _card(doc)["network_identity"]["nics"]
    assert {n["name"]: n["binding_from"] for n in idents} == {"default": "vm", "vlan": "vm"}
    assert _shown(doc) == {"default": "masquerade", "vlan": "bridge"}
    html = render_html(load_report(json.dumps(doc)))
    assert "added by KubeVirt" not in html


def test_a_1_4_report_without_the_field_still_loads(tmp_path: Path) -> None:
    """A reader of a 1.4 report (no ``binding_from``) takes it as null and shows the binding
    bare, as before."""
    doc = audit_fixture(_write(tmp_path, _UNPINNED, *_NONE))
    assert doc["schema_version"] == "1.5"
    doc["schema_version"] = "1.4"
    for vm in doc["vms"]:
        for nic in vm["recovery_card"]["nics"] + vm["recovery_card"]["network_identity"]["nics"]:
            del nic["binding_from"]
    report = load_report(json.dumps(doc))
    vm = next(v for v in report.vms if v.name == "vm1")
    assert vm.recovery_card.nics[0].binding_from is None
    assert _shown(doc) == {"default": "bridge"}
