"""One style table: QGIS ``layer_styles`` in results.gpkg and the web map's colours come
from this module, so a violation is the same red everywhere.
"""

from __future__ import annotations

import logging
import math
import os
import re
import sqlite3
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import shapely

from geoconstraints.errors import OutputError
from geoconstraints.io.validate import FAMILY_OF_TYPE_ID
from geoconstraints.rulebook.findings import STATUSES
from geoconstraints.text import visible_text

log = logging.getLogger(__name__)

STATUS_COLORS: dict[str, str] = {
    "violation": "#D55E00", "review": "#E69F00", "not_evaluated": "#882255",
    "info": "#000000", "pass": "#009E73",
}
"""Colour of each finding status: safe for colour-blind readers and apart from every flood-zone colour.

Vermillion, orange, black and bluish green are Okabe & Ito's colour-universal palette
("Color Universal Design", 2002/2008); not evaluated is wine from Paul Tol's "muted" scheme
(a purple away from the flood map's blues and violets). Checked in ``tests/test_palette.py``:
every pair of statuses at least 20 CIEDE2000 apart for normal vision and 10 apart under a
full protan, deutan and tritan simulation (the smallest pair, violation / review under deutan,
stays apart by lightness, as Okabe & Ito designed it), and every status at least
:data:`MIN_DELTA_E_FLOOD` from every colour of :data:`FLOOD_ZONE_COLORS`. Blue is left to the
flood map (and info is black), grey to the shaded 0.2 % zone.
"""

STATUS_LABELS: dict[str, str] = {
    "violation": "violation", "review": "needs review", "not_evaluated": "not evaluated",
    "info": "information", "pass": "pass",
}
"""Legend text of each status."""

PX_TO_MM = 0.26
"""Width of one screen pixel in millimetres (QGIS symbol widths are in mm)."""


@dataclass(frozen=True)
class LayerStyle:
    """How one layer is drawn, in web terms (CSS colours, pixels).

    Attributes
    ----------
    color : str
        Stroke colour (``#rrggbb``).
    fill : str or None
        Fill colour; ``None`` draws polygons hollow.
    fill_opacity : float
        0-1.
    weight : float
        Stroke width in pixels.
    opacity : float
        Stroke opacity 0-1.
    dash : str
        SVG dash pattern (``"6 4"``) or ``""`` for solid.
    radius : float
        Marker radius in pixels for point layers.
    label : str
        Legend text.
    show : bool
        Shown when the web map opens.
    """

    color: str
    fill: str | None = None
    fill_opacity: float = 0.0
    weight: float = 1.0
    opacity: float = 1.0
    dash: str = ""
    radius: float = 4.0
    label: str = ""
    show: bool = True


