"""Strength levels: easy, medium, hard and full.

A weaker level searches less deep with a node cap, and then picks, by a seeded draw, one of
the root moves whose score (from the real search at the depth reached) lies within a small
margin of the best. The margin is far below the value of a man, so a weaker level plays
imprecise moves but never gives a piece away for nothing when the search sees a safe move.
The same seed in the same position always gives the same move.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Sequence

__all__ = ["Level", "LEVELS", "get_level", "choose"]


@dataclass(frozen=True)
class Level:
    """How one strength level limits the search and loosens the choice of move."""

    name: str
    #: deepest nominal depth (None: no cap)
    depth: int | None
    #: node cap per move (None: no cap)
    nodes: int | None
    #: moves scoring within this many hundredths of a man of the best may be chosen
    margin: int

    @property
    def is_full(self) -> bool:
        return self.depth is None and self.nodes is None and self.margin == 0


LEVELS: dict[str, Level] = {
    "easy": Level("easy", depth=3, nodes=20_000, margin=40),
    "medium": Level("medium", depth=5, nodes=100_000, margin=20),
    "hard": Level("hard", depth=9, nodes=1_000_000, margin=8),
    "full": Level("full", depth=None, nodes=None, margin=0),
}


def get_level(level: "str | Level | None") -> Level:
    """The level of a name (case-insensitive); None means full strength."""
    if level is None:
        return LEVELS["full"]
    if isinstance(level, Level):
        return level
    try:
        return LEVELS[str(level).strip().casefold()]
    except KeyError:
        raise ValueError(f"unknown level {level!r} (known: {', '.join(LEVELS)})") from None


def choose(candidates: Sequence[tuple[int, int]], best_score: int, margin: int,
           seed: "int | str") -> int:
    """Pick one of ``candidates`` ((index, score) pairs, each within ``margin`` of
    ``best_score``) with a seeded draw that favours the better ones.

    The weight falls linearly from margin + 1 for the best score to 1 at the margin's edge.
    """
    if not candidates:
        raise ValueError("no candidate moves")
    rng = random.Random(str(seed))
    floor = best_score - margin
    weights = [1 + max(0, min(score, best_score) - floor) for _, score in candidates]
    return rng.choices([index for index, _ in candidates], weights=weights)[0]
