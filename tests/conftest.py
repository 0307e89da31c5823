"""Shared test fixtures: where the read-only shared corpus lives, and an audit helper."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
AUDIT_AT = datetime(2026, 11, 30, 6, 0, 0, tzinfo=UTC)


def find_corpus() -> Path:
    """Locate ``shared/corpus`` beside the repository (or any parent of it)."""
    for parent in REPO.parents:
        candidate = parent / "shared" / "corpus"
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("shared/corpus not found beside the repository")


@pytest.fixture(scope="session")
def corpus() -> Path:
    """Path of ``../shared/corpus``."""
    return find_corpus()


@pytest.fixture(scope="session")
def export_report(corpus: Path) -> dict:  # type: ignore[type-arg]
    """report.json of the shared example cluster export at its audit time."""
    from auditor.config import AuditSettings
    from auditor.pipeline import run_audit
    from auditor.sources.directory import DirectorySource

    data = DirectorySource(corpus / "cluster-export", cluster_name="ocp-prod-east").collect()
    return run_audit(data, AuditSettings(), at=AUDIT_AT)