_INPUT = LayerStyle("#555555", None, 0.0, 1.0, 0.8, label="input")
LAYER_STYLES: dict[str, LayerStyle] = {
    # inputs (the input roles): light, so findings stand out
    "parcels": LayerStyle("#4d4d4d", None, 0.0, 1.0, 0.7, label="parcels"),
    "flood_zones": LayerStyle("#2166ac", "#6baed6", 0.25, 0.8, 0.8, label="flood zones"),
    "flood_zones_preliminary": LayerStyle("#762a83", None, 0.0, 1.2, 0.9, "5 4",
                                          label="preliminary flood zones", show=False),
    "bfe_lines": LayerStyle("#08306b", None, 0.0, 1.0, 0.9, "2 3", label="base flood elevation lines"),
    "streams": LayerStyle("#3182bd", "#9ecae1", 0.4, 2.0, 0.9, label="streams"),
    "stream_corridor": LayerStyle("#6baed6", "#c6dbef", 0.3, 0.8, 0.8, label="stream corridor"),
    "critical_slopes": LayerStyle("#8c510a", "#dfc27d", 0.3, 0.8, 0.8, label="critical slopes"),
    "zoning": LayerStyle("#9970ab", None, 0.0, 0.8, 0.6, "4 3", label="zoning", show=False),
    "roads": LayerStyle("#252525", None, 0.0, 2.0, 0.8, label="roads"),
    "row": LayerStyle("#737373", "#d9d9d9", 0.3, 0.6, 0.8, label="rights-of-way", show=False),
    "dwellings": LayerStyle("#000000", "#ffffff", 0.9, 1.0, 1.0, radius=4, label="dwellings"),
    "harvest_area": LayerStyle("#238b45", "#a1d99b", 0.15, 1.5, 0.9, label="harvest area"),
    "landings": LayerStyle("#8c510a", "#bf812d", 0.8, 1.5, 1.0, radius=6, label="landings"),
    "haul_roads": LayerStyle("#8c510a", None, 0.0, 2.5, 0.9, label="haul roads"),
    "skid_trails": LayerStyle("#bf812d", None, 0.0, 1.5, 0.9, "6 4", label="skid trails"),
    "disturbance": LayerStyle("#b35806", "#fdb863", 0.25, 1.0, 0.9, label="soil disturbance"),
    "impaired_waters": LayerStyle("#542788", "#b2abd2", 0.3, 2.0, 0.9, label="impaired waters"),
    "footprints": LayerStyle("#000000", "#969696", 0.5, 1.0, 1.0, label="structure footprints"),
    # derived layers
    "buffer_strips": LayerStyle("#1f78b4", "#a6cee3", 0.35, 1.0, 0.9, label="buffer strips"),
    "buffers": LayerStyle("#1f78b4", "#a6cee3", 0.35, 1.0, 0.9, label="buffers"),
    "grade_runs": LayerStyle("#e31a1c", None, 0.0, 5.0, 0.95, label="steep grade runs"),
    "water_bars": LayerStyle("#6a3d9a", "#cab2d6", 1.0, 1.5, 1.0, radius=5, label="water bars"),
    "contours": LayerStyle("#a6611a", None, 0.0, 0.6, 0.6, label="contours (10 ft)", show=False),
    "sfha_overlaps": LayerStyle("#08519c", "#4292c6", 0.35, 1.0, 0.9, label="parts in the SFHA"),
    "floodway_overlaps": LayerStyle("#08306b", "#08306b", 0.45, 1.2, 0.9, "4 2", label="parts in the floodway"),
    # the floodway's dashed fill in teal: FLD-002's "floodway not determined", not the floodway
    "encroachment_overlaps": LayerStyle("#01665e", "#01665e", 0.45, 1.2, 0.9, "4 2",
                                        label="parts in a floodway-like area (floodway not determined)"),
    "parcels_table": LayerStyle("#4d4d4d", None, 0.0, 1.0, 0.8, label="parcels"),
}
"""Style of each input role and derived layer, by name; see :func:`style_for`."""

FLOOD_ZONE_COLORS: dict[str, str] = {
    "VE": "#54278f", "V": "#756bb1", "AE": "#08519c", "A": "#3182bd", "AO": "#6baed6",
    "AH": "#6baed6", "A99": "#9ecae1", "AR": "#9ecae1", "X (0.2% annual chance)": "#a6a6a6",
    "X (protected by levee)": "#c8c8c8", "X": "#e6e6e6", "D": "#d8c9a3",
}
"""Fill colour of each flood-zone key of :func:`flood_zone_key`: the special flood hazard area in
blues (coastal V zones in violets), the 0.2 % annual chance zone in grey as FEMA's printed FIRMs
shade it ("shaded X"), zone D (undetermined) in sand. None of them is near a status colour
(:data:`MIN_DELTA_E_FLOOD`): an orange 0.2 % zone would read as a review."""

FLOOD_UNKNOWN_COLOR = "#bdbdbd"
"""Fill colour of a flood-zone key not in :data:`FLOOD_ZONE_COLORS`."""

MIN_DELTA_E_FLOOD = 15.0
"""Smallest CIEDE2000 difference allowed between a status colour and a flood-zone colour."""

ENCROACHMENT_COLOR = LAYER_STYLES["encroachment_overlaps"].color
"""Outline of a floodway-like area (NFHL's STATE / COMMUNITY ENCROACHMENT AREA, FLOWAGE EASEMENT AREA, DENSITY
FRINGE AREA, as FLD-002 reads them: ``classify_flood_zones``' ``encroachment``), dashed as the floodway's parts
are: a dark teal at least 20 CIEDE2000 from every status and flood-zone colour and from the floodway's navy."""

ENCROACHMENT_KEY = "floodway-like area (floodway not determined)"
"""What :func:`flood_zone_key` adds to the zone of a floodway-like area (``AE: floodway-like area ...``)."""

