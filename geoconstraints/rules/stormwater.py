"""Stormwater checks: SWP-001..SWP-008 (Vestal's and Lockport's stormwater law, per rulebook).

:func:`geoconstraints.commands.check_stormwater` builds the :class:`StormwaterContext` (the
layers, the measured sites and the parsed schedule inputs) and runs them; each check returns
one findings frame.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from geoconstraints.errors import InputError, RulebookError
from geoconstraints.geometry.flow import FlowTrace, trace_flow
from geoconstraints.geometry.phasing import (
    AREA_TOL_ACRES,
    QUALIFIED_NO,
    QUALIFIED_YES,
    SUBJECT,
    GrownSite,
    Phasing,
    PhasingDates,
    Site,
    SitePhasing,
    grown_sites,
    harvest_footprints,
    qualifications,
    site_phasing,
    union_acres,
)
from geoconstraints.io.layers import Layers
from geoconstraints.rulebook.findings import concat_findings
from geoconstraints.rulebook.loader import threshold_order_problem
from geoconstraints.rulebook.model import FindingRows, Rule, Rulebook
from geoconstraints.rulebook.registry import check
from geoconstraints.rulebook.render import fmt_num
from geoconstraints.rules.dem_cells import coarse_cell_note, coarse_pass_detail
from geoconstraints.text import and_list, day_text, fixed, id_list, is_blank
from geoconstraints.units import SQFT_PER_ACRE, cell_within, sqft_to_acres

log = logging.getLogger(__name__)


def _norm_use(v: Any) -> str:
    if is_blank(v):
        return ""
    return str(v).strip().lower().replace("-", "_").replace(" ", "_")


@dataclass(frozen=True)
class StormwaterContext:
    """What the SWP checks read: layers, the measured sites and the parsed schedule inputs (plain data).

    Attributes
    ----------
    layers : Layers
    rulebook : Rulebook
        For the conditions one rule reads from another (SWP-007 applies under SWP-001..004).
    disturbance : GeoDataFrame or None
    footprints : GeoDataFrame
        Landing and haul-road footprints counted as disturbance.
    sites : tuple of Site
        The activities measured (the project, an unconnected harvest plan).
    dates, phasing : optional
        The disturbance layer's phasing dates and the project's timeline (when they are complete).
    phasings : tuple of SitePhasing
        The timeline of each site (aligned with ``sites``), landings and haul roads included.
    flows : tuple of FlowTrace or None
        The downslope flow paths from each site (aligned with ``sites``; None without a DEM or
        an impaired-waters layer, or when the site is within the screening distance).
    dem_given : bool
        A DEM was given (Condition A beyond the screening distance needs one).
    rainfall, inspections_log, schedule : DataFrame or None
        Daily rainfall, the inspections made, and the inspections required (matched to the log).
    approved_swppp, larger_common_plan
        The command's options; ``larger_common_plan`` None when not stated.
    """

    layers: Layers
    rulebook: Rulebook
    disturbance: gpd.GeoDataFrame | None
    footprints: gpd.GeoDataFrame
    sites: tuple[Site, ...] = ()
    dates: PhasingDates | None = None
    phasing: Phasing | None = None
    rainfall: pd.DataFrame | None = None
    inspections_log: pd.DataFrame | None = None
    schedule: pd.DataFrame | None = None
    approved_swppp: bool = False
    larger_common_plan: bool | float | None = None
    phasings: tuple[SitePhasing, ...] = ()
    flows: tuple[FlowTrace | None, ...] = ()
    dem_given: bool = False

    @property
    def crs(self) -> Any:
        """The working CRS."""
        return self.layers.crs

    @property
    def project(self) -> Site | None:
        """The disturbance project (the dated one), if a disturbance layer was given."""
        return next((s for s in self.sites if s.dated), None)

    @property
    def footprint_acres(self) -> float:
        """Acres of all landing and haul-road footprints (union)."""
        return union_acres(self.footprints.geometry.values)[1] if len(self.footprints) else 0.0

    @cached_property
    def grown_footprints(self) -> gpd.GeoDataFrame | None:
        """:attr:`footprints` with every landing mapped as a point at SWP-006's ``max_point_landing_area_sqft``
        (instead of ``default_landing_area_sqft``) and every haul road at ``max_haul_road_width_ft`` (instead
        of ``haul_road_width_ft``), the same rows in the same order; None without landings or haul roads.

        A haul road lying wholly within the disturbance polygons (its strip as counted, to
        :data:`~geoconstraints.geometry.phasing.AREA_TOL_ACRES`) keeps its strip: its clearing is mapped
        there, and the polygons are measured as drawn.

        Raises
        ------
        RulebookError
            SWP-006 without ``max_point_landing_area_sqft`` (with landings) or ``max_haul_road_width_ft``
            (with haul roads), or one under the size it bounds (:func:`point_landing_sizes`,
            :func:`haul_road_widths`).
        """
        landings, roads = self.layers.get_layer("landings"), self.layers.get_layer("haul_roads")
        landings = landings if landings is not None and len(landings) else None
        roads = roads if roads is not None and len(roads) else None
        sw6 = self.rulebook.rules.get("SWP-006")
        if (landings is None and roads is None) or sw6 is None:
            return None  # without SWP-006 the footprints were refused (commands._footprints)
        most = point_landing_sizes(sw6)[1] if landings is not None else 0.0
        widest = haul_road_widths(sw6)[1] if roads is not None else 0.0
        big = harvest_footprints(landings, roads, haul_road_width_ft=widest, default_landing_area_sqft=most)
        if len(big) != len(self.footprints):  # footprints not built from these layers: nothing to compare
            return None
        road = (big["kind"] == "haul_road").to_numpy()
        if road.any() and self.disturbance is not None and len(self.disturbance):
            counted = self.footprints.geometry.values
            mapped = shapely.union_all(self.disturbance.geometry.values)
            outside = shapely.area(shapely.difference(counted[road], mapped))
            drawn = np.flatnonzero(road)[outside <= AREA_TOL_ACRES * SQFT_PER_ACRE]
            if len(drawn):
                geoms = big.geometry.values.copy()
                geoms[drawn] = counted[drawn]
                big = big.set_geometry(geoms)
                big["area_sqft"] = shapely.area(geoms)
                big["acres"] = sqft_to_acres(big["area_sqft"])
        return big

    @cached_property
    def grown(self) -> tuple[GrownSite | None, ...]:
        """Each site (aligned with ``sites``) measured again with its footprints at :attr:`grown_footprints`
        (every landing mapped as a point at ``max_point_landing_area_sqft``, every haul road at
        ``max_haul_road_width_ft``: :func:`~geoconstraints.geometry.phasing.grown_sites`); None where no
        footprint that grew is in it or could join it.

        Raises
        ------
        RulebookError
            As :attr:`grown_footprints`.
        """
        big = self.grown_footprints if self.sites else None
        if big is None:
            return tuple(None for _ in self.sites)
        width = self.rulebook.rules["SWP-006"].t("haul_road_width_ft") if (big["kind"] == "haul_road").any() else 0.0
        return tuple(grown_sites(self.disturbance, self.footprints, big, self.sites, road_width_ft=width))


def _sizes(sw6: Rule, counted: str, largest: str) -> tuple[float, float]:
    """SWP-006's thresholds ``counted`` and ``largest``; RulebookError when either is missing or the largest
    is under the one counted (:func:`~geoconstraints.rulebook.loader.threshold_order_problem`, the check a
    rulebook file gets when it loads: a rulebook made in code gets it here)."""
    typical, most = sw6.t(counted), sw6.t(largest)
    why = threshold_order_problem(sw6, largest)
    if why:
        raise RulebookError(f"rule {sw6.id} in rulebook {sw6.rulebook!r}: {why}. Fix the rulebook")
    return typical, most


def point_landing_sizes(sw6: Rule) -> tuple[float, float]:
    """SWP-006's area of a landing mapped as a point, as counted and at most: ``(default_landing_area_sqft,
    max_point_landing_area_sqft)``.

    Raises
    ------
    RulebookError
        Either missing, or the largest under the one counted.

    Examples
    --------
    >>> from geoconstraints.rulebook.loader import load_rulebook
    >>> [point_landing_sizes(load_rulebook(b)["SWP-006"]) for b in ("vestal", "lockport")]
    [(10000.0, 43560.0), (10000.0, 43560.0)]
    """
    return _sizes(sw6, "default_landing_area_sqft", "max_point_landing_area_sqft")


def haul_road_widths(sw6: Rule) -> tuple[float, float]:
    """SWP-006's width of a haul road mapped as a line, as counted and at most: ``(haul_road_width_ft,
    max_haul_road_width_ft)``.

    Raises
    ------
    RulebookError
        Either missing, or the widest under the one counted.

    Examples
    --------
    >>> from geoconstraints.rulebook.loader import load_rulebook
    >>> [haul_road_widths(load_rulebook(b)["SWP-006"]) for b in ("vestal", "lockport")]
    [(12.0, 30.0), (12.0, 30.0)]
    """
    return _sizes(sw6, "haul_road_width_ft", "max_haul_road_width_ft")


def _grown(ctx: StormwaterContext, k: int | None) -> GrownSite | None:
    return ctx.grown[k] if k is not None and k < len(ctx.grown) else None


def _site_index(ctx: StormwaterContext, site: Site | None) -> int | None:
    return next((i for i, x in enumerate(ctx.sites) if x is site), None)


def _site_at(ctx: StormwaterContext, k: int | None) -> Site:
    """Site ``k`` of ``ctx.sites``; ValueError for an index that names none (a site not measured here)."""
    if k is None or not 0 <= k < len(ctx.sites):
        raise ValueError(f"site index {k!r} is not one of the {len(ctx.sites)} site(s) measured (ctx.sites)")
    return ctx.sites[k]


def _landing_clause(ctx: StormwaterContext, g: GrownSite) -> tuple[str, str, str]:
    """The landings of ``g`` mapped as points: ``(what was counted, what is largest, the fix)``. A landing
    mapped as several points (a MultiPoint) is a disc per point: the sizes are per point, with its total
    (the area of its discs, overlaps counted once)."""
    typical, most = point_landing_sizes(ctx.rulebook.rules["SWP-006"])
    fp, big = ctx.footprints, ctx.grown_footprints
    landings = ctx.layers.get_layer("landings")
    n_of: dict[str, int] = {}
    if landings is not None:
        n = shapely.get_num_geometries(landings.geometry.values)
        multi = shapely.get_type_id(landings.geometry.values) == 4  # MultiPoint
        n_of = {str(i): int(c) for i, c, m in zip(landings["feature_id"], n, multi) if m}
    mine = (fp["kind"] == "landing").to_numpy()
    ids = fp["feature_id"].astype(str).to_numpy()

    def total(frame: gpd.GeoDataFrame | None, fid: str) -> str:
        return fmt_num(round(float(frame["area_sqft"].to_numpy(float)[mine & (ids == fid)].sum()))) if frame is not None else "?"

    multi_ids = [i for i in g.points if n_of.get(i, 1) > 1]
    often = ", but a log landing is often 1/4 to 1 acre"
    one = len(g.points) == 1
    fix = "the landing's extent (a polygon)" if one else "the landings' extents (polygons)"
    if one and multi_ids:
        i = multi_ids[0]
        counted = (f"landing {i} is mapped as {n_of[i]} points, counted as {fmt_num(typical)} sq ft per point, "
                   f"{total(fp, i)} sq ft in all (default_landing_area_sqft){often}")
        largest = f"{fmt_num(most)} sq ft per point, {total(big, i)} sq ft in all (max_point_landing_area_sqft)"
        return counted, largest, fix
    who = f"landing {g.points[0]} is mapped as a point" if one else f"landings {id_list(g.points)} are mapped as points"
    each = "" if one else (" per point" if multi_ids else " each")
    in_all = "".join(f"; {i} is {n_of[i]} points, {total(fp, i)} sq ft in all" for i in multi_ids)
    big_all = "".join(f"; {i} {total(big, i)} sq ft in all" for i in multi_ids)
    counted = f"{who}, counted as {fmt_num(typical)} sq ft{each} (default_landing_area_sqft{in_all}){often}"
    largest = f"{fmt_num(most)} sq ft{each} (max_point_landing_area_sqft{big_all})"
    return counted, largest, fix


def _road_clause(ctx: StormwaterContext, g: GrownSite) -> tuple[str, str, str]:
    """The haul roads of ``g`` counted wider: ``(what was counted, what is largest, the fix)``."""
    width, widest = haul_road_widths(ctx.rulebook.rules["SWP-006"])
    fp = ctx.footprints
    rows = fp[(fp["kind"] == "haul_road").to_numpy() & np.isin(fp["feature_id"].astype(str).to_numpy(), g.roads)]
    length = fixed(float(rows["length_ft"].sum()), 0)
    one = len(g.roads) == 1
    who = (f"haul road {g.roads[0]} ({length} ft) is mapped as a line" if one else
           f"haul roads {id_list(g.roads)} ({length} ft in all) are mapped as lines")
    fix = ("the road's cleared width (a disturbance polygon holding the line)" if one else
           "the roads' cleared widths (disturbance polygons holding the lines)")
    counted = (f"{who}, counted as a strip {fmt_num(width)} ft wide (haul_road_width_ft), but a haul road with its "
               f"ditches and cut and fill slopes often clears more")
    return counted, f"{fmt_num(widest)} ft wide (max_haul_road_width_ft)", fix


def grown_note(ctx: StormwaterContext, g: GrownSite, effect: str) -> str:
    """Why a finding rests on the size of landings mapped as points and the width of haul roads mapped as
    lines: the size counted, the largest (SWP-006), what the larger sizes would do (``effect``) and the fix."""
    parts = ([_landing_clause(ctx, g)] if g.points else []) + ([_road_clause(ctx, g)] if g.roads else [])
    said = "; and ".join(p[0] for p in parts)
    most = " and ".join(p[1] for p in parts)
    joined = (f"; at {'that size' if len(parts) == 1 else 'those sizes'} {id_list(g.joined)} would touch the "
              f"disturbance and count in the project" if g.joined else "")
    return f"{said}: at up to {most} {effect}{joined}; map {' and '.join(p[2] for p in parts)}"


# ------------------------------------------------------------------------------------------------
# conditions shared by several rules

def land_development(acres: float, larger_common_plan: bool | float | None, rule: Rule) -> tuple[bool | None, str, str]:
    """SWP-001: is this a land development activity? ``(applies, status, detail)``.

    Under the acreage it is one when part of a larger common plan of development or sale: that
    must be stated (``larger_common_plan`` True, False or the plan's aggregate acres); when it is
    not (None), ``applies`` is None and the status ``not_evaluated``.
    """
    min_acres = rule.t("min_disturbed_acres")
    if acres >= min_acres - AREA_TOL_ACRES:
        return True, "review", f"at least {min_acres:g} acre"
    if larger_common_plan is None:
        return None, "not_evaluated", (f"under {min_acres:g} acre, and whether it is part of a larger common plan of "
                                       f"development or sale is not stated (--larger-common-plan or "
                                       f"--no-larger-common-plan)")
    if larger_common_plan is False:
        return False, "pass", "stated not to be part of a larger common plan of development or sale"
    test = rule.s("common_plan_test")
    if test == "any_part":
        return True, "review", ("under the acreage, but part of a larger common plan of development or "
                                "sale (reading common_plan_test=any_part)")
    agg = rule.thresholds.get("common_plan_aggregate_acres", rule.params.get("common_plan_aggregate_acres"))
    if agg is None:
        raise RulebookError(f"rule SWP-001 in rulebook {rule.rulebook!r}: common_plan_test=aggregate_min needs "
                            f"a threshold common_plan_aggregate_acres")
    agg = float(agg)
    if isinstance(larger_common_plan, (bool, np.bool_)):
        return True, "review", (f"part of a larger common plan; covered if the plan disturbs {agg:g} acre or "
                                f"more in the aggregate (reading common_plan_test=aggregate_min): the "
                                f"aggregate was not given, confirm it")
    total = float(larger_common_plan)
    if total >= agg - AREA_TOL_ACRES:
        return True, "review", (f"part of a larger common plan disturbing {fixed(total)} acres in the "
                                f"aggregate, at least {agg:g} acre")
    return False, "pass", (f"the larger common plan disturbs {fixed(total)} acres in the aggregate, under "
                           f"{agg:g} acre")


def condition_b(acres: float, rule: Rule) -> bool:
    """SWP-003 Condition B: at least ``min_acres`` disturbed."""
    return acres >= rule.t("min_acres") - AREA_TOL_ACRES


def condition_c(acres: float, uses: Sequence[str], rule: Rule) -> tuple[bool, str, str]:
    """SWP-004 Condition C: ``min_acres`` to under ``max_acres``, except exempt uses.

    Returns ``(applies, status, detail)``. The exclusion applies when every disturbance polygon's
    ``use`` is one of ``exempt_uses`` (a project wholly of single-family or agricultural construction).
    """
    lo, hi = rule.t("min_acres"), rule.t("max_acres")
    a = fixed(acres)
    if acres < lo - AREA_TOL_ACRES:
        return False, "pass", f"{a} acres disturbed, under {lo:g} acre: Condition C does not apply"
    if acres >= hi - AREA_TOL_ACRES:
        return False, "pass", (f"{a} acres disturbed, {hi:g} acres or more: Condition B applies instead "
                               f"(SWP-003), not Condition C")
    exempt = {_norm_use(u) for u in rule.p("exempt_uses")}
    used = [_norm_use(u) for u in uses]
    if used and all(u in exempt for u in used):
        kinds = ", ".join(sorted(set(used)))
        return False, "pass", (f"{a} acres disturbed, but Condition C excludes the construction of single-family "
                               f"residences and construction at agricultural properties: every disturbance "
                               f"polygon's use is {kinds}")
    if not any(used):
        return True, "review", "no use stated, so the single-family / agricultural exclusion is not established"
    others = sorted({u or "not stated" for u in used if u not in exempt})
    return True, "review", (f"uses {', '.join(others)} are not excluded (only single-family or agricultural "
                            f"construction is)")


def land_development_at(ctx: StormwaterContext, rule: Rule, k: int | None) -> tuple[bool | None, str, str]:
    """:func:`land_development` of site ``k``; where the landings mapped as points and haul roads mapped as
    lines would, at their largest size (:attr:`StormwaterContext.grown`), give another outcome, a ``pass`` is
    ``not_evaluated`` and every other status says so. ValueError where ``k`` names no site of ``ctx.sites``."""
    site = _site_at(ctx, k)
    ok, st, why = land_development(site.acres, ctx.larger_common_plan, rule)
    g = _grown(ctx, k)
    if g is None:
        return ok, st, why
    gok, gst, _ = land_development(g.site.acres, ctx.larger_common_plan, rule)
    if gok == ok and gst == st:
        return ok, st, why
    note = grown_note(ctx, g, f"the activity would disturb {fixed(g.site.acres)} acres, at least "
                              f"{fmt_num(rule.t('min_disturbed_acres'))} acre")
    return (None, "not_evaluated", f"{why}; {note}") if st == "pass" else (ok, st, f"{why}; {note}")


def condition_b_at(ctx: StormwaterContext, rule: Rule, k: int | None) -> tuple[bool | None, str]:
    """:func:`condition_b` of site ``k``, ``(applies, note)``: None (not known) where it does not apply as
    mapped but would with the landings mapped as points and the haul roads at their largest size (the note
    says so). ValueError where ``k`` names no site of ``ctx.sites``."""
    site = _site_at(ctx, k)
    applies = condition_b(site.acres, rule)
    g = _grown(ctx, k)
    if applies or g is None or not condition_b(g.site.acres, rule):
        return applies, ""
    return None, grown_note(ctx, g, f"the activity would disturb {fixed(g.site.acres)} acres, at least "
                                    f"{fmt_num(rule.t('min_acres'))} acres")


def condition_c_at(ctx: StormwaterContext, rule: Rule, k: int | None) -> tuple[bool | None, str, str]:
    """:func:`condition_c` of site ``k``. A ``pass`` is ``not_evaluated`` where the landings mapped as points
    and haul roads mapped as lines could, at a size up to their largest, make it apply: the acreage reaching
    ``min_acres`` on the way (the band is crossed even where the largest size is past ``max_acres``), or a
    footprint joining the project that is of no excluded use. ValueError where ``k`` names no site of
    ``ctx.sites``."""
    site = _site_at(ctx, k)
    ok, st, why = condition_c(site.acres, site.uses, rule)
    g = _grown(ctx, k)
    if g is None or st != "pass":
        return ok, st, why
    gok, _gst, _ = condition_c(g.site.acres, g.site.uses, rule)
    lo = rule.t("min_acres")
    crosses = site.acres < lo - AREA_TOL_ACRES <= g.site.acres
    if not (gok or crosses):
        return ok, st, why
    effect = (f"the activity would disturb {fixed(g.site.acres)} acres" +
              (f", reaching {fmt_num(lo)} acre (Condition C from {fmt_num(lo)} to under {fmt_num(rule.t('max_acres'))} "
               f"acres)" if crosses else ", with footprints of no excluded use"))
    return None, "not_evaluated", f"{why}; {grown_note(ctx, g, effect)}"


def _water_label(waters: gpd.GeoDataFrame, k: int) -> str:
    name = waters["name"].iloc[k] if "name" in waters.columns and not is_blank(waters["name"].iloc[k]) else ""
    return f"{waters['feature_id'].iloc[k]}" + (f" ({name})" if name else "")


def _impaired_distance(ctx: StormwaterContext, site: Site) -> tuple[float, str, Any] | None:
    """Distance (ft) from a site to the nearest impaired water, its label, and the shortest line."""
    waters = ctx.layers.get_layer("impaired_waters")
    if waters is None or site.geometry is None:
        return None
    d = shapely.distance(site.geometry, waters.geometry.values)
    k = int(np.argmin(d))
    return float(d[k]), _water_label(waters, k), shapely.shortest_line(site.geometry, waters.geometry.values[k])


def condition_a(ctx: StormwaterContext, rule: Rule, k: int | None) -> tuple[bool | None, str, str, float, float, Any]:
    """SWP-002 Condition A for site ``k``: ``(applies, status, detail, measured_ft, threshold_ft, geometry)``.

    Within ``impaired_water_distance_ft`` of an impaired water: ``review`` (proximity screens for
    discharge; a human confirms the drainage path). Beyond it the law's test, discharge, is
    decided only by the downslope flow path traced on a DEM (``ctx.flows``): ``review`` when it
    reaches the water; ``pass`` when every path ends in a closed depression at least
    ``min_depression_depth_ft`` deep (shallower ones are filled before tracing) without reaching it
    (reading ``undrained_path_end``); ``not_evaluated`` without a DEM, when a path runs off the DEM,
    or when a path is cut off at ``max_flow_path_ft`` (not followed to its end: it may still reach
    the water beyond, whatever ``undrained_path_end`` says). That pass is given only on a DEM whose
    cells (the larger side, feet: :attr:`~geoconstraints.io.dem.Dem.max_cell_size_ft`) are at most
    ``max_dem_cell_ft``: a coarser grid averages a ditch or swale narrower than a cell into the ground
    beside it, closing a depression the runoff leaves in fact, so its pass is ``not_evaluated``
    (:func:`~geoconstraints.rules.dem_cells.coarse_pass_detail`); a path reaching the water on it stays
    ``review``, and every traced finding on it says the cell size.

    Where site ``k`` holds landings mapped as points or haul roads mapped as lines (or one could join it),
    a ``pass`` holds only if the site with them at their largest size (:attr:`StormwaterContext.grown`)
    passes too: measured and traced again (unless it came out the same shape); otherwise it is
    ``not_evaluated``, saying what the larger footprints give and the fix.

    Raises
    ------
    ValueError
        ``k`` names no site of ``ctx.sites``.
    """
    site = _site_at(ctx, k)
    flow = ctx.flows[k] if k is not None and k < len(ctx.flows) else None
    found = _condition_a_of(ctx, rule, site, flow)
    g = _grown(ctx, k)
    if found[1] != "pass" or g is None or _same_shape(g.site, site):  # the same land drains the same way
        return found
    big = _condition_a_of(ctx, rule, g.site, site_flow(ctx.layers, rule, g.site))
    if big[1] == "pass":
        return found
    note = grown_note(ctx, g, f"the finding would be {big[1].replace('_', ' ')}: {big[2]}")
    return None, "not_evaluated", f"{found[2]}; {note}", found[3], found[4], found[5]


def _same_shape(a: Site, b: Site) -> bool:
    """Two sites cover the same ground (a site measured again whose larger footprints lie within what it
    already counts)."""
    return a.geometry is not None and b.geometry is not None and bool(shapely.equals(a.geometry, b.geometry))


def site_flow(layers: Layers, rule: Rule, site: Site) -> FlowTrace | None:
    """The downslope flow paths from ``site`` to the impaired waters on the DEM, where it lies beyond
    ``rule``'s (SWP-002's) ``impaired_water_distance_ft`` of them (None within it, or without a DEM, impaired
    waters or site geometry): the trace of each site the command measures (``StormwaterContext.flows``) and
    of a site measured again at its largest (:func:`condition_a`)."""
    waters, dem = layers.get_layer("impaired_waters"), layers.dem
    if waters is None or dem is None or site.geometry is None:
        return None
    if float(shapely.distance(site.geometry, waters.geometry.values).min()) <= rule.t("impaired_water_distance_ft"):
        return None
    return trace_flow(dem, site.geometry, list(waters.geometry.values), layers.crs,
                      max_length_ft=rule.t("max_flow_path_ft"),
                      min_depression_depth_ft=rule.t("min_depression_depth_ft"))


def _condition_a_of(ctx: StormwaterContext, rule: Rule, site: Site,
                    flow: FlowTrace | None) -> tuple[bool | None, str, str, float, float, Any]:
    """:func:`condition_a` of one site and its flow paths, as mapped."""
    limit = rule.t("impaired_water_distance_ft")
    dist = _impaired_distance(ctx, site)
    if dist is None:
        return None, "not_evaluated", "no impaired_waters layer given (303(d) / TMDL waters)", np.nan, limit, None
    d, label, line = dist
    near = f"nearest impaired water {label} at {fixed(d, 0)} ft"
    if d <= limit:
        return True, "review", (f"{near}, within the screening distance of {fmt_num(limit)} ft "
                                f"(impaired_water_distance_ft): proximity stands in for discharge, a human confirms "
                                f"the drainage path"), d, limit, line if d > 0 else site.geometry
    if flow is None:
        why = ("give a pre-construction DEM (--dem) to trace the downslope flow path" if not ctx.dem_given
               else "the flow path was not traced")
        return None, "not_evaluated", (f"{near}, beyond the screening distance of {fmt_num(limit)} ft: discharge not "
                                       f"analysed; {why}"), d, limit, line
    maxl = rule.t("max_flow_path_ft")
    cell, max_cell = _dem_cell_ft(ctx), rule.t("max_dem_cell_ft")
    coarse = not cell_within(cell, max_cell)
    grid = f"; {coarse_cell_note(cell, rule, 'the flow paths are those of the coarse grid')}" if coarse else ""
    shallow = (f"; {flow.filled} closed depression(s) shallower than {fmt_num(rule.t('min_depression_depth_ft'))} ft "
               f"(min_depression_depth_ft) filled first" if flow.filled else "")
    traced = f"downslope flow path (D8 on the DEM, {flow.source_cells} cells of the site{shallow})"
    if flow.reached:
        return True, "review", (f"the {traced} reaches impaired water {_reached_label(ctx, flow)} after "
                                f"{fixed(flow.length_ft, 0)} ft ({near} in a straight line){grid}"), \
            flow.length_ft, maxl, flow.path
    ends = ", ".join(f"{n} {k_}" for k_, n in flow.ends.items())
    if not flow.complete:
        cut = {"edge": "runs off the DEM (its edge or a nodata cell)",
               "limit": f"is not followed to its end (stopped at max_flow_path_ft = {fmt_num(maxl)} ft)"}
        how = " and ".join(cut[k_] for k_ in cut if flow.ends.get(k_)) or cut.get(flow.outcome, flow.outcome)
        longest = f"; longest path {fixed(flow.length_ft, 0)} ft" if flow.ends.get("limit") else ""
        return None, "not_evaluated", (f"the {traced} {how} before reaching an impaired water (path ends: "
                                       f"{ends}{longest}): discharge not shown; {near}{grid}"), \
            flow.length_ft, maxl, flow.end_points
    min_depth = rule.t("min_depression_depth_ft")
    deep = f" at least {fmt_num(min_depth)} ft deep (min_depression_depth_ft)" if min_depth > 0 else ""
    how = (f"ends in a closed depression{deep} without reaching an impaired water (path ends: {ends}; longest "
           f"path {fixed(flow.length_ft, 0)} ft); {near}")
    reading = rule.s("undrained_path_end")
    if reading == "not_evaluated":
        return None, "not_evaluated", f"every {traced} {how}; undrained_path_end=not_evaluated{grid}", flow.length_ft, \
            maxl, flow.end_points
    if coarse:  # a grid too coarse to show a ditch out of the depression: its pass is no promise
        return None, "not_evaluated", coarse_pass_detail(cell, rule, COARSE_FLOW_HIDDEN, f"every {traced} {how}"), \
            cell, max_cell, flow.end_points
    return False, "pass", f"every {traced} {how}; read as no discharge (undrained_path_end=no_discharge)", \
        flow.length_ft, maxl, flow.end_points


COARSE_FLOW_HIDDEN = ("a ditch, swale or culvert channel narrower than a cell that carries the runoff out of a closed "
                      "depression toward the water can be averaged into the ground beside it, leaving a closed "
                      "depression that is not there")
"""What a DEM cell over SWP-002's ``max_dem_cell_ft`` can hide from a pass (the middle of its detail)."""


