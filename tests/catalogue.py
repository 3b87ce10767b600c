"""A named catalogue of bad and edge inputs (in the manner of shapely's ``tests/common.py``).

Each catalogue entry is a function ``entry(folder) -> Case`` that writes one bad or edge input
into ``folder`` and says how a user would run it (``args`` after ``geoconstraints``), which exit
code the CLI must give, and which words its one-line message must contain (the file, layer or
field it names, and the fix). :data:`CATALOGUE` maps the entry names to the functions;
``tests/test_bad_inputs.py`` runs every one through the CLI and checks that no input changed.

The synthetic town sits in Vestal, NY (around lon -76.05, lat 42.08), in EPSG:2261
(NY Central, US survey feet), where the default working CRS is EPSG:2261.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import geopandas as gpd
import numpy as np
from common import NY_FT, REALDATA, X0, Y0
from shapely.geometry import LineString, Point, Polygon, box


@dataclass
class Case:
    """How to run one catalogue input and what the CLI must answer."""

    args: list[str]
    exit_code: int
    expect: tuple[str, ...]
    """Fragments the output (stdout + stderr) must contain (case-sensitive)."""
    forbid: tuple[str, ...] = ()
    """Fragments the output must not contain."""
    out_dir: Path | None = None
    """The --out folder of the run, when it must not be created (exit 2 before writing)."""
    notes: str = ""
    extra: dict = field(default_factory=dict)


# ------------------------------------------------------------------------------------------
# base layers (valid), each small and hand-checkable

def parcels(n: int = 3, crs: str | int = NY_FT) -> gpd.GeoDataFrame:
    """``n`` square parcels of 200 ft x 200 ft (40,000 sq ft = 0.9183 acres) side by side."""
    geoms = [box(X0 + 200 * i, Y0, X0 + 200 * (i + 1), Y0 + 200) for i in range(n)]
    gdf = gpd.GeoDataFrame({"parcel_id": [f"P{i + 1}" for i in range(n)],
                            "zoning": ["RA-1"] * n}, geometry=geoms, crs=NY_FT)
    return gdf if str(crs) == NY_FT else gdf.to_crs(crs)


def flood_zones(crs: str | int = NY_FT) -> gpd.GeoDataFrame:
    """Two NFHL-like zones: AE with a BFE, X with the -9999 'no BFE' sentinel."""
    gdf = gpd.GeoDataFrame(
        {"FLD_AR_ID": ["FA1", "FA2"], "FLD_ZONE": ["AE", "X"], "ZONE_SUBTY": [None, "AREA OF MINIMAL FLOOD HAZARD"],
         "SFHA_TF": ["T", "F"], "STATIC_BFE": [812.0, -9999.0], "DEPTH": [-9999.0, -9999.0],
         "V_DATUM": ["NAVD88", "NAVD88"], "DFIRM_ID": ["36007C", "36007C"]},
        geometry=[box(X0 - 100, Y0 - 100, X0 + 300, Y0 + 300), box(X0 + 300, Y0 - 100, X0 + 700, Y0 + 300)],
        crs=NY_FT,
    )
    return gdf if str(crs) == NY_FT else gdf.to_crs(crs)


def harvest_area() -> gpd.GeoDataFrame:
    """One 500 ft x 400 ft harvest area (200,000 sq ft = 4.591 acres)."""
    return gpd.GeoDataFrame({"id": ["H1"]}, geometry=[box(X0, Y0, X0 + 500, Y0 + 400)], crs=NY_FT)


def write_gpkg(path: Path, layers: dict[str, gpd.GeoDataFrame]) -> Path:
    """Write role-named layers into one GeoPackage."""
    for name, gdf in layers.items():
        gdf.to_file(path, layer=name, driver="GPKG", engine="pyogrio")
    return path


def sample_gpkg(folder: Path, name: str = "town.gpkg") -> Path:
    """A valid GeoPackage with parcels and flood_zones in EPSG:2261."""
    return write_gpkg(folder / name, {"parcels": parcels(), "flood_zones": flood_zones()})


def write_dem(path: Path, *, units: str | None = None, crs: str = NY_FT, nodata: float | None = None) -> Path:
    """A 40 x 40 DEM of 10 ft cells covering the sample parcels; band unit ``units`` or none."""
    import rasterio
    from affine import Affine

    z = (800.0 + np.add.outer(np.arange(40), np.arange(40)) * 0.5).astype("float32")
    with rasterio.open(path, "w", driver="GTiff", width=40, height=40, count=1, dtype="float32",
                       crs=crs, transform=Affine(10, 0, X0 - 50, 0, -10, Y0 + 350), nodata=nodata) as dst:
        dst.write(z, 1)
        if units:
            dst.update_tags(1, UNITTYPE=units)
            dst.set_band_unit(1, units)
    return path


def screen(folder: Path, source: Path | str | None, *extra: str) -> list[str]:
    """``geoconstraints screen SOURCE --out folder/out ...``."""
    args = ["screen"] + ([str(source)] if source is not None else []) + list(extra)
    return args + ["--out", str(folder / "out")]


def harvest(folder: Path, source: Path | str, *extra: str) -> list[str]:
    """``geoconstraints harvest SOURCE --out folder/out ...``."""
    return ["harvest", str(source), *extra, "--out", str(folder / "out")]


def run_case(case: Case, folder: Path, runner, monkeypatch, *, quiet: bool = True) -> None:
    """Run ``case`` through the CLI in ``folder`` (the working folder, or the case's ``extra["cwd"]``) and
    assert what every bad input must answer: its exit code, the fragments, no traceback; refused: one
    ``error:`` line and no ``--out`` folder left; accepted and ``quiet``: nothing on stderr; every input
    byte for byte unchanged, the working folder not replaced."""
    from conftest import tree_hashes

    from geoconstraints.cli import main

    monkeypatch.chdir(case.extra.get("cwd", folder))  # any side effect (e.g. an executed YAML tag) lands here
    before = tree_hashes(folder)
    res = runner.invoke(main, case.args)
    out = res.output
    assert res.exit_code == case.exit_code, out
    assert "Traceback" not in out
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    for fragment in case.expect:
        assert fragment in out, f"{fragment!r} not in {out!r}"
    for fragment in case.forbid:
        assert fragment not in out, f"{fragment!r} in {out!r}"
    if case.exit_code == 2:
        assert res.stdout == ""
        lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    elif quiet:
        assert res.stderr == "", res.stderr
    if case.out_dir is not None:
        assert not case.out_dir.exists(), "a refused run must not create its output folder"
    if "cwd" in case.extra:
        assert case.extra["cwd"].is_dir() and not any(case.extra["cwd"].iterdir()), "the working folder was replaced"
    after = tree_hashes(folder)
    assert {p: after.get(p) for p in before} == before, "an input file changed"


CATALOGUE: dict[str, Callable[[Path], Case]] = {}


def entry(fn: Callable[[Path], Case]) -> Callable[[Path], Case]:
    """Register a catalogue entry under its function name."""
    CATALOGUE[fn.__name__] = fn
    return fn


# ------------------------------------------------------------------------------------------
# CRS and units

@entry
def no_crs(folder: Path) -> Case:
    """A shapefile without its .prj: refused, the message suggests lon/lat is not the case here."""
    shp = folder / "parcels.shp"
    parcels().to_file(shp, engine="pyogrio")
    shp.with_suffix(".prj").unlink()
    return Case(screen(folder, None, "--parcels", str(shp)), 2,
                ("layer parcels (parcels.shp)", "has no CRS", "ogr2ogr -a_srs"), out_dir=folder / "out")


@entry
def no_crs_lonlat(folder: Path) -> Case:
    """A GeoJSON-like file in lon/lat but without a CRS (shapefile, no .prj): the hint says lon/lat."""
    shp = folder / "zones.shp"
    flood_zones(4326).to_file(shp, engine="pyogrio")
    shp.with_suffix(".prj").unlink()
    return Case(screen(folder, sample_gpkg(folder), "--flood-zones", str(shp)), 2,
                ("layer flood_zones (zones.shp)", "has no CRS", "longitude/latitude", "-a_srs"),
                out_dir=folder / "out")


@entry
def lonlat_labelled_state_plane(folder: Path) -> Case:
    """Lon/lat coordinates whose CRS says EPSG:2261 (a wrong .prj): refused, the label is wrong."""
    wrong = parcels(crs=4326).set_crs(NY_FT, allow_override=True)
    gpkg = write_gpkg(folder / "wrong.gpkg", {"parcels": wrong})
    return Case(screen(folder, gpkg), 2, ("layer parcels (wrong.gpkg:parcels)", "longitude/latitude",
                                          "EPSG:2261", "-a_srs"), out_dir=folder / "out")


@entry
def lonlat_geojson(folder: Path) -> Case:
    """Parcels in lon/lat (GeoJSON, EPSG:4326): handled, reprojected to NY State Plane Central."""
    gj = folder / "parcels.geojson"
    parcels(crs=4326).to_file(gj, driver="GeoJSON", engine="pyogrio")
    return Case(["layers", str(gj)], 0, ("parcels", "3 features", "EPSG:4326", "working CRS EPSG:2261"))


@entry
def mixed_crs(folder: Path) -> Case:
    """Parcels in EPSG:2261 and flood zones in EPSG:4269 (NAD83 lon/lat): reprojected, exit 0."""
    gpkg = write_gpkg(folder / "mixed.gpkg", {"parcels": parcels(), "flood_zones": flood_zones(4269)})
    return Case(["layers", str(gpkg)], 0, ("note: layers in 2 CRSs (parcels EPSG:2261; flood_zones EPSG:4269)",
                                          "reprojects them all to one working CRS in feet"))


@entry
def geographic_working_crs(folder: Path) -> Case:
    """--crs EPSG:4326: a geographic working CRS is refused (distances need feet)."""
    return Case(screen(folder, sample_gpkg(folder), "--crs", "EPSG:4326"), 2,
                ("--crs EPSG:4326 is geographic", "projected CRS in feet"), out_dir=folder / "out")


@entry
def metre_working_crs(folder: Path) -> Case:
    """--crs EPSG:32618 (UTM in metres): refused, geoconstraints works in feet."""
    return Case(screen(folder, sample_gpkg(folder), "--crs", "EPSG:32618"), 2,
                ("--crs EPSG:32618 is in metre", "works in feet", "EPSG:2261"), out_dir=folder / "out")


@entry
def unknown_working_crs(folder: Path) -> Case:
    """--crs EPSG:999999: not a CRS pyproj knows."""
    return Case(screen(folder, sample_gpkg(folder), "--crs", "EPSG:999999"), 2,
                ("--crs 'EPSG:999999' is not a CRS", "EPSG:2261"), out_dir=folder / "out")


@entry
def dem_without_vertical_units(folder: Path) -> Case:
    """A DEM whose metadata does not state its vertical units and no --dem-z-units: refused."""
    gpkg = write_gpkg(folder / "plan.gpkg", {"harvest_area": harvest_area()})
    dem = write_dem(folder / "dem.tif", units=None)
    return Case(harvest(folder, gpkg, "--dem", str(dem)), 2, ("DEM dem.tif", "--dem-z-units"),
                out_dir=folder / "out")


@entry
def dem_zero_bytes(folder: Path) -> Case:
    """A zero-byte DEM: refused as unreadable."""
    gpkg = write_gpkg(folder / "plan.gpkg", {"harvest_area": harvest_area()})
    dem = folder / "dem.tif"
    dem.write_bytes(b"")
    return Case(harvest(folder, gpkg, "--dem", str(dem), "--dem-z-units", "ft"), 2,
                ("dem.tif", "0 bytes"), out_dir=folder / "out")


@entry
def dem_corrupt(folder: Path) -> Case:
    """A DEM that is a text file renamed .tif: refused as unreadable."""
    gpkg = write_gpkg(folder / "plan.gpkg", {"harvest_area": harvest_area()})
    dem = folder / "dem.tif"
    dem.write_text("this is not a GeoTIFF\n" * 50)
    return Case(harvest(folder, gpkg, "--dem", str(dem), "--dem-z-units", "ft"), 2,
                ("DEM", "dem.tif", "cannot be read", "GeoTIFF"), out_dir=folder / "out")


# ------------------------------------------------------------------------------------------
# files

@entry
def zero_byte_file(folder: Path) -> Case:
    """A zero-byte GeoPackage: refused, the message says 0 bytes and to export again."""
    gpkg = folder / "empty.gpkg"
    gpkg.write_bytes(b"")
    return Case(screen(folder, gpkg), 2, ("empty.gpkg", "0 bytes", "Export the layer again"),
                out_dir=folder / "out")


@entry
def corrupt_file(folder: Path) -> Case:
    """Random text named .gpkg: refused as unreadable vector data."""
    gpkg = folder / "corrupt.gpkg"
    gpkg.write_text("not a database " * 200)
    return Case(screen(folder, gpkg), 2, ("corrupt.gpkg", "cannot be read", "not corrupt"),
                out_dir=folder / "out")


@entry
def truncated_gpkg(folder: Path) -> Case:
    """A GeoPackage cut after its first 2 kB (an interrupted copy): refused, naming the file."""
    good = sample_gpkg(folder, "whole.gpkg")
    cut = folder / "cut.gpkg"
    cut.write_bytes(good.read_bytes()[:2048])
    good.unlink()
    return Case(screen(folder, cut), 2, ("cut.gpkg", "cannot be read as vector data (database disk image is malformed)"),
                forbid=("sqlite3_prepare",), out_dir=folder / "out")


@entry
def missing_file(folder: Path) -> Case:
    """A path that does not exist."""
    return Case(screen(folder, sample_gpkg(folder), "--flood-zones", str(folder / "nofile.shp")), 2,
                ("layer flood_zones (nofile.shp)", "does not exist", "Check the path"),
                out_dir=folder / "out")


@entry
def shapefile_without_shx(folder: Path) -> Case:
    """A shapefile copied without its .shx index: refused, the fix names the .shx."""
    shp = folder / "parcels.shp"
    parcels().to_file(shp, engine="pyogrio")
    shp.with_suffix(".shx").unlink()
    return Case(screen(folder, None, "--parcels", str(shp)), 2, ("layer parcels (parcels.shp)", ".shx"),
                out_dir=folder / "out")


@entry
def wrong_layer_name(folder: Path) -> Case:
    """--flood-zones FILE:LAYER naming a layer the file does not have: the message lists its layers."""
    gpkg = sample_gpkg(folder)
    return Case(screen(folder, gpkg, "--flood-zones", f"{gpkg}:S_FLD_HAZ_AR"), 2,
                ("has no layer 'S_FLD_HAZ_AR'", "it has parcels, flood_zones"), out_dir=folder / "out")


@entry
def no_role_layers(folder: Path) -> Case:
    """A GeoPackage whose layer names are not role names: the fix says how to map them."""
    gpkg = write_gpkg(folder / "tax.gpkg", {"tax_parcels_2024": parcels()})
    return Case(screen(folder, gpkg), 2, ("tax.gpkg", "none of its layers is named after a role",
                                          "--ROLE PATH:LAYER"), out_dir=folder / "out")


@entry
def attribute_table_only(folder: Path) -> Case:
    """The real Lexington S_FLD_HAZ_AR .dbf (no .shp) given as flood zones: no geometry, refused."""
    dbf = folder / "S_FLD_HAZ_AR.dbf"
    shutil.copyfile(REALDATA / "lexington_va" / "S_FLD_HAZ_AR_attributes_only.dbf", dbf)
    return Case(screen(folder, sample_gpkg(folder), "--flood-zones", str(dbf)), 2,
                ("layer flood_zones (S_FLD_HAZ_AR.dbf)", "no geometry", "attribute table", "the .shp beside the .dbf"),
                out_dir=folder / "out")


@entry
def bad_project_toml(folder: Path) -> Case:
    """A project file that is not valid TOML."""
    gpkg = sample_gpkg(folder)
    proj = folder / "project.toml"
    proj.write_text(f'[layers.parcels]\npath = "{gpkg.name}\n')
    return Case(screen(folder, None, "--project", str(proj)), 2, ("project file", "project.toml",
                                                                 "not valid TOML", "Fix the file"),
                out_dir=folder / "out")


@entry
def project_unknown_role(folder: Path) -> Case:
    """A project file with a role that does not exist: the message lists the roles."""
    gpkg = sample_gpkg(folder)
    proj = folder / "project.toml"
    proj.write_text(f'[layers.parcel]\npath = "{gpkg.name}"\nlayer = "parcels"\n')
    return Case(screen(folder, None, "--project", str(proj)), 2, ("unknown role 'parcel'", "parcels, flood_zones"),
                out_dir=folder / "out")


# ------------------------------------------------------------------------------------------
# fields and ids

@entry
def missing_required_field(folder: Path) -> Case:
    """Flood zones without FLD_ZONE: the message names the field and the project-file fix."""
    fz = flood_zones().drop(columns=["FLD_ZONE"])
    gpkg = write_gpkg(folder / "town.gpkg", {"parcels": parcels(), "flood_zones": fz})
    return Case(screen(folder, gpkg), 2, ("layer flood_zones (town.gpkg:flood_zones)", "FLD_ZONE missing",
                                          "fields = { FLD_ZONE = \"YOUR_FIELD\" }"), out_dir=folder / "out")


@entry
def mapped_field_absent(folder: Path) -> Case:
    """A project file mapping FLD_ZONE to a field the layer does not have."""
    gpkg = sample_gpkg(folder)
    proj = folder / "project.toml"
    proj.write_text(f'[layers.parcels]\npath = "{gpkg.name}"\nlayer = "parcels"\n'
                    f'[layers.flood_zones]\npath = "{gpkg.name}"\nlayer = "flood_zones"\n'
                    f'fields = {{ FLD_ZONE = "ZONE" }}\n')
    return Case(screen(folder, None, "--project", str(proj)), 2, ("layer flood_zones", "field 'ZONE'",
                                                                 "not found", "FLD_ZONE"),
                out_dir=folder / "out")


@entry
def lowercase_fields(folder: Path) -> Case:
    """NFHL fields in lower case (fld_zone, static_bfe): mapped to the canonical names, exit 0."""
    fz = flood_zones()
    fz.columns = [c.lower() if c != "geometry" else c for c in fz.columns]
    gpkg = write_gpkg(folder / "lower.gpkg", {"parcels": parcels(), "flood_zones": fz})
    return Case(["layers", str(gpkg)], 0, ("flood_zones", "FLD_ZONE", "STATIC_BFE", "SFHA_TF"),
                forbid=("fld_zone", "static_bfe", "problem"))


@entry
def nfhl_sentinels(folder: Path) -> Case:
    """STATIC_BFE / DEPTH -9999 (NFHL 'none'): loaded as missing, exit 0 (checked in test_layers too)."""
    gpkg = sample_gpkg(folder)
    return Case(["layers", str(gpkg)], 0, ("flood_zones", "2 features"), forbid=("-9999",))


@entry
def duplicate_ids(folder: Path) -> Case:
    """Two parcels with the same parcel_id and --strict: refused, naming the duplicated id."""
    p = parcels()
    p.loc[2, "parcel_id"] = "P1"
    gpkg = write_gpkg(folder / "town.gpkg", {"parcels": p})
    return Case(["--strict", *screen(folder, gpkg)], 2, ("layer parcels (town.gpkg:parcels)",
                                                         "duplicate ids in field parcel_id: P1",
                                                         "Each feature needs its own id"), out_dir=folder / "out")


@entry
def duplicate_ids_told_apart(folder: Path) -> Case:
    """Cambridge MA's parcels repeat ids ('---' x2, '--R' x4): the run goes on, the features are
    'ID (row N)', one warning gives the count and examples and names --strict."""
    p = parcels(6)
    p["parcel_id"] = ["---", "--R", "---", "--R", "--R", "--R"]
    gpkg = write_gpkg(folder / "town.gpkg", {"parcels": p})
    return Case(["layers", str(gpkg)], 0, ("6 feature(s) share an id in field parcel_id (--- (2x), --R (4x))",
                                           "'ID (row N)'", "--strict"))


@entry
def blank_ids(folder: Path) -> Case:
    """A parcel with an empty parcel_id: warned, features are then identified by row number."""
    p = parcels()
    p.loc[1, "parcel_id"] = None
    gpkg = write_gpkg(folder / "town.gpkg", {"parcels": p})
    return Case(["layers", str(gpkg)], 0, ("id field parcel_id is empty in rows 2 (1 feature(s))", "row number"))


# ------------------------------------------------------------------------------------------
# geometry

@entry
def bow_tie(folder: Path) -> Case:
    """A self-intersecting (bow-tie) parcel: repaired with make_valid, the warning names its id."""
    p = parcels()
    p.loc[1, "geometry"] = Polygon([(X0, Y0), (X0 + 200, Y0 + 200), (X0 + 200, Y0), (X0, Y0 + 200)])
    gpkg = write_gpkg(folder / "town.gpkg", {"parcels": p})
    return Case(["layers", str(gpkg)], 0, ("1 invalid geometry repaired with make_valid: P2",))


@entry
def empty_layer(folder: Path) -> Case:
    """A parcels layer with no features: warned (rules needing parcels are not evaluated)."""
    gpkg = write_gpkg(folder / "town.gpkg", {"parcels": parcels().iloc[0:0]})
    return Case(["layers", str(gpkg)], 0, ("parcels", "has no features", "not evaluated"))


@entry
def empty_geometries(folder: Path) -> Case:
    """Two features with empty/null geometry: dropped with a warning naming them."""
    p = parcels(4)
    p.loc[1, "geometry"] = Polygon()
    p.loc[3, "geometry"] = None
    gpkg = write_gpkg(folder / "town.gpkg", {"parcels": p})
    return Case(["layers", str(gpkg)], 0, ("2 feature(s) with empty geometry dropped: P2, P4", "2 features"))


@entry
def z_coordinates(folder: Path) -> Case:
    """Parcels with Z coordinates: Z dropped with a warning, exit 0."""
    import shapely

    p = parcels()
    p = p.set_geometry(shapely.force_3d(p.geometry.values, 850.0), crs=NY_FT)
    gpkg = write_gpkg(folder / "town.gpkg", {"parcels": p})
    return Case(["layers", str(gpkg)], 0, ("parcels", "Z coordinates dropped"))


@entry
def point_in_polygon_layer(folder: Path) -> Case:
    """A point among the parcels (polygon role): refused, naming the feature."""
    p = parcels()
    p.loc[2, "geometry"] = Point(X0 + 500, Y0 + 100)
    gpkg = folder / "town.gpkg"
    p.to_file(gpkg, layer="parcels", driver="GPKG", engine="pyogrio", geometry_type="Unknown")
    return Case(screen(folder, gpkg), 2, ("layer parcels (town.gpkg:parcels)", "expected polygon geometries",
                                          "found point in feature(s) P3"), out_dir=folder / "out")


@entry
def line_as_harvest_area(folder: Path) -> Case:
    """Haul roads given as the harvest area (lines in a polygon role): refused."""
    roads = gpd.GeoDataFrame({"id": ["R1", "R2"]}, geometry=[LineString([(X0, Y0), (X0 + 300, Y0 + 40)]),
                                                             LineString([(X0, Y0), (X0, Y0 + 300)])], crs=NY_FT)
    gpkg = write_gpkg(folder / "plan.gpkg", {"haul_roads": roads})
    return Case(harvest(folder, gpkg, "--harvest-area", f"{gpkg}:haul_roads"), 2,
                ("layer harvest_area (plan.gpkg:haul_roads)", "expected polygon", "found line", "R1, R2"),
                out_dir=folder / "out")


@entry
def geometry_collection(folder: Path) -> Case:
    """A GeometryCollection in a polygon layer: refused (it is not a polygon)."""
    from shapely.geometry import GeometryCollection

    p = parcels()
    p.loc[0, "geometry"] = GeometryCollection([box(X0, Y0, X0 + 200, Y0 + 200), Point(X0, Y0)])
    gpkg = folder / "town.gpkg"
    p.to_file(gpkg, layer="parcels", driver="GPKG", engine="pyogrio", geometry_type="Unknown")
    return Case(screen(folder, gpkg), 2, ("layer parcels", "found collection", "P1"), out_dir=folder / "out")


# ------------------------------------------------------------------------------------------
# rulebooks

@entry
def unknown_rulebook(folder: Path) -> Case:
    """--rulebook with a name that is not shipped: the message lists the available ones."""
    return Case(["rules", "--rulebook", "endicott"], 2,
                ("unknown rulebook 'endicott'", "Available rulebooks: lockport, vestal"))


@entry
def rulebook_missing_file(folder: Path) -> Case:
    """--rulebook path.yaml that does not exist."""
    return Case(["rules", "--rulebook", str(folder / "mine.yaml")], 2, ("mine.yaml does not exist", "lockport, vestal"))


@entry
def rulebook_python_tag(folder: Path) -> Case:
    """A rulebook with a !!python/object tag: refused by yaml.safe_load, nothing executed."""
    y = folder / "evil.yaml"
    y.write_text("extends: vestal\nrules: !!python/object/apply:os.system ['echo pwned > pwned.txt']\n")
    return Case(["rules", "--rulebook", str(y)], 2, ("evil.yaml", "not valid YAML"), forbid=("pwned\n",))


@entry
def rulebook_threshold_without_unit(folder: Path) -> Case:
    """A threshold whose name has no unit suffix: refused, listing the suffixes."""
    y = folder / "mine.yaml"
    y.write_text("extends: vestal\nrules:\n  - id: HRV-010\n    thresholds:\n      max_grade: 30\n")
    return Case(["rules", "--rulebook", str(y)], 2, ("mine.yaml", "HRV-010", "'max_grade'",
                                                     "must end with a unit suffix", "_pct"))


@entry
def rulebook_zero_interval(folder: Path) -> Case:
    """An inspection interval of 0 days: refused at load (it divided by zero in the stormwater run)."""
    y = folder / "mine.yaml"
    y.write_text("extends: vestal\nrules:\n  - id: SWP-007\n    thresholds: {inspection_interval_days: 0}\n")
    return Case(["rules", "--rulebook", str(y)], 2, ("mine.yaml", "SWP-007", "inspection_interval_days = 0",
                                                     "whole number of days (1 or more)"))


@entry
def rulebook_waiver_without_reason(folder: Path) -> Case:
    """A waiver with an empty reason: refused."""
    y = folder / "mine.yaml"
    y.write_text("extends: vestal\nwaive:\n  HRV-040: ''\n")
    return Case(["rules", "--rulebook", str(y)], 2, ("mine.yaml", "waiver of HRV-040 needs a reason"))


@entry
def rulebook_waiver_unknown_rule(folder: Path) -> Case:
    """A waiver of a rule that does not exist: refused."""
    y = folder / "mine.yaml"
    y.write_text("extends: vestal\nwaive:\n  HRV-999: not needed here\n")
    return Case(["rules", "--rulebook", str(y)], 2, ("mine.yaml", "cannot waive HRV-999", "no such rule"))


@entry
def rulebook_bad_switch(folder: Path) -> Case:
    """A switch set to a value outside its choices: refused, listing the choices."""
    from geoconstraints.rulebook.loader import load_rulebook

    rule = next(r for r in load_rulebook("vestal") if any(s.get("choices") for s in r.switches.values()))
    name = next(k for k, s in rule.switches.items() if s.get("choices"))
    y = folder / "mine.yaml"
    y.write_text(f"extends: vestal\nrules:\n  - id: {rule.id}\n    switches:\n      {name}: nonsense\n")
    choices = ", ".join(map(str, rule.switches[name]["choices"]))
    return Case(["rules", "--rulebook", str(y)], 2, ("mine.yaml", rule.id, f"{name} = 'nonsense'", choices))


# ------------------------------------------------------------------------------------------
# outputs

@entry
def out_is_a_file(folder: Path) -> Case:
    """--out names an existing file: refused before any work, nothing written over it."""
    gpkg = sample_gpkg(folder)
    target = folder / "notes.txt"
    target.write_text("my notes\n")
    return Case(screen(folder, gpkg)[:-2] + ["--out", str(target)], 2,
                ("--out", "notes.txt", "is an existing file", "Choose a folder"))


@entry
def out_is_an_input_file(folder: Path) -> Case:
    """--out is the input GeoPackage itself: refused."""
    gpkg = sample_gpkg(folder)
    return Case(screen(folder, gpkg)[:-2] + ["--out", str(gpkg)], 2, ("--out", "town.gpkg", "existing file"))


@entry
def out_would_overwrite_input(folder: Path) -> Case:
    """The parcels are ``findings.geojson`` inside the --out folder: an output would overwrite them."""
    gj = folder / "findings.geojson"
    parcels(crs=4326).to_file(gj, driver="GeoJSON", engine="pyogrio")
    return Case(screen(folder, None, "--parcels", str(gj))[:-2] + ["--out", str(folder)], 2,
                ("findings.geojson", "is one of the inputs", "Choose another --out folder"))


# ------------------------------------------------------------------------------------------
# numbers: NaN, infinity and meaningless negatives are refused, never read as a pass

def flood_site(folder: Path, *extra: str) -> list[str]:
    """``geoconstraints flood-site`` on one footprint inside the AE zone, with ``extra`` options."""
    fp = gpd.GeoDataFrame({"id": ["F1"]}, geometry=[box(X0 + 20, Y0 + 20, X0 + 80, Y0 + 70)], crs=NY_FT)
    gpkg = write_gpkg(folder / "site.gpkg", {"footprints": fp, "parcels": parcels(), "flood_zones": flood_zones()})
    return ["flood-site", str(gpkg), "--use", "residential", *extra, "--out", str(folder / "out")]


def _option_case(folder: Path, option: str, value: str, *fragments: str) -> Case:
    return Case(flood_site(folder, option, value), 2, (f"'{option}'", *fragments, "--help"), out_dir=folder / "out")


@entry
def option_improvement_cost_nan(folder: Path) -> Case:
    """--improvement-cost nan: NaN compares false with the 50 % limit and made FLD-008 pass."""
    return _option_case(folder, "--improvement-cost", "nan", "nan is not a finite number", "at least 0")


@entry
def option_openings_sqin_nan(folder: Path) -> Case:
    """--openings-sqin nan: made FLD-007 pass."""
    return _option_case(folder, "--openings-sqin", "nan", "nan is not a finite number")


@entry
def option_enclosed_sqft_negative(folder: Path) -> Case:
    """--enclosed-sqft -800: a negative area made FLD-007's required opening area negative (pass)."""
    return _option_case(folder, "--enclosed-sqft", "-800", "-800 is negative", "at least 0")


@entry
def option_lowest_floor_nan(folder: Path) -> Case:
    """--lowest-floor-ft nan: was read as 'below the BFE'."""
    return _option_case(folder, "--lowest-floor-ft", "nan", "nan is not a finite number", "Give an elevation in feet")


@entry
def option_lowest_floor_infinite(folder: Path) -> Case:
    """--lowest-floor-ft inf: an infinitely high floor is no elevation."""
    return _option_case(folder, "--lowest-floor-ft", "inf", "inf is not a finite number")


@entry
def option_market_value_zero(folder: Path) -> Case:
    """--market-value 0: the improvement share would divide by zero."""
    return _option_case(folder, "--market-value", "0", "0 is less than 1", "at least 1")


@entry
def option_market_value_tiny(folder: Path) -> Case:
    """--market-value 1e-300: the improvement share overflowed and FLD-008 printed "inf %" (review)."""
    return _option_case(folder, "--market-value", "1e-300", "1e-300 is less than 1", "at least 1")


@entry
def option_openings_not_whole(folder: Path) -> Case:
    """--openings 2.5: a count of openings is whole."""
    return _option_case(folder, "--openings", "2.5", "2.5 is not a whole number")


@entry
def option_not_a_number(folder: Path) -> Case:
    """--bfe-ft ten: not a number."""
    return _option_case(folder, "--bfe-ft", "ten", "'ten' is not a number")


@entry
def seqr_units_negative(folder: Path) -> Case:
    """seqr --units -3: a negative number of dwelling units."""
    return Case(["seqr", "--action-type", "multiple_residence", "--units", "-3"], 2,
                ("'--units'", "-3 is negative", "whole number of 0 or more"))


@entry
def seqr_units_not_whole(folder: Path) -> Case:
    """seqr --units 29.5: a count of dwelling units is whole (29.5 read against "less than 30" was Type II
    from Python; the option's type comes from SEQR_NUMBER_BOUNDS, the table classify_action refuses with)."""
    return Case(["seqr", "--action-type", "multiple_residence", "--units", "29.5"], 2,
                ("'--units'", "29.5 is not a whole number", "whole number of 0 or more"))


@entry
def seqr_lots_not_whole(folder: Path) -> Case:
    """seqr --lots 39.5: the houses of a subdivision are counted whole (bound: less than 40)."""
    return Case(["seqr", "--action-type", "small_subdivision", "--lots", "39.5", "--per-chapter-24"], 2,
                ("'--lots'", "39.5 is not a whole number", "whole number of 0 or more"))


@entry
def seqr_lanes_not_whole(folder: Path) -> Case:
    """seqr --lanes 0.5: travel lanes added are counted whole (bound: not more than 1)."""
    return Case(["seqr", "--action-type", "highway_reconstruction", "--acres", "1", "--lanes", "0.5",
                 "--no-effect-on", "all"], 2, ("'--lanes'", "0.5 is not a whole number", "whole number of 0 or more"))


@entry
def seqr_acres_infinite(folder: Path) -> Case:
    """seqr --acres 1e400 (infinity once parsed)."""
    return Case(["seqr", "--action-type", "surplus_property", "--acres", "1e400"], 2,
                ("'--acres'", "1e400 is not a finite number"))


@entry
def screen_limit_negative(folder: Path) -> Case:
    """--report-max-parcels -1: refused before any work, one line."""
    return Case(screen(folder, sample_gpkg(folder), "--report-max-parcels", "-1"), 2,
                ("'--report-max-parcels'", "-1 is negative"), out_dir=folder / "out")


@entry
def siteplan_scale_nan(folder: Path) -> Case:
    """siteplan --scale nan: refused naming --scale and the law's minimum."""
    gpkg = write_gpkg(folder / "plan.gpkg", {"harvest_area": harvest_area()})
    return Case(["siteplan", str(gpkg), "--scale", "nan", "--out", str(folder / "out")], 2, ("--scale",),
                out_dir=folder / "out")


# ------------------------------------------------------------------------------------------
# usage errors: one line, naming the option

@entry
def usage_missing_out(folder: Path) -> Case:
    """No --out: click's usage text becomes one line."""
    return Case(["screen", str(sample_gpkg(folder))], 2, ("Missing option '--out'", "geoconstraints screen --help"))


@entry
def usage_option_typo(folder: Path) -> Case:
    """--outt: the message suggests --out."""
    return Case(["screen", str(sample_gpkg(folder)), "--outt", "x"], 2, ("No such option", "'--out'"))


@entry
def usage_dem_is_a_folder(folder: Path) -> Case:
    """--dem given a folder."""
    gpkg = write_gpkg(folder / "plan.gpkg", {"harvest_area": harvest_area()})
    return Case(harvest(folder, gpkg, "--dem", str(folder)), 2, ("'--dem'", "is a directory"),
                out_dir=folder / "out")


# ------------------------------------------------------------------------------------------
# rulebooks: the schema (types, ranges, unknown keys), bounded YAML

def rulebook_run(folder: Path, text: str, name: str = "mine.yaml") -> list[str]:
    """``geoconstraints rules --rulebook FILE`` with a user rulebook holding ``text``."""
    y = folder / name
    y.write_text(text, "utf-8")
    return ["rules", "--rulebook", str(y)]


@entry
def rulebook_threshold_nan(folder: Path) -> Case:
    """min_distance_ft: .nan made every HRV-025 distance 'not under' NaN: violations became passes."""
    return Case(rulebook_run(folder, "extends: vestal\nrules:\n  - id: HRV-025\n    thresholds:\n"
                                     "      min_distance_ft: .nan\n"), 2,
                ("mine.yaml", "rule HRV-025 threshold min_distance_ft = nan is not a finite number"))


@entry
def rulebook_threshold_negative(folder: Path) -> Case:
    """buffer_width_ft: -50: a negative buffer holds nothing."""
    return Case(rulebook_run(folder, "extends: vestal\nrules:\n  - id: HRV-020\n    thresholds:\n"
                                     "      buffer_width_ft: -50\n"), 2,
                ("rule HRV-020 threshold buffer_width_ft = -50 is negative", "a length in feet is 0 or more"))


@entry
def rulebook_threshold_infinite(folder: Path) -> Case:
    """max_grade_pct: .inf: no grade is over it."""
    return Case(rulebook_run(folder, "extends: vestal\nrules:\n  - id: HRV-010\n    thresholds:\n"
                                     "      max_grade_pct: .inf\n"), 2,
                ("rule HRV-010 threshold max_grade_pct = inf is not a finite number",))


@entry
def rulebook_negative_percentage(folder: Path) -> Case:
    """substantial_improvement_pct: -5."""
    return Case(rulebook_run(folder, "extends: vestal\nrules:\n  - id: FLD-008\n    thresholds:\n"
                                     "      substantial_improvement_pct: -5\n"), 2,
                ("threshold substantial_improvement_pct = -5 is negative: a percentage is 0 or more",))


@entry
def rulebook_threshold_text(folder: Path) -> Case:
    """max_grade_pct: '30 %' (text, not a number)."""
    return Case(rulebook_run(folder, "extends: vestal\nrules:\n  - id: HRV-010\n    thresholds:\n"
                                     "      max_grade_pct: '30 %'\n"), 2,
                ("threshold max_grade_pct = '30 %' is not a number",))


@entry
def rulebook_key_typo(folder: Path) -> Case:
    """threshold: (for thresholds:) was silently ignored: the rule ran with the town's numbers."""
    return Case(rulebook_run(folder, "extends: vestal\nrules:\n  - id: HRV-010\n    threshold:\n"
                                     "      max_grade_pct: 30\n"), 2,
                ("rule HRV-010: unknown key 'threshold' (did you mean 'thresholds'?)", "Keys of a rule are id"))


@entry
def rulebook_top_key_typo(folder: Path) -> Case:
    """rule: (for rules:) at the top."""
    return Case(rulebook_run(folder, "extends: vestal\nrule:\n  - id: HRV-010\n"), 2,
                ("unknown key 'rule' (did you mean 'rules'?)", "Keys of a rulebook are"))


@entry
def rulebook_thresholds_not_a_mapping(folder: Path) -> Case:
    """thresholds: 5."""
    return Case(rulebook_run(folder, "extends: vestal\nrules:\n  - id: HRV-010\n    thresholds: 5\n"), 2,
                ("rule HRV-010 thresholds = 5 is not a mapping",))


@entry
def rulebook_switch_key_typo(folder: Path) -> Case:
    """A switch with choice: (for choices:)."""
    return Case(rulebook_run(folder, "extends: vestal\nrules:\n  - id: HRV-010\n    switches:\n      run_length:\n"
                                     "        value: slope\n        choice: [horizontal, slope]\n"), 2,
                ("unknown key 'choice' (did you mean 'choices'?)", "value, choices, doc"))


@entry
def rulebook_param_nan(folder: Path) -> Case:
    """A NaN inside a free-form param."""
    return Case(rulebook_run(folder, "extends: vestal\nrules:\n  - id: FLD-003\n    params:\n"
                                     "      extra: [{freeboard_ft: .nan}]\n"), 2,
                ("rule FLD-003 params.extra[0].freeboard_ft = nan is not a finite number",))


@entry
def rulebook_param_wrong_shape(folder: Path) -> Case:
    """sfha_zones: 5 (a number where the code iterates a list of zones) fell through to the generic
    "could not complete (TypeError...)"."""
    return Case(rulebook_run(folder, "extends: vestal\nrules:\n  - id: FLD-001\n    params:\n"
                                     "      sfha_zones: 5\n"), 2,
                ("rule FLD-001 params.sfha_zones = 5 is a number; it must be a list",
                 "sfha_zones: [A, AE,"))


@entry
def rulebook_param_list_for_text(folder: Path) -> Case:
    """sfha_field: [SFHA_TF, X] (a list where a field name is expected) was accepted silently."""
    return Case(rulebook_run(folder, "extends: vestal\nrules:\n  - id: FLD-001\n    params:\n"
                                     "      sfha_field: [SFHA_TF, X]\n"), 2,
                ("rule FLD-001 params.sfha_field = ['SFHA_TF', 'X'] is a list; it must be a text",
                 "(sfha_field: SFHA_TF)"))


@entry
def rulebook_inputs_unknown_role(folder: Path) -> Case:
    """inputs: {roles: [parcel]}: the rule-level inputs key is checked too."""
    return Case(rulebook_run(folder, "extends: vestal\nrules:\n  - id: FLD-001\n    inputs:\n"
                                     "      roles: [parcel, flood_zones]\n"), 2,
                ("rule FLD-001 inputs.roles: 'parcel' is not an input role (did you mean 'parcels'?)",))


@entry
def rulebook_rule_twice(folder: Path) -> Case:
    """The same rule listed twice: the second silently won."""
    return Case(rulebook_run(folder, "extends: vestal\nrules:\n  - id: HRV-010\n    thresholds: {max_grade_pct: 30}\n"
                                     "  - id: HRV-010\n    thresholds: {max_run_ft: 100}\n"), 2,
                ("rule HRV-010 is listed twice",))


@entry
def rulebook_billion_laughs(folder: Path) -> Case:
    """A 9-level 'billion laughs' (a few hundred bytes expanding to 9^9 values): refused at once."""
    levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, cur in zip("abcdefgh", "bcdefghi"):
        levels.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 9) + "]")
    text = "extends: vestal\nnotes: x\n" + "\n".join(levels) + "\n"
    return Case(rulebook_run(folder, text), 2, ("mine.yaml", "expands to more than 200,000 values"))


