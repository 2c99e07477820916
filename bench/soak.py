"""Soak: many games of damka against itself over Hub and DXP, watching for any fault.

    python bench/soak.py                                   # the full soak (about an hour)
    python bench/soak.py --hub-games 40 --dxp-games 20     # a quick check

Three phases, at a fixed time per move, ``--concurrency`` games at once, with the real
``damka hub`` and ``damka dxp`` processes living across the games:

1. **Hub**: the match runner (protocol/match) plays ``damka hub`` against ``damka hub``;
   each side has up to ``--concurrency`` processes, reused from game to game.
2. **DXP, damka following**: one ``damka dxp`` process listens (``--max-sessions``
   ``--concurrency``); the runner connects to it as initiator (protocol/dxp/player.py) and
   plays it against ``damka hub``.
3. **DXP, damka initiating**: ``--concurrency`` ``damka dxp --initiator`` processes connect to
   the same follower through a referee in the middle (bench/dxp_tap.py) that checks every
   message, move and move time.

Counted (target 0 of each): protocol errors (an engine's ``error`` or unreadable line, a
malformed or unexpected DXP message, a CHAT about an error, a game ended early, missing
games), crashes (a process that died or stopped answering), time forfeits (a move over the
time per move plus the runner's grace) and illegal moves. Also reported: the runner's
overhead per move (from an answer to the next request), and the resident memory (RSS) of
every engine process at launch, once warm (after its first games: hash tables allocated and
cleared), and at the end; the target is a growth (end - warm) under 10 MB.

Written to ``--out``: the games as PDN (the runner's, and the DXP programs' own), the DXP
processes' logs, ``report.json`` and ``report.md``. The exit status is 1 when a target is
missed, 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import psutil  # noqa: E402
from tqdm import tqdm  # noqa: E402

from dxp_tap import DxpTap, TapGame  # noqa: E402
from engine import BACKEND, __version__  # noqa: E402
from engine.game import Game, Termination  # noqa: E402
from engine.pdn import PdnError, read_games  # noqa: E402
from protocol.dxp.player import DxpPlayer  # noqa: E402
from protocol.match.engines import HubPlayer, parse_engine  # noqa: E402
from protocol.match.openings import OpeningsError, read_openings  # noqa: E402
from protocol.match.players import EngineCrash, Player  # noqa: E402
from protocol.match.runner import Match, MatchConfig, MatchError, MatchState  # noqa: E402
from protocol.match.timecontrol import DEFAULT_GRACE, TimeControl  # noqa: E402
from engine.variants import Variant  # noqa: E402

OPENINGS = ROOT / "bench" / "openings_international_200.txt"
MB = 1024 * 1024
#: fault kinds, in the order of the table
KINDS = ("protocol", "crash", "time forfeit", "illegal move")
#: what the follower's CHATs say when the rules end a game (any other CHAT is a fault)
RULES_CHATS = ("no legal moves", "draw:", "move limit")
#: a phase with no finished game for this long has hung
HANG_SECONDS = 180.0


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


class Soak:
    """The shared record of a soak: faults, watched processes, the progress bar."""

    def __init__(self, total: int, quiet: bool):
        self.faults: list[Fault] = []
        self.watched: list[Watched] = []
        self.phase = ""
        self.base = 0  # games finished in earlier phases
        self._lock = threading.Lock()
        self.bar = tqdm(total=total, unit="game", file=sys.stderr, disable=quiet,
                        dynamic_ncols=True)

    def fault(self, kind: str, text: str) -> None:
        assert kind in KINDS, kind
        if kind == "time forfeit":  # a loaded machine makes them: say how loaded
            text += f" [load {os.getloadavg()[0]:.2f}]"
        with self._lock:
            self.faults.append(Fault(self.phase, kind, text))
            self.bar.set_postfix_str(f"faults {len(self.faults)}")
            self.bar.write(f"soak: {self.phase}: {kind}: {text}", file=sys.stderr)

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
        return self._guard(super().play, game, request)

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


# -- the phases -----------------------------------------------------------------------------


@dataclass
class PhaseResult:
    name: str
    games: int = 0
    expected: int = 0
    overheads: list[float] = field(default_factory=list)
    move_times: list[float] = field(default_factory=list)
    seconds: float = 0.0


def _record_terminations(soak: Soak, records: list) -> None:
    """The runner's verdicts that the players did not report themselves."""
    for record in records:
        t = record.termination
        where = f"game {record.scheduled.round}"
        if t is Termination.TIME_FORFEIT:
            soak.fault("time forfeit", f"{where}: lost on time (see the PDN)")
        elif t is Termination.ILLEGAL_MOVE:
            soak.fault("illegal move", f"{where}: an illegal move or none (see the PDN)")
        elif t is Termination.RESIGNATION:
            soak.fault("protocol", f"{where}: an engine gave up instead of moving")


