"""A signal's exception a library swallowed is raised again at the next check (geoconstraints.interrupt)."""

from __future__ import annotations

import threading

import pytest

from geoconstraints import interrupt


class Stop(BaseException):
    """Stands for the CLI's Terminated."""


@pytest.fixture(autouse=True)
def _clean():
    interrupt.forget()
    yield
    interrupt.forget()


def test_nothing_recorded_nothing_raised():
    assert interrupt.pending() is None
    interrupt.check()


def test_a_recorded_exception_is_raised_again_as_a_new_one_of_its_type_until_forgotten():
    first = Stop("from the handler")
    interrupt.raised(first)
    assert interrupt.pending() is Stop
    before = interrupt.times_raised_again()
    for _ in range(2):  # swallowed again, raised again at the next check
        with pytest.raises(Stop) as info:
            interrupt.check()
        assert info.value is not first and info.traceback[-1].name == "check"  # raised by check itself
    assert interrupt.times_raised_again() == before + 2
    interrupt.raised(KeyboardInterrupt())  # the latest signal's kind
    with pytest.raises(KeyboardInterrupt):
        interrupt.check()
    interrupt.forget()
    assert interrupt.pending() is None
    interrupt.check()


def test_only_the_main_thread_gets_it():
    # a signal's exception belongs to the main thread: a worker thread checking is not stopped by it
    interrupt.raised(Stop())
    seen: list[BaseException | None] = []

    def work() -> None:
        try:
            interrupt.check()
            seen.append(None)
        except BaseException as exc:  # noqa: BLE001 - recorded for the assertion
            seen.append(exc)

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert seen == [None]
    with pytest.raises(Stop):
        interrupt.check()
