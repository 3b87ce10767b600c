#!/usr/bin/env bash
# Install what tests/test_qgis.py needs; safe to run again (idempotent).
#   - Debian's QGIS (qgis-providers, python3-qgis) for Debian's own python3 (/usr/bin/python3), when
#     `from qgis.core import QgsApplication` does not import there yet. The test opens results.gpkg with
#     QGIS's Python in a subprocess (QT_QPA_PLATFORM=offscreen), never from the project's venv.
# Usage: bash scripts/qgis_deps.sh        (scripts/test.sh runs it before pytest)
set -euo pipefail

QPY="${GEOCONSTRAINTS_QGIS_PYTHON:-/usr/bin/python3}"

have_qgis() {
    [ -x "$QPY" ] && QT_QPA_PLATFORM=offscreen "$QPY" -c "from qgis.core import QgsApplication" >/dev/null 2>&1
}

if ! have_qgis; then
    if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=""; fi
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get -o DPkg::Lock::Timeout=600 update -q
    # python3-qgis pulls the QGIS core libraries; qgis-providers the OGR/GDAL data provider
    $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends \
        python3-qgis qgis-providers
fi
have_qgis || { echo "qgis_deps.sh: 'from qgis.core import QgsApplication' still fails with $QPY" >&2; exit 1; }
echo "qgis_deps.sh: QGIS $(QT_QPA_PLATFORM=offscreen "$QPY" -c 'from qgis.core import Qgis; print(Qgis.QGIS_VERSION)' 2>/dev/null) for $QPY"
