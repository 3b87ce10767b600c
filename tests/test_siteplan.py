"""Tests for geoconstraints.output.siteplan and the ``siteplan`` command.

The PDF is read back with tools independent of the writer: GDAL's PDF driver (Debian's gdal-bin,
which reads ISO 32000 geospatial PDFs through poppler) for the georeference and the printed
scale, poppler's pdftotext / pdfimages for the text and the absence of raster images, pypdf for
the page sizes. ``bash scripts/pdf_deps.sh`` installs gdal-bin and poppler-utils.
"""

from __future__ import annotations

import doctest
import io
import json
import re
import shutil
import subprocess
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pyproj
import pytest
import rasterio
import shapely
from matplotlib.backends.backend_pdf import PdfPages
from matplotlib.figure import Figure
from pypdf import PdfReader

import geoconstraints as gc
from geoconstraints.cli import main
from geoconstraints.commands import check_harvest
from geoconstraints.errors import InputError, OutputError
from geoconstraints.output import siteplan as sp

FT_PER_USFT = 1200 / 3937 / 0.3048
"""International feet per US survey foot (EPSG:2261 is in US survey feet)."""


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is missing: run `bash scripts/pdf_deps.sh` (installs Debian gdal-bin and poppler-utils)")
    return path


def gdal_info(pdf: Path, page: int = 1, dpi: int = 72) -> dict:
    """gdalinfo -json of one page of a PDF read at ``dpi``."""
    src = str(pdf) if page == 1 else f"PDF:{page}:{pdf}"
    out = subprocess.run([_tool("gdalinfo"), "-json", "-oo", f"DPI={dpi}", src], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout)


def pdf_text(pdf: Path, page: int | None = None) -> str:
    args = [_tool("pdftotext")] + (["-f", str(page), "-l", str(page)] if page else []) + [str(pdf), "-"]
    return subprocess.run(args, capture_output=True, text=True, check=True).stdout


def ground_box(info: dict, lay: sp.PageLayout) -> tuple[float, float, float, float]:
    """The map frame's ground box from GDAL's georeference of the page (72 dpi: 1 pixel = 1 point)."""
    a, px, _, d, _, py = info["geoTransform"]
    fx, fy, fw, fh = lay.frame
    ph = lay.page[1]
    col0, col1 = fx * 72, (fx + fw) * 72
    row0, row1 = (ph - fy - fh) * 72, (ph - fy) * 72
    return a + col0 * px, d + row1 * py, a + col1 * px, d + row0 * py


# ------------------------------------------------------------------------------------------
# fixtures: the sample harvest plan

@pytest.fixture(scope="module")
def result(sample_harvest):
    return sample_harvest


@pytest.fixture(scope="module")
def one(result, tmp_path_factory):
    """The sample plan at 1 in = 500 ft on letter: one sheet."""
    path, plan = sp.write_siteplan(result, tmp_path_factory.mktemp("one"), applicant="A. Forester & Sons <LLC>",
                                   date="2026-03-01")
    return path, plan


@pytest.fixture(scope="module")
def tiled(result, tmp_path_factory):
    """The sample plan at 1 in = 250 ft on letter: several sheets and a key map."""
    path, plan = sp.write_siteplan(result, tmp_path_factory.mktemp("tiled"), scale_ft_per_in=250,
                                   orientation="portrait")
    return path, plan


# ------------------------------------------------------------------------------------------
# page size, scale, georeference

@pytest.mark.parametrize("paper, orientation, size", [
    ("letter", "portrait", (612, 792)), ("letter", "landscape", (792, 612)),
    ("tabloid", "portrait", (792, 1224)), ("arch-d", "portrait", (1728, 2592)),
    ("arch-d", "landscape", (2592, 1728)),
])
def test_page_size_in_points(result, tmp_path, paper, orientation, size):
    path, plan = sp.write_siteplan(result, tmp_path, paper=paper, orientation=orientation)
    pages = PdfReader(path).pages
    assert len(pages) == len(plan.sheets) == 1
    box = pages[0].mediabox
    assert (float(box.width), float(box.height)) == size
    info = subprocess.run([_tool("pdfinfo"), str(path)], capture_output=True, text=True, check=True).stdout
    assert re.search(rf"Page size:\s+{size[0]} x {size[1]} pts", info), info


