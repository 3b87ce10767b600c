"""geoconstraints.parallel: threads for vectorized geometry work, answers in order and the same as one thread."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import shapely
from shapely.geometry import Polygon, box

from geoconstraints.errors import InputError
from geoconstraints.parallel import chunked, parallel_map


def test_parallel_map_keeps_order_and_refuses_zero_workers():
    assert parallel_map(lambda x: x * x, list(range(50)), workers=2) == [x * x for x in range(50)]
    with pytest.raises(InputError, match="workers must be 1 or more"):
        parallel_map(abs, [1, 2], workers=0)


def test_chunked_is_the_whole_array_in_order_on_threads():
    # 7 values in chunks of at least 2 on 3 workers: 3 chunks (3, 2, 2 values), each on a pool thread
    names: list[str] = []

    def fn(a):
        names.append(threading.current_thread().name)
        return a * 10

    out = chunked(fn, np.arange(7), workers=3, min_chunk=2)
    assert out.tolist() == [0, 10, 20, 30, 40, 50, 60]
    assert len(names) == 3 and all(n.startswith("gc-overlay") for n in names)
    # below two chunks' worth, or one worker: one call here, on the array itself
    names.clear()
    assert chunked(fn, np.arange(3), workers=3, min_chunk=2).tolist() == [0, 10, 20] and names == ["MainThread"]
    names.clear()
    assert chunked(fn, np.arange(9), workers=1, min_chunk=2).tolist() == list(range(0, 90, 10)) and len(names) == 1
    assert chunked(fn, np.arange(0), workers=2).tolist() == []


def test_chunked_validity_is_shapelys():
    # a bow tie (invalid) every 5th geometry among boxes: the same flags as one call
    bow = Polygon([(0, 0), (1, 1), (1, 0), (0, 1)])
    geoms = np.array([bow if i % 5 == 0 else box(i, 0, i + 1, 1) for i in range(1000)], dtype=object)
    flags = chunked(shapely.is_valid, geoms, workers=2, min_chunk=100)
    assert flags.dtype == bool and np.array_equal(flags, shapely.is_valid(geoms)) and int((~flags).sum()) == 200


def test_chunked_constructive_operations_are_shapelys_bit_for_bit():
    # the map's simplified places are computed in chunks on threads (centroids: any caller's): the same
    # geometries, coordinate for coordinate, as one call
    from functools import partial

    rng = np.random.default_rng(3)
    pts = rng.uniform(0, 1000, (2000, 12, 2))
    geoms = shapely.buffer(shapely.linestrings(pts), 3.0, quad_segs=4)
    for fn in (shapely.centroid, partial(shapely.simplify, tolerance=2.0, preserve_topology=True)):
        one = shapely.to_wkb(fn(geoms))
        assert np.array_equal(shapely.to_wkb(chunked(fn, geoms, workers=2, min_chunk=300)), one)
