"""Worker processes that do not outlive their parent, and long kernels that stop at a signal.

:class:`WorkerPool` runs tasks in spawned worker processes, one at a time each, and knows which task each
worker holds, so that the task of a worker that dies (the OOM killer's SIGKILL, a segfault) is tried once
more in a new worker and reported lost (``lost``) if that one dies too; the tile batch
(:mod:`pdbtool.search.solver`) and the domains' batch runner (:mod:`pdbtool.batch`) share it.

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
from collections.abc import Callable, Iterator
from typing import Any


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


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def worker_main(conn, parent_pid: int, setup: Callable[[], Callable[[Any], Any]]) -> None:
    """A worker process of :class:`WorkerPool`: ``handle = setup()``, then ``handle(item)`` for each task
    sent on ``conn`` until it is closed or sent None.  A task's exception (a bug) is sent to the parent,
    which raises it; SIGINT is ignored (the parent stops the batch, then its workers)."""
    import traceback

    die_with_parent(parent_pid)  # no worker goes on for hours under init after a kill -9 of the batch
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    handle = setup()
    try:
        conn.send(("ready", None))
        while True:
            task = conn.recv()
            if task is None:
                return
            index, item = task
            conn.send(("started", index))
            try:
                result = handle(item)
            except Exception:
                conn.send(("error", traceback.format_exc()))
                return
            conn.send(("done", (index, result)))
    except (EOFError, OSError):  # the parent is gone: nobody wants the result
        return


class WorkerPool:
    """``size`` spawned processes that handle tasks, each worker one at a time; a dead worker is replaced.

    Unlike ``multiprocessing.Pool``, which replaces a dead worker but loses the task it held (its result
    never comes, and an ordered stream waits forever), this pool knows which task each worker holds: the
    task of a worker that dies is tried once more, and ``lost(index, how, signum)`` makes its result if
    that worker dies too (``how``: "killed by SIGKILL" or "exited with status N").  ``setup`` (picklable)
    runs once in each worker and returns its handler.  Workers that die before they take a task, more
    than twice the pool's size, raise ``failure``."""

    def __init__(self, size: int, setup: Callable[[], Callable[[Any], Any]],
                 lost: Callable[[int, str, int | None], Any], failure: type[Exception] = RuntimeError):
        import multiprocessing

        self.size = size
        self.setup, self.lost, self.failure = setup, lost, failure
        self._ctx = multiprocessing.get_context("spawn")
        self._workers: dict = {}  # connection -> [process, index held or None]

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _spawn(self):
        parent, child = self._ctx.Pipe()
        process = self._ctx.Process(target=worker_main, args=(child, os.getpid(), self.setup), daemon=True)
        process.start()
        child.close()
        self._workers[parent] = [process, None]
        return parent

    def close(self) -> None:
        """Stop every worker now (those still at work are killed: their work is not wanted)."""
        for conn, (process, _) in list(self._workers.items()):
            if process.is_alive():
                process.kill()
            process.join()
            conn.close()
        self._workers.clear()

    def run(self, items: list, started: Callable[[int, int], None] | None = None) -> Iterator[tuple[int, Any]]:
        """Yield ``(index, result)`` for every item, in the order they end; ``started(index, pid)`` as a
        worker takes one."""
        from collections import deque
        from multiprocessing.connection import wait

        pending = deque(range(len(items)))
        tries = [0] * len(items)
        retry: dict = {}  # a replacement worker -> the task it is to try again
        left = len(items)
        early_deaths = 0
        retired = set()  # workers told to stop: no more tasks for them
        for _ in range(min(self.size, len(items))):
            self._spawn()
        while left:
            sentinels = {w[0].sentinel: conn for conn, w in self._workers.items()}
            for ready in wait(list(self._workers) + list(sentinels)):
                conn = sentinels.get(ready, ready)
                if conn not in self._workers:
                    continue
                process, held = self._workers[conn]
                try:  # a worker may send its last message and die: read the message first
                    message = conn.recv() if ready is conn or conn.poll(0) else None
                except (EOFError, OSError):
                    message = None
                if message is None:
                    process.join()
                    conn.close()
                    del self._workers[conn]
                    retry.pop(conn, None)
                    if conn in retired:
                        retired.discard(conn)
                        continue
                    code = process.exitcode
                    signum = -code if code is not None and code < 0 else None
                    how = f"killed by {signal_name(signum)}" if signum else f"exited with status {code}"
                    if held is None:  # not a fault of a task: of the set-up (or a signal meant for all)
                        early_deaths += 1
                        if early_deaths > 2 * self.size + 2:
                            raise self.failure(f"worker processes die before they take an instance (last: {how})")
                    elif tries[held] < 2:
                        retry[self._spawn()] = held
                    else:
                        left -= 1
                        yield held, self.lost(held, how, signum)
                    if len(self._workers) < min(self.size, left):
                        self._spawn()
                    continue
                kind, value = message
                if kind == "started":
                    if started is not None:
                        started(value, process.pid)
                    continue
                if kind == "error":
                    raise RuntimeError(f"a worker process failed:\n{value}")
                if kind == "done":
                    index, result = value
                    self._workers[conn][1] = None
                    left -= 1
                    yield index, result
                # the worker is ready for another task
                index = retry.pop(conn, None)
                if index is None and pending:
                    index = pending.popleft()
                try:
                    conn.send(None if index is None else (index, items[index]))
                except OSError:  # it died meanwhile: its sentinel tells, and the task waits for another
                    if index is not None:
                        pending.appendleft(index)
                    continue
                if index is None:
                    retired.add(conn)
                else:
                    tries[index] += 1
                    self._workers[conn][1] = index


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


__all__ = ["STOP_SIGNALS", "SLICE_SECONDS", "StopSignals", "WorkerPool", "die_with_parent", "run_in_slices",
           "signal_name", "worker_main"]