def _dem_cell_ft(ctx: StormwaterContext) -> float:
    """The DEM's cell (the larger side, international feet; NaN without a DEM: never within a limit)."""
    dem = ctx.layers.dem
    return float(dem.max_cell_size_ft) if dem is not None else float("nan")


def _reached_label(ctx: StormwaterContext, flow: FlowTrace) -> str:
    waters = ctx.layers.get_layer("impaired_waters")
    if waters is None or flow.path is None:
        return "(unnamed)"
    end = shapely.get_point(flow.path, -1) if flow.path.geom_type == "LineString" else flow.path
    return _water_label(waters, int(np.argmin(shapely.distance(end, waters.geometry.values))))


def _rule_or_none(rb: Rulebook, rid: str) -> Rule | None:
    return rb.rules.get(rid)


_CONDITION_RULES = (("A", "SWP-002"), ("B", "SWP-003"), ("C", "SWP-004"))
"""Lockport's Conditions A, B, C and the rules defining them (SWP-007 applies_to=conditions_abc)."""


def _conditions(names: Sequence[str]) -> str:
    """'Condition A (...)' or 'Conditions B and C'."""
    return f"Condition{'s' if len(names) > 1 else ''} {and_list(list(names))}"


def swp007_applies(ctx: StormwaterContext, rule: Rule, site: Site | None) -> tuple[bool | None, str]:
    """Whether SWP-007 inspections are required for ``site``, from ``applies_to`` and the conditions.

    ``all_land_development`` (Vestal): every land development activity (SWP-001).
    ``conditions_abc`` (Lockport): only when Condition A, B or C applies. ``None`` when unknown.
    """
    applies_to = rule.p("applies_to")
    if site is None:
        return None, "no disturbance layer given"
    rb = ctx.rulebook
    acres = site.acres
    k = _site_index(ctx, site)
    if applies_to == "all_land_development":
        r1 = _rule_or_none(rb, "SWP-001")
        if r1 is None:
            return True, "the rulebook has no SWP-001; inspections taken as required"
        ok, _st, why = land_development_at(ctx, r1, k)
        if ok:
            return True, f"land development activity ({fixed(acres)} acres; {why}); applies_to=all_land_development"
        if ok is None:
            return None, f"{fixed(acres)} acres, {why}; applies_to=all_land_development"
        return False, (f"not a land development activity ({fixed(acres)} acres; {why}), so no inspections "
                       f"are required (applies_to=all_land_development)")
    if applies_to == "conditions_abc":
        met: list[str] = []
        unknown: list[str] = []
        no: list[str] = []
        for cond, rid in _CONDITION_RULES:
            r = _rule_or_none(rb, rid)
            applies: bool | None
            why = ""
            if r is None:  # undecided, never "does not apply": the rule deciding it is not in this rulebook
                applies, why = None, (f"the rulebook has no {rid}, the rule defining Condition {cond}, so whether "
                                      f"it applies is not known")
            elif cond == "A":
                applies, _st, why, *_ = condition_a(ctx, r, k)
            elif cond == "B":
                applies, why = condition_b_at(ctx, r, k)
            else:
                applies, _st, why = condition_c_at(ctx, r, k)
            if applies is None:
                unknown.append(f"{cond} ({why})")
            else:
                (met if applies else no).append(cond)
        if met:
            return True, f"Condition {', '.join(met)} applies (applies_to=conditions_abc)"
        if unknown:
            return None, (f"{_conditions(no)} {'does' if len(no) == 1 else 'do'} not apply and " if no else "") + (
                f"{_conditions(unknown)} could not be decided (applies_to=conditions_abc)")
        return False, ("none of Conditions A, B, C applies, so inspections are not required "
                       "(applies_to=conditions_abc)")
    raise RulebookError(f"rule SWP-007 in rulebook {rule.rulebook!r}: param applies_to={applies_to!r} is not "
                        f"all_land_development or conditions_abc")


