"""Timber-harvest checks: the HRV rules (numbers, citations and texts from the rulebook).

Each rule is one function decorated with :func:`~geoconstraints.rulebook.registry.check`
returning one findings frame. :func:`geoconstraints.commands.check_harvest` builds the
:class:`HarvestContext` (the layers, the streams classified by the rulebook's vocabulary, and
the buffer strips, road terrain and contours it derives with :mod:`geoconstraints.geometry` from
the numbers the helpers below read from the rulebook) and runs them.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from shapely.geometry import MultiPoint, Polygon

from geoconstraints.errors import RulebookError
from geoconstraints.geometry import buffers as bf
from geoconstraints.geometry import terrain as tr
from geoconstraints.io.layers import Layers
from geoconstraints.io.validate import polygonal_parts
from geoconstraints.rulebook.findings import concat_findings
from geoconstraints.rulebook.model import FindingRows, Rule, Rulebook
from geoconstraints.rulebook.registry import check
from geoconstraints.rulebook.render import fmt_num
from geoconstraints.rules import dem_cells
from geoconstraints.text import id_list, is_blank, stated_text, truthy
from geoconstraints.units import LENGTH_NOISE_FT, at_most, cell_within, over_limit, sqft_to_acres, under_limit

log = logging.getLogger(__name__)

ROAD_LAYERS: tuple[str, ...] = ("haul_roads", "skid_trails")
"""Line layers whose grades are measured (HRV-010)."""

PLAN_LAYERS: tuple[str, ...] = ("harvest_area", "landings", "haul_roads", "skid_trails")
"""The layers of a harvest plan: a plan needs at least one of them."""

NO_PLAN = (
    "the harvest command needs a plan: none of the layers harvest_area, landings, haul_roads, skid_trails "
    "was given (or all are empty). Add them to the GeoPackage by those names or pass --harvest-area, "
    "--landings, --haul-roads, --skid-trails PATH[:LAYER]"
)

BUFFER_RULES: dict[str, str] = {"stream": "HRV-020", "road": "HRV-020", "property_line": "HRV-021",
                                "dwelling": "HRV-022"}
"""The rule whose numbers build each kind of buffer strip."""

USERS: dict[str, tuple[str, ...]] = {
    "buffers": ("HRV-002", "HRV-020", "HRV-021", "HRV-022", "HRV-023", "HRV-024"),
    "terrain": ("HRV-010", "HRV-030"),
    "contours": ("HRV-002",),
}
"""The rules that read each derived thing: it is computed only when one of them is in the rulebook."""

STREAM_CLASSES: tuple[str, ...] = ("perennial", "intermittent", "ephemeral", "unknown", "not_stream")
"""What a stream vocabulary maps a value to. ``unknown`` (a watercourse whose flow regime the
value does not tell) counts as a stream under every rule, the cautious reading; ``ephemeral``
and ``not_stream`` (a dam, a coastline) never do."""

CHANNEL_RULE = "HRV-012"
"""The rule whose numbers define a stream channel (HRV-012 and HRV-013 share them)."""

_TOL_SQFT = 1e-3
"""Numerical tolerance of area comparisons, square feet (not law): areas of polygons ~1e6 ft from
the origin carry ~1e-4 sq ft of float noise."""

_ON_BANK_FT = 1e-3
"""An end of a line's part inside a channel this close to the bank is on the bank (numerical: the
ends of an intersection lie on the boundary to float precision)."""



# ------------------------------------------------------------------------------------------
# the numbers the engines need, from the rulebook


def needs(rulebook: Rulebook, what: str) -> bool:
    """True when a rule that reads the derived ``what`` (a key of :data:`USERS`) is in the rulebook."""
    return any(rid in rulebook for rid in USERS[what])


def not_in_rulebook(rid: str) -> str:
    """Why a kind of buffer strip whose rule ``rid`` the rulebook lacks is not built (the run's note; a
    finding says it in its own rule's words, :func:`_buffer_why`)."""
    return f"rule {rid} is not in the rulebook"


def buffer_settings(rulebook: Rulebook) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """The settings of :func:`geoconstraints.geometry.buffers.build_buffers` per buffer kind, and
    why each kind whose rule the rulebook lacks is not built."""
    settings: dict[str, dict[str, Any]] = {}
    absent: dict[str, str] = {}
    for kind, rid in BUFFER_RULES.items():
        r = rulebook.rules.get(rid)
        if r is None:
            absent[kind] = not_in_rulebook(rid)
            continue
        s: dict[str, Any] = {"width_ft": r.t("buffer_width_ft"), "clip_margin_ft": r.t("clip_margin_ft"),
                             "rule_id": r.id}
        if kind == "stream":
            s["include_intermittent"] = truthy(r.s("include_intermittent")) is True
        elif kind == "property_line":
            s.update(districts=list(r.p("districts")), reading=str(r.s("property_line_reading")),
                     touch_tolerance_ft=r.t("touch_tolerance_ft") + LENGTH_NOISE_FT, town_districts=rulebook.town_districts)
        elif kind == "dwelling":
            s.update(districts=list(r.p("districts")), town_districts=rulebook.town_districts)
        settings[kind] = s
    return settings, absent


def grade_settings(rulebook: Rulebook) -> dict[str, Any] | None:
    """The grade limits and grade filter of :func:`geoconstraints.geometry.terrain.road_terrain`
    (HRV-010), or None."""
    r = rulebook.rules.get("HRV-010")
    if r is None:
        return None
    return {"max_grade_pct": r.t("max_grade_pct"), "max_run_ft": r.t("max_run_ft"),
            "smoothing_window_ft": r.t("smoothing_window_ft"),
            "smoothing_window_cells": r.t("smoothing_window_cells_count"), "run_length": str(r.s("run_length"))}


def water_bar_settings(rulebook: Rulebook) -> dict[str, Any] | None:
    """The table and readings of :func:`geoconstraints.geometry.terrain.place_water_bars` (HRV-030)."""
    r = rulebook.rules.get("HRV-030")
    if r is None:
        return None
    return {"table": r.tables["water_bar_spacing"], "min_grade_pct": r.t("min_grade_pct"),
            "spacing_end": str(r.s("spacing_end")), "between_bands": str(r.s("between_bands"))}


def contour_settings(rulebook: Rulebook) -> tuple[float, float] | None:
    """(contour interval, margin around the plan) in feet from HRV-002, or None."""
    r = rulebook.rules.get("HRV-002")
    return None if r is None else (r.t("contour_interval_ft"), r.t("contour_margin_ft"))


def channel_settings(rulebook: Rulebook) -> dict[str, float] | None:
    """Channel width and the longest crossing (times the width) from :data:`CHANNEL_RULE`, or None."""
    r = rulebook.rules.get(CHANNEL_RULE)
    if r is None:
        return None
    return {"width_ft": r.t("channel_width_ft"), "ratio": r.t("max_crossing_length_ratio"),
            "bank_arc_ratio": r.t("opposite_bank_arc_ratio")}


# ------------------------------------------------------------------------------------------
# stream kinds: the rulebook's vocabulary (NHD FCODE, OSM waterway / fclass, free text)


def stream_vocabulary(rulebook: Rulebook) -> list[dict[str, Any]]:
    """The ``stream_kind_vocabulary`` param (HRV-020 ships it; the first rule holding it wins)."""
    for r in rulebook:
        voc = r.params.get("stream_kind_vocabulary")
        if voc:
            return list(voc)
    return []


def _norm_value(v: Any) -> str | None:
    """A field value as vocabulary text: stripped, lower case, whole numbers without ``.0``."""
    if is_blank(v):
        return None
    if isinstance(v, (int, np.integer)) or (isinstance(v, (float, np.floating)) and float(v).is_integer()):
        return str(int(v))
    return str(v).strip().lower()


@dataclass(frozen=True)
class StreamKinds:
    """How the streams layer's values were read: one row per (field, value) met.

    Attributes
    ----------
    table : DataFrame
        ``field``, ``value``, ``kind`` (a :data:`STREAM_CLASSES` value, ``unmapped`` when the
        vocabulary does not know it), ``count`` (features read by that value).
    unmapped : list of str
        ``field=value (n)`` of the values no vocabulary entry maps: counted as streams.
    blank : int
        Features with no value in any vocabulary field: counted as streams.
    """

    table: pd.DataFrame
    unmapped: list[str] = field(default_factory=list)
    blank: int = 0

    def warning(self) -> str:
        """One sentence on the values read as streams of unknown kind ('' when none)."""
        parts = []
        if self.unmapped:
            parts.append(f"stream values the rulebook's vocabulary does not map: {id_list(self.unmapped)}")
        if self.blank:
            parts.append(f"{self.blank} stream feature(s) without any kind value")
        return ("; ".join(parts) + "; counted as streams of unknown kind (the cautious reading: buffers, "
                "channels and crossings)") if parts else ""


def classify_streams(streams: gpd.GeoDataFrame | None,
                     vocabulary: list[dict[str, Any]]) -> tuple[gpd.GeoDataFrame | None, StreamKinds]:
    """Each stream's kind from the first vocabulary field whose value the vocabulary maps.

    Fields are matched case-insensitively; values compared stripped and lower case (whole
    numbers as integers: FCODE 46006.0 is ``46006``). A value no entry maps, and a feature with
    no value at all, is a stream of unknown kind (counted as a stream). Features mapped to
    ``not_stream`` are dropped.

    Returns
    -------
    (GeoDataFrame or None, StreamKinds)
        The streams with ``kind`` = perennial / intermittent / ephemeral / None (unknown: counts
        as a stream), the raw ``kind`` kept as ``kind_given``; and how each value was read.

    Examples
    --------
    >>> voc = [{"field": "kind", "values": {"perennial": "perennial"}},
    ...        {"field": "FCODE", "values": {"46003": "intermittent", "56600": "not_stream"}}]
    >>> s = gpd.GeoDataFrame({"kind": ["Perennial", None, "canal", None], "FCode": [None, 46003.0, None, 56600]},
    ...                      geometry=[shapely.LineString([(0, 0), (1, 0)])] * 4)
    >>> out, kinds = classify_streams(s, voc)
    >>> out["kind"].tolist(), kinds.unmapped
    (['perennial', 'intermittent', None], ['kind=canal (1)'])
    """
    bad = sorted({str(v) for e in vocabulary for v in (e.get("values") or {}).values()} - set(STREAM_CLASSES))
    if bad:
        raise RulebookError(f"the rulebook's stream_kind_vocabulary maps values to {', '.join(bad)}: each must be "
                            f"one of {', '.join(STREAM_CLASSES)}. Fix the rulebook")
    empty = StreamKinds(pd.DataFrame(columns=["field", "value", "kind", "count"]))
    if streams is None:
        return None, empty
    n = len(streams)
    cols = {str(c).lower(): c for c in streams.columns if c != streams.geometry.name}
    kind, src_field, src_value, unm_field, unm_value = (np.full(n, None, dtype=object) for _ in range(5))
    for entry in vocabulary:
        col = cols.get(str(entry.get("field", "")).lower())
        if col is None:
            continue
        values = {str(k).strip().lower(): str(v) for k, v in (entry.get("values") or {}).items()}
        raw = streams[col].map(_norm_value)
        mapped = raw.map(values).astype(object).where(raw.map(values).notna(), None).to_numpy(dtype=object)
        raw = raw.astype(object).where(raw.notna(), None).to_numpy(dtype=object)
        take = (kind == None) & (mapped != None)
        kind[take], src_field[take], src_value[take] = mapped[take], entry["field"], raw[take]
        new = (raw != None) & (mapped == None) & (unm_field == None)
        unm_field[new], unm_value[new] = entry["field"], raw[new]
    known = kind != None
    read = np.where(known, kind, np.where(unm_field != None, "unmapped", np.array(None, dtype=object)))
    rows = pd.DataFrame({"field": np.where(known, src_field, unm_field), "value": np.where(known, src_value, unm_value),
                         "kind": read})
    table = (rows.dropna(subset=["kind"]).groupby(["field", "value", "kind"], sort=True).size()
             .rename("count").reset_index())
    unmapped = [f"{r.field}={r.value} ({r.count})" for r in table.itertuples() if r.kind == "unmapped"]
    blank = int((read == None).sum())
    out = streams.copy()
    if "kind" in out.columns:
        out["kind_given"] = out["kind"]
    out["kind"] = pd.Series([None if k in (None, "unknown") else k for k in kind], index=out.index, dtype=object)
    out = out.loc[(kind != "not_stream")]
    return out, StreamKinds(table, unmapped, blank)


# ------------------------------------------------------------------------------------------
# context


@dataclass(frozen=True)
class HarvestContext:
    """What the HRV checks read: the layers and what the command derived from them (plain data).

    Attributes
    ----------
    layers : Layers
        Inputs in the working CRS (feet); ``layers.dem`` is the DEM or None.
    buffers : BufferBuild
        Buffer strips of HRV-020..022, the possible ones (districts unknown) and why a kind is missing.
    terrain : dict
        :class:`~geoconstraints.geometry.terrain.RoadTerrain` per ``(layer, feature_id)`` of the
        haul roads and skid trails (empty when no rule reads it).
    contours : GeoDataFrame
        Contour lines around the plan at the HRV-002 interval (empty without DEM).
    streams : GeoDataFrame or None
        The streams with ``kind`` read through the rulebook's vocabulary (:func:`classify_streams`).
    stream_kinds : StreamKinds
        How the streams' values were read.
    channel : dict or None
        :func:`channel_settings` (None when the rule defining a channel is not in the rulebook).
    town_districts : tuple of str or None
        The rulebook's ``town_districts``: a zoning value naming none of them is an unknown district
        (None: the rulebook does not list the town's districts).
    """

    layers: Layers
    buffers: bf.BufferBuild
    terrain: dict[tuple[str, str], tr.RoadTerrain]
    contours: gpd.GeoDataFrame
    streams: gpd.GeoDataFrame | None = None
    stream_kinds: StreamKinds = field(default_factory=lambda: StreamKinds(pd.DataFrame()))
    channel: dict[str, float] | None = None
    town_districts: tuple[str, ...] | None = None

    @property
    def crs(self) -> Any:
        """The working CRS."""
        return self.layers.crs

    def get(self, role: str) -> gpd.GeoDataFrame | None:
        """The layer of ``role`` or None when not given or empty (streams: the classified ones)."""
        if role == "streams":
            return self.streams if self.streams is not None and len(self.streams) else None
        return self.layers.get_layer(role)

    def given(self, role: str) -> bool:
        """True when the inputs hold a layer for ``role``, even an empty one (a plan showing none)."""
        return role in self.layers.frames

    @property
    def harvest_area(self) -> gpd.GeoDataFrame | None:
        """The harvest areas, or None (a plan of haul roads alone)."""
        return self.get("harvest_area")


# ------------------------------------------------------------------------------------------
# helpers for checks


def _absent(ctx: HarvestContext, rule: Rule, *roles: str) -> str:
    """Why the layers of ``roles`` give nothing to check against (:meth:`HarvestContext.get` gave None), in
    ``rule``'s words: not given (its phrase ``no_layer``), given with no feature (``empty_layer``: a plan's
    statement that there is none, not a map to measure on) or, for streams, none a stream (``no_stream``);
    each over ``{layer}``.

    Examples
    --------
    >>> from geoconstraints.io.layers import Layers
    >>> from geoconstraints.rulebook.loader import load_rulebook
    >>> ctx = HarvestContext(Layers(frames={"roads": gpd.GeoDataFrame(geometry=[])}, crs=None),
    ...                      bf.BufferBuild(bf.empty_buffers()), {}, gpd.GeoDataFrame(geometry=[]))
    >>> _absent(ctx, load_rulebook("vestal")["HRV-027"], "roads", "row")
    'the roads layer given is empty (no feature); no row layer given'
    """
    def why(role: str) -> str:
        if not ctx.given(role):
            return rule.phrase("no_layer", layer=role)
        if role == "streams" and len(ctx.layers.frames[role]):
            return rule.phrase("no_stream", layer=role)
        return rule.phrase("empty_layer", layer=role)
    return "; ".join(why(r) for r in roles)


def _missing_layer(ctx: HarvestContext, rule: Rule, layer: str, why: str = "") -> gpd.GeoDataFrame:
    return rule.findings("not_evaluated", subject_layer=layer, subject_id="", crs=ctx.crs,
                         detail=why or _absent(ctx, rule, layer))


def _plan_ids(g: gpd.GeoDataFrame) -> np.ndarray:
    return g["feature_id"].astype(str).to_numpy()


def _first_per_group(idx: np.ndarray, values: np.ndarray, n: int, reducer: str = "min") -> np.ndarray:
    out = np.full(n, np.nan)
    if len(idx):
        s = pd.Series(values).groupby(idx)
        agg = s.min() if reducer == "min" else s.sum()
        out[agg.index.to_numpy()] = agg.to_numpy()
    return out


def _joined(idx: np.ndarray, labels: np.ndarray, n: int) -> list[str]:
    out = [""] * n
    if len(idx):
        t = pd.DataFrame({"i": idx, "l": labels}).drop_duplicates()
        for i, grp in t.groupby("i")["l"]:
            out[int(str(i))] = ", ".join(sorted(map(str, grp)))
    return out


def _components(n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Connected component of each of ``n`` nodes joined by the edges ``a[i] - b[i]``."""
    from scipy.sparse import coo_matrix  # imported here: a screening does not pay scipy's import
    from scipy.sparse.csgraph import connected_components

    a, b = np.asarray(a, dtype=int), np.asarray(b, dtype=int)
    graph = coo_matrix((np.ones(len(a)), (a, b)), shape=(n, n))
    return connected_components(graph, directed=False)[1]


# ------------------------------------------------------------------------------------------
# HRV-001 commercial threshold: one parcel or a series of contiguous parcels of one owner


def _owners(g: gpd.GeoDataFrame | None, n: int) -> np.ndarray:
    """Owner of each feature, upper case without surrounding blanks; None where not stated."""
    if g is None or "owner" not in g.columns:
        return np.full(n, None, dtype=object)
    return g["owner"].map(lambda v: None if is_blank(v) else " ".join(str(v).split()).upper()).to_numpy(dtype=object)


@dataclass
class _Ownership:
    """The graph of harvest areas, parcels and parcel keys: ``certain`` and ``possible`` groups."""

    certain: np.ndarray  # component of each area in the certain graph
    possible: np.ndarray  # ... in the graph where unknown ownership may join
    parcels: list[list[str]]  # the parcels of each area
    parcel_of_comp: dict[int, list[str]]  # certain component -> its parcels
    why_unknown: str  # what the inputs do not tell ('' when ownership is known throughout)


def _area_parcel_links(ha: gpd.GeoDataFrame, parcels: gpd.GeoDataFrame | None) -> tuple[np.ndarray, np.ndarray]:
    """(area index, parcel index): the area's ``parcel_id`` names the parcel, or it overlaps it."""
    ai, pj = np.array([], int), np.array([], int)
    if parcels is None:
        return ai, pj
    a, p = parcels.sindex.query(ha.geometry.values, predicate="intersects")
    inner = ~shapely.touches(ha.geometry.values[a], parcels.geometry.values[p])
    ai, pj = a[inner], p[inner]
    if "parcel_id" in ha.columns:
        pos = pd.Series(np.arange(len(parcels)), index=parcels["feature_id"].astype(str))
        named = pd.Series(stated_text(ha["parcel_id"], blank=None), index=ha.index, dtype=object)
        hit = named.isin(pos.index).to_numpy()
        ai = np.concatenate([ai, np.flatnonzero(hit)])
        pj = np.concatenate([pj, pos.loc[named[hit]].to_numpy()])
    return ai, pj


def _joinable_parcels(parcels: gpd.GeoDataFrame, owners: np.ndarray, seeds: np.ndarray,
                      distance: float) -> tuple[np.ndarray, np.ndarray]:
    """Pairs of parcels within ``distance`` that contiguity of one owner joins or may join (one
    owner, or an owner not stated), found outward from ``seeds`` (the parcels of the harvest
    areas): only the parcels such chains reach are queried, never the whole layer against itself.
    """
    geoms = parcels.geometry.values
    seen = np.zeros(len(parcels), dtype=bool)
    front = np.unique(np.asarray(seeds, dtype=np.int64))
    seen[front] = True
    pa: list[np.ndarray] = [np.array([], dtype=np.int64)]
    pb: list[np.ndarray] = [np.array([], dtype=np.int64)]
    while len(front):
        i, b = parcels.sindex.query(geoms[front], predicate="dwithin", distance=distance)
        a = front[i]
        ok = (a != b) & ((owners[a] == None) | (owners[b] == None) | (owners[a] == owners[b]))
        pa.append(a[ok])
        pb.append(b[ok])
        front = np.unique(b[ok][~seen[b[ok]]])
        seen[front] = True
    return np.concatenate(pa), np.concatenate(pb)


def _ownership(rule: Rule, ha: gpd.GeoDataFrame, parcels: gpd.GeoDataFrame | None) -> _Ownership:
    """Group the harvest areas by parcel and same-owner contiguity (§ 44-VI-6(B), (C)); why an
    ownership is unknown in HRV-001's (``rule``'s) words.

    Nodes: the areas, the parcels, and the ``parcel_id`` values no parcel has. Certain edges:
    an area on a parcel (overlap or ``parcel_id``); two parcels touching (gap up to ``tol``, the
    rule's ``contiguity_tolerance_ft``) with
    one stated owner; two areas touching with one stated owner. Possible edges add what unknown
    ownership could join: touching parcels where an owner is not stated, and an area on no parcel
    of the parcels layer (none given, or its ``parcel_id`` not in it) with every area of the same
    or an unstated owner.
    """
    n, tol = len(ha), rule.t("contiguity_tolerance_ft")
    m = 0 if parcels is None else len(parcels)
    ai, pj = _area_parcel_links(ha, parcels)
    keys = pd.Series(stated_text(ha["parcel_id"], blank=None), index=ha.index, dtype=object) if "parcel_id" in ha.columns \
        else pd.Series([None] * n)
    known_pids = set() if parcels is None else set(parcels["feature_id"].astype(str))
    free = sorted({k for k in keys.dropna() if k not in known_pids})  # parcel keys without a parcel feature
    kpos = {k: n + m + i for i, k in enumerate(free)}
    ka = np.array([i for i, k in enumerate(keys) if k in kpos], dtype=int)
    kb = np.array([kpos[keys.iloc[i]] for i in ka], dtype=int)
    a_own, p_own = _owners(ha, n), _owners(parcels, m)
    ea, eb = [ai, ka], [pj + n, kb]
    pa = pb = np.array([], int)
    if parcels is not None and m:
        pa, pb = _joinable_parcels(parcels, p_own, pj, tol + LENGTH_NOISE_FT)
        same = (p_own[pa] != None) & (p_own[pa] == p_own[pb])
        ea.append(pa[same] + n)
        eb.append(pb[same] + n)
    xa, xb = ha.sindex.query(ha.geometry.values, predicate="dwithin", distance=tol + LENGTH_NOISE_FT)
    same = (a_own[xa] != None) & (a_own[xa] == a_own[xb])
    ea.append(xa[same])
    eb.append(xb[same])
    total = n + m + len(free)
    certain = _components(total, np.concatenate(ea), np.concatenate(eb))
    # what unknown ownership could join
    unk_parcel = ~np.isin(np.arange(n), ai)  # no parcel feature: contiguity and owner cannot be told
    if m:
        loose = (p_own[pa] == None) | (p_own[pb] == None)
        ea.append(pa[loose] + n)
        eb.append(pb[loose] + n)
    gi, gj = np.meshgrid(np.flatnonzero(unk_parcel), np.arange(n), indexing="ij")
    ui, uj = gi.ravel(), gj.ravel()
    could = (a_own[ui] == None) | (a_own[uj] == None) | (a_own[ui] == a_own[uj])
    ea.append(ui[could])
    eb.append(uj[could])
    possible = _components(total, np.concatenate(ea), np.concatenate(eb))
    pids = [] if parcels is None else parcels["feature_id"].astype(str).tolist()
    names = pids + free
    area_parcels: list[list[str]] = [[] for _ in range(n)]
    for a_, p_ in zip(np.concatenate([ai, ka]), np.concatenate([pj, kb - n])):
        area_parcels[a_].append(names[p_])
    comps = set(certain[:n].tolist())
    comp_parcels: dict[int, list[str]] = {}
    for node in np.flatnonzero(np.isin(certain, list(comps)))[:]:
        if node >= n:
            comp_parcels.setdefault(int(certain[node]), []).append(names[node - n])
    why = []
    if unk_parcel.any():
        why.append(rule.phrase("no_parcels_layer" if parcels is None else "no_parcel",
                               areas=id_list(_plan_ids(ha)[unk_parcel])))
    if parcels is not None and m and (p_own == None).any():
        why.append(rule.phrase("no_owner_field") if "owner" not in parcels.columns else
                   rule.phrase("owner_not_stated", count=int((p_own == None).sum())))
    return _Ownership(certain[:n], possible[:n], [sorted(set(p)) for p in area_parcels],
                      comp_parcels, "; ".join(why))


def _volumes(ha: gpd.GeoDataFrame, rule: Rule) -> pd.DataFrame:
    """Per harvest area: cords (cu ft as cords; the larger where both are given), board feet; NaN
    where not given; ``z``: a 0 in one measure was read as not given; ``t``: the two summed in cords
    (board feet at ``cord_equivalent_bf`` to the cord; NaN where neither is given); ``m``: both
    given, nonzero (one volume in two measures, or two products: the inputs cannot tell).

    A 0 in one measure beside a volume in the other (0 cords and 9,000 board feet) is a blank an
    export filled with zero (a shapefile's numeric field has no empty value), not a volume: that
    measure is not given (0 cords summed with the other areas' cords had passed 9,000 board feet).

    Examples
    --------
    A 0 in ``cords`` (a blank an export filled with zero) does not hide 3,000 cu ft:

    >>> from geoconstraints.rulebook.loader import load_rulebook
    >>> ha = pd.DataFrame({"cords": [0.0, 30.0, None], "cubic_feet": [3000.0, 1280.0, 1280.0]})
    >>> _volumes(ha, load_rulebook("vestal").rules["HRV-001"])["c"].round(4).tolist()
    [23.4375, 30.0, 10.0]

    nor does it stand for 0 cords beside 9,000 board feet (both 0: a stated zero volume):

    >>> v = _volumes(pd.DataFrame({"cords": [0.0, 15.0, 0.0], "board_feet": [9000.0, 0.0, 0.0]}),
    ...              load_rulebook("vestal").rules["HRV-001"])
    >>> v["c"].tolist(), v["b"].tolist(), v["z"].tolist()
    ([nan, 15.0, 0.0], [9000.0, nan, 0.0], [True, True, False])

    9,000 board feet of sawtimber and 15 cords of pulpwood are 33 cords (500 board feet to the cord):

    >>> v = _volumes(pd.DataFrame({"cords": [15.0], "board_feet": [9000.0]}), load_rulebook("vestal").rules["HRV-001"])
    >>> v["t"].tolist(), v["m"].tolist()
    ([33.0], [True])
    """

    def num(name: str) -> pd.Series:
        v = pd.to_numeric(ha[name], errors="coerce") if name in ha.columns else np.nan
        return pd.Series(v, index=ha.index, dtype="float64").reset_index(drop=True)

    # one volume in two measures: where they disagree, the larger (a licence is not waived on the smaller)
    cords = np.fmax(num("cords"), num("cubic_feet") / rule.t("standard_cord_cuft"))
    bf = num("board_feet")
    # a 0 beside a volume in the other measure is a blank filled with zero: not given
    zc, zb = (cords == 0) & (bf > 0), (bf == 0) & (cords > 0)
    c, b = np.where(zc, np.nan, cords), np.where(zb, np.nan, bf)
    # the volume in cords, board feet counted at cord_equivalent_bf; cords and board feet both given may be
    # two products (sawtimber, pulpwood): summed, the most the area may fell
    f = rule.t("cord_equivalent_bf")
    t = np.where(np.isnan(c) & np.isnan(b), np.nan, np.nan_to_num(c) + np.nan_to_num(b) / f)
    lo = np.fmax(c, b / f)  # read as one volume in two measures: the larger
    return pd.DataFrame({"c": c, "b": b, "z": zc | zb, "t": t, "lo": lo, "m": (c > 0) & (b > 0)})


def _group_sums(vol: pd.DataFrame, comp: np.ndarray) -> pd.DataFrame:
    """Per area: its group's summed cords and board feet (known part), and how many members lack each;
    ``t`` the two summed in cords (:func:`_volumes`) and ``nt`` how many members give neither."""
    by = vol.groupby(comp)
    g = pd.DataFrame({"c": by["c"].sum(min_count=1), "b": by["b"].sum(min_count=1),
                      "nc": by["c"].apply(lambda s: int(s.isna().sum())),
                      "nb": by["b"].apply(lambda s: int(s.isna().sum())),
                      "t": by["t"].sum(min_count=1), "lo": by["lo"].sum(min_count=1),
                      "nt": by["t"].apply(lambda s: int(s.isna().sum())), "m": by["m"].any()})
    return g.loc[comp].reset_index(drop=True)


def _over_total(g: pd.DataFrame, rule: Rule, col: str = "t") -> np.ndarray:
    """The group's cords and board feet summed (board feet at ``cord_equivalent_bf`` to the cord) exceed a
    limit; ``col="lo"``: each area's two measures read as one volume (the larger)."""
    t = np.nan_to_num(g[col].to_numpy())
    return (over_limit(t, rule.t("volume_limit_cords"))
            | over_limit(t * rule.t("standard_cord_cuft"), rule.t("volume_limit_cuft"))
            | over_limit(t * rule.t("cord_equivalent_bf"), rule.t("volume_limit_bf")))


def _over(g: pd.DataFrame, rule: Rule) -> np.ndarray:
    """The known part of each group's volume exceeds a limit (the law: "greater than")."""
    c, b = np.nan_to_num(g["c"].to_numpy()), np.nan_to_num(g["b"].to_numpy())
    # at a limit within float noise is not over it: 2,560 cu ft / 128 is 20 cords
    return (over_limit(c, rule.t("volume_limit_cords"))
            | over_limit(c * rule.t("standard_cord_cuft"), rule.t("volume_limit_cuft"))
            | over_limit(b, rule.t("volume_limit_bf")))


def _volume_text(rule: Rule, c: float, b: float, mixed: bool = False) -> str:
    """The volume compared; ``mixed``: an area gives both measures (summed, they are read as two products)."""
    parts = []
    if not np.isnan(c):
        parts.append(rule.phrase("cords", cords=f"{c:,.6g}", cuft=f"{c * rule.t('standard_cord_cuft'):,.0f}"))
    if not np.isnan(b):
        parts.append(rule.phrase("board_feet", board_feet=f"{b:,.0f}"))
    if c > 0 and b > 0:  # NaN is not
        parts.append(rule.phrase("together_two_products" if mixed else "together",
                                 cords=f"{c + b / rule.t('cord_equivalent_bf'):,.6g}"))
    return "; ".join(parts) or rule.phrase("no_volume")


def _two_products(rule: Rule, which: np.ndarray, lo: float) -> str:
    """Why a sum over the limits only if an area's cords and board feet are two products is review."""
    return "; " + rule.phrase("two_products", areas=id_list(which), cords=f"{lo:,.6g}")


def _volume_detail(rule: Rule, ids: np.ndarray, own: _Ownership, sums: pd.DataFrame, status: np.ndarray,
                   over_c: np.ndarray, no_volume: np.ndarray, zeros: np.ndarray, mixed: np.ndarray) -> list[str]:
    """The sentence of each area: the sum compared, over which areas and parcels, and why."""
    exempt = "; ".join(f"{str(e.get('text', e.get('key', ''))).rstrip('.')} ({e.get('citation', rule.citation)})"
                       for e in rule.p("exemptions", []))  # the rulebook's own list, as a list
    out = []
    for i in range(len(ids)):  # the plan's harvest areas (a handful)
        comp = own.certain if over_c[i] else own.possible
        members = comp == comp[i]
        txt = _volume_text(rule, sums["c"].iloc[i], sums["b"].iloc[i], bool((members & mixed).any()))
        if members.sum() > 1:
            txt += "; " + rule.phrase("summed", areas=id_list(ids[members]))
        joined = not over_c[i] and bool((members & (own.certain != own.certain[i])).any())
        where = own.parcel_of_comp.get(int(own.certain[i]), [])
        if where and not joined:
            txt += " " + (rule.phrase("on_parcel", parcel=where[0]) if len(where) == 1 else
                          rule.phrase("on_parcels", parcels=id_list(where)))
        if joined and status[i] == "review":
            txt += ": " + rule.phrase("if_one_owner", why=own.why_unknown)
        elif joined:
            txt += ", " + rule.phrase("may_be_one_owner", why=own.why_unknown)
        if sums["two"].iloc[i]:
            txt += _two_products(rule, ids[members & mixed], sums["lo"].iloc[i])
        lack = ids[members & no_volume]
        if status[i] == "not_evaluated":
            txt += "; " + rule.phrase("not_given", areas=id_list(lack))
            if len(zeroed := ids[members & zeros]):
                txt += " " + rule.phrase("zero_read_as_blank", areas=id_list(zeroed))
        if status[i] == "review" and exempt:
            txt += "; " + rule.phrase("exemptions_not_assessed", exemptions_listed=exempt)
        out.append(txt)
    return out


@check("HRV-001")
def check_commercial_volume(ctx: HarvestContext, rule: Rule) -> gpd.GeoDataFrame:
    """Licence required when the volume on one parcel or contiguous parcels of one owner exceeds a limit.

    Harvest areas are grouped by :func:`_ownership`: the areas on one parcel (overlap or the
    area's ``parcel_id``), on touching parcels of one stated owner (``parcels.owner``), or
    touching with one stated ``owner`` of their own. ``cords`` and ``cubic_feet`` are one measure
    (a cubic foot is 1 / ``standard_cord_cuft`` cord; where an area gives both, the larger counts)
    summed together; ``board_feet`` is summed apart, and with the cords, counted at
    ``cord_equivalent_bf`` board feet to the cord: the law's volume is the harvest's, sawtimber and
    pulpwood together. An area giving both cords and board feet may give one volume in two measures
    or two products: where only their sum exceeds a limit, ``review`` saying so. An area is ``review``
    when the known part of its group's volume exceeds a limit, or when the areas that unknown
    ownership could join (no parcel known, owner not stated) together exceed it, saying so;
    ``pass`` only when every area of that widest group gives a volume and even the sum of all its
    measures exceeds no limit; else ``not_evaluated``.
    """
    ha = ctx.harvest_area
    if ha is None:
        return _missing_layer(ctx, rule, "harvest_area")
    ids = _plan_ids(ha)
    own = _ownership(rule, ha, ctx.get("parcels"))
    vol = _volumes(ha, rule)
    cert, poss = _group_sums(vol, own.certain), _group_sums(vol, own.possible)
    # over: a measure alone, or the measures summed (board feet at cord_equivalent_bf), an area giving both
    # read as one volume (the larger); two: over only if an area's cords and board feet are two products
    over_c = _over(cert, rule) | _over_total(cert, rule, "lo")
    over_p = _over(poss, rule) | _over_total(poss, rule, "lo")
    two_c, two_p = _over_total(cert, rule) & ~over_c, _over_total(poss, rule) & ~over_p
    certain = over_c | two_c  # the finding speaks of the certain group
    status = np.where(over_c | over_p | two_c | two_p, "review",
                      np.where(poss["nt"].to_numpy() == 0, "pass", "not_evaluated"))
    cols = ["c", "b", "t", "lo"]
    sums = pd.DataFrame(np.where(certain[:, None], cert[cols], poss[cols]), columns=cols)
    sums["two"] = np.where(certain, two_c, two_p & ~over_c)
    c_arr, b_arr = sums["c"].to_numpy(dtype=float), sums["b"].to_numpy(dtype=float)
    lim_c, lim_bf = rule.t("volume_limit_cords"), rule.t("volume_limit_bf")
    c_over = (np.nan_to_num(c_arr) > lim_c) | (np.nan_to_num(c_arr) * rule.t("standard_cord_cuft")
                                               > rule.t("volume_limit_cuft"))
    use_bf = np.isnan(c_arr) | (~c_over & (np.nan_to_num(b_arr) > lim_bf))
    # both measures in the sum and neither over alone: the sum compared, in cords
    use_t = ~(c_over | (np.nan_to_num(b_arr) > lim_bf)) & (np.nan_to_num(c_arr) > 0) & (np.nan_to_num(b_arr) > 0)
    use_bf &= ~use_t
    measured = np.where(use_t, sums["t"].to_numpy(dtype=float), np.where(use_bf, b_arr, c_arr))
    no_volume = (vol["c"].isna() & vol["b"].isna()).to_numpy()
    f = rule.findings(status, subject_layer="harvest_area", subject_id=ids,
                      measured=measured, threshold=np.where(use_bf, lim_bf, lim_c),
                      unit=np.where(use_bf, "bf", "cords"), geometry=ha.geometry.values, crs=ctx.crs,
                      detail=_volume_detail(rule, ids, own, sums, status, certain, no_volume,
                                            vol["z"].to_numpy(dtype=bool), vol["m"].to_numpy(dtype=bool)))
    f["parcels"] = [", ".join(p) for p in own.parcels]
    return f


# ------------------------------------------------------------------------------------------
# zoning around the plan (HRV-002 c, HRV-003)


def district_source(layers: Layers) -> str | None:
    """Where the harvest rules read districts: ``'zoning layer'`` (its ``district``), else
    ``'parcels.zoning field'``, or None (:func:`~geoconstraints.geometry.buffers.zoning_source`). Chosen
    once for the whole inputs, never per place: a zoning layer with no polygon near the plan is still
    the source (its gap there is ``not_evaluated``), and the site plan draws districts from the same one.

    Examples
    --------
    >>> z = gpd.GeoDataFrame({"district": ["RA-1"]}, geometry=[Polygon([(0, 0), (1, 0), (1, 1)])])
    >>> p = gpd.GeoDataFrame({"zoning": ["RC"]}, geometry=[Polygon([(5, 5), (6, 5), (6, 6)])])
    >>> district_source(Layers(frames={"zoning": z, "parcels": p}, crs=None))
    'zoning layer'
    >>> district_source(Layers(frames={"parcels": p}, crs=None))
    'parcels.zoning field'
    """
    return bf.zoning_source(layers.get_layer("zoning"), layers.get_layer("parcels"))


def _zoning_frame(ctx: HarvestContext,
                  districts: Iterable[str] = ()) -> tuple[gpd.GeoDataFrame | None, str | None]:
    """Zoning polygons (or parcels) with a normalised district ``_d`` (a spelling of one of
    ``districts`` spelled as the rulebook does, :func:`~geoconstraints.geometry.buffers.norm_district`;
    missing where unknown, and, with the rulebook's ``town_districts``, where the value names none of
    them), the value as written ``_v``, and where they come from (:func:`district_source`)."""
    zoning, parcels = ctx.get("zoning"), ctx.get("parcels")
    src = district_source(ctx.layers)
    if src == "zoning layer" and zoning is not None:
        v = zoning["district"]
    elif src is not None and parcels is not None:
        v, zoning = parcels["zoning"], parcels
    else:
        return None, src
    return zoning.assign(_d=bf.norm_district(v, districts, ctx.town_districts), _v=v), src


def district_warnings(layers: Layers, rulebook: Rulebook) -> list[str]:
    """How the district values of the zoning layer (or the parcels' ``zoning`` field, whichever the
    harvest rules read) were read, when some are neither blank nor a district a harvest rule names:
    one sentence listing each such value with its count ([] when none, or no harvest rule names a
    district).

    Without the rulebook's ``town_districts`` those values are read as districts the law does not
    list (no strip, no board review): the sentence says so and how to change it. With it, the
    values naming none of the town's districts are read as unknown districts (``review`` /
    ``not_evaluated``, never ``pass``).

    Examples
    --------
    >>> from geoconstraints.rulebook.loader import load_rulebook
    >>> z = gpd.GeoDataFrame({"district": ["RA-1A", "C-1", "RA-1A", "ra1", None]}, geometry=[Polygon()] * 5)
    >>> print(district_warnings(Layers(frames={"zoning": z}, crs=None), load_rulebook("vestal"))[0])
    zoning layer: district values no rule names, treated as districts the law does not list: "C-1" (1), "RA-1A" (2). If one is a spelling of RA-1, RA-2, RC or RR, correct the layer, or list the town's districts in the rulebook (town_districts) so other values count as unknown
    """
    named = rulebook.named_districts("harvest")
    zoning, parcels = layers.get_layer("zoning"), layers.get_layer("parcels")
    src = district_source(layers)
    if not named or src is None:
        return []
    values = zoning["district"] if src == "zoning layer" and zoning is not None else parcels["zoning"]  # type: ignore[index]
    found = bf.unlisted_districts(values, named, rulebook.town_districts)
    if not found:
        return []
    listed = id_list([f'"{v}" ({n:,})' for v, n in sorted(found.items())], 20)
    either = ", ".join(named[:-1]) + " or " + named[-1] if len(named) > 1 else named[0]
    if rulebook.town_districts is None:
        return [(f"{src}: district values no rule names, treated as districts the law does not list: {listed}. "
                 f"If one is a spelling of {either}, correct the layer, or list the town's districts in the "
                 f"rulebook (town_districts) so other values count as unknown")]
    return [(f"{src}: district values naming none of the rulebook's town_districts, read as district unknown "
             f"(each may be {either}: a strip or board review is possible there, never a pass): {listed}")]


def zoning_gaps(ctx: HarvestContext, geoms: Any, zsrc: gpd.GeoDataFrame, distance_ft: float | np.ndarray,
                row_width_ft: float) -> np.ndarray:
    """Square feet within ``distance_ft`` (one value, or one per geometry) of each geometry that no zoning
    polygon (or parcel, when districts come from the parcels) covers, public rights-of-way left out (a
    right-of-way is not "property zoned" RA-1..., and parcels layers leave the roads out)."""
    geoms = np.asarray(geoms, dtype=object)
    ring = shapely.buffer(geoms, distance_ft)
    gi, zi = zsrc.sindex.query(ring, predicate="intersects")
    rows = bf.row_polygons(ctx.get("roads"), ctx.get("row"), default_row_width_ft=row_width_ft)
    ri, rj = (rows.sindex.query(ring, predicate="intersects") if len(rows)
              else (np.array([], int), np.array([], int)))
    out = np.zeros(len(geoms))
    for i in range(len(geoms)):  # the plan's features (a handful)
        cover = np.concatenate([zsrc.geometry.values[zi[gi == i]], rows.geometry.values[rj[ri == i]]])
        left = shapely.difference(ring[i], shapely.union_all(cover)) if len(cover) else ring[i]
        out[i] = shapely.area(left)
    return out


def _zoning_layer(ctx: HarvestContext, rule: Rule, g: gpd.GeoDataFrame, layer: str, zsrc: gpd.GeoDataFrame,
                  src: str) -> gpd.GeoDataFrame:
    want = [str(d).strip().upper() for d in rule.p("districts")]
    dtext, dist_ft = ", ".join(want), rule.t("distance_ft")
    ids, n = _plan_ids(g), len(g)
    # a point (a landing) cannot show where its pad ends: measured as a disk of point_landing_radius_ft
    point = _point_landings(g)
    reach = _pad_radius(g, rule)
    scope = dist_ft + reach  # how far from each element's line a district, unknown or gap may matter
    far = float(scope.max(initial=dist_ft)) + LENGTH_NOISE_FT
    ra = zsrc.loc[zsrc["_d"].isin(want).to_numpy()]
    unk = zsrc.loc[zsrc["_d"].isna().to_numpy()]
    dmin, nearest, names = np.full(n, np.nan), np.full(n, np.nan), [""] * n
    if len(ra):
        gi, zi = ra.sindex.query(g.geometry.values, predicate="dwithin", distance=far)
        dmin = _first_per_group(gi, shapely.distance(g.geometry.values[gi], ra.geometry.values[zi]), n)
        names = _joined(gi, ra["_d"].to_numpy()[zi], n)
        near_idx, near_d = ra.sindex.nearest(g.geometry.values, return_distance=True, return_all=False)
        nearest[near_idx[0]] = near_d
    ui, uj = (unk.sindex.query(g.geometry.values, predicate="dwithin", distance=far) if len(unk)
              else (np.array([], int),) * 2)
    inside = shapely.distance(g.geometry.values[ui], unk.geometry.values[uj]) <= scope[ui] + LENGTH_NOISE_FT
    ui, uj = ui[inside], uj[inside]
    unknown = _joined(ui, _unknown_labels(unk)[uj], n)
    gap = zoning_gaps(ctx, g.geometry.values, zsrc, scope, rule.t("default_row_width_ft"))
    gapped = gap > rule.t("coverage_gap_tolerance_sqft") + _TOL_SQFT
    within = np.isfinite(dmin) & (dmin <= dist_ft + LENGTH_NOISE_FT)
    may = point & ~within & np.isfinite(dmin) & (dmin <= scope + LENGTH_NOISE_FT)
    measured = np.where(within, dmin, nearest)
    undecided = np.array([bool(u) for u in unknown], dtype=bool) | gapped | may
    status = np.where(within, "review", np.where(undecided, "not_evaluated", "pass"))
    where = "zoning polygons" if src == "zoning layer" else "parcels"
    detail = []
    for i in range(n):  # the plan's features
        if within[i]:
            parts = [rule.phrase("within", distance=f"{measured[i]:,.2f}", near=names[i], source=src)]
        elif np.isfinite(measured[i]):
            parts = [rule.phrase("nearest", distance=f"{measured[i]:,.2f}", source=src)]
        else:
            parts = [rule.phrase("no_district", source=src)]
        if may[i]:
            parts.append(rule.phrase("point_pad", near=names[i]))
        if not within[i] and unknown[i]:
            parts.append(rule.phrase("unknown", where=where, features=unknown[i], scope=scope[i]))
        if not within[i] and gapped[i]:
            parts.append(rule.phrase("gap", acres=sqft_to_acres(gap[i]), scope=scope[i],
                                     layer="zoning layer" if src == "zoning layer" else "parcels"))
        txt = "; ".join(parts)
        if point[i] and not within[i] and (unknown[i] or gapped[i]):
            txt += f" ({rule.phrase('point_scope')})"
        detail.append(txt)
    return rule.findings(status, subject_layer=layer, subject_id=ids, measured=measured, threshold=dist_ft,
                         unit="ft", geometry=g.geometry.values, crs=ctx.crs, districts=dtext, detail=detail)


def _unknown_labels(unk: gpd.GeoDataFrame) -> np.ndarray:
    """The feature id of each zoning polygon (or parcel) of unknown district of a :func:`_zoning_frame`,
    with the value it gives when it gives one (``P2 ("RA-l")``: not one of the town's districts)."""
    return np.array([f"{i}{bf.unknown_district(v).removeprefix('district unknown')}"
                     for i, v in zip(unk["feature_id"].astype(str), unk["_v"])], dtype=object)


@check("HRV-003")
def check_zoning_proximity(ctx: HarvestContext, rule: Rule) -> gpd.GeoDataFrame:
    """Town board review for each plan element within the distance of the listed districts.

    ``pass`` only when every district within the distance is known: a zoning polygon or parcel
    without a district there, or land there that the zoning layer (or the parcels) does not
    cover beyond ``coverage_gap_tolerance_sqft`` (public rights-of-way aside), makes the element
    ``not_evaluated``, naming the gap.
    """
    out = []
    zsrc, src = _zoning_frame(ctx, rule.p("districts"))
    dtext = ", ".join(str(d).strip().upper() for d in rule.p("districts"))
    for layer in rule.p("plan_elements"):
        g = ctx.get(layer)
        if g is None:
            out.append(_missing_layer(ctx, rule, layer))
        elif zsrc is None or src is None:
            out.append(rule.findings("not_evaluated", subject_layer=layer, subject_id=_plan_ids(g),
                                     geometry=g.geometry.values, crs=ctx.crs, districts=dtext,
                                     detail=rule.phrase("no_zoning")))
        else:
            out.append(_zoning_layer(ctx, rule, g, layer, zsrc, src))
    return concat_findings(out, ctx.crs)


# ------------------------------------------------------------------------------------------
# HRV-002 site plan contents + contours


DERIVED_ELEMENT_KEYS: frozenset[str] = frozenset({"b", "c", "j"})
"""Site-plan elements whose supply HRV-002 also judges from derived data (contours over the plan,
the zoning's coverage, the buffer strips), beyond their layers being given."""


@dataclass(frozen=True)
class ElementInputs:
    """Which inputs supply one site-plan element (:func:`site_plan_inputs`)."""

    key: str
    text: str
    present: list[str]
    missing: list[str]


def _role_given(layers: Layers, spec: str) -> bool:
    """A role spec is supplied: ``dem``; ``role.field`` (the layer with a value in that field);
    ``a|b`` (either); else the role given, even as an empty layer (a plan showing none)."""
    if "|" in spec:
        return any(_role_given(layers, s) for s in spec.split("|"))
    if spec == "dem":
        return layers.dem is not None
    if "." in spec:
        role, fld = spec.split(".", 1)
        g = layers.frames.get(role)
        return g is not None and fld in g.columns and bool(g[fld].map(lambda v: not is_blank(v)).any())
    return spec in layers.frames


def site_plan_inputs(layers: Layers, rule: Rule) -> list[ElementInputs]:
    """For each element a..k of HRV-002 (param ``elements``), the role specs the inputs supply and
    those they do not (``a|b`` names alternatives, written ``a or b``).

    The site plan renderer lists the same missing inputs (output/siteplan.py).
    """
    out = []
    for el in rule.p("elements"):
        specs = list(el.get("roles") or [])
        present = [s.replace("|", " or ") for s in specs if _role_given(layers, s)]
        missing = [s.replace("|", " or ") for s in specs if not _role_given(layers, s)]
        out.append(ElementInputs(str(el["key"]), str(el["text"]), present, missing))
    return out


def _empty_given(ctx: HarvestContext, present: list[str]) -> list[str]:
    return [p for p in present if p in ctx.layers.frames and not len(ctx.layers.frames[p])]


def _derived_gaps(ctx: HarvestContext, rule: Rule, key: str) -> str:
    """Why an element whose layers are all given is still not supplied ('' when it is), in ``rule``'s words:
    b no DEM (``no_dem``), no contour over the plan (``no_contour``), a coarse DEM (:func:`_coarse_contours`),
    plan features off the DEM or on its nodata (:func:`_off_dem`); c no district known (``no_district``), the
    zoning not covering the land around the harvest area (``zoning_gap``), districts unknown there
    (``district_unknown``); j a kind of strip not built (:func:`_not_built`), strips districts unknown may add
    (``possible_strips``)."""
    if key == "b" and not len(ctx.contours):
        if ctx.layers.dem is None:
            return rule.phrase("no_dem")
        return "; ".join(filter(None, [rule.phrase("no_contour"), _coarse_contours(ctx, rule)]))
    if key == "b" and ctx.layers.dem is not None:
        return "; ".join(filter(None, [_coarse_contours(ctx, rule), _off_dem(ctx, rule)]))
    if key == "c":
        ha = ctx.harvest_area
        zsrc, src = _zoning_frame(ctx)
        if ha is None or zsrc is None:
            return "" if ha is None else rule.phrase("no_district")
        dist = rule.t("zoning_search_distance_ft")
        gap = zoning_gaps(ctx, [shapely.union_all(ha.geometry.values)], zsrc, dist, rule.t("default_row_width_ft"))
        unk = zsrc.loc[zsrc["_d"].isna().to_numpy()]
        near = unk.iloc[unk.sindex.query(shapely.union_all(ha.geometry.values), predicate="dwithin",
                                         distance=dist + LENGTH_NOISE_FT)] if len(unk) else unk
        why = []
        if gap[0] > rule.t("coverage_gap_tolerance_sqft") + _TOL_SQFT:
            why.append(rule.phrase("zoning_gap", acres=fmt_num(sqft_to_acres(gap[0])), source=src))
        if len(near):
            why.append(rule.phrase("district_unknown", features=id_list(_plan_ids(near))))
        return "; ".join(why)
    if key == "j":
        bb = ctx.buffers
        why = [_not_built(ctx, rule)] if bb.missing else []
        if len(bb.possible):
            why.append(rule.phrase("possible_strips", sources=id_list(sorted(set(bb.possible["source_id"].astype(str))))))
        return "; ".join(why)
    return ""


def _plan_parts(ctx: HarvestContext, rule: Rule, part: Any, where: str) -> list[str]:
    """The plan's features (:data:`PLAN_LAYERS`) of which ``part(geometries)`` leaves something of
    their own dimension (a polygon's area, a line's length, a point), each in ``rule``'s words
    (``part_acres``, ``part_length``, ``part``: ``layer id (how much where)``; ``where`` a phrase)."""
    out = []
    for layer in PLAN_LAYERS:
        g = ctx.get(layer)
        if g is None or not len(g):
            continue
        geoms = g.geometry.values
        piece = part(geoms)
        hit = ~shapely.is_empty(piece) & (shapely.get_dimensions(piece) >= shapely.get_dimensions(geoms))
        for fid, geom in zip(_plan_ids(g)[hit], piece[hit]):
            area, length = float(shapely.area(geom)), float(shapely.length(geom))
            at = {"layer": layer, "feature": fid, "where": where}
            out.append(rule.phrase("part_acres", acres=fmt_num(sqft_to_acres(area)), **at) if area > _TOL_SQFT else
                       rule.phrase("part_length", length=f"{length:,.0f}", **at) if length > LENGTH_NOISE_FT else
                       rule.phrase("part", **at))
    return out


def _coarse_contours(ctx: HarvestContext, rule: Rule) -> str:
    """Why contours drawn from the DEM do not show the land at the rule's interval: its cells (the larger
    side, :attr:`~geoconstraints.io.dem.Dem.max_cell_size_ft`) over the rule's ``max_dem_cell_ft``
    (:func:`~geoconstraints.units.cell_within`; an unknown cell size counts as over it), '' within it; in
    ``rule``'s words (``coarse_contours``, the fix ``finer_dem``).

    Examples
    --------
    >>> from types import SimpleNamespace as NS
    >>> from geoconstraints.rulebook.loader import load_rulebook
    >>> rule = load_rulebook("vestal")["HRV-002"]
    >>> lim = rule.t("max_dem_cell_ft")
    >>> [bool(_coarse_contours(NS(layers=NS(dem=NS(max_cell_size_ft=c))), rule)) for c in (lim - 0.1, lim, lim + 0.1)]
    [False, False, True]
    """
    cell = float(ctx.layers.dem.max_cell_size_ft) if ctx.layers.dem is not None else float("nan")
    if cell_within(cell, rule.t("max_dem_cell_ft")):
        return ""
    return rule.phrase("coarse_contours", cell=dem_cells.cell_text(cell), spacing=f"{cell:,.0f}",
                       fix=rule.phrase("finer_dem", **dem_cells.FINER_DEM_NAMES))


def _off_dem(ctx: HarvestContext, rule: Rule) -> str:
    """The plan's features (:data:`PLAN_LAYERS`) the DEM's extent does not wholly cover, and those on its
    cells without data (nodata, :meth:`~geoconstraints.io.dem.Dem.nodata_area`, read for the plan's
    extent only), with how much of each lies there ('' when neither): the contours drawn from it stop
    there; in ``rule``'s words (``dem_outside``, ``dem_nodata``; :func:`_plan_parts` with ``outside_it``,
    ``on_nodata``)."""
    dem = ctx.layers.dem
    foot = dem.bounds_polygon(ctx.crs)
    why = []
    if outside := _plan_parts(ctx, rule, lambda geoms: shapely.difference(geoms, foot), rule.phrase("outside_it")):
        why.append(rule.phrase("dem_outside", dem=dem.path.name, parts=", ".join(outside)))
    plan = [g.total_bounds for g in (ctx.get(layer) for layer in PLAN_LAYERS) if g is not None and len(g)]
    if plan:
        lo, hi = np.min(plan, axis=0), np.max(plan, axis=0)
        holes = dem.nodata_area((float(lo[0]), float(lo[1]), float(hi[2]), float(hi[3])), ctx.crs)
        if not holes.is_empty and (on := _plan_parts(ctx, rule, lambda geoms: shapely.intersection(geoms, holes),
                                                      rule.phrase("on_nodata"))):
            why.append(rule.phrase("dem_nodata", dem=dem.path.name, parts=", ".join(on)))
    return "; ".join(why)


def _plan_specs(layers: Layers, rule: Rule, specs: list[str], given: bool) -> list[str]:
    """The role specs of an element (:func:`site_plan_inputs`) the inputs supply (``given``) or not,
    alternatives joined by ``rule``'s phrase ``either_or`` (``zoning or parcels.zoning``)."""
    return [rule.phrase("either_or").join(s.split("|")) for s in specs if _role_given(layers, s) == given]


@check("HRV-002")
def check_site_plan(ctx: HarvestContext, rule: Rule) -> gpd.GeoDataFrame:
    """For each site-plan element a..k: ``info`` when the inputs supply it, else ``not_evaluated``
    naming the layer (role) that would; contours at the rulebook interval from the DEM (b: a DEM not
    covering every plan feature, or without data under one, is ``not_evaluated`` naming the features
    and how much lies off it or on its nodata cells; so is a DEM whose cells are over ``max_dem_cell_ft``,
    :func:`_coarse_contours`: its contours are the grid's, not a site survey), the zoning's coverage
    around the harvest area (c) and the buffer strips (j) checked too (:func:`_derived_gaps`).

    Every sentence is the rule's phrase: the element's text and the layers supplying it (``element``,
    ``element_none``), those given empty (``empty_given``), those not supplied (``not_supplied``), the
    contours and strips derived (``contours``, ``strips``) and the scale (``scale``).
    """
    status, detail, keys = [], [], []
    for el in rule.p("elements"):
        key, specs = str(el["key"]), list(el.get("roles") or [])
        present, missing = _plan_specs(ctx.layers, rule, specs, True), _plan_specs(ctx.layers, rule, specs, False)
        why = rule.phrase("not_supplied", inputs=", ".join(missing)) if missing else _derived_gaps(ctx, rule, key)
        txt = (rule.phrase("element", text=str(el["text"]), layers=", ".join(present)) if present
               else rule.phrase("element_none", text=str(el["text"])))
        if empty := _empty_given(ctx, [s for s in specs if _role_given(ctx.layers, s)]):
            txt += " " + rule.phrase("empty_given", layers=", ".join(empty))
        if key == "b" and len(ctx.contours):  # over the part of the plan the DEM covers: why says what it misses
            cell = ctx.layers.dem.max_cell_size_ft if ctx.layers.dem is not None else float("nan")
            txt += "; " + rule.phrase("contours", count=str(len(ctx.contours)), cell=f"{cell:,.1f}")
        if key == "j" and not why:
            txt += "; " + rule.phrase("strips", count=str(len(ctx.buffers.strips)))
        keys.append(key)
        status.append("not_evaluated" if why else "info")
        detail.append(txt + (f"; {why}" if why else ""))
    keys.append("scale")
    status.append("info")
    detail.append(rule.phrase("scale"))
    return rule.findings(status, subject_layer="site_plan", subject_id=keys, crs=ctx.crs, detail=detail)


# ------------------------------------------------------------------------------------------
# HRV-010 grade runs


def coarse_dem(rt: tr.RoadTerrain, rule: Rule) -> bool:
    """True when the DEM the road was profiled on has cells (the larger side, feet) over the rule's
    ``max_dem_cell_ft``: it cannot show the shortest stretch the rule's pass rests on, so it cannot
    give that pass. A cell at the limit (:func:`~geoconstraints.units.cell_within`: a grid in US survey feet) is
    within it; an unknown cell size counts as coarse.

    Examples
    --------
    >>> from geoconstraints.rulebook.loader import load_rulebook
    >>> rule = load_rulebook("vestal")["HRV-010"]
    >>> [coarse_dem(tr.RoadTerrain("haul_roads", "R", 500.0, dem_cell_ft=c), rule)
    ...  for c in (rule.t("max_dem_cell_ft") - 0.1, rule.t("max_dem_cell_ft"), rule.t("max_dem_cell_ft") + 0.1)]
    [False, False, True]
    """
    return not cell_within(rt.dem_cell_ft, rule.t("max_dem_cell_ft"))


def dem_cell_note(rt: tr.RoadTerrain, rule: Rule) -> str:
    """The sentence added to a finding made on a DEM coarser than ``max_dem_cell_ft`` (a violation or
    a review stays: a grade found is found, but its length and grade are those of the coarse grid), in
    ``rule``'s words: its phrase ``coarse_cells`` over the ``cell`` (:func:`~geoconstraints.rules.dem_cells.cell_text`).

    Examples
    --------
    >>> from geoconstraints.rulebook.loader import load_rulebook
    >>> dem_cell_note(tr.RoadTerrain("haul_roads", "R", 500.0, dem_cell_ft=98.4), load_rulebook("vestal")["HRV-010"])
    'measured on DEM cells of 98.4 ft, coarser than the 50 ft limit (max_dem_cell_ft): the grades and lengths are those of the coarse grid'
    """
    return rule.phrase("coarse_cells", cell=dem_cells.cell_text(rt.dem_cell_ft))


def coarse_pass_detail(rt: tr.RoadTerrain, rule: Rule, found: str, **fields: Any) -> str:
    """Why a pass found on a DEM coarser than ``max_dem_cell_ft`` is not evaluated, in ``rule``'s words:
    its phrase ``coarse_pass`` over the cell size, what the coarse grid showed (``found``), the fix (its
    phrase ``finer_dem``) and ``fields``.

    Examples
    --------
    >>> from geoconstraints.rulebook.loader import load_rulebook
    >>> rt = tr.RoadTerrain("haul_roads", "R", 500.0, dem_cell_ft=1000.0)
    >>> print(coarse_pass_detail(rt, load_rulebook("vestal")["HRV-010"], "max grade 0.0 %"))
    the DEM's cells are 1,000.0 ft (the larger of their width and height), over the 50 ft a pass needs (max_dem_cell_ft): each cell holds one elevation for its whole width, so a stretch of 200 ft steeper than 25 % can be flattened out of sight; the coarse grid showed: max grade 0.0 %; give a finer DEM: USGS 3DEP 1 m lidar (about 3.3 ft cells) where it exists, else the 3DEP 1/3 arc-second DEM (10 m cells)
    """
    return rule.phrase("coarse_pass", cell=dem_cells.cell_text(rt.dem_cell_ft), found=found,
                       fix=rule.phrase("finer_dem", **dem_cells.FINER_DEM_NAMES), **fields)


def blurred_ends(run: tr.Run, rt: tr.RoadTerrain) -> int:
    """How many ends of a steep run a DEM grid can blur (0, 1 or 2): each end inside the road. An end
    at the road's start or end (to :data:`~geoconstraints.units.LENGTH_NOISE_FT` of the road's
    length) hides nothing: the true run stops there too. A run joined with other steep runs counts
    both ends (its stretch's ends are those of other runs).

    Examples
    --------
    >>> rt = tr.RoadTerrain("haul_roads", "R", 500.0)
    >>> [blurred_ends(tr.Run(a, b, b - a, b - a, 30.0, 30.0, False), rt) for a, b in ((0, 150), (100, 250), (350, 500), (0, 500))]
    [1, 2, 1, 0]
    """
    if np.isfinite(run.joined_ft):
        return 2
    tol = LENGTH_NOISE_FT * max(1.0, rt.length_ft)
    return int(run.start_ft > tol) + int(run.end_ft < rt.length_ft - tol)


def blur_margin(rt: tr.RoadTerrain, rule: Rule, ends: int = 2) -> float:
    """The length (ft) of steep run a DEM can hide at ``ends`` blurred run ends: the rulebook's
    ``dem_blur_cells_count`` DEM cells, shared between the two ends (each end up to half of it).

    Examples
    --------
    >>> from geoconstraints.rulebook.loader import load_rulebook
    >>> rule = load_rulebook("vestal")["HRV-010"]
    >>> [blur_margin(tr.RoadTerrain("haul_roads", "R", 500.0, dem_cell_ft=10.0), rule, e) for e in (0, 1, 2)]
    [0.0, 10.0, 20.0]
    """
    return rule.t("dem_blur_cells_count") * rt.dem_cell_ft * ends / 2


def _window_note(ctx: HarvestContext, rule: Rule) -> str:
    """How the grade filter's window was chosen, in ``rule``'s words: ``raw`` (no window), ``window``, or
    ``window_cells`` (the rule's ``smoothing_window_cells_count`` DEM cells wider than its
    ``smoothing_window_ft``), as :func:`~geoconstraints.geometry.terrain.grade_window` chose it for the
    DEM the roads were profiled on ('' without a DEM).

    Examples
    --------
    >>> from types import SimpleNamespace as NS
    >>> from geoconstraints.rulebook.loader import load_rulebook
    >>> rule = load_rulebook("vestal")["HRV-010"]
    >>> [_window_note(NS(layers=NS(dem=NS(cell_size_ft=c))), rule) for c in (3.28, 10.0)]
    ['running median of the grades over 15.0 ft', "running median of the grades over 30.0 ft (3 DEM cells of 10.0 ft; the rulebook's 15 ft window is smaller than that)"]
    """
    dem = ctx.layers.dem
    if dem is None:
        return ""
    w, cells = float(rule.t("smoothing_window_ft")), float(rule.t("smoothing_window_cells_count"))
    if w == 0 and cells == 0:
        return rule.phrase("raw")
    eff = tr.effective_window_ft(w, cells, dem.cell_size_ft)
    if eff > w:
        return rule.phrase("window_cells", window=f"{eff:,.1f}", cells=f"{cells:g}", cell=f"{dem.cell_size_ft:,.1f}",
                           rulebook_window=f"{w:g}")
    return rule.phrase("window", window=f"{eff:,.1f}")


def _run_text(rule: Rule, key: str, run: tr.Run, **fields: Any) -> str:
    """A steep run in ``rule``'s phrase ``key``: where it lies along the line, its lengths and grades."""
    return rule.phrase(key, start=f"{run.start_ft:,.1f}", end=f"{run.end_ft:,.1f}", length=f"{run.length_ft:,.1f}",
                       slope_length=f"{run.slope_length_ft:,.1f}", mean_grade=f"{run.mean_grade_pct:.1f}", **fields)


def _road_grades(rows: FindingRows, rt: tr.RoadTerrain, geom: Any, rule: Rule, window: str | None = None) -> None:
    """HRV-010's findings of one road, in the rule's words (``window``: :func:`_window_note`, None: the
    terrain engine's ``window_note``; a road not profiled at all: :func:`_not_profiled`; a stretch not
    profiled: :func:`_terrain_why`)."""
    window = rt.window_note if window is None else window
    max_run, mode = rule.t("max_run_ft"), str(rule.s("run_length"))
    coarse = coarse_dem(rt, rule) and not (rt.why or rt.error)
    cell = f"; {dem_cell_note(rt, rule)}" if coarse else ""
    at = {"subject_layer": rt.layer, "subject_id": rt.feature_id}
    if rt.why or rt.error:  # not profiled at all (a key the engine recorded, or only its message)
        rows.add("not_evaluated", **at, geometry=geom, detail=_not_profiled(rule, rt))
        return
    for run in rt.runs:
        if run.exceeds:
            joined = np.isfinite(run.joined_ft)
            rows.add("violation", **at, geometry=run.geometry, detail="; ".join(
                [_run_text(rule, "run", run, max_grade=f"{run.max_grade_pct:.1f}")]
                + ([rule.phrase("goes_on", roads=run.joined_with, joined=f"{run.joined_ft:,.1f}")] if joined else [])
                + [window]) + cell,
                measured=run.joined_ft if joined else run.length_ft if mode == "horizontal" else run.slope_length_ft,
                threshold=max_run, unit="ft")
        elif run.join_cut_short:  # the longest joined stretch through it not known: never a pass
            rows.add("review", **at, geometry=run.geometry, detail=_run_text(
                rule, "cut_short_with" if run.joined_with else "cut_short", run, joined=f"{run.joined_ft:,.1f}",
                roads=run.joined_with) + f"; {window}{cell}",
                measured=run.joined_ft, threshold=max_run, unit="ft")
    for gap in rt.gaps:
        rows.add("not_evaluated", **at, geometry=gap.geometry, detail=rule.phrase(
            "gap", length=f"{gap.length_ft:,.0f}", start=f"{gap.start_ft:,.0f}", end=f"{gap.end_ft:,.0f}",
            why=_terrain_why(rule, gap)), measured=gap.length_ft, unit="ft")
    if rt.fully_evaluated and not any(r.exceeds or r.join_cut_short for r in rt.runs):
        # a run meeting other steep runs is measured with them: the stretch joined, not the run alone
        own = [r.length_ft if mode == "horizontal" else r.slope_length_ft for r in rt.runs]
        whole = [r.joined_ft if np.isfinite(r.joined_ft) else o for r, o in zip(rt.runs, own)]
        longest = max(whole, default=0.0)
        top = rt.runs[int(np.argmax(whole))] if whole else None
        joined = top is not None and np.isfinite(top.joined_ft)
        found = rule.phrase("found_joined" if joined else "found", max_grade=f"{rt.max_grade_pct:.1f}",
                            count=str(len(rt.runs)), longest=f"{longest:,.1f}", length=f"{rt.length_ft:,.0f}",
                            roads=top.joined_with if joined and top is not None else "") + f"; {window}"
        if coarse:  # a grid too coarse to show a run of max_run_ft: its pass is no promise
            rows.add("not_evaluated", **at, geometry=geom, detail=coarse_pass_detail(rt, rule, found),
                     measured=rt.dem_cell_ft, threshold=rule.t("max_dem_cell_ft"), unit="ft")
            return
        # a grid blurs each change of grade over about a cell: a run reads up to a cell short at each
        # end inside the road, so a pass needs the run and what the DEM can hide within the limit
        near = [(r, w, blur_margin(rt, rule, blurred_ends(r, rt))) for r, w in zip(rt.runs, whole)]
        near = [(r, w, m) for r, w, m in near if over_limit(w + m, max_run)]
        for r, w, m in near:
            rows.add("review", **at, geometry=r.geometry, detail=rule.phrase(
                "near_joined" if np.isfinite(r.joined_ft) else "near", length=f"{w:,.1f}", start=f"{r.start_ft:,.1f}",
                end=f"{r.end_ft:,.1f}", roads=r.joined_with, cell=fmt_num(rt.dem_cell_ft), hidden=fmt_num(m),
                ends=str(blurred_ends(r, rt))) + f"; {window}",
                measured=w, threshold=max_run, unit="ft")
        if near:
            return
        rows.add("pass", **at, geometry=geom, detail=found, measured=longest, threshold=max_run, unit="ft")


@check("HRV-010")
def check_grade_runs(ctx: HarvestContext, rule: Rule) -> gpd.GeoDataFrame:
    """Each run steeper than the grade limit for longer than the length limit is a violation.

    Grades are the DEM profile's along the line, cleaned by a running median that keeps slope
    breaks in place (:func:`~geoconstraints.geometry.terrain.filter_grades`), so a run's length
    does not depend on the window. Off-DEM or nodata stretches are ``not_evaluated`` findings
    with their geometry; a road is ``pass`` only when the DEM covered all of it and no run exceeds,
    on a DEM whose cells are at most ``max_dem_cell_ft`` (a coarser grid flattens a steep stretch
    shorter than a few cells: its pass is ``not_evaluated``, and its violations and reviews say the
    cell size).
    Steep runs meeting end to end, at a spur or crossing, of other roads or of the road's own line
    where it meets or crosses itself (a ring's start/end vertex, a figure-eight), are joined
    (:func:`~geoconstraints.geometry.terrain.join_runs`); a run whose search for the runs joined to
    it was cut short is ``review``: it may be longer than found.
    """
    out = []
    rows = FindingRows(rule, ctx.crs)
    window = _window_note(ctx, rule)
    for layer in ROAD_LAYERS:
        g = ctx.get(layer)
        if g is None:
            out.append(_missing_layer(ctx, rule, layer))
            continue
        for fid, geom in zip(g["feature_id"].astype(str), g.geometry.values):  # the plan's roads
            _road_grades(rows, ctx.terrain[(layer, fid)], geom, rule, window)
    return concat_findings([rows.frame(), *out], ctx.crs)


# ------------------------------------------------------------------------------------------
# HRV-011 designated slopes


def _constructed(g: gpd.GeoDataFrame, layer: str, rule: Rule) -> tuple[np.ndarray, np.ndarray]:
    """(stated, covered) per line: whether a skid trail's ``constructed`` is stated, and whether
    the line is barred from designated slopes (haul roads always; a trail not stated as the
    switch ``unflagged_skid_trails`` reads it)."""
    n = len(g)
    if layer != "skid_trails":
        return np.ones(n, dtype=bool), np.ones(n, dtype=bool)
    cfield = rule.p("constructed_field", "constructed")
    flag = g[cfield].map(truthy) if cfield in g.columns else pd.Series([None] * n, dtype=object)
    stated = flag.notna().to_numpy()
    as_constructed = str(rule.s("unflagged_skid_trails")) == "treat_as_constructed"
    return stated, np.where(stated, (flag == True).to_numpy(), as_constructed)


def _slope_detail(rule: Rule, layer: str, covered: bool, stated: bool, total: float, parts: list[str],
                  critical: bool, present: dict[str, Any], absent: list[str], wanted: list[str]) -> tuple[str, str]:
    """The status and detail of one line, in ``rule``'s words: not covered (``not_constructed``,
    ``not_stated``), on designated slopes (``parts``, and for a haul road on critical slopes,
    ``critical``, the exception ``one_crossing``), no map (``no_map``, ``no_maps``), a map missing
    (``not_on_missing``), or on none (``none_on``)."""
    if not covered:
        return "pass", rule.phrase("not_constructed" if stated else "not_stated")
    if total > 0:
        txt = "; ".join(parts)
        if layer == "haul_roads" and critical:
            txt += "; " + rule.phrase("one_crossing")
        return "violation", txt
    if not present:
        return "not_evaluated", (rule.phrase("no_map", layer=wanted[0]) if len(wanted) == 1
                                 else rule.phrase("no_maps", layer=wanted[0], other=wanted[1]))
    if absent:
        return "not_evaluated", rule.phrase("not_on_missing", present=", ".join(present), absent=", ".join(absent))
    return "pass", rule.phrase("none_on", present=", ".join(present))


def _slopes_layer(ctx: HarvestContext, rule: Rule, g: gpd.GeoDataFrame, layer: str,
                  present: dict[str, gpd.GeoDataFrame], absent: list[str], wanted: list[str]) -> gpd.GeoDataFrame:
    ids, n, geoms = _plan_ids(g), len(g), g.geometry.values
    stated, covered = _constructed(g, layer, rule)
    parts_txt: list[list[str]] = [[] for _ in range(n)]
    critical = np.zeros(n, dtype=bool)
    for role, poly in present.items():
        ln = shapely.length(shapely.intersection(geoms, shapely.union_all(poly.geometry.values)))
        for j in np.flatnonzero(ln > 0):
            parts_txt[j].append(rule.phrase(f"on_{role}", length=f"{ln[j]:,.0f}", ids=id_list(_hit_ids(poly, geoms[j]))))
        critical |= (ln > 0) & (role == "critical_slopes")
    on_geom = np.array([None] * n, dtype=object)
    total = np.zeros(n)
    if present:
        designated = shapely.union_all(np.concatenate([p.geometry.values for p in present.values()]))
        on_geom = shapely.intersection(geoms, designated)
        total = shapely.length(on_geom)
    found = [_slope_detail(rule, layer, covered[i], stated[i], total[i], parts_txt[i], bool(critical[i]), present,
                           absent, wanted) for i in range(n)]
    status = np.array([s for s, _ in found], dtype=object)
    return rule.findings(status, subject_layer=layer, subject_id=ids, measured=np.where(covered, total, np.nan),
                         unit="ft", geometry=np.where(status == "violation", on_geom, geoms), crs=ctx.crs,
                         detail=[d for _, d in found])


@check("HRV-011")
def check_designated_slopes(ctx: HarvestContext, rule: Rule) -> gpd.GeoDataFrame:
    """No haul road or constructed skid trail on a designated slope (critical slopes, corridor)."""
    cover = str(rule.s("covered_layers"))
    wanted = ["critical_slopes", "stream_corridor"] if cover == "both" else [cover]
    present: dict[str, gpd.GeoDataFrame] = {r: g for r in wanted if (g := ctx.get(r)) is not None}
    absent = [r for r in wanted if r not in present]  # an empty layer is not a map showing none
    out = []
    for layer in ROAD_LAYERS:
        g = ctx.get(layer)
        out.append(_missing_layer(ctx, rule, layer) if g is None
                   else _slopes_layer(ctx, rule, g, layer, present, absent, wanted))
    return concat_findings(out, ctx.crs)


# ------------------------------------------------------------------------------------------
# HRV-012 skidding in channels, HRV-013 crossings: one reading of the channel for both


def _hit_ids(poly: gpd.GeoDataFrame, geom: Any) -> np.ndarray:
    return poly["feature_id"].astype(str).to_numpy()[poly.sindex.query(geom, predicate="intersects")]


def _select_kinds(streams: gpd.GeoDataFrame, kinds: list[str]) -> gpd.GeoDataFrame:
    """Streams of ``kinds`` and of unknown kind (None: counted as streams, the cautious reading)."""
    k = streams["kind"] if "kind" in streams.columns else pd.Series(None, index=streams.index, dtype=object)
    return streams.loc[(k.isna() | k.isin(kinds)).to_numpy()]


@dataclass
class ChannelPieces:
    """The parts of lines inside stream channels, each a crossing or not (:func:`channel_pieces`)."""

    line: np.ndarray  # index of the line of each piece
    geom: np.ndarray  # the piece (a LineString inside the channel)
    length: np.ndarray  # its length, ft
    crossing: np.ndarray  # True: a crossing; False: along or inside the channel (skidding in it)
    station: np.ndarray  # distance of its middle along the line, ft
    point: np.ndarray  # its middle
    streams: list[str]  # the stream features it lies in
    kinds: list[tuple[str | None, ...]]  # their kinds (None: not given), each once
    width: np.ndarray  # the channel's width where it runs, ft (:func:`_local_width`)
    why: list[str]  # what makes it a crossing or not: the key of the rule's phrase (:func:`_piece_reason`)


def _opposite_banks(piece: Any, part: Any, centre: Any, on_poly: bool, bank_arc_ratio: float) -> bool:
    """The piece leaves the channel by the other bank: it crosses the centre line of a line stream
    an odd number of times; in a polygon channel, the shorter way round the bank between its
    ends is longer than ``bank_arc_ratio`` times the straight distance between them (:func:`over_limit`:
    beyond float noise, so exactly the ratio is one bank wherever the channel lies; or
    the ends lie on different rings: bank and island)."""
    a, b = shapely.get_point(piece, 0), shapely.get_point(piece, -1)
    if not on_poly and centre is not None:
        hits = shapely.get_parts(shapely.intersection(piece, centre))
        return int(np.sum(shapely.get_type_id(hits) == 0)) % 2 == 1
    rings = [part.exterior, *part.interiors]
    ra = int(np.argmin(shapely.distance(np.array(rings, dtype=object), a)))
    rb = int(np.argmin(shapely.distance(np.array(rings, dtype=object), b)))
    if ra != rb:
        return True
    ring = shapely.LineString(rings[ra].coords)
    arc = abs(ring.project(a) - ring.project(b))
    # "more than" beyond float noise: a piece at exactly the ratio (irrational corners) is on one bank
    return bool(over_limit(min(arc, ring.length - arc), bank_arc_ratio * a.distance(b)))


def _local_width(piece: Any, bank: Any) -> float:
    """Twice the farthest the piece gets from the banks: the channel's width where it runs."""
    pts = shapely.points(shapely.get_coordinates(shapely.segmentize(piece, max(piece.length / 200.0, 0.05))))
    return 2.0 * float(shapely.distance(pts, bank).max())


def _on_flat_end(piece: Any, tips: np.ndarray, width_ft: float) -> bool:
    """Whether a straight piece lying on the bank of a widened stream line lies on its flat end: both its ends
    within half the channel's width of one end of the stream lines (``tips``), so the line ends on it.

    Examples
    --------
    >>> from shapely.geometry import LineString, Point
    >>> tips = np.array([Point(0, 0), Point(0, 500)])
    >>> _on_flat_end(LineString([(-5, 0), (5, 0)]), tips, 10.0), _on_flat_end(LineString([(5, 0), (5, 50)]), tips, 10.0)
    (True, False)
    """
    if not len(tips):
        return False
    reach = width_ft / 2.0 + 2.0 * _ON_BANK_FT
    far = np.maximum(shapely.distance(shapely.get_point(piece, 0), tips), shapely.distance(shapely.get_point(piece, -1), tips))
    return bool(np.any(far <= reach))


def _piece_reason(crossing: bool, ends_on_bank: bool, opposite: bool, on_bank: bool) -> str:
    """What makes a part of a plan line inside a channel a crossing or not: the key of its phrase
    (:func:`_piece_why`).

    Examples
    --------
    >>> _piece_reason(True, True, True, False), _piece_reason(False, True, False, True)
    ('bank_to_bank', 'on_bank')
    """
    if on_bank:
        return "on_bank"
    return ("bank_to_bank" if crossing else "ends_inside" if not ends_on_bank else
            "same_bank" if not opposite else "too_long")


def _piece_why(rule: Rule, cp: ChannelPieces, j: int, ratio: float) -> str:
    """What makes piece ``j`` of ``cp`` a crossing or not, in ``rule``'s words (its phrase ``cp.why[j]``:
    ``on_bank``, ``bank_to_bank``, ``ends_inside``, ``same_bank``, ``too_long``; ``ratio`` is HRV-012's
    ``max_crossing_length_ratio``).

    Examples
    --------
    >>> from geoconstraints.rulebook.loader import load_rulebook
    >>> rule = load_rulebook("vestal")["HRV-012"]
    >>> cp = ChannelPieces(np.array([0, 0]), np.array([None, None]), np.array([12.0, 40.0]), np.array([True, False]),
    ...                    np.array([5.0, 60.0]), np.array([None, None]), ["S1", "S1"], [("perennial",)] * 2,
    ...                    np.array([10.0, 0.0]), ["bank_to_bank", "on_bank"])
    >>> _piece_why(rule, cp, 0, 2.0)
    '12.0 ft inside a channel 10.0 ft wide (bank to bank, a crossing)'
    >>> _piece_why(rule, cp, 1, 2.0)
    "40.0 ft along the bank, on the channel's edge (the edge belongs to the channel)"
    """
    return rule.phrase(cp.why[j], length=f"{float(cp.length[j]):,.1f}", width=f"{float(cp.width[j]):,.1f}",
                       max_crossing_length_ratio=fmt_num(ratio))


def _kinds_text(rule: Rule, kinds: tuple[str | None, ...]) -> str:
    """The kinds of the streams a piece or an end lies in, joined (a kind not given: the phrase ``kind_unknown``)."""
    return ", ".join(sorted({rule.phrase("kind_unknown") if k is None else k for k in kinds}))


def channel_pieces(lines: gpd.GeoDataFrame, streams: gpd.GeoDataFrame, width_ft: float,
                   ratio: float, bank_arc_ratio: float) -> ChannelPieces:
    """Split the lines into their parts inside the stream channels and tell crossings from the rest.

    The channel is the stream polygon (bank to bank), or the stream line widened to ``width_ft``
    (flat ends). A part of a line inside the channel is a *crossing* when it enters by one bank,
    leaves by the other (:func:`_opposite_banks`) and is no longer than ``ratio`` times the
    channel's width where it runs (:func:`_local_width`): a straight crossing at an angle of at
    least asin(1 / ``ratio``) to the stream. Anything else (a line running along inside the
    channel, leaving by the bank it entered, or ending in the channel) is not a crossing.

    A part lying wholly on the flat end of a widened stream line (its width there nil: the stream
    line ends on the plan line) is no part inside the channel: it is left out, and the stream's end
    on the line is a possible crossing for :func:`stream_gaps`. A part lying wholly along a bank (a stream
    polygon's edge, the side of a widened line) is in the channel (the edge belongs to it), said so.
    """
    def none() -> np.ndarray:
        return np.array([], dtype=object)

    empty = ChannelPieces(none(), none(), none(), none(), none(), none(), [], [], np.array([]), [])
    if not len(lines) or not len(streams):
        return empty
    near = streams.iloc[np.unique(streams.sindex.query(lines.geometry.values, predicate="dwithin",
                                                       distance=width_ft)[1])]
    if not len(near):
        return empty
    sg = near.geometry.values
    is_poly = np.isin(shapely.get_type_id(sg), (3, 6))
    # the edge belongs to the channel: widened by the numerical tolerance, so a line exactly on it is in it
    channel = np.where(is_poly, sg, shapely.buffer(sg, width_ft / 2.0 + LENGTH_NOISE_FT, cap_style="flat"))
    u = shapely.union_all(channel)
    bank = shapely.boundary(u)
    polys = shapely.union_all(sg[is_poly]) if is_poly.any() else None
    centre = shapely.union_all(sg[~is_poly]) if (~is_poly).any() else None
    inter = shapely.intersection(lines.geometry.values, u)
    multi = shapely.get_type_id(inter) == 5
    inter = np.where(multi, shapely.line_merge(np.where(multi, inter, None)), inter)
    parts, idx = shapely.get_parts(inter, return_index=True)
    keep = np.isin(shapely.get_type_id(parts), (1, 2)) & (shapely.length(parts) > LENGTH_NOISE_FT)
    parts, idx = parts[keep], idx[keep]
    kinds_col = near["kind"] if "kind" in near.columns else pd.Series(None, index=near.index, dtype=object)
    crossing, why, sids, skinds, on_end, widths = [], [], [], [], [], []
    tips = np.array([], dtype=object) if centre is None else shapely.get_parts(shapely.boundary(centre))
    upart = shapely.get_parts(u)
    tree = shapely.STRtree(channel)
    for piece in parts:  # the places where a plan line meets a channel (a handful)
        mid = shapely.line_interpolate_point(piece, 0.5, normalized=True)
        part = upart[int(np.argmin(shapely.distance(upart, mid)))]
        ends_on_bank = bool(np.all(shapely.distance(np.array([shapely.get_point(piece, 0),
                                                               shapely.get_point(piece, -1)]), bank) <= _ON_BANK_FT))
        on_poly = polys is not None and bool(shapely.intersects(piece, polys))
        opposite = ends_on_bank and _opposite_banks(piece, part, centre, on_poly, bank_arc_ratio)
        w = _local_width(piece, bank)
        on_bank = w <= 2.0 * _ON_BANK_FT  # the whole piece on the bank: no width inside the channel
        on_end.append(on_bank and not on_poly and _on_flat_end(piece, tips, width_ft))
        short = bool(at_most(piece.length, ratio * w))
        crossing.append(ends_on_bank and opposite and short and not on_bank)
        why.append(_piece_reason(crossing[-1], ends_on_bank, opposite, on_bank))
        widths.append(w)
        hit = tree.query(piece, predicate="intersects")
        sids.append(", ".join(sorted(set(near["feature_id"].astype(str).to_numpy()[hit]))))
        skinds.append(tuple(dict.fromkeys(None if is_blank(k) else str(k) for k in kinds_col.to_numpy()[hit])))
    inside = ~np.array(on_end, bool)
    kept = np.flatnonzero(inside)
    parts, idx = parts[inside], idx[inside]
    crossing = [crossing[k] for k in kept]
    why, sids, skinds = [why[k] for k in kept], [sids[k] for k in kept], [skinds[k] for k in kept]
    width = np.array(widths, float)[kept]
    pts = shapely.line_interpolate_point(parts, 0.5, normalized=True) if len(parts) else np.array([], dtype=object)
    station = shapely.line_locate_point(lines.geometry.values[idx], pts) if len(parts) else np.array([])
    order = np.lexsort((station, idx)) if len(parts) else np.array([], int)
    return ChannelPieces(idx[order], parts[order], shapely.length(parts)[order], np.array(crossing, bool)[order],
                         station[order], pts[order], [sids[i] for i in order], [skinds[i] for i in order],
                         width[order], [why[i] for i in order])


def _channel_streams(ctx: HarvestContext, kinds: list[str]) -> gpd.GeoDataFrame | None:
    s = ctx.get("streams")
    return None if s is None else _select_kinds(s, kinds)


@check("HRV-012")
def check_skidding_in_channel(ctx: HarvestContext, rule: Rule) -> gpd.GeoDataFrame:
    """A skid trail inside a stream channel other than to cross it is skidding in the channel.

    Crossing or not is decided by geometry (:func:`channel_pieces`), never by length alone: a
    trail running 49 ft along inside a channel skids in it; a straight crossing of a 60-ft-wide
    stream polygon is a crossing (listed by HRV-013).
    """
    g = ctx.get("skid_trails")
    if g is None:
        return _missing_layer(ctx, rule, "skid_trails")
    ids, n = _plan_ids(g), len(g)
    streams = _channel_streams(ctx, list(rule.p("stream_kinds")))
    if streams is None:
        return rule.findings("not_evaluated", subject_layer="skid_trails", subject_id=ids,
                             geometry=g.geometry.values, crs=ctx.crs, detail=_absent(ctx, rule, "streams"))
    width, ratio = rule.t("channel_width_ft"), rule.t("max_crossing_length_ratio")
    cp = channel_pieces(g, streams, width, ratio, rule.t("opposite_bank_arc_ratio"))
    along = ~cp.crossing.astype(bool)
    bad_len = _first_per_group(cp.line[along].astype(int), cp.length[along].astype(float), n, "sum")
    inside = _first_per_group(cp.line.astype(int), cp.length.astype(float), n, "sum")
    status = np.where(np.nan_to_num(bad_len) > 0, "violation", "pass")
    geom = np.array(g.geometry.values, dtype=object)
    detail = []
    channel = rule.phrase("channel")
    for i in range(n):  # the plan's skid trails
        mine = np.flatnonzero(cp.line == i)
        if status[i] == "violation":
            geom[i] = shapely.union_all(cp.geom[mine[along[mine]]])
        txt = "; ".join(rule.phrase("piece", stream=cp.streams[j], kind=_kinds_text(rule, cp.kinds[j]),
                                    station=f"{cp.station[j]:,.0f}", why=_piece_why(rule, cp, int(j), ratio))
                        for j in mine) or rule.phrase("not_in_channel")
        detail.append(f"{channel}; {txt}")
    return rule.findings(status, subject_layer="skid_trails", subject_id=ids,
                         measured=np.where(status == "violation", bad_len, np.nan_to_num(inside)),
                         unit="ft", geometry=geom, crs=ctx.crs, detail=detail)


@dataclass
class StreamGaps:
    """Possible crossings the stream map leaves out (:func:`stream_gaps`): one per gap at a line (worded
    by :func:`_gap_detail`)."""

    line: np.ndarray  # index of the plan line
    point: np.ndarray  # on the line, across from the gap
    station: np.ndarray  # its distance along the line, ft
    ends: list[tuple[StreamEnd, StreamEnd | None]]  # the nearer end, and the one across the line (None: alone)
    gap: np.ndarray  # between the two ends, ft (NaN: alone)


class StreamEnd(NamedTuple):
    """A stream's end near a plan line (:func:`stream_gaps`)."""

    stream: str  # its feature_id
    kind: str | None  # None: not given
    polygon: bool  # the end of a stream polygon (else of a stream line)
    distance: float  # from the line, ft


def _free_stream_ends(streams: gpd.GeoDataFrame, every: gpd.GeoDataFrame, near_lines: Any,
                      dist_ft: float) -> tuple[np.ndarray, np.ndarray]:
    """The ends of the line streams of ``streams`` within ``dist_ft`` of ``near_lines`` that touch no other
    stream line of ``every`` (each part of a multi-part line apart; a closed line has no end): (the end
    points, the row of ``streams`` each ends)."""
    none = (np.array([], dtype=object), np.array([], int))
    reach = dist_ft + LENGTH_NOISE_FT
    rows = np.unique(streams.sindex.query(near_lines, predicate="dwithin", distance=reach)[1])
    sg = streams.geometry.values[rows]
    lines = np.isin(shapely.get_type_id(sg), (1, 5))
    parts, owner = shapely.get_parts(sg[lines], return_index=True)
    keep = (shapely.get_type_id(parts) == 1) & (shapely.length(parts) > LENGTH_NOISE_FT) & ~shapely.is_closed(parts)
    parts, owner = parts[keep], rows[lines][owner[keep]]
    if not len(parts):
        return none
    ends = np.concatenate([shapely.get_point(parts, 0), shapely.get_point(parts, -1)])
    end_part, end_row = np.tile(np.arange(len(parts)), 2), np.tile(owner, 2)
    near = np.unique(shapely.STRtree(near_lines).query(ends, predicate="dwithin", distance=reach)[0])
    ends, end_part, end_row = ends[near], end_part[near], end_row[near]
    # the other stream lines (every kind, every part) an end touches: a junction, the next segment of an export
    # (a line ending in a stream polygon flows into it)
    og = every.geometry.values[np.unique(every.sindex.query(ends, predicate="dwithin", distance=LENGTH_NOISE_FT)[1])]
    others = shapely.get_parts(og)
    e, o = shapely.STRtree(others).query(ends, predicate="dwithin", distance=LENGTH_NOISE_FT)
    same = shapely.equals(others[o], parts[end_part[e]])  # the end's own part
    touched = np.zeros(len(ends), bool)
    touched[e[~same]] = True
    return ends[~touched], end_row[~touched]


def _polygon_stream_ends(streams: gpd.GeoDataFrame, every: gpd.GeoDataFrame, lines: Any, dist_ft: float,
                         bank_arc_ratio: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The ends of the polygon streams of ``streams`` that face a line of ``lines`` within ``dist_ft`` without
    the line entering them: (a point on each end, the row of ``streams``, the line, the end's distance from it).

    A polygon's *face* at a line is the connected stretch of its outer bank that holds its nearest approach
    to the line (within ``dist_ft``, ``at_most``) and reaches the polygon's width ``w`` (the diameter of the
    largest circle inside it) beyond that approach. The face is an *end* of the polygon when it goes
    across the channel: its two ends lie on opposite banks as HRV-012 reads them (the shorter way round the
    bank between them is more than ``bank_arc_ratio`` times the straight distance; at exactly that ratio,
    within float noise, it may go either way and is read as an end, the cautious side, where HRV-012 reads a
    piece of a skid trail there as on one bank, its own cautious side; a square end of width
    ``W`` gives ``W + 2 w`` round against ``W`` straight, at least 3 times) and it touches no other stream
    feature of ``every`` (there the stream runs on: the next polygon of an export, a line flowing out of it).
    A bank running along the line, or a bend coming near it, gives a stretch with both ends on one bank
    (round about as long as straight, at most pi / 2 times it for a bend no tighter than the channel is
    wide): no end. Each end's point is on the stretch across from the line's point nearest its middle.

    Examples
    --------
    >>> from shapely.geometry import LineString, box
    >>> s = gpd.GeoDataFrame({"feature_id": ["RV", "BK"]}, geometry=[box(0, -900, 100, -20), box(0, 30, 900, 90)])
    >>> pt, row, line, d = _polygon_stream_ends(s, s, np.array([LineString([(-100, 0), (800, 0)])]), 50.0, 2.0)
    >>> [(round(q.x, 1), round(q.y, 1)) for q in pt], row.tolist(), d.round(1).tolist()
    ([(50.0, -20.0)], [0], [20.0])
    """
    none = (np.array([], dtype=object), np.array([], int), np.array([], int), np.array([]))
    reach = dist_ft + LENGTH_NOISE_FT
    rows = np.unique(streams.sindex.query(lines, predicate="dwithin", distance=reach)[1])
    sg = streams.geometry.values[rows]
    poly = np.isin(shapely.get_type_id(sg), (3, 6))
    parts, owner = shapely.get_parts(sg[poly], return_index=True)
    owner = rows[poly][owner]
    if not len(parts):
        return none
    pi, li = shapely.STRtree(lines).query(parts, predicate="dwithin", distance=reach)
    enters = shapely.relate_pattern(lines[li], parts[pi], "T********")  # a mapped crossing (channel_pieces)
    ok = at_most(shapely.distance(parts[pi], lines[li]), dist_ft) & ~enters
    pi, li = pi[ok], li[ok]  # a line touching the polygon (a corner, its end's edge) does not enter it
    if not len(pi):
        return none
    width = 2.0 * shapely.length(shapely.maximum_inscribed_circle(parts))
    band = shapely.buffer(lines[li], shapely.distance(parts[pi], lines[li]) + width[pi])
    bits, pair = shapely.get_parts(shapely.intersection(shapely.get_exterior_ring(parts[pi]), band), return_index=True)
    lin = shapely.get_type_id(bits) == 1
    if not lin.any():
        return none
    has, slot = np.unique(pair[lin], return_inverse=True)
    merged = shapely.line_merge(shapely.multilinestrings(bits[lin], indices=slot))  # across the ring's start
    faces, fp = shapely.get_parts(merged, return_index=True)
    fp = has[fp]
    fl = lines[li[fp]]
    d = shapely.distance(faces, fl)
    # the stretch of bank nearest the line (a lobe of the far bank reaching into the band is none)
    nearest = at_most(d, shapely.distance(parts[pi[fp]], fl))
    keep = (shapely.get_type_id(faces) == 1) & ~shapely.is_closed(faces) & nearest
    faces, fp, fl, d = faces[keep], fp[keep], fl[keep], d[keep]
    if not len(faces):
        return none
    a, b = shapely.get_point(faces, 0), shapely.get_point(faces, -1)
    ring = shapely.get_exterior_ring(parts[pi[fp]])
    arc = np.abs(shapely.line_locate_point(ring, a) - shapely.line_locate_point(ring, b))
    # at the ratio (within float noise) either bank may hold the stretch's far end: read as across, a possible
    # crossing (review), never a pass resting on the last digits (a 45-degree squared end sits exactly at 2)
    across = ~under_limit(np.minimum(arc, shapely.length(ring) - arc), bank_arc_ratio * shapely.distance(a, b))
    og = every.geometry.values[np.unique(every.sindex.query(faces, predicate="dwithin", distance=LENGTH_NOISE_FT)[1])]
    others = shapely.get_parts(og)
    fi, o = shapely.STRtree(others).query(faces, predicate="dwithin", distance=LENGTH_NOISE_FT)
    own = shapely.equals(others[o], parts[pi[fp[fi]]])
    touched = np.zeros(len(faces), bool)
    touched[fi[~own]] = True
    end = across & ~touched
    faces, fp, fl, d = faces[end], fp[end], fl[end], d[end]
    mid = shapely.line_interpolate_point(faces, 0.5, normalized=True)
    across_from = shapely.line_interpolate_point(fl, shapely.line_locate_point(fl, mid))
    pt = shapely.get_point(shapely.shortest_line(faces, across_from), 0)
    return pt, owner[pi[fp]], li[fp], d


def _stops(rule: Rule, d: float, verb: str = "stops") -> str:
    """How far a stream's end lies from a plan line, in ``rule``'s words (its phrases ``stops`` and
    ``resumes``; on it, within :data:`_ON_BANK_FT`: ``ends_on`` and ``resumes_on``).

    Examples
    --------
    >>> from geoconstraints.rulebook.loader import load_rulebook
    >>> rule = load_rulebook("vestal")["HRV-013"]
    >>> _stops(rule, 20.0), _stops(rule, 0.0), _stops(rule, 0.0, "resumes")
    ('stops 20.0 ft from it', 'ends on it', 'resumes on it')
    """
    if d > _ON_BANK_FT:
        return rule.phrase(verb, distance=f"{d:,.1f}")
    return rule.phrase("ends_on" if verb == "stops" else "resumes_on")


def _gap_detail(rule: Rule, station: float, end: StreamEnd, other: StreamEnd | None, gap: float) -> str:
    """A possible crossing of :func:`stream_gaps` in ``rule``'s words: one end (``line_end``,
    ``polygon_end``), or two across the line (``gap`` over ``same_stream_ends`` or ``two_stream_ends``).

    Examples
    --------
    >>> from geoconstraints.rulebook.loader import load_rulebook
    >>> rule = load_rulebook("vestal")["HRV-013"]
    >>> pair = _gap_detail(rule, 100.0, StreamEnd("S3", None, False, 0.0), StreamEnd("S3", None, False, 15.0), 15.0)
    >>> pair.split(": ", 1)[1].split(" (ends")[0]
    'stream S3 (kind unknown) ends on it on one side and resumes 15.0 ft from it on the other, a gap of 15.0 ft across it'
    >>> _gap_detail(rule, 100.0, StreamEnd("RV", "perennial", True, 30.0), None, np.nan).split(";")[0].split(": ", 1)[1]
    'stream RV (perennial, its polygon ending bank to bank) stops 30.0 ft from it, touching no other stream feature, within 50 ft (stream_end_distance_ft)'
    """
    def label(e: StreamEnd) -> str:
        return rule.phrase("stream_polygon" if e.polygon else "stream_line", stream=e.stream,
                           kind=_kinds_text(rule, (e.kind,)))

    st = f"{station:,.0f}"
    if other is None:
        return rule.phrase("polygon_end" if end.polygon else "line_end", station=st, stream=label(end),
                           stops=_stops(rule, end.distance))
    ends = (rule.phrase("same_stream_ends", stream=label(end), stops=_stops(rule, end.distance),
                        resumes=_stops(rule, other.distance, "resumes")) if end.stream == other.stream else
            rule.phrase("two_stream_ends", stream=label(end), stops=_stops(rule, end.distance), other=label(other),
                        other_stops=_stops(rule, other.distance)))
    return rule.phrase("gap", station=st, ends=ends, gap=f"{gap:,.1f}")


def _mapped_ends(pt: np.ndarray, sid: np.ndarray, line: np.ndarray, dist_ft: float, cp: ChannelPieces,
                 listed: np.ndarray) -> np.ndarray:
    """Whether each stream end (``pt``, of stream ``sid``, near plan line ``line``) lies within ``dist_ft``
    of a piece of the same stream in the channel at that line already ``listed`` (a mapped crossing)."""
    out = np.zeros(len(pt), bool)
    mapped = np.flatnonzero(listed)
    if not len(pt) or not len(mapped):
        return out
    # a search wide enough for any noise at_most allows; the test itself is at_most below
    c, j = shapely.STRtree(cp.geom[mapped]).query(pt, predicate="dwithin", distance=2.0 * dist_ft + LENGTH_NOISE_FT)
    j = mapped[j]
    same = (cp.line[j].astype(int) == line[c]) & at_most(shapely.distance(pt[c], cp.geom[j]), dist_ft)
    same &= np.array([s in cp.streams[k].split(", ") for s, k in zip(sid[c], j)], bool)
    out[c[same]] = True
    return out


def _across_pairs(pt: np.ndarray, line: np.ndarray, lg: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pairs of ends near one plan line on either side of it (the straight segment between them meets it),
    nearest first, each end in one pair at most (greedy): (end a, end b, the gap between them, ft).

    Candidates are ordered by line, gap, then end indices (``a < b``), so ties keep the ends' order."""
    ia, ib = [], []
    for i in np.unique(line):  # the plan lines with a stream end near them
        k = np.flatnonzero(line == i)
        u, v = np.triu_indices(len(k), 1)
        ia.append(k[u])
        ib.append(k[v])
    a = np.concatenate(ia) if ia else np.array([], int)
    b = np.concatenate(ib) if ib else np.array([], int)
    seg = shapely.linestrings(np.stack([shapely.get_coordinates(pt[a]), shapely.get_coordinates(pt[b])], axis=1)) \
        if len(a) else np.array([], dtype=object)
    meets = shapely.intersects(seg, lg[line[a]]) if len(a) else np.array([], bool)
    a, b = a[meets], b[meets]
    gap = shapely.distance(pt[a], pt[b])
    order = np.lexsort((b, a, gap, line[a]))
    used = np.zeros(len(pt), bool)
    out = []
    for k in order:  # greedy: the nearest pair of free ends first
        if not (used[a[k]] or used[b[k]]):
            used[[a[k], b[k]]] = True
            out.append(k)
    sel = np.array(out, int)
    return a[sel], b[sel], gap[sel]


def stream_gaps(lines: gpd.GeoDataFrame, streams: gpd.GeoDataFrame, every: gpd.GeoDataFrame, dist_ft: float,
                cp: ChannelPieces, listed: np.ndarray, bank_arc_ratio: float) -> StreamGaps:
    """Places where a stream stops within ``dist_ft`` of a plan line without crossing it: a possible
    crossing the stream map leaves out (a culvert or bridge not digitised, the stream broken at the road).

    An end of a line stream of ``streams`` that touches no other stream line of ``every``
    (:func:`_free_stream_ends`) and lies within ``dist_ft`` of a line (``at_most``: the limit included), or
    an end of a polygon stream facing the line within ``dist_ft`` (:func:`_polygon_stream_ends`: its bank
    going across the channel there, touching no other stream), is a gap at that line, unless a piece of the
    same stream in the channel at that line is already ``listed`` (the crossing is mapped). Two such ends on
    either side of the line (the straight segment between them meets it) are one gap, the nearest pairs
    first. A stream end farther than ``dist_ft`` from every line is a real end of a stream, not a gap; a
    polygon's bank along the line, or a bend of it near the line, is no end.
    """
    empty = StreamGaps(np.array([], int), np.array([], dtype=object), np.array([]), [], np.array([]))
    if not len(lines) or not len(streams):
        return empty
    lg = lines.geometry.values
    ends, row = _free_stream_ends(streams, every, lg, dist_ft)
    e, li = shapely.STRtree(lg).query(ends, predicate="dwithin", distance=dist_ft + LENGTH_NOISE_FT) \
        if len(ends) else (np.array([], int), np.array([], int))
    d = shapely.distance(ends[e], lg[li])
    ok = at_most(d, dist_ft)
    ppt, prow, pline, pd_ = _polygon_stream_ends(streams, every, lg, dist_ft, bank_arc_ratio)
    pt = np.concatenate([ends[e[ok]], ppt])
    row = np.concatenate([row[e[ok]], prow]).astype(int)
    line = np.concatenate([li[ok], pline]).astype(int)
    dist = np.concatenate([d[ok], pd_]).astype(float)
    is_poly = np.repeat([False, True], [int(ok.sum()), len(ppt)])
    sid = streams["feature_id"].astype(str).to_numpy()[row]
    kind_col = streams["kind"] if "kind" in streams.columns else pd.Series(None, index=streams.index, dtype=object)
    kind = np.array([None if is_blank(k) else str(k) for k in kind_col.to_numpy()[row]], dtype=object)
    keep = ~_mapped_ends(pt, sid, line, dist_ft, cp, listed)  # beside a listed piece: the crossing is mapped
    pt, line, dist, is_poly, sid, kind = pt[keep], line[keep], dist[keep], is_poly[keep], sid[keep], kind[keep]
    if not len(pt):
        return empty
    a, b, gap = _across_pairs(pt, line, lg)
    near_first = (dist[b] < dist[a]) | ((dist[b] == dist[a]) & (sid[b] < sid[a]))  # the nearer end first
    a, b = np.where(near_first, b, a), np.where(near_first, a, b)
    mid = shapely.line_interpolate_point(shapely.linestrings(np.stack(
        [shapely.get_coordinates(pt[a]), shapely.get_coordinates(pt[b])], axis=1)), 0.5, normalized=True) \
        if len(a) else np.array([], dtype=object)
    single = np.setdiff1d(np.arange(len(pt)), np.concatenate([a, b]))
    out_line = np.concatenate([line[a], line[single]])
    out_st = np.concatenate([shapely.line_locate_point(lg[line[a]], mid) if len(a) else np.array([]),
                             shapely.line_locate_point(lg[line[single]], pt[single])]).astype(float)

    def end(k: int) -> StreamEnd:
        return StreamEnd(str(sid[k]), kind[k], bool(is_poly[k]), float(dist[k]))

    found: list[tuple[StreamEnd, StreamEnd | None]] = [(end(i), end(j)) for i, j in zip(a, b)]
    found += [(end(k), None) for k in single]
    gaps = np.concatenate([gap, np.full(len(single), np.nan)])
    order = np.lexsort((out_st, out_line))
    return StreamGaps(out_line[order], shapely.line_interpolate_point(lg[out_line], out_st)[order], out_st[order],
                      [found[j] for j in order], gaps[order])


def _crossings_layer(ctx: HarvestContext, rule: Rule, g: gpd.GeoDataFrame, layer: str,
                     streams: gpd.GeoDataFrame, kinds_txt: str) -> list[gpd.GeoDataFrame]:
    ids = _plan_ids(g)
    ch = ctx.channel or {}
    cp = channel_pieces(g, streams, ch["width_ft"], ch["ratio"], ch["bank_arc_ratio"])
    listed = cp.crossing.astype(bool) | (layer != "skid_trails")  # a skid trail along a channel is HRV-012's
    sel = np.flatnonzero(listed)
    detail = [rule.phrase("crossing", stream=cp.streams[j], kind=_kinds_text(rule, cp.kinds[j]),
                          station=f"{cp.station[j]:,.0f}") if cp.crossing[j] else
              rule.phrase("along", stream=cp.streams[j], kind=_kinds_text(rule, cp.kinds[j]),
                          station=f"{cp.station[j]:,.0f}", why=_piece_why(rule, cp, int(j), ch["ratio"])) for j in sel]
    out = [rule.findings("review", subject_layer=layer, subject_id=ids[cp.line[sel].astype(int)], unit="ft",
                         measured=cp.station[sel].astype(float), geometry=cp.point[sel], crs=ctx.crs, detail=detail)]
    end_ft = rule.t("stream_end_distance_ft")
    every = ctx.get("streams")
    gaps = stream_gaps(g, streams, streams if every is None else every, end_ft, cp, listed, ch["bank_arc_ratio"])
    out.append(rule.findings("review", subject_layer=layer, subject_id=ids[gaps.line], unit="ft",
                             measured=gaps.station, geometry=gaps.point, crs=ctx.crs,
                             detail=[_gap_detail(rule, st, e, o, gp)
                                     for st, (e, o), gp in zip(gaps.station, gaps.ends, gaps.gap)]))
    none = np.setdiff1d(np.arange(len(g)), np.concatenate([cp.line[sel].astype(int), gaps.line]))
    found = rule.phrase("none_found", kinds=kinds_txt)
    note = [found + (f"; {rule.phrase('not_crossing', length=f'{cp.length[cp.line == i].sum():,.0f}')}"
                     if (cp.line == i).any() else "") for i in none]
    out.append(rule.findings("pass", subject_layer=layer, subject_id=ids[none], geometry=g.geometry.values[none],
                             crs=ctx.crs, detail=note))
    return out


@check("HRV-013")
def check_stream_crossings(ctx: HarvestContext, rule: Rule) -> gpd.GeoDataFrame:
    """Each crossing of a haul road or skid trail with a stream is a ``review`` at the crossing.

    The crossings are those of :func:`channel_pieces` with the channel of HRV-012 (one reading
    for both rules: a place where a skid trail meets a channel is either a crossing here or
    skidding in the channel there). A haul road running along inside a channel is listed too. A
    stream that stops within ``stream_end_distance_ft`` of the line without meeting it (a stream
    line's free end, or ending on it; a stream polygon's end facing it: :func:`stream_gaps`) is a
    possible crossing the map leaves out, ``review``; a pass says none was found. Every sentence is one
    of the rule's phrases (:func:`_gap_detail`, :func:`_piece_why`).
    """
    out = []
    inter = truthy(rule.s("include_intermittent")) is True
    kinds = ["perennial", "intermittent"] if inter else ["perennial"]
    kinds_txt = rule.phrase("with_intermittent" if inter else "perennial_only")
    streams = _channel_streams(ctx, kinds)
    for layer in ROAD_LAYERS:
        g = ctx.get(layer)
        if g is None:
            out.append(_missing_layer(ctx, rule, layer))
        elif streams is None or ctx.channel is None:
            out.append(rule.findings("not_evaluated", subject_layer=layer, subject_id=_plan_ids(g),
                                     geometry=g.geometry.values, crs=ctx.crs,
                                     detail=_absent(ctx, rule, "streams") if streams is None else
                                     rule.phrase("no_channel_rule", channel_rule=CHANNEL_RULE)))
        else:
            out.extend(_crossings_layer(ctx, rule, g, layer, streams, kinds_txt))
    return concat_findings(out, ctx.crs)


# ------------------------------------------------------------------------------------------
# HRV-020..023 buffer strips


def _buffer_why(ctx: HarvestContext, rule: Rule, kind: str) -> str:
    """Why the strips of ``kind`` are not built, or not built whole, in ``rule``'s words: the phrase of the
    reason :func:`~geoconstraints.geometry.buffers.build_buffers` recorded (:attr:`BufferBuild.why
    <geoconstraints.geometry.buffers.BufferBuild>`: ``no_streams``, ``no_roads``, ``row_only``, ``no_parcels``,
    ``no_dwellings``, ``no_zoning``; ``rule_absent`` where the rulebook lacks the kind's rule).

    Examples
    --------
    >>> from geoconstraints.io.layers import Layers
    >>> from geoconstraints.rulebook.loader import load_rulebook
    >>> bb = bf.BufferBuild(bf.empty_buffers(), missing={"road": "no roads or row layer", "dwelling": "rule HRV-022 is "
    ...                     "not in the rulebook"}, why={"road": "no_roads", "dwelling": "rule_absent"})
    >>> ctx = HarvestContext(Layers(frames={}, crs=None), bb, {}, gpd.GeoDataFrame(geometry=[]))
    >>> rule = load_rulebook("vestal")["HRV-023"]
    >>> _buffer_why(ctx, rule, "road"), _buffer_why(ctx, rule, "dwelling")
    ('no roads or row layer', 'rule HRV-022 is not in the rulebook')
    """
    key = ctx.buffers.why[kind]
    return rule.phrase(key, absent_rule=BUFFER_RULES[kind]) if key == "rule_absent" else rule.phrase(key)


def _buffer_note(ctx: HarvestContext, rule: Rule, kind: str) -> str:
    """How the strips of ``kind`` were measured, in ``rule``'s words ('' when the build says nothing of
    it): the phrase of the key :func:`~geoconstraints.geometry.buffers.build_buffers` recorded
    (:attr:`BufferBuild.how <geoconstraints.geometry.buffers.BufferBuild>`: the streams counted,
    ``stream_perennial`` or ``stream_intermittent``; the line a road's strip is measured from, ``road_row`` or
    ``road_centre``; where districts come from, ``property_line_note`` or ``dwelling_note``)."""
    key = ctx.buffers.how.get(kind)
    if key is None:
        return ""
    return rule.phrase(key, source=district_source(ctx.layers)) if key.endswith("_note") else rule.phrase(key)


def _possible_note(rule: Rule, pos: gpd.GeoDataFrame, inside_acres: float) -> str:
    """The further acres the strips ``pos`` of districts unknown would add, in ``rule``'s phrase ``possible``."""
    return rule.phrase("possible", acres=fmt_num(inside_acres), strips=id_list(sorted(set(pos["source_id"]))))


def _buffer_findings(ctx: HarvestContext, rule: Rule, kind: str, **values: Any) -> gpd.GeoDataFrame:
    """The strips of ``kind`` inside each harvest area (``info``), in ``rule``'s words: the kind's name
    (the phrase named ``kind``), the acres and the sources (``inside``, ``inside_from``), how they were
    measured (:func:`_buffer_note`), the strips districts unknown may add (``possible``), and why the
    kind is not built (``not_built``) or not whole (``not_whole``, :func:`_buffer_why`): then
    ``not_evaluated``."""
    ha = ctx.harvest_area
    if ha is None:
        return _missing_layer(ctx, rule, "harvest_area")
    ids, n = _plan_ids(ha), len(ha)
    bb = ctx.buffers
    label = rule.phrase(kind)
    strips = bb.strips[bb.strips["kind"] == kind]
    if kind in bb.missing and not len(strips):
        return rule.findings("not_evaluated", subject_layer="harvest_area", subject_id=ids,
                             geometry=ha.geometry.values, crs=ctx.crs,
                             detail=rule.phrase("not_built", kind=label, why=_buffer_why(ctx, rule, kind)), **values)
    inside = polygonal_parts(bf.buffers_inside(ha, strips))
    acres = sqft_to_acres(shapely.area(inside))
    pos = bb.possible[bb.possible["kind"] == kind]
    extra = sqft_to_acres(shapely.area(polygonal_parts(shapely.difference(
        polygonal_parts(bf.buffers_inside(ha, pos)), inside)))) if len(pos) else np.zeros(n)
    hi, si = (strips.sindex.query(ha.geometry.values, predicate="intersects") if len(strips)
              else (np.array([], int), np.array([], int)))
    srcs = _joined(hi, strips["source_id"].to_numpy()[si], n)
    note = _buffer_note(ctx, rule, kind)
    whole = f"; {rule.phrase('not_whole', why=_buffer_why(ctx, rule, kind))}" if kind in bb.missing else ""
    detail = [(rule.phrase("inside_from", kind=label, acres=fmt_num(acres[i]), sources=srcs[i]) if srcs[i] else
               rule.phrase("inside", kind=label, acres=fmt_num(acres[i])))
              + f"; {note}" + (f"; {_possible_note(rule, pos, extra[i])}" if extra[i] > 0 else "") + whole
              for i in range(n)]
    status = np.where((extra > 0) | (kind in bb.missing), "not_evaluated", "info")
    # the strip inside the area, else (no strip there) the harvest area itself
    return rule.findings(status, subject_layer="harvest_area", subject_id=ids, measured=acres, unit="acres",
                         geometry=np.where(acres > 0, inside, ha.geometry.values), crs=ctx.crs, detail=detail,
                         **values)


@check("HRV-020")
def check_stream_road_buffers(ctx: HarvestContext, rule: Rule) -> gpd.GeoDataFrame:
    """Buffer strips along streams and public roads: acres inside each harvest area, per kind."""
    if ctx.harvest_area is None:
        return _missing_layer(ctx, rule, "harvest_area")
    return concat_findings([_buffer_findings(ctx, rule, "stream"), _buffer_findings(ctx, rule, "road")], ctx.crs)


@check("HRV-021")
def check_property_line_buffers(ctx: HarvestContext, rule: Rule) -> gpd.GeoDataFrame:
    """Buffer strips along property lines in the listed districts: acres inside each area
    (``not_evaluated`` where parcels of unknown district could add strips)."""
    return _buffer_findings(ctx, rule, "property_line")


@check("HRV-022")
def check_dwelling_buffers(ctx: HarvestContext, rule: Rule) -> gpd.GeoDataFrame:
    """Buffer strips around dwellings in the listed districts: acres inside each harvest area
    (``not_evaluated`` where dwellings of unknown district could add strips)."""
    return _buffer_findings(ctx, rule, "dwelling")


@check("HRV-023")
def check_buffer_cutting(ctx: HarvestContext, rule: Rule) -> gpd.GeoDataFrame:
    """Buffer acres (all kinds, overlaps once) inside each harvest area, for the stump-diameter rule."""
    ha = ctx.harvest_area
    if ha is None:
        return _missing_layer(ctx, rule, "harvest_area")
    bb = ctx.buffers
    inside = polygonal_parts(bf.buffers_inside(ha, bb.strips))
    acres = sqft_to_acres(shapely.area(inside))
    maybe = sqft_to_acres(shapely.area(polygonal_parts(bf.buffers_inside(ha, bb.possible)))) if len(bb.possible) \
        else np.zeros(len(ha))
    miss = _not_built(ctx, rule)
    unsure = bool(bb.missing) | (maybe > 0)
    status = np.where(acres > 0, "info", np.where(unsure, "not_evaluated", "pass"))
    kinds = ", ".join(sorted(set(bb.strips["kind"])))
    said = rule.phrase("kinds", kinds=kinds) if kinds else rule.phrase("no_kinds")
    extra = [f"; {rule.phrase('possible_strips', strips=id_list(sorted(set(bb.possible['source_id']))), acres=fmt_num(m))}"
             if m > 0 else "" for m in maybe]
    return rule.findings(status, subject_layer="harvest_area", subject_id=_plan_ids(ha), measured=acres, unit="acres",
                         geometry=np.where(acres > 0, inside, ha.geometry.values), crs=ctx.crs,
                         detail=[said + (f"; {miss}" if miss else "") + e for e in extra])


def _not_built(ctx: HarvestContext, rule: Rule) -> str:
    """Each kind of buffer strip not built (or not whole), in ``rule``'s words (``not_built_kind`` over
    the kind's name, the phrase named by it, and :func:`_buffer_why`), joined by ``; `` ('' when none)."""
    return "; ".join(rule.phrase("not_built_kind", kind=rule.phrase(k), why=_buffer_why(ctx, rule, k))
                     for k in ctx.buffers.missing)


# ------------------------------------------------------------------------------------------
# HRV-024..027 landings and access


def _point_landings(lg: gpd.GeoDataFrame) -> np.ndarray:
    """The landings mapped as points (or multipoints): a point cannot show where the landing's pad ends."""
    return np.isin(shapely.get_type_id(lg.geometry.values), (0, 4))


def _pad_radius(lg: gpd.GeoDataFrame, rule: Rule) -> np.ndarray:
    """How far each feature of ``lg`` may reach beyond what is mapped (feet): the rule's
    ``point_landing_radius_ft`` for a landing mapped as a point, whose pad the point cannot show, 0 for a
    line or polygon, measured edge to edge. HRV-003, HRV-024 and HRV-025 pass a point only where its pad
    cannot reach what the rule measures, and say so with the rule's ``point_pad`` phrase.

    Examples
    --------
    >>> from geoconstraints.rulebook.loader import load_rulebook
    >>> lg = gpd.GeoDataFrame(geometry=[shapely.Point(0, 0), shapely.box(0, 0, 10, 10)], crs=2262)
    >>> _pad_radius(lg, load_rulebook("vestal")["HRV-024"]).tolist()
    [120.0, 0.0]
    """
    return np.where(_point_landings(lg), rule.t("point_landing_radius_ft"), 0.0)


def _drawn(strips: gpd.GeoDataFrame, sources: pd.DataFrame, rules: set[str], *,
           possible: bool = False) -> gpd.GeoDataFrame:
    """The strips of the rules ``rules`` with what each is drawn around (``source_geometry``, None
    where not told: :class:`~geoconstraints.geometry.buffers.BufferBuild`) and a ``label``:
    ``<kind> buffer of <id>``; for a strip of a district unknown (``possible``), the value the layer
    gives there as HRV-003 names it (``(district unknown ("RA-l"))``), and the parcel whose district
    it is when the line is a neighbour's bordering it (``(bordering P2, district unknown)``)."""
    s = strips.join(sources.reindex(columns=bf.SOURCE_COLUMNS))
    s = s.loc[s["rule_id"].isin(rules).to_numpy()]
    label = s["kind"].to_numpy(dtype=object) + " buffer of " + s["source_id"].astype(str).to_numpy(dtype=object)
    if possible:
        label = np.array([f"{t} ({'' if pd.isna(b) else f'bordering {b}, '}{bf.unknown_district(v)})"
                          for t, b, v in zip(label, s["bordering"], s["district_value"])], dtype=object)
    return s.assign(source_geometry=s["source_geometry"].astype(object).where(s["source_geometry"].notna(), None),
                    label=label)


def _strip_hits(lg: gpd.GeoDataFrame, strips: gpd.GeoDataFrame) -> tuple[np.ndarray, list[str], list[str]]:
    """(hit, labels, kinds) of each landing against ``strips`` (:func:`_drawn`)."""
    n = len(lg)
    if not len(strips):
        return np.zeros(n, dtype=bool), [""] * n, [""] * n
    li, si = strips.sindex.query(lg.geometry.values, predicate="dwithin", distance=LENGTH_NOISE_FT)
    labels = strips["label"].to_numpy()[si]
    hit = np.zeros(n, dtype=bool)
    hit[li] = True
    return hit, _joined(li, labels, n), _joined(li, strips["kind"].to_numpy()[si], n)


class _Edges(NamedTuple):
    """What :func:`_strip_edges` found, per landing."""

    is_in: np.ndarray
    in_at: list[str]
    unknown: np.ndarray
    unknown_at: list[str]
    err: np.ndarray
    kinds: list[str]
    gap: np.ndarray
    """Distance to the nearest strip measured at its source, ft (NaN where none was)."""
    gap_at: list[str]


def _strip_edges(lg: gpd.GeoDataFrame, strips: gpd.GeoDataFrame, hit: np.ndarray, *,
                 beyond_ft: float = 0.0, strict: bool = False, flat_ends: bool = False) -> _Edges:
    """The landings not ``hit`` within ``beyond_ft`` plus the drawing error of a strip's curved outline
    (:func:`~geoconstraints.geometry.buffers.arc_error_ft` of its width), measured to the strip's
    source (``source_geometry``; ``label`` names the strip: :func:`_drawn`): (within ``beyond_ft``
    of the true strip, their labels; source not known, their labels; the largest error; the kinds of the strips they are within; the distance to the nearest true
    strip and its label). Within is ``<= beyond_ft`` (touching), or ``< beyond_ft`` when ``strict``.
    A strip with ``flat_ends`` (a right-of-way drawn from a centre line) is redrawn finely
    (:func:`~geoconstraints.geometry.buffers.fine_buffer`): beyond an end of its source it is not the
    ground within its width of it."""
    n = len(lg)
    none = np.zeros(n, dtype=bool)
    if not len(strips):
        return _Edges(none, [""] * n, none.copy(), [""] * n, np.zeros(n), [""] * n, np.full(n, np.nan), [""] * n)
    width = strips["width_ft"].to_numpy(dtype="float64")
    reach = bf.arc_error_ft(width) + LENGTH_NOISE_FT
    li, si = strips.sindex.query(lg.geometry.values, predicate="dwithin", distance=beyond_ft + float(reach.max()))
    close = ~hit[li] & (shapely.distance(lg.geometry.values[li], strips.geometry.values[si]) <= beyond_ft + reach[si])
    li, si = li[close], si[close]
    geo = strips["source_geometry"].to_numpy()[si]
    known = np.array([g is not None for g in geo], dtype=bool)
    gap = np.full(len(si), np.nan)
    pts, src, w = lg.geometry.values[li[known]], geo[known], width[si[known]]
    gap[known] = (shapely.distance(pts, [bf.fine_buffer(g, x, cap_style="flat") for g, x in zip(src, w)])
                  if flat_ends else shapely.distance(pts, src) - w)
    inside = known & ((gap < beyond_ft - LENGTH_NOISE_FT) if strict else (gap <= beyond_ft + LENGTH_NOISE_FT))
    unknown = ~known
    labels = strips["label"].to_numpy()[si]
    is_in, maybe = none.copy(), none.copy()
    is_in[li[inside]] = True
    maybe[li[unknown]] = True
    err = np.nan_to_num(-_first_per_group(li, -reach[si], n))  # the largest
    nearest = _first_per_group(li[known], gap[known], n)
    at = known & (gap == nearest[li])
    return _Edges(is_in, _joined(li[inside], labels[inside], n), maybe & ~is_in, _joined(li[unknown], labels[unknown], n),
                  err, _joined(li[inside], strips["kind"].to_numpy()[si][inside], n), nearest,
                  _joined(li[at], strips["source_id"].astype(str).to_numpy()[si][at], n))


@check("HRV-024")
def check_landing_in_buffer(ctx: HarvestContext, rule: Rule) -> gpd.GeoDataFrame:
    """No landing inside (intersecting) any buffer strip of the listed buffer rules.

    A landing inside only the strip a dwelling or parcel of unknown district would have is
    ``review`` (the district may be a listed one). A landing outside a strip's outline by no more
    than the outline's drawing error where it curves is measured to the strip's source: a landing
    100 ft from a dwelling is within its 100-ft strip, whose 64-sided circle passes up to 0.12 ft
    inside that (``review`` where the source is not told: :func:`_drawn`). A landing in the strip of a
    district unknown is told the value the layer gives there, as HRV-003 tells it.
    Extra columns for the ``landings`` table: ``in_buffer`` (None when not known) and ``buffer_kinds``.
    """
    lg = ctx.get("landings")
    if lg is None:
        return _missing_layer(ctx, rule, "landings")
    ids, n = _plan_ids(lg), len(lg)
    bb = ctx.buffers
    rules = set(rule.p("buffer_rules"))
    strips = _drawn(bb.strips, bb.sources, rules)
    pos = _drawn(bb.possible, bb.possible_sources, rules, possible=True)
    hit, inside, kinds = _strip_hits(lg, strips)
    # a landing just outside a strip's curved outline, drawn up to arc_error_ft inside the true line: measured
    # to the strip's source (within its width: inside); a source not told (a build made by hand): review
    at_arc, at_arc_in, edge, edge_at, err, arc_kinds, _, _ = _strip_edges(lg, strips, hit)
    hit |= at_arc
    inside = [t or rule.phrase("inside_arc", strip=a, error=f"{e:,.2f}") for t, a, e in zip(inside, at_arc_in, err)]
    kinds = [k or a for k, a in zip(kinds, arc_kinds)]
    maybe, maybe_in, _ = _strip_hits(lg, pos)
    pos_arc, pos_arc_in, pos_edge, pos_edge_at, *_ = _strip_edges(lg, pos, maybe)
    maybe = (maybe | pos_arc | pos_edge) & ~hit
    maybe_in = [m or a or e for m, a, e in zip(maybe_in, pos_arc_in, pos_edge_at)]
    edge &= ~hit & ~maybe
    dist = (shapely.distance(lg.geometry.values, shapely.union_all(strips.geometry.values)) if len(strips)
            else np.full(n, np.nan))
    # a landing mapped as a point: its pad, up to point_landing_radius_ft around it (touching is within), may
    # reach into a strip (measured to the strips' sources, or a possible strip's); only a point farther passes
    r = _pad_radius(lg, rule)
    pt = (r > 0) & ~hit & ~maybe & ~edge
    pe = _strip_edges(lg, strips, hit, beyond_ft=float(r.max(initial=0.0)))
    pp = _strip_edges(lg, pos, maybe | hit, beyond_ft=float(r.max(initial=0.0)))
    pad = pt & (pe.is_in | pe.unknown | pp.is_in | pp.unknown)
    pad_at = [", ".join(x for x in (a, b, c, d) if x) for a, b, c, d in zip(pe.in_at, pe.unknown_at, pp.in_at,
                                                                          pp.unknown_at)]
    miss = "; ".join(f"{k.replace('_', ' ')} ({v})" for k, v in bb.missing.items())
    status = np.where(hit, "violation", np.where(maybe | edge | pad, "review",
                                                 "not_evaluated" if bb.missing else "pass"))
    none_near = rule.phrase("none_near")
    not_built = [rule.phrase("not_built", missing=miss)] if miss else []
    detail = [rule.phrase("inside", strips=t) if h else "; ".join(
        ([rule.phrase("possible_strip", strips=m)] if m else [])
        + ([rule.phrase("at_edge", strip=a, error=f"{e:,.2f}")] if ok else [])
        + ([rule.phrase("point_pad", into=pa)] if p else [])
        + [rule.phrase("nearest", distance=f"{d:,.2f}") if np.isfinite(d) else none_near] + not_built)
        for h, t, m, ok, a, e, p, pa, d in zip(hit, inside, maybe_in, edge, edge_at, err, pad, pad_at, dist)]
    geom = np.array(lg.geometry.values, dtype=object)
    if hit.any():
        cut = shapely.intersection(geom[hit], shapely.union_all(strips.geometry.values))
        geom[hit] = np.where(shapely.is_empty(cut), geom[hit], cut)
    f = rule.findings(status, subject_layer="landings", subject_id=ids, measured=np.where(hit, 0.0, dist), unit="ft",
                      geometry=geom, crs=ctx.crs, detail=detail)
    in_buffer = hit.astype(object)
    in_buffer[~hit & (maybe | edge | pad | bool(bb.missing))] = None  # not inside a strip built, not known outside
    f["in_buffer"] = in_buffer
    f["buffer_kinds"] = kinds
    return f


def _row_note(rule: Rule, src: pd.Series) -> str:
    """HRV-025's words for the right-of-way ``src`` (a row of :func:`~geoconstraints.geometry.buffers.row_polygons`)
    nearest a landing."""
    if src["source_layer"] == "row":
        return rule.phrase("nearest_row", row=src["source_id"])
    key = "nearest_default_width" if bool(src.get("width_assumed")) else "nearest_centre_line"
    return rule.phrase(key, road=src["source_id"], row_width=src["row_width_ft"])


@check("HRV-025")
def check_landing_row_distance(ctx: HarvestContext, rule: Rule) -> gpd.GeoDataFrame:
    """Each landing at least the minimum distance (edge to edge) from any public right-of-way.

    A right-of-way drawn from a road centre line lies up to the drawing error of its arcs inside
    the true edge where the road bends (0.03 ft for a 50-ft right-of-way): a landing that close to
    the limit is measured to the right-of-way drawn exactly from the centre line (:func:`_row_edges`).
    Extra column for the ``landings`` table: ``row_distance_ft``.
    """
    lg = ctx.get("landings")
    if lg is None:
        return _missing_layer(ctx, rule, "landings")
    ids = _plan_ids(lg)
    limit = rule.t("min_distance_ft")
    rows = bf.row_polygons(ctx.get("roads"), ctx.get("row"), default_row_width_ft=rule.t("default_row_width_ft"))
    if not len(rows):
        return rule.findings("not_evaluated", subject_layer="landings", subject_id=ids, threshold=limit, unit="ft",
                             geometry=lg.geometry.values, crs=ctx.crs, detail=rule.phrase("no_roads_or_row"))
    dist, near = _nearest_row(rule, lg.geometry.values, rows)
    dist, near = _row_edges(rule, lg, rows, dist, near, limit)
    # a road without row_width_ft measured again as wide as max_assumed_row_width_ft: a pass must hold
    # whatever the unknown width is, up to that
    wide = bf.row_polygons(ctx.get("roads"), ctx.get("row"), default_row_width_ft=rule.t("max_assumed_row_width_ft"))
    dist_wide, near_wide = _nearest_row(rule, lg.geometry.values, wide)
    dist_wide, _ = _row_edges(rule, lg, wide, dist_wide, near_wide, limit)
    # without the roads layer only the mapped rights-of-way are known: a landing far from them may be
    # near a public road that has none
    unsure = ctx.get("roads") is None
    # a landing mapped as a point: its pad, up to point_landing_radius_ft around it, may reach nearer; a pass
    # from a point holds only that much beyond the limit (at the wider width where the width is not given)
    r = _pad_radius(lg, rule)
    dist_pt, _ = _row_edges(rule, lg, wide, dist_wide, near_wide, limit + float(r.max(initial=0.0)))
    short = (r > 0) & (dist >= limit - LENGTH_NOISE_FT) & (dist_pt < limit + r - LENGTH_NOISE_FT)
    narrow = (dist_wide < limit - LENGTH_NOISE_FT) & (dist >= limit - LENGTH_NOISE_FT)
    status = np.where(dist < limit - LENGTH_NOISE_FT, "violation", "not_evaluated" if unsure else
                      np.where(narrow | short, "review", "pass"))
    width, point = rule.phrase("width_unknown"), rule.phrase("point_pad")
    near = np.array(["; ".join([t for t, ok in ((width, w and not unsure), (point, p)) if ok] + [str(t)])
                     for t, w, p in zip(near, narrow, short)], dtype=object)
    if unsure:
        near = np.array([f"{t}; {rule.phrase('no_roads_layer')}" for t in near], dtype=object)
    f = rule.findings(status, subject_layer="landings", subject_id=ids,
                      measured=dist, threshold=limit, unit="ft", geometry=lg.geometry.values, crs=ctx.crs,
                      detail=near)
    f["row_distance_ft"] = dist
    return f


def _row_edges(rule: Rule, lg: gpd.GeoDataFrame, rows: gpd.GeoDataFrame, dist: np.ndarray, near: np.ndarray,
               limit: float) -> tuple[np.ndarray, np.ndarray]:
    """``dist`` (to the drawn rights-of-way ``rows``) of the landings not nearer than ``limit`` but within
    the drawing error of it, measured again to the right-of-way drawn exactly from the road centre
    line (:func:`_strip_edges`: a right-of-way drawn from a centre line lies up to
    :func:`~geoconstraints.geometry.buffers.arc_error_ft` of half its width inside the true edge
    where the road bends), and ``near`` saying so where that is nearer."""
    cl = rows[(rows["source_layer"] == "roads").to_numpy()]
    strips = gpd.GeoDataFrame({"kind": "road", "source_id": cl["source_id"].to_numpy(),
                               "label": ("roads " + cl["source_id"]).to_numpy(),
                               "source_geometry": cl["source_geometry"].to_numpy(),
                               "width_ft": cl["row_width_ft"].to_numpy(dtype="float64") / 2.0},
                              geometry=cl.geometry.values, crs=rows.crs)
    e = _strip_edges(lg, strips, ~(dist >= limit - LENGTH_NOISE_FT), beyond_ft=limit, strict=True, flat_ends=True)
    nearer = np.isfinite(e.gap) & (e.gap < dist - LENGTH_NOISE_FT)
    near = np.array([f"{t}; {rule.phrase('exact_row', road=a, error=f'{x:,.2f}', drawn=f'{d:,.2f}')}" if ok else t
                     for t, a, x, d, ok in zip(near, e.gap_at, e.err, dist, nearer)], dtype=object)
    return np.where(nearer, e.gap, dist), near


def _nearest_row(rule: Rule, geoms: np.ndarray, rows: gpd.GeoDataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Distance (ft) from each geometry to the nearest right-of-way of ``rows`` and a note naming it (the
    words of ``rule``'s phrases)."""
    (li, ri), d = rows.sindex.nearest(geoms, return_distance=True, return_all=False)
    dist = np.full(len(geoms), np.nan)
    dist[li] = d
    near = np.empty(len(geoms), dtype=object)
    near[li] = [_row_note(rule, rows.iloc[r]) for r in ri]
    return dist, near


def _public_roads(ctx: HarvestContext, near: Any = None, margin_ft: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Road centre lines and ROW polygons (what a haul road must reach) and their ids
    (``roads R1`` / ``row W1``); with ``near``, only those within ``margin_ft`` of it, clipped
    to its bounding box grown by ``margin_ft``."""
    geoms, ids = [], []
    # the bounding box grown by the margin, built from its corners (buffering the box of a vertical or
    # horizontal line, a polygon of no width, gives nothing)
    clip = None
    if near is not None:
        x0, y0, x1, y1 = shapely.total_bounds(near)
        clip = shapely.box(x0 - margin_ft, y0 - margin_ft, x1 + margin_ft, y1 + margin_ft)
    for role in ("roads", "row"):
        g = ctx.get(role)
        if g is None:
            continue
        if near is not None:
            g = g.iloc[np.unique(g.sindex.query(near, predicate="dwithin", distance=margin_ft)[1])]
        geoms.append(np.asarray(g.geometry.values if clip is None else shapely.intersection(g.geometry.values, clip),
                                dtype=object))
        ids.append(f"{role} " + g["feature_id"].astype(str).to_numpy().astype(object))
    if not geoms:
        return np.array([], dtype=object), np.array([], dtype=object)
    return np.concatenate(geoms), np.concatenate(ids)


@check("HRV-026")
def check_access_points(ctx: HarvestContext, rule: Rule) -> gpd.GeoDataFrame:
    """Count the places where haul roads meet public roads (info; review above the limit).

    Only the public roads within the snap tolerance of a haul road can make an access point,
    so the roads layer (a county streets file, thousands of lines) is cut to the haul roads'
    neighbourhood before its buffer is drawn.
    """
    hr = ctx.get("haul_roads")
    if hr is None:
        return _missing_layer(ctx, rule, "haul_roads")
    if ctx.get("roads") is None and ctx.get("row") is None:
        return _missing_layer(ctx, rule, "haul_roads", rule.phrase("no_roads"))
    tol = rule.t("snap_tolerance_ft")
    pub, _ = _public_roads(ctx, hr.geometry.values, 2 * tol)
    zone = shapely.buffer(shapely.union_all(pub), tol + LENGTH_NOISE_FT) if len(pub) else Polygon()
    parts = shapely.get_parts(shapely.intersection(hr.geometry.values, zone))
    parts = parts[~shapely.is_empty(parts)]
    clusters = shapely.get_parts(shapely.union_all(shapely.buffer(parts, tol))) if len(parts) else np.array([])
    points = shapely.point_on_surface(clusters) if len(clusters) else np.array([], dtype=object)
    count, limit = len(points), rule.t("max_access_points_count")
    touching = hr.loc[shapely.intersects(hr.geometry.values, zone), "feature_id"].astype(str)
    detail = rule.phrase("meet", haul_roads=id_list(touching)) if count else rule.phrase("none_meet")
    return rule.findings("review" if count > limit else "info", subject_layer="haul_roads", subject_id="all",
                         measured=count, threshold=limit, unit="count",
                         geometry=MultiPoint(list(points)) if count else None, crs=ctx.crs, detail=detail)


def _network(hr: gpd.GeoDataFrame, pub: np.ndarray, pub_ids: np.ndarray,
             tol: float) -> tuple[np.ndarray, np.ndarray, pd.Series, pd.Series, shapely.STRtree]:
    """Connected haul-road networks (gaps up to ``tol``) of the roads' parts: component of each
    part, which components reach a public road, the public roads each reaches, the roads of each
    component and the parts' tree (query it for the parts a landing meets).

    A multi-part road's parts are apart: a gap between them is no road, so a part a landing meets
    reaches a public road only through parts and roads within ``tol`` of each other (a road of two
    parts is named ``HR7 (part 1 of 2)``).

    Examples
    --------
    >>> hr = gpd.GeoDataFrame({"feature_id": ["H"]}, geometry=[shapely.MultiLineString([[(0, 0), (10, 0)],
    ...                                                                                  [(500, 0), (600, 0)]])])
    >>> comp, reaches, roads, members, _ = _network(hr, np.array([shapely.Point(600, 0)]), np.array(["roads R"]), 5.0)
    >>> comp.tolist(), reaches.tolist(), members.tolist()
    ([0, 1], [False, True], ['H (part 1 of 2)', 'H (part 2 of 2)'])
    """
    parts, owner = shapely.get_parts(hr.geometry.values, return_index=True)
    keep = ~shapely.is_empty(parts)
    parts, owner = parts[keep], owner[keep]
    ids = _plan_ids(hr)[owner]
    count = np.bincount(owner, minlength=len(hr))[owner]
    nth = pd.Series(owner).groupby(owner).cumcount().to_numpy() + 1
    labels = np.array([f"{i} (part {k} of {c})" if c > 1 else i for i, k, c in zip(ids, nth, count)], dtype=object)
    tree = shapely.STRtree(parts)
    a, b = tree.query(parts, predicate="dwithin", distance=tol + LENGTH_NOISE_FT)
    comp = _components(len(parts), a, b)
    hi, pi = shapely.STRtree(pub).query(parts, predicate="dwithin", distance=tol + LENGTH_NOISE_FT)
    reaches = np.zeros(comp.max() + 1 if len(comp) else 0, dtype=bool)
    reaches[comp[hi]] = True
    comp_roads = (pd.DataFrame({"c": comp[hi], "p": pub_ids[pi]}).groupby("c")["p"]
                  .agg(lambda s: ", ".join(sorted(set(s)))))
    members = pd.Series(labels).groupby(comp).agg(lambda s: ", ".join(s))
    return comp, reaches, comp_roads, members, tree


@check("HRV-027")
def check_landing_connected(ctx: HarvestContext, rule: Rule) -> gpd.GeoDataFrame:
    """Each landing is connected by haul roads (touching within the snap tolerance) to a public road.

    Extra columns for the ``landings`` table: ``connected`` and ``via``.
    """
    lg = ctx.get("landings")
    if lg is None:
        return _missing_layer(ctx, rule, "landings")
    ids, n = _plan_ids(lg), len(lg)
    hr = ctx.get("haul_roads")
    pub, pub_ids = _public_roads(ctx)
    if hr is None or not len(pub):
        return rule.findings("not_evaluated", subject_layer="landings", subject_id=ids, geometry=lg.geometry.values,
                             crs=ctx.crs, detail=_absent(ctx, rule, "haul_roads") if hr is None else _absent(ctx, rule, "roads", "row"))
    tol = rule.t("snap_tolerance_ft")
    comp, reaches, comp_roads, members, parts = _network(hr, pub, pub_ids, tol)
    li, hj = parts.query(lg.geometry.values, predicate="dwithin", distance=tol + LENGTH_NOISE_FT)
    status, detail, via = [], [], []
    for i in range(n):  # the plan's landings
        cs = np.unique(comp[hj[li == i]])
        ok = [c for c in cs if reaches[c]]
        v = rule.phrase("via", haul_roads=members[ok[0]], roads=comp_roads[ok[0]]) if ok else ""
        status.append("pass" if ok else "violation")
        via.append(v)
        detail.append(v if ok else rule.phrase("no_haul_road") if not len(cs) else
                      rule.phrase("not_reaching", haul_roads="; ".join(members[c] for c in cs)))
    f = rule.findings(status, subject_layer="landings", subject_id=ids, geometry=lg.geometry.values, crs=ctx.crs,
                      detail=detail)
    f["connected"] = (np.array(status) == "pass").astype(object)
    f["via"] = via
    return f


# ------------------------------------------------------------------------------------------
# HRV-030 water bars, HRV-040 licence checklist


def _bar_groups(rule: Rule, wb: gpd.GeoDataFrame) -> str:
    """The bars grouped by band and spacing, each group's spacing within its band's table range
    or marked as shortened ahead of a steeper stretch, in ``rule``'s words (``group``,
    ``group_shortened``; the range ``table_range`` or ``table_spacing``); the band's label is the
    engine's (:func:`~geoconstraints.geometry.terrain.place_water_bars`)."""
    parts = []
    short = wb["shortened"].astype(bool) if "shortened" in wb.columns else pd.Series(False, index=wb.index)
    keys = ["band", "spacing_ft", "min_spacing_ft", "max_spacing_ft"]
    for (band, sp, lo, hi, sh), k in wb.assign(_s=short).groupby([*keys, "_s"], sort=False).size().items():
        rng = (rule.phrase("table_range", low=fmt_num(lo), high=fmt_num(hi)) if lo != hi else
               rule.phrase("table_spacing", spacing=fmt_num(lo)))
        parts.append(rule.phrase("group_shortened" if sh else "group", count=str(k), spacing=fmt_num(sp),
                                 band=str(band), range=rng))
    return "; ".join(parts)


def _terrain_why(rule: Rule, gap: tr.Stretch) -> str:
    """Why a stretch was not profiled, in ``rule``'s words: the phrase of the reason the terrain engine
    recorded (:attr:`Stretch.why <geoconstraints.geometry.terrain.Stretch>`): ``off_dem`` (off the DEM or
    on nodata), else ``no_relief_stretch`` (a part of the road on cells that all hold ``{height}`` ft).

    Examples
    --------
    >>> from geoconstraints.rulebook.loader import load_rulebook
    >>> rule = load_rulebook("vestal")["HRV-010"]
    >>> _terrain_why(rule, tr.Stretch(0.0, 10.0, 10.0))
    'off the DEM or on nodata cells'
    >>> _terrain_why(rule, tr.Stretch(0.0, 10.0, 10.0, why="no_relief", flat_ft=1234.0))[:39]
    'on DEM cells that all hold 1,234.00 ft '
    """
    if gap.why == "off_dem":
        return rule.phrase("off_dem")
    return rule.phrase("no_relief_stretch", height=f"{gap.flat_ft:,.2f}")


def _not_profiled(rule: Rule, rt: tr.RoadTerrain) -> str:
    """Why road ``rt`` could not be profiled at all, in ``rule``'s words: the phrase of the reason the terrain
    engine recorded (:attr:`RoadTerrain.why <geoconstraints.geometry.terrain.RoadTerrain>`): ``no_dem``, or
    ``no_relief`` (every cell around the road holds ``{height}`` ft on DEM ``{dem}``); a line the engine
    cannot profile (``line_error``, which the loaders refuse before) is said by the error's own message.

    Examples
    --------
    >>> from geoconstraints.rulebook.loader import load_rulebook
    >>> rule = load_rulebook("vestal")["HRV-030"]
    >>> _not_profiled(rule, tr.RoadTerrain("haul_roads", "R", 10.0, error="no DEM given (--dem)", why="no_dem"))
    'no DEM given (--dem)'
    >>> flat = tr.RoadTerrain("haul_roads", "R", 10.0, why="no_relief", flat_ft=0.0, dem_name="a.tif")
    >>> _not_profiled(rule, flat)[:51]
    'every cell of DEM a.tif around the road holds 0.00 '
    """
    if rt.why == "no_dem":
        return rule.phrase("no_dem")
    if rt.why == "no_relief":
        return rule.phrase("no_relief", dem=rt.dem_name, height=f"{rt.flat_ft:,.2f}")
    return rt.error  # line_error: an error's message, as the run would raise it


def _water_bar_row(rows: FindingRows, rt: tr.RoadTerrain, geom: Any, rule: Rule) -> None:
    """HRV-030's finding of one haul road, in the rule's words: the bars placed (``bars``, :func:`_bar_groups`)
    or none (``no_bars`` over the steepest net grade, ``steepest`` or ``no_stretch``), the stretches not
    profiled (``not_profiled``, :func:`_terrain_why`), a pass (``no_bar_needed``), made ``not_evaluated`` on a
    coarse DEM (:func:`coarse_pass_detail`), and bars from a coarse DEM (:func:`dem_cell_note`); a road not
    profiled at all: :func:`_not_profiled`."""
    at = {"subject_layer": "haul_roads", "subject_id": rt.feature_id}
    if rt.why or rt.error:
        rows.add("not_evaluated", **at, geometry=geom, detail=_not_profiled(rule, rt))
        return
    min_g = rule.t("min_grade_pct")
    wb = rt.water_bars if rt.water_bars is not None else gpd.GeoDataFrame()
    count = len(wb)
    steep = rt.steepest_net_grade_pct
    grade_txt = (rule.phrase("steepest", grade=f"{steep:.1f}") if np.isfinite(steep)
                 else rule.phrase("no_stretch"))
    detail = (rule.phrase("bars", count=str(count), groups=_bar_groups(rule, wb)) if count
              else rule.phrase("no_bars", grade=grade_txt))
    gap = sum(s.length_ft for s in rt.gaps)
    if gap > 0:
        status = "not_evaluated"
        whys = sorted({_terrain_why(rule, s) for s in rt.gaps})
        detail += "; " + rule.phrase("not_profiled", length=f"{gap:,.0f}", why=rule.phrase("either_or").join(whys))
    elif count == 0 and np.isfinite(steep) and tr.under_min_grade(steep, min_g):  # as the bars are placed
        status, detail = "pass", rule.phrase("no_bar_needed", grade=grade_txt)
        if coarse_dem(rt, rule):  # a grid too coarse to show the shortest spacing's stretch: no promise
            status = "not_evaluated"
            short = fmt_num(min(float(row["min_spacing_ft"]) for row in rule.tables["water_bar_spacing"]))
            detail = coarse_pass_detail(rt, rule, rule.phrase("no_bars", grade=detail), shortest=short)
    else:
        status = "info"
        if coarse_dem(rt, rule):  # bars placed from a coarse grid: a steeper stretch may need more
            detail += f"; {dem_cell_note(rt, rule)}"
    rows.add(status, **at, geometry=MultiPoint(list(wb.geometry.values)) if count else geom, detail=detail,
             measured=count, unit="count")


@check("HRV-030")
def check_water_bars(ctx: HarvestContext, rule: Rule) -> gpd.GeoDataFrame:
    """Water bars placed along each haul road from its DEM profile (derived layer ``water_bars``):
    the band of each stretch from its net grade (rise over run), stable under DEM noise. No bar
    required (``pass``) only on a DEM whose cells are at most ``max_dem_cell_ft``; on a coarser one it
    is ``not_evaluated``, and bars placed from it say the cell size."""
    hr = ctx.get("haul_roads")
    if hr is None:
        return _missing_layer(ctx, rule, "haul_roads")
    rows = FindingRows(rule, ctx.crs)
    for fid, geom in zip(hr["feature_id"].astype(str), hr.geometry.values):  # the plan's haul roads
        _water_bar_row(rows, ctx.terrain[("haul_roads", fid)], geom, rule)
    return rows.frame()


@check("HRV-040")
def check_licence_conditions(ctx: HarvestContext, rule: Rule) -> gpd.GeoDataFrame:
    """The licence conditions geometry cannot check, as an ``info`` checklist."""
    conditions = list(rule.p("conditions"))
    return rule.findings("info", subject_layer="licence", subject_id=[c["key"] for c in conditions], crs=ctx.crs,
                         detail=[rule.phrase("condition", text=c["text"], citation=c.get("citation", rule.citation))
                                 for c in conditions])
