"""Where the bundled sample town lives: package data ``geoconstraints/sampledata/`` (in a
checkout a link to ``data/sample/``, in a wheel the files themselves), so :func:`sample_path`
works from an installed package as well as from a checkout.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

from geoconstraints.errors import LayerReadError

_MARKER = "vestal_sample.gpkg"


def sample_dir() -> Path:
    """The sample data folder: ``$GEOCONSTRAINTS_SAMPLE``, else the package data, else
    ``data/sample`` of a checkout above the package."""
    env = os.environ.get("GEOCONSTRAINTS_SAMPLE")
    if env:
        return Path(env)
    packaged = Path(str(resources.files("geoconstraints") / "sampledata"))
    if (packaged / _MARKER).is_file():
        return packaged
    for parent in Path(__file__).resolve().parents:
        cand = parent / "data" / "sample"
        if (cand / _MARKER).is_file():
            return cand
    raise LayerReadError(
        "sample data not found: it ships as package data (geoconstraints/sampledata); reinstall "
        "geoconstraints, or set GEOCONSTRAINTS_SAMPLE to the folder (regenerate it with python "
        "scripts/make_sample.py)"
    )


def sample_path(name: str = _MARKER) -> Path:
    """Path of a file of the sample town (``vestal_sample.gpkg``, ``dem.tif``, ``rainfall.csv``...).

    Examples
    --------
    >>> sample_path().name, sample_path("dem.tif").is_file()
    ('vestal_sample.gpkg', True)
    """
    return sample_dir() / name
