"""scripts/setup.sh installs the tested versions: ``pip install -c constraints.txt`` (ux19).

Run in a scratch copy with a stand-in ``.venv/bin/python`` that records its arguments and a
``dpkg`` that says every OS package is present: nothing is installed, nothing is fetched.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO


def _setup(tmp_path: Path, *args: str, constraints: bool = True) -> list[str]:
    root = tmp_path / "repo"
    (root / "scripts").mkdir(parents=True)
    shutil.copy(REPO / "scripts" / "setup.sh", root / "scripts" / "setup.sh")
    if constraints:
        shutil.copy(REPO / "constraints.txt", root / "constraints.txt")
    log = tmp_path / "pip.log"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for path, body in (
        (root / ".venv" / "bin" / "python", f'echo "$*" >> {log}\n'),
        (bin_dir / "dpkg", "exit 0\n"),
    ):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("#!/bin/sh\n" + body)
        path.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    done = subprocess.run(
        ["bash", str(root / "scripts" / "setup.sh"), *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return log.read_text().splitlines()


@pytest.mark.parametrize(("args", "target"), [((), "."), (("--test",), ".[test]")])
def test_setup_installs_with_the_repository_constraints(
    tmp_path: Path, args: tuple[str, ...], target: str
) -> None:
    assert _setup(tmp_path, *args) == [
        "-m pip install -q --upgrade pip",
        f"-m pip install -q -c constraints.txt -e {target}",
    ]


def test_setup_without_constraints_installs_unpinned(tmp_path: Path) -> None:
    assert _setup(tmp_path, constraints=False)[-1] == "-m pip install -q -e ."
