"""Timber-harvest checks: every HRV rule of Vestal Code 1966 § 44-VI-6.

Each rule is one function decorated with :func:`~geoconstraints.rulebook.registry.check`; every
number comes from the rule's rulebook entry. :func:`geoconstraints.commands.check_harvest`
builds the :class:`HarvestContext` and runs them.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from shapely.geometry import MultiPoint, Polygon

from geoconstraints.errors import GeometryError, InputError
from geoconstraints.geometry import buffers as bf
from geoconstraints.geometry import terrain as tr
from geoconstraints.io.layers import Layers
from geoconstraints.rulebook.findings import Finding
from geoconstraints.rulebook.model import Rule, Rulebook
from geoconstraints.rulebook.registry import check
from geoconstraints.text import id_list
from geoconstraints.units import sqft_to_acres

log = logging.getLogger(__name__)

PLAN_LAYERS: tuple[str, ...] = ("harvest_area", "landings", "haul_roads", "skid_trails")
"""The plan's own layers (the extent of the derived layers is built around them)."""

ROAD_LAYERS: tuple[str, ...] = ("haul_roads", "skid_trails")
"""Line layers whose grades are measured (HRV-010)."""

Items = list[Finding | gpd.GeoDataFrame]

NO_HARVEST_AREA = (
    "layer harvest_area is missing or empty: the harvest command needs the plan's harvest areas. "
    "Add a polygon layer named harvest_area to the GeoPackage or pass --harvest-area PATH[:LAYER]"
)


def _truthy(v: Any) -> bool:
    if isinstance(v, str):
        return v.strip().lower() in ("1", "true", "t", "yes", "y")
    return bool(v)




# ------------------------------------------------------------------------------------------
# context


@dataclass
class BufferBuild:
    """Buffer strips of HRV-020..022 and what could not be built.

    Attributes
    ----------
    strips : GeoDataFrame
        :data:`geoconstraints.buffers.BUFFER_COLUMNS` + geometry, clipped around the plan.
    missing : dict[str, str]
        Buffer kind -> why it was not built (input layer or rule missing).
    notes : dict[str, str]
        Buffer kind -> how it was measured (for finding details).
    """

    strips: gpd.GeoDataFrame
    missing: dict[str, str] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)


@dataclass
class RoadTerrain:
    """Grade runs and water bars of one haul road or skid trail (all its parts)."""

    layer: str
    feature_id: str
    length_ft: float
    runs: list[Any] = field(default_factory=list)  # terrain.Run
    gaps: list[Any] = field(default_factory=list)  # terrain.Stretch
    evaluated_length_ft: float = 0.0
    max_grade_pct: float = float("nan")
    mean_grade_pct: float = float("nan")
    water_bars: gpd.GeoDataFrame | None = None
    error: str = ""

    @property
    def fully_evaluated(self) -> bool:
        """True when the DEM covered the whole road."""
        return not self.error and not self.gaps


