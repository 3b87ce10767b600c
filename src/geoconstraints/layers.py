"""Loading input layers by role, with CRS, units, field and geometry checks (SPEC §2).

A role is what a layer *is* to the law (``parcels``, ``flood_zones``, ``haul_roads``...).
Layers come from (a) a GeoPackage whose layer names are role names, (b) explicit
``role -> PATH[:LAYER]`` overrides, or (c) a project file (TOML) mapping roles to files,
layers and field names. A role may also come from a PostGIS table
(``postgresql://USER@HOST:PORT/DB?table=SCHEMA.TABLE``, read with psycopg; see
:func:`read_postgis`). Every layer ends in one working CRS in feet, with canonical field
names, a string ``feature_id`` column, valid non-empty geometries, and NFHL -9999 sentinels
turned into missing values.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import os
import re
import tomllib
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

import geopandas as gpd
import numpy as np
import pandas as pd
import pyogrio
import shapely
from pyproj import CRS

from . import projection
from .errors import CRSError, FieldError, GeometryError, InputError, LayerReadError

log = logging.getLogger(__name__)

NFHL_SENTINEL = -9999.0


@dataclass(frozen=True)
class RoleSpec:
    """What a role expects: geometry kinds, id field candidates, required and optional fields."""

    geometry: tuple[str, ...]
    id_fields: tuple[str, ...] = ("id",)
    required: tuple[str, ...] = ()
    optional: tuple[str, ...] = ()
    description: str = ""
    sentinel_fields: tuple[str, ...] = ()


_NFHL_FLD = ("FLD_ZONE",)
_NFHL_OPT = ("ZONE_SUBTY", "SFHA_TF", "STATIC_BFE", "DEPTH", "V_DATUM", "DFIRM_ID", "EFF_DATE",
             "LEN_UNIT", "FLD_AR_ID", "VELOCITY", "BFE_REVERT", "DEP_REVERT", "STUDY_TYP")
_NFHL_SENT = ("STATIC_BFE", "DEPTH", "VELOCITY", "BFE_REVERT", "DEP_REVERT")

ROLES: dict[str, RoleSpec] = {
    "parcels": RoleSpec(("polygon",), ("parcel_id", "SWIS_SBL_ID", "SBL", "PRINTKEY"), (),
                        ("zoning", "land_use", "owner"), "tax parcels"),  # NYS RPS ids after parcel_id
    "flood_zones": RoleSpec(("polygon",), ("FLD_AR_ID", "id"), _NFHL_FLD, _NFHL_OPT,
                            "FEMA NFHL S_FLD_HAZ_AR flood zones", _NFHL_SENT),
    "flood_zones_preliminary": RoleSpec(("polygon",), ("FLD_AR_ID", "id"), _NFHL_FLD, _NFHL_OPT,
                                        "preliminary FIRM flood zones for comparison", _NFHL_SENT),
    "bfe_lines": RoleSpec(("line",), ("BFE_LN_ID", "id"), ("ELEV",),
                          ("V_DATUM", "LEN_UNIT", "DFIRM_ID"), "FEMA NFHL S_BFE lines", ("ELEV",)),
    "streams": RoleSpec(("line", "polygon"), ("id",), (), ("kind", "FCODE", "name"),
                        "streams (perennial / intermittent)"),
    "stream_corridor": RoleSpec(("polygon",), ("id",), (), (), "adopted stream corridor map"),
    "critical_slopes": RoleSpec(("polygon",), ("id",), (), (), "adopted critical slopes"),
    "zoning": RoleSpec(("polygon",), ("id",), ("district",), (), "zoning districts"),
    "roads": RoleSpec(("line",), ("id",), (), ("row_width_ft", "name"), "public road centre lines"),
    "row": RoleSpec(("polygon",), ("id",), (), (), "public rights-of-way"),
    "dwellings": RoleSpec(("point", "polygon"), ("id",), (), ("use",), "residential dwellings"),
    "harvest_area": RoleSpec(("polygon",), ("id",), (),
                             ("cords", "cubic_feet", "board_feet", "parcel_id", "owner"),
                             "timber harvest areas"),
    "landings": RoleSpec(("point", "polygon"), ("id",), (), (), "log landings"),
    "haul_roads": RoleSpec(("line",), ("id",), (), (), "log haul roads"),
    "skid_trails": RoleSpec(("line",), ("id",), (), ("constructed",), "skid trails"),
    "disturbance": RoleSpec(("polygon",), ("id",), (), ("phase", "start", "stabilized", "use"),
                            "areas of soil disturbance / phasing plan"),
    "impaired_waters": RoleSpec(("line", "polygon"), ("id",), (), ("name",),
                                "303(d) impaired waters / TMDL"),
    "footprints": RoleSpec(("polygon",), ("id",), (), ("use",), "proposed structure footprints"),
}
"""The input roles of SPEC §2 (plus ``footprints`` and ``flood_zones_preliminary``)."""

PLAN_ROLES = ("harvest_area", "landings", "haul_roads", "skid_trails")

_GEOM_KINDS = {
    "Polygon": "polygon", "MultiPolygon": "polygon",
    "LineString": "line", "MultiLineString": "line", "LinearRing": "line",
    "Point": "point", "MultiPoint": "point",
}


def role_option(role: str) -> str:
    """The CLI option of a role (``haul_roads`` -> ``--haul-roads``)."""
    return "--" + role.replace("_", "-")


# ------------------------------------------------------------------------------------------
# sources

@dataclass
class LayerSource:
    """Where a role's layer comes from and how its fields map to canonical names."""

    role: str
    path: Path
    layer: str | None = None
    fields: dict[str, str] = field(default_factory=dict)  # canonical -> source field name
    id_field: str | None = None
    db: PgSource | None = None
    """The PostGIS table when the layer comes from a database (``path`` is then unused)."""

    @property
    def label(self) -> str:
        """``file.gpkg:layer`` (or ``HOST:PORT/DB table SCHEMA.TABLE``, no password) for messages."""
        if self.db is not None:
            return self.db.label
        return f"{self.path.name}:{self.layer}" if self.layer else self.path.name


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


