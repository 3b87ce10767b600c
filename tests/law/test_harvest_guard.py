"""The guard, harvest part: no HRV finding becomes ``pass`` when an input it reads is taken away.

Every HRV rule of vestal.yaml lists what it reads under ``inputs:`` (roles, fields, dem, options).
One rich plan (every rule finds a violation, a review or an info there) is checked whole, then
again with each of those inputs removed (the layer or the DEM left out, the field dropped) or
blanked (the layer given with no feature, the field's values all empty). For every rule that
reads the input: no subject whose status was not ``pass`` may become ``pass``, and no new
subject may appear as ``pass``. For the inputs a rule cannot decide without (REQUIRED below),
the rule must report no ``pass`` at all for the subjects that need them.
"""

from __future__ import annotations

from importlib import resources

import geopandas as gpd
import numpy as np
import pytest
import rasterio
import yaml
from affine import Affine
from pyproj import CRS
from shapely import affinity
from shapely.geometry import LineString, Point, box

from geoconstraints.commands import check_harvest
from geoconstraints.errors import FieldError
from geoconstraints.io.dem import open_dem
from geoconstraints.io.layers import Layers, load_layers
from geoconstraints.io.roles import ROLES
from geoconstraints.rulebook.loader import load_rulebook

NY_FT = "EPSG:2261"
X0, Y0 = 964_988.0, 758_256.0
RB = load_rulebook("vestal")
RAW = {r["id"]: r for r in yaml.safe_load((resources.files("geoconstraints.rulebook") / "vestal.yaml")
                                          .read_text("utf-8"))["rules"]}
HRV = sorted(rid for rid in RAW if rid.startswith("HRV-"))


def _g(geom):
    return affinity.translate(geom, X0, Y0)


def _layer(ids, geoms, **cols) -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame({"feature_id": list(ids), **cols}, geometry=[_g(g) for g in geoms], crs=NY_FT)


def _frames() -> dict[str, gpd.GeoDataFrame]:
    """The plan of tests/test_harvest.py::scene, with a wetland, a pond, an easement and owners.

    H1 = [0,1000]^2 and H2 = [1000,1500]x[0,1000] (15 + 10 cords) on parcel P1 (RR): licence (HRV-001);
    H1 50 ft from the RA-1 parcel P2 (HRV-003 review); the perennial stream S1 (u = 200) under the
    skid trail ST1 (HRV-012 violation), crossed by HR2 and ST2 (HRV-013 review); landing L2 in its
    strip (HRV-024 violation), L3 105 ft from the road's right-of-way (HRV-025 violation) and not
    connected (L2, HRV-027 violation); HR1 on the critical slope CS1 (HRV-011 violation) and up the
    30 % DEM for 530 ft (HRV-010 violation, HRV-030 water bars).
    """
    return {
        "harvest_area": _layer(["H1", "H2"], [box(0, 0, 1000, 1000), box(1000, 0, 1500, 1000)],
                               cords=[15.0, 10.0], cubic_feet=[np.nan, np.nan], board_feet=[np.nan, np.nan],
                               owner=["A", "A"], parcel_id=["P1", "P1"]),
        "streams": _layer(["S1", "S2"], [LineString([(200, -100), (200, 1100)]), LineString([(800, -100), (800, 1100)])],
                          kind=["perennial", "intermittent"], FCODE=[46006, 46003]),
        "roads": _layer(["R1", "R2"], [LineString([(-100, 1030), (1600, 1030)]), LineString([(700, 1030), (700, 600)])],
                        row_width_ft=[50.0, np.nan]),
        "row": _layer(["W1"], [box(-100, 1005, 1600, 1055)]),
        "landings": _layer(["L1", "L2", "L3"], [Point(500, 500), Point(220, 500), box(600, 880, 650, 900)]),
        "haul_roads": _layer(["HR1", "HR2", "HR3", "HR4"], [
            LineString([(500, 500), (500, 1030)]), LineString([(220, 500), (100, 500)]),
            LineString([(625, 890), (500, 890)]), LineString([(1400, 900), (1400, 1100)])]),
        "skid_trails": _layer(["ST1", "ST2"], [LineString([(202, 100), (202, 400)]),
                                               LineString([(100, 700), (300, 700)])], constructed=[None, False]),
        "parcels": _layer(["P1", "P2", "P3"], [box(-200, -50, 1600, 1005), box(-200, -600, 1600, -50),
                                               box(1600, -600, 2400, 1005)],
                          zoning=["RR", "RA-1", "C-1"], owner=["A", "B", "C"]),
        "dwellings": _layer(["D1", "D2"], [Point(900, 600), Point(2000, 0)]),
        "critical_slopes": _layer(["CS1"], [box(400, 600, 600, 700)]),
        "stream_corridor": _layer(["SC1"], [box(150, 0, 250, 1000)]),
        "wetlands": _layer(["W1"], [box(1100, 100, 1200, 200)]),
        "ponds": _layer(["PO1"], [box(1300, 100, 1350, 150)]),
        "easements": _layer(["E1"], [LineString([(0, 950), (1500, 950)])]),
        "zoning": _layer(["Z1", "Z2", "Z3"], [box(-700, -50, 2100, 1700), box(-700, -700, 2100, -50),
                                               box(2100, -700, 2700, 1700)], district=["RR", "RA-1", "C-1"]),
    }


