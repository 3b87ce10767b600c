"""Writing a run's findings and tables into PostGIS (``--out-db postgresql://USER@HOST:PORT/DB?schema=NAME``).

Each table (``findings``, ``parcels``, ``map_comparison``...) becomes a table of the schema (default
``geoconstraints``) with its geometry in a ``geom`` column (``geometry(Geometry, SRID)`` of the
working CRS), a GIST index on it and btree indexes on its ``*_id`` columns. Everything happens in
one transaction: the rows go by COPY (CSV written by pyarrow) into new tables, which then replace the old ones (drop,
rename, index); a failure anywhere rolls the whole run back and leaves the previous tables as
they were. The URL's password (better: ``PGPASSWORD`` or ``~/.pgpass``) is never in a message or
a log: only the redacted form ``postgresql://USER@HOST:PORT/DB?schema=NAME`` is shown (the
redaction of :mod:`geoconstraints.io.postgis`).
"""

from __future__ import annotations

import io
import logging
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pa_csv
import shapely

from geoconstraints.errors import OutputError
from geoconstraints.io.postgis import PgSource, import_psycopg, is_db_source, parse_db_source
from geoconstraints.result import Result

log = logging.getLogger(__name__)

DEFAULT_SCHEMA = "geoconstraints"
"""Schema written when the URL names none (``?schema=NAME``)."""

COPY_ROWS = 50_000
"""Rows encoded and sent per COPY block (bounds the memory of a county-sized write)."""

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,50}")
_NEW = "__gc_new"


@dataclass(frozen=True)
class DbTarget:
    """Where ``--out-db`` writes: a connection (``source``, password kept out of ``repr``) and a schema."""

    source: PgSource
    schema: str

    @property
    def redacted(self) -> str:
        """``postgresql://USER@HOST:PORT/DB?schema=NAME``: the only form that reaches a message."""
        return f"{self.source.redacted.split('?')[0]}?{urlencode([('schema', self.schema)])}"


def parse_db_target(url: str | os.PathLike[str]) -> DbTarget:
    """Parse ``postgresql://USER[:PASSWORD]@HOST[:PORT]/DB[?schema=NAME&sslmode=...]``.

    Other query parameters go to libpq. The schema is a plain name (letters, digits, ``_``).

    Examples
    --------
    >>> parse_db_target("postgresql://gis:secret@db.town.gov/gis?schema=flood2025").redacted
    'postgresql://gis@db.town.gov/gis?schema=flood2025'
    """
    text = os.fspath(url).strip()
    if not is_db_source(text):
        raise OutputError("--out-db must be a PostGIS URL: postgresql://USER@HOST:PORT/DB[?schema=NAME]")
    try:
        parts = urlsplit(text)
    except ValueError:
        raise OutputError("--out-db is not a valid URL; write postgresql://USER@HOST:PORT/DB[?schema=NAME]") from None
    query = parse_qsl(parts.query, keep_blank_values=True)
    schema = next((v for k, v in query if k.lower() == "schema"), "").strip() or DEFAULT_SCHEMA
    if not _NAME.fullmatch(schema):
        raise OutputError(f"--out-db: schema {schema!r} is not a plain name (letters, digits and _, not starting "
                          f"with a digit, at most 51 characters)")
    rest = [(k, v) for k, v in query if k.lower() not in ("schema", "table", "geometry")]
    conn_url = urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(rest), parts.fragment))
    return DbTarget(parse_db_source(conn_url, table=f"{schema}.findings"), schema)


def _srid(crs: Any) -> int:
    epsg = crs.to_epsg() if crs is not None else None
    if not epsg:
        name = getattr(crs, "name", "none")
        raise OutputError(f"--out-db: the working CRS ({name}) has no EPSG code, so PostGIS has no SRID for it. "
                          f"Give --crs EPSG:XXXX (e.g. EPSG:2261, NY Central ftUS) and run again")
    return int(epsg)