@dataclass
class HarvestContext:
    """Everything the HRV checks read: the layers, the rulebook and lazily derived data.

    Parameters
    ----------
    layers : Layers
        Inputs in the working CRS (feet); ``layers.dem`` is the DEM or None.
    rulebook : Rulebook
        Derived data take their parameters from the rulebook's own rules (buffers from
        HRV-020..022, grades from HRV-010, water bars from HRV-030, contours from HRV-002).
    """

    layers: Layers
    rulebook: Rulebook
    landing_rows: dict[str, dict[str, Any]] = field(default_factory=dict)

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

    def rule(self, rule_id: str) -> Rule | None:
        """Rule ``rule_id`` of the rulebook, or None when the rulebook has no such rule."""
        return self.rulebook.rules.get(rule_id)

    def extent(self, margin_ft: float) -> Polygon | None:
        """Bounding box of the plan layers grown by ``margin_ft``."""
        return bf.plan_extent((self.get(r) for r in PLAN_LAYERS), margin_ft)

    def note_landing(self, landing_id: str, **values: Any) -> None:
        """Record per-landing values for the ``landings`` table."""
        self.landing_rows.setdefault(str(landing_id), {"landing_id": str(landing_id)}).update(values)

    # -- buffer strips (HRV-020..022) ------------------------------------------------------
    @cached_property
    def buffers(self) -> BufferBuild:
        """Buffer strips of every kind the inputs allow."""
        frames: list[gpd.GeoDataFrame] = []
        missing: dict[str, str] = {}
        notes: dict[str, str] = {}
        zsrc = bf.zoning_source(self.get("zoning"), self.get("parcels"))

        r = self.rule("HRV-020")
        if r is None:
            missing["stream"] = missing["road"] = "rule HRV-020 is not in the rulebook"
        else:
            ext = self.extent(r.t("clip_margin_ft"))
            w = r.t("buffer_width_ft")
            inter = _truthy(r.s("include_intermittent"))
            streams = self.get("streams")
            if streams is None:
                missing["stream"] = "no streams layer"
            else:
                frames.append(
                    bf.stream_buffers(streams, w, include_intermittent=inter, extent=ext, rule_id=r.id)
                )
                notes["stream"] = (
                    "perennial and intermittent streams"
                    if inter
                    else "perennial streams only (intermittent streams excluded, switch "
                    "include_intermittent=false)"
                ) + "; a stream of unknown kind counts as a stream"
            roads, row = self.get("roads"), self.get("row")
            if roads is None and row is None:
                missing["road"] = "no roads or row layer"
            else:
                frames.append(bf.road_buffers(roads, w, row=row, extent=ext, rule_id=r.id))
                notes["road"] = (
                    "measured from the right-of-way line (row layer); stretches of road "
                    "outside every row polygon from their centre line"
                    if row is not None
                    else "measured from the road centre line (no row layer)"
                )
        r = self.rule("HRV-021")
        if r is None:
            missing["property_line"] = "rule HRV-021 is not in the rulebook"
        else:
            parcels = self.get("parcels")
            if parcels is None:
                missing["property_line"] = "no parcels layer"
            elif zsrc is None:
                missing["property_line"] = "no zoning layer and no parcels.zoning field"
            else:
                reading = str(r.s("property_line_reading"))
                frames.append(
                    bf.property_line_buffers(
                        parcels,
                        r.t("buffer_width_ft"),
                        districts=r.p("districts"),
                        reading=reading,
                        zoning=self.get("zoning"),
                        extent=self.extent(r.t("clip_margin_ft")),
                        touch_tolerance_ft=r.t("touch_tolerance_ft"),
                        rule_id=r.id,
                    )
                )
                notes["property_line"] = f"districts from the {zsrc}; reading {reading}"
        r = self.rule("HRV-022")
        if r is None:
            missing["dwelling"] = "rule HRV-022 is not in the rulebook"
        else:
            dw = self.get("dwellings")
            if dw is None:
                missing["dwelling"] = "no dwellings layer"
            elif zsrc is None:
                missing["dwelling"] = "no zoning layer and no parcels.zoning field"
            else:
                frames.append(
                    bf.dwelling_buffers(
                        dw,
                        r.t("buffer_width_ft"),
                        districts=r.p("districts"),
                        zoning=self.get("zoning"),
                        parcels=self.get("parcels"),
                        extent=self.extent(r.t("clip_margin_ft")),
                        rule_id=r.id,
                    )
                )
                notes["dwelling"] = f"district at each dwelling from the {zsrc}"
        frames = [f for f in frames if len(f)]
        strips = pd.concat(frames, ignore_index=True) if frames else bf.empty_buffers(self.crs)
        strips = gpd.GeoDataFrame(strips, geometry="geometry", crs=self.crs)
        return BufferBuild(strips, missing, notes)

    # -- rights-of-way (HRV-025, HRV-026, HRV-027) -------------------------------------------
    def row_shapes(self, default_row_width_ft: float) -> gpd.GeoDataFrame:
        """Public rights-of-way as polygons (``row`` layer, else centre lines widened)."""
        return bf.row_polygons(self.get("roads"), self.get("row"), default_row_width_ft=default_row_width_ft)

    def public_road_geoms(self) -> np.ndarray:
        """Road centre lines and ROW polygons (what a haul road must reach)."""
        parts = [g.geometry.values for g in (self.get("roads"), self.get("row")) if g is not None]
        return (
            np.concatenate([np.asarray(p, dtype=object) for p in parts])
            if parts
            else np.array([], dtype=object)
        )

    def public_road_ids(self) -> np.ndarray:
        """Ids aligned with :meth:`public_road_geoms` (``roads R1`` / ``row W1``)."""
        out = [
            ("roads " if role == "roads" else "row ") + g["feature_id"].astype(str).to_numpy().astype(object)
            for role in ("roads", "row")
            if (g := self.get(role)) is not None
        ]
        return np.concatenate(out) if out else np.array([], dtype=object)

    # -- terrain (HRV-010, HRV-030) ------------------------------------------------------------
    @cached_property
    def terrain(self) -> dict[tuple[str, str], RoadTerrain]:
        """Grade runs (and water bars for haul roads) of every road, keyed (layer, feature_id)."""

        dem = self.layers.dem
        r10, r30 = self.rule("HRV-010"), self.rule("HRV-030")
        out: dict[tuple[str, str], RoadTerrain] = {}
        for layer in ROAD_LAYERS:
            g = self.get(layer)
            if g is None:
                continue
            lengths = g.geometry.length.to_numpy()
            for fid, geom, length in zip(g["feature_id"].astype(str), g.geometry.values, lengths):
                rt = RoadTerrain(layer, fid, float(length))
                out[(layer, fid)] = rt
                if dem is None:
                    rt.error = "no DEM given (--dem)"
                    continue
                merged = shapely.line_merge(geom) if geom.geom_type == "MultiLineString" else geom
                bars: list[gpd.GeoDataFrame] = []
                maxg, dz_sum, ev_sum = [], 0.0, 0.0
                for part in shapely.get_parts(merged):
                    if part.length == 0:
                        continue
                    try:
                        prof = tr.line_profile(dem, part, self.crs)
                    except GeometryError as exc:
                        rt.error = str(exc)
                        break
                    if r10 is not None:
                        res = tr.grade_runs(
                            prof,
                            max_grade_pct=r10.t("max_grade_pct"),
                            max_run_ft=r10.t("max_run_ft"),
                            smoothing_window_ft=r10.t("smoothing_window_ft"),
                            run_length=str(r10.s("run_length")),
                        )
                    else:
                        res = tr.grade_runs(prof, max_grade_pct=np.inf, max_run_ft=np.inf)
                    rt.runs.extend(res.runs)
                    rt.gaps.extend(res.not_evaluated)
                    rt.evaluated_length_ft += res.evaluated_length_ft
                    if np.isfinite(res.max_grade_pct):
                        maxg.append(res.max_grade_pct)
                    dz = np.abs(np.diff(prof.z_ft))
                    ok = np.isfinite(dz)
                    dz_sum += float(dz[ok].sum())
                    ev_sum += float(np.diff(prof.dist_ft)[ok].sum())
                    if layer == "haul_roads" and r30 is not None:
                        wb = tr.place_water_bars(
                            prof,
                            table=r30.tables["water_bar_spacing"],
                            min_grade_pct=r30.t("min_grade_pct"),
                            spacing_end=str(r30.s("spacing_end")),
                            between_bands=str(r30.s("between_bands")),
                        )
                        bars.append(wb)
                rt.max_grade_pct = max(maxg) if maxg else float("nan")
                rt.mean_grade_pct = dz_sum / ev_sum * 100.0 if ev_sum > 0 else float("nan")
                if bars:
                    rt.water_bars = pd.concat(bars, ignore_index=True) if len(bars) > 1 else bars[0]
        return out

    @cached_property
    def grade_runs_layer(self) -> gpd.GeoDataFrame:
        """Derived layer ``grade_runs``: every stretch steeper than the limit, flag ``exceeds``."""
        rows, geoms = [], []
        for (layer, fid), rt in self.terrain.items():
            for run in rt.runs:
                rows.append(
                    {
                        "road_layer": layer,
                        "road_id": fid,
                        "start_ft": run.start_ft,
                        "end_ft": run.end_ft,
                        "length_ft": run.length_ft,
                        "slope_length_ft": run.slope_length_ft,
                        "mean_grade_pct": run.mean_grade_pct,
                        "max_grade_pct": run.max_grade_pct,
                        "exceeds": bool(run.exceeds),
                    }
                )
                geoms.append(run.geometry)
        cols = [
            "road_layer",
            "road_id",
            "start_ft",
            "end_ft",
            "length_ft",
            "slope_length_ft",
            "mean_grade_pct",
            "max_grade_pct",
            "exceeds",
        ]
        return gpd.GeoDataFrame(
            pd.DataFrame(rows, columns=cols), geometry=gpd.GeoSeries(geoms, crs=self.crs).values, crs=self.crs
        )

    @cached_property
    def water_bars_layer(self) -> gpd.GeoDataFrame:
        """Derived point layer ``water_bars`` along the haul roads."""
        frames = []
        for (layer, fid), rt in self.terrain.items():
            if rt.water_bars is not None and len(rt.water_bars):
                wb = rt.water_bars.copy()
                wb.insert(0, "road_id", fid)
                frames.append(wb)
        cols = ["road_id", "dist_ft", "grade_pct", "band", "spacing_ft", "min_spacing_ft", "max_spacing_ft"]
        if not frames:
            return gpd.GeoDataFrame(
                pd.DataFrame(columns=cols), geometry=gpd.GeoSeries([], crs=self.crs).values, crs=self.crs
            )
        out = pd.concat(frames, ignore_index=True)
        return gpd.GeoDataFrame(out[cols], geometry=out.geometry.values, crs=self.crs)

    # -- contours (HRV-002) ---------------------------------------------------------------------
    @cached_property
    def contour_lines(self) -> gpd.GeoDataFrame:
        """Derived layer ``contours`` at the HRV-002 interval around the plan (empty without DEM)."""

        empty = gpd.GeoDataFrame(
            {"elev_ft": pd.Series(dtype="float64")},
            geometry=gpd.GeoSeries([], crs=self.crs).values,
            crs=self.crs,
        )
        r = self.rule("HRV-002")
        dem = self.layers.dem
        if r is None or dem is None:
            return empty
        ext = self.extent(r.t("contour_margin_ft"))
        if ext is None:
            return empty
        in_dem = gpd.GeoSeries([ext], crs=self.crs).to_crs(dem.crs)
        if not in_dem.intersects(dem.bounds_polygon()).iloc[0]:
            return empty
        lines = tr.contours(dem, r.t("contour_interval_ft"), bounds=tuple(in_dem.total_bounds), crs=self.crs)
        if not len(lines):
            return empty
        clipped = shapely.intersection(lines.geometry.values, ext)
        keep = ~shapely.is_empty(clipped)
        return gpd.GeoDataFrame(
            {"elev_ft": lines["elev_ft"].to_numpy()[keep]}, geometry=clipped[keep], crs=self.crs
        )

    def road_table(self) -> pd.DataFrame:
        """One row per haul road / skid trail: length, grades, runs, water bars."""
        rows = []
        for (layer, fid), rt in self.terrain.items():
            rows.append(
                {
                    "road_layer": layer,
                    "road_id": fid,
                    "length_ft": rt.length_ft,
                    "evaluated_length_ft": rt.evaluated_length_ft,
                    "max_grade_pct": rt.max_grade_pct,
                    "mean_grade_pct": rt.mean_grade_pct,
                    "steep_runs": len(rt.runs),
                    "runs_over_limit": sum(bool(r.exceeds) for r in rt.runs),
                    "not_evaluated_ft": float(sum(s.length_ft for s in rt.gaps)),
                    "water_bars": (len(rt.water_bars) if rt.water_bars is not None else 0)
                    if layer == "haul_roads"
                    else None,
                    "note": rt.error,
                }
            )
        cols = [
            "road_layer",
            "road_id",
            "length_ft",
            "evaluated_length_ft",
            "max_grade_pct",
            "mean_grade_pct",
            "steep_runs",
            "runs_over_limit",
            "not_evaluated_ft",
            "water_bars",
            "note",
        ]
        return pd.DataFrame(rows, columns=cols)

    def landing_table(self) -> pd.DataFrame:
        """One row per landing: buffer strips it lies in, ROW distance, connection."""
        cols = ["landing_id", "in_buffer", "buffer_kinds", "row_distance_ft", "connected", "via"]
        return pd.DataFrame(list(self.landing_rows.values())).reindex(columns=cols)


