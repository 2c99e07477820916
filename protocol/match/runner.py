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
import statistics
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from engine.game import Game
from protocol.match.defaults import DEFAULT_CONCURRENCY
from protocol.match.games import (DEFAULT_HANG_TIMEOUT, DEFAULT_MAX_MOVES, EnginePool,
                                  GameRecord, MatchConfig, NotPlayed, Scheduled, SprtSettings,
                                  new_game, play_game, play_scheduled, schedule)
from protocol.match.players import PlayerSpec
from protocol.match.stats import Record, SprtResult, sprt

__all__ = [
    "DEFAULT_MAX_MOVES",
    "DEFAULT_HANG_TIMEOUT",
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


class MatchError(ValueError):
    """A match that cannot be run as asked (bad engines, a PDN file of another match, ...)."""


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
    #: games given up because an engine could not be reached (the match stopped there)
    not_played: list[NotPlayed] = field(default_factory=list)
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

    def not_started(self) -> list[str]:
        """Why the attempts that did not start did not, over the games played now and those
        given up (each of those games was tried again or given up: never a result)."""
        reasons = [x for r in self.records if not r.resumed for x in r.not_started]
        return reasons + [x for n in self.not_played for x in n.reasons]

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
            config.concurrency = DEFAULT_CONCURRENCY
        if config.concurrency is not None and config.concurrency < 1:
            raise MatchError(f"concurrency must be at least 1, not {config.concurrency}")
        if not config.grace >= 0:
            raise MatchError(f"the grace must not be negative, not {config.grace}")
        if config.sprt is not None and len(config.engines) != 2:
            raise MatchError("an SPRT needs exactly two engines")
        if config.resume and config.pdn is None:
            raise MatchError("--resume needs the PDN file of the match")
        if config.cluster is not None and any(
                getattr(spec, "kind", None) == "dxp" for spec in config.engines):
            raise MatchError("a DXP engine is one connection to one follower: it cannot play "
                             "on a cluster's many machines (leave out --cluster)")
        if any(getattr(spec, "kind", None) == "dxp" for spec in config.engines):
            from protocol.match.dxp_player import dxp_minutes
            try:
                dxp_minutes(config.control)
            except ValueError as exc:
                raise MatchError(str(exc)) from None
        self.config = config
        self.variant = config.variant  #: the record MatchConfig holds (no name lookup)
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
        self._halt = threading.Event()  #: no new game: an engine could not be reached
        self._pending: list[Scheduled] = []
        self._pools: list[EnginePool] = []
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
                    given = tags.get("Round")
                    which = "no Round tag" if given is None else f"Round {given!r}"
                    raise MatchError(f"{path}: game {number} ({which}) is not a game of this "
                                     "match (a file of other games?)") from None
                expected = (self.names[s.white], self.names[s.black], str(s.opening + 1))
                found = (tags.get("White"), tags.get("Black"), tags.get("Opening"))
                if found != expected:
                    raise MatchError(
                        f"{path}: game {number} (Round {s.round}) is {found[0]} - {found[1]}, "
                        f"opening {found[2]}; this match plays {expected[0]} - {expected[1]}, "
                        f"opening {expected[2]} there (other engines or openings?)")
                self._check_settings(path, number, s, game)
                outcome = game.outcome()
                if outcome is None:
                    raise MatchError(f"{path}: game {number} (Round {s.round}) has no result")
                done[s.round] = GameRecord(s, outcome.winner, outcome.termination, game.ply,
                                           resumed=True)
        except PdnError as exc:
            raise MatchError(f"cannot resume from {path}: {exc}") from None
        return list(done.values())

    def _check_settings(self, path, number: int, s: Scheduled, game: Game) -> None:
        """A game read back was played under this match's rules, at its time control and by
        engines of the same settings (files written before the engine tags are checked on
        the rules and the clock only)."""
        where = f"{path}: game {number} (Round {s.round})"
        tags = game.tags
        if game.variant != self.variant:
            raise MatchError(f"{where} was played under the rules of {game.variant}; this "
                             f"match plays {self.variant} (another --variant?)")
        control = str(self.config.control)
        if tags.get("TimeControl", control) != control:
            raise MatchError(f"{where} was played at {tags['TimeControl']}; this match plays "
                             f"{control} (another time control?)")
        for colour, index in (("White", s.white), ("Black", s.black)):
            spec = self.config.engines[index]
            if getattr(spec, "kind", None) == "dxp":
                continue  # its settings are the follower's own; its address may change
            text = getattr(spec, "text", "")
            was = tags.get(f"{colour}Engine")
            if text and was is not None and was != text:
                raise MatchError(f"{where} was played by {self.names[index]} as {was!r}; "
                                 f"this match's {self.names[index]} is {text!r} (other "
                                 "engine settings?)")

    def _check_pdn_writable(self) -> None:
        """A PDN file that cannot be written is an error before any game is played."""
        from engine.pdn import check_appendable

        if self.config.pdn is None:
            return
        try:
            check_appendable(self.config.pdn)
        except ValueError as exc:
            raise MatchError(str(exc)) from None

    # -- running -----------------------------------------------------------------------------

    def run(self) -> MatchState:
        """Play the match (what is left of it) and return the final standings."""
        self._check_pdn_writable()
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
            if self.state.not_played:
                raise MatchError(self._unreachable())
            return self.state
        limit = self.config.concurrency or DEFAULT_CONCURRENCY
        self._pools = [EnginePool(spec, self.variant, min(limit, spec.max_instances or limit))
                       for spec in self.config.engines]
        try:
            if self._pending and not self._decided():
                games_at_once = min(limit, len(self._pending))
                self._start_engines(games_at_once)
                workers = [threading.Thread(target=self._work, name=f"match-game-{i}",
                                            daemon=True)
                           for i in range(games_at_once)]
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
        self.state.interrupted = self._stop.is_set()
        if self._errors:
            raise self._errors[0]
        if self.state.not_played:
            raise MatchError(self._unreachable())
        return self.state

    def _unreachable(self) -> str:
        """The error of a match stopped because an engine could not be reached."""
        given_up = self.state.not_played[0]
        kept = (f"the {self.state.done} games played are in {self.config.pdn}; --resume goes "
                "on from them" if self.config.pdn is not None else
                f"{self.state.done} games were played")
        return f"{given_up.message()}; the match stopped: {kept}"

    def stop(self) -> None:
        """Interrupt the match: abandon the games in progress and end every engine."""
        self._stop.set()
        for pool in self._pools:
            pool.abort_all()

    def _start_engines(self, games_at_once: int) -> None:
        """Start the players of the first games before any game: an engine that cannot start
        at all is a configuration error, not a string of lost games; and an engine starting
        up (imports, tables, warm-up) takes a core from the games already on the clock, which
        at a fraction of a second a move can lose one of them on time."""
        for pool, name in zip(self._pools, self.names):
            started = []
            try:
                for _ in range(min(pool.limit, games_at_once)):
                    player = pool.acquire()
                    if player is None:
                        raise MatchError(f"engine {name} cannot be used: {pool.last_error}")
                    started.append(player)
            finally:
                for player in started:
                    pool.release(player, broken=False)

    def _decided(self) -> bool:
        return self.state.sprt is not None and self.state.sprt.decision is not None

    def _no_more_games(self) -> bool:
        """The SPRT has decided or an engine could not be reached: no new game starts."""
        return self._decided() or self._halt.is_set()

    def give_up(self, not_played: NotPlayed) -> None:
        """A game whose engine could not be reached: the match ends once the games in
        progress are done (a cluster's coordinator calls this too)."""
        with self._lock:
            self.state.not_played.append(not_played)
            self._halt.set()

    def _next(self) -> Scheduled | None:
        with self._lock:
            if self._stop.is_set() or self._no_more_games() or not self._pending:
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
        if isinstance(played, NotPlayed):
            self.give_up(played)
        elif played is not None and not self._stop.is_set():
            self.record(*played)

    def record(self, game: "Game | str", record: GameRecord) -> None:
        """A finished game (or its PDN text) into the file and the standings."""
        self.record_all([(game, record)])

    def record_all(self, finished: Sequence[tuple["Game | str", GameRecord]]) -> None:
        """Finished games into the file in one write (one fsync: a cluster's coordinator
        takes in hundreds a second) and into the standings, each game once: one played twice
        (a cluster worker lost after it finished) is recorded the first time."""
        with self._lock:
            new = []
            for game, record in finished:
                if record.scheduled.round not in self._recorded:
                    self._recorded.add(record.scheduled.round)
                    new.append((game, record))
            if not new:
                return
            if self.config.pdn is not None:
                from engine.pdn import append_game, write_game

                try:
                    append_game(self.config.pdn, "\n".join(
                        game if isinstance(game, str) else write_game(game) for game, _ in new))
                except OSError as exc:  # a full disk, a file taken away: end the match
                    raise MatchError(
                        f"cannot write to {self.config.pdn}: {exc.strerror or exc}; the games "
                        "before are in it, and --resume goes on from them") from None
            for _, record in new:
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

