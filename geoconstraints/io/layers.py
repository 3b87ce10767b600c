"""Loading input layers by role into one working CRS in feet.

A role is what a layer *is* to the law (``parcels``, ``flood_zones``, ``haul_roads``...). Layers
come from (a) a GeoPackage whose layer names are role names, (b) explicit ``role -> PATH[:LAYER]``
overrides, (c) a project file (TOML), or (d) a PostGIS table. Every layer ends in one working
CRS in feet, with canonical field names, a string ``feature_id`` column, valid non-empty
geometries, and NFHL -9999 sentinels turned into missing values.
"""

from __future__ import annotations

import hashlib
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

from geoconstraints.errors import CRSError, InputError
from geoconstraints.io import projection
from geoconstraints.io.dem import Dem, open_dem
from geoconstraints.io.paths import is_virtual, local_archive, sha256_file
from geoconstraints.io.postgis import is_db_source, read_postgis
from geoconstraints.io.projection import crs_label
from geoconstraints.io.roles import PLAN_ROLES, ROLES, SITE_ROLES, LayerSource
from geoconstraints.io.sources import file_stamp, read_source, resolve_sources
from geoconstraints.io.validate import (
    assign_ids,
    canonical_fields,
    check_numbers,
    clean_geometries,
    nfhl_sentinels,
    normalize_role_fields,
    polygonal_parts,
    repair_losses,
)
from geoconstraints.text import id_list, redact

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
    mtime_ns: int = 0
    """Modification time (ns) of the file when the layer was read, with ``size_bytes`` the file's
    stamp then (:func:`~geoconstraints.io.sources.file_stamp`); 0 for no local file."""
    repaired: dict[str, bool] = field(default_factory=dict)
    """``feature_id -> lost`` of each feature whose invalid geometry was repaired with ``make_valid``
    (as read, or made invalid by the reprojection): every finding about it rests on the repaired
    shape and says so. ``lost``: the repair left out land or lines the drawn geometry covers
    (:func:`~geoconstraints.io.validate.repair_losses`), so a ``pass`` about it is not evaluated."""


