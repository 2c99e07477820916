"""Work handed to engines: each worker process builds one engine and runs every task on it.

Self-play and rescoring both search many independent items (games, batches of positions)
with one engine per core, built once, since an engine's hash table and databases take
seconds to set up. With one worker the tasks run in this process. Workers ignore SIGINT:
the coordinator alone handles Ctrl-C, keeps what came back and closes the pool.

Workers are spawned (a fresh interpreter each), not forked: a fork copies only the calling
thread, so a lock another thread held at that moment (Ray's and gRPC's threads in a
process that used a cluster, a logging handler's) stays locked in the child forever, and the
pool hangs. A spawned worker costs about a second once; a run lasts hours.
"""

from __future__ import annotations

import multiprocessing
import signal
from typing import Any, Callable, Generator, Generic, Iterable, TypeVar

__all__ = ["EnginePool"]

Item = TypeVar("Item")
Result = TypeVar("Result")

_worker: tuple[Any, Callable[[Any, Any], Any]] | None = None  # (engine, task) of a worker


def _start_worker(build: Callable[[], Any], task: Callable[[Any, Any], Any]) -> None:
    global _worker
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the coordinator handles Ctrl-C
    _worker = (build(), task)


def _run(item: Any) -> Any:
    assert _worker is not None, "a pool task ran outside a started worker"
    engine, task = _worker
    return task(engine, item)


class EnginePool(Generic[Item, Result]):
    """``task(engine, item)`` for many items, on ``workers`` processes with an engine each.

    ``build`` and ``task`` are sent to the workers, so they must pickle: module-level
    functions, or ``functools.partial`` of them with picklable settings.
    """

    def __init__(self, build: Callable[[], Any], task: Callable[[Any, Item], Result],
                 workers: int):
        self.task = task
        self.engine: Any = None
        self.pool: Any = None
        if workers > 1:
            self.pool = multiprocessing.get_context("spawn").Pool(workers, _start_worker,
                                                                  (build, task))
        else:
            self.engine = build()

    def map(self, items: Iterable[Item], ordered: bool = True
            ) -> Generator[Result, None, None]:
        """The results, in the items' order, or as they finish when not ``ordered``."""
        if self.pool is None:
            for item in items:
                yield self.task(self.engine, item)
        elif ordered:
            yield from self.pool.imap(_run, items)
        else:
            yield from self.pool.imap_unordered(_run, items)

    def close(self) -> None:
        """Stop the workers (a task still running is abandoned)."""
        if self.pool is not None:
            self.pool.terminate()
            self.pool.join()
            self.pool = None

    def __enter__(self) -> "EnginePool[Item, Result]":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