@entry
def rulebook_recursive_alias(folder: Path) -> Case:
    """An alias inside its own anchor."""
    return Case(rulebook_run(folder, "extends: vestal\nrules: &r [*r]\n"), 2, ("mine.yaml", "alias inside its own anchor"))


@entry
def rulebook_too_many_aliases(folder: Path) -> Case:
    """More than 100 aliases."""
    text = "extends: vestal\nx: &x 1\ny: [" + ",".join(["*x"] * 150) + "]\n"
    return Case(rulebook_run(folder, text), 2, ("mine.yaml", "more than 100 aliases"))


@entry
def rulebook_nested_too_deeply(folder: Path) -> Case:
    """[[[[...]]]] 50,000 deep: Python's recursion limit, named."""
    return Case(rulebook_run(folder, "rules: " + "[" * 50_000 + "]" * 50_000 + "\n"), 2,
                ("mine.yaml", "nested too deeply"))


@entry
def rulebook_too_large(folder: Path) -> Case:
    """A 2 MiB rulebook: over the 1 MiB limit, refused before parsing."""
    return Case(rulebook_run(folder, "extends: vestal\n" + "# filler\n" * 262_144), 2,
                ("mine.yaml", "larger than 1024 kB"))


@entry
def rulebook_not_utf8(folder: Path) -> Case:
    """A rulebook saved in another encoding (Latin-1 bytes)."""
    y = folder / "mine.yaml"
    y.write_bytes("extends: vestal\ntitle: Vestal \u00a7 6\n".encode("latin-1"))
    return Case(["rules", "--rulebook", str(y)], 2, ("mine.yaml", "not UTF-8 text", "Save it as UTF-8"))


