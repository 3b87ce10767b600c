"""Shared fixtures (kept small; modules add their own fixtures in their own files)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from click.testing import CliRunner


@pytest.fixture
def runner() -> CliRunner:
    """A click test runner (stdout and stderr kept apart: ``result.stdout`` / ``result.stderr``)."""
    return CliRunner()


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