FLOODWAY_KEY = "regulatory floodway"
"""What :func:`flood_zone_key` adds to the zone of a floodway polygon (``AE: regulatory floodway``): the FIRM's
floodway drawn as such in the flood zones layer, river channel included, not only through the parcels' parts."""

FLOODWAY_UNKNOWN_NOTE = "floodway not determined"
"""What the maps add to a flood zone in the SFHA where the flood layer's ZONE_SUBTY cannot tell the floodway
(``classify_flood_zones``' ``floodway_unknown``: no field, no value, FEMA's domain codes): no floodway drawn there
is not "no floodway"."""


def style_for(name: str, family: str | None = None) -> LayerStyle:
    """The :class:`LayerStyle` of a layer name (input role or derived layer).

    Parameters
    ----------
    name : str
        ``parcels``, ``buffer_strips``, ``grade_runs``, ... An unknown name gets a neutral
        grey style; a name containing ``buffer`` gets the buffer style.
    family : {"point", "line", "polygon"}, optional
        Only used to give an unknown polygon layer a faint fill.

    Returns
    -------
    LayerStyle
    """
    if name in LAYER_STYLES:
        return LAYER_STYLES[name]
    if "buffer" in name:
        return replace(LAYER_STYLES["buffer_strips"], label=name.replace("_", " "))
    st = replace(_INPUT, label=name.replace("_", " "))
    if family == "polygon":
        st = replace(st, fill="#bdbdbd", fill_opacity=0.2)
    return st


_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(value: Any, *, shown: bool = False) -> str:
    r"""``value`` as text an XML 1.0 document can hold: each character XML forbids (NUL and the other
    C0 controls but tab and line breaks, lone surrogates, U+FFFE, U+FFFF) becomes U+FFFD.

    ElementTree escapes ``<``, ``&`` and quotes but writes these characters as they are, and a
    KML, GPX or QML holding one is not well-formed (Google Earth, QGIS refuse the whole file).

    ``shown``: the text is read by a person (a KML placemark's name and description, a GPX
    waypoint's): its invisible and control characters are written ``<U+202E>`` first
    (:func:`~geoconstraints.text.visible_text`). A value that must match the data (a QML category,
    a field name) keeps them.

    Examples
    --------
    >>> xml_text("L-1\x00\x1b<b>") == "L-1\ufffd\ufffd<b>"
    True
    >>> xml_text("L-1\u202e\x00", shown=True) == "L-1<U+202E><U+0000>"  # shown: the controls too, visibly
    True
    """
    return _NOT_XML.sub("\ufffd", visible_text(value) if shown else str(value))


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def flood_zone_key(fld_zone: Any, zone_subty: Any = None, *, encroachment: bool = False,
                   floodway: bool = False) -> str:
    """Legend key of an NFHL zone: ``AE``, ``A``, ``VE``, ``X (0.2% annual chance)``, ``X``, ``D``...

    Parameters
    ----------
    fld_zone, zone_subty : str or None
        NFHL ``FLD_ZONE`` and ``ZONE_SUBTY`` values.
    encroachment : bool
        The polygon is a floodway-like area as the rulebook reads it (``classify_flood_zones``'
        ``encroachment``: FLD-002's ``encroachment_subtypes_contain``; this module keeps no list):
        the key is the zone's with :data:`ENCROACHMENT_KEY` (``AE: floodway-like area (floodway not
        determined)``).
    floodway : bool
        The polygon is the regulatory floodway as the rulebook reads it (``classify_flood_zones``'
        ``floodway``): the key is the zone's with :data:`FLOODWAY_KEY` (``AE: regulatory floodway``).

    Returns
    -------
    str
        ``"unknown"`` when ``FLD_ZONE`` is empty.

    Examples
    --------
    >>> flood_zone_key("AE", "STATE ENCROACHMENT AREA"), flood_zone_key("AE", "x", encroachment=True)
    ('AE', 'AE: floodway-like area (floodway not determined)')
    >>> flood_zone_key("AE", "FLOODWAY", floodway=True)
    'AE: regulatory floodway'
    """
    if floodway:
        return f"{flood_zone_key(fld_zone, zone_subty)}: {FLOODWAY_KEY}"
    if encroachment:
        return f"{flood_zone_key(fld_zone, zone_subty)}: {ENCROACHMENT_KEY}"
    z = "" if _missing(fld_zone) else str(fld_zone)
    z = z.strip().upper()
    if not z:
        return "unknown"
    if z == "X" or z.startswith("0.2"):
        sub = "" if _missing(zone_subty) else str(zone_subty).upper()
        if "0.2" in sub or z.startswith("0.2"):
            return "X (0.2% annual chance)"
        if "LEVEE" in sub:
            return "X (protected by levee)"
        return "X"
    return z