@entry
def rulebook_fifo(folder: Path) -> Case:
    """A named pipe as --rulebook: refused without opening it (reading it would hang)."""
    import os

    fifo = folder / "mine.yaml"
    os.mkfifo(fifo)
    return Case(["rules", "--rulebook", str(fifo)], 2, ("mine.yaml is not a regular file (a named pipe)",))


@entry
def rulebook_template_attribute_lookup(folder: Path) -> Case:
    """A message template reaching into Python objects ({subject_id.__class__})."""
    return Case(rulebook_run(folder, "extends: vestal\nrules:\n  - id: HRV-025\n    messages:\n"
                                     "      violation: '{subject_id.__class__.__mro__}'\n"), 2,
                ("HRV-025 messages.violation", "is not a plain name"))


@entry
def rulebook_template_huge_width(folder: Path) -> Case:
    """A template asking for a field 999,999,999 characters wide (gigabytes per message)."""
    return Case(rulebook_run(folder, "extends: vestal\nrules:\n  - id: HRV-025\n    messages:\n"
                                     "      violation: '{subject_id:>999999999}'\n"), 2,
                ("HRV-025 messages.violation", "only alignment and a width of at most 80"))


# ------------------------------------------------------------------------------------------
# special files, sizes, URLs, GDAL virtual paths