DB_SCHEMES = ("postgresql", "postgres")
"""URL schemes of a PostGIS source."""

_DB_URL = re.compile(r"^(postgresql|postgres)://", re.IGNORECASE)
_SECRET_KV = re.compile(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE)
_URL_PASSWORD = re.compile(r"(postgres(?:ql)?://[^:/@\s]*):[^@\s]*@", re.IGNORECASE)


def is_db_source(value: str | os.PathLike[str] | None) -> bool:
    """True when ``value`` is a PostGIS URL (``postgresql://`` or ``postgres://``)."""
    return value is not None and bool(_DB_URL.match(os.fspath(value).strip()))


@dataclass(frozen=True)
class PgSource:
    """A PostGIS table as a layer source.

    ``redacted`` (``postgresql://USER@HOST:PORT/DB?table=SCHEMA.TABLE``) is the only form that
    may reach a message, a log, the provenance or a report: it never holds a password. The URL
    given to libpq (``conninfo``) and the password (``secrets``) are kept out of ``repr``.
    """

    redacted: str
    where: str
    """``HOST:PORT/DB`` for messages."""
    user: str
    schema: str | None
    table: str
    geometry: str | None = None
    conninfo: str = field(default="", repr=False)
    secrets: tuple[str, ...] = field(default=(), repr=False)
    connect_timeout: bool = field(default=True, repr=False)
    """Add ``connect_timeout=10`` (the URL did not set one)."""

    @property
    def qualified(self) -> str:
        """``SCHEMA.TABLE`` (or ``TABLE``) as given."""
        return f"{self.schema}.{self.table}" if self.schema else self.table

    @property
    def label(self) -> str:
        """``HOST:PORT/DB table SCHEMA.TABLE`` for messages."""
        return f"{self.where} table {self.qualified}"

    def scrub(self, text: object) -> str:
        """``text`` (an exception from psycopg/libpq, which may echo the URL) without the password,
        on one line of at most 240 characters."""
        out = str(text)
        for secret in sorted(self.secrets, key=len, reverse=True):
            if secret:
                out = out.replace(secret, "***")
        out = _URL_PASSWORD.sub(r"\1:***@", out)
        out = _SECRET_KV.sub(r"\1***", out)
        out = " ".join(line.strip() for line in out.splitlines() if line.strip())
        return out[:240] or "no details"


def parse_db_source(value: str, table: str | None = None, geometry: str | None = None) -> PgSource:
    """Parse ``postgresql://USER[:PASSWORD]@HOST[:PORT]/DB?table=SCHEMA.TABLE[&geometry=COL]``.

    Parameters
    ----------
    value : str
        The URL (``postgres://`` also accepted). Other query parameters (``sslmode``,
        ``connect_timeout``...) go to libpq unchanged. Better leave the password out: libpq
        reads it from ``PGPASSWORD`` or ``~/.pgpass``.
    table, geometry : str, optional
        Table (``SCHEMA.TABLE``) and geometry column, overriding the URL's (project file keys).

    Returns
    -------
    PgSource

    Raises
    ------
    InputError
        Not a PostGIS URL, no table named, or a malformed table name. The message holds the
        redacted URL only.

    Examples
    --------
    >>> src = parse_db_source("postgresql://gis:pw@db.town.gov:5432/gis?table=town.parcels")
    >>> src.redacted
    'postgresql://gis@db.town.gov:5432/gis?table=town.parcels'
    """
    text = str(value).strip()
    try:
        parts = urlsplit(text)
        password = parts.password
    except ValueError:
        raise InputError("a PostGIS source is not a valid URL. Write it as "
                         "postgresql://USER@HOST:PORT/DB?table=SCHEMA.TABLE") from None
    if parts.scheme.lower() not in DB_SCHEMES:
        raise InputError(f"{parts.scheme}:// is not a PostGIS URL; write postgresql://USER@HOST:PORT/DB?table=...")
    query = parse_qsl(parts.query, keep_blank_values=True)
    secrets = {s for s in (password, unquote(password or "")) if s}
    secrets |= {v for k, v in query if k.lower() == "password" and v}
    url_table = next((v for k, v in query if k.lower() == "table"), None)
    url_geom = next((v for k, v in query if k.lower() == "geometry"), None)
    rest = [(k, v) for k, v in query if k.lower() not in ("table", "geometry")]
    user = unquote(parts.username or "")
    hostport = parts.netloc.rpartition("@")[2]
    dbname = unquote(parts.path.lstrip("/"))
    where = f"{hostport or 'local socket'}/{dbname or user or '(default database)'}"
    table_text = (table or url_table or "").strip()
    geometry = (geometry or url_geom or "").strip() or None
    base = f"postgresql://{parts.username + '@' if parts.username else ''}{hostport}/{parts.path.lstrip('/')}"
    if not table_text:
        raise InputError(f"{base}: name the table of the layer: add ?table=SCHEMA.TABLE to the URL "
                         f"(or table = \"SCHEMA.TABLE\" in the project file)")
    names = table_text.split(".")
    if len(names) > 2 or not all(n.strip() for n in names):
        raise InputError(f"{base}: table {table_text!r} is not SCHEMA.TABLE or TABLE (names containing "
                         f"dots are not supported: create a view with a plain name)")
    schema, tbl = (names[0].strip(), names[1].strip()) if len(names) == 2 else (None, names[0].strip())
    redacted = f"{base}?{urlencode([('table', table_text)] + ([('geometry', geometry)] if geometry else []))}"
    conninfo = urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(rest), ""))
    return PgSource(redacted, where, user, schema, tbl, geometry, conninfo, tuple(secrets),
                    not any(k.lower() == "connect_timeout" for k, _ in rest))


