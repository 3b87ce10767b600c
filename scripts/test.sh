#!/usr/bin/env bash
# One command: set up, start the services the tests need (PostGIS, headless Chromium), run all tests
# (including executing every notebook in notebooks/).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
if [ -f scripts/browser_deps.sh ]; then bash scripts/browser_deps.sh; fi
if [ -f scripts/pdf_deps.sh ]; then bash scripts/pdf_deps.sh; fi
# Debian's QGIS for tests/test_qgis.py (opens results.gpkg with QGIS's own Python, headless)
if [ -f scripts/qgis_deps.sh ]; then bash scripts/qgis_deps.sh; fi
if [ -f scripts/postgis.sh ]; then
  # prints `export GEOCONSTRAINTS_PG_URL=...`
  eval "$(bash scripts/postgis.sh)"
fi
# both cores (pytest-xdist; each test file stays on one worker, so a module's fixtures are built once);
# GC_TEST_WORKERS=0 runs in this process, one test at a time
python -m pytest -q -p no:cacheprovider --durations=30 -n "${GC_TEST_WORKERS:-2}" --dist loadfile "$@"
