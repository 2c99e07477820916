"""One game of a match, wherever it is played: the schedule, the configuration, the engines'
players kept per engine, and ``play_scheduled``, which sets up a scheduled game (tags, opening)
and plays it to its end with the clocks.

The match runner's threads (runner.py) and the slots on a Ray cluster (cluster.py) both play
every game through ``play_scheduled``, so a game is the same game on one machine or many.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Sequence

from engine.errors import DamkaError
from engine.game import Game, GameOverError, Termination
from protocol.match.defaults import DEFAULT_CONCURRENCY, DEFAULT_EVENT, DEFAULT_MAX_MOVES
from protocol.match.openings import Opening
from protocol.match.players import Answer, EngineResigned, EngineTimeout, Player, PlayerError, PlayerSpec
from protocol.match.timecontrol import DEFAULT_GRACE, Clock, TimeControl
from engine.variants import INTERNATIONAL, Variant, as_variant

__all__ = [
    "DEFAULT_MAX_MOVES",
    "DEFAULT_HANG_TIMEOUT",
    "DEFAULT_START_ATTEMPTS",
    "DEFAULT_RETRY_DELAY",
    "GameNotStarted",
    "NotPlayed",
    "Scheduled",
    "GameRecord",
    "SprtSettings",
    "MatchConfig",
    "EnginePool",
    "play_game",
    "new_game",
    "play_scheduled",
    "schedule",
]

#: how long a move under depth/nodes limits alone may take before the engine is given up on
DEFAULT_HANG_TIMEOUT = 300.0
#: attempts at a game whose engine cannot be started or reached before the match stops
DEFAULT_START_ATTEMPTS = 5
#: seconds before the second attempt, doubled before each next one (1 + 2 + 4 + 8 s in all):
#: a DXP follower served in a restart loop listens again after a second or two
DEFAULT_RETRY_DELAY = 1.0


@dataclass(frozen=True)
class Scheduled:
    """One game of the schedule: its number (1-based), the engines by index, the opening."""

    round: int
    white: int
    black: int
    opening: int


def schedule(engines: int, openings: int, games_per_pair: int) -> list[Scheduled]:
    """Each pair plays ``games_per_pair`` games: opening k twice (the lower index White first),
    through the openings in order and round again. Pairs alternate game by game, so a match
    stopped early has played every pair about equally."""
    pairs = list(itertools.combinations(range(engines), 2))
    out: list[Scheduled] = []
    for k in range(games_per_pair):
        opening = (k // 2) % openings
        for a, b in pairs:
            white, black = (a, b) if k % 2 == 0 else (b, a)
            out.append(Scheduled(len(out) + 1, white, black, opening))
    return out


@dataclass
class GameRecord:
    """A finished game as the standings need it."""

    scheduled: Scheduled
    winner: bool | None  #: True White, False Black, None a draw
    termination: Termination | None
    plies: int = 0
    overheads: list[float] = field(default_factory=list)  #: runner seconds between moves
    resumed: bool = False  #: read back from the PDN file, not played now
    #: why the attempts before the one played did not start (an engine not reached)
    not_started: tuple[str, ...] = ()

    def points(self, engine: int) -> float:
        """The points ``engine`` (which played this game) took from it."""
        if self.winner is None:
            return 0.5
        return 1.0 if (self.winner == (engine == self.scheduled.white)) else 0.0


@dataclass(frozen=True)
class SprtSettings:
    elo0: float
    elo1: float
    alpha: float
    beta: float

    @classmethod
    def parse(cls, text: str) -> "SprtSettings":
        """``elo0,elo1,alpha,beta`` (e.g. ``0,10,0.05,0.05``)."""
        try:
            elo0, elo1, alpha, beta = (float(x) for x in text.split(","))
        except ValueError:
            raise ValueError(f"--sprt takes elo0,elo1,alpha,beta (e.g. 0,10,0.05,0.05), "
                             f"not {text!r}") from None
        if not elo1 > elo0:
            raise ValueError(f"the SPRT needs elo1 > elo0, not {elo0:g}, {elo1:g}")
        if not (0 < alpha < 0.5 and 0 < beta < 0.5):
            raise ValueError(f"SPRT alpha and beta must be in (0, 0.5), not {alpha:g}, {beta:g}")
        return cls(elo0, elo1, alpha, beta)

    def __str__(self) -> str:
        return (f"elo0={self.elo0:g} elo1={self.elo1:g} "
                f"alpha={self.alpha:g} beta={self.beta:g}")


@dataclass
class MatchConfig:
    """Everything a match needs. ``games_per_pair`` defaults to twice the openings.

    ``variant`` is the rule set's record: the command line resolves ``--variant`` once and
    passes it here, and the runner, its players and the games use it as it is. A caller
    without a record may give a name; it is resolved once, here."""

    engines: Sequence[PlayerSpec]
    control: TimeControl
    openings: Sequence[Opening]
    variant: Variant = INTERNATIONAL
    games_per_pair: int | None = None
    concurrency: int = DEFAULT_CONCURRENCY
    pdn: "str | os.PathLike[str] | None" = None
    resume: bool = False
    max_moves: int | None = DEFAULT_MAX_MOVES
    grace: float = DEFAULT_GRACE
    hang_timeout: float = DEFAULT_HANG_TIMEOUT
    sprt: SprtSettings | None = None
    event: str = DEFAULT_EVENT
    comments: bool = True
    #: a Ray cluster (``auto``, ``ray://HOST:PORT``, ``local``) to play on; ``concurrency``
    #: is then games per worker machine, None for one per core
    cluster: str | None = None
    #: attempts at a game that cannot start (an engine not started or reached) before the
    #: match stops, and the seconds before the second attempt (doubled each time)
    start_attempts: int = DEFAULT_START_ATTEMPTS
    retry_delay: float = DEFAULT_RETRY_DELAY

    def __post_init__(self) -> None:
        self.variant = as_variant(self.variant)


class GameNotStarted(Exception):
    """A game that never began: an engine could not be started or reached, failed to begin
    the game, or crashed (a dropped connection, a dead process) before its first move of
    the game. Not a result: the game is played again. ``colours`` are the sides at fault."""

    def __init__(self, colours: set[bool], reason: str):
        super().__init__(reason)
        self.colours = colours
        self.reason = reason


@dataclass(frozen=True)
class NotPlayed:
    """A scheduled game given up after ``len(reasons)`` attempts in a row that did not start;
    ``engine`` is the engine at fault in the last one."""

    scheduled: Scheduled
    engine: str
    reasons: tuple[str, ...]

    def message(self) -> str:
        return (f"engine {self.engine} could not be reached for game {self.scheduled.round} "
                f"({len(self.reasons)} attempts): {self.reasons[-1]}")


# -- one game -----------------------------------------------------------------------------


def _side(white: bool) -> str:
    return "White" if white else "Black"


def _comment(answer: Answer) -> str:
    parts = []
    if answer.score is not None:
        depth = f"/{answer.depth}" if answer.depth is not None else ""
        parts.append(f"{answer.score:+.2f}{depth}")
    parts.append(f"{answer.charged:.3f}s")
    if answer.reported is not None:
        parts.append(f"(own count {answer.reported:g}s)")
    return " ".join(parts)


def play_game(
    game: Game,
    white: Player | None,
    black: Player | None,
    control: TimeControl,
    *,
    grace: float = DEFAULT_GRACE,
    max_moves: int | None = DEFAULT_MAX_MOVES,
    hang_timeout: float = DEFAULT_HANG_TIMEOUT,
    comments: bool = True,
    stop: threading.Event | None = None,
    overheads: list[float] | None = None,
) -> tuple[set[bool], bool]:
    """Play ``game`` (set up with its opening) to its end and record the end in it.

    A player None could not be started. GameNotStarted when the game never began (a player
    None, a ``new_game`` that failed, a crash before the crashing engine's first move): it is
    no result, and the players that began it are told it is over. ``overheads`` collects the
    runner's seconds between each answer and the next request. Returns the colours whose
    engine must be restarted, and whether ``stop`` interrupted the game (it then has no
    result and must not be recorded).
    """
    players = {True: white, False: black}
    missing = {colour for colour, player in players.items() if player is None}
    if missing:
        raise GameNotStarted(missing, " and ".join(
            f"{_side(c)} could not be started" for c in sorted(missing, reverse=True)))
    begun: list[bool] = []
    for colour, player in players.items():
        try:
            player.new_game(game, colour, control)
        except PlayerError as exc:
            broken = _end_unplayed(game, players, begun)
            raise GameNotStarted(broken | {colour}, f"{player.name} ({_side(colour)}) failed "
                                 f"to begin the game: {exc}") from None
        begun.append(colour)

    clocks = {True: Clock(control, grace), False: Clock(control, grace)}
    opening_plies = game.ply
    last_finished: float | None = None
    interrupted = False
    broken: set[bool] = set()
    moved: set[bool] = set()  #: the colours that have made a move in this game
    while True:
        if game.rules_outcome() is not None:
            break
        if max_moves and game.ply - opening_plies >= 2 * max_moves:
            game.end(None, Termination.MOVE_LIMIT)
            game.add_comment(f"drawn after {max_moves} moves by each side")
            break
        colour = game.board.white_to_move
        player = players[colour]
        assert player is not None
        clock = clocks[colour]
        request = clock.request()
        if request.allowance is None:
            request = replace(request, allowance=hang_timeout)
        try:
            answer = player.play(game, request)
        except EngineTimeout as exc:
            if stop is not None and stop.is_set():
                interrupted = True
                break
            game.end(not colour, Termination.TIME_FORFEIT)
            game.add_comment(f"{player.name} lost on time: {exc}")
            if not exc.usable:
                broken.add(colour)
            break
        except EngineResigned as exc:
            game.end(not colour, Termination.RESIGNATION)
            game.add_comment(f"{player.name} resigned: {exc}")
            break
        except PlayerError as exc:
            if stop is not None and stop.is_set():
                interrupted = True
                break
            if colour not in moved:  # it never played here: not reached, not a result
                others = _end_unplayed(game, players, [c for c in players if c != colour])
                raise GameNotStarted(others | {colour}, f"{player.name} ({_side(colour)}) "
                                     f"crashed before its first move: {exc}") from None
            game.end(not colour, Termination.CRASH)
            game.add_comment(f"{player.name} crashed: {exc}")
            broken.add(colour)
            break
        if last_finished is not None and overheads is not None:
            overheads.append(answer.started - last_finished)
        last_finished = answer.finished
        if stop is not None and stop.is_set():
            interrupted = True
            break
        moved.add(colour)
        on_time = clock.charge(answer.charged)
        if not on_time:
            game.end(not colour, Termination.TIME_FORFEIT)
            limit = (f"{control.movetime:g} s per move" if control.movetime is not None
                     and answer.charged > control.movetime + grace else "its clock")
            game.add_comment(f"{player.name} lost on time: {answer.charged:.3f} s for a move, "
                             f"over {limit} and the {grace:g} s grace")
            break
        if answer.move is None:
            game.end(not colour, Termination.ILLEGAL_MOVE)
            game.add_comment(f"{player.name} gave no move in a position with legal moves")
            break
        try:
            game.push(answer.move)
        except (DamkaError, GameOverError) as exc:
            game.end(not colour, Termination.ILLEGAL_MOVE)
            game.add_comment(f"{player.name} played an illegal move: {exc}")
            break
        if comments:
            game.add_comment(_comment(answer))
    for colour, player in players.items():
        if colour in broken or interrupted:
            continue
        try:
            player.end_game(game)
        except PlayerError:
            broken.add(colour)
    return broken, interrupted


def _end_unplayed(game: Game, players: dict, colours: Sequence[bool]) -> set[bool]:
    """Tell the players of ``colours``, which began ``game``, that it is over unplayed (a DXP
    follower gets its GAMEEND); returns those that failed to hear it (to be restarted)."""
    failed = set()
    for colour in colours:
        try:
            players[colour].end_game(game)
        except PlayerError:
            failed.add(colour)
    return failed


# -- the engines' processes ----------------------------------------------------------------


class EnginePool:
    """The running players of one engine: idle ones are reused, more are started on demand
    up to ``limit``; a broken one is closed and replaced when next needed."""

    def __init__(self, spec: PlayerSpec, variant: Variant, limit: int):
        self.spec = spec
        self.variant = variant
        self.limit = limit
        self.idle: list[Player] = []
        self.busy: set[Player] = set()
        self.starting = 0
        self.cond = threading.Condition()
        self.closed = False
        self.last_error: str | None = None  #: why the last player failed to start

    def acquire(self) -> Player | None:
        """A started player, waiting for one when ``limit`` are busy; None if it would not
        start (the game is then lost by this engine)."""
        with self.cond:
            while not self.closed and not self.idle \
                    and len(self.busy) + self.starting >= self.limit:
                self.cond.wait()
            if self.closed:
                return None
            if self.idle:
                player = self.idle.pop()
                self.busy.add(player)
                return player
            self.starting += 1
        player = self.spec.create(self.variant)
        try:
            player.start()
        except PlayerError as exc:
            with self.cond:
                self.last_error = str(exc)
                self.starting -= 1
                self.cond.notify_all()
            _abort(player)
            return None
        with self.cond:
            self.starting -= 1
            self.busy.add(player)
        return player

    def release(self, player: Player | None, broken: bool) -> None:
        if player is None:
            return
        with self.cond:
            self.busy.discard(player)
            if not broken and not self.closed:
                self.idle.append(player)
            self.cond.notify_all()
        if broken or self.closed:
            _abort(player)

    def abort_all(self) -> None:
        with self.cond:
            self.closed = True
            players = list(self.busy) + self.idle
            self.idle.clear()
            self.cond.notify_all()
        for player in players:
            _abort(player)

    def close_all(self) -> None:
        with self.cond:
            self.closed = True
            players, self.idle = self.idle, []
        for player in players:
            try:
                player.close()
            except Exception:  # pragma: no cover
                player.abort()


def _abort(player: Player) -> None:
    """Ends a player's process, best effort: it may already have failed or gone."""
    try:
        player.abort()
    except Exception:  # pragma: no cover
        pass


# -- one scheduled game, on this machine or a cluster worker ---------------------------------


def new_game(config: MatchConfig, variant: Variant, names: Sequence[str], date: str,
             s: Scheduled) -> Game:
    """Game ``s`` set up with its tags and opening, before the engines' first move."""
    opening: Opening = config.openings[s.opening]
    tags = {
        "Event": config.event,
        "Site": "damka match",
        "Date": date,
        "Round": str(s.round),
        "White": names[s.white],
        "Black": names[s.black],
        "Opening": str(s.opening + 1),
        "TimeControl": str(config.control),
    }
    for colour, index in (("White", s.white), ("Black", s.black)):
        # the engine as --engine gave it: --resume refuses games of other settings by it
        text = getattr(config.engines[index], "text", "")
        if text:
            tags[f"{colour}Engine"] = text
    game = Game(variant, opening.start, tags)
    if opening.start != Game(variant).start:
        game.tags["FEN"] = game.start_fen
    for move in opening.moves:
        game.push(move)
    if opening.moves:
        game.add_comment("opening")
    return game


def play_scheduled(config: MatchConfig, variant: Variant, names: Sequence[str], date: str,
                   pools: Sequence[EnginePool], s: Scheduled, stop: threading.Event | None = None
                   ) -> tuple[Game, GameRecord] | NotPlayed | None:
    """Play game ``s`` with players from ``pools`` (one per engine): the finished game and
    its record, or None when ``stop`` interrupted it. The match runner's threads and the
    cluster's workers both play every game through here.

    An attempt that does not start (GameNotStarted: an engine not started or reached) is no
    result: the game is tried again after ``config.retry_delay`` seconds, doubled each time,
    and after ``config.start_attempts`` such attempts in a row it is NotPlayed. A game played
    after failed attempts says so in its record, its ``Attempts`` tag and a comment."""
    reasons: list[str] = []
    while True:
        try:
            played = _attempt(config, variant, names, date, pools, s, stop)
        except GameNotStarted as exc:
            colour = next(iter(sorted(exc.colours, reverse=True)))
            engine = names[s.white if colour else s.black]
            reasons.append(exc.reason)
            if len(reasons) >= config.start_attempts:
                return NotPlayed(s, engine, tuple(reasons))
            delay = config.retry_delay * 2 ** (len(reasons) - 1)
            if stop is not None:
                if stop.wait(delay):
                    return None
            else:
                time.sleep(delay)
            continue
        if played is not None and reasons:
            game, record = played
            record.not_started = tuple(reasons)
            game.tags["Attempts"] = str(len(reasons) + 1)
            game.add_comment("played at attempt " + str(len(reasons) + 1) + "; not started "
                             "before: " + "; ".join(reasons), ply=0)
        return played


def _attempt(config: MatchConfig, variant: Variant, names: Sequence[str], date: str,
             pools: Sequence[EnginePool], s: Scheduled, stop: threading.Event | None
             ) -> tuple[Game, GameRecord] | None:
    """One attempt at game ``s``; GameNotStarted when it does not begin."""
    # acquire in index order, so that two games never wait on each other's engine
    order = sorted({s.white, s.black})
    acquired: dict[int, Player | None] = {}
    for index in order:
        acquired[index] = pools[index].acquire()
    if stop is not None and stop.is_set():
        for index in order:
            pools[index].release(acquired[index], broken=True)
        return None
    game = new_game(config, variant, names, date, s)
    overheads: list[float] = []
    broken: set[bool] = set()
    interrupted = True
    try:
        missing = [index for index in order if acquired[index] is None]
        if missing:
            raise GameNotStarted({index == s.white for index in missing}, "; ".join(
                f"{names[index]} ({_side(index == s.white)}) could not be started: "
                f"{pools[index].last_error}" for index in missing))
        broken, interrupted = play_game(
            game, acquired[s.white], acquired[s.black], config.control,
            grace=config.grace, max_moves=config.max_moves,
            hang_timeout=config.hang_timeout, comments=config.comments,
            stop=stop, overheads=overheads,
        )
    except GameNotStarted as exc:
        broken, interrupted = exc.colours, False
        raise
    finally:
        for index in order:
            colour = index == s.white
            pools[index].release(acquired[index], broken=interrupted or colour in broken)
    if interrupted or (stop is not None and stop.is_set()):
        return None
    outcome = game.outcome()
    assert outcome is not None
    return game, GameRecord(s, outcome.winner, outcome.termination, game.ply, overheads)
