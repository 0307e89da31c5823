#!/usr/bin/env bash
# Install and audit the bundled example cluster (no cluster or cloud account needed).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
exec .venv/bin/auditor run --from-dir examples/small-cluster --at 2026-11-30T06:00:00Z \
  --cluster-name example-cluster --out example-out "$@"
