"""The findings of map.html as compact arrays: every finding, at any scale, drawn on a canvas.

A screening of a county has hundreds of thousands of findings. As GeoJSON features with their
text (about 1 KB each) that is hundreds of megabytes; so map.html carries the findings as:

* **places**: each distinct geometry of the findings once (the five findings of a parcel share
  it), simplified to :data:`SIMPLIFY_FT` in the working CRS, in degrees quantized to
  :data:`QUANTUM_DEG` (Int32 offsets from the south-west corner), laid out as shapely's ragged
  arrays (coordinates and offsets per family: points, lines, polygons), base64-encoded;
* **findings**, sorted by place: rule (index into a table of rule id, title, citation and unit),
  status and waiver (one byte), measured value (Float32) and threshold (index into a table of
  the distinct thresholds), and the message text when there are at most :data:`MAX_MESSAGES`
  findings.

``assets/gc/findings.js`` decodes them and draws each place once, in the colour of its most
severe finding (waived findings rank after the others), with Leaflet's canvas renderer; the
popup of a place lists all of its findings. Nothing is capped: every finding with a place is
drawn. About 100 bytes of page per parcel of a screening (five findings): 100,000 parcels make
a map.html of about 13 MB that Chromium opens in a few seconds.
"""

from __future__ import annotations

import base64
import functools
import json
import logging
from dataclasses import dataclass
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import pyproj
import shapely

from geoconstraints.output import styles
from geoconstraints.output.report import UNIT_TEXT
from geoconstraints.parallel import chunked
from geoconstraints.rulebook.findings import STATUSES, waived_flags
from geoconstraints.rulebook.findings import status_ranks as ranks_of
from geoconstraints.text import visible_text
from geoconstraints.units import ft_per_unit

log = logging.getLogger(__name__)

QUANTUM_DEG = 1e-6
"""Coordinate step in degrees (about 0.36 ft of latitude): far below a pixel at any useful zoom."""

SIMPLIFY_FT = 1.0
"""Douglas-Peucker tolerance (feet, topology preserved) applied to the places before encoding."""

MAX_MESSAGES = 50_000
"""Above this many located findings the finding messages are left out of map.html (the popups
show rule, status, measured value, threshold and citation, and say where the messages are)."""

FAMILY_CODE = {"point": 0, "line": 1, "polygon": 2}
"""Geometry family of a place, as the JavaScript reads it."""


@dataclass
class StatusCounts:
    """What the map shows of one status (the legend's numbers).

    Attributes
    ----------
    total : int
        Findings of this status (all of them: the report's number).
    places : int
        Places drawn in this status's layer (their most severe finding has this status).
    under : int
        Findings of this status at places drawn in a more severe status's layer.
    unlocated : int
        Findings without a place (run-wide findings): counted, not drawn.
    """

    total: int = 0
    places: int = 0
    under: int = 0
    unlocated: int = 0


def _b64(a: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(a).tobytes()).decode("ascii")


def _index(values: np.ndarray) -> dict[str, Any]:
    """Small non-negative integers in the narrowest unsigned type: ``{"dtype", "data"}`` (base64)."""
    top = int(values.max()) if len(values) else 0
    dtype = np.uint8 if top < 2 ** 8 else (np.uint16 if top < 2 ** 16 else np.uint32)
    return {"dtype": np.dtype(dtype).name, "data": _b64(values.astype(dtype))}


def place_keys(geoms: np.ndarray) -> np.ndarray:
    """Number the distinct geometries (equal coordinates, not just the same object), in order of
    first appearance: the same object is recognised by identity, equal copies by their WKB."""
    g = np.asarray(geoms, dtype=object)
    ids, _ = pd.factorize(np.fromiter(map(id, g), dtype=np.int64, count=len(g)))
    objs = g[pd.Series(np.arange(len(g))).groupby(ids).first().to_numpy()] if len(g) else g
    wkb = shapely.to_wkb(objs) if len(objs) else np.array([], dtype=object)
    codes, _ = pd.factorize(pd.Series(wkb, dtype=object))
    return np.asarray(codes)[ids] if len(g) else np.zeros(0, dtype=np.int64)


