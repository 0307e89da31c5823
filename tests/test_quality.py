"""Standing code-quality gates: mypy --strict on the package, ruff lint and format."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=REPO, capture_output=True, text=True, timeout=600
    )


def test_mypy_strict_on_package() -> None:
    result = _run("mypy")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_lint_and_format() -> None:
    lint = _run("ruff", "check", "auditor", "tests", "bench")
    assert lint.returncode == 0, lint.stdout
    fmt = _run("ruff", "format", "--check", "auditor", "tests", "bench")
    assert fmt.returncode == 0, fmt.stdout
