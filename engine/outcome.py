"""How a game ends: ``Termination`` (why), ``Outcome`` (the result, the winner and why), and
the PDN result forms of each rule set.

One Outcome for the whole library: ``Board.outcome()`` (the side to move has no legal move,
or a side no piece) and ``Game.outcome()`` (that, the draw rules, or an end recorded from
outside the board).
Results are written in each rule set's PDN scoring (engine/game.py says which).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from .variants import Variant

__all__ = ["Outcome", "Termination", "result_text", "parse_result"]


class Termination(str, Enum):
    """Why a game ended: by the rules (``by_rules``) or for a reason from outside the board."""

    NO_PIECES = "no pieces"
    NO_MOVES = "no legal move"
    REPETITION = "threefold repetition"
    KING_MOVES = "25-move king rule"
    ENDGAME_16 = "16-move endgame rule"
    ENDGAME_5 = "5-move endgame rule"
    NO_PROGRESS = "40-move rule"
    TIME_FORFEIT = "time forfeit"
    ILLEGAL_MOVE = "illegal move"
    CRASH = "engine crash"
    RESIGNATION = "resignation"
    AGREED_DRAW = "agreed draw"
    MOVE_LIMIT = "move limit"
    ADJUDICATION = "adjudication"

    @property
    def by_rules(self) -> bool:
        """True when the position itself ends the game (PDN can rebuild it from the moves)."""
        return self in _BY_RULES

    def __str__(self) -> str:
        return self.value

    @classmethod
    def parse(cls, text: str) -> "Termination | None":
        """The termination a PDN ``Termination`` tag names (value or member name), or None."""
        key = text.strip().casefold()
        for t in cls:
            if key in (t.value.casefold(), t.name.casefold()):
                return t
        return None


_BY_RULES = frozenset(
    {
        Termination.NO_PIECES,
        Termination.NO_MOVES,
        Termination.REPETITION,
        Termination.KING_MOVES,
        Termination.ENDGAME_16,
        Termination.ENDGAME_5,
        Termination.NO_PROGRESS,
    }
)

#: every result form PDN uses, with the winner (True White, False Black, None a draw)
_RESULTS: dict[str, bool | None] = {
    "2-0": True,
    "1-0": True,
    "0-2": False,
    "0-1": False,
    "1-1": None,
    "1/2-1/2": None,
}


def result_text(variant: Variant, winner: bool | None) -> str:
    """The PDN result for a winner (None: a draw) in the rule set's scoring."""
    if variant.size == 10:
        return {True: "2-0", False: "0-2", None: "1-1"}[winner]
    return {True: "1-0", False: "0-1", None: "1/2-1/2"}[winner]


def parse_result(text: str) -> bool | None:
    """The winner of a PDN result (True White, False Black, None draw); ValueError if unknown."""
    key = text.strip().replace("½", "1/2")
    if key not in _RESULTS:
        raise ValueError(f"unknown result {text!r} (expected one of {', '.join(_RESULTS)})")
    return _RESULTS[key]


@dataclass(frozen=True)
class Outcome:
    """How a game ended: the PDN result, the winner (None for a draw) and why."""

    result: str
    winner: bool | None
    termination: Termination | None  #: None when unknown (a game read from PDN)

    @property
    def is_draw(self) -> bool:
        return self.winner is None
