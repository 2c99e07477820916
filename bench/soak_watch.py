"""What the soak (bench/soak.py) watches: the engine processes' memory, the faults, and
players of the match runner that report to it.

A Hub player counts an ``error`` line or a line its client cannot read as a protocol error; a
DXP player, a CHAT that does not explain an end by the rules. Any player's EngineCrash is a
crash when its process (or the follower) is gone, else a protocol error.
"""

from __future__ import annotations

import os
import collections
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import psutil
from tqdm import tqdm

from engine.game import Game
from engine.variants import Variant
from protocol.match.dxp_player import DxpPlayer
from protocol.match.engines import HubPlayer
from protocol.match.players import EngineCrash, EngineTimeout, Player
from protocol.match.timecontrol import TimeControl

MB = 1024 * 1024
#: fault kinds, in the order of the table
KINDS = ("protocol", "crash", "time forfeit", "illegal move")
#: what the follower's CHATs say when the rules end a game (any other CHAT is a fault)
RULES_CHATS = ("no legal moves", "draw:", "move limit")


# -- what is watched ----------------------------------------------------------------------


def rss(pid: int) -> int | None:
    """Resident memory of a process in bytes (None once it has gone)."""
    try:
        return psutil.Process(pid).memory_info().rss
    except psutil.Error:
        return None


@dataclass
class Watched:
    """One engine process: its resident memory at launch, once warm (after ``warmup``
    games: the hash tables are allocated and have been cleared, so every page is in), at the
    end (after its last game) and at its peak."""

    label: str
    pid: int
    warmup: int
    games: int = 0
    launch: int | None = None
    warm: int | None = None
    end: int | None = None
    peak: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        self.launch = self.sample()

    def sample(self) -> int | None:
        value = rss(self.pid)
        if value is not None:
            self.end = value
            self.peak = max(self.peak, value)
        return value

    def game_done(self) -> None:
        with self._lock:
            self.games += 1
            value = self.sample()
            if self.games == self.warmup:
                self.warm = value

    @property
    def growth(self) -> int | None:
        """end - warm in bytes; None if the process never got warm."""
        if self.warm is None or self.end is None:
            return None
        return self.end - self.warm

    def row(self) -> dict:
        def mb(x: int | None) -> float | None:
            return None if x is None else round(x / MB, 1)
        return {"process": self.label, "pid": self.pid, "games": self.games,
                "launch_mb": mb(self.launch), "warm_mb": mb(self.warm), "end_mb": mb(self.end),
                "peak_mb": mb(self.peak), "growth_mb": mb(self.growth)}


@dataclass(frozen=True)
class Fault:
    phase: str
    kind: str  #: one of KINDS
    text: str


