#!/usr/bin/env bash
# Install what the PDF outputs and their tests need; safe to run again (idempotent):
#   - Debian's gdal-bin: gdalinfo / gdal_translate with a PDF driver that READS geospatial PDFs
#     (the GDAL inside the rasterio and pyogrio wheels can write PDFs but not read them), for
#     tests/test_siteplan.py;
#   - Debian's poppler-utils: pdftotext, pdfinfo, pdftoppm (tests/test_siteplan.py, test_report_pdf.py);
#   - Debian's pango (libpango-1.0-0, libpangoft2-1.0-0) and DejaVu fonts: WeasyPrint, a Python
#     dependency, lays out report.pdf with them (it is a wheel; pango is the one system library).
# Usage: bash scripts/pdf_deps.sh        (scripts/test.sh runs it before pytest)
set -euo pipefail

have_pango() {
    { ldconfig -p 2>/dev/null || true; } | grep -q "libpangoft2-1.0.so.0" &&
        { ldconfig -p 2>/dev/null || true; } | grep -q "libpango-1.0.so.0"
}

have_tools() {
    command -v gdalinfo >/dev/null 2>&1 && command -v gdal_translate >/dev/null 2>&1 &&
        command -v pdftotext >/dev/null 2>&1 && command -v pdfinfo >/dev/null 2>&1 && have_pango
}

if ! have_tools; then
    if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=""; fi
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get -o DPkg::Lock::Timeout=600 update -q
    $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends gdal-bin poppler-utils \
        libpango-1.0-0 libpangoft2-1.0-0 fonts-dejavu-core
fi
have_tools || { echo "pdf_deps.sh: gdalinfo/gdal_translate/pdftotext/pango still missing after apt-get" >&2; exit 1; }
formats="$(gdalinfo --formats)"
grep -q "PDF -raster.*(r" <<<"$formats" || { echo "pdf_deps.sh: this gdalinfo cannot read PDF" >&2; exit 1; }
PY="${PYTHON:-python3}"
if "$PY" -c "import weasyprint" >/dev/null 2>&1; then
    "$PY" -c "import weasyprint; weasyprint.HTML(string='<p>ok</p>').write_pdf()" >/dev/null ||
        { echo "pdf_deps.sh: WeasyPrint cannot lay out a page (pango?)" >&2; exit 1; }
fi
echo "pdf_deps.sh: $(gdalinfo --version); $(pdftotext -v 2>&1 | head -n 1); pango ok"
