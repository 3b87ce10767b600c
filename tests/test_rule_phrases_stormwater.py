"""The stormwater rules worded wholly by the rulebook's phrases (rules/stormwater.py): a town file that
rewrites every phrase of them (and their messages to ``{detail}``) sees its words alone in every finding
of ``check_stormwater``, with the values the checks measured; no sentence of the checks' code is left.

The note on landings mapped as points and haul roads mapped as lines at their largest (SWP-006's sizes)
is said by SWP-001..006 alike: each gives its phrases (the same keys; the shipped rulebooks merge them
from SWP-001's entry), and the sentences saying what a site is made of (the disturbance polygons' union,
the landings and haul roads counted) are SWP-001's, SWP-003's and SWP-004's phrases. SWP-007 says why a condition
applies in the words of the rule deciding it (SWP-001..004)."""

from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import yaml
from common import NY_FT, X0, Y0
from shapely.geometry import LineString, MultiPoint, Point, box
from test_flow_resolution import bowl, bowl_and_ditch, ny_dem, plane
from test_rule_phrases import _code_words

from geoconstraints.commands import check_stormwater
from geoconstraints.errors import RulebookError
from geoconstraints.geometry.flow import FlowTrace
from geoconstraints.geometry.phasing import Site, SitePhasing, harvest_footprints
from geoconstraints.io.layers import load_layers
from geoconstraints.rulebook.loader import load_rulebook
from geoconstraints.rulebook.model import Rulebook
from geoconstraints.rulebook.render import fields_of
from geoconstraints.rules.stormwater import StormwaterContext, _checklist

WORDED = ("SWP-001", "SWP-002", "SWP-003", "SWP-004", "SWP-005", "SWP-006", "SWP-007", "SWP-008")
"""The stormwater rules whose every detail sentence is a phrase."""

GROWN = ("grown", "both_counted", "both_largest", "both_fix", "joined_one", "joined_both", "landing_point",
         "landings_points", "landing_counted", "landing_largest", "each", "per_point", "multi_points", "multi_total",
         "landing_multi_counted", "landing_multi_largest", "fix_landing", "fix_landings", "road_line", "roads_lines",
         "road_counted", "road_largest", "fix_road", "fix_roads")
"""The phrases of the note on point landings and line haul roads at their largest, the same in every rule
saying it (one function words it: the scenes reach each of them in some rule)."""

SQFT = 43_560.0
RB = {b: load_rulebook(b) for b in ("vestal", "lockport")}
MARK = re.compile(r"\[[a-z_]+[ \]]")


def _marked(tmp_path: Path, base: str = "vestal", name: str = "marked", rids: tuple[str, ...] = WORDED,
            extra: dict[str, dict[str, Any]] | None = None):
    """``base`` with every phrase of ``rids`` written ``[key {field} ...]``, messages ``{detail}``, and ``extra``
    (rule id -> more of its entry: switches, thresholds), as ``tmp_path/<name>.yaml``."""
    rules = []
    for rid in rids:
        r = RB[base][rid]
        assert r.phrases, rid
        phrases = {k: "[" + " ".join([k, *(f"{{{f}}}" for f in sorted(fields_of(t)))]) + "]"
                   for k, t in r.phrases.items()}
        rules.append({"id": rid, "phrases": phrases,
                      "messages": {"default": "{detail}", **{s: "{detail}" for s in r.messages}},
                      **(extra or {}).get(rid, {})})
    p = tmp_path / f"{name}.yaml"
    p.write_text(yaml.safe_dump({"extends": base, "rules": rules}), "utf-8")
    return load_rulebook(p)


def _marks(message: str) -> set[str]:
    return {m[1:].rstrip(" ]") for m in MARK.findall(message)}


def frame(rows: list[tuple], cols: tuple[str, ...] = ("id",)) -> gpd.GeoDataFrame:
    """Rows of (geometry, *values of ``cols``)."""
    return gpd.GeoDataFrame({c: [r[k + 1] for r in rows] for k, c in enumerate(cols)},
                            geometry=[r[0] for r in rows], crs=NY_FT)


