"""Where a test run's time goes: Numba's compiles per kernel, its cache loads, and the CPU of each test.

Opt in with ``PDBTOOL_COMPILE_PROFILE=PATH``: every process of the run (the warm-up's processes, each test
process) appends one JSON line to ``PATH`` when it ends, holding

- ``compile``: kernel -> [CPU seconds inclusive of the callees it compiled, exclusive of them, compiles],
- ``load``: kernel -> [CPU seconds, loads] of the signatures read from Numba's on-disk cache,
- ``tests`` (test processes): test id -> [CPU seconds of this process, of the processes it waited for,
  compile CPU seconds], and ``jobs`` (warm-up processes): job -> CPU seconds,
- ``cpu``: the process's CPU seconds.

A kernel that compiles in a second run, on the cache the first one wrote, is one Numba cannot cache (a
closure, a function made at run time): each process of each run pays for it.  ``python
tests/compile_profile.py PATH`` sums the lines.
"""

from __future__ import annotations

import atexit
import collections
import json
import os
import resource
import sys
import time

ENV = "PDBTOOL_COMPILE_PROFILE"


class Recorder:
    """Numba's ``numba:compile`` events and cache loads of this process, per kernel and per test."""

    def __init__(self, path: str, role: str):
        self.path = path
        self.role = role
        self.pid = os.getpid()
        self.compile: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0])
        self.load: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0])
        self.tests: dict[str, list[float]] = {}
        self.jobs: dict[str, float] = {}
        self.stack: list[list[float]] = []  # [start, CPU of the nested compiles] of each compile under way
        self.current: str | None = None
        self.current_compile = 0.0

    def install(self) -> None:
        from numba.core import caching, event

        recorder = self

        class Listener(event.Listener):
            def on_start(self, ev):
                recorder.stack.append([time.process_time(), 0.0])

            def on_end(self, ev):
                start, nested = recorder.stack.pop()
                spent = time.process_time() - start
                entry = recorder.compile[_name(ev.data["dispatcher"].py_func)]
                entry[0] += spent
                entry[1] += spent - nested
                entry[2] += 1
                if recorder.stack:
                    recorder.stack[-1][1] += spent
                else:
                    recorder.current_compile += spent

        event.register("numba:compile", Listener())
        load = caching.Cache.load_overload

        def timed_load(cache, sig, target_context):
            start = time.process_time()
            result = load(cache, sig, target_context)
            if result is not None:
                entry = recorder.load[_name(cache._py_func)]
                entry[0] += time.process_time() - start
                entry[1] += 1
            return result

        caching.Cache.load_overload = timed_load
        atexit.register(self.write)

    def start_test(self, name: str) -> tuple[float, float]:
        self.current, self.current_compile = name, 0.0
        return time.process_time(), _children()

    def end_test(self, name: str, started: tuple[float, float]) -> None:
        own, children = time.process_time() - started[0], _children() - started[1]
        self.tests[name] = [round(own, 3), round(children, 3), round(self.current_compile, 3)]
        self.current = None

    def write(self) -> None:
        if os.getpid() != self.pid:  # a forked child of a test: its parent writes the line
            return
        line = {"role": self.role, "pid": os.getpid(), "cpu": round(time.process_time(), 3),
                "compile": {k: [round(v[0], 3), round(v[1], 3), v[2]] for k, v in self.compile.items()},
                "load": {k: [round(v[0], 3), v[1]] for k, v in self.load.items()},
                "tests": self.tests, "jobs": self.jobs}
        with open(self.path, "a") as out:  # one write of one line: the processes' lines do not interleave
            out.write(json.dumps(line) + "\n")


def _name(py_func) -> str:
    return f"{py_func.__module__}.{py_func.__qualname__}"


def _children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def recorder(role: str) -> Recorder | None:
    """This process's recorder, installed, where ``PDBTOOL_COMPILE_PROFILE`` names a file; else None."""
    path = os.environ.get(ENV)
    if not path:
        return None
    rec = Recorder(path, role)
    rec.install()
    return rec


def summary(path: str, top: int = 40) -> str:
    """The lines of ``path`` summed: CPU per role, the kernels by compile CPU (exclusive), the tests by CPU."""
    lines = [json.loads(line) for line in open(path)]
    compile_ex: collections.Counter = collections.Counter()
    compile_in: collections.Counter = collections.Counter()
    counts: collections.Counter = collections.Counter()
    loads: collections.Counter = collections.Counter()
    tests: collections.Counter = collections.Counter()
    out = []
    for line in lines:
        total = sum(v[1] for v in line["compile"].values())
        out.append(f"{line['role']:<12} pid {line['pid']:>7}: CPU {line['cpu']:8.1f} s, compile {total:7.1f} s, "
                   f"cache loads {sum(v[0] for v in line['load'].values()):6.1f} s")
        for job, cpu in line["jobs"].items():
            out.append(f"    job {job:<28} {cpu:7.1f} s")
        for k, v in line["compile"].items():
            compile_in[k] += v[0]
            compile_ex[k] += v[1]
            counts[k] += v[2]
        for k, v in line["load"].items():
            loads[k] += v[0]
        for k, v in line["tests"].items():
            tests[k] += v[0] + v[1]
    out.append(f"compile CPU, all processes: {sum(compile_ex.values()):.1f} s; "
               "by kernel (exclusive, inclusive, compiles):")
    out += [f"  {cpu:7.1f} {compile_in[k]:7.1f} {counts[k]:4d}  {k}" for k, cpu in compile_ex.most_common(top)]
    out.append(f"cache loads, all processes: {sum(loads.values()):.1f} s; the longest:")
    out += [f"  {cpu:7.1f}  {k}" for k, cpu in loads.most_common(10)]
    out.append(f"tests' CPU (own and waited-for processes): {sum(tests.values()):.1f} s; the longest:")
    out += [f"  {cpu:7.1f}  {k}" for k, cpu in tests.most_common(top)]
    return "\n".join(out)


if __name__ == "__main__":
    print(summary(sys.argv[1], *(int(a) for a in sys.argv[2:3])))
