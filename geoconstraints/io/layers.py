"""Loading input layers by role into one working CRS in feet.

A role is what a layer *is* to the law (``parcels``, ``flood_zones``, ``haul_roads``...). Layers
come from (a) a GeoPackage whose layer names are role names, (b) explicit ``role -> PATH[:LAYER]``
overrides, (c) a project file (TOML), or (d) a PostGIS table. Every layer ends in one working
CRS in feet, with canonical field names, a string ``feature_id`` column, valid non-empty
geometries, and NFHL -9999 sentinels turned into missing values.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from pyproj import CRS

from geoconstraints.errors import CRSError
from geoconstraints.io import projection
from geoconstraints.io.dem import open_dem
from geoconstraints.io.postgis import is_db_source, read_postgis
from geoconstraints.io.projection import crs_label
from geoconstraints.io.roles import ROLES, LayerSource
from geoconstraints.io.sources import read_source, resolve_sources, sha256_file
from geoconstraints.io.validate import (
    assign_ids,
    canonical_fields,
    clean_geometries,
    nfhl_sentinels,
    normalize_role_fields,
    polygonal_parts,
)

log = logging.getLogger(__name__)


# ------------------------------------------------------------------------------------------
# the collection

@dataclass
class LayerInfo:
    """Provenance of one loaded layer.

    For a PostGIS layer ``path`` is the redacted URL (no password), ``layer`` the table,
    ``size_bytes`` 0 and ``sha256`` a hash of the rows read (see :func:`read_postgis`).
    """

    role: str
    path: str
    layer: str | None
    features: int
    source_crs: str
    sha256: str
    size_bytes: int
    fields: list[str]
    absent_fields: list[str] = field(default_factory=list)
    """Optional fields of the role the source did not have (filled with missing values)."""


@dataclass
class Layers(Mapping[str, gpd.GeoDataFrame]):
    """Input layers by role, all in one working CRS in feet.

    Behaves like a read-only mapping ``role -> GeoDataFrame``; ``dem`` holds the DEM (or None).
    """

    frames: dict[str, gpd.GeoDataFrame]
    crs: CRS
    crs_reason: str = ""
    info: dict[str, LayerInfo] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    dem: Any = None
    settings: dict[str, Any] = field(default_factory=dict)

    def __getitem__(self, role: str) -> gpd.GeoDataFrame:
        return self.frames[role]

    def __iter__(self) -> Iterator[str]:
        return iter(self.frames)

    def __len__(self) -> int:
        return len(self.frames)

    def get_layer(self, role: str) -> gpd.GeoDataFrame | None:
        """The layer of ``role`` or None when not given (or empty)."""
        g = self.frames.get(role)
        return g if g is not None and len(g) else None

    def input_paths(self) -> set[Path]:
        """Resolved paths of every input file (outputs must never overwrite one)."""
        paths = {Path(i.path).resolve() for i in self.info.values() if not is_db_source(i.path)}
        if self.dem is not None:
            paths.add(Path(self.dem.path).resolve())
        return paths

    def summary(self) -> pd.DataFrame:
        """One row per loaded role: features, source CRS, file, layer."""
        rows = [{"role": r, "features": i.features, "source_crs": i.source_crs,
                 "file": i.path if is_db_source(i.path) else Path(i.path).name,
                 "layer": i.layer or ""} for r, i in self.info.items()]
        return pd.DataFrame(rows, columns=["role", "features", "source_crs", "file", "layer"])

    def _repr_html_(self) -> str:
        head = f"<p><b>Layers</b> in {self.crs.name} ({self.crs.to_string()})</p>"
        return head + self.summary().to_html(index=False, escape=True)


def load_layers(
    source: str | os.PathLike[str] | None = None,
    *,
    overrides: Mapping[str, str | os.PathLike[str] | None] | None = None,
    project: str | os.PathLike[str] | None = None,
    crs: str | CRS | None = None,
    dem: str | os.PathLike[str] | None = None,
    dem_z_units: str | None = None,
    roles: tuple[str, ...] | None = None,
    primary: tuple[str, ...] = ("parcels", "harvest_area"),
) -> Layers:
    """Load every layer by role into one working CRS in feet.

    Parameters
    ----------
    source : path, optional
        A GeoPackage whose layer names are role names, or a project ``.toml`` file.
    overrides : mapping, optional
        ``role -> "PATH[:LAYER]"``; overrides layers found in ``source``.
    project : path, optional
        A project TOML file mapping roles to files, layers, id and field names.
    crs : str, optional
        Working CRS; must be projected in feet. Default: see :mod:`geoconstraints.projection`.
    dem, dem_z_units : optional
        DEM GeoTIFF and its vertical units (``ft``/``m``) when its metadata does not say.
    roles : tuple of str, optional
        Load only these roles (others found in ``source`` are ignored).
    primary : tuple of str
        Roles whose own CRS is preferred as working CRS.

    Returns
    -------
    Layers

    Raises
    ------
    InputError (and subclasses)
        Unreadable file, missing CRS, wrong geometry type, missing field, duplicate ids.

    Examples
    --------
    >>> from geoconstraints import sample_path
    >>> layers = load_layers(sample_path("vestal_sample.gpkg"), roles=("parcels",))
    >>> layers.crs.to_epsg()
    2261
    """
    sources, settings = resolve_sources(source, overrides, project)
    if roles is not None:
        sources = {r: s for r, s in sources.items() if r in roles}
    warn: list[str] = []
    raw: dict[str, gpd.GeoDataFrame] = {}
    info: dict[str, LayerInfo] = {}
    for role, src in sources.items():
        raw[role], info[role] = _read_role(role, src, warn)
    working, reason = _working_crs(raw, crs if crs is not None else settings.get("crs"), primary)
    frames = {role: _to_working(role, gdf, working) for role, gdf in raw.items()}
    source_crs = {role: info[role].source_crs for role in raw}
    if len(set(source_crs.values())) > 1:
        warn.append(f"layers come in {len(set(source_crs.values()))} CRSs ("
                    + "; ".join(f"{r} {c}" for r, c in source_crs.items())
                    + f"); all were reprojected to {crs_label(working)} ({reason})")
    dem_cfg: dict[str, Any] = settings["dem"] if isinstance(settings.get("dem"), dict) else {}
    dem_path = dem if dem is not None else dem_cfg.get("path")
    dem_obj = None
    if dem_path is not None:
        dem_obj = open_dem(Path(dem_path), z_units=dem_z_units or dem_cfg.get("z_units"))
    for w in warn:
        log.warning(w)
    return Layers(frames, working, reason, info, warn, dem_obj, settings)


def _read_role(role: str, src: LayerSource, warn: list[str]) -> tuple[gpd.GeoDataFrame, LayerInfo]:
    """Read one role's layer and validate it (CRS present, fields, ids, geometries, NFHL
    sentinels, location); warnings are appended to ``warn``."""
    spec = ROLES[role]
    digest = ""
    if src.db is not None:
        gdf, digest = read_postgis(src)
    else:
        gdf = read_source(src)
    what = f"layer {role} ({src.label})"
    if gdf.crs is None:
        hint = ""
        b = gdf.total_bounds if len(gdf) else None
        if b is not None and np.all(np.abs(b) <= 360):
            hint = " Its coordinates look like longitude/latitude (EPSG:4326 or 4269)."
        raise CRSError(f"{what}: has no CRS (no .prj or SRS).{hint} Assign the right CRS in "
                       f"your GIS or with ogr2ogr -a_srs EPSG:XXXX, then try again")
    gdf = canonical_fields(gdf, src, spec)
    absent = [f for f in spec.optional if f not in gdf.columns]
    gdf = assign_ids(gdf, src, spec, warn)
    gdf = clean_geometries(gdf, role, src.label, warn)
    gdf = nfhl_sentinels(gdf, spec)
    gdf = normalize_role_fields(gdf, role)
    if len(gdf) == 0:
        warn.append(f"{what}: has no features; rules that need {role} are not evaluated")
    else:
        projection.check_location(tuple(gdf.total_bounds), CRS(gdf.crs), what=what)
    kept = [c for c in gdf.columns if c not in (gdf.geometry.name, "feature_id")]
    source_crs = crs_label(CRS(gdf.crs))
    if src.db is not None:  # no file: the redacted URL, the table, and a hash of the rows read
        return gdf, LayerInfo(role, src.db.redacted, src.db.qualified, len(gdf), source_crs, digest, 0, kept, absent)
    st = src.path.stat()
    return gdf, LayerInfo(role, str(src.path), src.layer, len(gdf), source_crs,
                          sha256_file(src.path) if src.path.is_file() else "", st.st_size, kept, absent)


def _working_crs(raw: dict[str, gpd.GeoDataFrame], user_crs: str | CRS | None,
                 primary: tuple[str, ...]) -> tuple[CRS, str]:
    """The working CRS of the layers and why (see :func:`projection.choose_working_crs`)."""
    prim = next((CRS(raw[r].crs) for r in primary if r in raw and len(raw[r])), None)
    lonlat = None
    nonempty = [g for g in raw.values() if len(g)]
    if nonempty:
        bounds = [projection.lonlat_bounds(tuple(g.total_bounds), CRS(g.crs)) for g in nonempty]
        arr = np.array(bounds)
        lonlat = (arr[:, 0].min(), arr[:, 1].min(), arr[:, 2].max(), arr[:, 3].max())
    if user_crs is None and lonlat is None and (prim is None or not projection.is_feet(prim)):
        # no layer has a feature to locate: a layer's own CRS in feet, else the default
        own = next((CRS(g.crs) for g in raw.values() if projection.is_feet(CRS(g.crs))), None)
        if own is not None:
            return own, "the layers' own projected CRS (feet); no layer has features"
        return CRS.from_epsg(2261), "default EPSG:2261 (no layer has features)"
    return projection.choose_working_crs(user_crs=user_crs, primary_crs=prim, lonlat_bounds=lonlat)


def _to_working(role: str, gdf: gpd.GeoDataFrame, working: CRS) -> gpd.GeoDataFrame:
    """``gdf`` reprojected to ``working``; geometries the reprojection made invalid repaired."""
    if not CRS(gdf.crs).equals(working):
        log.info("reprojecting %s from %s to %s", role, crs_label(CRS(gdf.crs)), crs_label(working))
        gdf = gdf.to_crs(working)
        bad = ~shapely.is_valid(gdf.geometry.values)
        if bad.any():  # reprojection can fold a thin ring: repair those only, keep the role's kind
            g = gdf.geometry.values.copy()
            fixed = shapely.make_valid(g[bad])
            spec = ROLES[role]
            g[bad] = polygonal_parts(fixed) if "polygon" in spec.geometry and "line" not in spec.geometry else fixed
            gdf = gdf.set_geometry(g, crs=working)
    return gdf.reset_index(drop=True)
