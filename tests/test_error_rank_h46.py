"""Round h46: an ERROR never ranks above a high FAIL (docs/readiness.md, "Round h46").

A check declared medium whose body can FAIL high for any guest gave its ERROR (its own
``errored(...)`` naming no severity, a crash, the engine's "Cannot evaluate/conclude" for a
malformed field or unread kind) the medium default. When the malformed input hid the high
FAIL and a medium FAIL remained, the VM read UNKNOWN of medium ERRORs (AT_RISK at worst)
where it was NOT_READY: malformed input improved the verdict (shared fuzz case 10's pattern).
Such a check now declares ``worst_severity`` (from one module constant its body reads), and
every ERROR of it that names no severity takes it (``CheckSpec.error_severity_for``).
"""

from __future__ import annotations

import ast
import inspect
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from auditor.checks import CATALOG, backup, identity, netidentity
from auditor.checks.registry import CheckSpec, Result, _register
from auditor.engine import _finding
from auditor.models import Severity, Status
from bench.mutations import RANK
from tests.test_check_fixtures import FIXTURES, audit_fixture
from tests.test_malformed_m42 import _vm
from tests.test_windows_severity_h43c import RHEL, WINDOWS, _rank, _write

#: every check whose body can FAIL above its declared severity for any guest, with the
#: module constant its body reads (the Windows-only ones declare ``windows_severity``)
DECLARED = {
    "RR-BKP-012": backup._CANNOT_START,
    "RR-FW-002": identity._FW_REFUSED,
    "RR-NET-002": netidentity._STATIC_GAP,
    "RR-NIC-001": identity._MAC_REFUSED,
}
#: checks whose FAIL is above their severity for a Windows guest only (rounds m42-h44b)
WINDOWS_ONLY = {"RR-DSK-003", "RR-FW-001", "RR-FW-003", "RR-RST-002"}

#: app/vm1's firmware UUID in the fixtures: removed, RR-FW-001 FAILs medium (a Linux guest),
#: the medium FAIL that remains beside the hidden high one
UUID = "          uuid: 3f6d2c1e-8b0a-4f7e-b3c5-6a1d9e2f4b10\n"


def _fail_severities(spec: CheckSpec) -> set[Severity]:
    """The severities the check's ``failed(...)`` calls can name (its function and the
    helpers of its module it calls, transitively; ``None`` or no severity: the declared one),
    read from the source: Severity members and module constants, through local variables."""
    func = spec.vm_func or spec.platform_func
    assert func is not None
    module = inspect.getmodule(func)
    tree = ast.parse(inspect.getsource(module))  # type: ignore[arg-type]
    defs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    consts = {k: v for k, v in vars(module).items() if isinstance(v, Severity)}
    found: set[Severity] = set()

    def severities(
        expr: ast.AST, fn: ast.FunctionDef, names: frozenset[str] = frozenset()
    ) -> set[Severity]:
        out: set[Severity] = set()
        for n in ast.walk(expr):
            if isinstance(n, ast.Attribute) and getattr(n.value, "id", None) == "Severity":
                out.add(Severity[n.attr])
            elif isinstance(n, ast.Constant) and n.value is None:
                out.add(spec.severity)
            elif isinstance(n, ast.Name) and n.id in consts:
                out.add(consts[n.id])
            elif isinstance(n, ast.Name) and n.id not in names:
                for a in ast.walk(fn):
                    if isinstance(a, ast.Assign) and any(
                        getattr(t, "id", None) == n.id for t in a.targets
                    ):
                        out |= severities(a.value, fn, names | {n.id})
        return out

    seen: set[str] = set()
    todo = [func.__name__]
    while todo:
        name = todo.pop()
        if name in seen or name not in defs:
            continue
        seen.add(name)
        fn = defs[name]
        for n in ast.walk(fn):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name):
                todo.append(n.func.id)
                if n.func.id == "failed":
                    found |= severities(n.args[1], fn) if len(n.args) > 1 else {spec.severity}
    return found


def test_the_checks_declaring_a_worst_severity_are_those_listed() -> None:
    assert {c for c, s in CATALOG.items() if s.worst_severity} == set(DECLARED)
    for check_id, constant in DECLARED.items():
        spec = CATALOG[check_id]
        assert spec.worst_severity is constant is Severity.HIGH
        assert spec.severity is Severity.MEDIUM