def _family_geoms(geoms: np.ndarray, crs: Any = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Family code of each geometry, the geometry made single-family (a collection keeps its
    polygons, else its lines, else its points) and whether it is already in EPSG:4326.

    A collection's parts are reprojected from ``crs`` before they are merged (merging in degrees,
    as the map draws them); other geometries stay in ``crs`` (their coordinates are reprojected
    as arrays, see :func:`_ragged`).
    """
    tid = shapely.get_type_id(geoms)
    fam = np.full(len(geoms), -1, dtype=np.int8)
    fam[np.isin(tid, (0, 4))] = 0
    fam[np.isin(tid, (1, 2, 5))] = 1
    fam[np.isin(tid, (3, 6))] = 2
    out = np.array(geoms, dtype=object)
    if crs is not None and pyproj.CRS.from_user_input(crs).is_exact_same(pyproj.CRS.from_epsg(4326)):
        crs = None  # already in degrees: left as they are (as GeoSeries.to_crs leaves them)
    in_4326 = np.zeros(len(geoms), dtype=bool) if crs is not None else np.ones(len(geoms), dtype=bool)
    for i in np.flatnonzero(tid == 7):
        g = gpd.GeoSeries([geoms[i]], crs=crs).to_crs(4326).values[0] if crs is not None else geoms[i]
        in_4326[i] = True
        parts = shapely.get_parts(g)
        ptid = shapely.get_type_id(parts)
        out[i] = g
        for code, ids in ((2, (3, 6)), (1, (1, 2, 5)), (0, (0, 4))):
            sel = parts[np.isin(ptid, ids)]
            if len(sel):
                out[i] = shapely.union_all(sel)
                fam[i] = code
                break
    return fam, out, in_4326


def _ragged_coords(geoms: np.ndarray, in_4326: np.ndarray, crs: Any) -> tuple[Any, np.ndarray, tuple]:
    """shapely's ragged arrays of one family, the coordinates (x, y) reprojected to EPSG:4326
    with pyproj as one array (as ``GeoSeries.to_crs`` does, coordinate by coordinate)."""
    fast = polygon_ragged(geoms)
    kind, coords, offsets = fast if fast is not None else shapely.to_ragged_array(geoms)
    xy = np.array(coords[:, :2], dtype=np.float64)
    if crs is not None and not in_4326.all():
        todo = np.repeat(~in_4326, shapely.get_num_coordinates(geoms))
        x, y = _to_4326(crs).transform(xy[todo, 0], xy[todo, 1])
        xy[todo, 0], xy[todo, 1] = x, y
    return kind, xy, offsets


def polygon_ragged(geoms: np.ndarray) -> tuple[Any, np.ndarray, tuple[np.ndarray, ...]] | None:
    """``shapely.to_ragged_array(geoms)`` (x, y) for non-empty polygons and multipolygons, with
    parts and rings made as objects only for multipolygons and polygons with holes (a county's
    parcels are mostly simple polygons); None for other geometries.

    Examples
    --------
    >>> from shapely.geometry import MultiPolygon, box
    >>> kind, xy, offsets = polygon_ragged(np.array([box(0, 0, 1, 1), MultiPolygon([box(2, 0, 3, 1), box(4, 0, 5, 1)])]))
    >>> kind.name, len(xy), [o.tolist() for o in offsets]
    ('MULTIPOLYGON', 15, [[0, 5, 10, 15], [0, 1, 2, 3], [0, 1, 3]])
    """
    tid = shapely.get_type_id(geoms)
    if not len(geoms) or not np.isin(tid, (3, 6)).all() or shapely.is_empty(geoms).any():
        return None
    multi = tid == 6
    nparts = np.where(multi, shapely.get_num_geometries(geoms), 1)
    parts = np.empty(int(nparts.sum()), dtype=object)
    of_multi = np.repeat(multi, nparts)
    parts[~of_multi] = geoms[~multi]
    parts[of_multi] = shapely.get_parts(geoms[multi])
    if shapely.is_empty(parts).any():
        return None
    nrings = shapely.get_num_interior_rings(parts) + 1
    ring_n = np.repeat(shapely.get_num_coordinates(parts), nrings)  # a ring of a part without holes: all of it
    holed = np.repeat(nrings > 1, nrings)
    ring_n[holed] = shapely.get_num_coordinates(shapely.get_rings(parts[nrings > 1]))
    offsets = tuple(np.concatenate([[0], np.cumsum(n)]) for n in (ring_n, nrings, nparts))
    xy = shapely.get_coordinates(geoms)
    if not multi.any():
        return shapely.GeometryType.POLYGON, xy, offsets[:2]
    return shapely.GeometryType.MULTIPOLYGON, xy, offsets


@functools.lru_cache(maxsize=8)
def _to_4326(crs: Any) -> pyproj.Transformer:
    return pyproj.Transformer.from_crs(pyproj.CRS.from_user_input(crs), pyproj.CRS.from_epsg(4326), always_xy=True)


def _quantized(kind: Any, xy: np.ndarray, offsets: tuple, n: int, origin: tuple[float, float]) -> dict[str, Any]:
    """One family's ragged arrays, coordinates as Int32 steps of :data:`QUANTUM_DEG` from ``origin``."""
    if not n:
        return {"n": 0}
    q = np.round((xy - np.asarray(origin)) / QUANTUM_DEG).astype(np.int32)
    return {"n": n, "type": kind.name, "coords": _b64(q),
            "offsets": [_b64(np.asarray(o, dtype=np.uint32)) for o in offsets]}


