"""Where layers come from: role-named GeoPackages, ``PATH[:LAYER]`` overrides and project
files (TOML); reading one layer as it is on disk.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import geopandas as gpd
import pandas as pd
import pyogrio

from geoconstraints.errors import GeometryError, InputError, LayerReadError
from geoconstraints.io.paths import check_file, gdal_path, is_virtual, split_virtual_layer
from geoconstraints.io.postgis import PgSource, is_db_source, parse_db_source, read_postgis
from geoconstraints.io.project import LayerSpec, beside, dem_setting, read_project
from geoconstraints.io.roles import ROLES, LayerSource
from geoconstraints.text import redact

log = logging.getLogger(__name__)


# ------------------------------------------------------------------------------------------
# sources



def parse_path_layer(value: str | os.PathLike[str]) -> tuple[Path, str | None]:
    """Split ``PATH[:LAYER]``; a colon that is part of an existing path is kept.

    A database URL (``postgresql://...``) is never split on its colons: it comes back unsplit,
    with no layer; callers test :func:`is_db_source` first and give it to :func:`parse_db_source`.
    A GDAL virtual path or URL is split by :func:`~geoconstraints.io.paths.split_virtual_layer`.
    """
    text = os.fspath(value)
    if is_virtual(text):
        head, layer = split_virtual_layer(text)
        return Path(head), layer
    if is_db_source(text) or Path(text).exists() or ":" not in text:
        return Path(text), None
    head, _, tail = text.rpartition(":")
    if head and not (len(head) == 1 and head.isalpha()):  # not a Windows drive letter
        return Path(head), tail or None
    return Path(text), None


def list_layers(path: Path | str) -> list[str]:
    """Layer names in a vector file (or GDAL virtual path); LayerReadError when it cannot be opened."""
    if not is_virtual(str(path)):
        check_file(Path(path), str(path))
    try:
        with gdal_quiet() as said:
            names = [str(r[0]) for r in pyogrio.list_layers(gdal_path(str(path)))]
    except Exception as exc:  # noqa: BLE001 - GDAL raises several kinds
        raise LayerReadError(
            f"{redact(str(path))}: cannot be read as vector data ({_short(exc)}). Is it a GeoPackage, "
            f"shapefile or GeoJSON, and not corrupt?{_net_hint(str(path))}"
        ) from None
    if not names:
        raise LayerReadError(f"{redact(str(path))}: holds no vector layer{'; ' + said[0] if said else ''}. "
                             f"Is it a GeoPackage, shapefile or GeoJSON?")
    return names


def _net_hint(text: str) -> str:
    return (" A URL is read over the network by GDAL: check it is reachable, or download the file and "
            "give its path" if "/vsicurl/" in gdal_path(text) else "")


def _short(exc: BaseException) -> str:
    text = str(exc).strip().split("; It might help to specify")[0]  # GDAL's driver-prefix hint
    if "sqlite3_" in text and "failed: " in text:  # keep SQLite's reason, not the query it ran
        text = text.rsplit("failed: ", 1)[1].split(";")[0]
    return redact(text.splitlines()[0][:200]) if text else type(exc).__name__


@contextlib.contextmanager
def gdal_quiet() -> Iterator[list[str]]:
    """Keep GDAL's and pyogrio's warnings (``warnings.warn`` with a source line) off stderr; the
    list yielded receives their messages, one line each, for the caller to word as its own."""
    said: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield said
        finally:
            said.extend(dict.fromkeys(str(w.message).splitlines()[0] for w in caught
                                      if issubclass(w.category, (UserWarning, RuntimeWarning))))


def sources_from_geopackage(path: Path | str) -> dict[str, LayerSource]:
    """Roles found in a file whose layer names are role names (case-insensitive)."""
    found: dict[str, LayerSource] = {}
    text = os.fspath(path)
    uri = gdal_path(text) if is_virtual(text) else None
    for name in list_layers(text if uri else Path(path)):
        role = name.lower().replace("-", "_")
        if role in ROLES:
            found[role] = LayerSource(role, Path(text), name, uri=uri)
    return found


def read_project_file(path: Path) -> tuple[dict[str, LayerSource], dict[str, Any]]:
    """Read a project TOML (see :mod:`geoconstraints.io.project`): the sources and the other
    settings (``crs``, ``rulebook``, ``dem`` as ``{"path", "z_units"}``).

    Paths are relative to the project file. A ``path`` that is a PostGIS URL may come with
    ``table = "SCHEMA.TABLE"`` and ``geometry = "COLUMN"`` (no ``where``: free SQL is not accepted;
    filter with a view in the database and name the view as the table).
    """
    proj = read_project(path)
    base = path.parent
    sources: dict[str, LayerSource] = {}
    for role, spec in proj.layers.items():
        if isinstance(spec, str):
            spec = LayerSpec(path=spec)
        if is_db_source(spec.path):
            if spec.where is not None:
                raise InputError(f"project file {path}: [layers.{role}] where is not supported (free SQL "
                                 f"could do anything in the database). Create a view that filters the "
                                 f"rows and give it as table")
            pg = parse_db_source(spec.path, spec.table or spec.layer, spec.geometry)
            sources[role] = _db_layer_source(role, pg, dict(spec.fields), spec.id)
            continue
        if spec.where is not None or spec.table is not None or spec.geometry is not None:
            key = "where" if spec.where is not None else "table" if spec.table is not None else "geometry"
            raise InputError(f"project file {path}: [layers.{role}] {key} is only for a PostGIS path "
                             f"(postgresql://...); for a file give layer = \"NAME\"")
        src = file_source(role, beside(base, spec.path))
        src.layer = spec.layer or src.layer
        src.fields, src.id_field = dict(spec.fields), spec.id
        sources[role] = src
    settings: dict[str, Any] = {k: v for k, v in (("crs", proj.crs), ("rulebook", proj.rulebook)) if v is not None}
    if proj.rulebook is not None and proj.rulebook.lower().endswith((".yaml", ".yml")):
        settings["rulebook"] = beside(base, proj.rulebook)
    dem = dem_setting(proj, base)
    if dem:
        settings["dem"] = dem
    return sources, settings


def file_source(role: str, value: str | os.PathLike[str]) -> LayerSource:
    """The source of ``role`` from ``PATH[:LAYER]`` (a GDAL virtual path or URL kept as given)."""
    text = os.fspath(value)
    if is_virtual(text):
        head, layer = split_virtual_layer(text)
        return LayerSource(role, Path(head), layer, uri=gdal_path(head))
    p, layer = parse_path_layer(text)
    return LayerSource(role, p, layer)


def resolve_sources(
    source: str | os.PathLike[str] | None = None,
    overrides: Mapping[str, Any] | None = None,
    project: str | os.PathLike[str] | None = None,
) -> tuple[dict[str, LayerSource], dict[str, Any]]:
    """Combine (c) project file, (a) a role-named GeoPackage, (b) per-role overrides, in that order.

    An override is ``PATH[:LAYER]``, a PostGIS URL, or a GeoDataFrame (read from memory).
    """
    sources: dict[str, LayerSource] = {}
    settings: dict[str, Any] = {}
    if project is not None:
        s, settings = read_project_file(Path(project))
        sources.update(s)
    if source is not None:
        sources.update(_sources_of(source, settings))
    for role, value in (overrides or {}).items():
        if value is None:
            continue
        if role not in ROLES:
            raise InputError(f"unknown role {role!r}; roles are {', '.join(ROLES)}")
        prev = sources.get(role)
        fields, id_field = (dict(prev.fields), prev.id_field) if prev else ({}, None)
        if isinstance(value, gpd.GeoDataFrame):
            sources[role] = LayerSource(role, Path("GeoDataFrame"), None, fields, id_field, frame=value)
        elif isinstance(value, (str, os.PathLike)) and is_db_source(value):
            sources[role] = _db_layer_source(role, parse_db_source(os.fspath(value)), fields, id_field)
        elif isinstance(value, (str, os.PathLike)):
            src = file_source(role, value)
            src.fields, src.id_field = fields, id_field
            sources[role] = src
        else:
            raise InputError(f"{role}: {type(value).__name__} is not a layer; give a path (PATH[:LAYER]), a "
                             f"PostGIS URL or a GeoDataFrame")
    return sources, settings


def _sources_of(source: str | os.PathLike[str], settings: dict[str, Any]) -> dict[str, LayerSource]:
    """The sources of the positional SOURCE: a project file or a role-named GeoPackage."""
    if is_db_source(source):
        raise InputError("a PostGIS database is not a role-named GeoPackage: give each role's table, "
                         "e.g. --parcels 'postgresql://USER@HOST:PORT/DB?table=SCHEMA.TABLE', or map "
                         "roles to tables in a project file")
    p, layer = parse_path_layer(source)
    if p.suffix.lower() == ".toml" and not is_virtual(os.fspath(source)):
        s, more = read_project_file(p)
        settings.update(more)
        return s
    if layer:
        raise InputError(f"{source}: give the whole GeoPackage, or use --ROLE PATH:LAYER")
    found = sources_from_geopackage(os.fspath(source) if is_virtual(os.fspath(source)) else p)
    if not found:
        raise InputError(
            f"{redact(os.fspath(source))}: none of its layers is named after a role ({', '.join(ROLES)}). "
            f"Rename the layers or map them with --ROLE PATH:LAYER or a project file"
        )
    return found


def _db_layer_source(role: str, pg: PgSource, fields: dict[str, str], id_field: str | None) -> LayerSource:
    return LayerSource(role, Path(pg.redacted), pg.qualified, fields, id_field, db=pg)


# ------------------------------------------------------------------------------------------
# reading and validating one layer

def file_stamp(path: str | os.PathLike[str] | None) -> tuple[int, int] | None:
    """``(size in bytes, modification time in ns)`` of a local file as it is now; None for no path,
    no such file or not a regular file.

    Taken when an input is read (before its bytes are) and again when the outputs are written: a
    file rewritten or replaced in between differs, and the run says so instead of describing a file
    it never read.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = Path(d) / "a.csv"
    ...     _ = p.write_text("abc")
    ...     file_stamp(p)[0], file_stamp(Path(d)), file_stamp(Path(d) / "none")
    (3, None, None)
    """
    if path is None:
        return None
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_size, st.st_mtime_ns) if stat.S_ISREG(st.st_mode) else None


def read_source(src: LayerSource, warn: list[str] | None = None) -> gpd.GeoDataFrame:
    """Read one layer as it is on disk (no reprojection); LayerReadError when unreadable.

    A PostGIS source is read by :func:`read_postgis`; a GeoDataFrame source is copied (the
    caller's frame is never modified). GDAL's warnings become lines of ``warn``: an M (measure)
    dimension dropped, a shapefile without its ``.dbf`` (no attributes), anything else GDAL says.
    """
    if src.db is not None:
        return read_postgis(src)[0]
    what = f"layer {src.role} ({src.label})"
    if src.frame is not None:
        return _frame_copy(src.frame, what)
    target = src.uri if src.uri is not None else src.path
    if src.uri is None:
        check_file(src.path, what)
        _missing_dbf(src.path, what, warn)
    layer = src.layer
    if layer is not None:
        names = list_layers(target)
        if layer not in names:
            raise LayerReadError(
                f"{what}: {src.path.name} has no layer {layer!r}; it has {', '.join(names)}"
            )
    else:
        try:
            names = list_layers(target)
        except LayerReadError:  # the read below says why, naming the layer
            names = []
        layer = _only_layer(src, names, what)
    try:
        with gdal_quiet() as said:
            gdf = _read_file(target, layer)
    except Exception as exc:  # noqa: BLE001 - any GDAL failure is an unreadable input
        raise LayerReadError(f"{what}: cannot be read ({_short(exc)}). {_read_fix(exc, target)}") from None
    for line in said:
        if "Measured (M)" in line:
            line = "M (measure) values dropped (they are not used by any rule)"
        if warn is not None:
            warn.append(f"{what}: {line if line.startswith('M (') else 'GDAL: ' + line}")
    if not isinstance(gdf, gpd.GeoDataFrame) or gdf.geometry is None:
        raise GeometryError(f"{what}: has no geometry column (an attribute table is not a map layer). "
                            f"Give the layer with its shapes (the .shp beside the .dbf, or the GeoPackage layer)")
    return gdf


def _only_layer(src: LayerSource, names: list[str], what: str) -> str | None:
    """The layer to read from a file given without ``:LAYER``: its only layer, else the one named after
    the role (``parcels``, case and ``-``/``_`` aside); a file of several layers none of which is
    named so is refused, naming its layers (GDAL would read the first, which may be any of them).

    Examples
    --------
    >>> from geoconstraints.io.roles import LayerSource
    >>> src = LayerSource("parcels", Path("town.gpkg"), None)
    >>> _only_layer(src, ["Parcels", "zoning"], "layer parcels (town.gpkg)")
    'Parcels'
    >>> _only_layer(src, ["a", "b"], "layer parcels (town.gpkg)")
    Traceback (most recent call last):
    ...
    geoconstraints.errors.LayerReadError: layer parcels (town.gpkg): town.gpkg holds 2 layers (a, b) and none is named parcels, so which one is the parcels is not known. Name it: --parcels town.gpkg:LAYER (in a project file: layer = "LAYER" under [layers.parcels])
    """
    if len(names) <= 1:
        return None
    named = [n for n in names if n.lower().replace("-", "_") == src.role]
    if len(named) == 1:
        return named[0]
    shown = ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
    name = redact(src.uri) if src.uri is not None else src.path.name
    raise LayerReadError(
        f"{what}: {name} holds {len(names)} layers ({shown}) and none is named {src.role}, so which one is the "
        f"{src.role} is not known. Name it: --{src.role.replace('_', '-')} {name}:LAYER (in a project file: "
        f"layer = \"LAYER\" under [layers.{src.role}])"
    )


def _read_fix(exc: BaseException, target: Any) -> str:
    """The fix for a layer GDAL could not read, from its error: curved geometries (arcs) to straighten,
    text not in the encoding a shapefile's ``.cpg`` names, else a corrupt file or an unknown format."""
    text = str(exc)
    if "Nonlinear geometry" in text:
        return (f"The layer holds curved geometries (arcs: CurvePolygon, CompoundCurve, MultiSurface), which are "
                f"not read. Convert them to straight segments, e.g. ogr2ogr -nlt CONVERT_TO_LINEAR straight.gpkg "
                f"{Path(str(target)).name}, or Vector > Geometry Tools > Segmentize in QGIS")
    if isinstance(exc, UnicodeDecodeError) or "codec can't decode" in text:
        cpg = " (its .cpg)" if str(target).lower().endswith(".shp") else ""
        return (f"Its text is not in the encoding the file declares{cpg}: declare the encoding the text was "
                f"written in (e.g. 1252 or ISO-8859-1 in the .cpg) or save the layer again as UTF-8 in your GIS")
    return (f"Check the file is not corrupt and is a format GDAL reads (GeoPackage, shapefile with "
            f".shx/.dbf, GeoJSON){_net_hint(str(target))}")


ARROW_SUFFIXES = (".gpkg",)
"""Files read through GDAL's Arrow stream (``use_arrow``): 1,000,000 GeoPackage parcels in 1.6
instead of 2.7 s, the same frame as pyogrio's row reader gives (dates as ``datetime64``; booleans
with a missing value as 1.0/0.0/NaN, see :func:`_read_file`). Other formats keep the row reader:
through Arrow a GeoJSON property of mixed types would become ``object`` instead of text and a
JSON ``null`` object ``None`` instead of missing."""


def _read_file(target: Any, layer: str | None) -> gpd.GeoDataFrame:
    """``geopandas.read_file`` with pyogrio, through Arrow for :data:`ARROW_SUFFIXES`."""
    if not str(target).lower().endswith(ARROW_SUFFIXES):
        return gpd.read_file(target, layer=layer, engine="pyogrio")
    gdf = gpd.read_file(target, layer=layer, engine="pyogrio", use_arrow=True,
                        arrow_to_pandas_kwargs={"date_as_object": False})
    for c in gdf.columns[gdf.dtypes == object]:  # Arrow's booleans with a gap: True/False/None
        if pd.api.types.infer_dtype(gdf[c], skipna=True) == "boolean":
            gdf[c] = gdf[c].astype("float64")  # as the row reader gives them
    return gdf


def _missing_dbf(path: Path, what: str, warn: list[str] | None) -> None:
    """Warn when a shapefile comes without its ``.dbf`` (GDAL then reads shapes without fields)."""
    if path.suffix.lower() != ".shp" or warn is None:
        return
    stems = {p.name.lower() for p in path.parent.glob(path.stem + ".*")}
    if f"{path.stem.lower()}.dbf" not in stems:
        warn.append(f"{what}: the shapefile has no {path.stem}.dbf beside it, so its features have no fields "
                    f"(no ids, no attributes): copy the .dbf with the .shp and .shx")


def _frame_copy(frame: gpd.GeoDataFrame, what: str) -> gpd.GeoDataFrame:
    """A deep copy of a caller's GeoDataFrame (checked to have a geometry column)."""
    if not isinstance(frame, gpd.GeoDataFrame) or frame._geometry_column_name not in frame.columns:
        raise GeometryError(f"{what}: has no active geometry column. Call set_geometry() on it first")
    return frame.copy(deep=True).reset_index(drop=True)
