"""File writers: GeoJSON (RFC 7946), GeoPackage, CSV and text, each written atomically and
never over an input; the output-folder guard.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, cast

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from geoconstraints.errors import OutputError
from geoconstraints.rulebook.findings import FINDING_COLUMNS

log = logging.getLogger(__name__)


OUTPUT_NAMES: tuple[str, ...] = ("findings.geojson", "results.gpkg", "report.html", "map.html")
"""Files every run writes into its output folder (plus one ``<table>.csv`` per table)."""


def check_out_dir(out_dir: str | os.PathLike[str], inputs: Iterable[Path] = (),
                  names: Iterable[str] = OUTPUT_NAMES) -> Path:
    """Refuse an output folder that is a file or whose outputs ``names`` would overwrite an input.

    Creates nothing, so a command can check ``--out`` before it does any work.
    """
    out = Path(out_dir)
    resolved_inputs = {Path(p).resolve() for p in inputs}
    if out.resolve() in resolved_inputs:
        raise OutputError(f"--out {out} is an existing file (one of the inputs), not a folder. "
                          f"Choose a folder name (it is created if missing)")
    if out.exists() and not out.is_dir():
        raise OutputError(f"--out {out} is an existing file, not a folder. Choose a folder name "
                          f"(it is created if missing)")
    for name in names:
        guard_target(out / name, resolved_inputs)
    return out


def prepare_out_dir(out_dir: str | os.PathLike[str], inputs: Iterable[Path] = ()) -> Path:
    """Create ``out_dir`` if missing; refuse a file, or a folder whose outputs would hit an input."""
    out = check_out_dir(out_dir, inputs)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"--out {out}: cannot create the folder ({exc.strerror})") from None
    return out


def guard_target(target: Path, inputs: Iterable[Path]) -> None:
    """Refuse to write ``target`` when it is one of the inputs."""
    if target.resolve() in {Path(p).resolve() for p in inputs}:
        raise OutputError(f"output {target} is one of the inputs; it will not be overwritten. "
                          f"Choose another --out folder")


@contextlib.contextmanager
def atomic_path(target: Path) -> Iterator[Path]:
    """Yield a temporary path beside ``target``; move it over ``target`` on success only."""
    target = Path(target)
    # the real extension stays last (``.results.x1y2.tmp.gpkg``): GDAL checks it
    fd, tmp = tempfile.mkstemp(prefix=f".{target.stem}.", suffix=".tmp" + target.suffix, dir=target.parent)
    os.close(fd)
    os.unlink(tmp)  # writers (GDAL) want to create the file themselves
    try:
        yield Path(tmp)
        os.replace(tmp, target)
    finally:
        for leftover in (tmp, tmp + "-journal", tmp + "-wal", tmp + "-shm"):  # SQLite side files
            if os.path.exists(leftover):
                os.unlink(leftover)


def write_text(target: Path, text: str) -> Path:
    """Write a text file atomically (UTF-8)."""
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return target


def _json_value(v: Any) -> Any:
    if v is None:
        return None
    if isinstance(v, (np.floating, float)):
        return None if np.isnan(v) else float(v)
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.bool_,)):
        return bool(v)
    if isinstance(v, (pd.Timestamp,)):
        return v.isoformat()
    return v


GEOJSON_CHUNK_ROWS = 100_000
"""Findings turned into GeoJSON text and written per chunk, so memory stays bounded at a million."""


def _json_texts(values: pd.Series | np.ndarray) -> np.ndarray:
    """JSON text of every value of a column (``null`` for missing and non-finite numbers).

    Each distinct value is encoded once with :func:`json.dumps` (as the whole document would
    encode it), so a column of repeated text (rule id, citation, status) costs one encoding.
    """
    s = pd.Series(values, copy=False) if not isinstance(values, pd.Series) else values.reset_index(drop=True)
    n = len(s)
    if pd.api.types.is_float_dtype(s.dtype):
        v = s.to_numpy(dtype="float64", na_value=np.nan)
        ok = np.isfinite(v)
        out = np.full(n, "null", dtype=object)
        out[ok] = [repr(x) for x in v[ok].tolist()]  # float repr, as json.dumps writes it
        return out
    try:
        codes, uniques = pd.factorize(s, use_na_sentinel=True)
    except TypeError:  # unhashable values (lists): one at a time
        out = np.empty(n, dtype=object)
        out[:] = [_json_dump(v) for v in s.tolist()]
        return out
    table = np.array([_json_dump(v) for v in np.asarray(uniques, dtype=object).tolist()] + ["null"], dtype=object)
    return table[np.where(codes < 0, len(table) - 1, codes)]


_encode_str = json.encoder.encode_basestring  # what json.dumps(text, ensure_ascii=False) calls (in C)


def _json_dump(v: Any) -> str:
    if type(v) is str:
        return _encode_str(v)
    v = _json_value(v)
    if isinstance(v, float) and not np.isfinite(v):
        return "null"
    return json.dumps(v, ensure_ascii=False)


def _geometry_texts(findings: gpd.GeoDataFrame, precision: int) -> tuple[np.ndarray, np.ndarray]:
    """GeoJSON text of each distinct geometry (WGS 84, rounded) and each row's index into it.

    Rows that share one geometry object (a parcel checked by five rules) are reprojected and
    encoded once; a missing or empty geometry is ``null`` (the last entry).
    """
    geom = np.asarray(findings.geometry.values, dtype=object)
    n = len(geom)
    located = ~(shapely.is_missing(geom) | shapely.is_empty(geom))
    if findings.crs is None and located.any():
        raise OutputError("findings have geometries but no CRS: they cannot be written as RFC 7946 "
                          "longitude/latitude. Set the CRS of the findings (the working CRS)")
    keys = np.fromiter(map(id, geom), dtype=np.int64, count=n)
    keys[~located] = 0
    codes, uniq_keys = pd.factorize(keys)
    first = np.full(len(uniq_keys), n, dtype=np.int64)
    np.minimum.at(first, codes, np.arange(n))
    shapes = geom[first]
    shape_ok = located[first]
    texts = np.full(len(shapes) + 1, "null", dtype=object)
    if shape_ok.any():
        g = gpd.GeoSeries(shapes[shape_ok], crs=findings.crs)
        if g.crs is not None:
            g = g.to_crs(4326)
        rounded = shapely.transform(g.values, lambda xy: np.round(xy, precision))
        texts[:-1][shape_ok] = shapely.to_geojson(rounded)
    codes = np.where(located, codes, len(shapes))
    return texts, codes


def iter_geojson(findings: gpd.GeoDataFrame, *, precision: int = 7,
                 chunk_rows: int = GEOJSON_CHUNK_ROWS) -> Iterator[str]:
    """The RFC 7946 FeatureCollection of the findings as pieces of text, one chunk of features at a time.

    WGS 84 longitude/latitude rounded to ``precision`` decimals, no ``crs`` member, one
    feature per finding (one per line) with properties :data:`FINDING_COLUMNS`; a finding
    without a place has ``"geometry": null``. Geometry and property text are built with
    array operations (``shapely.to_geojson``, one JSON encoding per distinct value), so a
    million findings stream out without a Python dict per feature.

    Raises
    ------
    OutputError
        The findings have geometries but no CRS.
    """
    cols = [c for c in FINDING_COLUMNS if c in findings.columns]
    n = len(findings)
    if not n:
        yield '{"type": "FeatureCollection", "features": []}'
        return
    geo_texts, geo_codes = _geometry_texts(findings, precision)
    # one feature: a fixed frame with a slot per value (``%`` in a key is doubled)
    frame = ('{"type": "Feature", "geometry": %s, "properties": {'
             + ", ".join(json.dumps(c).replace("%", "%%") + ": %s" for c in cols) + "}}")
    yield '{"type": "FeatureCollection", "features": [\n'
    for start in range(0, n, chunk_rows):
        stop = min(n, start + chunk_rows)
        part = findings.iloc[start:stop]
        columns = [geo_texts[geo_codes[start:stop]].tolist()] + [_json_texts(part[c]).tolist() for c in cols]
        yield (",\n" if start else "") + ",\n".join([frame % row for row in zip(*columns)])
    yield "\n]}\n"


def findings_geojson(findings: gpd.GeoDataFrame, *, precision: int = 7) -> dict[str, Any]:
    """RFC 7946 FeatureCollection (WGS 84 lon/lat, no ``crs`` member) of the findings, as a dict.

    The same document :func:`write_geojson` writes (see :func:`iter_geojson`); for a large
    run, write it instead of holding it in memory.
    """
    return cast("dict[str, Any]", json.loads("".join(iter_geojson(findings, precision=precision))))


def write_geojson(findings: gpd.GeoDataFrame, target: Path, *, precision: int = 7) -> Path:
    """Write ``findings.geojson`` (RFC 7946, every finding) atomically, streaming it in chunks."""
    with atomic_path(target) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        fh.writelines(iter_geojson(findings, precision=precision))
    return target


def _gpkg_ready(df: pd.DataFrame) -> gpd.GeoDataFrame:
    """Make a frame writable to GeoPackage: object columns of mixed types become text."""
    out = df.copy()
    for c in out.columns:
        if c == getattr(out, "_geometry_column_name", None):
            continue
        s = out[c]
        if s.dtype == object and pd.api.types.infer_dtype(s, skipna=True) not in ("string", "empty"):
            if s.map(lambda v: isinstance(v, (list, dict, tuple, set))).any():
                out[c] = s.map(lambda v: json.dumps(v) if isinstance(v, (list, dict, tuple, set)) else v)
            types = {type(v) for v in out[c].dropna()}
            if len(types) > 1:
                out[c] = out[c].map(lambda v: None if v is None or (isinstance(v, float) and np.isnan(v)) else str(v))
    if not isinstance(out, gpd.GeoDataFrame):
        out = gpd.GeoDataFrame(out)
    return out


def write_gpkg(layers: dict[str, pd.DataFrame], target: Path, *, crs: Any = None,
               finalize: Callable[[Path], Any] | None = None) -> Path:
    """Write several layers (GeoDataFrames or plain tables) into one GeoPackage atomically.

    ``finalize(tmp_path)``, when given, runs on the complete temporary file before it is moved
    into place (e.g. :func:`geoconstraints.styles.add_layer_styles`), so it is part of the
    atomic write.
    """
    import pyogrio

    with atomic_path(target) as tmp:
        for name, df in layers.items():
            if df is None:
                continue
            gdf = _gpkg_ready(df)
            spatial = isinstance(df, gpd.GeoDataFrame) and df.geometry.name in df.columns
            if spatial and gdf.crs is None and crs is None and gdf.geometry.isna().all():
                # e.g. a SEQR classification: no place on the map, so an attribute table
                gdf, spatial = pd.DataFrame(gdf.drop(columns=gdf.geometry.name)), False
            if spatial:
                if gdf.crs is None and crs is not None:
                    gdf = gdf.set_crs(crs)
                geom_type = _geometry_type(gdf)
                pyogrio.write_dataframe(gdf, tmp, layer=name, driver="GPKG", geometry_type=geom_type,
                                        promote_to_multi=geom_type.startswith("Multi") if geom_type else None,
                                        **_arrow_kw())
            else:
                pyogrio.write_dataframe(pd.DataFrame(gdf), tmp, layer=name, driver="GPKG", **_arrow_kw())
        if not tmp.exists():  # nothing written: an empty but valid file with the findings schema
            empty = gpd.GeoDataFrame({c: pd.Series(dtype=object) for c in FINDING_COLUMNS},
                                     geometry=gpd.GeoSeries([], crs=crs))
            pyogrio.write_dataframe(empty, tmp, layer="findings", driver="GPKG", geometry_type="Unknown")
        if finalize is not None:
            finalize(tmp)
    return target


def _arrow_kw() -> dict[str, Any]:
    """``use_arrow=True`` for :func:`pyogrio.write_dataframe` when pyarrow is installed (several times faster)."""
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return {}
    return {"use_arrow": True}


def _geometry_type(gdf: gpd.GeoDataFrame) -> str:
    types = set(gdf.geometry.dropna().geom_type.unique()) if len(gdf) else set()
    types.discard("GeometryCollection")
    if not types:
        return "Unknown"
    fam = {t.replace("Multi", "") for t in types}
    if len(fam) > 1:
        return "Unknown"
    base = fam.pop()
    return f"Multi{base}" if any(t.startswith("Multi") for t in types) else base


def write_csv(df: pd.DataFrame, target: Path) -> Path:
    """Write a table (geometry dropped) as CSV atomically."""
    table = pd.DataFrame(df.drop(columns=[c for c in df.columns if c == "geometry"]))
    with atomic_path(target) as tmp:
        table.to_csv(tmp, index=False)
    return target

