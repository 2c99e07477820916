"""Openings for a match: a start position and the moves already played from it.

An openings file is either PDN (each game's FEN tag and main line is an opening; its result
is ignored) or plain lines, one opening each: a FEN (``W:W31,...:B1,...``), or moves from the
rule set's start position (``32-28 19-23 28x19``, move numbers and a closing result allowed),
or a FEN followed by ``|`` and moves. Empty lines and lines starting with ``#`` are skipped.
Every opening is checked (its moves replayed) when the file is read, so a bad one fails
before the match.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from engine.board import Board
from engine.errors import DamkaError
from engine.move import Move
from engine.position import Position
from engine.variants import Variant, as_variant

__all__ = ["Opening", "read_openings", "start_opening", "OpeningsError"]


class OpeningsError(ValueError):
    """An openings file that cannot be used; the message names the file and line."""


@dataclass(frozen=True)
class Opening:
    """A start position and the moves played from it before the engines take over."""

    start: Position
    moves: tuple[Move, ...] = ()
    label: str = ""  #: how the file wrote it (for messages)

    def board(self, variant: Variant) -> Board:
        board = Board(variant, self.start)
        for move in self.moves:
            board.push(move)
        return board


def start_opening(variant: "str | Variant") -> Opening:
    """The rule set's start position with no moves (a match without an openings file).

    ``variant``: a Variant (what the command line passes), or a name for a caller without one."""
    return Opening(Board(as_variant(variant)).position, (), "start")


_NUMBER = re.compile(r"^\d+\.+$")
#: a FEN starts with the side to move and a colon; move lists may hold colons too (Russian
#: and Czech write captures c3:e5)
_FEN_START = re.compile(r'^"?[WBwb]:')
#: the results PDN writes after a game's moves (draughts scores 2-0, 1-1, 0-2 as well)
_RESULTS = frozenset({"*", "1-0", "0-1", "2-0", "0-2", "1-1", "1/2-1/2", "½-½"})


def _line_opening(variant: Variant, text: str) -> Opening:
    fen, _, moves = text.partition("|") if "|" in text else (
        (text, "", "") if _FEN_START.match(text) else ("", "", text))
    board = Board(variant, fen.strip() or None)
    start = board.position
    played = []
    words = moves.split()
    if words and words[-1] in _RESULTS:  # a game's result closing the line: not a move
        words.pop()
    for word in words:
        word = re.sub(r"^\d+\.+", "", word)
        if not word or _NUMBER.match(word):
            continue
        played.append(board.push(word))
    return Opening(start, tuple(played), text)


def read_openings(path: "str | os.PathLike[str]", variant: "str | Variant") -> list[Opening]:
    """The openings of a file (PDN or lines), in file order; OpeningsError if none or bad.

    ``variant``: a Variant (what the command line passes on: the PDN reader, the boards and
    the games below take the same record), or a name for a caller without one."""
    v = as_variant(variant)
    text = Path(path).read_text(encoding="utf-8", errors="replace").lstrip("\ufeff")
    if text.lstrip().startswith("["):
        from engine.pdn import PdnError, read_games

        openings = []
        try:
            for number, game in enumerate(read_games(text, v), start=1):
                if game.variant.gametype != v.gametype:
                    raise OpeningsError(f"{path}: game {number} is {game.variant.name}, "
                                        f"not {v.name}")
                openings.append(Opening(game.start, tuple(game.moves), f"game {number}"))
        except PdnError as exc:
            raise OpeningsError(f"{path}: {exc}") from None
    else:
        openings = []
        for number, line in enumerate(text.splitlines(), start=1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            try:
                opening = _line_opening(v, line)
            except DamkaError as exc:
                raise OpeningsError(f"{path}, line {number}: {exc}") from None
            openings.append(opening)
    if not openings:
        raise OpeningsError(f"{path}: no openings found")
    for number, opening in enumerate(openings, start=1):
        if not opening.board(v).legal_moves:
            raise OpeningsError(f"{path}: opening {number} ({opening.label}) is already over")
    return openings
