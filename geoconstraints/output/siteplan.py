"""The timber-harvest site plan as a true-scale, georeferenced vector PDF (Vestal § 44-VI-6(E)(4)).

:func:`render_siteplan` draws a :class:`~geoconstraints.result.Result` of
:func:`~geoconstraints.commands.check_harvest` at ``1 in = SCALE ft`` on letter, tabloid or
ARCH D paper: the elements a-k of the law, 10-ft contours (the interval of HRV-002) with
labelled index contours, feature ids, the findings marked with their rule ids, a title block,
legend, north arrow and scale bar. A plan larger than one sheet is tiled over several sheets
(overlapping by :data:`OVERLAP_IN` of paper) after a key map sheet.

Every page is an ISO 32000 geospatial PDF page: its ``/VP`` viewport covers the map frame
exactly, with a ``/Measure`` dictionary (``/Subtype /GEO``) whose ``/GCS`` is the working CRS
(EPSG code and WKT) and whose ``/GPTS`` are the frame corners in latitude/longitude of that
CRS's datum, so GDAL, QGIS and Avenza Maps place the sheet on the ground.

Rendering only: the findings, the derived layers and the thresholds come from the Result and
its rulebook (the scale limit and contour interval from HRV-002, the districts from HRV-003).
"""

from __future__ import annotations

import datetime as dt
import functools
import io
import logging
import math
import os
import textwrap
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import geopandas as gpd
import matplotlib
import numpy as np
import pandas as pd
import pyproj
import shapely
from matplotlib import patheffects
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure
from matplotlib.patches import PathPatch, Rectangle
from matplotlib.path import Path as MplPath

from geoconstraints._version import __version__
from geoconstraints.errors import InputError, OutputError, RulebookError
from geoconstraints.geometry import terrain
from geoconstraints.geometry.buffers import norm_district, unknown_district
from geoconstraints.output import files, styles
from geoconstraints.result import Result
from geoconstraints.rulebook.findings import STATUS_RANK
from geoconstraints.rules.harvest import (
    DERIVED_ELEMENT_KEYS,
    classify_streams,
    district_source,
    site_plan_inputs,
    stream_vocabulary,
)
from geoconstraints.text import visible_text
from geoconstraints.units import ft_per_unit

if TYPE_CHECKING:
    from pypdf.generic import DictionaryObject, NameObject

log = logging.getLogger(__name__)

PAPERS: dict[str, tuple[float, float]] = {"letter": (8.5, 11.0), "tabloid": (11.0, 17.0), "arch-d": (24.0, 36.0)}
"""Paper sizes, portrait width x height in inches (ARCH D is 24 x 36 in)."""

ORIENTATIONS: tuple[str, ...] = ("auto", "portrait", "landscape")
"""``auto`` takes the orientation that needs fewer sheets (portrait on a tie)."""

MARGIN_IN = 0.4
"""Blank paper margin around the sheet (printers cannot print to the edge)."""

PANEL_IN = 3.0
"""Depth of the title-block strip: at the bottom of a portrait sheet, at the right of a landscape one."""

GAP_IN = 0.15
"""Space between the map frame and the title-block strip."""

COLUMN_IN = 2.45
"""Width of one column of the title-block strip."""

OVERLAP_IN = 0.5
"""Overlap of neighbouring sheets, paper inches (250 ft at 1 in = 500 ft); stated on every sheet."""

PAD_IN = 0.25
"""Paper around the plan's features on the sheets (inches)."""

MAX_SHEETS = 100
"""Most map sheets a site plan is drawn on (about a minute of drawing; the sample plan needs 72 at
1 in = 50 ft on letter). A ``--scale`` needing more is refused with the smallest usable scale, so
the lower bound of the scale follows from the plan's extent, the paper and this number."""

INDEX_EVERY = 5
"""Every 5th contour is an index contour: heavier and labelled with its elevation."""

PANEL_FONT = 6.5
"""Font size (pt) of the title block and legend; map labels are at least :data:`LABEL_FONT`."""

LABEL_FONT = 7.0
"""Font size (pt) of feature and finding labels on the map."""

MARKED_STATUSES: tuple[str, ...] = ("violation", "review", "not_evaluated")
"""Findings of these statuses are marked on the map with their rule ids (pass/info are not)."""

SITEPLAN_NAME = "siteplan.pdf"
"""File name of the site plan in the output folder."""

_CHAR_W = 0.56
"""Mean advance of a DejaVu Sans character, in ems (to size labels before drawing)."""


# ------------------------------------------------------------------------------------------
# layout

@dataclass(frozen=True)
class PageLayout:
    """Where the map frame and the title-block strip sit on the page (inches from the lower left).

    Attributes
    ----------
    paper : str
        A key of :data:`PAPERS`.
    orientation : str
        ``portrait`` or ``landscape``.
    page : (float, float)
        Page width and height.
    frame : (float, float, float, float)
        Map frame x, y, width, height.
    panel : (float, float, float, float)
        Title-block strip x, y, width, height.
    """

    paper: str
    orientation: str
    page: tuple[float, float]
    frame: tuple[float, float, float, float]
    panel: tuple[float, float, float, float]

    @property
    def page_points(self) -> tuple[float, float]:
        """Page size in PDF points (1/72 in)."""
        return self.page[0] * 72.0, self.page[1] * 72.0


def page_layout(paper: str, orientation: str) -> PageLayout:
    """The :class:`PageLayout` of ``paper`` in ``orientation`` (``portrait`` or ``landscape``).

    Examples
    --------
    >>> page_layout("letter", "portrait").page_points
    (612.0, 792.0)
    >>> page_layout("letter", "portrait").frame
    (0.4, 3.55, 7.7, 7.05)
    """
    if paper not in PAPERS:
        raise InputError(f"--paper {paper!r} is not one of {', '.join(PAPERS)}")
    if orientation not in ("portrait", "landscape"):
        raise InputError(f"--orientation {orientation!r} is not one of {', '.join(ORIENTATIONS)}")
    w, h = PAPERS[paper]
    if orientation == "landscape":
        w, h = h, w
    m = MARGIN_IN
    if orientation == "portrait":
        panel = (m, m, w - 2 * m, PANEL_IN)
        frame = (m, m + PANEL_IN + GAP_IN, w - 2 * m, h - 2 * m - PANEL_IN - GAP_IN)
    else:
        panel = (w - m - PANEL_IN, m, PANEL_IN, h - 2 * m)
        frame = (m, m, w - 2 * m - PANEL_IN - GAP_IN, h - 2 * m)
    r = lambda t: tuple(round(v, 6) for v in t)
    return PageLayout(paper, orientation, (w, h), r(frame), r(panel))


@dataclass(frozen=True)
class Sheet:
    """One page of the site plan.

    Attributes
    ----------
    number : int
        Page number, 1-based.
    box : (float, float, float, float)
        Ground extent of the map frame (xmin, ymin, xmax, ymax) in the working CRS.
    scale_ft_per_in : float
        Feet of ground per inch of paper on this sheet.
    key_map : bool
        The key map (index of the sheets), not at the filing scale.
    row, col : int
        Position in the grid of map sheets (0, 0 top left); -1 for the key map.
    """

    number: int
    box: tuple[float, float, float, float]
    scale_ft_per_in: float
    key_map: bool = False
    row: int = -1
    col: int = -1


def grid_count(span: float, frame: float, overlap: float) -> int:
    """Sheets needed along one axis to cover ``span`` with frames overlapping by ``overlap``.

    Examples
    --------
    >>> grid_count(3000.0, 3500.0, 250.0), grid_count(3600.0, 3500.0, 250.0)
    (1, 2)
    """
    if span <= frame:
        return 1
    return math.ceil((span - overlap) / (frame - overlap) - 1e-9)


def tile_sheets(extent: tuple[float, float, float, float], frame_units: tuple[float, float],
                overlap_units: float) -> list[tuple[int, int, tuple[float, float, float, float]]]:
    """Cover ``extent`` with a grid of frames centred on it; (row, col, box) in reading order.

    Parameters
    ----------
    extent : (xmin, ymin, xmax, ymax)
        Ground area to cover, CRS units.
    frame_units : (width, height)
        Ground size of one map frame, CRS units.
    overlap_units : float
        Overlap of neighbouring frames, CRS units.

    Returns
    -------
    list of (row, col, box)
        Row 0 is the northernmost; boxes are (xmin, ymin, xmax, ymax).
    """
    x0, y0, x1, y1 = extent
    fw, fh = frame_units
    nx = grid_count(x1 - x0, fw, overlap_units)
    ny = grid_count(y1 - y0, fh, overlap_units)
    cover_w = nx * fw - (nx - 1) * overlap_units
    cover_h = ny * fh - (ny - 1) * overlap_units
    left = (x0 + x1) / 2 - cover_w / 2
    top = (y0 + y1) / 2 + cover_h / 2
    out = []
    for r in range(ny):
        for c in range(nx):
            bx = left + c * (fw - overlap_units)
            by = top - r * (fh - overlap_units)
            out.append((r, c, (bx, by - fh, bx + fw, by)))
    return out


def nice_scale(min_ft_per_in: float) -> float:
    """The smallest round scale (1, 2, 2.5 or 5 x 10^k ft per inch) at least ``min_ft_per_in``.

    Examples
    --------
    >>> nice_scale(1730.0), nice_scale(500.0), nice_scale(2600.0)
    (2000.0, 500.0, 5000.0)
    """
    k = 10.0 ** math.floor(math.log10(min_ft_per_in))
    for m in (1.0, 2.0, 2.5, 5.0, 10.0):
        if m * k >= min_ft_per_in * (1 - 1e-12):
            return m * k
    return 10.0 * k  # pragma: no cover - the loop ends at 10 k


def round_length_ft(max_ft: float) -> float:
    """The longest round length (1, 2 or 5 x 10^k ft) not over ``max_ft`` (scale-bar length).

    Examples
    --------
    >>> round_length_ft(1250.0), round_length_ft(999.0)
    (1000.0, 500.0)
    """
    k = 10.0 ** math.floor(math.log10(max_ft))
    return max(m * k for m in (1.0, 2.0, 5.0) if m * k <= max_ft * (1 + 1e-12))


def num_text(v: float) -> str:
    """A number as printed on the plan: ``500``, ``2,000``, ``250.5``.

    Examples
    --------
    >>> num_text(500.0), num_text(2000.0), num_text(62.5)
    ('500', '2,000', '62.5')
    """
    return f"{v:,.0f}" if float(v).is_integer() else f"{v:,.6g}"


# ------------------------------------------------------------------------------------------
# the scale and the rule's numbers

def site_plan_rule(rulebook: Any) -> Any:
    """Rule HRV-002 of ``rulebook`` (the site plan's scale limit and contour interval)."""
    rule = rulebook.rules.get("HRV-002")
    if rule is None:
        raise RulebookError(f"rulebook {rulebook.name!r} has no rule HRV-002, which sets the site plan's "
                            f"minimum scale (min_scale_ft_per_in) and contour interval (contour_interval_ft)")
    return rule


