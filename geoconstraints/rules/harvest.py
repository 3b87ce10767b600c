"""Timber-harvest checks: the HRV rules (numbers, citations and texts from the rulebook).

Each rule is one function decorated with :func:`~geoconstraints.rulebook.registry.check`
returning one findings frame. :func:`geoconstraints.commands.check_harvest` builds the
:class:`HarvestContext` (the layers, and the buffer strips, road terrain and contours it
derives with :mod:`geoconstraints.geometry` from the numbers the helpers below read from the
rulebook) and runs them.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from shapely.geometry import MultiPoint, Polygon

from geoconstraints.errors import InputError
from geoconstraints.geometry import buffers as bf
from geoconstraints.geometry import terrain as tr
from geoconstraints.io.layers import Layers
from geoconstraints.io.validate import polygonal_parts
from geoconstraints.rulebook.findings import concat_findings
from geoconstraints.rulebook.model import FindingRows, Rule, Rulebook
from geoconstraints.rulebook.registry import check
from geoconstraints.rulebook.render import fmt_num
from geoconstraints.text import id_list, truthy
from geoconstraints.units import sqft_to_acres

log = logging.getLogger(__name__)

ROAD_LAYERS: tuple[str, ...] = ("haul_roads", "skid_trails")
"""Line layers whose grades are measured (HRV-010)."""

NO_HARVEST_AREA = (
    "layer harvest_area is missing or empty: the harvest command needs the plan's harvest areas. "
    "Add a polygon layer named harvest_area to the GeoPackage or pass --harvest-area PATH[:LAYER]"
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


# ------------------------------------------------------------------------------------------
# the numbers the engines need, from the rulebook


def needs(rulebook: Rulebook, what: str) -> bool:
    """True when a rule that reads the derived ``what`` (a key of :data:`USERS`) is in the rulebook."""
    return any(rid in rulebook for rid in USERS[what])


def buffer_settings(rulebook: Rulebook) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """The settings of :func:`geoconstraints.geometry.buffers.build_buffers` per buffer kind, and
    why each kind whose rule the rulebook lacks is not built."""
    settings: dict[str, dict[str, Any]] = {}
    absent: dict[str, str] = {}
    for kind, rid in BUFFER_RULES.items():
        r = rulebook.rules.get(rid)
        if r is None:
            absent[kind] = f"rule {rid} is not in the rulebook"
            continue
        s: dict[str, Any] = {"width_ft": r.t("buffer_width_ft"), "clip_margin_ft": r.t("clip_margin_ft"),
                             "rule_id": r.id}
        if kind == "stream":
            s["include_intermittent"] = truthy(r.s("include_intermittent")) is True
        elif kind == "property_line":
            s.update(districts=list(r.p("districts")), reading=str(r.s("property_line_reading")),
                     touch_tolerance_ft=r.t("touch_tolerance_ft"))
        elif kind == "dwelling":
            s["districts"] = list(r.p("districts"))
        settings[kind] = s
    return settings, absent


def grade_settings(rulebook: Rulebook) -> dict[str, Any] | None:
    """The grade limits of :func:`geoconstraints.geometry.terrain.grade_runs` (HRV-010), or None."""
    r = rulebook.rules.get("HRV-010")
    if r is None:
        return None
    return {"max_grade_pct": r.t("max_grade_pct"), "max_run_ft": r.t("max_run_ft"),
            "smoothing_window_ft": r.t("smoothing_window_ft"), "run_length": str(r.s("run_length"))}


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
        Buffer strips of HRV-020..022 and why a kind is missing.
    terrain : dict
        :class:`~geoconstraints.geometry.terrain.RoadTerrain` per ``(layer, feature_id)`` of the
        haul roads and skid trails (empty when no rule reads it).
    contours : GeoDataFrame
        Contour lines around the plan at the HRV-002 interval (empty without DEM).
    """

    layers: Layers
    buffers: bf.BufferBuild
    terrain: dict[tuple[str, str], tr.RoadTerrain]
    contours: gpd.GeoDataFrame

    @property
    def crs(self) -> Any:
        """The working CRS."""
        return self.layers.crs

    def get(self, role: str) -> gpd.GeoDataFrame | None:
        """The layer of ``role`` or None when not given or empty."""
        return self.layers.get_layer(role)

    @property
    def harvest_area(self) -> gpd.GeoDataFrame:
        """The harvest areas (always present: :func:`check_harvest` refuses a plan without)."""
        g = self.get("harvest_area")
        if g is None:
            raise InputError(NO_HARVEST_AREA)
        return g


# ------------------------------------------------------------------------------------------
# helpers for checks


def _missing_layer(ctx: HarvestContext, rule: Rule, layer: str, why: str = "") -> gpd.GeoDataFrame:
    return rule.findings("not_evaluated", subject_layer=layer, subject_id="", crs=ctx.crs,
                         detail=why or f"no {layer} layer given")


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


# ------------------------------------------------------------------------------------------
# HRV-001 commercial threshold


