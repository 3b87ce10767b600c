"""Where the bundled sample town lives (``data/sample/`` in the source tree).
"""

from __future__ import annotations

import os
from pathlib import Path

from geoconstraints.errors import LayerReadError


def sample_dir() -> Path:
    """The sample data folder: ``$GEOCONSTRAINTS_SAMPLE`` or ``data/sample`` of the checkout."""
    env = os.environ.get("GEOCONSTRAINTS_SAMPLE")
    if env:
        return Path(env)
    here = Path(__file__).resolve()
    for parent in here.parents:
        cand = parent / "data" / "sample"
        if (cand / "vestal_sample.gpkg").exists():
            return cand
    raise LayerReadError(
        "sample data not found: run from a checkout of geoconstraints (data/sample/) or set "
        "GEOCONSTRAINTS_SAMPLE to the folder; regenerate it with python scripts/make_sample.py"
    )


def sample_path(name: str = "vestal_sample.gpkg") -> Path:
    """Path of a file of the sample town (``vestal_sample.gpkg``, ``dem.tif``, ``rainfall.csv``...)."""
    return sample_dir() / name

