"""The search facade: search a Board with limits and get back a move, score and variation.

Below the root everything runs in the compiled core (``_fast.search``) without the GIL. The
root is driven from here: iterative deepening with aspiration windows, principal variation
search over the root moves (the previous best move first), time management between
iterations, pondering, strength levels, and progress through a callback (never printing).

The Engine can be stopped from any thread: ``stop()`` sets the core's flag, which the search
polls at every node, so ``search`` returns the best move found so far within milliseconds.

With ``threads`` > 1 the search is a Lazy SMP: while this module drives the main search, helper
threads search the same root in the core (varied depths and root order) and share what they
find only through the common hash table; the main search alone decides the move, so stop,
ponder and ponderhit work as with one thread. One thread is the plain, deterministic search.
"""

from __future__ import annotations

import functools
import os
import queue
import threading
import weakref
from collections import abc
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

from . import _core
from .board import Board
from .draws import DrawCounters, game_history
from .learned import (DEFAULT_EVALUATION, EVALUATIONS, load_weights, man_worth, material_core,
                      params_evaluation)
from .fen import parse_fen
from .hashsize import DEFAULT_HASH_MB, check_hash
from .levels import Level, choose, get_level, line_material
from .limits import MAX_DEPTH, Limits
from .move import Move
from .threads import check_threads, max_threads
from .timeman import TimeManager, TimeSettings, estimate_moves_left
from .variants import Variant, as_variant

if TYPE_CHECKING:  # for annotations only: the databases load numpy, futures cost start-up
    from .egtb.probe import EgtbValue, Tablebase
    from concurrent.futures import Future

_search = _core.compiled("search")
INFINITY, MATE_SCORE, MATE_THRESHOLD = _search.INFINITY, _search.MATE_SCORE, _search.MATE_THRESHOLD
if TYPE_CHECKING:
    class Searcher:
        """The compiled core's search (_fast/search.pyx), as the type checker sees it."""

        def __init__(self, *args: Any) -> None: ...
        def __getattr__(self, name: str) -> Any: ...
        @staticmethod
        def now() -> float: ...
else:
    Searcher = _search.Searcher

__all__ = [
    "Engine",
    "Limits",
    "SearchInfo",
    "SearchResult",
    "MATE_SCORE",
    "MATE_THRESHOLD",
    "MAX_DEPTH",
    "mate_in",
    "max_threads",
    "open_databases",
]

#: half width of the first aspiration window, hundredths of a man
ASPIRATION = 25
#: aspiration windows from this depth on (shallower iterations are too cheap to bother)
ASPIRATION_DEPTH = 5

InfoCallback = Callable[["SearchInfo"], object]


def now() -> float:
    """The monotonic clock of the search deadlines, in seconds (for ``clock_start``)."""
    return Searcher.now()