@entry
def fifo_as_parcels(folder: Path) -> Case:
    """A named pipe as --parcels: hung forever; now refused before it is opened."""
    import os

    fifo = folder / "parcels.gpkg"
    os.mkfifo(fifo)
    return Case(screen(folder, None, "--parcels", str(fifo)), 2,
                ("layer parcels (parcels.gpkg)", "is not a regular file (a named pipe)"), out_dir=folder / "out")


@entry
def device_as_project(folder: Path) -> Case:
    """--project /dev/zero: grew to 6.7 GB in 12 s; now refused without reading a byte."""
    return Case(screen(folder, None, "--project", "/dev/zero"), 2,
                ("project file", "/dev/zero is not a regular file (a device)"), out_dir=folder / "out")


@entry
def device_as_dem(folder: Path) -> Case:
    """--dem /dev/zero."""
    gpkg = write_gpkg(folder / "plan.gpkg", {"harvest_area": harvest_area()})
    return Case(harvest(folder, gpkg, "--dem", "/dev/zero", "--dem-z-units", "ft"), 2,
                ("DEM", "/dev/zero is not a regular file (a device)"), out_dir=folder / "out")


@entry
def project_too_large(folder: Path) -> Case:
    """A 2 MiB project file: over the 1 MiB limit."""
    proj = folder / "project.toml"
    proj.write_text("# filler\n" * 262_144)
    return Case(screen(folder, None, "--project", str(proj)), 2, ("project file", "larger than 1024 kB"),
                out_dir=folder / "out")