def _match(soak: Soak, name: str, specs: list, games: int, args, pdn: Path) -> PhaseResult:
    soak.begin(name)
    openings = read_openings(args.openings, "international")
    config = MatchConfig(engines=specs, control=TimeControl(movetime=args.movetime),
                         openings=openings, variant="international", games_per_pair=games,
                         concurrency=args.concurrency, pdn=pdn, event=f"damka soak: {name}")
    started = time.monotonic()
    seen = 0

    def on_progress(state: MatchState) -> None:  # (under the runner's lock, after each game)
        nonlocal seen
        _record_terminations(soak, state.records[seen:])  # at once: the load then is told
        seen = len(state.records)
        soak.progress(state.done)

    state = Match(config, on_progress=on_progress).run()
    return PhaseResult(name, state.done, games, state.overheads(), [],
                       time.monotonic() - started)


def hub_phase(soak: Soak, args, out: Path) -> PhaseResult:
    def spec(name: str) -> BenchSpec:
        engine = parse_engine(f"cmd='{args.damka} hub' name={name}")
        return BenchSpec(name, lambda v: WatchedHubPlayer(engine, v, soak))
    return _match(soak, "hub", [spec("damka-a"), spec("damka-b")], args.hub_games, args,
                  out / "hub.pdn")


def follower_phase(soak: Soak, args, out: Path, server: DxpProcess, games: int) -> PhaseResult:
    host, port = server.address()
    dxp = parse_engine(f"dxp={host}:{port} name=damka-dxp")
    hub = parse_engine(f"cmd='{args.damka} hub' name=damka-hub")
    specs = [BenchSpec("damka-dxp", lambda v: WatchedDxpPlayer(dxp, v, soak, server),
                       max_instances=args.concurrency, kind="dxp"),
             BenchSpec("damka-hub", lambda v: WatchedHubPlayer(hub, v, soak))]
    return _match(soak, "dxp follower", specs, games, args, out / "dxp_follower.pdn")


