"""map.html: an interactive folium web map with the inputs, derived layers and findings.

Offline by default: Leaflet's JavaScript and CSS ship in ``geoconstraints/output/assets/leaflet``
(Leaflet 1.9.4 from the npm registry) and are inlined into the page, with the findings layer
``assets/gc/findings.js``.

Every finding with a place is drawn, at any scale: the findings travel as compact arrays
(:mod:`geoconstraints.output.mapdata`) and are drawn on Leaflet's canvas, each place once in the
colour of its most severe finding (polygons other than parcels as outlines, so a harvest area
never hides its roads, streams and landings). The legend counts every finding (the report's
numbers) and says how many are drawn at a shared place or have no place. Inputs and derived
layers are GeoJSON, cut to the area of interest and kept within :data:`MAX_FEATURES`. With a
DEM, a hillshade (numpy, from the DEM window of the map) and the contours form the background.
"""

from __future__ import annotations

import base64
import functools
import html
import json
import logging
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from geoconstraints.errors import OutputError
from geoconstraints.geometry.overlay import subtype_problem
from geoconstraints.output import hillshade, mapdata, styles
from geoconstraints.output.files import write_text
from geoconstraints.output.overview import PRIMARY_ROLES, focus_frames, parcel_geometry
from geoconstraints.output.report import format_value
from geoconstraints.output.selection import ALL_OUTPUTS, Holders
from geoconstraints.rulebook.findings import STATUSES
from geoconstraints.rules.flood import flood_zone_classes, subtype_text
from geoconstraints.text import visible_text

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from .result import Result

STATUS_COLORS = styles.STATUS_COLORS
"""Colour of each finding status (re-exported from :mod:`geoconstraints.styles`)."""

COORD_DECIMALS = 6
"""Decimal places of longitude/latitude in the map (1e-6 degree is about 4 inches)."""

MAX_SHOWN_PASS = 500
"""Above this many places of ``pass`` (or ``info``) findings their layer starts hidden (tick it in
the layer control); it is built when first shown."""

MAX_FEATURES = 20_000
"""Most GeoJSON features map.html draws for the inputs and derived layers (the findings are not
counted: they are always all drawn, see :mod:`geoconstraints.output.mapdata`).

The context inputs (flood zones, streams ..., already cut to the area of interest) come first,
then the derived layers, then the parcels layer; a layer that does not fit whole is left out and a
note in the legend counts it and points to results.gpkg. A county's parcels layer is left out this
way: each of its parcels is drawn by its findings (the pass layer shows those that pass)."""

LEFT_OUT_NOTE = ("Not drawn, to keep this page small enough for a browser (over {limit:,} features): "
                 "{items}. {layers}; every finding is in {findings}.")
"""The legend's note when :data:`MAX_FEATURES` leaves an input or derived layer out (``layers``:
:data:`LAYERS_WRITTEN` or :data:`LAYERS_NOT_WRITTEN`; ``findings``: the files holding them,
:class:`~geoconstraints.output.selection.Holders`)."""

LEFT_OUT_NOTE_SCOPED = ("Not drawn, to keep this page small enough for a browser (over {limit:,} features): "
                        "{items}. {layers}; the findings that need a person are in {findings}, and each parcel's "
                        "outcome (worst_status, status_<rule>) in {parcels}.")
"""The note of :data:`LEFT_OUT_NOTE` for a result that kept only the findings that need a person
(a screening): pass and info findings are in no findings file and draw no parcel."""

FULL_TEXT_NOTE = "The full text of each finding is in {findings}."
"""The popups' note when the findings' messages are left out of map.html (:data:`~geoconstraints.output.mapdata.MAX_MESSAGES`)."""

LAYERS_WRITTEN = "Every layer is in results.gpkg (open it in QGIS or ArcGIS)"
"""The left-out notes' words for the layers when results.gpkg is written."""

LAYERS_NOT_WRITTEN = "The layers are written only to results.gpkg, which this run did not write (--outputs without gpkg)"
"""The same when it is not (``--outputs`` without ``gpkg``): the layers are in no file of the set."""

SAME_PLACE_NOTE = "Findings at the same place are drawn once, in the colour of the most severe; its popup lists them all."
"""The legend's note when some findings share a place."""

HILLSHADE_MAX_PX = 1600
"""Longest side of the hillshade image, pixels (the DEM is read coarser for a larger map)."""

HILLSHADE_AZIMUTH, HILLSHADE_ALTITUDE = 315.0, 45.0
"""Sun direction of the hillshade, degrees (north-west, 45 degrees up: the cartographic convention)."""

MAX_POPUP_FIELDS = 12
"""Attributes shown in the popup of an input or derived feature."""


FINDING_POPUP = [("rule_id", "Rule"), ("title", "Title"), ("status", "Status"), ("subject", "Subject"),
                 ("citation", "Citation"), ("measured_text", "Measured"), ("threshold_text", "Threshold"),
                 ("message", "Finding"), ("reading", "Reading"), ("waived", "Waived")]
"""(property, label) of the finding popup, in order."""

_TAG = re.compile(r"<(?:script|link)\b[^>]*>", re.IGNORECASE)
_WEB_URL = re.compile(r"\b(?:src|href)\s*=\s*[\"']?\s*(?:https?:)?//", re.IGNORECASE)


def _require_folium() -> Any:
    try:
        import folium
    except ImportError:  # pragma: no cover - folium is a dependency
        raise ImportError("the web map needs folium: pip install folium") from None
    return folium