@pytest.mark.parametrize("check_id", sorted(CATALOG))
def test_no_fail_is_above_what_the_check_declares(check_id: str) -> None:
    """What each check's body can FAIL with (read from its source) against its declaration:
    the worst is declared (``severity``, ``windows_severity`` for a Windows-only one,
    ``worst_severity`` otherwise), and a declared worst is one the body gives."""
    spec = CATALOG[check_id]
    found = _fail_severities(spec)
    assert found, f"{check_id}: no failed(...) call found"
    worst = min(found, key=lambda s: s.rank)
    if worst.rank >= spec.severity.rank:
        assert spec.worst_severity is None and spec.windows_severity is None
    elif check_id in WINDOWS_ONLY:
        assert spec.windows_severity is worst and spec.worst_severity is None
    else:
        assert spec.worst_severity is worst


@pytest.mark.parametrize("check_id", sorted(DECLARED))
def test_an_error_takes_the_worst_severity_for_every_guest(check_id: str) -> None:
    spec = CATALOG[check_id]
    for os in ("linux", "windows", "unknown", None):
        assert spec.error_severity_for(os) is Severity.HIGH
    # the FAIL default stays as declared: medium, high for RR-FW-002's Windows TPM
    assert spec.severity_for("linux") is Severity.MEDIUM
    want = Severity.HIGH if check_id == "RR-FW-002" else Severity.MEDIUM
    assert spec.severity_for("windows") is want


def test_windows_severity_is_kept_and_others_are_unchanged() -> None:
    dsk = CATALOG["RR-DSK-003"]
    assert dsk.error_severity_for("windows") is Severity.HIGH
    assert dsk.error_severity_for("linux") is Severity.MEDIUM
    assert CATALOG["RR-NIC-002"].error_severity_for("windows") is Severity.MEDIUM
    assert CATALOG["RR-BKP-001"].error_severity_for("linux") is Severity.HIGH


def test_an_error_naming_no_severity_takes_the_worst() -> None:
    """``_finding`` for an ERROR without a severity (a crash's, an unavailable kind's): the
    worst; a PASS keeps the declared severity; an ERROR naming one keeps it."""
    spec = CATALOG["RR-NIC-001"]
    assert _finding(spec, Result(Status.ERROR, "x")).severity is Severity.HIGH
    assert _finding(spec, Result(Status.PASS, "x")).severity is Severity.MEDIUM
    named = Result(Status.ERROR, "x", {}, Severity.MEDIUM)
    assert _finding(spec, named).severity is Severity.MEDIUM


@pytest.mark.parametrize("above", [Severity.MEDIUM, Severity.LOW])
def test_a_worst_severity_not_above_the_default_is_refused(above: Severity) -> None:
    spec = replace(CATALOG["RR-NIC-001"], id="RR-NIC-999", worst_severity=above)
    with pytest.raises(ValueError, match="worst_severity=.* not above its severity medium"):
        _register(spec)
    assert "RR-NIC-999" not in CATALOG


def _finding_of(doc: dict[str, Any], check_id: str) -> dict[str, Any]:
    return next(f for f in _vm(doc)["findings"] if f["check_id"] == check_id)


def _without_worst(monkeypatch: pytest.MonkeyPatch, check_id: str) -> None:
    """The check as it was before round h46 (no ``worst_severity``)."""
    monkeypatch.setitem(CATALOG, check_id, replace(CATALOG[check_id], worst_severity=None))


#: RR-NET-002's fixture whose NAD the backups leave out, with cloud-init's static addresses on
#: that NIC: FAIL high. ``networkData: 42`` (the VM's, then the VMI's) hides the addresses.
NET_FAIL = "RR-NET-002/fail-static-bridge-nad-outside-backups.yaml"
NET_DATA = '          networkData: "version: 2'


def _net_text(malformed: bool) -> str:
    text = (FIXTURES / NET_FAIL).read_text().replace(UUID, "", 1)
    if malformed:
        lines = text.splitlines(keepends=True)
        at = next(i for i, line in enumerate(lines) if line.startswith(NET_DATA))
        assert lines[at + 1].startswith("            \\ '02:00:00:00:00:02'")
        lines[at : at + 2] = ["          networkData: 42\n"]
        text = "".join(lines)
    return text


