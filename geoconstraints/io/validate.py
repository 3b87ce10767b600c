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
from geoconstraints.parallel import chunked
from geoconstraints.text import FALSE_WORDS, TRUE_WORDS, id_list, is_blank, truthy
from geoconstraints.units import (
    FT_PER_M,
    HIGHEST_GROUND_FT,
    LOWEST_GROUND_FT,
    MAX_MAGNITUDE,
    REPAIR_REL_NOISE,
    normalize_length_unit,
)

log = logging.getLogger(__name__)


def canonical_fields(gdf: gpd.GeoDataFrame, src: LayerSource, spec: RoleSpec) -> gpd.GeoDataFrame:
    """Rename fields to canonical names: explicit mapping first, then a case-insensitive match.

    A name that matches two fields differing only in case (``parcel_id`` and ``PARCEL_ID``) is
    refused unless the mapping names one exactly; a field already called like a mapped canonical
    name is kept as ``NAME_1``.
    """
    what = f"layer {src.role} ({src.label})"
    cols = [str(c) for c in gdf.columns if c != gdf.geometry.name]
    rename: dict[str, str] = {}
    for canon, source_name in src.fields.items():
        real = _match(cols, str(source_name), what, f"{source_name!r} (mapped to {canon})", explicit=True)
        if real is None:
            raise FieldError(f"{what}: field {source_name!r} (mapped to {canon}) not found; fields are "
                             f"{', '.join(cols)}")
        rename[real] = canon
    if src.id_field:
        _match(cols, src.id_field, what, f"{src.id_field!r} (the id field)", explicit=True)
    for canon in (*spec.required, *spec.optional, *spec.id_fields):
        if canon in rename.values() or (src.id_field and src.id_field.lower() == canon.lower()):
            continue
        real = _match(cols, canon, what, canon, explicit=False)
        if real is not None and real not in rename:
            rename[real] = canon
    taken = set(rename.values())
    clash = {c: _free_name(c, cols) for c in cols if c in taken and c not in rename}
    gdf = gdf.rename(columns={**clash, **rename})
    missing = [f for f in spec.required if f not in gdf.columns]
    if missing:
        have = [c for c in gdf.columns if c != gdf.geometry.name]
        raise FieldError(
            f"{what}: required field {', '.join(missing)} missing (fields: {', '.join(map(str, have)) or 'none'}). "
            f"Map it in a project file: [layers.{src.role}] fields = {{ {missing[0]} = \"YOUR_FIELD\" }}"
        )
    return gdf


def _match(cols: list[str], name: str, what: str, label: str, *, explicit: bool) -> str | None:
    """The field ``name`` among ``cols``: the exact name when mapped explicitly, else the one
    field equal to it ignoring case; two fields differing only in case are refused."""
    if explicit and name in cols:
        return name
    hits = [c for c in cols if c.lower() == name.lower()]
    if len(hits) > 1:
        raise FieldError(f"{what}: fields {' and '.join(hits)} differ only in case, so {label} is ambiguous. "
                         f"Rename or delete one, or name the one to use exactly in a project file "
                         f"(id = \"{hits[0]}\" or fields = {{ ... = \"{hits[0]}\" }})")
    return hits[0] if hits else None


def _free_name(name: str, cols: list[str]) -> str:
    i = 1
    while f"{name}_{i}" in cols:
        i += 1
    return f"{name}_{i}"


