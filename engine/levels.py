"""Strength levels: easy, medium, hard and full.

A weaker level searches less deep with a node cap, and then picks, by a seeded draw, one of
the root moves whose score (from the real search at the depth reached) lies within a small
margin of the best. The margin is far below the value of a man, and a move whose principal
variation ends with less material than the best move's is never a candidate (the evaluation
may find a man's loss compensated in an ending; a person would still call it a blunder). So a
weaker level plays imprecise moves but never gives a piece away for nothing when the search
sees a safe move. The same seed in the same position always gives the same move.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Sequence

from . import _core
from .board import Board
from .move import Move
from .position import Position
from .variants import Variant

__all__ = ["Level", "LEVELS", "get_level", "choose", "line_material"]


@dataclass(frozen=True)
class Level:
    """How one strength level limits the search and loosens the choice of move."""

    name: str
    #: deepest nominal depth (None: no cap)
    depth: int | None
    #: node cap per move (None: no cap)
    nodes: int | None
    #: moves scoring within this many hundredths of a man of the best may be chosen (a man as
    #: the evaluation values it: trained weights learn their own scale)
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


def king_worth(variant: Variant) -> int:
    """A king in men, for counting material: 3 for a flying king, 2 for a short one."""
    return 3 if variant.flying_kings else 2


def _material(board: Board, position: Position) -> int:
    """Men count 1, kings king_worth; the side to move's balance."""
    king = king_worth(board.variant)
    own, other = ((position.white, position.black) if position.white_to_move
                  else (position.black, position.white))

    def worth(mask: int) -> int:
        kings = bin(mask & position.kings).count("1")
        return bin(mask).count("1") + (king - 1) * kings

    return worth(own) - worth(other)


def _resolve(board: Board, position: Position, depth: int = 0) -> int:
    """Material after the captures pending in ``position`` are played out (best play)."""
    captures = [m for m in _core.generate(board.variant, position) if m[2]]
    static = _material(board, position)
    if not captures or depth > 40:
        return static
    best = static if not board.variant.forced_capture else None
    for origin, destination, captured, _path, promotes in captures:
        white, black, kings, white_to_move = position
        o, d = 1 << origin, 1 << destination
        own, opp = (white, black) if white_to_move else (black, white)
        king_moves = kings & o
        own = (own & ~o) | d
        opp &= ~captured
        kings &= ~(captured | o)
        if king_moves or promotes:
            kings |= d
        child = (Position(own, opp, kings, False) if white_to_move
                 else Position(opp, own, kings, True))
        value = -_resolve(board, child, depth + 1)
        if best is None or value > best:
            best = value
    assert best is not None  # (captures were found: at least one value)
    return best


def line_material(board: Board, line: Sequence[Move]) -> int:
    """The material balance, for the side to move on ``board``, at the end of ``line`` once
    the captures pending there are played out."""
    replay = board.copy(stack=False)
    for move in line:
        replay.push(move)
    value = _resolve(board, replay.position)
    return value if replay.white_to_move == board.white_to_move else -value
