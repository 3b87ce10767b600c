"""Writers: findings and tables to GeoJSON (RFC 7946), GeoPackage and CSV, atomically.

A writer never computes a rule. Every file is written to a temporary name in the output
folder and moved into place with :func:`os.replace`, so a crash never leaves half a file and
an existing output is replaced whole. Inputs are never overwritten: :func:`prepare_out_dir`
refuses an output folder that is a file or would hold an input.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd

from .errors import OutputError
from .findings import FINDING_COLUMNS

log = logging.getLogger(__name__)


def prepare_out_dir(out_dir: str | os.PathLike[str], inputs: Iterable[Path] = ()) -> Path:
    """Create ``out_dir`` if missing; refuse a file, or a folder whose outputs would hit an input."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise OutputError(f"--out {out} is an existing file, not a folder. Choose a folder name "
                          f"(it is created if missing)")
    resolved_inputs = {Path(p).resolve() for p in inputs}
    if out.resolve() in resolved_inputs:
        raise OutputError(f"--out {out} is an input file. Choose another folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"--out {out}: cannot create the folder ({exc.strerror})") from None
    return out


def guard_target(target: Path, inputs: Iterable[Path]) -> None:
    """Refuse to write ``target`` when it is one of the inputs."""
    if target.resolve() in {Path(p).resolve() for p in inputs}:
        raise OutputError(f"{target} is one of the inputs; it will not be overwritten. "
                          f"Choose another --out folder")


@contextlib.contextmanager
def atomic_path(target: Path) -> Iterator[Path]:
    """Yield a temporary path beside ``target``; move it over ``target`` on success only."""
    target = Path(target)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.stem}.", suffix=target.suffix + ".tmp", dir=target.parent)
    os.close(fd)
    os.unlink(tmp)  # writers (GDAL) want to create the file themselves
    try:
        yield Path(tmp)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


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


def findings_geojson(findings: gpd.GeoDataFrame, *, precision: int = 7) -> dict[str, Any]:
    """RFC 7946 FeatureCollection (WGS 84 lon/lat, no ``crs`` member) of the findings."""
    f = findings
    if f.crs is not None and len(f):
        f = f.to_crs(4326)
    geoms = f.geometry.values if len(f) else []
    features = []
    for i, (_, row) in enumerate(f.iterrows()):
        g = geoms[i]
        geom = None
        if g is not None and not g.is_empty:
            geom = json.loads(gpd.GeoSeries([g]).to_json(to_wgs84=False, drop_id=True))["features"][0]["geometry"]
            geom = _round(geom, precision)
        props = {c: _json_value(row[c]) for c in FINDING_COLUMNS if c in row}
        features.append({"type": "Feature", "geometry": geom, "properties": props})
    return {"type": "FeatureCollection", "features": features}


def _round(obj: Any, nd: int) -> Any:
    if isinstance(obj, float):
        return round(obj, nd)
    if isinstance(obj, list):
        return [_round(v, nd) for v in obj]
    if isinstance(obj, dict):
        return {k: _round(v, nd) for k, v in obj.items()}
    return obj


def write_geojson(findings: gpd.GeoDataFrame, target: Path) -> Path:
    """Write ``findings.geojson`` (RFC 7946) atomically."""
    return write_text(target, json.dumps(findings_geojson(findings), ensure_ascii=False))


def _gpkg_ready(df: pd.DataFrame) -> gpd.GeoDataFrame:
    """Make a frame writable to GeoPackage: object columns of mixed types become text."""
    out = df.copy()
    for c in out.columns:
        if c == getattr(out, "_geometry_column_name", None):
            continue
        s = out[c]
        if s.dtype == object:
            if s.map(lambda v: isinstance(v, (list, dict, tuple, set))).any():
                out[c] = s.map(lambda v: json.dumps(v) if isinstance(v, (list, dict, tuple, set)) else v)
            types = {type(v) for v in out[c].dropna()}
            if len(types) > 1:
                out[c] = out[c].map(lambda v: None if v is None or (isinstance(v, float) and np.isnan(v)) else str(v))
    if not isinstance(out, gpd.GeoDataFrame):
        out = gpd.GeoDataFrame(out)
    return out


def write_gpkg(layers: dict[str, pd.DataFrame], target: Path, *, crs: Any = None) -> Path:
    """Write several layers (GeoDataFrames or plain tables) into one GeoPackage atomically."""
    import pyogrio

    with atomic_path(target) as tmp:
        for name, df in layers.items():
            if df is None:
                continue
            gdf = _gpkg_ready(df)
            if isinstance(df, gpd.GeoDataFrame) and df.geometry.name in df.columns:
                if gdf.crs is None and crs is not None:
                    gdf = gdf.set_crs(crs)
                geom_type = _geometry_type(gdf)
                pyogrio.write_dataframe(gdf, tmp, layer=name, driver="GPKG", geometry_type=geom_type,
                                        promote_to_multi=geom_type.startswith("Multi") if geom_type else None)
            else:
                pyogrio.write_dataframe(pd.DataFrame(df), tmp, layer=name, driver="GPKG")
        if not tmp.exists():  # nothing written: an empty but valid file with the findings schema
            empty = gpd.GeoDataFrame({c: pd.Series(dtype=object) for c in FINDING_COLUMNS},
                                     geometry=gpd.GeoSeries([], crs=crs))
            pyogrio.write_dataframe(empty, tmp, layer="findings", driver="GPKG", geometry_type="Unknown")
    return target


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
