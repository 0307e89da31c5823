"""When the newest restore point may be deleted, with where that time comes from (trial
ux36: a compliance reader of the report found the RPO and the age, but not how long the
newest copy is kept).

report.json ``backup.newest_usable.expires`` / ``expires_from`` (schema 1.4), vms.csv
``backup_expires`` / ``backup_expires_from``, and "newest kept until <UTC>" in the HTML and
PDF VM sections. Velero's ``status.expiration`` ("when this Backup is eligible for
garbage-collection") is observed; without it, creation + ``spec.ttl`` is computed and
labelled so (velero pkg/apis/velero/v1/backup_types.go).
"""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import yaml

from tests.conftest import REPO, invoke_run

EXAMPLE = REPO / "examples" / "small-cluster"


def _export(tmp: Path) -> Path:
    """The example with billing-daily-20261130 (newest for billing/*) lacking
    status.expiration, and web-nightly-20261130 (newest for web/*) lacking it and its TTL."""
    export = shutil.copytree(EXAMPLE, tmp / "export")
    path = export / "backups.yaml"
    doc = yaml.safe_load(path.read_text())
    for b in doc["items"]:
        if b["metadata"]["name"] in ("billing-daily-20261130", "web-nightly-20261130"):
            del b["status"]["expiration"]
        if b["metadata"]["name"] == "web-nightly-20261130":
            del b["spec"]["ttl"]
    path.write_text(yaml.safe_dump(doc))
    return export


def test_expiry_is_stated_with_its_source_in_json_csv_and_html(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = invoke_run(_export(tmp_path), out, "--format", "json,csv,html")
    assert result.exit_code == 0, result.output
    vms = {
        v["name"]: v["backup"]["newest_usable"]
        for v in json.loads((out / "report.json").read_text())["vms"]
    }
    # creationTimestamp 2026-11-30T01:00:00Z + ttl 168h
    assert (vms["billing-db"]["expires"], vms["billing-db"]["expires_from"]) == (
        "2026-12-07T01:00:00Z",
        "spec.ttl",
    )
    assert (vms["web-api"]["expires"], vms["web-api"]["expires_from"]) == (None, None)
    # lab-weekly-20261120 keeps its recorded expiration
    assert vms["lab-ephemeral"]["expires_from"] == "status.expiration"
    assert vms["lab-ephemeral"]["expires"] == "2026-12-20T03:00:00Z"
    rows = {r["vm"]: r for r in csv.DictReader(io.StringIO((out / "vms.csv").read_text()))}
    for name, newest in vms.items():
        assert rows[name]["backup_expires"] == (newest["expires"] or ""), name
        assert rows[name]["backup_expires_from"] == (newest["expires_from"] or ""), name
    page = (out / "report.html").read_text()
    assert "newest kept until 2026-12-07T01:00:00Z (computed from its TTL)" in page
    assert "1 restore point · newest kept until 2026-12-20T03:00:00Z<" in page  # no "points"
    assert "restore point · newest kept until" not in page.replace("1 restore point ·", "")
