"""Stormwater checks: SWP-001..SWP-008 (Vestal's and Lockport's stormwater law, per rulebook).

:func:`geoconstraints.commands.check_stormwater` builds the :class:`StormwaterContext` (the
layers, the measured sites and the parsed schedule inputs) and runs them; each check returns
one findings frame. Every sentence of a finding's ``{detail}`` is one of the rule's ``phrases`` in the
rulebook (:meth:`~geoconstraints.rulebook.model.Rule.phrase`); the note on landings mapped as points and
haul roads mapped as lines at their largest (:func:`grown_note`) is a phrase of each rule saying it
(SWP-001..006, the same keys), and the reason SWP-007 gives for a condition is that of the rule deciding it.
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
    FilledDatesError,
    GrownSite,
    Phasing,
    PhasingDates,
    Site,
    SitePhasing,
    grown_sites,
    harvest_footprints,
    qualifications,
    site_facts,
    site_phasing,
    union_acres,
)
from geoconstraints.io.layers import Layers
from geoconstraints.rulebook.findings import concat_findings
from geoconstraints.rulebook.loader import threshold_order_problem
from geoconstraints.rulebook.model import FindingRows, Rule, Rulebook
from geoconstraints.rulebook.registry import check
from geoconstraints.rulebook.render import fmt_num
from geoconstraints.rules import dem_cells
from geoconstraints.rules.dem_cells import cell_text
from geoconstraints.text import day_text, fixed, id_list, is_blank
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
        return tuple(grown_sites(self.disturbance, self.footprints, big, self.sites, road_width_ft=_counted_width(self, big)))


def _counted_width(ctx: StormwaterContext, fp: gpd.GeoDataFrame) -> float:
    """The width the haul roads of ``fp`` are counted at in a site's facts (SWP-006's ``haul_road_width_ft``;
    0 without a haul road)."""
    return ctx.rulebook.rules["SWP-006"].t("haul_road_width_ft") if (fp["kind"] == "haul_road").any() else 0.0


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


LOG_LANDING_ACRES = {"often_min": "1/4", "often_max": "1"}
"""The acres a log landing commonly covers (SWP-006's notes), the numbers of the phrases ``landing_counted``
and ``landing_multi_counted`` (fields, not words of the phrase: a number in a rule's text is one of its
thresholds, tests/test_rulebook_text.py)."""


def _landing_clause(ctx: StormwaterContext, rule: Rule, g: GrownSite) -> tuple[str, str, str]:
    """The landings of ``g`` mapped as points: ``(what was counted, what is largest, the fix)``, worded by
    ``rule``'s phrases. A landing mapped as several points (a MultiPoint) is a disc per point: the sizes are
    per point, with its total (the area of its discs, overlaps counted once)."""
    typical, most = point_landing_sizes(ctx.rulebook.rules["SWP-006"])
    sizes = {"default_landing_area_sqft": fmt_num(typical), "max_point_landing_area_sqft": fmt_num(most)}
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
    one = len(g.points) == 1
    fix = rule.phrase("fix_landing" if one else "fix_landings")
    if one and multi_ids:
        i = multi_ids[0]
        counted = rule.phrase("landing_multi_counted", id=i, points=n_of[i], total=total(fp, i), **sizes,
                              **LOG_LANDING_ACRES)
        largest = rule.phrase("landing_multi_largest", total=total(big, i), **sizes)
        return counted, largest, fix
    who = (rule.phrase("landing_point", id=g.points[0]) if one else
           rule.phrase("landings_points", ids=id_list(g.points)))
    each = "" if one else " " + rule.phrase("per_point" if multi_ids else "each")
    in_all = "".join("; " + rule.phrase("multi_points", id=i, points=n_of[i], total=total(fp, i)) for i in multi_ids)
    big_all = "".join("; " + rule.phrase("multi_total", id=i, total=total(big, i)) for i in multi_ids)
    counted = rule.phrase("landing_counted", who=who, each=each, in_all=in_all, **sizes, **LOG_LANDING_ACRES)
    largest = rule.phrase("landing_largest", each=each, big_all=big_all, **sizes)
    return counted, largest, fix


def _road_clause(ctx: StormwaterContext, rule: Rule, g: GrownSite) -> tuple[str, str, str]:
    """The haul roads of ``g`` counted wider: ``(what was counted, what is largest, the fix)``, worded by
    ``rule``'s phrases."""
    width, widest = haul_road_widths(ctx.rulebook.rules["SWP-006"])
    fp = ctx.footprints
    rows = fp[(fp["kind"] == "haul_road").to_numpy() & np.isin(fp["feature_id"].astype(str).to_numpy(), g.roads)]
    length = fixed(float(rows["length_ft"].sum()), 0)
    one = len(g.roads) == 1
    who = (rule.phrase("road_line", id=g.roads[0], length=length) if one else
           rule.phrase("roads_lines", ids=id_list(g.roads), length=length))
    fix = rule.phrase("fix_road" if one else "fix_roads")
    counted = rule.phrase("road_counted", who=who, haul_road_width_ft=fmt_num(width))
    return counted, rule.phrase("road_largest", max_haul_road_width_ft=fmt_num(widest)), fix


def grown_note(ctx: StormwaterContext, rule: Rule, g: GrownSite, effect: str) -> str:
    """Why a finding of ``rule`` rests on the size of landings mapped as points and the width of haul roads
    mapped as lines: the size counted, the largest (SWP-006), what the larger sizes would do (``effect``)
    and the fix, worded by ``rule``'s phrases (``grown`` and the phrases of the landing and road clauses,
    the same keys in every rule that says it: SWP-001..006)."""
    parts = ([_landing_clause(ctx, rule, g)] if g.points else []) + ([_road_clause(ctx, rule, g)] if g.roads else [])
    if len(parts) == 1:
        said, most, fix = parts[0]
    else:
        said, most, fix = (rule.phrase(f"both_{k}", landings=parts[0][n], roads=parts[1][n])
                           for n, k in enumerate(("counted", "largest", "fix")))
    joined = ("; " + rule.phrase("joined_one" if len(parts) == 1 else "joined_both", ids=id_list(g.joined))
              if g.joined else "")
    return rule.phrase("grown", counted=said, largest=most, effect=effect, joined=joined, fix=fix)


# ------------------------------------------------------------------------------------------------
# conditions shared by several rules

def land_development(acres: float, larger_common_plan: bool | float | None, rule: Rule) -> tuple[bool | None, str, str]:
    """SWP-001: is this a land development activity? ``(applies, status, detail)``, the detail worded by
    ``rule``'s phrases.

    Under the acreage it is one when part of a larger common plan of development or sale: that
    must be stated (``larger_common_plan`` True, False or the plan's aggregate acres); when it is
    not (None), ``applies`` is None and the status ``not_evaluated``.

    Examples
    --------
    >>> from geoconstraints.rulebook.loader import load_rulebook
    >>> land_development(0.5, 3.0, load_rulebook("lockport")["SWP-001"])
    (True, 'review', 'part of a larger common plan disturbing 3.00 acres in the aggregate, at least 1 acre')
    """
    min_acres = rule.t("min_disturbed_acres")
    least = f"{min_acres:g}"
    if acres >= min_acres - AREA_TOL_ACRES:
        return True, "review", rule.phrase("at_least", min_disturbed_acres=least)
    if larger_common_plan is None:
        return None, "not_evaluated", rule.phrase("plan_unstated", min_disturbed_acres=least)
    if larger_common_plan is False:
        return False, "pass", rule.phrase("no_plan")
    test = rule.s("common_plan_test")
    if test == "any_part":
        return True, "review", rule.phrase("any_part")
    agg = rule.thresholds.get("common_plan_aggregate_acres", rule.params.get("common_plan_aggregate_acres"))
    if agg is None:
        raise RulebookError(f"rule SWP-001 in rulebook {rule.rulebook!r}: common_plan_test=aggregate_min needs "
                            f"a threshold common_plan_aggregate_acres")
    agg = float(agg)
    plan = {"common_plan_aggregate_acres": f"{agg:g}"}
    if isinstance(larger_common_plan, (bool, np.bool_)):
        return True, "review", rule.phrase("plan_aggregate_unknown", **plan)
    total = float(larger_common_plan)
    if total >= agg - AREA_TOL_ACRES:
        return True, "review", rule.phrase("plan_covered", total=fixed(total), **plan)
    return False, "pass", rule.phrase("plan_under", total=fixed(total), **plan)


def condition_b(acres: float, rule: Rule) -> bool:
    """SWP-003 Condition B: at least ``min_acres`` disturbed."""
    return acres >= rule.t("min_acres") - AREA_TOL_ACRES


def condition_c(acres: float, uses: Sequence[str], rule: Rule) -> tuple[bool, str, str]:
    """SWP-004 Condition C: ``min_acres`` to under ``max_acres``, except exempt uses.

    Returns ``(applies, status, detail)``, the detail worded by ``rule``'s phrases. The exclusion applies
    when every disturbance polygon's ``use`` is one of ``exempt_uses`` (a project wholly of single-family or
    agricultural construction).

    Examples
    --------
    >>> from geoconstraints.rulebook.loader import load_rulebook
    >>> condition_c(2.0, ["single_family", "retail"], load_rulebook("vestal")["SWP-004"])
    (True, 'review', 'uses retail are not excluded (only single-family or agricultural construction is)')
    """
    lo, hi = rule.t("min_acres"), rule.t("max_acres")
    a = fixed(acres)
    if acres < lo - AREA_TOL_ACRES:
        return False, "pass", rule.phrase("under", acres=a, min_acres=f"{lo:g}")
    if acres >= hi - AREA_TOL_ACRES:
        return False, "pass", rule.phrase("over", acres=a, max_acres=f"{hi:g}")
    exempt = {_norm_use(u) for u in rule.p("exempt_uses")}
    used = [_norm_use(u) for u in uses]
    if used and all(u in exempt for u in used):
        return False, "pass", rule.phrase("excluded", acres=a, uses=", ".join(sorted(set(used))))
    if not any(used):
        return True, "review", rule.phrase("no_use")
    others = sorted({u or rule.phrase("use_not_stated") for u in used if u not in exempt})
    return True, "review", rule.phrase("not_excluded", uses=", ".join(others))


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
    note = grown_note(ctx, rule, g, rule.phrase("grown_effect", acres=fixed(g.site.acres)))
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
    return None, grown_note(ctx, rule, g, rule.phrase("grown_effect", acres=fixed(g.site.acres)))


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
    effect = rule.phrase("grown_effect_band" if crosses else "grown_effect_use", acres=fixed(g.site.acres))
    return None, "not_evaluated", f"{why}; {grown_note(ctx, rule, g, effect)}"


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
    (SWP-002's phrase ``coarse_pass``, :mod:`~geoconstraints.rules.dem_cells`); a path reaching the water on it stays
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
    note = grown_note(ctx, rule, g, rule.phrase("grown_effect", status=big[1].replace("_", " "), detail=big[2]))
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
    """:func:`condition_a` of one site and its flow paths, as mapped (worded by ``rule``'s phrases)."""
    limit = rule.t("impaired_water_distance_ft")
    dist = _impaired_distance(ctx, site)
    if dist is None:
        return None, "not_evaluated", rule.phrase("no_waters"), np.nan, limit, None
    d, label, line = dist
    near = rule.phrase("nearest", water=label, distance=fixed(d, 0))
    if d <= limit:
        return True, "review", rule.phrase("within", near=near), d, limit, line if d > 0 else site.geometry
    if flow is None:
        why = rule.phrase("give_dem" if not ctx.dem_given else "not_traced")
        return None, "not_evaluated", rule.phrase("beyond", near=near, why=why), d, limit, line
    maxl = rule.t("max_flow_path_ft")
    cell, max_cell = _dem_cell_ft(ctx), rule.t("max_dem_cell_ft")
    coarse = not cell_within(cell, max_cell)
    grid = f"; {rule.phrase('coarse_cells', cell=cell_text(cell))}" if coarse else ""
    shallow = f"; {rule.phrase('shallow_filled', count=flow.filled)}" if flow.filled else ""
    traced = rule.phrase("traced", cells=flow.source_cells, shallow=shallow)
    if flow.reached:
        return True, "review", rule.phrase("reached", traced=traced, water=_reached_label(ctx, rule, flow),
                                           length=fixed(flow.length_ft, 0), near=near, grid=grid), \
            flow.length_ft, maxl, flow.path
    ends = ", ".join(f"{n} {k_}" for k_, n in flow.ends.items())
    if not flow.complete:
        cut = {"edge": rule.phrase("cut_edge"), "limit": rule.phrase("cut_limit")}
        hit = [cut[k_] for k_ in cut if flow.ends.get(k_)]
        how = (rule.phrase("cut_both", edge=hit[0], limit=hit[1]) if len(hit) == 2 else hit[0] if hit
               else cut.get(flow.outcome, flow.outcome))
        longest = f"; {rule.phrase('longest', length=fixed(flow.length_ft, 0))}" if flow.ends.get("limit") else ""
        return None, "not_evaluated", rule.phrase("not_followed", traced=traced, how=how, ends=ends, longest=longest,
                                                  near=near, grid=grid), \
            flow.length_ft, maxl, flow.end_points
    min_depth = rule.t("min_depression_depth_ft")
    deep = f" {rule.phrase('deep')}" if min_depth > 0 else ""
    every = rule.phrase("every", traced=traced, how=rule.phrase("closed", deep=deep, ends=ends, near=near,
                                                                length=fixed(flow.length_ft, 0)))
    reading = rule.s("undrained_path_end")
    if reading == "not_evaluated":
        return None, "not_evaluated", rule.phrase("undrained_not_evaluated", every=every, grid=grid), flow.length_ft, \
            maxl, flow.end_points
    if coarse:  # a grid too coarse to show a ditch out of the depression: its pass is no promise
        return None, "not_evaluated", rule.phrase("coarse_pass", cell=cell_text(cell), found=every,
                                                  fix=rule.phrase("finer_dem", **dem_cells.FINER_DEM_NAMES)), cell, max_cell, \
            flow.end_points
    return False, "pass", rule.phrase("no_discharge", every=every), flow.length_ft, maxl, flow.end_points


def _dem_cell_ft(ctx: StormwaterContext) -> float:
    """The DEM's cell (the larger side, international feet; NaN without a DEM: never within a limit)."""
    dem = ctx.layers.dem
    return float(dem.max_cell_size_ft) if dem is not None else float("nan")


def _reached_label(ctx: StormwaterContext, rule: Rule, flow: FlowTrace) -> str:
    waters = ctx.layers.get_layer("impaired_waters")
    if waters is None or flow.path is None:
        return rule.phrase("unnamed")
    end = shapely.get_point(flow.path, -1) if flow.path.geom_type == "LineString" else flow.path
    return _water_label(waters, int(np.argmin(shapely.distance(end, waters.geometry.values))))


def _rule_or_none(rb: Rulebook, rid: str) -> Rule | None:
    return rb.rules.get(rid)


_CONDITION_RULES = (("A", "SWP-002"), ("B", "SWP-003"), ("C", "SWP-004"))
"""Lockport's Conditions A, B, C and the rules defining them (SWP-007 applies_to=conditions_abc)."""


def _and(rule: Rule, names: Sequence[str]) -> str:
    """Words joined as a sentence lists them (:func:`~geoconstraints.text.and_list`), the last two by ``rule``'s
    phrase ``and_list``.

    Examples
    --------
    >>> from geoconstraints.rulebook.loader import load_rulebook
    >>> _and(load_rulebook("lockport")["SWP-007"], ["A", "B", "C"])
    'A, B and C'
    """
    names = list(names)
    if len(names) <= 1:
        return "".join(names)
    return rule.phrase("and_list", first=", ".join(names[:-1]), last=names[-1])


def _conditions(rule: Rule, names: Sequence[str]) -> str:
    """'Condition A (...)' or 'Conditions B and C' (SWP-007's phrases ``condition`` / ``conditions``)."""
    return rule.phrase("conditions" if len(names) > 1 else "condition", names=_and(rule, names))


def swp007_applies(ctx: StormwaterContext, rule: Rule, site: Site | None) -> tuple[bool | None, str]:
    """Whether SWP-007 inspections are required for ``site``, from ``applies_to`` and the conditions, and why
    (SWP-007's phrases; the reason a condition is met or not is that of the rule deciding it, in its phrases).

    ``all_land_development`` (Vestal): every land development activity (SWP-001).
    ``conditions_abc`` (Lockport): only when Condition A, B or C applies. ``None`` when unknown.
    """
    applies_to = rule.p("applies_to")
    if site is None:
        return None, rule.phrase("no_disturbance")
    rb = ctx.rulebook
    acres = fixed(site.acres)
    k = _site_index(ctx, site)
    if applies_to == "all_land_development":
        r1 = _rule_or_none(rb, "SWP-001")
        if r1 is None:
            return True, rule.phrase("no_development_rule")
        ok, _st, why = land_development_at(ctx, r1, k)
        if ok:
            return True, rule.phrase("land_development", acres=acres, why=why)
        if ok is None:
            return None, rule.phrase("land_development_unknown", acres=acres, why=why)
        return False, rule.phrase("not_land_development", acres=acres, why=why)
    if applies_to == "conditions_abc":
        met: list[str] = []
        unknown: list[str] = []
        no: list[str] = []
        for cond, rid in _CONDITION_RULES:
            r = _rule_or_none(rb, rid)
            applies: bool | None
            why = ""
            if r is None:  # undecided, never "does not apply": the rule deciding it is not in this rulebook
                applies, why = None, rule.phrase("no_condition_rule", rid=rid, condition=cond)
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
            return True, rule.phrase("conditions_met", conditions=", ".join(met))
        if unknown:
            undecided = rule.phrase("undecided", conditions=_conditions(rule, unknown))
            if not no:
                return None, undecided
            return None, rule.phrase("not_apply_one" if len(no) == 1 else "not_apply_many",
                                     conditions=_conditions(rule, no), undecided=undecided)
        return False, rule.phrase("no_condition")
    raise RulebookError(f"rule SWP-007 in rulebook {rule.rulebook!r}: param applies_to={applies_to!r} is not "
                        f"all_land_development or conditions_abc")


# ------------------------------------------------------------------------------------------------
# checks

def _no_site(ctx: StormwaterContext, rule: Rule) -> gpd.GeoDataFrame:
    return rule.findings("not_evaluated", subject_layer="disturbance", subject_id=SUBJECT, crs=ctx.crs,
                         detail=rule.phrase("no_site"))


def _site_detail(rule: Rule, site: Site) -> str:
    """What site ``site`` is made of and its acres, worded by ``rule``'s phrases (SWP-001, SWP-003, SWP-004)
    from the facts :func:`~geoconstraints.geometry.phasing.build_sites` measured (:attr:`Site.facts`): the
    disturbance polygons' union and the landings and haul roads connected to it, or the harvest plan's
    landings and haul roads."""
    f = site.facts
    bits = []
    if f.landings:
        bits.append(rule.phrase("site_landings", count=f.landings))
    if f.roads:
        bits.append(rule.phrase("site_roads", length=fixed(f.road_ft, 0), width=fixed(f.road_width_ft, 0)))
    footprints = rule.phrase("site_landings_roads", landings=bits[0], roads=bits[1]) if len(bits) == 2 else "".join(bits)
    if f.kind == "project":
        out = rule.phrase("site_union", count=f.polygons, acres=fixed(f.polygons_acres))
        if bits:
            out += "; " + rule.phrase("site_connected", footprints=footprints, acres=fixed(site.acres))
        return out + "; " + rule.phrase("site_overlaps")
    out = rule.phrase("site_harvest", footprints=footprints, acres=fixed(site.acres))
    return out + ("; " + rule.phrase("site_unconnected") if f.apart else "")


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
    detail = [f"{_site_detail(rule, s)}; {why}" for s, (_ok, _st, why) in zip(ctx.sites, found)]
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
    detail = [_site_detail(rule, s) + (f"; {note}" if note else "") for s, (_b, note) in zip(ctx.sites, found)]
    return _sites_frame(ctx, rule, status, detail, threshold=rule.t("min_acres"))


@check("SWP-004")
def check_condition_c(ctx: StormwaterContext, rule: Rule) -> gpd.GeoDataFrame:
    """SWP-004 Condition C: between the two acreages, except single-family residences and agricultural properties."""
    if not ctx.sites:
        return _no_site(ctx, rule)
    found = [condition_c_at(ctx, rule, k) for k in range(len(ctx.sites))]  # at most two sites
    status = [st for _ok, st, _why in found]
    detail = [why if st == "pass" else f"{_site_detail(rule, s)}; {why}" for s, (_ok, st, why) in zip(ctx.sites, found)]
    return _sites_frame(ctx, rule, status, detail, threshold=rule.t("min_acres"))


def _assumed_dates(rule: Rule, sp: SitePhasing, ph: Phasing) -> str:
    """What SWP-005 assumed of the landings and haul roads missing a date (:attr:`SitePhasing.filled`):
    the date filled in, and only that (``rule``'s phrases ``assumed_<date filled>_one`` / ``_many``)."""
    out = ""
    for kind in ("both", "stabilized", "start"):
        ids = [i for i in sp.assumed if sp.filled.get(i, "both") == kind]
        if not ids:
            continue
        out += "; " + rule.phrase(f"assumed_{kind}_{'one' if len(ids) == 1 else 'many'}", ids=id_list(ids),
                                  start=day_text(ph.start), end=day_text(ph.end))
    return out


def _no_peak(rule: Rule, site: Site, sp: SitePhasing | None) -> str:
    """Why site ``site`` has no phasing (``sp.phasing`` None), in ``rule``'s (SWP-005's) phrases: the phrase of
    the reason :func:`~geoconstraints.geometry.phasing.site_phasing` recorded (:attr:`SitePhasing.why
    <geoconstraints.geometry.phasing.SitePhasing>`: ``nothing_to_phase``, ``no_dates``, ``undated`` over the
    polygons ``sp.undated``, ``none_dated`` over the site's layer); ``not_measured`` without a phasing."""
    if sp is None:
        return rule.phrase("not_measured")
    if sp.why == "undated":
        return rule.phrase("undated", ids=id_list(sp.undated))
    if sp.why == "none_dated":
        return rule.phrase("none_dated", layer=site.layer)
    return rule.phrase(sp.why)


def _periods(rule: Rule, periods: Sequence[tuple[Any, Any]]) -> str:
    return "; ".join(rule.phrase("period", start=day_text(a), end=day_text(b)) for a, b in periods)


def _grown_peak(ctx: StormwaterContext, rule: Rule, k: int, limit: float) -> str:
    """Why a peak within ``limit`` is not shown to be where site ``k``'s landings are mapped as points or its
    haul roads as lines: the peak with them at their largest size is over it, or cannot be measured (the
    note); ``""`` where it is within it too. A landing joining the project at that size with dates outside the
    project's span (:class:`~geoconstraints.geometry.phasing.FilledDatesError`) is the phrase ``dates_outside``;
    any other error of the dates (read already for the site as mapped, so not met here) its own message."""
    g = _grown(ctx, k)
    if g is None:
        return ""
    try:
        sp = site_phasing(g.site)
    except FilledDatesError as e:
        why = rule.phrase("dates_outside", ids=id_list(e.ids), start=day_text(e.start), end=day_text(e.end))
        return grown_note(ctx, rule, g, rule.phrase("grown_unmeasured", why=why))
    except InputError as e:
        return grown_note(ctx, rule, g, rule.phrase("grown_unmeasured", why=str(e)))
    if sp.phasing is None:
        return grown_note(ctx, rule, g, rule.phrase("grown_unmeasured", why=_no_peak(rule, g.site, sp)))
    if sp.phasing.peak_acres <= limit + AREA_TOL_ACRES:
        return ""
    return grown_note(ctx, rule, g, rule.phrase("grown_over", acres=fixed(sp.phasing.peak_acres),
                                                when=_periods(rule, sp.phasing.peak_periods)))


@check("SWP-005")
def check_phasing(ctx: StormwaterContext, rule: Rule) -> gpd.GeoDataFrame:
    """SWP-005: peak concurrently disturbed area of each site from its phasing dates, at most the limit.

    Landings and haul roads count ("landing areas and log haul roads are subject to this law");
    those without dates are assumed disturbed for the site's whole span and the finding says so.
    A site with no date at all is ``not_evaluated``. Every sentence is one of the rule's phrases.
    """
    limit = rule.t("max_concurrent_acres")
    if not ctx.sites:
        return rule.findings("not_evaluated", subject_layer="disturbance", subject_id=SUBJECT, threshold=limit,
                             unit="acres", crs=ctx.crs, detail=rule.phrase("no_site"))
    rows = FindingRows(rule, ctx.crs)
    for k, site in enumerate(ctx.sites):  # at most two sites
        sp = ctx.phasings[k] if k < len(ctx.phasings) else None
        at: dict[str, Any] = {"subject_layer": site.layer, "subject_id": site.id, "threshold": limit, "unit": "acres"}
        if sp is None or sp.phasing is None:
            rows.add("not_evaluated", **at, detail=f"{_no_peak(rule, site, sp)}; "
                                                   f"{rule.phrase('in_all', acres=fixed(site.acres))}")
            continue
        ph = sp.phasing
        detail = rule.phrase("peak", when=_periods(rule, ph.peak_periods) or rule.phrase("never"),
                             ids=", ".join(ph.peak_ids) or rule.phrase("none"))
        if sp.assumed:
            detail += _assumed_dates(rule, sp, ph)
        over = ph.peak_acres > limit + AREA_TOL_ACRES
        if over and ctx.approved_swppp:
            status, detail = "info", f"{detail}; {rule.phrase('approved')}"
        else:
            status = "violation" if over else "pass"
        if status == "pass" and not ctx.approved_swppp:  # (under an approved SWPPP a larger peak is lawful too)
            big = _grown_peak(ctx, rule, k, limit)
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
    counted = rule.phrase("counted", acres=fixed(ctx.footprint_acres), landings=int((fp["kind"] == "landing").sum()),
                          length=fixed(float(fp.loc[fp["kind"] == "haul_road", "length_ft"].sum()), 0))
    whole = _grown_whole(ctx)
    if whole is not None:  # the acres counted rest on the sizes of point landings and the widths of haul roads
        counted += "; " + grown_note(ctx, rule, whole, rule.phrase("grown_effect", acres=fixed(whole.site.acres),
                                                                   counted=fixed(ctx.footprint_acres)))
    cite = f" ({exemptions[log_key]['citation']})" if log_key else ""
    at: dict[str, Any] = {"subject_layer": "harvest plan", "subject_id": "logging"}
    where: dict[str, Any] = {**at, "geometry": shapely.union_all(fp.geometry.values) if len(fp) else None,
                             "measured": ctx.footprint_acres, "unit": "acres"}
    if not harvest:
        rows.add("info", **at, detail=rule.phrase("no_harvest", cite=cite))
    elif logging_exempt == "timber_management_plan_only":
        rows.add("review", **where, detail=rule.phrase("timber_plan_only", cite=cite, counted=counted))
    elif logging_exempt == "silviculture_except_landings_haul_roads":
        rows.add("info", **where, detail=rule.phrase("silviculture", cite=cite, counted=counted))
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
    site = Site("harvest plan", "logging", geom, acres, site_facts("harvest_plan", big, _counted_width(ctx, big)), [])
    return GrownSite(site, [str(i) for i in ids[grew & (kind == "landing")]], [],
                     [str(i) for i in ids[grew & (kind == "haul_road")]])


@check("SWP-006")
def check_exemptions(ctx: StormwaterContext, rule: Rule) -> gpd.GeoDataFrame:
    """SWP-006: which exemptions apply; landings and log haul roads are never exempt (every sentence one of the
    rule's phrases)."""
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
            note = "; " + rule.phrase("agricultural_note") if use == "agricultural" else ""
            rows.add("info", subject_layer="disturbance", subject_id=fid, geometry=geom,
                     detail=rule.phrase("use_matches", use=use, text=e["text"], citation=e["citation"]) + note)
    rest = [f"{e['key']} ({e['citation']})" for k, e in exemptions.items() if k not in claimed and k != log_key]
    rows.add("info", subject_layer="disturbance", subject_id="other exemptions",
             detail=rule.phrase("other_exemptions", others=", ".join(rest)))
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


def _qualification_unstated(rule: Rule, sch: pd.DataFrame, log: pd.DataFrame, ph: Phasing, status: np.ndarray,
                            detail: np.ndarray) -> None:
    """Where only a qualified professional's inspection counts: a row met with an inspection whose
    inspector the log (``log``) does not state qualified (the inspection ending the gap, or the one it runs
    from) is ``not_evaluated`` saying so, never ``pass`` (``status`` and ``detail`` changed in place); ``ph``
    the phasing the schedule ``sch`` covers."""
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
            detail[i] += "; " + rule.phrase("qualification_unstated", citation=rule.citation, days=_and(rule, unstated))


def _inspector(rule: Rule, names: pd.Series) -> pd.Series:
    """The inspector of each inspection, ``inspector_unstated`` (SWP-007's phrase) where the log gives none."""
    return names.where(names.str.strip() != "", rule.phrase("inspector_unstated"))


def _not_counted(ctx: StormwaterContext, rule: Rule, log: pd.DataFrame, ph: Phasing, subj: str) -> gpd.GeoDataFrame:
    """One ``info`` finding per inspection in the period (``ph``) the log states was not made by a qualified
    professional (where one is required): it is not counted."""
    no = log[(qualifications(log) == QUALIFIED_NO) & (log["date"] >= ph.start) & (log["date"] <= ph.end)]
    days = _d(no["date"])
    return rule.findings("info", subject_layer=subj, subject_id=("inspection " + days + " not counted").tolist(),
                         detail=[rule.phrase("not_counted", date=d, inspector=w, citation=rule.citation)
                                 for d, w in zip(days, _inspector(rule, no["inspector"]))], crs=ctx.crs)


def _inspection_log_frame(ctx: StormwaterContext, rule: Rule, sch: pd.DataFrame, log: pd.DataFrame, ph: Phasing,
                          subj: str) -> gpd.GeoDataFrame:
    """One finding per logged interval inspection and per too-long gap (the gap rule), and one per
    storm inspection (met by a logged one in its window, or missed), worded by SWP-007's phrases. Where the
    rule requires a qualified professional (:func:`qualified_inspector_required`), one met with an inspection
    whose inspector's qualification the log does not state is ``not_evaluated``, and each inspection stated
    not by one is listed as not counted. ``sch`` is the schedule matched to the inspection log ``log``
    over the phasing ``ph``."""
    step = rule.t("inspection_interval_days")
    weekly = (sch["reason"] == "weekly").to_numpy()
    met = (sch["status"] == "met").to_numpy()
    nxt = sch["next_inspection"] if "next_inspection" in sch else pd.Series(pd.NaT, index=sch.index)
    gap_end = _d(nxt.fillna(ph.end))
    prev = _d(sch["window_start"])
    done = _d(sch["inspection_date"])
    labels = np.where(weekly, np.where(met, "inspection " + done, "gap from " + prev + " to " + gap_end),
                      "storm of " + _d(sch["trigger_date"]))
    insp = _inspector(rule, sch["inspector"])
    required = qualified_inspector_required(rule)
    if required:
        insp = insp + np.where(sch["inspector_qualified"] == QUALIFIED_YES, ", " + rule.phrase("stated_qualified"), "")
    first = (sch["window_start"] == ph.start).to_numpy()
    after = [rule.phrase("after_start" if f else "after_previous", date=d) for f, d in zip(first, prev)]
    days = (sch["gap_days"].map(lambda v: "" if pd.isna(v) else f"{int(v)}") if "gap_days" in sch
            else pd.Series("", index=sch.index))
    ends_at = [rule.phrase("ends_stabilisation" if n else "ends_next", date=d) for n, d in zip(nxt.isna(), gap_end)]
    win_end, due = _d(sch["window_end"]), _d(sch["due"])
    rain = sch["precip_in"].map(lambda v: "" if pd.isna(v) else f"{v:.2f}")
    detail = np.empty(len(sch), dtype=object)
    for i in range(len(sch)):
        if weekly[i] and met[i]:
            detail[i] = rule.phrase("weekly_met", date=done.iloc[i], inspector=insp.iloc[i], days=days.iloc[i],
                                    after=after[i])
        elif weekly[i]:
            detail[i] = rule.phrase("weekly_missed", days=days.iloc[i], after=after[i], ends=ends_at[i],
                                    due=due.iloc[i])
        elif met[i]:
            detail[i] = rule.phrase("storm_met", rain=rain.iloc[i], date=done.iloc[i], inspector=insp.iloc[i],
                                    start=prev.iloc[i], end=win_end.iloc[i])
        else:
            detail[i] = rule.phrase("storm_missed", rain=rain.iloc[i], start=prev.iloc[i], end=win_end.iloc[i])
    measured = np.where(weekly, pd.to_numeric(sch.get("gap_days", np.nan), errors="coerce"), sch["precip_in"])
    status = np.where(met, "pass", "violation").astype(object)
    if required:
        _qualification_unstated(rule, sch, log, ph, status, detail)
    found = rule.findings(status, subject_layer=subj, subject_id=labels,
                          measured=measured, threshold=np.where(weekly, step, rule.t("storm_threshold_in")),
                          unit=np.where(weekly, "days", "in"), detail=detail, crs=ctx.crs)
    return concat_findings([found, _not_counted(ctx, rule, log, ph, subj)], ctx.crs) if required else found


def _inspection_schedule(ctx: StormwaterContext, rule: Rule, rows: FindingRows, sch: pd.DataFrame, ph: Phasing,
                         subj: str, why: str) -> None:
    """The rows of a complete schedule (``sch``, over the phasing ``ph``) without the rainfall or without the log."""
    thr = rule.t("storm_threshold_in")
    if ctx.rainfall is None:
        rows.add("not_evaluated", subject_layer=subj, subject_id="storm inspections", threshold=thr, unit="in",
                 detail=rule.phrase("no_rainfall"))
    if ctx.inspections_log is not None:
        return
    who = str(rule.p("inspector")).replace("_", " ")
    nw, ns = int((sch["reason"] == "weekly").sum()), int((sch["reason"] == "storm").sum())
    storms = (rule.phrase("storms", count=ns, storm_threshold_in=fmt_num(thr)) if ctx.rainfall is not None
              else rule.phrase("storms_unscheduled"))
    rows.add("info", subject_layer=subj, subject_id="schedule", measured=len(sch), unit="count", detail=rule.phrase(
        "schedule", count=len(sch), who=who, start=day_text(ph.start), end=day_text(ph.end), weekly=nw,
        inspection_interval_days=fmt_num(rule.t("inspection_interval_days")), storms=storms, why=why))


@check("SWP-007")
def check_inspections(ctx: StormwaterContext, rule: Rule) -> gpd.GeoDataFrame:
    """SWP-007: required inspections at the interval and after storms; the log checked against them (every
    sentence one of the rule's phrases, and the reason a condition applies one of its rule's)."""
    subj = "inspections"
    rows = FindingRows(rule, ctx.crs)
    for s in ctx.sites:  # activities other than the disturbance project (the harvest plan's landings and roads)
        if not s.dated and swp007_applies(ctx, rule, s)[0] is not False:
            rows.add("not_evaluated", subject_layer=subj, subject_id=s.id,
                     detail=rule.phrase("other_site", layer=s.layer, id=s.id))
    applies, why = swp007_applies(ctx, rule, ctx.project)
    dates = ctx.dates
    if applies is False:
        rows.add("pass", subject_layer=subj, subject_id="schedule", detail=rule.phrase("not_required", why=why))
    elif applies is None:
        rows.add("not_evaluated", subject_layer=subj, subject_id="schedule", detail=why)
    elif dates is None or not dates.complete:
        missing = (rule.phrase("no_dates") if dates is None or not dates.has_fields else
                   rule.phrase("undated", ids=id_list(dates.undated)))
        rows.add("not_evaluated", subject_layer=subj, subject_id="schedule",
                 detail=rule.phrase("period_unknown", missing=missing, why=why))
    else:
        sch, ph, log = ctx.schedule, ctx.phasing, ctx.inspections_log
        if sch is None or ph is None:  # check_stormwater gives both where the dates are complete
            raise TypeError("StormwaterContext with complete disturbance dates but no phasing or no inspection "
                            "schedule: build it with check_stormwater")
        _inspection_schedule(ctx, rule, rows, sch, ph, subj, why)
        if log is not None:
            if not (sch["reason"] == "weekly").any():  # none logged in a period no longer than the interval
                step, days = rule.t("inspection_interval_days"), int((ph.end - ph.start).days)
                rows.add("pass", subject_layer=subj, subject_id="schedule", measured=days, threshold=step, unit="days",
                         detail=rule.phrase("nothing_due", days=days, start=day_text(ph.start), end=day_text(ph.end),
                                            inspection_interval_days=fmt_num(step), why=why))
            logged = [_inspection_log_frame(ctx, rule, sch, log, ph, subj)] if len(sch) else []
            return concat_findings([rows.frame(), *logged], ctx.crs)
    return rows.frame()


def _checklist(rule: Rule) -> list[tuple[str, str]]:
    """(subject, text) of each checklist item the rulebook's numbers give, worded by SWP-008's phrases.

    Examples
    --------
    >>> from geoconstraints.rulebook.loader import load_rulebook
    >>> dict(_checklist(load_rulebook("lockport")["SWP-008"]))["SMO deadlines"]
    'stormwater management officer: 45 days to recommendation; 45 days to decision'
    """
    th = rule.thresholds
    out: list[tuple[str, str]] = []
    if "site_map_scale_ft_per_in" in th:
        out.append(("site map", rule.phrase("site_map", site_map_scale_ft_per_in=fmt_num(th["site_map_scale_ft_per_in"]))))
    if "sediment_trap_cleanout_pct" in th:
        out.append(("sediment traps", rule.phrase("sediment_traps",
                                                  sediment_trap_cleanout_pct=fmt_num(th["sediment_trap_cleanout_pct"]))))
    if "notice_hours" in th:
        stages = ", ".join(str(s).replace("_", " ") for s in rule.p("notice_stages", []))
        to = str(rule.p("notice_to", "town")).replace("_", " ")
        out.append(("notice", rule.phrase("notice", notice_hours=fmt_num(th["notice_hours"]), to=to, stages=stages)))
    smo = [rule.phrase(k.removesuffix("_days"), **{k: fmt_num(th[k])})
           for k in ("smo_recommendation_days", "smo_decision_days") if k in th]
    if smo:
        out.append(("SMO deadlines", rule.phrase("smo_deadlines", deadlines="; ".join(smo))))
    if "first_offence_max_fine_usd" in th:
        jail = (rule.phrase("jail_days", max_jail_days=fmt_num(th["max_jail_days"])) if "max_jail_days" in th else
                rule.phrase("jail_months", max_jail_months=fmt_num(th["max_jail_months"])) if "max_jail_months" in th
                else rule.phrase("jail_unstated"))
        window = (" " + rule.phrase("repeat_window", years=fmt_num(th["repeat_offence_window_months"] / 12))
                  if "repeat_offence_window_months" in th else "")
        usd = {k: f"{th.get(k, 0):,.0f}" for k in ("first_offence_max_fine_usd", "second_offence_min_fine_usd",
                                                  "second_offence_max_fine_usd", "third_offence_min_fine_usd",
                                                  "third_offence_max_fine_usd")}
        out.append(("penalties", rule.phrase("penalties", **usd, window=window, jail=jail)))
    prep = rule.p("swppp_preparer", None)
    if prep:
        out.append(("SWPPP preparer", rule.phrase("preparer", preparers=", ".join(str(p).replace("_", " ")
                                                                                  for p in prep))))
    return out


@check("SWP-008")
def check_checklist(ctx: StormwaterContext, rule: Rule) -> gpd.GeoDataFrame:
    """SWP-008: checklist items the geometry cannot check (``info``), from the rulebook's numbers."""
    items = _checklist(rule)
    return rule.findings("info", subject_id=[s for s, _ in items], crs=ctx.crs, detail=[t for _, t in items])
