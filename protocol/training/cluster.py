"""``damka selfplay --cluster``: self-play games played by slots across a Ray cluster.

A slot keeps one engine (as a worker process of the local pool does) and plays games by id
through the same ``play_game``; a game depends only on the settings and its id, so a game
replayed after its worker was lost is the same game. The records come back to the
coordinator, whose writer puts them in game-id order into the chunks as on one machine.
"""

from __future__ import annotations

import sys
from typing import Generator, Iterator, Sequence

from protocol.cluster.farm import Farm, WorkerInfo, prepare_worker, worker_info

from .data import GameRecord
from .games import SelfPlaySettings, make_players, play_game

__all__ = ["SelfPlaySlot", "on_cluster"]


class SelfPlaySlot:
    """One worker's engines (``Players``), playing one game at a time."""

    def __init__(self, settings: SelfPlaySettings, openings: Sequence):
        self.settings = settings
        self.openings = openings
        self.players = None
        prepare_worker()

    def check(self) -> WorkerInfo:
        """Make the engine here (its weights file must exist on this machine too)."""
        try:
            self.players = make_players(self.settings)
        except (MemoryError, ValueError, OSError) as exc:
            return worker_info([f"cannot create the engine: {exc}"])
        return worker_info()

    def play(self, game_id: int) -> GameRecord:
        return play_game(self.settings, self.players, game_id, self.openings)

    def close(self) -> None:
        self.players = None


def _warn(text: str) -> None:
    print(f"damka selfplay: {text}", file=sys.stderr, flush=True)


def on_cluster(settings: SelfPlaySettings, ids: range, openings: Sequence, address: str,
               per_node: int | None) -> Generator[GameRecord, None, None]:
    """The records of games ``ids`` as they finish on the cluster at ``address``;
    closing the iterator stops every slot."""
    from protocol.cluster.connect import connected

    with connected(address) as ray:
        farm = Farm(ray, SelfPlaySlot, (settings, list(openings)), per_node=per_node,
                    warn=_warn, describe=lambda game_id: f"game {game_id}")
        results = farm.results(ids, key=lambda game_id: game_id)
        try:
            for finished in results:
                for _, record in finished:
                    yield record
        finally:
            results.close()
