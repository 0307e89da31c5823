"""The expected verdicts of each shared corpus, read from ``tests/answers/<corpus>.yaml``.

One answer file per corpus; tests ask it for readiness counts, VM counts, single findings
and platform statuses instead of writing the numbers down again.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml

from auditor.models import Readiness

ANSWERS = Path(__file__).resolve().parent / "answers"


@dataclass(frozen=True)
class Answers:
    """Expected verdicts of one corpus.

    ``readiness``: ``namespace/name`` -> readiness of every VM; ``findings``:
    ``(namespace/name, check id)`` -> ``(status, severity)``; ``platform``: check id -> status.
    """

    audit_at: str
    cluster_name: str
    readiness: dict[str, str]
    findings: dict[tuple[str, str], tuple[str, str]]
    platform: dict[str, str]

    @property
    def vm_count(self) -> int:
        """How many VMs the corpus holds."""
        return len(self.readiness)

    @property
    def summary(self) -> dict[str, int]:
        """report.json's ``summary.readiness``: every state, zeros included."""
        counts = Counter(self.readiness.values())
        return {state.value: counts[state.value] for state in Readiness}

    def summary_line(self) -> str:
        """The counts as ``auditor run`` prints them: ``READY 2, AT_RISK 2, ...``."""
        return ", ".join(f"{state} {n}" for state, n in self.summary.items())


@cache
def answers(corpus: str) -> Answers:
    """The answers of ``corpus`` (e.g. ``cluster-export``).

    Raises:
        FileNotFoundError: no ``tests/answers/<corpus>.yaml``.
    """
    raw = yaml.safe_load((ANSWERS / f"{corpus}.yaml").read_text(encoding="utf-8"))
    return Answers(
        audit_at=raw["audit_at"],
        cluster_name=raw["cluster_name"],
        readiness=dict(raw["readiness"]),
        findings={
            (vm, check_id): (status, severity)
            for vm, checks in raw["findings"].items()
            for check_id, (status, severity) in checks.items()
        },
        platform=dict(raw["platform"]),
    )
