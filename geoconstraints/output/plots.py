"""Plots of a Result as PNG images (matplotlib, Agg, offline): road profiles, the phasing
timeline and the SFHA shares of a parcel screening.

* :func:`road_profiles` / :func:`render_profile`: each haul road and skid trail of a harvest
  check, elevation against horizontal distance from the DEM, shaded by grade class, the runs
  over HRV-010's limit highlighted and HRV-030's water bars marked;
* :func:`timeline_data` / :func:`render_timeline`: disturbed acres over time
  (``disturbance_timeline`` of a stormwater check), SWP-005's limit and the peak;
* :func:`sfha_histogram_data` / :func:`render_sfha_histogram`: how many parcels have what share
  in the special flood hazard area (``parcels`` table of a screening).

:func:`render_plots` gives every plot that applies to a Result, :func:`plot_data_uris` the
same as ``data:`` URIs (for report.html), :func:`write_plots` writes them as ``plots/*.png``.
Thresholds come from the Result's rulebook; the data plotted are returned by the ``*_data``
functions so they can be checked before drawing.
"""

from __future__ import annotations

import base64
import io
import itertools
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import shapely
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from geoconstraints.errors import OutputError
from geoconstraints.geometry import terrain
from geoconstraints.output import files, styles
from geoconstraints.result import Result
from geoconstraints.rules.harvest import grade_settings
from geoconstraints.text import visible_text
from geoconstraints.units import ft_per_unit

log = logging.getLogger(__name__)

PLOTS_DIR = "plots"
"""Sub-folder of the output folder holding the PNG files."""

DPI = 110
"""Resolution of the PNG plots."""

ROAD_LAYERS: tuple[str, ...] = ("haul_roads", "skid_trails")
"""Layers whose profiles are drawn."""

GRADE_COLORS: tuple[str, ...] = ("#d9d9d9", "#c7e9c0", "#fee391", "#fec44f", "#fe9929", "#d7301f")
"""Fill colours of the grade classes, gentlest first (the last is over HRV-010's limit)."""

_ON_LINE_FT = 0.5
"""A grade run or water bar within this distance of a road part lies on that part."""


# ------------------------------------------------------------------------------------------
# road profiles

@dataclass
class RoadProfile:
    """The data of one road profile plot.

    Attributes
    ----------
    layer, road_id : str
        ``haul_roads`` / ``skid_trails`` and the feature id.
    part : int
        Part number of a multi-part road (0 for a single line).
    dist_ft, z_ft : ndarray
        Horizontal distance from the start and DEM elevation (NaN off the DEM), feet.
    grade_pct : ndarray
        Grade of each segment (between consecutive samples), filtered as HRV-010 filters it (the
        running median of :func:`~geoconstraints.geometry.terrain.filter_grades` over the same
        window); NaN where not evaluated.
    runs : DataFrame
        The Result's ``grade_runs`` rows on this part (``start_ft``, ``end_ft``, ``length_ft``,
        ``mean_grade_pct``, ``max_grade_pct``, ``exceeds``, ``cut_short``: HRV-010 review, the
        joined stretch through it not known).
    water_bars_ft : ndarray
        Distances of the Result's water bars on this part.
    max_grade_pct, max_run_ft : float
        HRV-010's limit (NaN when the rulebook has no HRV-010).
    class_edges : list of float
        Grade class boundaries (HRV-030's band bounds and HRV-010's limit), ascending.
    """

    layer: str
    road_id: str
    part: int
    dist_ft: np.ndarray
    z_ft: np.ndarray
    grade_pct: np.ndarray
    runs: pd.DataFrame
    water_bars_ft: np.ndarray
    max_grade_pct: float
    max_run_ft: float
    class_edges: list[float] = field(default_factory=list)

    @property
    def exceeding(self) -> pd.DataFrame:
        """The runs over the limit (HRV-010 violations), as highlighted."""
        return self.runs[self.runs["exceeds"].astype(bool)]


