"""Worker processes that do not outlive their parent.

A process pool's parent that is killed by SIGKILL runs no clean-up, so its workers, reparented to init,
would go on with their work (hours of search) for nobody.  :func:`die_with_parent`, called first thing in a
worker, asks Linux to kill it when its parent dies (the parent-death signal); on other systems a worker
ends when it next talks to its parent and finds the pipe closed.
"""

from __future__ import annotations

import os
import signal
import sys


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


__all__ = ["die_with_parent"]
