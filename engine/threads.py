"""How many search threads a machine can use, and checking a requested count against it.

Kept apart from ``engine.search`` (which loads the compiled core) so that front ends can
declare and check their ``threads`` setting without loading the search.
"""

from __future__ import annotations

import os

__all__ = ["max_threads", "check_threads"]


def max_threads() -> int:
    """The most search threads worth asking for: the cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def check_threads(threads: int) -> int:
    """``threads`` if it is a thread count this machine can use, else a ValueError saying
    the range (more threads than cores only slow every one of them down)."""
    high = max_threads()
    if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= high:
        raise ValueError(f"threads must be between 1 and {high} (the cores), not {threads!r}")
    return threads