def grade_classes(result: Result) -> tuple[list[float], float, float, float]:
    """(class edges, max grade %, max run ft, grade filter window ft) from HRV-010 and HRV-030.

    The edges are HRV-030's ``min_grade_pct`` and the lower bounds of its water-bar table's
    bands, then HRV-010's ``max_grade_pct``.
    """
    rb = result.rulebook.rules
    r10, r30 = rb.get("HRV-010"), rb.get("HRV-030")
    edges: list[float] = []
    if r30 is not None:
        edges.append(r30.t("min_grade_pct"))
        edges += [float(b["min_grade_pct"]) for b in r30.tables.get("water_bar_spacing", [])]
    limit = r10.t("max_grade_pct") if r10 is not None else float("nan")
    if np.isfinite(limit):
        edges.append(limit)
    edges = sorted({e for e in edges if e > 0 and (not np.isfinite(limit) or e <= limit)})
    run = r10.t("max_run_ft") if r10 is not None else float("nan")
    window = r10.t("smoothing_window_ft") if r10 is not None else 0.0
    if result.layers is not None and result.layers.dem is not None:  # the window HRV-010 used on this DEM
        window, _ = terrain.grade_window(result.layers.dem, grade_settings(result.rulebook))
    return edges, limit, run, window


def _on_part(part: Any, geoms: np.ndarray, k: float) -> np.ndarray:
    """Which of ``geoms`` (runs, bars) lie on ``part`` (their middle within :data:`_ON_LINE_FT`)."""
    if not len(geoms):
        return np.zeros(0, dtype=bool)
    mid = np.array([g.interpolate(0.5, normalized=True) if g.length > 0 else g for g in geoms], dtype=object)
    return shapely.distance(mid, part) * k <= _ON_LINE_FT


def _road_parts(geom: Any) -> list[Any]:
    merged = shapely.line_merge(geom) if geom.geom_type == "MultiLineString" else geom
    return [p for p in shapely.get_parts(merged) if p.length > 0]


def road_profiles(result: Result) -> list[RoadProfile]:
    """The profile of every haul road and skid trail (part) of a harvest check with a DEM.

    Returns an empty list without a DEM or roads, or for another command (a ``flood-site`` or
    ``stormwater`` run on a GeoPackage that also holds a harvest plan draws no road profiles). Runs
    and water bars are the Result's own (derived layers ``grade_runs`` and ``water_bars``), matched
    to the road part they lie on.
    """
    layers = result.layers
    if layers is None or layers.dem is None or result.command != "harvest":
        return []
    k = ft_per_unit(layers.crs) or 1.0
    edges, limit, run, window = grade_classes(result)
    runs = result.derived.get("grade_runs")
    bars = result.derived.get("water_bars")
    out: list[RoadProfile] = []
    for layer in ROAD_LAYERS:
        g = layers.get_layer(layer)
        if g is None:
            continue
        for fid, geom in zip(g["feature_id"].astype(str), g.geometry.values):
            mine = runs[(runs["road_layer"] == layer) & (runs["road_id"].astype(str) == fid)] \
                if runs is not None and len(runs) else None
            wb = bars[bars["road_id"].astype(str) == fid] if bars is not None and len(bars) and layer == "haul_roads" \
                else None
            for i, part in enumerate(_road_parts(geom)):
                out.append(_profile(result, layer, fid, i, part, mine, wb, k, edges, limit, run, window))
    return out


def _profile(result: Result, layer: str, fid: str, i: int, part: Any, runs: pd.DataFrame | None,
             bars: pd.DataFrame | None, k: float, edges: list[float], limit: float, run: float,
             window: float) -> RoadProfile:
    layers = result.layers
    if layers is None:  # road_profiles returns none without them
        raise TypeError("a road profile needs the result's layers (its DEM)")
    prof = terrain.line_profile(layers.dem, part, layers.crs)
    grade = terrain.filter_grades(prof.dist_ft, prof.z_ft, window)  # the grades HRV-010 judges
    cols = ["start_ft", "end_ft", "length_ft", "mean_grade_pct", "max_grade_pct", "exceeds", "cut_short"]
    rsub = pd.DataFrame(columns=cols)
    if runs is not None and len(runs):
        on = _on_part(part, np.asarray(runs.geometry.values, dtype=object), k)
        rsub = pd.DataFrame(runs.loc[on, cols]).reset_index(drop=True)
    wb = np.zeros(0)
    if bars is not None and len(bars):
        geoms = np.asarray(bars.geometry.values, dtype=object)
        on = _on_part(part, geoms, k)
        wb = np.sort(shapely.line_locate_point(part, geoms[on]) * k)
    return RoadProfile(layer, fid, i, prof.dist_ft, prof.z_ft, grade, rsub, wb, limit, run, edges)


def _class_labels(edges: list[float], limit: float) -> list[str]:
    bounds = [0.0, *edges]
    out = [f"{a:g}-{b:g} %" for a, b in itertools.pairwise(bounds)]
    last = f"over {bounds[-1]:g} %"
    return out + [last + (" (HRV-010 limit)" if np.isfinite(limit) and bounds[-1] == limit else "")]


