"""The result of a run: findings, per-feature tables, derived layers and provenance.

Commands produce it; :mod:`geoconstraints.output` writes it (files, report, web map);
notebooks display it. It imports no writer.
"""

from __future__ import annotations

import datetime as dt
import html
import logging
import platform
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from geoconstraints._version import __version__
from geoconstraints.io.layers import Layers
from geoconstraints.io.paths import sha256_file
from geoconstraints.io.postgis import is_db_source
from geoconstraints.rulebook.findings import (
    FINDINGS_SCOPES,
    STATUS_RANK,
    STATUSES,
    Outcomes,
    concat_findings,
    findings_frame,
    in_scope,
    scope_statuses,
    status_counts,
    status_ranks,
)
from geoconstraints.rulebook.model import Rulebook
from geoconstraints.text import id_list, visible_text

log = logging.getLogger(__name__)

OMITTED_COLUMNS: list[str] = ["rule_id", "title", "status", "waived", "n"]
"""Columns of :attr:`Result.omitted`: the findings a run did not keep, counted per rule
(``rule_id``, ``title``, ``waived`` as in the findings) and ``status``; ``n`` the number."""


def empty_omitted() -> pd.DataFrame:
    """An empty :attr:`Result.omitted` table (nothing left out)."""
    return pd.DataFrame({c: pd.Series(dtype="int64" if c == "n" else "object") for c in OMITTED_COLUMNS})


