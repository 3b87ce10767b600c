"""The DEM is read in windows around the plan, never the whole band (geoconstraints.io.dem).

A 270-kB GeoTIFF declaring 60,000 x 60,000 float32 cells (13.4 GiB) asked for 13.4 GiB; a sparse
16,000^2 one made a small harvest take 37 s and 3.2 GB. Here every window the harvest command reads
is recorded: all lie inside the plan's extent plus the margin, and their cells are counted.
What a window holds is checked too: the band's scale and offset applied, an undeclared fill nodata.
"""

from __future__ import annotations

import numpy as np
import pytest
from catalogue import big_sparse_dem, harvest_area, write_gpkg
from common import NY_FT, X0, Y0
from shapely.geometry import LineString

import geoconstraints as gc
from geoconstraints.errors import DemError
from geoconstraints.io import dem as dem_module
from geoconstraints.io.layers import DEM_MARGIN_FT


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    return big_sparse_dem(tmp_path_factory.mktemp("dem") / "big.tif")


def test_the_whole_band_is_refused_by_the_cap(big):
    dem = gc.open_dem(big)
    assert dem.width == dem.height == 60_000
    with pytest.raises(DemError, match=r"60,000 x 60,000 cells, more than the 25,000,000 read at once.*Clip the DEM"):
        dem.read_ft()


def test_a_harvest_reads_only_around_the_plan(big, tmp_path, monkeypatch):
    import geopandas as gpd

    road = gpd.GeoDataFrame({"id": ["R1"]}, geometry=[LineString([(X0 + 10, Y0 + 10), (X0 + 480, Y0 + 390)])], crs=NY_FT)
    gpkg = write_gpkg(tmp_path / "plan.gpkg", {"harvest_area": harvest_area(), "haul_roads": road})
    reads: list[tuple[int, int, int, int]] = []
    real = dem_module._read_window_ft

    def spy(dem, key):
        reads.append(key)
        return real(dem, key)

    monkeypatch.setattr(dem_module, "_read_window_ft", spy)
    layers = gc.load_layers(gpkg, dem=big)
    r0, r1, c0, c1 = layers.dem.focus
    # the plan is 500 x 400 ft of 1-ft cells; the margin 1,000 ft on every side (plus a cell)
    assert (r1 - r0, c1 - c0) == (400 + 2 * 1001, 500 + 2 * 1001)
    res = gc.check_harvest(layers, gc.load_rulebook("vestal"))
    assert reads == [layers.dem.focus]  # one read; every profile and contour is a slice of it
    assert (r1 - r0) * (c1 - c0) * 4 < 30e6  # about 12 MB instead of 13.4 GiB
    grades = res.findings.loc[res.findings["rule_id"] == "HRV-010", "status"]
    assert len(grades) and set(grades) <= {"pass", "violation", "not_evaluated"}
    assert DEM_MARGIN_FT == 1_000.0


