"""Unit tests of the value parsers, Velero scope semantics and redaction."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.kubevalues import parse_duration, parse_quantity, parse_time
from auditor.redact import REDACTED, redact
from auditor.scope import Scope, SelectorError, selector_matches


def test_parse_time_forms() -> None:
    assert parse_time("2026-11-30T06:00:00Z") == datetime(2026, 11, 30, 6, tzinfo=UTC)
    assert parse_time(datetime(2018, 7, 4, 15, 3, 8)) == datetime(2018, 7, 4, 15, 3, 8, tzinfo=UTC)
    # a number is no metav1.Time, in seconds or in nanoseconds
    for bad in (
        "",
        "yesterday",
        None,
        True,
        "9" * 100,
        10**30,
        "2026-11-30",
        1764471600,
        1796000449004163824,
        1764471600.0,
        # no instant in UTC (red team: an OverflowError crashed the audit, rc 1)
        "0001-01-01T00:00:00+01:00",
        "9999-12-31T23:59:59-01:00",
    ):
        assert parse_time(bad) is None


def test_parse_duration_and_quantity() -> None:
    assert parse_duration("720h0m0s") == timedelta(hours=720)
    assert parse_duration("1h30m") == timedelta(minutes=90)
    assert parse_duration("10x") is None
    assert parse_quantity("40Gi") == 40 * 2**30
    assert parse_quantity("500M") == 500_000_000
    assert parse_quantity("-1Gi") is None
    assert parse_quantity("1Qi") is None
    # Kubernetes' grammar (kubernetes.utils.parse_quantity); fractions of a byte round up
    assert parse_quantity("1.5Gi") == 3 * 2**29
    assert parse_quantity("1e3") == 1000
    assert parse_quantity("500m") == 1
    assert parse_quantity(" 2Ki ") == 2048
    for bad in ("", "abc", "NaN", "Infinity", True, 1.5, None, "9" * 65):
        assert parse_quantity(bad) is None, bad


def test_scope_namespaces_resources_and_selectors() -> None:
    s = Scope.from_spec(
        {
            "includedNamespaces": ["fin-*"],
            "excludedNamespaces": ["fin-tmp"],
            "excludedResources": ["pvc"],
            "labelSelector": {"matchLabels": {"a": "1"}},
        }
    )
    assert s.namespace_included("fin-prod") and not s.namespace_included("fin-tmp")
    assert not s.namespace_included("web")
    assert not s.resource_included("persistentvolumeclaims", "PersistentVolumeClaim", "")
    assert s.resource_included("virtualmachines", "VirtualMachine", "kubevirt.io")
    assert s.labels_match({"a": "1"}) and not s.labels_match({"a": "2"})
    everything = Scope.from_spec({"includedNamespaces": ["*"]})
    assert everything.includes(
        namespace="x",
        labels={},
        plural="virtualmachines",
        kind="VirtualMachine",
        group="kubevirt.io",
    )
    only_vms = Scope.from_spec({"includedResources": ["virtualmachines.kubevirt.io"]})
    assert only_vms.resource_included("virtualmachines", "VirtualMachine", "kubevirt.io")
    assert not only_vms.resource_included("persistentvolumeclaims", "PersistentVolumeClaim", "")
    ors = Scope.from_spec(
        {"orLabelSelectors": [{"matchLabels": {"a": "1"}}, {"matchLabels": {"b": "2"}}]}
    )
    assert ors.labels_match({"b": "2"}) and not ors.labels_match({"c": "3"})


def test_match_expressions() -> None:
    sel = {
        "matchExpressions": [
            {"key": "tier", "operator": "In", "values": ["db", "web"]},
            {"key": "skip", "operator": "DoesNotExist"},
        ]
    }
    assert selector_matches(sel, {"tier": "db"})
    assert not selector_matches(sel, {"tier": "db", "skip": "y"})
    assert not selector_matches(sel, {"tier": "cache"})
    with pytest.raises(SelectorError):
        selector_matches({"matchExpressions": [{"key": "a", "operator": "Near"}]}, {})


def test_redact_strips_secrets_keeps_references() -> None:
    vm = {
        "kind": "VirtualMachine",
        "metadata": {"annotations": {"admin-password": "hunter2", "description": "ok"}},
        "spec": {
            "template": {
                "spec": {
                    "volumes": [
                        {
                            "name": "ci",
                            "cloudInitNoCloud": {
                                "userData": "pw",
                                "networkDataBase64": "cHc=",
                                "secretRef": {"name": "ci-secret"},
                            },
                        },
                        {"name": "sp", "sysprep": {"secret": {"name": "unattend"}, "inline": "x"}},
                    ]
                }
            }
        },
    }
    out = redact(vm)
    vols = out["spec"]["template"]["spec"]["volumes"]
    assert vols[0]["cloudInitNoCloud"] == {
        "userData": REDACTED,
        "networkDataBase64": REDACTED,
        "secretRef": {"name": "ci-secret"},
        # "pw" is no network config: static addressing unknown, and the value malformed
        # (kept as a non-secret fact)
        "networkDataFacts": {
            "static": None,
            "static_macs": [],
            "dhcp_macs": [],
            "malformed": "networkDataBase64 is no cloud-init network config (a YAML mapping)",
        },
    }
    assert vols[1]["sysprep"] == {"secret": {"name": "unattend"}}
    assert out["metadata"]["annotations"] == {"admin-password": REDACTED, "description": "ok"}
    assert vm["metadata"]["annotations"]["admin-password"] == "hunter2"  # input untouched


def test_loader_allows_merge_overrides_but_not_duplicates(tmp_path: Path) -> None:
    from auditor.yamlstrict import LoadError, load_documents

    ok = tmp_path / "merge.yaml"
    ok.write_text("base: &b {a: 1, b: 2}\nchild:\n  <<: *b\n  b: 3\n")
    [doc] = list(load_documents(ok))
    assert doc["child"] == {"a": 1, "b": 3}
    dup = tmp_path / "dup.yaml"
    dup.write_text("kind: A\nname: x\nkind: B\n")
    with pytest.raises(LoadError, match="duplicate key 'kind' \\(first at line 1\\)"):
        list(load_documents(dup))


def test_registry_refuses_unknown_kinds_and_ids_outside_the_families() -> None:
    import pytest as _pytest

    from auditor.checks.registry import CATALOG, check, platform_check
    from auditor.models import Severity

    meta = {
        "title": "t",
        "severity": Severity.LOW,
        "rationale": "r",
        "remediation": "m",
        "references": ("https://example.invalid/rule",),
    }
    with _pytest.raises(ValueError, match="unknown kind"):
        check("RR-BKP-999", requires=("NoSuchKind",), **meta)(lambda vm, ctx: None)  # type: ignore[arg-type,return-value]
    with _pytest.raises(ValueError, match="RR-<FAMILY>-NNN"):
        check("RR-XYZ-001", **meta)(lambda vm, ctx: None)  # type: ignore[arg-type,return-value]
    assert "RR-BKP-999" not in CATALOG and "RR-XYZ-001" not in CATALOG
    taken = CATALOG["RR-BKP-001"]
    with _pytest.raises(ValueError, match="RR-BKP-001 registered twice"):
        platform_check("RR-BKP-001", **meta)(lambda ctx, vms: None)  # type: ignore[arg-type,return-value]
    assert CATALOG["RR-BKP-001"] is taken


def test_redacting_an_already_redacted_export_keeps_the_network_facts() -> None:
    """An export the auditor stripped (``auditor collect``) is read again through the same
    redaction: the ``<redacted>`` networkData must not replace the facts taken from the
    original text (a static address seen once is still a static address)."""
    static = "version: 2\nethernets:\n  eth0:\n    match: {macaddress: '02:00:00:00:00:01'}\n"
    static += "    addresses: [192.0.2.10/24]\n"
    volume = {"name": "ci", "cloudInitNoCloud": {"userData": "pw", "networkData": static}}
    vm = {"kind": "VirtualMachine", "spec": {"template": {"spec": {"volumes": [volume]}}}}
    once = redact(vm)
    twice = redact(once)
    facts = once["spec"]["template"]["spec"]["volumes"][0]["cloudInitNoCloud"]["networkDataFacts"]
    assert facts == {"static": True, "static_macs": ["02:00:00:00:00:01"], "dhcp_macs": []}
    again = twice["spec"]["template"]["spec"]["volumes"][0]["cloudInitNoCloud"]
    assert again["networkDataFacts"] == facts
    assert again["networkData"] == REDACTED


_QUANTITY_PARTS = ["", "0", "1", "7", "10", "40", "00", "32212254720", "9" * 30, "9" * 31]
_QUANTITY_TAILS = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "k", "M", "G", "m", "Qi", "gi", "i"]
_QUANTITY_EDGES = ["", " ", "+", "-", ".5", "e3", "E2", "\t", "\u00a0", "\u0663"]


@given(
    head=st.sampled_from(_QUANTITY_EDGES),
    digits=st.sampled_from(_QUANTITY_PARTS) | st.text("0123456789", max_size=40),
    tail=st.sampled_from(_QUANTITY_TAILS),
    end=st.sampled_from(_QUANTITY_EDGES),
)
@settings(max_examples=600, deadline=None)
def test_the_quick_quantity_reading_is_kubernetes_own(
    head: str, digits: str, tail: str, end: str
) -> None:
    """Digits with a binary suffix are read without the kubernetes client's Decimal
    arithmetic; every string gives what Kubernetes' own grammar gives: the client's value
    where the API server's grammar (``_GO_QUANTITY``) takes the text, else None (the client
    also takes ``1E3Gi`` and non-ASCII digits such as ``\u0663``, which the API server
    refuses: fz32)."""
    from auditor.kubevalues import _GO_QUANTITY, _k8s_quantity

    value = head + digits + tail + end
    taken = len(value) <= 64 and _GO_QUANTITY.fullmatch(value.strip()) is not None
    expected = _k8s_quantity(value) if taken else None
    assert parse_quantity(value) == expected, value
