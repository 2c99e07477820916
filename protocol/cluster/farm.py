"""Units of work on actors across a Ray cluster, their results streamed back as they finish.

Every live worker machine (a Ray node with CPUs) gets ``per_node`` game slots (default: one
per CPU, or per ``cores_per_slot`` CPUs for engines searching on several threads). A slot is an actor pinned to its node, holding what lasts from one unit to the next
(engine processes, hash tables). Before a slot is given work it reports its host and damka
version and whether it can start every engine (``check``): a worker that cannot is reported
by name and gets no work, instead of losing its games.

The coordinator keeps the queue. A unit whose actor dies (its process killed, its machine
gone) goes back to the front of the queue and is played by another slot; a replacement actor
is started on the same machine while that machine is alive. A unit's result is handed out
once, even if it was played twice, so the caller records every unit exactly once; results
come in lists of those that finished together, so that the caller can write them at once. When
``stop()`` says so, no more units are handed out; those running finish and are handed back.
Machines that join the cluster while it runs get slots too.
"""

from __future__ import annotations

import os
import re
import socket
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any, Callable, Generic, Hashable, Iterator, Sequence, TypeVar

from .connect import COORDINATOR_DIR_ENV, ClusterError

__all__ = ["Farm", "WorkerInfo", "worker_info", "full_priority", "prepare_worker"]

T = TypeVar("T")

#: seconds between looks for machines that joined
REFRESH_SECONDS = 5.0
#: the longest wait for a result before looking at ``abandon`` again
WAIT_SECONDS = 0.25
#: wait for one result in this many units in flight (3,200 slots: 12 at a time)
BATCH_DIVISOR = 256
#: a unit whose actor dies this many times is a fault of the unit, not of the machines
MAX_ATTEMPTS = 3
#: seconds the slots get to shut their engines down politely at the end
CLOSE_SECONDS = 10.0


@dataclass(frozen=True)
class WorkerInfo:
    """Where a slot runs, and what it cannot do there (an empty ``problems``: all is well)."""

    host: str
    pid: int
    version: str
    problems: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"{self.host} (pid {self.pid})"


def full_priority() -> None:
    """Undo the lower priority (nice 15) Ray gives its worker processes where this process
    may: engines' clocks run here, and a busy machine would otherwise lose games on time."""
    try:
        os.setpriority(os.PRIO_PROCESS, 0, 0)
    except (OSError, AttributeError):  # not permitted: the workers were started so
        pass


def prepare_worker() -> None:
    """What a slot does first on its worker: full priority, and on a local Ray the
    coordinator's working directory (Ray started the worker in an empty one, so that it
    imported the installed damka), where relative engine and weights paths mean what they
    mean on one machine. The imports are done by now and do not look in the new directory."""
    full_priority()
    directory = os.environ.get(COORDINATOR_DIR_ENV)
    if directory:
        try:
            os.chdir(directory)
        except OSError:  # gone since: the paths are the user's to fix, as on one machine
            pass


def worker_info(problems: Sequence[str] = ()) -> WorkerInfo:
    """This worker process as a slot reports itself from its ``check`` method."""
    from engine import __version__

    return WorkerInfo(socket.gethostname(), os.getpid(), __version__, tuple(problems))


@dataclass(eq=False)
class _Slot:
    actor: Any
    node: str
    info: WorkerInfo | None = None
    item: Any = None


@dataclass
class _Queue(Generic[T]):
    pending: deque = field(default_factory=deque)
    attempts: Counter = field(default_factory=Counter)
    handed_out: set = field(default_factory=set)


