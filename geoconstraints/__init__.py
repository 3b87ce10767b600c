"""geoconstraints: a linter for land.

Checks GIS layers (parcels, FEMA flood zones, streams, harvest plans, disturbance plans,
DEMs) against municipal flood, stream-corridor, timber-harvest and stormwater law, and
reports findings with citations and the exact place on the map.

The package's folders are the data flow::

    io/        inputs by role -> GeoDataFrames in one working CRS in feet, DEM with z units
    rulebook/  rules as data (YAML), the check registry, findings and their messages
    geometry/  rule-agnostic engines: overlay, BFE, buffers, terrain, phasing
    rules/     the @check functions, one per rule id
    result.py  the Result of a run and its provenance
    commands.py  screen, site, harvest, stormwater, seqr: each returns a Result
    output/    files, QGIS styles, report, overview map, web map
    cli.py     the command line (click only)

Quick start (Jupyter)::

    import geoconstraints as gc
    layers = gc.load_layers(gc.sample_path("vestal_sample.gpkg"), dem=gc.sample_path("dem.tif"))
    # or role by role, paths or GeoDataFrames (never modified): gc.load_layers(parcels=gdf, ids={"parcels": "LOC_ID"})
    result = gc.check_harvest(layers, gc.load_rulebook("vestal"))
    result.findings                 # GeoDataFrame, one row per finding
    gc.explore(result)              # interactive map
    gc.write_result(result, "out/")  # findings.geojson, results.gpkg, report.html, map.html
"""

from __future__ import annotations

import importlib
from typing import Any

from geoconstraints._version import __version__
from geoconstraints.errors import GeoConstraintsError

_LAZY = {
    "FINDING_COLUMNS": "geoconstraints.rulebook.findings",
    "STATUSES": "geoconstraints.rulebook.findings",
    "ROLES": "geoconstraints.io.roles",
    "Layers": "geoconstraints.io.layers",
    "load_layers": "geoconstraints.io.layers",
    "open_dem": "geoconstraints.io.dem",
    "sample_path": "geoconstraints.io.sample",
    "Rule": "geoconstraints.rulebook.model",
    "Rulebook": "geoconstraints.rulebook.model",
    "available_rulebooks": "geoconstraints.rulebook.loader",
    "load_rulebook": "geoconstraints.rulebook.loader",
    "Result": "geoconstraints.result",
    "check_harvest": "geoconstraints.commands",
    "screen_parcels": "geoconstraints.commands",
    "check_site": "geoconstraints.commands",
    "check_stormwater": "geoconstraints.commands",
    "classify_action": "geoconstraints.commands",
    "write_result": "geoconstraints.output",
    "explore": "geoconstraints.output",
}


def __getattr__(name: str) -> Any:  # PEP 562: heavy modules load on first use
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'geoconstraints' has no attribute {name!r}")


def __dir__() -> list[str]:  # tab completion lists the lazy API too
    return sorted(__all__)


__all__ = [
    "FINDING_COLUMNS", "ROLES", "STATUSES", "GeoConstraintsError", "Layers", "Result", "Rule",
    "Rulebook", "__version__", "available_rulebooks", "check_harvest", "check_site", "check_stormwater",
    "classify_action", "explore", "load_layers", "load_rulebook", "open_dem", "sample_path", "screen_parcels",
    "write_result",
]