# ------------------------------------------------------------------------------------------------
# checks

def _no_site(ctx: StormwaterContext, rule: Rule) -> gpd.GeoDataFrame:
    return rule.findings("not_evaluated", subject_layer="disturbance", subject_id=SUBJECT, crs=ctx.crs,
                         detail="no disturbance layer and no landings or haul roads given")


def _sites_frame(ctx: StormwaterContext, rule: Rule, status: Sequence[str], detail: Sequence[str], *,
                 measured: Any = None, threshold: Any = None, unit: str = "", geometry: Any = None) -> gpd.GeoDataFrame:
    """One finding per site (``ctx.sites``), measured its acres unless given."""
    s = ctx.sites
    return rule.findings(list(status), subject_layer=[x.layer for x in s], subject_id=[x.id for x in s],
                         measured=[x.acres for x in s] if measured is None else measured, threshold=threshold,
                         unit=unit or "acres", geometry=[x.geometry for x in s] if geometry is None else geometry,
                         crs=ctx.crs, detail=list(detail))


@check("SWP-001")
def check_swppp_required(ctx: StormwaterContext, rule: Rule) -> gpd.GeoDataFrame:
    """SWP-001: disturbance of the minimum acreage (or part of a larger common plan) needs an SWPPP."""
    if not ctx.sites:
        return _no_site(ctx, rule)
    found = [land_development_at(ctx, rule, k) for k in range(len(ctx.sites))]  # at most two sites
    status = [st for _ok, st, _why in found]
    detail = [f"{s.detail}; {why}" for s, (_ok, _st, why) in zip(ctx.sites, found)]
    return _sites_frame(ctx, rule, status, detail, threshold=rule.t("min_disturbed_acres"))


