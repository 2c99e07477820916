"""Finished DXP games: the record a session keeps of each, and its PDN.

Its own module because a game record outlives the connection that played it: the session
makes one, the ``on_game`` callback writes it (``append_pdn``, shared by the sessions of
several connections), and tests read it back, none of which needs a socket.
"""

from __future__ import annotations

import datetime
import threading
from dataclasses import dataclass

from engine.game import Game, Termination
from engine.move import Move
from engine.pdn import append_game, write_game
from engine.position import Position

from protocol.dxp.convert import VARIANT

__all__ = ["GameRecord", "record_game", "pdn_game", "append_pdn"]


@dataclass(frozen=True)
class GameRecord:
    """A finished (or abandoned) game, as written to the PDN file. ``termination`` says why in
    words (a PDN comment after the last move); ``ending`` is the Termination of an end the
    board does not show (a time forfeit, a resignation), None when the rules or nobody know."""

    round: int
    white: str
    black: str
    result: str  #: "2-0", "0-2", "1-1" or "*"
    start: Position
    moves: tuple[Move, ...]
    termination: str
    date: datetime.date
    site: str = "DXP"
    event: str = "DXP game"
    ending: Termination | None = None


def record_game(record: GameRecord) -> Game:
    """The record as an engine.game Game: the tags, the moves, the end (``Game.end`` for an
    end the rules do not give, such as a loss on time) and the why as a closing comment."""
    tags = {
        "Event": record.event,
        "Site": record.site,
        "Date": record.date.strftime("%Y.%m.%d"),
        "Round": str(record.round),
        "White": record.white,
        "Black": record.black,
        "GameType": str(VARIANT.gametype),
    }
    game = Game(VARIANT, record.start, tags)
    for move in record.moves:
        game.push(move)
    if record.result != "*":
        rules = game.rules_outcome()
        if (rules is None or rules.result != record.result
                or record.ending not in (None, rules.termination)):
            game.end(record.result, record.ending)
    if record.termination:
        game.add_comment(record.termination)
    return game


def pdn_game(record: GameRecord) -> str:
    """The record as PDN (engine.pdn's writer): the seven-tag roster, GameType, FEN when not
    the start position, Termination for an end the board does not show, the moves, the why
    in a comment and the result; a blank line after it."""
    return write_game(record_game(record)) + "\n"


_pdn_lock = threading.Lock()


def append_pdn(path: str, record: GameRecord) -> None:
    """Append one game in one write (sessions of several connections share the file)."""
    with _pdn_lock:
        append_game(path, record_game(record))