def check_scale(scale_ft_per_in: Any, rule: Any) -> float:
    """Refuse a scale smaller than the law's minimum (HRV-002 ``min_scale_ft_per_in``), NaN, inf or <= 0.

    Parameters
    ----------
    scale_ft_per_in : float
        Feet of ground per inch of paper (``--scale``).
    rule : Rule
        HRV-002 of the rulebook.

    Returns
    -------
    float
        The scale.

    Raises
    ------
    InputError
        One line naming ``--scale``, the law's minimum and its citation.
    """
    limit = rule.t("min_scale_ft_per_in")
    try:
        s = float(scale_ft_per_in)
    except (TypeError, ValueError):
        raise InputError(f"--scale {scale_ft_per_in!r} is not a number of feet per inch") from None
    if not math.isfinite(s) or s <= 0:
        raise InputError(f"--scale {scale_ft_per_in!r}: give a positive, finite number of feet per inch "
                         f"(1 in = SCALE ft), at most {num_text(limit)}")
    if s > limit:
        raise InputError(f"--scale {num_text(s)}: 1 in = {num_text(s)} ft is smaller than the law's minimum "
                         f"scale of 1 in = {num_text(limit)} ft ({rule.id}, {rule.citation}); give --scale "
                         f"{num_text(limit)} or less")
    return s


# ------------------------------------------------------------------------------------------
# what is drawn: the plan's layers, clipped to its extent

@dataclass(frozen=True)
class Element:
    """One element a-k of § 44-VI-6(E)(4) and the layers that show it on the plan."""

    key: str
    label: str
    layers: tuple[str, ...]
    optional: tuple[str, ...] = ()


@dataclass
class PlanData:
    """The plan prepared for drawing, in the working CRS (see :func:`prepare_plan`).

    Attributes
    ----------
    frames : dict[str, GeoDataFrame]
        Layer name -> features within the extent (inputs, derived layers, ``contours``,
        ``zoning_near``: the districts of HRV-003 within the search distance of the harvest area;
        ``zoning_unknown``: zoning there of unknown district, as the checks read it).
    findings : GeoDataFrame
        Findings marked on the map (statuses :data:`MARKED_STATUSES`, with a place).
    extent : (xmin, ymin, xmax, ymax)
        Ground area the sheets cover.
    parcel_ids : list of str
        Parcels the harvest area overlaps.
    elements : list of (Element, shown layers, missing layers)
    town_districts : tuple of str or None
        The rulebook's ``town_districts``: with it a zoning value naming none of the town's
        districts is an unknown district, on the plan as in the checks.
    zoning_source : str or None
        Where the checks read districts (:func:`~geoconstraints.rules.harvest.district_source`:
        ``'zoning layer'``, ``'parcels.zoning field'`` or None), chosen over the whole inputs as HRV-003
        chose it; the plan draws ``zoning_near`` / ``zoning_unknown`` from it alone.
    """

    result: Result
    crs: pyproj.CRS
    ft_per_unit: float
    frames: dict[str, gpd.GeoDataFrame]
    findings: gpd.GeoDataFrame
    extent: tuple[float, float, float, float]
    parcel_ids: list[str]
    contour_interval_ft: float | None
    districts: list[str]
    search_ft: float
    elements: list[tuple[Element, list[str], list[str]]] = field(default_factory=list)
    sources: dict[str, gpd.GeoDataFrame] = field(default_factory=dict)
    ring: Any = None
    town_districts: tuple[str, ...] | None = None
    zoning_source: str | None = None


def elements_of(rule: Any, districts: list[str], search_ft: float, interval_ft: float) -> list[Element]:
    """The elements a-k with the layers that show each (labels from the rulebook's numbers)."""
    where = "/".join(districts) or "listed"
    return [
        Element("a", "parcel boundaries, harvest area", ("parcels", "harvest_area")),
        Element("b", f"contours, {num_text(interval_ft)} ft (DEM)", ("contours",)),
        Element("c", f"{where} property within {num_text(search_ft)} ft", ("zoning",)),
        Element("d", "landings", ("landings",)),
        Element("e", "haul roads to the public road", ("haul_roads", "roads")),
        Element("f", "utility easements, rights-of-way", ("easements",)),
        Element("g", "major skid trails", ("skid_trails",)),
        Element("h", "streams, ponds, swamps, wetlands", ("streams", "ponds", "wetlands"), ("swamps",)),
        Element("i", "critical slopes", ("critical_slopes",)),
        Element("j", "buffer strips", ("buffer_strips",)),
        Element("k", "slopes in the stream corridors", ("stream_corridor",)),
    ]


def _working(g: Any, crs: pyproj.CRS) -> gpd.GeoDataFrame | None:
    if g is None or not isinstance(g, gpd.GeoDataFrame) or not len(g):
        return None
    g = g[g.geometry.notna() & ~g.geometry.is_empty]
    if not len(g):
        return None
    if g.crs is not None and not pyproj.CRS(g.crs).equals(crs):
        g = g.to_crs(crs)
    return g


def touched_parcels(parcels: gpd.GeoDataFrame | None, harvest: gpd.GeoDataFrame) -> gpd.GeoDataFrame | None:
    """Parcels whose interior the harvest area overlaps (a shared edge alone does not count)."""
    if parcels is None:
        return None
    ha = shapely.union_all(harvest.geometry.values)
    idx = parcels.sindex.query(ha, predicate="intersects")
    cand = parcels.iloc[np.sort(idx)]
    keep = ~shapely.touches(cand.geometry.values, ha)
    return cand[keep]


def plan_extent(frames: Iterable[gpd.GeoDataFrame | None], pad: float) -> tuple[float, float, float, float]:
    """Bounds of ``frames`` grown by ``pad`` (CRS units)."""
    boxes = np.array([f.total_bounds for f in frames if f is not None and len(f)])
    x0, y0 = boxes[:, 0].min() - pad, boxes[:, 1].min() - pad
    x1, y1 = boxes[:, 2].max() + pad, boxes[:, 3].max() + pad
    return float(x0), float(y0), float(x1), float(y1)


def _clip_frame(g: gpd.GeoDataFrame | None, box: tuple[float, float, float, float]) -> gpd.GeoDataFrame | None:
    if g is None:
        return None
    sub = g.iloc[np.sort(g.sindex.query(shapely.box(*box), predicate="intersects"))]
    return sub if len(sub) else None


def _contours(result: Result, rule: Any, extent: tuple[float, float, float, float],
              crs: pyproj.CRS) -> tuple[gpd.GeoDataFrame | None, float | None]:
    """Contours of the DEM over ``extent`` at HRV-002's interval, with an ``index`` flag."""
    dem = result.layers.dem if result.layers is not None else None
    interval = rule.t("contour_interval_ft")
    if dem is None:
        return None, interval
    area = gpd.GeoSeries([shapely.box(*extent)], crs=crs)
    in_dem = area.to_crs(dem.crs)
    if not in_dem.intersects(dem.bounds_polygon()).iloc[0]:
        return None, interval
    lines = terrain.contours(dem, interval, bounds=tuple(in_dem.total_bounds), crs=crs)
    if not len(lines):
        return None, interval
    elev = lines["elev_ft"].to_numpy(dtype=float)
    step = interval * INDEX_EVERY
    index = np.isclose(np.mod(elev + step / 2, step) - step / 2, 0.0, atol=1e-6)
    return gpd.GeoDataFrame({"elev_ft": elev, "index": index}, geometry=lines.geometry.values, crs=crs), interval


_SOURCE_FIELD = {"zoning layer": ("zoning", "district"), "parcels.zoning field": ("parcels", "zoning")}
"""Frame and field of each district source of :func:`~geoconstraints.rules.harvest.district_source`."""


def _read_districts(frames: dict[str, gpd.GeoDataFrame], districts: list[str],
                    town_districts: Iterable[str] | None,
                    source: str | None) -> tuple[gpd.GeoDataFrame, pd.Series, pd.Series] | None:
    """(features, district as the checks read it, value as written) of the ``source`` the checks chose
    (:attr:`PlanData.zoning_source`: the zoning layer's ``district`` or the parcels' ``zoning`` field),
    None when it has no feature in ``frames`` or there is none. Never the other one: a zoning layer with
    no polygon on the sheets leaves the parcels' field undrawn, as HRV-003 did not read it."""
    name, col = _SOURCE_FIELD.get(source or "", (None, None))
    src = frames.get(name) if name is not None else None
    if src is None or col not in src.columns:
        return None
    # RA1, ra 1 ... are the rulebook's RA-1, and with town_districts RA-l is unknown, as the checks read them
    return src, norm_district(src[col], districts, town_districts), src[col]


def _within(src: gpd.GeoDataFrame, hit: np.ndarray, labels: np.ndarray, ring: Any) -> gpd.GeoDataFrame | None:
    """The parts within ``ring`` of the features ``hit`` of ``src``, each with its ``district`` label."""
    if not hit.any():
        return None
    part = shapely.intersection(src.geometry.values[hit], ring)
    keep = ~shapely.is_empty(part)
    if not keep.any():
        return None
    return gpd.GeoDataFrame({"district": labels[hit][keep]}, geometry=part[keep], crs=src.crs)


def _near_districts(frames: dict[str, gpd.GeoDataFrame], districts: list[str], ring: Any,
                    town_districts: Iterable[str] | None = None, *, source: str | None) -> gpd.GeoDataFrame | None:
    """Zoning of ``districts`` within ``ring`` (from the checks' ``source``: zoning layer or parcels'
    ``zoning`` field), read as the checks read it (:func:`_read_districts`)."""
    read = _read_districts(frames, districts, town_districts, source)
    if read is None:
        return None
    src, d, _ = read
    return _within(src, d.isin([str(x).strip().upper() for x in districts]).to_numpy(), d.to_numpy(), ring)


def _unknown_near(frames: dict[str, gpd.GeoDataFrame], districts: list[str], ring: Any,
                  town_districts: Iterable[str] | None = None, *, source: str | None) -> gpd.GeoDataFrame | None:
    """Zoning within ``ring`` (from the checks' ``source``) whose district is unknown as the checks read
    it (blank, not text, or with ``town_districts`` naming none of the town's districts), labelled as the
    checks name it (``district unknown ("RA-l")``): HRV-003 does not pass near it, and the plan shows it.

    Examples
    --------
    >>> z = {"zoning": gpd.GeoDataFrame({"district": ["RA-l", "C-1", None]},
    ...                                  geometry=[shapely.box(i, 0, i + 1, 1) for i in range(3)])}
    >>> ring, zl = shapely.box(0, 0, 3, 1), "zoning layer"
    >>> _unknown_near(z, ["RA-1"], ring, ["RA-1", "C-1"], source=zl)["district"].tolist()
    ['district unknown ("RA-l")', 'district unknown']
    >>> _unknown_near(z, ["RA-1"], ring, source=zl)["district"].tolist()  # without: RA-l is a district
    ['district unknown']
    >>> _unknown_near(z, ["RA-1"], ring, source="parcels.zoning field") is None  # not the checks' source
    True
    """
    read = _read_districts(frames, districts, town_districts, source)
    if read is None:
        return None
    src, d, raw = read
    labels = np.array([unknown_district(v) for v in raw], dtype=object)
    return _within(src, d.isna().to_numpy(), labels, ring)


_DRAWN = ("parcels", "zoning", "stream_corridor", "critical_slopes", "buffer_strips", "wetlands", "ponds",
          "row", "roads", "streams", "easements", "harvest_area", "skid_trails", "haul_roads",
          "landings", "water_bars", "dwellings")
"""Layers of the plan drawn on the sheets (inputs by role, derived layers by name), bottom first."""