def _volume_groups(ha: gpd.GeoDataFrame, rule: Rule) -> pd.DataFrame:
    """Per harvest area: its group's summed cords (cu ft as cords) and board feet, and unknowns."""
    n = len(ha)

    def num(name: str) -> pd.Series:
        v = pd.to_numeric(ha[name], errors="coerce") if name in ha.columns else np.nan
        return pd.Series(v, index=ha.index, dtype="float64").reset_index(drop=True)

    cords_eq = num("cords").fillna(num("cubic_feet") / rule.t("standard_cord_cuft"))
    bfeet = num("board_feet")
    # contiguous groups of the same owner (connected components of the touch graph)
    a, b = ha.sindex.query(ha.geometry.values, predicate="intersects")
    owner = ha["owner"].astype(str).to_numpy() if "owner" in ha.columns else np.array([""] * n)
    same = owner[a] == owner[b]
    graph = coo_matrix((np.ones(int(same.sum())), (a[same], b[same])), shape=(n, n))
    _, comp = connected_components(graph, directed=False)
    vols = pd.DataFrame({"c": cords_eq, "b": bfeet, "nc": cords_eq.isna(), "nb": bfeet.isna()})
    by = vols.groupby(comp)
    grp = pd.DataFrame({"c": by["c"].sum(min_count=1), "b": by["b"].sum(min_count=1), "nc": by["nc"].sum(),
                        "nb": by["nb"].sum()})
    g = grp.loc[comp].reset_index(drop=True)
    ids = pd.Series(_plan_ids(ha))
    g["members"] = ids.groupby(comp).agg(lambda x: ", ".join(x)).loc[comp].to_numpy()
    g["no_volume"] = (cords_eq.isna() & bfeet.isna()).to_numpy()
    return g


def _volume_detail(rule: Rule, ha: gpd.GeoDataFrame, g: pd.DataFrame, status: np.ndarray) -> np.ndarray:
    lim_c, lim_cuft, lim_bf = (rule.t(k) for k in ("volume_limit_cords", "volume_limit_cuft", "volume_limit_bf"))
    cord_cuft = rule.t("standard_cord_cuft")
    have = [f for f in ("cords", "cubic_feet", "board_feet") if f in ha.columns]
    no_volume = set(_plan_ids(ha)[g["no_volume"].to_numpy()])
    own = "same owner" if "owner" in ha.columns else "no owner field, all contiguous areas taken as one ownership"
    exempt = "; ".join(f"{str(e.get('text', e.get('key', ''))).rstrip('.')} ({e.get('citation', rule.citation)})"
                       for e in rule.p("exemptions", []))
    details = []
    for i, (s_c, s_b, members) in enumerate(zip(g["c"], g["b"], g["members"])):  # a few harvest areas
        parts = []
        if not np.isnan(s_c):
            parts.append(f"{s_c:,.6g} cords = {s_c * cord_cuft:,.0f} cu ft (limits {lim_c:,.0f} cords, "
                         f"{lim_cuft:,.0f} cu ft)")
        if not np.isnan(s_b):
            parts.append(f"{s_b:,.0f} board feet (limit {lim_bf:,.0f})")
        txt = "; ".join(parts) if parts else "fields cords, cubic_feet, board_feet " + ("empty" if have else "absent")
        mem = members.split(", ")
        if len(mem) > 1:
            txt += f"; summed over contiguous harvest areas {members} ({own})"
        if status[i] == "not_evaluated" and parts:
            lack = [m for m in mem if m in no_volume]
            txt += (f"; volume not given for {id_list(lack)}" if lack
                    else "; cords / cu ft and board feet given for different areas, no common sum")
        if status[i] == "review" and exempt:
            txt += f"; exemptions not assessed: {exempt}"
        details.append(txt)
    return np.array(details, dtype=object)


@check("HRV-001")
def check_commercial_volume(ctx: HarvestContext, rule: Rule) -> gpd.GeoDataFrame:
    """Licence required when the harvest volume exceeds any of the commercial limits.

    Volumes are summed over contiguous harvest areas of the same owner (all contiguous areas
    when there is no ``owner`` field). ``cords`` and ``cubic_feet`` are one measure (a cubic
    foot is 1 / ``standard_cord_cuft`` cord; an area's ``cords`` wins when it has both) and are
    summed together; ``board_feet`` is summed apart. A group is ``review`` when a known part of
    its volume already exceeds a limit, ``pass`` only when every member's volume is known in
    one measure, else ``not_evaluated``.
    """
    ha = ctx.harvest_area
    g = _volume_groups(ha, rule)
    s_c, s_b = g["c"].to_numpy(), g["b"].to_numpy()
    lim_c, lim_bf = rule.t("volume_limit_cords"), rule.t("volume_limit_bf")
    over_c = (np.nan_to_num(s_c) > lim_c) | (np.nan_to_num(s_c) * rule.t("standard_cord_cuft") > rule.t("volume_limit_cuft"))
    over_b = np.nan_to_num(s_b) > lim_bf
    complete = (g["nc"].to_numpy() == 0) | (g["nb"].to_numpy() == 0)
    status = np.where(over_c | over_b, "review", np.where(complete, "pass", "not_evaluated"))
    use_bf = np.isnan(s_c) | (~over_c & over_b)
    return rule.findings(status, subject_layer="harvest_area", subject_id=_plan_ids(ha),
                         measured=np.where(use_bf, s_b, s_c), threshold=np.where(use_bf, lim_bf, lim_c),
                         unit=np.where(use_bf, "bf", "cords"), geometry=ha.geometry.values, crs=ctx.crs,
                         detail=_volume_detail(rule, ha, g, status))


# ------------------------------------------------------------------------------------------
# HRV-002 site plan contents + contours


