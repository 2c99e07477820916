"""Exhaustive material search for the search tests: the proof that a shot wins material.

Full-width minimax over every legal move (from the compiled generator, which the agreement
tests check against the pure-Python reference), scored by material only. At the horizon a
position with a capture pending is searched on (captures are compulsory, so every legal move
there is a capture): material is only ever counted in quiet positions.
"""

from __future__ import annotations

from engine import _core
from engine.board import Board
from engine.move import Move
from engine.position import Position
from engine.variants import Variant

#: a side with no legal move has lost: worth more than any material
LOST = 1000


def king_value(variant: Variant) -> int:
    """A king in men: a flying king is worth about three, a short king about two."""
    return 3 if variant.flying_kings else 2


def material(variant: Variant, position: Position) -> int:
    """Men and kings of the side to move minus the opponent's."""
    k = king_value(variant)
    own = position.white if position.white_to_move else position.black
    other = position.black if position.white_to_move else position.white

    def worth(mask: int) -> int:
        kings = bin(mask & position.kings).count("1")
        return bin(mask).count("1") - kings + k * kings

    return worth(own) - worth(other)


def play(position: Position, move: tuple) -> Position:
    """The position after a core move tuple (origin, destination, captured, path, promotes)."""
    origin, destination, captured, _path, promotes = move
    white, black, kings, white_to_move = position
    o, d = 1 << origin, 1 << destination
    own, other = (white, black) if white_to_move else (black, white)
    was_king = kings & o
    own = (own & ~o) | d
    other &= ~captured
    kings &= ~(captured | o)
    if was_king or promotes:
        kings |= d
    if white_to_move:
        return Position(own, other, kings, False)
    return Position(other, own, kings, True)


def value(variant: Variant, position: Position, depth: int) -> int:
    """Material (side to move's view) after best play for ``depth`` plies, then captures."""
    moves = _core.generate(variant, position)
    if not moves:
        return -LOST
    if depth <= 0 and not moves[0][2]:
        return material(variant, position)
    return max(-value(variant, play(position, m), depth - 1) for m in moves)


def move_values(board: Board, depth: int) -> dict[Move, int]:
    """Each legal move's material outcome ``depth`` plies deep (the move included)."""
    variant, position = board.variant, board.position
    out = {}
    for m in _core.generate(variant, position):
        out[Move.from_core(m)] = -value(variant, play(position, m), depth - 1)
    return out


def winning_moves(board: Board, depth: int, gain: int = 1) -> set[Move]:
    """The moves that win at least ``gain`` men of material by force within ``depth`` plies."""
    now = material(board.variant, board.position)
    return {m for m, v in move_values(board, depth).items() if v >= now + gain}


def safe_moves(board: Board, depth: int = 3) -> set[Move]:
    """The moves after which the opponent cannot win material by force within ``depth``
    plies (the move included)."""
    now = material(board.variant, board.position)
    return {m for m, v in move_values(board, depth).items() if v >= now}
