"""Where layers come from: role-named GeoPackages, ``PATH[:LAYER]`` overrides and project
files (TOML); reading one layer as it is on disk.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tomllib
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import geopandas as gpd
import pyogrio

from geoconstraints.errors import GeometryError, InputError, LayerReadError
from geoconstraints.io.postgis import PgSource, is_db_source, parse_db_source, read_postgis
from geoconstraints.io.roles import ROLES, LayerSource

log = logging.getLogger(__name__)


# ------------------------------------------------------------------------------------------
# sources



def parse_path_layer(value: str | os.PathLike[str]) -> tuple[Path, str | None]:
    """Split ``PATH[:LAYER]``; a colon that is part of an existing path is kept.

    A database URL (``postgresql://...``) is never split on its colons: it comes back unsplit,
    with no layer; callers test :func:`is_db_source` first and give it to :func:`parse_db_source`.
    """
    text = os.fspath(value)
    if is_db_source(text) or Path(text).exists() or ":" not in text:
        return Path(text), None
    head, _, tail = text.rpartition(":")
    if head and not (len(head) == 1 and head.isalpha()):  # not a Windows drive letter
        return Path(head), tail or None
    return Path(text), None


def check_file(path: Path, what: str) -> None:
    what = "" if what == str(path) else f"{what}: "  # do not name the file twice
    if not path.exists():
        raise LayerReadError(f"{what}file {path} does not exist. Check the path")
    if path.is_dir() and path.suffix.lower() not in (".gdb",):
        raise LayerReadError(f"{what}{path} is a folder, not a data file. Give the file inside it")
    if path.is_file() and path.stat().st_size == 0:
        raise LayerReadError(f"{what}file {path} is empty (0 bytes). Export the layer again")


def list_layers(path: Path) -> list[str]:
    """Layer names in a vector file; LayerReadError when it cannot be opened."""
    check_file(path, str(path))
    try:
        return [str(r[0]) for r in pyogrio.list_layers(path)]
    except Exception as exc:  # noqa: BLE001 - GDAL raises several kinds
        raise LayerReadError(
            f"{path}: cannot be read as vector data ({_short(exc)}). Is it a GeoPackage, "
            f"shapefile or GeoJSON, and not corrupt?"
        ) from None


def _short(exc: BaseException) -> str:
    text = str(exc).strip().split("; It might help to specify")[0]  # GDAL's driver-prefix hint
    if "sqlite3_" in text and "failed: " in text:  # keep SQLite's reason, not the query it ran
        text = text.rsplit("failed: ", 1)[1].split(";")[0]
    return text.splitlines()[0][:200] if text else type(exc).__name__


def sources_from_geopackage(path: Path) -> dict[str, LayerSource]:
    """Roles found in a file whose layer names are role names (case-insensitive)."""
    found: dict[str, LayerSource] = {}
    for name in list_layers(path):
        role = name.lower().replace("-", "_")
        if role in ROLES:
            found[role] = LayerSource(role, path, name)
    return found


def read_project_file(path: Path) -> tuple[dict[str, LayerSource], dict[str, Any]]:
    """Read a project TOML: ``[layers.ROLE] path, layer, id, fields = {canonical = "SRC"}``.

    Returns the sources and the other settings (``crs``, ``rulebook``, ``[dem]`` path/z_units).
    Paths are relative to the project file. A ``path`` that is a PostGIS URL may come with
    ``table = "SCHEMA.TABLE"`` and ``geometry = "COLUMN"`` (no ``where``: free SQL is not accepted;
    filter with a view in the database and name the view as the table).
    """
    check_file(path, "project file")
    try:
        data = tomllib.loads(path.read_text("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"project file {path}: not valid TOML ({exc}). Fix the file") from None
    base = path.parent
    sources: dict[str, LayerSource] = {}
    for role, spec in (data.get("layers") or {}).items():
        if role not in ROLES:
            raise InputError(f"project file {path}: unknown role {role!r}; roles are {', '.join(ROLES)}")
        if isinstance(spec, str):
            spec = {"path": spec}
        if "path" not in spec:
            raise InputError(f"project file {path}: [layers.{role}] needs a path")
        if is_db_source(spec["path"]):
            if "where" in spec:
                raise InputError(f"project file {path}: [layers.{role}] where is not supported (free SQL "
                                 f"could do anything in the database). Create a view that filters the "
                                 f"rows and give it as table")
            pg = parse_db_source(spec["path"], spec.get("table") or spec.get("layer"), spec.get("geometry"))
            sources[role] = _db_layer_source(role, pg, dict(spec.get("fields") or {}), spec.get("id"))
            continue
        p, lyr = parse_path_layer(spec["path"])
        p = p if p.is_absolute() else base / p
        sources[role] = LayerSource(role, p, spec.get("layer", lyr), dict(spec.get("fields") or {}),
                                    spec.get("id"))
    settings = {k: v for k, v in data.items() if k != "layers"}
    if "dem" in settings and isinstance(settings["dem"], dict) and settings["dem"].get("path"):
        dp = Path(settings["dem"]["path"])
        settings["dem"]["path"] = str(dp if dp.is_absolute() else base / dp)
    return sources, settings


def resolve_sources(
    source: str | os.PathLike[str] | None = None,
    overrides: Mapping[str, str | os.PathLike[str] | None] | None = None,
    project: str | os.PathLike[str] | None = None,
) -> tuple[dict[str, LayerSource], dict[str, Any]]:
    """Combine (c) project file, (a) a role-named GeoPackage, (b) per-role overrides, in that order."""
    sources: dict[str, LayerSource] = {}
    settings: dict[str, Any] = {}
    if project is not None:
        s, settings = read_project_file(Path(project))
        sources.update(s)
    if source is not None:
        if is_db_source(source):
            raise InputError("a PostGIS database is not a role-named GeoPackage: give each role's table, "
                             "e.g. --parcels 'postgresql://USER@HOST:PORT/DB?table=SCHEMA.TABLE', or map "
                             "roles to tables in a project file")
        p, layer = parse_path_layer(source)
        if p.suffix.lower() == ".toml":
            s, settings = read_project_file(p)
            sources.update(s)
        elif layer:
            raise InputError(f"{source}: give the whole GeoPackage, or use --ROLE PATH:LAYER")
        else:
            found = sources_from_geopackage(p)
            if not found:
                raise InputError(
                    f"{p}: none of its layers is named after a role ({', '.join(ROLES)}). "
                    f"Rename the layers or map them with --ROLE PATH:LAYER or a project file"
                )
            sources.update(found)
    for role, value in (overrides or {}).items():
        if value is None:
            continue
        if role not in ROLES:
            raise InputError(f"unknown role {role!r}; roles are {', '.join(ROLES)}")
        prev = sources.get(role)
        if is_db_source(value):
            sources[role] = _db_layer_source(role, parse_db_source(os.fspath(value)),
                                             dict(prev.fields) if prev else {}, prev.id_field if prev else None)
            continue
        p, layer = parse_path_layer(value)
        sources[role] = LayerSource(role, p, layer, dict(prev.fields) if prev else {},
                                    prev.id_field if prev else None)
    return sources, settings


def _db_layer_source(role: str, pg: PgSource, fields: dict[str, str], id_field: str | None) -> LayerSource:
    return LayerSource(role, Path(pg.redacted), pg.qualified, fields, id_field, db=pg)


# ------------------------------------------------------------------------------------------
# reading and validating one layer

def sha256_file(path: Path) -> str:
    """SHA-256 of a file, streamed."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def read_source(src: LayerSource) -> gpd.GeoDataFrame:
    """Read one layer as it is on disk (no reprojection); LayerReadError when unreadable.

    A PostGIS source is read by :func:`read_postgis`.
    """
    if src.db is not None:
        return read_postgis(src)[0]
    what = f"layer {src.role} ({src.label})"
    check_file(src.path, what)
    if src.layer is not None:
        names = list_layers(src.path)
        if src.layer not in names:
            raise LayerReadError(
                f"{what}: {src.path.name} has no layer {src.layer!r}; it has {', '.join(names)}"
            )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            gdf = gpd.read_file(src.path, layer=src.layer, engine="pyogrio")
    except Exception as exc:  # noqa: BLE001 - any GDAL failure is an unreadable input
        raise LayerReadError(
            f"{what}: cannot be read ({_short(exc)}). Check the file is not corrupt and is a "
            f"format GDAL reads (GeoPackage, shapefile with .shx/.dbf, GeoJSON)"
        ) from None
    if not isinstance(gdf, gpd.GeoDataFrame) or gdf.geometry is None:
        raise GeometryError(f"{what}: has no geometry column (an attribute table is not a map layer). "
                            f"Give the layer with its shapes (the .shp beside the .dbf, or the GeoPackage layer)")
    return gdf

