"""The reference move generator: the rule book (docs/rules.md) written out as plain Python.

This is the test oracle that the fast generator is compared against. It is written to be
read, not to be fast, and the engine never calls it while playing.

Every rule difference comes from the fields of the ``Variant`` record, never from its name.
Squares are the engine's internal 0-based squares; the search itself walks (row, column)
coordinates through ``squares.row_col`` / ``squares.square_at``. Row 0 is White's crowning
row, so White men move towards row 0 and Black men towards row ``size - 1``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Iterator, NamedTuple

from .position import Position, bits
from .squares import row_col, square_at
from .variants import CapturePromotion, Precedence, Variant

__all__ = ["RefMove", "legal_moves", "play", "perft"]

Direction = tuple[int, int]  # (row step, column step)

DIAGONALS: tuple[Direction, ...] = ((-1, -1), (-1, 1), (1, -1), (1, 1))


class RefMove(NamedTuple):
    """One legal move, as the rule book sees it."""

    origin: int  #: internal square the piece starts on
    destination: int  #: internal square the piece ends on
    captured: int  #: bit mask of the captured pieces (0 for a quiet move)
    path: tuple[int, ...]  #: every square the piece stands on, origin first, destination last
    promotes: bool  #: the moving man ends the move as a king


class _Board(NamedTuple):
    """The board as the moving piece sees it during its move.

    The mover's own origin square counts as empty (it may pass over it or land on it again);
    captured pieces stay on the board until the move ends (the Turkish strike rule), so they
    are still ``occupied`` and block the way.
    """

    occupied: int  #: every piece except the mover
    enemies: int  #: the opponent's pieces
    kings: int  #: every king on the board


class _Capture(NamedTuple):
    """A complete capture sequence, before the precedence rule and the merging of duplicates."""

    path: tuple[int, ...]  #: origin, every landing square, destination
    taken: tuple[int, ...]  #: the captured squares, in the order they were jumped
    by_king: bool  #: the piece was a king when the move started
    promotes: bool  #: a man ends the move as a king


# ---------------------------------------------------------------------------------------------
# Geometry


@lru_cache(maxsize=None)
def _ray(size: int, square: int, direction: Direction) -> tuple[int, ...]:
    """The squares along a diagonal from ``square`` (itself excluded) up to the board's edge."""
    row, col = row_col(size, square)
    d_row, d_col = direction
    squares: list[int] = []
    while True:
        row, col = row + d_row, col + d_col
        s = square_at(size, row, col)
        if s is None:
            return tuple(squares)
        squares.append(s)


def _forward(white: bool) -> int:
    """The row step of a man moving forward: White moves up the board, Black down."""
    return -1 if white else 1


def _crowning_row(variant: Variant, white: bool) -> int:
    return 0 if white else variant.size - 1


def _on_crowning_row(variant: Variant, square: int, white: bool) -> bool:
    return row_col(variant.size, square)[0] == _crowning_row(variant, white)


def _move_directions(king: bool, white: bool) -> tuple[Direction, ...]:
    """Kings move along all four diagonals, men only forward."""
    if king:
        return DIAGONALS
    return tuple(d for d in DIAGONALS if d[0] == _forward(white))


def _capture_directions(variant: Variant, king: bool, white: bool) -> tuple[Direction, ...]:
    """Kings capture in every direction; men forward, and backward only in some rule sets."""
    if king or variant.men_capture_backwards:
        return DIAGONALS
    return _move_directions(False, white)


def _has(mask: int, square: int) -> bool:
    return bool(mask >> square & 1)


# ---------------------------------------------------------------------------------------------
# Quiet moves


def _quiet_moves(variant: Variant, position: Position) -> list[RefMove]:
    """Men step one square forward; short kings one square any way; flying kings slide."""
    white = position.white_to_move
    moves = []
    for origin in bits(position.pieces(white)):
        king = _has(position.kings, origin)
        reach = variant.size if king and variant.flying_kings else 1
        for direction in _move_directions(king, white):
            for destination in _ray(variant.size, origin, direction)[:reach]:
                if _has(position.occupied, destination):
                    break
                promotes = not king and _on_crowning_row(variant, destination, white)
                moves.append(RefMove(origin, destination, 0, (origin, destination), promotes))
    return moves


# ---------------------------------------------------------------------------------------------
# Captures


def _jumps(
    variant: Variant, board: _Board, square: int, king: bool, white: bool, taken: tuple[int, ...]
) -> Iterator[tuple[int, tuple[int, ...]]]:
    """Each next capture of the piece on ``square``: (victim, the landing squares beyond it).

    A man or short king jumps an adjacent piece and lands right behind it; a flying king may
    first cross empty squares and land on any empty square beyond its victim. A piece already
    taken in this move cannot be jumped again and blocks the line.
    """
    flying = king and variant.flying_kings
    for direction in _capture_directions(variant, king, white):
        ray = _ray(variant.size, square, direction)
        distance = 0
        if flying:
            while distance < len(ray) and not _has(board.occupied, ray[distance]):
                distance += 1
        if distance >= len(ray):
            continue
        victim = ray[distance]
        if not _has(board.enemies, victim) or victim in taken:
            continue
        if not king and not variant.men_capture_kings and _has(board.kings, victim):
            continue  # Italian: a man may not capture a king
        landings = []
        for landing in ray[distance + 1 :]:
            if _has(board.occupied, landing):
                break
            landings.append(landing)
            if not flying:
                break
        if landings:
            yield victim, tuple(landings)


