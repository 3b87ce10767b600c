"""Tests for geoconstraints.output.plots: the data plotted (checked before drawing) and the PNGs."""

from __future__ import annotations

import base64
import dataclasses
import io

import numpy as np
import pandas as pd
import pytest
import rasterio
from matplotlib.image import imread

import geoconstraints as gc
from geoconstraints.commands import check_harvest, check_stormwater, classify_action, screen_parcels
from geoconstraints.output import plots
from geoconstraints.result import Result
from geoconstraints.rulebook.findings import empty_findings


def png_shape(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    img = imread(io.BytesIO(data), format="png")
    return img.shape[1], img.shape[0]


@pytest.fixture(scope="module")
def vestal():
    return gc.load_rulebook("vestal")


@pytest.fixture(scope="module")
def harvest(sample_harvest):
    return sample_harvest


@pytest.fixture(scope="module")
def profiles(harvest):
    return plots.road_profiles(harvest)


# ------------------------------------------------------------------------------------------
# road profiles

def test_one_profile_per_road(profiles, harvest):
    want = {(r, i) for r in plots.ROAD_LAYERS for i in harvest.layers.get_layer(r)["feature_id"].astype(str)}
    assert {(p.layer, p.road_id) for p in profiles} == want


def test_highlighted_runs_are_the_results_exceeding_runs(profiles, harvest):
    runs = harvest.derived["grade_runs"]
    want = runs[runs["exceeds"].astype(bool)].sort_values(["road_layer", "road_id", "start_ft"])
    got = pd.concat([p.exceeding.assign(road_layer=p.layer, road_id=p.road_id) for p in profiles])
    got = got.sort_values(["road_layer", "road_id", "start_ft"])
    assert len(want) == len(got) == 1  # haul road H-1 of the sample
    np.testing.assert_allclose(got[["start_ft", "end_ft", "length_ft"]].to_numpy(dtype=float),
                               want[["start_ft", "end_ft", "length_ft"]].to_numpy(dtype=float))
    h1 = next(p for p in profiles if p.road_id == "H-1")
    # the run is over the rulebook's limits (HRV-010: 25 % for more than 200 ft)
    assert (h1.max_grade_pct, h1.max_run_ft) == (25.0, 200.0)
    r = h1.exceeding.iloc[0]
    assert r["length_ft"] > 200 and r["mean_grade_pct"] > 25
    # the plot shades the grades HRV-010 judges (the same running median over the same window):
    # over the limit on the whole run, and at most the limit on the segments just outside it
    inside = (h1.dist_ft[:-1] >= r["start_ft"] - 1e-6) & (h1.dist_ft[1:] <= r["end_ft"] + 1e-6)
    assert inside.sum() > 10 and (h1.grade_pct[inside] > 25).all()
    before = np.flatnonzero(h1.dist_ft[1:] <= r["start_ft"] + 1e-6)
    after = np.flatnonzero(h1.dist_ft[:-1] >= r["end_ft"] - 1e-6)
    for edge in ([before[-1]] if len(before) else []) + ([after[0]] if len(after) else []):
        assert h1.grade_pct[edge] <= 25


def test_water_bars_marked_are_the_results(profiles, harvest):
    table = harvest.tables["roads"].set_index("road_id")
    for p in profiles:
        if p.layer == "haul_roads":
            assert len(p.water_bars_ft) == table.loc[p.road_id, "water_bars"]
            wb = harvest.derived["water_bars"]
            want = np.sort(wb.loc[wb["road_id"] == p.road_id, "dist_ft"].to_numpy(dtype=float))
            np.testing.assert_allclose(p.water_bars_ft, want, atol=0.01)
        else:
            assert len(p.water_bars_ft) == 0


def test_profile_elevations_from_the_dem(profiles, harvest):
    """Profile elevations = bilinear interpolation of the DEM, computed here from rasterio's array."""
    p = next(p for p in profiles if p.road_id == "H-1")
    line = harvest.layers.get_layer("haul_roads").set_index("feature_id").loc["H-1", "geometry"]
    with rasterio.open(gc.sample_path("dem.tif")) as dem:
        z = dem.read(1).astype(float)
        inv = ~dem.transform
    for frac in (0.0, 0.37, 1.0):
        pt = line.interpolate(frac, normalized=True)
        c, r = inv @ (pt.x, pt.y)
        c, r = c - 0.5, r - 0.5  # from cell corners to cell centres
        c0, r0 = int(np.floor(c)), int(np.floor(r))
        fc, fr = c - c0, r - r0
        want = ((1 - fc) * (1 - fr) * z[r0, c0] + fc * (1 - fr) * z[r0, c0 + 1]
                + (1 - fc) * fr * z[r0 + 1, c0] + fc * fr * z[r0 + 1, c0 + 1])
        got = np.interp(frac * line.length, p.dist_ft, p.z_ft)
        assert got == pytest.approx(want, abs=0.2)  # ft; between samples the profile is linear


def test_grade_classes_from_the_rulebook(harvest):
    edges, limit, run, window = plots.grade_classes(harvest)
    assert edges == [2.0, 6.0, 11.0, 16.0, 25.0]  # HRV-030 min grade and band bounds, HRV-010 limit
    assert (limit, run) == (25.0, 200.0)
    # HRV-010's window: 15 ft, or 3 cells of the sample's 10-ft DEM when wider (30 ft), the one the
    # roads table reports
    assert window == pytest.approx(3 * harvest.layers.dem.cell_size_ft) == pytest.approx(30.0, abs=1e-3)
    assert (harvest.tables["roads"]["grade_window_ft"] == window).all()


def test_profile_png(profiles):
    png = plots.render_profile(profiles[0])
    assert png_shape(png) == (8 * plots.DPI, round(3.4 * plots.DPI))


def test_no_dem_no_profiles(vestal):
    res = check_harvest(gc.load_layers(gc.sample_path("vestal_sample.gpkg")), vestal)
    assert plots.road_profiles(res) == []


# ------------------------------------------------------------------------------------------
# stormwater timeline

@pytest.fixture(scope="module")
def stormwater(vestal):
    layers = gc.load_layers(gc.sample_path("vestal_sample.gpkg"))
    return check_stormwater(layers, vestal, rainfall=gc.sample_path("rainfall.csv"))


def test_timeline_peak_and_limit(stormwater):
    d = plots.timeline_data(stormwater)
    t = stormwater.tables["disturbance_timeline"]
    assert d.peak_acres == t["disturbed_acres"].max() == pytest.approx(6.189, abs=0.001)
    assert list(d.peak_rows) == list(np.flatnonzero(t["peak"].to_numpy()))
    assert d.limit_acres == 5.0  # SWP-005
    assert len(d.edges) == len(t) + 1
    assert d.edges[-1] == pd.Timestamp(t["date_to"].iloc[-1]) + pd.Timedelta(days=1)
    f = stormwater.findings
    swp5 = f[f["rule_id"] == "SWP-005"].iloc[0]
    assert swp5["measured"] == pytest.approx(d.peak_acres) and swp5["threshold"] == d.limit_acres
    assert png_shape(plots.render_timeline(d)) == (8 * plots.DPI, round(3.6 * plots.DPI))


def test_timeline_limit_from_the_users_rulebook(tmp_path):
    rb = tmp_path / "town.yaml"
    rb.write_text("extends: vestal\nrules:\n  - id: SWP-005\n    thresholds:\n      max_concurrent_acres: 4\n")
    res = check_stormwater(gc.load_layers(gc.sample_path("vestal_sample.gpkg")), gc.load_rulebook(rb))
    assert plots.timeline_data(res).limit_acres == 4.0


# ------------------------------------------------------------------------------------------
# SFHA share histogram

def _screen_result(vestal, parcels: pd.DataFrame) -> Result:
    return Result(command="screen", rulebook=vestal, findings=empty_findings(), tables={"parcels": parcels})


def test_histogram_by_hand(vestal):
    t = pd.DataFrame({"sfha_share": [0.0, 0.05, 0.10, 0.1000001, 1.0, 0.0, 0.5],
                      "flood_data": ["full", "full", "full", "partial", "full", "no_data", "full"]})
    h = plots.sfha_histogram_data(_screen_result(vestal, t))
    assert h.labels[:3] == ["none", "0-10 %", "10-20 %"] and h.labels[-1] == "90-100 %"
    # none: 1 (the no_data parcel is not counted); (0,10]: 0.05 and 0.10; (10,20]: 0.1000001;
    # (40,50]: 0.5; (90,100]: 1.0
    assert h.counts.tolist() == [1, 2, 1, 0, 0, 1, 0, 0, 0, 0, 1]
    assert (h.not_evaluated, h.partial) == (1, 1)
    assert png_shape(plots.render_sfha_histogram(h)) == (round(7.5 * plots.DPI), round(3.6 * plots.DPI))


def test_histogram_of_the_sample_town(vestal):
    res = screen_parcels(gc.load_layers(gc.sample_path("vestal_sample.gpkg")), vestal)
    t = res.tables["parcels"]
    h = plots.sfha_histogram_data(res)
    ok = t["flood_data"] != "no_data"
    assert h.counts.sum() == ok.sum() and h.not_evaluated == (~ok).sum()
    share = t.loc[ok, "sfha_share"].to_numpy()
    assert h.counts[0] == (share == 0).sum()
    assert h.counts[-1] == ((share > 0.9) & (share <= 1.0)).sum()


# ------------------------------------------------------------------------------------------
# all plots, data URIs, files

def test_render_plots_per_command(harvest, stormwater, vestal):
    names = set(plots.render_plots(harvest))
    assert names == {f"profile_{p}_{i}.png" for p, i in (("haul_roads", "H-1"), ("haul_roads", "H-2"),
                                                          ("haul_roads", "H-3"), ("skid_trails", "S-1"),
                                                          ("skid_trails", "S-2"), ("skid_trails", "S-3"),
                                                          ("skid_trails", "S-4"))}
    assert set(plots.render_plots(stormwater)) == {"disturbance_timeline.png"}
    # the same layers and DEM checked by another command: no road profiles (flood-site on the sample)
    assert plots.road_profiles(dataclasses.replace(harvest, command="flood-site")) == []
    assert plots.render_plots(classify_action(vestal, action_type="multiple_residence", units=3)) == {}


def test_data_uris_decode(stormwater):
    uris = plots.plot_data_uris(stormwater)
    prefix = "data:image/png;base64,"
    assert uris and all(u.startswith(prefix) for u in uris.values())
    png = base64.b64decode(uris["disturbance_timeline.png"][len(prefix):])
    assert png_shape(png) == (8 * plots.DPI, round(3.6 * plots.DPI))


def test_write_plots(stormwater, vestal, tmp_path):
    written = plots.write_plots(stormwater, tmp_path / "out")
    assert list(written) == ["plots/disturbance_timeline.png"]
    assert written["plots/disturbance_timeline.png"].read_bytes()[:4] == b"\x89PNG"
    assert plots.write_plots(classify_action(vestal, action_type="multiple_residence", units=3),
                             tmp_path / "none") == {}
    assert not (tmp_path / "none").exists()


def test_file_names_are_safe(vestal, harvest, monkeypatch):
    p = plots.road_profiles(harvest)[0]
    monkeypatch.setattr(plots, "road_profiles",
                        lambda r: [plots.RoadProfile(**{**p.__dict__, "road_id": "a/b"}),
                                   plots.RoadProfile(**{**p.__dict__, "road_id": "a:b"})])
    assert set(plots.render_plots(harvest)) == {"profile_haul_roads_a_b-c14cddc0.png", "profile_haul_roads_a_b-6783a31e.png"}


def test_long_ids_give_bounded_file_names(vestal, harvest, monkeypatch, tmp_path):
    # a 252-character haul-road id (legal in a GeoPackage) failed the whole run: File name too long
    p = plots.road_profiles(harvest)[0]
    long_id = "H-" + "9" * 250
    monkeypatch.setattr(plots, "road_profiles",
                        lambda r: [plots.RoadProfile(**{**p.__dict__, "road_id": long_id}),
                                   plots.RoadProfile(**{**p.__dict__, "road_id": long_id[:-1] + "8"})])
    written = plots.write_plots(harvest, tmp_path)
    names = sorted(path.name for path in written.values())
    assert len(names) == 2 and all(n.startswith("profile_haul_roads_H-999") and len(n) <= 100 for n in names)
    assert sorted(k.split("/")[1] for k in written) == names and all(path.is_file() for path in written.values())


def test_report_captions_name_the_road_by_its_id_not_its_file_name(harvest, monkeypatch):
    # roads whose file names carry a hash (ids equal under case folding, a long id, an id with markup):
    # the report's caption names each road by its own id, escaped, never by the file name
    import hashlib
    import re
    from html import unescape

    from geoconstraints.output import report

    p = plots.road_profiles(harvest)[0]
    ids = ["H-1", "h-1", "H-" + "9" * 250, 'a<b>&"c']
    monkeypatch.setattr(plots, "road_profiles",
                        lambda r: [plots.RoadProfile(**{**p.__dict__, "road_id": i}) for i in ids]
                        + [plots.RoadProfile(**{**p.__dict__, "road_id": "S-2", "layer": "skid_trails", "part": 1})])
    names = list(plots.render_plots(harvest))
    assert names[0] == f"profile_haul_roads_H-1-{hashlib.sha256(b'H-1').hexdigest()[:8]}.png"
    subjects = [f"haul road {i}" for i in ids] + ["skid trail S-2 (part 2)"]
    page = report.render_report(harvest, overview=False)
    figures = re.findall(r'<figure class="plot" data-plot="(profile_[^"]+)"><img src="[^"]+" alt="([^"]*)">'
                         r"<figcaption>(.*?)</figcaption>", page)
    assert [name for name, _, _ in figures] == names
    for (name, alt, caption), subject in zip(figures, subjects):
        assert unescape(alt) == unescape(caption)
        assert unescape(caption).startswith(f"Profile of {subject}: elevation from the DEM"), caption
        part = re.sub(r"^profile_(haul_roads|skid_trails)_", "", name)[:-len(".png")]
        assert part not in unescape(caption)  # not the file name, so no hash
    assert "a<b>&" not in page and "a&lt;b&gt;&amp;&#34;c" in figures[3][2]
    assert [(d.name, d.subject) for d in plots.drawn_plots(harvest)] == list(zip(names, subjects))
