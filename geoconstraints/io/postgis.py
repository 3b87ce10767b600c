"""Reading a role from PostGIS (``postgresql://USER@HOST:PORT/DB?table=SCHEMA.TABLE``):
read-only session, the password removed from every message, a hash of the rows read.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import os
import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from pyproj import CRS

from geoconstraints.errors import (
    CRSError,
    FieldError,
    GeoConstraintsError,
    GeometryError,
    InputError,
    LayerReadError,
)
from geoconstraints.io.projection import crs_label
from geoconstraints.io.roles import LayerSource
from geoconstraints.text import id_list, redact

log = logging.getLogger(__name__)


DB_SCHEMES = ("postgresql", "postgres")

_DB_URL = re.compile(r"^(postgresql|postgres)://", re.IGNORECASE)


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
        out = redact(str(text), self.secrets)
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
        Not a PostGIS URL, no table named, a malformed table name, or an ``@`` after the host (a
        password holding ``/``, ``?`` or ``#`` not percent-encoded). The message holds the
        redacted URL only (none for an ``@`` after the host).

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
    if ("@" in parts.path + parts.fragment or any("@" in k for k, _ in query)
            or ("@" not in parts.netloc and any("@" in v for _, v in query))):
        # a password holding '/', '?' or '#' ends the host early: the rest of it would be taken for
        # the host, database or table and shown in every message (the URL is not echoed here)
        raise InputError("a PostGIS URL has '@' after its host: a user or password holding '/', '?' or '#' must "
                         "write them %2F, %3F, %23 (and an '@' in the database name %40); better, give the "
                         "password in PGPASSWORD or ~/.pgpass")
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


def import_psycopg(needed_for: str = "reading from PostGIS",
                   error: type[GeoConstraintsError] = InputError) -> Any:
    """psycopg (optional extra ``[postgis]``), imported when a database is read or written, so that
    a run using none does not spend the 0.12 s of its import; without it, ``error`` saying that
    ``needed_for`` needs it and how to install it."""
    try:
        import psycopg
    except ImportError:
        raise error(f"{needed_for} needs psycopg: pip install 'geoconstraints[postgis]'") from None
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
    psycopg = import_psycopg()
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


def _find_table(conn: Any, sql: Any, pg: PgSource, what: str) -> tuple[int, str, str]:
    """``(oid, schema, table)`` of the table or view named by ``pg`` (as given, then folded to lower case)."""
    find = ("SELECT c.oid, n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE c.oid = to_regclass(%s)")
    parts = [p for p in (pg.schema, pg.table) if p]
    for names in (parts, [p.lower() for p in parts]):  # as given, then as PostgreSQL folds unquoted names
        found = conn.execute(find, [sql.Identifier(*names).as_string(conn)]).fetchone()
        if found:
            return int(found[0]), found[1], found[2]
    have = [f"{r[0]}.{r[1]}" for r in conn.execute(
        "SELECT f_table_schema, f_table_name FROM geometry_columns ORDER BY 1, 2 LIMIT 11").fetchall()]
    hint = (f"; tables with geometry: {id_list(have, 10)}" if have else "; it has no table with geometry")
    raise LayerReadError(f"{what}: no table or view {pg.qualified} in {pg.where}{hint}. Check the name "
                         f"(?table=SCHEMA.TABLE) and that user {pg.user or '(default)'} may see it")


def _geometry_column(conn: Any, pg: PgSource, what: str, schema: str, table: str) -> tuple[str, int]:
    """The one geometry column to read (``?geometry=`` or the only one) and its declared SRID."""
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
    return geoms[0][0], int(geoms[0][1] or 0)


def _read_table(conn: Any, sql: Any, pg: PgSource, what: str) -> tuple[gpd.GeoDataFrame, str]:
    oid, schema, table = _find_table(conn, sql, pg, what)
    gcol, srid = _geometry_column(conn, pg, what, schema, table)
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
    digest = _rows_sha256(wkb, columns, attrs, crs_label(crs))
    log.info("read %d features from %s (SRID %d)", len(gdf), pg.redacted, srid)
    return gdf, digest