def _check_file(path: Path, what: str) -> None:
    what = "" if what == str(path) else f"{what}: "  # do not name the file twice
    if not path.exists():
        raise LayerReadError(f"{what}file {path} does not exist. Check the path")
    if path.is_dir() and path.suffix.lower() not in (".gdb",):
        raise LayerReadError(f"{what}{path} is a folder, not a data file. Give the file inside it")
    if path.is_file() and path.stat().st_size == 0:
        raise LayerReadError(f"{what}file {path} is empty (0 bytes). Export the layer again")


def list_layers(path: Path) -> list[str]:
    """Layer names in a vector file; LayerReadError when it cannot be opened."""
    _check_file(path, str(path))
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
    _check_file(path, "project file")
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
    _check_file(src.path, what)
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


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError:
        raise InputError("reading from PostGIS needs psycopg: pip install 'geoconstraints[postgis]'") from None
    return psycopg


def _connect_fix(reason: str, pg: PgSource) -> str:
    low = reason.lower()
    if "password" in low or "authentication" in low:
        return (f"Check the user {pg.user or '(default)'} and its password; give the password in PGPASSWORD "
                f"or ~/.pgpass rather than in the URL")
    if "does not exist" in low:
        return "Check the database name in the URL"
    if any(k in low for k in ("refused", "timeout", "timed out", "translate host", "resolve host", "no route", "unreachable")):
        return "Check the host and port, and that the server accepts connections from this machine"
    return "Check the URL (postgresql://USER@HOST:PORT/DB?table=SCHEMA.TABLE), the user and the password"


def _pg_text(v: Any) -> str:
    if isinstance(v, memoryview):
        v = bytes(v)
    return v.hex() if isinstance(v, bytes) else str(v)


def _pg_column(values: list[Any]) -> pd.Series:
    """One attribute column as pandas would have it from a file (numbers, text, dates)."""
    present = [v for v in values if v is not None]
    if not present or all(isinstance(v, str) for v in present) or all(isinstance(v, bool) for v in present):
        return pd.Series(values, dtype=object)
    if all(isinstance(v, (int, float, Decimal)) and not isinstance(v, bool) for v in present):
        if len(present) == len(values) and all(isinstance(v, int) for v in present):
            return pd.Series(values, dtype="int64")
        return pd.Series([np.nan if v is None else float(v) for v in values], dtype="float64")
    if all(isinstance(v, dt.date) for v in present):
        try:
            return pd.Series(pd.to_datetime(pd.Series(values, dtype=object)))
        except (ValueError, TypeError):
            pass
    return pd.Series([None if v is None else _pg_text(v) for v in values], dtype=object)


def _rows_sha256(wkb: list[bytes | None], columns: list[str], rows: list[tuple[Any, ...]], crs: str) -> str:
    """SHA-256 of fetched rows, independent of their order (see :func:`read_postgis`)."""
    order = sorted(range(len(columns)), key=lambda i: columns[i])
    digests = []
    for g, row in zip(wkb, rows):
        h = hashlib.sha256(b"\x00" if g is None else bytes(g))
        for i in order:
            v = row[i]
            h.update(b"\x1e" + columns[i].encode() + b"\x1f"
                     + (b"\x00" if v is None else f"{type(v).__name__}:{v}".encode()))
        digests.append(h.digest())
    total = hashlib.sha256(("\x1f".join(sorted(columns)) + "\x1e" + crs).encode())
    for d in sorted(digests):
        total.update(d)
    return total.hexdigest()


def read_postgis(src: LayerSource) -> tuple[gpd.GeoDataFrame, str]:
    """Read a PostGIS table (or view) with psycopg 3, as it is in the database (no reprojection).

    The geometry column is the table's only one in ``geometry_columns``, or the one named with
    ``?geometry=``; its SRID gives the CRS (SRID 0 is refused, as a file without CRS is).
    Geometries come as WKB (``ST_AsBinary``), every other column as an attribute; identifiers are
    quoted with ``psycopg.sql.Identifier``, and the session is read-only. The frame then goes
    through the same validation as a file's (:func:`load_layers`).

    Parameters
    ----------
    src : LayerSource
        A source with ``db`` set (from :func:`parse_db_source`).

    Returns
    -------
    (GeoDataFrame, str)
        The layer, and a SHA-256 over the rows fetched: per row, the WKB and every attribute
        value (typed text, columns sorted by name) are hashed; the sorted row digests, the
        column names and the CRS are hashed again. It stamps *what was read* in the report (a
        database has no file to hash) and does not depend on the order the server returns rows.

    Raises
    ------
    InputError
        psycopg missing. LayerReadError: cannot connect, authentication failed, no such table,
        query refused. GeometryError: no geometry column. CRSError: SRID 0 or unknown SRID.
        Every message names host, database and table, never the password.
    """
    pg = src.db
    if pg is None:
        raise InputError(f"layer {src.role} ({src.label}) is not a PostGIS source")
    what = f"layer {src.role} ({pg.label})"
    psycopg = _psycopg()
    from psycopg import sql

    kwargs: dict[str, Any] = {"application_name": "geoconstraints"}
    if pg.connect_timeout:
        kwargs["connect_timeout"] = 10
    log.info("reading %s from PostGIS %s", src.role, pg.redacted)
    try:
        conn = psycopg.connect(pg.conninfo, **kwargs)
    except psycopg.Error as exc:
        reason = pg.scrub(exc)
        raise LayerReadError(f"{what}: cannot connect to {pg.where} ({reason}). {_connect_fix(reason, pg)}") from None
    try:
        with conn:
            conn.read_only = True
            return _read_table(conn, sql, pg, what)
    except psycopg.Error as exc:
        raise LayerReadError(f"{what}: the database refused the query ({pg.scrub(exc)}). Check that the "
                             f"user {pg.user or '(default)'} may SELECT from {pg.qualified}") from None


