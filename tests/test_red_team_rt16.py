"""Red-team round rt16: public bug reports swept against the auditor, each state a report
shows in cluster objects held to the finding its evidence allows, and the healthy
counterpart held to its own.

Each test takes a fixture of the check catalog, changes one thing, and asserts the finding
that must follow: never a finding better than the evidence, never a false alarm on a healthy
VM.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.test_evidence_gaps import _complete, _docs, _finding, _of

Docs = list[dict[str, Any]]

#: vm1 runs with a connected guest agent; two daily Backups (the newest 2026-11-30) hold it
#: and its disks: RR-BKP-011 PASS.
AGENT = "RR-BKP-011/pass-agent-connected.yaml"


def _with_hook_status(hook_status: object, newest_only: bool = True) -> Docs:
    docs = _docs(AGENT)
    for backup in _of(docs, "Backup"):
        if newest_only and backup["metadata"]["name"] != "daily-20261130":
            continue
        backup["status"]["hookStatus"] = hook_status
    return docs


# -- a backup whose freeze hook failed -------------------------------------------------------


@pytest.mark.parametrize(
    ("hook_status", "count"),
    [
        ({"hooksAttempted": 2, "hooksFailed": 1}, 1),
        ({"hooksAttempted": 2, "hooksFailed": 2}, 2),
        ({"hooksFailed": "1"}, None),  # set but not a count: unknown, never "none failed"
        ("junk", None),
    ],
)
def test_a_failed_freeze_hook_in_the_newest_backup_is_no_frozen_backup(
    tmp_path: Path, hook_status: object, count: int | None
) -> None:
    """kubevirt-velero-plugin#68 (https://github.com/kubevirt/kubevirt-velero-plugin/issues/68)
    and kubevirt#9423 (https://github.com/kubevirt/kubevirt/issues/9423): virt-freezer, the
    pre-backup hook KubeVirt puts on every virt-launcher pod, fails on a paused VM or a guest
    agent that stops answering; with the hook's onError Continue the Backup still ends
    Completed over unfrozen disks, counting the failure in ``status.hookStatus.hooksFailed``
    (velero pkg/apis/velero/v1/backup_types.go HookStatus). RR-BKP-011 passed on the
    connected agent alone ("backups can freeze its filesystems")."""
    report = _complete(tmp_path, AGENT, _with_hook_status(hook_status))
    finding = _finding(report, "RR-BKP-011")
    assert (finding["status"], finding["severity"]) == ("FAIL", "info"), finding["message"]
    assert "daily-20261130" in finding["message"]
    assert finding["evidence"]["hooks_failed"] == count
    assert finding["basis"] == "inferred"


def test_a_failed_hook_only_in_an_older_backup_leaves_the_newest_frozen(tmp_path: Path) -> None:
    """Only the newest usable backup, the one a restore takes, is judged: a hook that failed
    two days ago and succeeded since is no finding."""
    docs = _with_hook_status({"hooksAttempted": 2, "hooksFailed": 1}, newest_only=False)
    newest = next(b for b in _of(docs, "Backup") if b["metadata"]["name"] == "daily-20261130")
    newest["status"]["hookStatus"] = {"hooksAttempted": 2}
    finding = _finding(_complete(tmp_path, AGENT, docs), "RR-BKP-011")
    assert finding["status"] == "PASS", finding["message"]


@pytest.mark.parametrize(
    "hook_status",
    [None, {}, {"hooksAttempted": 2}, {"hooksAttempted": 2, "hooksFailed": 0}],
)
def test_hooks_that_all_ran_keep_the_frozen_backup(tmp_path: Path, hook_status: object) -> None:
    """Healthy: no hookStatus (Velero before v1.11, or no hooks), or hooks attempted with none
    failed (``hooksFailed`` is omitempty): RR-BKP-011 keeps its PASS."""
    docs = _with_hook_status(hook_status)
    if hook_status is None:
        for backup in _of(docs, "Backup"):
            backup["status"].pop("hookStatus", None)
    report = _complete(tmp_path, AGENT, docs)
    finding = _finding(report, "RR-BKP-011")
    assert finding["status"] == "PASS", finding["message"]
    assert next(v for v in report["vms"] if v["name"] == "vm1")["readiness"] != "UNKNOWN"


def test_the_fix_for_a_failed_hook_reads_the_backup_s_hook_log(tmp_path: Path) -> None:
    """The remediation names the backup whose hook failed, not "install the guest agent"
    (the agent is connected)."""
    docs = _with_hook_status({"hooksAttempted": 2, "hooksFailed": 1})
    finding = _finding(_complete(tmp_path, AGENT, docs), "RR-BKP-011")
    assert "velero backup logs daily-20261130" in finding["remediation"]
    assert "qemu-guest-agent" not in finding["remediation"]