@entry
def folder_as_parcels(folder: Path) -> Case:
    """A folder of shapefiles given as --parcels."""
    sub = folder / "shapes"
    sub.mkdir()
    parcels().to_file(sub / "parcels.shp", engine="pyogrio")
    return Case(screen(folder, None, "--parcels", str(sub)), 2, ("shapes is a folder", "Give the file inside it"),
                out_dir=folder / "out")


@entry
def url_unreachable(folder: Path) -> Case:
    """--parcels http://127.0.0.1:9/...: passed to GDAL (/vsicurl/), refused cleanly (nothing listens there)."""
    return Case(screen(folder, None, "--parcels", "http://127.0.0.1:9/parcels.geojson"), 2,
                ("layer parcels (/vsicurl/http://127.0.0.1:9/parcels.geojson)", "read over the network by GDAL",
                 "download the file"), out_dir=folder / "out")


@entry
def vsizip_shapefile(folder: Path) -> Case:
    """A zipped shapefile read in place with /vsizip/: handled, exit 0."""
    import zipfile

    sub = folder / "shp"
    sub.mkdir()
    parcels().to_file(sub / "parcels.shp", engine="pyogrio")
    zpath = folder / "parcels.zip"
    with zipfile.ZipFile(zpath, "w") as z:
        for f in sorted(sub.iterdir()):
            z.write(f, f.name)
    return Case(["layers", f"/vsizip/{zpath}/parcels.shp"], 0, ("role parcels: 3 features (Polygon), CRS EPSG:2261",))


@entry
def vsizip_without_data(folder: Path) -> Case:
    """/vsizip/ of a zip holding no vector data."""
    import zipfile

    zpath = folder / "notes.zip"
    with zipfile.ZipFile(zpath, "w") as z:
        z.writestr("readme.txt", "no shapes here\n")
    return Case(screen(folder, None, "--parcels", f"/vsizip/{zpath}/readme.txt"), 2,
                ("layer parcels (/vsizip/", "cannot be read"), out_dir=folder / "out")


# ------------------------------------------------------------------------------------------
# project files: a schema, never a traceback

def project(folder: Path, text: str) -> Path:
    """``project.toml`` in ``folder`` holding ``text`` (with a valid town.gpkg beside it)."""
    sample_gpkg(folder)
    proj = folder / "project.toml"
    proj.write_text(text, "utf-8")
    return proj


@entry
def project_layer_wrong_type(folder: Path) -> Case:
    """[layers] parcels = 5: was a TypeError."""
    proj = project(folder, "[layers]\nparcels = 5\n")
    return Case(screen(folder, None, "--project", str(proj)), 2,
                ("project file", "layers.parcels = 5 is not a layer", '[layers.parcels] with path = "FILE"'),
                out_dir=folder / "out")


@entry
def project_table_typo(folder: Path) -> Case:
    """[layer.parcels] (for [layers.parcels]) was ignored: the run had no parcels."""
    proj = project(folder, '[layer.parcels]\npath = "town.gpkg"\n')
    return Case(screen(folder, None, "--project", str(proj)), 2,
                ("unknown key 'layer' (did you mean 'layers'?)",), out_dir=folder / "out")


@entry
def project_layer_key_typo(folder: Path) -> Case:
    """[layers.parcels] feilds = {...}."""
    proj = project(folder, '[layers.parcels]\npath = "town.gpkg"\nlayer = "parcels"\nfeilds = { zoning = "Z" }\n')
    return Case(screen(folder, None, "--project", str(proj)), 2,
                ("[layers.parcels] unknown key 'feilds' (did you mean 'fields'?)",), out_dir=folder / "out")


@entry
def project_crs_nan(folder: Path) -> Case:
    """crs = nan (TOML has nan): not a CRS."""
    proj = project(folder, "crs = nan\n")
    return Case(screen(folder, None, "--project", str(proj)), 2, ("project file", "crs = nan is not"),
                out_dir=folder / "out")


@entry
def project_dem_z_units_unknown(folder: Path) -> Case:
    """[dem] z_units = "yards"."""
    proj = project(folder, '[dem]\npath = "dem.tif"\nz_units = "yards"\n')
    return Case(screen(folder, None, "--project", str(proj)), 2, ("dem.z_units = 'yards' is not one of ft, m",),
                out_dir=folder / "out")


@entry
def project_dem_as_text(folder: Path) -> Case:
    """dem = "dem.tif" (a plain string) was ignored; it is the DEM's path now (layers --project shows it)."""
    proj = project(folder, 'dem = "dem.tif"\n[layers.parcels]\npath = "town.gpkg"\nlayer = "parcels"\n')
    write_dem(folder / "dem.tif", units="ft")
    return Case(["layers", "--project", str(proj)], 0, ("role parcels <- town.gpkg:parcels",
                                                          "z_units ft", "dem.tif", "working CRS EPSG:2261"))


@entry
def project_where_on_a_file(folder: Path) -> Case:
    """where = ... on a file layer (only PostGIS has tables)."""
    proj = project(folder, '[layers.parcels]\npath = "town.gpkg"\nwhere = "1=1"\n')
    return Case(screen(folder, None, "--project", str(proj)), 2,
                ("[layers.parcels] where is only for a PostGIS path",), out_dir=folder / "out")


@entry
def project_missing_layer_file(folder: Path) -> Case:
    """A project mapping a role to a file that is not there."""
    proj = project(folder, '[layers.parcels]\npath = "town.gpkg"\nlayer = "parcels"\n'
                           '[layers.flood_zones]\npath = "nfhl.gpkg"\n')
    return Case(screen(folder, None, "--project", str(proj)), 2, ("layer flood_zones (nfhl.gpkg)", "does not exist"),
                out_dir=folder / "out")