# ------------------------------------------------------------------------------------------
# helpers for checks


def _missing_layer(rule: Rule, layer: str, why: str = "") -> Finding:
    return rule.finding(
        "not_evaluated", subject_layer=layer, subject_id="", detail=why or f"no {layer} layer given"
    )


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


@check("HRV-001")
def check_commercial_volume(ctx: HarvestContext, rule: Rule) -> Items:
    """Licence required when the harvest volume exceeds any of the commercial limits.

    Volumes are summed over contiguous harvest areas of the same owner (all contiguous areas
    when there is no ``owner`` field). ``cords`` and ``cubic_feet`` are one measure (a cubic
    foot is 1 / ``standard_cord_cuft`` cord; an area's ``cords`` wins when it has both) and are
    summed together; ``board_feet`` is summed apart. A group is ``review`` when a known part of
    its volume already exceeds a limit, ``pass`` only when every member's volume is known in
    one measure, else ``not_evaluated``.
    """
    ha = ctx.harvest_area
    n = len(ha)

    def num(name: str) -> pd.Series:
        v = pd.to_numeric(ha[name], errors="coerce") if name in ha.columns else np.nan
        return pd.Series(v, index=ha.index, dtype="float64").reset_index(drop=True)

    lim_c, lim_cuft, lim_bf = (rule.t(k) for k in ("volume_limit_cords", "volume_limit_cuft", "volume_limit_bf"))
    cord_cuft = rule.t("standard_cord_cuft")
    cords_eq = num("cords").fillna(num("cubic_feet") / cord_cuft)
    bfeet = num("board_feet")
    have = [f for f in ("cords", "cubic_feet", "board_feet") if f in ha.columns]
    # contiguous groups of the same owner (connected components of the touch graph)
    a, b = ha.sindex.query(ha.geometry.values, predicate="intersects")
    owner = ha["owner"].astype(str).to_numpy() if "owner" in ha.columns else np.array([""] * n)
    same = owner[a] == owner[b]
    graph = coo_matrix((np.ones(int(same.sum())), (a[same], b[same])), shape=(n, n))
    _, comp = connected_components(graph, directed=False)
    vols = pd.DataFrame({"c": cords_eq, "b": bfeet, "nc": cords_eq.isna(), "nb": bfeet.isna()})
    by = vols.groupby(comp)
    grp = pd.DataFrame(
        {"c": by["c"].sum(min_count=1), "b": by["b"].sum(min_count=1), "nc": by["nc"].sum(), "nb": by["nb"].sum()}
    )
    g = grp.loc[comp].reset_index(drop=True)
    s_c, s_b = g["c"].to_numpy(), g["b"].to_numpy()
    over_c = np.nan_to_num(s_c) > lim_c
    over_c |= np.nan_to_num(s_c) * cord_cuft > lim_cuft
    over_b = np.nan_to_num(s_b) > lim_bf
    complete = (g["nc"].to_numpy() == 0) | (g["nb"].to_numpy() == 0)
    status = np.where(over_c | over_b, "review", np.where(complete, "pass", "not_evaluated"))
    use_bf = np.isnan(s_c) | (~over_c & over_b)
    measured = np.where(use_bf, s_b, s_c)
    threshold = np.where(use_bf, lim_bf, lim_c)
    ids = _plan_ids(ha)
    members = pd.Series(ids).groupby(comp).agg(lambda x: ", ".join(x)).loc[comp].to_numpy()
    no_volume = pd.Series(ids[(cords_eq.isna() & bfeet.isna()).to_numpy()], dtype=object)
    own = (
        "same owner"
        if "owner" in ha.columns
        else "no owner field, all contiguous areas taken as one ownership"
    )
    exempt = "; ".join(
        f"{str(e.get('text', e.get('key', ''))).rstrip('.')} ({e.get('citation', rule.citation)})"
        for e in rule.p("exemptions", [])
    )
    details = []
    for i in range(n):
        parts = []
        if not np.isnan(s_c[i]):
            parts.append(
                f"{s_c[i]:,.6g} cords = {s_c[i] * cord_cuft:,.0f} cu ft (limits {lim_c:,.0f} cords, "
                f"{lim_cuft:,.0f} cu ft)"
            )
        if not np.isnan(s_b[i]):
            parts.append(f"{s_b[i]:,.0f} board feet (limit {lim_bf:,.0f})")
        txt = "; ".join(parts) if parts else "fields cords, cubic_feet, board_feet " + ("empty" if have else "absent")
        mem = members[i].split(", ")
        if len(mem) > 1:
            txt += f"; summed over contiguous harvest areas {members[i]} ({own})"
        if status[i] == "not_evaluated" and parts:
            lack = [m for m in mem if m in set(no_volume)]
            txt += (
                f"; volume not given for {id_list(lack)}"
                if lack
                else "; cords / cu ft and board feet given for different areas, no common sum"
            )
        if status[i] == "review" and exempt:
            txt += f"; exemptions not assessed: {exempt}"
        details.append(txt)
    det = np.array(details, dtype=object)
    geoms = np.asarray(ha.geometry.values, dtype=object)
    out: Items = []
    for mask, unit in ((~use_bf, "cords"), (use_bf, "bf")):
        if mask.any():
            out.append(
                rule.findings(
                    status[mask],
                    subject_layer="harvest_area",
                    subject_id=ids[mask],
                    measured=measured[mask],
                    threshold=threshold[mask],
                    unit=unit,
                    geometry=geoms[mask],
                    crs=ctx.crs,
                    detail=det[mask],
                )
            )
    return out