def square(acres: float, dx: float = 0.0, dy: float = 0.0):
    s = math.sqrt(SQFT * acres)
    return box(X0 + dx, Y0 + dy, X0 + dx + s, Y0 + dy + s)


def road(length: float, dx: float = 0.0, dy: float = 0.0, north: bool = False):
    end = (X0 + dx, Y0 + dy + length) if north else (X0 + dx + length, Y0 + dy)
    return LineString([(X0 + dx, Y0 + dy), end])


def _run(rb, *, disturbance=None, landings=None, haul_roads=None, waters=None, dem=None, **kw):
    layers = load_layers(disturbance=disturbance, landings=landings, haul_roads=haul_roads, impaired_waters=waters,
                         dem=dem, primary=("disturbance", "landings", "haul_roads"))
    return check_stormwater(layers, rb, **kw).findings


def _water(gap: float, acres: float = 2.0):
    """Impaired water W1 (named) along the east edge of a square of ``acres``, ``gap`` ft east of it."""
    x = X0 + math.sqrt(SQFT * acres) + gap
    return frame([(LineString([(x, Y0 - 100), (x, Y0 + 400)]), "W1", "Choconut Creek")], ("id", "name"))


def _corner(u, v):
    """North of v = 1,850 ft ground falling north to the DEM's edge (at v = 2,000), south of it falling east to
    the water, 1 ft per 100 ft."""
    return np.where(v >= 1850, 100 - 0.01 * (v - 1850), 100 - 0.01 * u) + 0 * u


def _pitted(u, v):
    """Ground falling east to the water (:func:`plane`) with a pit 0.5 ft deep 300 ft east of the site's centre
    (shallower than min_depression_depth_ft: filled before tracing)."""
    return np.where(np.hypot(u - 300, v) < 30, plane(u, v) - 0.5, plane(u, v))


def _acreage_scenes(tmp_path: Path):
    """(name, rulebook, findings) reaching the branches of SWP-001..004, SWP-006 and SWP-008."""
    mv = _marked(tmp_path)
    ml = _marked(tmp_path, "lockport", "marked_lockport")
    out = []

    def add(name, rb, **kw):
        out.append((name, rb, _run(rb, **kw)))

    add("nothing", mv, waters=_water(10))
    add("big", mv, disturbance=frame([(square(7), "A")]), waters=_water(400, 7))
    small = frame([(square(0.5), "A")])
    for plan in (None, False, True):
        add(f"small plan {plan}", mv, disturbance=small, larger_common_plan=plan)
    for plan in (True, 3.0, 0.5):
        add(f"lockport plan {plan}", ml, disturbance=small, larger_common_plan=plan)
    uses = ((["single_family"],), ([None],), (["retail", None],), (["agricultural", "cemetery_graves"],))
    for (u,) in uses:
        d = frame([(square(1, dx=300 * k), f"D{k}", x) for k, x in enumerate(u)], ("id", "use"))
        add(f"uses {u}", mv, disturbance=d, waters=_water(600, 2), larger_common_plan=False)
    # a 2-acre project with a landing and a haul road touching it; a harvest plan of two point landings and two
    # haul roads 3,000 ft east (0.68 acre as counted, 2.55 acres at the largest sizes)
    s = math.sqrt(2 * SQFT)
    lands = frame([(Point(X0 + s + 30, Y0 + 50), "L1"), (Point(X0 + 3_000, Y0), "L2"), (Point(X0 + 3_000, Y0 + 600), "L3")])
    roads = frame([(road(300, s - 5, 100), "R1"), (road(400, 3_200, 0), "R2"), (road(400, 3_200, 600), "R3")])
    add("harvest", mv, disturbance=frame([(square(2), "A")]), landings=lands, haul_roads=roads, larger_common_plan=False)
    add("lockport harvest", ml, landings=lands, haul_roads=roads, larger_common_plan=False)
    # a 0.6-acre project: a point landing 90 ft east and a haul road 10 ft north would touch it at their largest
    s6 = math.sqrt(0.6 * SQFT)
    add("joining", mv, disturbance=frame([(square(0.6), "A")]),
        landings=frame([(Point(X0 + s6 + 90, Y0 + s6 / 2), "L1")]),
        haul_roads=frame([(road(300, 0, s6 + 10), "R1")]), larger_common_plan=False)
    add("joining landing", mv, disturbance=frame([(square(0.6), "A")]),
        landings=frame([(Point(X0 + s6 + 90, Y0 + s6 / 2), "L1")]), larger_common_plan=False)
    add("condition B joined", mv, disturbance=frame([(square(4.5), "A")]),
        landings=frame([(Point(X0 + math.sqrt(4.5 * SQFT) + 90, Y0 + 50), "L1")]), larger_common_plan=False)
    add("excluded use joined", mv, disturbance=frame([(square(2), "H1", "single_family")], ("id", "use")),
        landings=frame([(Point(X0 + s + 90, Y0 + 50), "L1")]), larger_common_plan=False)
    pts = MultiPoint([(X0, Y0), (X0 + 1_000, Y0), (X0 + 2_000, Y0)])
    add("multipoint", mv, landings=frame([(pts, "L2")]), larger_common_plan=False)
    add("multipoint and point", mv, landings=frame([(pts, "L2"), (Point(X0, Y0 + 3_000), "L1")]),
        larger_common_plan=False)
    add("long road", mv, haul_roads=frame([(road(5 * SQFT / 30), "H1")]), larger_common_plan=False)
    add("one landing", mv, landings=frame([(Point(X0, Y0), "L1")]), larger_common_plan=False)
    add("four landings", mv, landings=frame([(Point(X0 + 1000 * k, Y0), f"L{k}") for k in range(4)]),
        larger_common_plan=False)
    return out


