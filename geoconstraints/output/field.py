"""Field files for crews: landings, water bars and stream crossings as KML and GPX (WGS 84).

:func:`field_points` collects the points from a harvest check's Result: each landing (its
point; a landing polygon by a point inside it) with the findings about it, each water bar
placed by HRV-030, each stream crossing found by HRV-013. Names are the ids; the description
gives each rule id with its status and message.

:func:`write_field_files` writes ``field.kml`` (one folder per kind, placemarks coloured by
their most severe status) and ``field.gpx`` (waypoints). The GPX is written by GDAL's GPX
driver through pyogrio. The KML is built with :mod:`xml.etree.ElementTree` (which escapes all
text; the characters XML forbids, control characters of a county's ids, become U+FFFD in both
files: :func:`~geoconstraints.output.styles.xml_text`; in names and descriptions a bidirectional
control or zero-width character is written ``<U+202E>``): GDAL's KML driver writes one layer per file and no styles, and appending a second layer
to a KML through pyogrio crashed the process (pyogrio 0.13 with its GDAL 3.12).
"""

from __future__ import annotations

import logging
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pyogrio
import shapely

from geoconstraints.output import files, styles
from geoconstraints.result import Result
from geoconstraints.rulebook.findings import worst_status

log = logging.getLogger(__name__)

FIELD_NAMES: tuple[str, ...] = ("field.kml", "field.gpx")
"""Files :func:`write_field_files` writes into the output folder."""

KINDS: dict[str, str] = {"landing": "Landings", "water_bar": "Water bars", "stream_crossing": "Stream crossings"}
"""Kind of field point -> KML folder name."""

CROSSING_RULE = "HRV-013"
"""The rule whose findings are the stream crossings."""

WATER_BAR_RULE = "HRV-030"
"""The rule that places the water bars."""

WGS84 = "EPSG:4326"
KML_NS = "http://www.opengis.net/kml/2.2"
COLUMNS = ["kind", "name", "status", "rules", "description"]


def _finding_text(f: pd.DataFrame) -> str:
    return "; ".join(f"{r} {s}: {str(m).rstrip('.')}" for r, s, m in zip(f["rule_id"], f["status"], f["message"]))



def _landings(result: Result) -> gpd.GeoDataFrame | None:
    g = result.layers.get_layer("landings") if result.layers is not None else None
    if g is None:
        return None
    f = result.findings
    f = f[f["subject_layer"] == "landings"]
    by_id = {str(k): v for k, v in f.groupby(f["subject_id"].astype(str), sort=False)}
    geoms = np.asarray(g.geometry.values, dtype=object)
    pts = np.where(np.isin(shapely.get_type_id(geoms), (0,)), geoms, shapely.point_on_surface(geoms))
    rows = []
    for fid, is_point in zip(g["feature_id"].astype(str), shapely.get_type_id(geoms) == 0):
        mine = by_id.get(fid, f.iloc[0:0])
        where = "" if is_point else "A point inside the landing. "
        rows.append({"kind": "landing", "name": fid, "status": worst_status(mine["status"]),
                     "rules": ", ".join(dict.fromkeys(mine["rule_id"])),
                     "description": where + (_finding_text(mine) or "no finding about this landing")})
    return gpd.GeoDataFrame(rows, columns=COLUMNS, geometry=pts, crs=g.crs)


def _water_bars(result: Result) -> gpd.GeoDataFrame | None:
    wb = result.derived.get("water_bars")
    if wb is None or not len(wb):
        return None
    f = result.findings
    f = f[(f["rule_id"] == WATER_BAR_RULE) & (f["subject_layer"] == "haul_roads")]
    status = dict(zip(f["subject_id"].astype(str), f["status"]))
    wb = wb.sort_values(["road_id", "dist_ft"], kind="stable")
    seq = wb.groupby("road_id", sort=False).cumcount().to_numpy() + 1
    rows = []
    for (road, d, g, band, sp, lo, hi), n in zip(
            wb[["road_id", "dist_ft", "grade_pct", "band", "spacing_ft", "min_spacing_ft", "max_spacing_ft"]]
            .itertuples(index=False, name=None), seq):
        st = status.get(str(road), "info")
        rows.append({"kind": "water_bar", "name": f"WB {road}-{n:02d}", "status": st, "rules": WATER_BAR_RULE,
                     "description": f"{WATER_BAR_RULE} {st}: water bar on haul road {road} at {d:,.0f} ft from its "
                                    f"start; grade {g:.1f} % (band {band}), spacing {sp:,.0f} ft "
                                    f"(table range {lo:,.0f}-{hi:,.0f} ft)"})
    return gpd.GeoDataFrame(rows, columns=COLUMNS, geometry=wb.geometry.values, crs=wb.crs)


def _crossings(result: Result) -> gpd.GeoDataFrame | None:
    f = result.findings
    f = f[(f["rule_id"] == CROSSING_RULE) & f.geometry.notna()]
    f = f[~f.geometry.is_empty]
    if not len(f):
        return None
    f = f.explode(index_parts=False)
    f = f[f.geometry.geom_type == "Point"]
    if not len(f):
        return None
    sid = f["subject_id"].astype(str)
    n = sid.groupby(sid).cumcount().to_numpy() + 1
    many = sid.map(sid.value_counts()).to_numpy() > 1
    names = [f"X {s}" + (f"-{k}" if m else "") for s, k, m in zip(sid, n, many)]
    rows = [{"kind": "stream_crossing", "name": nm, "status": s, "rules": r, "description": f"{r} {s}: {m} ({c})"}
            for nm, r, s, m, c in zip(names, f["rule_id"], f["status"], f["message"], f["citation"])]
    return gpd.GeoDataFrame(rows, columns=COLUMNS, geometry=f.geometry.values, crs=f.crs)


