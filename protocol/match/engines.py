"""Engines for ``damka match``: the ``--engine`` syntax and the Hub and in-process players.

An engine is written as words in shell quoting (``shlex``), ``key=value`` or a bare kind::

    damka [level=hard] [hash=64] [threads=1] [seed=0] [name=NAME]
                                                         damka itself, in-process
    cmd='dame hub' [dir=PATH] [param.NAME=VALUE ...] [name=NAME]
                                                         a Hub engine: its command line (split
                                                         again with shell quoting) and working
                                                         directory, Hub parameters to set
    dxp=HOST:PORT [name=NAME]                            a DXP follower listening there

The name defaults to ``damka`` (in-process), the command's program name (Hub) or ``dxp``; it
is what the PDN ``White``/``Black`` tags and the table show, so it must be unique (a second
engine of the same name is numbered: ``damka-2``).
"""

from __future__ import annotations

import shlex
import time
from dataclasses import dataclass, field
from pathlib import Path

from engine.game import Game
from engine.hashsize import DEFAULT_HASH_MB
from engine.limits import Limits
from protocol.match.players import Answer, EngineCrash, EngineTimeout, Player
from protocol.match.timecontrol import MoveRequest, TimeControl
from engine.variants import Variant

from protocol.hub.client import HubClient, HubClientError, HubTimeoutError, State

__all__ = ["EngineSpec", "parse_engine", "HubPlayer", "DamkaPlayer", "EngineSpecError"]


class EngineSpecError(ValueError):
    """An ``--engine`` text that cannot be read; the message quotes it."""


@dataclass(frozen=True)
class EngineSpec:
    """One engine of a match: ``kind`` is "damka", "hub" or "dxp"."""

    kind: str
    name: str
    command: tuple[str, ...] = ()
    cwd: str | None = None
    params: tuple[tuple[str, str], ...] = ()
    address: tuple[str, int] | None = None
    level: str | None = None
    hash_mb: int = DEFAULT_HASH_MB
    threads: int = 1  #: search threads (damka: Lazy SMP over one hash table)
    seed: int = 0
    evaluation: str | None = None  #: "classic" or "learned"; None: the engine's default
    weights: str | None = None  #: a weights file for the learned evaluation
    egtb: str | None = None  #: a directory of endgame databases
    text: str = field(default="", compare=False)

    @property
    def max_instances(self) -> int | None:
        """A DXP follower is one connection, so one game at a time; the others start more."""
        return 1 if self.kind == "dxp" else None

    def create(self, variant: Variant) -> Player:
        if self.kind == "damka":
            return DamkaPlayer(self, variant)
        if self.kind == "hub":
            return HubPlayer(self, variant)
        from protocol.match.dxp_player import DxpPlayer

        return DxpPlayer(self, variant)

    def renamed(self, name: str) -> "EngineSpec":
        from dataclasses import replace

        return replace(self, name=name)


