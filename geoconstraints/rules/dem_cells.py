"""A DEM too coarse for a rule's ``pass``: the texts the rules with a ``max_dem_cell_ft`` share.

A DEM cell holds one elevation for its whole width, so a grid coarser than the shortest stretch of
ground a rule's pass rests on can hide it (HRV-010's steep run, HRV-030's water-bar stretch,
SWP-002's ditch out of a closed depression). Whether a DEM's cell (:attr:`~geoconstraints.io.dem.Dem.max_cell_size_ft`,
the larger side in feet) is within a rule's ``max_dem_cell_ft`` is :func:`~geoconstraints.units.cell_within`;
over it a pass is ``not_evaluated`` (each rule's phrase ``coarse_pass``: the cell size, the limit, what the
coarse grid showed and the fix, its phrase ``finer_dem`` with :data:`FINER_DEM_NAMES`), and a violation or
review found stays, saying the cell size (its phrase ``coarse_cells``). FLD-004's fix is a finer
pre-construction DEM or one from a survey of the site. The cell is written by :func:`cell_text`.
"""

from __future__ import annotations

FINER_DEM_NAMES: dict[str, str] = {"dataset": "3DEP", "lidar_m": "1", "arc": "1/3", "arc_cell_m": "10"}
"""The names in a rule's phrase ``finer_dem`` (the fix named when a pass is not evaluated on a DEM coarser
than its ``max_dem_cell_ft``): the USGS dataset (3DEP), its lidar DEM of 1 m and its DEM of 1/3 arc-second
(10 m cells). A product's name and cell, not thresholds: given as values, so the phrase holds no number the
rule's thresholds also write (HRV-010's 3 cells, HRV-002's 10 ft, SWP-002's 1 ft depression)."""


def cell_text(cell_ft: float) -> str:
    """A DEM cell's size (the larger side, feet) as the sentences of a coarse DEM write it.

    Examples
    --------
    >>> cell_text(1000.0), cell_text(32.80833), cell_text(float("inf"))
    ('1,000.0', '32.8', 'inf')
    """
    return f"{cell_ft:,.1f}"