@dataclass(repr=False)
class Layers(Mapping[str, gpd.GeoDataFrame]):
    """Input layers by role, all in one working CRS in feet.

    Behaves like a read-only mapping ``role -> GeoDataFrame``; ``dem`` holds the DEM (or None).

    Examples
    --------
    >>> from geoconstraints import sample_path
    >>> load_layers(sample_path("vestal_sample.gpkg"), roles=("parcels", "zoning"), dem=sample_path("dem.tif"))
    <Layers in EPSG:2261: parcels (2819), zoning (10); dem dem.tif>
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

    def repaired_ids(self, role: str, *, lost: bool | None = None) -> list[str]:
        """Ids of the features of ``role`` whose geometry was repaired with ``make_valid`` (only those
        whose repair left out part of the drawing with ``lost=True``, only the others with ``False``).

        Examples
        --------
        >>> import geopandas as gpd
        >>> from shapely.geometry import Polygon, box
        >>> x, y = 960_000, 760_000  # Vestal, EPSG:2261 (ft)
        >>> bow_tie = Polygon([(x, y), (x + 100, y + 100), (x + 100, y), (x, y + 100)])
        >>> parcels = gpd.GeoDataFrame({"parcel_id": ["P1", "P7"]}, geometry=[box(x, y, x - 50, y - 50), bow_tie],
        ...                            crs=2261)
        >>> load_layers(parcels=parcels).repaired_ids("parcels")
        ['P7']
        """
        info = self.info.get(role)
        if info is None:
            return []
        return [i for i, gone in info.repaired.items() if lost is None or gone == lost]

    @property
    def repairs(self) -> dict[str, dict[str, bool]]:
        """``role -> {feature_id: lost}`` of the layers with repaired geometries (see
        :attr:`LayerInfo.repaired`); empty when every geometry was valid."""
        return {role: dict(i.repaired) for role, i in self.info.items() if i.repaired}

    def input_paths(self) -> set[Path]:
        """Resolved paths of every input file (outputs must never overwrite one)."""
        paths = {Path(i.path).resolve() for i in self.info.values()
                 if not is_db_source(i.path) and not is_virtual(i.path) and i.path != "GeoDataFrame"}
        paths |= {a.resolve() for i in self.info.values() if is_virtual(i.path) and (a := local_archive(i.path))}
        if self.dem is not None:
            paths.add(Path(self.dem.path).resolve())
        return paths

    def summary(self) -> pd.DataFrame:
        """One row per loaded role: features, source CRS, file, layer."""
        rows = [{"role": r, "features": i.features, "source_crs": i.source_crs,
                 "file": i.path if is_db_source(i.path) else Path(i.path).name,
                 "layer": i.layer or ""} for r, i in self.info.items()]
        return pd.DataFrame(rows, columns=["role", "features", "source_crs", "file", "layer"])

    def __repr__(self) -> str:
        roles = ", ".join(f"{r} ({len(g)})" for r, g in self.frames.items()) or "none"
        dem = f"; dem {Path(self.dem.path).name}" if self.dem is not None else ""
        return f"<Layers in {crs_label(self.crs)}: {roles}{dem}>"

    def _repr_html_(self) -> str:
        head = f"<p><b>Layers</b> in {self.crs.name} ({self.crs.to_string()})</p>"
        return head + self.summary().to_html(index=False, escape=True)


DEM_MARGIN_FT = 1_000.0
"""Margin around the layers' extent within which the DEM is read in one window (contours,
profiles and the highest adjacent grade stay inside it)."""


def load_layers(
    source: str | os.PathLike[str] | None = None,
    *,
    overrides: Mapping[str, Any] | None = None,
    project: str | os.PathLike[str] | None = None,
    crs: str | CRS | None = None,
    dem: str | os.PathLike[str] | None = None,
    dem_z_units: str | None = None,
    roles: tuple[str, ...] | None = None,
    primary: tuple[str, ...] = ("parcels", "harvest_area"),
    ids: Mapping[str, str] | None = None,
    fields: Mapping[str, Mapping[str, str]] | None = None,
    strict: bool = False,
    **by_role: Any,
) -> Layers:
    """Load every layer by role into one working CRS in feet.

    Parameters
    ----------
    source : path, optional
        A GeoPackage whose layer names are role names, or a project ``.toml`` file.
    overrides : mapping, optional
        ``role -> "PATH[:LAYER]"`` (or a GeoDataFrame); overrides layers found in ``source``.
    project : path, optional
        A project TOML file mapping roles to files, layers, id and field names.
    crs : str, optional
        Working CRS; must be projected in feet. Default: see :mod:`geoconstraints.io.projection`.
    dem, dem_z_units : optional
        DEM GeoTIFF and its vertical units (``ft``/``m``) when its metadata does not say.
    roles : tuple of str, optional
        Load only these roles (others found in ``source`` are ignored).
    primary : tuple of str
        Roles whose own CRS is preferred as working CRS.
    ids : mapping, optional
        ``role -> id field`` (``{"parcels": "LOC_ID"}``), as ``id =`` in a project file.
    fields : mapping, optional
        ``role -> {canonical: source field}`` (``{"flood_zones": {"FLD_ZONE": "ZONE"}}``).
    strict : bool
        Refuse duplicate or blank feature ids (by default they become ``ID (row N)`` with a warning).
    **by_role : path or GeoDataFrame
        A role's layer by its name (``parcels=gdf``, ``flood_zones="nfhl.gpkg:S_FLD_HAZ_AR"``);
        a GeoDataFrame is copied, never modified.

    Returns
    -------
    Layers

    Raises
    ------
    InputError (and subclasses)
        Unreadable file, missing CRS, wrong geometry type, missing field, an unknown role.

    Examples
    --------
    >>> from geoconstraints import sample_path
    >>> layers = load_layers(sample_path("vestal_sample.gpkg"), roles=("parcels",))
    >>> layers.crs.to_epsg()
    2261
    >>> import geopandas as gpd
    >>> parcels = gpd.read_file(sample_path("vestal_sample.gpkg"), layer="parcels").head(3)
    >>> load_layers(parcels=parcels)["parcels"]["feature_id"].tolist() == parcels["parcel_id"].tolist()
    True
    """
    sources, settings = _sources(source, overrides, project, roles, ids, fields, by_role)
    warn: list[str] = []
    raw: dict[str, gpd.GeoDataFrame] = {}
    info: dict[str, LayerInfo] = {}
    digests: dict[str, str] = {}  # the layers of one GeoPackage: its file hashed once
    for role, src in sources.items():
        raw[role], info[role] = _read_role(role, src, warn, strict=strict, digests=digests)
    working, reason = _working_crs(raw, crs if crs is not None else settings.get("crs"), primary)
    frames = {role: _to_working(role, gdf, working, warn, info[role].repaired) for role, gdf in raw.items()}
    _check_together(frames, info, primary)
    warn.extend(_mixed_crs_warning(info, working, reason))
    dem_obj = _open_dem(dem, dem_z_units, settings, frames, working)
    for w in warn:
        log.warning(w)
    return Layers(frames, working, reason, info, warn, dem_obj, settings)


def _sources(source: str | os.PathLike[str] | None, overrides: Mapping[str, Any] | None,
             project: str | os.PathLike[str] | None, roles: tuple[str, ...] | None,
             ids: Mapping[str, str] | None, fields: Mapping[str, Mapping[str, str]] | None,
             by_role: Mapping[str, Any]) -> tuple[dict[str, LayerSource], dict[str, Any]]:
    """The roles to read (``by_role`` over ``overrides`` over ``source``/``project``), with the id field
    and field mapping applied and limited to ``roles``, and the project's settings."""
    unknown = [r for r in by_role if r not in ROLES]
    if unknown:
        raise InputError(f"load_layers: {unknown[0]!r} is not a role or option; roles are {', '.join(ROLES)}")
    given = {**(overrides or {}), **{r: v for r, v in by_role.items() if v is not None}}
    sources, settings = resolve_sources(source, given, project)
    _apply_mapping(sources, ids, fields)
    if roles is not None:
        sources = {r: s for r, s in sources.items() if r in roles}
    return sources, settings


