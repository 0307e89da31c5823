"""``python -m auditor``: the same CLI as the ``auditor`` script."""

from __future__ import annotations

from auditor.cli import entry

if __name__ == "__main__":
    entry()