def _places(geoms: np.ndarray, crs: Any) -> tuple[np.ndarray, np.ndarray]:
    """(place code of each located finding, the distinct geometries simplified in ``crs``)."""
    codes = place_keys(geoms)
    first = np.full(int(codes.max()) + 1 if len(codes) else 0, len(codes), dtype=np.int64)
    np.minimum.at(first, codes, np.arange(len(codes)))
    places = np.asarray(geoms, dtype=object)[first]
    k = ft_per_unit(crs) if crs is not None else None
    if k:
        places = chunked(functools.partial(shapely.simplify, tolerance=SIMPLIFY_FT / k, preserve_topology=True), places)
    return codes, places


def status_ranks(status: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """The rank of each status in :data:`STATUSES` (``-1`` for any other value), and the rank it is
    drawn with (any other value as the last status), computed once per distinct value.

    Examples
    --------
    >>> exact, drawn = status_ranks(pd.Series(["pass", "violation", "odd", None, "pass"]))
    >>> exact.tolist(), drawn.tolist()
    ([4, 0, -1, -1, 4], [4, 0, 4, 4, 4])
    """
    exact = ranks_of(status, -1)
    return exact, np.where(exact < 0, len(STATUSES) - 1, exact)


def text_codes(values: pd.Series, rows: np.ndarray, missing: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(values.iloc[rows].astype(str), return_inverse=True)``, computed on the distinct
    values (the findings of a county repeat a few rule ids, units and layer names).

    Parameters
    ----------
    values : Series
    rows : ndarray of int
        Positions of the rows wanted, in the order wanted.
    missing : str, optional
        Text of a missing value (default: ``str`` of it).

    Examples
    --------
    >>> names, idx = text_codes(pd.Series(["b", "a", None, "c"]), np.array([0, 2, 1, 0]), missing="")
    >>> names.tolist(), idx.tolist()
    (['', 'a', 'b'], [2, 0, 1, 2])
    """
    codes, uniq = pd.factorize(values, use_na_sentinel=False)
    codes = np.asarray(codes)[rows]
    present = np.flatnonzero(np.bincount(codes, minlength=len(uniq)))
    u = pd.Series(np.asarray(uniq, dtype=object)[present], dtype=object)
    if missing is not None:
        u = u.where(u.notna(), missing)
    names, inv = np.unique(u.astype(str).to_numpy(dtype=object), return_inverse=True)
    lut = np.zeros(len(uniq), dtype=np.int64)
    lut[present] = np.ravel(inv)
    return names, lut[codes]


def _waived(findings: pd.DataFrame) -> np.ndarray:
    """Whether each finding is waived (its ``waived`` text is not empty; a missing one counts as text)."""
    if "waived" not in findings:
        return np.zeros(len(findings), dtype=bool)
    return waived_flags(findings["waived"])


def encode_findings(findings: gpd.GeoDataFrame, rulebook: Any, *, measured_text: Any = None,
                    max_messages: int = MAX_MESSAGES) -> tuple[dict[str, Any], dict[str, StatusCounts]]:
    """The payload ``assets/gc/findings.js`` draws, and the legend's numbers by status.

    Parameters
    ----------
    findings : GeoDataFrame
        Every finding of the Result (complete: the counts are the report's counts).
    rulebook : Rulebook
        For the rules' titles and citations (a finding's own citation wins when they differ).
    max_messages : int
        Most located findings whose message text is included.

    Returns
    -------
    (dict, dict)
        The JSON-ready payload and ``{status: StatusCounts}``.
    """
    counts = {s: StatusCounts() for s in STATUSES}
    if not len(findings):
        return {"n_places": 0, "n_findings": 0}, counts
    exact, drawn = status_ranks(findings["status"])
    geom = findings.geometry.values
    loc = np.flatnonzero(~(shapely.is_missing(geom) | shapely.is_empty(geom)))
    total = np.bincount(exact[exact >= 0], minlength=len(STATUSES))
    ex = exact[loc]
    located = np.bincount(ex[ex >= 0], minlength=len(STATUSES))
    for i, s in enumerate(STATUSES):
        counts[s].total, counts[s].unlocated = int(total[i]), int(total[i] - located[i])
    if not len(loc):
        return {"n_places": 0, "n_findings": 0}, counts
    codes, places = _places(np.asarray(geom, dtype=object)[loc], findings.crs)
    waived = _waived(findings)[loc]
    order = np.lexsort((drawn[loc] + waived * len(STATUSES), codes))  # by place, most severe first within a place
    rows, codes, status, waived = loc[order], codes[order], drawn[loc][order], waived[order]
    starts = np.searchsorted(codes, np.arange(len(places) + 1))
    top = status[starts[:-1]]  # the most severe finding of each place draws it
    for i, s in enumerate(STATUSES):
        counts[s].places = int((top == i).sum())
        counts[s].under = int(((status == i) & (top[codes] != i)).sum())
    payload = _payload(findings, rows, places, starts, top, status, waived, rulebook, max_messages)
    return payload, counts


def _geometry_payload(places: np.ndarray, crs: Any) -> tuple[dict[str, Any], np.ndarray]:
    """The places' part of the payload (families, ragged coordinates in EPSG:4326), and the family of each place."""
    fam, geoms, in_4326 = _family_geoms(places, crs)
    families = {name: np.flatnonzero(fam == code) for name, code in FAMILY_CODE.items()}
    ragged = {k: _ragged_coords(geoms[v], in_4326[v], crs) for k, v in families.items() if len(v)}
    lo = np.min([xy.min(axis=0) for _, xy, _ in ragged.values() if len(xy)] or [[np.nan, np.nan]], axis=0)
    origin = (float(np.floor(lo[0] * 1e4) / 1e4), float(np.floor(lo[1] * 1e4) / 1e4))
    out = {"origin": origin, "quantum": QUANTUM_DEG, "place_family": _b64(fam.astype(np.uint8)),
           "family_places": {k: _b64(v.astype(np.uint32)) for k, v in families.items()},
           "geometry": {k: _quantized(*ragged[k], len(v), origin) if len(v) else {"n": 0}
                        for k, v in families.items()}}
    return out, fam


def _payload(findings: gpd.GeoDataFrame, rows: np.ndarray, places: np.ndarray, starts: np.ndarray, top: np.ndarray,
             status: np.ndarray, waived: np.ndarray, rulebook: Any, max_messages: int) -> dict[str, Any]:
    """The JSON-ready arrays of :func:`encode_findings` (``rows``: the located findings' positions, sorted by place)."""
    geo, fam = _geometry_payload(places, findings.crs)
    rules, rule_idx = text_codes(findings["rule_id"], rows)
    unit_values, unit_idx = text_codes(findings["unit"], rows, missing="")
    layer_names, layer_idx = text_codes(findings["subject_layer"], rows)
    thr = pd.to_numeric(findings["threshold"], errors="coerce").to_numpy(dtype=float)[rows]
    thr_values, thr_idx = np.unique(np.where(np.isnan(thr), np.inf, thr), return_inverse=True)
    first = starts[:-1]
    polygon_fill = ((layer_names[layer_idx[first]] == "parcels") & (fam == 2)).astype(np.uint8)
    small = len(rows) <= max_messages
    subj = findings["subject_id"].iloc[rows if small else rows[first]].astype(str).to_numpy()
    out: dict[str, Any] = {
        "n_places": len(places), "n_findings": len(rows), "origin": geo["origin"], "quantum": QUANTUM_DEG,
        "statuses": list(STATUSES), "labels": [styles.STATUS_LABELS[s] for s in STATUSES],
        "rules": [{"id": r, "title": rulebook[r].title if r in rulebook else "", "citation": c}
                  for r, c in zip(rules, _citations(findings["citation"], rows, rule_idx, len(rules)))],
        "units": [str(u) for u in unit_values], "unit_text": dict(UNIT_TEXT),
        "thresholds": [None if not np.isfinite(v) else float(v) for v in thr_values],
        "place_family": geo["place_family"], "place_top": _b64(top.astype(np.uint8)),
        "place_fill": _b64(polygon_fill), "place_start": _b64(starts.astype(np.uint32)),
        "subject_layers": [str(x) for x in layer_names], "place_layer": _index(layer_idx[first]),
        "place_subject": [str(x) for x in (subj[first] if small else subj)],
        "family_places": geo["family_places"], "geometry": geo["geometry"],
        "f_rule": _index(rule_idx),
        "f_status": _b64((status + waived * 8).astype(np.uint8)),
        "f_measured": _b64(pd.to_numeric(findings["measured"], errors="coerce").to_numpy(dtype=np.float64)[rows]),
        "f_threshold": _index(thr_idx), "f_unit": _index(unit_idx),
        "f_subject": [f"{layer_names[a]} {b}".strip() for a, b in zip(layer_idx, subj)] if small else None,
        "f_message": [str(m) for m in findings["message"].iloc[rows].astype(str)] if small else None,
        "f_waived": [str(w) for w in findings["waived"].iloc[rows].astype(str)] if small else None,
    }
    return out


def _citations(citation: pd.Series, rows: np.ndarray, rule_idx: np.ndarray, n_rules: int) -> list[str]:
    """Each rule's citation: that of its first finding (in ``rows`` order) with one, else ``""``."""
    has = np.flatnonzero(citation.notna().to_numpy()[rows])
    rule, pos = np.unique(rule_idx[has], return_index=True)
    out = [""] * n_rules
    for r, text in zip(rule, citation.iloc[rows[has[pos]]]):
        out[int(r)] = str(text)
    return out


def payload_json(payload: dict[str, Any]) -> str:
    """``payload`` as JSON safe inside a ``<script type="application/json">`` element (no ``<``, ``>``, ``&``).

    Every string of it is shown (popups, tooltips): an invisible character (a bidirectional control,
    a zero-width space) is written ``<U+202E>`` (:func:`~geoconstraints.text.visible_text`, one scan
    of the JSON text, which holds it raw), so ``placeOf`` finds such an id by that form.
    """
    text = visible_text(json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