def _read_table(conn: Any, sql: Any, pg: PgSource, what: str) -> tuple[gpd.GeoDataFrame, str]:
    find = ("SELECT c.oid, n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE c.oid = to_regclass(%s)")
    parts = [p for p in (pg.schema, pg.table) if p]
    found = None
    for names in (parts, [p.lower() for p in parts]):  # as given, then as PostgreSQL folds unquoted names
        found = conn.execute(find, [sql.Identifier(*names).as_string(conn)]).fetchone()
        if found:
            break
    if found is None:
        have = [f"{r[0]}.{r[1]}" for r in conn.execute(
            "SELECT f_table_schema, f_table_name FROM geometry_columns ORDER BY 1, 2 LIMIT 11").fetchall()]
        hint = (f"; tables with geometry: {_ids(have, 10)}" if have else "; it has no table with geometry")
        raise LayerReadError(f"{what}: no table or view {pg.qualified} in {pg.where}{hint}. Check the name "
                             f"(?table=SCHEMA.TABLE) and that user {pg.user or '(default)'} may see it")
    oid, schema, table = found
    geoms = conn.execute("SELECT f_geometry_column, srid FROM geometry_columns WHERE f_table_schema = %s "
                         "AND f_table_name = %s ORDER BY 1", [schema, table]).fetchall()
    if not geoms:
        raise GeometryError(f"{what}: has no PostGIS geometry column (an attribute table is not a map layer). "
                            f"Give the table with its shapes, or a view with a geometry column")
    if pg.geometry:
        pick = [g for g in geoms if g[0] == pg.geometry] or [g for g in geoms if g[0].lower() == pg.geometry.lower()]
        if not pick:
            raise GeometryError(f"{what}: no geometry column {pg.geometry!r}; geometry columns are "
                                f"{', '.join(g[0] for g in geoms)}. Fix ?geometry= (or geometry = in the project file)")
        geoms = pick[:1]
    if len(geoms) > 1:
        raise GeometryError(f"{what}: has {len(geoms)} geometry columns ({', '.join(g[0] for g in geoms)}). "
                            f"Choose one with ?geometry=NAME (or geometry = \"NAME\" in the project file)")
    gcol, srid = geoms[0][0], int(geoms[0][1] or 0)
    cols = conn.execute("SELECT a.attname FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid "
                        "WHERE a.attrelid = %s AND a.attnum > 0 AND NOT a.attisdropped "
                        "AND t.typname NOT IN ('geometry', 'geography', 'raster') ORDER BY a.attnum",
                        [oid]).fetchall()
    columns = [c[0] for c in cols]
    if "geometry" in columns:
        raise FieldError(f"{what}: has an attribute column named geometry besides {gcol}. Rename it, "
                         f"or read a view that renames it")
    pkey = [r[0] for r in conn.execute(
        "SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid "
        "AND a.attnum = ANY(i.indkey) WHERE i.indrelid = %s AND i.indisprimary ORDER BY a.attnum", [oid])]
    query = sql.SQL("SELECT ST_AsBinary({g}), ST_SRID({g}){cols} FROM {t}{order}").format(
        g=sql.Identifier(gcol), t=sql.Identifier(schema, table),
        cols=sql.SQL("").join(sql.SQL(", {}").format(sql.Identifier(c)) for c in columns),
        order=(sql.SQL(" ORDER BY {}").format(sql.SQL(", ").join(map(sql.Identifier, pkey))) if pkey
               else sql.SQL("")))
    rows = conn.execute(query).fetchall()
    wkb = [r[0] for r in rows]
    if srid == 0:  # an unconstrained column: the rows' own SRID, when they agree
        row_srids = {int(r[1]) for r in rows if r[1] is not None}
        if len(row_srids) > 1:
            raise CRSError(f"{what}: geometry column {gcol} mixes SRIDs {', '.join(map(str, sorted(row_srids)))}. "
                           f"Transform them to one SRID (ST_Transform) in the table or in a view")
        srid = row_srids.pop() if row_srids else 0
    try:
        geometry = shapely.from_wkb(np.array([None if g is None else bytes(g) for g in wkb], dtype=object))
    except shapely.errors.GEOSException as exc:
        raise GeometryError(f"{what}: geometries cannot be decoded ({str(exc)[:120]}); curved geometries "
                            f"need ST_CurveToLine in a view") from None
    if srid == 0:
        hint = ""
        if len(rows) and np.all(np.abs(shapely.total_bounds(geometry)) <= 360):
            hint = " Its coordinates look like longitude/latitude (SRID 4326 or 4269)."
        raise CRSError(f"{what}: geometry column {gcol} has SRID 0 (no CRS).{hint} Set the right SRID in the "
                       f"database (SELECT UpdateGeometrySRID('{schema}', '{table}', '{gcol}', XXXX)), then try again")
    ref = conn.execute("SELECT auth_name, auth_srid, srtext FROM spatial_ref_sys WHERE srid = %s", [srid]).fetchone()
    try:
        if ref is None:
            raise ValueError("not in spatial_ref_sys")
        crs = (CRS.from_epsg(int(ref[1])) if str(ref[0]).upper() == "EPSG" and ref[1] else CRS.from_wkt(ref[2]))
    except Exception:  # noqa: BLE001 - pyproj raises CRSError, ValueError...
        raise CRSError(f"{what}: SRID {srid} of {gcol} is not a CRS this machine knows. Transform the "
                       f"geometries to an EPSG SRID (ST_Transform) in a view") from None
    attrs = [r[2:] for r in rows]
    frame = pd.DataFrame({c: _pg_column([a[i] for a in attrs]) for i, c in enumerate(columns)},
                         index=pd.RangeIndex(len(rows)))
    gdf = gpd.GeoDataFrame(frame, geometry=geometry, crs=crs)
    digest = _rows_sha256(wkb, columns, attrs, _crs_label(crs))
    log.info("read %d features from %s (SRID %d)", len(gdf), pg.redacted, srid)
    return gdf, digest