# -- offline Leaflet ---------------------------------------------------------------------------
def leaflet_assets() -> dict[str, str]:
    """The shipped Leaflet files as text: ``js``, ``css`` (its images inlined as data URIs), ``version``."""
    base = resources.files("geoconstraints.output") / "assets" / "leaflet"
    js = (base / "leaflet.js").read_text("utf-8")
    css = (base / "leaflet.css").read_text("utf-8")

    def inline(m: re.Match[str]) -> str:
        data = (base / "images" / m.group(1)).read_bytes()
        return "url(data:image/png;base64," + base64.b64encode(data).decode("ascii") + ")"

    css = re.sub(r"url\(images/([A-Za-z0-9_.\-]+\.png)\)", inline, css)
    version = re.search(r"Leaflet (\d+\.\d+\.\d+)", js)
    # a literal "</script" inside the inlined code would end the <script> element early
    js = js.replace("</script", "<\\/script")
    return {"js": js, "css": css, "version": version.group(1) if version else ""}


def findings_js() -> str:
    """The findings layer script (``assets/gc/findings.js``), safe to inline."""
    js = (resources.files("geoconstraints.output") / "assets" / "gc" / "findings.js").read_text("utf-8")
    return js.replace("</script", "<\\/script")


def external_resources(page: str) -> list[str]:
    """``<script src>`` / ``<link href>`` tags of ``page`` that point at a web server."""
    return [m.group(0) for m in _TAG.finditer(page) if _WEB_URL.search(m.group(0))]


def raw_element(text: str) -> Any:
    """A branca ``Element`` that writes ``text`` as it is.

    ``Element(text)`` compiles its text as a Jinja template: Leaflet's script and a county's
    findings payload (megabytes of JSON) would be lexed by Jinja on every map, and a ``{{`` in
    them read as a Jinja expression.
    """
    from branca.element import Element

    el = Element("{{ this.raw_text }}")
    el.raw_text = text  # type: ignore[attr-defined]
    return el