def assign_ids(gdf: gpd.GeoDataFrame, src: LayerSource, spec: RoleSpec, warn: list[str], *,
               strict: bool = False) -> gpd.GeoDataFrame:
    """Add the string column ``feature_id``: the id field's value, told apart when it is not unique.

    Real county layers have blank and repeated ids (Cambridge MA's parcels: ``---`` twice,
    ``--R`` four times). They do not stop a run: a repeated id becomes ``ID (row N)`` and a
    blank one ``row N`` (N the feature's row in the file, counting from 1), with one warning
    giving the count and examples. ``strict=True`` (``--strict``) refuses them instead. A layer
    without an id field is identified by row number, with a warning. Exact copies of a feature
    (same id, attributes and geometry, as in FEMA's Lexington S_BFE) are one feature: the copies
    are dropped with a warning.
    """
    what = f"layer {src.role} ({src.label})"
    id_field = _id_field(gdf, src, spec, what)
    row_no = np.arange(len(gdf)) + 1  # 1-based row numbers in the file, kept through any drop
    if id_field is None:
        if len(gdf):
            warn.append(f"{what}: no id field ({' or '.join(spec.id_fields)}); features are identified by row "
                        f"number (row 1, row 2 ...). Name the id field with id = \"...\" in a project file")
        gdf["feature_id"] = [f"row {i}" for i in row_no]
        return gdf
    raw_dup: np.ndarray | None = gdf[id_field].duplicated(keep=False).to_numpy()
    if raw_dup is not None and raw_dup.any():
        gdf, row_no = _drop_copies(gdf, id_field, row_no, what, warn)
        raw_dup = None  # features dropped: counted again below
    as_text, blank, verbatim = id_texts(gdf[id_field])
    if verbatim and raw_dup is not None:  # the text is the value itself: the same repeats
        dup = ~blank & raw_dup
    else:
        dup = ~blank & pd.Series(as_text).duplicated(keep=False).to_numpy()
    if strict and (blank.any() or dup.any()):
        _refuse_ids(what, id_field, as_text, row_no, blank, dup)
    if blank.any():
        warn.append(f"{what}: id field {id_field} is empty in rows {id_list(row_no[blank].astype(str), 5)} "
                    f"({int(blank.sum())} feature(s)); they are identified by row number ('row N'). Fill in the "
                    f"ids, or use --strict to refuse such a layer")
    if dup.any():
        shown = [f"{v} ({int((as_text[dup] == v).sum())}x)" for v in pd.unique(as_text[dup])]
        warn.append(f"{what}: {int(dup.sum())} feature(s) share an id in field {id_field} ({id_list(shown, 5)}); "
                    f"they are identified as 'ID (row N)'. Fix the ids, name a unique id field with id = \"...\" "
                    f"in a project file, or use --strict to refuse such a layer")
    out = as_text.copy()
    out[blank] = [f"row {r}" for r in row_no[blank]]
    out[dup] = [f"{v} (row {r})" for v, r in zip(as_text[dup], row_no[dup])]
    gdf["feature_id"] = out
    return gdf


def id_texts(ids: pd.Series) -> tuple[np.ndarray, np.ndarray, bool]:
    """Each id as text (``""`` where blank), where it is blank, and whether the text is the value itself.

    Blank: missing, or a text of spaces only. A whole-number float id (``1234.0``: a numeric
    shapefile or GeoPackage field) reads ``1234``. Vectorized for text, integer and float
    columns; a column of mixed values is converted one value at a time.

    Examples
    --------
    >>> t, blank, _ = id_texts(pd.Series([1234.0, 2.5, None]))
    >>> t.tolist(), blank.tolist()
    (['1234', '2.5', ''], [False, False, True])
    >>> t, blank, same = id_texts(pd.Series(["A-1", "  ", None]))
    >>> t.tolist(), blank.tolist(), same
    (['A-1', '', ''], [False, True, True], True)
    """
    miss = ids.isna().to_numpy()
    if pd.api.types.is_float_dtype(ids.dtype):
        v = ids.to_numpy(dtype="float64", na_value=np.nan)
        text = v.astype(str).astype(object)  # numpy's shortest repr, as str(float)
        whole = np.isfinite(v) & (np.floor(v) == v) & (np.abs(v) < 2.0 ** 53)
        text[whole] = v[whole].astype(np.int64).astype(str)
        big = np.isfinite(v) & (np.floor(v) == v) & ~whole
        text[big] = [str(int(x)) for x in v[big]]
        verbatim, blank = False, miss
    elif pd.api.types.is_integer_dtype(ids.dtype) or pd.api.types.is_bool_dtype(ids.dtype):
        text, verbatim, blank = ids.astype(str).to_numpy(dtype=object), False, miss
    elif pd.api.types.is_string_dtype(ids.dtype) and pd.api.types.infer_dtype(ids, skipna=True) in ("string", "empty"):
        text, verbatim = ids.to_numpy(dtype=object, na_value=""), True
        blank = miss | ids.str.strip().eq("").fillna(False).to_numpy(dtype=bool)
    else:  # mixed values in an object column
        blank = (ids.isna() | ids.map(lambda x: isinstance(x, str) and not x.strip())).to_numpy()
        text = ids.map(lambda x: str(int(x)) if isinstance(x, float) and float(x).is_integer() else str(x)).to_numpy()
        verbatim = False
    text = np.where(blank, "", text).astype(object)
    return text, np.asarray(blank, dtype=bool), verbatim


def _id_field(gdf: gpd.GeoDataFrame, src: LayerSource, spec: RoleSpec, what: str) -> str | None:
    """The id column: the one named in the source (case-insensitive), else the role's first candidate."""
    if not src.id_field:
        return next((f for f in spec.id_fields if f in gdf.columns), None)
    cols = [str(c) for c in gdf.columns if c != gdf.geometry.name]
    match = _match(cols, src.id_field, what, f"{src.id_field!r} (the id field)", explicit=True)
    if match is None:
        raise FieldError(f"{what}: id field {src.id_field!r} not found; fields are "
                         f"{', '.join(str(c) for c in gdf.columns if c != gdf.geometry.name)}")
    return match


