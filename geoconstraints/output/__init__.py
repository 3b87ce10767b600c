"""Outputs of a run: files (GeoJSON, GeoPackage with QGIS styles, CSV), the report and the web map.

:func:`write_result` writes the whole set for a :class:`~geoconstraints.result.Result`;
:func:`explore` gives the interactive map in a notebook.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd

from geoconstraints.output import files, report, styles, webmap
from geoconstraints.result import Result


def write_result(result: Result, out_dir: str | os.PathLike[str], *, offline: bool = True,
                 parcel: str | None = None, map_max_features: int | None = None,
                 report_max_parcels: int | None = None,
                 report_max_findings: int | None = None) -> dict[str, Path]:
    """Write every output of ``result`` into ``out_dir`` atomically; return name -> path.

    ``findings.geojson`` (every finding), ``results.gpkg`` (every finding, derived layer
    and table, with QGIS styles), one CSV per table, ``report.html`` and ``map.html``;
    with ``parcel``, also the one-parcel report ``report_parcel_<id>.html``. The folder
    is created if missing; an input is never overwritten.

    For a whole town or county the report and the map summarise, and say so: at most
    ``report_max_parcels`` rows of the parcels table and ``report_max_findings``
    non-pass findings per rule in report.html (defaults
    :data:`geoconstraints.output.report.MAX_PARCEL_ROWS`,
    :data:`~geoconstraints.output.report.MAX_FINDING_ROWS`), at most ``map_max_features``
    features in map.html (default :data:`geoconstraints.output.webmap.MAX_FEATURES`).
    """
    if parcel is not None:
        report.parcel_row(result, str(parcel))  # an unknown parcel id fails before anything is written
    inputs = result.layers.input_paths() if result.layers is not None else set()
    inputs |= {Path(p).resolve() for p in result.extra_inputs.values()}
    out = files.prepare_out_dir(out_dir, inputs)
    written: dict[str, Path] = {}

    def target(name: str) -> Path:
        t = out / name
        files.guard_target(t, inputs)
        return t

    written["findings.geojson"] = files.write_geojson(result.findings, target("findings.geojson"))
    gpkg_layers: dict[str, pd.DataFrame] = {"findings": result.findings}
    gpkg_layers.update(result.derived)
    gpkg_layers.update(result.tables)
    written["results.gpkg"] = files.write_gpkg(
        gpkg_layers, target("results.gpkg"), crs=result.crs,
        finalize=lambda tmp: styles.add_layer_styles(tmp, gpkg_layers))
    for name, table in result.tables.items():
        written[f"{name}.csv"] = files.write_csv(table, target(f"{name}.csv"))
    limits: dict[str, Any] = {}
    if report_max_parcels is not None:
        limits["max_parcel_rows"] = int(report_max_parcels)
    if report_max_findings is not None:
        limits["max_finding_rows"] = int(report_max_findings)
    written["report.html"] = files.write_text(target("report.html"), report.render_report(result, **limits))
    if parcel is not None:  # the one-parcel report a clerk hands to the owner
        name = report.parcel_report_name(parcel)
        written[name] = files.write_text(target(name), report.render_report(result, parcel=parcel))
    map_kw = {} if map_max_features is None else {"max_features": int(map_max_features)}
    written["map.html"] = webmap.write_map(result, target("map.html"), offline=offline, **map_kw)
    return written


def explore(result: Result, **kwargs: Any) -> Any:
    """An interactive folium map of the inputs, derived layers and findings (for notebooks)."""
    return webmap.build_map(result, **kwargs)


__all__ = ["explore", "write_result"]