def test_printed_scale_read_by_gdal(one):
    path, _ = one
    info = gdal_info(path)
    assert info["driverShortName"] == "PDF"
    assert info["size"] == [612, 792]
    _, px, rx, _, ry, py = info["geoTransform"]
    assert rx == ry == 0  # grid north up
    # ground feet per inch of paper: 72 pixels at DPI=72, pixel size in US survey feet
    for k in (px, -py):
        assert k * 72 * FT_PER_USFT == pytest.approx(500.0, rel=0.01)
        assert k * 72 * FT_PER_USFT == pytest.approx(500.0, rel=1e-5)  # in fact exact
    wkt = info["coordinateSystem"]["wkt"]
    assert "New York Central" in wkt and "US survey foot" in wkt


def test_frame_position_matches_georeference(one):
    """The ground box GDAL gives the frame's page position is the box the frame shows."""
    path, plan = one
    got = ground_box(gdal_info(path), plan.layout)
    assert got == pytest.approx(plan.sheets[0].box, abs=0.05)  # ft


def test_drawn_features_are_where_the_georeference_puts_them(one, result, tmp_path):
    """Rasterize the page with GDAL (poppler) and find the harvest area's outline colour at its vertices."""
    path, _ = one
    tif = tmp_path / "page.tif"
    subprocess.run([_tool("gdal_translate"), "-q", "-oo", "DPI=100", str(path), str(tif)], check=True)
    green = np.array([0x1B, 0x78, 0x37])
    ha = result.layers.get_layer("harvest_area")
    xy = shapely.get_coordinates(ha.geometry.boundary.values)
    with rasterio.open(tif) as src:
        rgb = src.read([1, 2, 3]).transpose(1, 2, 0).astype(int)
        rows, cols = rasterio.transform.rowcol(src.transform, xy[:, 0], xy[:, 1])
    hits = 0
    for r, c in zip(rows, cols):
        win = rgb[r - 2:r + 3, c - 2:c + 3].reshape(-1, 3)
        hits += bool((np.abs(win - green).sum(axis=1) < 60).any())
    assert hits >= 0.8 * len(xy), f"outline colour found at {hits} of {len(xy)} vertices"
    # and not where nothing green is drawn: 1 inch outside the frame's lower left, in the margin
    with rasterio.open(tif) as src:
        assert (src.read([1, 2, 3])[:, -10, 10] > 240).all()


def test_pdf_is_vector(one):
    listing = subprocess.run([_tool("pdfimages"), "-list", str(one[0])], capture_output=True, text=True,
                             check=True).stdout.strip().splitlines()
    assert len(listing) == 2, listing  # the header only: no raster image in the file


# ------------------------------------------------------------------------------------------
# title block, elements, labels

def test_title_block(one, result):
    path, plan = one
    text = pdf_text(path)
    flat = " ".join(text.split())
    rb = result.rulebook
    assert "TIMBER-HARVEST SITE PLAN" in text
    assert "1 in = 500 ft" in flat and "Sheet 1 of 1" in flat
    assert "Applicant: A. Forester & Sons <LLC>" in flat
    assert "Date: 2026-03-01" in flat
    assert f"Rulebook: {rb.name} {rb.version}" in flat
    assert rb["HRV-002"].citation.split(";")[0] in flat
    # the parcels the harvest area overlaps, computed here by area of intersection
    parcels = result.layers.get_layer("parcels")
    ha = shapely.union_all(result.layers.get_layer("harvest_area").geometry.values)
    inter = shapely.area(shapely.intersection(parcels.geometry.values, ha))
    ids = sorted(parcels["feature_id"].astype(str)[inter > 1.0])
    assert ids and f"Parcels: {', '.join(ids)}" in flat
    assert plan.sheets[0].scale_ft_per_in == 500
    assert "grid north of NAD83 / New York Central (ftUS) (EPSG:2261)" in flat


def test_applicant_not_stated(result, tmp_path):
    path, _ = sp.write_siteplan(result, tmp_path)
    assert "Applicant: not stated" in " ".join(pdf_text(path).split())


