"""One self-play game: the same engine plays both sides at a fixed budget per move.

Each position in which the engine chooses a move is recorded with its search score, whether
it is quiet, and (when the game is over) the game's result from the side to move. The engine's
hash table, killers and history are cleared before every game, so a game depends only on
the settings and its id: the same seed gives the same games on any number of workers.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Protocol, Sequence

import numpy as np

from engine import _core
from engine.board import Board
from engine.game import Game, Termination
from engine.position import Position
from engine.search import Engine, Limits
from engine.variants import Variant

from .data import ENDINGS, SCORE_CLIP, GameRecord
from .defaults import variant_label
from .openers import game_rng, opening_board

__all__ = ["EngineSpec", "Players", "SelfPlaySettings", "make_engine", "make_players",
           "play_game"]


@dataclass(frozen=True)
class SelfPlaySettings:
    """Everything a game depends on (and the hash size, which does not change the games'
    meaning but does change their moves, so it is kept too)."""

    rules: Variant  #: the rule set (the command line's record, house rule included)
    nodes: int | None
    depth: int | None
    random_plies: int
    seed: int
    max_plies: int
    hash_mb: int
    weights: str | None  #: a weights file, or None for the engine's own
    egtb: str | None = None  #: a directory of endgame databases, or None
    #: the chance, at each move after the opening, that the side to move plays a uniformly
    #: random legal move instead of searching (``--deviate``; 0: never)
    deviate: float = 0.0
    #: a second weights file whose engine plays one side of every game (``--opponent``;
    #: Black in even games, White in odd ones), or None: the engine plays itself
    opponent: str | None = None

    @property
    def limits(self) -> Limits:
        return Limits(depth=self.depth, nodes=self.nodes)

    @property
    def variant(self) -> str:
        """The rule set as the data names it (``russian-nocapture`` for the house rule)."""
        return variant_label(self.rules)


class EngineSpec(Protocol):
    """What a worker's engine is built from: the fields self-play's and rescore's settings
    share."""

    @property
    def rules(self) -> Variant: ...
    @property
    def hash_mb(self) -> int: ...
    @property
    def weights(self) -> str | None: ...
    @property
    def egtb(self) -> str | None: ...


def make_engine(settings: EngineSpec) -> Engine:
    """The engine of one worker: the learned evaluation with the weights file when one is
    given, else the engine's default evaluation; probing the databases when there are some."""
    return Engine(settings.rules, hash_mb=settings.hash_mb, weights=settings.weights,
                  egtb=settings.egtb)


@dataclass
class Players:
    """A worker's engines: the one of ``--weights`` and, with ``--opponent``, the other."""

    engine: Engine
    opponent: Engine | None = None

    def to_move(self, game_id: int, white_to_move: bool) -> Engine:
        """The engine that moves: the opponent has Black in even games, White in odd ones
        (so every opening is played with colours reversed)."""
        if self.opponent is None or white_to_move == (game_id % 2 == 0):
            return self.engine
        return self.opponent

    def clear(self) -> None:
        self.engine.clear()
        if self.opponent is not None:
            self.opponent.clear()


def make_players(settings: SelfPlaySettings) -> Players:
    """The engines of one self-play worker (the same databases and hash size for both)."""
    opponent = None
    if settings.opponent is not None:
        opponent = make_engine(replace(settings, weights=settings.opponent))
    return Players(make_engine(settings), opponent)


