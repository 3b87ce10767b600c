"""The ``layers`` command: what a file (or a project file) holds per role and what the loader
would say about it, as lines for people or as data (``layers --json``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyogrio

from geoconstraints.errors import GeoConstraintsError, LayerReadError
from geoconstraints.io.dem import open_dem
from geoconstraints.io.layers import load_layers
from geoconstraints.io.paths import check_file, is_virtual
from geoconstraints.io.postgis import is_db_source, parse_db_source, read_postgis
from geoconstraints.io.projection import crs_label, lonlat_bounds
from geoconstraints.io.roles import ROLES, LayerSource
from geoconstraints.io.sources import gdal_quiet, list_layers, read_project_file
from geoconstraints.text import redact

RASTER_SUFFIXES = (".tif", ".tiff", ".gtiff")

NFHL_TABLE_ROLES = {"s_fld_haz_ar": "flood_zones", "s_bfe": "bfe_lines"}
"""NFHL table names and the role they fill (FEMA's names, as distributed)."""


class _DropWarnings(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno != logging.WARNING


@contextlib.contextmanager
def _quiet_layer_warnings() -> Iterator[None]:
    """Keep load_layers' warnings off the log while describing (they are returned as lines)."""
    logger = logging.getLogger("geoconstraints.io.layers")
    filt = _DropWarnings()
    logger.addFilter(filt)
    try:
        yield
    finally:
        logger.removeFilter(filt)


def role_of_layer(layer: str, file_stem: str, n_layers: int) -> str | None:
    """The role a layer fills: its name (or, for a one-layer file, the file name) as a role
    name or an NFHL table name; None otherwise."""
    for name in (layer, file_stem) if n_layers == 1 else (layer,):
        key = name.lower().replace("-", "_")
        if key in ROLES:
            return key
        if key in NFHL_TABLE_ROLES:
            return NFHL_TABLE_ROLES[key]
    return None


# ------------------------------------------------------------------------------------------
# descriptions as data

def _raw_info(path: Path | str, layer: str) -> dict[str, Any]:
    """What GDAL says of a layer without the loader: count, geometry type, CRS, fields."""
    try:
        with gdal_quiet():
            info = pyogrio.read_info(path, layer=layer)
    except Exception as exc:  # noqa: BLE001 - GDAL raises several kinds
        text = str(exc).strip().splitlines()[0][:150] if str(exc).strip() else type(exc).__name__
        return {"problem": f"cannot read its description ({text})"}
    return {"features": info.get("features"), "geometry_type": info.get("geometry_type") or "no geometry",
            "crs": info.get("crs") or "none", "fields": [str(f) for f in info.get("fields", [])]}


def _raw_text(raw: dict[str, Any]) -> str:
    if "problem" in raw:
        return raw["problem"]
    return (f"{raw['features'] if raw['features'] is not None else '?'} features ({raw['geometry_type']}), "
            f"CRS {raw['crs']}, fields {', '.join(raw['fields']) or 'none'}")


def _loaded(role: str, layers: Any) -> dict[str, Any]:
    """The description of one loaded role: count, kinds, CRS, working CRS, extent, fields, warnings."""
    info = layers.info[role]
    g = layers.frames[role]
    entry: dict[str, Any] = {
        "role": role, "features": info.features, "geometry_types": sorted(set(g.geom_type)) if len(g) else [],
        "crs": info.source_crs, "working_crs": crs_label(layers.crs), "working_crs_reason": layers.crs_reason,
        "fields": list(info.fields), "absent_fields": list(info.absent_fields), "warnings": list(layers.warnings),
        "extent_lonlat": None,
    }
    if len(g):
        entry["extent_lonlat"] = [round(float(v), 6) for v in lonlat_bounds(tuple(g.total_bounds), layers.crs)]
    return entry


def _entry_lines(what: str, e: dict[str, Any]) -> list[str]:
    n = e["features"]
    kinds = ", ".join(e["geometry_types"]) or "no geometries"
    head = (f"  {what} -> role {e['role']}: {n} feature{'' if n == 1 else 's'} ({kinds}), CRS {e['crs']}, "
            f"working CRS {e['working_crs']} ({e['working_crs_reason']})")
    lines = [head]
    if e["extent_lonlat"]:
        w, s_, east, n_ = e["extent_lonlat"]
        lines.append(f"    extent: lon {w:.5f} to {east:.5f}, lat {s_:.5f} to {n_:.5f} "
                     f"(check it is where the data should be)")
    lines.append(f"    fields: {', '.join(e['fields']) or 'none'}")
    lines.extend(f"    warning: {w}" for w in e["warnings"])
    return lines


def describe(path: str | os.PathLike[str]) -> dict[str, Any]:
    """What ``path`` holds per role, as data (the ``layers --json`` output of one source).

    Returns
    -------
    dict
        ``source`` (the file name or redacted URL), ``kind`` (``vector``, ``raster``, ``postgis``),
        ``ok`` (False when the source itself cannot be read), ``problem``, ``layers`` (one
        entry per layer: ``layer``, ``role``, ``features``, ``geometry_types``, ``crs``,
        ``working_crs``, ``extent_lonlat``, ``fields``, ``warnings``, ``problem``), ``notes``.
    """
    text = _as_db_url(os.fspath(path))
    if is_db_source(text):
        return _describe_db(text)
    virtual = is_virtual(text)
    p = Path(text)
    name = redact(text) if virtual else p.name
    out: dict[str, Any] = {"source": name, "kind": "vector", "ok": True, "problem": None, "layers": [], "notes": []}
    if p.suffix.lower() in RASTER_SUFFIXES:
        return _describe_raster(p, name, text if virtual else None)
    try:
        names = list_layers(text if virtual else p)
    except GeoConstraintsError as exc:
        return {**out, "ok": False, "problem": str(exc)}
    stem = Path(text.rstrip("/")).stem
    for lyr in names:
        role = role_of_layer(lyr, stem, len(names))
        entry: dict[str, Any] = {"layer": lyr, "role": role, "problem": None}
        if role is None:
            entry["raw"] = _raw_info(text if virtual else p, lyr)
            out["layers"].append(entry)
            continue
        try:
            with _quiet_layer_warnings():
                layers = load_layers(overrides={role: f"{text}:{lyr}"}, roles=(role,))
        except GeoConstraintsError as exc:
            entry.update(raw=_raw_info(text if virtual else p, lyr), problem=str(exc))
            out["layers"].append(entry)
            continue
        entry.update(_loaded(role, layers))
        out["layers"].append(entry)
    crs_of = {e["role"]: e["crs"] for e in out["layers"] if e.get("crs") and e["problem"] is None}
    if len(set(crs_of.values())) > 1:
        out["notes"].append(f"layers in {len(set(crs_of.values()))} CRSs ("
                            + "; ".join(f"{r} {c}" for r, c in crs_of.items())
                            + "); a run reprojects them all to one working CRS in feet")
    return out


def _describe_raster(path: Path, name: str, uri: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {"source": name, "kind": "raster", "ok": True, "problem": None, "layers": [], "notes": []}
    if uri is None:
        try:
            check_file(path, "DEM")
        except GeoConstraintsError as exc:
            return {**out, "ok": False, "problem": str(exc)}
    entry: dict[str, Any] = {"layer": None, "role": "dem", "problem": None}
    try:
        dem = open_dem(uri or path)
    except GeoConstraintsError as exc:
        import rasterio

        try:
            with rasterio.open(uri or path) as src:
                entry["raw"] = {"width": src.width, "height": src.height, "crs": str(src.crs or "none"),
                                "nodata": src.nodata, "dtype": src.dtypes[0]}
        except Exception:  # noqa: BLE001 - unreadable: the problem says so
            return {**out, "ok": False, "problem": str(exc)}
        entry["problem"] = str(exc)
        out["layers"].append(entry)
        return out
    entry.update(width=dem.width, height=dem.height, crs=crs_label(dem.crs), cell_size_ft=round(dem.cell_size_ft, 6),
                 z_units=dem.z_units, z_units_source=dem.z_units_source, z_scale=dem.z_scale, z_offset=dem.z_offset,
                 nodata=dem.nodata)
    out["layers"].append(entry)
    return out


def _as_db_url(text: str) -> str:
    """Undo ``Path("postgresql://h/db")`` collapsing ``//`` into ``/`` (the CLI passes Paths)."""
    m = re.match(r"(?i)^(postgresql|postgres):/(?!/)", text)
    return f"{m.group(1)}://{text[m.end():]}" if m else text


def _describe_db(url: str) -> dict[str, Any]:
    out: dict[str, Any] = {"source": "PostGIS source", "kind": "postgis", "ok": True, "problem": None,
                           "layers": [], "notes": []}
    try:
        pg = parse_db_source(url)
    except GeoConstraintsError as exc:
        return {**out, "ok": False, "problem": str(exc)}
    out["source"] = pg.redacted
    role = role_of_layer(pg.table, pg.table, 1)
    entry: dict[str, Any] = {"layer": pg.qualified, "table": True, "role": role, "problem": None}
    if role is None:
        try:
            gdf, _ = read_postgis(LayerSource(pg.table, Path(pg.redacted), pg.qualified, db=pg))
        except GeoConstraintsError as exc:
            return {**out, "ok": not isinstance(exc, LayerReadError), "problem": str(exc)}
        epsg = gdf.crs.to_epsg() if gdf.crs is not None else None
        entry["raw"] = {"features": len(gdf), "geometry_type": ", ".join(sorted(set(gdf.geom_type.dropna())))
                        or "no geometries", "crs": f"EPSG:{epsg}" if epsg else str(gdf.crs),
                        "fields": [str(c) for c in gdf.columns if c != gdf.geometry.name]}
        out["layers"].append(entry)
        return out
    try:
        with _quiet_layer_warnings():
            layers = load_layers(overrides={role: url}, roles=(role,))
    except GeoConstraintsError as exc:
        entry["problem"] = str(exc)
        out["layers"].append(entry)
        out["ok"] = not isinstance(exc, LayerReadError)
        return out
    entry.update(_loaded(role, layers))
    out["layers"].append(entry)
    return out


# ------------------------------------------------------------------------------------------
# a project file, dry-run

def describe_project(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Dry-run a project file: what each role maps to, the fields found and missing, problems.

    Every role is loaded on its own (so one bad layer does not hide the others), then all
    together for the working CRS the run would use.

    Returns
    -------
    dict
        ``source``, ``kind`` (``project``), ``ok``, ``problem``, ``crs``/``rulebook``/``dem``
        settings, ``working_crs``, and ``layers``: per role ``source``, ``layer``, ``id_field``,
        ``mapped`` (canonical -> source field), ``missing_optional``, and what :func:`describe`
        gives for a loaded layer.
    """
    p = Path(path)
    out: dict[str, Any] = {"source": p.name, "kind": "project", "ok": True, "problem": None, "layers": [],
                           "notes": [], "settings": {}, "working_crs": None}
    try:
        sources, settings = read_project_file(p)
    except GeoConstraintsError as exc:
        return {**out, "ok": False, "problem": str(exc)}
    out["settings"] = {k: (v if k != "dem" else {kk: str(vv) for kk, vv in v.items() if vv is not None})
                       for k, v in settings.items()}
    for role, src in sources.items():
        entry: dict[str, Any] = {"role": role, "source": src.label, "layer": src.layer, "id_field": src.id_field,
                                 "mapped": dict(src.fields), "problem": None}
        try:
            with _quiet_layer_warnings():
                one = load_layers(project=p, roles=(role,))
        except GeoConstraintsError as exc:
            entry["problem"] = str(exc)
            out["layers"].append(entry)
            continue
        entry.update(_loaded(role, one))
        entry["missing_optional"] = entry.pop("absent_fields")
        out["layers"].append(entry)
    if all(e["problem"] is None for e in out["layers"]):
        try:
            with _quiet_layer_warnings():
                whole = load_layers(project=p)
            out["working_crs"] = f"{crs_label(whole.crs)} ({whole.crs_reason})"
            if whole.dem is not None:
                out["settings"]["dem"] = {"path": str(whole.dem.path), "z_units": whole.dem.z_units,
                                          "z_units_source": whole.dem.z_units_source}
        except GeoConstraintsError as exc:
            out["problem"] = str(exc)
    return out


def _project_lines(d: dict[str, Any]) -> list[str]:
    lines = [f"{d['source']}: project file, {len(d['layers'])} role{'' if len(d['layers']) == 1 else 's'}"]
    if d["problem"] and not d["layers"]:
        return [*lines, f"  problem: {d['problem']}"]
    for k, v in d["settings"].items():
        lines.append(f"  {k}: {v if not isinstance(v, dict) else ', '.join(f'{a} {b}' for a, b in v.items())}")
    for e in d["layers"]:
        where = e["source"] + (f" layer {e['layer']}" if e.get("layer") and ":" not in e["source"] else "")
        head = f"  role {e['role']} <- {where}" + (f", id field {e['id_field']}" if e["id_field"] else "")
        lines.append(head)
        if e["mapped"]:
            lines.append("    mapped: " + ", ".join(f"{c} <- {s}" for c, s in e["mapped"].items()))
        if e["problem"]:
            lines.append(f"    problem: {e['problem']}")
            continue
        lines.append(f"    {e['features']} feature{'' if e['features'] == 1 else 's'} "
                     f"({', '.join(e['geometry_types']) or 'no geometries'}), CRS {e['crs']}")
        lines.append(f"    fields found: {', '.join(e['fields']) or 'none'}")
        if e["missing_optional"]:
            lines.append(f"    optional fields missing: {', '.join(e['missing_optional'])}")
        lines.extend(f"    warning: {w}" for w in e["warnings"])
    if d["working_crs"]:
        lines.append(f"  working CRS {d['working_crs']}")
    if d["problem"]:
        lines.append(f"  problem: {d['problem']}")
    return lines


# ------------------------------------------------------------------------------------------
# as lines

def as_lines(d: dict[str, Any]) -> list[str]:
    """The lines the ``layers`` command prints for a description (:func:`describe`)."""
    if d["kind"] == "project":
        return _project_lines(d)
    if not d["ok"] and not d["layers"]:
        return [d["source"], f"  problem: {d['problem']}"]
    if d["kind"] == "raster":
        return _raster_lines(d)
    if d["kind"] == "postgis":
        lines = [d["source"]]
        if d["problem"]:
            return [*lines, f"  problem: {d['problem']}"]
    else:
        n = len(d["layers"])
        lines = [f"{d['source']}: {n} layer{'' if n == 1 else 's'}"]
    for e in d["layers"]:
        what = f"table {e['layer']}" if e.get("table") else f"layer {e['layer']}"
        if e["role"] is None:
            lines.append(f"  {what}: not a role name; {_raw_text(e['raw'])}")
            target = f"'{d['source']}'" if e.get("table") else f"{d['source']}:{e['layer']}"
            lines.append(f"    map it with --ROLE {target} or in a project file (roles: {', '.join(ROLES)})")
        elif e["problem"] is not None:
            if e.get("table"):
                lines.append(f"  {what} -> role {e['role']}: problem: {e['problem']}")
            else:
                lines.append(f"  {what} -> role {e['role']}: {_raw_text(e['raw'])}")
                lines.append(f"    problem: {e['problem']}")
        else:
            lines.extend(_entry_lines(what, e))
    lines.extend(f"  note: {n}" for n in d["notes"])
    return lines


def _raster_lines(d: dict[str, Any]) -> list[str]:
    e = d["layers"][0]
    if e["problem"] is not None:
        r = e["raw"]
        raw = f"  raster {r['width']}x{r['height']}, CRS {r['crs']}, nodata {r['nodata']}, dtype {r['dtype']}"
        return [d["source"], raw, f"  role dem: problem: {e['problem']}"]
    line = (f"  role dem: raster {e['width']}x{e['height']}, CRS {e['crs']}, cell {e['cell_size_ft']:.3f} "
            f"ft, z in {e['z_units']} ({e['z_units_source']}), nodata {e['nodata']}")
    if e.get("z_scale", 1.0) != 1.0 or e.get("z_offset", 0.0) != 0.0:
        line += f", stored values x {e['z_scale']:g} + {e['z_offset']:g} (band scale and offset)"
    return [d["source"], line]


def describe_file(path: str | Path) -> tuple[list[str], bool]:
    """Describe what ``path`` holds per role, with the problems :func:`load_layers` finds.

    Parameters
    ----------
    path : str or Path
        A vector file (GeoPackage, shapefile, GeoJSON, ...), a GDAL virtual path or URL, a
        GeoTIFF DEM, or a PostGIS URL (``postgresql://USER@HOST/DB?table=SCHEMA.TABLE``).

    Returns
    -------
    (list of str, bool)
        Lines to print (the file name, then per layer: role, feature count, CRS, fields, and
        ``warning:`` / ``problem:`` lines), and False when the file itself cannot be read.

    Examples
    --------
    >>> from geoconstraints import sample_path
    >>> lines, ok = describe_file(sample_path("vestal_sample.gpkg"))
    >>> ok, lines[0]
    (True, 'vestal_sample.gpkg: 18 layers')
    >>> print(lines[1])  # doctest: +ELLIPSIS
      layer parcels -> role parcels: 2819 features (Polygon), CRS EPSG:2261, working CRS EPSG:2261 (...)
    """
    d = describe(path)
    return as_lines(d), d["ok"]


def describe_db(url: str) -> tuple[list[str], bool]:
    """Describe a PostGIS table like a file's layer (the password, if any, is never printed)."""
    d = _describe_db(url)
    return as_lines(d), d["ok"]