def test_elements_and_missing_ones(one):
    path, plan = one
    flat = " ".join(pdf_text(path).split())
    # the sample has no easements, ponds or wetlands layer
    assert plan.missing == ["f (easements)", "h (ponds, wetlands)"]
    assert "Not supplied by the inputs: f; h (ponds, wetlands)" in flat
    for key in "abcdefghijk":
        assert re.search(rf"\b{key} [a-zA-Z0-9/,()\- ]+: (shown|NOT SUPPLIED)", flat), key
    assert "(j) buffer strips (50, 100 ft)" in flat  # the widths of the derived buffer strips
    assert "(b) contours, 10 ft interval" in flat


def test_feature_ids_and_finding_rule_ids_printed(one, result):
    path, plan = one
    # pypdf reads labels set along a diagonal line as one word (pdftotext splits them)
    tokens = set(re.findall(r"[A-Z]+-\d+", PdfReader(path).pages[0].extract_text()))
    for role in ("landings", "haul_roads", "skid_trails", "harvest_area"):
        ids = set(result.layers.get_layer(role)["feature_id"].astype(str))
        assert ids <= tokens, (role, ids - tokens)
    f = result.findings
    marked = f[f["status"].isin(["violation", "review"]) & f.geometry.notna()]
    want = set(zip(marked["rule_id"], marked["status"]))
    assert want and want <= set(plan.marked)
    assert set(marked["rule_id"]) <= tokens
    assert "Mill Brook" in pdf_text(path)  # stream names


def test_index_contours_labelled_with_elevation(one, result):
    path, plan = one
    text = pdf_text(path)
    nums = {int(t) for t in re.findall(r"(?<![\d.,:-])(\d{3,4})(?![\d.,:-])", text)}
    with rasterio.open(gc.sample_path("dem.tif")) as dem:
        x0, y0, x1, y1 = plan.sheets[0].box
        win = rasterio.windows.from_bounds(x0, y0, x1, y1, dem.transform)
        z = dem.read(1, window=win)
    lo, hi = float(z.min()), float(z.max())
    index = {v for v in range(0, 5000, 50) if lo + 5 < v < hi - 5}
    labelled = {v for v in nums if lo < v < hi}
    assert len(labelled & index) >= 0.6 * len(index), (sorted(labelled), sorted(index))
    assert all(v % 50 == 0 for v in labelled), sorted(v for v in labelled if v % 50)


# ------------------------------------------------------------------------------------------
# tiling and the key map

def test_tiled_sheets_and_key_map(tiled, result):
    path, plan = tiled
    pages = PdfReader(path).pages
    n = len(pages)
    assert n == len(plan.sheets) > 2
    assert plan.sheets[0].key_map and not any(s.key_map for s in plan.sheets[1:])
    key_text = " ".join(pdf_text(path, 1).split())
    assert f"Sheet 1 of {n} (key map)" in key_text
    assert f"Sheets 2-{n}: 1 in = 250 ft" in key_text
    for k in range(2, n + 1):
        assert f"sheet {k}" in key_text
    lay = plan.layout
    boxes = []
    for k in range(2, n + 1):
        info = gdal_info(path, k)
        _, px, _, _, _, py = info["geoTransform"]
        assert px * 72 * FT_PER_USFT == pytest.approx(250.0, rel=0.01)
        assert -py * 72 * FT_PER_USFT == pytest.approx(250.0, rel=0.01)
        assert f"Sheet {k} of {n} (site plan)" in " ".join(pdf_text(path, k).split())
        boxes.append(ground_box(info, lay))
    # the key map is georeferenced at its own stated scale
    key = gdal_info(path, 1)
    assert key["geoTransform"][1] * 72 * FT_PER_USFT == pytest.approx(plan.sheets[0].scale_ft_per_in, rel=0.01)
    assert f"1 in = {sp.num_text(plan.sheets[0].scale_ft_per_in)} ft" in key_text
    # together the sheets (as GDAL places them) cover the harvest area and 300 ft around it
    ring = shapely.buffer(shapely.union_all(result.layers.get_layer("harvest_area").geometry.values), 300 / FT_PER_USFT)
    cover = shapely.union_all([shapely.box(*b) for b in boxes])
    assert cover.contains(ring)
    # neighbours overlap by the stated 0.5 in of paper = 125 ft
    assert "Sheets overlap 0.5 in (125 ft)" in key_text
    b = np.array(boxes)
    right = [(i, j) for i in range(len(b)) for j in range(len(b))
             if abs(b[i, 1] - b[j, 1]) < 1 and b[j, 0] > b[i, 0] and b[j, 0] < b[i, 2]]
    assert right
    for i, j in right:
        assert (b[i, 2] - b[j, 0]) * FT_PER_USFT == pytest.approx(125.0, abs=0.1)