def flood_zone_color(key: str) -> str:
    """Fill colour of a :func:`flood_zone_key` key (grey for an unknown key)."""
    return FLOOD_ZONE_COLORS.get(key, FLOOD_UNKNOWN_COLOR)


def flood_zone_style(key: str, *, preliminary: bool = False) -> LayerStyle:
    """Style of one :func:`flood_zone_key`: SFHA zones (A*, V*) strong, 0.2 % medium, others faint; a
    floodway-like area filled as its zone, outlined in :data:`ENCROACHMENT_COLOR` dashed; the regulatory
    floodway filled as its zone, outlined in the navy of the floodway's parts (``floodway_overlaps``), solid.

    Examples
    --------
    >>> st = flood_zone_style("AE: regulatory floodway")
    >>> st.color == LAYER_STYLES["floodway_overlaps"].color, st.dash, st.label
    (True, '', 'Flood zone AE: regulatory floodway')
    """
    zone, sep, _ = key.partition(f": {FLOODWAY_KEY}")
    if sep:
        st = flood_zone_style(zone, preliminary=preliminary)
        return replace(st, color=LAYER_STYLES["floodway_overlaps"].color, weight=2.0, opacity=0.9,
                       label=f"{st.label}: {FLOODWAY_KEY}")
    zone, sep, _ = key.partition(f": {ENCROACHMENT_KEY}")
    if sep:
        st = flood_zone_style(zone, preliminary=preliminary)
        return replace(st, color=ENCROACHMENT_COLOR, weight=2.0, opacity=0.9, dash="4 2",
                       label=f"{st.label}: {ENCROACHMENT_KEY}")
    col = flood_zone_color(key)
    sfha = key[:1] in ("A", "V") and not key.startswith("AREA")
    opacity = 0.35 if sfha else (0.3 if key.startswith("X (") else 0.08)
    label = ("Preliminary flood zone " if preliminary else "Flood zone ") + key
    return LayerStyle(col, col, opacity, 0.8 if sfha else 0.5, 0.8 if sfha else 0.5,
                      "5 4" if preliminary else "", label=label, show=not preliminary)


_FAMILIES = ("point", "line", "polygon")
_FAMILY_CODE = np.array([_FAMILIES.index(f) if f in _FAMILIES else -1 for f in FAMILY_OF_TYPE_ID])


def geom_family(df: pd.DataFrame) -> str | None:
    """``point``, ``line`` or ``polygon``: the dominant geometry family of a frame, ``None`` if none.

    A mixed frame (findings of several rules) gets the most common family (of equally common ones,
    the first in the frame); missing and empty geometries and collections do not count. From
    shapely's type ids: no type name per row of a county's parcels.

    Examples
    --------
    >>> import geopandas as gpd
    >>> from shapely.geometry import LineString, Point, box
    >>> geom_family(gpd.GeoDataFrame(geometry=[Point(0, 0), box(0, 0, 1, 1), LineString([(0, 0), (1, 1)]), box(1, 1, 2, 2)]))
    'polygon'
    """
    geom = getattr(df, "geometry", None) if hasattr(df, "_geometry_column_name") else None
    if geom is None:
        return None
    arr = np.asarray(geom.values, dtype=object)
    tid = shapely.get_type_id(arr)
    fam = _FAMILY_CODE[tid[(tid >= 0) & ~shapely.is_empty(arr)]]
    fam = fam[fam >= 0]
    if not len(fam):
        return None
    counts = np.bincount(fam, minlength=len(_FAMILIES))
    tied = np.flatnonzero(counts == counts.max())
    first = min(tied, key=lambda c: int(np.argmax(fam == c)))
    return _FAMILIES[int(first)]


