"""File writers: GeoJSON (RFC 7946, by GDAL), GeoPackage (findings split by geometry type),
CSV (rounded, formula-safe), GeoParquet and text, each written atomically and never over an
input (which findings: :func:`geoconstraints.rulebook.findings.findings_in_scope`); the output-folder guard.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import logging
import os
import re
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, cast

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from geoconstraints.errors import OutputError
from geoconstraints.io.validate import FAMILY_OF_TYPE_ID
from geoconstraints.output import child, csvtext, outset
from geoconstraints.rulebook.findings import FINDING_COLUMNS

log = logging.getLogger(__name__)


OUTPUT_NAMES: tuple[str, ...] = (
    "findings.geojson", "results.gpkg", "findings.csv", "findings.parquet", "report.html", "report.pdf", "map.html",
    "provenance.json", "field.kml", "field.gpx", "plots",
)
"""Names a run may write into its output folder (plus ``<table>.csv`` and ``<table>.parquet`` per table
and ``report_parcel_<id>.html`` / ``.pdf``): field.kml / field.gpx for a harvest check, plots/ when a plot applies."""

ID_NAME_CHARS = 64
"""Most characters of a feature id in a file name (``report_parcel_<id>.html``,
``plots/profile_<layer>_<id>.png``): a name stays far below the 255 bytes a file system allows,
with the prefix, suffix and the temporary name's extra characters (:func:`atomic_path`)."""


def id_file_part(value: Any, limit: int = ID_NAME_CHARS) -> str:
    """A feature id as it appears in a file name, the one function every writer names files by.

    An id of letters, digits, ``.``, ``_`` and ``-`` up to ``limit`` characters is itself; any
    other is a readable prefix (other characters as ``_``) and ``-`` with 8 hex digits of its
    SHA-256, so none is too long for a file system. Two ids may still give one name (``A-1`` and
    ``a-1`` on a case-insensitive file system, ``a/b`` and ``a_b-c14cddc0`` anywhere): the names of
    several files of one folder come from :func:`distinct_file_parts`.

    Examples
    --------
    >>> id_file_part("H-1"), id_file_part("1014.-14-1"), id_file_part("a/b"), id_file_part("../../etc")
    ('H-1', '1014.-14-1', 'a_b-c14cddc0', 'etc-74ccf3c5')
    >>> part = id_file_part("H-" + "9" * 250); len(part), part[:12], part[-9:]
    (64, 'H-9999999999', '-60e81d7d')
    """
    text = str(value)
    if len(text) <= limit and re.fullmatch(r"[A-Za-z0-9_-][A-Za-z0-9._-]*", text) and not text.endswith("."):
        return text
    return _hashed_part(text, limit, 8)


def _hashed_part(text: str, limit: int, digits: int) -> str:
    """``text`` as a readable prefix (other characters as ``_``) and ``-`` with ``digits`` hex digits
    of its SHA-256, at most ``limit`` characters (the digest alone when no prefix fits)."""
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:digits]
    head = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._")[: max(0, limit - digits - 1)].rstrip("._")
    return f"{head}-{digest}" if head else digest


HASH_DIGITS: tuple[int, ...] = (8, 16, 64)
"""Hex digits of the SHA-256 :func:`distinct_file_parts` appends to the names that would clash, in
turn: a name that still clashes with 8 (an id spelled like another's hashed name) gets 16, then 64."""


def distinct_file_parts(values: Iterable[Any], limit: int = ID_NAME_CHARS) -> dict[str, str]:
    """The file-name parts of several ids that name files of one folder, distinct under case folding.

    Each id is :func:`id_file_part` of it, except where two or more ids would give names that are
    equal once case is folded (``A-1`` and ``a-1``: one file on macOS's and Windows' case-insensitive
    file systems, where the second written would replace the first; or ``a/b`` and ``a_b-c14cddc0``,
    the same name anywhere): every one of those gets ``-`` and 8 hex digits of the SHA-256 of its
    own id (16, then 64, for a name that still clashes, :data:`HASH_DIGITS`). Deterministic: a
    name depends on its id and on which other ids it clashes with, never on their order. An id
    given twice is one id (one name).

    Returns
    -------
    dict
        ``str(id) -> part``, in the order given.

    Examples
    --------
    >>> distinct_file_parts(["A-1", "a-1", "B-2"])
    {'A-1': 'A-1-bc4e7be9', 'a-1': 'a-1-2f8fe63a', 'B-2': 'B-2'}
    >>> distinct_file_parts(["a/b", "a_b-c14cddc0"])  # "a/b" is already its hashed name
    {'a/b': 'a_b-c14cddc0', 'a_b-c14cddc0': 'a_b-c14cddc0-10ed7bd6'}
    """
    ids = list(dict.fromkeys(str(v) for v in values))
    parts = {t: id_file_part(t, limit) for t in ids}
    for digits in HASH_DIGITS:
        folded: dict[str, list[str]] = {}
        for t in ids:
            folded.setdefault(parts[t].casefold(), []).append(t)
        clashing = [t for group in folded.values() if len(group) > 1 for t in group]
        if not clashing:
            break
        for t in clashing:
            parts[t] = _hashed_part(t, limit, digits)
    return parts