def _pg_type(s: pd.Series) -> str:
    if pd.api.types.is_bool_dtype(s):
        return "boolean"
    if pd.api.types.is_integer_dtype(s):
        return "bigint"
    if pd.api.types.is_float_dtype(s):
        return "double precision"
    if pd.api.types.is_datetime64_any_dtype(s):
        return "timestamptz" if getattr(s.dt, "tz", None) is not None else "timestamp"
    return "text"


def _arrow_column(s: pd.Series) -> Any:
    if _pg_type(s) != "text":
        return pa.array(s, from_pandas=True)  # NaN -> null
    values = s.to_numpy(dtype=object)
    try:
        return pa.array(values, type=pa.string(), from_pandas=True)  # None / NaN -> null
    except (pa.ArrowTypeError, pa.ArrowInvalid):  # not all text (numbers, dates in an object column)
        return pa.array([None if pd.isna(v) else str(v) for v in values], type=pa.string())


def copy_csv(frame: pd.DataFrame, geometry: np.ndarray | None, srid: int) -> bytes:
    """Rows of ``frame`` (plus hex EWKB geometry) as CSV for ``COPY ... (FORMAT csv)``.

    Written by pyarrow's CSV writer: every text value quoted (an empty string stays empty, not
    NULL), missing values and NaN unquoted empty (NULL), numbers in round-trip precision.
    """
    if not len(frame):
        return b""
    names = list(frame.columns)
    arrays = [_arrow_column(frame[c]) for c in names]
    if geometry is not None:
        g = np.asarray(geometry, dtype=object)
        hexes = np.full(len(g), None, dtype=object)
        ok = ~(shapely.is_missing(g) | shapely.is_empty(g))
        if ok.any():
            hexes[ok] = shapely.to_wkb(shapely.set_srid(g[ok], srid), hex=True, include_srid=True)
        names.append("geom")
        arrays.append(pa.array(hexes, type=pa.string()))
    buf = io.BytesIO()
    pa_csv.write_csv(pa.Table.from_arrays(arrays, names=names), buf,
                     pa_csv.WriteOptions(include_header=False, quoting_style="needed"))
    return buf.getvalue()


def _columns(frame: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray | None]:
    """The attribute columns and the geometry (None for a table without one)."""
    geom_name = getattr(frame, "_geometry_column_name", None)
    if geom_name not in frame.columns:
        geom_name = None
    attrs = pd.DataFrame(frame.drop(columns=[geom_name]) if geom_name else frame).rename(columns=str)
    if "geom" in attrs.columns:
        raise OutputError("--out-db: a table has an attribute named geom (reserved for the geometry)")
    return attrs, (np.asarray(frame[geom_name].values, dtype=object) if geom_name else None)


def _create_and_copy(conn: Any, schema: str, name: str, frame: pd.DataFrame, srid: int) -> int:
    from psycopg import sql

    attrs, geometry = _columns(frame)
    cols = [sql.SQL("{} {}").format(sql.Identifier(c), sql.SQL(_pg_type(attrs[c]))) for c in attrs.columns]
    if geometry is not None:
        cols.append(sql.SQL("geom geometry(Geometry, {})").format(sql.Literal(srid)))
    new = sql.Identifier(schema, name + _NEW)
    conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(new))
    conn.execute(sql.SQL("CREATE TABLE {} ({})").format(new, sql.SQL(", ").join(cols)))
    names = [*attrs.columns, *(["geom"] if geometry is not None else [])]
    stmt = sql.SQL("COPY {} ({}) FROM STDIN (FORMAT csv)").format(new, sql.SQL(", ").join(map(sql.Identifier, names)))
    with conn.cursor() as cur, cur.copy(stmt) as cp:
        for s in range(0, len(attrs), COPY_ROWS):
            cp.write(copy_csv(attrs.iloc[s:s + COPY_ROWS], None if geometry is None else geometry[s:s + COPY_ROWS],
                              srid))
    return len(attrs)


