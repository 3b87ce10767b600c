"""The guard: no rule says ``pass`` where it could not decide.

For every rule of every shipped rulebook, the rule's ``inputs`` (in the rulebook YAML: the roles,
fields, DEM and command options / statements it reads) are taken away one at a time from a
baseline run: a role is removed, a field is blanked (every value missing) and, separately,
dropped, the DEM is removed, an option or statement is unset (None, False for a flag, empty for a
list). After each removal the command either refuses (a :class:`GeoConstraintsError`: one clear
line), or no subject of the rule *becomes* ``pass``: a subject that was not ``pass`` in the baseline
(or did not exist) must not be ``pass`` now. The one allowance: removing a whole role (layer)
may make a measured quantity smaller and so earn a pass, e.g. SWP-004 on a harvest plan without
its landings measures fewer acres; such a pass is accepted only when the rule's ``measured`` value
of that subject changed. A field, the DEM, an option or a statement never earns a pass by its
absence.

Baselines (built once per module): the sample town (data/sample) for screen, harvest and
stormwater (vestal and lockport); a small hand-made plan (footprints, flood zones, BFE lines, a
tilted-plane DEM) for flood-site and a small stormwater site draining to an impaired water; a set
of SEQR actions. Every input a rule reads must be given in at least one baseline, else the guard
cannot test it and fails saying so. A rule without ``inputs`` fails the guard.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import rasterio
import yaml
from affine import Affine
from common import NY_FT, SAMPLE, X0, Y0, square
from shapely.geometry import LineString

import geoconstraints.rulebook as rulebook_pkg
from geoconstraints import load_layers, load_rulebook
from geoconstraints.commands import (
    check_harvest,
    check_site,
    check_stormwater,
    classify_action,
    screen_parcels,
)
from geoconstraints.errors import GeoConstraintsError
from geoconstraints.io.layers import Layers
from geoconstraints.io.roles import ROLES
from geoconstraints.rulebook.loader import available_rulebooks

RULEBOOK_DIR = Path(rulebook_pkg.__file__).parent
INPUT_KEYS = {"roles", "fields", "dem", "options"}


def raw_rules(name: str) -> list[dict]:
    """The rules of a shipped rulebook as written in its YAML (``inputs`` included)."""
    return yaml.safe_load((RULEBOOK_DIR / f"{name}.yaml").read_text("utf-8"))["rules"]


SHIPPED = sorted(available_rulebooks())


# ------------------------------------------------------------------------------------------
# every rule says what it reads

@pytest.mark.parametrize("book", SHIPPED)
def test_every_rule_declares_its_inputs(book: str) -> None:
    bad = []
    for r in raw_rules(book):
        inp = r.get("inputs")
        if not isinstance(inp, dict) or not {"roles", "fields"} <= set(inp) <= INPUT_KEYS:
            bad.append(f"{r['id']}: inputs missing or not {{roles, fields[, dem, options]}}")
            continue
        if not (isinstance(inp["roles"], list) and isinstance(inp["fields"], dict)
                and isinstance(inp.get("dem", False), bool) and isinstance(inp.get("options", []), list)):
            bad.append(f"{r['id']}: inputs has the wrong types")
        stray = set(inp["fields"]) - set(inp["roles"])
        if stray:
            bad.append(f"{r['id']}: fields of roles it does not list: {sorted(stray)}")
    assert not bad, f"rulebook {book}: " + "; ".join(bad)


# ------------------------------------------------------------------------------------------
# scenarios

@dataclass
class Scenario:
    """A baseline run of one command: the layers, the options, and how to run it."""

    name: str
    book: str
    group: str
    run: Callable[[Layers | None, dict[str, Any]], gpd.GeoDataFrame]
    layers: Layers | None
    opts: dict[str, Any] = field(default_factory=dict)


COMMANDS = (check_site, check_stormwater, classify_action)


def _unset(name: str) -> Any:
    """The value of an option the user did not give: the command's own default (None for a yes/no
    statement such as ``larger_common_plan``, False for a flag such as ``approved_swppp``)."""
    for fn in COMMANDS:
        p = inspect.signature(fn).parameters.get(name)
        if p is not None and p.default is not inspect.Parameter.empty:
            return p.default
    return None


def _without_role(layers: Layers, role: str) -> Layers:
    return dataclasses.replace(layers, frames={k: v for k, v in layers.frames.items() if k != role},
                               info={k: v for k, v in layers.info.items() if k != role})


def _with_field(layers: Layers, role: str, name: str, how: str) -> Layers | None:
    """The layers with one field blanked, or as a file without it would load (None: the loader refuses).

    A file without a required field of the role is refused by the loader; one without an optional
    field of the role gets the field filled with missing values and noted in ``absent_fields``;
    any other field is simply not there.
    """
    g = layers.frames[role].copy()
    spec = ROLES.get(role)
    info = dict(layers.info)
    if how == "drop" and spec is not None and name in spec.required:
        return None
    if how == "drop" and (spec is None or name not in spec.optional):
        g = g.drop(columns=[name])
    else:
        g[name] = pd.Series([None] * len(g), index=g.index, dtype=object)
        if how == "drop" and role in info:
            info[role] = dataclasses.replace(info[role], absent_fields=[*info[role].absent_fields, name])
    return dataclasses.replace(layers, frames={**layers.frames, role: g}, info=info)


def _has_field(layers: Layers | None, role: str, name: str) -> bool:
    g = layers.get_layer(role) if layers is not None else None
    return g is not None and name in g.columns and g[name].notna().any()


def items_of(inputs: dict) -> list[tuple[str, ...]]:
    """The things a rule reads, as ``(kind, ...)`` keys: role, field, dem, option."""
    out: list[tuple[str, ...]] = [("role", r) for r in inputs["roles"]]
    out += [("field", role, f) for role, fs in inputs["fields"].items() for f in fs]
    out += [("dem",)] if inputs.get("dem", False) else []
    out += [("option", o) for o in inputs.get("options", [])]
    return out


def present(sc: Scenario, item: tuple[str, ...]) -> bool:
    kind = item[0]
    if kind == "role":
        return sc.layers is not None and sc.layers.get_layer(item[1]) is not None
    if kind == "field":
        return _has_field(sc.layers, item[1], item[2])
    if kind == "dem":
        return sc.layers is not None and sc.layers.dem is not None
    return item[1] in sc.opts and sc.opts[item[1]] != _unset(item[1])


def variants(sc: Scenario, item: tuple[str, ...]) -> list[tuple[str, Layers | None, dict[str, Any]]]:
    """The baseline with ``item`` taken away: (label, layers, options), one or two ways."""
    kind = item[0]
    if kind == "role":
        return [(f"without role {item[1]}", _without_role(sc.layers, item[1]), sc.opts)]
    if kind == "field":
        return [(f"{item[1]}.{item[2]} {how}", _with_field(sc.layers, item[1], item[2], how), sc.opts)
                for how in ("blanked", "drop")]
    if kind == "dem":
        return [("without the DEM", dataclasses.replace(sc.layers, dem=None), sc.opts)]
    return [(f"without option {item[1]}", sc.layers, {**sc.opts, item[1]: _unset(item[1])})]


def _by_subject(f: gpd.GeoDataFrame) -> dict[tuple[str, str], tuple[set, tuple]]:
    out: dict[tuple[str, str], tuple[set, tuple]] = {}
    for (layer, sid), g in f.groupby(["subject_layer", "subject_id"], sort=False):
        meas = tuple(sorted(round(float(m), 6) for m in g["measured"] if np.isfinite(m)))
        out[(layer, sid)] = (set(g["status"]), meas)
    return out


def flips(base: gpd.GeoDataFrame, after: gpd.GeoDataFrame, kind: str) -> list[str]:
    """Subjects of one rule that became ``pass`` (see the module docstring)."""
    b, a = _by_subject(base), _by_subject(after)
    bad = []
    for key, (statuses, meas) in a.items():
        if "pass" not in statuses:
            continue
        was = b.get(key)
        if was is not None and "pass" in was[0]:
            continue
        if kind == "role" and was is not None and was[1] != meas:
            continue  # the plan measured less without the layer: a pass earned on the new measure
        msg = after.loc[(after["subject_layer"] == key[0]) & (after["subject_id"] == key[1]), "message"].iloc[0]
        bad.append(f"{key[0]} {key[1]!r}: {sorted(was[0]) if was else 'absent'} -> pass ({msg})")
    return bad


# ------------------------------------------------------------------------------------------
# the baselines

def _tif(path: Path, z: np.ndarray, x0: float, y0: float, cell: float) -> Path:
    with rasterio.open(path, "w", driver="GTiff", width=z.shape[1], height=z.shape[0], count=1, dtype="float32",
                       crs=NY_FT, transform=Affine(cell, 0, x0, 0, -cell, y0), nodata=-9999.0) as dst:
        dst.write(z.astype("float32"), 1)
    return path


def _gpkg(path: Path, **layers: gpd.GeoDataFrame) -> Path:
    for name, g in layers.items():
        g.to_file(path, layer=name, driver="GPKG")
    return path


def site_layers(folder: Path) -> Layers:
    """Hand-made flood-site plan (local feet from X0, Y0).

    AE x -500..1500, y -200..200 (STATIC_BFE 850.0); AE floodway y 200..600 (850.0); unnumbered A
    x 1500..2500; X above y 600. BFE lines 851 (x = -100) and 853 (x = 900) across a river at
    y = 400: a blanked STATIC_BFE gives an interpolated BFE over 851 ft, higher than 850. DEM: plane
    z = 845 + 0.001 x (10-ft cells, x -600..2300: F4 reaches past its east edge).
    F1 AE (0..40, 0..40); F2 floodway (100..140, 300..340); F3 zone A (1800..1840, 0..40): HAG
    about 846.84, + 2 = 848.84; F4 zone A (2280..2320, 0..40), partly off the DEM; F5 a 9 x 9 ft shed
    in AE; F6 outside the map (5000..5040).
    """
    x_sub = "AREA OF MINIMAL FLOOD HAZARD"
    fz = gpd.GeoDataFrame({
        "FLD_ZONE": ["AE", "AE", "A", "X"], "ZONE_SUBTY": [None, "FLOODWAY", None, x_sub],
        "SFHA_TF": ["T", "T", "T", "F"], "STATIC_BFE": [850.0, 850.0, -9999.0, -9999.0],
        "V_DATUM": ["NAVD88"] * 4, "DFIRM_ID": ["360057"] * 4, "EFF_DATE": ["1998-03-02"] * 4},
        geometry=[square(-500, -200, 1500, 200), square(-500, 200, 1500, 600), square(1500, -200, 2500, 600),
                  square(-500, 600, 2500, 900)], crs=NY_FT)
    bl = gpd.GeoDataFrame({"ELEV": [851.0, 853.0], "V_DATUM": ["NAVD88", "NAVD88"]},
                          geometry=[LineString([(X0 - 100, Y0 - 200), (X0 - 100, Y0 + 900)]),
                                    LineString([(X0 + 900, Y0 - 200), (X0 + 900, Y0 + 900)])], crs=NY_FT)
    st = gpd.GeoDataFrame({"name": ["River"]}, geometry=[LineString([(X0 - 500, Y0 + 400), (X0 + 1500, Y0 + 400)])],
                          crs=NY_FT)
    fps = gpd.GeoDataFrame({"id": ["F1", "F2", "F3", "F4", "F5", "F6"]}, geometry=[
        square(0, 0, 40, 40), square(100, 300, 140, 340), square(1800, 0, 1840, 40), square(2280, 0, 2320, 40),
        square(500, 0, 509, 9), square(5000, 0, 5040, 40)], crs=NY_FT)
    xs = X0 - 600 + 5 + 10 * np.arange(290)
    z = np.tile(845 + 0.001 * (xs - X0), (160, 1))
    dem = _tif(folder / "site_dem.tif", z, X0 - 600, Y0 + 1000, 10.0)
    path = _gpkg(folder / "site.gpkg", footprints=fps, flood_zones=fz, bfe_lines=bl, streams=st)
    return load_layers(path, dem=dem, dem_z_units="ft", primary=("footprints",))


def small_stormwater_layers(folder: Path) -> Layers:
    """A 0.5-acre site (side sqrt(21,780) = 147.6 ft) dated 2024-05-01..05-29, on a plane falling 1 ft per
    10 ft to the east; an impaired stream 600 ft east of it (beyond the 500-ft screening distance): its
    flow path runs east and reaches the stream after about 600 ft."""
    s = math.sqrt(0.5 * 43_560)
    d = gpd.GeoDataFrame({"id": ["S1"], "start": ["2024-05-01"], "stabilized": ["2024-05-29"], "use": ["commercial"]},
                         geometry=[square(0, 0, s, s)], crs=NY_FT)
    w = gpd.GeoDataFrame({"id": ["W1"], "name": ["Choconut Creek"]},
                         geometry=[LineString([(X0 + s + 600, Y0 - 500), (X0 + s + 600, Y0 + s + 500)])], crs=NY_FT)
    xs = X0 - 500 + 5 + 10 * np.arange(300)
    z = np.tile(900 - 0.1 * (xs - X0), (200, 1))
    dem = _tif(folder / "sw_dem.tif", z, X0 - 500, Y0 + 1000, 10.0)
    path = _gpkg(folder / "sw.gpkg", disturbance=d, impaired_waters=w)
    return load_layers(path, dem=dem, dem_z_units="ft", primary=("disturbance",))


def _findings(res: Any) -> gpd.GeoDataFrame:
    return res.findings


@pytest.fixture(scope="module")
def scenarios(tmp_path_factory: pytest.TempPathFactory) -> list[Scenario]:
    folder = tmp_path_factory.mktemp("guard")
    town = load_layers(SAMPLE / "vestal_sample.gpkg", dem=SAMPLE / "dem.tif")
    # one landing dated, the others not (SWP-005 reads landing dates when given)
    dated = {}
    for role in ("landings", "haul_roads"):  # the first of each dated, the others not
        g = town.frames[role].copy()
        g["start"], g["stabilized"] = [None] * len(g), [None] * len(g)
        g.loc[g.index[0], ["start", "stabilized"]] = ["2025-05-01", "2025-09-01"]
        dated[role] = g
    sw_town = dataclasses.replace(town, frames={**town.frames, **dated})
    # HRV-001 sums the volumes of contiguous harvest areas of one owner
    ha = town.frames["harvest_area"].assign(owner="Hillside Timber Holdings LLC")
    # HRV-002 elements h and f: a wetland, a pond and an easement beside the first harvest area
    c = ha.geometry.iloc[0].centroid
    extra = {role: gpd.GeoDataFrame({"feature_id": [f"{role[:2].upper()}-1"]},
                                    geometry=[c.buffer(r)], crs=town.crs)
             for role, r in (("wetlands", 40.0), ("ponds", 25.0), ("easements", 15.0))}
    town = dataclasses.replace(town, frames={**town.frames, "harvest_area": ha, **extra})
    # screen: every fourth parcel of the sample town (a few hundred, every status) for speed
    pc = town.frames["parcels"]
    screen_town = dataclasses.replace(town, frames={**town.frames, "parcels": pc.iloc[::4].copy()})
    rain, log = SAMPLE / "rainfall.csv", SAMPLE / "inspection_log.csv"
    books = {b: load_rulebook(b) for b in SHIPPED}

    def sw(book: str) -> Callable:
        return lambda layers, o: _findings(check_stormwater(layers, books[book], **o))

    out = [
        Scenario("screen: sample town", "vestal", "flood", lambda layers, o: _findings(screen_parcels(layers, books["vestal"], findings="all")),
                 screen_town),
        Scenario("harvest: sample town", "vestal", "harvest",
                 lambda layers, o: _findings(check_harvest(layers, books["vestal"])), town),
        Scenario("flood-site: hand-made plan", "vestal", "flood",
                 lambda layers, o: _findings(check_site(layers, books["vestal"], **o)), site_layers(folder),
                 {"use": "residential", "lowest_floor_ft": 849.5, "bfe_ft": 849.0, "enclosed_sqft": 800.0,
                  "openings": 1, "openings_sqin": 700.0, "opening_bottom_ft": 1.5, "improvement_cost": 60_000.0,
                  "market_value": 100_000.0, "no_rise_evaluation": True}),
    ]
    for book in ("vestal", "lockport"):
        out.append(Scenario(f"stormwater ({book}): sample town", book, "stormwater", sw(book), sw_town,
                            {"rainfall": rain, "inspection_log": log, "approved_swppp": True}))
    small = small_stormwater_layers(folder)
    for book in ("vestal", "lockport"):
        out.append(Scenario(f"stormwater ({book}): small site upslope of a creek", book, "stormwater", sw(book), small,
                            {"larger_common_plan": True, "approved_swppp": False}))
    seqr = lambda layers, o: _findings(classify_action(books["vestal"], **o))
    actions = [
        {"action_type": "multiple_residence", "units": 30},
        {"action_type": "small_subdivision", "lots": 40, "chapter_24": True},
        {"action_type": "small_subdivision", "lots": 12, "chapter_24": False},
        {"action_type": "minor_alteration", "expansion_pct": 51.0},
        {"action_type": "surplus_property_sale", "acres": 26.0},
        {"action_type": "highway_reconstruction", "acres": 1.0, "lanes": 2, "no_effect_on": ("all",)},
        {"action_type": "highway_reconstruction", "acres": 1.0, "lanes": 1, "affects": ("wetlands",)},
        {"action_type": "commercial_zone_construction", "district": "RA-1", "board_approval": False,
         "eis_completed": True, "type_i": False},
        {"action_type": "commercial_zone_construction", "district": "C-1", "board_approval": True,
         "eis_completed": True, "type_i": False},
        {"action_type": "commercial_zone_construction", "district": "C-1", "board_approval": False,
         "eis_completed": False, "type_i": False},
        {"action_type": "commercial_zone_construction", "district": "C-1", "board_approval": False,
         "eis_completed": True, "type_i": True},
        {"action_type": "type_i"},
        {"action_type": "budget_and_town_actions", "type_i": False, "board_resolved_significant": False},
        {"action_type": "legislature_court_town", "type_i": False},
    ]
    out += [Scenario(f"seqr: {a}", "vestal", "seqr", seqr, None, a) for a in actions]
    return out


def _run(sc: Scenario, layers: Layers | None, opts: dict[str, Any]) -> gpd.GeoDataFrame | GeoConstraintsError:
    try:
        return sc.run(layers, opts)
    except GeoConstraintsError as exc:  # a refusal: one clear line, never a pass
        return exc


# ------------------------------------------------------------------------------------------
# the guard

KNOWN_ELSEWHERE: dict[tuple[str, str], str] = {}
"""False passes the guard finds in rules owned elsewhere, by (rule, item label prefix). Each must
still be found (strict), so the list can only shrink; nothing here is skipped."""


def _known(line: str) -> tuple[str, str] | None:
    return next((k for k in KNOWN_ELSEWHERE if f"| {k[0]} | {k[1]}" in line), None)


GROUP_SCENARIOS = ["screen", "harvest", "flood-site", "stormwater (vestal): sample", "stormwater (lockport): sample",
                   "stormwater (vestal): small", "stormwater (lockport): small", "seqr"]


@pytest.mark.parametrize("prefix", GROUP_SCENARIOS)
def test_no_pass_without_its_inputs(scenarios: list[Scenario], prefix: str) -> None:
    chosen = [sc for sc in scenarios if sc.name.startswith(prefix)]
    assert chosen, prefix
    problems: list[str] = []
    for sc in chosen:
        rules = {r["id"]: r for r in raw_rules(sc.book) if r["group"] == sc.group}
        base = sc.run(sc.layers, sc.opts)
        assert len(base), f"{sc.name}: the baseline gives no findings"
        items = {it for r in rules.values() for it in items_of(r["inputs"]) if present(sc, it)}
        for item in sorted(items):
            for label, layers, opts in variants(sc, item):
                if layers is None and sc.layers is not None:
                    continue  # the loader refuses such a file (a required field missing)
                after = _run(sc, layers, opts)
                if isinstance(after, GeoConstraintsError):
                    continue
                for rid, r in rules.items():
                    if item not in items_of(r["inputs"]):
                        continue
                    got = flips(base[base["rule_id"] == rid], after[after["rule_id"] == rid], item[0])
                    problems += [f"{sc.name} | {rid} | {label}: {g}" for g in got]
    known = {_known(p) for p in problems} - {None}
    expected = {k for k in KNOWN_ELSEWHERE if any(sc.book == "vestal" and sc.group == "harvest" for sc in chosen)
                and k[0].startswith("HRV")}
    assert expected <= known, f"no longer found, remove from KNOWN_ELSEWHERE: {sorted(expected - known)}"
    problems = [p for p in problems if _known(p) is None]
    assert not problems, "passes without the input the rule reads:\n" + "\n".join(problems)


def test_every_input_is_exercised(scenarios: list[Scenario]) -> None:
    """Each role, field, DEM and option a rule reads is given in some baseline (else the guard could not test it)."""
    missing = []
    for book in SHIPPED:
        for r in raw_rules(book):
            mine = [sc for sc in scenarios if sc.book == book and sc.group == r["group"]]
            for it in items_of(r["inputs"]):
                if not any(present(sc, it) for sc in mine):
                    missing.append(f"{book} {r['id']}: {it}")
    assert not missing, "inputs no baseline gives:\n" + "\n".join(missing)


def test_guard_catches_a_false_pass(scenarios: list[Scenario]) -> None:
    """The harness itself: a baseline review that turns into pass without its input is reported."""
    sc = next(s for s in scenarios if s.name.startswith("stormwater (vestal): small"))
    base = sc.run(sc.layers, sc.opts)
    fake = base.copy()
    fake.loc[fake["rule_id"] == "SWP-002", "status"] = "pass"  # what the old code said without a DEM
    assert base.loc[base["rule_id"] == "SWP-002", "status"].tolist() == ["review"]
    assert flips(base[base["rule_id"] == "SWP-002"], fake[fake["rule_id"] == "SWP-002"], "dem")
