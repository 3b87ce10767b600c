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
