"""Shared helpers for the scale, fuzz, secret-canary and hostile-data suites.

``good_objects()`` is a small export where VM ``app/vm1`` passes every backup
check (the RR-BKP-001 pass fixture); the fuzz suites mutate it. ``audit()``
runs it through the real source rules and pipeline. ``time_limit`` turns a
hang into a test failure.
"""

from __future__ import annotations

import copy
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from types import FrameType
from typing import Any

import yaml

from auditor.config import AuditSettings
from auditor.envelope import AuditReport
from auditor.pipeline import audit_data, dump_report_json
from auditor.sources.base import ClusterData, SourceInfo
from auditor.sources.directory import ingest_objects
from tests.conftest import AUDIT_AT, report_doc

GOOD_FIXTURE = Path(__file__).parent / "fixtures" / "checks" / "RR-BKP-001" / "pass.yaml"
GOOD_VM = ("app", "vm1")
#: Checks that judge backups; a Backup the auditor cannot trust must never make them PASS.
BACKUP_CHECKS = ("RR-BKP-001", "RR-BKP-002", "RR-BKP-003", "RR-BKP-004")


@cache
def _good() -> tuple[dict[str, Any], ...]:
    return tuple(d for d in yaml.safe_load_all(GOOD_FIXTURE.read_text()) if d)


def good_objects() -> list[dict[str, Any]]:
    """A fresh deep copy of the all-PASS export (one Namespace, VM app/vm1, its PVCs, backups...)."""
    return copy.deepcopy(list(_good()))


def collect_objects(objects: list[Any], origin: str = "fuzz.yaml") -> ClusterData:
    """Return ClusterData built from raw objects with the directory source's rules."""
    data = ClusterData(info=SourceInfo(type="directory", location="fuzz"))
    ingest_objects(data, [(origin, o) for o in objects])
    return data


def audit(objects: list[Any]) -> dict[str, Any]:
    """Run raw objects through the source rules and the pipeline; return report.json as a dict."""
    return report_doc(audit_data(collect_objects(objects), AuditSettings(), at=AUDIT_AT))


def statuses(report: dict[str, Any], vm: tuple[str, str] = GOOD_VM) -> dict[str, str]:
    """Return ``check_id -> status`` for one VM of a report (empty when the VM is absent)."""
    for entry in report["vms"]:
        if (entry["namespace"], entry["name"]) == vm:
            return {f["check_id"]: f["status"] for f in entry["findings"]}
    return {}


def strict_json(report: AuditReport | dict[str, Any]) -> bytes:
    """Serialise like report.json and prove it is strict JSON (no NaN/Infinity)."""
    import json

    if isinstance(report, AuditReport):
        raw = dump_report_json(report)
    else:
        raw = (json.dumps(report, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode()

    def _reject(token: str) -> None:
        raise AssertionError(f"report.json holds non-JSON constant {token}")

    json.loads(raw, parse_constant=_reject)
    return raw


def of_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    """Return the objects of one kind (the same dicts, for mutation)."""
    return [o for o in objects if o.get("kind") == kind]


class Hang(Exception):
    """Raised by :func:`time_limit` when the block runs too long."""


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Fail the block with :class:`Hang` after ``seconds`` of wall time (main thread only)."""

    def _alarm(signum: int, frame: FrameType | None) -> None:
        raise Hang(f"took more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def write_docs(path: Path, docs: list[Any]) -> Path:
    """Write ``docs`` as a multi-document YAML file and return its path."""
    path.write_text(yaml.safe_dump_all(docs, sort_keys=True), encoding="utf-8")
    return path
