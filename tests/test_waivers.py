"""Waivers: WAIVED findings keep their facts; expiry; the appendix; catalog ids."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from auditor.config import AuditSettings, parse_settings
from auditor.models import Finding, Severity, Status
from auditor.waivers import apply_waivers, validate_check_ids, waiver_appendix
from tests.service_support import waiver

AT = datetime(2026, 11, 30, 6, tzinfo=UTC)


def settings(*waivers: dict[str, Any]) -> AuditSettings:
    return parse_settings({"waivers": list(waivers)}, path=Path("t.yaml"))


def fail(check: str = "RR-BKP-001", status: Status = Status.FAIL) -> Finding:
    return Finding(
        check,
        status,
        Severity.HIGH,
        "VM eng-sandbox/vm1 has no backup.",
        {"backups": [], "namespace": "eng-sandbox"},
    )


def apply(
    s: AuditSettings,
    findings: list[Finding],
    ns: str = "eng-sandbox",
    name: str = "vm1",
    labels: dict[str, str] | None = None,
    at: datetime = AT,
) -> list[Finding]:
    return apply_waivers(findings, namespace=ns, name=name, labels=labels or {}, settings=s, at=at)


def test_waived_finding_keeps_facts_and_gets_waiver() -> None:
    [out] = apply(settings(waiver()), [fail()])
    assert out.status is Status.WAIVED
    assert out.severity is Severity.HIGH
    assert out.message == "VM eng-sandbox/vm1 has no backup."
    assert out.evidence == {"backups": [], "namespace": "eng-sandbox"}
    assert out.waiver == {
        "id": "W-1",
        "check_id": "RR-BKP-001",
        "selector": {"namespace": "eng-*", "name": "*", "labels": {}},
        "reason": "rebuilt from templates",
        "approver": "jane@corp.example",
        "created": "2026-11-01T00:00:00Z",
        "expires": "2027-01-01T00:00:00Z",
    }
    assert out.to_dict()["waiver"]["id"] == "W-1"


def test_only_fail_of_the_named_check_is_waived() -> None:
    s = settings(waiver())
    findings = [fail(), fail("RR-BKP-002"), fail(status=Status.ERROR), fail(status=Status.PASS)]
    out = apply(s, findings)
    assert [f.status for f in out] == [Status.WAIVED, Status.FAIL, Status.ERROR, Status.PASS]
    assert out[1].waiver is None and out[2].waiver is None


def test_selector_namespace_name_labels() -> None:
    s = settings(waiver(selector={"namespace": "eng-*", "name": "db-?", "labels": {"t": "x"}}))
    assert apply(s, [fail()], name="db-1", labels={"t": "x"})[0].status is Status.WAIVED
    assert apply(s, [fail()], name="db-10", labels={"t": "x"})[0].status is Status.FAIL
    assert apply(s, [fail()], name="db-1", labels={"t": "y"})[0].status is Status.FAIL
    assert apply(s, [fail()], ns="apps", name="db-1", labels={"t": "x"})[0].status is Status.FAIL


def test_expired_and_pending_waivers_do_not_apply() -> None:
    s = settings(waiver(expires="2026-11-30T06:00:00Z"))
    assert apply(s, [fail()])[0].status is Status.FAIL  # expires is exclusive
    assert (
        apply(s, [fail()], at=datetime(2026, 11, 30, 5, 59, 59, tzinfo=UTC))[0].status
        is Status.WAIVED
    )
    pending = settings(waiver(created="2026-12-01", expires="2027-01-01"))
    assert apply(pending, [fail()])[0].status is Status.FAIL


def test_appendix_lists_every_waiver_with_state() -> None:
    s = settings(
        waiver(id="W-2", expires="2026-11-15"),
        waiver(id="W-1"),
        waiver(id="W-3", created="2026-12-24", expires="2027-01-01"),
    )
    app = waiver_appendix(s, AT)
    assert [(w["id"], w["state"], w["days_left"]) for w in app] == [
        ("W-1", "active", 31),
        ("W-2", "expired", -15),  # 15 days and 6 hours: whole days toward zero
        ("W-3", "pending", 31),
    ]
    assert (
        app[1]["reason"] == "rebuilt from templates" and app[1]["expires"] == "2026-11-15T00:00:00Z"
    )


def test_validate_check_ids_names_the_field() -> None:
    s = settings(waiver(id="a"), waiver(id="b", check="RR-BKP-999"))
    assert validate_check_ids(s, {"RR-BKP-001"}) == [
        ("waivers.1.check", "unknown check id 'RR-BKP-999' (see `auditor checks list`)")
    ]


def test_a_waiver_on_a_platform_check_is_refused_where_it_would_waive_nothing(
    tmp_path: Path,
) -> None:
    """A platform check gives one cluster-wide finding on no VM, so a waiver of it was
    accepted, listed as "active" in the appendix and the period report, and never applied
    (new-user trial nu20: RR-PLT-002 stayed FAIL). ``validate-config`` and ``run`` now refuse
    it naming the field; a VM check's waiver in the same file stays valid."""
    import yaml
    from click.testing import CliRunner

    from auditor.cli import main

    path = tmp_path / "auditor.yaml"
    path.write_text(
        yaml.safe_dump({"waivers": [waiver(id="ok"), waiver(id="plt", check="RR-PLT-002")]})
    )
    runner = CliRunner()
    res = runner.invoke(main, ["validate-config", str(path)])
    assert res.exit_code == 2, res.output
    assert (
        "waivers.1.check: RR-PLT-002 is a platform check (one finding for the whole cluster, on "
        "no VM); a waiver applies to VM checks only"
    ) in res.output
    assert "waivers.0" not in res.output
    res = runner.invoke(main, ["run", "--config", str(path), "--from-dir", str(tmp_path / "x")])
    assert res.exit_code == 2 and "RR-PLT-002 is a platform check" in res.output
    path.write_text(yaml.safe_dump({"waivers": [waiver(id="ok")]}))
    assert runner.invoke(main, ["validate-config", str(path)]).exit_code == 0


def test_a_waiver_runs_at_most_a_year() -> None:
    """A waiver written to 2099 hid a NOT_READY for good (new-user trial nu20): at most 366
    days from created to expires, named by field; a year to the day (leap year) is fine."""
    import pytest

    from auditor.config import ConfigError

    ok = parse_settings(
        {"waivers": [waiver(created="2027-11-30", expires="2028-11-30")]}, path=Path("a.yaml")
    )
    assert ok.waivers[0].expires == datetime(2028, 11, 30, tzinfo=UTC)
    with pytest.raises(ConfigError) as err:
        parse_settings(
            {"waivers": [waiver(created="2026-11-01", expires="2099-01-01")]}, path=Path("a.yaml")
        )
    assert (
        "waivers.0.expires: is more than 366 days after created (2026-11-01): a waiver is "
        "reviewed at least yearly; renew it with a new created date"
    ) in str(err.value)