LAYERS_APART_FT = 264_000.0
"""Most the extents of a run's layers may lie apart (50 miles): layers farther from all the others are of
another place, or carry a wrong CRS label that still places them inside its zone (State Plane
coordinates in metres labelled as feet land about 100 miles off, where nothing is near them and every
distance rule reads as a pass)."""


def _check_together(frames: Mapping[str, gpd.GeoDataFrame], info: Mapping[str, LayerInfo],
                    primary: tuple[str, ...]) -> None:
    """Refuse layers whose extents fall into groups more than :data:`LAYERS_APART_FT` apart, naming
    the group away from the primary layer (the parcels or the plan) and the distance.

    Examples
    --------
    >>> from shapely.geometry import box
    >>> here = gpd.GeoDataFrame(geometry=[box(955_900, 754_100, 956_300, 754_500)], crs=2261)
    >>> there = gpd.GeoDataFrame(geometry=[box(291_000, 229_800, 291_100, 229_900)], crs=2261)
    >>> _check_together({"parcels": here, "streams": here}, {}, ("parcels",))
    >>> _check_together({"parcels": here, "streams": there}, {}, ("parcels",))
    Traceback (most recent call last):
    ...
    geoconstraints.errors.CRSError: layer streams lies 160 miles from layer parcels (their extents do not come within 50 miles of each other), so nothing it should touch or keep away from is near it and every distance would read as a pass. A CRS label is probably wrong (State Plane coordinates in metres labelled as feet land about 0.3 times as far from the zone's origin) or a layer is of another place: check each layer's CRS and extent with geoconstraints layers
    """
    roles = [r for r, g in frames.items() if len(g)]
    if len(roles) < 2:
        return
    boxes = np.array([frames[r].total_bounds for r in roles], dtype="float64")
    if not np.isfinite(boxes).all():
        return
    group = list(range(len(roles)))  # single linkage: boxes within LAYERS_APART_FT of each other join

    def root(i: int) -> int:
        while group[i] != i:
            i = group[i]
        return i

    for i in range(len(roles)):
        for j in range(i + 1, len(roles)):
            if _box_gap(boxes[i], boxes[j]) <= LAYERS_APART_FT:
                group[root(j)] = root(i)
    roots = [root(i) for i in range(len(roles))]
    if len(set(roots)) == 1:
        return
    main = next((roots[roles.index(r)] for r in primary if r in roles), None)
    if main is None:  # no primary layer: the group of the most layers
        main = max(set(roots), key=roots.count)
    apart = [i for i in range(len(roles)) if roots[i] != main]
    home = [i for i in range(len(roles)) if roots[i] == main]
    gap = min(_box_gap(boxes[i], boxes[j]) for i in apart for j in home)
    one, many = len(apart) == 1, len(home) > 1

    def names(idx: list[int]) -> str:
        label = ", ".join(roles[i] for i in idx)
        return f"layer{'s' if len(idx) > 1 else ''} {label}"

    raise CRSError(f"{names(apart)} lie{'s' if one else ''} {gap / 5280:,.0f} miles from {names(home)} (their extents "
                   f"do not come within {LAYERS_APART_FT / 5280:,.0f} miles of each other), so nothing "
                   f"{'it' if one else 'they'} should touch or keep away from is near {'it' if one else 'them'} and "
                   f"every distance would read as a pass. A CRS label is probably wrong (State Plane coordinates in "
                   f"metres labelled as feet land about 0.3 times as far from the zone's origin) or "
                   f"{'a layer is' if one and not many else 'layers are'} of another place: check each layer's CRS "
                   f"and extent with geoconstraints layers")