def canonical_fields(gdf: gpd.GeoDataFrame, src: LayerSource, spec: RoleSpec) -> gpd.GeoDataFrame:
    """Rename fields to canonical names: explicit mapping first, then case-insensitive match."""
    what = f"layer {src.role} ({src.label})"
    rename: dict[str, str] = {}
    lower = {c.lower(): c for c in gdf.columns if c != gdf.geometry.name}
    for canon, source_name in src.fields.items():
        real = lower.get(str(source_name).lower())
        if real is None:
            raise FieldError(
                f"{what}: field {source_name!r} (mapped to {canon}) not found; fields are "
                f"{', '.join(lower.values())}"
            )
        rename[real] = canon
    wanted = (*spec.required, *spec.optional, *spec.id_fields)
    for canon in wanted:
        if canon in rename.values():
            continue
        real = lower.get(canon.lower())
        if real is not None and real not in rename:
            rename[real] = canon
    gdf = gdf.rename(columns=rename)
    missing = [f for f in spec.required if f not in gdf.columns]
    if missing:
        have = [c for c in gdf.columns if c != gdf.geometry.name]
        raise FieldError(
            f"{what}: required field {', '.join(missing)} missing (fields: {', '.join(have) or 'none'}). "
            f"Map it in a project file: [layers.{src.role}] fields = {{ {missing[0]} = \"YOUR_FIELD\" }}"
        )
    return gdf


def _assign_ids(gdf: gpd.GeoDataFrame, src: LayerSource, spec: RoleSpec, warn: list[str]) -> gpd.GeoDataFrame:
    what = f"layer {src.role} ({src.label})"
    id_field = src.id_field
    if id_field:
        match = {c.lower(): c for c in gdf.columns}.get(id_field.lower())
        if match is None:
            raise FieldError(f"{what}: id field {id_field!r} not found; fields are "
                             f"{', '.join(c for c in gdf.columns if c != gdf.geometry.name)}")
        id_field = match
    else:
        id_field = next((f for f in spec.id_fields if f in gdf.columns), None)
    row_no = np.arange(len(gdf)) + 1  # 1-based row numbers in the file, kept through any drop
    if id_field is None:
        gdf["feature_id"] = [f"row {i}" for i in row_no]
        return gdf
    if gdf[id_field].duplicated(keep=False).any():
        # the same record twice (same id, every attribute and geometry), as in FEMA's Lexington
        # S_BFE, is one feature: drop the copies with a warning; differing features stay an error
        key = pd.DataFrame({c: gdf[c].astype(str).to_numpy() for c in gdf.columns if c != gdf.geometry.name})
        key["__wkb"] = shapely.to_wkb(gdf.geometry.values)
        copies = key.duplicated(keep="first").to_numpy()
        if copies.any():
            shown = gdf.loc[copies, id_field].astype(str).tolist()
            warn.append(f"{what}: {int(copies.sum())} feature(s) repeat another feature exactly (same "
                        f"{id_field}, attributes and geometry); the copies were dropped: {_ids(shown)}")
            gdf, row_no = gdf.loc[~copies].copy(), row_no[~copies]
    ids = gdf[id_field]
    blank = (ids.isna() | ids.map(lambda v: isinstance(v, str) and not v.strip())).to_numpy()
    if blank.any() and not src.id_field:
        rows = [str(i) for i in row_no[blank][:10]]
        warn.append(f"{what}: id field {id_field} is empty in rows {', '.join(rows)}; features are "
                    f"identified by row number instead (map an id field with id = \"...\" in a project file)")
        gdf["feature_id"] = [f"row {i}" for i in row_no]
        return gdf
    if blank.any():
        rows = [str(i) for i in row_no[blank][:10]]
        raise FieldError(f"{what}: id field {id_field} is empty in rows {', '.join(rows)}. Fill in the ids")
    as_text = ids.map(lambda v: str(int(v)) if isinstance(v, float) and float(v).is_integer() else str(v))
    dup = as_text[as_text.duplicated(keep=False)]
    if len(dup):
        shown = sorted(set(dup))[:10]
        raise InputError(
            f"{what}: duplicate ids in field {id_field}: {', '.join(shown)}"
            f"{' ...' if dup.nunique() > 10 else ''}. Each feature needs its own id: fix them, or "
            f"name a unique id field with id = \"...\" in a project file"
        )
    gdf["feature_id"] = as_text.astype(object).to_numpy()
    return gdf


