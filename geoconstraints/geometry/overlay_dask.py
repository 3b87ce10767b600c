"""The overlay engine on a dask cluster (optional extra ``[dask]``: dask-geopandas + distributed).

:func:`overlay_areas_dask` computes the same table as
:func:`geoconstraints.geometry.overlay.overlay_areas`, row for row: the subjects are sorted along
a Hilbert curve and partitioned with dask-geopandas (each partition a compact patch of the map),
every partition runs :func:`~geoconstraints.geometry.overlay.overlay_chunk` against the same
tiled cover on a worker, and the rows come back sorted by subject and key. It runs on an
existing cluster (``scheduler="tcp://HOST:8786"``; the workers need geoconstraints installed) or,
without one, on a local cluster of worker processes started for the call.

dask is imported only when this engine is used, through :func:`dask_modules`, which says how to
install the extra when it is missing.
"""

from __future__ import annotations

import contextlib
import logging
import warnings
from collections.abc import Iterator
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd

from geoconstraints.errors import InputError
from geoconstraints.geometry.overlay import (
    CoverIndex,
    OverlayParams,
    overlay_areas,
    overlay_chunk,
)
from geoconstraints.parallel import worker_count

log = logging.getLogger(__name__)

DASK_INSTALL = "pip install 'geoconstraints[dask]'"
"""How to install the dask engine's dependencies."""

CONNECT_TIMEOUT_S = 20
"""Seconds to wait for a dask scheduler given by address."""


def dask_modules() -> tuple[Any, Any, Any]:
    """``(dask, dask_geopandas, distributed)``, or an InputError saying how to install them."""
    try:
        import dask
        import dask_geopandas
        import distributed
    except ImportError as exc:
        raise InputError(f"the dask engine needs dask-geopandas and distributed ({exc.name or 'dask'} is not "
                         f"installed). Install them with: {DASK_INSTALL}") from None
    return dask, dask_geopandas, distributed


@contextlib.contextmanager
def dask_client(scheduler: str | None = None, workers: int | None = None) -> Iterator[Any]:
    """A ``distributed.Client``: to ``scheduler`` when given, else to a local cluster started here.

    The local cluster has ``workers`` worker processes (default: one per core) of one thread
    each, listens on 127.0.0.1 only and has no dashboard; it is closed on exit.
    """
    _, _, distributed = dask_modules()
    if scheduler:
        try:
            client = distributed.Client(scheduler, timeout=CONNECT_TIMEOUT_S)
        except (OSError, TimeoutError, ValueError) as exc:
            raise InputError(f"--scheduler {scheduler}: cannot connect to the dask scheduler "
                             f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}). Check the address "
                             f"(tcp://HOST:8786) and that the scheduler is running") from None
        try:
            yield client
        finally:
            client.close()
        return
    n = worker_count(workers)
    with distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        yield client


def _partition_overlay(part: gpd.GeoDataFrame, cover: CoverIndex, params: OverlayParams) -> pd.DataFrame:
    """One partition's rows (runs on a worker)."""
    return overlay_chunk(np.asarray(part.geometry.values, dtype=object), part["subject"].to_numpy(), cover, params)


def overlay_areas_dask(subjects: np.ndarray | gpd.GeoSeries, cover: CoverIndex, *, workers: int | None = None,
                       scheduler: str | None = None, client: Any = None, **kw: Any) -> pd.DataFrame:
    """:func:`~geoconstraints.geometry.overlay.overlay_areas` on a dask cluster (same rows, same order).

    Parameters
    ----------
    subjects, cover
        As for :func:`~geoconstraints.geometry.overlay.overlay_areas`.
    workers : int, optional
        Worker processes of the local cluster when no ``scheduler`` is given (default: one per core).
    scheduler : str, optional
        Address of a running dask scheduler (``tcp://10.0.0.5:8786``).
    client : distributed.Client, optional
        A client to use (from :func:`dask_client`), instead of connecting or starting a cluster
        for this call.
    **kw
        ``tolerance_ft``, ``min_area_sqft``, ``keep_geometry`` and ``chunk_size`` (subjects per dask
        partition), as for :func:`~geoconstraints.geometry.overlay.overlay_areas`.

    Returns
    -------
    DataFrame
        The overlay table (see :func:`~geoconstraints.geometry.overlay.overlay_areas`).

    Raises
    ------
    InputError
        dask-geopandas or distributed not installed (the message gives the install command), or
        the scheduler cannot be reached.
    """
    dask_modules()  # missing: say how to install, before any work

    def run(geoms: np.ndarray, chunks: list[np.ndarray], cover: CoverIndex, params: OverlayParams) -> list:
        return _run_partitions(geoms, chunks, cover, params, client=client, scheduler=scheduler, workers=workers)

    return overlay_areas(subjects, cover, run=run, **kw)


def _run_partitions(geoms: np.ndarray, chunks: list[np.ndarray], cover: CoverIndex, params: OverlayParams, *,
                    client: Any, scheduler: str | None, workers: int | None) -> list[pd.DataFrame]:
    """The chunks' overlay tables, one dask-geopandas partition per chunk, computed on the cluster."""
    dask, dask_geopandas, _ = dask_modules()
    order = np.concatenate(chunks)
    frame = gpd.GeoDataFrame({"subject": order}, geometry=gpd.GeoSeries(geoms[order]))
    parts = dask_geopandas.from_geopandas(frame, npartitions=len(chunks), sort=False).to_delayed()
    with contextlib.ExitStack() as stack:
        if client is None:
            client = stack.enter_context(dask_client(scheduler, workers))
        shared = client.scatter(cover, broadcast=True)  # the tiles go to each worker once
        tasks = [dask.delayed(_partition_overlay)(p, shared, params) for p in parts]
        log.info("dask overlay: %d subjects in %d partitions on %s", len(geoms), len(tasks), client.scheduler.address)
        with warnings.catch_warnings():  # the partitions travel in the graph: they are in memory here
            warnings.filterwarnings("ignore", message="Sending large graph", category=UserWarning)
            return client.gather(client.compute(tasks))
