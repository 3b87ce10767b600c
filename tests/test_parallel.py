"""geoconstraints.parallel: threads for vectorized geometry work, answers in order and the same as one thread."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
import shapely
from shapely.geometry import Polygon, box

from geoconstraints.errors import InputError
from geoconstraints.parallel import BACKGROUND_NICE, Background, chunked, lower_priority, parallel_map


def test_parallel_map_keeps_order_and_refuses_zero_workers():
    assert parallel_map(lambda x: x * x, list(range(50)), workers=2) == [x * x for x in range(50)]
    with pytest.raises(InputError, match="workers: 0 is less than 1; give a whole number of 1 or more"):
        parallel_map(abs, [1, 2], workers=0)


@pytest.mark.parametrize(("workers", "why"), [(True, "a yes/no value"), (2.5, "not a whole number"),
                                              (float("nan"), "not a finite number"), ("two", "not a number")])
def test_worker_counts_and_chunk_sizes_are_whole_numbers(workers, why):
    # before: workers=2.5 ran on 2 threads and True on 1; chunk_size=2.5 failed inside range(), True read as 1
    from geoconstraints.geometry.overlay import CoverIndex, overlay_areas

    with pytest.raises(InputError, match=f"workers: .*{why}"):
        parallel_map(abs, [1, 2], workers=workers)
    with pytest.raises(InputError, match=f"workers: .*{why}"):
        Background(abs, [1, 2], workers=workers)
    cover = CoverIndex.build([("zone", [box(0, 0, 10, 10)])])
    with pytest.raises(InputError, match=f"chunk_size: .*{why}"):
        overlay_areas([box(5, 0, 15, 10)], cover, tolerance_ft=1.0, min_area_sqft=1.0, chunk_size=workers)
    assert parallel_map(abs, [-1, 2], workers=np.int64(2)) == [1, 2]  # numpy's whole numbers are numbers


@pytest.mark.parametrize("workers", [1, 2])
def test_parallel_map_raises_a_swallowed_signal_after_its_item_and_begins_no_more(workers):
    # a Ctrl-C whose exception a library cleared inside an item (geoconstraints.interrupt): raised in this thread
    # once that item's answer is in; of 40 items at most the ones already begun run
    from geoconstraints import interrupt

    begun: list[int] = []

    def fn(x):
        begun.append(x)
        if x == 0:
            interrupt.raised(KeyboardInterrupt())
        time.sleep(0.01)
        return x

    try:
        with pytest.raises(KeyboardInterrupt):
            parallel_map(fn, list(range(40)), workers=workers)
    finally:
        interrupt.forget()
    assert 0 in begun and len(begun) <= 1 + 2 * workers


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


# ------------------------------------------------------------------------------------------
# Background: begun on threads of the lowest priority, finished by result()


def _nice_of_this_thread() -> int:
    import os

    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


def test_background_gives_the_items_in_order_and_runs_them_on_low_priority_threads(monkeypatch):
    import sys

    seen: dict[str, int] = {}
    lock = threading.Lock()

    def square(x: int) -> int:
        with lock:
            seen[threading.current_thread().name] = _nice_of_this_thread()
        return x * x

    mine = _nice_of_this_thread()
    job = Background(square, list(range(50)), workers=2)
    deadline = time.monotonic() + 10
    while not any(n.startswith("gc-background") for n in seen) and time.monotonic() < deadline:
        time.sleep(0.005)  # a background thread has done an item (not result() all of them)
    assert job.result() == [x * x for x in range(50)]
    assert _nice_of_this_thread() == mine  # the caller's thread keeps its priority
    background = {name: nice for name, nice in seen.items() if name.startswith("gc-background")}
    assert background
    if sys.platform.startswith("linux"):
        assert all(nice == max(BACKGROUND_NICE, mine) for nice in background.values())
    assert Background(square, [], workers=2).result() == []
    with pytest.raises(InputError, match="workers"):
        Background(square, [1], workers=0)


def test_lower_priority_changes_only_the_calling_thread():
    import sys

    mine = _nice_of_this_thread()
    got: list[tuple[bool, int]] = []

    def lower() -> None:
        got.append((lower_priority(), _nice_of_this_thread()))

    t = threading.Thread(target=lower)
    t.start()
    t.join()
    assert _nice_of_this_thread() == mine
    if sys.platform.startswith("linux"):
        assert got == [(True, max(BACKGROUND_NICE, mine))]


def test_background_result_does_not_wait_for_starved_threads():
    # the background threads never get to finish what they begin (they block until the test ends): result()
    # computes every item itself, the ones they began included, and gives each item's answer
    release = threading.Event()
    began: list[int] = []

    def slow_in_background(x: int) -> int:
        if threading.current_thread().name.startswith("gc-background"):
            began.append(x)
            release.wait(30)
        return -x

    job = Background(slow_in_background, list(range(6)), workers=2)
    while len(began) < 2:  # both background threads hold an item
        threading.Event().wait(0.01)
    try:
        assert job.result() == [0, -1, -2, -3, -4, -5]
    finally:
        release.set()
    assert sorted(began) == [0, 1]  # they began the first two; result() did all the rest


def test_background_errors_are_raised_by_result_and_cancel_begins_nothing_more():
    def boom(x: int) -> int:
        if x == 3:
            raise ValueError("item 3 is bad")
        return x

    with pytest.raises(ValueError, match="item 3 is bad"):
        Background(boom, list(range(8)), workers=2).result()
    ran: list[int] = []
    gate = threading.Event()

    def record(x: int) -> int:
        if threading.current_thread().name.startswith("gc-background"):
            gate.wait(30)
        ran.append(x)
        return x

    job = Background(record, list(range(10)), workers=1)
    job.cancel()
    gate.set()
    assert job.result() == list(range(10))  # result() still computes everything not done
    assert len(ran) <= 11  # the one item the background thread had begun may have run twice


def test_background_error_is_raised_without_computing_the_rest():
    # an item failing in the background fails the job: result() raises it at once instead of first computing
    # every item no thread had begun (a failing screening's remaining stream-distance chunks)
    calls: list[int] = []

    def boom(x: int) -> int:
        calls.append(x)
        if x == 0:
            raise ValueError("item 0 is bad")
        return x

    job = Background(boom, list(range(20)), workers=1)
    deadline = time.monotonic() + 30
    while job._error is None and time.monotonic() < deadline:
        time.sleep(0.01)
    with pytest.raises(ValueError, match="item 0 is bad"):
        job.result()
    assert calls == [0]  # the background thread stopped at the error; result() computed nothing
