"""The match runner behind ``damka match``: games between engines, adjudicated and recorded.

* **Schedule.** Every pair of engines (a round robin for three or more) plays each opening
  twice, colours reversed. Games are numbered in schedule order; the number is the PDN
  ``Round`` tag, and with the ``White``, ``Black`` and ``Opening`` tags it identifies the game.
* **Adjudication.** The rules end a game (engine.game.Game); an engine loses when it oversteps
  its clock by more than the grace, answers with an illegal move or no move, or crashes (it is
  restarted for its next game; the match goes on); ``max_moves`` moves by each side after the
  opening draw the game.
* **Recording.** Each finished game is appended to the PDN file at once (flushed and synced),
  so an interrupted match loses only the games in progress; ``resume`` reads the file back,
  skips the games it holds and counts their results.
* **Concurrency.** ``concurrency`` games run at once, each in its own thread; each engine
  process (or connection) serves one game at a time, started on demand and reused. With
  ``cluster`` the games run on a Ray cluster's slots instead (match/cluster.py), through the
  same ``play_scheduled``; this process still records every game, once.
* **Stopping.** With an SPRT, no new game starts once the test decides; the games in progress
  finish and are recorded.

The runner's own cost per move (from an engine's answer to the next request) is measured and
reported as ``overheads``.
"""

from __future__ import annotations

import datetime
import itertools
import os
import statistics
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Sequence

from engine.errors import DamkaError
from engine.game import Game, GameOverError, Termination
from protocol.match.openings import Opening
from protocol.match.players import Answer, EngineResigned, EngineTimeout, Player, PlayerError, PlayerSpec
from protocol.match.stats import Record, SprtResult, sprt
from protocol.match.timecontrol import DEFAULT_GRACE, Clock, TimeControl
from engine.variants import Variant, get_variant

__all__ = [
    "Scheduled",
    "GameRecord",
    "SprtSettings",
    "MatchConfig",
    "MatchState",
    "Match",
    "MatchError",
    "play_game",
    "play_scheduled",
    "new_game",
    "schedule",
]

#: default adjudication: a draw after this many moves by each side (opening not counted)
DEFAULT_MAX_MOVES = 200
#: how long a move under depth/nodes limits alone may take before the engine is given up on
DEFAULT_HANG_TIMEOUT = 300.0


class MatchError(ValueError):
    """A match that cannot be run as asked (bad engines, a PDN file of another match, ...)."""


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
    """Everything a match needs. ``games_per_pair`` defaults to twice the openings."""

    engines: Sequence[PlayerSpec]
    control: TimeControl
    openings: Sequence[Opening]
    variant: "str | Variant" = "international"
    games_per_pair: int | None = None
    concurrency: int = 1
    pdn: "str | os.PathLike[str] | None" = None
    resume: bool = False
    max_moves: int | None = DEFAULT_MAX_MOVES
    grace: float = DEFAULT_GRACE
    hang_timeout: float = DEFAULT_HANG_TIMEOUT
    sprt: SprtSettings | None = None
    event: str = "damka match"
    comments: bool = True
    #: a Ray cluster (``auto``, ``ray://HOST:PORT``, ``local``) to play on; ``concurrency``
    #: is then games per worker machine, None for one per core
    cluster: str | None = None


@dataclass
class MatchState:
    """The standings so far, handed to the progress callback after every game."""

    names: list[str]
    total: int
    records: list[GameRecord] = field(default_factory=list)
    running: int = 0
    sprt: SprtResult | None = None
    interrupted: bool = False
    replayed: int = 0  #: games played again after their cluster worker was lost
    _tally: dict = field(default_factory=dict, repr=False)  #: (a, b) -> [w, d, l]
    _tallied: int = field(default=0, repr=False)  #: records counted in _tally

    @property
    def done(self) -> int:
        return len(self.records)

    def pair_record(self, a: int, b: int) -> Record:
        """Engine ``a``'s wins, draws and losses against engine ``b``. Tallied as records
        arrive (``records`` only grows), so a cluster's coordinator updating the SPRT after
        every one of a million games does not go through them all each time."""
        for r in self.records[self._tallied:]:
            s = r.scheduled
            for engine, other in ((s.white, s.black), (s.black, s.white)):
                counts = self._tally.setdefault((engine, other), [0, 0, 0])
                counts[{1.0: 0, 0.5: 1, 0.0: 2}[r.points(engine)]] += 1
        self._tallied = len(self.records)
        return Record(*self._tally.get((a, b), (0, 0, 0)))

    def engine_record(self, a: int) -> Record:
        """Engine ``a`` against the whole field."""
        total = Record()
        for b in range(len(self.names)):
            if b != a:
                total = total + self.pair_record(a, b)
        return total

    def overheads(self) -> list[float]:
        return [x for r in self.records for x in r.overheads]

    def overhead_summary(self) -> dict[str, float] | None:
        """Runner seconds per move: mean, median, 99th percentile and max (None if none)."""
        xs = sorted(self.overheads())
        if not xs:
            return None
        return {
            "moves": len(xs),
            "mean": statistics.fmean(xs),
            "median": statistics.median(xs),
            "p99": xs[min(len(xs) - 1, int(0.99 * len(xs)))],
            "max": xs[-1],
        }


