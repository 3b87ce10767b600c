"""results.gpkg opened by QGIS itself (issue 12 item 6): every layer loads valid, with its default
style from ``layer_styles`` applied and the renderer expected for it.

QGIS runs in a subprocess with Debian's python3 and its ``python3-qgis`` (installed by
``scripts/qgis_deps.sh``, which scripts/test.sh runs), headless (``QT_QPA_PLATFORM=offscreen``);
never inside the project's venv. ``GEOCONSTRAINTS_QGIS_PYTHON`` names another interpreter.
"""

from __future__ import annotations

import json
import os
import subprocess

import pyogrio
import pytest
from browser_util import make_synthetic_result
from catalogue import sample_gpkg

from geoconstraints import load_layers, load_rulebook, screen_parcels
from geoconstraints.output import styles, write_result
from geoconstraints.output.files import FINDINGS_LAYERS

QGIS_PYTHON = os.environ.get("GEOCONSTRAINTS_QGIS_PYTHON", "/usr/bin/python3")

PROBE = r'''
import faulthandler, json, os, sys
faulthandler.enable()
from osgeo import ogr
from qgis.core import Qgis, QgsApplication, QgsVectorLayer

app = QgsApplication([], False)
app.initQgis()
gpkg = sys.argv[1]
ds = ogr.Open(gpkg)
out = {"qgis": Qgis.QGIS_VERSION, "layers": {}}
for name in [ds.GetLayer(i).GetName() for i in range(ds.GetLayerCount())]:
    lyr = QgsVectorLayer(f"{gpkg}|layername={name}", name, "ogr")  # loads the default style, as QGIS does
    info = {"valid": lyr.isValid(), "features": lyr.featureCount(), "spatial": lyr.isSpatial(),
            "geometry": int(lyr.geometryType()) if lyr.isSpatial() else None,
            "crs": lyr.crs().authid() if lyr.isSpatial() else None}
    r = lyr.renderer() if lyr.isSpatial() else None
    if r is not None:
        info["renderer"] = r.type()
        if r.type() == "categorizedSymbol":
            info["attr"] = r.classAttribute()
            info["categories"] = {c.value(): [int(c.symbol().type()), c.symbol().color().name()] for c in r.categories()}
        elif r.type() == "singleSymbol":
            info["symbol"] = [int(r.symbol().type()), r.symbol().color().name()]
    out["layers"][name] = info
print(json.dumps(out))
sys.stdout.flush()
os._exit(0)  # QgsApplication.exitQgis() segfaults in QGIS 3.22 when run headless this way; nothing to save
'''

GEOM = {"point": 0, "line": 1, "polygon": 2}  # QgsWkbTypes.GeometryType and Qgis.SymbolType agree


def _open_in_qgis(gpkg, tmp_path) -> tuple[dict, str]:
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE)
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "XDG_RUNTIME_DIR": str(tmp_path)}
    env.pop("PYTHONPATH", None)
    try:
        done = subprocess.run([QGIS_PYTHON, str(probe), str(gpkg)], check=False, capture_output=True, text=True, env=env,
                              timeout=300, cwd=tmp_path, stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        pytest.fail(f"{QGIS_PYTHON} not found: run `bash scripts/qgis_deps.sh` (Debian's python3-qgis)")
    if done.returncode != 0 or not done.stdout.strip():
        pytest.fail(f"QGIS could not open {gpkg} with {QGIS_PYTHON} (run `bash scripts/qgis_deps.sh` if "
                    f"qgis.core is missing; exit {done.returncode}): {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr


def _status_colours(info: dict, family: str) -> None:
    assert info["renderer"] == "categorizedSymbol"
    cats = info["categories"]
    assert set(cats) == set(styles.STATUSES) | {""}
    for status, (sym, colour) in cats.items():
        assert sym == GEOM[family], (status, sym)
        want = styles.STATUS_COLORS.get(status, styles.STATUS_COLORS["not_evaluated"])
        assert colour.lower() == want.lower(), status


def test_qgis_draws_every_layer_of_a_run(tmp_path):
    result = make_synthetic_result(tmp_path / "in")
    written = write_result(result, tmp_path / "out", findings="all")
    gpkg = written["results.gpkg"]
    got, err = _open_in_qgis(gpkg, tmp_path)
    assert got["qgis"].startswith("3.")
    assert "may only be partially supported" not in err  # GeoPackage 1.2: no version warning
    layers = got["layers"]
    expect_names = {n for n, _ in pyogrio.list_layers(gpkg)}
    assert set(layers) == expect_names
    for name, info in layers.items():
        assert info["valid"], name
        assert info["features"] == pyogrio.read_info(gpkg, layer=name)["features"], name
    for family in ("point", "line", "polygon"):
        info = layers[FINDINGS_LAYERS[family]]
        assert info["spatial"] and info["geometry"] == GEOM[family] and info["crs"] == "EPSG:2261"
        assert info["attr"] == "status"
        _status_colours(info, family)
    assert layers["findings_nogeom"]["spatial"] is False and layers["findings_nogeom"]["features"] == 1
    # derived layers: one symbol each, of their geometry's type, in their style's colour
    for name, family, colour in (("grade_runs", "line", styles.LAYER_STYLES["grade_runs"].color),
                                 ("water_bars", "point", styles.LAYER_STYLES["water_bars"].fill),
                                 ("buffer_strips", "polygon", styles.LAYER_STYLES["buffer_strips"].fill),
                                 ("contours", "line", styles.LAYER_STYLES["contours"].color)):
        assert layers[name]["renderer"] == "singleSymbol", name
        sym, got = layers[name]["symbol"]
        assert (sym, got.lower()) == (GEOM[family], colour.lower()), name


def test_qgis_draws_a_screening_parcels_layer_by_worst_status(tmp_path):
    res = screen_parcels(load_layers(sample_gpkg(tmp_path)), load_rulebook("vestal"))
    written = write_result(res, tmp_path / "out")
    got, _ = _open_in_qgis(written["results.gpkg"], tmp_path)
    parcels = got["layers"]["parcels"]
    assert parcels["valid"] and parcels["features"] == 3 and parcels["geometry"] == GEOM["polygon"]
    assert parcels["attr"] == "worst_status"
    _status_colours(parcels, "polygon")
    # screen's default findings: only those needing a person; the empty layers still load, styled
    for family in ("point", "line"):
        info = got["layers"][FINDINGS_LAYERS[family]]
        assert info["valid"] and info["features"] == 0
        _status_colours(info, family)
    assert got["layers"]["sfha_overlaps"]["renderer"] == "singleSymbol"
