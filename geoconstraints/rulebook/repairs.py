"""Findings about a feature whose invalid geometry was repaired: they say so.

A bow-tie parcel, a folded harvest area: the loader repairs an invalid geometry with
``make_valid`` (:func:`~geoconstraints.io.validate.clean_geometries`, and after a reprojection)
and records the feature (:attr:`~geoconstraints.io.layers.LayerInfo.repaired`). Every finding
whose subject (``subject_layer``, ``subject_id``) is such a feature gets the rulebook's sentence
(``messages.geometry_repaired`` of the rulebook file, :data:`RUN_MESSAGES`) appended to its
message (before a ``[waived: ...]`` note, the last words of a waived rule's messages), so a clerk
reading findings.csv, the report or the map never reads a plain outcome about a shape nobody drew.

The status stays: ``make_valid`` keeps the area a ring encloses (a bow-tie becomes its two
triangles), and the rule was checked against that area. Where the repair left out part of what
was drawn (land a ring winds around twice becomes a hole, a spike is dropped:
:func:`~geoconstraints.io.validate.repair_losses`) the outcome could have turned on the missing
part, so a ``pass`` about such a feature is ``not_evaluated`` and its message is why
(``messages.geometry_repair_not_evaluated``: the repair left out part of the drawing; fix the geometry),
never the rule's own not-evaluated words (FLD-002's "floodway not determined" said what had not
happened); a violation, review or info stays, with the sentence ``messages.geometry_repair_lost``.

:func:`repaired_subjects` sets what was repaired for the checks run within it
(:func:`~geoconstraints.rulebook.registry.run_checks` does, from the context's ``layers``);
:meth:`Rule.findings <geoconstraints.rulebook.model.Rule.findings>` reads it
(:func:`mark_repaired`), so a screening's person scope and its parcels table's status columns
see the same statuses.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from geoconstraints.rulebook.render import render_text

RUN_MESSAGES: tuple[str, ...] = ("geometry_repaired", "geometry_repair_lost", "geometry_repair_not_evaluated")
"""The keys of a rulebook file's top-level ``messages`` (sentences about the inputs, not one rule):
``geometry_repaired`` appended to every finding about a feature whose geometry was repaired,
``geometry_repair_lost`` instead where the repair left out part of the drawing, and
``geometry_repair_not_evaluated`` the whole message of a pass about such a feature made
``not_evaluated`` (the reason, first). Templates over ``{subject_layer}`` and ``{subject_id}`` only."""

RUN_MESSAGE_FIELDS: tuple[str, ...] = ("subject_layer", "subject_id")
"""The fields a run-wide message template may use."""


@dataclass(frozen=True)
class Repaired:
    """The repaired features of a run and the sentences saying so.

    Attributes
    ----------
    ids : dict[str, pandas.Index]
        ``role -> ids`` of the features repaired.
    lost : dict[str, numpy.ndarray]
        ``role -> bool`` aligned with ``ids``: the repair left out part of the drawing.
    templates : dict[str, str]
        :data:`RUN_MESSAGES` key -> template.
    """

    ids: dict[str, pd.Index]
    lost: dict[str, np.ndarray]
    templates: dict[str, str]


@dataclass(frozen=True)
class Marks:
    """What :func:`mark_repaired` says of each row of one :meth:`Rule.findings
    <geoconstraints.rulebook.model.Rule.findings>` call (object arrays aligned with its rows).

    Attributes
    ----------
    note : numpy.ndarray
        The sentence appended to the row's message (``geometry_repaired`` or ``geometry_repair_lost``);
        None for a row about a feature not repaired.
    whole : numpy.ndarray
        The row's whole message where a ``pass`` was made ``not_evaluated`` because the repair lost part
        of the drawing (``geometry_repair_not_evaluated``); None elsewhere.
    """

    note: np.ndarray
    whole: np.ndarray


_REPAIRED: ContextVar[Repaired | None] = ContextVar("repaired_subjects", default=None)


@contextmanager
def repaired_subjects(repairs: Mapping[str, Mapping[str, bool]] | None,
                      templates: Mapping[str, str]) -> Iterator[None]:
    """Within the block, the findings about the features of ``repairs`` (``role -> {feature_id:
    lost}``, :attr:`Layers.repairs <geoconstraints.io.layers.Layers.repairs>`) say they rest on a
    repaired geometry (see the module); nothing repaired: the block changes nothing.

    Examples
    --------
    >>> from geoconstraints.rulebook.loader import load_rulebook
    >>> rb = load_rulebook("vestal")
    >>> with repaired_subjects({"landings": {"L2": False}}, rb.messages):
    ...     f = rb["HRV-025"].findings(["violation", "pass"], subject_layer="landings", subject_id=["L1", "L2"],
    ...                                measured=[95.0, 420.5], threshold=150, unit="ft")
    >>> "repaired" in f["message"][0], f["message"][1].endswith("check it in a GIS.")
    (False, True)
    """
    if not repairs or not any(repairs.values()):
        yield
        return
    rep = Repaired({r: pd.Index(list(ids), dtype=object) for r, ids in repairs.items() if ids},
                   {r: np.fromiter(ids.values(), dtype=bool, count=len(ids)) for r, ids in repairs.items() if ids},
                   dict(templates))
    token = _REPAIRED.set(rep)
    try:
        yield
    finally:
        _REPAIRED.reset(token)


def _layers_of(subject_layer: Any, n: int) -> np.ndarray | str:
    """One layer name for every row (a str) or the layer of each row (an object array)."""
    if isinstance(subject_layer, str):
        return subject_layer
    a = np.asarray(subject_layer.to_numpy() if isinstance(subject_layer, pd.Series) else subject_layer,
                   dtype=object)
    if a.ndim == 0:
        return str(a.item())
    return a if len(a) == n else ""


def mark_repaired(status: Any, subject_layer: Any, ids: np.ndarray) -> tuple[Any, Marks | None]:
    """(the status of each row, a ``pass`` about a feature whose repair lost part of its drawing made
    ``not_evaluated``; the :class:`Marks` of the rows for :func:`with_marks`, or None) within
    :func:`repaired_subjects`; outside it, or when no row is about a repaired feature, ``(status,
    None)`` unchanged.

    ``ids`` are the rows' subject ids as text (:meth:`Rule.findings
    <geoconstraints.rulebook.model.Rule.findings>`); each row is looked up once by hashing
    (a county's parcels: one pass per rule, only when a feature was repaired).
    """
    rep = _REPAIRED.get()
    if rep is None or not len(ids):
        return status, None
    n = len(ids)
    layers = _layers_of(subject_layer, n)
    where = np.full(n, -1, dtype=np.int64)
    lost = np.zeros(n, dtype=bool)
    for role, known in rep.ids.items():
        rows = None if isinstance(layers, str) else layers == role
        if isinstance(layers, str) and layers != role:
            continue
        if rows is not None and not rows.any():
            continue
        at = known.get_indexer(pd.Index(ids, dtype=object, copy=False))
        if rows is not None:
            at[~rows] = -1
        found = at >= 0
        if found.any():
            where[found] = at[found]
            lost[found] = rep.lost[role][at[found]]
    hit = np.flatnonzero(where >= 0)
    if not len(hit):
        return status, None
    gone = np.flatnonzero(lost)  # a pass about these is not evaluated: the few rows looked at alone
    passes = gone[:0]
    if len(gone):
        given = status.to_numpy() if isinstance(status, pd.Series) else status
        one = isinstance(given, str) or np.ndim(given) == 0
        passes = gone[[str(given if one else given[i]) == "pass" for i in gone.tolist()]]
        if len(passes):  # a copy of the statuses (the caller's are not changed), as text of any length
            st = np.full(n, str(given), dtype=object) if one else np.array(given, dtype=object)
            st[passes] = "not_evaluated"
            status = st
    note, whole = np.full(n, None, dtype=object), np.full(n, None, dtype=object)
    turned, why = set(passes.tolist()), rep.templates.get("geometry_repair_not_evaluated")
    for i in hit.tolist():  # the repaired features: a handful in a county
        key = "geometry_repair_lost" if lost[i] else "geometry_repaired"
        fields = {"subject_layer": layers if isinstance(layers, str) else str(layers[i]), "subject_id": str(ids[i])}
        note[i] = render_text(rep.templates[key], fields, where=f"rulebook messages.{key}")
        if i in turned and why:  # the pass made not_evaluated: the reason is its message
            whole[i] = render_text(why, fields, where="rulebook messages.geometry_repair_not_evaluated")
    return status, Marks(note, whole)


def with_marks(messages: Any, marks: Marks | None, suffix: str | None = None) -> Any:
    """``messages`` with what :func:`mark_repaired` says of each row: its sentence inserted before
    ``suffix`` (the rule's ``[waived: ...]`` note, with which every composed message ends; ``""``: the
    rule is not waived), and the message of a pass made ``not_evaluated`` replaced by the reason
    (:attr:`Marks.whole`), ``suffix`` kept. Rows whose message is not composed (``""`` or None) stay so.

    ``suffix`` None (not said): each sentence is appended after the whole message, waiver note included,
    and no message is replaced (the waiver note would be lost with it).

    Examples
    --------
    >>> marks = Marks(np.array(["Repaired.", "Repaired.", None, "Lost."], dtype=object),
    ...               np.array([None, None, None, "P4: not evaluated: lost."], dtype=object))
    >>> msgs = np.array(["P1: in the SFHA. [waived: board]", "", "P3: pass. [waived: board]",
    ...                  "P4: not determined. [waived: board]"], dtype=object)
    >>> with_marks(msgs, marks, " [waived: board]").tolist()
    ['P1: in the SFHA. Repaired. [waived: board]', '', 'P3: pass. [waived: board]', 'P4: not evaluated: lost. [waived: board]']
    >>> with_marks(np.array(["P1: in the SFHA.", "P4: not determined."], dtype=object),
    ...            Marks(marks.note[[0, 3]], marks.whole[[0, 3]]), "").tolist()
    ['P1: in the SFHA. Repaired.', 'P4: not evaluated: lost.']
    """
    if marks is None:
        return messages
    out = np.array(messages, dtype=object, copy=True)
    for i in np.flatnonzero(marks.note != None).tolist():  # an object array: compared row by row
        if not out[i]:
            continue
        if suffix is None:
            out[i] = f"{out[i]} {marks.note[i]}"
            continue
        body = out[i][: len(out[i]) - len(suffix)] if suffix and out[i].endswith(suffix) else out[i]
        tail = out[i][len(body):]
        out[i] = f"{marks.whole[i]}{tail}" if marks.whole[i] is not None else f"{body} {marks.note[i]}{tail}"
    return out
