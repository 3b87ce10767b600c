"""Threads for vectorized geometry work: shapely 2 releases the GIL inside its operations, so a
pool of threads uses every core without copying the inputs into other processes.

The overlay engine (:mod:`geoconstraints.geometry.overlay`) maps its spatial chunks with
:func:`parallel_map`; loading (:mod:`geoconstraints.io.validate`) checks a county's geometries with
:func:`chunked`; a screening measures its stream distances with :class:`Background` while it
overlays and checks the parcels.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from geoconstraints import interrupt
from geoconstraints.errors import InputError
from geoconstraints.units import number_problem

MIN_CHUNK = 100_000
""":func:`chunked` splits an array only into chunks of at least this many values: below it, a
thread costs more than it saves (``shapely.is_valid`` of 100,000 parcels: 0.05 s)."""


def default_workers() -> int:
    """Threads by default: every core (``os.cpu_count()``)."""
    return max(1, os.cpu_count() or 1)


def worker_count(workers: Any, what: str = "workers") -> int:
    """The number of threads (or processes) ``workers`` asks for: every core (:func:`default_workers`) where
    None, else a whole number of 1 or more; anything else is an InputError naming ``what`` (``2.5`` had run
    on 2, ``True`` on 1).

    Examples
    --------
    >>> worker_count(2), worker_count(None) >= 1
    (2, True)
    >>> worker_count(True)
    Traceback (most recent call last):
    ...
    geoconstraints.errors.InputError: workers: True is not a number (a yes/no value); give a whole number of 1 or more
    """
    if workers is None:
        return default_workers()
    why = number_problem(workers, minimum=1, whole=True)
    if why:
        raise InputError(f"{what}: {why}; give a whole number of 1 or more")
    return int(workers)


def parallel_map(fn: Callable[[Any], Any], items: Sequence[Any], workers: int | None = None) -> list[Any]:
    """``[fn(x) for x in items]`` on a pool of ``workers`` threads (results in the order of ``items``).

    One worker (or one item) runs in this thread. A Ctrl-C a library swallowed
    (:func:`geoconstraints.interrupt.check`) is raised after the item it came in, and no more are begun.

    Examples
    --------
    >>> parallel_map(lambda x: x * x, [1, 2, 3], workers=2)
    [1, 4, 9]
    """
    n = worker_count(workers)
    out: list[Any] = []
    if n == 1 or len(items) <= 1:
        for x in items:
            out.append(fn(x))
            interrupt.check()
        return out
    with ThreadPoolExecutor(max_workers=min(n, len(items)), thread_name_prefix="gc-overlay") as pool:
        for y in pool.map(fn, items):  # raising here cancels the items not begun (Executor.map)
            out.append(y)
            interrupt.check()
    return out


def chunked(fn: Callable[[np.ndarray], np.ndarray], values: np.ndarray, *, workers: int | None = None,
            min_chunk: int = MIN_CHUNK) -> np.ndarray:
    """``fn(values)`` for a function of one value at a time along the first axis (``shapely.is_valid``):
    computed on consecutive chunks in threads (:func:`parallel_map`, one chunk per worker, each of at
    least ``min_chunk`` values) and stacked in order; the same array.

    Examples
    --------
    >>> chunked(np.sqrt, np.array([1.0, 4.0, 9.0, 16.0]), workers=2, min_chunk=2).tolist()
    [1.0, 2.0, 3.0, 4.0]
    """
    n = worker_count(workers)
    parts = max(1, min(n, len(values) // max(1, int(min_chunk))))
    if parts == 1:
        return fn(values)
    return np.concatenate(parallel_map(fn, np.array_split(values, parts), workers=n))


BACKGROUND_NICE = 19
"""Niceness of the threads of :class:`Background` (Linux, where niceness is per thread): the lowest
priority, so they run only on a core this process's other threads and other programs leave idle."""


def lower_priority(nice: int = BACKGROUND_NICE) -> bool:
    """Lower the calling thread's scheduling priority to niceness ``nice`` (never raise it).

    Linux only, where niceness belongs to each thread; elsewhere, or where the system refuses, the
    thread keeps its priority and False is returned. Call it from a thread of your own: an
    unprivileged thread cannot get its priority back.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, max(int(nice), os.getpriority(os.PRIO_PROCESS, tid)))
    except (AttributeError, OSError):
        return False
    return True


class Background:
    """``[fn(x) for x in items]`` begun now on ``workers`` threads of the lowest priority
    (:func:`lower_priority`), finished by :meth:`result`.

    The background threads take the items in order and use a core only when the process's other
    threads (an overlay's GEOS threads, the checks' pandas on the main thread) leave one idle: work
    that would otherwise wait for them fills the gaps between them. :meth:`result` then computes
    every item not finished yet on normal threads (the calling one and up to ``workers - 1``
    more), the items a background thread has begun included: the first answer stored is kept
    (the same ``fn`` of the same item), so a busy machine that starves the background threads
    never keeps :meth:`result` waiting for them. ``fn`` must be free of side effects and may run
    twice for an item.

    Examples
    --------
    >>> job = Background(lambda x: x * x, [1, 2, 3, 4], workers=2)
    >>> job.result()
    [1, 4, 9, 16]
    """

    def __init__(self, fn: Callable[[Any], Any], items: Sequence[Any], workers: int | None = None) -> None:
        n = worker_count(workers)
        self._fn, self._items, self._workers = fn, list(items), n
        self._out: list[Any] = [None] * len(self._items)
        self._done = [False] * len(self._items)
        self._next = 0  # the first item no thread has begun
        self._stop = False
        self._error: BaseException | None = None
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._work, name=f"gc-background_{i}", daemon=True)
                         for i in range(min(n, len(self._items)))]
        for t in self._threads:
            t.start()

    def _take(self) -> int | None:
        with self._lock:
            if self._stop or self._next >= len(self._items):
                return None
            self._next += 1
            return self._next - 1

    def _store(self, i: int, value: Any) -> None:
        with self._lock:
            if not self._done[i]:
                self._out[i], self._done[i] = value, True

    def _work(self) -> None:
        lower_priority()
        while (i := self._take()) is not None:
            try:
                value = self._fn(self._items[i])
            except BaseException as exc:  # noqa: BLE001 -- handed to the caller: raised again by result()
                with self._lock:
                    self._error = self._error or exc
                    self._stop = True
                return
            self._store(i, value)

    def cancel(self) -> None:
        """Begin no more items in the background (those begun finish; :meth:`result` still works)."""
        with self._lock:
            self._stop = True

    def result(self) -> list[Any]:
        """Every ``fn(item)``, in the order of the items (computing here what is not done yet).

        Raises
        ------
        Exception
            The first error ``fn`` raised, here or in a background thread.
        """
        def run(i: int) -> None:
            if not self._done[i]:
                self._store(i, self._fn(self._items[i]))

        with self._lock:  # the items no thread has begun: here, on normal threads
            if self._error is not None:  # a background item failed: nothing more is worth computing
                raise self._error
            rest = list(range(self._next, len(self._items)))
            self._next = len(self._items)
        parallel_map(run, rest, workers=self._workers)
        if self._error is not None:
            raise self._error
        with self._lock:
            begun = [k for k, d in enumerate(self._done) if not d]
        parallel_map(run, begun, workers=self._workers)  # begun in the background, not done yet: again here
        return list(self._out)