def _box_gap(a: np.ndarray, b: np.ndarray) -> float:
    """Distance between two boxes ``(minx, miny, maxx, maxy)``: 0 when they overlap or touch."""
    dx = max(0.0, float(b[0] - a[2]), float(a[0] - b[2]))
    dy = max(0.0, float(b[1] - a[3]), float(a[1] - b[3]))
    return float(np.hypot(dx, dy))


def _mixed_crs_warning(info: Mapping[str, LayerInfo], working: CRS, reason: str) -> list[str]:
    """One warning when the layers came in more than one CRS (none when they share one)."""
    source_crs = {role: i.source_crs for role, i in info.items()}
    if len(set(source_crs.values())) <= 1:
        return []
    return [f"layers come in {len(set(source_crs.values()))} CRSs ("
            + "; ".join(f"{r} {c}" for r, c in source_crs.items())
            + f"); all were reprojected to {crs_label(working)} ({reason})"]


def _apply_mapping(sources: dict[str, LayerSource], ids: Mapping[str, str] | None,
                   fields: Mapping[str, Mapping[str, str]] | None) -> None:
    """Set the id field and field mapping of the roles named in ``ids`` / ``fields``."""
    for what, mapping in (("ids", ids or {}), ("fields", fields or {})):
        for role, value in mapping.items():
            if role not in sources:
                raise InputError(f"load_layers: {what} names role {role!r}, which was not given "
                                 f"(given: {', '.join(sources) or 'none'})")
            if what == "ids":
                sources[role].id_field = str(value)
            elif not isinstance(value, Mapping):
                raise InputError(f"load_layers: fields[{role!r}] must map canonical names to the layer's field "
                                 f"names, e.g. {{'FLD_ZONE': 'ZONE'}}")
            else:
                sources[role].fields.update({str(k): str(v) for k, v in value.items()})


def _open_dem(dem: Any, dem_z_units: str | None, settings: dict[str, Any], frames: dict[str, gpd.GeoDataFrame],
              working: CRS) -> Dem | None:
    """The DEM (given, or the project's), read in one window around the plan (the harvest plan's or
    the site plan's layers, else all layers) plus :data:`DEM_MARGIN_FT`; elsewhere window by window."""
    cfg: dict[str, Any] = settings.get("dem") or {}
    path = dem if dem is not None else cfg.get("path")
    if path is None:
        return None
    obj = open_dem(path, z_units=dem_z_units or cfg.get("z_units"))
    plan = [r for r in (*PLAN_ROLES, *SITE_ROLES) if r in frames and len(frames[r])]
    bounds = [frames[r].total_bounds for r in plan] or [g.total_bounds for g in frames.values() if len(g)]
    if bounds:
        b = np.array(bounds)
        obj.set_focus((b[:, 0].min(), b[:, 1].min(), b[:, 2].max(), b[:, 3].max()), working, DEM_MARGIN_FT)
    return obj