def initiator_phase(soak: Soak, args, out: Path, server: DxpProcess, games: int) -> PhaseResult:
    soak.begin("dxp initiator")
    started = time.monotonic()
    initiators: list[DxpProcess] = []
    by_connection: dict[int, DxpProcess] = {}

    def on_game(game: TapGame) -> None:
        for process in (by_connection.get(game.connection), server):
            if process is not None and process.watched is not None:
                process.watched.game_done()
        soak.progress(len(tap.games))

    tap = DxpTap(server.address(), args.movetime, DEFAULT_GRACE, on_game=on_game)
    shares = [games // args.concurrency + (i < games % args.concurrency)
              for i in range(args.concurrency)]
    try:
        for i, share in enumerate(s for s in shares if s):
            process = DxpProcess(
                [args.damka, "dxp", "--initiator", "--connect", f"{tap.address[0]}:{tap.address[1]}",
                 "--games", str(share), "--move-time", f"{args.movetime:g}",
                 "--colour", "white" if i % 2 == 0 else "black",
                 "--pdn", str(out / f"dxp_initiator_{i + 1}.pdn")],
                out / f"dxp_initiator_{i + 1}.log")
            deadline = time.monotonic() + 30
            while tap.accepted < i + 1 and process.alive() and time.monotonic() < deadline:
                time.sleep(0.05)
            # (launch: once it has connected, its Python and engine loaded)
            process.watched = soak.watch(f"damka dxp --initiator #{i + 1}", process.proc.pid,
                                         warmup=2)
            by_connection[i + 1] = process
            initiators.append(process)
        last, seen = time.monotonic(), 0
        while any(p.alive() for p in initiators):
            time.sleep(0.5)
            if len(tap.games) != seen:
                last, seen = time.monotonic(), len(tap.games)
            elif time.monotonic() - last > HANG_SECONDS:
                soak.fault("crash", f"no game finished for {HANG_SECONDS:g} s: the initiators "
                           "are stopped")
                for p in initiators:
                    p.terminate()
        for i, process in enumerate(initiators, start=1):
            code = process.wait(30)
            if code != 0:
                soak.fault("crash", f"initiator #{i} exited with status {code}; see "
                           f"{process.log_path}")
            if process.tracebacks:
                soak.fault("crash", f"initiator #{i} printed {process.tracebacks} traceback(s); "
                           f"see {process.log_path}")
    finally:
        tap.close()
    for fault in tap.faults:
        soak.fault(fault.kind if fault.kind in KINDS else "protocol",
                   f"connection {fault.connection}: {fault.text}")
    if len(tap.games) != games:
        soak.fault("protocol", f"{len(tap.games)} games played of the {games} requested")
    times = [t for g in tap.games for t in g.move_times]
    return PhaseResult("dxp initiator", len(tap.games), games, [], times,
                       time.monotonic() - started)


def check_pdn(soak: Soak, path: Path, games: int) -> None:
    """A PDN file a DXP program wrote holds ``games`` games that read back (legal moves)."""
    try:
        count = sum(1 for _ in read_games(path)) if path.exists() else 0
    except PdnError as exc:
        soak.fault("protocol", f"{path.name} cannot be read back: {exc}")
        return
    if count != games:
        soak.fault("protocol", f"{path.name} holds {count} games, not {games}")


# -- the report ------------------------------------------------------------------------------


def _ms(xs: list[float]) -> dict | None:
    if not xs:
        return None
    ys = sorted(x * 1000 for x in xs)
    return {"moves": len(ys), "mean": statistics.fmean(ys), "median": statistics.median(ys),
            "p99": ys[min(len(ys) - 1, int(0.99 * len(ys)))], "max": ys[-1]}


def build_report(args, soak: Soak, phases: list[PhaseResult], load: tuple, wall: float) -> dict:
    counts = {p.name: {k: 0 for k in KINDS} for p in phases}
    for fault in soak.faults:
        counts.setdefault(fault.phase, {k: 0 for k in KINDS})[fault.kind] += 1
    totals = {k: sum(c[k] for c in counts.values()) for k in KINDS}
    processes = [w.row() for w in soak.watched]
    growths = [w.growth for w in soak.watched if w.growth is not None]
    memory_ok = all(g < args.max_growth * MB for g in growths)
    return {
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "damka": __version__, "backend": BACKEND, "damka_command": args.damka,
        "python": platform.python_version(), "cpus": os.cpu_count(),
        "load_start": load[0], "load_end": load[1], "wall_seconds": round(wall, 1),
        "movetime": args.movetime, "grace": DEFAULT_GRACE, "concurrency": args.concurrency,
        "phases": [{"name": p.name, "games": p.games, "expected": p.expected,
                    "seconds": round(p.seconds, 1), "faults": counts.get(p.name),
                    "runner_overhead_ms": _ms(p.overheads),
                    "move_time_ms": _ms(p.move_times)} for p in phases],
        "faults_total": totals,
        "faults": [{"phase": f.phase, "kind": f.kind, "text": f.text} for f in soak.faults],
        "runner_overhead_ms": _ms([x for p in phases for x in p.overheads]),
        "processes": processes,
        "max_growth_mb": args.max_growth,
        "targets": {"no_faults": not any(totals.values()),
                    "all_games": all(p.games == p.expected for p in phases),
                    "memory": memory_ok},
    }


