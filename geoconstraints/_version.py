"""The installed version of geoconstraints."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("geoconstraints")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.1.0+src"