@check("SWP-002")
def check_condition_a(ctx: StormwaterContext, rule: Rule) -> gpd.GeoDataFrame:
    """SWP-002 Condition A: runoff discharging to a 303(d)/TMDL impaired water (see :func:`condition_a`)."""
    if not ctx.sites:
        return _no_site(ctx, rule)
    rows = FindingRows(rule, ctx.crs)
    for k, s in enumerate(ctx.sites):  # at most two sites
        _a, status, detail, measured, threshold, geom = condition_a(ctx, rule, k)
        rows.add(status, subject_layer=s.layer, subject_id=s.id, measured=measured, threshold=threshold, unit="ft",
                 geometry=geom, detail=detail)
    return rows.frame()


@check("SWP-003")
def check_condition_b(ctx: StormwaterContext, rule: Rule) -> gpd.GeoDataFrame:
    """SWP-003 Condition B: at least the acreage disturbed during the course of the project."""
    if not ctx.sites:
        return _no_site(ctx, rule)
    found = [condition_b_at(ctx, rule, k) for k in range(len(ctx.sites))]  # at most two sites
    status = [{True: "review", False: "pass", None: "not_evaluated"}[b] for b, _note in found]
    detail = [s.detail + (f"; {note}" if note else "") for s, (_b, note) in zip(ctx.sites, found)]
    return _sites_frame(ctx, rule, status, detail, threshold=rule.t("min_acres"))