def test_tile_grid_counts():
    assert sp.grid_count(3500.0, 3500.0, 250.0) == 1
    assert sp.grid_count(3500.1, 3500.0, 250.0) == 2
    assert sp.grid_count(3500 * 2 - 250, 3500.0, 250.0) == 2
    assert sp.grid_count(3500 * 2 - 249, 3500.0, 250.0) == 3
    tiles = sp.tile_sheets((0, 0, 5000, 3000), (3500, 3500), 250)
    assert [(r, c) for r, c, _ in tiles] == [(0, 0), (0, 1)]
    assert tiles[0][2][2] - tiles[1][2][0] == pytest.approx(250)


# ------------------------------------------------------------------------------------------
# the scale limit comes from HRV-002

def test_scale_limit_at_under_over(result):
    rule = result.rulebook["HRV-002"]
    limit = rule.t("min_scale_ft_per_in")
    assert sp.check_scale(limit, rule) == limit
    assert sp.check_scale(limit - 0.001, rule) == limit - 0.001
    with pytest.raises(InputError, match=r"1 in = 500 ft .*HRV-002"):
        sp.check_scale(limit + 0.001, rule)
    for bad in (float("nan"), float("inf"), -500, 0, "x"):
        with pytest.raises(InputError):
            sp.check_scale(bad, rule)


def test_cli_refuses_small_scale_in_one_line(runner, tmp_path):
    for value in ("501", "nan", "inf", "-5"):
        res = runner.invoke(main, ["siteplan", str(gc.sample_path("vestal_sample.gpkg")), "--scale", value,
                                   "--out", str(tmp_path / "o")])
        assert res.exit_code == 2, res.output
        assert res.stderr.count("\n") == 1 and "Traceback" not in res.output
        assert "500" in res.stderr and "--scale" in res.stderr
    assert not (tmp_path / "o").exists()


def test_scale_limit_read_from_the_rulebook(runner, tmp_path):
    rb = tmp_path / "town.yaml"
    rb.write_text("extends: vestal\nrules:\n  - id: HRV-002\n    thresholds:\n      min_scale_ft_per_in: 400\n")
    res = runner.invoke(main, ["siteplan", str(gc.sample_path("vestal_sample.gpkg")), "--rulebook", str(rb),
                               "--scale", "450", "--out", str(tmp_path / "o")])
    assert res.exit_code == 2
    assert "1 in = 400 ft" in res.stderr and "HRV-002" in res.stderr


# ------------------------------------------------------------------------------------------
# the smallest scale: the one that fits the plan on MAX_SHEETS sheets

@pytest.mark.parametrize("scale", [500, 250, 100, 47.5])
def test_sheet_count_is_the_layout_s(result, scale):
    plan = sp.prepare_plan(result, scale)
    pad = sp.PAD_IN * scale / plan.ft_per_unit
    bare = (plan.extent[0] + pad, plan.extent[1] + pad, plan.extent[2] - pad, plan.extent[3] - pad)
    for orientation in sp.ORIENTATIONS:
        _, sheets = sp.plan_sheets(plan.extent, "letter", orientation, scale, plan.ft_per_unit)
        maps = sum(not s.key_map for s in sheets)
        assert sp.sheet_count(bare, "letter", orientation, scale, plan.ft_per_unit) == maps


def test_scale_needing_too_many_sheets_at_under_over(result):
    rule = result.rulebook["HRV-002"]
    plan = sp.prepare_plan(result, 500)
    pad = sp.PAD_IN * 500 / plan.ft_per_unit
    bare = (plan.extent[0] + pad, plan.extent[1] + pad, plan.extent[2] - pad, plan.extent[3] - pad)
    least = sp.smallest_scale(bare, "letter", "auto", plan.ft_per_unit)
    assert 1 < least < rule.t("min_scale_ft_per_in")
    for scale in (least, least + 1):  # at and over the smallest usable scale: at most MAX_SHEETS
        assert sp.check_sheets(sp.prepare_plan(result, scale), "letter", "auto", scale, rule) <= sp.MAX_SHEETS
    under = least - 1
    with pytest.raises(InputError, match=rf"^--scale {sp.num_text(under)}: the plan \(.* ft\) would need [\d,]+ "
                                         rf"sheets of letter .* at most {sp.MAX_SHEETS}\. Give --scale "
                                         rf"{sp.num_text(least)} or more \(up to the law's 500, HRV-002\)$"):
        sp.check_sheets(sp.prepare_plan(result, under), "letter", "auto", under, rule)