def prepare_plan(result: Result, scale_ft_per_in: float) -> PlanData:
    """Select and reproject what the sheets show and compute the plan's extent.

    The extent covers the harvest area, landings, haul roads, skid trails, the parcels the
    harvest area overlaps (element a) and the harvest area grown by HRV-002's
    ``zoning_search_distance_ft`` (element c), plus :data:`PAD_IN` of paper. Call
    :func:`load_frames` with the area the sheets cover before drawing.

    Parameters
    ----------
    result : Result
        Of :func:`~geoconstraints.commands.check_harvest` (with its layers).
    scale_ft_per_in : float
        The sheets' scale.

    Returns
    -------
    PlanData
    """
    layers = result.layers
    if layers is None or layers.get_layer("harvest_area") is None:
        raise OutputError("the site plan needs the Result of a harvest check with its harvest_area layer")
    crs = pyproj.CRS(result.crs)
    k = ft_per_unit(crs)
    if k is None:
        raise OutputError(f"working CRS {crs.name} is geographic: the site plan is drawn to scale in feet")
    rule = site_plan_rule(result.rulebook)
    search_ft = rule.t("zoning_search_distance_ft")
    r3 = result.rulebook.rules.get("HRV-003")
    districts = [str(d) for d in (r3.p("districts", []) if r3 is not None else [])]
    sources: dict[str, gpd.GeoDataFrame | None] = {n: _working(layers.get_layer(n), crs) for n in _DRAWN}
    for name in ("buffer_strips", "water_bars"):
        sources[name] = _working(result.derived.get(name), crs)
    # streams read as the rules read them: the rulebook's vocabulary (NHD FCODE, OSM tags...) gives
    # each its kind, and what it maps to not_stream is not drawn as a stream
    sources["streams"], _ = classify_streams(sources["streams"], stream_vocabulary(result.rulebook))
    harvest = sources["harvest_area"]
    if harvest is None:  # the layer is there (checked above), but holds no feature with a shape
        raise OutputError("the site plan needs a harvest_area layer with at least one polygon drawn: every feature "
                          "of it has an empty or missing geometry")
    touched = touched_parcels(sources["parcels"], harvest)
    ring = shapely.buffer(shapely.union_all(harvest.geometry.values), search_ft / k)
    plan = [sources.get(n) for n in ("harvest_area", "landings", "haul_roads", "skid_trails")]
    extent = plan_extent(plan + [touched, gpd.GeoDataFrame(geometry=[ring], crs=crs)], PAD_IN * scale_ft_per_in / k)
    return PlanData(result, crs, k, {}, marked_findings(result.findings, crs), extent,
                    sorted(touched["feature_id"].astype(str)) if touched is not None else [],
                    rule.t("contour_interval_ft"), districts, search_ft,
                    sources={n: g for n, g in sources.items() if g is not None}, ring=ring,
                    town_districts=result.rulebook.town_districts, zoning_source=district_source(layers))


def load_frames(plan: PlanData, cover: tuple[float, float, float, float]) -> None:
    """Fill ``plan.frames`` with the features, contours and districts within ``cover``; list the elements."""
    rule = site_plan_rule(plan.result.rulebook)
    frames = {n: c for n, g in plan.sources.items() if (c := _clip_frame(g, cover)) is not None}
    contours, _ = _contours(plan.result, rule, cover, plan.crs)
    if contours is not None:
        frames["contours"] = contours
    if plan.districts:  # read as HRV-003 reads them: from its source, with the rulebook's town_districts
        how = (plan.districts, plan.ring, plan.town_districts)
        for name, near in (("zoning_near", _near_districts(frames, *how, source=plan.zoning_source)),
                           ("zoning_unknown", _unknown_near(frames, *how, source=plan.zoning_source))):
            if near is not None:
                frames[name] = near
    frames["search_ring"] = gpd.GeoDataFrame(geometry=[shapely.boundary(plan.ring)], crs=plan.crs)
    plan.frames = frames
    plan.elements = element_status(plan, rule)


def element_status(plan: PlanData, rule: Any) -> list[tuple[Element, list[str], list[str]]]:
    """For each element a-k: the layers drawn for it and the inputs (roles) that do not supply it.

    The missing inputs are HRV-002's (:func:`~geoconstraints.rules.harvest.site_plan_inputs`, the
    same function its check reads); an element whose supply HRV-002 also judges from derived data
    (:data:`~geoconstraints.rules.harvest.DERIVED_ELEMENT_KEYS`: the DEM not covering the plan,
    zoning gaps, unbuilt buffer strips) and found not evaluated is listed too, pointing to its finding.
    """
    layers = plan.result.layers
    supplied = {e.key: e for e in site_plan_inputs(layers, rule)} if layers is not None else {}
    f = plan.result.findings
    unsure = set(f.loc[(f["rule_id"] == rule.id) & (f["status"] == "not_evaluated"), "subject_id"].astype(str))
    out = []
    for el in elements_of(rule, plan.districts, plan.search_ft, plan.contour_interval_ft or 0.0):
        present = [n for n in el.layers + el.optional if n in plan.frames]
        if el.key == "c" and "zoning" not in present and {"zoning_near", "zoning_unknown"} & set(plan.frames):
            present.append("parcels.zoning")
        missing = list(supplied[el.key].missing) if el.key in supplied else []
        if not missing and el.key in unsure and el.key in DERIVED_ELEMENT_KEYS:
            missing = [f"see {rule.id} {el.key}"]
        out.append((el, present, missing))
    return out


def marked_findings(findings: gpd.GeoDataFrame, crs: pyproj.CRS) -> gpd.GeoDataFrame:
    """Findings of :data:`MARKED_STATUSES` that have a place, multi-points split into points."""
    f = findings[findings["status"].isin(MARKED_STATUSES) & findings.geometry.notna()]
    f = f[~f.geometry.is_empty]
    if not len(f):
        return f
    f = _working(f, crs)
    if f is None:
        return findings.iloc[0:0]
    pts = f.geometry.geom_type == "MultiPoint"
    if pts.any():
        f = pd.concat([f[~pts], f[pts].explode(index_parts=False)])
    order = f["status"].map(STATUS_RANK).to_numpy()
    return gpd.GeoDataFrame(f.iloc[np.argsort(order, kind="stable")], crs=crs)


# ------------------------------------------------------------------------------------------
# drawing primitives (geometries -> matplotlib artists, in data coordinates)

def _poly_path(geoms: np.ndarray) -> MplPath | None:
    """One compound path of every polygon ring (holes included) of ``geoms``."""
    polys = shapely.get_parts(geoms)
    polys = polys[np.isin(shapely.get_type_id(polys), (3,))]
    verts, codes = [], []
    for p in polys:
        for ring in [p.exterior, *p.interiors]:
            xy = np.asarray(ring.coords)
            if len(xy) < 3:
                continue
            c = np.full(len(xy), MplPath.LINETO, dtype=np.uint8)
            c[0], c[-1] = MplPath.MOVETO, MplPath.CLOSEPOLY
            verts.append(xy)
            codes.append(c)
    if not verts:
        return None
    return MplPath(np.concatenate(verts), np.concatenate(codes))


def _line_parts(geoms: np.ndarray) -> list[np.ndarray]:
    """Coordinate arrays of every line part (polygon boundaries included)."""
    g = np.asarray(geoms, dtype=object)
    poly = np.isin(shapely.get_type_id(g), (3, 6))
    g = np.where(poly, shapely.boundary(g), g)
    parts = shapely.get_parts(g)
    parts = parts[np.isin(shapely.get_type_id(parts), (1, 2))]
    if not len(parts):
        return []
    xy, idx = shapely.get_coordinates(parts, return_index=True)
    cuts = np.flatnonzero(np.diff(idx)) + 1
    return [a for a in np.split(xy, cuts) if len(a) > 1]


def draw_polygons(ax: Any, geoms: np.ndarray, *, z: float, **kw: Any) -> None:
    """Fill/outline polygons (``facecolor``, ``edgecolor``, ``linewidth``, ``hatch``, ``alpha``...)."""
    path = _poly_path(geoms)
    if path is not None:
        ax.add_patch(PathPatch(path, zorder=z, **kw))


def draw_lines(ax: Any, geoms: np.ndarray, *, z: float, **kw: Any) -> None:
    """Draw line parts (``color``, ``linewidth``, ``linestyle``, ``alpha``)."""
    parts = _line_parts(geoms)
    if parts:
        ax.add_collection(LineCollection(parts, zorder=z, capstyle="round", joinstyle="round", **kw))


def draw_points(ax: Any, geoms: np.ndarray, *, z: float, marker: str = "o", size: float = 5.0, **kw: Any) -> None:
    """Markers at point geometries (``size`` in points)."""
    pts = shapely.get_parts(np.asarray(geoms, dtype=object))
    xy = shapely.get_coordinates(pts[np.isin(shapely.get_type_id(pts), (0,))])
    if len(xy):
        ax.plot(xy[:, 0], xy[:, 1], linestyle="none", marker=marker, markersize=size, zorder=z,
                clip_on=True, **kw)


# ------------------------------------------------------------------------------------------
# symbols: one table for the map and the legend

_C = {n: styles.style_for(n) for n in ("harvest_area", "landings", "haul_roads", "skid_trails", "streams",
                                       "stream_corridor", "critical_slopes", "buffer_strips", "water_bars",
                                       "zoning", "roads", "parcels")}
CONTOUR_COLOR = "#a6611a"
WATER = "#3182bd"


@dataclass(frozen=True)
class Symbol:
    """How one layer is drawn on the sheets and shown in the legend.

    ``kind`` is ``fill`` (polygons), ``line`` or ``marker``; ``kw`` are matplotlib keywords.
    """

    label: str
    kind: str
    kw: dict[str, Any]
    z: float


