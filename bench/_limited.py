"""Run one command under a wall-clock and an address-space limit, and measure what it used.

The benchmarks that set pdbtool beside a peer program run each solver as a child process of its own, so
that both are measured the same way: CPU seconds (user + system) and peak resident memory are GNU time's
(``/usr/bin/time``: its ``wait4`` of the solver alone; a child forked from this Python process would start
with this process's resident set as its peak, which Linux keeps across ``exec``), else ``wait4``'s of the
child; the wall time is the clock's.  The memory limit is
``RLIMIT_AS`` (a program that asks for more gets an allocation failure, not the kernel's OOM killer), the
time limits ``RLIMIT_CPU`` (CPU seconds, which a machine shared with other work inflates less than wall
seconds: SIGXCPU, then SIGKILL) and a SIGKILL of the child's process group when the wall clock runs out.
"""

from __future__ import annotations

import math
import os
import resource
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path


GNU_TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None


@dataclass
class Finished:
    """What one limited run did."""

    returncode: int          # negative: killed by that signal
    stdout: str
    stderr: str
    wall_seconds: float
    cpu_seconds: float       # user + system of the child and what it waited for
    peak_rss_bytes: int      # the child's largest resident set (ru_maxrss)
    timed_out: bool          # killed by the wall-clock or the CPU limit

    def tail(self, lines: int = 3) -> str:
        text = (self.stderr.strip() or self.stdout.strip()).splitlines()
        return " | ".join(line.strip() for line in text[-lines:])[:500]


def _limits(memory_bytes: int | None, cpu_seconds: float | None, nice: int):
    def apply():
        os.setpgrp()                      # a group of its own: the time limit kills its threads and children
        if cpu_seconds:
            soft = max(1, math.ceil(cpu_seconds))
            resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 5))
        if memory_bytes:
            resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
        if nice:
            os.nice(nice)
    return apply


def run(command: list[str], time_limit: float | None = None, memory_bytes: int | None = None,
        cpu_limit: float | None = None, nice: int = 0, env: dict | None = None, cwd: str | None = None) -> Finished:
    """Run ``command`` to completion, to ``time_limit`` wall seconds or to ``cpu_limit`` CPU seconds (the
    child's own, each of its processes apart), whichever comes first."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile("r") as measured:
        if GNU_TIME:
            command = [GNU_TIME, "-q", "-f", "%U %S %M", "-o", measured.name, *command]
        started = time.monotonic()
        child = subprocess.Popen(command, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                 preexec_fn=_limits(memory_bytes, cpu_limit, nice), env=env, cwd=cwd)
        killed = threading.Event()

        def kill():
            killed.set()
            try:         # the solver first, so that GNU time still reports what it used; then the group
                children = Path(f"/proc/{child.pid}/task/{child.pid}/children").read_text().split()
            except OSError:
                children = []
            for pid in children:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except ProcessLookupError:
                    pass
            if not children:
                try:
                    os.killpg(child.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

        timer = threading.Timer(time_limit, kill) if time_limit else None
        if timer:
            timer.daemon = True
            timer.start()
        try:
            _, status, usage = os.wait4(child.pid, 0)
        finally:
            if timer:
                timer.cancel()
        wall = time.monotonic() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        try:                              # what the child left running in its group (none, normally)
            os.killpg(child.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        out.seek(0)
        err.seek(0)
        cpu, peak = usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024
        if GNU_TIME:
            fields = measured.read().split()
            if len(fields) >= 3:
                cpu, peak = float(fields[-3]) + float(fields[-2]), int(fields[-1]) * 1024
            if child.returncode > 128:           # GNU time exits with 128 + the signal that ended the solver
                child.returncode = 128 - child.returncode
            signalled = child.returncode == -signal.SIGXCPU
        else:
            signalled = child.returncode == -signal.SIGXCPU
        over_cpu = bool(cpu_limit) and (signalled or child.returncode == -signal.SIGXCPU
                                        or (child.returncode == -signal.SIGKILL and cpu >= cpu_limit))
        return Finished(returncode=child.returncode, stdout=out.read().decode(errors="replace"),
                        stderr=err.read().decode(errors="replace"), wall_seconds=round(wall, 3),
                        cpu_seconds=round(cpu, 3),
                        peak_rss_bytes=peak, timed_out=killed.is_set() or over_cpu)