# ------------------------------------------------------------------------------------------
# HRV-002 site plan contents + contours


@check("HRV-002")
def check_site_plan(ctx: HarvestContext, rule: Rule) -> Items:
    """Checklist of site-plan elements a..k; contours at the rulebook interval from the DEM."""
    out: Items = []
    for el in rule.p("elements"):
        key, text, roles = el["key"], el["text"], list(el.get("roles") or [])
        zsrc = bf.zoning_source(ctx.get("zoning"), ctx.get("parcels"))
        present = [
            r
            for r in roles
            if (
                ctx.layers.dem is not None
                if r == "dem"
                else zsrc is not None
                if r == "zoning"
                else ctx.get(r) is not None
            )
        ]
        missing = [r for r in roles if r not in present]
        status = "info" if not missing else "not_evaluated"
        detail = f"{text} Layers: {', '.join(present) or 'none'}"
        if missing:
            detail += f"; missing: {', '.join(missing)}"
        if key == "b" and not missing:
            c = ctx.contour_lines
            detail = (
                f"{text} {len(c)} contour levels at {rule.t('contour_interval_ft'):g} ft derived from the "
                f"DEM (layer contours)"
            )
            if not len(c):
                status, detail = "not_evaluated", f"{text} The DEM does not cover the plan: no contours"
        if key == "j":
            bb = ctx.buffers
            built = sorted({k for k in bf.BUFFER_KINDS if k not in bb.missing})
            status = "info" if not bb.missing else "not_evaluated"
            detail = (
                f"{text} Buffer strips built: {', '.join(built) or 'none'} (layer buffer_strips, "
                f"{len(bb.strips)} strips)"
            )
            if bb.missing:
                detail += "; not built: " + "; ".join(f"{k} ({v})" for k, v in bb.missing.items())
        out.append(rule.finding(status, subject_layer="site_plan", subject_id=key, detail=detail))
    out.append(
        rule.finding(
            "info",
            subject_layer="site_plan",
            subject_id="scale",
            detail=f"print the site plan at 1 in = {rule.t('min_scale_ft_per_in'):g} ft or larger",
        )
    )
    return out


# ------------------------------------------------------------------------------------------
# HRV-003 RA-1/RA-2/RC property within 300 ft


@check("HRV-003")
def check_zoning_proximity(ctx: HarvestContext, rule: Rule) -> Items:
    """Town board review for each plan element within the distance of RA-1/RA-2/RC property.

    ``pass`` only when every district within the distance is known: a zoning polygon or
    parcel without a district there makes the element ``not_evaluated``.
    """
    out: Items = []
    want = [str(d).upper() for d in rule.p("districts")]
    dtext = ", ".join(want)
    dist_ft = rule.t("distance_ft")
    zoning, parcels = ctx.get("zoning"), ctx.get("parcels")
    src = bf.zoning_source(zoning, parcels)
    zsrc: gpd.GeoDataFrame | None = None
    if src == "zoning layer" and zoning is not None:
        zsrc = zoning.assign(_d=bf.norm_district(zoning["district"]))
    elif src is not None and parcels is not None:
        zsrc = parcels.assign(_d=bf.norm_district(parcels["zoning"]))
    for layer in rule.p("plan_elements"):
        g = ctx.get(layer)
        if g is None:
            out.append(_missing_layer(rule, layer))
            continue
        ids, n = _plan_ids(g), len(g)
        if zsrc is None:
            out.append(
                rule.findings(
                    "not_evaluated",
                    subject_layer=layer,
                    subject_id=ids,
                    geometry=g.geometry.values,
                    crs=ctx.crs,
                    districts=dtext,
                    detail="no zoning layer and no parcels.zoning field",
                )
            )
            continue
        ra = zsrc.loc[zsrc["_d"].isin(want).to_numpy()]
        unk = zsrc.loc[zsrc["_d"].isna().to_numpy()]
        dmin, nearest, names = np.full(n, np.nan), np.full(n, np.nan), [""] * n
        if len(ra):
            gi, zi = ra.sindex.query(g.geometry.values, predicate="dwithin", distance=dist_ft)
            d = shapely.distance(g.geometry.values[gi], ra.geometry.values[zi])
            dmin = _first_per_group(gi, d, n)
            names = _joined(gi, ra["_d"].to_numpy()[zi], n)
            near_idx, near_d = ra.sindex.nearest(g.geometry.values, return_distance=True, return_all=False)
            nearest[near_idx[0]] = near_d
        ui, uj = (
            unk.sindex.query(g.geometry.values, predicate="dwithin", distance=dist_ft)
            if len(unk)
            else (np.array([], int),) * 2
        )
        unknown = _joined(ui, unk["feature_id"].astype(str).to_numpy()[uj], n)
        within = np.isfinite(dmin)
        measured = np.where(within, dmin, nearest)
        status = np.where(within, "review", np.where([bool(u) for u in unknown], "not_evaluated", "pass"))
        where = "zoning polygons" if src == "zoning layer" else "parcels"
        detail = []
        for i in range(n):
            if within[i]:
                txt = f"{measured[i]:,.0f} ft to {names[i]} property ({src})"
            elif np.isfinite(measured[i]):
                txt = f"nearest {dtext} property {measured[i]:,.0f} ft away ({src})"
            else:
                txt = f"the {src} has no {dtext} district"
            if not within[i] and unknown[i]:
                txt += f"; district unknown for {where} {unknown[i]} within {dist_ft:g} ft"
            detail.append(txt)
        out.append(
            rule.findings(
                status,
                subject_layer=layer,
                subject_id=ids,
                measured=measured,
                threshold=dist_ft,
                unit="ft",
                geometry=g.geometry.values,
                crs=ctx.crs,
                districts=dtext,
                detail=detail,
            )
        )
    return out


# ------------------------------------------------------------------------------------------
# HRV-010 grade runs