# -- one game -----------------------------------------------------------------------------


def _side(white: bool) -> str:
    return "White" if white else "Black"


def _comment(answer: Answer) -> str:
    parts = []
    if answer.score is not None:
        depth = f"/{answer.depth}" if answer.depth is not None else ""
        parts.append(f"{answer.score:+.2f}{depth}")
    parts.append(f"{answer.elapsed:.3f}s")
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

    A player None could not be started: it loses at once (engine crash). ``overheads``
    collects the runner's seconds between each answer and the next request. Returns the
    colours whose engine must be restarted, and whether ``stop`` interrupted the game (it
    then has no result and must not be recorded).
    """
    players = {True: white, False: black}
    broken: set[bool] = set()
    for colour, player in players.items():
        if player is None:
            broken.add(colour)
    if broken:
        loser = game.board.white_to_move if len(broken) == 2 else next(iter(broken))
        game.end(None if len(broken) == 2 else not loser, Termination.CRASH)
        game.add_comment(" and ".join(f"{_side(c)} could not be started" for c in sorted(broken)))
        return broken, False
    for colour, player in players.items():
        try:
            player.new_game(game, colour, control)
        except PlayerError as exc:
            game.end(not colour, Termination.CRASH)
            game.add_comment(f"{player.name} ({_side(colour)}) failed to begin the game: {exc}")
            return {colour}, False

    clocks = {True: Clock(control, grace), False: Clock(control, grace)}
    opening_plies = game.ply
    last_finished: float | None = None
    interrupted = False
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
        on_time = clock.charge(answer.elapsed)
        if not on_time:
            game.end(not colour, Termination.TIME_FORFEIT)
            limit = (f"{control.movetime:g} s per move" if control.movetime is not None
                     and answer.elapsed > control.movetime + grace else "its clock")
            game.add_comment(f"{player.name} lost on time: {answer.elapsed:.3f} s for a move, "
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
        if colour in broken or interrupted or player is None:
            continue
        try:
            player.end_game(game)
        except PlayerError:
            broken.add(colour)
    return broken, interrupted


# -- the engines' processes ----------------------------------------------------------------


class _Pool:
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
            try:
                player.abort()
            except Exception:  # pragma: no cover - best effort on a player that failed
                pass
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
            try:
                player.abort()
            except Exception:  # pragma: no cover
                pass

    def abort_all(self) -> None:
        with self.cond:
            self.closed = True
            players = list(self.busy) + self.idle
            self.idle.clear()
            self.cond.notify_all()
        for player in players:
            try:
                player.abort()
            except Exception:  # pragma: no cover
                pass

    def close_all(self) -> None:
        with self.cond:
            self.closed = True
            players, self.idle = self.idle, []
        for player in players:
            try:
                player.close()
            except Exception:  # pragma: no cover
                player.abort()


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
    game = Game(variant, opening.start, tags)
    if opening.start != Game(variant).start:
        game.tags["FEN"] = game.start_fen
    for move in opening.moves:
        game.push(move)
    if opening.moves:
        game.add_comment("opening")
    return game


def play_scheduled(config: MatchConfig, variant: Variant, names: Sequence[str], date: str,
                   pools: Sequence[_Pool], s: Scheduled, stop: threading.Event | None = None
                   ) -> tuple[Game, GameRecord] | None:
    """Play game ``s`` with players from ``pools`` (one per engine): the finished game and
    its record, or None when ``stop`` interrupted it. The match runner's threads and the
    cluster's workers both play every game through here."""
    # acquire in index order, so that two games never wait on each other's engine
    order = sorted({s.white, s.black})
    acquired: dict[int, Player | None] = {}
    for index in order:
        acquired[index] = pools[index].acquire()
    game = new_game(config, variant, names, date, s)
    overheads: list[float] = []
    broken: set[bool] = set()
    interrupted = True
    try:
        broken, interrupted = play_game(
            game, acquired[s.white], acquired[s.black], config.control,
            grace=config.grace, max_moves=config.max_moves,
            hang_timeout=config.hang_timeout, comments=config.comments,
            stop=stop, overheads=overheads,
        )
    finally:
        for index in order:
            colour = index == s.white
            pools[index].release(acquired[index], broken=interrupted or colour in broken)
    if interrupted or (stop is not None and stop.is_set()):
        return None
    outcome = game.outcome()
    assert outcome is not None
    return game, GameRecord(s, outcome.winner, outcome.termination, game.ply, overheads)


