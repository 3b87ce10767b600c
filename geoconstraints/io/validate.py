"""Validating one layer: canonical field names, feature ids, geometry repair and kinds,
NFHL sentinels and role-specific fields.
"""

from __future__ import annotations

import logging
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from geoconstraints.errors import FieldError, GeometryError, InputError
from geoconstraints.io.roles import NFHL_SENTINEL, ROLES, LayerSource, RoleSpec
from geoconstraints.text import id_list, is_blank, truthy

log = logging.getLogger(__name__)


def canonical_fields(gdf: gpd.GeoDataFrame, src: LayerSource, spec: RoleSpec) -> gpd.GeoDataFrame:
    """Rename fields to canonical names: explicit mapping first, then case-insensitive match."""
    what = f"layer {src.role} ({src.label})"
    rename: dict[str, str] = {}
    lower = {c.lower(): c for c in gdf.columns if c != gdf.geometry.name}
    for canon, source_name in src.fields.items():
        real = lower.get(str(source_name).lower())
        if real is None:
            raise FieldError(
                f"{what}: field {source_name!r} (mapped to {canon}) not found; fields are "
                f"{', '.join(lower.values())}"
            )
        rename[real] = canon
    wanted = (*spec.required, *spec.optional, *spec.id_fields)
    for canon in wanted:
        if canon in rename.values():
            continue
        real = lower.get(canon.lower())
        if real is not None and real not in rename:
            rename[real] = canon
    gdf = gdf.rename(columns=rename)
    missing = [f for f in spec.required if f not in gdf.columns]
    if missing:
        have = [c for c in gdf.columns if c != gdf.geometry.name]
        raise FieldError(
            f"{what}: required field {', '.join(missing)} missing (fields: {', '.join(have) or 'none'}). "
            f"Map it in a project file: [layers.{src.role}] fields = {{ {missing[0]} = \"YOUR_FIELD\" }}"
        )
    return gdf


def assign_ids(gdf: gpd.GeoDataFrame, src: LayerSource, spec: RoleSpec, warn: list[str]) -> gpd.GeoDataFrame:
    what = f"layer {src.role} ({src.label})"
    id_field = src.id_field
    if id_field:
        match = {c.lower(): c for c in gdf.columns}.get(id_field.lower())
        if match is None:
            raise FieldError(f"{what}: id field {id_field!r} not found; fields are "
                             f"{', '.join(c for c in gdf.columns if c != gdf.geometry.name)}")
        id_field = match
    else:
        id_field = next((f for f in spec.id_fields if f in gdf.columns), None)
    row_no = np.arange(len(gdf)) + 1  # 1-based row numbers in the file, kept through any drop
    if id_field is None:
        gdf["feature_id"] = [f"row {i}" for i in row_no]
        return gdf
    if gdf[id_field].duplicated(keep=False).any():
        # the same record twice (same id, every attribute and geometry), as in FEMA's Lexington
        # S_BFE, is one feature: drop the copies with a warning; differing features stay an error
        key = pd.DataFrame({c: gdf[c].astype(str).to_numpy() for c in gdf.columns if c != gdf.geometry.name})
        key["__wkb"] = shapely.to_wkb(gdf.geometry.values)
        copies = key.duplicated(keep="first").to_numpy()
        if copies.any():
            shown = gdf.loc[copies, id_field].astype(str).tolist()
            warn.append(f"{what}: {int(copies.sum())} feature(s) repeat another feature exactly (same "
                        f"{id_field}, attributes and geometry); the copies were dropped: {id_list(shown)}")
            gdf, row_no = gdf.loc[~copies].copy(), row_no[~copies]
    ids = gdf[id_field]
    blank = (ids.isna() | ids.map(lambda v: isinstance(v, str) and not v.strip())).to_numpy()
    if blank.any() and not src.id_field:
        rows = [str(i) for i in row_no[blank][:10]]
        warn.append(f"{what}: id field {id_field} is empty in rows {', '.join(rows)}; features are "
                    f"identified by row number instead (map an id field with id = \"...\" in a project file)")
        gdf["feature_id"] = [f"row {i}" for i in row_no]
        return gdf
    if blank.any():
        rows = [str(i) for i in row_no[blank][:10]]
        raise FieldError(f"{what}: id field {id_field} is empty in rows {', '.join(rows)}. Fill in the ids")
    as_text = ids.map(lambda v: str(int(v)) if isinstance(v, float) and float(v).is_integer() else str(v))
    dup = as_text[as_text.duplicated(keep=False)]
    if len(dup):
        shown = sorted(set(dup))[:10]
        raise InputError(
            f"{what}: duplicate ids in field {id_field}: {', '.join(shown)}"
            f"{' ...' if dup.nunique() > 10 else ''}. Each feature needs its own id: fix them, or "
            f"name a unique id field with id = \"...\" in a project file"
        )
    gdf["feature_id"] = as_text.astype(object).to_numpy()
    return gdf