def mate_in(score: int) -> int | None:
    """Moves to a forced result: N > 0 the side to move wins with its N-th move, -N it has
    lost after N moves (0: it has already lost); None when the score is no forced result."""
    if score > MATE_THRESHOLD:
        return (MATE_SCORE - score + 1) // 2
    if score < -MATE_THRESHOLD:
        return -((MATE_SCORE + score) // 2)
    return None


@dataclass(frozen=True)
class SearchInfo:
    """Progress: one per finished iteration (``final``) and one per new best move within an
    iteration (not ``final``). Scores are hundredths of a man from the side to move."""

    depth: int
    seldepth: int
    score: int
    nodes: int
    time: float
    pv: tuple[Move, ...]
    final: bool = True

    @property
    def best_move(self) -> Move | None:
        return self.pv[0] if self.pv else None

    @property
    def nps(self) -> int:
        return round(self.nodes / self.time) if self.time > 0 else 0

    @property
    def mate(self) -> int | None:
        """Moves to a forced win (positive) or loss (negative); see mate_in."""
        return mate_in(self.score)


class LazyLine(abc.Sequence):
    """A line of moves worked out on first use; it reads and compares like a tuple."""

    __slots__ = ("_make", "_moves")

    def __init__(self, make: Callable[[], tuple[Move, ...]]):
        self._make = make
        self._moves: tuple[Move, ...] | None = None

    def _line(self) -> tuple[Move, ...]:
        if self._moves is None:
            self._moves = self._make()
        return self._moves

    def __getitem__(self, index):
        return self._line()[index]

    def __len__(self) -> int:
        return len(self._line())

    def __eq__(self, other: object) -> bool:
        return self._line() == (tuple(other) if isinstance(other, abc.Sequence) else other)

    def __hash__(self) -> int:
        return hash(self._line())

    def __repr__(self) -> str:
        return repr(self._line())


@dataclass(frozen=True)
class SearchResult:
    """The answer of a search: the move to play and what the engine expects next."""

    best_move: Move | None  #: None only when the side to move has no legal move
    ponder_move: Move | None  #: the expected reply (the second move of the pv)
    score: int  #: hundredths of a man from the side to move's point of view
    depth: int  #: the last completed nominal depth (0 for an immediate answer)
    seldepth: int
    nodes: int
    time: float  #: seconds spent
    pv: Sequence[Move]  #: a tuple, or a LazyLine built when first read (the same to read)
    #: the endgame databases' value of the position (counters applied), None when not in them
    egtb: EgtbValue | None = None

    @property
    def nps(self) -> int:
        return round(self.nodes / self.time) if self.time > 0 else 0

    @property
    def mate(self) -> int | None:
        """Moves to a forced win (positive) or loss (negative); see mate_in."""
        return mate_in(self.score)


class Engine:
    """A search engine for one rule set. Reuse it over a game: it keeps its hash table.

    ``variant`` is a Variant, or a rule-set name for a caller that has no record. ``level``
    is "easy", "medium", "hard" or "full"/None; ``seed`` makes a weaker level's choice among
    near-best moves reproducible. ``evaluation`` is "learned" (weights from ``weights``: a
    ``.dkw`` file, by default the one shipped for the rule set) or "classic" (the hand-written
    evaluation); None means ``engine.learned.DEFAULT_EVALUATION``. A weights file that does
    not fit raises ``engine.weights_file.WeightsError``. ``threads``
    (1 to the number of cores) searches on that many threads sharing the hash table (the full
    level only: the weaker levels' budgets are one thread's). ``egtb`` is a directory of
    endgame databases (or a Tablebase): the search probes them and, in a database position,
    plays only moves that keep its value (docs/egtb.md). One search runs at a time;
    ``stop`` and ``ponderhit`` may be called from any thread. The hash table's pages are
    brought into memory on a thread of their own (``prefault``), at once unless
    ``prefault=False`` (a front end that first wants to answer fast calls it later).
    """

    def __init__(
        self,
        variant: "str | Variant" = "international",
        hash_mb: int = DEFAULT_HASH_MB,
        level: "str | Level | None" = None,
        seed: int = 0,
        time_settings: TimeSettings | None = None,
        weights: "str | os.PathLike | None" = None,
        evaluation: str | None = None,
        threads: int = 1,
        egtb: "str | os.PathLike | Tablebase | None" = None,
        prefault: bool = True,
    ):
        self.variant: Variant = as_variant(variant)
        check_threads(threads)
        if evaluation is None:
            evaluation = "learned" if weights is not None else DEFAULT_EVALUATION
        if evaluation not in EVALUATIONS:
            raise ValueError(f"evaluation must be one of {', '.join(EVALUATIONS)}, "
                             f"not {evaluation!r}")
        if evaluation == "classic" and weights is not None:
            raise ValueError("the classic evaluation takes no weights")
        self.evaluation: str = evaluation
        learned = load_weights(self.variant, weights) if evaluation == "learned" else None
        check_hash(hash_mb)
        draws = self.variant.draws
        counts = tuple(n or 0 for n in (draws.king_moves, draws.no_progress,
                                        draws.endgame_three, draws.endgame_two))
        rules = _core.core_rules(self.variant)
        #: a helper Searcher's arguments: hash size 0, it uses the main Searcher's table
        self._searcher_args = (rules, self.variant.name, 0, *counts)
        self._learned = learned  #: the evaluation the search uses (None: the classic one)
        self.egtb: Tablebase | None = open_databases(self.variant, egtb)
        #: a man in the evaluation's units: the levels' margins are set in hundredths of a man
        self._man = man_worth(self.variant, weights) if learned is not None else 100.0
        self._searcher = self._new_searcher(hash_mb)
        #: the thread bringing the table's pages into memory (see prefault)
        self._touching: threading.Thread | None = None
        #: helper Searchers, one per thread beyond the first (tables: the main one's)
        self._helpers: list = []
        #: the last search's helper threads: told to stop, maybe not yet stopped (a loaded
        #: machine may not run them for a while); joined before anything touches their state
        self._helper_threads: list[threading.Thread] = []
        self._set_helpers(threads - 1)
        self.level: Level = get_level(level)
        self.seed = seed
        self.time_settings = time_settings or TimeSettings()
        self._busy = threading.Lock()
        self._jobs: queue.SimpleQueue | None = None  # the search thread's (see search_async)
        self._pending_clear: Future[None] | None = None
        self._control = threading.Lock()
        self._stop_requested = False
        self._ponderhit_requested = False
        self._current: _RootSearch | None = None
        if prefault:
            self.prefault()

    # -- settings --------------------------------------------------------------------------

    @property
    def hash_mb(self) -> int:
        return self._searcher.hash_mb

    def resize(self, hash_mb: int) -> None:
        """A new hash table of ``hash_mb`` MB (everything learned is lost)."""
        check_hash(hash_mb)
        with self._busy:
            self._join_helpers()
            self._settle_table()  # (it writes the old table)
            self._searcher.resize(hash_mb)
        self.prefault()

    def prefault(self) -> None:
        """Bring every page of the hash table into memory on a thread of its own. A new table
        costs nothing until written, and the page faults (tens of milliseconds for 64 MB) would
        otherwise fall on the first searches; searches may run meanwhile."""
        with self._busy:
            self._settle_table()
            self._touching = threading.Thread(target=self._searcher.touch_table,
                                              name="damka-hash-pages", daemon=True)
            self._touching.start()

    def wait_for_table(self) -> None:
        """Return once the hash table's pages are all in memory (``prefault``'s thread is
        done): a caller about to start a clock (a match's first game) wants neither the page
        faults nor that thread taking a core from the search."""
        with self._busy:
            self._settle_table()

    def _settle_table(self) -> None:
        if self._touching is not None:
            self._touching.join()
            self._touching = None

    def _new_searcher(self, hash_mb: int) -> Searcher:
        """A main Searcher with a table of ``hash_mb`` MB, this engine's evaluation and
        databases."""
        rules, name, _, *counts = self._searcher_args
        searcher = Searcher(rules, name, hash_mb, *counts)
        searcher.set_evaluation(self._learned)
        searcher.set_man_worth(round(self._man))
        if self.egtb is not None:
            searcher.set_egtb(self.egtb.memory_solver(), self.egtb.max_pieces)
        return searcher

    def warm(self) -> None:
        """Run a tiny search on a scratch table, so that the code, the evaluation's tables
        and the databases are in memory before the first real search. This engine's table,
        killers and history are left as they were (its pages come in with ``prefault``)."""
        scratch = self._new_searcher(1)
        with self._busy:
            self._join_helpers()
            main, helpers = self._searcher, self._helpers
            self._searcher, self._helpers = scratch, []
        try:
            self.search(Board(self.variant), Limits(depth=3))
        finally:
            with self._busy:
                self._searcher, self._helpers = main, helpers

    def clear(self) -> None:
        """Forget the hash table, killers and history: a new game, or a reproducible search."""
        self._wait_for_clear()
        with self._busy:
            self._clear_held()

    def _clear_held(self) -> None:
        """``clear``'s work, with the busy lock held."""
        self._join_helpers()
        if not self._searcher.table_fresh:  # (nothing to wait for on an all-zero table)
            self._settle_table()  # (a write of its could bring back a cleared entry)
        self._searcher.clear()
        for helper in self._helpers:
            helper.clear()

    def set_weights(self, weights: "str | os.PathLike | bytes | None") -> None:
        """Play with other learned weights from the next search on: a weights file (None:
        the shipped one), or parameters as little-endian int16 bytes in the layout's order
        (a tuner's trial weights; engine.evaluation.params_bytes). The hash table, killers
        and history are cleared: their scores were the old evaluation's. WeightsError for a
        file that does not fit; ValueError for the classic evaluation or too many bytes."""
        if self.evaluation != "learned":
            raise ValueError("the classic evaluation takes no weights")
        if isinstance(weights, bytes):
            learned, man = params_evaluation(self.variant, weights)
        else:
            learned, man = load_weights(self.variant, weights), man_worth(self.variant, weights)
        self._wait_for_clear()
        with self._busy:
            self._join_helpers()
            self._learned, self._man = learned, man
            self._searcher.set_evaluation(learned)
            self._searcher.set_man_worth(round(man))
            self._clear_held()

    @property
    def threads(self) -> int:
        return 1 + len(self._helpers)

    def set_threads(self, threads: int) -> None:
        """Search on ``threads`` threads from the next search on (1 to the number of cores).
        Each thread beyond the first costs its own stacks, killers and history (about 0.35 MB,
        see the README), not another hash table."""
        check_threads(threads)
        with self._busy:
            self._join_helpers()
            self._set_helpers(threads - 1)

    def _join_helpers(self) -> None:
        """Wait for the last search's helper threads to have stopped (with the busy lock)."""
        for thread in self._helper_threads:
            thread.join()
        self._helper_threads = []

    def _set_helpers(self, count: int) -> None:
        del self._helpers[count:]
        while len(self._helpers) < count:
            self._helpers.append(Searcher(*self._searcher_args))

    def set_level(self, level: "str | Level | None", seed: int | None = None) -> None:
        self.level = get_level(level)
        if seed is not None:
            self.seed = seed

    # -- searching -------------------------------------------------------------------------

    def search(
        self,
        board: Board,
        limits: Limits | None = None,
        on_info: InfoCallback | None = None,
        ponder: bool = False,
        counters: DrawCounters | None = None,
        clock_start: float | None = None,
    ) -> SearchResult:
        """Search the board's position (its move stack gives repetitions and draw counters).

        With ``ponder`` the time limits wait for ``ponderhit()``; depth and node limits
        still apply. ``counters`` overrides the draw counters of the move stack (a game set
        up from a FEN whose counters are known). Blocks until the search ends; call ``stop``
        from another thread to end it early.
        """
        self._begin()
        try:
            return self._run(board, limits, on_info, ponder, counters, clock_start)
        finally:
            self._busy.release()

    def ponder(self, board: Board, limits: Limits | None = None,
               on_info: InfoCallback | None = None) -> SearchResult:
        """Search the position after the expected reply until ponderhit() or stop()."""
        return self.search(board, limits, on_info, ponder=True)

    def search_async(
        self,
        board: Board,
        limits: Limits | None = None,
        on_info: InfoCallback | None = None,
        ponder: bool = False,
        counters: DrawCounters | None = None,
        clock_start: float | None = None,
        done: "Callable[[Future[SearchResult]], object] | None" = None,
    ) -> "Future[SearchResult]":
        """Start ``search`` on the engine's search thread and return its Future; stop() works
        from the moment this returns. ``done(future)`` is called in the search thread once the
        result (or the exception) is in, with the engine already free for the next search: a
        front end answers from there, with no thread of its own waiting. ``clock_start`` (on
        the ``now()`` clock) is when the request came in.

        The search thread is started with the first search and lives as long as the engine
        (a thread per search cost about a millisecond: more than a DXP move's whole budget)."""
        board = board.copy()
        return self._submit_held(
            lambda: self._run(board, limits, on_info, ponder, counters, clock_start), done)

    def clear_async(self) -> "Future[None]":
        """``clear`` on the search thread, so that the caller goes on at once (a large table
        takes tens of milliseconds: a DXP session clears between games). The next
        ``search_async`` waits for it. Raises RuntimeError while a search runs."""
        future = self._submit_held(self._clear_held)
        self._pending_clear = future
        return future

    def _submit_held(self, work: Callable[[], Any],
                     done: "Callable[[Future], object] | None" = None) -> "Future":
        """Take the engine (RuntimeError if a search runs), then run ``work`` on the search
        thread and hand its result or exception to the returned Future (and ``done``)."""
        from concurrent.futures import Future  # (here: it costs start-up 8 ms)

        self._begin()
        future: Future = Future()
        future.set_running_or_notify_cancel()
        if done is not None:
            future.add_done_callback(done)

        def job() -> None:
            # the engine is free before the result is handed over: a caller that starts the
            # next search as soon as it has the result (a Hub go on our done) finds it free
            try:
                result = work()
            except BaseException as exc:  # handed to the caller through the Future
                self._busy.release()
                future.set_exception(exc)
            else:
                self._busy.release()
                future.set_result(result)

        self._submit(job)
        return future

    def _wait_for_clear(self) -> None:
        pending, self._pending_clear = self._pending_clear, None
        if pending is not None:
            pending.result()

    def _submit(self, job: Callable[[], None]) -> None:
        """Run ``job`` on the engine's search thread, after the jobs before it."""
        if self._jobs is None:
            jobs: queue.SimpleQueue = queue.SimpleQueue()
            threading.Thread(target=_serve, args=(jobs,), name="damka-search",
                             daemon=True).start()
            # the thread holds only the queue: the engine can be collected, and then it ends
            weakref.finalize(self, jobs.put, None)
            self._jobs = jobs
        self._jobs.put(job)

    def stop(self) -> None:
        """End the running search soon; it returns the best move found so far. Safe from any
        thread; does nothing when no search runs."""
        with self._control:
            if self._busy.locked():
                self._stop_requested = True
                self._searcher.stop()
                for helper in self._helpers:
                    helper.stop()

    def ponderhit(self) -> None:
        """The expected reply was played: the ponder search becomes a normal timed search,
        with the clock counted from now. Latched like stop(): one that comes before the
        search thread has set up its root (it may wait for the last search's helpers) is
        applied there. Does nothing when no search runs."""
        with self._control:
            if self._current is not None:
                self._current.ponderhit()
            elif self._busy.locked():
                self._ponderhit_requested = True

    @property
    def searching(self) -> bool:
        return self._busy.locked()

    def _begin(self) -> None:
        self._wait_for_clear()  # (a table being cleared is not a search: wait for it)
        if not self._busy.acquire(blocking=False):
            raise RuntimeError("a search is already running on this engine")
        with self._control:
            self._stop_requested = False
            self._ponderhit_requested = False

    def _run(self, board: Board, limits: Limits | None, on_info: InfoCallback | None,
             ponder: bool, counters: DrawCounters | None = None,
             clock_start: float | None = None) -> SearchResult:
        if board.variant != self.variant:
            raise ValueError(
                f"the board plays {board.variant}, this engine {self.variant}"
            )
        self._join_helpers()
        root = _RootSearch(self, board, limits or Limits(), on_info, ponder, counters, clock_start)
        with self._control:
            self._current = root
            if self._stop_requested:  # stop() came before the core's flag was reset
                self._searcher.stop()
            if self._ponderhit_requested:  # ponderhit() came before there was a root
                root.ponderhit()
        try:
            return root.run()
        finally:
            with self._control:
                self._current = None


def _serve(jobs: "queue.SimpleQueue") -> None:
    """The body of an engine's search thread: the queued jobs in turn, until None."""
    while True:
        job = jobs.get()
        if job is None:
            return
        job()
        job = None  # (a finished job must not keep its engine alive until the next one)


class _HelperAhead(Exception):
    """A helper thread completed the iteration the main search is on."""


class _RootSearch:
    """One search of one position: the iterative-deepening loop over the root moves."""

    def __init__(self, engine: Engine, board: Board, limits: Limits,
                 on_info: InfoCallback | None, ponder: bool, counters: DrawCounters | None,
                 clock_start: float | None = None):
        self.engine = engine
        self.counters = counters
        self.s = engine._searcher
        self.board = board
        self.limits = limits
        self.on_info = on_info
        self.level = engine.level
        self.pondering = ponder
        # the clock runs from when the request arrived (a front end knows), else from now
        self.started = Searcher.now() if clock_start is None else clock_start
        self.clock_start = self.started
        self.deadline = 0.0

        depth = MAX_DEPTH if limits.infinite or limits.depth is None else limits.depth
        self.user_nodes = None if limits.infinite else limits.nodes
        self.level_nodes = self.level.nodes
        if self.level.depth is not None:
            depth = min(depth, self.level.depth)
        self.max_depth = depth
        caps = [n for n in (self.user_nodes, self.level_nodes) if n is not None]
        self.node_limit = min(caps) if caps else None

        self.tm: TimeManager | None = None
        if limits.timed:
            position = board.position
            pieces = bin(position.white | position.black).count("1")
            start_pieces = bin(_start_pieces(board.variant)).count("1")
            self.tm = TimeManager(
                movetime=limits.movetime,
                time_left=limits.time_left,
                increment=limits.increment,
                moves_to_go=limits.moves_to_go,
                moves_left_estimate=estimate_moves_left(pieces, start_pieces),
                settings=engine.time_settings,
            )

        # result so far
        self.best = 0
        self.score = 0
        self.depth = 0
        self.core_pv: list[tuple] = []
        self.nodes_before = 0  # nodes of earlier phases (the core counts from start())
        self.helper_nodes = 0  # nodes of the helper threads, once they have stopped
        self.helpers_running: list = []
        self.egtb_value: EgtbValue | None = None  # the databases' value of the root
        self.allowed: list[int] | None = None  # the root moves the databases keep

    # -- control from other threads (under the engine's control lock) ----------------------

    def ponderhit(self) -> None:
        if not self.pondering:
            return
        now = Searcher.now()
        self.pondering = False
        self.clock_start = now
        if self.tm is not None and self.tm.hard is not None:
            self.deadline = now + self.tm.hard
            self.s.set_deadline(self.deadline)
            # pondered at least as long as this move was going to take: answer now
            soft = self.tm.soft
            if self.depth >= 1 and soft is not None and now - self.started >= soft:
                self.s.stop()

    # -- the search ------------------------------------------------------------------------

    def run(self) -> SearchResult:
        s, board = self.s, self.board
        history = game_history(board)
        keys = [s.key(p.white, p.black, p.kings, p.white_to_move) for p in history.positions]
        position = board.position
        self.root_key = s.key(position.white, position.black, position.kings,
                              position.white_to_move)
        c = self.counters or history.counters
        core_moves = s.set_position(
            position.white, position.black, position.kings, position.white_to_move,
            history=keys, reversible=c.reversible, no_progress=c.no_progress, endgame=c.endgame,
        )
        self.moves = [Move.from_core(t) for t in core_moves]
        if not self.moves:
            return self._result(None, -MATE_SCORE, 0, [])
        if self.engine.egtb is not None:
            from .egtb.root import root_moves

            self.egtb_value, keep = root_moves(self.engine.egtb, board, c)
            if self.egtb_value is not None:
                self.allowed = [i for i, m in enumerate(self.moves) if m in keep]

        with self.engine._control:
            if not self.pondering and self.tm is not None and self.tm.hard is not None:
                self.deadline = self.clock_start + self.tm.hard
            s.start(self.deadline, self.node_limit or 0)
            if self.engine._stop_requested:
                s.stop()

        if self.allowed is not None and len(self.allowed) == 1 and self.limits.timed \
                and not self.pondering and len(self.moves) > 1:
            # the databases leave one move: play it
            score = s.search_move(self.allowed[0], 1, -INFINITY, INFINITY)
            pv = s.pv() if not s.stopped else []
            return self._result(self.allowed[0], score if not s.stopped else 0, 0, pv)
        if len(self.moves) == 1 and self.limits.timed and not self.pondering:
            # a forced move in a game: answer at once, with a glance at the reply for the
            # ponder move (analysis, depth and node searches still look at it properly)
            score = s.search_move(0, 1, -INFINITY, INFINITY)
            pv = s.pv() if not s.stopped else []
            return self._result(0, score if not s.stopped else 0, 0, pv)

        self._iterate()
        if not self.engine._stop_requested and self.level.margin > 0 and self.depth >= 1:
            self._choose_level_move()
        return self._result(self.best, self.score, self.depth, self.core_pv)

    def _stopped(self) -> bool:
        return self.s.stopped

    def _iterate(self) -> None:
        s = self.s
        order = list(range(len(self.moves))) if self.allowed is None else list(self.allowed)
        hash_move = s.hash_move()
        if hash_move not in order:
            hash_move = -1
        if hash_move >= 0:
            order.remove(hash_move)
            order.insert(0, hash_move)
        self.best = order[0]
        self.s.set_depth_limit(self.max_depth)
        helpers = self._start_helpers()
        try:
            self._deepen(order, hash_move)
        finally:
            self._stop_helpers(helpers)

    def _start_helpers(self) -> list[tuple]:
        """Lazy SMP: the engine's helper Searchers take this root and search it on their own
        threads until _stop_helpers. Only the full level uses them (a weaker level's node and
        depth budgets are one thread's)."""
        helpers = self.engine._helpers
        if not helpers or self.level_nodes is not None or self.level.depth is not None \
                or self.allowed is not None:  # (databases: the moves to play are known)
            return []
        started = []
        with self.engine._control:
            for number, helper in enumerate(helpers, 1):
                helper.follow(self.s, number)
                if self.engine._stop_requested:
                    helper.stop()
                thread = threading.Thread(target=helper.run_helper, name=f"damka-helper-{number}",
                                          daemon=True)
                thread.start()
                started.append((helper, thread))
        self.helpers_running = [helper for helper, _ in started]
        return started

    def _stop_helpers(self, started: list[tuple]) -> None:
        """Tell the helpers to stop, without waiting: the answer does not wait for a thread the
        machine is slow to run. The engine joins them before its next use of their state."""
        for helper, _thread in started:
            helper.stop()
            self.helper_nodes += helper.nodes  # (a stopping helper adds a few hundred more)
        self.engine._helper_threads = [thread for _, thread in started]
        self.helpers_running = []

    def _deepen(self, order: list[int], hash_move: int) -> None:
        s = self.s
        previous: int | None = None
        depth = 0
        while depth < self.max_depth:
            depth += 1
            if depth > 1 and not self._may_start_iteration():
                break
            s.set_iteration(depth)
            ahead = False
            try:
                if depth == 1:
                    found = self._first_iteration(order, hash_move)
                else:
                    found = self._aspiration(depth, order, previous)
            except _HelperAhead:
                found, ahead = None, True
            stopped = found is None and not ahead
            # a helper that completed this iteration or a deeper one gives its result (Lazy
            # SMP's time to depth): the thread ahead decides for all of them
            adopted = self._helper_ahead(depth)
            if adopted is not None:
                depth, found = adopted
            elif ahead:  # (its line was unreadable: this iteration again)
                depth -= 1
                continue
            if found is None:  # stopped before the iteration finished
                break
            best, score, pv = found
            self.best, self.score, self.depth, self.core_pv = best, score, depth, pv
            if depth > 1:  # (after depth 1 the order is already set: see _first_iteration)
                order.remove(best)
                order.insert(0, best)
            s.store_root(depth, score, best)
            self._info(final=True)
            if self.tm is not None:
                self.tm.update(best, score)
            previous = score
            if self._node_budget_spent():
                break
            if stopped:
                break  # (a helper's iteration, taken as the search stopped)
            if abs(score) > MATE_THRESHOLD and not self.limits.infinite:
                plies = MATE_SCORE - abs(score)
                if depth >= plies + 4:
                    break  # the forced result is proven; deeper adds nothing

    def _helper_ahead(self, depth: int) -> tuple[int, tuple] | None:
        """(its depth, (best, score, pv)) of the deepest iteration a helper completed, when it
        is ``depth`` or deeper; else None. (No helper runs when the databases limit the
        root moves: see _start_helpers.)"""
        best = None
        for helper in self.helpers_running:
            done = self.s.helper_iteration(helper)
            if done is None or done[0] < depth:
                continue
            if best is None or done[0] > best[0]:
                best = done
        if best is None:
            return None
        return best[0], (best[2], best[1], best[3])

    def _may_start_iteration(self) -> bool:
        if self._stopped() and not self.s.take_helper_ahead():
            return False
        if self.tm is None or self.pondering:
            return True
        return self.tm.start_iteration(Searcher.now() - self.clock_start)

    def _node_budget_spent(self) -> bool:
        """A weaker level stops deepening once its node budget is half spent, keeping the
        rest for looking at the alternatives to its best move."""
        return self.level_nodes is not None and self.s.nodes >= self.level_nodes // 2

    def _first_iteration(self, order: list[int], hash_move: int):
        """Depth 1 with a full window for every move: exact scores to order the moves by."""
        s = self.s
        scores = {}
        pvs = {}
        for i in order:
            score = s.search_move(i, 1, -INFINITY, INFINITY)
            if s.stopped:
                return None
            scores[i] = score
            pvs[i] = s.pv()
        order.sort(key=lambda i: -scores[i])
        best = order[0]
        if hash_move >= 0:  # a deeper search of this position said so before
            order.remove(hash_move)
            order.insert(0, hash_move)
        return best, scores[best], pvs[best]

    def _aspiration(self, depth: int, order: list[int], previous: int | None):
        """One iteration: search the root in a window around the previous score, widening it
        until the score falls inside."""
        delta = ASPIRATION
        if depth >= ASPIRATION_DEPTH and previous is not None and abs(previous) < MATE_THRESHOLD:
            alpha, beta = max(previous - delta, -INFINITY), min(previous + delta, INFINITY)
        else:
            alpha, beta = -INFINITY, INFINITY
        while True:
            found = self._root(depth, order, alpha, beta)
            if found is None:
                return None
            best, score, pv = found
            if score <= alpha and alpha > -INFINITY:
                if self.tm is not None:
                    self.tm.note_fail_low()
                beta = (alpha + beta) // 2
                alpha = max(score - delta, -INFINITY)
            elif score >= beta and beta < INFINITY:
                order.remove(best)
                order.insert(0, best)
                beta = min(score + delta, INFINITY)
            else:
                return found
            delta *= 2
            if delta > 400:
                alpha, beta = -INFINITY, INFINITY

    def _root(self, depth: int, order: Sequence[int], alpha: int, beta: int):
        """PVS over the root moves: the first with the full window, the others with a null
        window (a late quiet one a ply shallower when the core's root_lmr says so, scouted
        again at the full depth if it beats alpha) and a re-search when they beat alpha.
        Returns (best, score, pv) where score may be a bound outside (alpha, beta); None when
        stopped."""
        s = self.s
        best, best_score, best_pv = order[0], -INFINITY, []
        a = alpha
        for n, i in enumerate(order):
            if n == 0:
                score = s.search_move(i, depth, a, beta)
            else:
                if self.engine._stop_requested:
                    s.stop()
                reduction = s.root_reduction(i, n, depth)
                score = s.search_move(i, depth - reduction, a, a + 1, False)
                if reduction and not s.stopped and score > a:
                    score = s.search_move(i, depth, a, a + 1, False)
                if not s.stopped and a < score < beta:
                    score = s.search_move(i, depth, a, beta)
            if s.stopped:
                if s.take_helper_ahead():
                    raise _HelperAhead
                return None
            if score > best_score:
                best_score = score
                if n == 0 or score > a:
                    best, best_pv = i, s.pv()
            if score > a:
                if n > 0:
                    # proven better than the previous best at this depth: play it if stopped now
                    self.best, self.score, self.core_pv = i, score, best_pv
                    self._info(final=False, depth=depth)
                if score >= beta:
                    return i, score, best_pv
                a = score
        return best, best_score, best_pv

    def _choose_level_move(self) -> None:
        """A weaker level: a seeded choice among the moves within its margin of the best,
        each scored by the real search at the depth reached."""
        s = self.s
        self.engine._join_helpers()  # (the material search below clears the table)
        best, best_score, depth = self.best, self.score, self.depth
        if len(self.moves) < 2 or abs(best_score) > MATE_THRESHOLD:
            return
        if self.deadline and Searcher.now() >= self.deadline:
            return  # out of time: keep the best move
        used = s.nodes
        budget = self.level_nodes
        if self.user_nodes is not None:
            budget = min(budget or self.user_nodes, self.user_nodes - used)
            if budget <= 0:
                return
        self.nodes_before += used
        s.start(self.deadline, budget or 0)
        margin = max(1, round(self.level.margin * self.engine._man / 100))
        floor = best_score - margin
        candidates = [(best, best_score)]
        pvs = {best: self.core_pv}
        for i in range(len(self.moves)) if self.allowed is None else self.allowed:
            if i == best:
                continue
            score = s.search_move(i, depth, floor - 1, best_score + 1)
            if s.stopped:
                break
            if score >= floor:
                candidates.append((i, min(score, best_score)))
                pvs[i] = s.pv()
        # never a move whose line ends with less material than the best move's line
        floor_material = line_material(self.board, self._pv_moves(best, self.core_pv))
        candidates = [(i, score) for i, score in candidates
                      if i == best or line_material(self.board, self._pv_moves(i, pvs[i]))
                      >= floor_material]
        # and never a piece lost just past the level's horizon: the candidates (the best move
        # too) are searched two plies deeper with material alone as the evaluation, so that
        # no evaluation's taste for a position can pass a lost man for a fair price; and, for
        # the deeper levels, at five plies too (a man given for a return the player cannot
        # see coming looks like a blunder to that player)
        kept = set(i for i, _ in candidates)
        for horizon in sorted({depth + 2, min(depth + 2, 5)}):
            kept &= self._keeping_material(sorted(kept), horizon)
        candidates = [(i, score) for i, score in candidates if i in kept] or [(best, best_score)]
        chosen = choose(candidates, best_score, margin,
                        seed=f"{self.engine.seed}:{self.level.name}:{self.root_key}")
        if chosen != best:
            self.best = chosen
            self.score = dict(candidates)[chosen]
            self.core_pv = pvs[chosen]
            self._info(final=False)  # the move that will be played, with its line

    def _keeping_material(self, indices: list[int], depth: int) -> set[int]:
        """The moves of ``indices`` that keep as much material, ``depth`` plies on with
        captures played out, as the best of them. (Material alone scores a position exactly;
        only known drawn endings are scaled down, and a loss there still counts below.)"""
        s = self.s
        s.set_evaluation(material_core(self.engine.variant))
        s.clear()  # the table holds the real evaluation's scores
        balance: dict[int, int] = {}
        try:
            for i in indices:
                score = s.search_move(i, depth, -INFINITY, INFINITY)
                if s.stopped:
                    break
                balance[i] = score
        finally:
            s.set_evaluation(self.engine._learned)
            s.clear()
        if not balance:
            return set()
        top = max(balance.values())
        return {i for i, value in balance.items() if value >= top}

    # -- reporting -------------------------------------------------------------------------

    def _pv_moves(self, best: int, core_pv: Sequence[tuple],
                  limit: int | None = None) -> tuple[Move, ...]:
        """The core's variation as legal Moves (full paths), replayed from the root (its first
        ``limit`` moves only, if given)."""
        return _replay(self.board.copy(stack=False), self.moves[best], core_pv, limit)

    def _info(self, final: bool, depth: int | None = None) -> None:
        if self.on_info is None:
            return
        self.on_info(SearchInfo(
            depth=self.depth if depth is None else depth,
            seldepth=self.s.sel_depth,
            score=self.score,
            nodes=self._nodes(),
            time=Searcher.now() - self.started,
            pv=self._pv_moves(self.best, self.core_pv),
            final=final,
        ))

    def _nodes(self) -> int:
        """Nodes searched so far, on every thread."""
        running = sum(helper.nodes for helper in self.helpers_running)
        return self.nodes_before + self.s.nodes + self.helper_nodes + running

    def _result(self, best: int | None, score: int, depth: int,
                core_pv: Sequence[tuple]) -> SearchResult:
        if best is None:
            head: tuple[Move, ...] = ()
            pv: Sequence[Move] = ()
        else:
            # the whole line costs a move generation per ply in Python, a third of a fast
            # search's time: only the reply is replayed now, the rest when someone asks
            head = self._pv_moves(best, core_pv, 2)
            pv = LazyLine(functools.partial(_replay, self.board.copy(stack=False),
                                            self.moves[best], tuple(core_pv)))
        return SearchResult(
            best_move=head[0] if head else None,
            ponder_move=head[1] if len(head) > 1 else None,
            score=score,
            depth=depth,
            seldepth=self.s.sel_depth,
            nodes=self._nodes(),
            time=Searcher.now() - self.started,
            pv=pv,
            egtb=self.egtb_value,
        )


def open_databases(variant: Variant, egtb) -> "Tablebase | None":
    """The databases to use: a Tablebase, or a directory whose files for the rule set are
    shared by every engine of the process (None: no databases); a directory without them is
    a ValueError naming it. (Also the check of ``damka selfplay --egtb`` before its workers
    start.)"""
    if egtb is None:
        return None
    # imported here: the databases need numpy, which a search without them does not load
    from .egtb.paths import variant_dir
    from .egtb.probe import Tablebase, shared_tablebase

    if isinstance(egtb, Tablebase):
        return egtb
    tb = shared_tablebase(variant, egtb)
    if tb is None:
        why = (" (they are for forced captures)" if not variant.forced_capture else
               f"; build them with: damka egtb build --variant {variant.name} --pieces N")
        raise ValueError(f"no endgame databases for {_label(variant)} in "
                         f"{variant_dir(egtb, variant.name)}{why}")
    return tb


def _label(variant: Variant) -> str:
    return variant.name if variant.forced_capture else f"{variant.name} with the house rule"


def _replay(board: Board, first: Move, core_pv: Sequence[tuple],
            limit: int | None = None) -> tuple[Move, ...]:
    """A core variation as legal Moves (full paths) from ``board`` (a copy it may change)."""
    moves = [first]
    board.push(first)
    for origin, destination, captured, _promotes in list(core_pv)[1:limit]:
        for m in board.legal_moves:
            if m.origin == origin and m.destination == destination \
                    and m.captured_mask == captured:
                board.push(m)
                moves.append(m)
                break
        else:
            break
    return tuple(moves)


def _start_pieces(variant: Variant) -> int:
    start = parse_fen(variant, variant.start_fen)
    return start.white | start.black