@check("SWP-004")
def check_condition_c(ctx: StormwaterContext, rule: Rule) -> gpd.GeoDataFrame:
    """SWP-004 Condition C: between the two acreages, except single-family residences and agricultural properties."""
    if not ctx.sites:
        return _no_site(ctx, rule)
    found = [condition_c_at(ctx, rule, k) for k in range(len(ctx.sites))]  # at most two sites
    status = [st for _ok, st, _why in found]
    detail = [why if st == "pass" else f"{s.detail}; {why}" for s, (_ok, st, why) in zip(ctx.sites, found)]
    return _sites_frame(ctx, rule, status, detail, threshold=rule.t("min_acres"))


def _assumed_dates(sp: SitePhasing, ph: Phasing) -> str:
    """What SWP-005 assumed of the landings and haul roads missing a date (:attr:`SitePhasing.filled`):
    the date filled in, and only that."""
    out = ""
    for kind in ("both", "stabilized", "start"):
        ids = [i for i in sp.assumed if sp.filled.get(i, "both") == kind]
        if not ids:
            continue
        carry, are, their = ("carries", "is", "its") if len(ids) == 1 else ("carry", "are", "their")
        out += f"; {id_list(ids)} {carry} " + {
            "both": (f"no start / stabilized date and {are} assumed disturbed for the whole project, "
                     f"{day_text(ph.start)} to {day_text(ph.end)} (give {their} dates to narrow this)"),
            "stabilized": (f"a start date but no stabilized date and {are} assumed disturbed from {their} start until "
                           f"the project's last stabilisation, {day_text(ph.end)} (give {their} stabilized date"
                           f"{'s' if len(ids) > 1 else ''} to narrow this)"),
            "start": (f"a stabilized date but no start date and {are} assumed disturbed from the project's first "
                      f"start, {day_text(ph.start)}, until {their} stabilisation (give {their} start date"
                      f"{'s' if len(ids) > 1 else ''} to narrow this)")}[kind]
    return out


