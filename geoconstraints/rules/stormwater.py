"""Stormwater checks (Vestal L.L. No. 3 of 2007; Lockport ch. 159): SWP-001..SWP-008.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from geoconstraints.errors import RulebookError
from geoconstraints.geometry.phasing import AREA_TOL_ACRES, SUBJECT, Phasing, PhasingDates, Site, union_acres
from geoconstraints.io.layers import Layers
from geoconstraints.rulebook.findings import Finding
from geoconstraints.rulebook.model import Rule, Rulebook
from geoconstraints.rulebook.registry import check
from geoconstraints.text import day_text, fixed, id_list, is_blank

log = logging.getLogger(__name__)
"""Numerical tolerance (about 0.04 sq ft) when comparing a computed area with an acreage
threshold, so a square drawn to be exactly 5 acres is 5 acres. Not a legal threshold."""
"""Numerical tolerance for summed rainfall compared with the storm threshold."""


def _norm_use(v: Any) -> str:
    if is_blank(v):
        return ""
    return str(v).strip().lower().replace("-", "_").replace(" ", "_")


@dataclass
class StormwaterContext:
    """What the SWP checks read: layers, the measured sites and the parsed schedule inputs."""

    layers: Layers
    rulebook: Rulebook
    disturbance: gpd.GeoDataFrame | None
    footprints: gpd.GeoDataFrame
    sites: list[Site] = field(default_factory=list)
    dates: PhasingDates | None = None
    phasing: Phasing | None = None
    rainfall: pd.DataFrame | None = None
    inspections_log: pd.DataFrame | None = None
    schedule: pd.DataFrame | None = None
    approved_swppp: bool = False
    larger_common_plan: bool | float = False
    road_width_ft: float = 0.0

    @property
    def crs(self) -> Any:
        return self.layers.crs

    @property
    def project(self) -> Site | None:
        """The disturbance project (the dated one), if a disturbance layer was given."""
        return next((s for s in self.sites if s.dated), None)

    @property
    def footprint_acres(self) -> float:
        """Acres of all landing and haul-road footprints (union)."""
        return union_acres(self.footprints.geometry.values)[1] if len(self.footprints) else 0.0


# ------------------------------------------------------------------------------------------------
# conditions shared by several rules

def land_development(acres: float, larger_common_plan: bool | float, rule: Rule) -> tuple[bool, str, str]:
    """SWP-001: is this a land development activity? ``(applies, status, detail)``."""
    min_acres = rule.t("min_disturbed_acres")
    if acres >= min_acres - AREA_TOL_ACRES:
        return True, "review", f"at least {min_acres:g} acre"
    if larger_common_plan is False or larger_common_plan is None:
        return False, "pass", "not stated to be part of a larger common plan of development or sale"
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


def _impaired_distance(ctx: StormwaterContext, site: Site) -> tuple[float, str, Any] | None:
    """Distance (ft) from a site to the nearest impaired water, its label, and the shortest line."""
    waters = ctx.layers.get_layer("impaired_waters")
    if waters is None or site.geometry is None:
        return None
    d = shapely.distance(site.geometry, waters.geometry.values)
    k = int(np.argmin(d))
    name = waters["name"].iloc[k] if "name" in waters.columns and not is_blank(waters["name"].iloc[k]) else ""
    label = f"{waters['feature_id'].iloc[k]}" + (f" ({name})" if name else "")
    return float(d[k]), label, shapely.shortest_line(site.geometry, waters.geometry.values[k])


def _rule_or_none(rb: Rulebook, rid: str) -> Rule | None:
    return rb.rules.get(rid)


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
    if applies_to == "all_land_development":
        r1 = _rule_or_none(rb, "SWP-001")
        if r1 is None:
            return True, "the rulebook has no SWP-001; inspections taken as required"
        ok, _st, why = land_development(acres, ctx.larger_common_plan, r1)
        if ok:
            return True, f"land development activity ({fixed(acres)} acres; {why}); applies_to=all_land_development"
        return False, (f"not a land development activity ({fixed(acres)} acres; {why}), so no inspections "
                       f"are required (applies_to=all_land_development)")
    if applies_to == "conditions_abc":
        met, unknown = [], []
        r3, r4, r2 = (_rule_or_none(rb, i) for i in ("SWP-003", "SWP-004", "SWP-002"))
        if r3 is not None and condition_b(acres, r3):
            met.append("B")
        if r4 is not None and condition_c(acres, site.uses, r4)[0]:
            met.append("C")
        if r2 is not None:
            dist = _impaired_distance(ctx, site)
            if dist is None:
                unknown.append("A (no impaired_waters layer)")
            elif dist[0] <= r2.t("impaired_water_distance_ft"):
                met.append("A")
        if met:
            return True, f"Condition {', '.join(met)} applies (applies_to=conditions_abc)"
        if unknown:
            return None, (f"Conditions B and C do not apply and Condition {', '.join(unknown)} could not be "
                          f"checked (applies_to=conditions_abc)")
        return False, ("none of Conditions A, B, C applies, so inspections are not required "
                       "(applies_to=conditions_abc)")
    raise RulebookError(f"rule SWP-007 in rulebook {rule.rulebook!r}: param applies_to={applies_to!r} is not "
                        f"all_land_development or conditions_abc")


# ------------------------------------------------------------------------------------------------
# checks

def _no_site(rule: Rule) -> list[Finding]:
    return [rule.finding("not_evaluated", subject_layer="disturbance", subject_id=SUBJECT,
                         detail="no disturbance layer and no landings or haul roads given")]


@check("SWP-001")
def check_swppp_required(ctx: StormwaterContext, rule: Rule) -> list[Finding]:
    """SWP-001: disturbance of 1 acre or more (or part of a larger common plan) needs an SWPPP."""
    if not ctx.sites:
        return _no_site(rule)
    out = []
    for s in ctx.sites:  # at most two activities (the project, the harvest plan)
        _ok, status, why = land_development(s.acres, ctx.larger_common_plan, rule)
        out.append(rule.finding(status, subject_layer=s.layer, subject_id=s.id, measured=s.acres,
                                threshold=rule.t("min_disturbed_acres"), unit="acres", geometry=s.geometry,
                                detail=s.detail + ("; " + why if status == "review" else "")))
    return out


@check("SWP-002")
def check_condition_a(ctx: StormwaterContext, rule: Rule) -> list[Finding]:
    """SWP-002 Condition A: proximity of the disturbance to a 303(d)/TMDL impaired water.

    The law turns on runoff *discharging* a pollutant of concern to the impaired water; the check
    screens by distance (``impaired_water_distance_ft``) as a proxy and says so, and a human
    confirms the drainage path (``review``).
    """
    if not ctx.sites:
        return _no_site(rule)
    limit = rule.t("impaired_water_distance_ft")
    method = (f"proximity screening: the law turns on runoff discharging a pollutant of concern to the water; "
              f"distance within {limit:g} ft (rulebook impaired_water_distance_ft) is used as a proxy for "
              f"discharge, so a human confirms the drainage path")
    out = []
    for s in ctx.sites:
        dist = _impaired_distance(ctx, s)
        if dist is None:
            out.append(rule.finding("not_evaluated", subject_layer=s.layer, subject_id=s.id, threshold=limit,
                                    unit="ft", detail="no impaired_waters layer given (303(d) / TMDL waters)"))
            continue
        d, label, line = dist
        out.append(rule.finding("review" if d <= limit else "pass", subject_layer=s.layer, subject_id=s.id,
                                measured=d, threshold=limit, unit="ft", geometry=line if d > 0 else s.geometry,
                                detail=f"nearest impaired water {label} at {fixed(d, 0)} ft; {method}"))
    return out


@check("SWP-003")
def check_condition_b(ctx: StormwaterContext, rule: Rule) -> list[Finding]:
    """SWP-003 Condition B: 5 acres or more disturbed during the course of the project."""
    if not ctx.sites:
        return _no_site(rule)
    return [rule.finding("review" if condition_b(s.acres, rule) else "pass", subject_layer=s.layer,
                         subject_id=s.id, measured=s.acres, threshold=rule.t("min_acres"), unit="acres",
                         geometry=s.geometry, detail=s.detail) for s in ctx.sites]


@check("SWP-004")
def check_condition_c(ctx: StormwaterContext, rule: Rule) -> list[Finding]:
    """SWP-004 Condition C: 1 to 5 acres, except single-family residences and agricultural properties."""
    if not ctx.sites:
        return _no_site(rule)
    out = []
    for s in ctx.sites:
        _ok, status, why = condition_c(s.acres, s.uses, rule)
        out.append(rule.finding(status, subject_layer=s.layer, subject_id=s.id, measured=s.acres,
                                threshold=rule.t("min_acres"), unit="acres", geometry=s.geometry,
                                detail=why if status == "pass" else f"{s.detail}; {why}"))
    return out


@check("SWP-005")
def check_phasing(ctx: StormwaterContext, rule: Rule) -> list[Finding]:
    """SWP-005: peak concurrently disturbed area from the phasing dates, at most 5 acres."""
    limit = rule.t("max_concurrent_acres")
    if ctx.disturbance is None:
        return [rule.finding("not_evaluated", subject_layer="disturbance", subject_id=SUBJECT, threshold=limit,
                             unit="acres", detail="no disturbance layer with start / stabilized dates given")]
    dates = ctx.dates
    assert dates is not None
    if not dates.has_fields:
        return [rule.finding("not_evaluated", subject_layer="disturbance", subject_id=SUBJECT, threshold=limit,
                             unit="acres", detail="the disturbance layer has no start and stabilized fields")]
    if dates.undated:
        return [rule.finding("not_evaluated", subject_layer="disturbance", subject_id=SUBJECT, threshold=limit,
                             unit="acres", detail=(f"polygons {id_list(dates.undated)} have no start or stabilized "
                                                   f"date, so the peak cannot be known"))]
    ph = ctx.phasing
    assert ph is not None
    when = "; ".join(f"{day_text(a)} to {day_text(b)}" for a, b in ph.peak_periods) or "never"
    detail = (f"at its peak from {when} ({', '.join(ph.peak_ids) or 'none'} disturbed); a polygon counts as "
              f"disturbed from its start date up to the day before its stabilized date; overlapping phases "
              f"counted once; series in disturbance_timeline")
    if len(ctx.footprints):
        detail += "; landings and haul roads carry no dates and are not in the timeline"
    over = ph.peak_acres > limit + AREA_TOL_ACRES
    if over and ctx.approved_swppp:
        status, detail = "info", detail + "; the phasing is stated to follow an approved SWPPP"
    else:
        status = "violation" if over else "pass"
    return [rule.finding(status, subject_layer="disturbance", subject_id=SUBJECT, measured=ph.peak_acres,
                         threshold=limit, unit="acres", geometry=ph.peak_geometry, detail=detail)]


@check("SWP-006")
def check_exemptions(ctx: StormwaterContext, rule: Rule) -> list[Finding]:
    """SWP-006: which exemptions apply; landings and log haul roads are never exempt."""
    out: list[Finding] = []
    exemptions = {e["key"]: e for e in rule.p("exemptions")}
    logging_exempt = rule.p("logging_exempt")
    log_key = next((k for k in ("silviculture", "logging_under_timber_plan") if k in exemptions), None)
    harvest = [r for r in ("harvest_area", "landings", "haul_roads") if ctx.layers.get_layer(r) is not None]
    fp = ctx.footprints
    counted = (f"landing areas and log haul roads are subject to the law and counted as disturbance: "
               f"{fixed(ctx.footprint_acres)} acres ({int((fp['kind'] == 'landing').sum())} landing(s), "
               f"{fixed(float(fp.loc[fp['kind'] == 'haul_road', 'length_ft'].sum()), 0)} ft of haul road); "
               f"the harvest area itself is not in the disturbance count")
    cite = f" ({exemptions[log_key]['citation']})" if log_key else ""
    if not harvest:
        out.append(rule.finding("info", subject_layer="harvest plan", subject_id="logging",
                                detail=f"no harvest_area, landings or haul_roads given: the logging exemption{cite} "
                                       f"was not considered"))
    elif logging_exempt == "timber_management_plan_only":
        out.append(rule.finding("review", subject_layer="harvest plan", subject_id="logging", geometry=(
            shapely.union_all(fp.geometry.values) if len(fp) else None), measured=ctx.footprint_acres, unit="acres",
            detail=(f"logging is exempt only under a timber management plan prepared or approved by the county soil "
                    f"and water conservation district or the DEC{cite} (a town timber harvesting licence is not "
                    f"such a plan): confirm the plan, otherwise the harvest's soil disturbance is not exempt; "
                    f"{counted}")))
    elif logging_exempt == "silviculture_except_landings_haul_roads":
        out.append(rule.finding("info", subject_layer="harvest plan", subject_id="logging", geometry=(
            shapely.union_all(fp.geometry.values) if len(fp) else None), measured=ctx.footprint_acres, unit="acres",
            detail=f"silvicultural activity is exempt{cite}, except that {counted}"))
    else:
        raise RulebookError(f"rule SWP-006 in rulebook {rule.rulebook!r}: param logging_exempt={logging_exempt!r} "
                            f"is not timber_management_plan_only or silviculture_except_landings_haul_roads")
    claimed: set[str] = set()
    d = ctx.disturbance
    if d is not None and "use" in d.columns:
        uses = d["use"].map(_norm_use)
        hit = uses.isin(list(exemptions))
        for fid, use, geom in zip(d["feature_id"][hit], uses[hit], d.geometry.values[hit.to_numpy()]):
            e = exemptions[use]
            claimed.add(use)
            out.append(rule.finding("info", subject_layer="disturbance", subject_id=fid, geometry=geom, detail=(
                f"use {use} matches the exemption '{e['text']}' ({e['citation']}): exempt only if the facts bear "
                f"it out (a human confirms); the polygon is still counted in the acreage"
                + ("; construction at an agricultural property is not agricultural activity (it is only "
                   "excluded from Condition C)" if use == "agricultural" else ""))))
    rest = [f"{e['key']} ({e['citation']})" for k, e in exemptions.items() if k not in claimed and k != log_key]
    out.append(rule.finding("info", subject_layer="disturbance", subject_id="other exemptions",
                            detail=(f"not shown by the layers, to confirm with the applicant: {', '.join(rest)}")))
    return out


@check("SWP-007")
def check_inspections(ctx: StormwaterContext, rule: Rule) -> list[Finding | gpd.GeoDataFrame]:
    """SWP-007: required inspections every 7 days and after 0.5 in storms; the log checked against them."""
    subj = "inspections"
    out: list[Finding | gpd.GeoDataFrame] = []
    for s in ctx.sites:  # undated activities (the harvest plan's landings and haul roads)
        if not s.dated and swp007_applies(ctx, rule, s)[0] is not False:
            out.append(rule.finding("not_evaluated", subject_layer=subj, subject_id=s.id, detail=(
                f"{s.layer} {s.id} carry no start / stabilized dates, so the inspections they need cannot be "
                f"scheduled")))
    applies, why = swp007_applies(ctx, rule, ctx.project)
    if applies is False:
        return out + [rule.finding("pass", subject_layer=subj, subject_id="schedule",
                                   detail=f"not required: {why}")]
    if applies is None:
        return out + [rule.finding("not_evaluated", subject_layer=subj, subject_id="schedule", detail=why)]
    dates = ctx.dates
    if dates is None or not dates.complete:
        missing = "no start / stabilized dates" if dates is None or not dates.has_fields else (
            f"polygons {id_list(dates.undated)} have no start or stabilized date")
        return out + [rule.finding("not_evaluated", subject_layer=subj, subject_id="schedule",
                                   detail=f"{missing}, so the inspection period is unknown; {why}")]
    sch = ctx.schedule
    assert sch is not None and ctx.phasing is not None
    who = str(rule.p("inspector")).replace("_", " ")
    period = f"{day_text(ctx.phasing.start)} to {day_text(ctx.phasing.end)}"
    thr = rule.t("storm_threshold_in")
    if ctx.rainfall is None:
        out.append(rule.finding("not_evaluated", subject_layer=subj, subject_id="storm inspections",
                                threshold=thr, unit="in",
                                detail="no rainfall series given (--rainfall), so inspections after storm events "
                                       "are not scheduled or checked"))
    nw = int((sch["reason"] == "weekly").sum())
    ns = int((sch["reason"] == "storm").sum())
    reading = f"storm_event={rule.s('storm_event')}"
    if ctx.inspections_log is None:
        storms = f"{ns} after storm events of {thr:g} in or more ({reading})" if ctx.rainfall is not None else \
            "storm inspections not scheduled (no rainfall)"
        out.append(rule.finding("info", subject_layer=subj, subject_id="schedule", measured=len(sch), unit="count",
                                detail=(f"{len(sch)} inspections required by the {who} from {period}: {nw} every "
                                        f"{rule.t('inspection_interval_days'):g} days and {storms}; {why}; no "
                                        f"inspection log given, so none is checked; list in inspections")))
        return out
    labels = np.where(sch["reason"] == "weekly", "weekly due " + sch["due"].dt.strftime("%Y-%m-%d"),
                      "storm of " + sch["trigger_date"].dt.strftime("%Y-%m-%d"))
    met = sch["status"] == "met"
    win = sch["window_start"].dt.strftime("%Y-%m-%d") + " to " + sch["window_end"].dt.strftime("%Y-%m-%d")
    insp = sch["inspector"].where(sch["inspector"].str.strip() != "", "inspector not stated")
    found = ("inspection logged " + sch["inspection_date"].dt.strftime("%Y-%m-%d") + " (" + insp + ")")
    rain = np.where(sch["reason"] == "storm",
                    sch["precip_in"].map(lambda v: "" if pd.isna(v) else f"{v:.2f}") + " in; ", "")
    detail = pd.Series(rain, dtype=object) + pd.Series(
        np.where(met, found + ", within " + win, "no logged inspection from " + win), dtype=object)
    out.append(rule.findings(np.where(met, "pass", "violation"), subject_layer=subj, subject_id=labels,
                             measured=sch["precip_in"], threshold=np.where(sch["reason"] == "storm", thr, np.nan),
                             unit="in", detail=detail, crs=ctx.crs))
    return out


@check("SWP-008")
def check_checklist(ctx: StormwaterContext, rule: Rule) -> list[Finding]:
    """SWP-008: checklist items the geometry cannot check (``info``), from the rulebook's numbers."""
    th = rule.thresholds
    out: list[Finding] = []

    def item(subject: str, text: str) -> None:
        out.append(rule.finding("info", subject_id=subject, detail=text))

    if "site_map_scale_ft_per_in" in th:
        item("site map", f"SWPPP site map at a scale no smaller than 1 inch = {th['site_map_scale_ft_per_in']:g} ft")
    if "sediment_trap_cleanout_pct" in th:
        item("sediment traps", f"sediment removed from traps and ponds when their design capacity is reduced by "
                               f"{th['sediment_trap_cleanout_pct']:g} %")
    if "notice_hours" in th:
        stages = ", ".join(str(s).replace("_", " ") for s in rule.p("notice_stages", []))
        to = str(rule.p("notice_to", "the town")).replace("_", " ")
        item("notice", f"{th['notice_hours']:g} hours' notice to the {to} before: {stages}")
    smo = [f"{th[k]:g} days to {k.split('_')[1]}" for k in ("smo_recommendation_days", "smo_decision_days") if k in th]
    if smo:
        item("SMO deadlines", "stormwater management officer: " + "; ".join(smo))
    if "first_offence_max_fine_usd" in th:
        jail = (f"{th['max_jail_days']:g} days" if "max_jail_days" in th else
                f"{th['max_jail_months']:g} months" if "max_jail_months" in th else "as the law provides")
        window = f" within {th['repeat_offence_window_months'] / 12:g} years" if "repeat_offence_window_months" in th else ""
        item("penalties", (f"first offence fine up to ${th['first_offence_max_fine_usd']:,.0f}; second "
                           f"${th.get('second_offence_min_fine_usd', 0):,.0f} to ${th.get('second_offence_max_fine_usd', 0):,.0f}; "
                           f"third ${th.get('third_offence_min_fine_usd', 0):,.0f} to "
                           f"${th.get('third_offence_max_fine_usd', 0):,.0f}{window}; imprisonment up to {jail}; "
                           f"each week's continued violation is a separate violation"))
    prep = rule.p("swppp_preparer", None)
    if prep:
        item("SWPPP preparer", "prepared by: " + ", ".join(str(p).replace("_", " ") for p in prep))
    return out

