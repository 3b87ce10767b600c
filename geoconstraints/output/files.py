"""File writers: GeoJSON (RFC 7946, by GDAL), GeoPackage, CSV and text, each written atomically
and never over an input; the output-folder guard.
"""

from __future__ import annotations

import contextlib
import io
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


GEOJSON_LAYER_OPTIONS: dict[str, str] = {"RFC7946": "YES", "WRITE_BBOX": "NO"}
"""GDAL GeoJSON layer creation options of findings.geojson: RFC 7946 (WGS 84 longitude/latitude,
no ``crs`` member, polygon exteriors counter-clockwise and holes clockwise, antimeridian split)."""


def geojson_ready(findings: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
    """The findings as GDAL should write them: :data:`FINDING_COLUMNS` in order (the properties
    contract), non-finite numbers as missing (``null``), empty geometries as missing (``null``).

    Raises
    ------
    OutputError
        The findings have geometries but no CRS (they cannot become longitude/latitude).
    """
    cols = [c for c in FINDING_COLUMNS if c in findings.columns]
    geom = np.asarray(findings.geometry.values, dtype=object)
    located = ~(shapely.is_missing(geom) | shapely.is_empty(geom))
    crs = findings.crs
    if crs is None and located.any():
        raise OutputError("findings have geometries but no CRS: they cannot be written as RFC 7946 "
                          "longitude/latitude. Set the CRS of the findings (the working CRS)")
    out = pd.DataFrame({c: findings[c].to_numpy() for c in cols})
    for c in cols:
        if pd.api.types.is_float_dtype(out[c].dtype):
            out[c] = out[c].where(np.isfinite(out[c].to_numpy(dtype="float64")))
    geom = geom.copy()
    geom[~located] = None  # an empty geometry is no place: null
    # nothing located and no CRS (a SEQR classification): any CRS will do, none is needed
    return gpd.GeoDataFrame(out, geometry=gpd.GeoSeries(geom, crs=crs if crs is not None else 4326))


def _write_geojson_to(findings: gpd.GeoDataFrame, dest: Any, precision: int) -> None:
    import pyogrio

    pyogrio.write_dataframe(geojson_ready(findings), dest, layer="findings", driver="GeoJSON",
                            geometry_type="Unknown",
                            layer_options={**GEOJSON_LAYER_OPTIONS, "COORDINATE_PRECISION": str(int(precision))},
                            **_arrow_kw())


def write_geojson(findings: gpd.GeoDataFrame, target: Path, *, precision: int = 7,
                  inputs: Iterable[Path] = ()) -> Path:
    """Write ``findings.geojson``: every finding as an RFC 7946 FeatureCollection, atomically.

    GDAL's GeoJSON driver (through pyogrio) writes it with ``RFC7946=YES``: WGS 84
    longitude/latitude rounded to ``precision`` decimals, polygon exteriors counter-clockwise,
    no ``crs`` member. One feature per finding with properties :data:`FINDING_COLUMNS` in that
    order; a finding without a place (or with an empty geometry) has ``"geometry": null``, a
    missing number ``null``. No findings give a valid empty FeatureCollection.

    Parameters
    ----------
    findings : GeoDataFrame
        The findings (:func:`~geoconstraints.rulebook.findings.findings_frame`), in any CRS.
    target : Path
        The file to write; replaced only when the whole file is written.
    precision : int
        Decimals of the coordinates (7: about 1 cm).
    inputs : iterable of Path
        Input files: ``target`` is refused when it is one of them.

    Raises
    ------
    OutputError
        ``target`` is an input, or the findings have geometries but no CRS.
    """
    guard_target(Path(target), inputs)
    with atomic_path(Path(target)) as tmp:
        _write_geojson_to(findings, tmp, precision)
    return Path(target)


def findings_geojson(findings: gpd.GeoDataFrame, *, precision: int = 7) -> dict[str, Any]:
    """The FeatureCollection :func:`write_geojson` writes, as a dict (for notebooks and tests)."""
    buf = io.BytesIO()
    _write_geojson_to(findings, buf, precision)
    return cast("dict[str, Any]", json.loads(buf.getvalue().decode("utf-8")))


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