SYMBOLS: dict[str, Symbol] = {
    "parcels": Symbol("parcel boundaries", "fill", {"facecolor": "none", "edgecolor": "#4d4d4d", "linewidth": 0.5}, 2),
    "zoning": Symbol("zoning district boundaries", "fill",
                     {"facecolor": "none", "edgecolor": _C["zoning"].color, "linewidth": 0.8, "linestyle": (0, (4, 2))}, 3),
    "zoning_near": Symbol("", "fill", {"facecolor": "none", "edgecolor": "#762a83", "hatch": "xx", "linewidth": 0.6,
                                       "alpha": 0.55}, 3.5),
    "zoning_unknown": Symbol("", "fill", {"facecolor": "none", "edgecolor": styles.STATUS_COLORS["not_evaluated"],
                                          "hatch": "..", "linewidth": 0.8, "alpha": 0.7}, 3.55),
    "search_ring": Symbol("", "line", {"color": "#762a83", "linewidth": 0.7, "linestyle": (0, (1.5, 1.5))}, 3.6),
    "stream_corridor": Symbol("stream corridor map (slopes within)", "fill",
                              {"facecolor": "none", "edgecolor": _C["stream_corridor"].color, "hatch": "\\\\\\",
                               "linewidth": 0.8, "alpha": 0.7}, 4),
    "critical_slopes": Symbol("critical slopes", "fill", {"facecolor": "#dfc27d55", "edgecolor": "#8c510a",
                                                          "hatch": "///", "linewidth": 0.7}, 5),
    "buffer_strips": Symbol("buffer strips", "fill", {"facecolor": "#a6cee377", "edgecolor": "#1f78b4",
                                                      "linewidth": 0.4}, 6),
    "wetlands": Symbol("wetlands", "fill", {"facecolor": "#c7e9c088", "edgecolor": "#238b45", "hatch": "---",
                                            "linewidth": 0.6}, 7),
    "swamps": Symbol("swamps", "fill", {"facecolor": "#c7e9c088", "edgecolor": "#238b45", "hatch": "|--",
                                        "linewidth": 0.6}, 7),
    "ponds": Symbol("ponds", "fill", {"facecolor": "#9ecae1", "edgecolor": WATER, "linewidth": 0.7}, 7.5),
    "contours": Symbol("contours", "line", {"color": CONTOUR_COLOR, "linewidth": 0.3, "alpha": 0.9}, 8),
    "contours_index": Symbol("index contours", "line", {"color": CONTOUR_COLOR, "linewidth": 0.9}, 8.5),
    "row": Symbol("public road right-of-way", "fill", {"facecolor": "#e5e5e5", "edgecolor": "#9a9a9a",
                                                        "linewidth": 0.4}, 10),
    "roads": Symbol("public roads", "line", {"color": "#252525", "linewidth": 1.6}, 11),
    "streams": Symbol("streams", "line", {"color": WATER, "linewidth": 1.3}, 12),
    "streams_intermittent": Symbol("intermittent streams", "line",
                                   {"color": WATER, "linewidth": 1.0, "linestyle": (0, (5, 2, 1, 2))}, 12),
    "easements": Symbol("utility easements, rights-of-way", "fill",
                        {"facecolor": "#fee0b655", "edgecolor": "#e08214", "linewidth": 0.9,
                         "linestyle": (0, (6, 2))}, 13),
    "harvest_area": Symbol("harvest area", "fill", {"facecolor": "#a1d99b33", "edgecolor": "#1b7837",
                                                    "linewidth": 1.8}, 14),
    "skid_trails": Symbol("skid trails", "line", {"color": _C["skid_trails"].color, "linewidth": 1.2,
                                                  "linestyle": (0, (4, 2))}, 15),
    "haul_roads": Symbol("haul roads", "line", {"color": _C["haul_roads"].color, "linewidth": 2.2}, 16),
    "landings": Symbol("landings", "fill", {"facecolor": "#bf812d", "edgecolor": "#543005", "linewidth": 0.8}, 17),
    "water_bars": Symbol("water bars (HRV-030)", "marker",
                         {"marker": "D", "size": 2.6, "color": "#6a3d9a", "markeredgewidth": 0}, 18),
    "dwellings": Symbol("dwellings", "marker", {"marker": "s", "size": 3.2, "color": "black"}, 18),
}
"""Symbol of each drawn layer (``utility_easements`` is drawn as ``easements``)."""

FINDING_MARKERS: dict[str, tuple[str, str]] = {"violation": ("^", "violation"), "review": ("o", "needs review"),
                                               "not_evaluated": ("s", "not evaluated")}
"""Marker and legend text of each marked finding status (colours: :data:`styles.STATUS_COLORS`)."""


def _symbol_for(name: str) -> Symbol:
    return SYMBOLS["easements" if name == "utility_easements" else name]


def draw_layer(ax: Any, name: str, geoms: np.ndarray, sym: Symbol | None = None) -> None:
    """Draw ``geoms`` of layer ``name`` with its :data:`SYMBOLS` entry (polygons, lines or points)."""
    sym = sym or _symbol_for(name)
    g = np.asarray(geoms, dtype=object)
    tid = shapely.get_type_id(g)
    kw = dict(sym.kw)
    if sym.kind == "marker":
        draw_points(ax, g, z=sym.z, **{k: v for k, v in kw.items()})
        return
    polys = g[np.isin(tid, (3, 6))]
    if sym.kind == "fill" and len(polys):
        draw_polygons(ax, polys, z=sym.z, **kw)
    lines = g[np.isin(tid, (1, 2, 5))] if sym.kind == "fill" else g[~np.isin(tid, (0, 4))]
    if len(lines):
        lw = {"color": kw.get("edgecolor", kw.get("color")), "linewidth": kw.get("linewidth", 1.0),
              "linestyle": kw.get("linestyle", "solid"), "alpha": kw.get("alpha")}
        draw_lines(ax, lines, z=sym.z, **lw)
    pts = g[np.isin(tid, (0, 4))]
    if len(pts):
        color = kw.get("facecolor") if kw.get("facecolor") not in (None, "none") else kw.get("edgecolor", kw.get("color"))
        draw_points(ax, pts, z=sym.z + 0.1, marker="s", size=6.0, color=color,
                    markeredgecolor=kw.get("edgecolor", "black"), markeredgewidth=0.6)


# ------------------------------------------------------------------------------------------
# one sheet's map frame: ground <-> page inches, and labels that avoid each other

@dataclass
class SheetFrame:
    """The map frame of one sheet: its axes, ground box and scale, and the labels placed so far."""

    ax: Any
    box: tuple[float, float, float, float]
    frame: tuple[float, float, float, float]
    units_per_in: float
    boxes: list[tuple[float, float, float, float]] = field(default_factory=list)

    def to_page(self, x: Any, y: Any) -> tuple[Any, Any]:
        """Ground coordinates -> page inches."""
        return (self.frame[0] + (np.asarray(x) - self.box[0]) / self.units_per_in,
                self.frame[1] + (np.asarray(y) - self.box[1]) / self.units_per_in)

    def to_ground(self, px: float, py: float) -> tuple[float, float]:
        """Page inches -> ground coordinates."""
        return (self.box[0] + (px - self.frame[0]) * self.units_per_in,
                self.box[1] + (py - self.frame[1]) * self.units_per_in)

    def cost(self, b: tuple[float, float, float, float]) -> float:
        """Overlap (sq in) of a label box with the labels placed, plus what sticks out of the frame."""
        fx, fy, fw, fh = self.frame
        ix = max(0.0, min(b[2], fx + fw) - max(b[0], fx))
        iy = max(0.0, min(b[3], fy + fh) - max(b[1], fy))
        out = (b[2] - b[0]) * (b[3] - b[1]) - ix * iy
        if not self.boxes:
            return 10 * out
        a = np.asarray(self.boxes)
        w = np.clip(np.minimum(a[:, 2], b[2]) - np.maximum(a[:, 0], b[0]), 0, None)
        h = np.clip(np.minimum(a[:, 3], b[3]) - np.maximum(a[:, 1], b[1]), 0, None)
        return float((w * h).sum()) + 10 * out


def label_size(text: str, size: float, rotation: float = 0.0) -> tuple[float, float]:
    """Approximate width and height (inches) of a label's upright bounding box."""
    lines = text.split("\n")
    w = max(len(s) for s in lines) * size * _CHAR_W / 72.0 + 0.03
    h = len(lines) * size * 1.2 / 72.0 + 0.02
    r = math.radians(rotation)
    return abs(w * math.cos(r)) + abs(h * math.sin(r)), abs(w * math.sin(r)) + abs(h * math.cos(r))


def place_label(sf: SheetFrame, text: str, candidates: list[tuple[float, float, float]], *, size: float = LABEL_FONT,
                color: str = "black", weight: str = "normal", style: str = "normal", z: float = 40,
                anchor: tuple[float, float] | None = None, optional: bool = False) -> bool:
    """Draw ``text`` at the first candidate (page x, y, rotation) that overlaps no label.

    With no free candidate the least-overlapping one is used, unless ``optional`` (contour
    labels), which are then left out. With ``anchor`` (page inches) a thin leader joins a label
    set off from its anchor. An invisible character of ``text`` (a feature id's bidirectional control,
    a zero-width space) is drawn as ``<U+202E>`` (:func:`~geoconstraints.text.visible_text`).
    """
    text = visible_text(text)
    best, best_cost = None, math.inf
    for cx, cy, rot in candidates:
        w, h = label_size(text, size, rot)
        b = (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)
        c = sf.cost(b)
        if c < best_cost - 1e-12:
            best, best_cost = (cx, cy, rot, b), c
        if c <= 1e-9:
            break
    if best is None or (optional and best_cost > 1e-9):
        return False
    cx, cy, rot, b = best
    sf.boxes.append(b)
    x, y = sf.to_ground(cx, cy)
    kw = {"fontsize": size, "fontweight": weight, "fontstyle": style, "rotation": rot, "rotation_mode": "anchor",
          "ha": "center", "va": "center", "clip_on": True, "parse_math": False, "linespacing": 1.05}
    # the halo is a second, outline-only copy: a path effect on the label itself would turn it
    # into glyph outlines, and the label would no longer be text a reader can search or extract
    sf.ax.text(x, y, text, color="white", zorder=z - 0.5,
               path_effects=[patheffects.Stroke(linewidth=2.2, foreground="white")], **kw)
    sf.ax.text(x, y, text, color=color, zorder=z, **kw)
    if anchor is not None and math.dist(anchor, (cx, cy)) > 0.16:
        ex = min(max(anchor[0], b[0]), b[2])
        ey = min(max(anchor[1], b[1]), b[3])
        (ax_, ay_), (ex_, ey_) = sf.to_ground(*anchor), sf.to_ground(ex, ey)
        sf.ax.plot([ax_, ex_], [ay_, ey_], color=color, linewidth=0.5, zorder=z - 1, clip_on=True)
    return True


def around(px: float, py: float, w: float, h: float, gap: float = 0.07) -> list[tuple[float, float, float]]:
    """Candidate label centres around a marker at (px, py): right, left, above, below, diagonals, farther out."""
    out = []
    for k in (1.0, 2.6):
        d = gap * k
        dx, dy = w / 2 + d, h / 2 + d
        out += [(px + dx, py, 0.0), (px - dx, py, 0.0), (px, py + dy, 0.0), (px, py - dy, 0.0),
                (px + dx, py + dy, 0.0), (px - dx, py + dy, 0.0), (px + dx, py - dy, 0.0), (px - dx, py - dy, 0.0)]
    return out


def _upright(angle: float) -> float:
    a = (angle + 180.0) % 360.0 - 180.0
    return a - 180.0 if a > 90 else (a + 180.0 if a < -90 else a)


def along(sf: SheetFrame, geom: Any, *, offset_in: float = 0.0,
          positions: tuple[float, ...] = (0.5, 0.35, 0.65, 0.2, 0.8)) -> list[tuple[float, float, float]]:
    """Candidate label centres along the longest visible part of a line, rotated with it.

    Each position gives a candidate on each side of the line, ``offset_in`` away (or on the
    line when 0).
    """
    parts = shapely.get_parts(shapely.clip_by_rect(geom, *sf.box))
    parts = [p for p in parts if p.geom_type in ("LineString", "LinearRing") and p.length > 0]
    if not parts:
        return []
    line = max(parts, key=lambda p: p.length)
    out = []
    step = min(line.length * 0.02, 0.05 * sf.units_per_in)
    for t in positions:
        d = t * line.length
        a, b = line.interpolate(max(d - step, 0)), line.interpolate(min(d + step, line.length))
        ang = math.degrees(math.atan2(b.y - a.y, b.x - a.x))
        rot = _upright(ang)
        p = line.interpolate(d)
        px, py = sf.to_page(p.x, p.y)
        nx, ny = -math.sin(math.radians(rot)), math.cos(math.radians(rot))
        sides = (1.0, -1.0) if offset_in else (0.0,)
        out += [(float(px) + s * offset_in * nx, float(py) + s * offset_in * ny, rot) for s in sides]
    return out


def inside(sf: SheetFrame, geom: Any) -> list[tuple[float, float, float]]:
    """Candidate label centres inside a polygon's visible part (its point on surface, then nearby)."""
    part = shapely.clip_by_rect(geom, *sf.box)
    if part.is_empty:
        return []
    p = part.point_on_surface() if part.area > 0 else part.centroid
    px, py = sf.to_page(p.x, p.y)
    px, py = float(px), float(py)
    return [(px, py, 0.0), (px, py + 0.14, 0.0), (px, py - 0.14, 0.0), (px + 0.3, py, 0.0), (px - 0.3, py, 0.0)]