def _element(ctx: HarvestContext, rule: Rule, el: dict[str, Any]) -> tuple[str, str]:
    """(status, detail) of one site-plan element."""
    key, text, roles = el["key"], el["text"], list(el.get("roles") or [])
    zsrc = bf.zoning_source(ctx.get("zoning"), ctx.get("parcels"))
    present = [r for r in roles if (ctx.layers.dem is not None if r == "dem" else zsrc is not None
                                    if r == "zoning" else ctx.get(r) is not None)]
    missing = [r for r in roles if r not in present]
    status = "info" if not missing else "not_evaluated"
    detail = f"{text} Layers: {', '.join(present) or 'none'}" + (f"; missing: {', '.join(missing)}" if missing else "")
    if key == "b" and not missing:
        c = ctx.contours
        detail = (f"{text} {len(c)} contour levels at {fmt_num(rule.t('contour_interval_ft'))} ft derived from "
                  f"the DEM (layer contours)")
        if not len(c):
            status, detail = "not_evaluated", f"{text} The DEM does not cover the plan: no contours"
    if key == "j":
        bb = ctx.buffers
        built = sorted({k for k in bf.BUFFER_KINDS if k not in bb.missing})
        status = "info" if not bb.missing else "not_evaluated"
        detail = (f"{text} Buffer strips built: {', '.join(built) or 'none'} (layer buffer_strips, "
                  f"{len(bb.strips)} strips)")
        if bb.missing:
            detail += "; not built: " + "; ".join(f"{k} ({v})" for k, v in bb.missing.items())
    return status, detail


@check("HRV-002")
def check_site_plan(ctx: HarvestContext, rule: Rule) -> gpd.GeoDataFrame:
    """Checklist of site-plan elements a..k; contours at the rulebook interval from the DEM."""
    els = list(rule.p("elements"))
    found = [_element(ctx, rule, el) for el in els]
    status = [s for s, _ in found] + ["info"]
    detail = [d for _, d in found] + [(f"print the site plan at 1 in = {fmt_num(rule.t('min_scale_ft_per_in'))} ft "
                                      f"or larger")]
    return rule.findings(status, subject_layer="site_plan", subject_id=[el["key"] for el in els] + ["scale"],
                         crs=ctx.crs, detail=detail)


# ------------------------------------------------------------------------------------------
# HRV-003 RA-1/RA-2/RC property within the distance


def _zoning_frame(ctx: HarvestContext, rule: Rule) -> tuple[gpd.GeoDataFrame | None, str | None]:
    """Zoning polygons (or parcels) with a normalised district ``_d``, and where they come from."""
    zoning, parcels = ctx.get("zoning"), ctx.get("parcels")
    src = bf.zoning_source(zoning, parcels)
    if src == "zoning layer" and zoning is not None:
        return zoning.assign(_d=bf.norm_district(zoning["district"])), src
    if src is not None and parcels is not None:
        return parcels.assign(_d=bf.norm_district(parcels["zoning"])), src
    return None, src


def _zoning_layer(ctx: HarvestContext, rule: Rule, g: gpd.GeoDataFrame, layer: str, zsrc: gpd.GeoDataFrame,
                  src: str) -> gpd.GeoDataFrame:
    want = [str(d).upper() for d in rule.p("districts")]
    dtext, dist_ft = ", ".join(want), rule.t("distance_ft")
    ids, n = _plan_ids(g), len(g)
    ra = zsrc.loc[zsrc["_d"].isin(want).to_numpy()]
    unk = zsrc.loc[zsrc["_d"].isna().to_numpy()]
    dmin, nearest, names = np.full(n, np.nan), np.full(n, np.nan), [""] * n
    if len(ra):
        gi, zi = ra.sindex.query(g.geometry.values, predicate="dwithin", distance=dist_ft)
        dmin = _first_per_group(gi, shapely.distance(g.geometry.values[gi], ra.geometry.values[zi]), n)
        names = _joined(gi, ra["_d"].to_numpy()[zi], n)
        near_idx, near_d = ra.sindex.nearest(g.geometry.values, return_distance=True, return_all=False)
        nearest[near_idx[0]] = near_d
    ui, uj = (unk.sindex.query(g.geometry.values, predicate="dwithin", distance=dist_ft) if len(unk)
              else (np.array([], int),) * 2)
    unknown = _joined(ui, unk["feature_id"].astype(str).to_numpy()[uj], n)
    within = np.isfinite(dmin)
    measured = np.where(within, dmin, nearest)
    status = np.where(within, "review", np.where([bool(u) for u in unknown], "not_evaluated", "pass"))
    where = "zoning polygons" if src == "zoning layer" else "parcels"
    detail = []
    for i in range(n):  # the plan's features
        if within[i]:
            txt = f"{measured[i]:,.0f} ft to {names[i]} property ({src})"
        elif np.isfinite(measured[i]):
            txt = f"nearest {dtext} property {measured[i]:,.0f} ft away ({src})"
        else:
            txt = f"the {src} has no {dtext} district"
        if not within[i] and unknown[i]:
            txt += f"; district unknown for {where} {unknown[i]} within {fmt_num(dist_ft)} ft"
        detail.append(txt)
    return rule.findings(status, subject_layer=layer, subject_id=ids, measured=measured, threshold=dist_ft,
                         unit="ft", geometry=g.geometry.values, crs=ctx.crs, districts=dtext, detail=detail)