def rendered_text(text: str) -> str:
    """``text`` as ``jinja2.Template(text).render()`` returns it when it holds no template syntax:
    line breaks as ``\\n``, one trailing line break dropped (what branca's ``Element(text)`` writes).

    Examples
    --------
    >>> rendered_text("a\\r\\nb {{ x }}\\n")
    'a\\nb {{ x }}'
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text.removesuffix("\n")


@functools.lru_cache(maxsize=1)
def _raw_macro() -> type:
    """A branca ``MacroElement`` whose rendered header, html and script go to the page as they are."""
    from branca.element import Figure, MacroElement

    class RawScripts(MacroElement):
        def render(self, **kwargs: Any) -> None:  # type: ignore[override]  # as MacroElement.render
            figure = self.get_root()
            if not isinstance(figure, Figure):
                raise OutputError("a map element was rendered outside of its page")
            module = self._template.module.__dict__
            for part, parent in (("header", figure.header), ("html", figure.html), ("script", figure.script)):
                macro = module.get(part)
                if macro is not None:
                    parent.add_child(raw_element(rendered_text(str(macro(self, kwargs)))), name=self.get_name())
            for element in self._children.values():
                element.render(**kwargs)

    return RawScripts


@functools.cache
def raw_scripts(base: type) -> type:
    """``base`` (a branca ``MacroElement`` class) whose rendered header, html and script are added
    to the page as they are.

    branca's ``MacroElement.render`` wraps each in ``Element(text)``, which compiles the text as a
    Jinja template: a GeoJSON layer's data (megabytes of JSON) was lexed by Jinja on every map, and
    a ``{{`` or ``{%`` in an attribute value was read as a Jinja expression. The page is otherwise
    the same (:func:`rendered_text`).
    """
    from branca.element import MacroElement

    raw = _raw_macro()
    if base is MacroElement:
        return raw
    return type(base.__name__, (base, raw), {})  # raw.render after base's own, in place of MacroElement's


def _make_offline(m: Any) -> None:
    """Drop folium's CDN links and inline Leaflet into the page header."""
    a = leaflet_assets()
    m.default_js = []  # instance attributes: folium's class lists stay untouched
    m.default_css = []
    m.get_root().header.add_child(
        raw_element(f"<style>/* Leaflet {a['version']} (BSD-2-Clause) */\n{a['css']}\n</style>\n"
                f"<script>\n{a['js']}\n</script>"), name="leaflet_inline", index=0)


# -- elements with safe text -------------------------------------------------------------------
def _text_popup(folium: Any, fields: list[tuple[str, str]], tooltip: str | None = None) -> Any:
    """A MacroElement that binds a popup (and tooltip) built with ``textContent`` to its GeoJson."""
    from branca.element import MacroElement
    from jinja2 import Template

    class TextPopup(raw_scripts(MacroElement)):  # type: ignore[misc]
        _template = Template("""
{% macro script(this, kwargs) %}
(function (gj) {
  var fields = {{ this.fields | tojson }}, labels = {{ this.labels | tojson }};
  var tipField = {{ this.tooltip | tojson }};
  gj.bindPopup(function (layer) {
    var p = (layer.feature && layer.feature.properties) || {};
    var t = document.createElement("table");
    t.className = "gc-popup";
    fields.forEach(function (f, i) {
      var v = p[f];
      if (v === null || v === undefined || v === "") { return; }
      var tr = t.insertRow(), th = document.createElement("th");
      th.textContent = labels[i];
      tr.appendChild(th);
      tr.insertCell().textContent = String(v);
    });
    return t;
  }, {maxWidth: 460, maxHeight: 360});
  if (tipField) {
    gj.bindTooltip(function (layer) {
      var s = document.createElement("span");
      var p = (layer.feature && layer.feature.properties) || {};
      s.textContent = String(p[tipField] === undefined || p[tipField] === null ? "" : p[tipField]);
      return s;
    }, {sticky: true});
  }
})({{ this._parent.get_name() }});
{% endmacro %}
""")

        def __init__(self) -> None:
            super().__init__()
            self._name = "TextPopup"
            self.fields = [f for f, _ in fields]
            self.labels = [visible_text(lab) for _, lab in fields]  # a layer's field names, shown
            self.tooltip = tooltip

    return TextPopup()


def _legend(items: list[dict[str, Any]], title: str, note: str = "", info: str = "") -> Any:
    """A Leaflet control listing ``items`` (label, colour, kind, detail), then ``note`` (what is left
    out) and ``info``, built with ``textContent``."""
    from branca.element import MacroElement
    from jinja2 import Template

    class Legend(raw_scripts(MacroElement)):  # type: ignore[misc]
        _template = Template("""
{% macro header(this, kwargs) %}
<style>
.gc-legend { background: rgba(255,255,255,.92); padding: 6px 9px; font: 12px/1.35 sans-serif;
  border-radius: 4px; box-shadow: 0 1px 4px rgba(0,0,0,.35); max-height: 45vh; overflow-y: auto; }
.gc-legend b { display: block; margin-bottom: 3px; }
.gc-legend i { display: inline-block; width: 16px; height: 11px; margin-right: 6px; vertical-align: -1px;
  border: 2px solid #555; box-sizing: border-box; }
.gc-legend i.line { height: 0; border-width: 3px 0 0 0; vertical-align: 3px; }
.gc-legend i.point { width: 11px; border-radius: 50%; }
.gc-legend .gc-detail { margin: 0 0 2px 22px; color: #555; font-size: 11px; max-width: 250px; }
.gc-legend p.gc-note { max-width: 260px; margin: 5px 0 0; color: #444; }
.gc-legend p.gc-left-out { max-width: 260px; margin: 5px 0 0; padding: 3px 5px; background: #fff8e1;
  border-left: 3px solid #f0b400; }
.gc-popup th { text-align: left; padding-right: 8px; vertical-align: top; white-space: nowrap; }
.gc-popup td { max-width: 320px; white-space: pre-line; }
</style>
{% endmacro %}
{% macro script(this, kwargs) %}
(function (map) {
  var items = {{ this.items | tojson }}, title = {{ this.title | tojson }}, note = {{ this.note | tojson }};
  var info = {{ this.info | tojson }};
  var legend = L.control({position: "bottomright"});
  legend.onAdd = function () {
    var div = L.DomUtil.create("div", "gc-legend");
    var b = document.createElement("b");
    b.textContent = title;
    div.appendChild(b);
    items.forEach(function (it) {
      var row = document.createElement("div"), sw = document.createElement("i");
      sw.className = it.kind;
      sw.style.borderColor = it.color;
      if (it.kind !== "line") { sw.style.background = it.fill || "transparent"; }
      row.appendChild(sw);
      row.appendChild(document.createTextNode(it.label));
      if (it.detail) {
        var small = document.createElement("div");
        small.className = "gc-detail";
        small.textContent = it.detail;
        row.appendChild(small);
      }
      div.appendChild(row);
    });
    if (note) {
      var p = document.createElement("p");
      p.className = "gc-left-out";
      p.textContent = note;
      div.appendChild(p);
    }
    if (info) {
      var q = document.createElement("p");
      q.className = "gc-note";
      q.textContent = info;
      div.appendChild(q);
    }
    L.DomEvent.disableClickPropagation(div);
    return div;
  };
  legend.addTo(map);
  L.control.scale({imperial: true, metric: false}).addTo(map);
})({{ this._parent.get_name() }});
{% endmacro %}
""")

        def __init__(self) -> None:
            super().__init__()
            self._name = "Legend"
            self.items = [{**it, "label": visible_text(it["label"]), "detail": visible_text(it.get("detail", ""))}
                          for it in items]
            self.title = visible_text(title)
            self.note = visible_text(note)
            self.info = visible_text(info)

    return Legend()


# -- data preparation --------------------------------------------------------------------------
def _to_wgs84(gdf: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
    """Reproject to EPSG:4326, drop empty geometries, round coordinates (vectorized)."""
    g = gdf[gdf.geometry.notna() & ~gdf.geometry.is_empty]
    if g.crs is None:
        raise OutputError("a layer of the web map has no CRS; the map needs one to place it")
    g = g.to_crs(4326)
    geoms = shapely.transform(g.geometry.values, lambda c: np.round(c, COORD_DECIMALS))
    return g.set_geometry(gpd.GeoSeries(geoms, index=g.index, crs=4326))


def _text_props(gdf: gpd.GeoDataFrame, columns: list[str]) -> gpd.GeoDataFrame:
    """Keep ``columns`` as text (``""`` for missing) plus the geometry: safe to serialise; the text
    as shown in the popups (:func:`~geoconstraints.text.visible_text`: a bidirectional control as ``<U+202E>``)."""
    out = {}
    for c in columns:
        s = gdf[c]
        out[c] = s.astype(object).where(s.notna(), "").map(
            lambda v: visible_text(json.dumps(v) if isinstance(v, (list, dict)) else v))
    return gpd.GeoDataFrame(out, geometry=gdf.geometry.values, crs=gdf.crs, index=gdf.index)


def _attr_columns(gdf: pd.DataFrame) -> list[str]:
    geom = getattr(gdf, "_geometry_column_name", "geometry")
    cols = [c for c in gdf.columns if c != geom]
    if "feature_id" in cols:
        cols.remove("feature_id")
        cols.insert(0, "feature_id")
    return [str(c) for c in cols[:MAX_POPUP_FIELDS]]


def finding_properties(findings: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
    """Findings with the popup columns: subject, measured and threshold as text with units."""

    f = findings.copy()
    f["subject"] = (f["subject_layer"].astype(str) + " " + f["subject_id"].astype(str)).str.strip()
    f["measured_text"] = [format_value(v, u) for v, u in zip(f["measured"], f["unit"])]
    f["threshold_text"] = [format_value(v, u) for v, u in zip(f["threshold"], f["unit"])]
    f["tip"] = f["rule_id"].astype(str) + " " + f["status"].astype(str) + ": " + f["subject"]
    return f


@dataclass
class LayerPlan:
    """Which input and derived layers map.html draws (see :func:`plan_layers`)."""

    limit: int
    layers: dict[tuple[str, str], bool] = field(default_factory=dict)
    left_out: list[dict[str, Any]] = field(default_factory=list)
    scoped: bool = False
    where: Holders = field(default_factory=Holders)

    def draw(self, kind: str, name: str) -> bool:
        """Whether input / derived layer ``name`` is drawn."""
        return self.layers.get((kind, name), True)

    def note(self) -> str:
        """The legend's note, ``""`` when nothing is left out."""
        if not self.left_out:
            return ""
        items = "; ".join(d["text"] for d in self.left_out)
        return (LEFT_OUT_NOTE_SCOPED if self.scoped else LEFT_OUT_NOTE).format(
            limit=self.limit, items=items, layers=LAYERS_WRITTEN if self.where.layers else LAYERS_NOT_WRITTEN,
            findings=self.where.findings, parcels=self.where.parcels)


def plan_layers(candidates: list[tuple[str, str, gpd.GeoDataFrame]],
                max_features: int = MAX_FEATURES, *, scoped: bool = False,
                where: Holders | None = None) -> LayerPlan:
    """Choose the input and derived layers map.html draws within ``max_features`` features.

    Parameters
    ----------
    candidates : list of (kind, name, GeoDataFrame)
        Input (``kind="input"``) and derived layers, already cut to the area of interest.
    max_features : int
        The budget (:data:`MAX_FEATURES`). The findings are not in it: they are all drawn.
    scoped : bool
        The result kept only the findings that need a person: a parcel with none is not drawn
        (:data:`LEFT_OUT_NOTE_SCOPED`).
    where : Holders, optional
        The files of the set the note sends a reader to (default: the whole set).

    Returns
    -------
    LayerPlan
        Everything when it all fits; otherwise the context inputs, the derived layers, then the
        parcels, each whole or left out; ``left_out`` holds one entry per layer not drawn
        (``{"layer", "total", "drawn", "text"}``).
    """
    plan = LayerPlan(limit=max_features, scoped=scoped, where=where or Holders())
    if sum(len(g) for _, _, g in candidates) <= max_features:
        return plan
    budget = max_features
    order = ([c for c in candidates if c[0] == "input" and c[1] != "parcels"]
             + [c for c in candidates if c[0] == "derived"]
             + [c for c in candidates if c[0] == "input" and c[1] == "parcels"])
    for kind, name, g in order:
        fits = len(g) <= budget
        plan.layers[(kind, name)] = fits
        if fits:
            budget -= len(g)
        else:
            label = styles.style_for(name).label
            what = f"input {label}" if kind == "input" else label
            extra = ""
            if name == "parcels":
                extra = (" (those with a finding that needs a person are drawn by it)" if scoped
                         else " (each is drawn by its findings)")
            plan.left_out.append({"layer": name, "total": len(g), "drawn": 0,
                                  "text": f"{len(g):,} {what}{extra}"})
    return plan


def _style_dict(st: styles.LayerStyle) -> dict[str, Any]:
    d: dict[str, Any] = {"color": st.color, "weight": st.weight, "opacity": st.opacity,
                         "fill": bool(st.fill), "fillColor": st.fill or st.color,
                         "fillOpacity": st.fill_opacity if st.fill else 0.0}
    if st.dash:
        d["dashArray"] = st.dash
    return d


def _kind(gdf: gpd.GeoDataFrame) -> str:
    return styles.geom_family(gdf) or "point"


def _add_geojson(folium: Any, group: Any, gdf: gpd.GeoDataFrame, st: styles.LayerStyle,
                 fields: list[tuple[str, str]], tooltip: str | None, name: str) -> None:
    """Add a GeoJson of ``gdf`` (EPSG:4326, text properties) with a safe popup to ``group``."""
    style = _style_dict(st)
    line_style = {**style, "fill": False}  # a filled polyline would draw a closed wedge

    def style_function(feature: dict[str, Any]) -> dict[str, Any]:
        kind = ((feature.get("geometry") or {}).get("type") or "")
        return line_style if "LineString" in kind else style

    gj = raw_scripts(folium.GeoJson)(
        gdf.to_geo_dict(drop_id=True), name=name,
        style_function=style_function,
        marker=folium.CircleMarker(radius=st.radius, fill=True, color=st.color,
                                   fill_color=st.fill or st.color, fill_opacity=max(st.fill_opacity, 0.8),
                                   weight=st.weight),
        highlight_function=lambda _f, w=st.weight: {"weight": w + 2},
        smooth_factor=0.5, control=False,
    )
    gj.add_child(_text_popup(folium, fields, tooltip))
    gj.add_to(group)


def _view_box(frames: list[gpd.GeoDataFrame | None], crs: Any) -> Any:
    boxes = [f.total_bounds for f in frames if f is not None and len(f)]
    boxes = [b for b in boxes if np.all(np.isfinite(b))]
    if not boxes:
        return None
    a = np.array(boxes)
    return shapely.box(a[:, 0].min(), a[:, 1].min(), a[:, 2].max(), a[:, 3].max())


def build_map(result: Result, *, offline: bool = True, parcel: str | None = None,
              context_margin: float = 0.5, max_features: int = MAX_FEATURES,
              outputs: Iterable[str] = ALL_OUTPUTS, **kwargs: Any) -> Any:
    """A folium Map of ``result``: inputs, derived layers and findings as toggled layers.

    Parameters
    ----------
    result : Result
    offline : bool
        Inline Leaflet from the package and link nothing on the web (default); ``False``
        keeps folium's CDN links for Leaflet. There are never base tiles.
    parcel : str, optional
        Fit the view to this parcel.
    context_margin : float
        Inputs that are not part of the plan (flood zones, streams, roads ...) are kept
        where they touch the area of interest grown by this share of its size, so a
        county-wide layer does not bloat the page.
    max_features : int
        Most GeoJSON features of inputs and derived layers (see :data:`MAX_FEATURES` and
        :func:`plan_layers`); a layer that does not fit is left out and the legend says so.
        Findings are never left out. The returned map's ``gc_left_out`` lists what is, and
        ``gc_counts`` the legend's numbers of findings by status.
    outputs : iterable of str
        The outputs of the set the map belongs to (:mod:`~geoconstraints.output.selection`; default
        every one): the legend's notes name only those files.
    **kwargs
        Passed to :class:`folium.Map` (``width``, ``height``, ``zoom_start`` ...).

    Returns
    -------
    folium.Map
    """
    folium = _require_folium()
    m = _new_map(folium, result, offline=offline, **kwargs)
    inputs = _result_inputs(result)
    # area of interest (working CRS): findings + plan/parcels (+ derived)
    focus = _view_box(focus_frames(result), result.crs)
    if focus is None:
        focus = _view_box(list(result.derived.values()) + list(inputs.values()), result.crs)
    context = _grown_box(focus, context_margin)

    candidates = _candidates(result, inputs, context)
    where = Holders(frozenset(outputs))
    plan = plan_layers(candidates, max_features, scoped=bool(len(result.omitted) and result.omitted["n"].sum()),
                       where=where)
    legend: list[dict[str, Any]] = []
    relief = _add_hillshade(folium, m, result, context, legend)
    _add_input_layers(folium, m, candidates, plan, legend, result.rulebook, inputs)
    _add_derived_layers(folium, m, candidates, plan, legend, relief=relief)
    counts = _add_finding_layers(folium, m, result, legend, where)
    _fit_view(m, result, focus, parcel)
    raw_scripts(folium.LayerControl)(collapsed=True).add_to(m)
    legend.reverse()  # findings first, as they are drawn on top
    shared = any(c.under or c.places < c.total - c.unlocated - c.omitted for c in counts.values())
    m.add_child(_legend(legend, f"{result.command} · {result.rulebook.name} {result.rulebook.version}",
                        note=plan.note(), info=SAME_PLACE_NOTE if shared else ""))
    m.gc_left_out = plan.left_out  # for notebooks and tests: what the page leaves out
    m.gc_counts = counts
    return m


def _new_map(folium: Any, result: Result, *, offline: bool, **kwargs: Any) -> Any:
    """An empty folium Map: no tiles, canvas rendering, Leaflet and the findings script inlined."""

    kwargs.setdefault("tiles", None)
    kwargs.setdefault("control_scale", False)
    kwargs.setdefault("prefer_canvas", True)  # one canvas for every layer: fast, and clicks reach every layer
    kwargs.setdefault("zoom_snap", 0.25)  # fit the area of interest closely (whole zoom levels leave half the map empty)
    m = folium.Map(**kwargs)
    if offline:
        _make_offline(m)
    # in the body: after Leaflet whether it is inlined or linked from a CDN (folium adds CDN links to the
    # header when the page is rendered), before the map's own script that makes the layers
    m.get_root().html.add_child(raw_element(f"<script>\n{findings_js()}\n</script>"), name="gc_findings_js")
    prov_title = f"geoconstraints {result.command} · rulebook {result.rulebook.name} {result.rulebook.version}"
    m.get_root().title = html.escape(visible_text(prov_title))
    m.get_root().header.add_child(folium.Element(
        '<link rel="icon" href="data:,">\n<style>.folium-map { background: #f4f4ef; }\n'
        '.gc-place table { margin: 4px 0; border-top: 1px solid #ddd; }</style>'),
        name="gc_background")
    return m


def _result_inputs(result: Result) -> dict[str, gpd.GeoDataFrame]:
    """The input layers of ``result`` by role."""
    layers = result.layers
    if layers is None:
        return {}
    return {role: g for role in layers if (g := layers.get_layer(role)) is not None}


def _grown_box(focus: Any, margin: float) -> Any:
    """``focus`` grown on every side by ``margin`` of its larger side plus 100 units (None stays None)."""
    if focus is None:
        return None
    x0, y0, x1, y1 = focus.bounds
    grow = max(x1 - x0, y1 - y0) * margin + 100.0
    return shapely.box(x0 - grow, y0 - grow, x1 + grow, y1 + grow)


def _near(g: gpd.GeoDataFrame, role: str, context: Any, crs: Any) -> gpd.GeoDataFrame:
    """The features of a context input that touch ``context`` (plan roles and parcels whole)."""
    if context is None or role in PRIMARY_ROLES or g.crs is None:
        return g
    box = context
    if crs is not None and not g.crs.equals(crs):
        box = gpd.GeoSeries([context], crs=crs).to_crs(g.crs).iloc[0]
    return g.iloc[np.sort(g.sindex.query(box, predicate="intersects"))]


def _candidates(result: Result, inputs: dict[str, gpd.GeoDataFrame],
                context: Any) -> list[tuple[str, str, gpd.GeoDataFrame]]:
    """``(kind, name, frame)`` of every non-empty input (cut to ``context``) and derived layer."""
    candidates: list[tuple[str, str, gpd.GeoDataFrame]] = []
    for role, g in inputs.items():
        g = _near(g, role, context, result.crs)
        if len(g):
            candidates.append(("input", role, g))
    for name, g in result.derived.items():
        if g is not None and isinstance(g, gpd.GeoDataFrame) and len(g):
            candidates.append(("derived", name, g))
    return candidates


def _legend_item(legend: list[dict[str, Any]], label: str, st: styles.LayerStyle, kind: str,
                 detail: str = "") -> None:
    fill = ""
    if st.fill and st.fill_opacity > 0:
        r, g, b = (int(st.fill.lstrip("#")[i:i + 2], 16) for i in (0, 2, 4))
        fill = f"rgba({r},{g},{b},{max(st.fill_opacity, 0.3):.2f})"
    legend.append({"label": label, "color": st.color, "fill": fill, "kind": kind, "detail": detail})


FLOODWAY_CLASS_FIELD = "floodway_class"
"""Property of a flood zone feature in map.html saying how FLD-002 reads it: ``floodway``,
``floodway-like area (floodway not determined)`` (:data:`~geoconstraints.output.styles.ENCROACHMENT_KEY`),
``floodway not determined`` (:data:`~geoconstraints.output.styles.FLOODWAY_UNKNOWN_NOTE`: an SFHA polygon of a
layer whose ZONE_SUBTY cannot tell the floodway) or ``""``; only where the layer has any of them."""

ENCROACHMENT_DETAIL = ("dashed teal outline: a ZONE_SUBTY floodway-like area (encroachment, flowage easement or "
                       "density fringe area), not the FIRM's floodway; whether the floodway's provisions apply there "
                       "is the local administrator's reading (FLD-002 not evaluated)")
"""The legend's line under a floodway-like area's entry."""

FLOODWAY_DETAIL = ("navy outline: the FIRM's regulatory floodway (ZONE_SUBTY FLOODWAY), where the floodway "
                   "provisions apply (FLD-002: encroachment only with a no-rise evaluation)")
"""The legend's line under the floodway's entry."""


def floodway_unknown_detail(problem: str, coded: tuple[str, ...] = ()) -> str:
    """The legend's line under a flood zone in the SFHA whose floodway the layer cannot tell (``problem`` and
    ``coded`` of :func:`~geoconstraints.geometry.overlay.subtype_problem`).

    Examples
    --------
    >>> floodway_unknown_detail("coded", ("1100",))
    "the flood layer's ZONE_SUBTY holds FEMA's domain codes (1100), not their text: no floodway is drawn, which is \
not 'no floodway' (floodway not determined: FLD-002 not evaluated in the SFHA)"
    """
    return (f"{subtype_text(problem, coded)}: no floodway is drawn, which is not 'no floodway' (floodway not "
            f"determined: FLD-002 not evaluated in the SFHA)")


def _add_flood_zone_layers(folium: Any, m: Any, role: str, g4: gpd.GeoDataFrame, cols: list[str],
                           legend: list[dict[str, Any]], rulebook: Any = None,
                           whole: gpd.GeoDataFrame | None = None) -> None:
    """A flood zone input as one layer per zone (AE, X ...), styled as the overview map; FLD-002's
    floodway-like areas (the rulebook's reading, :func:`~geoconstraints.rules.flood.flood_zone_classes`)
    as a layer of their own, each feature carrying its :data:`FLOODWAY_CLASS_FIELD`; where the layer's
    ZONE_SUBTY cannot tell the floodway (``whole``: the whole layer, of which ``g4`` may be the part near the
    findings), the SFHA zones' legend lines and features say the floodway is not determined."""
    preliminary = role.endswith("preliminary")
    classes = None if preliminary or rulebook is None else flood_zone_classes(g4, rulebook, whole=whole)
    enc = np.zeros(len(g4), dtype=bool) if classes is None else classes["encroachment"].to_numpy(dtype=bool)
    fw = np.zeros(len(g4), dtype=bool) if classes is None else classes["floodway"].to_numpy(dtype=bool)
    unk = np.zeros(len(g4), dtype=bool) if classes is None else classes["floodway_unknown"].to_numpy(dtype=bool)
    if (enc | fw | unk).any():
        g4 = g4.assign(**{FLOODWAY_CLASS_FIELD: np.where(fw, "floodway", np.where(
            enc, styles.ENCROACHMENT_KEY, np.where(unk, styles.FLOODWAY_UNKNOWN_NOTE, "")))})
        cols = [FLOODWAY_CLASS_FIELD, *[c for c in cols if c != FLOODWAY_CLASS_FIELD]]
    unknown_detail = floodway_unknown_detail(*subtype_problem(g4 if whole is None else whole)) if unk.any() else ""
    fields = [(c, c.replace("_", " ")) for c in cols]
    sub = g4.get("ZONE_SUBTY", pd.Series([None] * len(g4), index=g4.index))
    keys = pd.Series([styles.flood_zone_key(a, b, encroachment=e, floodway=w)
                      for a, b, e, w in zip(g4["FLD_ZONE"], sub, enc, fw)], index=g4.index)
    for key in sorted(keys.unique()):
        part = g4[keys == key]
        st = styles.flood_zone_style(key, preliminary=preliminary)
        fg = folium.FeatureGroup(name=html.escape(visible_text(f"{st.label} ({len(part)})")), show=st.show)
        _add_geojson(folium, fg, _text_props(part, cols), st, fields, "FLD_ZONE", st.label)
        fg.add_to(m)
        if not preliminary:
            _legend_item(legend, st.label, st, "polygon",
                         detail=FLOODWAY_DETAIL if key.endswith(f": {styles.FLOODWAY_KEY}")
                         else ENCROACHMENT_DETAIL if styles.ENCROACHMENT_KEY in key
                         else unknown_detail if unk[(keys == key).to_numpy()].any() else "")
    if preliminary:  # off at first: one line, not one per zone
        st = styles.flood_zone_style("AE", preliminary=True)
        _legend_item(legend, "Preliminary flood zones", replace(st, fill=None), "polygon",
                     detail="dashed, in the colour of each zone; off at first: tick them in the layer control")


def _drawn(candidates: list[tuple[str, str, gpd.GeoDataFrame]], kind: str,
           plan: LayerPlan) -> Iterator[tuple[str, gpd.GeoDataFrame, list[str]]]:
    """``(name, frame in WGS 84, attribute columns)`` of each non-empty layer of ``kind`` the plan draws."""
    for k, name, g in candidates:
        if k != kind or not plan.draw(k, name):
            continue
        g4 = _to_wgs84(g)
        if len(g4):
            yield name, g4, _attr_columns(g4)


def _add_input_layers(folium: Any, m: Any, candidates: list[tuple[str, str, gpd.GeoDataFrame]],
                      plan: LayerPlan, legend: list[dict[str, Any]], rulebook: Any = None,
                      inputs: dict[str, gpd.GeoDataFrame] | None = None) -> None:
    """The input layers the plan draws (``inputs``: the whole layers by role, of which the candidates may be
    the parts near the findings)."""
    for role, g4, cols in _drawn(candidates, "input", plan):
        if role in ("flood_zones", "flood_zones_preliminary") and "FLD_ZONE" in g4.columns:
            _add_flood_zone_layers(folium, m, role, g4, cols, legend, rulebook, (inputs or {}).get(role))
            continue
        st = styles.style_for(role, _kind(g4))
        fg = folium.FeatureGroup(name=html.escape(f"Input: {st.label} ({len(g4)})"), show=st.show)
        _add_geojson(folium, fg, _text_props(g4, cols), st, [(c, c.replace("_", " ")) for c in cols],
                     "feature_id" if "feature_id" in cols else None, role)
        fg.add_to(m)
        _legend_item(legend, st.label, st, _kind(g4))


def _add_derived_layers(folium: Any, m: Any, candidates: list[tuple[str, str, gpd.GeoDataFrame]],
                        plan: LayerPlan, legend: list[dict[str, Any]], *, relief: bool = False) -> None:
    """The derived layers (buffers, grade runs ...); with a hillshade the contours are shown too."""
    for name, g4, cols in _drawn(candidates, "derived", plan):
        st = styles.style_for(name, _kind(g4))
        if relief and name == "contours":
            st = replace(st, show=True)
        fg = folium.FeatureGroup(name=html.escape(f"{st.label[:1].upper()}{st.label[1:]} ({len(g4)})"),
                                show=st.show)
        _add_geojson(folium, fg, _text_props(g4, cols), st, [(c, c.replace("_", " ")) for c in cols],
                     None, name)
        fg.add_to(m)
        _legend_item(legend, st.label, st, _kind(g4))


def _findings_layer(status: str, style: dict[str, Any], name: str, show: bool) -> Any:
    """A folium Layer drawn by ``gcFindings.layer`` (``assets/gc/findings.js``)."""
    from folium.map import Layer
    from jinja2 import Template

    class FindingsLayer(raw_scripts(Layer)):  # type: ignore[misc]
        _template = Template("""
{% macro script(this, kwargs) %}
var {{ this.get_name() }} = gcFindings.layer({{ this.status_index }}, {{ this.style | tojson }}, {});
{% endmacro %}
""")

        def __init__(self) -> None:
            super().__init__(name=name, overlay=True, control=True, show=show)
            self._name = "GcFindings"
            self.status_index = STATUSES.index(status)
            self.style = style

    return FindingsLayer()


def finding_styles(status: str) -> dict[str, dict[str, Any]]:
    """Leaflet path options of one status by family: ``point``, ``line``, ``polygon`` (an outline,
    so a harvest area or site never hides what lies in it) and ``polygon_fill`` (parcels, lightly filled)."""
    out = {fam: _style_dict(styles.status_style(status, fam)) for fam in ("point", "line", "polygon")}
    out["line"] = {**out["line"], "fill": False, "fillOpacity": 0.0}  # a filled polyline draws a wedge
    outline = {**out["polygon"], "fill": False, "fillOpacity": 0.0, "weight": 3.0}
    if status == "info":  # information: a fine dashed outline, under the others
        outline.update(weight=1.5, dashArray="5 4")
    out["polygon_fill"] = {**out["polygon"], "weight": 1.5}
    out["polygon"] = outline
    return out


@dataclass
class LegendCounts(mapdata.StatusCounts):
    """:class:`~geoconstraints.output.mapdata.StatusCounts` of a result that left findings out
    (a screening keeps only those that need a person): ``total`` counts them too, ``omitted``
    is how many (not drawn; each parcel's outcome is in the parcels table's status columns)."""

    omitted: int = 0


def legend_counts(counts: dict[str, mapdata.StatusCounts], omitted: pd.DataFrame) -> dict[str, LegendCounts]:
    """``counts`` (of the findings kept) with the :attr:`Result.omitted
    <geoconstraints.result.Result.omitted>` ones added: the legend's totals are the report's."""
    left = omitted.groupby("status")["n"].sum() if len(omitted) else pd.Series(dtype="int64")
    out = {}
    for s, c in counts.items():
        n = int(left.get(s, 0))
        out[s] = LegendCounts(total=c.total + n, places=c.places, under=c.under, unlocated=c.unlocated, omitted=n)
    return out


def _count_detail(c: mapdata.StatusCounts, shown: bool = True, where: Holders | None = None) -> str:
    """The legend's second line for one status: where its findings are drawn, and why not all are."""
    parts = [] if shown or not c.places else ["layer off at first: tick it in the layer control"]
    left = getattr(c, "omitted", 0)
    located = c.total - c.unlocated - left
    if c.places and c.places != located:
        parts.append(f"drawn at {c.places:,} place{'s' if c.places != 1 else ''}")
    if c.under:
        parts.append(f"{c.under:,} at places drawn in a more severe status")
    if c.unlocated:
        parts.append(f"{c.unlocated:,} run-wide, without a place on the map")
    if left:
        parts.append(f"{left:,} not in {(where or Holders()).findings}, not drawn: each parcel's outcome is in the "
                     f"status_<rule> columns of {(where or Holders()).parcels}")
    return "; ".join(parts)


def _add_finding_layers(folium: Any, m: Any, result: Result, legend: list[dict[str, Any]],
                        where: Holders | None = None) -> dict[str, Any]:
    """Every finding: one layer per status, each place once (its most severe finding), on the canvas.

    Returns the legend's numbers (:class:`geoconstraints.output.mapdata.StatusCounts` by status).
    """

    payload, drawn = mapdata.encode_findings(result.findings, result.rulebook)
    if payload.get("n_places"):  # a county's popups leave the messages out: say where they are
        payload["full_text_note"] = FULL_TEXT_NOTE.format(findings=(where or Holders()).findings)
    counts = legend_counts(drawn, result.omitted)
    m.get_root().html.add_child(raw_element(
        f'<script type="application/json" id="gc-findings-data">{mapdata.payload_json(payload)}</script>'),
        name="gc_findings_data")
    for status in reversed(STATUSES):  # most severe added last: on top
        c = counts[status]
        if not c.total:
            continue
        label = styles.STATUS_LABELS[status]
        show = status not in ("pass", "info") or c.places <= MAX_SHOWN_PASS
        if c.places:
            _findings_layer(status, finding_styles(status), html.escape(f"Findings: {label} ({c.total - c.omitted:,})"),
                            show).add_to(m)
        st = styles.status_style(status, "polygon")
        _legend_item(legend, f"{label}: {c.total:,} finding{'s' if c.total != 1 else ''}", st, "polygon",
                     detail=_count_detail(c, show, where))
    return counts


def _add_hillshade(folium: Any, m: Any, result: Result, context: Any, legend: list[dict[str, Any]]) -> bool:
    """With a DEM: its hillshade over the map's area as an image under every layer; True when drawn."""
    dem = result.layers.dem if result.layers is not None else None
    if dem is None or context is None or result.crs is None:
        return False
    try:
        shade = hillshade.hillshade_image(dem, context, result.crs, max_px=HILLSHADE_MAX_PX,
                                          azimuth=HILLSHADE_AZIMUTH, altitude=HILLSHADE_ALTITUDE)
    except Exception as exc:  # a background must not withhold the findings
        log.warning("hillshade not drawn: %s", exc, exc_info=True)
        return False
    if shade is None:
        return False
    m.get_root().header.add_child(folium.Element(
        "<style>.leaflet-gc-relief-pane img { image-rendering: auto; }</style>"), name="gc_relief_css")
    fg = folium.FeatureGroup(name="Hillshade (DEM)", show=True)
    raw_scripts(folium.raster_layers.ImageOverlay)(image=shade.data_uri, bounds=shade.bounds_latlon, opacity=1.0,
                                      interactive=False, cross_origin=False, zindex=1, name="hillshade").add_to(fg)
    fg.add_to(m)
    legend.append({"label": f"hillshade of the DEM (sun {HILLSHADE_AZIMUTH:g}°, {HILLSHADE_ALTITUDE:g}° up)",
                   "color": "#777777", "fill": "rgba(120,120,120,0.35)", "kind": "polygon", "detail": ""})
    return True


def _fit_view(m: Any, result: Result, focus: Any, parcel: str | None) -> None:
    """Fit the map to the area of interest, or to ``parcel``."""
    fit = focus
    if parcel is not None:
        pg = parcel_geometry(result, parcel)
        if pg is not None:
            fit = shapely.box(*shapely.bounds(pg))
    if fit is not None and result.crs is not None:
        b = gpd.GeoSeries([fit], crs=result.crs).to_crs(4326).total_bounds
        m.fit_bounds([[float(b[1]), float(b[0])], [float(b[3]), float(b[2])]], padding=(20, 20))


def write_map(result: Result, target: Path, *, offline: bool = True,
              finish: Callable[[str], str] | None = None, **kwargs: Any) -> Path:
    """Write ``map.html`` atomically.

    Parameters
    ----------
    result : Result
    target : Path
        The file to write.
    offline : bool
        ``True`` (default): one self-contained file with Leaflet inlined and no URL of any
        web server in a ``<script>`` or ``<link>``; checked before writing.
    finish : callable, optional
        ``finish(page) -> page``, applied to the page before it is written (the output set
        stamps its run id so), so the file is written once.
    **kwargs
        Passed to :func:`build_map`.

    Returns
    -------
    Path
        ``target``.

    Raises
    ------
    OutputError
        ``offline`` and the page would still load something from the web.
    """

    m = build_map(result, offline=offline, **kwargs)
    page = m.get_root().render()
    if offline:
        ext = external_resources(page)
        if ext:
            raise OutputError(f"{target}: the offline map would load {ext[0]!r} from the web; "
                              f"this is a bug in geoconstraints.webmap, please report it")
    return write_text(Path(target), page if finish is None else finish(page))