class Farm:
    """Game slots across the cluster for one run.

    ``actor_class`` is instantiated with ``args`` on each slot; it has ``check() ->
    WorkerInfo``, ``play(item)`` and ``close()``. ``warn(text)`` hears about lost and unusable
    workers. ``running`` and ``replayed`` are there for progress displays.
    """

    def __init__(self, ray: Any, actor_class: type, args: tuple, *, per_node: int | None = None,
                 cores_per_slot: int = 1, warn: Callable[[str], None] = lambda text: None,
                 describe: Callable[[Any], str] = str):
        from engine import __version__

        self.ray = ray
        self.remote = ray.remote(actor_class)
        self.args = args
        self.per_node = per_node
        self.cores_per_slot = max(1, cores_per_slot)
        self.warn = warn
        self.describe = describe
        self.version = __version__
        self.replayed = 0  #: units played again after their actor was lost
        self.workers: list[WorkerInfo] = []  #: the slots that passed their check
        self._nodes: dict[str, str] = {}  #: node id -> host name, of the nodes with slots
        self._checks: dict[Any, _Slot] = {}
        self._inflight: dict[Any, _Slot] = {}
        self._idle: list[_Slot] = []
        self._problems: list[str] = []
        self._warned: set[tuple[str, str]] = set()

    @property
    def running(self) -> int:
        return len(self._inflight)

    # -- slots -------------------------------------------------------------------------------

    def _alive_nodes(self) -> dict[str, tuple[float, str]]:
        """Live nodes with CPUs: node id -> (CPUs, host name); a head started with
        --num-cpus=0 plays not."""
        return {node["NodeID"]: (node.get("Resources", {}).get("CPU", 0.0),
                                 node.get("NodeManagerHostname") or node.get("NodeManagerAddress")
                                 or node["NodeID"][:12])
                for node in self.ray.nodes()
                if node.get("Alive") and node.get("Resources", {}).get("CPU", 0.0) > 0}

    def _start_slot(self, node: str, cpus: float) -> None:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        slots = self._slots(cpus)
        share = min(float(self.cores_per_slot),
                    int(cpus / slots * 10_000) / 10_000) or 0.0001
        actor = self.remote.options(
            num_cpus=share, max_restarts=0,
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=node, soft=False),
        ).remote(*self.args)
        slot = _Slot(actor, node)
        self._checks[actor.check.remote()] = slot

    def _add_nodes(self) -> None:
        for node, (cpus, host) in self._alive_nodes().items():
            if node in self._nodes:
                continue
            self._nodes[node] = host
            for _ in range(self._slots(cpus)):
                self._start_slot(node, cpus)

    def _slots(self, cpus: float) -> int:
        """Slots on a machine with ``cpus``: ``per_node``, else as many as its cores hold."""
        return self.per_node or max(1, int(cpus) // self.cores_per_slot)

    def _replace(self, slot: _Slot) -> None:
        """A new actor where ``slot``'s died, if its machine is still there."""
        alive = self._alive_nodes()
        if slot.node in alive:
            self._start_slot(slot.node, alive[slot.node][0])

    def _checked(self, slot: _Slot, info: WorkerInfo) -> None:
        problems = list(info.problems)
        if info.version != self.version:
            problems.append(f"it runs damka {info.version}, the coordinator {self.version}")
        if problems:
            for problem in problems:
                self._problem(info.host, f"worker {info}: ", problem)
            self.ray.kill(slot.actor)
            return
        slot.info = info
        self.workers.append(info)
        self._idle.append(slot)

    def _not_started(self, slot: _Slot, exc: Exception) -> None:
        """A slot whose worker died before its check answered (its class or module failed
        to import there, its __init__ raised, its process died): a problem of its machine,
        said whole, so that a cluster where no slot starts says why. No replacement: it would
        fail the same way."""
        host = self._nodes.get(slot.node, "a machine")
        self._problem(host, f"a worker on {host} could not start: ", _what_it_said(exc))

    def _problem(self, host: str, who: str, problem: str) -> None:
        """``problem`` of a worker on ``host`` for the warnings and the final error, once a
        machine, not once a slot."""
        if (host, problem) in self._warned:
            return
        self._warned.add((host, problem))
        text = who + problem
        self._problems.append(text)
        self.warn(f"{text}; its slots get no games")

    # -- running -----------------------------------------------------------------------------

    def results(self, items: Sequence[T], key: Callable[[T], Hashable],
                stop: Callable[[], bool] = lambda: False,
                abandon: Callable[[], bool] = lambda: False
                ) -> Iterator[list[tuple[T, Any]]]:
        """Lists of ``(item, result)``, the items that finished since the last list, each key
        once, until the items are done or ``stop()`` (the running ones finish). ``abandon()``
        or closing the iterator ends every slot at once, the running units unfinished."""
        from ray.exceptions import NodeDiedError, ObjectLostError, RayActorError, WorkerCrashedError

        lost_errors = (RayActorError, WorkerCrashedError, NodeDiedError, ObjectLostError)
        queue: _Queue[T] = _Queue(deque(items))
        last_refresh = float("-inf")
        finished = False
        try:
            while (queue.pending and not stop()) or self._inflight:
                if abandon():
                    return
                if time.monotonic() - last_refresh >= REFRESH_SECONDS:
                    self._add_nodes()
                    last_refresh = time.monotonic()
                while self._idle and queue.pending and not stop():
                    slot = self._idle.pop()
                    slot.item = queue.pending.popleft()
                    self._inflight[slot.actor.play.remote(slot.item)] = slot
                if not self._inflight and not self._checks:
                    reasons = "; ".join(self._problems) or (
                        "every worker was lost" if self._alive_nodes() else
                        "the cluster has no CPUs")
                    raise ClusterError(f"no worker of the cluster can play: {reasons}")
                refs = list(self._inflight) + list(self._checks)
                # a wait looks at every unit in flight (about 1.4 ms for 3,200): on a big
                # cluster it waits for a few results at once rather than for each one
                batch = min(len(refs), max(1, len(self._inflight) // BATCH_DIVISOR))
                ready, _ = self.ray.wait(refs, num_returns=batch, timeout=WAIT_SECONDS)
                if ready:  # take every result that is in, not just the first
                    ready, _ = self.ray.wait(refs, num_returns=len(refs), timeout=0)
                batch_out: list[tuple[T, Any]] = []
                for ref in ready:
                    if ref in self._checks:
                        slot = self._checks.pop(ref)
                        try:
                            info = self.ray.get(ref)
                        except lost_errors as exc:
                            self._not_started(slot, exc)
                            continue
                        self._checked(slot, info)
                        continue
                    slot = self._inflight.pop(ref)
                    item, slot.item = slot.item, None
                    try:
                        result = self.ray.get(ref)
                    except lost_errors as exc:
                        self._lost(queue, slot, item, key, exc)
                        continue
                    self._idle.append(slot)
                    if key(item) not in queue.handed_out:
                        queue.handed_out.add(key(item))
                        batch_out.append((item, result))
                if batch_out:
                    yield batch_out
            finished = True
        finally:
            self._end(polite=finished)

    def _lost(self, queue: _Queue, slot: _Slot, item: Any, key: Callable, exc: Exception
              ) -> None:
        k = key(item)
        queue.attempts[k] += 1
        if queue.attempts[k] >= MAX_ATTEMPTS:
            raise ClusterError(f"{self.describe(item)} ended its worker {MAX_ATTEMPTS} times; "
                               f"last: {_reason(exc)}")
        queue.pending.appendleft(item)
        self.replayed += 1
        self.warn(f"worker {slot.info} was lost during {self.describe(item)} "
                  f"({_reason(exc)}); it is played again")
        self._replace(slot)

    def _end(self, polite: bool) -> None:
        slots = self._idle + list(self._inflight.values()) + list(self._checks.values())
        if polite and self._idle:
            try:
                self.ray.wait([slot.actor.close.remote() for slot in self._idle],
                              num_returns=len(self._idle), timeout=CLOSE_SECONDS)
            except Exception:  # pragma: no cover - best effort on the way out
                pass
        for slot in slots:
            try:
                self.ray.kill(slot.actor)
            except Exception:  # pragma: no cover
                pass
        self._idle, self._inflight, self._checks = [], {}, {}


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:200] + ("..." if len(text) > 200 else "") if text else type(exc).__name__


_COLOUR = re.compile(r"\x1b\[[0-9;]*m")
_FRAME = re.compile(r'\s*File "([^"]*)", line (\d+)')


def _what_it_said(exc: BaseException) -> str:
    """What a worker that died at start-up said, on one line and whole: the last exception of
    the traceback Ray hands back, and where it was raised (a path in a source checkout says
    which damka the worker imported); Ray's headers and the chain before it are left out."""
    lines = _COLOUR.sub("", str(exc)).splitlines()
    frames = [i for i, line in enumerate(lines) if _FRAME.match(line)]
    if not frames:
        return " ".join(" ".join(lines).split()) or type(exc).__name__
    where = _FRAME.match(lines[frames[-1]])
    said = lines[frames[-1] + 1:]
    while said and said[0][:1].isspace():  # the frame's source line and its carets
        said.pop(0)
    text = " ".join(" ".join(said).split()) or type(exc).__name__
    return f"{text} (raised in {where[1]}, line {where[2]})"
