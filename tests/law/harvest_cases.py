"""Hand-made timber-harvest plans for the law tests, in feet or in metres.

A plan is written in local feet (u east, v north) and placed either in EPSG:2261 (NY Central, US
survey feet, the working CRS of Vestal) or in EPSG:32618 (UTM 18N, metres), written to a
GeoPackage and read back with :func:`geoconstraints.load_layers`, so the loader's
reprojection is part of every test. A metre plan is checked in UTM 18N in international feet
(the same projection, so a distance of 91.44 m is 300 ft exactly; NY State Plane would stretch it
by the ratio of the two scale factors, about 3 in 10,000, and move a case that sits exactly on a
limit). DEMs are planes or piecewise planes written with rasterio in the same CRS (z in feet, or
in metres for the metre plan).

Local feet are US survey feet when placed in EPSG:2261 (the vector rules read the working CRS's
unit as the foot, as the toolkit does throughout: 2 parts in a million), except in plans with a
DEM (``exact=True``): grades and run lengths are converted exactly, so there the local feet are
international feet (u / 1.000002 US survey feet).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import rasterio
from affine import Affine
from pyproj import CRS
from shapely import affinity
from shapely.geometry.base import BaseGeometry

from geoconstraints.commands import check_harvest
from geoconstraints.io.layers import load_layers
from geoconstraints.result import Result
from geoconstraints.rulebook.loader import load_rulebook
from geoconstraints.units import M_PER_FT

NY_FT = "EPSG:2261"
UTM_M = "EPSG:32618"
UTM_FT = "+proj=utm +zone=18 +datum=WGS84 +units=ft +no_defs +type=crs"
"""UTM 18N in international feet: the working CRS of the metre plans."""
X0, Y0 = 964_988.0, 758_256.0
"""Vestal, NY in EPSG:2261 (US survey feet)."""
E0, N0 = 414_300.0, 4_658_900.0
"""Vestal, NY in UTM 18N (metres)."""
K_US = 1200 / 3937 / M_PER_FT
"""International feet per US survey foot (1.000002)."""
UNITS = ["ft", "m"]

Features = list[tuple[str, BaseGeometry, dict[str, Any]]]


def place(geom: BaseGeometry, units: str, exact: bool = False) -> BaseGeometry:
    """A geometry in local feet placed in the plan's CRS (see the module docstring)."""
    if units == "ft":
        g = affinity.scale(geom, 1 / K_US, 1 / K_US, origin=(0, 0)) if exact else geom
        return affinity.translate(g, X0, Y0)
    return affinity.translate(affinity.scale(geom, M_PER_FT, M_PER_FT, origin=(0, 0)), E0, N0)


def write_plane_dem(path: Path, units: str, z_of_uv, cell_ft: float, bounds: tuple[float, float, float, float]) -> Path:
    """A DEM whose cell-centre values are ``z_of_uv(u, v)`` (feet, local international feet) over
    ``bounds`` (local feet) grown by three cells, in the plan's CRS (z in metres for a metre plan)."""
    u0, v0, u1, v1 = bounds
    pad = 3 * cell_ft
    nx, ny = int(np.ceil((u1 - u0 + 2 * pad) / cell_ft)) + 1, int(np.ceil((v1 - v0 + 2 * pad) / cell_ft)) + 1
    uc = u0 - pad + cell_ft * (np.arange(nx) + 0.5)
    vc = v1 + pad - cell_ft * (np.arange(ny) + 0.5)
    U, V = np.meshgrid(uc, vc)
    if units == "ft":
        crs, k, ox, oy, zscale, unit = NY_FT, 1 / K_US, X0, Y0, 1.0, "ft"
    else:
        crs, k, ox, oy, zscale, unit = UTM_M, M_PER_FT, E0, N0, M_PER_FT, "m"
    transform = Affine(cell_ft * k, 0, ox + (u0 - pad) * k, 0, -cell_ft * k, oy + (v1 + pad) * k)
    with rasterio.open(path, "w", driver="GTiff", width=nx, height=ny, count=1, dtype="float64", crs=crs,
                       transform=transform) as dst:
        dst.write(np.asarray(z_of_uv(U, V), dtype="float64") * zscale, 1)
        dst.set_band_unit(1, unit)
    return path


def run_plan(tmp_path: Path, units: str, roles: dict[str, Features], *, rulebook: Any = "vestal",
             dem: tuple | None = None, exact: bool = False) -> Result:
    """Write the plan (role -> [(id, local geometry, attributes)]) in ``units``, load it and check it.

    ``dem`` is ``(z_of_uv, cell_ft, bounds)`` for :func:`write_plane_dem`; ``rulebook`` a name, a
    path, or YAML text of a rulebook extending vestal.
    """
    tmp_path.mkdir(parents=True, exist_ok=True)
    gpkg = tmp_path / f"plan_{units}.gpkg"
    crs = NY_FT if units == "ft" else UTM_M
    for role, feats in roles.items():
        cols: dict[str, list] = {"id": [f[0] for f in feats]}
        for key in sorted({k for f in feats for k in f[2]}):
            cols[key] = [f[2].get(key) for f in feats]
        gpd.GeoDataFrame(cols, geometry=[place(f[1], units, exact) for f in feats], crs=crs).to_file(
            gpkg, layer=role, driver="GPKG", engine="pyogrio")
    dem_path = None
    if dem is not None:
        dem_path = write_plane_dem(tmp_path / f"dem_{units}.tif", units, *dem)
    if isinstance(rulebook, str) and rulebook.lstrip().startswith("extends"):
        path = tmp_path / "rulebook.yaml"
        path.write_text(rulebook, "utf-8")
        rulebook = path
    rb = load_rulebook(rulebook) if not hasattr(rulebook, "rules") else rulebook
    layers = load_layers(gpkg, dem=dem_path, crs=None if units == "ft" else UTM_FT)
    assert layers.crs.equals(CRS.from_user_input(NY_FT if units == "ft" else UTM_FT))
    return check_harvest(layers, rb)


def status_of(result: Result, rule_id: str, subject_id: str, subject_layer: str | None = None) -> str:
    """The one status of ``subject_id`` for ``rule_id`` (the worst when a subject has several rows)."""
    f = result.findings
    f = f[(f["rule_id"] == rule_id) & (f["subject_id"] == subject_id)]
    if subject_layer is not None:
        f = f[f["subject_layer"] == subject_layer]
    assert len(f), f"no {rule_id} finding for {subject_id}"
    order = ["violation", "review", "not_evaluated", "info", "pass"]
    return min(f["status"], key=order.index)


def rows_of(result: Result, rule_id: str, subject_id: str) -> gpd.GeoDataFrame:
    f = result.findings
    return f[(f["rule_id"] == rule_id) & (f["subject_id"] == subject_id)]