def _flow_scenes(tmp_path: Path):
    """(name, rulebook, findings) of SWP-002 traced on a DEM (test_flow_resolution's 200-ft site, the water
    1,400 ft east of it)."""
    mv = _marked(tmp_path)
    undecided = _marked(tmp_path, name="undecided", extra={"SWP-002": {"switches": {"undrained_path_end": "not_evaluated"}}})
    short = _marked(tmp_path, name="short", extra={"SWP-002": {"thresholds": {"max_flow_path_ft": 300}}})
    ml = _marked(tmp_path, "lockport", "marked_lockport_flow")
    site = frame([(box(X0 - 100, Y0 - 100, X0 + 100, Y0 + 100), "A")])
    water = frame([(LineString([(X0 + 1500, Y0 - 1500), (X0 + 1500, Y0 + 2000)]), "W1", "Test Creek")], ("id", "name"))
    north = frame([(box(X0 - 100, Y0 + 1800, X0 + 100, Y0 + 1900), "A")])  # 100 to 200 ft from the DEM's edge
    out = []
    for name, rb, z, cell, kw in (("bowl", mv, bowl, 10.0, {}), ("coarse bowl", mv, bowl, 100.0, {}),
                                  ("ditch", mv, bowl_and_ditch, 10.0, {}), ("pitted", mv, _pitted, 10.0, {}),
                                  ("coarse plane", mv, plane, 100.0, {}), ("undecided", undecided, bowl, 100.0, {}),
                                  ("corner", short, _corner, 10.0, {"disturbance": north}),
                                  ("rim", mv, bowl, 10.0, {"landings": frame([(Point(X0 + 520, Y0), "L1")])}),
                                  ("lockport bowl", ml, bowl, 10.0, {})):
        dem = ny_dem(tmp_path / f"{name}.tif", z, cell)
        out.append((name, rb, _run(rb, **{"disturbance": site, **kw}, waters=water, dem=dem, larger_common_plan=False)))
    return out


def _dated(rows: list[tuple]) -> gpd.GeoDataFrame:
    """Rows of (geometry, id, start, stabilized)."""
    return frame(rows, ("id", "start", "stabilized"))