FINDINGS_LAYERS: dict[str, str] = {"point": "findings_point", "line": "findings_line",
                                   "polygon": "findings_polygon", "none": "findings_nogeom"}
"""Layers of results.gpkg holding the findings, by geometry family (``none``: an attribute table of
the findings without a place)."""


def check_out_dir(out_dir: str | os.PathLike[str], inputs: Iterable[Path] = (),
                  names: Iterable[str] = OUTPUT_NAMES) -> Path:
    """Refuse an output folder that is a file or whose outputs ``names`` would overwrite an input.

    Creates nothing, so a command can check ``--out`` before it does any work.
    """
    out = Path(out_dir)
    resolved_inputs = {Path(p).resolve() for p in inputs}
    outset.refuse_file_out(out, resolved_inputs)
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


def temp_beside(target: Path) -> Path:
    """A free temporary name beside ``target`` for a writer to create: ``.<stem>.<random>.tmp<suffix>``
    (the real extension stays last: GDAL checks it). The file is created by the writer, with the
    permissions of any new file (``0666`` less the umask)."""
    target = Path(target)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.stem}.", suffix=".tmp" + target.suffix, dir=target.parent)
    os.close(fd)
    os.unlink(tmp)  # writers (GDAL) want to create the file themselves
    return Path(tmp)


def discard_temp(tmp: Path) -> None:
    """Remove a temporary file of :func:`temp_beside` and the side files SQLite may leave beside it."""
    for leftover in (str(tmp), f"{tmp}-journal", f"{tmp}-wal", f"{tmp}-shm"):
        if os.path.exists(leftover):
            os.unlink(leftover)


@contextlib.contextmanager
def atomic_path(target: Path) -> Iterator[Path]:
    """Yield a temporary path beside ``target`` (:func:`temp_beside`); move it over ``target`` on success only."""
    tmp = temp_beside(target)
    try:
        yield tmp
        os.replace(tmp, target)
    finally:
        discard_temp(tmp)


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
    # text held by Arrow stays so (no Python string per row and back); other columns as before
    out = pd.DataFrame({c: findings[c].array if isinstance(findings[c].dtype, pd.StringDtype) else findings[c].to_numpy()
                        for c in cols})
    for c in cols:
        if pd.api.types.is_float_dtype(out[c].dtype):
            out[c] = out[c].where(np.isfinite(out[c].to_numpy(dtype="float64")))
    geom = geom.copy()
    geom[~located] = None  # an empty geometry is no place: null
    # nothing located and no CRS (a SEQR classification): any CRS will do, none is needed
    return gpd.GeoDataFrame(out, geometry=gpd.GeoSeries(geom, crs=crs if crs is not None else 4326))


def geojson_layers(findings: gpd.GeoDataFrame, *, precision: int = 7,
                   members: dict[str, Any] | None = None, cache: WkbCache | None = None) -> Iterator[ArrowLayer]:
    """The one layer of findings.geojson as GDAL is handed it (:func:`arrow_layer` of
    :func:`geojson_ready`): what :func:`write_geojson` writes, here or in a child process
    (``cache``: the set's :class:`WkbCache`)."""
    opts = {**GEOJSON_LAYER_OPTIONS, "COORDINATE_PRECISION": str(int(precision))}
    if members:
        opts["FOREIGN_MEMBERS_COLLECTION"] = json.dumps(members, ensure_ascii=False, default=str)
    yield arrow_layer(geojson_ready(findings), "findings", driver="GeoJSON", geometry_type="Unknown",
                      layer_options=opts, cache=cache)