def clean_geometries(gdf: gpd.GeoDataFrame, role: str, label: str, warn: list[str]) -> gpd.GeoDataFrame:
    """Drop Z, drop null/empty geometries (warning), check kinds, repair invalid ones (warning).

    Vectorized with shapely 2; only the ids in warnings are formatted per feature.
    """
    spec = ROLES[role]
    what = f"layer {role} ({label})"
    geom = gdf.geometry.values
    if shapely.has_z(geom).any():
        gdf = gdf.set_geometry(shapely.force_2d(geom), crs=gdf.crs)
        warn.append(f"{what}: Z coordinates dropped (elevations come from the DEM, not the layer)")
    geom = gdf.geometry.values
    empty = shapely.is_missing(geom) | shapely.is_empty(geom)
    if empty.any():
        ids = gdf.loc[empty, "feature_id"].astype(str).tolist()
        warn.append(f"{what}: {len(ids)} feature(s) with empty geometry dropped: {id_list(ids)}")
        gdf = gdf.loc[~empty].copy()
    if len(gdf) == 0:
        return gdf
    kinds = pd.Series(shapely.get_type_id(gdf.geometry.values)).map(
        {0: "point", 1: "line", 2: "line", 3: "polygon", 4: "point", 5: "line", 6: "polygon", 7: "collection"}
    ).to_numpy()
    invalid = ~shapely.is_valid(gdf.geometry.values)
    if invalid.any():
        ids = gdf.loc[invalid, "feature_id"].astype(str).tolist()
        fixed = shapely.make_valid(gdf.geometry.values[invalid])
        # keep the kind the feature had: a repaired polygon stays polygonal, a repaired line
        # lineal (make_valid may add stray lines/points, or turn a zero-length line into a point)
        was = kinds[invalid]
        for kind in ("polygon", "line"):
            sel = was == kind
            if sel.any():
                fixed[sel] = parts_of_kind(fixed[sel], kind)
        g = gdf.geometry.values.copy()
        g[invalid] = fixed
        gdf = gdf.set_geometry(g, crs=gdf.crs)
        warn.append(f"{what}: {len(ids)} invalid geometr{'y' if len(ids) == 1 else 'ies'} repaired "
                    f"with make_valid: {id_list(ids)}. Check them in a GIS")
        gone = invalid & shapely.is_empty(gdf.geometry.values)
        if gone.any():
            warn.append(f"{what}: {int(gone.sum())} feature(s) had no area or length left after repair "
                        f"and were dropped: {id_list(gdf.loc[gone, 'feature_id'].astype(str).tolist())}")
            gdf, kinds, invalid = gdf.loc[~gone].copy(), kinds[~gone], invalid[~gone]
    wrong = ~np.isin(kinds, spec.geometry)
    if wrong.any():
        ids = gdf.loc[wrong, "feature_id"].astype(str).tolist()
        got = sorted(set(kinds[wrong]))
        raise GeometryError(
            f"{what}: expected {' or '.join(spec.geometry)} geometries, found {', '.join(got)} in "
            f"feature(s) {id_list(ids)}. Remove them or give the right layer for {role}"
        )
    return gdf


_KIND_TYPE_IDS: dict[str, tuple[int, ...]] = {"polygon": (3, 6), "line": (1, 2, 5), "point": (0, 4)}
"""shapely type ids of each geometry kind (Polygon/MultiPolygon, LineString/LinearRing/MultiLineString, ...)."""


