"""Standing code-quality gates: mypy --strict, ruff lint and format, the import-layer contract."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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


def test_layers_import_only_downwards() -> None:
    """The import-linter contract in ``.importlinter``: cli | service -> pipeline -> publish |
    report -> envelope -> engine -> checks -> inventory -> sources -> config -> models; and
    renderers, the envelope model and the recovery card never import checks or the engine."""
    lint = subprocess.run(
        [str(Path(sys.executable).parent / "lint-imports"), "--no-cache"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert lint.returncode == 0, lint.stdout + lint.stderr
    assert "Contracts: 2 kept, 0 broken." in lint.stdout


def test_readme_names_every_check_of_the_catalog() -> None:
    """The README's check table lists the whole catalog (a new check is documented there)."""
    import re

    from auditor.checks import CATALOG

    text = (Path(__file__).parent.parent / "README.md").read_text()
    table = text[text.index("| family | checks") :].split("\n\n", 1)[0]
    named: set[str] = set()
    for row in table.splitlines()[2:]:
        family = None
        for m in re.finditer(r"RR-([A-Z]+)-(\d{3})|(?<![-\d])(\d{3})(?!\d)", row):
            if m.group(1):
                family = m.group(1)
                named.add(f"RR-{family}-{m.group(2)}")
            elif family:
                named.add(f"RR-{family}-{m.group(3)}")
    assert named == set(CATALOG)
