"""The ``layers`` command: what a file holds per role and what the loader would say about it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyogrio

from geoconstraints.errors import GeoConstraintsError, LayerReadError
from geoconstraints.io.dem import open_dem
from geoconstraints.io.layers import load_layers
from geoconstraints.io.postgis import is_db_source, parse_db_source, read_postgis
from geoconstraints.io.projection import lonlat_bounds
from geoconstraints.io.roles import ROLES, LayerSource
from geoconstraints.io.paths import check_file
from geoconstraints.io.sources import list_layers

RASTER_SUFFIXES = (".tif", ".tiff", ".gtiff")

NFHL_TABLE_ROLES = {"s_fld_haz_ar": "flood_zones", "s_bfe": "bfe_lines"}
"""NFHL table names and the role they fill (FEMA's names, as distributed)."""


class _DropWarnings(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno != logging.WARNING


@contextlib.contextmanager
def _quiet_layer_warnings() -> Iterator[None]:
    """Keep load_layers' warnings off the log while describing (they are returned as lines)."""
    logger = logging.getLogger("geoconstraints.io.layers")
    filt = _DropWarnings()
    logger.addFilter(filt)
    try:
        yield
    finally:
        logger.removeFilter(filt)


def role_of_layer(layer: str, file_stem: str, n_layers: int) -> str | None:
    """The role a layer fills: its name (or, for a one-layer file, the file name) as a role
    name or an NFHL table name; None otherwise."""
    for name in (layer, file_stem) if n_layers == 1 else (layer,):
        key = name.lower().replace("-", "_")
        if key in ROLES:
            return key
        if key in NFHL_TABLE_ROLES:
            return NFHL_TABLE_ROLES[key]
    return None


def _raw_summary(path: Path, layer: str) -> str:
    try:
        info = pyogrio.read_info(path, layer=layer)
    except Exception as exc:  # noqa: BLE001 - GDAL raises several kinds
        return f"cannot read its description ({str(exc).strip().splitlines()[0][:150] if str(exc).strip() else type(exc).__name__})"
    crs = info.get("crs") or "none"
    gtype = info.get("geometry_type") or "no geometry"
    fields = ", ".join(map(str, info.get("fields", []))) or "none"
    return f"{info.get('features', '?')} features ({gtype}), CRS {crs}, fields {fields}"


def _describe_raster(path: Path) -> tuple[list[str], bool]:

    lines = [f"{path.name}"]
    try:
        dem = open_dem(path)
    except GeoConstraintsError as exc:
        import rasterio

        try:
            with rasterio.open(path) as src:
                lines.append(f"  raster {src.width}x{src.height}, CRS {src.crs or 'none'}, "
                             f"nodata {src.nodata}, dtype {src.dtypes[0]}")
        except Exception:  # noqa: BLE001 - unreadable: the problem line says so
            lines.append(f"  problem: {exc}")
            return lines, False
        lines.append(f"  role dem: problem: {exc}")
        return lines, True
    epsg = dem.crs.to_epsg()
    lines.append(f"  role dem: raster {dem.width}x{dem.height}, CRS {f'EPSG:{epsg}' if epsg else dem.crs.name}, "
                 f"cell {dem.cell_size_ft:.3f} ft, z in {dem.z_units} ({dem.z_units_source}), nodata {dem.nodata}")
    return lines, True


def _role_lines(what: str, role: str, layers: Any) -> list[str]:
    """Lines for one loaded role: count, kinds, CRS, extent, fields, warnings."""
    info = layers.info[role]
    g = layers.frames[role]
    kinds = ", ".join(sorted(set(g.geom_type))) if len(g) else "no geometries"
    epsg = layers.crs.to_epsg()
    lines = [(f"  {what} -> role {role}: {info.features} feature{'' if info.features == 1 else 's'} "
             f"({kinds}), CRS {info.source_crs}, "
             f"working CRS {f'EPSG:{epsg}' if epsg else layers.crs.name} ({layers.crs_reason})")]
    if len(g):
        w, s_, e, n = lonlat_bounds(tuple(g.total_bounds), layers.crs)
        lines.append(f"    extent: lon {w:.5f} to {e:.5f}, lat {s_:.5f} to {n:.5f} "
                     f"(check it is where the data should be)")
    lines.append(f"    fields: {', '.join(info.fields) or 'none'}")
    lines.extend(f"    warning: {w}" for w in layers.warnings)
    return lines


def _as_db_url(text: str) -> str:
    """Undo ``Path("postgresql://h/db")`` collapsing ``//`` into ``/`` (the CLI passes Paths)."""
    m = re.match(r"(?i)^(postgresql|postgres):/(?!/)", text)
    return f"{m.group(1)}://{text[m.end():]}" if m else text


def describe_db(url: str) -> tuple[list[str], bool]:
    """Describe a PostGIS table like a file's layer: the role its name fills, count, CRS, fields, problems.

    Parameters
    ----------
    url : str
        ``postgresql://USER@HOST:PORT/DB?table=SCHEMA.TABLE`` (the password, if any, is never printed).

    Returns
    -------
    (list of str, bool)
        Lines to print (headed by the redacted URL), and False when the table cannot be read
        (no connection, no such table).
    """
    try:
        pg = parse_db_source(url)
    except GeoConstraintsError as exc:
        return ["PostGIS source", f"  problem: {exc}"], False
    lines = [pg.redacted]
    role = role_of_layer(pg.table, pg.table, 1)
    if role is None:
        try:
            gdf, _ = read_postgis(LayerSource(pg.table, Path(pg.redacted), pg.qualified, db=pg))
        except GeoConstraintsError as exc:
            lines.append(f"  problem: {exc}")
            return lines, not isinstance(exc, LayerReadError)
        kinds = ", ".join(sorted(set(gdf.geom_type.dropna()))) or "no geometries"
        epsg = gdf.crs.to_epsg() if gdf.crs is not None else None
        fields = ", ".join(c for c in gdf.columns if c != gdf.geometry.name) or "none"
        lines.append(f"  table {pg.qualified}: not a role name; {len(gdf)} features ({kinds}), "
                     f"CRS {f'EPSG:{epsg}' if epsg else gdf.crs}, fields {fields}")
        lines.append(f"    map it with --ROLE '{pg.redacted}' or in a project file (roles: {', '.join(ROLES)})")
        return lines, True
    try:
        with _quiet_layer_warnings():
            layers = load_layers(overrides={role: url}, roles=(role,))
    except GeoConstraintsError as exc:
        lines.append(f"  table {pg.qualified} -> role {role}: problem: {exc}")
        return lines, not isinstance(exc, LayerReadError)
    lines.extend(_role_lines(f"table {pg.qualified}", role, layers))
    return lines, True


def describe_file(path: str | Path) -> tuple[list[str], bool]:
    """Describe what ``path`` holds per role, with the problems :func:`load_layers` finds.

    Parameters
    ----------
    path : str or Path
        A vector file (GeoPackage, shapefile, GeoJSON, ...), a GeoTIFF DEM, or a PostGIS URL
        (see :func:`describe_db`).

    Returns
    -------
    (list of str, bool)
        Lines to print (the file name, then per layer: role, feature count, CRS, fields, and
        ``warning:`` / ``problem:`` lines), and False when the file itself cannot be read.

    Examples
    --------
    >>> from geoconstraints import sample_path
    >>> lines, ok = describe_file(sample_path("vestal_sample.gpkg"))
    >>> ok, lines[0]
    (True, 'vestal_sample.gpkg: 18 layers')
    >>> print(lines[1])  # doctest: +ELLIPSIS
    layer parcels -> role parcels: 2819 features (Polygon), CRS EPSG:2261, working CRS EPSG:2261 (...)
    """
    text = _as_db_url(os.fspath(path))
    if is_db_source(text):
        return describe_db(text)
    path = Path(path)
    if path.suffix.lower() in RASTER_SUFFIXES:
        try:
            check_file(path, "DEM")
        except GeoConstraintsError as exc:
            return [f"{path.name}", f"  problem: {exc}"], False
        return _describe_raster(path)
    try:
        names = list_layers(path)
    except GeoConstraintsError as exc:
        return [f"{path.name}", f"  problem: {exc}"], False
    lines = [f"{path.name}: {len(names)} layer{'' if len(names) == 1 else 's'}"]
    crs_of: dict[str, str] = {}
    for name in names:
        role = role_of_layer(name, path.stem, len(names))
        if role is None:
            lines.append(f"  layer {name}: not a role name; {_raw_summary(path, name)}")
            lines.append(f"    map it with --ROLE {path.name}:{name} or in a project file "
                         f"(roles: {', '.join(ROLES)})")
            continue
        try:
            with _quiet_layer_warnings():
                layers = load_layers(overrides={role: f"{path}:{name}"}, roles=(role,))
        except GeoConstraintsError as exc:
            lines.append(f"  layer {name} -> role {role}: {_raw_summary(path, name)}")
            lines.append(f"    problem: {exc}")
            continue
        lines.extend(_role_lines(f"layer {name}", role, layers))
        crs_of[role] = layers.info[role].source_crs
    if len(set(crs_of.values())) > 1:
        lines.append(f"  note: layers in {len(set(crs_of.values()))} CRSs ("
                     + "; ".join(f"{r} {c}" for r, c in crs_of.items())
                     + "); a run reprojects them all to one working CRS in feet")
    return lines, True

