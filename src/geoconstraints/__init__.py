"""geoconstraints: a linter for land.

Checks GIS layers (parcels, FEMA flood zones, streams, harvest plans, disturbance plans,
DEMs) against municipal flood, stream-corridor, timber-harvest and stormwater law, and
reports findings with citations and the exact place on the map.

Quick start (Jupyter)::

    import geoconstraints as gc
    layers = gc.load_layers(gc.sample_path("vestal_sample.gpkg"), dem=gc.sample_path("dem.tif"))
    result = gc.check_harvest(layers, gc.load_rulebook("vestal"))
    result.findings          # GeoDataFrame, one row per finding
    result.explore()         # interactive map
    result.write("out/")     # findings.geojson, results.gpkg, report.html, map.html
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("geoconstraints")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.1.0+src"

from .errors import GeoConstraintsError
from .findings import FINDING_COLUMNS, STATUSES, Finding
from .layers import ROLES, Layers, load_layers
from .rules import Rule, Rulebook, available_rulebooks, load_rulebook
from .sample import sample_path


def __getattr__(name: str):  # lazy: domain modules import heavier things
    lazy = {
        "check_harvest": ("harvest", "check_harvest"),
        "screen_parcels": ("flood", "screen_parcels"),
        "check_site": ("flood", "check_site"),
        "check_stormwater": ("stormwater", "check_stormwater"),
        "classify_action": ("seqr", "classify_action"),
        "Result": ("result", "Result"),
        "open_dem": ("terrain", "open_dem"),
    }
    if name in lazy:
        import importlib

        mod, attr = lazy[name]
        return getattr(importlib.import_module(f".{mod}", __name__), attr)
    raise AttributeError(f"module 'geoconstraints' has no attribute {name!r}")


__all__ = [
    "FINDING_COLUMNS",
    "ROLES",
    "STATUSES",
    "Finding",
    "GeoConstraintsError",
    "Layers",
    "Rule",
    "Rulebook",
    "__version__",
    "available_rulebooks",
    "check_harvest",
    "check_site",
    "check_stormwater",
    "classify_action",
    "load_layers",
    "load_rulebook",
    "open_dem",
    "sample_path",
    "screen_parcels",
]