def test_plan_too_large_even_at_the_law_s_scale(result):
    rule = result.rulebook["HRV-002"]
    plan = sp.prepare_plan(result, 500)
    x0, y0, x1, y1 = plan.extent
    plan.extent = (x0, y0, x1 + 80 * (x1 - x0), y1 + 80 * (y1 - y0))  # a plan some 30 miles across
    with pytest.raises(InputError, match=r"even at the law's scale of 1 in = 500 ft \(HRV-002\)\. Use larger "
                                         r"paper \(--paper tabloid or arch-d\)"):
        sp.check_sheets(plan, "letter", "auto", 500, rule)


def test_cli_refuses_a_scale_needing_too_many_sheets(runner, tmp_path):
    # --scale 0.001 grew memory without limit (4.4 GB in 14 s); --scale 10 drew for minutes
    for value in ("0.001", "10"):
        res = runner.invoke(main, ["siteplan", str(gc.sample_path("vestal_sample.gpkg")), "--scale", value,
                                   "--out", str(tmp_path / "o")])
        assert res.exit_code == 2, res.output
        assert res.stderr.count("\n") == 1 and "Traceback" not in res.output and "could not complete" not in res.output
        assert re.search(rf"--scale {value}: .* would need ([\d,]+|more than a million) sheets .* Give --scale \d+ or more",
                         res.stderr)
    assert not (tmp_path / "o").exists()