def _phasing_scenes(tmp_path: Path):
    """(name, rulebook, findings) reaching the branches of SWP-005."""
    mv = _marked(tmp_path, name="marked_phasing")
    may, june = ("2024-05-01", "2024-06-01"), ("2024-06-01", "2024-07-01")
    a4 = math.sqrt(4 * SQFT)
    out = []

    def add(name, **kw):
        out.append((name, mv, _run(mv, **{"larger_common_plan": False, **kw})))

    add("phased", disturbance=_dated([(square(3), "P1", *may), (square(3, 1000), "P2", "2024-05-15", "2024-06-15"),
                                      (square(2, 2000), "P3", *june)]))
    add("approved", disturbance=_dated([(square(6), "P1", *may)]), approved_swppp=True)
    add("undated", disturbance=_dated([(square(1), "P1", *may), (square(1, 1000), "P2", None, None)]))
    add("no dates", disturbance=frame([(square(1), "P1")]), landings=frame([(Point(X0 + 3000, Y0), "L9")]))
    for n in (1, 2):
        for start, stab in ((None, None), ("2024-05-10", None), (None, "2024-05-20")):
            lands = [(square(0.5, a4, 200 * k), f"L{k}", start, stab) for k in range(n)]  # touching A
            add(f"{n} landings {start} {stab}", disturbance=_dated([(square(4), "A", "2024-05-01", "2024-05-31")]),
                landings=_dated(lands))
    # a point landing and a polygon landing of 4 acres (and 1 sq ft), dated: 4.23 acres at the peak as counted,
    # 5 with the point at its largest (within the limit); 1 sq ft more and over it
    for extra in (0.0, 1.0):
        p = 4 * SQFT + extra
        add(f"point landing {extra}", landings=_dated([(Point(X0, Y0), "L1", *may),
                                                       (box(X0 + 3000, Y0, X0 + 3500, Y0 + p / 500), "P", *may)]))
    # the landing at its largest would join the project, its stabilized date before the project's start
    s2 = math.sqrt(2 * SQFT)
    add("joined undatable", disturbance=_dated([(square(2), "A", "2024-05-01", "2024-06-01")]),
        landings=_dated([(Point(X0 + s2 + 90, Y0 + s2 / 2), "L1", None, "2023-06-01")]))
    return out


def _without(rb, *rule_ids: str):
    """``rb`` with ``rule_ids`` left out (a custom rulebook lacking the rule a condition needs)."""
    return Rulebook(f"{rb.name}-custom", "1", "without " + ", ".join(rule_ids), {r.id: r for r in rb if r.id not in rule_ids})


def _rain(start: str, values: list[float]) -> pd.DataFrame:
    return pd.DataFrame({"date": pd.date_range(start, periods=len(values), freq="D").strftime("%Y-%m-%d"),
                         "precip_in": values})


