"""A DEM too coarse for a rule's ``pass``: the texts the rules with a ``max_dem_cell_ft`` share.

A DEM cell holds one elevation for its whole width, so a grid coarser than the shortest stretch of
ground a rule's pass rests on can hide it (HRV-010's steep run, HRV-030's water-bar stretch,
SWP-002's ditch out of a closed depression). Whether a DEM's cell (:attr:`~geoconstraints.io.dem.Dem.max_cell_size_ft`,
the larger side in feet) is within a rule's ``max_dem_cell_ft`` is :func:`~geoconstraints.units.cell_within`;
over it a pass is ``not_evaluated`` (:func:`coarse_pass_detail`: the cell size, the limit, what the
coarse grid showed and :data:`FINER_DEM`), and a violation or review found stays, saying the cell
size (:func:`coarse_cell_note`). FLD-004 words both sentences in its own phrases (``coarse_cells``,
``coarse_pass``: its fix is a finer pre-construction DEM or one from a survey of the site), the cell written by
:func:`cell_text` as here.
"""

from __future__ import annotations

from geoconstraints.rulebook.model import Rule
from geoconstraints.rulebook.render import fmt_num

FINER_DEM = ("give a finer DEM: USGS 3DEP 1 m lidar (about 3.3 ft cells) where it exists, else the 3DEP 1/3 "
             "arc-second DEM (10 m cells)")
"""The fix named when a pass is not evaluated on a DEM coarser than a rule's ``max_dem_cell_ft``."""


def cell_text(cell_ft: float) -> str:
    """A DEM cell's size (the larger side, feet) as the sentences of a coarse DEM write it.

    Examples
    --------
    >>> cell_text(1000.0), cell_text(32.80833), cell_text(float("inf"))
    ('1,000.0', '32.8', 'inf')
    """
    return f"{cell_ft:,.1f}"


def coarse_cell_note(cell_ft: float, rule: Rule, what: str) -> str:
    """The sentence added to a finding made on DEM cells of ``cell_ft`` (the larger side, feet), over the
    rule's ``max_dem_cell_ft`` (a violation or a review stays: what is found is found, but ``what`` it
    measured is the coarse grid's).

    Examples
    --------
    >>> from geoconstraints.rulebook.loader import load_rulebook
    >>> coarse_cell_note(98.4, load_rulebook("vestal")["HRV-010"], "the grades and lengths are those of the coarse grid")
    'measured on DEM cells of 98.4 ft, coarser than the 50 ft limit (max_dem_cell_ft): the grades and lengths are those of the coarse grid'
    """
    return (f"measured on DEM cells of {cell_text(cell_ft)} ft, coarser than the "
            f"{fmt_num(rule.t('max_dem_cell_ft'))} ft limit (max_dem_cell_ft): {what}")


def coarse_pass_detail(cell_ft: float, rule: Rule, hidden: str, found: str) -> str:
    """Why a pass found on DEM cells of ``cell_ft`` (the larger side, feet), over the rule's
    ``max_dem_cell_ft``, is not evaluated: the cell size, the limit, what such a cell can hide
    (``hidden``), what the coarse grid showed (``found``) and the fix (:data:`FINER_DEM`).

    Examples
    --------
    >>> from geoconstraints.rulebook.loader import load_rulebook
    >>> print(coarse_pass_detail(1000.0, load_rulebook("vestal")["HRV-010"],
    ...                          "a steep stretch of 200 ft can be flattened out of sight", "max grade 0.0 %"))
    the DEM's cells are 1,000.0 ft (the larger of their width and height), over the 50 ft a pass needs (max_dem_cell_ft): each cell holds one elevation for its whole width, so a steep stretch of 200 ft can be flattened out of sight; the coarse grid showed: max grade 0.0 %; give a finer DEM: USGS 3DEP 1 m lidar (about 3.3 ft cells) where it exists, else the 3DEP 1/3 arc-second DEM (10 m cells)
    """
    return (f"the DEM's cells are {cell_text(cell_ft)} ft (the larger of their width and height), over the "
            f"{fmt_num(rule.t('max_dem_cell_ft'))} ft a pass needs (max_dem_cell_ft): each cell holds one elevation "
            f"for its whole width, so {hidden}; the coarse grid showed: {found}; {FINER_DEM}")
