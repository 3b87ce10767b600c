"""The commands: load nothing, check everything, return a :class:`~geoconstraints.result.Result`.

* :func:`screen_parcels` (``screen``): every parcel against the flood maps (FLD rules).
* :func:`check_site` (``flood-site``): proposed structure footprints (FLD-001..010).
* :func:`check_harvest` (``harvest``): a timber-harvest site plan (HRV rules).
* :func:`check_stormwater` (``stormwater``): disturbance and phasing plans (SWP rules).
* :func:`classify_action` (``seqr``): a SEQR action (SQR-001).

Each builds the measurements its rules read with the engines of :mod:`geoconstraints.geometry`,
runs the rulebook's group with :func:`~geoconstraints.rulebook.registry.run_group` and wraps
the findings, tables and derived layers in a Result.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from geoconstraints.errors import InputError, RulebookError
from geoconstraints.geometry import buffers as bf
from geoconstraints.geometry import terrain as tr
from geoconstraints.geometry.bfe_sample import (
    PARCEL_BFE_COLUMNS,
    bfe_for_overlaps,
    empty_parcel_bfe,
    site_bfe,
)
from geoconstraints.geometry.flow import FlowTrace
from geoconstraints.geometry.overlay import (
    CHUNK_SIZE,
    PendingDistances,
    acres_of,
    distance_to_lines,
    flood_metrics,
    norm_text,
    share_of,
    start_distance_to_lines,
)
from geoconstraints.geometry.overlay_dask import dask_client, overlay_areas_dask
from geoconstraints.geometry.phasing import (
    QUALIFIED_NO,
    Site,
    build_sites,
    harvest_footprints,
    inspection_gaps,
    inspection_schedule,
    match_inspections,
    phasing_dates,
    qualifications,
    site_phasing,
    storm_events,
)
from geoconstraints.geometry.terrain import highest_adjacent_grade
from geoconstraints.io.layers import Layers
from geoconstraints.io.roles import PLAN_ROLES
from geoconstraints.io.sources import file_stamp
from geoconstraints.io.tables import (
    check_rainfall_coverage,
    check_rainfall_first_run,
    read_inspection_log,
    read_rainfall,
)
from geoconstraints.result import (
    Result,
    add_rule_status_columns,
    make_result,
    repaired_flags,
    split_scope,
    worst_status_of,
)
from geoconstraints.rulebook.findings import findings_scope, scope_statuses
from geoconstraints.rulebook.model import Rulebook
from geoconstraints.rulebook.registry import run_checks, run_group
from geoconstraints.rulebook.render import messages_only_for
from geoconstraints.rules import harvest as hv
from geoconstraints.rules.flood import (
    STATED_BFE_METHOD,
    FloodContext,
    bfe_in_use,
    firm_gives_bfe,
    flood_zone_spec,
    known_subtypes,
    no_bfe_zones,
    stated_bfe,
    subtype_warning,
)
from geoconstraints.rules.seqr import RULE_ID, Action, norm_key, resources, validate_action
from geoconstraints.rules.stormwater import StormwaterContext, site_flow, swp007_applies
from geoconstraints.text import day_text, ft_text, visible_text
from geoconstraints.units import SQFT_PER_ACRE, elevation_problem, number_problem

log = logging.getLogger(__name__)


# ------------------------------------------------------------------------------------------
# entry points

class NumberBound(NamedTuple):
    """The bound of a command's number option: at least ``minimum`` (``above``: more than it);
    ``whole``: a count (dwelling units, lots, travel lanes, flood openings), so a fraction is refused."""

    minimum: float
    above: bool = False
    whole: bool = False


#: Lower bounds of :func:`check_site`'s numbers, as the CLI's ``flood-site`` options have them:
#: None for an elevation (feet, between the lowest and highest ground in the United States:
#: :func:`~geoconstraints.units.elevation_problem`), ``NumberBound(0)`` for "0 or more",
#: ``NumberBound(0, above=True)`` for "over 0". A market value is at least $1: under it no structure was
#: appraised (and a cost, at most 1e15, stays a finite percentage of it for FLD-008: 1e-300 made "inf %").
#: The number of openings is a count: whole.
SITE_NUMBER_BOUNDS: dict[str, NumberBound | None] = {
    "lowest_floor_ft": None, "bfe_ft": None, "enclosed_sqft": NumberBound(0), "openings_sqin": NumberBound(0),
    "openings": NumberBound(0, whole=True), "opening_bottom_ft": NumberBound(0), "improvement_cost": NumberBound(0),
    "market_value": NumberBound(1),
}

#: Bounds of :func:`classify_action`'s numbers, as the CLI's ``seqr`` options have them: each 0 or more;
#: the values SQR-001's count bounds compare (``_units``, ``_lots`` and ``_lanes_count`` thresholds:
#: dwelling units, houses of a subdivision, travel lanes added) are counts, whole (29.5 units read against
#: "less than 30 units" was Type II).
SEQR_NUMBER_BOUNDS: dict[str, NumberBound | None] = {
    "units": NumberBound(0, whole=True), "lots": NumberBound(0, whole=True), "lanes": NumberBound(0, whole=True),
    "expansion_pct": NumberBound(0), "acres": NumberBound(0),
}


def refuse_bad_numbers(command: str, values: dict[str, Any], bounds: dict[str, NumberBound | None]) -> None:
    """Raise InputError for a NaN, an infinity, a meaningless negative, a fraction of a count or a yes/no
    (``True``, ``False``: Python reads them as 1 and 0) among ``values`` (None = not given, allowed): from
    Python as from the CLI, a NaN never reads as a pass, ``units=True`` never as 1 unit.

    Examples
    --------
    >>> refuse_bad_numbers("flood-site", {"market_value": 1e-300}, SITE_NUMBER_BOUNDS)
    Traceback (most recent call last):
    ...
    geoconstraints.errors.InputError: flood-site market_value = 1e-300: 1e-300 is less than 1. Give a number of at least 1, or leave it out (None)
    >>> refuse_bad_numbers("flood-site", {"lowest_floor_ft": 1e300}, SITE_NUMBER_BOUNDS)
    Traceback (most recent call last):
    ...
    geoconstraints.errors.InputError: flood-site lowest_floor_ft = 1e+300: 1e+300 is too large (over 1e+15), beyond any quantity measured here. Give an elevation in feet, or leave it out (None)
    >>> refuse_bad_numbers("seqr", {"units": 29.5}, SEQR_NUMBER_BOUNDS)
    Traceback (most recent call last):
    ...
    geoconstraints.errors.InputError: seqr units = 29.5: 29.5 is not a whole number. Give a whole number of 0 or more (a count), or leave it out (None)
    >>> refuse_bad_numbers("flood-site", {"openings": False}, SITE_NUMBER_BOUNDS)
    Traceback (most recent call last):
    ...
    geoconstraints.errors.InputError: flood-site openings = False: False is not a number (a yes/no value). Give a whole number of 0 or more (a count), or leave it out (None)
    """
    for name, value in values.items():
        if value is None or name not in bounds:
            continue
        lower = bounds[name]
        why = (elevation_problem(value) if lower is None
               else number_problem(value, minimum=lower.minimum, above=lower.above, whole=lower.whole))
        if why:
            need = ("an elevation in feet" if lower is None
                    else f"a whole number of {lower.minimum:g} or more (a count)" if lower.whole
                    else f"a number {'over' if lower.above else 'of at least'} {lower.minimum:g}")
            raise InputError(f"{command} {name} = {value!r}: {why}. Give {need}, or leave it out (None)")

def _other_cover_layers(layers: Layers, subjects: gpd.GeoDataFrame) -> tuple[list[tuple[str, np.ndarray]], bool]:
    extra: list[tuple[str, np.ndarray]] = []
    for role, key in (("stream_corridor", "_corridor"), ("critical_slopes", "_critical")):
        g = layers.get_layer(role)
        if g is not None:
            extra.append((key, g.geometry.values))
    z = layers.get_layer("zoning")
    if z is not None and "district" in z.columns:
        d = norm_text(z["district"])
        for name in sorted(set(d) - {""}):
            extra.append((f"district:{name}", z.geometry.values[(d == name).to_numpy()]))
    return extra, z is not None


def _stream_search(layers: Layers, geoms: np.ndarray, rulebook: Rulebook) -> dict[str, Any] | None:
    """The arguments of the stream distance (the streams, FLD-003's ``bfe_search_radius_ft``); None
    when there is nothing to measure (no streams layer, no subjects)."""
    streams = layers.get_layer("streams")
    if streams is None or not len(geoms):
        return None
    return {"lines": streams.geometry.values, "max_distance_ft": rulebook["FLD-003"].t("bfe_search_radius_ft")}


def _stream_distance(layers: Layers, geoms: np.ndarray, rulebook: Rulebook, workers: int | None = None) -> np.ndarray:
    """Distance to the nearest stream within FLD-003's ``bfe_search_radius_ft`` (NaN beyond it)."""
    search = _stream_search(layers, geoms, rulebook)
    if search is None:
        return np.full(len(geoms), np.nan)
    return distance_to_lines(geoms, workers=workers, **search)


def _start_stream_distance(layers: Layers, geoms: np.ndarray, rulebook: Rulebook,
                           workers: int | None = None) -> PendingDistances | None:
    """:func:`_stream_distance` begun in the background (:func:`start_distance_to_lines`); None: no streams."""
    search = _stream_search(layers, geoms, rulebook)
    return None if search is None else start_distance_to_lines(geoms, workers=workers, **search)


ENGINES = ("default", "dask")
"""Overlay engines of :func:`screen_parcels`: threads on this machine, or a dask cluster."""


@contextlib.contextmanager
def _overlay_engine(engine: str, scheduler: str | None, workers: int | None
                    ) -> Iterator[Callable[..., pd.DataFrame] | None]:
    """The overlay function of ``engine`` (None: the default threads); a dask client lives as long as the block."""
    if engine not in ENGINES:
        raise InputError(f"engine {engine!r} is not one of {', '.join(ENGINES)}")
    if engine == "default":
        if scheduler:
            raise InputError("--scheduler runs the check on a dask cluster: give --engine dask with it")
        yield None
        return
    with dask_client(scheduler, workers) as client:
        yield functools.partial(overlay_areas_dask, client=client)


def _bfe_for_overlaps(layers: Layers, rulebook: Rulebook, overlaps: np.ndarray,
                      m: pd.DataFrame | None = None) -> dict[str, np.ndarray]:
    """The BFE columns of the parcels table (:data:`~geoconstraints.geometry.bfe_sample.PARCEL_BFE_COLUMNS`):
    :func:`~geoconstraints.geometry.bfe_sample.bfe_for_overlaps` over the layers' ``flood_zones``,
    ``bfe_lines`` and ``streams``, with FLD-003's ``bfe_search_radius_ft`` and the zones with BFEs of the
    rulebook (:func:`~geoconstraints.rules.flood.flood_zone_spec`, exact). The rulebook is read only where some
    parcel has a part in the SFHA (``overlaps``: the overlay's ``_sfha`` geometries, None where none).

    Examples
    --------
    A parcel 400 ft along a stream crossed by BFE lines of 848 ft at x = 0 and 850 ft at x = 400, its point on
    surface halfway (849 ft), and one outside the SFHA:

    >>> from shapely.geometry import LineString, box
    >>> from geoconstraints import load_rulebook
    >>> ae = gpd.GeoDataFrame({"FLD_ZONE": ["AE"]}, geometry=[box(-300, -200, 800, 300)])
    >>> bl = gpd.GeoDataFrame({"ELEV": [848.0, 850.0], "V_DATUM": ["NAVD88"] * 2},
    ...                       geometry=[LineString([(0, -150), (0, 250)]), LineString([(400, -150), (400, 250)])])
    >>> st = gpd.GeoDataFrame(geometry=[LineString([(-250, 50), (750, 50)])])
    >>> layers = Layers({"flood_zones": ae, "bfe_lines": bl, "streams": st}, crs=None)
    >>> c = _bfe_for_overlaps(layers, load_rulebook("vestal"), np.array([box(0, 0, 400, 100), None]))
    >>> c["bfe_ft"].tolist(), c["bfe_lowest_ft"].tolist(), c["bfe_method"].tolist()
    ([850.0, nan], [848.0, nan], ['interpolated_along_stream', 'none'])
    """
    if not (~pd.isna(overlaps)).any():  # no parcel in the SFHA: nothing to read
        return empty_parcel_bfe(len(overlaps))
    return bfe_for_overlaps(overlaps, flood=layers.get_layer("flood_zones"),
                            bfe_lines=layers.get_layer("bfe_lines"), streams=layers.get_layer("streams"),
                            search_radius_ft=rulebook["FLD-003"].t("bfe_search_radius_ft"),
                            spec=flood_zone_spec(rulebook, exact=True), m=m)


def _slivers_ignored(m: pd.DataFrame) -> Any:
    """The zones whose overlap with each subject was ignored as a sliver (``'AE; X'``), and ``floodway``
    where the subject's floodway overlap was (a floodway lies inside a zone whose overlap may count), and
    ``floodway-like area`` where its overlap with FLD-002's floodway-like (encroachment) areas was.

    Examples
    --------
    >>> m = pd.DataFrame({"sliver_zones": ["", "AE", "", "X"], "floodway_sliver": [False, False, True, True],
    ...                   "encroachment_sliver": [False, True, False, False]})
    >>> list(_slivers_ignored(m))
    ['', 'AE; floodway-like area', 'floodway', 'X; floodway']
    """
    zones = m["sliver_zones"].array
    fw = m["floodway_sliver"].to_numpy(dtype=bool)
    enc = (m["encroachment_sliver"].to_numpy(dtype=bool) if "encroachment_sliver" in m
           else np.zeros(len(m), dtype=bool))
    if not fw.any() and not enc.any():
        return zones
    out = np.asarray(zones, dtype=object).copy()
    for has, word in ((fw, "floodway"), (enc, "floodway-like area")):
        out[has] = [f"{z}; {word}" if z else word for z in out[has]]
    return out


def _subject_table(subjects: gpd.GeoDataFrame, id_name: str, m: pd.DataFrame, layers: Layers,
                   zoning_given: bool) -> gpd.GeoDataFrame:
    area = m["area_sqft"].to_numpy()
    t = pd.DataFrame({
        id_name: subjects["feature_id"].astype(str).array,  # text kept as it is held (Arrow): no string per row
        "area_acres": acres_of(area),
        "sfha_acres": acres_of(m["sfha_sqft"]), "sfha_share": share_of(m["sfha_sqft"].to_numpy(), area),
        "floodway_acres": acres_of(m["floodway_sqft"]),
        "floodway_share": share_of(m["floodway_sqft"].to_numpy(), area),
        # the overlay's text as it is held (Arrow): no Python string per row and back
        "flood_zones": m["flood_zones"].array, "flood_data": m["flood_data"].array,
        "uncovered_acres": acres_of(m["uncovered_sqft"]),
        "slivers_ignored": _slivers_ignored(m),
    })
    for key, col, role in (("_corridor", "stream_corridor_acres", "stream_corridor"),
                           ("_critical", "critical_slope_acres", "critical_slopes")):
        t[col] = acres_of(m[f"{key}_sqft"]) if f"{key}_sqft" in m else np.nan
    if zoning_given:
        t["zoning_districts"] = m["districts"].array
    elif "zoning" in subjects.columns:
        t["zoning_districts"] = norm_text(subjects["zoning"]).to_numpy()
    else:
        t["zoning_districts"] = ""
    return gpd.GeoDataFrame(t, geometry=subjects.geometry.values, crs=subjects.crs)


COMPARED_ONLY = ("flood_data",)
"""Text columns of the checks' work table kept as held (Arrow): the checks only compare them with a
word (``t["flood_data"] == "partial"``: Arrow compares a million in milliseconds, Python strings in
~0.1 s each time) and never read them row by row in bulk."""


def _measured(table: gpd.GeoDataFrame, id_name: str, m: pd.DataFrame) -> gpd.GeoDataFrame:
    """What the FLD checks read: the subject table plus the overlay's square feet and sliver flags, and the
    encroachment subtypes each subject is in (FLD-002 names them)."""
    keep = [c for c in m.columns if c.endswith(("_sqft", "_sliver")) or c == "encroachment_subtypes"]
    work = pd.concat([table.reset_index(drop=True), m[keep]], axis=1)
    ids = pd.Series(table[id_name].to_numpy(dtype=object), index=work.index, dtype=object)
    work[id_name] = work["feature_id"] = ids  # one string per row for both
    for c in work.columns:  # text as Python str objects once, not again by every check that reads it
        if isinstance(work[c].dtype, pd.StringDtype) and c not in COMPARED_ONLY:
            work[c] = work[c].astype(object)
    return gpd.GeoDataFrame(work, geometry=table.geometry.values, crs=table.crs, copy=False)


def _overlap_layers(overlaps: dict[str, np.ndarray], table: gpd.GeoDataFrame,
                    m: pd.DataFrame | None = None) -> dict[str, gpd.GeoDataFrame]:
    """Derived layers ``sfha_overlaps`` and ``floodway_overlaps``: each parcel's part in them, as the
    parcels table measures it (an overlap ignored as a sliver is in ``slivers_ignored``, not here); with the
    overlay's metrics ``m``, ``encroachment_overlaps`` too: each parcel's part in FLD-002's encroachment areas
    (floodway not determined), with their ``subtypes`` (only where some parcel has one)."""
    derived = {}
    n = len(table)
    enc = (m["encroachment_sqft"].to_numpy() if m is not None and "encroachment_sqft" in m and "_encroachment"
           in overlaps else np.zeros(n))
    for key, name, measured in (("_sfha", "sfha_overlaps", table["sfha_acres"].to_numpy()),
                                ("_floodway", "floodway_overlaps", table["floodway_acres"].to_numpy()),
                                ("_encroachment", "encroachment_overlaps", enc)):
        if key == "_encroachment" and not (enc > 0).any():
            continue
        g = overlaps[key]
        has = ~pd.isna(g) & (measured > 0)
        cols = {"parcel_id": table["parcel_id"].to_numpy()[has],
                "acres": acres_of(shapely.area(np.asarray(g[has], dtype=object)))}
        if key == "_encroachment" and m is not None and "encroachment_subtypes" in m:
            cols["subtypes"] = np.asarray(m["encroachment_subtypes"].to_numpy(), dtype=object)[has]
        derived[name] = gpd.GeoDataFrame(cols, geometry=np.asarray(g[has], dtype=object), crs=table.crs)
    return derived


def _site_bfe(layers: Layers, rulebook: Rulebook, geoms: np.ndarray, sfha: np.ndarray,
              bfe_zone_sqft: np.ndarray) -> pd.DataFrame:
    """The BFE of each footprint (:data:`~geoconstraints.geometry.bfe_sample.SITE_BFE_COLUMNS`, one row per
    footprint): :func:`~geoconstraints.geometry.bfe_sample.site_bfe` over the layers' ``flood_zones``,
    ``bfe_lines`` and ``streams``, with the zones with BFEs of the rulebook
    (:func:`~geoconstraints.rules.flood.flood_zone_spec`, exact), FLD-003's ``bfe_search_radius_ft`` and the
    rules' test of whether the FIRM gives a BFE (:func:`~geoconstraints.rules.flood.firm_gives_bfe`)."""
    spec = flood_zone_spec(rulebook, exact=True)
    return site_bfe(geoms, sfha, bfe_zone_sqft, flood=layers.get_layer("flood_zones"),
                    bfe_lines=layers.get_layer("bfe_lines"), streams=layers.get_layer("streams"),
                    search_radius_ft=rulebook["FLD-003"].t("bfe_search_radius_ft"), spec=spec,
                    firm_gives_bfe=firm_gives_bfe)


def _compare_maps(table: gpd.GeoDataFrame, m_pre: pd.DataFrame, min_sqft: float) -> gpd.GeoDataFrame:
    pre_sfha = acres_of(m_pre["sfha_sqft"])
    table["prelim_flood_zones"] = m_pre["flood_zones"].array
    table["prelim_flood_data"] = m_pre["flood_data"].array
    table["prelim_sfha_acres"] = pre_sfha
    table["sfha_acres_change"] = pre_sfha - table["sfha_acres"].to_numpy()
    eff, pre = table["flood_zones"].to_numpy(), table["prelim_flood_zones"].to_numpy()
    was, will = table["sfha_acres"].to_numpy() > 0, pre_sfha > 0
    change = np.where(eff == pre, "", [f"{a or 'none'} -> {b or 'none'}" for a, b in zip(eff, pre)]).astype(object)
    change[~was & will] = change[~was & will] + "; enters the SFHA"
    change[was & ~will] = change[was & ~will] + "; leaves the SFHA"
    table["zone_change"] = [c.lstrip("; ") for c in change]
    return table


def screen_parcels(layers: Layers, rulebook: Rulebook, *, chunk_size: int = CHUNK_SIZE, workers: int | None = None,
                   engine: str = "default", scheduler: str | None = None, findings: str | None = None) -> Result:
    """Screen every parcel against the flood maps (command ``screen``).

    Parameters
    ----------
    layers : Layers
        ``parcels`` (required), ``flood_zones`` (NFHL S_FLD_HAZ_AR), optional ``bfe_lines``,
        ``streams``, ``stream_corridor``, ``critical_slopes``, ``zoning`` and
        ``flood_zones_preliminary`` (a preliminary FIRM to compare).
    rulebook : Rulebook
        Supplies FLD-001..FLD-010 (thresholds, zone lists, adopted map).
    chunk_size : int
        Parcels per overlay chunk (chunks are compact patches of the map, sorted along a Hilbert curve).
    workers : int, optional
        Threads of the default engine, or worker processes of the local dask cluster (default:
        one per core).
    engine : {"default", "dask"}
        ``default``: the overlay on a pool of threads here; ``dask``: on a dask cluster
        (extra ``[dask]``). Both give the same table, row for row.
    scheduler : str, optional
        With ``engine="dask"``, the address of a running dask scheduler (``tcp://HOST:8786``);
        without it a local cluster is started for the run.
    findings : {"person", "all"}, optional
        Which findings the result keeps in memory (:attr:`Result.scope
        <geoconstraints.result.Result.scope>`): ``person`` (the default, as ``--findings``:
        violation, review, not_evaluated, and the run-wide FLD-010 whatever its status) or ``all``
        (pass and info too: five findings per parcel, millions for a county). Every outcome is in the parcels table either way; the
        pass and info findings left out are counted in :attr:`Result.omitted
        <geoconstraints.result.Result.omitted>` (:meth:`Result.counts`, :meth:`Result.summary`
        and the report count them). Writing every finding (``write_result(..., findings="all")``)
        needs ``all`` here.

    Returns
    -------
    Result
        Findings FLD-001, 002, 005, 006, 009 per parcel and FLD-010 once (those of the
        ``findings`` scope); ``tables["parcels"]``
        (a GeoDataFrame, one row per parcel: ``parcel_id, area_acres, sfha_acres, sfha_share,
        floodway_acres, floodway_share, flood_zones, flood_data, uncovered_acres,
        slivers_ignored, bfe_ft, bfe_method, bfe_datum, bfe_note, stream_distance_ft`` (empty where no stream
        is within FLD-003's ``bfe_search_radius_ft``), ``stream_corridor_acres, critical_slope_acres,
        zoning_districts``, one status column per rule (``status_FLD_001`` ..., see
        :func:`~geoconstraints.result.rule_status_columns`), ``worst_status`` and, with a
        preliminary map, ``prelim_flood_zones, prelim_sfha_acres, sfha_acres_change,
        zone_change``); ``tables["map_comparison"]`` (parcels whose zone or SFHA acres change);
        derived layers ``sfha_overlaps`` and ``floodway_overlaps``.

    Raises
    ------
    InputError
        No parcels layer.
    OutputError
        ``findings`` is not ``person``, ``all`` or None.

    Examples
    --------
    >>> from geoconstraints import load_layers, load_rulebook, sample_path
    >>> layers, rb = load_layers(sample_path("vestal_sample.gpkg")), load_rulebook("vestal")
    >>> res = screen_parcels(layers, rb)
    >>> res.tables["parcels"]["worst_status"].value_counts().to_dict()
    {'review': 1361, 'info': 1317, 'not_evaluated': 141}
    >>> res.scope, len(res.findings), res.n_findings, res.counts() == screen_parcels(layers, rb, findings="all").counts()
    ('person', 2751, 14096, True)
    """
    scope = findings_scope("screen", findings)
    rulebook.require_group("flood")
    with _overlay_engine(engine, scheduler, workers) as overlay:  # one dask cluster for the whole run
        return _screen(layers, rulebook, chunk_size=chunk_size, workers=workers, overlay=overlay, scope=scope)


def _screen(layers: Layers, rulebook: Rulebook, *, chunk_size: int, workers: int | None,
            overlay: Callable[..., pd.DataFrame] | None, scope: str = "all") -> Result:
    parcels = layers.get_layer("parcels")
    if parcels is None and "parcels" in layers.frames:  # given, but with no feature: not "give --parcels"
        given = layers.info.get("parcels")
        where = f" ({visible_text(given.path)}{':' + visible_text(given.layer) if given.layer else ''})" if given else ""
        raise InputError(f"layer parcels{where} has no features: nothing to screen. Check the file and layer "
                         f"(geoconstraints layers lists each layer's features)")
    if parcels is None:
        raise InputError("screen needs a parcels layer: give --parcels PATH[:LAYER] or a GeoPackage with a "
                         "layer named 'parcels'")
    flood = layers.get_layer("flood_zones")
    if flood is None:
        log.warning("no flood_zones layer: every parcel is not_evaluated for the flood rules")
    subtype_note = subtype_warning(flood, rulebook=rulebook)  # named once for the run, as each finding in the SFHA names it again
    if subtype_note:
        log.warning(subtype_note)
    extra, zoning_given = _other_cover_layers(layers, parcels)
    # the stream distance is no rule's input (GEOS, the GIL released): begun now on threads of the lowest
    # priority, it fills the cores the overlay and the checks below leave idle, and is finished at the end
    geoms = np.asarray(parcels.geometry.values, dtype=object)
    distance = _start_stream_distance(layers, geoms, rulebook, workers)
    try:
        m, overlaps = flood_metrics(parcels, flood, flood_zone_spec(rulebook), extra=extra, chunk_size=chunk_size,
                                    workers=workers, overlay=overlay)
        table = _subject_table(parcels, "parcel_id", m, layers, zoning_given)
        bfe = _bfe_for_overlaps(layers, rulebook, overlaps["_sfha"], m)
        for c in PARCEL_BFE_COLUMNS:
            table[c] = bfe[c]
        del bfe  # its text as Python strings (a county: ~100 MB) must not outlive the table's copy through the checks
        ctx = FloodContext("screen", layers, _measured(table, "parcel_id", m), "parcels", flood is not None, overlaps,
                           no_bfe_zones=no_bfe_zones(rulebook), known_subtypes=known_subtypes(rulebook))
        # the person scope: the checks build the findings that need a person only, and every parcel's status
        # of every rule (a county: millions of pass and info rows never built, typed nor stacked)
        with messages_only_for(scope_statuses(scope)):  # no message for a row a check's changed frame drops
            frames = run_checks(rulebook, "flood", ctx, keep=scope_statuses(scope))
        # status_FLD_001 ... and worst_status per parcel, from every status, before those out of scope go
        table = add_rule_status_columns(table, frames, "parcels", "parcel_id", worst=True)
        found, omitted = split_scope(frames, scope)
        del frames
    except BaseException:
        if distance is not None:
            distance.cancel()  # a refused or interrupted run starts no more of the search
        raise
    table.insert(list(table.columns).index("bfe_note") + 1, "stream_distance_ft",
                 distance.result() if distance is not None else np.full(len(geoms), np.nan))
    table.insert(list(table.columns).index("worst_status") + 1, "geometry_repaired",
                 _repaired_column(table, layers, "parcel_id", "parcels"))
    tables: dict[str, pd.DataFrame] = {}
    notes = [("Areas are exact intersections in the working CRS; overlapping flood polygons are dissolved per "
              "class before measuring. An interpolated BFE is a screening estimate, not a surveyed BFE.")]
    if subtype_note:
        notes.append(subtype_note + ".")
    pre = layers.get_layer("flood_zones_preliminary")
    if pre is not None:
        m_pre, _ = flood_metrics(parcels, pre, flood_zone_spec(rulebook), chunk_size=chunk_size, workers=workers,
                                 overlay=overlay, layer="flood_zones_preliminary")
        table = _compare_maps(table, m_pre, rulebook["FLD-001"].t("min_overlap_sqft"))
        min_acres = rulebook["FLD-001"].t("min_overlap_sqft") / SQFT_PER_ACRE
        changed = (table["zone_change"] != "") | (table["sfha_acres_change"].abs() >= min_acres)
        cols = ["parcel_id", "area_acres", "flood_zones", "prelim_flood_zones", "sfha_acres", "prelim_sfha_acres",
                "sfha_acres_change", "zone_change", "flood_data", "prelim_flood_data", "geometry_repaired"]
        tables["map_comparison"] = gpd.GeoDataFrame(table.loc[changed, cols].reset_index(drop=True),
                                                    geometry=table.geometry.values[changed.to_numpy()], crs=parcels.crs)
        notes.append(f"Preliminary map compared: {int(changed.sum())} parcel(s) change zone or SFHA acres.")
    tables = {"parcels": table, **tables}
    res = make_result("screen", rulebook, found, layers, derived=_overlap_layers(overlaps, table, m), tables=tables,
                      scope=scope, omitted=omitted)
    del found
    res.notes.extend(notes)
    return res


def _required_floor(found: pd.DataFrame, ids: pd.Series) -> np.ndarray:
    """The required lowest floor of each footprint: the higher of the thresholds of its FLD-003 and FLD-004
    findings (both where it lies partly where the FIRM gives a BFE and partly in zone A: the stricter governs)."""
    req = np.full(len(ids), np.nan)
    for rid in ("FLD-003", "FLD-004"):
        f = found[(found["rule_id"] == rid) & (found["subject_layer"] == "footprints")]
        thr = f.groupby("subject_id")["threshold"].first().reindex(ids.astype(str)).to_numpy(dtype=float)
        req = np.where(np.isfinite(thr) & ~(req >= thr), thr, req)
    return req


def check_site(
    layers: Layers,
    rulebook: Rulebook,
    *,
    use: str,
    lowest_floor_ft: float | None = None,
    bfe_ft: float | None = None,
    enclosed_sqft: float | None = None,
    openings_sqin: float | None = None,
    openings: int | None = None,
    opening_bottom_ft: float | None = None,
    improvement_cost: float | None = None,
    market_value: float | None = None,
    no_rise_evaluation: bool = False,
) -> Result:
    """Check proposed structure footprints against the flood standards (command ``flood-site``).

    Parameters
    ----------
    layers : Layers
        ``footprints`` (required), ``flood_zones``, optional ``bfe_lines``, ``streams`` and a
        pre-construction DEM (``layers.dem``) for the highest adjacent grade.
    rulebook : Rulebook
    use : {"residential", "nonresidential", "manufactured"}
    lowest_floor_ft : float, optional
        Proposed lowest floor (basement included), ft, in the BFE's vertical datum.
    bfe_ft : float, optional
        BFE from other data where the FIRM gives none (FLD-004).
    enclosed_sqft, openings_sqin, openings, opening_bottom_ft : optional
        Enclosed area below the lowest floor and its flood openings (FLD-007).
    improvement_cost, market_value : float, optional
        For the substantial-improvement test (FLD-008).
    no_rise_evaluation : bool
        A no-rise technical evaluation is supplied (FLD-002 becomes ``review``).

    Returns
    -------
    Result
        Findings FLD-001, 002, 003, 004, 006, 007, 008 per footprint and FLD-010 once;
        ``tables["footprints"]`` with the measurements, BFE, highest adjacent grade and the
        required lowest floor.

    Raises
    ------
    InputError
        No footprints layer, an unknown ``use``, or a number that is NaN, infinite, a meaningless
        negative or ``True`` / ``False`` (see :data:`SITE_NUMBER_BOUNDS`).

    Examples
    --------
    >>> from geoconstraints import load_layers, load_rulebook, sample_path
    >>> layers = load_layers(sample_path("vestal_sample.gpkg"), dem=sample_path("dem.tif"))
    >>> res = check_site(layers, load_rulebook("vestal"), use="residential", lowest_floor_ft=850)
    >>> t = res.tables["footprints"].set_index("footprint_id")
    >>> t["required_lowest_floor_ft"].round(1).tolist(), t["worst_status"].tolist()
    ([849.1, 846.4, 854.9], ['review', 'violation', 'violation'])
    """
    refuse_bad_numbers("flood-site", {"lowest_floor_ft": lowest_floor_ft, "bfe_ft": bfe_ft,
                                      "enclosed_sqft": enclosed_sqft, "openings_sqin": openings_sqin,
                                      "openings": openings, "opening_bottom_ft": opening_bottom_ft,
                                      "improvement_cost": improvement_cost, "market_value": market_value},
                       SITE_NUMBER_BOUNDS)
    fps, flood = _site_inputs(layers, rulebook, use)
    m, overlaps = flood_metrics(fps, flood, flood_zone_spec(rulebook, exact=True))
    table, known = _footprint_table(layers, rulebook, fps, m, overlaps["_sfha"])
    opts = {"use": use, "lowest_floor_ft": lowest_floor_ft, "bfe_ft": bfe_ft, "enclosed_sqft": enclosed_sqft,
            "openings_sqin": openings_sqin, "openings": openings, "opening_bottom_ft": opening_bottom_ft,
            "improvement_cost": improvement_cost, "market_value": market_value,
            "no_rise_evaluation": no_rise_evaluation}
    work = _measured(table, "footprint_id", m)
    for c in known.columns:  # what the checks read, not part of the footprints table
        work[c] = known[c].to_numpy()
    ctx = FloodContext("site", layers, work, "footprints", flood is not None, overlaps, opts, no_bfe_zones(rulebook),
                       known_subtypes(rulebook))
    found = run_group(rulebook, "flood", ctx)
    _stated_bfe_shown(table, work, stated_bfe(bfe_ft), str(rulebook["FLD-004"].p("other_data_citation")))
    table["required_lowest_floor_ft"] = _required_floor(found, table["footprint_id"])
    table["worst_status"] = worst_status_of(found, "footprints", table["footprint_id"])
    table["geometry_repaired"] = _repaired_column(table, layers, "footprint_id", "footprints")
    res = make_result("flood-site", rulebook, found, layers, tables={"footprints": table},
                      options={k: v for k, v in opts.items() if v is not None})
    res.notes.append("An interpolated BFE is a screening estimate, not a surveyed BFE; the lowest floor, BFE and "
                     "DEM must share one vertical datum. Footprints are measured exactly: no sliver tolerance or "
                     "minimum overlap applies to proposed development.")
    if flood is not None and (note := subtype_warning(flood, rulebook=rulebook)):
        res.notes.append(note + ".")
    return res


def _stated_bfe_shown(table: gpd.GeoDataFrame, work: gpd.GeoDataFrame, stated: float | None, citation: str) -> None:
    """Show in the footprints ``table`` the BFE the user stated (``--bfe-ft``, other data under ``citation``)
    where the rules used it, after they ran on ``work`` (the BFE they use is not changed); ``stated`` as the
    rules read it (:func:`~geoconstraints.rules.flood.stated_bfe`: a 0 is none).

    Where the FIRM gives no BFE on the footprint (FLD-004: the higher of the stated BFE and the highest
    adjacent grade's requirement), and where part of it in a BFE zone has none (FLD-003,
    :func:`~geoconstraints.rules.flood.bfe_in_use`): ``bfe_ft`` the stated BFE, ``bfe_method``
    :data:`~geoconstraints.rules.flood.STATED_BFE_METHOD`, ``bfe_datum`` empty (the user's, not stated),
    and ``bfe_note`` saying so; or there, the higher BFE the FIRM data gives on part of the footprint,
    used instead, with its method and datum. Where the FIRM gives the BFE on its part in a zone with BFEs
    and part lies in zone A, the FIRM's BFE stays and the note says the stated BFE is FLD-004's for the
    zone A part."""
    if stated is None:
        return
    given = float(stated)
    said = f"the BFE stated by the user ({ft_text(given)} ft, --bfe-ft: other data, {citation})"
    firm = firm_gives_bfe(work["bfe_zone_sqft"].to_numpy(), work["static_bfe_sqft"].to_numpy())
    cols = {c: table[c].to_numpy(dtype=float if c == "bfe_ft" else object).copy()
            for c in ("bfe_ft", "bfe_method", "bfe_datum", "bfe_note")}
    for k in np.flatnonzero(work["sfha_sqft"].to_numpy() > 0):  # a handful of proposed footprints
        row = work.iloc[k]
        note = str(cols["bfe_note"][k])
        if not firm[k]:
            cols["bfe_ft"][k], cols["bfe_method"][k], cols["bfe_datum"][k] = given, STATED_BFE_METHOD, ""
            cols["bfe_note"][k] = f"{note}; {said} is used (FLD-004)"
            continue
        bfe, whence = bfe_in_use(float(row["bfe_ft"]), float(row["bfe_known_ft"]), given)
        if whence == "firm":
            if float(row["no_bfe_sqft"]) > 0:
                cols["bfe_note"][k] = f"{note}; {said} is used for its part in zone {row['no_bfe_zones']} (FLD-004)"
        elif whence == "stated":
            cols["bfe_ft"][k], cols["bfe_method"][k], cols["bfe_datum"][k] = bfe, STATED_BFE_METHOD, ""
            cols["bfe_note"][k] = f"{said[0].upper()}{said[1:]} stands in where the FIRM gives none: {note}"
        elif whence == "firm_known":
            cols["bfe_ft"][k], cols["bfe_method"][k] = bfe, row["bfe_known_method"]
            cols["bfe_datum"][k] = row["bfe_known_datum"]
            cols["bfe_note"][k] = (f"the {ft_text(bfe)} ft the FIRM data gives on part of the footprint, used instead "
                                   f"of the lower BFE stated by the user ({ft_text(given)} ft, --bfe-ft): {note}")
    for c, v in cols.items():
        table[c] = v


def _site_inputs(layers: Layers, rulebook: Rulebook, use: str) -> tuple[gpd.GeoDataFrame, gpd.GeoDataFrame | None]:
    """The footprints and the flood zones of ``flood-site``; an InputError for a bad use or no footprint."""
    rulebook.require_group("flood")
    uses = ("residential", "nonresidential", "manufactured")
    if use not in uses:
        raise InputError(f"use {use!r} is not one of {', '.join(uses)}")
    fps = layers.get_layer("footprints")
    if fps is None:
        raise InputError("flood-site needs a footprint: give the FOOTPRINT file (or --footprints PATH[:LAYER])")
    flood = layers.get_layer("flood_zones")
    if flood is None:
        log.warning("no flood_zones layer: the flood rules are not evaluated")
    elif (note := subtype_warning(flood, rulebook=rulebook)):
        log.warning(note)
    return fps, flood


def _footprint_table(layers: Layers, rulebook: Rulebook, fps: gpd.GeoDataFrame, m: pd.DataFrame,
                     sfha: np.ndarray) -> tuple[gpd.GeoDataFrame, pd.DataFrame]:
    """One row per footprint: the overlay's measurements, its BFE and highest adjacent grade; and the
    ``bfe_known_ft``, ``bfe_known_datum``, ``bfe_known_method``, ``static_bfe_sqft``, ``no_bfe_sqft`` and
    ``no_bfe_zones`` of each (:func:`_site_bfe`), which only the checks read (and :func:`_stated_bfe_shown`)."""
    table = _subject_table(fps, "footprint_id", m, layers, False)
    geoms = np.asarray(fps.geometry.values, dtype=object)
    best = _site_bfe(layers, rulebook, geoms, sfha, m["bfe_zone_sqft"].to_numpy(dtype=float))
    in_sfha = m["sfha_sqft"].to_numpy() > 0
    # where the FIRM gives no BFE on the footprint (FLD-004 applies, reading none), neither does the table
    used = in_sfha & firm_gives_bfe(m["bfe_zone_sqft"].to_numpy(), best["static_bfe_sqft"].to_numpy())
    table["bfe_ft"] = np.where(used, best["bfe_ft"].to_numpy(dtype=float), np.nan)
    table["bfe_method"] = np.where(used, best["bfe_method"].to_numpy(), "none")
    table["bfe_datum"] = np.where(used, best["bfe_datum"].to_numpy(), "")
    note = np.where(used, best["bfe_note"].to_numpy(), "not in the area of special flood hazard").astype(object)
    for k in np.flatnonzero(in_sfha & ~used):  # a handful of proposed footprints
        note[k] = _no_firm_bfe_note(m["flood_zones"].iloc[k], best.iloc[k])
    table["bfe_note"] = note
    known = pd.DataFrame({"bfe_known_ft": np.where(used, best["bfe_known_ft"].to_numpy(dtype=float), np.nan),
                          "bfe_known_datum": np.where(used, best["bfe_known_datum"].to_numpy(), ""),
                          "bfe_known_method": np.where(used, best["bfe_known_method"].to_numpy(), "none"),
                          "static_bfe_sqft": best["static_bfe_sqft"].to_numpy(dtype=float),
                          "no_bfe_sqft": best["no_bfe_sqft"].to_numpy(dtype=float),
                          "no_bfe_zones": best["no_bfe_zones"].to_numpy()})
    hag = np.full(len(geoms), np.nan)
    frac = np.zeros(len(geoms))
    if layers.dem is not None:
        for i, g in enumerate(geoms):  # a handful of proposed footprints
            hag[i], _, frac[i] = highest_adjacent_grade(layers.dem, g, layers.crs)
    table["hag_ft"], table["hag_fraction"] = hag, frac
    table["stream_distance_ft"] = _stream_distance(layers, geoms, rulebook)
    return table, known


def _no_firm_bfe_note(zones: Any, best: pd.Series) -> str:
    """``bfe_note`` of a footprint in the SFHA where the FIRM gives no BFE (FLD-004 applies): saying so,
    and that a BFE found at its sample points (a neighbouring polygon's ``STATIC_BFE`` at a corner that
    touches it, or one read off BFE lines in zone A) is not its BFE and not used.

    Examples
    --------
    >>> print(_no_firm_bfe_note("A", pd.Series({"bfe_known_ft": 101.0, "bfe_method": "static"})))
    no BFE on the FIRM on the footprint (zone A): FLD-004 applies; the 101.0 ft found at its sample points
    (the STATIC_BFE of a neighbouring flood zone polygon it only touches) is not its BFE and is not used
    """
    note = f"no BFE on the FIRM on the footprint (zone {zones}): FLD-004 applies"
    found = float(best["bfe_known_ft"])
    if not np.isfinite(found):
        return note
    whence = {"static": " (the STATIC_BFE of a neighbouring flood zone polygon it only touches)",
              "none": ""}.get(str(best["bfe_method"]), " (read off the BFE lines; the FIRM gives none in this zone)")
    return f"{note}; the {ft_text(found)} ft found at its sample points{whence} is not its BFE and is not used"


# ------------------------------------------------------------------------------------------
# harvest


def _harvest_buffers(layers: Layers, rulebook: Rulebook, plan: list,
                     streams: gpd.GeoDataFrame | None) -> bf.BufferBuild:
    """Buffer strips of HRV-020..022 (only when a rule reads them), with why any kind is missing."""
    if not hv.needs(rulebook, "buffers"):
        return bf.BufferBuild(bf.empty_buffers(layers.crs), possible=bf.empty_buffers(layers.crs))
    settings, absent = hv.buffer_settings(rulebook)
    inputs = {r: layers.get_layer(r) for r in ("roads", "row", "parcels", "zoning", "dwellings")}
    inputs["streams"] = streams if streams is not None and len(streams) else None
    built = bf.build_buffers(inputs, settings, plan=plan, crs=layers.crs)
    missing = {**absent, **built.missing}
    built.missing = {k: missing[k] for k in bf.BUFFER_KINDS if k in missing}
    built.why.update(dict.fromkeys(absent, "rule_absent"))
    return built


def harvest_context(layers: Layers, rulebook: Rulebook) -> hv.HarvestContext:
    """The layers and what the HRV rules of ``rulebook`` read from them: the streams read through the
    rulebook's vocabulary, buffer strips, the terrain of every road, contours. Each is derived only
    when a rule that reads it is in the rulebook."""
    plan = [layers.get_layer(r) for r in PLAN_ROLES]
    streams, kinds = hv.classify_streams(layers.get_layer("streams"), hv.stream_vocabulary(rulebook))
    terrain = {}
    if hv.needs(rulebook, "terrain"):
        terrain = tr.roads_terrain(layers.dem, {r: layers.get_layer(r) for r in hv.ROAD_LAYERS}, layers.crs,
                                   grade=hv.grade_settings(rulebook), water_bars=hv.water_bar_settings(rulebook))
    contours = tr.empty_contours(layers.crs)
    cs = hv.contour_settings(rulebook)
    if cs is not None and hv.needs(rulebook, "contours"):
        contours = tr.plan_contours(layers.dem, bf.plan_extent(plan, cs[1]), cs[0], layers.crs)
    return hv.HarvestContext(layers=layers, buffers=_harvest_buffers(layers, rulebook, plan, streams), terrain=terrain,
                             contours=contours, streams=streams, stream_kinds=kinds,
                             channel=hv.channel_settings(rulebook), town_districts=rulebook.town_districts)


_LANDING_COLUMNS = {"HRV-024": ("in_buffer", "buffer_kinds"), "HRV-025": ("row_distance_ft",),
                    "HRV-027": ("connected", "via")}


def _repaired_column(table: pd.DataFrame, layers: Layers, id_col: str, role: str | pd.Series) -> np.ndarray:
    """The ``geometry_repaired`` column of a per-feature table: whether the feature of each row (its id in
    ``id_col``, of the layer ``role``, or of the layer each row names when ``role`` is a column, as the
    roads table's ``road_layer``) is one whose invalid geometry the loader repaired
    (:func:`~geoconstraints.result.repaired_flags`: one look-up per layer, no loop per feature)."""
    if isinstance(role, str):
        return repaired_flags(table[id_col], layers.repaired_ids(role))
    out = np.zeros(len(table), dtype=bool)
    for r in pd.unique(role):  # the layers a table's rows come from (haul roads, skid trails)
        sel = (role == r).to_numpy()
        out[sel] = repaired_flags(table.loc[sel, id_col], layers.repaired_ids(str(r)))
    return out


def _landing_table(layers: Layers, found: pd.DataFrame) -> pd.DataFrame | None:
    """One row per landing from the per-landing columns of HRV-024, 025 and 027 (None without any)."""
    lg = layers.get_layer("landings")
    if lg is None:
        return None
    ids = pd.Index(lg["feature_id"].astype(str), name="landing_id")
    out = pd.DataFrame(index=ids)
    for rid, cols in _LANDING_COLUMNS.items():
        f = found[(found["rule_id"] == rid) & (found["subject_layer"] == "landings") & (found["subject_id"] != "")]
        for c in cols:  # only the rule that measures a column brings it (None: not known)
            if c in f.columns and len(f):
                out[c] = f.drop_duplicates("subject_id").set_index("subject_id")[c].reindex(ids)
    if out.columns.empty:
        return None
    names = ["landing_id"] + [c for cols in _LANDING_COLUMNS.values() for c in cols]
    table = out.reset_index().reindex(columns=names)
    table["geometry_repaired"] = _repaired_column(table, layers, "landing_id", "landings")
    return table


def check_harvest(layers: Layers, rulebook: Rulebook) -> Result:
    """Validate a timber-harvest site plan against the ``harvest`` rules of ``rulebook``.

    Parameters
    ----------
    layers : Layers
        From :func:`geoconstraints.load_layers`; needs at least one plan layer (``harvest_area``,
        ``landings``, ``haul_roads``, ``skid_trails``: a forester checking haul roads alone needs
        no harvest area). Uses ``streams``, ``roads``, ``row``, ``parcels``, ``zoning``,
        ``dwellings``, ``critical_slopes``, ``stream_corridor``, ``wetlands``, ``ponds``,
        ``easements`` and the DEM when given; a rule whose input is missing reports
        ``not_evaluated`` naming it.
    rulebook : Rulebook
        ``load_rulebook("vestal")`` or a user's rulebook.

    Returns
    -------
    Result
        Findings of every HRV rule; derived layers ``buffer_strips``, ``possible_buffer_strips``
        (the strips of dwellings and parcels of unknown district), ``grade_runs``,
        ``water_bars``, ``contours``; tables ``roads`` (grades of each haul road and skid
        trail) and ``landings`` (buffer, distance to the right-of-way and connection of each
        landing, from the findings of HRV-024, 025 and 027).

    Raises
    ------
    InputError
        No plan layer at all.

    Examples
    --------
    >>> from geoconstraints import load_layers, load_rulebook, sample_path
    >>> res = check_harvest(load_layers(sample_path("vestal_sample.gpkg")), load_rulebook("vestal"))
    >>> round(float(res.tables["landings"].set_index("landing_id").loc["L-3", "row_distance_ft"]), 1)
    95.0
    """
    if all(layers.get_layer(r) is None for r in hv.PLAN_LAYERS):
        raise InputError(hv.NO_PLAN)
    rulebook.require_group("harvest")
    ctx = harvest_context(layers, rulebook)
    found = run_group(rulebook, "harvest", ctx)
    derived = {
        "buffer_strips": ctx.buffers.strips,
        "possible_buffer_strips": ctx.buffers.possible,
        "grade_runs": tr.grade_runs_layer(ctx.terrain, layers.crs),
        "water_bars": tr.water_bars_layer(ctx.terrain, layers.crs),
        "contours": ctx.contours,
    }
    tables: dict[str, pd.DataFrame] = {}
    if hv.needs(rulebook, "terrain"):
        roads = tr.road_table(ctx.terrain)
        roads["geometry_repaired"] = _repaired_column(roads, layers, "road_id", roads["road_layer"])
        tables["roads"] = roads
    landings = _landing_table(layers, found)
    if landings is not None:
        tables["landings"] = landings
    result = make_result("harvest", rulebook, found, layers, derived=derived, tables=tables)
    if layers.dem is None:
        result.notes.append(
            "No DEM given: grades (HRV-010), water bars (HRV-030) and contours (HRV-002 b) are not evaluated."
        )
    for kind, why in ctx.buffers.missing.items():
        result.notes.append(f"{kind.replace('_', ' ')} buffer strips not built: {why}.")
    if warn := ctx.stream_kinds.warning():
        log.warning(warn)
        result.notes.append(warn[0].upper() + warn[1:] + ".")
    for warn in hv.district_warnings(layers, rulebook):  # district values no rule names: how they were read
        # a town's other districts (C-1, R-1) are normal without town_districts: the report's notes say it,
        # the terminal only with -v; with town_districts they are unknown districts, worth a warning
        log.log(logging.WARNING if rulebook.town_districts is not None else logging.INFO, warn)
        result.notes.append(warn + ".")  # "zoning layer: ...", as the input warnings name a layer
    if layers.get_layer("harvest_area") is None:
        result.notes.append("No harvest_area layer: the rules about harvest areas (HRV-001, HRV-020..023) are not "
                            "evaluated.")
    return result


# ------------------------------------------------------------------------------------------------
# entry point

def _derived(ctx: StormwaterContext) -> dict[str, gpd.GeoDataFrame]:
    crs = ctx.crs
    out: dict[str, gpd.GeoDataFrame] = {}
    if ctx.sites:
        out["disturbed_area"] = gpd.GeoDataFrame(
            {"subject_layer": [s.layer for s in ctx.sites], "subject_id": [s.id for s in ctx.sites],
             "acres": [s.acres for s in ctx.sites]}, geometry=[s.geometry for s in ctx.sites], crs=crs)
    if len(ctx.footprints):
        out["harvest_footprints"] = ctx.footprints.copy()
    if ctx.phasing is not None and ctx.phasing.peak_geometry is not None:
        ph = ctx.phasing
        out["peak_disturbance"] = gpd.GeoDataFrame(
            {"acres": [ph.peak_acres], "active_ids": [", ".join(ph.peak_ids)],
             "date_from": [day_text(ph.peak_periods[0][0])], "date_to": [day_text(ph.peak_periods[0][1])]},
            geometry=[ph.peak_geometry], crs=crs)
    traced = [(s, f) for s, f in zip(ctx.sites, ctx.flows) if f is not None and f.path is not None]
    if traced:
        out["flow_paths"] = gpd.GeoDataFrame(
            {"subject_id": [s.id for s, _ in traced], "outcome": [f.outcome for _, f in traced],
             "length_ft": [f.length_ft for _, f in traced]}, geometry=[f.path for _, f in traced], crs=crs)
    return out


def check_stormwater(
    layers: Layers,
    rulebook: Rulebook,
    *,
    rainfall: str | os.PathLike[str] | pd.DataFrame | None = None,
    inspection_log: str | os.PathLike[str] | pd.DataFrame | None = None,
    approved_swppp: bool = False,
    larger_common_plan: bool | float | None = None,
) -> Result:
    """Run the stormwater rules (SWP-001..008) on a disturbance / phasing plan.

    Parameters
    ----------
    layers : Layers
        ``disturbance`` polygons (optional ``start``, ``stabilized``, ``use``); optional
        ``landings`` and ``haul_roads`` (counted as disturbance; optional ``start``,
        ``stabilized``), ``harvest_area``, ``impaired_waters``, and a DEM (``layers.dem``) to trace
        the downslope flow path to an impaired water beyond the screening distance (SWP-002).
    rulebook : Rulebook
        ``vestal``, ``lockport`` or a user's rulebook with the SWP rules.
    rainfall : path or DataFrame, optional
        Daily rainfall (``date``, ``precip_in``) covering the first start to the last stabilisation.
    inspection_log : path or DataFrame, optional
        Inspections made (``date``, optional ``inspector``, ``notes`` and ``qualified``: yes / no,
        whether the inspector is a qualified professional, where the rulebook's SWP-007 requires one,
        ``qualified_inspector_required``), checked against the schedule.
    approved_swppp : bool
        The phasing follows an approved SWPPP: a peak over the limit is ``info``, not a violation.
    larger_common_plan : bool, float or None
        Whether the activity is part of a larger common plan of development or sale (a numpy
        ``np.True_`` / ``np.False_`` is read as ``True`` / ``False``); a number is the plan's aggregate
        disturbed acres (for Lockport's aggregate test). None (not stated): an activity under the
        acreage is ``not_evaluated`` under SWP-001.

    Returns
    -------
    Result
        Findings; tables ``disturbance_timeline`` and ``inspections`` (when dates are complete);
        derived layers ``disturbed_area``, ``harvest_footprints``, ``peak_disturbance``,
        ``flow_paths``.

    Raises
    ------
    InputError
        Unreadable or reversed dates, rainfall with gaps / negative / non-numeric values or not
        covering the schedule, an unreadable inspection log.

    Examples
    --------
    >>> from geoconstraints import load_layers, load_rulebook, sample_path
    >>> layers = load_layers(sample_path("vestal_sample.gpkg"))
    >>> res = check_stormwater(layers, load_rulebook("vestal"), rainfall=sample_path("rainfall.csv"))
    >>> "disturbance_timeline" in res.tables
    True
    """
    if isinstance(larger_common_plan, np.bool_):  # numpy's yes/no is the yes/no (np.False_ is not `False`)
        larger_common_plan = bool(larger_common_plan)
    if not isinstance(larger_common_plan, bool):  # True / False / None, or the plan's aggregate acres
        refuse_bad_numbers("stormwater", {"larger_common_plan": larger_common_plan},
                           {"larger_common_plan": NumberBound(0)})
    d = layers.get_layer("disturbance")
    fp, width = _footprints(layers, rulebook)
    dates = phasing_dates(d) if d is not None else None
    sites = tuple(build_sites(d, fp, road_width_ft=width))
    phasings = tuple(site_phasing(s) for s in sites)
    project = next((p for s, p in zip(sites, phasings) if s.dated), None)
    phasing = project.phasing if project is not None and dates is not None and dates.complete else None
    extra = {k: Path(v) for k, v in (("rainfall", rainfall), ("inspection_log", inspection_log))
             if v is not None and not isinstance(v, pd.DataFrame)}
    stamps = {k: file_stamp(v) for k, v in extra.items()}  # before their bytes are read
    rain = read_rainfall(rainfall) if rainfall is not None else None
    inspected = read_inspection_log(inspection_log) if inspection_log is not None else None
    r7 = rulebook.rules.get("SWP-007")
    schedule = _schedule(r7, phasing, rain, inspected, rainfall) if r7 is not None and phasing is not None else None
    ctx = StormwaterContext(layers=layers, rulebook=rulebook, disturbance=d, footprints=fp, sites=sites, dates=dates,
                            phasing=phasing, rainfall=rain, inspections_log=inspected, schedule=schedule,
                            approved_swppp=bool(approved_swppp), larger_common_plan=larger_common_plan,
                            phasings=phasings, flows=_flows(layers, rulebook, sites), dem_given=layers.dem is not None)
    found = run_group(rulebook, "stormwater", ctx)
    opts = {"approved_swppp": approved_swppp, "larger_common_plan": larger_common_plan,
            "rainfall": "" if rainfall is None else ("DataFrame" if isinstance(rainfall, pd.DataFrame) else rainfall),
            "inspection_log": "" if inspection_log is None else (
                "DataFrame" if isinstance(inspection_log, pd.DataFrame) else inspection_log)}
    return make_result("stormwater", rulebook, found, layers, derived=_derived(ctx),
                       tables=_stormwater_tables(ctx, r7), extra_inputs=extra, extra_stamps=stamps,
                       options={k: v for k, v in opts.items() if v is not None})


def _stormwater_tables(ctx: StormwaterContext, r7: Any) -> dict[str, pd.DataFrame]:
    """``disturbance_timeline`` (the project's), ``harvest_plan_timeline`` and ``inspections``."""
    tables: dict[str, pd.DataFrame] = {}
    if ctx.phasing is not None:
        tables["disturbance_timeline"] = ctx.phasing.timeline
    for s, p in zip(ctx.sites, ctx.phasings):
        if not s.dated and p.phasing is not None:
            tables["harvest_plan_timeline"] = p.phasing.timeline
    if r7 is not None and ctx.schedule is not None:
        table = ctx.schedule.copy()
        table.insert(2, "required", swp007_applies(ctx, r7, ctx.project)[0])
        tables["inspections"] = table
    return tables


def _flows(layers: Layers, rulebook: Rulebook, sites: tuple[Site, ...]) -> tuple[FlowTrace | None, ...]:
    """The downslope flow path from each site beyond SWP-002's screening distance (None elsewhere:
    :func:`~geoconstraints.rules.stormwater.site_flow`)."""
    r2 = rulebook.rules.get("SWP-002")
    return tuple(None if r2 is None else site_flow(layers, r2, s) for s in sites)


def _footprints(layers: Layers, rulebook: Rulebook) -> tuple[gpd.GeoDataFrame, float]:
    """Landing and haul-road footprints counted as disturbance (sizes from SWP-006), and the road width."""
    sw6 = rulebook.rules.get("SWP-006")
    landings, roads = layers.get_layer("landings"), layers.get_layer("haul_roads")
    if (landings is not None or roads is not None) and sw6 is None:
        raise RulebookError(f"rulebook {rulebook.name!r} has no SWP-006, which sets haul_road_width_ft and "
                            f"default_landing_area_sqft (and max_point_landing_area_sqft) for counting landings and "
                            f"haul roads")
    width = sw6.t("haul_road_width_ft") if sw6 is not None and roads is not None else 0.0
    area = sw6.t("default_landing_area_sqft") if sw6 is not None and landings is not None else 0.0
    return harvest_footprints(landings, roads, haul_road_width_ft=width, default_landing_area_sqft=area), width


def _schedule(r7: Any, ph: Any, rain: pd.DataFrame | None, inspected: pd.DataFrame | None,
              rainfall_src: Any) -> pd.DataFrame:
    """The inspections SWP-007 requires over the phasing period: without a log, the latest days the
    interval inspections may fall on; with one, its gaps (no more than the interval between
    consecutive inspections); storm inspections matched to the log. Where the rule requires a
    qualified professional (``qualified_inspector_required``), an inspection the log states was not
    made by one is not counted (SWP-007 lists it)."""
    events = None
    if rain is not None:
        check_rainfall_coverage(rain, ph.start, ph.end, rainfall_src)
        if r7.s("storm_event") == "consecutive_wet_days":
            check_rainfall_first_run(rain, ph.start, ph.end, rainfall_src, storm_threshold_in=r7.t("storm_threshold_in"),
                                     wet_day_min_in=r7.t("wet_day_min_in"))
        events = storm_events(rain, storm_threshold_in=r7.t("storm_threshold_in"), storm_event=r7.s("storm_event"),
                              wet_day_min_in=r7.t("wet_day_min_in"))
    sch = inspection_schedule(ph.start, ph.end, events, inspection_interval_days=r7.t("inspection_interval_days"),
                              inspection_within_hours=r7.t("inspection_within_hours"))
    if inspected is None:
        return match_inspections(sch, None)
    if r7.p("qualified_inspector_required", False) is True:
        inspected = inspected[qualifications(inspected) != QUALIFIED_NO]
    storms = match_inspections(sch[sch["reason"] == "storm"], inspected)
    gaps = inspection_gaps(ph.start, ph.end, inspected, inspection_interval_days=r7.t("inspection_interval_days"))
    out = pd.concat([f for f in (gaps, storms) if len(f)] or [gaps], ignore_index=True)
    return out.sort_values(["due", "reason"], kind="stable", ignore_index=True)


def classify_action(
    rulebook: Rulebook,
    *,
    action_type: str,
    units: int | None = None,
    lots: int | None = None,
    expansion_pct: float | None = None,
    acres: float | None = None,
    district: str | None = None,
    board_approval: bool | None = None,
    affects: Iterable[str] = (),
    lanes: int | None = None,
    no_effect_on: Iterable[str] = (),
    eis_completed: bool | None = None,
    type_i: bool | None = None,
    chapter_24: bool | None = None,
    board_resolved_significant: bool | None = None,
) -> Result:
    """Classify an action under SEQR (SQR-001). Nothing the user has not stated is assumed.

    Parameters
    ----------
    rulebook : Rulebook
        A rulebook with SQR-001 (``vestal``).
    action_type : str
        A key of :func:`action_types` (``multiple_residence``, ``small_subdivision``, ``type_i``...).
    units, lots, expansion_pct, acres : optional
        Dwelling units; houses of a subdivision; expansion over the original size (%); added
        right-of-way acres per mile (highway reconstruction) or parcel acres (surplus sale). Each
        0 or more; ``units`` and ``lots`` are counts, whole (``30.0`` is 30; ``29.5`` is refused).
    district : str, optional
        Zoning district (C-1, C-2, CD ...).
    board_approval : bool, optional
        Whether town board or zoning board of appeals approval is needed.
    affects, no_effect_on : iterable of str
        Resources stated significantly affected, and stated not significantly affected (wetlands,
        parklands, floodplains, historic; ``all`` in ``no_effect_on`` for every one the rulebook
        names). A list item bounded by "no significant effect" needs each of its resources stated.
    lanes : int, optional
        Travel lanes added (highway repaving: none; highway reconstruction: at most one); a count, whole.
    eis_completed, type_i, chapter_24, board_resolved_significant : bool, optional
        Statements a list item may require (its ``requires:`` in the rulebook); None: not stated.
        ``eis_completed``: an EIS has been completed (C-1/C-2/CD construction, § 6-28(b)(3)).
        ``type_i``: the action falls within a Type I designation (6 NYCRR 617.2); each item that
        excepts Type I actions needs ``False``: C-1/C-2/CD construction (§ 6-28(b)(3)), budget and
        other town actions (§ 6-28(b)(19)) and actions of the town (exempt, § 6-22(8), as Type I
        actions "shall always require environmental assessment", § 6-28(a)). ``chapter_24``: the
        subdivision's houses are developed in accordance with chapter 24 (§ 6-28(b)(1)).
        ``board_resolved_significant``: the town board has determined by resolution that the
        activity may have a significant impact on the environment (budget and other town actions,
        § 6-28(b)(19), need ``False``; ``True`` makes them ``review``).

    Returns
    -------
    Result
        One SQR-001 finding: ``pass`` (exempt / Type II), ``review`` (determination of significance
        needed), or ``not_evaluated`` (a bound's value or a statement missing). No layers.

    Raises
    ------
    InputError
        Unknown action type (the message lists the known ones), a size that is negative, NaN,
        infinite or ``True`` / ``False``, a fraction of a count (``units``, ``lots``, ``lanes``:
        :data:`SEQR_NUMBER_BOUNDS`), unknown resources, a resource stated both affected and not affected.

    Examples
    --------
    >>> from geoconstraints import load_rulebook
    >>> rb = load_rulebook("vestal")
    >>> classify_action(rb, action_type="multiple_residence", units=29).findings["status"][0]
    'pass'
    >>> classify_action(rb, action_type="multiple_residence", units=30).findings["status"][0]
    'review'
    >>> classify_action(rb, action_type="commercial_zone_construction", district="C-1",
    ...                 board_approval=False).findings["status"][0]
    'not_evaluated'
    >>> classify_action(rb, action_type="budget_and_town_actions", type_i=False,
    ...                 board_resolved_significant=False).findings["status"][0]
    'pass'
    """
    rule = rulebook[RULE_ID]
    refuse_bad_numbers("seqr", {"units": units, "lots": lots, "expansion_pct": expansion_pct, "acres": acres,
                                "lanes": lanes}, SEQR_NUMBER_BOUNDS)
    said = tuple(norm_key(a) for a in no_effect_on)
    action = Action(action_type=action_type, units=units, lots=lots, expansion_pct=expansion_pct, acres=acres,
                    district=district, board_approval=board_approval,
                    affects=tuple(norm_key(a) for a in affects), lanes=lanes,
                    no_effect_on=tuple(resources(rule)) if "all" in said else said,
                    eis_completed=eis_completed, type_i=type_i, chapter_24=chapter_24,
                    board_resolved_significant=board_resolved_significant)
    validate_action(rule, action)
    found = run_group(rulebook, "seqr", action.in_town(rulebook.town_districts))
    opts = {k: (", ".join(v) if isinstance(v, tuple) else v) for k, v in vars(action).items()}
    return make_result("seqr", rulebook, found, None, options={k: v for k, v in opts.items() if v not in (None, "")})
