#!/usr/bin/env bash
# One command: set up and run every capability on the bundled sample town.
#   bash scripts/demo.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
geoconstraints demo --out "${1:-demo-out}"