def test_a_hidden_static_address_gap_reads_unknown_not_at_risk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Baseline NOT_READY (RR-NET-002 FAIL high, RR-FW-001 FAIL medium). The VM's cloud-init
    ``networkData: 42``: RR-NET-002 cannot tell the static addresses, its would-be FAIL is
    medium. Before: ERROR medium, AT_RISK at worst; now ERROR high, ranked with NOT_READY."""
    base = audit_fixture(_write(tmp_path, _net_text(False)))
    assert _vm(base)["readiness"] == "NOT_READY"
    assert (
        _finding_of(base, "RR-NET-002")["status"],
        _finding_of(base, "RR-NET-002")["severity"],
    ) == ("FAIL", "high")
    assert _finding_of(base, "RR-FW-001")["status"] == "FAIL"

    doc = audit_fixture(_write(tmp_path, _net_text(True)))
    f = _finding_of(doc, "RR-NET-002")
    assert (f["status"], f["severity"]) == ("ERROR", "high")
    path = "spec.template.spec.volumes[cloudinitdisk].cloudInitNoCloud.networkData"
    assert f["evidence"]["malformed_fields"] == [path]
    assert f["evidence"]["would_be"]["status"] == "FAIL"
    assert "static addresses" not in f["evidence"]["would_be"]["message"]
    fw = _finding_of(doc, "RR-FW-001")
    assert (fw["status"], fw["severity"]) == ("FAIL", "medium")
    assert _vm(doc)["readiness"] == "UNKNOWN"
    assert _rank(doc) == RANK["NOT_READY"]

    _without_worst(monkeypatch, "RR-NET-002")
    before = audit_fixture(_write(tmp_path, _net_text(True)))
    assert _finding_of(before, "RR-NET-002")["severity"] == "medium"
    assert _rank(before) == RANK["AT_RISK"]  # the improvement this round removes


#: RR-NIC-001's passing fixture with its bridge NIC's MAC multicast (KubeVirt cannot start it)
NIC_PASS = "RR-NIC-001/pass.yaml"
MAC = "            macAddress: 02:00:00:00:00:02\n"


def test_a_malformed_mac_hiding_a_refused_one_is_a_high_error(tmp_path: Path) -> None:
    """A multicast MAC is a high FAIL; written as a list, the check's would-be result is the
    unpinned NIC's medium FAIL. Before: ERROR medium; now high (RR-NET-001 reads the
    interfaces too, so the VM was UNKNOWN already: the verdict is unchanged here)."""
    text = (FIXTURES / NIC_PASS).read_text().replace(UUID, "", 1)
    refused = text.replace(MAC, MAC.replace("02:", "03:", 1), 1)
    base = audit_fixture(_write(tmp_path, refused))
    assert (_finding_of(base, "RR-NIC-001")["status"], _vm(base)["readiness"]) == (
        "FAIL",
        "NOT_READY",
    )
    assert _finding_of(base, "RR-NIC-001")["severity"] == "high"
    doc = audit_fixture(_write(tmp_path, text.replace(MAC, "            macAddress: [x]\n", 1)))
    f = _finding_of(doc, "RR-NIC-001")
    assert (f["status"], f["severity"]) == ("ERROR", "high")
    assert f["evidence"]["malformed_fields"] == [
        "spec.template.spec.domain.devices.interfaces[vlan].macAddress"
    ]
    assert f["evidence"]["would_be"]["status"] == "FAIL"
    assert _vm(doc)["readiness"] == "UNKNOWN"


@pytest.mark.parametrize("guest", [RHEL, WINDOWS])
def test_a_crash_of_such_a_check_is_a_high_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, guest: str
) -> None:
    """RR-NIC-001 raising (a malformed input the reader let through) on a VM whose other
    FAIL is medium: before, ERROR medium and AT_RISK at worst; now high, ranked with
    NOT_READY, for either guest. On Windows the UUID stays (unpinned, RR-FW-001 FAILs high
    there): the VM passes everything else, and a medium ERROR alone ranked it AT_RISK at
    worst."""
    text = (FIXTURES / NIC_PASS).read_text()
    text = text.replace(UUID, "", 1) if guest == RHEL else text.replace(RHEL, guest, 1)

    def raises(vm: Any, ctx: Any) -> Any:
        raise TypeError("a field of another type")

    spec = CATALOG["RR-NIC-001"]
    monkeypatch.setitem(CATALOG, spec.id, replace(spec, vm_func=raises))
    doc = audit_fixture(_write(tmp_path, text))
    f = _finding_of(doc, "RR-NIC-001")
    assert (f["status"], f["severity"]) == ("ERROR", "high")
    assert f["evidence"]["exception"] == "TypeError"
    assert _vm(doc)["readiness"] == "UNKNOWN"
    assert _rank(doc) == RANK["NOT_READY"]
    _without_worst(monkeypatch, spec.id)
    monkeypatch.setitem(CATALOG, spec.id, replace(CATALOG[spec.id], vm_func=raises))
    before = audit_fixture(_write(tmp_path, text))
    assert _finding_of(before, "RR-NIC-001")["severity"] == "medium"
    assert _rank(before) == RANK["AT_RISK"]


#: RR-BKP-012's fixture whose backups exclude Secrets, its cloud-init inline (no Secret) and a
#: kernel boot container pulled with Secret kernel-pull: that Secret is the only reference,
#: hard (the launcher pod cannot pull the kernel image without it), so FAIL high
KERNEL_PULL = "              imagePullSecret: kernel-pull\n"


def _kernel_text(pull: str = KERNEL_PULL) -> str:
    text = (FIXTURES / "RR-BKP-012/fail-secrets-excluded.yaml").read_text().replace(UUID, "", 1)
    ref = "          secretRef:\n            name: vm1-cloudinit\n"
    assert text.count(ref) == 1
    text = text.replace(ref, "          userData: '#cloud-config'\n", 1)
    fw = "              secureBoot: true\n          serial: SERIAL-0001\n"
    assert text.count(fw) == 1
    kernel = (
        "          kernelBoot:\n            container:\n"
        "              image: registry.example.com/kernel:1\n" + pull
    )
    return text.replace(fw, fw.replace("          serial", kernel + "          serial"), 1)


@pytest.mark.parametrize("bad", ["5", "[kernel-pull]"])
def test_a_malformed_kernel_pull_secret_is_named_and_a_high_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bad: str
) -> None:
    """Baseline NOT_READY (RR-BKP-012 FAIL high for the pull Secret left out, RR-FW-001 FAIL
    medium). ``imagePullSecret`` of another type: before, nothing named, RR-BKP-012
    NOT_APPLICABLE ("references no Secret") and the VM AT_RISK. Now a VM problem names the
    field, RR-BKP-012 ERRORs high (its would-be result N/A) and the VM ranks with NOT_READY."""
    base = audit_fixture(_write(tmp_path, _kernel_text()))
    f = _finding_of(base, "RR-BKP-012")
    assert (f["status"], f["severity"], _vm(base)["readiness"]) == ("FAIL", "high", "NOT_READY")
    assert "kernel-pull" in f["message"]

    doc = audit_fixture(_write(tmp_path, _kernel_text(f"              imagePullSecret: {bad}\n")))
    path = "spec.template.spec.domain.firmware.kernelBoot.container.imagePullSecret"
    named = [p for p in doc["collection_problems"] if p["field"] == path]
    assert [(p["kind"], p["name"]) for p in named] == [("VirtualMachine", "vm1")]
    assert "not a string" in named[0]["reason"]
    f = _finding_of(doc, "RR-BKP-012")
    assert (f["status"], f["severity"]) == ("ERROR", "high")
    assert f["evidence"]["malformed_fields"] == [path]
    assert f["evidence"]["would_be"]["status"] == "NOT_APPLICABLE"
    assert _vm(doc)["readiness"] == "UNKNOWN"
    assert _rank(doc) == RANK["NOT_READY"]

    # without the declarations (RR-FW-002 reads the firmware too) the ERRORs are medium
    _without_worst(monkeypatch, "RR-BKP-012")
    _without_worst(monkeypatch, "RR-FW-002")
    before = audit_fixture(
        _write(tmp_path, _kernel_text(f"              imagePullSecret: {bad}\n"))
    )
    assert _finding_of(before, "RR-BKP-012")["severity"] == "medium"
    assert _rank(before) == RANK["AT_RISK"]


@pytest.mark.parametrize(
    ("old", "new", "field", "reason"),
    [
        (
            "          image: registry.example.com/tools:1\n",
            "          image: registry.example.com/tools:1\n          imagePullSecret: 7\n",
            "spec.template.spec.volumes[tools].containerDisk.imagePullSecret",
            "int, not a string: which Secret it names is unknown",
        ),
        (
            KERNEL_PULL,
            "              imagePullSecret: kernel pull\n",
            "spec.template.spec.domain.firmware.kernelBoot.container.imagePullSecret",
            "names no object",
        ),
        (
            "          kernelBoot:\n            container:\n",
            "          kernelBoot:\n            container: [x]\n            c2:\n",
            "spec.template.spec.domain.firmware.kernelBoot.container",
            "list, not a mapping",
        ),
    ],
)
def test_other_pull_secret_faults_are_named(
    tmp_path: Path, old: str, new: str, field: str, reason: str
) -> None:
    """A containerDisk's ``imagePullSecret`` of another type, a kernel pull Secret that is no
    object name, a kernel boot container of another type: named at the field (the VM
    UNKNOWN, never better than its NOT_READY baseline)."""
    text = _kernel_text()
    if "tools" in old:
        vol = "      - cloudInitNoCloud:\n"
        tools = "      - containerDisk:\n          image: registry.example.com/tools:1\n"
        text = text.replace(vol, tools + "        name: tools\n" + vol, 1)
    assert text.count(old) == 1
    doc = audit_fixture(_write(tmp_path, text.replace(old, new, 1)))
    named = [p for p in doc["collection_problems"] if p["field"] == field]
    assert len(named) == 1 and reason in named[0]["reason"], doc["collection_problems"]
    assert _rank(doc) == RANK["NOT_READY"]