def _inspection_scenes(tmp_path: Path):
    """(name, rulebook, findings) reaching the branches of SWP-007 (test_stormwater's inspection cases)."""
    mv = _marked(tmp_path, name="marked_inspections")
    ml = _marked(tmp_path, "lockport", "marked_lockport_inspections")
    may = _dated([(square(2), "A", "2024-05-01", "2024-05-29")])
    six = _dated([(square(6), "A", "2024-05-01", "2024-05-15")])
    vals = [0.0] * 31
    vals[4], vals[9], vals[19] = 0.49, 0.50, 0.80
    rain = _rain("2024-05-01", vals)
    log = pd.DataFrame({"date": ["2024-05-08", "2024-05-14", "2024-05-21", "2024-05-29"],
                        "inspector": ["J. Doe", "", "J. Doe", "A. Chen"]})
    two = pd.DataFrame({"date": ["2024-05-08", "2024-05-15"], "inspector": ["J. Doe", "A. Chen"]})
    out = []

    def add(name, rb, **kw):
        out.append((name, rb, _run(rb, **kw)))

    add("schedule", mv, disturbance=may, rainfall=rain)
    add("log", mv, disturbance=may, rainfall=rain, inspection_log=log)
    add("empty log", mv, disturbance=may, inspection_log=log.iloc[:0])
    add("nothing due", mv, disturbance=_dated([(square(2), "A", "2024-05-01", "2024-05-08")]),
        inspection_log=log.iloc[:0])
    for q in (None, ["yes", "Y"], ["no", "yes"]):
        add(f"lockport qualified {q}", ml, disturbance=six,
            inspection_log=two if q is None else two.assign(qualified=q))
    add("lockport condition B", ml, disturbance=six)
    add("no SWP-001", _without(mv, "SWP-001"), disturbance=may)
    for missing, acres, use in ((("SWP-002",), 2, "single_family"), (("SWP-002", "SWP-003"), 6, "single_family"),
                                (("SWP-002", "SWP-004"), 2, "commercial")):
        d = frame([(square(acres), "H", "2024-05-01", "2024-05-29", use)], ("id", "start", "stabilized", "use"))
        add(f"lockport without {missing}", _without(ml, *missing), disturbance=d, rainfall=rain)
    return out


def test_every_sentence_of_the_stormwater_rules_is_the_rulebooks(tmp_path) -> None:
    seen: dict[str, set[str]] = {rid: set() for rid in WORDED}
    statuses: dict[str, set[str]] = {rid: set() for rid in WORDED}
    scenes = _acreage_scenes(tmp_path) + _flow_scenes(tmp_path) + _phasing_scenes(tmp_path)
    for name, _rb, f in scenes + _inspection_scenes(tmp_path):
        f = f.loc[f["rule_id"].isin(WORDED).to_numpy()]
        assert len(f), name
        for rid, status, msg in zip(f["rule_id"], f["status"], f["message"]):
            assert msg and _code_words(msg) == "", (name, rid, msg)
            seen[rid] |= _marks(msg)
            statuses[rid].add(status)
    # what no scene of check_stormwater reaches: a DEM given but no path traced, a path with no end point
    # (both said by the direct calls of the next test), the jail term the law leaves open (SWP-008, below)
    unreached = {"SWP-002": {"not_traced", "unnamed"}, "SWP-008": {"jail_unstated"},
                 # a site not measured, or with no member (direct calls below); a peak on no day, or of no polygon
                 # (a phasing's peak is on some day, of some polygon: a polygon is disturbed on one day at least)
                 "SWP-005": {"not_measured", "nothing_to_phase", "never", "none"}}
    for rid in WORDED:
        own = set(RB["vestal"][rid].phrases) - set(GROWN)
        assert own - unreached.get(rid, set()) <= seen[rid], (rid, sorted(own - seen[rid]))
        assert set(RB["lockport"][rid].phrases) == set(RB["vestal"][rid].phrases), rid
    assert set(GROWN) <= set().union(*seen.values()), sorted(set(GROWN) - set().union(*seen.values()))
    for rid in ("SWP-001", "SWP-002", "SWP-003", "SWP-004", "SWP-005"):
        assert {"grown", "landing_point", "landing_counted"} <= seen[rid], (rid, sorted(seen[rid]))
        assert {"pass", "review", "not_evaluated"} <= statuses[rid], (rid, statuses[rid])
    assert statuses["SWP-005"] == {"pass", "review", "not_evaluated", "violation", "info"}, statuses["SWP-005"]
    assert statuses["SWP-007"] == {"pass", "violation", "info", "not_evaluated"}, statuses["SWP-007"]
    assert statuses["SWP-006"] == {"info", "review"} and {"grown", "landings_points", "roads_lines"} <= seen["SWP-006"]


