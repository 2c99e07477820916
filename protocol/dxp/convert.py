"""Positions and moves between DXP and the engine, and the draw rules a DXP game ends by.

Its own module so that everything that speaks DXP (the session, the match runner's DXP
player, the test peers and the bench tap) can turn a DXP move into an engine move without
importing the session, the sockets or the command. DXP exists for international draughts
(10x10) only: ``VARIANT`` is the one variant every DXP module plays.
"""

from __future__ import annotations

from typing import Sequence

from engine.board import Board
from engine.draws import DrawCounters, game_history
from engine.fen import parse_fen
from engine.game import draw_termination
from engine.move import Move
from engine.notation import square_letters
from engine.position import Position
from engine.squares import square_number, square_of_number
from engine.variants import INTERNATIONAL

from protocol.dxp.codec import DxpMove, DxpPosition

__all__ = [
    "VARIANT",
    "position_from_dxp",
    "position_to_dxp",
    "move_to_dxp",
    "find_move",
    "draw_by_rules",
    "draw_rule",
]

VARIANT = INTERNATIONAL


def position_from_dxp(dxp: DxpPosition) -> Position:
    """The engine position of a GAMEREQ position; InvalidFenError if no game can have it."""
    white, black = [], []
    for number, ch in enumerate(dxp.squares, start=1):
        if ch in "wW":
            white.append(("K" if ch == "W" else "") + str(number))
        elif ch in "zZ":
            black.append(("K" if ch == "Z" else "") + str(number))
    fen = f"{'W' if dxp.white_to_move else 'B'}:W{','.join(white)}:B{','.join(black)}"
    return parse_fen(VARIANT, fen)  # the FEN reader checks men on their crowning rows


def position_to_dxp(position: Position) -> DxpPosition:
    return DxpPosition(position.white_to_move, square_letters(VARIANT, position, "wWzZe"))


def move_to_dxp(move: Move, seconds: float = 0) -> DxpMove:
    return DxpMove(
        square_number(VARIANT, move.origin),
        square_number(VARIANT, move.destination),
        tuple(square_number(VARIANT, s) for s in move.captured),
        round(seconds),
    )


def find_move(board: Board, dxp: DxpMove) -> Move | None:
    """The legal move with the same origin, destination and set of captured pieces."""
    origin = square_of_number(VARIANT, dxp.origin)
    destination = square_of_number(VARIANT, dxp.destination)
    captured = tuple(sorted(square_of_number(VARIANT, n) for n in dxp.captured))
    for move in board.legal_moves:
        if move.origin == origin and move.destination == destination and move.captured == captured:
            return move
    return None


def draw_by_rules(board: Board) -> str | None:
    """The draw rule that ends the game in this position (international rules), or None.

    Threefold repetition, 25 moves each with only kings moving and nothing captured, and the
    endgame rules: a lone king against three pieces (one a king) 16 moves each, against at
    most two (one a king) 5 moves each. The counters come from the board's move stack.
    """
    history = game_history(board)
    return draw_rule(board.position, history.counters, history.positions)


def draw_rule(position: Position, counters: DrawCounters, earlier: Sequence[Position]) -> str | None:
    """draw_by_rules for a position, its draw counters and the positions before it (oldest
    first); the rules themselves are engine.game's."""
    termination = draw_termination(VARIANT, position, counters, earlier)
    return None if termination is None else str(termination)