# ------------------------------------------------------------------------------------------
# drawing one map frame

def _visible(g: gpd.GeoDataFrame | None, box: tuple[float, float, float, float]) -> gpd.GeoDataFrame | None:
    sub = _clip_frame(g, box)
    if sub is None:
        return None
    clipped = shapely.clip_by_rect(sub.geometry.values, *box)
    keep = ~shapely.is_empty(clipped)
    return gpd.GeoDataFrame(sub.drop(columns=sub.geometry.name)[keep], geometry=clipped[keep],
                            crs=sub.crs) if keep.any() else None


def _is_intermittent(g: gpd.GeoDataFrame) -> np.ndarray:
    """Streams whose kind (read through the rulebook's vocabulary by :func:`prepare_plan`) is intermittent."""
    if "kind" not in g.columns:
        return np.zeros(len(g), dtype=bool)
    return g["kind"].astype(str).str.strip().str.lower().eq("intermittent").to_numpy()


def draw_features(sf: SheetFrame, plan: PlanData) -> dict[str, gpd.GeoDataFrame]:
    """Draw every layer of the plan within the sheet; return the visible (clipped) frames."""
    vis = {n: v for n, g in plan.frames.items() if (v := _visible(g, sf.box)) is not None}
    for name in _DRAWN:
        g = vis.get(name)
        if g is None or name in ("streams",):
            continue
        draw_layer(sf.ax, name, g.geometry.values)
    if (g := vis.get("streams")) is not None:
        inter = _is_intermittent(g)
        draw_layer(sf.ax, "streams", g.geometry.values[~inter])
        draw_layer(sf.ax, "streams", g.geometry.values[inter], SYMBOLS["streams_intermittent"])
    if (g := vis.get("contours")) is not None:
        idx = g["index"].to_numpy(dtype=bool)
        draw_layer(sf.ax, "contours", g.geometry.values[~idx])
        draw_layer(sf.ax, "contours", g.geometry.values[idx], SYMBOLS["contours_index"])
    for name in ("zoning_near", "zoning_unknown", "search_ring"):
        if (g := vis.get(name)) is not None:
            draw_layer(sf.ax, name, g.geometry.values, SYMBOLS[name])
    return vis


def _anchor(sf: SheetFrame, geom: Any) -> tuple[float, float] | None:
    """Page position of a finding's mark: a point, the middle of a line, a point inside a polygon."""
    g = shapely.clip_by_rect(geom, *sf.box) if geom.geom_type != "Point" else geom
    if g.is_empty or (g.geom_type == "Point" and not shapely.contains_xy(shapely.box(*sf.box), g.x, g.y)):
        return None
    if g.area > 0:
        p = g.point_on_surface()
    elif g.length > 0:
        line = max((p for p in shapely.get_parts(g) if p.length > 0), key=lambda p: p.length)
        p = line.interpolate(0.5, normalized=True)
    else:
        p = shapely.get_parts(g)[0]
    px, py = sf.to_page(p.x, p.y)
    return float(px), float(py)


def draw_findings(sf: SheetFrame, findings: gpd.GeoDataFrame) -> list[tuple[str, str]]:
    """Highlight the marked findings' places and label them with their rule ids.

    Findings whose marks fall within 0.12 in of each other share one label. Returns the
    (rule id, status) pairs drawn on this sheet.
    """
    f = _clip_frame(findings, sf.box) if len(findings) else None
    if f is None:
        return []
    groups: dict[tuple[int, int], dict[str, Any]] = {}
    for status, geom, rid, waived in zip(f["status"], f.geometry.values, f["rule_id"], f["waived"]):
        col = styles.STATUS_COLORS[status]
        tid = shapely.get_type_id(geom)
        if tid in (1, 2, 5):
            draw_lines(sf.ax, np.array([geom], dtype=object), z=13.8, color=col, linewidth=6.0, alpha=0.4)
        elif tid in (3, 6):
            draw_polygons(sf.ax, np.array([geom], dtype=object), z=13.9, facecolor="none", edgecolor=col,
                          linewidth=2.0, linestyle=(0, (3, 1.5)))
        a = _anchor(sf, geom)
        if a is None:
            continue
        key = (round(a[0] / 0.12), round(a[1] / 0.12))
        grp = groups.setdefault(key, {"at": a, "ids": [], "status": status, "pairs": set()})
        label = rid + ("*" if str(waived) else "")
        if label not in grp["ids"]:
            grp["ids"].append(label)
        grp["pairs"].add((rid, status))
        if STATUS_RANK[status] < STATUS_RANK[grp["status"]]:
            grp["status"] = status
    drawn: list[tuple[str, str]] = []
    for grp in groups.values():
        px, py = grp["at"]
        marker, _ = FINDING_MARKERS[grp["status"]]
        col = styles.STATUS_COLORS[grp["status"]]
        x, y = sf.to_ground(px, py)
        sf.ax.plot([x], [y], marker=marker, markersize=7, color=col, markeredgecolor="white", markeredgewidth=0.8,
                   zorder=30, clip_on=True)
        sf.boxes.append((px - 0.05, py - 0.05, px + 0.05, py + 0.05))
        ids = grp["ids"]
        text = "\n".join(", ".join(ids[i:i + 3]) for i in range(0, len(ids), 3))
        w, h = label_size(text, LABEL_FONT + 0.5)
        place_label(sf, text, around(px, py, w, h), size=LABEL_FONT + 0.5, color=col, weight="bold", z=42,
                    anchor=(px, py))
        drawn += sorted(grp["pairs"])
    return drawn


def _id_labels(g: gpd.GeoDataFrame | None, column: str = "feature_id") -> list[tuple[str, Any]]:
    if g is None or column not in g.columns:
        return []
    out = []
    for v, geom in zip(g[column], g.geometry.values):
        if v is None or (isinstance(v, float) and math.isnan(v)) or not str(v).strip():
            continue
        out.append((str(v).strip(), geom))
    return out


def label_features(sf: SheetFrame, plan: PlanData, vis: dict[str, gpd.GeoDataFrame]) -> None:
    """Ids of the plan's features, names of streams and roads, districts and the touched parcels."""
    for text, geom in _id_labels(vis.get("harvest_area")):
        place_label(sf, text, inside(sf, geom), size=LABEL_FONT + 1.5, color="#1b7837", weight="bold")
    for text, geom in _id_labels(vis.get("landings")):
        p = geom.representative_point()
        px, py = (float(v) for v in sf.to_page(p.x, p.y))
        w, h = label_size(text, LABEL_FONT + 0.5)
        place_label(sf, text, around(px, py, w, h, gap=0.1), size=LABEL_FONT + 0.5, color="#543005",
                    weight="bold", anchor=(px, py))
    for name, color in (("haul_roads", "#543005"), ("skid_trails", "#8c510a")):
        for text, geom in _id_labels(vis.get(name)):
            place_label(sf, text, along(sf, geom, offset_in=0.09), color=color, weight="bold")
    for name, color, style in (("streams", "#08519c", "italic"), ("roads", "#252525", "normal")):
        for text, geom in _id_labels(vis.get(name), "name"):
            place_label(sf, text, along(sf, geom, offset_in=0.1), color=color, style=style)
    parcels = vis.get("parcels")
    if parcels is not None and plan.parcel_ids:
        mine = parcels[parcels["feature_id"].astype(str).isin(plan.parcel_ids)]
        for text, geom in _id_labels(mine):
            place_label(sf, text, inside(sf, geom), size=LABEL_FONT, color="#4d4d4d")
    zsrc = vis.get("zoning")
    for text, geom in _id_labels(zsrc, "district"):
        place_label(sf, text, inside(sf, geom), size=LABEL_FONT, color="#762a83", weight="bold", optional=True)
    for text, geom in _id_labels(vis.get("zoning_unknown"), "district"):  # what HRV-003 could not read: never left out
        place_label(sf, text, inside(sf, geom), size=LABEL_FONT, color=styles.STATUS_COLORS["not_evaluated"],
                    weight="bold")


