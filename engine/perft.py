"""Perft: the number of leaves of the legal-move tree below a position, the move generator's
standard check against published counts (tests/test_perft.py) and its speed measure.

The public entry points over the compiled core's counting (``engine._core``), which holds no
GIL: with ``threads`` > 1 the subtrees below the first plies are counted at once.
"""

from __future__ import annotations

from . import _core
from .board import Board
from .move import Move

__all__ = ["perft", "divide", "Progress"]

#: ``on_item(done, total)``: a perft's progress, in subtrees counted
Progress = _core.Progress


def perft(board: Board, depth: int, threads: int = 1, on_item: Progress | None = None) -> int:
    """Leaves of the legal-move tree ``depth`` plies below the board's position (the rules
    are the board's, its house rule included). ``on_item`` hears of each subtree counted."""
    _check(board, depth, threads)
    return _core.perft(board.variant, board.position, depth, threads, on_item)


def divide(board: Board, depth: int, threads: int = 1,
           on_item: Progress | None = None) -> list[tuple[Move, int]]:
    """Perft split by the legal moves of the position: (move, leaves below it) per move, in
    the generator's order; the counts add up to ``perft(board, depth)``."""
    _check(board, depth, threads)
    return [(Move.from_core(core), nodes)
            for core, nodes in _core.divide(board.variant, board.position, depth, threads,
                                            on_item)]


def _check(board: Board, depth: int, threads: int) -> None:
    """The arguments as documented, refused with a message that says so (not a TypeError from
    a comparison deep inside, nor 1.5 plies read as 1)."""
    if not isinstance(board, Board):
        raise TypeError(f"perft counts from a Board, not {type(board).__name__}")
    for name, value, low in (("depth", depth, 0), ("threads", threads, 1)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} is a whole number, not {value!r}")
        if value < low:
            raise ValueError(f"{name} must be >= {low}, not {value}")
