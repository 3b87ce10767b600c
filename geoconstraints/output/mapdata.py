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
import json
import logging
from dataclasses import dataclass
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from geoconstraints.output import styles
from geoconstraints.output.report import UNIT_TEXT
from geoconstraints.rulebook.findings import STATUS_RANK, STATUSES
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


def _family_geoms(geoms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Family code of each geometry and the geometry made single-family (a collection keeps its
    polygons, else its lines, else its points)."""
    tid = shapely.get_type_id(geoms)
    fam = np.full(len(geoms), -1, dtype=np.int8)
    fam[np.isin(tid, (0, 4))] = 0
    fam[np.isin(tid, (1, 2, 5))] = 1
    fam[np.isin(tid, (3, 6))] = 2
    out = np.array(geoms, dtype=object)
    for i in np.flatnonzero(tid == 7):
        parts = shapely.get_parts(geoms[i])
        ptid = shapely.get_type_id(parts)
        for code, ids in ((2, (3, 6)), (1, (1, 2, 5)), (0, (0, 4))):
            sel = parts[np.isin(ptid, ids)]
            if len(sel):
                out[i] = shapely.union_all(sel)
                fam[i] = code
                break
    return fam, out


def _ragged(geoms: np.ndarray, origin: tuple[float, float]) -> dict[str, Any]:
    """shapely ragged arrays of one family, coordinates as Int32 steps of :data:`QUANTUM_DEG`."""
    if not len(geoms):
        return {"n": 0}
    kind, coords, offsets = shapely.to_ragged_array(geoms)
    q = np.round((coords[:, :2] - np.asarray(origin)) / QUANTUM_DEG).astype(np.int32)
    return {"n": len(geoms), "type": kind.name, "coords": _b64(q),
            "offsets": [_b64(np.asarray(o, dtype=np.uint32)) for o in offsets]}


def _places(located: gpd.GeoDataFrame, crs: Any) -> tuple[np.ndarray, np.ndarray]:
    """(place code of each located finding, the geometry of each place in EPSG:4326, simplified)."""
    codes = place_keys(located.geometry.values)
    first = pd.Series(np.arange(len(codes))).groupby(codes).first().to_numpy()
    geoms = np.asarray(located.geometry.values, dtype=object)[first]
    k = ft_per_unit(crs) if crs is not None else None
    if k:
        geoms = shapely.simplify(geoms, SIMPLIFY_FT / k, preserve_topology=True)
    g4 = gpd.GeoSeries(geoms, crs=crs).to_crs(4326).values if crs is not None else geoms
    return codes, np.asarray(g4, dtype=object)


_PAYLOAD_COLUMNS = ("rule_id", "status", "citation", "subject_layer", "subject_id", "measured", "threshold", "unit",
                    "message", "waived")


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
    counts = {s: StatusCounts(total=int((findings["status"] == s).sum())) if len(findings) else StatusCounts()
              for s in STATUSES}
    geom = findings.geometry.values if len(findings) else np.array([], dtype=object)
    has_place = ~(shapely.is_missing(geom) | shapely.is_empty(geom)) if len(findings) else np.zeros(0, bool)
    # the columns the payload reads (the messages only when they are sent), not every text column
    cols = [c for c in _PAYLOAD_COLUMNS if c in findings.columns
            and (c != "message" or int(has_place.sum()) <= max_messages)]
    located = findings.loc[np.asarray(has_place, dtype=bool), cols + [findings.geometry.name]]
    for s in STATUSES:
        counts[s].unlocated = counts[s].total - int((located["status"] == s).sum())
    if not len(located):
        return {"n_places": 0, "n_findings": 0}, counts
    codes, g4 = _places(located, findings.crs)
    status = located["status"].map(STATUS_RANK).fillna(len(STATUSES) - 1).to_numpy(dtype=np.int64)
    waived = (located["waived"].astype(str) != "").to_numpy() if "waived" in located else np.zeros(len(located), bool)
    rank = status + waived * len(STATUSES)
    order = np.lexsort((rank, codes))  # by place, most severe first within a place
    codes, status, waived, rank = codes[order], status[order], waived[order], rank[order]
    f = pd.DataFrame(located[cols]).iloc[order]
    n_places = len(g4)
    starts = np.searchsorted(codes, np.arange(n_places + 1))
    top = status[starts[:-1]]  # the most severe finding of each place draws it
    for i, s in enumerate(STATUSES):
        counts[s].places = int((top == i).sum())
        counts[s].under = int(((status == i) & (top[codes] != i)).sum())
    payload = _payload(f, g4, codes, starts, top, status, waived, rulebook, max_messages)
    return payload, counts


def _payload(f: gpd.GeoDataFrame, g4: np.ndarray, codes: np.ndarray, starts: np.ndarray, top: np.ndarray,
             status: np.ndarray, waived: np.ndarray, rulebook: Any, max_messages: int) -> dict[str, Any]:
    """The JSON-ready arrays of :func:`encode_findings` (findings already sorted by place)."""
    fam, g4 = _family_geoms(g4)
    bounds = shapely.total_bounds(g4)
    origin = (float(np.floor(bounds[0] * 1e4) / 1e4), float(np.floor(bounds[1] * 1e4) / 1e4))
    rules, rule_idx = np.unique(f["rule_id"].astype(str).to_numpy(), return_inverse=True)
    unit_values, unit_idx = np.unique(f["unit"].astype(object).where(f["unit"].notna(), "").astype(str).to_numpy(),
                                      return_inverse=True)
    cites = f.groupby(f["rule_id"].astype(str), sort=True)["citation"].first().reindex(rules).fillna("")
    thr = pd.to_numeric(f["threshold"], errors="coerce").to_numpy(dtype=float)
    thr_values, thr_idx = np.unique(np.where(np.isnan(thr), np.inf, thr), return_inverse=True)
    layer_names, layer_idx = np.unique(f["subject_layer"].astype(str).to_numpy(), return_inverse=True)
    subj_id = f["subject_id"].astype(str).to_numpy()
    polygon_fill = np.zeros(len(g4), dtype=np.uint8)
    polygon_fill[(f["subject_layer"].astype(str).to_numpy()[starts[:-1]] == "parcels") & (fam == 2)] = 1
    families = {name: np.flatnonzero(fam == code) for name, code in FAMILY_CODE.items()}
    out: dict[str, Any] = {
        "n_places": len(g4), "n_findings": len(f), "origin": origin, "quantum": QUANTUM_DEG,
        "statuses": list(STATUSES), "labels": [styles.STATUS_LABELS[s] for s in STATUSES],
        "rules": [{"id": r, "title": rulebook[r].title if r in rulebook else "",
                   "citation": str(cites[r])} for r in rules],
        "units": [str(u) for u in unit_values], "unit_text": dict(UNIT_TEXT),
        "thresholds": [None if not np.isfinite(v) else float(v) for v in thr_values],
        "place_family": _b64(fam.astype(np.uint8)), "place_top": _b64(top.astype(np.uint8)),
        "place_fill": _b64(polygon_fill), "place_start": _b64(starts.astype(np.uint32)),
        "subject_layers": [str(x) for x in layer_names], "place_layer": _index(layer_idx[starts[:-1]]),
        "place_subject": [str(x) for x in subj_id[starts[:-1]]],
        "family_places": {k: _b64(v.astype(np.uint32)) for k, v in families.items()},
        "geometry": {k: _ragged(g4[v], origin) for k, v in families.items()},
        "f_rule": _index(rule_idx),
        "f_status": _b64((status + waived * 8).astype(np.uint8)),
        "f_measured": _b64(pd.to_numeric(f["measured"], errors="coerce").to_numpy(dtype=np.float64)),
        "f_threshold": _index(thr_idx), "f_unit": _index(unit_idx),
        "f_subject": [f"{layer_names[a]} {b}".strip() for a, b in zip(layer_idx, subj_id)]
        if len(f) <= max_messages else None,
        "f_message": [str(m) for m in f["message"].astype(str)] if len(f) <= max_messages else None,
        "f_waived": [str(w) for w in f["waived"].astype(str)] if len(f) <= max_messages else None,
    }
    return out


def payload_json(payload: dict[str, Any]) -> str:
    """``payload`` as JSON safe inside a ``<script type="application/json">`` element (no ``<``, ``>``, ``&``)."""
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
