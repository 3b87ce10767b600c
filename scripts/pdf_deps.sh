#!/usr/bin/env bash
# Install what the site plan tests (tests/test_siteplan.py) need to read siteplan.pdf back with
# independent tools; safe to run again (idempotent):
#   - Debian's gdal-bin: gdalinfo / gdal_translate with a PDF driver that READS geospatial PDFs
#     (the GDAL inside the rasterio and pyogrio wheels can write PDFs but not read them);
#   - Debian's poppler-utils: pdftotext, pdfinfo, pdftoppm.
# Usage: bash scripts/pdf_deps.sh        (scripts/test.sh runs it before pytest)
set -euo pipefail

have_tools() {
    command -v gdalinfo >/dev/null 2>&1 && command -v gdal_translate >/dev/null 2>&1 &&
        command -v pdftotext >/dev/null 2>&1 && command -v pdfinfo >/dev/null 2>&1
}

if ! have_tools; then
    if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=""; fi
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get -o DPkg::Lock::Timeout=600 update -q
    $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends gdal-bin poppler-utils
fi
have_tools || { echo "pdf_deps.sh: gdalinfo/gdal_translate/pdftotext still missing after apt-get" >&2; exit 1; }
formats="$(gdalinfo --formats)"
grep -q "PDF -raster.*(r" <<<"$formats" || { echo "pdf_deps.sh: this gdalinfo cannot read PDF" >&2; exit 1; }
echo "pdf_deps.sh: $(gdalinfo --version); $(pdftotext -v 2>&1 | head -n 1)"
