"""What the outputs say was read beyond :meth:`Result.provenance <geoconstraints.result.Result.provenance>`:
the layers of the input GeoPackages a run did not read, and the rulebook file(s) it applied with the
SHA-256 they had when they were loaded. provenance.json (``inputs_not_read``, ``rulebook_sha256``,
``rulebook_files``) and the provenance section of report.html / report.pdf say the same.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from geoconstraints.errors import GeoConstraintsError
from geoconstraints.io.postgis import is_db_source
from geoconstraints.io.sources import list_layers
from geoconstraints.result import Result
from geoconstraints.rulebook.model import Rulebook


def layers_not_read(result: Result) -> list[dict[str, str]]:
    """The layers of the run's input GeoPackages that it did not read (``inputs_not_read`` of
    provenance.json): ``{"file", "path", "layer"}`` each, in the file's order.

    ``inputs`` lists every layer read, with its role (a command reads every layer named by a role
    unless told which, ``load_layers(..., roles=...)``); a layer named by no role (``notes``,
    QGIS's ``layer_styles``) or one left out by ``roles`` is read by no check and drawn in no
    output: it is named here, so that the file's SHA-256 in ``inputs`` is not taken for a
    statement about every layer in it. Only local GeoPackages (``.gpkg``) are looked into; a file
    that can no longer be opened is skipped.
    """
    if result.layers is None:
        return []
    read: dict[str, set[str]] = {}
    for info in result.layers.info.values():
        path = str(info.path)
        if is_db_source(path) or path == "GeoDataFrame" or Path(path).suffix.lower() != ".gpkg":
            continue
        read.setdefault(path, set()).add(str(info.layer or ""))
    out: list[dict[str, str]] = []
    for path, names in read.items():
        if not Path(path).is_file():
            continue
        try:
            present = list_layers(Path(path))
        except GeoConstraintsError:
            continue
        out += [{"file": Path(path).name, "path": path, "layer": n} for n in present if n not in names]
    return out


def rulebook_files(rulebook: Rulebook) -> list[dict[str, Any]]:
    """The rulebook file(s) a run applied, each with its size and SHA-256 (``rulebook_files`` of
    provenance.json; ``rulebook_sha256`` is the first one's): the file named (a user's YAML file, or
    a bundled rulebook's inside the package, ``bundled``), then in turn each file it ``extends``.

    Hashed when the rulebook was loaded (:attr:`Rulebook.files
    <geoconstraints.rulebook.model.Rulebook.files>`: the bytes hashed are the bytes parsed), so a file
    edited between loading and writing the outputs is not misreported. A rulebook made in code (not
    read from a file) lists none.

    Examples
    --------
    >>> from geoconstraints.rulebook.loader import load_rulebook
    >>> [(f["rulebook"], f["bundled"], len(f["sha256"])) for f in rulebook_files(load_rulebook("vestal"))]
    [('vestal', True, 64)]
    """
    return [dict(f) for f in rulebook.files]


__all__ = ["layers_not_read", "rulebook_files"]
