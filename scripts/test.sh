#!/usr/bin/env bash
# Install everything (OS packages, Python deps, test tools) and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --test
exec .venv/bin/python -m pytest -q "$@"