def _drop_copies(gdf: gpd.GeoDataFrame, id_field: str, row_no: np.ndarray, what: str,
                 warn: list[str]) -> tuple[gpd.GeoDataFrame, np.ndarray]:
    """Drop exact copies of a feature (same id, every attribute and geometry), with a warning."""
    key = pd.DataFrame({c: gdf[c].astype(str).to_numpy() for c in gdf.columns if c != gdf.geometry.name})
    key["__wkb"] = shapely.to_wkb(gdf.geometry.values)
    copies = key.duplicated(keep="first").to_numpy()
    if not copies.any():
        return gdf, row_no
    shown = gdf.loc[copies, id_field].astype(str).tolist()
    warn.append(f"{what}: {int(copies.sum())} feature(s) repeat another feature exactly (same "
                f"{id_field}, attributes and geometry); the copies were dropped: {id_list(shown)}")
    return gdf.loc[~copies].copy(), row_no[~copies]


def _refuse_ids(what: str, id_field: str, as_text: np.ndarray, row_no: np.ndarray, blank: np.ndarray,
                dup: np.ndarray) -> None:
    """The ``--strict`` refusal of blank or repeated ids."""
    if dup.any():
        shown = sorted(set(as_text[dup]))
        raise InputError(
            f"{what}: duplicate ids in field {id_field}: {id_list(shown)}. Each feature needs its own id "
            f"(--strict): fix them, or name a unique id field with id = \"...\" in a project file"
        )
    raise FieldError(f"{what}: id field {id_field} is empty in rows {id_list(row_no[blank].astype(str))}. "
                     f"Fill in the ids (--strict)")


def clean_geometries(gdf: gpd.GeoDataFrame, role: str, label: str, warn: list[str],
                     repaired: dict[str, bool] | None = None) -> gpd.GeoDataFrame:
    """Drop Z, drop null/empty geometries (warning), check kinds, repair invalid ones (warning).

    Vectorized with shapely 2; only the ids in warnings are formatted per feature. ``repaired``,
    when given, receives ``feature_id -> lost`` for each feature kept whose geometry was repaired
    with ``make_valid`` (``lost``: the repair left out land or lines the drawn geometry covers,
    :func:`repair_losses`), so every finding about it can say so.

    Examples
    --------
    >>> from shapely.geometry import Polygon, box
    >>> bow_tie = Polygon([(0, 0), (10, 10), (10, 0), (0, 10)])
    >>> g = gpd.GeoDataFrame({"feature_id": ["P1", "P7"]}, geometry=[box(0, 0, 5, 5), bow_tie], crs=2261)
    >>> warn, rep = [], {}
    >>> clean_geometries(g, "parcels", "t.gpkg", warn, rep).geometry.area.tolist(), rep
    ([25.0, 50.0], {'P7': False})
    """
    spec = ROLES[role]
    what = f"layer {role} ({label})"
    geom = gdf.geometry.values
    has_m = shapely.has_m(geom).any() if hasattr(shapely, "has_m") else False
    if shapely.has_z(geom).any() or has_m:
        gdf = gdf.set_geometry(shapely.force_2d(geom), crs=gdf.crs)
        dims = " and ".join(d for d, has in (("Z coordinates", shapely.has_z(geom).any()), ("M values", has_m)) if has)
        warn.append(f"{what}: {dims} dropped (elevations come from the DEM, not the layer)")
    geom = gdf.geometry.values
    _refuse_nonfinite(gdf, what)
    empty = shapely.is_missing(geom) | shapely.is_empty(geom)
    if empty.any():
        ids = gdf.loc[empty, "feature_id"].astype(str).tolist()
        warn.append(f"{what}: {len(ids)} feature(s) with empty geometry dropped: {id_list(ids)}")
        gdf = gdf.loc[~empty].copy()
    if len(gdf) == 0:
        return gdf
    kinds = FAMILY_OF_TYPE_ID[np.asarray(shapely.get_type_id(gdf.geometry.values))]  # none missing here
    invalid = ~chunked(shapely.is_valid, np.asarray(gdf.geometry.values, dtype=object))  # a county's: on every core
    if invalid.any():
        ids = gdf.loc[invalid, "feature_id"].astype(str).tolist()
        drawn = np.asarray(gdf.geometry.values[invalid], dtype=object)
        fixed = shapely.make_valid(drawn)
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
        if repaired is not None:  # the features kept: every finding about one says it rests on the repair
            lost = np.zeros(len(ids), dtype=bool)
            poly = (was == "polygon") & ~shapely.is_empty(fixed)
            if poly.any():
                lost[poly] = repair_losses(drawn[poly], fixed[poly])
            kept = ~gone[invalid]
            repaired.update(zip(np.asarray(ids, dtype=object)[kept].tolist(), lost[kept].tolist()))
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


