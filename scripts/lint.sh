#!/usr/bin/env bash
# Lint and type-check: ruff on everything, mypy on the package.
set -euo pipefail
cd "$(dirname "$0")/.."
. .venv/bin/activate
python -m pip install -q -e ".[dev]"
ruff check geoconstraints tests scripts benchmarks
mypy geoconstraints --ignore-missing-imports
