"""Every check runs through the real pipeline on its PASS/FAIL/N/A (or ERROR) fixtures.

Each file under ``tests/fixtures/checks/<CHECK-ID>/`` is a small export whose
header says what the check must report: ``# expect: <check> <ns/vm|platform>
<STATUS> [severity]``; ``# unavailable: <Kind>`` marks a kind as unreadable.
Bucket evidence (``ClusterData.backup_contents``/``storage_locations``) comes
from ``# backup-contents: <json list>`` and ``# storage-location: <json>``
headers (the shapes of :mod:`auditor.sources.bucket.cache` and
:class:`~auditor.sources.base.StorageLocationStatus`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from auditor.checks import CATALOG
from auditor.checks.registry import CHECK_ID
from auditor.config import AuditSettings
from auditor.kinds import BY_KIND
from auditor.pipeline import audit_data
from auditor.sources.base import ClusterData, KindState, StorageLocationStatus
from auditor.sources.bucket.cache import contents_from_dict
from auditor.sources.directory import DirectorySource
from tests.conftest import AUDIT_AT, report_doc

FIXTURES = Path(__file__).parent / "fixtures" / "checks"
CASES = sorted(FIXTURES.glob("*/*.yaml"))
_EXPECT = re.compile(r"^# expect: (\S+) (\S+) (\S+)(?: (\S+))?$")


def _settings(path: Path) -> AuditSettings:
    for line in path.read_text().splitlines():
        if line.startswith("# settings: "):
            return AuditSettings.model_validate(json.loads(line.split(": ", 1)[1]))
    return AuditSettings()


def _header(path: Path) -> tuple[tuple[str, str, str, str | None], list[str]]:
    expect, unavailable = None, []
    for line in path.read_text().splitlines():
        if not line.startswith("#"):
            break
        m = _EXPECT.match(line)
        if m:
            expect = (m.group(1), m.group(2), m.group(3), m.group(4))
        elif line.startswith("# unavailable: "):
            unavailable.append(line.split(": ", 1)[1].strip())
    assert expect, f"{path} has no '# expect:' header"
    return expect, unavailable


def _bucket_headers(path: Path, data: ClusterData) -> None:
    for line in path.read_text().splitlines():
        if line.startswith("# backup-contents: "):
            rows = json.loads(line.split(": ", 1)[1])
            data.backup_contents = data.backup_contents or {}
            data.backup_contents.update({r["backup"]: contents_from_dict(r) for r in rows})
        elif line.startswith("# storage-location: "):
            raw = json.loads(line.split(": ", 1)[1])
            data.storage_locations = data.storage_locations or {}
            data.storage_locations[raw["location"]] = StorageLocationStatus(**raw)


def audit_fixture(path: Path) -> dict[str, Any]:
    """Audit one fixture file as a complete cluster except the kinds marked unavailable."""
    _, unavailable = _header(path)
    data = DirectorySource(path).collect()
    _bucket_headers(path, data)
    for kind in BY_KIND:
        data.states[kind] = KindState.UNAVAILABLE if kind in unavailable else KindState.COMPLETE
    return report_doc(audit_data(data, _settings(path), at=AUDIT_AT))


@pytest.mark.parametrize("path", CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_fixture(path: Path) -> None:
    (check_id, target, status, severity), _ = _header(path)
    assert path.parent.name == check_id
    report = audit_fixture(path)
    if target == "platform":
        findings = [f for f in report["platform_findings"] if f["check_id"] == check_id]
    else:
        ns, name = target.split("/")
        vm = next(v for v in report["vms"] if (v["namespace"], v["name"]) == (ns, name))
        findings = [f for f in vm["findings"] if f["check_id"] == check_id]
    assert len(findings) == 1, "one result per check per VM"
    finding = findings[0]
    assert finding["status"] == status, finding["message"]
    if severity:
        assert finding["severity"] == severity, finding["message"]
    assert finding["message"]


def test_every_check_has_pass_fail_and_na_or_error_fixtures() -> None:
    statuses: dict[str, set[str]] = {}
    for path in CASES:
        (check_id, _, status, _), _ = _header(path)
        statuses.setdefault(check_id, set()).add(status)
    assert set(statuses) == set(CATALOG)
    for check_id, seen in statuses.items():
        assert "FAIL" in seen, check_id
        # Two of PASS / NOT_APPLICABLE / ERROR: RR-STG-002 cannot PASS (it is an info
        # notice), RR-BKP-001/002, RR-FW-001 and RR-RST-001 apply to every VM.
        assert len(seen & {"PASS", "NOT_APPLICABLE", "ERROR"}) >= 1, check_id
        assert len(seen) >= 3 or check_id == "RR-STG-002", (check_id, seen)


def test_check_ids_well_formed_and_cited() -> None:
    # uniqueness is the registry's (it refuses a second registration at import; test_units)
    for check_id, spec in CATALOG.items():
        assert CHECK_ID.fullmatch(check_id)
        assert spec.id == check_id
        assert spec.references and all(r.startswith("https://") for r in spec.references)
        assert spec.title[0].isupper() and not spec.title.lower().startswith("ensure")


def test_no_fixture_secret_reaches_report() -> None:
    for path in CASES[:5]:
        assert "CANARY-fixture-pw" in path.read_text()
        assert "CANARY-fixture-pw" not in json.dumps(audit_fixture(path))
