"""Project files (TOML): which file, layer, id and fields fill each role, the DEM, the working
CRS and the rulebook, checked against a schema (pydantic v2) before anything is read.

```toml
crs = "EPSG:2261"                 # optional working CRS (projected, feet)
rulebook = "vestal"               # optional: used when --rulebook is not given
dem = "lidar.tif"                 # or [dem] path = "lidar.tif", z_units = "ft"
[layers.parcels]
path = "tax_parcels.shp"          # relative to this file; a GDAL virtual path or URL as given
id = "PRINTKEY"
fields = { zoning = "ZONE_CD" }
[layers]
flood_zones = "nfhl.gpkg:S_FLD_HAZ_AR"   # a role may be just its PATH[:LAYER]
```

A key the schema does not know (a typo such as ``[layer.parcels]``), a value of the wrong type
(``parcels = 5``) or a number where text belongs (TOML's ``nan`` and ``inf`` included) is refused
with one line naming the file, the key and the fix.
"""

from __future__ import annotations

import difflib
import os
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from geoconstraints.errors import InputError
from geoconstraints.io.paths import is_virtual, read_small_text
from geoconstraints.io.roles import ROLES

_Text = Annotated[str, Field(strict=True, min_length=1)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, hide_input_in_errors=True)


class LayerSpec(_Strict):
    """One role's layer: a file (or PostGIS URL), its layer, id field and field mapping."""

    path: _Text
    layer: _Text | None = None
    id: _Text | None = None
    fields: dict[_Text, _Text] = {}
    table: _Text | None = None
    geometry: _Text | None = None
    where: Any = None  # refused with its own message (free SQL)


class DemSpec(_Strict):
    """The DEM: its file and, when its metadata does not say, its vertical units."""

    path: _Text
    z_units: Literal["ft", "m"] | None = None


class Project(_Strict):
    """A project file."""

    crs: _Text | Annotated[int, Field(strict=True, gt=0)] | None = None
    rulebook: _Text | None = None
    dem: _Text | DemSpec | None = None
    title: _Text | None = None
    notes: _Text | None = None
    layers: dict[str, _Text | LayerSpec] = {}


PROJECT_KEYS = tuple(Project.model_fields)


def _data_loc(loc: tuple[Any, ...], data: Any) -> tuple[list[Any], Any]:
    """The part of a pydantic ``loc`` that is a path in ``data`` (union members pydantic tried,
    ``str``, ``LayerSpec``..., dropped) and the value found there."""
    path, cur = [], data
    for p in loc:
        if isinstance(cur, dict) and p in cur:
            path.append(p)
            cur = cur[p]
    return path, cur


def _best(errors: list[dict[str, Any]], data: Any) -> dict[str, Any]:
    """The error to report: for a table the error inside it (not "is not text"), else the first."""
    for err in errors:
        _, value = _data_loc(err["loc"], data)
        inside = isinstance(value, dict) or err["type"] in ("extra_forbidden", "literal_error", "missing")
        if inside and err["type"] != "string_type":
            return err
    return errors[0]


def _message(err: dict[str, Any], data: dict[str, Any]) -> str:
    loc, got = _data_loc(err["loc"], data)
    typ = err["type"]
    if typ == "extra_forbidden":
        parent, key = loc[:-1], str(loc[-1])
        if not parent:
            options: tuple[str, ...] = PROJECT_KEYS
        elif parent[0] == "layers":
            options = tuple(k for k in LayerSpec.model_fields if k != "where")
        else:
            options = tuple(DemSpec.model_fields)
        close = difflib.get_close_matches(key, options, n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        table = "[" + ".".join(map(str, parent)) + "] " if parent else ""
        return f"{table}unknown key {key!r}{hint}; keys are {', '.join(options)}"
    if typ == "missing":
        where = "[" + ".".join(map(str, loc)) + "]"
        return f"{where} needs {err['loc'][-1]} = \"...\""
    key = ".".join(map(str, loc))
    if len(loc) == 2 and loc[0] == "layers":
        return (f"{key} = {got!r} is not a layer: give {loc[1]} = \"FILE[:LAYER]\" under [layers], or a table "
                f"[layers.{loc[1]}] with path = \"FILE\"")
    if typ == "literal_error":
        return f"{key} = {got!r} is not one of ft, m"
    if loc == ["dem"]:
        return f"dem = {got!r} is not a path: give dem = \"FILE.tif\" or a [dem] table with path and z_units"
    return f"{key} = {got!r} is not text in quotes"


def parse_project(text: str, where: str) -> Project:
    """The project file's text, checked; InputError naming ``where`` and the key."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"project file {where}: not valid TOML ({exc}). Fix the file") from None
    except RecursionError:
        raise InputError(f"project file {where}: nested too deeply to be a project file. Fix the file") from None
    try:
        project = Project.model_validate(data)
    except ValidationError as exc:
        errors = [dict(e) for e in exc.errors(include_url=False)]
        raise InputError(f"project file {where}: {_message(_best(errors, data), data)}. Fix the file") from None
    unknown = [r for r in project.layers if r not in ROLES]
    if unknown:
        close = difflib.get_close_matches(unknown[0], list(ROLES), n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise InputError(f"project file {where}: unknown role {unknown[0]!r}{hint}; roles are {', '.join(ROLES)}")
    return project


def read_project(path: Path) -> Project:
    """Read and check a project file (a regular file of at most 1 MiB)."""
    return parse_project(read_small_text(path, "project file"), str(path))


def beside(base: Path, value: str) -> str:
    """``value`` as a path relative to ``base`` (a GDAL virtual path, URL or absolute path as is)."""
    if is_virtual(value) or os.path.isabs(value) or "://" in value:
        return value
    return str(base / value)


def dem_setting(project: Project, base: Path) -> dict[str, Any]:
    """``{"path": ..., "z_units": ...}`` of the project's DEM ({} when it has none).

    ``dem = "lidar.tif"`` is the DEM's path, like ``[dem] path = "lidar.tif"``.
    """
    if project.dem is None:
        return {}
    spec = DemSpec(path=project.dem) if isinstance(project.dem, str) else project.dem
    return {"path": beside(base, spec.path), "z_units": spec.z_units}
