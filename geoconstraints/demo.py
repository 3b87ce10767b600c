"""The demo: every capability on the bundled sample town, outputs written side by side.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from functools import partial
from pathlib import Path

from geoconstraints.commands import (
    check_harvest,
    check_site,
    check_stormwater,
    classify_action,
    screen_parcels,
)
from geoconstraints.io.layers import load_layers
from geoconstraints.io.sample import sample_path
from geoconstraints.output import write_result as _write_result
from geoconstraints.output.siteplan import SITEPLAN_NAME, write_siteplan
from geoconstraints.rulebook.loader import load_rulebook

log = logging.getLogger(__name__)


def _line(name: str, result, folder: Path) -> str:
    counts = ", ".join(f"{n} {s}" for s, n in result.counts().items() if n) or "no findings"
    return f"{name:<11} {result.n_findings:>5} findings ({counts}) -> {folder}"


def run_demo(out_dir: Path) -> Iterator[str]:
    """Run harvest (with the site plan PDF), screen (with the preliminary-map comparison),
    flood-site, stormwater and seqr on the sample town; yield one line per capability naming its
    output folder.

    Each capability's folder is one output set; an earlier demo's set there is replaced (a
    folder holding anything else is refused, see :func:`geoconstraints.output.write_result`).
    """
    write_result = partial(_write_result, overwrite=True)

    gpkg = sample_path("vestal_sample.gpkg")
    dem = sample_path("dem.tif")
    vestal = load_rulebook("vestal")
    out_dir = Path(out_dir)
    yield f"sample town: {gpkg.parent} (synthetic data near Vestal, NY; see its README.md)"

    layers = load_layers(gpkg, dem=dem, primary=("harvest_area",),
                         roles=("harvest_area", "landings", "haul_roads", "skid_trails", "streams",
                                "roads", "row", "parcels", "zoning", "dwellings", "critical_slopes",
                                "stream_corridor"))
    res = check_harvest(layers, vestal)
    # the site plan for filing (`geoconstraints siteplan`) is written into the harvest set
    harvest = res
    write_result(res, out_dir / "harvest",
                 steps=[(SITEPLAN_NAME, lambda folder: {SITEPLAN_NAME: write_siteplan(harvest, folder)[0]})])
    yield _line("harvest", res, out_dir / "harvest") + f" (with {SITEPLAN_NAME})"

    layers = load_layers(gpkg, dem=dem, roles=("parcels", "flood_zones", "flood_zones_preliminary",
                                               "bfe_lines", "streams", "stream_corridor",
                                               "critical_slopes", "zoning"))
    res = screen_parcels(layers, vestal, findings="all")  # a small town: every finding in memory, as before
    write_result(res, out_dir / "screen")
    yield _line("screen", res, out_dir / "screen")

    layers = load_layers(gpkg, dem=dem, primary=("footprints",),
                         roles=("footprints", "parcels", "flood_zones", "bfe_lines", "streams"))
    res = check_site(layers, vestal, use="residential", lowest_floor_ft=848.0)
    write_result(res, out_dir / "flood-site")
    yield _line("flood-site", res, out_dir / "flood-site")

    layers = load_layers(gpkg, dem=dem, roles=("disturbance", "impaired_waters", "landings", "haul_roads"),
                         primary=("disturbance",))
    res = check_stormwater(layers, vestal, rainfall=sample_path("rainfall.csv"),
                           inspection_log=sample_path("inspection_log.csv"))
    write_result(res, out_dir / "stormwater")
    yield _line("stormwater", res, out_dir / "stormwater")

    res = classify_action(vestal, action_type="small_subdivision", lots=12, chapter_24=True)
    write_result(res, out_dir / "seqr")
    yield _line("seqr", res, out_dir / "seqr")
    yield (f"open {out_dir / 'harvest' / 'report.html'} or {out_dir / 'screen' / 'map.html'} in a browser; "
           f"results.gpkg opens styled in QGIS")

