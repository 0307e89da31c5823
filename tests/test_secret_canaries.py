"""No artifact carries a secret: canaries planted in every secret-bearing field never come out.

Checked: the objects a source returns, report.json, every other format
``write_artifacts`` knows (HTML, PDF text, CSV, recovery cards: each runs as
soon as its writer exists), the ``collect`` export, the CLI's output and every
log record, in raw, base64, JSON-, HTML- and URL-escaped form.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from auditor.cli import main as cli
from auditor.config import AuditSettings
from auditor.pipeline import FORMATS, audit_data, dump_report_json, write_artifacts
from auditor.sources.directory import DirectorySource
from bench.generate import generate
from tests.canary_support import CORES, canary_objects, leaks, plant, scan_tree
from tests.conftest import AUDIT_AT


@pytest.fixture()
def canary_dir(tmp_path: Path) -> Path:
    root = tmp_path / "export"
    root.mkdir()
    (root / "cluster.yaml").write_text(yaml.safe_dump_all(canary_objects(), sort_keys=True))
    return root


def test_the_export_really_carries_every_canary(canary_dir: Path) -> None:
    found = leaks((canary_dir / "cluster.yaml").read_bytes())
    assert {d.split(" ")[0] for d in found} == set(CORES)


def test_source_output_holds_no_canary(canary_dir: Path) -> None:
    data = DirectorySource(canary_dir).collect()
    assert data.of("VirtualMachine"), data.problems
    assert leaks(json.dumps(data.objects, default=str)) == []
    assert leaks(json.dumps([p.to_dict() for p in data.problems])) == []


def test_report_json_holds_no_canary(canary_dir: Path) -> None:
    report = audit_data(DirectorySource(canary_dir).collect(), AuditSettings(), at=AUDIT_AT)
    assert report.vms and report.vms[0].name == "vm1"
    assert leaks(dump_report_json(report)) == []


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f != "json"])
def test_every_other_artifact_format_holds_no_canary(
    canary_dir: Path, tmp_path: Path, fmt: str
) -> None:
    report = audit_data(DirectorySource(canary_dir).collect(), AuditSettings(), at=AUDIT_AT)
    out = tmp_path / "out"
    paths = write_artifacts(report, out, [fmt])
    assert paths
    assert scan_tree(out) == {}


def test_collect_export_holds_no_canary(canary_dir: Path, tmp_path: Path) -> None:
    from auditor.sources.export import write_export

    out = tmp_path / "collected"
    write_export(DirectorySource(canary_dir).collect(), out)
    assert any(out.iterdir())
    assert scan_tree(out) == {}


def test_cli_run_output_and_logs_hold_no_canary(
    canary_dir: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    out = tmp_path / "out"
    caplog.set_level(logging.DEBUG)
    result = CliRunner().invoke(
        cli,
        [
            "run",
            "--from-dir",
            str(canary_dir),
            "--at",
            "2026-11-30T06:00:00Z",
            "--out",
            str(out),
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    assert leaks(result.output) == []
    assert leaks("\n".join(r.getMessage() + str(r.args) for r in caplog.records)) == []
    assert scan_tree(out) == {}


def test_broken_file_with_secrets_does_not_echo_them_in_problems(tmp_path: Path) -> None:
    # A YAML error message quotes the neighbourhood of the error; the secret must not be in it.
    root = tmp_path / "export"
    root.mkdir()
    lines = yaml.safe_dump_all(canary_objects(), sort_keys=True).splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.lstrip().startswith("userData:"))
    indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
    lines.insert(at, f"{indent}bad: [unclosed\n")
    (root / "virtualmachines.yaml").write_text("".join(lines))
    data = DirectorySource(root).collect()
    assert data.problems
    report = audit_data(data, AuditSettings(), at=AUDIT_AT)
    assert leaks(dump_report_json(report)) == []


def test_canaries_in_a_generated_estate_stay_out_of_report_json(tmp_path: Path) -> None:
    generate(tmp_path / "estate", 40, seed=5, vm_hook=plant)
    assert leaks((tmp_path / "estate" / "virtualmachines.yaml").read_bytes())
    report = audit_data(
        DirectorySource(tmp_path / "estate").collect(), AuditSettings(), at=AUDIT_AT
    )
    assert len(report.vms) == 40
    assert leaks(dump_report_json(report)) == []


def test_a_free_text_annotation_is_never_shown_in_a_report(
    canary_dir: Path, tmp_path: Path
) -> None:
    """An annotation under an innocent key ("corp.example/notes") is free text a user may
    have put a password in: reports show its key, never its value, while the ownership and
    KubeVirt keys they need stay readable (red team: report.json showed it verbatim)."""
    path = canary_dir / "cluster.yaml"
    docs = list(yaml.safe_load_all(path.read_text()))
    vm = next(d for d in docs if d["kind"] == "VirtualMachine")
    vm["metadata"]["annotations"]["corp.example/notes"] = "root login: root / Cq0NotesZx"
    vm["metadata"]["annotations"]["vm.kubevirt.io/os"] = "rhel9"
    path.write_text(yaml.safe_dump_all(docs, sort_keys=True))
    report = audit_data(DirectorySource(canary_dir).collect(), AuditSettings(), at=AUDIT_AT)
    shown = report.vms[0].annotations
    assert shown["corp.example/notes"] == "<redacted>" and shown["vm.kubevirt.io/os"] == "rhel9"
    out = tmp_path / "out"
    write_artifacts(report, out, list(FORMATS))
    assert not [p for p in out.rglob("*") if p.is_file() and b"Cq0NotesZx" in p.read_bytes()]


def test_an_endpoint_is_shown_without_its_credentials() -> None:
    """A kubeconfig server URL (or any endpoint) may carry user:password@ or a token in its
    query: reports and messages show scheme, host, port and path only (red team)."""
    from auditor.redact import shown_url

    assert shown_url("http://admin:pw@127.0.0.1:34391") == "http://127.0.0.1:34391"
    assert shown_url("https://k8s.example.com:6443/?token=x") == "https://k8s.example.com:6443/"
    assert shown_url("https://u:p@[fd00::1]:6443/api#frag") == "https://[fd00::1]:6443/api"


def test_a_label_value_under_an_unknown_key_is_never_shown_in_a_report(
    canary_dir: Path, tmp_path: Path
) -> None:
    """A label value fits a password or token (63 characters of [A-Za-z0-9._-]): reports
    show it only under Kubernetes', KubeVirt's, Velero's or ownership keys and keys a
    Schedule's selector names; under any other key it is ``<redacted>`` (fz27: report.json,
    report.html and the published copies showed ``corp.example/note: <password>``)."""
    path = canary_dir / "cluster.yaml"
    docs = list(yaml.safe_load_all(path.read_text()))
    vm = next(d for d in docs if d["kind"] == "VirtualMachine")
    vm["metadata"]["labels"].update(
        {"corp.example/note": "Cq0LabelNoteZx", "app.kubernetes.io/name": "shop", "tier": "db"}
    )
    schedule = next(d for d in docs if d["kind"] == "Schedule")
    selector = schedule["spec"]["template"].setdefault("labelSelector", {})
    selector.setdefault("matchExpressions", []).append({"key": "backup", "operator": "Exists"})
    vm["metadata"]["labels"]["backup"] = "nightly"
    path.write_text(yaml.safe_dump_all(docs, sort_keys=True))
    report = audit_data(DirectorySource(canary_dir).collect(), AuditSettings(), at=AUDIT_AT)
    shown = report.vms[0].labels
    assert shown["corp.example/note"] == "<redacted>"
    assert (shown["app.kubernetes.io/name"], shown["tier"], shown["backup"]) == (
        "shop",
        "db",
        "nightly",
    )
    out = tmp_path / "out"
    write_artifacts(report, out, list(FORMATS))
    assert (out / "report.json").is_file() and (out / "report.html").is_file()
    assert not [p for p in out.rglob("*") if p.is_file() and b"Cq0LabelNoteZx" in p.read_bytes()]


@pytest.mark.parametrize(
    "source",
    [
        {"sysprep": "<AdministratorPassword>Cq0SysTextZx</AdministratorPassword>"},
        {"sysprep": [{"unattend": "<AdministratorPassword>Cq0SysListZx</AdministratorPassword>"}]},
        {"cloudInitNoCloud": "#cloud-config\npassword: Cq0CiTextZx\n"},
        {"cloudInitConfigDrive": ["#cloud-config\npassword: Cq0CdListZx\n"]},
        {"cloudInitNoCloud": {"userdata": "#cloud-config\npassword: Cq0CiTypoZx\n"}},
    ],
    ids=["sysprep-text", "sysprep-list", "nocloud-text", "configdrive-list", "nocloud-typo"],
)
def test_a_misshapen_cloud_init_or_sysprep_source_is_stripped_and_named(
    canary_dir: Path, tmp_path: Path, source: dict[str, object]
) -> None:
    """A cloud-init or sysprep source in the wrong shape (its text in place of the mapping,
    a list, a misspelt ``userdata``) is payload all the same: the source strips it, so the
    ``collect`` export and every artifact hold none of it, and the VM field is still named
    (fz27: the ``collect`` export copied it verbatim). KubeVirt's CloudInitNoCloudSource,
    CloudInitConfigDriveSource and SysprepSource hold only userData/networkData and Secret or
    ConfigMap references (kubevirt staging/src/kubevirt.io/api/core/v1/schema.go)."""
    secret = str(next(iter(source.values()))).split("Cq0", 1)[1].split("Zx", 1)[0]
    needle = f"Cq0{secret}Zx".encode()
    path = canary_dir / "cluster.yaml"
    docs = list(yaml.safe_load_all(path.read_text()))
    vm = next(d for d in docs if d["kind"] == "VirtualMachine")
    vm["spec"]["template"]["spec"]["volumes"].append({"name": "odd", **source})
    path.write_text(yaml.safe_dump_all(docs, sort_keys=True))
    assert needle in path.read_bytes()
    data = DirectorySource(canary_dir).collect()
    assert needle not in json.dumps(data.objects, default=str).encode()
    from auditor.sources.export import write_export

    write_export(data, tmp_path / "collected")
    assert not [p for p in (tmp_path / "collected").rglob("*") if needle in p.read_bytes()]
    report = audit_data(data, AuditSettings(), at=AUDIT_AT)
    out = tmp_path / "out"
    write_artifacts(report, out, ["json", "html", "csv", "cards"])
    assert not [p for p in out.rglob("*") if p.is_file() and needle in p.read_bytes()]
    if not isinstance(next(iter(source.values())), dict):
        fields = [p.field or "" for p in report.collection_problems]
        assert any("volumes[odd]" in f for f in fields), fields


@pytest.mark.parametrize("key", ["corp.example/pwd", "db-creds", "pw", "key"])
def test_a_short_credential_key_is_stripped_as_read(canary_dir: Path, key: str) -> None:
    """Label and annotation keys the credential pattern missed (``pwd``, ``creds``, a bare
    ``pw`` or ``key``): their values are stripped as files are read, so neither the
    ``collect`` export nor a report holds them (fz27)."""
    path = canary_dir / "cluster.yaml"
    docs = list(yaml.safe_load_all(path.read_text()))
    vm = next(d for d in docs if d["kind"] == "VirtualMachine")
    vm["metadata"]["labels"][key] = "Cq0ShortKeyLabelZx"
    vm["metadata"]["annotations"][key] = "Cq0ShortKeyAnnoZx"
    path.write_text(yaml.safe_dump_all(docs, sort_keys=True))
    data = DirectorySource(canary_dir).collect()
    (read,) = [o for o in data.of("VirtualMachine") if o["metadata"]["name"] == "vm1"]
    assert read["metadata"]["labels"][key] == read["metadata"]["annotations"][key] == "<redacted>"


def test_a_url_query_is_stripped_as_read(canary_dir: Path, tmp_path: Path) -> None:
    """A presigned URL's signature (``?X-Amz-Signature=``) or a registry token in a URL's
    query is a credential: a DataVolume's source URL, CDI's import endpoint annotation and a
    BackupStorageLocation's ``s3Url`` keep scheme, host and path, the query is stripped as
    read (fz27: the ``collect`` export copied them verbatim)."""
    path = canary_dir / "cluster.yaml"
    docs = list(yaml.safe_load_all(path.read_text()))
    dv = next(d for d in docs if d["kind"] == "DataVolume")
    dv["spec"]["source"] = {
        "http": {"url": "https://images.example.com/a.img?X-Amz-Signature=Cq0DvQueryZx"}
    }
    dv["metadata"]["annotations"]["cdi.kubevirt.io/storage.import.endpoint"] = (
        "docker://quay.example.com/img?token=Cq0CdiQueryZx"
    )
    bsl = next(d for d in docs if d["kind"] == "BackupStorageLocation")
    bsl["spec"]["config"]["s3Url"] = "https://minio.example.com:9000/?X-Amz-Credential=Cq0S3QueryZx"
    path.write_text(yaml.safe_dump_all(docs, sort_keys=True))
    data = DirectorySource(canary_dir).collect()
    from auditor.sources.export import write_export

    write_export(data, tmp_path / "collected")
    found = [
        p.name
        for p in (tmp_path / "collected").rglob("*")
        if p.is_file() and b"QueryZx" in p.read_bytes()
    ]
    assert found == []
    (read,) = data.of("BackupStorageLocation")
    assert read["spec"]["config"]["s3Url"] == "https://minio.example.com:9000/?<redacted>"


@pytest.mark.parametrize("command", ["run", "validate-config"])
def test_a_key_pasted_in_place_of_its_file_is_refused_unquoted(
    canary_dir: Path, tmp_path: Path, command: str
) -> None:
    """``publish.signing_key_file`` holding the PEM key itself (pasted instead of a path):
    ``run`` printed it back in "signing key -----BEGIN PRIVATE KEY-----...: cannot read" and
    ``validate-config`` called the file valid (fz27). Refused at load, naming the field and
    quoting nothing."""
    core = "Cq0PemKeyZx"
    config = tmp_path / "auditor.yaml"
    pem = f"-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEI{core}AAAAAAAAAAAAAAAAAAAAAAAA\n-----END PRIVATE KEY-----\n"
    config.write_text(
        yaml.safe_dump({"publish": {"url": str(tmp_path / "pub"), "signing_key_file": pem}})
    )
    args = (
        ["validate-config", str(config)]
        if command == "validate-config"
        else ["run", "--from-dir", str(canary_dir), "--config", str(config)]
        + ["--at", "2026-11-30T06:00:00Z", "--out", str(tmp_path / "out"), "--format", "json"]
    )
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert "publish.signing_key_file: holds key text, not the path of a key file" in result.output
    assert core not in result.output
    assert not [
        p
        for p in tmp_path.rglob("*")
        if p.is_file() and p != config and core.encode() in p.read_bytes()
    ]


def test_credentials_pasted_in_place_of_their_file_are_refused_unquoted(tmp_path: Path) -> None:
    """``backup_storage.locations.<bsl>.credentials_file`` holding the credentials themselves:
    validate-config printed them back in "file [default] aws_secret_access_key=... does not
    exist" (fz27). Refused, naming the field and quoting nothing."""
    core = "Cq0CredFileZx"
    config = tmp_path / "auditor.yaml"
    text = f"[default]\naws_access_key_id = AKIAEXAMPLE\naws_secret_access_key = {core}\n"
    config.write_text(
        yaml.safe_dump({"backup_storage": {"locations": {"default": {"credentials_file": text}}}})
    )
    result = CliRunner().invoke(cli, ["validate-config", str(config)])
    assert result.exit_code == 2, result.output
    assert "credentials_file: holds PEM or credentials text, not a file path" in result.output
    assert core not in result.output


def test_a_restore_target_namespace_label_value_is_never_shown(tmp_path: Path) -> None:
    """RR-RST-002's evidence lists the labels of the namespace a drill restored into; a value
    under an unknown key there is ``<redacted>`` as on the VM (fz27: report.json showed it)."""
    from tests.test_evidence_gaps import _audit, _docs

    docs = _docs("RR-RST-002/fail-drill-clones-mac-and-uuid.yaml")
    docs.append(
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {
                "name": "app-drill",
                "uid": "ns-app-drill",
                "labels": {
                    "kubernetes.io/metadata.name": "app-drill",
                    "corp.example/note": "Cq0NsLabelZx",
                },
            },
        }
    )
    report = _audit(tmp_path / "r", docs)
    (vm,) = report["vms"]
    (rst,) = [f for f in vm["findings"] if f["check_id"] == "RR-RST-002"]
    assert rst["evidence"]["target_namespace_labels"] == {
        "kubernetes.io/metadata.name": "app-drill",
        "corp.example/note": "<redacted>",
    }
    assert "Cq0NsLabelZx" not in json.dumps(report)