def play_game(settings: SelfPlaySettings, players: Players, game_id: int,
              openings: Sequence = ()) -> GameRecord:
    """Play game ``game_id`` to its end and return its record.

    ``openings`` (``Opening`` values of the match runner's loader) are used in turn: game i
    starts from opening ``i % len(openings)``; without them from the rule set's start. With
    ``settings.deviate`` the side to move now and then plays a random move (not recorded):
    the games then hold positions the engine would not have chosen but its search meets, a
    man given away for nothing among them, with the result they lead to. With
    ``settings.opponent`` the two engines of ``players`` share the game (``Players.to_move``);
    every position either searches is recorded, with its own score.
    """
    variant = settings.rules
    players.clear()
    engine = players.engine
    rng = game_rng(settings.seed, game_id)
    if openings:
        opening = openings[game_id % len(openings)]
        start, moves = opening.start, opening.moves
    else:
        start, moves = Board(variant).position, ()
    game = Game.from_board(opening_board(variant, start, moves, settings.random_plies, rng,
                                         engine))
    rows: list[tuple] = []
    limits = settings.limits
    recent = _recent(game)
    adjudged = None
    while (outcome := game.outcome()) is None and game.ply < settings.max_plies:
        board = game.board
        p = board.position
        if engine.egtb is not None and (adjudged := _databases_result(engine, game)):
            break
        if settings.deviate and rng.random() < settings.deviate:
            legal = list(board.legal_moves)
            if len(legal) > 1:  # a position left without a search is not recorded
                move = game.push(legal[rng.randrange(len(legal))])
                recent = _after(recent, game, move)
                continue
        quiet = not _has_capture(variant, p)
        opponent_capture = _has_capture(variant, p._replace(white_to_move=not p.white_to_move))
        found = players.to_move(game_id, p.white_to_move).search(recent, limits,
                                                                 counters=game.counters)
        score = max(-SCORE_CLIP, min(SCORE_CLIP, found.score))
        rows.append((p.white, p.black, p.kings, p.white_to_move, score, quiet,
                     opponent_capture, game.ply))
        recent = _after(recent, game, game.push(found.best_move))
    if adjudged:
        winner, end = adjudged[0], ENDINGS.index("endgame databases")
    elif outcome is None:
        winner, end = None, ENDINGS.index("move limit")
    else:
        winner, end = outcome.winner, ENDINGS.index(Termination(outcome.termination).value)
    return _record(game_id, rows, winner, end, game)


def _databases_result(engine: Engine, game: Game) -> tuple[bool | None] | None:
    """(winner,) when the game's position is in the engine's databases: their result under
    the game's draw counters (True White, False Black, None a draw); else None."""
    from engine.egtb.probe import DRAW, WIN
    from engine.egtb.root import root_moves

    value, _ = root_moves(engine.egtb, game.board, game.counters)
    if value is None:
        return None
    if value.result == DRAW:
        return (None,)
    white_to_move = game.board.position.white_to_move
    return (white_to_move if value.result == WIN else not white_to_move,)


def _has_capture(variant: Variant, position: Position) -> bool:
    """Whether the side to move has a capture (the core's move tuples, no Move objects)."""
    return any(core_move[2] for core_move in _core.generate(variant, position))


def _after(recent: Board, game: Game, move) -> Board:
    """The searched board after the game's latest ``move``: pushed, or a new board from the
    game's position when the move cannot be undone (nothing before it can come back)."""
    if game.counters.reversible:
        recent.push(move)
        return recent
    return Board(game.variant, game.board.position)


def _recent(game: Game) -> Board:
    """The game's board cut down to the plies a repetition can reach back to (the search
    replays the whole move stack each time; the draw counters are passed beside it)."""
    window = game.counters.reversible
    board = Board(game.variant, game.positions[-1 - window])
    for move in game.moves[game.ply - window:]:
        board.push(move)
    return board


def _record(game_id: int, rows: list[tuple], winner: bool | None, end: int,
            game: Game) -> GameRecord:
    columns = list(zip(*rows)) if rows else [()] * 8
    white, black, kings, to_move, score, quiet, opponent, ply = columns
    to_move = np.array(to_move, dtype=np.bool_)
    win = 0 if winner is None else (1 if winner else -1)
    result = np.where(to_move, win, -win).astype(np.int8)
    final = game.board.position
    return GameRecord(
        positions={
            "white": np.array(white, dtype=np.uint64),
            "black": np.array(black, dtype=np.uint64),
            "kings": np.array(kings, dtype=np.uint64),
            "white_to_move": to_move,
            "result": result,
            "score": np.array(score, dtype=np.int16),
            "quiet": np.array(quiet, dtype=np.bool_),
            "opponent_capture": np.array(opponent, dtype=np.bool_),
            "game": np.full(len(rows), game_id, dtype=np.int64),
            "ply": np.array(ply, dtype=np.int16),
        },
        game={
            "game_id": game_id,
            "game_winner": win,
            "game_end": end,
            "game_plies": game.ply,
            "final_white": final.white,
            "final_black": final.black,
            "final_kings": final.kings,
            "final_white_to_move": final.white_to_move,
        },
    )