def _refuse_nonfinite(gdf: gpd.GeoDataFrame, what: str) -> None:
    """Refuse features with a NaN or infinite coordinate (a corrupt export): no distance or area
    of them means anything, and GEOS may fail on them."""
    geoms = np.asarray(gdf.geometry.values, dtype=object)
    finite = chunked(_all_finite, geoms)  # a county's vertices: on every core
    if not finite.all():
        feats = np.flatnonzero(~finite)
        ids = gdf["feature_id"].to_numpy()[feats].astype(str)
        raise GeometryError(f"{what}: feature{'s' if len(feats) > 1 else ''} {id_list(ids)} "
                            f"{'have' if len(feats) > 1 else 'has'} vertices without coordinates (NaN or infinite "
                            f"x/y). Fix or delete {'them' if len(feats) > 1 else 'it'} in a GIS (e.g. check geometry "
                            f"validity in QGIS) and export the layer again")


def _all_finite(geoms: np.ndarray) -> np.ndarray:
    """Whether every vertex of each geometry has finite x and y (a missing geometry: True).

    Examples
    --------
    >>> from shapely.geometry import LineString, Point
    >>> _all_finite(np.array([Point(0, 1), LineString([(0, 0), (float("nan"), 1)]), None])).tolist()
    [True, False, True]
    """
    xy, idx = shapely.get_coordinates(geoms, return_index=True)
    bad = np.zeros(len(geoms), dtype=bool)
    bad[idx[~np.isfinite(xy).all(axis=1)]] = True
    return ~bad


FAMILY_OF_TYPE_ID = np.array(["point", "line", "line", "polygon", "point", "line", "polygon", "collection"],
                             dtype=object)
"""The geometry family of each shapely type id 0..7 (Point, LineString, LinearRing, Polygon, MultiPoint,
MultiLineString, MultiPolygon, GeometryCollection): the one table of it (loading, the output layers, styles)."""

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


def repair_losses(drawn: Any, fixed: Any) -> np.ndarray:
    """Whether each polygon's repair left out land or lines the drawn (invalid) polygon covers.

    ``make_valid`` keeps the area a ring encloses once (a bow-tie becomes its two triangles: nothing
    lost), but not all a drawing covers: land a ring winds around twice becomes a hole, and a
    spike (a ring that goes out and back along one line) is dropped as a collapsed part. Either can
    turn an outcome around (a parcel whose lost land lies in the floodway reads as outside it, a
    landing whose lost spike reaches toward the road as far enough), so a pass on such a shape
    means nothing. Measured against the union of everything the rings enclose
    (``make_valid(method="structure")``) and the drawn rings themselves, to the relative tolerance
    :data:`~geoconstraints.units.REPAIR_REL_NOISE` of the feature's size (the diagonal of its bounding
    box: rounding at the new nodes): an area lost is more than ``REPAIR_REL_NOISE * size ** 2``, a line
    lost longer than ``REPAIR_REL_NOISE * size``. Only the few repaired features are passed here.

    Examples
    --------
    >>> from shapely.geometry import Polygon
    >>> bow_tie = Polygon([(0, 0), (10, 10), (10, 0), (0, 10)])
    >>> twice = Polygon([(0, 0), (10, 0), (10, 10), (0, 10), (0, 0), (2, 2), (8, 2), (8, 8), (2, 8), (2, 2)])
    >>> spike = Polygon([(0, 0), (10, 0), (10, 5), (30, 5), (10, 5), (10, 10), (0, 10)])
    >>> drawn = np.array([bow_tie, twice, spike], dtype=object)
    >>> repair_losses(drawn, polygonal_parts(shapely.make_valid(drawn))).tolist()
    [False, True, True]

    At the tolerance's edge: a 100 ft square (size 141.4 ft) whose repair opened a hole of just under
    ``REPAIR_REL_NOISE * size ** 2`` (0.02 sq ft) lost nothing; just over, it lost land.

    >>> square = Polygon([(0, 0), (100, 0), (100, 100), (0, 100)])
    >>> edge = REPAIR_REL_NOISE * (100.0 ** 2 + 100.0 ** 2)
    >>> holed = [square.difference(Polygon([(50, 50), (50 + w, 50), (50 + w, 51), (50, 51)])) for w in
    ...          (0.999 * edge, 1.001 * edge)]  # holes of 1 ft by just under and just over 0.02 ft
    >>> repair_losses(np.array([square, square], dtype=object), np.array(holed, dtype=object)).tolist()
    [False, True]
    """
    drawn = np.asarray(drawn, dtype=object)
    fixed = np.asarray(fixed, dtype=object)
    if not len(drawn):
        return np.zeros(0, dtype=bool)
    b = shapely.bounds(drawn)
    size = np.hypot(b[:, 2] - b[:, 0], b[:, 3] - b[:, 1])
    eps = np.where(np.isfinite(size) & (size > 0), size, 1.0) * REPAIR_REL_NOISE
    enclosed = polygonal_parts(shapely.make_valid(drawn, method="structure", keep_collapsed=False))
    area_lost = shapely.area(shapely.difference(enclosed, fixed)) > eps * size
    rings = shapely.boundary(drawn)
    line_lost = shapely.length(shapely.difference(rings, shapely.buffer(fixed, eps))) > eps
    return np.asarray(area_lost | line_lost, dtype=bool)