def clean_geometries(gdf: gpd.GeoDataFrame, role: str, label: str, warn: list[str]) -> gpd.GeoDataFrame:
    """Drop Z, drop null/empty geometries (warning), check kinds, repair invalid ones (warning).

    Vectorized with shapely 2; only the ids in warnings are formatted per feature.
    """
    spec = ROLES[role]
    what = f"layer {role} ({label})"
    geom = gdf.geometry.values
    if shapely.has_z(geom).any():
        gdf = gdf.set_geometry(shapely.force_2d(geom), crs=gdf.crs)
        warn.append(f"{what}: Z coordinates dropped (elevations come from the DEM, not the layer)")
    geom = gdf.geometry.values
    empty = shapely.is_missing(geom) | shapely.is_empty(geom)
    if empty.any():
        ids = gdf.loc[empty, "feature_id"].astype(str).tolist()
        warn.append(f"{what}: {len(ids)} feature(s) with empty geometry dropped: {_ids(ids)}")
        gdf = gdf.loc[~empty].copy()
    if len(gdf) == 0:
        return gdf
    kinds = pd.Series(shapely.get_type_id(gdf.geometry.values)).map(
        {0: "point", 1: "line", 2: "line", 3: "polygon", 4: "point", 5: "line", 6: "polygon", 7: "collection"}
    ).to_numpy()
    invalid = ~shapely.is_valid(gdf.geometry.values)
    if invalid.any():
        ids = gdf.loc[invalid, "feature_id"].astype(str).tolist()
        fixed = shapely.make_valid(gdf.geometry.values[invalid])
        # keep the kind the feature had: a repaired polygon stays polygonal, a repaired line
        # lineal (make_valid may add stray lines/points, or turn a zero-length line into a point)
        was = kinds[invalid]
        for kind, type_ids in (("polygon", (3, 6)), ("line", (1, 2, 5))):
            sel = was == kind
            if sel.any():
                fixed[sel] = _parts_of_kind(fixed[sel], type_ids)
        g = gdf.geometry.values.copy()
        g[invalid] = fixed
        gdf = gdf.set_geometry(g, crs=gdf.crs)
        warn.append(f"{what}: {len(ids)} invalid geometr{'y' if len(ids) == 1 else 'ies'} repaired "
                    f"with make_valid: {_ids(ids)}. Check them in a GIS")
        gone = invalid & shapely.is_empty(gdf.geometry.values)
        if gone.any():
            warn.append(f"{what}: {int(gone.sum())} feature(s) had no area or length left after repair "
                        f"and were dropped: {_ids(gdf.loc[gone, 'feature_id'].astype(str).tolist())}")
            gdf, kinds, invalid = gdf.loc[~gone].copy(), kinds[~gone], invalid[~gone]
    wrong = ~np.isin(kinds, spec.geometry)
    if wrong.any():
        ids = gdf.loc[wrong, "feature_id"].astype(str).tolist()
        got = sorted(set(kinds[wrong]))
        raise GeometryError(
            f"{what}: expected {' or '.join(spec.geometry)} geometries, found {', '.join(got)} in "
            f"feature(s) {_ids(ids)}. Remove them or give the right layer for {role}"
        )
    return gdf


def _parts_of_kind(geoms: np.ndarray, type_ids: tuple[int, ...]) -> np.ndarray:
    """Keep only the parts of ``type_ids`` of make_valid output (an empty geometry when none).

    Runs only over the few repaired geometries, not the whole layer.
    """
    empty = shapely.Polygon() if 3 in type_ids else shapely.LineString()
    out = []
    for g in geoms:
        parts = shapely.get_parts(shapely.get_parts(g))  # collections may nest multi-parts
        keep = parts[np.isin(shapely.get_type_id(parts), type_ids)]
        out.append(shapely.union_all(keep) if len(keep) else empty)
    return np.array(out, dtype=object)


def _polygonal(geoms: np.ndarray) -> np.ndarray:
    """Keep only the polygonal parts of make_valid output (drop stray lines and points)."""
    return _parts_of_kind(geoms, (3, 6))


def _ids(ids: list[str], n: int = 10) -> str:
    return ", ".join(ids[:n]) + (f" (+{len(ids) - n} more)" if len(ids) > n else "")


def nfhl_sentinels(gdf: pd.DataFrame, spec: RoleSpec) -> pd.DataFrame:
    """Turn NFHL -9999 (and text 'NP' in numeric fields) into missing values."""
    for f in spec.sentinel_fields:
        if f in gdf.columns:
            vals = pd.to_numeric(gdf[f], errors="coerce")
            gdf[f] = vals.where(vals != NFHL_SENTINEL).astype("float64")
    return gdf