def declared_family(geometry_type: str | None) -> str | None:
    """``point``, ``line`` or ``polygon``: the family of a GeoPackage layer's declared geometry type
    (``gpkg_geometry_columns.geometry_type_name``), ``None`` for a type of no one family
    (``GEOMETRY``, ``GEOMETRYCOLLECTION``). The family of a written layer without a pass over its
    rows (:func:`geom_family` took 1 s for a county's parcels).

    Examples
    --------
    >>> declared_family("MULTIPOLYGON"), declared_family("LineString"), declared_family("GEOMETRY")
    ('polygon', 'line', None)
    """
    return _DECLARED_FAMILY.get(str(geometry_type or "").upper())


_DECLARED_FAMILY = {t.name: str(FAMILY_OF_TYPE_ID[t.value]) for t in shapely.GeometryType
                    if t.value >= 0 and FAMILY_OF_TYPE_ID[t.value] in _FAMILIES}
"""Type name (shapely's, as the GeoPackage declares it) -> family, from the type ids' families."""


# ------------------------------------------------------------------------------------------
# QML (QGIS) and SLD

def _rgba(hex_color: str, alpha: float = 1.0) -> str:
    h = hex_color.lstrip("#")
    r, g, b = (int(h[i:i + 2], 16) for i in (0, 2, 4))
    return f"{r},{g},{b},{round(max(0.0, min(1.0, alpha)) * 255)}"


def _mm(px: float) -> str:
    return f"{px * PX_TO_MM:.2f}"


def _symbol_props(family: str, st: LayerStyle) -> tuple[str, str, dict[str, str]]:
    """(symbol type, symbol-layer class, properties) for a QGIS simple symbol."""
    if family == "point":
        return "marker", "SimpleMarker", {
            "name": "circle", "color": _rgba(st.fill or st.color, max(st.fill_opacity, 0.8)),
            "outline_color": _rgba(st.color, st.opacity), "outline_width": _mm(st.weight),
            "outline_width_unit": "MM", "outline_style": "solid", "size": _mm(2 * st.radius),
            "size_unit": "MM",
        }
    if family == "line":
        return "line", "SimpleLine", {
            "line_color": _rgba(st.color, st.opacity), "line_width": _mm(st.weight),
            "line_width_unit": "MM", "line_style": "dash" if st.dash else "solid",
            "capstyle": "round", "joinstyle": "round",
        }
    return "fill", "SimpleFill", {
        "color": _rgba(st.fill or st.color, st.fill_opacity if st.fill else 0.0),
        "style": "solid" if st.fill else "no", "outline_color": _rgba(st.color, st.opacity),
        "outline_width": _mm(st.weight), "outline_width_unit": "MM",
        "outline_style": "dash" if st.dash else "solid", "joinstyle": "round",
    }


def _symbol_xml(parent: ET.Element, name: str, family: str, st: LayerStyle, tag: str = "symbol") -> None:
    sym_type, cls, props = _symbol_props(family, st)
    sym = ET.SubElement(parent, tag, {"type": sym_type, "name": name, "alpha": "1",
                                      "clip_to_extent": "1", "force_rhr": "0"})
    layer = ET.SubElement(sym, "layer", {"class": cls, "enabled": "1", "locked": "0", "pass": "0"})
    opt = ET.SubElement(layer, "Option", {"type": "Map"})
    for k, v in props.items():
        ET.SubElement(opt, "Option", {"name": k, "type": "QString", "value": v})
    for k, v in props.items():  # QGIS < 3.26 reads <prop>
        ET.SubElement(layer, "prop", {"k": k, "v": v})


_GEOM_CODE = {"point": "0", "line": "1", "polygon": "2"}


def status_style(status: str, family: str) -> LayerStyle:
    """The style of findings of one status (lines thicker, polygons lightly filled: what lies under
    a finding stays readable; information polygons outlined only)."""
    c = STATUS_COLORS.get(status, "#7f7f7f")
    weight = {"line": 4.0, "point": 1.0}.get(family, 2.0)
    if family == "polygon":
        return LayerStyle(c, None if status == "info" else c, 0.0 if status == "info" else 0.2, weight, 1.0,
                          radius=6, label=STATUS_LABELS.get(status, status))
    return LayerStyle(c, c, 0.9, weight, 1.0, radius=6, label=STATUS_LABELS.get(status, status))


STATUS_FIELDS: tuple[str, ...] = ("status", "worst_status")
"""Columns a layer is categorized by, first found first: a finding's ``status``, a subject's ``worst_status``."""