@check("HRV-003")
def check_zoning_proximity(ctx: HarvestContext, rule: Rule) -> gpd.GeoDataFrame:
    """Town board review for each plan element within the distance of the listed districts.

    ``pass`` only when every district within the distance is known: a zoning polygon or
    parcel without a district there makes the element ``not_evaluated``.
    """
    out = []
    zsrc, src = _zoning_frame(ctx, rule)
    dtext = ", ".join(str(d).upper() for d in rule.p("districts"))
    for layer in rule.p("plan_elements"):
        g = ctx.get(layer)
        if g is None:
            out.append(_missing_layer(ctx, rule, layer))
        elif zsrc is None or src is None:
            out.append(rule.findings("not_evaluated", subject_layer=layer, subject_id=_plan_ids(g),
                                     geometry=g.geometry.values, crs=ctx.crs, districts=dtext,
                                     detail="no zoning layer and no parcels.zoning field"))
        else:
            out.append(_zoning_layer(ctx, rule, g, layer, zsrc, src))
    return concat_findings(out, ctx.crs)


# ------------------------------------------------------------------------------------------
# HRV-010 grade runs


def _road_grades(rows: FindingRows, rt: tr.RoadTerrain, geom: Any, max_run: float, mode: str) -> None:
    at = {"subject_layer": rt.layer, "subject_id": rt.feature_id}
    if rt.error:
        rows.add("not_evaluated", **at, geometry=geom, detail=rt.error)
        return
    for run in rt.runs:
        if run.exceeds:
            rows.add("violation", **at, geometry=run.geometry, detail=(
                f"from {run.start_ft:,.0f} to {run.end_ft:,.0f} ft along the line; horizontal {run.length_ft:,.0f} ft, "
                f"slope length {run.slope_length_ft:,.0f} ft; mean grade {run.mean_grade_pct:.1f} %, max "
                f"{run.max_grade_pct:.1f} %"),
                measured=run.length_ft if mode == "horizontal" else run.slope_length_ft, threshold=max_run, unit="ft")
    for gap in rt.gaps:
        rows.add("not_evaluated", **at, geometry=gap.geometry, detail=(
            f"{gap.length_ft:,.0f} ft from {gap.start_ft:,.0f} to {gap.end_ft:,.0f} ft along the line is off the DEM "
            f"or on nodata cells"), measured=gap.length_ft, unit="ft")
    if rt.fully_evaluated and not any(r.exceeds for r in rt.runs):
        longest = max((r.length_ft if mode == "horizontal" else r.slope_length_ft for r in rt.runs), default=0.0)
        rows.add("pass", **at, geometry=geom, detail=(
            f"max grade {rt.max_grade_pct:.1f} %, {len(rt.runs)} steep stretch(es), longest {longest:,.0f} ft; "
            f"{rt.length_ft:,.0f} ft evaluated"), measured=longest, threshold=max_run, unit="ft")


@check("HRV-010")
def check_grade_runs(ctx: HarvestContext, rule: Rule) -> gpd.GeoDataFrame:
    """Each run steeper than the grade limit for longer than the length limit is a violation.

    Off-DEM or nodata stretches are ``not_evaluated`` findings with their geometry; a road is
    ``pass`` only when the DEM covered all of it and no run exceeds.
    """
    out = []
    rows = FindingRows(rule, ctx.crs)
    max_run, mode = rule.t("max_run_ft"), str(rule.s("run_length"))
    for layer in ROAD_LAYERS:
        g = ctx.get(layer)
        if g is None:
            out.append(_missing_layer(ctx, rule, layer))
            continue
        for fid, geom in zip(g["feature_id"].astype(str), g.geometry.values):  # the plan's roads
            _road_grades(rows, ctx.terrain[(layer, fid)], geom, max_run, mode)
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


def _slope_detail(layer: str, covered: bool, stated: bool, total: float, parts: list[str],
                  present: dict[str, Any], absent: list[str], wanted: list[str]) -> tuple[str, str]:
    if not covered:
        return "pass", ("not a constructed skid trail" if stated
                        else "constructed not stated, read as random individual tree skidding (allowed)")
    if total > 0:
        txt = "; ".join(parts)
        if layer == "haul_roads" and any("critical slopes" in s for s in parts):
            txt += ("; one haul road may cross a critical slope only to connect a noncritical area to a town road "
                    "when no other access exists, on town board conditions (record a waiver)")
        return "violation", txt
    if not present:
        return "not_evaluated", f"no {' or '.join(wanted)} layer"
    if absent:
        return "not_evaluated", f"not on {', '.join(present)}; {', '.join(absent)} layer missing"
    return "pass", f"0 ft on {', '.join(present)}"


def _slopes_layer(ctx: HarvestContext, rule: Rule, g: gpd.GeoDataFrame, layer: str,
                  present: dict[str, gpd.GeoDataFrame], absent: list[str], wanted: list[str]) -> gpd.GeoDataFrame:
    ids, n, geoms = _plan_ids(g), len(g), g.geometry.values
    stated, covered = _constructed(g, layer, rule)
    parts_txt: list[list[str]] = [[] for _ in range(n)]
    for role, poly in present.items():
        ln = shapely.length(shapely.intersection(geoms, shapely.union_all(poly.geometry.values)))
        for j in np.flatnonzero(ln > 0):
            parts_txt[j].append(f"{ln[j]:,.0f} ft on {role.replace('_', ' ')} ({id_list(_hit_ids(poly, geoms[j]))})")
    on_geom = np.array([None] * n, dtype=object)
    total = np.zeros(n)
    if present:
        designated = shapely.union_all(np.concatenate([p.geometry.values for p in present.values()]))
        on_geom = shapely.intersection(geoms, designated)
        total = shapely.length(on_geom)
    found = [_slope_detail(layer, covered[i], stated[i], total[i], parts_txt[i], present, absent, wanted)
             for i in range(n)]
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
    absent = [r for r in wanted if r not in present]
    out = []
    for layer in ROAD_LAYERS:
        g = ctx.get(layer)
        out.append(_missing_layer(ctx, rule, layer) if g is None
                   else _slopes_layer(ctx, rule, g, layer, present, absent, wanted))
    return concat_findings(out, ctx.crs)