def _read_role(role: str, src: LayerSource, warn: list[str], *, strict: bool = False,
               digests: dict[str, str] | None = None) -> tuple[gpd.GeoDataFrame, LayerInfo]:
    """Read one role's layer and validate it (CRS present, fields, ids, geometries, NFHL
    sentinels, location); warnings are appended to ``warn``. ``digests`` keeps the SHA-256 of
    the files hashed so far in this load, by path."""
    spec = ROLES[role]
    digest = ""
    file = None if src.db is not None or src.frame is not None else (
        local_archive(src.uri) if src.uri is not None else src.path)
    stamp = file_stamp(file)  # before the read: a file changed while or after it is read differs at the write
    if src.db is not None:
        gdf, digest = read_postgis(src)
    else:
        gdf = read_source(src, warn)
    what = f"layer {role} ({src.label})"
    _check_crs(gdf, what)
    gdf = canonical_fields(gdf, src, spec)
    absent = [f for f in spec.optional if f not in gdf.columns]
    gdf = assign_ids(gdf, src, spec, warn, strict=strict)
    repaired: dict[str, bool] = {}
    gdf = clean_geometries(gdf, role, src.label, warn, repaired)
    check_numbers(gdf, role, src.label, warn)
    gdf = nfhl_sentinels(gdf, spec)
    gdf = normalize_role_fields(gdf, role)
    if len(gdf) == 0:
        warn.append(f"{what}: has no features; rules that need {role} are not evaluated")
    else:
        _check_feature_locations(gdf, what)
        projection.check_location(tuple(gdf.total_bounds), CRS(gdf.crs), what=what)
    kept = [c for c in gdf.columns if c not in (gdf.geometry.name, "feature_id")]
    source_crs = crs_label(CRS(gdf.crs))
    if src.db is not None:  # no file: the redacted URL, the table, and a hash of the rows read
        return gdf, LayerInfo(role, src.db.redacted, src.db.qualified, len(gdf), source_crs, digest, 0, kept, absent,
                              repaired=repaired)
    if src.frame is not None:  # no file: a hash of the frame's rows
        return gdf, LayerInfo(role, "GeoDataFrame", None, len(gdf), source_crs, frame_digest(src.frame), 0, kept,
                              absent, repaired=repaired)
    size, mtime_ns = stamp if stamp is not None else (0, 0)
    if file is not None and stamp is not None:
        cache = {} if digests is None else digests
        key = str(file.resolve())
        if key not in cache:
            cache[key] = sha256_file(file)
        digest = cache[key]
    return gdf, LayerInfo(role, redact(src.uri) if src.uri is not None else str(src.path), src.layer, len(gdf),
                          source_crs, digest, size, kept, absent, mtime_ns, repaired)


def _check_crs(gdf: gpd.GeoDataFrame, what: str) -> None:
    """Refuse a layer without a CRS, or with a local (engineering) one that no map can place."""
    if gdf.crs is None:
        hint = ""
        b = gdf.total_bounds if len(gdf) else None
        if b is not None and np.all(np.abs(b) <= 360):
            hint = " Its coordinates look like longitude/latitude (EPSG:4326 or 4269)."
        raise CRSError(f"{what}: has no CRS (no .prj or SRS).{hint} Assign the right CRS in "
                       f"your GIS or with ogr2ogr -a_srs EPSG:XXXX, then try again")
    crs = CRS(gdf.crs)
    if crs.is_engineering or not (crs.is_projected or crs.is_geographic):
        raise CRSError(f"{what}: its CRS ({crs.name}) is a local engineering system (LOCAL_CS), not tied to the "
                       f"earth, so it cannot be placed with the other layers or the law's maps. Assign the real "
                       f"CRS with ogr2ogr -a_srs EPSG:XXXX (the State Plane zone the survey used)")


