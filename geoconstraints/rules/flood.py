"""Flood damage prevention checks: FLD-001..FLD-010 (sections and citations from the rulebook).

The checks read a :class:`FloodContext` built by :func:`geoconstraints.commands.screen_parcels`
(parcels) or :func:`geoconstraints.commands.check_site` (proposed footprints). No data is not
"no hazard": a subject outside the flood map's coverage (or in zone D / AREA NOT INCLUDED) is
``not_evaluated``. Each check returns one frame aligned to the subjects (see
:mod:`geoconstraints.rulebook.registry`).
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from fractions import Fraction
from functools import cached_property
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd

from geoconstraints.errors import RulebookError
from geoconstraints.geometry.overlay import (
    FloodZoneSpec,
    acres_of,
    classify_flood_zones,
    expand_zone_list,
    masked,
    share_of,
    subtype_problem,
)
from geoconstraints.io.layers import Layers
from geoconstraints.io.tables import DATE_FORMS, date_forms_text, read_days
from geoconstraints.rulebook.findings import empty_findings
from geoconstraints.rulebook.model import Rule, Rulebook
from geoconstraints.rulebook.registry import check
from geoconstraints.rulebook.render import fmt_num, share_texts
from geoconstraints.rules import dem_cells
from geoconstraints.text import ft_text, is_blank, visible_text
from geoconstraints.units import SQFT_PER_ACRE, at_least, cell_within, over_limit, under_limit

log = logging.getLogger(__name__)


def no_bfe_zones(rulebook: Rulebook) -> frozenset[str]:
    """The SFHA zones the FIRM gives no BFE in: FLD-006's ``unnumbered_a_zones`` and ``no_elevation_zones``
    (one list, read by FLD-004 for § 6-137(d), as the harvest checks read HRV-012's channel).

    Examples
    --------
    >>> from geoconstraints.rulebook.loader import load_rulebook
    >>> sorted(no_bfe_zones(load_rulebook("vestal")))
    ['A', 'A99', 'AO', 'V', 'VO']
    """
    r6 = rulebook["FLD-006"]
    return expand_zone_list(r6.p("unnumbered_a_zones")) | expand_zone_list(r6.p("no_elevation_zones"))


def flood_zone_spec(rulebook: Rulebook, *, exact: bool = False) -> FloodZoneSpec:
    """How the rulebook reads flood zones: FLD-001 zone lists and slivers, FLD-002 floodway, FLD-006 zones.

    Parameters
    ----------
    rulebook : Rulebook
    exact : bool
        Measure without the sliver tolerance and minimum overlap (a proposed footprint: the
        tolerances absorb digitising error along *parcel edges*; a footprint's 80 sq ft in zone AE
        is 80 sq ft of development in the SFHA).

    Examples
    --------
    >>> from geoconstraints.rulebook.loader import load_rulebook
    >>> rb = load_rulebook("vestal")
    >>> flood_zone_spec(rb).min_overlap_sqft, flood_zone_spec(rb, exact=True).min_overlap_sqft
    (100.0, 0.0)
    """
    r1, r2, r6 = rulebook["FLD-001"], rulebook["FLD-002"], rulebook["FLD-006"]
    spec = FloodZoneSpec(
        sfha_zones=expand_zone_list(r1.p("sfha_zones")),
        non_sfha_zones=expand_zone_list(r1.p("non_sfha_zones")),
        undetermined_zones=expand_zone_list(r1.p("undetermined_zones")),
        unnumbered_a_zones=expand_zone_list(r6.p("unnumbered_a_zones")),
        bfe_zones=expand_zone_list(r6.p("bfe_zones")),
        floodway_word=str(r2.p("floodway_subtype_contains")),
        zone_field=str(r1.p("zone_field", "FLD_ZONE")),
        sfha_field=str(r1.p("sfha_field", "SFHA_TF")),
        subtype_field=str(r2.p("subtype_field", "ZONE_SUBTY")),
        sliver_tolerance_ft=r1.t("sliver_tolerance_ft"), min_overlap_sqft=r1.t("min_overlap_sqft"),
        floodway_sliver_tolerance_ft=r2.t("sliver_tolerance_ft"),
        floodway_min_overlap_sqft=r2.t("min_overlap_sqft"),
        encroachment_words=r2.texts("encroachment_subtypes_contain", []),
        known_subtypes=known_subtypes(rulebook),
    )
    if exact:
        spec = replace(spec, sliver_tolerance_ft=0.0, min_overlap_sqft=0.0, floodway_sliver_tolerance_ft=0.0,
                       floodway_min_overlap_sqft=0.0)
    return spec


def known_subtypes(rulebook: Rulebook) -> frozenset[str] | None:
    """FLD-002's ``known_subtypes`` (FEMA's D_Zone_Subtype texts), upper case; None where the rule has no such
    list (every subtype text is then read by its words alone).

    Examples
    --------
    >>> from geoconstraints.rulebook.loader import load_rulebook
    >>> k = known_subtypes(load_rulebook("vestal"))
    >>> "RIVERINE FLOODPLAIN" in k, "FLODWAY" in k
    (True, False)
    """
    r2 = rulebook.rules.get("FLD-002")
    if r2 is None or "known_subtypes" not in r2.params:
        return None
    return frozenset(t.strip().upper() for t in r2.texts("known_subtypes", []))


def _odd_and_like(names: str, known: frozenset[str] | None) -> tuple[str, str]:
    """A subject's floodway-like subtype names (``'A; B'``) split into those ``known`` does not hold (odd:
    read as floodway not determined because the text is none of FEMA's) and the floodway-like others.

    Examples
    --------
    >>> _odd_and_like("FLODWAY; STATE ENCROACHMENT AREA", frozenset({"STATE ENCROACHMENT AREA"}))
    ('FLODWAY', 'STATE ENCROACHMENT AREA')
    >>> _odd_and_like("FLODWAY", None), _odd_and_like("", frozenset())
    (('', 'FLODWAY'), ('', ''))
    """
    parts = [p for p in names.split("; ") if p] if names else []
    odd = [p for p in parts if known is not None and p not in known]
    return "; ".join(odd), "; ".join(p for p in parts if p not in odd)


def flood_zone_classes(flood: pd.DataFrame, rulebook: Rulebook, *,
                       whole: pd.DataFrame | None = None) -> pd.DataFrame | None:
    """A flood zone layer's polygons classified as the FLD rules read them (:func:`classify_flood_zones
    <geoconstraints.geometry.overlay.classify_flood_zones>` with :func:`flood_zone_spec`), for the maps: the
    floodway and FLD-002's floodway-like (encroachment) areas drawn from the rulebook's lists, never from a
    second one; ``floodway_unknown`` where the layer's ZONE_SUBTY cannot tell the floodway (FLD-002 not
    evaluated in the SFHA).

    ``None`` where the rulebook has no flood rules (FLD-001, FLD-002, FLD-006) or the layer no zone field.
    ``whole``: the whole layer when ``flood`` is a part of it (a map's view), whose subtypes count.

    Examples
    --------
    >>> from geoconstraints.rulebook.loader import load_rulebook
    >>> f = pd.DataFrame({"FLD_ZONE": ["AE", "AE", "AE"], "ZONE_SUBTY": ["FLOODWAY", "STATE ENCROACHMENT AREA", None]})
    >>> flood_zone_classes(f, load_rulebook("vestal"))[["floodway", "encroachment"]].to_numpy().tolist()
    [[True, False], [False, True], [False, False]]
    """
    if not all(r in rulebook for r in ("FLD-001", "FLD-002", "FLD-006")):
        return None
    spec = flood_zone_spec(rulebook)
    if spec.zone_field not in flood.columns:
        return None
    return classify_flood_zones(flood, spec, whole=whole)


def subtype_text(problem: str, coded: tuple[str, ...] | list[str] = (), who: str = "the flood layer") -> str:
    """What is wrong with a flood layer's ZONE_SUBTY (a :func:`~geoconstraints.geometry.overlay.subtype_problem`),
    as the findings, the warning and the maps say it, ``who`` its subject (``""``: none); ``""`` where the
    subtypes are read.

    Examples
    --------
    >>> subtype_text("coded", ("1100", "1210"))
    "the flood layer's ZONE_SUBTY holds FEMA's domain codes (1100, 1210), not their text"
    >>> subtype_text("blank"), subtype_text("missing", who=""), subtype_text("")
    ('the flood layer has no ZONE_SUBTY field (or no value in it)', 'no ZONE_SUBTY field (or no value in it)', '')
    """
    if not problem:
        return ""
    if problem == "coded":
        text = f"ZONE_SUBTY holds FEMA's domain codes ({', '.join(coded)}), not their text"
        return f"{who}'s {text}" if who else text
    text = "no ZONE_SUBTY field (or no value in it)"
    return f"{who} has {text}" if who else text


def subtype_warning(flood: pd.DataFrame | None, layer: str = "flood_zones",
                    rulebook: Rulebook | None = None) -> str | None:
    """The warning of a run whose flood layer's ZONE_SUBTY cannot tell the floodway (None where it can, or
    no layer): named once for the run, as each finding in the SFHA names it again. With the ``rulebook``, a
    layer that tells the floodway but holds SFHA subtypes none of FLD-002's ``known_subtypes`` is named too
    (:func:`odd_subtype_warning`).

    Examples
    --------
    >>> print(subtype_warning(pd.DataFrame({"FLD_ZONE": ["AE"], "ZONE_SUBTY": ["1100"]})))
    ... # doctest: +NORMALIZE_WHITESPACE
    layer flood_zones: ZONE_SUBTY holds FEMA's domain codes (1100), not their text, so the floodway cannot be
    told from the rest of the area of special flood hazard: FLD-002 is not evaluated in the SFHA, FLD-009 leaves
    the floodway condition open and the maps draw no floodway. Export the NFHL S_FLD_HAZ_AR layer with the
    domain's descriptions (D_Zone_Subtype: FLOODWAY, ...) in ZONE_SUBTY
    >>> subtype_warning(pd.DataFrame({"ZONE_SUBTY": ["FLOODWAY"]})) is None, subtype_warning(None) is None
    (True, True)
    """
    if flood is None:
        return None
    problem, coded = subtype_problem(flood)
    if not problem:
        return odd_subtype_warning(flood, rulebook, layer) if rulebook is not None else None
    fix = ("Export the NFHL S_FLD_HAZ_AR layer with the domain's descriptions (D_Zone_Subtype: FLOODWAY, ...) in "
           "ZONE_SUBTY" if problem == "coded" else "Give the NFHL S_FLD_HAZ_AR layer with ZONE_SUBTY")
    return (f"layer {layer}: {subtype_text(problem, coded, who='')}, so the floodway cannot be told from the rest "
            f"of the area of special flood hazard: FLD-002 is not evaluated in the SFHA, FLD-009 leaves the floodway condition open and the maps "
            f"draw no floodway. {fix}")


def odd_subtype_warning(flood: pd.DataFrame, rulebook: Rulebook, layer: str = "flood_zones") -> str | None:
    """The warning of a run whose flood layer holds SFHA polygons with a ZONE_SUBTY none of FLD-002's
    ``known_subtypes`` (FEMA's D_Zone_Subtype texts) and neither floodway nor floodway-like (a misspelt
    ``FLODWAY``, a county's own code): each value with its polygons, at most five values. None where there is
    none, or the rulebook has no such list.

    Examples
    --------
    >>> from geoconstraints.rulebook.loader import load_rulebook
    >>> f = pd.DataFrame({"FLD_ZONE": ["AE", "AE", "A", "X"], "ZONE_SUBTY": ["FLODWAY", "FLODWAY", "FW", "FW"]})
    >>> print(odd_subtype_warning(f, load_rulebook("vestal")))  # doctest: +NORMALIZE_WHITESPACE
    layer flood_zones: ZONE_SUBTY FLODWAY (2 polygons in the SFHA), FW (1 polygon in the SFHA) is not a value of
    FEMA's D_Zone_Subtype domain (FLD-002's known_subtypes), so whether it is the floodway cannot be told: FLD-002
    is not evaluated for a subject in such a polygon, FLD-009 leaves the floodway condition open there and the
    maps draw it as a floodway-like area. Correct the value to FEMA's text, or, if it is not a floodway, add it to
    known_subtypes in a town rulebook
    """
    classes = flood_zone_classes(flood, rulebook)
    if classes is None or "odd_subtype" not in classes or not classes["odd_subtype"].any():
        return None
    counts = classes.loc[classes["odd_subtype"], "subtype"].value_counts(sort=False).sort_index()
    shown = [f"{visible_text(v)} ({n:,} polygon{'s' if n != 1 else ''} in the SFHA)" for v, n in counts.iloc[:5].items()]
    more = f" and {len(counts) - 5:,} more" if len(counts) > 5 else ""
    return (f"layer {layer}: ZONE_SUBTY {', '.join(shown)}{more} is not a value of FEMA's D_Zone_Subtype domain "
            f"(FLD-002's known_subtypes), so whether it is the floodway cannot be told: FLD-002 is not evaluated for a "
            f"subject in such a polygon, FLD-009 leaves the floodway condition open there and the maps draw it as a "
            f"floodway-like area. Correct the value to FEMA's text, or, if it is not a floodway, add it to "
            f"known_subtypes in a town rulebook")


# ------------------------------------------------------------------------------------------
# context shared by the checks

@dataclass(frozen=True)
class FloodContext:
    """What the FLD checks read: the mode, the measured subjects and the inputs (plain data).

    Attributes
    ----------
    mode : str
        ``"screen"`` (parcels) or ``"site"`` (footprints).
    layers : Layers
    table : GeoDataFrame
        One row per subject with the metrics (see :func:`screen_parcels`).
    subject_layer : str
        ``parcels`` or ``footprints``.
    flood_given : bool
        A ``flood_zones`` layer with features was given.
    overlaps : dict
        Overlap geometries per key, aligned with ``table``.
    site : dict
        check_site options (use, lowest floor, ...).
    no_bfe_zones : frozenset of str
        The SFHA zones the FIRM gives no BFE in, as FLD-006 lists them (:func:`no_bfe_zones`): FLD-004's
        § 6-137(d) zones. Empty: none known, so no zone's part is read as without a BFE for certain.
    known_subtypes : frozenset of str or None
        FLD-002's ``known_subtypes`` (:func:`known_subtypes`): a floodway-like subtype name that is none of them
        is said as a text none of FEMA's values (FLD-002, FLD-009). None: every name is a floodway-like area's.
    """

    mode: str
    layers: Layers
    table: gpd.GeoDataFrame
    subject_layer: str
    flood_given: bool
    overlaps: dict[str, np.ndarray] = field(default_factory=dict)
    site: dict[str, Any] = field(default_factory=dict)
    no_bfe_zones: frozenset[str] = frozenset()
    known_subtypes: frozenset[str] | None = None

    @property
    def crs(self) -> Any:
        """The working CRS."""
        return self.table.crs

    def none(self) -> gpd.GeoDataFrame:
        """No findings (a rule of the other mode)."""
        return empty_findings(self.crs)

    @cached_property
    def subtypes(self) -> tuple[str, tuple[str, ...]]:
        """The flood layer's :func:`~geoconstraints.geometry.overlay.subtype_problem` (``("", ())`` where its
        ZONE_SUBTY tells the floodway), read once for the FLD checks; ``"missing"`` without a layer."""
        return subtype_problem(self.layers.get_layer("flood_zones"))


_SLOT = "\x00"
"""Marks a per-row field in a phrase rendered once (:func:`_form`): a character no template nor value holds."""


def _form(rule: Rule, name: str, *slots: str) -> Callable[..., str]:
    """The rule's phrase ``name`` rendered once, with the rule's names filled and ``slots`` (the fields
    that vary per subject) left as :meth:`str.format` fields: ``_form(rule, "zones", "zones")(zones="AE")``.

    A screening fills one phrase for up to a million parcels: :meth:`Rule.phrase` checks and renders its
    template on every call, the returned ``str.format`` only puts the values in.

    Examples
    --------
    >>> r = Rule(id="ABC-001", title="t", group="flood", citation="c", params={"law": "§ 1"},
    ...          phrases={"in": "{share} of the {subject}, {law} {{braces}}"})
    >>> f = _form(r, "in", "share", "subject")
    >>> f(share="12.0%", subject="parcel")
    '12.0% of the parcel, § 1 {braces}'
    """
    text = rule.phrase(name, **{s: f"{_SLOT}{s}{_SLOT}" for s in slots})
    text = text.replace("{", "{{").replace("}", "}}")
    for s in slots:
        text = text.replace(f"{_SLOT}{s}{_SLOT}", "{" + s + "}")
    return text.format


def _geom_or(overlap: np.ndarray, fallback: np.ndarray) -> np.ndarray:
    ov = np.asarray(overlap, dtype=object)
    return np.where(pd.isna(ov), fallback, ov)


def _sliver_note(t: pd.DataFrame, kind: str, rule: Rule) -> np.ndarray:
    """``'; a sliver of 37 sq ft along the SFHA was ignored (...)'`` or ``''``: the rule's phrase
    ``<kind>_sliver`` (``sfha``, ``floodway``, ``encroachment``) with the sliver's ``{sqft}``."""
    raw = t[f"{kind}_raw_sqft"].to_numpy()
    sl = t[f"{kind}_sliver"].to_numpy(dtype=bool)
    out = np.full(len(t), "", dtype=object)
    if sl.any():
        say = _form(rule, f"{kind}_sliver", "sqft")
        out[sl] = ["; " + say(sqft=fmt_num(r)) for r in raw[sl]]
    return out


def _coverage_note(t: pd.DataFrame, rule: Rule) -> np.ndarray:
    """``'; partial flood data: ...'`` (phrase ``partial_data``, the acres off the map) and ``'; zone D ...'``
    (phrase ``undetermined_part``) where they apply, else ``''``."""
    unc = acres_of(t["uncovered_sqft"].to_numpy())
    und = t["undetermined_sqft"].to_numpy() > 0
    out = np.full(len(t), "", dtype=object)
    part = (t["flood_data"] == "partial").to_numpy(dtype=bool)
    if part.any():
        say = _form(rule, "partial_data", "acres")
        out[part] = ["; " + say(acres=fmt_num(a)) for a in unc[part]]
    if und.any():
        out[und] = out[und] + ("; " + rule.phrase("undetermined_part"))
    return out


def _with_note(detail: np.ndarray, note: np.ndarray) -> np.ndarray:
    """``detail + note``, joined only where there is a note (most subjects have none: no new text for them).

    Examples
    --------
    >>> _with_note(np.array(["a", "b"], dtype=object), np.array(["", "; c"], dtype=object)).tolist()
    ['a', 'b; c']
    """
    out = np.array(detail, dtype=object)
    has = np.asarray(note != "", dtype=bool)
    out[has] = out[has] + note[has]
    return out


def _rule_frame(rule: Rule, ctx: FloodContext, status: np.ndarray, *, measured: Any = None,
                threshold: Any = None, unit: str = "", geometry: Any = None,
                detail: Any = "") -> gpd.GeoDataFrame:
    t = ctx.table
    return rule.findings(status, subject_layer=ctx.subject_layer, subject_id=t["feature_id"],
                         measured=measured, threshold=threshold, unit=unit,
                         geometry=geometry if geometry is not None else t.geometry.values,
                         crs=t.crs, detail=detail)


def _per_value(values: np.ndarray, text: Callable[[Any], str]) -> np.ndarray:
    """``text(v)`` of every value as an object array, called once per distinct value (zone lists: a few dozen).

    Examples
    --------
    >>> _per_value(np.array(["AE", "", "AE"], dtype=object), lambda z: f"zones {z}" if z else "none").tolist()
    ['zones AE', 'none', 'zones AE']
    """
    codes, uniq = pd.factorize(np.asarray(values, dtype=object), use_na_sentinel=False)
    out = np.empty(len(uniq), dtype=object)
    out[:] = [text(v) for v in uniq]
    return out[codes]


def _not_covered(t: pd.DataFrame) -> np.ndarray:
    return (t["flood_data"] == "no_data").to_numpy()


def _no_flood_detail(ctx: FloodContext, rule: Rule) -> str:
    """The detail of a subject off the flood map: the rule's phrase ``no_flood_layer`` (no layer given) or
    ``not_covered``."""
    return rule.phrase("not_covered" if ctx.flood_given else "no_flood_layer")


@check("FLD-001")
def check_sfha(ctx: FloodContext, rule: Rule) -> gpd.GeoDataFrame:
    """FLD-001: development in the SFHA needs a permit; acres and share per subject."""
    t = ctx.table
    n = len(t)
    sfha = t["sfha_sqft"].to_numpy()
    share = share_of(sfha, t["area_sqft"].to_numpy())
    nc = _not_covered(t)
    partial = (t["flood_data"] == "partial").to_numpy()
    status = np.where(nc, "not_evaluated", np.where(sfha > 0, "review", np.where(partial, "not_evaluated", "pass")))
    cov_note, sl_note = _coverage_note(t, rule), _sliver_note(t, "sfha", rule)
    zones = t["flood_zones"].to_numpy()
    in_zones, no_zone, na = _form(rule, "zones", "zones"), rule.phrase("no_zone"), rule.phrase("zone_not_named")
    detail = _per_value(zones, lambda z: in_zones(zones=z) if z else no_zone)
    rv = status == "review"
    if rv.any():
        say, what = _form(rule, "in_sfha", "share", "subject", "zones"), ctx.subject_layer[:-1]
        detail[rv] = [say(share=s, subject=what, zones=z or na) for s, z in zip(share_texts(share[rv]), zones[rv])]
    ne_part = (status == "not_evaluated") & ~nc
    if ne_part.any():
        say = _form(rule, "covered_part_outside", "zones")
        detail[ne_part] = [say(zones=z or na) for z in zones[ne_part]]
    detail[nc] = _no_flood_detail(ctx, rule)
    detail = _with_note(_with_note(detail, cov_note), sl_note)
    geom = _geom_or(masked(rv, ctx.overlaps.get("_sfha", np.full(n, None, dtype=object))), t.geometry.values)
    return _rule_frame(rule, ctx, status, measured=np.where(nc, np.nan, acres_of(sfha)), unit="acres",
                        geometry=geom, detail=detail)


@check("FLD-002")
def check_floodway(ctx: FloodContext, rule: Rule) -> gpd.GeoDataFrame:
    """FLD-002: floodway encroachment (site: violation / review with a no-rise evaluation)."""
    t = ctx.table
    n = len(t)
    fw = t["floodway_sqft"].to_numpy()
    nc = _not_covered(t)
    partial = (t["flood_data"] == "partial").to_numpy()
    share = share_of(fw, t["area_sqft"].to_numpy())
    in_fw = fw > 0
    sl = _sliver_note(t, "floodway", rule)
    cov = _coverage_note(t, rule)
    if ctx.mode == "site":
        no_rise = bool(ctx.site.get("no_rise_evaluation"))
        hit = "review" if no_rise else "violation"
        status = np.where(nc, "not_evaluated", np.where(in_fw, hit, np.where(partial, "not_evaluated", "pass")))
        detail = np.full(n, "", dtype=object)
        why = rule.phrase("no_rise_supplied" if no_rise else "no_rise_missing")
        if in_fw.any():
            say = _form(rule, "footprint_share", "share")
            detail[in_fw] = [f"{say(share=s)}; {why}" for s in share_texts(share[in_fw], 0)]
        measured = np.where(nc, np.nan, fw)
        unit = "sqft"
    else:
        status = np.where(nc, "not_evaluated", np.where(in_fw, "review", np.where(partial, "not_evaluated", "pass")))
        detail = np.full(n, "", dtype=object)
        if in_fw.any():
            say = _form(rule, "parcel_in_floodway", "acres", "share")
            detail[in_fw] = [say(acres=fmt_num(a), share=s)
                             for a, s in zip(acres_of(fw[in_fw]), share_texts(share[in_fw]))]
        measured = np.where(nc, np.nan, acres_of(fw))
        unit = "acres"
    detail[~in_fw & ~nc] = rule.phrase("no_floodway")
    detail[~in_fw & ~nc & t["floodway_sliver"].to_numpy(dtype=bool)] = rule.phrase("floodway_sliver_only")
    ne_part = (status == "not_evaluated") & ~nc
    detail[ne_part] = rule.phrase("covered_part_no_floodway")
    if ctx.flood_given and not _subtype_known(ctx):
        # without ZONE_SUBTY values a floodway cannot be told from the rest of the SFHA: only parcels
        # with no SFHA at all (a floodway always lies in the SFHA) can pass
        unknown = ~nc & (t["sfha_sqft"].to_numpy() > 0)
        status = np.where(unknown, "not_evaluated", status)
        measured = np.where(unknown, np.nan, measured)
        detail[unknown] = _no_subtype_text(ctx, rule)
    # a floodway-like area (STATE / COMMUNITY ENCROACHMENT AREA, FLOWAGE EASEMENT AREA, DENSITY FRINGE AREA) and
    # no floodway: the floodway is not determined there (whether § 6-138 applies is the local administrator's
    # reading), never a pass
    in_enc, enc_detail, enc_note = _encroachment_areas(ctx, rule, in_fw, nc)
    status = np.where(in_enc, "not_evaluated", status)
    measured = np.where(in_enc, np.nan, measured)
    detail[in_enc] = enc_detail[in_enc]
    detail[nc] = _no_flood_detail(ctx, rule)
    detail = _with_note(_with_note(_with_note(detail, enc_note), cov), sl)
    geom = _geom_or(masked(in_fw, ctx.overlaps.get("_floodway", np.full(n, None, dtype=object))),
                    t.geometry.values)
    if in_enc.any():
        geom = _geom_or(masked(in_enc, ctx.overlaps.get("_encroachment", np.full(n, None, dtype=object))), geom)
    return _rule_frame(rule, ctx, status, measured=measured, unit=unit, geometry=geom, detail=detail)


def _encroachment_areas(ctx: FloodContext, rule: Rule, in_fw: np.ndarray,
                        nc: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """FLD-002's subjects in a floodway-like area (a ZONE_SUBTY of ``encroachment_subtypes_contain``: NFHL's
    STATE / COMMUNITY ENCROACHMENT AREA, FLOWAGE EASEMENT AREA, DENSITY FRINGE AREA) and not in the floodway, the
    sentence saying so, and the note of the others (also in one, beside the floodway; a sliver of one ignored).
    Loops over those subjects only.
    """
    t = ctx.table
    n = len(t)
    empty = np.full(n, "", dtype=object)
    if "encroachment_sqft" not in t:  # a table measured without the encroachment cover
        return np.zeros(n, dtype=bool), empty, empty
    enc = t["encroachment_sqft"].to_numpy()
    has = (enc > 0) & ~nc
    only = has & ~in_fw
    both = has & in_fw
    names = (np.asarray(t["encroachment_subtypes"].to_numpy(), dtype=object) if "encroachment_subtypes" in t
             else empty)
    detail, note = empty.copy(), _sliver_note(t, "encroachment", rule)
    note[has] = ""
    known = ctx.known_subtypes
    also_like = _form(rule, "also_floodway_like", "subtypes")
    also_odd = _form(rule, "also_odd_subtype", "subtypes")

    def also(names: str) -> str:  # the floodway-like areas and odd subtypes named beside another outcome
        odd, like = _odd_and_like(names, known)
        return ((f"; {also_odd(subtypes=_and(odd, rule))}" if odd else "")
                + (f"; {also_like(subtypes=_and(like, rule))}" if like or not odd else ""))

    if both.any():
        note[both] = _per_value(names[both], also)
    if not only.any():
        return only, detail, note
    share = share_of(enc, t["area_sqft"].to_numpy())
    if ctx.mode == "site":
        say = _form(rule, "footprint_amount", "sqft", "share")
        amount = [say(sqft=fmt_num(a), share=s) for a, s in zip(enc[only], share_texts(share[only], 0))]
        why = "; " + rule.phrase("like_no_rise_supplied" if ctx.site.get("no_rise_evaluation") else "like_no_rise_missing")
    else:
        say = _form(rule, "parcel_amount", "acres", "share")
        amount = [say(acres=fmt_num(a), share=s) for a, s in zip(acres_of(enc[only]), share_texts(share[only]))]
        why = ""
    like, odd_form = _form(rule, "floodway_like", "amount", "subtypes"), _form(rule, "odd_subtype", "amount", "subtypes")

    def sentence(a: str, names: str) -> str:  # an odd subtype first (its reading is the less known), then the rest
        odd, rest = _odd_and_like(names, known)
        if not odd:
            return like(amount=a, subtypes=_and(rest, rule))
        return odd_form(amount=a, subtypes=_and(odd, rule)) + (f"; {also_like(subtypes=_and(rest, rule))}" if rest else "")

    detail[only] = [sentence(a, s) + why for a, s in zip(amount, names[only])]
    return only, detail, note


def _and(names: str, rule: Rule) -> str:
    """``'A; B'`` as ``'A and B'`` (the rule's phrase ``and_joint``); ``''`` as its phrase ``subtypes_not_named``
    (each subtype's part a sliver, together not).

    Examples
    --------
    >>> r = Rule(id="ABC-001", title="t", group="flood", citation="c",
    ...          phrases={"and_joint": " and ", "subtypes_not_named": "not named"})
    >>> _and("STATE ENCROACHMENT AREA; FLOWAGE EASEMENT AREA", r), _and("", r)
    ('STATE ENCROACHMENT AREA and FLOWAGE EASEMENT AREA', 'not named')
    """
    return names.replace("; ", rule.phrase("and_joint")) if names else rule.phrase("subtypes_not_named")


def _meets(floor: float, required: float, precision_ft: float) -> bool:
    """``floor`` is at or above ``required`` when both are rounded (half up) to ``precision_ft``.

    Surveyed elevations are stated to 0.01 ft; a DEM stored as float32 holds 845.4 as
    845.4000244, which must not make a floor of 847.4 fail a requirement of 845.4 + 2 ft.

    Examples
    --------
    >>> _meets(847.4, 845.4000244 + 2.0, 0.01), _meets(847.39, 847.4, 0.01)
    (True, False)
    """
    return bool(np.floor(floor / precision_ft + 0.5) >= np.floor(required / precision_ft + 0.5))


def _elev_pair(a: float, b: float, precision_ft: float) -> tuple[str, str]:
    """Two elevations printed at 0.1 ft, or at the comparison precision when 0.1 ft hides their difference.

    Examples
    --------
    >>> _elev_pair(847.39, 847.4, 0.01), _elev_pair(850.0, 847.4, 0.01)
    (('847.39', '847.40'), ('850.0', '847.4'))
    """
    ta, tb = ft_text(a), ft_text(b)
    if ta == tb and not _meets(a, b, precision_ft):
        nd = max(0, -int(np.floor(np.log10(precision_ft))))
        return f"{a:,.{nd}f}", f"{b:,.{nd}f}"
    return ta, tb


def stated_bfe(value: float | None) -> float | None:
    """The BFE from other data the user stated (``--bfe-ft``, § 6-121(b)(5)) as FLD-003, FLD-004 and the
    footprints table read it: None where none is stated, and where it is 0: no BFE is 0 ft (the NFHL's own
    reading of a 0 in ``STATIC_BFE`` or ``ELEV``, see :mod:`geoconstraints.io.validate`), so a 0 is a field
    left 0 (an elevation certificate's blank), never a BFE below the FIRM's that lets its BFE pass for the
    whole footprint.

    Examples
    --------
    >>> [stated_bfe(v) for v in (None, 0.0, 0, -0.0, 812.5, -3.0)]
    [None, None, None, None, 812.5, -3.0]
    """
    return None if value is None or float(value) == 0.0 else float(value)


def _stated_bfe(ctx: FloodContext) -> float | None:
    """:func:`stated_bfe` of the site's ``bfe_ft``."""
    return stated_bfe(ctx.site.get("bfe_ft"))


def _zero_bfe_note(ctx: FloodContext, rule: Rule) -> str:
    """``'; '`` and the rule's phrase ``zero_bfe`` (--bfe-ft 0 is read as no BFE stated) where the stated BFE is
    0 (:func:`_stated_bfe`), else ``''``."""
    value = ctx.site.get("bfe_ft")
    if value is None or float(value) != 0.0:
        return ""
    return f"; {rule.phrase('zero_bfe', given='0')}"  # -0.0 too: the value read as none


def _floor_frame(ctx: FloodContext, rule: Rule,
                 one: Callable[[FloodContext, Rule, pd.Series], tuple[str, str, float]]) -> gpd.GeoDataFrame:
    """The frame of a floor-elevation rule (FLD-003, FLD-004): ``one`` gives (status, detail, required
    floor) per proposed footprint (a handful: a loop is fine); measured = the lowest floor given. A BFE
    stated as 0 is none (:func:`_stated_bfe`), said in every detail (:func:`_zero_bfe_note`). Every sentence is
    one of the rule's phrases (FLD-003's and FLD-004's ``phrases`` in the rulebook)."""
    t = ctx.table
    floor = ctx.site.get("lowest_floor_ft")
    found = [one(ctx, rule, t.iloc[i]) for i in range(len(t))]
    measured = np.full(len(t), np.nan if floor is None else float(floor))
    note = _zero_bfe_note(ctx, rule)
    return _rule_frame(rule, ctx, np.array([f[0] for f in found], dtype=object), measured=measured,
                       threshold=np.array([f[2] for f in found], dtype=float), unit="ft",
                       detail=np.array([f[1] + note for f in found], dtype=object))


@check("FLD-003")
def check_bfe_floor(ctx: FloodContext, rule: Rule) -> gpd.GeoDataFrame:
    """FLD-003: lowest floor at or above the BFE where the FIRM gives one (site check only)."""
    if ctx.mode != "site":
        return ctx.none()
    return _floor_frame(ctx, rule, _fld003_one)


def _fld003_one(ctx: FloodContext, rule: Rule, row: pd.Series) -> tuple[str, str, float]:
    """(status, detail, required floor) of one footprint under FLD-003."""
    use, floor, user_bfe = ctx.site.get("use"), ctx.site.get("lowest_floor_ft"), _stated_bfe(ctx)
    say = rule.phrase
    gate = _site_gate(ctx, rule, row)
    if gate is not None:
        return (*gate, np.nan)
    if use == "manufactured":
        return "info", say("manufactured"), np.nan
    if not _firm_gives_bfe(row):
        # a zone in the SFHA by SFHA_TF alone (AR/AE, a value no list knows): whether the FIRM gives a BFE there (and
        # this rule applies) is not known, and FLD-004 gives no pass on the ground alone (_fld004_one)
        unlisted = _unlisted_zones(ctx.no_bfe_zones, row, say("blank_zone"))
        if unlisted and user_bfe is None:
            return "not_evaluated", say("unlisted_zone", zones=unlisted), np.nan
        if unlisted:
            return "info", say("unlisted_zone_stated", zones=unlisted), np.nan
        return "info", say("no_bfe_zone", zones=str(row["flood_zones"])), np.nan
    bfe, src, complete, whence = _site_bfe(rule, row, user_bfe)
    if bfe is None:
        return "not_evaluated", say("bfe_undetermined", bfe_note=str(row["bfe_note"])), np.nan
    fb = rule.t("min_freeboard_ft")
    req = bfe + fb
    prec = rule.t("elevation_precision_ft")
    datum = row["bfe_datum"] or (row["bfe_known_datum"] if np.isnan(row["bfe_ft"]) and bfe == row["bfe_known_ft"]
                                 else "")
    dat = say("datum", datum=str(datum)) if datum else ""
    least = "" if complete else say("at_least")
    if floor is None:
        return "not_evaluated", say("no_floor", least=least, required=ft_text(req), datum=dat, source=src), req
    f_txt, r_txt = _elev_pair(float(floor), req, prec)
    if _meets(float(floor), req, prec):
        if not complete:  # met where the BFE is known; the part without one may need more
            return "not_evaluated", say("meets_part", floor=f_txt, required=r_txt, datum=dat, source=src), req
        # part of it in an SFHA zone no list knows (AR/AE beside AE): the FIRM may give a higher BFE there, not read
        unlisted = "" if user_bfe is not None else _unlisted_zones(ctx.no_bfe_zones, row, say("blank_zone"))
        if unlisted:
            return "not_evaluated", say("meets_unlisted", floor=f_txt, required=r_txt, datum=dat, source=src,
                                        zones=unlisted), req
        return "pass", say("meets", floor=f_txt, required=r_txt, datum=dat, source=src), req
    reached = _bfe_reached(row, whence, prec)
    if reached is not None:  # the BFE lies between the highest reached at a sample point and the bound
        if _meets(float(floor), reached + fb, prec):
            k_txt = _elev_pair(float(floor), reached + fb, prec)[1]
            return "not_evaluated", say("meets_reached", floor=f_txt, reached=k_txt, required=r_txt, datum=dat,
                                        source=src), req
        least, (f_txt, r_txt) = say("at_least"), _elev_pair(float(floor), reached + fb, prec)
    said = {"floor": f_txt, "least": least, "required": r_txt, "datum": dat, "source": src}
    if use == "nonresidential":
        return "review", say("floodproofing", **said), req
    return "violation", say("below", **said), req


def _bfe_reached(row: pd.Series, whence: str, precision_ft: float) -> float | None:
    """The highest BFE reached at a sample point of the footprint (``bfe_known_ft``) where the BFE in use is
    the FIRM's (``whence``, :func:`bfe_in_use`'s, is ``"firm"``: the BFE in use is ``bfe_ft``) and it is only
    an upper bound above it (``bfe_ft``: the highest the BFE lines can give on the footprint,
    :func:`geoconstraints.geometry.bfe_sample._footprint_bfe`); None where the BFE in use is another's (a BFE
    stated, or the known one: nothing above it) or where ``bfe_ft`` is reached.

    A floor below the value returned is below the BFE for sure; one at or above it but below ``bfe_ft`` is not
    determined; one at or above ``bfe_ft`` meets it everywhere.

    Examples
    --------
    >>> row = pd.Series({"bfe_ft": 808.4, "bfe_known_ft": 807.2})
    >>> _bfe_reached(row, "firm", 0.01), _bfe_reached(row.replace(807.2, 808.4), "firm", 0.01)
    (807.2, None)
    >>> _bfe_reached(pd.Series({"bfe_ft": np.nan, "bfe_known_ft": 807.2}), "lower_bound", 0.01) is None
    True
    """
    if whence != "firm":
        return None
    firm, known = float(row["bfe_ft"]), float(row["bfe_known_ft"])
    if not np.isfinite(known) or _meets(known, firm, precision_ft):
        return None
    return known


def _site_gate(ctx: FloodContext, rule: Rule, row: pd.Series) -> tuple[str, str] | None:
    """(status, detail) when a footprint is not in the SFHA or not covered, in the rule's phrases
    (``no_flood_layer``, ``not_covered``, ``part_not_covered``, ``outside_sfha``); None otherwise."""
    if row["flood_data"] == "no_data":
        return "not_evaluated", rule.phrase("not_covered" if ctx.flood_given else "no_flood_layer")
    if row["sfha_sqft"] <= 0:
        if row["flood_data"] == "partial":
            return "not_evaluated", rule.phrase("part_not_covered")
        return "pass", rule.phrase("outside_sfha")
    return None


def _firm_gives_bfe(row: pd.Series) -> bool:
    """The FIRM gives a BFE on the footprint's part in the SFHA: some of it lies in a zone with BFEs (AE,
    A1-A30, ...: its BFE a ``STATIC_BFE`` or read off the BFE lines, interpolated) or in a flood zone
    polygon stating a ``STATIC_BFE``.

    Told by area, never by the method of the BFE found: that is the method of the highest sample
    point only (a static BFE below an interpolated one elsewhere on the footprint is still the
    FIRM's), and a corner merely touching a static-BFE polygon next door gets its value.
    """
    return bool(firm_gives_bfe(row["bfe_zone_sqft"], row["static_bfe_sqft"]))


def _no_bfe_part(row: pd.Series) -> bool:
    """Part of the footprint's SFHA part lies where the FIRM gives no BFE (zone A: ``no_bfe_sqft``, see
    :func:`geoconstraints.geometry.bfe_sample._no_bfe_parts`); with :func:`_firm_gives_bfe`, a footprint in
    both, judged by FLD-003 on the BFE and by FLD-004 on its zone A part (§ 6-137(d): the stricter governs)."""
    return bool(float(row.get("no_bfe_sqft", 0.0)) > 0)


def _unlisted_zones(listed: frozenset[str], row: pd.Series, blank: str) -> str:
    """The zones of the footprint's SFHA part without a BFE read (``no_bfe_zones`` of the table: no zone with
    BFEs, no ``STATIC_BFE``) that are none of ``listed`` (:attr:`FloodContext.no_bfe_zones`: A, AO, A99, V, VO,
    the zones the FIRM gives no BFE in), ``'AR/AE, AR'``; ``''`` where none. Such a zone is in the SFHA only by
    its ``SFHA_TF`` = T (an AR or AR/AE zone, a value the rulebook's lists do not know): whether the FIRM gives
    a BFE there is not known, so neither § 6-137(d) (FLD-004) nor the BFE of the rest (FLD-003) is its
    whole requirement. A blank zone is named ``blank`` (the rule's phrase ``blank_zone``: ``(no FLD_ZONE value)``).
    FLD-004 names such a zone in its phrase ``unlisted_zone``; FLD-003, where the footprint's SFHA part lies in no
    zone with BFEs, is not evaluated there (its phrase ``unlisted_zone``) unless a BFE is stated.

    Examples
    --------
    >>> listed, blank = frozenset({"A", "AO", "A99", "V", "VO"}), "(no FLD_ZONE value)"
    >>> row = pd.Series({"no_bfe_sqft": 100.0, "no_bfe_zones": "A, AO, AR/AE"})
    >>> _unlisted_zones(listed, row, blank), _unlisted_zones(listed, row.replace("A, AO, AR/AE", "A, AO"), blank)
    ('AR/AE', '')
    >>> _unlisted_zones(listed, pd.Series({"no_bfe_sqft": 100.0, "no_bfe_zones": ""}), blank)
    '(no FLD_ZONE value)'
    >>> _unlisted_zones(listed, pd.Series({"no_bfe_sqft": 0.0, "no_bfe_zones": ""}), blank)
    ''
    """
    if not _no_bfe_part(row):
        return ""
    names = [z.strip().upper() for z in str(row.get("no_bfe_zones", "") or "").split(",")]
    return ", ".join(z or blank for z in names if z not in listed)


def firm_gives_bfe(bfe_zone_sqft: Any, static_bfe_sqft: Any) -> np.ndarray:
    """:func:`_firm_gives_bfe` of many footprints at once (the footprints table says the same as the
    rules: where the FIRM gives no BFE, FLD-004 applies and no BFE of the FIRM is used).

    Examples
    --------
    >>> firm_gives_bfe([0.0, 12.5, 0.0], [0.0, 0.0, 3.0]).tolist()
    [False, True, True]
    """
    return (np.asarray(bfe_zone_sqft, dtype=float) > 0) | (np.asarray(static_bfe_sqft, dtype=float) > 0)


STATED_BFE_METHOD = "stated_other_data"
"""``bfe_method`` of the footprints table where the BFE used is the one the user stated (``--bfe-ft``: a BFE
from other data, § 6-121(b)(5)), beside the methods of :data:`~geoconstraints.geometry.bfe.BFE_METHODS`."""


def bfe_in_use(firm_ft: float, known_ft: float, stated_ft: float | None) -> tuple[float, str]:
    """(BFE, whence) of a footprint where the FIRM gives a BFE: the one FLD-003 (and FLD-004 for a
    manufactured home) uses, and the footprints table shows.

    Parameters
    ----------
    firm_ft : float
        The FIRM's BFE determined over the whole footprint (``bfe_ft``), NaN where part of it in a BFE
        zone has none.
    known_ft : float
        The highest BFE the FIRM data gives on the footprint (``bfe_known_ft``), NaN when none.
    stated_ft : float or None
        The BFE the user stated (``--bfe-ft``), None when not stated.

    Returns
    -------
    tuple of (float, str)
        ``whence`` is ``"firm"``: the FIRM's BFE (a stated BFE is not used: § 6-121(b)(5) other data
        stands in only where the FIRM gives none); ``"stated"``: the stated BFE standing in for the part
        without one, at or above the FIRM data's known BFE; ``"firm_known"``: that known BFE, above the
        stated one (other data never lowers the bar below the FIRM's); ``"lower_bound"``: nothing stated,
        the known BFE, a lower bound of the site's; ``"none"``: nothing known (NaN).

    Examples
    --------
    >>> bfe_in_use(802.0, 802.0, 790.0), bfe_in_use(np.nan, 809.0, 811.0), bfe_in_use(np.nan, 809.0, 805.0)
    ((802.0, 'firm'), (811.0, 'stated'), (809.0, 'firm_known'))
    >>> bfe_in_use(np.nan, 809.0, None), bfe_in_use(np.nan, np.nan, None)
    ((809.0, 'lower_bound'), (nan, 'none'))
    """
    if np.isfinite(firm_ft):
        return float(firm_ft), "firm"
    if stated_ft is not None:
        if np.isfinite(known_ft) and known_ft > float(stated_ft):
            return float(known_ft), "firm_known"
        return float(stated_ft), "stated"
    if np.isfinite(known_ft):
        return float(known_ft), "lower_bound"
    return np.nan, "none"


def _site_bfe(rule: Rule, row: pd.Series, user_bfe: float | None) -> tuple[float | None, str, bool, str]:
    """(BFE, a phrase saying where it comes from, complete, whence) of a footprint where the FIRM gives a BFE;
    ``whence`` is :func:`bfe_in_use`'s (``"firm"``: the FIRM's BFE over the whole footprint is in use). The
    phrase is ``rule``'s (FLD-003's, or FLD-004's for a manufactured home): ``bfe_firm`` (with
    ``stated_not_used_part`` or ``stated_not_used_whole`` where a BFE is stated), ``bfe_firm_known``,
    ``bfe_stated`` or ``bfe_lower_bound``.

    The BFE of :func:`bfe_in_use`: the FIRM's BFE when determined over the whole footprint (a BFE given
    by the user is then not used: § 6-121(b)(5) other data stands in only where the FIRM gives none).
    Where part of the footprint in a BFE zone has no BFE, the user's BFE stands in for that part, but
    never below the highest BFE the FIRM data gives elsewhere on the footprint (``bfe_known_ft``): the
    higher of the two (with a warning when the FIRM's is higher). Without a user's BFE, that highest
    known BFE is returned with ``complete`` False: a lower bound of the site's BFE (the highest over the
    footprint), which a floor below it fails for sure and a floor at or above it does not pass.
    """
    bfe, whence = bfe_in_use(float(row["bfe_ft"]), float(row["bfe_known_ft"]), user_bfe)
    say = rule.phrase
    if whence == "firm":
        src = say("bfe_firm", method=row["bfe_method"].replace("_", " "), bfe_note=str(row["bfe_note"]))
        if user_bfe is not None:
            src += "; " + say("stated_not_used_part" if _no_bfe_part(row) else "stated_not_used_whole",
                              given=ft_text(float(user_bfe)))
        return bfe, src, True, whence
    if whence == "firm_known":
        given = np.nan if user_bfe is None else float(user_bfe)  # never None here
        log.warning("footprint %s: the BFE given (--bfe-ft %s ft) is below the %s ft the FIRM data gives on part of "
                    "it: the higher, %s ft, is used", row["feature_id"], ft_text(given), ft_text(bfe), ft_text(bfe))
        return bfe, say("bfe_firm_known", bfe=ft_text(bfe), given=ft_text(given), bfe_note=str(row["bfe_note"])), True, \
            whence
    if whence == "stated":
        return bfe, say("bfe_stated", bfe=ft_text(bfe), bfe_note=str(row["bfe_note"])), True, whence
    if whence == "lower_bound":
        return bfe, say("bfe_lower_bound", bfe_note=str(row["bfe_note"])), False, whence
    return None, "", True, whence


@check("FLD-004")
def check_no_bfe_floor(ctx: FloodContext, rule: Rule) -> gpd.GeoDataFrame:
    """FLD-004: no BFE on the FIRM: floor >= max(BFE from other data, HAG + hag_freeboard_ft); manufactured homes."""
    if ctx.mode != "site":
        return ctx.none()
    return _floor_frame(ctx, rule, _fld004_one)


def _fld004_required(ctx: FloodContext, rule: Rule,
                     row: pd.Series) -> tuple[float | None, str, bool, float | None]:
    """(required floor, how it was found, complete, reached) of one footprint in the SFHA under FLD-004.

    ``required`` is None when nothing is known; ``complete`` is False when the requirement is only a
    lower bound (no DEM under the footprint, or the DEM covers only part of its walls). A footprint
    lying partly where the FIRM gives a BFE and partly in zone A (:func:`_no_bfe_part`): the zone A
    part's requirement (§ 6-137(d), the HAG of the whole structure's walls), for a manufactured home
    the higher of it and the BFE (the stricter governs). ``reached``: the requirement a floor fails for
    sure, ``required`` itself except where the manufactured home's BFE is an upper bound above the BFE
    reached on the footprint (:func:`_bfe_reached`): a floor between the two is not determined.
    """
    user_bfe = _stated_bfe(ctx)
    firm = _firm_gives_bfe(row)
    say = rule.phrase
    mh: tuple[float | None, str, bool] | None = None
    mh_reached: float | None = None
    if firm and ctx.site.get("use") == "manufactured":  # at or above the BFE
        bfe, src, complete, whence = _site_bfe(rule, row, user_bfe)
        if bfe is None:
            mh = None, say("mh_no_bfe", bfe_note=str(row["bfe_note"])), False
        else:
            least = "" if complete else say("at_least")
            mh = bfe, say("mh_bfe", least=least, bfe=ft_text(bfe), source=src), complete
            mh_reached = _bfe_reached(row, whence, rule.t("elevation_precision_ft"))
            if mh_reached is None:
                mh_reached = bfe
        if not _no_bfe_part(row):
            return (*mh, mh_reached)
    req, how, complete = _no_bfe_required(rule, row, user_bfe)
    if not firm:
        return req, how, complete, req
    how = say("zone_a_part", zones=str(row["no_bfe_zones"]), how=how)
    if mh is None:
        return req, f"{how}; {say('bfe_part')}", complete, req
    known = [v for v in (mh[0], req) if v is not None]
    if not known:
        return None, f"{mh[1]}; {how}", False, None
    top = max(known)
    reached = max(v for v in (mh_reached, req) if v is not None)
    return top, say("higher_of_both", required=ft_text(top), parts=f"{mh[1]}; {how}"), \
        bool(mh[2] and complete and len(known) == 2), reached


def _no_bfe_required(rule: Rule, row: pd.Series, user_bfe: float | None) -> tuple[float | None, str, bool]:
    """(required floor, how it was found, complete) where the FIRM gives no BFE (§ 6-137(d)): the higher
    of a BFE from other data and the highest adjacent grade + ``hag_freeboard_ft``."""
    fb = rule.t("hag_freeboard_ft")
    say = rule.phrase
    hag, frac = float(row["hag_ft"]), float(row["hag_fraction"])
    cands, words = [], []
    if user_bfe is not None:
        cands.append(float(user_bfe))
        words.append(say("other_data_bfe", bfe=ft_text(float(user_bfe))))
    if np.isfinite(hag):
        cands.append(hag + fb)
        grade = {"hag": ft_text(hag), "required": ft_text(hag + fb)}
        words.append(say("hag_plus_partial", **grade, share=f"{frac:.0%}") if under_limit(frac, 1.0)
                     else say("hag_plus", **grade))
    if not cands:
        return None, say("nothing_known"), False
    req = max(cands)
    how = say("required_max", candidates=words, required=ft_text(req))
    if not np.isfinite(hag):
        how += f"; {say('hag_unknown')}"
    elif under_limit(frac, 1.0):  # the whole within float noise is the whole
        how += f"; {say('dem_part_of_walls', share=f'{frac:.0%}')}"
    return req, how, bool(np.isfinite(hag) and at_least(frac, 1.0))


def _coarse_hag_cell(ctx: FloodContext, rule: Rule, row: pd.Series) -> float:
    """The DEM's cell (the larger side, international feet) when the footprint's FLD-004 requirement
    includes a highest adjacent grade read on a DEM whose cells are over ``max_dem_cell_ft`` (a grid in
    US survey feet at the limit, :func:`~geoconstraints.units.cell_within`, is within it), else NaN.

    A cell holds the average ground of its whole width, so on a slope the grade sampled along the walls
    reads the highest adjacent grade low by up to about the slope x half a cell: the requirement found
    may be too low, and a floor meeting it is no pass. The HAG is used wherever the FIRM gives no BFE on
    the footprint or on part of it (a manufactured home wholly in a BFE zone needs the BFE only).
    """
    dem = ctx.layers.dem
    if dem is None or not np.isfinite(float(row["hag_ft"])):
        return np.nan
    if _firm_gives_bfe(row) and not _no_bfe_part(row):
        return np.nan
    cell = float(dem.max_cell_size_ft)
    if cell_within(cell, rule.t("max_dem_cell_ft")):
        return np.nan
    return cell if np.isfinite(cell) else np.inf


def _coarse_hag_note(rule: Rule, cell: float) -> str:
    """The sentence added to an FLD-004 finding whose highest adjacent grade was read on DEM cells of ``cell``
    ft, over ``max_dem_cell_ft`` (a violation stays): FLD-004's phrase ``coarse_cells``, the cell written by
    :func:`~geoconstraints.rules.dem_cells.cell_text` as the other rules' ``coarse_cells`` write it.

    Examples
    --------
    >>> from geoconstraints.rulebook.loader import load_rulebook
    >>> print(_coarse_hag_note(load_rulebook("vestal")["FLD-004"], 32.8))
    measured on DEM cells of 32.8 ft, coarser than the 10 ft limit (max_dem_cell_ft): the highest adjacent grade is the coarse grid's, which on a slope reads low
    """
    return rule.phrase("coarse_cells", cell=dem_cells.cell_text(cell))


def _coarse_hag_detail(rule: Rule, cell: float, hag: float) -> str:
    """Why a floor meeting a requirement from a highest adjacent grade of ``hag`` ft read on cells of ``cell``
    ft is not a pass: FLD-004's phrase ``coarse_pass`` (as the other rules' ``coarse_pass`` phrases word it;
    :mod:`~geoconstraints.rules.dem_cells`): the cell size, the limit, the error (up to about the slope x half a cell) and
    FLD-004's fix, its phrase ``finer_dem``.

    Examples
    --------
    >>> from geoconstraints.rulebook.loader import load_rulebook
    >>> print(_coarse_hag_detail(load_rulebook("vestal")["FLD-004"], 32.8, 108.35))
    the DEM's cells are 32.8 ft (the larger of their width and height), over the 10 ft a pass needs (max_dem_cell_ft): each cell holds one elevation for its whole width, so on a slope the grade beside the walls reads low by up to about the slope x half a cell (1.6 ft at 10 %) and the floor may need to be higher; the coarse grid showed: a highest adjacent grade of 108.3 ft; give a finer pre-construction DEM: USGS 3DEP 1 m lidar (about 3.3 ft cells, widely available in New York) or one made from a topographic survey of the site (a surveyed highest adjacent grade is not taken as an option)
    """
    slope_pct = 10  # the slope the error is given at
    return rule.phrase("coarse_pass", cell=dem_cells.cell_text(cell), error=f"{slope_pct / 100 * cell / 2:,.1f}",
                       slope=slope_pct, hag=ft_text(hag), fix=rule.phrase("finer_dem"))


def _far_below_grade(ctx: FloodContext, rule: Rule, row: pd.Series) -> str:
    """Why the BFE stated (``--bfe-ft``) cannot be the base flood elevation of a footprint's part without a BFE
    on the FIRM: it lies more than ``max_stated_bfe_below_grade_ft`` below the highest adjacent grade read along
    its walls (a BFE in metres, 246.3 for 808 ft, or another datum's or site's); ``''`` where it does not, where
    none is stated or the grade is unknown. Such a BFE leaves the highest adjacent grade + 2 ft as the requirement,
    though the base flood of the site may be above it: no pass rests on it.

    Examples
    --------
    >>> from types import SimpleNamespace as NS
    >>> from geoconstraints.rulebook.loader import load_rulebook
    >>> rule, row = load_rulebook("vestal")["FLD-004"], pd.Series({"hag_ft": 800.0})
    >>> [bool(_far_below_grade(NS(site={"bfe_ft": b}), rule, row)) for b in (780.0, 779.99, 246.3, None)]
    [False, True, True, False]
    >>> print(_far_below_grade(NS(site={"bfe_ft": 246.3}), rule, row))
    the BFE given, 246.3 ft (--bfe-ft), is 553.7 ft below the highest adjacent grade of 800.0 ft, more than the 20 ft (max_stated_bfe_below_grade_ft) a base flood elevation of land in the area of special flood hazard can lie below it: is it in metres, or another datum's? Give the BFE in feet, in the DEM's and the floor's vertical datum
    """
    stated, hag = _stated_bfe(ctx), float(row["hag_ft"])
    lim = rule.t("max_stated_bfe_below_grade_ft")
    if stated is None or not np.isfinite(hag) or not over_limit(hag - stated, lim):
        return ""
    return rule.phrase("far_below_grade", bfe=ft_text(stated), gap=ft_text(hag - stated), hag=ft_text(hag))


def _fld004_one(ctx: FloodContext, rule: Rule, row: pd.Series) -> tuple[str, str, float]:
    """(status, detail, required floor) of one footprint under FLD-004. A floor meeting a requirement
    whose highest adjacent grade was read on DEM cells over ``max_dem_cell_ft`` is ``not_evaluated``
    (:func:`_coarse_hag_cell`); a violation stays, saying the cell size. So is a floor meeting it where part
    of the footprint lies in an SFHA zone of none of the rulebook's lists and no BFE is stated
    (:func:`_unlisted_zones`: the FIRM may give a BFE there above the requirement); a violation stays, saying
    so."""
    say = rule.phrase
    gate = _site_gate(ctx, rule, row)
    if gate is not None:
        return (*gate, np.nan)
    if _firm_gives_bfe(row) and ctx.site.get("use") != "manufactured" and not _no_bfe_part(row):
        return "info", say("firm_gives_bfe"), np.nan
    req, how, complete, reached = _fld004_required(ctx, rule, row)
    if req is None:
        return "not_evaluated", how, np.nan
    cell, plain = _coarse_hag_cell(ctx, rule, row), how
    if not np.isnan(cell):
        how += f"; {_coarse_hag_note(rule, cell)}"
    # a zone in the SFHA by SFHA_TF alone (AR/AE, a value no list knows) may have a BFE of the FIRM: a BFE stated
    # (--bfe-ft) is in the requirement, else the requirement found may be too low
    unlisted = "" if _stated_bfe(ctx) is not None else _unlisted_zones(ctx.no_bfe_zones, row, say("blank_zone"))
    if unlisted:
        how += f"; {say('unlisted_zone', zones=unlisted, listed=sorted(ctx.no_bfe_zones))}"
    far = _far_below_grade(ctx, rule, row) if not _firm_gives_bfe(row) or _no_bfe_part(row) else ""
    if far:
        how += f"; {far}"
    floor = ctx.site.get("lowest_floor_ft")
    if floor is None:
        return "not_evaluated", f"{how}; {say('no_floor')}", req
    prec = rule.t("elevation_precision_ft")
    f_txt, r_txt = _elev_pair(float(floor), req, prec)
    said = {"floor": f_txt, "required": r_txt, "how": how}
    if reached is not None and not _meets(reached, req, prec) and not _meets(float(floor), req, prec):
        k_txt = _elev_pair(float(floor), reached, prec)[1]
        if _meets(float(floor), reached, prec):  # the BFE lies between the two
            return "not_evaluated", say("floor_between", **said, reached=k_txt), req
        return "violation", say("floor_below_range", **said, reached=k_txt), req
    if not _meets(float(floor), req, prec):
        return "violation", say("floor_required", **said), req  # below even a lower bound of the requirement
    if not complete:
        return "not_evaluated", say("meets_known_so_far", **said), req
    if far:  # the stated BFE is no BFE of the site: the site's may be above the requirement found
        return "not_evaluated", say("meets_far_below_grade", **said), req
    if unlisted:  # the FIRM may give a BFE above the requirement found there: no promise
        return "not_evaluated", say("meets_unlisted", **said), req
    if not np.isnan(cell):  # a HAG the coarse grid may read low: the floor meeting it is no promise
        return "not_evaluated", say("meets_coarse", floor=f_txt, required=r_txt, how=plain,
                                    coarse=_coarse_hag_detail(rule, cell, float(row["hag_ft"]))), req
    return "pass", say("floor_required", **said), req


def _near_limit_text(acres: np.ndarray, lim: float, rule: Rule) -> np.ndarray:
    """``'; 21,781.5 sq ft, over the 21,780 sq ft of 0.5 acre'`` (the rule's phrase ``near_over`` or
    ``near_under``: ``{sqft}``, ``{limit_sqft}``, ``{limit}``) where the acres as printed (:func:`fmt_num`)
    read as the limit but are over or under it (the square feet printed to the decimal that shows it), else
    ``''``: a lot just over 0.5 acre never reads "lot of 0.5 acres (over 0.5 acre ...)" alone.

    Examples
    --------
    >>> r = Rule(id="ABC-001", title="t", group="flood", citation="c", phrases={
    ...     "near_over": "{sqft} sq ft, over the {limit_sqft} sq ft of {limit} acre",
    ...     "near_under": "{sqft} sq ft, under the {limit_sqft} sq ft of {limit} acre"})
    >>> _near_limit_text(np.array([21_781.5, 21_780.0, 21_779.99, 30_000.0]) / 43_560, 0.5, r).tolist()
    ['; 21,781.5 sq ft, over the 21,780 sq ft of 0.5 acre', '', '; 21,779.99 sq ft, under the 21,780 sq ft of 0.5 acre', '']
    """
    acres = np.asarray(acres, dtype=float)
    out = np.full(len(acres), "", dtype=object)
    lim_sqft = lim * SQFT_PER_ACRE
    over = over_limit(acres, lim)
    under = under_limit(acres, lim)
    near = (over | under) & (np.abs(acres - lim) < 0.01)  # fmt_num prints 2 decimals: only these may read as lim
    said: dict[str, Callable[..., str]] = {}  # each phrase rendered once, for the first lot that needs it
    for i in np.flatnonzero(near):
        if fmt_num(acres[i]) != fmt_num(lim):
            continue
        sqft = acres[i] * SQFT_PER_ACRE
        text = fmt_num(sqft)
        for nd in range(1, 7):  # the fewest decimals that tell the area from the limit
            text = f"{sqft:,.{nd}f}".rstrip("0").rstrip(".")
            if text != fmt_num(lim_sqft):
                break
        key = "near_over" if over[i] else "near_under"
        say = said.get(key) or said.setdefault(key, _form(rule, key, "sqft", "limit_sqft", "limit"))
        out[i] = "; " + say(sqft=text, limit_sqft=fmt_num(lim_sqft), limit=f"{lim:g}")
    return out


def _by_acres(ctx: FloodContext, rule: Rule, limit: str) -> tuple[pd.DataFrame, np.ndarray, float, np.ndarray,
                                                                  np.ndarray]:
    """(table, acres, the rule's acre limit ``limit``, not covered, in the SFHA) of a rule on lot size."""
    t = ctx.table
    return t, t["area_acres"].to_numpy(), rule.t(limit), _not_covered(t), t["sfha_sqft"].to_numpy() > 0


def _acres_frame(ctx: FloodContext, rule: Rule, status: np.ndarray, detail: np.ndarray, acres: np.ndarray,
                 lim: float, nc: np.ndarray) -> gpd.GeoDataFrame:
    """The frame of a rule on lot size: the coverage note added, the no-data detail where not covered."""
    detail = _with_note(detail, _coverage_note(ctx.table, rule))
    detail[nc] = _no_flood_detail(ctx, rule)
    return _rule_frame(rule, ctx, status, measured=acres, threshold=lim, unit="acres", detail=detail)


@check("FLD-005")
def check_bfe_data_large(ctx: FloodContext, rule: Rule) -> gpd.GeoDataFrame:
    """FLD-005: proposals over max_lots lots or max_acres acres in the SFHA provide BFE data (parcels)."""
    if ctx.mode != "screen":
        return ctx.none()
    t, acres, lim, nc, in_sfha = _by_acres(ctx, rule, "max_acres")
    partial = (t["flood_data"] == "partial").to_numpy()
    big = over_limit(acres, lim)  # "more than": a lot of exactly the limit, within float noise, is not
    # the lot test is the proposal's: a parcel not over the area that is (or may be) in the SFHA is info, not pass
    status = np.where(nc, "not_evaluated", np.where(in_sfha & big, "review",
                      np.where(partial & big, "not_evaluated", np.where(in_sfha | partial, "info", "pass"))))
    detail = np.full(len(t), "", dtype=object)
    if (in_sfha & big).any():
        lots = rule.phrase("lots_unknown", lots=f"{rule.t('max_lots'):g}")
        say = _form(rule, "bfe_method", "method")
        detail[in_sfha & big] = [f"{lots}; {say(method=m)}" for m in t["bfe_method"].to_numpy()[in_sfha & big]]
    detail[in_sfha & ~big] = rule.phrase("in_sfha_lots_unknown")
    detail[~in_sfha] = rule.phrase("outside_sfha")
    detail[~in_sfha & ~big & partial] = rule.phrase("partial_no_sfha")
    detail[~in_sfha & big & partial] = rule.phrase("partial_big_no_sfha", limit=f"{lim:g}")
    return _acres_frame(ctx, rule, status, _with_note(detail, _near_limit_text(acres, lim, rule)), acres, lim, nc)


def _in_zones(t: pd.DataFrame, names: frozenset[str]) -> tuple[np.ndarray, np.ndarray]:
    """Which subjects are (non-sliver) in any of ``names``, and the ``'AO, A99'`` text of those they are in.

    Reads the ``flood_zones`` text (``'AE; X'``); loops over the few zone names, not the subjects.
    """
    codes, uniq = pd.factorize(t["flood_zones"].astype(str), use_na_sentinel=False)  # each distinct text once
    text = pd.Series(uniq, dtype=object).astype(str)
    hit = np.zeros(len(text), dtype=bool)
    which = np.full(len(text), "", dtype=object)
    for z in sorted(names):
        m = text.str.contains(rf"(?:^|; ){re.escape(z)}(?:;|$)", regex=True).to_numpy()
        which = np.where(m, np.where(which == "", z, which + ", " + z), which)
        hit |= m
    return hit[codes], which[codes]


def _join(*parts: np.ndarray) -> np.ndarray:
    """Element-wise ``'; '``-join of object arrays of sentences, skipping empty ones."""
    out = np.full(len(parts[0]), "", dtype=object)
    for p in parts:
        p = np.asarray(p, dtype=object)
        has = p != ""
        both = has & (out != "")
        out[has & ~both] = p[has & ~both]
        out[both] = out[both] + "; " + p[both]  # joined only where both have a sentence
    return out


def _subtype_known(ctx: FloodContext) -> bool:
    """The flood layer's zone subtypes tell the floodway: the field exists, holds a value on some polygon and
    no value is one of FEMA's domain codes (:attr:`FloodContext.subtypes`, the one reading of
    :func:`~geoconstraints.geometry.overlay.subtype_problem` that the maps use too).

    A ZONE_SUBTY column left blank on every polygon (a stripped export) cannot tell the floodway from the rest
    of the SFHA any more than a missing one; nor can FEMA's domain codes (D_Zone_Subtype: ``1100`` is
    FLOODWAY, ``1210`` STATE ENCROACHMENT AREA) instead of their text: no text of the rulebook's lists can
    match a code, so every floodway would read as "not the floodway".
    """
    return not ctx.subtypes[0]


def _subtype_why(ctx: FloodContext, rule: Rule) -> str:
    """What is wrong with the flood layer's ZONE_SUBTY (:attr:`FloodContext.subtypes`) as the rule's phrase
    ``subtypes_coded`` (the ``{codes}`` named) or ``subtypes_missing`` says it: :func:`subtype_text` in the
    rule's words."""
    problem, coded = ctx.subtypes
    if problem == "coded":
        return rule.phrase("subtypes_coded", codes=", ".join(coded))
    return rule.phrase("subtypes_missing")


def _no_subtype_text(ctx: FloodContext, rule: Rule) -> str:
    """Why the layer's ZONE_SUBTY cannot tell the floodway from the rest of the SFHA, and the fix (FLD-002's
    phrases ``cannot_tell_coded`` / ``cannot_tell_missing`` around :func:`_subtype_why`)."""
    key = "cannot_tell_coded" if ctx.subtypes[0] == "coded" else "cannot_tell_missing"
    return rule.phrase(key, why=_subtype_why(ctx, rule))


@check("FLD-006")
def check_encroachment(ctx: FloodContext, rule: Rule) -> gpd.GeoDataFrame:
    """FLD-006: § 6-136(f): unnumbered A zones (1), BFE zones without a floodway (2), with one (3).

    Says which paragraph applies to each subject, and what is true where none does (AO, A99:
    no elevations and no floodway; a BFE zone whose floodway is unknown).
    """
    t = ctx.table
    n = len(t)
    nc = _not_covered(t)
    in_sfha = t["sfha_sqft"].to_numpy() > 0
    partial = (t["flood_data"] == "partial").to_numpy()
    reading = rule.s("no_elevation_zones_reading")
    unn = t["unnumbered_a_sqft"].to_numpy() > 0
    bfe_any = t["bfe_zone_sqft"].to_numpy() > 0
    known = _subtype_known(ctx)
    nofw = known & (t["bfe_no_floodway_sqft"].to_numpy() > 0)
    withfw = known & bfe_any & ~nofw
    noelev, noelev_text = _in_zones(t, expand_zone_list(rule.p("no_elevation_zones")))
    noelev &= in_sfha
    fw_unknown = bfe_any & (not known)
    analyse = unn | nofw | (noelev & (reading == "capacity_analysis"))
    listed = unn | bfe_any | noelev
    status = np.full(n, "pass", dtype=object)
    status[in_sfha & ~listed] = "not_evaluated"
    status[noelev & ~analyse] = "info"  # reading not_covered
    status[fw_unknown & ~analyse] = "not_evaluated"
    status[analyse] = "review"
    status[~in_sfha & partial] = "not_evaluated"
    detail = _fld006_detail(rule, t, unn, nofw, withfw, noelev, noelev_text, fw_unknown, reading,
                            what=ctx.subject_layer.rstrip("s"))
    odd = in_sfha & ~listed
    if odd.any():
        zone, blank = _form(rule, "unclassified_zone", "zone"), rule.phrase("unclassified_blank")
        detail[odd] = _per_value(t["flood_zones"].to_numpy()[odd].astype(str), lambda z: zone(zone=z) if z else blank)
    detail[~in_sfha] = rule.phrase("outside_sfha", citation=rule.citation)
    detail[~in_sfha & partial] = rule.phrase("partial_no_sfha")
    detail = _with_note(detail, _coverage_note(t, rule))
    status[nc] = "not_evaluated"
    detail[nc] = _no_flood_detail(ctx, rule)
    return _rule_frame(rule, ctx, status, threshold=rule.t("max_cumulative_rise_ft"), unit="ft", detail=detail)


def _fld006_detail(rule: Rule, t: pd.DataFrame, unn: np.ndarray, nofw: np.ndarray, withfw: np.ndarray,
                   noelev: np.ndarray, noelev_text: np.ndarray, fw_unknown: np.ndarray, reading: str, *,
                   what: str) -> np.ndarray:
    """The sentences of FLD-006 per subject, one per paragraph of § 6-136(f) that applies (each a phrase of
    the rule, rendered once)."""
    fw_here = t["floodway_sqft"].to_numpy() > 0
    empty = np.full(len(t), "", dtype=object)
    s_unn = empty.copy()  # object arrays throughout: no fixed-width copy of a long sentence per subject
    s_unn[unn] = rule.phrase("unnumbered_a")
    s_noelev = empty.copy()
    if noelev.any():
        how = rule.phrase("capacity_reading" if reading == "capacity_analysis" else "not_covered_reading")
        say = _form(rule, "no_elevation", "zones", "how")
        s_noelev[noelev] = _per_value(noelev_text[noelev], lambda z: say(zones=z, how=how))
    s_nofw = empty.copy()
    s_nofw[nofw] = rule.phrase("no_floodway_determined")
    s_fw = empty.copy()
    s_fw[withfw] = rule.phrase("floodway_reach", subject=what)
    s_fw[withfw & fw_here] = rule.phrase("floodway_here", subject=what)
    s_unk = empty.copy()
    s_unk[fw_unknown] = rule.phrase("floodway_unknown")
    return _join(s_unn, s_noelev, s_nofw, s_fw, s_unk)


@check("FLD-007")
def check_openings(ctx: FloodContext, rule: Rule) -> gpd.GeoDataFrame:
    """FLD-007: openings in enclosed areas below the lowest floor (site check only)."""
    if ctx.mode != "site":
        return ctx.none()
    t = ctx.table
    n = len(t)
    o = ctx.site
    encl, sqin, count, bottom = (o.get("enclosed_sqft"), o.get("openings_sqin"), o.get("openings"),
                                 o.get("opening_bottom_ft"))
    need_n = rule.t("min_openings_count")
    per = rule.t("min_opening_sqin_per_sqft")
    max_b = rule.t("max_opening_bottom_above_grade_ft")
    in_sfha = t["sfha_sqft"].to_numpy() > 0
    nc = _not_covered(t)
    req = np.nan if encl is None else float(encl) * per
    say = rule.phrase
    if encl is None:
        st, det = "not_evaluated", say("no_enclosed_given")
    elif float(encl) <= 0:
        st, det = "pass", say("no_enclosure")
    else:
        missing = [name for name, v in (("--openings", count), ("--openings-sqin", sqin),
                                        ("--opening-bottom-ft", bottom)) if v is None]
        if missing or count is None or sqin is None or bottom is None:
            st, det = "not_evaluated", say("data_missing", options=", ".join(missing))
        else:
            area = {"sqin": f"{sqin:,.0f}", "required": f"{req:,.0f}", "enclosed": f"{float(encl):,.0f}"}
            fails = []
            if count < need_n:
                fails.append(say("too_few", count=f"{count}", required_count=f"{need_n:g}"))
            if sqin < req:
                fails.append(say("too_small", per=f"{per:g}", **area))
            if bottom > max_b:
                fails.append(say("too_high", bottom=f"{bottom:g}", max_bottom=f"{max_b:g}"))
            if fails:
                st, det = "review", "; ".join(fails)
            else:
                st, det = "pass", say("openings_met", count=f"{count}", bottom=f"{bottom:g}", **area)
    status = np.full(n, st, dtype=object)
    detail = np.full(n, det, dtype=object)
    out = ~in_sfha & ~nc & (t["flood_data"] == "full").to_numpy(dtype=bool)
    status[out] = "pass"
    detail[out] = say("outside_sfha")
    status[nc] = "not_evaluated"
    detail[nc] = _no_flood_detail(ctx, rule)
    return _rule_frame(rule, ctx, status, measured=np.nan if sqin is None else float(sqin), threshold=req,
                        unit="sqin", detail=detail)


@check("FLD-008")
def check_substantial_improvement(ctx: FloodContext, rule: Rule) -> gpd.GeoDataFrame:
    """FLD-008: improvement cost >= substantial_improvement_pct of market value = substantial improvement (site only)."""
    if ctx.mode != "site":
        return ctx.none()
    n = len(ctx.table)
    cost, value = ctx.site.get("improvement_cost"), ctx.site.get("market_value")
    lim = rule.t("substantial_improvement_pct")
    say = rule.phrase
    excl = "; " + say("excluded")
    if cost is None or value is None:
        st, pct, det = "not_evaluated", np.nan, say("give_values") + excl
    elif not float(value) > 0:
        st, pct, det = "not_evaluated", np.nan, say("value_not_positive", value=f"{value}") + excl
    elif not np.isfinite(100.0 * float(cost) / float(value)):  # check_site refuses a value under $1 before
        st, pct, det = "not_evaluated", np.nan, say("value_too_small", value=f"{value}") + excl
    else:
        share = _cost_pct(cost, value)
        pct = float(share)
        near = _near_pct_text(cost, value, share, lim, rule)
        if share >= Fraction(repr(float(lim))):
            st, det = "review", say("new_construction") + near + excl
        else:
            st, det = "pass", say("not_substantial") + near + excl
    return _rule_frame(rule, ctx, np.full(n, st, dtype=object), measured=pct, threshold=lim, unit="pct",
                        detail=det)


def _cost_pct(cost: float, value: float) -> Fraction:
    """``cost`` in per cent of ``value``, exactly, from the numbers as written (their shortest ``repr``):
    a cost of half the value is 50 %, never the 49.99999999999999 % a float division can give (which read
    "under 50 %": not a substantial improvement).

    Examples
    --------
    >>> float(_cost_pct(5_687_822.94, 11_375_645.88)), 100.0 * 5_687_822.94 / 11_375_645.88
    (50.0, 49.99999999999999)
    >>> bool(_cost_pct(49_999.99, 100_000) < 50 < _cost_pct(50_000.01, 100_000))
    True
    """
    return Fraction(repr(float(cost))) * 100 / Fraction(repr(float(value)))


def _near_pct_text(cost: float, value: float, share: Fraction, lim: float, rule: Rule) -> str:
    """``'; $49,999.99, under the $50,000.00 that is 50 % of $100,000.00'`` (the rule's phrase ``near_under``
    or ``near_over``: ``{cost}``, ``{at}``, ``{limit}``, ``{value}``) where the per cent ``share`` as printed
    (:func:`fmt_num`) reads as the limit ``lim`` but is not it, else ``''``: a cost a cent under half the
    value never reads "cost is 50 % of market value, under 50 %" alone.

    Examples
    --------
    >>> r = Rule(id="ABC-001", title="t", group="flood", citation="c", phrases={
    ...     "near_over": "${cost}, over the ${at} that is {limit} % of ${value}",
    ...     "near_under": "${cost}, under the ${at} that is {limit} % of ${value}"})
    >>> _near_pct_text(50_000.01, 100_000, _cost_pct(50_000.01, 100_000), 50, r)
    '; $50,000.01, over the $50,000.00 that is 50 % of $100,000.00'
    >>> _near_pct_text(50_000, 100_000, _cost_pct(50_000, 100_000), 50, r), _near_pct_text(40_000, 100_000, Fraction(40), 50, r)
    ('', '')
    """
    limit = Fraction(repr(float(lim)))
    if share == limit or fmt_num(float(share)) != fmt_num(lim):
        return ""
    at = float(limit * Fraction(repr(float(value))) / 100)
    return "; " + rule.phrase("near_under" if share < limit else "near_over", cost=f"{float(cost):,.2f}",
                              at=f"{at:,.2f}", limit=fmt_num(lim), value=f"{float(value):,.2f}")


@check("FLD-009")
def check_variance(ctx: FloodContext, rule: Rule) -> gpd.GeoDataFrame:
    """FLD-009: variance checklist per parcel (info, with the lot size)."""
    if ctx.mode != "screen":
        return ctx.none()
    t, acres, lim, nc, in_sfha = _by_acres(ctx, rule, "variance_max_lot_acres")
    in_fw = t["floodway_sqft"].to_numpy() > 0
    status = np.where(nc, "not_evaluated", "info")
    small = ~over_limit(acres, lim)
    detail = np.full(len(t), rule.phrase("large_lot", limit=f"{lim:g}"), dtype=object)
    detail[small] = rule.phrase("small_lot", limit=f"{lim:g}")
    floodway = rule.phrase("floodway_condition")
    detail[in_fw] = detail[in_fw] + f"; {floodway}"
    # a floodway-like area and no floodway (FLD-002 not_evaluated): the floodway's condition may apply, as
    # the local administrator reads it; never "no flood variance needed", even off the SFHA's zones
    in_enc = np.zeros(len(t), dtype=bool)
    if "encroachment_sqft" in t:  # a table measured with the encroachment cover (see FLD-002)
        in_enc = (t["encroachment_sqft"].to_numpy() > 0) & ~in_fw & ~nc
    if in_enc.any():
        names = np.asarray(t["encroachment_subtypes"].to_numpy() if "encroachment_subtypes" in t
                           else np.full(len(t), ""), dtype=object)
        like = _form(rule, "floodway_like", "subtypes", "condition")
        odd_form = _form(rule, "odd_subtype", "subtypes", "condition")
        known = ctx.known_subtypes

        def sentence(names: str) -> str:  # an odd subtype (none of FEMA's texts) said as such, as FLD-002 does
            odd, rest = _odd_and_like(names, known)
            said = [odd_form(subtypes=_and(odd, rule), condition=floodway)] if odd else []
            return "; ".join(said + ([like(subtypes=_and(rest, rule), condition=floodway)] if rest or not odd else []))

        detail[in_enc] = [f"{d}; {sentence(s)}" for d, s in zip(detail[in_enc], names[in_enc])]
    # a layer whose ZONE_SUBTY cannot tell the floodway (no field, no value, FEMA's codes; FLD-002 not_evaluated
    # in the SFHA): a parcel in the SFHA may lie in a floodway, so the condition is open, never left out
    if ctx.flood_given and not _subtype_known(ctx):
        open_fw = in_sfha & ~nc & ~in_fw & ~in_enc
        detail[open_fw] = detail[open_fw] + ("; " + rule.phrase("floodway_open", why=_subtype_why(ctx, rule),
                                                                condition=floodway))
    partial = (t["flood_data"] == "partial").to_numpy()
    off = ~in_sfha & ~nc & ~partial
    detail[off & in_enc] = rule.phrase("no_sfha_mapped") + "; " + detail[off & in_enc]
    detail[off & ~in_enc] = rule.phrase("outside_sfha")
    # part of it off the flood map: no SFHA on the covered part is not "no variance needed"
    detail[~in_sfha & partial] = rule.phrase("partial_no_sfha") + "; " + detail[~in_sfha & partial]
    return _acres_frame(ctx, rule, status, _with_note(detail, _near_limit_text(acres, lim, rule)), acres, lim, nc)


def effective_date(value: Any) -> dt.date:
    """The calendar day a flood map's ``EFF_DATE`` value (or the rulebook's ``adopted_effective_date``)
    states, read strictly: never guessed.

    The one date reader, :func:`~geoconstraints.io.tables.read_days`, with FEMA's choices:

    - every form of :data:`~geoconstraints.io.tables.DATE_FORMS`: ``YYYY-MM-DD``, GDAL's text of a date
      ``YYYY/MM/DD``, a shapefile's ``YYYYMMDD`` (also as a whole number, ``19980302`` or ``19980302.0``)
      and ``M/D/YYYY``; a date-typed value (GeoPackage, PostGIS; a time zone is kept: the day is the one
      in it);
    - ``order="us"``: ``M/D/YYYY`` is month/day/year without proof, as FEMA and Esri's US exports write it
      (a layer holds one effective date, so a day over 12 would rarely prove it); a first number over 12
      (``"13/2/1998"``) is a day-first date and refused;
    - ``time="midnight"``: a date field holds midnight (``T00:00:00``, Esri's `` 12:00:00 AM``); another
      time of day is a day shifted by a time zone (an Esri date stored in UTC) and refused;
    - a year outside :data:`~geoconstraints.io.tables.DATE_YEARS` (1900 to 2100) is refused as a typing
      error, as in every input (a FIRM dated 1066 or 9999: flood insurance maps date from 1968 on).

    Anything else is no date: a year alone (``pd.to_datetime`` read ``"2012"`` as 2012-01-01), a two-digit
    year, free text, a number that is not ``YYYYMMDD``.

    Parameters
    ----------
    value : Any
        One ``EFF_DATE`` value of the flood layer, or the rulebook's ``adopted_effective_date``.

    Returns
    -------
    datetime.date

    Raises
    ------
    ValueError
        ``value`` states no single day; the message says why (the caller names the value).

    Examples
    --------
    >>> import datetime as dt
    >>> [str(effective_date(v)) for v in ("1998-03-02", "1998-03-02T00:00:00", "1998/03/02 00:00:00",
    ...                                  19980302, "3/2/1998", "03/02/1998 12:00:00 AM",
    ...                                  pd.Timestamp("1998-03-02"), dt.date(1998, 3, 2))]
    ['1998-03-02', '1998-03-02', '1998-03-02', '1998-03-02', '1998-03-02', '1998-03-02', '1998-03-02', '1998-03-02']
    >>> for v in ("2012", "13/2/1998", "1998-03-02 05:00:00", "1998-02-30", "3/2/98", "1066-10-14", ""):
    ...     try:
    ...         effective_date(v)
    ...     except ValueError as exc:
    ...         print(f"{v!r}: {exc}")
    '2012': a year alone names no day
    '13/2/1998': no month 13: a day-first date is not read (only month/day/year)
    '1998-03-02 05:00:00': a time of day other than midnight (a day shifted by a time zone?)
    '1998-02-30': no such day
    '3/2/98': not a date in a form read (YYYY-MM-DD, YYYY/MM/DD, YYYYMMDD or US M/D/YYYY)
    '1066-10-14': a year outside 1900 to 2100: a typing error?
    '': no date stated
    """
    days, issue = read_days(pd.DataFrame({"EFF_DATE": [value]}, dtype=object), order="us", time="midnight",
                            forms=tuple(DATE_FORMS))
    if issue is not None:
        raise ValueError(issue.reason)
    day = days["EFF_DATE"].iloc[0]
    if pd.isna(day):
        raise ValueError("no date stated")
    return day.date()


def _value_text(v: Any) -> str:
    return repr(v) if isinstance(v, str) else str(v)


def _adopted_date(rule: Rule) -> str:
    """The rulebook's ``adopted_effective_date`` as ``YYYY-MM-DD``; a RulebookError when it states no day."""
    value = rule.p("adopted_effective_date")
    try:
        return effective_date(value).isoformat()
    except ValueError as exc:
        raise RulebookError(f"rulebook {rule.rulebook!r}: rule {rule.id} params.adopted_effective_date = {value!r} is "
                            f"not a date ({exc}); write it as YYYY-MM-DD, as in the shipped rulebook "
                            f"(adopted_effective_date: \"1998-03-02\"). Fix the rulebook") from None


def _map_dates(values: pd.Series) -> tuple[list[str], list[str]]:
    """(the days read, as sorted ``YYYY-MM-DD``; the values that state no day, each with why) of the
    flood layer's ``EFF_DATE`` values (blank ones skipped)."""
    read: set[str] = set()
    bad: list[str] = []
    for v in values.dropna().unique():
        if is_blank(v):
            continue
        try:
            read.add(effective_date(v).isoformat())
        except ValueError as exc:
            bad.append(f"{_value_text(v)} ({exc})")
    return sorted(read), bad


@check("FLD-010")
def check_adopted_map(ctx: FloodContext, rule: Rule) -> gpd.GeoDataFrame:
    """FLD-010: the flood map's DFIRM_ID / effective date against the adopted map (once per run).

    ``EFF_DATE`` is read strictly (:func:`effective_date`): a value stating no day (a year alone, a
    day-first date, a time other than midnight, a year outside 1900 to 2100, free text) is
    ``not_evaluated`` naming it, never a pass nor a "differs"; an ``adopted_effective_date`` stating no
    day is a RulebookError.
    """
    want_date = _adopted_date(rule)
    flood = ctx.layers.get_layer("flood_zones")
    ids = sorted({str(v).strip() for v in flood["DFIRM_ID"].dropna()} - {""}) if flood is not None and "DFIRM_ID" in flood else []
    dates, bad = _map_dates(flood["EFF_DATE"]) if flood is not None and "EFF_DATE" in flood else ([], [])
    want_id = str(rule.p("adopted_dfirm_id")).strip()
    say = rule.phrase
    unstated = say("not_stated")
    text = say("map_read", ids=", ".join(ids) or unstated, dates=", ".join(dates) or unstated)
    diff = ([] if ids == [want_id] else [say("dfirm_id_differs" if ids else "dfirm_id_not_stated")]) + (
        [] if dates == [want_date] else [say("date_differs" if dates else "date_not_stated")])
    if flood is None:
        status, detail = "not_evaluated", say("no_layer")
    elif bad:
        more = " " + say("more_values", count=len(bad) - 3) if len(bad) > 3 else ""
        status, detail = "not_evaluated", text + "; " + say("not_a_date", values="; ".join(bad[:3]) + more,
                                                            forms=date_forms_text(DATE_FORMS))
    elif not ids and not dates:
        status, detail = "not_evaluated", say("no_values")
    elif not diff:
        status, detail = "pass", text
    else:
        status, detail = "info", f"{text} ({', '.join(diff)})"
    return rule.findings(status, subject_layer="flood_zones", crs=ctx.crs, detail=detail)