def test_the_sentences_no_scene_reaches_are_the_rulebooks(tmp_path) -> None:
    from geoconstraints.geometry.phasing import SiteFacts
    from geoconstraints.rules.stormwater import _condition_a_of, _no_peak, _reached_label

    mv = _marked(tmp_path)
    rule = mv["SWP-002"]
    water = frame([(LineString([(X0 + 1500, Y0 - 1500), (X0 + 1500, Y0 + 1500)]), "W1")])
    layers = load_layers(impaired_waters=water, primary=("impaired_waters",))
    site = Site("disturbance", "project", box(X0 - 100, Y0 - 100, X0 + 100, Y0 + 100), 0.92,
                SiteFacts("project", 1, 0.92), [])
    ctx = StormwaterContext(layers=layers, rulebook=mv, disturbance=None, footprints=harvest_footprints(
        None, None, haul_road_width_ft=12, default_landing_area_sqft=10_000), sites=(site,), dem_given=True)
    detail = _condition_a_of(ctx, rule, site, None)[2]
    assert "[not_traced]" in detail and _code_words(detail) == "", detail
    assert _reached_label(ctx, rule, FlowTrace("target")) == "[unnamed]"  # a path reaching a water, not drawn
    r5 = mv["SWP-005"]
    assert _no_peak(r5, site, None) == "[not_measured]"
    assert _no_peak(r5, site, SitePhasing(None, "nothing_to_phase")) == "[nothing_to_phase]"  # no members
    r8 = mv["SWP-008"]
    open_jail = dataclasses.replace(r8, summary="", summary_template="", thresholds={k: v for k, v in r8.thresholds.items() if "jail" not in k})
    said = dict(_checklist(open_jail))["penalties"]
    assert "[jail_unstated]" in said and _code_words(said) == "", said
    for book in ("vestal", "lockport"):
        for _subject, text in _checklist(_marked(tmp_path, book, f"m8{book}", ("SWP-008",))["SWP-008"]):
            assert _code_words(text) == "", text


def test_why_a_site_has_no_peak_is_the_key_the_phasing_recorded_worded_by_swp005(tmp_path) -> None:
    """geometry/phasing.py's ``site_phasing`` records the key of why a site has no peak (``SitePhasing.why``, the
    polygons without a date in ``undated``) and raises ``FilledDatesError`` (the landings and the project's span
    as values) for a landing joining the project at its largest with dates outside the project's: SWP-005 words
    both with its phrases, in the shipped rulebooks the words of the error's own message."""
    scenes = {name: f for name, _rb, f in _phasing_scenes(tmp_path)}

    def swp005(f):
        return f.loc[(f["rule_id"] == "SWP-005").to_numpy(), "message"].tolist()

    assert swp005(scenes["undated"])[0].startswith("[undated P2]; [in_all "), swp005(scenes["undated"])
    # the project's polygon without dates; the harvest plan apart (landing L9), of no dated member
    assert swp005(scenes["no dates"]) == ["[none_dated harvest plan]; [in_all 0.23]", "[no_dates]; [in_all 1.00]"]
    joined = swp005(scenes["joined undatable"])
    assert "[grown_unmeasured [dates_outside 2024-06-01 landing L1 2024-05-01]]" in joined[0], joined  # the project's
    from geoconstraints.geometry.phasing import FilledDatesError

    err = FilledDatesError(["landing L1"], pd.Timestamp("2024-05-01"), pd.Timestamp("2024-06-01"))
    assert (err.ids, str(err)) == (["landing L1"], ("landings / haul roads landing L1: a stabilized date on or before "
                                   "the site's first start (2024-05-01) or a start on or after its last stabilisation "
                                   "(2024-06-01); fix or complete their dates"))
    s2 = math.sqrt(2 * SQFT)
    for book in ("vestal", "lockport"):
        f = _run(RB[book], larger_common_plan=False, disturbance=_dated([(square(2), "A", "2024-05-01", "2024-06-01")]),
                 landings=_dated([(Point(X0 + s2 + 90, Y0 + s2 / 2), "L1", None, "2023-06-01")]))
        msg = swp005(f)[0]
        assert f"the peak could not be measured ({err})" in msg, (book, msg)