def status_field(df: pd.DataFrame) -> str | None:
    """The column of :data:`STATUS_FIELDS` whose values are finding statuses (or empty), if any.

    An empty layer with such a column counts (the four findings layers are always written).
    """
    for c in STATUS_FIELDS:
        if c in df.columns:
            vals = set(df[c].dropna().astype(str).unique())
            if not vals or (vals - {""}) <= set(STATUSES):
                return c
    return None


def _renderer(root: ET.Element, kind: str, attr: str | None = None) -> ET.Element:
    a = {"type": kind, "symbollevels": "0", "forceraster": "0", "enableorderby": "0", "referencescale": "-1"}
    if attr is not None:
        a["attr"] = attr
    return ET.SubElement(root, "renderer-v2", a)


def _status_renderer(root: ET.Element, attr: str, family: str) -> None:
    """A categorized renderer on ``attr``: one category per status in :data:`STATUS_COLORS`,
    most severe drawn last (on top; QGIS draws categories in order), and ``""`` (QGIS: all
    other values) in the not-evaluated grey for a value that is none of them."""
    r = _renderer(root, "categorizedSymbol", attr)
    cats, syms = ET.SubElement(r, "categories"), ET.SubElement(r, "symbols")
    other = replace(status_style("not_evaluated", family), label="other / no finding")
    entries = [("", "other / no finding", other)] + [
        (st, STATUS_LABELS[st], status_style(st, family)) for st in reversed(STATUSES)]
    for i, (value, label, st) in enumerate(entries):
        ET.SubElement(cats, "category", {"render": "true", "symbol": str(i), "value": value,
                                         "label": label, "type": "string"})
        _symbol_xml(syms, str(i), family, st)
    _symbol_xml(r, "0", family, status_style("not_evaluated", family), tag="source-symbol")


def qml_for(name: str, df: pd.DataFrame, family: str | None = None) -> str:
    """A QGIS style (QML document) for layer ``name`` holding ``df``.

    Findings (a ``status`` column of finding statuses) are categorized by ``status``, and a
    table of subjects (parcels, footprints, landings) by ``worst_status``, with
    :data:`STATUS_COLORS`; flood zones by ``FLD_ZONE``; other layers get a single symbol from
    :func:`style_for`. A table without geometry gets a style with field aliases only.

    Parameters
    ----------
    name : str
        Layer name in the GeoPackage.
    df : DataFrame or GeoDataFrame
    family : {"point", "line", "polygon"}, optional
        The layer's geometry family, when ``df`` cannot tell (an empty layer); default
        :func:`geom_family`.

    Returns
    -------
    str
        The QML XML text (``<!DOCTYPE qgis ...><qgis ...>``).
    """
    family = family or geom_family(df)
    root = ET.Element("qgis", {"version": "3.28.0", "styleCategories": "Symbology|Fields"})
    if family is not None:
        attr = status_field(df)
        if attr is not None:
            _status_renderer(root, attr, family)
        elif "FLD_ZONE" in df.columns:
            r = _renderer(root, "categorizedSymbol", "FLD_ZONE")
            cats, syms = ET.SubElement(r, "categories"), ET.SubElement(r, "symbols")
            zones = sorted(df["FLD_ZONE"].dropna().astype(str).unique())
            for i, z in enumerate(zones):
                col = flood_zone_color(flood_zone_key(z))
                ET.SubElement(cats, "category", {"render": "true", "symbol": str(i), "value": z,
                                                 "label": f"Zone {z}", "type": "string"})
                _symbol_xml(syms, str(i), family, LayerStyle(col, col, 0.35, 0.8, 0.9))
        else:
            r = _renderer(root, "singleSymbol")
            _symbol_xml(ET.SubElement(r, "symbols"), "0", family, style_for(name, family))
        ET.SubElement(root, "layerGeometryType").text = _GEOM_CODE[family]
    aliases = ET.SubElement(root, "aliases")
    geom_name = getattr(df, "_geometry_column_name", None)
    for i, c in enumerate(c for c in df.columns if c != geom_name):
        ET.SubElement(aliases, "alias", {"field": str(c), "index": str(i),
                                         "name": str(c).replace("_", " ")})
    body = xml_text(ET.tostring(root, encoding="unicode"))  # a county's zone values and field names
    return "<!DOCTYPE qgis PUBLIC 'http://mrcc.com/qgis.dtd' 'SYSTEM'>\n" + body