def _int(text: str, key: str, spec: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise EngineSpecError(f"{key} must be an integer in {spec!r}, not {text!r}") from None


def parse_engine(text: str) -> EngineSpec:
    """An EngineSpec from the ``--engine`` syntax above; EngineSpecError if it is wrong."""
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise EngineSpecError(f"cannot split {text!r}: {exc}") from None
    if not words:
        raise EngineSpecError("an empty engine")
    kinds: list[str] = []
    values: dict[str, str] = {}
    params: list[tuple[str, str]] = []
    for word in words:
        key, eq, value = word.partition("=")
        if not eq:
            if word != "damka":
                raise EngineSpecError(f"{word!r} in {text!r}: expected damka, cmd=..., dxp=... "
                                      "or key=value")
            kinds.append("damka")
        elif key.startswith("param."):
            params.append((key[len("param."):], value))
        elif key in ("cmd", "dxp"):
            kinds.append("hub" if key == "cmd" else "dxp")
            values[key] = value
        elif key in ("name", "dir", "level", "hash", "threads", "seed", "eval", "weights",
                     "egtb"):
            values[key] = value
        else:
            raise EngineSpecError(f"unknown key {key!r} in {text!r} (known: name, cmd, dir, "
                                  "param.NAME, dxp, level, hash, threads, seed, eval, weights, "
                                  "egtb)")
    if len(kinds) != 1:
        raise EngineSpecError(f"{text!r} must name exactly one of damka, cmd=..., dxp=...")
    if "name" in values and not values["name"].strip():
        raise EngineSpecError(f"an empty name in {text!r} (name=NAME names the engine in the "
                              "table and the PDN)")
    kind = kinds[0]
    allowed = {"damka": {"name", "level", "hash", "threads", "seed", "eval", "weights", "egtb"},
               "hub": {"name", "cmd", "dir"},
               "dxp": {"name", "dxp"}}[kind]
    extra = set(values) - allowed
    if extra or (params and kind != "hub"):
        wrong = ", ".join(sorted(extra) + [f"param.{k}" for k, _ in params if kind != "hub"])
        raise EngineSpecError(f"{wrong} do not apply to a {kind} engine in {text!r}")
    if kind == "damka":
        from engine.levels import get_level

        level = values.get("level")
        if level is not None:
            try:
                get_level(level)
            except (KeyError, ValueError) as exc:
                raise EngineSpecError(f"{exc} in {text!r}") from None
        from engine.hashsize import check_hash

        hash_mb = _int(values.get("hash", str(DEFAULT_HASH_MB)), "hash", text)
        try:
            check_hash(hash_mb)
        except ValueError as exc:
            raise EngineSpecError(f"{exc} in {text!r}") from None
        from engine.threads import check_threads

        threads = _int(values.get("threads", "1"), "threads", text)
        try:
            check_threads(threads)
        except ValueError as exc:
            raise EngineSpecError(f"{exc} in {text!r}") from None
        from engine.evaluation import EVALUATIONS

        evaluation = values.get("eval")
        if evaluation is not None and evaluation not in EVALUATIONS:
            raise EngineSpecError(f"eval must be one of {', '.join(EVALUATIONS)} in {text!r}")
        weights = values.get("weights")
        if weights is not None and not Path(weights).is_file():
            raise EngineSpecError(f"no weights file {weights!r} in {text!r}")
        if weights is not None and evaluation == "classic":
            raise EngineSpecError(f"weights= needs the learned evaluation in {text!r}")
        egtb = values.get("egtb")
        if egtb is not None and not Path(egtb).expanduser().is_dir():
            raise EngineSpecError(f"no endgame database directory {egtb!r} in {text!r}")
        return EngineSpec("damka", values.get("name", "damka"), level=level, hash_mb=hash_mb,
                          threads=threads, seed=_int(values.get("seed", "0"), "seed", text),
                          evaluation=evaluation, weights=weights, egtb=egtb, text=text)
    if kind == "hub":
        try:
            command = tuple(shlex.split(values["cmd"]))
        except ValueError as exc:
            raise EngineSpecError(f"cannot split cmd in {text!r}: {exc}") from None
        if not command:
            raise EngineSpecError(f"an empty cmd in {text!r}")
        name = values.get("name") or Path(command[0]).stem
        return EngineSpec("hub", name, command=command, cwd=values.get("dir"),
                          params=tuple(params), text=text)
    from protocol.dxp.listener import parse_address

    try:
        address = parse_address(values["dxp"])
    except ValueError as exc:
        raise EngineSpecError(f"{exc} in {text!r}") from None
    return EngineSpec("dxp", values.get("name", "dxp"), address=address, text=text)


# -- Hub engines ---------------------------------------------------------------------------

#: seconds a fresh Hub engine may take over its first (uncharged) search
WARM_UP_TIMEOUT = 60.0


class HubPlayer(Player):
    """A Hub engine process (HubClient), reused from game to game."""

    def __init__(self, spec: EngineSpec, variant: Variant):
        self.spec = spec
        self.name = spec.name
        self.client = HubClient(list(spec.command), cwd=spec.cwd, options=dict(spec.params),
                                variant=variant, name=spec.name)

    def start(self) -> None:
        """Start the process, then one uncharged depth-1 search of the start position: an
        engine that answers ``ready`` before it has loaded its search (damka hub does, to
        answer fast) would otherwise pay for its loading on the first move of a game."""
        try:
            self.client.start()
            self.client.name = self.name  # errors and messages use the match's name
            self.client.go(None, limits=Limits(depth=1), timeout=WARM_UP_TIMEOUT)
        except HubClientError as exc:
            raise EngineCrash(str(exc)) from None

    def new_game(self, game: Game, white: bool, control: TimeControl) -> None:
        """``new-game``, then ``ping`` and its ``pong``: the engine clears its tables before
        the clock starts (damka's first clear of a 64 MB table takes 0.1-0.2 s)."""
        try:
            self.client.new_game()
            self.client.ping(timeout=WARM_UP_TIMEOUT)
        except HubClientError as exc:
            raise EngineCrash(str(exc)) from None

    def play(self, game: Game, request: MoveRequest) -> Answer:
        try:
            result = self.client.go(game.board, limits=request.limits,
                                    timeout=request.allowance)
            finished = time.monotonic()
        except HubTimeoutError as exc:
            late = exc.late_result
            usable = self.client.state is State.READY
            if late is None or late.elapsed > (request.allowance or 0.0):
                after = f" (it answered after {late.elapsed:.3f} s)" if late is not None else ""
                raise EngineTimeout(f"no answer within {request.allowance:.3f} s{after}",
                                    usable=usable) from None
            # the answer had arrived in time (its arrival is stamped by the reader thread);
            # only this thread was late to see it, on a busy machine: it counts as in time
            result = late
            finished = time.monotonic()
        except HubClientError as exc:
            raise EngineCrash(str(exc)) from None
        score = depth = None
        for info in reversed(result.infos):
            if info.score is not None:
                score, depth = info.score, info.depth
                break
        return Answer(result.move, finished - result.elapsed, finished, score, depth)

    def abort(self) -> None:
        self.client.kill()

    def close(self) -> None:
        self.client.quit()


# -- damka in-process ------------------------------------------------------------------------


class DamkaPlayer(Player):
    """damka's search facade in this process: no transport, one Engine (hash table) kept
    over the games; the search runs without the GIL below its root."""

    def __init__(self, spec: EngineSpec, variant: Variant):
        self.spec = spec
        self.name = spec.name
        self.variant = variant
        self.engine = None

    def _tables(self):
        """The spec's databases for this rule set, shared by the process's engines (None
        when the directory has none for it)."""
        if self.spec.egtb is None:
            return None
        from engine.egtb import shared_tablebase

        return shared_tablebase(self.variant, self.spec.egtb)

    def start(self) -> None:
        from engine.search import Engine

        try:
            self.engine = Engine(self.variant, hash_mb=self.spec.hash_mb, level=self.spec.level,
                                 threads=self.spec.threads, seed=self.spec.seed, evaluation=self.spec.evaluation,
                                 weights=self.spec.weights, egtb=self._tables())
        except (MemoryError, ValueError, OSError) as exc:
            raise EngineCrash(f"cannot create the engine: {exc}") from None
        # ready before the clock: the code, the evaluation's tables and the databases in
        # memory (a tiny search) and the table's pages in; a first search paying for them, or
        # racing the page threads of the other engines this process starts, lost the first
        # game of a 0.1 s-a-move match on time (0.211 s for its first move)
        try:
            self.engine.warm()
        except Exception as exc:  # a search would fail the same way: say so now
            raise EngineCrash(f"the engine failed its warm-up search: {exc!r}") from None
        self.engine.wait_for_table()

    def new_game(self, game: Game, white: bool, control: TimeControl) -> None:
        assert self.engine is not None
        self.engine.clear()

    def play(self, game: Game, request: MoveRequest) -> Answer:
        assert self.engine is not None
        started = time.monotonic()
        try:
            result = self.engine.search(game.board, request.limits)
        except Exception as exc:  # the engine itself failed: this game is lost
            raise EngineCrash(f"search failed: {exc!r}") from None
        finished = time.monotonic()
        return Answer(result.best_move, started, finished, result.score / 100, result.depth)

    def abort(self) -> None:
        if self.engine is not None:
            self.engine.stop()