def _grown_peak(ctx: StormwaterContext, k: int, limit: float) -> str:
    """Why a peak within ``limit`` is not shown to be where site ``k``'s landings are mapped as points or its
    haul roads as lines: the peak with them at their largest size is over it, or cannot be measured (the
    note); ``""`` where it is within it too."""
    g = _grown(ctx, k)
    if g is None:
        return ""
    try:
        sp = site_phasing(g.site)
    except InputError as e:  # a landing joining the project at that size with dates outside the project's
        sp = SitePhasing(None, str(e))
    if sp.phasing is None:
        return grown_note(ctx, g, f"the peak could not be measured ({sp.why})")
    if sp.phasing.peak_acres <= limit + AREA_TOL_ACRES:
        return ""
    when = "; ".join(f"{day_text(a)} to {day_text(b)}" for a, b in sp.phasing.peak_periods)
    return grown_note(ctx, g, f"the peak would be {fixed(sp.phasing.peak_acres)} acres ({when}), more than "
                              f"{fmt_num(limit)} acres")


@check("SWP-005")
def check_phasing(ctx: StormwaterContext, rule: Rule) -> gpd.GeoDataFrame:
    """SWP-005: peak concurrently disturbed area of each site from its phasing dates, at most the limit.

    Landings and haul roads count ("landing areas and log haul roads are subject to this law");
    those without dates are assumed disturbed for the site's whole span and the finding says so.
    A site with no date at all is ``not_evaluated``.
    """
    limit = rule.t("max_concurrent_acres")
    if not ctx.sites:
        return rule.findings("not_evaluated", subject_layer="disturbance", subject_id=SUBJECT, threshold=limit,
                             unit="acres", crs=ctx.crs, detail="no disturbance layer and no landings or haul roads given")
    rows = FindingRows(rule, ctx.crs)
    for k, site in enumerate(ctx.sites):  # at most two sites
        sp = ctx.phasings[k] if k < len(ctx.phasings) else None
        at: dict[str, Any] = {"subject_layer": site.layer, "subject_id": site.id, "threshold": limit, "unit": "acres"}
        if sp is None or sp.phasing is None:
            rows.add("not_evaluated", **at, detail=(f"{sp.why if sp is not None else 'phasing not measured'}; "
                                                    f"{fixed(site.acres)} acres disturbed in all"))
            continue
        ph = sp.phasing
        when = "; ".join(f"{day_text(a)} to {day_text(b)}" for a, b in ph.peak_periods) or "never"
        detail = (f"at its peak from {when} ({', '.join(ph.peak_ids) or 'none'} disturbed); a polygon counts as "
                  f"disturbed from its start date up to the day before its stabilized date; overlapping phases "
                  f"counted once; series in disturbance_timeline")
        if sp.assumed:
            detail += _assumed_dates(sp, ph)
        over = ph.peak_acres > limit + AREA_TOL_ACRES
        if over and ctx.approved_swppp:
            status, detail = "info", detail + "; the phasing is stated to follow an approved SWPPP"
        else:
            status = "violation" if over else "pass"
        if status == "pass" and not ctx.approved_swppp:  # (under an approved SWPPP a larger peak is lawful too)
            big = _grown_peak(ctx, k, limit)
            if big:
                status, detail = "review", f"{detail}; {big}"
        rows.add(status, **at, measured=ph.peak_acres, geometry=ph.peak_geometry, detail=detail)
    return rows.frame()


def _logging_exemption(ctx: StormwaterContext, rule: Rule, exemptions: dict[str, dict], log_key: str | None,
                       rows: FindingRows) -> None:
    """The finding on the harvest plan's exemption (landings and haul roads always count)."""
    logging_exempt = rule.p("logging_exempt")
    harvest = [r for r in ("harvest_area", "landings", "haul_roads") if ctx.layers.get_layer(r) is not None]
    fp = ctx.footprints
    counted = (f"landing areas and log haul roads are subject to the law and counted as disturbance: "
               f"{fixed(ctx.footprint_acres)} acres ({int((fp['kind'] == 'landing').sum())} landing(s), "
               f"{fixed(float(fp.loc[fp['kind'] == 'haul_road', 'length_ft'].sum()), 0)} ft of haul road); "
               f"the harvest area itself is not in the disturbance count")
    whole = _grown_whole(ctx)
    if whole is not None:  # the acres counted rest on the sizes of point landings and the widths of haul roads
        counted += "; " + grown_note(ctx, whole, f"they would disturb {fixed(whole.site.acres)} acres, not "
                                                 f"{fixed(ctx.footprint_acres)}")
    cite = f" ({exemptions[log_key]['citation']})" if log_key else ""
    at: dict[str, Any] = {"subject_layer": "harvest plan", "subject_id": "logging"}
    where: dict[str, Any] = {**at, "geometry": shapely.union_all(fp.geometry.values) if len(fp) else None,
                             "measured": ctx.footprint_acres, "unit": "acres"}
    if not harvest:
        rows.add("info", **at, detail=f"no harvest_area, landings or haul_roads given: the logging exemption{cite} "
                                      f"was not considered")
    elif logging_exempt == "timber_management_plan_only":
        rows.add("review", **where, detail=(
            f"logging is exempt only under a timber management plan prepared or approved by the county soil and "
            f"water conservation district or the DEC{cite} (a town timber harvesting licence is not such a plan): "
            f"confirm the plan, otherwise the harvest's soil disturbance is not exempt; {counted}"))
    elif logging_exempt == "silviculture_except_landings_haul_roads":
        rows.add("info", **where, detail=f"silvicultural activity is exempt{cite}, except that {counted}")
    else:
        raise RulebookError(f"rule SWP-006 in rulebook {rule.rulebook!r}: param logging_exempt={logging_exempt!r} "
                            f"is not timber_management_plan_only or silviculture_except_landings_haul_roads")


def _grown_whole(ctx: StormwaterContext) -> GrownSite | None:
    """Every landing and haul-road footprint at :attr:`StormwaterContext.grown_footprints` (the point
    landings and haul roads that grew, their union's acres), or None where none grew."""
    big = ctx.grown_footprints
    if big is None or not len(big):
        return None
    grew = ~np.isclose(big["area_sqft"].to_numpy(float), ctx.footprints["area_sqft"].to_numpy(float), rtol=1e-9)
    if not grew.any():
        return None
    kind, ids = big["kind"].to_numpy(), big["feature_id"].astype(str).to_numpy()
    geom, acres = union_acres(big.geometry.values)
    site = Site("harvest plan", "logging", geom, acres, "", [])
    return GrownSite(site, [str(i) for i in ids[grew & (kind == "landing")]], [],
                     [str(i) for i in ids[grew & (kind == "haul_road")]])