def sld_for(name: str, df: pd.DataFrame, family: str | None = None) -> str:
    """An OGC SLD 1.1 style equivalent to :func:`qml_for` (for GeoServer and others).

    Returns ``""`` for a table without geometry.
    """
    family = family or geom_family(df)
    if family is None:
        return ""
    ns = {"": "http://www.opengis.net/sld", "se": "http://www.opengis.net/se",
          "ogc": "http://www.opengis.net/ogc"}
    SE, OGC, SLD = (f"{{{ns['se']}}}", f"{{{ns['ogc']}}}", f"{{{ns['']}}}")
    for p, uri in ns.items():
        ET.register_namespace(p if p else "sld", uri)
    root = ET.Element(f"{SLD}StyledLayerDescriptor", {"version": "1.1.0"})
    nl = ET.SubElement(root, f"{SLD}NamedLayer")
    ET.SubElement(nl, f"{SE}Name").text = name
    fts = ET.SubElement(ET.SubElement(nl, f"{SLD}UserStyle"), f"{SE}FeatureTypeStyle")

    attr = status_field(df)

    def rule(st: LayerStyle, title: str, status: str | None) -> None:
        ru = ET.SubElement(fts, f"{SE}Rule")
        ET.SubElement(ru, f"{SE}Name").text = title
        if status is not None:
            f = ET.SubElement(ET.SubElement(ru, f"{OGC}Filter"), f"{OGC}PropertyIsEqualTo")
            ET.SubElement(f, f"{OGC}PropertyName").text = attr
            ET.SubElement(f, f"{OGC}Literal").text = status

        def param(parent: ET.Element, tag: str, k: str, v: str) -> None:
            ET.SubElement(ET.SubElement(parent, tag) if tag else parent, f"{SE}SvgParameter",
                          {"name": k}).text = v

        if family == "point":
            g = ET.SubElement(ET.SubElement(ru, f"{SE}PointSymbolizer"), f"{SE}Graphic")
            mk = ET.SubElement(g, f"{SE}Mark")
            ET.SubElement(mk, f"{SE}WellKnownName").text = "circle"
            param(ET.SubElement(mk, f"{SE}Fill"), "", "fill", st.fill or st.color)
            param(ET.SubElement(mk, f"{SE}Stroke"), "", "stroke", st.color)
            ET.SubElement(g, f"{SE}Size").text = f"{2 * st.radius:g}"
        elif family == "line":
            s = ET.SubElement(ET.SubElement(ru, f"{SE}LineSymbolizer"), f"{SE}Stroke")
            param(s, "", "stroke", st.color)
            param(s, "", "stroke-width", f"{st.weight:g}")
            param(s, "", "stroke-opacity", f"{st.opacity:g}")
        else:
            ps = ET.SubElement(ru, f"{SE}PolygonSymbolizer")
            if st.fill:
                fl = ET.SubElement(ps, f"{SE}Fill")
                param(fl, "", "fill", st.fill)
                param(fl, "", "fill-opacity", f"{st.fill_opacity:g}")
            s = ET.SubElement(ps, f"{SE}Stroke")
            param(s, "", "stroke", st.color)
            param(s, "", "stroke-width", f"{st.weight:g}")

    if attr is not None:
        for status in reversed(STATUSES):
            rule(status_style(status, family), STATUS_LABELS[status], status)
    else:
        rule(style_for(name, family), name, None)
    return xml_text(ET.tostring(root, encoding="unicode"))


# ------------------------------------------------------------------------------------------
# the GeoPackage table

LAYER_STYLES_DDL = (
    "CREATE TABLE IF NOT EXISTS layer_styles ("
    "id INTEGER PRIMARY KEY AUTOINCREMENT, f_table_catalog TEXT(256), f_table_schema TEXT(256), "
    "f_table_name TEXT(256), f_geometry_column TEXT(256), styleName TEXT(30), styleQML TEXT, "
    "styleSLD TEXT, useAsDefault BOOLEAN, description TEXT, owner TEXT(30), ui TEXT(30), "
    "update_time DATETIME DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')))"
)
"""The ``layer_styles`` table as QGIS creates it in a GeoPackage."""

