"""The soak's restart phase: a DXP follower served the way engines often are, one process a
connection, started again by a loop after it exits (issue 30).

``damka dxp`` follows on a fixed port; after every game the loop ends it and starts it again
after a random 0.2-1.5 s, so the runner finds nobody listening for a while and must connect
again. Every ``drop_every``-th game the follower is ended in the middle of the game instead,
after its ``drop_after``-th move: a peer that disconnects mid-game, which loses that game.

Counted as faults: a game not played (the phase must play all of them), a crash result that
is not one of the drops made here (a game scored that was not played: the engine could not
be reached), a drop that was not scored as the follower's crash, and a traceback in any
follower's log. How many attempts the runner had to make again is reported, not a fault.
"""

from __future__ import annotations

import random
import socket
import threading
import time
from pathlib import Path

from engine.game import Game, Termination
from protocol.match.dxp_player import DxpPlayer
from protocol.match.engines import parse_engine
from protocol.match.openings import read_openings
from protocol.match.runner import Match, MatchConfig, MatchState
from protocol.match.timecontrol import TimeControl
from soak_report import PhaseResult
from soak_watch import BenchSpec, DxpProcess, Soak, WatchedHubPlayer

__all__ = ["RestartLoop", "restart_phase"]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class RestartLoop:
    """``damka dxp`` on one port, ended and started again on request (after a delay)."""

    def __init__(self, damka: str, movetime: float, out: Path, seed: int = 1):
        self.damka, self.movetime, self.out = damka, movetime, out
        self.port = _free_port()
        self.random = random.Random(seed)
        self.lives = 0
        self.tracebacks = 0
        self.logs: list[Path] = []
        self._lock = threading.Lock()
        self._process: DxpProcess | None = None
        self._start()

    def _start(self) -> None:
        self.lives += 1
        log = self.out / f"dxp_restarts_{self.lives}.log"
        self.logs.append(log)
        process = DxpProcess(
            [self.damka, "dxp", "--port", str(self.port), "--max-sessions", "1",
             "--move-time", f"{self.movetime:g}", "--pdn", str(self.out / "dxp_restarts_server.pdn")],
            log)
        process.address()
        self._process = process

    def _end(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            process.terminate()
            self.tracebacks += process.tracebacks

    def restart(self, delay: float | None = None) -> None:
        """End the follower now; start it again after ``delay`` (default random 0.2-1.5 s)
        on a thread, as a restart loop would, so the runner meets a closed port meanwhile."""
        with self._lock:
            self._end()
            wait = self.random.uniform(0.2, 1.5) if delay is None else delay

        def later() -> None:
            time.sleep(wait)
            with self._lock:
                if self._process is None and not self._closed:
                    self._start()

        threading.Thread(target=later, daemon=True).start()

    _closed = False

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._end()


class RestartedDxpPlayer(DxpPlayer):
    """The runner's connection to the restarted follower: it has the loop restart the
    follower after each game, or end it mid-game in the games chosen for a drop."""

    def __init__(self, spec, variant, loop: RestartLoop, drop_every: int, drop_after: int,
                 drops: list[int]):
        super().__init__(spec, variant)
        self.loop, self.drop_every, self.drop_after, self.drops = loop, drop_every, drop_after, drops
        self._moves = 0
        self._round = 0

    def new_game(self, game: Game, white: bool, control: TimeControl) -> None:
        super().new_game(game, white, control)
        self._moves = 0
        self._round = int(game.tags.get("Round", "0"))

    def play(self, game: Game, request):
        if (self.drop_every and self._round % self.drop_every == 0
                and self._moves == self.drop_after):
            self.drops.append(self._round)
            self.loop.restart()  # the follower goes away while it is to move
        answer = super().play(game, request)
        self._moves += 1
        return answer

    def end_game(self, game: Game) -> None:
        try:
            super().end_game(game)
        finally:
            self.loop.restart()  # it exits when its game (its connection) is over


def restart_phase(soak: Soak, args, out: Path, games: int) -> PhaseResult:
    """``games`` games of the restarted follower against ``damka hub``, one at a time."""
    soak.begin("dxp restarts")
    started = time.monotonic()
    loop = RestartLoop(args.damka, args.movetime, out)
    drops: list[int] = []
    dxp = parse_engine(f"dxp=127.0.0.1:{loop.port} name=damka-dxp-restarted")
    hub = parse_engine(f"cmd='{args.damka} hub' name=damka-hub")
    specs = [BenchSpec("damka-dxp-restarted",
                       lambda v: RestartedDxpPlayer(dxp, v, loop, args.drop_every, 5, drops),
                       max_instances=1, kind="dxp"),
             BenchSpec("damka-hub", lambda v: WatchedHubPlayer(hub, v, soak))]
    config = MatchConfig(engines=specs, control=TimeControl(movetime=args.movetime),
                         openings=read_openings(args.openings, "international"),
                         variant="international", games_per_pair=games, concurrency=1,
                         pdn=out / "dxp_restarts.pdn", event="damka soak: dxp restarts")
    state: MatchState | None = None
    try:
        match = Match(config, on_progress=lambda s: soak.progress(s.done))
        state = match.run()
    finally:
        loop.close()
        state = state or match.state
    dropped = set(drops)
    for record in state.records:
        where = f"dxp restarts, game {record.scheduled.round}"
        crashed = record.termination is Termination.CRASH
        follower_lost = record.points(0) == 0.0
        if crashed and record.scheduled.round not in dropped:
            soak.fault("crash", f"{where}: scored as an engine crash, but no drop was made")
        elif record.scheduled.round in dropped and not (crashed and follower_lost):
            soak.fault("protocol", f"{where}: dropped mid-game but not scored as its crash")
    if state.done != games:
        soak.fault("protocol", f"dxp restarts: {state.done} of {games} games played")
    if loop.tracebacks:
        soak.fault("crash", f"the restarted followers printed {loop.tracebacks} traceback(s); "
                   f"see {out}/dxp_restarts_*.log")
    soak.note(f"dxp restarts: {loop.lives} follower processes, {len(dropped)} dropped "
              f"mid-game, {len(state.not_started())} attempts not started and made again")
    return PhaseResult("dxp restarts", state.done, games, state.overheads(), [],
                       time.monotonic() - started)