def _fmt(x: float | None, digits: int = 1) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def markdown(report: dict) -> str:
    """The summary tables (printed at the end and written as report.md)."""
    lines = [f"# damka soak, {report['date']}", "",
             f"`{report['command']}`", "",
             f"damka {report['damka']} ({report['backend']}), {report['movetime']:g} s a move "
             f"(grace {report['grace']:g} s), concurrency {report['concurrency']}, "
             f"{report['cpus']} CPUs, load {report['load_start']:.2f} at the start and "
             f"{report['load_end']:.2f} at the end, {report['wall_seconds']:.0f} s", "",
             "| phase | games | protocol errors | crashes | time forfeits | illegal moves |",
             "|---|---:|---:|---:|---:|---:|"]
    for p in report["phases"]:
        f = p["faults"] or {k: 0 for k in KINDS}
        lines.append(f"| {p['name']} | {p['games']}/{p['expected']} | "
                     + " | ".join(str(f[k]) for k in KINDS) + " |")
    t = report["faults_total"]
    lines += [f"| **total** | {sum(p['games'] for p in report['phases'])} | "
              + " | ".join(f"**{t[k]}**" for k in KINDS) + " |", "",
              "| runner overhead per move (ms) | moves | mean | median | 99% | max |",
              "|---|---:|---:|---:|---:|---:|"]
    for p in report["phases"]:
        o = p["runner_overhead_ms"]
        if o:
            lines.append(f"| {p['name']} | {o['moves']} | {o['mean']:.3f} | {o['median']:.3f} "
                         f"| {o['p99']:.3f} | {o['max']:.3f} |")
    for p in report["phases"]:
        m = p["move_time_ms"]
        if m:
            lines += ["", f"Move times at the DXP referee ({p['name']}): mean {m['mean']:.1f} ms, "
                      f"99% {m['p99']:.1f} ms, max {m['max']:.1f} ms over {m['moves']} moves "
                      "(message to answer, both sides)."]
    lines += ["", "| process | games | RSS at launch (MB) | warm | end | peak | growth (end - warm) |",
              "|---|---:|---:|---:|---:|---:|---:|"]
    for r in report["processes"]:
        lines.append(f"| {r['process']} (pid {r['pid']}) | {r['games']} | {_fmt(r['launch_mb'])} "
                     f"| {_fmt(r['warm_mb'])} | {_fmt(r['end_mb'])} | {_fmt(r['peak_mb'])} "
                     f"| {_fmt(r['growth_mb'])} |")
    targets = report["targets"]
    verdict = "all targets met" if all(targets.values()) else "TARGET MISSED: " + ", ".join(
        {"no_faults": "faults (target 0 of each)", "all_games": "games missing",
         "memory": f"memory growth (target under {report['max_growth_mb']:g} MB "
                   "from warm to end, every process)"}[k]
        for k, ok in targets.items() if not ok)
    unmeasured = sum(1 for r in report["processes"] if r["growth_mb"] is None)
    lines += ["", "Warm: after a process's first games (its hash tables allocated and cleared; "
              "two games, or two for each of the follower's sessions)."
              + (f" {unmeasured} process{'es' if unmeasured != 1 else ''} played too few games "
                 "to measure a growth." if unmeasured else ""), "", f"**{verdict}**"]
    if report["faults"]:
        lines += ["", "Faults:", ""] + [f"- {f['phase']}: {f['kind']}: {f['text']}"
                                        for f in report["faults"][:50]]
    return "\n".join(lines) + "\n"