@entry
def project_dry_run_fields(folder: Path) -> Case:
    """layers --project: what each role maps to, the fields found and the optional ones missing."""
    proj = project(folder, '[layers.parcels]\npath = "town.gpkg"\nlayer = "parcels"\nid = "parcel_id"\n'
                           'fields = { land_use = "zoning" }\n')
    return Case(["layers", "--project", str(proj)], 0, ("role parcels <- town.gpkg:parcels, id field parcel_id",
                                                        "mapped: land_use <- zoning", "optional fields missing: zoning, owner"))


# ------------------------------------------------------------------------------------------
# geometry, fields and ids as counties have them

@entry
def nan_vertices(folder: Path) -> Case:
    """A parcel with a NaN vertex (a corrupt export): was a GEOS error; now named."""
    import warnings

    p = parcels()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        p.loc[1, "geometry"] = Polygon([(X0 + 200, Y0), (X0 + 400, Y0), (float("nan"), Y0 + 100), (X0 + 200, Y0 + 200)])
        gpkg = write_gpkg(folder / "town.gpkg", {"parcels": p})
    return Case(screen(folder, gpkg), 2, ("layer parcels (town.gpkg:parcels)", "feature P2 has vertices without coordinates",
                                          "NaN or infinite"), out_dir=folder / "out")


@entry
def local_engineering_crs(folder: Path) -> Case:
    """A shapefile whose .prj is a LOCAL_CS (a site survey grid): refused, naming it."""
    shp = folder / "parcels.shp"
    parcels().to_file(shp, engine="pyogrio")
    shp.with_suffix(".prj").write_text('LOCAL_CS["Site grid",LOCAL_DATUM["Arbitrary",32767],UNIT["Foot_US",'
                                       '0.3048006096012192],AXIS["X",EAST],AXIS["Y",NORTH]]')
    return Case(screen(folder, None, "--parcels", str(shp)), 2,
                ("layer parcels (parcels.shp)", "local engineering system", "-a_srs"), out_dir=folder / "out")


@entry
def local_engineering_working_crs(folder: Path) -> Case:
    """--crs LOCAL_CS[...]: not a working CRS."""
    wkt = 'LOCAL_CS["Site grid",LOCAL_DATUM["Arbitrary",32767],UNIT["Foot_US",0.3048006096012192]]'
    return Case(screen(folder, sample_gpkg(folder), "--crs", wkt), 2, ("--crs 'Site grid' is a local engineering",),
                out_dir=folder / "out")


@entry
def coordinates_far_off(folder: Path) -> Case:
    """Coordinates of 1e15 ft in EPSG:2261."""
    p = parcels()
    p["geometry"] = [box(1e15, 1e15, 1e15 + 200, 1e15 + 200)] * 3
    return Case(screen(folder, write_gpkg(folder / "town.gpkg", {"parcels": p})), 2,
                ("layer parcels (town.gpkg:parcels)", "do not lie where its CRS EPSG:2261"), out_dir=folder / "out")


@entry
def id_fields_differ_in_case(folder: Path) -> Case:
    """Both parcel_id and PARCEL_ID (a GeoJSON merged from two sources): was a pandas error."""
    p = parcels()
    p["PARCEL_ID"] = ["X1", "X2", "X3"]
    gj = folder / "parcels.geojson"
    p.to_file(gj, driver="GeoJSON", engine="pyogrio")
    return Case(screen(folder, None, "--parcels", str(gj)), 2,
                ("fields parcel_id and PARCEL_ID differ only in case", 'id = "parcel_id"'), out_dir=folder / "out")


@entry
def id_field_missing(folder: Path) -> Case:
    """No id field: a warning says features are identified by row number."""
    gpkg = write_gpkg(folder / "town.gpkg", {"parcels": parcels().drop(columns=["parcel_id"])})
    return Case(["layers", str(gpkg)], 0, ("no id field (parcel_id or SWIS_SBL_ID or SBL or PRINTKEY)",
                                           "identified by row number"))


@entry
def blank_ids_strict(folder: Path) -> Case:
    """A blank parcel_id with --strict: refused."""
    p = parcels()
    p.loc[1, "parcel_id"] = " "
    gpkg = write_gpkg(folder / "town.gpkg", {"parcels": p})
    return Case(["--strict", *screen(folder, gpkg)], 2, ("id field parcel_id is empty in rows 2", "--strict"),
                out_dir=folder / "out")


@entry
def mapped_id_field_absent(folder: Path) -> Case:
    """A project naming an id field the layer does not have."""
    proj = project(folder, '[layers.parcels]\npath = "town.gpkg"\nlayer = "parcels"\nid = "PRINTKEY"\n')
    return Case(screen(folder, None, "--project", str(proj)), 2, ("id field 'PRINTKEY' not found", "parcel_id"),
                out_dir=folder / "out")


@entry
def shapefile_without_dbf(folder: Path) -> Case:
    """A shapefile copied without its .dbf: GDAL reads shapes without fields; now a warning says so."""
    shp = folder / "parcels.shp"
    parcels().to_file(shp, engine="pyogrio")
    shp.with_suffix(".dbf").unlink()
    return Case(["layers", str(shp)], 0, ("no parcels.dbf beside it", "no ids, no attributes",
                                          "identified by row number"))


@entry
def m_values(folder: Path) -> Case:
    """A shapefile of measured polygons (PolygonM): the M values are dropped with a warning, no raw
    pyogrio warning with a source line."""
    import numpy as np
    import shapely
    from pyogrio.raw import write

    geoms = [shapely.from_wkt(f"POLYGON M (({X0 + 200 * i} {Y0} 1, {X0 + 200 * i + 200} {Y0} 2, "
                              f"{X0 + 200 * i + 200} {Y0 + 200} 3, {X0 + 200 * i} {Y0} 1))") for i in range(2)]
    wkb = np.array([shapely.to_wkb(g, flavor="iso") for g in geoms], dtype=object)
    shp = folder / "parcels.shp"
    write(str(shp), wkb, [np.array(["P1", "P2"], dtype=object)], fields=["parcel_id"], geometry_type="Unknown",
          crs=NY_FT, driver="ESRI Shapefile")
    return Case(["layers", str(shp)], 0, ("M (measure) values dropped",), forbid=("UserWarning", "pyogrio/"))


@entry
def infinite_attribute(folder: Path) -> Case:
    """A harvest area with cords = inf (or negative): refused, naming the field and feature."""
    h = harvest_area()
    h["cords"] = [float("inf")]
    gpkg = write_gpkg(folder / "plan.gpkg", {"harvest_area": h})
    return Case(harvest(folder, gpkg), 2, ("layer harvest_area (plan.gpkg:harvest_area)", "field cords = inf",
                                           "feature H1"), out_dir=folder / "out")


@entry
def negative_road_width(folder: Path) -> Case:
    """A road with row_width_ft = -50."""
    roads = gpd.GeoDataFrame({"id": ["R1"], "row_width_ft": [-50.0]},
                             geometry=[LineString([(X0 - 500, Y0 - 50), (X0 + 900, Y0 - 50)])], crs=NY_FT)
    gpkg = write_gpkg(folder / "plan.gpkg", {"harvest_area": harvest_area(), "roads": roads})
    return Case(harvest(folder, gpkg), 2, ("layer roads", "row_width_ft = -50 is negative", "R1"),
                out_dir=folder / "out")


@entry
def huge_road_width(folder: Path) -> Case:
    """A road with row_width_ft = 1e7: no right-of-way is over 1,000 ft (1e300 made GEOS fail; 1e7 put every
    landing inside it)."""
    roads = gpd.GeoDataFrame({"id": ["R1"], "row_width_ft": [1e7]},
                             geometry=[LineString([(X0 - 500, Y0 - 50), (X0 + 900, Y0 - 50)])], crs=NY_FT)
    gpkg = write_gpkg(folder / "plan.gpkg", {"harvest_area": harvest_area(), "roads": roads})
    return Case(harvest(folder, gpkg), 2, ("layer roads", "row_width_ft = 10,000,000 is over 1,000",
                                           "wider than any road right-of-way", "R1"), out_dir=folder / "out")


@entry
def nfhl_other_no_value_codes(folder: Path) -> Case:
    """STATIC_BFE -8888 and 0 (not NFHL's -9999, but no BFE either): missing, one warning each, exit 0."""
    fz = flood_zones()
    fz["STATIC_BFE"] = [-8888.0, 0.0]
    gpkg = write_gpkg(folder / "town.gpkg", {"parcels": parcels(), "flood_zones": fz})
    return Case(["layers", str(gpkg)], 0, ("field STATIC_BFE holds -8888 in 1 feature(s) (FA1)", "read as not given",
                                          "field STATIC_BFE is 0 in 1 feature(s) (FA2)", "count as no BFE"))


@entry
def bfe_below_any_ground(folder: Path) -> Case:
    """A BFE line with ELEV -849 (a lost sign): lower than any US ground, refused naming the feature."""
    lines = gpd.GeoDataFrame({"BFE_LN_ID": ["B1"], "ELEV": [-849.0], "V_DATUM": ["NAVD88"]},
                             geometry=[LineString([(X0, Y0 - 100), (X0, Y0 + 300)])], crs=NY_FT)
    gpkg = write_gpkg(folder / "town.gpkg", {"parcels": parcels(), "bfe_lines": lines})
    return Case(screen(folder, gpkg), 2, ("layer bfe_lines", "field ELEV = -849 is below -300 ft",
                                          "no base flood elevation", "feature B1"), out_dir=folder / "out")


@entry
def bfe_above_any_ground(folder: Path) -> Case:
    """A BFE line with ELEV 81240 (812.40 with a slipped decimal point): higher than any US ground (Denali,
    20,310 ft), refused naming the feature; it had been read as a BFE every floor was below."""
    lines = gpd.GeoDataFrame({"BFE_LN_ID": ["B1"], "ELEV": [81240.0], "V_DATUM": ["NAVD88"]},
                             geometry=[LineString([(X0, Y0 - 100), (X0, Y0 + 300)])], crs=NY_FT)
    gpkg = write_gpkg(folder / "town.gpkg", {"parcels": parcels(), "bfe_lines": lines})
    return Case(screen(folder, gpkg), 2, ("layer bfe_lines", "field ELEV = 81240 is above 20,310 ft",
                                          "no base flood elevation", "feature B1"), out_dir=folder / "out")