def test_cli_writes_the_set(runner, tmp_path):
    out = tmp_path / "out"
    res = runner.invoke(main, ["siteplan", str(gc.sample_path("vestal_sample.gpkg")), "--dem",
                               str(gc.sample_path("dem.tif")), "--applicant", "A. Forester", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "1 sheet(s) at 1 in = 500 ft" in res.stdout
    assert "f (easements); h (ponds, wetlands)" in res.stdout
    assert (out / "siteplan.pdf").read_bytes()[:5] == b"%PDF-"
    assert (out / "field.kml").is_file() and (out / "field.gpx").is_file()
    assert min(p.name for p in (out / "plots").iterdir()) == "profile_haul_roads_H-1.png"
    assert "Applicant: A. Forester" in " ".join(pdf_text(out / "siteplan.pdf").split())


# ------------------------------------------------------------------------------------------
# layers drawn when present (wetlands, ponds, easements: roles another change adds)

def test_wetlands_ponds_easements_drawn_when_given(result, tmp_path):
    layers = result.layers
    ha = layers.get_layer("harvest_area")
    x0, y0, x1, y1 = ha.total_bounds
    crs = layers.crs
    extra = {
        "wetlands": gpd.GeoDataFrame({"feature_id": ["W-1"]}, geometry=[shapely.box(x0, y0, x0 + 300, y0 + 200)],
                                     crs=crs),
        "ponds": gpd.GeoDataFrame({"feature_id": ["P-1"]}, geometry=[shapely.Point(x1 - 200, y0 + 200).buffer(60)],
                                  crs=crs),
        "easements": gpd.GeoDataFrame({"feature_id": ["E-1"]},
                                      geometry=[shapely.box(x0, (y0 + y1) / 2, x1, (y0 + y1) / 2 + 40)], crs=crs),
    }
    saved = dict(layers.frames)
    try:
        layers.frames.update(extra)
        path, plan = sp.write_siteplan(result, tmp_path)
    finally:
        layers.frames.clear()
        layers.frames.update(saved)
    assert plan.missing == []
    flat = " ".join(pdf_text(path).split())
    for label in ("(h) wetlands", "(h) ponds", "(f) utility easements, rights-of-way"):
        assert label in flat
    assert "All elements a-k supplied by the inputs." in flat


@pytest.mark.parametrize(("fcode", "dashed"), [(46003, True), (46006, False)])
def test_stream_kinds_read_through_the_rulebook_vocabulary(result, tmp_path, fcode, dashed):
    # NHD flowlines carry no `kind`, only FCODE: 46003 is intermittent, 46006 perennial in the
    # rulebook's stream_kind_vocabulary; 56600 (coastline) is not a stream and is not drawn
    layers = result.layers
    streams = layers.get_layer("streams")
    nhd = gpd.GeoDataFrame({"feature_id": streams["feature_id"], "FCODE": fcode}, geometry=streams.geometry.values,
                           crs=streams.crs)
    coast = gpd.GeoDataFrame({"feature_id": ["C-1"], "FCODE": [56600]}, geometry=[streams.geometry.values[0]],
                             crs=streams.crs)
    saved = dict(layers.frames)
    try:
        layers.frames["streams"] = pd.concat([nhd, coast], ignore_index=True)
        path, _ = sp.write_siteplan(result, tmp_path)
        kinds = sp.prepare_plan(result, 500).sources["streams"]
    finally:
        layers.frames.clear()
        layers.frames.update(saved)
    assert "C-1" not in set(kinds["feature_id"])
    assert set(kinds["kind"]) == {"intermittent" if dashed else "perennial"}
    flat = " ".join(pdf_text(path).split())
    assert ("intermittent streams" in flat) == dashed


def test_no_dem_no_contours(tmp_path):
    layers = gc.load_layers(gc.sample_path("vestal_sample.gpkg"))
    res = check_harvest(layers, gc.load_rulebook("vestal"))
    path, plan = sp.write_siteplan(res, tmp_path)
    assert plan.missing[0] == "b (dem)"  # the input (role) that would supply it, as HRV-002 says
    assert "b contours, 10 ft (DEM): NOT SUPPLIED" in " ".join(pdf_text(path).split())


def test_doctests():
    assert doctest.testmod(sp, optionflags=doctest.ELLIPSIS).failed == 0


# ------------------------------------------------------------------------------------------
# the georeference alone (pypdf, imported when a site plan is written)

NY_CENTRAL_FT = pyproj.CRS("EPSG:2261")  # NAD83 / New York Central (ftUS)


def blank_pdf(pages: int = 1) -> bytes:
    buf = io.BytesIO()
    with PdfPages(buf) as pdf:
        for _ in range(pages):
            pdf.savefig(Figure(figsize=(8.5, 11)))
    return buf.getvalue()


def test_corners_are_latitude_longitude_of_the_box():
    box = (900_000.0, 750_000.0, 905_000.0, 756_000.0)
    m = sp.measure_dict(NY_CENTRAL_FT, box, 1200 / 3937 / 0.3048)
    gpts = [float(v) for v in m["/GPTS"]]
    to_geo = pyproj.Transformer.from_crs(NY_CENTRAL_FT, NY_CENTRAL_FT.geodetic_crs, always_xy=True)
    corners = [(box[0], box[1]), (box[0], box[3]), (box[2], box[3]), (box[2], box[1])]  # LL, UL, UR, LR
    for i, (x, y) in enumerate(corners):
        lon, lat = to_geo.transform(x, y)
        assert gpts[2 * i] == pytest.approx(lat, abs=1e-9) and gpts[2 * i + 1] == pytest.approx(lon, abs=1e-9)
    assert 41 < gpts[0] < 45 and -78 < gpts[1] < -74  # central New York
    assert [str(u) for u in m["/PDU"]] == ["/USFT", "/SQFT", "/DEG"]
    assert int(m["/GCS"]["/EPSG"]) == 2261


@pytest.mark.parametrize(("ft_per_unit", "units"), [(1.0, "/FT"), (1 / 0.3048, "/M")])
def test_display_units_follow_the_crs_unit(ft_per_unit, units):
    m = sp.measure_dict(pyproj.CRS("EPSG:32618"), (500_000.0, 4_700_000.0, 501_000.0, 4_701_000.0), ft_per_unit)
    assert str(m["/PDU"][0]) == units


def test_viewport_on_every_page_read_back():
    pdf = sp.georeference(blank_pdf(2), [("sheet 1", (36.0, 36.0, 576.0, 756.0), (0.0, 0.0, 1000.0, 1333.0)),
                                         ("sheet 2", (36.0, 36.0, 576.0, 756.0), (1000.0, 0.0, 2000.0, 1333.0))],
                       pyproj.CRS("EPSG:32618"), 1 / 0.3048, {"Title": "t"})
    reader = PdfReader(io.BytesIO(pdf))
    assert reader.metadata["/Title"] == "t"
    names = [str(p["/VP"][0]["/Name"]) for p in reader.pages]
    assert names == ["sheet 1", "sheet 2"]
    assert [float(v) for v in reader.pages[0]["/VP"][0]["/BBox"]] == [36.0, 36.0, 576.0, 756.0]
    with pytest.raises(OutputError, match="has 1 pages but 2 map frames"):
        sp.georeference(blank_pdf(1), [("a", (0, 0, 1, 1), (0, 0, 1, 1))] * 2, pyproj.CRS("EPSG:32618"), 1.0, {})


def test_the_plan_finds_the_districts_spelled_as_the_checks_read_them():
    # a zoning field spelling RA-1 as "RA1" or "ra 1": drawn as RA-1 near the plan, as HRV-003 reads it (before:
    # compared as "RA1" with the rulebook's "RA-1", nothing was drawn)
    box = shapely.box
    parcels = gpd.GeoDataFrame({"zoning": ["RA1", "ra 1", "C-1", None]},
                               geometry=[box(0, 0, 10, 10), box(10, 0, 20, 10), box(20, 0, 30, 10), box(30, 0, 40, 10)],
                               crs="EPSG:2261")
    got = sp._near_districts({"parcels": parcels}, ["RA-1", "RA-2", "RC"], box(-5, -5, 45, 5),
                             source="parcels.zoning field")
    assert got is not None and got["district"].tolist() == ["RA-1", "RA-1"]
    assert shapely.area(got.geometry.values).tolist() == pytest.approx([50.0, 50.0])  # each 10 x 5 ft inside


# ------------------------------------------------------------------------------------------
# districts near the harvest area read with the rulebook's town_districts, as HRV-003 reads them

_TOWN = "[RA-1, RA-2, RC, RR, R-1, R-2, C-1, C-2, CD]"  # the sample town's districts, SQR-001's C-2 and CD


def _zoned(tmp_path, value, town):
    """The sample harvest checked with zoning polygon Z-10 (RA-2, 60 ft from the harvest area) holding
    ``value``; with the sample town's ``town_districts`` when ``town``."""
    rb = gc.load_rulebook("vestal")
    if town:
        (tmp_path / "town.yaml").write_text(f"extends: vestal\ntown_districts: {_TOWN}\n")
        rb = gc.load_rulebook(tmp_path / "town.yaml")
    layers = gc.load_layers(gc.sample_path("vestal_sample.gpkg"), dem=gc.sample_path("dem.tif"))
    z = layers.frames["zoning"]
    layers.frames["zoning"] = z.assign(district=z["district"].astype(object).where(z["feature_id"] != "Z-10", value))
    res = check_harvest(layers, rb)
    plan = sp.prepare_plan(res, 500)
    sp.load_frames(plan, plan.extent)
    f = res.findings
    return res, plan, f.loc[(f["rule_id"] == "HRV-003") & (f["subject_id"] == "HA-1")].iloc[0]


@pytest.mark.parametrize(("value", "town", "status", "near", "unknown"), [
    # a typo of RA-2: with town_districts HRV-003 cannot pass, and the plan shows (c) what it could not read
    ("RA-Z", True, "not_evaluated", None, ['district unknown ("RA-Z")']),
    # without them the rulebook reads it as a district the law does not list: nothing to show, as HRV-003 passes
    ("RA-Z", False, "pass", None, None),
    # a blank district is unknown either way (before: HRV-003 not evaluated, the plan showed nothing)
    (None, False, "not_evaluated", None, ["district unknown"]),
    (" ", True, "not_evaluated", None, ["district unknown"]),
    # a spelling of one of the town's districts reads as the district it spells
    ("ra 2", True, "review", ["RA-2"], None),
])
def test_districts_near_the_harvest_area_drawn_as_hrv003_reads_them(tmp_path, value, town, status, near, unknown):
    _res, plan, f = _zoned(tmp_path, value, town)
    assert f["status"] == status, f["message"]
    assert plan.town_districts == (tuple(_TOWN.strip("[]").split(", ")) if town else None)
    got = {k: plan.frames[k]["district"].tolist() if k in plan.frames else None
           for k in ("zoning_near", "zoning_unknown")}
    assert got == {"zoning_near": near, "zoning_unknown": unknown}


def test_unknown_district_near_the_harvest_area_labelled_on_the_sheet(tmp_path):
    res, _plan, f = _zoned(tmp_path, "RA-Z", True)
    assert 'Z-10 ("RA-Z")' in f["message"]  # the check names it; the sheet must show it too
    path, _pdf = sp.write_siteplan(res, tmp_path / "out")
    flat = " ".join(pdf_text(path).split())
    assert 'district unknown ("RA-Z")' in flat
    assert "(c) district unknown within 300 ft (as labelled)" in flat


# ------------------------------------------------------------------------------------------
# the plan draws districts from the source HRV-003 read: one choice, made over the whole inputs

def _zoning_case(case):
    """The sample harvest checked and its plan prepared, with the zoning inputs changed by ``case``;
    the plan and HRV-003's finding for harvest area HA-1."""
    layers = gc.load_layers(gc.sample_path("vestal_sample.gpkg"), dem=gc.sample_path("dem.tif"))
    if case == "zoning_far":  # the zoning layer moved 60,000 ft east: no polygon near the plan or on its sheets
        z = layers.frames["zoning"]
        layers.frames["zoning"] = z.set_geometry(z.geometry.translate(60_000, 0))
    else:
        del layers.frames["zoning"]
        if case == "blank_parcels_zoning":
            layers.frames["parcels"] = layers.frames["parcels"].assign(zoning=None)
    res = check_harvest(layers, gc.load_rulebook("vestal"))
    plan = sp.prepare_plan(res, 500)
    sp.load_frames(plan, plan.extent)
    f = res.findings
    return plan, f.loc[(f["rule_id"] == "HRV-003") & (f["subject_id"] == "HA-1")].iloc[0]


@pytest.mark.parametrize(("case", "source", "status", "near"), [
    # a zoning layer with no polygon near the plan: HRV-003 read it (not evaluated: land within 300 ft it does
    # not cover); before, the plan fell back to the parcels' zoning field on the sheets and hatched and labelled
    # RA-2 there, a district no check had read, and said element c came from parcels.zoning
    ("zoning_far", "zoning layer", "not_evaluated", None),
    # no zoning layer: both read the parcels' zoning field
    ("no_zoning_layer", "parcels.zoning field", "review", ["RA-2"]),
    # no zoning layer and a parcels' zoning field with no value: HRV-003 has no source; before, the plan
    # hatched every parcel near the harvest area "district unknown" from the field the checks found empty
    ("blank_parcels_zoning", None, "not_evaluated", None),
])
def test_the_plan_reads_districts_from_the_source_hrv003_read(case, source, status, near):
    plan, f = _zoning_case(case)
    assert f["status"] == status, f["message"]
    named = re.search(r"\((zoning layer|parcels\.zoning field)\)", f["message"])  # the source HRV-003 names
    assert (named.group(1) if named else None) == source, f["message"]
    drawn = {k: sorted(set(plan.frames[k]["district"])) if k in plan.frames else None
             for k in ("zoning_near", "zoning_unknown")}
    assert drawn == {"zoning_near": near, "zoning_unknown": None}
    shown, missing = next((p, m) for el, p, m in plan.elements if el.key == "c")
    assert ("parcels.zoning" in shown) == (source == "parcels.zoning field")
    assert bool(missing) == (status == "not_evaluated")  # "see HRV-002 c" (the gap) or "zoning or parcels.zoning"
    assert plan.zoning_source == source


def test_a_harvest_area_without_a_shape_is_refused_with_the_reason(result) -> None:
    # a Result whose harvest_area layer holds features but no polygon (assembled by hand: load_layers drops
    # empty geometries): the site plan says what is wrong, as OutputError, with or without python -O
    import dataclasses

    ha = result.layers.frames["harvest_area"]
    frames = {**result.layers.frames, "harvest_area": ha.set_geometry(gpd.GeoSeries([None] * len(ha), crs=ha.crs))}
    bare = dataclasses.replace(result, layers=dataclasses.replace(result.layers, frames=frames))
    with pytest.raises(OutputError, match="harvest_area layer with at least one polygon drawn"):
        sp.prepare_plan(bare, 500)
