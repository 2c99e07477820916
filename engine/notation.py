"""Reading and writing moves and Hub positions in a rule set's notation.

Move text is read against the legal moves of a position, so every written form that some
program uses resolves to one legal Move: ``32-28``, ``26x48`` (short), ``26x37x48`` (full
path), ``28x19x23`` (Hub: from, to, captured squares in any order), ``c3:e5`` (Russian).
"""

from __future__ import annotations

import re
from typing import Iterable

from .errors import AmbiguousMoveError, IllegalMoveError, InvalidFenError, InvalidMoveError
from .fen import _check_men_rows
from .move import Move
from .position import Position
from .squares import read_square, square_name, square_of_number
from .variants import Variant, as_variant

__all__ = [
    "parse_move",
    "write_pdn",
    "parse_hub_position",
    "write_hub_position",
]

_SEPARATORS = re.compile(r"[-xX:×]")
_CAPTURE_SEPARATORS = frozenset("xX:×")
#: annotation marks that may follow a move in PDN (``32-28!``, ``26x37?``)
_ANNOTATIONS = "!?*+#"


def _square(variant: Variant, text: str, token: str) -> int:
    """A square in the rule set's notation; numbers in algebraic sets are English numbers."""
    try:
        return read_square(variant, token)
    except ValueError as exc:
        raise InvalidMoveError(text, str(exc)) from None


def _read(variant: Variant, text: str) -> tuple[list[int], bool | None]:
    """The squares of a move text and whether it claims to be a capture (None: no claim)."""
    if not isinstance(text, str):
        raise InvalidMoveError(repr(text), "a move must be text")
    body = text.strip().rstrip(_ANNOTATIONS).strip()
    if not body:
        raise InvalidMoveError(text, "empty move")
    separators = set(_SEPARATORS.findall(body))
    parts = _SEPARATORS.split(body)
    if len(parts) < 2 or any(not p.strip() for p in parts):
        raise InvalidMoveError(text, "expected squares joined by '-', 'x' or ':'")
    if "-" in separators and separators & _CAPTURE_SEPARATORS:
        raise InvalidMoveError(text, "mixes '-' with a capture separator")
    squares = [_square(variant, text, p) for p in parts]
    if "-" in separators:
        # "a-b" is a step; a longer '-' path can only be a capture written loosely
        return squares, (None if len(squares) > 2 else False)
    return squares, True


def _matches(squares: list[int], capture: bool | None, legal: list[Move]) -> list[Move]:
    origin, destination = squares[0], squares[1]
    if len(squares) == 2:
        found = [m for m in legal if m.origin == origin and m.destination == destination]
        if capture is not None:
            # prefer the kind the separator names; fall back to the other (lenient reading)
            preferred = [m for m in found if m.is_capture == capture]
            found = preferred or found
        return found
    path = tuple(squares)
    taken = tuple(sorted(squares[2:]))
    # A full path and a Hub form can never both fit (a Hub form's extra squares hold enemy
    # pieces, a path's hold empty landing squares), so one list answers both readings.
    return [
        m
        for m in legal
        if m.path == path
        or (m.origin == origin and m.destination == destination and m.captured == taken)
    ]


def parse_move(variant: "str | Variant", text: str, legal: Iterable[Move]) -> Move:
    """The one legal move that ``text`` names.

    InvalidMoveError for text that is no move, IllegalMoveError when no legal move fits,
    AmbiguousMoveError (``candidates`` in PDN long form) when several do.
    """
    variant = as_variant(variant)
    squares, capture = _read(variant, text)
    legal = list(legal)
    found = _matches(squares, capture, legal)
    if len(found) == 1:
        return found[0]
    if not found:
        raise IllegalMoveError(text)
    error = AmbiguousMoveError(text, [m.pdn_long(variant) for m in found], found)
    raise error


def write_pdn(variant: "str | Variant", move: Move, legal: Iterable[Move]) -> str:
    """PDN for a legal move: short form if it names only this move, else the full path.

    If even the path were ambiguous, the Hub form with the captured squares is used (in the
    rule set's own square names and capture separator: ``d4:f2:e3`` in Russian).
    """
    variant = as_variant(variant)
    if not isinstance(move, Move):
        raise TypeError(f"write_pdn takes a Move, not {type(move).__name__}")
    legal = list(legal)
    if move not in legal:
        raise IllegalMoveError(move.pdn_long(variant))
    forms = (
        move.pdn_short(variant),
        move.pdn_long(variant),
        move._hub_form(variant, lambda s: square_name(variant, s), variant.capture_separator),
    )
    for form in forms:
        squares, capture = _read(variant, form)
        if _matches(squares, capture, legal) == [move]:
            return form
    return forms[-1]


_PIECES = {"w": (True, False), "W": (True, True), "b": (False, False), "B": (False, True)}


def parse_hub_position(variant: "str | Variant", text: str) -> Position:
    """Read a Hub position string: side (W/B), then one of w b W B e per square 1..N.

    10x10: 51 characters; 8x8: 33 in the set's own numbering (English numbers for the
    algebraic sets). Errors raise InvalidFenError.
    """
    variant = as_variant(variant)
    if not isinstance(text, str):
        raise InvalidFenError(repr(text), "a Hub position must be text")
    body = text.strip()
    n = variant.squares
    if len(body) != n + 1:
        raise InvalidFenError(
            text, f"a Hub position of {variant.name} draughts has {n + 1} characters, "
            f"not {len(body)}"
        )
    if body[0] not in "WB":
        raise InvalidFenError(text, "it must start with the side to move, W or B")
    white = black = kings = 0
    for number, ch in enumerate(body[1:], start=1):
        if ch == "e":
            continue
        if ch not in _PIECES:
            raise InvalidFenError(text, f"unknown character {ch!r} for square {number}")
        is_white, is_king = _PIECES[ch]
        bit = 1 << square_of_number(variant, number)
        if is_white:
            white |= bit
        else:
            black |= bit
        if is_king:
            kings |= bit
    position = Position(white, black, kings, body[0] == "W")
    _check_men_rows(variant, text, position)
    return position


def square_letters(variant: Variant, position: Position, letters: str = "wWbBe") -> str:
    """One letter per square in number order: white man, white king, black man, black king,
    empty (Hub writes ``wWbBe``, DXP ``wWzZe``)."""
    white_man, white_king, black_man, black_king, empty = tuple(letters)
    out = []
    for number in range(1, variant.squares + 1):
        bit = 1 << square_of_number(variant, number)
        king = bool(position.kings & bit)
        if position.white & bit:
            out.append(white_king if king else white_man)
        elif position.black & bit:
            out.append(black_king if king else black_man)
        else:
            out.append(empty)
    return "".join(out)


def write_hub_position(variant: "str | Variant", position: Position) -> str:
    """The Hub position string of a position (see parse_hub_position)."""
    variant = as_variant(variant)
    return ("W" if position.white_to_move else "B") + square_letters(variant, position)