# -- the match -----------------------------------------------------------------------------


def _unique_names(specs: Sequence[PlayerSpec]) -> list[str]:
    seen: dict[str, int] = {}
    names = []
    for spec in specs:
        base = spec.name
        seen[base] = seen.get(base, 0) + 1
        names.append(base if seen[base] == 1 else f"{base}-{seen[base]}")
    if len(set(names)) != len(names):
        raise MatchError(f"engine names must differ: {names}")
    return names


class Match:
    """A match as configured; ``run`` plays it and returns the final MatchState.

    ``on_progress(state)`` is called (under a lock, from the game threads) after each game.
    ``on_warning(text)`` hears of cluster workers lost or unusable (default: stderr).
    ``stop()`` (any thread) interrupts: the games in progress are abandoned unrecorded.
    """

    def __init__(self, config: MatchConfig,
                 on_progress: Callable[[MatchState], None] | None = None,
                 on_warning: Callable[[str], None] | None = None):
        if len(config.engines) < 2:
            raise MatchError("a match needs at least two engines")
        if not config.openings:
            raise MatchError("a match needs at least one opening")
        if config.concurrency is None and config.cluster is None:
            config.concurrency = 1
        if config.concurrency is not None and config.concurrency < 1:
            raise MatchError(f"concurrency must be at least 1, not {config.concurrency}")
        if not config.grace >= 0:
            raise MatchError(f"the grace must not be negative, not {config.grace}")
        if config.sprt is not None and len(config.engines) != 2:
            raise MatchError("an SPRT needs exactly two engines")
        if config.resume and config.pdn is None:
            raise MatchError("--resume needs the PDN file of the match")
        if any(getattr(spec, "kind", None) == "dxp" for spec in config.engines):
            from protocol.dxp.player import dxp_minutes
            try:
                dxp_minutes(config.control)
            except ValueError as exc:
                raise MatchError(str(exc)) from None
        self.config = config
        self.variant = get_variant(config.variant)
        self.names = _unique_names(config.engines)
        # players say their own name in messages: give each its unique one
        config.engines = [spec.renamed(name) if spec.name != name and hasattr(spec, "renamed")
                          else spec for spec, name in zip(config.engines, self.names)]
        per_pair = config.games_per_pair or 2 * len(config.openings)
        self.schedule = schedule(len(config.engines), len(config.openings), per_pair)
        self.state = MatchState(self.names, len(self.schedule))
        self.on_progress = on_progress
        self.on_warning = on_warning
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._pending: list[Scheduled] = []
        self._pools: list[_Pool] = []
        self._errors: list[BaseException] = []
        self._recorded: set[int] = set()  #: rounds in the file (resumed or played now)
        self._date = datetime.date.today().strftime("%Y.%m.%d")

    # -- resume ------------------------------------------------------------------------------

    def _read_done(self) -> list[GameRecord]:
        """The games of this match already in the PDN file (``resume``)."""
        path = self.config.pdn
        if path is None or not Path(path).exists() or Path(path).stat().st_size == 0:
            return []
        from engine.pdn import PdnError, read_games

        if not self.config.resume:
            raise MatchError(f"{path} already holds games: pass --resume to continue that "
                             "match, or choose another file")
        by_round = {s.round: s for s in self.schedule}
        done: dict[int, GameRecord] = {}
        try:
            for number, game in enumerate(read_games(path, self.variant), start=1):
                tags = game.tags
                try:
                    s = by_round[int(tags.get("Round", ""))]
                except (KeyError, ValueError):
                    raise MatchError(f"{path}: game {number} (Round {tags.get('Round')!r}) is "
                                     "not a game of this match") from None
                expected = (self.names[s.white], self.names[s.black], str(s.opening + 1))
                found = (tags.get("White"), tags.get("Black"), tags.get("Opening"))
                if found != expected:
                    raise MatchError(
                        f"{path}: game {number} (Round {s.round}) is {found[0]} - {found[1]}, "
                        f"opening {found[2]}; this match plays {expected[0]} - {expected[1]}, "
                        f"opening {expected[2]} there (other engines or openings?)")
                outcome = game.outcome()
                if outcome is None:
                    raise MatchError(f"{path}: game {number} (Round {s.round}) has no result")
                done[s.round] = GameRecord(s, outcome.winner, outcome.termination, game.ply,
                                           resumed=True)
        except PdnError as exc:
            raise MatchError(f"cannot resume from {path}: {exc}") from None
        return list(done.values())

    # -- running -----------------------------------------------------------------------------

    def run(self) -> MatchState:
        """Play the match (what is left of it) and return the final standings."""
        done = self._read_done()
        finished = {r.scheduled.round for r in done}
        self.state.records.extend(sorted(done, key=lambda r: r.scheduled.round))
        self._recorded = set(finished)
        self._pending = [s for s in self.schedule if s.round not in finished]
        self._pending.reverse()  # popped from the end: schedule order
        self._update_sprt()
        if self.on_progress is not None:
            self.on_progress(self.state)
        if self.config.cluster is not None:
            if self._pending and not self._decided():
                from protocol.match.cluster import play_on_cluster

                play_on_cluster(self, self._pending[::-1])
            self.state.interrupted = self._stop.is_set()
            return self.state
        limit = self.config.concurrency or 1
        self._pools = [_Pool(spec, self.variant, min(limit, spec.max_instances or limit))
                       for spec in self.config.engines]
        try:
            if self._pending and not self._decided():
                self._check_engines()
                workers = [threading.Thread(target=self._work, name=f"match-game-{i}",
                                            daemon=True)
                           for i in range(min(limit, len(self._pending)))]
                for w in workers:
                    w.start()
                for w in workers:
                    while w.is_alive():
                        w.join(timeout=0.25)
        except BaseException:
            self.stop()
            raise
        finally:
            for pool in self._pools:
                if self._stop.is_set():
                    pool.abort_all()
                else:
                    pool.close_all()
        if self._errors:
            raise self._errors[0]
        self.state.interrupted = self._stop.is_set()
        return self.state

    def stop(self) -> None:
        """Interrupt the match: abandon the games in progress and end every engine."""
        self._stop.set()
        for pool in self._pools:
            pool.abort_all()

    def _check_engines(self) -> None:
        """Start one player of each engine before any game: an engine that cannot start at
        all is a configuration error, not a string of lost games."""
        for pool, name in zip(self._pools, self.names):
            player = pool.acquire()
            if player is None:
                raise MatchError(f"engine {name} cannot be used: {pool.last_error}")
            pool.release(player, broken=False)

    def _decided(self) -> bool:
        return self.state.sprt is not None and self.state.sprt.decision is not None

    def _next(self) -> Scheduled | None:
        with self._lock:
            if self._stop.is_set() or self._decided() or not self._pending:
                return None
            self.state.running += 1
            return self._pending.pop()

    def _work(self) -> None:
        try:
            while True:
                scheduled = self._next()
                if scheduled is None:
                    return
                self._play(scheduled)
        except BaseException as exc:  # a bug: stop the match and report it
            self._errors.append(exc)
            self.stop()

    def _play(self, s: Scheduled) -> None:
        try:
            played = play_scheduled(self.config, self.variant, self.names, self._date,
                                    self._pools, s, self._stop)
        finally:
            with self._lock:
                self.state.running -= 1
        if played is not None and not self._stop.is_set():
            self.record(*played)

    def record(self, game: "Game | str", record: GameRecord) -> None:
        """A finished game (or its PDN text) into the file and the standings, once: a game
        played twice (a cluster worker lost after it finished) is recorded the first time."""
        with self._lock:
            if record.scheduled.round in self._recorded:
                return
            self._recorded.add(record.scheduled.round)
            if self.config.pdn is not None:
                from engine.pdn import append_game

                append_game(self.config.pdn, game)
            self.state.records.append(record)
            self._update_sprt()
            if self.on_progress is not None:
                self.on_progress(self.state)

    def _update_sprt(self) -> None:
        cfg = self.config.sprt
        if cfg is None:
            return
        record = self.state.pair_record(0, 1)
        self.state.sprt = sprt(record, cfg.elo0, cfg.elo1, cfg.alpha, cfg.beta)