def _shade_grades(ax: Any, p: RoadProfile, floor: float) -> list[Patch]:
    """Fill under the profile, each segment in the colour of its grade class; legend patches."""
    d, z = p.dist_ft, p.z_ft
    ok = np.isfinite(z[:-1]) & np.isfinite(z[1:]) & np.isfinite(p.grade_pct)
    cls = np.searchsorted(np.asarray(p.class_edges, dtype=float), p.grade_pct, side="left")
    colors = list(GRADE_COLORS[:len(p.class_edges)]) + [GRADE_COLORS[-1]]
    quads = np.stack([np.column_stack([d[:-1], np.full(len(d) - 1, floor)]), np.column_stack([d[:-1], z[:-1]]),
                      np.column_stack([d[1:], z[1:]]), np.column_stack([d[1:], np.full(len(d) - 1, floor)])], axis=1)
    fc = np.array(colors, dtype=object)[np.clip(cls, 0, len(colors) - 1)]
    face = list(fc[ok])  # edges in the face colour: no hairline seams between the segments
    ax.add_collection(PolyCollection(quads[ok], facecolors=face, edgecolors=face, linewidths=0.4, zorder=1))
    used = sorted(set(np.clip(cls[ok], 0, len(colors) - 1).tolist()))
    labels = _class_labels(p.class_edges, p.max_grade_pct)
    return [Patch(facecolor=colors[c], label=f"grade {labels[c]}") for c in used]


ROAD_WORDS: dict[str, str] = {"haul_roads": "haul road", "skid_trails": "skid trail"}
"""A road layer in the words of a caption."""


def road_subject(p: RoadProfile) -> str:
    """A road profile's road in words, by its own id: ``haul road H-1``, ``skid trail S-2 (part 2)``."""
    return f"{ROAD_WORDS.get(p.layer, p.layer)} {p.road_id}" + (f" (part {p.part + 1})" if p.part else "")


