"""Config file loading: the example, and invalid files naming the field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from pydantic import ValidationError

from auditor.cli import main
from auditor.config import (
    ClusterSourceSettings,
    ConfigError,
    DirectorySourceSettings,
    load_settings,
    parse_settings,
)
from auditor.config.publish import PublishSettings
from tests.service_support import REPO, waiver, write_yaml

EXAMPLE = REPO / "config" / "auditor.example.yaml"


def problems_of(raw: Any, **kw: Any) -> dict[str, str]:
    with pytest.raises(ConfigError) as info:
        parse_settings(raw, path=Path("t.yaml"), **kw)
    return dict(info.value.problems)


def test_example_loads_with_every_section() -> None:
    s = load_settings(EXAMPLE, known_check_ids={"RR-BKP-001"})
    assert s.cluster_name == "ocp-prod-east"
    assert isinstance(s.source, ClusterSourceSettings)
    assert s.thresholds.rpo_hours == 24 and s.thresholds.min_retention_hours == 168
    assert s.thresholds.require_off_cluster_copy is True
    assert [p.name for p in s.policies] == ["finance-gold", "tier-bronze", "sandbox"]
    assert s.waivers[0].check == "RR-BKP-001"
    assert s.waivers[0].expires.isoformat() == "2027-05-01T00:00:00+00:00"
    assert [x.id for x in s.schedules] == ["daily-audit", "monthly-report"]
    assert s.schedules[1].formats == ("json", "html", "pdf", "csv")
    assert s.service.misfire_grace_time_seconds == 21600
    assert s.service.store_url() == "sqlite:////var/lib/auditor/state/jobs.sqlite"


def test_monthly_cron_fires_on_the_first_in_its_time_zone() -> None:
    s = load_settings(EXAMPLE)
    from datetime import UTC, datetime

    nxt = s.schedules[1].trigger().get_next_fire_time(None, datetime(2026, 11, 30, 12, tzinfo=UTC))
    assert nxt.isoformat() == "2026-12-01T07:00:00+01:00"


def test_empty_mapping_gives_defaults(tmp_path: Path) -> None:
    """``{}`` says "the defaults" on purpose; a 0-byte file is refused (tests/test_newuser_nu34)."""
    (tmp_path / "c.yaml").write_text("{}\n", encoding="utf-8")
    s = load_settings(tmp_path / "c.yaml")
    assert s.source is None and s.schedules == () and s.thresholds.min_restore_points == 1


def test_directory_source() -> None:
    s = parse_settings({"source": {"type": "directory", "path": "/x"}}, path=Path("t"))
    assert isinstance(s.source, DirectorySourceSettings) and str(s.source.path) == "/x"


@pytest.mark.parametrize(
    ("raw", "field", "words"),
    [
        ({"schedules": [{"id": "d", "cron": "0 25 * * *"}]}, "schedules.0.cron", "invalid cron"),
        ({"schedules": [{"id": "d", "cron": "0 6 * *"}]}, "schedules.0.cron", "4 fields"),
        ({"schedules": [{"id": "d", "cron": "0 6 * * 0"}]}, "schedules.0.cron", "names"),
        (
            {"schedules": [{"id": "d", "cron": "0 6 * * *", "timezone": "Mars/Base"}]},
            "schedules.0.timezone",
            "unknown time zone",
        ),
        ({"waivers": [waiver(expires=None)]}, "waivers.0.expires", "missing"),
        ({"waivers": [waiver(reason=None)]}, "waivers.0.reason", "missing"),
        ({"waivers": [waiver(reason="  ")]}, "waivers.0.reason", "blank"),
        ({"waivers": [waiver(check="backup-001")]}, "waivers.0.check", "not a check id"),
        ({"waivers": [waiver(expires="2026-10-01")]}, "waivers.0.expires", "later than"),
        ({"waivers": [waiver(), waiver()]}, "waivers", "repeats"),
        ({"thresholds": {"rpo_hour": 4}}, "thresholds.rpo_hour", "unknown field"),
        ({"repot": {}}, "repot", "unknown field"),
        ({"report": {"formats": ["docx"]}}, "report.formats.0", "'json'"),
        ({"policies": [{"name": "p", "match": {}}]}, "policies.0.match", "at least one"),
        (
            {"policies": [{"name": "default", "match": {"namespaces": ["a"]}}]},
            "policies.0.name",
            "reserved",
        ),
        ({"source": {"type": "ftp"}}, "source", "tag"),
    ],
)
def test_invalid_config_names_the_field(raw: Any, field: str, words: str) -> None:
    problems = problems_of(raw)
    assert field in problems, problems
    assert words in problems[field]


def test_unknown_check_id_refused_when_catalog_known() -> None:
    raw = {"waivers": [waiver(check="RR-BKP-999")]}
    problems = problems_of(raw, known_check_ids={"RR-BKP-001"})
    assert problems == {
        "waivers.0.check": "unknown check id 'RR-BKP-999' (see `auditor checks list`)"
    }
    assert parse_settings(raw, path=Path("t")).waivers[0].check == "RR-BKP-999"


def test_every_problem_is_reported_at_once() -> None:
    raw = {"bogus": 1, "waivers": [waiver(expires=None)], "schedules": [{"id": "x", "cron": "x"}]}
    assert set(problems_of(raw)) == {"bogus", "waivers.0.expires", "schedules.0.cron"}


def test_validate_config_cli(tmp_path: Path) -> None:
    runner = CliRunner()
    ok = runner.invoke(main, ["validate-config", str(EXAMPLE)])
    assert ok.exit_code == 0, ok.output
    assert "valid (2 schedule(s), 3 policy override(s), 1 waiver(s))" in ok.output
    bad = write_yaml(
        tmp_path / "bad.yaml",
        {
            "schedules": [{"id": "d", "cron": "61 * * * *"}],
            "waivers": [waiver(expires=None)],
            "extra": True,
        },
    )
    res = runner.invoke(main, ["validate-config", str(bad)])
    assert res.exit_code == 2
    assert "3 problem(s)" in res.output
    for field in ("schedules.0.cron:", "waivers.0.expires:", "extra: unknown field"):
        assert field in res.output


def test_validate_config_unreadable_and_not_yaml(tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(main, ["validate-config", str(tmp_path / "missing.yaml")])
    assert res.exit_code == 2 and "<file>" in res.output
    (tmp_path / "b.yaml").write_text("a: [1, 2\n", encoding="utf-8")
    res = runner.invoke(main, ["validate-config", str(tmp_path / "b.yaml")])
    assert res.exit_code == 2 and "not valid YAML" in res.output


def test_duplicate_key_in_config_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "dup.yaml"
    path.write_text("cluster_name: a\ncluster_name: b\n")
    with pytest.raises(ConfigError) as info:
        load_settings(path)
    field, message = info.value.problems[0]
    assert field == "<file>" and "duplicate key 'cluster_name'" in message


def test_backup_storage_problems_by_field_path(tmp_path: Path) -> None:
    raw = {
        "backup_storage": {
            "locations": {
                "Bad_Name": {"endpoint_url": "ftp://x", "addressing_style": "sideways"},
                "dpa-1": {"ca_bundle": str(tmp_path / "absent.pem"), "secret_key": "x"},
            },
            "workers": 0,
        }
    }
    problems = problems_of(raw)
    assert set(problems) == {
        "backup_storage.locations.Bad_Name.[key]",
        "backup_storage.locations.Bad_Name.endpoint_url",
        "backup_storage.locations.Bad_Name.addressing_style",
        "backup_storage.locations.dpa-1.ca_bundle",
        "backup_storage.locations.dpa-1.secret_key",
        "backup_storage.workers",
    }
    assert problems["backup_storage.locations.dpa-1.ca_bundle"].endswith(
        "absent.pem does not exist"
    )
    assert problems["backup_storage.locations.dpa-1.secret_key"].startswith("unknown field")
    assert problems_of({"backup_storage": {"locations": {}}}) == {
        "backup_storage.locations": "Dictionary should have at least 1 item after validation, not 0"
    }
    ok = parse_settings({"backup_storage": {"locations": {"dpa-1": {}}}}, path=Path("t"))
    assert ok.backup_storage is not None and ok.backup_storage.workers == 4
    assert parse_settings({}, path=Path("t")).backup_storage is None


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("https://s3.example.test:9000/?X-Amz-Signature=SECRETTOKEN", "query or fragment"),
        ("https://s3.example.test/#SECRETTOKEN", "query or fragment"),
        ("https://ak:SECRETTOKEN@s3.example.test", "credentials (user:password@)"),
    ],
)
def test_endpoint_with_a_token_is_refused_without_echoing_it(url: str, why: str) -> None:
    """A bucket endpoint carrying a token or credentials is refused (it would be kept in
    logs and reports), and the message does not repeat the token."""
    raw = {"backup_storage": {"locations": {"dpa-1": {"endpoint_url": url}}}}
    problems = problems_of(raw)
    message = problems["backup_storage.locations.dpa-1.endpoint_url"]
    assert why in message and "SECRETTOKEN" not in message
    with pytest.raises(ValidationError, match="endpoint_url must not"):
        PublishSettings(bucket="b", endpoint_url=url)


def test_report_formats_in_any_case_as_the_cli_takes_them() -> None:
    s = parse_settings(
        {
            "report": {"formats": ["JSON", "Html", " PDF "]},
            "schedules": [{"id": "m", "cron": "0 7 1 * *", "formats": ["CSV", "Cards"]}],
        },
        path=Path("t.yaml"),
    )
    assert s.report.formats == ("json", "html", "pdf")
    assert s.schedules[0].formats == ("csv", "cards")
    # a repeat in another case is still a repeat, and a wrong name still names the field
    assert (
        "must not repeat"
        in problems_of({"report": {"formats": ["json", "JSON"]}})["report.formats"]
    )
    assert "'json'" in problems_of({"report": {"formats": ["XLSX"]}})["report.formats.0"]


def test_period_public_keys_are_read_at_load(tmp_path: Path) -> None:
    """A missing or unusable key file is refused at load, naming the file and the entry,
    not at the first monthly report."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519

    good = tmp_path / "signing.pub.pem"
    good.write_bytes(
        ed25519.Ed25519PrivateKey.generate()
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    ec_key = tmp_path / "ec.pub.pem"
    ec_key.write_bytes(
        ec.generate_private_key(ec.SECP256R1())
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    junk = tmp_path / "junk.pem"
    junk.write_text("not a key\n", encoding="utf-8")
    missing = tmp_path / "gone.pem"
    keys = [str(good), str(missing), str(junk), str(ec_key)]
    raw = {
        "publish": {"url": str(tmp_path / "archive"), "spool_dir": str(tmp_path / "spool")},
        "schedules": [
            {
                "id": "m",
                "cron": "0 7 1 * *",
                "publish": True,
                "period_report": True,
                "period_public_keys": keys,
            }
        ],
    }
    found = problems_of(raw)
    field = "schedules.0.period_public_keys"
    assert f"{field}.0" not in found
    assert found[f"{field}.1"] == f"public key {missing}: cannot read: No such file or directory"
    assert found[f"{field}.2"].startswith(f"public key {junk}: not a PEM public key")
    assert found[f"{field}.3"].endswith("not an Ed25519 key")
    raw["schedules"][0]["period_public_keys"] = [str(good)]  # type: ignore[index]
    assert parse_settings(raw, path=Path("t.yaml")).schedules[0].period_public_keys == (good,)


def test_publish_signing_key_is_read_at_load(tmp_path: Path) -> None:
    """ux27: a missing or unusable publish.signing_key_file passed validate-config and the
    service start, and failed only when the first run was sealed. Its private key is
    never shown in the problem."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519, rsa

    def pem(key: Any) -> bytes:
        data: bytes = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        return data

    good = tmp_path / "signing.pem"
    good.write_bytes(pem(ed25519.Ed25519PrivateKey.generate()))
    wrong = tmp_path / "rsa.pem"
    wrong.write_bytes(pem(rsa.generate_private_key(public_exponent=65537, key_size=2048)))
    missing = tmp_path / "gone.pem"
    publish = {"url": str(tmp_path / "archive"), "spool_dir": str(tmp_path / "spool")}
    found = problems_of({"publish": {**publish, "signing_key_file": str(missing)}})
    assert found == {
        "publish.signing_key_file": f"signing key {missing}: cannot read: No such file or directory"
    }
    found = problems_of({"publish": {**publish, "signing_key_file": str(wrong)}})
    assert found["publish.signing_key_file"].endswith("not an Ed25519 key")
    assert "PRIVATE KEY" not in found["publish.signing_key_file"]
    s = parse_settings({"publish": {**publish, "signing_key_file": str(good)}}, path=Path("t.yaml"))
    assert s.signing_key == good


def test_a_signing_key_pasted_in_place_of_its_path_is_not_quoted(tmp_path: Path) -> None:
    """Reading the key at load must not print a key pasted into the field back."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519

    text = (
        ed25519.Ed25519PrivateKey.generate()
        .private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        .decode()
    )
    publish = {"url": str(tmp_path / "archive"), "signing_key_file": text}
    found = problems_of({"publish": publish})
    assert "not the path of a key file" in found["publish.signing_key_file"]
    assert "PRIVATE KEY" not in " ".join(found.values())
    assert text.splitlines()[1] not in " ".join(found.values())


def test_example_names_every_settings_field() -> None:
    """config/auditor.example.yaml "documents every field" (README): each field of every
    settings model appears in it as ``key:``, set or commented (dx29: source.velero_namespaces
    and thresholds.require_application_consistent were missing)."""
    import re
    import typing

    from pydantic import BaseModel

    from auditor.config import AuditSettings

    text = EXAMPLE.read_text()
    seen: set[type[BaseModel]] = set()
    missing: list[str] = []

    def models(annotation: Any) -> list[type[BaseModel]]:
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            return [annotation]
        return [m for arg in typing.get_args(annotation) for m in models(arg)]

    def walk(model: type[BaseModel], path: str) -> None:
        if model in seen:
            return
        seen.add(model)
        for name, field in model.model_fields.items():
            key = field.alias or name
            if not re.search(rf"(^|[\s#-]){re.escape(key)}\s*:", text, re.M):
                missing.append(path + key)
            for sub in models(field.annotation):
                walk(sub, f"{path}{key}.")

    walk(AuditSettings, "")
    assert missing == []
