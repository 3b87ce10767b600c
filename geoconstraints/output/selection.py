"""Which files of the output set a run writes (``--outputs``), and which of them hold what.

Every run writes the whole set by default. A county screening that only needs, say, the
GeoPackage and the report can leave the rest out (``--outputs gpkg,report``): GDAL's RFC 7946
GeoJSON alone is 12 s of CPU for a million parcels. ``provenance.json`` is always written, and
every selection keeps at least one file holding every finding and every table (:data:`TABLE_OUTPUTS`),
so nothing is left out silently: the report's and the map's notes name only files of the set
(:class:`Holders`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from geoconstraints.errors import OutputError
from geoconstraints.text import and_list

OUTPUTS: dict[str, str] = {
    "geojson": "findings.geojson",
    "gpkg": "results.gpkg (findings, derived layers and tables, with QGIS styles)",
    "csv": "findings.csv and one CSV per table (parcels.csv ...)",
    "parquet": "findings.parquet and one (Geo)Parquet file per table (parcels.parquet ...)",
    "report": "report.html",
    "pdf": "report.pdf",
    "map": "map.html",
    "plots": "plots/*.png",
    "field": "field.kml and field.gpx (harvest)",
}
"""The names ``--outputs`` takes, and the files each stands for. ``provenance.json`` is always
written; a ``--parcel`` handout is written whenever it is asked for (its PDF with ``pdf``)."""

ALL_OUTPUTS: frozenset[str] = frozenset(OUTPUTS)
"""The default: every file."""

TABLE_OUTPUTS = ("gpkg", "parquet", "csv")
"""The outputs holding every finding written and every table (the parcels table of a screening);
a selection needs one of them (findings.geojson holds the findings but no table)."""


def select_outputs(names: str | Iterable[str] | None) -> frozenset[str]:
    """The outputs named (comma-separated text or names); ``None`` or ``all``: every one.

    Raises
    ------
    OutputError
        An unknown name (the message lists the known ones), nothing named, or no output that
        would hold the findings and tables (:data:`TABLE_OUTPUTS`).

    Examples
    --------
    >>> sorted(select_outputs("gpkg, report"))
    ['gpkg', 'report']
    >>> select_outputs(None) == ALL_OUTPUTS
    True
    >>> select_outputs("report,map")
    Traceback (most recent call last):
    ...
    geoconstraints.errors.OutputError: --outputs report,map: no file of the set would hold every finding and every table (the parcels table of a screening); add gpkg, parquet or csv
    """
    if names is None:
        return ALL_OUTPUTS
    given = names.split(",") if isinstance(names, str) else list(names)
    wanted = [str(n).strip().lower() for n in given if str(n).strip()]
    text = ",".join(wanted)
    if not wanted:
        raise OutputError(f"--outputs: name at least one output ({', '.join(OUTPUTS)}) or all")
    if "all" in wanted:
        return ALL_OUTPUTS
    unknown = [n for n in wanted if n not in OUTPUTS]
    if unknown:
        raise OutputError(f"--outputs {text}: unknown output {', '.join(unknown)}; the outputs are "
                          f"{', '.join(OUTPUTS)} (or all)")
    chosen = frozenset(wanted)
    if not chosen & set(TABLE_OUTPUTS):
        raise OutputError(f"--outputs {text}: no file of the set would hold every finding and every table (the "
                          f"parcels table of a screening); add {', '.join(TABLE_OUTPUTS[:-1])} or {TABLE_OUTPUTS[-1]}")
    return chosen


@dataclass(frozen=True)
class Holders:
    """Where the notes of the report and the map send a reader for what they leave out: only
    files of the set being written.

    Examples
    --------
    >>> h = Holders(ALL_OUTPUTS)
    >>> h.findings, h.parcels, h.layers
    ('findings.geojson and results.gpkg', 'parcels.csv, parcels.parquet and results.gpkg', 'results.gpkg')
    >>> h = Holders(select_outputs("parquet"))
    >>> h.findings, h.parcels, h.layers, h.inputs
    ('findings.parquet', 'parcels.parquet', '', 'provenance.json')
    """

    outputs: frozenset[str] = ALL_OUTPUTS

    def _findings(self) -> list[str]:
        gis = [f for k, f in (("geojson", "findings.geojson"), ("gpkg", "results.gpkg")) if k in self.outputs]
        tables = [f for k, f in (("parquet", "findings.parquet"), ("csv", "findings.csv")) if k in self.outputs]
        return gis or tables

    @property
    def findings(self) -> str:
        """The files holding every finding written: the GIS files when written, else the tables."""
        return and_list(self._findings())

    @property
    def parcels(self) -> str:
        """The files holding every row of the parcels table (a screening)."""
        return and_list([f for k, f in (("csv", "parcels.csv"), ("parquet", "parcels.parquet"), ("gpkg", "results.gpkg"))
                      if k in self.outputs])

    @property
    def layers(self) -> str:
        """The file holding the derived layers (buffer strips, overlaps ...): results.gpkg, or ``""``."""
        return "results.gpkg" if "gpkg" in self.outputs else ""

    @property
    def inputs(self) -> str:
        """The files listing the inputs with their SHA-256: report.pdf and report.html when written, and
        provenance.json (always written)."""
        return and_list([f for k, f in (("pdf", "report.pdf"), ("report", "report.html")) if k in self.outputs]
                     + ["provenance.json"])