def field_points(result: Result) -> gpd.GeoDataFrame:
    """Landings, water bars and stream crossings of a harvest check, in WGS 84.

    Returns
    -------
    GeoDataFrame
        Columns ``kind`` (``landing``, ``water_bar``, ``stream_crossing``), ``name`` (the id:
        ``L-1``, ``WB H-1-03``, ``X H-2``), ``status`` (most severe), ``rules``,
        ``description``; point geometry in EPSG:4326.
    """
    parts = [p for p in (_landings(result), _water_bars(result), _crossings(result)) if p is not None]
    if not parts:
        return gpd.GeoDataFrame(columns=COLUMNS, geometry=gpd.GeoSeries([], crs=WGS84), crs=WGS84)
    crs = result.crs
    parts = [p.set_crs(crs, allow_override=True) if p.crs is None else p for p in parts]
    return gpd.GeoDataFrame(pd.concat([p.to_crs(WGS84) for p in parts], ignore_index=True), crs=WGS84)


def _kml_color(hex_color: str) -> str:
    """``#rrggbb`` -> KML ``aabbggrr`` (opaque)."""
    h = hex_color.lstrip("#")
    return f"ff{h[4:6]}{h[2:4]}{h[0:2]}"


def kml_document(points: gpd.GeoDataFrame, title: str) -> bytes:
    """A KML 2.2 document: one folder per kind, placemarks styled by status (UTF-8 bytes)."""
    ET.register_namespace("", KML_NS)
    q = lambda tag: f"{{{KML_NS}}}{tag}"
    root = ET.Element(q("kml"))
    doc = ET.SubElement(root, q("Document"))
    ET.SubElement(doc, q("name")).text = styles.xml_text(title, shown=True)
    for status, color in styles.STATUS_COLORS.items():
        st = ET.SubElement(doc, q("Style"), {"id": f"status-{status}"})
        icon = ET.SubElement(st, q("IconStyle"))
        ET.SubElement(icon, q("color")).text = _kml_color(color)
        ET.SubElement(icon, q("scale")).text = "1.1"
    for kind, folder_name in KINDS.items():
        sub = points[points["kind"] == kind]
        if not len(sub):
            continue
        folder = ET.SubElement(doc, q("Folder"))
        ET.SubElement(folder, q("name")).text = folder_name
        xy = shapely.get_coordinates(sub.geometry.values)
        for (name, status, rules, desc), (lon, lat) in zip(
                sub[["name", "status", "rules", "description"]].itertuples(index=False, name=None), xy):
            pm = ET.SubElement(folder, q("Placemark"))
            ET.SubElement(pm, q("name")).text = styles.xml_text(name, shown=True)
            ET.SubElement(pm, q("description")).text = styles.xml_text(desc, shown=True)
            if status in styles.STATUS_COLORS:
                ET.SubElement(pm, q("styleUrl")).text = f"#status-{status}"
            ext = ET.SubElement(pm, q("ExtendedData"))
            for key, val in (("kind", kind), ("status", status), ("rules", rules)):
                data = ET.SubElement(ext, q("Data"), {"name": key})
                ET.SubElement(data, q("value")).text = styles.xml_text(val)
            pt = ET.SubElement(pm, q("Point"))
            ET.SubElement(pt, q("coordinates")).text = f"{lon:.9f},{lat:.9f}"
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)


def write_gpx(points: gpd.GeoDataFrame, target: Path) -> Path:
    """Write ``points`` as GPX 1.1 waypoints (name, desc, type = kind, sym) with GDAL's GPX driver."""
    wpt = gpd.GeoDataFrame({"name": points["name"].map(lambda v: styles.xml_text(v, shown=True)),
                            "desc": points["description"].map(lambda v: styles.xml_text(v, shown=True)),
                            "type": points["kind"].astype(str),
                            "sym": points["kind"].map({"landing": "Flag", "water_bar": "Triangle",
                                                       "stream_crossing": "Crossing"}).fillna("Waypoint")},
                           geometry=points.geometry.values, crs=WGS84)
    with files.atomic_path(target) as tmp:
        pyogrio.write_dataframe(wpt, tmp, layer="waypoints", driver="GPX", geometry_type="Point")
    return target


def write_field_files(result: Result, out_dir: str | os.PathLike[str]) -> dict[str, Path]:
    """Write ``field.kml`` and ``field.gpx`` (see :func:`field_points`) into ``out_dir``.

    Both are written (an empty document when the plan has no landing, water bar or crossing);
    the folder is created if missing and an input is never overwritten.

    Returns
    -------
    dict
        ``{"field.kml": path, "field.gpx": path}``
    """
    pts = field_points(result)
    inputs = result.layers.input_paths() if result.layers is not None else set()
    out = files.prepare_out_dir(out_dir, inputs)
    written: dict[str, Path] = {}
    kml, gpx = (out / n for n in FIELD_NAMES)
    for t in (kml, gpx):
        files.guard_target(t, inputs)
    title = f"geoconstraints {result.command}: landings, water bars, stream crossings ({result.rulebook.name})"
    with files.atomic_path(kml) as tmp:
        tmp.write_bytes(kml_document(pts, title))
    written["field.kml"] = kml
    written["field.gpx"] = write_gpx(pts, gpx)
    log.info("field files: %d landings, %d water bars, %d stream crossings",
             *(int((pts["kind"] == k).sum()) for k in KINDS))
    return written


__all__ = ["FIELD_NAMES", "field_points", "kml_document", "write_field_files", "write_gpx"]
