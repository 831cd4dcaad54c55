"""Worker processes that do not outlive their parent, and long kernels that stop at a signal.

A process pool's parent that is killed by SIGKILL runs no clean-up, so its workers, reparented to init,
would go on with their work (hours of search) for nobody.  :func:`die_with_parent`, called first thing in a
worker, asks Linux to kill it when its parent dies (the parent-death signal); on other systems a worker
ends when it next talks to its parent and finds the pipe closed.

A compiled kernel does not see SIGINT or SIGTERM: Python runs the handler when the kernel returns.  A long
computation therefore runs as many short kernel calls (:func:`run_in_slices` sizes them by the time they
take), and :class:`StopSignals` lets the caller see a signal between two of them and stop at a point it
can record, rather than wherever the handler's exception would land.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable


def die_with_parent(parent_pid: int) -> None:
    """Have this process killed (SIGKILL) when its parent dies; exit now if ``parent_pid``, the parent that
    started it, is already gone (it died before the signal was set)."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            PR_SET_PDEATHSIG = 1
            libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent_pid:
        os._exit(1)


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopSignals:
    """``with StopSignals() as stop:``: SIGINT and SIGTERM are only recorded (``stop.signum``) while the
    block runs, so that it can stop where it chooses (between two kernel calls, its state consistent);
    on the way out the handlers come back and a recorded signal is delivered to them (the command line's
    handler raises its ``Interrupted``; with the default SIGTERM action the process ends).  Outside the
    main thread, where Python delivers no signals, it changes nothing."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self._previous: dict[int, object] = {}

    @property
    def requested(self) -> bool:
        return self.signum is not None

    def _record(self, signum, frame) -> None:
        if self.signum is None:
            self.signum = signum

    def __enter__(self) -> StopSignals:
        if threading.current_thread() is threading.main_thread():
            for signum in STOP_SIGNALS:
                self._previous[signum] = signal.signal(signum, self._record)
        return self

    def __exit__(self, *exc) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)  # type: ignore[arg-type]
        self._previous.clear()
        if self.signum is None or exc[0] is not None:
            return
        signum, self.signum = self.signum, None
        handler = signal.getsignal(signum)
        if callable(handler):
            handler(signum, None)
        elif handler == signal.SIG_DFL:
            os.kill(os.getpid(), signum)


SLICE_SECONDS = 0.25  # the wall time a slice aims at: a signal is seen within a few of these


def run_in_slices(units: int, run: Callable[[int, int], object], first: int = 0,
                  stop: StopSignals | None = None, size: list[int] | None = None) -> int:
    """Run ``run(a, b)`` over ``first..units-1`` in consecutive slices ``[a, b)`` of about
    ``SLICE_SECONDS`` each; return where it stopped (``units``, or the end of the last slice run when
    ``stop`` was requested).

    A slice starts as large as ``size[0]`` (the whole range when absent) and is halved or more when one
    takes too long, doubled when one is quick; ``size`` carries that size over to the next call (a BFS
    layer after another), so that a layer a few times denser than the last still takes a fraction of a
    second per slice."""
    per = max(1, size[0] if size else units - first)
    a = first
    while a < units:
        if stop is not None and stop.requested:
            break
        b = min(units, a + per)
        start = time.perf_counter()
        run(a, b)
        took = time.perf_counter() - start
        a = b
        if took > SLICE_SECONDS:
            per = max(1, int(per * SLICE_SECONDS / took))
        elif took < SLICE_SECONDS / 4:
            per = min(max(1, units - first), per * 2)
    if size is not None:
        size[0] = per
    return a


__all__ = ["STOP_SIGNALS", "SLICE_SECONDS", "StopSignals", "die_with_parent", "run_in_slices"]