def polygonal_parts(geoms: Any) -> np.ndarray:
    """Only the polygonal parts of each geometry (:func:`parts_of_kind` with ``'polygon'``): stray
    lines and points dropped, a geometry without area an empty polygon."""
    return parts_of_kind(geoms, "polygon")


NFHL_NO_VALUE_AT_MOST = -999.0
"""An NFHL number at or below this is a "no value" code, never a measure: NFHL's own -9999
(:data:`~geoconstraints.io.roles.NFHL_SENTINEL`) and the -8888, -999 ... other exports write. Such a
value is read as not given; any but -9999 with a warning."""

NFHL_BFE_FIELDS: tuple[str, ...] = ("STATIC_BFE", "ELEV")
"""NFHL fields holding a base flood elevation, where 0 is no value too: NFHL writes -9999 where
there is no BFE and never a BFE of 0 ft (tests/data/real/SOURCES.md: Lexington's ELEV runs 709 to
1,468 ft, its STATIC_BFE is -9999 or a real value), so a 0 is a blank an export filled with zero."""

LOWEST_BFE_FT = LOWEST_GROUND_FT
"""The lowest believable base flood elevation (ft), below the lowest ground in the United States
(Badwater Basin, Death Valley, -282 ft). A BFE may be negative (land below sea level, around New
Orleans or the Salton Sea: why :data:`NUMBER_FIELDS` lets it), but one under this is no elevation
(a lost sign, a code) and the layer is refused; so is one over
:data:`~geoconstraints.units.HIGHEST_GROUND_FT` (Denali, 20,310 ft: a slipped decimal point, 81240 for
812.40)."""


def nfhl_no_value(vals: np.ndarray, field: str) -> np.ndarray:
    """Where NFHL numbers of ``field`` are "no value" codes: finite and at or below
    :data:`NFHL_NO_VALUE_AT_MOST`, or 0 in a BFE field (:data:`NFHL_BFE_FIELDS`). NaN is no code
    (it is already no value) and neither is infinity (refused by :func:`check_numbers`).

    Examples
    --------
    >>> v = np.array([-9999.0, -8888.0, -999.0, -998.9, 0.0, 812.5, np.nan, -np.inf])
    >>> nfhl_no_value(v, "STATIC_BFE").tolist()
    [True, True, True, False, True, False, False, False]
    >>> nfhl_no_value(v, "DEPTH").tolist()
    [True, True, True, False, False, False, False, False]
    """
    vals = np.asarray(vals, dtype="float64")
    code = np.isfinite(vals) & (vals <= NFHL_NO_VALUE_AT_MOST)
    return code | (vals == 0) if field in NFHL_BFE_FIELDS else code


def nfhl_sentinels(gdf: pd.DataFrame, spec: RoleSpec) -> pd.DataFrame:
    """Turn NFHL "no value" codes (-9999 and the like, 0 as a BFE: :func:`nfhl_no_value`) and text
    ('NP') in numeric fields into missing values."""
    for f in spec.sentinel_fields:
        if f in gdf.columns:
            vals = pd.to_numeric(gdf[f], errors="coerce").astype("float64")
            gdf[f] = vals.where(~nfhl_no_value(vals.to_numpy(), f))
    return gdf


NUMBER_FIELDS: dict[str, dict[str, bool]] = {
    "harvest_area": {"cords": True, "cubic_feet": True, "board_feet": True},
    "roads": {"row_width_ft": True},
    "flood_zones": {"STATIC_BFE": False, "DEPTH": True, "VELOCITY": True},
    "flood_zones_preliminary": {"STATIC_BFE": False, "DEPTH": True, "VELOCITY": True},
    "bfe_lines": {"ELEV": False},
}
"""Numeric fields a rule reads, per role: ``True`` where a negative value means nothing (a
volume, a width, a depth). Infinity is refused in all of them (NaN is a missing value)."""


