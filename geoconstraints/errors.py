"""One exception hierarchy with messages a GIS clerk understands.

Every error raised on purpose by geoconstraints derives from :class:`GeoConstraintsError`.
Subclasses also inherit the matching built-in (``ValueError``, ``OSError``, ``KeyError``)
so generic ``except`` clauses keep working. The CLI turns any of them into a single line
on stderr and exit code 2.

A message names *what* (layer, feature, field or file), *what is wrong*, and *the fix*.
"""

from __future__ import annotations


class GeoConstraintsError(Exception):
    """Root of every error geoconstraints raises on purpose."""

    exit_code = 2


class InputError(GeoConstraintsError, ValueError):
    """A user input (layer, field, option, value) is unusable as given."""


class LayerReadError(InputError, OSError):
    """A file or layer cannot be opened or read (missing, corrupt, zero bytes)."""


class CRSError(InputError):
    """A layer has no CRS, a geographic CRS where feet are needed, or mismatching CRSs."""


class FieldError(InputError, KeyError):
    """A required attribute field is missing or holds unusable values."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class GeometryError(InputError):
    """Geometries of the wrong type, empty layers, or geometries that cannot be repaired."""


class DemError(InputError):
    """A DEM cannot be used: unknown vertical units, no CRS, off the plan, unreadable."""


class RulebookError(InputError):
    """A rulebook cannot be found or is malformed."""


class OutputError(GeoConstraintsError, OSError):
    """An output cannot be written where asked (folder is a file, would overwrite an input)."""


class MissingToolError(OutputError):
    """A library or system package one optional output needs is not installed (WeasyPrint's
    pango for report.pdf): that output is left out with a warning saying how to install it."""
