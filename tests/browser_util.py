"""Helpers for the output tests: a small synthetic Result, a local web server, headless Chromium.

The synthetic run is a flood screening of four 200 ft x 200 ft parcels near Vestal NY
(EPSG:2261, US survey feet) with a few harvest findings, derived layers of every kind the
outputs style (buffer strips, grade runs, water bars, contours) and a parcel whose id is
``<script>alert(1)</script>`` to prove every output escapes attribute text.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import geopandas as gpd
import pandas as pd
from common import NY_FT
from shapely.geometry import LineString, Point, box

from geoconstraints.commands import screen_parcels
from geoconstraints.io.layers import load_layers
from geoconstraints.result import Result, make_result
from geoconstraints.rulebook.loader import load_rulebook

XSS_ID = "<script>alert(1)</script>"
"""A parcel id that would run script if any output failed to escape it."""

SECRET = "hunter2"
"""A password placed in an option value; it must never reach an output."""

SFHA_SHARE = [0.997, 0.25, 0.0004, float("nan")]
"""SFHA share of the four parcels in the parcels table: 99.7 %, 25 %, 0.04 %, no data."""

BFE_NOTE = "no BFE line on the stream within the search distance: BFE not interpolated"
"""A long note repeated on three parcels (shown once in the report's legend of notes)."""

X0, Y0 = 964_000.0, 760_000.0  # EPSG:2261 feet, near Vestal NY (-76.05, 42.085)
PARCEL_IDS = ["P-1", "P-2", XSS_ID, "P&4"]
CRS = NY_FT


def write_inputs(folder: Path) -> Path:
    """Write the synthetic input GeoPackage (layers named by role) and return its path."""
    parcels = gpd.GeoDataFrame(
        {"parcel_id": PARCEL_IDS, "owner": ["Ada", "Bo", "Cy <b>bold</b>", "Di & Co"]},
        geometry=[box(X0 + i * 200, Y0, X0 + (i + 1) * 200, Y0 + 200) for i in range(4)], crs=CRS)
    flood = gpd.GeoDataFrame(
        {"FLD_AR_ID": ["F1", "F2"], "FLD_ZONE": ["AE", "X"],
         "ZONE_SUBTY": ["", "0.2 PCT ANNUAL CHANCE FLOOD HAZARD"], "SFHA_TF": ["T", "F"],
         "STATIC_BFE": [830.0, -9999.0], "DFIRM_ID": ["36007C", "36007C"],
         "EFF_DATE": ["2010-08-03", "2010-08-03"]},
        geometry=[box(X0 - 50, Y0 - 50, X0 + 300, Y0 + 250), box(X0 + 300, Y0 - 50, X0 + 500, Y0 + 250)],
        crs=CRS)
    streams = gpd.GeoDataFrame({"id": ["S1"], "kind": ["perennial"]},
                               geometry=[LineString([(X0 - 50, Y0 + 100), (X0 + 850, Y0 + 120)])], crs=CRS)
    haul = gpd.GeoDataFrame({"id": ["R1"]},
                            geometry=[LineString([(X0 + 100, Y0 + 400), (X0 + 700, Y0 + 450)])], crs=CRS)
    path = folder / "inputs.gpkg"
    for name, g in (("parcels", parcels), ("flood_zones", flood), ("streams", streams), ("haul_roads", haul)):
        g.to_file(path, layer=name, driver="GPKG")
    return path


def make_synthetic_result(folder: Path) -> Result:
    """Build a screening Result over :func:`write_inputs` with findings of every status."""
    folder.mkdir(parents=True, exist_ok=True)
    layers = load_layers(write_inputs(folder))
    rb = load_rulebook("vestal")
    parcels = layers["parcels"]
    fld1 = rb["FLD-001"]
    sfha_sqft = [40000.0, 10000.0, 0.0, float("nan")]
    items: list[Any] = [fld1.findings(
        ["violation", "review", "pass", "not_evaluated"], subject_layer="parcels",
        subject_id=parcels["feature_id"], measured=sfha_sqft, threshold=fld1.t("min_overlap_sqft"),
        unit="sqft", geometry=parcels.geometry.values, crs=layers.crs,
        detail=["in zone AE", "partly in zone AE", "outside the SFHA", "outside the flood layer"])]
    hrv10 = rb["HRV-010"]
    run = LineString([(X0 + 200, Y0 + 416.7), (X0 + 460, Y0 + 438.3)])
    items.append(hrv10.findings("violation", subject_layer="haul_roads", subject_id="R1",
                               measured=261.0, threshold=hrv10.t("max_run_ft"), unit="ft",
                               geometry=run, detail="grade over 25 % for 261 ft"))
    hrv30 = rb["HRV-030"]
    bars = [Point(X0 + 250, Y0 + 420.8), Point(X0 + 350, Y0 + 429.2)]
    for i, p in enumerate(bars):
        items.append(hrv30.findings("info", subject_layer="haul_roads", subject_id=f"R1 bar {i + 1}",
                                   measured=100.0 * (i + 1), unit="ft", geometry=p,
                                   detail=f"water bar {i + 1} at {100 * (i + 1)} ft"))
    fld10 = rb["FLD-010"]
    items.append(fld10.findings("info", detail="the flood layer is DFIRM 36007C effective 2010-08-03"))
    stream = layers["streams"]
    derived = {
        "buffer_strips": gpd.GeoDataFrame({"source": ["stream S1"], "width_ft": [50.0]},
                                          geometry=[stream.geometry.iloc[0].buffer(50)], crs=layers.crs),
        "grade_runs": gpd.GeoDataFrame({"road": ["R1"], "length_ft": [261.0], "max_grade_pct": [31.5]},
                                       geometry=[run], crs=layers.crs),
        "water_bars": gpd.GeoDataFrame({"road": ["R1", "R1"], "station_ft": [100.0, 200.0]},
                                       geometry=bars, crs=layers.crs),
        "contours": gpd.GeoDataFrame(
            {"elev_ft": [820.0, 830.0, 840.0]},
            geometry=[LineString([(X0 - 50, Y0 + 300 + 60 * k), (X0 + 850, Y0 + 330 + 60 * k)]) for k in range(3)],
            crs=layers.crs),
    }
    statuses = ["violation", "review", "pass", "not_evaluated"]
    table = pd.DataFrame({"parcel_id": PARCEL_IDS, "owner": ["Ada", "Bo", "Cy <b>bold</b>", "Di & Co"],
                          "worst_status": statuses, "FLD-001": statuses,
                          "sfha_sqft": sfha_sqft, "sfha_share": SFHA_SHARE, "area_acres": [0.918] * 4,
                          "flood_zone": ["AE", "AE", "X", ""], "bfe_note": [BFE_NOTE, BFE_NOTE, "", BFE_NOTE],
                          "zone_change": [None] * 4})
    result = make_result("screen", rb, items, layers, derived=derived, tables={"parcels": table})
    result.options = {"postgis": f"PG:host=db user=clerk password={SECRET} dbname=gis",
                      "source_url": f"postgresql://clerk:{SECRET}@db:5432/gis", "offline": True}
    return result


def make_encroachment_result(folder: Path) -> Result:
    """A real screening (``screen_parcels``) of three 200 ft x 200 ft parcels: E-1 wholly in an AE polygon whose
    ZONE_SUBTY is STATE ENCROACHMENT AREA (FLD-002 not_evaluated: floodway not determined), E-2 in the floodway
    (AE, FLOODWAY), E-3 in plain AE."""
    folder.mkdir(parents=True, exist_ok=True)
    parcels = gpd.GeoDataFrame({"parcel_id": ["E-1", "E-2", "E-3"]},
                               geometry=[box(X0 + i * 1000, Y0, X0 + i * 1000 + 200, Y0 + 200) for i in range(3)],
                               crs=CRS)
    flood = gpd.GeoDataFrame(
        {"FLD_AR_ID": ["F1", "F2", "F3"], "FLD_ZONE": ["AE", "AE", "AE"],
         "ZONE_SUBTY": ["STATE ENCROACHMENT AREA", "FLOODWAY", ""], "SFHA_TF": ["T", "T", "T"]},
        geometry=[box(X0 + i * 1000 - 10, Y0 - 10, X0 + i * 1000 + 210, Y0 + 210) for i in range(3)], crs=CRS)
    path = folder / "inputs.gpkg"
    for name, g in (("parcels", parcels), ("flood_zones", flood)):
        g.to_file(path, layer=name, driver="GPKG")
    return screen_parcels(load_layers(path), load_rulebook("vestal"), findings="all")


# ------------------------------------------------------------------------------------------
# a local web server

class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextlib.contextmanager
def serve(folder: Path) -> Iterator[str]:
    """Serve ``folder`` on 127.0.0.1 (a free port) in a thread; yield the base URL."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        t.join(timeout=5)


# ------------------------------------------------------------------------------------------
# headless chromium

INSTALL_HINT = "run `bash scripts/browser_deps.sh` (installs Debian chromium, chromium-driver and selenium)"

CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run",
                  "--disable-dev-shm-usage", "--window-size=1280,900")


def find_browser() -> tuple[str, str]:
    """Paths of chromium and chromedriver; AssertionError naming the install script when missing."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver") or (
        "/usr/lib/chromium/chromedriver" if os.access("/usr/lib/chromium/chromedriver", os.X_OK) else None)
    assert chromium and driver, f"headless chromium or chromedriver not found: {INSTALL_HINT}"
    return chromium, driver


def make_driver(profile_dir: Path) -> Any:
    """A selenium Chrome driver on Debian's chromium, headless, with a fresh profile folder."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError as exc:  # pragma: no cover - depends on the machine
        raise AssertionError(f"selenium is not installed: {INSTALL_HINT}") from exc
    chromium, driver = find_browser()
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for flag in CHROMIUM_FLAGS:
        opts.add_argument(flag)
    opts.add_argument(f"--user-data-dir={profile_dir}")
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(executable_path=driver), options=opts)