def _check_feature_locations(gdf: gpd.GeoDataFrame, what: str) -> None:
    """Refuse features that lie far outside where the layer's CRS is used while the others do not
    (:func:`~geoconstraints.io.projection.features_off`), naming them: a coordinate typed wrong or a
    feature drawn in another CRS. (A layer lying wholly elsewhere is refused for its CRS label by
    :func:`~geoconstraints.io.projection.check_location`.)"""
    crs = CRS(gdf.crs)
    off = projection.features_off(shapely.bounds(gdf.geometry.values), crs)
    if not off.any():
        return
    if off.all():  # the whole layer: its CRS label, as check_location says (when it can tell)
        projection.check_location(tuple(gdf.total_bounds), crs, what=what)
    ids = gdf.loc[off, "feature_id"].astype(str).tolist()
    x0, y0, x1, y1 = shapely.bounds(gdf.geometry.values[np.flatnonzero(off)[0]])
    aou = crs.area_of_use
    where = f" (lon {aou.west:.1f}..{aou.east:.1f}, lat {aou.south:.1f}..{aou.north:.1f})" if aou is not None else ""
    many = len(ids) > 1
    if off.all():
        raise CRSError(f"{what}: its features lie far outside where its CRS {crs_label(crs)} is used{where} "
                       f"(x {x0:.6g}..{x1:.6g}, y {y0:.6g}..{y1:.6g} in {ids[0]}). The CRS label is probably wrong, "
                       f"or the coordinates: fix the .prj or layer CRS (e.g. with ogr2ogr -a_srs) or the layer")
    raise CRSError(f"{what}: feature{'s' if many else ''} {id_list(ids)} lie{'' if many else 's'} far outside where "
                   f"its CRS {crs_label(crs)} is used{where}, unlike the layer's other features (x {x0:.6g}..{x1:.6g}, "
                   f"y {y0:.6g}..{y1:.6g}{' in ' + ids[0] if many else ''}): a coordinate typed wrong or a feature "
                   f"drawn in another CRS. Fix or delete {'them' if many else 'it'} in a GIS")


def frame_digest(frame: gpd.GeoDataFrame) -> str:
    """SHA-256 of a GeoDataFrame's rows (attributes as text, geometries as WKB), for the provenance."""
    h = hashlib.sha256()
    attrs = frame.drop(columns=[frame.geometry.name])
    h.update(attrs.astype(str).to_csv(index=False).encode("utf-8"))
    for wkb in shapely.to_wkb(frame.geometry.values):
        h.update(wkb or b"")
    return h.hexdigest()


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
        return CRS.from_epsg(2261), "default EPSG:2261 (no layer has features to locate)"
    return projection.choose_working_crs(user_crs=user_crs, primary_crs=prim, lonlat_bounds=lonlat)


def _to_working(role: str, gdf: gpd.GeoDataFrame, working: CRS, warn: list[str] | None = None,
                repaired: dict[str, bool] | None = None) -> gpd.GeoDataFrame:
    """``gdf`` reprojected to ``working``; geometries the reprojection made invalid repaired (a warning
    in ``warn``; ``feature_id -> lost`` added to ``repaired``, as :func:`clean_geometries` does)."""
    if not CRS(gdf.crs).equals(working):
        log.info("reprojecting %s from %s to %s", role, crs_label(CRS(gdf.crs)), crs_label(working))
        gdf = gdf.to_crs(working)
        bad = ~shapely.is_valid(gdf.geometry.values)
        if bad.any():  # reprojection can fold a thin ring: repair those only, keep the role's kind
            g = gdf.geometry.values.copy()
            drawn = np.asarray(g[bad], dtype=object)
            fixed = shapely.make_valid(drawn)
            spec = ROLES[role]
            polygons = "polygon" in spec.geometry and "line" not in spec.geometry
            g[bad] = polygonal_parts(fixed) if polygons else fixed
            gdf = gdf.set_geometry(g, crs=working)
            ids = gdf.loc[bad, "feature_id"].astype(str).tolist()
            if warn is not None:
                warn.append(f"layer {role}: {len(ids)} geometr{'y' if len(ids) == 1 else 'ies'} made invalid by the "
                            f"reprojection to {crs_label(working)} repaired with make_valid: {id_list(ids)}. "
                            f"Check them in a GIS")
            if repaired is not None:
                lost = repair_losses(drawn, g[bad]) if polygons else np.zeros(len(ids), dtype=bool)
                for i, gone in zip(ids, lost.tolist()):
                    repaired[i] = repaired.get(i, False) or gone
    return gdf.reset_index(drop=True)