def _swap_in(conn: Any, schema: str, name: str, frame: pd.DataFrame) -> None:
    """Replace ``schema.name`` by the new table, then index it (GIST on geom, btree on ``*_id``)."""
    from psycopg import sql

    table = sql.Identifier(schema, name)
    conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(table))
    conn.execute(sql.SQL("ALTER TABLE {} RENAME TO {}").format(sql.Identifier(schema, name + _NEW), sql.Identifier(name)))
    attrs, geometry = _columns(frame)
    if geometry is not None:
        conn.execute(sql.SQL("CREATE INDEX {} ON {} USING GIST (geom)").format(sql.Identifier(f"{name}_geom_gist"), table))
    for col in [c for c in attrs.columns if c.endswith("_id")]:
        conn.execute(sql.SQL("CREATE INDEX {} ON {} ({})").format(sql.Identifier(f"{name}_{col}_idx"), table,
                                                                   sql.Identifier(col)))
    conn.execute(sql.SQL("ANALYZE {}").format(table))


def write_database(result: Result, url: str | os.PathLike[str],
                   tables: Mapping[str, pd.DataFrame] | None = None) -> dict[str, int]:
    """Write the findings and tables of ``result`` into a PostGIS schema, replacing them atomically.

    Parameters
    ----------
    result : Result
    url : str
        ``postgresql://USER@HOST:PORT/DB[?schema=NAME]`` (schema default ``geoconstraints``,
        created if missing; the database needs the PostGIS extension).
    tables : mapping, optional
        Name -> frame to write instead of ``findings`` plus ``result.tables``.

    Returns
    -------
    dict
        Table name -> rows written.

    Raises
    ------
    OutputError
        psycopg missing, bad URL, cannot connect, no PostGIS, no EPSG code for the working CRS,
        or the database refused a statement (nothing is changed then). Messages show the
        redacted URL only.
    """
    target = parse_db_target(url)
    pg = target.source
    psycopg = import_psycopg("--out-db", OutputError)
    from psycopg import sql
    frames = dict(tables) if tables is not None else {"findings": result.findings, **result.tables}
    for name in frames:
        if not _NAME.fullmatch(name):
            raise OutputError(f"--out-db: table name {name!r} is not a plain name")
    srid = _srid(result.crs)
    kwargs: dict[str, Any] = {"application_name": "geoconstraints"}
    if pg.connect_timeout:
        kwargs["connect_timeout"] = 10
    log.info("writing %s to %s", ", ".join(frames), target.redacted)
    try:
        conn = psycopg.connect(pg.conninfo, **kwargs)
    except psycopg.Error as exc:
        raise OutputError(f"--out-db {target.redacted}: cannot connect ({pg.scrub(exc)}). Check the host, port, "
                          f"user and password (give it in PGPASSWORD or ~/.pgpass)") from None
    written: dict[str, int] = {}
    try:
        with conn:  # one transaction: committed at the end, rolled back on any error
            if conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'postgis'").fetchone() is None:
                raise OutputError(f"--out-db {target.redacted}: the database has no PostGIS extension. "
                                  f"Run CREATE EXTENSION postgis in it (as its owner) and try again")
            conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(target.schema)))
            for name, frame in frames.items():
                written[name] = _create_and_copy(conn, target.schema, name, frame, srid)
            for name, frame in frames.items():
                _swap_in(conn, target.schema, name, frame)
    except psycopg.Error as exc:
        raise OutputError(f"--out-db {target.redacted}: the database refused the write ({pg.scrub(exc)}); nothing "
                          f"was changed. Check that user {pg.user or '(default)'} may create tables in schema "
                          f"{target.schema}") from None
    finally:
        conn.close()
    log.info("wrote %s to %s", ", ".join(f"{k} ({v} rows)" for k, v in written.items()), target.redacted)
    return written
