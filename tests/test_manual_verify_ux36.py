"""docs/publishing.md "Verify a run by hand": the documented jq / sha256sum / OpenSSL lines
verify a signed run folder of the example, and catch a changed artifact, an extra file and a
signature by another key (trial ux36: an auditor archiving evidence without the tool).

The lines are taken from the document itself, so the document cannot drift from what works.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO, invoke_run
from tests.test_verify import write_keys

EXAMPLE = REPO / "examples" / "small-cluster"
COMMENT = re.compile(r"\s+# .*$")  # a trailing comment would swallow the check after it
TOOLS = ("bash", "jq", "sha256sum", "openssl", "base64", "find", "diff")
pytestmark = pytest.mark.skipif(
    any(shutil.which(t) is None for t in TOOLS),
    reason=f"the manual verification needs {', '.join(TOOLS)} on PATH",
)


def _doc_lines() -> str:
    text = (REPO / "docs" / "publishing.md").read_text()
    section = text[text.index("## Verify a run by hand") :]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block is not None
    return block.group(1)


def _keys(tmp: Path, name: str) -> tuple[Path, Path]:
    """An Ed25519 key pair as PEM files (tests.test_verify's, without the key object)."""
    private, public, _ = write_keys(tmp, name)
    return private, public


def _check(run: Path, public: Path, sig: Path) -> subprocess.CompletedProcess[str]:
    script = (
        _doc_lines()
        .replace("cd out/run1", f"cd '{run}'")
        .replace("signing.pub.pem", f"'{public}'")
        .replace("/tmp/manifest.sig", f"'{sig}'")
        .replace("\\\n", " ")  # one line per command, each checked
    )
    return subprocess.run(
        [
            "bash",
            "-c",
            "set -uo pipefail\nrc=0\n"
            + "".join(COMMENT.sub("", line) + " || rc=1\n" for line in script.splitlines())
            + "exit $rc",
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def test_the_documented_lines_verify_a_signed_run_and_catch_tampering(tmp_path: Path) -> None:
    private, public = _keys(tmp_path, "signing")
    run = tmp_path / "run"
    result = invoke_run(
        EXAMPLE, run, "--cluster-name", "example-cluster", "--format", "json,csv",
        "--signing-key", str(private),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    sig = tmp_path / "manifest.sig"
    clean = _check(run, public, sig)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    manifest = json.loads((run / "manifest.json").read_text())
    for artifact in manifest["artifacts"]:
        assert f"{artifact['path']}: OK" in clean.stdout
    assert "Signature Verified Successfully" in clean.stdout
    key_id = json.loads((run / "manifest.json.sig").read_text())["key_id"]
    assert clean.stdout.strip().splitlines()[-1] == key_id
    # what the manifest seals agrees with report.json
    report = json.loads((run / "report.json").read_text())
    assert manifest["summary"]["readiness"] == report["summary"]["readiness"]
    assert manifest["run"]["id"] == report["run"]["id"]

    # another key: the signature check fails, the key id differs
    _, other = _keys(tmp_path, "other")
    wrong = _check(run, other, sig)
    assert wrong.returncode != 0 and "Signature Verified Successfully" not in wrong.stdout
    assert wrong.stdout.strip().splitlines()[-1] != key_id
    # an extra file, then a changed artifact
    (run / "notes.txt").write_text("added after the run\n")
    extra = _check(run, public, sig)
    assert extra.returncode != 0 and "> notes.txt" in extra.stdout
    (run / "notes.txt").unlink()
    (run / "vms.csv").write_text((run / "vms.csv").read_text().replace("READY", "READY "))
    changed = _check(run, public, sig)
    assert changed.returncode != 0 and "vms.csv: FAILED" in changed.stdout