@check("HRV-010")
def check_grade_runs(ctx: HarvestContext, rule: Rule) -> Items:
    """Each run steeper than the grade limit for longer than the length limit is a violation.

    Off-DEM or nodata stretches are ``not_evaluated`` findings with their geometry; a road is
    ``pass`` only when the DEM covered all of it and no run exceeds.
    """
    out: Items = []
    max_run = rule.t("max_run_ft")
    mode = str(rule.s("run_length"))
    terrain = ctx.terrain
    for layer in ROAD_LAYERS:
        g = ctx.get(layer)
        if g is None:
            out.append(_missing_layer(rule, layer))
            continue
        for fid, geom in zip(g["feature_id"].astype(str), g.geometry.values):
            rt = terrain[(layer, fid)]
            if rt.error:
                out.append(
                    rule.finding(
                        "not_evaluated", subject_layer=layer, subject_id=fid, geometry=geom, detail=rt.error
                    )
                )
                continue
            for run in rt.runs:
                if not run.exceeds:
                    continue
                compared = run.length_ft if mode == "horizontal" else run.slope_length_ft
                out.append(
                    rule.finding(
                        "violation",
                        subject_layer=layer,
                        subject_id=fid,
                        measured=compared,
                        threshold=max_run,
                        unit="ft",
                        geometry=run.geometry,
                        detail=(
                            f"from {run.start_ft:,.0f} to {run.end_ft:,.0f} ft along the line; horizontal "
                            f"{run.length_ft:,.0f} ft, slope length {run.slope_length_ft:,.0f} ft; mean grade "
                            f"{run.mean_grade_pct:.1f} %, max {run.max_grade_pct:.1f} %"
                        ),
                    )
                )
            for gap in rt.gaps:
                out.append(
                    rule.finding(
                        "not_evaluated",
                        subject_layer=layer,
                        subject_id=fid,
                        measured=gap.length_ft,
                        unit="ft",
                        geometry=gap.geometry,
                        detail=(
                            f"{gap.length_ft:,.0f} ft from {gap.start_ft:,.0f} to {gap.end_ft:,.0f} ft along the "
                            f"line is off the DEM or on nodata cells"
                        ),
                    )
                )
            if rt.fully_evaluated and not any(r.exceeds for r in rt.runs):
                longest = max(
                    (r.length_ft if mode == "horizontal" else r.slope_length_ft for r in rt.runs), default=0.0
                )
                out.append(
                    rule.finding(
                        "pass",
                        subject_layer=layer,
                        subject_id=fid,
                        measured=longest,
                        threshold=max_run,
                        unit="ft",
                        geometry=geom,
                        detail=(
                            f"max grade {rt.max_grade_pct:.1f} %, {len(rt.runs)} steep stretch(es), longest "
                            f"{longest:,.0f} ft; {rt.length_ft:,.0f} ft evaluated"
                        ),
                    )
                )
    return out


# ------------------------------------------------------------------------------------------
# HRV-011 designated slopes


@check("HRV-011")
def check_designated_slopes(ctx: HarvestContext, rule: Rule) -> Items:
    """No haul road or constructed skid trail on a designated slope (critical slopes, corridor)."""
    out: Items = []
    cover = str(rule.s("covered_layers"))
    wanted = ["critical_slopes", "stream_corridor"] if cover == "both" else [cover]
    present: dict[str, gpd.GeoDataFrame] = {r: g for r in wanted if (g := ctx.get(r)) is not None}
    absent = [r for r in wanted if r not in present]
    unflagged = str(rule.s("unflagged_skid_trails"))
    cfield = rule.p("constructed_field", "constructed")
    for layer in ROAD_LAYERS:
        g = ctx.get(layer)
        if g is None:
            out.append(_missing_layer(rule, layer))
            continue
        ids, n, geoms = _plan_ids(g), len(g), g.geometry.values
        if layer == "skid_trails":
            flag = g[cfield] if cfield in g.columns else pd.Series(None, index=g.index, dtype=object)
            # missing or blank = not stated (the switch decides); text flags read as yes/no
            blank = flag.isna() | flag.map(lambda v: isinstance(v, str) and not v.strip())
            known = ~blank.to_numpy(dtype=bool)
            covered = np.where(
                known,
                flag.map(lambda v: False if pd.isna(v) else _truthy(v)).to_numpy(dtype=bool),
                unflagged == "treat_as_constructed",
            )
        else:
            known, covered = np.ones(n, dtype=bool), np.ones(n, dtype=bool)
        parts_txt: list[list[str]] = [[] for _ in range(n)]
        for role, poly in present.items():
            ln = shapely.length(shapely.intersection(geoms, shapely.union_all(poly.geometry.values)))
            for j in np.flatnonzero(ln > 0):
                parts_txt[j].append(
                    f"{ln[j]:,.0f} ft on {role.replace('_', ' ')} ({id_list(_hit_ids(poly, geoms[j]))})"
                )
        on_geom: np.ndarray = np.array([None] * n, dtype=object)
        total: np.ndarray = np.zeros(n)
        if present:
            designated = shapely.union_all(np.concatenate([p.geometry.values for p in present.values()]))
            on_geom = shapely.intersection(geoms, designated)
            total = shapely.length(on_geom)
        status, detail = [], []
        for i in range(n):
            if not covered[i]:
                status.append("pass")
                detail.append(
                    "not a constructed skid trail"
                    if known[i]
                    else "constructed not stated, read as random individual tree skidding (allowed)"
                )
            elif total[i] > 0:
                status.append("violation")
                txt = "; ".join(parts_txt[i])
                if (
                    layer == "haul_roads"
                    and "critical_slopes" in present
                    and any("critical slopes" in s for s in parts_txt[i])
                ):
                    txt += (
                        "; one haul road may cross a critical slope only to connect a noncritical area to a "
                        "town road when no other access exists, on town board conditions (record a waiver)"
                    )
                detail.append(txt)
            elif not present:
                status.append("not_evaluated")
                detail.append(f"no {' or '.join(wanted)} layer")
            elif absent:
                status.append("not_evaluated")
                detail.append(f"not on {', '.join(present)}; {', '.join(absent)} layer missing")
            else:
                status.append("pass")
                detail.append(f"0 ft on {', '.join(present)}")
        geom_out = np.where(np.array(status) == "violation", on_geom, geoms)
        out.append(
            rule.findings(
                status,
                subject_layer=layer,
                subject_id=ids,
                measured=np.where(covered, total, np.nan),
                unit="ft",
                geometry=geom_out,
                crs=ctx.crs,
                detail=detail,
            )
        )
    return out


# ------------------------------------------------------------------------------------------
# HRV-012 skidding in channels, HRV-013 crossings


def _hit_ids(poly: gpd.GeoDataFrame, geom: Any) -> np.ndarray:
    return poly["feature_id"].astype(str).to_numpy()[poly.sindex.query(geom, predicate="intersects")]


def _select_kinds(streams: gpd.GeoDataFrame, kinds: list[str]) -> gpd.GeoDataFrame:
    k = streams["kind"] if "kind" in streams.columns else pd.Series(None, index=streams.index, dtype=object)
    return streams.loc[(k.isna() | k.isin(kinds)).to_numpy()]


