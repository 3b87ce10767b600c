"""A signal's exception that a library swallowed, raised again where the run next checks.

The CLI turns Ctrl-C (SIGINT) and SIGTERM into exceptions (``KeyboardInterrupt``, its
``Terminated``) that Python raises wherever the main thread is when the signal is handled. Some
compiled code calls back into Python and then clears *every* exception, not just the one it
expected: pyarrow converting a pandas column held as Arrow text (``pa.array(series)``, measured:
about 1 signal in 150 handled inside it is lost) asks the column for attributes, and pandas
answers in Python. A signal handled there is gone, and the run goes on as if never signalled.
Seen in CI: the run then waited for its paused GIS child until the 30 s backstop of the CLI ended
it with the threads' stacks.

:func:`raised` records the exception the CLI's handler raises. :func:`check` raises it again
while it is recorded; it is called only where a run comes in its normal course, never while an
exception unwinds it: at each stage of a command; in the check stage, after each chunk of work
threads share (:func:`geoconstraints.parallel.parallel_map`: the overlay's spatial chunks) and before
each rule (:func:`geoconstraints.rulebook.registry.run_checks`); before each output step
(:meth:`geoconstraints.output.outset.OutputSet.step`); before waiting for a child process's answer
or its end (:mod:`geoconstraints.output.child`). Between two checks a lost signal costs at most one
step of work.
:func:`forget` clears it when the command ends. Without the CLI's handler (a notebook, a library
call) nothing is recorded and :func:`check` does nothing.

Examples
--------
>>> check()  # nothing recorded: nothing happens
>>> raised(KeyboardInterrupt())
>>> try:
...     check()
... except KeyboardInterrupt:
...     print("raised again")
raised again
>>> forget(); check()
"""

from __future__ import annotations

import threading

_pending: list[type[BaseException]] = []
_again = [0]  # how many times check() has raised


def raised(exc: BaseException) -> None:
    """Record ``exc``, the exception a signal handler is raising, until :func:`forget`."""
    _pending[:] = [type(exc)]


def times_raised_again() -> int:
    """How many times :func:`check` has raised a recorded exception (in this process): the CLI
    sends a signal lost in a finalizer again only if none was raised since (``cli._resend``)."""
    return _again[0]


def pending() -> type[BaseException] | None:
    """The type of the exception :func:`raised` recorded, or None."""
    return _pending[0] if _pending else None


def check() -> None:
    """Raise the recorded exception again (a new one of its type) in the main thread; nothing when
    none is recorded or in another thread (a signal's exception belongs to the main thread).

    Raises
    ------
    BaseException
        A new exception of the type :func:`raised` recorded (``KeyboardInterrupt``, the CLI's
        ``Terminated``).
    """
    if _pending and threading.current_thread() is threading.main_thread():
        _again[0] += 1
        raise _pending[0]()


def forget() -> None:
    """Clear what :func:`raised` recorded (the command handling it has ended)."""
    _pending.clear()