class Lateness:
    """How late this process's own short sleeps wake up: when the machine is too busy to
    run a thread on time, an engine's answer is late too, through no fault of its own. A
    thread sleeps PERIOD seconds at a time and keeps (when, how late) for each wake-up."""

    PERIOD = 0.02

    def __init__(self) -> None:
        self.samples: collections.deque[tuple[float, float]] = collections.deque(maxlen=500_000)
        self._stop = threading.Event()
        threading.Thread(target=self._run, name="soak-lateness", daemon=True).start()

    def _run(self) -> None:
        while not self._stop.is_set():
            before = time.monotonic()
            time.sleep(self.PERIOD)
            after = time.monotonic()
            self.samples.append((after, after - before - self.PERIOD))

    def recent(self, seconds: float = 2.0) -> float:
        """The worst lateness of the last ``seconds``, in seconds."""
        now = time.monotonic()
        worst = 0.0
        for at, late in reversed(self.samples):
            if at < now - seconds:
                break
            worst = max(worst, late)
        return worst

    def summary(self) -> dict | None:
        """Lateness in ms over the run: median, 99th percentile, max, and the share of
        wake-ups over 50 ms late."""
        xs = sorted(late * 1000 for _, late in list(self.samples))
        if not xs:
            return None
        return {"samples": len(xs), "median": xs[len(xs) // 2],
                "p99": xs[min(len(xs) - 1, int(0.99 * len(xs)))], "max": xs[-1],
                "over_50ms": sum(x > 50 for x in xs) / len(xs)}

    def stop(self) -> None:
        self._stop.set()


class Soak:
    """The shared record of a soak: faults, watched processes, the progress bar, and how
    late the machine lets threads run."""

    def __init__(self, total: int, quiet: bool):
        self.lateness = Lateness()
        self.faults: list[Fault] = []
        self.notes: list[str] = []  #: what a phase reports beside its faults
        self.watched: list[Watched] = []
        self.phase = ""
        self.base = 0  # games finished in earlier phases
        self._lock = threading.Lock()
        self.bar = tqdm(total=total, unit="game", file=sys.stderr, disable=quiet,
                        dynamic_ncols=True)

    def fault(self, kind: str, text: str) -> None:
        assert kind in KINDS, kind
        if kind == "time forfeit":  # a loaded machine makes them: say how loaded
            text += (f" [load {os.getloadavg()[0]:.2f}; this process's threads woke up to "
                     f"{1000 * self.lateness.recent():.0f} ms late in the last 2 s]")
        with self._lock:
            self.faults.append(Fault(self.phase, kind, text))
            self.bar.set_postfix_str(f"faults {len(self.faults)}")
            self.bar.write(f"soak: {self.phase}: {kind}: {text}", file=sys.stderr)

    def note(self, text: str) -> None:
        with self._lock:
            self.notes.append(text)

    def watch(self, label: str, pid: int, warmup: int) -> Watched:
        watched = Watched(label, pid, warmup)
        with self._lock:
            self.watched.append(watched)
        return watched

    def begin(self, phase: str) -> None:
        with self._lock:
            self.base = self.bar.n
            self.phase = phase
            self.bar.set_description(phase)

    def progress(self, done_in_phase: int) -> None:
        with self._lock:
            self.bar.update(self.base + done_in_phase - self.bar.n)


# -- players that report to the soak --------------------------------------------------------


class _Guarded:
    """Mixin: every EngineCrash an engine raises is recorded as a crash (its process or
    connection is gone) or a protocol error (it is alive but broke the dialogue)."""

    soak: Soak
    name: str

    def _alive(self) -> bool:
        raise NotImplementedError

    def _guard(self, call: Callable, *args):
        try:
            return call(*args)
        except EngineCrash as exc:
            self.soak.fault("protocol" if self._alive() else "crash", f"{self.name}: {exc}")
            raise


class WatchedHubPlayer(_Guarded, HubPlayer):
    """A ``damka hub`` process of the runner, its memory watched and its output checked:
    an ``error`` line or a line the client cannot read is a protocol error."""

    def __init__(self, spec, variant: Variant, soak: Soak):
        super().__init__(spec, variant)
        self.soak = soak
        self.watched: Watched | None = None
        self._errors = 0

    def _alive(self) -> bool:
        return self.client.alive()

    def start(self) -> None:
        self._guard(super().start)
        process = self.client.process
        assert process is not None
        self.watched = self.soak.watch(f"{self.name} (damka hub)", process.pid, warmup=2)

    def new_game(self, game: Game, white: bool, control: TimeControl) -> None:
        self._guard(super().new_game, game, white, control)

    def play(self, game: Game, request):
        try:
            return self._guard(super().play, game, request)
        except EngineTimeout as exc:
            if not exc.usable and self.watched is not None:  # its last game: it is ended
                self.watched.game_done()
            raise
        finally:
            self._check_output()

    def end_game(self, game: Game) -> None:
        self._guard(super().end_game, game)
        if self.watched is not None:
            self.watched.game_done()

    def _check_output(self) -> None:
        for line in self.client.errors[self._errors:]:
            self.soak.fault("protocol", f"{self.name} said error: {line}")
        self._errors = len(self.client.errors)
        extra = self.client.extra  # (a bounded deque: taken out as read)
        while extra:
            self.soak.fault("protocol", f"{self.name} printed an unexpected line: "
                            f"{extra.popleft()!r}")


class WatchedDxpPlayer(_Guarded, DxpPlayer):
    """The runner's connection to the ``damka dxp`` follower; a CHAT that does not explain
    an end by the rules is a protocol error."""

    def __init__(self, spec, variant: Variant, soak: Soak, server: "DxpProcess"):
        super().__init__(spec, variant)
        self.soak = soak
        self.server = server
        self._chats = 0

    def _alive(self) -> bool:
        return self.server.alive()

    def start(self) -> None:
        self._guard(super().start)

    def new_game(self, game: Game, white: bool, control: TimeControl) -> None:
        self._guard(super().new_game, game, white, control)

    def play(self, game: Game, request):
        try:
            return self._guard(super().play, game, request)
        except EngineTimeout:  # the game is over (the runner drops this connection)
            if self.server.watched is not None:
                self.server.watched.game_done()
            raise

    def end_game(self, game: Game) -> None:
        try:
            self._guard(super().end_game, game)
        finally:
            for text in self.chats[self._chats:]:
                if not text.lower().startswith(RULES_CHATS):
                    self.soak.fault("protocol", f"the follower said: {text}")
            self._chats = len(self.chats)
        if self.server.watched is not None:
            self.server.watched.game_done()


@dataclass
class BenchSpec:
    """A PlayerSpec for the runner that makes the watched players above."""

    name: str
    make: Callable[[Variant], Player]
    max_instances: int | None = None
    kind: str = "hub"

    def create(self, variant: Variant) -> Player:
        return self.make(variant)


# -- the DXP processes --------------------------------------------------------------------


class DxpProcess:
    """A ``damka dxp`` process; its output goes to a log file. A listening one says its
    address in its first line, which ``address`` waits for."""

    def __init__(self, command: list[str], log: Path):
        self.command = command
        self.log_path = log
        self.watched: Watched | None = None
        self.tracebacks = 0
        self._address: tuple[str, int] | None = None
        self._listening = threading.Event()
        self._log = open(log, "w", encoding="utf-8")
        self.proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, text=True, encoding="utf-8",
                                     errors="replace")
        self._reader = threading.Thread(target=self._read, daemon=True,
                                        name=f"soak-log-{self.proc.pid}")
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._log.write(line)
            if "Traceback (most recent call last)" in line:
                self.tracebacks += 1
            if self._address is None and "listening on " in line:
                host, _, port = line.rsplit("listening on ", 1)[1].strip().rpartition(":")
                self._address = (host, int(port))
                self._listening.set()
        self._log.flush()
        self._listening.set()

    def address(self, timeout: float = 30.0) -> tuple[str, int]:
        self._listening.wait(timeout)
        if self._address is None:
            raise RuntimeError(f"{' '.join(self.command)} did not start listening; "
                               f"see {self.log_path}")
        return self._address

    def alive(self) -> bool:
        return self.proc.poll() is None

    def wait(self, timeout: float | None = None) -> int:
        code = self.proc.wait(timeout)
        self._reader.join(timeout=5)
        self._log.close()
        return code

    def terminate(self) -> int:
        if self.alive():
            self.proc.terminate()
        try:
            return self.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.wait(10)