# -- the command -------------------------------------------------------------------------------


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative: {value}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < value <= 60:
        raise argparse.ArgumentTypeError(f"seconds must be in (0, 60], not {value:g}")
    return value


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    parser = argparse.ArgumentParser(
        description="Soak damka: many games against itself over Hub and DXP, counting "
        "protocol errors, crashes, time forfeits and illegal moves, and watching the engine "
        "processes' memory.")
    parser.add_argument("--hub-games", type=_positive_int, default=1000, metavar="N",
                        help="games over Hub (default 1000)")
    parser.add_argument("--dxp-games", type=_positive_int, default=200, metavar="N",
                        help="games over DXP, half with damka following and half with damka "
                        "initiating (default 200)")
    parser.add_argument("--movetime", type=_seconds, default=0.05, metavar="SECONDS",
                        help="time per move (default 0.05)")
    parser.add_argument("--concurrency", type=_positive_int, default=2, metavar="N",
                        help="games at once (default 2)")
    parser.add_argument("--out", type=Path, default=Path(f"soak-{stamp}"), metavar="DIR",
                        help="where the PDN files, logs and report go (default soak-DATE-TIME; "
                        "must not hold an earlier soak)")
    parser.add_argument("--openings", type=Path, default=OPENINGS, metavar="FILE",
                        help=f"openings for the runner's games (default {OPENINGS.relative_to(ROOT)})")
    parser.add_argument("--damka", default=str(Path(sys.executable).with_name("damka")),
                        metavar="PATH", help="the damka program to soak (default: the one next "
                        "to this Python)")
    parser.add_argument("--max-growth", type=float, default=10.0, metavar="MB",
                        help="memory growth target per process, warm to end (default 10)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    if args.concurrency < 1:
        parser.error("--concurrency must be at least 1")
    if args.hub_games + args.dxp_games == 0:
        parser.error("nothing to play: --hub-games and --dxp-games are both 0")
    if not Path(args.damka).is_file():
        parser.error(f"no damka program at {args.damka} (install damka, or pass --damka PATH)")
    if not args.openings.is_file():
        parser.error(f"no openings file {args.openings}")
    if any((args.out / name).exists()
           for name in ("report.json", "hub.pdn", "dxp_follower.pdn", "dxp_server.pdn")):
        parser.error(f"{args.out} holds an earlier soak: choose another --out")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    follower_games = args.dxp_games // 2
    initiator_games = args.dxp_games - follower_games
    soak = Soak(args.hub_games + args.dxp_games, args.quiet)
    load_start = os.getloadavg()[0]
    started = time.monotonic()
    phases: list[PhaseResult] = []
    try:
        if args.hub_games:
            phases.append(hub_phase(soak, args, out))
        if args.dxp_games:
            server = DxpProcess(
                [args.damka, "dxp", "--port", "0", "--max-sessions", str(args.concurrency),
                 "--move-time", f"{args.movetime:g}", "--pdn", str(out / "dxp_server.pdn")],
                out / "dxp_server.log")
            server.address()
            server.watched = soak.watch("damka dxp (follower)", server.proc.pid,
                                        warmup=2 * args.concurrency)
            try:
                if follower_games:
                    phases.append(follower_phase(soak, args, out, server, follower_games))
                if initiator_games:
                    phases.append(initiator_phase(soak, args, out, server, initiator_games))
                soak.phase = phases[-1].name
                if not server.alive():
                    soak.fault("crash", f"the follower exited (status {server.proc.returncode}); "
                               f"see {server.log_path}")
            finally:
                server.terminate()
            if server.tracebacks:
                soak.fault("crash", f"the follower printed {server.tracebacks} traceback(s); "
                           f"see {server.log_path}")
            # the DXP programs' own records of their games read back and are complete
            check_pdn(soak, out / "dxp_server.pdn",
                      sum(p.games for p in phases if p.name.startswith("dxp")))
            for i in range(args.concurrency):
                path = out / f"dxp_initiator_{i + 1}.pdn"
                share = initiator_games // args.concurrency + (i < initiator_games % args.concurrency)
                if share:
                    check_pdn(soak, path, share)
    except KeyboardInterrupt:
        soak.bar.close()
        print(f"soak: interrupted; the games so far are in {out}/", file=sys.stderr)
        return 130
    except (MatchError, OpeningsError, RuntimeError, OSError) as exc:  # cannot run as asked
        soak.bar.close()
        print(f"soak: error: {exc}", file=sys.stderr)
        return 2
    soak.bar.close()
    report = build_report(args, soak, phases, (load_start, os.getloadavg()[0]),
                          time.monotonic() - started)
    (out / "report.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    text = markdown(report)
    (out / "report.md").write_text(text, encoding="utf-8")
    print(text, end="")
    print(f"games, logs and report in {out}/")
    return 0 if all(report["targets"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