# ------------------------------------------------------------------------------------------
# HRV-012 skidding in channels, HRV-013 crossings


def _hit_ids(poly: gpd.GeoDataFrame, geom: Any) -> np.ndarray:
    return poly["feature_id"].astype(str).to_numpy()[poly.sindex.query(geom, predicate="intersects")]


def _select_kinds(streams: gpd.GeoDataFrame, kinds: list[str]) -> gpd.GeoDataFrame:
    k = streams["kind"] if "kind" in streams.columns else pd.Series(None, index=streams.index, dtype=object)
    return streams.loc[(k.isna() | k.isin(kinds)).to_numpy()]


def _channel_parts(g: gpd.GeoDataFrame, sel: gpd.GeoDataFrame, width: float) -> tuple[np.ndarray, np.ndarray]:
    """The line parts of each skid trail inside the stream channels, and the trail of each part."""
    sg = sel.geometry.values
    is_poly = np.isin(shapely.get_type_id(sg), (3, 6))
    channel = np.where(is_poly, sg, shapely.buffer(sg, width / 2.0, cap_style="flat"))
    u = shapely.union_all(channel) if len(channel) else Polygon()
    inter = shapely.intersection(g.geometry.values, u)
    multi = shapely.get_type_id(inter) == 5
    inter = np.where(multi, shapely.line_merge(np.where(multi, inter, None)), inter)
    parts, idx = shapely.get_parts(inter, return_index=True)
    line = np.isin(shapely.get_type_id(parts), (1, 2)) & ~shapely.is_empty(parts)
    return parts[line], idx[line]


@check("HRV-012")
def check_skidding_in_channel(ctx: HarvestContext, rule: Rule) -> gpd.GeoDataFrame:
    """A skid trail inside a stream channel for longer than a crossing is skidding in the channel."""
    g = ctx.get("skid_trails")
    if g is None:
        return _missing_layer(ctx, rule, "skid_trails")
    ids, n = _plan_ids(g), len(g)
    streams = ctx.get("streams")
    if streams is None:
        return rule.findings("not_evaluated", subject_layer="skid_trails", subject_id=ids,
                             geometry=g.geometry.values, crs=ctx.crs, detail="no streams layer")
    width, max_len = rule.t("channel_width_ft"), rule.t("max_crossing_length_ft")
    parts, idx = _channel_parts(g, _select_kinds(streams, list(rule.p("stream_kinds"))), width)
    ln = shapely.length(parts)
    bad = ln > max_len
    bad_len = _first_per_group(idx[bad], ln[bad], n, "sum")
    inside = _first_per_group(idx, ln, n, "sum")
    crossings = np.bincount(idx[~bad], minlength=n)
    status = np.where(np.nan_to_num(bad_len) > 0, "violation", "pass")
    geom = np.array(g.geometry.values, dtype=object)
    for i in np.flatnonzero(status == "violation"):
        geom[i] = shapely.union_all(parts[(idx == i) & bad])
    head = f"channel taken as {fmt_num(width)} ft wide along stream lines; "
    detail = [head + (f"{int((idx[bad] == i).sum())} stretch(es) inside the channel longer than {fmt_num(max_len)} ft"
                      if status[i] == "violation" else
                      f"{crossings[i]} crossing(s), {np.nan_to_num(inside[i]):,.0f} ft inside the channel in all")
              for i in range(n)]
    return rule.findings(status, subject_layer="skid_trails", subject_id=ids,
                         measured=np.where(status == "violation", bad_len, np.nan_to_num(inside)), threshold=max_len,
                         unit="ft", geometry=geom, crs=ctx.crs, detail=detail)


