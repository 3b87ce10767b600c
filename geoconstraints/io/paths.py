"""What an input path may be: a regular file (or a folder GDAL reads as one dataset, a File
Geodatabase), a GDAL virtual path (``/vsizip/``, ``/vsicurl/``...) or a URL, which GDAL reads
itself; never a pipe, device or socket (a FIFO would hang the run, ``/dev/zero`` fill memory).
Small text inputs (project files, rulebooks) are read with a size limit.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from pathlib import Path

from geoconstraints.errors import InputError, LayerReadError

MAX_TEXT_BYTES = 1 << 20
"""Largest project file or rulebook read (1 MiB; the shipped Vestal rulebook is 71 kB)."""

VSI_PREFIX = "/vsi"
_URL = re.compile(r"(?i)^(https?|ftp)://")
_DATASET_DIRS = (".gdb",)
"""Folders that are one dataset to GDAL (an Esri File Geodatabase)."""


def is_virtual(text: str | os.PathLike[str]) -> bool:
    """True for a GDAL virtual path (``/vsizip/a.zip/b.shp``) or a URL (``https://...``).

    Examples
    --------
    >>> is_virtual("/vsizip/town.zip/parcels.shp"), is_virtual("https://x.org/a.geojson"), is_virtual("a.gpkg")
    (True, True, False)
    """
    s = os.fspath(text)
    return s.startswith(VSI_PREFIX) or bool(_URL.match(s))


def gdal_path(text: str) -> str:
    """The path GDAL should open: a URL becomes ``/vsicurl/URL``; anything else as given.

    Examples
    --------
    >>> gdal_path("https://x.org/a.geojson"), gdal_path("/vsizip/t.zip/p.shp")
    ('/vsicurl/https://x.org/a.geojson', '/vsizip/t.zip/p.shp')
    """
    return f"/vsicurl/{text}" if _URL.match(text) else text


def split_virtual_layer(text: str) -> tuple[str, str | None]:
    """Split ``VIRTUAL:LAYER``: a trailing ``:NAME`` without a slash is a layer name (a URL's
    ``host:port/`` colon is followed by a slash, so it is never taken for one).

    Examples
    --------
    >>> split_virtual_layer("/vsizip/t.zip/town.gpkg:parcels")
    ('/vsizip/t.zip/town.gpkg', 'parcels')
    >>> split_virtual_layer("http://127.0.0.1:9/parcels.geojson")
    ('http://127.0.0.1:9/parcels.geojson', None)
    """
    head, sep, tail = text.rpartition(":")
    if sep and tail and "/" not in tail and not _URL.fullmatch(text[: len(head) + 3]) and "/" in head:
        return head, tail
    return text, None


def local_archive(text: str) -> Path | None:
    """The local file inside a ``/vsizip/``, ``/vsitar/`` or ``/vsigzip/`` path (None otherwise)."""
    m = re.match(r"^/vsi(?:zip|tar|gzip|7z)/(.+?\.(?:zip|tar|tgz|tar\.gz|gz|7z))(?:/|$)", text, re.IGNORECASE)
    return Path(m.group(1)) if m else None


def check_file(path: Path, what: str, *, allow_empty: bool = False) -> None:
    """Refuse a path that is missing, empty, a folder (but a File Geodatabase) or a special file.

    Parameters
    ----------
    path : Path
    what : str
        What it is for the message (``layer parcels (town.gpkg)``, ``project file``).
    """
    what = "" if what == str(path) else f"{what}: "  # do not name the file twice
    try:
        st = path.stat()
    except FileNotFoundError:
        raise LayerReadError(f"{what}file {path} does not exist. Check the path") from None
    except OSError as exc:  # permission, name too long, a loop of links
        raise LayerReadError(f"{what}{path} cannot be opened ({exc.strerror or exc}). Check the path") from None
    if stat.S_ISDIR(st.st_mode):
        if path.suffix.lower() in _DATASET_DIRS:
            return
        raise LayerReadError(f"{what}{path} is a folder, not a data file. Give the file inside it")
    if not stat.S_ISREG(st.st_mode):
        raise LayerReadError(f"{what}{path} is not a regular file ({_kind(st.st_mode)}). Give a data file saved "
                             f"on disk")
    if st.st_size == 0 and not allow_empty:
        raise LayerReadError(f"{what}file {path} is empty (0 bytes). Export the layer again")
    if not os.access(path, os.R_OK):
        raise LayerReadError(f"{what}file {path} cannot be read (permission denied). Check its permissions")


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a file"


def read_small_bytes(path: Path, what: str, *, limit: int = MAX_TEXT_BYTES,
                     error: type[InputError] = InputError) -> bytes:
    """The bytes of a small input file (project file, rulebook), refused over ``limit`` bytes.

    Only regular files are read (a pipe or ``/dev/zero`` is refused before it is opened), and
    never more than ``limit + 1`` bytes.
    """
    try:
        check_file(path, what, allow_empty=True)
    except LayerReadError as exc:
        raise error(str(exc)) from None
    try:
        with open(path, "rb") as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        raise error(f"{what} {path}: cannot be read ({exc.strerror or exc})") from None
    if len(data) > limit:
        raise error(f"{what} {path}: larger than {limit // 1024} kB, the most read for such a file. "
                    f"Is it the right file?")
    return data


def decode_text(data: bytes, where: str, *, error: type[InputError] = InputError) -> str:
    """``data`` as UTF-8 text (a byte-order mark dropped); ``error`` naming ``where`` and the first bad byte.

    Examples
    --------
    >>> decode_text(bytes([0xEF, 0xBB, 0xBF]) + b"rules: []", "rulebook x.yaml")
    'rules: []'
    """
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(f"{where}: not UTF-8 text (byte {exc.start}). Save it as UTF-8") from None


def read_small_text(path: Path, what: str, *, limit: int = MAX_TEXT_BYTES,
                    error: type[InputError] = InputError) -> str:
    """The UTF-8 text of a small input file (:func:`read_small_bytes`, :func:`decode_text`)."""
    return decode_text(read_small_bytes(path, what, limit=limit, error=error), f"{what} {path}", error=error)


def sha256_file(path: str | os.PathLike[str]) -> str:
    """SHA-256 of a file (hex), read in 1 MiB blocks so a county-sized file never sits in memory.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile(delete=False) as fh:
    ...     _ = fh.write(b"abc")
    >>> sha256_file(fh.name)[:16]
    'ba7816bf8f01cfea'
    """
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