@check("SWP-006")
def check_exemptions(ctx: StormwaterContext, rule: Rule) -> gpd.GeoDataFrame:
    """SWP-006: which exemptions apply; landings and log haul roads are never exempt."""
    rows = FindingRows(rule, ctx.crs)
    exemptions = {e["key"]: e for e in rule.p("exemptions")}
    log_key = next((k for k in ("silviculture", "logging_under_timber_plan") if k in exemptions), None)
    _logging_exemption(ctx, rule, exemptions, log_key, rows)
    claimed: set[str] = set()
    d = ctx.disturbance
    if d is not None and "use" in d.columns:
        uses = d["use"].map(_norm_use)
        hit = uses.isin(list(exemptions))
        for fid, use, geom in zip(d["feature_id"][hit], uses[hit], d.geometry.values[hit.to_numpy()]):
            e = exemptions[use]
            claimed.add(use)
            rows.add("info", subject_layer="disturbance", subject_id=fid, geometry=geom, detail=(
                f"use {use} matches the exemption '{e['text']}' ({e['citation']}): exempt only if the facts bear "
                f"it out (a human confirms); the polygon is still counted in the acreage"
                + ("; construction at an agricultural property is not agricultural activity (it is only "
                   "excluded from Condition C)" if use == "agricultural" else "")))
    rest = [f"{e['key']} ({e['citation']})" for k, e in exemptions.items() if k not in claimed and k != log_key]
    rows.add("info", subject_layer="disturbance", subject_id="other exemptions",
             detail=f"not shown by the layers, to confirm with the applicant: {', '.join(rest)}")
    return rows.frame()


def _d(col: pd.Series) -> pd.Series:
    return col.dt.strftime("%Y-%m-%d").fillna("")


def qualified_inspector_required(rule: Rule) -> bool:
    """Whether SWP-007 counts only inspections made by a qualified professional: the rule's param
    ``qualified_inspector_required`` (Lockport § 159-7A(2): true; absent: false).

    Raises
    ------
    RulebookError
        A value other than true or false.

    Examples
    --------
    >>> from geoconstraints.rulebook.loader import load_rulebook
    >>> [qualified_inspector_required(load_rulebook(b)["SWP-007"]) for b in ("vestal", "lockport")]
    [False, True]
    """
    v = rule.p("qualified_inspector_required", False)
    if not isinstance(v, bool):
        raise RulebookError(f"rule {rule.id} in rulebook {rule.rulebook!r}: param qualified_inspector_required={v!r} "
                            f"is not true or false. Fix the rulebook")
    return v


def _qualification_unstated(ctx: StormwaterContext, rule: Rule, sch: pd.DataFrame, status: np.ndarray,
                            detail: np.ndarray) -> None:
    """Where only a qualified professional's inspection counts: a row met with an inspection whose
    inspector the log does not state qualified (the inspection ending the gap, or the one it runs
    from) is ``not_evaluated`` saying so, never ``pass`` (``status`` and ``detail`` changed in place)."""
    log, ph = ctx.inspections_log, ctx.phasing
    assert log is not None and ph is not None
    stated = set(log["date"][qualifications(log) == QUALIFIED_YES].map(day_text))  # days a qualified one inspected
    weekly = (sch["reason"] == "weekly").to_numpy()
    # in a period no longer than the interval no interval inspection was due: whoever made one, it passes
    due = ~weekly | ((ph.end - ph.start).days > rule.t("inspection_interval_days"))
    for i in np.flatnonzero((status == "pass") & due):
        days = [day_text(sch["inspection_date"].iloc[i])]
        if weekly[i] and sch["window_start"].iloc[i] != ph.start:  # the gap runs from the previous inspection
            days.insert(0, day_text(sch["window_start"].iloc[i]))
        unstated = [d for d in days if d not in stated]
        if unstated:
            status[i] = "not_evaluated"
            detail[i] += (f"; {rule.citation} requires inspections by a qualified professional, and the log does not "
                          f"state whether the inspector on {and_list(unstated)} is one (its qualified column: yes or "
                          f"no), so this is met only if so")


def _not_counted(ctx: StormwaterContext, rule: Rule, subj: str) -> gpd.GeoDataFrame:
    """One ``info`` finding per inspection in the period the log states was not made by a qualified
    professional (where one is required): it is not counted."""
    log, ph = ctx.inspections_log, ctx.phasing
    assert log is not None and ph is not None
    no = log[(qualifications(log) == QUALIFIED_NO) & (log["date"] >= ph.start) & (log["date"] <= ph.end)]
    who = no["inspector"].where(no["inspector"].str.strip() != "", "inspector not stated")
    return rule.findings("info", subject_layer=subj, subject_id=("inspection " + _d(no["date"]) + " not counted").tolist(),
                         detail=("inspection logged " + _d(no["date"]) + " (" + who + ") is not counted: the log states "
                                 f"the inspector is not a qualified professional, and {rule.citation} requires one"
                                 ).tolist(), crs=ctx.crs)


def _inspection_log_frame(ctx: StormwaterContext, rule: Rule, sch: pd.DataFrame, subj: str) -> gpd.GeoDataFrame:
    """One finding per logged interval inspection and per too-long gap (the gap rule), and one per
    storm inspection (met by a logged one in its window, or missed). Where the rule requires a
    qualified professional (:func:`qualified_inspector_required`), one met with an inspection whose
    inspector's qualification the log does not state is ``not_evaluated``, and each inspection stated
    not by one is listed as not counted."""
    ph = ctx.phasing
    assert ph is not None
    step = rule.t("inspection_interval_days")
    weekly = (sch["reason"] == "weekly").to_numpy()
    met = (sch["status"] == "met").to_numpy()
    nxt = sch["next_inspection"] if "next_inspection" in sch else pd.Series(pd.NaT, index=sch.index)
    gap_end = _d(nxt.fillna(ph.end))
    prev = _d(sch["window_start"])
    labels = np.where(weekly, np.where(met, "inspection " + _d(sch["inspection_date"]),
                                       "gap from " + prev + " to " + gap_end),
                      "storm of " + _d(sch["trigger_date"]))
    insp = sch["inspector"].where(sch["inspector"].str.strip() != "", "inspector not stated")
    required = qualified_inspector_required(rule)
    if required:
        insp = insp + np.where(sch["inspector_qualified"] == QUALIFIED_YES, ", stated a qualified professional", "")
    after = np.where((sch["window_start"] == ph.start).to_numpy(), "the start of disturbance on ",
                     "the previous inspection on ") + prev
    days = sch["gap_days"].map(lambda v: "" if pd.isna(v) else f"{int(v)}") if "gap_days" in sch else ""
    ends_at = np.where(nxt.isna().to_numpy(), "the stabilisation date " + gap_end, "the next inspection " + gap_end)
    w_met = "inspection logged " + _d(sch["inspection_date"]) + " (" + insp + "), " + days + " days after " + after
    w_missed = ("no inspection for " + days + " days, from " + after + " to " + ends_at + f" (more than {fmt_num(step)} "
                "days; one was due by " + _d(sch["due"]) + ")")
    win = _d(sch["window_start"]) + " to " + _d(sch["window_end"])
    rain = sch["precip_in"].map(lambda v: "" if pd.isna(v) else f"{v:.2f}") + " in; "
    s_met = rain + "inspection logged " + _d(sch["inspection_date"]) + " (" + insp + "), within " + win
    s_missed = rain + "no logged inspection from " + win
    detail = np.where(weekly, np.where(met, w_met, w_missed), np.where(met, s_met, s_missed)).astype(object)
    measured = np.where(weekly, pd.to_numeric(sch.get("gap_days", np.nan), errors="coerce"), sch["precip_in"])
    status = np.where(met, "pass", "violation").astype(object)
    if required:
        _qualification_unstated(ctx, rule, sch, status, detail)
    found = rule.findings(status, subject_layer=subj, subject_id=labels,
                          measured=measured, threshold=np.where(weekly, step, rule.t("storm_threshold_in")),
                          unit=np.where(weekly, "days", "in"), detail=detail, crs=ctx.crs)
    return concat_findings([found, _not_counted(ctx, rule, subj)], ctx.crs) if required else found


