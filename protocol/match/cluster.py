"""``damka match --cluster``: the match's games played by slots across a Ray cluster.

Each slot (an actor, see protocol/cluster/farm.py) keeps one player of each engine, started
when the slot checks in and reused from game to game, and plays whole games through the same
``play_scheduled`` as the runner's threads, clocks included: the coordinator sees only
finished games. A game travels as its Scheduled entry (round, colours, opening) and comes back
as its PDN text and record; the coordinator appends it to the file and updates the standings
and the SPRT, which stops the hand-out once it decides.
"""

from __future__ import annotations

import sys
import threading
from dataclasses import replace
from typing import Any

from engine.pdn import write_game
from protocol.cluster.farm import Farm, WorkerInfo, prepare_worker, worker_info
from protocol.match.games import (EnginePool, GameRecord, MatchConfig, NotPlayed, Scheduled,
                                  play_scheduled)

__all__ = ["MatchSlot", "play_on_cluster"]


class MatchSlot:
    """One game at a time on a worker, with one player of each engine kept running."""

    def __init__(self, config: MatchConfig, names: list[str], date: str):
        self.config = config
        self.names = names
        self.date = date
        self.variant = config.variant
        self.pools = [EnginePool(spec, self.variant, 1) for spec in config.engines]
        self.stop = threading.Event()
        prepare_worker()

    def check(self) -> WorkerInfo:
        """Start every engine here once: those that cannot start are this worker's problems."""
        problems = []
        for pool, name in zip(self.pools, self.names):
            player = pool.acquire()
            if player is None:
                problems.append(f"cannot start engine {name}: {pool.last_error}")
            pool.release(player, broken=False)
        return worker_info(problems)

    def play(self, s: Scheduled) -> tuple[str, GameRecord] | NotPlayed:
        played = play_scheduled(self.config, self.variant, self.names, self.date, self.pools,
                                s, self.stop)
        assert played is not None  # nothing sets this slot's stop: Ray ends the actor instead
        if isinstance(played, NotPlayed):  # an engine here could not be reached
            return played
        game, record = played
        return write_game(game), record

    def close(self) -> None:
        for pool in self.pools:
            pool.close_all()


def _warn(text: str) -> None:
    print(f"damka match: {text}", file=sys.stderr, flush=True)


def _describe(s: Scheduled) -> str:
    return f"game {s.round}"


def play_on_cluster(match: Any, pending: list[Scheduled]) -> None:
    """Play ``pending`` (in schedule order) of ``match`` (the runner's Match, which imports
    this module when it runs) on ``match.config.cluster``, recording each
    finished game through ``match.record``; returns when all are played, the SPRT decides
    or ``match.stop()`` is called."""
    from protocol.cluster.connect import connected

    config = match.config
    shipped = replace(config, pdn=None, resume=False, variant=match.variant)  # no file there
    warn = match.on_warning or _warn

    with connected(config.cluster) as ray:
        # engines on several threads: one game per that many cores (one engine thinks at once)
        threads = max(getattr(spec, "threads", 1) for spec in config.engines)
        farm = Farm(ray, MatchSlot, (shipped, match.names, match._date),
                    per_node=config.concurrency, cores_per_slot=threads, warn=warn,
                    describe=_describe)
        results = farm.results(pending, key=lambda s: s.round, stop=match._no_more_games,
                               abandon=match._stop.is_set)
        try:
            for finished in results:
                match.state.running = farm.running
                match.state.replayed = farm.replayed
                for _, result in finished:
                    if isinstance(result, NotPlayed):
                        match.give_up(result)
                match.record_all([result for _, result in finished
                                  if not isinstance(result, NotPlayed)])
        finally:
            results.close()
            match.state.running = 0
            match.state.replayed = farm.replayed