def _normalize_role_fields(gdf: gpd.GeoDataFrame, role: str) -> gpd.GeoDataFrame:
    """Role-specific derived columns (stream kind from FCODE, SFHA_TF from FLD_ZONE, ...)."""
    if role == "streams":
        kind = gdf["kind"].astype(object) if "kind" in gdf.columns else pd.Series(None, index=gdf.index, dtype=object)
        if "FCODE" in gdf.columns:
            code = pd.to_numeric(gdf["FCODE"], errors="coerce")
            from_code = code.map({46006: "perennial", 46003: "intermittent", 46007: "ephemeral"})
            kind = kind.where(kind.notna(), from_code)
        gdf["kind"] = kind.map(lambda v: str(v).strip().lower() if isinstance(v, str) and v.strip() else None)
    if role in ("flood_zones", "flood_zones_preliminary"):
        gdf["FLD_ZONE"] = gdf["FLD_ZONE"].map(lambda v: str(v).strip().upper() if v is not None and pd.notna(v) else None)
        if "ZONE_SUBTY" not in gdf.columns:
            gdf["ZONE_SUBTY"] = None
        gdf["ZONE_SUBTY"] = gdf["ZONE_SUBTY"].map(lambda v: str(v).strip().upper() if isinstance(v, str) and v.strip() else None)
        if "SFHA_TF" not in gdf.columns:
            gdf["SFHA_TF"] = None
        derived = gdf["FLD_ZONE"].map(lambda z: "T" if z and z.startswith(("A", "V")) and z != "AREA NOT INCLUDED" else "F")
        sfha = gdf["SFHA_TF"].map(lambda v: str(v).strip().upper()[:1] if isinstance(v, str) and v.strip() else None)
        gdf["SFHA_TF"] = sfha.where(sfha.isin(["T", "F"]), derived)
    if role == "skid_trails" and "constructed" in gdf.columns:
        gdf["constructed"] = gdf["constructed"].map(_truthy)
    if role == "roads" and "row_width_ft" in gdf.columns:
        gdf["row_width_ft"] = pd.to_numeric(gdf["row_width_ft"], errors="coerce")
    return gdf


def _truthy(v: Any) -> bool | None:
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return None
    if isinstance(v, str):
        if not v.strip():
            return None  # blank: not stated (the rulebook switch decides)
        return v.strip().lower() in ("1", "true", "t", "yes", "y")
    return bool(v)


# ------------------------------------------------------------------------------------------
# the collection

@dataclass
class LayerInfo:
    """Provenance of one loaded layer.

    For a PostGIS layer ``path`` is the redacted URL (no password), ``layer`` the table,
    ``size_bytes`` 0 and ``sha256`` a hash of the rows read (see :func:`read_postgis`).
    """

    role: str
    path: str
    layer: str | None
    features: int
    source_crs: str
    sha256: str
    size_bytes: int
    fields: list[str]
    absent_fields: list[str] = field(default_factory=list)
    """Optional fields of the role the source did not have (filled with missing values)."""


@dataclass
class Layers(Mapping[str, gpd.GeoDataFrame]):
    """Input layers by role, all in one working CRS in feet.

    Behaves like a read-only mapping ``role -> GeoDataFrame``; ``dem`` holds the DEM (or None).
    """

    frames: dict[str, gpd.GeoDataFrame]
    crs: CRS
    crs_reason: str = ""
    info: dict[str, LayerInfo] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    dem: Any = None
    settings: dict[str, Any] = field(default_factory=dict)

    def __getitem__(self, role: str) -> gpd.GeoDataFrame:
        return self.frames[role]

    def __iter__(self) -> Iterator[str]:
        return iter(self.frames)

    def __len__(self) -> int:
        return len(self.frames)

    def get_layer(self, role: str) -> gpd.GeoDataFrame | None:
        """The layer of ``role`` or None when not given (or empty)."""
        g = self.frames.get(role)
        return g if g is not None and len(g) else None

    def input_paths(self) -> set[Path]:
        """Resolved paths of every input file (outputs must never overwrite one)."""
        paths = {Path(i.path).resolve() for i in self.info.values() if not is_db_source(i.path)}
        if self.dem is not None:
            paths.add(Path(self.dem.path).resolve())
        return paths

    def summary(self) -> pd.DataFrame:
        """One row per loaded role: features, source CRS, file, layer."""
        rows = [{"role": r, "features": i.features, "source_crs": i.source_crs,
                 "file": i.path if is_db_source(i.path) else Path(i.path).name,
                 "layer": i.layer or ""} for r, i in self.info.items()]
        return pd.DataFrame(rows, columns=["role", "features", "source_crs", "file", "layer"])

    def _repr_html_(self) -> str:
        head = f"<p><b>Layers</b> in {self.crs.name} ({self.crs.to_string()})</p>"
        return head + self.summary().to_html(index=False, escape=True)


def _crs_label(crs: CRS | None) -> str:
    if crs is None:
        return "none"
    epsg = crs.to_epsg()
    return f"EPSG:{epsg}" if epsg else crs.name