def _run_codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``pd.factorize(values, use_na_sentinel=False)`` of an object array that comes in long runs of
    one value (a rule's findings, one status after another): only the first value of each run is
    hashed.

    Examples
    --------
    >>> codes, uniques = _run_codes(np.array(["b", "b", "a", "b", None, None], dtype=object))
    >>> codes.tolist(), uniques.tolist()
    ([0, 0, 1, 0, 2, 2], ['b', 'a', nan])
    """
    if not len(values):
        return pd.factorize(values, use_na_sentinel=False)
    starts = np.concatenate([[0], np.flatnonzero(values[1:] != values[:-1]) + 1])
    head, uniques = pd.factorize(values[starts], use_na_sentinel=False)
    return np.repeat(head, np.diff(np.append(starts, len(values)))), uniques


def _groups(cols: dict[str, np.ndarray], keys: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(position of the first row, number of rows, group of each row) of the groups of equal ``keys``."""
    key = np.zeros(len(cols[keys[0]]), dtype=np.int64)
    for c in keys:  # one integer key from the codes of the columns
        codes, uniques = _run_codes(cols[c])
        key = key * len(uniques) + codes
    # np.unique(key, return_index=True, return_inverse=True, return_counts=True) without sorting the rows:
    # codes by first appearance (hashing), so each new code is one more than the running maximum
    codes, uniques = pd.factorize(key)
    seen = np.maximum.accumulate(codes)
    first = np.flatnonzero(np.concatenate([[True], seen[1:] > seen[:-1]]))
    order = np.argsort(uniques, kind="stable")  # the groups in key order, as np.unique gives them
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return first[order], np.bincount(codes, minlength=len(uniques))[order], rank[codes]


def split_scope(findings: gpd.GeoDataFrame | list[gpd.GeoDataFrame | Outcomes],
                scope: str) -> tuple[gpd.GeoDataFrame, pd.DataFrame]:
    """The findings of ``scope`` (:func:`~geoconstraints.rulebook.findings.in_scope`: a run-wide one is
    in every scope) and the counts of the others (:data:`OMITTED_COLUMNS`).

    Only four columns of the rows left out are read (no text column is copied), so a
    screening can drop millions of pass/info rows before they are typed and sorted. Given the
    checks' frames (:func:`~geoconstraints.rulebook.registry.run_checks`), each is filtered
    before the rows kept are stacked: the millions of rows left out are never stacked. An
    :class:`~geoconstraints.rulebook.findings.Outcomes` among them (``run_checks(..., keep=)``:
    the rows left out were never built) gives its frame and the counts of its statuses.

    Parameters
    ----------
    findings : DataFrame or list of DataFrame or Outcomes
        Findings with ``rule_id``, ``title``, ``status``, ``waived``, ``subject_id`` (what
        :func:`~geoconstraints.rulebook.registry.run_group` returns), or what
        :func:`~geoconstraints.rulebook.registry.run_checks` returns (``Outcomes`` built for
        the statuses of ``scope``: another scope is a ValueError).
    scope : {"person", "all"}
        See :func:`geoconstraints.rulebook.findings.findings_scope`.

    Returns
    -------
    (DataFrame, DataFrame)
        The findings kept (``findings`` itself for ``all``, the frames stacked for a list) and the
        omitted counts, sorted by rule id then severity (empty when nothing was left out).

    Examples
    --------
    >>> f = pd.DataFrame({"rule_id": ["R-1", "R-1", "R-2", "R-3"], "title": "t", "status": ["pass", "review", "pass", "info"],
    ...                   "waived": "", "subject_id": ["P1", "P2", "P1", ""]})
    >>> kept, omitted = split_scope(f, "person")
    >>> kept["rule_id"].tolist(), omitted[["rule_id", "status", "n"]].values.tolist()
    (['R-1', 'R-3'], [['R-1', 'pass', 1], ['R-2', 'pass', 1]])
    """
    if scope not in FINDINGS_SCOPES:
        raise ValueError(f"scope {scope!r} is not one of {', '.join(FINDINGS_SCOPES)}")
    items = findings if isinstance(findings, list) else [findings]
    wanted = scope_statuses(scope)
    for o in items:
        if isinstance(o, Outcomes) and (wanted is None or o.statuses != frozenset(wanted)):
            raise ValueError(f"the findings of {o.rule_id} were built for the statuses {', '.join(sorted(o.statuses))} "
                             f"only, not for the scope {scope!r}")
    frames = [o for o in items if not isinstance(o, Outcomes)]
    keeps = [in_scope(f["status"].to_numpy(), scope, f["subject_id"].to_numpy()) for f in frames]
    kept = {id(f): f if k.all() else f[k] for f, k in zip(frames, keeps)}
    out = kept[id(findings)] if not isinstance(findings, list) else concat_findings(
        [o.frame if isinstance(o, Outcomes) else kept[id(o)] for o in items])
    counted = [_outcome_counts(o) for o in items if isinstance(o, Outcomes)]
    if not all(k.all() for k in keeps):
        cols = {c: np.concatenate([f[c].to_numpy(dtype=object)[~k] for f, k in zip(frames, keeps)])
                for c in OMITTED_COLUMNS[:-1]}  # pointers, no text copied
        counted.append(_omitted_counts(cols))
    counted = [c for c in counted if len(c)]
    if not counted:
        return out, empty_omitted()
    if len(counted) == 1:
        return out, counted[0]
    both = pd.concat(counted, ignore_index=True).groupby(OMITTED_COLUMNS[:-1], sort=False, dropna=False)["n"].sum()
    return out, _sorted_omitted(both.reset_index())


def _outcome_counts(o: Outcomes) -> pd.DataFrame:
    """:attr:`Result.omitted` of the rows an :class:`Outcomes` left out, sorted as :func:`_omitted_counts` sorts."""
    n = np.bincount(o.rank[o.left_out()], minlength=len(STATUSES))
    left = [(s, int(n[k])) for k, s in enumerate(STATUSES) if n[k]]
    out = pd.DataFrame({"rule_id": pd.Series([o.rule_id] * len(left), dtype=object),
                        "title": pd.Series([o.title] * len(left), dtype=object),
                        "status": pd.Series([s for s, _ in left], dtype=object),
                        "waived": pd.Series([o.waived] * len(left), dtype=object),
                        "n": pd.Series([k for _, k in left], dtype="int64")})
    return out[OMITTED_COLUMNS]


def _omitted_counts(cols: dict[str, np.ndarray]) -> pd.DataFrame:
    """:attr:`Result.omitted` of the rows left out (``cols``: their columns of :data:`OMITTED_COLUMNS`)."""
    first, n, group = _groups(cols, ["rule_id", "status"])
    if not all((cols[c] == cols[c][first][group]).all() for c in ("title", "waived")):  # else group by all four
        first, n, _ = _groups(cols, OMITTED_COLUMNS[:-1])
    out = pd.DataFrame({c: v[first] for c, v in cols.items()})
    out["waived"] = out["waived"].where(out["waived"].notna(), "").astype(str)
    out["n"] = n.astype("int64")
    return _sorted_omitted(out)


def _sorted_omitted(out: pd.DataFrame) -> pd.DataFrame:
    """Omitted counts sorted by rule id, then severity (stable), with :data:`OMITTED_COLUMNS` in order."""
    rank = out["status"].map(STATUS_RANK).fillna(len(STATUSES))
    out = out.assign(_r=rank).sort_values(["rule_id", "_r"], kind="stable").drop(columns="_r")
    return out.reset_index(drop=True)[OMITTED_COLUMNS]


def _file_facts(path: Path) -> dict[str, Any]:
    """``size_bytes`` and ``sha256`` of an input file read when the outputs are written (a DEM, a table),
    or, where it is gone by then, ``None`` and ``""`` with ``"gone_at_write": True``: the outputs still
    describe what the run read, and provenance.json says the file could not be hashed.

    Examples
    --------
    >>> _file_facts(Path("no-such-file.tif"))
    {'size_bytes': None, 'sha256': '', 'gone_at_write': True}
    """
    try:
        return {"size_bytes": path.stat().st_size, "sha256": sha256_file(path)}
    except FileNotFoundError:
        return {"size_bytes": None, "sha256": "", "gone_at_write": True}


@dataclass(repr=False)
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
    extra_stamps : dict[str, tuple of int]
        ``(size, modification time in ns)`` of each of ``extra_inputs`` taken when it was read
        (:func:`~geoconstraints.io.sources.file_stamp`), to tell a file changed before the outputs
        are written.
    run_id : str
        A random UUID (version 4) naming this run. Every output of the run records it
        (``provenance.json``, findings.geojson, results.gpkg metadata, the Parquet files,
        report.html and map.html), so a folder of outputs can be checked for coming from one run.
    scope : {"all", "person"}
        Which findings :attr:`findings` holds: ``all`` every one; ``person`` only those that need a
        person (violation, review, not_evaluated) and the run-wide ones (of any status), the default of
        a screening, whose other pass and info outcomes are in the ``status_<rule>`` columns of
        ``tables["parcels"]``.
    omitted : DataFrame
        The findings not kept, counted (:data:`OMITTED_COLUMNS`); empty when nothing was left
        out. :meth:`counts`, :meth:`summary` and :attr:`n_findings` count them.
    """

    command: str
    rulebook: Rulebook
    findings: gpd.GeoDataFrame
    layers: Layers | None = None
    derived: dict[str, gpd.GeoDataFrame] = field(default_factory=dict)
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    extra_inputs: dict[str, Path] = field(default_factory=dict)
    extra_stamps: dict[str, tuple[int, int] | None] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    started: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.UTC))
    notes: list[str] = field(default_factory=list)
    run_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    scope: str = "all"
    omitted: pd.DataFrame = field(default_factory=empty_omitted)

    @property
    def crs(self) -> Any:
        """The working CRS."""
        return self.layers.crs if self.layers is not None else self.findings.crs

    @property
    def n_findings(self) -> int:
        """Number of findings of the run: those kept in :attr:`findings` and those :attr:`omitted`."""
        return len(self.findings) + int(self.omitted["n"].sum())

    def counts(self) -> dict[str, int]:
        """Findings per status (waived findings included), the :attr:`omitted` ones included."""
        c = status_counts(self.findings)
        for status, n in self.omitted.groupby("status")["n"].sum().items():
            c[str(status)] = c.get(str(status), 0) + int(n)
        return c

    def has(self, status: str) -> bool:
        """True when an unwaived finding has ``status`` (an :attr:`omitted` one included)."""
        f, o = self.findings, self.omitted
        return bool(((f["status"] == status) & (f["waived"] == "")).any()
                    or ((o["status"] == status) & (o["waived"] == "") & (o["n"] > 0)).any())

    def omitted_text(self, where: str = "parcels.csv, parcels.parquet, results.gpkg") -> str:
        """One sentence on the findings not kept and where their outcomes are (``where``: the files
        holding the parcels table); ``""`` when none.

        Examples
        --------
        >>> from geoconstraints import load_layers, load_rulebook, sample_path
        >>> from geoconstraints.commands import screen_parcels
        >>> res = screen_parcels(load_layers(sample_path("vestal_sample.gpkg")), load_rulebook("vestal"))
        >>> res.omitted_text()[:60]
        '11,345 info and pass findings are not kept (findings scope p'
        """
        n = int(self.omitted["n"].sum())
        if not n:
            return ""
        which = " and ".join(s for s in STATUSES if s in set(self.omitted["status"]))
        return (f"{n:,} {which} findings are not kept (findings scope {self.scope}): each subject's outcome per rule "
                f"is in the status_<rule> columns of the parcels table ({where}); "
                f"keep them with findings=\"all\" (--findings all)")

    def as_written(self, scope: str) -> Result:
        """This result as the findings files of ``scope`` hold it: the findings of ``scope`` kept, the
        others counted in :attr:`omitted` (``self`` when the files hold every finding kept).

        What report.html and map.html are made from, so that what they list and say is in the files is
        there: a screening with ``--parcel`` or ``--out-db`` keeps every finding (the handout and the
        database get them) and writes the ``person`` ones (:func:`split_scope`).

        Examples
        --------
        >>> from geoconstraints import load_layers, load_rulebook, sample_path
        >>> from geoconstraints.commands import screen_parcels
        >>> res = screen_parcels(load_layers(sample_path("vestal_sample.gpkg")), load_rulebook("vestal"), findings="all")
        >>> w = res.as_written("person")
        >>> w.scope, len(w.findings), w.counts() == res.counts(), res.as_written("all") is res
        ('person', 2751, True, True)
        """
        if scope_statuses(scope) is None or scope == self.scope:
            return self
        kept, left = split_scope(self.findings, scope)
        if len(self.omitted):
            left = _sorted_omitted(pd.concat([self.omitted, left], ignore_index=True)
                                   .groupby(OMITTED_COLUMNS[:-1], sort=False, dropna=False)["n"].sum().reset_index())
        return replace(self, findings=kept, omitted=left, scope=scope)

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
                               **_file_facts(p), "z_units": dem.z_description})
        for role, p in self.extra_inputs.items():
            p = Path(p)
            inputs.append({"role": role, "file": p.name, "path": str(p), "layer": "", "features": None,
                           "crs": "", **_file_facts(p)})
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
            "run_id": self.run_id,
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
        """Findings per rule and status: the per-rule count table.

        Counted from the complete findings (:attr:`findings` and the :attr:`omitted` counts,
        whatever a writer leaves out of a file), so its totals are :meth:`counts` and, for the rules about the parcels of a screening, the
        counts of each ``status_<rule>`` column of ``tables["parcels"]``
        (:func:`rule_status_columns`).

        Returns
        -------
        DataFrame
            Columns ``rule_id``, ``title``, then one count column per status of :data:`STATUSES`.
        """
        if not len(self.findings) and not len(self.omitted):
            return pd.DataFrame(columns=["rule_id", "title", *STATUSES])
        f = self.findings
        long = f.groupby([f["rule_id"].to_numpy(dtype=object), f["title"].to_numpy(dtype=object),
                          f["status"].to_numpy(dtype=object)]).size()
        o = self.omitted
        more = pd.Series(o["n"].to_numpy(dtype="int64"),
                         index=pd.MultiIndex.from_arrays([o["rule_id"], o["title"], o["status"]]))
        long = pd.concat([long, more]).groupby(level=[0, 1, 2]).sum()
        t = long.rename_axis(["rule_id", "title", "status"]).unstack("status", fill_value=0)
        for s in STATUSES:
            if s not in t.columns:
                t[s] = 0
        return t[list(STATUSES)].reset_index()

    def _count_text(self) -> str:
        c = self.counts()
        return ", ".join(f"{v:,} {k}" for k, v in c.items() if v) or "none"

    def _frames_text(self) -> tuple[str, str]:
        tables = ", ".join(f"{k} ({len(v):,} rows)" for k, v in self.tables.items()) or "none"
        derived = ", ".join(f"{k} ({len(v):,})" for k, v in self.derived.items()) or "none"
        return tables, derived

    def _shown_summary(self) -> pd.DataFrame:
        """:meth:`summary` with its text (rule id, title) as :func:`~geoconstraints.text.visible_text` shows it."""
        t = self.summary()
        for c in ("rule_id", "title"):
            t[c] = [visible_text(v) for v in t[c]]
        return t

    def __repr__(self) -> str:
        v = visible_text  # a rulebook's name, a title: an invisible character shown as <U+XXXX>, never obeyed
        tables, derived = self._frames_text()
        left = f", {len(self.findings):,} kept\n  {self.omitted_text()}" if len(self.omitted) else ""
        return v(f"<Result {self.command}: rulebook {self.rulebook.name} {self.rulebook.version}, run {self.run_id}\n"
                 f"  findings: {self.n_findings:,} ({self._count_text()}){left}\n"
                 f"  tables: {tables}\n  derived layers: {derived}>")

    def _repr_html_(self) -> str:
        def e(text: Any) -> str:  # shown (visible_text), then escaped: <U+202E> reads as such, never reverses the page
            return html.escape(visible_text(text))

        tables, derived = self._frames_text()
        return (f"<p><b>geoconstraints {e(self.command)}</b> with rulebook {e(self.rulebook.name)} "
                f"{e(self.rulebook.version)}: {self.n_findings:,} findings ({e(self._count_text())})<br>"
                + (f"{e(self.omitted_text())}<br>" if len(self.omitted) else "") +
                f"tables: {e(tables)}<br>derived layers: {e(derived)}<br>"
                f"<small>run {e(self.run_id)}</small></p>"
                + self._shown_summary().to_html(index=False, escape=True))


STATUS_COLUMN_PREFIX = "status_"
"""Prefix of the per-rule status columns of a subject table (``status_FLD_001``)."""


def status_column(rule_id: str) -> str:
    """The name of a rule's status column: ``status_`` + the id with ``-`` (and any character
    other than a letter, digit or ``_``) as ``_``; typed as is in QGIS expressions, SQL and
    spreadsheets, and a valid Python identifier for ``table.status_FLD_001``.

    Examples
    --------
    >>> status_column("FLD-001")
    'status_FLD_001'
    """
    return STATUS_COLUMN_PREFIX + re.sub(r"[^0-9A-Za-z_]", "_", str(rule_id))


def _status_grid(findings: pd.DataFrame | Outcomes, subject_layer: str, ids: np.ndarray,
                 subjects: Any = None) -> tuple[list[str], np.ndarray] | None:
    """(rule ids, sorted; rank of the most severe status per rule (rows) and subject (columns, in
    ``ids`` order), :data:`_NO_RANK` where a rule has no finding about a subject); None when no
    finding is about ``subject_layer``. One scatter-min into a small integer grid (no group-by
    over text keys). ``subjects``: ``pd.Index(pd.unique(ids))`` when known."""
    if isinstance(findings, Outcomes):  # one rule: the status of every row, as ranks
        o = findings
        keep = np.asarray(o.subject_layer == subject_layer, dtype=bool) & (o.subject_id != "")
        if not keep.any():
            return None
        every = bool(keep.all())
        rank = o.rank if every else o.rank[keep]
        r_code, rules = np.zeros(len(rank), dtype=np.int64), np.array([o.rule_id], dtype=object)
        subj = o.subject_id if every else o.subject_id[keep]
    else:
        keep = ((findings["subject_layer"] == subject_layer) & (findings["subject_id"] != "")).to_numpy()
        if not keep.any():
            return None
        status = findings["status"].to_numpy(dtype=object)[keep]
        rank = status_ranks(status, STATUS_RANK["not_evaluated"]).astype(np.int8)
        r_code, rules = pd.factorize(findings["rule_id"].to_numpy(dtype=object)[keep], sort=True)
        subj = findings["subject_id"].to_numpy(dtype=object)[keep]
    ids = np.asarray(ids, dtype=object)
    subjects = pd.Index(pd.unique(ids)) if subjects is None else subjects
    if pd.api.types.infer_dtype(subj, skipna=False) != "string":  # ids given as numbers
        subj = np.array([str(v) for v in subj], dtype=object)
    grid = np.full((len(rules), len(subjects)), _NO_RANK, dtype=np.int8)
    unique = len(subjects) == len(ids)
    if not (unique and _fill_aligned(grid, subj, ids, r_code, rank)):
        pos = subjects.get_indexer(subj)
        ok = pos >= 0  # findings about subjects not in the table are not counted
        np.minimum.at(grid, (r_code[ok], pos[ok]), rank[ok])
    return [str(r) for r in rules], grid if unique else grid[:, subjects.get_indexer(ids)]


def _merged_status_grid(frames: list[pd.DataFrame | Outcomes], subject_layer: str,
                        ids: np.ndarray) -> tuple[list[str], np.ndarray] | None:
    """:func:`_status_grid` of the frames stacked, from each frame's grid (a check's frame: one rule,
    aligned with the table), without stacking them."""
    subjects = pd.Index(pd.unique(np.asarray(ids, dtype=object)))  # once, not once per frame
    parts = [g for g in (_status_grid(f, subject_layer, ids, subjects) for f in frames
                         if isinstance(f, Outcomes) or len(f)) if g is not None]
    if len(parts) < 2:
        return parts[0] if parts else None
    rules = sorted({r for names, _ in parts for r in names})
    at = {r: k for k, r in enumerate(rules)}
    grid = np.full((len(rules), len(ids)), _NO_RANK, dtype=np.int8)
    for names, g in parts:
        for k, r in enumerate(names):
            np.minimum(grid[at[r]], g[k], out=grid[at[r]])
    return rules, grid


def _fill_aligned(grid: np.ndarray, subj: np.ndarray, ids: np.ndarray, r_code: np.ndarray, rank: np.ndarray) -> bool:
    """Fill ``grid`` when the findings come in blocks of one rule each aligned with ``ids`` (unique), as a
    check returns them: one row per subject in the table's order; no hashing of ids then. False (and
    ``grid`` untouched) when they do not."""
    n = len(ids)
    if not n or len(subj) % n:
        return False
    blocks = [slice(k, k + n) for k in range(0, len(subj), n)]
    if not all(r_code[b][0] == r_code[b][-1] and (r_code[b] == r_code[b][0]).all() and (subj[b] == ids).all()
               for b in blocks):
        return False
    for b in blocks:
        grid[r_code[b][0]] = np.minimum(grid[r_code[b][0]], rank[b])
    return True


_NO_RANK = np.int8(127)
"""The rank of "no finding" in :func:`_status_grid` (above every status)."""


def _status_names(ranks: np.ndarray, *, none: str = "") -> pd.api.extensions.ExtensionArray:
    """Status names of ranks (``none`` for :data:`_NO_RANK`) as pandas text held by Arrow: taken from the
    six names in C, no Python string per subject (a county: a million per column).

    Examples
    --------
    >>> _status_names(np.array([1, 127, 4], dtype=np.int8)).tolist()
    ['review', '', 'pass']
    """
    names = pa.array([*STATUSES, none], type=pa.large_string())
    idx = pa.array(np.minimum(ranks, len(STATUSES)).astype(np.int8, copy=False))
    return pc.take(names, idx).to_pandas().array


def worst_status_of(findings: pd.DataFrame, subject_layer: str, ids: Any) -> np.ndarray:
    """The most severe status of each subject's findings about ``subject_layer``, in ``ids`` order;
    ``not_evaluated`` for a subject without any (run-wide findings count for no subject).

    Examples
    --------
    >>> f = pd.DataFrame({"rule_id": ["A", "B"], "status": ["pass", "review"], "subject_layer": "footprints",
    ...                   "subject_id": ["F1", "F1"]})
    >>> worst_status_of(f, "footprints", ["F1", "F2"]).tolist()
    ['review', 'not_evaluated']
    """
    return np.asarray(_status_columns(findings, subject_layer, ids)[1], dtype=object)


def rule_status_columns(findings: pd.DataFrame, subject_layer: str, ids: Any) -> pd.DataFrame:
    """One status column per rule about ``subject_layer``, one row per id of ``ids``.

    The column of a rule (:func:`status_column`) holds the status of the rule's finding about
    each subject (the most severe when a rule has several about one subject), ``""`` for a
    subject the rule has no finding about. Rules with only run-wide findings (empty
    ``subject_id``) get no column. Vectorized: one group-by over the findings.

    Parameters
    ----------
    findings : DataFrame
        The complete findings of the run (``rule_id``, ``status``, ``subject_layer``, ``subject_id``).
    subject_layer : str
        ``parcels``, ``footprints`` ...
    ids : array-like
        The subject ids, in the order of the table.

    Returns
    -------
    DataFrame
        Index 0..n-1 aligned with ``ids``; columns in rule-id order.

    Examples
    --------
    >>> f = pd.DataFrame({"rule_id": ["FLD-001", "FLD-001", "FLD-002"], "status": ["review", "pass", "info"],
    ...                   "subject_layer": "parcels", "subject_id": ["P1", "P2", "P1"]})
    >>> rule_status_columns(f, "parcels", ["P1", "P2"]).to_dict("list")
    {'status_FLD_001': ['review', 'pass'], 'status_FLD_002': ['info', '']}
    """
    return _status_columns(findings, subject_layer, ids)[0]


def _status_columns(findings: pd.DataFrame | list[pd.DataFrame | Outcomes], subject_layer: str,
                    ids: Any) -> tuple[pd.DataFrame, Any]:
    """(:func:`rule_status_columns`, the worst status of each subject over them: ``not_evaluated``
    for a subject without any finding), from one group-by (``findings``: a frame, or the checks'
    frames, never stacked here)."""
    ids = np.asarray(ids, dtype=object)
    if pd.api.types.infer_dtype(ids, skipna=False) != "string":  # ids given as numbers
        ids = ids.astype(str).astype(object)
    got = _merged_status_grid(findings if isinstance(findings, list) else [findings], subject_layer, ids)
    if got is None:
        return pd.DataFrame(index=pd.RangeIndex(len(ids))), np.full(len(ids), "not_evaluated", dtype=object)
    rules, grid = got
    cols = pd.DataFrame({status_column(r): _status_names(grid[k]) for k, r in enumerate(rules)})
    return cols, _status_names(grid.min(axis=0), none="not_evaluated")


def add_rule_status_columns(table: pd.DataFrame, findings: pd.DataFrame | list[pd.DataFrame | Outcomes],
                            subject_layer: str, id_column: str, *, worst: bool = False) -> pd.DataFrame:
    """``table`` with :func:`rule_status_columns` inserted before its ``worst_status`` (else at the end).

    ``findings``: a findings frame, or what :func:`~geoconstraints.rulebook.registry.run_checks`
    returns (the checks' frames, not stacked here, or their
    :class:`~geoconstraints.rulebook.findings.Outcomes`: the status of every row without its finding).

    Earlier status columns of the same names are replaced. With ``worst``, ``worst_status`` is
    also set (appended when missing): the most severe status of each subject's findings,
    ``not_evaluated`` for a subject without any, from the same group-by (so it must be given the
    complete findings, before any are left out: :func:`split_scope`).
    """
    cols, worst_of = _status_columns(findings, subject_layer, table[id_column])
    out = table.drop(columns=[c for c in cols.columns if c in table.columns])
    if worst:
        out["worst_status"] = worst_of
    at = list(out.columns).index("worst_status") if "worst_status" in out.columns else len(out.columns)
    for i, c in enumerate(cols.columns):
        out.insert(at + i, c, cols[c].array)  # as typed there: no round trip through Python str
    return out


def repaired_flags(ids: Any, repaired: list[str]) -> np.ndarray:
    """Whether each of ``ids`` (a subject table's id column) is a feature whose geometry the loader
    repaired (``repaired``: :meth:`Layers.repaired_ids <geoconstraints.io.layers.Layers.repaired_ids>`):
    the ``geometry_repaired`` column of the per-feature tables (a screening's parcels and map comparison,
    flood-site's footprints, harvest's landings and roads). One hashed look-up of the whole column (a
    county: no loop per parcel); all False when nothing was repaired.

    Examples
    --------
    >>> repaired_flags(pd.Series(["P1", "P7", "P9"]), ["P7"]).tolist(), repaired_flags(["P1"], []).tolist()
    ([False, True, False], [False])
    """
    s = ids if isinstance(ids, pd.Series) else pd.Series(np.asarray(ids, dtype=object))
    if not repaired:
        return np.zeros(len(s), dtype=bool)
    return np.asarray((s if pd.api.types.is_string_dtype(s) else s.astype(str)).isin(repaired), dtype=bool)


def repaired_note(layers: Layers | None, tables: Mapping[str, pd.DataFrame] | None = None) -> str:
    """One sentence counting the features whose invalid geometry was repaired and naming them by
    layer (``""`` when none): a note of every run's report. It names the run's tables that flag them
    (``tables`` with a ``geometry_repaired`` column; a stormwater run has none).

    Examples
    --------
    >>> from geoconstraints.io.layers import LayerInfo
    >>> info = LayerInfo("parcels", "town.gpkg", "parcels", 3, "EPSG:2261", "", 0, [], repaired={"P7": False})
    >>> t = {"parcels": pd.DataFrame({"parcel_id": ["P7"], "geometry_repaired": [True]})}
    >>> print(repaired_note(Layers({}, crs=None, info={"parcels": info}), t))
    Invalid geometries repaired: 1 feature (parcels: P7) had an invalid geometry repaired with make_valid when loaded; the outcome of every finding about it rests on the repaired shape and its message says so (parcels.csv: column geometry_repaired). Check them in a GIS.
    >>> repaired_note(Layers({}, crs=None, info={"parcels": info})).count("geometry_repaired")
    0
    """
    repairs = layers.repairs if layers is not None else {}
    n = sum(len(v) for v in repairs.values())
    if not n:
        return ""
    where = "; ".join(f"{role}: {id_list(list(ids))}" for role, ids in repairs.items())
    named = [f"{name}.csv" for name, t in (tables or {}).items() if "geometry_repaired" in getattr(t, "columns", ())]
    flagged = f" ({', '.join(named)}: column geometry_repaired)" if named else ""
    lost = [i for ids in repairs.values() for i, gone in ids.items() if gone]
    lost_text = (f" The repair of {id_list(lost)} left out land or lines the drawing covers: a pass about "
                 f"{'it' if len(lost) == 1 else 'them'} is not evaluated." if lost else "")
    return (f"Invalid geometries repaired: {n:,} feature{'s' if n > 1 else ''} ({where}) had an invalid geometry "
            f"repaired with make_valid when loaded; the outcome of every finding about "
            f"{'them' if n > 1 else 'it'} rests on the repaired shape and its message says so{flagged}.{lost_text} "
            f"Check them in a GIS.")


def make_result(command: str, rulebook: Rulebook, items: list, layers: Layers | None, **kw: Any) -> Result:
    """Collect check output into a :class:`Result` (findings sorted and typed); a note counting and
    naming the features whose geometry was repaired (:func:`repaired_note`), when there are any."""
    crs = layers.crs if layers is not None else None
    res = Result(command=command, rulebook=rulebook, findings=findings_frame(items, crs=crs), layers=layers, **kw)
    if note := repaired_note(layers, res.tables):
        res.notes.append(note)
    return res