@entry
def option_lowest_floor_huge(folder: Path) -> Case:
    """--lowest-floor-ft 1e300: a floor higher than any ground had made FLD-003 pass."""
    return _option_case(folder, "--lowest-floor-ft", "1e300", "is too large (over 1e+15)", "Give an elevation in feet")


@entry
def option_lowest_floor_above_any_ground(folder: Path) -> Case:
    """--lowest-floor-ft 20310.5: above the highest US ground (Denali, 20,310 ft), no elevation (20310 is read)."""
    return _option_case(folder, "--lowest-floor-ft", "20310.5", "20310.5 is more than 20310 ft", "Denali")


@entry
def option_lowest_floor_with_underscore(folder: Path) -> Case:
    """--lowest-floor-ft 8_13: Python's float() read it as 813; no way to write an elevation."""
    return _option_case(folder, "--lowest-floor-ft", "8_13", "'8_13' is not a number")


@entry
def option_enclosed_sqft_huge(folder: Path) -> Case:
    """--enclosed-sqft 1e308: numpy's overflow warning leaked and FLD-007 compared infinities."""
    return _option_case(folder, "--enclosed-sqft", "1e308", "is too large (over 1e+15)")


@entry
def constructed_neither_yes_nor_no(folder: Path) -> Case:
    """A skid trail with constructed = 'maybe': not stated (as empty), never a no; one warning, exit 0."""
    trails = gpd.GeoDataFrame({"id": ["S1"], "constructed": ["maybe"]},
                              geometry=[LineString([(X0 + 50, Y0 + 50), (X0 + 450, Y0 + 350)])], crs=NY_FT)
    gpkg = write_gpkg(folder / "plan.gpkg", {"harvest_area": harvest_area(), "skid_trails": trails})
    return Case(["layers", str(gpkg)], 0, ("field constructed holds 'maybe' in 1 feature(s) (S1)",
                                          "read as not stated"))


@entry
def sfha_flag_neither_t_nor_f(folder: Path) -> Case:
    """SFHA_TF 'Y' and 'Tidal': NFHL writes T or F. 'Y' was silently not stated, and 'Tidal' was read as T by its
    first letter; now both are not stated with one warning naming them, exit 0 (the zone decides)."""
    fz = flood_zones()
    fz["SFHA_TF"] = ["Y", "Tidal"]
    gpkg = write_gpkg(folder / "town.gpkg", {"parcels": parcels(), "flood_zones": fz})
    return Case(["layers", str(gpkg)], 0, ("field SFHA_TF holds 'Y', 'Tidal' in 2 feature(s) (FA1, FA2)",
                                          "neither T nor F", "read as not stated"))


@entry
def gpkg_attribute_table_as_role(folder: Path) -> Case:
    """A GeoPackage attribute table (no geometry) named parcels."""
    import pandas as pd

    gpkg = folder / "town.gpkg"
    pd.DataFrame({"parcel_id": ["P1"]}).pipe(lambda df: __import__("pyogrio").write_dataframe(df, gpkg, layer="parcels"))
    return Case(screen(folder, gpkg), 2, ("layer parcels (town.gpkg:parcels)", "no geometry column"),
                out_dir=folder / "out")


# ------------------------------------------------------------------------------------------
# DEMs: windows, caps, values, units

def big_sparse_dem(path: Path, *, size: int = 60_000, cell: float = 1.0) -> Path:
    """A GeoTIFF declaring ``size`` x ``size`` float32 cells of ``cell`` ft around the sample plan,
    with data only in a 1,000 x 1,000 block around the harvest area (a few hundred kB on disk)."""
    import rasterio
    from affine import Affine
    from rasterio.windows import Window

    x_left, y_top = X0 - size * cell / 2, Y0 + size * cell / 2
    with rasterio.open(path, "w", driver="GTiff", width=size, height=size, count=1, dtype="float32", crs=NY_FT,
                       transform=Affine(cell, 0, x_left, 0, -cell, y_top), nodata=-9999.0, tiled=True,
                       blockxsize=512, blockysize=512, compress="deflate", sparse_ok=True) as dst:
        c0, r0 = int((X0 - 250 - x_left) / cell), int((y_top - Y0 - 650) / cell)
        block = (800.0 + np.add.outer(np.arange(1000), np.arange(1000)) * 0.01).astype("float32")
        dst.write(block, 1, window=Window(c0, r0, 1000, 1000))
        dst.update_tags(1, UNITTYPE="ft")
    return path


@entry
def dem_declares_60000_square(folder: Path) -> Case:
    """A small file declaring 60,000 x 60,000 cells (13.4 GiB as float32): only the plan's window is
    read, the run completes."""
    gpkg = write_gpkg(folder / "plan.gpkg", {"harvest_area": harvest_area()})
    dem = big_sparse_dem(folder / "big.tif")
    return Case(harvest(folder, gpkg, "--dem", str(dem)), 0, ("harvest:", "outputs in"))


@entry
def dem_window_over_the_cap(folder: Path) -> Case:
    """A plan spanning 50,000 ft of a 1-ft DEM: its contour window (2.5e9 cells) is over the cap."""
    far = gpd.GeoDataFrame({"id": ["H1", "H2"]}, geometry=[box(X0 - 25_000, Y0 - 25_000, X0 - 24_500, Y0 - 24_600),
                                                           box(X0 + 24_500, Y0 + 24_600, X0 + 25_000, Y0 + 25_000)],
                           crs=NY_FT)
    gpkg = write_gpkg(folder / "plan.gpkg", {"harvest_area": far})
    dem = big_sparse_dem(folder / "big.tif")
    return Case(harvest(folder, gpkg, "--dem", str(dem)), 2,
                ("DEM big.tif: the area needed is", "more than the 25,000,000 read at once", "Clip the DEM"),
                out_dir=folder / "out")


def _dem_with(folder: Path, values: float, *, nodata: float | None = None, units: str | None = "ft") -> Path:
    dem = write_dem(folder / "dem.tif", units=units, nodata=nodata)
    import rasterio

    with rasterio.open(dem, "r+") as dst:
        z = dst.read(1)
        z[10:12, 10:12] = values
        dst.write(z, 1)
    return dem


@entry
def dem_infinite_cells(folder: Path) -> Case:
    """A DEM with inf cells under the plan: was a numpy error; now named."""
    gpkg = write_gpkg(folder / "plan.gpkg", {"harvest_area": harvest_area()})
    dem = _dem_with(folder, float("inf"))
    return Case(harvest(folder, gpkg, "--dem", str(dem)), 2, ("DEM dem.tif", "hold infinity", "nodata"),
                out_dir=folder / "out")


@entry
def dem_undeclared_fill_value(folder: Path) -> Case:
    """-3.4e38 cells and no nodata declared (a float DEM exported without its nodata)."""
    gpkg = write_gpkg(folder / "plan.gpkg", {"harvest_area": harvest_area()})
    dem = _dem_with(folder, -3.4028234663852886e38)
    return Case(harvest(folder, gpkg, "--dem", str(dem)), 2, ("DEM dem.tif", "no elevation", "gdal_edit.py -a_nodata"),
                out_dir=folder / "out")


@entry
def dem_all_zeros(folder: Path) -> Case:
    """A DEM holding 0 in every cell (the wrong band, a placeholder): every grade was 0 %, HRV-010 a pass."""
    gpkg = write_gpkg(folder / "plan.gpkg", {"harvest_area": harvest_area()})
    dem = write_dem(folder / "dem.tif", units="ft")
    import rasterio

    with rasterio.open(dem, "r+") as dst:
        dst.write(np.zeros((dst.height, dst.width), dtype="float32"), 1)
    return Case(harvest(folder, gpkg, "--dem", str(dem)), 2,
                ("DEM dem.tif: every valid cell read holds 0 ft", "no relief", "gdalinfo -stats dem.tif"),
                out_dir=folder / "out")

@entry
def dem_z_units_contradict_metadata(folder: Path) -> Case:
    """--dem-z-units ft on a DEM whose metadata says metre: refused naming both (4 grade violations became 0)."""
    gpkg = write_gpkg(folder / "plan.gpkg", {"harvest_area": harvest_area()})
    dem = write_dem(folder / "dem.tif", units="metre")
    return Case(harvest(folder, gpkg, "--dem", str(dem), "--dem-z-units", "ft"), 2,
                ("DEM dem.tif", "--dem-z-units ft contradicts", "'metre' (m)"), out_dir=folder / "out")


@entry
def dem_local_engineering_crs(folder: Path) -> Case:
    """A DEM in a LOCAL_CS."""
    import rasterio
    from rasterio.crs import CRS as RioCRS

    gpkg = write_gpkg(folder / "plan.gpkg", {"harvest_area": harvest_area()})
    dem = write_dem(folder / "dem.tif", units="ft")
    with rasterio.open(dem, "r+") as dst:
        dst.crs = RioCRS.from_wkt('LOCAL_CS["Site grid",LOCAL_DATUM["Arbitrary",32767],UNIT["Foot_US",0.3048006096012192],'
                                  'AXIS["X",EAST],AXIS["Y",NORTH]]')
    return Case(harvest(folder, gpkg, "--dem", str(dem)), 2, ("DEM dem.tif", "local engineering system"),
                out_dir=folder / "out")


@entry
def dem_inside_a_zip(folder: Path) -> Case:
    """A DEM read in place from a zip (/vsizip/): the run completes, the zip is hashed for the report."""
    import zipfile

    gpkg = write_gpkg(folder / "plan.gpkg", {"harvest_area": harvest_area()})
    dem = write_dem(folder / "dem.tif", units="ft")
    zpath = folder / "lidar.zip"
    with zipfile.ZipFile(zpath, "w") as z:
        z.write(dem, "dem.tif")
    dem.unlink()
    return Case(harvest(folder, gpkg, "--dem", f"/vsizip/{zpath}/dem.tif"), 0, ("harvest:", "outputs in"))


@entry
def dem_url(folder: Path) -> Case:
    """--dem https://...: a DEM must be on this machine (its SHA-256 goes in the report); nothing fetched."""
    gpkg = write_gpkg(folder / "plan.gpkg", {"harvest_area": harvest_area()})
    return Case(harvest(folder, gpkg, "--dem", "http://127.0.0.1:9/dem.tif"), 2,
                ("DEM http://127.0.0.1:9/dem.tif", "must be a file on this machine", "Download it"),
                out_dir=folder / "out")


# ------------------------------------------------------------------------------------------
# tables: rainfall

