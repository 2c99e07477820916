"""How a self-play game starts: an opening of a file or the start position, then random plies.

Game ``i`` draws its random plies from a generator seeded by (seed, i) alone, so it starts
the same way whichever worker plays it and whatever was played before. An opening whose
random plies already decide the game (a shallow search scores it a man or more for either
side, or the game is over) is drawn again from the same generator.
"""

from __future__ import annotations

import random
from typing import Sequence

from engine.board import Board
from engine.game import Game
from engine.position import Position
from engine.search import Engine, Limits
from engine.variants import Variant

__all__ = ["OPENING_MARGIN", "CHECK_DEPTH", "MAX_TRIES", "game_rng", "opening_board"]

#: an opening is kept when the shallow search scores it under this (hundredths of a man)
OPENING_MARGIN = 100
#: the depth of that search
CHECK_DEPTH = 4
#: draws before the most balanced one so far is taken
MAX_TRIES = 50


def game_rng(seed: int, game_id: int) -> random.Random:
    """The random generator of one game: a function of (seed, game id) only."""
    return random.Random(f"damka-selfplay:{seed}:{game_id}")


def opening_board(variant: Variant, start: Position, moves: Sequence, random_plies: int,
                  rng: random.Random, engine: Engine) -> Board:
    """A board after the opening ``moves`` from ``start`` and ``random_plies`` random plies.

    With random plies the result is checked by a shallow search and drawn again (up to
    MAX_TRIES times, then the most balanced draw is taken) when it is lost for either side.
    """
    base = Board(variant, start)
    for move in moves:
        base.push(move)
    if random_plies <= 0:
        return base
    best: tuple[int, Board] | None = None
    for _ in range(MAX_TRIES):
        board = _random_plies(base.copy(), random_plies, rng)
        if board is None or Game.from_board(board).outcome() is not None:
            continue
        score = abs(engine.search(board, Limits(depth=CHECK_DEPTH)).score)
        if score < OPENING_MARGIN:
            return board
        if best is None or score < best[0]:
            best = (score, board)
    if best is None:
        raise ValueError(f"no opening with {random_plies} random plies keeps the game going")
    return best[1]


def _random_plies(board: Board, plies: int, rng: random.Random) -> Board | None:
    """The board after ``plies`` uniformly random legal moves, or None if the game ends."""
    for _ in range(plies):
        legal = list(board.legal_moves)
        if not legal:
            return None
        board.push(legal[rng.randrange(len(legal))])
    return board