@check("HRV-012")
def check_skidding_in_channel(ctx: HarvestContext, rule: Rule) -> Items:
    """A skid trail inside a stream channel for longer than a crossing is skidding in the channel."""
    g = ctx.get("skid_trails")
    if g is None:
        return [_missing_layer(rule, "skid_trails")]
    ids, n = _plan_ids(g), len(g)
    streams = ctx.get("streams")
    if streams is None:
        return [
            rule.findings(
                "not_evaluated",
                subject_layer="skid_trails",
                subject_id=ids,
                geometry=g.geometry.values,
                crs=ctx.crs,
                detail="no streams layer",
            )
        ]
    sel = _select_kinds(streams, list(rule.p("stream_kinds")))
    width = rule.t("channel_width_ft")
    max_len = rule.t("max_crossing_length_ft")
    sg = sel.geometry.values
    is_poly = np.isin(shapely.get_type_id(sg), (3, 6))
    channel = np.where(is_poly, sg, shapely.buffer(sg, width / 2.0, cap_style="flat"))
    u = shapely.union_all(channel) if len(channel) else Polygon()
    inter = shapely.intersection(g.geometry.values, u)
    multi = shapely.get_type_id(inter) == 5
    inter = np.where(multi, shapely.line_merge(np.where(multi, inter, None)), inter)
    parts, idx = shapely.get_parts(inter, return_index=True)
    line = np.isin(shapely.get_type_id(parts), (1, 2)) & ~shapely.is_empty(parts)
    parts, idx = parts[line], idx[line]
    ln = shapely.length(parts)
    bad = ln > max_len
    bad_len = _first_per_group(idx[bad], ln[bad], n, "sum")
    inside = _first_per_group(idx, ln, n, "sum")
    crossings = np.bincount(idx[~bad], minlength=n)
    status = np.where(np.nan_to_num(bad_len) > 0, "violation", "pass")
    geom = np.array(g.geometry.values, dtype=object)
    for i in np.flatnonzero(status == "violation"):
        geom[i] = shapely.union_all(parts[(idx == i) & bad])
    measured = np.where(status == "violation", bad_len, np.nan_to_num(inside))
    detail = [
        (
            f"channel taken as {width:g} ft wide along stream lines; "
            + (
                f"{int((idx[bad] == i).sum())} stretch(es) inside the channel longer than {max_len:g} ft"
                if status[i] == "violation"
                else f"{crossings[i]} crossing(s), "
                f"{np.nan_to_num(inside[i]):,.0f} ft inside the channel in all"
            )
        )
        for i in range(n)
    ]
    return [
        rule.findings(
            status,
            subject_layer="skid_trails",
            subject_id=ids,
            measured=measured,
            threshold=max_len,
            unit="ft",
            geometry=geom,
            crs=ctx.crs,
            detail=detail,
        )
    ]


@check("HRV-013")
def check_stream_crossings(ctx: HarvestContext, rule: Rule) -> Items:
    """Each crossing of a haul road or skid trail with a stream is a ``review`` at the crossing."""
    out: Items = []
    streams = ctx.get("streams")
    kinds = ["perennial", "intermittent"] if _truthy(rule.s("include_intermittent")) else ["perennial"]
    for layer in ROAD_LAYERS:
        g = ctx.get(layer)
        if g is None:
            out.append(_missing_layer(rule, layer))
            continue
        ids, n = _plan_ids(g), len(g)
        if streams is None:
            out.append(
                rule.findings(
                    "not_evaluated",
                    subject_layer=layer,
                    subject_id=ids,
                    geometry=g.geometry.values,
                    crs=ctx.crs,
                    detail="no streams layer",
                )
            )
            continue
        sel = _select_kinds(streams, kinds)
        _, si = (
            sel.sindex.query(g.geometry.values, predicate="intersects")
            if len(sel)
            else (np.array([], int),) * 2
        )
        # the streams as one network: a crossing where two stream features meet (split at a
        # junction, or two parts of one stream) is one crossing, not one per feature
        net = shapely.union_all(sel.geometry.values[np.unique(si)]) if len(si) else None
        inter = (
            shapely.intersection(g.geometry.values, net)
            if net is not None
            else np.array([shapely.Point()] * n, dtype=object)
        )
        parts, road_i = shapely.get_parts(inter, return_index=True)
        keep = ~shapely.is_empty(parts)
        parts, road_i = parts[keep], road_i[keep]
        tid = shapely.get_type_id(parts)
        pts = np.where(
            np.isin(tid, (1, 2)),
            shapely.line_interpolate_point(np.where(np.isin(tid, (1, 2)), parts, None), 0.5, normalized=True),
            parts,
        )
        station = shapely.line_locate_point(g.geometry.values[road_i], pts) if len(pts) else np.array([])
        # the stream feature(s) at each crossing: the nearest ones (all of them at a joint)
        (pi, sj) = sel.sindex.nearest(pts, return_all=True) if len(pts) else (np.array([], int),) * 2
        sids = _joined(pi, sel["feature_id"].astype(str).to_numpy()[sj], len(pts))
        kcol = sel["kind"] if "kind" in sel.columns else pd.Series(None, index=sel.index, dtype=object)
        skind = _joined(pi, kcol.fillna("kind unknown").astype(str).to_numpy()[sj], len(pts))
        order = np.lexsort((station, road_i)) if len(pts) else np.array([], int)
        status = ["review"] * len(order)
        detail = [
            f"crossing of stream {sids[j]} ({skind[j]}) at {station[j]:,.0f} ft along the line" for j in order
        ]
        if len(order):
            out.append(
                rule.findings(
                    status,
                    subject_layer=layer,
                    subject_id=ids[road_i[order]],
                    unit="ft",
                    measured=station[order],
                    geometry=pts[order],
                    crs=ctx.crs,
                    detail=detail,
                )
            )
        none = np.setdiff1d(np.arange(n), road_i)
        if len(none):
            out.append(
                rule.findings(
                    "pass",
                    subject_layer=layer,
                    subject_id=ids[none],
                    geometry=g.geometry.values[none],
                    crs=ctx.crs,
                    detail=f"{' or '.join(kinds)} streams and streams of unknown kind checked",
                )
            )
    return out


# ------------------------------------------------------------------------------------------
# HRV-020..023 buffer strips


def _buffer_findings(ctx: HarvestContext, rule: Rule, kind: str, **values: Any) -> Items:
    ha = ctx.harvest_area
    ids, n = _plan_ids(ha), len(ha)
    bb = ctx.buffers
    label = kind.replace("_", " ")
    if kind in bb.missing:
        return [
            rule.findings(
                "not_evaluated",
                subject_layer="harvest_area",
                subject_id=ids,
                geometry=ha.geometry.values,
                crs=ctx.crs,
                detail=f"{label} buffer: {bb.missing[kind]}",
                **values,
            )
        ]
    strips = bb.strips[bb.strips["kind"] == kind]
    inside = bf.polygonal(bf.buffers_inside(ha, strips))
    acres = sqft_to_acres(shapely.area(inside))
    hi, si = (
        strips.sindex.query(ha.geometry.values, predicate="intersects")
        if len(strips)
        else (np.array([], int), np.array([], int))
    )
    srcs = _joined(hi, strips["source_id"].to_numpy()[si], n)
    detail = [
        f"{label} buffer, {acres[i]:.2f} acres inside the harvest area"
        + (f" (from {srcs[i]})" if srcs[i] else "")
        + f"; {bb.notes.get(kind, '')}"
        for i in range(n)
    ]
    # the strip inside the area, else (no strip there) the harvest area itself
    geom = np.where(acres > 0, inside, ha.geometry.values)
    return [
        rule.findings(
            "info",
            subject_layer="harvest_area",
            subject_id=ids,
            measured=acres,
            unit="acres",
            geometry=geom,
            crs=ctx.crs,
            detail=detail,
            **values,
        )
    ]