@pytest.mark.parametrize("rid", WORDED)
def test_the_shipped_phrases_are_the_same_in_both_towns(rid) -> None:
    v, lp = RB["vestal"][rid], RB["lockport"][rid]
    assert v.phrases == lp.phrases, rid
    for key, template in v.phrases.items():
        assert template.strip() and not template.startswith("["), (rid, key)


def test_the_grown_note_is_the_same_words_in_every_rule_saying_it() -> None:
    for book in ("vestal", "lockport"):
        rb = RB[book]
        for rid in ("SWP-002", "SWP-003", "SWP-004", "SWP-005", "SWP-006"):
            assert {k: rb[rid].phrases[k] for k in GROWN} == {k: rb["SWP-001"].phrases[k] for k in GROWN}, rid


def test_the_shipped_words_are_the_checks_words(tmp_path) -> None:
    s = math.sqrt(0.6 * SQFT)
    f = _run(RB["vestal"], disturbance=frame([(square(0.6), "A")]),
             landings=frame([(Point(X0 + s + 90, Y0 + s / 2), "L1")]), larger_common_plan=False)
    msg = f.loc[(f["rule_id"] == "SWP-001") & (f["subject_id"] == "project"), "message"].iloc[0]
    assert msg == (
        "disturbance project: land development activity not determined (union of 1 disturbance polygon(s): "
        "0.60 acres; overlaps counted once; stated not to be part of a larger common plan of development or sale; "
        "landing L1 is mapped as a point, counted as 10,000 sq ft (default_landing_area_sqft), but a log landing "
        "is often 1/4 to 1 acre: at up to 43,560 sq ft (max_point_landing_area_sqft) the activity would disturb "
        "1.53 acres, at least 1 acre; at that size landing L1 would touch the disturbance and count in the "
        "project; map the landing's extent (a polygon))."), msg


SITE = ("site_union", "site_connected", "site_overlaps", "site_landings", "site_roads", "site_landings_roads",
        "site_harvest", "site_unconnected")
"""The phrases saying what a site is made of (SWP-001, SWP-003, SWP-004)."""


def _site_scenes():
    """(name, disturbance, landings, haul roads) of sites of every make: a project alone, with a landing and a
    haul road connected to it and a harvest plan apart; a harvest plan of landings alone, of roads alone."""
    s = math.sqrt(2 * SQFT)
    d = frame([(square(2), "A"), (square(1, 1_000), "B")])
    lands = frame([(Point(X0 + s + 30, Y0 + 50), "L1"), (Point(X0 + 3_000, Y0), "L2")])
    roads = frame([(road(300, s - 5, 100), "R1"), (road(400, 3_200, 0), "R2")])
    return [("project", d, None, None), ("project and plan", d, lands, roads),
            ("landings", None, lands, None), ("roads", None, None, roads)]


def test_a_site_is_worded_by_the_rules_phrases_with_or_without_its_members(tmp_path) -> None:
    """Every sentence saying what a site is made of is its rule's, from the facts the site was built with: the
    same with its members as without them (a site built by hand, or its polygons not kept), never a sentence
    of the geometry layer's."""
    from geoconstraints.geometry.phasing import build_sites
    from geoconstraints.rules.stormwater import check_condition_b, check_condition_c, check_swppp_required

    checks = {"SWP-001": check_swppp_required, "SWP-003": check_condition_b, "SWP-004": check_condition_c}
    water = load_layers(impaired_waters=_water(5_000), primary=("impaired_waters",))
    for book in ("vestal", "lockport"):
        seen: dict[tuple[str, bool], set[str]] = {}
        for rb in (_marked(tmp_path, book, f"sites_{book}"), RB[book]):
            for name, d, lands, roads in _site_scenes():
                layers = load_layers(disturbance=d, landings=lands, haul_roads=roads,
                                     primary=("disturbance", "landings", "haul_roads"))
                dl = layers.get_layer("disturbance")
                fp = harvest_footprints(layers.get_layer("landings"), layers.get_layer("haul_roads"),
                                        haul_road_width_ft=12, default_landing_area_sqft=10_000)
                sites = tuple(build_sites(dl, fp, road_width_ft=12))
                said: dict[bool, list[str]] = {}
                for bare in (False, True):
                    ctx = StormwaterContext(layers=water, rulebook=rb, disturbance=dl, footprints=fp,
                                            sites=tuple(dataclasses.replace(x, members=None) for x in sites)
                                            if bare else sites, larger_common_plan=False)
                    said[bare] = []
                    for rid, fn in checks.items():
                        for msg in fn(ctx, rb[rid])["message"]:
                            said[bare].append(msg)
                            if rb is not RB[book]:
                                assert _code_words(msg) == "", (book, name, rid, bare, msg)
                                seen.setdefault((rid, bare), set()).update(_marks(msg) & set(SITE))
                assert said[True] == said[False], (book, name)
        for rid in ("SWP-001", "SWP-003"):
            for bare in (False, True):
                assert seen[(rid, bare)] == set(SITE), (book, rid, bare, sorted(set(SITE) - seen[(rid, bare)]))