MAX_ROW_WIDTH_FT = 1_000.0
"""The widest believable road right-of-way (ft); an interstate's is a few hundred feet. A wider
``row_width_ft`` is no right-of-way (a typo, a code, another unit): it would widen one road over
the whole town, and a width like 1e300 breaks GEOS."""

NUMBER_MAXIMA: dict[str, dict[str, tuple[float, str]]] = {
    "roads": {"row_width_ft": (MAX_ROW_WIDTH_FT, "wider than any road right-of-way")},
}
"""Numeric fields with a largest meaningful value, per role: the bound (in the field's unit) and
what a larger value would be. A larger value is refused."""

FLAG_FIELDS: dict[str, tuple[str, ...]] = {"skid_trails": ("constructed",)}
"""Yes/no fields a rule reads, per role (read with :func:`~geoconstraints.text.truthy`)."""


def check_numbers(gdf: gpd.GeoDataFrame, role: str, label: str, warn: list[str] | None = None) -> None:
    """Refuse an infinite value, or a negative one where it means nothing, in a numeric field a
    rule reads (:data:`NUMBER_FIELDS`), naming the layer, the field and the features; text that
    is no number (other than NFHL's ``NP``) is a warning: that value counts as not given.

    Also refused: a value over its bound (:data:`NUMBER_MAXIMA`), one larger than
    :data:`MAX_MAGNITUDE` and a BFE under
    :data:`LOWEST_BFE_FT`. NFHL "no value" codes other than -9999 (:func:`nfhl_no_value`) and
    yes/no fields holding neither word (:data:`FLAG_FIELDS`) are warnings: not given.
    """
    what = f"layer {role} ({label})"
    _check_len_unit(gdf, role, what)
    for name, nonneg in NUMBER_FIELDS.get(role, {}).items():
        if name not in gdf.columns:
            continue
        raw = gdf[name]
        vals = pd.to_numeric(raw, errors="coerce").to_numpy(dtype="float64", copy=True)
        given = ~raw.map(is_blank).to_numpy(dtype=bool) & (raw.astype(str).str.strip().str.upper() != "NP").to_numpy()
        text = np.isnan(vals) & given
        if name in ROLES[role].sentinel_fields:
            _nfhl_codes(gdf, name, vals, what, warn)  # NFHL's "none": NaN from here on
        if text.any() and warn is not None:
            ids = gdf["feature_id"].to_numpy()[text].astype(str)
            warn.append(f"{what}: field {name} holds text that is no number ({raw[text].iloc[0]!r}) in "
                        f"{id_list(ids)}; those values count as not given")
        huge = np.isfinite(vals) & (np.abs(vals) > MAX_MAGNITUDE)
        bad = np.isinf(vals) | ((vals < 0) & nonneg) | huge
        if bad.any():
            ids = gdf["feature_id"].to_numpy()[bad].astype(str)
            first = vals[bad][0]
            why = ("is not a finite number" if np.isinf(first) else
                   f"is too large (over {MAX_MAGNITUDE:g}), beyond any quantity a layer measures"
                   if huge[bad][0] else "is negative, which means nothing here")
            raise FieldError(f"{what}: field {name} = {first:g} {why} (feature{'s' if len(ids) > 1 else ''} "
                             f"{id_list(ids)}). Correct the value, or leave it empty where it is not known")
        if name in NFHL_BFE_FIELDS:
            _check_bfe(gdf, name, vals, what, warn)
        top, meaning = NUMBER_MAXIMA.get(role, {}).get(name, (np.inf, ""))
        over = vals > top
        if over.any():
            ids = gdf["feature_id"].to_numpy()[over].astype(str)
            raise FieldError(f"{what}: field {name} = {vals[over][0]:,.10g} is over {top:,.10g}, {meaning} "
                             f"(feature{'s' if len(ids) > 1 else ''} {id_list(ids)}). Correct the value, or "
                             f"leave it empty where it is not known")
    _check_flags(gdf, role, what, warn)


LEN_UNIT_FIELDS: tuple[str, ...] = ("STATIC_BFE", "ELEV", "DEPTH")
"""NFHL fields measured in the feature's ``LEN_UNIT`` (feet when it is empty or ``NP``)."""


