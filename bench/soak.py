"""Soak: many games of damka against itself over Hub and DXP, watching for any fault.

    python bench/soak.py                                   # the full soak (about an hour)
    python bench/soak.py --hub-games 40 --dxp-games 20     # a quick check

Three phases, at a fixed time per move, ``--concurrency`` games at once, with the real
``damka hub`` and ``damka dxp`` processes living across the games:

1. **Hub**: the match runner (protocol/match) plays ``damka hub`` against ``damka hub``;
   each side has up to ``--concurrency`` processes, reused from game to game.
2. **DXP, damka following**: one ``damka dxp`` process listens (``--max-sessions``
   ``--concurrency``); the runner connects to it as initiator (protocol/match/dxp_player.py) and
   plays it against ``damka hub``.
3. **DXP, damka initiating**: ``--concurrency`` ``damka dxp --initiator`` processes connect to
   the same follower through a referee in the middle (bench/dxp_tap.py) that checks every
   message, move and move time.
4. **DXP restarts**: a ``damka dxp`` follower ended after every game and started again a
   moment later, as a restart loop serves an engine, and ended mid-game every
   ``--drop-every``-th game (bench/soak_restarts.py): every game is played, and only the
   drops are scored as the follower's crashes.

Counted (target 0 of each): protocol errors (an engine's ``error`` or unreadable line, a
malformed or unexpected DXP message, a CHAT about an error, a game ended early, missing
games, a DXP program's own PDN record that differs from the game as played), crashes (a process that died or stopped answering), time forfeits (a move over the
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
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dxp_tap import DxpTap, TapFault, TapGame  # noqa: E402
from engine.game import Game, Termination  # noqa: E402
from engine.pdn import PdnError, read_games  # noqa: E402
from protocol.match.engines import parse_engine  # noqa: E402
from protocol.match.openings import OpeningsError, read_openings  # noqa: E402
from protocol.match.runner import Match, MatchConfig, MatchError, MatchState  # noqa: E402
from protocol.match.timecontrol import DEFAULT_GRACE, TimeControl  # noqa: E402
from soak_report import PhaseResult, build_report, markdown  # noqa: E402
from soak_restarts import restart_phase  # noqa: E402
from soak_watch import (  # noqa: E402
    KINDS, BenchSpec, DxpProcess, Soak, WatchedDxpPlayer, WatchedHubPlayer)

OPENINGS = ROOT / "bench" / "openings_international_200.txt"
#: a phase with no finished game for this long has hung
HANG_SECONDS = 180.0


# -- the phases -----------------------------------------------------------------------------


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

    def on_fault(fault: TapFault) -> None:  # at once: the load then is told
        soak.fault(fault.kind if fault.kind in KINDS else "crash",  # (a connection lost)
                   f"connection {fault.connection}: {fault.text}")

    tap = DxpTap(server.address(), args.movetime, DEFAULT_GRACE, on_game=on_game,
                 on_fault=on_fault)
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
    if len(tap.games) != games:
        soak.fault("protocol", f"{len(tap.games)} games played of the {games} requested")
    times = [t for g in tap.games for t in g.move_times]
    return PhaseResult("dxp initiator", len(tap.games), games, [], times,
                       time.monotonic() - started)


def read_pdn(soak: Soak, path: Path, games: int) -> list[Game]:
    """The games of a PDN file written during the soak; a fault unless there are ``games``
    and they read back (every move legal)."""
    try:
        found = list(read_games(path)) if path.exists() else []
    except PdnError as exc:
        soak.fault("protocol", f"{path.name} cannot be read back: {exc}")
        return []
    if len(found) != games:
        soak.fault("protocol", f"{path.name} holds {len(found)} games, not {games}")
    return found


def _ends(games: list[Game], by_rules: bool) -> Counter:
    """(final position, result) of each game; with ``by_rules`` only of those the rules end."""
    return Counter((g.board.fen(), g.outcome().result) for g in games
                   if g.outcome() is not None and (not by_rules or g.rules_outcome() is not None))


def check_same_games(soak: Soak, played: list[Game], recorded: list[Game], who: str) -> None:
    """Every game of ``played`` that the rules ended is in ``who``'s own record with the same
    final position and result: it saw the whole game and agreed on its end."""
    missing = _ends(played, by_rules=True) - _ends(recorded, by_rules=False)
    if missing:
        fen, result = next(iter(missing))
        soak.fault("protocol", f"{sum(missing.values())} games ended by the rules are not in "
                   f"{who}'s own record as played (one: {result} in {fen})")


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
    parser.add_argument("--restart-games", type=_positive_int, default=100, metavar="N",
                        help="games over DXP against a follower ended and started again after "
                        "every game, as a restart loop serves it (default 100)")
    parser.add_argument("--drop-every", type=_positive_int, default=5, metavar="K",
                        help="in the restart phase, end the follower in the middle of every "
                        "K-th game instead (a peer that disconnects mid-game; default 5, 0 "
                        "never)")
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
    if args.hub_games + args.dxp_games + args.restart_games == 0:
        parser.error("nothing to play: --hub-games, --dxp-games and --restart-games are all 0")
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
    soak = Soak(args.hub_games + args.dxp_games + args.restart_games, args.quiet)
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
            # the DXP programs' own records of their games are complete and agree with the
            # games as played (the runner's record, and the initiators')
            recorded = read_pdn(soak, out / "dxp_server.pdn",
                                sum(p.games for p in phases if p.name.startswith("dxp")))
            played = [g for p in phases if p.name == "dxp follower"
                      for g in read_games(out / "dxp_follower.pdn")]
            for i in range(args.concurrency):
                share = initiator_games // args.concurrency + (i < initiator_games % args.concurrency)
                if share:
                    played += read_pdn(soak, out / f"dxp_initiator_{i + 1}.pdn", share)
            check_same_games(soak, played, recorded, "the follower")
        if args.restart_games:
            phases.append(restart_phase(soak, args, out, args.restart_games))
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
