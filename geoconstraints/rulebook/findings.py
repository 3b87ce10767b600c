"""The one ``Finding`` record that flows from every check to every output.

A check returns findings as a frame built with :meth:`~geoconstraints.rulebook.model.Rule.findings`
(or one :class:`Finding` at a time); both end as a GeoDataFrame with exactly
:data:`FINDING_COLUMNS` (plus geometry).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

import geopandas as gpd
import pandas as pd
from shapely.geometry.base import BaseGeometry

STATUSES: tuple[str, ...] = ("violation", "review", "not_evaluated", "info", "pass")
"""Status values of SPEC §1, most severe first."""

STATUS_RANK = {s: i for i, s in enumerate(STATUSES)}


@dataclass(frozen=True)
class Finding:
    """One outcome of one rule for one subject.

    Attributes
    ----------
    rule_id : str
        Stable rule id (``HRV-010``).
    rulebook : str
        Rulebook name (``vestal``).
    status : str
        One of :data:`STATUSES`.
    citation : str
        Section of the law the rule comes from.
    subject_layer : str
        Input role or derived layer the subject belongs to (``haul_roads``), or ``""``.
    subject_id : str
        Feature id of the subject (id field or row number), or ``""`` for run-wide findings.
    measured : float | None
        The measured value (distance, length, acres, ...), in ``unit``.
    threshold : float | None
        The rulebook threshold compared against, in ``unit``.
    unit : str
        ``ft``, ``acres``, ``pct``, ``sqft``, ``in``, ``count``, ... or ``""``.
    message : str
        Human-readable sentence from the rule's message template.
    geometry : shapely geometry | None
        Where the finding is, in the working CRS, or ``None``.
    title : str
        Rule title.
    reading : str
        The readings (rulebook switches) the check used, ``name=value; ...``.
    waived : str
        The waiver reason when the user's rulebook waives the rule, else ``""``.
    """

    rule_id: str
    rulebook: str
    status: str
    citation: str
    subject_layer: str = ""
    subject_id: str = ""
    measured: float | None = None
    threshold: float | None = None
    unit: str = ""
    message: str = ""
    geometry: BaseGeometry | None = field(default=None, compare=False)
    title: str = ""
    reading: str = ""
    waived: str = ""

    def __post_init__(self) -> None:
        if self.status not in STATUS_RANK:
            raise ValueError(f"status {self.status!r} is not one of {', '.join(STATUSES)}")


FINDING_COLUMNS: list[str] = [f.name for f in fields(Finding) if f.name != "geometry"]
"""Attribute columns of every findings table, in output order."""


def empty_findings(crs: Any = None) -> gpd.GeoDataFrame:
    """An empty findings GeoDataFrame with the standard columns."""
    df = pd.DataFrame({c: pd.Series(dtype="float64" if c in ("measured", "threshold") else "object")
                       for c in FINDING_COLUMNS})
    return gpd.GeoDataFrame(df, geometry=gpd.GeoSeries([], crs=crs), crs=crs)


def findings_frame(items: list[Finding] | list[gpd.GeoDataFrame], crs: Any = None) -> gpd.GeoDataFrame:
    """Collect findings (records and/or frames) into one GeoDataFrame with the standard columns.

    Rows are sorted by rule id, then severity, then subject, so outputs are reproducible.
    """
    frames: list[gpd.GeoDataFrame] = []
    records = [f for f in items if isinstance(f, Finding)]
    if records:
        rows = [asdict(f) for f in records]
        geoms = [r.pop("geometry") for r in rows]
        frames.append(gpd.GeoDataFrame(pd.DataFrame(rows, columns=FINDING_COLUMNS),
                                       geometry=gpd.GeoSeries(geoms, crs=crs), crs=crs))
    frames.extend(f for f in items if isinstance(f, gpd.GeoDataFrame) and len(f))
    if not frames:
        return empty_findings(crs)
    frames = [f.set_crs(crs, allow_override=True) if crs is not None else f for f in frames]
    out = pd.concat(frames, ignore_index=True)
    out = gpd.GeoDataFrame(out[FINDING_COLUMNS + ["geometry"]], geometry="geometry", crs=crs)
    for c in ("measured", "threshold"):
        out[c] = pd.to_numeric(out[c], errors="coerce").astype("float64")
    for c in FINDING_COLUMNS:
        if c not in ("measured", "threshold"):
            out[c] = out[c].fillna("").astype(str)
    rank = out["status"].map(STATUS_RANK)
    order = pd.DataFrame({"r": out["rule_id"], "s": rank, "i": out["subject_id"]})
    out = out.loc[order.sort_values(["r", "s", "i"], kind="stable").index].reset_index(drop=True)
    return out


def status_counts(findings: pd.DataFrame) -> dict[str, int]:
    """Number of findings per status, every status present (0 when none)."""
    counts = findings["status"].value_counts() if len(findings) else pd.Series(dtype=int)
    return {s: int(counts.get(s, 0)) for s in STATUSES}


def worst_status(statuses: pd.Series) -> str:
    """The most severe status of a set, ``pass`` when empty."""
    if len(statuses) == 0:
        return "pass"
    return STATUSES[int(statuses.map(STATUS_RANK).min())]