def add_layer_styles(gpkg_path: str | os.PathLike[str], layers: Mapping[str, pd.DataFrame],
                     families: Mapping[str, str] | None = None, *, wait_for_disk: bool = True) -> int:
    """Store a default QGIS style for each layer of ``layers`` in the GeoPackage ``gpkg_path``.

    Creates the ``layer_styles`` table (QGIS schema) if missing and registers it in
    ``gpkg_contents`` as an attributes table, as QGIS does; an earlier default style of the
    same layer written by geoconstraints is replaced. Layers of ``layers`` that are not in the
    GeoPackage (an empty frame that was not written) are skipped.

    Call it on the temporary file before it is moved into place (see
    :func:`geoconstraints.writers.write_gpkg` ``finalize=``) so the output stays atomic.

    Parameters
    ----------
    gpkg_path : path
        An existing GeoPackage.
    layers : mapping of str to DataFrame
        Layer name -> the frame written under that name.
    families : mapping of str to str, optional
        Layer name -> ``point``, ``line`` or ``polygon`` for layers whose frame cannot tell (empty).
        Otherwise a layer's family is that of its declared geometry type (:func:`declared_family`),
        and of its rows (:func:`geom_family`) where the type names no one family.
    wait_for_disk : bool
        SQLite waits at the commit until the file is on the disk (default, for a GeoPackage in
        place). ``False`` for a temporary file moved in place once complete (as :func:`write_result
        <geoconstraints.output.write_result>` does): the commit then does not flush the whole file
        GDAL has just written (0.75 s for a county's 570 MB).

    Returns
    -------
    int
        Number of styles written.

    Raises
    ------
    OutputError
        The file is not a GeoPackage or cannot be written.
    """
    path = Path(gpkg_path)
    if not path.is_file():
        raise OutputError(f"{path}: no GeoPackage to add QGIS styles to; write the layers first")
    try:
        con = sqlite3.connect(path)
    except sqlite3.Error as exc:  # pragma: no cover - sqlite opens any path that exists
        raise OutputError(f"{path}: cannot open the GeoPackage to add QGIS styles ({exc})") from None
    n = 0
    try:
        if not wait_for_disk:  # a temporary file, as GDAL wrote it (child.GDAL_WRITE_CONFIG)
            con.execute("PRAGMA synchronous = OFF")
        with con:
            try:
                declared = {r[0]: (r[1], r[2]) for r in con.execute(
                    "SELECT table_name, column_name, geometry_type_name FROM gpkg_geometry_columns")}
                geom_cols = {k: v[0] for k, v in declared.items()}
                tables = {r[0] for r in con.execute("SELECT table_name FROM gpkg_contents")}
            except sqlite3.DatabaseError as exc:
                raise OutputError(f"{path} is not a GeoPackage ({exc}); cannot add QGIS styles") from None
            con.execute(LAYER_STYLES_DDL)
            if "layer_styles" not in tables:
                con.execute(
                    "INSERT INTO gpkg_contents (table_name, data_type, identifier, description, last_change)"
                    " VALUES ('layer_styles', 'attributes', 'layer_styles', 'QGIS layer styles',"
                    " strftime('%Y-%m-%dT%H:%M:%fZ','now'))")
            rows = []
            for name, df in layers.items():
                if df is None or name not in tables or name == "layer_styles":
                    continue
                fam = None
                if geom_cols.get(name):
                    fam = ((families or {}).get(name) or declared_family(declared[name][1])
                           or geom_family(df))
                rows.append(("", "", name, geom_cols.get(name, ""), f"{name} (geoconstraints)",
                             qml_for(name, df, fam), sld_for(name, df, fam), 1,
                             f"geoconstraints default style for {name}", "", ""))
            names = [r[2] for r in rows]
            con.executemany("DELETE FROM layer_styles WHERE f_table_name = ? AND styleName LIKE '% (geoconstraints)'",
                            [(x,) for x in names])
            con.executemany("UPDATE layer_styles SET useAsDefault = 0 WHERE f_table_name = ?",
                            [(x,) for x in names])
            con.executemany(
                "INSERT INTO layer_styles (f_table_catalog, f_table_schema, f_table_name, f_geometry_column,"
                " styleName, styleQML, styleSLD, useAsDefault, description, owner, ui)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
            n = len(rows)
    except sqlite3.Error as exc:
        raise OutputError(f"{path}: cannot write QGIS styles ({exc}); check the folder is writable") from None
    finally:
        con.close()
    log.debug("wrote %d QGIS styles into %s", n, path)
    return n

