"""The result of a run: findings, per-feature tables, derived layers and provenance.

Commands produce it; :mod:`geoconstraints.output` writes it (files, report, web map);
notebooks display it. It imports no writer.
"""

from __future__ import annotations

import datetime as dt
import logging
import platform
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import geopandas as gpd
import pandas as pd

from geoconstraints._version import __version__
from geoconstraints.io.layers import Layers
from geoconstraints.io.postgis import is_db_source
from geoconstraints.io.sources import sha256_file
from geoconstraints.rulebook.findings import STATUSES, findings_frame, status_counts
from geoconstraints.rulebook.model import Rulebook

log = logging.getLogger(__name__)


@dataclass
class Result:
    """What one command produced.

    Attributes
    ----------
    command : str
        ``harvest``, ``screen``, ``flood-site``, ``stormwater``, ``seqr`` or ``demo``.
    rulebook : Rulebook
    findings : GeoDataFrame
        Standard finding columns (see :data:`geoconstraints.findings.FINDING_COLUMNS`).
    layers : Layers or None
        The inputs, in the working CRS.
    derived : dict[str, GeoDataFrame]
        Derived map layers (buffer strips, grade runs, water bars, contours, ...).
    tables : dict[str, DataFrame]
        Per-feature tables (``parcels``, ``landings`` ...), also written as CSV.
    extra_inputs : dict[str, Path]
        Non-layer inputs (rainfall CSV, inspection log) for the provenance stamp.
    """

    command: str
    rulebook: Rulebook
    findings: gpd.GeoDataFrame
    layers: Layers | None = None
    derived: dict[str, gpd.GeoDataFrame] = field(default_factory=dict)
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    extra_inputs: dict[str, Path] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    started: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.UTC))
    notes: list[str] = field(default_factory=list)

    @property
    def crs(self) -> Any:
        """The working CRS."""
        return self.layers.crs if self.layers is not None else self.findings.crs

    def counts(self) -> dict[str, int]:
        """Findings per status (waived findings included)."""
        return status_counts(self.findings)

    def has(self, status: str) -> bool:
        """True when an unwaived finding has ``status``."""
        f = self.findings
        return bool(((f["status"] == status) & (f["waived"] == "")).any())

    def provenance(self) -> dict[str, Any]:
        """The provenance stamp: inputs with sizes and SHA-256, CRS, NFHL map, rulebook, version."""
        inputs = []
        if self.layers is not None:
            for role, info in self.layers.info.items():
                inputs.append({"role": role, "file": info.path if is_db_source(info.path) else Path(info.path).name, "path": info.path,
                               "layer": info.layer or "", "features": info.features,
                               "crs": info.source_crs, "size_bytes": info.size_bytes,
                               "sha256": info.sha256})
            dem = self.layers.dem
            if dem is not None:
                p = Path(dem.path)
                inputs.append({"role": "dem", "file": p.name, "path": str(p), "layer": "",
                               "features": None, "crs": dem.crs.to_string(),
                               "size_bytes": p.stat().st_size, "sha256": sha256_file(p),
                               "z_units": f"{dem.z_units} ({dem.z_units_source})"})
        for role, p in self.extra_inputs.items():
            p = Path(p)
            inputs.append({"role": role, "file": p.name, "path": str(p), "layer": "", "features": None,
                           "crs": "", "size_bytes": p.stat().st_size, "sha256": sha256_file(p)})
        nfhl = {}
        if self.layers is not None:
            for role in ("flood_zones", "flood_zones_preliminary", "bfe_lines"):
                g = self.layers.get_layer(role)
                if g is None:
                    continue
                ids = sorted(g["DFIRM_ID"].dropna().astype(str).unique()) if "DFIRM_ID" in g else []
                eff = sorted(g["EFF_DATE"].dropna().astype(str).unique()) if "EFF_DATE" in g else []
                nfhl[role] = {"DFIRM_ID": ", ".join(ids) or "not stated",
                              "effective_date": ", ".join(eff) or "not stated"}
        crs = self.crs
        return {
            "toolkit": "geoconstraints", "version": __version__, "command": self.command,
            "run_time_utc": self.started.strftime("%Y-%m-%d %H:%M:%S UTC"),
            "python": platform.python_version(),
            "rulebook": self.rulebook.name, "rulebook_version": self.rulebook.version,
            "rulebook_source": self.rulebook.path,
            "working_crs": f"{crs.name} ({crs.to_string()})" if crs is not None else "",
            "working_crs_reason": self.layers.crs_reason if self.layers is not None else "",
            "inputs": inputs, "nfhl": nfhl, "options": {k: str(v) for k, v in self.options.items()},
            "warnings": list(self.layers.warnings) if self.layers is not None else [],
            "notes": list(self.notes),
        }

    def summary(self) -> pd.DataFrame:
        """Findings per rule and status."""
        if not len(self.findings):
            return pd.DataFrame(columns=["rule_id", "title", *STATUSES])
        t = pd.crosstab([self.findings["rule_id"], self.findings["title"]], self.findings["status"])
        for s in STATUSES:
            if s not in t.columns:
                t[s] = 0
        return t[list(STATUSES)].reset_index()

    def _repr_html_(self) -> str:
        c = self.counts()
        head = ", ".join(f"{v} {k}" for k, v in c.items() if v)
        return (f"<p><b>geoconstraints {self.command}</b> with rulebook {self.rulebook.name}: "
                f"{len(self.findings)} findings ({head or 'none'})</p>"
                + self.summary().to_html(index=False, escape=True))


def make_result(command: str, rulebook: Rulebook, items: list, layers: Layers | None, **kw: Any) -> Result:
    """Collect check output into a :class:`Result` (findings sorted and typed)."""
    crs = layers.crs if layers is not None else None
    return Result(command=command, rulebook=rulebook, findings=findings_frame(items, crs=crs),
                  layers=layers, **kw)

