"""The draw-rule state of a game, computed from a board's move stack.

The search needs it to see repetitions and move-count draws coming: the positions played
since the last irreversible move, and the counters of the rule set's draw rules. A FEN carries
no counters, so a board set up from a FEN starts them at zero.
"""

from __future__ import annotations

from dataclasses import dataclass

from .board import Board
from .move import Move
from .position import Position

__all__ = ["DrawCounters", "GameHistory", "endgame_rule", "game_history"]


@dataclass(frozen=True)
class DrawCounters:
    """The draw counters at a position, all in plies (one move of one side)."""

    #: plies in a row in which only kings moved and nothing was captured (25-move rule, and
    #: the stretch of the game in which a repetition can happen)
    reversible: int = 0
    #: plies since the last capture or crowning (the 8x8 40-move rule)
    no_progress: int = 0
    #: plies since the current international endgame rule (16 or 5 moves) began (after a
    #: capture that turns the 16-move rule into the 5-move one, far enough along that the
    #: 16 moves' end is kept)
    endgame: int = 0


@dataclass(frozen=True)
class GameHistory:
    """The positions before the current one (oldest first) and the counters at the current one."""

    positions: tuple[Position, ...]
    counters: DrawCounters


def _single(mask: int) -> bool:
    return mask != 0 and mask & (mask - 1) == 0


def endgame_rule(position: Position) -> int:
    """16 or 5 when an international endgame draw rule applies to the material, else 0.

    A lone king against three pieces of which at least one king: 16 moves each; against one or
    two pieces of which at least one king: 5 moves each.
    """
    for lone, other in ((position.white, position.black), (position.black, position.white)):
        if _single(lone) and lone & position.kings and other & position.kings:
            n = bin(other).count("1")
            if n == 3:
                return 16
            if n <= 2:
                return 5
    return 0


def next_counters(
    counters: DrawCounters, before: Position, move: Move, after: Position, endgame_rules: bool
) -> DrawCounters:
    """The counters after ``move`` (played in ``before``, giving ``after``)."""
    king_moved = bool(before.kings >> move.origin & 1)
    reversible = counters.reversible + 1 if king_moved and not move.captured else 0
    no_progress = 0 if move.captured or move.promotes else counters.no_progress + 1
    endgame = 0
    if endgame_rules:
        kind, kind_before = endgame_rule(after), endgame_rule(before)
        if kind and kind == kind_before:
            endgame = counters.endgame + 1
        elif kind == 5 and kind_before == 16:
            # the lone king took a piece during the 16 moves: their end stands (FMJD 6.3,
            # "the maximum of 16 moves remains valid"), and the 5-move rule's 5 at most; the
            # count goes on as the 5-move rule's, so far along that both ends are kept
            endgame = max(0, 2 * kind - (2 * kind_before - counters.endgame - 1))
    return DrawCounters(reversible, no_progress, endgame)


def game_history(board: Board) -> GameHistory:
    """Replay the board's move stack from its start position and return its draw state."""
    replay = board.copy()
    positions = [replay.position]
    while replay.move_stack:
        replay.pop()
        positions.append(replay.position)
    positions.reverse()  # oldest first, the current position last
    endgame_rules = bool(board.variant.draws.endgame_three)
    counters = DrawCounters()
    for before, move, after in zip(positions, board.move_stack, positions[1:]):
        counters = next_counters(counters, before, move, after, endgame_rules)
    return GameHistory(tuple(positions[:-1]), counters)