@pytest.fixture(scope="module")
def dem(tmp_path_factory):
    # z = 1000 + 0.3 v (30 % up +v) on 10-ft cells over u -400..2600, v -800..1800
    path = tmp_path_factory.mktemp("guard") / "dem.tif"
    cell, nx, ny = 10.0, 300, 260
    vc = 1800 - cell * (np.arange(ny) + 0.5)
    z = np.repeat((1000 + 0.3 * vc)[:, None], nx, axis=1)
    with rasterio.open(path, "w", driver="GTiff", width=nx, height=ny, count=1, dtype="float64", crs=NY_FT,
                       transform=Affine(cell, 0, X0 - 400, 0, -cell, Y0 + 1800)) as dst:
        dst.write(z, 1)
        dst.set_band_unit(1, "ft")
    return open_dem(path)


def _statuses(res, rid: str) -> dict[tuple[str, str], str]:
    f = res.findings[res.findings["rule_id"] == rid]
    order = ["violation", "review", "not_evaluated", "info", "pass"]
    out: dict[tuple[str, str], str] = {}
    for layer, sid, st in zip(f["subject_layer"], f["subject_id"], f["status"]):
        key = (str(layer), str(sid))
        out[key] = min(out.get(key, "pass"), st, key=order.index) if key in out else st
    return out


def _variants() -> list[tuple[str, str, str | None]]:
    """(kind, role, field) of every input any HRV rule reads: remove / blank a role, a field, the DEM."""
    out: set[tuple[str, str, str | None]] = set()
    for rid in HRV:
        inp = RAW[rid]["inputs"]
        for role in inp.get("roles", []):
            out |= {("remove", role, None), ("blank", role, None)}
        for role, fields in (inp.get("fields") or {}).items():
            out |= {("drop_field", role, f) for f in fields} | {("blank_field", role, f) for f in fields}
        if inp.get("dem"):
            out.add(("remove", "dem", None))
    return sorted(out, key=str)


def _reads(rid: str, kind: str, role: str, fld: str | None) -> bool:
    inp = RAW[rid]["inputs"]
    if role == "dem":
        return bool(inp.get("dem"))
    if fld is None:
        return role in inp.get("roles", [])
    return fld in (inp.get("fields") or {}).get(role, [])


def _altered(frames, kind: str, role: str, fld: str | None) -> dict[str, gpd.GeoDataFrame]:
    f = {k: v.copy() for k, v in frames.items()}
    if kind == "remove" and role != "dem":
        f.pop(role, None)
    elif kind == "blank":
        f[role] = f[role].iloc[0:0]
    elif role in f and fld in f[role].columns:
        if kind == "drop_field":
            f[role] = f[role].drop(columns=fld)
        else:
            f[role][fld] = None
    return f


