"""``Board``: a position of one rule set with a move stack, over the compiled core.

Legal moves come only from ``engine._core``; the Board turns them into Move values and keeps
them per position, so asking twice costs nothing and ``pop`` gives the old list back.
"""

from __future__ import annotations

import operator
from typing import Iterator

from . import _core
from .errors import IllegalMoveError, InvalidFenError, InvalidPositionError
from .fen import _check_men_rows, parse_fen, write_fen
from .move import Move
from .notation import parse_hub_position, parse_move, write_hub_position, write_pdn
from .outcome import Outcome, Termination, result_text
from .position import Position
from .squares import square_at
from .variants import Variant, as_variant

__all__ = ["Board", "LegalMoves"]


class LegalMoves:
    """A live, lazy view of a board's legal moves: ``len``, ``in``, iteration and ``bool``.

    Nothing is generated until the view is used; the list is then kept until the board's
    position changes.
    """

    __slots__ = ("_board",)

    def __init__(self, board: "Board"):
        self._board = board

    def __len__(self) -> int:
        return len(self._board._legal())

    def __iter__(self) -> Iterator[Move]:
        return iter(self._board._legal())

    def __bool__(self) -> bool:
        return bool(self._board._legal())

    def __contains__(self, move: object) -> bool:
        if isinstance(move, str):
            try:
                self._board.parse_move(move)
            except ValueError:
                return False
            return True
        return move in self._board._legal()

    def count(self) -> int:
        return len(self._board._legal())

    def __repr__(self) -> str:
        board = self._board
        names = ", ".join(board.pdn(m) for m in board._legal())
        return f"<LegalMoves at {id(self):#x} ({names})>"


def _checked(variant: Variant, position: Position) -> Position:
    """A Position given as masks, refused at once (not at the first move generation) when no
    board of the rule set holds it."""
    try:  # (numpy's integers too: masks read from data files)
        white, black, kings = (operator.index(m) for m in position[:3])
    except TypeError:
        raise InvalidPositionError(position, "the masks must be integers") from None
    if min(white, black, kings) < 0:
        raise InvalidPositionError(position, "the masks must be non-negative integers")
    position = Position(white, black, kings, bool(position.white_to_move))
    if (white | black | kings) >> variant.squares:
        raise InvalidPositionError(position, f"a square past the board's {variant.squares}")
    if white & black:
        raise InvalidPositionError(position, "a square holds a white and a black piece")
    if kings & ~(white | black):
        raise InvalidPositionError(position, "a king on an empty square")
    try:
        _check_men_rows(variant, "", position)  # (only its reason is kept)
    except InvalidFenError as exc:
        raise InvalidPositionError(position, exc.reason) from None
    return position