def write_geojson(findings: gpd.GeoDataFrame, target: Path, *, precision: int = 7,
                  inputs: Iterable[Path] = (), members: dict[str, Any] | None = None) -> Path:
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
    members : dict, optional
        Foreign members of the FeatureCollection (RFC 7946 section 6.1), e.g.
        ``{"geoconstraints": {"run_id": ...}}``: readers that do not know them ignore them.

    Raises
    ------
    OutputError
        ``target`` is an input, or the findings have geometries but no CRS.
    """
    guard_target(Path(target), inputs)
    return write_layers(Path(target), geojson_layers(findings, precision=precision, members=members))


def findings_geojson(findings: gpd.GeoDataFrame, *, precision: int = 7) -> dict[str, Any]:
    """The FeatureCollection :func:`write_geojson` writes, as a dict (for notebooks and tests)."""
    buf = io.BytesIO()
    child.write_arrow_layers(buf, geojson_layers(findings, precision=precision))
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


GPKG_VERSION = "1.2"
"""GeoPackage version of results.gpkg (see :func:`write_gpkg`)."""


def gpkg_layers(layers: dict[str, pd.DataFrame], *, crs: Any = None, geometry_types: dict[str, str] | None = None,
                metadata: dict[str, str] | None = None, wkb: dict[str, Any] | None = None,
                cache: WkbCache | None = None) -> Iterator[ArrowLayer]:
    """The layers of a GeoPackage as GDAL is handed them (:func:`arrow_layer`), one at a time:
    what :func:`write_gpkg` writes, here or in a child process (see there for the arguments;
    ``wkb``: the geometry of some layers already encoded, by layer name, see :func:`arrow_layer`;
    ``cache``: the set's :class:`WkbCache`, each geometry object encoded once across the layers).
    No layer at all: one empty layer ``findings`` with the findings schema (a valid file)."""
    wkb = wkb or {}
    geometry_types = geometry_types or {}
    # GeoPackage 1.2 (GDAL's default is 1.4): read without a warning by older GDAL, QGIS 3.22 (Debian
    # 12) and ArcGIS; the layers, styles and metadata here need nothing newer
    md: dict[str, Any] = {"dataset_options": {"VERSION": GPKG_VERSION},
                          **({"dataset_metadata": metadata} if metadata else {})}
    for name, df in layers.items():
        if df is None:
            continue
        gdf = _gpkg_ready(df)
        spatial = isinstance(df, gpd.GeoDataFrame) and df.geometry.name in df.columns
        if spatial and gdf.crs is None and crs is None and gdf.geometry.isna().all() and name not in geometry_types:
            # e.g. a SEQR classification: no place on the map, so an attribute table
            gdf, spatial = pd.DataFrame(gdf.drop(columns=gdf.geometry.name)), False
        kw: dict[str, Any] = {**md, **({"layer_metadata": metadata} if metadata else {})}
        if spatial:
            if gdf.crs is None and crs is not None:
                gdf = gdf.set_crs(crs)
            geom_type = geometry_types.get(name) or _geometry_type(gdf)
            yield arrow_layer(gdf, name, driver="GPKG", geometry_type=geom_type,
                              promote_to_multi=geom_type.startswith("Multi"), wkb=wkb.get(name), cache=cache, **kw)
        else:
            yield arrow_layer(pd.DataFrame(gdf), name, driver="GPKG", **kw)
        md = {}  # the dataset's metadata once, with its first layer
    if md:  # nothing written: an empty but valid file with the findings schema
        empty = gpd.GeoDataFrame({c: pd.Series(dtype=object) for c in FINDING_COLUMNS},
                                 geometry=gpd.GeoSeries([], crs=crs))
        yield arrow_layer(empty, "findings", driver="GPKG", geometry_type="Unknown", **md)


def write_layers(target: Path, layers: Iterable[ArrowLayer], *,
                 finalize: Callable[[Path], Any] | None = None) -> Path:
    """Write ``layers`` (:func:`arrow_layer`) into the GDAL dataset ``target`` atomically, in this
    process (:func:`geoconstraints.output.child.write_arrow_layers`, the call a child process
    makes); ``finalize(tmp_path)`` runs on the complete temporary file before it is moved in place."""
    with atomic_path(target) as tmp:
        child.write_arrow_layers(tmp, layers)
        if finalize is not None:
            finalize(tmp)
    return target


def write_gpkg(layers: dict[str, pd.DataFrame], target: Path, *, crs: Any = None,
               finalize: Callable[[Path], Any] | None = None, geometry_types: dict[str, str] | None = None,
               metadata: dict[str, str] | None = None, wkb: dict[str, Any] | None = None) -> Path:
    """Write several layers (GeoDataFrames or plain tables) into one GeoPackage atomically.

    ``finalize(tmp_path)``, when given, runs on the complete temporary file before it is moved
    into place (e.g. :func:`geoconstraints.output.styles.add_layer_styles`), so it is part of the
    atomic write. ``geometry_types`` declares the geometry type of a layer by name (an empty
    layer, or one that must keep its type whatever its rows); ``metadata`` is stored as GDAL
    metadata of the GeoPackage and of every layer (``gpkg_metadata``; QGIS shows it under
    Layer Properties > Information). ``wkb``: the geometry of some layers already encoded, by
    layer name (see :func:`arrow_layer`). The layers are those of :func:`gpkg_layers`.
    """
    return write_layers(target, gpkg_layers(layers, crs=crs, geometry_types=geometry_types, metadata=metadata,
                                            wkb=wkb), finalize=finalize)


ArrowLayer = tuple[Any, dict[str, Any]]
"""One layer for GDAL: ``(pyarrow.Table, arguments of pyogrio.write_arrow)`` (see :func:`arrow_layer`)."""


def _gdal_crs(crs: Any) -> str | None:
    """The CRS as pyogrio hands it to GDAL: ``EPSG:<code>`` when it has one, else WKT1 (GDAL flavour)."""
    if not crs:
        return None
    epsg = crs.to_epsg()
    return f"EPSG:{epsg}" if epsg else str(crs.to_wkt("WKT1_GDAL"))


def _promoted(geoms: np.ndarray) -> np.ndarray:
    """Single points, lines and polygons as one-part multi-geometries (the others as they are)."""
    out = geoms.copy()
    tid = shapely.get_type_id(geoms)
    for t, make in ((0, shapely.multipoints), (1, shapely.multilinestrings), (3, shapely.multipolygons)):
        sel = tid == t
        if sel.any():
            out[sel] = make(np.atleast_2d(geoms[sel]), axis=0)
    return out


def _promoted_wkb(wkb: np.ndarray, geoms: np.ndarray) -> np.ndarray:
    """``wkb`` (``shapely.to_wkb`` of ``geoms``) as :func:`_promoted` ``geoms`` encode: the single points,
    lines and polygons encoded again as one-part multi-geometries (one vectorized call for those rows),
    the others as they are.

    Examples
    --------
    >>> from shapely.geometry import Point, box
    >>> g = np.array([box(0, 0, 1, 1), Point(1, 2), Point(1, 2, 3), None], dtype=object)
    >>> got = _promoted_wkb(shapely.to_wkb(g, hex=False), g)
    >>> [bytes(a) == bytes(b) if a is not None else b is None
    ...  for a, b in zip(got, shapely.to_wkb(_promoted(g), hex=False))]
    [True, True, True, True]
    """
    single = np.isin(shapely.get_type_id(geoms), (0, 1, 3))
    if not single.any():
        return wkb
    out = wkb.copy()
    out[single] = shapely.to_wkb(_promoted(geoms[single]), hex=False)
    return out


class WkbCache:
    """The WKB of geometry objects, each object encoded once for the files of one output set. A
    screening's derived layers (``sfha_overlaps``, ``floodway_overlaps``) hold the very geometry
    objects of its findings, and findings.geojson and results.gpkg write them again: each is encoded
    here once, by object (shapely's geometries do not change); where a layer needs one-part
    multi-geometries, only its single parts are encoded again (:func:`_promoted_wkb`). The same bytes as
    ``shapely.to_wkb`` of each array; the objects encoded are held, so no id is reused meanwhile.

    Examples
    --------
    >>> from shapely.geometry import box
    >>> a, b = box(0, 0, 1, 1), box(1, 1, 2, 3)
    >>> cache = WkbCache()
    >>> first = cache.encode(np.array([a, None, b], dtype=object))
    >>> again = cache.encode(np.array([b, a], dtype=object), promote=True)
    >>> cache.encoded, shapely.from_wkb(again[0]).geom_type, first[1] is None
    (3, 'MultiPolygon', True)
    """

    def __init__(self) -> None:
        self._held: list[np.ndarray] = []
        self._ids = pd.Index(np.zeros(0, dtype=np.int64))
        self._wkb = np.zeros(0, dtype=object)

    @property
    def encoded(self) -> int:
        """How many distinct objects (a missing geometry counting as one) were encoded."""
        return len(self._wkb)

    def clear(self) -> None:
        """Forget every encoding (a county's findings: ~100 MB), once the last layer is handed over."""
        self._held, self._ids, self._wkb = [], pd.Index(np.zeros(0, dtype=np.int64)), np.zeros(0, dtype=object)

    def encode(self, values: Any, promote: bool = False) -> np.ndarray:
        """``shapely.to_wkb(values, hex=False)`` (of :func:`_promoted` ``values`` with ``promote``)."""
        geoms = np.asarray(values, dtype=object)
        ids = np.fromiter(map(id, geoms), dtype=np.int64, count=len(geoms))
        at = self._ids.get_indexer(pd.Index(ids))
        new = at < 0
        if new.any():
            uniq, first = np.unique(ids[new], return_index=True)
            objs = geoms[new][first]
            self._held.append(objs)
            self._ids = self._ids.append(pd.Index(uniq))
            self._wkb = np.concatenate([self._wkb, shapely.to_wkb(objs, hex=False)])
            at = self._ids.get_indexer(pd.Index(ids))
        out = self._wkb[at]
        return _promoted_wkb(out, geoms) if promote else out


def _arrow_columns(frame: pd.DataFrame, skip: str | None) -> tuple[pd.DataFrame, list[str]]:
    """Columns Arrow cannot hold as they are, as text (pyogrio's rules): an object column of
    datetimes, or of values pyarrow cannot type; datetimes with a time zone other than UTC. The
    second item names the datetime columns GDAL is told are datetimes."""
    import pyarrow as pa

    datetimes: list[str] = []
    for name, dtype in frame.dtypes.items():
        if name == skip:
            continue
        if dtype == "object":
            kind = pd.api.types.infer_dtype(frame[name])
            if kind == "string":
                continue
            if kind == "datetime":
                frame[name] = frame[name].astype("string")
                datetimes.append(str(name))
            else:
                try:
                    pa.Schema.from_pandas(frame[[name]])
                except pa.ArrowInvalid:
                    frame[name] = frame[name].astype("string")
        elif isinstance(dtype, pd.DatetimeTZDtype) and str(dtype.tz) != "UTC":
            frame[name] = frame[name].astype("string")
            datetimes.append(str(name))
    return frame, datetimes


def arrow_layer(df: pd.DataFrame, layer: str, *, driver: str, geometry_type: str | None = None,
                promote_to_multi: bool = False, wkb: Any = None, cache: WkbCache | None = None,
                **options: Any) -> ArrowLayer:
    """A frame as one GDAL layer: the Arrow table and the arguments of :func:`pyogrio.write_arrow`
    that :func:`pyogrio.write_dataframe` (``use_arrow=True``) would hand GDAL for it.

    The geometry column as WKB (single parts promoted to one-part multi-geometries with
    ``promote_to_multi``), its CRS as ``EPSG:<code>`` or WKT1; object columns of datetimes, or of
    values Arrow cannot type, as text; Arrow's null type (a column of ``None``) as text.
    ``options`` are passed on (``layer_options``, ``dataset_options``, metadata...). The table
    can be written here or, through an Arrow IPC file, by a child process: the same call of GDAL
    with the same table, so the same file. ``wkb``: the geometry column already encoded (an Arrow
    binary array, one WKB or null per row, e.g. the column of :func:`geoparquet_table`), used
    as it is unless ``promote_to_multi``; ``cache``: the set's :class:`WkbCache` (each geometry
    object encoded once across layers and files).
    """
    import pyarrow as pa

    geometry = [c for c, t in df.dtypes.items() if t == "geometry"]
    if len(geometry) > 1:
        raise OutputError(f"layer {layer} has more than one geometry column ({', '.join(map(str, geometry))})")
    frame = pd.DataFrame(df, copy=False).copy(deep=False)
    kwargs: dict[str, Any] = {"layer": layer, "driver": driver, **options}
    geom = str(geometry[0]) if geometry else None
    encoded = None
    if geom is not None:
        values = cast("gpd.array.GeometryArray", df[geom].values)
        if wkb is not None and not promote_to_multi:
            if len(wkb) != len(frame):
                raise OutputError(f"layer {layer}: {len(wkb)} encoded geometries for {len(frame)} rows")
            # a placeholder the table's pandas metadata reads as bytes, as for WKB encoded here; the
            # encoded column replaces it in the table below, as it is
            encoded, frame[geom] = wkb, np.full(len(frame), b"", dtype=object)
        else:
            arr = np.asarray(values, dtype=object)
            frame[geom] = (cache.encode(arr, promote_to_multi) if cache is not None  # the same bytes
                           else shapely.to_wkb(_promoted(arr) if promote_to_multi else arr, hex=False))  # as geopandas'
        kwargs.update(geometry_name=geom, geometry_type=geometry_type, crs=_gdal_crs(values.crs))
    frame, datetimes = _arrow_columns(frame, geom)
    table = pa.Table.from_pandas(frame, preserve_index=False)
    if encoded is not None:
        table = table.set_column(table.schema.get_field_index(geom), pa.field(geom, pa.binary()), encoded)
    fields = []
    for f in table.schema:
        if pa.types.is_null(f.type):
            f = f.with_type(pa.string())
        elif pa.types.is_dictionary(f.type) and pa.types.is_null(f.type.value_type):
            f = f.with_type(pa.dictionary(f.type.index_type, pa.string()))
        if f.name == geom and not (pa.types.is_binary(f.type) or pa.types.is_large_binary(f.type)):
            f = f.with_type(pa.binary())
        if f.name in datetimes:
            f = f.with_metadata({**(f.metadata or {}), b"GDAL:OGR:type": b"DateTime"})
        fields.append(f)
    schema = pa.schema(fields, metadata=table.schema.metadata)
    return (table if schema.equals(table.schema, check_metadata=True) else table.cast(schema)), kwargs


_TYPE_NAMES = ("Point", "LineString", "LinearRing", "Polygon", "MultiPoint", "MultiLineString", "MultiPolygon",
               "GeometryCollection")  # GeoSeries.geom_type by shapely type id 0..7


def _geometry_type(gdf: gpd.GeoDataFrame) -> str:
    """The layer's geometry type: ``Multi<type>`` where any row is multi-part, ``Unknown`` for mixed
    families or none (geometry collections and missing geometries do not count); from the type ids
    (no type name per row)."""
    ids = np.unique(shapely.get_type_id(np.asarray(gdf.geometry.values, dtype=object)))
    types = {_TYPE_NAMES[t] for t in ids.tolist() if 0 <= t < len(_TYPE_NAMES)}
    types.discard("GeometryCollection")
    if not types:
        return "Unknown"
    fam = {t.replace("Multi", "") for t in types}
    if len(fam) > 1:
        return "Unknown"
    base = fam.pop()
    return f"Multi{base}" if any(t.startswith("Multi") for t in types) else base


# ------------------------------------------------------------------------------------------
# which findings, split by geometry type

def _highest_parts(geoms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(family, multi-geometry) of geometry collections: their parts of the highest dimension."""
    parts, owner = shapely.get_parts(geoms, return_index=True)
    dim = shapely.get_dimensions(parts)
    top = pd.Series(dim).groupby(owner).transform("max").to_numpy()
    keep = (dim == top) & ~shapely.is_empty(parts)
    fam = np.full(len(geoms), "none", dtype=object)
    out = np.full(len(geoms), None, dtype=object)
    for d, family, make in ((0, "point", shapely.multipoints), (1, "line", shapely.multilinestrings),
                            (2, "polygon", shapely.multipolygons)):
        sel = keep & (top == d)
        if sel.any():
            idx = np.unique(owner[sel])
            out[idx] = make(parts[sel], indices=np.searchsorted(idx, owner[sel]))
            fam[idx] = family
    return fam, out


def split_findings(findings: gpd.GeoDataFrame) -> dict[str, pd.DataFrame]:
    """The findings as the layers of results.gpkg, one per geometry family (:data:`FINDINGS_LAYERS`).

    QGIS and ArcGIS draw a layer of one geometry type; a findings table mixes points (a water
    bar), lines (a haul road) and polygons (a parcel). Each finding goes to exactly one layer:
    ``findings_point``, ``findings_line``, ``findings_polygon`` (GeoDataFrames, multi-part types
    where any part is multi-part) or ``findings_nogeom`` (a plain table: findings without a place,
    or with an empty geometry). A geometry collection keeps its parts of the highest dimension
    (the polygons of a polygon-and-stray-point intersection). Every layer is present, empty or not.

    Examples
    --------
    >>> from shapely.geometry import Point, LineString
    >>> f = gpd.GeoDataFrame({"rule_id": ["A", "B", "C"]}, geometry=[Point(0, 0), LineString([(0, 0), (1, 1)]), None])
    >>> {k: len(v) for k, v in split_findings(f).items()}
    {'findings_point': 1, 'findings_line': 1, 'findings_polygon': 0, 'findings_nogeom': 1}
    """
    geoms = np.asarray(findings.geometry.values, dtype=object)
    tid = shapely.get_type_id(geoms)
    fam = np.where(tid >= 0, FAMILY_OF_TYPE_ID[np.clip(tid, 0, 7)], "none").astype(object)
    fam[(tid >= 0) & shapely.is_empty(geoms)] = "none"
    gc = fam == "collection"
    if gc.any():
        geoms = geoms.copy()
        fam[gc], geoms[gc] = _highest_parts(geoms[gc])
    # the columns as they are (Arrow text stays Arrow text: no round trip through Python strings)
    attrs = pd.DataFrame({c: findings[c].array for c in findings.columns if c != findings.geometry.name},
                         index=pd.RangeIndex(len(findings)))
    out: dict[str, pd.DataFrame] = {}
    for family, name in FINDINGS_LAYERS.items():
        sel = fam == family
        part = attrs if sel.all() else attrs[sel].reset_index(drop=True)  # a county's: all polygons
        if family == "none":
            out[name] = part
        else:
            out[name] = gpd.GeoDataFrame(part, geometry=gpd.GeoSeries(geoms[sel], crs=findings.crs), crs=findings.crs)
    return out


def findings_geometry_types(layers: dict[str, pd.DataFrame]) -> dict[str, str]:
    """GeoPackage geometry types of the :func:`split_findings` layers (multi-part where any row is)."""
    base = {"findings_point": "Point", "findings_line": "LineString", "findings_polygon": "Polygon"}
    out = {}
    for name, t in base.items():
        g = layers.get(name)
        multi = g is not None and len(g) and bool(g.geometry.geom_type.str.startswith("Multi").any())
        out[name] = f"Multi{t}" if multi else t
    return out


# ------------------------------------------------------------------------------------------
# CSV for spreadsheets

CSV_DECIMALS: dict[str, int] = {"acres": 4, "share": 4, "fraction": 4, "ft": 2, "in": 2, "pct": 2, "sqft": 1,
                                "sqin": 1, "m": 2}
"""Decimals of a number in the CSV files by its unit: the last of these words in a column name
(``sfha_acres_change`` -> acres, ``precip_in`` -> in), or the ``unit`` of a finding for its
``measured`` and ``threshold``. Other numbers (counts, ids, values without a unit) are written as
they are; GeoJSON, GeoPackage and Parquet keep full precision."""

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""A cell beginning with one of these is a formula to Excel, LibreOffice and Google Sheets
(OWASP "CSV injection"): :func:`csv_ready` writes it with a leading ``'``."""
_FORMULA_BYTES = "".join(FORMULA_START).encode("ascii")


def _decimals_of(name: str) -> int | None:
    for word in reversed(str(name).lower().split("_")):
        if word in CSV_DECIMALS:
            return CSV_DECIMALS[word]
    return None


def neutralise(values: pd.Series) -> pd.Series:
    """Text cells beginning with ``=``, ``+``, ``-``, ``@``, tab or CR get a leading ``'`` (vectorized).

    Examples
    --------
    >>> neutralise(pd.Series(["=1+1", "P-1", "-x", None, 3], dtype=object)).tolist()
    ["'=1+1", 'P-1', "'-x", None, 3]
    """
    if pd.api.types.is_string_dtype(values.dtype) and values.dtype != object:  # pandas' string dtype
        bad = csvtext.starts_with_any(csvtext.arrow_text(values), _FORMULA_BYTES)
        return values.where(~bad, "'" + values) if bad.any() else values
    kind = pd.api.types.infer_dtype(values, skipna=True)
    if kind in ("string", "empty"):
        is_text = values.notna().to_numpy(dtype=bool)
    elif kind.startswith("mixed"):
        is_text = values.map(lambda v: isinstance(v, str)).to_numpy(dtype=bool)
    else:
        return values
    if not is_text.any():
        return values
    text = values[is_text].astype(str)
    bad = text.str.startswith(FORMULA_START).to_numpy(dtype=bool)
    if not bad.any():
        return values
    out = values.copy().astype(object)
    idx = np.flatnonzero(is_text)[bad]
    out.iloc[idx] = "'" + text[bad].to_numpy(dtype=object)
    return out


def csv_ready(df: pd.DataFrame) -> pd.DataFrame:
    """A table as the CSV files hold it: geometry dropped, numbers rounded by unit
    (:data:`CSV_DECIMALS`), every text cell (and header) that a spreadsheet would run as a
    formula neutralised (:func:`neutralise`)."""
    geom = getattr(df, "_geometry_column_name", None)
    out = pd.DataFrame(df, copy=False).drop(columns=[c for c in df.columns if c in (geom, "geometry")])
    dec_of_unit = (out["unit"].map(CSV_DECIMALS).to_numpy(dtype="float64", na_value=np.nan)
                   if {"unit", "measured"} <= set(out.columns) else None)
    for c in out.columns:
        col = out[c]
        if pd.api.types.is_float_dtype(col.dtype):
            if dec_of_unit is not None and c in ("measured", "threshold"):
                vals = col.to_numpy(dtype="float64", copy=True)
                for d in np.unique(dec_of_unit[~np.isnan(dec_of_unit)]):
                    sel = dec_of_unit == d
                    vals[sel] = np.round(vals[sel], int(d))
                out[c] = vals
            elif (d := _decimals_of(c)) is not None:
                out[c] = col.round(d)
        elif pd.api.types.is_string_dtype(col.dtype) or col.dtype == object:
            out[c] = neutralise(col)
    out.columns = [("'" + c) if isinstance(c, str) and c.startswith(FORMULA_START) else c for c in out.columns]
    return out


def write_csv(df: pd.DataFrame, target: Path) -> Path:
    """Write a table as CSV atomically (UTF-8, RFC 4180 CRLF rows, so a cell holding a line break of
    either kind is quoted; see :func:`csv_ready`: no geometry, rounded, formula-safe)."""
    table = csv_ready(df)
    with atomic_path(target) as tmp:
        with open(tmp, "wb") as fh:  # pyarrow's compute functions, byte for byte as pandas writes it
            done = csvtext.write_table(table, fh)
        if not done:
            table.to_csv(tmp, index=False, lineterminator="\r\n")
    return target


# ------------------------------------------------------------------------------------------
# GeoParquet

def geoparquet_table(df: pd.DataFrame) -> Any:
    """The Arrow table :func:`write_parquet` writes for ``df``: GeoParquet 1.1 of a GeoDataFrame
    (the geometry as ISO WKB, its CRS as PROJJSON in the ``geo`` metadata: the table
    :meth:`geopandas.GeoDataFrame.to_parquet` writes), a plain table's columns as they are;
    object columns of mixed types as text, as in the GeoPackage."""
    import pyarrow as pa
    from geopandas.io.arrow import _geopandas_to_arrow  # the table GeoDataFrame.to_parquet writes

    spatial = isinstance(df, gpd.GeoDataFrame) and df.geometry.name in df.columns
    frame = _gpkg_ready(df)
    if spatial:
        return _geopandas_to_arrow(frame, index=False)
    return pa.Table.from_pandas(pd.DataFrame(frame), preserve_index=False)


class SharedTables:
    """Arrow tables built once for the files of one output set (:func:`geoparquet_table` by
    frame): the parcels' table is parcels.parquet, and its WKB column the geometry of
    results.gpkg's parcels layer (:func:`gpkg_layers` ``wkb``), so a county's parcels are encoded
    once (1.0-1.3 s a million parcels each time). :meth:`release` frees a table once written.

    Examples
    --------
    >>> import geopandas as gpd
    >>> from shapely.geometry import box
    >>> parcels = gpd.GeoDataFrame({"parcel_id": ["1"]}, geometry=[box(0, 0, 1, 1)], crs=2262)
    >>> shared = SharedTables()
    >>> shared.geoparquet(parcels) is shared.geoparquet(parcels)
    True
    >>> shared.release(parcels).column_names
    ['parcel_id', 'geometry']
    """

    def __init__(self) -> None:
        # by id: a frame is not hashable; held with its table, so no other frame can take its id meanwhile
        self._tables: dict[int, tuple[pd.DataFrame, Any]] = {}

    def geoparquet(self, df: pd.DataFrame) -> Any:
        """:func:`geoparquet_table` of ``df``, built on the first call for this very frame."""
        if id(df) not in self._tables:
            self._tables[id(df)] = (df, geoparquet_table(df))
        return self._tables[id(df)][1]

    def release(self, df: pd.DataFrame) -> Any:
        """The table of ``df`` (built now if it was not), no longer held here."""
        table = self.geoparquet(df)
        del self._tables[id(df)]
        return table


def write_parquet(df: pd.DataFrame, target: Path, *, metadata: dict[str, Any] | None = None,
                  table: Any = None) -> Path:
    """Write a table as (Geo)Parquet atomically, with pyarrow.

    A GeoDataFrame becomes GeoParquet 1.1 (WKB geometry, its CRS as PROJJSON in the ``geo``
    metadata; read back with :func:`geopandas.read_parquet`); a plain table, Parquet.
    ``metadata`` is stored as JSON under the file's ``geoconstraints`` key (the run id...).
    ``table``: :func:`geoparquet_table` of ``df`` when it is already built (:class:`SharedTables`).
    """
    import pyarrow.parquet as pq

    if table is None:
        table = geoparquet_table(df)
    if metadata:
        md = dict(table.schema.metadata or {})
        md[b"geoconstraints"] = json.dumps(metadata, ensure_ascii=False, default=str).encode("utf-8")
        table = table.replace_schema_metadata(md)
    with atomic_path(target) as tmp:
        pq.write_table(table, tmp, compression="zstd")
    return target