@check("HRV-020")
def check_stream_road_buffers(ctx: HarvestContext, rule: Rule) -> Items:
    """Buffer strips along streams and public roads: acres inside each harvest area, per kind."""
    return _buffer_findings(ctx, rule, "stream") + _buffer_findings(ctx, rule, "road")


@check("HRV-021")
def check_property_line_buffers(ctx: HarvestContext, rule: Rule) -> Items:
    """Buffer strips within 100 ft of property lines in RA-1/RA-2/RC: acres inside each area."""
    return _buffer_findings(ctx, rule, "property_line", districts=", ".join(rule.p("districts")))


@check("HRV-022")
def check_dwelling_buffers(ctx: HarvestContext, rule: Rule) -> Items:
    """Buffer strips within 100 ft of dwellings in RR: acres inside each harvest area."""
    return _buffer_findings(ctx, rule, "dwelling", districts=", ".join(rule.p("districts")))


@check("HRV-023")
def check_buffer_cutting(ctx: HarvestContext, rule: Rule) -> Items:
    """Buffer acres (all kinds, overlaps once) inside each harvest area, for the stump-diameter rule."""
    ha = ctx.harvest_area
    ids, n = _plan_ids(ha), len(ha)
    bb = ctx.buffers
    inside = bf.polygonal(bf.buffers_inside(ha, bb.strips))
    acres = sqft_to_acres(shapely.area(inside))
    miss = "; ".join(f"{k.replace('_', ' ')} buffer not built ({v})" for k, v in bb.missing.items())
    status = np.where(acres > 0, "info", "not_evaluated" if bb.missing else "pass")
    kinds = ", ".join(sorted(set(bb.strips["kind"]))) or "none"
    detail = [f"buffer kinds: {kinds}" + (f"; {miss}" if miss else "") for _ in range(n)]
    geom = np.where(acres > 0, inside, ha.geometry.values)
    return [
        rule.findings(
            status,
            subject_layer="harvest_area",
            subject_id=ids,
            measured=acres,
            unit="acres",
            geometry=geom,
            crs=ctx.crs,
            detail=detail,
        )
    ]


# ------------------------------------------------------------------------------------------
# HRV-024..027 landings and access


@check("HRV-024")
def check_landing_in_buffer(ctx: HarvestContext, rule: Rule) -> Items:
    """No landing inside (intersecting) any buffer strip of HRV-020..022."""
    lg = ctx.get("landings")
    if lg is None:
        return [_missing_layer(rule, "landings")]
    ids, n = _plan_ids(lg), len(lg)
    bb = ctx.buffers
    rules = set(rule.p("buffer_rules"))
    strips = bb.strips[bb.strips["rule_id"].isin(rules)]
    missing = {k: v for k, v in bb.missing.items()}
    if len(strips):
        li, si = strips.sindex.query(lg.geometry.values, predicate="intersects")
        dist = shapely.distance(lg.geometry.values, shapely.union_all(strips.geometry.values))
    else:
        li, si, dist = np.array([], int), np.array([], int), np.full(n, np.nan)
    labels = strips["kind"].to_numpy()[si] + " buffer of " + strips["source_id"].astype(str).to_numpy()[si]
    inside = _joined(li, labels, n)
    kinds = _joined(li, strips["kind"].to_numpy()[si], n)
    hit = np.zeros(n, dtype=bool)
    hit[li] = True
    miss = "; ".join(f"{k.replace('_', ' ')} ({v})" for k, v in missing.items())
    status = np.where(hit, "violation", "not_evaluated" if missing else "pass")
    detail = []
    for i in range(n):
        if hit[i]:
            detail.append(f"inside {inside[i]}")
        else:
            txt = (
                f"nearest buffer strip {dist[i]:,.0f} ft away"
                if np.isfinite(dist[i])
                else "no buffer strip nearby"
            )
            detail.append(txt + (f"; buffer strips not built: {miss}" if missing else ""))
        ctx.note_landing(
            ids[i], in_buffer=bool(hit[i]) if (hit[i] or not missing) else None, buffer_kinds=kinds[i]
        )
    geom = np.array(lg.geometry.values, dtype=object)
    if hit.any():
        u = shapely.union_all(strips.geometry.values)
        geom[hit] = shapely.intersection(geom[hit], u)
        geom = np.array(
            [g if not shapely.is_empty(g) else o for g, o in zip(geom, lg.geometry.values)], dtype=object
        )
    return [
        rule.findings(
            status,
            subject_layer="landings",
            subject_id=ids,
            measured=np.where(hit, 0.0, dist),
            unit="ft",
            geometry=geom,
            crs=ctx.crs,
            detail=detail,
        )
    ]


@check("HRV-025")
def check_landing_row_distance(ctx: HarvestContext, rule: Rule) -> Items:
    """Each landing at least the minimum distance (edge to edge) from any public right-of-way."""
    lg = ctx.get("landings")
    if lg is None:
        return [_missing_layer(rule, "landings")]
    ids, n = _plan_ids(lg), len(lg)
    limit = rule.t("min_distance_ft")
    rows = ctx.row_shapes(rule.t("default_row_width_ft"))
    if not len(rows):
        return [
            rule.findings(
                "not_evaluated",
                subject_layer="landings",
                subject_id=ids,
                threshold=limit,
                unit="ft",
                geometry=lg.geometry.values,
                crs=ctx.crs,
                detail="no roads or row layer",
            )
        ]
    (li, ri), d = rows.sindex.nearest(lg.geometry.values, return_distance=True, return_all=False)
    dist = np.full(n, np.nan)
    near = np.empty(n, dtype=object)
    dist[li] = d
    for i, r in zip(li, ri):
        src = rows.iloc[r]
        how = (
            "right-of-way polygon"
            if src["source_layer"] == "row"
            else f"road centre line widened by half its {src['row_width_ft']:g} ft right-of-way"
        )
        near[i] = f"nearest: {src['source_layer']} {src['source_id']} ({how})"
    status = np.where(dist < limit, "violation", "pass")
    for i in range(n):
        ctx.note_landing(ids[i], row_distance_ft=float(dist[i]))
    return [
        rule.findings(
            status,
            subject_layer="landings",
            subject_id=ids,
            measured=dist,
            threshold=limit,
            unit="ft",
            geometry=lg.geometry.values,
            crs=ctx.crs,
            detail=list(near),
        )
    ]