def label_contours(sf: SheetFrame, vis: dict[str, gpd.GeoDataFrame], every_in: float = 3.5) -> None:
    """Label index contours with their elevation every ``every_in`` of paper, where there is room."""
    g = vis.get("contours")
    if g is None:
        return
    g = g[g["index"].to_numpy(dtype=bool)]
    for elev, geom in zip(g["elev_ft"], g.geometry.values):
        text = num_text(float(elev)).replace(",", "")
        for part in shapely.get_parts(geom):
            n = int(part.length / sf.units_per_in // every_in)
            ts = [(i + 0.5) / (n + 1) for i in range(n + 1)] if part.length / sf.units_per_in > 1.0 else []
            for t in ts:
                cands = along(sf, part, positions=(t, min(t + 0.05, 1.0), max(t - 0.05, 0.0)))
                place_label(sf, text, cands, size=LABEL_FONT - 0.5, color=CONTOUR_COLOR, z=39, optional=True)


# ------------------------------------------------------------------------------------------
# the title-block strip: title block, north arrow and scale bar, legend, elements, findings

class PanelFlow:
    """Rows of text and symbols flowing down the columns of the title-block strip (inches)."""

    def __init__(self, ax: Any, width: float, height: float) -> None:
        self.ax = ax
        gap = 0.15
        n = max(1, int((width + gap) // (COLUMN_IN + gap)))
        self.col_w = (width - gap * (n - 1)) / n
        self.xs = [i * (self.col_w + gap) for i in range(n)]
        self.height = height
        self.i, self.y = 0, height
        self.full = False
        self.dropped = 0

    def room(self, h: float) -> bool:
        """Make room for a row ``h`` high (next column when needed); False when the strip is full."""
        if self.full:
            self.dropped += 1
            return False
        if self.y - h < 0:
            self.i += 1
            self.y = self.height
            if self.i >= len(self.xs):
                self.full = True
                self.dropped += 1
                return False
        return True

    def lines_left(self, size: float = PANEL_FONT) -> int:
        """How many more text lines of ``size`` fit."""
        lh = size * 1.22 / 72.0
        if self.full:
            return 0
        return int(self.y // lh) + (len(self.xs) - self.i - 1) * int(self.height // lh)

    def text(self, s: str, *, size: float = PANEL_FONT, weight: str = "normal", color: str = "black",
             indent: float = 0.0, wrap: bool = True) -> None:
        """Write ``s`` (wrapped to the column) one line per row, invisible characters as ``<U+202E>``."""
        s = visible_text(s)
        chars = max(10, int((self.col_w - indent) * 72.0 / (size * _CHAR_W)))
        rows = textwrap.wrap(s, chars, subsequent_indent="  ") if wrap else [s]
        lh = size * 1.22 / 72.0
        for row in rows or [""]:
            if not self.room(lh):
                return
            self.ax.text(self.xs[self.i] + indent, self.y - lh * 0.5, row, fontsize=size, fontweight=weight,
                         color=color, va="center", ha="left", parse_math=False)
            self.y -= lh

    def space(self, h: float = 0.06) -> None:
        """Vertical space (not carried over to a new column)."""
        self.y = max(self.y - h, 0.0) if self.y < self.height else self.y

    def symbol(self, draw: Callable[[Any, float, float, float, float], None], label: str) -> None:
        """A legend row: ``draw(ax, x, y, w, h)`` paints the symbol box, then the label."""
        lh = max(PANEL_FONT * 1.22 / 72.0, 0.115)
        chars = max(10, int((self.col_w - 0.42) * 72.0 / (PANEL_FONT * _CHAR_W)))
        rows = textwrap.wrap(visible_text(label), chars) or [""]
        if not self.room(lh * len(rows)):
            return
        x = self.xs[self.i]
        draw(self.ax, x + 0.02, self.y - lh + 0.025, 0.30, lh - 0.05)
        for k, row in enumerate(rows):
            self.ax.text(x + 0.40, self.y - lh * (k + 0.5), row, fontsize=PANEL_FONT, va="center", ha="left",
                         parse_math=False)
        self.y -= lh * len(rows)

    def block(self, h: float, draw: Callable[[Any, float, float, float], None]) -> None:
        """A drawn block ``h`` high: ``draw(ax, x, top, width)``."""
        if self.room(h):
            draw(self.ax, self.xs[self.i], self.y, self.col_w)
            self.y -= h


def legend_swatch(sym: Symbol) -> Callable[[Any, float, float, float, float], None]:
    """A function drawing ``sym`` in a legend box."""
    def draw(ax: Any, x: float, y: float, w: float, h: float) -> None:
        kw = dict(sym.kw)
        if sym.kind == "fill":
            ax.add_patch(Rectangle((x, y), w, h, **kw))
        elif sym.kind == "line":
            ax.plot([x, x + w], [y + h / 2] * 2, **kw)
        else:
            size = kw.pop("size", 5.0)
            ax.plot([x + w / 2], [y + h / 2], linestyle="none", markersize=size, **kw)
    return draw


def marker_swatch(status: str) -> Callable[[Any, float, float, float, float], None]:
    """Legend swatch of a finding mark."""
    def draw(ax: Any, x: float, y: float, w: float, h: float) -> None:
        ax.plot([x + w / 2], [y + h / 2], marker=FINDING_MARKERS[status][0], markersize=6,
                color=styles.STATUS_COLORS[status], markeredgecolor="white", markeredgewidth=0.6, linestyle="none")
    return draw


_ELEMENT_OF = {"parcels": "a", "harvest_area": "a", "contours": "b", "contours_index": "b", "zoning_near": "c",
               "zoning_unknown": "c", "landings": "d", "haul_roads": "e", "roads": "e", "easements": "f",
               "skid_trails": "g", "streams": "h", "streams_intermittent": "h", "ponds": "h", "wetlands": "h",
               "swamps": "h", "critical_slopes": "i", "buffer_strips": "j", "stream_corridor": "k"}
"""Element letter of each legend entry."""


def legend_entries(plan: PlanData, names: Iterable[str] | None = None) -> list[tuple[Symbol, str]]:
    """(symbol, label) of every layer the plan draws (or of ``names``), in drawing order."""
    frames = plan.frames
    keys = [n for n in _DRAWN if n in frames and n != "utility_easements"]
    if "utility_easements" in frames and "easements" not in keys:
        keys.append("easements")
    if "contours" in frames:
        keys += ["contours", "contours_index"]
    if "streams" in frames and _is_intermittent(frames["streams"]).any():
        keys.insert(keys.index("streams") + 1, "streams_intermittent")
    keys += [k for k in ("zoning_near", "zoning_unknown") if k in frames]
    if names is not None:
        keys = [k for k in keys if k in set(names)]
    out = []
    for k in keys:
        sym = SYMBOLS[k]
        label = sym.label
        if k == "contours":
            label = f"contours, {num_text(plan.contour_interval_ft or 0)} ft interval"
        elif k == "contours_index":
            label = f"index contours, every {num_text((plan.contour_interval_ft or 0) * INDEX_EVERY)} ft"
        elif k == "zoning_near":
            label = f"{'/'.join(plan.districts)} within {num_text(plan.search_ft)} ft (dotted line)"
        elif k == "zoning_unknown":
            label = f"district unknown within {num_text(plan.search_ft)} ft (as labelled)"
        elif k == "buffer_strips" and "width_ft" in frames[k].columns:
            widths = sorted({float(w) for w in frames[k]["width_ft"].dropna()})
            label += f" ({', '.join(num_text(w) for w in widths)} ft)" if widths else ""
        letter = _ELEMENT_OF.get(k)
        out.append((sym, f"({letter}) {label}" if letter else label))
    return out


def title_lines(plan: PlanData, sheet: Sheet, n_sheets: int, applicant: str | None, date: str,
                overlap_ft: float | None, plan_scale: float) -> list[tuple[str, str]]:
    """(text, weight) rows of the title block."""
    rb = plan.result.rulebook
    rule = site_plan_rule(plan.result.rulebook)
    ha = plan.frames["harvest_area"]
    acres = float(shapely.area(ha.geometry.values).sum()) * plan.ft_per_unit ** 2 / 43_560.0
    missing = [f"{el.key} ({', '.join(m)})" if len(m) < len(el.layers) else el.key
               for el, _, m in plan.elements if m]
    which = "key map" if sheet.key_map else "site plan"
    rows = [("TIMBER-HARVEST SITE PLAN", "bold"),
            (f"{rule.citation}", "normal"),
            (f"Applicant: {applicant.strip() if applicant and applicant.strip() else 'not stated'}", "normal"),
            (f"Parcels: {', '.join(plan.parcel_ids) or 'none mapped (no parcels layer)'}", "normal"),
            (f"Harvest areas: {', '.join(ha['feature_id'].astype(str))} ({acres:,.1f} acres)", "normal"),
            (f"Date: {date}", "normal"),
            (f"Rulebook: {rb.name} {rb.version}", "normal"),
            (f"Scale: 1 in = {num_text(sheet.scale_ft_per_in)} ft (1:{num_text(sheet.scale_ft_per_in * 12)})"
             + (" (key map)" if sheet.key_map else ""), "bold"),
            (f"Sheet {sheet.number} of {n_sheets}" + (f" ({which})" if n_sheets > 1 else ""), "bold")]
    if sheet.key_map:
        rows.append((f"Sheets 2-{n_sheets}: 1 in = {num_text(plan_scale)} ft (the filing scale)", "bold"))
    if overlap_ft is not None:
        rows.append((f"Sheets overlap {num_text(OVERLAP_IN)} in ({num_text(overlap_ft)} ft)", "normal"))
    rows.append(("Print at 100 % (actual size), not fit to page.", "normal"))
    rows.append((f"Not supplied by the inputs: {'; '.join(missing)}" if missing
                 else "All elements a-k supplied by the inputs.", "bold" if missing else "normal"))
    return rows


def _convergence_deg(crs: pyproj.CRS, x: float, y: float) -> float:
    """Angle (degrees, clockwise) from grid north to true north at (x, y)."""
    geo = pyproj.Transformer.from_crs(crs, crs.geodetic_crs, always_xy=True)
    back = pyproj.Transformer.from_crs(crs.geodetic_crs, crs, always_xy=True)
    lon, lat = geo.transform(x, y)
    x2, y2 = back.transform(lon, lat + 0.01)
    return math.degrees(math.atan2(x2 - x, y2 - y))


def draw_north_and_scale(plan: PlanData, sheet: Sheet) -> tuple[Callable[[Any, float, float, float], None], str]:
    """The north arrow (grid north) and a scale bar in feet at the sheet's scale; the north note (convergence)."""
    cx, cy = (sheet.box[0] + sheet.box[2]) / 2, (sheet.box[1] + sheet.box[3]) / 2
    conv = _convergence_deg(plan.crs, cx, cy)
    side = "east" if conv > 0 else "west"
    epsg = plan.crs.to_epsg()

    def draw(ax: Any, x: float, top: float, width: float) -> None:
        ax.annotate("", xy=(x + 0.17, top - 0.05), xytext=(x + 0.17, top - 0.5),
                    arrowprops={"arrowstyle": "-|>,head_width=0.25,head_length=0.5", "color": "black", "lw": 1.5})
        ax.text(x + 0.17, top - 0.62, "N", fontsize=9, fontweight="bold", ha="center", va="center")
        bar_max = min(width - 0.75, 3.0)
        length = round_length_ft(bar_max * sheet.scale_ft_per_in)
        bar_in = length / sheet.scale_ft_per_in
        segs = 5 if str(int(length))[0] == "5" else 4
        bx, by = x + 0.45, top - 0.33
        for i in range(segs):
            ax.add_patch(Rectangle((bx + i * bar_in / segs, by), bar_in / segs, 0.06,
                                   facecolor="black" if i % 2 == 0 else "white", edgecolor="black", linewidth=0.6))
        for v in (0.0, length / 2, length):
            ax.text(bx + v / sheet.scale_ft_per_in, by - 0.05, num_text(v), fontsize=PANEL_FONT, ha="center",
                    va="top")
        ax.text(bx + bar_in + 0.05, by + 0.03, "ft", fontsize=PANEL_FONT, va="center")
        ax.text(bx, by + 0.14, f"1 in = {num_text(sheet.scale_ft_per_in)} ft", fontsize=PANEL_FONT + 1,
                fontweight="bold", va="center", parse_math=False)
    note = (f"North arrow: grid north of {plan.crs.name}" + (f" (EPSG:{epsg})" if epsg else "")
            + f"; true north is {abs(conv):.2f}° {side} of grid north at the sheet centre.")
    return draw, note


def fill_panel(flow: PanelFlow, plan: PlanData, sheet: Sheet, n_sheets: int, *, applicant: str | None, date: str,
               overlap_ft: float | None, plan_scale: float, legend: list[tuple[Symbol, str]],
               drawn: list[tuple[str, str]]) -> None:
    """Write the title block, north arrow and scale bar, legend, element list and findings into ``flow``."""
    for text, weight in title_lines(plan, sheet, n_sheets, applicant, date, overlap_ft, plan_scale):
        flow.text(text, weight=weight, size=PANEL_FONT + (2.5 if text.isupper() else 0))
    flow.space()
    draw, note = draw_north_and_scale(plan, sheet)
    flow.block(0.72, draw)
    flow.text(note, size=PANEL_FONT - 0.5)
    flow.space()
    flow.text("LEGEND", weight="bold")
    for sym, label in legend:
        flow.symbol(legend_swatch(sym), label)
    statuses = sorted({s for _, s in drawn}, key=lambda s: STATUS_RANK[s])
    for s in statuses:
        flow.symbol(marker_swatch(s), f"finding: {FINDING_MARKERS[s][1]} (rule ids)")
    flow.space()
    rule = site_plan_rule(plan.result.rulebook)
    flow.text(f"ELEMENTS, {rule.citation.split(';')[0]} a-k", weight="bold")
    for el, present, missing in plan.elements:
        state = "shown" if not missing else ("NOT SUPPLIED" if not present
                                              else f"shown: {', '.join(present)}; NOT SUPPLIED: {', '.join(missing)}")
        flow.text(f"{el.key}  {el.label}: {state}", color="black" if not missing else "#b2182b")
    flow.space()
    _findings_rows(flow, plan, drawn, not sheet.key_map)


def _findings_rows(flow: PanelFlow, plan: PlanData, drawn: list[tuple[str, str]], drawn_sheet: bool) -> None:
    f = plan.findings
    if not len(f):
        flow.text("No violation or review finding has a place on the map.")
        return
    flow.text("FINDINGS MARKED (rule id at the place)", weight="bold")
    here = {r for r, _ in drawn}
    t = f.groupby(["rule_id", "status"], sort=False).agg(n=("status", "size"), title=("title", "first")).reset_index()
    t = t.sort_values(["status", "rule_id"], key=lambda c: c.map(STATUS_RANK) if c.name == "status" else c)
    rows = [f"{r.rule_id} {FINDING_MARKERS[r.status][1]} ({r.n})"
            f"{' [other sheet]' if drawn_sheet and r.rule_id not in here else ''}: {r.title}" for r in t.itertuples()]
    chars = int(flow.col_w * 72.0 / (PANEL_FONT * _CHAR_W))
    for i, row in enumerate(rows):
        if flow.lines_left() < 3 and i < len(rows) - 1:
            flow.text(f"... and {len(rows) - i} more rule(s): see findings.geojson / report.html")
            return
        row = row if len(row) <= chars else row[:chars - 1].rstrip() + "…"
        flow.text(row, color=styles.STATUS_COLORS[t["status"].iloc[i]], wrap=False)
    flow.text("* waived in the rulebook. All findings: report.html of geoconstraints harvest.")


# ------------------------------------------------------------------------------------------
# sheets: the grid at the filing scale, the key map, one figure per page

def plan_sheets(extent: tuple[float, float, float, float], paper: str, orientation: str, scale_ft_per_in: float,
                ft_per_unit: float) -> tuple[PageLayout, list[Sheet]]:
    """The page layout and the sheets covering ``extent`` at ``scale_ft_per_in``.

    ``orientation='auto'`` takes the orientation needing fewer map sheets (portrait on a tie).
    A plan larger than one sheet gets a key map first (sheet 1), at the smallest round scale
    (:func:`nice_scale`) at which the whole grid fits the frame.
    """
    if orientation not in ORIENTATIONS:
        raise InputError(f"--orientation {orientation!r} is not one of {', '.join(ORIENTATIONS)}")
    upi = scale_ft_per_in / ft_per_unit
    tried: list[tuple[PageLayout, list]] = []
    for o in (("portrait", "landscape") if orientation == "auto" else (orientation,)):
        lay = page_layout(paper, o)
        tried.append((lay, tile_sheets(extent, (lay.frame[2] * upi, lay.frame[3] * upi), OVERLAP_IN * upi)))
    lay, tiles = min(tried, key=lambda t: len(t[1]))  # the first of the fewest: portrait on a tie
    sheets: list[Sheet] = []
    if len(tiles) > 1:
        a = np.array([b for _, _, b in tiles])
        cover = (a[:, 0].min(), a[:, 1].min(), a[:, 2].max(), a[:, 3].max())
        need = max((cover[2] - cover[0]) / lay.frame[2], (cover[3] - cover[1]) / lay.frame[3]) * ft_per_unit
        key = nice_scale(need * 1.04)
        kw, kh = lay.frame[2] * key / ft_per_unit, lay.frame[3] * key / ft_per_unit
        cx, cy = (cover[0] + cover[2]) / 2, (cover[1] + cover[3]) / 2
        sheets.append(Sheet(1, (cx - kw / 2, cy - kh / 2, cx + kw / 2, cy + kh / 2), key, key_map=True))
    for r, c, box in tiles:
        sheets.append(Sheet(len(sheets) + 1, box, scale_ft_per_in, False, r, c))
    return lay, sheets


def sheet_count(extent: tuple[float, float, float, float], paper: str, orientation: str, scale_ft_per_in: float,
                ft_per_unit: float) -> int:
    """Map sheets :func:`plan_sheets` draws for ``extent`` at ``scale_ft_per_in`` (the key map not
    counted), computed without laying them out.

    ``extent`` is the plan's extent without the :data:`PAD_IN` of paper, which grows with the scale.

    Examples
    --------
    >>> sheet_count((0, 0, 3000, 3000), "letter", "auto", 500, 1.0)
    1
    >>> sheet_count((0, 0, 3000, 3000), "letter", "auto", 0.001, 1.0)
    190840152672
    """
    pad = PAD_IN * scale_ft_per_in / ft_per_unit
    w, h = extent[2] - extent[0] + 2 * pad, extent[3] - extent[1] + 2 * pad
    upi = scale_ft_per_in / ft_per_unit
    counts = []
    for o in (("portrait", "landscape") if orientation == "auto" else (orientation,)):
        f = page_layout(paper, o).frame
        counts.append(grid_count(w, f[2] * upi, OVERLAP_IN * upi) * grid_count(h, f[3] * upi, OVERLAP_IN * upi))
    return min(counts)


def smallest_scale(extent: tuple[float, float, float, float], paper: str, orientation: str, ft_per_unit: float,
                   most: int = MAX_SHEETS) -> float:
    """The smallest scale (feet per inch, a whole number from 1 up) at which the plan over
    ``extent`` (without its pad) fits on ``most`` map sheets.

    Examples
    --------
    >>> smallest_scale((0, 0, 3000, 3000), "letter", "auto", 1.0), smallest_scale((0, 0, 3000, 3000), "letter", "auto", 1.0, 1)
    (46.0, 459.0)
    """
    lo, hi = 0.0, 1.0
    while sheet_count(extent, paper, orientation, hi, ft_per_unit) > most:
        lo, hi = hi, hi * 2
    for _ in range(60):  # fewer sheets at a larger scale: bisect between too many (lo) and enough (hi)
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if sheet_count(extent, paper, orientation, mid, ft_per_unit) <= most else (mid, hi)
    return float(math.ceil(hi - 1e-9))


def check_sheets(plan: PlanData, paper: str, orientation: str, scale_ft_per_in: float, rule: Any) -> int:
    """The number of map sheets of ``plan`` at ``scale_ft_per_in``; InputError over :data:`MAX_SHEETS`.

    Raises
    ------
    InputError
        One line naming ``--scale``, the sheets it would need and the smallest usable scale (or
        larger paper, when even the law's scale, HRV-002 ``min_scale_ft_per_in``, needs more).
    """
    pad = PAD_IN * scale_ft_per_in / plan.ft_per_unit
    x0, y0, x1, y1 = plan.extent
    bare = (x0 + pad, y0 + pad, x1 - pad, y1 - pad)
    n = sheet_count(bare, paper, orientation, scale_ft_per_in, plan.ft_per_unit)
    if n <= MAX_SHEETS:
        return n
    limit = rule.t("min_scale_ft_per_in")
    least = smallest_scale(bare, paper, orientation, plan.ft_per_unit)
    span = " x ".join(num_text(round((b - a) * plan.ft_per_unit)) for a, b in ((bare[0], bare[2]), (bare[1], bare[3])))
    count = f"{n:,}" if n < 1_000_000 else "more than a million"  # --scale 1e-300: not a 300-digit number
    head = (f"--scale {num_text(scale_ft_per_in)}: the plan ({span} ft) would need {count} sheets of {paper} at "
            f"1 in = {num_text(scale_ft_per_in)} ft; a site plan is drawn on at most {MAX_SHEETS}")
    if least <= limit:
        raise InputError(f"{head}. Give --scale {num_text(least)} or more (up to the law's {num_text(limit)}, "
                         f"{rule.id})")
    bigger = [p for p in PAPERS if PAPERS[p][0] * PAPERS[p][1] > PAPERS[paper][0] * PAPERS[paper][1]]
    raise InputError(f"{head}, even at the law's scale of 1 in = {num_text(limit)} ft ({rule.id}). "
                     + (f"Use larger paper (--paper {' or '.join(bigger)}) or split the plan" if bigger
                        else "Split the plan into smaller harvest areas"))


def _map_axes(fig: Figure, lay: PageLayout, box: tuple[float, float, float, float]) -> Any:
    pw, ph = lay.page
    fx, fy, fw, fh = lay.frame
    ax = fig.add_axes((fx / pw, fy / ph, fw / pw, fh / ph))
    ax.set_xlim(box[0], box[2])
    ax.set_ylim(box[1], box[3])
    ax.set_autoscale_on(False)
    ax.set_aspect("auto")
    ax.set_xticks([])
    ax.set_yticks([])
    for s in ax.spines.values():
        s.set_linewidth(1.0)
        s.set_zorder(50)
    return ax


def _neighbour_notes(sf: SheetFrame, sheet: Sheet, sheets: list[Sheet]) -> None:
    """"sheet n" at the middle of each frame edge that continues on another sheet."""
    by_pos = {(s.row, s.col): s.number for s in sheets if not s.key_map}
    fx, fy, fw, fh = sf.frame
    for (dr, dc), (px, py), arrow in (((-1, 0), (fx + fw / 2, fy + fh - 0.08), "▲"),
                                      ((1, 0), (fx + fw / 2, fy + 0.08), "▼"),
                                      ((0, -1), (fx + 0.35, fy + fh / 2), "◀"),
                                      ((0, 1), (fx + fw - 0.35, fy + fh / 2), "▶")):
        n = by_pos.get((sheet.row + dr, sheet.col + dc))
        if n is None:
            continue
        text = f"{arrow} sheet {n}" if arrow in "▲◀" else f"sheet {n} {arrow}"
        place_label(sf, text, [(px, py, 0.0)], size=PANEL_FONT + 0.5, color="#333333", weight="bold", z=45)


def draw_key_map(sf: SheetFrame, plan: PlanData, sheets: list[Sheet]) -> None:
    """The key map: harvest area, plan features, roads and streams, and every sheet's outline and number."""
    for name in ("parcels", "roads", "streams", "harvest_area", "skid_trails", "haul_roads", "landings"):
        g = _visible(plan.frames.get(name), sf.box)
        if g is not None:
            draw_layer(sf.ax, name, g.geometry.values)
    for s in sheets:
        if s.key_map:
            continue
        x0, y0, x1, y1 = s.box
        sf.ax.add_patch(Rectangle((x0, y0), x1 - x0, y1 - y0, facecolor="none", edgecolor="#b2182b",
                                  linewidth=1.2, zorder=35))
        px, py = sf.to_page((x0 + x1) / 2, (y0 + y1) / 2)
        place_label(sf, f"sheet {s.number}", [(float(px), float(py), 0.0)], size=11, color="#b2182b",
                    weight="bold", z=45)
    for text, geom in _id_labels(_visible(plan.frames.get("harvest_area"), sf.box)):
        place_label(sf, text, inside(sf, geom), size=LABEL_FONT + 1, color="#1b7837", weight="bold", optional=True)


KEY_MAP_LAYERS = ("parcels", "roads", "streams", "harvest_area", "skid_trails", "haul_roads", "landings")
"""Layers drawn on the key map."""

SHEET_OUTLINE = Symbol("sheet outline and number (sheets at the filing scale)", "fill",
                       {"facecolor": "none", "edgecolor": "#b2182b", "linewidth": 1.2}, 35)


def draw_sheet(plan: PlanData, lay: PageLayout, sheet: Sheet, sheets: list[Sheet], *, applicant: str | None,
               date: str) -> tuple[Figure, list[tuple[str, str]]]:
    """One page: the map frame (features, contours, findings, labels) and the title-block strip."""
    fig = Figure(figsize=lay.page, dpi=72)
    ax = _map_axes(fig, lay, sheet.box)
    sf = SheetFrame(ax, sheet.box, lay.frame, sheet.scale_ft_per_in / plan.ft_per_unit)
    drawn: list[tuple[str, str]] = []
    if sheet.key_map:
        draw_key_map(sf, plan, sheets)
        legend = legend_entries(plan, KEY_MAP_LAYERS) + [(SHEET_OUTLINE, SHEET_OUTLINE.label)]
    else:
        _neighbour_notes(sf, sheet, sheets)
        vis = draw_features(sf, plan)
        drawn = draw_findings(sf, plan.findings)
        label_features(sf, plan, vis)
        label_contours(sf, vis)
        legend = legend_entries(plan)
    px, py, pw, ph = lay.panel
    pax = fig.add_axes((px / lay.page[0], py / lay.page[1], pw / lay.page[0], ph / lay.page[1]))
    pax.set_xlim(0, pw)
    pax.set_ylim(0, ph)
    pax.set_axis_off()
    plan_scale = sheets[-1].scale_ft_per_in
    overlap = OVERLAP_IN * plan_scale if len(sheets) > 1 else None
    flow = PanelFlow(pax, pw, ph)
    fill_panel(flow, plan, sheet, len(sheets), applicant=applicant, date=date, overlap_ft=overlap,
               plan_scale=plan_scale, legend=legend, drawn=drawn)
    if flow.dropped:
        log.warning("sheet %d: %d title-block rows did not fit the %s strip", sheet.number, flow.dropped, lay.paper)
    return fig, drawn


# ------------------------------------------------------------------------------------------
# georeference (ISO 32000 geospatial PDF) with pypdf, imported when a site plan is written (a run
# that writes none does not spend the 0.05 s)

@functools.cache
def _exact() -> type:
    """pypdf's ``FloatObject`` written with 10 decimals (pypdf writes about 8 significant digits)."""
    from pypdf.generic import FloatObject

    class Exact(FloatObject):
        def myrepr(self) -> str:
            return f"{float(self):.10f}".rstrip("0").rstrip(".") or "0"

    return Exact


def _pdf_units(ft_per_unit: float) -> list[NameObject]:
    """ISO 32000 preferred display units (/PDU): linear, area, angle."""
    from pypdf.generic import NameObject

    if abs(ft_per_unit - 1.0) < 1e-9:
        lin = "/FT"
    elif abs(ft_per_unit - 1200 / 3937 / 0.3048) < 1e-9:
        lin = "/USFT"
    else:
        lin = "/M"
    return [NameObject(lin), NameObject("/SQFT" if lin != "/M" else "/SQM"), NameObject("/DEG")]


def measure_dict(crs: pyproj.CRS, box: tuple[float, float, float, float], ft_per_unit: float) -> DictionaryObject:
    """The ``/Measure`` (``/Subtype /GEO``) of a viewport over the ground ``box``.

    ``/LPTS`` are the corners of the viewport's unit square (lower left, upper left, upper
    right, lower right); ``/GPTS`` the same corners as latitude, longitude in the geographic
    CRS of ``crs``; ``/GCS`` names ``crs`` by EPSG code and WKT.
    """
    from pypdf.generic import ArrayObject, DictionaryObject, NameObject, NumberObject, TextStringObject

    x0, y0, x1, y1 = box
    to_geo = pyproj.Transformer.from_crs(crs, crs.geodetic_crs, always_xy=True)
    lon, lat = to_geo.transform(np.array([x0, x0, x1, x1]), np.array([y0, y1, y1, y0]))
    gpts = [v for pair in zip(lat, lon) for v in pair]
    wkt = crs.to_wkt("WKT1_GDAL") or crs.to_wkt()
    gcs = DictionaryObject({NameObject("/Type"): NameObject("/PROJCS" if crs.is_projected else "/GEOGCS"),
                            NameObject("/WKT"): TextStringObject(wkt)})
    epsg = crs.to_epsg()
    if epsg is not None:
        gcs[NameObject("/EPSG")] = NumberObject(int(epsg))
    return DictionaryObject({
        NameObject("/Type"): NameObject("/Measure"), NameObject("/Subtype"): NameObject("/GEO"),
        NameObject("/Bounds"): ArrayObject([NumberObject(v) for v in (0, 0, 0, 1, 1, 1, 1, 0)]),
        NameObject("/LPTS"): ArrayObject([NumberObject(v) for v in (0, 0, 0, 1, 1, 1, 1, 0)]),
        NameObject("/GPTS"): ArrayObject([_exact()(float(v)) for v in gpts]),
        NameObject("/GCS"): gcs, NameObject("/PDU"): ArrayObject(_pdf_units(ft_per_unit)),
    })


def georeference(pdf: bytes, frames: list[tuple[str, tuple[float, float, float, float],
                                                tuple[float, float, float, float]]],
                 crs: pyproj.CRS, ft_per_unit: float, metadata: dict[str, str]) -> bytes:
    """Add an ISO 32000 geospatial viewport (``/VP``) to each page of ``pdf``.

    Parameters
    ----------
    pdf : bytes
        The PDF, one page per entry of ``frames``.
    frames : list of (name, frame_points, ground_box)
        Per page: the viewport's name, the map frame (x0, y0, x1, y1) in PDF points and the
        ground box it shows (xmin, ymin, xmax, ymax) in ``crs``.
    crs : pyproj.CRS
        The working CRS.
    ft_per_unit : float
        Feet per unit of ``crs`` (for the preferred display units).
    metadata : dict
        Document information (``/Title``, ``/Subject``...).

    Returns
    -------
    bytes
    """
    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import ArrayObject, DictionaryObject, NameObject, TextStringObject

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf)))
    if len(writer.pages) != len(frames):
        raise OutputError(f"site plan has {len(writer.pages)} pages but {len(frames)} map frames")
    for page, (name, pts, box) in zip(writer.pages, frames):
        vp = DictionaryObject({
            NameObject("/Type"): NameObject("/Viewport"),
            NameObject("/BBox"): ArrayObject([_exact()(round(v, 6)) for v in pts]),
            NameObject("/Name"): TextStringObject(name),
            NameObject("/Measure"): measure_dict(crs, box, ft_per_unit),
        })
        page[NameObject("/VP")] = ArrayObject([vp])
    writer.add_metadata({f"/{k}": v for k, v in metadata.items()})
    buf = io.BytesIO()
    writer.write(buf)
    return buf.getvalue()


# ------------------------------------------------------------------------------------------
# entry points

@dataclass
class SitePlanPdf:
    """A rendered site plan.

    Attributes
    ----------
    pdf : bytes
        The georeferenced PDF.
    layout : PageLayout
    sheets : list of Sheet
        One per page, page order (the key map first when there is one).
    missing : list of str
        Elements a-k (with the missing layers) the inputs did not supply.
    marked : list of (rule id, status)
        Findings labelled on the map sheets.
    """

    pdf: bytes
    layout: PageLayout
    sheets: list[Sheet]
    missing: list[str]
    marked: list[tuple[str, str]]


def render_siteplan(result: Result, *, scale_ft_per_in: float | None = None, paper: str = "letter",
                    orientation: str = "auto", applicant: str | None = None,
                    date: str | dt.date | None = None) -> SitePlanPdf:
    """Draw the site plan of a harvest check as a true-scale, georeferenced vector PDF.

    Parameters
    ----------
    result : Result
        Of :func:`~geoconstraints.commands.check_harvest`, with its layers (and DEM for contours).
    scale_ft_per_in : float, optional
        Feet of ground per inch of paper; default and maximum: HRV-002 ``min_scale_ft_per_in``
        (the law's "1 in = 500 ft"). A larger plan (smaller number) is allowed.
    paper : {"letter", "tabloid", "arch-d"}
    orientation : {"auto", "portrait", "landscape"}
    applicant : str, optional
        Printed in the title block ("not stated" when missing).
    date : str or date, optional
        Printed in the title block; default the Result's run date (UTC).

    Returns
    -------
    SitePlanPdf

    Raises
    ------
    InputError
        A scale smaller than the law's minimum, NaN, inf or <= 0, or one needing more than
        :data:`MAX_SHEETS` sheets (:func:`check_sheets`); an unknown paper or orientation.
    RulebookError
        The rulebook has no HRV-002.

    Examples
    --------
    >>> import geoconstraints as gc
    >>> from geoconstraints.commands import check_harvest
    >>> layers = gc.load_layers(gc.sample_path("vestal_sample.gpkg"), dem=gc.sample_path("dem.tif"))
    >>> plan = render_siteplan(check_harvest(layers, gc.load_rulebook("vestal")), applicant="A. Forester")
    >>> plan.pdf[:5], len(plan.sheets), plan.layout.page_points
    (b'%PDF-', 1, (612.0, 792.0))
    """
    # imported here: a run that writes no site plan does not spend the 0.08 s
    from matplotlib.backends.backend_pdf import PdfPages

    rule = site_plan_rule(result.rulebook)
    scale = check_scale(rule.t("min_scale_ft_per_in") if scale_ft_per_in is None else scale_ft_per_in, rule)
    if paper not in PAPERS:
        raise InputError(f"--paper {paper!r} is not one of {', '.join(PAPERS)}")
    plan = prepare_plan(result, scale)
    check_sheets(plan, paper, orientation, scale, rule)  # before laying out or drawing a sheet
    lay, sheets = plan_sheets(plan.extent, paper, orientation, scale, plan.ft_per_unit)
    boxes = np.array([s.box for s in sheets])
    load_frames(plan, (boxes[:, 0].min(), boxes[:, 1].min(), boxes[:, 2].max(), boxes[:, 3].max()))
    day = date.isoformat() if isinstance(date, dt.date) else (date or result.started.strftime("%Y-%m-%d"))
    buf = io.BytesIO()
    marked: list[tuple[str, str]] = []
    frames = []
    fx, fy, fw, fh = lay.frame
    pts = (fx * 72, fy * 72, (fx + fw) * 72, (fy + fh) * 72)
    with (matplotlib.rc_context({"pdf.fonttype": 42, "hatch.linewidth": 0.5, "font.family": "DejaVu Sans"}),
          PdfPages(buf, metadata={"Creator": f"geoconstraints {__version__}", "CreationDate": None}) as pdf):
        for sheet in sheets:
            fig, drawn = draw_sheet(plan, lay, sheet, sheets, applicant=applicant, date=day)
            pdf.savefig(fig)
            marked += drawn
            frames.append((f"sheet {sheet.number}" + (" key map" if sheet.key_map else ""), pts, sheet.box))
    title = "Timber-harvest site plan" + (f", {applicant.strip()}" if applicant and applicant.strip() else "")
    meta = {"Title": visible_text(title),
            "Subject": visible_text(f"{rule.citation}; 1 in = {num_text(scale)} ft; rulebook "
                                    f"{result.rulebook.name} {result.rulebook.version}")}
    data = georeference(buf.getvalue(), frames, plan.crs, plan.ft_per_unit, meta)
    missing = [f"{el.key} ({', '.join(m)})" for el, _, m in plan.elements if m]
    return SitePlanPdf(data, lay, sheets, missing, sorted(set(marked)))


def write_siteplan(result: Result, out_dir: str | os.PathLike[str], **kwargs: Any) -> tuple[Path, SitePlanPdf]:
    """Render the site plan (:func:`render_siteplan` keywords) and write ``siteplan.pdf`` into ``out_dir``.

    The folder is created if missing; an input is never overwritten; the file is written atomically.
    """
    plan = render_siteplan(result, **kwargs)
    inputs = result.layers.input_paths() if result.layers is not None else set()
    out = files.prepare_out_dir(out_dir, inputs)
    target = out / SITEPLAN_NAME
    files.guard_target(target, inputs)
    with files.atomic_path(target) as tmp:
        tmp.write_bytes(plan.pdf)
    return target, plan
