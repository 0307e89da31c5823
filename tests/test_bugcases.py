"""The shared bug cases and fuzz cases (``../shared/corpus/{bugcases,fuzzcases}``) give their expected verdicts.

Each case is a small export built around one public bug report; ``expected.json`` holds the VM,
the allowed readiness values, the check families that must FAIL or ERROR and optionally a
text the VM's findings must mention. The project's own fixtures
(``tests/fixtures/checks/RR-BKP-*``, ``RR-STG-*``) cover the same rules on a fresh clone.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from auditor.config import AuditSettings
from auditor.pipeline import audit_data
from auditor.sources.directory import DirectorySource
from tests.conftest import AUDIT_AT, find_corpus, report_doc


def _cases() -> list[Path]:
    root = find_corpus() / "bugcases"  # skips this module where ../shared is absent
    return sorted(p for p in root.iterdir() if (p / "expected.json").is_file())


CASES = _cases()


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_bug_case_verdict(case: Path) -> None:
    expected = json.loads((case / "expected.json").read_text())
    report = report_doc(
        audit_data(DirectorySource(case / "export").collect(), AuditSettings(), at=AUDIT_AT)
    )
    ns, name = expected["vm"].split("/")
    vm = next(v for v in report["vms"] if (v["namespace"], v["name"]) == (ns, name))
    assert vm["readiness"] in expected["readiness"], [
        (f["check_id"], f["status"], f["message"]) for f in vm["findings"]
    ]
    failing = {
        f["check_id"].split("-")[1] for f in vm["findings"] if f["status"] in ("FAIL", "ERROR")
    }
    assert set(expected.get("families", [])) <= failing
    if "mention" in expected:
        text = " ".join(f["message"] for f in vm["findings"] if f["status"] in ("FAIL", "ERROR"))
        assert expected["mention"].lower() in text.lower()


def test_bug_cases_present_when_corpus_is() -> None:
    root = find_corpus()
    assert len(CASES) >= 10, f"expected the 10 listed bug cases under {root / 'bugcases'}"


def test_live_path_gives_the_directory_verdicts(tmp_path: Path) -> None:
    """Each bug case served by the loopback API server audits to the same verdicts."""
    from tests.live_support import serve

    for case in CASES:
        root = case / "export"
        direct = report_doc(
            audit_data(DirectorySource(root).collect(), AuditSettings(), at=AUDIT_AT)
        )
        (tmp_path / case.name).mkdir()
        with serve(tmp_path / case.name, root=root) as live:
            over_http = report_doc(audit_data(live.collect(), AuditSettings(), at=AUDIT_AT))

        def verdicts(report: dict[str, Any]) -> dict[str, tuple[str, list[str]]]:
            return {
                f"{v['namespace']}/{v['name']}": (
                    v["readiness"],
                    sorted(f"{f['check_id']}={f['status']}" for f in v["findings"]),
                )
                for v in report["vms"]
            }

        assert verdicts(over_http) == verdicts(direct), case.name


FUZZ = sorted(p for p in (find_corpus() / "fuzzcases").iterdir() if (p / "expected.json").is_file())


@pytest.mark.parametrize("case", FUZZ, ids=lambda p: p.name)
def test_fuzz_case_verdict_and_named_problem(case: Path) -> None:
    """A malformed copy of the shared export never improves the verdict and names the object."""
    expected = json.loads((case / "expected.json").read_text())
    report = report_doc(
        audit_data(DirectorySource(case / "export").collect(), AuditSettings(), at=AUDIT_AT)
    )
    ns, name = expected["vm"].split("/")
    vm = next(v for v in report["vms"] if (v["namespace"], v["name"]) == (ns, name))
    assert vm["readiness"] in expected["readiness"]
    failing = {
        f["check_id"].split("-")[1] for f in vm["findings"] if f["status"] in ("FAIL", "ERROR")
    }
    assert set(expected.get("families", [])) <= failing
    mentions = expected.get("problem_mentions", [])
    problems = json.dumps(report["collection_problems"])
    for text in [mentions] if isinstance(mentions, str) else mentions:
        assert text in problems, (text, report["collection_problems"])
    assert report["run"]["complete"] is False