def _continue_capture(
    variant: Variant,
    board: _Board,
    white: bool,
    by_king: bool,
    king: bool,
    path: tuple[int, ...],
    taken: tuple[int, ...],
) -> list[_Capture]:
    """Every way to finish a capture standing on ``path[-1]``; empty if no jump is possible.

    The piece must go on capturing while it can. For a flying king this means: when some of
    the landing squares beyond a victim allow a further capture, only those may be used.
    """
    finished: list[_Capture] = []
    for victim, landings in _jumps(variant, board, path[-1], king, white, taken):
        after = taken + (victim,)
        options: list[tuple] = []  # (path, piece is a king, ways to go on from there)
        for landing in landings:
            new_path = path + (landing,)
            crowned_here = not king and _on_crowning_row(variant, landing, white)
            if crowned_here and variant.capture_promotion == CapturePromotion.STOP:
                options.append((new_path, king, []))  # crowned, and the move ends here
                continue
            king_now = king or (
                crowned_here and variant.capture_promotion == CapturePromotion.CONTINUE_AS_KING
            )
            further = _continue_capture(variant, board, white, by_king, king_now, new_path, after)
            options.append((new_path, king_now, further))
        if any(further for _, _, further in options):
            for _, _, further in options:
                finished.extend(further)
        else:
            for new_path, king_now, _ in options:
                finished.append(_finish(variant, white, by_king, king_now, new_path, after))
    return finished


def _finish(
    variant: Variant,
    white: bool,
    by_king: bool,
    king: bool,
    path: tuple[int, ...],
    taken: tuple[int, ...],
) -> _Capture:
    """A capture that stops at ``path[-1]``: a man ending on its far row is crowned."""
    promotes = not by_king and (king or _on_crowning_row(variant, path[-1], white))
    return _Capture(path, taken, by_king, promotes)


def _all_captures(variant: Variant, position: Position) -> list[_Capture]:
    """Every complete capture sequence of every piece of the side to move."""
    white = position.white_to_move
    captures: list[_Capture] = []
    for origin in bits(position.pieces(white)):
        board = _Board(
            occupied=position.occupied & ~(1 << origin),
            enemies=position.pieces(not white),
            kings=position.kings,
        )
        king = _has(position.kings, origin)
        captures += _continue_capture(variant, board, white, king, king, (origin,), ())
    return captures


def _precedence_key(variant: Variant, capture: _Capture, kings: int) -> tuple:
    """How a capture ranks under the rule set's precedence rule: only the largest may be played."""
    pieces = len(capture.taken)
    king_turns = [i for i, s in enumerate(capture.taken) if _has(kings, s)]
    rule = variant.precedence
    if rule == Precedence.FREE:
        return ()
    if rule == Precedence.QUANTITY:
        return (pieces,)
    if rule == Precedence.QUANTITY_THEN_KINGS:
        return (pieces, len(king_turns))
    if rule == Precedence.ITALIAN:
        # most pieces; then with a king; then most kings; then the kings met earliest, compared
        # king by king (negated turn numbers, so that earlier ranks higher)
        return (pieces, capture.by_king, len(king_turns), tuple(-i for i in king_turns))
    if rule == Precedence.KING_PRIORITY:
        return (capture.by_king,)
    raise ValueError(f"unknown precedence rule {rule!r}")


def _legal_captures(variant: Variant, position: Position) -> list[RefMove]:
    """The captures the precedence rule allows, duplicates merged.

    Two sequences with the same origin, destination, captured set and crowning give the same
    position and are one move (the "drop" convention); the first path found is kept.
    """
    captures = _all_captures(variant, position)
    if not captures:
        return []
    keys = [_precedence_key(variant, c, position.kings) for c in captures]
    best = max(keys)
    moves: dict[tuple[int, int, int, bool], RefMove] = {}
    for capture, key in zip(captures, keys):
        if key != best:
            continue
        mask = sum(1 << s for s in capture.taken)
        move = RefMove(capture.path[0], capture.path[-1], mask, capture.path, capture.promotes)
        moves.setdefault((move.origin, move.destination, mask, move.promotes), move)
    return list(moves.values())


# ---------------------------------------------------------------------------------------------
# The public API


def legal_moves(variant: Variant, position: Position) -> list[RefMove]:
    """All legal moves of the side to move.

    Capturing is compulsory; under the "no forced capture" house rule the quiet moves are
    legal beside the captures (the precedence rule still chooses among the captures).
    """
    captures = _legal_captures(variant, position)
    if captures and variant.forced_capture:
        return captures
    return captures + _quiet_moves(variant, position)


def play(variant: Variant, position: Position, move: RefMove) -> Position:
    """The position after ``move``, with the other side to move; captured pieces leave now."""
    white = position.white_to_move
    origin, destination = 1 << move.origin, 1 << move.destination
    own = position.pieces(white) & ~origin | destination
    other = position.pieces(not white) & ~move.captured
    kings = position.kings & ~move.captured
    if kings & origin or move.promotes:
        kings = kings & ~origin | destination
    if white:
        return Position(own, other, kings, False)
    return Position(other, own, kings, True)


def perft(variant: Variant, position: Position, depth: int) -> int:
    """The number of leaf nodes of the legal-move tree ``depth`` plies deep."""
    if depth == 0:
        return 1
    moves = legal_moves(variant, position)
    if depth == 1:
        return len(moves)
    return sum(perft(variant, play(variant, position, m), depth - 1) for m in moves)