def load_layers(
    source: str | os.PathLike[str] | None = None,
    *,
    overrides: Mapping[str, str | os.PathLike[str] | None] | None = None,
    project: str | os.PathLike[str] | None = None,
    crs: str | CRS | None = None,
    dem: str | os.PathLike[str] | None = None,
    dem_z_units: str | None = None,
    roles: tuple[str, ...] | None = None,
    primary: tuple[str, ...] = ("parcels", "harvest_area"),
) -> Layers:
    """Load every layer by role into one working CRS in feet.

    Parameters
    ----------
    source : path, optional
        A GeoPackage whose layer names are role names, or a project ``.toml`` file.
    overrides : mapping, optional
        ``role -> "PATH[:LAYER]"``; overrides layers found in ``source``.
    project : path, optional
        A project TOML file mapping roles to files, layers, id and field names.
    crs : str, optional
        Working CRS; must be projected in feet. Default: see :mod:`geoconstraints.projection`.
    dem, dem_z_units : optional
        DEM GeoTIFF and its vertical units (``ft``/``m``) when its metadata does not say.
    roles : tuple of str, optional
        Load only these roles (others found in ``source`` are ignored).
    primary : tuple of str
        Roles whose own CRS is preferred as working CRS.

    Returns
    -------
    Layers

    Raises
    ------
    InputError (and subclasses)
        Unreadable file, missing CRS, wrong geometry type, missing field, duplicate ids.

    Examples
    --------
    >>> from geoconstraints import sample_path
    >>> layers = load_layers(sample_path("vestal_sample.gpkg"), roles=("parcels",))
    >>> layers.crs.to_epsg()
    2261
    """
    sources, settings = resolve_sources(source, overrides, project)
    if roles is not None:
        sources = {r: s for r, s in sources.items() if r in roles}
    warn: list[str] = []
    raw: dict[str, gpd.GeoDataFrame] = {}
    info: dict[str, LayerInfo] = {}
    for role, src in sources.items():
        spec = ROLES[role]
        digest = ""
        if src.db is not None:
            gdf, digest = read_postgis(src)
        else:
            gdf = read_source(src)
        what = f"layer {role} ({src.label})"
        if gdf.crs is None:
            hint = ""
            b = gdf.total_bounds if len(gdf) else None
            if b is not None and np.all(np.abs(b) <= 360):
                hint = " Its coordinates look like longitude/latitude (EPSG:4326 or 4269)."
            raise CRSError(f"{what}: has no CRS (no .prj or SRS).{hint} Assign the right CRS in "
                           f"your GIS or with ogr2ogr -a_srs EPSG:XXXX, then try again")
        gdf = canonical_fields(gdf, src, spec)
        absent = [f for f in spec.optional if f not in gdf.columns]
        gdf = _assign_ids(gdf, src, spec, warn)
        gdf = clean_geometries(gdf, role, src.label, warn)
        gdf = nfhl_sentinels(gdf, spec)
        gdf = _normalize_role_fields(gdf, role)
        if len(gdf) == 0:
            warn.append(f"{what}: has no features; rules that need {role} are not evaluated")
        else:
            projection.check_location(tuple(gdf.total_bounds), CRS(gdf.crs), what=what)
        raw[role] = gdf
        kept = [c for c in gdf.columns if c not in (gdf.geometry.name, "feature_id")]
        if src.db is not None:  # no file: the redacted URL, the table, and a hash of the rows read
            info[role] = LayerInfo(role, src.db.redacted, src.db.qualified, len(gdf), _crs_label(CRS(gdf.crs)),
                                   digest, 0, kept, absent)
            continue
        st = src.path.stat()
        info[role] = LayerInfo(role, str(src.path), src.layer, len(gdf), _crs_label(CRS(gdf.crs)),
                               sha256_file(src.path) if src.path.is_file() else "", st.st_size, kept, absent)
    user_crs = crs if crs is not None else settings.get("crs")
    prim = next((CRS(raw[r].crs) for r in primary if r in raw and len(raw[r])), None)
    lonlat = None
    nonempty = [g for g in raw.values() if len(g)]
    if nonempty:
        bounds = [projection.lonlat_bounds(tuple(g.total_bounds), CRS(g.crs)) for g in nonempty]
        arr = np.array(bounds)
        lonlat = (arr[:, 0].min(), arr[:, 1].min(), arr[:, 2].max(), arr[:, 3].max())
    if user_crs is None and lonlat is None and (prim is None or not projection.is_feet(prim)):
        # no layer has a feature to locate: a layer's own CRS in feet, else the default
        own = next((CRS(g.crs) for g in raw.values() if projection.is_feet(CRS(g.crs))), None)
        working, reason = ((own, "the layers' own projected CRS (feet); no layer has features") if own
                           else (CRS.from_epsg(2261), "default EPSG:2261 (no layer has features)"))
    else:
        working, reason = projection.choose_working_crs(user_crs=user_crs, primary_crs=prim, lonlat_bounds=lonlat)
    frames: dict[str, gpd.GeoDataFrame] = {}
    for role, gdf in raw.items():
        if not CRS(gdf.crs).equals(working):
            log.info("reprojecting %s from %s to %s", role, _crs_label(CRS(gdf.crs)), _crs_label(working))
            gdf = gdf.to_crs(working)
            bad = ~shapely.is_valid(gdf.geometry.values)
            if bad.any():  # reprojection can fold a thin ring: repair those only, keep the role's kind
                g = gdf.geometry.values.copy()
                fixed = shapely.make_valid(g[bad])
                spec = ROLES[role]
                g[bad] = _polygonal(fixed) if "polygon" in spec.geometry and "line" not in spec.geometry else fixed
                gdf = gdf.set_geometry(g, crs=working)
        frames[role] = gdf.reset_index(drop=True)
    source_crs = {role: info[role].source_crs for role in raw}
    if len(set(source_crs.values())) > 1:
        warn.append(f"layers come in {len(set(source_crs.values()))} CRSs ("
                    + "; ".join(f"{r} {c}" for r, c in source_crs.items())
                    + f"); all were reprojected to {_crs_label(working)} ({reason})")
    dem_obj = None
    dem_cfg: dict[str, Any] = settings["dem"] if isinstance(settings.get("dem"), dict) else {}
    dem_path = dem if dem is not None else dem_cfg.get("path")
    if dem_path is not None:
        from .terrain import open_dem

        dem_obj = open_dem(Path(dem_path), z_units=dem_z_units or dem_cfg.get("z_units"))
    for w in warn:
        log.warning(w)
    return Layers(frames, working, reason, info, warn, dem_obj, settings)