class Board:
    """A draughts position of one rule set, with the moves that led to it.

    ``variant`` is a Variant, or a rule-set name or alias for a caller that has no record
    (library code passes the record it has); ``fen`` defaults to the rule set's start position
    (a Position is accepted too).
    """

    def __init__(self, variant: "str | Variant" = "international", fen: "str | Position | None" = None):
        self.variant: Variant = as_variant(variant)
        if fen is None:
            fen = self.variant.start_fen
        self.position: Position = (
            _checked(self.variant, Position(*fen)) if isinstance(fen, Position)
            else parse_fen(self.variant, fen)
        )
        self.move_stack: list[Move] = []
        self._stack: list[tuple[Position, "list[Move] | None"]] = []
        self._legal_cache: list[Move] | None = None

    @classmethod
    def from_hub(cls, variant: "str | Variant", text: str) -> "Board":
        """A board set up from a Hub position string (``variant``: a Variant or a name)."""
        variant = as_variant(variant)
        return cls(variant, parse_hub_position(variant, text))

    # -- state -------------------------------------------------------------------------

    @property
    def white_to_move(self) -> bool:
        return self.position.white_to_move

    @property
    def turn(self) -> bool:
        """True when White is to move (as python-chess's ``board.turn``)."""
        return self.position.white_to_move

    @property
    def legal_moves(self) -> LegalMoves:
        return LegalMoves(self)

    def _legal(self) -> list[Move]:
        if self._legal_cache is None:
            self._legal_cache = [
                Move.from_core(t) for t in _core.generate(self.variant, self.position)
            ]
        return self._legal_cache

    # -- moves -------------------------------------------------------------------------

    def parse_move(self, text: str) -> Move:
        """The legal move that text names (any PDN or Hub form); see notation.parse_move."""
        return parse_move(self.variant, text, self._legal())

    def push(self, move: "Move | str") -> Move:
        """Play a move (a Move or its text) and return the legal Move that was played."""
        if isinstance(move, str):
            move = self.parse_move(move)
        else:
            move = self._legal_equivalent(move)
        self._stack.append((self.position, self._legal_cache))
        self.move_stack.append(move)
        self.position = self._after(move)
        self._legal_cache = None
        return move

    def push_text(self, text: str) -> Move:
        return self.push(self.parse_move(text))

    def pop(self) -> Move:
        """Take back the last move and return it; IndexError if there is none."""
        if not self.move_stack:
            raise IndexError("no move to take back")
        move = self.move_stack.pop()
        self.position, self._legal_cache = self._stack.pop()
        return move

    def peek(self) -> Move:
        """The last move played; IndexError if there is none."""
        if not self.move_stack:
            raise IndexError("no move played yet")
        return self.move_stack[-1]

    def _legal_equivalent(self, move: Move) -> Move:
        legal = self._legal()
        if move in legal:
            return move
        if isinstance(move, Move):
            # the same capture written along another route is the same (merged) move
            for m in legal:
                if (m.origin, m.destination, m.captured, m.promotes) == (
                    move.origin, move.destination, move.captured, move.promotes
                ):
                    return m
            try:
                text = move.pdn_long(self.variant)
            except (IndexError, ValueError):  # squares that this board does not have
                text = repr(move)
            raise IllegalMoveError(text)
        raise IllegalMoveError(repr(move), "not a Move")

    def position_after(self, move: Move) -> Position:
        """The position a legal move of this board leads to, without pushing it."""
        return self._after(move)

    def _after(self, move: Move) -> Position:
        """The position after a legal move, computed on the masks."""
        white, black, kings, white_to_move = self.position
        origin_bit, destination_bit = 1 << move.origin, 1 << move.destination
        was_king = bool(kings & origin_bit)
        captured = move.captured_mask
        own, other = (white, black) if white_to_move else (black, white)
        own = (own & ~origin_bit) | destination_bit
        other &= ~captured
        kings &= ~(captured | origin_bit)
        if was_king or move.promotes:
            kings |= destination_bit
        if white_to_move:
            return Position(own, other, kings, False)
        return Position(other, own, kings, True)

    # -- game end ----------------------------------------------------------------------

    def is_game_over(self) -> bool:
        """True when the side to move has no legal move (and so has lost)."""
        return not self._legal()

    def outcome(self) -> Outcome | None:
        """The result if the side to move cannot move (it loses; as does a side with no
        piece whoever is to move), else None. The draw rules need the game's history:
        ``Game.outcome()`` applies them too."""
        if not (self.position.black if self.white_to_move else self.position.white):
            # a set-up position whose side not to move has nothing left: it has lost
            winner = self.white_to_move
            return Outcome(result_text(self.variant, winner), winner, Termination.NO_PIECES)
        if self._legal():
            return None
        loser = self.position.white if self.white_to_move else self.position.black
        winner = not self.white_to_move
        return Outcome(result_text(self.variant, winner), winner,
                       Termination.NO_MOVES if loser else Termination.NO_PIECES)

    # -- writing -----------------------------------------------------------------------

    def fen(self, compact: bool = False) -> str:
        return write_fen(self.variant, self.position, compact)

    def pdn(self, move: Move) -> str:
        """PDN of a legal move here: the short form where unambiguous, else the full path."""
        return write_pdn(self.variant, move, self._legal())

    def hub_position(self) -> str:
        return write_hub_position(self.variant, self.position)

    def copy(self, stack: bool = True) -> "Board":
        """An independent board; ``stack=False`` drops the move history."""
        board = Board.__new__(Board)
        board.variant = self.variant
        board.position = self.position
        board.move_stack = list(self.move_stack) if stack else []
        board._stack = list(self._stack) if stack else []
        board._legal_cache = self._legal_cache
        return board

    __copy__ = copy

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Board):
            return NotImplemented
        return self.variant == other.variant and self.position == other.position


    def __str__(self) -> str:
        """The board as text, White at the bottom: w b men, W B kings, . empty dark square."""
        size = self.variant.size
        # Italian and Spanish boards are the mirror image of the engine's geometry
        mirrored = self.variant.numbering in ("italian", "spanish")
        symbols = {(True, False): "w", (True, True): "W", (False, False): "b", (False, True): "B"}
        lines = []
        for row in range(size):
            cells = []
            for col in range(size):
                s = square_at(size, row, size - 1 - col if mirrored else col)
                if s is None:
                    cells.append(" ")
                    continue
                bit = 1 << s
                if self.position.white & bit:
                    cells.append(symbols[True, bool(self.position.kings & bit)])
                elif self.position.black & bit:
                    cells.append(symbols[False, bool(self.position.kings & bit)])
                else:
                    cells.append(".")
            lines.append(" ".join(cells).rstrip())
        return "\n".join(lines)

    def __repr__(self) -> str:
        name = self.variant.name if self.variant.forced_capture else f"{self.variant.name}-nocapture"
        return f"Board({name!r}, fen={self.fen()!r})"
