"""The root of a search in a database position: which moves keep the best value once the
draw counters are applied (a win that would take longer than the counters allow is a draw)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..move import Move
from ..position import Position
from ..variants import Variant
from .probe import DRAW, LOSS, WIN, EgtbValue, Tablebase

if TYPE_CHECKING:
    from ..board import Board
    from ..draws import DrawCounters


def plies_left(variant: Variant, position: Position, counters: "DrawCounters",
               endgame_kind: int) -> int | None:
    """Plies before a move-count draw rule ends the game (None: no rule applies)."""
    draws = variant.draws
    left: list[int] = []
    if draws.no_progress:
        left.append(2 * draws.no_progress - counters.no_progress)
    if endgame_kind == 16 and draws.endgame_three:
        left.append(2 * draws.endgame_three - counters.endgame)
    if endgame_kind == 5 and draws.endgame_two:
        left.append(2 * draws.endgame_two - counters.endgame)
    men = (position.white | position.black) & ~position.kings
    if draws.king_moves and not men:
        left.append(2 * draws.king_moves - counters.reversible)
    return min(left) if left else None


def root_moves(tb: Tablebase, board: "Board", counters: "DrawCounters"
               ) -> tuple[EgtbValue | None, list[Move]]:
    """(value, moves): the root's value under the draw counters and the moves that keep it
    (for a win only the fastest conversions, so every move makes progress). (None, []) when
    the databases do not cover the position."""
    from ..draws import endgame_rule

    position = board.position
    if tb.probe(position) is None:
        return None, []
    limit = plies_left(board.variant, position, counters,
                       endgame_rule(position) if board.variant.draws.endgame_three else 0)
    scored = [(m, v.within(limit)) for m, v in tb.best_moves(board, all_moves=True)]
    if not scored:
        return None, []
    best = max(v.result for _, v in scored)
    keep = [(m, v) for m, v in scored if v.result == best]
    if best == WIN:
        fastest = min(v.plies for _, v in keep)
        keep = [(m, v) for m, v in keep if v.plies == fastest]
    elif best == LOSS:
        slowest = max(v.plies for _, v in keep)
        keep = [(m, v) for m, v in keep if v.plies == slowest]
    value = keep[0][1] if best != DRAW else EgtbValue(DRAW, 0)
    return value, [m for m, _ in keep]
