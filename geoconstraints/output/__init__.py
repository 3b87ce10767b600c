"""Outputs of a run: files (GeoJSON, GeoPackage with QGIS styles, CSV, GeoParquet, KML/GPX, PNG
plots), the report and the web map, written as one set.

:func:`write_result` writes the whole set for a :class:`~geoconstraints.result.Result`, all or
nothing (:mod:`geoconstraints.output.outset`); :func:`explore` gives the interactive map in a
notebook.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import geopandas as gpd
import pandas as pd

from geoconstraints import interrupt
from geoconstraints.errors import MissingToolError, OutputError
from geoconstraints.output import child, field, files, outset, plots, report, styles, webmap
from geoconstraints.output.provenance import (
    changed_during_run,
    flood_map_dates,
    layers_not_read,
    rulebook_files,
)
from geoconstraints.output.selection import ALL_OUTPUTS, OUTPUTS, select_outputs
from geoconstraints.result import Result
from geoconstraints.rulebook.findings import findings_in_scope, findings_scope, status_counts

log = logging.getLogger(__name__)

if interrupt.check not in child.BEFORE_WAIT:  # child.py imports nothing of geoconstraints (run as a script)
    child.BEFORE_WAIT.append(interrupt.check)

Step = Callable[[Path], dict[str, Path]]
"""A writer step: ``step(folder) -> {name: path}`` writes its outputs into ``folder`` (the set being written)."""

RUN_ID_META = "geoconstraints-run-id"
"""``<meta name=...>`` of report.html and map.html holding the run id."""

PDF_CHILD_MIN_CHARS = 50_000
"""report.pdf (and a handout PDF) of a page of at least this many characters is laid out in a
child process while the other outputs are written (:mod:`~geoconstraints.output.child`);
below it, in-process. The child costs 0.2-0.3 s of CPU more than laying out here (a second
interpreter, WeasyPrint's fonts loaded there) and saves time only while this process has other
outputs to write: a page this short (a SEQR classification: about 20,000 characters, 3 pages,
0.5 s of layout, next to nothing else to write) would wait for it. Every report with a map
(harvest, stormwater, flood-site: 120,000-800,000 characters, 1-8 s of layout) goes to the child."""

GIS_CHILD_MIN_ROWS = 50_000
"""findings.geojson and results.gpkg of at least this many rows (the findings written plus every
row of results.gpkg's layers and tables) are written by a second child process
(:mod:`~geoconstraints.output.child`) while this one writes the report, the CSVs, the Parquet files
and the map; below it, here. The tables go to the child as Arrow IPC files in a scratch folder of
the set (:data:`SCRATCH_DIR`; 100 MB for 100,000 parcels). GDAL holds the GIL while it writes
(threads would not overlap it). 100,000 parcels: 3.2 s of CPU off this process, 1.1 s more CPU in
all (the child's interpreter, pyarrow and pyogrio, the IPC files). The threshold keeps small runs
(and the tests) in-process; it was not tuned by measurement below 100,000 parcels."""

GIS_SPLIT_MIN_ROWS = 1_000_000
"""From this many rows (as :data:`GIS_CHILD_MIN_ROWS` counts them) findings.geojson and results.gpkg
are written by two child processes, one each, instead of one after the other by one: a county's
GDAL writes are then no longer the last thing the run waits for. Measured on 2 cores, whole
``screen``: 1,000,000 parcels (1.8 million rows) 42.6 s twice against 43.4-43.6 s with one child
(findings.geojson 12 s and results.gpkg 10 s of CPU, one after the other, ended ~6 s after this
process's own files), and 42.1-42.4 s against 43.6-44.1 s once the second child is begun with the
set (:meth:`~geoconstraints.output.child.Child.begin`: it imports pyarrow and pyogrio while this
process prepares the tables); 100,000 parcels (250,000 rows) 12.6-12.9 s against 12.2-12.8 s (there
the PDF is laid out last, and a third writer only takes CPU from it)."""

SCRATCH_DIR = ".scratch"
"""Hidden folder of the set's temporary folder holding the tables handed to the child; removed
before ``provenance.json`` is written, so never part of the set."""


def _inputs(result: Result) -> set[Path]:
    inputs = result.layers.input_paths() if result.layers is not None else set()
    return inputs | {Path(p).resolve() for p in result.extra_inputs.values()}


def _stamp(result: Result, scope: str) -> dict[str, Any]:
    """What every file of the set records about its run (GeoJSON member, GPKG and Parquet metadata)."""
    return {"run_id": result.run_id, "command": result.command, "rulebook": result.rulebook.name,
            "rulebook_version": str(result.rulebook.version), "run_time_utc": result.started.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "findings": scope, "provenance": outset.PROVENANCE_NAME}


def result_scope(result: Result, findings: str | None) -> str:
    """The findings scope of the files of ``result``: ``findings`` when given, else the command's
    default (:func:`~geoconstraints.rulebook.findings.findings_scope`).

    Raises
    ------
    OutputError
        ``findings`` is not ``person``/``all``, or ``all`` for a result that left findings out
        (:attr:`Result.omitted <geoconstraints.result.Result.omitted>`).
    """
    scope = findings_scope(result.command, findings)
    left = int(result.omitted["n"].sum())
    if scope == "all" and left:
        raise OutputError(f"--findings all: this {result.command} result keeps only the {result.scope} findings in "
                          f"memory ({left:,} pass/info findings were left out); rerun with "
                          f"screen_parcels(..., findings=\"all\") or `geoconstraints {result.command} --findings all`")
    return scope


def _provenance(result: Result, scope: str, outputs: frozenset[str] = ALL_OUTPUTS) -> dict[str, Any]:
    """provenance.json's content: the result's provenance (``inputs``: every layer the run read), the
    layers of its input GeoPackages it did not read (:func:`layers_not_read`), the rulebook file(s)
    applied with their SHA-256 (:func:`rulebook_files`), the findings scope, the count of every
    finding (those left out of memory included) and of those written, and the outputs chosen
    (``--outputs``, in the order of :data:`~geoconstraints.output.selection.OUTPUTS`)."""
    prov = result.provenance()
    books = rulebook_files(result.rulebook)
    prov.update(inputs_not_read=layers_not_read(result), rulebook_sha256=books[0]["sha256"] if books else "",
                rulebook_files=books, findings_scope=scope, findings_total=result.counts(),
                findings_written=status_counts(findings_in_scope(result.findings, scope)),
                outputs_chosen=[k for k in OUTPUTS if k in outputs], nfhl=flood_map_dates(result, prov["nfhl"]))
    return prov


def stamp_html(page: str, run_id: str) -> str:
    """``page`` with ``<meta name="geoconstraints-run-id" content="...">`` as the first element of its head."""
    meta = f'<meta name="{RUN_ID_META}" content="{run_id}">'
    page, n = re.subn(r"(<head\b[^>]*>)", lambda m: m.group(1) + meta, page, count=1, flags=re.IGNORECASE)
    return page if n else meta + page


def _to_child(gis: child.Child, name: str, folder: Path, layers: Iterable[files.ArrowLayer],
              finalize: Callable[[Path], Any] | None = None) -> dict[str, Path]:
    """Hand ``layers`` to the child ``gis`` to write as ``folder/name``: each table into an Arrow
    IPC file of the scratch folder, then one job; :func:`_collect_layers` finishes it. ``{}``, or the
    file written here when no child can be started."""
    import pyarrow as pa

    scratch = folder / SCRATCH_DIR
    scratch.mkdir(exist_ok=True)
    target = folder / name
    tmp = files.temp_beside(target)
    sent: list[dict[str, Any]] = []
    for table, kwargs in layers:
        path = scratch / f"{name}.{len(sent)}.arrow"
        with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
        sent.append({"table": str(path), "write": kwargs})
        del table  # one table at a time in memory
    job = gis.submit(name, target, {"kind": "layers", "into": str(tmp), "layers": sent},
                     into=tmp, finalize=finalize, scratch=[Path(x["table"]) for x in sent])
    if job is not None:
        return {}
    try:
        files.write_layers(target, [(x["table"], x["write"]) for x in sent], finalize=finalize)
    finally:
        for x in sent:
            os.unlink(x["table"])
    return {name: target}


def _collect_layers(job: child.Job, folder: Path) -> dict[str, Path]:
    """The GDAL file the child wrote (a step of :func:`write_result`): finished here (``finalize``:
    the QGIS styles) and moved in place; the child's error raised here, as an in-process writer's."""
    tmp: Path = job.params["into"]
    try:
        job.result()
        if job.params["finalize"] is not None:
            job.params["finalize"](tmp)
        os.replace(tmp, job.target)
    finally:
        files.discard_temp(tmp)
        for p in job.params["scratch"]:
            p.unlink(missing_ok=True)
    return {job.name: job.target}


def _geojson(result: Result, shown: pd.DataFrame, stamp: dict[str, Any], folder: Path,
             gis: child.Child | None = None, cache: files.WkbCache | None = None) -> dict[str, Path]:
    t = folder / "findings.geojson"
    members = {"geoconstraints": stamp}
    if gis is not None:
        return _to_child(gis, t.name, folder, files.geojson_layers(shown, members=members, cache=cache))
    return {t.name: files.write_geojson(shown, t, members=members)}


def _gpkg(result: Result, shown: pd.DataFrame, stamp: dict[str, Any], folder: Path,
          gis: child.Child | None = None, shared: files.SharedTables | None = None,
          cache: files.WkbCache | None = None) -> dict[str, Path]:
    layers: dict[str, pd.DataFrame] = dict(files.split_findings(shown))
    if result.crs is None:  # nothing has a place (a SEQR classification): no empty layer without a CRS
        layers = {k: v for k, v in layers.items() if len(v) or k == files.FINDINGS_LAYERS["none"]}
    gtypes = files.findings_geometry_types(layers)
    families = {name: fam for fam, name in files.FINDINGS_LAYERS.items() if fam != "none"}
    layers.update(result.derived)
    layers.update(result.tables)
    meta = {f"GEOCONSTRAINTS_{k.upper()}": str(v) for k, v in stamp.items()}
    t = folder / "results.gpkg"
    finalize = partial(styles.add_layer_styles, layers=layers, families=families, wait_for_disk=False)
    wkb = _parcels_wkb(result, shared)
    if gis is not None:
        prepared = files.gpkg_layers(layers, crs=result.crs, geometry_types=gtypes, metadata=meta, wkb=wkb,
                                     cache=cache)
        try:
            return _to_child(gis, t.name, folder, prepared, finalize)
        finally:
            if cache is not None:  # its last user (findings.geojson is handed over before)
                cache.clear()
    files.write_gpkg(layers, t, crs=result.crs, geometry_types=gtypes, metadata=meta, finalize=finalize, wkb=wkb)
    return {t.name: t}


def _parcels_wkb(result: Result, shared: files.SharedTables | None) -> dict[str, Any]:
    """The parcels layer's geometry as parcels.parquet encodes it (``shared``), for results.gpkg."""
    parcels = result.tables.get("parcels")
    if shared is None or not isinstance(parcels, gpd.GeoDataFrame) or parcels.geometry.name not in parcels:
        return {}
    return {"parcels": shared.geoparquet(parcels).column(parcels.geometry.name)}


def _collect(result: Result, s: outset.OutputSet, pdf: child.Child, gis: list[child.Child | None],
             parcel: str | None) -> dict[str, Path]:
    """The files the children wrote, each a step of the set (the GIS files first: handed over
    later, done sooner); then the scratch folder goes, so it is never part of the set."""
    written: dict[str, Path] = {}
    for job in [j for c in gis if c is not None for j in c.jobs]:
        written.update(s.step(job.name, partial(_collect_layers, job)))
    for job in pdf.jobs:
        handout = parcel if job.params["max_pages"] is not None else None
        written.update(s.step(job.name, partial(_collect_pdf, result, job, handout)))
    shutil.rmtree(s.folder / SCRATCH_DIR, ignore_errors=True)
    return written


def gis_rows(result: Result, scope: str, outputs: str | Iterable[str] | None = None) -> int:
    """Rows findings.geojson and results.gpkg would hold, as far as ``outputs`` has them (default every
    output): the findings written (in each: the GeoJSON and the GeoPackage's findings layers) and every
    derived layer's and table's in the GeoPackage (see :data:`GIS_CHILD_MIN_ROWS`)."""
    chosen = select_outputs(outputs)
    frames = [*result.derived.values(), *result.tables.values()] if "gpkg" in chosen else []
    return (len(chosen & {"geojson", "gpkg"}) * len(findings_in_scope(result.findings, scope))
            + sum(len(f) for f in frames if f is not None))


def _csvs(result: Result, shown: pd.DataFrame, folder: Path) -> dict[str, Path]:
    out = {"findings.csv": files.write_csv(shown, folder / "findings.csv")}
    for name, table in result.tables.items():
        out[f"{name}.csv"] = files.write_csv(table, folder / f"{name}.csv")
    return out


def _parquet(result: Result, shown: pd.DataFrame, stamp: dict[str, Any], folder: Path,
             shared: files.SharedTables | None = None) -> dict[str, Path]:
    """findings.parquet and one (Geo)Parquet file per table, as the CSVs (parcels.parquet: its table built once
    with results.gpkg's parcels layer, ``shared``)."""
    out = {"findings.parquet": files.write_parquet(shown, folder / "findings.parquet", metadata=stamp)}
    for name, df in result.tables.items():
        table = shared.release(df) if shared is not None and name == "parcels" else None
        out[f"{name}.parquet"] = files.write_parquet(df, folder / f"{name}.parquet", metadata=stamp, table=table)
    return out


def _html(result: Result, name: str, folder: Path, pdf: child.Child | None = None, *,
          outputs: frozenset[str] = ALL_OUTPUTS, **kw: Any) -> dict[str, Path]:
    """report.html (or a parcel's handout) and the same report laid out as a PDF beside it: by
    the child process ``pdf`` when given and the page is long enough (collected by
    :func:`_collect_pdf`), else here. ``outputs`` without ``report``: the PDF only (a handout is
    written whenever asked for); without ``pdf``: no PDF."""
    page = stamp_html(report.render_report(result, outputs=outputs, **kw), result.run_id)
    parcel = kw.get("parcel")
    out = {name: files.write_text(folder / name, page)} if parcel is not None or "report" in outputs else {}
    if "pdf" not in outputs:
        return out
    pdf_name = report.parcel_pdf_name(parcel) if parcel is not None else name[: -len(".html")] + ".pdf"
    max_pages = None if parcel is None else 1  # the handout must fit one page
    # a handout the child finds over one page is rendered again here, as this one was (_collect_pdf)
    again = {"outputs": outputs, **{k: v for k, v in kw.items() if k != "parcel"}}
    if (pdf is not None and len(page) >= PDF_CHILD_MIN_CHARS
            and pdf.submit(pdf_name, folder / pdf_name, {"kind": "pdf", "page": page, "max_pages": max_pages},
                           max_pages=max_pages, render=again)):
        return out
    try:
        out[pdf_name] = (report.write_report_pdf(result, folder / pdf_name, parcel=parcel, **again) if parcel is not None
                         else report.write_report_pdf(result, folder / pdf_name, outputs=outputs, page=page))
    except MissingToolError as exc:  # the GIS outputs matter more than a print layout
        log.warning("%s not written: %s", pdf_name, exc)
    return out


def _collect_pdf(result: Result, job: child.Job, parcel: str | None, folder: Path) -> dict[str, Path]:
    """The PDF the child laid out (a step of :func:`write_result`): its error raised here, as an
    in-process writer's would be; WeasyPrint or pango missing there: a warning and no PDF."""
    try:
        answer = job.result()
        if "missing" in answer:
            raise report.pdf_tool_missing(*answer["missing"])
        if not answer["written"]:  # a handout over one page: shortened and laid out again, here (its notes
            # naming the files of this set: the same outputs and findings scope)
            report.write_report_pdf(result, job.target, parcel=parcel, handout_step=1, **job.params.get("render", {}))
    except MissingToolError as exc:  # the GIS outputs matter more than a print layout
        log.warning("%s not written: %s", job.name, exc)
        return {}
    return {job.name: job.target}


def _map(result: Result, folder: Path, *, offline: bool, **kw: Any) -> dict[str, Path]:
    t = webmap.write_map(result, folder / "map.html", offline=offline,
                         finish=partial(stamp_html, run_id=result.run_id), **kw)
    return {"map.html": t}


def file_steps(result: Result, *, scope: str, offline: bool = True, parcel: str | None = None,
               map_max_features: int | None = None, report_max_parcels: int | None = None,
               report_max_findings: int | None = None, outputs: str | Iterable[str] | None = None,
               pdf: child.Child | None = None, gis: child.Child | None = None,
               gpkg: child.Child | None = None) -> list[tuple[str, Step]]:
    """The writer steps of :func:`write_result`, in order: ``(name, step)``, ``name`` being the
    file a failure is reported against; only those of ``outputs``
    (:func:`~geoconstraints.output.selection.select_outputs`, default every one; a ``parcel``
    handout always). The report comes first: with ``pdf`` (the child process
    laying out report.pdf), its PDF is laid out while the steps after it run; with ``gis`` (the
    child process writing GDAL files), findings.geojson and results.gpkg come first, handed to it
    and written while the report, the CSVs, the Parquet files and the map are written here; with
    ``gpkg`` as well (a county's set, :data:`GIS_SPLIT_MIN_ROWS`), results.gpkg goes to that second
    child, so both GDAL files are written at once. The jobs of all are collected by
    :func:`write_result` after the steps."""
    # the findings of the files; the report and the map list and count them (a --parcel screening keeps
    # every finding in memory for the handout)
    written = result.as_written(scope)
    shown = written.findings
    stamp = _stamp(result, scope)
    limits: dict[str, Any] = {}
    if report_max_parcels is not None:
        limits["max_parcel_rows"] = int(report_max_parcels)
    if report_max_findings is not None:
        limits["max_finding_rows"] = int(report_max_findings)
    map_kw: dict[str, Any] = {} if map_max_features is None else {"max_features": int(map_max_features)}
    o = select_outputs(outputs)
    reports: list[tuple[str, Step]] = []
    if o & {"report", "pdf"}:
        name = "report.html" if "report" in o else "report.pdf"
        reports.append((name, partial(_html, written, "report.html", pdf=pdf, outputs=o, **limits)))
    if parcel is not None:  # the one-parcel report a clerk hands to the owner
        name = report.parcel_report_name(parcel)
        reports.append((name, partial(_html, result, name, pdf=pdf, parcel=parcel, outputs=o, scope=scope)))
    # the parcels encoded once, for results.gpkg and parcels.parquet; each geometry of the findings once,
    # for findings.geojson and results.gpkg's layers (the findings and derived layers share them)
    shared = files.SharedTables() if {"gpkg", "parquet"} <= o else None
    cache = files.WkbCache() if gis is not None and "gpkg" in o else None
    gis_files: list[tuple[str, Step]] = []
    if "geojson" in o:
        gis_files.append(("findings.geojson", partial(_geojson, result, shown, stamp, gis=gis, cache=cache)))
    if "gpkg" in o:
        gis_files.append(("results.gpkg", partial(_gpkg, result, shown, stamp, gis=gpkg or gis, shared=shared,
                                                  cache=cache)))
    # the GIS child's files take longest (GDAL, seconds per million rows): handed to it first, so it
    # writes them while the reports and the rest are written here
    steps = [*gis_files, *reports] if gis is not None else [*reports, *gis_files]
    if "csv" in o:
        steps.append(("findings.csv", partial(_csvs, result, shown)))
    if "parquet" in o:
        steps.append(("findings.parquet", partial(_parquet, result, shown, stamp, shared=shared)))
    if "map" in o:
        steps.append(("map.html", partial(_map, written, offline=offline, outputs=o, **map_kw)))
    if result.command == "harvest" and "field" in o:  # landings, water bars and crossings for the crews' GPS
        steps.append(("field.kml", partial(field.write_field_files, result)))
    if "plots" in o:
        steps.append((plots.PLOTS_DIR, partial(plots.write_plots, result)))
    return steps


def write_result(result: Result, out_dir: str | os.PathLike[str], *, offline: bool = True,
                 parcel: str | None = None, map_max_features: int | None = None,
                 report_max_parcels: int | None = None, report_max_findings: int | None = None,
                 findings: str | None = None, overwrite: bool = False,
                 steps: Sequence[tuple[str, Step]] = (), outputs: str | Iterable[str] | None = None,
                 progress: outset.Progress | None = None) -> dict[str, Path]:
    """Write every output of ``result`` into ``out_dir`` as one set; return name -> path.

    The set: ``findings.geojson`` (RFC 7946), ``findings.csv`` and ``findings.parquet``
    (GeoParquet), ``results.gpkg`` (findings in ``findings_point``, ``findings_line``,
    ``findings_polygon`` and the table ``findings_nogeom``, every derived layer and table, each
    with a default QGIS style), one ``<table>.csv`` and one ``<table>.parquet`` per table
    (``parcels.csv``, ``parcels.parquet`` ...), ``report.html`` and ``map.html`` (with ``parcel``, also
    ``report_parcel_<id>.html``), ``field.kml`` / ``field.gpx`` for a harvest check,
    ``plots/*.png`` when a plot applies, and ``provenance.json`` (the run id, the provenance,
    every file with its size and SHA-256). Every file records the run id
    (:attr:`Result.run_id`).

    All or nothing: the set is written into a folder beside ``out_dir`` and swapped in only
    when complete; on any failure ``out_dir`` is left as it was. One run at a time per folder.
    The PDFs are laid out in a child process while the other files are written
    (:data:`PDF_CHILD_MIN_CHARS`), and a big run's findings.geojson and results.gpkg are written
    by a second one (:data:`GIS_CHILD_MIN_ROWS`); both are killed first if the run fails or is
    interrupted.

    Parameters
    ----------
    result : Result
    out_dir : path
        The folder (created if missing). A folder holding files that no earlier run of
        geoconstraints wrote is refused (never emptied); one holding an earlier run's set is
        refused unless ``overwrite``.
    offline : bool
        map.html with Leaflet inlined (default) or from a CDN.
    parcel : str, optional
        Also write the one-parcel report of this parcel id (its findings as ``result`` holds them:
        screen it with ``findings="all"``, as the CLI's ``--parcel`` does, for its pass and info ones).
    map_max_features, report_max_parcels, report_max_findings : int, optional
        For a whole town or county the report and the map summarise, and say so: at most
        ``report_max_parcels`` rows of the parcels table and ``report_max_findings`` non-pass
        findings per rule in report.html (defaults :data:`geoconstraints.output.report.MAX_PARCEL_ROWS`,
        :data:`~geoconstraints.output.report.MAX_FINDING_ROWS`), at most ``map_max_features``
        features in map.html (default :data:`geoconstraints.output.webmap.MAX_FEATURES`).
    findings : {"person", "all"}, optional
        Which findings findings.geojson/.csv/.parquet and the findings layers carry: ``person``
        (violation, review, not_evaluated) or ``all`` (pass and info too). Default
        :func:`~geoconstraints.rulebook.findings.findings_scope`: ``person`` for ``screen`` (every
        outcome is in the parcels table's ``status_<rule>`` columns), ``all`` for the plan-level
        commands. The report's counts and provenance.json's ``findings_total`` are always of every
        finding (those a screening left out of memory included, :attr:`Result.omitted
        <geoconstraints.result.Result.omitted>`); ``all`` needs a result that kept every finding
        (``screen_parcels(..., findings="all")``).
    overwrite : bool
        Replace the set of an earlier run in ``out_dir`` (the whole set: nothing of it stays).
    steps : sequence of (name, step)
        More writer steps, run after the files and before the set is swapped in (a failure
        leaves ``out_dir`` unchanged); ``step(folder) -> {name: path}``. The hook for
        writers beyond the files (a database).
    outputs : str or iterable of str, optional
        The files to write (:func:`~geoconstraints.output.selection.select_outputs`: ``geojson``,
        ``gpkg``, ``csv``, ``parquet``, ``report``, ``pdf``, ``map``, ``plots``, ``field``, as names
        or comma-separated text); default every one. ``provenance.json`` is always written and
        records them; the notes of the report and the map name only files written.
    progress : Progress, optional
        Follows the writers (:class:`~geoconstraints.output.outset.Progress`; the CLI's progress bar
        and ``-v``): ``expect(n)`` once, then each file's writer step runs inside ``with
        progress(name) as item:`` and sets ``item.wrote`` to the files it wrote and those it handed to a
        child process (:func:`~geoconstraints.output.outset.written_label`), and last the wait for the
        files the child processes write (:func:`child_files_item`). The ``steps`` run outside it.

    Raises
    ------
    OutputError
        An unknown or insufficient ``outputs`` (one of gpkg, parquet, csv is needed);
        ``findings="all"`` for a result that left findings out (rerun with
        ``screen_parcels(..., findings="all")``), ``out_dir`` refused (see above), another run writing
        it, an unknown parcel id, a full disk ("no space left on device writing PATH") or another
        write error; ``out_dir`` is then unchanged.
    """
    if parcel is not None:
        report.parcel_row(result, str(parcel))  # an unknown parcel id fails before anything is written
    chosen = select_outputs(outputs)
    scope = result_scope(result, findings)
    prov = _provenance(result, scope, chosen)
    kw: dict[str, Any] = {"offline": offline, "parcel": parcel, "map_max_features": map_max_features,
                          "report_max_parcels": report_max_parcels, "report_max_findings": report_max_findings,
                          "outputs": chosen}
    rows = gis_rows(result, scope, chosen)
    gis = (contextlib.nullcontext() if rows < GIS_CHILD_MIN_ROWS
           else child.Child("writing the GIS files", kind="layers"))
    gpkg = (child.Child("writing results.gpkg", kind="layers")
            if rows >= max(GIS_SPLIT_MIN_ROWS, GIS_CHILD_MIN_ROWS) and {"geojson", "gpkg"} <= chosen
            else contextlib.nullcontext())
    written: dict[str, Path] = {}
    with outset.output_set(out_dir, _inputs(result), overwrite=overwrite, run_id=result.run_id,
                           provenance=prov) as s, child.Child() as pdf, gis as gis_child, gpkg as gpkg_child:
        if gpkg_child is not None:
            gpkg_child.begin()  # its imports run while this process prepares findings.geojson and results.gpkg
        writers = file_steps(result, scope=scope, pdf=pdf, gis=gis_child, gpkg=gpkg_child, **kw)
        if progress is not None:
            progress.expect(len(writers) + 1)  # and the wait for the children's files
        children = [c for c in (pdf, gis_child, gpkg_child) if c is not None]
        for name, step in writers:
            with outset.progress_item(progress, name) as item:
                before = [len(c.jobs) for c in children]
                got = s.step(name, step)
                item.wrote = outset.written_label(
                    got, [j.name for c, n in zip(children, before) for j in c.jobs[n:]])
                written.update(got)
        for name, step in steps:
            written.update(s.step(name, step))
        with outset.progress_item(progress, child_files_item([pdf, gis_child, gpkg_child])):
            written.update(_collect(result, s, pdf, [gis_child, gpkg_child], parcel))
        s.provenance.update(changed_during_run(result, s.provenance["inputs"]))  # now, as provenance.json is written
    written[outset.PROVENANCE_NAME] = s.folder / outset.PROVENANCE_NAME
    return {name: s.final(path) for name, path in written.items()}


def child_files_item(children: Iterable[child.Child | None]) -> str:
    """The name of the last item of :func:`write_result`'s progress: the wait for the files the
    child processes write.

    Examples
    --------
    >>> child_files_item([None])
    'waiting for the child processes (no files)'
    """
    names = [j.name for c in children if c is not None for j in c.jobs]
    return f"waiting for the child processes ({', '.join(names) or 'no files'})"


def prestart_writers(parcels: int, outputs: str | Iterable[str] | None = None) -> bool:
    """Start the child processes of :func:`write_result` now when a run of ``parcels`` parcels will
    use them (at least :data:`GIS_CHILD_MIN_ROWS`: results.gpkg then holds that many rows, and the
    report has its overview map, so its PDF is laid out by a child): their libraries are imported
    while the parcels are checked instead of after (:func:`geoconstraints.output.child.prestart`;
    0.6-0.8 s each). Only those ``outputs`` needs (:func:`~geoconstraints.output.selection.select_outputs`;
    default every output): the PDF's for ``pdf``, the GIS files' for ``geojson`` or ``gpkg``. True
    when every one needed started; :func:`geoconstraints.output.child.discard_spares` ends them if
    the run stops before writing."""
    if parcels < GIS_CHILD_MIN_ROWS:
        return False
    chosen = select_outputs(outputs)
    kinds = [k for k, needs in (("pdf", {"pdf"}), ("layers", {"geojson", "gpkg"})) if chosen & needs]
    started = [child.prestart(kind) for kind in kinds]  # every one, even if one cannot start
    return all(started)


def explore(result: Result, **kwargs: Any) -> Any:
    """An interactive folium map of the inputs, derived layers and findings (for notebooks)."""
    return webmap.build_map(result, **kwargs)


__all__ = ["explore", "file_steps", "gis_rows", "prestart_writers", "stamp_html", "write_result"]