def parts_of_kind(geoms: Any, kind: str) -> np.ndarray:
    """Keep only the parts of ``kind`` (``polygon``, ``line``, ``point``) of each geometry.

    A geometry of that kind is kept as it is; one of another kind (a bare point or line where a
    clip only touches) becomes an empty geometry of ``kind``; a GeometryCollection (what
    ``make_valid`` and clipping can leave, stray lines and points beside the area) becomes the
    union of its parts of ``kind``. Missing geometries stay missing. Vectorized: only the rare
    collections are looked at one by one.

    Examples
    --------
    >>> from shapely.geometry import GeometryCollection, LineString, Point, box
    >>> gc = GeometryCollection([box(0, 0, 1, 1), LineString([(1, 1), (2, 2)]), Point(5, 5)])
    >>> [(g.geom_type, g.area) for g in parts_of_kind([gc, Point(0, 0), box(0, 0, 2, 2)], "polygon")]
    [('Polygon', 1.0), ('Polygon', 0.0), ('Polygon', 4.0)]
    >>> [g.wkt for g in parts_of_kind([gc], "line")]
    ['LINESTRING (1 1, 2 2)']
    """
    type_ids = _KIND_TYPE_IDS[kind]
    empty = {"polygon": shapely.Polygon(), "line": shapely.LineString(), "point": shapely.MultiPoint()}[kind]
    geoms = np.asarray(geoms, dtype=object)
    tid = shapely.get_type_id(geoms)
    out = np.where(np.isin(tid, type_ids) | (tid < 0), geoms, empty)
    for i in np.flatnonzero(tid == 7):
        parts = shapely.get_parts(shapely.get_parts(geoms[i]))  # collections may nest multi-parts
        keep = parts[np.isin(shapely.get_type_id(parts), type_ids)]
        out[i] = shapely.union_all(keep) if len(keep) else empty
    return out


def polygonal_parts(geoms: Any) -> np.ndarray:
    """Only the polygonal parts of each geometry (:func:`parts_of_kind` with ``'polygon'``): stray
    lines and points dropped, a geometry without area an empty polygon."""
    return parts_of_kind(geoms, "polygon")


def nfhl_sentinels(gdf: pd.DataFrame, spec: RoleSpec) -> pd.DataFrame:
    """Turn NFHL -9999 (and text 'NP' in numeric fields) into missing values."""
    for f in spec.sentinel_fields:
        if f in gdf.columns:
            vals = pd.to_numeric(gdf[f], errors="coerce")
            gdf[f] = vals.where(vals != NFHL_SENTINEL).astype("float64")
    return gdf


def normalize_role_fields(gdf: gpd.GeoDataFrame, role: str) -> gpd.GeoDataFrame:
    """Role-specific derived columns (SFHA_TF from FLD_ZONE, ...). A stream's ``kind`` is kept as
    given (trimmed, lower case) beside its raw ``FCODE``: reading them is the rulebook's
    (``rules.harvest.classify_streams``)."""
    if role == "streams" and "kind" in gdf.columns:
        kind = gdf["kind"].map(lambda v: None if is_blank(v) else str(v).strip().lower()).astype(object)
        gdf["kind"] = kind.where(kind.notna(), None)
    if role in ("flood_zones", "flood_zones_preliminary"):
        gdf["FLD_ZONE"] = gdf["FLD_ZONE"].map(lambda v: str(v).strip().upper() if v is not None and pd.notna(v) else None)
        if "ZONE_SUBTY" not in gdf.columns:
            gdf["ZONE_SUBTY"] = None
        gdf["ZONE_SUBTY"] = gdf["ZONE_SUBTY"].map(lambda v: str(v).strip().upper() if isinstance(v, str) and v.strip() else None)
        if "SFHA_TF" not in gdf.columns:
            gdf["SFHA_TF"] = None
        derived = gdf["FLD_ZONE"].map(lambda z: "T" if z and z.startswith(("A", "V")) and z != "AREA NOT INCLUDED" else "F")
        sfha = gdf["SFHA_TF"].map(lambda v: str(v).strip().upper()[:1] if isinstance(v, str) and v.strip() else None)
        gdf["SFHA_TF"] = sfha.where(sfha.isin(["T", "F"]), derived)
    if role == "skid_trails" and "constructed" in gdf.columns:
        gdf["constructed"] = gdf["constructed"].map(truthy)
    if role == "roads" and "row_width_ft" in gdf.columns:
        gdf["row_width_ft"] = pd.to_numeric(gdf["row_width_ft"], errors="coerce")
    return gdf