def _crossings(g: gpd.GeoDataFrame, sel: gpd.GeoDataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """Crossing points of each line with the streams: (points, line index, station ft, detail),
    ordered by line and station."""
    n = len(g)
    _, si = sel.sindex.query(g.geometry.values, predicate="intersects") if len(sel) else (np.array([], int),) * 2
    # the streams as one network: a crossing where two stream features meet (split at a junction,
    # or two parts of one stream) is one crossing, not one per feature
    net = shapely.union_all(sel.geometry.values[np.unique(si)]) if len(si) else None
    inter = (shapely.intersection(g.geometry.values, net) if net is not None
             else np.array([shapely.Point()] * n, dtype=object))
    parts, road_i = shapely.get_parts(inter, return_index=True)
    keep = ~shapely.is_empty(parts)
    parts, road_i = parts[keep], road_i[keep]
    tid = shapely.get_type_id(parts)
    lines = np.isin(tid, (1, 2))
    pts = np.where(lines, shapely.line_interpolate_point(np.where(lines, parts, None), 0.5, normalized=True), parts)
    station = shapely.line_locate_point(g.geometry.values[road_i], pts) if len(pts) else np.array([])
    # the stream feature(s) at each crossing: the nearest ones (all of them at a joint)
    pi, sj = sel.sindex.nearest(pts, return_all=True) if len(pts) else (np.array([], int),) * 2
    sids = _joined(pi, sel["feature_id"].astype(str).to_numpy()[sj], len(pts))
    kcol = sel["kind"] if "kind" in sel.columns else pd.Series(None, index=sel.index, dtype=object)
    skind = _joined(pi, kcol.fillna("kind unknown").astype(str).to_numpy()[sj], len(pts))
    order = np.lexsort((station, road_i)) if len(pts) else np.array([], int)
    detail = [f"crossing of stream {sids[j]} ({skind[j]}) at {station[j]:,.0f} ft along the line" for j in order]
    return pts[order], road_i[order], station[order], detail


@check("HRV-013")
def check_stream_crossings(ctx: HarvestContext, rule: Rule) -> gpd.GeoDataFrame:
    """Each crossing of a haul road or skid trail with a stream is a ``review`` at the crossing."""
    out = []
    streams = ctx.get("streams")
    kinds = ["perennial", "intermittent"] if truthy(rule.s("include_intermittent")) is True else ["perennial"]
    for layer in ROAD_LAYERS:
        g = ctx.get(layer)
        if g is None:
            out.append(_missing_layer(ctx, rule, layer))
            continue
        ids = _plan_ids(g)
        if streams is None:
            out.append(rule.findings("not_evaluated", subject_layer=layer, subject_id=ids, geometry=g.geometry.values,
                                     crs=ctx.crs, detail="no streams layer"))
            continue
        pts, road_i, station, detail = _crossings(g, _select_kinds(streams, kinds))
        out.append(rule.findings("review", subject_layer=layer, subject_id=ids[road_i], unit="ft", measured=station,
                                 geometry=pts, crs=ctx.crs, detail=detail))
        none = np.setdiff1d(np.arange(len(g)), road_i)
        out.append(rule.findings("pass", subject_layer=layer, subject_id=ids[none], geometry=g.geometry.values[none],
                                 crs=ctx.crs, detail=f"{' or '.join(kinds)} streams and streams of unknown kind checked"))
    return concat_findings(out, ctx.crs)


# ------------------------------------------------------------------------------------------
# HRV-020..023 buffer strips


def _buffer_findings(ctx: HarvestContext, rule: Rule, kind: str, **values: Any) -> gpd.GeoDataFrame:
    ha = ctx.harvest_area
    ids, n = _plan_ids(ha), len(ha)
    bb = ctx.buffers
    label = kind.replace("_", " ")
    if kind in bb.missing:
        return rule.findings("not_evaluated", subject_layer="harvest_area", subject_id=ids,
                             geometry=ha.geometry.values, crs=ctx.crs, detail=f"{label} buffer: {bb.missing[kind]}",
                             **values)
    strips = bb.strips[bb.strips["kind"] == kind]
    inside = polygonal_parts(bf.buffers_inside(ha, strips))
    acres = sqft_to_acres(shapely.area(inside))
    hi, si = (strips.sindex.query(ha.geometry.values, predicate="intersects") if len(strips)
              else (np.array([], int), np.array([], int)))
    srcs = _joined(hi, strips["source_id"].to_numpy()[si], n)
    detail = [f"{label} buffer, {acres[i]:.2f} acres inside the harvest area" + (f" (from {srcs[i]})" if srcs[i] else "")
              + f"; {bb.notes.get(kind, '')}" for i in range(n)]
    # the strip inside the area, else (no strip there) the harvest area itself
    return rule.findings("info", subject_layer="harvest_area", subject_id=ids, measured=acres, unit="acres",
                         geometry=np.where(acres > 0, inside, ha.geometry.values), crs=ctx.crs, detail=detail,
                         **values)


@check("HRV-020")
def check_stream_road_buffers(ctx: HarvestContext, rule: Rule) -> gpd.GeoDataFrame:
    """Buffer strips along streams and public roads: acres inside each harvest area, per kind."""
    return concat_findings([_buffer_findings(ctx, rule, "stream"), _buffer_findings(ctx, rule, "road")], ctx.crs)


@check("HRV-021")
def check_property_line_buffers(ctx: HarvestContext, rule: Rule) -> gpd.GeoDataFrame:
    """Buffer strips along property lines in the listed districts: acres inside each area."""
    return _buffer_findings(ctx, rule, "property_line")


@check("HRV-022")
def check_dwelling_buffers(ctx: HarvestContext, rule: Rule) -> gpd.GeoDataFrame:
    """Buffer strips around dwellings in the listed districts: acres inside each harvest area."""
    return _buffer_findings(ctx, rule, "dwelling")


@check("HRV-023")
def check_buffer_cutting(ctx: HarvestContext, rule: Rule) -> gpd.GeoDataFrame:
    """Buffer acres (all kinds, overlaps once) inside each harvest area, for the stump-diameter rule."""
    ha = ctx.harvest_area
    bb = ctx.buffers
    inside = polygonal_parts(bf.buffers_inside(ha, bb.strips))
    acres = sqft_to_acres(shapely.area(inside))
    miss = "; ".join(f"{k.replace('_', ' ')} buffer not built ({v})" for k, v in bb.missing.items())
    status = np.where(acres > 0, "info", "not_evaluated" if bb.missing else "pass")
    kinds = ", ".join(sorted(set(bb.strips["kind"]))) or "none"
    return rule.findings(status, subject_layer="harvest_area", subject_id=_plan_ids(ha), measured=acres, unit="acres",
                         geometry=np.where(acres > 0, inside, ha.geometry.values), crs=ctx.crs,
                         detail=f"buffer kinds: {kinds}" + (f"; {miss}" if miss else ""))


# ------------------------------------------------------------------------------------------
# HRV-024..027 landings and access


@check("HRV-024")
def check_landing_in_buffer(ctx: HarvestContext, rule: Rule) -> gpd.GeoDataFrame:
    """No landing inside (intersecting) any buffer strip of the listed buffer rules.

    Extra columns for the ``landings`` table: ``in_buffer`` (None when not hit but some strips
    could not be built) and ``buffer_kinds``.
    """
    lg = ctx.get("landings")
    if lg is None:
        return _missing_layer(ctx, rule, "landings")
    ids, n = _plan_ids(lg), len(lg)
    bb = ctx.buffers
    strips = bb.strips[bb.strips["rule_id"].isin(set(rule.p("buffer_rules")))]
    if len(strips):
        li, si = strips.sindex.query(lg.geometry.values, predicate="intersects")
        dist = shapely.distance(lg.geometry.values, shapely.union_all(strips.geometry.values))
    else:
        li, si, dist = np.array([], int), np.array([], int), np.full(n, np.nan)
    labels = strips["kind"].to_numpy()[si] + " buffer of " + strips["source_id"].astype(str).to_numpy()[si]
    inside, kinds = _joined(li, labels, n), _joined(li, strips["kind"].to_numpy()[si], n)
    hit = np.zeros(n, dtype=bool)
    hit[li] = True
    miss = "; ".join(f"{k.replace('_', ' ')} ({v})" for k, v in bb.missing.items())
    status = np.where(hit, "violation", "not_evaluated" if bb.missing else "pass")
    near = np.where(np.isfinite(dist), [f"nearest buffer strip {d:,.0f} ft away" for d in dist], "no buffer strip nearby")
    detail = np.where(hit, ["inside " + t for t in inside],
                      [t + (f"; buffer strips not built: {miss}" if miss else "") for t in near])
    geom = np.array(lg.geometry.values, dtype=object)
    if hit.any():
        cut = shapely.intersection(geom[hit], shapely.union_all(strips.geometry.values))
        geom[hit] = np.where(shapely.is_empty(cut), geom[hit], cut)
    f = rule.findings(status, subject_layer="landings", subject_id=ids, measured=np.where(hit, 0.0, dist), unit="ft",
                      geometry=geom, crs=ctx.crs, detail=detail)
    in_buffer = hit.astype(object)
    if bb.missing:
        in_buffer[~hit] = None  # not inside a strip built, but some strips could not be built
    f["in_buffer"] = in_buffer
    f["buffer_kinds"] = kinds
    return f


def _row_note(src: pd.Series) -> str:
    how = ("right-of-way polygon" if src["source_layer"] == "row"
           else f"road centre line widened by half its {fmt_num(src['row_width_ft'])} ft right-of-way")
    return f"nearest: {src['source_layer']} {src['source_id']} ({how})"


@check("HRV-025")
def check_landing_row_distance(ctx: HarvestContext, rule: Rule) -> gpd.GeoDataFrame:
    """Each landing at least the minimum distance (edge to edge) from any public right-of-way.

    Extra column for the ``landings`` table: ``row_distance_ft``.
    """
    lg = ctx.get("landings")
    if lg is None:
        return _missing_layer(ctx, rule, "landings")
    ids, n = _plan_ids(lg), len(lg)
    limit = rule.t("min_distance_ft")
    rows = bf.row_polygons(ctx.get("roads"), ctx.get("row"), default_row_width_ft=rule.t("default_row_width_ft"))
    if not len(rows):
        return rule.findings("not_evaluated", subject_layer="landings", subject_id=ids, threshold=limit, unit="ft",
                             geometry=lg.geometry.values, crs=ctx.crs, detail="no roads or row layer")
    (li, ri), d = rows.sindex.nearest(lg.geometry.values, return_distance=True, return_all=False)
    dist = np.full(n, np.nan)
    dist[li] = d
    near = np.empty(n, dtype=object)
    near[li] = [_row_note(rows.iloc[r]) for r in ri]
    f = rule.findings(np.where(dist < limit, "violation", "pass"), subject_layer="landings", subject_id=ids,
                      measured=dist, threshold=limit, unit="ft", geometry=lg.geometry.values, crs=ctx.crs,
                      detail=near)
    f["row_distance_ft"] = dist
    return f


def _public_roads(ctx: HarvestContext, near: Any = None, margin_ft: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Road centre lines and ROW polygons (what a haul road must reach) and their ids
    (``roads R1`` / ``row W1``); with ``near``, only those within ``margin_ft`` of it, clipped
    to its bounding box grown by ``margin_ft``."""
    geoms, ids = [], []
    clip = None if near is None else shapely.box(*shapely.total_bounds(near)).buffer(margin_ft, join_style="mitre")
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
        return _missing_layer(ctx, rule, "haul_roads", "no roads or row layer")
    tol = rule.t("snap_tolerance_ft")
    pub, _ = _public_roads(ctx, hr.geometry.values, 2 * tol)
    zone = shapely.buffer(shapely.union_all(pub), tol) if len(pub) else Polygon()
    parts = shapely.get_parts(shapely.intersection(hr.geometry.values, zone))
    parts = parts[~shapely.is_empty(parts)]
    clusters = shapely.get_parts(shapely.union_all(shapely.buffer(parts, tol))) if len(parts) else np.array([])
    points = shapely.point_on_surface(clusters) if len(clusters) else np.array([], dtype=object)
    count, limit = len(points), rule.t("max_access_points_count")
    touching = hr.loc[shapely.intersects(hr.geometry.values, zone), "feature_id"].astype(str)
    detail = (f"haul roads {id_list(touching)} meet public roads (within {fmt_num(tol)} ft of a centre line or "
              f"right-of-way)" if count else "no haul road meets a public road")
    return rule.findings("review" if count > limit else "info", subject_layer="haul_roads", subject_id="all",
                         measured=count, threshold=limit, unit="count",
                         geometry=MultiPoint(list(points)) if count else None, crs=ctx.crs, detail=detail)


def _network(hr: gpd.GeoDataFrame, pub: np.ndarray, pub_ids: np.ndarray,
             tol: float) -> tuple[np.ndarray, np.ndarray, pd.Series, pd.Series]:
    """Connected haul-road networks (gaps up to ``tol``): component of each road, which components
    reach a public road, the public roads each reaches and the roads of each component."""
    m = len(hr)
    hg = hr.geometry.values
    a, b = hr.sindex.query(hg, predicate="dwithin", distance=tol)
    _, comp = connected_components(coo_matrix((np.ones(len(a)), (a, b)), shape=(m, m)), directed=False)
    hi, pi = shapely.STRtree(pub).query(hg, predicate="dwithin", distance=tol)
    reaches = np.zeros(comp.max() + 1, dtype=bool)
    reaches[comp[hi]] = True
    comp_roads = (pd.DataFrame({"c": comp[hi], "p": pub_ids[pi]}).groupby("c")["p"]
                  .agg(lambda s: ", ".join(sorted(set(s)))))
    members = pd.Series(_plan_ids(hr)).groupby(comp).agg(lambda s: ", ".join(s))
    return comp, reaches, comp_roads, members


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
                             crs=ctx.crs, detail="no haul_roads layer" if hr is None else "no roads or row layer")
    tol = rule.t("snap_tolerance_ft")
    comp, reaches, comp_roads, members = _network(hr, pub, pub_ids, tol)
    li, hj = hr.sindex.query(lg.geometry.values, predicate="dwithin", distance=tol)
    status, detail, via = [], [], []
    for i in range(n):  # the plan's landings
        cs = np.unique(comp[hj[li == i]])
        ok = [c for c in cs if reaches[c]]
        v = f"haul roads {members[ok[0]]} to {comp_roads[ok[0]]}" if ok else ""
        status.append("pass" if ok else "violation")
        via.append(v)
        detail.append(v if ok else f"no haul road within {fmt_num(tol)} ft of the landing" if not len(cs) else
                      f"haul roads {'; '.join(members[c] for c in cs)} do not reach a public road "
                      f"(tolerance {fmt_num(tol)} ft)")
    f = rule.findings(status, subject_layer="landings", subject_id=ids, geometry=lg.geometry.values, crs=ctx.crs,
                      detail=detail)
    f["connected"] = (np.array(status) == "pass").astype(object)
    f["via"] = via
    return f


# ------------------------------------------------------------------------------------------
# HRV-030 water bars, HRV-040 licence checklist


def _water_bar_row(rows: FindingRows, rt: tr.RoadTerrain, geom: Any, min_g: float) -> None:
    at = {"subject_layer": "haul_roads", "subject_id": rt.feature_id}
    if rt.error:
        rows.add("not_evaluated", **at, geometry=geom, detail=rt.error)
        return
    wb = rt.water_bars if rt.water_bars is not None else gpd.GeoDataFrame()
    count = len(wb)
    if count:
        bands = wb.groupby(["band", "spacing_ft", "min_spacing_ft", "max_spacing_ft"], sort=False).size()
        txt = "; ".join(f"{k} at {fmt_num(sp)} ft for {band} (table range {fmt_num(lo)}-{fmt_num(hi)} ft)"
                        for (band, sp, lo, hi), k in bands.items())
        detail = f"{count} water bars: {txt} (layer water_bars)"
    else:
        detail = f"0 water bars (mean grade {rt.mean_grade_pct:.1f} %, length {rt.length_ft:,.0f} ft)"
    gap = sum(s.length_ft for s in rt.gaps)
    if gap > 0:
        status = "not_evaluated"
        detail += f"; {gap:,.0f} ft off the DEM or on nodata, no bars placed there"
    elif count == 0 and rt.mean_grade_pct < min_g:
        status, detail = "pass", f"mean grade {rt.mean_grade_pct:.1f} %"
    else:
        status = "info"
    rows.add(status, **at, geometry=MultiPoint(list(wb.geometry.values)) if count else geom, detail=detail,
             measured=count, unit="count")


@check("HRV-030")
def check_water_bars(ctx: HarvestContext, rule: Rule) -> gpd.GeoDataFrame:
    """Water bars placed along each haul road from its DEM profile (derived layer ``water_bars``)."""
    hr = ctx.get("haul_roads")
    if hr is None:
        return _missing_layer(ctx, rule, "haul_roads")
    rows = FindingRows(rule, ctx.crs)
    for fid, geom in zip(hr["feature_id"].astype(str), hr.geometry.values):  # the plan's haul roads
        _water_bar_row(rows, ctx.terrain[("haul_roads", fid)], geom, rule.t("min_grade_pct"))
    return rows.frame()


@check("HRV-040")
def check_licence_conditions(ctx: HarvestContext, rule: Rule) -> gpd.GeoDataFrame:
    """The licence conditions geometry cannot check, as an ``info`` checklist."""
    conditions = list(rule.p("conditions"))
    return rule.findings("info", subject_layer="licence", subject_id=[c["key"] for c in conditions], crs=ctx.crs,
                         detail=[f"{c['text']} ({c.get('citation', rule.citation)})" for c in conditions])