def render_profile(p: RoadProfile, *, width_in: float = 8.0, height_in: float = 3.4, dpi: int = DPI) -> bytes:
    """Draw one road profile (grade classes, runs over the limit, water bars) as PNG bytes."""
    fig = Figure(figsize=(width_in, height_in), dpi=dpi)
    ax = fig.add_axes((0.08, 0.14, 0.64, 0.74))
    ok = np.isfinite(p.z_ft)
    if not ok.any():
        ax.text(0.5, 0.5, "no DEM data along this line", ha="center", va="center", transform=ax.transAxes)
        return _png(fig)
    zmin, zmax = float(np.nanmin(p.z_ft)), float(np.nanmax(p.z_ft))
    pad = max((zmax - zmin) * 0.15, 5.0)
    floor = zmin - pad
    handles: list[Any] = list(_shade_grades(ax, p, floor))
    ax.plot(p.dist_ft, p.z_ft, color="black", linewidth=1.2, zorder=3, label="elevation (DEM)")
    red = styles.STATUS_COLORS["violation"]
    runs = p.runs
    for a, b, length, mean, over in zip(runs["start_ft"].to_numpy(dtype=float), runs["end_ft"].to_numpy(dtype=float),
                                        runs["length_ft"].to_numpy(dtype=float),
                                        runs["mean_grade_pct"].to_numpy(dtype=float),
                                        runs["exceeds"].to_numpy(dtype=bool)):
        ax.axvspan(a, b, color=red if over else "#fd8d3c", alpha=0.22 if over else 0.1,
                   hatch="//" if over else None, zorder=2, linewidth=0)
        if over:
            m = (p.dist_ft >= a) & (p.dist_ft <= b)
            ax.plot(p.dist_ft[m], p.z_ft[m], color=red, linewidth=3.2, zorder=4)
            ax.annotate(f"{length:,.0f} ft at {mean:.0f} % mean", xy=((a + b) / 2, zmax + pad * 0.3),
                        ha="center", va="bottom", fontsize=7, color=red, annotation_clip=False)
    if p.exceeding.shape[0]:
        handles.append(Patch(facecolor=red, alpha=0.35, hatch="//",
                             label=f"HRV-010: over {p.max_grade_pct:g} %\nfor more than {p.max_run_ft:g} ft"))
    short = runs[runs["cut_short"].to_numpy(dtype=bool) & ~runs["exceeds"].to_numpy(dtype=bool)]
    for a, b in zip(short["start_ft"].to_numpy(dtype=float), short["end_ft"].to_numpy(dtype=float)):
        ax.axvspan(a, b, color=styles.STATUS_COLORS["review"], alpha=0.3, hatch="..", zorder=2, linewidth=0)
    if len(short):
        handles.append(Patch(facecolor=styles.STATUS_COLORS["review"], alpha=0.3, hatch="..",
                             label="HRV-010 review: joined\nlength not known"))
    if len(p.water_bars_ft):
        zb = np.interp(p.water_bars_ft, p.dist_ft[ok], p.z_ft[ok])
        ax.plot(p.water_bars_ft, zb, linestyle="none", marker="v", markersize=6, color="#6a3d9a", zorder=5)
        handles.append(ax.lines[-1])
        handles[-1].set_label(f"water bars (HRV-030), {len(p.water_bars_ft)}")
    ax.set_xlim(0, float(p.dist_ft[-1]))
    ax.set_ylim(floor, zmax + pad)
    ax.set_xlabel("horizontal distance along the line (ft)", fontsize=8)
    ax.set_ylabel("elevation (ft)", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.grid(alpha=0.3, linewidth=0.5)
    subject = visible_text(road_subject(p))  # the road's id as read: a bidirectional control as <U+202E>
    g = p.grade_pct[np.isfinite(p.grade_pct)]
    ax.set_title(f"{subject[:1].upper()}{subject[1:]}: {p.dist_ft[-1]:,.0f} ft, steepest {g.max() if len(g) else float('nan'):.1f} %, "
                 f"{len(p.exceeding)} run(s) over the limit", fontsize=9, loc="left")
    fig.legend(handles=handles, loc="upper left", bbox_to_anchor=(0.735, 0.9), fontsize=6.5, frameon=False)
    return _png(fig)


# ------------------------------------------------------------------------------------------
# stormwater phasing timeline

@dataclass
class TimelineData:
    """Disturbed acres per interval of the phasing timeline, with SWP-005's limit and the peak.

    Attributes
    ----------
    table : DataFrame
        The Result's ``disturbance_timeline``.
    edges : DatetimeIndex
        Interval bounds: ``date_from`` of each interval, then the day after the last ``date_to``.
    acres : ndarray
        Disturbed acres of each interval.
    limit_acres : float
        SWP-005 ``max_concurrent_acres`` (NaN when the rulebook has no SWP-005).
    peak_acres : float
        The largest value of ``acres``.
    peak_rows : ndarray of int
        Intervals at the peak (the table's ``peak`` flag).
    """

    table: pd.DataFrame
    edges: pd.DatetimeIndex
    acres: np.ndarray
    limit_acres: float
    peak_acres: float
    peak_rows: np.ndarray


def timeline_data(result: Result) -> TimelineData | None:
    """The data of :func:`render_timeline`, or None when the Result has no phasing timeline."""
    t = result.tables.get("disturbance_timeline")
    if t is None or not len(t):
        return None
    r5 = result.rulebook.rules.get("SWP-005")
    limit = r5.t("max_concurrent_acres") if r5 is not None else float("nan")
    start = pd.to_datetime(t["date_from"])
    edges = pd.DatetimeIndex(list(start) + [pd.to_datetime(t["date_to"]).iloc[-1] + pd.Timedelta(days=1)])
    acres = t["disturbed_acres"].to_numpy(dtype=float)
    peak = t["peak"].to_numpy(dtype=bool) if "peak" in t.columns else acres == acres.max()
    return TimelineData(t, edges, acres, limit, float(acres.max()), np.flatnonzero(peak))


def render_timeline(data: TimelineData, *, width_in: float = 8.0, height_in: float = 3.6, dpi: int = DPI) -> bytes:
    """Draw disturbed acres over time, the limit line and the peak, as PNG bytes."""
    fig = Figure(figsize=(width_in, height_in), dpi=dpi)
    ax = fig.add_axes((0.08, 0.16, 0.9, 0.7))
    x = data.edges.to_numpy()
    y = np.append(data.acres, data.acres[-1])
    ax.fill_between(x, y, step="post", color="#fdb863", alpha=0.6, linewidth=0, label="disturbed at once")
    ax.step(x, y, where="post", color="#b35806", linewidth=1.4)
    red = styles.STATUS_COLORS["violation"]
    for j in data.peak_rows:
        ax.fill_between([x[j], x[j + 1]], [data.acres[j]] * 2, color=red, alpha=0.5, linewidth=0)
    if np.isfinite(data.limit_acres):
        ax.axhline(data.limit_acres, color=red, linestyle="--", linewidth=1.2,
                   label=f"SWP-005 limit: {data.limit_acres:g} acres at one time")
    j = int(data.peak_rows[0]) if len(data.peak_rows) else int(np.argmax(data.acres))
    row = data.table.iloc[j]
    ax.annotate(f"peak {data.peak_acres:,.2f} acres\n{pd.Timestamp(row['date_from']):%Y-%m-%d} to "
                f"{pd.Timestamp(row['date_to']):%Y-%m-%d}\n({row.get('active_ids', '')})",
                xy=(x[j] + (x[j + 1] - x[j]) / 2, data.peak_acres), xytext=(0, 12), textcoords="offset points",
                ha="center", va="bottom", fontsize=7, color=red)
    top = max(data.peak_acres, data.limit_acres if np.isfinite(data.limit_acres) else 0.0)
    ax.set_ylim(0, top * 1.45 + 0.1)
    ax.set_xlim(x[0], x[-1])
    ax.set_ylabel("disturbed acres", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.grid(alpha=0.3, linewidth=0.5)
    ax.legend(fontsize=7, loc="upper left", frameon=False)
    ax.set_title("Soil disturbance over time (phasing plan)", fontsize=9, loc="left")
    fig.autofmt_xdate(rotation=0, ha="center")
    return _png(fig)


# ------------------------------------------------------------------------------------------
# SFHA share histogram (parcel screening)

SHARE_BINS_PCT: tuple[float, ...] = tuple(float(v) for v in range(0, 101, 10))
"""Bins of the SFHA share in percent: none (0), then (0, 10], (10, 20], ... (90, 100]."""


@dataclass
class ShareHistogram:
    """Counts of parcels by SFHA share.

    Attributes
    ----------
    labels : list of str
        ``none`` then ``0-10 %`` ... ``90-100 %``.
    counts : ndarray of int
        Parcels per bar: share exactly 0, then each (a, b] bin.
    not_evaluated : int
        Parcels without flood data (``flood_data == 'no_data'``): not counted.
    partial : int
        Parcels only partly covered by the flood map (counted; their share is a lower bound).
    """

    labels: list[str]
    counts: np.ndarray
    not_evaluated: int
    partial: int


def sfha_histogram_data(result: Result) -> ShareHistogram | None:
    """The data of :func:`render_sfha_histogram`, or None without a ``parcels`` table."""
    t = result.tables.get("parcels")
    if t is None or not len(t) or "sfha_share" not in t.columns:
        return None
    data = t["flood_data"].astype(str) if "flood_data" in t.columns else pd.Series("full", index=t.index)
    ok = (data != "no_data").to_numpy() & t["sfha_share"].notna().to_numpy()
    pct = t["sfha_share"].to_numpy(dtype=float)[ok] * 100.0
    edges = np.asarray(SHARE_BINS_PCT)
    # bins (a, b]: bin i holds a share of more than edges[i] and at most edges[i + 1]
    k = np.searchsorted(edges, pct[pct > 0], side="left") - 1
    counts = np.concatenate([[int((pct == 0).sum())], np.bincount(k, minlength=len(edges) - 1)])
    labels = ["none"] + [f"{a:g}-{b:g} %" for a, b in itertools.pairwise(edges)]
    return ShareHistogram(labels, counts.astype(int), int((~ok).sum()), int((data == "partial").sum()))


def render_sfha_histogram(h: ShareHistogram, *, width_in: float = 7.5, height_in: float = 3.6,
                          dpi: int = DPI) -> bytes:
    """Draw the parcels per SFHA share bar chart as PNG bytes."""
    fig = Figure(figsize=(width_in, height_in), dpi=dpi)
    ax = fig.add_axes((0.09, 0.18, 0.88, 0.6))
    colors = ["#d9d9d9"] + [styles.FLOOD_ZONE_COLORS["AE"]] * (len(h.counts) - 1)
    bars = ax.bar(range(len(h.counts)), h.counts, color=colors, edgecolor="#555555", linewidth=0.5)
    ax.bar_label(bars, labels=[f"{c:,}" for c in h.counts], fontsize=7, padding=2)
    ax.set_xticks(range(len(h.counts)), h.labels, fontsize=7, rotation=30)
    ax.tick_params(axis="y", labelsize=7)
    ax.set_ylabel("parcels", fontsize=8)
    ax.set_xlabel("share of the parcel in the special flood hazard area", fontsize=8)
    ax.set_ylim(0, max(int(h.counts.max()), 1) * 1.15)
    ax.grid(axis="y", alpha=0.3, linewidth=0.5)
    n = int(h.counts.sum())
    notes = [f"{n:,} parcels with flood data"]
    if h.not_evaluated:
        notes.append(f"{h.not_evaluated:,} without flood data not counted (not evaluated)")
    if h.partial:
        notes.append(f"{h.partial:,} only partly covered by the flood map (their share is a lower bound)")
    ax.set_title("Parcels by SFHA share\n" + "\n".join(notes), fontsize=8, loc="left")
    return _png(fig)


# ------------------------------------------------------------------------------------------
# all plots of a Result

def _png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    return buf.getvalue()


@dataclass(frozen=True)
class Plot:
    """One plot of a Result: its file name in plots/, its PNG, and what it shows in words.

    ``subject`` is what a caption names: for a road profile its layer and the road's own id
    (``haul road H-1``, ``skid trail S-2 (part 2)``), never the file name, which may carry a hash of
    the id (:func:`~geoconstraints.output.files.distinct_file_parts`); ``""`` for a plot of the whole
    run (the phasing timeline, the SFHA share histogram).
    """

    name: str
    png: bytes
    subject: str = ""



def drawn_plots(result: Result) -> list[Plot]:
    """Every plot that applies to ``result``, drawn (:func:`render_plots`, with what each shows)."""
    out: list[Plot] = []
    taken: set[str] = set()
    profiles = road_profiles(result)
    parts = {layer: files.distinct_file_parts(p.road_id for p in profiles if p.layer == layer)
             for layer in dict.fromkeys(p.layer for p in profiles)}
    for p in profiles:
        base = f"profile_{p.layer}_{parts[p.layer][str(p.road_id)]}" + (f"_part{p.part + 1}" if p.part else "")
        name, n = f"{base}.png", 2
        while name.casefold() in taken:  # one id twice in a layer (or an id spelled like another's part)
            name, n = f"{base}_{n}.png", n + 1
        taken.add(name.casefold())
        out.append(Plot(name, render_profile(p), road_subject(p)))
    tl = timeline_data(result)
    if tl is not None:
        out.append(Plot("disturbance_timeline.png", render_timeline(tl)))
    h = sfha_histogram_data(result)
    if h is not None:
        out.append(Plot("sfha_share.png", render_sfha_histogram(h)))
    return out


def render_plots(result: Result) -> dict[str, bytes]:
    """Every plot that applies to ``result``: file name (``profile_haul_roads_H-1.png``...) -> PNG bytes.

    Road profiles for a harvest check with a DEM, the phasing timeline for a stormwater check
    with dates, the SFHA share histogram for a parcel screening. The names are distinct under case
    folding (:func:`~geoconstraints.output.files.distinct_file_parts`: roads ``H-1`` and ``h-1`` of one
    layer are ``profile_haul_roads_H-1-21eef697.png`` and ``profile_haul_roads_h-1-54f50aff.png``, not
    one file on a case-insensitive file system).
    """
    return {p.name: p.png for p in drawn_plots(result)}


def data_uri(png: bytes) -> str:
    """``data:image/png;base64,...`` of ``png`` (for an ``<img src>`` in report.html)."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def plot_data_uris(result: Result) -> dict[str, str]:
    """:func:`render_plots` as ``data:image/png;base64,...`` URIs (for an ``<img src>`` in report.html)."""
    return {name: data_uri(png) for name, png in render_plots(result).items()}


def write_plots(result: Result, out_dir: str | os.PathLike[str]) -> dict[str, Path]:
    """Write :func:`render_plots` into ``out_dir/plots/`` (created if needed); return ``plots/<name>`` -> path.

    Nothing is written (and no folder made) when no plot applies. An input is never overwritten.
    """
    pngs = render_plots(result)
    if not pngs:
        return {}
    inputs = result.layers.input_paths() if result.layers is not None else set()
    inputs |= {Path(p).resolve() for p in result.extra_inputs.values()}
    out = files.prepare_out_dir(out_dir, inputs)
    folder = out / PLOTS_DIR
    if folder.exists() and not folder.is_dir():
        raise OutputError(f"{folder} is a file; the plots go into a folder of that name. Choose another --out")
    folder.mkdir(exist_ok=True)
    written: dict[str, Path] = {}
    for name, png in pngs.items():
        target = folder / name
        files.guard_target(target, inputs)
        with files.atomic_path(target) as tmp:
            tmp.write_bytes(png)
        written[f"{PLOTS_DIR}/{name}"] = target
    return written