def test_a_long_road_is_sampled_in_pieces(big):
    # a road 50,000 ft long across the DEM: its bounding window (about 1.25e9 cells) is never read
    dem = gc.open_dem(big)
    xs = np.linspace(X0 - 25_000, X0 + 25_000, 20_001)
    ys = np.linspace(Y0 - 25_000, Y0 + 25_000, 20_001)
    z = dem.sample(xs, ys, NY_FT)
    assert len(z) == 20_001
    assert all((r1 - r0) * (c1 - c0) <= dem_module.MAX_WINDOW_CELLS // 4 for r0, r1, c0, c1 in dem._cache)
    assert sum(a.size for a in dem._cache.values()) <= 2 * dem_module.MAX_WINDOW_CELLS
    inside = np.abs(xs - X0) < 200
    assert np.isfinite(z[inside]).all() and np.isnan(z[np.abs(xs - X0) > 2_000]).all()  # data only near the plan


def test_windows_equal_the_whole_band(tmp_path):
    # on a small DEM: a window read on its own equals the same cells of the whole band
    from catalogue import write_dem

    dem = gc.open_dem(write_dem(tmp_path / "d.tif", units="ft"))
    whole = dem.read_ft()
    part = gc.open_dem(dem.path).read_ft(((5, 17), (3, 29)))
    np.testing.assert_array_equal(part, whole[5:17, 3:29])
    assert part.dtype == np.float32 and not part.flags.writeable


# ------------------------------------------------------------------------------------------
# the values read: the band's scale and offset applied, an undeclared fill is nodata (a harvest)


def _harvest_dem(path, *, stored=None, scale=None, offset=None, nodata=-9999.0):
    """The catalogue's 40 x 40 DEM (z = 800 + 0.5 (row + col) ft: 5 % along x and along y, 10-ft
    cells) stored as ``stored(z)``, with the band's scale and offset."""
    import rasterio
    from catalogue import write_dem

    write_dem(path, units="ft", nodata=nodata)
    with rasterio.open(path) as src:
        profile, z = src.profile, src.read(1).astype("float64")
    if stored is not None:
        data = stored(z)
        profile.update(dtype=data.dtype.name, nodata=nodata)
        with rasterio.open(path, "w", **profile) as dst:
            dst.write(data, 1)
            dst.units = ("ft",)
            if scale is not None:
                dst.scales = (scale,)
            if offset is not None:
                dst.offsets = (offset,)
    return path


def _grades(tmp_path, dem):
    import geopandas as gpd

    # R1 runs east along y = Y0 + 100 (5 %, 280 ft); R2 north along x = X0 + 100 (5 %, 200 ft)
    roads = gpd.GeoDataFrame({"id": ["R1", "R2"]}, geometry=[LineString([(X0 + 10, Y0 + 100), (X0 + 290, Y0 + 100)]),
                                                             LineString([(X0 + 100, Y0 + 20), (X0 + 100, Y0 + 220)])],
                             crs=NY_FT)
    gpkg = write_gpkg(tmp_path / "plan.gpkg", {"harvest_area": harvest_area(), "haul_roads": roads})
    res = gc.check_harvest(gc.load_layers(gpkg, dem=dem), gc.load_rulebook("vestal"))
    f = res.findings[(res.findings["rule_id"] == "HRV-010") & (res.findings["subject_layer"] == "haul_roads")]
    f = f.set_index("subject_id")
    return f["status"].to_dict(), f["message"].to_dict(), sorted(set(res.derived["contours"]["elev_ft"]))


@pytest.mark.parametrize(("stored", "scale", "offset"), [
    (lambda z: np.round(z * 100).astype("int32"), 0.01, None),  # hundredths of a foot, as the Vestal sample's dem_scaled.tif
    (lambda z: (z - 1000).astype("float32"), None, 1000.0),  # elevation - 1000
], ids=["scale", "offset"])
def test_a_scaled_or_offset_dem_gives_the_plain_dems_grades(tmp_path, stored, scale, offset):
    # The plain DEM: both roads 5 % (0.5 ft per 10-ft cell; per US survey foot 5 / 1.000002), a pass;
    # its cells hold 800 .. 839.5 ft, so its contours (HRV-002's 10-ft interval) are 810, 820, 830 ft
    # (800 ft is a single corner cell: no line). Read unscaled, the hundredths made the roads 500 %
    # (a violation); the offset put the contours at -190 .. -170 ft.
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    plain = _grades(tmp_path / "a", _harvest_dem(tmp_path / "a" / "plain.tif"))
    scaled = _grades(tmp_path / "b", _harvest_dem(tmp_path / "b" / "scaled.tif", stored=stored, scale=scale,
                                                  offset=offset))
    assert plain[0] == {"R1": "pass", "R2": "pass"} and "max grade 5.0 %" in plain[1]["R1"]
    assert plain[2] == [810.0, 820.0, 830.0]
    assert scaled == plain


def test_an_undeclared_fill_under_a_haul_road_is_not_evaluated(tmp_path):
    # The DEM declares nodata -9999; rows 20-30 (y = Y0 + 50 .. Y0 + 160, under R1) hold -32768. Read as
    # ground, R1 was flat: "max grade 0.0 %", a pass. It is not evaluated; R2 crosses the hole (the
    # stretch on it not evaluated, the rest measured).
    def holed(z):
        z = z.astype("float32")
        z[20:31, :] = -32768
        return z

    dem = _harvest_dem(tmp_path / "fill.tif", stored=holed)
    status, message, _ = _grades(tmp_path, dem)
    assert status["R1"] == "not_evaluated" and "off the DEM or on nodata cells" in message["R1"]
    assert status["R2"] == "not_evaluated" and "max grade 0.0 %" not in message["R2"]


# ------------------------------------------------------------------------------------------
# a DEM with no relief (all zeros: the wrong band, a placeholder) is refused where it is read


def _water_bars(tmp_path, dem):
    import geopandas as gpd

    road = gpd.GeoDataFrame({"id": ["R1"]}, geometry=[LineString([(X0 + 10, Y0 + 100), (X0 + 290, Y0 + 100)])],
                            crs=NY_FT)
    gpkg = write_gpkg(tmp_path / "bars.gpkg", {"harvest_area": harvest_area(), "haul_roads": road})
    res = gc.check_harvest(gc.load_layers(gpkg, dem=dem), gc.load_rulebook("vestal"))
    return res.findings.loc[res.findings["rule_id"] == "HRV-030"].set_index("subject_id")


def test_a_dem_of_zeros_is_refused_naming_the_file_and_the_fix(tmp_path):
    # Every cell holds 0 (an empty band, a raster never written, a placeholder). Read as ground it
    # was 0 % everywhere: both roads "max grade 0.0 %", HRV-010 a pass on a raster that measured
    # nothing (and a highest adjacent grade of 0 ft). Refused where it is read, naming the file.
    dem = _harvest_dem(tmp_path / "zero.tif", stored=lambda z: np.zeros_like(z, dtype="float32"))
    with pytest.raises(DemError, match=(r"DEM zero.tif: every valid cell read holds 0 ft \(all 1,600 valid cells of "
                                        r"the raster\): no relief, as an empty band or a raster never written holds; "
                                        r"every grade on it would be 0 %. Likely it is the wrong file or band \(a mask, "
                                        r"an empty export\) or a placeholder raster. Check it with gdalinfo -stats "
                                        r"zero.tif")):
        _grades(tmp_path, dem)


def test_a_dem_of_one_elevation_is_read_with_a_warning_and_no_grade_is_a_pass(tmp_path, dem_warnings):
    # Every cell holds 812.5 ft: a synthetic flat site (the rules take it: a building pad's highest
    # adjacent grade) or a placeholder. Its grades were 0 %: HRV-010 and HRV-030 a pass. No grade is
    # measured on it: not evaluated, with the reason; the DEM named in a warning with the likely fix.
    dem = _harvest_dem(tmp_path / "flat.tif", stored=lambda z: np.full_like(z, 812.5, dtype="float32"))
    status, message, _ = _grades(tmp_path, dem)
    assert status == {"R1": "not_evaluated", "R2": "not_evaluated"}
    assert "every cell of DEM flat.tif around the road holds 812.50 ft: no relief, so no grade measured" in message["R1"]
    assert dem_warnings[0] == ("DEM flat.tif: every valid cell read holds 812.50 ft (all 1,600 valid cells of the "
                               "raster): no relief, so grades are not evaluated on it. If the ground is not this flat, "
                               "it is the wrong file or band (a mask, an empty export) or a placeholder raster. Check it "
                               "with gdalinfo -stats flat.tif (its minimum equals its maximum) and give the DEM of the "
                               "ground")
    bars = _water_bars(tmp_path, dem)
    assert bars.loc["R1", "status"] == "not_evaluated" and "no relief" in bars.loc["R1", "message"]


def test_a_flat_band_1_of_a_multiband_raster_names_the_band(tmp_path, dem_warnings):
    # A 3-band raster whose band 1 is an all-255 mask and band 2 the elevations: band 1 is read.
    import rasterio

    src = _harvest_dem(tmp_path / "plain.tif")
    with rasterio.open(src) as s:
        profile, z = s.profile, s.read(1)
    profile.update(count=3)
    path = tmp_path / "rgb.tif"
    with rasterio.open(path, "w", **profile) as dst:
        dst.write(np.stack([np.full_like(z, 255.0), z, z]))
        dst.units = ("ft", "ft", "ft")
    status, _, _ = _grades(tmp_path, path)
    assert status == {"R1": "not_evaluated", "R2": "not_evaluated"}
    assert ("If the ground is not this flat, band 1 of its 3 bands is read: extract the elevation band "
            "(gdal_translate -b N rgb.tif dem.tif), or it is a placeholder raster") in dem_warnings[0]


def test_the_flat_check_reads_only_small_windows_beyond_the_plan(big, monkeypatch):
    # On the 60,000^2 sparse DEM the area around the plan has relief: nothing more is read. Its cells
    # made one value (0 ft), the check reads 9 windows of 16 x 16 cells across it, never the band.
    reads: list[tuple[int, int, int, int]] = []
    real = dem_module._read_stored
    flat = False

    def spy(src, dem, key, dtype):
        reads.append(key)
        stored, z = real(src, dem, key, dtype)
        if flat:  # the data made flat, the nodata kept
            stored = z = np.where(np.isnan(stored), np.nan, 0.0).astype(dtype)
        return stored, z

    monkeypatch.setattr(dem_module, "_read_stored", spy)
    for flat in (False, True):
        reads.clear()
        dem = gc.open_dem(big)
        assert dem.set_focus((X0, Y0, X0 + 500, Y0 + 400), NY_FT, DEM_MARGIN_FT)
        first = ((dem.focus[0], dem.focus[0] + 5), (dem.focus[2], dem.focus[2] + 5))
        if not flat:
            dem.read_ft(first)
            assert reads == [dem.focus]
            continue
        with pytest.raises(DemError, match=(r"DEM big.tif: every valid cell read holds 0 ft \([\d,]+ around the plan, and 9 "
                                                  r"windows sampled across the raster hold the same\)")):
            dem.read_ft(first)
        assert reads[0] == dem.focus and len(reads) == 10
        assert all((r1 - r0, c1 - c0) == (16, 16) for r0, r1, c0, c1 in reads[1:])
