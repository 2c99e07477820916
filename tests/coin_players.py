"""Coin players for match tests: engines in the test process that resign their first move
with probability ``p`` and otherwise play the first legal move. Cheap games with a known
bias, so that an SPRT decides soon (tests/test_match.py, tests/test_cluster.py)."""

from __future__ import annotations

import random
import time

from protocol.match.players import Answer, EngineResigned, Player


class CoinSpec:
    """An engine spec for the match runner: its players share one seeded coin."""

    max_instances = None

    def __init__(self, name: str, p: float, seed: int):
        self.name, self.p, self.rng = name, p, random.Random(seed)

    def create(self, variant) -> "CoinPlayer":
        return CoinPlayer(self)


class CoinPlayer(Player):
    def __init__(self, spec: CoinSpec):
        self.spec, self.name = spec, spec.name

    def play(self, game, request) -> Answer:
        now = time.monotonic()
        if self.spec.rng.random() < self.spec.p:
            raise EngineResigned("the coin said so")
        return Answer(next(iter(game.board.legal_moves)), now, now)