def _inspection_schedule(ctx: StormwaterContext, rule: Rule, rows: FindingRows, subj: str, why: str) -> None:
    """The rows of a complete schedule without the rainfall or without the log."""
    sch, ph = ctx.schedule, ctx.phasing
    assert sch is not None and ph is not None
    thr = rule.t("storm_threshold_in")
    if ctx.rainfall is None:
        rows.add("not_evaluated", subject_layer=subj, subject_id="storm inspections", threshold=thr, unit="in",
                 detail="no rainfall series given (--rainfall), so inspections after storm events are not "
                        "scheduled or checked")
    if ctx.inspections_log is not None:
        return
    who = str(rule.p("inspector")).replace("_", " ")
    nw, ns = int((sch["reason"] == "weekly").sum()), int((sch["reason"] == "storm").sum())
    storms = (f"{ns} after storm events of {fmt_num(thr)} in or more (storm_event={rule.s('storm_event')})"
              if ctx.rainfall is not None else "storm inspections not scheduled (no rainfall)")
    step = fmt_num(rule.t("inspection_interval_days"))
    rows.add("info", subject_layer=subj, subject_id="schedule", measured=len(sch), unit="count", detail=(
        f"{len(sch)} inspections required by the {who} from {day_text(ph.start)} to {day_text(ph.end)}: at least {nw} "
        f"with no more than {step} days between consecutive inspections (listed on the latest days they may fall) "
        f"and {storms}; {why}; no inspection log given, so none is checked; list in inspections"))


@check("SWP-007")
def check_inspections(ctx: StormwaterContext, rule: Rule) -> gpd.GeoDataFrame:
    """SWP-007: required inspections at the interval and after storms; the log checked against them."""
    subj = "inspections"
    rows = FindingRows(rule, ctx.crs)
    for s in ctx.sites:  # activities other than the disturbance project (the harvest plan's landings and roads)
        if not s.dated and swp007_applies(ctx, rule, s)[0] is not False:
            rows.add("not_evaluated", subject_layer=subj, subject_id=s.id, detail=(
                f"{s.layer} {s.id}: the inspections it needs are not scheduled or checked here (the inspection "
                f"period and the log are those of the disturbance layer's phasing)"))
    applies, why = swp007_applies(ctx, rule, ctx.project)
    dates = ctx.dates
    if applies is False:
        rows.add("pass", subject_layer=subj, subject_id="schedule", detail=f"not required: {why}")
    elif applies is None:
        rows.add("not_evaluated", subject_layer=subj, subject_id="schedule", detail=why)
    elif dates is None or not dates.complete:
        missing = "no start / stabilized dates" if dates is None or not dates.has_fields else (
            f"polygons {id_list(dates.undated)} have no start or stabilized date")
        rows.add("not_evaluated", subject_layer=subj, subject_id="schedule",
                 detail=f"{missing}, so the inspection period is unknown; {why}")
    else:
        _inspection_schedule(ctx, rule, rows, subj, why)
        sch, ph = ctx.schedule, ctx.phasing
        if ctx.inspections_log is not None and sch is not None and ph is not None:
            if not (sch["reason"] == "weekly").any():  # none logged in a period no longer than the interval
                step, days = rule.t("inspection_interval_days"), int((ph.end - ph.start).days)
                rows.add("pass", subject_layer=subj, subject_id="schedule", measured=days, threshold=step, unit="days",
                         detail=(f"no interval inspection was due: {days} days from the start of disturbance on "
                                 f"{day_text(ph.start)} to the stabilisation date {day_text(ph.end)}, not more than "
                                 f"{fmt_num(step)} days (no inspection logged in them); {why}"))
            logged = [_inspection_log_frame(ctx, rule, sch, subj)] if len(sch) else []
            return concat_findings([rows.frame(), *logged], ctx.crs)
    return rows.frame()


def _checklist(rule: Rule) -> list[tuple[str, str]]:
    """(subject, text) of each checklist item the rulebook's numbers give."""
    th = rule.thresholds
    out: list[tuple[str, str]] = []
    if "site_map_scale_ft_per_in" in th:
        out.append(("site map", (f"SWPPP site map at a scale no smaller than 1 inch = "
                                f"{fmt_num(th['site_map_scale_ft_per_in'])} ft")))
    if "sediment_trap_cleanout_pct" in th:
        out.append(("sediment traps", (f"sediment removed from traps and ponds when their design capacity is reduced "
                                      f"by {fmt_num(th['sediment_trap_cleanout_pct'])} %")))
    if "notice_hours" in th:
        stages = ", ".join(str(s).replace("_", " ") for s in rule.p("notice_stages", []))
        to = str(rule.p("notice_to", "the town")).replace("_", " ")
        out.append(("notice", f"{fmt_num(th['notice_hours'])} hours' notice to the {to} before: {stages}"))
    smo = [f"{fmt_num(th[k])} days to {k.split('_')[1]}" for k in ("smo_recommendation_days", "smo_decision_days")
           if k in th]
    if smo:
        out.append(("SMO deadlines", "stormwater management officer: " + "; ".join(smo)))
    if "first_offence_max_fine_usd" in th:
        jail = (f"{fmt_num(th['max_jail_days'])} days" if "max_jail_days" in th else
                f"{fmt_num(th['max_jail_months'])} months" if "max_jail_months" in th else "as the law provides")
        window = (f" within {fmt_num(th['repeat_offence_window_months'] / 12)} years"
                  if "repeat_offence_window_months" in th else "")
        usd = {k: f"${th.get(k, 0):,.0f}" for k in ("first_offence_max_fine_usd", "second_offence_min_fine_usd",
                                                    "second_offence_max_fine_usd", "third_offence_min_fine_usd",
                                                    "third_offence_max_fine_usd")}
        out.append(("penalties", (
            f"first offence fine up to {usd['first_offence_max_fine_usd']}; second {usd['second_offence_min_fine_usd']} "
            f"to {usd['second_offence_max_fine_usd']}; third {usd['third_offence_min_fine_usd']} to "
            f"{usd['third_offence_max_fine_usd']}{window}; imprisonment up to {jail}; each week's continued violation "
            f"is a separate violation")))
    prep = rule.p("swppp_preparer", None)
    if prep:
        out.append(("SWPPP preparer", "prepared by: " + ", ".join(str(p).replace("_", " ") for p in prep)))
    return out


@check("SWP-008")
def check_checklist(ctx: StormwaterContext, rule: Rule) -> gpd.GeoDataFrame:
    """SWP-008: checklist items the geometry cannot check (``info``), from the rulebook's numbers."""
    items = _checklist(rule)
    return rule.findings("info", subject_id=[s for s, _ in items], crs=ctx.crs, detail=[t for _, t in items])