def _access_zone(ctx: HarvestContext, tol: float) -> Any:
    geoms = ctx.public_road_geoms()
    return shapely.buffer(shapely.union_all(geoms), tol) if len(geoms) else None


@check("HRV-026")
def check_access_points(ctx: HarvestContext, rule: Rule) -> Items:
    """Count the places where haul roads meet public roads (info; review above the limit)."""
    hr = ctx.get("haul_roads")
    if hr is None:
        return [_missing_layer(rule, "haul_roads")]
    tol = rule.t("snap_tolerance_ft")
    zone = _access_zone(ctx, tol)
    if zone is None:
        return [_missing_layer(rule, "haul_roads", "no roads or row layer")]
    parts = shapely.get_parts(shapely.intersection(hr.geometry.values, zone))
    parts = parts[~shapely.is_empty(parts)]
    if len(parts):
        clusters = shapely.get_parts(shapely.union_all(shapely.buffer(parts, tol)))
        points = shapely.point_on_surface(clusters)
    else:
        points = np.array([], dtype=object)
    count = len(points)
    limit = rule.t("max_access_points_count")
    status = "review" if count > limit else "info"
    touching = hr.loc[shapely.intersects(hr.geometry.values, zone), "feature_id"].astype(str)
    detail = (
        f"haul roads {id_list(touching)} meet public roads (within {tol:g} ft of a centre line or right-of-way)"
        if count
        else "no haul road meets a public road"
    )
    return [
        rule.finding(
            status,
            subject_layer="haul_roads",
            subject_id="all",
            measured=count,
            threshold=limit,
            unit="count",
            geometry=MultiPoint(list(points)) if count else None,
            detail=detail,
        )
    ]


@check("HRV-027")
def check_landing_connected(ctx: HarvestContext, rule: Rule) -> Items:
    """Each landing is connected by haul roads (touching within the snap tolerance) to a public road."""
    lg = ctx.get("landings")
    if lg is None:
        return [_missing_layer(rule, "landings")]
    ids, n = _plan_ids(lg), len(lg)
    hr = ctx.get("haul_roads")
    pub = ctx.public_road_geoms()
    if hr is None or not len(pub):
        why = "no haul_roads layer" if hr is None else "no roads or row layer"
        return [
            rule.findings(
                "not_evaluated",
                subject_layer="landings",
                subject_id=ids,
                geometry=lg.geometry.values,
                crs=ctx.crs,
                detail=why,
            )
        ]
    tol = rule.t("snap_tolerance_ft")
    m = len(hr)
    hg = hr.geometry.values
    a, b = hr.sindex.query(hg, predicate="dwithin", distance=tol)
    _, comp = connected_components(coo_matrix((np.ones(len(a)), (a, b)), shape=(m, m)), directed=False)
    pub_tree = shapely.STRtree(pub)
    hi, pi = pub_tree.query(hg, predicate="dwithin", distance=tol)
    reaches_comp = np.zeros(comp.max() + 1, dtype=bool)
    reaches_comp[comp[hi]] = True
    pub_ids = ctx.public_road_ids()
    comp_roads = (
        pd.DataFrame({"c": comp[hi], "p": pub_ids[pi]})
        .groupby("c")["p"]
        .agg(lambda s: ", ".join(sorted(set(s))))
    )
    hr_ids = _plan_ids(hr)
    comp_members = pd.Series(hr_ids).groupby(comp).agg(lambda s: ", ".join(s))
    li, hj = hr.sindex.query(lg.geometry.values, predicate="dwithin", distance=tol)
    status, detail = [], []
    for i in range(n):
        cs = np.unique(comp[hj[li == i]])
        ok = [c for c in cs if reaches_comp[c]]
        if not len(cs):
            status.append("violation")
            detail.append(f"no haul road within {tol:g} ft of the landing")
            via = ""
        elif ok:
            status.append("pass")
            via = f"haul roads {comp_members[ok[0]]} to {comp_roads[ok[0]]}"
            detail.append(via)
        else:
            status.append("violation")
            via = ""
            detail.append(
                f"haul roads {'; '.join(comp_members[c] for c in cs)} do not reach a public road "
                f"(tolerance {tol:g} ft)"
            )
        ctx.note_landing(ids[i], connected=status[-1] == "pass", via=via)
    return [
        rule.findings(
            status,
            subject_layer="landings",
            subject_id=ids,
            geometry=lg.geometry.values,
            crs=ctx.crs,
            detail=detail,
        )
    ]


# ------------------------------------------------------------------------------------------
# HRV-030 water bars, HRV-040 licence checklist


@check("HRV-030")
def check_water_bars(ctx: HarvestContext, rule: Rule) -> Items:
    """Water bars placed along each haul road from its DEM profile (derived layer ``water_bars``)."""
    hr = ctx.get("haul_roads")
    if hr is None:
        return [_missing_layer(rule, "haul_roads")]
    out: Items = []
    min_g = rule.t("min_grade_pct")
    for fid, geom in zip(hr["feature_id"].astype(str), hr.geometry.values):
        rt = ctx.terrain[("haul_roads", fid)]
        if rt.error:
            out.append(
                rule.finding(
                    "not_evaluated",
                    subject_layer="haul_roads",
                    subject_id=fid,
                    geometry=geom,
                    detail=rt.error,
                )
            )
            continue
        wb = rt.water_bars if rt.water_bars is not None else gpd.GeoDataFrame()
        count = len(wb)
        if count:
            bands = wb.groupby(["band", "spacing_ft", "min_spacing_ft", "max_spacing_ft"], sort=False).size()
            txt = "; ".join(
                f"{n} at {sp:g} ft for {band} (table range {lo:g}-{hi:g} ft)"
                for (band, sp, lo, hi), n in bands.items()
            )
            detail = f"{count} water bars: {txt} (layer water_bars)"
        else:
            detail = f"0 water bars (mean grade {rt.mean_grade_pct:.1f} %, length {rt.length_ft:,.0f} ft)"
        gap = sum(s.length_ft for s in rt.gaps)
        if gap > 0:
            status = "not_evaluated"
            detail += f"; {gap:,.0f} ft off the DEM or on nodata, no bars placed there"
        elif count == 0 and rt.mean_grade_pct < min_g:
            status = "pass"
            detail = f"mean grade {rt.mean_grade_pct:.1f} %"
        else:
            status = "info"
        pts = MultiPoint(list(wb.geometry.values)) if count else geom
        out.append(
            rule.finding(
                status,
                subject_layer="haul_roads",
                subject_id=fid,
                measured=count,
                unit="count",
                geometry=pts,
                detail=detail,
            )
        )
    return out


@check("HRV-040")
def check_licence_conditions(ctx: HarvestContext, rule: Rule) -> Items:
    """The licence conditions geometry cannot check, as an ``info`` checklist."""
    return [
        rule.finding(
            "info",
            subject_layer="licence",
            subject_id=c["key"],
            detail=f"{c['text']} ({c.get('citation', rule.citation)})",
        )
        for c in rule.p("conditions")
    ]

