"""``Game``: a game record with its rule set's draw rules, PDN tags and annotations.

A game is a start position (FEN), the moves, the PDN tags and what PDN writes around the
moves (comments, variations, annotation marks), and the result with the reason the game ended.
The rules end a game exactly at their thresholds (docs/rules.md, section S): a player with no
piece or no legal move loses; threefold repetition with the same side to move; international:
25 moves by each side with only kings moving and nothing captured, and the 16- and 5-move
endgame rules; 8x8: 40 moves by each side without a capture or a crowning. The counters are
those of engine/draws.py, kept move by move. A match runner records the other endings with ``end``.

Results are written in each rule set's PDN scoring: international draughts (10x10) gives two
points for a win, so ``2-0``, ``1-1``, ``0-2`` (as the FMJD and lidraughts write them); the
8x8 rule sets write ``1-0``, ``1/2-1/2``, ``0-1`` (as the English/American checkers PDN
archives do). Every form is read for every rule set and normalised to the rule set's own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence, Union

from .board import Board
from .draws import DrawCounters, endgame_rule, next_counters
from .errors import DamkaError
from .fen import write_fen
from .move import Move
from .outcome import Outcome, Termination, parse_result, result_text
from .position import Position
from .variants import Variant, as_variant

__all__ = [
    "Game",
    "Outcome",
    "Termination",
    "GameOverError",
    "Comment",
    "Line",
    "LineMove",
    "Notes",
    "draw_termination",
    "result_text",
    "parse_result",
]


class GameOverError(DamkaError):
    """A move pushed into a game that was ended with ``Game.end``."""


# -- what PDN writes around the moves ---------------------------------------------------------


@dataclass
class Comment:
    """A PDN comment, ``{text}``; the text is kept exactly as read."""

    text: str


@dataclass
class Notes:
    """What follows a move in PDN: annotation marks and then comments and variations in order.

    ``nags`` holds suffix marks (``!``, ``?!``) and numeric ones (``$3``); ``after`` holds
    Comment and Line items in the order they were written; a Line there is an alternative to
    the move these notes belong to.
    """

    nags: list[str] = field(default_factory=list)
    after: list["Comment | Line"] = field(default_factory=list)

    @property
    def comments(self) -> list[str]:
        return [item.text for item in self.after if isinstance(item, Comment)]

    @property
    def variations(self) -> list["Line"]:
        return [item for item in self.after if isinstance(item, Line)]


@dataclass
class LineMove:
    """A move of a variation, kept as its PDN text (variations are not replayed)."""

    text: str
    notes: Notes = field(default_factory=Notes)


@dataclass
class Line:
    """A variation ``( ... )``: comments before its first move, its moves, nested variations."""

    moves: list[LineMove] = field(default_factory=list)
    before: list[Comment] = field(default_factory=list)
    result: str | None = None  #: a result written inside the variation (annotators do)


Annotation = Union[Comment, Line]


# -- the draw rules -----------------------------------------------------------------------------


def draw_termination(
    variant: Variant, position: Position, counters: DrawCounters, earlier: Sequence[Position]
) -> Termination | None:
    """The draw rule that ends the game in ``position``, or None.

    ``counters`` are the draw counters at ``position`` (plies, see draws.py); ``earlier`` the
    positions before it, oldest first. Each rule fires at its threshold exactly: N moves by
    each side is 2N plies.
    """
    rules = variant.draws
    c = counters
    # only king moves without a capture keep the position reachable: look back along that run
    if c.reversible and rules.repetitions:
        window = earlier[max(0, len(earlier) - c.reversible):]
        if 1 + sum(1 for p in window if p == position) >= rules.repetitions:
            return Termination.REPETITION
    if rules.king_moves and c.reversible >= 2 * rules.king_moves:
        return Termination.KING_MOVES
    if rules.endgame_three or rules.endgame_two:
        kind = endgame_rule(position)
        if kind == 16 and rules.endgame_three and c.endgame >= 2 * rules.endgame_three:
            return Termination.ENDGAME_16
        if kind == 5 and rules.endgame_two and c.endgame >= 2 * rules.endgame_two:
            return Termination.ENDGAME_5
    if rules.no_progress and c.no_progress >= 2 * rules.no_progress:
        return Termination.NO_PROGRESS
    return None


# -- the game -------------------------------------------------------------------------------------


class Game:
    """A game of one rule set: start position, moves, tags, annotations and outcome.

    ``variant`` is a Variant or a rule-set name (library code passes the record), ``fen`` the
    start position (default: the rule set's), ``tags`` PDN tags kept in order (``Result``,
    ``GameType`` and ``FEN`` are written from the game itself). ``board`` is the current
    position; change it only through the game.
    """

    def __init__(
        self,
        variant: "str | Variant" = "international",
        fen: "str | Position | None" = None,
        tags: "dict[str, str] | None" = None,
    ):
        self.variant: Variant = as_variant(variant)
        self.board: Board = Board(self.variant, fen)
        self.start: Position = self.board.position
        self.tags: dict[str, str] = dict(tags or {})
        #: comments (and rarely variations) written before the first move
        self.intro: list[Annotation] = []
        #: the notes of each move of the main line (same length as ``moves``)
        self.notes: list[Notes] = []
        self._history: list[tuple[Position, DrawCounters]] = []  # before each move
        self._counters = DrawCounters()
        self._ended: Outcome | None = None

    @classmethod
    def from_board(cls, board: Board, tags: "dict[str, str] | None" = None) -> "Game":
        """A game holding a board's moves from the position its move stack starts in."""
        replay = board.copy()
        while replay.move_stack:
            replay.pop()
        game = cls(board.variant, replay.position, tags)
        for move in board.move_stack:
            game.push(move)
        return game

    # -- state ----------------------------------------------------------------------------------

    @property
    def start_fen(self) -> str:
        return write_fen(self.variant, self.start)

    @property
    def moves(self) -> list[Move]:
        """The moves of the main line (the board's move stack; do not change it)."""
        return self.board.move_stack

    @property
    def ply(self) -> int:
        return len(self.board.move_stack)

    @property
    def counters(self) -> DrawCounters:
        """The draw counters at the current position."""
        return self._counters

    @property
    def positions(self) -> list[Position]:
        """Every position of the game, the start first and the current one last."""
        return [p for p, _ in self._history] + [self.board.position]

    # -- moves ---------------------------------------------------------------------------------

    def push(self, move: "Move | str") -> Move:
        """Play a move (a Move or any PDN/Hub text of it) and return the legal Move played.

        IllegalMoveError/AmbiguousMoveError/InvalidMoveError as Board.push; GameOverError after
        ``end``. A game over by the rules still takes moves (a PDN file may go on past a draw).
        """
        if self._ended is not None:
            raise GameOverError(
                f"the game has ended ({self._ended.result}, {self._ended.termination})"
            )
        before = self.board.position
        played = self.board.push(move)
        self._history.append((before, self._counters))
        self._counters = next_counters(
            self._counters,
            before,
            played,
            self.board.position,
            bool(self.variant.draws.endgame_three or self.variant.draws.endgame_two),
        )
        self.notes.append(Notes())
        return played

    def pop(self) -> Move:
        """Take back the last move (and an ``end`` recorded after it); IndexError if none."""
        move = self.board.pop()
        _, self._counters = self._history.pop()
        self.notes.pop()
        self._ended = None
        return move

    def add_comment(self, text: str, ply: int | None = None) -> None:
        """A comment after move ``ply`` (1-based; default the last move, 0 before the first)."""
        if not isinstance(text, str):
            raise TypeError(f"a comment is text, not {type(text).__name__}")
        ply = self.ply if ply is None else ply
        if not (isinstance(ply, int) and 0 <= ply <= self.ply):
            raise IndexError(f"no move {ply} to comment on (the game has {self.ply})")
        comment = Comment(text)
        if ply == 0:
            self.intro.append(comment)
        else:
            self.notes[ply - 1].after.append(comment)

    # -- the end ---------------------------------------------------------------------------

    def rules_outcome(self) -> Outcome | None:
        """The outcome the rules give the current position, or None while play goes on."""
        board = self.board
        lost = board.outcome()  # no legal move, or no piece: the side to move has lost
        if lost is not None:
            return lost
        run = self._history[len(self._history) - self._counters.reversible:]
        drawn = draw_termination(self.variant, board.position, self._counters, [p for p, _ in run])
        if drawn is None:
            return None
        return Outcome(result_text(self.variant, None), None, drawn)

    def outcome(self) -> Outcome | None:
        """The recorded end (``end``) if any, else what the rules say; None while going on."""
        return self._ended if self._ended is not None else self.rules_outcome()

    def is_over(self) -> bool:
        return self.outcome() is not None

    @property
    def result(self) -> str:
        """The PDN result: ``2-0``/``1-0`` ... or ``*`` while the game goes on."""
        outcome = self.outcome()
        return outcome.result if outcome else "*"

    @property
    def termination(self) -> Termination | None:
        outcome = self.outcome()
        return outcome.termination if outcome else None

    def end(self, result: "str | bool | None", termination: Termination | None) -> Outcome:
        """Record an end the board does not show: a forfeit, resignation, agreement, ...

        ``result`` is PDN text in any scoring (normalised to the rule set's), or the winner
        (True White, False Black, None a draw). ``termination`` None means unknown (PDN).
        """
        if termination is not None and not isinstance(termination, Termination):
            raise TypeError(f"termination is a Termination or None, not {termination!r}")
        if not (result is None or isinstance(result, (str, bool))):
            raise TypeError(f"result is PDN text, True, False or None, not {result!r}")
        winner = parse_result(result) if isinstance(result, str) else result
        self._ended = Outcome(result_text(self.variant, winner), winner, termination)
        return self._ended

    def result_for(self, winner: bool | None) -> str:
        """The PDN result of a win by ``winner`` (None: a draw) in this rule set's scoring."""
        return result_text(self.variant, winner)

    # -- misc ------------------------------------------------------------------------------------

    def __repr__(self) -> str:
        return (
            f"<Game {self.variant.name} {self.tags.get('White', '?')} - "
            f"{self.tags.get('Black', '?')}, {self.ply} plies, {self.result}>"
        )
