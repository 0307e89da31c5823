#!/usr/bin/env bash
# Set up everything the auditor needs on a fresh Debian/Ubuntu machine: OS libraries for
# WeasyPrint (Pango, fonts), a virtualenv in .venv and the package itself.
# Usage: scripts/setup.sh [--test]   (--test adds the test tools and test-only OS packages)
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
for pkg in libpango-1.0-0 libpangoft2-1.0-0 fonts-dejavu-core; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [[ "${1:-}" == "--test" ]]; then
  for pkg in poppler-utils chromium; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
  done
fi
if ((${#need[@]})); then
  SUDO=""; [[ $(id -u) -eq 0 ]] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
[[ -x .venv/bin/python ]] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
# The tested dependency versions (scripts/constraints.sh; the Containerfile installs the same):
# without them a fresh install takes whatever is newest that day.
pins=()
[[ -f constraints.txt ]] && pins=(-c constraints.txt)
if [[ "${1:-}" == "--test" ]]; then
  .venv/bin/python -m pip install -q ${pins[@]+"${pins[@]}"} -e '.[test]'
else
  .venv/bin/python -m pip install -q ${pins[@]+"${pins[@]}"} -e .
fi
for extra in .ci/setup-*.sh; do
  [[ -e "$extra" && "${1:-}" == "--test" ]] && bash "$extra"
done
exit 0
