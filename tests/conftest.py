"""Shared fixtures (kept small; modules add their own fixtures in their own files)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from click.testing import CliRunner

import geoconstraints as gc
from geoconstraints.commands import check_harvest


@pytest.fixture
def runner() -> CliRunner:
    """A click test runner (stdout and stderr kept apart: ``result.stdout`` / ``result.stderr``)."""
    return CliRunner()


@pytest.fixture(scope="module")
def sample_harvest():
    """The harvest check of the sample town with its DEM (``geoconstraints harvest`` on data/sample/),
    once per test module: the Result the output tests (site plan, field files, plots) draw."""
    layers = gc.load_layers(gc.sample_path("vestal_sample.gpkg"), dem=gc.sample_path("dem.tif"))
    return check_harvest(layers, gc.load_rulebook("vestal"))


def tree_hashes(folder: Path) -> dict[Path, str]:
    """SHA-256 of every file under ``folder`` (to show that no input changed)."""
    return {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*")) if p.is_file()}


def pg_url() -> str:
    """The URL of the test PostGIS (set by scripts/postgis.sh); fail, never skip, without it."""
    import os

    url = os.environ.get("GEOCONSTRAINTS_PG_URL")
    if not url:
        pytest.fail("GEOCONSTRAINTS_PG_URL is not set: run `eval \"$(bash scripts/postgis.sh)\"` (installs and "
                    "starts a throwaway PostgreSQL + PostGIS on 127.0.0.1:55432 and exports the URL) and rerun")
    return url


@pytest.fixture
def dem_warnings():
    """The messages the DEM reader logs at WARNING (attached to its own logger: the CLI's logging
    set-up, run earlier in the same process, stops propagation at ``geoconstraints``)."""
    import logging

    records: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record):
            records.append(record.getMessage())

    log = logging.getLogger("geoconstraints.io.dem")
    handler, level = Keep(logging.WARNING), log.level
    log.addHandler(handler)
    log.setLevel(logging.WARNING)
    yield records
    log.removeHandler(handler)
    log.setLevel(level)