def test_a_town_may_reword_one_stormwater_phrase(tmp_path) -> None:
    p = tmp_path / "town.yaml"
    p.write_text(yaml.safe_dump({"extends": "vestal", "rules": [
        {"id": "SWP-001", "phrases": {"no_plan": "no common plan, says the applicant",
                                      "fix_landing": "draw landing's outline"}},
        {"id": "SWP-008", "phrases": {"notice": "{notice_hours} h notice to {to}"}}]}), "utf-8")
    town = load_rulebook(p)
    s = math.sqrt(0.6 * SQFT)
    f = _run(town, disturbance=frame([(square(0.6), "A")]), landings=frame([(Point(X0 + s + 90, Y0 + s / 2), "L1")]),
             larger_common_plan=False)
    msg = f.loc[(f["rule_id"] == "SWP-001") & (f["subject_id"] == "project"), "message"].iloc[0]
    assert "; no common plan, says the applicant; " in msg and "; map draw landing's outline)." in msg, msg
    assert "stated not to be part" not in msg
    # SWP-003 says the same note in its own phrases: the shipped ones
    assert town["SWP-003"].phrases["fix_landing"] == "the landing's extent (a polygon)"
    assert dict(_checklist(town["SWP-008"]))["notice"] == "48 h notice to town enforcement official"


@pytest.mark.parametrize("rid, phrases, said", [
    ("SWP-001", {"no_plans": "none"}, "rule SWP-001 phrases.no_plans: not a phrase the toolkit writes"),
    ("SWP-002", {"nearest": "water {water} at {distance} ft ({depth})"},
     "rule SWP-002 phrases.nearest: field {depth} is not a name this template may use"),
    ("SWP-008", {"jail_days": "{max_jail_days} days ({years})"}, "rule SWP-008 phrases.jail_days: field {years}"),
])
def test_an_unknown_stormwater_phrase_or_field_is_refused_at_load(tmp_path, rid, phrases, said) -> None:
    p = tmp_path / "town.yaml"
    p.write_text(yaml.safe_dump({"extends": "vestal", "rules": [{"id": rid, "phrases": phrases}]}), "utf-8")
    with pytest.raises(RulebookError) as err:
        load_rulebook(p)
    assert said in str(err.value), str(err.value)


def test_the_phrases_are_what_the_checks_wrote_before(tmp_path) -> None:
    # the shipped rulebooks' words: every scene above gives the same message with them as with the sentences
    # the checks composed in code (a sample, the rest in the demo and the rules' own tests)
    f = _run(RB["lockport"], disturbance=frame([(square(0.5), "A")]), larger_common_plan=0.5)
    assert f.loc[f["rule_id"] == "SWP-001", "message"].iloc[0] == (
        "disturbance project: 0.5 acres disturbed, under 1 acre and no common plan of 1 acre or more (union of 1 "
        "disturbance polygon(s): 0.50 acres; overlaps counted once; the larger common plan disturbs 0.50 acres in "
        "the aggregate, under 1 acre).")
