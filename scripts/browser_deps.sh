#!/usr/bin/env bash
# Install what the browser tests (tests/test_browser.py) need; safe to run again (idempotent).
#   - Debian's chromium and chromium-driver (apt), when missing;
#   - selenium in the active Python environment, when missing (it is also in the `test` extra);
#   - Leaflet 1.9 from the npm registry into .cache/npm (used to refresh/verify the copy that the
#     package ships in geoconstraints/output/assets/leaflet/; the tests do not download anything).
# Usage: bash scripts/browser_deps.sh        (CI runs it before pytest)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

have_browser() {
    { command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; } &&
        { command -v chromedriver >/dev/null 2>&1 || [ -x /usr/lib/chromium/chromedriver ]; }
}

if ! have_browser; then
    if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=""; fi
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get -o DPkg::Lock::Timeout=600 update -q
    $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends \
        chromium chromium-driver fonts-dejavu-core
fi
have_browser || { echo "browser_deps.sh: chromium/chromedriver still missing after apt-get" >&2; exit 1; }

PY="${PYTHON:-python3}"
if ! "$PY" -c "import selenium" >/dev/null 2>&1; then
    "$PY" -m pip install -q "selenium>=4.15"
fi

# Leaflet: the package ships its own copy (assets/leaflet); the npm copy is only a cross-check,
# so a failure here warns and does not stop the tests.
npm_leaflet="$here/.cache/npm/node_modules/leaflet/dist/leaflet.js"
if command -v npm >/dev/null 2>&1; then
    if [ ! -f "$npm_leaflet" ]; then
        npm install --silent --no-audit --no-fund --prefix "$here/.cache/npm" leaflet@1.9 >/dev/null ||
            echo "browser_deps.sh: npm install leaflet@1.9 failed; using the shipped copy" >&2
    fi
    if [ -f "$npm_leaflet" ] && ! cmp -s "$npm_leaflet" "$here/geoconstraints/output/assets/leaflet/leaflet.js"; then
        echo "browser_deps.sh: note: npm's leaflet.js differs from geoconstraints/output/assets/leaflet (newer 1.9.x?)" >&2
    fi
else
    echo "browser_deps.sh: npm not found; using the Leaflet copy shipped in geoconstraints/output/assets" >&2
fi
echo "browser_deps.sh: chromium $(chromium --version 2>/dev/null || true); selenium ok"
