"""Positions for tests that compare two implementations: seeded random games and random
placements, for any rule set."""

from __future__ import annotations

import random

from engine import _core, reference
from engine.fen import parse_fen
from engine.position import Position
from engine.squares import row_col


def random_games(variant, rng: random.Random, count: int) -> list[Position]:
    """Positions met in random games from the start position."""
    start = parse_fen(variant, variant.start_fen)
    out: list[Position] = []
    while len(out) < count:
        position = start
        for _ply in range(rng.randrange(60, 220)):
            moves = _core.generate(variant, position)
            if not moves:
                break
            out.append(position)
            captures = [m for m in moves if m[2]]
            pool = captures if captures and rng.random() < 0.5 else moves
            move = rng.choice(pool)
            position = reference.play(variant, position, reference.RefMove(*move))
    return out[:count]


def random_setups(variant, rng: random.Random, count: int) -> list[Position]:
    """Random placements: a few to many pieces each, many of them kings."""
    n = variant.squares
    out: list[Position] = []
    while len(out) < count:
        squares = rng.sample(range(n), rng.randrange(2, min(n, 24)))
        white = black = kings = 0
        king_rate = rng.choice((0.0, 0.2, 0.5, 1.0))
        for i, s in enumerate(squares):
            is_white = i % 2 == 0
            row = row_col(variant.size, s)[0]
            on_crowning_row = row == (0 if is_white else variant.size - 1)
            if on_crowning_row or rng.random() < king_rate:
                kings |= 1 << s
            if is_white:
                white |= 1 << s
            else:
                black |= 1 << s
        out.append(Position(white, black, kings, rng.random() < 0.5))
    return out