def stormwater(folder: Path, rainfall: Path) -> list[str]:
    dist = gpd.GeoDataFrame({"id": ["D1"], "phase": [1], "start": ["2024-04-01"], "stabilized": ["2024-04-20"]},
                            geometry=[box(X0, Y0, X0 + 300, Y0 + 300)], crs=NY_FT)
    gpkg = write_gpkg(folder / "site.gpkg", {"disturbance": dist})
    return ["stormwater", str(gpkg), "--rainfall", str(rainfall), "--out", str(folder / "out")]


def _rain(folder: Path, bad: str) -> Path:
    days = [f"2024-03-{d:02d}" for d in range(25, 32)] + [f"2024-04-{d:02d}" for d in range(1, 31)]
    rows = ["date,precip_in"] + [f"{d},{bad if i == 10 else '0.1'}" for i, d in enumerate(days)]
    path = folder / "rain.csv"
    path.write_text("\n".join(rows) + "\n")
    return path


@entry
def rainfall_infinite(folder: Path) -> Case:
    """A rainfall value 'inf': made a storm of 'inf' inches."""
    return Case(stormwater(folder, _rain(folder, "inf")), 2, ("rain.csv line 12", "precip_in 'inf' is not a finite number"),
                out_dir=folder / "out")


@entry
def rainfall_overflow(folder: Path) -> Case:
    """A rainfall value 1e400 (infinity once parsed)."""
    return Case(stormwater(folder, _rain(folder, "1e400")), 2, ("rain.csv line 12", "'1e400' is not a finite number"),
                out_dir=folder / "out")


@entry
def rainfall_fifo(folder: Path) -> Case:
    """A named pipe as --rainfall."""
    import os

    fifo = folder / "rain.csv"
    os.mkfifo(fifo)
    return Case(stormwater(folder, fifo), 2, ("rainfall file", "rain.csv is not a regular file (a named pipe)"),
                out_dir=folder / "out")


# ------------------------------------------------------------------------------------------
# outputs the machine refuses

@entry
def out_name_too_long(folder: Path) -> Case:
    """--out with a 300-character folder name: was an OSError; now named."""
    return Case(screen(folder, sample_gpkg(folder))[:-2] + ["--out", str(folder / ("x" * 300))], 2,
                ("--out", "longer than the system allows", "Choose a shorter --out folder"))


@entry
def refused_run_keeps_the_previous_outputs(folder: Path) -> Case:
    """An --out folder holding last week's results and a refused input: the old files stay as they were."""
    out = folder / "out"
    out.mkdir()
    (out / "findings.geojson").write_text('{"type": "FeatureCollection", "features": []}\n')
    (out / "report.html").write_text("<html>last week</html>\n")
    p = parcels()
    p.loc[0, "geometry"] = Polygon([(X0, Y0), (X0 + 200, Y0), (float("inf"), Y0 + 200)])
    gpkg = write_gpkg(folder / "town.gpkg", {"parcels": p})
    return Case(screen(folder, gpkg), 2, ("feature P1 has vertices without coordinates",))


# ------------------------------------------------------------------------------------------
# audit a1: metadata contradicting itself, ungeoreferenced DEMs, NFHL units, table headers

@entry
def dem_units_contradict_in_metadata(folder: Path) -> Case:
    """A DEM whose band unit says ft and whose UNITTYPE tag says metre: the first one found won (a metre
    DEM read as feet, grades 3.28 times too gentle, HRV-010 a pass); now refused naming both."""
    import rasterio

    gpkg = write_gpkg(folder / "plan.gpkg", {"harvest_area": harvest_area()})
    dem = write_dem(folder / "dem.tif", units="ft")
    with rasterio.open(dem, "r+") as dst:
        dst.update_tags(1, UNITTYPE="metre")
    return Case(harvest(folder, gpkg, "--dem", str(dem)), 2,
                ("DEM dem.tif", "contradicts itself", "band unit 'ft'", "UNITTYPE 'metre'", "--dem-z-units"),
                out_dir=folder / "out")


@entry
def dem_compound_crs_contradicts_band_unit(folder: Path) -> Case:
    """A DEM in EPSG:2261+5703 (NAVD88 height in metres) whose band unit says ft."""
    import rasterio
    from pyproj import CRS as ProjCRS
    from rasterio.crs import CRS as RioCRS

    gpkg = write_gpkg(folder / "plan.gpkg", {"harvest_area": harvest_area()})
    dem = write_dem(folder / "dem.tif", units=None)
    with rasterio.open(dem, "r+") as dst:
        dst.crs = RioCRS.from_wkt(ProjCRS("EPSG:2261+5703").to_wkt())
        dst.set_band_unit(1, "ft")
    return Case(harvest(folder, gpkg, "--dem", str(dem)), 2,
                ("DEM dem.tif", "contradicts itself", "'metre'", "--dem-z-units"), out_dir=folder / "out")


@entry
def dem_without_geotransform(folder: Path) -> Case:
    """A DEM with a CRS but no geotransform: rasterio's own warning line, then every road 'off the DEM'
    (exit 0); now refused naming the DEM and the fix."""
    import warnings

    import rasterio

    gpkg = write_gpkg(folder / "plan.gpkg", {"harvest_area": harvest_area()})
    dem = folder / "dem.tif"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with rasterio.open(dem, "w", driver="GTiff", width=40, height=40, count=1, dtype="float32", crs=NY_FT) as dst:
            dst.write(np.full((40, 40), 800.0, dtype="float32") + np.arange(40, dtype="float32"), 1)
            dst.set_band_unit(1, "ft")
    return Case(harvest(folder, gpkg, "--dem", str(dem)), 2,
                ("DEM dem.tif", "not placed on the map", "no geotransform", "gdal_edit.py -a_ullr"),
                forbid=("identity matrix",), out_dir=folder / "out")


@entry
def dem_ground_control_points_only(folder: Path) -> Case:
    """A DEM georeferenced by GCPs only (an unwarped scan): was 'has no coordinate reference system'."""
    import warnings

    import rasterio
    from rasterio.control import GroundControlPoint
    from rasterio.crs import CRS as RioCRS

    gpkg = write_gpkg(folder / "plan.gpkg", {"harvest_area": harvest_area()})
    dem = folder / "dem.tif"
    with warnings.catch_warnings():  # no geotransform until the GCPs are set
        warnings.simplefilter("ignore")
        dst = rasterio.open(dem, "w", driver="GTiff", width=40, height=40, count=1, dtype="float32")
    with dst:
        dst.write(np.full((40, 40), 800.0, dtype="float32") + np.arange(40, dtype="float32"), 1)
        dst.gcps = ([GroundControlPoint(0, 0, X0 - 50, Y0 + 350), GroundControlPoint(40, 0, X0 + 350, Y0 + 350),
                     GroundControlPoint(0, 40, X0 - 50, Y0 - 50)], RioCRS.from_string(NY_FT))
        dst.set_band_unit(1, "ft")
    return Case(harvest(folder, gpkg, "--dem", str(dem)), 2,
                ("DEM dem.tif", "ground control points", "gdalwarp -t_srs"), forbid=("has no coordinate",),
                out_dir=folder / "out")


@entry
def nfhl_len_unit_unknown(folder: Path) -> Case:
    """A flood zone with STATIC_BFE 812 and LEN_UNIT 'Yards': read as feet, a floor at 813 ft passed FLD-003;
    now refused naming the layer, field, value and feature."""
    fz = flood_zones()
    fz["LEN_UNIT"] = ["Yards", "Feet"]
    fp = gpd.GeoDataFrame({"id": ["F1"]}, geometry=[box(X0 + 20, Y0 + 20, X0 + 80, Y0 + 70)], crs=NY_FT)
    gpkg = write_gpkg(folder / "site.gpkg", {"footprints": fp, "parcels": parcels(), "flood_zones": fz})
    return Case(["flood-site", str(gpkg), "--use", "residential", "--lowest-floor-ft", "813", "--out",
                 str(folder / "out")], 2,
                ("layer flood_zones (site.gpkg:flood_zones)", "LEN_UNIT = 'Yards'", "feature FA1",
                 "Write Feet or Meters"), out_dir=folder / "out")


@entry
def nfhl_len_unit_without_a_value(folder: Path) -> Case:
    """LEN_UNIT 'Yards' on the X zone, whose STATIC_BFE is -9999 (no value in any unit): not read, exit 0."""
    fz = flood_zones()
    fz["LEN_UNIT"] = ["Feet", "Yards"]
    gpkg = write_gpkg(folder / "town.gpkg", {"parcels": parcels(), "flood_zones": fz})
    return Case(screen(folder, gpkg), 0, ("screen:",))


def _rain_rows(folder: Path, header: str, rows: list[str], name: str = "rain.csv") -> Path:
    path = folder / name
    path.write_text("\n".join([header, *rows]) + "\n")
    return path


def _days() -> list[str]:
    return [f"2024-03-{d:02d}" for d in range(25, 32)] + [f"2024-04-{d:02d}" for d in range(1, 31)]


@entry
def rainfall_duplicate_header(folder: Path) -> Case:
    """'date,precip_in,precip_in': the first column was read, the 2.0 in storm in the second never seen
    (one storm inspection fewer required)."""
    rows = [f"{d},0.1,{'2.0' if i == 10 else '0.1'}" for i, d in enumerate(_days())]
    rain = _rain_rows(folder, "date,precip_in,precip_in", rows)
    return Case(stormwater(folder, rain), 2, ("rainfall file rain.csv", "column precip_in appears more than once",
                                              "Delete or rename"), out_dir=folder / "out")


@entry
def inspection_log_duplicate_header(folder: Path) -> Case:
    """An inspection log 'date,Date,inspector': the second date column was silently ignored."""
    rain = _rain_rows(folder, "date,precip_in", [f"{d},0.1" for d in _days()])
    log = _rain_rows(folder, "date,Date,inspector", ["2024-04-01,2024-04-30,A"], name="log.csv")
    args = stormwater(folder, rain)
    return Case(args[:-2] + ["--inspection-log", str(log)] + args[-2:], 2,
                ("inspection log file log.csv", "column date appears more than once"), out_dir=folder / "out")


@entry
def rainfall_semicolons(folder: Path) -> Case:
    """A rainfall file saved with semicolons (a European spreadsheet): named as such, not 'column missing'."""
    rain = _rain_rows(folder, "date;precip_in", [f"{d};0,1" for d in _days()])
    return Case(stormwater(folder, rain), 2, ("rainfall file rain.csv", "separated by semicolons",
                                              "comma-separated"), out_dir=folder / "out")
