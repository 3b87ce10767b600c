"""Property tests of the flood screening (hypothesis): bounds, CRS invariance, independence.

Random layouts of parcels and flood polygons near Vestal, NY. Coordinates snap to a 20-ft grid
so that every overlap is either empty or at least 20 ft wide: no case sits on the sliver
tolerance (1 ft) or the minimum area (100 sq ft), where a reprojection could flip it.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import geopandas as gpd
import numpy as np
from common import NY_FT, X0, Y0
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from shapely.geometry import box

from geoconstraints import load_layers, load_rulebook
from geoconstraints.commands import screen_parcels

UTM_FT = "+proj=utm +zone=18 +datum=NAD83 +units=us-ft +no_defs"
GRID = 20.0
RB = load_rulebook("vestal")
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def rects(draw, max_cells: int = 60):
    """An axis-aligned rectangle on the 20-ft grid, inside a 1,200 x 1,200 ft square."""
    x = draw(st.integers(0, max_cells - 1))
    y = draw(st.integers(0, max_cells - 1))
    w = draw(st.integers(1, 20))
    h = draw(st.integers(1, 20))
    return box(X0 + x * GRID, Y0 + y * GRID, X0 + (x + w) * GRID, Y0 + (y + h) * GRID)


@st.composite
def layouts(draw):
    n_p = draw(st.integers(1, 6))
    # parcels must not overlap each other (a tax map); take a grid of cells and pick distinct ones
    cells = draw(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=n_p, max_size=n_p, unique=True))
    parcels = []
    for cx, cy in cells:
        w = draw(st.integers(2, 10))
        h = draw(st.integers(2, 10))
        x, y = X0 + cx * 200.0, Y0 + cy * 200.0
        parcels.append(box(x, y, x + w * GRID, y + h * GRID))
    n_f = draw(st.integers(1, 6))
    flood = draw(st.lists(rects(), min_size=n_f, max_size=n_f))
    kinds = draw(st.lists(st.sampled_from(["AE", "A", "X", "FW", "D"]), min_size=n_f, max_size=n_f))
    return parcels, flood, kinds


def _frames(parcels, flood, kinds):
    p = gpd.GeoDataFrame({"parcel_id": [f"P{i}" for i in range(len(parcels))]}, geometry=parcels, crs=NY_FT)
    f = gpd.GeoDataFrame({
        "FLD_ZONE": ["AE" if k == "FW" else k for k in kinds],
        "ZONE_SUBTY": ["FLOODWAY" if k == "FW" else None for k in kinds],
    }, geometry=flood, crs=NY_FT)
    return p, f


def _screen(p, f, crs=None):
    return _screen_all(p, f, [{"crs": crs}])[0]


def _screen_all(p, f, runs, extra=None):
    """Write the layers once, then load and screen once per ``runs`` entry (load_layers kwargs)."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "in.gpkg"
        p.to_file(path, layer="parcels")
        f.to_file(path, layer="flood_zones")
        for name, gdf in (extra or {}).items():
            gdf.to_file(path, layer=name)
        out = []
        for kw in runs:
            if "parcels_layer" in kw:
                kw = {"overrides": {"parcels": f"{path}:{kw['parcels_layer']}"}}
            out.append(screen_parcels(load_layers(path, **kw), RB).tables["parcels"])
        return out


@SETTINGS
@given(layouts())
def test_shares_are_fractions_and_classes_nest(layout) -> None:
    t = _screen(*_frames(*layout))
    for c in ("sfha_share", "floodway_share"):
        assert ((t[c] >= 0) & (t[c] <= 1)).all()
    tol = 1e-9
    assert (t["sfha_acres"] <= t["area_acres"] + tol).all()
    assert (t["floodway_acres"] <= t["sfha_acres"] + tol).all()  # floodway polygons are AE here
    assert (t["uncovered_acres"] <= t["area_acres"] + tol).all()
    assert set(t["flood_data"]) <= {"full", "partial", "no_data"}
    # no data is never reported as "no hazard": zero coverage means no_data
    assert (t.loc[t["flood_data"] == "no_data", "sfha_acres"] == 0).all()


@SETTINGS
@given(layouts())
def test_same_answers_in_state_plane_and_utm_feet(layout) -> None:
    p, f = _frames(*layout)
    a, b = _screen_all(p, f, [{"crs": NY_FT}, {"crs": UTM_FT}])
    assert a["parcel_id"].tolist() == b["parcel_id"].tolist()
    # both CRSs are conformal with scale factors within ~3e-4 of each other here: areas agree to 0.5 %
    for c in ("area_acres", "sfha_acres", "floodway_acres"):
        np.testing.assert_allclose(b[c], a[c], rtol=5e-3, atol=1e-9)
    for c in ("flood_zones", "flood_data"):
        assert a[c].tolist() == b[c].tolist()


@SETTINGS
@given(layouts())
def test_a_far_away_parcel_changes_no_other_row(layout) -> None:
    p, f = _frames(*layout)
    far = gpd.GeoDataFrame({"parcel_id": ["FAR"]}, geometry=[box(X0 + 40_000, Y0 + 40_000, X0 + 40_200, Y0 + 40_200)],
                           crs=NY_FT)
    a, b = _screen_all(p, f, [{}, {"parcels_layer": "with_far"}], extra={"with_far": pd_concat(p, far)})
    assert b["parcel_id"].tolist() == a["parcel_id"].tolist() + ["FAR"]
    cols = [c for c in a.columns if c not in ("geometry", "stream_distance_ft")]
    left = a[cols].reset_index(drop=True)
    right = b[cols].iloc[: len(a)].reset_index(drop=True)
    assert left.equals(right)
    assert b.iloc[-1]["flood_data"] == "no_data"


def pd_concat(a: gpd.GeoDataFrame, b: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
    import pandas as pd

    return gpd.GeoDataFrame(pd.concat([a, b], ignore_index=True), crs=a.crs)