REQUIRED: dict[str, dict[str, tuple[str, ...]]] = {
    # rule -> removed input -> the subject layers that must then have no pass at all
    "HRV-001": {"harvest_area": ("harvest_area",), "cords": ("harvest_area",)},
    "HRV-010": {"dem": ("haul_roads", "skid_trails")},
    "HRV-011": {"critical_slopes": ("haul_roads",), "stream_corridor": ("haul_roads",)},
    "HRV-012": {"streams": ("skid_trails",)},
    "HRV-013": {"streams": ("haul_roads", "skid_trails")},
    "HRV-023": {"streams": ("harvest_area",), "dwellings": ("harvest_area",)},
    "HRV-024": {"streams": ("landings",), "dwellings": ("landings",), "parcels": ("landings",), "roads": ("landings",)},
    "HRV-025": {"roads": ("landings",)},
    "HRV-027": {"haul_roads": ("landings",)},  # a right-of-way polygon reached is a public road reached
    "HRV-030": {"dem": ("haul_roads",)},
}


def test_every_hrv_rule_lists_its_inputs() -> None:
    for rid in HRV:
        inp = RAW[rid].get("inputs")
        assert isinstance(inp, dict) and set(inp) <= {"roles", "fields", "dem", "options"}, rid
        assert isinstance(inp["roles"], list) and isinstance(inp["fields"], dict) and inp["options"] == [], rid
        for role, fields in inp["fields"].items():
            assert isinstance(fields, list) and fields, (rid, role)


@pytest.fixture(scope="module")
def baseline(dem):
    frames = _frames()
    res = check_harvest(Layers(frames=frames, crs=CRS.from_user_input(NY_FT), dem=dem), RB)
    return frames, {rid: _statuses(res, rid) for rid in HRV}


def test_baseline_decides_something_for_every_rule(baseline) -> None:
    _, base = baseline
    for rid in HRV:
        st = set(base[rid].values())
        assert st - {"pass", "not_evaluated"}, (rid, st)  # a violation, review or info: never vacuous
    assert base["HRV-010"][("haul_roads", "HR1")] == "violation"
    assert base["HRV-001"][("harvest_area", "H1")] == "review"


@pytest.mark.parametrize("kind,role,fld", _variants(), ids=lambda v: str(v))
def test_no_pass_without_the_input(baseline, dem, tmp_path, kind, role, fld) -> None:
    frames, base = baseline
    if role != "dem" and role not in frames:
        pytest.fail(f"the guard plan lacks role {role}: add it to _frames")
    if kind == "drop_field" and fld in ROLES[role].required:
        # a layer without a field its role requires is refused when loaded, naming the field
        path = tmp_path / "t.gpkg"
        frames[role].drop(columns=[fld, "feature_id"]).to_file(path, layer=role, driver="GPKG")
        with pytest.raises(FieldError, match=fld):
            load_layers(path)
        return
    altered = _altered(frames, kind, role, fld)
    res = check_harvest(Layers(frames=altered, crs=CRS.from_user_input(NY_FT),
                               dem=None if role == "dem" else dem), RB)
    for rid in HRV:
        if not _reads(rid, kind, role, fld):
            continue
        now = _statuses(res, rid)
        became = {k: (base[rid].get(k), v) for k, v in now.items() if v == "pass" and base[rid].get(k) != "pass"}
        assert not became, f"{rid} after {kind} {role}{'.' + fld if fld else ''}: {became}"
        if kind in ("remove", "blank", "blank_field", "drop_field"):
            need = REQUIRED.get(rid, {}).get(fld or role, ())
            passes = [k for k, v in now.items() if v == "pass" and k[0] in need]
            assert not passes, f"{rid} passes {passes} without {fld or role}"


def test_no_zoning_pass_without_any_district_source(baseline, dem) -> None:
    # HRV-003 reads the districts from the zoning layer, else the parcels' zoning field: without both,
    # no plan element passes
    frames, _ = baseline
    f = {k: v for k, v in frames.items() if k != "zoning"}
    f["parcels"] = f["parcels"].drop(columns="zoning")
    res = check_harvest(Layers(frames=f, crs=CRS.from_user_input(NY_FT), dem=dem), RB)
    st = _statuses(res, "HRV-003")
    assert st and "pass" not in set(st.values())
