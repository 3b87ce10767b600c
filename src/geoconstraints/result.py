"""The result of a run: findings, per-feature tables, derived layers and provenance.

Checks produce it; writers, the report and the web map consume it; notebooks display it.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import platform
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import geopandas as gpd
import pandas as pd

from . import __version__
from .findings import STATUSES, findings_frame, status_counts
from .layers import Layers, is_db_source, sha256_file
from .rules import Rulebook

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
        """The SPEC §4 stamp: inputs with sizes and SHA-256, CRS, NFHL map, rulebook, version."""
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

    # -- output --------------------------------------------------------------------------------
    def write(self, out_dir: str | os.PathLike[str], *, offline: bool = True,
              parcel: str | None = None, map_max_features: int | None = None,
              report_max_parcels: int | None = None, report_max_findings: int | None = None) -> dict[str, Path]:
        """Write every output into ``out_dir`` atomically; return name -> path.

        ``findings.geojson`` (every finding), ``results.gpkg`` (every finding, derived layer
        and table, with QGIS styles), one CSV per table, ``report.html`` and ``map.html``;
        with ``parcel``, also the one-parcel report ``report_parcel_<id>.html``. The folder
        is created if missing; an input is never overwritten.

        For a whole town or county the report and the map summarise, and say so: at most
        ``report_max_parcels`` rows of the parcels table and ``report_max_findings``
        non-pass findings per rule in report.html (defaults
        :data:`geoconstraints.report.MAX_PARCEL_ROWS`, :data:`~geoconstraints.report.MAX_FINDING_ROWS`),
        at most ``map_max_features`` features in map.html (default
        :data:`geoconstraints.webmap.MAX_FEATURES`).
        """
        from . import report, webmap, writers

        if parcel is not None:
            report.parcel_row(self, str(parcel))  # an unknown parcel id fails before anything is written
        inputs = self.layers.input_paths() if self.layers is not None else set()
        inputs |= {Path(p).resolve() for p in self.extra_inputs.values()}
        out = writers.prepare_out_dir(out_dir, inputs)
        written: dict[str, Path] = {}

        def target(name: str) -> Path:
            t = out / name
            writers.guard_target(t, inputs)
            return t

        written["findings.geojson"] = writers.write_geojson(self.findings, target("findings.geojson"))
        gpkg_layers: dict[str, pd.DataFrame] = {"findings": self.findings}
        gpkg_layers.update(self.derived)
        gpkg_layers.update(self.tables)
        from . import styles

        written["results.gpkg"] = writers.write_gpkg(
            gpkg_layers, target("results.gpkg"), crs=self.crs,
            finalize=lambda tmp: styles.add_layer_styles(tmp, gpkg_layers))
        for name, table in self.tables.items():
            written[f"{name}.csv"] = writers.write_csv(table, target(f"{name}.csv"))
        limits: dict[str, Any] = {}
        if report_max_parcels is not None:
            limits["max_parcel_rows"] = int(report_max_parcels)
        if report_max_findings is not None:
            limits["max_finding_rows"] = int(report_max_findings)
        written["report.html"] = writers.write_text(target("report.html"), report.render_report(self, **limits))
        if parcel is not None:  # the one-parcel report a clerk hands to the owner
            name = report.parcel_report_name(parcel)
            written[name] = writers.write_text(target(name), report.render_report(self, parcel=parcel))
        map_kw = {} if map_max_features is None else {"max_features": int(map_max_features)}
        written["map.html"] = webmap.write_map(self, target("map.html"), offline=offline, **map_kw)
        return written

    def explore(self, **kwargs: Any) -> Any:
        """An interactive folium map of the inputs, derived layers and findings (for notebooks)."""
        from . import webmap

        return webmap.build_map(self, **kwargs)

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