def _check_len_unit(gdf: gpd.GeoDataFrame, role: str, what: str) -> None:
    """Refuse a feature stating a BFE or depth in a ``LEN_UNIT`` that is neither feet nor metres
    (``Yards``, ``Inches``, a typo): read as feet, an elevation in another unit made a floor below
    the flood pass. An empty or ``NP`` unit is feet (NFHL's own); a unit on a feature without a
    value is not read."""
    if "LEN_UNIT" not in gdf.columns or role not in NUMBER_FIELDS:
        return
    unit = gdf["LEN_UNIT"]
    text = unit.map(lambda v: "" if is_blank(v) else str(v).strip())
    odd = (text.ne("") & text.str.upper().ne("NP") & unit.map(normalize_length_unit).isna()).to_numpy(dtype=bool)
    if not odd.any():
        return
    has = np.zeros(len(gdf), dtype=bool)
    for f in LEN_UNIT_FIELDS:
        if f in gdf.columns:
            v = pd.to_numeric(gdf[f], errors="coerce").to_numpy(dtype="float64")
            has |= np.isfinite(v) & ~nfhl_no_value(v, f)
    bad = odd & has
    if bad.any():
        ids = gdf["feature_id"].to_numpy()[bad].astype(str)
        fields = [f for f in LEN_UNIT_FIELDS if f in gdf.columns]
        raise FieldError(f"{what}: field LEN_UNIT = {text[bad].iloc[0]!r} is not feet or metres, so its "
                         f"{' / '.join(fields)} cannot be read in feet (feature{'s' if len(ids) > 1 else ''} "
                         f"{id_list(ids)}). Write Feet or Meters in LEN_UNIT (converting the values if they are in "
                         f"another unit)")


def _nfhl_codes(gdf: gpd.GeoDataFrame, name: str, vals: np.ndarray, what: str, warn: list[str] | None) -> None:
    """Set NFHL "no value" codes in ``vals`` to NaN (in place), with one warning per kind of code
    other than NFHL's own -9999 (which is silent)."""
    code = nfhl_no_value(vals, name)
    fids = gdf["feature_id"].to_numpy()
    if warn is not None:
        other = code & (vals != NFHL_SENTINEL) & (vals != 0)
        if other.any():
            shown = ", ".join(f"{v:.10g}" for v in pd.unique(vals[other])[:3])
            warn.append(f"{what}: field {name} holds {shown} in {int(other.sum())} feature(s) "
                        f"({id_list(fids[other].astype(str), 5)}): a 'no value' code like NFHL's -9999 (any value "
                        f"at or below {NFHL_NO_VALUE_AT_MOST:g}), not a measure; read as not given. Write -9999 "
                        f"or leave the field empty where there is no value")
        zero = code & (vals == 0)
        if zero.any():
            warn.append(f"{what}: field {name} is 0 in {int(zero.sum())} feature(s) "
                        f"({id_list(fids[zero].astype(str), 5)}): NFHL never gives a BFE of 0 ft (it writes "
                        f"-9999 where there is none), so those count as no BFE. Enter the BFE where it is known")
    vals[code] = np.nan


def _check_bfe(gdf: gpd.GeoDataFrame, name: str, vals: np.ndarray, what: str, warn: list[str] | None) -> None:
    """Refuse a BFE under :data:`LOWEST_BFE_FT` or over :data:`~geoconstraints.units.HIGHEST_GROUND_FT` (in
    feet, by ``LEN_UNIT``); warn of BFEs below sea level."""
    metres = (gdf["LEN_UNIT"].map(normalize_length_unit).eq("m").to_numpy() if "LEN_UNIT" in gdf.columns
              else np.zeros(len(gdf), dtype=bool))
    ft = np.where(metres, vals * FT_PER_M, vals)
    fids = gdf["feature_id"].to_numpy()
    low = f"below {LOWEST_BFE_FT:g} ft, lower than any ground in the United States (Death Valley, -282 ft)"
    high = f"above {HIGHEST_GROUND_FT:,.0f} ft, higher than any ground in the United States (Denali)"
    for out, words in ((ft < LOWEST_BFE_FT, (low, "a lost sign? another unit?")),
                       (ft > HIGHEST_GROUND_FT, (high, "a slipped decimal point? another unit?"))):
        if out.any():
            ids = fids[out].astype(str)
            raise FieldError(f"{what}: field {name} = {vals[out][0]:g}{' m' if metres[out][0] else ''} is {words[0]}, "
                             f"so it is no base flood elevation (feature{'s' if len(ids) > 1 else ''} {id_list(ids)}). "
                             f"Correct the value ({words[1]}), or write -9999 or leave it empty where there is no BFE")
    neg = ft < 0
    if neg.any() and warn is not None:
        warn.append(f"{what}: field {name} is below sea level ({vals[neg][0]:g}) in {int(neg.sum())} feature(s) "
                    f"({id_list(fids[neg].astype(str), 5)}): kept as an elevation (land below sea level has such "
                    f"BFEs). Check its sign and vertical datum")


SFHA_FLAG_WORDS: dict[str, str] = {"T": "T", "TRUE": "T", "F": "F", "FALSE": "F"}
"""The values of NFHL's ``SFHA_TF`` read (any case, trimmed; a boolean field's True / False too): NFHL writes
T or F, GDAL may write a boolean as TRUE / FALSE. Anything else (``Y``, ``1``, ``Tidal``) is not stated,
with a warning: the rulebook's zone lists classify the zone."""


def sfha_flag(value: Any) -> str | None:
    """``T``, ``F`` or None (not stated) for an ``SFHA_TF`` value (:data:`SFHA_FLAG_WORDS`).

    Examples
    --------
    >>> [sfha_flag(v) for v in ("T", " f ", "true", True, False, "Y", "Tidal", 1, None, "")]
    ['T', 'F', 'T', 'T', 'F', None, None, None, None, None]
    """
    if isinstance(value, (bool, np.bool_)):
        return "T" if value else "F"
    return SFHA_FLAG_WORDS.get(value.strip().upper()) if isinstance(value, str) else None


def _check_flags(gdf: gpd.GeoDataFrame, role: str, what: str, warn: list[str] | None) -> None:
    """Warn of yes/no fields (:data:`FLAG_FIELDS`) holding neither a yes nor a no word, and of an ``SFHA_TF``
    holding neither T nor F (:func:`sfha_flag`): not stated."""
    if warn is not None and role in ("flood_zones", "flood_zones_preliminary") and "SFHA_TF" in gdf.columns:
        raw = gdf["SFHA_TF"]
        odd = (raw.map(sfha_flag).isna() & ~raw.map(is_blank).astype(bool)).to_numpy(dtype=bool)
        if odd.any():
            shown = ", ".join(repr(v) for v in pd.unique(raw[odd].astype(str))[:3])
            warn.append(f"{what}: field SFHA_TF holds {shown} in {int(odd.sum())} feature(s) "
                        f"({id_list(gdf['feature_id'].to_numpy()[odd].astype(str), 5)}), neither T nor F (NFHL's "
                        f"values); read as not stated, the zone (FLD_ZONE) decides. Write T or F")
    for name in FLAG_FIELDS.get(role, ()):
        if name not in gdf.columns or warn is None:
            continue
        raw = gdf[name]
        odd = (raw.map(truthy).isna() & ~raw.map(is_blank).astype(bool)).to_numpy(dtype=bool)
        if odd.any():
            shown = ", ".join(repr(v) for v in pd.unique(raw[odd].astype(str))[:3])
            warn.append(f"{what}: field {name} holds {shown} in {int(odd.sum())} feature(s) "
                        f"({id_list(gdf['feature_id'].to_numpy()[odd].astype(str), 5)}), neither a yes word "
                        f"({', '.join(TRUE_WORDS)}) nor a no word ({', '.join(FALSE_WORDS)}); read as not stated, "
                        f"as an empty value is. Write yes or no")


def normalize_role_fields(gdf: gpd.GeoDataFrame, role: str) -> gpd.GeoDataFrame:
    """Role-specific columns made uniform (FLD_ZONE upper case, SFHA_TF T / F or none, ...). A stream's ``kind`` is kept as
    given (trimmed, lower case) beside its raw ``FCODE``: reading them is the rulebook's
    (``rules.harvest.classify_streams``)."""
    if role == "streams" and "kind" in gdf.columns:
        kind = gdf["kind"].map(lambda v: None if is_blank(v) else str(v).strip().lower()).astype(object)
        gdf["kind"] = kind.where(kind.notna(), None)
    if role in ("flood_zones", "flood_zones_preliminary"):
        gdf["FLD_ZONE"] = gdf["FLD_ZONE"].map(lambda v: None if is_blank(v) else str(v).strip().upper()).astype(object)
        if "ZONE_SUBTY" not in gdf.columns:
            gdf["ZONE_SUBTY"] = None
        gdf["ZONE_SUBTY"] = gdf["ZONE_SUBTY"].map(lambda v: str(v).strip().upper() if isinstance(v, str) and v.strip() else None)
        if "SFHA_TF" not in gdf.columns:
            gdf["SFHA_TF"] = None
        # the SFHA flag as given (T / F), else none: never guessed from the zone's first letter (an older map's
        # "ANI", area not included, is not in the SFHA); the rulebook's zone lists classify the zones
        gdf["SFHA_TF"] = pd.Series([sfha_flag(v) for v in gdf["SFHA_TF"]], index=gdf.index, dtype=object)
    for name in FLAG_FIELDS.get(role, ()):  # True, False or None: a word neither yes nor no is not stated
        if name in gdf.columns:
            gdf[name] = gdf[name].map(truthy)
    if role == "roads" and "row_width_ft" in gdf.columns:
        gdf["row_width_ft"] = pd.to_numeric(gdf["row_width_ft"], errors="coerce")
    return gdf
